/* SPDX-License-Identifier: MIT */
/* The interpreter that will import the AITER tree, as a scan asks it: its
 * facts (sys.version_info, sys.platform, os.name) and whether it finds a
 * module from outside the tree (find_spec, which imports nothing), each
 * asked at most once a scan of one run of it, started on first need and
 * fed the modules on its stdin, each answer under the time limit; killed
 * by ap_pytarget_free;
 * and what the answers depended on, for the manifest's "python". Or, given
 * a version alone (--python-version), that version and nothing else: then
 * nothing is run; nor when the caller gives them (ap_pytarget_new_given).
 * Its output is parsed strictly, and a run that outlives its time limit is
 * killed. */
#ifndef AP_PYTARGET_H
#define AP_PYTARGET_H

#include <jansson.h>
#include <stdbool.h>

#include "engine/lang/python/python.h"

/* Seconds a run of the interpreter may take (AITER_PROBE_PYTHON_TIMEOUT
 * overrides). */
#define AP_PYTARGET_TIMEOUT_S 10.0

/* AP_OK when AITER_PROBE_PYTHON_TIMEOUT is unset, empty or a positive
 * number of seconds (below a million), else AP_EINPUT with the error set:
 * checked before a scan, as a bad value would surface only once a run is
 * needed. */
int ap_pytarget_check_env(void);

typedef struct ap_pytarget ap_pytarget;

/* Whether version is what --python-version takes: X.Y or X.Y.Z, each part
 * digits (at most 4). */
bool ap_pytarget_version_valid(const char *version);

/* Why python cannot be run (a path that is no executable regular file, a
 * name found nowhere in PATH), in words ("/x: No such file or directory");
 * NULL when it can. Caller frees. */
char *ap_pytarget_refusal(const char *python);

/* A target over python (a path, or a name looked up in PATH; NULL:
 * $AITER_PROBE_PYTHON, else python3) or, when version is not NULL, that
 * version alone (checked with ap_pytarget_version_valid). Runs nothing. */
ap_pytarget *ap_pytarget_new(const char *python, const char *version);
void ap_pytarget_free(ap_pytarget *t);

/* The facts of an interpreter given by the caller (an interpreter that
 * embeds the engine gives its own): nothing is run, and whether it finds a
 * module is the caller's finds (NULL: never known), called at most once a
 * module. The strings are copied. */
typedef struct ap_pytarget_given {
	const char *executable; /* sys.executable; NULL or "" when it has none */
	int major, minor, micro;
	const char *releaselevel, *platform, *os_name;
	int (*finds)(void *ctx, const char *module); /* 1 found, 0 not, else not known */
	void *ctx;
} ap_pytarget_given;

/* Why g is not what the interpreter would print (a level not among
 * alpha, beta, candidate, final, a platform that is no plain word, a
 * version part past 9999), in words; NULL when it is. Caller frees. */
char *ap_pytarget_given_refusal(const ap_pytarget_given *g);

/* A target over g, which ap_pytarget_given_refusal accepts. */
ap_pytarget *ap_pytarget_new_given(const ap_pytarget_given *g);

/* The facts, asking the interpreter on first need; need (AP_PY_FACT_*)
 * is recorded as what answers depend on. NULL when it cannot be asked
 * (ap_pytarget_error says why). */
const ap_py_facts *ap_pytarget_facts(ap_pytarget *t, unsigned need);

/* Whether the interpreter finds the absolute module name (dotted): 1 yes,
 * 0 no, -1 not known (a name that is no module name, a find_spec that
 * raised, an interpreter that cannot be asked, or a version alone). */
int ap_pytarget_finds(ap_pytarget *t, const char *module);

/* The interpreter as it is run (a path, or a name looked up in PATH); NULL
 * when nothing is run (a version alone, or facts given). */
const char *ap_pytarget_program(const ap_pytarget *t);

/* Why the interpreter could not be asked when it was needed (it could not
 * be run, failed, timed out or answered what is no answer); NULL while it
 * could. */
const char *ap_pytarget_error(const ap_pytarget *t);

/* What answers depended on, for the manifest: {executable, version,
 * releaselevel, platform, os_name, finds} with only the facts used; NULL
 * when none was. */
json_t *ap_pytarget_json(const ap_pytarget *t);

/* The differences between a manifest's "python" (recorded, an object) and
 * what t answers now, one line each ("version 3.12.3 when scanned, now
 * 3.11.2", "finds triton: no when scanned, now yes"), appended to
 * *lines (*n of them; each malloc'd). A fact t cannot tell now (a version
 * alone has no platform) is no difference. 0, or AP_EINPUT with the error
 * set when the interpreter cannot be asked. */
int ap_pytarget_compare(ap_pytarget *t, const json_t *recorded, char ***lines, size_t *n);

#endif
