def rewritten(a, causal=False):
    return a


def untouched(a, causal=False):
    return a


globals()["rewritten"] = lambda a: a
