/* SPDX-License-Identifier: MIT */
/* What the C API's files share: a manifest object is made in one place,
 * whether it was read from a file (api.c) or scanned (scan.c). */
#ifndef AP_CAPI_H
#define AP_CAPI_H

#include <jansson.h>

#include "aiter-probe.h"

/* Takes doc over: a manifest checked by the core's reader, or built by the
 * engine's writer. */
aiter_probe_manifest *ap_capi_manifest_new(json_t *doc);

/* The document behind m, for serialising it. */
const json_t *ap_capi_manifest_doc(const aiter_probe_manifest *m);

#endif
