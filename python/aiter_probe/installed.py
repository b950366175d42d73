# SPDX-License-Identifier: MIT
"""The manifest of the AITER this interpreter imports.

`aiter-probe scan --save` writes one manifest per AITER tree, named after the
tree, in one folder: $AITER_PROBE_MANIFEST_DIR when set, else
${XDG_CACHE_HOME:-$HOME/.cache}/aiter-probe (src/core/manifest-path.c computes the
same path). for_installed_aiter() finds the tree the way the scan does,
without importing aiter (aiter_probe.discover), and accepts a manifest only
when it was made for that tree, its meta folder is the one that tree builds
from now, and its inputs are unchanged.
"""

import hashlib
import os
import sys

from . import ManifestError, StaleManifestError, _logger, load
from .discover import finds, installed_aiter_root, meta_folder

# String annotations, typing imported for type checkers only (backend.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Tuple  # noqa: F401
    from . import Manifest  # noqa: F401

# Hex digits of the root's sha256 in the file name (the C side's NAME_HEX).
_NAME_HEX = 16
_NO_FOLDER = ("no folder for saved manifests: set AITER_PROBE_MANIFEST_DIR, XDG_CACHE_HOME "
              "or HOME")
_RELATIVE = "AITER_PROBE_MANIFEST_DIR must be an absolute path, not '%s'"


def _env(name):
    return os.environ.get(name) or None


def _manifest_dir():
    """(folder, None), or (None, reason) when no variable names one."""
    folder = _env("AITER_PROBE_MANIFEST_DIR")
    if folder is not None:
        # Relative, it would name another folder for every working directory.
        if not folder.startswith("/"):
            return None, _RELATIVE % folder
        return folder, None
    cache = _env("XDG_CACHE_HOME")
    # A relative XDG_CACHE_HOME is ignored, as the XDG specification says.
    if cache is not None and cache.startswith("/"):
        return cache + "/aiter-probe", None
    home = _env("HOME")
    # A relative HOME alike: it would move with the working directory.
    if home is not None and home.startswith("/"):
        return home + "/.cache/aiter-probe", None
    return None, _NO_FOLDER


def default_manifest_dir() -> "Optional[str]":
    """The folder of saved manifests, or None when no variable names one (or
    AITER_PROBE_MANIFEST_DIR is relative)."""
    return _manifest_dir()[0]


def default_manifest_path(root: str) -> "Optional[str]":
    """Where `aiter-probe scan --save` writes the manifest of the AITER tree at
    root (canonical, as the manifest's aiter.root records it); None when no
    variable names the folder."""
    folder = default_manifest_dir()
    if folder is None:
        return None
    return _saved_name(folder, root)


def _saved_name(folder, root):
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:_NAME_HEX]
    return "%s%saiter-%s.json" % (folder, "" if folder.endswith("/") else "/", digest)


def _same_path(a, b):
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def interpreter_changes(recorded: object) -> "List[str]":
    """What differs between the facts a manifest's answers read (its
    "python": the version, release level, platform, os.name, the modules
    found) and this interpreter's, one line each ("version 3.12.3 when
    scanned, now 3.11.2"); [] when nothing does or nothing was read."""
    if not isinstance(recorded, dict):
        return []
    changes = []
    v = sys.version_info
    then = recorded.get("version")
    if then is not None:
        parts = tuple(int(p) for p in then.split("."))
        if tuple(v[:len(parts)]) != parts:
            changes.append("version %s when scanned, now %d.%d.%d" % ((then,) + tuple(v[:3])))
    for key, now in (("releaselevel", v.releaselevel), ("platform", sys.platform),
                     ("os_name", os.name)):
        if key in recorded and recorded[key] != now:
            changes.append("%s %s when scanned, now %s" % (key, recorded[key], now))
    for name, found in (recorded.get("finds") or {}).items():
        now = finds(name)
        if now is not found:
            changes.append("finds %s: %s when scanned, now %s" % (
                name, "yes" if found else "no",
                "not known" if now is None else "yes" if now else "no"))
    return changes


def _manifest_for_root(root, path=None):
    """(Manifest, None) for the AITER tree at root, or (None, reason).

    path is the manifest to use (default: the saved one for root). It is
    accepted only when its aiter.root is root, its inputs are fresh, and the
    facts of the interpreter its answers read are this interpreter's."""
    real = os.path.realpath(root)
    if path is None:
        folder, reason = _manifest_dir()
        if folder is None:
            return None, reason
        path = _saved_name(folder, real)
        redo = "run 'aiter-probe scan --save'"
        where = path
    else:
        redo = "run 'aiter-probe scan -o %s'" % path
        where = "%s (AITER_PROBE_MANIFEST)" % path
    if not os.path.lexists(path):
        return None, "no manifest at %s: %s" % (where, redo)
    try:
        m = load(path)
    except ManifestError as e:
        return None, str(e)
    recorded = m.root
    if not _same_path(recorded, real):
        return None, "%s was made for %s, this interpreter imports aiter from %s" % (
            path, recorded, real)
    # The same package over other sources (AITER_META_DIR elsewhere) is
    # another AITER: its kernels are built from what the scan never read.
    meta, _ = meta_folder(real)
    if not _same_path(m.meta, meta):
        return None, "%s was made for the AITER sources in %s, this interpreter's aiter " \
                     "builds from %s" % (path, m.meta, meta)
    try:
        m.verify()
    except StaleManifestError as e:
        return None, "%s is stale: %s: %s" % (
            path, ", ".join("%s %s" % s for s in e.stale), redo)
    except ManifestError as e:
        return None, str(e)
    # Its answers read facts of the interpreter that imports the tree: this one.
    changes = interpreter_changes(m.data.get("python"))
    if changes:
        return None, "%s was made for another interpreter (%s): %s --python %s'" % (
            path, ", ".join(changes), redo[:-1], sys.executable or "python3")
    return m, None


def for_installed_aiter() -> "Tuple[Optional[Manifest], Optional[str]]":
    """(Manifest, None) for the AITER this interpreter imports, or (None, reason).

    The manifest is $AITER_PROBE_MANIFEST when set, else the one
    `aiter-probe scan --save` wrote for that tree. Never a stale one, nor one
    made for another AITER."""
    root, why = installed_aiter_root()
    if root is None:
        return None, why
    return _manifest_for_root(root, _env("AITER_PROBE_MANIFEST"))


def scanned_or_saved() -> "Tuple[Optional[Manifest], Optional[str]]":
    """(Manifest, None) for the AITER this interpreter imports, or (None,
    reason): the saved manifest when for_installed_aiter accepts it (it may
    hold GPU launches), else the tree scanned in process by the engine
    (aiter_probe.engine; no manifest needed). A saved manifest that is there
    but refused is logged (logger aiter_probe, level INFO) with the scan."""
    root, why = installed_aiter_root()
    if root is None:
        return None, why
    named = _env("AITER_PROBE_MANIFEST")
    m, refused = _manifest_for_root(root, named)
    if m is not None:
        return m, None
    from .engine import EngineError, scan_tree
    try:
        m = scan_tree(root)
    except (EngineError, ManifestError) as e:
        return None, "%s; and %s" % (refused, e)
    path = named or default_manifest_path(root)
    if path is not None and os.path.lexists(path):
        _logger().info("%s: scanned in process instead", refused)
    return m, None
