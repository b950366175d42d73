# SPDX-License-Identifier: MIT
"""What CPython binds: the child of the differential test (run.py). Reads
{"root", "stubs", "packages": [{"name", "questions": [...]}]} as JSON on
stdin and prints {"packages": {name: error or null}, "answers": {id: ...}}.

Each package is imported in a fork of this process (`import PACKAGE`, as a
server's `import aiter`), so packages never see each other; a question
whose answer needs a further import (`from pkg import sub` of a submodule
not yet imported, a module the package's own import did not load) is
answered in a fork of that, so that no question changes what another sees.

An answer says what the name is bound to (kind: function, partial, method,
wrapped (a callable with __wrapped__, as functools.lru_cache makes),
class, module, property, callable, value, unbound), whether that is a def
(a function, method, partial or wrapped callable), its signature in the
tool's notation (`a, b=…, *, c=…`) as inspect.signature gives it (through
__wrapped__), whether each named parameter can be passed by keyword and
whether the call shape binds, through every wrapper layer (a call goes
through each), and where the def is (origin, for the report). A bound
answer calls the function with each candidate value of the name and gives
the largest value accepted (None: no bound); `irregular` when the accepted
values are not one interval."""

import functools
import importlib
import importlib.util
import inspect
import json
import os
import signal
import sys
import types
import unicodedata

P = inspect.Parameter
MISSING = object()


def tool_signature(sig):
    out, star = [], False
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        if p.kind == P.KEYWORD_ONLY and not star:
            out.append("*")
        star |= p.kind in (P.VAR_POSITIONAL, P.KEYWORD_ONLY)
        pre = {P.VAR_POSITIONAL: "*", P.VAR_KEYWORD: "**"}.get(p.kind, "")
        out.append(pre + p.name + ("=…" if p.default is not P.empty else ""))
        if p.kind == P.POSITIONAL_ONLY and (i + 1 == len(params) or
                                            params[i + 1].kind != P.POSITIONAL_ONLY):
            out.append("/")
    return ", ".join(out)


def kind_of(obj):
    if obj is MISSING:
        return "unbound"
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj):
        return "function"
    if inspect.ismethod(obj):
        return "method"
    if isinstance(obj, functools.partial):
        return "partial"
    if isinstance(obj, property):
        return "property"
    if callable(obj) and hasattr(obj, "__wrapped__"):
        return "wrapped"
    if callable(obj):
        return "callable"
    return "value"


DEFS = ("function", "method", "partial", "wrapped")


def layers(obj):
    """obj, then each __wrapped__ under it: the signatures a call meets."""
    out = [obj]
    while hasattr(out[-1], "__wrapped__") and len(out) < 50 and \
            (inspect.isfunction(out[-1]) or kind_of(out[-1]) == "wrapped"):
        out.append(out[-1].__wrapped__)
    sigs = []
    for layer in out:
        try:
            sigs.append(inspect.signature(layer, follow_wrapped=False))
        except (TypeError, ValueError):
            pass  # a C wrapper (lru_cache) passes every call through
    return sigs


def named(sig, name):
    p = sig.parameters.get(name)
    return p is not None and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)


def passes(sig, name):
    """A layer lets name through: as its own parameter, or into **kwargs."""
    p = sig.parameters.get(name)
    if p is not None and p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
        return True
    return any(x.kind == P.VAR_KEYWORD for x in sig.parameters.values()) or \
        (p is not None and p.kind == P.POSITIONAL_ONLY)


def binds(sig, call):
    try:
        sig.bind(*[None] * call.get("positional", 0), **{k: None for k in call.get("keywords", [])})
        return True
    except TypeError:
        return False


def origin(obj, root):
    f = obj
    if isinstance(f, functools.partial):
        f = f.func
    if inspect.ismethod(f):
        f = f.__func__
    if isinstance(f, property):
        f = f.fget
    try:
        f = inspect.unwrap(f)
    except ValueError:
        pass
    code = getattr(f, "__code__", None)
    if code is None:
        return repr(obj)[:60] if isinstance(obj, (int, str)) else None
    path = code.co_filename
    if path.startswith(root + os.sep):
        path = os.path.relpath(path, root)
    return f"{path}:{code.co_firstlineno}"


def describe(obj, q, root):
    k = kind_of(obj)
    a = {"kind": k, "def": k in DEFS}
    if not a["def"]:
        a["yes"] = False
        return a
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as e:
        a.update(yes=False, error=f"no signature: {e}")
        return a
    a["sig"] = tool_signature(sig)
    a["origin"] = origin(obj, root)
    own = layers(obj)
    ok = True
    for p in q.get("params", []):
        ok = ok and named(sig, p) and all(passes(s, p) for s in own)
    if "binds" in q:
        ok = ok and binds(sig, q["binds"]) and all(binds(s, q["binds"]) for s in own)
    a["yes"] = ok
    return a


def module_of(name):
    return sys.modules.get(name)


def lookup_def(q):
    """python-def: what the module binds to NAME (Cls.m: the class's m as
    getattr gives it), after the import."""
    mod = module_of(q["module"])
    if mod is None:
        mod = importlib.import_module(q["module"])
    parts = [unicodedata.normalize("NFKC", p) for p in q["name"].split(".")]
    obj = vars(mod).get(parts[0], MISSING)
    for p in parts[1:]:
        if obj is MISSING or not inspect.isclass(obj):
            return MISSING
        obj = getattr(obj, p, MISSING)
    return obj


def lookup_export(q):
    """python-export: `from FROM import NAME`, as the import statement does
    it (a submodule not yet bound is imported)."""
    ns = {}
    try:
        exec(f"from {q['from']} import {q['name']} as _x", ns)
    except ImportError:
        return MISSING
    return ns["_x"]


def needs_import(q):
    """The module a question's answer imports first, or None: the module
    itself when it is not loaded yet, the submodule FROM.NAME that
    `from FROM import NAME` would import (asked of the finder, which runs
    no module code)."""
    if q["kind"] != "export":
        return None if q["module"] in sys.modules else q["module"]
    mod = sys.modules.get(q["from"])
    if mod is None:
        return q["from"]
    name = unicodedata.normalize("NFKC", q["name"])
    if hasattr(mod, name) or not hasattr(mod, "__path__"):
        return None
    sub = f"{q['from']}.{name}"
    try:
        return sub if importlib.util.find_spec(sub) is not None else None
    except (ImportError, ValueError):
        return None


def bound_of(q):
    f = lookup_def({"module": q["module"], "name": q["def"]})
    if not inspect.isfunction(f):
        return {"error": f"{q['def']} is {kind_of(f)}, not a function"}
    accepted = []
    for v in q["candidates"]:
        try:
            f(0, v)
            accepted.append(v)
        except Exception:
            pass
    if not accepted:
        return {"bound": None, "irregular": True}
    top = max(accepted)
    lo = min(accepted)
    regular = [c for c in q["candidates"] if lo <= c <= top] == accepted
    big = max(q["candidates"])
    return {"bound": None if top == big else top, "irregular": not regular}


def answer(q, root):
    try:
        if q["kind"] == "bound":
            return bound_of(q)
        obj = lookup_def(q) if q["kind"] == "def" else lookup_export(q)
        return describe(obj, q, root)
    except Exception as e:  # the question's own import failed
        return {"error": f"{type(e).__name__}: {e}"}


def in_fork(fn, timeout=300):
    """fn() in a child process; its JSON result, or an error."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(timeout)
        try:
            out = json.dumps(fn())
        except BaseException as e:
            out = json.dumps({"error": f"{type(e).__name__}: {e}"})
        with os.fdopen(w, "w") as f:
            f.write(out)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return {"error": f"the child ended with status {status}"}
    return json.loads(data)


def answer_all(questions, root, tried=()):
    """Each question's answer: those that import nothing here, then each
    group that imports the same module in one fork of this process."""
    answers, later = {}, {}
    for q in questions:
        target = needs_import(q)
        if target is None or target in tried:
            answers[q["id"]] = answer(q, root)
        else:
            later.setdefault(target, []).append(q)
    for target, qs in later.items():
        if len(qs) == 1 or target not in [q.get("module") for q in qs]:
            for q in qs:
                answers[q["id"]] = in_fork(lambda: answer(q, root))
            continue

        def group():
            try:
                importlib.import_module(target)
            except Exception as e:
                return {q["id"]: {"error": f"import {target}: {type(e).__name__}: {e}"}
                        for q in qs}
            return answer_all(qs, root, tried + (target,))
        answers.update(in_fork(group))
    return answers


def package(pkg, root):
    try:
        importlib.import_module(pkg["name"])
    except BaseException as e:
        return {"error": f"import {pkg['name']}: {type(e).__name__}: {e}", "answers": {}}
    return {"error": None, "answers": answer_all(pkg["questions"], root)}


def main():
    spec = json.load(sys.stdin)
    root = spec["root"]
    sys.dont_write_bytecode = True
    sys.path[:0] = [root, spec["stubs"]]
    for k in list(os.environ):
        if k.startswith("GEN_DIFF_"):
            del os.environ[k]
    out = {"packages": {}, "answers": {}}
    for pkg in spec["packages"]:
        res = in_fork(lambda: package(pkg, root), timeout=600)
        out["packages"][pkg["name"]] = res.get("error")
        out["answers"].update(res.get("answers", {}))
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
