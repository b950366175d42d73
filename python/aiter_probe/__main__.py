# SPDX-License-Identifier: MIT
"""python3 -m aiter_probe MANIFEST [CAP...]: the verdicts of a manifest, as
`aiter-probe check` prints them, for a host that has the reader but not the
tool. Exit status: 0 all supported, 1 some not, 2 usage or input error."""

import argparse
import difflib
import errno
import os
import re
import sys

import aiter_probe

PROG = "aiter_probe"
# What aiter-probe's text output escapes: C0 controls but tab, DEL, and C1
# controls, each UTF-8 byte as \xHH.
_CONTROL_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f\x80-\x9f]")


def _terminal(text):
    return _CONTROL_RE.sub(lambda m: "".join("\\x%02x" % b for b in m.group().encode()), text)


def _fail(message):
    sys.stderr.write("%s: %s\n" % (PROG, message))
    return 2


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=PROG, usage="python3 -m aiter_probe [--no-verify] MANIFEST [CAP...]",
        description="Print whether each capability of an aiter-probe manifest (all, or the "
                    "ones named) is supported, with the reason.",
        epilog="Exit status: 0 all supported, 1 some not supported, 2 usage or input error "
               "(an unreadable or stale manifest, an unknown capability).")
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
    names = args.caps or list(caps)
    for name in names:
        if name not in caps:
            near = difflib.get_close_matches(name, list(caps), n=3)
            return _fail("%s: unknown capability '%s'%s" % (
                args.manifest, _terminal(name),
                "; nearest: " + ", ".join(near) if near else ""))
    lines = []
    for name in names:
        ok = caps[name]["supported"]
        lines.append("%-11s %s: %s\n" % ("supported" if ok else "unsupported", _terminal(name),
                                          _terminal(caps[name]["reason"])))
    all_ok = all(caps[name]["supported"] for name in names)
    lines.append("go: every required capability is supported\n" if all_ok
                 else "no-go: some required capability is not supported\n")
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
