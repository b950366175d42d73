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
 *        "op": "mla_decode", "checks": {"reference": {"passed", "max_abs_err", "tolerance", "rows"},
 *                   "padded_vs_native": {"passed", "max_abs_diff"},
 *                   "canaries": {"passed", "detail"}},
 *        "timings_us": {"native", "padded"}, "error": "..." (when failed)}
 *       exit 0 passed, 1 a check failed, 2 usage, 3 GPU error.
 * --inject exists for the engine's own tests of faults and hangs.
 *
 * AITER's launcher (python/aiter_probe/launch.py, run by the interpreter that
 * will import AITER) keeps the same contract, with AITER's own kernels:
 *   PYTHON launch.py --list --aiter-root ROOT --meta META
 *       as above with "backend": "aiter", each device that AITER cannot run
 *       on with "unusable": "why", and when none: "reason" (torch or aiter
 *       does not import, torch is no ROCm build, no GPU).
 *   PYTHON launch.py --device N --kernel mla_decode ... --aiter-root ROOT
 *                    --meta META --calls JSON
 *       as above, "status" also "skipped" with "reason" when AITER's kernel
 *       cannot be run here (a call the tag's source does not bind, a GPU
 *       without AITER's kernels); --calls is what the scan read of the calls
 *       (ap_launch_aiter_calls). No --inject: its stand-in misbehaves instead.
 * The engine records in each result which ran: "kernel": "aiter" or
 * "reference". On a device both can run, AITER's does; where AITER's is
 * skipped the reference runs instead, the result keeping "aiter_skipped".
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
	/* AITER's launcher: tried when python is set (the interpreter that will
	 * import AITER), on the tree the scan read. */
	const char *python;
	const char *aiter_launcher; /* NULL: $AITER_PROBE_AITER_LAUNCHER, else in datadir */
	const char *datadir;        /* where python/aiter_probe/launch.py is */
	const char *aiter_root, *aiter_meta;
	/* The devices each launcher listed (ap_launch_devices,
	 * ap_launch_aiter_devices), which ap_launch_run picks a kernel from;
	 * NULL: none. */
	const json_t *ref_devs, *aiter_devs;
} ap_launch_opts;

/* The AITER calls a launch of AITER's kernels makes, each read by the rule
 * "vllm.calls_bind." NAME (vLLM's call of it binds), NULL-terminated. */
extern const char *const ap_launch_aiter_calls[];

/* Lists the GPUs. Returns a JSON array (possibly empty) and, when empty,
 * *reason (malloc'd) says why. Never fails: a missing launcher is a reason. */
json_t *ap_launch_devices(const ap_launch_opts *o, char **reason);

/* AITER's launcher's --list answer (an object whose "devices" is an array),
 * or NULL with *reason (malloc'd) when it cannot be had. */
json_t *ap_launch_aiter_devices(const ap_launch_opts *o, char **reason);

/* Runs spec on every selected device of devs, one child each, in parallel:
 * AITER's launcher where it listed the device usable, else the reference.
 * calls is the JSON text of ap_launch_aiter_calls' signatures. Returns a
 * JSON array with one result per device; a child that fails, crashes or
 * times out yields {"status": "error", "error": "..."} for its device only. */
json_t *ap_launch_run(const ap_launch_spec *spec, const json_t *devs, const ap_launch_opts *o,
                      const char *calls);

/* A capability's launch summary for people: "passed on AITER's kernel:
 * every device passed" ("on the reference kernel"; no kernel when none ran,
 * or in manifests of earlier versions). Caller frees. */
char *ap_launch_text(const json_t *launch);

/* A manifest's "launchers" for people, one line each: "AITER's kernel:
 * available on GPU 0 (python3)", "reference kernel: unavailable: no GPU
 * found". NULL when there is no such key. Caller frees. */
char *ap_launchers_text(const json_t *launchers, const char *which);

#endif
