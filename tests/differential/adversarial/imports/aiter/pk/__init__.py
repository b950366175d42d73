def sub(a, causal=False):
    return a


def loaded(a, causal=False):
    return a


import aiter.pk.sub
from . import user
