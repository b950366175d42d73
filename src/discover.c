#include "config.h"

#include <errno.h>
#include <git2.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ap-error.h"
#include "ap-util.h"
#include "discover.h"

extern char **environ;

static int is_folder(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int holds_csrc(const char *dir)
{
	char *csrc = ap_xasprintf("%s/csrc", dir);
	int yes = is_folder(csrc);
	free(csrc);
	return yes;
}

/* find_spec locates a top-level package without running its __init__. */
static const char find_aiter_py[] =
	"import importlib.util as u\n"
	"s = u.find_spec('aiter')\n"
	"if s is not None:\n"
	"    print(s.submodule_search_locations[0] if s.submodule_search_locations else s.origin)\n";

/* Runs python and returns the package folder it printed, "" when aiter is not
 * installed, or NULL (message set) when python cannot be run. */
static char *locate_package(void)
{
	const char *python = getenv("AITER_PROBE_PYTHON");
	char *argv[] = {NULL, "-c", (char *)find_aiter_py, NULL};
	posix_spawn_file_actions_t actions;
	ap_buf out = AP_BUF_INIT;
	char chunk[512];
	int fds[2], status = 0, rc;
	pid_t pid;
	ssize_t n;

	argv[0] = (char *)(python && *python ? python : "python3");
	if (pipe(fds) != 0) {
		ap_error_set("cannot look for the aiter package: pipe: %s", strerror(errno));
		return NULL;
	}
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&actions, fds[0]);
	rc = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		ap_error_set("cannot look for the aiter package: %s: %s", argv[0], strerror(rc));
		return NULL;
	}
	while ((n = read(fds[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			ap_buf_append(&out, chunk, (size_t)n);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		ap_buf_free(&out);
		ap_error_set("cannot look for the aiter package: %s failed", argv[0]);
		return NULL;
	}
	while (out.len > 0 && (out.data[out.len - 1] == '\n' || out.data[out.len - 1] == '\r'))
		out.data[--out.len] = '\0';
	return ap_buf_detach(&out);
}

static int root_from_package(char **root, char **how)
{
	char *pkg = locate_package();
	char *parent, *meta, *slash;

	if (pkg == NULL)
		return AP_EINPUT;
	if (*pkg == '\0') {
		free(pkg);
		ap_error_set("no AITER tree given: use --aiter-root DIR or set AITER_META_DIR "
		             "(the aiter Python package is not installed for %s)",
		             getenv("AITER_PROBE_PYTHON") ? getenv("AITER_PROBE_PYTHON") : "python3");
		return AP_EINPUT;
	}
	parent = ap_xstrdup(pkg);
	slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent)
		*slash = '\0';
	meta = ap_xasprintf("%s/aiter_meta", parent);
	if (holds_csrc(meta)) {
		*root = meta;
		free(parent);
	} else if (holds_csrc(parent)) {
		*root = parent;
		free(meta);
	} else {
		ap_error_set("found the aiter package at %s, but neither %s nor %s holds csrc/; "
		             "use --aiter-root DIR or set AITER_META_DIR",
		             pkg, meta, parent);
		free(meta);
		free(parent);
		free(pkg);
		return AP_EINPUT;
	}
	*how = ap_xasprintf("the installed aiter package at %s", pkg);
	free(pkg);
	return AP_OK;
}

int ap_discover_root(const char *flag_root, char **root, char **how)
{
	const char *env = getenv("AITER_META_DIR");

	if (flag_root != NULL) {
		*root = ap_xstrdup(flag_root);
		*how = ap_xstrdup("--aiter-root");
		return AP_OK;
	}
	if (env != NULL && *env != '\0') {
		*root = ap_xstrdup(env);
		*how = ap_xstrdup("AITER_META_DIR");
		return AP_OK;
	}
	return root_from_package(root, how);
}

/* setuptools_scm writes `__version__ = version = '0.1.20'` or similar. */
static char *version_in(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[512];
	char *found = NULL;

	if (f == NULL)
		return NULL;
	while (found == NULL && fgets(line, sizeof line, f) != NULL) {
		char *q, *end;
		if (strncmp(line, "__version__", 11) != 0 && strncmp(line, "version", 7) != 0)
			continue;
		q = strpbrk(line, "'\"");
		if (q == NULL)
			continue;
		end = strchr(q + 1, *q);
		if (end != NULL && end > q + 1)
			found = ap_xstrndup(q + 1, (size_t)(end - q - 1));
	}
	fclose(f);
	return found;
}

char *ap_discover_version(const char *root)
{
	char *file = ap_xasprintf("%s/aiter/_version.py", root);
	char *v = version_in(file);

	free(file);
	if (v == NULL) {
		file = ap_xasprintf("%s/../aiter/_version.py", root);
		v = version_in(file);
		free(file);
	}
	return v;
}

char *ap_discover_git_commit(const char *root)
{
	char *dotgit = ap_xasprintf("%s/.git", root);
	git_repository *repo = NULL;
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];
	char *commit = NULL;
	struct stat st;
	int present = lstat(dotgit, &st) == 0;

	free(dotgit);
	/* Starting libgit2 costs more than the whole scan (it loads the TLS
	 * certificates), so only a root that has .git pays for it. */
	if (!present)
		return NULL;
	git_libgit2_init();
	/* NO_SEARCH: a tree that merely sits inside some repository is not a
	 * checkout of AITER. */
	if (git_repository_open_ext(&repo, root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 &&
	    git_reference_name_to_id(&oid, repo, "HEAD") == 0) {
		git_oid_tostr(hex, sizeof hex, &oid);
		commit = ap_xstrdup(hex);
	}
	git_repository_free(repo);
	git_libgit2_shutdown();
	return commit;
}
