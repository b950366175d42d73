# SPDX-License-Identifier: MIT
"""The differential test of the Python reader against CPython (issue 19,
item 9): every question the generated packages (gen.py) and the
hand-written adversarial set (adversarial/) ask is answered twice, by
`aiter-probe scan` (one scan per batch of packages, one rule per question)
and by CPython importing the package (truth.py, in a child process, with
the external imports stubbed), and the answers compared:

  agree      the same answer (both yes with the same signature, or both no)
  wrong-yes  the tool says matched where CPython binds no def meeting the
             conditions (the worst: a backend crashes at the first request)
  wrong-no   the tool says unmatched where CPython binds one
  wrong-sig  both yes, with another signature than inspect.signature gives
  unknown    the tool says unknown: never wrong, but counted (the run fails
             when the share passes the figure known.txt records)
  error      the tool answers error or missing, or refuses the rule
  skipped    CPython cannot answer (the question's own import fails)

For python-bound, yes means a larger bound (0: none, so any value): a
bound over CPython's is a wrong yes, under it a wrong no.

The run fails (exit 1) on a disagreement (wrong-yes, wrong-no, wrong-sig,
error) that known.txt does not list with that category, on a generated
package CPython cannot import (a generator bug), and on an unknown share
over the limit. --update-known rewrites known.txt with the disagreements
of this run, each with the reason its constructs give (keeping the
limits). A listed disagreement that no longer occurs is reported, not
failed (another Python may decide a condition otherwise).

usage: run.py --tool AITER_PROBE [--packages N] [--seed S] [--jobs J]
              [--batch B] [--known FILE] [--update-known] [--no-adversarial]
              [--report-only] [--keep DIR] [--show KEY] [--list]"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # nothing written into the source tree
import gen  # noqa: E402

SHOW = 40  # unlisted disagreements printed in full
CATEGORIES = ["agree", "wrong-yes", "wrong-no", "wrong-sig", "unknown", "error", "skipped"]
DISAGREE = ("wrong-yes", "wrong-no", "wrong-sig", "error")

# The reason a disagreement is listed with, from the constructs on the
# name's path (gen.py's tags; an adversarial question names its own), the
# first in this order that the path has. "not yet" reasons are issue 19's
# items; "intended" ones are the README's contract.
REASONS = [
    ("lone-cr", "not yet: a comment ending in a lone CR ends the line there (issue 19 item 3)"),
    # a lambda or a swap the name is bound by is the cause, however it is spelt
    ("swap", "not yet: tuple assignment binds each target in order (issue 19 item 1)"),
    ("walrus-lambda", "not yet: a lambda bound by walrus at module level (issue 19 item 1)"),
    ("list-target", "not yet: a lambda bound by a list target (issue 19 item 1)"),
    ("lambda", "not yet: a lambda binds a function (issue 19 item 1)"),
    ("nfkc", "not yet: identifiers read NFKC-normalised (issue 19 item 3)"),
    ("non-ascii", "not yet: non-ASCII identifiers (issue 19 item 3)"),
    ("async-cont", "not yet: `async \\` continuation (issue 19 item 3)"),
    ("formfeed", "not yet: a form feed before a statement (issue 19 item 3)"),
    ("backslash-header", "not yet: a backslash continuation in a def header (issue 19 item 3)"),
    ("string-def", "not yet: def text inside a string (issue 19 item 3)"),
    ("globals-write", "not yet: a globals()[...] write, known only by running: unknown "
                      "(issue 19 item 1)"),
    ("module-getattr", "not yet: a module __getattr__ (PEP 562) may bind any name: unknown "
                       "(issue 19 item 1)"),
    ("modules-replaced", "not yet: a module replacing itself in sys.modules: unknown "
                         "(issue 19 item 1)"),
    ("with-suppress", "not yet: an import failing under contextlib.suppress skips the rest "
                      "of its block: unknown (issue 19 item 2)"),
    ("import-broken-module", "not yet: an in-tree module that exists but fails to import "
                             "takes the except branch (issue 19 item 2 reads existence)"),
    ("import-missing-name", "not yet: a from-import of a name the module does not bind takes "
                            "the except branch (issue 19 item 2)"),
    ("try-importerror", "not yet: try/except ImportError takes the branch the installed "
                        "modules select (issue 19 item 2)"),
    ("try-other", "not yet: a handler of an exception the body cannot raise (issue 19 item 2)"),
    ("type-checking", "not yet: TYPE_CHECKING is false (issue 19 item 2)"),
    ("main-guard", "not yet: __name__ == \"__main__\" is false on import (issue 19 item 2)"),
    ("version-cond", "not yet: sys.version_info takes the target's value (issue 19 item 2)"),
    ("platform-cond", "not yet: sys.platform takes the target's value (issue 19 item 2)"),
    ("osname-cond", "not yet: os.name takes the target's value (issue 19 item 2)"),
    ("env-flag", "not yet: a condition only a run decides (an environment flag) is unknown "
                 "unless assume_false names it (issue 19 item 2)"),
    ("match", "not yet: match on a static subject, as Python runs it (issue 19 item 2)"),
    ("loop", "not yet: loops, as Python runs them (issue 19 item 2)"),
    ("const-cond", "not yet: constant conditions (issue 19 item 2)"),
    ("method-tc-stub", "not yet: a TYPE_CHECKING stub in a class body (issue 19 item 2)"),
    ("global-init", "not yet: `global` from a function run at import (issue 19 item 1)"),
    ("deco-drop", "not yet: a decorator that returns something else: unknown (issue 19 item 1)"),
    ("deco-box", "not yet: a decorator that returns a callable object: unknown "
                 "(issue 19 item 1)"),
    ("deco-resig", "not yet: a decorator that returns another function: unknown "
                   "(issue 19 item 1)"),
    ("deco-external", "not yet: a decorator from outside the package: unknown "
                      "(issue 19 item 1)"),
    ("deco-lru", "not yet: functools.lru_cache keeps the signature (issue 19 item 1)"),
    ("deco-wraps-named", "not yet: a functools.wraps decorator factory (issue 19 item 1)"),
    ("deco-wraps", "not yet: a functools.wraps wrapper keeps the signature (issue 19 item 1)"),
    ("deco-ident", "not yet: a decorator returning its argument (issue 19 item 1)"),
    ("deco-own", "intended: a decorator returning a def of its own body binds a function "
                 "whose parameters are not read (doc/rules.md, Python kinds)"),
    ("del", "not yet: del unbinds (issue 19 item 1)"),
    ("submodule-attr-elsewhere", "not yet: importing a submodule anywhere binds it on its "
                                 "package (issue 19 item 1)"),
    ("submodule-attr", "not yet: `from .sub import x` binds the submodule name sub "
                       "(issue 19 item 1)"),
    ("from-dot-attr", "not yet: `from . import name` takes what the package already binds "
                      "to name before the submodule (issue 19 item 1)"),
    ("submodule-import", "not yet: a submodule import binds the submodule (issue 19 item 1)"),
    ("import-package", "not yet: `import pkg.sub` binds pkg (issue 19 item 1)"),
    ("star-external", "not yet: a star import from outside the package binds what it "
                      "exports: unknown (issue 19 item 1)"),
    ("all-dynamic", "not yet: an __all__ that cannot be read makes its names unknown "
                    "(issue 19 item 4)"),
    ("all-other-all", "not yet: __all__ joined with another module's (issue 19 item 4)"),
    ("all-remove", "not yet: __all__.remove (issue 19 item 4)"),
    ("all-del-item", "not yet: del __all__[i] (issue 19 item 4)"),
    ("all-comprehension", "not yet: __all__ as a comprehension over literals (issue 19 item 4)"),
    ("all-filtered", "not yet: __all__ as a filtered comprehension (issue 19 item 4)"),
    ("all-self-concat", "not yet: __all__ = __all__ + [...] (issue 19 item 4)"),
    ("all-bare-tuple", "not yet: __all__ as a bare tuple (issue 19 item 4)"),
    ("all-concat", "not yet: __all__ as joined literals (issue 19 item 4)"),
    ("all-extend", "not yet: __all__.extend (issue 19 item 4)"),
    ("all-append", "not yet: __all__.append (issue 19 item 4)"),
    ("all-plus-eq", "not yet: __all__ += (issue 19 item 4)"),
    ("star-maybe", "not yet: a star import of a name bound only in some arm (issue 19 item 1)"),
    ("star-excluded", "not yet: a star import binds only what __all__ names (issue 19 item 4)"),
    ("partial", "not yet: functools.partial binds the signature of what it binds "
                "(issue 19 item 1)"),
    ("for-target", "not yet: a for target binds its last value (issue 19 item 1)"),
    ("method-property", "not yet: a property is no def (issue 19 item 1)"),
    ("method-classmethod", "not yet: a classmethod binds cls (issue 19 item 1)"),
    ("method-staticmethod", "not yet: a staticmethod has no self (issue 19 item 1)"),
    ("method-redef", "not yet: the last def in a class body wins (issue 19 item 1)"),
    ("external-func", "intended: a name imported from outside the package is not a def "
                      "(doc/rules.md, Python kinds)"),
    ("bound-raise-gt", "not yet: a bound as `if n > N: raise` (issue 19 item 5)"),
    ("bound-raise-not", "not yet: a bound as `if not n <= N: raise` (issue 19 item 5)"),
    ("bound-raise-ge", "not yet: a bound as `if n >= N: raise` (issue 19 item 5)"),
    ("bound-return-guard", "not yet: a bound as `if n <= N: return` then raise (issue 19 item 5)"),
    ("bound-elif-guard", "not yet: a bound in an elif (issue 19 item 5)"),
    ("bound-paren-left", "not yet: parentheses around the name (issue 19 item 5)"),
    ("bound-paren-right", "not yet: parentheses around the bound (issue 19 item 5)"),
    ("bound-paren-both", "not yet: parentheses around the comparison (issue 19 item 5)"),
    ("bound-distractor-nested", "not yet: a comparison in a nested helper (issue 19 item 5)"),
    ("bound-distractor-lambda", "not yet: a comparison in a lambda (issue 19 item 5)"),
    ("bound-distractor-comprehension", "not yet: a comparison in a comprehension "
                                       "(issue 19 item 5)"),
    ("bound-distractor-dead-false", "not yet: a comparison in a dead branch (issue 19 item 5)"),
    ("bound-distractor-dead-tc", "not yet: a comparison under TYPE_CHECKING (issue 19 item 5)"),
    ("bound-distractor-after-return", "not yet: a comparison after return (issue 19 item 5)"),
    ("bound-distractor-other-name", "not yet: a comparison of another name (issue 19 item 5)"),
    ("bound-big", "not yet: integers past 64 bits (issue 19 item 5)"),
    ("async", "not yet: async def (issue 19 item 1)"),
    ("with-target", "not yet: a with target (issue 19 item 1)"),
    ("walrus", "not yet: walrus at module level (issue 19 item 1)"),
    ("tuple", "not yet: tuple targets (issue 19 item 1)"),
    ("import-module", "not yet: `import m as NAME` binds a module (issue 19 item 1)"),
    ("star-import", "not yet: a star import, in order with the other bindings "
                    "(issue 19 item 1)"),
    ("absolute-import", "not yet: absolute imports within the package (issue 19 item 1)"),
    ("from-import", "not yet: from-imports within the package (issue 19 item 1)"),
    ("nested-def", "not yet: a def nested in a function is not the module's (issue 19 item 1)"),
    ("alias", "not yet: NAME = OTHER (issue 19 item 1)"),
    ("class", "not yet: class bindings (issue 19 item 1)"),
    ("cr-file", "not yet: lone-CR line ends (issue 19 item 3)"),
    ("crlf", "not yet: CRLF line ends (issue 19 item 3)"),
]
# what the tool read right when it matched at the binding's own line
LEXING = {"lone-cr", "cr-file", "nfkc", "non-ascii", "async-cont", "formfeed", "crlf",
          "backslash-header", "string-def"}
# What another module does to a name when it runs: only importing tells.
ELSEWHERE = {"import-broken-module", "submodule-attr-elsewhere"}
REFUSED = "not yet: a rule may name a non-ASCII identifier (issue 19 item 3)"
PLAIN = "not yet: module-level bindings in order, last binding wins (issue 19 item 1)"


# --- questions as rules --------------------------------------------------

def yq(s):
    """A YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(s, ensure_ascii=False)


def rule_yaml(rid, q):
    lines = [f"  - id: {rid}"]
    if q["kind"] == "export":
        lines += [f"    python-export: {yq(q['name'])}", f"    from: {q['from']}"]
    elif q["kind"] == "def":
        lines += [f"    file: {yq(q['file'])}", f"    python-def: {yq(q['name'])}"]
    else:
        lines += [f"    file: {yq(q['file'])}", f"    python-bound: {q['name']}",
                  f"    def: {yq(q['def'])}"]
    if q.get("params"):
        lines.append(f"    params: [{', '.join(yq(p) for p in q['params'])}]")
    if "binds" in q:
        b = q["binds"]
        kws = f", keywords: [{', '.join(yq(k) for k in b['keywords'])}]" if b["keywords"] else ""
        lines.append(f"    binds: {{positional: {b['positional']}{kws}}}")
    if q.get("assume_false"):
        lines.append(f"    assume_false: [{', '.join(q['assume_false'])}]")
    return lines


def checks_text(q):
    out = []
    if q.get("params"):
        out.append("params=" + ",".join(q["params"]))
    if "binds" in q:
        out.append(f"binds={q['binds']['positional']}:" + ",".join(q["binds"]["keywords"]))
    if q.get("assume_false"):
        out.append("assume_false=" + ",".join(q["assume_false"]))
    return " ".join(out)


def where(q):
    if q["kind"] == "export":
        head = f"export from {q['from']} import {q['name']}"
    elif q["kind"] == "def":
        head = f"def {q['name']} in {q['file']}"
    else:
        head = f"bound {q['name']} in {q['file']}:{q['def']}"
    c = checks_text(q)
    return head + (" " + c if c else "")


def variant(q):
    if q["kind"] == "bound":
        return "bound"
    return "params" if q.get("params") else "binds" if "binds" in q else "plain"


# --- the tool --------------------------------------------------------------

def target_python(work, stubs):
    """The python3 that imports the packages, for the tool (its target's
    facts and installed modules: the first python3 on PATH, or --python)
    and for the truth alike: a venv of this interpreter with the stubs in
    its site-packages, which it finds whatever flags it runs with (-I);
    without venv, a wrapper setting PYTHONPATH."""
    venv = os.path.join(work, "venv")
    if subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv],
                      capture_output=True).returncode == 0:
        site = sysconfig.get_path("purelib", vars={"base": venv, "platbase": venv})
        shutil.copytree(stubs, site, dirs_exist_ok=True)
        return os.path.join(venv, "bin", "python3")
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir, exist_ok=True)
    wrapper = os.path.join(bindir, "python3")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nPYTHONPATH='{stubs}' exec '{sys.executable}' \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return wrapper


class Tool:
    def __init__(self, path, work, stubs, wrapper=()):
        self.path = os.path.abspath(path)
        self.wrapper = list(wrapper)
        self.env = dict(os.environ)
        for k in ("AITER_META_DIR", "AITER_PROBE_PYTHON", "PYTHONHOME"):
            self.env.pop(k, None)
        self.python = target_python(work, stubs)
        bindir = os.path.dirname(self.python)
        self.env["PATH"] = bindir + os.pathsep + self.env.get("PATH", "")
        self.env["PYTHONPATH"] = stubs
        helptext = subprocess.run([self.path, "scan", "--help"], capture_output=True,
                                  text=True, env=self.env).stdout
        self.extra = ["--python", self.python] if "--python" in helptext else []
        self.refused = {}
        self.empty = os.path.join(work, "empty")
        os.makedirs(self.empty, exist_ok=True)

    def scan(self, root, pack, wrapped=True):
        cmd = self.wrapper * wrapped + [self.path, "scan", "--aiter-root", root, "--no-launch",
                              "--no-default-rules", "--rules", pack, "--format", "json"] + self.extra
        return subprocess.run(cmd, capture_output=True, env=self.env)

    def refusal(self, q, work):
        """Why the loader refuses this question's rule (a name it does not
        take), or None; asked once per shape of rule."""
        shape = (q["kind"], q["name"], q.get("def"), tuple(q.get("params", [])),
                 tuple(q.get("binds", {}).get("keywords", [])))
        if shape not in self.refused:
            pack = os.path.join(work, f"probe-{len(self.refused)}.yaml")
            with open(pack, "w", encoding="utf-8") as f:
                f.write("rules:\n" + "\n".join(rule_yaml("r", q)) + "\n")
            p = self.scan(self.empty, pack, wrapped=False)  # the loader alone
            self.refused[shape] = None if p.returncode == 0 else \
                p.stderr.decode("utf-8", "replace").strip().split(": ", 2)[-1]
        return self.refused[shape]


def risky(q):
    return not all(s.isascii() for s in [q["name"], q.get("def") or ""] + q.get("params", []))


def ask_tool(tool, root, questions, work):
    """{id: answer} for each question: status, reason, the capture."""
    answers, rules = {}, []
    for q in questions:
        why = tool.refusal(q, work) if risky(q) else None
        if why is not None:
            answers[q["id"]] = {"status": "refused", "reason": why}
        else:
            rules.append(q)
    for attempt in range(100):
        pack = os.path.join(work, f"pack-{attempt}.yaml")
        lines, at = ["rules:"], {}
        for q in rules:
            at[len(lines) + 1] = q
            lines += rule_yaml(q["id"], q)
        with open(pack, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        p = tool.scan(root, pack)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode == 0:
            break
        m = re.match(re.escape(pack) + r":(\d+):\d+: (.*)", err.strip().split("\n")[-1]
                     .replace("aiter-probe: ", "", 1))
        if p.returncode == 2 and m:
            line = int(m.group(1))
            first = max(k for k in at if k <= line)
            q = at[first]
            answers[q["id"]] = {"status": "refused", "reason": m.group(2)}
            rules.remove(q)
            continue
        for q in rules:
            answers[q["id"]] = {"status": "crash", "reason": f"exit {p.returncode}: {err[-300:]}"}
        return answers
    manifest = json.loads(p.stdout)
    for q in rules:
        r = manifest["rules"].get(q["id"])
        if r is None:
            answers[q["id"]] = {"status": "absent", "reason": "not in the manifest"}
            continue
        a = {"status": r["status"], "reason": r.get("reason"), "file": r.get("file")}
        if r["matches"]:
            m0 = r["matches"][0]
            a["line"] = m0["line"]
            a["captures"] = m0.get("captures", {})
        answers[q["id"]] = a
    return answers


def ask_python(python, root, stubs, packages):
    spec = {"root": root, "stubs": stubs,
            "packages": [{"name": name, "questions": qs} for name, qs in packages]}
    p = subprocess.run([python, "-I", os.path.join(HERE, "truth.py")],
                       input=json.dumps(spec).encode(), capture_output=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"truth.py failed: {p.stderr.decode()[-2000:]}")
    return json.loads(p.stdout)


# --- comparing --------------------------------------------------------------

def compare(q, tool, py, pkg_error):
    """(category, a line that says both answers)."""
    if pkg_error:
        return "skipped", f"python: {pkg_error}"
    if "error" in py and q["kind"] == "bound" or ("kind" not in py and "bound" not in py):
        return "skipped", f"python: {py.get('error')}"
    st = tool["status"]
    tsay = f"tool: {st}" + (f" ({tool['reason']})" if tool.get("reason") else "")
    if q["kind"] == "bound":
        if py.get("irregular"):
            return "skipped", "python: the accepted values are no interval"
        truth = py["bound"]
        psay = f"python: {'no bound' if truth is None else truth}"
        if st == "unknown":
            return "unknown", f"{tsay}; {psay}"
        if st != "matched":
            return ("wrong-no" if st == "unmatched" else "error"), f"{tsay}; {psay}"
        caps = tool.get("captures", {})
        got = int(caps.get("bound", "0") or 0)
        got = None if got == 0 else got
        tsay = f"tool: {'no bound' if got is None else got} at line {tool.get('line')}"
        if got == truth:
            return "agree", f"{tsay}; {psay}"
        more = truth is not None and (got is None or got > truth)
        return ("wrong-yes" if more else "wrong-no"), f"{tsay}; {psay}"
    psay = f"python: {py['kind']}" + (f" ({py['sig']})" if "sig" in py else "") + \
        (f" at {py['origin']}" if py.get("origin") else "") + \
        ("" if py.get("yes") or not py.get("def") else ", conditions not met")
    if "error" in py and py.get("def"):
        return "skipped", psay + f" ({py['error']})"
    if st == "matched":
        tsay = f"tool: matched at {tool.get('file')}:{tool.get('line')}"
        sig = tool.get("captures", {}).get("params")
        if sig is not None:
            tsay += f" ({sig})"
        if not py["yes"]:
            return "wrong-yes", f"{tsay}; {psay}"
        if sig is not None and sig != py.get("sig"):
            return "wrong-sig", f"{tsay}; {psay}"
        return "agree", f"{tsay}; {psay}"
    if st == "unmatched":
        return ("wrong-no" if py["yes"] else "agree"), f"{tsay}; {psay}"
    if st == "unknown":
        return "unknown", f"{tsay}; {psay}"
    return "error", f"{tsay}; {psay}"


def source_tags(meta, module, b, seen):
    """The tags of what a binding imports or aliases."""
    tags = set()
    src = b["src"]
    if src and src[0] == "from":
        tags |= name_tags(meta, src[1], src[2], seen)
    elif src and src[0] == "alias":
        tags |= name_tags(meta, module, src[1], seen)
    return tags


def name_tags(meta, module, name, seen):
    if (module, name) in seen or module not in meta:
        return set()
    seen.add((module, name))
    m = meta[module]
    tags = set(m["file_tags"]) | set(m["noise"].get(name, []))
    for b in m["binds"]:
        if b["name"] == name:
            tags |= set(b["tags"]) | source_tags(meta, module, b, seen)
    return tags


def suspects(meta, module, name, tool, py):
    """The tag sets that may explain a disagreement on name in module, the
    likeliest first: where the tool matched (t) and where CPython's def is
    (w) tell which bindings lie between the two readings."""
    m = meta.get(module)
    if m is None:
        return []
    binds = [b for b in m["binds"] if b["name"] == name]
    t = w = None
    exact = False
    if tool.get("status") == "matched" and tool.get("file") == m["path"] and tool.get("line"):
        before = [i for i, b in enumerate(binds) if b["line"] <= tool["line"]]
        t = before[-1] if before else None
        exact = t is not None and binds[t]["line"] == tool["line"]
    path, _, line = ((py or {}).get("origin") or "").rpartition(":")
    if path == m["path"] and line.isdigit():
        after = [i for i, b in enumerate(binds) if 0 <= b["line"] - int(line) <= 3]
        w = after[0] if after else None
    if t is not None and w is not None:
        order = [t] if t == w else list(range(w, t - 1, -1)) if t < w else \
            list(range(t, w, -1))
    elif t is not None:
        order = list(range(len(binds) - 1, t, -1)) + [t]
    elif w is not None:
        order = [w] + list(range(len(binds) - 1, w, -1))
    else:
        order = list(range(len(binds) - 1, -1, -1))
    # the bindings' own constructs first, then those of what they import;
    # where the tool read the very binding, or followed an import to another
    # file, what other modules do to the name when they run before all
    seen = {(module, name)}
    followed = tool.get("status") == "matched" and tool.get("file") not in (None, m["path"])
    out = [set(m["noise"].get(name, [])) & ELSEWHERE] if exact or followed else []
    out += [set(binds[i]["tags"]) - (LEXING if exact and i == t else set()) for i in order]
    out += [source_tags(meta, module, binds[i], seen) for i in order]
    return out + [set(m["file_tags"]) | set(m["noise"].get(name, []))]


def bound_suspects(b, tool, py):
    """A bound the tool took from a comparison no call runs is that
    comparison's fault; one past 64 bits is the integers'; else the guard's."""
    got = (tool.get("captures") or {}).get("bound")
    out = [{d[0]} for d in b["distractors"] if got is not None and str(d[1]) in
           (got, str(int(got) + 1))]
    truth = (py or {}).get("bound")
    if truth is not None and truth >= 2 ** 63 - 1 or b["value"] is not None and b["value"] >= 2 ** 63 - 1:
        out.append({"bound-big"})
    return out + [{b["guard"]}] + [{d[0]} for d in b["distractors"]]


def reason_of(suspected, tool, cat):
    """The reason of the first tag set that has one (a wrong yes is never
    intended)."""
    if tool.get("status") == "refused":
        return REFUSED
    for tags in suspected:
        for tag, text in REASONS:
            if tag in tags and not (cat == "wrong-yes" and text.startswith("intended")):
                return text
    return PLAIN


def outside(tool, py):
    """The tool reads the name as imported from outside the package, and
    CPython's def lies outside it (truth.py gives a def of the tree by its
    path in the tree): the intended reading, whatever the path."""
    origin = (py or {}).get("origin") or ""
    return tool.get("status") == "unmatched" and (origin.startswith("<") or
                                                  os.path.isabs(origin)) and \
        re.search(r"imported from outside|from outside the tree", tool.get("reason") or "")


def question_tags(pkg, q, tool, py):
    if q["kind"] == "bound":
        return bound_suspects(pkg["meta"][q["module"]]["bounds"][q["def"]], tool, py)
    name = unicodedata.normalize("NFKC", q["name"])
    mod = q["from"] if q["kind"] == "export" else q["module"]
    # CPython's function lies outside the package and the tool read the name
    # as imported from outside: the README's contract, whatever else is on
    # the path (the condition the import sits under was read right).
    origin = ((py or {}).get("origin") or "").rpartition(":")[0]
    if tool.get("status") == "unmatched" and "imported from outside" in tool.get("reason", "") \
            and not origin.startswith(mod.split(".")[0] + "/"):
        return [{"external-func"}]
    if "." in name:
        return suspects(pkg["meta"], mod, name.split(".")[0], {}, None)
    # a rule naming ﬁnd names find (tests/kinds/python-def.sh): the path's
    # constructs first
    return ([{"external-func"}] if outside(tool, py) else []) + \
        suspects(pkg["meta"], mod, name, tool, py) + ([{"nfkc"}] if name != q["name"] else [])


# --- known.txt ----------------------------------------------------------------

def read_known(path):
    """{key: (category, reason)} and {kind: limit} from known.txt."""
    known, limits, reason = {}, {}, None
    if not os.path.exists(path):
        return known, limits
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if fields[0] == "unknown-max" and len(fields) == 3:
                limits[fields[1]] = float(fields[2].rstrip("%"))
            elif fields[0] == "reason" and len(fields) == 2:
                reason = fields[1]
            elif len(fields) == 3 and fields[1] in DISAGREE and reason is not None:
                known[fields[0]] = (fields[1], reason)
            else:
                sys.exit(f"{path}:{n}: expected 'unknown-max KIND N%', 'reason TEXT' or "
                         f"'KEY CATEGORY WHERE' after a reason, tab-separated")
    return known, limits


def write_known(path, results, limits):
    rows = sorted(((r["reason"], r["cat"], r["key"], r) for r in results if r["cat"] in DISAGREE),
                  key=lambda x: x[:3])
    with open(path, "w", encoding="utf-8") as f:
        f.write("# The disagreements of the differential test with CPython that are listed\n"
                "# (tests/differential/run.py; doc/development.md), rewritten by\n"
                "# `make update-known`; edit only the limits. Tab-separated lines:\n"
                "#   unknown-max KIND N%   at most N% of a kind's questions (def, export,\n"
                "#                         bound, all) may answer unknown\n"
                "#   reason TEXT           the reason of the entries after it\n"
                "#   KEY CATEGORY WHERE    a disagreement: its stable key, wrong-yes,\n"
                "#                         wrong-no, wrong-sig or error, and the question\n")
        for kind in ("all", "def", "export", "bound"):
            f.write(f"unknown-max\t{kind}\t{limits.get(kind, 10.0):g}%\n")
        current = None
        for reason, cat, key, r in rows:
            if reason != current:
                f.write(f"reason\t{reason}\n")
                current = reason
            f.write(f"{key}\t{cat}\t{r['where']}\n")


# --- the run --------------------------------------------------------------------

def write_stubs(stubs):
    for name, exports in gen.STUBS.items():
        d = os.path.join(stubs, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "__init__.py"), "w") as f:
            f.write(f"# stub of an installed external module\n__all__ = {exports!r}\n\n\n"
                    "class _Stub:\n    def __call__(self, *a, **k):\n        return _Stub()\n\n\n"
                    "def __getattr__(name):\n    if name.startswith('__'):\n"
                    "        raise AttributeError(name)\n    return _Stub()\n")


def load_adversarial(folder):
    """Each case: a folder holding a tree and QUESTIONS, one question a line:
    KIND WHERE NAME [params=a,b] [binds=N:kw,...] [assume_false=X] [tag=T]
    (KIND def: WHERE a file; export: a module; bound: FILE, NAME DEF:NAME)."""
    cases = []
    for case in sorted(os.listdir(folder)):
        qfile = os.path.join(folder, case, "QUESTIONS")
        if not os.path.isfile(qfile):
            continue
        qs = []
        with open(qfile, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                kind, wher, name, *opts = line.split()
                q = {"kind": kind}
                if kind == "export":
                    q.update({"from": wher, "module": wher, "name": name})
                elif kind == "def":
                    q.update({"file": wher, "module": module_of_path(wher), "name": name})
                elif kind == "bound":
                    dname, _, bname = name.partition(":")
                    q.update({"file": wher, "module": module_of_path(wher), "def": dname,
                              "name": bname, "candidates": None})
                else:
                    sys.exit(f"{qfile}:{n}: unknown kind '{kind}'")
                tags = []
                for o in opts:
                    k, _, v = o.partition("=")
                    if k == "params":
                        q["params"] = v.split(",")
                    elif k == "binds":
                        npos, _, kws = v.partition(":")
                        q["binds"] = {"positional": int(npos),
                                      "keywords": [x for x in kws.split(",") if x]}
                    elif k == "assume_false":
                        q["assume_false"] = v.split(",")
                    elif k == "tag":
                        tags.append(v)
                    else:
                        sys.exit(f"{qfile}:{n}: unknown option '{k}'")
                q["tags"] = tags
                q["key"] = f"adv/{case}/" + re.sub(r"\s+", " ", line.split(" tag=")[0])
                qs.append(q)
        cases.append({"name": case, "root": os.path.join(folder, case), "questions": qs})
    return cases


def case_files(pkg):
    root = pkg["adversarial"]["root"]
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.relpath(os.path.join(d, f), root)] = fh.read()
    return out


def module_of_path(path):
    mod = path[:-3] if path.endswith(".py") else path
    mod = mod.replace("/", ".")
    return mod[:-len(".__init__")] if mod.endswith(".__init__") else mod


def bound_candidates(root, q):
    """The candidates of a hand-written bound question: every integer in
    the def's file, each +-1, and 0 and a huge one."""
    with open(os.path.join(root, q["file"]), encoding="utf-8") as f:
        nums = {int(x) for x in re.findall(r"\b\d+\b", f.read())}
    c = {0, gen.HUGE}
    for x in nums:
        c |= {x - 1, x, x + 1}
    return sorted(x for x in c if x >= 0)


def run_batch(tool, work, stubs, root, groups):
    """groups: [(package, [questions])]; each question has an id."""
    os.makedirs(work, exist_ok=True)
    qs = [q for _, g in groups for q in g]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        t = ex.submit(ask_tool, tool, root, qs, work)
        p = ex.submit(ask_python, tool.python, root, stubs, groups)
        return t.result(), p.result()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--packages", type=int, default=300)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--known", default=os.path.join(HERE, "known.txt"))
    ap.add_argument("--adversarial", default=os.path.join(HERE, "adversarial"))
    ap.add_argument("--no-adversarial", action="store_true")
    ap.add_argument("--update-known", action="store_true")
    ap.add_argument("--report-only", action="store_true",
                    help="print the figures; fail only on a harness error (for make bench)")
    ap.add_argument("--keep", help="keep the generated trees and packs in this folder")
    ap.add_argument("--show", metavar="KEY", help="print the package and answers of KEY")
    ap.add_argument("--list", action="store_true", help="print every disagreement")
    ap.add_argument("--json", metavar="FILE", help="write every question's result to FILE")
    ap.add_argument("--wrapper", default="", help="a command the tool runs under (valgrind)")
    args = ap.parse_args()
    if sys.version_info < (3, 8):
        print("skipped: the differential test needs Python 3.8 or later")
        return 77
    started = time.monotonic()
    if args.keep:
        shutil.rmtree(args.keep, ignore_errors=True)
    work = args.keep or tempfile.mkdtemp(prefix="aiter-probe-diff-")
    os.makedirs(work, exist_ok=True)
    try:
        return run(args, work, started)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def run(args, work, started):
    stubs = os.path.join(work, "stubs")
    write_stubs(stubs)
    tool = Tool(args.tool, work, stubs, shlex.split(args.wrapper))
    packages, skipped_pkgs = [], 0
    for i in range(args.packages):
        p = gen.generate(args.seed, i)
        if "match" in p["needs"] and sys.version_info < (3, 10):
            skipped_pkgs += 1
            continue
        packages.append(p)
    jobs = []
    for b in range(0, len(packages), args.batch):
        chunk = packages[b:b + args.batch]
        bdir = os.path.join(work, f"batch{b // args.batch:04d}")
        root = os.path.join(bdir, "tree")
        groups = []
        for p in chunk:
            gen.write(p, root)
            qs = []
            for k, q in enumerate(p["questions"]):
                q = dict(q, id=f"q.{p['name']}.{k}")
                spec = json.dumps({x: q[x] for x in sorted(q) if x != "id"}, ensure_ascii=False)
                q["key"] = q["kind"] + ":" + hashlib.sha1(
                    (p["digest"] + spec).encode()).hexdigest()[:14]
                qs.append(q)
            groups.append((p, qs))
        jobs.append((bdir, root, groups))
    adversarial = [] if args.no_adversarial else load_adversarial(args.adversarial)
    for case in adversarial:
        for k, q in enumerate(case["questions"]):
            q["id"] = f"q.adv.{k}"
            if q["kind"] == "bound":
                q["candidates"] = bound_candidates(case["root"], q)
        by_top = {}
        for q in case["questions"]:
            by_top.setdefault(q["module"].split(".")[0], []).append(q)
        groups = [({"name": top, "adversarial": case}, qs) for top, qs in sorted(by_top.items())]
        jobs.append((os.path.join(work, "adv-" + case["name"]), case["root"], groups))

    results = []
    harness_errors = []

    def one(job):
        bdir, root, groups = job
        t, p = run_batch(tool, bdir, stubs, root,
                         [(g[0]["name"], g[1]) for g in groups])
        return job, t, p

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        for job, tans, pans in ex.map(one, jobs):
            _, _, groups = job
            for pkg, qs in groups:
                perr = pans["packages"].get(pkg["name"])
                if perr and "adversarial" not in pkg:
                    harness_errors.append(f"{pkg['name']}: CPython cannot import it: {perr}")
                for q in qs:
                    cat, say = compare(q, tans[q["id"]], pans["answers"].get(q["id"], {}), perr)
                    if "adversarial" in pkg:
                        tags = [set(q["tags"])]
                        source = "adversarial"
                    else:
                        tags = question_tags(pkg, q, tans[q["id"]], pans["answers"].get(q["id"]))
                        source = "generated"
                    results.append({"key": q["key"], "cat": cat, "kind": q["kind"],
                                    "variant": variant(q), "where": f"{pkg['name']}: {where(q)}",
                                    "say": say, "reason": reason_of(tags, tans[q["id"]], cat), "source": source,
                                    "tool": tans[q["id"]], "py": pans["answers"].get(q["id"])})
                    if args.show == q["key"]:
                        results[-1]["files"] = pkg.get("files") or case_files(pkg)
    if args.show:
        for r in results:
            if r["key"] != args.show:
                continue
            files = r.pop("files", {})
            print(json.dumps(r, indent=1, ensure_ascii=False))
            for path, data in sorted(files.items()):
                print(f"\n--- {path}\n{data.decode('utf-8')}", end="")
        return 0
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(sorted(results, key=lambda r: r["key"]), f, indent=1, ensure_ascii=False)
    known, limits = read_known(args.known)
    elapsed = time.monotonic() - started
    summary(results, args, len(packages), skipped_pkgs, elapsed)
    for e in harness_errors:
        print(f"HARNESS ERROR: {e}")
    for r in results:
        if r["cat"] == "skipped" and r["source"] == "generated":
            print(f"skipped {r['key']}: {r['where']}: {r['say']}")
    if args.update_known:
        write_known(args.known, results, limits)
        print(f"wrote {args.known}")
        return 1 if harness_errors else 0
    unlisted = [r for r in results if r["cat"] in DISAGREE and known.get(r["key"], ("",))[0]
                != r["cat"]]
    asked = {r["key"] for r in results}
    seen = {r["key"] for r in results if r["cat"] in DISAGREE}
    stale = [k for k in known if k in asked and k not in seen]
    shown = [r for r in results if r["cat"] in DISAGREE] if args.list else \
        [] if args.report_only else unlisted[:SHOW]
    unlisted_keys = {r["key"] for r in unlisted}
    for r in sorted(shown, key=lambda r: (r["reason"], r["key"])):
        print(f"{'UNLISTED' if r['key'] in unlisted_keys else 'LISTED'} {r['cat']} {r['key']}\n"
              f"  {r['where']}\n  {r['say']}\n  reason: {r['reason']}")
    if len(shown) < len(unlisted) and not args.report_only:
        print(f"... and {len(unlisted) - len(shown)} more unlisted (--list prints them all)")
    if stale:
        print(f"{len(stale)} listed disagreements no longer occur (fixed, or another Python): "
              f"`make update-known` drops them")
    over = unknown_over(results, limits)
    for line in over:
        print(f"FAIL: {line}")
    if args.report_only:
        return 1 if harness_errors else 0
    if unlisted:
        print(f"FAIL: {len(unlisted)} disagreements not listed in {args.known} (a regression, "
              f"or a change to list with `run.py --update-known`)")
    return 1 if unlisted or over or harness_errors else 0


def unknown_over(results, limits):
    out = []
    for kind in ("all", "def", "export", "bound"):
        rs = [r for r in results if kind == "all" or r["kind"] == kind]
        rs = [r for r in rs if r["cat"] != "skipped"]
        if not rs or kind not in limits:
            continue
        share = 100.0 * sum(r["cat"] == "unknown" for r in rs) / len(rs)
        if share > limits[kind]:
            out.append(f"{share:.1f}% of {kind} questions answer unknown, over the "
                       f"{limits[kind]:g}% known.txt allows")
    return out


def summary(results, args, npkgs, skipped_pkgs, elapsed):
    print(f"differential test: seed {args.seed}, {npkgs} generated packages"
          + (f" ({skipped_pkgs} skipped: need a newer Python)" if skipped_pkgs else "")
          + f", {len(results)} questions, {elapsed:.1f} s")
    head = f"{'':24}" + "".join(f"{c:>10}" for c in CATEGORIES) + f"{'agree%':>9}"
    for source in ("generated", "adversarial"):
        rows = {}
        for r in results:
            if r["source"] == source:
                rows.setdefault((r["kind"], r["variant"]), []).append(r)
        if not rows:
            continue
        print(f"\n{source}:\n{head}")
        allr = []
        for key in sorted(rows):
            print(line_of(f"{key[0]} {key[1]}", rows[key]))
            allr += rows[key]
        for kind in ("def", "export", "bound"):
            rs = [r for r in allr if r["kind"] == kind]
            if rs:
                print(line_of(f"{kind} (all)", rs))
        print(line_of("all", allr))
    print("\ndisagreements by reason (wrong-yes / wrong-no / wrong-sig / error):")
    by = {}
    for r in results:
        if r["cat"] in DISAGREE:
            by.setdefault(r["reason"], {c: 0 for c in DISAGREE})[r["cat"]] += 1
    for reason, c in sorted(by.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"  {c['wrong-yes']:5} {c['wrong-no']:5} {c['wrong-sig']:5} {c['error']:5}  {reason}")


def line_of(label, rs):
    counts = {c: 0 for c in CATEGORIES}
    for r in rs:
        counts[r["cat"]] += 1
    asked = len(rs) - counts["skipped"]
    pct = 100.0 * counts["agree"] / asked if asked else 0.0
    return f"{label:24}" + "".join(f"{counts[c]:>10}" for c in CATEGORIES) + f"{pct:>8.1f}%"


if __name__ == "__main__":
    sys.exit(main())
