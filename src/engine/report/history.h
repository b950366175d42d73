/* SPDX-License-Identifier: MIT */
/* History: the rule set evaluated on every commit of a git range, read
 * straight from the object database (nothing is checked out), reporting the
 * commits where a rule's verdict or captures, or a capability, changed. */
#ifndef AP_HISTORY_H
#define AP_HISTORY_H

#include <jansson.h>
#include <stddef.h>

#include "engine/rules.h"

typedef struct ap_history_opts {
	size_t max_bytes; /* 0: AP_READER_DEFAULT_MAX_BYTES */
	/* The interpreter that will import AITER, whose facts the tree's
	 * conditions and imports read (engine/pytarget.h): python (NULL:
	 * $AITER_PROBE_PYTHON, else python3), or python_version alone. */
	const char *python;
	const char *python_version;
	/* Called after each commit of the range is handled; may be NULL. */
	void (*progress)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
} ap_history_opts;

/* Where the report goes, as it is found (the format is in doc/history.md,
 * "aiter-probe history"): start once the range is listed, initial once
 * (the state before the first commit), change for each change, oldest
 * first. The JSON handed over is borrowed: a callback keeps what it needs
 * (nothing, to stream). A callback's error (< 0, message set) stops the
 * walk and is returned. */
typedef struct ap_history_sink {
	int (*start)(void *ctx, const char *range, size_t commits);
	int (*initial)(void *ctx, const json_t *initial);
	int (*change)(void *ctx, const json_t *change);
	void *ctx;
} ap_history_sink;

/* Walks range (as git reads it: "A..B", "A...B", or one revision meaning
 * all its history) of the repository at git_dir, oldest first, into sink;
 * *evaluated: the evaluations run. Every commit is compared with its first
 * parent; a commit whose files (every path any rule names, symlinks
 * resolved) are those of an evaluated commit whose verdict is still kept
 * reuses it. Memory is bounded by the verdicts kept, not by the range's
 * length. Errors: AP_EINPUT for a bad repository or revision. */
int ap_history_run(const ap_ruleset *rs, const char *git_dir, const char *range,
                   const ap_history_opts *opts, const ap_history_sink *sink, size_t *evaluated);

/* The capture tuples of from (a rule state's "captures") that to lacks, in
 * from's order: a set difference, hashed. */
json_t *ap_history_captures_missing(const json_t *from, const json_t *to);

#endif
