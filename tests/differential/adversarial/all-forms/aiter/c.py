__all__ = [n for n in dir() if not n.startswith("_")]


def c_hidden(x):
    return x
