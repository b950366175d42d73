import zz_absent_ext


def fused(a, b):
    return a
