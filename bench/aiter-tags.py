#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent reading of AITER, tag by tag, against aiter-probe.

For every v* tag of an AITER git directory (and each --ref, each --tree) this
script decides on its own, and compares with `aiter-probe scan --format json`:

  C sources, with a small C lexer (comments, continuations, `#if 0`, literals):
  the MLA reducer (csrc/kernels/mla/reduce.cu) and metadata planner
  (csrc/kernels/mla/metadata/v1_2_device.cuh): a 24-head/512 reducer case, a
  `num_heads == 24` branch, both (mla.decode.native_h24), every (heads, head
  dim) case. vLLM's whitespace-strip probe is printed beside them.

  Python sources, with Python's own `ast` (nothing is imported or run), and
  the MLA kernel tables with `csv`: parameters of mla_decode_fwd / fused_moe,
  what `from aiter import X` binds (followed statically from
  aiter/__init__.py through star imports with or without __all__, aliases,
  nested packages, module-level if/try/with; `if AITER_TRITON_ONLY` /
  `AITER_AOT_IMPORT` taken as False; except-handler fallbacks left out;
  modules outside aiter opaque), whether a call with the positionals and
  keywords vLLM uses binds by Python's rules, the Gluon decode entry's head
  bound, the gfx942/gfx950 mla_asm.csv rows, the SITU v2 A4W4 config and env
  read; and from them 14 capabilities (see NEW_RULES and CAPABILITIES).
  The census packs (rules/vllm-census.yaml, rules/sglang.yaml) are read too:
  pybind enum members with the C lexer, class attributes from the class
  body, `from M import N` through aiter.ops.triton's _BACKWARD_COMPAT_MAP
  (CENSUS_CAPS and census_verdicts).

  The MLA ASM decode's kernel lookup, run: the body of
  csrc/py_itfs_cu/asm_mla.cu's mla_decode_stage1_asm_fwd is interpreted as C
  up to its get_heuristic_kernel_mla call, for a persistent gfx950 bf16 call
  with 16 heads per KV head, an LSE buffer, causal, and each query length 1
  to 16 (also without persistence where aiter/mla.py may drop it), and the
  key it asks is looked up in the gfx950 table; the query lengths found are
  compared with what the backend adapter (python/aiter_probe, the code under
  test) answers from aiter-probe's rules (column lse-q); the same for gfx942
  and its table (a disagreement is listed under the row).

  The metadata planner's natively_supported (and hk_mtp_experimental, which
  it ORs in), as declared in csrc/kernels/mla/metadata/v1_2_device.cuh, run
  over gfx942, gfx950 and gfx1250, q/kv bf16 or FP8, 12 head counts, query
  lengths 1 to 8 and AITER_ENABLE_EXPERIMENTAL on, off or not known, and
  compared point by point with the adapter's native_heads (given torch's
  arch and dtype names).

The table has one row per tag (version order), ref or tree, a 1/0 column per
capability (`!`: aiter-probe disagrees on it or on a rule under it); then the
first release where each capability holds, and where today's backend probes
(vLLM's import-only and regex probes, hasattr, SGLang's reducer head table,
vLLM's persistent-LSE qlen constant) answer differently from the verdicts.
The new rule ids are compared only once aiter-probe's answer has any of them
(before their packs exist only mla.decode.native_h24's rules are compared).

    bench/aiter-tags.py [--probe PATH] [--tags GLOB] [--ref REF]... GIT_DIR
    bench/aiter-tags.py [--probe PATH] --tree DIR...
    bench/aiter-tags.py [--probe PATH] --history [--history-range main] [--ref REF]... GIT_DIR

A scan unpacks each ref's csrc/kernels/mla, aiter, hsa/gfx942/mla/mla_asm.csv
and hsa/gfx950/mla/mla_asm.csv (those present) with `git archive` and runs
`aiter-probe scan --no-launch --format json --aiter-root TREE`. --history
instead runs `aiter-probe history --git GIT_DIR main --format json` once, of
the shape
    {"initial": {"commit", "rules": {ID: {"status", "captures": [{NAME: VALUE}...]}},
                 "capabilities": {ID: bool}},
     "changes": [{"id", "kind": "rule"|"capability", "commit", "before", "after"}]}
(a rule's before/after {"status", "captures"}, a capability's booleans; each
commit compared with its first parent), and checks the state at each ref's
commit (the initial state plus the changes along its first-parent chain) against
the verdicts of that ref; refs not reachable from the range's tip are skipped.

Exit status: 0 when every row agrees, 1 on any disagreement, 2 on an error.
With --independent-only (or no aiter-probe binary found) only the independent
and vLLM readings are printed and the exit status is 0.
"""

import argparse
import ast
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REDUCE_PATHS = ("csrc/kernels/mla/reduce.cu",
                "aiter_meta/csrc/kernels/mla/reduce.cu")
METADATA_PATHS = ("csrc/kernels/mla/metadata/v1_2_device.cuh",
                  "aiter_meta/csrc/kernels/mla/metadata/v1_2_device.cuh")
ARCHIVE_DIRS = ("csrc/kernels/mla", "aiter_meta/csrc/kernels/mla")

RULE_REDUCE = "mla.reduce.native_h24_d512"
RULE_METADATA = "mla.metadata.native_h24"
RULE_CASES = "mla.reduce.cases"
CAPABILITY = "mla.decode.native_h24"

# Every dispatch macro the reducer has used: MLA_MERGE_CASE_{IF,EF} with ten
# arguments (late 2025), then MLA_REDUCE_CASE_{IF,EF} with seven. Heads and
# head dim are the second and fourth arguments in both.
CASE_MACRO = re.compile(r"MLA_(?:REDUCE|MERGE)_CASE_(?:IF|EF)\Z")

VLLM_REDUCE = "MLA_REDUCE_CASE_EF(NUM_HEAD,24,HEAD_DIM,512,"
VLLM_METADATA = "num_heads==24"


# --- A small C lexer ---------------------------------------------------------

class Token:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind = kind  # ident, number, string, char, punct
        self.text = text
        self.line = line  # 1-based line of the original file


PUNCT3 = ("<<=", ">>=", "...", "->*")
PUNCT2 = ("==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "++", "--", "->",
          "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", "##")


class Source:
    """The text with a cursor that steps over backslash-newline pairs, the way
    translation phase 2 splices lines, while counting original lines."""

    def __init__(self, text):
        if text.startswith("\ufeff"):
            text = text[1:]
        # A lone CR ends a line too; CRLF is one line ending.
        self.s = text.replace("\r\n", "\n").replace("\r", "\n")
        self.i = 0
        self.line = 1

    def _splice(self):
        s = self.s
        while s.startswith("\\\n", self.i):
            self.i += 2
            self.line += 1

    def peek(self, k=0):
        self._splice()
        j = self.i
        for _ in range(k):
            j += 1
            while self.s.startswith("\\\n", j):
                j += 2
        return self.s[j] if j < len(self.s) else ""

    def get(self):
        self._splice()
        if self.i >= len(self.s):
            return ""
        c = self.s[self.i]
        self.i += 1
        if c == "\n":
            self.line += 1
        return c

    def at_end(self):
        self._splice()
        return self.i >= len(self.s)


def lex_logical_lines(text):
    """Yields (tokens, is_directive) for each logical line: comments are gone,
    continuations joined, string and character literals kept whole."""
    src = Source(text)
    toks = []
    at_line_start = True
    directive = False
    while True:
        c = src.peek()
        if c == "":
            if toks:
                yield toks, directive
            return
        if c == "\n":
            src.get()
            if toks or directive:
                yield toks, directive
            toks = []
            directive = False
            at_line_start = True
            continue
        if c in " \t\f\v":
            src.get()
            continue
        if c == "/" and src.peek(1) == "/":
            while src.peek() not in ("\n", ""):
                src.get()
            continue
        if c == "/" and src.peek(1) == "*":
            src.get()
            src.get()
            while not src.at_end():
                if src.peek() == "*" and src.peek(1) == "/":
                    src.get()
                    src.get()
                    break
                src.get()
            continue
        line = src.line
        if c == "#" and at_line_start:
            src.get()
            directive = True
            at_line_start = False
            toks.append(Token("punct", "#", line))
            continue
        at_line_start = False
        if c.isalpha() or c == "_":
            word = ""
            while src.peek().isalnum() or src.peek() == "_":
                word += src.get()
            # Encoding prefixes of literals (u8"", L'', R"(...)") stay one token.
            if src.peek() in ("\"", "'") and re.fullmatch(r"(u8|u|U|L)?R?", word):
                if word.endswith("R") and src.peek() == "\"":
                    toks.append(Token("string", word + lex_raw_string(src), line))
                else:
                    q = src.peek()
                    toks.append(Token("string" if q == "\"" else "char",
                                      word + lex_quoted(src), line))
                continue
            toks.append(Token("ident", word, line))
            continue
        if c.isdigit() or (c == "." and src.peek(1).isdigit()):
            num = src.get()
            while True:
                d = src.peek()
                if d in ("e", "E", "p", "P") and src.peek(1) in ("+", "-"):
                    num += src.get() + src.get()
                elif d.isalnum() or d in ("_", "."):
                    num += src.get()
                elif d == "'" and (src.peek(1).isalnum() or src.peek(1) == "_"):
                    num += src.get()  # C++14 digit separator
                else:
                    break
            toks.append(Token("number", num, line))
            continue
        if c in ("\"", "'"):
            toks.append(Token("string" if c == "\"" else "char", lex_quoted(src), line))
            continue
        three = c + src.peek(1) + src.peek(2)
        two = c + src.peek(1)
        if three in PUNCT3:
            text_ = three
        elif two in PUNCT2:
            text_ = two
        else:
            text_ = c
        for _ in text_:
            src.get()
        toks.append(Token("punct", text_, line))


def lex_quoted(src):
    quote = src.get()
    out = quote
    while not src.at_end():
        c = src.get()
        out += c
        if c == "\\":
            out += src.get()
        elif c == quote or c == "\n":
            break
    return out


def lex_raw_string(src):
    out = src.get()  # the opening quote
    delim = ""
    while not src.at_end() and src.peek() != "(":
        delim += src.get()
    out += delim
    end = ")" + delim + "\""
    body = ""
    while not src.at_end():
        body += src.s[src.i]
        if src.s[src.i] == "\n":
            src.line += 1
        src.i += 1
        if body.endswith(end):
            break
    return out + body


# --- Conditional inclusion: only `#if 0` is decided, like the rule language --

def live_tokens(text):
    """The tokens the compiler can see. A group is dead when its own condition
    is the literal `#if 0` or `#elif 0`, or when it sits inside a dead group;
    every other condition is unknown here, so its groups stay live, #else
    included. The conditional directives themselves are dropped; #define
    bodies are kept, since the reducer's dispatch cases live inside its router
    macro."""
    out = []
    stack = []  # per nesting level: (outer_dead, this_group_dead)
    for toks, directive in lex_logical_lines(text):
        name = toks[1].text if directive and len(toks) > 1 else ""
        cond_zero = [t.text for t in toks[2:]] == ["0"]
        outer_dead = bool(stack) and (stack[-1][0] or stack[-1][1])
        if name in ("if", "ifdef", "ifndef"):
            stack.append((outer_dead, name == "if" and cond_zero))
            continue
        if name in ("elif", "else") and stack:
            stack[-1] = (stack[-1][0], name == "elif" and cond_zero)
            continue
        if name == "endif" and stack:
            stack.pop()
            continue
        if stack and (stack[-1][0] or stack[-1][1]):
            continue
        out.extend(toks)
    return out


# --- The readings --------------------------------------------------------------

def reducer_cases(text):
    """Every (heads, head_dim, line) a reducer case macro is invoked with."""
    toks = live_tokens(text)
    cases = []
    for i, t in enumerate(toks):
        if t.kind != "ident" or not CASE_MACRO.match(t.text):
            continue
        if i + 1 >= len(toks) or toks[i + 1].text != "(":
            continue
        if i > 0 and toks[i - 1].text == "define":
            continue  # the macro's own definition
        args = split_args(toks, i + 1)
        if args is None or len(args) < 4:
            continue
        # (runtime heads, heads, runtime head dim, head dim, ...): a case
        # names its constants; the macro's own parameters are identifiers.
        if not all(len(a) == 1 for a in args[:4]):
            continue
        name_h, heads, name_d, dim = (a[0] for a in args[:4])
        if (name_h.kind == "ident" and name_d.kind == "ident" and
                is_decimal(heads) and is_decimal(dim)):
            cases.append((int(heads.text), int(dim.text), t.line))
    return cases


def is_decimal(tok):
    return tok.kind == "number" and tok.text.isdigit()


def split_args(toks, open_index):
    """The top-level comma-separated arguments after toks[open_index] == '('."""
    depth = 0
    args = [[]]
    for t in toks[open_index:]:
        if t.text in ("(", "[", "{"):
            depth += 1
            if depth == 1:
                continue
        elif t.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return args
        elif t.text == "," and depth == 1:
            args.append([])
            continue
        args[-1].append(t)
    return None


def metadata_h24_lines(text):
    """Lines where the planner compares num_heads == 24 (exact tokens)."""
    toks = live_tokens(text)
    lines = []
    for i in range(len(toks) - 2):
        a, b, c = toks[i], toks[i + 1], toks[i + 2]
        if (a.kind == "ident" and a.text == "num_heads" and b.text == "==" and
                c.kind == "number" and c.text == "24"):
            lines.append(a.line)
    return lines


def vllm_reading(reduce_text, metadata_text):
    """vLLM's probe: every whitespace character removed, then a substring."""
    def has(text, needle):
        return text is not None and needle in "".join(text.split())
    return has(reduce_text, VLLM_REDUCE), has(metadata_text, VLLM_METADATA)


def independent(reduce_text, metadata_text):
    cases = reducer_cases(reduce_text) if reduce_text is not None else []
    meta_lines = metadata_h24_lines(metadata_text) if metadata_text is not None else []
    reduce_ok = any(h == 24 and d == 512 for h, d, _ in cases)
    meta_ok = bool(meta_lines)
    return {
        "reduce": reduce_ok,
        "metadata": meta_ok,
        "capability": reduce_ok and meta_ok,
        "cases": sorted(cases),
        "metadata_lines": meta_lines,
        "reduce_present": reduce_text is not None,
        "metadata_present": metadata_text is not None,
    }


# --- Inputs: git tags or plain trees ------------------------------------------

def git(git_dir, *args, binary=False):
    res = subprocess.run(["git", "--git-dir", git_dir] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if res.returncode != 0:
        return None
    return res.stdout if binary else res.stdout.decode("utf-8", "surrogateescape")


def decode(data):
    return None if data is None else data.decode("utf-8", "surrogateescape")


def first_in_git(git_dir, ref, paths):
    for p in paths:
        data = git(git_dir, "show", f"{ref}:{p}", binary=True)
        if data is not None:
            return decode(data)
    return None


def first_in_tree(root, paths):
    for p in paths:
        full = os.path.join(root, p)
        if os.path.isfile(full):
            with open(full, "rb") as f:
                return decode(f.read())
    return None


def version_key(tag):
    """Orders v0.1.13-rc1 < v0.1.13.dev0 < v0.1.13 < v0.1.13.post1 roughly the
    way PEP 440 does; anything unparsed sorts last by name."""
    m = re.match(r"v(\d+(?:\.\d+)*)(?:[.-]?(rc|dev|post)(\d*))?(?:-(.*))?$", tag)
    if not m:
        return ((9999,), 9, 0, tag)
    nums = tuple(int(x) for x in m.group(1).split("."))
    rank = {"dev": 0, "rc": 1, None: 2, "post": 3}[m.group(2)]
    return (nums, rank, int(m.group(3) or 0), m.group(4) or "")


def list_tags(git_dir, pattern):
    out = git(git_dir, "tag", "-l", pattern)
    if out is None:
        print(f"aiter-tags: not a git directory: {git_dir}", file=sys.stderr)
        sys.exit(2)
    return sorted(out.split(), key=version_key)


# --- Sources: one ref of a git directory, or a plain tree ----------------------

class CatFile:
    """One `git cat-file --batch` per git directory: blobs on demand."""

    def __init__(self, git_dir):
        self.proc = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, spec):
        self.proc.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) != 3:
            return None  # "<spec> missing" (or ambiguous)
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data if header[1] == b"blob" else None

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


# What the new rules read, in AITER's checkout layout (also what a scan needs).
PY_ROOT = "aiter"
CSV_942 = "hsa/gfx942/mla/mla_asm.csv"
CSV_950 = "hsa/gfx950/mla/mla_asm.csv"
CODEGEN_PY = "hsa/codegen.py"
ASM_MLA = "csrc/py_itfs_cu/asm_mla.cu"
ROCM_OPS = "csrc/include/rocm_ops.hpp"   # the census rows' pybind enums
NEW_PATHS = (PY_ROOT, CSV_942, CSV_950, CODEGEN_PY, ASM_MLA, ROCM_OPS)


class GitSource:
    def __init__(self, git_dir, ref, catfile):
        self.ref = ref
        self.cat = catfile
        out = git(git_dir, "ls-tree", "-r", "--name-only", "-z", ref, "--", *NEW_PATHS)
        self.files = set(p for p in (out or "").split("\0") if p)
        self.dirs = set()
        for p in self.files:
            parts = p.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))

    def isfile(self, path):
        return path in self.files

    def isdir(self, path):
        return path in self.dirs

    def read(self, path):
        return self.cat.read(f"{self.ref}:{path}") if path in self.files else None

    def find_named(self, under, name):
        return sorted(p for p in self.files
                      if p.startswith(under + "/") and p.rsplit("/", 1)[-1] == name)


class TreeSource:
    """A tree on disk, in either layout: as aiter/jit/core.py has it, an
    installed wheel keeps csrc/ and hsa/ (and 3rdparty/, gradlib/) in
    aiter_meta/ beside the package; paths name the checkout layout."""

    META_DIRS = ("csrc", "hsa", "3rdparty", "gradlib")

    def __init__(self, root):
        self.root = root
        meta = os.path.join(root, "aiter_meta")
        self.meta = meta if os.path.isdir(os.path.join(meta, "csrc")) else root

    def _full(self, path):
        base = self.meta if path.split("/", 1)[0] in self.META_DIRS and "/" in path else self.root
        return os.path.join(base, path)

    def isfile(self, path):
        return os.path.isfile(self._full(path))

    def isdir(self, path):
        return os.path.isdir(self._full(path))

    def read(self, path):
        try:
            with open(self._full(path), "rb") as f:
                return f.read()
        except OSError:
            return None

    def find_named(self, under, name):
        hits = []
        for d, _, files in os.walk(os.path.join(self.root, under)):
            if name in files:
                hits.append(os.path.relpath(os.path.join(d, name), self.root))
        return sorted(hits)


# --- Python reading with `ast` -------------------------------------------------
#
# A module is a list of bindings in source order. Module-level if/try/with
# bodies are walked (all arms, except-handlers left out: a name bound only
# there is a fallback for a failed import); bindings under an arm that a
# default import never runs (`if AITER_TRITON_ONLY:` and the like, both flags
# False) carry dead=True: export resolution skips them, "def F in file P"
# keeps them (all arms).

FLAGS = ("AITER_TRITON_ONLY", "AITER_AOT_IMPORT")


class PyParseError(Exception):
    def __init__(self, path, why):
        super().__init__(f"{path}: {why}")
        self.path = path


class Binding:
    __slots__ = ("name", "kind", "data", "line", "dead", "index")

    def __init__(self, name, kind, data, line, dead):
        self.name, self.kind, self.data, self.line, self.dead = name, kind, data, line, dead
        self.index = 0


def flag_truth(test):
    """True/False for a condition that is exactly a flag name (under any number
    of `not`; parentheses leave no trace in the tree), None otherwise."""
    negate = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        negate = not negate
        test = test.operand
    if isinstance(test, ast.Name) and test.id in FLAGS:
        return negate  # the flag itself is False
    return None


def target_names(t):
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in target_names(e)]
    if isinstance(t, ast.Starred):
        return target_names(t.value)
    return []  # attribute, subscript: no module-level name


class PyModule:
    def __init__(self, name, path, is_pkg, tree, text):
        self.name = name          # dotted, e.g. aiter.ops.attention
        self.path = path          # None for a namespace package
        self.is_pkg = is_pkg
        self.text = text
        self.tree = tree
        self.bindings = []
        self.all_names = None     # a readable __all__, else None
        if tree is not None:
            self._collect(tree.body, False)
            for i, b in enumerate(self.bindings):
                b.index = i
            self.all_names = read_all(tree.body)

    def package(self):
        return self.name if self.is_pkg else self.name.rpartition(".")[0]

    def absolute(self, level, module):
        if level == 0:
            return module
        base = self.package().split(".")
        if level > 1:
            base = base[:len(base) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    def _add(self, name, kind, data, line, dead):
        self.bindings.append(Binding(name, kind, data, line, dead))

    def _collect(self, stmts, dead):
        for s in stmts:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._add(s.name, "def", s, s.lineno, dead)
            elif isinstance(s, ast.ClassDef):
                self._add(s.name, "value", "a class", s.lineno, dead)
            elif isinstance(s, ast.Import):
                for a in s.names:
                    self._add(a.asname or a.name.split(".")[0], "value", "a module", s.lineno, dead)
            elif isinstance(s, ast.ImportFrom):
                mod = self.absolute(s.level, s.module)
                for a in s.names:
                    if a.name == "*":
                        self._add("*", "star", mod, s.lineno, dead)
                    else:
                        self._add(a.asname or a.name, "from", (mod, a.name), s.lineno, dead)
            elif isinstance(s, ast.Assign):
                alias = s.value.id if isinstance(s.value, ast.Name) else None
                for t in s.targets:
                    if alias and isinstance(t, ast.Name):
                        self._add(t.id, "alias", alias, s.lineno, dead)
                    else:
                        for n in target_names(t):
                            self._add(n, "value", "a value", s.lineno, dead)
            elif isinstance(s, ast.AnnAssign):
                if s.value is not None and isinstance(s.target, ast.Name):
                    if isinstance(s.value, ast.Name):
                        self._add(s.target.id, "alias", s.value.id, s.lineno, dead)
                    else:
                        self._add(s.target.id, "value", "a value", s.lineno, dead)
            elif isinstance(s, ast.AugAssign):
                for n in target_names(s.target):
                    self._add(n, "value", "a value", s.lineno, dead)
            elif isinstance(s, ast.Delete):
                for t in s.targets:
                    for n in target_names(t):
                        self._add(n, "deleted", None, s.lineno, dead)
            elif isinstance(s, ast.If):
                truth = flag_truth(s.test)
                self._collect(s.body, dead or truth is False)
                self._collect(s.orelse, dead or truth is True)
            elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                self._collect(s.body, dead)
                self._collect(s.orelse, dead)
                self._collect(s.finalbody, dead)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    if item.optional_vars is not None:
                        for n in target_names(item.optional_vars):
                            self._add(n, "value", "a value", s.lineno, dead)
                self._collect(s.body, dead)


def read_all(stmts):
    """`__all__` when every statement that builds it is a literal one
    (= / += a list or tuple of strings, .extend([...]), .append("x")), at
    module level or in if/try/with blocks; None when any is not."""
    names = None
    readable = True

    def literal(node):
        if isinstance(node, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return [e.value for e in node.elts]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = literal(node.left), literal(node.right)
            return None if a is None or b is None else a + b
        return None

    def walk(body):
        nonlocal names, readable
        for s in body:
            if isinstance(s, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in s.targets):
                v = literal(s.value)
                if v is None:
                    readable = False
                else:
                    names = list(v)
            elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) \
                    and s.target.id == "__all__" and s.value is not None:
                v = literal(s.value)
                if v is None:
                    readable = False
                else:
                    names = list(v)
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) \
                    and s.target.id == "__all__":
                v = literal(s.value)
                if v is None or names is None:
                    readable = False
                else:
                    names += v
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
                    and isinstance(s.value.func, ast.Attribute) \
                    and isinstance(s.value.func.value, ast.Name) \
                    and s.value.func.value.id == "__all__":
                call = s.value
                meth = call.func.attr
                if names is None or call.keywords or len(call.args) != 1:
                    readable = False
                elif meth == "append" and isinstance(call.args[0], ast.Constant) \
                        and isinstance(call.args[0].value, str):
                    names.append(call.args[0].value)
                elif meth == "extend" and literal(call.args[0]) is not None:
                    names += literal(call.args[0])
                else:
                    readable = False
            elif isinstance(s, ast.If):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                walk(s.body)
                walk(s.orelse)
                walk(s.finalbody)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                walk(s.body)

    walk(stmts)
    return names if readable else None


def parse_py(path, data):
    try:
        return ast.parse(data, filename=path)
    except (SyntaxError, ValueError) as e:
        raise PyParseError(path, f"ast.parse: {e.__class__.__name__}: {e}") from None


def decode_py(data):
    text = data.decode("utf-8", "surrogateescape")
    return text[1:] if text.startswith("\ufeff") else text


class Resolved:
    """What a name is bound to: a def (module, node), or something that is not
    a def (what), or nothing."""
    __slots__ = ("node", "mod", "what")

    def __init__(self, node=None, mod=None, what=None):
        self.node, self.mod, self.what = node, mod, what

    @property
    def is_def(self):
        return self.node is not None

    def where(self):
        return f"{self.mod.path}:{self.node.lineno}" if self.node is not None else self.what


class PyReader:
    """Modules of one source (one tag or tree), parsed once, resolved
    statically the way a default `import aiter` binds them."""

    def __init__(self, src):
        self.src = src
        self.mods = {}      # dotted name -> PyModule or None (missing)
        self.by_path = {}   # file path -> PyModule

    # -- loading
    def locate(self, dotted):
        """(path, is_pkg): a package's __init__.py first, then the module
        file; (None, True) for a directory without __init__ (a namespace
        package); (None, None) when there is nothing."""
        if dotted != PY_ROOT and not dotted.startswith(PY_ROOT + "."):
            return None, None
        base = dotted.replace(".", "/")
        if self.src.isfile(base + "/__init__.py"):
            return base + "/__init__.py", True
        if self.src.isfile(base + ".py"):
            return base + ".py", False
        if self.src.isdir(base):
            return None, True
        return None, None

    def module(self, dotted):
        if dotted in self.mods:
            return self.mods[dotted]
        path, is_pkg = self.locate(dotted)
        if is_pkg is None:
            mod = None
        elif path is None:
            mod = PyModule(dotted, None, True, None, "")
        else:
            mod = self.file_module(path, dotted, is_pkg)
        self.mods[dotted] = mod
        return mod

    def file_module(self, path, dotted=None, is_pkg=None):
        """The module in file `path` (raises PyParseError; None if absent)."""
        if path in self.by_path:
            return self.by_path[path]
        data = self.src.read(path)
        if data is None:
            return None
        if dotted is None:
            is_pkg = path.endswith("/__init__.py")
            dotted = (path[:-len("/__init__.py")] if is_pkg else path[:-3]).replace("/", ".")
        tree = parse_py(path, data)
        mod = PyModule(dotted, path, is_pkg, tree, decode_py(data))
        self.by_path[path] = mod
        return mod

    # -- export resolution (a default import: dead arms skipped)
    def export(self, name):
        return self.resolve(PY_ROOT, name, None, set())

    def resolve(self, dotted, name, before, seen):
        """What `name` is bound to in module `dotted` (only bindings before
        index `before` when given), or None when it is not bound."""
        key = (dotted, name, before)
        if key in seen:
            return None  # an import cycle: stop
        seen = seen | {key}
        mod = self.module(dotted)
        if mod is None:
            return None
        limit = len(mod.bindings) if before is None else before
        for b in reversed(mod.bindings[:limit]):
            if b.dead:
                continue
            if b.kind == "star":
                if self.star_provides(b.data, name, seen):
                    return self.resolve(b.data, name, None, seen)
                continue
            if b.name == name:
                return self.follow(mod, b, seen)
        if before is None and mod.is_pkg and self.locate(dotted + "." + name)[1] is not None:
            return Resolved(what="a module")
        return None

    def star_provides(self, dotted, name, seen):
        mod = self.module(dotted)
        if mod is None:
            return False  # outside the package (opaque) or absent
        if mod.all_names is not None:
            return name in mod.all_names
        return not name.startswith("_") and self.resolve(dotted, name, None, seen) is not None

    def follow(self, mod, b, seen):
        if b.kind == "def":
            return Resolved(node=b.data, mod=mod)
        if b.kind == "value":
            return Resolved(what=b.data)
        if b.kind == "deleted":
            return None
        if b.kind == "alias":
            r = self.resolve(mod.name, b.data, b.index, seen)
            return r if r is not None else Resolved(what=f"an unbound alias of {b.data}")
        if b.kind == "from":
            src_mod, orig = b.data
            if src_mod != PY_ROOT and not src_mod.startswith(PY_ROOT + "."):
                return Resolved(what=f"imported from {src_mod}")  # opaque
            r = self.resolve(src_mod, orig, None, seen)
            if r is None and self.locate(src_mod + "." + orig)[1] is not None:
                r = Resolved(what="a module")  # `from . import mla`
            return r
        return None

    # -- "def F in file P": all arms, aliases within P
    def def_in_file(self, path, name):
        """(module, node) of def `name` in file `path`, or (module, None);
        (None, None) when the file is absent. Raises PyParseError."""
        mod = self.file_module(path)
        if mod is None:
            return None, None
        return mod, self._local_def(mod, name, len(mod.bindings), set())

    def _local_def(self, mod, name, before, seen):
        if (name, before) in seen:
            return None
        seen.add((name, before))
        for b in reversed(mod.bindings[:before]):
            if b.name != name or b.kind == "star":
                continue
            if b.kind == "def":
                return b.data
            if b.kind == "alias":
                return self._local_def(mod, b.data, b.index, seen)
            return None
        return None


# --- Signatures ----------------------------------------------------------------

def param_names(fn):
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args]
    if a.vararg:
        names.append(a.vararg.arg)
    names += [p.arg for p in a.kwonlyargs]
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def positional_params(fn):
    return [p.arg for p in fn.args.posonlyargs + fn.args.args]


def bind_call(fn, npos, keywords):
    """None when f(a1..aN, k=...) binds to fn's signature by Python's rules,
    else why not."""
    a = fn.args
    posonly = [p.arg for p in a.posonlyargs]
    normal = [p.arg for p in a.args]
    positional = posonly + normal
    kwonly = [p.arg for p in a.kwonlyargs]
    if npos > len(positional) and a.vararg is None:
        return f"{npos} positionals, {len(positional)} accepted"
    bound = set(positional[:npos])
    for k in keywords:
        if k in posonly:
            if a.kwarg is None:
                return f"{k} is positional-only"
            continue  # it goes into **kwargs, as Python does
        if k in normal or k in kwonly:
            if k in bound:
                return f"{k} given twice"
            bound.add(k)
        elif a.kwarg is None:
            return f"unknown keyword {k}"
    required = positional[:len(positional) - len(a.defaults)]
    required += [k for k, d in zip(kwonly, a.kw_defaults) if d is None]
    unbound = [p for p in required if p not in bound]
    if unbound:
        return "unbound " + ", ".join(unbound)
    return None


# --- The new rules, read independently -----------------------------------------

INIT_PY = "aiter/__init__.py"
MLA_PY = "aiter/mla.py"
FUSED_MOE_PY = "aiter/fused_moe.py"
FHMOE_PY = "aiter/fhmoe.py"
TRITON_MLA_PY = "aiter/ops/triton/attention/mla.py"
GLUON_ENTRIES = (("aiter/ops/triton/gluon/mla_gluon.py", "mla_gluon"),
                 ("aiter/ops/triton/gluon/mla_decode_gluon.py", "mla_decode_gluon"))
CONFIG_DIR = "aiter/configs"
SITUV2_CONFIG = "kimik3_a4w4_tuned_fmoe.csv"
SITUV2_ENV = "AITER_SITUV2_A4W4"


class V:
    """One rule's verdict: status, the file read, where it matched, the
    captures that are compared (name -> value; the gfx950 rule's qlen is a
    list), and a note saying why."""
    __slots__ = ("status", "file", "where", "caps", "note")

    def __init__(self, status, file=None, where=None, caps=None, note=""):
        self.status, self.file, self.where = status, file, where
        self.caps = caps if caps is not None else {}
        self.note = note


def guarded(fn):
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except PyParseError as e:
            return V("error", e.path, note=str(e))
    return run


@guarded
def rule_def(reader, path, name, check):
    """A def in one file: `check(node)` returns None (matched) or why not."""
    mod, node = reader.def_in_file(path, name)
    if mod is None:
        return V("missing", path)
    if node is None:
        return V("unmatched", path, note=f"no def {name}")
    why = check(node)
    return V("unmatched" if why else "matched", path, f"{path}:{node.lineno}", note=why or "")


@guarded
def rule_export(reader, name, check):
    """`from aiter import name` resolved to a def, then `check(node)`."""
    if not reader.src.isfile(INIT_PY):
        return V("missing", INIT_PY)
    r = reader.export(name)
    if r is None:
        return V("unmatched", INIT_PY, note="not exported")
    if not r.is_def:
        return V("unmatched", INIT_PY, note=f"not a def: {r.what}")
    why = check(r.node)
    return V("unmatched" if why else "matched", INIT_PY, r.where(), note=why or "")


def has_params(*params):
    def check(node):
        absent = [p for p in params if p not in param_names(node)]
        return ("lacks " + ", ".join(absent)) if absent else None
    return check


def binds(npos, *keywords):
    return lambda node: bind_call(node, npos, keywords)


def always(node):
    return None


def gluon_entry(reader):
    """(status, module, node): the first entry whose file exists and defines
    it; missing when neither file exists. Raises PyParseError."""
    seen = False
    for path, name in GLUON_ENTRIES:
        if not reader.src.isfile(path):
            continue
        seen = True
        mod, node = reader.def_in_file(path, name)
        if node is not None:
            return "matched", mod, node
    return ("unmatched" if seen else "missing"), None, None


# Other scopes than the function's own: the name inside them may be another
# variable, and a nested helper may never be called.
OTHER_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def own_nodes(node):
    """node and what it holds, other scopes left out."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, OTHER_SCOPES):
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def int_value(node):
    """An integer literal's value with its unary signs (`-(4)` is -4), else None."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -sign if isinstance(node.op, ast.USub) else sign
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def local_names(fn):
    """The names Python's compiler makes local to fn: parameters and every
    name its own code binds, less those declared global."""
    a = fn.args
    names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    names |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    declared = set()
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            continue
        if isinstance(n, OTHER_SCOPES):
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((x.asname or x.name).split(".")[0] for x in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        stack.extend(ast.iter_child_nodes(n))
    return names - declared


def typing_only(tree, name, as_from):
    """Whether every module-level binding of name is `from typing import
    name` (as_from) or `import typing`, with no star import from elsewhere:
    then a function run after the import sees typing's value."""
    seen = False
    stack = list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if n.name == name:
                return False
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for x in n.names:
                if x.name == "*":
                    if not (isinstance(n, ast.ImportFrom) and n.module == "typing"):
                        return False
                    continue
                bound = x.asname or x.name.split(".")[0]
                if bound != name:
                    continue
                ok = (isinstance(n, ast.ImportFrom) and n.module == "typing" and x.name == name
                      and n.level == 0) if as_from else (isinstance(n, ast.Import) and
                                                         x.name == "typing")
                if not ok:
                    return False
                seen = True
            continue
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            return False
        stack.extend(ast.iter_child_nodes(n))
    return seen


def truth(test, local, tree):
    """"false"/"true" where CPython knows the condition before any call,
    "varies" where it reads a local name, "fixed" where it reads none (the
    same on every call, not known statically)."""
    if any(isinstance(n, ast.Name) and n.id in local for n in own_nodes(test)):
        return "varies"
    negate = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        negate = not negate
        test = test.operand
    value = None
    if isinstance(test, ast.Constant) and (test.value is None or type(test.value) in (bool, int)):
        value = bool(test.value)
    elif isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" \
            and typing_only(tree, "TYPE_CHECKING", True):
        value = False
    elif isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING" \
            and isinstance(test.value, ast.Name) and test.value.id == "typing" \
            and typing_only(tree, "typing", False):
        value = False
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        pair = [test.left, test.comparators[0]]
        if any(isinstance(x, ast.Name) and x.id == "__name__" for x in pair) and \
                any(isinstance(x, ast.Constant) and x.value == "__main__" for x in pair):
            value = False
    if value is None:
        return "fixed"
    return "true" if value != negate else "false"


INF = float("inf")


def iv_norm(ivs):
    """Integer intervals [lo, hi] (inclusive, either end infinite), sorted
    and merged."""
    out = []
    for lo, hi in sorted(i for i in ivs if i[0] <= i[1]):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def iv_and(a, b):
    return iv_norm([(max(x[0], y[0]), min(x[1], y[1])) for x in a for y in b])


def iv_not(a):
    out, lo = [], -INF
    for x in a:
        if x[0] > lo:
            out.append((lo, x[0] - 1))
        lo = x[1] + 1
    if not a or a[-1][1] != INF:
        out.append((lo, INF))
    return iv_norm(out)


def iv_minus(a, b):
    return iv_and(a, iv_not(b))


ALL = [(-INF, INF)]
DERIVED = object()  # a local computed from the name
MAX_WAYS = 4096  # ways a body is followed in before its bound is unknown


def nhead_bound(fn, tree, name="nhead"):
    """The largest value of `name` that a call of fn returns with, as CPython
    runs fn's own body, from its `ast`: ("found", N, line), ("none", 0,
    None) or ("unknown", why, line).

    The values of the name are followed as sets of integer intervals, one
    set per way the body may run, each way with the values of the locals
    that hold literals (`REGIME = "bh64"`): an `assert` or an `if`/`while`
    test on the name alone (comparisons with integer literals, chained or
    mirrored, `in`/`not in` a display of them, the bare name, `and`, `or`,
    `not`) splits the values; a `raise` (or a failing assert) rejects the
    values that reach it, a `return` or the end accepts them. A test CPython
    knows before the call takes its arm; any other test (another argument,
    a module flag) runs both arms, and an arm that rejects every value is
    no call. What only a run tells makes values uncertain: a test reading a
    local computed from the name (`NUM_KV_SPLITS` from `nhead`), values one
    arm of an unknown test lets through and the other does not, a loop,
    `try` or `with` body (which may not run to its end). Other scopes
    (nested defs, lambdas, comprehensions), calls and what follows a
    return, raise, break or continue do not count; a comparison of the name
    handed to a call, or the name bound again after it is compared, is
    unknown. The bound is the top of the highest range of more than one
    accepted value (single values an `==` or `in` lets through above it
    are not); unknown where the uncertain values may move it, where only
    single values are accepted, or where every value is rejected."""
    local = local_names(fn)
    state = {"accepted": [], "unsure": [], "compared": False, "why": None, "line": None}

    def reads(node):
        return {n.id for n in own_nodes(node) if isinstance(n, ast.Name)}

    def give_up(why, line):
        if state["why"] is None:
            state["why"], state["line"] = why, line

    def values(test, env):
        """The values of the name for which test is true (None: it reads
        something else), for the locals in env."""
        if isinstance(test, ast.BoolOp):
            parts = [values(v, env) for v in test.values]
            if any(p is None for p in parts):
                return None
            out = parts[0]
            for q in parts[1:]:
                out = iv_and(out, q) if isinstance(test.op, ast.And) else iv_norm(out + q)
            return out
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            v = values(test.operand, env)
            return None if v is None else iv_not(v)
        if isinstance(test, ast.Name) and test.id == name:
            return iv_not([(0, 0)])
        if isinstance(test, ast.Compare):
            operands = [test.left] + test.comparators
            if len(test.ops) == 1 and isinstance(test.left, ast.Name) and \
                    env.get(test.left.id, DERIVED) is not DERIVED and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) and \
                    isinstance(test.comparators[0], ast.Constant):
                same = env[test.left.id] == test.comparators[0].value
                return ALL if same == isinstance(test.ops[0], ast.Eq) else []
            out = ALL
            for op, left, right in zip(test.ops, operands, operands[1:]):
                if isinstance(right, ast.Name) and right.id == name and \
                        not isinstance(op, (ast.In, ast.NotIn)):
                    left, right = right, left
                    op = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE,
                          ast.GtE: ast.LtE}.get(type(op), type(op))()
                if not (isinstance(left, ast.Name) and left.id == name):
                    return None
                if isinstance(op, (ast.In, ast.NotIn)):
                    if not isinstance(right, (ast.Tuple, ast.List, ast.Set)) or \
                            any(int_value(e) is None for e in right.elts):
                        return None
                    got = iv_norm([(int_value(e), int_value(e)) for e in right.elts])
                    out = iv_and(out, got if isinstance(op, ast.In) else iv_not(got))
                    continue
                n = int_value(right)
                if n is None:
                    return None
                got = {ast.Lt: [(-INF, n - 1)], ast.LtE: [(-INF, n)], ast.Gt: [(n + 1, INF)],
                       ast.GtE: [(n, INF)], ast.Eq: [(n, n)]}.get(type(op))
                if isinstance(op, ast.NotEq):
                    got = iv_not([(n, n)])
                if got is None:
                    return None
                out = iv_and(out, got)
            return out
        return None

    def split(test, ways, line):
        """ways (each (values, env)) where test is true, and where false."""
        yes, no = [], []
        t = truth(test, local, tree)
        if t in ("true", "false"):
            return (ways, []) if t == "true" else ([], ways)
        for vals, env in ways:
            v = values(test, env)
            if v is not None:
                yes.append((iv_and(vals, v), env))
                no.append((iv_minus(vals, v), env))
            else:
                yes.append((vals, env))
                no.append((vals, env))
        return [w for w in yes if w[0]], [w for w in no if w[0]]

    def covered(ways):
        return iv_norm([i for v, _ in ways for i in v])

    def follows(test, ways):
        """Whether test reads the name, or a local computed from it, in a
        way values() cannot evaluate."""
        return any(values(test, env) is None and
                   any(n == name or env.get(n) is DERIVED for n in reads(test))
                   for _, env in ways)

    def either(a, b, by_value, ra, rb):
        """Ways after two arms of a test the reader cannot decide: an arm
        that rejects every value is no call (unless the test reads values
        computed from the name); values one lets through and the other not
        are uncertain."""
        ca, cb = iv_norm(covered(a) + ra), iv_norm(covered(b) + rb)
        if not by_value and not ca and cb:
            return b
        if not by_value and not cb and ca:
            return a
        diff = iv_norm(iv_minus(ca, cb) + iv_minus(cb, ca))
        state["unsure"] = iv_norm(state["unsure"] + diff)
        return a + b

    def assign(st, ways):
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        value = st.value
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if name in names and state["compared"]:
            give_up(f"{name} is bound again at line {st.lineno} after it is compared", st.lineno)
        literal = isinstance(st, ast.Assign) and len(targets) == 1 and \
            isinstance(targets[0], ast.Name) and isinstance(value, ast.Constant)
        out = []
        for vals, env in ways:
            from_name = value is not None and \
                any(n == name or env.get(n) is DERIVED for n in reads(value))
            env = {k: v for k, v in env.items() if k not in names}
            if literal:
                env[targets[0].id] = value.value
            elif from_name:
                env.update((n, DERIVED) for n in names - {name})
            out.append((vals, env))
        return out

    def note_compares(node):
        for n in own_nodes(node):
            if isinstance(n, ast.Compare) and name in reads(n):
                state["compared"] = True
            if isinstance(n, ast.Call) and any(isinstance(a, ast.Compare) and name in reads(a)
                                               for a in n.args + [k.value for k in n.keywords]):
                give_up(f"a comparison of {name} at line {n.lineno} goes to a call, which "
                        "may raise on it", n.lineno)

    def block(stmts, ways):
        for st in stmts:
            if not ways:
                return []
            if len(ways) > MAX_WAYS:
                give_up(f"{fn.name}: more than {MAX_WAYS} ways at line {st.lineno}", st.lineno)
                return []
            ways = stmt(st, ways)
        return ways

    def stmt(st, ways):
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return ways
        if isinstance(st, ast.Return):
            state["accepted"] = iv_norm(state["accepted"] + covered(ways))
            return []
        if isinstance(st, ast.Raise):
            return []
        if isinstance(st, (ast.Break, ast.Continue)):
            state["unsure"] = iv_norm(state["unsure"] + covered(ways))
            return []
        if isinstance(st, ast.Assert):
            note_compares(st.test)
            if follows(st.test, ways):
                state["unsure"] = iv_norm(state["unsure"] + covered(ways))
            yes, _ = split(st.test, ways, st.lineno)
            return yes
        if isinstance(st, ast.If) and len(ways) > 1:
            return [w for way in ways for w in stmt(st, [way])]
        if isinstance(st, ast.If):
            note_compares(st.test)
            t = truth(st.test, local, tree)
            by_value = follows(st.test, ways)
            yes, no = split(st.test, ways, st.lineno)
            before = state["accepted"]
            state["accepted"] = []
            a = block(st.body, yes)
            ra, state["accepted"] = state["accepted"], []
            b = block(st.orelse, no)
            rb = state["accepted"]
            state["accepted"] = iv_norm(before + ra + rb)
            if t in ("true", "false") or \
                    (not by_value and any(values(st.test, env) is not None for _, env in ways)):
                return a + b
            return either(a, b, by_value, ra, rb)
        if isinstance(st, (ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith,
                           ast.Try, getattr(ast, "TryStar", ast.Try), ast.Match)):
            for part in ("test", "iter", "subject"):
                if getattr(st, part, None) is not None:
                    note_compares(getattr(st, part))
            if isinstance(st, ast.While) and truth(st.test, local, tree) == "false":
                return block(st.orelse, ways)
            inner = [st.body] if not isinstance(st, ast.Match) else [c.body for c in st.cases]
            inner += [h.body for h in getattr(st, "handlers", [])]
            after = list(ways)
            for body in inner:
                got = block(body, ways)
                state["unsure"] = iv_norm(state["unsure"] + iv_minus(covered(ways), covered(got)))
                after = after + got
            for extra in ("orelse", "finalbody"):
                if getattr(st, extra, None):
                    after = block(getattr(st, extra), after)
            return after
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if st.value is not None:
                note_compares(st.value)
            return assign(st, ways)
        note_compares(st)
        return ways

    end = block(fn.body, [(ALL, {})])
    state["accepted"] = iv_norm(state["accepted"] + covered(end))
    if state["why"] is not None:
        return "unknown", state["why"], state["line"]

    def top(vals):
        ranges = [i for i in vals if i[0] != i[1]]
        return ranges[-1][1] if ranges else None

    sure = iv_minus(state["accepted"], state["unsure"])
    low, high = top(sure), top(iv_norm(state["accepted"] + state["unsure"]))
    if low != high:
        return "unknown", f"{fn.name}: the bound depends on what only a run decides " \
            "(a local computed from the name, or a way the body may not run)", fn.lineno
    if high is None:
        return "unknown", f"{fn.name}: it takes no range of {name}, only single values " \
            "or none", fn.lineno
    if high == INF:
        return "none", 0, None
    return "found", high, None


@guarded
def rule_gluon_heads(reader):
    status, mod, node = gluon_entry(reader)
    if status != "matched":
        return V(status, note="no Gluon entry def" if status == "unmatched" else "")
    kind, heads, line = nhead_bound(node, mod.tree)
    if kind == "unknown":
        return V("unknown", mod.path, note=heads)
    where = f"{mod.path}:{line if kind == 'found' and line else node.lineno}"
    return V("matched", mod.path, where, {"heads": str(heads)})


@guarded
def rule_gluon_binds(reader, npos, keywords):
    status, mod, node = gluon_entry(reader)
    if status != "matched":
        return V(status)
    why = bind_call(node, npos, keywords)
    return V("unmatched" if why else "matched", mod.path, f"{mod.path}:{node.lineno}",
             note=why or "")


def rule_gluon_module(reader):
    for path, _ in GLUON_ENTRIES:
        if reader.src.isfile(path):
            return V("matched", path, path)
    return V("unmatched")


@guarded
def rule_reduce_v1(reader):
    v = rule_export(reader, "mla_reduce_v1", binds(9))
    if v.status == "matched":
        r = reader.export("mla_reduce_v1")
        pos = positional_params(r.node)
        v.caps = {"param": pos[6] if len(pos) > 6 else None}
    return v


def codegen_reader(src):
    """How the tree's hsa/codegen.py reads a kernel table before pandas parses
    it: AITER's own _strip_csv_comments (with the helper it calls), compiled
    alone from that file (pure string functions; nothing else of it runs),
    when codegen reads its tables through read_csv_strip_comments (v0.1.12
    on); "as-is" when it reads them as they are (pd.read_csv(path), before);
    None when the tree has no codegen to say."""
    data = src.read(CODEGEN_PY)
    if data is None:
        return None
    try:
        tree = ast.parse(data)
    except SyntaxError:
        return None
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if "read_csv_strip_comments" not in defs or "_strip_csv_comments" not in defs:
        return "as-is"
    body = [defs[n] for n in ("_strip_line_end_comments", "_strip_csv_comments") if n in defs]
    ns = {}
    exec(compile(ast.Module(body=body, type_ignores=[]), CODEGEN_PY, "exec"), ns)
    return ns["_strip_csv_comments"]


def read_csv(src, path):
    """(header, rows) with cells stripped, None when the file is absent, or
    a string saying why the table cannot be read: a kernel table (under hsa/)
    as its codegen reads it, anything else as it is."""
    data = src.read(path)
    if data is None:
        return None
    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    strip = codegen_reader(src) if path.startswith("hsa/") else "as-is"
    if strip != "as-is":
        try:
            # codegen's open(path, encoding="utf-8-sig"): universal newlines
            opened = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig").read()
        except UnicodeDecodeError as e:
            return f"not UTF-8: {e}"
        if strip is not None:
            text = strip(opened)
        elif any(mark in opened for mark in ("#", "//", ";", "/*")):
            return "unknown: no hsa/codegen.py says whether its comments are dropped"
    rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO(text))]
    rows = [r for r in rows if any(r)]
    if not rows:
        return [], []
    return rows[0], rows[1:]


NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


def as_int(s):
    """A table cell as a number (16 and 16.0 alike), or None when it is text."""
    return float(s) if s is not None and NUMBER.match(s) else None


def csv_cells(header, row, cols):
    idx = {c: header.index(c) for c in cols if c in header}
    return {c: (row[i] if i < len(row) else "") for c, i in idx.items()}


def rule_ps_lse_rows(src):
    t = read_csv(src, CSV_942)
    if t is None:
        return V("missing", CSV_942)
    if isinstance(t, str):
        return V("unknown" if t.startswith("unknown") else "error", CSV_942, note=t)
    header, rows = t
    need = ("ps", "prefill", "lse")
    absent = [c for c in need if c not in header]
    if absent:
        return V("error", CSV_942, note="no column " + ", ".join(absent))
    for n, row in enumerate(rows, 2):
        c = csv_cells(header, row, need)
        if (as_int(c["ps"]), as_int(c["prefill"]), as_int(c["lse"])) == (1, 0, 1):
            return V("matched", CSV_942, f"{CSV_942}:{n}")
    return V("unmatched", CSV_942)


def rule_decode_rows(src, table=CSV_950):
    """Every bf16 decode row of a table (gfx950's, gfx942's) without
    context-parallel cprr, as distinct (Gqa, ps, qSeqLen, causal, lse) cells
    in table order (as `aiter-probe history` keeps captures), "none" for a
    column the table does not have."""
    t = read_csv(src, table)
    if t is None:
        return V("missing", table)
    if isinstance(t, str):
        return V("unknown" if t.startswith("unknown") else "error", table, note=t)
    header, rows = t
    need = ("qType", "kvType", "Gqa", "ps", "prefill", "qSeqLen")
    absent = [c for c in need if c not in header]
    if absent:
        return V("error", table, note="no column " + ", ".join(absent))
    found, first = [], None
    for n, row in enumerate(rows, 2):
        c = csv_cells(header, row, need + ("causal", "lse", "cprr"))
        if (c["qType"] == "bf16" and c["kvType"] == "bf16" and as_int(c["prefill"]) == 0
                and as_int(c.get("cprr", "0")) == 0):
            row_key = (c["Gqa"], c["ps"], c["qSeqLen"], c.get("causal", "none"),
                       c.get("lse", "none"))
            if row_key not in found:
                found.append(row_key)
            first = first or n
    if not found:
        return V("unmatched", table, caps={"rows": []})
    return V("matched", table, f"{table}:{first}", {"rows": found})


# --- The MLA decode's kernel lookup, run on the tree's own source ---------------
#
# What csrc/py_itfs_cu/asm_mla.cu's mla_decode_stage1_asm_fwd asks its kernel
# table for, found by running the function's body up to its
# get_heuristic_kernel_mla(...) call as C would, over the caller's inputs
# (heads per KV head, max_seqlen_q, persistent, dtypes, arch, causal, whether
# an LSE buffer is passed): ints, strings, pointers that are null or not;
# anything else (a tensor's size, a call) is unknown. A branch whose
# condition is unknown runs both ways: an arm that certainly fails (a
# TORCH_CHECK(false, ...)) is a call with other inputs and is dropped, the
# other arms must leave the same values. The call's arguments are matched to
# the table's columns by the lookup's own comparisons (`cfg.Gqa != gqa`).

DECODE_FN = "mla_decode_stage1_asm_fwd"
LOOKUP_FN = "get_heuristic_kernel_mla"
CHECKS = ("TORCH_CHECK", "AITER_CHECK")
# The query lengths a lookup is asked about (the backend's ps_lse_qlens).
LOOKUP_QLENS = range(1, 17)


class Unknown(Exception):
    pass


class Fail(Exception):
    pass


UNK = object()     # a value only a run knows
PTR = object()     # a pointer that is not null


def matching(toks, i):
    """The index of the bracket closing toks[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].text
        if t in pairs:
            depth += 1
        elif t in pairs.values():
            depth -= 1
            if depth == 0:
                return j
    raise Unknown(f"unbalanced {toks[i].text} at line {toks[i].line}")


def c_function(toks, name):
    """(parameters [(name, default tokens)], body tokens, line) of the
    definition of `name` (a `{` after its parameter list), or None."""
    for i, t in enumerate(toks[:-1]):
        if t.text != name or toks[i + 1].text != "(":
            continue
        close = matching(toks, i + 1)
        if close + 1 >= len(toks) or toks[close + 1].text != "{":
            continue
        params = []
        for arg in split_args(toks, i + 1) or []:
            texts = [a.text for a in arg]
            default = None
            if "=" in texts:
                default = arg[texts.index("=") + 1:]
                arg = arg[:texts.index("=")]
            idents = [a.text for a in arg if a.kind == "ident"]
            if idents:
                params.append((idents[-1], default))
        return params, toks[close + 2:matching(toks, close + 1)], t.line
    return None


class Expr:
    """C expressions over ints, strings and pointers, with UNK for what only
    a run knows (three-valued: `false && UNK` is false)."""

    BINARY = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
              "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}

    def __init__(self, toks, env):
        self.toks, self.i, self.env = toks, 0, env

    def peek(self):
        return self.toks[self.i].text if self.i < len(self.toks) else ""

    def take(self):
        self.i += 1
        return self.toks[self.i - 1]

    def value(self):
        v = self.ternary()
        if self.i != len(self.toks):
            return UNK
        return v

    def ternary(self):
        c = self.binary(1)
        if self.peek() != "?":
            return c
        self.take()
        a = self.ternary()
        if self.peek() != ":":
            raise Unknown("a ?: without its :")
        self.take()
        b = self.ternary()
        if c is UNK:
            return a if a == b and a is not UNK else UNK
        return a if truthy(c) else b

    def binary(self, level):
        left = self.unary()
        while self.BINARY.get(self.peek(), 0) >= level:
            op = self.take().text
            right = self.binary(self.BINARY[op] + 1)
            left = apply(op, left, right)
        return left

    def unary(self):
        t = self.peek()
        if t == "!":
            self.take()
            v = self.unary()
            return UNK if v is UNK else int(not truthy(v))
        if t in ("-", "+"):
            self.take()
            v = self.unary()
            return -v if t == "-" and isinstance(v, int) else (v if t == "+" else UNK)
        return self.postfix()

    def postfix(self):
        if self.i >= len(self.toks):
            return UNK
        t = self.take()
        v = UNK
        if t.text == "(":
            end = matching(self.toks, self.i - 1)
            v = Expr(self.toks[self.i:end], self.env).value()
            self.i = end + 1
        elif t.kind == "number":
            digits = t.text.rstrip("uUlL")
            v = int(digits, 0) if re.fullmatch(r"0[xX][0-9a-fA-F]+|[0-9]+", digits) else UNK
        elif t.kind == "string":
            v = t.text[1:-1] if t.text.startswith("\"") else UNK
        elif t.text in ("true", "false"):
            v = int(t.text == "true")
        elif t.text in ("nullptr", "NULL"):
            v = None
        elif t.text == "static_cast" and self.peek() == "<":
            while self.take().text != ">":
                pass
            return self.postfix()
        elif t.kind == "ident" and self.peek() == "::":
            while self.peek() == "::":
                self.take()
                self.take()
        elif t.kind == "ident":
            v = self.env.get(t.text, UNK)
        while self.peek() in ("(", ".", "->", "["):
            op = self.take().text
            if op in ("(", "["):
                self.i = matching(self.toks, self.i - 1) + 1
            else:
                self.take()
            v = UNK
        return v


def truthy(v):
    return v is PTR or (v is not None and v != 0 and v != "")


def apply(op, a, b):
    if op == "&&":
        if (a is not UNK and not truthy(a)) or (b is not UNK and not truthy(b)):
            return 0
        return UNK if UNK in (a, b) else 1
    if op == "||":
        if (a is not UNK and truthy(a)) or (b is not UNK and truthy(b)):
            return 1
        return UNK if UNK in (a, b) else 0
    if a is UNK or b is UNK:
        return UNK
    if op in ("==", "!="):
        same = a is b if PTR in (a, b) or None in (a, b) else a == b
        return int(same == (op == "=="))
    if not (isinstance(a, int) and isinstance(b, int)):
        return UNK
    if op in ("/", "%") and b == 0:
        return UNK
    return {"<": lambda: int(a < b), "<=": lambda: int(a <= b), ">": lambda: int(a > b),
            ">=": lambda: int(a >= b), "+": lambda: a + b, "-": lambda: a - b,
            "*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a - int(a / b) * b}[op]()


class Run:
    """The body of a C function run over some inputs (names whose value is
    given and kept whatever the body assigns) up to the statement calling
    `stop`: run() returns that call's argument values, raises Fail when the
    call would fail before it, Unknown when the path there is not known."""

    def __init__(self, toks, inputs, stop):
        self.toks, self.inputs, self.stop = toks, inputs, stop

    def run(self):
        env = dict(self.inputs)
        end, got = self.block(0, len(self.toks), env)
        if got is None:
            raise Unknown(f"no {self.stop} call on the way")
        return got

    def block(self, i, end, env):
        while i < end:
            i, got = self.statement(i, end, env)
            if got is not None:
                return i, got
        return i, None

    def statement(self, i, end, env):
        toks = self.toks
        t = toks[i].text
        if t == "{":
            close = matching(toks, i)
            _, got = self.block(i + 1, close, env)
            return close + 1, got
        if t == ";":
            return i + 1, None
        if t == "if":
            close = matching(toks, i + 1)
            cond = Expr(toks[i + 2:close], env).value()
            then_end = self.skip(close + 1, end)
            else_at = then_end if then_end < end and toks[then_end].text == "else" else None
            else_end = self.skip(else_at + 1, end) if else_at is not None else then_end
            arms = [(close + 1, then_end), (else_at + 1, else_end) if else_at else None]
            if cond is not UNK:
                arm = arms[0] if truthy(cond) else arms[1]
                got = None
                if arm:
                    _, got = self.statement(arm[0], arm[1], env)
                return else_end, got
            return else_end, self.both(arms, env, toks[i].line)
        if t in ("for", "while", "switch"):
            close = matching(toks, i + 1)
            stop = self.skip(close + 1, end)
            self.spoil(close + 1, stop, env)
            return stop, None
        if t == "do":
            stop = self.skip(i + 1, end)
            stop = self.skip(stop, end)  # while (...);
            self.spoil(i, stop, env)
            return stop, None
        if t == "return":
            raise Unknown(f"returns at line {toks[i].line} before the lookup")
        stop = self.skip(i, end)
        self.simple(toks[i:stop], env)
        if any(x.text == self.stop for x in toks[i:stop]):
            at = next(k for k in range(i, stop) if toks[k].text == self.stop)
            args = split_args(toks, at + 1) or []
            return stop, [Expr(a, env).value() for a in args]
        return stop, None

    def skip(self, i, end):
        """The end of the statement at i."""
        toks = self.toks
        t = toks[i].text
        if t == "{":
            return matching(toks, i) + 1
        if t == "if":
            stop = self.skip(matching(toks, i + 1) + 1, end)
            if stop < end and toks[stop].text == "else":
                stop = self.skip(stop + 1, end)
            return stop
        if t in ("for", "while", "switch"):
            return self.skip(matching(toks, i + 1) + 1, end)
        if t == "do":
            return self.skip(self.skip(i + 1, end), end)
        j = i
        while j < end and toks[j].text != ";":
            j = matching(toks, j) + 1 if toks[j].text in ("(", "[", "{") else j + 1
        return j + 1

    def both(self, arms, env, line):
        """An if whose condition is unknown: every arm that does not certainly
        fail, alike."""
        results = []
        for arm in arms:
            e = dict(env)
            try:
                got = self.statement(arm[0], arm[1], e)[1] if arm else None
            except Fail:
                continue
            results.append((e, got))
        if not results:
            raise Fail(f"every arm of the if at line {line} fails")
        if any(got is not None for _, got in results):
            raise Unknown(f"whether the lookup runs depends on the if at line {line}")
        for name in set().union(*(e.keys() for e, _ in results)):
            vals = [e.get(name, UNK) for e, _ in results]
            env[name] = vals[0] if all(v is vals[0] or v == vals[0] for v in vals) else UNK
        return None

    def spoil(self, i, stop, env):
        for k in range(i, stop - 1):
            if self.toks[k].kind == "ident" and self.toks[k + 1].text in ("=", "+=", "-=",
                                                                          "++", "--"):
                if self.toks[k].text not in self.inputs:
                    env[self.toks[k].text] = UNK

    def simple(self, st, env):
        texts = [x.text for x in st]
        if texts and texts[0] in CHECKS and len(texts) > 1 and texts[1] == "(":
            args = split_args(st, 1) or [[]]
            if Expr(args[0], env).value() == 0:
                raise Fail(f"{texts[0]} at line {st[0].line} fails")
            return
        depth = 0
        for k, x in enumerate(st):
            if x.text in ("(", "[", "{"):
                depth += 1
            elif x.text in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and x.text in ("=", "+=", "-=", "*=", "/=", "%="):
                lhs = texts[:k]
                if "." in lhs or "->" in lhs or "[" in lhs:
                    return
                name = next((y.text for y in reversed(st[:k]) if y.kind == "ident"), None)
                if name is None or name in self.inputs:
                    return
                rhs = st[k + 1:-1] if texts[-1] == ";" else st[k + 1:]
                v = Expr(rhs, env).value() if x.text == "=" else UNK
                if x.text != "=" and env.get(name, UNK) is not UNK:
                    v = apply(x.text[0], env[name], Expr(rhs, env).value())
                env[name] = v
                return
        # A declaration without a value: what it holds is not known yet.
        if len(st) >= 3 and st[-2].kind == "ident" and all(
                y.kind == "ident" or y.text in ("::", "<", ">", "*", "&", ",")
                for y in st[:-1]):
            for k, y in enumerate(st[:-1]):
                if (y.kind == "ident" and st[k + 1].text in (",", ";")
                        and y.text not in self.inputs):
                    env[y.text] = UNK


def lookup_columns(toks):
    """The lookup's parameters [(name, default value)] and, for each
    parameter it compares with a table column (`cfg.Gqa != gqa`), the column."""
    fn = c_function(toks, LOOKUP_FN)
    if fn is None:
        raise Unknown(f"no definition of {LOOKUP_FN}")
    params, body, _ = fn
    names = {p for p, _ in params}
    cols = {}
    for k in range(len(body) - 3):
        a, b, c, d = (x.text for x in body[k:k + 4])
        if a == "cfg" and b == "." and c != "" and d == "!=" and k + 4 < len(body):
            p = body[k + 4].text
            if p in names:
                cols[p] = c
    defaults = []
    for p, default in params:
        defaults.append((p, Expr(default, {}).value() if default else UNK))
    return defaults, cols


def decode_key(toks, inputs):
    """{column: value} the decode's lookup asks for, given the inputs."""
    fn = c_function(toks, DECODE_FN)
    if fn is None:
        raise Unknown(f"no definition of {DECODE_FN}")
    params, body, _ = fn
    given = {k: v for k, v in inputs.items()
             if k not in ("causal", "lse", "g_kv_indptr") or k in {p for p, _ in params}}
    args = Run(body, given, LOOKUP_FN).run()
    defaults, cols = lookup_columns(toks)
    key = {}
    for n, (p, default) in enumerate(defaults):
        v = args[n] if n < len(args) else default
        if p in cols:
            if v is UNK:
                raise Unknown(f"the lookup's {p} ({cols[p]}) is not known")
            key[cols[p]] = v
    return key


def table_finds(table, key):
    """The line of the first row meeting every key column, None when none
    does; raises Unknown when a key column is not in the table."""
    header, rows = table
    absent = [c for c in key if c not in header]
    if absent:
        raise Unknown("the lookup asks " + ", ".join(absent) + ", which the table lacks")
    for n, row in enumerate(rows, 2):
        cells = csv_cells(header, row, list(key))
        if all((as_int(cells[c]) == v) if isinstance(v, int) else cells[c] == v
               for c, v in key.items()):
            return n
    return None


def py_value(node, names):
    """A Python expression of aiter/mla.py over the caller's names, or UNK."""
    if isinstance(node, ast.BoolOp):
        vals = [py_value(v, names) for v in node.values]
        if isinstance(node.op, ast.And):
            return False if False in vals else (UNK if UNK in vals else True)
        return True if True in vals else (UNK if UNK in vals else False)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = py_value(node.operand, names)
        return UNK if v is UNK else not v
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        a, b = py_value(node.left, names), py_value(node.comparators[0], names)
        if UNK in (a, b):
            return UNK
        op = node.ops[0]
        if isinstance(op, ast.Eq):
            return a == b
        if isinstance(op, ast.NotEq):
            return a != b
        return UNK
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id, UNK)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "dtypes":
        return node.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "get_gfx" and not node.args:
        return names.get("get_gfx()", UNK)
    return UNK


def mla_py_decode(reader, q):
    """What aiter/mla.py's mla_decode_fwd does with a persistent bf16 call of
    16 heads and q tokens before the ASM lookup: (native, may_drop_ps) --
    whether 16 heads go to the kernel as they are (an `if nhead == 16 or
    ...: pass` of its natively supported cases), and whether a large batch
    takes persistence away (`persistent_mode = _use_persistent_mla_decode(...)`,
    whose profile holds for this call, or cannot be told)."""
    mod, fn = reader.def_in_file(MLA_PY, "mla_decode_fwd")
    if fn is None:
        raise Unknown("no mla_decode_fwd in aiter/mla.py")
    native = False
    gate = False
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp) \
                and isinstance(node.test.op, ast.Or) and all(isinstance(b, ast.Pass)
                                                              for b in node.body):
            first = node.test.values[0]
            if (isinstance(first, ast.Compare) and isinstance(first.left, ast.Name)
                    and first.left.id == "nhead" and isinstance(first.ops[0], ast.Eq)
                    and isinstance(first.comparators[0], ast.Constant)
                    and first.comparators[0].value == HEADS_PER_KV):
                native = True
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) \
                and node.value.func.id == "_use_persistent_mla_decode":
            gate = True
    if not native:
        raise Unknown("mla_decode_fwd hands 16 heads to the kernel otherwise")
    if not gate:
        return True, False
    _, g = reader.def_in_file(MLA_PY, "_use_persistent_mla_decode")
    if g is None:
        raise Unknown("mla_decode_fwd calls _use_persistent_mla_decode, not defined there")
    names = {"get_gfx()": "gfx950", "q_dtype": "bf16", "kv_dtype": "bf16", "nhead": HEADS_PER_KV,
             "max_seqlen_q": q}
    profile = UNK
    for node in g.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.BoolOp):
            profile = py_value(node.value, names)
            break
    return True, profile is not False


HEADS_PER_KV = 16


def lookup_truth(reader, src, causal=1, arch="gfx950"):
    """The query lengths of LOOKUP_QLENS whose bf16, 16-head, persistent
    decode with an LSE buffer on arch finds a kernel, as the tree's own
    code asks (frozenset, how each was looked up), or (None, why) when that
    is not known; (None, None) without the decode's source or the table."""
    data = src.read(ASM_MLA)
    if data is None:
        return None, None
    path = f"hsa/{arch}/mla/mla_asm.csv"
    table = read_csv(src, path)
    if table is None:
        return None, None
    if isinstance(table, str):
        return None, f"{path}: {table}"
    toks = live_tokens(decode(data))
    found, asked = set(), []
    try:
        for q in LOOKUP_QLENS:
            _, may_drop = mla_py_decode(reader, q)
            ok = True
            for persistent in ((1, 0) if may_drop else (1,)):
                try:
                    key = decode_key(toks, {
                        "gqa_ratio": HEADS_PER_KV, "max_seqlen_q": q, "persistent": persistent,
                        "q_type": "bf16", "kv_type": "bf16", "arch_id": arch,
                        "causal": causal, "lse": PTR, "g_kv_indptr": None})
                    line = table_finds(table, key)
                except Fail as e:
                    key, line = str(e), None
                asked.append((q, persistent, key, line))
                ok = ok and line is not None
            if ok:
                found.add(q)
    except (Unknown, PyParseError) as e:
        return None, str(e)
    return frozenset(found), asked


# --- The metadata planner's natively_supported, evaluated ---------------------
#
# csrc/kernels/mla/metadata/v1_2_device.cuh declares `const bool
# natively_supported = COND;` (and, from v0.1.14, hk_mtp_experimental, which
# COND reads): each COND is taken as this script's lexer splits it and run by
# Expr over (arch, FP8 q, FP8 kv, heads, qlen), AITER_ENABLE_EXPERIMENTAL on,
# off or not known (UNK). Compared with the backend adapter's native_heads.

PLANNER_BOOLS = ("natively_supported", "hk_mtp_experimental")
NATIVE_ARCHS = ("gfx942", "gfx950", "gfx1250")
NATIVE_DTYPES = (("bf16", "bf16"), ("fp8", "fp8"), ("bf16", "fp8"), ("fp8", "bf16"))
NATIVE_HEADS = (1, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144)
NATIVE_QLENS = range(1, 9)
NATIVE_EXPERIMENTAL = (None, False, True)


def planner_bools(text):
    """{name: [(the tokens of each declaration's condition, line)]} of the
    planner's text, or None without its file."""
    if text is None:
        return None
    toks = live_tokens(text)
    out = {name: [] for name in PLANNER_BOOLS}
    for i in range(len(toks) - 3):
        if (toks[i].text, toks[i + 1].text) == ("const", "bool") and \
                toks[i + 2].text in out and toks[i + 3].text == "=":
            j = i + 4
            while j < len(toks) and toks[j].text not in (";", "{", "}"):
                j += 1
            if j < len(toks) and toks[j].text == ";":
                out[toks[i + 2].text].append((toks[i + 4:j], toks[i].line))
    return out


def rule_planner_bool(meta, name):
    bools = planner_bools(meta)
    if bools is None:
        return V("missing", METADATA_PATHS[0])
    found = bools[name]
    if not found:
        return V("unmatched", METADATA_PATHS[0])
    return V("matched", METADATA_PATHS[0], f"{METADATA_PATHS[0]}:{found[0][1]}",
             {"cond": [tuple(t.text for t in c) for c, _ in found]})


def native_grid():
    for arch in NATIVE_ARCHS:
        for q, kv in NATIVE_DTYPES:
            for heads in NATIVE_HEADS:
                for qlen in NATIVE_QLENS:
                    for exp in NATIVE_EXPERIMENTAL:
                        yield arch, q, kv, heads, qlen, exp


def native_truth(meta):
    """{grid point: True, False or None} of the planner's natively_supported
    (None: the tree has no one predicate, or its value needs what only a run
    knows), or None without the planner."""
    bools = planner_bools(meta)
    if bools is None:
        return None
    ns, hk = bools["natively_supported"], bools["hk_mtp_experimental"]
    out = {}
    for point in native_grid():
        arch, q, kv, heads, qlen, exp = point
        v = UNK
        if len(ns) == 1 and len(hk) <= 1:
            env = {"arch_id": arch, "q_is_fp8": int(q == "fp8"), "kv_is_fp8": int(kv == "fp8"),
                   "num_heads": heads, "max_seqlen_qo": qlen,
                   "enable_experimental": UNK if exp is None else int(exp)}
            if hk:
                env["hk_mtp_experimental"] = Expr(hk[0][0], env).value()
            try:
                v = Expr(ns[0][0], env).value()
            except Unknown:
                v = UNK
        out[point] = None if v is UNK else truthy(v)
    return out


def rule_tuned_config(src):
    hits = src.find_named(CONFIG_DIR, SITUV2_CONFIG)
    return V("matched", hits[0], hits[0]) if hits else V("unmatched")


@guarded
def rule_env_read(reader):
    mod = reader.file_module(FUSED_MOE_PY)
    if mod is None:
        return V("missing", FUSED_MOE_PY)
    tree = mod.tree
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0].value))
    lines = sorted(node.lineno for node in ast.walk(tree)
                   if isinstance(node, ast.Constant) and isinstance(node.value, str)
                   and id(node) not in docstrings and SITUV2_ENV in node.value)
    if lines:
        return V("matched", FUSED_MOE_PY, f"{FUSED_MOE_PY}:{lines[0]}")
    return V("unmatched", FUSED_MOE_PY)


SHARED_EXPERT = ("shared_w1", "shared_w2", "shared_w1_scale", "shared_w2_scale",
                 "shared_expert_id")
VLLM_CALLS = {
    "vllm.calls_bind.fused_moe": (13, (
        "num_local_tokens", "dtype", "hidden_pad", "intermediate_pad", "bias1", "bias2",
        "moe_sorting_dispatch_policy", "swiglu_limit")),
    "vllm.calls_bind.mla_decode_fwd": (8, ("sm_scale", "logit_cap", "causal")),
    "vllm.calls_bind.get_mla_metadata_v1": (12, (
        "page_size", "kv_granularity", "max_seqlen_qo", "uni_seqlen_qo", "fast_mode",
        "dtype_q", "dtype_kv")),
    "vllm.calls_bind.get_mla_metadata_info_v1": (5, ("is_sparse", "fast_mode")),
    "vllm.calls_bind.get_ps_metadata_info_v1": (0, (
        "batch_size", "num_head_k", "max_qlen", "qlen_granularity")),
    "vllm.calls_bind.get_ps_metadata_v1": (11, (
        "qhead_granularity", "qlen_granularity", "kvlen_granularity", "block_size",
        "is_causal")),
}
GLUON_CALL = (0, ("q_nope", "q_pe", "kv_c", "o", "page_table", "seq_info", "sm_scale", "k_pe",
                  "kv_pe_offset", "use_2d_view", "kv_scale", "min_kv_seq_len", "return_lse"))


# --- The census rows (rules/census-vllm.yaml, rules/sglang.yaml) ---------------
#
# Read here on their own: pybind enum chains with the C lexer above; class
# attributes from the class body with `ast`; `from M import N` through
# CompatReader, which redirects aiter.ops.triton.OLD to aiter.ops.triton.NEW
# as aiter/ops/triton/__init__.py's finder does (its _BACKWARD_COMPAT_MAP,
# read as a literal dict).

TRITON_PKG = "aiter.ops.triton"
TRITON_INIT = "aiter/ops/triton/__init__.py"
CUSTOM_AR_PY = "aiter/dist/device_communicators/custom_all_reduce.py"
MOE_COMMON_PY = "aiter/ops/flydsl/moe_common.py"


class CompatReader(PyReader):
    """PyReader with aiter.ops.triton's backward-compatibility finder: a
    module aiter.ops.triton.OLD (exactly one level below) is the module
    aiter.ops.triton.NEW when the map names OLD and NEW is in the tree."""

    def __init__(self, src):
        super().__init__(src)
        self.compat = None  # OLD -> NEW; {} when there is no finder
        self.compat_unknown = False

    def compat_map(self):
        if self.compat is not None:
            return self.compat
        self.compat = {}
        data = self.src.read(TRITON_INIT)
        if data is None:
            return self.compat
        tree = parse_py(TRITON_INIT, data)
        finder = any(isinstance(n, ast.FunctionDef) and n.name == "_backward_compat_find_spec"
                     for n in tree.body)
        for n in tree.body:
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name)
                                                 and t.id == "_BACKWARD_COMPAT_MAP"
                                                 for t in n.targets):
                v = n.value
                if isinstance(v, ast.Dict) and all(
                        isinstance(k, ast.Constant) and isinstance(k.value, str)
                        and isinstance(x, ast.Constant) and isinstance(x.value, str)
                        for k, x in zip(v.keys, v.values)):
                    self.compat = {k.value: x.value for k, x in zip(v.keys, v.values)}
                else:
                    self.compat_unknown = True
        if not finder:
            self.compat = {}
        return self.compat

    def redirect(self, dotted):
        head, _, last = dotted.rpartition(".")
        if head != TRITON_PKG:
            return dotted
        new = self.compat_map().get(last)
        if new is None:
            return dotted
        target = f"{TRITON_PKG}.{new}"
        return target if PyReader.locate(self, target)[1] is not None else dotted

    def locate(self, dotted):
        return PyReader.locate(self, self.redirect(dotted))

    def module(self, dotted):
        target = self.redirect(dotted)
        return PyReader.module(self, target) if target != dotted else PyReader.module(self, dotted)


@guarded
def census_export(reader, module, name, check=always, decorators=False):
    """`from module import name` gives a def meeting check; with
    decorators, the def's decorators read: a def one makes a function of
    its own is a def for no check, unknown for one."""
    if reader.locate(module)[1] is None or (module == PY_ROOT and not reader.src.isfile(INIT_PY)):
        return V("missing", note=f"no module {module}")
    r = reader.resolve(module, name, None, set())
    if r is None:
        return V("unmatched", note="not exported")
    if not r.is_def:
        return V("unmatched", note=f"not a def: {r.what}")
    kind = decorated_kind(reader, r) if decorators else "def"
    if kind == "unknown" or (kind == "own" and check is not always):
        return V("unknown", where=r.where(), note=f"decorated ({kind})")
    why = check(r.node)
    return V("unmatched" if why else "matched", where=r.where(), note=why or "")


def _own_statements(fn):
    """The nodes of fn's body in fn's own scope (nested defs, classes,
    lambdas and comprehensions left out, their decorators and defaults too)."""
    for st in fn.body:
        yield from own_nodes(st)


def _bound_names(fn):
    """Each name fn's own scope binds, with how often."""
    count = {}

    def add(n):
        count[n] = count.get(n, 0) + 1
    for p in param_names(fn):
        add(p)
    for st in fn.body:
        for n in own_nodes(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                add(n.id)
            elif isinstance(n, ast.alias):
                add((n.asname or n.name).split(".")[0])
            elif isinstance(n, ast.ExceptHandler) and n.name:
                add(n.name)
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                add(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                add(n.rest)
        # the defs and classes of its own statements bind their names here
        for n in own_nodes_children(st):
            add(n.name)
    return count


def own_nodes_children(st):
    """The nested defs and classes directly in st's own scope."""
    stack = [st]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield n
            continue
        if isinstance(n, OTHER_SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(n))


def returns_nested_defs(fn, factory):
    """Whether every way out of fn but a raise returns a function defined
    in it: its last statement a return, each return `return NAME` of an
    undecorated def among its top statements, before the return, that no
    other binding of fn's scope rebinds (nor a nonlocal of a nested scope);
    no yield, no global. With factory, each such def takes one parameter and
    is itself such a decorator."""
    if not fn.body or not isinstance(fn.body[-1], ast.Return):
        return False
    for n in ast.walk(fn):
        if isinstance(n, ast.Nonlocal):
            return False
    own = list(_own_statements(fn))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global)) for n in own):
        return False
    top = {st.name: st for st in fn.body
           if isinstance(st, ast.FunctionDef) and not st.decorator_list}
    bound = _bound_names(fn)
    for r in (n for n in own if isinstance(n, ast.Return)):
        if not isinstance(r.value, ast.Name):
            return False
        d = top.get(r.value.id)
        if d is None or d.lineno >= r.lineno or bound.get(d.name) != 1:
            return False
        if factory:
            a = d.args
            if len(a.posonlyargs + a.args) != 1 or a.vararg or a.kwarg or a.kwonlyargs \
                    or a.defaults or not returns_nested_defs(d, False):
                return False
    return True


def has_wraps_wrapper(fn):
    """Whether a def nested in fn is decorated with functools.wraps (the
    shape of AITER's compile_ops, which keeps the signature)."""
    for n in ast.walk(fn):
        if n is fn or not isinstance(n, ast.FunctionDef):
            continue
        for d in n.decorator_list:
            f = d.func if isinstance(d, ast.Call) else d
            if (isinstance(f, ast.Name) and f.id == "wraps") or \
                    (isinstance(f, ast.Attribute) and f.attr == "wraps"):
                return True
    return False


def decorated_kind(reader, r):
    """What the decorators of the def r make of it: "def" (none, or each
    keeps it: a functools.wraps wrapper), "own" (one returns a function of
    its own: its parameters are not known), or "unknown"."""
    kind = "def"
    for d in reversed(r.node.decorator_list):
        call = isinstance(d, ast.Call)
        f = d.func if call else d
        if not isinstance(f, ast.Name):
            return "unknown"
        dr = reader.resolve(r.mod.name, f.id, None, set())
        if dr is None or not dr.is_def or isinstance(dr.node, ast.AsyncFunctionDef):
            return "unknown"
        if has_wraps_wrapper(dr.node):
            continue
        if returns_nested_defs(dr.node, call):
            kind = "own"
            continue
        return "unknown"
    return kind


def class_member(cls, name):
    """'there', 'absent' or 'unknown' for getattr(cls, name), read from the
    class body's own statements (a name bound under a block of it may not be
    bound; one not bound may come from the bases)."""
    if cls.decorator_list:
        return "unknown", None
    found, maybe = None, False
    for st in cls.body:
        names = []
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [st.name]
        elif isinstance(st, ast.Assign):
            names = [n for t in st.targets for n in target_names(t)]
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            names = target_names(st.target)
        elif isinstance(st, (ast.If, ast.For, ast.While, ast.Try, ast.With)):
            for sub in ast.walk(st):
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and sub.name == name:
                    maybe = True
                if isinstance(sub, ast.Name) and sub.id == name \
                        and isinstance(sub.ctx, ast.Store):
                    maybe = True
        if name in names:
            found, maybe = st, False
    if found is not None:
        return "there", found
    if maybe or cls.bases or cls.keywords:
        return "unknown", None
    return "absent", None


@guarded
def census_attr(reader, path, names):
    """hasattr(Cls, name) for every Cls.name of names, on the class file path
    defines at module level."""
    mod = reader.file_module(path)
    if mod is None:
        return V("missing", path)
    absent, unknown = [], []
    for dotted in names:
        parts = dotted.split(".")
        node = None
        for st in mod.tree.body:
            if isinstance(st, ast.ClassDef) and st.name == parts[0]:
                node = st
        state = "there" if node is not None else "absent"
        for part in parts[1:]:
            if state != "there":
                break
            if not isinstance(node, ast.ClassDef):
                state = "unknown"
                break
            state, node = class_member(node, part)
        (absent if state == "absent" else unknown if state == "unknown" else []).append(dotted)
    if absent:
        return V("unmatched", path, note="no " + ", ".join(absent))
    if unknown:
        return V("unknown", path, note="not known: " + ", ".join(unknown))
    return V("matched", path)


@guarded
def census_self_assign(reader, path, attr):
    """A `self.ATTR = ...` assignment somewhere in the file."""
    mod = reader.file_module(path)
    if mod is None:
        return V("missing", path)
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute) and sub.attr == attr \
                            and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                        return V("matched", path, f"{path}:{node.lineno}")
    return V("unmatched", path)


def enum_members(text, enum):
    """The members of the pybind11 enum named `enum`, as each
    `enum_<T>(m, "enum")` chain's `.value("X", ...)` calls give them, or None
    when no chain names it. A chain runs to its `;`, or to the end of the
    #define that holds it."""
    chains = []
    code = []
    for toks, directive in lex_logical_lines(text):
        if directive:
            if len(toks) > 1 and toks[1].text == "define":
                chains.append(toks[2:])
            continue
        code.extend(toks)
    chains.append(code)
    members = None
    for toks in chains:
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.kind == "ident" and t.text in ("enum_", "native_enum") \
                    and i + 1 < len(toks) and toks[i + 1].text == "<":
                j = i + 2
                depth = 1
                while j < len(toks) and depth:
                    depth += {"<": 1, ">": -1}.get(toks[j].text, 0)
                    j += 1
                if j + 3 < len(toks) and toks[j].text == "(" and toks[j + 2].text == "," \
                        and toks[j + 3].kind == "string" and toks[j + 3].text == f'"{enum}"':
                    found = [] if members is None else members
                    k = j + 4
                    while k < len(toks) and toks[k].text != ";":
                        if toks[k].text == "." and k + 3 < len(toks) \
                                and toks[k + 1].text == "value" and toks[k + 2].text == "(" \
                                and toks[k + 3].kind == "string":
                            found.append(toks[k + 3].text[1:-1])
                        k += 1
                    members = found
                    i = k
            i += 1
    return members


def census_enum(src, enum, member):
    data = src.read(ROCM_OPS)
    if data is None:
        return V("missing", ROCM_OPS)
    members = enum_members(decode(data), enum)
    if members is None:
        return V("unmatched", ROCM_OPS, note=f"no enum {enum}")
    if member not in members:
        return V("unmatched", ROCM_OPS, note=f"{enum} lacks {member}")
    return V("matched", ROCM_OPS)


def census_glob_suffix(src, under, suffix):
    hits = sorted(p for p in getattr(src, "files", ()) if p.startswith(under + "/")
                  and p.endswith(suffix)) if hasattr(src, "files") else sorted(
        os.path.relpath(os.path.join(d, f), src.root)
        for d, _, files in os.walk(os.path.join(src.root, under)) for f in files
        if f.endswith(suffix))
    return V("matched", hits[0], hits[0]) if hits else V("unmatched")


def sgl_import(name):
    """The rule id of SGLang's import of name (one shortened to fit text
    output at 60 columns)."""
    return "sglang.import." + {"flash_attn_varlen_fp8_pertensor_func":
                               "flash_attn_fp8_pertensor"}.get(name, name)


SGLANG_TOP_AITER = ("flash_attn_varlen_fp8_pertensor_func", "flash_attn_varlen_func",
                    "get_mla_metadata_info_v1", "get_mla_metadata_v1", "get_ps_metadata_info_v1",
                    "get_ps_metadata_v1", "mha_batch_prefill_func", "mla_prefill_ps_asm_fwd",
                    "mla_reduce_v1", "paged_attention_ragged")
# What SGLang's quantization/fp8_kernel.py imports from aiter (census S14).
SGLANG_FP8_QUANT = ("dynamic_per_tensor_quant", "dynamic_per_token_scaled_quant",
                    "static_per_tensor_quant")
SGLANG_CUSTOM_AR = ("CustomAllreduce.should_custom_ar", "CustomAllreduce.custom_all_reduce")
SGLANG_CALLS = {
    "get_mla_metadata_info_v1": (5, ("is_sparse", "fast_mode", "num_kv_splits",
                                     "intra_batch_mode")),
    "get_mla_metadata_v1": (12, ("kv_granularity", "max_seqlen_qo", "uni_seqlen_qo", "fast_mode",
                                 "max_split_per_batch", "intra_batch_mode", "dtype_q",
                                 "dtype_kv")),
    "get_ps_metadata_info_v1": (0, ("batch_size", "num_head_k", "max_qlen", "qlen_granularity")),
    "get_ps_metadata_v1": (11, ("qhead_granularity", "qlen_granularity", "kvlen_granularity",
                                "block_size", "is_causal")),
}
PA_GLUON = "aiter.ops.triton.gluon.pa_decode_gluon"
# (rule id, module, name, positionals, keywords): SGLang's 5D-pool calls.
SGLANG_5D_CALLS = (
    ("sglang.calls_bind.pa_decode_gluon", PA_GLUON, "pa_decode_gluon", 0, (
        "output", "query", "key_cache", "value_cache", "context_lengths", "block_tables",
        "softmax_scale", "query_length", "max_context_partition_num", "context_partition_size",
        "compute_type", "key_scale", "value_scale", "exp_sums", "max_logits", "temporary_output",
        "sinks", "sliding_window", "ps")),
    ("sglang.calls_bind.mha_batch_prefill_func", "aiter", "mha_batch_prefill_func", 8, (
        "causal", "logits_soft_cap", "alibi_slopes", "return_lse", "return_attn_probs",
        "window_size", "sink_ptr", "q_descale", "k_descale", "v_descale")),
)
# (rule id, module, name, positionals, keywords): the calls behind SGLang's
# other optional imports (census S15).
SGLANG_S15_CALLS = (
    ("sglang.calls_bind.fused_qk_rmsnorm_unified", "aiter.ops.fused_qk_rmsnorm_group_quant",
     "fused_qk_rmsnorm", 0, ("q_out_quantized", "k_out", "q", "q_weight", "q_epsilon", "k",
                             "k_weight", "k_epsilon", "quant_type")),
    ("sglang.calls_bind.fused_qk_rmsnorm_legacy", "aiter.ops.fused_qk_norm_rope_cache_quant",
     "fused_qk_rmsnorm", 6, ()),
    ("sglang.calls_bind.batched_gemm_a8w8_prequant",
     "aiter.ops.triton.batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant",
     "batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant", 0,
     ("X", "WQ", "w_scale", "group_size", "YQ", "transpose_bm", "transpose_bm_in", "dtype")),
    ("sglang.calls_bind.fav3_sage_wrapper_func", "aiter.ops.triton.attention.fav3_sage",
     "fav3_sage_wrapper_func", 3, ()),
    ("sglang.calls_bind.fav3_sage_mxfp4_wrapper",
     "aiter.ops.triton.attention.fav3_sage_attention_mxfp4_wrapper", "fav3_sage_mxfp4_wrapper",
     3, ("hadamard_rotation", "R", "causal")),
    ("sglang.calls_bind.create_hadamard_matrix",
     "aiter.ops.triton._triton_kernels.attention.fav3_sage_attention_mxfp4",
     "create_hadamard_matrix", 1, ("dtype",)),
    ("sglang.calls_bind.fused_rms_fp8_group_quant", "aiter.ops.triton.fused_fp8_quant",
     "fused_rms_fp8_group_quant", 3, ("inp2", "inp2_weight", "inp2_epsilon", "group_size",
                                      "dtype_quant", "res1", "output_unquantized_inp1")),
)
SGLANG_DECODE_CALL = (3, ("qo_indptr", "kv_indptr", "kv_indices", "kv_last_page_lens",
                          "max_seqlen_q", "sm_scale", "logit_cap", "work_meta_data",
                          "work_indptr", "work_info_set", "reduce_indptr", "reduce_final_map",
                          "reduce_partial_map", "q_scale", "kv_scale", "intra_batch_mode",
                          "num_kv_splits"))
SGLANG_MOE_CALL = (0, ("hidden_states", "w1", "w2", "topk_weight", "topk_ids", "quant_type",
                       "activation", "w1_scale", "w2_scale", "a1_scale", "a2_scale", "bias1",
                       "bias2", "expert_mask", "doweight_stage1", "hidden_pad",
                       "intermediate_pad"))
SGLANG_ENUMS = (("ActivationType", ("Silu", "Swiglu", "Gelu")),
                ("QuantType", ("No", "per_Token", "per_128x128", "per_1x32")))
CUSTOM_AR_AG_RS = ("CustomAllreduce.custom_all_gather", "CustomAllreduce.custom_reduce_scatter",
                   "CustomAllreduce.should_custom_ag", "CustomAllreduce.should_custom_rs")
# (rule id, module, name, params): the census exports, in pack order.
CENSUS_EXPORTS = (
    ("triton.fp8_mqa_logits.attention_path", "aiter.ops.triton.attention.fp8_mqa_logits",
     "fp8_mqa_logits", ()),
    ("triton.fp8_mqa_logits.flat_path", "aiter.ops.triton.fp8_mqa_logits", "fp8_mqa_logits", ()),
    ("triton.pa_mqa_logits.attention_path", "aiter.ops.triton.attention.pa_mqa_logits",
     "deepgemm_fp8_paged_mqa_logits", ()),
    ("triton.pa_mqa_logits.flat_path", "aiter.ops.triton.pa_mqa_logits",
     "deepgemm_fp8_paged_mqa_logits", ()),
    ("gdn.export.chunk_gated_delta_rule", "aiter.ops.triton.gated_delta_net",
     "chunk_gated_delta_rule", ()),
    ("gdn.export.fused_recurrent_gated_delta_rule", "aiter.ops.triton.gated_delta_net",
     "fused_recurrent_gated_delta_rule", ()),
    ("gdn.export.chunk_opt_vk_state_indices", "aiter.ops.triton.gated_delta_net.gated_delta_rule",
     "chunk_gated_delta_rule_opt_vk", ("initial_state_indices", "inplace_final_state")),
    ("moe.export.routing", "aiter.ops.triton.moe.moe_routing.routing", "routing", ()),
    ("moe.export.moe_gemm_a16w4", "aiter.ops.triton.moe.moe_op_gemm_a16w4", "moe_gemm_a16w4", ()),
    ("export.flash_attn_varlen_func", "aiter", "flash_attn_varlen_func", ()),
    ("export.top_k_top_p_sampling_from_probs", "aiter.ops.sampling",
     "top_k_top_p_sampling_from_probs", ()),
    ("sglang.import.mla_decode_fwd", "aiter.mla", "mla_decode_fwd", ()),
    ("sglang.import.mla_prefill_fwd", "aiter.mla", "mla_prefill_fwd", ()),
    ("sglang.import.unified_attention", "aiter.ops.triton.attention.unified_attention",
     "unified_attention", ()),
    ("sglang.import.biased_grouped_topk", "aiter", "biased_grouped_topk", ()),
    ("sglang.import.fused_rms_fp8_group_quant", "aiter.ops.triton.fused_fp8_quant",
     "fused_rms_fp8_group_quant", ()),
    ("sglang.import.fused_flatten_fp8_group_quant", "aiter.ops.triton.fused_fp8_quant",
     "fused_flatten_fp8_group_quant", ()),
    ("sglang.import.pa_decode_gluon", PA_GLUON, "pa_decode_gluon", ()),
    ("sglang.import.get_recommended_splits", PA_GLUON, "get_recommended_splits", ()),
    ("sglang.import.get_cu_num", "aiter.jit.utils.chip_info", "get_cu_num", ()),
    ("sglang.import.get_gfx", "aiter.jit.utils.chip_info", "get_gfx", ()),
    ("sglang.import.dynamic_mxfp4_quant", "aiter.ops.triton.quant", "dynamic_mxfp4_quant", ()),
    ("sglang.import.fused_qk_norm_mrope", "aiter",
     "fused_qk_norm_mrope_3d_cache_pts_quant_shuffle", ()),
    ("sglang.import.moe_sum", "aiter", "moe_sum", ()),
) + tuple((f"sglang.import.{n}", "aiter", n, ()) for n in SGLANG_FP8_QUANT) + tuple((sgl_import(n), "aiter", n, ()) for n in SGLANG_TOP_AITER)

# (rule id, module, name, positionals or None): exports whose decorators are
# read (AITER's @torch_compile_guard(...) makes a function of its own), with
# the call shape checked where one is given.
GUARDED_EXPORTS = (
    ("export.gemm_a8w8_CK", "aiter", "gemm_a8w8_CK", 6),
    ("export.gemm_a8w8_bpreshuffle", "aiter", "gemm_a8w8_bpreshuffle", None),
    ("sglang.import.rmsnorm2d_fwd", "aiter", "rmsnorm2d_fwd", None),
    ("sglang.import.rmsnorm2d_fwd_with_add", "aiter", "rmsnorm2d_fwd_with_add", None),
    ("sglang.import.pa_sparse_prefill_opus", "aiter.ops.pa_sparse_prefill_opus",
     "pa_sparse_prefill_opus", None),
    ("sglang.import.batched_gemm_a8w8_mxscale", "aiter.ops.batched_gemm_op_a8w8",
     "batched_gemm_a8w8_mxscale", None),
)

# Capability id, short label, the rules it needs: a list (all of them), or
# ("any", [...]) / ("all", [...]) of rule ids and such pairs, nested.
CENSUS_CAPS = (
    ("moe.activation.situv2", "situ2", ["enum.activation.situv2"]),
    ("custom_ar.ag_rs", "agrs", ["custom_ar.class.ag_rs"]),
    ("custom_ar.per_group_quant", "arpg", ["custom_ar.class.per_group_quant"]),
    ("custom_ar.dynamic_hidden_dim", "ardh", ["custom_ar.instance.pool"]),
    ("triton.fp8_mqa_logits", "f8mq", ("any", ["triton.fp8_mqa_logits.attention_path",
                                               "triton.fp8_mqa_logits.flat_path"])),
    ("triton.pa_mqa_logits", "pamq", ("any", ["triton.pa_mqa_logits.attention_path",
                                              "triton.pa_mqa_logits.flat_path"])),
    ("triton.gdn", "gdn", ["gdn.export.chunk_gated_delta_rule",
                           "gdn.export.fused_recurrent_gated_delta_rule"]),
    ("triton.gdn.prefill_opt_vk", "gdnvk", ["gdn.export.chunk_opt_vk_state_indices"]),
    ("moe.mxfp8_tuned", "mxf8", ["moe.mxfp8.tuned_config"]),
    ("moe.flydsl_gate_mode", "fgate", ["moe.flydsl.gate_mode"]),
    ("moe.triton_a16w4", "a16w4", ["moe.export.routing", "moe.export.moe_gemm_a16w4"]),
    ("aiter.flash_attn_varlen_func", "favl", ["export.flash_attn_varlen_func"]),
    ("aiter.sampling.top_k_top_p", "samp", ["export.top_k_top_p_sampling_from_probs"]),
    ("sglang.aiter_backend", "sgl", [sgl_import(n) for n in SGLANG_TOP_AITER]
     + ["sglang.import.mla_decode_fwd", "sglang.import.mla_prefill_fwd",
        "sglang.import.unified_attention"]),
    ("sglang.calls_bind", "sglcb", [f"sglang.calls_bind.{n}" for n in SGLANG_CALLS]
     + ["sglang.calls_bind.mla_decode_fwd", "sglang.calls_bind.fused_moe",
        "mla.prefill_ps_asm_fwd.binds_17", "mla.reduce_v1.binds_9"]),
    ("fused_moe.no_combine", "nocmb", ["fused_moe.params.no_combine"]),
    ("sglang.moe_enums", "sglen", [f"sglang.enum.{e}.{m}" for e, ms in SGLANG_ENUMS for m in ms]),
    ("sglang.dsa_backend", "sgdsa", [f"sglang.import.{n}" for n in (
        "flash_attn_varlen_func", "get_mla_metadata_info_v1", "get_mla_metadata_v1",
        "mha_batch_prefill_func", "paged_attention_ragged", "mla_decode_fwd", "mla_prefill_fwd")]),
    ("sglang.vectorized_5d", "sg5d", ["sglang.import.mha_batch_prefill_func",
                                      "sglang.import.pa_decode_gluon",
                                      "sglang.import.get_recommended_splits"]
     + [rid for rid, *_ in SGLANG_5D_CALLS]),
    ("sglang.chip_info", "sgchp", ["sglang.import.get_cu_num", "sglang.import.get_gfx"]),
    ("sglang.optional_ops", "sglop", ["sglang.import.biased_grouped_topk",
                                      "sglang.import.fused_rms_fp8_group_quant",
                                      "sglang.import.fused_flatten_fp8_group_quant"]),
    ("sglang.fp8_quant_ops", "sgfq", [f"sglang.import.{n}" for n in SGLANG_FP8_QUANT]),
    ("sglang.quark_mxfp4", "sgqk", ["sglang.import.dynamic_mxfp4_quant"]),
    ("sglang.qwen3_fused_mrope", "sgq3", ["sglang.import.fused_qk_norm_mrope"]),
    ("sglang.custom_allreduce", "sgcar", ["sglang.class.custom_allreduce"]),
    ("sglang.mla_rocm", "sgmr", [("any", [("all", ["sglang.calls_bind.fused_qk_rmsnorm_unified",
                                                   "sglang.enum.QuantType.No"]),
                                          "sglang.calls_bind.fused_qk_rmsnorm_legacy"]),
                                 "sglang.calls_bind.batched_gemm_a8w8_prequant"]),
    ("sglang.sage_attention", "sgsa", ["sglang.calls_bind.fav3_sage_wrapper_func"]),
    ("sglang.sage_mxfp4", "sgsm", ["sglang.calls_bind.fav3_sage_mxfp4_wrapper",
                                   "sglang.calls_bind.create_hadamard_matrix"]),
    ("sglang.dsv4_rms_fp8_quant", "sgd4", ["sglang.calls_bind.fused_rms_fp8_group_quant"]),
    ("sglang.moe_sum", "sgms", ["sglang.import.moe_sum"]),
    ("aiter.scaled_mm_gemms", "scmm", [rid for rid, *_ in GUARDED_EXPORTS[:2]]),
    ("sglang.layernorm_rmsnorm", "sgrms", [rid for rid, *_ in GUARDED_EXPORTS[2:4]]),
    ("sglang.dsv4_sparse_prefill_opus", "sgpso", [GUARDED_EXPORTS[4][0]]),
    ("sglang.dsv4_wo_a_fp8", "sgwoa", [GUARDED_EXPORTS[5][0]]),
)


def need_rules(need):
    """The rule ids a CENSUS_CAPS requirement names, in order."""
    if isinstance(need, str):
        return [need]
    items = need[1] if isinstance(need, tuple) else need
    return [rid for item in items for rid in need_rules(item)]


def need_holds(need, matched):
    if isinstance(need, str):
        return matched(need)
    if isinstance(need, tuple):
        kind, items = need
        return (any if kind == "any" else all)(need_holds(i, matched) for i in items)
    return all(need_holds(i, matched) for i in need)


def census_rule_caps():
    out = {}
    for cid, _, need in CENSUS_CAPS:
        for rid in need_rules(need):
            out.setdefault(rid, []).append(cid)
    return out


def census_verdicts(src, reader, R_known):
    """The census rules and capabilities of one source; R_known holds the
    rules read before (the shipped ones a capability reuses)."""
    cr = CompatReader(src)
    R = {}
    R["enum.activation.situv2"] = census_enum(src, "ActivationType", "Situv2")
    for enum, members in SGLANG_ENUMS:
        for m in members:
            R[f"sglang.enum.{enum}.{m}"] = census_enum(src, enum, m)
    R["custom_ar.class.ag_rs"] = census_attr(cr, CUSTOM_AR_PY, CUSTOM_AR_AG_RS)
    R["custom_ar.class.per_group_quant"] = census_attr(
        cr, CUSTOM_AR_PY, ["CustomAllreduce.fused_ar_rms_per_group_quant"])
    R["custom_ar.instance.pool"] = census_self_assign(cr, CUSTOM_AR_PY, "_pool")
    R["sglang.class.custom_allreduce"] = census_attr(cr, CUSTOM_AR_PY, SGLANG_CUSTOM_AR)
    R["moe.flydsl.gate_mode"] = census_attr(cr, MOE_COMMON_PY,
                                            ["GateMode.INTERLEAVE", "GateMode.SEPARATED"])
    R["moe.mxfp8.tuned_config"] = census_glob_suffix(src, CONFIG_DIR, "mxfp8_tuned_fmoe.csv")
    for rid, module, name, params in CENSUS_EXPORTS:
        R[rid] = census_export(cr, module, name, has_params(*params) if params else always)
    for rid, module, name, npos in GUARDED_EXPORTS:
        R[rid] = census_export(cr, module, name, always if npos is None else binds(npos),
                               decorators=True)
    for name, (npos, kws) in SGLANG_CALLS.items():
        R[f"sglang.calls_bind.{name}"] = census_export(cr, "aiter", name, binds(npos, *kws))
    for rid, module, name, npos, kws in SGLANG_5D_CALLS + SGLANG_S15_CALLS:
        R[rid] = census_export(cr, module, name, binds(npos, *kws))
    R["sglang.calls_bind.mla_decode_fwd"] = rule_def(reader, MLA_PY, "mla_decode_fwd",
                                                     binds(SGLANG_DECODE_CALL[0], *SGLANG_DECODE_CALL[1]))
    R["sglang.calls_bind.fused_moe"] = rule_def(reader, FUSED_MOE_PY, "fused_moe",
                                                binds(SGLANG_MOE_CALL[0], *SGLANG_MOE_CALL[1]))
    R["fused_moe.params.no_combine"] = rule_def(reader, FUSED_MOE_PY, "fused_moe",
                                                has_params("no_combine"))
    everything = dict(R_known, **R)

    def m(rid):
        return everything[rid].status == "matched"
    C = {}
    for cid, _, need in CENSUS_CAPS:
        C[cid] = need_holds(need, m)
    return R, C

# Rule id -> the capabilities it feeds (for the `!` marks).
NEW_RULES = {
    "mla.decode_fwd.params.fp8_scales": ["mla.decode_fwd.fp8_scales"],
    "mla.decode_fwd.params.causal": ["mla.decode_fwd.causal"],
    "mla.decode_fwd.params.return_lse": ["mla.decode_fwd.return_lse"],
    "fused_moe.params.gate_mode": ["fused_moe.gate_mode"],
    "fused_moe.params.shared_expert": ["fused_moe.dsv4_shared_expert"],
    "fhmoe.supports_dsv4_i384": ["fused_moe.dsv4_shared_expert"],
    "topk_softmax.export.num_shared_experts": ["topk_softmax.num_shared_experts"],
    "mla.prefill_ps_asm_fwd.binds_17": ["mla.fp8_prefill_ps"],
    "mla.reduce_v1.binds_9": ["mla.fp8_prefill_ps"],
    "export.hipb_mm": ["aiter.hipb_mm"],
    "export.qr_all_reduce_rmsnorm": ["aiter.qr_all_reduce_rmsnorm"],
    "mla.gluon_decode.max_heads": ["mla.gluon_decode.small_heads"],
    "mla.gluon_decode.module": ["vllm.calls_bind"],
    "mla.triton_decode_fwd.binds_segmented": ["mla.segmented_decode"],
    "mla.asm.gfx942.ps_lse_rows": ["mla.asm.gfx942.ps_lse"],
    "mla.asm.gfx950.bf16_decode_rows": [],
    "mla.asm.gfx942.bf16_decode_rows": [],
    "mla.metadata.natively_supported": [],
    "mla.metadata.hk_mtp_experimental": [],
    "mla.decode_fwd.persistent_gate": [],
    "moe.situv2_a4w4.tuned_config": ["moe.situv2_a4w4_tuned"],
    "moe.situv2_a4w4.env_read": ["moe.situv2_a4w4_tuned"],
}
NEW_RULES.update({rid: ["vllm.calls_bind"] for rid in VLLM_CALLS})
NEW_RULES["vllm.calls_bind.mla_gluon"] = ["vllm.calls_bind"]
NEW_RULES.update({rid: cids for rid, cids in census_rule_caps().items() if rid not in NEW_RULES})

# The table's columns: capability id, short label.
CAPABILITIES = (
    ("mla.decode_fwd.fp8_scales", "fp8s"),
    ("mla.decode_fwd.causal", "caus"),
    ("mla.decode_fwd.return_lse", "rlse"),
    ("fused_moe.gate_mode", "gate"),
    ("fused_moe.dsv4_shared_expert", "dsv4"),
    ("topk_softmax.num_shared_experts", "topk"),
    ("mla.fp8_prefill_ps", "pfp8"),
    ("aiter.hipb_mm", "hipb"),
    ("aiter.qr_all_reduce_rmsnorm", "qrar"),
    ("mla.gluon_decode.small_heads", "glu"),
    ("mla.segmented_decode", "seg"),
    ("mla.asm.gfx942.ps_lse", "p942"),
    ("moe.situv2_a4w4_tuned", "situ"),
    ("vllm.calls_bind", "vllm"),
    (CAPABILITY, "h24"),
) + tuple((cid, label) for cid, label, _ in CENSUS_CAPS)
NEW_CAPABILITIES = [c for c, _ in CAPABILITIES if c != CAPABILITY]
OLD_RULE_CAPS = {RULE_REDUCE: [CAPABILITY], RULE_METADATA: [CAPABILITY], RULE_CASES: []}


def new_verdicts(src, meta):
    """The new rules and capabilities of one source (GitSource/TreeSource),
    plus the probe readings vLLM and SGLang make of it."""
    reader = PyReader(src)
    R = {}
    R["mla.decode_fwd.params.fp8_scales"] = rule_def(reader, MLA_PY, "mla_decode_fwd",
                                                     has_params("q_scale", "kv_scale"))
    R["mla.decode_fwd.params.causal"] = rule_def(reader, MLA_PY, "mla_decode_fwd",
                                                 has_params("causal"))
    R["mla.decode_fwd.params.return_lse"] = rule_def(reader, MLA_PY, "mla_decode_fwd",
                                                     has_params("return_lse"))
    R["fused_moe.params.gate_mode"] = rule_def(reader, FUSED_MOE_PY, "fused_moe",
                                               has_params("gate_mode"))
    R["fused_moe.params.shared_expert"] = rule_def(reader, FUSED_MOE_PY, "fused_moe",
                                                   has_params(*SHARED_EXPERT))
    R["fhmoe.supports_dsv4_i384"] = rule_def(reader, FHMOE_PY, "supports_dsv4_i384_fhmoe", always)
    R["topk_softmax.export.num_shared_experts"] = rule_export(
        reader, "topk_softmax", has_params("num_shared_experts"))
    R["mla.prefill_ps_asm_fwd.binds_17"] = rule_export(reader, "mla_prefill_ps_asm_fwd", binds(17))
    R["mla.reduce_v1.binds_9"] = rule_reduce_v1(reader)
    R["export.hipb_mm"] = rule_export(reader, "hipb_mm", always)
    R["export.qr_all_reduce_rmsnorm"] = rule_export(reader, "qr_all_reduce_rmsnorm", always)
    R["mla.gluon_decode.max_heads"] = rule_gluon_heads(reader)
    R["mla.gluon_decode.module"] = rule_gluon_module(reader)
    R["mla.triton_decode_fwd.binds_segmented"] = rule_def(
        reader, TRITON_MLA_PY, "mla_decode_fwd",
        binds(10, "causal", "q_descale", "kv_descale", "skip_reduce"))
    R["mla.asm.gfx942.ps_lse_rows"] = rule_ps_lse_rows(src)
    R["mla.asm.gfx950.bf16_decode_rows"] = rule_decode_rows(src, CSV_950)
    R["mla.asm.gfx942.bf16_decode_rows"] = rule_decode_rows(src, CSV_942)
    for name in PLANNER_BOOLS:
        R[f"mla.metadata.{name}"] = rule_planner_bool(meta, name)
    R["mla.decode_fwd.persistent_gate"] = rule_def(reader, MLA_PY, "_use_persistent_mla_decode",
                                                   always)
    R["moe.situv2_a4w4.tuned_config"] = rule_tuned_config(src)
    R["moe.situv2_a4w4.env_read"] = rule_env_read(reader)
    for rid, (npos, kws) in VLLM_CALLS.items():
        if rid == "vllm.calls_bind.fused_moe":
            R[rid] = rule_def(reader, FUSED_MOE_PY, "fused_moe", binds(npos, *kws))
        elif rid == "vllm.calls_bind.mla_decode_fwd":
            R[rid] = rule_def(reader, MLA_PY, "mla_decode_fwd", binds(npos, *kws))
        else:
            R[rid] = rule_export(reader, rid.rsplit(".", 1)[1], binds(npos, *kws))
    R["vllm.calls_bind.mla_gluon"] = rule_gluon_binds(reader, *GLUON_CALL)
    census_R, census_C = census_verdicts(src, reader, R)
    R.update(census_R)
    assert set(R) == set(NEW_RULES)

    def m(rid):
        return R[rid].status == "matched"
    C = {
        "mla.decode_fwd.fp8_scales": m("mla.decode_fwd.params.fp8_scales"),
        "mla.decode_fwd.causal": m("mla.decode_fwd.params.causal"),
        "mla.decode_fwd.return_lse": m("mla.decode_fwd.params.return_lse"),
        "fused_moe.gate_mode": m("fused_moe.params.gate_mode"),
        "fused_moe.dsv4_shared_expert": m("fused_moe.params.shared_expert")
        and m("fhmoe.supports_dsv4_i384"),
        "topk_softmax.num_shared_experts": m("topk_softmax.export.num_shared_experts"),
        "mla.fp8_prefill_ps": m("mla.prefill_ps_asm_fwd.binds_17") and m("mla.reduce_v1.binds_9")
        and R["mla.reduce_v1.binds_9"].caps.get("param") == "num_kv_splits",
        "aiter.hipb_mm": m("export.hipb_mm"),
        "aiter.qr_all_reduce_rmsnorm": m("export.qr_all_reduce_rmsnorm"),
        "mla.gluon_decode.small_heads": m("mla.gluon_decode.max_heads")
        and int(R["mla.gluon_decode.max_heads"].caps["heads"]) >= 15,
        "mla.segmented_decode": m("mla.triton_decode_fwd.binds_segmented"),
        "mla.asm.gfx942.ps_lse": m("mla.asm.gfx942.ps_lse_rows"),
        "moe.situv2_a4w4_tuned": m("moe.situv2_a4w4.tuned_config")
        and m("moe.situv2_a4w4.env_read"),
        # `not module` is true only when the rule ran and did not match.
        "vllm.calls_bind": all(m(rid) for rid in VLLM_CALLS)
        and (R["mla.gluon_decode.module"].status == "unmatched"
             or m("vllm.calls_bind.mla_gluon")),
    }
    C.update(census_C)
    assert set(C) == set(NEW_CAPABILITIES)
    return R, C, probe_readings(reader, R)


def probe_readings(reader, R):
    """What today's backend probes conclude from the same tree."""
    def exported(name):
        try:
            return reader.src.isfile(INIT_PY) and reader.export(name) is not None
        except PyParseError:
            return False
    out = {
        "fp8_import": exported("mla_prefill_ps_asm_fwd") and exported("mla_reduce_v1"),
        "hipb_hasattr": exported("hipb_mm"),
        "qr_hasattr": exported("qr_all_reduce_rmsnorm"),
    }
    try:
        out["seg_import"] = reader.def_in_file(TRITON_MLA_PY, "mla_decode_fwd")[1] is not None
    except PyParseError:
        out["seg_import"] = False
    # vLLM: an entry importable (its module defines the function), then
    # `requires nhead <= (\d+)` over the function's source text, else 16.
    entry = None
    for path, name in GLUON_ENTRIES:
        try:
            mod, node = reader.def_in_file(path, name)
        except PyParseError:
            continue
        if node is not None:
            entry = (mod, node)
            break
    if entry is None:
        out["gluon"] = None
    else:
        mod, node = entry
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        text = "\n".join(mod.text.splitlines()[first - 1:node.end_lineno])
        hit = re.search(r"requires nhead <= (\d+)", text)
        out["gluon"] = int(hit.group(1)) if hit else 16
    return out


# --- aiter-probe ---------------------------------------------------------------

def find_probe(arg):
    if arg:
        return arg
    env = os.environ.get("AITER_PROBE")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "aiter-probe"), shutil.which("aiter-probe")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


class Probe:
    def __init__(self, path, datadir, extra_rules):
        self.path = path
        self.env = dict(os.environ)
        if datadir:
            self.env["AITER_PROBE_DATADIR"] = datadir
        self.rules = []
        for r in extra_rules:
            self.rules += ["--rules", r]
        self.extra = list(self.rules)
        help_text = subprocess.run([path, "scan", "--help"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, env=self.env).stdout
        # A static comparison: never wait on a GPU when the tool can skip it.
        if b"--no-launch" in help_text:
            self.extra.append("--no-launch")

    def scan(self, root):
        res = subprocess.run([self.path, "scan", "--aiter-root", root, "--format", "json"]
                             + self.extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=self.env)
        if res.returncode not in (0, 1):
            return {"error": res.stderr.decode("utf-8", "replace").strip()
                    or f"exit status {res.returncode}"}
        try:
            manifest = json.loads(res.stdout)
        except ValueError as e:
            return {"error": f"not JSON: {e}"}
        out = read_manifest(manifest)
        if "error" not in out:
            out["new"] = manifest_state(manifest)
        return out

    def history(self, git_dir, rev_range):
        """`aiter-probe history --format json`, whose shape is
        {"initial": {"commit", "rules": {ID: {"status", "captures": [{NAME: VALUE}...]}},
                     "capabilities": {ID: bool}},
         "changes": [{"id", "kind": "rule"|"capability", "commit", "before", "after"}]}
        with a rule's before/after {"status", "captures"} and a capability's
        booleans; every commit of the range is compared with its first parent."""
        res = subprocess.run([self.path, "history", "--git", git_dir, rev_range,
                              "--format", "json"] + self.rules,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        if res.returncode != 0:
            raise RuntimeError(res.stderr.decode("utf-8", "replace").strip()
                               or f"aiter-probe history: exit status {res.returncode}")
        return json.loads(res.stdout)


def read_manifest(m):
    try:
        rules = m["rules"]
        caps = m["capabilities"]
        cases = []
        for match in rules[RULE_CASES]["matches"]:
            c = match["captures"]
            cases.append((int(c["heads"]), int(c["head_dim"]), int(match["line"])))
        return {
            "reduce": rules[RULE_REDUCE]["status"] == "matched",
            "metadata": rules[RULE_METADATA]["status"] == "matched",
            "capability": bool(caps[CAPABILITY]["supported"]),
            "cases": sorted(cases),
            "metadata_lines": [mt["line"] for mt in rules[RULE_METADATA]["matches"]],
            "reduce_lines": [mt["line"] for mt in rules[RULE_REDUCE]["matches"]],
        }
    except (KeyError, TypeError, ValueError) as e:
        return {"error": f"manifest lacks {e}"}


def manifest_state(m):
    """The manifest as (rules: id -> (status, [captures...]), caps: id -> bool)."""
    rules, caps = {}, {}
    for rid, r in (m.get("rules") or {}).items():
        try:
            rules[rid] = (r["status"], [mt.get("captures") or {} for mt in r.get("matches") or []])
        except (KeyError, TypeError, AttributeError):
            rules[rid] = ("(unreadable)", [])
    for cid, c in (m.get("capabilities") or {}).items():
        caps[cid] = bool(c.get("supported")) if isinstance(c, dict) else bool(c)
    return rules, caps


def differences(ind, tool):
    if "error" in tool:
        return [tool["error"]]
    diffs = []
    for key in ("reduce", "metadata", "capability"):
        if ind[key] != tool[key]:
            diffs.append(f"{key}: independent {ind[key]}, aiter-probe {tool[key]}")
    if ind["cases"] != tool["cases"]:
        mine, theirs = set(ind["cases"]), set(tool["cases"])
        diffs.append("cases: only independent %s; only aiter-probe %s"
                     % (sorted(mine - theirs), sorted(theirs - mine)))
    # The two rules report their first match only (collect: first).
    h24 = sorted(ln for h, d, ln in ind["cases"] if (h, d) == (24, 512))
    if h24 and h24[:1] != tool["reduce_lines"][:1]:
        diffs.append(f"reduce line: independent {h24[0]}, aiter-probe {tool['reduce_lines'][:1]}")
    if ind["metadata"] and ind["metadata_lines"][:1] != tool["metadata_lines"][:1]:
        diffs.append(f"metadata line: independent {ind['metadata_lines'][0]}, "
                     f"aiter-probe {tool['metadata_lines'][:1]}")
    return diffs


def old_rule_verdicts(ind):
    """The C reading's three rules as verdicts (for the history comparison)."""
    def status(present, ok):
        return "missing" if not present else ("matched" if ok else "unmatched")
    cases = [(h, d) for h, d, _ in sorted(ind["cases"], key=lambda c: c[2])]
    return {
        RULE_REDUCE: V(status(ind["reduce_present"], ind["reduce"])),
        RULE_METADATA: V(status(ind["metadata_present"], ind["metadata"])),
        RULE_CASES: V(status(ind["reduce_present"], bool(cases)), caps={"cases": cases}),
    }


def tool_captures(rid, captures):
    """The compared captures of a rule, from the tool's list of match captures."""
    first = captures[0] if captures else {}
    if rid == "mla.gluon_decode.max_heads":
        return {"heads": first.get("heads")}
    if rid == "mla.reduce_v1.binds_9":
        return {"param": first.get("param")}
    if rid in ("mla.asm.gfx950.bf16_decode_rows", "mla.asm.gfx942.bf16_decode_rows"):
        rows = []
        for c in captures:
            row = tuple(c.get(k) for k in ("gqa", "ps", "qlen", "causal", "lse"))
            if row not in rows:
                rows.append(row)
        return {"rows": rows}
    if rid.startswith("mla.metadata.") and rid.split(".")[-1] in PLANNER_BOOLS:
        # Compared as this script's lexer splits the capture, whatever its
        # spacing.
        return {"cond": [tuple(t.text for t in live_tokens(c.get("cond", ""))) for c in captures]}
    if rid == RULE_CASES:
        try:
            return {"cases": [(int(c["heads"]), int(c["head_dim"])) for c in captures]}
        except (KeyError, TypeError, ValueError):
            return {"cases": "(unreadable)"}
    return {}


def compare_state(rules, caps, tool_rules, tool_caps, rule_ids, cap_ids):
    """[(capability marks, message)] where the tool's state differs."""
    out = []
    rule_caps = dict(NEW_RULES, **OLD_RULE_CAPS)
    for rid in rule_ids:
        marks = set(rule_caps.get(rid, []))
        if rid not in tool_rules:
            out.append((marks, f"{rid}: absent from aiter-probe's answer"))
            continue
        st, captures = tool_rules[rid]
        mine = rules[rid]
        if st != mine.status:
            out.append((marks, f"{rid}: independent {mine.status}"
                        f"{' (' + mine.note + ')' if mine.note else ''}, aiter-probe {st}"))
        elif st == "matched" and mine.caps:
            theirs = tool_captures(rid, captures)
            for k, v in mine.caps.items():
                if theirs.get(k) != v:
                    out.append((marks, f"{rid} {k}: independent {v}, aiter-probe {theirs.get(k)}"))
    for cid in cap_ids:
        if cid not in tool_caps:
            out.append(({cid}, f"{cid}: absent from aiter-probe's answer"))
        elif tool_caps[cid] != caps[cid]:
            out.append(({cid}, f"{cid}: independent {caps[cid]}, aiter-probe {tool_caps[cid]}"))
    return out


def qlen_text(qlens):
    """1-3,8 for a set of query lengths; - for none, ? for not known."""
    if qlens is None:
        return "?"
    out, run = [], []
    for q in sorted(qlens) + [None]:
        if run and (q is None or q != run[-1] + 1):
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        if q is not None:
            run.append(q)
    return ",".join(out) or "-"


def tool_backend(tool_rules):
    """The backend adapter (python/aiter_probe, the code under test) over
    aiter-probe's rule states."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    try:
        from aiter_probe import Manifest
        from aiter_probe.backend import Backend
    finally:
        sys.path.pop(0)
    rules = {rid: {"status": st, "file": "hsa/%s/mla/mla_asm.csv" % rid.split(".")[2]
                   if rid.endswith("bf16_decode_rows") else None, "reason": None,
                   "matches": [{"line": 0, "text": "", "captures": c} for c in caps]}
             for rid, (st, caps) in tool_rules.items()}
    return Backend(Manifest({"rules": rules, "capabilities": {}}, "aiter-probe"))


# How torch names what the grid calls bf16 and fp8 (the adapter takes them).
TORCH_NAMES = {"bf16": "torch.bfloat16", "fp8": "float8_e4m3fnuz"}


def compare_native(row, tool_rules):
    """The grid points where native_heads differs from the planner run, as
    one message, or None."""
    mine = row["native"]
    b = tool_backend(tool_rules)
    wrong = []
    for point in native_grid():
        arch, q, kv, heads, qlen, exp = point
        want = mine.get(point) if mine is not None else None
        got, why = b.answer("native_heads", arch + ":sramecc+:xnack-", TORCH_NAMES[q], kv,
                            heads, qlen, experimental=exp)
        if got != want:
            wrong.append(f"{arch} {q}/{kv} h{heads} q{qlen} exp {exp}: independent {want}, "
                         f"aiter-probe {got} ({why})")
    if not wrong:
        return None
    return f"native_heads: {len(wrong)} of the grid differ, e.g. {wrong[0]}"


def compare_lookup(row, tool_rules):
    """The disagreements of the decode lookups' query lengths (gfx950,
    gfx942), as a list."""
    out = []
    b = tool_backend(tool_rules)
    for arch, key in (("gfx950", "lookup"), ("gfx942", "lookup942")):
        mine, how = row[key]
        theirs, why = b.answer("ps_lse_qlens", arch)
        want = mine if mine is not None else frozenset()
        if theirs != want:
            out.append(f"ps_lse_qlens({arch}): independent {qlen_text(mine)}"
                       f"{' (' + how + ')' if mine is None and how else ''}, aiter-probe "
                       f"{qlen_text(theirs)} ({why})")
    native = compare_native(row, tool_rules)
    return out + ([native] if native else [])


def new_ids_present(tool_rules, tool_caps):
    return any(r in tool_rules for r in NEW_RULES) or any(c in tool_caps for c in NEW_CAPABILITIES)


def unpack_tag(git_dir, ref, dest):
    dirs = [d for d in ARCHIVE_DIRS + NEW_PATHS
            if git(git_dir, "cat-file", "-e", f"{ref}:{d}") is not None]
    if not dirs:
        return  # an empty tree: every rule reads as missing
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", ref]
                             + dirs, stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)


# --- History -------------------------------------------------------------------

def history_states(git_dir, hist, refs, tip):
    """{ref: (rules: id -> (status, captures), caps: id -> bool)} at each ref's
    commit, and notes. Each commit's changes are against its first parent, so
    the state at T is the initial state with the changes of T's first-parent
    chain applied, root first; every change's `before` is checked against the
    state it applies to."""
    init = hist["initial"]
    base_rules = {rid: (r["status"], r.get("captures") or [])
                  for rid, r in init.get("rules", {}).items()}
    base_caps = {cid: bool(v) for cid, v in init.get("capabilities", {}).items()}
    by_commit = {}
    for ch in hist.get("changes", []):
        by_commit.setdefault(ch["commit"], []).append(ch)
    states, notes, skipped = {}, [], []
    bad_before = 0
    for ref in refs:
        commit = (git(git_dir, "rev-parse", f"{ref}^{{commit}}") or "").strip()
        if not commit:
            notes.append(f"{ref}: no commit")
            continue
        if subprocess.run(["git", "--git-dir", git_dir, "merge-base", "--is-ancestor", commit, tip],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            skipped.append(ref)
            continue
        chain = (git(git_dir, "rev-list", "--first-parent", "--reverse", commit) or "").split()
        if not chain or chain[0] != init.get("commit"):
            notes.append(f"{ref}: its first-parent root is not the history's initial commit")
        rules, caps = dict(base_rules), dict(base_caps)
        for c in chain:
            for ch in by_commit.get(c, ()):
                if ch["kind"] == "capability":
                    if caps.get(ch["id"]) != bool(ch["before"]):
                        bad_before += 1
                    caps[ch["id"]] = bool(ch["after"])
                else:
                    before = (ch["before"]["status"], ch["before"].get("captures") or [])
                    if rules.get(ch["id"]) != before:
                        bad_before += 1
                    rules[ch["id"]] = (ch["after"]["status"], ch["after"].get("captures") or [])
        states[ref] = (rules, caps)
    if bad_before:
        notes.append(f"{bad_before} change(s) whose `before` differs from the state they apply to")
    if skipped:
        notes.append(f"{len(skipped)} ref(s) not reachable from {tip}, skipped: "
                     + ", ".join(skipped))
    # The cumulative state in `git rev-list --topo-order --reverse` order reads
    # the same at a commit only when no side branch interleaves before it.
    order = (git(git_dir, "rev-list", "--topo-order", "--reverse", tip) or "").split()
    want = {}
    for ref in states:
        want.setdefault((git(git_dir, "rev-parse", f"{ref}^{{commit}}") or "").strip(), []).append(ref)
    rules, caps = dict(base_rules), dict(base_caps)
    differ = []
    for c in order:
        for ch in by_commit.get(c, ()):
            if ch["kind"] == "capability":
                caps[ch["id"]] = bool(ch["after"])
            else:
                rules[ch["id"]] = (ch["after"]["status"], ch["after"].get("captures") or [])
        for ref in want.get(c, ()):
            if states[ref] != (rules, caps):
                differ.append(ref)
    if differ:
        notes.append("the topo-order cumulative state differs from the first-parent one at "
                     + ", ".join(differ) + " (the first-parent state is compared)")
    return states, notes


# --- Output --------------------------------------------------------------------

def yn(b):
    return "yes" if b else "no"


def describe_cases(cases):
    seen = sorted({(h, d) for h, d, _ in cases})
    return " ".join(f"{h}x{d}" for h, d in seen)


def runs(items):
    """[(name, message or None)] -> 'a..b: message' for each run of equal
    messages (None: no difference)."""
    out, cur = [], None
    for name, msg in items:
        if cur and cur[2] == msg:
            cur[1] = name
            cur[3] += 1
        else:
            if cur and cur[2] is not None:
                out.append(cur)
            cur = [name, name, msg, 1]
    if cur and cur[2] is not None:
        out.append(cur)
    return [f"{a}{'..' + b if b != a else ''} ({n}): {m}" if n > 1 else f"{a}: {m}"
            for a, b, m, n in out]


SGLANG_HEADS = {16, 32, 64, 128}
# vLLM passes 1 and 4 to the persistent LSE decode (2 and 3 padded to 4).
VLLM_LSE_QLENS = {1, 4}


def probe_differences(rows):
    """Where today's backend probes answer differently from the verdicts."""
    lines = []

    def section(title, items, agree_text):
        found = runs(items)
        lines.append(f"{title}: " + ("agrees on every row" + agree_text if not found else
                                      f"differs on {sum(1 for _, m in items if m)} row(s)"))
        lines.extend("  " + f for f in found)

    def cap(row, cid):
        return row["caps"][cid]
    section("FP8 prefill, vLLM import-only (both names exported)",
            [(r["name"], None if r["probes"]["fp8_import"] == cap(r, "mla.fp8_prefill_ps") else
              f"probe {int(r['probes']['fp8_import'])}, verdict {int(cap(r, 'mla.fp8_prefill_ps'))}"
              + why_fp8(r)) for r in rows], "")
    section("segmented decode, import-only (def exists)",
            [(r["name"], None if r["probes"]["seg_import"] == cap(r, "mla.segmented_decode") else
              f"probe {int(r['probes']['seg_import'])}, verdict {int(cap(r, 'mla.segmented_decode'))}"
              + note_of(r, "mla.triton_decode_fwd.binds_segmented")) for r in rows], "")

    def gluon(r):
        bound = r["probes"]["gluon"]
        v = r["rules"]["mla.gluon_decode.max_heads"]
        heads = int(v.caps["heads"]) if v.status == "matched" else None
        if bound is None and heads is None:
            return None
        probe_cap = bound is not None and bound >= 15
        if bound == heads and probe_cap == cap(r, "mla.gluon_decode.small_heads"):
            return None
        return (f"vLLM bound {bound if bound is not None else 'not importable'}, "
                f"independent heads {heads if heads is not None else v.status}"
                + ("" if probe_cap == cap(r, "mla.gluon_decode.small_heads") else
                   f" (small_heads: probe {int(probe_cap)}, verdict "
                   f"{int(cap(r, 'mla.gluon_decode.small_heads'))})"))
    section("Gluon, vLLM (entry importable, `requires nhead <= N` else 16)",
            [(r["name"], gluon(r)) for r in rows], "")
    for key, cid, rid in (("hipb_hasattr", "aiter.hipb_mm", "export.hipb_mm"),
                          ("qr_hasattr", "aiter.qr_all_reduce_rmsnorm",
                           "export.qr_all_reduce_rmsnorm")):
        section(f"{cid.split('.', 1)[1]}, hasattr (exported)",
                [(r["name"], None if r["probes"][key] == cap(r, cid) else
                  f"probe {int(r['probes'][key])}, verdict {int(cap(r, cid))}"
                  + note_of(r, rid)) for r in rows],
                f" ({sum(cap(r, cid) for r in rows)} rows with it)")

    def sglang(r):
        if not r["ind"]["reduce_present"]:
            return None
        real = {h for h, d, _ in r["ind"]["cases"] if d == 512}
        extra, lacking = sorted(SGLANG_HEADS - real), sorted(real - SGLANG_HEADS)
        parts = []
        if extra:
            parts.append(f"table claims {extra} (not dispatched)")
        if lacking:
            parts.append(f"table lacks {lacking} (dispatched)")
        return "; ".join(parts) or None
    section("SGLang reducer head table {16,32,64,128} vs the reducer's (h, 512) cases",
            [(r["name"], sglang(r)) for r in rows], "")

    def lse(r):
        qlens, how = r["lookup"]
        if qlens is None and how is None:
            return None
        if qlens is None:
            return f"the lookup is not known ({how})"
        crash = sorted(VLLM_LSE_QLENS - qlens)
        more = sorted(qlens - VLLM_LSE_QLENS)
        if not crash and not more:
            return None
        return "; ".join(([f"claims {crash} (no kernel: cannot get heuristic kernel)"]
                          if crash else []) +
                         ([f"leaves out {qlen_text(frozenset(more))}"] if more else []))
    section("vLLM persistent-LSE constant qlen {1,4} vs the gfx950 bf16 16-head decode lookup",
            [(r["name"], lse(r)) for r in rows], "")
    return lines


def note_of(row, rid):
    v = row["rules"][rid]
    return f" [{v.status}{': ' + v.note if v.note else ''}]"


def why_fp8(r):
    a, b = r["rules"]["mla.prefill_ps_asm_fwd.binds_17"], r["rules"]["mla.reduce_v1.binds_9"]
    bits = []
    if a.status != "matched":
        bits.append(f"prefill_ps_asm_fwd {a.status}{': ' + a.note if a.note else ''}")
    if b.status != "matched":
        bits.append(f"reduce_v1 {b.status}{': ' + b.note if b.note else ''}")
    elif b.caps.get("param") != "num_kv_splits":
        bits.append(f"reduce_v1 7th param {b.caps.get('param')}")
    return f" [{'; '.join(bits)}]" if bits else ""


def first_releases(rows, tags):
    lines = []
    tag_rows = [r for r in rows if r["name"] in tags]
    for cid, label in CAPABILITIES:
        holding = [r["name"] for r in tag_rows if r["caps"][cid]]
        if not holding:
            lines.append(f"{label:<5} {cid}: never")
            continue
        first = holding[0]
        after = [r["name"] for r in tag_rows[[x["name"] for x in tag_rows].index(first):]
                 if not r["caps"][cid]]
        gap = ""
        if after:
            gap = f"; not at {len(after)} later tag(s): " + ", ".join(after[:4]) + \
                  (", ..." if len(after) > 4 else "")
        lines.append(f"{label:<5} {cid}: {first}{gap}")
    for want, what in ((None, "any query length"), (VLLM_LSE_QLENS, "query lengths 1 and 4")):
        holding = [r["name"] for r in tag_rows if r["lookup"][0]
                   and (want is None or want <= r["lookup"][0])]
        lines.append(f"lse-q gfx950 bf16 16-head persistent LSE decode, {what}: "
                     + (holding[0] if holding else "never"))
    holding = [r["name"] for r in tag_rows if r["lookup942"][0]]
    lines.append("lse-q gfx942 bf16 16-head persistent LSE decode, any query length: "
                 + (holding[0] if holding else "never"))
    # The planner's predicate at a few points of its grid, per tag.
    for point, what in ((("gfx950", "bf16", "bf16", 24, 1, None), "gfx950 bf16 24 heads"),
                        (("gfx942", "bf16", "bf16", 24, 1, None), "gfx942 bf16 24 heads"),
                        (("gfx942", "fp8", "fp8", 128, 1, None), "gfx942 fp8 128 heads"),
                        (("gfx950", "fp8", "fp8", 32, 4, None), "gfx950 fp8 32 heads qlen 4")):
        holding = [r["name"] for r in tag_rows if r["native"] and r["native"][point]]
        lines.append(f"native {what} (planner natively_supported): "
                     + (holding[0] if holding else "never"))
    having = [r for r in tag_rows if r["rules"]["mla.metadata.natively_supported"].status
              == "matched"]
    unknown = [r["name"] for r in having if any(
        v is None for (*_, exp), v in r["native"].items() if exp is not None)]
    lines.append(f"native: {len(having)} tags with natively_supported; undecided with "
                 "AITER_ENABLE_EXPERIMENTAL given on: " + (", ".join(unknown) or "none"))
    return lines


def explain(row, width):
    out = []
    for rid in list(NEW_RULES):
        v = row["rules"][rid]
        extra = " ".join(f"{k}={v.caps[k]}" for k in v.caps) if v.caps else ""
        out.append(f"{'':<{width}}    {rid}: {v.status} {v.where or ''} {extra}"
                   f"{' (' + v.note + ')' if v.note else ''}".rstrip())
    qlens, how = row["lookup"]
    if qlens is None:
        out.append(f"{'':<{width}}    lookup: {how or 'no ' + ASM_MLA}")
    else:
        for q, persistent, key, line in how:
            what = ("fails: " + key if isinstance(key, str) else " ".join(
                f"{k}={v}" for k, v in key.items() if k not in ("qType", "kvType", "prefill")))
            out.append(f"{'':<{width}}    lookup q{q}{'' if persistent else ' (no ps)'}: {what}"
                       f" -> {CSV_950 + ':' + str(line) if line else 'none'}")
    p = row["probes"]
    out.append(f"{'':<{width}}    probes: " + " ".join(f"{k}={p[k]}" for k in sorted(p)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", nargs="?", help="AITER git directory (bare or .git)")
    ap.add_argument("--tags", default="v*", help="tag glob (default v*)")
    ap.add_argument("--ref", action="append", default=[], help="also read this ref (e.g. main)")
    ap.add_argument("--tree", action="append", default=[], help="read a plain AITER-like tree")
    ap.add_argument("--probe", help="aiter-probe binary (default $AITER_PROBE, ../aiter-probe, PATH)")
    ap.add_argument("--datadir", help="folder holding rules/ and probes/ "
                    "(default: this source tree's, unless AITER_PROBE_DATADIR is set)")
    ap.add_argument("--rules", action="append", default=[], help="extra --rules for aiter-probe")
    ap.add_argument("--independent-only", action="store_true", help="skip aiter-probe")
    ap.add_argument("--history", action="store_true",
                    help="compare with one `aiter-probe history` over --history-range "
                    "instead of a scan per row")
    ap.add_argument("--history-range", default="main", help="the history's range (default main)")
    ap.add_argument("--cases", action="store_true", help="list the reducer cases per row")
    ap.add_argument("--lines", action="store_true",
                    help="list every match with its line (reducer cases, metadata branch)")
    ap.add_argument("--explain", action="store_true",
                    help="list every new rule's verdict per row, with where and why")
    opts = ap.parse_args()
    if not opts.git_dir and not opts.tree:
        ap.error("give an AITER git directory or --tree DIR")
    if opts.history and (opts.independent_only or not opts.git_dir):
        ap.error("--history needs a git directory and aiter-probe")

    probe = None
    if not opts.independent_only:
        path = find_probe(opts.probe)
        if path is None:
            print("aiter-tags: no aiter-probe binary found; independent reading only",
                  file=sys.stderr)
        else:
            datadir = opts.datadir
            if datadir is None and "AITER_PROBE_DATADIR" not in os.environ:
                datadir = os.path.normpath(os.path.join(os.path.dirname(
                    os.path.abspath(__file__)), ".."))
            probe = Probe(path, datadir, opts.rules)

    rows = []
    tags = []
    if opts.git_dir:
        tags = list_tags(opts.git_dir, opts.tags)
        cat = CatFile(opts.git_dir)
        for ref in tags + opts.ref:
            red = first_in_git(opts.git_dir, ref, REDUCE_PATHS)
            meta = first_in_git(opts.git_dir, ref, METADATA_PATHS)
            src = GitSource(opts.git_dir, ref, cat)
            tool = None
            if probe and not opts.history:
                with tempfile.TemporaryDirectory(prefix="aiter-tags-") as tmp:
                    unpack_tag(opts.git_dir, ref, tmp)
                    tool = probe.scan(tmp)
            rows.append({"name": ref, "red": red, "meta": meta, "src": src, "tool": tool})
    for root in opts.tree:
        red = first_in_tree(root, REDUCE_PATHS)
        meta = first_in_tree(root, METADATA_PATHS)
        tool = probe.scan(os.path.abspath(root)) if probe else None
        rows.append({"name": root, "red": red, "meta": meta, "src": TreeSource(root),
                     "tool": tool})

    for row in rows:
        row["ind"] = independent(row["red"], row["meta"])
        row["rules"], row["caps"], row["probes"] = new_verdicts(row["src"], row["meta"])
        row["lookup"] = lookup_truth(PyReader(row["src"]), row["src"])
        row["lookup942"] = lookup_truth(PyReader(row["src"]), row["src"], arch="gfx942")
        row["native"] = native_truth(row["meta"])
        row["caps"][CAPABILITY] = row["ind"]["capability"]

    notes = []
    compared = probe is not None
    if probe and opts.history:
        try:
            hist = probe.history(opts.git_dir, opts.history_range)
        except (RuntimeError, ValueError) as e:
            print(f"aiter-tags: {e}", file=sys.stderr)
            return 2
        states, hnotes = history_states(opts.git_dir, hist, [r["name"] for r in rows],
                                        opts.history_range)
        notes += [f"history: {n}" for n in hnotes]
        init = hist.get("initial", {})
        h_rules, h_caps = set(init.get("rules", {})), set(init.get("capabilities", {}))
        active = new_ids_present(init.get("rules", {}), init.get("capabilities", {}))
        rule_ids = [r for r in list(OLD_RULE_CAPS) + list(NEW_RULES)
                    if r in h_rules or (active and r in NEW_RULES)]
        cap_ids = [c for c, _ in CAPABILITIES if c in h_caps or (active and c != CAPABILITY)]
        if not active:
            notes.append(f"history has none of the {len(NEW_RULES)} new rules and "
                         f"{len(NEW_CAPABILITIES)} new capabilities (packs not installed): "
                         "compared " + ", ".join(rule_ids + cap_ids) + " only")
        for row in rows:
            if row["name"] not in states:
                row["diffs"], row["marks"] = ["(not in the history)"], set()
                continue
            rules = dict(row["rules"], **old_rule_verdicts(row["ind"]))
            diffs = compare_state(rules, row["caps"], *states[row["name"]], rule_ids, cap_ids)
            row["diffs"] = [m for _, m in diffs]
            if active:
                row["diffs"] += compare_lookup(row, states[row["name"]][0])
            row["marks"] = set().union(*[k for k, _ in diffs]) if diffs else set()
        for row in rows:  # skipped rows do not count as disagreeing
            if row["diffs"] == ["(not in the history)"]:
                row["diffs"], row["skipped"] = [], True
    else:
        inactive = 0
        for row in rows:
            row["diffs"], row["marks"] = [], set()
            tool = row["tool"]
            if tool is None:
                continue
            row["diffs"] = differences(row["ind"], tool)
            if row["diffs"]:
                row["marks"].add(CAPABILITY)
            if "error" in tool:
                continue
            t_rules, t_caps = tool["new"]
            if not new_ids_present(t_rules, t_caps):
                inactive += 1
                continue
            diffs = compare_state(row["rules"], row["caps"], t_rules, t_caps,
                                  list(NEW_RULES), NEW_CAPABILITIES)
            row["diffs"] += [m for _, m in diffs]
            row["diffs"] += compare_lookup(row, t_rules)
            for k, _ in diffs:
                row["marks"] |= k
        if inactive:
            notes.append(f"{inactive} scan(s) have none of the new rule/capability ids "
                         "(packs not installed): compared mla.decode.native_h24's rules only")

    width = max([len("tag")] + [len(r["name"]) for r in rows])
    labels = [(cid, label, max(len(label), 2)) for cid, label in CAPABILITIES]
    head = (f"{'tag':<{width}}  {'files':<5}  {'r m':<3}  {'#c':>2}  {'vLLM':<5}  "
            + " ".join(f"{label:>{w}}" for _, label, w in labels) + "  lse-q  agree")
    print(head)
    print("-" * len(head))
    disagreements = 0
    for row in rows:
        ind = row["ind"]
        v_red, v_meta = vllm_reading(row["red"], row["meta"])
        files = ("R" if row["red"] is not None else "-") + ("M" if row["meta"] is not None else "-")
        vllm = f"{int(v_red)}{int(v_meta)}{int(v_red and v_meta)}"
        cells = []
        for cid, _, w in labels:
            cell = str(int(row["caps"][cid])) + ("!" if cid in row["marks"] else "")
            cells.append(f"{cell:>{w}}")
        if not compared:
            agree = "n/a"
        elif row.get("skipped"):
            agree = "skip"
        else:
            agree = "no" if row["diffs"] else "yes"
            disagreements += bool(row["diffs"])
        ncases = len({(h, d) for h, d, _ in ind["cases"]})
        print(f"{row['name']:<{width}}  {files:<5}  {int(ind['reduce'])} {int(ind['metadata'])}  "
              f"{ncases:>2}  {vllm:<5}  " + " ".join(cells)
              + f"  {qlen_text(row['lookup'][0]) if row['lookup'][1] is not None else 'n/a':<5}"
              + f"  {agree}")
        if opts.cases and ind["cases"]:
            print(f"{'':<{width}}  cases: {describe_cases(ind['cases'])}")
        if opts.lines:
            at = " ".join(f"{h}x{d}@{ln}" for h, d, ln in sorted(ind["cases"], key=lambda c: c[2]))
            print(f"{'':<{width}}  reducer: {at or '-'}")
            at = " ".join(str(ln) for ln in ind["metadata_lines"])
            print(f"{'':<{width}}  num_heads == 24: {at or '-'}")
        if opts.explain:
            print("\n".join(explain(row, width)))
        for d in row["diffs"]:
            print(f"{'':<{width}}  ! {d}")
    print("r m: reducer 24x512 case, planner num_heads == 24; #c: reducer cases; "
          "vLLM: its whitespace-strip probe (r, m, both)")
    print("lse-q: the query lengths (1-16) whose gfx950 bf16 16-head persistent LSE decode "
          "finds a kernel (backend ps_lse_qlens); n/a: no csrc/py_itfs_cu/asm_mla.cu")
    legend = [f"{label}={cid}" for cid, label in CAPABILITIES]
    for i in range(0, len(legend), 4):
        print("  " + "  ".join(legend[i:i + 4]))
    if tags:
        print("\nfirst release (tags in version order):")
        for line in first_releases(rows, set(tags)):
            print("  " + line)
    print("\nprobes answering differently from the independent verdict:")
    for line in probe_differences(rows):
        print("  " + line)
    for n in notes:
        print(f"note: {n}")
    if not compared:
        return 0
    print(f"\n{len(rows)} rows, {disagreements} disagreeing")
    return 1 if disagreements else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        print(f"aiter-tags: {e}", file=sys.stderr)
        sys.exit(2)
