/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "core/manifest-read.h"
#include "engine/manifest.h"
#include "engine/report/merge.h"
#include "core/text.h"

/* A list of nodes as ranges of numbered names, the way Slurm writes host
 * lists: "node-0007" is prefix "node-", number 7 of width 4, suffix "".
 * Ranges stay sorted, and a name next to a range widens it, so a fleet's
 * usual names ("gpu-0001" to "gpu-4096") make one range in any order. */
typedef struct range {
	char *prefix;
	char *suffix;
	int width; /* digits; 0: the name has no number, prefix is all of it */
	uint64_t lo, hi;
} range;

/* Every node added, as ranges: what a report prints is cut there
 * (--max-ranges), never here, so that sets can be subtracted exactly. */
typedef struct nodeset {
	range *ranges;
	size_t nranges, cap;
	size_t count; /* every node added */
} nodeset;

/* The nodes that did not probe a capability are every node but those whose
 * manifest has it (probed), subtracted when the report is made: a
 * capability first seen on the last of 2,000 nodes costs one range, not a
 * set of the 1,999 before, and a manifest costs its own capabilities only,
 * not every id the fleet has shown so far. */
typedef struct capability {
	char *id;
	size_t supported;
	nodeset lacking; /* supported: false */
	nodeset probed;  /* in the manifest, either way */
} capability;

typedef struct tree {
	char digest[2 * AP_SHA256_SIZE + 1];
	char *version;    /* NULL: the tree did not tell */
	char *git_commit; /* NULL: not a git work tree */
	nodeset nodes;
} tree;

/* The one thing kept per node: its name and file, so that a node given twice
 * is refused, and when its manifest was made, for its age. */
typedef struct node_file {
	char *node;
	char *path;
	char *generated; /* NULL: the manifest did not say */
} node_file;

/* A manifest that could not be merged: its file and the reader's message. */
typedef struct bad_file {
	char *path;
	char *error;
} bad_file;

struct ap_merge {
	/* Node name to its index in files. */
	ap_map *names;
	node_file *files;
	size_t nfiles, files_cap;
	bad_file *bad;
	size_t nbad, bad_cap;
	nodeset all;
	ap_map *cap_index;
	capability *caps;
	size_t ncaps, caps_cap;
	ap_map *tree_index;
	tree *trees;
	size_t ntrees, trees_cap;
};

/* At most 18 digits: every such number fits uint64_t. */
#define MAX_DIGITS 18

static void range_of(const char *name, range *r)
{
	size_t len = strlen(name), end = len, start;

	while (end > 0 && !(name[end - 1] >= '0' && name[end - 1] <= '9'))
		end--;
	start = end;
	while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9')
		start--;
	r->lo = r->hi = 0;
	if (end == start || end - start > MAX_DIGITS) {
		r->prefix = ap_xstrdup(name);
		r->suffix = ap_xstrdup("");
		r->width = 0;
		return;
	}
	r->prefix = ap_xstrndup(name, start);
	r->suffix = ap_xstrdup(name + end);
	r->width = (int)(end - start);
	r->lo = r->hi = strtoull(name + start, NULL, 10);
}

static void range_free(range *r)
{
	free(r->prefix);
	free(r->suffix);
}

/* The order of ranges: by prefix, suffix and width (names that can share a
 * range together), then by number. 0 for ranges that may join. */
static int range_cmp_family(const range *a, const range *b)
{
	int c = strcmp(a->prefix, b->prefix);

	if (c == 0)
		c = strcmp(a->suffix, b->suffix);
	if (c == 0)
		c = a->width - b->width;
	return c;
}

static void nodeset_add(nodeset *s, const char *name)
{
	range r;
	size_t i = 0, end = s->nranges;

	s->count++;
	range_of(name, &r);
	/* The first range that holds r, or ends just before it, or comes after
	 * (a binary search: --max-ranges may keep thousands). */
	while (i < end) {
		size_t mid = i + (end - i) / 2;
		int c = range_cmp_family(&s->ranges[mid], &r);
		if (c > 0 || (c == 0 && (r.width == 0 || s->ranges[mid].hi + 1 >= r.lo)))
			end = mid;
		else
			i = mid + 1;
	}
	if (i < s->nranges && range_cmp_family(&s->ranges[i], &r) == 0) {
		range *q = &s->ranges[i];
		if (r.width == 0 || (q->lo <= r.lo && r.lo <= q->hi))
			goto done; /* already there */
		if (q->hi + 1 == r.lo) {
			q->hi = r.lo;
			if (i + 1 < s->nranges && range_cmp_family(&q[1], &r) == 0 &&
			    q[1].lo == r.lo + 1) {
				q->hi = q[1].hi;
				range_free(&q[1]);
				memmove(&q[1], &q[2], (s->nranges - i - 2) * sizeof *q);
				s->nranges--;
			}
			goto done;
		}
		if (q->lo == r.lo + 1) {
			q->lo = r.lo;
			goto done;
		}
	}
	ap_xgrow((void **)&s->ranges, &s->cap, s->nranges + 1, sizeof *s->ranges);
	memmove(&s->ranges[i + 1], &s->ranges[i], (s->nranges - i) * sizeof *s->ranges);
	s->ranges[i] = r;
	s->nranges++;
	return;
done:
	range_free(&r);
}

static void nodeset_push(nodeset *s, const range *r, uint64_t lo, uint64_t hi)
{
	range *q;

	ap_xgrow((void **)&s->ranges, &s->cap, s->nranges + 1, sizeof *s->ranges);
	q = &s->ranges[s->nranges++];
	*q = *r;
	q->prefix = ap_xstrdup(r->prefix);
	q->suffix = ap_xstrdup(r->suffix);
	q->lo = lo;
	q->hi = hi;
	s->count += r->width == 0 ? 1 : hi - lo + 1;
}

/* The nodes of a not in b, into out (empty): both sorted alike, so one pass
 * over each. */
static void nodeset_minus(nodeset *out, const nodeset *a, const nodeset *b)
{
	size_t j = 0;

	for (size_t i = 0; i < a->nranges; i++) {
		const range *r = &a->ranges[i];
		uint64_t lo = r->lo;

		while (j < b->nranges &&
		       (range_cmp_family(&b->ranges[j], r) < 0 ||
		        (range_cmp_family(&b->ranges[j], r) == 0 && r->width != 0 &&
		         b->ranges[j].hi < lo)))
			j++;
		if (r->width == 0) {
			if (j == b->nranges || range_cmp_family(&b->ranges[j], r) != 0)
				nodeset_push(out, r, 0, 0);
			continue;
		}
		for (size_t k = j; k < b->nranges && lo <= r->hi &&
		                   range_cmp_family(&b->ranges[k], r) == 0 && b->ranges[k].lo <= r->hi;
		     k++) {
			const range *q = &b->ranges[k];
			if (q->lo > lo)
				nodeset_push(out, r, lo, q->lo - 1);
			if (q->hi + 1 > lo)
				lo = q->hi + 1;
		}
		if (lo <= r->hi)
			nodeset_push(out, r, lo, r->hi);
	}
}

static void nodeset_free(nodeset *s)
{
	size_t i;

	for (i = 0; i < s->nranges; i++)
		range_free(&s->ranges[i]);
	free(s->ranges);
}

ap_merge *ap_merge_new(void)
{
	ap_merge *mg = ap_xcalloc(1, sizeof *mg);

	mg->names = ap_xnonnull(ap_map_new());
	mg->cap_index = ap_xnonnull(ap_map_new());
	mg->tree_index = ap_xnonnull(ap_map_new());
	return mg;
}

void ap_merge_free(ap_merge *mg)
{
	size_t i;

	if (mg == NULL)
		return;
	for (i = 0; i < mg->nfiles; i++) {
		free(mg->files[i].node);
		free(mg->files[i].path);
		free(mg->files[i].generated);
	}
	free(mg->files);
	for (i = 0; i < mg->nbad; i++) {
		free(mg->bad[i].path);
		free(mg->bad[i].error);
	}
	free(mg->bad);
	for (i = 0; i < mg->ncaps; i++) {
		free(mg->caps[i].id);
		nodeset_free(&mg->caps[i].lacking);
		nodeset_free(&mg->caps[i].probed);
	}
	free(mg->caps);
	for (i = 0; i < mg->ntrees; i++) {
		free(mg->trees[i].version);
		free(mg->trees[i].git_commit);
		nodeset_free(&mg->trees[i].nodes);
	}
	free(mg->trees);
	nodeset_free(&mg->all);
	ap_map_free(mg->names);
	ap_map_free(mg->cap_index);
	ap_map_free(mg->tree_index);
	free(mg);
}

/* The manifest's node: its host, else the file's name less ".json". */
static char *node_name(const json_t *m, const char *path)
{
	const char *host = json_string_value(json_object_get(m, "host"));
	const char *base = strrchr(path, '/');
	size_t len;

	if (host != NULL)
		return ap_xstrdup(host);
	base = base != NULL ? base + 1 : path;
	len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".json") == 0)
		len -= 5;
	return ap_xstrndup(base, len);
}

/* Sorted by path through ap_cmp_strs: path is the first member. */
typedef struct input_ref {
	const char *path;
	const char *sha256;
} input_ref;

/* The tree's digest: sha256 over its inputs' paths and sha256 in path order
 * ("path\0sha256\0" each, "null" for what was not read), so that the order
 * a scan listed them in does not matter. */
static void tree_digest(const json_t *m, char hex[2 * AP_SHA256_SIZE + 1])
{
	const json_t *inputs = json_object_get(m, "inputs"), *input;
	size_t n = json_array_size(inputs), i;
	input_ref *refs = ap_xcalloc(n + 1, sizeof *refs);
	unsigned char digest[AP_SHA256_SIZE];
	ap_buf text = AP_BUF_INIT;

	json_array_foreach(inputs, i, input) {
		const char *sha = json_string_value(json_object_get(input, "sha256"));
		refs[i].path = json_string_value(json_object_get(input, "path"));
		refs[i].sha256 = sha != NULL ? sha : "null";
	}
	qsort(refs, n, sizeof *refs, ap_cmp_strs);
	for (i = 0; i < n; i++) {
		ap_buf_append(&text, refs[i].path, strlen(refs[i].path) + 1);
		ap_buf_append(&text, refs[i].sha256, strlen(refs[i].sha256) + 1);
	}
	ap_sha256_buf(text.data != NULL ? text.data : "", text.len, digest);
	ap_sha256_hex(digest, hex);
	ap_buf_free(&text);
	free(refs);
}

static char *dup_or_null(const char *s)
{
	return s != NULL ? ap_xstrdup(s) : NULL;
}

static void add_tree(ap_merge *mg, const json_t *m, const char *node)
{
	const json_t *aiter = json_object_get(m, "aiter");
	char hex[2 * AP_SHA256_SIZE + 1];
	size_t at;

	tree_digest(m, hex);
	at = ap_map_get_str(mg->tree_index, hex);
	if (at == AP_MAP_ABSENT) {
		tree *t;
		ap_xgrow((void **)&mg->trees, &mg->trees_cap, mg->ntrees + 1, sizeof *mg->trees);
		t = &mg->trees[mg->ntrees];
		memset(t, 0, sizeof *t);
		memcpy(t->digest, hex, sizeof hex);
		t->version = dup_or_null(json_string_value(json_object_get(aiter, "version")));
		t->git_commit = dup_or_null(json_string_value(json_object_get(aiter, "git_commit")));
		at = mg->ntrees++;
		ap_xok(ap_map_put_str(mg->tree_index, hex, at));
	}
	nodeset_add(&mg->trees[at].nodes, node);
}

static void add_capabilities(ap_merge *mg, const json_t *m, const char *node)
{
	const json_t *caps = json_object_get(m, "capabilities"), *cap;
	const char *id;

	json_object_foreach((json_t *)caps, id, cap) {
		size_t at = ap_map_get_str(mg->cap_index, id);
		capability *c;
		if (at == AP_MAP_ABSENT) {
			ap_xgrow((void **)&mg->caps, &mg->caps_cap, mg->ncaps + 1, sizeof *mg->caps);
			c = &mg->caps[mg->ncaps];
			memset(c, 0, sizeof *c);
			c->id = ap_xstrdup(id);
			at = mg->ncaps++;
			ap_xok(ap_map_put_str(mg->cap_index, id, at));
		}
		c = &mg->caps[at];
		nodeset_add(&c->probed, node);
		if (json_is_true(json_object_get(cap, "supported")))
			c->supported++;
		else
			nodeset_add(&c->lacking, node);
	}
}

/* The ids of m the merge has not seen. */
static size_t new_capabilities(const ap_merge *mg, const json_t *m)
{
	const json_t *cap;
	const char *id;
	size_t n = 0;

	json_object_foreach((json_t *)json_object_get(m, "capabilities"), id, cap)
		n += ap_map_get_str(mg->cap_index, id) == AP_MAP_ABSENT;
	return n;
}

static void add_bad(ap_merge *mg, const char *path, const char *error)
{
	ap_xgrow((void **)&mg->bad, &mg->bad_cap, mg->nbad + 1, sizeof *mg->bad);
	mg->bad[mg->nbad].path = ap_xstrdup(path);
	mg->bad[mg->nbad].error = ap_xstrdup(error);
	mg->nbad++;
}

int ap_merge_add_file(ap_merge *mg, const char *path)
{
	json_t *m;
	char *node;
	size_t seen;
	node_file *f;
	int rc;

	if ((rc = ap_manifest_read_file(path, &m)) < 0) {
		if (rc != AP_EIO && rc != AP_EINPUT)
			return rc;
		add_bad(mg, path, ap_error_last());
		return AP_MERGE_SKIPPED;
	}
	if (new_capabilities(mg, m) > AP_MERGE_MAX_CAPABILITIES - mg->ncaps) {
		char *why = ap_xasprintf("%s: its capabilities would take the merge past %d distinct "
		                         "ids (it adds %zu to %zu)", path, AP_MERGE_MAX_CAPABILITIES,
		                         new_capabilities(mg, m), mg->ncaps);
		add_bad(mg, path, why);
		ap_error_set("%s", why);
		free(why);
		json_decref(m);
		return AP_MERGE_SKIPPED;
	}
	node = node_name(m, path);
	seen = ap_map_get_str(mg->names, node);
	if (seen != AP_MAP_ABSENT) {
		ap_error_set("%s: node '%s' is also the node of %s", path, node,
		             mg->files[seen].path);
		free(node);
		json_decref(m);
		return AP_EINPUT;
	}
	ap_xgrow((void **)&mg->files, &mg->files_cap, mg->nfiles + 1, sizeof *mg->files);
	f = &mg->files[mg->nfiles];
	f->node = ap_xstrdup(node);
	f->path = ap_xstrdup(path);
	f->generated = dup_or_null(json_string_value(json_object_get(m, "generated")));
	ap_xok(ap_map_put_str(mg->names, node, mg->nfiles++));
	add_capabilities(mg, m, node);
	add_tree(mg, m, node);
	nodeset_add(&mg->all, node);
	free(node);
	json_decref(m);
	return AP_OK;
}

size_t ap_merge_nodes(const ap_merge *mg)
{
	return mg->nfiles;
}

size_t ap_merge_skipped(const ap_merge *mg)
{
	return mg->nbad;
}

static bool capability_differs(const ap_merge *mg, const capability *c)
{
	size_t n = mg->all.count;

	/* Not probed on every node: probed on none, which cannot be. */
	return c->supported != n && c->lacking.count != n;
}

bool ap_merge_differ(const ap_merge *mg)
{
	size_t i;

	if (mg->ntrees > 1)
		return true;
	for (i = 0; i < mg->ncaps; i++)
		if (capability_differs(mg, &mg->caps[i]))
			return true;
	return false;
}

/* The ranges of one family joined until their text passes this many bytes:
 * longer items would not wrap on a terminal. */
#define ITEM_BYTES 40

static size_t range_nodes(const range *r)
{
	return r->width == 0 ? 1 : (size_t)(r->hi - r->lo + 1);
}

/* A set's first max_ranges ranges (0: all of them), the nodes past them
 * counted in "omitted". join: ranges of one family as one item
 * ("node-[0001-0003,0007]"), several items when they are many, for text;
 * else one item per range, whole ("node-[0001-0003]", "node-0007"). */
static json_t *nodeset_json(const nodeset *s, size_t max_ranges, bool join)
{
	json_t *names = json_array();
	size_t i = 0, end = max_ranges == 0 || max_ranges > s->nranges ? s->nranges : max_ranges;
	size_t omitted = 0;

	for (size_t k = end; k < s->nranges; k++)
		omitted += range_nodes(&s->ranges[k]);
	while (i < end) {
		const range *r = &s->ranges[i];
		ap_buf body = AP_BUF_INIT;
		char *item;
		size_t n = 0;

		if (r->width == 0) {
			json_array_append_new(names, ap_json_text(r->prefix));
			i++;
			continue;
		}
		while (i < end && range_cmp_family(&s->ranges[i], r) == 0 &&
		       (n == 0 || (join && body.len < ITEM_BYTES))) {
			const range *q = &s->ranges[i++];
			ap_buf_printf(&body, "%s%0*" PRIu64, n++ > 0 ? "," : "", r->width, q->lo);
			if (q->hi != q->lo)
				ap_buf_printf(&body, "-%0*" PRIu64, r->width, q->hi);
		}
		if (n > 1 || s->ranges[i - 1].lo != s->ranges[i - 1].hi)
			item = ap_xasprintf("%s[%s]%s", r->prefix, body.data, r->suffix);
		else
			item = ap_xasprintf("%s%s%s", r->prefix, body.data, r->suffix);
		json_array_append_new(names, ap_json_text(item));
		free(item);
		ap_buf_free(&body);
	}
	return json_pack("{s:I, s:o, s:I}", "count", (json_int_t)s->count, "nodes", names, "omitted",
	                 (json_int_t)omitted);
}

static int cap_cmp(const void *a, const void *b)
{
	return ap_cmp_strs(&(*(const capability *const *)a)->id, &(*(const capability *const *)b)->id);
}

/* The most nodes first; the digest breaks ties, so the order is the same
 * whatever order the manifests came in. */
static int tree_cmp(const void *a, const void *b)
{
	const tree *x = *(const tree *const *)a, *y = *(const tree *const *)b;

	if (x->nodes.count != y->nodes.count)
		return x->nodes.count > y->nodes.count ? -1 : 1;
	return strcmp(x->digest, y->digest);
}

/* Seconds since 1970 of "YYYY-MM-DDTHH:MM:SSZ" (what the scan writes), or
 * -1: days from the civil date, so that no time zone is consulted. */
static long long epoch_of(const char *text)
{
	int y, mo, d, h, mi, sec, used = 0;
	long long days;

	if (text == NULL ||
	    sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 ||
	    used != 20 || text[used] != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	y -= mo <= 2;
	days = 365LL * y + y / 4 - y / 100 + y / 400 + (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 +
	       d - 1 - 719468;
	return days * 86400 + h * 3600 + mi * 60 + sec;
}

static int node_file_cmp(const void *a, const void *b)
{
	return strcmp((*(const node_file *const *)a)->node, (*(const node_file *const *)b)->node);
}

/* Each node's manifest, by node name: its file, when it was made and its
 * age against now (SOURCE_DATE_EPOCH when set, so that a report can be
 * reproduced; null when the manifest does not say). */
static json_t *manifests_json(const ap_merge *mg)
{
	const node_file **files = ap_xcalloc(mg->nfiles + 1, sizeof *files);
	json_t *out = json_array();
	time_t now = 0;
	size_t i;

	if (ap_manifest_source_date(getenv("SOURCE_DATE_EPOCH"), &now) <= 0)
		now = time(NULL);
	for (i = 0; i < mg->nfiles; i++)
		files[i] = &mg->files[i];
	qsort(files, mg->nfiles, sizeof *files, node_file_cmp);
	for (i = 0; i < mg->nfiles; i++) {
		long long at = epoch_of(files[i]->generated);
		json_array_append_new(out, json_pack("{s:o, s:o, s:o, s:o}", "node",
		                                     ap_json_text(files[i]->node), "file",
		                                     ap_json_text(files[i]->path), "generated",
		                                     ap_json_text(files[i]->generated), "age_s",
		                                     at < 0 ? json_null()
		                                            : json_integer((json_int_t)now - at)));
	}
	free(files);
	return out;
}

json_t *ap_merge_report(const ap_merge *mg, size_t max_ranges, bool join)
{
	const capability **caps = ap_xcalloc(mg->ncaps + 1, sizeof *caps);
	const tree **trees = ap_xcalloc(mg->ntrees + 1, sizeof *trees);
	json_t *jcaps = json_object(), *jtrees = json_array(), *jbad = json_array();
	size_t i, ndiffer = 0;

	for (i = 0; i < mg->ncaps; i++)
		caps[i] = &mg->caps[i];
	qsort(caps, mg->ncaps, sizeof *caps, cap_cmp);
	for (i = 0; i < mg->ncaps; i++) {
		bool differs = capability_differs(mg, caps[i]);
		nodeset unprobed = {0};
		ndiffer += differs;
		nodeset_minus(&unprobed, &mg->all, &caps[i]->probed);
		json_object_set_new(jcaps, caps[i]->id,
		                    json_pack("{s:I, s:b, s:o, s:o}", "supported",
		                              (json_int_t)caps[i]->supported, "differs", differs,
		                              "lacking",
		                              nodeset_json(&caps[i]->lacking, max_ranges, join),
		                              "unprobed", nodeset_json(&unprobed, max_ranges, join)));
		nodeset_free(&unprobed);
	}
	for (i = 0; i < mg->ntrees; i++)
		trees[i] = &mg->trees[i];
	qsort(trees, mg->ntrees, sizeof *trees, tree_cmp);
	for (i = 0; i < mg->ntrees; i++)
		json_array_append_new(jtrees,
		                      json_pack("{s:s, s:o, s:o, s:o}", "digest", trees[i]->digest,
		                                "version", ap_json_text(trees[i]->version),
		                                "git_commit", ap_json_text(trees[i]->git_commit),
		                                "nodes", nodeset_json(&trees[i]->nodes, max_ranges,
		                                                      join)));
	for (i = 0; i < mg->nbad; i++)
		json_array_append_new(jbad, json_pack("{s:o, s:o}", "file", ap_json_text(mg->bad[i].path),
		                                      "error", ap_json_text(mg->bad[i].error)));
	free(caps);
	free(trees);
	return json_pack("{s:I, s:b, s:I, s:o, s:o, s:o, s:o}", "nodes", (json_int_t)mg->all.count,
	                 "differ", ap_merge_differ(mg), "differing_capabilities",
	                 (json_int_t)ndiffer, "capabilities", jcaps, "trees", jtrees, "manifests",
	                 manifests_json(mg), "unreadable", jbad);
}

/* --- Text ----------------------------------------------------------------- */

/* 9958 as "9,958": lists of thousands of nodes are read at a glance. */
static char *thousands(json_int_t n)
{
	char digits[32];
	ap_buf b = AP_BUF_INIT;
	size_t len, i;

	snprintf(digits, sizeof digits, "%" JSON_INTEGER_FORMAT, n);
	len = strlen(digits);
	for (i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			ap_buf_putc(&b, ',');
		ap_buf_putc(&b, digits[i]);
	}
	return ap_buf_detach(&b);
}

static const char *plural(json_int_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "LEAD label: a, b, and 9,958 more", wrapped at width, further lines after
 * indent columns; the label and "and 9,958 more" each kept on one line. */
static void print_nodes(FILE *to, const char *lead, const char *label, const json_t *set,
                        int indent, int width)
{
	const json_t *names = json_object_get(set, "nodes"), *name;
	json_int_t omitted = json_integer_value(json_object_get(set, "omitted"));
	ap_buf b = AP_BUF_INIT;
	size_t i, n = json_array_size(names);

	ap_buf_printf(&b, "%s:", label);
	json_array_foreach(names, i, name)
		ap_buf_printf(&b, " %s%s", json_string_value(name), i + 1 < n || omitted > 0 ? "," : "");
	if (omitted > 0) {
		char *more = thousands(omitted);
		ap_buf_printf(&b, " and" AP_TEXT_JOIN "%s" AP_TEXT_JOIN "more", more);
		free(more);
	}
	ap_text_wrap_after(to, lead, b.data, indent, width);
	ap_buf_free(&b);
}

/* A title, painted with code, on lines of its own. */
static void print_title(FILE *to, bool color, const char *code, const char *title, int width)
{
	char *text = ap_xasprintf("%s%s%s", ap_text_paint(color, code), title,
	                          ap_text_paint(color, AP_TEXT_RESET));

	fputc('\n', to);
	ap_text_wrap(to, text, 0, 4, width);
	free(text);
}

/* The ids of the capabilities in one state on every node, on wrapped lines. */
static void print_uniform(FILE *to, bool color, const char *code, const char *title,
                          const json_t *caps, const char *state, json_int_t nodes, int width)
{
	const json_t *cap;
	const char *id;
	ap_buf b = AP_BUF_INIT;

	json_object_foreach((json_t *)caps, id, cap) {
		const json_t *v = json_object_get(cap, state);
		json_int_t n = json_is_object(v) ? json_integer_value(json_object_get(v, "count"))
		                                 : json_integer_value(v);
		if (n == nodes)
			ap_buf_printf(&b, "%s%s", b.len > 0 ? " " : "", id);
	}
	if (b.len > 0) {
		print_title(to, color, code, title, width);
		ap_text_wrap_after(to, "  ", b.data, 2, width);
	}
	ap_buf_free(&b);
}

/* "  DIGEST  AITER VERSION (commit C)  N nodes: ...": the nodes on the next
 * line (as a capability's are) when the rest does not fit on one. */
static void print_tree(FILE *to, const json_t *t, int width)
{
	const char *version = json_string_value(json_object_get(t, "version"));
	const char *commit = json_string_value(json_object_get(t, "git_commit"));
	const json_t *set = json_object_get(t, "nodes");
	json_int_t n = json_integer_value(json_object_get(set, "count"));
	char *count = thousands(n);
	char *label = ap_xasprintf("%s" AP_TEXT_JOIN "%s", count, plural(n, "node", "nodes"));
	char *digest = ap_xasprintf("  %.12s  ", json_string_value(json_object_get(t, "digest")));
	/* A git id shortened as git shortens it; anything else (escaped) whole. */
	int keep = commit != NULL && commit[strspn(commit, "0123456789abcdef")] == '\0' ? 12 : INT_MAX;
	char *head = ap_xasprintf("AITER %s%s%.*s%s", version != NULL ? version : "unknown",
	                          commit != NULL ? " (commit" AP_TEXT_JOIN : "", keep,
	                          commit != NULL ? commit : "", commit != NULL ? ")" : "");
	char *lead = ap_xasprintf("%s%s  ", digest, head);

	if (ap_text_columns(lead) <= width) {
		print_nodes(to, lead, label, set, 4, width);
	} else {
		ap_text_wrap_after(to, digest, head, 4, width);
		print_nodes(to, "    ", label, set, 6, width);
	}
	free(lead);
	free(head);
	free(digest);
	free(label);
	free(count);
}

static void print_report(const json_t *report, FILE *to, bool color, int width)
{
	json_int_t nodes = json_integer_value(json_object_get(report, "nodes"));
	json_int_t ndiffer = json_integer_value(json_object_get(report, "differing_capabilities"));
	const json_t *caps = json_object_get(report, "capabilities"), *cap;
	const json_t *trees = json_object_get(report, "trees"), *t;
	const json_t *bad = json_object_get(report, "unreadable");
	size_t ncaps = json_object_size(caps), ntrees = json_array_size(trees), i;
	size_t nbad = json_array_size(bad);
	char *total = thousands(nodes);
	const char *id;
	ap_buf b = AP_BUF_INIT;

	ap_buf_printf(&b, "%s %s, %zu AITER %s; ", total, plural(nodes, "node", "nodes"), ntrees,
	              plural((json_int_t)ntrees, "tree", "trees"));
	if (ndiffer == 0)
		ap_buf_printf(&b, "no capability of %zu differs across nodes", ncaps);
	else
		ap_buf_printf(&b, "%" JSON_INTEGER_FORMAT " of %zu %s %s across nodes", ndiffer, ncaps,
		              plural((json_int_t)ncaps, "capability", "capabilities"),
		              plural(ndiffer, "differs", "differ"));
	if (nbad > 0)
		ap_buf_printf(&b, "; %zu %s not merged", nbad, plural((json_int_t)nbad, "manifest",
		                                                       "manifests"));
	ap_text_wrap(to, b.data, 0, 4, width);
	ap_buf_free(&b);
	if (ndiffer > 0)
		print_title(to, false, "", "Capabilities that differ (how many nodes have each):",
		            width);
	json_object_foreach((json_t *)caps, id, cap) {
		json_int_t have = json_integer_value(json_object_get(cap, "supported"));
		const json_t *lacking = json_object_get(cap, "lacking");
		const json_t *unprobed = json_object_get(cap, "unprobed");
		char *count, *lead, *text;

		if (!json_is_true(json_object_get(cap, "differs")))
			continue;
		count = thousands(have);
		lead = ap_xasprintf("  %s  ", id);
		text = ap_xasprintf("%s%s" AP_TEXT_JOIN "of" AP_TEXT_JOIN "%s%s",
		                    ap_text_paint(color, have == 0 ? AP_TEXT_RED : AP_TEXT_YELLOW),
		                    count, total, ap_text_paint(color, AP_TEXT_RESET));
		ap_text_wrap_after(to, lead, text, 4, width);
		free(text);
		free(lead);
		free(count);
		if (json_integer_value(json_object_get(lacking, "count")) > 0)
			print_nodes(to, "    ", "lacking", lacking, 6, width);
		if (json_integer_value(json_object_get(unprobed, "count")) > 0)
			print_nodes(to, "    ", "not" AP_TEXT_JOIN "probed", unprobed, 6, width);
	}
	print_uniform(to, color, AP_TEXT_GREEN, "Supported on every node:", caps, "supported", nodes,
	              width);
	print_uniform(to, color, AP_TEXT_RED, "Lacking on every node:", caps, "lacking", nodes,
	              width);
	print_title(to, false, "",
	            "AITER trees (by the digest of their inputs, the most nodes first):", width);
	json_array_foreach(trees, i, t)
		print_tree(to, t, width);
	if (nbad > 0)
		print_title(to, color, AP_TEXT_RED, "Not merged (no node counted for them):", width);
	json_array_foreach(bad, i, t)
		ap_text_wrap_after(to, "  ", json_string_value(json_object_get(t, "error")), 4, width);
	free(total);
}

void ap_merge_print_text(const json_t *report, FILE *to, bool color, int width)
{
	/* Node names, ids, versions and commits come from the manifests: never
	 * raw control bytes on a terminal. */
	json_t *safe = ap_json_for_terminal(report);

	print_report(safe, to, color, width);
	json_decref(safe);
}
