/* SPDX-License-Identifier: MIT */
/* How a serving backend routes MLA decode with a manifest instead of probing
 * AITER's sources: can H heads (24 unless told) run natively, why, and if
 * not, how many heads to launch and which query head feeds each launch head
 * and which launch head holds each real head's output.
 *
 *   cc route-heads.c $(pkg-config --cflags --libs aiter-probe) -o route-heads
 *   ./route-heads /var/lib/aiter-probe/manifest.json [HEADS]
 */
#include <stdio.h>
#include <stdlib.h>

#include <aiter-probe.h>

static void print_map(const char *what, const int *map, int n)
{
	printf("  %s:", what);
	for (int i = 0; i < n; i++)
		printf(" %d", map[i]);
	printf("\n");
}

static void print_capability(const aiter_probe_manifest *m, const char *id)
{
	const char *status, *reason;
	int supported = aiter_probe_manifest_supported(m, id);

	if (supported < 0) {
		printf("%s: not in the manifest\n", id);
		return;
	}
	printf("%s: %s, %s\n", id, supported ? "supported" : "not supported",
	       aiter_probe_manifest_capability_reason(m, id));
	for (size_t i = 0; i < aiter_probe_manifest_capability_evidence_count(m, id); i++)
		printf("  evidence %s\n", aiter_probe_manifest_capability_evidence(m, id, i));
	if (aiter_probe_manifest_capability_launch(m, id, &status, &reason) == 1)
		printf("  launch %s%s%s\n", status, reason ? ": " : "", reason ? reason : "");
}

int main(int argc, char **argv)
{
	int pad_source[AITER_PROBE_MLA_MAX_HEADS], unpad[AITER_PROBE_MLA_MAX_HEADS];
	aiter_probe_manifest *m;
	const char *mode;
	int heads = 24, launch_heads, verified;
	char capability[64];

	if (argc < 2 || argc > 3 || (argc == 3 && (heads = atoi(argv[2])) < 1)) {
		fprintf(stderr, "usage: %s MANIFEST [HEADS]\n", argv[0]);
		return 2;
	}
	if (aiter_probe_manifest_open(&m, argv[1], 0) != AITER_PROBE_OK) {
		fprintf(stderr, "route-heads: %s\n", aiter_probe_last_error());
		return 2;
	}
	if (aiter_probe_manifest_mla_heads(m, heads, &launch_heads, &mode, &verified) != 0 ||
	    aiter_probe_manifest_mla_head_maps(m, heads, pad_source, AITER_PROBE_MLA_MAX_HEADS, unpad,
	                                       AITER_PROBE_MLA_MAX_HEADS) != AITER_PROBE_OK) {
		fprintf(stderr, "route-heads: %s\n", aiter_probe_last_error());
		aiter_probe_manifest_free(m);
		return 2;
	}
	snprintf(capability, sizeof capability, "mla.decode.native_h%d", heads);
	print_capability(m, capability);
	printf("%d heads: launch %d heads, mode %s%s\n", heads, launch_heads, mode,
	       verified ? ", verified on this node" : "");
	print_map("q head of each launch head", pad_source, launch_heads);
	print_map("launch head of each output head", unpad, heads);
	aiter_probe_manifest_free(m);
	return 0;
}
