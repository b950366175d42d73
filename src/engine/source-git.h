/* SPDX-License-Identifier: MIT */
/* The reader's source over a git tree (history reads every commit straight
 * from the object database, nothing checked out): a path is looked up in
 * the tree, symlinks followed while they stay inside it, and only blobs are
 * read; a folder, a submodule or a symlink leading out of the tree is an
 * ERROR. */
#ifndef AP_SOURCE_GIT_H
#define AP_SOURCE_GIT_H

#include <git2.h>
#include <stddef.h>

#include "engine/reader.h"

/* Where a path leads in a tree. Together with the object id this decides
 * everything a rule can see of the path, so it keys history's verdicts. */
typedef enum {
	AP_GIT_MISSING,
	AP_GIT_BLOB,
	AP_GIT_FOLDER,
	AP_GIT_SUBMODULE,
	AP_GIT_IN_SUBMODULE,
	AP_GIT_OUTSIDE,
	AP_GIT_LOOP,
} ap_git_found_kind;

typedef struct ap_git_found {
	ap_git_found_kind kind;
	git_oid oid; /* the blob, folder or submodule commit; zero otherwise */
} ap_git_found;

/* Follows rel from root the way the file system follows a path, symlinks
 * included (relative to the folder holding them), but never out of root. */
int ap_git_resolve(ap_git_found *out, git_repository *repo, const git_tree *root,
                   const char *rel);

/* Sets "what: libgit2's last message" and returns AP_EIO. */
int ap_git_fail(const char *what);

/* The source holds its own reference to tree; repo must outlive it. */
int ap_git_source_new(void **ctx, git_repository *repo, const git_tree *tree);
extern const ap_source_ops ap_git_source_ops;

/* A reader over a git tree; name is reported as its root. */
int ap_reader_new_git(ap_reader **out, git_repository *repo, const git_tree *tree,
                      const char *name, size_t max_bytes, ap_derived_cache *cache);

#endif
