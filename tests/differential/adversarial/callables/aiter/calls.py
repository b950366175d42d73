import functools
from functools import partial


def _impl(q, kv, causal=False, *, scale=1.0):
    return q


bound_kv = functools.partial(_impl, 0, 0)
by_keyword = partial(_impl, kv=1)
twice = partial(bound_kv, causal=True)
as_lambda = lambda q, causal=False: q
(by_walrus := lambda q, lse=False: q)
[_first, by_list] = [0, (lambda zz, causal=None: zz)]
swapped, _impl2 = _impl, as_lambda
swapped, _impl2 = _impl2, swapped


class Kernels:
    lam = lambda self, causal: causal

    @staticmethod
    def static(q, causal):
        return q

    @property
    def causal_op(self):
        return self._causal

    @causal_op.setter
    def causal_op(self, causal):
        self._causal = causal

    def run(self, q, causal=False):
        return q

    @classmethod
    def make(cls, n):
        return cls

    def run(self, q):
        return q


class Rebound:
    def run(self, causal):
        return causal


class Rebound:
    def run(self):
        return None
