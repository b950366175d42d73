import sys


def original(a):
    return a


class _Replacement:
    @staticmethod
    def original(a, causal=False):
        return a


sys.modules[__name__] = _Replacement
