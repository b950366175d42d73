/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a manifest file. The reader must load
 * it or refuse it with a message. A manifest it accepts is then read through
 * every accessor of the C API, which trusts the reader's checks and makes
 * none of its own; and verified against a small tree of our own (its
 * aiter.root replaced) holding a file, a folder, a FIFO and symlinks leading
 * inside and outside, so that no input path a manifest names makes verify
 * read outside that tree or block. */
#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aiter-probe.h"
#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "core/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *work_dir;
static char *manifest_path;
static char *root_dir;

static void must(int ok, const char *what)
{
	if (!ok) {
		perror(what);
		abort();
	}
}

/* Creates root/rel as kind: 'd' folder, 'f' file holding arg, 'p' FIFO,
 * 'l' symlink to arg. */
static void make_entry(char kind, const char *rel, const char *arg)
{
	char *path = ap_xasprintf("%s/%s", root_dir, rel);
	FILE *f;

	switch (kind) {
	case 'd':
		must(mkdir(path, 0755) == 0, path);
		break;
	case 'f':
		f = fopen(path, "w");
		must(f != NULL && fputs(arg, f) >= 0 && fclose(f) == 0, path);
		break;
	case 'p':
		must(mkfifo(path, 0644) == 0, path);
		break;
	case 'l':
		must(symlink(arg, path) == 0, path);
		break;
	}
	free(path);
}

static void remove_tree(void)
{
	char *cmd = ap_xasprintf("rm -rf '%s'", work_dir);

	if (system(cmd) != 0)
		fprintf(stderr, "fuzz-manifest: could not remove %s\n", work_dir);
	free(cmd);
}

static void make_tree(void)
{
	char tmpl[] = "/tmp/ap-fuzz-manifest.XXXXXX";

	must(mkdtemp(tmpl) != NULL, "mkdtemp");
	work_dir = ap_xstrdup(tmpl);
	manifest_path = ap_xasprintf("%s/m.json", work_dir);
	root_dir = ap_xasprintf("%s/root", work_dir);
	must(mkdir(root_dir, 0755) == 0, root_dir);
	make_entry('d', "csrc", NULL);
	make_entry('d', "csrc/kernels", NULL);
	make_entry('f', "csrc/kernels/reduce.cu", "int reduce;\n");
	make_entry('f', "csrc/kernels/empty.cuh", "");
	make_entry('p', "csrc/kernels/fifo.cu", NULL);
	make_entry('l', "csrc/kernels/inside.cu", "reduce.cu");
	make_entry('l', "csrc/kernels/outside.cu", "../../../m.json");
	make_entry('l', "csrc/kernels/loop.cu", "loop.cu");
	atexit(remove_tree);
}

static void verify_in_tree(json_t *m)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;

	json_object_set_new(json_object_get(m, "aiter"), "root", json_string(root_dir));
	if (ap_verify_manifest(m, "m.json", &res) == 0)
		free(ap_verify_describe(&res));
	ap_verify_result_free(&res);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-manifest: %s\n", what);
		__builtin_trap();
	}
}

static void consume_rules(const aiter_probe_manifest *am, const json_t *m)
{
	static const char *const statuses[] = {"matched", "unmatched", "missing", "error", "unknown"};
	size_t n = aiter_probe_manifest_rule_count(am);

	for (size_t i = 0; i < n; i++) {
		const char *id = aiter_probe_manifest_rule_id(am, i);
		const char *status = aiter_probe_manifest_rule_status(am, id);
		const json_t *matches = json_object_get(json_object_get(json_object_get(m, "rules"), id),
		                                        "matches");
		size_t nmatches = aiter_probe_manifest_rule_matches(am, id);
		bool known = false;

		check(status != NULL, "a rule without a status");
		for (size_t k = 0; k < sizeof statuses / sizeof statuses[0]; k++)
			known |= strcmp(status, statuses[k]) == 0;
		check(known, "a rule status the reader should have refused");
		check(nmatches == json_array_size(matches), "the C API counts other matches");
		for (size_t j = 0; j < nmatches; j++) {
			const char *name;
			json_t *v;
			json_object_foreach(json_object_get(json_array_get(matches, j), "captures"), name,
			                    v) {
				const char *got = aiter_probe_manifest_rule_capture(am, id, j, name);
				check(got != NULL && strcmp(got, json_string_value(v)) == 0,
				      "the C API gives another capture");
			}
		}
		(void)aiter_probe_manifest_rule_capture(am, id, nmatches, "x");
	}
	check(aiter_probe_manifest_rule_id(am, n) == NULL, "a rule id past the end");
}

static void consume_capabilities(const aiter_probe_manifest *am)
{
	size_t n = aiter_probe_manifest_capability_count(am);

	for (size_t i = 0; i < n; i++) {
		const char *id = aiter_probe_manifest_capability_id(am, i);
		size_t nev = aiter_probe_manifest_capability_evidence_count(am, id);
		const char *status, *reason;
		int yes = aiter_probe_manifest_supported(am, id);

		check(yes == 0 || yes == 1, "a capability neither supported nor not");
		(void)aiter_probe_manifest_capability_reason(am, id);
		for (size_t j = 0; j <= nev; j++)
			(void)aiter_probe_manifest_capability_evidence(am, id, j);
		check(aiter_probe_manifest_capability_launch(am, id, &status, &reason) >= 0,
		      "a listed capability is unknown");
	}
	check(aiter_probe_manifest_capability_id(am, n) == NULL, "a capability id past the end");
}

/* The reader keeps every plan row to what the head maps need: heads and
 * launch heads from 1 to AITER_PROBE_MLA_MAX_HEADS, and maps inside them. */
static void consume_plans(const aiter_probe_manifest *am)
{
	int pad[AITER_PROBE_MLA_MAX_HEADS], unpad[AITER_PROBE_MLA_MAX_HEADS];
	size_t n = aiter_probe_manifest_mla_plan_count(am);

	for (size_t i = 0; i < n; i++) {
		int heads, launch, verified;
		const char *mode;

		check(aiter_probe_manifest_mla_plan_row(am, i, &heads, &launch, &mode, &verified) ==
		              AITER_PROBE_OK,
		      "a plan row not there");
		check(heads >= 1 && heads <= AITER_PROBE_MLA_MAX_HEADS && launch >= 1 &&
		              launch <= AITER_PROBE_MLA_MAX_HEADS && mode != NULL,
		      "a plan row the reader should have refused");
		/* The first row for these heads decides, as the C API reads it. */
		check(aiter_probe_manifest_mla_heads(am, heads, &launch, NULL, NULL) == AITER_PROBE_OK,
		      "a plan row not found by its heads");
		check(aiter_probe_manifest_mla_head_maps(am, heads, pad, AITER_PROBE_MLA_MAX_HEADS,
		                                          unpad, AITER_PROBE_MLA_MAX_HEADS) ==
		              AITER_PROBE_OK,
		      "no head maps for a plan row");
		for (int j = 0; j < launch; j++)
			check(pad[j] >= 0 && pad[j] < heads, "a pad source outside the real heads");
		for (int h = 0; h < heads; h++)
			check(unpad[h] >= 0 && unpad[h] < launch, "an unpad index outside the launch");
	}
}

static void consume(const json_t *m)
{
	aiter_probe_manifest *am;

	check(aiter_probe_manifest_open(&am, manifest_path, 0) == AITER_PROBE_OK,
	      "the C API refuses what the reader accepts");
	consume_rules(am, m);
	consume_capabilities(am);
	consume_plans(am);
	aiter_probe_manifest_free(am);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f;
	json_t *m;

	if (work_dir == NULL)
		make_tree();
	f = fopen(manifest_path, "wb");
	must(f != NULL && fwrite(data, 1, size, f) == size && fclose(f) == 0, manifest_path);
	if (ap_manifest_read_file(manifest_path, &m) == 0) {
		consume(m);
		verify_in_tree(m);
		json_decref(m);
	}
	ap_error_clear();
	return 0;
}
