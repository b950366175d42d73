/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/json-text.h"
#include "core/manifest-format.h"
#include "core/manifest-read.h"
#include "core/mla-route.h"
#include "core/signature.h"
#include "core/text.h"
#include "core/trust.h"

/* Manifests nest a few levels; more is refused before parsing, by this
 * reader and the Python one alike (python/aiter_probe/__init__.py, _MAX_DEPTH). */
#define MAX_DEPTH 64
#define MANIFEST_MAX_BYTES AP_MANIFEST_MAX_BYTES

/* What a value may be; a mask, so "a string or null" is one check. */
enum {
	K_STRING = 1u << 0,
	K_NULL = 1u << 1,
	K_INT = 1u << 2,
	K_BOOL = 1u << 3,
	K_OBJECT = 1u << 4,
	K_ARRAY = 1u << 5,
	K_OPTIONAL = 1u << 6, /* the key may be absent */
};

static const char *const rule_statuses[] = {"matched", "unmatched", "missing", "error", "unknown", NULL};
static const char *const seen_classes[] = {"absent",   "outside",    "folder",     "not-file",
                                           "loop",     "too-long",   "unreadable", "over-hash-cap",
                                           NULL};
static const char *const launch_statuses[] = {"passed", "failed", "error", "skipped", NULL};
static const char *const pad_modes[] = {"none", "repeat-interleave", "tile-slice", NULL};
static const char *const kernels[] = {"aiter", "reference", NULL};


static bool is_kind(const json_t *v, unsigned kinds)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return kinds & K_STRING;
	case JSON_NULL:
		return kinds & K_NULL;
	case JSON_INTEGER:
		return kinds & K_INT;
	case JSON_TRUE:
	case JSON_FALSE:
		return kinds & K_BOOL;
	case JSON_OBJECT:
		return kinds & K_OBJECT;
	case JSON_ARRAY:
		return kinds & K_ARRAY;
	default:
		return false;
	}
}

static int describe_kinds(ap_buf *b, unsigned kinds)
{
	static const struct {
		unsigned kind;
		const char *words;
	} names[] = {
		{K_STRING, "a string"}, {K_INT, "an integer"}, {K_BOOL, "true or false"},
		{K_OBJECT, "an object"}, {K_ARRAY, "an array"}, {K_NULL, "null"},
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(kinds & names[i].kind))
			continue;
		if ((b->len > 0 && ap_buf_try_puts(b, " or ") < 0) ||
		    ap_buf_try_puts(b, names[i].words) < 0)
			return AP_ENOMEM;
	}
	return AP_OK;
}

static int wrong_kind(const char *file, const char *where, unsigned kinds)
{
	ap_buf words = AP_BUF_INIT;
	int rc = describe_kinds(&words, kinds);

	if (rc == AP_OK) {
		ap_error_set("%s: '%s' must be %s", file, where, words.data);
		rc = AP_EINPUT;
	}
	ap_buf_free(&words);
	return rc;
}

/* "where.key", the way messages name a value; NULL when memory runs out. */
static char *key_path(const char *where, const char *key)
{
	return where[0] != '\0' ? ap_asprintf("%s.%s", where, key) : ap_strdup(key);
}

/* Fetches obj[key] into *out after checking its kind; an absent optional
 * key gives NULL. */
static int field(const char *file, const json_t *obj, const char *where, const char *key,
                 unsigned kinds, json_t **out)
{
	json_t *v = json_object_get(obj, key);
	char *path;
	int rc = AP_OK;

	*out = v;
	/* The path is only for the message: most manifests have no error, and
	 * a fleet's merge reads thousands of them. */
	if ((v == NULL && (kinds & K_OPTIONAL)) || (v != NULL && is_kind(v, kinds)))
		return AP_OK;
	if ((path = key_path(where, key)) == NULL)
		return AP_ENOMEM;
	if (v == NULL) {
		ap_error_set("%s: missing key '%s'", file, path);
		rc = AP_EINPUT;
	} else if (!is_kind(v, kinds)) {
		rc = wrong_kind(file, path, kinds);
	}
	free(path);
	return rc;
}

static int one_of(const char *file, const char *where, const char *key, const json_t *v,
                  const char *const *names)
{
	ap_buf list = AP_BUF_INIT;
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(json_string_value(v), names[i]) == 0)
			return AP_OK;
	for (i = 0; names[i] != NULL; i++) {
		if (ap_buf_try_printf(&list, "%s%s", i > 0 ? ", " : "", names[i]) < 0) {
			ap_buf_free(&list);
			return AP_ENOMEM;
		}
	}
	ap_error_set("%s: '%s.%s' must be one of %s (not '%s')", file, where, key, list.data,
	             json_string_value(v));
	ap_buf_free(&list);
	return AP_EINPUT;
}

static int check_schema(const char *file, const json_t *m)
{
	const char *schema;
	json_t *v;
	char *end;
	long major;
	int rc;

	rc = field(file, m, "", "schema", K_STRING, &v);
	if (rc < 0)
		return rc;
	schema = json_string_value(v);
	if (strcmp(schema, AP_MANIFEST_SCHEMA) == 0)
		return AP_OK;
	if (strncmp(schema, AP_MANIFEST_SCHEMA_PREFIX, strlen(AP_MANIFEST_SCHEMA_PREFIX)) == 0) {
		const char *digits = schema + strlen(AP_MANIFEST_SCHEMA_PREFIX);
		/* Digits only, as the Python reader's pattern: strtol alone would
		 * take a sign or leading blanks. */
		size_t ndigits = strspn(digits, "0123456789");
		bool number = ndigits > 0 && digits[ndigits] == '\0';
		errno = 0;
		major = number ? strtol(digits, &end, 10) : 0;
		if (number && errno == 0 && major > AP_MANIFEST_SCHEMA_MAJOR) {
			ap_error_set("%s: schema '%s' is newer than this reader understands (%s)", file,
			             schema, AP_MANIFEST_SCHEMA);
			return AP_EINPUT;
		}
	}
	ap_error_set("%s: schema '%s' is not one this reader understands (%s)", file, schema,
	             AP_MANIFEST_SCHEMA);
	return AP_EINPUT;
}

/* The node that scanned (manifests before it have none). Merge names nodes
 * by it, so a name is a few bytes of text, as a host name is. */
static int check_host(const char *file, const json_t *m)
{
	json_t *v;
	size_t len;
	int rc;

	rc = field(file, m, "", "host", K_STRING | K_NULL | K_OPTIONAL, &v);
	if (rc < 0 || !json_is_string(v))
		return rc;
	len = json_string_length(v);
	if (len == 0 || len > AP_MANIFEST_HOST_MAX) {
		ap_error_set("%s: 'host' must be a name of 1 to %d bytes, not %zu", file,
		             AP_MANIFEST_HOST_MAX, len);
		return AP_EINPUT;
	}
	return AP_OK;
}

/* The interpreter whose facts answers read (manifests before it, and those
 * whose answers read none, have none): what readers compare with the
 * interpreter that will import the tree. */
static int check_python(const char *file, const json_t *m)
{
	static const char *const facts[] = {"version", "releaselevel", "platform", "os_name"};
	json_t *py, *v, *finds;
	const char *name;
	int rc;

	if ((rc = field(file, m, "", "python", K_OBJECT | K_OPTIONAL, &py)) < 0 || py == NULL ||
	    (rc = field(file, py, "python", "executable", K_STRING | K_NULL, &v)) < 0)
		return rc;
	for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
		if ((rc = field(file, py, "python", facts[i], K_STRING | K_OPTIONAL, &v)) < 0)
			return rc;
	if ((rc = field(file, py, "python", "finds", K_OBJECT | K_OPTIONAL, &finds)) < 0 ||
	    finds == NULL)
		return rc;
	json_object_foreach(finds, name, v) {
		if (!json_is_boolean(v)) {
			char *where = ap_asprintf("python.finds.%s", name);
			if (where == NULL)
				return AP_ENOMEM;
			rc = wrong_kind(file, where, K_BOOL);
			free(where);
			return rc;
		}
	}
	return AP_OK;
}

static int check_aiter(const char *file, const json_t *m)
{
	json_t *aiter, *v;
	int rc;

	if ((rc = field(file, m, "", "aiter", K_OBJECT, &aiter)) < 0 ||
	    (rc = field(file, aiter, "aiter", "root", K_STRING, &v)) < 0 ||
	    (rc = field(file, aiter, "aiter", "meta", K_STRING | K_OPTIONAL, &v)) < 0 ||
	    (rc = field(file, aiter, "aiter", "version", K_STRING | K_NULL, &v)) < 0 ||
	    (rc = field(file, aiter, "aiter", "git_commit", K_STRING | K_NULL, &v)) < 0)
		return rc;
	/* Relative, the inputs would be looked for under the reader's working
	 * directory, and the answer would change with it. */
	static const char *const folders[] = {"root", "meta"};
	for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
		const char *path = json_string_value(json_object_get(aiter, folders[i]));

		if (path != NULL && path[0] != '/') {
			char *safe = ap_terminal_text(path, strlen(path));
			if (safe == NULL)
				return AP_ENOMEM;
			ap_error_set("%s: 'aiter.%s' must be an absolute path, not '%s'", file,
			             folders[i], safe);
			free(safe);
			return AP_EINPUT;
		}
	}
	return AP_OK;
}

static bool is_sha256_hex(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

static int check_input(const char *file, const json_t *input, const char *where)
{
	json_t *path, *sha, *bytes, *seen = NULL;
	int rc;

	if (!json_is_object(input))
		return wrong_kind(file, where, K_OBJECT);
	if ((rc = field(file, input, where, "path", K_STRING, &path)) < 0 ||
	    (rc = field(file, input, where, "sha256", K_STRING | K_NULL, &sha)) < 0 ||
	    (rc = field(file, input, where, "bytes", K_INT | K_NULL, &bytes)) < 0 ||
	    (rc = field(file, input, where, "seen", K_STRING | K_OPTIONAL, &seen)) < 0 ||
	    (seen != NULL && (rc = one_of(file, where, "seen", seen, seen_classes)) < 0))
		return rc;
	if (json_is_string(sha) && !is_sha256_hex(json_string_value(sha))) {
		ap_error_set("%s: '%s.sha256' must be 64 lowercase hex digits or null", file, where);
		return AP_EINPUT;
	}
	if (json_is_integer(bytes) && json_integer_value(bytes) < 0) {
		ap_error_set("%s: '%s.bytes' must not be negative", file, where);
		return AP_EINPUT;
	}
	return AP_OK;
}

static int check_inputs(const char *file, const json_t *m)
{
	json_t *inputs, *input;
	size_t i;
	int rc;

	rc = field(file, m, "", "inputs", K_ARRAY, &inputs);
	if (rc < 0)
		return rc;
	if (json_array_size(inputs) == 0) {
		/* Freshness is that every input still hashes the same. */
		ap_error_set("%s: 'inputs' is empty: a manifest that records no input would be fresh "
		             "for ever", file);
		return AP_EINPUT;
	}
	json_array_foreach(inputs, i, input) {
		char *where = ap_asprintf("inputs[%zu]", i);
		if (where == NULL)
			return AP_ENOMEM;
		rc = check_input(file, input, where);
		free(where);
		if (rc < 0)
			return rc;
	}
	return AP_OK;
}

static int check_captures(const char *file, const json_t *captures, const char *where)
{
	const char *name;
	json_t *v;

	json_object_foreach((json_t *)captures, name, v) {
		if (!json_is_string(v)) {
			char *path = key_path(where, name);
			int rc = path != NULL ? wrong_kind(file, path, K_STRING) : AP_ENOMEM;
			free(path);
			return rc;
		}
	}
	return AP_OK;
}

static int check_match(const char *file, const json_t *match, const char *where)
{
	json_t *v, *captures;
	int rc;

	if (!json_is_object(match))
		return wrong_kind(file, where, K_OBJECT);
	if ((rc = field(file, match, where, "line", K_INT, &v)) < 0 ||
	    (rc = field(file, match, where, "text", K_STRING, &v)) < 0 ||
	    (rc = field(file, match, where, "captures", K_OBJECT, &captures)) < 0)
		return rc;
	{
		char *path = key_path(where, "captures");
		rc = path != NULL ? check_captures(file, captures, path) : AP_ENOMEM;
		free(path);
	}
	return rc;
}

static int check_rule(const char *file, const json_t *rule, const char *where)
{
	json_t *status, *matches, *match, *v;
	size_t i;
	int rc;

	if (!json_is_object(rule))
		return wrong_kind(file, where, K_OBJECT);
	if ((rc = field(file, rule, where, "status", K_STRING, &status)) < 0 ||
	    (rc = one_of(file, where, "status", status, rule_statuses)) < 0 ||
	    (rc = field(file, rule, where, "file", K_STRING | K_NULL, &v)) < 0 ||
	    (rc = field(file, rule, where, "reason", K_STRING | K_OPTIONAL, &v)) < 0 ||
	    (rc = field(file, rule, where, "matches", K_ARRAY, &matches)) < 0)
		return rc;
	json_array_foreach(matches, i, match) {
		char *path = ap_asprintf("%s.matches[%zu]", where, i);
		if (path == NULL)
			return AP_ENOMEM;
		rc = check_match(file, match, path);
		free(path);
		if (rc < 0)
			return rc;
	}
	return AP_OK;
}

/* A launch result's or a verified plan row's "kernel", when there is one
 * (absent in manifests of earlier versions, where the reference ran). */
static int check_kernel(const char *file, const json_t *obj, const char *where)
{
	json_t *v;
	int rc = field(file, obj, where, "kernel", K_STRING | K_OPTIONAL, &v);

	return rc < 0 || v == NULL ? rc : one_of(file, where, "kernel", v, kernels);
}

static int check_launch(const char *file, const json_t *launch, const char *where)
{
	json_t *status, *results, *result, *v;
	size_t i;
	int rc;

	if ((rc = field(file, launch, where, "status", K_STRING, &status)) < 0 ||
	    (rc = one_of(file, where, "status", status, launch_statuses)) < 0 ||
	    (rc = field(file, launch, where, "reason", K_STRING | K_NULL | K_OPTIONAL, &v)) < 0 ||
	    (rc = field(file, launch, where, "results", K_ARRAY, &results)) < 0 ||
	    (rc = check_kernel(file, launch, where)) < 0)
		return rc;
	json_array_foreach(results, i, result) {
		char *path = ap_asprintf("%s.results[%zu]", where, i);
		if (path == NULL)
			return AP_ENOMEM;
		if (!json_is_object(result))
			rc = wrong_kind(file, path, K_OBJECT);
		else
			rc = field(file, result, path, "status", K_STRING, &v);
		if (rc >= 0)
			rc = field(file, result, path, "device", K_OBJECT | K_OPTIONAL, &v);
		if (rc >= 0)
			rc = check_kernel(file, result, path);
		free(path);
		if (rc < 0)
			return rc;
	}
	return AP_OK;
}

static int check_capability(const char *file, const json_t *cap, const char *where)
{
	json_t *v, *launch;
	char *path;
	int rc;

	if (!json_is_object(cap))
		return wrong_kind(file, where, K_OBJECT);
	if ((rc = field(file, cap, where, "supported", K_BOOL, &v)) < 0 ||
	    (rc = field(file, cap, where, "reason", K_STRING, &v)) < 0 ||
	    (rc = field(file, cap, where, "evidence", K_ARRAY, &v)) < 0 ||
	    (rc = field(file, cap, where, "launch", K_OBJECT | K_OPTIONAL, &launch)) < 0)
		return rc;
	if (launch == NULL)
		return AP_OK;
	path = key_path(where, "launch");
	rc = path != NULL ? check_launch(file, launch, path) : AP_ENOMEM;
	free(path);
	return rc;
}

/* rules and capabilities: objects keyed by id, each checked by check_one. */
static int check_keyed(const char *file, const json_t *m, const char *key,
                       int (*check_one)(const char *, const json_t *, const char *))
{
	json_t *all, *v;
	const char *id;
	int rc;

	rc = field(file, m, "", key, K_OBJECT, &all);
	if (rc < 0)
		return rc;
	json_object_foreach(all, id, v) {
		char *where = ap_asprintf("%s[\"%s\"]", key, id);
		if (where == NULL)
			return AP_ENOMEM;
		rc = check_one(file, v, where);
		free(where);
		if (rc < 0)
			return rc;
	}
	return AP_OK;
}

static int check_plan_row(const char *file, const json_t *row, const char *where)
{
	json_t *heads, *launch_heads, *mode, *v;
	ap_pad_mode planned;
	int rc, n, launch;

	if (!json_is_object(row))
		return wrong_kind(file, where, K_OBJECT);
	if ((rc = field(file, row, where, "heads", K_INT, &heads)) < 0 ||
	    (rc = field(file, row, where, "launch_heads", K_INT, &launch_heads)) < 0 ||
	    (rc = field(file, row, where, "mode", K_STRING, &mode)) < 0 ||
	    (rc = one_of(file, where, "mode", mode, pad_modes)) < 0 ||
	    (rc = field(file, row, where, "verified", K_BOOL, &v)) < 0 ||
	    (rc = check_kernel(file, row, where)) < 0)
		return rc;
	if (json_integer_value(heads) < 1 || json_integer_value(launch_heads) < 1) {
		ap_error_set("%s: '%s' must have heads and launch_heads of at least 1", file, where);
		return AP_EINPUT;
	}
	/* A consumer takes launch_heads for an int, and pads to it. */
	if (json_integer_value(heads) > AP_MLA_MAX_HEADS ||
	    json_integer_value(launch_heads) > AP_MLA_MAX_HEADS) {
		ap_error_set("%s: '%s' must have heads and launch_heads of at most %d", file, where,
		             AP_MLA_MAX_HEADS);
		return AP_EINPUT;
	}
	/* A consumer pads by the row: only what the routing gives can be padded
	 * (src/core/mla-route.c; the Python reader's _pad_mode is the same). With
	 * both counts in range, the routing refuses only fewer launch heads. */
	n = (int)json_integer_value(heads);
	launch = (int)json_integer_value(launch_heads);
	if (ap_mla_pad_mode(n, launch, &planned) < 0) {
		ap_error_set("%s: '%s' must have launch_heads of at least heads (%d), not %d", file,
		             where, n, launch);
		return AP_EINPUT;
	}
	if (strcmp(json_string_value(mode), ap_pad_mode_name(planned)) != 0) {
		ap_error_set("%s: '%s.mode' must be %s for %d heads as %d, as the planner pads (not "
		             "'%s')", file, where, ap_pad_mode_name(planned), n, launch,
		             json_string_value(mode));
		return AP_EINPUT;
	}
	return AP_OK;
}

static int check_plans(const char *file, const json_t *m)
{
	json_t *plans, *rows, *row;
	size_t i;
	int rc;

	if ((rc = field(file, m, "", "plans", K_OBJECT, &plans)) < 0 ||
	    (rc = field(file, plans, "plans", "mla_heads", K_ARRAY, &rows)) < 0)
		return rc;
	if (json_array_size(rows) == 0) {
		ap_error_set("%s: 'plans.mla_heads' must not be empty", file);
		return AP_EINPUT;
	}
	json_array_foreach(rows, i, row) {
		char *where = ap_asprintf("plans.mla_heads[%zu]", i);
		if (where == NULL)
			return AP_ENOMEM;
		rc = check_plan_row(file, row, where);
		free(where);
		if (rc < 0)
			return rc;
	}
	return AP_OK;
}

/* The GPUs of the scan; older readers did not look at them, so the key may
 * be absent, but what is there is a list of objects. */
static int check_devices(const char *file, const json_t *m)
{
	json_t *devices, *dev;
	size_t i;
	int rc;

	rc = field(file, m, "", "devices", K_ARRAY | K_OPTIONAL, &devices);
	if (rc < 0 || devices == NULL)
		return rc;
	json_array_foreach(devices, i, dev) {
		if (!json_is_object(dev)) {
			char *where = ap_asprintf("devices[%zu]", i);
			rc = where != NULL ? wrong_kind(file, where, K_OBJECT) : AP_ENOMEM;
			free(where);
			return rc;
		}
	}
	return AP_OK;
}

/* A callable of `signatures`: its parameters as core/signature.c reads
 * them, or why they are not known. */
static int check_callable(const char *file, const json_t *c, const char *where)
{
	ap_sig_param params[AP_SIG_MAX_PARAMS];
	char why[AP_SIG_WHY_BYTES];
	json_t *text, *unknown, *v;
	size_t n;
	int rc;

	if (!json_is_object(c))
		return wrong_kind(file, where, K_OBJECT);
	if ((rc = field(file, c, where, "params", K_STRING | K_OPTIONAL, &text)) < 0 ||
	    (rc = field(file, c, where, "unknown", K_STRING | K_OPTIONAL, &unknown)) < 0 ||
	    (rc = field(file, c, where, "file", K_STRING | K_OPTIONAL, &v)) < 0 ||
	    (rc = field(file, c, where, "line", K_INT | K_OPTIONAL, &v)) < 0 ||
	    (rc = field(file, c, where, "async", K_BOOL | K_OPTIONAL, &v)) < 0)
		return rc;
	if ((text == NULL) == (unknown == NULL)) {
		ap_error_set("%s: '%s' must have one of 'params' and 'unknown'", file, where);
		return AP_EINPUT;
	}
	if (text != NULL && (json_string_length(text) > AP_SIG_MAX_BYTES ||
	                     strlen(json_string_value(text)) != json_string_length(text))) {
		ap_error_set("%s: '%s.params' must be at most %d bytes, with no NUL", file, where,
		             AP_SIG_MAX_BYTES);
		return AP_EINPUT;
	}
	if (text != NULL && ap_sig_parse(json_string_value(text), params, AP_SIG_MAX_PARAMS, &n, why,
	                                 sizeof why) < 0) {
		ap_error_set("%s: '%s.params' is no parameter list: %s", file, where, why);
		return AP_EINPUT;
	}
	return AP_OK;
}

/* The signatures of the scan's modules, when it recorded them. */
static int check_signatures(const char *file, const json_t *m)
{
	json_t *all, *mod, *callables, *c, *v;
	const char *name, *fn;
	int rc;

	rc = field(file, m, "", "signatures", K_OBJECT | K_OPTIONAL, &all);
	if (rc < 0 || all == NULL)
		return rc;
	json_object_foreach(all, name, mod) {
		char *where = ap_asprintf("signatures[\"%s\"]", name), *at = NULL;
		if (where == NULL)
			return AP_ENOMEM;
		if (!json_is_object(mod))
			rc = wrong_kind(file, where, K_OBJECT);
		else if ((rc = field(file, mod, where, "file", K_STRING | K_NULL, &v)) == 0 &&
		         (rc = field(file, mod, where, "reason", K_STRING | K_OPTIONAL, &v)) == 0 &&
		         (rc = field(file, mod, where, "left_out", K_INT | K_OPTIONAL, &v)) == 0)
			rc = field(file, mod, where, "callables", K_OBJECT, &callables);
		json_object_foreach(rc == 0 ? callables : NULL, fn, c) {
			if ((at = ap_asprintf("%s.callables[\"%s\"]", where, fn)) == NULL)
				rc = AP_ENOMEM;
			else
				rc = check_callable(file, c, at);
			free(at);
			if (rc < 0)
				break;
		}
		free(where);
		if (rc < 0)
			return rc;
	}
	return AP_OK;
}

static int check_manifest(const char *file, const json_t *m)
{
	int rc;

	if (!json_is_object(m)) {
		ap_error_set("%s: not a manifest: the top level is not a JSON object", file);
		return AP_EINPUT;
	}
	if ((rc = check_schema(file, m)) < 0 || (rc = check_host(file, m)) < 0 ||
	    (rc = check_aiter(file, m)) < 0 || (rc = check_python(file, m)) < 0 ||
	    (rc = check_inputs(file, m)) < 0 ||
	    (rc = check_keyed(file, m, "rules", check_rule)) < 0 ||
	    (rc = check_keyed(file, m, "capabilities", check_capability)) < 0 ||
	    (rc = check_devices(file, m)) < 0 || (rc = check_plans(file, m)) < 0 ||
	    (rc = check_signatures(file, m)) < 0)
		return rc;
	return AP_OK;
}

/* --- What is refused before parsing. -------------------------------------
 * The Python reader's json module takes what jansson refuses (NaN, Infinity,
 * integers past 64 bits, reals past the double range, \u0000, unpaired
 * surrogates) and recurses once per nesting level. Both readers look for
 * these first, the same way (python/aiter_probe/__init__.py, _prescan), so that they
 * refuse the same manifests with the same words: "FILE:LINE:COLUMN: ...",
 * columns in characters. */

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_word_char(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_number_char(unsigned char c)
{
	return is_digit(c) || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

/* Four hex digits at p (n bytes there), or -1. */
static long hex4(const unsigned char *p, size_t n)
{
	long v = 0;
	size_t i;

	if (n < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		unsigned char c = p[i];
		int d = is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Whether the number token t (n bytes) is past what this reader keeps: an
 * integer outside 64 bits, or a real that overflows a double. Tokens that
 * are not numbers are left to the parser. */
static bool number_out_of_range(const unsigned char *t, size_t n)
{
	const unsigned char *d = t;
	size_t nd = n, i;
	bool integer = true, digit = false;
	double v;

	for (i = 0; i < n; i++) {
		if (is_digit(t[i]))
			digit = true;
		else if (!(i == 0 && t[i] == '-'))
			integer = false;
	}
	if (!digit)
		return false;
	if (integer) {
		const char *limit = t[0] == '-' ? "9223372036854775808" : "9223372036854775807";
		if (t[0] == '-') {
			d++;
			nd--;
		}
		while (nd > 1 && d[0] == '0') {
			d++;
			nd--;
		}
		return nd > 19 || (nd == 19 && memcmp(d, limit, 19) > 0);
	}
	return ap_json_number((const char *)t, n, &v) && isinf(v);
}

/* Refuses what is at s[at]: line and column (in characters, each UTF-8
 * sequence one) as the Python reader counts them. */
static int refuse_at(const char *file, const unsigned char *s, size_t at, const char *what)
{
	unsigned line = 1, col = 1;
	size_t i;

	for (i = 0; i < at; i++) {
		if (s[i] == '\n') {
			line++;
			col = 1;
		} else if ((s[i] & 0xC0) != 0x80) {
			col++;
		}
	}
	ap_error_at(file, line, col, "%s", what);
	return AP_EINPUT;
}

static int prescan(const char *file, const unsigned char *s, size_t n)
{
	size_t depth = 0, i = 0;
	bool in_string = false;
	char what[64];

	while (i < n) {
		unsigned char c = s[i];

		if (in_string) {
			if (c == '"') {
				in_string = false;
			} else if (c == '\\' && i + 1 < n && s[i + 1] == 'u') {
				long code = hex4(s + i + 2, n - i - 2);
				size_t len = code < 0 ? 2 : 6;
				if (code == 0)
					return refuse_at(file, s, i, "\\u0000 is not allowed in a string");
				if (code >= 0xD800 && code <= 0xDBFF) {
					long low = i + 7 < n && s[i + 6] == '\\' && s[i + 7] == 'u'
					           ? hex4(s + i + 8, n - i - 8) : -1;
					if (low < 0xDC00 || low > 0xDFFF)
						code = -2;
					len = 12;
				}
				if (code == -2 || (code >= 0xDC00 && code <= 0xDFFF)) {
					snprintf(what, sizeof what, "unpaired surrogate '\\u%.4s' in a string",
					         (const char *)s + i + 2);
					return refuse_at(file, s, i, what);
				}
				i += len;
				continue;
			} else if (c == '\\' && i + 1 < n) {
				i += 2;
				continue;
			}
			i++;
			continue;
		}
		if (c == '"') {
			in_string = true;
		} else if (c == '[' || c == '{') {
			if (++depth > MAX_DEPTH) {
				snprintf(what, sizeof what, "more than %d nested arrays and objects",
				         MAX_DEPTH);
				return refuse_at(file, s, i, what);
			}
		} else if (c == ']' || c == '}') {
			if (depth > 0)
				depth--;
		} else if ((c == '-' || is_digit(c)) &&
		           (i == 0 || !(is_word_char(s[i - 1]) || is_number_char(s[i - 1])))) {
			size_t len = 1;
			while (i + len < n && is_number_char(s[i + len]))
				len++;
			if (number_out_of_range(s + i, len))
				return refuse_at(file, s, i, "number out of range");
			i += len;
			continue;
		} else if ((c == 'N' || c == 'I') && (i == 0 || !is_word_char(s[i - 1]))) {
			const char *word = c == 'N' ? "NaN" : "Infinity";
			if (n - i >= strlen(word) && memcmp(s + i, word, strlen(word)) == 0) {
				snprintf(what, sizeof what, "'%s' is not JSON", word);
				return refuse_at(file, s, i, what);
			}
		}
		i++;
	}
	return AP_OK;
}

static const char *file_kind(mode_t mode)
{
	return S_ISDIR(mode) ? "a folder" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
	                                                                           : "a device";
}

static int not_regular(const char *path, mode_t mode)
{
	ap_error_set("%s: not a regular file (%s)", path, file_kind(mode));
	return AP_EINPUT;
}

static int too_large(const char *path)
{
	ap_error_set("%s: larger than %zu MiB, the limit for a manifest", path,
	             MANIFEST_MAX_BYTES >> 20);
	return AP_EINPUT;
}

/* The whole file, or AP_EIO / AP_EINPUT with the message set. Only a regular
 * file is read, and only one the reading user may trust (core/trust.h): a
 * FIFO would block for ever, a device read without end. The path (not
 * followed, as a symlink is not trusted) is looked at before opening, as
 * opening a device can do things, and what was opened again, non-blocking,
 * in case the path changed in between; at most one byte past the cap is
 * read, so a file that grows while it is read is refused too. */
static int slurp(const char *path, ap_buf *into)
{
	char chunk[65536];
	struct stat st;
	int fd, rc = AP_OK;

	if (lstat(path, &st) != 0) {
		ap_error_set("%s: %s", path, strerror(errno));
		return AP_EIO;
	}
	if ((rc = ap_trust_stat(path, NULL, &st)) < 0 || (rc = ap_trust_folder_of(path)) < 0)
		return rc;
	if (!S_ISREG(st.st_mode))
		return not_regular(path, st.st_mode);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		ap_error_set("%s: %s", path, strerror(errno));
		return AP_EIO;
	}
	if (fstat(fd, &st) != 0) {
		ap_error_set("%s: %s", path, strerror(errno));
		rc = AP_EIO;
	} else if (!S_ISREG(st.st_mode)) {
		rc = not_regular(path, st.st_mode);
	} else if ((uintmax_t)st.st_size > MANIFEST_MAX_BYTES) {
		rc = too_large(path);
	} else {
		rc = ap_trust_stat(path, NULL, &st);
	}
	while (rc == AP_OK) {
		size_t want = MANIFEST_MAX_BYTES + 1 - into->len;
		ssize_t got = read(fd, chunk, want < sizeof chunk ? want : sizeof chunk);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ap_error_set("%s: %s", path, strerror(errno));
			rc = AP_EIO;
		} else if (got == 0) {
			break;
		} else if (ap_buf_try_append(into, chunk, (size_t)got) < 0) {
			rc = AP_ENOMEM;
		} else if (into->len > MANIFEST_MAX_BYTES) {
			rc = too_large(path);
		}
	}
	close(fd);
	return rc;
}

/* jansson's refusals of a text that is JSON are duplicate keys and bad
 * UTF-8, with their messages; whatever else it makes of one is what a failed
 * allocation left (core/json-text.h). */
static int parse(const char *path, const ap_buf *text, json_t **out)
{
	const char *data = text->len > 0 ? text->data : "";
	/* jansson leaves the code unset when it fails without a message. */
	json_error_t jerr = {0};
	enum json_error_code code;

	/* Duplicate keys would let two readers see two different manifests. */
	*out = json_loadb(data, text->len, JSON_REJECT_DUPLICATES, &jerr);
	code = json_error_code(&jerr);
	if (*out == NULL && (code == json_error_duplicate_key || code == json_error_invalid_utf8 ||
	                     !ap_json_text_is(data, text->len, NULL))) {
		ap_error_at(path, jerr.line > 0 ? (unsigned)jerr.line : 0,
		            jerr.column > 0 ? (unsigned)jerr.column : 0, "%s", jerr.text);
		return AP_EINPUT;
	}
	if (*out == NULL || !ap_json_text_is(data, text->len, *out)) {
		json_decref(*out);
		*out = NULL;
		ap_error_set("out of memory while parsing");
		return AP_ENOMEM;
	}
	return AP_OK;
}

int ap_manifest_read_file(const char *path, json_t **out)
{
	ap_buf text = AP_BUF_INIT;
	json_t *m = NULL;
	int rc;

	*out = NULL;
	if ((rc = slurp(path, &text)) == AP_OK &&
	    (rc = prescan(path, (const unsigned char *)text.data, text.len)) == AP_OK)
		rc = parse(path, &text, &m);
	ap_buf_free(&text);
	if (rc == AP_OK)
		rc = check_manifest(path, m);
	if (rc == AP_ENOMEM)
		ap_error_prefix("%s", path);
	if (rc < 0) {
		json_decref(m);
		return rc;
	}
	*out = m;
	return AP_OK;
}

/* --- capabilities of a loaded manifest ------------------------------------------ */

const char *ap_manifest_cap_verdict(const json_t *cap)
{
	const char *reason = json_string_value(json_object_get(cap, "reason"));

	if (json_is_true(json_object_get(cap, "supported")))
		return "supported";
	if (reason != NULL &&
	    strncmp(reason, AP_CAP_UNKNOWN_PREFIX, strlen(AP_CAP_UNKNOWN_PREFIX)) == 0)
		return "unknown";
	return "unsupported";
}

/* --- plans.mla_heads of a loaded manifest ------------------------------------ */

static const json_t *plan_rows(const json_t *m)
{
	return json_object_get(json_object_get(m, "plans"), "mla_heads");
}

size_t ap_manifest_mla_plan_count(const json_t *m)
{
	return json_array_size(plan_rows(m));
}

const json_t *ap_manifest_mla_plan_at(const json_t *m, size_t i)
{
	const json_t *rows = plan_rows(m);

	if (i >= json_array_size(rows)) {
		ap_error_set("plans.mla_heads has %zu rows, no row %zu", json_array_size(rows), i);
		return NULL;
	}
	return json_array_get(rows, i);
}

const json_t *ap_manifest_mla_plan_for(const json_t *m, int heads)
{
	const json_t *row;
	size_t i;

	json_array_foreach(plan_rows(m), i, row) {
		if (json_integer_value(json_object_get(row, "heads")) == heads)
			return row;
	}
	ap_error_set("plans.mla_heads has no row for %d heads", heads);
	return NULL;
}

void ap_manifest_mla_plan_read(const json_t *row, ap_mla_plan_row *out)
{
	out->heads = (int)json_integer_value(json_object_get(row, "heads"));
	out->launch_heads = (int)json_integer_value(json_object_get(row, "launch_heads"));
	out->verified = json_is_true(json_object_get(row, "verified"));
	out->kernel = json_string_value(json_object_get(row, "kernel"));
	/* check_plan_row took only a row whose mode is the routing's for its
	 * counts, so the routing gives it without a failure to handle. */
	(void)ap_mla_pad_mode(out->heads, out->launch_heads, &out->mode);
}
