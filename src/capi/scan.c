/* SPDX-License-Identifier: MIT */
/* The C API's scan: the engine's front door (engine/scan.h), with the
 * API's options and results. */
#include "config.h"

#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "aiter-probe.h"
#include "capi/capi.h"
#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/manifest.h"
#include "engine/pytarget.h"
#include "engine/rules.h"
#include "engine/scan.h"

/* The engine takes what jansson returns as given, as it takes ap_x*'s: so
 * during a scan, jansson's allocator jumps back too. Elsewhere it returns
 * NULL, which the core checks. It wraps the allocator the process had and
 * frees with that one's free, so that jansson's memory stays its own. */
static json_malloc_t prior_malloc;
static json_free_t prior_free;
static pthread_once_t hooked = PTHREAD_ONCE_INIT;

static void *json_alloc(size_t n)
{
	void *p = prior_malloc(n);

	if (p == NULL && ap_oom_catching()) {
		ap_error_set("out of memory (asked for %zu bytes)", n);
		ap_xnonnull(NULL);
	}
	return p;
}

static void hook_json(void)
{
	json_get_alloc_funcs(&prior_malloc, &prior_free);
	json_set_alloc_funcs(json_alloc, prior_free);
}

int aiter_probe_scan(aiter_probe_manifest **out, const aiter_probe_scan_options *opts)
{
	static const aiter_probe_scan_options defaults = AITER_PROBE_SCAN_OPTIONS_INIT;
	ap_pytarget_given given;
	ap_scan_request req;
	jmp_buf here, *outer;
	ap_ruleset *rs = NULL;
	json_t *doc;
	int rc;

	ap_error_clear();
	if (out == NULL) {
		ap_error_set("%s: out is NULL", __func__);
		return AITER_PROBE_INVALID;
	}
	*out = NULL;
	if (opts == NULL)
		opts = &defaults;
	if (opts->version < 1 || opts->version > AITER_PROBE_SCAN_OPTIONS_VERSION) {
		ap_error_set("%s: options of version %u, this library knows versions 1 to %d",
		             __func__, opts->version, AITER_PROBE_SCAN_OPTIONS_VERSION);
		return AITER_PROBE_INVALID;
	}
	if (opts->rule_path_count > 0 && opts->rule_paths == NULL) {
		ap_error_set("%s: rule_paths is NULL with rule_path_count %zu", __func__,
		             opts->rule_path_count);
		return AITER_PROBE_INVALID;
	}
	req = (ap_scan_request){
		.aiter_root = opts->aiter_root,
		.root_imported = true,
		.python = opts->python,
		.rules = opts->rule_paths,
		.nrules = opts->rule_path_count,
		.no_default_rules = opts->no_default_rules != 0,
		.no_launch = opts->launch == 0,
		.devices = opts->devices,
		.launch_timeout = opts->launch_timeout,
		.max_file_size = opts->max_file_size,
		.host = opts->host,
		/* a caller of version 1 has no such field */
		.python_version = opts->version >= 2 ? opts->python_version : NULL,
		.datadir = opts->version >= 3 ? opts->datadir : NULL,
		.signatures = opts->version >= 4 && opts->signatures != 0,
	};
	if (opts->version >= 3 && opts->python_facts != NULL) {
		const aiter_probe_python_facts *f = opts->python_facts;
		given = (ap_pytarget_given){f->executable, f->major, f->minor, f->micro,
		                            f->releaselevel, f->platform, f->os_name, f->finds,
		                            f->context};
		req.python_given = &given;
	}
	/* The engine allocates through ap_x*, which would end the process when
	 * memory runs out: here they come back instead. */
	pthread_once(&hooked, hook_json);
	outer = ap_oom_catch(&here);
	if (setjmp(here) != 0) {
		ap_oom_catch(outer);
		ap_error_prefix("%s", __func__);
		return AITER_PROBE_OUT_OF_MEMORY;
	}
	rc = ap_scan_tree(&req, &rs, &doc);
	ap_oom_catch(outer);
	ap_ruleset_free(rs);
	if (rc == AP_ENOMEM)
		return AITER_PROBE_OUT_OF_MEMORY;
	if (rc < 0)
		return AITER_PROBE_ERROR;
	return ap_capi_manifest_new(doc, "the scanned manifest", out);
}

char *aiter_probe_manifest_json(const aiter_probe_manifest *m)
{
	json_free_t release;
	char *text, *line;
	size_t n;

	ap_error_clear();
	if (m == NULL) {
		ap_error_set("%s: m is NULL", __func__);
		return NULL;
	}
	text = json_dumps(ap_capi_manifest_doc(m), AP_MANIFEST_JSON_FLAGS);
	if (text == NULL) {
		ap_error_set("%s: cannot write the manifest as JSON", __func__);
		return NULL;
	}
	/* Ours to free() whatever allocator the process gave jansson; and the
	 * file's last byte is a newline, which json_dumps' text lacks. */
	n = strlen(text);
	line = malloc(n + 2);
	if (line != NULL) {
		memcpy(line, text, n);
		line[n] = '\n';
		line[n + 1] = '\0';
	} else {
		ap_error_set("%s: out of memory", __func__);
	}
	json_get_alloc_funcs(NULL, &release);
	release(text);
	return line;
}

int aiter_probe_manifest_write(const aiter_probe_manifest *m, const char *path)
{
	ap_error_clear();
	if (m == NULL || path == NULL) {
		ap_error_set("%s: %s is NULL", __func__, m == NULL ? "m" : "path");
		return AITER_PROBE_INVALID;
	}
	return ap_manifest_write(ap_capi_manifest_doc(m), path) < 0 ? AITER_PROBE_ERROR
	                                                            : AITER_PROBE_OK;
}
