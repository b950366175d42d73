/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "core/manifest-path.h"
#include "core/text.h"

/* Hex digits of the root's digest in the file name: 64 bits, no collision
 * among the trees of one node. */
#define NAME_HEX 16

static const char *set_env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && *v != '\0' ? v : NULL;
}

char *ap_meta_of_root(const char *root)
{
	const char *env = set_env("AITER_META_DIR");
	char *wheel;

	if (env != NULL)
		return ap_xstrdup(env);
	wheel = ap_xasprintf("%s/aiter_meta/csrc", root);
	if (ap_is_folder(wheel)) {
		free(wheel);
		return ap_xasprintf("%s/aiter_meta", root);
	}
	free(wheel);
	return ap_xstrdup(root);
}

char *ap_manifest_default_dir(void)
{
	const char *dir = set_env("AITER_PROBE_MANIFEST_DIR");
	const char *cache = set_env("XDG_CACHE_HOME");
	const char *home = set_env("HOME");

	if (dir != NULL) {
		/* Relative, it would name another folder for every working
		 * directory: the server would not find what the scan saved. */
		if (dir[0] != '/') {
			char *safe = ap_terminal_text(dir, strlen(dir));
			ap_error_set("AITER_PROBE_MANIFEST_DIR must be an absolute path, not '%s'",
			             safe);
			free(safe);
			return NULL;
		}
		return ap_xstrdup(dir);
	}
	/* A relative XDG_CACHE_HOME is ignored, as the XDG specification says,
	 * and a relative HOME alike: either would move with the working
	 * directory. */
	if (cache != NULL && cache[0] == '/')
		return ap_xasprintf("%s/aiter-probe", cache);
	if (home != NULL && home[0] == '/')
		return ap_xasprintf("%s/.cache/aiter-probe", home);
	ap_error_set("no folder for saved manifests: set AITER_PROBE_MANIFEST_DIR, "
	             "XDG_CACHE_HOME or HOME");
	return NULL;
}

int ap_manifest_default_path(const char *root, char **path)
{
	unsigned char digest[AP_SHA256_SIZE];
	char hex[2 * AP_SHA256_SIZE + 1];
	char *dir = ap_manifest_default_dir();

	*path = NULL;
	if (dir == NULL)
		return AP_EINPUT;
	ap_sha256_buf(root, strlen(root), digest);
	ap_sha256_hex(digest, hex);
	*path = ap_xasprintf("%s%saiter-%.*s.json", dir,
	                     dir[strlen(dir) - 1] == '/' ? "" : "/", NAME_HEX, hex);
	free(dir);
	return AP_OK;
}

/* "cannot save the manifest in DIR: " and what follows, the paths escaped. */
static void cannot_save(const char *dir, const char *upto, const char *why)
{
	char *safe_dir = ap_terminal_text(dir, strlen(dir));
	char *safe_upto = ap_terminal_text(upto, strlen(upto));

	ap_error_set("cannot save the manifest in %s: %s%s", safe_dir, safe_upto, why);
	free(safe_dir);
	free(safe_upto);
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
		 * again; a dangling symlink is no folder to make. */
		if (errno != ENOENT || (mkdir(upto, 0755) != 0 && errno != EEXIST) ||
		    stat(upto, &st) != 0) {
			char *why = ap_xasprintf(": %s", strerror(errno));
			cannot_save(dir, upto, why);
			free(why);
			return AP_EIO;
		}
	}
	if (!S_ISDIR(st.st_mode)) {
		cannot_save(dir, upto, " is not a folder");
		return AP_EINPUT;
	}
	return AP_OK;
}

int ap_manifest_dir_prepare(const char *dir)
{
	char *upto = ap_xstrdup(dir);
	char *p = upto;
	int rc = AP_OK;

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
	return rc;
}
