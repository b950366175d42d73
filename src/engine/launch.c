/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/child.h"
#include "engine/helper.h"
#include "engine/launch.h"

#define DEFAULT_TIMEOUT_S 120.0
#define LIST_TIMEOUT_S 60.0

static char *launcher_path(const ap_launch_opts *o)
{
	const char *env = getenv("AITER_PROBE_LAUNCHER");

	if (o != NULL && o->launcher != NULL)
		return ap_xstrdup(o->launcher);
	if (env != NULL && *env != '\0')
		return ap_xstrdup(env);
	return ap_helper_path("aiter-probe-launcher");
}

static json_t *child_json(const ap_child *c)
{
	json_t *j;

	if (c->timed_out || c->overflowed || !WIFEXITED(c->status) || c->out.len == 0)
		return NULL;
	j = json_loadb(c->out.data, c->out.len, 0, NULL);
	if (j != NULL && !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Every device is an object with a whole "index" of 0 or more: they are
 * recorded in the manifest, which readers refuse otherwise, and the index
 * is what --device is given. */
static bool devices_well_formed(const json_t *devs)
{
	const json_t *dev;
	size_t i;

	json_array_foreach(devs, i, dev) {
		const json_t *index = json_object_get(dev, "index");
		if (!json_is_object(dev) || !json_is_integer(index) || json_integer_value(index) < 0 ||
		    json_integer_value(index) > INT_MAX)
			return false;
	}
	return true;
}

/* Runs argv --list and returns its answer, whose "devices" is a well-formed
 * array; NULL with *reason when there is none. */
static json_t *list_answer(char *const *argv, const char *what, char **reason)
{
	json_t *answer;
	const json_t *devs;
	ap_child c;
	int rc = ap_child_start(&c, argv, LIST_TIMEOUT_S);

	if (rc != 0) {
		*reason = ap_xasprintf("cannot run the %s %s: %s", what, argv[0], strerror(rc));
		return NULL;
	}
	ap_children_wait(&c, 1);
	answer = child_json(&c);
	if (answer == NULL) {
		char *why = ap_child_failure(&c, what, LIST_TIMEOUT_S);
		*reason = ap_xasprintf("listing devices failed: %s", why);
		free(why);
	}
	ap_child_free(&c);
	if (answer == NULL)
		return NULL;
	devs = json_object_get(answer, "devices");
	if (!json_is_array(devs))
		*reason = ap_xasprintf("the %s's device list has no \"devices\" array", what);
	else if (!devices_well_formed(devs))
		*reason = ap_xasprintf("the %s's device list has an entry that is not an object "
		                       "with an integer \"index\" of 0 or more", what);
	else
		return answer;
	json_decref(answer);
	return NULL;
}

/* The devices of a list answer; when none, *reason says why. */
static json_t *answer_devices(const json_t *answer, char **reason)
{
	json_t *devs = json_object_get(answer, "devices");

	if (json_array_size(devs) == 0) {
		const char *why = json_string_value(json_object_get(answer, "reason"));
		*reason = ap_xstrdup(why ? why : "no GPU found");
	}
	return json_incref(devs);
}

static json_t *list_devices(char *path, char **reason)
{
	char *argv[] = {path, "--list", NULL};
	json_t *answer = list_answer(argv, "launcher", reason), *devs;

	if (answer == NULL)
		return NULL;
	devs = answer_devices(answer, reason);
	json_decref(answer);
	return devs;
}

json_t *ap_launch_devices(const ap_launch_opts *o, char **reason)
{
	char *path;
	json_t *devs;

	*reason = NULL;
#ifdef GPU_BUILD_REASON
	if ((o == NULL || o->launcher == NULL) &&
	    (getenv("AITER_PROBE_LAUNCHER") == NULL || *getenv("AITER_PROBE_LAUNCHER") == '\0')) {
		*reason = ap_xstrdup(GPU_BUILD_REASON);
		return json_array();
	}
#endif
	path = launcher_path(o);
	devs = list_devices(path, reason);
	free(path);
	return devs != NULL ? devs : json_array();
}

const char *const ap_launch_aiter_calls[] = {"get_mla_metadata_info_v1", "get_mla_metadata_v1",
                                             "mla_decode_fwd", NULL};

static char *aiter_launcher_path(const ap_launch_opts *o)
{
	const char *env = getenv("AITER_PROBE_AITER_LAUNCHER");

	if (o->aiter_launcher != NULL)
		return ap_xstrdup(o->aiter_launcher);
	if (env != NULL && *env != '\0')
		return ap_xstrdup(env);
	return ap_xasprintf("%s/python/aiter_probe/launch.py", o->datadir);
}

json_t *ap_launch_aiter_devices(const ap_launch_opts *o, char **reason)
{
	char *path, *argv[8];
	json_t *answer;

	*reason = NULL;
	if (o->python == NULL) {
		*reason = ap_xstrdup("no interpreter to run it: the python's version or facts were "
		                     "given, not the python itself");
		return NULL;
	}
	path = aiter_launcher_path(o);
	argv[0] = (char *)o->python;
	argv[1] = path;
	argv[2] = "--list";
	argv[3] = "--aiter-root";
	argv[4] = (char *)o->aiter_root;
	argv[5] = "--meta";
	argv[6] = (char *)o->aiter_meta;
	argv[7] = NULL;
	answer = list_answer(argv, "AITER launcher", reason);
	free(path);
	return answer;
}

typedef struct args {
	char *v[32];
	size_t n;
	char ints[12][16];
	size_t nints;
} args;

static void arg(args *a, const char *s)
{
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void arg_int(args *a, const char *flag, int value)
{
	char *slot = a->ints[a->nints++];

	snprintf(slot, sizeof a->ints[0], "%d", value);
	arg(a, flag);
	arg(a, slot);
}

static json_t *device_result(const ap_child *c, const json_t *dev, double timeout_s,
                             const char *what)
{
	json_t *j = child_json(c);
	char *why;

	if (j != NULL && json_is_string(json_object_get(j, "status"))) {
		/* Readers refuse a device that is not an object. */
		if (!json_is_object(json_object_get(j, "device")))
			json_object_set(j, "device", (json_t *)dev);
		return j;
	}
	json_decref(j);
	why = ap_child_failure(c, what, timeout_s);
	j = json_pack("{s:O, s:s, s:s}", "device", dev, "status", "error", "error", why);
	free(why);
	return j;
}

/* o->inject is "MODE" for every device or "MODE@INDEX" for one, so a test
 * can show that one device's fault leaves the others alone. Returns the
 * mode for dev (in mode, of size n), or NULL. */
static const char *inject_for(const ap_launch_opts *o, const json_t *dev, char *mode, size_t n)
{
	const char *at;

	if (o == NULL || o->inject == NULL || *o->inject == '\0')
		return NULL;
	at = strchr(o->inject, '@');
	if (at != NULL &&
	    strtol(at + 1, NULL, 10) != json_integer_value(json_object_get(dev, "index")))
		return NULL;
	snprintf(mode, n, "%.*s", at ? (int)(at - o->inject) : (int)strlen(o->inject), o->inject);
	return mode;
}

static const json_t *device_in(const json_t *devs, json_int_t index)
{
	const json_t *dev;
	size_t i;

	json_array_foreach(devs, i, dev)
		if (json_integer_value(json_object_get(dev, "index")) == index)
			return dev;
	return NULL;
}

static void spec_args(args *a, const ap_launch_spec *spec, int index)
{
	arg_int(a, "--device", index);
	arg(a, "--kernel");
	arg(a, spec->kernel);
	arg_int(a, "--heads", spec->heads);
	arg_int(a, "--pad-to", spec->pad_to);
	arg_int(a, "--head-dim", spec->head_dim);
	arg_int(a, "--rope", spec->rope);
	if (spec->batch > 0)
		arg_int(a, "--batch", spec->batch);
	if (spec->context > 0)
		arg_int(a, "--context", spec->context);
	if (spec->page_size > 0)
		arg_int(a, "--page-size", spec->page_size);
}

/* One device's launch: which kernel, its child, and what AITER's launcher
 * said when it could not run there. */
typedef struct job {
	const json_t *dev;
	const char *kernel;  /* "aiter" or "reference" */
	ap_child child;
	double timeout_s;
	char *aiter_skipped;
	json_t *result;
} job;

static void start_job(job *jb, const ap_launch_spec *spec, const ap_launch_opts *o,
                      const char *calls, char *ref_path, char *aiter_path)
{
	args a = {.n = 0};
	char mode[32];
	int index = (int)json_integer_value(json_object_get(jb->dev, "index"));
	int rc;

	if (strcmp(jb->kernel, "aiter") == 0) {
		arg(&a, o->python);
		arg(&a, aiter_path);
		spec_args(&a, spec, index);
		arg(&a, "--aiter-root");
		arg(&a, o->aiter_root);
		arg(&a, "--meta");
		arg(&a, o->aiter_meta);
		arg(&a, "--calls");
		arg(&a, calls);
	} else {
		arg(&a, ref_path);
		spec_args(&a, spec, index);
		if (inject_for(o, jb->dev, mode, sizeof mode) != NULL) {
			arg(&a, "--inject");
			arg(&a, mode);
		}
	}
	rc = ap_child_start(&jb->child, a.v, jb->timeout_s);
	if (rc != 0) {
		/* Recorded as an exit without a result, with the reason. */
		jb->child.exited = true;
		jb->child.status = 127 << 8;
		ap_buf_printf(&jb->child.err, "cannot run the %s %s: %s",
		              strcmp(jb->kernel, "aiter") == 0 ? "AITER launcher" : "launcher", a.v[0],
		              strerror(rc));
	}
}

/* Starts every job that has a kernel and no result, waits, and takes their
 * results. */
static void run_jobs(job *jobs, size_t n, const ap_launch_spec *spec, const ap_launch_opts *o,
                     const char *calls)
{
	char *ref_path = launcher_path(o), *aiter_path = aiter_launcher_path(o);
	ap_child *cs = ap_xcalloc(n, sizeof *cs);
	size_t i, k = 0, *of = ap_xcalloc(n, sizeof *of);

	for (i = 0; i < n; i++) {
		if (jobs[i].result != NULL)
			continue;
		start_job(&jobs[i], spec, o, calls, ref_path, aiter_path);
		cs[k] = jobs[i].child;
		of[k++] = i;
	}
	ap_children_wait(cs, k);
	for (i = 0; i < k; i++) {
		job *jb = &jobs[of[i]];
		jb->result = device_result(&cs[i], jb->dev, jb->timeout_s,
		                           strcmp(jb->kernel, "aiter") == 0 ? "AITER launcher"
		                                                             : "launcher");
		json_object_set_new(jb->result, "kernel", json_string(jb->kernel));
		if (jb->aiter_skipped != NULL)
			/* the reason came from JSON: valid text */
			json_object_set_new(jb->result, "aiter_skipped", json_string(jb->aiter_skipped));
		ap_child_free(&cs[i]);
	}
	free(of);
	free(cs);
	free(ref_path);
	free(aiter_path);
}

json_t *ap_launch_run(const ap_launch_spec *spec, const json_t *devs, const ap_launch_opts *o,
                      const char *calls)
{
	double timeout_s = spec->timeout_s > 0 ? spec->timeout_s
	                   : o != NULL && o->timeout_s > 0 ? o->timeout_s
	                                                   : DEFAULT_TIMEOUT_S;
	size_t ndev = json_array_size(devs), i;
	job *jobs = ap_xcalloc(ndev, sizeof *jobs);
	json_t *results = json_array();
	bool again = false;

	for (i = 0; i < ndev; i++) {
		json_int_t index = json_integer_value(json_object_get(json_array_get(devs, i), "index"));
		const json_t *aiter = o->python != NULL ? device_in(o->aiter_devs, index) : NULL;
		const char *unusable = json_string_value(json_object_get(aiter, "unusable"));

		jobs[i].dev = json_array_get(devs, i);
		jobs[i].timeout_s = timeout_s;
		if (aiter != NULL && unusable == NULL) {
			jobs[i].kernel = "aiter";
			continue;
		}
		jobs[i].kernel = "reference";
		if (unusable != NULL)
			jobs[i].aiter_skipped = ap_xstrdup(unusable);
		if (o->ref_devs == NULL || device_in(o->ref_devs, index) != NULL)
			continue;
		/* AITER's GPU that AITER cannot run on, and no reference launcher. */
		jobs[i].result = json_pack("{s:O, s:s, s:s, s:s}", "device", jobs[i].dev, "status",
		                           "skipped", "kernel", "aiter", "reason", unusable);
	}
	run_jobs(jobs, ndev, spec, o, calls);
	/* Where AITER's kernel could not run, the reference checks instead. */
	for (i = 0; i < ndev; i++) {
		json_int_t index = json_integer_value(json_object_get(jobs[i].dev, "index"));
		const char *status = json_string_value(json_object_get(jobs[i].result, "status"));
		const char *why = json_string_value(json_object_get(jobs[i].result, "reason"));

		if (strcmp(jobs[i].kernel, "aiter") != 0 || status == NULL ||
		    strcmp(status, "skipped") != 0 || device_in(o->ref_devs, index) == NULL)
			continue;
		jobs[i].aiter_skipped = ap_xstrdup(why != NULL ? why : "skipped");
		jobs[i].kernel = "reference";
		json_decref(jobs[i].result);
		jobs[i].result = NULL;
		memset(&jobs[i].child, 0, sizeof jobs[i].child);
		again = true;
	}
	if (again)
		run_jobs(jobs, ndev, spec, o, calls);
	for (i = 0; i < ndev; i++) {
		json_array_append_new(results, jobs[i].result);
		free(jobs[i].aiter_skipped);
	}
	free(jobs);
	return results;
}

char *ap_launch_text(const json_t *launch)
{
	const char *status = json_string_value(json_object_get(launch, "status"));
	const char *reason = json_string_value(json_object_get(launch, "reason"));
	const char *kernel = json_string_value(json_object_get(launch, "kernel"));

	return ap_xasprintf("%s%s%s%s", status != NULL ? status : "?",
	                    kernel == NULL ? ""
	                    : strcmp(kernel, "aiter") == 0 ? " on AITER's kernel"
	                                                   : " on the reference kernel",
	                    reason != NULL ? ": " : "", reason != NULL ? reason : "");
}

char *ap_launchers_text(const json_t *launchers, const char *which)
{
	const json_t *l = json_object_get(launchers, which), *dev;
	const char *status = json_string_value(json_object_get(l, "status"));
	const char *reason = json_string_value(json_object_get(l, "reason"));
	const char *python = json_string_value(json_object_get(l, "python"));
	ap_buf b = AP_BUF_INIT;
	size_t i;

	if (status == NULL)
		return NULL;
	ap_buf_printf(&b, "%s", status);
	json_array_foreach(json_object_get(l, "devices"), i, dev)
		ap_buf_printf(&b, "%s%lld", i ? ", " : " on GPU ", (long long)json_integer_value(dev));
	if (python != NULL)
		ap_buf_printf(&b, " (%s)", python);
	if (reason != NULL)
		ap_buf_printf(&b, ": %s", reason);
	json_array_foreach(json_object_get(l, "unusable"), i, dev)
		ap_buf_printf(&b, "; not on GPU %lld: %s",
		              (long long)json_integer_value(json_object_get(dev, "index")),
		              json_string_value(json_object_get(dev, "reason")));
	return b.data;
}
