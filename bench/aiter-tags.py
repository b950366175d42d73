#!/usr/bin/env python3
"""Independent reading of AITER's MLA sources, tag by tag, against aiter-probe.

For every v* tag of an AITER git directory this script takes the MLA reducer
(csrc/kernels/mla/reduce.cu) and the metadata planner
(csrc/kernels/mla/metadata/v1_2_device.cuh) with `git show`, and decides on
its own, with a small C lexer and preprocessor reading (comments, backslash
continuations, `#if 0` blocks, string literals), whether:

  - the reducer dispatches a case for 24 heads with head dim 512,
  - the planner has a `num_heads == 24` branch,
  - both hold (the capability mla.decode.native_h24),

and which (heads, head dim) cases the reducer dispatches. It then runs
`aiter-probe scan --format json` on the same files (unpacked with
`git archive`) and compares the verdicts, the cases with their lines, and the
line of each rule's first match. vLLM's whitespace-strip probe is printed beside
them for comparison; it takes no part in the agreement.

    bench/aiter-tags.py [--probe PATH] [--tags GLOB] [--ref REF]... GIT_DIR
    bench/aiter-tags.py [--probe PATH] --tree DIR...

Exit status: 0 when every row agrees, 1 on any disagreement, 2 on an error.
With --independent-only (or no aiter-probe binary found) only the independent
and vLLM readings are printed and the exit status is 0.
"""

import argparse
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
        self.extra = []
        for r in extra_rules:
            self.extra += ["--rules", r]
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
        return read_manifest(manifest)


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


def unpack_tag(git_dir, ref, dest):
    dirs = [d for d in ARCHIVE_DIRS if git(git_dir, "cat-file", "-e", f"{ref}:{d}") is not None]
    if not dirs:
        return  # an empty tree: every rule reads as missing
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", ref]
                             + dirs, stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)


# --- Output --------------------------------------------------------------------

def yn(b):
    return "yes" if b else "no"


def describe_cases(cases):
    seen = sorted({(h, d) for h, d, _ in cases})
    return " ".join(f"{h}x{d}" for h, d in seen)


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
    ap.add_argument("--cases", action="store_true", help="list the reducer cases per row")
    ap.add_argument("--lines", action="store_true",
                    help="list every match with its line (reducer cases, metadata branch)")
    opts = ap.parse_args()
    if not opts.git_dir and not opts.tree:
        ap.error("give an AITER git directory or --tree DIR")

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
    if opts.git_dir:
        for ref in list_tags(opts.git_dir, opts.tags) + opts.ref:
            red = first_in_git(opts.git_dir, ref, REDUCE_PATHS)
            meta = first_in_git(opts.git_dir, ref, METADATA_PATHS)
            tool = None
            if probe:
                with tempfile.TemporaryDirectory(prefix="aiter-tags-") as tmp:
                    unpack_tag(opts.git_dir, ref, tmp)
                    tool = probe.scan(tmp)
            rows.append((ref, red, meta, tool))
    for root in opts.tree:
        red = first_in_tree(root, REDUCE_PATHS)
        meta = first_in_tree(root, METADATA_PATHS)
        tool = probe.scan(os.path.abspath(root)) if probe else None
        rows.append((root, red, meta, tool))

    width = max([len("tag")] + [len(r[0]) for r in rows])
    head = (f"{'tag':<{width}}  {'files':<5}  {'reduce h24d512':<14}  {'metadata h24':<12}  "
            f"{'native_h24':<10}  {'#cases':>6}  {'vLLM r/m/cap':<12}  agree")
    print(head)
    print("-" * len(head))
    disagreements = 0
    for name, red, meta, tool in rows:
        ind = independent(red, meta)
        v_red, v_meta = vllm_reading(red, meta)
        files = ("R" if red is not None else "-") + ("M" if meta is not None else "-")
        vllm = f"{yn(v_red)}/{yn(v_meta)}/{yn(v_red and v_meta)}"
        if tool is None:
            agree = "n/a"
            diffs = []
        else:
            diffs = differences(ind, tool)
            agree = "no" if diffs else "yes"
            disagreements += bool(diffs)
        ncases = len({(h, d) for h, d, _ in ind["cases"]})
        print(f"{name:<{width}}  {files:<5}  {yn(ind['reduce']):<14}  {yn(ind['metadata']):<12}  "
              f"{yn(ind['capability']):<10}  {ncases:>6}  {vllm:<12}  {agree}")
        if opts.cases and ind["cases"]:
            print(f"{'':<{width}}  cases: {describe_cases(ind['cases'])}")
        if opts.lines:
            at = " ".join(f"{h}x{d}@{ln}" for h, d, ln in sorted(ind["cases"], key=lambda c: c[2]))
            print(f"{'':<{width}}  reducer: {at or '-'}")
            at = " ".join(str(ln) for ln in ind["metadata_lines"])
            print(f"{'':<{width}}  num_heads == 24: {at or '-'}")
        for d in diffs:
            print(f"{'':<{width}}  ! {d}")
    if probe is None:
        return 0
    print(f"\n{len(rows)} rows, {disagreements} disagreeing")
    return 1 if disagreements else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        print(f"aiter-tags: {e}", file=sys.stderr)
        sys.exit(2)
