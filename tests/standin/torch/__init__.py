# SPDX-License-Identifier: MIT
"""A stand-in for torch, for the tests of AITER's launcher without AMD GPUs.

Only the part of torch's API that python/aiter_probe/launch.py and the
stand-in aiter (tests/standin/aiter-root/aiter) use, on numpy, on the CPU.
Tensors keep torch's memory layout: bfloat16 is 2 bytes (its bit patterns in
uint16), a view of a byte buffer as another dtype shares its memory, so a
write past a buffer lands in its guard as it would on a GPU. It claims no GPU:
its devices are named "aiter-probe stand-in (CPU)", torch.version.hip is
"stand-in", and __version__ says so.

AITER_STANDIN_GPUS: the gfx arch of each stand-in device, comma-separated
(default "gfx942"); AITER_STANDIN_TORCH=cuda: a CUDA build (no hip).
"""

import builtins as _b
import os

import numpy as np

__version__ = "0.0+aiter-probe-stand-in"


class _Version:
    hip = None if os.environ.get("AITER_STANDIN_TORCH") == "cuda" else "stand-in"
    cuda = "12.4" if os.environ.get("AITER_STANDIN_TORCH") == "cuda" else None


version = _Version()


class dtype:  # noqa: N801 (torch's name)
    def __init__(self, name, np_dtype, size):
        self.name, self.np, self.itemsize = name, np.dtype(np_dtype), size

    def __repr__(self):
        return "torch." + self.name


uint8 = dtype("uint8", np.uint8, 1)
int32 = dtype("int32", np.int32, 4)
int64 = dtype("int64", np.int64, 8)
uint64 = dtype("uint64", np.uint64, 8)
float32 = dtype("float32", np.float32, 4)
float64 = dtype("float64", np.float64, 8)
bfloat16 = dtype("bfloat16", np.uint16, 2)  # bit patterns
float = float32  # noqa: A001 (torch's name)
double = float64
long = int64
int = int32  # noqa: A001
_FLOATS = (float32, float64, bfloat16)
_BY_NP = {np.dtype(np.uint8): uint8, np.dtype(np.int32): int32, np.dtype(np.int64): int64,
          np.dtype(np.uint64): uint64, np.dtype(np.float32): float32,
          np.dtype(np.float64): float64, np.dtype(np.bool_): uint8}


def _to_bf16_bits(values):
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    nan = np.isnan(f)
    out[nan] = 0x7FC0
    return out


def _from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class device:  # noqa: N801
    def __init__(self, kind, index=None):
        if isinstance(kind, device):
            kind, index = kind.type, kind.index
        if isinstance(kind, str) and ":" in kind:
            kind, index = kind.split(":")
            index = _b.int(index)
        self.type, self.index = kind, index

    def __repr__(self):
        return "device(type='%s', index=%s)" % (self.type, self.index)


def _dev(d):
    if d is None:
        return device("cpu")
    return d if isinstance(d, device) else device(d)


class Tensor:
    def __init__(self, array, dt, dev):
        self._a, self.dtype, self.device = array, dt, dev

    # what the stand-in aiter reads and writes
    def numpy_values(self):
        """The values as numpy numbers (bfloat16 as float32): a copy."""
        return _from_bf16_bits(self._a) if self.dtype is bfloat16 else self._a.copy()

    def store(self, values):
        """Writes values into this tensor's memory, in place."""
        self._a[...] = _to_bf16_bits(values) if self.dtype is bfloat16 else values

    # torch's API, the part used
    @property
    def shape(self):
        return tuple(self._a.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self):
        return _b.int(self._a.size)

    def element_size(self):
        return self.dtype.itemsize

    def dim(self):
        return self._a.ndim

    def _new(self, array, dt=None):
        return Tensor(array, dt or self.dtype, self.device)

    def _num(self):
        return _from_bf16_bits(self._a) if self.dtype is bfloat16 else self._a

    def _from_num(self, values, like=None):
        dt = like or self.dtype
        if dt is bfloat16:
            return self._new(_to_bf16_bits(values), bfloat16)
        return self._new(np.asarray(values).astype(dt.np), dt)

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], dtype):
            return self._new(self._a.view(shape[0].np), shape[0])
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not self._a.flags["C_CONTIGUOUS"]:
            raise RuntimeError("view size is not compatible with input tensor's size and stride")
        return self._new(self._a.reshape(shape))

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self._new(self._a.reshape(shape))

    def contiguous(self):
        return self._new(np.ascontiguousarray(self._a))

    def clone(self):
        return self._new(self._a.copy())

    def fill_(self, value):
        if self.dtype is bfloat16 and isinstance(value, _b.float):
            self._a[...] = _to_bf16_bits(np.float32(value))
        else:
            self._a[...] = value
        return self

    def copy_(self, other):
        self._a[...] = other._a if other.dtype is self.dtype else other.to(self.dtype)._a
        return self

    def to(self, dt=None, *args, **kwargs):
        if isinstance(dt, dtype):
            if dt is self.dtype:
                return self
            if dt is bfloat16:
                return self._new(_to_bf16_bits(self._num()), bfloat16)
            return self._new(self._num().astype(dt.np), dt)
        return self

    def double(self):
        return self.to(float64)

    def float(self):
        return self.to(float32)

    def cpu(self):
        return self

    def tolist(self):
        return self._num().tolist()

    def item(self):
        return self._num().item()

    def __getitem__(self, key):
        if isinstance(key, Tensor):
            key = key._a
        return self._new(self._a[key])

    def __setitem__(self, key, value):
        self._a[key] = value._a if isinstance(value, Tensor) else value

    def index_select(self, dim, index):
        return self._new(np.take(self._a, index._a, axis=dim))

    def ne(self, other):
        o = other._num() if isinstance(other, Tensor) else other
        return self._new((self._num() != o).astype(np.uint8), uint8)

    def nonzero(self):
        return Tensor(np.argwhere(self._a != 0).astype(np.int64), int64, self.device)

    def any(self):
        return self._new(np.asarray(np.any(self._a != 0), dtype=np.uint8), uint8)

    def sum(self):
        return self._from_num(np.sum(self._num()), float64 if self.dtype in _FLOATS else int64)

    def max(self):
        return self._from_num(np.max(self._num()))

    def abs(self):
        return self._from_num(np.abs(self._num()))

    def exp(self):
        return self._from_num(np.exp(self._num()))

    def _binary(self, other, op):
        o = other._num() if isinstance(other, Tensor) else other
        r = op(self._num(), o)
        dt = self.dtype if self.dtype in _FLOATS or not np.issubdtype(r.dtype, np.floating) \
            else float32
        return self._from_num(r, dt)

    def __add__(self, o):
        return self._binary(o, np.add)

    def __sub__(self, o):
        return self._binary(o, np.subtract)

    def __mul__(self, o):
        return self._binary(o, np.multiply)

    def __truediv__(self, o):
        return self._binary(o, np.divide)

    def __matmul__(self, o):
        return self._from_num(np.matmul(self._num(), o._num()))

    __radd__, __rmul__ = __add__, __mul__


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def empty(*shape, dtype=float32, device=None):  # noqa: A002 (torch's names)
    # torch.empty leaves memory as it was: garbage, not zeros
    a = np.empty(_shape(shape), dtype=dtype.np)
    return Tensor(a, dtype, _dev(device))


def zeros(*shape, dtype=float32, device=None):  # noqa: A002
    return Tensor(np.zeros(_shape(shape), dtype=dtype.np), dtype, _dev(device))


def full(shape, value, dtype=float32, device=None):  # noqa: A002
    return zeros(shape, dtype=dtype, device=device).fill_(value)


def arange(n, dtype=int64, device=None):  # noqa: A002
    return Tensor(np.arange(n).astype(dtype.np), dtype, _dev(device))


def tensor(values, dtype=None, device=None):  # noqa: A002
    dt = dtype or (float32 if any(isinstance(v, _b.float)
                                  for v in np.ravel(values)) else int64)
    t = Tensor(np.zeros(np.shape(values), dtype=dt.np), dt, _dev(device))
    t.store(np.asarray(values))
    return t


class Generator:
    def __init__(self, device=None):
        self.device, self.rng = _dev(device), np.random.default_rng(0)

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(seed)
        return self


def rand(*shape, generator=None, dtype=float32, device=None):  # noqa: A002
    rng = generator.rng if generator is not None else np.random.default_rng()
    return Tensor(rng.random(_shape(shape), dtype=np.float32).astype(dtype.np), dtype,
                  _dev(device))


def isnan(t):
    return Tensor(np.isnan(t._num()).astype(np.uint8), uint8, t.device)


def equal(a, b):
    return a.shape == b.shape and bool(np.array_equal(a._a, b._a))


class _Props:
    def __init__(self, index, arch):
        self.name = "aiter-probe stand-in (CPU) %d" % index
        self.gcnArchName = arch + ":sramecc+:xnack-"  # noqa: N815 (torch's name)
        self.multi_processor_count = 80
        self.major, self.minor = 9, 4


class _Cuda:
    @staticmethod
    def _archs():
        return [a for a in os.environ.get("AITER_STANDIN_GPUS", "gfx942").split(",") if a]

    def device_count(self):
        return len(self._archs())

    def get_device_properties(self, index):
        archs = self._archs()
        if not 0 <= index < len(archs):
            raise RuntimeError("Invalid device argument")
        return _Props(index, archs[index])

    def set_device(self, index):
        self.get_device_properties(index)

    def synchronize(self, device=None):
        pass

    def is_available(self):
        return bool(self._archs())


cuda = _Cuda()
