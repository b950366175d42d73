/* SPDX-License-Identifier: MIT */
/* The engine's front door: a scan request in, a manifest out. Every caller
 * that scans a tree (the commands, the installed C API, the Python package
 * through it) runs this one pipeline: find the tree, load the packs, read,
 * evaluate, look for GPUs and launch, record the version and commit, build
 * the manifest. It prints nothing and exits nothing: a failure is a negative
 * AP_E* code with the message in ap_error_last(). */
#ifndef AP_SCAN_H
#define AP_SCAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/pytarget.h"
#include "engine/rules.h"

/* The largest --max-file-size: far above any source file, and low enough
 * that the reader's buffer arithmetic (cap + 1, doubling) cannot overflow. */
#define AP_SCAN_MAX_FILE_SIZE_LIMIT ((size_t)1 << 40)

typedef struct ap_scan_request {
	/* The folder holding the aiter package (or a checkout); NULL: found as
	 * AITER finds itself (engine/discover.h). */
	const char *aiter_root;
	/* aiter_root is the tree the caller imports (the C API): its meta
	 * folder follows $AITER_META_DIR as AITER's does. Else a root named on
	 * the command line is taken as named. */
	bool root_imported;
	/* The interpreter that will import AITER, which finds its package when
	 * aiter_root is NULL and gives the facts the tree's conditions and
	 * imports need (engine/pytarget.h); NULL: $AITER_PROBE_PYTHON, else
	 * python3. */
	const char *python;
	/* Instead, for the facts: its version alone, X.Y or X.Y.Z (the platform
	 * and the modules it finds are then not known). */
	const char *python_version;
	/* Or the facts themselves, given: nothing is run (engine/pytarget.h). */
	const ap_pytarget_given *python_given;
	/* Where the packs are (rules/, probes/); NULL: $AITER_PROBE_DATADIR,
	 * else the package data dir. */
	const char *datadir;
	/* Packs loaded after the installed ones (files or folders), in order. */
	const char *const *rules;
	size_t nrules;
	bool no_default_rules;
	bool no_launch;
	/* Record the manifest's `signatures` (engine/signatures.h): every public
	 * callable of the modules the packs name; off, none is resolved. */
	bool signatures;
	const char *devices;   /* NULL or "all", else indices such as "0,2" */
	double launch_timeout; /* seconds; 0: the launcher's default */
	size_t max_file_size;  /* bytes; 0: AP_READER_DEFAULT_MAX_BYTES */
	const char *host;      /* the manifest's "host"; NULL: the host name */
} ap_scan_request;

/* Whether list is what a request's devices may be: "all", or indices
 * such as "0,2". */
bool ap_scan_devices_valid(const char *list);

/* Loads the installed packs (rules/ and probes/ under datadir, when not
 * NULL, else $AITER_PROBE_DATADIR, else the package data dir) unless
 * no_defaults, then each extra path, and finishes the set. On failure *out
 * is NULL and the loader's message says where ("FILE:LINE:COLUMN: ..."). */
int ap_scan_load_rules(ap_ruleset **out, const char *datadir, const char *const *extra,
                       size_t nextra, bool no_defaults);

/* Runs the scan req describes and returns its manifest in *manifest (the
 * caller's reference). It checks the rule set in *rs when there is one, else
 * loads it (once the tree is found, so that a missing tree is the first
 * error) and leaves it in *rs for the caller to free: a caller that needs
 * the packs too reads them once. */
int ap_scan_tree(const ap_scan_request *req, ap_ruleset **rs, json_t **manifest);

#endif
