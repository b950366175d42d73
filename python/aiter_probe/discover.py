# SPDX-License-Identifier: MIT
"""Where the AITER this interpreter imports is, and which sources it builds
from: the twin of src/engine/discover.c.

    from aiter_probe.discover import installed_aiter_root, meta_folder

    root, why = installed_aiter_root()   # the folder holding aiter/
    meta, how = meta_folder(root)        # where its csrc/ and hsa/ are

Nothing here imports aiter: the package is found with importlib's
find_spec, and the meta folder is picked by the rule the tree's own
aiter/jit/core.py follows, told by a statement only that generation of the
rule has (doc/usage.md: the table of generations):

- v0.1.1 to v0.1.4: aiter_meta/ when the root is one of this
  interpreter's site.getsitepackages(), else the root;
- v0.1.5: aiter_meta/ when the root or its parent is one;
- v0.1.5.post1 to v0.1.7.post2: aiter_meta/ unless aiter/install_mode
  says "develop" (an editable checkout) or is absent (`pip install -e`);
- v0.1.7.post3 on (main of 2026-08 too): that, then $AITER_META_DIR over
  it, then the root whenever the folder picked has no csrc/.

A tree whose aiter/jit/core.py has none of these statements (a stub, a
copy trimmed for tests), or that has none, is taken as the newest AITER
when it has aiter/install_mode, else by its layout: $AITER_META_DIR, else
aiter_meta/ when it holds csrc/, else the root.
"""

import errno
import importlib.machinery
import importlib.util
import os
import site

from . import _open_beneath

__all__ = ["finds", "installed_aiter_root", "meta_folder"]

# String annotations, typing imported for type checkers only (backend.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Tuple  # noqa: F401

# Far above any core.py (60 KiB at v0.1.20); install_mode holds one word.
_CORE_PY_MAX = 4 << 20
_INSTALL_MODE_MAX = 4096
# The ASCII whitespace Python's str.strip() strips (src/engine/lang/space.h).
_SPACE = b" \t\n\v\f\r\x1c\x1d\x1e\x1f"

# The generations of the rule, as discover.c names them.
LAYOUT, SITE, SITE_PARENT, MODE, MODE_ENV = (
    "layout", "site-packages", "site-packages or its parent", "install_mode",
    "install_mode and AITER_META_DIR")


def _read_under(root, rel, limit):
    """("file", up to limit bytes) when root/rel is a regular file beneath
    root; ("absent", None) when nothing is there; (what else is there, None)
    otherwise (a folder, a FIFO, a symlink out of root, an error)."""
    try:
        kind, fd, _ = _open_beneath(root, rel)
    except OSError as e:
        return ("absent" if e.errno in (errno.ENOENT, errno.ENOTDIR) else "unreadable"), None
    if fd is None:
        return kind, None
    try:
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(1 << 16, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return "file", b"".join(chunks)
    except OSError:
        return "unreadable", None
    finally:
        os.close(fd)


def _rule_of(real):
    """The generation of the rule the tree at real (canonical) follows: a
    core.py with none of the statements (a stub, a copy trimmed for tests),
    or none, is of the generations that read aiter/install_mode when the
    tree has one, else the layout tells."""
    _, core = _read_under(real, "aiter/jit/core.py", _CORE_PY_MAX)
    if core is not None and b"install_mode" in core:
        return MODE_ENV if b'os.environ.get("AITER_META_DIR")' in core else MODE
    if core is not None and b"getsitepackages" in core:
        return SITE_PARENT if b"package_parent_path not in site_packages_dirs" in core \
            else SITE
    kind, _ = _read_under(real, "aiter/install_mode", 0)
    return LAYOUT if kind == "absent" else MODE_ENV


def _develop_mode(real):
    """(whether aiter/install_mode makes it an editable checkout, what it
    says). Absent is `pip install -e` to AITER too; a file AITER cannot
    read makes its import raise, so nothing is built from either folder:
    the wheel's is taken."""
    kind, text = _read_under(real, "aiter/install_mode", _INSTALL_MODE_MAX)
    if text is None:
        return kind == "absent", "aiter/install_mode is %s" % kind
    word = text.strip(_SPACE)
    return word == b"develop", "aiter/install_mode says '%s'" % word.decode("utf-8", "replace")


def _in_site_packages(real, parent):
    """Whether site.getsitepackages() names real (or with parent, its parent),
    canonical paths compared."""
    up = os.path.dirname(real)
    for d in site.getsitepackages():
        r = os.path.realpath(d)
        if r == real or (parent and r == up):
            return True
    return False


def meta_folder(root: str) -> "Tuple[str, str]":
    """(the meta folder AITER at root builds from, how it was picked), as
    that tree's aiter/jit/core.py picks it (this module's docstring), for
    this interpreter and environment. The folder is under root as given
    (aiter_meta/, or root itself), or $AITER_META_DIR as set."""
    real = os.path.realpath(root)
    env = os.environ.get("AITER_META_DIR") or None
    rule = _rule_of(real)
    wheel = os.path.join(root, "aiter_meta")
    if rule == LAYOUT:
        if env is not None:
            return env, "AITER_META_DIR (no rule in aiter/jit/core.py)"
        if os.path.isdir(os.path.join(wheel, "csrc")):
            return wheel, "aiter_meta/ holds csrc/ (no rule in aiter/jit/core.py)"
        return root, "aiter_meta/ holds no csrc/ (no rule in aiter/jit/core.py)"
    if rule in (SITE, SITE_PARENT):
        installed = _in_site_packages(real, rule == SITE_PARENT)
        how = "aiter/jit/core.py: %s site-packages%s" % (
            "in" if installed else "not in", " (or its parent)" if rule == SITE_PARENT else "")
        return (wheel if installed else root), how
    develop, how = _develop_mode(real)
    meta = root if develop else wheel
    how = "aiter/jit/core.py: %s" % how
    if rule == MODE:
        return meta, how
    if env is not None:
        meta, how = os.path.abspath(env), "aiter/jit/core.py: AITER_META_DIR"
    # os.path.exists, as core.py asks: a csrc that is a file counts.
    if not os.path.exists(os.path.join(meta, "csrc")):
        return root, "%s, which holds no csrc/: the root" % how
    return meta, how


def installed_aiter_root() -> "Tuple[Optional[str], Optional[str]]":
    """(root, None): the canonical folder holding the aiter package this
    interpreter imports, found as the scan finds it (importlib's find_spec,
    which runs no aiter code); or (None, reason)."""
    try:
        spec = importlib.util.find_spec("aiter")
    except (ImportError, ValueError) as e:
        return None, "cannot look for the aiter package: %s" % e
    if spec is None:
        return None, "aiter is not installed for this interpreter"
    locations = list(spec.submodule_search_locations or ())
    where = locations[0] if locations else spec.origin
    if not where:
        return None, "aiter is not installed for this interpreter"
    return os.path.realpath(os.path.dirname(where)), None


def finds(name: str) -> "Optional[bool]":
    """Whether this interpreter finds the module (dotted) as the scan asks
    it (src/engine/pytarget.c): find_spec for the top-level name, the path
    finder for each submodule, so nothing is imported; None when that
    raises."""
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
        for k in range(1, len(parts)):
            if spec is None or spec.submodule_search_locations is None:
                return False
            spec = importlib.machinery.PathFinder.find_spec(
                ".".join(parts[:k + 1]), list(spec.submodule_search_locations))
    except (ImportError, ValueError, AttributeError):
        return None
    return spec is not None
