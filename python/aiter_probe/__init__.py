# SPDX-License-Identifier: MIT
"""Read aiter-probe capability manifests (schema aiter-probe.manifest/1).

Standard library only; pip builds the engine into the package too
(aiter_probe.engine scans a tree in process through it, by ctypes). Install
it with pip (the distribution aiter-probe: `python3 -m pip install
--no-build-isolation ./python` from the source tree, or the wheel `make
python-wheel` builds) and import it; `make install` also
puts a copy under $(pkgdatadir)/python (e.g. /usr/local/share/aiter-probe/python)
for those who add that folder to sys.path. `python3 -m aiter_probe MANIFEST
[CAP...]` prints the verdicts as `aiter-probe check` does.

    import aiter_probe

    m = aiter_probe.load("/var/lib/aiter-probe/manifest.json", verify_fresh=True)
    if m.supported("mla.decode.native_h24"):
        ...
    launch_heads, mode, verified = m.launch_heads(24)

Failures raise ManifestError (a ValueError) or one of its subclasses,
SchemaVersionError and StaleManifestError, with the same messages as the
aiter-probe command and the C API; malformed, deeply nested (more than 64
levels) or mistyped JSON raises ManifestError too, never another exception.
Unknown capability, rule and head-count lookups raise KeyError. The freshness
check opens every input one path component at a time beneath the recorded
root, never following a symlink but by reading it, so that nothing outside
the root is read, even while the tree changes.
"""

import errno
import hashlib
import json
import math
import os
import re
import stat

from . import signatures as _signatures

__version__ = "0.1.0"

# String annotations, typing imported for type checkers only: it would cost
# a fresh interpreter 10 ms (aiter_probe.backend answers in less).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Tuple, Union  # noqa: F401

__all__ = ["SCHEMA", "ManifestError", "SchemaVersionError", "StaleManifestError",
           "Manifest", "load"]

SCHEMA = "aiter-probe.manifest/1"
_SCHEMA_RE = re.compile(r"aiter-probe\.manifest/([0-9]+)\Z")
_SHA256_RE = re.compile(r"[0-9a-f]{64}\Z")
_RULE_STATUSES = ("matched", "unmatched", "missing", "error", "unknown")
# How a capability's reason begins when nothing could decide it
# (AP_CAP_UNKNOWN_PREFIX, src/core/manifest-format.h).
_UNKNOWN_PREFIX = "unknown, so unsupported: "
# What a scan records of an input it could not read (inputs[].seen).
_SEEN_CLASSES = ("absent", "outside", "folder", "not-file", "loop", "too-long", "unreadable",
                 "over-hash-cap")
_LAUNCH_STATUSES = ("passed", "failed", "error", "skipped")
_PAD_MODES = ("none", "repeat-interleave", "tile-slice")
# Which kernel ran a launch or proved a plan row: AITER's own, or aiter-probe's.
_KERNELS = ("aiter", "reference")
# The most heads a plan row names (AP_MLA_MAX_HEADS, src/core/mla-route.h).
_PLAN_MAX_HEADS = 128
# What aiter-probe's text output escapes: C0 controls but tab, DEL, C1
# controls and bidirectional controls, each UTF-8 byte as \xHH.
_CONTROL_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f\x80-\x9f\u061c\u200e\u200f"
                         "\u202a-\u202e\u2066-\u2069]")


def _terminal_text(text):
    """text as aiter-probe prints it for a terminal (ap_terminal_text)."""
    return _CONTROL_RE.sub(lambda m: "".join("\\x%02x" % b for b in m.group().encode()), text)


# The largest manifest read (the C reader's MANIFEST_MAX_BYTES), far above any
# real one: /dev/zero or a runaway file must not exhaust a server's memory.
MANIFEST_MAX_BYTES = 64 << 20
# The C reader's LONG_MAX.
_LONG_MAX = (1 << 63) - 1


class ManifestError(ValueError):
    """The manifest cannot be used: unreadable, not JSON, invalid."""


class SchemaVersionError(ManifestError):
    """The manifest's schema is not aiter-probe.manifest/1."""


class StaleManifestError(ManifestError):
    """An input changed, vanished or appeared since the scan.

    stale: [(path, "changed" | "vanished" | "appeared"), ...]"""

    def __init__(self, message, stale):
        super().__init__(message)
        self.stale = stale


class _Checker:
    """The checks the C loader makes, with the same messages."""

    def __init__(self, name):
        self.name = name

    def fail(self, message):
        raise ManifestError("%s: %s" % (self.name, message))

    _KINDS = (("string", "a string"), ("int", "an integer"), ("bool", "true or false"),
              ("object", "an object"), ("array", "an array"), ("null", "null"))

    @staticmethod
    def _kind_of(v):
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, int):
            return "int"
        if isinstance(v, str):
            return "string"
        if isinstance(v, dict):
            return "object"
        if isinstance(v, list):
            return "array"
        return "other"

    def kind(self, value, where, kinds):
        if self._kind_of(value) not in kinds:
            words = " or ".join(w for k, w in self._KINDS if k in kinds)
            self.fail("'%s' must be %s" % (where, words))
        return value

    def field(self, obj, where, key, kinds, optional=False):
        path = "%s.%s" % (where, key) if where else key
        if key not in obj:
            if optional:
                return None
            self.fail("missing key '%s'" % path)
        return self.kind(obj[key], path, kinds)

    def one_of(self, obj, where, key, names):
        if obj[key] not in names:
            self.fail("'%s.%s' must be one of %s (not '%s')"
                      % (where, key, ", ".join(names), obj[key]))

    def schema(self, doc):
        schema = self.field(doc, "", "schema", ("string",))
        if schema == SCHEMA:
            return
        m = _SCHEMA_RE.match(schema)
        # A number past the C reader's strtol is not read as newer.
        digits = m.group(1).lstrip("0") if m else ""
        if m and len(digits) <= 19 and 1 < int(digits or "0") <= _LONG_MAX:
            raise SchemaVersionError("%s: schema '%s' is newer than this reader understands (%s)"
                                     % (self.name, schema, SCHEMA))
        raise SchemaVersionError("%s: schema '%s' is not one this reader understands (%s)"
                                 % (self.name, schema, SCHEMA))

    def manifest(self, doc):
        if not isinstance(doc, dict):
            self.fail("not a manifest: the top level is not a JSON object")
        self.schema(doc)
        host = self.field(doc, "", "host", ("string", "null"), optional=True)
        if host is not None and not 1 <= len(host.encode("utf-8")) <= 255:
            self.fail("'host' must be a name of 1 to 255 bytes, not %d"
                      % len(host.encode("utf-8")))
        aiter = self.field(doc, "", "aiter", ("object",))
        self.field(aiter, "aiter", "root", ("string",))
        if "meta" in aiter:
            self.field(aiter, "aiter", "meta", ("string",))
        self.field(aiter, "aiter", "version", ("string", "null"))
        self.field(aiter, "aiter", "git_commit", ("string", "null"))
        # Relative, the inputs would be looked for under the reader's working
        # directory, and the answer would change with it.
        for key in ("root", "meta"):
            if key in aiter and not aiter[key].startswith("/"):
                self.fail("'aiter.%s' must be an absolute path, not '%s'"
                          % (key, _terminal_text(aiter[key])))
        self.python(doc)
        inputs = self.field(doc, "", "inputs", ("array",))
        if not inputs:
            # Freshness is that every input still hashes the same.
            self.fail("'inputs' is empty: a manifest that records no input would be fresh "
                      "for ever")
        for i, item in enumerate(inputs):
            self.input(item, "inputs[%d]" % i)
        for rid, rule in self.field(doc, "", "rules", ("object",)).items():
            self.rule(rule, 'rules["%s"]' % rid)
        for cid, cap in self.field(doc, "", "capabilities", ("object",)).items():
            self.capability(cap, 'capabilities["%s"]' % cid)
        devices = self.field(doc, "", "devices", ("array",), optional=True)
        for i, device in enumerate(devices or ()):
            self.kind(device, "devices[%d]" % i, ("object",))
        plans = self.field(doc, "", "plans", ("object",))
        rows = self.field(plans, "plans", "mla_heads", ("array",))
        if not rows:
            self.fail("'plans.mla_heads' must not be empty")
        for i, row in enumerate(rows):
            self.plan_row(row, "plans.mla_heads[%d]" % i)
        _signatures.check(self, doc)

    def python(self, doc):
        """The interpreter whose facts answers read: absent when none did."""
        py = self.field(doc, "", "python", ("object",), optional=True)
        if py is None:
            return
        self.field(py, "python", "executable", ("string", "null"))
        for key in ("version", "releaselevel", "platform", "os_name"):
            self.field(py, "python", key, ("string",), optional=True)
        for name, found in (self.field(py, "python", "finds", ("object",), optional=True)
                            or {}).items():
            self.kind(found, "python.finds.%s" % name, ("bool",))

    def input(self, item, where):
        self.kind(item, where, ("object",))
        self.field(item, where, "path", ("string",))
        sha = self.field(item, where, "sha256", ("string", "null"))
        size = self.field(item, where, "bytes", ("int", "null"))
        if sha is not None and not _SHA256_RE.match(sha):
            self.fail("'%s.sha256' must be 64 lowercase hex digits or null" % where)
        if size is not None and size < 0:
            self.fail("'%s.bytes' must not be negative" % where)
        if "seen" in item:
            self.field(item, where, "seen", ("string",))
            self.one_of(item, where, "seen", _SEEN_CLASSES)

    def rule(self, rule, where):
        self.kind(rule, where, ("object",))
        self.field(rule, where, "status", ("string",))
        self.one_of(rule, where, "status", _RULE_STATUSES)
        self.field(rule, where, "file", ("string", "null"))
        self.field(rule, where, "reason", ("string",), optional=True)
        for i, match in enumerate(self.field(rule, where, "matches", ("array",))):
            mwhere = "%s.matches[%d]" % (where, i)
            self.kind(match, mwhere, ("object",))
            self.field(match, mwhere, "line", ("int",))
            self.field(match, mwhere, "text", ("string",))
            captures = self.field(match, mwhere, "captures", ("object",))
            for name, value in captures.items():
                self.kind(value, "%s.captures.%s" % (mwhere, name), ("string",))

    def capability(self, cap, where):
        self.kind(cap, where, ("object",))
        self.field(cap, where, "supported", ("bool",))
        self.field(cap, where, "reason", ("string",))
        self.field(cap, where, "evidence", ("array",))
        launch = self.field(cap, where, "launch", ("object",), optional=True)
        if launch is None:
            return
        lwhere = where + ".launch"
        self.field(launch, lwhere, "status", ("string",))
        self.one_of(launch, lwhere, "status", _LAUNCH_STATUSES)
        self.field(launch, lwhere, "reason", ("string", "null"), optional=True)
        for i, result in enumerate(self.field(launch, lwhere, "results", ("array",))):
            rwhere = "%s.results[%d]" % (lwhere, i)
            self.kind(result, rwhere, ("object",))
            self.field(result, rwhere, "status", ("string",))
            self.field(result, rwhere, "device", ("object",), optional=True)
            self.kernel(result, rwhere)
        self.kernel(launch, lwhere)

    def kernel(self, obj, where):
        """"kernel", absent in manifests of earlier versions (the reference ran)."""
        if self.field(obj, where, "kernel", ("string",), optional=True) is not None:
            self.one_of(obj, where, "kernel", _KERNELS)

    def plan_row(self, row, where):
        self.kind(row, where, ("object",))
        heads = self.field(row, where, "heads", ("int",))
        launch = self.field(row, where, "launch_heads", ("int",))
        self.field(row, where, "mode", ("string",))
        self.one_of(row, where, "mode", _PAD_MODES)
        self.field(row, where, "verified", ("bool",))
        self.kernel(row, where)
        if heads < 1 or launch < 1:
            self.fail("'%s' must have heads and launch_heads of at least 1" % where)
        if heads > _PLAN_MAX_HEADS or launch > _PLAN_MAX_HEADS:
            self.fail("'%s' must have heads and launch_heads of at most %d"
                      % (where, _PLAN_MAX_HEADS))
        # A consumer pads by the row: only what the routing gives can be padded.
        if launch < heads:
            self.fail("'%s' must have launch_heads of at least heads (%d), not %d"
                      % (where, heads, launch))
        planned = _pad_mode(heads, launch)
        if row["mode"] != planned:
            self.fail("'%s.mode' must be %s for %d heads as %d, as the planner pads (not '%s')"
                      % (where, planned, heads, launch, row["mode"]))


def _pad_mode(heads, launch):
    """The padding that runs heads real heads as launch (>= heads), as the one
    routing gives it: src/core/mla-route.c, ap_mla_pad_mode, which the C reader calls."""
    if launch == heads:
        return "none"
    if 16 % heads == 0 and launch % heads == 0:
        return "repeat-interleave"
    return "tile-slice"


def _refusal(rel):
    """Why an input path may not be read (None when it may), as the C reader says."""
    if rel == "":
        return "empty path"
    if rel.startswith("/"):
        return "absolute path"
    if ".." in rel.split("/"):
        return "'..' component"
    return None


# The folders of AITER's sources and kernel tables, read under the meta
# folder (aiter_meta/ of an installed wheel); the C reader's ap_path_in_meta.
META_DIRS = ("csrc", "hsa", "3rdparty", "gradlib")


def _in_meta(rel):
    head, sep, _ = rel.partition("/")
    return bool(sep) and head in META_DIRS


# The C reader's AP_LISTING_MAX.
LISTING_MAX = 100000


# Symlinks one input may go through (Linux's MAXSYMLINKS).
_MAX_HOPS = 40
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# O_NONBLOCK: a FIFO swapped in at an input's path must not hang a server start.
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK
_FILE_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK \
    | getattr(os, "O_NOCTTY", 0)


def _under(base, path):
    return path == base or path.startswith(base.rstrip("/") + "/")


def _open_beneath(base, rel, folder=False):
    """Opens base/rel one component at a time, each beneath the folder opened
    before it and without following a symlink (O_NOFOLLOW), so that a folder
    swapped for a symlink while it runs cannot lead outside base. A symlink is
    followed only by reading it and resolving its target again beneath base,
    at most _MAX_HOPS times (then OSError ELOOP); one that leads out of base
    ('..' past it, an absolute target) is resolved by name to tell "outside"
    from "absent", and is never opened. With folder (a listing), rel names a
    folder and no symlink is followed: one on the way is "not-file", as the
    C reader lists. Returns (kind, fd, st): ("file", fd, st) for a regular
    file (folder: a folder), open for the caller to close; ("absent" |
    "outside" | "not-file", None, None) otherwise."""
    chain = [os.open(base, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)]
    names = []  # the names of chain[1:] beneath base
    todo = list(reversed(rel.split("/")))
    hops = 0

    def hop():
        nonlocal hops
        hops += 1
        if hops > _MAX_HOPS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))

    try:
        while True:
            while todo and todo[-1] in ("", "."):
                todo.pop()
            if not todo:
                # rel ends at a folder (base itself, or a symlink to one).
                if folder:
                    fd = chain.pop()
                    return "file", fd, os.fstat(fd)
                return "not-file", None, None
            comp = todo.pop()
            if comp == "..":
                if len(chain) > 1:
                    os.close(chain.pop())
                    names.pop()
                    continue
                # Past base: only by a symlink's target (rel has no '..').
                kind, rest = _leaving(base, os.path.join(base, "..", *reversed(todo)))
                if kind is not None:
                    return kind, None, None
                hop()
                for fd in chain[1:]:
                    os.close(fd)
                del chain[1:], names[:]
                todo = list(reversed(rest.split("/")))
                continue
            last = all(c in ("", ".") for c in todo)
            want_dir = folder or not last
            dir_fd = chain[-1]
            try:
                st = os.stat(comp, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return "absent", None, None
            if stat.S_ISLNK(st.st_mode):
                if folder:
                    return "not-file", None, None
                hop()
                try:
                    target = os.readlink(comp, dir_fd=dir_fd)
                except OSError as e:
                    if e.errno in (errno.ENOENT, errno.EINVAL):
                        todo.append(comp)  # changed since the stat: look again
                        continue
                    raise
                if target.startswith("/"):
                    where = os.path.join(target, *reversed(todo))
                    kind, rest = _leaving(base, where)
                    if kind is not None:
                        return kind, None, None
                    for fd in chain[1:]:
                        os.close(fd)
                    del chain[1:], names[:]
                    todo = list(reversed(rest.split("/")))
                else:
                    todo.extend(reversed(target.split("/")))
                continue
            if want_dir and not stat.S_ISDIR(st.st_mode):
                # A file where a folder is needed: nothing is there, as
                # realpath finds it; a listing calls it not a folder.
                return ("not-file" if folder else "absent"), None, None
            if not want_dir and not stat.S_ISREG(st.st_mode):
                return ("folder" if stat.S_ISDIR(st.st_mode) else "not-file"), None, None
            try:
                fd = os.open(comp, _DIR_FLAGS if want_dir else _FILE_FLAGS, dir_fd=dir_fd)
            except FileNotFoundError:
                return "absent", None, None
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
                    # Swapped for a symlink or another type since the stat.
                    hop()
                    todo.append(comp)
                    continue
                raise
            st = os.fstat(fd)
            if want_dir:
                if not stat.S_ISDIR(st.st_mode):
                    os.close(fd)
                    hop()
                    todo.append(comp)
                    continue
                chain.append(fd)
                names.append(comp)
                continue
            if not stat.S_ISREG(st.st_mode):
                os.close(fd)
                return "not-file", None, None
            return "file", fd, st
    finally:
        for fd in chain:
            os.close(fd)


def _leaving(base, where):
    """A symlink led to the path where, which is not beneath base by name.
    Looks at it by name only, never opening it: ("absent" | "outside", None),
    or (None, rel) when it is beneath base after all (a target that comes
    back in), to be resolved again beneath base from rel."""
    real = os.path.realpath(where)
    if not os.path.lexists(real):
        return "absent", None
    if not _under(base, real):
        return "outside", None
    return None, os.path.relpath(real, base)


def _listing(root, rel):
    """A folder input ("dir/"): its regular files ("name\\n") and folders
    ("name/\\n"), byte-sorted, every component opened without following a
    symlink, as the C reader lists it. ("absent"|"not-file"|"file", bytes, sha256)."""
    kind, fd, _ = _open_beneath(root, rel, folder=True)
    if fd is None:
        return kind, None, None
    names = []
    try:
        with os.scandir(fd) as it:
            for entry in it:
                if entry.is_file(follow_symlinks=False):
                    names.append(os.fsencode(entry.name))
                elif entry.is_dir(follow_symlinks=False):
                    names.append(os.fsencode(entry.name) + b"/")
                if len(names) > LISTING_MAX:
                    return "unreadable", None, None
    finally:
        os.close(fd)
    text = b"".join(n + b"\n" for n in sorted(names))
    return "file", len(text), hashlib.sha256(text).hexdigest()


# The C reader's AP_HASH_MAX_BYTES: a larger file is never hashed.
HASH_MAX_BYTES = 1 << 30


def _seen_of_error(e):
    """The class the C reader gives a path it cannot open (ap_seen_of)."""
    return {errno.ELOOP: "loop", errno.ENAMETOOLONG: "too-long"}.get(e.errno, "unreadable")


def _look_at(root, rel, want_bytes):
    """What is at root/rel now: (class, bytes, sha256 hex), the class "file" or what
    the C reader records as `seen` ("absent", "outside", "folder", "not-file",
    "loop", "too-long", "unreadable", "over-hash-cap"). Resolved beneath root one
    component at a time (_open_beneath)."""
    try:
        if rel.endswith("/"):
            return _listing(root, rel)
        # Most inputs of a real tree are absent paths (a scan's lookups), and
        # where the kernel finds nothing by name the walk beneath root finds
        # nothing either (it follows only what the kernel follows): one lstat
        # instead of an open per component.
        try:
            os.lstat(os.path.join(root, rel))
        except (FileNotFoundError, NotADirectoryError):
            return "absent", None, None
        except OSError:
            pass  # a loop, a name too long: as the walk finds it
        kind, fd, st = _open_beneath(root, rel)
    except OSError as e:
        return _seen_of_error(e), None, None
    if fd is None:
        return kind, None, None
    try:
        if st.st_size > HASH_MAX_BYTES:
            return "over-hash-cap", st.st_size, None
        if want_bytes is not None and want_bytes != st.st_size:
            return "file", st.st_size, None
        digest = hashlib.sha256()
        for chunk in iter(lambda: os.read(fd, 1 << 16), b""):
            digest.update(chunk)
        return "file", st.st_size, digest.hexdigest()
    finally:
        os.close(fd)


class Manifest:
    """A loaded manifest. `data` is the parsed JSON, `path` where it came from."""

    def __init__(self, data: "Dict[str, Any]", path: str) -> None:
        self.data = data
        self.path = path

    @property
    def root(self) -> str:
        """The scanned AITER root (aiter.root): absolute, canonical."""
        return self.data["aiter"]["root"]

    @property
    def meta(self) -> str:
        """Where csrc/, hsa/, 3rdparty/ and gradlib/ inputs are (older manifests: the root)."""
        return self.data["aiter"].get("meta", self.root)

    def _folder(self, what, recorded):
        if not os.path.exists(recorded):
            raise ManifestError("%s: aiter %s '%s': %s"
                                % (self.path, what, recorded, os.strerror(errno.ENOENT)))
        real = os.path.realpath(recorded)
        if not os.path.isdir(real):
            raise ManifestError("%s: aiter %s '%s': not a folder" % (self.path, what, recorded))
        return real

    def supported(self, capability: str) -> bool:
        """True or False; KeyError for a capability the manifest does not have."""
        try:
            return self.data["capabilities"][capability]["supported"]
        except KeyError:
            raise KeyError("unknown capability '%s'" % capability) from None

    def verdict(self, capability: str) -> str:
        """"supported", "unsupported", or "unknown": unsupported because nothing
        could decide it (an input absent or unreadable, or a rule "unknown"), its
        reason beginning "unknown, so unsupported: "; KeyError as supported()."""
        if self.supported(capability):
            return "supported"
        reason = self.data["capabilities"][capability]["reason"]
        return "unknown" if reason.startswith(_UNKNOWN_PREFIX) else "unsupported"

    def rule_status(self, rule_id: str) -> str:
        """"matched", "unmatched", "missing", "error" or "unknown" (the file was
        read, but what it binds is known only by running it; never a match);
        KeyError for a rule the manifest does not have."""
        return self._rule(rule_id)["status"]

    def captures(self, rule_id: str) -> "List[Dict[str, str]]":
        """The named captures of each match of the rule, in order (a list of dicts)."""
        return [dict(m["captures"]) for m in self._rule(rule_id)["matches"]]

    def launch_heads(self, heads: int) -> "Tuple[int, str, bool]":
        """(launch_heads, mode, verified) for `heads` query heads, from plans.mla_heads."""
        if not isinstance(heads, int) or isinstance(heads, bool):
            raise TypeError("heads must be an int, not %s" % type(heads).__name__)
        for row in self.data["plans"]["mla_heads"]:
            if row["heads"] == heads:
                return row["launch_heads"], row["mode"], row["verified"]
        raise KeyError("plans.mla_heads has no row for %d heads" % heads)

    def launch_kernel(self, capability):
        """Which kernel the capability's launch ran: "aiter" (AITER's own, on some
        device) or "reference" (aiter-probe's, where AITER's could not run); None
        when no launch ran; KeyError as supported()."""
        self.supported(capability)
        return self.data["capabilities"][capability].get("launch", {}).get("kernel")

    def verified_by(self, heads):
        """The kernel that proved the routing for `heads` ("aiter" or "reference"),
        None when the row is not verified (or the manifest predates the record);
        KeyError and TypeError as launch_heads()."""
        self.launch_heads(heads)
        row = next(r for r in self.data["plans"]["mla_heads"] if r["heads"] == heads)
        return row.get("kernel") if row["verified"] else None

    def stale_inputs(self) -> "List[Tuple[str, str]]":
        """[(path, "changed"|"vanished"|"appeared"|"unverifiable"), ...] in input order;
        [] when fresh.

        Raises ManifestError for a missing root, a refused input path or an
        input that cannot be read."""
        root = self._folder("root", self.root)
        meta = self._folder("meta folder", self.meta)
        stale = []
        for i, item in enumerate(self.data["inputs"]):
            rel = item["path"]
            why = _refusal(rel)
            if why is not None:
                raise ManifestError("%s: inputs[%d].path '%s' is refused: %s"
                                    % (self.path, i, rel, why))
            sha, size = item["sha256"], item["bytes"]
            try:
                base = meta if _in_meta(rel) else root
                kind, now_bytes, now_sha = _look_at(base, rel, size if sha is not None else None)
            except OSError as e:
                raise ManifestError("%s: input '%s': %s" % (self.path, rel, e.strerror)) from None
            seen = item.get("seen")
            if sha is None and seen == "over-hash-cap":
                # Never hashed: nothing can show it unchanged.
                stale.append((rel, "unverifiable"))
            elif sha is None and seen is not None:
                # What the scan could not read must still be what it was.
                if kind == "file":
                    stale.append((rel, "appeared"))
                elif kind != seen:
                    stale.append((rel, "changed"))
            elif sha is None:
                # A manifest of an earlier version: nothing was read (absent,
                # or refused unread); only a file the reader would read matters.
                if kind in ("file", "over-hash-cap"):
                    stale.append((rel, "appeared"))
            elif kind == "absent":
                stale.append((rel, "vanished"))
            elif kind != "file" or (size is not None and size != now_bytes) or sha != now_sha:
                stale.append((rel, "changed"))
        return stale

    def verify(self) -> "Manifest":
        """Raises StaleManifestError naming each stale input; returns self when fresh."""
        stale = self.stale_inputs()
        if stale:
            raise StaleManifestError("%s: stale: %s" % (
                self.path, ", ".join("%s %s" % s for s in stale)), stale)
        return self

    def _rule(self, rule_id):
        try:
            return self.data["rules"][rule_id]
        except KeyError:
            raise KeyError("unknown rule '%s'" % rule_id) from None


# --- What is refused before parsing, as the C reader does (prescan in
# src/core/manifest-read.c): json takes NaN, Infinity, integers past 64 bits, reals
# past the double range, \u0000 and unpaired surrogates, which jansson
# refuses, and recurses once per nesting level. Positions are line and
# column, in characters.
_MAX_DEPTH = 64
# A string (to its end, or the text's), a bracket, a number that may be out of
# range (an exponent, or 19 digits in a row: shorter ones never are), NaN or
# Infinity; numbers and words start where the C reader's do.
_LINT_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]'
                      r'|(?<![A-Za-z0-9_+.\-])(?=[-0-9])(?=[-+.0-9]*[eE]|[-+.eE0-9]*[0-9]{19})'
                      r'[-+.eE0-9]+'
                      r'|(?<![A-Za-z0-9_])(?:NaN|Infinity)', re.S)
_ESCAPE_RE = re.compile(r'\\.', re.S)
_HEX4_RE = re.compile(r'[0-9a-fA-F]{4}')
_INT_RE = re.compile(r'-?[0-9]+\Z')


def _hex4(text, at):
    m = _HEX4_RE.match(text, at)
    return int(m.group(0), 16) if m else -1


def _number_out_of_range(tok):
    if not re.search(r"[0-9]", tok):
        return False
    if _INT_RE.match(tok):
        digits = tok.lstrip("-").lstrip("0") or "0"
        limit = "9223372036854775808" if tok.startswith("-") else "9223372036854775807"
        return len(digits) > 19 or (len(digits) == 19 and digits > limit)
    try:
        return math.isinf(float(tok))
    except ValueError:
        return False


def _string_refusal(text, start, end):
    """Why the string text[start:end] (from its opening quote) is refused, as
    (offset, words), or None."""
    if text.find("\\u", start, end) < 0:
        return None
    skip = -1
    for m in _ESCAPE_RE.finditer(text, start, end):
        at = m.start()
        if at < skip or m.group(0) != "\\u":
            continue
        code = _hex4(text, at + 2)
        if code < 0:
            continue
        skip = at + 6
        if code == 0:
            return at, "\\u0000 is not allowed in a string"
        if 0xD800 <= code <= 0xDBFF:
            low = _hex4(text, at + 8) if text.startswith("\\u", at + 6) else -1
            if not 0xDC00 <= low <= 0xDFFF:
                return at, "unpaired surrogate '%s' in a string" % text[at:at + 6]
            skip = at + 12
        elif 0xDC00 <= code <= 0xDFFF:
            return at, "unpaired surrogate '%s' in a string" % text[at:at + 6]
    return None


def _prescan(text):
    """(line, column, words) for what the C reader refuses before parsing, or None."""
    depth, found = 0, None
    for m in _LINT_RE.finditer(text):
        tok, at = m.group(0), m.start()
        first = tok[0]
        if first == '"':
            found = _string_refusal(text, at, m.end())
        elif first in "[{":
            depth += 1
            if depth > _MAX_DEPTH:
                found = at, "more than %d nested arrays and objects" % _MAX_DEPTH
        elif first in "]}":
            depth = max(depth - 1, 0)
        elif first in "NI":
            found = at, "'%s' is not JSON" % tok
        elif _number_out_of_range(tok):
            found = at, "number out of range"
        if found is not None:
            at, words = found
            return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at), words
    return None


# What can make _prescan refuse, found without its token walk (most of load()'s
# time on a real tree's manifest: 70 of 190 ms for 170 KB): a \u escape of
# U+0000 or a surrogate anywhere, and outside the strings (taken out whole, as
# _LINT_RE takes them) a number with an exponent or 19 digits, NaN, Infinity
# or brackets past _MAX_DEPTH. Each finds a superset of what the walk
# refuses, so text with none of them passes it.
_REFUSABLE_ESCAPE_RE = re.compile(r'\\u(?:0000|[dD][89a-fA-F])')
_STRING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_RISKY_NUMBER_RE = re.compile(r'[0-9][0-9.]*(?:[eE]|[0-9]{18})')
_NOT_BRACKETS_RE = re.compile(r'[^\[\]{}]+')


def _may_be_refused(text):
    if _REFUSABLE_ESCAPE_RE.search(text) is not None:
        return True
    bare = _STRING_RE.sub("", text)
    if "NaN" in bare or "Infinity" in bare or _RISKY_NUMBER_RE.search(bare) is not None:
        return True
    depth = 0
    for c in _NOT_BRACKETS_RE.sub("", bare):
        if c in "[{":
            depth += 1
            if depth > _MAX_DEPTH:
                return True
        elif depth:
            depth -= 1
    return False


def _refuse_constant(name):
    raise ValueError("'%s' is not JSON" % name)


def _no_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError("duplicate object key '%s'" % key)
        seen[key] = value
    return seen


def _not_regular(path, mode):
    kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) \
        else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return ManifestError("%s: not a regular file (%s)" % (path, kind))


def _untrusted(path, st, file=None):
    """Why path (lstat st) may not be trusted, as src/core/trust.c says it,
    or None: a manifest tells a server how to run, so only the reading user
    and root may have written it or its folder (ssh's rule); file: the
    manifest, when path is its folder."""
    me = os.geteuid()
    if stat.S_ISLNK(st.st_mode):
        why = "a symlink"
    elif st.st_uid not in (me, 0):
        why = "owned by uid %d, neither the reading user (uid %d) nor root" % (st.st_uid, me)
    elif st.st_mode & stat.S_IWOTH:
        why = "writable by others"
    elif st.st_mode & stat.S_IWGRP:
        why = "writable by its group"
    else:
        return None
    if file is not None:
        return ManifestError("%s: not trusted: its folder %s is %s" % (file, path, why))
    return ManifestError("%s: not trusted: it is %s" % (path, why))


def _check_trusted(path, st):
    refused = _untrusted(path, st)
    if refused is None:
        slash = path.rfind("/")
        folder = "." if slash < 0 else path[:max(slash, 1)]
        refused = _untrusted(folder, os.lstat(folder), path)
    if refused is not None:
        raise refused


def _read_manifest(path):
    """The bytes of the regular file at path, read as the C reader reads them
    (slurp in src/core/manifest-read.c): only a file the reading user may
    trust (_untrusted), and only a regular one: a FIFO would block for ever,
    a device read without end, so anything else is refused, looked at before
    opening (not followed; opening a device can do things) and again once
    opened, non-blocking; at most one byte past MANIFEST_MAX_BYTES is read."""
    too_large = ManifestError("%s: larger than %d MiB, the limit for a manifest"
                              % (path, MANIFEST_MAX_BYTES >> 20))
    st = os.lstat(path)
    _check_trusted(path, st)
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        if st.st_size > MANIFEST_MAX_BYTES:
            raise too_large
        refused = _untrusted(path, st)
        if refused is not None:
            raise refused
        chunks, size = [], 0
        while size <= MANIFEST_MAX_BYTES:
            chunk = os.read(fd, min(1 << 16, MANIFEST_MAX_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MANIFEST_MAX_BYTES:
            raise too_large
        return b"".join(chunks)
    finally:
        os.close(fd)


def load(path: "Union[str, os.PathLike]", verify_fresh: bool = False) -> "Manifest":
    """Loads and checks the manifest at path; with verify_fresh, re-hashes its inputs."""
    path = os.fspath(path)
    try:
        text = _read_manifest(path).decode("utf-8")
    except OSError as e:
        raise ManifestError("%s: %s" % (path, e.strerror)) from None
    except UnicodeDecodeError as e:
        raise ManifestError("%s: not UTF-8: %s" % (path, e.reason)) from None
    m = _parse(text, path)
    if verify_fresh:
        m.verify()
    return m


def _parse(text, path):
    """The Manifest of JSON text, checked as load() checks a file's; path
    names it in messages."""
    refused = _prescan(text) if _may_be_refused(text) else None
    if refused is not None:
        raise ManifestError("%s:%d:%d: %s" % ((path,) + refused))
    return _checked(text, path)


def _checked(text, path):
    """_parse without what only a writer other than jansson could put in
    the text (_prescan): for the engine's own manifest."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise ManifestError("%s:%d:%d: %s" % (path, e.lineno, e.colno, e.msg)) from None
    except ValueError as e:
        raise ManifestError("%s: %s" % (path, e)) from None
    except RecursionError:
        # Only when load() itself is called this deep in the stack.
        raise ManifestError("%s: nested too deeply for this reader" % path) from None
    except MemoryError:
        raise ManifestError("%s: out of memory while parsing" % path) from None
    _Checker(path).manifest(data)
    return Manifest(data, path)


def _logger():
    """The package's logger, "aiter_probe". logging is imported only when
    something is said: it is a fifth of a fresh interpreter's time from
    `import aiter_probe` to the first answer."""
    import logging
    return logging.getLogger("aiter_probe")


# The manifest of the AITER this interpreter imports (installed.py).
from .installed import default_manifest_path, for_installed_aiter  # noqa: E402

__all__ += ["default_manifest_path", "for_installed_aiter"]
