/* SPDX-License-Identifier: MIT */
/* The seam between the engine and the GPU: the engine never links GPU code.
 * It runs the launcher (kernels/launcher) as a child process, one per device,
 * each under a timeout, and reads one JSON object from each child's stdout.
 *
 * Launcher command line (the contract both sides keep):
 *   aiter-probe-launcher --list
 *       {"backend": "cuda"|"hip", "devices": [{"index": 0, "name": "...",
 *        "arch": "sm_90"|"gfx942", "compute_units": 132}]}
 *       or {"backend": ..., "devices": [], "reason": "why none"}; exit 0.
 *   aiter-probe-launcher --device N --kernel mla_decode --heads H --pad-to P
 *                        --head-dim D --rope R [--batch B] [--context C]
 *                        [--page-size S] [--inject fault|hang|undersize-metadata]
 *       {"device": {"index", "name", "arch"}, "status": "passed"|"failed",
 *        "checks": {"reference": {"passed", "max_abs_err", "tolerance", "rows"},
 *                   "padded_vs_native": {"passed", "max_abs_diff"},
 *                   "canaries": {"passed", "detail"}},
 *        "timings_us": {"native", "padded"}, "error": "..." (when failed)}
 *       exit 0 passed, 1 a check failed, 2 usage, 3 GPU error.
 * --inject exists for the engine's own tests of faults and hangs.
 */
#ifndef AP_LAUNCH_H
#define AP_LAUNCH_H

#include <jansson.h>
#include <stdbool.h>

#include "engine/rules.h"

typedef struct ap_launch_opts {
	const char *launcher;  /* path of the launcher; NULL: $AITER_PROBE_LAUNCHER, else the installed one */
	const char *devices;   /* "all" or a comma-separated list of indices */
	double timeout_s;      /* per child, when the spec sets none */
	const char *inject;    /* tests only: passed as --inject */
} ap_launch_opts;

/* Lists the GPUs. Returns a JSON array (possibly empty) and, when empty,
 * *reason (malloc'd) says why. Never fails: a missing launcher is a reason. */
json_t *ap_launch_devices(const ap_launch_opts *o, char **reason);

/* Runs spec on every selected device of devs (from ap_launch_devices), one
 * child each, in parallel. Returns a JSON array with one result per device;
 * a child that fails, crashes or times out yields {"status": "error",
 * "error": "..."} for its device only. */
json_t *ap_launch_run(const ap_launch_spec *spec, const json_t *devs, const ap_launch_opts *o);

#endif
