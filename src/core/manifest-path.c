/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "core/manifest-path.h"
#include "core/text.h"
#include "core/trust.h"

/* Hex digits of the root's digest in the file name: 64 bits, no collision
 * among the trees of one node. */
#define NAME_HEX 16

static const char *set_env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && *v != '\0' ? v : NULL;
}

/* ap_manifest_default_dir, with the reason it has none: AP_EINPUT or
 * AP_ENOMEM. */
static int default_dir(char **out)
{
	const char *dir = set_env("AITER_PROBE_MANIFEST_DIR");
	const char *cache = set_env("XDG_CACHE_HOME");
	const char *home = set_env("HOME");

	if (dir != NULL) {
		/* Relative, it would name another folder for every working
		 * directory: the server would not find what the scan saved. */
		if (dir[0] != '/') {
			char *safe = ap_terminal_text(dir, strlen(dir));
			if (safe == NULL)
				return AP_ENOMEM;
			ap_error_set("AITER_PROBE_MANIFEST_DIR must be an absolute path, not '%s'",
			             safe);
			free(safe);
			return AP_EINPUT;
		}
		*out = ap_strdup(dir);
	} else if (cache != NULL && cache[0] == '/') {
		/* A relative XDG_CACHE_HOME is ignored, as the XDG specification
		 * says, and a relative HOME alike: either would move with the
		 * working directory. */
		*out = ap_asprintf("%s/aiter-probe", cache);
	} else if (home != NULL && home[0] == '/') {
		*out = ap_asprintf("%s/.cache/aiter-probe", home);
	} else {
		ap_error_set("no folder for saved manifests: set AITER_PROBE_MANIFEST_DIR, "
		             "XDG_CACHE_HOME or HOME");
		return AP_EINPUT;
	}
	return *out != NULL ? AP_OK : AP_ENOMEM;
}

char *ap_manifest_default_dir(void)
{
	char *dir = NULL;

	(void)default_dir(&dir);
	return dir;
}

int ap_manifest_default_path(const char *root, char **path)
{
	unsigned char digest[AP_SHA256_SIZE];
	char hex[2 * AP_SHA256_SIZE + 1];
	char *dir = NULL;
	int rc = default_dir(&dir);

	*path = NULL;
	if (rc < 0)
		return rc;
	ap_sha256_buf(root, strlen(root), digest);
	ap_sha256_hex(digest, hex);
	*path = ap_asprintf("%s%saiter-%.*s.json", dir,
	                    dir[strlen(dir) - 1] == '/' ? "" : "/", NAME_HEX, hex);
	free(dir);
	return *path != NULL ? AP_OK : AP_ENOMEM;
}

/* Sets "cannot save the manifest in DIR: " and what follows, the paths
 * escaped, and returns rc (AP_ENOMEM when the message cannot be made). */
static int cannot_save(const char *dir, const char *upto, const char *why, int rc)
{
	char *safe_dir = ap_terminal_text(dir, strlen(dir));
	char *safe_upto = safe_dir != NULL ? ap_terminal_text(upto, strlen(upto)) : NULL;

	if (safe_upto != NULL)
		ap_error_set("cannot save the manifest in %s: %s%s", safe_dir, safe_upto, why);
	free(safe_dir);
	free(safe_upto);
	return safe_upto != NULL ? rc : AP_ENOMEM;
}

/* One component, the path up to it: a folder (made when absent) or a
 * refusal. A symlink to a folder is followed (a /home that links to
 * /var/home); the manifest itself is renamed into place, so no link in the
 * folder is ever written through. */
static int prepare_component(const char *dir, const char *upto)
{
	struct stat st;

	if (stat(upto, &st) != 0) {
		/* Absent: made here (or meanwhile by another scan), then looked at
		 * again; a dangling symlink is no folder to make. A umask that
		 * leaves group write would make a folder no reader trusts. */
		bool made;

		if (errno != ENOENT || (!(made = mkdir(upto, 0755) == 0) && errno != EEXIST) ||
		    stat(upto, &st) != 0 ||
		    (made && (st.st_mode & 022) != 0 && chmod(upto, st.st_mode & 07755) != 0)) {
			char why[256];
			snprintf(why, sizeof why, ": %s", strerror(errno));
			return cannot_save(dir, upto, why, AP_EIO);
		}
	}
	if (!S_ISDIR(st.st_mode))
		return cannot_save(dir, upto, " is not a folder", AP_EINPUT);
	return AP_OK;
}

/* The manifest folder itself as the readers will look at it. */
static int trusted_folder(const char *dir)
{
	struct stat st;
	int rc;

	if (lstat(dir, &st) != 0) {
		char why[256];
		snprintf(why, sizeof why, ": %s", strerror(errno));
		return cannot_save(dir, dir, why, AP_EIO);
	}
	if ((rc = ap_trust_stat(dir, NULL, &st)) < 0)
		ap_error_prefix("cannot save the manifest");
	return rc;
}

int ap_manifest_dir_prepare(const char *dir)
{
	char *upto = ap_strdup(dir);
	char *p = upto;
	int rc = AP_OK;

	if (upto == NULL)
		return AP_ENOMEM;

	for (;;) {
		char keep;

		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		p += strcspn(p, "/");
		keep = *p;
		*p = '\0';
		rc = prepare_component(dir, upto);
		*p = keep;
		if (rc != AP_OK)
			break;
	}
	free(upto);
	return rc == AP_OK ? trusted_folder(dir) : rc;
}
