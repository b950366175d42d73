/* SPDX-License-Identifier: MIT */
/* The scan in process (aiter_probe_scan), through the shared library's
 * exported symbols only: the same manifest as the command's, and every
 * refusal with its message. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "aiter-probe.h"

#define FIXTURES AP_SRCDIR "/tests/fixtures/"

static char tmp[] = "/tmp/ap-capi-scan-XXXXXX";

static int setup(void **state)
{
	/* The installed packs are the source tree's; the manifest's date and
	 * host are fixed, so that it can be compared byte for byte. */
	setenv("AITER_PROBE_DATADIR", AP_SRCDIR, 1);
	setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
	unsetenv("AITER_META_DIR");
	return mkdtemp(tmp) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char *cmd;

	if (asprintf(&cmd, "rm -rf '%s'", tmp) < 0)
		return -1;
	(void)system(cmd);
	free(cmd);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&data, &len);
	char buf[4096];
	size_t n;

	assert_non_null(f);
	assert_non_null(mem);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, mem);
	fclose(f);
	fclose(mem);
	return data;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* o scans dir with the one pack, only it. */
static void own_pack(aiter_probe_scan_options *o, const char **packs, const char *dir,
                     const char *pack)
{
	packs[0] = pack;
	o->aiter_root = dir;
	o->rule_paths = packs;
	o->rule_path_count = 1;
	o->no_default_rules = 1;
}

/* tmp/NAME, a tree of aiter/mla.py holding source, and tmp/NAME.yaml
 * holding pack: o scans the one with the other, only it. */
static void one_module_tree(aiter_probe_scan_options *o, const char **packs, const char *name,
                            const char *source, const char *pack)
{
	char *dir, *path;

	assert_true(asprintf(&dir, "%s/%s", tmp, name) > 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_true(asprintf(&path, "%s/aiter", dir) > 0);
	assert_int_equal(mkdir(path, 0755), 0);
	free(path);
	assert_true(asprintf(&path, "%s/aiter/mla.py", dir) > 0);
	write_text(path, source);
	free(path);
	assert_true(asprintf(&path, "%s/%s.yaml", tmp, name) > 0);
	write_text(path, pack);
	/* the options keep the strings until the test's end */
	own_pack(o, packs, dir, path);
}

static aiter_probe_manifest *scan_ok(const aiter_probe_scan_options *o)
{
	aiter_probe_manifest *m = NULL;

	assert_int_equal(aiter_probe_scan(&m, o), AITER_PROBE_OK);
	assert_non_null(m);
	return m;
}

static void expect_scan_fails(const aiter_probe_scan_options *o, int code, const char *message)
{
	aiter_probe_manifest *m = (aiter_probe_manifest *)1;

	assert_int_equal(aiter_probe_scan(&m, o), code);
	assert_null(m);
	assert_string_equal(aiter_probe_last_error(), message);
}

static void test_answers(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	aiter_probe_manifest *native, *missing;
	const char *status = NULL, *reason = NULL;
	int launch_heads = 0;

	o.aiter_root = FIXTURES "h24-native";
	native = scan_ok(&o);
	o.aiter_root = FIXTURES "h24-missing";
	missing = scan_ok(&o);
	assert_int_equal(aiter_probe_manifest_supported(native, "mla.decode.native_h24"), 1);
	assert_int_equal(aiter_probe_manifest_supported(missing, "mla.decode.native_h24"), 0);
	assert_int_equal(aiter_probe_manifest_mla_heads(native, 24, &launch_heads, NULL, NULL), 0);
	assert_int_equal(launch_heads, 24);
	assert_int_equal(aiter_probe_manifest_mla_heads(missing, 24, &launch_heads, NULL, NULL), 0);
	assert_int_equal(launch_heads, 32);
	/* launch is off unless asked for: static answers only. */
	assert_int_equal(aiter_probe_manifest_capability_launch(native, "mla.decode.native_h24",
	                                                        &status, &reason), 1);
	assert_string_equal(status, "skipped");
	assert_string_equal(reason, "launches disabled (--no-launch)");
	aiter_probe_manifest_free(native);
	aiter_probe_manifest_free(missing);
}

/* The manifest of the C API is the command's: one pipeline. */
static void test_same_as_the_command(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	aiter_probe_manifest *m;
	char *cli_path, *api_path, *cmd, *cli, *api, *text;

	o.aiter_root = FIXTURES "traps";
	o.host = "node-7";
	m = scan_ok(&o);
	assert_true(asprintf(&cli_path, "%s/cli.json", tmp) > 0);
	assert_true(asprintf(&api_path, "%s/api.json", tmp) > 0);
	assert_true(asprintf(&cmd, "'%s/aiter-probe' scan --aiter-root '%s' --no-launch "
	                     "--host node-7 -o '%s'", AP_BUILDDIR, o.aiter_root, cli_path) > 0);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(aiter_probe_manifest_write(m, api_path), AITER_PROBE_OK);
	cli = slurp(cli_path);
	api = slurp(api_path);
	assert_string_equal(api, cli);
	text = aiter_probe_manifest_json(m);
	assert_non_null(text);
	assert_string_equal(text, cli);
	free(text);
	free(cli);
	free(api);
	free(cmd);
	free(cli_path);
	free(api_path);
	aiter_probe_manifest_free(m);
}

static void test_extra_packs(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	const char *packs[1];
	aiter_probe_manifest *m;
	char *pack, *dir, *message;

	assert_true(asprintf(&dir, "%s/tree", tmp) > 0);
	assert_true(asprintf(&pack, "%s/own.yaml", tmp) > 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	write_text(pack, "rules:\n  - id: own.readme\n    file: README\n    literal: \"x\"\n");
	own_pack(&o, packs, dir, pack);
	m = scan_ok(&o);
	assert_int_equal(aiter_probe_manifest_rule_count(m), 1);
	assert_string_equal(aiter_probe_manifest_rule_status(m, "own.readme"), "missing");
	aiter_probe_manifest_free(m);

	write_text(pack, "rules:\n  - id: own.readme\n    fiel: README\n");
	m = (aiter_probe_manifest *)1;
	assert_int_equal(aiter_probe_scan(&m, &o), AITER_PROBE_ERROR);
	assert_null(m);
	assert_true(asprintf(&message, "%s:3:5: unknown key 'fiel' in rule (allowed: ", pack) > 0);
	assert_memory_equal(aiter_probe_last_error(), message, strlen(message));
	free(message);
	free(pack);
	free(dir);
}

static void test_refusals(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	char *empty, *message;

	assert_int_equal(aiter_probe_scan(NULL, &o), AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(), "aiter_probe_scan: out is NULL");

	o.version = 99;
	expect_scan_fails(&o, AITER_PROBE_INVALID,
	                  "aiter_probe_scan: options of version 99, this library knows versions 1 "
	                  "to 4");
	o.version = AITER_PROBE_SCAN_OPTIONS_VERSION;

	o.rule_path_count = 2;
	expect_scan_fails(&o, AITER_PROBE_INVALID,
	                  "aiter_probe_scan: rule_paths is NULL with rule_path_count 2");
	o.rule_path_count = 0;

	assert_true(asprintf(&empty, "%s/empty", tmp) > 0);
	assert_int_equal(mkdir(empty, 0755), 0);
	o.aiter_root = empty;
	assert_true(asprintf(&message, "%s is not an AITER tree: none of the 66 paths the rules "
	                     "read is there (the root is the folder that holds the aiter package, "
	                     "or a checkout)", empty) > 0);
	expect_scan_fails(&o, AITER_PROBE_ERROR, message);
	free(message);

	o.aiter_root = FIXTURES "h24-native";
	o.devices = "0;1";
	o.launch = 1;
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "devices takes 'all' or indices like 0,1, not '0;1'");
	o.devices = NULL;
	o.launch = 0;
	o.host = "";
	expect_scan_fails(&o, AITER_PROBE_ERROR, "the host needs a name of 1 to 255 bytes");
	o.host = NULL;
	o.max_file_size = ((size_t)1 << 40) + 1;
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "the largest file size is 1099511627776 bytes, not 1099511627777");
	o.max_file_size = 0;
	o.launch_timeout = -1;
	expect_scan_fails(&o, AITER_PROBE_ERROR, "the launch time limit must be positive");
	o.launch_timeout = 0;
	o.python_version = "3";
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "the python version takes X.Y or X.Y.Z (such as 3.12), not '3'");
	o.python = "/usr/bin/python3";
	o.python_version = "3.12";
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "the python and the python version cannot both be given");
	o.python_version = NULL;
	o.python = "/nonexistent/python3";
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "the python: /nonexistent/python3: No such file or directory");
	o.python = NULL;
	free(empty);
}

/* Whether the caller's interpreter finds a module: triton yes, every
 * other no; each name asked is counted. */
static int finds_calls;
static int finds_triton(void *context, const char *module)
{
	finds_calls++;
	assert_ptr_equal(context, &finds_calls);
	return strcmp(module, "triton") == 0 ? 1 : strcmp(module, "no.answer") == 0 ? 7 : 0;
}

/* Facts given (version 3) decide what a run of python would, and nothing is
 * run: the manifest records them; facts the interpreter could not print
 * are refused; datadir says where the packs are. */
static void test_given_facts(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	aiter_probe_python_facts f = {"/opt/py/bin/python3", 3, 11, 2, "final", "linux", "posix",
	                              finds_triton, &finds_calls};
	const char *packs[1];
	aiter_probe_manifest *m;
	char *text, *empty, *message;

	one_module_tree(&o, packs, "given",
	                "import sys\ntry:\n    import triton\n    import no.answer\n"
	                "except ImportError:\n    pass\ntry:\n    import cutlass\n"
	                "except ImportError:\n    def g(): pass\n"
	                "if sys.platform == 'linux' and sys.version_info >= (3, 11):\n"
	                "    def f(a, new=1): pass\nelse:\n    def f(a): pass\n",
	                "rules:\n  - id: f.new\n    file: aiter/mla.py\n    python-def: f\n"
	                "    params: [new]\n  - id: g\n    file: aiter/mla.py\n"
	                "    python-def: g\n");
	/* no interpreter is run: one named would fail */
	setenv("AITER_PROBE_PYTHON", AP_SRCDIR "/no-such-python", 1);
	o.python_facts = &f;
	/* A scan in process that runs no interpreter leaves the caller's
	 * descriptors alone: fd 0 is the server's, not a child's pipe. */
	if (fcntl(0, F_GETFD) < 0)
		assert_int_equal(open("/dev/null", O_RDONLY), 0);
	m = scan_ok(&o);
	assert_int_not_equal(fcntl(0, F_GETFD), -1);
	assert_string_equal(aiter_probe_manifest_rule_status(m, "f.new"), "matched");
	assert_string_equal(aiter_probe_manifest_rule_status(m, "g"), "matched");
	text = aiter_probe_manifest_json(m);
	assert_non_null(strstr(text, "\"python\": {\n    \"executable\": \"/opt/py/bin/python3\",\n"
	                             "    \"version\": \"3.11.2\",\n"
	                             "    \"releaselevel\": \"final\",\n"
	                             "    \"platform\": \"linux\",\n"
	                             "    \"finds\": {\n      \"triton\": true,\n"
	                             "      \"cutlass\": false\n    }\n  }"));
	free(text);
	aiter_probe_manifest_free(m);
	assert_int_equal(finds_calls, 3);
	f.platform = "win32";
	f.executable = NULL;
	f.finds = NULL;
	m = scan_ok(&o);
	assert_string_equal(aiter_probe_manifest_rule_status(m, "f.new"), "unmatched");
	text = aiter_probe_manifest_json(m);
	assert_non_null(strstr(text, "\"python\": {\n    \"executable\": null,\n"));
	free(text);
	aiter_probe_manifest_free(m);
	assert_int_equal(finds_calls, 3);
	unsetenv("AITER_PROBE_PYTHON");

	f.releaselevel = "gamma";
	expect_scan_fails(&o, AITER_PROBE_ERROR, "the python's facts: its releaselevel is none of "
	                  "alpha, beta, candidate, final");
	f.releaselevel = "final";
	f.os_name = "po six";
	expect_scan_fails(&o, AITER_PROBE_ERROR, "the python's facts: its os_name is no word of "
	                  "at most 64 letters, digits and ._+-");
	f.os_name = "posix";
	f.micro = 10000;
	expect_scan_fails(&o, AITER_PROBE_ERROR, "the python's facts: its version 3.11.10000 has "
	                  "a part outside 0 to 9999");
	f.micro = 2;
	f.executable = "/a\nb";
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "the python's facts: its executable holds a control byte");
	f.executable = NULL;
	o.python_version = "3.12";
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "the python's facts cannot be given with the python or its version");
	o.python_version = NULL;
	/* Options of version 2 have neither field: what lies there is not read. */
	o.version = 2;
	o.python_version = "3.12";
	m = scan_ok(&o);
	aiter_probe_manifest_free(m);
	o.version = AITER_PROBE_SCAN_OPTIONS_VERSION;
	o.python_version = NULL;
	o.python_facts = NULL;

	free((char *)o.aiter_root);
	free((char *)packs[0]);

	/* datadir before $AITER_PROBE_DATADIR */
	assert_true(asprintf(&empty, "%s/no-packs", tmp) > 0);
	assert_int_equal(mkdir(empty, 0755), 0);
	o = (aiter_probe_scan_options)AITER_PROBE_SCAN_OPTIONS_INIT;
	o.aiter_root = FIXTURES "h24-native";
	o.python_version = "3.12";
	o.datadir = empty;
	assert_true(asprintf(&message, "no rule packs in %s (set AITER_PROBE_DATADIR, or pass "
	                     "--rules PATH)", empty) > 0);
	expect_scan_fails(&o, AITER_PROBE_ERROR, message);
	free(message);
	setenv("AITER_PROBE_DATADIR", empty, 1);
	o.datadir = AP_SRCDIR;
	m = scan_ok(&o);
	assert_int_equal(aiter_probe_manifest_supported(m, "mla.decode.native_h24"), 1);
	aiter_probe_manifest_free(m);
	setenv("AITER_PROBE_DATADIR", AP_SRCDIR, 1);
	free(empty);
}

/* The facts of the interpreter the caller names decide the tree's version
 * conditions, and the manifest records them; options of version 1, which
 * have no python_version, are read as before. */
static void test_python_facts(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	const char *packs[1];
	aiter_probe_manifest *m;
	char *text;

	one_module_tree(&o, packs, "versioned",
	                "import sys\nif sys.version_info >= (3, 10):\n    def f(a, new=1): pass\n"
	                "else:\n    def f(a): pass\n",
	                "rules:\n  - id: f.new\n    file: aiter/mla.py\n    python-def: f\n"
	                "    params: [new]\n");
	o.python_version = "3.9";
	m = scan_ok(&o);
	assert_string_equal(aiter_probe_manifest_rule_status(m, "f.new"), "unmatched");
	text = aiter_probe_manifest_json(m);
	assert_non_null(strstr(text, "\"python\": {\n    \"executable\": null,\n"
	                             "    \"version\": \"3.9\"\n  }"));
	free(text);
	aiter_probe_manifest_free(m);
	o.python_version = "3.12";
	m = scan_ok(&o);
	assert_string_equal(aiter_probe_manifest_rule_status(m, "f.new"), "matched");
	aiter_probe_manifest_free(m);
	/* A caller of version 1 has no python_version: what lies there is not read. */
	o.version = 1;
	o.python_version = "not read";
	setenv("AITER_PROBE_PYTHON", AP_SRCDIR "/no-such-python", 1);
	expect_scan_fails(&o, AITER_PROBE_ERROR,
	                  "cannot ask " AP_SRCDIR "/no-such-python for its facts: No such file or "
	                  "directory (name the interpreter that will run the server with --python "
	                  "PATH, or its version with --python-version X.Y)");
	unsetenv("AITER_PROBE_PYTHON");
	free((char *)o.aiter_root);
	free((char *)packs[0]);
}

/* With launch set, the scan cross-checks on this node's GPUs, as the
 * command does; without a GPU build or a GPU the launch says why it was
 * skipped (the case is then run on a GPU node: README, GPU cross-check). */
static void test_launch(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	const char *status = NULL, *reason = NULL;
	aiter_probe_manifest *m;
	char *launcher;

	assert_true(asprintf(&launcher, "%s/aiter-probe-launcher", AP_BUILDDIR) > 0);
	if (access(launcher, X_OK) != 0) {
		free(launcher);
		print_message("no GPU build: the launch case needs one\n");
		skip();
	}
	setenv("AITER_PROBE_LAUNCHER", launcher, 1);
	free(launcher);
	o.aiter_root = AP_SRCDIR "/sample/aiter-root";
	o.launch = 1;
	m = scan_ok(&o);
	assert_int_equal(aiter_probe_manifest_capability_launch(m, "mla.decode.native_h24",
	                                                        &status, &reason), 1);
	unsetenv("AITER_PROBE_LAUNCHER");
	if (strcmp(status, "skipped") == 0) {
		print_message("launch skipped: %s\n", reason);
		aiter_probe_manifest_free(m);
		skip();
	}
	assert_string_equal(status, "passed");
	assert_int_equal(aiter_probe_manifest_supported(m, "mla.decode.native_h24"), 1);
	aiter_probe_manifest_free(m);
}

static void test_serialise_refusals(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	aiter_probe_manifest *m;
	char *message;

	assert_null(aiter_probe_manifest_json(NULL));
	assert_string_equal(aiter_probe_last_error(), "aiter_probe_manifest_json: m is NULL");
	o.aiter_root = FIXTURES "h24-native";
	m = scan_ok(&o);
	assert_int_equal(aiter_probe_manifest_write(m, NULL), AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(), "aiter_probe_manifest_write: path is NULL");
	/* A folder at the path is left as it is. */
	assert_int_equal(aiter_probe_manifest_write(m, tmp), AITER_PROBE_ERROR);
	assert_true(asprintf(&message, "cannot write the manifest to %s: not a regular file",
	                     tmp) > 0);
	assert_string_equal(aiter_probe_last_error(), message);
	free(message);
	aiter_probe_manifest_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_same_as_the_command),
		cmocka_unit_test(test_extra_packs),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_python_facts),
		cmocka_unit_test(test_given_facts),
		cmocka_unit_test(test_launch),
		cmocka_unit_test(test_serialise_refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
