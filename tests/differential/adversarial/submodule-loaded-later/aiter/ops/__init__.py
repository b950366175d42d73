def gemm(a, b):
    return a


def mha(q, k):
    return q
