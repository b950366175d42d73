/* Host-side planning for MLA decode, plain C shared by the engine (the head
 * routing table of the manifest) and the launcher (work and reduce metadata). */
#ifndef AP_MLA_PLAN_H
#define AP_MLA_PLAN_H

#include <stdbool.h>

typedef enum {
	AP_PAD_NONE,              /* launch heads == heads: passed through, no copy */
	AP_PAD_REPEAT_INTERLEAVE, /* heads divides 16: each q head repeated, output read strided */
	AP_PAD_TILE_SLICE,        /* q tiled up to the launch count, first `heads` outputs kept */
} ap_pad_mode;

#define AP_MLA_MAX_HEADS 128

const char *ap_pad_mode_name(ap_pad_mode mode);

/* The routing a serving backend applies: heads itself when native is true
 * (the capability says this head count runs natively) or heads is a multiple
 * of 16, else heads rounded up to a multiple of 16, with the padding mode. */
int ap_mla_launch_heads(int heads, bool native, ap_pad_mode *mode);

#endif
