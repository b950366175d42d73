"""Read aiter-probe capability manifests (schema aiter-probe.manifest/1).

Standard library only. Copy this file next to your code, or add
$(pkgdatadir)/python (e.g. /usr/local/share/aiter-probe/python) to sys.path.

    import aiter_probe

    m = aiter_probe.load("/var/lib/aiter-probe/manifest.json", verify_fresh=True)
    if m.supported("mla.decode.native_h24"):
        ...
    launch_heads, mode, verified = m.launch_heads(24)

Failures raise ManifestError (a ValueError) or one of its subclasses,
SchemaVersionError and StaleManifestError, with the same messages as the
aiter-probe command and the C API. Unknown capability, rule and head-count
lookups raise KeyError.
"""

import errno
import hashlib
import json
import os
import re
import stat

__all__ = ["SCHEMA", "ManifestError", "SchemaVersionError", "StaleManifestError",
           "Manifest", "load"]

SCHEMA = "aiter-probe.manifest/1"
_SCHEMA_RE = re.compile(r"aiter-probe\.manifest/([0-9]+)\Z")
_SHA256_RE = re.compile(r"[0-9a-f]{64}\Z")
_RULE_STATUSES = ("matched", "unmatched", "missing", "error")
_LAUNCH_STATUSES = ("passed", "failed", "error", "skipped")
_PAD_MODES = ("none", "repeat-interleave", "tile-slice")


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
        if m and int(m.group(1)) > 1:
            raise SchemaVersionError("%s: schema '%s' is newer than this reader understands (%s)"
                                     % (self.name, schema, SCHEMA))
        raise SchemaVersionError("%s: schema '%s' is not one this reader understands (%s)"
                                 % (self.name, schema, SCHEMA))

    def manifest(self, doc):
        if not isinstance(doc, dict):
            self.fail("not a manifest: the top level is not a JSON object")
        self.schema(doc)
        aiter = self.field(doc, "", "aiter", ("object",))
        self.field(aiter, "aiter", "root", ("string",))
        if "meta" in aiter:
            self.field(aiter, "aiter", "meta", ("string",))
        self.field(aiter, "aiter", "version", ("string", "null"))
        self.field(aiter, "aiter", "git_commit", ("string", "null"))
        for i, item in enumerate(self.field(doc, "", "inputs", ("array",))):
            self.input(item, "inputs[%d]" % i)
        for rid, rule in self.field(doc, "", "rules", ("object",)).items():
            self.rule(rule, 'rules["%s"]' % rid)
        for cid, cap in self.field(doc, "", "capabilities", ("object",)).items():
            self.capability(cap, 'capabilities["%s"]' % cid)
        plans = self.field(doc, "", "plans", ("object",))
        for i, row in enumerate(self.field(plans, "plans", "mla_heads", ("array",))):
            self.plan_row(row, "plans.mla_heads[%d]" % i)

    def input(self, item, where):
        self.kind(item, where, ("object",))
        self.field(item, where, "path", ("string",))
        sha = self.field(item, where, "sha256", ("string", "null"))
        size = self.field(item, where, "bytes", ("int", "null"))
        if sha is not None and not _SHA256_RE.match(sha):
            self.fail("'%s.sha256' must be 64 lowercase hex digits or null" % where)
        if size is not None and size < 0:
            self.fail("'%s.bytes' must not be negative" % where)

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

    def plan_row(self, row, where):
        self.kind(row, where, ("object",))
        heads = self.field(row, where, "heads", ("int",))
        launch = self.field(row, where, "launch_heads", ("int",))
        self.field(row, where, "mode", ("string",))
        self.one_of(row, where, "mode", _PAD_MODES)
        self.field(row, where, "verified", ("bool",))
        if heads < 1 or launch < 1:
            self.fail("'%s' must have heads and launch_heads of at least 1" % where)


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


def _listing(root, rel):
    """A folder input ("dir/"): its regular files ("name\\n") and folders
    ("name/\\n"), byte-sorted, every component opened without following a
    symlink, as the C reader lists it. ("absent"|"not-file"|"file", bytes, sha256)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for comp in rel.split("/"):
            if comp in ("", "."):
                continue
            try:
                nxt = os.open(comp, flags, dir_fd=fd)
            except FileNotFoundError:
                return "absent", None, None
            except (NotADirectoryError, OSError) as e:
                if isinstance(e, NotADirectoryError) or e.errno == errno.ELOOP:
                    return "not-file", None, None
                raise
            os.close(fd)
            fd = nxt
        names = []
        with os.scandir(fd) as it:
            for entry in it:
                if entry.is_file(follow_symlinks=False):
                    names.append(os.fsencode(entry.name))
                elif entry.is_dir(follow_symlinks=False):
                    names.append(os.fsencode(entry.name) + b"/")
                if len(names) > LISTING_MAX:
                    return "not-file", None, None
    finally:
        os.close(fd)
    text = b"".join(n + b"\n" for n in sorted(names))
    return "file", len(text), hashlib.sha256(text).hexdigest()


def _look_at(root, rel, want_bytes):
    """What is at root/rel now: ("absent"|"outside"|"not-file"|"file", bytes, sha256 hex)."""
    if rel.endswith("/"):
        return _listing(root, rel)
    real = os.path.realpath(os.path.join(root, rel))
    if not os.path.lexists(real):
        return "absent", None, None
    if real != root and not real.startswith(root.rstrip("/") + "/"):
        return "outside", None, None
    # O_NONBLOCK: a FIFO planted at an input's path must not hang a server start.
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return "absent", None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "not-file", None, None
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

    def __init__(self, data, path):
        self.data = data
        self.path = path

    @property
    def root(self):
        return self.data["aiter"]["root"]

    @property
    def meta(self):
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

    def supported(self, capability):
        """True or False; KeyError for a capability the manifest does not have."""
        try:
            return self.data["capabilities"][capability]["supported"]
        except KeyError:
            raise KeyError("unknown capability '%s'" % capability) from None

    def rule_status(self, rule_id):
        """"matched", "unmatched", "missing" or "error"; KeyError when unknown."""
        return self._rule(rule_id)["status"]

    def captures(self, rule_id):
        """The named captures of each match of the rule, in order (a list of dicts)."""
        return [dict(m["captures"]) for m in self._rule(rule_id)["matches"]]

    def launch_heads(self, heads):
        """(launch_heads, mode, verified) for `heads` query heads, from plans.mla_heads."""
        for row in self.data["plans"]["mla_heads"]:
            if row["heads"] == heads:
                return row["launch_heads"], row["mode"], row["verified"]
        raise KeyError("plans.mla_heads has no row for %d heads" % heads)

    def stale_inputs(self):
        """[(path, "changed"|"vanished"|"appeared"), ...] in input order; [] when fresh.

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
            if sha is None:
                # Nothing was read: absent, or refused unread (a symlink out of
                # the root, not a regular file). Only a readable file matters.
                if kind == "file":
                    stale.append((rel, "appeared"))
            elif kind == "absent":
                stale.append((rel, "vanished"))
            elif kind != "file" or (size is not None and size != now_bytes) or sha != now_sha:
                stale.append((rel, "changed"))
        return stale

    def verify(self):
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


def _no_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError("duplicate object key '%s'" % key)
        seen[key] = value
    return seen


def load(path, verify_fresh=False):
    """Loads and checks the manifest at path; with verify_fresh, re-hashes its inputs."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except OSError as e:
        raise ManifestError("%s: %s" % (path, e.strerror)) from None
    except UnicodeDecodeError as e:
        raise ManifestError("%s: not UTF-8: %s" % (path, e.reason)) from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise ManifestError("%s:%d:%d: %s" % (path, e.lineno, e.colno, e.msg)) from None
    except ValueError as e:
        raise ManifestError("%s: %s" % (path, e)) from None
    _Checker(path).manifest(data)
    m = Manifest(data, path)
    if verify_fresh:
        m.verify()
    return m
