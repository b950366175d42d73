/* SPDX-License-Identifier: MIT */
/* Rule packs: YAML files of rules (static checks) and probes (capabilities),
 * validated when loaded. Every loading error names file, line and column. */
#ifndef AP_RULES_H
#define AP_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/kind.h"
#include "engine/match.h"
#include "engine/lang/normalize.h"

typedef struct ap_loc {
	const char *file; /* owned by the rule set */
	unsigned line;    /* 1-based */
	unsigned col;     /* 1-based */
} ap_loc;

typedef struct ap_rule {
	char *id;
	char *description;   /* may be NULL */
	char **paths;        /* alternatives, first that exists wins; none for kinds
	                      * that name no file */
	size_t npaths;
	ap_lang lang;        /* AP_LANG_AUTO: from each file's name */
	ap_ws ws;
	ap_collect collect;
	const struct ap_kind *kind;
	char *pattern;       /* the kind's key's value when it is a string, else NULL */
	char *spec;          /* what it looks for: its keys but id, description and
	                      * file, as one line of YAML flow text */
	void *state;         /* the kind's compiled form */
	ap_loc loc;
} ap_rule;

/* What r's kind sees of it. */
ap_kind_rule ap_rule_view(const ap_rule *r);

typedef enum { AP_EXPR_REF, AP_EXPR_ALL, AP_EXPR_ANY, AP_EXPR_NOT, AP_EXPR_CAPTURE } ap_expr_kind;

/* A comparison of a rule's capture: eq and ne compare text or numbers, the
 * others numbers. */
typedef enum { AP_CMP_EQ, AP_CMP_NE, AP_CMP_LT, AP_CMP_LE, AP_CMP_GT, AP_CMP_GE } ap_cmp_op;

/* "==", "<", ...: how messages write op. */
const char *ap_cmp_op_name(ap_cmp_op op);
/* "eq", "lt", ...: how a pack writes op. */
const char *ap_cmp_op_key(ap_cmp_op op);

typedef struct ap_expr {
	ap_expr_kind kind;
	char *ref;       /* AP_EXPR_REF: a rule id or a probe id; AP_EXPR_CAPTURE: a rule id */
	bool ref_probe;  /* resolved by ap_ruleset_finish: ref names a probe */
	size_t ref_index;/* index into rules or probes */
	char *capture;   /* AP_EXPR_CAPTURE: the capture's name, */
	ap_cmp_op op;    /* compared this way */
	bool numeric;    /* with the number num, or else */
	long long num;
	char *text;      /* with this text */
	struct ap_expr **kids;
	size_t nkids;
	ap_loc loc;
} ap_expr;

/* Whether a capture's text compares as the AP_EXPR_CAPTURE e says: the scan's
 * verdict and explain's account of it. */
bool ap_expr_capture_holds(const ap_expr *e, const char *value);

/* A kernel launch that cross-checks a capability on the GPU. */
typedef struct ap_launch_spec {
	char *kernel;    /* "mla_decode" */
	int heads;       /* real head count */
	int pad_to;      /* launch head count of the padded path (0: none) */
	int head_dim;    /* latent dim, 512 */
	int rope;        /* rope dim, 64 */
	int batch;       /* 0: launcher default */
	int context;     /* 0: launcher default */
	int page_size;   /* 0: launcher default */
	double timeout_s;/* 0: engine default */
	ap_loc loc;
} ap_launch_spec;

typedef struct ap_probe {
	char *id;
	char *description;
	ap_expr *requires;
	ap_launch_spec *launch; /* NULL when none */
	char *fallback;      /* what a backend does when unsupported, one sentence; may be NULL */
	ap_loc loc;
} ap_probe;

/* A module whose public callables' signatures the scan records
 * (engine/signatures.h). */
typedef struct ap_sigspec {
	char *module;            /* dotted, NFKC as the reader spells names */
	struct ap_pyconf *conf;  /* `assume_false` */
	ap_loc loc;
} ap_sigspec;

/* Modules the packs may name. */
#define AP_SIG_MAX_MODULES 64

/* Reads one entry of `signatures:` ({module: a.b, assume_false: [...]})
 * (engine/signatures.c, beside what the scan does with it). */
struct ap_ynode;
int ap_sigspec_load(const char *file, const struct ap_ynode *n, ap_sigspec *out);
void ap_sigspec_clear(ap_sigspec *s);

typedef struct ap_ruleset {
	ap_rule *rules;
	size_t nrules;
	size_t rules_cap;
	ap_probe *probes;   /* after ap_ruleset_finish: every probe after those it requires */
	size_t nprobes;
	size_t probes_cap;
	ap_sigspec *sigs;   /* in load order, one per module */
	size_t nsigs;
	size_t sigs_cap;
	char **files;       /* the YAML files loaded, owners of ap_loc.file */
	size_t nfiles;
	size_t files_cap;
} ap_ruleset;

int ap_ruleset_new(ap_ruleset **out);
void ap_ruleset_free(ap_ruleset *rs);

/* Loads one YAML file, or every .yaml and .yml file of a folder in name order.
 * On an error, everything the failing file added is taken back; files loaded
 * before it (earlier calls, earlier files of the folder) stay. */
int ap_ruleset_load_path(ap_ruleset *rs, const char *path);
/* Loads YAML text; name is used in messages. */
int ap_ruleset_load_buffer(ap_ruleset *rs, const char *name, const char *yaml, size_t len);
/* Resolves references, refuses unknown ids and cycles, orders the probes.
 * On an error the probes keep their order; it may be called again after more
 * packs are loaded. */
int ap_ruleset_finish(ap_ruleset *rs);

const ap_rule *ap_ruleset_find_rule(const ap_ruleset *rs, const char *id);
const ap_probe *ap_ruleset_find_probe(const ap_ruleset *rs, const char *id);

#endif
