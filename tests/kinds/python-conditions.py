# SPDX-License-Identifier: MIT
"""CPython's own answer to every condition the Python reader decides.

Reads tests/unit/python-conditions.txt (whose format it describes): each
condition is compiled; one the reader decides (true or false) is run after
its prelude, in a module named pkg.mod whose `import sys` and `import os`
give stand-ins with the line's facts, and must give that truth value for
every value of what the facts leave open (the micro version, the platform,
os.name, and the names `other`, `x`, `q`, True or False). Prints each
disagreement; exit status 1 if any.

    python3 python-conditions.py TABLE
"""

import builtins
import warnings
import collections
import itertools
import sys
import types

VersionInfo = collections.namedtuple("VersionInfo", "major minor micro releaselevel serial")


def completions(facts):
    """Every (version_info, platform, os_name) the facts allow."""
    version, platform, os_name = facts.split("/")
    if version == "-":
        versions = [(2, 7, 18, "final"), (3, 8, 0, "final"), (3, 12, 3, "final"),
                    (4, 0, 0, "alpha")]
    elif "-" in version:
        numbers, level = version.split("-")
        versions = [tuple(int(n) for n in numbers.split(".")) + (level,)]
    else:
        major, minor = (int(n) for n in version.split("."))
        versions = [(major, minor, micro, level) for micro in (0, 1, 99)
                    for level in ("alpha", "final")]
    platforms = ["linux", "win32", "darwin"] if platform == "-" else [platform]
    os_names = ["posix", "nt"] if os_name == "-" else [os_name]
    for v, p, o in itertools.product(versions, platforms, os_names):
        yield VersionInfo(*v, 0), p, o


def truth(condition, prelude, version_info, platform, os_name, names):
    fake = {"sys": types.ModuleType("sys"), "os": types.ModuleType("os")}
    fake["sys"].version_info = version_info
    fake["sys"].platform = platform
    fake["os"].name = os_name

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name in fake:
            return fake[name]
        return builtins.__import__(name, globals, locals, fromlist, level)

    space = {"__name__": "pkg.mod", "__builtins__": dict(vars(builtins), __import__=import_)}
    space.update(names)
    exec(compile("\n".join(prelude) + "\n_truth = bool(%s)\n" % condition, "<table>", "exec"),
         space)
    return space["_truth"]


def main():
    warnings.simplefilter("ignore", SyntaxWarning)
    failures = checked = 0
    with open(sys.argv[1], encoding="utf-8") as table:
        for lineno, line in enumerate(table, 1):
            if line.startswith("#") or not line.strip():
                continue
            fields = [f.strip() for f in line.rstrip("\n").split(" |")]
            facts, value, condition = fields[:3]
            prelude = fields[3].split("; ") if len(fields) > 3 else ["import sys", "import os"]
            prelude = [s for s in prelude if s]
            where = "python-conditions.txt:%d: `%s`" % (lineno, condition)
            try:
                compile(condition, "<table>", "eval")
            except SyntaxError as e:
                print("%s is no Python expression: %s" % (where, e))
                failures += 1
                continue
            if value == "unknown":
                continue
            for v, p, o in completions(facts):
                for others in itertools.product((True, False), repeat=3):
                    names = dict(zip(("other", "x", "q"), others))
                    got = truth(condition, prelude, v, p, o, names)
                    checked += 1
                    if got != (value == "true"):
                        print("%s is %s in CPython with %s, %s, %s, %s; the table says %s"
                              % (where, got, tuple(v), p, o, names, value))
                        failures += 1
    if checked == 0:
        print("nothing checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
