# Decorators whose every way out returns a def of their own body (callable,
# parameters not read), and near misses that bind something else.
import functools


def guard(mutates_args="unknown", gen_fake=None):
    """A factory of AITER's torch_compile_guard shape: a pass-through
    wrapper when the optional module is missing, else a wrapper of its
    own."""
    def decorator(func):
        calling = func

        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)

        try:
            import zz_not_installed_anywhere  # noqa: F401
        except ImportError:
            return wrapper

        if calling.__name__ in ("never",):
            return wrapper

        def wrapper_custom(*args, **kwargs):
            return wrapper(*args, **kwargs)

        return wrapper_custom

    return decorator


def guard_found(mutates_args="unknown"):
    # the optional module is found: the rest of the body runs
    def decorator(func):
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)

        try:
            import json  # noqa: F401
        except ImportError:
            return wrapper

        def wrapper_custom(*a, **k):
            return func(*a, **k)

        if hasattr(json, "zz_not_there"): return wrapper
        return wrapper_custom

    return decorator


def own(fn):
    def inner(*a, **k):
        return fn(*a, **k)
    return inner


def falls_through(fn):
    def w(*a, **k):
        return fn(*a, **k)
    if fn is None:
        return w


def branch_def(fn):
    if len(fn.__name__) > 100:
        def w(*a, **k):
            return fn(*a, **k)
    else:
        w = None
    return w


def rebound(fn):
    def w(*a, **k):
        return fn(*a, **k)
    w = 3
    return w


def rebound_nonlocal(fn):
    def w(*a, **k):
        return fn(*a, **k)

    def swap():
        nonlocal w
        w = 5
    swap()
    return w


def generator(fn):
    def w(*a, **k):
        return fn(*a, **k)
    yield w
    return w


def deleted(fn):
    def w(*a, **k):
        return fn(*a, **k)
    del w
    w = 7
    return w


def drop(fn):
    return None


def decorated_inner(fn):
    @drop
    def w(*a, **k):
        return fn(*a, **k)
    return w


def finally_other(fn):
    def w(*a, **k):
        return fn(*a, **k)
    try:
        return w
    finally:
        return 3


def returns_class(fn):
    class W:
        pass
    return W


def returns_arg_or_def(fn):
    def w(*a, **k):
        return fn(*a, **k)
    if fn.__name__.startswith("arg"):
        return fn
    return w


def factory_falls_through(label):
    def deco(fn):
        def w(*a, **k):
            return fn(*a, **k)
        if label:
            return w
    return deco


def factory_two_params(label):
    def deco(fn, extra=None):
        def w(*a, **k):
            return fn(*a, **k)
        return w
    return deco


def walrus_rebinds(fn):
    def w(*a, **k):
        return fn(*a, **k)
    if (w := None) is None:
        pass
    return w


def returned_early_then_def(fn):
    w = None
    if fn:
        return w
    def w(*a, **k):
        return fn(*a, **k)
    return w


def docstring_only(fn):
    """return w"""
    def w(*a, **k):
        return fn(*a, **k)
    # return nothing_here
    return w


@guard(mutates_args=[], gen_fake=lambda *a, **k: None)
def guarded(x, y, causal=False):
    return x


@guard_found()
def guarded_found(x, causal=False):
    return x


@own
def owned(x, causal=False):
    return x


@falls_through
def fell(x, causal=False):
    return x


@branch_def
def branched(x, causal=False):
    return x


@rebound
def rebound_def(x, causal=False):
    return x


@rebound_nonlocal
def nonlocal_def(x, causal=False):
    return x


@generator
def generated(x, causal=False):
    return x


@deleted
def deleted_def(x, causal=False):
    return x


@decorated_inner
def inner_dropped(x, causal=False):
    return x


@finally_other
def finally_def(x, causal=False):
    return x


@returns_class
def classed(x, causal=False):
    return x


@returns_arg_or_def
def arg_first(x, causal=False):
    return x


@factory_falls_through("")
def factory_fell(x, causal=False):
    return x


@factory_two_params("x")
def factory_two(x, causal=False):
    return x


@walrus_rebinds
def walrused(x, causal=False):
    return x


@returned_early_then_def
def early(x, causal=False):
    return x


@docstring_only
def documented(x, causal=False):
    return x


@functools.lru_cache(maxsize=None)
@own
def cached_owned(x, causal=False):
    return x


@own
@drop
def owned_over_dropped(x, causal=False):
    return x


@drop
@own
def dropped_over_owned(x, causal=False):
    return x


def rebound_by_class(fn):
    def w(*a, **k):
        return fn(*a, **k)
    class w:
        pass
    return w


def rebound_by_def(fn):
    def w(*a, **k):
        return fn(*a, **k)
    if fn:
        @drop
        def w(*a, **k):
            return fn(*a, **k)
    return w


def nfkc_rebound(fn):
    def ﬁ(*a, **k):
        return fn(*a, **k)
    fi = 5
    return ﬁ


@rebound_by_class
def classed_again(x, causal=False):
    return x


@rebound_by_def
def redefined(x, causal=False):
    return x


@nfkc_rebound
def normalised(x, causal=False):
    return x
