__all__ = [n for n in ("d_one", "d_gone", "_d_private") if n != "d_gone" if not n.startswith("_")]


def d_one(x):
    return x


def d_gone(x):
    return x


def _d_private(x):
    return x
