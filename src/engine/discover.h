/* SPDX-License-Identifier: MIT */
/* Finding the AITER tree and what it says about itself. */
#ifndef AP_DISCOVER_H
#define AP_DISCOVER_H

typedef struct ap_tree_location {
	char *root; /* the folder holding aiter/ (a checkout, or site-packages) */
	char *meta; /* where csrc/ and hsa/ are */
	char *how;  /* where the root came from, for messages */
} ap_tree_location;

/* The tree to scan, found as AITER finds itself (aiter/jit/core.py): the root
 * is flag_root when given, else the parent of the installed aiter package
 * (found with importlib's find_spec, which does not import it), else
 * $AITER_META_DIR alone. python finds the package: NULL for
 * $AITER_PROBE_PYTHON, else python3. Refuses a root that holds neither aiter/ nor (in the
 * meta folder) csrc/, and an installed package whose meta folder holds no
 * csrc/; never falls back to anything else. */
int ap_discover_tree(const char *flag_root, const char *python, ap_tree_location *loc);
void ap_discover_free(ap_tree_location *loc);

/* The commit checked out when root is itself a git work tree, or NULL. */
char *ap_discover_git_commit(const char *root);

#endif
