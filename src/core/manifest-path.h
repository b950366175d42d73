/* SPDX-License-Identifier: MIT */
/* Where the manifest for one AITER tree lives by default: one file per tree,
 * so that a node with several Python environments keeps one manifest for
 * each AITER it has. `scan --save` writes there; the consumer API and the
 * Python reader (python/aiter_probe/installed.py, its twin) look there. */
#ifndef AP_MANIFEST_PATH_H
#define AP_MANIFEST_PATH_H

/* The folder of saved manifests: $AITER_PROBE_MANIFEST_DIR when set, else
 * $XDG_CACHE_HOME/aiter-probe (an absolute XDG_CACHE_HOME only, as the XDG
 * base directory specification says), else $HOME/.cache/aiter-probe; an
 * empty variable counts as unset. NULL with the error set when none is, or
 * when memory runs out. */
char *ap_manifest_default_dir(void);

/* *path = the default folder's "aiter-<H>.json", H the first 16 hex digits
 * of the sha256 of root, the canonical AITER root a manifest records
 * (aiter.root). Returns AP_OK, or AP_EINPUT or AP_ENOMEM with the error
 * set. */
int ap_manifest_default_path(const char *root, char **path);

/* Creates dir and its missing parents (mode 0755, less the umask, never
 * group or others writable). Every component of dir must be a folder (a
 * symlink to one is followed: a /home that links to /var/home), and dir
 * itself one the readers trust (core/trust.h): not a symlink, owned by the
 * user or root, writable by no one else, or the manifest saved there would
 * be refused. Returns AP_OK, or AP_EINPUT, AP_EIO or AP_ENOMEM with the
 * error set. */
int ap_manifest_dir_prepare(const char *dir);

#endif
