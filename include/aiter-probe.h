/* SPDX-License-Identifier: MIT */
/* aiter-probe: scan an AITER tree, and read capability manifests, from C
 * and C++.
 *
 *	aiter_probe_manifest *m;
 *	if (aiter_probe_manifest_open(&m, "manifest.json", AITER_PROBE_VERIFY_FRESH) != 0) {
 *		fprintf(stderr, "%s\n", aiter_probe_last_error());
 *		return -1;
 *	}
 *	if (aiter_probe_manifest_supported(m, "mla.decode.native_h24") == 1)
 *		...
 *	aiter_probe_manifest_free(m);
 *
 * or, with no manifest on disk, scan the tree in process (aiter_probe_scan):
 *
 *	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
 *	o.aiter_root = "/opt/venv/lib/python3.12/site-packages";
 *	if (aiter_probe_scan(&m, &o) != 0) ...
 *
 * Conventions, the same for every function:
 * - A function returning int returns AITER_PROBE_OK (0) on success, or 1/0
 *   where it answers a question (documented with it), and a negative
 *   AITER_PROBE_* code on failure.
 * - A function returning a pointer returns NULL on failure.
 * - A function returning a count (size_t) returns 0 on failure; an unknown
 *   id then also fails the id's other accessors (NULL or a negative code),
 *   which is how a caller tells it from an empty list.
 * - Every failure leaves a message for aiter_probe_last_error() (per
 *   thread, until the thread's next failure): "unknown capability 'x'",
 *   "capability 'x' has 2 evidence entries, no entry 2",
 *   "aiter_probe_manifest_supported: capability is NULL".
 * - What is asked for and not in the manifest (an unknown capability or
 *   rule id, an index past the end, a head count without a plan row) is
 *   AITER_PROBE_UNKNOWN, except in the two ABI 1 functions that return -1
 *   for it (aiter_probe_manifest_supported, aiter_probe_manifest_mla_heads).
 * - A NULL manifest or id is AITER_PROBE_INVALID (NULL, 0); output pointers
 *   documented as optional may be NULL.
 * - The library never aborts or exits the process. When memory runs out,
 *   the function that allocates (aiter_probe_manifest_open,
 *   aiter_probe_manifest_for_root, aiter_probe_manifest_default_path; the
 *   accessors allocate nothing) frees what it had made and returns
 *   AITER_PROBE_OUT_OF_MEMORY, its message saying what it was doing:
 *   "m.json: out of memory (asked for 65536 bytes)". The call can be made
 *   again later. aiter_probe_scan returns it too, but keeps what the
 *   interrupted scan held (the engine does not unwind): a process out of
 *   memory should not scan in a loop.
 * - Ids and indexes follow the manifest's order (the order of its keys).
 * - Strings returned belong to the manifest and stay valid until
 *   aiter_probe_manifest_free; buffers are the caller's, sized as each
 *   function says (AITER_PROBE_MLA_MAX_HEADS entries always suffice).
 * A manifest may be read from several threads at once. Link with
 * `pkg-config --libs aiter-probe`. */
#ifndef AITER_PROBE_H
#define AITER_PROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *aiter_probe_version(void);

/* A loaded manifest (schema aiter-probe.manifest/1). */
typedef struct aiter_probe_manifest aiter_probe_manifest;

/* aiter_probe_manifest_open flags. */
#define AITER_PROBE_VERIFY_FRESH 0x1u /* re-hash the recorded inputs; refuse a stale manifest */

/* Results. */
#define AITER_PROBE_OK 0
#define AITER_PROBE_ERROR (-1) /* unreadable, not JSON, other schema, missing keys, bad flags,
                                  a plan row the manifest's own rules contradict */
#define AITER_PROBE_STALE (-2) /* VERIFY_FRESH: an input changed, vanished or appeared */
#define AITER_PROBE_UNKNOWN (-3) /* no such capability, rule, index or plan row */
#define AITER_PROBE_INVALID (-4) /* a NULL manifest, id or required pointer */
#define AITER_PROBE_SHORT_BUFFER (-5) /* a caller's buffer holds fewer entries than needed */
#define AITER_PROBE_MISSING (-6) /* aiter_probe_manifest_for_root: no manifest where it looked */
#define AITER_PROBE_OUT_OF_MEMORY (-7) /* an allocation failed; nothing was kept */

/* Loads the manifest at path into *out. Returns AITER_PROBE_OK, or another
 * result (AITER_PROBE_INVALID when out or path is NULL) with *out NULL and aiter_probe_last_error() saying why, e.g.
 * "m.json: schema 'aiter-probe.manifest/2' is newer than this reader
 * understands (aiter-probe.manifest/1)" or
 * "m.json: stale: csrc/kernels/mla/reduce.cu changed". Only a manifest no
 * one but the reading user and root could have written is read: the file
 * and its folder owned by either, neither writable by group or others,
 * neither a symlink ("m.json: not trusted: its folder /srv/shared is
 * writable by others"). */
int aiter_probe_manifest_open(aiter_probe_manifest **out, const char *path, unsigned flags);

/* 1 supported, 0 not supported, -1 no such capability in the manifest. Not
 * supported is a no (a rule did not match) or unknown (an input was absent
 * or unreadable, or a rule is "unknown"): the reason of an unknown one
 * begins "unknown, so unsupported: ". */
int aiter_probe_manifest_supported(const aiter_probe_manifest *m, const char *capability);

/* How many capabilities the manifest has, and the id of capability i (from
 * 0), NULL past the end:
 *	for (size_t i = 0; i < aiter_probe_manifest_capability_count(m); i++)
 *		puts(aiter_probe_manifest_capability_id(m, i)); */
size_t aiter_probe_manifest_capability_count(const aiter_probe_manifest *m);
const char *aiter_probe_manifest_capability_id(const aiter_probe_manifest *m, size_t i);

/* Why the capability is (not) supported, in words; NULL for an unknown one. */
const char *aiter_probe_manifest_capability_reason(const aiter_probe_manifest *m,
                                                   const char *capability);

/* The deciding matches, "file:line" each: how many, and entry i (from 0),
 * NULL past the end or for an unknown capability. */
size_t aiter_probe_manifest_capability_evidence_count(const aiter_probe_manifest *m,
                                                      const char *capability);
const char *aiter_probe_manifest_capability_evidence(const aiter_probe_manifest *m,
                                                     const char *capability, size_t i);

/* The kernel launch cross-check: 1 with *status ("passed", "failed",
 * "error", "skipped") and *reason (NULL when the manifest has none) when the
 * capability records one, 0 with both NULL when it does not (its probe has
 * no launch), AITER_PROBE_UNKNOWN for an unknown capability. status and
 * reason may be NULL. */
int aiter_probe_manifest_capability_launch(const aiter_probe_manifest *m, const char *capability,
                                           const char **status, const char **reason);

/* Which kernel the capability's launch ran: "aiter" (AITER's own, on some
 * device) or "reference" (aiter-probe's, where AITER's could not run); NULL
 * when no launch ran (none, skipped, an unknown capability, or a manifest
 * of an earlier version, whose launches were all the reference's). */
const char *aiter_probe_manifest_capability_launch_kernel(const aiter_probe_manifest *m,
                                                          const char *capability);

/* How many rules the manifest has, and the id of rule i (from 0), NULL past
 * the end. */
size_t aiter_probe_manifest_rule_count(const aiter_probe_manifest *m);
const char *aiter_probe_manifest_rule_id(const aiter_probe_manifest *m, size_t i);

/* "matched", "unmatched", "missing", "error" or "unknown" (the file was read,
 * but what it binds is known only by running it: never a match); NULL when
 * the manifest has no such rule. */
const char *aiter_probe_manifest_rule_status(const aiter_probe_manifest *m, const char *rule_id);

/* How many matches the rule recorded (0 for an unknown rule). */
size_t aiter_probe_manifest_rule_matches(const aiter_probe_manifest *m, const char *rule_id);

/* The named capture of the rule's match number `match` (from 0), or NULL when
 * the rule, the match or the capture does not exist. */
const char *aiter_probe_manifest_rule_capture(const aiter_probe_manifest *m, const char *rule_id,
                                              size_t match, const char *name);

/* The MLA head routing for `heads` query heads (plans.mla_heads): the head
 * count to launch with, the padding mode ("none", "repeat-interleave",
 * "tile-slice") and whether a launch on the scanning node proved it (1/0).
 * Any output pointer may be NULL. Returns 0, or -1 when the plan has no row
 * for heads. */
int aiter_probe_manifest_mla_heads(const aiter_probe_manifest *m, int heads, int *launch_heads,
                                   const char **mode, int *verified);

/* Which kernel proved the routing for `heads` (plans.mla_heads "kernel"):
 * "aiter" or "reference"; NULL when the row is not verified, there is no
 * row, or the manifest is of an earlier version. */
const char *aiter_probe_manifest_mla_heads_kernel(const aiter_probe_manifest *m, int heads);

/* The most heads a plan row names, real or launched. */
#define AITER_PROBE_MLA_MAX_HEADS 128

/* The plan's rows in manifest order (one per head count 1..128 as the
 * scanner writes it): how many, and row i (from 0) as
 * aiter_probe_manifest_mla_heads gives it, with its real head count. Any
 * output pointer may be NULL. Returns AITER_PROBE_OK, or
 * AITER_PROBE_UNKNOWN past the end. */
size_t aiter_probe_manifest_mla_plan_count(const aiter_probe_manifest *m);
int aiter_probe_manifest_mla_plan_row(const aiter_probe_manifest *m, size_t i, int *heads,
                                      int *launch_heads, const char **mode, int *verified);

/* The index maps that pad `heads` query heads to the plan's launch count
 * and take the real heads' outputs back (the plan's mode decides them, as
 * the scanner's launch does):
 *	q_launch[j] = q[pad_source[j]]       for j in 0..launch_heads-1
 *	out[h]      = out_launch[unpad[h]]   for h in 0..heads-1
 * e.g. 8 heads as 16 (repeat-interleave): pad_source 0 0 1 1 .. 7 7, unpad
 * 0 2 4 .. 14; 24 as 32 (tile-slice): pad_source 0 .. 23 0 .. 7, unpad
 * 0 .. 23. pad_source holds pad_len ints and gets launch_heads of them,
 * unpad holds unpad_len and gets heads; either may be NULL (its length is
 * then ignored). Returns AITER_PROBE_OK; AITER_PROBE_UNKNOWN when the plan
 * has no row for heads; AITER_PROBE_SHORT_BUFFER, writing nothing, when a
 * buffer is too short. (A row whose mode is not the one its head counts call
 * for is refused when the manifest is opened.) */
int aiter_probe_manifest_mla_head_maps(const aiter_probe_manifest *m, int heads, int *pad_source,
                                       size_t pad_len, int *unpad, size_t unpad_len);

/* --- Signatures (a manifest scanned with --signatures) --------------------
 * A callable is named by its module, as the manifest's `signatures` holds
 * it, then its name: "aiter.mla.mla_decode_fwd" (the name after the last
 * dot) or "aiter.mla:mla_decode_fwd"; "aiter.fused_moe" is aiter's own
 * fused_moe. */

/* 1 with *params its parameters as inspect writes them inside the
 * parentheses, each default `…` ("q, k, /, v=…, *args, c, **kw"); 0 when
 * the manifest cannot tell (*reason says why: no signatures recorded, a
 * module or name it did not record, what the scan could not decide);
 * AITER_PROBE_INVALID for a NULL m or qualname. params and reason may be
 * NULL; the strings are m's. */
int aiter_probe_manifest_signature(const aiter_probe_manifest *m, const char *qualname,
                                   const char **params, const char **reason);

/* Whether a call of qualname with `positional` positional arguments and the
 * keyword arguments named in keywords binds, as CPython binds it
 * (inspect.Signature.bind): 1 yes, 0 no (TypeError), AITER_PROBE_UNKNOWN
 * when the manifest cannot tell; for 0 and AITER_PROBE_UNKNOWN the reason
 * is written to why (why_size bytes at most, NUL-terminated; why may be
 * NULL). AITER_PROBE_INVALID for a NULL m, qualname or keyword, and a
 * keyword given twice. */
/* Room for any reason aiter_probe_manifest_binds writes. */
#define AITER_PROBE_WHY_BYTES 640
int aiter_probe_manifest_binds(const aiter_probe_manifest *m, const char *qualname,
                               size_t positional, const char *const *keywords, size_t nkeywords,
                               char *why, size_t why_size);

void aiter_probe_manifest_free(aiter_probe_manifest *m);

/* Why the last failing call of this thread failed ("no error" when none). */
const char *aiter_probe_last_error(void);

/* --- The manifest saved for one AITER tree (aiter-probe scan --save) ------ */

/* *path (free() it) = where `aiter-probe scan --save` writes the manifest of
 * the AITER tree at aiter_root (the folder holding the aiter package, or a
 * checkout): aiter-<16 hex digits of the sha256 of its canonical path>.json
 * in $AITER_PROBE_MANIFEST_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/aiter-probe.
 * Returns AITER_PROBE_OK, or AITER_PROBE_ERROR (AITER_PROBE_INVALID for a
 * NULL argument) with *path NULL and aiter_probe_last_error() saying why. */
int aiter_probe_manifest_default_path(const char *aiter_root, char **path);

/* Loads the manifest for the AITER tree the caller will load, at aiter_root:
 * $AITER_PROBE_MANIFEST when set, else the one `aiter-probe scan --save`
 * wrote for that tree. It is accepted only when its aiter.root is that tree
 * and its inputs are fresh (AITER_PROBE_VERIFY_FRESH). Returns AITER_PROBE_OK,
 * or, with *out NULL and the reason in aiter_probe_last_error() (and in
 * *reason, when reason is not NULL, valid until this thread's next failing
 * call): AITER_PROBE_MISSING "no manifest at P: run 'aiter-probe scan --save'",
 * AITER_PROBE_STALE "P is stale: aiter/mla.py changed: run 'aiter-probe scan
 * --save'", AITER_PROBE_ERROR "P was made for /a/site-packages, not
 * /b/site-packages" (or "P was made for the AITER sources in /a, not /b":
 * aiter.meta must be the meta folder AITER at aiter_root builds from, as
 * its aiter/jit/core.py picks it: aiter/install_mode, $AITER_META_DIR, the
 * root when the pick has no csrc/, older tags as they did; doc/usage.md),
 * or the manifest's own error. */
int aiter_probe_manifest_for_root(aiter_probe_manifest **out, const char *aiter_root,
                                  const char **reason);

/* --- Scanning a tree: the whole scan of `aiter-probe scan`, in process --- */

/* The facts of the interpreter that will import AITER, as the caller gives
 * them (aiter_probe_scan_options.python_facts): an interpreter that embeds
 * the library gives its own, and nothing is run for them. */
typedef struct aiter_probe_python_facts {
	const char *executable;   /* sys.executable; NULL or "" when it has none */
	int major, minor, micro;  /* sys.version_info[:3], each 0 to 9999 */
	const char *releaselevel; /* sys.version_info.releaselevel: "alpha", "beta",
	                             "candidate" or "final" */
	const char *platform;     /* sys.platform: "linux" */
	const char *os_name;      /* os.name: "posix" */
	/* Whether the interpreter finds the module (a dotted absolute name)
	 * without importing it: importlib.util.find_spec for the top-level
	 * name, the path finder over the parent's locations for each submodule.
	 * 1 yes, 0 no, anything else not known. Called by aiter_probe_scan on
	 * its thread, at most once a module a scan; NULL: never known. */
	int (*finds)(void *context, const char *module);
	void *context;
} aiter_probe_python_facts;

/* What a scan reads and does. Initialise with AITER_PROBE_SCAN_OPTIONS_INIT
 * (every field its default), then set what differs; a later version of the
 * library reads only the fields of the version given (1: up to host; 2:
 * python_version too; 3: datadir and python_facts too; 4: signatures too). */
#define AITER_PROBE_SCAN_OPTIONS_VERSION 4
typedef struct aiter_probe_scan_options {
	unsigned int version; /* AITER_PROBE_SCAN_OPTIONS_VERSION */
	/* The folder holding the aiter package (site-packages, or a checkout);
	 * NULL: found as AITER finds itself, by `python`'s find_spec (which does
	 * not import it), else $AITER_META_DIR. Its meta folder (csrc/, hsa/)
	 * is the one its aiter/jit/core.py picks, $AITER_META_DIR included. */
	const char *aiter_root;
	/* The interpreter that will import AITER; NULL: $AITER_PROBE_PYTHON,
	 * else python3 on PATH. It finds the package when aiter_root is NULL,
	 * and gives the facts the tree's conditions need (sys.version_info,
	 * sys.platform, os.name, whether it finds a module the tree imports in
	 * a try), run only when one does; an embedding interpreter passes its
	 * own sys.executable. */
	const char *python;
	/* Rule packs (files or folders) loaded after the installed ones. */
	const char *const *rule_paths;
	size_t rule_path_count;
	int no_default_rules; /* nonzero: only rule_paths */
	/* Nonzero: cross-check capabilities on the GPUs (one child process per
	 * GPU, each under launch_timeout); 0, the default: static answers only,
	 * as `scan --no-launch`. */
	int launch;
	const char *devices;   /* with launch: NULL or "all", else indices "0,2" */
	double launch_timeout; /* seconds per launch; 0: 120 */
	size_t max_file_size;  /* bytes; a larger file makes its rules `error`; 0: 16 MiB */
	const char *host;      /* the manifest's "host"; NULL: this machine's host name */
	/* Version 2: instead of python's facts, its version alone, "X.Y" or
	 * "X.Y.Z" (nothing is run for them: the platform and the modules it
	 * finds are not known); not with python. NULL: python is asked. */
	const char *python_version;
	/* Version 3: the folder holding the packs (rules/ and probes/); NULL:
	 * $AITER_PROBE_DATADIR, else where they were installed. */
	const char *datadir;
	/* Version 3: instead of running python, its facts as given (copied
	 * during the call); not with python or python_version. A fact the
	 * interpreter could not print ("the python's facts: its releaselevel is
	 * none of alpha, beta, candidate, final") is AITER_PROBE_ERROR. */
	const aiter_probe_python_facts *python_facts;
	/* Version 4: nonzero: record the signatures of the public callables of
	 * the modules the packs name (`signatures`, as `scan --signatures`),
	 * which aiter_probe_manifest_signature and _binds answer from. */
	int signatures;
} aiter_probe_scan_options;
#define AITER_PROBE_SCAN_OPTIONS_INIT {AITER_PROBE_SCAN_OPTIONS_VERSION, NULL, NULL, NULL, 0, 0, 0, \
                                       NULL, 0, 0, NULL, NULL, NULL, NULL, 0}

/* Scans the tree opts describes (NULL: every default) into *out, a manifest
 * like the one `aiter-probe scan` writes, whose accessors above all work on
 * it. The packs are the installed ones (the options' datadir, else
 * $AITER_PROBE_DATADIR, overrides where they are). Prints nothing. Returns AITER_PROBE_OK, or AITER_PROBE_INVALID
 * (out NULL, or opts of an unknown version), AITER_PROBE_OUT_OF_MEMORY
 * ("aiter_probe_scan: out of memory (asked for 40 bytes)"; what the scan
 * had allocated stays so), or AITER_PROBE_ERROR with *out
 * NULL and aiter_probe_last_error() saying why, with the words the command
 * prints: "/x is not an AITER tree: none of the 16 paths the rules read is
 * there (...)", "rules/a.yaml:4:9: unknown key 'fiel'", "no AITER tree given:
 * use --aiter-root DIR or set AITER_META_DIR (...)". */
int aiter_probe_scan(aiter_probe_manifest **out, const aiter_probe_scan_options *opts);

/* The manifest as JSON text, exactly as `aiter-probe scan -o` writes it
 * (indented, ASCII, newline-terminated): malloc'd, free() it; NULL on
 * failure. */
char *aiter_probe_manifest_json(const aiter_probe_manifest *m);

/* Writes the manifest to path atomically (a temporary file in the same
 * folder, then a rename), as `aiter-probe scan -o` does; only a regular file
 * may stand at path. Returns AITER_PROBE_OK or AITER_PROBE_ERROR. */
int aiter_probe_manifest_write(const aiter_probe_manifest *m, const char *path);

#ifdef __cplusplus
}
#endif

#endif
