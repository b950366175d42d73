import functools


def _impl(q, kv, causal=False, *, scale=1.0):
    return q


bound_kv = functools.partial(_impl, 0, 0)
as_lambda = lambda q, causal=False: q
(by_walrus := lambda q, lse=False: q)


class Ops:
    @property
    def causal_op(self):
        return None

    @classmethod
    def make(cls, n):
        return cls

    def run(self, q, causal=False):
        return q

    def run(self, q):
        return q
