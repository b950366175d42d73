/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/rules.h"

/* --- Helpers. ------------------------------------------------------------- */

static ap_ruleset *new_set(void)
{
	ap_ruleset *rs = NULL;
	assert_int_equal(ap_ruleset_new(&rs), 0);
	assert_non_null(rs);
	return rs;
}

static ap_ruleset *load_ok(const char *yaml)
{
	ap_ruleset *rs = new_set();
	int rc = ap_ruleset_load_buffer(rs, "t.yaml", yaml, strlen(yaml));

	if (rc != 0)
		fail_msg("load failed: %s", ap_error_last());
	return rs;
}

static ap_ruleset *finish_ok(const char *yaml)
{
	ap_ruleset *rs = load_ok(yaml);

	if (ap_ruleset_finish(rs) != 0)
		fail_msg("finish failed: %s", ap_error_last());
	return rs;
}

/* Loading yaml (len bytes) as t.yaml fails with exactly msg, and leaves the
 * set empty. */
static void load_fails_n(const char *yaml, size_t len, const char *msg)
{
	ap_ruleset *rs = new_set();

	ap_error_clear();
	assert_int_equal(ap_ruleset_load_buffer(rs, "t.yaml", yaml, len), AP_EINPUT);
	assert_string_equal(ap_error_last(), msg);
	assert_int_equal(rs->nrules, 0);
	assert_int_equal(rs->nprobes, 0);
	assert_int_equal(rs->nfiles, 0);
	ap_ruleset_free(rs);
}

static void load_fails(const char *yaml, const char *msg)
{
	load_fails_n(yaml, strlen(yaml), msg);
}

/* The kind table's keys as the loader's messages list them: quoted ('a', 'b'
 * or 'c'), or plain (a, b, c). */
static char *kind_keys(bool quoted)
{
	ap_buf b = AP_BUF_INIT;

	for (size_t i = 0; i < ap_nkinds; i++) {
		const char *sep = i == 0 ? "" : quoted && i + 1 == ap_nkinds ? " or " : ", ";
		ap_buf_printf(&b, quoted ? "%s'%s'" : "%s%s", sep, ap_kinds[i]->key);
	}
	return ap_buf_detach(&b);
}

static void finish_fails(const char *yaml, const char *msg)
{
	ap_ruleset *rs = load_ok(yaml);

	assert_int_equal(ap_ruleset_finish(rs), AP_EINPUT);
	assert_string_equal(ap_error_last(), msg);
	ap_ruleset_free(rs);
}

/* The start of a rule, for tests that add its other keys. */
#define RULE_HEAD "rules:\n  - id: r\n    file: a.cu\n"

static char *tmpdir_new(void)
{
	char *dir = ap_xstrdup("/tmp/test-rules-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char *path = ap_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	free(path);
}

static void rm_tree(const char *dir)
{
	char *cmd = ap_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* --- Successful loads. ---------------------------------------------------- */

static void test_rule_all_fields(void **state)
{
	ap_ruleset *rs = load_ok("version: 1\n"
	                         "rules:\n"
	                         "  - id: mla.reduce.h24_d512\n"
	                         "    description: the reducer has 24 x 512\n"
	                         "    file: [csrc/reduce.cu, aiter_meta/csrc/reduce.cu]\n"
	                         "    language: c\n"
	                         "    normalize: strip-whitespace\n"
	                         "    regex: 'CASE\\((?<heads>\\d+),(?<dim>\\d+)'\n"
	                         "    collect: all\n");
	const ap_rule *r;

	(void)state;
	assert_int_equal(rs->nrules, 1);
	assert_int_equal(rs->nfiles, 1);
	assert_string_equal(rs->files[0], "t.yaml");
	r = &rs->rules[0];
	assert_string_equal(r->id, "mla.reduce.h24_d512");
	assert_string_equal(r->description, "the reducer has 24 x 512");
	assert_int_equal(r->npaths, 2);
	assert_string_equal(r->paths[0], "csrc/reduce.cu");
	assert_string_equal(r->paths[1], "aiter_meta/csrc/reduce.cu");
	assert_int_equal(r->lang, AP_LANG_C);
	assert_int_equal(r->ws, AP_WS_STRIP);
	assert_string_equal(r->kind->key, "regex");
	assert_string_equal(r->pattern, "CASE\\((?<heads>\\d+),(?<dim>\\d+)");
	assert_int_equal(r->collect, AP_COLLECT_ALL);
	assert_non_null(r->state);
	assert_ptr_equal(r->loc.file, rs->files[0]);
	assert_int_equal(r->loc.line, 3);
	assert_int_equal(r->loc.col, 9);
	assert_ptr_equal(ap_ruleset_find_rule(rs, "mla.reduce.h24_d512"), r);
	assert_null(ap_ruleset_find_probe(rs, "mla.reduce.h24_d512"));
	assert_null(ap_ruleset_find_rule(rs, "mla.reduce"));
	ap_ruleset_free(rs);
}

static void test_rule_defaults(void **state)
{
	ap_ruleset *rs = load_ok("rules:\n"
	                         "  - {id: a, file: x.py, literal: 'def f('}\n"
	                         "  - id: b\n"
	                         "    file: x.cu\n"
	                         "    token: num_heads == 24\n"
	                         "  - id: c\n"
	                         "    file: x.txt\n"
	                         "    language: python\n"
	                         "    normalize: keep\n"
	                         "    collect: first\n"
	                         "    token: |\n"
	                         "      def f(\n");
	const ap_rule *r;

	(void)state;
	assert_int_equal(rs->nrules, 3);
	r = ap_ruleset_find_rule(rs, "a");
	assert_non_null(r);
	assert_null(r->description);
	assert_int_equal(r->npaths, 1);
	assert_string_equal(r->paths[0], "x.py");
	assert_int_equal(r->lang, AP_LANG_AUTO);
	assert_int_equal(r->ws, AP_WS_KEEP);
	assert_string_equal(r->kind->key, "literal");
	assert_string_equal(r->pattern, "def f(");
	assert_int_equal(r->collect, AP_COLLECT_FIRST);
	assert_int_equal(r->loc.line, 2);
	assert_int_equal(r->loc.col, 10);
	r = ap_ruleset_find_rule(rs, "b");
	assert_string_equal(r->kind->key, "token");
	assert_string_equal(r->pattern, "num_heads == 24");
	assert_non_null(r->state);
	r = ap_ruleset_find_rule(rs, "c");
	assert_int_equal(r->lang, AP_LANG_PYTHON);
	assert_string_equal(r->kind->key, "token");
	assert_string_equal(r->pattern, "def f(\n");
	ap_ruleset_free(rs);
}

static void test_probe_all_fields(void **state)
{
	ap_ruleset *rs = finish_ok("rules:\n"
	                           "  - {id: r1, file: a, literal: x}\n"
	                           "  - {id: r2, file: a, literal: y}\n"
	                           "probes:\n"
	                           "  - id: p\n"
	                           "    description: both, and not the other\n"
	                           "    requires:\n"
	                           "      all:\n"
	                           "        - r1\n"
	                           "        - any: [r2, {not: q}]\n"
	                           "        - not: {all: [r1]}\n"
	                           "    launch:\n"
	                           "      kernel: mla_decode\n"
	                           "      heads: 24\n"
	                           "      pad_to: 32\n"
	                           "      head_dim: 512\n"
	                           "      rope: 64\n"
	                           "      batch: 4\n"
	                           "      context: 4096\n"
	                           "      page_size: 16\n"
	                           "      timeout: 2.5\n"
	                           "  - id: q\n"
	                           "    requires: r2\n");
	const ap_probe *p = ap_ruleset_find_probe(rs, "p");
	const ap_probe *q = ap_ruleset_find_probe(rs, "q");
	const ap_expr *e;
	const ap_launch_spec *l;

	(void)state;
	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal(rs->nprobes, 2);
	/* p requires q, so q comes first. */
	assert_ptr_equal(&rs->probes[0], q);
	assert_ptr_equal(&rs->probes[1], p);
	assert_string_equal(p->description, "both, and not the other");
	assert_int_equal(p->loc.line, 5);
	assert_int_equal(p->loc.col, 9);

	e = p->requires;
	assert_int_equal(e->kind, AP_EXPR_ALL);
	assert_int_equal(e->nkids, 3);
	assert_int_equal(e->loc.line, 8);
	assert_int_equal(e->loc.col, 7);
	assert_int_equal(e->kids[0]->kind, AP_EXPR_REF);
	assert_string_equal(e->kids[0]->ref, "r1");
	assert_false(e->kids[0]->ref_probe);
	assert_int_equal(e->kids[0]->ref_index, 0);
	assert_int_equal(e->kids[0]->loc.line, 9);
	assert_int_equal(e->kids[0]->loc.col, 11);

	e = p->requires->kids[1];
	assert_int_equal(e->kind, AP_EXPR_ANY);
	assert_int_equal(e->nkids, 2);
	assert_string_equal(e->kids[0]->ref, "r2");
	assert_false(e->kids[0]->ref_probe);
	assert_int_equal(e->kids[0]->ref_index, 1);
	assert_int_equal(e->kids[1]->kind, AP_EXPR_NOT);
	assert_int_equal(e->kids[1]->nkids, 1);
	assert_string_equal(e->kids[1]->kids[0]->ref, "q");
	assert_true(e->kids[1]->kids[0]->ref_probe);
	assert_int_equal(e->kids[1]->kids[0]->ref_index, 0); /* after reordering */

	e = p->requires->kids[2];
	assert_int_equal(e->kind, AP_EXPR_NOT);
	assert_int_equal(e->kids[0]->kind, AP_EXPR_ALL);
	assert_string_equal(e->kids[0]->kids[0]->ref, "r1");

	l = p->launch;
	assert_non_null(l);
	assert_string_equal(l->kernel, "mla_decode");
	assert_int_equal(l->heads, 24);
	assert_int_equal(l->pad_to, 32);
	assert_int_equal(l->head_dim, 512);
	assert_int_equal(l->rope, 64);
	assert_int_equal(l->batch, 4);
	assert_int_equal(l->context, 4096);
	assert_int_equal(l->page_size, 16);
	assert_true(l->timeout_s == 2.5);
	assert_int_equal(l->loc.line, 13);
	assert_int_equal(l->loc.col, 7);

	assert_null(q->launch);
	assert_null(q->description);
	ap_ruleset_free(rs);
}

static void test_launch_defaults(void **state)
{
	ap_ruleset *rs = load_ok("probes:\n"
	                         "  - id: p\n"
	                         "    requires: r\n"
	                         "    launch: {kernel: mla_decode, heads: 128, head_dim: 512,"
	                         " rope: 0, timeout: 30}\n");
	const ap_launch_spec *l = rs->probes[0].launch;

	(void)state;
	assert_int_equal(l->heads, 128);
	assert_int_equal(l->pad_to, 0);
	assert_int_equal(l->rope, 0);
	assert_int_equal(l->batch, 0);
	assert_int_equal(l->context, 0);
	assert_int_equal(l->page_size, 0);
	assert_true(l->timeout_s == 30.0);
	ap_ruleset_free(rs);
}

static void test_empty_sequences_and_probes_only(void **state)
{
	ap_ruleset *rs = load_ok("rules: []\nprobes: []\n");

	(void)state;
	assert_int_equal(rs->nrules, 0);
	assert_int_equal(rs->nprobes, 0);
	assert_int_equal(rs->nfiles, 1);
	assert_int_equal(ap_ruleset_finish(rs), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "no rules and no probes: the 1 rule pack(s) loaded define none");
	ap_ruleset_free(rs);

	/* A BOM and CRLF line endings are fine. */
	rs = load_ok("\xEF\xBB\xBFprobes:\r\n  - id: p\r\n    requires: p2\r\n");
	assert_int_equal(rs->nprobes, 1);
	assert_int_equal(rs->probes[0].loc.line, 2);
	ap_ruleset_free(rs);
}

static void test_order_after_finish(void **state)
{
	/* a needs c, d needs b and a, b and e need nothing: depth first in
	 * load order, each probe right after what it requires. */
	ap_ruleset *rs = finish_ok("rules:\n"
	                           "  - {id: r, file: f, literal: x}\n"
	                           "probes:\n"
	                           "  - {id: a, requires: {all: [r, c]}}\n"
	                           "  - {id: b, requires: r}\n"
	                           "  - {id: c, requires: {not: r}}\n"
	                           "  - {id: d, requires: {any: [b, a]}}\n"
	                           "  - {id: e, requires: r}\n");
	const char *want[] = {"c", "a", "b", "d", "e"};

	(void)state;
	assert_int_equal(rs->nprobes, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(rs->probes[i].id, want[i]);
		assert_ptr_equal(ap_ruleset_find_probe(rs, want[i]), &rs->probes[i]);
	}
	/* References follow the moved probes. */
	assert_int_equal(rs->probes[3].requires->kids[0]->ref_index, 2);
	assert_int_equal(rs->probes[3].requires->kids[1]->ref_index, 1);
	assert_int_equal(rs->probes[1].requires->kids[1]->ref_index, 0);
	/* Finishing again changes nothing. */
	assert_int_equal(ap_ruleset_finish(rs), 0);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(rs->probes[i].id, want[i]);
	ap_ruleset_free(rs);
}

static void test_long_probe_chain(void **state)
{
	/* p0 requires p1 ... requires p4999: ordering must not recurse. */
	ap_buf y = AP_BUF_INIT;
	ap_ruleset *rs;
	const size_t n = 5000;

	(void)state;
	ap_buf_puts(&y, "rules: [{id: r, file: f, literal: x}]\nprobes:\n");
	for (size_t i = 0; i + 1 < n; i++)
		ap_buf_printf(&y, "  - {id: p%zu, requires: p%zu}\n", i, i + 1);
	ap_buf_printf(&y, "  - {id: p%zu, requires: r}\n", n - 1);
	rs = finish_ok(y.data);
	assert_int_equal(rs->nprobes, n);
	assert_string_equal(rs->probes[0].id, "p4999");
	assert_string_equal(rs->probes[n - 1].id, "p0");
	ap_ruleset_free(rs);
	ap_buf_free(&y);
}

/* --- signatures: the modules whose callables the scan records. ------------ */

static void test_signatures(void **state)
{
	ap_ruleset *rs;

	(void)state;
	rs = load_ok("signatures:\n  - module: aiter\n    assume_false: [A, B]\n"
	             "  - {module: aiter.mla}\n");
	assert_int_equal(rs->nsigs, 2);
	assert_string_equal(rs->sigs[0].module, "aiter");
	assert_int_equal(rs->sigs[0].loc.line, 2);
	assert_string_equal(rs->sigs[1].module, "aiter.mla");
	ap_ruleset_free(rs);
	load_fails("signatures: aiter\n", "t.yaml:1:13: 'signatures' must be a sequence, not a string");
	load_fails("signatures: [aiter]\n",
	           "t.yaml:1:14: an entry of 'signatures' must be a mapping, not a string");
	load_fails("signatures: [{}]\n",
	           "t.yaml:1:14: missing required key 'module' in an entry of 'signatures'");
	load_fails("signatures: [{module: a-b}]\n",
	           "t.yaml:1:23: 'module' must be a module name (a.b.c), not 'a-b'");
	load_fails("signatures: [{module: a, from: b}]\n",
	           "t.yaml:1:26: unknown key 'from' in an entry of 'signatures' (allowed: module, "
	           "assume_false)");
	load_fails("signatures: [{module: a}, {module: a}]\n",
	           "t.yaml:1:27: the signatures of a are already asked at t.yaml:1:14");
}

/* --- Errors of the file as a whole. --------------------------------------- */

static void test_document_errors(void **state)
{
	(void)state;
	load_fails("", "t.yaml:1:1: empty rule pack: expected a mapping with 'rules' and/or 'probes'");
	load_fails("# nothing\n\n",
	           "t.yaml:1:1: empty rule pack: expected a mapping with 'rules' and/or 'probes'");
	load_fails("---\n",
	           "t.yaml:1:1: empty rule pack: expected a mapping with 'rules' and/or 'probes'");
	load_fails("- a\n", "t.yaml:1:1: a rule pack must be a mapping with 'rules' and/or "
	                    "'probes', not a sequence");
	load_fails("just text\n", "t.yaml:1:1: a rule pack must be a mapping with 'rules' and/or "
	                          "'probes', not a string");
	load_fails("version: 1\n",
	           "t.yaml:1:1: missing 'rules' or 'probes' in the top-level mapping");
	load_fails("rules: []\nextra: 1\n",
	           "t.yaml:2:1: unknown key 'extra' in the top-level mapping "
	           "(allowed: version, rules, probes, signatures)");
	load_fails("rules: []\nrules: []\n",
	           "t.yaml:2:1: duplicate key 'rules' (first at t.yaml:1:1)");
	load_fails("[a]: 1\n", "t.yaml:1:1: keys must be strings, not a sequence");
	load_fails("\"rules\\0x\": []\n", "t.yaml:1:1: keys must not contain a NUL byte");
	load_fails("version: 2\nrules: []\n",
	           "t.yaml:1:10: unsupported version 2 (this aiter-probe reads version 1)");
	load_fails("version: one\nrules: []\n", "t.yaml:1:10: 'version' must be an integer, not 'one'");
	load_fails("version: '1'\nrules: []\n",
	           "t.yaml:1:10: 'version' must be an integer, not a quoted string");
	load_fails("rules: {}\n", "t.yaml:1:8: 'rules' must be a sequence, not a mapping");
	load_fails("probes:\n", "t.yaml:1:8: 'probes' must be a sequence, not null");
	load_fails("rules:\n  - just-a-string\n", "t.yaml:2:5: a rule must be a mapping, not a string");
	load_fails("probes:\n  - [p]\n", "t.yaml:2:5: a probe must be a mapping, not a sequence");
	load_fails("rules: []\n---\nprobes: []\n",
	           "t.yaml:2:1: a rule pack holds one YAML document; a second one starts here");
}

static void test_yaml_syntax_errors(void **state)
{
	(void)state;
	load_fails("rules: [a\n",
	           "t.yaml:2:1: did not find expected ',' or ']' (while parsing a flow sequence at 1:8)");
	load_fails("rules:\n  - id: a\n   file: b\n",
	           "t.yaml:3:4: did not find expected '-' indicator "
	           "(while parsing a block collection at 2:3)");
	load_fails("rules: 'open\n",
	           "t.yaml:2:1: found unexpected end of stream (while scanning a quoted scalar at 1:8)");
	load_fails("rules:\n\t- a\n",
	           "t.yaml:2:1: found character that cannot start any token "
	           "(while scanning for the next token at 2:1)");
}

static void test_not_text(void **state)
{
	(void)state;
	load_fails_n("rules: []\n\0\0", 12,
	             "t.yaml:2:1: not UTF-8 text: control characters are not allowed (0x0)");
	load_fails("rules: [\xff]\n",
	           "t.yaml:1:9: not UTF-8 text: invalid leading UTF-8 octet (0xFF)");
	load_fails("rules: []\n# caf\xc3\xa9 \xc3\n",
	           "t.yaml:2:9: not UTF-8 text: invalid trailing UTF-8 octet (0xA)");
	/* UTF-16 is not guessed at. */
	load_fails_n("\xff\xfer\0u\0", 6,
	             "t.yaml:1:1: not UTF-8 text: invalid leading UTF-8 octet (0xFF)");
}

static void test_anchors_aliases_tags(void **state)
{
	ap_buf lol = AP_BUF_INIT;
	clock_t start;

	(void)state;
	load_fails("rules: &a []\nprobes: *a\n", "t.yaml:1:8: YAML anchors (&a) are not supported");
	load_fails("rules: *a\n", "t.yaml:1:8: YAML aliases (*a) are not supported");
	load_fails("rules: !!seq []\n",
	           "t.yaml:1:8: YAML tags (tag:yaml.org,2002:seq) are not supported");
	load_fails(RULE_HEAD "    literal: !x y\n", "t.yaml:4:14: YAML tags (!x) are not supported");

	/* A billion laughs is refused at its first anchor, at once. */
	ap_buf_puts(&lol, "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (int i = 1; i < 10; i++)
		ap_buf_printf(&lol, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n",
		              i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	start = clock();
	load_fails(lol.data, "t.yaml:1:5: YAML anchors (&l0) are not supported");
	assert_true(clock() - start < CLOCKS_PER_SEC);
	ap_buf_free(&lol);
}

static void test_limits(void **state)
{
	ap_buf y = AP_BUF_INIT;
	char *big;
	size_t n;

	(void)state;
	/* 10,000 nested 'not's: refused at the first node 65 levels deep (the
	 * key of the 61st 'not'), the stack is never at risk. */
	ap_buf_puts(&y, "probes:\n  - id: p\n    requires: ");
	for (int i = 0; i < 10000; i++)
		ap_buf_puts(&y, "{not: ");
	ap_buf_puts(&y, "r");
	for (int i = 0; i < 10000; i++)
		ap_buf_puts(&y, "}");
	ap_buf_puts(&y, "\n");
	load_fails(y.data, "t.yaml:3:376: nested deeper than 64 levels");
	ap_buf_free(&y);

	/* The same in block style. */
	ap_buf_puts(&y, "probes:\n  - id: p\n    requires:\n");
	for (int i = 0; i < 100; i++)
		ap_buf_printf(&y, "%*snot:\n", 6 + 2 * i, "");
	ap_buf_printf(&y, "%*sr\n", 6 + 2 * 100, "");
	load_fails(y.data, "t.yaml:64:127: nested deeper than 64 levels");
	ap_buf_free(&y);

	/* A million open brackets. */
	n = 1000000;
	big = ap_xmalloc(n);
	memset(big, '[', n);
	load_fails_n(big, n, "t.yaml:1:65: nested deeper than 64 levels");
	free(big);

	/* Too many nodes. */
	ap_buf_puts(&y, "rules: [");
	for (int i = 0; i < 250001; i++)
		ap_buf_puts(&y, "1,");
	ap_buf_puts(&y, "]\n");
	load_fails(y.data, "t.yaml:1:500003: more than 250000 YAML nodes in one rule pack");
	ap_buf_free(&y);

	/* Too many bytes. */
	n = ((size_t)4 << 20) + 1;
	big = ap_xmalloc(n);
	memset(big, '#', n);
	load_fails_n(big, n, "t.yaml: larger than 4 MiB, the limit for a rule pack");
	free(big);
}

/* --- Rules. --------------------------------------------------------------- */

static void test_rule_field_errors(void **state)
{
	char *quoted = kind_keys(true), *plain = kind_keys(false), *msg;

	(void)state;
	load_fails("rules:\n  - file: a\n    literal: x\n",
	           "t.yaml:2:5: missing required key 'id' in rule");
	load_fails("rules:\n  - id: r\n    literal: x\n",
	           "t.yaml:2:5: missing required key 'file' in rule");
	msg = ap_xasprintf("t.yaml:2:5: missing one of %s in rule", quoted);
	load_fails(RULE_HEAD, msg);
	free(msg);
	msg = ap_xasprintf("t.yaml:5:5: both 'regex' and 'literal' given: a rule has exactly one of %s",
	                   quoted);
	load_fails(RULE_HEAD "    regex: x\n    literal: y\n", msg);
	free(msg);
	msg = ap_xasprintf("t.yaml:4:5: unknown key 'match' in rule (allowed: id, description, file, "
	                   "language, normalize, collect, %s)",
	                   plain);
	load_fails(RULE_HEAD "    match: x\n", msg);
	free(msg);
	free(quoted);
	free(plain);
	load_fails(RULE_HEAD "    literal: x\n    file: b\n",
	           "t.yaml:5:5: duplicate key 'file' (first at t.yaml:3:5)");
	load_fails(RULE_HEAD "    literal: x\n    description: [a]\n",
	           "t.yaml:5:18: 'description' must be a string, not a sequence");
	load_fails(RULE_HEAD "    literal: x\n    language: cpp\n",
	           "t.yaml:5:15: 'language' must be one of auto, c, python, text, not 'cpp'");
	load_fails(RULE_HEAD "    literal: x\n    language: [c]\n",
	           "t.yaml:5:15: 'language' must be one of auto, c, python, text, not a sequence");
	load_fails(RULE_HEAD "    literal: x\n    normalize: strip\n",
	           "t.yaml:5:16: 'normalize' must be one of keep, strip-whitespace, not 'strip'");
	load_fails(RULE_HEAD "    literal: x\n    collect:\n",
	           "t.yaml:5:13: 'collect' must be one of first, all, not null");
	load_fails(RULE_HEAD "    literal: ''\n", "t.yaml:4:14: 'literal' must not be empty");
	load_fails(RULE_HEAD "    regex:\n", "t.yaml:4:11: 'regex' must be a string, not null");
	load_fails(RULE_HEAD "    token: {a: b}\n",
	           "t.yaml:4:12: 'token' must be a string, not a mapping");
	load_fails(RULE_HEAD "    literal: \"a\\0b\"\n",
	           "t.yaml:4:14: 'literal' must not contain a NUL byte");
	load_fails(RULE_HEAD "    normalize: strip-whitespace\n    literal: \" \\t \"\n",
	           "t.yaml:5:14: invalid literal: only whitespace, which 'normalize: strip-whitespace' "
	           "removes");
	load_fails(RULE_HEAD "    normalize: strip-whitespace\n    token: a == b\n",
	           "t.yaml:4:16: 'token' cannot be used with 'normalize: strip-whitespace': tokens "
	           "are told apart by the whitespace between them");
	load_fails(RULE_HEAD "    token: '   '\n",
	           "t.yaml:4:12: invalid token pattern: token pattern has no tokens");
}

static void test_id_errors(void **state)
{
	char long_id[200];

	(void)state;
	load_fails("rules:\n  - {id: .r, file: a, literal: x}\n",
	           "t.yaml:2:10: invalid id '.r': use letters, digits, '_', '.' and '-', starting "
	           "with a letter, digit or '_'");
	load_fails("rules:\n  - {id: a b, file: a, literal: x}\n",
	           "t.yaml:2:10: invalid id 'a b': use letters, digits, '_', '.' and '-', starting "
	           "with a letter, digit or '_'");
	load_fails("rules:\n  - {id: 'a/b', file: a, literal: x}\n",
	           "t.yaml:2:10: invalid id 'a/b': use letters, digits, '_', '.' and '-', starting "
	           "with a letter, digit or '_'");
	load_fails("rules:\n  - {id: , file: a, literal: x}\n",
	           "t.yaml:2:10: 'id' must be a string, not null");
	memset(long_id, 'x', 129);
	long_id[129] = '\0';
	{
		char *y = ap_xasprintf("rules:\n  - {id: %s, file: a, literal: x}\n", long_id);
		load_fails(y, "t.yaml:2:10: id 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is longer than 128 "
		              "characters");
		free(y);
		long_id[128] = '\0';
		y = ap_xasprintf("rules:\n  - {id: %s, file: a, literal: x}\n", long_id);
		ap_ruleset_free(load_ok(y));
		free(y);
	}
	/* Digits first and '_' first are fine. */
	ap_ruleset_free(load_ok("rules:\n  - {id: 24h, file: a, literal: x}\n"
	                        "  - {id: _x-y.z, file: a, literal: x}\n"));

	load_fails("rules:\n  - {id: r, file: a, literal: x}\n  - {id: r, file: b, literal: y}\n",
	           "t.yaml:3:10: duplicate id 'r' (first defined at t.yaml:2:10)");
	load_fails("probes:\n  - {id: p, requires: x}\n  - {id: p, requires: y}\n",
	           "t.yaml:3:10: duplicate id 'p' (first defined at t.yaml:2:10)");
	load_fails("rules:\n  - {id: x, file: a, literal: x}\nprobes:\n  - {id: x, requires: x}\n",
	           "t.yaml:4:10: duplicate id 'x' (first defined at t.yaml:2:10)");
}

static void test_duplicate_id_across_files(void **state)
{
	ap_ruleset *rs = new_set();
	const char *a = "rules:\n  - {id: r, file: a, literal: x}\n";
	const char *b = "probes:\n  - {id: q, requires: r}\n  - {id: r, requires: q}\n";

	(void)state;
	assert_int_equal(ap_ruleset_load_buffer(rs, "a.yaml", a, strlen(a)), 0);
	assert_int_equal(ap_ruleset_load_buffer(rs, "b.yaml", b, strlen(b)), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "b.yaml:3:10: duplicate id 'r' (first defined at a.yaml:2:10)");
	/* b.yaml was rolled back whole: q is gone, so it can be defined again. */
	assert_int_equal(rs->nfiles, 1);
	assert_int_equal(rs->nrules, 1);
	assert_int_equal(rs->nprobes, 0);
	assert_null(ap_ruleset_find_probe(rs, "q"));
	assert_non_null(ap_ruleset_find_rule(rs, "r"));
	b = "probes:\n  - {id: q, requires: r}\n";
	assert_int_equal(ap_ruleset_load_buffer(rs, "c.yaml", b, strlen(b)), 0);
	assert_int_equal(rs->nfiles, 2);
	assert_string_equal(rs->files[1], "c.yaml");
	assert_string_equal(rs->probes[0].loc.file, "c.yaml");
	assert_int_equal(ap_ruleset_finish(rs), 0);
	ap_ruleset_free(rs);
}

static void test_rollback_many(void **state)
{
	ap_ruleset *rs = new_set();
	ap_buf y = AP_BUF_INIT;

	(void)state;
	/* Enough rules to grow the id index several times before the error. */
	ap_buf_puts(&y, "rules:\n");
	for (int i = 0; i < 300; i++)
		ap_buf_printf(&y, "  - {id: r%d, file: a, literal: x}\n", i);
	ap_buf_puts(&y, "  - {id: bad, file: /abs, literal: x}\n");
	assert_int_equal(ap_ruleset_load_buffer(rs, "t.yaml", y.data, y.len), AP_EINPUT);
	assert_string_equal(ap_error_last(), "t.yaml:302:21: path '/abs' refused: absolute path");
	assert_int_equal(rs->nrules, 0);
	assert_null(ap_ruleset_find_rule(rs, "r0"));
	assert_null(ap_ruleset_find_rule(rs, "r299"));
	ap_buf_free(&y);
	ap_ruleset_free(rs);
}

static void test_file_errors(void **state)
{
	(void)state;
	load_fails("rules:\n  - {id: r, file: [], literal: x}\n",
	           "t.yaml:2:19: 'file' must not be an empty sequence");
	load_fails("rules:\n  - {id: r, file: {a: b}, literal: x}\n",
	           "t.yaml:2:19: 'file' must be a path or a sequence of paths, not a mapping");
	load_fails("rules:\n  - {id: r, file: , literal: x}\n",
	           "t.yaml:2:19: 'file' must be a path or a sequence of paths, not null");
	load_fails("rules:\n  - {id: r, file: [a, [b]], literal: x}\n",
	           "t.yaml:2:23: 'file' must be a string, not a sequence");
	load_fails("rules:\n  - {id: r, file: /etc/passwd, literal: x}\n",
	           "t.yaml:2:19: path '/etc/passwd' refused: absolute path");
	load_fails("rules:\n  - id: r\n    file:\n      - ok/a.cu\n      - a/../../b\n    literal: x\n",
	           "t.yaml:5:9: path 'a/../../b' refused: '..' component");
	load_fails("rules:\n  - {id: r, file: '', literal: x}\n",
	           "t.yaml:2:19: path '' refused: empty path");
	load_fails("rules:\n  - {id: r, file: \"a\\0b\", literal: x}\n",
	           "t.yaml:2:19: 'file' must not contain a NUL byte");
}

static void test_regex_errors(void **state)
{
	(void)state;
	/* Plain scalar: the column of the offending byte. */
	load_fails(RULE_HEAD "    regex: a(b\n",
	           "t.yaml:4:15: invalid regex: missing closing parenthesis");
	load_fails(RULE_HEAD "    regex: a)b\n",
	           "t.yaml:4:13: invalid regex: unmatched closing parenthesis");
	/* Quoted: one more for the quote; columns count characters. */
	load_fails(RULE_HEAD "    regex: 'x[a'\n",
	           "t.yaml:4:16: invalid regex: missing terminating ] for character class");
	load_fails(RULE_HEAD "    regex: \"\xc3\xa9\xc3\xa9)\"\n",
	           "t.yaml:4:15: invalid regex: unmatched closing parenthesis");
	load_fails("rules: [{id: r, file: a, regex: 'ab\\'}]\n",
	           "t.yaml:1:37: invalid regex: \\ at end of pattern");
	/* Escapes or a block scalar: the scalar's start and the offset in words. */
	load_fails(RULE_HEAD "    regex: \"\\\\d\\t)\"\n",
	           "t.yaml:4:12: invalid regex at offset 3: unmatched closing parenthesis");
	load_fails(RULE_HEAD "    regex: 'it''s)'\n",
	           "t.yaml:4:12: invalid regex at offset 4: unmatched closing parenthesis");
	load_fails(RULE_HEAD "    regex: |\n      ab\n      (c\n",
	           "t.yaml:4:12: invalid regex at offset 6: missing closing parenthesis");
	load_fails(RULE_HEAD "    regex: a\n      (b\n",
	           "t.yaml:4:12: invalid regex at offset 4: missing closing parenthesis");
}

/* --- Probes. -------------------------------------------------------------- */

#define PROBE_HEAD "probes:\n  - id: p\n"

static void test_probe_errors(void **state)
{
	(void)state;
	load_fails("probes:\n  - id: p\n", "t.yaml:2:5: missing required key 'requires' in probe");
	load_fails("probes:\n  - requires: r\n", "t.yaml:2:5: missing required key 'id' in probe");
	load_fails(PROBE_HEAD "    requires: r\n    needs: x\n",
	           "t.yaml:4:5: unknown key 'needs' in probe (allowed: id, description, requires, "
	           "launch, fallback)");
	load_fails(PROBE_HEAD "    requires: [a, b]\n",
	           "t.yaml:3:15: an expression must be a rule or probe id, or a mapping with 'all', "
	           "'any', 'not' or 'capture', not a sequence");
	load_fails(PROBE_HEAD "    requires:\n",
	           "t.yaml:3:14: an expression must be a rule or probe id, or a mapping with 'all', "
	           "'any', 'not' or 'capture', not null");
	load_fails(PROBE_HEAD "    requires: {}\n",
	           "t.yaml:3:15: an expression mapping needs one of 'all', 'any' or 'not'");
	load_fails(PROBE_HEAD "    requires:\n      any: [a]\n      all: [b]\n",
	           "t.yaml:5:7: both 'any' and 'all' given: an expression mapping has exactly one "
	           "of 'all', 'any' or 'not' (nest them to combine)");
	load_fails(PROBE_HEAD "    requires: {all: []}\n", "t.yaml:3:21: 'all' must not be empty");
	load_fails(PROBE_HEAD "    requires: {any: a}\n",
	           "t.yaml:3:21: 'any' must be a sequence of expressions, not a string");
	load_fails(PROBE_HEAD "    requires: {not: [a]}\n",
	           "t.yaml:3:21: 'not' takes one expression, not a sequence");
	load_fails(PROBE_HEAD "    requires: {nand: [a]}\n",
	           "t.yaml:3:16: unknown key 'nand' in an expression (allowed: all, any, not)");
	load_fails(PROBE_HEAD "    requires: {all: [a, {any: [b, [c]]}]}\n",
	           "t.yaml:3:35: an expression must be a rule or probe id, or a mapping with 'all', "
	           "'any', 'not' or 'capture', not a sequence");
	load_fails(PROBE_HEAD "    requires: {all: [a, {not: }]}\n",
	           "t.yaml:3:31: an expression must be a rule or probe id, or a mapping with 'all', "
	           "'any', 'not' or 'capture', not null");
}

#define LAUNCH_HEAD PROBE_HEAD "    requires: r\n    launch:\n      kernel: mla_decode\n"
#define LAUNCH_OK LAUNCH_HEAD "      head_dim: 512\n      rope: 64\n"

static void test_launch_errors(void **state)
{
	(void)state;
	load_fails(PROBE_HEAD "    requires: r\n    launch: mla_decode\n",
	           "t.yaml:4:13: 'launch' must be a mapping, not a string");
	load_fails(PROBE_HEAD "    requires: r\n    launch:\n      heads: 24\n",
	           "t.yaml:5:7: missing required key 'kernel' in launch");
	load_fails(PROBE_HEAD "    requires: r\n    launch:\n      kernel: mla_prefill\n",
	           "t.yaml:5:15: unknown kernel 'mla_prefill' (known: mla_decode)");
	load_fails(LAUNCH_HEAD "      head_dim: 512\n",
	           "t.yaml:5:7: missing required key 'heads' in launch");
	load_fails(LAUNCH_HEAD "      heads: 24\n      rope: 64\n",
	           "t.yaml:5:7: missing required key 'head_dim' in launch");
	load_fails(LAUNCH_HEAD "      heads: 24\n      head_dim: 512\n",
	           "t.yaml:5:7: missing required key 'rope' in launch");
	load_fails(LAUNCH_OK "      heads: 0\n", "t.yaml:8:14: 'heads' must be from 1 to 128, not 0");
	load_fails(LAUNCH_OK "      heads: 129\n", "t.yaml:8:14: 'heads' must be from 1 to 128, not 129");
	load_fails(LAUNCH_OK "      heads: -3\n", "t.yaml:8:14: 'heads' must be from 1 to 128, not -3");
	load_fails(LAUNCH_OK "      heads: 99999999999999999999999\n",
	           "t.yaml:8:14: 'heads' must be from 1 to 128, not 99999999999999999999999");
	load_fails(LAUNCH_OK "      heads: 2.4e1\n",
	           "t.yaml:8:14: 'heads' must be an integer, not '2.4e1'");
	load_fails(LAUNCH_OK "      heads: 0x18\n", "t.yaml:8:14: 'heads' must be an integer, not '0x18'");
	load_fails(LAUNCH_OK "      heads: \"24\"\n",
	           "t.yaml:8:14: 'heads' must be an integer, not a quoted string");
	load_fails(LAUNCH_OK "      heads: [24]\n",
	           "t.yaml:8:14: 'heads' must be an integer, not a sequence");
	load_fails(LAUNCH_OK "      heads: 24\n      pad_to: 8\n",
	           "t.yaml:9:15: 'pad_to' must be 0 or at least heads (24), not 8");
	load_fails(LAUNCH_OK "      heads: 24\n      pad_to: 40\n",
	           "t.yaml:9:15: 'pad_to' must be a multiple of 16, not 40");
	load_fails(LAUNCH_OK "      heads: 24\n      pad_to: 144\n",
	           "t.yaml:9:15: 'pad_to' must be from 0 to 128, not 144");
	load_fails(LAUNCH_OK "      heads: 24\n      rope: -1\n",
	           "t.yaml:9:7: duplicate key 'rope' (first at t.yaml:7:7)");
	load_fails(LAUNCH_HEAD "      heads: 24\n      head_dim: 512\n      rope: -1\n",
	           "t.yaml:8:13: 'rope' must be from 0 to 1024, not -1");
	load_fails(LAUNCH_OK "      heads: 24\n      batch: 0\n",
	           "t.yaml:9:14: 'batch' must be from 1 to 1024, not 0");
	load_fails(LAUNCH_OK "      heads: 24\n      context: 2000000\n",
	           "t.yaml:9:16: 'context' must be from 1 to 1048576, not 2000000");
	load_fails(LAUNCH_OK "      heads: 24\n      page_size: 0\n",
	           "t.yaml:9:18: 'page_size' must be from 1 to 1024, not 0");
	load_fails(LAUNCH_OK "      heads: 24\n      timeout: 0\n",
	           "t.yaml:9:16: 'timeout' must be more than 0 and at most 86400, not 0");
	load_fails(LAUNCH_OK "      heads: 24\n      timeout: 100000\n",
	           "t.yaml:9:16: 'timeout' must be more than 0 and at most 86400, not 100000");
	load_fails(LAUNCH_OK "      heads: 24\n      timeout: -1\n",
	           "t.yaml:9:16: 'timeout' must be a number of seconds, not '-1'");
	load_fails(LAUNCH_OK "      heads: 24\n      timeout: 10s\n",
	           "t.yaml:9:16: 'timeout' must be a number of seconds, not '10s'");
	load_fails(LAUNCH_OK "      heads: 24\n      timeout: .\n",
	           "t.yaml:9:16: 'timeout' must be a number of seconds, not '.'");
	load_fails(LAUNCH_OK "      heads: 24\n      timeout: {}\n",
	           "t.yaml:9:16: 'timeout' must be a number of seconds, not a mapping");
	load_fails(LAUNCH_OK "      heads: 24\n      grid: 3\n",
	           "t.yaml:9:7: unknown key 'grid' in launch (allowed: kernel, heads, pad_to, "
	           "head_dim, rope, batch, context, page_size, timeout)");
	/* pad_to equal to heads, and .5 seconds, are fine. */
	ap_ruleset_free(load_ok(LAUNCH_OK "      heads: 32\n      pad_to: 32\n      timeout: .5\n"));
}

/* --- Finishing. ----------------------------------------------------------- */

static void test_finish_errors(void **state)
{
	(void)state;
	finish_fails("rules: [{id: r, file: a, literal: x}]\n"
	             "probes:\n"
	             "  - id: p\n"
	             "    requires: {all: [r, {not: nope}]}\n",
	             "t.yaml:4:31: unknown rule or probe 'nope'");
	finish_fails("probes:\n  - {id: a, requires: a}\n", "t.yaml:2:10: requires cycle: a -> a");
	finish_fails("probes:\n  - {id: a, requires: b}\n  - {id: b, requires: {not: a}}\n",
	             "t.yaml:2:10: requires cycle: a -> b -> a");
	/* The cycle starts at the first probe on it, not at the probe that led
	 * there. */
	finish_fails("rules: [{id: r, file: a, literal: x}]\n"
	             "probes:\n"
	             "  - {id: p0, requires: {any: [r, p1]}}\n"
	             "  - {id: p1, requires: {all: [r, p2]}}\n"
	             "  - {id: p2, requires: p3}\n"
	             "  - {id: p3, requires: {any: [r, {not: p1}]}}\n",
	             "t.yaml:4:10: requires cycle: p1 -> p2 -> p3 -> p1");
}

static void test_finish_error_keeps_set(void **state)
{
	ap_ruleset *rs = load_ok("probes:\n  - {id: a, requires: b}\n  - {id: b, requires: c}\n");
	const char *more = "rules: [{id: c, file: a, literal: x}]\n";

	(void)state;
	assert_int_equal(ap_ruleset_finish(rs), AP_EINPUT);
	assert_string_equal(ap_error_last(), "t.yaml:3:23: unknown rule or probe 'c'");
	assert_string_equal(rs->probes[0].id, "a");
	/* Loading what was missing and finishing again works. */
	assert_int_equal(ap_ruleset_load_buffer(rs, "more.yaml", more, strlen(more)), 0);
	assert_int_equal(ap_ruleset_finish(rs), 0);
	assert_string_equal(rs->probes[0].id, "b");
	assert_string_equal(rs->probes[1].id, "a");
	ap_ruleset_free(rs);
}

/* --- Files and folders. --------------------------------------------------- */

static void test_load_folder(void **state)
{
	char *dir = tmpdir_new();
	char *path;
	ap_ruleset *rs = new_set();

	(void)state;
	write_file(dir, "b.yaml", "rules: [{id: b, file: f, literal: x}]\n");
	write_file(dir, "a.yml", "rules: [{id: a, file: f, literal: x}]\n");
	write_file(dir, "10.yaml", "probes: [{id: p, requires: {all: [a, b]}}]\n");
	write_file(dir, "B.yaml", "rules: [{id: B, file: f, literal: x}]\n");
	write_file(dir, ".hidden.yaml", "not: [valid\n");
	write_file(dir, "notes.txt", "not: [valid\n");
	write_file(dir, "x.yaml.bak", "not: [valid\n");
	path = ap_xasprintf("%s/sub", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	free(path);

	assert_int_equal(ap_ruleset_load_path(rs, dir), 0);
	assert_int_equal(rs->nfiles, 4);
	path = ap_xasprintf("%s/10.yaml", dir);
	assert_string_equal(rs->files[0], path);
	free(path);
	assert_non_null(strstr(rs->files[1], "/B.yaml"));
	assert_non_null(strstr(rs->files[2], "/a.yml"));
	assert_non_null(strstr(rs->files[3], "/b.yaml"));
	assert_string_equal(rs->rules[0].id, "B");
	assert_string_equal(rs->rules[1].id, "a");
	assert_string_equal(rs->rules[2].id, "b");
	assert_int_equal(ap_ruleset_finish(rs), 0);
	ap_ruleset_free(rs);

	/* A trailing slash gives no double slash. */
	rs = new_set();
	path = ap_xasprintf("%s/", dir);
	assert_int_equal(ap_ruleset_load_path(rs, path), 0);
	free(path);
	path = ap_xasprintf("%s/10.yaml", dir);
	assert_string_equal(rs->files[0], path);
	free(path);
	ap_ruleset_free(rs);

	/* One file alone. */
	rs = new_set();
	path = ap_xasprintf("%s/a.yml", dir);
	assert_int_equal(ap_ruleset_load_path(rs, path), 0);
	assert_int_equal(rs->nrules, 1);
	assert_string_equal(rs->rules[0].loc.file, path);
	free(path);
	ap_ruleset_free(rs);

	rm_tree(dir);
	free(dir);
}

static void test_load_folder_error(void **state)
{
	char *dir = tmpdir_new();
	char *msg, *keys;
	ap_ruleset *rs = new_set();

	(void)state;
	write_file(dir, "a.yaml", "rules: [{id: a, file: f, literal: x}]\n");
	write_file(dir, "b.yaml", "rules:\n  - {id: b, file: f, literal: x}\n  - {id: c, file: f}\n");
	write_file(dir, "c.yaml", "rules: [{id: d, file: f, literal: x}]\n");
	assert_int_equal(ap_ruleset_load_path(rs, dir), AP_EINPUT);
	keys = kind_keys(true);
	msg = ap_xasprintf("%s/b.yaml:3:5: missing one of %s in rule", dir, keys);
	assert_string_equal(ap_error_last(), msg);
	free(msg);
	free(keys);
	/* What loaded before the failing file stays; the failing file is gone
	 * whole, and nothing after it was read. */
	assert_int_equal(rs->nfiles, 1);
	assert_int_equal(rs->nrules, 1);
	assert_string_equal(rs->rules[0].id, "a");
	assert_null(ap_ruleset_find_rule(rs, "b"));
	ap_ruleset_free(rs);
	rm_tree(dir);
	free(dir);
}

static void test_load_path_errors(void **state)
{
	char *dir = tmpdir_new();
	char *path;
	char *msg;
	ap_ruleset *rs = new_set();
	FILE *f;

	(void)state;
	path = ap_xasprintf("%s/nope.yaml", dir);
	assert_int_equal(ap_ruleset_load_path(rs, path), AP_EINPUT);
	msg = ap_xasprintf("%s: No such file or directory", path);
	assert_string_equal(ap_error_last(), msg);
	free(msg);
	free(path);

	/* A dangling link in a folder is an error, not skipped. */
	path = ap_xasprintf("%s/link.yaml", dir);
	assert_int_equal(symlink("missing-target", path), 0);
	assert_int_equal(ap_ruleset_load_path(rs, dir), AP_EINPUT);
	msg = ap_xasprintf("%s: No such file or directory", path);
	assert_string_equal(ap_error_last(), msg);
	free(msg);
	assert_int_equal(unlink(path), 0);
	free(path);

	/* An oversized file on disk. */
	path = ap_xasprintf("%s/big.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < ((size_t)4 << 20) + 1; i++)
		fputc('#', f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(ap_ruleset_load_path(rs, path), AP_EINPUT);
	msg = ap_xasprintf("%s: larger than 4 MiB, the limit for a rule pack", path);
	assert_string_equal(ap_error_last(), msg);
	free(msg);
	free(path);

	/* Empty folder: nothing to load, not an error. */
	path = ap_xasprintf("%s/empty", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(ap_ruleset_load_path(rs, path), 0);
	free(path);

	assert_int_equal(rs->nfiles, 0);
	ap_ruleset_free(rs);
	rm_tree(dir);
	free(dir);
}

static void test_shipped_packs(void **state)
{
	const char *srcdir = getenv("AP_SRCDIR") ? getenv("AP_SRCDIR") : AP_SRCDIR;
	char *rules = ap_xasprintf("%s/rules", srcdir);
	char *probes = ap_xasprintf("%s/probes", srcdir);
	ap_ruleset *rs = new_set();

	(void)state;
	if (ap_ruleset_load_path(rs, rules) != 0 || ap_ruleset_load_path(rs, probes) != 0 ||
	    ap_ruleset_finish(rs) != 0)
		fail_msg("shipped packs: %s", ap_error_last());
	assert_non_null(ap_ruleset_find_rule(rs, "mla.reduce.native_h24_d512"));
	assert_non_null(ap_ruleset_find_rule(rs, "mla.metadata.native_h24"));
	assert_non_null(ap_ruleset_find_rule(rs, "mla.reduce.cases"));
	assert_non_null(ap_ruleset_find_probe(rs, "mla.decode.native_h24"));
	ap_ruleset_free(rs);
	free(rules);
	free(probes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_all_fields),
		cmocka_unit_test(test_rule_defaults),
		cmocka_unit_test(test_probe_all_fields),
		cmocka_unit_test(test_launch_defaults),
		cmocka_unit_test(test_empty_sequences_and_probes_only),
		cmocka_unit_test(test_order_after_finish),
		cmocka_unit_test(test_long_probe_chain),
		cmocka_unit_test(test_document_errors),
		cmocka_unit_test(test_signatures),
		cmocka_unit_test(test_yaml_syntax_errors),
		cmocka_unit_test(test_not_text),
		cmocka_unit_test(test_anchors_aliases_tags),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_rule_field_errors),
		cmocka_unit_test(test_id_errors),
		cmocka_unit_test(test_duplicate_id_across_files),
		cmocka_unit_test(test_rollback_many),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_regex_errors),
		cmocka_unit_test(test_probe_errors),
		cmocka_unit_test(test_launch_errors),
		cmocka_unit_test(test_finish_errors),
		cmocka_unit_test(test_finish_error_keeps_set),
		cmocka_unit_test(test_load_folder),
		cmocka_unit_test(test_load_folder_error),
		cmocka_unit_test(test_load_path_errors),
		cmocka_unit_test(test_shipped_packs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
