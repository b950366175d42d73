/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ap-util.h"
#include "engine/helper.h"

char *ap_helper_path(const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n > 0) {
		char *slash, *beside;
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL) {
			beside = ap_xasprintf("%.*s/%s", (int)(slash - self), self, name);
			if (access(beside, X_OK) == 0)
				return beside;
			free(beside);
		}
	}
	return ap_xasprintf("%s/%s", AP_PKGLIBEXECDIR, name);
}

int ap_runnable(const char *path)
{
	if (strchr(path, '/') == NULL)
		return 0;
	return access(path, X_OK) == 0 ? 0 : errno;
}
