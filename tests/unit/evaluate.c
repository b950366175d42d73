/* SPDX-License-Identifier: MIT */
/* Three-valued evaluation through the scan: a rule that ends `unknown` (no
 * shipped kind makes one yet, so a test kind stands in for it) leaves every
 * capability that depends on it unknown, so unsupported, with a reason that
 * says unknown; `not` keeps it unknown, `any` with a rule that holds and `all`
 * with one that does not decide without it; and the manifest, its text and
 * explain say `unknown`. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "engine/evaluate.h"
#include "engine/manifest.h"
#include "engine/report/explain.h"
#include "tmptree.h"

#define WHY "defined in an arm of `if _flag():`, which only a run decides"

/* What a kind answers when the binding it reads is known only by running
 * the module: the file was read, and the rule is unknown with the reason;
 * what it matched on the way is dropped. */
static void unknown_run(const void *state, ap_kind_run *run)
{
	(void)state;
	ap_match_add_text(&run->res->matches, 1, "def", 3);
	run->res->status = AP_RULE_UNKNOWN;
	run->res->reason = ap_xstrdup(WHY);
}

static const ap_kind unknown_kind = {
	.key = "unknown-for-tests",
	.flags = AP_KIND_FILE,
	.run = unknown_run,
};

static const char pack[] =
	"rules:\n"
	"  - id: r.unknown\n"
	"    file: aiter/mla.py\n"
	"    literal: causal\n"
	"  - id: r.yes\n"
	"    file: aiter/mla.py\n"
	"    literal: def\n"
	"  - id: r.no\n"
	"    file: aiter/mla.py\n"
	"    literal: return_lse\n"
	"probes:\n"
	"  - id: p.plain\n"
	"    requires: r.unknown\n"
	"    fallback: vLLM calls it without causal.\n"
	"  - id: p.not\n"
	"    requires: {not: r.unknown}\n"
	"  - id: p.any\n"
	"    requires: {any: [r.unknown, r.yes]}\n"
	"  - id: p.all\n"
	"    requires: {all: [r.unknown, r.no]}\n"
	"  - id: p.all_yes\n"
	"    requires: {all: [r.unknown, r.yes]}\n"
	"  - id: p.ref\n"
	"    requires: p.plain\n"
	"  - id: p.capture\n"
	"    requires: {capture: r.unknown, name: n, ge: 1}\n";

typedef struct fixture {
	char *root;
	ap_ruleset *rs;
	const ap_kind *literal; /* the swapped rule's own kind, back before freeing */
	json_t *manifest;
} fixture;

static int setup(void **state)
{
	fixture *fx = ap_xcalloc(1, sizeof *fx);
	ap_reader *reader;
	ap_scan *scan;
	ap_aiter_info aiter = {0};
	json_t *devices;
	ap_rule *r;

	fx->root = tt_mkdtemp("evaluate");
	tt_mkdir(fx->root, "aiter");
	tt_put_s(fx->root, "aiter/mla.py", "def mla_decode_fwd(q, causal=False):\n    pass\n");
	assert_int_equal(ap_ruleset_new(&fx->rs), 0);
	assert_int_equal(ap_ruleset_load_buffer(fx->rs, "t.yaml", pack, strlen(pack)), 0);
	assert_int_equal(ap_ruleset_finish(fx->rs), 0);
	r = (ap_rule *)ap_ruleset_find_rule(fx->rs, "r.unknown");
	fx->literal = r->kind;
	r->kind = &unknown_kind;
	assert_int_equal(ap_reader_new_fs(&reader, fx->root, NULL, AP_READER_DEFAULT_MAX_BYTES), 0);
	assert_int_equal(ap_scan_run(&scan, fx->rs, reader, NULL), 0);
	aiter.root = aiter.meta = fx->root;
	devices = json_array();
	fx->manifest = ap_manifest_build(scan, reader, &aiter, NULL, devices, "node");
	json_decref(devices);
	ap_scan_free(scan);
	ap_reader_free(reader);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	((ap_rule *)ap_ruleset_find_rule(fx->rs, "r.unknown"))->kind = fx->literal;
	ap_ruleset_free(fx->rs);
	json_decref(fx->manifest);
	tt_remove(fx->root);
	free(fx->root);
	free(fx);
	return 0;
}

static const json_t *cap(const fixture *fx, const char *id)
{
	return json_object_get(json_object_get(fx->manifest, "capabilities"), id);
}

static void assert_cap(const fixture *fx, const char *id, bool supported, const char *verdict,
                       const char *reason)
{
	const json_t *c = cap(fx, id);

	assert_non_null(c);
	if (strcmp(verdict, "unknown") == 0)
		assert_int_equal(json_array_size(json_object_get(c, "evidence")), 0);
	assert_int_equal(json_is_true(json_object_get(c, "supported")), supported);
	assert_string_equal(ap_manifest_cap_verdict(c), verdict);
	assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
}

static void test_rule_is_unknown(void **state)
{
	const fixture *fx = *state;
	const json_t *r = json_object_get(json_object_get(fx->manifest, "rules"), "r.unknown");

	assert_string_equal(json_string_value(json_object_get(r, "status")), "unknown");
	assert_string_equal(json_string_value(json_object_get(r, "file")), "aiter/mla.py");
	assert_string_equal(json_string_value(json_object_get(r, "reason")), WHY);
	assert_int_equal(json_array_size(json_object_get(r, "matches")), 0);
}

static void test_capabilities(void **state)
{
	const fixture *fx = *state;
	const char *unknown = "rule r.unknown is unknown: aiter/mla.py: " WHY;
	char *want;

	want = ap_xasprintf(AP_CAP_UNKNOWN_PREFIX "%s", unknown);
	assert_cap(fx, "p.plain", false, "unknown", want);
	free(want);
	want = ap_xasprintf(AP_CAP_UNKNOWN_PREFIX "not (%s)", unknown);
	assert_cap(fx, "p.not", false, "unknown", want);
	free(want);
	/* any: a rule that holds decides; all: one that fails does. */
	assert_cap(fx, "p.any", true, "supported", "rule r.yes matched in aiter/mla.py");
	assert_cap(fx, "p.all", false, "unsupported", "rule r.no did not match in aiter/mla.py");
	want = ap_xasprintf(AP_CAP_UNKNOWN_PREFIX "%s", unknown);
	assert_cap(fx, "p.all_yes", false, "unknown", want);
	assert_cap(fx, "p.capture", false, "unknown", want);
	free(want);
	want = ap_xasprintf(AP_CAP_UNKNOWN_PREFIX "capability p.plain is unknown ("
	                    AP_CAP_UNKNOWN_PREFIX "%s)", unknown);
	assert_cap(fx, "p.ref", false, "unknown", want);
	free(want);
}

/* What a stream got, NUL-terminated. */
typedef struct capture {
	char *text;
	size_t len;
	FILE *f;
} capture;

static FILE *capture_open(capture *c)
{
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static void capture_is(capture *c, const char *want)
{
	fclose(c->f);
	assert_string_equal(c->text, want);
	free(c->text);
}

static void test_text(void **state)
{
	const fixture *fx = *state;
	json_t *m = json_deep_copy(fx->manifest);
	const char *id;
	json_t *v;
	void *next;
	capture c;

	/* The head line holds the tree's path: make it a fixed one. */
	json_object_set_new(json_object_get(m, "aiter"), "root", json_string("/opt/aiter"));
	json_object_foreach_safe(json_object_get(m, "capabilities"), next, id, v)
		if (strcmp(id, "p.plain") != 0 && strcmp(id, "p.all") != 0)
			json_object_del(json_object_get(m, "capabilities"), id);
	ap_manifest_print_text(m, capture_open(&c), false, 72);
	capture_is(&c, "AITER /opt/aiter (version unknown, commit unknown)\n"
	               "Capabilities\n"
	               "  unknown     p.plain\n"
	               "      why: unknown, so unsupported: rule r.unknown is unknown:\n"
	               "           aiter/mla.py: defined in an arm of `if _flag():`, which only\n"
	               "           a run decides\n"
	               "  unsupported p.all\n"
	               "      why: rule r.no did not match in aiter/mla.py\n"
	               "Rules\n"
	               "  unknown     r.unknown\n"
	               "      defined in an arm of `if _flag():`, which only a run decides\n"
	               "  matched     r.yes\n"
	               "      aiter/mla.py:1\n"
	               "  unmatched   r.no\n"
	               "      no match in aiter/mla.py\n"
	               "Devices: none\n");
	json_decref(m);
}

static void test_explain(void **state)
{
	const fixture *fx = *state;
	const ap_probe *p = ap_ruleset_find_probe(fx->rs, "p.any");
	json_t *doc;
	capture c;

	assert_int_equal(ap_explain_capability(fx->rs, p, fx->manifest, &doc), 0);
	assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "supported");
	json_decref(doc);
	p = ap_ruleset_find_probe(fx->rs, "p.not");
	assert_int_equal(ap_explain_capability(fx->rs, p, fx->manifest, &doc), 0);
	assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "unknown");
	ap_explain_print_text(doc, capture_open(&c), false, 80);
	capture_is(&c, "p.not: unknown\n"
	               "  defined at: t.yaml:15\n"
	               "  reason: unknown, so unsupported: not (rule r.unknown is unknown: aiter/mla.py:\n"
	               "      defined in an arm of `if _flag():`, which only a run decides)\n"
	               "requires:\n"
	               "  not: unknown\n"
	               "    rule r.unknown: unknown\n"
	               "      looked for: literal: causal in aiter/mla.py\n"
	               "      defined at: t.yaml:2\n"
	               "      reason: defined in an arm of `if _flag():`, which only a run decides\n");
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_is_unknown),
		cmocka_unit_test(test_capabilities),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_explain),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
