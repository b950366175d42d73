/* Finding the AITER tree and what it says about itself. */
#ifndef AP_DISCOVER_H
#define AP_DISCOVER_H

/* The root to scan: flag_root when given, else $AITER_META_DIR, else the
 * installed aiter Python package located the way AITER locates itself
 * (aiter_meta/ beside the package, else the package's parent, whichever
 * holds csrc/), found with importlib's find_spec, which does not import it.
 * Never falls back to anything else. On success *root is the path to use and
 * *how says where it came from (both malloc'd). */
int ap_discover_root(const char *flag_root, char **root, char **how);

/* AITER's version from aiter/_version.py in the tree (or beside an
 * aiter_meta root), or NULL. */
char *ap_discover_version(const char *root);

/* The commit checked out when root is itself a git work tree, or NULL. */
char *ap_discover_git_commit(const char *root);

#endif
