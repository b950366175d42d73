/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aiter-probe.h"
#include "capi/capi.h"
#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/manifest-path.h"
#include "core/manifest-read.h"
#include "core/mla-route.h"
#include "core/verify.h"
#include "engine/discover.h"

/* The ids in manifest order, kept once at open so that the i-th id costs no
 * walk of the object and the manifest stays read-only for its threads. */
typedef struct ids {
	const char **id;
	size_t n;
} ids;

struct aiter_probe_manifest {
	json_t *doc;
	ids capabilities;
	ids rules;
};

/* Every entry point refuses a NULL argument it needs, naming itself. */
#define REFUSE_NULL(arg, result)                                                                   \
	do {                                                                                       \
		if ((arg) == NULL) {                                                               \
			ap_error_set("%s: %s is NULL", __func__, #arg);                            \
			return result;                                                             \
		}                                                                                  \
	} while (0)

const char *aiter_probe_version(void)
{
	return PACKAGE_VERSION;
}

/* The public result for a failing core function's code. */
static int public_code(int rc)
{
	return rc == AP_ENOMEM ? AITER_PROBE_OUT_OF_MEMORY : AITER_PROBE_ERROR;
}

/* AITER_PROBE_OUT_OF_MEMORY, the message the core left prefixed with what
 * was being done (a path, a function). */
static int out_of_memory(const char *what)
{
	ap_error_prefix("%s", what);
	return AITER_PROBE_OUT_OF_MEMORY;
}

/* AITER_PROBE_OK when doc, read from path, is fresh; else AITER_PROBE_STALE
 * with the message "PATH: stale: a.cu changed" (stale ": stale") or "PATH is
 * stale: a.cu changed: REDO" (" is stale", and how to make a new one), or the
 * failure's result. */
static int refuse_if_stale(const json_t *doc, const char *path, const char *stale,
                           const char *redo)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;
	int rc = ap_verify_manifest(doc, path, &res);
	char *which;

	if (rc < 0) {
		rc = public_code(rc);
	} else if (res.nstale == 0) {
		rc = AITER_PROBE_OK;
	} else if ((which = ap_verify_describe(&res)) == NULL) {
		rc = out_of_memory(path);
	} else {
		ap_error_set("%s%s: %s%s%s", path, stale, which, redo != NULL ? ": " : "",
		             redo != NULL ? redo : "");
		free(which);
		rc = AITER_PROBE_STALE;
	}
	ap_verify_result_free(&res);
	return rc;
}

static int ids_of(const json_t *object, ids *all)
{
	const char *id;
	json_t *v;

	all->n = 0;
	all->id = ap_calloc(json_object_size(object) + 1, sizeof *all->id);
	if (all->id == NULL)
		return AP_ENOMEM;
	json_object_foreach((json_t *)object, id, v)
		all->id[all->n++] = id;
	return AP_OK;
}

int ap_capi_manifest_new(json_t *doc, const char *path, aiter_probe_manifest **out)
{
	aiter_probe_manifest *m = ap_calloc(1, sizeof *m);

	if (m == NULL || ids_of(json_object_get(doc, "capabilities"), &m->capabilities) < 0 ||
	    ids_of(json_object_get(doc, "rules"), &m->rules) < 0) {
		json_decref(doc);
		if (m != NULL) {
			free(m->capabilities.id);
			free(m);
		}
		return out_of_memory(path);
	}
	m->doc = doc;
	*out = m;
	return AITER_PROBE_OK;
}

const json_t *ap_capi_manifest_doc(const aiter_probe_manifest *m)
{
	return m->doc;
}

int aiter_probe_manifest_open(aiter_probe_manifest **out, const char *path, unsigned flags)
{
	json_t *doc;
	int rc;

	ap_error_clear();
	REFUSE_NULL(out, AITER_PROBE_INVALID);
	*out = NULL;
	REFUSE_NULL(path, AITER_PROBE_INVALID);
	if (flags & ~AITER_PROBE_VERIFY_FRESH) {
		ap_error_set("%s: unknown flags 0x%x", path, flags & ~AITER_PROBE_VERIFY_FRESH);
		return AITER_PROBE_ERROR;
	}
	if ((rc = ap_manifest_read_file(path, &doc)) < 0)
		return public_code(rc);
	if (flags & AITER_PROBE_VERIFY_FRESH) {
		rc = refuse_if_stale(doc, path, ": stale", NULL);
		if (rc != AITER_PROBE_OK) {
			json_decref(doc);
			return rc;
		}
	}
	return ap_capi_manifest_new(doc, path, out);
}

/* The i-th of `all`, with the message a backend's loop needs when it runs
 * past the end: "the manifest has 4 rules, no rule 4". */
static const char *id_at(const ids *all, const char *one, const char *many, size_t i)
{
	if (i >= all->n) {
		ap_error_set("the manifest has %zu %s, no %s %zu", all->n, all->n == 1 ? one : many,
		             one, i);
		return NULL;
	}
	return all->id[i];
}

static const json_t *entry(const aiter_probe_manifest *m, const char *section, const char *what,
                           const char *id)
{
	const json_t *v = json_object_get(json_object_get(m->doc, section), id);

	if (v == NULL)
		ap_error_set("unknown %s '%s'", what, id);
	return v;
}

static const json_t *cap_entry(const aiter_probe_manifest *m, const char *id)
{
	return entry(m, "capabilities", "capability", id);
}

int aiter_probe_manifest_supported(const aiter_probe_manifest *m, const char *capability)
{
	REFUSE_NULL(m, AITER_PROBE_INVALID);
	REFUSE_NULL(capability, AITER_PROBE_INVALID);
	const json_t *cap = cap_entry(m, capability);

	if (cap == NULL)
		return -1;
	return json_is_true(json_object_get(cap, "supported"));
}

size_t aiter_probe_manifest_capability_count(const aiter_probe_manifest *m)
{
	REFUSE_NULL(m, 0);
	return m->capabilities.n;
}

const char *aiter_probe_manifest_capability_id(const aiter_probe_manifest *m, size_t i)
{
	REFUSE_NULL(m, NULL);
	return id_at(&m->capabilities, "capability", "capabilities", i);
}

const char *aiter_probe_manifest_capability_reason(const aiter_probe_manifest *m,
                                                   const char *capability)
{
	REFUSE_NULL(m, NULL);
	REFUSE_NULL(capability, NULL);
	return json_string_value(json_object_get(cap_entry(m, capability), "reason"));
}

size_t aiter_probe_manifest_capability_evidence_count(const aiter_probe_manifest *m,
                                                      const char *capability)
{
	REFUSE_NULL(m, 0);
	REFUSE_NULL(capability, 0);
	return json_array_size(json_object_get(cap_entry(m, capability), "evidence"));
}

const char *aiter_probe_manifest_capability_evidence(const aiter_probe_manifest *m,
                                                     const char *capability, size_t i)
{
	REFUSE_NULL(m, NULL);
	REFUSE_NULL(capability, NULL);
	const json_t *evidence = json_object_get(cap_entry(m, capability), "evidence");
	const char *where;

	if (evidence == NULL)
		return NULL;
	if (i >= json_array_size(evidence)) {
		ap_error_set("capability '%s' has %zu evidence entries, no entry %zu", capability,
		             json_array_size(evidence), i);
		return NULL;
	}
	/* The loader checks the list, not what it holds. */
	where = json_string_value(json_array_get(evidence, i));
	if (where == NULL)
		ap_error_set("capability '%s' evidence entry %zu is not a string", capability, i);
	return where;
}

int aiter_probe_manifest_capability_launch(const aiter_probe_manifest *m, const char *capability,
                                           const char **status, const char **reason)
{
	if (status != NULL)
		*status = NULL;
	if (reason != NULL)
		*reason = NULL;
	REFUSE_NULL(m, AITER_PROBE_INVALID);
	REFUSE_NULL(capability, AITER_PROBE_INVALID);
	const json_t *cap = cap_entry(m, capability);
	const json_t *launch;

	if (cap == NULL)
		return AITER_PROBE_UNKNOWN;
	launch = json_object_get(cap, "launch");
	if (launch == NULL)
		return 0;
	if (status != NULL)
		*status = json_string_value(json_object_get(launch, "status"));
	if (reason != NULL)
		*reason = json_string_value(json_object_get(launch, "reason"));
	return 1;
}

const char *aiter_probe_manifest_capability_launch_kernel(const aiter_probe_manifest *m,
                                                          const char *capability)
{
	REFUSE_NULL(m, NULL);
	REFUSE_NULL(capability, NULL);
	const json_t *cap = cap_entry(m, capability);

	return json_string_value(json_object_get(json_object_get(cap, "launch"), "kernel"));
}

size_t aiter_probe_manifest_rule_count(const aiter_probe_manifest *m)
{
	REFUSE_NULL(m, 0);
	return m->rules.n;
}

const char *aiter_probe_manifest_rule_id(const aiter_probe_manifest *m, size_t i)
{
	REFUSE_NULL(m, NULL);
	return id_at(&m->rules, "rule", "rules", i);
}

const char *aiter_probe_manifest_rule_status(const aiter_probe_manifest *m, const char *rule_id)
{
	REFUSE_NULL(m, NULL);
	REFUSE_NULL(rule_id, NULL);
	return json_string_value(json_object_get(entry(m, "rules", "rule", rule_id), "status"));
}

size_t aiter_probe_manifest_rule_matches(const aiter_probe_manifest *m, const char *rule_id)
{
	REFUSE_NULL(m, 0);
	REFUSE_NULL(rule_id, 0);
	return json_array_size(json_object_get(entry(m, "rules", "rule", rule_id), "matches"));
}

const char *aiter_probe_manifest_rule_capture(const aiter_probe_manifest *m, const char *rule_id,
                                              size_t match, const char *name)
{
	REFUSE_NULL(m, NULL);
	REFUSE_NULL(rule_id, NULL);
	REFUSE_NULL(name, NULL);
	const json_t *matches = json_object_get(entry(m, "rules", "rule", rule_id), "matches");
	const char *value;

	if (matches == NULL)
		return NULL;
	if (match >= json_array_size(matches)) {
		ap_error_set("rule '%s' has %zu matches, no match %zu", rule_id,
		             json_array_size(matches), match);
		return NULL;
	}
	value = json_string_value(
		json_object_get(json_object_get(json_array_get(matches, match), "captures"), name));
	if (value == NULL)
		ap_error_set("rule '%s' match %zu has no capture '%s'", rule_id, match, name);
	return value;
}

_Static_assert(AITER_PROBE_MLA_MAX_HEADS == AP_MLA_MAX_HEADS,
               "the public bound on plan rows is the routing's");

/* A row's fields to the caller's pointers, any of which may be NULL. The
 * mode's name is the routing's, the same text as the row's (the loader
 * checked it), for as long as the program runs. */
static void plan_row_give(const json_t *row, int *heads, int *launch_heads, const char **mode,
                          int *verified)
{
	ap_mla_plan_row r;

	ap_manifest_mla_plan_read(row, &r);
	if (heads != NULL)
		*heads = r.heads;
	if (launch_heads != NULL)
		*launch_heads = r.launch_heads;
	if (mode != NULL)
		*mode = ap_pad_mode_name(r.mode);
	if (verified != NULL)
		*verified = r.verified;
}

int aiter_probe_manifest_mla_heads(const aiter_probe_manifest *m, int heads, int *launch_heads,
                                   const char **mode, int *verified)
{
	REFUSE_NULL(m, AITER_PROBE_INVALID);
	const json_t *row = ap_manifest_mla_plan_for(m->doc, heads);

	if (row == NULL)
		return -1;
	plan_row_give(row, NULL, launch_heads, mode, verified);
	return AITER_PROBE_OK;
}

const char *aiter_probe_manifest_mla_heads_kernel(const aiter_probe_manifest *m, int heads)
{
	REFUSE_NULL(m, NULL);
	ap_mla_plan_row r;
	const json_t *row = ap_manifest_mla_plan_for(m->doc, heads);

	if (row == NULL)
		return NULL;
	ap_manifest_mla_plan_read(row, &r);
	return r.verified ? r.kernel : NULL;
}

size_t aiter_probe_manifest_mla_plan_count(const aiter_probe_manifest *m)
{
	REFUSE_NULL(m, 0);
	return ap_manifest_mla_plan_count(m->doc);
}

int aiter_probe_manifest_mla_plan_row(const aiter_probe_manifest *m, size_t i, int *heads,
                                      int *launch_heads, const char **mode, int *verified)
{
	REFUSE_NULL(m, AITER_PROBE_INVALID);
	const json_t *row = ap_manifest_mla_plan_at(m->doc, i);

	if (row == NULL)
		return AITER_PROBE_UNKNOWN;
	plan_row_give(row, heads, launch_heads, mode, verified);
	return AITER_PROBE_OK;
}

static int refuse_short(const char *buffer, size_t len, int heads, int launch_heads, int need)
{
	ap_error_set("plans.mla_heads: %d heads as %d: %s holds %zu entries, needs %d", heads,
	             launch_heads, buffer, len, need);
	return AITER_PROBE_SHORT_BUFFER;
}

int aiter_probe_manifest_mla_head_maps(const aiter_probe_manifest *m, int heads, int *pad_source,
                                       size_t pad_len, int *unpad, size_t unpad_len)
{
	REFUSE_NULL(m, AITER_PROBE_INVALID);
	const json_t *found = ap_manifest_mla_plan_for(m->doc, heads);
	ap_mla_plan_row row;

	if (found == NULL)
		return AITER_PROBE_UNKNOWN;
	ap_manifest_mla_plan_read(found, &row);
	if (pad_source != NULL && pad_len < (size_t)row.launch_heads)
		return refuse_short("pad_source", pad_len, heads, row.launch_heads, row.launch_heads);
	if (unpad != NULL && unpad_len < (size_t)heads)
		return refuse_short("unpad", unpad_len, heads, row.launch_heads, heads);
	ap_mla_head_maps(heads, row.launch_heads, row.mode, pad_source, unpad);
	return AITER_PROBE_OK;
}

void aiter_probe_manifest_free(aiter_probe_manifest *m)
{
	if (m == NULL)
		return;
	json_decref(m->doc);
	free(m->capabilities.id);
	free(m->rules.id);
	free(m);
}

const char *aiter_probe_last_error(void)
{
	return ap_error_last();
}

/* --- The manifest saved for one AITER tree ------------------------------- */


/* *real = the canonical form of the root a caller names, as a scan records
 * it. */
static int canonical_root(const char *aiter_root, char **real)
{
	if ((*real = realpath(aiter_root, NULL)) != NULL)
		return AITER_PROBE_OK;
	if (errno == ENOMEM) {
		ap_error_set("AITER root '%s': out of memory", aiter_root);
		return AITER_PROBE_OUT_OF_MEMORY;
	}
	ap_error_set("AITER root '%s': %s", aiter_root, strerror(errno));
	return AITER_PROBE_ERROR;
}

int aiter_probe_manifest_default_path(const char *aiter_root, char **path)
{
	char *real;
	int rc;

	ap_error_clear();
	REFUSE_NULL(path, AITER_PROBE_INVALID);
	*path = NULL;
	REFUSE_NULL(aiter_root, AITER_PROBE_INVALID);
	if ((rc = canonical_root(aiter_root, &real)) != AITER_PROBE_OK)
		return rc;
	rc = ap_manifest_default_path(real, path);
	free(real);
	if (rc == AP_ENOMEM)
		return out_of_memory(__func__);
	return rc < 0 ? AITER_PROBE_ERROR : AITER_PROBE_OK;
}

/* aiter.meta, or the root in a manifest from before the key. */
static const char *recorded_meta(const json_t *doc)
{
	const json_t *aiter = json_object_get(doc, "aiter");
	const char *meta = json_string_value(json_object_get(aiter, "meta"));

	return meta != NULL ? meta : json_string_value(json_object_get(aiter, "root"));
}

/* 1 when a and b name the same path, 0 when not, AP_ENOMEM when memory ran
 * out finding out. */
static int same_path(const char *a, const char *b)
{
	char *ra, *rb;
	int err_a, err_b, same;

	if (strcmp(a, b) == 0)
		return 1;
	ra = realpath(a, NULL);
	err_a = errno;
	rb = realpath(b, NULL);
	err_b = errno;
	same = ra != NULL && rb != NULL && strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	if ((ra == NULL && err_a == ENOMEM) || (rb == NULL && err_b == ENOMEM)) {
		ap_error_set("comparing %s with %s: out of memory", a, b);
		return AP_ENOMEM;
	}
	return same;
}

/* AITER_PROBE_OK when doc, read from path, was made for the tree at real and
 * is fresh; redo says how to make a new one. */
static int accept_for_root(const json_t *doc, const char *path, const char *real,
                           const char *redo)
{
	const char *recorded = json_string_value(json_object_get(json_object_get(doc, "aiter"),
	                                                         "root"));
	char *want;
	int same;

	if ((same = same_path(recorded, real)) < 0)
		return out_of_memory(path);
	if (!same) {
		ap_error_set("%s was made for %s, not %s", path, recorded, real);
		return AITER_PROBE_ERROR;
	}
	/* The same package over other sources (AITER_META_DIR elsewhere) is
	 * another AITER: its kernels are built from what the scan never read. */
	if ((want = ap_discover_meta(real, NULL, true)) == NULL)
		return errno == ENOMEM ? out_of_memory(path) : AITER_PROBE_ERROR;
	if ((same = same_path(recorded_meta(doc), want)) == 0)
		ap_error_set("%s was made for the AITER sources in %s, not %s", path,
		             recorded_meta(doc), want);
	free(want);
	if (same != 1)
		return same < 0 ? out_of_memory(path) : AITER_PROBE_ERROR;
	return refuse_if_stale(doc, path, " is stale", redo);
}

/* *path = the manifest for the tree at real, $AITER_PROBE_MANIFEST (named)
 * when set, and *redo = how to make a new one there. */
static int saved_manifest(const char *real, const char *named, char **path, char **redo)
{
	int rc;

	if (named != NULL) {
		*path = ap_strdup(named);
		*redo = ap_asprintf("run 'aiter-probe scan -o %s'", named);
	} else if ((rc = ap_manifest_default_path(real, path)) == AP_OK) {
		*redo = ap_strdup("run 'aiter-probe scan --save'");
	} else if (rc != AP_ENOMEM) {
		return AITER_PROBE_ERROR;
	}
	if (*path == NULL || *redo == NULL)
		return out_of_memory("aiter_probe_manifest_for_root");
	return AITER_PROBE_OK;
}

static int load_for_root(const char *path, const char *real, const char *redo, bool from_env,
                         aiter_probe_manifest **out)
{
	json_t *doc;
	struct stat st;
	int rc;

	if (lstat(path, &st) != 0 && errno == ENOENT) {
		ap_error_set("no manifest at %s%s: %s", path,
		             from_env ? " (AITER_PROBE_MANIFEST)" : "", redo);
		return AITER_PROBE_MISSING;
	}
	if ((rc = ap_manifest_read_file(path, &doc)) < 0)
		return public_code(rc);
	if ((rc = accept_for_root(doc, path, real, redo)) != AITER_PROBE_OK) {
		json_decref(doc);
		return rc;
	}
	return ap_capi_manifest_new(doc, path, out);
}

int aiter_probe_manifest_for_root(aiter_probe_manifest **out, const char *aiter_root,
                                  const char **reason)
{
	const char *named = getenv("AITER_PROBE_MANIFEST");
	bool from_env = named != NULL && *named != '\0';
	char *real, *path = NULL, *redo = NULL;
	int rc;

	if (reason != NULL)
		*reason = NULL;
	ap_error_clear();
	if (out == NULL || aiter_root == NULL) {
		ap_error_set("%s: %s is NULL", __func__, out == NULL ? "out" : "aiter_root");
		if (out != NULL)
			*out = NULL;
		rc = AITER_PROBE_INVALID;
		goto fail;
	}
	*out = NULL;
	if ((rc = canonical_root(aiter_root, &real)) != AITER_PROBE_OK)
		goto fail;
	rc = saved_manifest(real, from_env ? named : NULL, &path, &redo);
	if (rc == AITER_PROBE_OK)
		rc = load_for_root(path, real, redo, from_env, out);
	free(redo);
	free(path);
	free(real);
	if (rc == AITER_PROBE_OK)
		return rc;
fail:
	if (reason != NULL)
		*reason = ap_error_last();
	return rc;
}
