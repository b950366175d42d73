# SPDX-License-Identifier: MIT
"""What SGLang's own tests pin about its reducer head table and the FP8
prefill head count, over the manifest instead of a hard-coded copy; and
where the copy and the tree disagree. Then the decode's head padding: the
index tensor made once in the constructor, the padded query gathered into
the buffer init_cuda_graph_state made, the decode over padded heads
cropped back equal to the decode over the real ones. With numpy, and with
torch (on the GPU when there is one) where it is installed; a class whose
library is absent is skipped, saying so.

The manifests are the golden scans of fixture trees (tests/golden/, which
tests/cli/golden.sh keeps equal to a scan of tests/fixtures/<tree>/).
    python3 examples/sglang/test_aiter_backend.py
"""

import logging
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("AP_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(SRCDIR, "python"), HERE]

import aiter_probe  # noqa: E402
from aiter_probe.backend import Backend  # noqa: E402

import aiter_backend  # noqa: E402
from aiter_backend import (AiterAttnBackend, _fp8_prefill_num_head,  # noqa: E402
                           _use_fp8_prefill_attn, mla_reduce_v1_heads)
from aiter_backend import (  # noqa: E402
    _aiter_fused_moe_supports_no_combine,
    aiter_backend_importable,
    aiter_moe_enums_present,
)

try:
    import numpy
except ImportError:
    numpy = None
try:
    import torch
except ImportError:
    torch = None


def use(tree):
    path = os.path.join(SRCDIR, "tests", "golden", tree + ".json")
    aiter_backend.use_backend(Backend(aiter_probe.load(path)))


class ReducerHeadsTest(unittest.TestCase):
    def tearDown(self):
        aiter_backend.use_backend(None)

    def test_table_is_the_reducers_cases(self):
        # old-layout: 24 x 512, 16 x 128, 128 x 512 (continued calls).
        use("old-layout")
        self.assertEqual(mla_reduce_v1_heads(), {512: frozenset({24, 128}),
                                                 128: frozenset({16})})

    def test_unlisted_count_pads_to_the_next_case(self):
        use("old-layout")
        self.assertNotIn(12, mla_reduce_v1_heads()[128])
        self.assertEqual(_fp8_prefill_num_head(num_head=12, num_kv_head=12, v_head_dim=128), 16)

    def test_supported_count_is_never_padded(self):
        use("old-layout")
        self.assertEqual(_fp8_prefill_num_head(num_head=16, num_kv_head=16, v_head_dim=128), 16)

    def test_pad_declines_outside_its_validated_shape(self):
        use("old-layout")
        # GQA ratio 4: padding q alone would change the ratio.
        self.assertIsNone(_fp8_prefill_num_head(num_head=12, num_kv_head=3, v_head_dim=128))
        # Nothing larger than 128 heads for head dim 512.
        self.assertIsNone(_fp8_prefill_num_head(num_head=130, num_kv_head=130, v_head_dim=512))
        # A head dim the reducer has no case for.
        self.assertIsNone(_fp8_prefill_num_head(num_head=12, num_kv_head=12, v_head_dim=192))

    def test_24_heads_run_natively_where_the_reducer_has_them(self):
        # SGLang's copy has no 24 for head dim 512 and pads to 32; this tree's
        # reducer dispatches 24 x 512.
        use("h24-native")
        self.assertEqual(_fp8_prefill_num_head(num_head=24, num_kv_head=24, v_head_dim=512), 24)

    def test_a_case_the_reducer_lacks_is_not_assumed(self):
        # h24-missing dispatches 24 heads with head dim 128 only, 16 and 32
        # with 512: 24 x 512 pads to 32, and 8 x 512, which SGLang's copy
        # lists, is not taken as is.
        use("h24-missing")
        self.assertEqual(_fp8_prefill_num_head(num_head=24, num_kv_head=24, v_head_dim=512), 32)
        self.assertEqual(_fp8_prefill_num_head(num_head=24, num_kv_head=24, v_head_dim=128), 24)
        self.assertEqual(_fp8_prefill_num_head(num_head=8, num_kv_head=8, v_head_dim=512), 16)

    def test_without_a_manifest_prefill_falls_back(self):
        logging.disable(logging.WARNING)
        self.addCleanup(logging.disable, logging.NOTSET)
        aiter_backend.use_backend(Backend(None, "no manifest saved"))
        self.assertEqual(mla_reduce_v1_heads(), {})
        self.assertIsNone(_fp8_prefill_num_head(num_head=16, num_kv_head=16, v_head_dim=128))

class CensusRowsTest(unittest.TestCase):
    """S1, S12, S13 answer by their capabilities, never a guessed yes."""

    def tearDown(self):
        aiter_backend.use_backend(None)

    def test_a_capability_the_manifest_holds(self):
        caps = {"fused_moe.no_combine": {"supported": True, "reason": "rule matched"},
                "sglang.aiter_backend": {"supported": False, "reason": "rule did not match"}}
        aiter_backend.use_backend(Backend(aiter_probe.Manifest(
            {"rules": {}, "capabilities": caps}, "m.json")))
        self.assertTrue(_aiter_fused_moe_supports_no_combine())
        self.assertFalse(aiter_backend_importable())
        self.assertIn("not supported: rule did not match",
                      aiter_backend.aiter_backend().why("supported", "sglang.aiter_backend"))
        # scanned without the SGLang pack: no
        self.assertFalse(aiter_moe_enums_present())
        self.assertIn("scanned without its pack",
                      aiter_backend.aiter_backend().why("supported", "sglang.moe_enums"))

    def test_fixture_trees_lack_sglangs_imports(self):
        use("old-layout")
        self.assertFalse(aiter_backend_importable())
        self.assertFalse(_aiter_fused_moe_supports_no_combine())

    def test_no_manifest_says_no(self):
        aiter_backend.use_backend(Backend(None, "none here"))
        self.assertFalse(aiter_moe_enums_present())


    def test_fp8_prefill_gate_takes_the_callers_arch(self):
        use("old-layout")
        self.assertIs(_use_fp8_prefill_attn("gfx950:sramecc+:xnack-", 16, 16, 128), True)
        self.assertIs(_use_fp8_prefill_attn("gfx942:sramecc+:xnack-", 16, 16, 128), False)
        self.assertIs(_use_fp8_prefill_attn("gfx950", 12, 3, 128), False)


class Arrays:
    """The decode's padding over one array library (lib, device)."""
    lib = device = None

    def heads(self, n, tokens=3):
        if self.lib is torch:
            return torch.arange(tokens * n * 4, dtype=torch.float32,
                                device=self.device).view(tokens, n, 4)
        return numpy.arange(tokens * n * 4, dtype=numpy.float32).reshape(tokens, n, 4)

    def same(self, a, b):
        if self.lib is torch:
            return a.shape == b.shape and bool(torch.equal(a, b))
        return a.shape == b.shape and bool((a == b).all())

    def same_memory(self, a, b):
        if self.lib is torch:
            return a.data_ptr() == b.data_ptr()
        return bool(numpy.shares_memory(a, b))

    def tearDown(self):
        aiter_backend.use_backend(None)

    def test_padding_as_the_plan_says(self):
        use("h24-missing")
        for n, padded, factor in ((8, 16, 2), (4, 16, 4), (6, 16, 1), (24, 32, 1),
                                  (16, 16, 1), (128, 128, 1)):
            with self.subTest(heads=n):
                b = AiterAttnBackend(n, lambda q: q, like=self.heads(n))
                self.assertEqual((b.num_head_padded, b.head_repeat_factor), (padded, factor))
                self.assertEqual(b.need_pad_heads, padded != n)

    def test_decode_pads_into_the_graph_buffer_and_crops(self):
        use("h24-missing")
        seen = []

        def decode(q):
            seen.append(q)
            return q * 3 - 1
        for n in (2, 6, 8, 24, 32):
            with self.subTest(heads=n):
                del seen[:]
                like = self.heads(n)
                b = AiterAttnBackend(n, decode, like=like)
                index = b._pad_index
                b.init_cuda_graph_state(max_bs=8, head_dim=4, like=like)
                for step in range(3):
                    q = self.heads(n) + step
                    self.assertTrue(self.same(b.forward_decode(q), q * 3 - 1))
                self.assertIs(b._pad_index, index)
                if b.need_pad_heads:
                    self.assertTrue(all(self.same_memory(s, b._q_buffer) for s in seen))
                    self.assertEqual(tuple(seen[0].shape), (3, b.num_head_padded, 4))
                else:
                    self.assertIsNone(index)

    def test_valid_heads(self):
        use("h24-missing")
        self.assertTrue(all(AiterAttnBackend._valid_heads(n) for n in range(1, 129)))
        self.assertTrue(AiterAttnBackend._valid_heads(144))
        self.assertFalse(AiterAttnBackend._valid_heads(0))
        self.assertFalse(AiterAttnBackend._valid_heads(130))
        with self.assertRaisesRegex(AssertionError, "not 130"):
            AiterAttnBackend(130, lambda q: q)

    def test_gluon_decode_is_the_trees(self):
        for tree, want in (("py-positive", None), ("h24-native", False)):
            use(tree)
            b = aiter_backend.aiter_backend()
            self.assertIs(AiterAttnBackend.gluon_decode_available(),
                          b.gluon_mla_decode_small_heads())
            if want is not None:
                self.assertIs(AiterAttnBackend.gluon_decode_available(), want)


@unittest.skipIf(numpy is None, "numpy is not installed (python3-numpy)")
class NumpyTest(Arrays, unittest.TestCase):
    lib = numpy


@unittest.skipIf(torch is None, "torch is not installed")
class TorchTest(Arrays, unittest.TestCase):
    lib = torch
    device = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"


if __name__ == "__main__":
    unittest.main(verbosity=2)
