def gone(x):
    return x


try:
    import zz_not_installed_anywhere  # noqa: F401
except ImportError as gone:
    pass


def kept(x):
    return x


try:
    import json  # noqa: F401
except ImportError as kept:
    pass
