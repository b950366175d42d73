/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/manifest.h"
#include "engine/mla-plans.h"

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		len = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	cp = s[0] & (0x7F >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

json_t *ap_json_text(const char *s)
{
	const unsigned char *bytes = (const unsigned char *)s;
	ap_buf valid = AP_BUF_INIT;
	json_t *j;
	size_t n, i, len;

	if (s == NULL)
		return json_null();
	j = json_string(s);
	if (j != NULL)
		return j;
	n = strlen(s);
	for (i = 0; i < n; i += len ? len : 1) {
		len = utf8_sequence(bytes + i, n - i);
		if (len > 0)
			ap_buf_append(&valid, s + i, len);
		else
			ap_buf_puts(&valid, "\xEF\xBF\xBD");
	}
	j = json_stringn(valid.data, valid.len);
	ap_buf_free(&valid);
	return j;
}

static json_t *build_inputs(const ap_reader *r)
{
	json_t *inputs = json_array();
	size_t i;

	for (i = 0; i < ap_reader_count(r); i++) {
		const ap_file *f = ap_reader_at(r, i);
		json_t *sha = json_null();
		json_t *bytes = json_null();

		if (f->hashed) {
			char hex[2 * AP_SHA256_SIZE + 1];
			ap_sha256_hex(f->sha256, hex);
			sha = json_string(hex);
			bytes = json_integer((json_int_t)f->len);
		}
		/* A path that is not UTF-8 (a name a glob or an import found) is
		 * kept with U+FFFD: such a manifest never verifies, which is the
		 * safe way to be wrong. */
		json_t *in = json_pack("{s:o, s:o, s:o}", "path", ap_json_text(f->path), "sha256",
		                       sha, "bytes", bytes);

		/* What was there instead, so that verify can tell the same
		 * unreadable state from a change. */
		if (!f->hashed && f->seen != NULL)
			json_object_set_new(in, "seen", json_string(f->seen));
		json_array_append_new(inputs, in);
	}
	return inputs;
}

static json_t *build_match(const ap_match *m)
{
	json_t *caps = json_object();
	size_t i;

	for (i = 0; i < m->ncaps; i++)
		json_object_set_new(caps, m->caps[i].name, ap_json_text(m->caps[i].value));
	return json_pack("{s:i, s:o, s:o}", "line", (json_int_t)m->line, "text",
	                 ap_json_text(m->text), "captures", caps);
}

static json_t *build_rule(const ap_rule_result *res)
{
	json_t *matches = json_array();
	json_t *o;
	size_t i;

	for (i = 0; i < res->matches.n; i++)
		json_array_append_new(matches, build_match(&res->matches.v[i]));
	o = json_pack("{s:s, s:o, s:o}", "status", ap_rule_status_name(res->status), "file",
	              ap_json_text(res->file), "matches", matches);
	if (res->reason != NULL)
		json_object_set_new(o, "reason", ap_json_text(res->reason));
	return o;
}

static json_t *build_capability(const ap_cap_result *cap)
{
	json_t *evidence = json_array();
	json_t *o;
	size_t i;

	for (i = 0; i < cap->nevidence; i++)
		json_array_append_new(evidence, ap_json_text(cap->evidence[i]));
	o = json_pack("{s:b, s:o, s:o}", "supported", cap->supported, "reason",
	              ap_json_text(cap->reason), "evidence", evidence);
	if (cap->launch != NULL)
		json_object_set(o, "launch", cap->launch);
	return o;
}

int ap_manifest_source_date(const char *text, time_t *t)
{
	unsigned long long v = 0;
	const char *p;

	if (text == NULL || *text == '\0')
		return 0;
	/* Digits only: strtoll would take a sign, blanks and trailing junk. */
	for (p = text; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || v > AP_SOURCE_DATE_MAX / 10)
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
		if (v > AP_SOURCE_DATE_MAX)
			return -1;
	}
	*t = (time_t)v;
	return 1;
}

/* SOURCE_DATE_EPOCH makes manifests reproducible (tests, packaging); the
 * commands refuse a bad one before scanning (ap_manifest_source_date). */
static json_t *generated_now(void)
{
	struct tm tm;
	char when[32];
	time_t t = 0;

	if (ap_manifest_source_date(getenv("SOURCE_DATE_EPOCH"), &t) <= 0 &&
	    (t = time(NULL)) == (time_t)-1)
		t = 0;
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return json_string("1970-01-01T00:00:00Z");
	return json_string(when);
}

/* gethostname truncates silently on some systems: a name that fills the
 * buffer may be cut, and is not written. */
static json_t *host_name(const char *given)
{
	char name[AP_MANIFEST_HOST_MAX + 2] = "";

	if (given != NULL)
		return ap_json_text(given);
	if (gethostname(name, sizeof name) < 0 || name[0] == '\0' ||
	    memchr(name, '\0', sizeof name - 1) == NULL)
		return json_null();
	return ap_json_text(name);
}

json_t *ap_manifest_build(const ap_scan *scan, const ap_reader *r, const ap_aiter_info *aiter,
                          const json_t *python, const json_t *devices, const char *host)
{
	json_t *rules = json_object();
	json_t *caps = json_object();
	size_t i;

	for (i = 0; i < scan->nrules; i++)
		json_object_set_new(rules, scan->rules[i].rule->id, build_rule(&scan->rules[i]));
	for (i = 0; i < scan->ncaps; i++)
		json_object_set_new(caps, scan->caps[i].probe->id, build_capability(&scan->caps[i]));
	return json_pack("{s:s, s:{s:s, s:s}, s:o, s:o, s:{s:o, s:o, s:o, s:o}, s:O*, s:o, s:o, s:o, "
	                 "s:O, s:{s:o}, s:O*}",
	                 "schema", AP_MANIFEST_SCHEMA,
	                 "tool", "name", PACKAGE_NAME, "version", PACKAGE_VERSION,
	                 "generated", generated_now(),
	                 "host", host_name(host),
	                 "aiter", "root", ap_json_text(aiter->root), "meta",
	                 ap_json_text(aiter->meta ? aiter->meta : aiter->root), "version",
	                 ap_json_text(aiter->version), "git_commit", ap_json_text(aiter->git_commit),
	                 "python", python,
	                 "inputs", build_inputs(r),
	                 "rules", rules,
	                 "capabilities", caps,
	                 "devices", devices,
	                 "plans", "mla_heads", ap_mla_plans_build(scan),
	                 "signatures", scan->signatures);
}

/* The text so far, kept while within the cap; past it only counted, so
 * that the error gives the size without holding it. */
struct dump {
	ap_buf *out;
	size_t n;
};

static int dump_put(const char *data, size_t len, void *ctx)
{
	struct dump *d = ctx;

	d->n += len;
	if (d->n > AP_MANIFEST_MAX_BYTES)
		return 0;
	return ap_buf_try_append(d->out, data, len);
}

int ap_manifest_dump(const json_t *m, ap_buf *out)
{
	struct dump d = {out, 1}; /* the newline after it */

	if (json_dump_callback(m, dump_put, &d, AP_MANIFEST_JSON_FLAGS) != 0) {
		ap_error_set("cannot write the manifest as JSON: out of memory");
		return AP_ENOMEM;
	}
	if (d.n <= AP_MANIFEST_MAX_BYTES) {
		if (ap_buf_try_append(out, "\n", 1) == 0)
			return AP_OK;
		ap_error_set("cannot write the manifest as JSON: out of memory");
		return AP_ENOMEM;
	}
	ap_buf_free(out);
	ap_error_set("the manifest would be %zu MiB, more than the %zu MiB its readers accept",
	             (d.n + (1 << 20) - 1) >> 20, AP_MANIFEST_MAX_BYTES >> 20);
	return AP_ELIMIT;
}

/* --- The atomic write --------------------------------------------------- */

/* The temporary file being written, for the signal handler: a static buffer,
 * because the handler may use nothing but async-signal-safe calls. Armed
 * only while the file exists and is ours to remove; the cleanup signals are
 * blocked whenever the file and the flag could disagree. */
static char temp_path[PATH_MAX];
static volatile sig_atomic_t temp_armed;

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NCLEANUP (sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction saved_actions[NCLEANUP];
static bool handler_installed[NCLEANUP];

static void remove_temp_and_die(int sig)
{
	struct sigaction dfl;

	if (temp_armed)
		unlink(temp_path);
	temp_armed = 0;
	/* Die of the signal as if no handler had been there: the parent sees
	 * the same status. The signal stays blocked until the handler returns. */
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void cleanup_signal_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < NCLEANUP; i++)
		sigaddset(set, cleanup_signals[i]);
}

/* Installs the handler for each cleanup signal not ignored (a signal the
 * caller ignores, e.g. SIGINT in a background job, stays ignored). */
static void install_cleanup(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = remove_temp_and_die;
	cleanup_signal_set(&sa.sa_mask);
	for (i = 0; i < NCLEANUP; i++) {
		handler_installed[i] = false;
		if (sigaction(cleanup_signals[i], NULL, &saved_actions[i]) != 0 ||
		    saved_actions[i].sa_handler == SIG_IGN)
			continue;
		if (sigaction(cleanup_signals[i], &sa, NULL) == 0)
			handler_installed[i] = true;
	}
}

static void uninstall_cleanup(void)
{
	size_t i;

	for (i = 0; i < NCLEANUP; i++)
		if (handler_installed[i])
			sigaction(cleanup_signals[i], &saved_actions[i], NULL);
}

static void block_cleanup(sigset_t *old)
{
	sigset_t set;

	cleanup_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* Removes the temporary file, if still there; signals blocked meanwhile so
 * that the handler never unlinks a name that is no longer ours. */
static void discard_temp(void)
{
	sigset_t old;

	block_cleanup(&old);
	if (temp_armed)
		unlink(temp_path);
	temp_armed = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Creates template's file (its last six bytes replaced) as mkstemp does,
 * but with the given mode from the start instead of 0600, and arms the
 * signal handler for it. Returns the descriptor or -1 with errno. */
static int create_temp(char *template, mode_t mode)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t len = strlen(template);
	char *x = template + len - 6;
	struct timespec now;
	unsigned long long seed;
	int attempt, fd = -1, err = EEXIST;

	if (len >= sizeof temp_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	seed = (unsigned long long)now.tv_nsec ^ ((unsigned long long)now.tv_sec << 20) ^
	       ((unsigned long long)getpid() << 40) ^ (unsigned long long)(uintptr_t)template;
	for (attempt = 0; attempt < 1000 && err == EEXIST; attempt++) {
		sigset_t old;
		int i;

		for (i = 0; i < 6; i++) {
			/* xorshift64: different names on a clash, not secrecy (O_EXCL). */
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			x[i] = digits[seed % (sizeof digits - 1)];
		}
		block_cleanup(&old);
		fd = open(template, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		err = errno;
		if (fd >= 0) {
			memcpy(temp_path, template, len + 1);
			temp_armed = 1;
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (fd >= 0)
			return fd;
	}
	errno = err;
	return -1;
}

/* json_dump_callback's output, in 64 KiB writes. */
typedef struct sink {
	int fd;
	int err; /* the first write's errno, 0 while none failed */
	size_t len;
	char buf[65536];
} sink;

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int sink_flush(sink *s)
{
	if (s->err == 0 && s->len > 0 && write_all(s->fd, s->buf, s->len) != 0)
		s->err = errno ? errno : EIO;
	s->len = 0;
	return s->err ? -1 : 0;
}

static int sink_put(const char *data, size_t n, void *ctx)
{
	sink *s = ctx;

	while (n > 0) {
		size_t room = sizeof s->buf - s->len, take = n < room ? n : room;

		memcpy(s->buf + s->len, data, take);
		s->len += take;
		data += take;
		n -= take;
		if (s->len == sizeof s->buf && sink_flush(s) != 0)
			return -1;
	}
	return 0;
}

/* What may stand at path: nothing, or a regular file (not a symlink to
 * one). Sets the error and returns -1 otherwise; *st is path's lstat, or
 * st_mode 0 when there is nothing. */
static int check_target(const char *path, struct stat *st)
{
	if (lstat(path, st) != 0) {
		/* Absent (or unreachable): creating the temporary file tells why. */
		st->st_mode = 0;
		return 0;
	}
	if (S_ISLNK(st->st_mode)) {
		ap_error_set("cannot write the manifest to %s: is a symlink", path);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		ap_error_set("cannot write the manifest to %s: not a regular file", path);
		return -1;
	}
	return 0;
}

/* Renames tmp onto path, which check_target found absent or a regular file.
 * Where path was absent, something that appears there meanwhile is not
 * replaced blindly: it is checked again. Returns AP_OK, or an error code
 * with the error set. */
static int replace_target(const char *tmp, const char *path, bool absent)
{
	struct stat st;

#ifdef RENAME_NOREPLACE
	if (absent) {
		int err;

		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
			return AP_OK;
		err = errno;
		if (err == EEXIST && check_target(path, &st) != 0)
			return AP_EINPUT;
		/* EINVAL, ENOSYS: a file system without it; then as below. */
		if (err != EEXIST && err != EINVAL && err != ENOSYS) {
			ap_error_set("%s: %s", path, strerror(err));
			return AP_EIO;
		}
	}
#else
	(void)absent;
	(void)st;
#endif
	if (rename(tmp, path) != 0) {
		ap_error_set("%s: %s", path, strerror(errno));
		return AP_EIO;
	}
	return AP_OK;
}

int ap_manifest_write(const json_t *m, const char *path)
{
	const char *slash = strrchr(path, '/');
	sink *out = NULL;
	ap_buf text = AP_BUF_INIT;
	struct stat st;
	sigset_t old;
	char *tmp;
	mode_t mask, mode;
	int fd, rc = AP_EIO;

	/* The rename would replace whatever stands at path: a device, a FIFO,
	 * a socket or a symlink would be swapped for a regular file (a folder
	 * would refuse it). Only nothing or a regular file may be replaced. */
	if (check_target(path, &st) != 0)
		return AP_EINPUT;
	if ((rc = ap_manifest_dump(m, &text)) < 0) {
		ap_error_prefix("cannot write the manifest to %s", path);
		return rc;
	}
	rc = AP_EIO;
	mask = umask(0);
	umask(mask);
	/* A new manifest is for every reader the umask allows; a replaced one
	 * keeps the mode of the one it replaces; neither is writable by group
	 * or others, as the readers would not trust it (core/trust.h). */
	mode = (st.st_mode != 0 ? st.st_mode & 0777 : 0666 & ~mask) & ~(mode_t)022;
	if (slash != NULL)
		tmp = ap_xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		tmp = ap_xasprintf(".%s.XXXXXX", path);
	install_cleanup();
	fd = create_temp(tmp, mode);
	if (fd < 0) {
		ap_error_set("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
		goto out;
	}
	out = ap_xcalloc(1, sizeof *out);
	out->fd = fd;
	/* open() took the umask off; put back what the replaced file had. */
	if ((mode & mask) != 0 && fchmod(fd, mode) != 0)
		out->err = errno;
	if (sink_put(text.data, text.len, out) != 0 || sink_flush(out) != 0 || fsync(fd) != 0) {
		ap_error_set("%s: %s", tmp, strerror(out->err ? out->err : errno));
		close(fd);
		discard_temp();
		goto out;
	}
	if (close(fd) != 0) {
		ap_error_set("%s: %s", path, strerror(errno));
		discard_temp();
		goto out;
	}
	/* Again, now that the writing is done: the target may have changed. */
	if (check_target(path, &st) != 0) {
		discard_temp();
		rc = AP_EINPUT;
		goto out;
	}
	block_cleanup(&old);
	rc = replace_target(tmp, path, st.st_mode == 0);
	if (rc != AP_OK)
		unlink(tmp);
	temp_armed = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	uninstall_cleanup();
	ap_buf_free(&text);
	free(out);
	free(tmp);
	return rc;
}

/* --- Text for a terminal ------------------------------------------------ */

json_t *ap_json_for_terminal(const json_t *j)
{
	json_t *copy, *v;
	const char *key;
	size_t i;

	switch (json_typeof(j)) {
	case JSON_STRING: {
		const char *s = json_string_value(j);
		size_t len = json_string_length(j);
		char *safe;

		if (!ap_text_has_control(s, len))
			return json_incref((json_t *)j);
		safe = ap_xnonnull(ap_terminal_text(s, len));
		copy = json_string(safe);
		free(safe);
		return copy != NULL ? copy : json_string("?");
	}
	case JSON_OBJECT:
		copy = json_object();
		json_object_foreach((json_t *)j, key, v) {
			char *safe = ap_xnonnull(ap_terminal_text(key, strlen(key)));
			json_object_set_new(copy, safe, ap_json_for_terminal(v));
			free(safe);
		}
		return copy;
	case JSON_ARRAY:
		copy = json_array();
		json_array_foreach(j, i, v)
			json_array_append_new(copy, ap_json_for_terminal(v));
		return copy;
	default:
		return json_incref((json_t *)j);
	}
}
