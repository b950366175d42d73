def ﬁnd(a, causal=False):
    return a


def größe(a):
    return a


ｆwide = lambda a: a
