/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/child.h"
#include "engine/pytarget.h"

/* One run for every question of a scan: prints the facts in five lines
 * (sys.executable may be empty), then answers each module named on a line
 * of its stdin with a line: whether it is found, without importing it or
 * its parents: the top-level name by find_spec, each submodule by the path
 * finder over its parent's locations, as the import system would look. Not
 * the folder the scan runs in, which `-c` puts first on the path. Where it
 * is absent, how many of its parts name the first module absent: every
 * module under that one is absent too, found by the same walk, so one
 * answer answers them all (triton.language.extra.libdevice absent at
 * `triton` answers triton.experimental), as a module found answers its
 * parents. The facts need neither the environment nor site-packages, but
 * where it finds modules needs both: it starts as the server would. */
static const char facts_py[] =
	"import sys\n"
	"if sys.path and sys.path[0] == '':\n"
	"    del sys.path[0]\n"
	"import os, importlib.machinery as m, importlib.util as u\n"
	"v = sys.version_info\n"
	"sys.stdout.write('aiter-probe-facts-1\\n%s\\n%d %d %d %s %d\\n%s\\n%s\\n' % (sys.executable "
	"or '', v[0], v[1], v[2], v[3], v[4], sys.platform, os.name))\n"
	"sys.stdout.flush()\n"
	"for line in iter(sys.stdin.readline, ''):\n"
	"    parts = line.rstrip('\\n').split('.')\n"
	"    try:\n"
	"        n = 1\n"
	"        s = u.find_spec(parts[0])\n"
	"        while s is not None and n < len(parts):\n"
	"            n += 1\n"
	"            s = (m.PathFinder.find_spec('.'.join(parts[:n]), list(s.submodule_search_locations))\n"
	"                 if s.submodule_search_locations is not None else None)\n"
	"        a = 'found' if s is not None else 'absent %d' % n\n"
	"    except Exception:\n"
	"        a = 'error'\n"
	"    sys.stdout.write(a + '\\n')\n"
	"    sys.stdout.flush()\n";

/* Longest a module name asked may be, and sys.executable, platform, os.name. */
#define NAME_MAX_BYTES 512
#define EXECUTABLE_MAX 4096
#define WORD_MAX 64

struct ap_pytarget {
	char *python;  /* as given, or the default; NULL when nothing is run */
	bool version_only;
	bool asked;    /* the facts were looked for */
	bool have;     /* and found */
	bool wanted;   /* by the caller, not only to ask where modules are found */
	ap_py_facts facts;
	char *executable, *level, *platform, *os_name;
	unsigned used; /* AP_PY_FACT_* that answers read */
	/* given by the caller (ap_pytarget_new_given): asked instead of a run */
	int (*given_finds)(void *ctx, const char *module);
	void *given_ctx;
	ap_child child; /* the run, once started; pid 0 before */
	ap_map *finds; /* module -> index into names */
	ap_map *implied; /* module -> 0 absent or 1 found, as another's answer implies */
	char **names;
	int *found;
	size_t nfinds, finds_cap;
	char *error;
};

bool ap_pytarget_version_valid(const char *version)
{
	const char *p = version;

	for (int part = 0; part < 3; part++) {
		size_t digits = strspn(p, "0123456789");
		if (digits == 0 || digits > 4)
			return false;
		p += digits;
		if (*p == '\0')
			return part >= 1;
		if (*p++ != '.')
			return false;
	}
	return false;
}

char *ap_pytarget_refusal(const char *python)
{
	struct stat st;
	const char *path = getenv("PATH");

	if (python[0] == '\0')
		return ap_xstrdup("'' names no interpreter");
	if (strchr(python, '/') != NULL) {
		if (stat(python, &st) != 0)
			return ap_xasprintf("%s: %s", python, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return ap_xasprintf("%s: not a regular file", python);
		if (access(python, X_OK) != 0)
			return ap_xasprintf("%s: %s", python, strerror(errno));
		return NULL;
	}
	/* As posix_spawnp will look, with the same default. */
	if (path == NULL)
		path = "/bin:/usr/bin";
	while (*path != '\0') {
		size_t len = strcspn(path, ":");
		char *cand = ap_xasprintf("%.*s%s%s", (int)len, path, len ? "/" : "", python);
		bool ok = stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0;
		free(cand);
		if (ok)
			return NULL;
		path += len + (path[len] == ':');
	}
	return ap_xasprintf("%s: not found in PATH", python);
}

ap_pytarget *ap_pytarget_new(const char *python, const char *version)
{
	ap_pytarget *t = ap_xcalloc(1, sizeof *t);
	const char *env = getenv("AITER_PROBE_PYTHON");

	ap_child_init(&t->child);
	t->finds = ap_xnonnull(ap_map_new());
	t->implied = ap_xnonnull(ap_map_new());
	if (version != NULL) {
		t->version_only = true;
		t->asked = t->have = true;
		t->facts.nversion = (unsigned)sscanf(version, "%d.%d.%d", &t->facts.major,
		                                     &t->facts.minor, &t->facts.micro);
		return t;
	}
	t->python = ap_xstrdup(python != NULL ? python
	                       : env != NULL && *env != '\0' ? env
	                                                     : "python3");
	return t;
}

void ap_pytarget_free(ap_pytarget *t)
{
	if (t == NULL)
		return;
	ap_child_stop(&t->child);
	ap_child_free(&t->child);
	for (size_t i = 0; i < t->nfinds; i++)
		free(t->names[i]);
	free(t->names);
	free(t->found);
	ap_map_free(t->finds);
	ap_map_free(t->implied);
	free(t->python);
	free(t->executable);
	free(t->level);
	free(t->platform);
	free(t->os_name);
	free(t->error);
	free(t);
}

const char *ap_pytarget_program(const ap_pytarget *t)
{
	return t->python;
}

const char *ap_pytarget_error(const ap_pytarget *t)
{
	return t->error;
}

static void fail(ap_pytarget *t, char *why)
{
	if (t->error == NULL)
		t->error = ap_xasprintf("cannot ask %s %s", t->python, why);
	free(why);
}

/* The time limit of a run: AITER_PROBE_PYTHON_TIMEOUT, else the default;
 * 0 when the variable is no positive number. */
static double time_limit(void)
{
	const char *env = getenv("AITER_PROBE_PYTHON_TIMEOUT");
	char *end;
	double v;

	if (env == NULL || *env == '\0')
		return AP_PYTARGET_TIMEOUT_S;
	errno = 0;
	v = strtod(env, &end);
	return errno == 0 && end != env && *end == '\0' && v > 0 && v < 1e6 ? v : 0;
}

int ap_pytarget_check_env(void)
{
	if (time_limit() > 0)
		return AP_OK;
	ap_error_set("AITER_PROBE_PYTHON_TIMEOUT must be a positive number of seconds, not '%s'",
	             getenv("AITER_PROBE_PYTHON_TIMEOUT"));
	return AP_EINPUT;
}

/* The time limit of a run that a scan refuses first (ap_pytarget_check_env)
 * is the default. */
static double limit_of_run(void)
{
	double limit = time_limit();

	return limit > 0 ? limit : AP_PYTARGET_TIMEOUT_S;
}

/* Asks the run question (NULL: the facts it prints once started) and
 * returns the lines of its answer, or NULL after fail() said why (what:
 * what was asked); NULL too when they hold a NUL, or when more than the
 * answer has come, which no answer does. */
static char *ask(ap_pytarget *t, const char *question, size_t lines, const char *what)
{
	double limit = limit_of_run();
	size_t len;
	char *out;

	if (t->error != NULL)
		return NULL;
	len = ap_child_ask(&t->child, question, lines, limit);
	/* what a run that ended well printed is all there is of its answer */
	if (len == 0 && t->child.exited && !t->child.overflowed && WIFEXITED(t->child.status) &&
	    WEXITSTATUS(t->child.status) == 0) {
		fail(t, ap_xasprintf("%s: it printed what is no answer", what));
		return NULL;
	}
	if (len == 0) {
		char *why = ap_child_failure(&t->child, t->python, limit);
		fail(t, ap_xasprintf("%s: %s", what, why));
		free(why);
		return NULL;
	}
	if (memchr(t->child.out.data, '\0', len) != NULL || t->child.out.len > len) {
		fail(t, ap_xasprintf("%s: it printed what is no answer", what));
		return NULL;
	}
	out = ap_xstrndup(t->child.out.data, len);
	ap_child_take(&t->child, len);
	return out;
}

/* The line at *p (ended by '\n') as a string, *p past it; NULL when there
 * is none or it holds a control byte. */
static char *line_of(const char **p, size_t max)
{
	const char *s = *p, *nl = strchr(s, '\n');

	if (nl == NULL || (size_t)(nl - s) > max)
		return NULL;
	for (const char *q = s; q < nl; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return NULL;
	*p = nl + 1;
	return ap_xstrndup(s, (size_t)(nl - s));
}

/* Whether s is a word of letters, digits and ._+- (sys.platform, os.name). */
static bool plain_word(const char *s)
{
	return s[0] != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                                 "0123456789._+-") == strlen(s);
}

static const char *const levels[] = {"alpha", "beta", "candidate", "final"};

/* Why facts are not what facts_py would print of an interpreter, in words;
 * NULL when they are. */
static char *facts_refusal(const char *executable, const int version[3], const char *level,
                           const char *platform, const char *os_name)
{
	bool known = false;

	if (executable != NULL && strlen(executable) > EXECUTABLE_MAX)
		return ap_xasprintf("its executable is longer than %d bytes", EXECUTABLE_MAX);
	for (const char *q = executable; q != NULL && *q != '\0'; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return ap_xstrdup("its executable holds a control byte");
	for (int i = 0; i < 3; i++)
		if (version[i] < 0 || version[i] > 9999)
			return ap_xasprintf("its version %d.%d.%d has a part outside 0 to 9999",
			                    version[0], version[1], version[2]);
	for (size_t i = 0; level != NULL && i < sizeof levels / sizeof levels[0]; i++)
		known |= strcmp(level, levels[i]) == 0;
	if (!known)
		return ap_xstrdup("its releaselevel is none of alpha, beta, candidate, final");
	if (platform == NULL || strlen(platform) > WORD_MAX || !plain_word(platform))
		return ap_xasprintf("its platform is no word of at most %d letters, digits and ._+-",
		                    WORD_MAX);
	if (os_name == NULL || strlen(os_name) > WORD_MAX || !plain_word(os_name))
		return ap_xasprintf("its os_name is no word of at most %d letters, digits and ._+-",
		                    WORD_MAX);
	return NULL;
}

/* Keeps facts that facts_refusal accepts; the strings are copied. */
static void keep_facts(ap_pytarget *t, const char *executable, const int version[3],
                       const char *level, const char *platform, const char *os_name)
{
	t->executable = ap_xstrdup(executable != NULL ? executable : "");
	t->level = ap_xstrdup(level);
	t->platform = ap_xstrdup(platform);
	t->os_name = ap_xstrdup(os_name);
	t->facts = (ap_py_facts){version[0], version[1], version[2], 3, t->level, t->platform,
	                         t->os_name};
	t->asked = t->have = true;
}

/* The five lines facts_py prints, each as it must be. */
static bool parse_facts(ap_pytarget *t, const char *out)
{
	const char *p = out;
	char *magic, *version = NULL, *executable = NULL, *platform = NULL, *os_name = NULL, *why;
	char level[16], canonical[96];
	int v[3], serial;
	bool ok = false;

	magic = line_of(&p, 32);
	if (magic == NULL || strcmp(magic, "aiter-probe-facts-1") != 0 ||
	    (executable = line_of(&p, EXECUTABLE_MAX)) == NULL ||
	    (version = line_of(&p, 64)) == NULL ||
	    sscanf(version, "%4d %4d %4d %15s %4d", &v[0], &v[1], &v[2], level, &serial) != 5 ||
	    serial < 0 || (platform = line_of(&p, WORD_MAX)) == NULL ||
	    (os_name = line_of(&p, WORD_MAX)) == NULL || *p != '\0')
		goto out;
	/* as printed: sscanf would take a sign, blanks, leading zeros, more after */
	snprintf(canonical, sizeof canonical, "%d %d %d %s %d", v[0], v[1], v[2], level, serial);
	if (strcmp(canonical, version) != 0)
		goto out;
	if ((why = facts_refusal(executable, v, level, platform, os_name)) != NULL) {
		free(why);
		goto out;
	}
	keep_facts(t, executable, v, level, platform, os_name);
	ok = true;
out:
	free(magic);
	free(version);
	free(executable);
	free(platform);
	free(os_name);
	return ok;
}

char *ap_pytarget_given_refusal(const ap_pytarget_given *g)
{
	int v[3] = {g->major, g->minor, g->micro};

	return facts_refusal(g->executable, v, g->releaselevel, g->platform, g->os_name);
}

ap_pytarget *ap_pytarget_new_given(const ap_pytarget_given *g)
{
	ap_pytarget *t = ap_xcalloc(1, sizeof *t);
	int v[3] = {g->major, g->minor, g->micro};

	ap_child_init(&t->child);
	t->finds = ap_xnonnull(ap_map_new());
	keep_facts(t, g->executable, v, g->releaselevel, g->platform, g->os_name);
	t->wanted = true;
	t->given_finds = g->finds;
	t->given_ctx = g->ctx;
	return t;
}

/* The facts, starting the run on first need. */
static const ap_py_facts *started(ap_pytarget *t)
{
	if (!t->asked) {
		char *argv[] = {t->python, "-c", (char *)facts_py, NULL};
		char *out = NULL;
		int rc;

		t->asked = true;
		if ((rc = ap_child_start_fed(&t->child, argv, limit_of_run())) != 0)
			fail(t, ap_xasprintf("for its facts: %s", strerror(rc)));
		else
			out = ask(t, NULL, 5, "for its facts");
		if (out != NULL && !parse_facts(t, out))
			fail(t, ap_xstrdup("for its facts: it printed what is no answer"));
		free(out);
	}
	return t->have ? &t->facts : NULL;
}

const ap_py_facts *ap_pytarget_facts(ap_pytarget *t, unsigned need)
{
	const ap_py_facts *f = started(t);

	t->wanted = true;
	if (f != NULL)
		t->used |= need;
	return f;
}

/* Whether s is a dotted module name of ASCII identifiers, which a
 * manifest can record as they are (others are not asked: not known). */
static bool module_name(const char *s)
{
	size_t len = strlen(s);
	bool start = true;

	if (len == 0 || len > NAME_MAX_BYTES)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '.') {
			if (start)
				return false;
			start = true;
		} else if ((c >= '0' && c <= '9') ? !start
		                                   : (c == '_' || (unsigned)((c | 0x20) - 'a') < 26)) {
			start = false;
		} else {
			return false;
		}
	}
	return !start;
}

/* What the answers so far imply about module: 0 where a module it is
 * under is absent, 1 where one under it is found, else -1. */
static int implied(const ap_pytarget *t, const char *module)
{
	size_t at = ap_map_get_str(t->implied, module);

	if (at != AP_MAP_ABSENT)
		return (int)at;
	for (const char *dot = strchr(module, '.'); dot != NULL; dot = strchr(dot + 1, '.'))
		if (ap_map_get(t->implied, module, (size_t)(dot - module)) == 0)
			return 0;
	return -1;
}

/* Keeps what the run's answer about module implies: parts > 0, the first
 * parts of it are absent; parts 0, it and every module above it are found. */
static void imply(ap_pytarget *t, const char *module, size_t parts, bool found)
{
	const char *end = module;

	for (size_t k = 0; *end != '\0'; k++) {
		const char *dot = strchr(end, '.');
		end = dot != NULL ? dot : end + strlen(end);
		if (found || k + 1 == parts) {
			size_t len = (size_t)(end - module);
			if (ap_map_get(t->implied, module, len) == AP_MAP_ABSENT)
				ap_xok(ap_map_put(t->implied, module, len, found ? 1 : 0));
			if (!found)
				return;
		}
		if (*end == '.')
			end++;
	}
}

/* The run's answer: 1 found, 0 absent, -1 not known, -2 no answer. */
static int finds_answer(ap_pytarget *t, const char *module, const char *out)
{
	size_t dots = 0, parts;
	char *end;

	for (const char *q = module; *q != '\0'; q++)
		dots += *q == '.';
	if (strcmp(out, "found\n") == 0) {
		imply(t, module, 0, true);
		return 1;
	}
	if (strcmp(out, "absent\n") == 0)
		return 0;
	if (strcmp(out, "error\n") == 0)
		return -1;
	if (strncmp(out, "absent ", 7) != 0 || out[7] < '1' || out[7] > '9')
		return -2;
	errno = 0;
	parts = strtoul(out + 7, &end, 10);
	if (errno != 0 || strcmp(end, "\n") != 0 || parts > dots + 1)
		return -2;
	imply(t, module, parts, false);
	return 0;
}

int ap_pytarget_finds(ap_pytarget *t, const char *module)
{
	size_t at = ap_map_get_str(t->finds, module);
	int found = -1;
	char *out, *line;

	if (at != AP_MAP_ABSENT)
		return t->found[at];
	if (t->given_finds != NULL && module_name(module)) {
		found = t->given_finds(t->given_ctx, module);
		if (found != 0 && found != 1)
			found = -1;
	} else if (t->python != NULL && module_name(module) && (found = implied(t, module)) < 0 &&
	           started(t) != NULL) {
		line = ap_xasprintf("%s\n", module);
		out = ask(t, line, 1, "where it finds modules");
		free(line);
		if (out != NULL && (found = finds_answer(t, module, out)) == -2) {
			fail(t, ap_xstrdup("where it finds modules: it printed what is no answer"));
			found = -1;
		}
		free(out);
	}
	ap_xgrow((void **)&t->names, &t->finds_cap, t->nfinds + 1, sizeof *t->names);
	t->found = ap_xrealloc(t->found, t->finds_cap * sizeof *t->found);
	t->names[t->nfinds] = ap_xstrdup(module);
	t->found[t->nfinds] = found;
	ap_xok(ap_map_put_str(t->finds, module, t->nfinds++));
	return found;
}

static char *version_text(const ap_py_facts *f)
{
	return f->nversion >= 3 ? ap_xasprintf("%d.%d.%d", f->major, f->minor, f->micro)
	                        : ap_xasprintf("%d.%d", f->major, f->minor);
}

json_t *ap_pytarget_json(const ap_pytarget *t)
{
	unsigned used = t->have ? t->used : 0;
	json_t *o = json_object(), *finds = json_object(), *which;
	const ap_py_facts *f = &t->facts;
	const char *exe;

	if ((used & AP_PY_FACT_VERSION) && f->nversion >= 2) {
		char *v = version_text(f);
		json_object_set_new(o, "version", json_string(v));
		free(v);
		if (f->releaselevel != NULL)
			json_object_set_new(o, "releaselevel", json_string(f->releaselevel));
	}
	if ((used & AP_PY_FACT_PLATFORM) && f->platform != NULL)
		json_object_set_new(o, "platform", json_string(f->platform));
	if ((used & AP_PY_FACT_OS_NAME) && f->os_name != NULL)
		json_object_set_new(o, "os_name", json_string(f->os_name));
	for (size_t i = 0; i < t->nfinds; i++)
		if (t->found[i] >= 0)
			json_object_set_new(finds, t->names[i], json_boolean(t->found[i]));
	if (json_object_size(finds) > 0)
		json_object_set(o, "finds", finds);
	json_decref(finds);
	if (json_object_size(o) == 0) {
		json_decref(o);
		return NULL;
	}
	/* Which interpreter: what it calls itself, else as it was named. */
	exe = t->wanted && t->executable != NULL && *t->executable != '\0' ? t->executable
	                                                                    : t->python;
	which = json_pack("{s:o}", "executable", exe != NULL ? json_string(exe) : json_null());
	json_object_update(which, o);
	json_decref(o);
	return which;
}

static void differs(char ***lines, size_t *n, char *line)
{
	*lines = ap_xrealloc(*lines, (*n + 1) * sizeof **lines);
	(*lines)[(*n)++] = line;
}

static void compare_word(const json_t *rec, const char *key, const char *now, char ***lines,
                         size_t *n)
{
	const char *then = json_string_value(json_object_get(rec, key));

	if (then != NULL && now != NULL && strcmp(then, now) != 0)
		differs(lines, n, ap_xasprintf("%s %s when scanned, now %s", key, then, now));
}

static const char *yes_no(int found)
{
	return found > 0 ? "yes" : found == 0 ? "no" : "not known";
}

int ap_pytarget_compare(ap_pytarget *t, const json_t *rec, char ***lines, size_t *n)
{
	const char *then = json_string_value(json_object_get(rec, "version"));
	const json_t *finds = json_object_get(rec, "finds"), *v;
	const ap_py_facts *f = NULL;
	const char *name;

	if (then != NULL || json_object_get(rec, "platform") || json_object_get(rec, "os_name") ||
	    json_object_get(rec, "releaselevel"))
		f = ap_pytarget_facts(t, 0);
	if (t->error != NULL) {
		ap_error_set("%s", t->error);
		return AP_EINPUT;
	}
	if (then != NULL && f != NULL) {
		int part[3] = {0, 0, 0}, now[3] = {f->major, f->minor, f->micro};
		int k = sscanf(then, "%d.%d.%d", &part[0], &part[1], &part[2]);
		int known = k < (int)f->nversion ? k : (int)f->nversion;
		for (int i = 0; i < known; i++) {
			if (part[i] != now[i]) {
				char *v2 = version_text(f);
				differs(lines, n, ap_xasprintf("version %s when scanned, now %s", then, v2));
				free(v2);
				break;
			}
		}
	}
	if (f != NULL) {
		compare_word(rec, "releaselevel", f->releaselevel, lines, n);
		compare_word(rec, "platform", f->platform, lines, n);
		compare_word(rec, "os_name", f->os_name, lines, n);
	}
	if (!t->version_only && json_is_object(finds)) {
		json_object_foreach((json_t *)finds, name, v) {
			int found = ap_pytarget_finds(t, name);
			if (t->error != NULL) {
				ap_error_set("%s", t->error);
				return AP_EINPUT;
			}
			if (found != (json_is_true(v) ? 1 : 0))
				differs(lines, n, ap_xasprintf("finds %s: %s when scanned, now %s", name,
				                               json_is_true(v) ? "yes" : "no",
				                               yes_no(found)));
		}
	}
	return 0;
}
