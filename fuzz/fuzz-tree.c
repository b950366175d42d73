/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "engine/evaluate.h"
#include "engine/manifest.h"
#include "fuzz-tree.h"

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-tree: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	__builtin_trap();
}

/* --- The tree ------------------------------------------------------------- */

static void add_file(fuzz_tree *t, char *path, const char *data, size_t len)
{
	t->files[t->n++] = (fuzz_file){path, data, len};
}

void fuzz_tree_split(fuzz_tree *t, const char *data, size_t size, const char *first_path)
{
	const size_t hlen = strlen(FUZZ_TREE_HEADER);
	char *path = ap_xstrdup(first_path);
	size_t start = 0;
	size_t i = 0; /* the start of a line */

	t->n = 0;
	while (i < size && t->n + 1 < FUZZ_TREE_MAX_FILES) {
		const char *nl;

		if (size - i >= hlen && memcmp(data + i, FUZZ_TREE_HEADER, hlen) == 0) {
			size_t end;

			nl = memchr(data + i + hlen, '\n', size - i - hlen);
			end = nl ? (size_t)(nl - data) : size;
			/* An input that starts with a header has no file at the first path. */
			if (i > 0)
				add_file(t, path, data + start, i - start);
			else
				free(path);
			path = ap_xstrndup(data + i + hlen, end - i - hlen);
			start = i = nl ? end + 1 : size;
			continue;
		}
		nl = memchr(data + i, '\n', size - i);
		i = nl ? (size_t)(nl - data) + 1 : size;
	}
	add_file(t, path, data + start, size - start);
}

void fuzz_tree_free(fuzz_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->files[i].path);
	t->n = 0;
}

/* An exact-size copy, not NUL-terminated, so that ASan sees any read past a
 * file's end: the source contract promises only data and len. */
static ap_file_status tree_load(void *ctx, ap_file *f, size_t max_bytes, char **data,
                                size_t *len, char **reason)
{
	const fuzz_tree *t = ctx;

	(void)max_bytes;
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->files[i].path, f->path) != 0)
			continue;
		*len = t->files[i].len;
		*data = ap_xmalloc(*len ? *len : 1);
		memcpy(*data, t->files[i].data, *len);
		f->seen = "file";
		return AP_FILE_OK;
	}
	f->seen = "absent";
	*reason = ap_xstrdup("no such file");
	return AP_FILE_MISSING;
}

static const ap_source_ops tree_ops = {.load = tree_load};

ap_reader *fuzz_tree_reader(const fuzz_tree *t)
{
	ap_reader *r;

	if (ap_reader_new(&r, &tree_ops, (void *)t, "/fuzz/aiter", AP_READER_DEFAULT_MAX_BYTES) < 0)
		fail("ap_reader_new", ap_error_last());
	return r;
}

/* --- Packs ------------------------------------------------------------------ */

static ap_ruleset *shipped;

static void free_shipped(void)
{
	ap_ruleset_free(shipped);
}

const ap_ruleset *fuzz_shipped_packs(void)
{
	static const char *const dirs[] = {AP_SRCDIR "/rules", AP_SRCDIR "/probes"};

	if (shipped != NULL)
		return shipped;
	if (ap_ruleset_new(&shipped) < 0)
		fail("ap_ruleset_new", ap_error_last());
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (ap_ruleset_load_path(shipped, dirs[i]) < 0)
			fail("the shipped packs do not load", ap_error_last());
	if (ap_ruleset_finish(shipped) < 0)
		fail("the shipped packs do not resolve", ap_error_last());
	atexit(free_shipped);
	return shipped;
}

/* A pack the target made must load: one that does not is a finding, in the
 * target or in the loader. */
static ap_ruleset *load_pack(const char *yaml, size_t len)
{
	ap_ruleset *rs;

	if (ap_ruleset_new(&rs) < 0)
		fail("ap_ruleset_new", ap_error_last());
	if (ap_ruleset_load_buffer(rs, "fuzz.yaml", yaml, len) < 0 || ap_ruleset_finish(rs) < 0) {
		fprintf(stderr, "%.*s\n", (int)len, yaml);
		fail("a generated pack does not load", ap_error_last());
	}
	return rs;
}

char *fuzz_yaml_quote(const char *s)
{
	ap_buf b = AP_BUF_INIT;

	ap_buf_putc(&b, '\'');
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) {
			ap_buf_free(&b);
			return NULL;
		}
		if (*p == '\'')
			ap_buf_putc(&b, '\'');
		ap_buf_putc(&b, *p);
	}
	ap_buf_putc(&b, '\'');
	return ap_buf_detach(&b);
}

/* --- The scan and its manifest ------------------------------------------- */

static char *work_dir;
static char *manifest_path;

static void remove_work_dir(void)
{
	unlink(manifest_path);
	if (rmdir(work_dir) != 0)
		fprintf(stderr, "fuzz-tree: could not remove %s\n", work_dir);
	free(manifest_path);
	free(work_dir);
}

static void make_work_dir(void)
{
	char tmpl[] = "/tmp/ap-fuzz-tree.XXXXXX";

	if (mkdtemp(tmpl) == NULL)
		fail("mkdtemp", NULL);
	work_dir = ap_xstrdup(tmpl);
	manifest_path = ap_xasprintf("%s/m.json", work_dir);
	atexit(remove_work_dir);
}

static void check_result(const ap_rule_result *res)
{
	const ap_match_list *l = &res->matches;

	switch (res->status) {
	case AP_RULE_MATCHED:
		if (l->n == 0)
			fail("matched without a match", res->rule->id);
		break;
	case AP_RULE_UNMATCHED:
		break;
	case AP_RULE_MISSING:
	case AP_RULE_ERROR:
	case AP_RULE_UNKNOWN:
		if (res->reason == NULL)
			fail("missing, error or unknown without a reason", res->rule->id);
		break;
	default:
		fail("no such status", res->rule->id);
	}
	if (l->n > AP_MATCH_MAX)
		fail("more matches than a rule keeps", res->rule->id);
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].line == 0 || l->v[i].text == NULL ||
		    strlen(l->v[i].text) > AP_MATCH_TEXT_MAX)
			fail("a match without its line", res->rule->id);
}

/* What the writer writes, the reader must take, and give back the same. */
static void check_round_trip(const json_t *m)
{
	json_t *back;
	FILE *f;

	if (work_dir == NULL)
		make_work_dir();
	f = fopen(manifest_path, "w");
	if (f == NULL || json_dumpf(m, f, AP_MANIFEST_JSON_FLAGS) < 0 || fclose(f) != 0)
		fail("cannot write", manifest_path);
	if (ap_manifest_read_file(manifest_path, &back) < 0)
		fail("the core's reader refuses a written manifest", ap_error_last());
	if (!json_equal(back, (json_t *)m))
		fail("the manifest read back differs from the one written", NULL);
	json_decref(back);
}

void fuzz_scan(const ap_ruleset *rs, ap_reader *r, bool round_trip)
{
	ap_scan *s;

	if (ap_scan_run(&s, rs, r, NULL) < 0)
		fail("ap_scan_run", ap_error_last());
	for (size_t i = 0; i < s->nrules; i++)
		check_result(&s->rules[i]);
	for (size_t i = 0; i < s->ncaps; i++)
		if (s->caps[i].reason == NULL)
			fail("a capability without a reason", s->caps[i].probe->id);
	if (round_trip) {
		char *version = ap_aiter_version(r);
		json_t *devices = json_array();
		json_t *m = ap_manifest_build(s, r,
		                              &(ap_aiter_info){.root = ap_reader_root(r),
		                                               .version = version},
		                              NULL, devices, "fuzz");
		if (m == NULL)
			fail("ap_manifest_build", NULL);
		check_round_trip(m);
		json_decref(m);
		json_decref(devices);
		free(version);
	}
	ap_scan_free(s);
	ap_error_clear();
}

void fuzz_scan_generated(const fuzz_tree *t, ap_buf *rules, const ap_buf *probes)
{
	ap_ruleset *rs;
	ap_reader *r;

	if (probes->len > 0) {
		ap_buf_puts(rules, "probes:\n");
		ap_buf_append(rules, probes->data, probes->len);
	}
	rs = load_pack(rules->data, rules->len);
	r = fuzz_tree_reader(t);
	fuzz_scan(rs, r, true);
	ap_reader_free(r);
	ap_ruleset_free(rs);
}
