/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stddef.h>

#include "core/ap-error.h"
#include "core/mla-route.h"

const char *ap_pad_mode_name(ap_pad_mode mode)
{
	switch (mode) {
	case AP_PAD_NONE:
		return "none";
	case AP_PAD_REPEAT_INTERLEAVE:
		return "repeat-interleave";
	case AP_PAD_TILE_SLICE:
		return "tile-slice";
	}
	return "unknown";
}

static bool heads_in_range(int heads)
{
	return heads >= 1 && heads <= AP_MLA_MAX_HEADS;
}

int ap_mla_pad_mode(int heads, int launch_heads, ap_pad_mode *mode)
{
	if (!heads_in_range(heads) || !heads_in_range(launch_heads) || launch_heads < heads) {
		ap_error_set("cannot run %d heads as %d: head counts must be 1..%d and the launch count "
		             "at least the real one", heads, launch_heads, AP_MLA_MAX_HEADS);
		return AP_EINPUT;
	}
	if (launch_heads == heads)
		*mode = AP_PAD_NONE;
	else if (AP_MLA_HEAD_STEP % heads == 0 && launch_heads % heads == 0)
		*mode = AP_PAD_REPEAT_INTERLEAVE;
	else
		*mode = AP_PAD_TILE_SLICE;
	return AP_OK;
}

int ap_mla_launch_heads(int heads, bool native, ap_pad_mode *mode)
{
	if (!heads_in_range(heads)) {
		ap_error_set("head count %d is outside 1..%d", heads, AP_MLA_MAX_HEADS);
		return AP_EINPUT;
	}
	int launch_heads = heads;
	if (!native && heads % AP_MLA_HEAD_STEP != 0)
		launch_heads = (heads / AP_MLA_HEAD_STEP + 1) * AP_MLA_HEAD_STEP;
	int rc = ap_mla_pad_mode(heads, launch_heads, mode);
	return rc < 0 ? rc : launch_heads;
}

static int pad_source_of(int heads, int launch_heads, ap_pad_mode mode, int j)
{
	switch (mode) {
	case AP_PAD_REPEAT_INTERLEAVE:
		return j / (launch_heads / heads);
	case AP_PAD_TILE_SLICE:
		return j % heads;
	case AP_PAD_NONE:
		break;
	}
	return j;
}

static int unpad_index_of(int heads, int launch_heads, ap_pad_mode mode, int h)
{
	if (mode == AP_PAD_REPEAT_INTERLEAVE)
		return h * (launch_heads / heads);
	return h;
}

void ap_mla_head_maps(int heads, int launch_heads, ap_pad_mode mode, int *pad_source,
                      int *unpad)
{
	for (int j = 0; pad_source != NULL && j < launch_heads; j++)
		pad_source[j] = pad_source_of(heads, launch_heads, mode, j);
	for (int h = 0; unpad != NULL && h < heads; h++)
		unpad[h] = unpad_index_of(heads, launch_heads, mode, h);
}

int ap_mla_head_tiles(int heads)
{
	return (heads + AP_MLA_HEADS_PER_BLOCK - 1) / AP_MLA_HEADS_PER_BLOCK;
}

bool ap_mla_same_split(int heads_a, int heads_b)
{
	return ap_mla_head_tiles(heads_a) == ap_mla_head_tiles(heads_b);
}
