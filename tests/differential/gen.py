# SPDX-License-Identifier: MIT
"""Seeded generator of valid Python packages for the differential test
against CPython (tests/differential/run.py), and of the questions asked
about each: what `from MODULE import NAME` binds (python-export), the def a
module binds to NAME (python-def) and the bound a function puts on a name
(python-bound), each with the parameters and call shapes a backend checks.

Package i of seed S comes from its own random stream, so a run of N
packages is a prefix of a run of more with the same seed, and a package's
files do not depend on the Python that runs the generator (a package that
needs a newer Python than the one at hand says so in `needs`).

Every package imports without error when its external imports are the stub
modules of STUBS (run.py writes them): the generator tracks the names each
module surely binds, so that `del`, aliases, from-imports and `__all__`
only name what exists. Each statement that binds a name records the
constructs it uses (tags), which name the reason of a disagreement.

Stdlib only. Usage (to look at them): gen.py SEED COUNT DIR"""

import hashlib
import json
import os
import random
import re
import sys

# External modules the target interpreter finds (stubs: every attribute is
# a _Stub instance, callable, no function) and ones it lacks.
STUBS = {
    "extlib": ["ext_fn", "f4"],      # its __all__: a star import binds these
    "extlib2": [],
}
MISSING = ["zz_absent_ext", "zz_absent_ext2"]

# Names a package's modules bind and are asked about; FANCY are written
# otherwise (NFKC: the ligature U+FB01, a fullwidth letter) or are non-ASCII.
POOL = ["f0", "f1", "f2", "f3", "f4", "find", "größe"]
NEVER = "zz_never"
FULLWIDTH = {"f": "\uff46"}
PARAMS = ["a", "b", "c", "q", "kv", "o", "scale", "causal", "lse", "out", "x", "n"]
BOUND_NAME = "nhead"
BOUNDS = [8, 15, 16, 24, 48, 64, 96, 128, 255, 2 ** 63 - 1, 2 ** 63, 2 ** 64 + 5, 10 ** 20]
HUGE = 10 ** 30


class Sig:
    """A parameter list: (name, kind, has_default), kind one of posonly,
    pos, varargs, kwonly, varkw (the tool's and inspect's order)."""

    def __init__(self, params):
        self.params = params

    def render(self, annotate=False, rng=None):
        out, star = [], False
        for i, (name, kind, dflt) in enumerate(self.params):
            if kind == "kwonly" and not star:
                out.append("*")
            star |= kind in ("varargs", "kwonly")
            text = {"varargs": "*", "varkw": "**"}.get(kind, "") + name
            if annotate and rng is not None and kind in ("pos", "kwonly") and rng.random() < 0.3:
                text += ": int"
                if dflt:
                    text += " = 0"
            elif dflt:
                text += "=None"
            out.append(text)
            nxt = self.params[i + 1][1] if i + 1 < len(self.params) else None
            if kind == "posonly" and nxt != "posonly":
                out.append("/")
        return ", ".join(out)

    def names(self):
        return [p[0] for p in self.params if p[1] not in ("varargs", "varkw")]


def gen_sig(rng, first=None):
    names = rng.sample(PARAMS, rng.randint(0, 5))
    if first:
        names = [first] + [n for n in names if n != first]
    params, dflt = [], False
    for i, name in enumerate(names):
        r = rng.random()
        if first and i == 0:
            kind = "pos"
        elif r < 0.12 and all(p[1] == "posonly" for p in params):
            kind = "posonly"
        elif r < 0.72 or any(p[1] in ("varargs", "kwonly") for p in params) and r < 0.6:
            kind = "pos" if not any(p[1] in ("varargs", "kwonly") for p in params) else "kwonly"
        else:
            kind = "kwonly"
        if kind in ("posonly", "pos"):
            dflt = dflt or rng.random() < 0.35
            params.append((name, kind, dflt))
        else:
            params.append((name, kind, rng.random() < 0.6))
    if rng.random() < 0.15:
        at = sum(1 for p in params if p[1] in ("posonly", "pos"))
        params.insert(at, ("args", "varargs", False))
    if rng.random() < 0.15:
        params.append(("kw", "varkw", False))
    return Sig(params)


class Mod:
    """One module being written: a prelude (imports and helpers), a head
    (__all__), the body, a tail (__all__ edits); the names surely bound at
    the top level so far; the binding statements, with their tags."""

    def __init__(self, pkg, dotted, path, package, rng):
        self.pkg, self.dotted, self.path, self.package, self.rng = pkg, dotted, path, package, rng
        self.sections = {"prelude": [], "head": [], "body": [], "tail": []}
        self.needs = set()
        self.sure = set()
        self.binds = []      # {name, at: (section, index), tags, src}
        self.all = None      # the final __all__ when it has one (a list)
        self.all_tags = []
        self.eol = "\n"
        self.file_tags = []
        self.sigs = {}       # name -> [Sig] of every def-like binding of it
        self.noise = {}      # name -> tags of text that looks like binding it
        self.broken = False  # importing it raises ImportError on purpose
        self.classes = {}    # class name -> {method: how it is bound (plain, property, ...)}

    def emit(self, section, indent, text, sep=None):
        lines = self.sections[section]
        if text.startswith("\x0c"):
            lines.append(("\x0c" + "    " * indent + text[1:], sep))
        else:
            lines.append(("    " * indent + text if text else "", sep))
        return (section, len(lines) - 1)

    def need(self, what):
        if what in self.needs:
            return
        self.needs.add(what)
        p = "prelude"
        if what in ("functools", "sys", "os", "typing", "contextlib") + tuple(STUBS):
            self.emit(p, 0, f"import {what}")
        elif what == "TYPE_CHECKING":
            self.emit(p, 0, "from typing import TYPE_CHECKING")
        elif what == "_t":
            self.emit(p, 0, "import typing as _t")
        elif what == "_FLAG":
            self.need("os")
            self.emit(p, 0, '_FLAG = os.environ.get("GEN_DIFF_FLAG", "0") == "1"')
        elif what == "_wrap":
            self.need("functools")
            for line in ("def _wrap(fn):", "    @functools.wraps(fn)",
                         "    def wrapper(*args, **kwargs):",
                         "        return fn(*args, **kwargs)", "    return wrapper"):
                self.emit(p, 0, line)
        elif what == "_wrap_named":
            self.need("functools")
            for line in ("def _wrap_named(label):", "    def deco(fn):",
                         "        @functools.wraps(fn)", "        def inner(*a, **k):",
                         "            return fn(*a, **k)", "        return inner",
                         "    return deco"):
                self.emit(p, 0, line)
        elif what == "_ident":
            self.emit(p, 0, "def _ident(fn):")
            self.emit(p, 0, "    return fn")
        elif what == "_drop":
            self.emit(p, 0, "def _drop(fn):")
            self.emit(p, 0, "    return None")
        elif what == "_box":
            for line in ("class _Box:", "    def __init__(self, fn):", "        self.fn = fn",
                         "    def __call__(self, *a, **k):", "        return self.fn(*a, **k)",
                         "def _boxed(fn):", "    return _Box(fn)"):
                self.emit(p, 0, line)
        elif what == "_guard":
            # AITER's torch_compile_guard shape: a wrapper of its own either way
            for line in ("def _guard(label=None, gen_fake=None):", "    def decorator(func):",
                         "        def wrapper(*args, **kwargs):",
                         "            return func(*args, **kwargs)", "        try:",
                         "            import zz_gen_not_installed  # noqa: F401",
                         "        except ImportError:", "            return wrapper",
                         "        def wrapper_custom(*args, **kwargs):",
                         "            return wrapper(*args, **kwargs)",
                         "        return wrapper_custom", "    return decorator"):
                self.emit(p, 0, line)
        elif what == "_resig":
            for line in ("def _resig(fn):", "    def narrowed(x, y=None):",
                         "        return x", "    return narrowed"):
                self.emit(p, 0, line)
        else:
            raise ValueError(what)

    def bind(self, name, at, tags, src=None, sig=None):
        self.binds.append({"name": name, "at": at, "tags": list(tags), "src": src})
        if sig is not None:
            self.sigs.setdefault(name, []).append(sig)

    def render(self):
        """The file's bytes, and each binding's line as CPython counts:
        LF, CRLF and a lone CR each end a line."""
        pieces, line_at, line = [], {}, 1
        for sec in ("prelude", "head", "body", "tail"):
            for i, (text, sep) in enumerate(self.sections[sec]):
                line_at[(sec, i)] = line
                piece = text + (sep if sep is not None else self.eol)
                pieces.append(piece)
                line += len(re.findall(r"\r\n|\r|\n", piece))
        for b in self.binds:
            b["line"] = line_at.get(b["at"], 0)
        return "".join(pieces).encode("utf-8")


class Gen:
    def __init__(self, seed, index):
        self.seed, self.index = seed, index
        self.rng = random.Random(f"aiter-probe-differential:{seed}:{index}")
        self.name = f"g{index:05d}"
        self.mods = {}
        self.order = []
        self.needs = set()
        self.value = 1000 + 10000 * (index % 97)
        self.bounds = []

    # --- statements --------------------------------------------------------

    def uniq(self):
        self.value += 1
        return self.value

    def written(self, m, name, tags):
        """How a binding writes name: NFKC variants for some."""
        rng = self.rng
        if name == "find" and rng.random() < 0.5:
            tags.append("nfkc")
            return "\ufb01nd"
        if name.startswith("f") and name[1:].isdigit() and rng.random() < 0.06:
            tags.append("nfkc")
            return FULLWIDTH["f"] + name[1:]
        if not name.isascii():
            tags.append("non-ascii")
        return name

    def lex_before(self, m, sec, indent, tags, name, lone_cr=False):
        """Lexing traps before a def: a comment ending in a lone CR (the next
        text is a new line for CPython), a form feed, nothing."""
        r = self.rng.random()
        if lone_cr or r < 0.07:
            tags.append("lone-cr")
            m.emit(sec, indent, f"# was: def {name}(legacy_only)", sep="\r")
        elif r < 0.11:
            tags.append("formfeed")
            m.emit(sec, indent, "\x0c")

    def emit_noise(self, m, name, tags):
        m.noise.setdefault(name, [])
        m.noise[name].extend(t for t in tags if t not in m.noise[name])

    def stmt_def(self, m, sec, indent, name, tags, style=None, lone_cr=False):
        rng = self.rng
        sig = gen_sig(rng)
        style = style or rng.choices(
            ["def", "async", "async-cont", "deco-wraps", "deco-wraps-named", "deco-ident",
             "deco-drop", "deco-box", "deco-resig", "deco-external", "deco-lru",
             "backslash-header", "deco-guard"],
            [40, 6, 3, 6, 3, 4, 3, 2, 3, 3, 2, 3, 3])[0]
        if style == "backslash-header" and not sig.params:
            style = "def"
        tags = tags + ([style] if style != "def" else [])
        self.lex_before(m, sec, indent, tags, name, lone_cr)
        w = self.written(m, name, tags)
        args = sig.render(annotate=True, rng=rng)
        deco = {"deco-wraps": "@_wrap", "deco-wraps-named": '@_wrap_named("x")',
                "deco-ident": "@_ident", "deco-drop": "@_drop", "deco-box": "@_boxed",
                "deco-resig": "@_resig", "deco-external": "@extlib.jit",
                "deco-lru": "@functools.lru_cache(maxsize=None)",
                "deco-guard": '@_guard("x", gen_fake=lambda *a, **k: None)'}.get(style)
        if deco:
            m.need({"deco-wraps": "_wrap", "deco-wraps-named": "_wrap_named",
                    "deco-ident": "_ident", "deco-drop": "_drop", "deco-box": "_box",
                    "deco-resig": "_resig", "deco-external": "extlib",
                    "deco-lru": "functools", "deco-guard": "_guard"}[style])
            m.emit(sec, indent, deco)
        if style == "async":
            at = m.emit(sec, indent, f"async def {w}({args}):")
        elif style == "async-cont":
            at = m.emit(sec, indent, "async \\")
            m.emit(sec, indent, f"def {w}({args}):")
        elif style == "backslash-header":
            at = m.emit(sec, indent, f"def {w}( \\")
            m.emit(sec, indent + 1, f"{args}):")
        else:
            at = m.emit(sec, indent, f"def {w}({args}):")
        if rng.random() < 0.15:
            # text in the body that a careless reader takes for the module's
            inner = rng.choice(POOL)
            m.emit(sec, indent + 1, f"def {inner}(zz_inner):")
            m.emit(sec, indent + 2, "return zz_inner")
            self.emit_noise(m, inner, ["nested-def"])
        if rng.random() < 0.1:
            m.emit(sec, indent + 1, f'"""def {name}(zz_doc): a docstring, no def"""')
            self.emit_noise(m, name, ["string-def"])
        m.emit(sec, indent + 1, "return 0")
        m.bind(name, at, tags, sig=sig)

    def stmt_value(self, m, sec, indent, name, tags):
        rng = self.rng
        w = self.written(m, name, tags)
        choices = ["assign", "annassign", "tuple", "list-target", "walrus", "walrus-lambda",
                   "for-target", "lambda", "partial", "import-module", "class", "globals-write",
                   "global-init", "global-uncalled", "with-target", "external-func"]
        weights = [8, 3, 4, 2, 3, 2, 3, 8, 6, 2, 6, 1, 4, 1, 1, 2]
        style = rng.choices(choices, weights)[0]
        tags = tags + [style]
        sig = None
        if style == "assign":
            at = m.emit(sec, indent, f"{w} = {self.uniq()}")
        elif style == "annassign":
            at = m.emit(sec, indent, f"{w}: int = {self.uniq()}")
        elif style == "tuple":
            at = m.emit(sec, indent, f"{w}, _t{self.uniq()} = {self.uniq()}, 0")
        elif style == "list-target":
            at = m.emit(sec, indent, f"[_t{self.uniq()}, {w}] = [0, (lambda zz: zz)]")
            sig = Sig([("zz", "pos", False)])
        elif style == "walrus":
            at = m.emit(sec, indent, f"({w} := {self.uniq()})")
        elif style == "walrus-lambda":
            sig = gen_sig(rng)
            at = m.emit(sec, indent, f"({w} := lambda {sig.render()}: 0)")
        elif style == "for-target":
            if rng.random() < 0.5:
                sig = gen_sig(rng)
                at = m.emit(sec, indent, f"for {w} in (0, lambda {sig.render()}: 0):")
            else:
                at = m.emit(sec, indent, f"for {w} in ({self.uniq()}, {self.uniq()}):")
            m.emit(sec, indent + 1, "pass")
        elif style == "lambda":
            sig = gen_sig(rng)
            at = m.emit(sec, indent, f"{w} = lambda {sig.render()}: 0")
        elif style == "partial":
            m.need("functools")
            impl = f"_impl{self.uniq()}"
            full = gen_sig(rng, first=rng.choice(["a", "q", "x"]))
            m.emit("prelude", 0, f"def {impl}({full.render()}):")
            m.emit("prelude", 0, "    return 0")
            npos = sum(1 for p in full.params if p[1] in ("posonly", "pos"))
            given = rng.randint(1, npos) if npos and rng.random() < 0.7 else 0
            args = ["0"] * given
            kws = [p for p in full.params[given:] if p[1] in ("pos", "kwonly")]
            if kws and rng.random() < 0.4:
                args.append(f"{rng.choice(kws)[0]}=1")
            at = m.emit(sec, indent, f"{w} = functools.partial({impl}{', ' if args else ''}"
                        f"{', '.join(args)})")
            sig = full  # for the params the questions name; the truth drops what it binds
        elif style == "import-module":
            what = rng.choice(["os", "sys", "extlib", "functools"])
            at = m.emit(sec, indent, f"import {what} as {w}")
        elif style == "class":
            at = m.emit(sec, indent, f"class {w}:")
            m.emit(sec, indent + 1, f"def __call__(self, {rng.choice(PARAMS)}):")
            m.emit(sec, indent + 2, "return 0")
        elif style == "globals-write":
            sig = gen_sig(rng)
            at = m.emit(sec, indent, f'globals()["{name}"] = lambda {sig.render()}: 0')
        elif style in ("global-init", "global-uncalled"):
            fn = f"_init{self.uniq()}"
            m.emit(sec, indent, f"def {fn}():")
            m.emit(sec, indent + 1, f"global {w}")
            if rng.random() < 0.6:
                sig = gen_sig(rng)
                at = m.emit(sec, indent + 1, f"def {w}({sig.render()}):")
                m.emit(sec, indent + 2, "return 0")
            else:
                at = m.emit(sec, indent + 1, f"{w} = {self.uniq()}")
            if style == "global-init":
                m.emit(sec, indent, f"{fn}()")
            else:
                sig = None
                self.emit_noise(m, name, ["global-uncalled"])
                return
        elif style == "with-target":
            m.need("contextlib")
            at = m.emit(sec, indent, f"with contextlib.nullcontext({self.uniq()}) as {w}:")
            m.emit(sec, indent + 1, "pass")
        else:  # external-func: a real function from outside the package
            at = m.emit(sec, indent, f"from os.path import join as {w}")
        m.bind(name, at, tags, sig=sig)

    def stmt_alias(self, m, sec, indent, name, tags):
        others = sorted(n for n in m.sure if n != name and n in POOL)
        if not others:
            return self.stmt_def(m, sec, indent, name, tags)
        src = self.rng.choice(others)
        w = self.written(m, name, tags)
        if self.rng.random() < 0.2 and name in m.sure:
            at = m.emit(sec, indent, f"{w}, {src} = {src}, {w}")
            m.bind(name, at, tags + ["swap"], src=("alias", src))
            m.bind(src, at, tags + ["swap"], src=("alias", name))
            return
        at = m.emit(sec, indent, f"{w} = {src}")
        m.bind(name, at, tags + ["alias"], src=("alias", src))

    def importable(self, m):
        """Modules m may import from (acyclic: later in self.order)."""
        i = self.order.index(m.dotted)
        return [self.mods[d] for d in self.order[i + 1:] if not self.mods[d].broken]

    def rel(self, m, target):
        """target's name as m imports it: relative or absolute."""
        if self.rng.random() < 0.25:
            return target.dotted, ["absolute-import"]
        here = m.dotted if m.package else m.dotted.rpartition(".")[0]
        up, base = 1, here
        while not (target.dotted + ".").startswith(base + "."):
            base = base.rpartition(".")[0]
            up += 1
        rest = target.dotted[len(base) + 1:] if target.dotted != base else ""
        return "." * up + rest, []

    def stmt_from(self, m, sec, indent, name, tags):
        cands = [t for t in self.importable(m) if t.final_sure & set(POOL)]
        if not cands:
            return self.stmt_def(m, sec, indent, name, tags)
        t = self.rng.choice(cands)
        src = self.rng.choice(sorted(t.final_sure & set(POOL)))
        mod, more = self.rel(m, t)
        w = self.written(m, name, tags)
        line = f"from {mod} import {src}" + (f" as {w}" if src != name or w != name else "")
        at = m.emit(sec, indent, line)
        m.bind(name, at, tags + ["from-import"] + more, src=("from", t.dotted, src))
        # `from .x import y` binds the submodule x on its package too
        self.submodule_side(m, t, at, tags)

    def submodule_side(self, m, t, at, tags):
        """Importing t binds it on its package: at this point when m is that
        package (or an ancestor: the next name down), else when the import
        runs, which the tags of the package's name record."""
        if t.dotted.startswith(m.dotted + "."):
            leaf = t.dotted[len(m.dotted) + 1:].split(".")[0]
            m.bind(leaf, at, tags + ["submodule-attr"], src=("module", f"{m.dotted}.{leaf}"))
        parent, _, leaf = t.dotted.rpartition(".")
        if parent != m.dotted and parent in self.mods:
            self.emit_noise(self.mods[parent], leaf, ["submodule-attr-elsewhere"])

    def stmt_submodule(self, m, sec, indent, name, tags):
        """`from . import mX` (and `import pkg.mX`): a module bound."""
        subs = [t for t in self.importable(m) if t.dotted.rpartition(".")[0] == m.dotted]
        if not subs:
            return self.stmt_value(m, sec, indent, name, tags)
        t = self.rng.choice(subs)
        leaf = t.dotted.rpartition(".")[2]
        if self.rng.random() < 0.5:
            at = m.emit(sec, indent, f"from . import {leaf}")
        else:
            at = m.emit(sec, indent, f"import {t.dotted}")
            m.bind(self.name, at, tags + ["import-package"], src=("module", self.name))
            tags = tags + ["import-package"]
        m.bind(leaf, at, tags + ["submodule-import"], src=("module", t.dotted))
        return leaf

    def stmt_star(self, m, sec, indent, tags):
        rng = self.rng
        cands = self.importable(m)
        if not cands or rng.random() < 0.15:
            m.need("extlib")
            at = m.emit(sec, indent, "from extlib import *")
            for n in STUBS["extlib"]:
                m.bind(n, at, tags + ["star-external"], src=("external", "extlib"))
            return set(STUBS["extlib"])
        t = rng.choice(cands)
        mod, more = self.rel(m, t)
        at = m.emit(sec, indent, f"from {mod} import *")
        for n in sorted(t.exports):
            m.bind(n, at, tags + ["star-import"] + more + t.all_tags, src=("from", t.dotted, n))
        # names it might bind too (bound in an arm of a condition), and those
        # it binds but does not export (its __all__ leaves them out)
        for n in sorted(t.maybe_exports - t.exports):
            m.bind(n, at, tags + ["star-import", "star-maybe"] + more, src=("from", t.dotted, n))
        for n in sorted({b["name"] for b in t.binds if b["name"] in POOL} - t.maybe_exports):
            m.bind(n, at, tags + ["star-import", "star-excluded"] + more + t.all_tags,
                   src=("from", t.dotted, n))
        self.submodule_side(m, t, at, tags)
        return set(t.exports)

    def stmt_del(self, m, sec, indent, name, tags):
        at = m.emit(sec, indent, f"del {self.written(m, name, tags)}")
        m.bind(name, at, tags + ["del"], src=("del",))

    def simple(self, m, sec, indent, name, tags):
        """One statement binding name (and maybe others)."""
        rng = self.rng
        r = rng.random()
        if r < 0.38:
            self.stmt_def(m, sec, indent, name, tags)
        elif r < 0.62:
            self.stmt_value(m, sec, indent, name, tags)
        elif r < 0.72:
            self.stmt_alias(m, sec, indent, name, tags)
        elif r < 0.88:
            self.stmt_from(m, sec, indent, name, tags)
        elif r < 0.92 and m.package:
            self.stmt_submodule(m, sec, indent, name, tags)
        else:
            self.stmt_def(m, sec, indent, name, tags)

    # --- conditions --------------------------------------------------------

    def condition(self, m):
        """(text, tags, taken): a condition, the constructs it uses, and
        whether CPython takes it (None: the generator leaves it to CPython)."""
        rng = self.rng
        k = rng.choice(["tc", "tc-typing", "tc-alias", "tc-not", "main", "version", "platform",
                        "osname", "env", "const"])
        if k == "tc":
            m.need("TYPE_CHECKING")
            return "TYPE_CHECKING", ["type-checking"]
        if k == "tc-typing":
            m.need("typing")
            return "typing.TYPE_CHECKING", ["type-checking", "typing-dotted"]
        if k == "tc-alias":
            m.need("_t")
            return "_t.TYPE_CHECKING", ["type-checking", "typing-alias"]
        if k == "tc-not":
            m.need("TYPE_CHECKING")
            return "not TYPE_CHECKING", ["type-checking"]
        if k == "main":
            return rng.choice(['__name__ == "__main__"', '"__main__" == __name__',
                               "(__name__ == '__main__')"]), ["main-guard"]
        if k == "version":
            m.need("sys")
            return rng.choice(["sys.version_info >= (3, 0)", "sys.version_info < (3, 4)",
                               "sys.version_info[0] == 3", "sys.version_info[:2] >= (3, 6)",
                               "sys.version_info >= (4,)", "sys.version_info.major >= 3",
                               "sys.version_info < (3, 99)", "(3, 7) <= sys.version_info",
                               "sys.version_info > (2, 7, 18)"]), ["version-cond"]
        if k == "platform":
            m.need("sys")
            return rng.choice(['sys.platform == "linux"', 'sys.platform.startswith("win")',
                               'sys.platform != "darwin"', 'sys.platform == "win32"']), \
                ["platform-cond"]
        if k == "osname":
            m.need("os")
            return rng.choice(['os.name == "nt"', 'os.name == "posix"', 'os.name != "nt"']), \
                ["osname-cond"]
        if k == "env":
            m.need("_FLAG")
            return rng.choice(["_FLAG", "not _FLAG", "(_FLAG)"]), ["env-flag"]
        return rng.choice(["True", "False", "0", "1", "None", "not False", "(False)", "not 1"]), \
            ["const-cond"]

    def compound(self, m, indent, names, depth=0):
        """A compound statement at indent, whose arms bind some of names;
        nothing in it is sure. Compound statements nest two deep."""
        rng = self.rng
        sec = "body"
        k = rng.choices(["if", "if-else", "if-elif", "try-import", "try-other", "for", "while",
                         "match", "with-suppress"],
                        [12, 10, 4, 14, 2, 4, 2, 3, 2])[0]

        def arm(tags, ind, count=None):
            for name in rng.sample(names, min(len(names), count or rng.randint(1, 2))):
                if depth < 1 and rng.random() < 0.2:
                    self.compound(m, ind, [name], depth + 1)
                else:
                    self.simple(m, sec, ind, name, tags)

        if k in ("if", "if-else", "if-elif"):
            text, tags = self.condition(m)
            m.emit(sec, indent, f"if {text}:")
            arm(tags + ["cond-body"], indent + 1)
            if k == "if-elif":
                text2, tags2 = self.condition(m)
                m.emit(sec, indent, f"elif {text2}:")
                arm(tags + tags2 + ["cond-elif"], indent + 1)
            if k != "if":
                m.emit(sec, indent, "else:")
                arm(tags + ["cond-else"], indent + 1)
        elif k in ("try-import", "try-other"):
            tags = ["try-importerror"] if k == "try-import" else ["try-other"]
            m.emit(sec, indent, "try:")
            imp = self.try_import_line(m) if k == "try-import" else ("pass", [])
            m.emit(sec, indent + 1, imp[0])
            tags = tags + imp[1]
            arm(tags + ["try-body"], indent + 1)
            # ModuleNotFoundError catches only a module not found
            mnfe = {"import-missing", "import-no-module", "import-broken-module"} & set(imp[1]) \
                and not (m.package and "import-no-module" in imp[1])
            exc = rng.choice(["ImportError", "(ImportError, AttributeError)", "Exception",
                              "ImportError as e"] + ["ModuleNotFoundError"] * bool(mnfe)) \
                if k == "try-import" else "ValueError"
            m.emit(sec, indent, f"except {exc}:")
            arm(tags + ["try-handler"], indent + 1)
            if rng.random() < 0.15:
                m.emit(sec, indent, "else:")
                arm(tags + ["try-else"], indent + 1)
        elif k == "for":
            n = rng.choice(["range(0)", "range(1)", "range(2)", "()", "(1, 2)"])
            m.emit(sec, indent, f"for _i{self.uniq()} in {n}:")
            arm(["loop"], indent + 1)
        elif k == "while":
            m.emit(sec, indent, rng.choice(["while False:", "while 0:"]))
            arm(["loop", "while"], indent + 1)
        elif k == "match":
            self.needs.add("match")
            subj = rng.choice(["1", "2", '"linux"', "None"])
            m.emit(sec, indent, f"match {subj}:")
            for case in rng.sample(["1", "2", '"linux"', "None", "_"], 2):
                m.emit(sec, indent + 1, f"case {case}:")
                arm(["match"], indent + 2, 1)
                if case == "_":
                    break
        else:
            m.need("contextlib")
            m.emit(sec, indent, "with contextlib.suppress(ImportError):")
            m.emit(sec, indent + 1, f"import {rng.choice(MISSING + list(STUBS))}")
            arm(["with-suppress"], indent + 1)

    def try_import_line(self, m):
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            return f"import {rng.choice(MISSING)}", ["import-missing"]
        if r < 0.45:
            return f"import {rng.choice(list(STUBS))}", ["import-installed"]
        if r < 0.55:
            return f"from {rng.choice(list(STUBS))} import ext_fn", ["import-installed"]
        inside = self.importable(m)
        broken = self.mods.get(f"{self.name}._broken")
        if r < 0.7 and broken is not None and broken.dotted != m.dotted:
            mod, more = self.rel(m, broken)
            # its import fails: it binds no _broken on the package, nor f0 here
            self.emit_noise(self.mods[self.name], "_broken", ["import-broken-module"])
            self.emit_noise(m, "f0", ["import-broken-module"])
            return f"from {mod} import f0", ["import-broken-module"] + more
        if r < 0.8:
            return "from . import zz_no_such_module" if m.package else \
                "from .zz_no_such_module import f0", ["import-no-module"]
        if inside:
            t = rng.choice(inside)
            mod, more = self.rel(m, t)
            names = sorted(t.final_sure & set(POOL))
            if names and rng.random() < 0.6:
                return f"from {mod} import {rng.choice(names)} as _probe{self.uniq()}", \
                    ["import-in-tree"] + more
            return f"from {mod} import zz_not_bound_there", ["import-missing-name"] + more
        return f"import {rng.choice(MISSING)}", ["import-missing"]

    # --- modules ------------------------------------------------------------

    def class_stmt(self, m):
        """class C0 with methods as decorators and conditions leave them."""
        rng = self.rng
        at = m.emit("body", 0, "class C0:")
        methods = {}
        for meth in rng.sample(["m", "p", "s", "k"], rng.randint(1, 4)):
            style = rng.choices(["plain", "property", "staticmethod", "classmethod", "redef",
                                 "tc-stub"], [5, 2, 1, 1, 2, 1])[0]
            sig = gen_sig(rng)
            first = "cls" if style == "classmethod" else "self"
            params = ", ".join(x for x in (first, sig.render()) if x)
            if style == "property":
                m.emit("body", 1, "@property")
                params = "self"
            elif style == "staticmethod":
                m.emit("body", 1, "@staticmethod")
                params = sig.render()
            elif style == "classmethod":
                m.emit("body", 1, "@classmethod")
            elif style == "redef":
                m.emit("body", 1, f"def {meth}(self, zz_first):")
                m.emit("body", 2, "return 0")
            m.emit("body", 1, f"def {meth}({params}):")
            m.emit("body", 2, "return 0")
            if style == "tc-stub":
                m.need("TYPE_CHECKING")
                m.emit("body", 1, "if TYPE_CHECKING:")
                m.emit("body", 2, f"def {meth}(self, zz_stub_only): ...")
            m.sigs.setdefault(meth, []).append(sig)
            methods[meth] = style
        m.classes["C0"] = methods
        m.bind("C0", at, ["class"] + [f"method-{s}" for s in sorted(set(methods.values()))])

    def bound_func(self, m):
        """def bndK(q, nhead, o=None) with one guard on nhead, the one a
        call meets, among comparisons no call runs."""
        rng = self.rng
        name = f"bnd{len(self.bounds)}"
        n = BOUND_NAME
        b = rng.choice(BOUNDS)
        guard = rng.choice(["le-assert", "lt-assert", "mirror", "chained", "paren-left",
                            "paren-right", "paren-both", "raise-gt", "raise-not", "raise-ge",
                            "return-guard", "elif-guard", "none"])
        tags = ["bound-" + guard]
        consts = {1, 2} | ({b, b + 1} if guard != "none" else set())
        pre, distractors = [], []
        for _ in range(rng.choice([0, 0, 1, 2])):
            d = rng.choice([x for x in BOUNDS if x != b])
            consts.add(d)
            kind = rng.choice(["nested", "lambda", "comprehension", "dead-false", "dead-tc",
                               "string", "comment", "other-name", "after-return"])
            tags.append("bound-distractor-" + kind)
            distractors.append(["bound-distractor-" + kind, 2 if kind == "after-return" else d])
            if kind == "dead-tc":
                m.need("TYPE_CHECKING")
            pre += {"nested": ["def _check(k):", f"    return {n} <= {d}"],
                    "lambda": [f"_c = lambda: {n} <= {d}"],
                    "comprehension": [f"_l = [{n} <= {d} for _ in ()]"],
                    "dead-false": ["if False:", f"    assert {n} <= {d}"],
                    "dead-tc": ["if TYPE_CHECKING:", f"    assert {n} <= {d}"],
                    "string": [f'_s = "{n} <= {d}"'],
                    "comment": [f"# {n} <= {d}"],
                    "other-name": [f"assert q <= {d}"],
                    "after-return": []}[kind]
        raise_ = "raise ValueError('too many heads')"
        g = {"le-assert": [f"assert {n} <= {b}"],
             "lt-assert": [f"assert {n} < {b + 1}"],
             "mirror": [f"assert {b} >= {n}"],
             "chained": [f"assert 1 <= {n} <= {b}"],
             "paren-left": [f"assert ({n}) <= {b}"],
             "paren-right": [f"assert {n} <= ({b})"],
             "paren-both": [f"assert ({n} <= {b})"],
             "raise-gt": [f"if {n} > {b}:", "    " + raise_],
             "raise-not": [f"if not {n} <= {b}:", "    " + raise_],
             "raise-ge": [f"if {n} >= {b + 1}:", "    " + raise_],
             "return-guard": [f"if {n} <= {b}:", "    return q", raise_],
             "elif-guard": [f"if {n} in (1, 2):", "    pass", f"elif {n} > {b}:", "    " + raise_],
             "none": []}[guard]
        if guard == "return-guard":
            body = pre + g
        else:
            body = (pre + g if rng.random() < 0.5 else g + pre) + ["return q"]
        if "bound-distractor-after-return" in tags:
            body.append(f"assert {n} <= 2")
        m.emit("body", 0, f"def {name}(q, {n}, o=None):")
        for line in body or ["return q"]:
            m.emit("body", 1, line)
        m.bind(name, ("body", len(m.sections["body"]) - len(body or [0]) - 1), tags)
        cands = {0, HUGE}
        for c in consts:
            cands |= {c - 1, c, c + 1}
        self.bounds.append({"module": m, "def": name, "tags": tags, "guard": "bound-" + guard,
                            "value": None if guard == "none" else b, "distractors": distractors,
                            "candidates": sorted(x for x in cands if x >= 0)})

    def fill(self, m):
        rng = self.rng
        names = list(POOL)
        if m.package:
            names += [d.rpartition(".")[2] for d in self.order
                      if d.rpartition(".")[0] == m.dotted]
        nstmt = rng.randint(3, 9)
        for _ in range(nstmt):
            r = rng.random()
            pick = rng.choice(names)
            if r < 0.42:
                first = len(m.binds)
                self.simple(m, "body", 0, pick, [])
                self.settle(m, first)
            elif r < 0.72:
                self.compound(m, 0, rng.sample(names, rng.randint(1, 3)))
            elif r < 0.8:
                m.sure |= self.stmt_star(m, "body", 0, [])
            elif r < 0.88 and m.sure & set(POOL):
                victim = rng.choice(sorted(m.sure & set(POOL)))
                self.stmt_del(m, "body", 0, victim, [])
                m.sure.discard(victim)
            elif r < 0.92:
                self.class_stmt(m)
                m.sure.add("C0")
            elif r < 0.96:
                self.bound_func(m)
            else:
                # a redefinition after a lone-CR comment, the mla.py trap
                first = len(m.binds)
                self.stmt_def(m, "body", 0, pick, [], lone_cr=True)
                self.settle(m, first)
        if rng.random() < 0.3:
            self.bound_func(m)

    def settle(self, m, first):
        """The names the top-level statement whose bindings start at index
        first surely binds (and unbinds)."""
        for b in m.binds[first:]:
            if "del" in b["tags"]:
                m.sure.discard(b["name"])
            elif not {"global-uncalled", "star-maybe", "star-excluded"} & set(b["tags"]):
                m.sure.add(b["name"])

    def all_forms(self, m):
        """__all__ in one of the forms Python reads, of names surely bound."""
        rng = self.rng
        pub = sorted(n for n in m.sure if n in POOL)
        if rng.random() < 0.45 or not pub:
            m.all = None
            return
        names = rng.sample(pub, rng.randint(1, len(pub)))
        form = rng.choice(["list", "tuple", "bare-tuple", "concat", "plus-eq", "append", "extend",
                           "remove", "del-item", "comprehension", "filtered", "dynamic",
                           "self-concat", "other-all"])
        q = lambda ns: ", ".join(json.dumps(n, ensure_ascii=False) for n in ns)
        head = "head"
        m.all_tags = ["all-" + form]
        if form in ("list", "tuple", "bare-tuple", "concat", "comprehension", "filtered"):
            text = {"list": f"[{q(names)}]", "tuple": f"({q(names)},)",
                    "bare-tuple": f"{q(names)},",
                    "concat": f"[{q(names[:1])}] + [{q(names[1:])}]",
                    "comprehension": f"[n for n in ({q(names)},)]",
                    "filtered": f"[n for n in ({q(names + ['zz_gone'])},) if n != \"zz_gone\"]"}[form]
            m.emit(head, 0, f"__all__ = {text}")
            m.all = names
        elif form in ("plus-eq", "append", "extend", "self-concat"):
            first, rest = names[:1], names[1:] or names[:1]
            m.emit(head, 0, f"__all__ = [{q(first)}]")
            extra = [n for n in rest if n not in first]
            if form == "plus-eq":
                m.emit("tail", 0, f"__all__ += [{q(extra)}]")
            elif form == "append":
                for n in extra:
                    m.emit("tail", 0, f"__all__.append({q([n])})")
            elif form == "extend":
                m.emit("tail", 0, f"__all__.extend(({q(extra)},))" if extra else "__all__.extend([])")
            else:
                m.emit("tail", 0, f"__all__ = __all__ + [{q(extra)}]")
            m.all = first + extra
        elif form in ("remove", "del-item"):
            gone = names[0]
            m.emit(head, 0, f"__all__ = [{q(names)}]")
            m.emit("tail", 0, f"__all__.remove({q([gone])})" if form == "remove"
                   else "del __all__[0]")
            m.all = names[1:]
        elif form == "dynamic":
            m.emit("tail", 0, '__all__ = [n for n in dir() if not n.startswith("_")]')
            m.all = None
            m.all_dynamic = True
        else:  # other-all: another module's __all__ joined with ours
            cands = [t for t in self.importable(m) if t.all]
            if not cands:
                m.emit(head, 0, f"__all__ = [{q(names)}]")
                m.all = names
                m.all_tags = ["all-list"]
                return
            t = rng.choice(cands)
            mod, _ = self.rel(m, t)
            m.emit("tail", 0, f"from {mod} import *")
            at = (("tail", len(m.sections["tail"]) - 1))
            for n in t.all:
                m.bind(n, at, ["star-import"], src=("from", t.dotted, n))
            m.emit("tail", 0, f"from {mod} import __all__ as _other_all")
            m.emit("tail", 0, f"__all__ = list(_other_all) + [{q(names)}]")
            m.all = list(t.all) + [n for n in names if n not in t.all]
            m.final_extra = set(t.all)

    def module(self, dotted, path, package):
        m = Mod(self, dotted, path, package, self.rng)
        r = self.rng.random()
        if r < 0.08:
            m.eol = "\r\n"
            m.file_tags.append("crlf")
        elif r < 0.11:
            m.eol = "\r"
            m.file_tags.append("cr-file")
        return m

    def build(self):
        rng = self.rng
        pkg = self.name
        layout = [(pkg, f"{pkg}/__init__.py", True)]
        if rng.random() < 0.35:
            layout += [(f"{pkg}.sub", f"{pkg}/sub/__init__.py", True),
                       (f"{pkg}.sub.s0", f"{pkg}/sub/s0.py", False)]
        for k in range(rng.randint(1, 3)):
            layout.append((f"{pkg}.m{k}", f"{pkg}/m{k}.py", False))
        if rng.random() < 0.3:
            layout.append((f"{pkg}._broken", f"{pkg}/_broken.py", False))
        self.order = [d for d, _, _ in layout]
        for d, p, pk in layout:
            self.mods[d] = self.module(d, p, pk)
        if f"{pkg}._broken" in self.mods:
            b = self.mods[f"{pkg}._broken"]
            b.broken = True
            b.emit("body", 0, f"import {MISSING[0]}")
            b.emit("body", 0, "def f0(a):")
            b.emit("body", 0, "    return a")
            b.final_sure, b.exports, b.maybe_exports, b.all = set(), set(), set(), None
        # the leaves first: an importer knows what its imports surely bind
        for d in reversed(self.order):
            m = self.mods[d]
            if m.broken:
                continue
            self.fill(m)
            self.all_forms(m)
            m.final_sure = set(m.sure) | getattr(m, "final_extra", set())
            if m.all is not None:
                m.exports = set(m.all)
                m.maybe_exports = set(m.all)
            else:
                m.exports = {n for n in m.final_sure if not n.startswith("_") and n in POOL}
                m.maybe_exports = m.exports | {b["name"] for b in m.binds if b["name"] in POOL and
                                               not {"del", "star-excluded"} & set(b["tags"])}
                if getattr(m, "all_dynamic", False):
                    m.maybe_exports = set(m.maybe_exports)
        return self.package()

    # --- output --------------------------------------------------------------

    def package(self):
        files = {}
        for d in self.order:
            m = self.mods[d]
            files[m.path] = m.render()
            try:
                compile(files[m.path], m.path, "exec", dont_inherit=True)
            except SyntaxError as e:
                if "match" in self.needs and sys.version_info < (3, 10):
                    continue
                raise AssertionError(f"generated {m.path} does not compile: {e}")
        digest = hashlib.sha1()
        for path in sorted(files):
            digest.update(path.encode() + b"\0" + files[path] + b"\0")
        meta = {}
        for d in self.order:
            m = self.mods[d]
            meta[d] = {"path": m.path, "package": m.package, "broken": m.broken,
                       "file_tags": m.file_tags, "all_tags": m.all_tags,
                       "binds": [{"name": b["name"], "line": b["line"], "tags": b["tags"],
                                  "src": b["src"]} for b in m.binds],
                       "noise": m.noise,
                       "bounds": {b["def"]: {k: b[k] for k in ("guard", "value", "distractors")}
                                  for b in self.bounds if b["module"] is m}}
        return {"name": self.name, "files": files, "digest": digest.hexdigest(),
                "needs": sorted(self.needs), "meta": meta, "questions": self.questions()}

    def questions(self):
        rng = self.rng
        qs = []
        allsigs = {}
        for d in self.order:
            for n, sigs in self.mods[d].sigs.items():
                allsigs.setdefault(n, []).extend(sigs)

        def checks(name):
            """None, params or binds, from the signatures the package gives name."""
            sigs = allsigs.get(name, [])
            r = rng.random()
            if r < 0.45:
                return {}
            pnames = sorted({p for s in sigs for p in s.names()}) or PARAMS
            if r < 0.75:
                return {"params": sorted(set(rng.sample(pnames, min(len(pnames),
                                                                    rng.randint(1, 2)))))}
            npos = rng.randint(0, 4)
            kws = sorted(set(rng.sample(pnames, min(len(pnames), rng.randint(0, 2)))))
            return {"binds": {"positional": npos, "keywords": kws}}

        def asked(name):
            """The name as a rule writes it: mostly NFKC's, at times as written."""
            if name == "find" and rng.random() < 0.2:
                return "\ufb01nd"
            return name

        for d in self.order:
            m = self.mods[d]
            if m.broken:
                continue
            names = list(POOL) + [NEVER]
            if m.package:
                names += [x.rpartition(".")[2] for x in self.order
                          if x.rpartition(".")[0] == d]
            bound_here = {b["name"] for b in m.binds}
            for n in names:
                # drawn either way, so that what the metadata records does
                # not move the questions
                skip = rng.random() < 0.7
                if n not in bound_here and skip:
                    continue
                q = {"kind": "def", "file": m.path, "module": d, "name": asked(n)}
                q.update(checks(n))
                qs.append(q)
                if rng.random() < 0.5:
                    q2 = {"kind": "export", "from": d, "module": d, "name": asked(n)}
                    q2.update(checks(n))
                    qs.append(q2)
            for cls, methods in m.classes.items():
                for meth in sorted(methods):
                    q = {"kind": "def", "file": m.path, "module": d, "name": f"{cls}.{meth}"}
                    q.update(checks(meth))
                    qs.append(q)
        for b in self.bounds:
            m = b["module"]
            qs.append({"kind": "bound", "file": m.path, "module": m.dotted, "def": b["def"],
                       "name": BOUND_NAME, "candidates": b["candidates"]})
        for q in qs:
            if "_FLAG" in self.mods[q["module"]].needs and rng.random() < 0.5:
                q["assume_false"] = ["_FLAG"]
        return qs


def generate(seed, index):
    """Package `index` of `seed`: {name, files: {path: bytes}, digest,
    needs, meta, questions}."""
    return Gen(seed, index).build()


def write(pkg, root):
    for path, data in pkg["files"].items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.rsplit("\n\n", 1)[1])
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    for i in range(count):
        p = generate(seed, i)
        write(p, out)
        with open(os.path.join(out, p["name"], "QUESTIONS.json"), "w") as f:
            json.dump(p["questions"], f, indent=1, ensure_ascii=False)
