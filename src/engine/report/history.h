/* SPDX-License-Identifier: MIT */
/* History: the rule set evaluated on every commit of a git range, read
 * straight from the object database (nothing is checked out), reporting the
 * commits where a rule's verdict or captures, or a capability, changed. */
#ifndef AP_HISTORY_H
#define AP_HISTORY_H

#include <jansson.h>
#include <stddef.h>

#include "engine/reader.h"
#include "engine/rules.h"

struct git_repository;
struct git_tree;

/* A source over a git tree: a path is looked up in the tree (symlinks
 * followed while they stay inside it), and only blobs are read; a folder, a
 * submodule or a symlink leading out of the tree is an ERROR. The source
 * holds its own reference to tree; repo must outlive it. */
int ap_git_source_new(void **ctx, struct git_repository *repo, const struct git_tree *tree);
extern const ap_source_ops ap_git_source_ops;

/* A reader over a git tree; name is reported as its root. */
int ap_reader_new_git(ap_reader **out, struct git_repository *repo, const struct git_tree *tree,
                      const char *name, size_t max_bytes, ap_derived_cache *cache);

typedef struct ap_history_opts {
	size_t max_bytes; /* 0: AP_READER_DEFAULT_MAX_BYTES */
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
