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

/* Walks range (as git reads it: "A..B", "A...B", or one revision meaning
 * all its history) of the repository at git_dir, oldest first, and returns
 * the report as JSON (the format is in README.md, "aiter-probe history"):
 * {"range", "commits", "evaluated", "initial", "changes"}. Every commit is
 * compared with its first parent; a commit whose files (every path any rule
 * names, symlinks resolved) are those of an already evaluated commit reuses
 * that verdict. Errors: AP_EINPUT for a bad repository or revision. */
int ap_history_run(json_t **out, const ap_ruleset *rs, const char *git_dir, const char *range,
                   const ap_history_opts *opts);

#endif
