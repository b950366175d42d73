/* SPDX-License-Identifier: MIT */
/* The one manifest loader every consumer shares (diff, verify, the C API):
 * it parses the JSON, refuses any schema but aiter-probe.manifest/1, and
 * checks the keys and types consumers rely on, so they can then trust them. */
#ifndef AP_MANIFEST_READ_H
#define AP_MANIFEST_READ_H

#include <jansson.h>

/* Loads the manifest at path into *out (the caller's reference). Messages
 * name the path: "m.json:5:16: premature end of input near '\"'",
 * "m.json: schema 'aiter-probe.manifest/2' is newer than this reader
 * understands (aiter-probe.manifest/1)", "m.json: missing key 'aiter.root'".
 * AP_EIO when the file cannot be read, AP_EINPUT when it is no manifest v1,
 * AP_ENOMEM ("m.json: out of memory while parsing") when memory runs out. */
int ap_manifest_read_file(const char *path, json_t **out);

#endif
