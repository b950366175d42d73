import os
import sys

if sys.version_info >= (3, 0):
    def by_version(a, causal=False):
        return a
else:
    def by_version(a):
        return a

if sys.platform == "win32":
    def by_platform(a, causal=False):
        return a
else:
    def by_platform(a):
        return a

if os.name == "nt":
    def by_os(a, causal=False):
        return a

if __name__ == "__main__":
    def main_only(a):
        return a

if (sys.version_info[:2]) < (3, 4):
    def old_python(a):
        return a

if False:
    def never(a):
        return a
elif 0:
    def never2(a):
        return a
else:
    def always(a):
        return a

import typing as _t
from typing import TYPE_CHECKING as _TC

if _t.TYPE_CHECKING:
    def by_alias(a, causal=False):
        return a
else:
    def by_alias(a):
        return a

if not _TC:
    def by_renamed(a, causal=False):
        return a

match sys.platform:
    case "win32" | "darwin":
        def by_match(a, causal=False):
            return a
    case _:
        def by_match(a):
            return a
