# SPDX-License-Identifier: MIT
"""The manifest's `signatures` (a scan with --signatures): the parameters of
every public callable of the modules the packs name, as `import` binds
them, and whether a call of a given shape binds to them as CPython binds it
(inspect.Signature.bind). The same words and rules as the C reader
(src/core/signature.c, src/capi/signatures.c).

    sigs = Signatures(manifest.data["signatures"])
    sigs.signature("aiter.mla.mla_decode_fwd")   # ("(q, kv_buffer, ..., causal=…)", None)
    sigs.binds("aiter.mla.mla_decode_fwd", 8, {"sm_scale", "causal"})  # (True, None)
"""

from __future__ import annotations

import re
from collections import namedtuple

# Annotations are strings (PEP 563), their names imported for type checkers
# only: typing costs a fresh interpreter as much as the answers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Tuple  # noqa: F401

__all__ = ["Param", "Signatures", "parse_params", "call_binds"]

POSITIONAL_ONLY = "positional_only"
POSITIONAL_OR_KEYWORD = "positional_or_keyword"
VAR_POSITIONAL = "var_positional"
KEYWORD_ONLY = "keyword_only"
VAR_KEYWORD = "var_keyword"

# As the C reader bounds them (core/signature.h).
MAX_PARAMS = 255
MAX_BYTES = 4096
_DEFAULT_MARK = "=\u2026"
_NOT_IN_NAME = frozenset(" ,=*/()\t\n\r\x00")
# What parse_params takes, as one expression: the reader checks every
# callable of a manifest, and only a refused one needs parse_params' words.
_V = "[^ ,=*/()\t\n\r\x00]+"
_P = _V + "(?:=\u2026)?"
_POS = "%s(?:, %s)*(?:, /(?:, %s)*)?" % (_P, _P, _P)
_STAR = "(?:\\*%s(?:, %s)*|\\*(?:, %s)+)" % (_V, _P, _P)
_VARKW = "\\*\\*" + _V
_WELL_FORMED = re.compile("(?:%s(?:, %s)?(?:, %s)?|%s(?:, %s)?|%s)?\\Z"
                          % (_POS, _STAR, _VARKW, _STAR, _VARKW, _VARKW))
# names in reasons are cut here, as the C reader cuts them (in bytes there)
_NAME_MAX_SHOWN = 200

NO_SIGNATURES = "the manifest records no signatures (scanned without --signatures)"
NO_MODULE = "the manifest records no signatures of that module"
NO_CALLABLE = ("no callable of that name recorded (not bound there, a module, a name imported "
               "from outside the tree, or past the scan's cap)")
NO_MODULE_PART = ("a name must follow its module: aiter.mla.mla_decode_fwd, or "
                  "aiter.mla:mla_decode_fwd")


# One parameter: its name, its kind (inspect.Parameter's kind names, lower
# case) and whether it has a default.
Param = namedtuple("Param", ["name", "kind", "has_default"])


def _plain(name: str) -> bool:
    return bool(name) and not any(c in _NOT_IN_NAME for c in name)


def parse_params(text: str) -> List[Param]:
    """The parameters of text ("q, k, /, v=…, *args, c, **kw"); ValueError
    with the C reader's words when it is no such list."""
    out: List[Param] = []
    if text == "":
        return out
    kind = POSITIONAL_OR_KEYWORD
    slash = varkw = False
    parts = text.split(", ")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if varkw:
            raise ValueError("a parameter after **%s" % out[-1].name)
        if part == "/":
            if slash or kind != POSITIONAL_OR_KEYWORD or not out:
                raise ValueError("a '/' that follows no positional parameter")
            slash = True
            out = [p._replace(kind=POSITIONAL_ONLY) for p in out]
            continue
        if part == "*":
            if kind != POSITIONAL_OR_KEYWORD or last:
                raise ValueError("a bare '*' with no keyword-only parameter after it")
            kind = KEYWORD_ONLY
            continue
        this, name, default = kind, part, False
        if name.startswith("**"):
            this, name, varkw = VAR_KEYWORD, name[2:], True
        elif name.startswith("*"):
            if kind != POSITIONAL_OR_KEYWORD:
                raise ValueError("a second '*'")
            this, name, kind = VAR_POSITIONAL, name[1:], KEYWORD_ONLY
        if this not in (VAR_POSITIONAL, VAR_KEYWORD) and len(name) > len(_DEFAULT_MARK) \
                and name.endswith(_DEFAULT_MARK):
            name, default = name[:-len(_DEFAULT_MARK)], True
        if not _plain(name):
            raise ValueError("'%s' is no parameter" % name.encode("utf-8")[:64]
                             .decode("utf-8", "replace"))
        if len(out) == MAX_PARAMS:
            raise ValueError("more than %d parameters" % MAX_PARAMS)
        out.append(Param(name, this, default))
    return out


def call_binds(params: List[Param], positional: int,
               keywords: Iterable[str]) -> Tuple[bool, Optional[str]]:
    """Whether a call with `positional` positional arguments and these
    keyword arguments binds to params, as inspect.Signature.bind binds it:
    (True, None), or (False, why)."""
    def shown(name):
        return name[:_NAME_MAX_SHOWN]
    kinds = [p.kind for p in params]
    varargs = VAR_POSITIONAL in kinds
    varkw = VAR_KEYWORD in kinds
    npos = sum(k in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD) for k in kinds)
    if positional > npos and not varargs:
        return False, "it takes at most %d positional arguments" % npos
    bound = [False] * len(params)
    given = 0
    for i, p in enumerate(params):
        if given == positional:
            break
        if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
            bound[i] = True
            given += 1
    index = {p.name: i for i, p in reversed(list(enumerate(params)))}
    for kw in keywords:
        i = index.get(kw)
        p = params[i] if i is not None else None
        if p is None or p.kind in (VAR_POSITIONAL, VAR_KEYWORD) or \
                (p.kind == POSITIONAL_ONLY and not bound[i]):
            # **kwargs takes it, positional-only names included
            if varkw:
                continue
            if p is not None and p.kind == POSITIONAL_ONLY:
                return False, "'%s' is positional-only, given by keyword" % shown(kw)
            return False, "no parameter '%s' (and no **kwargs)" % shown(kw)
        if bound[i]:
            if p.kind == POSITIONAL_ONLY and varkw:
                continue
            return False, "'%s' given both by position and by keyword" % shown(kw)
        bound[i] = True
    for i, p in enumerate(params):
        if not bound[i] and not p.has_default and p.kind not in (VAR_POSITIONAL, VAR_KEYWORD):
            return False, "required parameter '%s' left unbound" % shown(p.name)
    return True, None


def check(checker, doc: dict) -> None:
    """The C loader's checks of `signatures` (checker: the reader's
    _Checker), with its messages."""
    section = checker.field(doc, "", "signatures", ("object",), optional=True)
    for module, entry in (section or {}).items():
        where = 'signatures["%s"]' % module
        checker.kind(entry, where, ("object",))
        checker.field(entry, where, "file", ("string", "null"))
        checker.field(entry, where, "reason", ("string",), optional=True)
        checker.field(entry, where, "left_out", ("int",), optional=True)
        for name, c in checker.field(entry, where, "callables", ("object",)).items():
            _check_callable(checker, c, '%s.callables["%s"]' % (where, name))


def _check_callable(checker, c, where: str) -> None:
    checker.kind(c, where, ("object",))
    text = checker.field(c, where, "params", ("string",), optional=True)
    unknown = checker.field(c, where, "unknown", ("string",), optional=True)
    checker.field(c, where, "file", ("string",), optional=True)
    checker.field(c, where, "line", ("int",), optional=True)
    checker.field(c, where, "async", ("bool",), optional=True)
    if (text is None) == (unknown is None):
        checker.fail("'%s' must have one of 'params' and 'unknown'" % where)
    if text is None:
        return
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES or "\x00" in text:
        checker.fail("'%s.params' must be at most %d bytes, with no NUL" % (where, MAX_BYTES))
    if _WELL_FORMED.match(text) and text.count(", ") < MAX_PARAMS:
        return
    try:
        parse_params(text)
    except ValueError as e:
        checker.fail("'%s.params' is no parameter list: %s" % (where, e))


class Signatures:
    """Answers from one manifest's `signatures` (None: the manifest has
    none). Read-only once made: safe from any thread."""

    def __init__(self, section: Optional[dict]):
        self._section = section
        self._parsed: Dict[str, List[Param]] = {}

    def _entry(self, qualname: str) -> Tuple[Optional[dict], Optional[str]]:
        if self._section is None:
            return None, NO_SIGNATURES
        module, sep, name = qualname.partition(":")
        if not sep:
            module, sep, name = qualname.rpartition(".")
        if not sep:
            return None, NO_MODULE_PART
        mod = self._section.get(module)
        if mod is None:
            return None, NO_MODULE
        entry = mod["callables"].get(name)
        if entry is None:
            return None, mod.get("reason") or NO_CALLABLE
        if "unknown" in entry:
            return None, entry["unknown"]
        return entry, None

    def params(self, qualname: str) -> Tuple[Optional[List[Param]], Optional[str]]:
        """(the parameters, None), or (None, why the manifest cannot tell)."""
        entry, why = self._entry(qualname)
        if entry is None:
            return None, why
        text = entry["params"]
        # a dict's setdefault is atomic: threads may parse it twice, never half
        got = self._parsed.get(text)
        if got is None:
            got = self._parsed.setdefault(text, parse_params(text))
        return got, None

    def signature(self, qualname: str) -> Tuple[Optional[str], Optional[str]]:
        """("(q, k, /, v=…, *args, c, **kw)", None): the parameters as
        inspect writes a signature, each default `…`, no annotations; or
        (None, why)."""
        entry, why = self._entry(qualname)
        if entry is None:
            return None, why
        return "(%s)" % entry["params"], None

    def binds(self, qualname: str, positional: int = 0,
              keywords: Iterable[str] = ()) -> Tuple[Optional[bool], Optional[str]]:
        """(True, None) when the call binds, (False, why) when CPython
        raises TypeError binding it, (None, why) when the manifest cannot
        tell."""
        if isinstance(positional, bool) or not isinstance(positional, int) or positional < 0:
            raise ValueError("positional must be a count of arguments (an int >= 0), not %r"
                             % (positional,))
        if isinstance(keywords, str):
            raise ValueError("keywords must be names (a list, a set, a dict's keys), not one "
                             "str")
        params, why = self.params(qualname)
        if params is None:
            return None, why
        return call_binds(params, positional, dict.fromkeys(keywords))
