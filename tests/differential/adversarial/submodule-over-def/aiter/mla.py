def f(q):
    return q
