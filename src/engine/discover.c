/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
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
#include "engine/lang/space.h"

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

/* The generations of the rule by which aiter/jit/core.py picks its meta
 * folder, each told by a statement only it has (doc/usage.md: "the meta
 * folder"). */
typedef enum {
	META_LAYOUT,      /* none of them, no install_mode: aiter_meta/ when it holds csrc/ */
	META_SITE,        /* v0.1.1-v0.1.4: the root is a site-packages folder */
	META_SITE_PARENT, /* v0.1.5: the root or its parent is one */
	META_MODE,        /* v0.1.5.post1-v0.1.7.post2: aiter/install_mode */
	META_MODE_ENV,    /* v0.1.7.post3 on: that, $AITER_META_DIR, and root without csrc/ */
} meta_rule;

/* Far above any core.py (60 KiB at v0.1.20). */
#define CORE_PY_MAX ((size_t)4 << 20)
/* install_mode holds one word; a longer file is not "develop". */
#define INSTALL_MODE_MAX 4096

/* Up to max bytes of root/rel when it is a regular file under root (*len
 * set), else NULL with *kind what is there. NULL with kind FILE: memory
 * ran out (as it does with kind ERRNO and ENOMEM, which says FILE). */
static char *read_under(const char *root, const char *rel, size_t max, size_t *len,
                        ap_confined_kind *kind)
{
	ap_confined c;
	char *text = NULL;
	ssize_t n;

	*len = 0;
	if ((*kind = ap_open_under(root, rel, &c)) != AP_CONFINED_FILE) {
		if (*kind == AP_CONFINED_ERRNO && c.err == ENOMEM)
			*kind = AP_CONFINED_FILE;
		free(c.target);
		return NULL;
	}
	if ((text = malloc(max + 1)) != NULL) {
		while (*len < max && ((n = read(c.fd, text + *len, max - *len)) > 0 ||
		                      (n < 0 && errno == EINTR)))
			*len += n > 0 ? (size_t)n : 0;
		text[*len] = '\0';
	}
	close(c.fd);
	return text;
}

static bool has(const char *text, size_t len, const char *what)
{
	return memmem(text, len, what, strlen(what)) != NULL;
}

/* Which rule root's aiter/jit/core.py follows; -1: memory ran out. A tree
 * whose core.py has none of the statements (a stub, a copy trimmed for
 * tests) or has none is of the generations that read aiter/install_mode
 * when it has one, else its layout tells. */
static int meta_rule_of(const char *root)
{
	ap_confined_kind kind;
	size_t len;
	char *core = read_under(root, "aiter/jit/core.py", CORE_PY_MAX, &len, &kind);
	char *mode;
	int rule = -2;

	if (core == NULL && kind == AP_CONFINED_FILE)
		return -1;
	if (core != NULL && has(core, len, "install_mode"))
		rule = has(core, len, "os.environ.get(\"AITER_META_DIR\")") ? META_MODE_ENV
		                                                            : META_MODE;
	else if (core != NULL && has(core, len, "getsitepackages"))
		rule = has(core, len, "package_parent_path not in site_packages_dirs")
		           ? META_SITE_PARENT
		           : META_SITE;
	free(core);
	if (rule != -2)
		return rule;
	mode = read_under(root, "aiter/install_mode", 0, &len, &kind);
	if (mode == NULL && kind == AP_CONFINED_FILE)
		return -1;
	free(mode);
	return kind == AP_CONFINED_MISSING ? META_LAYOUT : META_MODE_ENV;
}

/* Whether aiter/install_mode says "develop" once stripped as Python's
 * str.strip() strips ASCII; an absent file is an editable install
 * (`pip install -e`) to AITER too. Any other failure makes AITER's import
 * raise, so nothing is built from either folder: the wheel's is taken. */
static int develop_mode(const char *root)
{
	ap_confined_kind kind;
	size_t len, start = 0;
	char *text = read_under(root, "aiter/install_mode", INSTALL_MODE_MAX, &len, &kind);
	bool yes;

	if (text == NULL)
		return kind == AP_CONFINED_MISSING ? 1 : kind == AP_CONFINED_FILE ? -1 : 0;
	while (start < len && ap_is_space_byte((unsigned char)text[start]))
		start++;
	while (len > start && ap_is_space_byte((unsigned char)text[len - 1]))
		len--;
	yes = len - start == 7 && memcmp(text + start, "develop", 7) == 0;
	free(text);
	return yes;
}

static const char site_dirs_py[] = "import site\nfor d in site.getsitepackages(): print(d)\n";

/* Whether python's site.getsitepackages() names root, or with parent its
 * parent too (canonical paths compared): 1, 0, or -1 with the error set. */
static int in_site_packages(const char *root, const char *python, bool parent)
{
	char *argv[] = {(char *)python_name(python), "-c", (char *)site_dirs_py, NULL};
	char *up = ap_xstrdup(root), *slash = strrchr(up, '/'), *line, *save = NULL;
	ap_child c;
	int rc = ap_child_start(&c, argv, FIND_TIMEOUT_S), found = 0;

	if (slash != NULL)
		slash[slash == up] = '\0';
	if (rc != 0) {
		ap_error_set("cannot ask %s for its site-packages, which this AITER's meta folder "
		             "depends on: %s", argv[0], strerror(rc));
		free(up);
		return -1;
	}
	ap_children_wait(&c, 1);
	if (c.timed_out || !WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
		char *why = ap_child_failure(&c, argv[0], FIND_TIMEOUT_S);
		ap_error_set("cannot ask %s for its site-packages, which this AITER's meta folder "
		             "depends on: %s", argv[0], why);
		free(why);
		found = -1;
	}
	for (line = found == 0 && c.out.data != NULL ? strtok_r(c.out.data, "\n", &save) : NULL;
	     line != NULL && found == 0; line = strtok_r(NULL, "\n", &save)) {
		char *real = realpath(line, NULL);
		found = real != NULL && (strcmp(real, root) == 0 || (parent && strcmp(real, up) == 0));
		free(real);
	}
	ap_child_free(&c);
	free(up);
	return found;
}

char *ap_discover_meta(const char *root, const char *python, bool env)
{
	const char *set = getenv("AITER_META_DIR");
	char *real = realpath(root, NULL), *meta = NULL, *csrc;
	int rule, develop = 0;

	/* A root that is not there is refused by the reader, in its words. */
	if (real == NULL && errno != ENOMEM)
		return ap_strdup(root);
	if (real == NULL)
		goto oom;
	if (set != NULL && *set == '\0')
		set = NULL;
	if ((rule = meta_rule_of(real)) < 0)
		goto oom;
	if (rule == META_LAYOUT) {
		csrc = ap_asprintf("%s/aiter_meta/csrc", root);
		meta = env && set != NULL  ? ap_strdup(set)
		       : csrc == NULL      ? NULL
		       : ap_is_folder(csrc) ? ap_asprintf("%s/aiter_meta", root)
		                           : ap_strdup(root);
		free(csrc);
		if (meta == NULL)
			goto oom;
		free(real);
		return meta;
	}
	if (rule == META_SITE || rule == META_SITE_PARENT) {
		int site = in_site_packages(real, python, rule == META_SITE_PARENT);
		develop = site < 0 ? -1 : !site;
	} else
		develop = develop_mode(real);
	if (develop < 0 && rule >= META_MODE)
		goto oom;
	if (develop < 0) {
		free(real);
		errno = 0;
		return NULL;
	}
	meta = develop ? ap_strdup(root) : ap_asprintf("%s/aiter_meta", root);
	if (rule == META_MODE_ENV && meta != NULL) {
		if (env && set != NULL) {
			free(meta);
			meta = ap_strdup(set);
		}
		/* os.path.exists: a csrc that is a file counts. */
		csrc = meta != NULL ? ap_asprintf("%s/csrc", meta) : NULL;
		if (csrc != NULL && access(csrc, F_OK) != 0) {
			free(meta);
			meta = ap_strdup(root);
		}
		if (csrc == NULL) {
			free(meta);
			meta = NULL;
		}
		free(csrc);
	}
	if (meta == NULL)
		goto oom;
	free(real);
	return meta;
oom:
	free(real);
	ap_error_set("out of memory while looking for the meta folder of %s", root);
	errno = ENOMEM;
	return NULL;
}

static int refuse(ap_tree_location *loc, char *pkg)
{
	free(pkg);
	ap_discover_free(loc);
	return AP_EINPUT;
}

int ap_discover_tree(const char *flag_root, const char *python, bool imported,
                     ap_tree_location *loc)
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
	/* As aiter/jit/core.py finds it; $AITER_META_DIR is not read for a root
	 * named on the command line. */
	loc->meta = ap_discover_meta(loc->root, python, flag_root == NULL || imported);
	if (loc->meta == NULL && errno == ENOMEM)
		ap_xnonnull(NULL);
	if (loc->meta == NULL)
		return refuse(loc, pkg);
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
