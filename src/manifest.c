#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ap-error.h"
#include "ap-util.h"
#include "manifest.h"
#include "mla-plan.h"

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
		json_array_append_new(inputs, json_pack("{s:s, s:o, s:o}", "path", f->path,
		                                        "sha256", sha, "bytes", bytes));
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
		json_object_set_new(o, "reason", json_string(res->reason));
	return o;
}

static json_t *build_capability(const ap_cap_result *cap)
{
	json_t *evidence = json_array();
	json_t *o;
	size_t i;

	for (i = 0; i < cap->nevidence; i++)
		json_array_append_new(evidence, json_string(cap->evidence[i]));
	o = json_pack("{s:b, s:s, s:o}", "supported", cap->supported, "reason", cap->reason,
	              "evidence", evidence);
	if (cap->launch != NULL)
		json_object_set(o, "launch", cap->launch);
	return o;
}

/* A head count runs natively when it is a multiple of 16 or when a
 * supported capability's launch spec names it. */
static const ap_cap_result *native_cap_for(const ap_scan *scan, int heads)
{
	size_t i;

	for (i = 0; i < scan->ncaps; i++) {
		const ap_launch_spec *spec = scan->caps[i].probe->launch;
		if (spec != NULL && spec->heads == heads && scan->caps[i].supported)
			return &scan->caps[i];
	}
	return NULL;
}

static bool launch_passed_for(const ap_scan *scan, int heads)
{
	size_t i;

	for (i = 0; i < scan->ncaps; i++) {
		const ap_launch_spec *spec = scan->caps[i].probe->launch;
		const char *status;
		if (spec == NULL || spec->heads != heads || scan->caps[i].launch == NULL)
			continue;
		status = json_string_value(json_object_get(scan->caps[i].launch, "status"));
		if (status != NULL && strcmp(status, "passed") == 0)
			return true;
	}
	return false;
}

json_t *ap_manifest_mla_plans(const ap_scan *scan)
{
	json_t *plans = json_array();
	int heads;

	for (heads = 1; heads <= AP_MLA_MAX_HEADS; heads++) {
		json_t *plan = json_object();
		ap_pad_mode mode;
		int launch_heads = ap_mla_launch_heads(heads, native_cap_for(scan, heads) != NULL,
		                                       &mode);

		json_object_set_new(plan, "heads", json_integer(heads));
		json_object_set_new(plan, "launch_heads", json_integer(launch_heads));
		json_object_set_new(plan, "mode", json_string(ap_pad_mode_name(mode)));
		json_object_set_new(plan, "verified", json_boolean(launch_passed_for(scan, heads)));
		json_array_append_new(plans, plan);
	}
	return plans;
}

/* SOURCE_DATE_EPOCH makes manifests reproducible (tests, packaging). */
static json_t *generated_now(void)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t t = time(NULL);
	struct tm tm;
	char when[32];

	if (epoch != NULL && *epoch != '\0') {
		char *end;
		long long v = strtoll(epoch, &end, 10);
		if (*end == '\0' && v >= 0)
			t = (time_t)v;
	}
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(when);
}

json_t *ap_manifest_build(const ap_scan *scan, const ap_reader *r,
                          const ap_aiter_info *aiter, const json_t *devices)
{
	json_t *rules = json_object();
	json_t *caps = json_object();
	size_t i;

	for (i = 0; i < scan->nrules; i++)
		json_object_set_new(rules, scan->rules[i].rule->id, build_rule(&scan->rules[i]));
	for (i = 0; i < scan->ncaps; i++)
		json_object_set_new(caps, scan->caps[i].probe->id, build_capability(&scan->caps[i]));
	return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o, s:o, s:o, s:o}, s:o, s:o, s:o, s:O, s:{s:o}}",
	                 "schema", AP_MANIFEST_SCHEMA,
	                 "tool", "name", PACKAGE_NAME, "version", PACKAGE_VERSION,
	                 "generated", generated_now(),
	                 "aiter", "root", ap_json_text(aiter->root), "meta",
	                 ap_json_text(aiter->meta ? aiter->meta : aiter->root), "version",
	                 ap_json_text(aiter->version), "git_commit", ap_json_text(aiter->git_commit),
	                 "inputs", build_inputs(r),
	                 "rules", rules,
	                 "capabilities", caps,
	                 "devices", devices,
	                 "plans", "mla_heads", ap_manifest_mla_plans(scan));
}

/* The manifest's JSON text, newline-terminated. */
static char *manifest_text(const json_t *m)
{
	char *text = json_dumps(m, AP_MANIFEST_JSON_FLAGS);
	size_t len;

	if (text == NULL) {
		fputs("aiter-probe: cannot write the manifest as JSON\n", stderr);
		abort();
	}
	len = strlen(text);
	text = ap_xrealloc(text, len + 2);
	text[len] = '\n';
	text[len + 1] = '\0';
	return text;
}

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

int ap_manifest_write(const json_t *m, const char *path)
{
	char *text = manifest_text(m);
	const char *slash = strrchr(path, '/');
	char *tmp;
	mode_t mask;
	int fd;

	if (slash != NULL)
		tmp = ap_xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		tmp = ap_xasprintf(".%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ap_error_set("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
		goto fail;
	}
	/* mkstemp makes 0600; a manifest is for every reader the umask allows. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || write_all(fd, text, strlen(text)) != 0 ||
	    fsync(fd) != 0) {
		ap_error_set("%s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		ap_error_set("%s: %s", path, strerror(errno));
		unlink(tmp);
		goto fail;
	}
	free(tmp);
	free(text);
	return AP_OK;
fail:
	free(tmp);
	free(text);
	return AP_EIO;
}

#define GREEN "\033[32m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

static const char *paint(bool color, const char *code)
{
	return color ? code : "";
}

static void print_capabilities(const json_t *m, FILE *to, bool color)
{
	const char *id;
	json_t *cap;

	fprintf(to, "%sCapabilities%s\n", paint(color, BOLD), paint(color, RESET));
	json_object_foreach(json_object_get(m, "capabilities"), id, cap) {
		bool ok = json_is_true(json_object_get(cap, "supported"));
		json_t *evidence = json_object_get(cap, "evidence");
		json_t *launch = json_object_get(cap, "launch");
		json_t *item;
		size_t i;

		fprintf(to, "  %s%-11s%s %s\n", paint(color, ok ? GREEN : RED),
		        ok ? "supported" : "unsupported", paint(color, RESET), id);
		fprintf(to, "      why: %s\n", json_string_value(json_object_get(cap, "reason")));
		if (json_array_size(evidence) > 0) {
			fputs("      evidence:", to);
			json_array_foreach(evidence, i, item)
				fprintf(to, "%s %s", i ? "," : "", json_string_value(item));
			fputc('\n', to);
		}
		if (launch != NULL)
			fprintf(to, "      launch: %s (%s)\n",
			        json_string_value(json_object_get(launch, "status")),
			        json_string_value(json_object_get(launch, "reason")));
	}
}

static void print_matches_summary(const json_t *rule, FILE *to)
{
	json_t *matches = json_object_get(rule, "matches");
	json_t *match;
	size_t i;

	json_array_foreach(matches, i, match) {
		json_t *caps = json_object_get(match, "captures");
		const char *name;
		json_t *value;
		const char *sep = " (";

		fprintf(to, "%s%s:%lld", i ? ", " : "",
		        json_string_value(json_object_get(rule, "file")),
		        (long long)json_integer_value(json_object_get(match, "line")));
		if (json_object_size(caps) == 0)
			continue;
		json_object_foreach(caps, name, value) {
			fprintf(to, "%s%s=%s", sep, name, json_string_value(value));
			sep = " ";
		}
		fputc(')', to);
	}
}

static void print_rules(const json_t *m, FILE *to, bool color)
{
	const char *id;
	json_t *rule;

	fprintf(to, "%sRules%s\n", paint(color, BOLD), paint(color, RESET));
	json_object_foreach(json_object_get(m, "rules"), id, rule) {
		const char *status = json_string_value(json_object_get(rule, "status"));
		const char *reason = json_string_value(json_object_get(rule, "reason"));
		const char *hue = strcmp(status, "matched") == 0     ? GREEN
		                  : strcmp(status, "unmatched") == 0 ? YELLOW
		                                                     : RED;

		fprintf(to, "  %s%-11s%s %s\n      ", paint(color, hue), status, paint(color, RESET),
		        id);
		if (reason != NULL)
			fputs(reason, to);
		else if (strcmp(status, "unmatched") == 0)
			fprintf(to, "no match in %s", json_string_value(json_object_get(rule, "file")));
		else
			print_matches_summary(rule, to);
		fputc('\n', to);
	}
}

static void print_devices(const json_t *m, FILE *to)
{
	json_t *dev;
	size_t i;

	if (json_array_size(json_object_get(m, "devices")) == 0) {
		fputs("Devices: none\n", to);
		return;
	}
	fputs("Devices:\n", to);
	json_array_foreach(json_object_get(m, "devices"), i, dev)
		fprintf(to, "  %lld: %s (%s)\n", (long long)json_integer_value(json_object_get(dev, "index")),
		        json_string_value(json_object_get(dev, "name")),
		        json_string_value(json_object_get(dev, "arch")));
}

void ap_manifest_print_text(const json_t *m, FILE *to, bool color)
{
	json_t *aiter = json_object_get(m, "aiter");
	const char *version = json_string_value(json_object_get(aiter, "version"));
	const char *commit = json_string_value(json_object_get(aiter, "git_commit"));

	fprintf(to, "AITER %s (version %s, commit %.12s)\n",
	        json_string_value(json_object_get(aiter, "root")), version ? version : "unknown",
	        commit ? commit : "unknown");
	print_capabilities(m, to, color);
	print_rules(m, to, color);
	print_devices(m, to);
}
