# SPDX-License-Identifier: MIT
"""Every decision vLLM and SGLang make about AITER, answered from the AITER
this interpreter imports.

    from aiter_probe.backend import for_this_process

    aiter = for_this_process()          # the process's, made on first call
    launch_heads, mode = aiter.mla_launch_heads(24)
    pad = aiter.mla_pad_index(24)       # once per head count, not per step:
    index = None if pad is None else torch.tensor(pad, device=q.device)
    q = q if index is None else q.index_select(1, index)
    aiter.why("mla_launch_heads", 24)   # the reason of that answer
    heads, why = aiter.answer("mla_launch_heads", 24)  # both at once

One method per decision, over a manifest: the saved one when it is fresh,
trusted and made for this AITER, else the tree scanned in process (the
engine pip installs with the package; no manifest needed). With neither
(the engine cannot load, the scan fails, and no usable saved manifest)
every answer is the conservative one the backends take today: not
supported, the Gluon head bound 16, MLA heads padded as vLLM pads them, and
the reason is logged once (logger "aiter_probe", a warning). What the node
decides at run time (the GPU architecture, environment switches) the
caller gives: the methods that AITER answers by arch or dtype take them
(aiter_probe.arch reads torch's names) and say what the tree decides.
"""

import os
import re
import threading

from . import _logger
from .calls import CallsMixin
from .arch import base_arch, dtype_class, natively_supported
from .installed import scanned_or_saved
from .mla_lookup import DecodeLookup, Unreadable

__all__ = ["Backend", "for_this_process"]

# The annotations are strings, their names imported for type checkers only:
# typing would cost a fresh interpreter 10 ms, as much as the answers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, FrozenSet, List, Optional, Tuple  # noqa: F401
    from . import Manifest  # noqa: F401

# Reasons already logged: a server builds several backends from one state.
_LOGGED = set()

# A capture that is a whole number as the kinds write one: ASCII digits only
# (str.isdigit also takes "²", which int() refuses).
_WHOLE = re.compile(r"[0-9]+\Z")
# The ASM MLA decode's head granularity (vLLM's _AITER_MIN_MLA_HEADS).
MLA_HEAD_STEP = 16
# The Gluon decode's head bound when nothing says otherwise (vLLM's fallback).
GLUON_MAX_HEADS = 16
# The heads plans.mla_heads covers; above it only multiples of MLA_HEAD_STEP.
PLAN_MAX_HEADS = 128
# vLLM's constant "LSE only for qseqlen {1, 4}" (gfx950), the answer without
# a manifest; the rules whose matches give each architecture's decode lookup
# (mla_lookup.DecodeLookup's arguments; None: may be unmatched).
_PS_LSE_QLENS_TODAY = {"gfx950": frozenset({1, 4})}
# gfx942's lookup is gfx950's without its overrides (each asks arch_id ==
# "gfx950"), over its own table.
_PS_LSE_LOOKUP_RULES = {arch: (
    ("rows", "mla.asm.%s.bf16_decode_rows" % arch, True),
    ("causal", "mla.asm.decode.causal", True),
    ("pad", "mla.asm.decode.bf16_gqa16_pad", True)) + ((
        ("folds", "mla.asm.decode.gfx950_bf16_ps_fold", False),) if arch == "gfx950" else ()) + (
    ("lse", "mla.asm.decode.lse_flag", False),
    ("gate", "mla.decode_fwd.persistent_gate", False)) for arch in ("gfx942", "gfx950")}
# The optional keywords of aiter.mla.mla_decode_fwd and the capability of each.
_DECODE_FWD_KEYWORDS = (("q_scale", "mla.decode_fwd.fp8_scales"),
                        ("kv_scale", "mla.decode_fwd.fp8_scales"),
                        ("causal", "mla.decode_fwd.causal"),
                        ("return_lse", "mla.decode_fwd.return_lse"))

# Decisions that are a capability's verdict: method name -> capability id.
_CAPABILITIES = {
    "mla_decode_native_24_heads": "mla.decode.native_h24",
    "mla_prefill_fp8_persistent": "mla.fp8_prefill_ps",
    "gluon_mla_decode_small_heads": "mla.gluon_decode.small_heads",
    "mla_decode_segmented": "mla.segmented_decode",
    "fused_moe_gate_mode": "fused_moe.gate_mode",
    "fused_moe_dsv4_shared_expert": "fused_moe.dsv4_shared_expert",
    "topk_softmax_shared_experts": "topk_softmax.num_shared_experts",
    "hipb_mm": "aiter.hipb_mm",
    "qr_all_reduce_rmsnorm": "aiter.qr_all_reduce_rmsnorm",
    "vllm_calls_bind": "vllm.calls_bind",
}
# Decisions that are one rule's status: method name -> rule id.
_RULES = {
    "mla_reducer_24_heads_512": "mla.reduce.native_h24_d512",
    "mla_planner_24_heads": "mla.metadata.native_h24",
}


def _vllm_padding(heads):
    """(launch_heads, mode) as vLLM pads without native 24 heads: up to a
    multiple of 16; repeated when that is a multiple of heads, else tiled."""
    launch = -(-heads // MLA_HEAD_STEP) * MLA_HEAD_STEP
    if launch == heads:
        return launch, "none"
    return launch, "repeat-interleave" if launch % heads == 0 else "tile-slice"


def _check_heads(heads):
    if isinstance(heads, bool) or not isinstance(heads, int):
        raise TypeError("heads must be an int, not %s" % type(heads).__name__)
    if heads < 1 or (heads > PLAN_MAX_HEADS and heads % MLA_HEAD_STEP != 0):
        raise ValueError("MLA decode takes 1 to %d heads or a multiple of %d, not %d"
                         % (PLAN_MAX_HEADS, MLA_HEAD_STEP, heads))


class Backend(CallsMixin):
    """The AITER decisions of one serving process, from one manifest.

    manifest: an aiter_probe.Manifest, already checked fresh and for this
    AITER (for_installed_aiter does both) or scanned in process
    (aiter_probe.engine.scan_tree), or None; reason: why there is none."""

    def __init__(self, manifest: "Optional[Manifest]", reason: "Optional[str]" = None) -> None:
        self.manifest = manifest
        self.reason = reason
        # The reasons a decision records while it answers, per thread: why()
        # asks the decision again and reads what that very call recorded, so
        # a Backend shared by threads gives each caller its own reason.
        self._reasons = threading.local()
        # Launch plans by head count: the answer and its reason, the same
        # for every caller (the manifest does not change).
        self._plans = {}
        if manifest is None:
            self._none = "no manifest (%s)" % (reason or "none given")
            message = "no AITER capability manifest, so every AITER decision takes the " \
                      "conservative answer: %s" % (reason or "none given")
            if message not in _LOGGED:
                _LOGGED.add(message)
                _logger().warning("%s", message)

    # --- how an answer is found and its reason kept --------------------------

    @property
    def _why(self):
        """This thread's record of reasons (name -> reason): written by the
        decisions as they answer, read only by answer(), which gives each
        call a fresh one."""
        try:
            return self._reasons.of
        except AttributeError:
            self._reasons.of = {}
            return self._reasons.of

    def _answer(self, name, value, why):
        self._why[name] = why
        return value

    def _verdict(self, cap):
        """(supported, reason) of a capability; not supported without it."""
        if self.manifest is None:
            return False, "%s: %s" % (cap, self._none)
        entry = self.manifest.data["capabilities"].get(cap)
        if entry is None:
            return False, "%s: not in %s (scanned without its pack)" % (cap, self.manifest.path)
        return entry["supported"], "%s %s: %s" % (
            cap, "supported" if entry["supported"] else "not supported", entry["reason"])

    def _capability(self, name):
        return self._answer(name, *self._verdict(_CAPABILITIES[name]))

    def _rule(self, name, rule_id):
        """The rule's entry, or None with the conservative reason kept."""
        if self.manifest is None:
            self._why[name] = "%s: %s" % (rule_id, self._none)
            return None
        rule = self.manifest.data["rules"].get(rule_id)
        if rule is None:
            self._why[name] = "%s: not in %s (scanned without its pack)" % (
                rule_id, self.manifest.path)
        return rule

    @staticmethod
    def _rule_words(rule_id, rule):
        if rule["status"] == "matched":
            where = rule["matches"][0]["line"] if rule["matches"] else None
            return "rule %s matched%s" % (
                rule_id, " at %s:%d" % (rule["file"], where) if where else "")
        if rule["status"] == "unmatched" and rule["file"]:
            return "rule %s did not match in %s" % (rule_id, rule["file"])
        return "rule %s is %s%s" % (rule_id, rule["status"],
                                    ": " + rule["reason"] if rule.get("reason") else "")

    def _rule_matched(self, name):
        rule_id = _RULES[name]
        rule = self._rule(name, rule_id)
        if rule is None:
            return False
        return self._answer(name, rule["status"] == "matched", self._rule_words(rule_id, rule))

    # --- the decisions ------------------------------------------------------

    def mla_decode_native_24_heads(self) -> bool:
        """MLA decode runs 24 heads natively: the reducer and the planner both
        take 24 (and a launch, where one ran, agreed). vLLM's
        _aiter_mla_native_h24_supported."""
        return self._capability("mla_decode_native_24_heads")

    def mla_reducer_24_heads_512(self) -> bool:
        """The reducer half: a 24 x 512 dispatch case (vLLM's
        _aiter_mla_native_h24_reducer_supported)."""
        return self._rule_matched("mla_reducer_24_heads_512")

    def mla_planner_24_heads(self) -> bool:
        """The planner half: a num_heads == 24 branch (vLLM's
        _aiter_mla_native_h24_metadata_supported)."""
        return self._rule_matched("mla_planner_24_heads")

    def mla_launch_heads(self, heads, arch=None):
        """(launch_heads, mode) for MLA decode with `heads` query heads, mode
        "none", "repeat-interleave" or "tile-slice" (plans.mla_heads). With
        arch (as torch or rocminfo prints it), the plan for that
        architecture: a launch verifies it only on a device of that arch;
        None for a string that is no architecture."""
        _check_heads(heads)
        # Asked per layer and step: the plan is read once per head count.
        key = heads if arch is None else (heads, arch)
        if key not in self._plans:
            self._plans[key] = self._plan(heads) if arch is None else self._arch_plan(heads, arch)
        answer, self._why["mla_launch_heads"] = self._plans[key]
        return answer

    def _plan(self, heads):
        if heads > PLAN_MAX_HEADS:
            return (heads, "none"), "%d heads: a multiple of %d, run as is" % (
                heads, MLA_HEAD_STEP)
        if self.manifest is None:
            launch, mode = _vllm_padding(heads)
            return (launch, mode), "%d heads launch as %d (%s), as vLLM pads: %s" % (
                heads, launch, mode, self._none)
        # The reader refused every row but the planner's padding (launch_heads
        # at least heads, the planner's mode), so a row found is one to use.
        try:
            launch, mode, verified = self.manifest.launch_heads(heads)
        except KeyError:
            launch, mode = _vllm_padding(heads)
            return (launch, mode), "%d heads launch as %d (%s), as vLLM pads: plans.mla_heads " \
                "of %s has no row for %d heads" % (heads, launch, mode, self.manifest.path, heads)
        return (launch, mode), "%d heads launch as %d (%s): plans.mla_heads of %s (%s)" % (
            heads, launch, mode, self.manifest.path,
            "verified by a launch" if verified else "not verified by a launch")

    def mla_pad_index(self, heads: int) -> "Optional[List[int]]":
        """For each launch head, the query head it holds (q[:, index]); None
        when heads run as they are (no copy)."""
        launch, mode = self.mla_launch_heads(heads)
        self._why["mla_pad_index"] = self._why["mla_launch_heads"]
        if mode == "none":
            return None
        if mode == "repeat-interleave":
            step = launch // heads
            return [j // step for j in range(launch)]
        return [j % heads for j in range(launch)]

    def mla_unpad_index(self, heads: int) -> "Optional[List[int]]":
        """The launch heads that hold the real heads, in order (o[:, index]);
        None when no copy is needed."""
        launch, mode = self.mla_launch_heads(heads)
        self._why["mla_unpad_index"] = self._why["mla_launch_heads"]
        if mode == "none":
            return None
        if mode == "repeat-interleave":
            return list(range(0, launch, launch // heads))
        return list(range(heads))

    def mla_prefill_fp8_persistent(self) -> bool:
        """FP8 persistent ASM MLA prefill binds vLLM's calls (the AITER half of
        vLLM's _fp8_mla_prefill_supported; gfx950 is the caller's)."""
        return self._capability("mla_prefill_fp8_persistent")

    def gluon_mla_decode_small_heads(self) -> bool:
        """Gluon MLA decode exists and takes at least 15 heads: small-head
        decode may go to it (vLLM's _get_mla_gluon, SGLang's _gluon_fn)."""
        return self._capability("gluon_mla_decode_small_heads")

    def gluon_mla_decode_max_heads(self) -> int:
        """The most heads the Gluon MLA decode entry takes (vLLM's
        _gluon_mla_max_bh16_heads): the tree's bound, 0 when the tree has no
        entry or its entry bounds nothing (an entry that takes only 64 or 128
        heads); vLLM's 16 only without a manifest, or with one scanned
        without the rule's pack."""
        name, rule_id = "gluon_mla_decode_max_heads", "mla.gluon_decode.max_heads"
        rule = self._rule(name, rule_id)
        if rule is None:
            return GLUON_MAX_HEADS
        words = self._rule_words(rule_id, rule)
        heads = rule["matches"][0]["captures"].get("heads", "") if rule["matches"] else ""
        if rule["status"] == "matched" and _WHOLE.match(heads) and int(heads) <= 1 << 20:
            return self._answer(name, int(heads), "%s, bound %s" % (words, heads))
        # Too high a bound trips the kernel's assertion; 0 only costs the
        # slower ASM path.
        return self._answer(name, 0, "%s: no bound read, 0" % words)

    def mla_decode_segmented(self) -> bool:
        """The Triton MLA decode binds vLLM's segmented (DCP verify) call."""
        return self._capability("mla_decode_segmented")

    def mla_decode_fwd_keywords(self) -> "FrozenSet[str]":
        """The optional keywords aiter.mla.mla_decode_fwd takes, of q_scale,
        kv_scale, causal and return_lse (a frozenset)."""
        taken, reasons = set(), []
        for keyword, cap in _DECODE_FWD_KEYWORDS:
            supported, why = self._verdict(cap)
            if supported:
                taken.add(keyword)
            if why not in reasons:
                reasons.append(why)
        return self._answer("mla_decode_fwd_keywords", frozenset(taken), "; ".join(reasons))

    def fused_moe_gate_mode(self) -> bool:
        """aiter.fused_moe.fused_moe takes gate_mode."""
        return self._capability("fused_moe_gate_mode")

    def fused_moe_dsv4_shared_expert(self) -> bool:
        """Fused MoE with the DSV4 shared expert (the static half of vLLM's
        _probe_dsv4_i384_fhmoe_capability)."""
        return self._capability("fused_moe_dsv4_shared_expert")

    def topk_softmax_shared_experts(self) -> bool:
        """The exported topk_softmax takes num_shared_experts (vLLM's
        topk_softmax_supports_fused_sigmoid)."""
        return self._capability("topk_softmax_shared_experts")

    def hipb_mm(self) -> bool:
        """aiter exports hipb_mm (vLLM's hasattr(aiter, "hipb_mm"))."""
        return self._capability("hipb_mm")

    def qr_all_reduce_rmsnorm(self) -> bool:
        """aiter exports the fused quick all-reduce + RMSNorm."""
        return self._capability("qr_all_reduce_rmsnorm")

    def ps_lse_qlens(self, arch, causal=True):
        """The query lengths (of 1 to 16, a frozenset of ints) for which
        arch's persistent bf16 MLA decode with 16 query heads per KV head
        and an LSE finds a kernel, as its lookup asks (padding, gfx950's
        folds onto other kernels, the causal it asks, the batch that drops
        persistence): a length it lacks crashes the kernel lookup. arch as
        torch or rocminfo prints it (gfx950:sramecc+:xnack- is gfx950);
        gfx942 and gfx950. Empty when the tree cannot say; None for an
        architecture no rule reads the table of. Without a manifest, vLLM's
        constant ({1, 4} on gfx950, empty on gfx942)."""
        name = "ps_lse_qlens"
        arch_name = arch
        arch, arch_why = base_arch(arch)
        if arch is None:
            return self._answer(name, None, arch_why)
        today = _PS_LSE_QLENS_TODAY.get(arch, frozenset())
        rules = _PS_LSE_LOOKUP_RULES.get(arch)
        if rules is None:
            return self._answer(name, None, "%s: no rule reads the query lengths of its MLA ASM "
                                "table (hsa/%s/mla/mla_asm.csv); rules read gfx942's and "
                                "gfx950's" % (arch_why, arch))
        args = {"folds": []}
        for key, rule_id, must_match in rules:
            rule = self._rule(name, rule_id)
            if rule is None:
                return today
            # Only a match reads the tree: an unknown or unreadable one gives none.
            if rule["status"] not in ("matched", "unmatched") or (
                    must_match and rule["status"] != "matched"):
                return self._answer(name, frozenset(), "%s: no query length"
                                    % self._rule_words(rule_id, rule))
            matches = rule["matches"] if rule["status"] == "matched" else []
            if key == "lse":
                args[key] = matches[0]["captures"].get("cond") if matches else None
            elif key == "gate":
                args[key] = bool(matches)
            else:
                args[key] = matches
        rows_file = self.manifest.data["rules"][rules[0][1]]["file"]
        try:
            lookup = DecodeLookup(**args)
            if not causal and lookup.causal_fixed is not None:
                return self._answer(name, frozenset(), "the decode's lookup asks causal %d "
                                    "whatever the caller (rule mla.asm.decode.causal): no "
                                    "non-causal query length" % lookup.causal_fixed)
            qlens, asked = lookup.qlens(causal)
        except (Unreadable, KeyError, TypeError) as e:
            return self._answer(name, frozenset(), "the decode's lookup cannot be read: %s: no "
                                "query length" % (e if isinstance(e, Unreadable) else
                                                  "a match lacks its capture %s" % e))
        return self._answer(name, qlens, "%s%s, %s: %s" % (
            "" if arch_name == arch else arch_why + ", ",
            "causal" if causal else "non-causal", rows_file, _describe_lookups(asked)))

    def reducer_cases(self) -> "FrozenSet[Tuple[int, int]]":
        """Every (heads, head_dim) case the MLA reducer dispatches (a frozenset
        of int pairs); empty without a manifest (no case assumed)."""
        name, rule_id = "reducer_cases", "mla.reduce.cases"
        rule = self._rule(name, rule_id)
        if rule is None:
            return frozenset()
        words = self._rule_words(rule_id, rule)
        if rule["status"] != "matched":
            return self._answer(name, frozenset(), words)
        cases = set()
        for c in self.manifest.captures(rule_id):
            try:
                cases.add((int(c["heads"]), int(c["head_dim"])))
            except (KeyError, ValueError):
                return self._answer(name, frozenset(), "%s: a case that is not a number"
                                    % words)
        return self._answer(name, frozenset(cases), "rule %s: %d cases in %s" % (
            rule_id, len(cases), rule["file"]) if cases else words)

    # --- decisions AITER takes by GPU architecture and dtype -----------------

    def _arch_plan(self, heads, arch):
        base, why = base_arch(arch)
        if base is None:
            return None, why
        answer, plan_why = self._plan(heads)
        devices = self.manifest.data.get("devices") or [] if self.manifest is not None else []
        ran = sorted({base_arch(d.get("arch"))[0] or str(d.get("arch")) for d in devices
                      if isinstance(d, dict)})
        if plan_why.endswith("(verified by a launch)") and base not in ran:
            plan_why = plan_why[:-len("(verified by a launch)")] + \
                "(verified by a launch on %s, not on %s)" % (", ".join(ran), base)
        return answer, "%s: %s" % (why, plan_why)

    def native_heads(self, arch: str, q_dtype: "Any", kv_dtype: "Any", heads: int, qlen: int,
                     experimental: "Optional[bool]" = None) -> "Optional[bool]":
        """The MLA metadata planner plans `heads` query heads at query length
        `qlen` as they are (its natively_supported; False: it folds them
        onto 16 heads when heads is a multiple of 16, else refuses them), for
        arch (as torch or rocminfo prints it) and q and kv dtypes (torch
        dtypes or their names). True, False, or None when the tree cannot
        tell: no manifest, no predicate in the tree (before v0.1.7.post3),
        one that does not read, an architecture or dtype it cannot name,
        or an answer that depends on AITER_ENABLE_EXPERIMENTAL when
        `experimental` (what AITER reads of it: atoi != 0) is not given."""
        name = "native_heads"
        for what, value in (("heads", heads), ("qlen", qlen)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("%s must be an int, not %s" % (what, type(value).__name__))
            if value < 1:
                raise ValueError("%s must be at least 1, not %d" % (what, value))
        base, arch_why = base_arch(arch)
        if base is None:
            return self._answer(name, None, arch_why)
        kinds = []
        for dtype in (q_dtype, kv_dtype):
            kind, dtype_why = dtype_class(dtype)
            if kind is None:
                return self._answer(name, None, dtype_why)
            kinds.append(kind)
        rule_id = "mla.metadata.natively_supported"
        rule = self._rule(name, rule_id)
        if rule is None:
            return None
        words = self._rule_words(rule_id, rule)
        if rule["status"] != "matched":
            return self._answer(name, None, words)
        if len(rule["matches"]) != 1:
            return self._answer(name, None, "%s %d times: not one predicate" % (
                words, len(rule["matches"])))
        hk_id = "mla.metadata.hk_mtp_experimental"
        hk_rule = self.manifest.data["rules"].get(hk_id)
        hk = None
        # Unmatched (or scanned without the rule): the tree defines no
        # hk_mtp_experimental, and a predicate naming it does not read.
        if hk_rule is not None and hk_rule["status"] == "matched":
            if len(hk_rule["matches"]) != 1:
                return self._answer(name, None, "%s: %s %d times: not one term" % (
                    words, self._rule_words(hk_id, hk_rule), len(hk_rule["matches"])))
            hk = hk_rule["matches"][0]["captures"].get("cond")
        elif hk_rule is not None and hk_rule["status"] != "unmatched":
            return self._answer(name, None, "%s: %s" % (words, self._rule_words(hk_id, hk_rule)))
        value, why = natively_supported(
            rule["matches"][0]["captures"].get("cond", ""), hk, base, kinds[0] == "fp8",
            kinds[1] == "fp8", heads, qlen, experimental)
        return self._answer(name, value, "%s, q %s, kv %s, %d heads, qlen %d: %s (%s)" % (
            arch_why, kinds[0], kinds[1], heads, qlen, why, words))

    def reducer_heads(self, head_dim: int) -> "Optional[FrozenSet[int]]":
        """The head counts the MLA reducer dispatches at head_dim (a frozenset
        of ints; empty when it has none there): at 128, the heads FP8 MLA
        prefill may take. None when the tree cannot tell (no manifest, its
        case table not read)."""
        if isinstance(head_dim, bool) or not isinstance(head_dim, int):
            raise TypeError("head_dim must be an int, not %s" % type(head_dim).__name__)
        if head_dim < 1:
            raise ValueError("head_dim must be at least 1, not %d" % head_dim)
        name, rule_id = "reducer_heads", "mla.reduce.cases"
        cases = self.reducer_cases()
        why = self._why["reducer_cases"]
        rule = self.manifest.data["rules"].get(rule_id) if self.manifest is not None else None
        # reducer_cases answers empty for both "no case" and "not read".
        if rule is None or rule["status"] not in ("matched", "unmatched") or (
                rule["status"] == "unmatched" and not rule["file"]) or (
                    rule["status"] == "matched" and not cases):
            return self._answer(name, None, why)
        heads = frozenset(h for h, d in cases if d == head_dim)
        return self._answer(name, heads, "head_dim %d: %s of %s" % (
            head_dim, ", ".join(str(h) for h in sorted(heads)) or "no case", why))

    def vllm_calls_bind(self) -> bool:
        """Every call vLLM makes into AITER without a guard binds."""
        return self._capability("vllm_calls_bind")

    # --- any capability by its id (the census packs) -------------------------

    def supported(self, capability: str) -> bool:
        """Whether the capability `capability` (an id of the shipped packs,
        e.g. "sglang.aiter_backend", "custom_ar.per_group_quant") holds:
        False without a manifest, or where it was scanned without its pack;
        why("supported", capability) gives the reason."""
        return self._answer("supported", *self._verdict(capability))

    def answer(self, name: str, *args: "Any", **kwargs: "Any") -> "Tuple[Any, Optional[str]]":
        """(the answer, its reason) of the decision `name` (a method name)
        asked with args: the same answer as the method's, and the reason of
        this very call, whatever other threads ask meanwhile. KeyError for
        a name that is no decision; TypeError when the arguments do not fit
        it."""
        method = None
        if not name.startswith("_") and name not in _NOT_DECISIONS:
            method = getattr(self, name, None)
        if method is None or not callable(method):
            raise KeyError("no decision named '%s'" % name)
        # A fresh record for this call (one decision may ask another, and
        # a decision of another Backend may be asked meanwhile).
        outer = self._why
        self._reasons.of = reasons = {}
        try:
            value = method(*args, **kwargs)
        finally:
            self._reasons.of = outer
        return value, reasons.get(name)

    def why(self, name: str, *args: "Any", **kwargs: "Any") -> "Optional[str]":
        """The reason of the decision `name` asked with args (the method's
        own arguments: why("ps_lse_qlens", "gfx950")): answer()'s reason."""
        return self.answer(name, *args, **kwargs)[1]


# Public methods that are not decisions.
_NOT_DECISIONS = frozenset({"answer", "why"})


def _describe_lookups(asked):
    """Each run of query lengths asking one key: "1-7 Gqa 64 qSeqLen 1 causal
    0 lse 1 (line 45)", or "not in the table"."""
    out = []
    for q, key, line in asked:
        gqa, ps, qlen, causal, lse = key
        what = "%sGqa %d qSeqLen %d causal %d%s %s" % (
            "" if ps else "without persistence ", gqa, qlen, causal,
            "" if lse is None else " lse %d" % lse,
            "(line %d)" % line if line is not None else "not in the table")
        if out and out[-1][2] == what and out[-1][1] == q - 1:
            out[-1][1] = q
        else:
            out.append([q, q, what])
    return "; ".join("%s %s" % ("%d-%d" % (a, b) if b > a else "%d" % a, w) for a, b, w in out)


_lock = threading.Lock()
_backend = None


def _lock_again():
    """After fork, in the child: a lock another thread of the parent held
    would never be released there. An answer already made holds (the files
    are the same); one being made is made again."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # Python 3.7
    os.register_at_fork(after_in_child=_lock_again)


def _forget() -> None:
    """Drops the process's Backend (tests: another tree, another environment)."""
    global _backend
    with _lock:
        _backend = None


def for_this_process() -> "Backend":
    """The Backend of this process over the AITER this interpreter imports
    (found without importing it): its saved manifest when fresh and trusted,
    else that tree scanned in process (installed.scanned_or_saved), else
    the conservative answers with one warning. Made once per process, on
    first call, from any thread."""
    global _backend
    with _lock:
        if _backend is None:
            _backend = Backend(*scanned_or_saved())
        return _backend
