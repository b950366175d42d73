# SPDX-License-Identifier: MIT
"""What vLLM's own tests pin about its AITER MLA head padding, over the
manifest: 24 -> 32 tile padding and cropping, a reducer with 24 heads but a
planner without still pads, both halves present pass 24 through with no copy,
17, 24 and 31 round-trip through 32, 32 passes with no copy; small counts
repeat (divisors of 16) or tile to 16. Then what this layout adds: the index
tensors are made once per head count and device, a decoder made with a
buffer pads into it on every step (what CUDA graph capture needs), and a
decode over the padded heads cropped back equals the decode over the real
ones; and each probe of rocm_aiter_mla.py and _aiter_ops.py, one by one.
With numpy, and with torch (on the GPU when there is one) where it is
installed; a class whose library is absent is skipped, saying so.

The manifests are the golden scans of fixture trees (tests/golden/, which
tests/cli/golden.sh keeps equal to a scan of tests/fixtures/<tree>/).
    python3 examples/vllm/test_rocm_aiter_mla.py
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

import rocm_aiter_mla  # noqa: E402
from _aiter_ops import rocm_aiter_ops  # noqa: E402
from rocm_aiter_mla import AiterMLADecode, AiterMLAHelper  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None
try:
    import torch
except ImportError:
    torch = None


def golden(tree):
    return aiter_probe.load(os.path.join(SRCDIR, "tests", "golden", tree + ".json"))


class NumpyOps:
    @staticmethod
    def heads(n):
        return numpy.arange(2 * n * 4, dtype=numpy.float32).reshape(2, n, 4)

    @staticmethod
    def same(a, b):
        return a.shape == b.shape and bool((a == b).all())

    @staticmethod
    def contiguous(a):
        return bool(a.flags["C_CONTIGUOUS"])

    @staticmethod
    def repeat_interleave(a, r):
        return numpy.repeat(a, r, axis=1)

    @staticmethod
    def same_memory(a, b):
        return bool(numpy.shares_memory(a, b))


class TorchOps:
    device = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"

    @classmethod
    def heads(cls, n):
        return torch.arange(2 * n * 4, dtype=torch.float32, device=cls.device).view(2, n, 4)

    @staticmethod
    def same(a, b):
        return a.shape == b.shape and bool(torch.equal(a, b))

    @staticmethod
    def contiguous(a):
        return a.is_contiguous()

    @staticmethod
    def repeat_interleave(a, r):
        return a.repeat_interleave(r, dim=1)

    @staticmethod
    def same_memory(a, b):
        return a.data_ptr() == b.data_ptr()


class Cases:
    ops = None

    def use(self, tree):
        rocm_aiter_mla.use_backend(Backend(golden(tree)))

    def tearDown(self):
        rocm_aiter_mla.use_backend(None)

    def test_h24_query_is_tile_padded_to_h32(self):
        self.use("h24-missing")
        q = self.ops.heads(24)
        padded = AiterMLAHelper.get_mla_padded_q(24, q)
        self.assertEqual(tuple(padded.shape), (2, 32, 4))
        self.assertTrue(self.ops.contiguous(padded))
        self.assertTrue(self.ops.same(padded[:, :24], q))
        self.assertTrue(self.ops.same(padded[:, 24:], q[:, :8]))

    def test_h24_output_discards_h32_padding_heads(self):
        self.use("h24-missing")
        o = self.ops.heads(32)
        self.assertTrue(self.ops.same(AiterMLAHelper.get_mla_unpadded_o(24, o), o[:, :24]))

    def test_h24_reducer_without_metadata_still_pads_to_h32(self):
        self.use("h24-reducer-only")
        self.assertIs(rocm_aiter_mla._aiter_mla_native_h24_reducer_supported(), True)
        self.assertIs(rocm_aiter_mla._aiter_mla_native_h24_metadata_supported(), False)
        self.assertIs(rocm_aiter_mla._aiter_mla_native_h24_supported(), False)
        q = self.ops.heads(24)
        self.assertEqual(AiterMLAHelper.get_actual_mla_num_heads(24), 32)
        padded = AiterMLAHelper.get_mla_padded_q(24, q)
        self.assertEqual(tuple(padded.shape), (2, 32, 4))
        self.assertTrue(self.ops.same(padded[:, :24], q))
        self.assertTrue(self.ops.same(padded[:, 24:], q[:, :8]))

    def test_native_h24_requires_reducer_and_metadata(self):
        self.use("h24-native")
        self.assertIs(rocm_aiter_mla._aiter_mla_native_h24_reducer_supported(), True)
        self.assertIs(rocm_aiter_mla._aiter_mla_native_h24_metadata_supported(), True)
        self.assertIs(rocm_aiter_mla._aiter_mla_native_h24_supported(), True)
        q = self.ops.heads(24)
        self.assertEqual(AiterMLAHelper.get_actual_mla_num_heads(24), 24)
        self.assertIs(AiterMLAHelper.get_mla_padded_q(24, q), q)
        self.assertIs(AiterMLAHelper.get_mla_unpadded_o(24, q), q)

    def test_unaligned_head_counts_round_trip_through_h32(self):
        for tree in ("h24-missing", "h24-native"):
            self.use(tree)
            for n in (17, 24, 31):
                if tree == "h24-native" and n == 24:
                    continue
                with self.subTest(tree=tree, heads=n):
                    q = self.ops.heads(n)
                    padded = AiterMLAHelper.get_mla_padded_q(n, q)
                    self.assertEqual(tuple(padded.shape), (2, 32, 4))
                    self.assertTrue(self.ops.contiguous(padded))
                    self.assertTrue(self.ops.same(AiterMLAHelper.get_mla_unpadded_o(n, padded), q))

    def test_aligned_h32_is_zero_copy(self):
        self.use("h24-missing")
        q = self.ops.heads(32)
        self.assertIs(AiterMLAHelper.get_mla_padded_q(32, q), q)
        self.assertIs(AiterMLAHelper.get_mla_unpadded_o(32, q), q)

    def test_existing_divisor_head_mapping_is_unchanged(self):
        self.use("h24-missing")
        q = self.ops.heads(8)
        padded = AiterMLAHelper.get_mla_padded_q(8, q)
        self.assertTrue(self.ops.same(padded, self.ops.repeat_interleave(q, 2)))
        self.assertTrue(self.ops.same(AiterMLAHelper.get_mla_unpadded_o(8, padded), q))
        self.assertTrue(self.ops.same(AiterMLAHelper.get_mla_unpadded_lse(8, padded), q))

    def test_all_small_head_counts_pad_to_16_and_round_trip(self):
        self.use("h24-missing")
        for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15):
            with self.subTest(heads=n):
                q = self.ops.heads(n)
                padded = AiterMLAHelper.get_mla_padded_q(n, q)
                self.assertEqual(tuple(padded.shape), (2, 16, 4))
                self.assertTrue(self.ops.contiguous(padded))
                self.assertTrue(self.ops.same(AiterMLAHelper.get_mla_unpadded_o(n, padded), q))

    def test_h6_is_tiled_to_h16(self):
        self.use("h24-missing")
        q = self.ops.heads(6)
        padded = AiterMLAHelper.get_mla_padded_q(6, q)
        self.assertTrue(self.ops.same(padded, q[:, [i % 6 for i in range(16)]]))

    def test_without_a_manifest_pads_as_vllm(self):
        logging.disable(logging.WARNING)
        self.addCleanup(logging.disable, logging.NOTSET)
        rocm_aiter_mla.use_backend(Backend(None, "no manifest saved"))
        self.assertIs(rocm_aiter_mla._aiter_mla_native_h24_supported(), False)
        self.assertEqual(AiterMLAHelper.get_actual_mla_num_heads(24), 32)
        q = self.ops.heads(24)
        padded = AiterMLAHelper.get_mla_padded_q(24, q)
        self.assertTrue(self.ops.same(padded[:, 24:], q[:, :8]))
        self.assertTrue(self.ops.same(AiterMLAHelper.get_mla_unpadded_o(24, padded), q))
        self.assertEqual(rocm_aiter_mla._gluon_mla_max_bh16_heads(), 16)


    def test_index_tensors_are_made_once(self):
        self.use("h24-missing")
        q = self.ops.heads(24)
        padding = AiterMLAHelper.padding(24)
        self.assertIs(AiterMLAHelper.padding(24), padding)
        index = padding.index_on(q)
        for _ in range(3):
            AiterMLAHelper.get_mla_padded_q(24, q)
        self.assertIs(padding.index_on(q), index)
        self.assertEqual([int(i) for i in index], list(range(24)) + list(range(8)))
        # The output's crop is a view of the launch's output.
        o = self.ops.heads(32)
        self.assertTrue(self.ops.same_memory(AiterMLAHelper.get_mla_unpadded_o(24, o), o))

    def test_decoder_pads_into_its_buffer_every_step(self):
        """Made once with a buffer (before graph capture), each step gathers
        into the same memory; the decode over padded heads cropped back is
        the decode over the real ones (heads are independent)."""
        self.use("h24-missing")
        seen = []

        def decode(q):
            seen.append(q)
            return q * 2 + 1
        for heads in (5, 8, 24, 32):
            with self.subTest(heads=heads):
                del seen[:]
                like = self.ops.heads(heads)
                decoder = AiterMLADecode(heads, decode, like=like, max_tokens=4)
                for step in range(3):
                    q = self.ops.heads(heads) + step
                    self.assertTrue(self.ops.same(decoder.forward_mqa(q), q * 2 + 1))
                launch = AiterMLAHelper.get_actual_mla_num_heads(heads)
                self.assertEqual([tuple(s.shape) for s in seen], [(2, launch, 4)] * 3)
                if launch != heads:
                    self.assertTrue(all(self.ops.same_memory(s, decoder._buffer)
                                        for s in seen))
        with self.assertRaisesRegex(AssertionError, "not 129"):
            AiterMLADecode(129, decode)

@unittest.skipIf(numpy is None, "numpy is not installed (python3-numpy)")
class NumpyTest(Cases, unittest.TestCase):
    ops = NumpyOps


@unittest.skipIf(torch is None, "torch is not installed")
class TorchTest(Cases, unittest.TestCase):
    ops = TorchOps


class ProbeTest(unittest.TestCase):
    """Each probe of rocm_aiter_mla.py and _aiter_ops.py, over trees whose
    answers differ."""

    def use(self, tree):
        rocm_aiter_mla.use_backend(Backend(golden(tree)))
        self.addCleanup(rocm_aiter_mla.use_backend, None)

    def test_ops_probes(self):
        names = ("_check_aiter_mla_fp8_support", "mla_decode_supports_non_causal",
                 "mla_decode_supports_return_lse", "topk_softmax_supports_fused_sigmoid",
                 "fused_moe_supports_gate_mode", "dsv4_shared_expert_fused_moe_available",
                 "qr_all_reduce_rmsnorm_available", "is_hipb_mm_available")
        for tree, want in (("py-positive", (True,) * 8),
                           ("py-traps", (False, True, False, True, True, False, False, True)),
                           ("h24-native", (False,) * 8)):
            self.use(tree)
            self.assertEqual(tuple(getattr(rocm_aiter_ops, n)() for n in names), want, tree)

    def test_mla_decode_fwd_binds_the_callers_keywords(self):
        self.use("mla-lookup-causal1")
        if hasattr(rocm_aiter_mla.aiter_backend(), "binds"):
            self.skipTest("Backend.binds answers: its own tests pin it")
        self.assertIs(rocm_aiter_ops.mla_decode_fwd_binds(["causal", "return_lse"]), True)
        self.assertIs(rocm_aiter_ops.mla_decode_fwd_binds(["q_scale"]), False)
        self.assertIsNone(rocm_aiter_ops.mla_decode_fwd_binds(["sm_scale"]))

    def test_mla_probes(self):
        self.use("py-positive")
        b = rocm_aiter_mla.aiter_backend()
        self.assertIs(rocm_aiter_mla._fp8_mla_prefill_supported("gfx942"), False)
        self.assertIs(rocm_aiter_mla._fp8_mla_prefill_supported("gfx950:sramecc+:xnack-"),
                      b.mla_prefill_fp8_persistent())
        self.assertIs(rocm_aiter_mla._segmented_mla_decode_supported("gfx942"), False)
        self.assertIs(rocm_aiter_mla._segmented_mla_decode_supported("gfx950"),
                      b.mla_decode_segmented())
        self.assertIs(rocm_aiter_mla._gluon_mla_decode_supported(),
                      b.gluon_mla_decode_small_heads())
        self.assertEqual(rocm_aiter_mla.asm_lse_ps_kernel_qlen("gfx950"),
                         b.ps_lse_qlens("gfx950"))
        if not hasattr(b, "native_heads"):
            self.assertIsNone(rocm_aiter_mla._aiter_mla_natively_supported(
                "gfx950", "bf16", "bf16", 24, 1))

    def test_fp8_prefill_head_counts_are_the_reducers(self):
        # old-layout's reducer: 16 heads at head dim 128, 24 and 128 at 512.
        self.use("old-layout")
        if hasattr(rocm_aiter_mla.aiter_backend(), "reducer_heads"):
            self.skipTest("Backend.reducer_heads answers: its own tests pin it")
        self.assertIs(rocm_aiter_mla._fp8_mla_prefill_num_heads_supported(16), True)
        self.assertIs(rocm_aiter_mla._fp8_mla_prefill_num_heads_supported(32), False)
        self.assertIs(rocm_aiter_mla._fp8_mla_prefill_num_heads_supported(24, 512), True)


class HelperTest(unittest.TestCase):
    def test_is_valid_num_heads(self):
        for n in range(1, 129):
            self.assertTrue(AiterMLAHelper.is_valid_num_heads(n))
        self.assertTrue(AiterMLAHelper.is_valid_num_heads(144))
        self.assertFalse(AiterMLAHelper.is_valid_num_heads(0))
        self.assertFalse(AiterMLAHelper.is_valid_num_heads(129))


if __name__ == "__main__":
    unittest.main(verbosity=2)
