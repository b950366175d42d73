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
