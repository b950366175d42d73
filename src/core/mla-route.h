/* SPDX-License-Identifier: MIT */
/* MLA head routing: the head count a serving backend launches for a real
 * one, how it pads between them, and which launches split the KV alike.
 * Plain C without GPU headers, so that the manifest's writer and reader, the
 * C API, the launcher and the kernels all take it from this one place. */
#ifndef AP_MLA_ROUTE_H
#define AP_MLA_ROUTE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	AP_PAD_NONE,              /* launch heads == heads: passed through, no copy */
	AP_PAD_REPEAT_INTERLEAVE, /* heads divides 16: each q head repeated, output read strided */
	AP_PAD_TILE_SLICE,        /* q tiled up to the launch count, first `heads` outputs kept */
} ap_pad_mode;

#define AP_MLA_MAX_HEADS 128

/* Backends launch head counts in steps of this: a count that is not a
 * multiple of it is padded up to the next one. */
#define AP_MLA_HEAD_STEP 16

/* One stage-1 block covers at most this many heads; more heads take more
 * blocks over the same KV range, so the work metadata grows with the launch
 * head count. */
#define AP_MLA_HEADS_PER_BLOCK 32

const char *ap_pad_mode_name(ap_pad_mode mode);

/* The routing a serving backend applies: heads itself when native is true
 * (the capability says this head count runs natively) or heads is a multiple
 * of 16, else heads rounded up to a multiple of 16, with the padding mode. */
int ap_mla_launch_heads(int heads, bool native, ap_pad_mode *mode);

/* The padding that runs `heads` real heads as `launch_heads`: none when they
 * are equal, repeat-interleave when heads divides 16 and launch_heads, else
 * tile-slice. Negative AP_EINPUT when launch_heads < heads or either is out
 * of 1..AP_MLA_MAX_HEADS. */
int ap_mla_pad_mode(int heads, int launch_heads, ap_pad_mode *mode);

/* The index maps of running `heads` real heads as `launch_heads` in `mode`
 * (what ap_mla_pad_mode gives for them): pad_source[j] is the real head that
 * feeds launch head j (launch_heads entries), unpad[h] the launch head whose
 * output is real head h (heads entries). Either may be NULL. */
void ap_mla_head_maps(int heads, int launch_heads, ap_pad_mode mode, int *pad_source,
                      int *unpad);

/* The stage-1 blocks one KV range takes for `heads` launch heads:
 * ceil(heads / AP_MLA_HEADS_PER_BLOCK). */
int ap_mla_head_tiles(int heads);

/* Whether launches of heads_a and heads_b heads over the same sequences get
 * the same splits (the same number of head tiles). The kernels order each
 * head's arithmetic independently of the head count, so then a padded
 * launch's real heads equal the native launch's bit for bit. True for every
 * routing of ap_mla_launch_heads. */
bool ap_mla_same_split(int heads_a, int heads_b);

#ifdef __cplusplus
}
#endif

#endif
