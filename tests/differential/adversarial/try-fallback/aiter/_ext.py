import zz_absent_ext


def fused_add(a, b):
    return a
