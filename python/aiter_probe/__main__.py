# SPDX-License-Identifier: MIT
"""python3 -m aiter_probe MANIFEST [CAP...]: the verdicts of a manifest, as
`aiter-probe check` prints them, for a host that has the reader but not the
tool. Exit status: 0 all supported, 1 some not (unsupported or unknown), 2
usage or input error."""

import argparse
import errno
import os
import sys

import aiter_probe

PROG = "aiter_probe"
_terminal = aiter_probe._terminal_text
# The last line, as check words it, by (some unsupported, some unknown).
_VERDICT_LINES = {
    (False, False): "go: every required capability is supported\n",
    (True, False): "no-go: some required capability is not supported\n",
    (False, True): "no-go: some required capability is unknown (unknown is never a go)\n",
    (True, True): "no-go: some required capability is not supported, and some is unknown "
                  "(unknown is never a go)\n",
}


def _distance(a, b):
    """Optimal string alignment distance: Levenshtein plus swapped
    neighbours, as aiter-probe's suggestions measure it."""
    prev2, prev = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            best = min(prev[j - 1] + (a[i - 1] != b[j - 1]), prev[j] + 1, cur[j - 1] + 1)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, prev2[j - 2] + 1)
            cur[j] = best
        prev2, prev = prev, cur
    return prev[len(b)]


def _shared_components(a, b):
    """How many dotted components a and b share from the start (bytes)."""
    n = 0
    for x, y in zip(a + b"\0", b + b"\0"):
        if x != y:
            return n
        if x == 0:
            return n + 1
        n += x == ord(".")
    return n


def _nearest(word, known):
    """Up to three known ids nearest to word, ranked as aiter-probe ranks
    them (src/core/suggest.h): within a third of word's length in edits (at
    least 2), or sharing every dotted component of word but the last."""
    # The bytes as given: an argument that is not UTF-8 comes with
    # surrogate escapes, which os.fsencode turns back.
    w = os.fsencode(word)
    if not w or len(w) > 256:
        return []
    parts, limit = w.count(b".") + 1, max(2, len(w) // 3)
    ranked = []
    for k in known:
        kb = os.fsencode(k)
        if kb == w:
            continue
        shared = _shared_components(w, kb)
        d = _distance(w, kb) if len(kb) <= 256 else 256
        if d <= limit or (parts >= 2 and shared >= parts - 1):
            ranked.append((d, -shared, kb, k))
    return [k for *_, k in sorted(ranked)[:3]]


def _fail(message):
    # An argument's bytes that are not UTF-8 go out as they came in, as
    # aiter-probe writes them.
    text = "%s: %s\n" % (PROG, message)
    if sys.stderr is not None:
        sys.stderr.flush()
        out = getattr(sys.stderr, "buffer", None)
        if out is not None:
            out.write(text.encode("utf-8", "surrogateescape"))
            out.flush()
        else:
            sys.stderr.write(text)
    return 2


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=PROG, usage="python3 -m aiter_probe [--no-verify] MANIFEST [CAP...]",
        description="Print whether each capability of an aiter-probe manifest (all, or the "
                    "ones named) is supported, with the reason.",
        epilog="Exit status: 0 all supported, 1 some not supported (unsupported or unknown), "
               "2 usage or input error (an unreadable or stale manifest, an unknown "
               "capability).")
    # As aiter-probe check --manifest: a stale manifest is an error, not an answer.
    parser.add_argument("--no-verify", dest="verify", action="store_false",
                        help="answer without re-hashing the manifest's inputs first (by "
                             "default a stale manifest is an error)")
    # Optional to argparse, which would name CAP as required too.
    parser.add_argument("manifest", metavar="MANIFEST", nargs="?",
                        help="a manifest from 'aiter-probe scan'")
    parser.add_argument("caps", metavar="CAP", nargs="*",
                        help="a capability to answer for (default: every one)")
    args = parser.parse_args(argv)
    if args.manifest is None:
        parser.error("the following arguments are required: MANIFEST")
    try:
        m = aiter_probe.load(args.manifest, verify_fresh=args.verify)
    except aiter_probe.StaleManifestError as e:
        return _fail("%s; run 'aiter-probe scan' again" % e)
    except aiter_probe.ManifestError as e:
        return _fail(e)
    caps = m.data["capabilities"]
    # A name asked twice is answered once, as check does.
    names = list(dict.fromkeys(args.caps)) or list(caps)
    for name in names:
        if name not in caps and name in m.data["rules"]:
            return _fail("%s: '%s' is a rule, not a capability" % (args.manifest,
                                                                    _terminal(name)))
        if name not in caps:
            near = _nearest(name, caps)
            return _fail("%s: unknown capability '%s'%s" % (
                args.manifest, _terminal(name),
                "; nearest: " + ", ".join(near) if near else ""))
    lines = []
    verdicts = [m.verdict(name) for name in names]
    for name, verdict in zip(names, verdicts):
        lines.append("%-11s %s: %s\n" % (verdict, _terminal(name),
                                          _terminal(caps[name]["reason"])))
    all_ok = all(v == "supported" for v in verdicts)
    lines.append(_VERDICT_LINES["unsupported" in verdicts, "unknown" in verdicts])
    # Python sets sys.stdout to None when descriptor 1 is closed.
    if sys.stdout is None:
        return _fail("writing to stdout: %s" % os.strerror(errno.EBADF))
    try:
        sys.stdout.write("".join(lines))
        sys.stdout.flush()
    except OSError as e:
        # What is still buffered goes to /dev/null at exit, not into a
        # second error and exit status 120.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _fail("writing to stdout: %s" % e.strerror)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
