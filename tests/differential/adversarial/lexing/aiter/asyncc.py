async \
def f(a, causal=False):
    return a
