# SPDX-License-Identifier: MIT
"""The saved manifest of this interpreter's AITER (aiter_probe.installed) and
the backend adapter (aiter_probe.backend): where the manifest is, when it is
refused and why, the scan in process when there is none (through the
build's libaiter-probe), every decision with and without one, the log line;
once per process, from many threads, and after fork."""

import importlib
import io
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest

SRCDIR = os.environ["AP_SRCDIR"]
BUILDDIR = os.environ.get("AP_BUILDDIR")
sys.path.insert(0, os.path.join(SRCDIR, "python"))

import aiter_probe  # noqa: E402
from aiter_probe import backend  # noqa: E402
from aiter_probe.backend import Backend, for_this_process  # noqa: E402
from aiter_probe.discover import meta_folder  # noqa: E402

AP = os.path.join(BUILDDIR or "", "aiter-probe")
HAVE_AP = bool(BUILDDIR) and os.path.exists(AP)
NEEDS_AP = "needs the aiter-probe build (AP_BUILDDIR)"
SAMPLE = os.path.join(SRCDIR, "sample", "aiter-root")
ENV_VARS = ("AITER_PROBE_MANIFEST", "AITER_PROBE_MANIFEST_DIR", "XDG_CACHE_HOME", "HOME",
            "AITER_META_DIR", "AITER_PROBE_LIBRARY", "AITER_PROBE_DATADIR")
# The engine, as make builds it (the package's own is pip's: package.sh).
# Instrumented (AP_SAN), it loads only into a process whose first library is
# the sanitizer's runtime: not this interpreter.
LIBRARY = os.path.join(BUILDDIR or "", ".libs", "libaiter-probe.so")
HAVE_LIBRARY = bool(BUILDDIR) and os.path.exists(LIBRARY) and not os.environ.get("AP_SAN")
NEEDS_LIBRARY = "needs the build's libaiter-probe (AP_BUILDDIR), not a sanitizer build"
NO_FOLDER = ("no folder for saved manifests: set AITER_PROBE_MANIFEST_DIR, XDG_CACHE_HOME "
             "or HOME")


def golden(tree):
    return aiter_probe.load(os.path.join(SRCDIR, "tests", "golden", tree + ".json"))


class Env(unittest.TestCase):
    """Each test with its own environment and sys.path, restored after."""

    def setUp(self):
        saved = {k: os.environ.get(k) for k in ENV_VARS}
        path = list(sys.path)

        def restore():
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            sys.path[:] = path
            importlib.invalidate_caches()
        self.addCleanup(restore)
        for k in ENV_VARS:
            os.environ.pop(k, None)
        self.dir = tempfile.mkdtemp(prefix="ap-test-backend-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.saved = os.path.join(self.dir, "saved")
        os.environ["AITER_PROBE_MANIFEST_DIR"] = self.saved
        # No engine unless a test gives one (with_engine): the saved
        # manifest's answers, or the conservative ones.
        self.no_engine = os.path.join(self.dir, "no-engine.so")
        os.environ["AITER_PROBE_LIBRARY"] = self.no_engine
        backend._forget()
        self.addCleanup(backend._forget)

    def with_engine(self):
        os.environ["AITER_PROBE_LIBRARY"] = LIBRARY
        os.environ["AITER_PROBE_DATADIR"] = SRCDIR

    def engine_fails(self, reason):
        """reason, and the engine's, as the conservative answers give them."""
        return "%s; and cannot load the engine %s: %s: cannot open shared object file: No " \
               "such file or directory" % (reason, self.no_engine, self.no_engine)

    def tree(self, name="root"):
        """A copy of the sample tree that this interpreter imports aiter from."""
        root = os.path.join(self.dir, name)
        shutil.copytree(SAMPLE, root)
        sys.path.insert(0, root)
        importlib.invalidate_caches()
        return root

    def scan(self, root, *args):
        env = dict(os.environ, AITER_PROBE_DATADIR=SRCDIR, SOURCE_DATE_EPOCH="0")
        run = subprocess.run([AP, "scan", "--aiter-root", root, "--no-launch"] + list(args),
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout.decode().strip()


class DefaultPathTest(Env):
    def test_name_is_the_roots_digest(self):
        # The C side pins the same name (tests/capi/api-saved.c).
        self.assertEqual(aiter_probe.default_manifest_path("/"),
                         self.saved + "/aiter-8a5edab282632443.json")
        os.environ["AITER_PROBE_MANIFEST_DIR"] = self.saved + "/"
        self.assertEqual(aiter_probe.default_manifest_path("/"),
                         self.saved + "/aiter-8a5edab282632443.json")

    def test_folder_precedence(self):
        os.environ["XDG_CACHE_HOME"] = "/xdg/"
        os.environ["HOME"] = "/home/u"
        self.assertEqual(aiter_probe.default_manifest_path("/"),
                         self.saved + "/aiter-8a5edab282632443.json")
        os.environ["AITER_PROBE_MANIFEST_DIR"] = ""
        self.assertEqual(aiter_probe.default_manifest_path("/"),
                         "/xdg//aiter-probe/aiter-8a5edab282632443.json")
        os.environ["XDG_CACHE_HOME"] = "cache"
        self.assertEqual(aiter_probe.default_manifest_path("/"),
                         "/home/u/.cache/aiter-probe/aiter-8a5edab282632443.json")
        os.environ["HOME"] = "relhome"
        self.assertIsNone(aiter_probe.default_manifest_path("/"))
        del os.environ["HOME"]
        self.assertIsNone(aiter_probe.default_manifest_path("/"))

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_same_as_scan_save(self):
        root = self.tree()
        path = self.scan(root, "--save")
        self.assertEqual(path, aiter_probe.default_manifest_path(os.path.realpath(root)))
        self.assertTrue(os.path.isfile(path))


class ForInstalledAiterTest(Env):
    def test_not_installed(self):
        sys.path[:] = [p for p in sys.path if not os.path.exists(os.path.join(p, "aiter"))]
        importlib.invalidate_caches()
        self.assertEqual(aiter_probe.for_installed_aiter(),
                         (None, "aiter is not installed for this interpreter"))

    def test_no_folder(self):
        self.tree()
        del os.environ["AITER_PROBE_MANIFEST_DIR"]
        self.assertEqual(aiter_probe.for_installed_aiter(), (None, NO_FOLDER))

    def test_relative_folder(self):
        # Relative, it would be another folder in each working directory.
        self.tree()
        os.environ["AITER_PROBE_MANIFEST_DIR"] = "rel"
        self.assertIsNone(aiter_probe.default_manifest_path("/"))
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "AITER_PROBE_MANIFEST_DIR must be an absolute path, not 'rel'"))

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_saved_through_a_linked_home(self):
        root = self.tree()
        del os.environ["AITER_PROBE_MANIFEST_DIR"]
        real = os.path.join(self.dir, "real-home")
        os.mkdir(real)
        os.environ["HOME"] = os.path.join(self.dir, "home")
        os.symlink(real, os.environ["HOME"])
        path = self.scan(root, "--save")
        m, why = aiter_probe.for_installed_aiter()
        self.assertEqual((m and m.path, why), (path, None))

    def test_no_manifest(self):
        root = self.tree()
        path = aiter_probe.default_manifest_path(os.path.realpath(root))
        self.assertEqual(aiter_probe.for_installed_aiter(),
                         (None, "no manifest at %s: run 'aiter-probe scan --save'" % path))

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_fresh_then_stale(self):
        root = self.tree()
        path = self.scan(root, "--save")
        m, why = aiter_probe.for_installed_aiter()
        self.assertIsNone(why)
        self.assertEqual((m.path, m.root), (path, os.path.realpath(root)))
        with open(os.path.join(root, "aiter", "mla.py"), "a") as f:
            f.write("# changed\n")
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "%s is stale: aiter/mla.py changed: run 'aiter-probe scan --save'" % path))

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_other_sources_are_another_aiter(self):
        root = self.tree()
        path = self.scan(root, "--save")
        other = os.path.join(self.dir, "other-meta")
        shutil.copytree(SAMPLE, other)
        os.environ["AITER_META_DIR"] = other
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "%s was made for the AITER sources in %s, this interpreter's aiter builds "
            "from %s" % (path, os.path.realpath(root), other)))
        os.environ["AITER_META_DIR"] = root
        m, why = aiter_probe.for_installed_aiter()
        self.assertEqual((m and m.path, why), (path, None))

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_root_through_a_symlink(self):
        root = self.tree("real")
        sys.path.remove(root)
        link = os.path.join(self.dir, "link")
        os.symlink(root, link)
        sys.path.insert(0, link)
        importlib.invalidate_caches()
        path = self.scan(link, "--save")
        m, why = aiter_probe.for_installed_aiter()
        self.assertEqual((m and m.path, why), (path, None))

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_planted_in_a_shared_folder(self):
        """A manifest another user could have written in a folder anyone may
        write (mode 1777) is refused, saying why, and the backend takes the
        conservative answers with one warning."""
        root = self.tree()
        path = self.scan(root, "--save")
        os.chmod(self.saved, 0o1777)
        why = "%s: not trusted: its folder %s is writable by others" % (path, self.saved)
        self.assertEqual(aiter_probe.for_installed_aiter(), (None, why))
        with LogCapture() as log:
            b = for_this_process()
        self.assertIs(b.mla_decode_native_24_heads(), False)
        self.assertEqual(log.lines(), ["no AITER capability manifest, so every AITER decision "
                                       "takes the conservative answer: "
                                       + self.engine_fails(why)])

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_named_by_environment(self):
        other = self.tree("other")
        sys.path.remove(other)
        root = self.tree()
        named = os.path.join(self.dir, "other.json")
        self.scan(other, "-o", named)
        os.environ["AITER_PROBE_MANIFEST"] = named
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "%s was made for %s, this interpreter imports aiter from %s"
            % (named, os.path.realpath(other), os.path.realpath(root))))
        self.scan(root, "-o", named)
        m, why = aiter_probe.for_installed_aiter()
        self.assertEqual((m and m.path, why), (named, None))
        os.unlink(os.path.join(root, "aiter", "ops", "gradlib.py"))
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "%s is stale: aiter/ops/gradlib.py vanished: run 'aiter-probe scan -o %s'"
            % (named, named)))
        missing = os.path.join(self.dir, "nowhere.json")
        os.environ["AITER_PROBE_MANIFEST"] = missing
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "no manifest at %s (AITER_PROBE_MANIFEST): run 'aiter-probe scan -o %s'"
            % (missing, missing)))

    @unittest.skipUnless(HAVE_AP, NEEDS_AP)
    def test_made_for_another_interpreter(self):
        root = self.tree()
        path = self.scan(root, "--save")
        with open(path) as f:
            doc = json.load(f)
        v = sys.version_info
        here = {"executable": sys.executable, "version": "%d.%d.%d" % v[:3],
                "releaselevel": v.releaselevel, "platform": sys.platform, "os_name": os.name,
                "finds": {"json": True, "json.decoder": True, "no_such_module_here": False}}

        def record(python):
            doc["python"] = python
            with open(path, "w") as f:
                json.dump(doc, f)

        # What the answers read is what this interpreter gives: accepted.
        record(here)
        m, why = aiter_probe.for_installed_aiter()
        self.assertEqual((m and m.path, why), (path, None))
        record(dict(here, version="%d.%d" % v[:2]))
        self.assertIsNone(aiter_probe.for_installed_aiter()[1])
        record(dict(here, version="2.7.18", platform="win32",
                    finds={"json": False, "no_such_module_here": True}))
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "%s was made for another interpreter (version 2.7.18 when scanned, now "
            "%d.%d.%d, platform win32 when scanned, now %s, finds json: no when scanned, now "
            "yes, finds no_such_module_here: yes when scanned, now no): run 'aiter-probe scan "
            "--save --python %s'" % ((path,) + tuple(v[:3]) + (sys.platform, sys.executable))))

    def test_unreadable_manifest(self):
        root = self.tree()
        path = aiter_probe.default_manifest_path(os.path.realpath(root))
        os.makedirs(self.saved)
        with open(path, "w") as f:
            f.write("{")
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "%s:1:2: Expecting property name enclosed in double quotes" % path))

    def test_made_for_another_tree(self):
        root = os.path.realpath(self.tree())
        path = aiter_probe.default_manifest_path(root)
        os.makedirs(self.saved)
        shutil.copy(os.path.join(SRCDIR, "tests", "manifests", "good.json"), path)
        self.assertEqual(aiter_probe.for_installed_aiter(), (
            None, "%s was made for /opt/aiter, this interpreter imports aiter from %s"
            % (path, root)))


class LogCapture:
    """What the aiter_probe logger says at level and above."""

    def __init__(self, level=logging.WARNING):
        self.level = level

    def __enter__(self):
        self.stream = io.StringIO()
        self.handler = logging.StreamHandler(self.stream)
        logger = logging.getLogger("aiter_probe")
        logger.addHandler(self.handler)
        self.propagate, logger.propagate = logger.propagate, False
        self.was, _ = logger.level, logger.setLevel(self.level)
        return self

    def __exit__(self, *exc):
        logger = logging.getLogger("aiter_probe")
        logger.removeHandler(self.handler)
        logger.propagate = self.propagate
        logger.setLevel(self.was)

    def lines(self):
        return self.stream.getvalue().splitlines()


def quiet(reason):
    """A Backend without a manifest whose log line is not printed."""
    with LogCapture():
        return Backend(None, reason)


class ConservativeTest(unittest.TestCase):
    def test_logged_once(self):
        reason = "no manifest at /x/aiter-0.json: run 'aiter-probe scan --save'"
        with LogCapture() as log:
            Backend(None, reason)
            Backend(None, reason)
        self.assertEqual(log.lines(), [
            "no AITER capability manifest, so every AITER decision takes the conservative "
            "answer: no manifest at /x/aiter-0.json: run 'aiter-probe scan --save'"])

    def test_answers(self):
        b = quiet("test reason")
        for name in ("mla_decode_native_24_heads", "mla_reducer_24_heads_512",
                     "mla_planner_24_heads", "mla_prefill_fp8_persistent",
                     "gluon_mla_decode_small_heads", "mla_decode_segmented", "fused_moe_gate_mode",
                     "fused_moe_dsv4_shared_expert", "topk_softmax_shared_experts", "hipb_mm",
                     "qr_all_reduce_rmsnorm", "vllm_calls_bind"):
            self.assertIs(getattr(b, name)(), False, name)
        self.assertEqual(b.gluon_mla_decode_max_heads(), 16)
        self.assertEqual(b.mla_decode_fwd_keywords(), frozenset())
        self.assertEqual(b.reducer_cases(), frozenset())
        self.assertEqual(b.ps_lse_qlens("gfx950"), frozenset({1, 4}))
        self.assertEqual(b.ps_lse_qlens("gfx942"), frozenset())
        self.assertEqual(b.why("mla_decode_native_24_heads"),
                         "mla.decode.native_h24: no manifest (test reason)")
        self.assertEqual(b.why("mla_reducer_24_heads_512"),
                         "mla.reduce.native_h24_d512: no manifest (test reason)")
        self.assertEqual(b.why("gluon_mla_decode_max_heads"),
                         "mla.gluon_decode.max_heads: no manifest (test reason)")
        self.assertEqual(b.why("mla_decode_fwd_keywords"),
                         "mla.decode_fwd.fp8_scales: no manifest (test reason); "
                         "mla.decode_fwd.causal: no manifest (test reason); "
                         "mla.decode_fwd.return_lse: no manifest (test reason)")
        self.assertEqual(b.why("ps_lse_qlens", "gfx942"),
                         "mla.asm.gfx942.bf16_decode_rows: no manifest (test reason)")

    def test_launch_heads_as_vllm_pads(self):
        b = quiet("test reason")
        self.assertEqual(b.mla_launch_heads(24), (32, "tile-slice"))
        self.assertEqual(b.why("mla_launch_heads", 24),
                         "24 heads launch as 32 (tile-slice), as vLLM pads: no manifest "
                         "(test reason)")
        self.assertEqual(b.mla_launch_heads(8), (16, "repeat-interleave"))
        self.assertEqual(b.mla_launch_heads(12), (16, "tile-slice"))
        self.assertEqual(b.mla_launch_heads(16), (16, "none"))
        self.assertEqual(b.mla_launch_heads(144), (144, "none"))
        self.assertEqual(b.mla_pad_index(8), [j // 2 for j in range(16)])
        self.assertEqual(b.mla_unpad_index(8), list(range(0, 16, 2)))
        self.assertEqual(b.mla_pad_index(24), list(range(24)) + list(range(8)))
        self.assertEqual(b.mla_unpad_index(24), list(range(24)))
        self.assertIsNone(b.mla_pad_index(32))
        self.assertIsNone(b.mla_unpad_index(32))

    def test_every_head_count_round_trips(self):
        for b in (quiet("test reason"), Backend(golden("h24-native")),
                  Backend(golden("h24-missing"))):
            for h in range(1, 129):
                launch, mode = b.mla_launch_heads(h)
                pad, unpad = b.mla_pad_index(h), b.mla_unpad_index(h)
                if mode == "none":
                    self.assertEqual((launch, pad, unpad), (h, None, None))
                    continue
                self.assertEqual((len(pad), len(unpad)), (launch, h))
                self.assertEqual([pad[i] for i in unpad], list(range(h)), (h, mode))
                self.assertEqual(launch % 16, 0)

    def test_refused_head_counts(self):
        b = quiet("test reason")
        for bad, error in ((0, ValueError), (129, ValueError), (-16, ValueError),
                           (True, TypeError), (24.0, TypeError)):
            with self.assertRaises(error):
                b.mla_launch_heads(bad)
        with self.assertRaisesRegex(ValueError, "MLA decode takes 1 to 128 heads or a multiple "
                                    "of 16, not 129"):
            b.mla_launch_heads(129)

    def test_why(self):
        b = quiet("test reason")
        with self.assertRaisesRegex(KeyError, "no decision named 'frobnicate'"):
            b.why("frobnicate")
        with self.assertRaisesRegex(KeyError, "no decision named 'why'"):
            b.why("why")
        with self.assertRaisesRegex(KeyError, "no decision named 'answer'"):
            b.why("answer")
        with self.assertRaisesRegex(KeyError, "no decision named '_rule'"):
            b.why("_rule", "x", "y")
        # The decision's own arguments, or its own TypeError: no answer is
        # remembered to give instead.
        with self.assertRaisesRegex(TypeError, "heads"):
            b.why("mla_launch_heads")
        self.assertEqual(b.answer("mla_launch_heads", 8), (
            (16, "repeat-interleave"),
            "8 heads launch as 16 (repeat-interleave), as vLLM pads: no manifest (test reason)"))
        self.assertEqual(b.why("mla_pad_index", 8), b.why("mla_launch_heads", 8))
        self.assertEqual(b.answer("hipb_mm"), (False, "aiter.hipb_mm: no manifest (test reason)"))

    def test_each_thread_its_own_reason(self):
        """One Backend shared by threads, each asking about its own head count
        and arch at once: each gets the reason of its own question."""
        b = Backend(golden("h24-native"))
        asks = [("mla_launch_heads", h) for h in (1, 5, 8, 12, 24, 48, 64, 100)] + [
            ("ps_lse_qlens", arch) for arch in ("gfx950", "gfx942")]
        want = {ask: b.answer(*ask) for ask in asks}
        self.assertEqual(len(set(r for _, r in want.values())), len(asks))
        start, wrong = threading.Barrier(len(asks)), []
        # Threads switch between any two bytecodes, not every 5 ms.
        self.addCleanup(sys.setswitchinterval, sys.getswitchinterval())
        sys.setswitchinterval(1e-6)

        def ask(question):
            start.wait()
            for _ in range(300):
                got = b.answer(*question)
                # Another thread's answers in between must not change this one's.
                b.why(*asks[(asks.index(question) + 1) % len(asks)])
                if got != want[question] or b.why(*question) != want[question][1]:
                    wrong.append((question, got))
        threads = [threading.Thread(target=ask, args=(q,)) for q in asks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(wrong, [])


class FromManifestTest(unittest.TestCase):
    def test_native_h24_both_halves(self):
        b = Backend(golden("h24-reducer-only"))
        self.assertEqual((b.mla_decode_native_24_heads(), b.mla_reducer_24_heads_512(),
                          b.mla_planner_24_heads()),
                         (False, True, False))
        path = b.manifest.path
        self.assertEqual(b.why("mla_reducer_24_heads_512"),
                         "rule mla.reduce.native_h24_d512 matched "
                         "at csrc/kernels/mla/reduce.cu:14")
        self.assertEqual(b.why("mla_planner_24_heads"),
                         "rule mla.metadata.native_h24 did not match in "
                         "csrc/kernels/mla/metadata/v1_2_device.cuh")
        self.assertEqual(b.mla_launch_heads(24), (32, "tile-slice"))
        self.assertEqual(b.why("mla_launch_heads", 24), "24 heads launch as 32 (tile-slice): "
                         "plans.mla_heads of %s (not verified by a launch)" % path)
        b = Backend(golden("h24-native"))
        self.assertEqual((b.mla_decode_native_24_heads(), b.mla_reducer_24_heads_512(),
                          b.mla_planner_24_heads()),
                         (True, True, True))
        self.assertEqual(b.mla_launch_heads(24), (24, "none"))
        self.assertIsNone(b.mla_pad_index(24))

    def test_reducer_cases(self):
        b = Backend(golden("h24-native"))
        self.assertEqual(b.reducer_cases(), frozenset({
            (1, 128), (8, 512), (16, 512), (24, 512), (32, 512), (64, 64), (128, 512)}))
        self.assertEqual(b.why("reducer_cases"),
                         "rule mla.reduce.cases: 7 cases in csrc/kernels/mla/reduce.cu")
        # Two flag combinations of one case count once.
        self.assertEqual(Backend(golden("moved")).reducer_cases(),
                         frozenset({(16, 512), (24, 512), (128, 128)}))

    def test_a_pack_the_scan_lacked(self):
        # Fixture scans hold the MLA pack; the other capabilities are there
        # too, unsupported for want of files.
        m = golden("h24-native")
        del m.data["capabilities"]["aiter.hipb_mm"]
        b = Backend(m)
        self.assertIs(b.hipb_mm(), False)
        self.assertEqual(b.why("hipb_mm"), "aiter.hipb_mm: not in %s (scanned without its "
                         "pack)" % m.path)

    def test_a_plan_row_that_is_no_padding(self):
        # The reader refuses it, so a server starts without the manifest.
        m = golden("h24-native")
        for row in m.data["plans"]["mla_heads"]:
            if row["heads"] == 24:
                row.update(launch_heads=20, mode="tile-slice")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            with open(path, "w") as f:
                json.dump(m.data, f)
            with self.assertRaises(aiter_probe.ManifestError) as cm:
                aiter_probe.load(path)
        self.assertEqual(str(cm.exception), "%s: 'plans.mla_heads[23]' must have launch_heads "
                         "of at least heads (24), not 20" % path)
        # A head count the plan lacks is padded as vLLM pads.
        m = golden("h24-native")
        m.data["plans"]["mla_heads"] = [r for r in m.data["plans"]["mla_heads"]
                                        if r["heads"] != 5]
        b = Backend(m)
        self.assertEqual(b.mla_launch_heads(5), (16, "tile-slice"))
        self.assertEqual(b.why("mla_launch_heads", 5), "5 heads launch as 16 (tile-slice), as "
                         "vLLM pads: plans.mla_heads of %s has no row for 5 heads" % m.path)

    def test_gluon_bound(self):
        m = golden("h24-native")
        b = Backend(m)
        # No entry: nothing goes to Gluon (vLLM's 16 is for no manifest only).
        self.assertEqual(b.gluon_mla_decode_max_heads(), 0)
        self.assertEqual(b.why("gluon_mla_decode_max_heads"),
                         "rule mla.gluon_decode.max_heads is missing: "
                         "none of the files exists: aiter/ops/triton/gluon/mla_gluon.py, "
                         "aiter/ops/triton/gluon/mla_decode_gluon.py: no bound read, 0")
        self.assertIs(b.gluon_mla_decode_small_heads(), False)
        m.data["rules"]["mla.gluon_decode.max_heads"] = {
            "status": "matched", "file": "aiter/ops/triton/gluon/mla_gluon.py",
            "matches": [{"line": 9, "text": "assert nhead <= 8", "captures": {"heads": "8"}}]}
        b = Backend(m)
        self.assertEqual(b.gluon_mla_decode_max_heads(), 8)
        self.assertEqual(b.why("gluon_mla_decode_max_heads"),
                         "rule mla.gluon_decode.max_heads matched at "
                         "aiter/ops/triton/gluon/mla_gluon.py:9, bound 8")
        # An entry whose body bounds nothing (only nhead in (64, 128), as on
        # v0.1.14): vLLM's regex assumes 16 there and trips the assertion.
        m.data["rules"]["mla.gluon_decode.max_heads"]["matches"][0]["captures"]["heads"] = "0"
        b = Backend(m)
        self.assertEqual(b.gluon_mla_decode_max_heads(), 0)
        self.assertEqual(b.why("gluon_mla_decode_max_heads"),
                         "rule mla.gluon_decode.max_heads matched at "
                         "aiter/ops/triton/gluon/mla_gluon.py:9, bound 0")
        # A digit that int() refuses is no bound either, not a crash at start.
        m.data["rules"]["mla.gluon_decode.max_heads"]["matches"][0]["captures"]["heads"] = "\u00b2"
        b = Backend(m)
        self.assertEqual(b.gluon_mla_decode_max_heads(), 0)
        self.assertEqual(b.why("gluon_mla_decode_max_heads"),
                         "rule mla.gluon_decode.max_heads matched at "
                         "aiter/ops/triton/gluon/mla_gluon.py:9: no bound read, 0")

    def test_unknown_is_never_support(self):
        """A rule that ends unknown, with a match a hand left in: no decision
        counts it, and each says unknown."""
        m = golden("h24-native")
        reducer, cases = "mla.reduce.native_h24_d512", "mla.reduce.cases"
        qlens = "mla.asm.gfx950.bf16_decode_rows"
        m.data["rules"][qlens]["matches"] = [{"line": 2, "text": "x", "captures": {
            "gqa": "16", "ps": "1", "qlen": "4", "causal": "0", "lse": "1"}}]
        m.data["rules"]["mla.gluon_decode.max_heads"]["matches"] = [
            {"line": 9, "text": "x", "captures": {"heads": "16"}}]
        for rule in (reducer, cases, qlens, "mla.gluon_decode.max_heads"):
            m.data["rules"][rule]["status"] = "unknown"
            m.data["rules"][rule]["reason"] = "only a run decides"
        m.data["capabilities"]["mla.decode_fwd.causal"] = {
            "supported": False, "evidence": [],
            "reason": "unknown, so unsupported: rule mla.decode_fwd.params.causal is unknown: "
                      "aiter/mla.py: only a run decides"}
        b = Backend(m)
        self.assertIs(b.mla_reducer_24_heads_512(), False)
        self.assertEqual(b.why("mla_reducer_24_heads_512"),
                         "rule %s is unknown: only a run decides" % reducer)
        self.assertEqual(b.reducer_cases(), frozenset())
        self.assertEqual(b.why("reducer_cases"), "rule %s is unknown: only a run decides" % cases)
        self.assertEqual(b.ps_lse_qlens("gfx950"), frozenset())
        self.assertEqual(b.why("ps_lse_qlens", "gfx950"),
                         "rule %s is unknown: only a run decides: no query length" % qlens)
        self.assertEqual(b.gluon_mla_decode_max_heads(), 0)
        self.assertEqual(b.why("gluon_mla_decode_max_heads"),
                         "rule mla.gluon_decode.max_heads is unknown: "
                         "only a run decides: no bound read, 0")
        self.assertNotIn("causal", b.mla_decode_fwd_keywords())
        self.assertIn("mla.decode_fwd.causal not supported: unknown, so unsupported: rule "
                      "mla.decode_fwd.params.causal is unknown", b.why("mla_decode_fwd_keywords"))

    def test_lse_qlens_as_the_lookup_asks_causal_0(self):
        """The layout of v0.1.16 to v0.1.19.post2: the lookup asks causal 0
        (the table's rows say 0), pads 1 to 3 tokens to qSeqLen 4, folds 4
        to 7 onto Gqa 64 qSeqLen 1 and 8 on onto Gqa 32 qSeqLen 4 (only a
        causal-1 row here); a large batch of one token drops persistence and
        asks an LSE kernel without it, which the table lacks."""
        b = Backend(golden("mla-lookup-causal0"))
        self.assertEqual(b.ps_lse_qlens("gfx950"), frozenset(range(2, 8)))
        self.assertEqual(b.why("ps_lse_qlens", "gfx950"), (
            "causal, hsa/gfx950/mla/mla_asm.csv: 1 Gqa 16 qSeqLen 4 causal 0 lse 1 (line 3); "
            "1 without persistence Gqa 16 qSeqLen 1 causal 0 lse 1 not in the table; 2-3 Gqa "
            "16 qSeqLen 4 causal 0 lse 1 (line 3); 4-7 Gqa 64 qSeqLen 1 causal 0 lse 1 (line "
            "5); 8-16 Gqa 32 qSeqLen 4 causal 0 lse 1 not in the table"))
        self.assertEqual(b.ps_lse_qlens("gfx950", causal=False), frozenset())
        self.assertEqual(b.why("ps_lse_qlens", "gfx950", causal=False),
                         "the decode's lookup asks causal 0 whatever "
                         "the caller (rule mla.asm.decode.causal): no non-causal query length")

    def test_lse_qlens_as_the_lookup_asks_the_callers_causal(self):
        """The layout of v0.1.20: the caller's causal, 1 for one token; the
        single-token batch gate asks a non-persistent kernel without LSE."""
        b = Backend(golden("mla-lookup-causal1"))
        self.assertEqual(b.ps_lse_qlens("gfx950"), frozenset(range(1, 17)))
        self.assertEqual(b.why("ps_lse_qlens", "gfx950"), (
            "causal, hsa/gfx950/mla/mla_asm.csv: 1 Gqa 64 qSeqLen 1 causal 1 lse 1 (line 4); "
            "1 without persistence Gqa 16 qSeqLen 1 causal 1 lse 0 (line 3); 2-7 Gqa 64 "
            "qSeqLen 1 causal 1 lse 1 (line 4); 8-16 Gqa 32 qSeqLen 4 causal 1 lse 1 (line 6)"))
        # Non-causal 8 on: only a context-parallel (cprr) causal-0 row.
        self.assertEqual(b.ps_lse_qlens("gfx950", causal=False), frozenset(range(1, 8)))
        self.assertIn("8-16 Gqa 32 qSeqLen 4 causal 0 lse 1 not in the table",
                      b.why("ps_lse_qlens", "gfx950", causal=False))

    def test_lse_qlens_the_tree_cannot_give(self):
        """What the rules read that is not the decode as the model runs it:
        no query length, and the reason says why."""
        def answer(edit):
            m = golden("mla-lookup-causal1")
            edit(m.data["rules"])
            b = Backend(m)
            return b.ps_lse_qlens("gfx950"), b.why("ps_lse_qlens", "gfx950")

        def fold_cond(text):
            def edit(rules):
                rules["mla.asm.decode.gfx950_bf16_ps_fold"]["matches"][1]["captures"][
                    "cond"] = text
            return edit
        self.assertEqual(answer(fold_cond("gqa_ratio >= MIN_HEADS")), (
            frozenset(), "the decode's lookup cannot be read: 'gqa_ratio >= MIN_HEADS' reads "
            "'MIN_HEADS', which the decode's caller does not give: no query length"))
        self.assertEqual(answer(fold_cond("(gqa_ratio >= 16")), (
            frozenset(), "the decode's lookup cannot be read: '(gqa_ratio >= 16' does not "
            "close its parenthesis: no query length"))
        self.assertEqual(answer(fold_cond("gqa_ratio => 16")), (
            frozenset(), "the decode's lookup cannot be read: 'gqa_ratio => 16' is not a "
            "condition this reads (at '=> 16'): no query length"))
        self.assertEqual(answer(fold_cond("gqa_ratio >=")), (
            frozenset(), "the decode's lookup cannot be read: 'gqa_ratio >=' reads nothing, "
            "which the decode's caller does not give: no query length"))

        def unchained(rules):
            del rules["mla.asm.decode.gfx950_bf16_ps_fold"]["matches"][1]["captures"]["chain"]
        self.assertEqual(answer(unchained), (
            frozenset(), "the decode's lookup cannot be read: the gfx950 override at line 44 "
            "is no else-if of the one before: no query length"))

        def twice(rules):
            r = rules["mla.asm.decode.causal"]
            r["matches"].append(dict(r["matches"][0], captures={"fixed": "0"}))
        self.assertEqual(answer(twice), (
            frozenset(), "the decode's lookup cannot be read: the decode sets its lookup's "
            "causal 2 times: no query length"))

        def not_a_number(rules):
            rules["mla.asm.gfx950.bf16_decode_rows"]["matches"][0]["captures"]["qlen"] = "four"
        self.assertEqual(answer(not_a_number), (
            frozenset(), "the decode's lookup cannot be read: qSeqLen 'four' is not a number: "
            "no query length"))

        def no_pad(rules):
            rules["mla.asm.decode.bf16_gqa16_pad"].update(status="unmatched", matches=[])
        self.assertEqual(answer(no_pad), (
            frozenset(), "rule mla.asm.decode.bf16_gqa16_pad did not match in "
            "csrc/py_itfs_cu/asm_mla.cu: no query length"))
        # A table without causal (py-traps): the lookup compares it.
        b = Backend(golden("py-traps"))
        self.assertEqual(b.ps_lse_qlens("gfx950"), frozenset())
        self.assertEqual(b.why("ps_lse_qlens", "gfx950"),
                         "rule mla.asm.decode.causal is missing: no "
                         "such file: csrc/py_itfs_cu/asm_mla.cu: no query length")
        m = golden("py-traps")
        good = golden("mla-lookup-causal1")
        for rid in ("mla.asm.decode.causal", "mla.asm.decode.bf16_gqa16_pad",
                    "mla.asm.decode.gfx950_bf16_ps_fold", "mla.asm.decode.lse_flag"):
            m.data["rules"][rid] = good.data["rules"][rid]
        b = Backend(m)
        self.assertEqual(b.ps_lse_qlens("gfx950"), frozenset())
        self.assertEqual(b.why("ps_lse_qlens", "gfx950"),
                         "the decode's lookup cannot be read: the "
                         "table has no causal column, which the decode's lookup compares: no "
                         "query length")


@unittest.skipUnless(HAVE_AP, NEEDS_AP)
class ArchDtypeTest(unittest.TestCase):
    """Answers AITER decides by GPU architecture and dtype (aiter_probe.arch
    and the Backend methods taking them), over the fixture mla-lookup-causal1."""

    def test_arch_strings(self):
        from aiter_probe.arch import base_arch
        for text, base in (("gfx950", "gfx950"), ("gfx950:sramecc+:xnack-", "gfx950"),
                           ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "gfx942"),
                           (" GFX90A:xnack+ ", "gfx90a"), ("gfx1250", "gfx1250")):
            self.assertEqual(base_arch(text)[0], base, text)
        self.assertEqual(base_arch("gfx950:sramecc+:xnack-"),
                         ("gfx950", "gfx950:sramecc+:xnack- is gfx950"))
        self.assertEqual(base_arch("gfx942"), ("gfx942", "gfx942"))
        for bad in ("sm_90", "", "gfx", "gfx950;rm -rf", "cuda:0", "x" * 300):
            base, why = base_arch(bad)
            self.assertIsNone(base, bad)
            self.assertIn("is not an AMD GPU architecture (gfx950, gfx950:sramecc+:xnack-)", why)
        self.assertEqual(base_arch(950), (None, "the architecture must be a string such as "
                                               "'gfx950', not int"))

    def test_dtype_names(self):
        from aiter_probe.arch import dtype_class

        class FakeDtype:  # what str(torch.float8_e4m3fn) gives
            def __str__(self):
                return "torch.float8_e4m3fn"
        for name, kind in (("bf16", "bf16"), ("bfloat16", "bf16"), ("torch.bfloat16", "bf16"),
                           ("fp8", "fp8"), ("float8_e4m3fnuz", "fp8"),
                           ("torch.float8_e4m3fnuz", "fp8"), ("float8_e4m3fn", "fp8"),
                           (FakeDtype(), "fp8"), ("torch.float16", "fp16")):
            self.assertEqual(dtype_class(name)[0], kind, name)
        self.assertEqual(dtype_class("torch.bfloat16"), ("bf16", "torch.bfloat16 is bf16"))
        self.assertEqual(dtype_class("float8_e5m2"), (None, "dtype 'float8_e5m2' is none "
                         "AITER's MLA planner tells apart (bf16, fp16, float8_e4m3fnuz, "
                         "float8_e4m3fn)"))
        self.assertIsNone(dtype_class("torch.int8")[0])
        self.assertIsNone(dtype_class(None)[0])

    def test_native_heads(self):
        b = Backend(golden("mla-lookup-causal1"))
        where = "(rule mla.metadata.natively_supported matched at " \
            "csrc/kernels/mla/metadata/v1_2_device.cuh:14)"
        # bf16 on gfx950: any head count, any query length.
        for heads in (1, 7, 24, 48, 100, 144):
            self.assertIs(b.native_heads("gfx950:sramecc+:xnack-", "torch.bfloat16", "bf16",
                                         heads, 3), True, heads)
        self.assertEqual(b.why("native_heads", "gfx950:sramecc+:xnack-", "torch.bfloat16",
                               "bf16", heads, 3),
                         "gfx950:sramecc+:xnack- is gfx950, q bf16, "
                         "kv bf16, 144 heads, qlen 3: natively_supported is true " + where)
        self.assertIs(b.native_heads("gfx942", "bf16", "bf16", 24, 1), False)
        self.assertEqual(b.why("native_heads", "gfx942", "bf16", "bf16", 24, 1),
                         "gfx942, q bf16, kv bf16, 24 heads, qlen 1: "
                         "natively_supported is false " + where)
        self.assertIs(b.native_heads("gfx942", "bf16", "bf16", 16, 1), True)
        self.assertIs(b.native_heads("gfx950", "fp8", "float8_e4m3fn", 32, 4), True)
        self.assertIs(b.native_heads("gfx950", "fp8", "float8_e4m3fn", 32, 2), False)
        self.assertIs(b.native_heads("gfx950", "bf16", "fp8", 32, 4), False)
        self.assertIs(b.native_heads("gfx942", "float8_e4m3fnuz", "fp8", 128, 1), True)
        # 32 x 4 = 128 on gfx942 FP8: hk_mtp_experimental, so the switch decides.
        self.assertIsNone(b.native_heads("gfx942", "fp8", "fp8", 32, 4))
        self.assertEqual(b.why("native_heads", "gfx942", "fp8", "fp8", 32, 4),
                         "gfx942, q fp8, kv fp8, 32 heads, qlen 4: the "
                         "planner's natively_supported depends on AITER_ENABLE_EXPERIMENTAL "
                         "here (hk_mtp_experimental): pass experimental= " + where)
        self.assertIs(b.native_heads("gfx942", "fp8", "fp8", 32, 4, experimental=True), True)
        self.assertIs(b.native_heads("gfx942", "fp8", "fp8", 32, 4, experimental=False), False)
        # An architecture the planner names nowhere: only its unconditional heads.
        self.assertIs(b.native_heads("gfx1250", "bf16", "bf16", 16, 1), True)
        self.assertIs(b.native_heads("gfx1250", "bf16", "bf16", 32, 1), False)
        self.assertIsNone(b.native_heads("sm_90", "bf16", "bf16", 16, 1))
        self.assertEqual(b.why("native_heads", "sm_90", "bf16", "bf16", 16, 1),
                         "'sm_90' is not an AMD GPU architecture "
                         "(gfx950, gfx950:sramecc+:xnack-)")
        self.assertIsNone(b.native_heads("gfx950", "bf16", "torch.float8_e5m2", 16, 1))
        self.assertIn("dtype 'torch.float8_e5m2' is none",
                      b.why("native_heads", "gfx950", "bf16", "torch.float8_e5m2", 16, 1))
        for bad in (True, 1.0, "16"):
            with self.assertRaisesRegex(TypeError, "heads must be an int"):
                b.native_heads("gfx950", "bf16", "bf16", bad, 1)
        with self.assertRaisesRegex(ValueError, "qlen must be at least 1, not 0"):
            b.native_heads("gfx950", "bf16", "bf16", 16, 0)

    def test_native_heads_the_tree_cannot_tell(self):
        b = Backend(golden("h24-native"))  # a planner without natively_supported
        self.assertIsNone(b.native_heads("gfx950", "bf16", "bf16", 16, 1))
        self.assertEqual(b.why("native_heads", "gfx950", "bf16", "bf16", 16, 1),
                         "rule mla.metadata.natively_supported did "
                         "not match in csrc/kernels/mla/metadata/v1_2_device.cuh")
        b = quiet("test reason")
        self.assertIsNone(b.native_heads("gfx950", "bf16", "bf16", 16, 1))
        self.assertEqual(b.why("native_heads", "gfx950", "bf16", "bf16", 16, 1),
                         "mla.metadata.natively_supported: no manifest (test reason)")

        def answer(cond=None, hk=None, hk_status=None):
            m = golden("mla-lookup-causal1")
            rules = m.data["rules"]
            if cond is not None:
                rules["mla.metadata.natively_supported"]["matches"][0]["captures"]["cond"] = cond
            if hk is not None:
                rules["mla.metadata.hk_mtp_experimental"]["matches"][0]["captures"]["cond"] = hk
            if hk_status is not None:
                rules["mla.metadata.hk_mtp_experimental"].update(status=hk_status, matches=[])
            b = Backend(m)
            return b.answer("native_heads", "gfx942", "fp8", "fp8", 32, 4)
        got, why = answer(cond="num_heads >= MIN_HEADS")
        self.assertIsNone(got)
        self.assertIn("natively_supported cannot be read: 'num_heads >= MIN_HEADS' reads "
                      "'MIN_HEADS'", why)
        got, why = answer(cond='arch_id && num_heads == 16')
        self.assertIsNone(got)
        self.assertIn("a string 'gfx942' taken as a truth value", why)
        got, why = answer(cond='arch_id == 16')
        self.assertIn("compares a string with a number", why)
        # The tree defines no hk_mtp_experimental, yet the predicate names it.
        got, why = answer(hk_status="unmatched")
        self.assertIsNone(got)
        self.assertIn("reads 'hk_mtp_experimental'", why)
        m = golden("mla-lookup-causal1")
        hk_rule = m.data["rules"]["mla.metadata.hk_mtp_experimental"]
        hk_rule["matches"].append(hk_rule["matches"][0])
        b = Backend(m)
        self.assertIsNone(b.native_heads("gfx942", "fp8", "fp8", 32, 4))
        self.assertIn("rule mla.metadata.hk_mtp_experimental matched at "
                      "csrc/kernels/mla/metadata/v1_2_device.cuh:10 2 times: not one term",
                      b.why("native_heads", "gfx942", "fp8", "fp8", 32, 4))
        got, why = answer(hk_status="unknown")
        self.assertIsNone(got)
        self.assertIn("rule mla.metadata.hk_mtp_experimental is unknown", why)
        self.assertEqual(answer(hk="0"), (False, "gfx942, q fp8, kv fp8, 32 heads, qlen 4: "
                         "natively_supported is false (rule mla.metadata.natively_supported "
                         "matched at csrc/kernels/mla/metadata/v1_2_device.cuh:14)"))
        got, why = answer(cond="(" * 20 + "1" + ")" * 20)
        self.assertIn("a condition nested 17 deep", why)
        got, why = answer(cond="1 || " * 1000 + "1")
        self.assertIn("a condition of 5001 characters", why)

    def test_reducer_heads(self):
        b = Backend(golden("h24-native"))
        self.assertEqual(b.reducer_heads(512), frozenset({8, 16, 24, 32, 128}))
        self.assertEqual(b.why("reducer_heads", 512), "head_dim 512: 8, 16, 24, 32, 128 of "
                         "rule mla.reduce.cases: 7 cases in csrc/kernels/mla/reduce.cu")
        self.assertEqual(b.reducer_heads(128), frozenset({1}))
        self.assertEqual(b.reducer_heads(256), frozenset())
        self.assertEqual(b.why("reducer_heads", 256), "head_dim 256: no case of rule "
                         "mla.reduce.cases: 7 cases in csrc/kernels/mla/reduce.cu")
        b = quiet("test reason")
        self.assertIsNone(b.reducer_heads(128))
        self.assertEqual(b.why("reducer_heads", 128),
                         "mla.reduce.cases: no manifest (test reason)")
        # A tree without the reducer cannot tell either.
        b = Backend(golden("mla-lookup-causal1"))
        self.assertIsNone(b.reducer_heads(128))
        self.assertEqual(b.why("reducer_heads", 128), "rule mla.reduce.cases is missing: no such "
                         "file: csrc/kernels/mla/reduce.cu")
        m = golden("h24-native")
        m.data["rules"]["mla.reduce.cases"].update(status="unknown", matches=[],
                                                   reason="only a run decides")
        b = Backend(m)
        self.assertIsNone(b.reducer_heads(128))
        self.assertEqual(b.why("reducer_heads", 128),
                         "rule mla.reduce.cases is unknown: only a run decides")
        with self.assertRaisesRegex(TypeError, "head_dim must be an int, not str"):
            b.reducer_heads("128")
        with self.assertRaisesRegex(ValueError, "head_dim must be at least 1, not 0"):
            b.reducer_heads(0)

    def test_ps_lse_qlens_per_arch(self):
        b = Backend(golden("mla-lookup-causal1"))
        self.assertEqual(b.ps_lse_qlens("gfx942:sramecc+:xnack-"), frozenset({1, 2, 3, 4}))
        self.assertTrue(b.why("ps_lse_qlens", "gfx942:sramecc+:xnack-").startswith(
            "gfx942:sramecc+:xnack- is gfx942, causal, hsa/gfx942/mla/mla_asm.csv: 1 Gqa 16 "
            "qSeqLen 4 causal 1 lse 1 (line 2)"), b.why("ps_lse_qlens", "gfx942:sramecc+:xnack-"))
        self.assertEqual(b.ps_lse_qlens("gfx950:sramecc+:xnack-"), frozenset(range(1, 17)))
        self.assertIsNone(b.ps_lse_qlens("gfx1250"))
        self.assertEqual(b.why("ps_lse_qlens", "gfx1250"),
                         "gfx1250: no rule reads the query lengths of "
                         "its MLA ASM table (hsa/gfx1250/mla/mla_asm.csv); rules read gfx942's "
                         "and gfx950's")
        self.assertIsNone(b.ps_lse_qlens("sm_90"))
        self.assertIn("'sm_90' is not an AMD GPU architecture", b.why("ps_lse_qlens", "sm_90"))
        # Without the table: the lookup finds nothing.
        self.assertEqual(Backend(golden("mla-lookup-causal0")).ps_lse_qlens("gfx942"),
                         frozenset())
        b = quiet("test reason")
        self.assertEqual(b.ps_lse_qlens("gfx950:sramecc+:xnack-"), frozenset({1, 4}))

    def test_launch_heads_per_arch(self):
        m = golden("mla-lookup-causal1")
        b = Backend(m)
        self.assertEqual(b.mla_launch_heads(24, "gfx950:sramecc+:xnack-"), (32, "tile-slice"))
        self.assertEqual(b.why("mla_launch_heads", 24, "gfx950:sramecc+:xnack-"),
                         "gfx950:sramecc+:xnack- is gfx950: 24 heads "
                         "launch as 32 (tile-slice): plans.mla_heads of %s (not verified by a "
                         "launch)" % m.path)
        self.assertIsNone(b.mla_launch_heads(24, "sm_90"))
        self.assertIn("'sm_90' is not an AMD GPU architecture",
                      b.why("mla_launch_heads", 24, "sm_90"))
        self.assertEqual(b.mla_launch_heads(24), (32, "tile-slice"))
        # A launch verified the row on gfx942: not on gfx950.
        m = golden("mla-lookup-causal1")
        for row in m.data["plans"]["mla_heads"]:
            row["verified"] = row["heads"] == 24
        m.data["devices"] = [{"index": 0, "name": "MI300X", "arch": "gfx942:sramecc+:xnack-",
                              "compute_units": 304}]
        b = Backend(m)
        self.assertEqual(b.mla_launch_heads(24, "gfx950"), (32, "tile-slice"))
        self.assertTrue(b.why("mla_launch_heads", 24, "gfx950").endswith(
            "(verified by a launch on gfx942, not on gfx950)"),
            b.why("mla_launch_heads", 24, "gfx950"))
        b.mla_launch_heads(24, "gfx942")
        self.assertTrue(b.why("mla_launch_heads", 24, "gfx942").endswith("(verified by a launch)"))
        b = quiet("test reason")
        self.assertEqual(b.mla_launch_heads(24, "gfx942"), (32, "tile-slice"))
        self.assertIn("as vLLM pads", b.why("mla_launch_heads", 24, "gfx942"))


class SampleTest(Env):
    """Every decision on the sample tree, through for_this_process."""

    def test_decisions(self):
        root = self.tree()
        self.scan(root, "--save")
        b = for_this_process()
        self.assertIsNone(b.reason)
        got = {name: getattr(b, name)() for name in (
            "mla_decode_native_24_heads", "mla_reducer_24_heads_512", "mla_planner_24_heads",
            "mla_prefill_fp8_persistent",
            "gluon_mla_decode_small_heads", "gluon_mla_decode_max_heads", "mla_decode_segmented",
            "mla_decode_fwd_keywords",
            "fused_moe_gate_mode", "fused_moe_dsv4_shared_expert", "topk_softmax_shared_experts",
            "hipb_mm", "qr_all_reduce_rmsnorm", "reducer_cases", "vllm_calls_bind")}
        self.assertEqual(got, {
            "mla_decode_native_24_heads": True, "mla_reducer_24_heads_512": True,
            "mla_planner_24_heads": True,
            "mla_prefill_fp8_persistent": False, "gluon_mla_decode_small_heads": True,
            "gluon_mla_decode_max_heads": 16,
            "mla_decode_segmented": False,
            "mla_decode_fwd_keywords": frozenset({"q_scale", "kv_scale", "return_lse"}),
            "fused_moe_gate_mode": False, "fused_moe_dsv4_shared_expert": False,
            "topk_softmax_shared_experts": True, "hipb_mm": True,
            "qr_all_reduce_rmsnorm": False,
            "reducer_cases": frozenset({(16, 128), (16, 512), (24, 512), (32, 512),
                                        (64, 512), (128, 512)}),
            "vllm_calls_bind": False})
        # The sample has a gfx950 table but not the decode that reads it.
        self.assertEqual(b.ps_lse_qlens("gfx950"), frozenset())
        self.assertEqual(b.why("ps_lse_qlens", "gfx950"),
                         "rule mla.asm.decode.causal is missing: no "
                         "such file: csrc/py_itfs_cu/asm_mla.cu: no query length")
        self.assertEqual(b.why("hipb_mm"), "aiter.hipb_mm supported: rule export.hipb_mm "
                         "matched in aiter/ops/gradlib.py")
        self.assertEqual(b.why("mla_decode_segmented"), "mla.segmented_decode not supported: "
                         "unknown, so unsupported: rule mla.triton_decode_fwd.binds_segmented: "
                         "no such file: aiter/ops/triton/attention/mla.py")
        self.assertEqual(b.mla_launch_heads(24), (24, "none"))

    def test_without_a_manifest_or_engine(self):
        root = self.tree()
        path = aiter_probe.default_manifest_path(os.path.realpath(root))
        with LogCapture() as log:
            b = for_this_process()
        self.assertEqual(b.reason, self.engine_fails(
            "no manifest at %s: run 'aiter-probe scan --save'" % path))
        self.assertEqual(log.lines(), ["no AITER capability manifest, so every AITER decision "
                                       "takes the conservative answer: " + b.reason])
        self.assertEqual(b.mla_launch_heads(24), (32, "tile-slice"))


DECISIONS = ("mla_decode_native_24_heads", "mla_reducer_24_heads_512", "mla_planner_24_heads",
             "mla_prefill_fp8_persistent",
             "gluon_mla_decode_small_heads", "gluon_mla_decode_max_heads", "mla_decode_segmented",
             "mla_decode_fwd_keywords", "fused_moe_gate_mode", "fused_moe_dsv4_shared_expert",
             "topk_softmax_shared_experts", "hipb_mm", "qr_all_reduce_rmsnorm", "reducer_cases",
             "vllm_calls_bind")


def decisions(b):
    """Every answer of b, the per-arch and per-head ones too."""
    got = {name: getattr(b, name)() for name in DECISIONS}
    got["ps_lse_qlens"] = b.ps_lse_qlens("gfx950")
    got["mla_launch_heads"] = [b.mla_launch_heads(h) for h in range(1, 129)]
    return got


@unittest.skipUnless(HAVE_AP and HAVE_LIBRARY, NEEDS_LIBRARY)
class InProcessTest(Env):
    """No manifest needed: the tree this interpreter imports, scanned in
    process through the engine, answers as `aiter-probe scan` does."""

    def scanned(self, root, *args):
        path = os.path.join(self.dir, "cli.json")
        self.scan(root, "-o", path, *args)
        return aiter_probe.load(path)

    def test_answers_as_the_scan(self):
        root = self.tree()
        self.with_engine()
        with LogCapture() as log:
            b = for_this_process()
        self.assertEqual((b.reason, log.lines()), (None, []))
        real = os.path.realpath(root)
        self.assertEqual(b.manifest.path, "the scan of %s" % real)
        want = self.scanned(root)
        for key in ("aiter", "inputs", "rules", "capabilities", "plans"):
            self.assertEqual(b.manifest.data[key], want.data[key], key)
        self.assertEqual(decisions(b), decisions(Backend(want)))
        self.assertIs(b.mla_decode_native_24_heads(), True)
        self.assertIs(for_this_process(), b)

    def test_this_interpreters_facts(self):
        """What the tree's conditions ask is asked of this interpreter, in
        process, and recorded: the same manifest as the command's with
        --python sys.executable."""
        root = self.tree()
        self.with_engine()
        gradlib = os.path.join(root, "aiter", "ops", "gradlib.py")
        with open(gradlib) as f:
            body = f.read()

        def write(platform):
            with open(gradlib, "w") as f:
                # defined only where the try's import is found: asked
                f.write("import os, sys\ntry:\n    import json\nexcept ImportError:\n"
                        "    pass\nelse:\n    if sys.platform == %r and os.name == %r:\n"
                        "        %s" % (platform, os.name, body.replace("\n", "\n        ")))
        write(sys.platform)
        b = for_this_process()
        self.assertIs(b.hipb_mm(), True)
        self.assertEqual(b.manifest.data["python"], {
            "executable": sys.executable, "platform": sys.platform, "os_name": os.name,
            "finds": {"json": True}})
        want = self.scanned(root, "--python", sys.executable)
        self.assertEqual(b.manifest.data["python"], want.data["python"])
        self.assertEqual(b.manifest.data["capabilities"], want.data["capabilities"])
        write("win32" if sys.platform != "win32" else "linux")
        backend._forget()
        self.assertIs(for_this_process().hipb_mm(), False)

    def test_a_saved_manifest_first(self):
        """A fresh, trusted saved manifest answers (it may hold launches);
        one refused is said at INFO, and the tree scanned instead."""
        root = self.tree()
        self.with_engine()
        path = self.scan(root, "--save")
        b = for_this_process()
        self.assertEqual(b.manifest.path, path)
        os.chmod(self.saved, 0o1777)
        backend._forget()
        with LogCapture(logging.INFO) as log:
            b = for_this_process()
        self.assertEqual(b.manifest.path, "the scan of %s" % os.path.realpath(root))
        self.assertEqual(log.lines(), ["%s: not trusted: its folder %s is writable by others: "
                                       "scanned in process instead" % (path, self.saved)])

    def test_engine_error(self):
        """The engine's own error, then the conservative answers."""
        self.tree()
        self.with_engine()
        os.environ["AITER_PROBE_DATADIR"] = self.dir
        with LogCapture() as log:
            b = for_this_process()
        self.assertRegex(b.reason, "^no manifest at [^;]*; and no rule packs in %s [(]set "
                         "AITER_PROBE_DATADIR, or pass --rules PATH[)]$" % re.escape(self.dir))
        self.assertEqual(len(log.lines()), 1)
        self.assertIs(b.mla_decode_native_24_heads(), False)

    def test_once_from_many_threads(self):
        self.tree()
        self.with_engine()
        made, start = [], threading.Event()
        real = backend.scanned_or_saved

        def counted():
            made.append(1)
            return real()
        backend.scanned_or_saved = counted
        self.addCleanup(setattr, backend, "scanned_or_saved", real)
        got = []

        def ask():
            start.wait()
            got.append(for_this_process())
        threads = [threading.Thread(target=ask) for _ in range(8)]
        for t in threads:
            t.start()
        start.set()
        for t in threads:
            t.join()
        self.assertEqual(len(made), 1)
        self.assertEqual(len(got), 8)
        self.assertTrue(all(b is got[0] for b in got))

    @unittest.skipUnless(hasattr(os, "fork") and hasattr(os, "register_at_fork"), "no fork")
    def test_after_fork(self):
        """A child forked while another thread held the lock (its scan under
        way) answers: the lock is made anew there."""
        self.tree()
        self.with_engine()
        held, release = threading.Event(), threading.Event()

        def hold():
            with backend._lock:
                held.set()
                release.wait()
        holder = threading.Thread(target=hold)
        holder.start()
        held.wait()
        pid = os.fork()
        if pid == 0:  # the child: exits 0 when it answers within 20 s
            signal.alarm(20)
            try:
                ok = for_this_process().mla_decode_native_24_heads() is True
            finally:
                os._exit(0 if ok else 1)
        try:
            _, status = os.waitpid(pid, 0)
        finally:
            release.set()
            holder.join()
        self.assertEqual(status, 0)


FIX = os.path.join(SRCDIR, "tests", "fixtures")
CORE_PY = os.path.join(SRCDIR, "tests", "python", "core-py")


class MetaFolderTest(Env):
    """The meta folder, as the tree's own aiter/jit/core.py picks it
    (aiter_probe.discover.meta_folder; src/engine/discover.c its twin): an
    editable checkout with a stale aiter_meta/csrc builds from the root, a
    wheel from aiter_meta/, older generations as they did."""

    def laid_out(self, name, mode, core, stale=True):
        """The sample tree, imported by this interpreter, with
        aiter/install_mode (None: absent), aiter/jit/core.py of one
        generation (tests/python/core-py), and in aiter_meta/csrc a stale
        copy whose reducer lacks 24 x 512 (h24-missing)."""
        root = self.tree(name)
        if mode is not None:
            with open(os.path.join(root, "aiter", "install_mode"), "w") as f:
                f.write(mode)
        os.makedirs(os.path.join(root, "aiter", "jit"), exist_ok=True)
        shutil.copy(os.path.join(CORE_PY, core + ".py"),
                    os.path.join(root, "aiter", "jit", "core.py"))
        if stale:
            os.makedirs(os.path.join(root, "aiter_meta"))
            shutil.copytree(os.path.join(FIX, "h24-missing", "csrc"),
                            os.path.join(root, "aiter_meta", "csrc"))
        return root

    def as_wheel(self, root):
        """root as pip installs a wheel: the sources only in aiter_meta/."""
        os.makedirs(os.path.join(root, "aiter_meta"))
        for folder in ("csrc", "hsa"):
            os.rename(os.path.join(root, folder), os.path.join(root, "aiter_meta", folder))

    def test_editable_checkout_builds_from_the_root(self):
        root = self.laid_out("editable", "develop\n", "mode-env")
        self.assertEqual(meta_folder(root), (
            root, "aiter/jit/core.py: aiter/install_mode says 'develop'"))

    def test_wheel_builds_from_aiter_meta(self):
        root = self.laid_out("wheel", "install", "mode-env", stale=False)
        self.as_wheel(root)
        self.assertEqual(meta_folder(root), (
            os.path.join(root, "aiter_meta"),
            "aiter/jit/core.py: aiter/install_mode says 'install'"))

    def test_no_install_mode_is_pip_install_e(self):
        root = self.laid_out("no-mode", None, "mode-env")
        self.assertEqual(meta_folder(root)[0], root)

    def test_meta_dir_and_the_csrc_fallback(self):
        root = self.laid_out("env", "install", "mode-env")
        other = os.path.join(self.dir, "other")
        shutil.copytree(os.path.join(FIX, "h24-native"), other)
        os.environ["AITER_META_DIR"] = other
        self.assertEqual(meta_folder(root), (other, "aiter/jit/core.py: AITER_META_DIR"))
        os.environ["AITER_META_DIR"] = os.path.join(self.dir, "no-such")
        self.assertEqual(meta_folder(root), (root, "aiter/jit/core.py: AITER_META_DIR, which "
                                             "holds no csrc/: the root"))
        del os.environ["AITER_META_DIR"]
        shutil.rmtree(os.path.join(root, "aiter_meta", "csrc"))
        self.assertEqual(meta_folder(root)[0], root)

    def test_install_mode_alone_before_v0_1_7_post3(self):
        root = self.laid_out("mode-only", "install", "mode")
        os.environ["AITER_META_DIR"] = os.path.join(FIX, "h24-native")
        self.assertEqual(meta_folder(root)[0], os.path.join(root, "aiter_meta"))
        shutil.rmtree(os.path.join(root, "aiter_meta", "csrc"))
        # No fallback then either: AITER builds from the empty aiter_meta/.
        self.assertEqual(meta_folder(root)[0], os.path.join(root, "aiter_meta"))

    def test_site_packages_before_v0_1_5_post1(self):
        import site
        root = self.laid_out("old", "develop", "site")
        real = site.getsitepackages
        self.addCleanup(setattr, site, "getsitepackages", real)
        site.getsitepackages = lambda: [root]
        self.assertEqual(meta_folder(root)[0], os.path.join(root, "aiter_meta"))
        site.getsitepackages = lambda: [self.dir]
        self.assertEqual(meta_folder(root)[0], root)
        shutil.copy(os.path.join(CORE_PY, "site-parent.py"),
                    os.path.join(root, "aiter", "jit", "core.py"))
        self.assertEqual(meta_folder(root)[0], os.path.join(root, "aiter_meta"))

    def test_without_a_rule_the_layout(self):
        """No core.py, or a stub with none of the rules (wheel-layout's):
        the layout; with an install_mode, the newest rule."""
        root = self.tree("bare")
        self.assertEqual(meta_folder(root)[0], root)
        os.makedirs(os.path.join(root, "aiter_meta", "csrc"))
        self.assertEqual(meta_folder(root), (
            os.path.join(root, "aiter_meta"),
            "aiter_meta/ holds csrc/ (no rule in aiter/jit/core.py)"))
        os.makedirs(os.path.join(root, "aiter", "jit"), exist_ok=True)
        with open(os.path.join(root, "aiter", "jit", "core.py"), "w") as f:
            f.write("def compile_ops(module):\n    return lambda f: f\n")
        self.assertEqual(meta_folder(root)[0], os.path.join(root, "aiter_meta"))
        with open(os.path.join(root, "aiter", "install_mode"), "w") as f:
            f.write("develop")
        self.assertEqual(meta_folder(root)[0], root)

    @unittest.skipUnless(HAVE_AP and HAVE_LIBRARY, NEEDS_LIBRARY)
    def test_the_engine_picks_the_same(self):
        """The scan in process (the C API) and the command read the folder
        meta_folder names, on every layout above."""
        from aiter_probe.engine import scan_tree
        self.with_engine()
        for name, mode, core in (("a", "develop", "mode-env"), ("b", "install", "mode-env"),
                                 ("c", None, "mode-env"), ("d", "install", "mode"),
                                 ("e", "develop", "mode")):
            root = self.laid_out(name, mode, core)
            m = scan_tree(root)
            self.assertEqual(m.meta, os.path.realpath(meta_folder(root)[0]), name)
        os.environ["AITER_META_DIR"] = os.path.join(FIX, "h24-native")
        for name in ("a", "b", "d"):
            root = os.path.join(self.dir, name)
            self.assertEqual(scan_tree(root).meta, os.path.realpath(meta_folder(root)[0]), name)

    @unittest.skipUnless(HAVE_AP and HAVE_LIBRARY, NEEDS_LIBRARY)
    def test_the_process_scans_the_editable_checkouts_root(self):
        """The issue's case: the stale aiter_meta/csrc (no 24 x 512 case) is
        not what answers; the root's sources are, as AITER builds them."""
        root = self.laid_out("editable", "develop", "mode-env")
        self.with_engine()
        b = for_this_process()
        self.assertEqual(b.manifest.meta, os.path.realpath(root))
        self.assertIs(b.mla_reducer_24_heads_512(), True)
        with open(os.path.join(root, "aiter", "install_mode"), "w") as f:
            f.write("install")
        backend._forget()
        b = for_this_process()
        self.assertEqual(b.manifest.meta, os.path.join(os.path.realpath(root), "aiter_meta"))
        self.assertIs(b.mla_reducer_24_heads_512(), False)


if __name__ == "__main__":
    unittest.main(verbosity=1)
