# SPDX-License-Identifier: MIT
"""The Python reader: loading, lookups, freshness, refusals, agreement with
the aiter-probe command, and how a serving backend routes 24 heads."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SRCDIR = os.environ["AP_SRCDIR"]
BUILDDIR = os.environ.get("AP_BUILDDIR")
sys.path.insert(0, os.path.join(SRCDIR, "python"))

import aiter_probe  # noqa: E402

MANIFESTS = os.path.join(SRCDIR, "tests", "manifests")
RED = "csrc/kernels/mla/reduce.cu"
META = "csrc/kernels/mla/metadata/v1_2_device.cuh"


def manifest(name):
    return os.path.join(MANIFESTS, name)


class TreeCopy:
    """A writable copy of the tree the test manifests describe, and the
    manifest `name` rewritten to point at it."""

    def __init__(self, name="good.json"):
        self.dir = tempfile.mkdtemp(prefix="ap-test-python-")
        self.root = os.path.join(self.dir, "tree")
        shutil.copytree(os.path.join(MANIFESTS, "tree"), self.root)
        with open(manifest(name)) as f:
            data = json.load(f)
        data["aiter"]["root"] = self.root
        self.path = os.path.join(self.dir, "m.json")
        self.write(data)

    def write(self, data):
        with open(self.path, "w") as f:
            json.dump(data, f)

    def file(self, rel):
        return os.path.join(self.root, rel)

    def close(self):
        shutil.rmtree(self.dir)


class LoadTest(unittest.TestCase):
    def test_lookups(self):
        m = aiter_probe.load(manifest("good.json"))
        self.assertIs(m.supported("mla.decode.native_h24"), True)
        self.assertEqual(m.rule_status("mla.reduce.native_h24_d512"), "matched")
        self.assertEqual([(c["heads"], c["head_dim"]) for c in m.captures("mla.reduce.cases")],
                         [("16", "128"), ("16", "512"), ("24", "512"), ("32", "512"),
                          ("64", "512")])
        self.assertEqual(m.launch_heads(24), (24, "none", True))
        self.assertEqual(m.launch_heads(2), (16, "repeat-interleave", False))
        self.assertEqual(m.launch_heads(100), (112, "tile-slice", False))
        second = aiter_probe.load(manifest("second.json"))
        self.assertIs(second.supported("mla.decode.native_h24"), False)
        self.assertEqual(second.rule_status("mla.reduce.native_h24_d512"), "unmatched")
        self.assertEqual(second.launch_heads(24), (32, "tile-slice", False))

    def test_kernels(self):
        """Which kernel ran the launch and proved the row; absent before AITER's
        own kernels could run the cross-check."""
        m = aiter_probe.load(manifest("kernels.json"))
        self.assertEqual(m.launch_kernel("mla.decode.native_h24"), "aiter")
        self.assertEqual(m.verified_by(24), "aiter")
        self.assertIsNone(m.verified_by(23))
        self.assertIsNone(m.launch_kernel("mla.decode.native_h16"))
        good = aiter_probe.load(manifest("good.json"))
        self.assertIsNone(good.launch_kernel("mla.decode.native_h24"))
        self.assertIsNone(good.verified_by(24))
        with self.assertRaisesRegex(KeyError, "unknown capability 'mla.nope'"):
            m.launch_kernel("mla.nope")
        with self.assertRaisesRegex(KeyError, "plans.mla_heads has no row for 129 heads"):
            m.verified_by(129)

    def test_unknown_verdict(self):
        """A rule that ends unknown, and the capability it leaves unknown: not
        supported, and told apart from a no by its reason."""
        with open(manifest("good.json")) as f:
            data = json.load(f)
        data["rules"]["mla.metadata.native_h24"] = {
            "status": "unknown", "file": META, "matches": [],
            "reason": "only a build decides the branch"}
        data["capabilities"]["mla.decode.native_h24"] = {
            "supported": False, "evidence": [],
            "reason": "unknown, so unsupported: rule mla.metadata.native_h24 is unknown: "
                      "%s: only a build decides the branch" % META}
        tree = TreeCopy()
        try:
            tree.write(data)
            m = aiter_probe.load(tree.path)
            self.assertEqual(m.rule_status("mla.metadata.native_h24"), "unknown")
            self.assertIs(m.supported("mla.decode.native_h24"), False)
            self.assertEqual(m.verdict("mla.decode.native_h24"), "unknown")
            self.assertEqual(m.verdict("mla.decode.native_h16"), "supported")
            self.assertEqual(aiter_probe.load(manifest("second.json"))
                             .verdict("mla.decode.native_h24"), "unsupported")
            with self.assertRaisesRegex(KeyError, "unknown capability 'mla.nope'"):
                m.verdict("mla.nope")
        finally:
            tree.close()

    def test_unknown_ids(self):
        m = aiter_probe.load(manifest("good.json"))
        with self.assertRaisesRegex(KeyError, "unknown capability 'mla.nope'"):
            m.supported("mla.nope")
        with self.assertRaisesRegex(KeyError, "unknown rule 'mla.nope'"):
            m.rule_status("mla.nope")
        with self.assertRaisesRegex(KeyError, "plans.mla_heads has no row for 129 heads"):
            m.launch_heads(129)
        for wrong in ("24", 24.0, True, None):
            with self.assertRaisesRegex(TypeError, "heads must be an int, not %s"
                                        % type(wrong).__name__):
                m.launch_heads(wrong)

    def test_newer_schema(self):
        path = manifest("invalid-newer-schema.json")
        with self.assertRaises(aiter_probe.SchemaVersionError) as cm:
            aiter_probe.load(path)
        self.assertEqual(str(cm.exception),
                         "%s: schema 'aiter-probe.manifest/2' is newer than this reader "
                         "understands (aiter-probe.manifest/1)" % path)
        self.assertIsInstance(cm.exception, aiter_probe.ManifestError)

    def test_truncated(self):
        path = manifest("invalid-truncated.json")
        with self.assertRaises(aiter_probe.ManifestError) as cm:
            aiter_probe.load(path)
        self.assertEqual(str(cm.exception),
                         "%s:5:16: Unterminated string starting at" % path)

    def test_missing_file(self):
        path = manifest("nowhere.json")
        with self.assertRaises(aiter_probe.ManifestError) as cm:
            aiter_probe.load(path)
        self.assertEqual(str(cm.exception), "%s: No such file or directory" % path)

    def test_invalid(self):
        """The same refusals, with the same words, as the C loader."""
        with open(manifest("good.json")) as f:
            good = json.load(f)
        cases = [
            (lambda d: d["aiter"].pop("root"), "missing key 'aiter.root'"),
            (lambda d: d.__setitem__("schema", "aiter-probe.manifest/0"),
             "schema 'aiter-probe.manifest/0' is not one this reader understands "
             "(aiter-probe.manifest/1)"),
            (lambda d: d["inputs"][1].__setitem__("sha256", "7943be0b"),
             "'inputs[1].sha256' must be 64 lowercase hex digits or null"),
            (lambda d: d["inputs"][1].__setitem__("bytes", "703"),
             "'inputs[1].bytes' must be an integer or null"),
            (lambda d: d["rules"]["mla.reduce.cases"].__setitem__("status", "maybe"),
             "'rules[\"mla.reduce.cases\"].status' must be one of matched, unmatched, missing, "
             "error, unknown (not 'maybe')"),
            (lambda d: d["rules"]["mla.reduce.cases"]["matches"][2]["captures"]
             .__setitem__("heads", 24),
             "'rules[\"mla.reduce.cases\"].matches[2].captures.heads' must be a string"),
            (lambda d: d["capabilities"]["mla.decode.native_h24"].__setitem__("supported", 1),
             "'capabilities[\"mla.decode.native_h24\"].supported' must be true or false"),
            (lambda d: d["plans"]["mla_heads"][23].__setitem__("kernel", "ours"),
             "'plans.mla_heads[23].kernel' must be one of aiter, reference (not 'ours')"),
            (lambda d: d["capabilities"]["mla.decode.native_h24"]["launch"]["results"][0]
             .__setitem__("kernel", "gpu"),
             "'capabilities[\"mla.decode.native_h24\"].launch.results[0].kernel' must be one of "
             "aiter, reference (not 'gpu')"),
            (lambda d: d["plans"]["mla_heads"][23].__setitem__("mode", "pad"),
             "'plans.mla_heads[23].mode' must be one of none, repeat-interleave, tile-slice "
             "(not 'pad')"),
            (lambda d: d.pop("plans"), "missing key 'plans'"),
            (lambda d: d["plans"]["mla_heads"][23].__setitem__("launch_heads", 2 ** 40),
             "'plans.mla_heads[23]' must have heads and launch_heads of at most 128"),
            (lambda d: d["plans"]["mla_heads"][0].__setitem__("heads", 129),
             "'plans.mla_heads[0]' must have heads and launch_heads of at most 128"),
            (lambda d: d["plans"].__setitem__("mla_heads", []),
             "'plans.mla_heads' must not be empty"),
            (lambda d: d["plans"]["mla_heads"][23].__setitem__("launch_heads", 16),
             "'plans.mla_heads[23]' must have launch_heads of at least heads (24), not 16"),
            (lambda d: d["plans"]["mla_heads"][7].__setitem__("launch_heads", 8),
             "'plans.mla_heads[7].mode' must be none for 8 heads as 8, as the planner pads "
             "(not 'repeat-interleave')"),
            (lambda d: d["plans"]["mla_heads"][7].__setitem__("mode", "tile-slice"),
             "'plans.mla_heads[7].mode' must be repeat-interleave for 8 heads as 16, as the "
             "planner pads (not 'tile-slice')"),
            (lambda d: d["plans"]["mla_heads"][2].__setitem__("mode", "repeat-interleave"),
             "'plans.mla_heads[2].mode' must be tile-slice for 3 heads as 16, as the planner "
             "pads (not 'repeat-interleave')"),
            (lambda d: d["plans"]["mla_heads"][23].__setitem__("mode", "tile-slice"),
             "'plans.mla_heads[23].mode' must be none for 24 heads as 24, as the planner pads "
             "(not 'tile-slice')"),
            (lambda d: d.__setitem__("devices", [1]), "'devices[0]' must be an object"),
            (lambda d: d["devices"].append("gpu"), "'devices[1]' must be an object"),
            (lambda d: d.__setitem__("devices", {}), "'devices' must be an array"),
            (lambda d: d["aiter"].__setitem__("root", "aiter"),
             "'aiter.root' must be an absolute path, not 'aiter'"),
            (lambda d: d["aiter"].__setitem__("meta", "\x1b[2J"),
             "'aiter.meta' must be an absolute path, not '\\x1b[2J'"),
            (lambda d: d.__setitem__("host", 17), "'host' must be a string or null"),
            (lambda d: d.__setitem__("host", ""), "'host' must be a name of 1 to 255 bytes, not 0"),
            (lambda d: d.__setitem__("host", "\u00e9" * 128),
             "'host' must be a name of 1 to 255 bytes, not 256"),
            (lambda d: d.__setitem__("python", []), "'python' must be an object"),
            (lambda d: d.__setitem__("python", {}), "missing key 'python.executable'"),
            (lambda d: d.__setitem__("python", {"executable": 3}),
             "'python.executable' must be a string or null"),
            (lambda d: d.__setitem__("python", {"executable": None, "version": 3.12}),
             "'python.version' must be a string"),
            (lambda d: d.__setitem__("python", {"executable": None, "os_name": None}),
             "'python.os_name' must be a string"),
            (lambda d: d.__setitem__("python", {"executable": None, "finds": []}),
             "'python.finds' must be an object"),
            (lambda d: d.__setitem__("python", {"executable": None, "finds": {"triton": 1}}),
             "'python.finds.triton' must be true or false"),
            (lambda d: d.__setitem__("schema", "aiter-probe.manifest/+2"),
             "schema 'aiter-probe.manifest/+2' is not one this reader understands "
             "(aiter-probe.manifest/1)"),
            (lambda d: d.__setitem__("schema", "aiter-probe.manifest/" + "9" * 5000),
             "schema 'aiter-probe.manifest/%s' is not one this reader understands "
             "(aiter-probe.manifest/1)" % ("9" * 5000)),
        ]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            for edit, message in cases:
                doc = json.loads(json.dumps(good))
                edit(doc)
                with open(path, "w") as f:
                    json.dump(doc, f)
                with self.assertRaises(aiter_probe.ManifestError) as cm:
                    aiter_probe.load(path)
                self.assertEqual(str(cm.exception), "%s: %s" % (path, message))
                # The C reader's messages stop at 4095 bytes (src/core/ap-error.c).
                if HAVE_AP and len(str(cm.exception)) < 4096:
                    self.assertEqual(c_refusal(path), str(cm.exception))
            with open(path, "w") as f:
                f.write('{"schema": "aiter-probe.manifest/1", "schema": "x"}')
            with self.assertRaisesRegex(aiter_probe.ManifestError, "duplicate object key 'schema'"):
                aiter_probe.load(path)


AP = os.path.join(BUILDDIR or "", "aiter-probe")
HAVE_AP = bool(BUILDDIR) and os.path.exists(AP)


def c_refusal(path):
    """What the C reader (aiter-probe verify) says of the manifest at path, or None."""
    run = subprocess.run([AP, "verify", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, errors="replace", timeout=60)
    if run.returncode != 2 or not run.stderr.startswith("aiter-probe: "):
        return None
    return run.stderr[len("aiter-probe: "):].rstrip("\n")


@unittest.skipUnless(HAVE_AP, "no aiter-probe built")
class VersionTest(unittest.TestCase):
    def test_version_is_the_tools(self):
        run = subprocess.run([AP, "--version"], stdout=subprocess.PIPE, universal_newlines=True,
                             check=True)
        self.assertEqual(run.stdout.splitlines()[0], "aiter-probe " + aiter_probe.__version__)


class HostileTest(unittest.TestCase):
    """Deep, malformed and mistyped manifests: ManifestError, never another
    exception, with the C reader's words."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ap-test-hostile-")
        self.path = os.path.join(self.tmp, "m.json")
        with open(manifest("good.json")) as f:
            self.good = json.load(f)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, text):
        with open(self.path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)

    def refusal(self, text):
        """The Python reader's message for text (checked to be a ManifestError)."""
        self.write(text)
        try:
            aiter_probe.load(self.path)
        except aiter_probe.ManifestError as e:
            return str(e)
        except Exception as e:  # noqa: BLE001 - the point of the test
            self.fail("%s: %r" % (type(e).__name__, e))
        return None

    def expect(self, text, message, same_in_c=True):
        got = self.refusal(text)
        self.assertEqual(got, "%s%s" % (self.path, message))
        if same_in_c and HAVE_AP:
            self.assertEqual(c_refusal(self.path), got, "the C reader says otherwise")

    def good_with(self, value):
        """good.json with its first capability's reason set to the JSON text value."""
        doc = json.dumps(self.good)
        key = '"reason": '
        at = doc.index(key, doc.index('"capabilities"')) + len(key)
        end = doc.index('"', at + 1) + 1
        return doc[:at] + value + doc[end:]

    def test_deep(self):
        self.expect("[" * 100000, ":1:65: more than 64 nested arrays and objects")
        self.expect('{"a": ' * 100000, ":1:385: more than 64 nested arrays and objects")
        self.expect("\n " + "[" * 64 + "]" * 64 + " [" + "{\"x\": [" * 40,
                    ":2:355: more than 64 nested arrays and objects")
        # 64 levels are read; brackets inside strings do not count.
        self.expect("[" * 64 + "]" * 64, ": not a manifest: the top level is not a JSON object")
        self.expect('["' + "[" * 100 + '"]',
                    ": not a manifest: the top level is not a JSON object")

    def test_refused_before_parsing(self):
        # (the value, where in it the refusal points, the words)
        for value, offset, message in [
            ('"a\\u0000b"', 2, "\\u0000 is not allowed in a string"),
            ('"\\ud800"', 1, "unpaired surrogate '\\ud800' in a string"),
            ('"\\uDBFF\\u0041"', 1, "unpaired surrogate '\\uDBFF' in a string"),
            ('"\\ud800\\udc00\\udc00"', 13, "unpaired surrogate '\\udc00' in a string"),
            ("NaN", 0, "'NaN' is not JSON"),
            ("-Infinity", 1, "'Infinity' is not JSON"),
            ("9223372036854775808", 0, "number out of range"),
            ("-9223372036854775809", 0, "number out of range"),
            ("1" * 5000, 0, "number out of range"),
            ("1e400", 0, "number out of range"),
            ("-2.5E+309", 0, "number out of range"),
        ]:
            text = self.good_with("\n  " + value)
            line = text.count("\n", 0, text.index(value)) + 1
            self.expect(text, ":%d:%d: %s" % (line, 3 + offset, message))

    def test_accepted_edges(self):
        for value in ('"\\ud83d\\ude00 \\u00e9"', "-9223372036854775808", "1e308",
                      '"NaN Infinity [[[["', "1e-400", '"\\"1e999 ]]] ' + "{" * 70 + '"',
                      '"\\\\u0000"'):
            text = self.good_with(value)
            got = self.refusal(text)
            # Only the reason's type may be refused, never the text.
            if got is not None:
                self.assertTrue(got.endswith("must be a string"), got)
            if HAVE_AP:
                # Read by C too: it goes on to the root, which is not there.
                self.assertEqual(c_refusal(self.path), got or "%s: aiter root '/opt/aiter': "
                                 "No such file or directory" % self.path)

    def test_malformed(self):
        for text in ["", "{", '{"schema": ', "[1, 2]", "1", '"x"', "null", "\ufeff{}",
                     "{} trailing", '{"a": tru}', '{"a": 01}', '{"a": "\\x"}',
                     '{"a": "\t"}', '{"a" 1}', '{,}', "[" * 64 + "]" * 63, "\\", '"\\']:
            self.assertIsNotNone(self.refusal(text), repr(text))
        with open(self.path, "wb") as f:
            f.write(b'{"a": "\xff"}')
        with self.assertRaises(aiter_probe.ManifestError):
            aiter_probe.load(self.path)

    def test_wrong_types_anywhere(self):
        """Every value of good.json (the plan's first two rows only) replaced by
        a value of each other type: refused with a ManifestError, or read;
        with the C reader's message."""
        doc = json.loads(json.dumps(self.good))
        doc["plans"]["mla_heads"] = doc["plans"]["mla_heads"][:2]
        spots = []

        def visit(node, trail):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for k, v in items:
                spots.append(trail + [k])
                if isinstance(v, (dict, list)):
                    visit(v, trail + [k])

        visit(doc, [])
        for trail in spots:
            for value in (None, True, 7, -1, 2.5, "s", [], {}, [1], {"a": 1}):
                edited = json.loads(json.dumps(doc))
                at = edited
                for k in trail[:-1]:
                    at = at[k]
                if type(at[trail[-1]]) is type(value) and not isinstance(value, (list, dict)):
                    continue
                at[trail[-1]] = value
                got = self.refusal(json.dumps(edited))
                if HAVE_AP:
                    self.assertEqual(c_refusal(self.path), got or "%s: aiter root '/opt/aiter': "
                                     "No such file or directory" % self.path, trail)
        self.assertGreater(len(spots), 50)

    def test_not_regular_or_too_large(self):
        """A FIFO would block, /dev/zero be read for ever (behind a symlink,
        it is not even looked at); a file past the cap is refused unread. The
        C reader says the same."""
        fifo, zero, big, folder = (os.path.join(self.tmp, n)
                                   for n in ("fifo", "zero", "big", "folder"))
        os.mkfifo(fifo)
        os.mkdir(folder)
        os.symlink("/dev/zero", zero)
        with open(big, "wb") as f:
            f.truncate(aiter_probe.MANIFEST_MAX_BYTES + 1)
        for path, message in [(fifo, "not a regular file (a FIFO)"),
                              (zero, "not trusted: it is a symlink"),
                              ("/dev/zero", "not trusted: it is writable by others"),
                              (folder, "not a regular file (a folder)"),
                              (big, "larger than 64 MiB, the limit for a manifest")]:
            with self.assertRaises(aiter_probe.ManifestError) as cm:
                aiter_probe.load(path)
            self.assertEqual(str(cm.exception), "%s: %s" % (path, message))
            if HAVE_AP:
                self.assertEqual(c_refusal(path), str(cm.exception))

    def test_untrusted(self):
        """Only what no one but the reading user and root could have written
        is trusted: the file and its folder; the C reader says the same."""
        path = os.path.join(self.tmp, "m.json")
        link = os.path.join(self.tmp, "link.json")
        with open(path, "w") as f:
            json.dump(self.good, f)
        os.symlink("m.json", link)
        cases = [(path, 0o664, path, "it is writable by its group"),
                 (path, 0o646, path, "it is writable by others"),
                 (self.tmp, 0o1777, path, "its folder %s is writable by others" % self.tmp),
                 (self.tmp, 0o770, path, "its folder %s is writable by its group" % self.tmp),
                 (None, None, link, "it is a symlink")]
        if os.geteuid() == 0:
            cases.append((path, -65534, path, "it is owned by uid 65534, neither the reading "
                                              "user (uid 0) nor root"))
        for what, mode, read, why in cases:
            os.chmod(path, 0o644)
            os.chmod(self.tmp, 0o700)
            os.chown(path, os.geteuid(), -1)
            if mode is not None and mode < 0:
                os.chown(what, -mode, -1)
            elif mode is not None:
                os.chmod(what, mode)
            with self.assertRaises(aiter_probe.ManifestError) as cm:
                aiter_probe.load(read)
            self.assertEqual(str(cm.exception), "%s: not trusted: %s" % (read, why))
            if HAVE_AP:
                self.assertEqual(c_refusal(read), str(cm.exception))
        os.chown(path, os.geteuid(), -1)
        os.chmod(path, 0o644)
        os.chmod(self.tmp, 0o700)

    def test_recursion_deep_in_the_caller(self):
        """Even when load() is called near the recursion limit."""
        self.write(json.dumps(self.good))
        limit = sys.getrecursionlimit()

        def deep(n):
            if n == 0:
                try:
                    aiter_probe.load(self.path)
                except aiter_probe.ManifestError:
                    pass
                return
            deep(n - 1)
        try:
            sys.setrecursionlimit(200)
            deep(150)
        finally:
            sys.setrecursionlimit(limit)


class FreshnessTest(unittest.TestCase):
    def setUp(self):
        self.tree = TreeCopy()

    def tearDown(self):
        self.tree.close()

    def test_fresh(self):
        m = aiter_probe.load(self.tree.path, verify_fresh=True)
        self.assertEqual(m.stale_inputs(), [])

    def test_changed(self):
        with open(self.tree.file(RED), "a") as f:
            f.write("// more\n")
        with self.assertRaises(aiter_probe.StaleManifestError) as cm:
            aiter_probe.load(self.tree.path, verify_fresh=True)
        self.assertEqual(str(cm.exception), "%s: stale: %s changed" % (self.tree.path, RED))
        self.assertEqual(cm.exception.stale, [(RED, "changed")])
        # Without verify_fresh it loads.
        self.assertEqual(aiter_probe.load(self.tree.path).stale_inputs(), [(RED, "changed")])

    def test_vanished_and_appeared(self):
        os.unlink(self.tree.file(META))
        open(self.tree.file("csrc/kernels/mla/reduce_v2.cu"), "w").close()
        m = aiter_probe.load(self.tree.path)
        self.assertEqual(m.stale_inputs(), [("csrc/kernels/mla/reduce_v2.cu", "appeared"),
                                            (META, "vanished")])

    def test_stale_manifest(self):
        stale = TreeCopy("stale.json")
        try:
            with self.assertRaises(aiter_probe.StaleManifestError) as cm:
                aiter_probe.load(stale.path, verify_fresh=True)
            self.assertEqual(cm.exception.stale, [(META, "changed")])
        finally:
            stale.close()

    def test_outside_symlink_and_fifo(self):
        outside = os.path.join(self.tree.dir, "outside.cuh")
        shutil.copy(self.tree.file(META), outside)
        os.unlink(self.tree.file(META))
        os.symlink(outside, self.tree.file(META))
        os.unlink(self.tree.file(RED))
        os.mkfifo(self.tree.file(RED))
        m = aiter_probe.load(self.tree.path)
        self.assertEqual(m.stale_inputs(), [(RED, "changed"), (META, "changed")])

    def test_nothing_read(self):
        later = self.tree.file("csrc/kernels/mla/reduce_v2.cu")
        os.mkdir(later)
        self.assertEqual(aiter_probe.load(self.tree.path).stale_inputs(), [])
        os.rmdir(later)
        os.symlink(os.path.join(self.tree.dir, "m.json"), later)
        self.assertEqual(aiter_probe.load(self.tree.path).stale_inputs(), [])

    def test_tampered_paths(self):
        with open(self.tree.path) as f:
            data = json.load(f)
        for path, why in [("/etc/passwd", "absolute path"), ("csrc/../../x", "'..' component"),
                          ("", "empty path")]:
            data["inputs"][1]["path"] = path
            self.tree.write(data)
            with self.assertRaises(aiter_probe.ManifestError) as cm:
                aiter_probe.load(self.tree.path, verify_fresh=True)
            self.assertNotIsInstance(cm.exception, aiter_probe.StaleManifestError)
            self.assertEqual(str(cm.exception), "%s: inputs[1].path '%s' is refused: %s"
                             % (self.tree.path, path, why))

    def test_unreadable_input(self):
        # A file read in the scan that became a symlink loop: changed, not
        # an error, in both readers.
        os.unlink(self.tree.file(RED))
        os.symlink(os.path.basename(RED), self.tree.file(RED))
        with self.assertRaises(aiter_probe.StaleManifestError) as cm:
            aiter_probe.load(self.tree.path, verify_fresh=True)
        self.assertEqual(cm.exception.stale, [(RED, "changed")])
        self.assertStale(aiter_probe.load(self.tree.path), [(RED, "changed")])

    def assertStale(self, m, want, msg=None):
        """m.stale_inputs() is want, and the C reader (aiter-probe verify) agrees."""
        self.assertEqual(m.stale_inputs(), want, msg)
        if HAVE_AP:
            run = subprocess.run([AP, "verify", m.path], stdout=subprocess.PIPE,
                                 universal_newlines=True)
            self.assertEqual(run.returncode, 1 if want else 0, msg)
            lines = run.stdout.splitlines()[1:]
            self.assertEqual([tuple(reversed(line.split())) for line in lines], want, msg)

    def test_symlink_loops(self):
        red = self.tree.file(RED)
        os.unlink(red)
        os.symlink("reduce.b", red)
        os.symlink("reduce.cu", red[:-len("cu")] + "b")
        self.assertStale(aiter_probe.load(self.tree.path), [(RED, "changed")])
        # Through a folder that leads to itself: every input under it.
        os.unlink(red)
        shutil.copy(self.tree.file(META), red)
        kernels = self.tree.file("csrc/kernels")
        os.rename(os.path.join(kernels, "mla"), os.path.join(kernels, "mla.d"))
        os.symlink("mla/../mla", os.path.join(kernels, "mla"))
        m = aiter_probe.load(self.tree.path)
        stale = m.stale_inputs()
        self.assertIn((RED, "changed"), stale)
        self.assertStale(m, stale)

    @unittest.skipUnless(HAVE_AP, "needs the aiter-probe program")
    def test_unread_inputs_verify_by_what_was_seen(self):
        # Inputs the scan could not read verify fresh while they stay what
        # they were, and stale when that changes (both readers).
        root = tempfile.mkdtemp(prefix="ap-test-seen-")
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "csrc"))
        os.symlink("b.cu", os.path.join(root, "csrc", "a.cu"))
        os.symlink("a.cu", os.path.join(root, "csrc", "b.cu"))
        os.makedirs(os.path.join(root, "csrc", "d.cu"))
        pack = os.path.join(root, "pack.yaml")
        with open(pack, "w") as f:
            f.write("rules:\n  - {id: a, file: csrc/a.cu, literal: x}\n"
                    "  - {id: d, file: csrc/d.cu, literal: x}\n")
        out = os.path.join(root, "m.json")
        subprocess.run([AP, "scan", "--aiter-root", root, "--no-default-rules", "--rules", pack,
                        "--no-launch", "-o", out], check=True)
        m = aiter_probe.load(out)
        self.assertEqual([(i["path"], i.get("seen")) for i in m.data["inputs"]][:2],
                         [("csrc/a.cu", "loop"), ("csrc/d.cu", "folder")])
        self.assertStale(m, [])
        os.rmdir(os.path.join(root, "csrc", "d.cu"))
        os.mkfifo(os.path.join(root, "csrc", "d.cu"))
        self.assertStale(m, [("csrc/d.cu", "changed")])

    def test_symlinks_out_and_back_in(self):
        red = self.tree.file(RED)
        kept = self.tree.file("csrc/kernels/kept.cu")
        shutil.copy(red, kept)
        outside = os.path.join(self.tree.dir, "outside.cu")
        shutil.copy(red, outside)
        m = aiter_probe.load(self.tree.path)
        for target, want in [
            (outside, [(RED, "changed")]),                        # absolute, out
            ("../../../../outside.cu", [(RED, "changed")]),       # '..' past the root
            (os.path.join(self.tree.dir, "gone.cu"), [(RED, "vanished")]),
            ("../../../../gone.cu", [(RED, "vanished")]),
            (kept, []),                                           # absolute, in
            ("../kept.cu", []),
            ("../../../../tree/csrc/kernels/kept.cu", []),        # out and back in
            ("metadata/../../kept.cu", []),
            ("../../kernels/../kernels/mla/../kept.cu", []),
        ]:
            os.unlink(red)
            os.symlink(target, red)
            self.assertStale(m, want, target)
        # A folder on the way that is a symlink out.
        os.unlink(red)
        shutil.copy(kept, red)
        mla = self.tree.file("csrc/kernels/mla")
        out_dir = os.path.join(self.tree.dir, "mla-outside")
        os.rename(mla, out_dir)
        os.symlink(out_dir, mla)
        self.assertStale(m, [(RED, "changed"), (META, "changed")])
        os.unlink(mla)
        os.symlink("../../../mla-outside", mla)
        self.assertStale(m, [(RED, "changed"), (META, "changed")])

    def test_fifo_on_the_way(self):
        metadata = self.tree.file("csrc/kernels/mla/metadata")
        shutil.rmtree(metadata)
        os.mkfifo(metadata)
        start = time.monotonic()
        self.assertStale(aiter_probe.load(self.tree.path), [(META, "vanished")])
        self.assertLess(time.monotonic() - start, 5)

    def listing_manifest(self, rel, text):
        with open(self.tree.path) as f:
            data = json.load(f)
        data["inputs"].append({"path": rel, "bytes": len(text),
                               "sha256": hashlib.sha256(text).hexdigest()})
        self.tree.write(data)
        return aiter_probe.load(self.tree.path)

    def test_listing(self):
        m = self.listing_manifest("csrc/kernels/mla/", b"metadata/\nreduce.cu\n")
        self.assertStale(m, [])
        mla = self.tree.file("csrc/kernels/mla")
        os.rename(mla, mla + ".d")
        # Files are read through a symlink inside the root; a listing never is.
        os.symlink("mla.d", mla)
        self.assertStale(m, [("csrc/kernels/mla/", "changed")])
        os.unlink(mla)
        os.mkfifo(mla)
        self.assertStale(m, [(RED, "vanished"), (META, "vanished"),
                             ("csrc/kernels/mla/", "changed")])

    def test_race_folder_swapped_for_symlink_out(self):
        """A thread swaps csrc/kernels/mla for a symlink to an outside folder
        that holds what the manifest recorded, 2,000 times, while freshness is
        checked in a loop: the inside files differ, so a reader that stays
        beneath the root never finds them fresh."""
        mla = self.tree.file("csrc/kernels/mla")
        outside = os.path.join(self.tree.dir, "outside-mla")
        shutil.copytree(mla, outside)
        open(os.path.join(outside, "extra.cu"), "w").close()
        m = self.listing_manifest("csrc/kernels/mla/", b"extra.cu\nmetadata/\nreduce.cu\n")
        for rel in (RED, META):
            with open(self.tree.file(rel), "a") as f:
                f.write("// inside\n")
        watched = {RED, META, "csrc/kernels/mla/"}
        stash, link = mla + ".real", mla + ".link"
        os.symlink(outside, link)

        def swap():
            for _ in range(2000):
                os.rename(mla, stash)
                os.rename(link, mla)
                os.rename(mla, link)
                os.rename(stash, mla)

        swapper = threading.Thread(target=swap)
        checks = 0
        start = time.monotonic()
        swapper.start()
        try:
            while swapper.is_alive() and time.monotonic() - start < 20:
                stale = {path for path, _ in m.stale_inputs()}
                self.assertEqual(stale & watched, watched, "an outside file was read as fresh")
                checks += 1
        finally:
            swapper.join()
        self.assertGreater(checks, 0)

    def test_missing_root(self):
        shutil.rmtree(self.tree.root)
        with self.assertRaises(aiter_probe.ManifestError) as cm:
            aiter_probe.load(self.tree.path, verify_fresh=True)
        self.assertEqual(str(cm.exception), "%s: aiter root '%s': No such file or directory"
                         % (self.tree.path, self.tree.root))

    @unittest.skipUnless(BUILDDIR and os.path.exists(os.path.join(BUILDDIR or "", "aiter-probe")),
                         "aiter-probe is not built")
    def test_agrees_with_the_command(self):
        os.unlink(self.tree.file(META))
        with open(self.tree.file(RED), "a") as f:
            f.write("\n")
        open(self.tree.file("csrc/kernels/mla/reduce_v2.cu"), "w").close()
        run = subprocess.run([os.path.join(BUILDDIR, "aiter-probe"), "verify", self.tree.path],
                             stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(run.returncode, 1)
        from_command = [tuple(reversed(line.split())) for line in run.stdout.splitlines()[1:]]
        self.assertEqual(aiter_probe.load(self.tree.path).stale_inputs(), from_command)


def route_mla_decode(m, heads):
    """What a serving backend does at start-up: 24 heads run natively when
    the capability holds; otherwise the query is padded to a multiple of 16,
    tiled, and the first `heads` outputs are kept."""
    if heads == 24 and m.supported("mla.decode.native_h24"):
        return 24, "none"
    launch = -(-heads // 16) * 16
    if launch == heads:
        return heads, "none"
    return launch, "repeat-interleave" if 16 % heads == 0 else "tile-slice"


def decode(q_heads):
    """Stands in for the kernel: each head's output depends on its query only."""
    return [h * 3 + 1 for h in q_heads]


class ServingBackendTest(unittest.TestCase):
    def test_route_24_heads(self):
        for name, want in [("good.json", (24, "none")), ("second.json", (32, "tile-slice"))]:
            m = aiter_probe.load(manifest(name))
            launch, mode = route_mla_decode(m, 24)
            self.assertEqual((launch, mode), want, name)
            # The manifest's plan gives the same routing by table lookup.
            self.assertEqual(m.launch_heads(24)[:2], (launch, mode), name)
            q = list(range(100, 124))
            if mode == "tile-slice":
                tiled = (q * (launch // len(q) + 1))[:launch]
                out = decode(tiled)[:24]
            else:
                out = decode(q)
            self.assertEqual(out, decode(q), name)

    def test_plan_matches_routing_for_every_head_count(self):
        for name in ("good.json", "second.json"):
            m = aiter_probe.load(manifest(name))
            for heads in range(1, 129):
                self.assertEqual(m.launch_heads(heads)[:2], route_mla_decode(m, heads),
                                 "%s, %d heads" % (name, heads))


if __name__ == "__main__":
    unittest.main(verbosity=2)
