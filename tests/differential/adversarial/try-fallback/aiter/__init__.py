try:
    from ._ext import fused_add
except ImportError:
    def fused_add(a, b, out=None):
        return a

try:
    import extlib
    def uses_ext(a, causal=False):
        return a
except ImportError:
    def uses_ext(a):
        return a

try:
    from .present import present_op
except ImportError:
    def present_op(a):
        return a
