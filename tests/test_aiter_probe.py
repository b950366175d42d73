"""The Python reader: loading, lookups, freshness, refusals, agreement with
the aiter-probe command, and how a serving backend routes 24 heads."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
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

    def test_unknown_ids(self):
        m = aiter_probe.load(manifest("good.json"))
        with self.assertRaisesRegex(KeyError, "unknown capability 'mla.nope'"):
            m.supported("mla.nope")
        with self.assertRaisesRegex(KeyError, "unknown rule 'mla.nope'"):
            m.rule_status("mla.nope")
        with self.assertRaisesRegex(KeyError, "plans.mla_heads has no row for 129 heads"):
            m.launch_heads(129)

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
             "error (not 'maybe')"),
            (lambda d: d["rules"]["mla.reduce.cases"]["matches"][2]["captures"]
             .__setitem__("heads", 24),
             "'rules[\"mla.reduce.cases\"].matches[2].captures.heads' must be a string"),
            (lambda d: d["capabilities"]["mla.decode.native_h24"].__setitem__("supported", 1),
             "'capabilities[\"mla.decode.native_h24\"].supported' must be true or false"),
            (lambda d: d["plans"]["mla_heads"][23].__setitem__("mode", "pad"),
             "'plans.mla_heads[23].mode' must be one of none, repeat-interleave, tile-slice "
             "(not 'pad')"),
            (lambda d: d.pop("plans"), "missing key 'plans'"),
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
            with open(path, "w") as f:
                f.write('{"schema": "aiter-probe.manifest/1", "schema": "x"}')
            with self.assertRaisesRegex(aiter_probe.ManifestError, "duplicate object key 'schema'"):
                aiter_probe.load(path)


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
        os.unlink(self.tree.file(RED))
        os.symlink(os.path.basename(RED), self.tree.file(RED))
        with self.assertRaises(aiter_probe.ManifestError) as cm:
            aiter_probe.load(self.tree.path, verify_fresh=True)
        self.assertNotIsInstance(cm.exception, aiter_probe.StaleManifestError)
        self.assertEqual(str(cm.exception), "%s: input '%s': Too many levels of symbolic links"
                         % (self.tree.path, RED))

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
