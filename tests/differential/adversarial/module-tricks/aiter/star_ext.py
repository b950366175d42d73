def f4(a, causal=False):
    return a


from extlib import *
