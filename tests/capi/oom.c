/* SPDX-License-Identifier: MIT */
/* Out of memory through the C API: malloc, calloc and realloc are this
 * program's, and fail the Nth call once armed, for N = 1, 2, ... until a call
 * meets no failure. Every call that met one must return
 * AITER_PROBE_OUT_OF_MEMORY with a message saying so, and free all it had;
 * the calls after it must work. The library's allocations, jansson's and
 * libc's on its behalf (realpath, opendir) all come here. The scan in
 * process is swept too: it returns the same, keeping what it held. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "aiter-probe.h"

#define MANIFESTS AP_SRCDIR "/tests/manifests/"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(UNDER_ASAN)
int main(void)
{
	/* ASan's free would be handed blocks from glibc's allocator, which it
	 * refuses: the allocator cannot be interposed under it. */
	fputs("SKIP: malloc cannot be interposed under AddressSanitizer\n", stderr);
	return 77;
}
#else

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

/* Volatile: the compiler takes malloc for libc's, which reads none of them,
 * and would drop a store made before a call that ends in it. */
static volatile size_t calls, fail_at; /* fail_at 0: disarmed */
static volatile bool failed;
static volatile long live; /* blocks allocated and not freed */

static bool fail_now(void)
{
	if (fail_at == 0 || ++calls != fail_at)
		return false;
	failed = true;
	errno = ENOMEM;
	return true;
}

static void *counted(void *p)
{
	live += p != NULL;
	return p;
}

void *malloc(size_t n)
{
	return fail_now() ? NULL : counted(__libc_malloc(n));
}

void *calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : counted(__libc_calloc(n, size));
}

void *realloc(void *p, size_t n)
{
	void *q;

	if (fail_now())
		return NULL;
	q = __libc_realloc(p, n);
	/* glibc's realloc(p, 0) frees p. */
	live += (p == NULL && q != NULL) - (p != NULL && n == 0 && q == NULL);
	return q;
}

void free(void *p)
{
	live -= p != NULL;
	__libc_free(p);
}

/* A scratch folder with a copy of the tree the test manifests describe,
 * good.json and stale.json pointed at it, and good.json saved where
 * aiter_probe_manifest_for_root looks. */
static char dir[PATH_MAX], tree[PATH_MAX + 8], good[PATH_MAX + 16], stale[PATH_MAX + 16];
/* A small tree and a pack of two kinds over it, for the scan. */
static char scan_tree[PATH_MAX + 16], scan_pack[PATH_MAX + 16];

static int setup(void **state)
{
	char tmpl[] = "/tmp/ap-test-oom-XXXXXX", saved[PATH_MAX + 8], cmd[8 * PATH_MAX];
	char *path = NULL;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	/* Canonical, as a scan records the root. */
	assert_non_null(realpath(tmpl, dir));
	snprintf(tree, sizeof tree, "%s/tree", dir);
	snprintf(good, sizeof good, "%s/good.json", dir);
	snprintf(stale, sizeof stale, "%s/stale.json", dir);
	snprintf(saved, sizeof saved, "%s/saved", dir);
	snprintf(cmd, sizeof cmd,
	         "cp -R '%s/tree' '%s' && chmod -R u+w '%s' && mkdir '%s' && "
	         "for m in good stale; do sed 's|\"root\": \"/opt/aiter\"|\"root\": \"%s\"|' "
	         "'%s'$m.json >'%s'/$m.json; done",
	         MANIFESTS, tree, dir, saved, tree, MANIFESTS, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(scan_tree, sizeof scan_tree, "%s/scan-tree", dir);
	snprintf(scan_pack, sizeof scan_pack, "%s/pack.yaml", dir);
	snprintf(cmd, sizeof cmd,
	         "mkdir -p '%s/aiter' '%s/csrc' && "
	         "printf 'def mla_decode_fwd(q, kv, causal=False):\\n    pass\\n' "
	         ">'%s/aiter/mla.py' && printf 'if (num_heads == 24) {}\\n' >'%s/csrc/a.cu' && "
	         "printf 'rules:\\n  - id: a.h24\\n    file: csrc/a.cu\\n    token: "
	         "\"num_heads == 24\"\\n  - id: a.causal\\n    file: aiter/mla.py\\n"
	         "    python-def: mla_decode_fwd\\n' >'%s'",
	         scan_tree, scan_tree, scan_tree, scan_tree, scan_pack);
	assert_int_equal(system(cmd), 0);
	setenv("AITER_PROBE_MANIFEST_DIR", saved, 1);
	unsetenv("AITER_PROBE_MANIFEST");
	unsetenv("AITER_META_DIR");
	assert_int_equal(aiter_probe_manifest_default_path(tree, &path), AITER_PROBE_OK);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, path);
	free(path);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* What a backend asks an open manifest; none of it allocates. */
static void ask(const aiter_probe_manifest *m)
{
	static const int pad8[16] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};
	static const int unpad8[8] = {0, 2, 4, 6, 8, 10, 12, 14};
	int pad[AITER_PROBE_MLA_MAX_HEADS], unpad[AITER_PROBE_MLA_MAX_HEADS];
	int heads = 0, launch = 0, verified = -1;
	const char *status = NULL, *mode = NULL;

	assert_int_equal(aiter_probe_manifest_supported(m, "mla.decode.native_h24"), 1);
	assert_int_equal(aiter_probe_manifest_capability_count(m), 2);
	assert_string_equal(aiter_probe_manifest_capability_id(m, 1), "mla.decode.native_h24");
	assert_non_null(aiter_probe_manifest_capability_reason(m, "mla.decode.native_h24"));
	assert_string_equal(aiter_probe_manifest_capability_evidence(m, "mla.decode.native_h24", 0),
	                    "csrc/kernels/mla/reduce.cu:10");
	assert_int_equal(aiter_probe_manifest_capability_launch(m, "mla.decode.native_h24", &status,
	                                                        NULL), 1);
	assert_string_equal(status, "passed");
	assert_int_equal(aiter_probe_manifest_rule_count(m), 4);
	assert_string_equal(aiter_probe_manifest_rule_status(m, "mla.reduce.cases"), "matched");
	assert_string_equal(aiter_probe_manifest_rule_capture(m, "mla.reduce.cases", 2, "heads"),
	                    "24");
	assert_int_equal(aiter_probe_manifest_mla_heads(m, 24, &launch, &mode, &verified), 0);
	assert_int_equal(launch, 24);
	assert_string_equal(mode, "none");
	assert_int_equal(verified, 1);
	assert_int_equal(aiter_probe_manifest_mla_plan_count(m), 128);
	assert_int_equal(aiter_probe_manifest_mla_plan_row(m, 99, &heads, &launch, NULL, NULL),
	                 AITER_PROBE_OK);
	assert_int_equal(heads, 100);
	assert_int_equal(launch, 112);
	assert_int_equal(aiter_probe_manifest_mla_head_maps(m, 8, pad, 16, unpad, 8),
	                 AITER_PROBE_OK);
	assert_memory_equal(pad, pad8, sizeof pad8);
	assert_memory_equal(unpad, unpad8, sizeof unpad8);
}

/* rc, after asking m when the call that gave both succeeded; a call that
 * failed must have set m to NULL. */
static int asked(int rc, aiter_probe_manifest *m)
{
	if (rc != AITER_PROBE_OK) {
		assert_null(m);
		return rc;
	}
	ask(m);
	aiter_probe_manifest_free(m);
	return rc;
}

/* The calls swept, each returning what the C API returned. */
static int open_fresh(void)
{
	aiter_probe_manifest *m = (aiter_probe_manifest *)1;
	int rc = aiter_probe_manifest_open(&m, good, AITER_PROBE_VERIFY_FRESH);

	return asked(rc, m);
}

static int open_stale(void)
{
	aiter_probe_manifest *m = (aiter_probe_manifest *)1;
	int rc = aiter_probe_manifest_open(&m, stale, AITER_PROBE_VERIFY_FRESH);

	return asked(rc, m);
}

static int default_path(void)
{
	char *path = (char *)1;
	int rc = aiter_probe_manifest_default_path(tree, &path);

	if (rc != AITER_PROBE_OK)
		assert_null(path);
	free(path);
	return rc;
}

/* With $AITER_PROBE_MANIFEST naming stale.json too, as the sweep sets it. */
static int for_root(void)
{
	aiter_probe_manifest *m = (aiter_probe_manifest *)1;
	const char *reason = NULL;
	int rc = aiter_probe_manifest_for_root(&m, tree, &reason);

	if (rc == AITER_PROBE_OK)
		assert_null(reason);
	else
		assert_string_equal(reason, aiter_probe_last_error());
	return asked(rc, m);
}

/* The scan in process, with its own pack over the small tree. */
static int scan(void)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	const char *packs[] = {scan_pack};
	aiter_probe_manifest *m = (aiter_probe_manifest *)1;
	int rc;

	o.aiter_root = scan_tree;
	o.rule_paths = packs;
	o.rule_path_count = 1;
	o.no_default_rules = 1;
	o.host = "node";
	rc = aiter_probe_scan(&m, &o);
	if (rc != AITER_PROBE_OK) {
		assert_null(m);
		return rc;
	}
	assert_string_equal(aiter_probe_manifest_rule_status(m, "a.h24"), "matched");
	aiter_probe_manifest_free(m);
	return rc;
}

/* Fails allocation n = 1, 2, ... of call until call meets no failure and
 * returns want; how many allocations it made then (within the step).
 * leaks: what the call held when it failed may stay allocated (the scan,
 * interrupted by a jump back). */
static size_t sweep(const char *name, int (*call)(void), int want, bool leaks)
{
	/* A scan costs valgrind a second: there, one allocation in 25 fails. */
	size_t step = leaks && getenv("AP_OOM_AGAIN") != NULL ? 25 : 1;

	for (size_t n = 1;; n += step) {
		long before = live;
		int rc;

		calls = 0;
		failed = false;
		fail_at = n;
		rc = call();
		fail_at = 0;
		if (live != before && !leaks)
			fail_msg("%s, allocation %zu failing: %ld blocks left allocated", name, n,
			         live - before);
		if (!failed) {
			assert_int_equal(rc, want);
			return n - 1;
		}
		if (rc != AITER_PROBE_OUT_OF_MEMORY ||
		    strstr(aiter_probe_last_error(), "out of memory") == NULL)
			fail_msg("%s, allocation %zu failing: returned %d, \"%s\"", name, n, rc,
			         aiter_probe_last_error());
	}
}

static void test_every_allocation_fails_in_turn(void **state)
{
	static const struct {
		const char *name;
		int (*call)(void);
		int want;
		bool named; /* $AITER_PROBE_MANIFEST names stale.json */
		bool leaks;
	} sweeps[] = {
		{"aiter_probe_manifest_open (fresh)", open_fresh, AITER_PROBE_OK, false, false},
		{"aiter_probe_manifest_open (stale)", open_stale, AITER_PROBE_STALE, false, false},
		{"aiter_probe_manifest_default_path", default_path, AITER_PROBE_OK, false, false},
		{"aiter_probe_manifest_for_root", for_root, AITER_PROBE_OK, false, false},
		{"aiter_probe_manifest_for_root ($AITER_PROBE_MANIFEST)", for_root, AITER_PROBE_STALE,
		 true, false},
		{"aiter_probe_scan", scan, AITER_PROBE_OK, false, true},
	};
	size_t total = 0, n;

	(void)state;
	for (size_t i = 0; i < sizeof sweeps / sizeof sweeps[0]; i++) {
		/* setenv allocates: not in the calls swept. */
		if (sweeps[i].named)
			setenv("AITER_PROBE_MANIFEST", stale, 1);
		/* Once unarmed first, so that what libc and jansson set up on
		 * their first use is not counted as the call's. */
		assert_int_equal(sweeps[i].call(), sweeps[i].want);
		n = sweep(sweeps[i].name, sweeps[i].call, sweeps[i].want, sweeps[i].leaks);
		unsetenv("AITER_PROBE_MANIFEST");
		print_message("%s: %zu allocations, each failed in turn\n", sweeps[i].name, n);
		assert_true(n > 0);
		total += n;
	}
	print_message("%zu allocation points in all\n", total);
}

/* Whether this program's malloc is the one called. Valgrind puts its own in
 * place of every malloc it finds, this one included, unless told to replace
 * libc's alone: then the program runs again under it so told. */
static bool interposed(char *self)
{
	const char *wrapper = getenv("AP_WRAPPER");
	char *probe;

	calls = 0;
	fail_at = 1;
	probe = realpath("/", NULL);
	fail_at = 0;
	if (probe == NULL)
		return true;
	free(probe);
	if (wrapper == NULL || strstr(wrapper, "valgrind") == NULL ||
	    getenv("AP_OOM_AGAIN") != NULL)
		return false;
	setenv("AP_OOM_AGAIN", "1", 1);
	/* No leak check of valgrind's: an interrupted scan leaves what it held,
	 * as aiter_probe_scan says, and every other call's blocks are counted
	 * here (live). */
	execl("/bin/sh", "sh", "-c",
	      "exec $AP_WRAPPER --soname-synonyms=somalloc=nouserintercepts --leak-check=no "
	      "\"$0\"", self,
	      (char *)NULL);
	return false;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_allocation_fails_in_turn, setup,
		                                teardown),
	};

	(void)argc;
	if (!interposed(argv[0])) {
		fputs("FAIL: this program's malloc is not the one called\n", stderr);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
