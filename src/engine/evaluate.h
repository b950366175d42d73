/* SPDX-License-Identifier: MIT */
/* The scan: every rule checked against a reader, every probe evaluated, and
 * the kernel cross-checks run where asked. */
#ifndef AP_ENGINE_H
#define AP_ENGINE_H

#include <jansson.h>
#include <stdbool.h>

#include "core/manifest-format.h"
#include "engine/kind.h"
#include "engine/kinds/version.h"
#include "engine/launch.h"
#include "engine/match.h"
#include "engine/reader.h"
#include "engine/rules.h"

typedef struct ap_cap_result {
	const ap_probe *probe;
	bool supported;
	char *reason;
	char **evidence;     /* "file:line" of the deciding matches */
	size_t nevidence;
	size_t evidence_cap;
	json_t *launch;      /* launch results (one per device), or NULL when none ran */
} ap_cap_result;

typedef struct ap_scan {
	ap_rule_result *rules; /* same order as the rule set's rules */
	size_t nrules;
	ap_cap_result *caps;   /* same order as the rule set's probes */
	size_t ncaps;
	/* the manifest's `signatures` (engine/signatures.h), NULL when none
	 * was asked; the front door's scan sets it */
	json_t *signatures;
} ap_scan;

/* How a scan runs kernel cross-checks: on devs (from ap_launch_devices) with
 * opts, or not at all when skip_reason is set (recorded as "skipped"). */
typedef struct ap_scan_launch {
	const ap_launch_opts *opts;
	const json_t *devs;
	const char *skip_reason;
} ap_scan_launch;

/* Checks every rule and evaluates every probe. With launch NULL no probe
 * gets launch results (history, tests); a probe's launch, when run, can only
 * take support away. */
int ap_scan_run(ap_scan **out, const ap_ruleset *rs, ap_reader *r, const ap_scan_launch *launch);
void ap_scan_free(ap_scan *s);

/* What a caller knows of rules' answers already (history, whose commits
 * mostly leave a rule's files as they were). recall fills res (zeroed) with
 * rule index's answer as its kind gave it, before the scan's limits on
 * matches, and returns true; or returns false, and the rule is run in a
 * round of its own (ap_reader_begin_round), after which learn is told its
 * answer. */
typedef struct ap_scan_memo {
	bool (*recall)(void *ctx, size_t index, ap_rule_result *res);
	void (*learn)(void *ctx, size_t index, const ap_rule_result *res);
	void *ctx;
} ap_scan_memo;
/* ap_scan_run, asking memo (NULL: none) before each rule. */
int ap_scan_run_memo(ap_scan **out, const ap_ruleset *rs, ap_reader *r,
                     const ap_scan_launch *launch, const ap_scan_memo *memo);

const ap_rule_result *ap_scan_rule(const ap_scan *s, const char *id);
const ap_cap_result *ap_scan_cap(const ap_scan *s, const char *id);

#endif
