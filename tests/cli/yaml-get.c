/* SPDX-License-Identifier: MIT */
/* yaml-get FILE [PATH]...: parses FILE with the rule loader's YAML reader
 * (libyaml) and prints the scalar at each dotted PATH ("kind",
 * "spec.template.spec.containers.0.image"; a number indexes a sequence, a
 * key in brackets may hold dots: "metadata.labels.[app.kubernetes.io/name]").
 * Exit status: 0, 1 when a PATH is not a scalar there, 2 when FILE does not
 * parse. For tests of the YAML files the project ships (examples/deploy). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/yaml-node.h"

static const ap_ynode *child(const ap_ynode *n, const char *key, size_t len)
{
	size_t i;

	if (n->kind == AP_Y_SEQ) {
		char *end;
		unsigned long at = strtoul(key, &end, 10);
		return end == key + len && at < n->nkids ? n->kids[at] : NULL;
	}
	if (n->kind == AP_Y_MAP)
		for (i = 0; i + 1 < n->nkids; i += 2)
			if (n->kids[i]->len == len && memcmp(n->kids[i]->s, key, len) == 0)
				return n->kids[i + 1];
	return NULL;
}

int main(int argc, char **argv)
{
	ap_ynode *root = NULL;
	FILE *fp;
	ap_buf text = AP_BUF_INIT;
	char chunk[4096];
	size_t got;
	int i, rc = 0;

	if (argc < 2 || (fp = fopen(argv[1], "rb")) == NULL) {
		fprintf(stderr, "usage: yaml-get FILE [PATH]...\n");
		return 2;
	}
	while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0)
		ap_buf_append(&text, chunk, got);
	fclose(fp);
	if (ap_yaml_parse(&root, argv[1], text.data ? text.data : "", text.len) < 0 ||
	    root == NULL) {
		fprintf(stderr, "%s\n", root == NULL && text.len == 0 ? "empty" : ap_error_last());
		ap_buf_free(&text);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		const ap_ynode *n = root;
		const char *p = argv[i];
		while (n != NULL && *p != '\0') {
			/* "[amd.com/gpu]": a key with dots in it. */
			size_t skip = *p == '[', len = strcspn(p + skip, skip ? "]" : ".");
			n = child(n, p + skip, len);
			p += skip + len + skip;
			p += *p == '.';
		}
		if (n == NULL || n->kind != AP_Y_SCALAR) {
			fprintf(stderr, "%s: no scalar at %s\n", argv[1], argv[i]);
			rc = 1;
			continue;
		}
		fwrite(n->s, 1, n->len, stdout);
		fputc('\n', stdout);
	}
	ap_ynode_free(root);
	ap_buf_free(&text);
	return rc;
}
