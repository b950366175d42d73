/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "core/mla-route.h"
#include "engine/mla-plans.h"

/* A head count runs natively when it is a multiple of 16 or when a
 * supported capability's launch spec names it. */
static const ap_cap_result *native_cap_for(const ap_scan *scan, int heads)
{
	size_t i;

	for (i = 0; i < scan->ncaps; i++) {
		const ap_launch_spec *spec = scan->caps[i].probe->launch;
		if (spec != NULL && spec->heads == heads && scan->caps[i].supported)
			return &scan->caps[i];
	}
	return NULL;
}

/* The kernel that proved a head count: "aiter" when AITER's kernel passed a
 * launch of it on some device, else "reference" when ours did; NULL when
 * no launch of it passed. */
static const char *launch_passed_for(const ap_scan *scan, int heads)
{
	const char *kernel = NULL;
	size_t i, k;

	for (i = 0; i < scan->ncaps; i++) {
		const ap_launch_spec *spec = scan->caps[i].probe->launch;
		const json_t *launch = scan->caps[i].launch, *res;
		const char *status = json_string_value(json_object_get(launch, "status"));
		if (spec == NULL || spec->heads != heads || status == NULL ||
		    strcmp(status, "passed") != 0)
			continue;
		json_array_foreach(json_object_get(launch, "results"), k, res) {
			const char *ran = json_string_value(json_object_get(res, "kernel"));
			const char *passed = json_string_value(json_object_get(res, "status"));
			if (passed == NULL || strcmp(passed, "passed") != 0)
				continue;
			if (ran != NULL && strcmp(ran, "aiter") == 0)
				return "aiter";
			kernel = "reference";
		}
	}
	return kernel;
}

json_t *ap_mla_plans_build(const ap_scan *scan)
{
	json_t *plans = json_array();
	int heads;

	for (heads = 1; heads <= AP_MLA_MAX_HEADS; heads++) {
		json_t *plan = json_object();
		ap_pad_mode mode;
		int launch_heads = ap_mla_launch_heads(heads, native_cap_for(scan, heads) != NULL,
		                                       &mode);

		json_object_set_new(plan, "heads", json_integer(heads));
		json_object_set_new(plan, "launch_heads", json_integer(launch_heads));
		json_object_set_new(plan, "mode", json_string(ap_pad_mode_name(mode)));
		const char *kernel = launch_passed_for(scan, heads);

		json_object_set_new(plan, "verified", json_boolean(kernel != NULL));
		if (kernel != NULL)
			json_object_set_new(plan, "kernel", json_string(kernel));
		json_array_append_new(plans, plan);
	}
	return plans;
}

const json_t *ap_mla_plan_of(const ap_probe *p, const json_t *manifest)
{
	return p->launch != NULL ? ap_manifest_mla_plan_for(manifest, p->launch->heads) : NULL;
}

char *ap_mla_plan_text(const json_t *row)
{
	const char *mode = json_string_value(json_object_get(row, "mode"));

	const char *kernel = json_string_value(json_object_get(row, "kernel"));

	return ap_xasprintf("%lld heads launch %lld (%s)%s",
	                    (long long)json_integer_value(json_object_get(row, "heads")),
	                    (long long)json_integer_value(json_object_get(row, "launch_heads")),
	                    mode == NULL ? "?" : strcmp(mode, "none") == 0 ? "native" : mode,
	                    !json_is_true(json_object_get(row, "verified")) ? ""
	                    : kernel != NULL && strcmp(kernel, "aiter") == 0
	                            ? ", verified on this node by AITER's kernel"
	                    : kernel != NULL ? ", verified on this node by the reference kernel"
	                                     : ", verified on this node");
}
