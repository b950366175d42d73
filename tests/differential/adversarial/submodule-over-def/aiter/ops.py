def gemm(a, b):
    return a
