__all__ = ["kept_a", "gone_a"]
__all__.remove("gone_a")


def kept_a(x):
    return x


def gone_a(x):
    return x
