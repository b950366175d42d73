# SPDX-License-Identifier: MIT
"""Backend.binds and Backend.signature (aiter_probe.calls) against real
calls: the fixture tests/fixtures/calls (a package laid out as AITER's: star
imports, a functools.wraps decorator, positional-only and keyword-only
parameters, *args/**kwargs, a functools.partial, a class, an optional
import) is scanned with --signatures through the build's engine, then
imported, and every answer is compared with whether
inspect.signature(f).bind(...) succeeds and with the call itself. The call
shapes are vLLM's (rules/vllm-calls.yaml, doc/census.md V12-V17,
V33) and a few that do not bind."""

import importlib
import inspect
import os
import sys
import tempfile
import threading
import unittest

SRCDIR = os.environ["AP_SRCDIR"]
BUILDDIR = os.environ.get("AP_BUILDDIR")
sys.path.insert(0, os.path.join(SRCDIR, "python"))

import aiter_probe  # noqa: E402
from aiter_probe import calls, engine  # noqa: E402
from aiter_probe.backend import Backend  # noqa: E402
from aiter_probe.signatures import Signatures, call_binds, parse_params  # noqa: E402

FIXTURE = os.path.join(SRCDIR, "tests", "fixtures", "calls")
LIBRARY = os.path.join(BUILDDIR or "", ".libs", "libaiter-probe.so")
HAVE_LIBRARY = bool(BUILDDIR) and os.path.exists(LIBRARY) and not os.environ.get("AP_SAN")
NEEDS_LIBRARY = "needs the build's libaiter-probe (AP_BUILDDIR), not a sanitizer build"

METADATA_KW = ["page_size", "kv_granularity", "max_seqlen_qo", "uni_seqlen_qo", "fast_mode",
               "dtype_q", "dtype_kv"]
FUSED_MOE_KW = ["num_local_tokens", "dtype", "hidden_pad", "intermediate_pad", "bias1", "bias2",
                "moe_sorting_dispatch_policy", "swiglu_limit"]

# (qualname, positional, keywords): vLLM's calls first, then ones that fail
SHAPES = [
    ("aiter.mla.mla_decode_fwd", 8, ["sm_scale", "logit_cap"]),        # vLLM 2026-08
    ("aiter.mla.mla_decode_fwd", 8, ["sm_scale", "logit_cap", "causal"]),  # late vLLM
    ("aiter.mla.mla_decode_fwd", 8, ["q_scale", "kv_scale", "return_lse"]),
    ("aiter.mla.mla_decode_fwd", 7, []),
    ("aiter.mla.mla_prefill_fwd", 8, ["sm_scale"]),
    ("aiter.mla.mla_prefill_fwd", 9, []),
    ("aiter.fused_moe.fused_moe", 13, FUSED_MOE_KW),
    ("aiter.fused_moe.fused_moe", 13, FUSED_MOE_KW + ["gate_mode"]),
    ("aiter.fused_moe.fused_moe", 24, []),
    ("aiter.fused_moe.fused_topk", 4, ["topk_ids"]),
    ("aiter.fused_moe.fused_topk", 3, ["renormalize"]),
    ("aiter.topk_softmax", 5, []),
    ("aiter.topk_softmax", 5, ["num_shared_experts"]),
    ("aiter.topk_softmax", 4, []),
    ("aiter.biased_grouped_topk", 7, ["routed_scaling_factor"]),
    ("aiter.get_mla_metadata_v1", 12, METADATA_KW),
    ("aiter.get_mla_metadata_v1", 11, METADATA_KW),
    ("aiter.get_ps_metadata_info_v1", 0,
     ["batch_size", "num_head_k", "max_qlen", "qlen_granularity"]),
    ("aiter.mla_reduce_v1", 7, []),
    ("aiter.mla_reduce_v1", 9, []),
    ("aiter.paged_attention", 3, ["scale"]),
    ("aiter.paged_attention", 2, ["v", "k"]),       # k positional-only: **extra takes it
    ("aiter.paged_attention", 1, ["k", "v"]),       # k by keyword only: unbound
    ("aiter.paged_attention", 3, ["other"]),
    ("aiter.pa_fp8", 4, ["dtype", "out"]),
    ("aiter.pa_fp8", 5, []),
    ("aiter.pa_raw", 5, ["out"]),
    ("aiter.pa_raw", 5, ["dtype"]),
    ("aiter.pa_varargs", 30, ["anything"]),
    ("aiter.prefetch", 1, ["stream"]),
    ("aiter.compile_ops", 1, ["fc_name"]),
]

# what binds() cannot tell, and why it would be wrong to guess
UNKNOWN = [
    ("aiter.PagedParams", 1, []),      # a class: its metaclass, __new__, __init__
    ("aiter.all_gather", 0, []),       # None here, a function where the import works
    ("aiter.AITER_FLAG", 0, []),       # a value
    ("aiter.moe_sum", 2, []),          # not in moe_op's __all__: aiter has no moe_sum
    ("aiter.ops.triton.gluon.mla_gluon.mla_gluon", 0, ["q_nope"]),  # no such module
    ("aiter.Optional", 1, []),         # from outside the tree
    # @torch_compile_guard(...)'s wrapper of its own: with torch, a call
    # binds as the schema torch.library infers
    ("aiter.rmsnorm2d_fwd", 3, []),
]


def _really_binds(f, positional, keywords):
    """Whether inspect.signature(f).bind accepts the shape, and whether the
    call itself raises TypeError (the fixture's bodies do nothing)."""
    args = [object()] * positional
    kw = {k: object() for k in keywords}
    try:
        inspect.signature(f).bind(*args, **kw)
        by_inspect = True
    except TypeError:
        by_inspect = False
    try:
        result = f(*args, **kw)
        if inspect.iscoroutine(result):
            result.close()
        by_call = True
    except TypeError:
        by_call = False
    return by_inspect, by_call


def _resolve(qualname):
    module, _, name = qualname.rpartition(".")
    return getattr(importlib.import_module(module), name)


class Imported(unittest.TestCase):
    """The fixture package imported for real, then dropped."""

    def setUp(self):
        for k in [k for k in sys.modules if k == "aiter" or k.startswith("aiter.")]:
            del sys.modules[k]
        sys.path.insert(0, FIXTURE)
        self.addCleanup(self._forget)

    @staticmethod
    def _forget():
        sys.path.remove(FIXTURE)
        for k in [k for k in sys.modules if k == "aiter" or k.startswith("aiter.")]:
            del sys.modules[k]


@unittest.skipUnless(HAVE_LIBRARY, NEEDS_LIBRARY)
class AgainstRealCalls(Imported):

    @classmethod
    def setUpClass(cls):
        os.environ["AITER_PROBE_DATADIR"] = SRCDIR
        cls.manifest = engine.scan_tree(FIXTURE, library=LIBRARY, signatures=True)
        cls.plain = engine.scan_tree(FIXTURE, library=LIBRARY)

    def test_every_shape_as_a_real_call(self):
        sigs = Signatures(self.manifest.data["signatures"])
        agree = 0
        for qualname, positional, keywords in SHAPES:
            with self.subTest(qualname=qualname, positional=positional, keywords=keywords):
                f = _resolve(qualname)
                by_inspect, by_call = _really_binds(f, positional, keywords)
                self.assertEqual(by_inspect, by_call)
                answer, why = sigs.binds(qualname, positional, keywords)
                self.assertEqual(answer, by_inspect, why)
                self.assertEqual(why is None, answer)
                agree += 1
        self.assertEqual(agree, len(SHAPES))

    def test_signature_is_inspects_less_defaults_and_annotations(self):
        sigs = Signatures(self.manifest.data["signatures"])
        for qualname in sorted({s[0] for s in SHAPES}):
            with self.subTest(qualname=qualname):
                real = inspect.signature(_resolve(qualname))
                plain = real.replace(parameters=[
                    p.replace(annotation=inspect.Parameter.empty,
                              default=inspect.Parameter.empty) for p in
                    real.parameters.values()], return_annotation=inspect.Signature.empty)
                text, why = sigs.signature(qualname)
                self.assertIsNone(why)
                # inspect writes no default as "=…": drop ours to compare
                self.assertEqual(text.replace("=\u2026", ""), str(plain))
                params = parse_params(text[1:-1])
                self.assertEqual([(p.name, p.kind, p.has_default) for p in params],
                                 [(p.name, p.kind.name.lower(),
                                   p.default is not inspect.Parameter.empty)
                                  for p in real.parameters.values()])

    def test_what_it_cannot_tell_is_none(self):
        sigs = Signatures(self.manifest.data["signatures"])
        for qualname, positional, keywords in UNKNOWN:
            with self.subTest(qualname=qualname):
                answer, why = sigs.binds(qualname, positional, keywords)
                self.assertIsNone(answer)
                self.assertTrue(why)
        self.assertEqual(sigs.binds("aiter.PagedParams", 1)[1],
                         "a class: what calling it binds is its metaclass's, __new__'s and "
                         "__init__'s, which are not read")
        self.assertEqual(sigs.binds("aiter.ops.triton.gluon.mla_gluon.mla_gluon")[1],
                         "no such module in the tree")
        self.assertEqual(sigs.binds("aiter.nowhere.f")[1],
                         "the manifest records no signatures of that module")
        self.assertEqual(sigs.binds("mla_decode_fwd")[1],
                         "a name must follow its module: aiter.mla.mla_decode_fwd, or "
                         "aiter.mla:mla_decode_fwd")
        self.assertEqual(sigs.binds("aiter.mla:mla_decode_fwd", 8), (True, None))

    def test_backend_scans_again_for_signatures_once_from_many_threads(self):
        os.environ["AITER_PROBE_LIBRARY"] = LIBRARY
        self.addCleanup(os.environ.pop, "AITER_PROBE_LIBRARY", None)
        self.assertNotIn("signatures", self.plain.data)
        b = Backend(self.plain)
        scans = []
        real = engine.scan_tree

        def counted(*a, **k):
            scans.append(k.get("signatures"))
            return real(*a, **k)
        engine.scan_tree = counted
        self.addCleanup(setattr, engine, "scan_tree", real)
        got = []

        def ask():
            got.append((b.binds("aiter.mla.mla_decode_fwd", 8, ["causal"]),
                        b.binds("aiter.mla.mla_decode_fwd", 8, ["sm_scale"]),
                        b.signature("aiter.fused_moe.fused_topk")))
        threads = [threading.Thread(target=ask) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(scans, [True])
        self.assertEqual(got, [(False, True, "(hidden_states, gating_output, topk, renormalize, "
                                "/, topk_ids=\u2026)")] * 8)
        self.assertEqual(b.binds_why("aiter.mla.mla_decode_fwd", 8, ["causal"])[1],
                         "a call of aiter.mla.mla_decode_fwd with 8 positionals and its keywords "
                         "does not bind: no parameter 'causal' (and no **kwargs)")
        self.assertEqual(b.signature_why("aiter.moe_sum")[1],
                         "no signature of aiter.moe_sum: no callable of that name recorded (not "
                         "bound there, a module, a name imported from outside the tree, or past "
                         "the scan's cap)")

    def test_backend_uses_the_manifests_signatures(self):
        b = Backend(self.manifest)
        real = engine.scan_tree
        engine.scan_tree = None  # any scan would fail the test
        self.addCleanup(setattr, engine, "scan_tree", real)
        self.assertTrue(b.binds("aiter.fused_moe.fused_moe", 13, FUSED_MOE_KW))
        self.assertEqual(b.binds_why("aiter.fused_moe.fused_moe", 13, FUSED_MOE_KW)[1],
                         "it binds to aiter.fused_moe.fused_moe(" +
                         self.manifest.data["signatures"]["aiter.fused_moe"]["callables"]
                         ["fused_moe"]["params"] + ")")

    def test_saved_and_read_back(self):
        d = tempfile.mkdtemp(prefix="ap-test-calls-")
        os.chmod(d, 0o700)
        path = os.path.join(d, "m.json")
        with open(path, "w") as f:
            f.write(engine_json(self.manifest))
        m = aiter_probe.load(path)
        self.assertEqual(m.data["signatures"], self.manifest.data["signatures"])
        os.unlink(path)
        os.rmdir(d)


def engine_json(manifest):
    import json
    return json.dumps(manifest.data, indent=2, ensure_ascii=True)


class WithoutEngine(unittest.TestCase):

    def test_no_manifest_answers_none_with_the_reason(self):
        b = Backend.__new__(Backend)
        b.manifest, b.reason = None, "aiter is not installed for this interpreter"
        self.assertEqual(b.binds_why("aiter.mla.mla_decode_fwd", 8),
                         (None, "no manifest (aiter is not installed for this interpreter)"))
        self.assertIsNone(b.signature("aiter.mla.mla_decode_fwd"))

    def test_engine_that_cannot_load(self):
        m = aiter_probe.load(os.path.join(SRCDIR, "tests", "golden", "py-positive.json"))
        old = os.environ.get("AITER_PROBE_LIBRARY")
        os.environ["AITER_PROBE_LIBRARY"] = "/nonexistent/libaiter-probe.so"
        try:
            answer, why = Backend(m).binds_why("aiter.mla.mla_decode_fwd", 8)
        finally:
            if old is None:
                os.environ.pop("AITER_PROBE_LIBRARY")
            else:
                os.environ["AITER_PROBE_LIBRARY"] = old
        self.assertIsNone(answer)
        self.assertIn("holds no signatures, and scanning", why)
        self.assertIn("cannot load the engine /nonexistent/libaiter-probe.so", why)

    def test_arguments_checked(self):
        s = Signatures({})
        with self.assertRaises(ValueError):
            s.binds("aiter.f", -1)
        with self.assertRaises(ValueError):
            s.binds("aiter.f", True)
        with self.assertRaises(ValueError):
            s.binds("aiter.f", 0, "causal")


class Binding(unittest.TestCase):
    """call_binds against inspect on signatures made here, one per kind."""

    DEFS = [
        "def f(a, b, /, c, d=1, *args, e, f=2, **kw): pass",
        "def f(a, b=1, /, *, c): pass",
        "def f(*, a, b=1): pass",
        "def f(a, /, **kw): pass",
        "def f(*args): pass",
        "def f(): pass",
        "def f(a, b=1, *args, c=2): pass",
    ]
    NAMES = ["a", "b", "c", "d", "e", "f", "kw", "args", "z"]

    def test_against_inspect(self):
        import itertools
        n = 0
        for src in self.DEFS:
            ns = {}
            exec(src, ns)
            real = inspect.signature(ns["f"])
            text = str(real)[1:-1]
            for p in real.parameters.values():
                if p.default is not inspect.Parameter.empty:
                    text = text.replace("%s=%r" % (p.name, p.default), p.name + "=\u2026")
            params = parse_params(text)
            for positional in range(0, 6):
                for r in range(0, 3):
                    for kws in itertools.combinations(self.NAMES, r):
                        try:
                            real.bind(*[0] * positional, **{k: 0 for k in kws})
                            want = True
                        except TypeError:
                            want = False
                        got, why = call_binds(params, positional, kws)
                        self.assertEqual(got, want, (src, positional, kws, why))
                        n += 1
        self.assertGreater(n, 1000)

    def test_refused_lists(self):
        for text, why in [("a, /, /", "a '/' that follows no positional parameter"),
                          ("/", "a '/' that follows no positional parameter"),
                          ("a, *", "a bare '*' with no keyword-only parameter after it"),
                          ("*a, *b", "a second '*'"), ("**k, a", "a parameter after **k"),
                          ("a b", "'a b' is no parameter"), ("a=…=…", "'a=…' is no parameter"),
                          (", ".join("p%d" % i for i in range(256)), "more than 255 parameters")]:
            with self.subTest(text=text):
                with self.assertRaises(ValueError) as e:
                    parse_params(text)
                self.assertEqual(str(e.exception), why)


if __name__ == "__main__":
    unittest.main(verbosity=1)
