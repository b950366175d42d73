/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/child.h"
#include "core/confine.h"
#include "engine/discover.h"
#include "core/manifest-path.h"

/* find_spec locates a top-level package without running its __init__. */
static const char find_aiter_py[] =
	"import importlib.util as u\n"
	"s = u.find_spec('aiter')\n"
	"if s is not None:\n"
	"    print(s.submodule_search_locations[0] if s.submodule_search_locations else s.origin)\n";

/* The Python that locates the package; messages name the same one. */
static const char *python_name(const char *given)
{
	const char *python = given != NULL ? given : getenv("AITER_PROBE_PYTHON");
	return python != NULL && *python != '\0' ? python : "python3";
}

/* Python's start is slow on a loaded node, but a locked-up interpreter must
 * not hold the scan. */
#define FIND_TIMEOUT_S 60.0

/* Runs python and returns the package folder it printed, "" when aiter is not
 * installed, or NULL (message set) when python cannot be run. */
static char *locate_package(const char *python)
{
	char *argv[] = {(char *)python_name(python), "-c", (char *)find_aiter_py, NULL};
	ap_child c;
	char *found = NULL;
	int rc = ap_child_start(&c, argv, FIND_TIMEOUT_S);

	if (rc != 0) {
		ap_error_set("cannot look for the aiter package: %s: %s", argv[0], strerror(rc));
		return NULL;
	}
	ap_children_wait(&c, 1);
	if (!c.timed_out && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) {
		while (c.out.len > 0 &&
		       (c.out.data[c.out.len - 1] == '\n' || c.out.data[c.out.len - 1] == '\r'))
			c.out.data[--c.out.len] = '\0';
		found = ap_buf_detach(&c.out);
	} else {
		char *why = ap_child_failure(&c, argv[0], FIND_TIMEOUT_S);
		ap_error_set("cannot look for the aiter package: %s", why);
		free(why);
	}
	ap_child_free(&c);
	return found;
}

/* The folder holding the installed aiter package ("" when it is not
 * installed), or NULL with a message; *pkg_out the package's folder. */
static char *package_parent(const char *python, char **pkg_out)
{
	char *pkg = locate_package(python);
	char *parent, *slash;

	*pkg_out = pkg;
	if (pkg == NULL)
		return NULL;
	parent = ap_xstrdup(pkg);
	slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent)
		*slash = '\0';
	return parent;
}

static bool holds(const char *dir, const char *name)
{
	char *p = ap_xasprintf("%s/%s", dir, name);
	bool yes = ap_is_folder(p);

	free(p);
	return yes;
}

static int refuse(ap_tree_location *loc, char *pkg)
{
	free(pkg);
	ap_discover_free(loc);
	return AP_EINPUT;
}

int ap_discover_tree(const char *flag_root, const char *python, ap_tree_location *loc)
{
	const char *env = getenv("AITER_META_DIR");
	char *pkg = NULL;

	memset(loc, 0, sizeof *loc);
	if (env != NULL && *env == '\0')
		env = NULL;
	if (flag_root != NULL) {
		loc->root = ap_xstrdup(flag_root);
		loc->how = ap_xstrdup("--aiter-root");
	} else {
		loc->root = package_parent(python, &pkg);
		if (loc->root == NULL)
			return AP_EINPUT;
		if (*pkg != '\0') {
			loc->how = ap_xasprintf("the installed aiter package at %s", pkg);
		} else if (env != NULL) {
			/* Sources without the package: the meta folder is the tree. */
			free(loc->root);
			loc->root = ap_xstrdup(env);
			loc->how = ap_xstrdup("AITER_META_DIR");
		} else {
			ap_error_set("no AITER tree given: use --aiter-root DIR or set AITER_META_DIR "
			             "(the aiter Python package is not installed for %s)",
			             python_name(python));
			return refuse(loc, pkg);
		}
	}
	/* As aiter/jit/core.py finds it; a root given on the command line is
	 * taken whole. */
	if (flag_root == NULL)
		loc->meta = ap_xnonnull(ap_meta_of_root(loc->root));
	else if (holds(loc->root, "aiter_meta/csrc"))
		loc->meta = ap_xasprintf("%s/aiter_meta", loc->root);
	else
		loc->meta = ap_xstrdup(loc->root);
	if (pkg != NULL && *pkg != '\0' && !holds(loc->meta, "csrc")) {
		ap_error_set("found the aiter package at %s, but %s holds no csrc/; use --aiter-root "
		             "DIR or set AITER_META_DIR",
		             pkg, loc->meta);
		return refuse(loc, pkg);
	}
	free(pkg);
	return AP_OK;
}

void ap_discover_free(ap_tree_location *loc)
{
	free(loc->root);
	free(loc->meta);
	free(loc->how);
	memset(loc, 0, sizeof *loc);
}

/* A git metadata file opened for reading only when it is a regular file:
 * a FIFO or a device planted at .git, HEAD, a ref or packed-refs must not
 * block the scan or feed it without end. NULL otherwise. */
static FILE *open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return NULL;
	}
	return f;
}

/* The first line of a small file, without its line ending, or NULL. */
static char *first_line(const char *path)
{
	FILE *f = open_regular(path);
	char line[4096];
	char *out = NULL;

	if (f == NULL)
		return NULL;
	if (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		out = ap_xstrdup(line);
	}
	fclose(f);
	return out;
}

static int is_object_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return (n == 40 || n == 64) && s[n] == '\0';
}

/* A ref's object id, loose or packed, in gitdir or the common dir. */
static char *resolve_ref(const char *gitdir, const char *ref)
{
	char *common_file = ap_xasprintf("%s/commondir", gitdir);
	char *common = first_line(common_file);
	const char *dirs[2] = {gitdir, NULL};
	char *common_dir = NULL;
	char *id = NULL;
	size_t i;

	free(common_file);
	if (common != NULL) {
		common_dir = common[0] == '/' ? ap_xstrdup(common)
		                              : ap_xasprintf("%s/%s", gitdir, common);
		dirs[1] = common_dir;
	}
	for (i = 0; i < 2 && dirs[i] != NULL && id == NULL; i++) {
		char *loose = ap_xasprintf("%s/%s", dirs[i], ref);
		char *packed = ap_xasprintf("%s/packed-refs", dirs[i]);
		FILE *f;
		id = first_line(loose);
		if (id != NULL && !is_object_id(id)) {
			free(id);
			id = NULL;
		}
		if (id == NULL && (f = open_regular(packed)) != NULL) {
			char line[4096];
			while (id == NULL && fgets(line, sizeof line, f) != NULL) {
				char *space = strchr(line, ' ');
				line[strcspn(line, "\r\n")] = '\0';
				if (space != NULL && strcmp(space + 1, ref) == 0) {
					*space = '\0';
					if (is_object_id(line))
						id = ap_xstrdup(line);
				}
			}
			fclose(f);
		}
		free(loose);
		free(packed);
	}
	free(common);
	free(common_dir);
	return id;
}

/* Reads HEAD by hand rather than through libgit2: starting libgit2 loads its
 * TLS and SSH libraries and certificates, which costs more than a whole scan.
 * Only root/.git counts (a folder, or a file naming the git dir of a linked
 * work tree): a tree that merely sits inside some repository is not a
 * checkout of AITER. */
char *ap_discover_git_commit(const char *root)
{
	char *dotgit = ap_xasprintf("%s/.git", root);
	char *gitdir = NULL, *head_file, *head, *commit = NULL;
	struct stat st;

	if (stat(dotgit, &st) == 0 && S_ISDIR(st.st_mode)) {
		gitdir = dotgit;
		dotgit = NULL;
	} else {
		char *line = first_line(dotgit);
		if (line != NULL && strncmp(line, "gitdir: ", 8) == 0)
			gitdir = line[8] == '/' ? ap_xstrdup(line + 8)
			                        : ap_xasprintf("%s/%s", root, line + 8);
		free(line);
	}
	free(dotgit);
	if (gitdir == NULL)
		return NULL;
	head_file = ap_xasprintf("%s/HEAD", gitdir);
	head = first_line(head_file);
	if (head != NULL && strncmp(head, "ref: ", 5) == 0)
		commit = resolve_ref(gitdir, head + 5);
	else if (head != NULL && is_object_id(head))
		commit = ap_xstrdup(head);
	free(head);
	free(head_file);
	free(gitdir);
	return commit;
}
