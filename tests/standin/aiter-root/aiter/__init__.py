# SPDX-License-Identifier: MIT
# The stand-in aiter package (tests/standin/README.md): the three calls of
# AITER's persistent MLA decode, with a real tag's signatures, computed on
# the CPU with numpy through the stand-in torch. Written for the tests; no
# AITER code.
from .ops.attention import get_mla_metadata_info_v1, get_mla_metadata_v1  # noqa: F401
from .mla import mla_decode_fwd  # noqa: F401
from ._version import __version__  # noqa: F401
