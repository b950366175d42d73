/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/trust.h"

int ap_trust_stat(const char *path, const char *folder_of, const struct stat *st)
{
	uid_t me = geteuid();
	const char *why = NULL;
	char owner[96];

	if (S_ISLNK(st->st_mode)) {
		why = "a symlink";
	} else if (st->st_uid != me && st->st_uid != 0) {
		snprintf(owner, sizeof owner, "owned by uid %u, neither the reading user (uid %u) nor root",
		         (unsigned)st->st_uid, (unsigned)me);
		why = owner;
	} else if (st->st_mode & S_IWOTH) {
		why = "writable by others";
	} else if (st->st_mode & S_IWGRP) {
		why = "writable by its group";
	}
	if (why == NULL)
		return AP_OK;
	if (folder_of != NULL)
		ap_error_set("%s: not trusted: its folder %s is %s", folder_of, path, why);
	else
		ap_error_set("%s: not trusted: it is %s", path, why);
	return AP_EINPUT;
}

int ap_trust_folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	char *dir;
	int rc;

	if (slash == NULL)
		dir = ap_strdup(".");
	else
		dir = ap_strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (dir == NULL)
		return AP_ENOMEM;
	if (lstat(dir, &st) != 0) {
		ap_error_set("%s: %s", dir, strerror(errno));
		rc = AP_EIO;
	} else {
		rc = ap_trust_stat(dir, path, &st);
	}
	free(dir);
	return rc;
}
