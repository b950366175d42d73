import os

from .ops.gemm import run
from .nn import helper
from .nn.rope import apply

if os.environ.get("AITER_NORM"):
    from .nn.norm import rms
