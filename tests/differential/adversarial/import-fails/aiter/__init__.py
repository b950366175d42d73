def fused(a, out=None):
    return a


try:
    from ._ext import fused
except ImportError:
    pass

try:
    from ._ext2 import op
except ModuleNotFoundError:
    def op(a, scale=1.0):
        return a

try:
    from ._ok import plain
except ImportError:
    def plain(a):
        return a

try:
    from . import _ext
except ImportError:
    def _ext(a):
        return a

from ._ok import helper
