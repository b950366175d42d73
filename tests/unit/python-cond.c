/* SPDX-License-Identifier: MIT */
/* The Python reader's conditions with the target interpreter's facts (a
 * stub), and try/except ImportError with what it can import (a stub). The
 * table of conditions, tests/unit/python-conditions.txt, is checked against
 * CPython by tests/kinds/python-facts.sh. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/python.h"

static ap_py_module *mod;

static int teardown(void **state)
{
	(void)state;
	ap_py_module_free(mod);
	mod = NULL;
	return 0;
}

/* The facts a stub interpreter gives, and what it was asked. */
struct facts_stub {
	ap_py_facts facts;
	bool none; /* gives NULL */
	char level[16], platform[32], os_name[16];
	unsigned calls, asked;
};

static const ap_py_facts *stub_facts(void *ctx, unsigned need)
{
	struct facts_stub *s = ctx;

	s->calls++;
	s->asked |= need;
	return s->none ? NULL : &s->facts;
}

/* "3.12.3-final/linux/posix", "3.12/-/-", "-/-/-". */
static void stub_set(struct facts_stub *s, const char *spec)
{
	char version[32];
	int n;

	memset(s, 0, sizeof *s);
	assert_int_equal(sscanf(spec, "%31[^/]/%31[^/]/%15s", version, s->platform, s->os_name),
	                 3);
	if (strcmp(version, "-") != 0) {
		n = sscanf(version, "%d.%d.%d-%15s", &s->facts.major, &s->facts.minor,
		           &s->facts.micro, s->level);
		assert_true(n == 2 || n == 4);
		s->facts.nversion = n == 2 ? 2 : 3;
		s->facts.releaselevel = n == 4 ? s->level : NULL;
	}
	s->facts.platform = strcmp(s->platform, "-") != 0 ? s->platform : NULL;
	s->facts.os_name = strcmp(s->os_name, "-") != 0 ? s->os_name : NULL;
}

static void parse_with(const char *src, const ap_py_options *opt)
{
	teardown(NULL);
	if (ap_py_parse(&mod, src, strlen(src), opt) != 0)
		fail_msg("%s: %s", src, ap_error_last());
}

/* "true", "false" or "unknown": which arms of `if COND: x ... else: y`
 * bound their name. */
static const char *arms_taken(void)
{
	bool x = ap_py_lookup(mod, "x") != NULL, y = ap_py_lookup(mod, "y") != NULL;

	return x && y ? "unknown" : x ? "true" : y ? "false" : "neither";
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\n'))
		*--end = '\0';
	return s;
}

/* Every condition of the table, in a module with its prelude. */
static void test_condition_table(void **state)
{
	FILE *f = fopen(AP_SRCDIR "/tests/unit/python-conditions.txt", "r");
	char line[1024];
	unsigned lineno = 0, cases = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL) {
		char *field[4] = {NULL, NULL, NULL, NULL}, *at = line, *bar;
		struct facts_stub stub;
		ap_py_options opt = {.facts = stub_facts, .ctx = &stub};
		ap_buf src = AP_BUF_INIT;
		size_t n = 0;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		while (n < 4 && (bar = strstr(at, " |")) != NULL && n < 3) {
			*bar = '\0';
			field[n++] = trim(at);
			at = bar + 2;
		}
		field[n++] = trim(at);
		assert_true(n >= 3);
		stub_set(&stub, field[0]);
		/* The prelude's statements, then the condition. */
		at = n == 4 ? field[3] : "import sys; import os";
		while (*at != '\0') {
			size_t len = strcspn(at, ";");
			ap_buf_append(&src, at, len);
			ap_buf_putc(&src, '\n');
			at += len;
			while (*at == ';' || *at == ' ')
				at++;
		}
		ap_buf_printf(&src, "if %s:\n    x = 1\nelse:\n    y = 1\n", field[2]);
		parse_with(src.data, &opt);
		if (strcmp(arms_taken(), field[1]) != 0)
			fail_msg("python-conditions.txt:%u: `%s` with %s is %s, expected %s", lineno,
			         field[2], field[0], arms_taken(), field[1]);
		ap_buf_free(&src);
		cases++;
	}
	fclose(f);
	assert_true(cases > 100);
}

/* A match on a fact runs the case whose pattern it matches; without the
 * fact, every case may run. */
static void test_match_facts(void **state)
{
	static const struct {
		const char *facts, *subject, *want;
	} cases[] = {
		{"3.12.3-final/linux/posix", "sys.platform", "false"},
		{"3.12.3-final/win32/nt", "sys.platform", "true"},
		{"3.12.3-final/linux/posix", "os.name", "neither"},
		{"3.12.3-final/linux/posix", "sys.version_info[0]", "neither"},
		{"-/-/-", "sys.platform", "unknown"},
	};
	struct facts_stub stub;
	ap_py_options opt = {.facts = stub_facts, .ctx = &stub};
	char src[256];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		stub_set(&stub, cases[i].facts);
		snprintf(src, sizeof src,
		         "import sys\nimport os\nmatch %s:\n    case 'win32' | 'nt': x = 1\n"
		         "    case 'linux':\n        y = 1\n",
		         cases[i].subject);
		parse_with(src, &opt);
		if (strcmp(arms_taken(), cases[i].want) != 0)
			fail_msg("match %s with %s: %s, expected %s", cases[i].subject, cases[i].facts,
			         arms_taken(), cases[i].want);
	}
}

/* The facts are asked only when a condition of their form needs them, and
 * say which; a provider that has none leaves the condition unknown. */
static void test_facts_asked_lazily(void **state)
{
	static const struct {
		const char *src;
		unsigned calls, asked;
	} cases[] = {
		{"import sys\nif x:\n    pass\nif sys.argv: pass\n", 0, 0},
		{"import sys\nif False and sys.version_info >= (3, 8): a = 1\n", 0, 0},
		{"import sys\nif True or sys.platform == 'linux': a = 1\n", 0, 0},
		{"if sys.version_info >= (3, 8): a = 1\n", 0, 0},
		{"import sys\nif sys.version_info > sys.version_info: a = 1\n", 2,
		 AP_PY_FACT_VERSION},
		{"import sys\nif sys.platform == 'linux': a = 1\n", 1, AP_PY_FACT_PLATFORM},
		{"import os\nif os.name == 'nt': a = 1\n", 1, AP_PY_FACT_OS_NAME},
		{"if __name__ == '__main__': a = 1\n", 0, 0},
	};
	struct facts_stub stub;
	ap_py_options opt = {.facts = stub_facts, .ctx = &stub};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		stub_set(&stub, "3.12.3-final/linux/posix");
		parse_with(cases[i].src, &opt);
		assert_int_equal(stub.calls, cases[i].calls);
		assert_int_equal(stub.asked, cases[i].asked);
	}
	stub_set(&stub, "3.12.3-final/linux/posix");
	stub.none = true;
	parse_with("import sys\nif sys.version_info >= (3, 8):\n    x = 1\nelse:\n    y = 1\n",
	           &opt);
	assert_string_equal(arms_taken(), "unknown");
	/* Without a provider, the same. */
	parse_with("import sys\nif sys.platform == 'linux':\n    x = 1\nelse:\n    y = 1\n", NULL);
	assert_string_equal(arms_taken(), "unknown");
}

/* Conditions from an untrusted tree: long runs of not, long chains of or
 * and comparisons, brackets as deep as the tokenizer allows, are read in
 * time linear in their length and without deep recursion; one longer than
 * a statement keeps (PART_KEEP tokens) is unknown. */
static void test_hostile_conditions(void **state)
{
	static const struct {
		const char *before, *repeat, *middle, *after;
		int times;
		const char *value;
	} cases[] = {
		{"", "not ", "sys.platform == 'linux'", "", 4000, "true"},
		{"", "not ", "sys.platform == 'linux'", "", 200000, "unknown"},
		{"other", " and (3,) < sys.version_info < (4,) or q", "", "", 150, "unknown"},
		{"", "(not ", "sys.platform == 'win32'", ")", 150, "false"},
	};
	struct facts_stub stub;
	ap_py_options opt = {.facts = stub_facts, .ctx = &stub};
	ap_buf src = AP_BUF_INIT;

	(void)state;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		stub_set(&stub, "3.12.3-final/linux/posix");
		src.len = 0;
		ap_buf_printf(&src, "import sys\nif %s", cases[c].before);
		for (int i = 0; i < cases[c].times; i++)
			ap_buf_puts(&src, cases[c].repeat);
		ap_buf_puts(&src, cases[c].middle);
		for (int i = 0; i < cases[c].times; i++)
			ap_buf_puts(&src, cases[c].after);
		ap_buf_puts(&src, ":\n    x = 1\nelse:\n    y = 1\n");
		parse_with(src.data, &opt);
		assert_string_equal(arms_taken(), cases[c].value);
	}
	/* The facts asked once a condition, however deep. */
	assert_int_equal(stub.calls, 1);
	ap_buf_free(&src);
}

/* --- try: import ... except ImportError ---------------------------------- */

/* Modules as written, found ("+m") or not ("-m"), others not known; names
 * from them ("+m:x", "-m:x", "?m:x" not known, "=m:x" the module being
 * read), others found. */
static const char *const *stub_modules;
static ap_buf asked;

static int stub_can_import(void *ctx, const char *module, const char *name,
                           const ap_py_module *so_far)
{
	char *what = name ? ap_xasprintf("%s:%s", module, name) : ap_xstrdup(module);
	int found = name ? 1 : -1;

	(void)ctx;
	(void)so_far;
	ap_buf_printf(&asked, "%s%s", asked.len ? " " : "", what);
	for (const char *const *m = stub_modules; *m != NULL; m++)
		if (strcmp(*m + 1, what) == 0)
			found = **m == '=' ? AP_PY_IMPORT_SELF : **m == '?' ? -1 : **m == '+';
	free(what);
	return found;
}

/* The names bound, in order ("*" for a star import, "?x" for x bound
 * UNKNOWN where the ways the try may run disagree, "^x" for submodule x,
 * "-x" for x unbound: del, the end of `except ... as x`). */
static char *names(void)
{
	ap_buf b = AP_BUF_INIT;

	for (size_t i = 0; i < mod->nbindings; i++) {
		const ap_py_binding *x = &mod->bindings[i];
		ap_buf_printf(&b, "%s%s%s", i ? " " : "",
		              x->kind == AP_PY_BIND_UNKNOWN     ? "?"
		              : x->kind == AP_PY_BIND_SUBMODULE ? "^"
		              : x->kind == AP_PY_BIND_DEL       ? "-"
		                                                : "",
		              x->name ? x->name : "*");
	}
	return b.len ? ap_buf_detach(&b) : ap_xstrdup("");
}

static void try_case(const char *src, const char *const *modules, const char *want_names,
                     const char *want_asked)
{
	ap_py_options opt = {.can_import = stub_can_import};
	char *got;

	stub_modules = modules;
	asked.len = 0;
	parse_with(src, &opt);
	got = names();
	if (strcmp(got, want_names) != 0)
		fail_msg("%s: names '%s', expected '%s'", src, got, want_names);
	free(got);
	if (strcmp(asked.len ? asked.data : "", want_asked) != 0)
		fail_msg("%s: asked '%s', expected '%s'", src, asked.len ? asked.data : "",
		         want_asked);
}

static void test_try_import(void **state)
{
	static const char *const found[] = {"+triton", "+a", "+b", "+.x", "+m", NULL};
	static const char *const missing[] = {"-triton", "+a", "-b", "+.x", "-m", NULL};
	static const char *const none[] = {NULL};
	static const char *const lacks[] = {"+.x", "-.x:zz", "?.x:q", NULL};
	static const char *const self[] = {"+.", "=.:sub", "=.:gone", "+.sub", "-.gone", NULL};
	const char *src = "try:\n"
	                  "    import triton\n"
	                  "    HAVE = True  # cannot raise\n"
	                  "except ImportError:\n"
	                  "    HAVE = False\n"
	                  "    def f(): pass\n"
	                  "else:\n"
	                  "    g = 1\n"
	                  "finally:\n"
	                  "    h = 1\n";
	const ap_py_def *d;

	(void)state;
	/* Found: the body runs to its end, the handler never; else and finally run. */
	try_case(src, found, "triton HAVE g h", "triton");
	assert_int_equal(mod->ndefs, 1);
	assert_false(mod->defs[0].live);
	/* Not found: the handler runs, for certain; else does not. */
	try_case(src, missing, "HAVE f h", "triton");
	d = ap_py_find_def(mod, "f");
	assert_non_null(d);
	assert_int_equal(ap_py_lookup(mod, "HAVE")->kind, AP_PY_BIND_OTHER);
	/* Not known: the body and the handler are ways it may run. */
	try_case(src, none, "triton HAVE HAVE f g ?triton ?HAVE ?f ?g h", "triton");
	/* The import that fails ends the body: what it and the rest bind is not. */
	try_case("try:\n    import a, b, triton\n    c = 1\nexcept ImportError:\n    pass\n",
	         missing, "a", "a b");
	try_case("try:\n    from .x import y\n    from m import z\n    w = 1\n"
	         "except (ImportError, AttributeError):\n    y = z = None\n",
	         missing, "^x y y z", ".x .x:y m");
	try_case("try: import m; x = 1\nexcept ImportError: y = 1\n", missing, "y", "m");
	/* contextlib.suppress: a try whose one handler is empty. */
	try_case("import contextlib\nwith contextlib.suppress(ImportError):\n    import m\n    x = 1\n",
	         missing, "contextlib", "m");
	try_case("import contextlib\nwith (contextlib.suppress(ImportError)):\n    import m\n    x = 1\n",
	         found, "contextlib m x", "m");
	try_case("from contextlib import suppress\nwith suppress(KeyError):\n    import a\n    import m\n",
	         missing, "suppress a ?a", "a m");
	try_case("import contextlib\nwith contextlib.suppress(ImportError):\n    import a\n    f()\n"
	         "    x = 1\n",
	         found, "contextlib a x ?a ?x", "a");
	try_case("with other.suppress(ImportError):\n    import m\n    x = 1\n", missing, "", "m");
	/* A from-import fails at the first name its module lacks. */
	try_case("try:\n    from .x import y, zz, w\n    v = 1\nexcept ImportError:\n    u = 1\n",
	         lacks, "^x y u", ".x .x:y .x:zz");
	try_case("try:\n    from .x import q\nexcept ImportError:\n    q = None\n", lacks,
	         "^x q q ?x ?q", ".x .x:q");
	/* Of the module being read: its submodule, else what it bound so far
	 * (for certain only at the top level), unless a star import may have. */
	try_case("try:\n    from . import sub\nexcept ImportError:\n    sub = None\n", self, "sub",
	         ". .:sub .sub");
	try_case("try:\n    from . import gone\nexcept ImportError:\n    gone = None\n", self,
	         "gone", ". .:gone .gone");
	try_case("gone = 1\ntry:\n    from . import gone\nexcept ImportError:\n    b = 1\n", self,
	         "gone gone", ". .:gone .gone");
	try_case("gone = 1\nif q:\n    try:\n        from . import gone\n    except ImportError:\n"
	         "        b = 1\n",
	         self, "gone gone b ?gone ?b", ". .:gone .gone");
	try_case("from .m import *\ntry:\n    from . import gone\nexcept ImportError:\n    b = 1\n",
	         self, "^m * gone b ?gone ?b", ". .:gone .gone");
	try_case("try:\n    import b\n    def f(): pass\n    class K: pass\n    if q:\n        v = 1\n"
	         "except ImportError:\n    pass\n",
	         missing, "", "b");
	assert_false(mod->defs[0].live);
	/* The first handler that catches it runs: one that cannot is skipped. */
	try_case("try:\n    import m\nexcept ValueError:\n    a = 1\nexcept ModuleNotFoundError:\n"
	         "    b = 1\nexcept ImportError:\n    c = 1\n",
	         missing, "b", "m");
	/* the handler's name is unbound when it ends (e is the def before it
	 * no more) */
	try_case("def e(): pass\ntry:\n    import m\nexcept (KeyError, Exception) as e:\n    a = 1\n"
	         "except BaseException:\n    b = 1\n",
	         missing, "e a -e", "m");
	try_case("def e(): pass\ntry:\n    import m\nexcept ImportError as e:\n    a = 1\n", found,
	         "e m", "m");
	try_case("try:\n    import m\nexcept:\n    a = 1\n", missing, "a", "m");
	/* A handler that may catch it, or may not: it and the rest as before. */
	try_case("try:\n    import m\nexcept SomeError:\n    a = 1\nexcept ImportError:\n    b = 1\n"
	         "else:\n    c = 1\n",
	         missing, "a b ?a ?b", "m");
	try_case("try:\n    import m\nexcept (ImportError, errors.Other):\n    a = 1\n", missing,
	         "a ?a", "m");
	try_case("try:\n    import m\nexcept* ImportError:\n    a = 1\n", missing, "a ?a", "m");
	try_case("ImportError = KeyError\ntry:\n    import m\nexcept ImportError:\n    a = 1\n",
	         missing, "ImportError a ?a", "m");
	/* A statement that may raise, or a block, leaves it unknown; nothing
	 * after it is asked. */
	try_case("try:\n    import m\n    x = f()\n    import b\nexcept ImportError:\n    y = 1\n",
	         found, "m ?x b y ?m ?b ?y", "m");
	try_case("try:\n    import m\n    if q:\n        import b\nexcept ImportError:\n    y = 1\n",
	         found, "m b ?b y ?m ?y", "m");
	try_case("try:\n    pass\n    'doc'\nexcept ImportError:\n    y = 1\n", found, "", "");
	/* Not at module level, or in an arm not taken: not asked. */
	try_case("class K:\n    try:\n        import m\n    except ImportError:\n        pass\n"
	         "if False:\n    try:\n        import m\n    except ImportError:\n        y = 1\n",
	         missing, "K", "");
	/* In an arm of a condition not known, the try is read all the same. */
	try_case("if q:\n    try:\n        import m\n    except ImportError:\n        y = 1\n",
	         missing, "y ?y", "m");
	/* Without a provider nothing is known. */
	stub_modules = none;
	parse_with("try:\n    import m\nexcept ImportError:\n    y = 1\n", NULL);
	assert_int_equal(ap_py_lookup(mod, "y")->kind, AP_PY_BIND_UNKNOWN);
	ap_buf_free(&asked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_condition_table, teardown),
		cmocka_unit_test_teardown(test_match_facts, teardown),
		cmocka_unit_test_teardown(test_facts_asked_lazily, teardown),
		cmocka_unit_test_teardown(test_hostile_conditions, teardown),
		cmocka_unit_test_teardown(test_try_import, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
