/* SPDX-License-Identifier: MIT */
/* How a serving backend routes MLA decode with a manifest instead of probing
 * AITER's sources: can 24 heads run natively, and if not, how many heads to
 * launch and how to pad.
 *
 *   cc route-heads.c $(pkg-config --cflags --libs aiter-probe) -o route-heads
 *   ./route-heads /var/lib/aiter-probe/manifest.json
 */
#include <stdio.h>

#include <aiter-probe.h>

int main(int argc, char **argv)
{
	aiter_probe_manifest *m;
	const char *mode;
	int supported, launch_heads, verified;

	if (argc != 2) {
		fprintf(stderr, "usage: %s MANIFEST\n", argv[0]);
		return 2;
	}
	if (aiter_probe_manifest_open(&m, argv[1], 0) != AITER_PROBE_OK) {
		fprintf(stderr, "route-heads: %s\n", aiter_probe_last_error());
		return 2;
	}
	supported = aiter_probe_manifest_supported(m, "mla.decode.native_h24");
	if (aiter_probe_manifest_mla_heads(m, 24, &launch_heads, &mode, &verified) != 0) {
		fprintf(stderr, "route-heads: %s\n", aiter_probe_last_error());
		aiter_probe_manifest_free(m);
		return 2;
	}
	printf("mla.decode.native_h24: %s\n",
	       supported == 1 ? "supported" : supported == 0 ? "not supported" : "unknown");
	printf("24 heads: launch %d heads, mode %s%s\n", launch_heads, mode,
	       verified ? ", verified on this node" : "");
	aiter_probe_manifest_free(m);
	return 0;
}
