# SPDX-License-Identifier: MIT
"""The scan in process: the engine (libaiter-probe's aiter_probe_scan)
through ctypes, with this interpreter's facts, launches off.

    from aiter_probe.engine import scan_tree

    m = scan_tree("/opt/venv/lib/python3.11/site-packages")
    m.supported("mla.decode.native_h24")

The library is $AITER_PROBE_LIBRARY when set, else the one pip built into
the package (aiter_probe/libaiter-probe.so, with the shipped packs in
aiter_probe/data), else the installed libaiter-probe.so.1 with its
installed packs. $AITER_PROBE_DATADIR names other packs, as it does for the
command. What the tree's conditions ask of the interpreter that will import
it (sys.version_info, sys.platform, os.name, whether it finds a module) is
answered by this one, in process: nothing is run.
"""

import ctypes
import os
import sys
import threading

from . import Manifest, _checked
from .discover import finds

__all__ = ["EngineError", "library_path", "scan_tree"]

LIBRARY = "libaiter-probe.so"
# The installed library's soname: the C API's ABI 1.
SONAME = "libaiter-probe.so.1"
_HERE = os.path.dirname(os.path.abspath(__file__))
# aiter_probe_scan_options' version with datadir and python_facts.
_OPTIONS_VERSION = 3
# the version that adds signatures, asked only with it: an older library
# still scans without
_SIGNATURES_VERSION = 4
_OK = 0


class EngineError(Exception):
    """The engine cannot be loaded, or its scan failed (the message is the
    engine's: "/x is not an AITER tree: ...")."""


_FINDS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)


class _PythonFacts(ctypes.Structure):
    """aiter_probe_python_facts (include/aiter-probe.h)."""
    _fields_ = [("executable", ctypes.c_char_p), ("major", ctypes.c_int),
                ("minor", ctypes.c_int), ("micro", ctypes.c_int),
                ("releaselevel", ctypes.c_char_p), ("platform", ctypes.c_char_p),
                ("os_name", ctypes.c_char_p), ("finds", _FINDS), ("context", ctypes.c_void_p)]


class _ScanOptions(ctypes.Structure):
    """aiter_probe_scan_options, version 4 (include/aiter-probe.h)."""
    _fields_ = [("version", ctypes.c_uint), ("aiter_root", ctypes.c_char_p),
                ("python", ctypes.c_char_p), ("rule_paths", ctypes.POINTER(ctypes.c_char_p)),
                ("rule_path_count", ctypes.c_size_t), ("no_default_rules", ctypes.c_int),
                ("launch", ctypes.c_int), ("devices", ctypes.c_char_p),
                ("launch_timeout", ctypes.c_double), ("max_file_size", ctypes.c_size_t),
                ("host", ctypes.c_char_p), ("python_version", ctypes.c_char_p),
                ("datadir", ctypes.c_char_p), ("python_facts", ctypes.POINTER(_PythonFacts)),
                ("signatures", ctypes.c_int)]


def _own_library() -> str:
    return os.path.join(_HERE, LIBRARY)


def library_path() -> str:
    """The library scan_tree loads: $AITER_PROBE_LIBRARY, else the
    package's own when pip built it, else the installed one's soname (the
    dynamic loader finds it)."""
    env = os.environ.get("AITER_PROBE_LIBRARY")
    if env:
        return env
    own = _own_library()
    return own if os.path.exists(own) else SONAME


_lock = threading.Lock()
_loaded = {}  # path -> the CDLL with its prototypes


def _library(path: str) -> ctypes.CDLL:
    with _lock:
        lib = _loaded.get(path)
        if lib is not None:
            return lib
        try:
            lib = ctypes.CDLL(path)
            scan = lib.aiter_probe_scan
        except (OSError, AttributeError) as e:
            raise EngineError("cannot load the engine %s: %s" % (path, e)) from None
        scan.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_ScanOptions)]
        scan.restype = ctypes.c_int
        lib.aiter_probe_manifest_json.argtypes = [ctypes.c_void_p]
        # Freed with free(): a char * kept as a pointer, not converted.
        lib.aiter_probe_manifest_json.restype = ctypes.c_void_p
        lib.aiter_probe_manifest_free.argtypes = [ctypes.c_void_p]
        lib.aiter_probe_manifest_free.restype = None
        lib.aiter_probe_last_error.argtypes = []
        lib.aiter_probe_last_error.restype = ctypes.c_char_p
        _loaded[path] = lib
        return lib


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


@_FINDS
def _finds_here(context, module):
    """Whether this interpreter finds module, for the engine: 1, 0 or -1
    (not known). It must not raise: nothing could carry the exception
    through the C frames."""
    try:
        found = finds(module.decode("utf-8"))
    except Exception:  # noqa: BLE001: see above
        return -1
    return -1 if found is None else int(found)


def _facts() -> _PythonFacts:
    v = sys.version_info
    return _PythonFacts(os.fsencode(sys.executable or ""), v.major, v.minor, v.micro,
                        v.releaselevel.encode(), sys.platform.encode(), os.name.encode(),
                        _finds_here, None)


def scan_tree(root: str, library: "str | None" = None, signatures: bool = False) -> Manifest:
    """The manifest of the AITER tree at root (the folder holding the aiter
    package, or a checkout; its meta folder found as aiter/jit/core.py finds
    it), scanned in process by the library (default: library_path()) with
    every installed pack, as `aiter-probe scan --no-launch --python
    sys.executable` would (with signatures, `--signatures` too: the
    manifest's `signatures` section). Raises EngineError."""
    path = library or library_path()
    lib = _library(path)
    datadir = None
    # The package's packs go with the package's library; $AITER_PROBE_DATADIR
    # is the engine's to read.
    if path == _own_library() and not os.environ.get("AITER_PROBE_DATADIR"):
        datadir = os.fsencode(os.path.join(_HERE, "data"))
    facts = _facts()
    opts = _ScanOptions(version=_SIGNATURES_VERSION if signatures else _OPTIONS_VERSION,
                        aiter_root=os.fsencode(root), datadir=datadir,
                        python_facts=ctypes.pointer(facts), signatures=int(signatures))
    handle = ctypes.c_void_p()
    rc = lib.aiter_probe_scan(ctypes.byref(handle), ctypes.byref(opts))
    if rc != _OK:
        why = (lib.aiter_probe_last_error() or b"").decode("utf-8", "replace")
        raise EngineError(why)
    try:
        text = lib.aiter_probe_manifest_json(handle)
        if not text:
            raise EngineError((lib.aiter_probe_last_error() or b"").decode("utf-8", "replace"))
        try:
            json_text = ctypes.string_at(text).decode("utf-8")
        finally:
            _libc.free(text)
    finally:
        lib.aiter_probe_manifest_free(handle)
    return _checked(json_text, "the scan of %s" % root)
