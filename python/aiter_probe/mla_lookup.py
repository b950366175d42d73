# SPDX-License-Identifier: MIT
"""The kernel AITER's MLA ASM decode looks up for a caller, from what the
rules of rules/mla.yaml read in the tree (csrc/py_itfs_cu/asm_mla.cu,
aiter/mla.py, hsa/gfx950/mla/mla_asm.csv), for bf16 with 16 query heads per
KV head (what aiter.mla.mla_decode_fwd hands the kernel unfolded).

mla_decode_stage1_asm_fwd does not look up the caller's query length: it
pads a persistent query of up to `upto` tokens to `qlen`, lets each gfx950
persistent override (a condition over gqa_ratio and max_seqlen_q) ask another
(Gqa, qSeqLen), asks causal fixed or the caller's, and asks lse when its
lse_flag condition holds. Anything these rules do not say is Unreadable:
the answer is then no query length, never a guess."""

import functools
import re

__all__ = ["Unreadable", "DecodeLookup", "QLENS", "HEADS", "UNKNOWN", "condition"]

# The query lengths answered, and the heads per KV head the rules read.
QLENS = range(1, 17)
HEADS = 16

_TOKEN = re.compile(r"\s*(?:([0-9]+)\b|([A-Za-z_][A-Za-z_0-9]*)"
                    r"|(\|\||&&|==|!=|<=|>=|[-+*/%<>!()]|\"[A-Za-z0-9_.]*\"))")
# A condition longer or deeper than this is not one of AITER's (and would
# cost time, or the interpreter's stack): the planner's natively_supported
# is some 700 characters with its line breaks.
_MAX_CONDITION = 4096
_MAX_DEPTH = 16
_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"))
_NULL = object()
# A name's value when the caller does not know it (an environment switch):
# && and || decide without it where the other side does (false && x is
# false), and anything else computed from it is UNKNOWN too.
UNKNOWN = object()


class Unreadable(ValueError):
    """What a rule read cannot be taken as the decode runs it."""


# A backend asks the planner's one condition per (arch, dtypes, heads, qlen).
@functools.lru_cache(maxsize=64)
def _tokens(text):
    if len(text) > _MAX_CONDITION:
        raise Unreadable("a condition of %d characters" % len(text))
    out, i = [], 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            if text[i:].strip() == "":
                break
            raise Unreadable("'%s' is not a condition this reads (at '%s')"
                             % (text, text[i:].strip()))
        out.append(m.group(1) or m.group(2) or m.group(3))
        i = m.end()
    return tuple(out)


def condition(text, names):
    """The C condition `text` over integers, string literals, nullptr and
    `names` (name -> int, str, None for a null pointer, or UNKNOWN), as C
    evaluates it: an int, or UNKNOWN when it depends on an UNKNOWN name.
    Strings compare as AITER's std::string does with a literal (==, !=)."""
    toks = _tokens(text)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else ""

    def take():
        pos[0] += 1
        return toks[pos[0] - 1]

    def level(n):
        if n == len(_LEVELS):
            return unary()
        left = level(n + 1)
        while peek() in _LEVELS[n]:
            op = take()
            right = level(n + 1)
            left = _apply(op, left, right, text)
        return left

    def unary():
        t = take() if pos[0] < len(toks) else ""
        if t == "!":
            v = unary()
            return v if v is UNKNOWN else int(not _truth(v))
        if t == "-":
            v = unary()
            if v is _NULL or isinstance(v, str):
                raise Unreadable("'%s' negates a pointer or a string" % text)
            return v if v is UNKNOWN else -v
        if t == "(":
            v = level(0)
            if (take() if pos[0] < len(toks) else "") != ")":
                raise Unreadable("'%s' does not close its parenthesis" % text)
            return v
        if t.isdigit():
            return int(t)
        if t.startswith('"'):
            return t[1:-1]
        if t == "nullptr":
            return _NULL
        if t in names:
            v = names[t]
            return _NULL if v is None else v
        raise Unreadable("'%s' reads %s, which the decode's caller does not give"
                         % (text, "'%s'" % t if t else "nothing"))

    depth = 0
    for t in toks:
        depth += (t == "(") - (t == ")")
        if depth > _MAX_DEPTH:
            raise Unreadable("a condition nested %d deep" % depth)
    v = level(0)
    if pos[0] != len(toks):
        raise Unreadable("'%s' is not a condition this reads (at '%s')" % (text, toks[pos[0]]))
    return v if v is UNKNOWN else int(_truth(v))


def _truth(v):
    if isinstance(v, str):
        raise Unreadable("a string '%s' taken as a truth value" % v)
    return v is not _NULL and v != 0


def _apply(op, a, b, text):
    if op in ("||", "&&"):
        known = [_truth(v) for v in (a, b) if v is not UNKNOWN]
        if (op == "||") in known:
            return int(op == "||")
        return UNKNOWN if len(known) < 2 else int(op == "&&")
    if UNKNOWN in (a, b):
        return UNKNOWN
    if isinstance(a, str) != isinstance(b, str):
        raise Unreadable("'%s' compares a string with a number" % text)
    if op in ("==", "!="):
        return int((a is b if _NULL in (a, b) else a == b) == (op == "=="))
    if isinstance(a, str):
        raise Unreadable("'%s' computes with a string" % text)
    if _NULL in (a, b):
        raise Unreadable("'%s' computes with a pointer" % text)
    if op in ("/", "%") and b == 0:
        raise Unreadable("'%s' divides by zero" % text)
    if op == "/":
        return int(a / b)
    if op == "%":
        return a - int(a / b) * b
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "+": a + b, "-": a - b,
            "*": a * b}[op] * 1


def _number(text, what):
    """A table cell or capture as an int (16 and 16.0 alike)."""
    try:
        f = float(text)
    except (TypeError, ValueError):
        raise Unreadable("%s '%s' is not a number" % (what, text)) from None
    if f != int(f):
        raise Unreadable("%s '%s' is not a whole number" % (what, text))
    return int(f)


class DecodeLookup:
    """The decode's lookup, from the matches (dicts of `line` and `captures`)
    of the rules: rows (mla.asm.gfx950.bf16_decode_rows), causal
    (mla.asm.decode.causal), pad (mla.asm.decode.bf16_gqa16_pad), folds
    (mla.asm.decode.gfx950_bf16_ps_fold, [] when unmatched), lse
    (mla.asm.decode.lse_flag, None when unmatched: no lse asked) and gate
    (mla.decode_fwd.persistent_gate matched)."""

    def __init__(self, rows, causal, pad, folds, lse, gate):
        self.rows = {}
        for m in rows:
            c = m["captures"]
            if c.get("causal") == "none":
                raise Unreadable("the table has no causal column, which the decode's lookup "
                                 "compares")
            lse_cell = c.get("lse")
            key = (_number(c.get("gqa"), "Gqa"), _number(c.get("ps"), "ps"),
                   _number(c.get("qlen"), "qSeqLen"), _number(c.get("causal"), "causal"),
                   None if lse_cell == "none" else _number(lse_cell, "lse"))
            self.rows.setdefault(key, m["line"])
        if len(causal) != 1:
            raise Unreadable("the decode sets its lookup's causal %d times" % len(causal))
        c = causal[0]["captures"]
        self.causal_fixed = _number(c["fixed"], "causal") if "fixed" in c else None
        self.causal_single = _number(c["single"], "causal") if "single" in c else None
        if (self.causal_fixed is None) == (self.causal_single is None):
            raise Unreadable("the decode's causal is neither fixed nor the caller's")
        if len(pad) != 1:
            raise Unreadable("the decode's 16-head bf16 query length is set %d times" % len(pad))
        p = pad[0]["captures"]
        self.pad_upto = _number(p["upto"], "upto")
        self.pad_qlen = _number(p["qlen"], "qlen")
        self.single = _number(p["single"], "single")
        self.folds = []
        for n, m in enumerate(folds):
            f = m["captures"]
            if m["line"] < pad[0]["line"]:
                raise Unreadable("a gfx950 override at line %d comes before the padding at "
                                 "line %d" % (m["line"], pad[0]["line"]))
            if n and f.get("chain") != "else":
                raise Unreadable("the gfx950 override at line %d is no else-if of the one "
                                 "before" % m["line"])
            self.folds.append((f["cond"], _number(f["qlen"], "qlen"), _number(f["gqa"], "gqa"),
                               m["line"]))
        self.lse = lse
        self.gate = gate
        # Every condition once, so that one the caller's inputs cannot
        # decide fails here and not halfway through an answer.
        for q in QLENS:
            self.key(q, True, True)

    def asked_causal(self, q, causal):
        if self.causal_fixed is not None:
            return self.causal_fixed
        return self.causal_single if q == 1 else int(causal)

    def key(self, q, causal, persistent):
        """(Gqa, ps, qSeqLen, causal, lse or None) the lookup asks for a
        caller's query length q, with an LSE buffer."""
        gqa, qlen = HEADS, q
        if persistent:
            if q <= self.pad_upto:
                qlen = self.pad_qlen
            for cond, fq, fg, _ in self.folds:
                if condition(cond, {"gqa_ratio": HEADS, "max_seqlen_q": q}):
                    gqa, qlen = fg, fq
                    break
        elif q == 1:
            qlen = self.single
        else:
            raise Unreadable("the decode's 16-head query length without persistence")
        lse = None
        if self.lse is not None:
            lse = condition(self.lse, {"lse": 1, "persistent": int(persistent)})
        return gqa, int(persistent), qlen, self.asked_causal(q, causal), lse

    def row(self, key):
        """The table line of a row the lookup finds for key, or None."""
        gqa, ps, qlen, causal, lse = key
        for (g, p, ql, c, ls), line in self.rows.items():
            if (g, p, ql, c) == (gqa, ps, qlen, causal) and (lse is None or ls == lse):
                return line
        return None

    def qlens(self, causal=True):
        """(the query lengths of QLENS whose lookups find a kernel, [(q,
        key, line or None)] of every lookup asked)."""
        found, asked = set(), []
        for q in QLENS:
            keys = [self.key(q, causal, True)]
            if self.gate and q == 1:
                keys.append(self.key(q, causal, False))
            lines = [self.row(k) for k in keys]
            asked.extend((q, k, ln) for k, ln in zip(keys, lines))
            if all(ln is not None for ln in lines):
                found.add(q)
        return frozenset(found), asked
