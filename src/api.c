/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>

#include "aiter-probe.h"
#include "ap-error.h"
#include "ap-util.h"
#include "manifest-read.h"
#include "verify.h"

struct aiter_probe_manifest {
	json_t *doc;
};

const char *aiter_probe_version(void)
{
	return PACKAGE_VERSION;
}

static int refuse_if_stale(const json_t *doc, const char *path)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;
	int rc = AITER_PROBE_OK;

	if (ap_verify_manifest(doc, path, &res) < 0) {
		rc = AITER_PROBE_ERROR;
	} else if (res.nstale > 0) {
		char *which = ap_verify_describe(&res);
		ap_error_set("%s: stale: %s", path, which);
		free(which);
		rc = AITER_PROBE_STALE;
	}
	ap_verify_result_free(&res);
	return rc;
}

int aiter_probe_manifest_open(aiter_probe_manifest **out, const char *path, unsigned flags)
{
	json_t *doc;
	int rc;

	*out = NULL;
	ap_error_clear();
	if (flags & ~AITER_PROBE_VERIFY_FRESH) {
		ap_error_set("%s: unknown flags 0x%x", path, flags & ~AITER_PROBE_VERIFY_FRESH);
		return AITER_PROBE_ERROR;
	}
	if (ap_manifest_read_file(path, &doc) < 0)
		return AITER_PROBE_ERROR;
	if (flags & AITER_PROBE_VERIFY_FRESH) {
		rc = refuse_if_stale(doc, path);
		if (rc != AITER_PROBE_OK) {
			json_decref(doc);
			return rc;
		}
	}
	*out = ap_xmalloc(sizeof **out);
	(*out)->doc = doc;
	return AITER_PROBE_OK;
}

static const json_t *entry(const aiter_probe_manifest *m, const char *section, const char *what,
                           const char *id)
{
	const json_t *v = json_object_get(json_object_get(m->doc, section), id);

	if (v == NULL)
		ap_error_set("unknown %s '%s'", what, id);
	return v;
}

int aiter_probe_manifest_supported(const aiter_probe_manifest *m, const char *capability)
{
	const json_t *cap = entry(m, "capabilities", "capability", capability);

	if (cap == NULL)
		return -1;
	return json_is_true(json_object_get(cap, "supported"));
}

const char *aiter_probe_manifest_rule_status(const aiter_probe_manifest *m, const char *rule_id)
{
	return json_string_value(json_object_get(entry(m, "rules", "rule", rule_id), "status"));
}

size_t aiter_probe_manifest_rule_matches(const aiter_probe_manifest *m, const char *rule_id)
{
	return json_array_size(json_object_get(entry(m, "rules", "rule", rule_id), "matches"));
}

const char *aiter_probe_manifest_rule_capture(const aiter_probe_manifest *m, const char *rule_id,
                                              size_t match, const char *name)
{
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

int aiter_probe_manifest_mla_heads(const aiter_probe_manifest *m, int heads, int *launch_heads,
                                   const char **mode, int *verified)
{
	const json_t *rows = json_object_get(json_object_get(m->doc, "plans"), "mla_heads");
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row) {
		json_int_t launch = json_integer_value(json_object_get(row, "launch_heads"));

		if (json_integer_value(json_object_get(row, "heads")) != heads)
			continue;
		/* The loader keeps launch_heads to 1..128; an int is never cut. */
		if (launch < 1 || launch > INT_MAX) {
			ap_error_set("plans.mla_heads has no usable row for %d heads", heads);
			return -1;
		}
		if (launch_heads != NULL)
			*launch_heads = (int)launch;
		if (mode != NULL)
			*mode = json_string_value(json_object_get(row, "mode"));
		if (verified != NULL)
			*verified = json_is_true(json_object_get(row, "verified"));
		return 0;
	}
	ap_error_set("plans.mla_heads has no row for %d heads", heads);
	return -1;
}

void aiter_probe_manifest_free(aiter_probe_manifest *m)
{
	if (m == NULL)
		return;
	json_decref(m->doc);
	free(m);
}

const char *aiter_probe_last_error(void)
{
	return ap_error_last();
}

/* --- The manifest saved for one AITER tree ------------------------------- */

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "manifest-path.h"

/* The canonical form of the root a caller names, as a scan records it. */
static char *canonical_root(const char *aiter_root)
{
	char *real = realpath(aiter_root, NULL);

	if (real == NULL)
		ap_error_set("AITER root '%s': %s", aiter_root, strerror(errno));
	return real;
}

int aiter_probe_manifest_default_path(const char *aiter_root, char **path)
{
	char *real;
	int rc;

	*path = NULL;
	ap_error_clear();
	if ((real = canonical_root(aiter_root)) == NULL)
		return -1;
	rc = ap_manifest_default_path(real, path);
	free(real);
	return rc < 0 ? -1 : 0;
}

/* AITER_PROBE_OK when doc, read from path, was made for the tree at real and
 * is fresh; redo says how to make a new one. */
static int accept_for_root(const json_t *doc, const char *path, const char *real,
                           const char *redo)
{
	const char *recorded = json_string_value(json_object_get(json_object_get(doc, "aiter"),
	                                                         "root"));
	ap_verify_result res = AP_VERIFY_RESULT_INIT;
	int rc = AITER_PROBE_OK;

	if (strcmp(recorded, real) != 0) {
		char *now = realpath(recorded, NULL);
		int same = now != NULL && strcmp(now, real) == 0;

		free(now);
		if (!same) {
			ap_error_set("%s was made for %s, not %s", path, recorded, real);
			return AITER_PROBE_ERROR;
		}
	}
	if (ap_verify_manifest(doc, path, &res) < 0) {
		rc = AITER_PROBE_ERROR;
	} else if (res.nstale > 0) {
		char *which = ap_verify_describe(&res);
		ap_error_set("%s is stale: %s: %s", path, which, redo);
		free(which);
		rc = AITER_PROBE_STALE;
	}
	ap_verify_result_free(&res);
	return rc;
}

int aiter_probe_manifest_for_root(aiter_probe_manifest **out, const char *aiter_root,
                                  const char **reason)
{
	const char *named = getenv("AITER_PROBE_MANIFEST");
	int from_env = named != NULL && *named != '\0';
	char *real, *path = NULL, *redo;
	json_t *doc = NULL;
	struct stat st;
	int rc = AITER_PROBE_ERROR;

	*out = NULL;
	if (reason != NULL)
		*reason = NULL;
	ap_error_clear();
	if ((real = canonical_root(aiter_root)) == NULL)
		goto fail;
	if (from_env) {
		path = ap_xstrdup(named);
		redo = ap_xasprintf("run 'aiter-probe scan -o %s'", named);
	} else if (ap_manifest_default_path(real, &path) == AP_OK) {
		redo = ap_xstrdup("run 'aiter-probe scan --save'");
	} else {
		free(real);
		goto fail;
	}
	if (lstat(path, &st) != 0 && errno == ENOENT) {
		ap_error_set("no manifest at %s%s: %s", path,
		             from_env ? " (AITER_PROBE_MANIFEST)" : "", redo);
		rc = AITER_PROBE_MISSING;
	} else if (ap_manifest_read_file(path, &doc) == AP_OK) {
		rc = accept_for_root(doc, path, real, redo);
	}
	if (rc == AITER_PROBE_OK) {
		*out = ap_xmalloc(sizeof **out);
		(*out)->doc = doc;
		doc = NULL;
	}
	json_decref(doc);
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
