/* SPDX-License-Identifier: MIT */
/* What the C API's files share: a manifest object is made in one place,
 * whether it was read from a file (api.c) or scanned (scan.c). */
#ifndef AP_CAPI_H
#define AP_CAPI_H

#include <jansson.h>

#include "aiter-probe.h"

/* *out = a manifest holding doc (checked by the core's reader, or built by
 * the engine's writer), which it takes over, freeing it when it fails:
 * AITER_PROBE_OK or AITER_PROBE_OUT_OF_MEMORY, the message naming path. */
int ap_capi_manifest_new(json_t *doc, const char *path, aiter_probe_manifest **out);

/* The document behind m, for serialising it. */
const json_t *ap_capi_manifest_doc(const aiter_probe_manifest *m);

#endif
