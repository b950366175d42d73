import functools


def keeps(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def replaces(fn):
    return None


def narrows(fn):
    def inner(x):
        return fn(x)
    return inner


@keeps
def kept(q, causal=False):
    return q


@replaces
def dropped(q, causal=False):
    return q


@narrows
def narrowed(q, causal=False):
    return q


@functools.lru_cache(maxsize=None)
def cached(q, causal=False):
    return q


def _ident(fn):
    return fn


@_ident
@replaces
def kept_over_dropped(q, causal=False):
    return q


@replaces
@keeps
def dropped_over_kept(q, causal=False):
    return q


def later(fn):
    return None


@later
def before_rebinding(q, causal=False):
    return q


def later(fn):
    return fn


async def _coro(fn):
    return fn


@_coro
def coroutine(q, causal=False):
    return q
