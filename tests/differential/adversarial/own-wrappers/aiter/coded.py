def own(fn):
    def w(*a, **k):
        return fn(*a, **k)
    return w


own.__code__ = (lambda fn: 5).__code__


@own
def recoded(x, causal=False):
    return x
