# SPDX-License-Identifier: MIT
"""What the stand-in is told to do, by AITER_STANDIN: a comma-separated list
of MODE or MODE@DEVICE (that device only), MODE one of
  raise       mla_decode_fwd raises RuntimeError, as a failed kernel launch
  hang        mla_decode_fwd never returns
  crash       mla_decode_fwd kills its process with SIGSEGV, as a GPU fault
  reject=N    get_mla_metadata_info_v1 refuses N heads (AssertionError)
  overflow    mla_decode_fwd writes 1 KiB past the end of o
  wrong       mla_decode_fwd's output is off by 0.25
"""
import os


def told(mode, device=None):
    """The value of mode (True for a bare one) when AITER_STANDIN names it
    for device, else None."""
    for item in os.environ.get("AITER_STANDIN", "").split(","):
        item, _, at = item.partition("@")
        name, eq, value = item.partition("=")
        if name == mode and (not at or device is None or int(at) == device):
            return value if eq else True
    return None
