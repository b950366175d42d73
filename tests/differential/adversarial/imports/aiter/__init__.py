import contextlib


def suppressed_op(a, out=None):
    return a


with contextlib.suppress(ImportError):
    from .gone import suppressed_op

    def after_suppress(a, out=None):
        return a
