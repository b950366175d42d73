/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/python.h"

static ap_py_module *mod;
static char *copy; /* the source, in a buffer of exactly its length */

static int teardown(void **state)
{
	(void)state;
	ap_py_module_free(mod);
	mod = NULL;
	free(copy);
	copy = NULL;
	return 0;
}

/* Parses the first len bytes of src from a buffer of exactly that size, so
 * that reading past len is an AddressSanitizer error. */
static int parse_n(const char *src, size_t len, const char *const *false_names)
{
	ap_py_options opt = {.false_names = false_names};

	teardown(NULL);
	copy = ap_xmalloc(len);
	memcpy(copy, src, len);
	return ap_py_parse(&mod, copy, len, &opt);
}

static void parse_ok(const char *src)
{
	int rc = parse_n(src, strlen(src), NULL);
	if (rc != 0)
		fail_msg("%s", ap_error_last());
	assert_non_null(mod);
}

static void parse_err(const char *src, int code, const char *msg)
{
	assert_int_equal(parse_n(src, strlen(src), NULL), code);
	assert_null(mod);
	assert_string_equal(ap_error_last(), msg);
}

static const ap_py_binding *binding(const char *name)
{
	return ap_py_lookup(mod, name);
}

static void assert_binding(size_t i, ap_py_bind_kind kind, const char *name, const char *module,
                           const char *target, unsigned line)
{
	const ap_py_binding *b;

	assert_true(i < mod->nbindings);
	b = &mod->bindings[i];
	assert_int_equal(b->kind, kind);
	if (name == NULL)
		assert_null(b->name);
	else
		assert_string_equal(b->name, name);
	if (module == NULL)
		assert_null(b->module);
	else
		assert_string_equal(b->module, module);
	if (target == NULL)
		assert_null(b->target);
	else
		assert_string_equal(b->target, target);
	assert_int_equal(b->line, line);
}

static void assert_string_at(size_t i, const char *value, unsigned line)
{
	assert_true(i < mod->nstrings);
	assert_string_equal(mod->strings[i].value, value);
	assert_int_equal(mod->strings[i].line, line);
}

static void assert_param(const ap_py_def *d, size_t i, const char *name, ap_py_param_kind kind,
                         bool has_default)
{
	assert_true(i < d->nparams);
	assert_string_equal(d->params[i].name, name);
	assert_int_equal(d->params[i].kind, kind);
	assert_int_equal(d->params[i].has_default, has_default);
}

static const ap_py_def *def(const char *qualname)
{
	const ap_py_def *d = ap_py_find_def(mod, qualname);
	if (d == NULL)
		fail_msg("no def %s", qualname);
	return d;
}

/* The names bound, in order, joined by spaces ("*" for a star import, "?x"
 * for x bound UNKNOWN, "-x" for del x, "^x" for submodule x). */
static char *names(void)
{
	ap_buf b = AP_BUF_INIT;
	for (size_t i = 0; i < mod->nbindings; i++) {
		const ap_py_binding *x = &mod->bindings[i];
		if (i > 0)
			ap_buf_putc(&b, ' ');
		if (x->kind == AP_PY_BIND_UNKNOWN)
			ap_buf_putc(&b, '?');
		else if (x->kind == AP_PY_BIND_DEL)
			ap_buf_putc(&b, '-');
		else if (x->kind == AP_PY_BIND_SUBMODULE)
			ap_buf_putc(&b, '^');
		ap_buf_puts(&b, x->name ? x->name : "*");
	}
	return ap_buf_detach(&b);
}

static void assert_names(const char *want)
{
	char *got = names();
	assert_string_equal(got, want);
	free(got);
}

/* --- Lexing --------------------------------------------------------------- */

static void test_comments_and_strings(void **state)
{
	(void)state;
	parse_ok("x = 1  # a = 'not a string' def f(\n"
	         "# whole line: import os\n"
	         "s = r'\\d' + u'u' + R\"R\" + b'b' + B'B' + f'{x}' + F\"F\"\n"
	         "t = rb'1' + Rb'2' + bR'3' + BR'4' + br'5' + fr'6' + rf'7' + Rf'8' + fR'9'\n"
	         "e = 'it\\'s' \"q\\\"q\" 'a\\\\'\n");
	assert_names("x s t e");
	assert_int_equal(mod->nstrings, 19);
	assert_string_at(0, "\\d", 3);
	assert_string_at(5, "{x}", 3);
	assert_string_at(6, "F", 3);
	assert_string_at(7, "1", 4);
	assert_string_at(15, "9", 4);
	/* Escapes are kept as written; concatenated literals are separate. */
	assert_string_at(16, "it\\'s", 5);
	assert_string_at(17, "q\\\"q", 5);
	assert_string_at(18, "a\\\\", 5);
}

static void test_triple_quoted(void **state)
{
	(void)state;
	parse_ok("x = '''line 1 # not a comment\n"
	         "def f(: 'quote' \"dq\" '' ''\n"
	         "'''\n"
	         "y = \"\"\"a \"\" b\"\"\"\n"
	         "z = ''\n"
	         "w = ''''''\n"
	         "def g(): pass\n");
	assert_names("x y z w g");
	assert_int_equal(mod->ndefs, 1);
	assert_string_at(0, "line 1 # not a comment\ndef f(: 'quote' \"dq\" '' ''\n", 1);
	assert_string_at(1, "a \"\" b", 4);
	assert_string_at(2, "", 5);
	assert_string_at(3, "", 6);
	assert_int_equal(def("g")->line, 7);
}

static void test_fstrings(void **state)
{
	(void)state;
	/* Braces, nested quotes of the other kind, format specs, and (as
	 * Python 3.12 reads them) nested quotes of the same kind. */
	parse_ok("a = f\"{x['k']:>{w}} {{lit}} {d[\"k\"]!r}\"\n"
	         "b = f'{f'{y}'}' + rf'\\{z}'\n"
	         "c = f'''{\n"
	         "  v  # a comment in the field\n"
	         "}'''\n"
	         "d = 1\n");
	assert_names("a b c d");
	assert_int_equal(mod->nstrings, 4);
	assert_string_at(0, "{x['k']:>{w}} {{lit}} {d[\"k\"]!r}", 1);
	assert_string_at(1, "{f'{y}'}", 2);
	assert_string_at(2, "\\{z}", 2);
	assert_string_at(3, "{\n  v  # a comment in the field\n}", 3);
	assert_int_equal(binding("d")->line, 6);
}

static void test_continuations(void **state)
{
	(void)state;
	parse_ok("a = 1 + \\\n"
	         "    2\n"
	         "b = (1 +\n"
	         "2, [3,\n"
	         "  4], {5:\n"
	         "6})\n"
	         "c = 'x' \\\n"
	         "    'y'\n"
	         "d = 'one \\\n"
	         "two'\n"
	         "e = 1\n");
	assert_names("a b c d e");
	assert_int_equal(binding("b")->line, 3);
	assert_string_at(2, "one \\\ntwo", 9);
	assert_int_equal(binding("e")->line, 11);
}

static void test_crlf_bom_tabs(void **state)
{
	(void)state;
	parse_ok("\xef\xbb\xbf"
	         "import os\r\n"
	         "if x:\r\n"
	         "\tdef f(a,\r\n"
	         "\t      b): pass\r\n"
	         "\tclass C:\r\n"
	         "\t\tdef m(self): return 'v'\r\n"
	         "y = 'crlf' \\\r\n"
	         "  'z'\r\n");
	assert_names("os f C ?f ?C y");
	assert_int_equal(def("f")->nparams, 2);
	assert_int_equal(def("C.m")->line, 6);
	assert_string_at(0, "v", 6);
	assert_string_at(1, "crlf", 7);
	assert_string_at(2, "z", 8);
	/* A tab reaches the next multiple of 8: from column 4, column 8. */
	parse_ok("if x:\n"
	         "    a = 1\n"
	         "    if y:\n"
	         "    \tb = 2\n"
	         "    \tc = 3\n"
	         "d = 4\n");
	assert_names("a b c ?b ?c ?a d");
	/* CPython's TabError: a level must be the same with a tab counted as
	 * one space, on the same level, an indent and a dedent alike. */
	parse_err("if x:\n\ta = 1\n        b = 2\n", AP_EINPUT,
	          "line 3: inconsistent use of tabs and spaces in indentation");
	parse_err("if x:\n        a = 1\n\tb = 2\n", AP_EINPUT,
	          "line 3: inconsistent use of tabs and spaces in indentation");
	parse_err("if x:\n    if y:\n\tb = 1\n", AP_EINPUT,
	          "line 3: inconsistent use of tabs and spaces in indentation");
	parse_err("if x:\n\tif y:\n\t\tb = 1\n        c = 2\n", AP_EINPUT,
	          "line 4: inconsistent use of tabs and spaces in indentation");
	parse_err("def f():\n\tx = 1\n        return x\n", AP_EINPUT,
	          "line 3: inconsistent use of tabs and spaces in indentation");
}

/* A form feed in the leading whitespace sets the column back to 0 (CPython's
 * tokenizer does, for Emacs users); elsewhere it is a space. The nesting
 * below is what ast.parse gives. */
static void test_form_feeds(void **state)
{
	(void)state;
	/* Before the indentation: the line stays in the block. */
	parse_ok("class C:\n"
	         "    def m(self): pass\n"
	         "\f    def n(self): pass\n"
	         "\f\n"
	         "  \f  # a comment line after one\n"
	         "    def o(self): pass\n");
	assert_names("C");
	assert_int_equal(def("C.n")->line, 3);
	assert_int_equal(def("C.o")->line, 6);
	/* After it: column 0, so the def leaves the class, and a statement
	 * leaves a function body the skimmer reads. */
	parse_ok("class C:\n"
	         "    def m(self): pass\n"
	         "    \fdef n(self): pass\n"
	         "def f():\n"
	         "    x = 1\n"
	         "    \fy = 2\n"
	         "\fdef g(a,\n"
	         "\f b): return 1 \f+ 2\f\n");
	assert_names("C n f y g");
	assert_int_equal(def("n")->line, 3);
	assert_int_equal(def("g")->nparams, 2);
	/* Spaces, then a form feed, then two: column 2, no level. */
	parse_err("if x:\n    a = 1\n  \f  b = 2\n", AP_EINPUT,
	          "line 3: unindent does not match any outer indentation level");
	parse_ok("if x:\n\t\f\tb = 1\n");
	assert_names("b ?b");
}

/* The start of each line of a text, found a byte at a time: what
 * ap_py_line_start must agree with, its 64-byte steps included. */
static size_t line_start_bytewise(const char *s, size_t at, size_t n, unsigned line)
{
	for (unsigned k = 1; k < line && at < n; at++)
		if (s[at] == '\n' || s[at] == '\r') {
			k++;
			at += s[at] == '\r' && at + 1 < n && s[at + 1] == '\n';
		}
	return at;
}

static void test_line_start(void **state)
{
	/* Texts of every mix: long lines, no CR, CRLFs that a step splits. */
	static const char *const alphabets[] = {"ab\n\r", "abc\n", "a\r\n", "aaaaaaaaaaaaaaa\n"};
	char text[200];
	unsigned seed = 7;

	(void)state;
	assert_int_equal(ap_py_line_start("a\nb\r\nc\rd", 0, 8, 4), 7);
	assert_int_equal(ap_py_line_start("a\nb", 0, 3, 9), 3);
	for (int round = 0; round < 2000; round++) {
		const char *abc = alphabets[round % 4];
		size_t n = (size_t)(round % 199) + 1;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			text[i] = abc[(seed >> 16) % strlen(abc)];
		}
		for (unsigned line = 1; line <= n + 2; line++)
			assert_int_equal(ap_py_line_start(text, 0, n, line),
			                 line_start_bytewise(text, 0, n, line));
	}
}

/* CPython's universal newlines: a lone CR ends a line as LF does, and lines
 * are numbered so (the lines below are what ast.parse gives). */
static void test_lone_cr(void **state)
{
	(void)state;
	/* The comment ends at the CR: the def after it is the one that binds. */
	parse_ok("def f(a):\n"
	         "    pass\n"
	         "# old: def f(q)\rdef f(z, scale):\n"
	         "    return None\n");
	assert_names("f f");
	assert_int_equal(def("f")->line, 4);
	assert_param(def("f"), 0, "z", AP_PY_POS, false);
	assert_int_equal(binding("f")->line, 4);
	/* CR CR, CR CRLF and a body indented after a CR. */
	parse_ok("x = 1\r\rdef g():\r  pass\r\r\r\ny = 2\r");
	assert_names("x g y");
	assert_int_equal(def("g")->line, 3);
	assert_int_equal(binding("y")->line, 7);
	/* In a triple-quoted string a CR is a line end, and its value holds LF;
	 * a backslash before a CR continues the line; brackets span a CR. */
	parse_ok("s = '''a\rb'''\r"
	         "t = 'c' + \\\r 'd'\r"
	         "u = (1,\r 2)\r\n"
	         "def h(): pass\n");
	assert_string_at(0, "a\nb", 1);
	assert_string_at(1, "c", 3);
	assert_string_at(2, "d", 4);
	assert_int_equal(binding("u")->line, 5);
	assert_int_equal(def("h")->line, 7);
	/* A single-quoted string does not run on past a CR. */
	parse_err("x = 'ab\rc'\n", AP_EINPUT, "line 1: unterminated string");
}

static void test_simple_statements(void **state)
{
	(void)state;
	parse_ok("a = 1; b = 2;\n"
	         "if x: c = 3; d = 4\n"
	         "else: e = 5\n"
	         "while y: f = 6\n"
	         "for g in z: h = 7\n"
	         "with q as r: s = 8\n"
	         "try: t = g()\n"
	         "except E: u = 10\n"
	         "finally: v = 11\n");
	/* What the arms of if, while, for and try bind is unknown after them
	 * (they may run either way); with's and finally's is not. */
	assert_names("a b c d e ?c ?d ?e f ?f g h ?g ?h r s ?t u ?u v");
	assert_int_equal(binding("u")->kind, AP_PY_BIND_UNKNOWN);
	assert_string_equal(binding("u")->why,
	                    "it is bound differently by the ways the `try` at line 7 may run");
	assert_int_equal(binding("v")->kind, AP_PY_BIND_OTHER);
}

/* --- Indentation ---------------------------------------------------------- */

static void test_indentation(void **state)
{
	(void)state;
	parse_ok("if a:\n"
	         "    if b:\n"
	         "\n"
	         "            # a comment at any indentation\n"
	         "      \n"
	         "            x = [1,\n"
	         "  2,\n"
	         "                    3]\n"
	         "    y = 1\n"
	         "# column 0 comment\n"
	         "        # deeper comment\n"
	         "    z = 2\n"
	         "w = 3\n");
	assert_names("x ?x y z ?y ?z w");
	assert_int_equal(binding("w")->line, 13);
	parse_err("if a:\n"
	          "        x = 1\n"
	          "    y = 2\n",
	          AP_EINPUT, "line 3: unindent does not match any outer indentation level");
	parse_err("x = 1\n"
	          "    y = 2\n",
	          AP_EINPUT, "line 2: unexpected indent");
	parse_err("if a:\n"
	          "x = 1\n",
	          AP_EINPUT, "line 2: expected an indented block");
	parse_err("def f():\n"
	          "return 1\n",
	          AP_EINPUT, "line 2: expected an indented block");
}

/* --- Module-level compound statements ------------------------------------- */

static void test_compound(void **state)
{
	(void)state;
	parse_ok("if TYPE_CHECKING:\n"
	         "    from typing import List\n"
	         "elif sys.version_info >= (3, 9):\n"
	         "    List = list\n"
	         "else:\n"
	         "    def List(): pass\n"
	         "try:\n"
	         "    from ._ext import fast\n"
	         "except ImportError:\n"
	         "    try:\n"
	         "        import slow as fast\n"
	         "    except Exception:\n"
	         "        if x:\n"
	         "            class fast: pass\n"
	         "else:\n"
	         "    ok = True\n"
	         "finally:\n"
	         "    done = 1\n"
	         "with lock:\n"
	         "    for i in range(3):\n"
	         "        while cond:\n"
	         "            from .m import w\n"
	         "        else:\n"
	         "            w2 = 0\n"
	         "    else:\n"
	         "        w3 = 0\n"
	         "async def co(): pass\n");
	/* An UNKNOWN where the ways disagree, once: nested statements leave it
	 * last. A loop's else runs once the loop ends (no break). */
	assert_names("List List List ?List ^_ext fast fast fast ?fast ok ?_ext ?ok done "
	             "i ^m w ?m ?w w2 w3 co");
	assert_int_equal(mod->bindings[0].kind, AP_PY_BIND_FROM);
	assert_int_equal(mod->bindings[1].kind, AP_PY_BIND_ALIAS);
	assert_int_equal(mod->bindings[2].kind, AP_PY_BIND_DEF);
	assert_int_equal(mod->bindings[4].kind, AP_PY_BIND_SUBMODULE);
	assert_string_equal(mod->bindings[4].module, "._ext");
	assert_int_equal(mod->bindings[6].kind, AP_PY_BIND_IMPORT);
	assert_int_equal(mod->bindings[7].kind, AP_PY_BIND_CLASS);
	assert_string_equal(mod->bindings[8].why,
	                    "it is bound differently by the ways the `if` at line 13 may run");
	assert_int_equal(ap_py_lookup(mod, "fast")->kind, AP_PY_BIND_UNKNOWN);
	assert_int_equal(ap_py_lookup(mod, "done")->kind, AP_PY_BIND_OTHER);
	assert_null(ap_py_lookup(mod, "nothing"));
	assert_int_equal(binding("co")->kind, AP_PY_BIND_DEF);
	assert_string_equal(mod->defs[binding("co")->def_index].qualname, "co");
}

static void test_false_names(void **state)
{
	static const char *const falses[] = {"AITER_TRITON_ONLY", "AITER_AOT_IMPORT", NULL};
	const char *src = "if AITER_TRITON_ONLY:\n"
	                  "    from .triton import *\n"
	                  "    def mode(): return 't'\n"
	                  "elif (AITER_AOT_IMPORT):\n"
	                  "    from .aot import a\n"
	                  "else:\n"
	                  "    from .ops import a, b\n"
	                  "    def mode(): return 'ops'\n"
	                  "if not AITER_TRITON_ONLY:\n"
	                  "    c = 1\n"
	                  "else:\n"
	                  "    d = 1\n"
	                  "if not (AITER_AOT_IMPORT):\n"
	                  "    e = 1\n"
	                  "elif other:\n"
	                  "    f = 1\n"
	                  "if AITER_TRITON_ONLY or other:\n"
	                  "    g = 1\n"
	                  "if x:\n"
	                  "    if AITER_AOT_IMPORT:\n"
	                  "        h = 1\n"
	                  "    i = 1\n"
	                  "class K:\n"
	                  "    if AITER_TRITON_ONLY:\n"
	                  "        def m(self): pass\n";
	(void)state;
	assert_int_equal(parse_n(src, strlen(src), falses), 0);
	assert_names("^ops a b mode c e g ?g i ?i K");
	assert_string_equal(binding("a")->module, ".ops");
	/* Defs in dead arms are found but bind nothing. */
	assert_int_equal(mod->ndefs, 3);
	assert_false(mod->defs[0].live);
	assert_true(mod->defs[1].live);
	assert_int_equal(def("mode")->line, 8);
	assert_false(mod->defs[2].live);
	assert_null(ap_py_find_def(mod, "K.m"));
	/* Without options every arm counts. */
	assert_int_equal(parse_n(src, strlen(src), NULL), 0);
	assert_names("^triton * mode ^aot a ^ops a b mode ?triton ?mode ?aot ?a ?ops ?b c d ?c ?d e "
	             "f ?e ?f g ?g h ?h i ?i K");
	assert_int_equal(def("mode")->line, 8);
	assert_non_null(ap_py_find_def(mod, "K.m"));
	teardown(NULL);
	assert_int_equal(ap_py_parse(&mod, "x = 1\n", 6, NULL), 0);
	assert_names("x");
}

/* Conditions CPython knows before running the module are read as it reads
 * them, with or without options; their skipped arms are still parsed. */
static void test_known_conditions(void **state)
{
	const char *src = "from typing import TYPE_CHECKING\n"
	                  "import typing\n"
	                  "def f(a, b): pass\n"
	                  "if TYPE_CHECKING:\n"
	                  "    def f(a): ...\n"
	                  "    from .stubs import s\n"
	                  "    x = \"\"\"\n"
	                  "  unindented\"\"\"\n"
	                  "else:\n"
	                  "    t = 1\n"
	                  "if (typing.TYPE_CHECKING):\n"
	                  "    u = 1\n"
	                  "elif not TYPE_CHECKING:\n"
	                  "    v = 1\n"
	                  "else:\n"
	                  "    w = 1\n"
	                  "if False: a1 = 1\n"
	                  "elif 0:\n"
	                  "    a2 = 1\n"
	                  "elif None:\n"
	                  "    a3 = 1\n"
	                  "elif True:\n"
	                  "    a4 = 1\n"
	                  "else:\n"
	                  "    a5 = 1\n"
	                  "if 1:\n"
	                  "    b1 = 1\n"
	                  "elif other:\n"
	                  "    b2 = 1\n"
	                  "if not (None):\n"
	                  "    c1 = 1\n"
	                  "else:\n"
	                  "    c2 = 1\n"
	                  "if not True:\n"
	                  "    d1 = 1\n"
	                  "elif (x := 2):\n"
	                  "    d2 = 1\n"
	                  "class K:\n"
	                  "    if TYPE_CHECKING:\n"
	                  "        def m(self): pass\n"
	                  "    def n(self): pass\n";
	(void)state;
	parse_ok(src);
	assert_names("TYPE_CHECKING typing f t v a4 b1 c1 x d2 ?d2 K");
	assert_int_equal(def("f")->line, 3);
	assert_int_equal(def("f")->nparams, 2);
	assert_false(mod->defs[1].live);
	assert_null(ap_py_find_def(mod, "K.m"));
	assert_non_null(ap_py_find_def(mod, "K.n"));
	/* Other spellings are not the constants: every arm counts; not, and
	 * and or combine what is known (tests/unit/python-cond.c). */
	parse_ok("if 00: a = 1\n"
	         "if 0.0: b = 1\n"
	         "if not not False: c = 1\n"
	         "if False or x: d = 1\n"
	         "if -1: e = 1\n");
	assert_names("a ?a b ?b d ?d e ?e");
}

/* TYPE_CHECKING is known only when nothing else may have bound it. */
static void test_type_checking_bindings(void **state)
{
	static const char *const cases[][2] = {
		{"from typing import TYPE_CHECKING\nfrom typing import *\n"
		 "if TYPE_CHECKING: a = 1\n", "TYPE_CHECKING *"},
		{"from typing import TYPE_CHECKING\nif x:\n    from typing import TYPE_CHECKING\n"
		 "if TYPE_CHECKING: a = 1\n", "TYPE_CHECKING TYPE_CHECKING"},
		{"import typing\nif typing.TYPE_CHECKING: a = 1\n", "typing"},
		/* not imported, bound otherwise, or maybe: unknown */
		{"if TYPE_CHECKING: a = 1\n", "a ?a"},
		{"from typing_extensions import TYPE_CHECKING\nif TYPE_CHECKING: a = 1\n",
		 "TYPE_CHECKING a ?a"},
		{"from .typing import TYPE_CHECKING\nif TYPE_CHECKING: a = 1\n",
		 "^typing TYPE_CHECKING a ?a"},
		{"from typing import TYPE_CHECKING as TC\nif TC: a = 1\n", "TC"},
		{"from typing import Any as TYPE_CHECKING\nif TYPE_CHECKING: a = 1\n",
		 "TYPE_CHECKING a ?a"},
		{"from typing import TYPE_CHECKING\nTYPE_CHECKING = True\n"
		 "if TYPE_CHECKING: a = 1\n", "TYPE_CHECKING TYPE_CHECKING a ?a"},
		{"TYPE_CHECKING = True\nif x:\n    from typing import TYPE_CHECKING\n"
		 "if TYPE_CHECKING: a = 1\n", "TYPE_CHECKING TYPE_CHECKING ?TYPE_CHECKING a ?a"},
		{"from typing import TYPE_CHECKING\nfrom .m import *\nif TYPE_CHECKING: a = 1\n",
		 "TYPE_CHECKING ^m * a ?a"},
		{"import typing\nif TYPE_CHECKING: a = 1\n", "typing a ?a"},
		{"import typing as t\nif t.TYPE_CHECKING: a = 1\n", "t"},
		{"import typing.re\nif typing.TYPE_CHECKING: a = 1\n", "typing a ?a"},
		{"import os as typing\nif typing.TYPE_CHECKING: a = 1\n", "typing a ?a"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		parse_ok(cases[i][0]);
		assert_names(cases[i][1]);
	}
}

/* --- Defs ----------------------------------------------------------------- */

static void test_def_params(void **state)
{
	const ap_py_def *d;

	(void)state;
	parse_ok("@decorator\n"
	         "@other(1, key=(2, 3),\n"
	         "       more=[4,\n"
	         "             5])\n"
	         "def f(self, a: int, b: Optional[Tuple[int, int]] = None,\n"
	         "      c: 'Dict[str, int]' = {'k': (1, 2)}, d=lambda x, y: (x, y),\n"
	         "      e=\"a, b) c\", *args: int, g, h=f(1, (2, 3)), **kw: Any,\n"
	         ") -> Optional[Tuple[int, int]]:\n"
	         "    return a\n"
	         "async def g(a, /, b, *, c=1, d): pass\n"
	         "def h(a, b=2, /, c=3, *d, e, **f): return a\n"
	         "def i(): ...\n"
	         "def j(x,): return x\n"
	         "def k[T](x: T) -> T: return x\n");
	d = def("f");
	assert_int_equal(d->line, 5);
	assert_int_equal(d->nparams, 10);
	assert_param(d, 0, "self", AP_PY_POS, false);
	assert_param(d, 1, "a", AP_PY_POS, false);
	assert_param(d, 2, "b", AP_PY_POS, true);
	assert_param(d, 3, "c", AP_PY_POS, true);
	assert_param(d, 4, "d", AP_PY_POS, true);
	assert_param(d, 5, "e", AP_PY_POS, true);
	assert_param(d, 6, "args", AP_PY_VARARGS, false);
	assert_param(d, 7, "g", AP_PY_KWONLY, false);
	assert_param(d, 8, "h", AP_PY_KWONLY, true);
	assert_param(d, 9, "kw", AP_PY_VARKW, false);
	d = def("g");
	assert_int_equal(d->nparams, 4);
	assert_param(d, 0, "a", AP_PY_POSONLY, false);
	assert_param(d, 1, "b", AP_PY_POS, false);
	assert_param(d, 2, "c", AP_PY_KWONLY, true);
	assert_param(d, 3, "d", AP_PY_KWONLY, false);
	d = def("h");
	assert_int_equal(d->nparams, 6);
	assert_param(d, 0, "a", AP_PY_POSONLY, false);
	assert_param(d, 1, "b", AP_PY_POSONLY, true);
	assert_param(d, 2, "c", AP_PY_POS, true);
	assert_param(d, 3, "d", AP_PY_VARARGS, false);
	assert_param(d, 4, "e", AP_PY_KWONLY, false);
	assert_param(d, 5, "f", AP_PY_VARKW, false);
	assert_int_equal(def("i")->nparams, 0);
	assert_int_equal(def("j")->nparams, 1);
	assert_int_equal(def("k")->nparams, 1);
	assert_names("f g h i j k");
	/* Strings in decorators, annotations and defaults are strings in code. */
	assert_string_at(0, "Dict[str, int]", 6);
	assert_string_at(1, "k", 6);
	assert_string_at(2, "a, b) c", 7);
}

static void test_methods_and_nesting(void **state)
{
	(void)state;
	parse_ok("def outer(x):\n"
	         "    def inner(y):\n"
	         "        def deepest(): pass\n"
	         "        return y\n"
	         "    class Local:\n"
	         "        def m(self): pass\n"
	         "    return inner\n"
	         "class C(Base, metaclass=M):\n"
	         "    attr = 1\n"
	         "    def m(self, a=1): pass\n"
	         "    if FLAG:\n"
	         "        def n(self): pass\n"
	         "    else:\n"
	         "        try:\n"
	         "            def n(self, b): pass\n"
	         "        except E:\n"
	         "            pass\n"
	         "    class Inner:\n"
	         "        def deep(self): pass\n"
	         "    @property\n"
	         "    def p(self): return 1\n"
	         "    async def q(self): pass\n"
	         "if x:\n"
	         "    class D:\n"
	         "        def m(self): pass\n");
	assert_names("outer C D ?D");
	assert_null(ap_py_find_def(mod, "inner"));
	assert_null(ap_py_find_def(mod, "deepest"));
	assert_null(ap_py_find_def(mod, "m"));
	assert_null(ap_py_find_def(mod, "Local.m"));
	assert_int_equal(def("C.m")->nparams, 2);
	/* The def that binds last. */
	assert_int_equal(def("C.n")->line, 15);
	assert_int_equal(def("C.n")->nparams, 2);
	assert_int_equal(def("C.Inner.deep")->line, 19);
	assert_int_equal(def("C.p")->line, 21);
	assert_non_null(def("C.q"));
	assert_non_null(def("D.m"));
	assert_int_equal(mod->ndefs, 8);
}

/* --- Bindings ------------------------------------------------------------- */

static void test_bindings(void **state)
{
	(void)state;
	parse_ok("import os, a.b.c\n"
	         "import x.y as z, d\n"
	         "from .ops.attention import (a1, b1 as c1,\n"
	         "    d1,)\n"
	         "from . import e1\n"
	         "from .. import f1 as g1\n"
	         "from ...pkg import h1\n"
	         "from aiter.ops import *\n"
	         "alias = os\n"
	         "m = n = other\n"
	         "ann: int = 3\n"
	         "ann_alias: type = other\n"
	         "bare: int\n"
	         "p, (q, *r) = 1, (2, 3)\n"
	         "[s, t] = u\n"
	         "aug += 1\n"
	         "obj.attr = 1\n"
	         "obj[0] = 1\n"
	         "global gl\n"
	         "del alias\n"
	         "fn = lambda k=1: k\n"
	         "if (wal := compute()):\n"
	         "    pass\n"
	         "print(kw=1)\n"
	         "def f():\n"
	         "    inside = 1\n"
	         "    import inner\n"
	         "class C:\n"
	         "    cls_attr = 1\n");
	assert_binding(0, AP_PY_BIND_IMPORT, "os", "os", NULL, 1);
	assert_binding(1, AP_PY_BIND_IMPORT, "a", "a.b.c", NULL, 1);
	assert_binding(2, AP_PY_BIND_IMPORT, "z", "x.y", NULL, 2);
	assert_binding(3, AP_PY_BIND_IMPORT, "d", "d", NULL, 2);
	/* In a package's __init__, loading .ops binds it, before the names. */
	assert_binding(4, AP_PY_BIND_SUBMODULE, "ops", ".ops", NULL, 3);
	assert_binding(5, AP_PY_BIND_FROM, "a1", ".ops.attention", "a1", 3);
	assert_binding(6, AP_PY_BIND_FROM, "c1", ".ops.attention", "b1", 3);
	assert_binding(7, AP_PY_BIND_FROM, "d1", ".ops.attention", "d1", 4);
	assert_binding(8, AP_PY_BIND_FROM, "e1", ".", "e1", 5);
	assert_binding(9, AP_PY_BIND_FROM, "g1", "..", "f1", 6);
	assert_binding(10, AP_PY_BIND_FROM, "h1", "...pkg", "h1", 7);
	assert_binding(11, AP_PY_BIND_STAR, NULL, "aiter.ops", NULL, 8);
	assert_binding(12, AP_PY_BIND_ALIAS, "alias", NULL, "os", 9);
	assert_binding(13, AP_PY_BIND_ALIAS, "m", NULL, "other", 10);
	assert_binding(14, AP_PY_BIND_ALIAS, "n", NULL, "other", 10);
	assert_binding(15, AP_PY_BIND_OTHER, "ann", NULL, NULL, 11);
	assert_binding(16, AP_PY_BIND_ALIAS, "ann_alias", NULL, "other", 12);
	assert_binding(17, AP_PY_BIND_OTHER, "p", NULL, NULL, 14);
	assert_binding(18, AP_PY_BIND_OTHER, "q", NULL, NULL, 14);
	assert_binding(19, AP_PY_BIND_OTHER, "r", NULL, NULL, 14);
	assert_binding(20, AP_PY_BIND_OTHER, "s", NULL, NULL, 15);
	assert_binding(21, AP_PY_BIND_OTHER, "t", NULL, NULL, 15);
	assert_binding(22, AP_PY_BIND_OTHER, "aug", NULL, NULL, 16);
	assert_binding(23, AP_PY_BIND_DEL, "alias", NULL, NULL, 20);
	/* A lambda is a def of the name, its signature read from it. */
	assert_binding(24, AP_PY_BIND_DEF, "fn", NULL, NULL, 21);
	assert_true(mod->defs[mod->bindings[24].def_index].lambda);
	assert_param(def("fn"), 0, "k", AP_PY_POS, true);
	/* a walrus binds as an assignment: what a call returns */
	assert_binding(25, AP_PY_BIND_UNKNOWN, "wal", NULL, NULL, 22);
	assert_binding(26, AP_PY_BIND_DEF, "f", NULL, NULL, 25);
	assert_binding(27, AP_PY_BIND_CLASS, "C", NULL, NULL, 28);
	assert_int_equal(mod->nbindings, 28);
	assert_null(binding("bare"));
	assert_null(binding("gl"));
	assert_null(binding("inside"));
	/* STAR bindings have no name: lookup passes them by. */
	assert_null(binding("*"));
	parse_ok("import functools\n"
	         "g = functools.partial(f, 1)\n"
	         "h = make()(x)\n"
	         "k = (make)\n"
	         "del (g, [h]), k.attr, k[0]\n");
	assert_names("functools g ?h k -g -h");
	assert_binding(1, AP_PY_BIND_PARTIAL, "g", NULL, "f", 2);
	assert_int_equal(mod->bindings[1].args->positional, 1);
	assert_string_equal(mod->bindings[2].why, "it is bound to what the call at line 3 returns");
	/* (make) is make */
	assert_binding(3, AP_PY_BIND_ALIAS, "k", NULL, "make", 4);
	/* A def run at import may rebind what it declares global. */
	parse_ok("def setup():\n"
	         "    global impl, other  # both\n"
	         "    def inner():\n"
	         "        global deep\n"
	         "    impl = 1\n"
	         "impl = 0\n"
	         "x = setup()\n"
	         "setup()\n"
	         "obj.setup()\n"
	         "impl = 2\n"
	         "setup\n");
	assert_names("setup impl ?impl ?other ?deep ?x impl");
	assert_string_equal(mod->bindings[2].why,
	                    "it may be rebound by the call of setup at line 7, which declares it "
	                    "global");
}

/* The member of the class at class_line named name that binds last. */
static const ap_py_binding *member(unsigned class_line, const char *name)
{
	for (size_t i = mod->nmembers; i-- > 0;)
		if (mod->members[i].class_line == class_line && strcmp(mod->members[i].name, name) == 0)
			return &mod->members[i];
	return NULL;
}

/* Lambdas, functools.partial, tuple targets and walrus values; what class
 * bodies bind. */
static void test_callables(void **state)
{
	const ap_py_def *d;

	(void)state;
	parse_ok("f = lambda a, b=1, /, c=lambda x, y: {x: y}, *args, d, e=(1, 2), **kw: a\n"
	         "g = lambda: 0\n"
	         "h = (lambda *, k: k)\n"
	         "t = lambda: 0, 1\n"
	         "v = lambda: 0 if x else 1\n"
	         "a, b = b, a\n"
	         "[x, y] = [0, (lambda zz: zz)]\n"
	         "(p, (q, r)), s = (1, (f, 2)), g\n"
	         "m, n = f, g, h\n"
	         "o, *w = f, g\n"
	         "[c] = [f for _ in z]\n"
	         "[c2] = (f)\n"
	         "(w1 := lambda q, /: q)\n"
	         "(w2 := f)\n"
	         "z = [(w3 := f) for _ in x]\n"
	         "l2 = lambda: (w4 := g)\n");
	/* a walrus binds before the statement's targets */
	assert_names("f g h t v a b x y p q r s m n o w c c2 w1 w2 w3 z w4 l2");
	d = def("f");
	assert_true(d->lambda);
	assert_int_equal(d->line, 1);
	assert_int_equal(d->nparams, 7);
	assert_param(d, 0, "a", AP_PY_POSONLY, false);
	assert_param(d, 1, "b", AP_PY_POSONLY, true);
	assert_param(d, 2, "c", AP_PY_POS, true);
	assert_param(d, 3, "args", AP_PY_VARARGS, false);
	assert_param(d, 4, "d", AP_PY_KWONLY, false);
	assert_param(d, 5, "e", AP_PY_KWONLY, true);
	assert_param(d, 6, "kw", AP_PY_VARKW, false);
	assert_int_equal(def("g")->nparams, 0);
	assert_param(def("h"), 0, "k", AP_PY_KWONLY, false);
	/* a tuple of a lambda and 1 */
	assert_binding(3, AP_PY_BIND_OTHER, "t", NULL, NULL, 4);
	assert_binding(4, AP_PY_BIND_DEF, "v", NULL, NULL, 5);
	/* both read before either is bound */
	assert_binding(5, AP_PY_BIND_ALIAS, "a", NULL, "b", 6);
	assert_binding(6, AP_PY_BIND_ALIAS, "b", NULL, "a", 6);
	assert_int_equal(mod->bindings[5].value_at, 5);
	assert_int_equal(mod->bindings[6].value_at, 5);
	assert_binding(7, AP_PY_BIND_OTHER, "x", NULL, NULL, 7);
	assert_binding(8, AP_PY_BIND_DEF, "y", NULL, NULL, 7);
	assert_param(def("y"), 0, "zz", AP_PY_POS, false);
	assert_binding(10, AP_PY_BIND_ALIAS, "q", NULL, "f", 8);
	assert_binding(12, AP_PY_BIND_ALIAS, "s", NULL, "g", 8);
	/* counts that differ, a starred target, a comprehension: values */
	assert_binding(13, AP_PY_BIND_OTHER, "m", NULL, NULL, 9);
	assert_binding(16, AP_PY_BIND_OTHER, "w", NULL, NULL, 10);
	assert_binding(17, AP_PY_BIND_OTHER, "c", NULL, NULL, 11);
	/* (f) is f, which the target unpacks */
	assert_binding(18, AP_PY_BIND_OTHER, "c2", NULL, NULL, 12);
	assert_binding(19, AP_PY_BIND_DEF, "w1", NULL, NULL, 13);
	assert_param(def("w1"), 0, "q", AP_PY_POSONLY, false);
	assert_binding(20, AP_PY_BIND_ALIAS, "w2", NULL, "f", 14);
	assert_int_equal(mod->bindings[20].value_at, 20);
	/* a walrus in a comprehension or a lambda's body: its value not read */
	assert_binding(21, AP_PY_BIND_OTHER, "w3", NULL, NULL, 15);
	assert_binding(23, AP_PY_BIND_OTHER, "w4", NULL, NULL, 16);

	/* a comprehension beside a walrus, not around it */
	parse_ok("(w := lambda a=[x for x in y]: a), [(v := f) for _ in y]\n");
	assert_names("w v");
	assert_binding(0, AP_PY_BIND_DEF, "w", NULL, NULL, 1);
	assert_binding(1, AP_PY_BIND_OTHER, "v", NULL, NULL, 1);

	/* functools.partial: only while the names are bound by the import */
	parse_ok("import functools\n"
	         "from functools import partial\n"
	         "p1 = functools.partial(f, 1, (2, 3), k=lambda a, b: 0, j=2)\n"
	         "p2 = partial(g)\n"
	         "p3 = functools.partial(f, *a)\n"
	         "p4 = functools.partial(f.g, 1)\n"
	         "from x import *\n"
	         "p5 = partial(f, 1)\n"
	         "functools = None\n"
	         "p6 = functools.partial(f)\n");
	assert_names("functools partial p1 p2 ?p3 ?p4 * p5 functools ?p6");
	assert_binding(2, AP_PY_BIND_PARTIAL, "p1", NULL, "f", 3);
	assert_int_equal(mod->bindings[2].args->positional, 2);
	assert_int_equal(mod->bindings[2].args->nkeywords, 2);
	assert_string_equal(mod->bindings[2].args->keywords[0], "k");
	assert_string_equal(mod->bindings[2].args->keywords[1], "j");
	assert_string_equal(mod->bindings[2].args->callee, "functools");
	assert_false(mod->bindings[2].args->after_star);
	assert_string_equal(mod->bindings[3].args->callee, "partial");
	assert_int_equal(mod->bindings[3].args->positional, 0);
	assert_true(mod->bindings[7].args->after_star);

	/* Class bodies bind members; builtin decorators outermost say what
	 * getattr gives. */
	parse_ok("from typing import TYPE_CHECKING\n"
	         "class A(Base):\n"
	         "    x = 1\n"
	         "    @classmethod\n"
	         "    def cm(cls, a): pass\n"
	         "    @staticmethod\n"
	         "    def sm(a): pass\n"
	         "    @property\n"
	         "    def p(self): pass\n"
	         "    @p.setter\n"
	         "    def p(self, v): pass\n"
	         "    @functools.lru_cache\n"
	         "    @classmethod\n"
	         "    def late(cls): pass\n"
	         "    lam = lambda self, y: y\n"
	         "    del x\n"
	         "    class B:\n"
	         "        def m(self): pass\n"
	         "    if FLAG:\n"
	         "        def maybe(self): pass\n"
	         "    if TYPE_CHECKING:\n"
	         "        def stub(self): pass\n"
	         "    for it in ():\n"
	         "        pass\n"
	         "property = 1\n"
	         "@deco\n"
	         "class C:\n"
	         "    @property\n"
	         "    def q(self): pass\n");
	assert_names("TYPE_CHECKING A property C");
	assert_true(mod->bindings[1].inherits);
	assert_null(mod->bindings[1].decorator);
	assert_false(mod->bindings[3].inherits);
	assert_string_equal(mod->bindings[3].decorator, "deco");
	assert_int_equal(member(2, "x")->kind, AP_PY_BIND_DEL);
	assert_int_equal(def("A.cm")->method, AP_PY_CLASSMETHOD);
	assert_int_equal(def("A.sm")->method, AP_PY_STATICMETHOD);
	assert_int_equal(def("A.p")->method, AP_PY_PROPERTY);
	assert_int_equal(def("A.p")->line, 11);
	assert_int_equal(def("A.late")->method, AP_PY_FUNCTION);
	assert_int_equal(def("A.late")->ndecorators, 1);
	assert_string_equal(def("A.late")->decorators[0].name, "classmethod");
	assert_int_equal(member(2, "lam")->kind, AP_PY_BIND_DEF);
	assert_true(def("A.lam")->lambda);
	assert_int_equal(member(2, "B")->kind, AP_PY_BIND_CLASS);
	assert_int_equal(member(17, "m")->kind, AP_PY_BIND_DEF);
	assert_true(member(2, "maybe")->maybe);
	assert_false(member(2, "lam")->maybe);
	assert_null(member(2, "stub"));
	assert_true(member(2, "it")->maybe);
	/* after `property = 1` the name is the module's */
	assert_int_equal(def("C.q")->method, AP_PY_FUNCTION);
	assert_string_equal(def("C.q")->decorators[0].name, "property");
}

/* A long value keeps no tokens past PART_KEEP; a long import or __all__
 * keeps them all. */
static void test_long_statements(void **state)
{
	ap_buf b = AP_BUF_INIT;

	(void)state;
	ap_buf_puts(&b, "big = [");
	for (int i = 0; i < 20000; i++)
		ap_buf_printf(&b, "(%d, 'v%d'), ", i, i);
	ap_buf_puts(&b, "]\nfrom m import (");
	for (int i = 0; i < 5000; i++)
		ap_buf_printf(&b, "n%d, ", i);
	ap_buf_puts(&b, ")\n__all__ = [");
	for (int i = 0; i < 5000; i++)
		ap_buf_printf(&b, "'n%d', ", i);
	ap_buf_puts(&b, "]\nafter = big\n");
	parse_ok(b.data);
	assert_int_equal(mod->nbindings, 1 + 5000 + 1 + 1);
	assert_string_equal(mod->bindings[5000].name, "n4999");
	assert_true(mod->has_all);
	assert_int_equal(mod->nall, 5000);
	assert_string_equal(mod->all[4999], "n4999");
	assert_int_equal(binding("after")->kind, AP_PY_BIND_ALIAS);
	assert_int_equal(mod->nstrings, 20000 + 5000);
	ap_buf_free(&b);
}

/* --- __all__ -------------------------------------------------------------- */

/* has_all true, and the names in order: "a b c". */
static void assert_names_all(const char *want)
{
	ap_buf got = AP_BUF_INIT;

	assert_true(mod->has_all);
	for (size_t i = 0; i < mod->nall; i++)
		ap_buf_printf(&got, "%s%s", i ? " " : "", mod->all[i]);
	ap_buf_putc(&got, '\0');
	assert_string_equal(got.data, want);
	ap_buf_free(&got);
}

static void assert_unknown_all(unsigned line, const char *why)
{
	assert_false(mod->has_all);
	assert_int_equal(mod->nall + mod->nall_refs, 0);
	assert_non_null(mod->all_why);
	assert_string_equal(mod->all_why, why);
	assert_int_equal(mod->all_line, line);
}

static void assert_all_ref(size_t i, const char *name, bool attr, size_t upto, unsigned line)
{
	assert_true(i < mod->nall_refs);
	assert_string_equal(mod->all_refs[i].name, name);
	assert_int_equal(mod->all_refs[i].attr, attr);
	assert_int_equal(mod->all_refs[i].upto, upto);
	assert_int_equal(mod->all_refs[i].line, line);
}

static void test_all(void **state)
{
	(void)state;
	parse_ok("x = 1\n");
	assert_false(mod->has_all);
	assert_int_equal(mod->nall, 0);

	parse_ok("__all__ = ['a', \"b\",\n"
	         "    'c' 'd',]\n"
	         "__all__ += ('e',)\n"
	         "__all__.extend(['f', 'g'])\n"
	         "__all__.append('h')\n"
	         "__all__ += ['i'] + ['j']\n"
	         "def f():\n"
	         "    __all__ = ['nope']\n");
	assert_true(mod->has_all);
	assert_int_equal(mod->nall, 9);
	assert_string_equal(mod->all[0], "a");
	assert_string_equal(mod->all[2], "cd");
	assert_string_equal(mod->all[3], "e");
	assert_string_equal(mod->all[6], "h");
	assert_string_equal(mod->all[8], "j");
	assert_non_null(binding("__all__"));

	parse_ok("__all__ = 'a', 'b'\n");
	assert_true(mod->has_all);
	assert_int_equal(mod->nall, 2);
	parse_ok("__all__ = ()\n");
	assert_true(mod->has_all);
	assert_int_equal(mod->nall, 0);

	/* What cannot be read leaves has_all false, with why and where: the
	 * names a star import takes are then unknown. */
	parse_ok("__all__ = ['a']\n"
	         "__all__ += [n for n in dir() if not n.startswith('_')]\n"
	         "__all__.append('b')\n");
	assert_unknown_all(2, "it is not made of str literals in lists or tuples, other "
	                      "modules' __all__, comprehensions over them and "
	                      "list/tuple/sorted/set() of them");
	parse_ok("__all__ = ['a']\n__all__.append()\n");
	assert_unknown_all(2, "__all__.append() of what is no str literal");
	parse_ok("__all__ = ['a']\n__all__.append(name)\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = make_all()\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = ('a')\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = [f'a']\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = 'ab'\n");
	assert_false(mod->has_all);
	/* CPython decodes the escape: "ab" */
	parse_ok("__all__ = ['a\\x62']\n");
	assert_false(mod->has_all);
	/* A later readable assignment starts over. */
	parse_ok("__all__ = list(x.y)\n"
	         "__all__ = ['z']\n");
	assert_true(mod->has_all);
	assert_int_equal(mod->nall, 1);
	assert_string_equal(mod->all[0], "z");
	assert_null(mod->all_why);
}

/* __all__'s names as `list` and `tuple` give and take them, each checked
 * against CPython 3.11. */
static void test_all_operations(void **state)
{
	(void)state;
	parse_ok("__all__ = ['a', 'b', 'a']\n__all__.remove('a')\n");
	assert_names_all("b a");
	parse_ok("__all__ = ['a']\n__all__.remove('b')\n");
	assert_unknown_all(2, "__all__.remove() of a name it does not hold (ValueError)");
	parse_ok("__all__ = ['a', 'b', 'c', 'd', 'e']\n"
	         "del __all__[-1]\n"
	         "del __all__[0:1], x\n"
	         "del __all__[5:]\n"
	         "del __all__[-10:1]\n");
	assert_names_all("c d");
	parse_ok("__all__ = ['a']\ndel __all__[3]\n");
	assert_unknown_all(2, "a del of __all__ past its end (IndexError)");
	parse_ok("__all__ = ['a']\ndel __all__[i]\n");
	assert_unknown_all(2, "a del of __all__ at an index that is no integer literal");
	parse_ok("__all__ = ['a', 'b']\ndel __all__[::2]\n");
	assert_false(mod->has_all);
	/* no __all__ at all: a star import takes the public names */
	parse_ok("__all__ = ['a']\ndel __all__\n");
	assert_false(mod->has_all);
	assert_null(mod->all_why);
	parse_ok("__all__ += ['a']\n");
	assert_unknown_all(1, "__all__ is added to before it is bound (NameError)");
	parse_ok("__all__ = ['a']\n__all__.insert(0, 'b')\n__all__.sort()\n"
	         "__all__.count('a')\n__all__.clear()\n__all__.append('c')\n");
	assert_names_all("c");
	parse_ok("__all__ = ['a']\n__all__.pop()\n");
	assert_unknown_all(2, "a method of __all__ the reader does not follow");
	parse_ok("__all__ = ['a']\n__all__.extend('b', 'c')\n");
	assert_unknown_all(2, "__all__.extend() of more than one argument (TypeError)");

	/* a tuple is no list */
	parse_ok("__all__ = ('a',)\n__all__ += ('b',)\n");
	assert_names_all("a b");
	parse_ok("__all__ = ['a']\n__all__ += ('b',)\n__all__.extend({'c'})\n");
	assert_names_all("a b c");
	parse_ok("__all__ = ('a',)\n__all__.append('b')\n");
	assert_unknown_all(2, "a method of __all__ its type lacks (AttributeError)");
	parse_ok("__all__ = ('a',)\n__all__ += ['b']\n");
	assert_unknown_all(2, "__all__ is added to what its type does not take (TypeError)");
	parse_ok("__all__ = ['a'] + ('b',)\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = {'a'} + {'b'}\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = {}\n");
	assert_false(mod->has_all);

	/* comprehensions over literals, list/tuple/sorted/set() of them */
	parse_ok("__all__ = [n for n in ('a', 'b')]\n"
	         "__all__ += sorted({'c'})\n"
	         "__all__ += list(name for name in ['d'])\n"
	         "__all__ = __all__ + tuple(['e']) + ['f']\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = [n for n in ('a', 'b')]\n"
	         "__all__ += sorted({'c'})\n"
	         "__all__ += list(name for name in ['d'])\n"
	         "__all__ = __all__ + list(['e']) + ['f']\n");
	assert_names_all("a b c d e f");
	parse_ok("__all__ = [n for n in ('a',) if n]\n");
	assert_false(mod->has_all);
	/* filters on the name alone, each as CPython tests it */
	parse_ok("__all__ = [n for n in ('a', 'zz', 'b', '_c') if n != 'zz']\n"
	         "__all__ = [n for n in __all__ + ['d'] if not n.startswith('_') if n not in ('b',)]\n"
	         "__all__ += [x for x in ['e', 'f'] if x == 'f'] + [x for x in ['g'] if x in ['g']]\n");
	assert_names_all("a d f g");
	parse_ok("from .m import __all__ as other\n"
	         "__all__ = [n for n in other if n != 'x']\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = [n for n in ('a',) if 'a' != n]\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = [n for n in ('a',) if n != y]\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = [m for n in ('a',)]\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = (n for n in ('a',))\n");
	assert_false(mod->has_all);
	parse_ok("list = tuple\n__all__ = list(('a',))\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = sorted(['b', 'a'], key=len)\n");
	assert_false(mod->has_all);

	/* a change in a block that may not run (a handler, when whether the
	 * import fails is not known) leaves it unknown */
	parse_ok("__all__ = ['a']\n"
	         "try:\n"
	         "    from .x import y\n"
	         "except ImportError:\n"
	         "    __all__ = []\n"
	         "    __all__.remove('a')\n");
	assert_unknown_all(6, "it is changed in a block that may not run on import");
}

/* Other modules' __all__ in this one's: kept for the resolver, with the
 * bindings that say what their names are. */
static void test_all_references(void **state)
{
	(void)state;
	parse_ok("from . import first\n"
	         "from .second import __all__ as _second\n"
	         "import aiter.ops.third as third\n"
	         "__all__ = first.__all__ + _second + [*third.sub.__all__, 'own']\n");
	assert_true(mod->has_all);
	assert_names_all("own");
	assert_int_equal(mod->nall_refs, 3);
	assert_all_ref(0, "first", true, 4, 4);
	assert_all_ref(1, "_second", false, 4, 4);
	assert_all_ref(2, "third.sub", true, 4, 4);

	parse_ok("from .x import __all__\n__all__ += ['z']\n");
	assert_names_all("z");
	assert_int_equal(mod->nall_refs, 1);
	assert_all_ref(0, "__all__", false, 2, 1);

	parse_ok("import y\n__all__ = ['a']\n__all__.extend(y.__all__)\n");
	assert_names_all("a");
	assert_all_ref(0, "y", true, 2, 3);
	/* which of them holds the name removed is not known */
	parse_ok("__all__ = ['q']\n__all__ += y.__all__\n__all__.remove('q')\n");
	assert_unknown_all(3, "a name is taken out of __all__ after another module's __all__ "
	                      "went in: which one goes is not known");
	/* an alias of __all__ is a name bound to another's */
	parse_ok("from .x import __all__ as _x\n__all__ = _x\n");
	assert_all_ref(0, "_x", false, 2, 2);
}

/* --- Strings and docstrings ----------------------------------------------- */

static void test_docstrings(void **state)
{
	(void)state;
	parse_ok("'''Module docstring.'''\n"
	         "x = 'one'\n"
	         "class C:\n"
	         "    \"class doc\" \" continued\"\n"
	         "    y = 'two'\n"
	         "    def m(self):\n"
	         "        '''method doc'''\n"
	         "        def inner():\n"
	         "            'inner doc'\n"
	         "            return 'three'\n"
	         "        class L:\n"
	         "            'local class doc'\n"
	         "        return 'four'\n"
	         "def f(): 'f doc'; return 'five'\n"
	         "def g():\n"
	         "    b'bytes are no docstring'\n"
	         "    'nor is a second string'\n"
	         "def h():\n"
	         "    'not alone' + x\n"
	         "if x:\n"
	         "    'no docstring in an if'\n"
	         "class D: 'one-line class doc'\n");
	assert_int_equal(mod->nstrings, 9);
	assert_string_at(0, "one", 2);
	assert_string_at(1, "two", 5);
	assert_string_at(2, "three", 10);
	assert_string_at(3, "four", 13);
	assert_string_at(4, "five", 14);
	assert_string_at(5, "bytes are no docstring", 16);
	assert_string_at(6, "nor is a second string", 17);
	assert_string_at(7, "not alone", 19);
	assert_string_at(8, "no docstring in an if", 21);

	/* In parentheses a str literal is still a docstring: CPython's is a
	 * statement that is an expression of a str constant. A tuple, a call,
	 * an operation or an f-string is none. */
	parse_ok("((\"module\" 'doc'))\n"
	         "def f():\n"
	         "    (\"doc\"\n"
	         "     \" continued\")\n"
	         "    def inner():\n"
	         "        ('inner doc') ; x = 'one'\n"
	         "    class L:\n"
	         "        (('local class doc') )\n"
	         "    return 'two'\n"
	         "class C: ('one-line class doc')\n"
	         "class D:\n"
	         "    ('a tuple',)\n"
	         "def g():\n"
	         "    'a' ('call')\n"
	         "def h():\n"
	         "    ('not alone') + 'x'\n"
	         "def i():\n"
	         "    (f'no docstring')\n"
	         "def j(): ('method').strip()\n");
	assert_int_equal(mod->nstrings, 9);
	assert_string_at(0, "one", 6);
	assert_string_at(1, "two", 9);
	assert_string_at(2, "a tuple", 12);
	assert_string_at(3, "a", 14);
	assert_string_at(4, "call", 14);
	assert_string_at(5, "not alone", 16);
	assert_string_at(6, "x", 16);
	assert_string_at(7, "no docstring", 18);
	assert_string_at(8, "method", 19);

	/* A module starting with code has no docstring. */
	parse_ok("x = 1\n'a string'\n");
	assert_int_equal(mod->nstrings, 1);
	parse_ok("# comment\n\n\"\"\"doc\"\"\"\n");
	assert_int_equal(mod->nstrings, 0);
}

/* --- Bounds --------------------------------------------------------------- */

/* body's f bounds name by want (NULL: none) at line. */
static void assert_bound(const char *body, const char *name, const char *want, unsigned line)
{
	ap_buf b = AP_BUF_INIT;
	ap_py_bound got;

	ap_buf_printf(&b, "def f(nhead, x, name):\n%s\nafter = 'nhead <= 1'\n", body);
	parse_ok(b.data);
	ap_py_def_bound(mod, def("f"), name, NULL, &got);
	if (got.kind != (want ? AP_PY_BOUND_FOUND : AP_PY_BOUND_NONE) ||
	    (want && (strcmp(got.value, want) != 0 || got.line != line)))
		fail_msg("%s: kind %d bound %s line %u (%s)", body, got.kind, got.value, got.line,
		         got.why);
	ap_buf_free(&b);
}

/* The bound is unknown, and why says so. */
static void assert_bound_unknown(const char *src, const char *def_name,
                                 const char *const *false_names, const char *why)
{
	ap_py_bound got;

	parse_ok(src);
	ap_py_def_bound(mod, def(def_name), "nhead", false_names, &got);
	if (got.kind != AP_PY_BOUND_UNKNOWN || strcmp(got.why, why) != 0)
		fail_msg("%s: kind %d bound %s: %s", src, got.kind, got.value, got.why);
}

/* body's f leaves the bound on nhead unknown, for why. */
static void assert_body_unknown(const char *body, const char *why)
{
	ap_buf b = AP_BUF_INIT;

	ap_buf_printf(&b, "def f(nhead, x, name):\n%s\n", body);
	assert_bound_unknown(b.data, "f", NULL, why);
	ap_buf_free(&b);
}

/* src's def_name bounds nhead by want (NULL: none) at line. */
static void assert_src_bound(const char *src, const char *def_name,
                             const char *const *false_names, const char *want, unsigned line)
{
	ap_py_bound got;

	parse_ok(src);
	ap_py_def_bound(mod, def(def_name), "nhead", false_names, &got);
	if (got.kind != (want ? AP_PY_BOUND_FOUND : AP_PY_BOUND_NONE) ||
	    (want && (strcmp(got.value, want) != 0 || got.line != line)))
		fail_msg("%s: kind %d bound %s line %u (%s)", src, got.kind, got.value, got.line,
		         got.why);
}

static void test_bound(void **state)
{
	(void)state;
	/* Guards that reject: assert, and raise under a condition, in every form. */
	assert_bound("    assert nhead <= 128", "nhead", "128", 2);
	assert_bound("    assert nhead < 128", "nhead", "127", 2);
	assert_bound("    if 64 < nhead: raise ValueError", "nhead", "64", 2);
	assert_bound("    if nhead >= 65:\n        raise ValueError(nhead)", "nhead", "64", 2);
	assert_bound("    if not nhead <= 64:\n        raise ValueError", "nhead", "64", 2);
	assert_bound("    if nhead <= 24:\n        return x\n    raise ValueError", "nhead", "24", 2);
	assert_bound("    if nhead in (1, 2):\n        pass\n    elif nhead > 48:\n        raise E",
	             "nhead", "48", 4);
	assert_bound("    assert 1 <= nhead <= 96, 'range'", "nhead", "96", 2);
	assert_bound("    assert 0 < nhead < 0x80", "nhead", "127", 2);
	assert_bound("    assert nhead <= 1_024", "nhead", "1024", 2);
	assert_bound("    assert nhead <= -1", "nhead", "-1", 2);
	assert_bound("    assert -4 >= nhead", "nhead", "-4", 2);
	assert_bound("    assert nhead < 0", "nhead", "-1", 2);
	assert_bound("    assert nhead == 3", "nhead", "3", 2);
	assert_bound("    assert nhead in [8]", "nhead", "8", 2);
	/* Parentheses around either side or the whole, signs inside or out. */
	assert_bound("    assert (nhead) <= (128)", "nhead", "128", 2);
	assert_bound("    assert ((nhead)) < ((0x80))", "nhead", "127", 2);
	assert_bound("    assert (96) >= (nhead)", "nhead", "96", 2);
	assert_bound("    assert ((nhead <= 16))", "nhead", "16", 2);
	assert_bound("    assert nhead <= -(4)", "nhead", "-4", 2);
	assert_bound("    assert nhead <= (-(+4))", "nhead", "-4", 2);
	assert_bound("    assert nhead <= - -4", "nhead", "4", 2);
	assert_bound("    assert 1 <= (nhead) <= (96)", "nhead", "96", 2);
	assert_bound("    if (nhead\n            > 16):\n        raise E", "nhead", "16", 2);
	/* Every guard holds: the least wins; or and and as CPython reads them. */
	assert_bound("    assert nhead <= 8\n    assert nhead < 64", "nhead", "8", 2);
	assert_bound("    assert nhead <= 8 or nhead <= 32", "nhead", "32", 2);
	assert_bound("    assert nhead <= 32 and not nhead > 8", "nhead", "8", 2);
	assert_bound("    if not nhead:\n        raise E\n    assert nhead <= 8", "nhead", "8", 4);
	assert_bound("    if nhead is None:\n        nhead = 4096\n    assert nhead <= 64", "nhead",
	             "64", 4);
	/* A value an == or in lets through alone above a range does not count. */
	assert_bound("    assert nhead <= 8 or nhead == 100", "nhead", "8", 2);
	assert_bound("    if nhead in (64, 128):\n        return x\n    elif 1 <= nhead <= 48:\n"
	             "        return x\n    raise E",
	             "nhead", "48", 4);
	assert_body_unknown("    assert nhead in (64, 128)",
	                    "it returns only for single values of nhead (64, 128), not a range");
	/* Comparisons that reject nothing, lower bounds, a tuple (always true). */
	assert_bound("    if 64 >= nhead: pass\n    x = nhead <= 4\n    return nhead <= 16", "nhead",
	             NULL, 0);
	assert_bound("    if nhead <= 16:\n        y = 1\n    else:\n        y = 2", "nhead", NULL, 0);
	assert_bound("    assert nhead >= 4 and 4 <= nhead and nhead != 3", "nhead", NULL, 0);
	assert_bound("    assert (nhead <= 16, 'a tuple')", "nhead", NULL, 0);
	/* Only the bare name: an attribute of another name is another value. */
	assert_bound("    assert x.nhead <= 4\n    assert nhead.real or True", "nhead", NULL, 0);
	/* What the reader cannot read where it rejects: unknown. */
	assert_body_unknown("    assert nhead <= MAX", "the bound depends on `nhead <= MAX` at line 2, "
	                                               "which the reader cannot evaluate for each value");
	assert_body_unknown("    assert nhead + 1 <= 4", "the bound depends on `nhead + 1 <= 4` at "
	                                                 "line 2, which the reader cannot evaluate for "
	                                                 "each value");
	assert_body_unknown("    if f(nhead) > 4: raise E", "the bound depends on `f(nhead) > 4` at "
	                                                     "line 2, which the reader cannot evaluate "
	                                                     "for each value");
	assert_body_unknown("    assert nhead <= 4.0", "the bound depends on `nhead <= 4.0` at line 2, "
	                                               "which the reader cannot evaluate for each value");
	/* Comments, strings and other scopes never count. */
	assert_bound("    # nhead <= 1000\n"
	             "    s = 'nhead <= 2000' f'{nhead <= 3000}'\n"
	             "    ok = [h for h in x if nhead <= 500]\n"
	             "    d = {k: nhead <= 700 for k in x}\n"
	             "    g = lambda a=lambda: 1: nhead <= 801\n"
	             "    h = (lambda: nhead <= 802, nhead <= 12)\n"
	             "    def helper(a=nhead <= 900) -> bool:\n"
	             "        assert nhead <= 901\n"
	             "        if x:\n"
	             "            assert nhead <= 902\n"
	             "    async def co(): assert nhead <= 905\n"
	             "    assert nhead <= 11",
	             "nhead", "11", 13);
	/* A class body runs, its methods do not. */
	assert_bound("    class Inner(Base):\n"
	             "        assert nhead <= 903\n"
	             "        def m(self): assert nhead <= 904",
	             "nhead", "903", 3);
	/* A comparison that goes to a call may make it raise. */
	assert_body_unknown("    torch._assert(nhead <= 16, 'heads')",
	                    "a comparison of nhead at line 2 goes to `torch._assert(...)`, which may "
	                    "raise on it");
	assert_body_unknown("    @decorate(nhead <= 13)\n    def helper(): pass",
	                    "a comparison of nhead at line 2 goes to `decorate(...)`, which may raise "
	                    "on it");
	assert_body_unknown("    gen = any(nhead < 600 for _ in x)",
	                    "a comparison of nhead at line 2 goes to `any(...)`, which may raise on it");
	assert_body_unknown("    nhead <= 16 or fail()",
	                    "a comparison of nhead at line 2 decides whether `fail(...)` runs, which "
	                    "may raise");
	/* The name bound again. */
	assert_body_unknown("    assert nhead <= 8\n    nhead = 100",
	                    "nhead is bound again at line 3, after comparisons of it");
	assert_body_unknown("    nhead = nhead * 2\n    assert nhead <= 8",
	                    "nhead is bound again at line 2 from its own value");
	assert_bound("    nhead = x.shape[1]\n    assert nhead <= 8", "nhead", "8", 3);
	/* A local computed from the name is the name's to read. */
	assert_body_unknown("    big = nhead > 64\n    if big: raise E",
	                    "the bound depends on `big` at line 3, which the reader cannot evaluate "
	                    "for each value");
	assert_body_unknown("    if nhead > 64:\n        mode = wide()\n    else:\n"
	                    "        mode = narrow()\n    if mode: raise E",
	                    "the bound depends on `mode` at line 6, which the reader cannot evaluate "
	                    "for each value");
	/* ... unless it holds only literals: then it is followed by value. */
	assert_bound("    if nhead > 64:\n        mode = 'wide'\n    else:\n        mode = 'narrow'\n"
	             "    if mode == 'wide': raise E",
	             "nhead", "64", 2);
	/* Integers of any size up to 256 bits, in decimal. */
	assert_bound("    assert name <= 9223372036854775807", "name", "9223372036854775807", 2);
	assert_bound("    assert name < 9223372036854775808", "name", "9223372036854775807", 2);
	assert_bound("    assert name <= -9223372036854775808", "name", "-9223372036854775808", 2);
	assert_bound("    assert name < -9223372036854775808", "name", "-9223372036854775809", 2);
	assert_bound("    assert name <= 0x1_0000_0000_0000_0000", "name", "18446744073709551616", 2);
	assert_bound("    assert name < 100000000000000000000000000001", "name",
	             "100000000000000000000000000000", 2);
	assert_bound("    assert name <= 0x" "ffffffffffffffffffffffffffffffff"
	             "ffffffffffffffffffffffffffffffff",
	             "name",
	             "115792089237316195423570985008687907853269984665640564039457584007913129639935",
	             2);
	assert_body_unknown("    assert nhead < 0x1" "00000000000000000000000000000000"
	                    "00000000000000000000000000000000",
	                    "the bound depends on `nhead < 0x10000000000000000000000000000000000000000"
	                    "00000000...` at line 2, an integer past 256 bits");
	assert_bound("    if nhead > 0x1" "00000000000000000000000000000000"
	             "00000000000000000000000000000000:\n        pass\n    assert nhead <= 5",
	             "nhead", "5", 4);
	/* A match on the name. */
	assert_bound("    match nhead:\n"
	             "        case 64 | 128:\n"
	             "            pass\n"
	             "        case _ if nhead <= 16:\n"
	             "            pass\n"
	             "        case _:\n"
	             "            raise E",
	             "nhead", "16", 5);
	/* No call returns; a generator's body runs when it is iterated. */
	assert_body_unknown("    raise NotImplementedError", "no call returns: every path raises");
	assert_body_unknown("    assert nhead <= 8\n    yield x",
	                    "a generator: its body runs when it is iterated, not when it is called");
	assert_bound("    return x", "nhead", NULL, 0);
	/* A one-line def. */
	parse_ok("def g(n): assert n <= 5\n"
	         "def h(n):\n"
	         "    pass\n"
	         "n <= 100\n");
	{
		ap_py_bound b;
		ap_py_def_bound(mod, def("g"), "n", NULL, &b);
		assert_int_equal(b.kind, AP_PY_BOUND_FOUND);
		assert_string_equal(b.value, "5");
		assert_int_equal(b.line, 1);
		ap_py_def_bound(mod, def("h"), "n", NULL, &b);
		assert_int_equal(b.kind, AP_PY_BOUND_NONE);
		assert_string_equal(b.value, "0");
	}
}

/* The path a call runs: dead arms and what follows a return count for
 * nothing; an arm chosen by something the same on every call is unknown. */
static void test_bound_path(void **state)
{
	static const char *const flags[] = {"AITER_TRITON_ONLY", NULL};

	(void)state;
	/* Dead arms: their guards reject nothing. */
	assert_src_bound("from typing import TYPE_CHECKING\n"
	                 "import typing\n"
	                 "def f(nhead):\n"
	                 "    if False:\n"
	                 "        assert nhead <= 1000\n"
	                 "    if TYPE_CHECKING:\n"
	                 "        assert nhead <= 1001\n"
	                 "    elif nhead > 1102:\n"
	                 "        raise E\n"
	                 "    if (typing.TYPE_CHECKING):\n"
	                 "        assert nhead <= 1003\n"
	                 "    if not True: assert nhead <= 1004\n"
	                 "    while 0:\n"
	                 "        assert nhead <= 1005\n"
	                 "    if __name__ == '__main__':\n"
	                 "        assert nhead <= 1006\n"
	                 "    if AITER_TRITON_ONLY:\n"
	                 "        assert nhead <= 1007\n"
	                 "    if True:\n"
	                 "        pass\n"
	                 "    elif nhead <= 1008:\n"
	                 "        assert nhead <= 1009\n"
	                 "    else:\n"
	                 "        assert nhead <= 1010\n"
	                 "    if None:\n"
	                 "        pass\n"
	                 "    else:\n"
	                 "        assert nhead <= 1200\n"
	                 "    if not TYPE_CHECKING:\n"
	                 "        assert nhead <= 1100\n"
	                 "    return 1\n"
	                 "    assert nhead <= 2\n",
	                 "f", flags, "1100", 30);
	/* After a return or raise in a block, nothing runs. */
	assert_src_bound("def f(nhead):\n"
	                 "    if nhead in (64, 128):\n"
	                 "        return 1\n"
	                 "        assert nhead <= 2\n"
	                 "    elif 1 <= nhead <= 96:\n"
	                 "        if nhead > 16:\n"
	                 "            raise ValueError(nhead)\n"
	                 "            if x:\n"
	                 "                assert nhead <= 3\n"
	                 "        return 2\n"
	                 "    raise AssertionError(nhead)\n"
	                 "    assert nhead <= 2002\n",
	                 "f", NULL, "16", 6);
	/* A TYPE_CHECKING bound some other way is not typing's. */
	assert_bound_unknown("TYPE_CHECKING = flag()\n"
	                     "def f(nhead):\n"
	                     "    if TYPE_CHECKING:\n"
	                     "        assert nhead <= 16\n",
	                     "f", NULL,
	                     "whether `nhead <= 16` (line 4) runs depends on `TYPE_CHECKING` at "
	                     "line 3, the same on every call, which the reader cannot decide");
	/* A condition on the call's other arguments goes either way: an arm that
	 * rejects every call is no call; one that bounds only some is unknown. */
	assert_src_bound("def f(q, kv):\n"
	                 "    batch, nhead = q.shape\n"
	                 "    fp8 = kv.dtype == 'fp8'\n"
	                 "    if q is None or not fp8:\n"
	                 "        raise TypeError(q)\n"
	                 "    elif kv.dtype == 'bf16' and batch > 2:\n"
	                 "        pass\n"
	                 "    else:\n"
	                 "        assert batch == 1\n"
	                 "    for (i, j) in enumerate(q):\n"
	                 "        if j: raise KeyError(j)\n"
	                 "    import torch.cuda as tc\n"
	                 "    if tc.ok(): pass\n"
	                 "    else: raise RuntimeError\n"
	                 "    assert nhead <= 60\n",
	                 "f", NULL, "60", 15);
	assert_bound_unknown("def f(q, nhead):\n"
	                     "    if q.dtype == 'fp8':\n"
	                     "        assert nhead <= 16\n",
	                     "f", NULL,
	                     "whether `nhead <= 16` (line 3) runs depends on `q.dtype == 'fp8'` at "
	                     "line 2, which varies from call to call");
	/* One reading only module state is the same on every call: unknown when
	 * the bound depends on it. */
	assert_bound_unknown("USE_NEW = env()\n"
	                     "def f(nhead):\n"
	                     "    if USE_NEW:\n"
	                     "        assert nhead <= 128\n"
	                     "    else:\n"
	                     "        assert nhead <= 16\n",
	                     "f", NULL,
	                     "whether `nhead <= 128` (line 4) runs depends on `USE_NEW` at line 3, "
	                     "the same on every call, which the reader cannot decide");
	assert_bound_unknown("def f(nhead):\n"
	                     "    if get_arch() == 'gfx950':\n"
	                     "        pass\n"
	                     "    elif (sys.version_info\n"
	                     "          >= (3, 12)):\n"
	                     "        pass\n"
	                     "    else:\n"
	                     "        assert nhead <= 64\n",
	                     "f", NULL,
	                     "whether `nhead <= 64` (line 8) runs depends on `get_arch() == 'gfx950'` "
	                     "at line 2, the same on every call, which the reader cannot decide");
	assert_bound_unknown("def f(nhead):\n"
	                     "    if USE_NEW:\n"
	                     "        assert nhead <= 16\n"
	                     "    assert nhead <= 96\n",
	                     "f", NULL,
	                     "whether `nhead <= 16` (line 3) runs depends on `USE_NEW` at line 2, the "
	                     "same on every call, which the reader cannot decide");
	/* ... and known when every way gives the same bound, or a way raises always. */
	assert_src_bound("def f(nhead):\n"
	                 "    try:\n"
	                 "        import triton\n"
	                 "    except (ImportError, OSError):\n"
	                 "        assert nhead <= 16\n"
	                 "    assert nhead <= 8\n",
	                 "f", NULL, "8", 6);
	assert_src_bound("def f(nhead):\n"
	                 "    if USE_NEW:\n"
	                 "        raise RuntimeError('off')\n"
	                 "    try:\n"
	                 "        import triton\n"
	                 "    except ImportError:\n"
	                 "        raise\n"
	                 "    assert nhead <= 96\n",
	                 "f", NULL, "96", 8);
	assert_bound_unknown("def f(nhead):\n"
	                     "    try:\n"
	                     "        import triton\n"
	                     "    except ModuleNotFoundError:\n"
	                     "        pass\n"
	                     "    else:\n"
	                     "        assert nhead <= 16\n",
	                     "f", NULL,
	                     "whether `nhead <= 16` (line 7) runs depends on `except "
	                     "ModuleNotFoundError` at line 4, taken only where an import fails");
	/* A handler may swallow what the body raises; so may a context manager. */
	assert_bound_unknown("def f(nhead):\n"
	                     "    try:\n"
	                     "        assert nhead <= 16\n"
	                     "    except Exception:\n"
	                     "        pass\n",
	                     "f", NULL,
	                     "the bound depends on `except Exception` at line 4, taken only where "
	                     "the try body raises");
	assert_bound_unknown("def f(nhead):\n"
	                     "    with suppress(AssertionError):\n"
	                     "        assert nhead <= 16\n",
	                     "f", NULL,
	                     "whether `nhead <= 16` (line 3) runs depends on `with "
	                     "suppress(AssertionError)` at line 2, whose context manager may swallow "
	                     "an exception");
	/* A loop may not run. */
	assert_bound_unknown("def f(nhead, xs):\n"
	                     "    for x in xs:\n"
	                     "        assert nhead <= 16\n",
	                     "f", NULL,
	                     "whether `nhead <= 16` (line 3) runs depends on `for x in xs` at line 2, "
	                     "a loop that may run no time");
	assert_src_bound("def f(nhead):\n"
	                 "    while True:\n"
	                 "        if nhead <= 32:\n"
	                 "            break\n"
	                 "        raise E\n"
	                 "    return 1\n",
	                 "f", NULL, "32", 3);
	/* A name declared global is the module's. */
	assert_bound_unknown("def f(nhead):\n"
	                     "    global MODE\n"
	                     "    if MODE: assert nhead <= 99\n"
	                     "    MODE = 1\n",
	                     "f", NULL,
	                     "whether `nhead <= 99` (line 3) runs depends on `MODE` at line 3, "
	                     "the same on every call, which the reader cannot decide");
	/* A local set by an arm of a condition on the name, and read later. */
	assert_src_bound("def f(nhead, kv):\n"
	                 "    if nhead in (64, 128):\n"
	                 "        REGIME = 'wide'\n"
	                 "    elif 1 <= nhead <= 16:\n"
	                 "        if kv == 'bf16':\n"
	                 "            REGIME = 'narrow'\n"
	                 "        else:\n"
	                 "            REGIME = 'narrow8'\n"
	                 "    else:\n"
	                 "        raise E\n"
	                 "    if REGIME == 'wide':\n"
	                 "        splits = nhead // 16\n"
	                 "        assert kv_len > splits\n"
	                 "    else:\n"
	                 "        splits = 1\n"
	                 "        assert kv == ('bf16' if REGIME == 'narrow' else 'fp8')\n"
	                 "    if splits == 1:\n"
	                 "        return 1\n"
	                 "    return 2\n",
	                 "f", NULL, "16", 4);
}

/* --- Syntax errors and limits --------------------------------------------- */

/* The reader skims def bodies and the tails of parameters (past their
 * names) without making every token current: what it passes over must read
 * as the tokens would. */
static void test_skimmed_tokens(void **state)
{
	const ap_py_def *d;

	(void)state;
	parse_ok("def f(a=lambda x, y: x, b: Dict[str, int] = {'k': 1}, c=x == 1,\n"
	         "      d: int=2, e=(lambda: 1), f=lambdas, g=xlambda, *, h,\n"
	         "      i: int == 3, j <= 4, k: 'x' = rb'y', l=f\"{1}\",  # a ( ' comment\n"
	         "      m=\\\n"
	         "        [1,\n"
	         "         2], n: 'a=b' , o=0x1f, p=1.5e-3, q=a.b(c=1)[0], r: int):\n"
	         "    x = foo(rb\"s1\", f'{b}', u's2') + (1.jb's3')\n"
	         "    def inner(): 'dropped'; y = 's4'\n"
	         "    class Inner:\n"
	         "        '''dropped too'''\n"
	         "    z = [lambda: 's5',\n"
	         "         # ( ' \"\n"
	         "         \"s6\"]; w = 's7' \\\n"
	         "        's8'\n"
	         "    return x\n"
	         "v = 1\n");
	d = def("f");
	assert_int_equal(d->nparams, 18);
	assert_param(d, 0, "a", AP_PY_POS, true);
	assert_param(d, 1, "b", AP_PY_POS, true);
	assert_param(d, 2, "c", AP_PY_POS, true);
	assert_param(d, 3, "d", AP_PY_POS, true);
	assert_param(d, 4, "e", AP_PY_POS, true);
	assert_param(d, 5, "f", AP_PY_POS, true);
	assert_param(d, 6, "g", AP_PY_POS, true);
	assert_param(d, 7, "h", AP_PY_KWONLY, false);
	/* "==" and "<=" are no defaults. */
	assert_param(d, 8, "i", AP_PY_KWONLY, false);
	assert_param(d, 9, "j", AP_PY_KWONLY, false);
	assert_param(d, 10, "k", AP_PY_KWONLY, true);
	assert_param(d, 11, "l", AP_PY_KWONLY, true);
	assert_param(d, 12, "m", AP_PY_KWONLY, true);
	assert_param(d, 13, "n", AP_PY_KWONLY, false);
	assert_param(d, 14, "o", AP_PY_KWONLY, true);
	assert_param(d, 15, "p", AP_PY_KWONLY, true);
	assert_param(d, 16, "q", AP_PY_KWONLY, true);
	assert_param(d, 17, "r", AP_PY_KWONLY, false);
	assert_int_equal(d->body_line, 7);
	assert_names("f v");
	assert_int_equal(binding("v")->line, 16);
	assert_int_equal(mod->nstrings, 14);
	assert_string_at(0, "k", 1);
	assert_string_at(1, "x", 3);
	assert_string_at(2, "y", 3);
	assert_string_at(3, "{1}", 3);
	assert_string_at(4, "a=b", 6);
	assert_string_at(5, "s1", 7);
	assert_string_at(6, "{b}", 7);
	assert_string_at(7, "s2", 7);
	assert_string_at(8, "s3", 7);
	assert_string_at(9, "s4", 8);
	assert_string_at(10, "s5", 11);
	assert_string_at(11, "s6", 13);
	assert_string_at(12, "s7", 13);
	assert_string_at(13, "s8", 14);

	/* Errors in skimmed tokens are the tokenizer's. */
	parse_err("def f(a: int = (1, 2]):\n    pass\n", AP_EINPUT,
	          "line 1: mismatched ']' for '(' of line 1");
	parse_err("def f(a: int = 'x):\n    pass\n", AP_EINPUT, "line 1: unterminated string");
	parse_err("def f(a: int = (1,\n", AP_EINPUT, "line 1: unbalanced '('");
	parse_err("def f(a: int = 1 \\ 2):\n    pass\n", AP_EINPUT,
	          "line 1: unexpected character after line continuation character");
	parse_err("def f():\n    x = g(a,\n          b]\n", AP_EINPUT,
	          "line 3: mismatched ']' for '(' of line 2");
	parse_err("def f():\n    x = g(a) + rb'x\n", AP_EINPUT, "line 2: unterminated string");
	parse_err("def f():\n    x = g(a) + \\ 1\n", AP_EINPUT,
	          "line 2: unexpected character after line continuation character");
	parse_err("def f():\n    x = (\n", AP_EINPUT, "line 2: unbalanced '('");
	parse_err("def f():\n    x = 1\n  y = 2\n", AP_EINPUT,
	          "line 3: unindent does not match any outer indentation level");
}

static void test_errors(void **state)
{
	(void)state;
	parse_err("x = 1\ny = 'abc\n", AP_EINPUT, "line 2: unterminated string");
	parse_err("x = 1\ny = 'abc", AP_EINPUT, "line 2: unterminated string");
	parse_err("x = 1\ny = \"\"\"abc\n\ndef f(): pass\n", AP_EINPUT,
	          "line 2: unterminated triple-quoted string");
	parse_err("x = f'{a}\n", AP_EINPUT, "line 1: unterminated string");
	parse_err("x = 1\ny = 2)\n", AP_EINPUT, "line 2: unbalanced ')'");
	parse_err("x = 1\ny = f(a,\n  b\nz = 3\n", AP_EINPUT, "line 2: unbalanced '('");
	parse_err("x = [1,\n 2)\n", AP_EINPUT, "line 2: mismatched ')' for '[' of line 1");
	parse_err("def (x): pass\n", AP_EINPUT, "line 1: expected a name after 'def'");
	parse_err("x = 1\ndef\n", AP_EINPUT, "line 2: expected a name after 'def'");
	parse_err("def f: pass\n", AP_EINPUT, "line 1: expected '(' after the name of a def");
	parse_err("class : pass\n", AP_EINPUT, "line 1: expected a name after 'class'");
	parse_err("if x\n    y = 1\n", AP_EINPUT, "line 1: expected ':'");
	parse_err("def f(x) -> int\n    pass\n", AP_EINPUT, "line 1: expected ':'");
	parse_err("x = 1 \\ y\n", AP_EINPUT,
	          "line 1: unexpected character after line continuation character");
	/* Errors inside function bodies count too. */
	parse_err("def f():\n    return (1]\n", AP_EINPUT,
	          "line 2: mismatched ']' for '(' of line 2");
	parse_err("class C:\n    def m(self):\n        x = '\n", AP_EINPUT,
	          "line 3: unterminated string");
}

static void test_nesting_limit(void **state)
{
	ap_buf b = AP_BUF_INIT;

	(void)state;
	/* 200 brackets are fine, 201 are not. */
	ap_buf_puts(&b, "x = ");
	for (int i = 0; i < 200; i++)
		ap_buf_putc(&b, "([{"[i % 3]);
	for (int i = 199; i >= 0; i--)
		ap_buf_putc(&b, ")]}"[i % 3]);
	ap_buf_putc(&b, '\n');
	parse_ok(b.data);
	assert_names("x");
	ap_buf_free(&b);
	ap_buf_puts(&b, "x = \\\n");
	for (int i = 0; i < 201; i++)
		ap_buf_putc(&b, '(');
	parse_err(b.data, AP_ELIMIT, "line 2: nesting deeper than 200 levels");
	ap_buf_free(&b);

	/* Blocks and brackets together. */
	for (int i = 0; i < 199; i++)
		ap_buf_printf(&b, "%*sif x:\n", i, "");
	ap_buf_printf(&b, "%*sy = (1)\n", 199, "");
	parse_ok(b.data);
	/* Bound under more than AP_PY_MAX_WAYS_DEPTH such statements: unknown outright. */
	assert_names("?y");
	assert_string_equal(mod->bindings[0].why,
	                    "it is bound in statements that may run more than one way, nested "
	                    "more than 16 deep");
	ap_buf_free(&b);
	for (int i = 0; i < 199; i++)
		ap_buf_printf(&b, "%*sif x:\n", i, "");
	ap_buf_printf(&b, "%*sy = ((1))\n", 199, "");
	parse_err(b.data, AP_ELIMIT, "line 200: nesting deeper than 200 levels");
	ap_buf_free(&b);
	for (int i = 0; i < 201; i++)
		ap_buf_printf(&b, "%*sif x:\n", i, "");
	ap_buf_printf(&b, "%*spass\n", 201, "");
	parse_err(b.data, AP_ELIMIT, "line 202: nesting deeper than 200 levels");
	ap_buf_free(&b);
	/* Inside a function body as well. */
	ap_buf_puts(&b, "def f():\n");
	for (int i = 1; i < 201; i++)
		ap_buf_printf(&b, "%*sif x:\n", i, "");
	ap_buf_printf(&b, "%*spass\n", 201, "");
	parse_err(b.data, AP_ELIMIT, "line 202: nesting deeper than 200 levels");
	ap_buf_free(&b);
	/* And in nested f-strings. */
	ap_buf_puts(&b, "x = ");
	for (int i = 0; i < 150; i++)
		ap_buf_puts(&b, "f'{");
	parse_err(b.data, AP_ELIMIT, "line 1: nesting deeper than 200 levels");
	ap_buf_free(&b);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Filled with copies of unit up to len bytes. */
static char *repeat(const char *unit, size_t len)
{
	size_t u = strlen(unit);
	char *s = ap_xmalloc(len + 1);
	for (size_t i = 0; i < len; i++)
		s[i] = unit[i % u];
	s[len] = '\0';
	return s;
}

/* The limit is generous: quadratic work on these inputs would take hours,
 * and sanitizers slow the linear work many times. */
#define FAST_SECONDS 10.0

/* n bytes (or items) of a pathological input, a sixteenth of it under a
 * wrapper (valgrind, some fifty times slower): quadratic work on that still
 * takes hours, linear work stays seconds. */
static size_t input_size(size_t n)
{
	const char *wrapper = getenv("AP_WRAPPER");

	return wrapper != NULL && *wrapper != '\0' ? n / 16 : n;
}

/* Seconds to parse n short defs. */
static double parse_defs(int n)
{
	ap_buf b = AP_BUF_INIT;
	struct timespec t0;
	double t;

	for (int i = 0; i < n; i++)
		ap_buf_puts(&b, "def f(a, b=1): return a <= 3\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	parse_ok(b.data);
	t = seconds_since(&t0);
	ap_buf_free(&b);
	assert_int_equal(mod->ndefs, (size_t)n);
	assert_int_equal(mod->nbindings, (size_t)n);
	return t;
}

static void test_pathological(void **state)
{
	const size_t big = input_size(16u << 20);
	struct timespec t0;
	char *s;

	(void)state;
	s = repeat("(", big);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	parse_err(s, AP_ELIMIT, "line 1: nesting deeper than 200 levels");
	assert_true(seconds_since(&t0) < FAST_SECONDS);
	free(s);

	s = repeat("def f(\n", big);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	parse_err(s, AP_ELIMIT, "line 201: nesting deeper than 200 levels");
	assert_true(seconds_since(&t0) < FAST_SECONDS);
	free(s);

	s = repeat("# comment ' \" ( def\n", big);
	parse_ok(s);
	assert_int_equal(mod->nbindings, 0);
	free(s);

	s = repeat("a", big);
	memcpy(s, "x = \"\"\"", 7);
	memcpy(s + big - 3, "\"\"\"", 3);
	parse_ok(s);
	assert_int_equal(mod->nstrings, 1);
	free(s);

	/* Many "lambda"s in one name, '=' and strings with no space between,
	 * in a parameter's default and in a body. */
	s = repeat("xlambda", big);
	memcpy(s, "def f(a=", 8);
	memcpy(s + big - 13, "):\n    x = 1\n", 13);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	parse_ok(s);
	assert_int_equal(mod->ndefs, 1);
	assert_true(mod->defs[0].params[0].has_default);
	assert_true(seconds_since(&t0) < FAST_SECONDS);
	free(s);

	s = repeat("=b\"ss\"b=", big);
	memcpy(s, "def f(a=", 8);
	memcpy(s + big - 16, "0):\n  x = a \"s\"\n", 16);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	parse_ok(s);
	assert_int_equal(mod->ndefs, 1);
	assert_true(mod->defs[0].params[0].has_default);
	assert_int_equal(mod->nstrings, big / 8 - 2);
	assert_true(seconds_since(&t0) < FAST_SECONDS);
	free(s);

	/* 200,000 defs: quadratic work would take hours. */
	assert_true(parse_defs((int)input_size(200000)) < FAST_SECONDS);
}

/* A body of the same line repeated to about len bytes, under `def f(nhead):`. */
static char *body_of(const char *head, const char *line, const char *tail, size_t len)
{
	ap_buf b = AP_BUF_INIT;

	ap_buf_printf(&b, "def f(nhead):\n%s", head);
	while (b.len < len)
		ap_buf_puts(&b, line);
	ap_buf_puts(&b, tail);
	return ap_buf_detach(&b);
}

/* Bounds read in linear time whatever the body holds. */
static void test_bound_pathological(void **state)
{
	static const struct {
		const char *head, *line, *tail;
		ap_py_bound_kind kind;
	} bodies[] = {
		/* one logical line of lambdas, of comparisons, of parenthesised operands */
		{"    x = (", "lambda: ", "1)\n", AP_PY_BOUND_NONE},
		{"    assert (", "(nhead) <= (1) <= ", "1)\n", AP_PY_BOUND_FOUND},
		{"    assert (", "((((((((nhead)))))))) <= 2 or ", "nhead <= 2)\n", AP_PY_BOUND_FOUND},
		{"    assert ", "not not ", "nhead <= 2\n", AP_PY_BOUND_FOUND},
		/* comprehensions nested deep, many times */
		{"", "    x = [[[[[[[[[[x for x in y if nhead <= 9]]]]]]]]]]\n", "", AP_PY_BOUND_NONE},
		/* blocks: conditions the reader cannot decide, deep indentation */
		{"", "    if G:\n        assert nhead <= 1\n", "", AP_PY_BOUND_UNKNOWN},
		{"", "    if nhead:\n     if nhead:\n      if nhead:\n       if nhead:\n        assert nhead < 3\n", "",
		 AP_PY_BOUND_FOUND},
		/* many names the body binds */
		{"", "    a, b, c, d = e\n    (f, g), *h = i\n", "", AP_PY_BOUND_NONE},
	};
	struct timespec t0;

	(void)state;
	for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
		char *s = body_of(bodies[k].head, bodies[k].line, bodies[k].tail,
		                  input_size(2u << 20));
		ap_py_bound b;
		parse_ok(s);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ap_py_def_bound(mod, def("f"), "nhead", NULL, &b);
		if (b.kind != bodies[k].kind)
			fail_msg("body %zu: kind %d (%s)", k, b.kind, b.why);
		assert_true(seconds_since(&t0) < FAST_SECONDS);
		free(s);
	}
}

/* Asks every def for a bound on name, for what it may read. */
static void all_bounds(const char *name)
{
	for (size_t i = 0; i < mod->ndefs; i++) {
		ap_py_bound b;
		ap_py_def_bound(mod, &mod->defs[i], name, NULL, &b);
		assert_true(b.kind == AP_PY_BOUND_FOUND || strcmp(b.value, "0") == 0);
	}
}

/* Inputs cut anywhere end without reading past their length. */
static void test_truncated_inputs(void **state)
{
	static const char *const srcs[] = {
		"\xef\xbb\xbf" "def f(a, *, b=(1, 'x')) -> int:\n"
		"    '''doc'''\n"
		"    return a <= 0x1F and 1e-5 < b\n"
		"class C(B):\n"
		"\tx = f\"{a!r:>{w}}\" rb'\\'' \\\r\n"
		"\t    u'''t'''  # c\n"
		"__all__ = ['a'] + [\"b\"]\n"
		"from .x import (y as z)\n",
		"x = 1\\",
		"if a:\n  b = 1\n    c = 2",
	};
	(void)state;
	for (size_t k = 0; k < sizeof srcs / sizeof *srcs; k++) {
		size_t len = strlen(srcs[k]);
		for (size_t n = 0; n <= len; n++) {
			int rc = parse_n(srcs[k], n, NULL);
			assert_true(rc == 0 || rc == AP_EINPUT);
			assert_true((rc == 0) == (mod != NULL));
			assert_true(rc == 0 || strncmp(ap_error_last(), "line ", 5) == 0);
			if (mod != NULL)
				all_bounds("a");
		}
	}
}

/* Random token soup: whatever comes of it, no crash, no leak, one message. */
static void test_random_inputs(void **state)
{
	static const char *const pieces[] = {
		"def ", "class ", "if ", "elif ", "else", "try", "except ", "finally", "with ",
		" as ", "for ", " in ", "while ", "import ", "from ", "lambda ", "async ", "@", "f",
		"x", "_",
		"(", ")", "[", "]", "{", "}", ":", ",", "=", ":=", "+=", "*", "**", "/", ".", "...",
		"->", "<=", "<", ">=", ">", "-", "1", "0x1f", "'s'", "\"\"\"t\"\"\"", "f'{x}'", "'",
		"\"", "\\", "\\\n", "#c", "\n", "\n", "\n", " ", "    ", "\t", "\r\n", ";", "\0",
		"\xff", "__all__", "not ", "'''",
	};
	static const char *const falses[] = {"x", NULL};
	unsigned seed = 12345;
	char buf[512];

	(void)state;
	for (int r = 0; r < 20000; r++) {
		size_t n = 0;
		int count = 1 + (int)(seed % 40);
		for (int k = 0; k < count; k++) {
			const char *p;
			size_t len;
			seed = seed * 1103515245u + 12345u;
			p = pieces[(seed >> 8) % (sizeof pieces / sizeof *pieces)];
			len = p[0] == '\0' ? 1 : strlen(p);
			if (n + len > sizeof buf)
				break;
			memcpy(buf + n, p, len);
			n += len;
		}
		{
			int rc = parse_n(buf, n, r % 2 ? falses : NULL);
			assert_true(rc == 0 || rc == AP_EINPUT || rc == AP_ELIMIT);
			assert_true((rc == 0) == (mod != NULL));
		}
		if (mod != NULL)
			all_bounds("x");
	}
}

/* Soft-keyword statements (match, case) head blocks read like any other. */
static void test_match_statement(void **state)
{
	(void)state;
	parse_ok("match command.split():\n"
	         "    case ['go', where]:\n"
	         "        from .moves import go\n"
	         "    case _:\n"
	         "        go = None\n"
	         "match = 1\n"
	         "case(2)\n");
	/* Each case is a way the match may run, and so is none. */
	assert_names("^moves go go ?moves ?go match");
	assert_int_equal(mod->bindings[1].kind, AP_PY_BIND_FROM);
	assert_string_at(0, "go", 2);
	/* A literal subject: the first case that matches runs, and no other
	 * (1 == True, `is` for None); a capture binds; a case's block may
	 * follow its ':'. */
	parse_ok("import sys\n"
	         "match 1:\n"
	         "    case 2: a = 0\n"
	         "    case True | None: b = 0\n"
	         "    case -1 | 1:\n"
	         "        c = 0\n"
	         "    case _: d = 0\n"
	         "match None:\n"
	         "    case 0: e = 0\n"
	         "    case None: f = 0\n"
	         "match 'x':\n"
	         "    case 1.0: g = 0\n"
	         "    case got: h = 0\n"
	         "match True:\n"
	         "    case 1: k = 0\n"
	         "match sys.platform:\n"
	         "    case 'linux' if x: m = 0\n"
	         "    case _: n = 0\n");
	assert_names("sys c f g got h ?g ?got ?h k m n ?m ?n");
}

/* A loop over a literal runs its body that many times: none binds nothing,
 * once (no break or continue) as an `if True:`, and more alike where no
 * statement reads what the body binds; its else runs once it ends unless a
 * break may end it. */
static void test_loops(void **state)
{
	(void)state;
	parse_ok("for a in range(0):\n"
	         "    b = 0\n"
	         "else:\n"
	         "    c = 0\n"
	         "for d in (1,):\n"
	         "    e = 0\n"
	         "for f in [1, 2]:\n"
	         "    g = 0\n"
	         "while 0:\n"
	         "    h = 0\n"
	         "for i in (x,):\n"
	         "    if i:\n"
	         "        break\n"
	         "    j = 0\n"
	         "else:\n"
	         "    k = 0\n"
	         "range = list\n"
	         "for m in range(1):\n"
	         "    n = 0\n"
	         "for o in (lambda p, q: 0,):\n"
	         "    r = 0\n"
	         "for s in [t, u]:\n"
	         "    pass\n"
	         "for v in (w.x,):\n"
	         "    pass\n"
	         "for y, z in ((1, 2),):\n"
	         "    pass\n"
	         "for aa in (1, 2):\n"
	         "    bb = cc\n"
	         "    cc = 0\n"
	         "for dd in (1, 2):\n"
	         "    @ee\n"
	         "    def ff(): pass\n"
	         "    ee = 0\n"
	         "from typing import TYPE_CHECKING\n"
	         "for gg in (1, 2):\n"
	         "    if not TYPE_CHECKING:\n"
	         "        def hh(): pass\n"
	         "    TYPE_CHECKING = True\n");
	/* more items: alike each time unless the body reads what it binds, a
	 * condition's name included */
	assert_names("c d e f g i j k ?j ?k range m n ?m ?n o r ?o ?r s ?v y z ?y ?z "
	             "aa bb cc ?bb ?cc dd ff ee ?ff ?ee TYPE_CHECKING gg hh TYPE_CHECKING ?hh "
	             "?TYPE_CHECKING");
	/* a name target holds the last item */
	assert_int_equal(binding("s")->kind, AP_PY_BIND_ALIAS);
	assert_string_equal(binding("s")->target, "u");
	assert_string_equal(binding("v")->why,
	                    "it is bound to the last item of the `for` loop at line 24");
}

static void test_empty_inputs(void **state)
{
	(void)state;
	assert_int_equal(ap_py_parse(&mod, NULL, 0, NULL), 0);
	assert_int_equal(mod->nbindings + mod->ndefs + mod->nstrings + mod->nall, 0);
	assert_false(mod->has_all);
	parse_ok("\xef\xbb\xbf");
	parse_ok("\n\n   \n\t\n# only a comment");
	assert_int_equal(mod->nbindings, 0);
	/* An assignment whose value is missing: nothing read past its tokens
	 * (fuzz-python found the read). */
	(void)parse_n("x = y =\n", 8, NULL);
	(void)parse_n("x = y =", 7, NULL);
	(void)parse_n("class C:\n    x, y =", 19, NULL);
	(void)parse_n("(w :=", 5, NULL);
	parse_ok("try:\n    x = f()\nexcept E:\n    y = 1\n");
	assert_int_equal(ap_py_lookup(mod, "y")->kind, AP_PY_BIND_UNKNOWN);
}

/* Names that are not ASCII, as CPython reads them (PEP 3131): NFKC-normalized
 * where bound (`def ﬁnd` binds `find`, fullwidth `ｄｅｆ` is the name
 * `def`, no keyword), strings as written; a name CPython's tokenizer turns
 * away is an error, wherever it is. What each binds is what importing the
 * module binds. */
static void test_unicode_names(void **state)
{
	(void)state;
	parse_ok("from typing import TYPE_CHECKING\n"
	         "def \xef\xac\x81nd(\xef\xac\x82" "ag, *, \xef\xbd\x8bw=1): pass\n"
	         "class \xef\xbc\xa3ls:\n"
	         "    def \xef\xbd\x8d" "eth(self): return '\xef\xac\x81'\n"
	         "from .\xef\xbd\x8dod import \xef\xbd\x90" "ath as \xe2\x85\xb0\n"
	         "import \xef\xbd\x93ys.\xef\xbd\x90" "ath\n"
	         "\xef\xbd\x84\xef\xbd\x85\xef\xbd\x86 = 2\n"
	         "__all__ = ['\xef\xac\x81nd']\n"
	         "if \xef\xbc\xb4YPE_CHECKING:\n"
	         "    def stub(): pass\n"
	         "x\xc2\xb7 = caf\xc3\xa9\n"
	         "def f():\n"
	         "    y = caf\xc3\xa9 + 'after'\n"
	         "    z = (1 +\n"
	         "         \xc3\xa9t\xc3\xa9) + 'then'\n");
	assert_names("TYPE_CHECKING find Cls ^mod i sys def __all__ x\xc2\xb7 f");
	assert_param(def("find"), 0, "flag", AP_PY_POS, false);
	assert_param(def("find"), 1, "kw", AP_PY_KWONLY, true);
	assert_int_equal(def("Cls.meth")->line, 4);
	assert_binding(4, AP_PY_BIND_FROM, "i", ".mod", "path", 5);
	assert_binding(5, AP_PY_BIND_IMPORT, "sys", "sys.path", NULL, 6);
	assert_int_equal(binding("x\xc2\xb7")->kind, AP_PY_BIND_ALIAS);
	assert_string_equal(binding("x\xc2\xb7")->target, "caf\xc3\xa9");
	assert_null(ap_py_find_def(mod, "stub"));
	/* __all__ is strings: `from m import *` looks up 'ﬁnd' as written. */
	assert_true(mod->has_all);
	assert_string_equal(mod->all[0], "\xef\xac\x81nd");
	assert_string_at(0, "\xef\xac\x81", 4);
	assert_string_at(2, "after", 13);
	assert_string_at(3, "then", 15);
	/* `global ﬁnd` in a def run at import declares the module's find. */
	parse_ok("def setup():\n"
	         "    global \xef\xac\x81nd\n"
	         "setup()\n");
	assert_names("setup ?find");

	parse_err("x = 1 \xe2\x86\x92 2\n", AP_EINPUT,
	          "line 1: invalid character '\xe2\x86\x92' (U+2192)");
	parse_err("\xc2\xb7x = 1\n", AP_EINPUT, "line 1: invalid character '\xc2\xb7' (U+00B7)");
	parse_err("x\xc2\xa0= 1\n", AP_EINPUT, "line 1: invalid non-printable character U+00A0");
	parse_err("x = 1\n\xff = 2\n", AP_EINPUT, "line 2: Non-UTF-8 code starting with '\\xff'");
	/* In a skimmed body, at a statement's start or in its middle, and in a
	 * parameter's default. */
	parse_err("def f():\n    \xe2\x86\x92 = 1\n", AP_EINPUT,
	          "line 2: invalid character '\xe2\x86\x92' (U+2192)");
	parse_err("def f():\n    x = [1,\n 2] + y\xe2\x86\x92\n", AP_EINPUT,
	          "line 3: invalid character '\xe2\x86\x92' (U+2192)");
	parse_err("def f(a, b=(1,\n 2 \xe2\x86\x92)): pass\n", AP_EINPUT,
	          "line 2: invalid character '\xe2\x86\x92' (U+2192)");
	/* Strings and comments may hold anything. */
	parse_ok("x = '\xe2\x86\x92'  # \xe2\x86\x92 \xff\n");
	assert_string_at(0, "\xe2\x86\x92", 1);
}

/* A def's line is CPython's lineno (co_firstlineno without decorators):
 * that of `async` when a continuation puts `def` on a later line. */
static void test_async_continuation(void **state)
{
	(void)state;
	parse_ok("x = 1\n"
	         "async \\\n"
	         " def f(): pass\n"
	         "class C:\n"
	         "    @dec\n"
	         "    async \\\n"
	         "\\\n"
	         "      def m(self): pass\n"
	         "def \\\n"
	         "  g(): pass\n");
	assert_int_equal(def("f")->line, 2);
	assert_int_equal(def("C.m")->line, 6);
	assert_int_equal(def("g")->line, 9);
}

/* A bound on a parameter spelt otherwise in the body: the same name. */
static void test_bound_unicode_name(void **state)
{
	ap_py_bound got;

	(void)state;
	parse_ok("def f(\xef\xbd\x8ehead, caf\xc3\xa9):\n"
	         "    assert nhead <= 8\n"
	         "    assert \xef\xbd\x8ehead < 64 and cafe\xcc\x81 <= 3\n");
	assert_param(def("f"), 0, "nhead", AP_PY_POS, false);
	ap_py_def_bound(mod, def("f"), "nhead", NULL, &got);
	assert_int_equal(got.kind, AP_PY_BOUND_FOUND);
	assert_string_equal(got.value, "8");
	assert_int_equal(got.line, 2);
	ap_py_def_bound(mod, def("f"), "caf\xc3\xa9", NULL, &got);
	assert_int_equal(got.kind, AP_PY_BOUND_FOUND);
	assert_string_equal(got.value, "3");
}

/* The rule's side: a name spelt as the reader spells the names it reads. */
static void test_name_normalize(void **state)
{
	static const char *const cases[][2] = {
		{"find", "find"}, {"\xef\xac\x81nd", "find"}, {"Cls.\xef\xbd\x8d" "eth", "Cls.meth"},
		{"caf\xc3\xa9", "caf\xc3\xa9"}, {"cafe\xcc\x81", "caf\xc3\xa9"},
		{"\xe2\x85\xa8", "IX"}, {"\xff", "\xff"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *s = ap_xstrdup(cases[i][0]);
		ap_py_name_normalize(&s);
		assert_string_equal(s, cases[i][1]);
		free(s);
	}
	assert_true(ap_py_is_identifier("_x1", 3));
	assert_true(ap_py_is_identifier("def", 3));
	assert_true(ap_py_is_identifier("\xef\xac\x81nd", 5));
	assert_true(ap_py_is_identifier("x\xc2\xb7", 3));
	assert_false(ap_py_is_identifier("", 0));
	assert_false(ap_py_is_identifier("1x", 2));
	assert_false(ap_py_is_identifier("a.b", 3));
	assert_false(ap_py_is_identifier("\xc2\xb7x", 3));
	assert_false(ap_py_is_identifier("x\xe2\x86\x92", 4));
	assert_false(ap_py_is_identifier("x\xff", 2));
}

static void test_nul_and_invalid_utf8(void **state)
{
	static const char src[] = "x\xc3\xa9 = '\xff\xfe'\n"
	                          "y = 1 \0 2\n"
	                          "def \xe4\xbd\xa0(a): pass\n";
	(void)state;
	assert_int_equal(parse_n(src, sizeof src - 1, NULL), 0);
	assert_names("x\xc3\xa9 y \xe4\xbd\xa0");
	assert_string_at(0, "\xff\xfe", 1);
}

static void test_input_too_large(void **state)
{
	char one = 'x';

	(void)state;
	/* Refused before a byte is read. */
	assert_int_equal(ap_py_parse(&mod, &one, (size_t)UINT32_MAX + 1, NULL), AP_ELIMIT);
	assert_null(mod);
	assert_string_equal(ap_error_last(), "line 1: input of 4 GiB or more");
}

/* --- The token matcher's lexer -------------------------------------------- */

static size_t end_of(const char *s)
{
	return ap_py_token_end(s, 0, strlen(s));
}

static void test_token_end(void **state)
{
	(void)state;
	assert_int_equal(end_of("name_1 x"), 6);
	assert_int_equal(end_of("\xc3\xa9t\xc3\xa9+"), 5);
	assert_int_equal(end_of("1_000)"), 5);
	assert_int_equal(end_of("0x1F)"), 4);
	assert_int_equal(end_of("1e-5+"), 4);
	assert_int_equal(end_of("1.5j+"), 4);
	assert_int_equal(end_of(".5)"), 2);
	assert_int_equal(end_of("'a\\'b' x"), 6);
	assert_int_equal(end_of("rb\"x\" y"), 5);
	assert_int_equal(end_of("Rf'{x}' y"), 7);
	assert_int_equal(end_of("BR'x' y"), 5);
	assert_int_equal(end_of("ub'x'"), 2);
	assert_int_equal(end_of("'''a\n'b''' x"), 10);
	assert_int_equal(end_of("'open\nx"), 5);
	assert_int_equal(end_of("'open\r\nx"), 5);
	assert_int_equal(end_of("'open\rx"), 5);
	assert_int_equal(end_of("f'open\rx"), 6);
	assert_int_equal(end_of("f'{x # c\r}' y"), 11);
	assert_int_equal(end_of("'a\\\rb' x"), 6);
	assert_int_equal(end_of("'''open\n"), 8);
	assert_int_equal(end_of("**= x"), 3);
	assert_int_equal(end_of("//= x"), 3);
	assert_int_equal(end_of(">>=x"), 3);
	assert_int_equal(end_of("<<=x"), 3);
	assert_int_equal(end_of("...x"), 3);
	assert_int_equal(end_of("->x"), 2);
	assert_int_equal(end_of(":=x"), 2);
	assert_int_equal(end_of("==x"), 2);
	assert_int_equal(end_of("!=x"), 2);
	assert_int_equal(end_of("**x"), 2);
	assert_int_equal(end_of("@=x"), 2);
	assert_int_equal(end_of("..x"), 1);
	assert_int_equal(end_of("$x"), 1);
	assert_int_equal(ap_py_token_end("x", 1, 1), 1);
	assert_int_equal(ap_py_token_end("abc", 0, 2), 2);
	assert_int_equal(ap_py_token_end("'ab'", 0, 3), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_comments_and_strings, teardown),
		cmocka_unit_test_teardown(test_triple_quoted, teardown),
		cmocka_unit_test_teardown(test_fstrings, teardown),
		cmocka_unit_test_teardown(test_continuations, teardown),
		cmocka_unit_test_teardown(test_crlf_bom_tabs, teardown),
		cmocka_unit_test_teardown(test_lone_cr, teardown),
		cmocka_unit_test(test_line_start),
		cmocka_unit_test_teardown(test_form_feeds, teardown),
		cmocka_unit_test_teardown(test_simple_statements, teardown),
		cmocka_unit_test_teardown(test_indentation, teardown),
		cmocka_unit_test_teardown(test_compound, teardown),
		cmocka_unit_test_teardown(test_false_names, teardown),
		cmocka_unit_test_teardown(test_known_conditions, teardown),
		cmocka_unit_test_teardown(test_type_checking_bindings, teardown),
		cmocka_unit_test_teardown(test_def_params, teardown),
		cmocka_unit_test_teardown(test_methods_and_nesting, teardown),
		cmocka_unit_test_teardown(test_bindings, teardown),
		cmocka_unit_test_teardown(test_callables, teardown),
		cmocka_unit_test_teardown(test_long_statements, teardown),
		cmocka_unit_test_teardown(test_all, teardown),
		cmocka_unit_test_teardown(test_all_operations, teardown),
		cmocka_unit_test_teardown(test_all_references, teardown),
		cmocka_unit_test_teardown(test_docstrings, teardown),
		cmocka_unit_test_teardown(test_bound, teardown),
		cmocka_unit_test_teardown(test_bound_path, teardown),
		cmocka_unit_test_teardown(test_skimmed_tokens, teardown),
		cmocka_unit_test_teardown(test_errors, teardown),
		cmocka_unit_test_teardown(test_nesting_limit, teardown),
		cmocka_unit_test_teardown(test_pathological, teardown),
		cmocka_unit_test_teardown(test_bound_pathological, teardown),
		cmocka_unit_test_teardown(test_truncated_inputs, teardown),
		cmocka_unit_test_teardown(test_random_inputs, teardown),
		cmocka_unit_test_teardown(test_match_statement, teardown),
		cmocka_unit_test_teardown(test_loops, teardown),
		cmocka_unit_test_teardown(test_empty_inputs, teardown),
		cmocka_unit_test_teardown(test_unicode_names, teardown),
		cmocka_unit_test_teardown(test_async_continuation, teardown),
		cmocka_unit_test_teardown(test_bound_unicode_name, teardown),
		cmocka_unit_test(test_name_normalize),
		cmocka_unit_test_teardown(test_nul_and_invalid_utf8, teardown),
		cmocka_unit_test_teardown(test_input_too_large, teardown),
		cmocka_unit_test(test_token_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
