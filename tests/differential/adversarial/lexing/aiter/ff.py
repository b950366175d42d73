def f(a):
    return a

def f(a, causal=False):
    return a
