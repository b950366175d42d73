import sys as _sys

from . import lazy, swapped


def __getattr__(name):
    if name == "lazy_op":
        return lazy.real_op
    raise AttributeError(name)
