# SPDX-License-Identifier: MIT
"""The caller's own calls: whether a call into AITER binds, from the
signatures of AITER's public callables as `import` binds them (the
manifest's `signatures`), so that a backend checks the call shapes of its
own revision instead of a pack's.

    aiter = for_this_process()
    aiter.binds("aiter.mla.mla_decode_fwd", 8, {"sm_scale", "logit_cap", "causal"})
    aiter.signature("aiter.fused_moe.fused_moe")    # "(hidden_states, w1, ...)"

The Backend's manifest answers when it holds signatures (`aiter-probe scan
--save --signatures`); else the first question scans its tree again in
process with them (once per Backend, about 50 to 100 ms on a real AITER),
and without the engine every answer is None, with the reason.
"""

from __future__ import annotations

import os
import threading

from .signatures import Signatures

# Annotations are strings (PEP 563), their names imported for type checkers
# only: typing costs a fresh interpreter as much as the answers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Optional, Tuple  # noqa: F401

__all__ = ["CallsMixin"]

_making = threading.Lock()


def _lock_again():
    global _making
    _making = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_lock_again)


class CallsMixin:
    """binds() and signature() for Backend, over its `manifest` and
    `reason`. No answer is kept: each call returns its own reason."""

    manifest = None
    reason: Optional[str] = None
    _calls: Optional[Tuple[Optional[Signatures], Optional[str]]] = None

    def _signatures(self) -> Tuple[Optional[Signatures], Optional[str]]:
        made = self._calls
        if made is not None:
            return made
        with _making:
            if self._calls is None:
                self._calls = self._make_signatures()
            return self._calls

    def _make_signatures(self) -> Tuple[Optional[Signatures], Optional[str]]:
        if self.manifest is None:
            return None, "no manifest (%s)" % (self.reason or "none given")
        section = self.manifest.data.get("signatures")
        if section is not None:
            return Signatures(section), None
        from . import ManifestError
        from .engine import EngineError, scan_tree
        try:
            scanned = scan_tree(self.manifest.root, signatures=True)
        except (EngineError, ManifestError) as e:
            return None, "%s holds no signatures, and scanning %s for them failed: %s" % (
                self.manifest.path, self.manifest.root, e)
        return Signatures(scanned.data.get("signatures")), None

    def binds_why(self, qualname: str, positional: int = 0,
                  keywords: Iterable[str] = ()) -> Tuple[Optional[bool], str]:
        """(answer, reason) for binds(): the reason says where the answer
        comes from, or why it is False or None."""
        sigs, why = self._signatures()
        if sigs is None:
            return None, why or ""
        answer, why = sigs.binds(qualname, positional, keywords)
        if answer:
            sig, _ = sigs.signature(qualname)
            return True, "it binds to %s%s" % (qualname, sig)
        if answer is None:
            return None, "cannot tell whether a call of %s binds: %s" % (qualname, why)
        return False, "a call of %s with %d positional%s%s does not bind: %s" % (
            qualname, positional, "" if positional == 1 else "s",
            " and its keywords" if keywords else "", why)

    def binds(self, qualname: str, positional: int = 0,
              keywords: Iterable[str] = ()) -> Optional[bool]:
        """Whether calling qualname ("aiter.mla.mla_decode_fwd", or
        "aiter.fused_moe" for aiter's own name) with `positional` positional
        arguments and the keyword arguments named in keywords binds, as
        CPython binds it: True, False (TypeError at the call), or None when
        it cannot be told (a name the scan could not resolve, a class, a
        value, no engine); binds_why gives the reason."""
        return self.binds_why(qualname, positional, keywords)[0]

    def signature_why(self, qualname: str) -> Tuple[Optional[str], str]:
        """(signature, reason) for signature()."""
        sigs, why = self._signatures()
        if sigs is None:
            return None, why or ""
        sig, why = sigs.signature(qualname)
        if sig is None:
            return None, "no signature of %s: %s" % (qualname, why)
        return sig, "%s%s as importing it binds it" % (qualname, sig)

    def signature(self, qualname: str) -> Optional[str]:
        """qualname's parameters as inspect writes a signature, each default
        `…` and no annotations ("(q, k, /, v=…, *args, c, **kw)"), as a call
        meets them through `import` (decorators, functools.partial,
        classmethod binding applied); None when it cannot be told."""
        return self.signature_why(qualname)[0]
