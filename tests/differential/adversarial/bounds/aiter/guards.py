def raise_ge(q, nhead):
    if (nhead) >= 97:
        raise ValueError(nhead)
    return q


def raise_not(q, nhead):
    if not nhead <= 40:
        raise ValueError(nhead)
    return q


def elif_guard(q, nhead, o=None):
    if nhead in (1, 2):
        pass
    elif nhead > 48:
        raise ValueError(nhead)
    return q


def return_guard(q, nhead):
    if nhead <= 24:
        return q
    raise ValueError(nhead)


def least(q, nhead):
    assert nhead <= 512
    assert nhead < 97
    return q


def no_reject(q, nhead):
    if nhead <= 96:
        q = q + 1
    _flag = nhead <= 8
    return q


def class_body(q, nhead):
    class _Limits:
        assert nhead <= 32
    return q


def by_literal(q, nhead):
    if nhead > 64:
        mode = "wide"
    else:
        mode = "narrow"
    if mode == "wide":
        raise ValueError(nhead)
    return q


def other_args(q, nhead, o=None):
    if o is not None:
        raise TypeError("o")
    assert nhead <= 80
    return q


def huge_raise(q, nhead):
    if nhead > 100000000000000000000:
        raise OverflowError(nhead)
    return q


def chained_or(q, nhead):
    assert nhead <= 8 or nhead <= 56
    return q


def match_name(q, nhead):
    match nhead:
        case 0:
            raise ValueError(nhead)
        case _ if nhead > 72:
            raise ValueError(nhead)
    return q
