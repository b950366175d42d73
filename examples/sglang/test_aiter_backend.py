# SPDX-License-Identifier: MIT
"""What SGLang's own tests pin about its reducer head table and the FP8
prefill head count, over the manifest instead of a hard-coded copy; and
where the copy and the tree disagree.

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
from aiter_backend import _fp8_prefill_num_head, mla_reduce_v1_heads  # noqa: E402
from aiter_backend import (  # noqa: E402
    _aiter_fused_moe_supports_no_combine,
    aiter_backend_importable,
    aiter_moe_enums_present,
)


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
                      aiter_backend.aiter_backend().why("sglang.aiter_backend"))
        # scanned without the SGLang pack: no
        self.assertFalse(aiter_moe_enums_present())
        self.assertIn("scanned without its pack",
                      aiter_backend.aiter_backend().why("sglang.moe_enums"))

    def test_fixture_trees_lack_sglangs_imports(self):
        use("old-layout")
        self.assertFalse(aiter_backend_importable())
        self.assertFalse(_aiter_fused_moe_supports_no_combine())

    def test_no_manifest_says_no(self):
        aiter_backend.use_backend(Backend(None, "none here"))
        self.assertFalse(aiter_moe_enums_present())


if __name__ == "__main__":
    unittest.main(verbosity=2)
