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
	return ap_py_lookup(mod, name, false);
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

/* The names bound, in order, joined by spaces ("*" for a star import). */
static char *names(void)
{
	ap_buf b = AP_BUF_INIT;
	for (size_t i = 0; i < mod->nbindings; i++) {
		if (i > 0)
			ap_buf_putc(&b, ' ');
		ap_buf_puts(&b, mod->bindings[i].name ? mod->bindings[i].name : "*");
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
	assert_names("os f C y");
	assert_int_equal(def("f")->nparams, 2);
	assert_int_equal(def("C.m")->line, 6);
	assert_string_at(0, "v", 6);
	assert_string_at(1, "crlf", 7);
	assert_string_at(2, "z", 8);
	/* A tab reaches column 8, as eight spaces do. */
	parse_ok("if x:\n"
	         "\ta = 1\n"
	         "        b = 2\n"
	         "c = 3\n");
	assert_names("a b c");
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
	assert_names("a b c d e f g h r s t u v");
	assert_true(binding("u")->in_except);
	assert_false(binding("v")->in_except);
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
	assert_names("x y z w");
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
	assert_names("List List List fast fast fast ok done i w w2 w3 co");
	assert_int_equal(mod->bindings[0].kind, AP_PY_BIND_FROM);
	assert_int_equal(mod->bindings[1].kind, AP_PY_BIND_ALIAS);
	assert_int_equal(mod->bindings[2].kind, AP_PY_BIND_DEF);
	assert_false(mod->bindings[3].in_except);
	assert_true(mod->bindings[4].in_except);
	assert_int_equal(mod->bindings[4].kind, AP_PY_BIND_IMPORT);
	assert_true(mod->bindings[5].in_except);
	assert_int_equal(mod->bindings[5].kind, AP_PY_BIND_CLASS);
	assert_false(binding("ok")->in_except);
	/* The last binding wins; skipping handlers finds the import. */
	assert_int_equal(ap_py_lookup(mod, "fast", false)->kind, AP_PY_BIND_CLASS);
	assert_int_equal(ap_py_lookup(mod, "fast", true)->kind, AP_PY_BIND_FROM);
	assert_null(ap_py_lookup(mod, "nothing", false));
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
	assert_names("a b mode c e g i K");
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
	assert_names("* mode a a b mode c d e f g h i K");
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
	assert_names("TYPE_CHECKING typing f t v a4 b1 c1 x d2 K");
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
	assert_names("a b d e");
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
		{"if TYPE_CHECKING: a = 1\n", "a"},
		{"from typing_extensions import TYPE_CHECKING\nif TYPE_CHECKING: a = 1\n",
		 "TYPE_CHECKING a"},
		{"from .typing import TYPE_CHECKING\nif TYPE_CHECKING: a = 1\n", "TYPE_CHECKING a"},
		{"from typing import TYPE_CHECKING as TC\nif TC: a = 1\n", "TC a"},
		{"from typing import Any as TYPE_CHECKING\nif TYPE_CHECKING: a = 1\n",
		 "TYPE_CHECKING a"},
		{"from typing import TYPE_CHECKING\nTYPE_CHECKING = True\n"
		 "if TYPE_CHECKING: a = 1\n", "TYPE_CHECKING TYPE_CHECKING a"},
		{"TYPE_CHECKING = True\nif x:\n    from typing import TYPE_CHECKING\n"
		 "if TYPE_CHECKING: a = 1\n", "TYPE_CHECKING TYPE_CHECKING a"},
		{"from typing import TYPE_CHECKING\nfrom .m import *\nif TYPE_CHECKING: a = 1\n",
		 "TYPE_CHECKING * a"},
		{"import typing\nif TYPE_CHECKING: a = 1\n", "typing a"},
		{"import typing as t\nif t.TYPE_CHECKING: a = 1\n", "t a"},
		{"import typing.re\nif typing.TYPE_CHECKING: a = 1\n", "typing a"},
		{"import os as typing\nif typing.TYPE_CHECKING: a = 1\n", "typing a"},
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
	assert_names("outer C D");
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
	assert_binding(4, AP_PY_BIND_FROM, "a1", ".ops.attention", "a1", 3);
	assert_binding(5, AP_PY_BIND_FROM, "c1", ".ops.attention", "b1", 3);
	assert_binding(6, AP_PY_BIND_FROM, "d1", ".ops.attention", "d1", 4);
	assert_binding(7, AP_PY_BIND_FROM, "e1", ".", "e1", 5);
	assert_binding(8, AP_PY_BIND_FROM, "g1", "..", "f1", 6);
	assert_binding(9, AP_PY_BIND_FROM, "h1", "...pkg", "h1", 7);
	assert_binding(10, AP_PY_BIND_STAR, NULL, "aiter.ops", NULL, 8);
	assert_binding(11, AP_PY_BIND_ALIAS, "alias", NULL, "os", 9);
	assert_binding(12, AP_PY_BIND_ALIAS, "m", NULL, "other", 10);
	assert_binding(13, AP_PY_BIND_ALIAS, "n", NULL, "other", 10);
	assert_binding(14, AP_PY_BIND_OTHER, "ann", NULL, NULL, 11);
	assert_binding(15, AP_PY_BIND_ALIAS, "ann_alias", NULL, "other", 12);
	assert_binding(16, AP_PY_BIND_OTHER, "p", NULL, NULL, 14);
	assert_binding(17, AP_PY_BIND_OTHER, "q", NULL, NULL, 14);
	assert_binding(18, AP_PY_BIND_OTHER, "r", NULL, NULL, 14);
	assert_binding(19, AP_PY_BIND_OTHER, "s", NULL, NULL, 15);
	assert_binding(20, AP_PY_BIND_OTHER, "t", NULL, NULL, 15);
	assert_binding(21, AP_PY_BIND_OTHER, "aug", NULL, NULL, 16);
	assert_binding(22, AP_PY_BIND_OTHER, "fn", NULL, NULL, 21);
	assert_binding(23, AP_PY_BIND_OTHER, "wal", NULL, NULL, 22);
	assert_binding(24, AP_PY_BIND_DEF, "f", NULL, NULL, 25);
	assert_binding(25, AP_PY_BIND_CLASS, "C", NULL, NULL, 28);
	assert_int_equal(mod->nbindings, 26);
	assert_null(binding("bare"));
	assert_null(binding("gl"));
	assert_null(binding("inside"));
	/* STAR bindings have no name: lookup passes them by. */
	assert_null(binding("*"));
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

	/* What cannot be read leaves has_all false: public names then count. */
	parse_ok("__all__ = ['a']\n"
	         "__all__ += [n for n in dir() if not n.startswith('_')]\n"
	         "__all__.append('b')\n");
	assert_false(mod->has_all);
	assert_int_equal(mod->nall, 0);
	parse_ok("__all__ = ['a']\n__all__.append()\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = ['a']\n__all__.append(name)\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = ['a']\n__all__.remove('a')\n");
	assert_true(mod->has_all);
	assert_int_equal(mod->nall, 1);
	parse_ok("__all__ = make_all()\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = ('a')\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = [f'a']\n");
	assert_false(mod->has_all);
	parse_ok("__all__ = ['a']\n"
	         "__all__.extend(other.__all__)\n");
	assert_false(mod->has_all);
	/* A later readable assignment starts over. */
	parse_ok("__all__ = list(x)\n"
	         "__all__ = ['z']\n");
	assert_true(mod->has_all);
	assert_int_equal(mod->nall, 1);
	assert_string_equal(mod->all[0], "z");
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

	/* A module starting with code has no docstring. */
	parse_ok("x = 1\n'a string'\n");
	assert_int_equal(mod->nstrings, 1);
	parse_ok("# comment\n\n\"\"\"doc\"\"\"\n");
	assert_int_equal(mod->nstrings, 0);
}

/* --- Bounds --------------------------------------------------------------- */

static void assert_bound(const char *body, const char *name, bool found, long long bound,
                         unsigned line)
{
	ap_buf b = AP_BUF_INIT;
	long long got;
	unsigned got_line;
	bool got_found;

	ap_buf_printf(&b, "def f(nhead, x, name):\n%s\nafter = 'nhead <= 1'\n", body);
	parse_ok(b.data);
	ap_py_def_bound(mod, def("f"), name, &got, &got_line, &got_found);
	if (got_found != found || got != bound || got_line != line)
		fail_msg("%s: found %d bound %lld line %u", body, got_found, got, got_line);
	ap_buf_free(&b);
}

static void test_bound(void **state)
{
	(void)state;
	assert_bound("    assert nhead <= 128", "nhead", true, 128, 2);
	assert_bound("    assert nhead < 128", "nhead", true, 127, 2);
	assert_bound("    if 64 >= nhead: pass", "nhead", true, 64, 2);
	assert_bound("    if 64 > nhead: pass", "nhead", true, 63, 2);
	assert_bound("    assert 1 <= nhead <= 96, 'range'", "nhead", true, 96, 2);
	assert_bound("    assert 0 < nhead < 0x80", "nhead", true, 127, 2);
	assert_bound("    assert nhead <= 1_024", "nhead", true, 1024, 2);
	assert_bound("    assert nhead <= -1", "nhead", true, -1, 2);
	assert_bound("    assert -4 >= nhead", "nhead", true, -4, 2);
	/* Lower bounds and other comparisons give none. */
	assert_bound("    assert nhead >= 4 and 4 <= nhead and nhead == 3", "nhead", false, 0, 0);
	/* Only the bare name next to the operator counts. */
	assert_bound("    assert x.nhead <= 4\n"
	             "    assert nhead.shape <= 4\n"
	             "    assert nhead[0] <= 4\n"
	             "    assert f(nhead) <= 4\n"
	             "    assert nhead + 1 <= 4\n"
	             "    assert 2 * nhead <= 4\n"
	             "    assert -nhead <= 4\n"
	             "    assert 4 >= nhead + 1\n"
	             "    assert 4 >= nhead.x\n"
	             "    assert 4 >= nhead(1)\n"
	             "    assert x - 4 >= nhead\n"
	             "    assert nhead <= 4 + x\n"
	             "    assert nhead <= 4.0\n"
	             "    assert nhead <= 4j\n"
	             "    assert nhead <= y\n",
	             "nhead", false, 0, 0);
	/* Comments and strings never count; the largest bound wins. */
	assert_bound("    # nhead <= 1000\n"
	             "    s = 'nhead <= 2000' f'{nhead <= 3000}'\n"
	             "    if nhead <= 16 or (nhead < 33 and x):\n"
	             "        return [nhead <= 8]\n"
	             "    def inner(): return nhead <= 64\n"
	             "    while not nhead <= 32: pass",
	             "nhead", true, 64, 6);
	/* Statements on separate lines stay apart. */
	assert_bound("    y = 4\n"
	             "    nhead <= 3\n"
	             "    z = (nhead\n"
	             "         <= 9)",
	             "nhead", true, 9, 5);
	/* A tie keeps the first line. */
	assert_bound("    assert nhead <= 8\n"
	             "    assert nhead < 9",
	             "nhead", true, 8, 2);
	assert_bound("    return x", "nhead", false, 0, 0);
	assert_bound("    assert name <= 9223372036854775807\n"
	             "    assert name <= 9223372036854775808",
	             "name", true, 9223372036854775807LL, 2);
	assert_bound("    assert name <= -9223372036854775808", "name", true,
	             -9223372036854775807LL - 1, 2);
	assert_bound("    assert name < -9223372036854775808", "name", false, 0, 0);
	/* A one-line def. */
	parse_ok("def g(n): return n <= 5\n"
	         "def h(n):\n"
	         "    pass\n"
	         "n <= 100\n");
	{
		long long bound;
		unsigned line;
		bool found;
		ap_py_def_bound(mod, def("g"), "n", &bound, &line, &found);
		assert_true(found);
		assert_int_equal(bound, 5);
		assert_int_equal(line, 1);
		ap_py_def_bound(mod, def("h"), "n", &bound, &line, &found);
		assert_false(found);
		assert_int_equal(bound, 0);
	}
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
	assert_names("y");
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
 * and sanitizers or valgrind slow the linear work many times. */
#define FAST_SECONDS 10.0

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
	const size_t big = 16u << 20;
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
	assert_true(parse_defs(200000) < FAST_SECONDS);
}

/* Asks every def for a bound on name, for what it may read. */
static void all_bounds(const char *name)
{
	for (size_t i = 0; i < mod->ndefs; i++) {
		long long bound;
		unsigned line;
		bool found;
		ap_py_def_bound(mod, &mod->defs[i], name, &bound, &line, &found);
		assert_true(found || bound == 0);
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
	assert_names("go go match");
	assert_int_equal(mod->bindings[0].kind, AP_PY_BIND_FROM);
	assert_string_at(0, "go", 2);
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
	parse_ok("try:\n    x = f()\nexcept E:\n    y = 1\n");
	assert_null(ap_py_lookup(mod, "y", true));
	assert_non_null(ap_py_lookup(mod, "y", false));
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
		cmocka_unit_test_teardown(test_simple_statements, teardown),
		cmocka_unit_test_teardown(test_indentation, teardown),
		cmocka_unit_test_teardown(test_compound, teardown),
		cmocka_unit_test_teardown(test_false_names, teardown),
		cmocka_unit_test_teardown(test_known_conditions, teardown),
		cmocka_unit_test_teardown(test_type_checking_bindings, teardown),
		cmocka_unit_test_teardown(test_def_params, teardown),
		cmocka_unit_test_teardown(test_methods_and_nesting, teardown),
		cmocka_unit_test_teardown(test_bindings, teardown),
		cmocka_unit_test_teardown(test_long_statements, teardown),
		cmocka_unit_test_teardown(test_all, teardown),
		cmocka_unit_test_teardown(test_docstrings, teardown),
		cmocka_unit_test_teardown(test_bound, teardown),
		cmocka_unit_test_teardown(test_skimmed_tokens, teardown),
		cmocka_unit_test_teardown(test_errors, teardown),
		cmocka_unit_test_teardown(test_nesting_limit, teardown),
		cmocka_unit_test_teardown(test_pathological, teardown),
		cmocka_unit_test_teardown(test_truncated_inputs, teardown),
		cmocka_unit_test_teardown(test_random_inputs, teardown),
		cmocka_unit_test_teardown(test_match_statement, teardown),
		cmocka_unit_test_teardown(test_empty_inputs, teardown),
		cmocka_unit_test_teardown(test_nul_and_invalid_utf8, teardown),
		cmocka_unit_test_teardown(test_input_too_large, teardown),
		cmocka_unit_test(test_token_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
