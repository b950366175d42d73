/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/text.h"
#include "engine/discover.h"
#include "engine/evaluate.h"
#include "engine/launch.h"
#include "engine/manifest.h"
#include "engine/pytarget.h"
#include "engine/reader.h"
#include "engine/rules.h"
#include "engine/scan.h"
#include "engine/signatures.h"

bool ap_scan_devices_valid(const char *list)
{
	const char *p = list;

	if (strcmp(list, "all") == 0)
		return true;
	for (;;) {
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '\0')
			return true;
		if (*p++ != ',')
			return false;
	}
}

/* Where the packs and AITER's launcher are: given, else
 * $AITER_PROBE_DATADIR, else the package data dir. */
static const char *data_dir(const char *given)
{
	const char *env = getenv("AITER_PROBE_DATADIR");

	if (given != NULL)
		return given;
	return env != NULL && *env != '\0' ? env : AP_PKGDATADIR;
}

int ap_scan_load_rules(ap_ruleset **out, const char *datadir, const char *const *extra,
                       size_t nextra, bool no_defaults)
{
	static const char *const packs[] = {"rules", "probes"};
	ap_ruleset *rs;
	size_t i;
	int rc = 0;
	bool found = false;

	*out = NULL;
	datadir = data_dir(datadir);
	/* A build with no installed packs (the Python package's) is told where
	 * they are. */
	if (datadir[0] == '\0' && !no_defaults) {
		ap_error_set("no rule packs: this library was built without an installed data folder "
		             "(set AITER_PROBE_DATADIR, or the scan options' datadir)");
		return AP_EINPUT;
	}
	ap_ruleset_new(&rs);
	for (i = 0; !no_defaults && rc == 0 && i < sizeof packs / sizeof packs[0]; i++) {
		char *dir = ap_xasprintf("%s/%s", datadir, packs[i]);
		if (ap_is_folder(dir)) {
			found = true;
			rc = ap_ruleset_load_path(rs, dir);
		}
		free(dir);
	}
	if (rc == 0 && !no_defaults && !found && nextra == 0) {
		ap_error_set("no rule packs in %s (set AITER_PROBE_DATADIR, or pass --rules PATH)",
		             datadir);
		rc = AP_EINPUT;
	}
	for (i = 0; rc == 0 && i < nextra; i++)
		rc = ap_ruleset_load_path(rs, extra[i]);
	if (rc == 0)
		rc = ap_ruleset_finish(rs);
	if (rc < 0) {
		ap_ruleset_free(rs);
		return rc;
	}
	*out = rs;
	return 0;
}

/* A request from the C API has not been through the command line's checks. */
static int check_request(const ap_scan_request *req)
{
	char *why = NULL;

	if (req->devices != NULL && !ap_scan_devices_valid(req->devices))
		ap_error_set("devices takes 'all' or indices like 0,1, not '%s'", req->devices);
	else if (req->host != NULL &&
	         (req->host[0] == '\0' || strlen(req->host) > AP_MANIFEST_HOST_MAX))
		ap_error_set("the host needs a name of 1 to %d bytes", AP_MANIFEST_HOST_MAX);
	else if (req->max_file_size > AP_SCAN_MAX_FILE_SIZE_LIMIT)
		ap_error_set("the largest file size is %zu bytes, not %zu",
		             AP_SCAN_MAX_FILE_SIZE_LIMIT, req->max_file_size);
	else if (!(req->launch_timeout >= 0))
		ap_error_set("the launch time limit must be positive");
	else if (req->python_version != NULL && !ap_pytarget_version_valid(req->python_version))
		ap_error_set("the python version takes X.Y or X.Y.Z (such as 3.12), not '%s'",
		             req->python_version);
	else if (req->python_version != NULL && req->python != NULL)
		ap_error_set("the python and the python version cannot both be given");
	else if (req->python_given != NULL && (req->python != NULL || req->python_version != NULL))
		ap_error_set("the python's facts cannot be given with the python or its version");
	else if (req->python_given != NULL &&
	         (why = ap_pytarget_given_refusal(req->python_given)) != NULL)
		ap_error_set("the python's facts: %s", why);
	else if (req->python != NULL && (why = ap_pytarget_refusal(req->python)) != NULL)
		ap_error_set("the python: %s", why);
	else
		return 0;
	free(why);
	return AP_EINPUT;
}

/* Keeps the devices the request names; an index that does not exist is an
 * error. */
static json_t *select_devices(json_t *all, const char *list, char **reason)
{
	json_t *chosen;
	const char *p = list;

	if (list == NULL || strcmp(list, "all") == 0)
		return json_incref(all);
	chosen = json_array();
	while (*p != '\0') {
		long want = strtol(p, (char **)&p, 10);
		json_t *dev;
		size_t i;
		int found = 0;

		json_array_foreach(all, i, dev) {
			if (json_integer_value(json_object_get(dev, "index")) == want) {
				json_array_append(chosen, dev);
				found = 1;
			}
		}
		if (!found) {
			json_decref(chosen);
			*reason = ap_xasprintf("--devices names GPU %ld, but %zu GPU(s) were found%s%s",
			                       want, json_array_size(all), *reason ? ": " : "",
			                       *reason ? *reason : "");
			return NULL;
		}
		if (*p == ',')
			p++;
	}
	return chosen;
}

/* Whether any path the rules asked for was there. None, with the shipped
 * packs among the rules, means the folder is no AITER tree (the package
 * folder itself, an empty one), whose manifest would only say "unsupported"
 * everywhere; what a pack of one's own finds missing is its own answer. */
static bool found_any(const json_t *inputs)
{
	const json_t *input;
	size_t i;

	json_array_foreach(inputs, i, input) {
		const char *seen = json_string_value(json_object_get(input, "seen"));
		if (seen == NULL || strcmp(seen, "absent") != 0)
			return true;
	}
	return false;
}

static int not_a_tree(const ap_aiter_info *info, size_t asked)
{
	char *root = ap_xnonnull(ap_terminal_text(info->root, strlen(info->root)));
	char *meta = ap_xnonnull(ap_terminal_text(info->meta, strlen(info->meta)));

	if (strcmp(info->root, info->meta) == 0)
		ap_error_set("%s is not an AITER tree: none of the %zu paths the rules read is there "
		             "(the root is the folder that holds the aiter package, or a checkout)",
		             root, asked);
	else
		ap_error_set("%s (meta folder %s) is not an AITER tree: none of the %zu paths the "
		             "rules read is there", root, meta, asked);
	free(root);
	free(meta);
	return AP_EINPUT;
}

/* The indices of the devices AITER's launcher can run on, or {index,
 * reason} of those it cannot. */
static json_t *indices(const json_t *devs, bool usable)
{
	json_t *out = json_array(), *dev;
	size_t i;

	json_array_foreach(devs, i, dev) {
		json_t *why = json_object_get(dev, "unusable"), *index = json_object_get(dev, "index");
		if (usable && why == NULL)
			json_array_append(out, index);
		else if (!usable && why != NULL)
			json_array_append_new(out, json_pack("{s:O, s:O}", "index", index, "reason", why));
	}
	return out;
}

/* The manifest's "launchers": which kernels could run the cross-checks, on
 * which GPUs, and why not. AITER's is tried with the interpreter that will
 * import AITER; it is there when torch and the scanned aiter import and
 * some GPU has AITER's kernels. */
static json_t *launchers_report(const json_t *ref, const char *ref_why, const json_t *aiter,
                                const char *aiter_why, const char *python)
{
	const json_t *adevs = json_object_get(aiter, "devices");
	json_t *usable = indices(adevs, true);
	json_t *a = json_pack("{s:s, s:o, s:o}", "status",
	                      json_array_size(usable) ? "available" : "unavailable", "python",
	                      ap_json_text(python), "devices", usable);
	json_t *r = json_pack("{s:s, s:o, s:o}", "status",
	                      json_array_size(ref) ? "available" : "unavailable", "reason",
	                      json_array_size(ref) ? json_null() : ap_json_text(ref_why),
	                      "devices", indices(ref, true));

	if (aiter == NULL)
		json_object_set_new(a, "reason", ap_json_text(aiter_why));
	else if (json_array_size(usable) == 0)
		json_object_set_new(a, "reason", ap_json_text(
			json_string_value(json_object_get(aiter, "reason")) != NULL
				? json_string_value(json_object_get(aiter, "reason"))
				: "AITER has kernels for none of the GPUs"));
	else
		json_object_set_new(a, "reason", json_null());
	if (aiter != NULL) {
		json_object_set(a, "torch", json_object_get(aiter, "torch"));
		json_object_set(a, "aiter", json_object_get(aiter, "aiter"));
		json_object_set_new(a, "unusable", indices(adevs, false));
	}
	return json_pack("{s:o, s:o}", "aiter", a, "reference", r);
}

/* The GPUs of the manifest: the reference launcher's, and those only AITER's
 * launcher lists (a node without a GPU build of aiter-probe). */
static json_t *merge_devices(const json_t *ref, const json_t *aiter)
{
	json_t *all = json_deep_copy(ref), *dev;
	size_t i, j;

	json_array_foreach(aiter, i, dev) {
		const json_t *have;
		bool seen = false;
		json_array_foreach(all, j, have)
			seen = seen || json_equal(json_object_get(have, "index"),
			                          json_object_get(dev, "index"));
		if (!seen)
			json_array_append_new(all, json_pack("{s:O, s:O, s:O, s:O}", "index",
			                                     json_object_get(dev, "index"), "name",
			                                     json_object_get(dev, "name"), "arch",
			                                     json_object_get(dev, "arch"),
			                                     "compute_units",
			                                     json_object_get(dev, "compute_units")));
	}
	return all;
}

static int build_manifest(const ap_scan_request *req, ap_ruleset *rs, ap_reader *r,
                          ap_pytarget *python, json_t **manifest)
{
	ap_launch_opts lopts = {
		.devices = req->devices,
		.timeout_s = req->launch_timeout,
		.inject = getenv("AITER_PROBE_LAUNCH_INJECT"),
		.python = ap_pytarget_program(python),
		.datadir = data_dir(req->datadir),
		.aiter_root = ap_reader_root(r),
		.aiter_meta = ap_reader_meta(r),
	};
	ap_scan_launch launch = {.opts = &lopts};
	ap_aiter_info info = {.root = ap_reader_root(r), .meta = ap_reader_meta(r)};
	char *reason = NULL, *aiter_reason = NULL, *version, *commit;
	int rc = 0;
	json_t *all = json_array(), *ref = NULL, *aiter = NULL, *launchers = NULL, *devs, *inputs,
	       *facts;
	ap_scan *scan;

	if (req->no_launch) {
		launch.skip_reason = "launches disabled (--no-launch)";
	} else {
		json_decref(all);
		ref = ap_launch_devices(&lopts, &reason);
		aiter = ap_launch_aiter_devices(&lopts, &aiter_reason);
		lopts.ref_devs = ref;
		lopts.aiter_devs = json_object_get(aiter, "devices");
		all = merge_devices(ref, lopts.aiter_devs);
		launchers = launchers_report(ref, reason, aiter, aiter_reason, lopts.python);
		if (json_array_size(all) == 0)
			launch.skip_reason = reason;
	}
	/* Without launches no GPU is looked for, so the request picks none. */
	devs = req->no_launch ? json_incref(all) : select_devices(all, req->devices, &reason);
	if (devs == NULL) {
		ap_error_set("%s", reason);
		rc = AP_EINPUT;
		free(reason);
		json_decref(all);
		json_decref(ref);
		json_decref(aiter);
		json_decref(launchers);
		free(aiter_reason);
		return rc;
	}
	launch.devs = devs;
	ap_scan_run(&scan, rs, r, &launch);
	if (req->signatures)
		scan->signatures = ap_signatures_collect(rs, r);
	version = ap_aiter_version(r);
	commit = ap_discover_git_commit(info.root);
	info.version = version;
	info.git_commit = commit;
	facts = ap_pytarget_json(python);
	*manifest = ap_manifest_build(scan, r, &info, facts, all, req->host);
	if (launchers != NULL)
		json_object_set(*manifest, "launchers", launchers);
	json_decref(facts);
	ap_scan_free(scan);
	inputs = json_object_get(*manifest, "inputs");
	/* Answers that needed the interpreter, which could not give them, would
	 * be unknown for no reason in the tree: the scan says why instead. */
	if (ap_pytarget_error(python) != NULL) {
		ap_error_set("%s (name the interpreter that will run the server with --python "
		             "PATH, or its version with --python-version X.Y)",
		             ap_pytarget_error(python));
		rc = AP_EINPUT;
		json_decref(*manifest);
		*manifest = NULL;
	} else if (!req->no_default_rules && json_array_size(inputs) > 0 && !found_any(inputs)) {
		rc = not_a_tree(&info, json_array_size(inputs));
		json_decref(*manifest);
		*manifest = NULL;
	}
	free(version);
	free(commit);
	free(reason);
	free(aiter_reason);
	json_decref(devs);
	json_decref(all);
	json_decref(ref);
	json_decref(aiter);
	json_decref(launchers);
	return rc;
}

int ap_scan_tree(const ap_scan_request *req, ap_ruleset **rs, json_t **manifest)
{
	ap_pytarget *python = NULL;
	ap_reader *r = NULL;
	ap_tree_location loc;
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t when;
	int rc;

	*manifest = NULL;
	if ((rc = check_request(req)) < 0 || (rc = ap_pytarget_check_env()) < 0)
		return rc;
	/* Before the scan: a bad value would otherwise surface as a wrong
	 * "generated" only after all the work. */
	if (ap_manifest_source_date(epoch, &when) < 0) {
		ap_error_set("SOURCE_DATE_EPOCH must be a whole number of seconds from 0 to %llu, "
		             "not '%s'", AP_SOURCE_DATE_MAX, epoch);
		return AP_EINPUT;
	}
	if ((rc = ap_discover_tree(req->aiter_root, req->python, req->root_imported, &loc)) < 0)
		return rc;
	if ((rc = ap_reader_new_fs(&r, loc.root, loc.meta,
	                           req->max_file_size ? req->max_file_size
	                                              : AP_READER_DEFAULT_MAX_BYTES)) < 0) {
		ap_error_prefix("AITER root from %s", loc.how);
		goto out;
	}
	if (*rs == NULL)
		rc = ap_scan_load_rules(rs, req->datadir, req->rules, req->nrules,
		                        req->no_default_rules);
	python = req->python_given != NULL ? ap_pytarget_new_given(req->python_given)
	                                   : ap_pytarget_new(req->python, req->python_version);
	ap_reader_set_python(r, python);
	if (rc == 0)
		rc = build_manifest(req, *rs, r, python, manifest);
out:
	ap_reader_free(r);
	ap_pytarget_free(python);
	ap_discover_free(&loc);
	return rc;
}
