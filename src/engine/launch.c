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

/* Reads the launcher's device list; NULL with *reason when there is none. */
static json_t *list_devices(char *path, char **reason)
{
	char *argv[] = {path, "--list", NULL};
	json_t *answer, *devs;
	ap_child c;
	int rc = ap_child_start(&c, argv, LIST_TIMEOUT_S);

	if (rc != 0) {
		*reason = ap_xasprintf("cannot run the launcher %s: %s", path, strerror(rc));
		return NULL;
	}
	ap_children_wait(&c, 1);
	answer = child_json(&c);
	if (answer == NULL) {
		char *why = ap_child_failure(&c, "launcher", LIST_TIMEOUT_S);
		*reason = ap_xasprintf("listing devices failed: %s", why);
		free(why);
	}
	ap_child_free(&c);
	if (answer == NULL)
		return NULL;
	devs = json_incref(json_object_get(answer, "devices"));
	if (!json_is_array(devs))
		*reason = ap_xstrdup("the launcher's device list has no \"devices\" array");
	else if (!devices_well_formed(devs)) {
		*reason = ap_xstrdup("the launcher's device list has an entry that is not an object "
		                     "with an integer \"index\" of 0 or more");
		json_decref(devs);
		devs = NULL;
	} else if (json_array_size(devs) == 0) {
		const char *why = json_string_value(json_object_get(answer, "reason"));
		*reason = ap_xstrdup(why ? why : "no GPU found");
	}
	json_decref(answer);
	if (!json_is_array(devs)) {
		json_decref(devs);
		return NULL;
	}
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

static json_t *device_result(const ap_child *c, const json_t *dev, double timeout_s)
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
	why = ap_child_failure(c, "launcher", timeout_s);
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

json_t *ap_launch_run(const ap_launch_spec *spec, const json_t *devs, const ap_launch_opts *o)
{
	double timeout_s = spec->timeout_s > 0 ? spec->timeout_s
	                   : o != NULL && o->timeout_s > 0 ? o->timeout_s
	                                                   : DEFAULT_TIMEOUT_S;
	size_t ndev = json_array_size(devs);
	ap_child *cs = ap_xcalloc(ndev, sizeof *cs);
	json_t *results = json_array();
	char *path = launcher_path(o);
	size_t i;

	for (i = 0; i < ndev; i++) {
		json_t *dev = json_array_get(devs, i);
		args a = {.n = 0};
		char mode[32];
		int rc;

		arg(&a, path);
		arg_int(&a, "--device", (int)json_integer_value(json_object_get(dev, "index")));
		arg(&a, "--kernel");
		arg(&a, spec->kernel);
		arg_int(&a, "--heads", spec->heads);
		arg_int(&a, "--pad-to", spec->pad_to);
		arg_int(&a, "--head-dim", spec->head_dim);
		arg_int(&a, "--rope", spec->rope);
		if (spec->batch > 0)
			arg_int(&a, "--batch", spec->batch);
		if (spec->context > 0)
			arg_int(&a, "--context", spec->context);
		if (spec->page_size > 0)
			arg_int(&a, "--page-size", spec->page_size);
		if (inject_for(o, dev, mode, sizeof mode) != NULL) {
			arg(&a, "--inject");
			arg(&a, mode);
		}
		rc = ap_child_start(&cs[i], a.v, timeout_s);
		if (rc != 0) {
			/* Recorded as an exit without a result, with the reason. */
			cs[i].exited = true;
			cs[i].status = 127 << 8;
			ap_buf_printf(&cs[i].err, "cannot run the launcher %s: %s", a.v[0], strerror(rc));
		}
	}
	ap_children_wait(cs, ndev);
	for (i = 0; i < ndev; i++) {
		json_array_append_new(results,
		                      device_result(&cs[i], json_array_get(devs, i), timeout_s));
		ap_child_free(&cs[i]);
	}
	free(path);
	free(cs);
	return results;
}
