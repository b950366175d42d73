/* SPDX-License-Identifier: MIT */
/* The manifest's format constants, which its writer (the engine) and its
 * reader (the core) share: here in the core, which includes nothing of the
 * engine. */
#ifndef AP_MANIFEST_FORMAT_H
#define AP_MANIFEST_FORMAT_H

/* A schema is named AP_MANIFEST_SCHEMA_PREFIX and its major version, so that
 * a reader tells a newer manifest from something else. */
#define AP_MANIFEST_SCHEMA_PREFIX "aiter-probe.manifest/"
#define AP_MANIFEST_SCHEMA_MAJOR 1
/* The one this build writes and reads: the prefix and the major above. */
#define AP_MANIFEST_SCHEMA AP_MANIFEST_SCHEMA_PREFIX "1"

/* How a capability's reason begins when its verdict is unknown: input was
 * absent or unreadable, or a rule is `unknown` (what AITER does there is
 * known only by running it). Such a capability is unsupported, and readers
 * tell it apart from a no by this prefix (ap_manifest_cap_verdict). */
#define AP_CAP_UNKNOWN_PREFIX "unknown, so unsupported: "

/* The largest manifest the readers load, the same in the Python reader
 * (MANIFEST_MAX_BYTES): far above any real one (a 10,000-case scan writes a
 * few MB), and past it a path is refused unparsed, so /dev/zero or a runaway
 * file cannot exhaust memory. The writer never writes a larger one. */
#define AP_MANIFEST_MAX_BYTES ((size_t)64 << 20)

/* The longest "host" a manifest may name, in bytes (a DNS name's limit). */
#define AP_MANIFEST_HOST_MAX 255

#endif
