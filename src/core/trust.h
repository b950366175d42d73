/* SPDX-License-Identifier: MIT */
/* Whose files a decision is taken on. A manifest tells a server how to run,
 * so it is read only where no one but the reading user and root could have
 * written it (ssh's rule for authorized_keys): the file and the folder that
 * holds it, the manifest folder, owned by the reading user or root, neither
 * writable by group or others, neither a symlink. A manifest another local
 * user planted in a shared folder (mode 1777) is refused, and says why. */
#ifndef AP_TRUST_H
#define AP_TRUST_H

#include <sys/stat.h>

/* AP_OK when path, whose lstat is st, may be trusted; else AP_EINPUT with
 * "WHAT: not trusted: WHY" set (what: path, or "its folder DIR" for
 * path's folder). */
int ap_trust_stat(const char *path, const char *folder_of, const struct stat *st);

/* The folder that holds path (lstat), by ap_trust_stat: AP_OK, AP_EINPUT or
 * AP_EIO, the message set. */
int ap_trust_folder_of(const char *path);

#endif
