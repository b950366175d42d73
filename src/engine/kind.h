/* SPDX-License-Identifier: MIT */
/* Rule kinds. A rule names one kind by its YAML key (`literal`, `csv`,
 * `python-def`, ...); each kind is one file in kinds/ and one line of the
 * table in kind.c, and the loader and the engine reach it only through that
 * table. A kind sees its rule through ap_kind_rule alone. */
#ifndef AP_KIND_H
#define AP_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/match.h"
#include "engine/lang/normalize.h"
#include "engine/reader.h"
#include "engine/lang/yaml-node.h"

struct ap_rule;

typedef enum {
	AP_RULE_MATCHED,
	AP_RULE_UNMATCHED,
	AP_RULE_MISSING,
	AP_RULE_ERROR,
	/* The file was read but cannot decide the rule (what Python binds depends on
	 * something only a run knows): never a match, and the reason says why. */
	AP_RULE_UNKNOWN,
} ap_rule_status;

const char *ap_rule_status_name(ap_rule_status s);

typedef struct ap_rule_result {
	const struct ap_rule *rule; /* the engine's: opaque to kinds */
	ap_rule_status status;
	const char *file; /* the path used (first existing), or the first tried; NULL if none */
	char *reason;     /* for MISSING, ERROR and UNKNOWN; may explain UNMATCHED */
	ap_match_list matches;
} ap_rule_result;

enum {
	/* The rule's `file` is required; the engine reads the first of its
	 * alternatives that exists and hands it to run. */
	AP_KIND_FILE = 1u << 0,
	/* `file` is required, and the kind picks among the alternatives. */
	AP_KIND_PICKS_FILE = 1u << 1,
	/* Normalized text: `language` and `normalize` apply. */
	AP_KIND_TEXT = 1u << 2,
	/* `collect: first|all` applies. */
	AP_KIND_COLLECT = 1u << 3,
};

/* What a kind sees of its rule: the rule's id, description, location, spec
 * and compiled state are the loader's and the reports'. */
typedef struct ap_kind_rule {
	char *const *paths;  /* `file`: alternatives, first that exists wins; none
	                      * for kinds that name no file */
	size_t npaths;
	ap_lang lang;        /* AP_LANG_AUTO: from each file's name */
	ap_ws ws;
	ap_collect collect;
	const char *pattern; /* the kind's key's value when it is a string, else NULL */
} ap_kind_rule;

/* What a kind's load sees: its rule's common keys as read so far, its key's
 * value and its own options. */
typedef struct ap_kind_load {
	const char *pack;        /* the pack file, for messages */
	const ap_ynode *map;     /* the rule's mapping */
	const ap_ynode *arg;     /* the value of the kind's key */
	const ap_yfield *opts;   /* one per entry of the kind's options, in order */
	const ap_yfield *normalize; /* the rule's `normalize` (key NULL when absent) */
	const ap_kind_rule *rule;
} ap_kind_load;

typedef struct ap_kind_run {
	ap_reader *reader;
	const ap_kind_rule *rule;
	const ap_file *file;     /* AP_KIND_FILE: the file picked, readable; else NULL */
	ap_rule_result *res;     /* run sets status (not MISSING for AP_KIND_FILE), the
	                          * reason, the matches, and file when it picks one */
} ap_kind_run;

/* The part of a kind that matches normalized text. */
typedef struct ap_text_ops {
	const char *what; /* "literal", "token pattern", "regex": in messages */
	/* Refuses a bad pattern with AP_EINPUT, the message in ap_error and
	 * *err_offset at the offending byte when offset_errors. */
	int (*compile)(void **state, const char *pattern, ap_ws ws, size_t *err_offset);
	/* Appends the matches in t; AP_ELIMIT (with a message) when a budget ran out. */
	int (*run)(const void *state, const ap_text *t, ap_collect collect, ap_match_list *out);
	void (*free)(void *state);
	bool offset_errors;
	/* Whitespace tells its tokens apart: `normalize: strip-whitespace` is refused. */
	bool needs_whitespace;
	/* Optional: why the compiled pattern can never match text of lang (the
	 * rule's language, or its files' when they agree), or NULL. */
	const char *(*refusal)(const void *state, ap_lang lang);
} ap_text_ops;

typedef struct ap_kind {
	const char *key;
	const char *const *options; /* the kind's own keys, NULL-terminated; NULL: none */
	unsigned flags;
	const ap_text_ops *text;    /* text kinds: load and run come from kind.c */
	int (*load)(const ap_kind_load *l, void **state);
	void (*run)(const void *state, ap_kind_run *run);
	void (*free)(void *state);
} ap_kind;

extern const ap_kind *const ap_kinds[];
extern const size_t ap_nkinds;

/* The kind whose key is key, or NULL. */
const ap_kind *ap_kind_find(const char *key);
size_t ap_kind_noptions(const ap_kind *k);

int ap_kind_load_rule(const ap_kind *k, const ap_kind_load *l, void **state);
void ap_kind_run_rule(const ap_kind *k, const void *state, ap_kind_run *run);
void ap_kind_free_state(const ap_kind *k, void *state);

/* For kinds' run functions: the first of the rule's paths that exists
 * (readable or not), or NULL; and the reason a rule whose every path is
 * absent is missing. */
const ap_file *ap_kind_pick_file(ap_reader *r, const ap_kind_rule *rule);
char *ap_kind_missing_reason(const ap_kind_rule *rule);

void ap_rule_set_error(ap_rule_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A text kind's matcher on its own, for tests, benchmarks and fuzzing. */
typedef struct ap_matcher ap_matcher;

/* kind is a text kind's key ("literal", "token", "regex"). On a bad pattern
 * returns AP_EINPUT with the message in ap_error and *err_offset at the
 * offending byte (regex). */
int ap_matcher_new(ap_matcher **out, const char *kind, const char *pattern, ap_ws ws,
                   size_t *err_offset);
int ap_matcher_run(const ap_matcher *m, const ap_text *t, ap_collect collect, ap_match_list *out);
void ap_matcher_free(ap_matcher *m);

#endif
