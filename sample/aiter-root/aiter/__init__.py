# A small stand-in for the aiter package: the layout and import constructs
# the rule packs read, not AITER's code.
import os

AITER_TRITON_ONLY = os.getenv("AITER_TRITON_ONLY", "0") == "1"

if AITER_TRITON_ONLY:
    pass
else:
    from .ops.attention import *
    from .ops.gradlib import *
    from .ops.moe_op import *
