("""
def f(a, causal=False):
    pass
""")


def f(a):
    return a
