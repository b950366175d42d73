/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a manifest file. The reader must load
 * it or refuse it with a message. A manifest it accepts is then verified
 * against a small tree of our own (its aiter.root replaced) holding a file, a
 * folder, a FIFO and symlinks leading inside and outside, so that no input
 * path a manifest names makes verify read outside that tree or block. */
#include "config.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f;
	json_t *m;

	if (work_dir == NULL)
		make_tree();
	f = fopen(manifest_path, "wb");
	must(f != NULL && fwrite(data, 1, size, f) == size && fclose(f) == 0, manifest_path);
	if (ap_manifest_read_file(manifest_path, &m) == 0) {
		verify_in_tree(m);
		json_decref(m);
	}
	ap_error_clear();
	return 0;
}
