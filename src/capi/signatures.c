/* SPDX-License-Identifier: MIT */
/* The C API's answers from a manifest's `signatures`: what a callable's
 * parameters are, and whether a call of a given shape binds to them
 * (core/signature.c, the rule the scan's `binds` checks use too). They
 * allocate nothing: a server asks them on its own calls. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "aiter-probe.h"
#include "capi/capi.h"
#include "core/ap-error.h"
#include "core/signature.h"

#define NO_SIGNATURES "the manifest records no signatures (scanned without --signatures)"
#define NO_MODULE "the manifest records no signatures of that module"
#define NO_CALLABLE                                                                             \
	"no callable of that name recorded (not bound there, a module, a name imported from "    \
	"outside the tree, or past the scan's cap)"

/* The entry for qualname ("a.b.name", or "a.b:name"), or NULL with *reason. */
static const json_t *callable(const aiter_probe_manifest *m, const char *qualname,
                              const char **reason)
{
	const json_t *all = json_object_get(ap_capi_manifest_doc(m), "signatures"), *mod, *e;
	const char *cut = strchr(qualname, ':');
	char module[1024];
	size_t len;

	if (cut == NULL)
		cut = strrchr(qualname, '.');
	if (all == NULL) {
		*reason = NO_SIGNATURES;
		return NULL;
	}
	len = cut != NULL ? (size_t)(cut - qualname) : 0;
	if (cut == NULL || len >= sizeof module) {
		*reason = "a name must follow its module: aiter.mla.mla_decode_fwd, or aiter.mla:mla_decode_fwd";
		return NULL;
	}
	memcpy(module, qualname, len);
	module[len] = '\0';
	if ((mod = json_object_get(all, module)) == NULL) {
		*reason = NO_MODULE;
		return NULL;
	}
	if ((e = json_object_get(json_object_get(mod, "callables"), cut + 1)) == NULL) {
		*reason = json_string_value(json_object_get(mod, "reason"));
		if (*reason == NULL)
			*reason = NO_CALLABLE;
		return NULL;
	}
	if ((*reason = json_string_value(json_object_get(e, "unknown"))) != NULL)
		return NULL;
	return e;
}

int aiter_probe_manifest_signature(const aiter_probe_manifest *m, const char *qualname,
                                   const char **params, const char **reason)
{
	const char *why;
	const json_t *e;

	if (params != NULL)
		*params = NULL;
	if (reason != NULL)
		*reason = NULL;
	if (m == NULL || qualname == NULL) {
		ap_error_set("%s: %s is NULL", __func__, m == NULL ? "m" : "qualname");
		return AITER_PROBE_INVALID;
	}
	if ((e = callable(m, qualname, &why)) == NULL) {
		if (reason != NULL)
			*reason = why;
		return 0;
	}
	if (params != NULL)
		*params = json_string_value(json_object_get(e, "params"));
	return 1;
}

int aiter_probe_manifest_binds(const aiter_probe_manifest *m, const char *qualname,
                               size_t positional, const char *const *keywords, size_t nkeywords,
                               char *why, size_t why_size)
{
	ap_sig_param params[AP_SIG_MAX_PARAMS];
	bool scratch[AP_SIG_MAX_PARAMS];
	char buf[AP_SIG_WHY_BYTES];
	const char *reason;
	const json_t *e;
	size_t n;

	if (why != NULL && why_size > 0)
		why[0] = '\0';
	if (m == NULL || qualname == NULL || (keywords == NULL && nkeywords > 0)) {
		ap_error_set("%s: %s is NULL", __func__,
		             m == NULL ? "m" : qualname == NULL ? "qualname" : "keywords");
		return AITER_PROBE_INVALID;
	}
	for (size_t k = 0; k < nkeywords; k++) {
		if (keywords[k] == NULL) {
			ap_error_set("%s: keywords[%zu] is NULL", __func__, k);
			return AITER_PROBE_INVALID;
		}
		for (size_t j = 0; j < k; j++) {
			if (strcmp(keywords[j], keywords[k]) == 0) {
				ap_error_set("%s: keyword '%s' given twice", __func__, keywords[k]);
				return AITER_PROBE_INVALID;
			}
		}
	}
	if ((e = callable(m, qualname, &reason)) == NULL) {
		if (why != NULL && why_size > 0)
			snprintf(why, why_size, "%s", reason);
		ap_error_set("%s: cannot tell: %s", qualname, reason);
		return AITER_PROBE_UNKNOWN;
	}
	/* the reader checked that it parses */
	ap_sig_parse(json_string_value(json_object_get(e, "params")), params, AP_SIG_MAX_PARAMS, &n,
	             buf, sizeof buf);
	if (ap_sig_binds(params, n, positional, keywords, nkeywords, scratch, buf, sizeof buf))
		return 1;
	if (why != NULL && why_size > 0)
		snprintf(why, why_size, "%s", buf);
	return 0;
}
