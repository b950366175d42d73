/* SPDX-License-Identifier: MIT */
/* Finding the AITER tree and what it says about itself. */
#ifndef AP_DISCOVER_H
#define AP_DISCOVER_H

#include <stdbool.h>

typedef struct ap_tree_location {
	char *root; /* the folder holding aiter/ (a checkout, or site-packages) */
	char *meta; /* where csrc/ and hsa/ are */
	char *how;  /* where the root came from, for messages */
} ap_tree_location;

/* The tree to scan, found as AITER finds itself (aiter/jit/core.py): the root
 * is flag_root when given, else the parent of the installed aiter package
 * (found with importlib's find_spec, which does not import it), else
 * $AITER_META_DIR alone. python finds the package: NULL for
 * $AITER_PROBE_PYTHON, else python3. The meta folder is ap_discover_meta's,
 * $AITER_META_DIR read for a flag_root only when imported (the tree the
 * calling process imports, not one named on the command line). Refuses a
 * root that holds neither aiter/ nor (in the meta folder) csrc/, and an
 * installed package whose meta folder holds no csrc/; never falls back to
 * anything else. */
int ap_discover_tree(const char *flag_root, const char *python, bool imported,
                     ap_tree_location *loc);

/* The meta folder (csrc/, hsa/) AITER installed at root builds from, as
 * root's own aiter/jit/core.py picks it, by the generation of its rule:
 * v0.1.1-v0.1.4 aiter_meta/ when root is one of python's
 * site.getsitepackages() (python run only then), v0.1.5 when root or its
 * parent is; v0.1.5.post1 on aiter_meta/ unless aiter/install_mode says
 * "develop" or is absent; v0.1.7.post3 on also $AITER_META_DIR (with env)
 * over that, and root whenever the pick holds no csrc. A tree whose core.py
 * has none of these rules (or that has none): with aiter/install_mode the
 * newest rule, else $AITER_META_DIR (with env), else aiter_meta/ when it
 * holds csrc/, else root. A new string;
 * NULL with errno ENOMEM when memory ran out, else NULL with the error set
 * (python cannot be asked). */
char *ap_discover_meta(const char *root, const char *python, bool env);
void ap_discover_free(ap_tree_location *loc);

/* The commit checked out when root is itself a git work tree, or NULL. */
char *ap_discover_git_commit(const char *root);

#endif
