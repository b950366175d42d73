def ops(x):
    return x


def mla(q):
    return q


from .ops import gemm
from . import mla
