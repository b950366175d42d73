# SPDX-License-Identifier: MIT
# A sample AITER-like package for aiter-probe: the layout of the real one
# (version file, kernel sources under csrc/), none of its code.

import logging
import os

from ._version import __version__

logger = logging.getLogger("aiter")

# Develop layout: the kernel sources sit beside the package, the way an
# editable install of AITER keeps them.
AITER_ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AITER_CSRC_DIR = os.path.join(AITER_ROOT_DIR, "csrc")

__all__ = ["__version__", "AITER_CSRC_DIR", "logger"]
