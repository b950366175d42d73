from typing import TYPE_CHECKING


def parens(q, nhead):
    assert (nhead) <= (48)
    return q


def big(q, nhead):
    assert nhead <= 36893488147419103232
    return q


def raise_form(q, nhead):
    if nhead > 24:
        raise ValueError("nhead")
    return q


def helpers_only(q, nhead):
    def _check(n):
        return nhead <= 16
    _l = lambda: nhead <= 8
    _c = [nhead <= 4 for _ in ()]
    return q


def dead(q, nhead):
    if TYPE_CHECKING:
        assert nhead <= 2
    if False:
        assert nhead <= 3
    assert nhead <= 128
    return q
