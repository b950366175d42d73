# SPDX-License-Identifier: MIT
"""Writes a git repository whose history loads `aiter-probe history` the way
issue 17 found it running out of memory: COMMITS commits (default 500), each
a csrc/kernels/mla/reduce.cu of CASES reducer cases (default 10,000: as many
captures for the rule mla.reduce.cases), each commit changing one case, so
that every commit changes that rule's captures. Written through
`git fast-import` into a new bare repository at OUT, then packed
(`git gc --aggressive`, unless --no-pack: for tests, which need it fast);
prints its size.

usage: gen-history-repo.py [--no-pack] OUT [COMMITS [CASES]]"""
import os
import subprocess
import sys


def main():
    pack = len(sys.argv) < 2 or sys.argv[1] != "--no-pack"
    if not pack:
        del sys.argv[1]
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    commits = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    subprocess.run(["git", "init", "-q", "--bare", out], check=True)
    imp = subprocess.Popen(["git", "--git-dir", out, "fast-import", "--quiet"],
                           stdin=subprocess.PIPE)
    lines = ["    MLA_REDUCE_CASE_EF(NUM_HEAD, %d, HEAD_DIM, %d, NUM_WG_PER_SEQ, NAME, __VA_ARGS__) \\\n"
             % (1 + i % 128, 64 * (1 + i // 128)) for i in range(cases)]
    for k in range(commits):
        # Commit k moves case k to a head dim no other case has.
        i = k % cases
        lines[i] = ("    MLA_REDUCE_CASE_EF(NUM_HEAD, %d, HEAD_DIM, %d, NUM_WG_PER_SEQ, NAME, "
                    "__VA_ARGS__) \\\n" % (1 + i % 128, 100000 + k))
        body = ("#define MLA_REDUCE_ROUTER(NAME, ...) \\\n" + "".join(lines) + "\n").encode()
        msg = ("case %d moves to head dim %d\n" % (i, 100000 + k)).encode()
        w = imp.stdin.write
        w(b"commit refs/heads/main\n")
        w(b"committer Bench <bench@example.com> %d +0000\n" % (1700000000 + k * 60))
        w(b"data %d\n%s" % (len(msg), msg))
        w(b"M 100644 inline csrc/kernels/mla/reduce.cu\n")
        w(b"data %d\n%s\n" % (len(body), body))
    imp.stdin.close()
    if imp.wait() != 0:
        sys.exit("git fast-import failed")
    subprocess.run(["git", "--git-dir", out, "symbolic-ref", "HEAD", "refs/heads/main"],
                   check=True)
    if pack:
        subprocess.run(["git", "--git-dir", out, "gc", "-q", "--aggressive", "--prune=now"],
                       check=True)
    size = 0
    for root, _, files in os.walk(out):
        size += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print("%s: %d commits x %d cases, %.0f KB on disk" % (out, commits, cases, size / 1024))


main()
