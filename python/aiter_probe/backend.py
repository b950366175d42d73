# SPDX-License-Identifier: MIT
"""Every decision vLLM and SGLang make about AITER, answered from the AITER
this interpreter imports.

    from aiter_probe.backend import for_this_process

    aiter = for_this_process()          # the process's, made on first call
    launch_heads, mode = aiter.mla_launch_heads(24)
    q = q[:, aiter.mla_pad_index(24)] if aiter.mla_pad_index(24) is not None else q
    aiter.why("mla_launch_heads")       # the reason of the last answer

One method per decision, over a manifest: the saved one when it is fresh,
trusted and made for this AITER, else the tree scanned in process (the
engine pip installs with the package; no manifest needed). With neither
(the engine cannot load, the scan fails, and no usable saved manifest)
every answer is the conservative one the backends take today: not
supported, the Gluon head bound 16, MLA heads padded as vLLM pads them, and
the reason is logged once (logger "aiter_probe", a warning). Answers that
depend on the node at run time (the GPU architecture, environment switches)
stay the caller's: these say what the AITER tree holds.
"""

import os
import re
import threading

from . import _logger
from .installed import scanned_or_saved
from .mla_lookup import DecodeLookup, Unreadable

__all__ = ["Backend", "for_this_process"]

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
_PS_LSE_LOOKUP_RULES = {"gfx950": (
    ("rows", "mla.asm.gfx950.bf16_decode_rows", True),
    ("causal", "mla.asm.decode.causal", True),
    ("pad", "mla.asm.decode.bf16_gqa16_pad", True),
    ("folds", "mla.asm.decode.gfx950_bf16_ps_fold", False),
    ("lse", "mla.asm.decode.lse_flag", False),
    ("gate", "mla.decode_fwd.persistent_gate", False))}
# The optional keywords of aiter.mla.mla_decode_fwd and the capability of each.
_DECODE_FWD_KEYWORDS = (("q_scale", "mla.decode_fwd.fp8_scales"),
                        ("kv_scale", "mla.decode_fwd.fp8_scales"),
                        ("causal", "mla.decode_fwd.causal"),
                        ("return_lse", "mla.decode_fwd.return_lse"))

# Decisions that are a capability's verdict: method name -> capability id.
_CAPABILITIES = {
    "native_h24": "mla.decode.native_h24",
    "fp8_mla_prefill": "mla.fp8_prefill_ps",
    "gluon_small_heads": "mla.gluon_decode.small_heads",
    "segmented_decode": "mla.segmented_decode",
    "fused_moe_gate_mode": "fused_moe.gate_mode",
    "dsv4_shared_expert": "fused_moe.dsv4_shared_expert",
    "topk_softmax_shared_experts": "topk_softmax.num_shared_experts",
    "hipb_mm": "aiter.hipb_mm",
    "qr_all_reduce_rmsnorm": "aiter.qr_all_reduce_rmsnorm",
    "vllm_calls_bind": "vllm.calls_bind",
}
# Decisions that are one rule's status: method name -> rule id.
_RULES = {
    "native_h24_reducer": "mla.reduce.native_h24_d512",
    "native_h24_planner": "mla.metadata.native_h24",
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


class Backend:
    """The AITER decisions of one serving process, from one manifest.

    manifest: an aiter_probe.Manifest, already checked fresh and for this
    AITER (for_installed_aiter does both) or scanned in process
    (aiter_probe.engine.scan_tree), or None; reason: why there is none."""

    def __init__(self, manifest, reason=None):
        self.manifest = manifest
        self.reason = reason
        self._why = {}
        self._plans = {}
        if manifest is None:
            self._none = "no manifest (%s)" % (reason or "none given")
            message = "no AITER capability manifest, so every AITER decision takes the " \
                      "conservative answer: %s" % (reason or "none given")
            if message not in _LOGGED:
                _LOGGED.add(message)
                _logger().warning("%s", message)

    # --- how an answer is found and its reason kept --------------------------

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

    def native_h24(self):
        """MLA decode runs 24 heads natively: the reducer and the planner both
        take 24 (and a launch, where one ran, agreed). vLLM's
        _aiter_mla_native_h24_supported."""
        return self._capability("native_h24")

    def native_h24_reducer(self):
        """The reducer half: a 24 x 512 dispatch case (vLLM's
        _aiter_mla_native_h24_reducer_supported)."""
        return self._rule_matched("native_h24_reducer")

    def native_h24_planner(self):
        """The planner half: a num_heads == 24 branch (vLLM's
        _aiter_mla_native_h24_metadata_supported)."""
        return self._rule_matched("native_h24_planner")

    def mla_launch_heads(self, heads):
        """(launch_heads, mode) for MLA decode with `heads` query heads, mode
        "none", "repeat-interleave" or "tile-slice" (plans.mla_heads)."""
        _check_heads(heads)
        # Asked per layer and step: the plan is read once per head count.
        if heads not in self._plans:
            self._plans[heads] = self._plan(heads)
        answer, self._why["mla_launch_heads"] = self._plans[heads]
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

    def mla_pad_index(self, heads):
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

    def mla_unpad_index(self, heads):
        """The launch heads that hold the real heads, in order (o[:, index]);
        None when no copy is needed."""
        launch, mode = self.mla_launch_heads(heads)
        self._why["mla_unpad_index"] = self._why["mla_launch_heads"]
        if mode == "none":
            return None
        if mode == "repeat-interleave":
            return list(range(0, launch, launch // heads))
        return list(range(heads))

    def fp8_mla_prefill(self):
        """FP8 persistent ASM MLA prefill binds vLLM's calls (the AITER half of
        vLLM's _fp8_mla_prefill_supported; gfx950 is the caller's)."""
        return self._capability("fp8_mla_prefill")

    def gluon_small_heads(self):
        """Gluon MLA decode exists and takes at least 15 heads: small-head
        decode may go to it (vLLM's _get_mla_gluon, SGLang's _gluon_fn)."""
        return self._capability("gluon_small_heads")

    def gluon_max_heads(self):
        """The most heads the Gluon MLA decode entry takes (vLLM's
        _gluon_mla_max_bh16_heads): the tree's bound, 0 when the tree has no
        entry or its entry bounds nothing (an entry that takes only 64 or 128
        heads); vLLM's 16 only without a manifest, or with one scanned
        without the rule's pack."""
        name, rule_id = "gluon_max_heads", "mla.gluon_decode.max_heads"
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

    def segmented_decode(self):
        """The Triton MLA decode binds vLLM's segmented (DCP verify) call."""
        return self._capability("segmented_decode")

    def mla_decode_fwd_keywords(self):
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

    def fused_moe_gate_mode(self):
        """aiter.fused_moe.fused_moe takes gate_mode."""
        return self._capability("fused_moe_gate_mode")

    def dsv4_shared_expert(self):
        """Fused MoE with the DSV4 shared expert (the static half of vLLM's
        _probe_dsv4_i384_fhmoe_capability)."""
        return self._capability("dsv4_shared_expert")

    def topk_softmax_shared_experts(self):
        """The exported topk_softmax takes num_shared_experts (vLLM's
        topk_softmax_supports_fused_sigmoid)."""
        return self._capability("topk_softmax_shared_experts")

    def hipb_mm(self):
        """aiter exports hipb_mm (vLLM's hasattr(aiter, "hipb_mm"))."""
        return self._capability("hipb_mm")

    def qr_all_reduce_rmsnorm(self):
        """aiter exports the fused quick all-reduce + RMSNorm."""
        return self._capability("qr_all_reduce_rmsnorm")

    def ps_lse_qlens(self, arch, causal=True):
        """The query lengths (of 1 to 16, a frozenset of ints) for which
        arch's persistent bf16 MLA decode with 16 query heads per KV head
        and an LSE finds a kernel, as its lookup asks (padding, gfx950's
        folds onto other kernels, the causal it asks, the batch that drops
        persistence): a length it lacks crashes the kernel lookup. Empty
        when the tree cannot say. Without a manifest, vLLM's constant ({1,
        4} on gfx950)."""
        name = "ps_lse_qlens"
        today = _PS_LSE_QLENS_TODAY.get(arch, frozenset())
        rules = _PS_LSE_LOOKUP_RULES.get(arch)
        if rules is None:
            return self._answer(name, today, "no rule reads the query lengths of %s's MLA ASM "
                                "table" % arch)
        args = {}
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
        return self._answer(name, qlens, "%s, %s: %s" % (
            "causal" if causal else "non-causal", rows_file, _describe_lookups(asked)))

    def reducer_cases(self):
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

    def vllm_calls_bind(self):
        """Every call vLLM makes into AITER without a guard binds."""
        return self._capability("vllm_calls_bind")

    # --- any capability by its id (the census packs) -------------------------

    def supported(self, capability):
        """Whether the capability `capability` (an id of the shipped packs,
        e.g. "sglang.aiter_backend", "custom_ar.per_group_quant") holds:
        False without a manifest, or where it was scanned without its pack.
        why(capability) keeps the reason."""
        return self._answer(capability, *self._verdict(capability))

    def why(self, name):
        """The reason of the last answer of the decision `name` (a method
        name). A decision without arguments not asked yet is asked now."""
        if name in self._why:
            return self._why[name]
        method = getattr(self, name, None) if not name.startswith("_") else None
        if method is None or name == "why" or not callable(method):
            raise KeyError("no decision named '%s'" % name)
        try:
            method()
        except TypeError:
            raise KeyError("decision '%s' has not been asked yet" % name) from None
        return self._why[name]


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


def _forget():
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
