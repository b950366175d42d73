#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An independent check of the manifest's `signatures` on a real AITER tree.

    bench/signatures-ast.py MANIFEST [--sample N] [--seed S]

MANIFEST is `aiter-probe scan --signatures` of a tree. For a sample of the
callables it records, this script finds the def itself, with its own reader
built on Python's ast module (it shares no code with the engine or the
aiter_probe package's signature code: it follows `from X import *` with
__all__, `from X import a as b`, plain aliases and functools.partial, and
reads the if/else arms with the names assume_false reads as false), builds
an inspect.Signature from the ast, and compares:

- signature: the parameters' names, kinds and defaults, with the manifest's;
- binds: for call shapes made from each signature (0 to N+1 positionals,
  keyword sets from its names and one foreign name), whether
  inspect.Signature.bind succeeds, with Backend.binds' answer (the package's
  Signatures over the manifest).

It prints the agreement figures; a name its own reader cannot follow (a
decorator it does not know, a name bound in a try) is counted apart, not
compared.
"""

import argparse
import ast
import inspect
import itertools
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

FALSE_NAMES = {"AITER_TRITON_ONLY", "AITER_AOT_IMPORT"}
# decorators that keep a function's signature, by their last dotted part
KEEPS = {"lru_cache", "cache", "final", "wraps", "no_type_check", "overload"}


class Unfollowed(Exception):
    pass


class Tree:
    def __init__(self, root):
        self.root = root
        self.parsed = {}
        self.resolved = {}

    def module(self, dotted):
        if dotted in self.parsed:
            return self.parsed[dotted]
        base = os.path.join(self.root, *dotted.split("."))
        found = None
        for path, pkg in ((os.path.join(base, "__init__.py"), True), (base + ".py", False)):
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    found = (ast.parse(f.read()), pkg, path)
                break
        self.parsed[dotted] = found
        return found

    @staticmethod
    def absolute(of, pkg, level, name):
        if level == 0:
            return name
        parts = of.split(".")
        if not pkg:
            parts = parts[:-1]
        parts = parts[:len(parts) - (level - 1)]
        return ".".join(parts + ([name] if name else []))


def statements(body):
    """The statements an import runs: both ways of a condition it cannot
    decide, the taken one of `if NAME` for NAME read as false, a try's
    body (its handlers run only where an import fails: not followed)."""
    for s in body:
        if isinstance(s, ast.If):
            t = s.test
            if isinstance(t, ast.Name) and t.id in FALSE_NAMES:
                yield from statements(s.orelse)
            elif isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and \
                    isinstance(t.operand, ast.Name) and t.operand.id in FALSE_NAMES:
                yield from statements(s.body)
            else:
                yield from statements(s.body)
                yield from statements(s.orelse)
        elif isinstance(s, ast.Try):
            for inner in s.body:
                yield ("try", inner)
        else:
            yield s


def all_of(tree):
    for s in tree.body:
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                             for t in s.targets):
            if isinstance(s.value, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str)
                    for e in s.value.elts):
                return [e.value for e in s.value.elts]
            return None
    return None


def resolve(tree, module, name, depth=0):
    """('def', FunctionDef), ('partial', base, npos, keywords), ('class',
    ...), ... or raises Unfollowed; each (module, name) read once."""
    key = (module, name)
    got = tree.resolved.get(key)
    if got is None:
        tree.resolved[key] = Unfollowed("an import cycle")
        try:
            got = _resolve(tree, module, name, depth)
        except Unfollowed as e:
            got = e
        tree.resolved[key] = got
    if isinstance(got, Unfollowed):
        raise got
    return got


def _resolve(tree, module, name, depth):
    if depth > 30:
        raise Unfollowed("too deep")
    found = tree.module(module)
    if found is None:
        raise Unfollowed("no module %s" % module)
    mod, pkg, path = found
    last = None
    for s in statements(mod.body):
        in_try = isinstance(s, tuple)
        if in_try:
            s = s[1]
        hit = None
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name:
            hit = ("def", s)
        elif isinstance(s, ast.ClassDef) and s.name == name:
            hit = ("class", s)
        elif isinstance(s, ast.ImportFrom):
            target = Tree.absolute(module, pkg, s.level, s.module or "")
            for a in s.names:
                if a.name == "*":
                    if not target.startswith("aiter"):
                        continue
                    sub = tree.module(target)
                    if sub is None:
                        continue
                    names = all_of(sub[0])
                    if names is not None and name not in names:
                        continue
                    try:
                        hit = resolve(tree, target, name, depth + 1)
                    except Unfollowed:
                        continue
                elif (a.asname or a.name) == name:
                    if not target.startswith("aiter"):
                        hit = ("external", None)
                    else:
                        try:
                            hit = resolve(tree, target, a.name, depth + 1)
                        except Unfollowed:
                            hit = ("module", None)
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], ast.Name) and s.targets[0].id == name:
            v = s.value
            if isinstance(v, ast.Name):
                hit = resolve_before(tree, module, v.id, s, depth)
            elif isinstance(v, ast.Call) and (
                    (isinstance(v.func, ast.Attribute) and v.func.attr == "partial") or
                    (isinstance(v.func, ast.Name) and v.func.id == "partial")) and v.args and \
                    isinstance(v.args[0], ast.Name):
                base = resolve_before(tree, module, v.args[0].id, s, depth)
                if base[0] != "def":
                    raise Unfollowed("partial of no def")
                hit = ("partial", base, len(v.args) - 1, [k.arg for k in v.keywords])
            else:
                hit = ("value", None)
        if hit is not None:
            if in_try:
                raise Unfollowed("bound in a try")
            last = hit
    if last is None:
        raise Unfollowed("unbound")
    return last


def resolve_before(tree, module, name, stmt, depth):
    # a name read in the module where it is bound before stmt: the whole
    # module's last binding is close enough for AITER's aliases
    return resolve(tree, module, name, depth + 1)


def decorators_keep(tree, d):
    for dec in d.decorator_list:
        f = dec.func if isinstance(dec, ast.Call) else dec
        last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) \
            else None
        if last in KEEPS:
            continue
        if last is not None and wraps_somewhere(tree, last):
            continue
        return False
    return True


_wrapping = {}


def wraps_somewhere(tree, name):
    """A decorator of the tree's whose body uses functools.wraps (AITER's
    compile_ops and its kin): it keeps the signature."""
    if name in _wrapping:
        return _wrapping[name]
    ok = False
    for dirpath, _, files in os.walk(os.path.join(tree.root, "aiter")):
        for fn in files:
            if not fn.endswith(".py"):
                continue
            with open(os.path.join(dirpath, fn), "rb") as f:
                src = f.read()
            if ("def %s(" % name).encode() not in src:
                continue
            for node in ast.walk(ast.parse(src)):
                if isinstance(node, ast.FunctionDef) and node.name == name:
                    ok = "wraps(" in ast.unparse(node)
    _wrapping[name] = ok
    return ok


def signature_of(d):
    a = d.args
    P = inspect.Parameter
    params = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for i, arg in enumerate(pos):
        kind = P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        params.append(P(arg.arg, kind, default=P.empty if defaults[i] is None else 0))
    if a.vararg:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    for arg, dflt in zip(a.kwonlyargs, a.kw_defaults):
        params.append(P(arg.arg, P.KEYWORD_ONLY, default=P.empty if dflt is None else 0))
    if a.kwarg:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def partial_signature(sig, npos, keywords):
    """inspect's signature of functools.partial(f, *npos, **keywords)."""
    def f():
        pass
    f.__signature__ = sig
    import functools
    return inspect.signature(functools.partial(f, *([0] * npos), **{k: 0 for k in keywords}))


def shapes(sig, rng, limit):
    names = [p.name for p in sig.parameters.values()] + ["not_a_parameter"]
    npos = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in sig.parameters.values())
    out = []
    for positional in range(0, npos + 2):
        for r in (0, 1, 2, 3):
            combos = list(itertools.combinations(names, r))
            rng.shuffle(combos)
            out.extend((positional, c) for c in combos[:4])
    rng.shuffle(out)
    return out[:limit]


def _reason_kind(why):
    """A reason with its names and lines taken out, to count alike ones."""
    import re
    m = re.match(r"\S+ \(line \d+\) is decorated with @([\w.]+)", why)
    if m:
        return "decorated with @" + m.group(1)
    return re.sub(r"\d+", "N", why.split(":")[0])[:70]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shapes", type=int, default=40)
    args = ap.parse_args()
    from aiter_probe.signatures import Signatures
    with open(args.manifest) as f:
        m = json.load(f)
    tree = Tree(m["aiter"]["root"])
    sigs = Signatures(m["signatures"])
    rng = random.Random(args.seed)
    recorded = [(mod, name) for mod, e in sorted(m["signatures"].items())
                for name, c in sorted(e["callables"].items()) if "params" in c]
    unknown = sum(1 for e in m["signatures"].values() for c in e["callables"].values()
                  if "unknown" in c)
    sample = recorded if len(recorded) <= args.sample else rng.sample(recorded, args.sample)
    counts = dict(same=0, differ=0, unfollowed=0, shapes=0, agree=0)
    unfollowed_why = {}
    for mod, name in sample:
        q = "%s.%s" % (mod, name)
        try:
            hit = resolve(tree, mod, name)
            if hit[0] == "partial":
                _, base, npos, kws = hit
                if not decorators_keep(tree, base[1]):
                    raise Unfollowed("a decorator it does not know")
                sig = partial_signature(signature_of(base[1]), npos, kws)
            elif hit[0] == "def":
                if not decorators_keep(tree, hit[1]):
                    raise Unfollowed("a decorator it does not know")
                sig = signature_of(hit[1])
            else:
                raise Unfollowed("a %s" % hit[0])
        except Unfollowed as e:
            counts["unfollowed"] += 1
            unfollowed_why[str(e)] = unfollowed_why.get(str(e), 0) + 1
            continue
        text, _ = sigs.signature(q)
        mine = [(p.name, p.kind.name.lower(), p.default is not p.empty)
                for p in sig.parameters.values()]
        theirs = sigs.params(q)[0]
        if mine != [tuple(p) for p in theirs]:
            counts["differ"] += 1
            print("differs: %s\n  ast:      %s\n  manifest: %s" % (q, sig, text))
            continue
        counts["same"] += 1
        for positional, kws in shapes(sig, rng, args.shapes):
            try:
                sig.bind(*([0] * positional), **{k: 0 for k in kws})
                want = True
            except TypeError:
                want = False
            got, why = sigs.binds(q, positional, kws)
            counts["shapes"] += 1
            if got == want:
                counts["agree"] += 1
            else:
                print("binds differs: %s(%d positionals, %s): ast %s, manifest %s (%s)"
                      % (q, positional, kws, want, got, why))
    # the other way: what the manifest leaves unknown, and the ast reader
    # would call a def (each a None where a guess could have been made)
    unknown_defs = {}
    for mod, e in sorted(m["signatures"].items()):
        for name, c in sorted(e["callables"].items()):
            if "unknown" not in c:
                continue
            try:
                hit = resolve(tree, mod, name)
            except Unfollowed:
                continue
            if hit[0] in ("def", "partial"):
                key = _reason_kind(c["unknown"])
                unknown_defs[key] = unknown_defs.get(key, 0) + 1
    print("tree %s (version %s): %d callables with parameters, %d unknown; sample %d"
          % (m["aiter"]["root"], m["aiter"]["version"], len(recorded), unknown, len(sample)))
    print("signature: %d same, %d differ, %d not followed by the ast reader (%s)"
          % (counts["same"], counts["differ"], counts["unfollowed"],
             ", ".join("%s: %d" % kv for kv in sorted(unfollowed_why.items()))))
    print("unknown in the manifest where the ast reader finds a def: %d (%s)"
          % (sum(unknown_defs.values()),
             "; ".join("%s: %d" % kv for kv in sorted(unknown_defs.items()))))
    print("binds: %d of %d call shapes agree with inspect.Signature.bind"
          % (counts["agree"], counts["shapes"]))
    return 0 if counts["differ"] == 0 and counts["agree"] == counts["shapes"] else 1


if __name__ == "__main__":
    sys.exit(main())
