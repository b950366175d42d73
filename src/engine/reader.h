/* SPDX-License-Identifier: MIT */
/* The confined reader: every file a rule names is read at most once, from
 * under the AITER root only, with a size cap and a binary check, and its
 * digest is kept for the manifest's inputs. Files come from a source, which
 * is a folder on disk or a git tree (history). */
#ifndef AP_READER_H
#define AP_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/confine.h" /* ap_path_refusal, which checks a rule's path */
#include "engine/lang/normalize.h"

#define AP_READER_DEFAULT_MAX_BYTES ((size_t)16 << 20)
/* A reader holds at most this many times its size cap for one scan, all
 * files together: their contents, normalized texts and what kinds derive
 * from them (parsed modules). Past it a file is not loaded (ERROR, its
 * digest kept), a text not made, a module not parsed: each says the figure. */
#define AP_READER_BUDGET_CAPS 16

typedef enum {
	AP_FILE_OK,      /* readable text */
	AP_FILE_MISSING, /* no such file */
	AP_FILE_ERROR,   /* present but not usable: reason says why */
} ap_file_status;

typedef struct ap_file {
	char *path;     /* relative to the root, as the rule named it */
	ap_file_status status;
	char *reason;   /* for MISSING and ERROR, in words; NULL when OK */
	char *data;     /* raw bytes, BOM included; NULL unless OK */
	size_t len;
	const char *seen; /* when not hashed: what was at the path (ap_seen_of) */
	bool hashed;    /* bytes were read (a file over the cap in chunks, not
	                 * kept): sha256 and len describe them */
	unsigned char sha256[AP_SHA256_SIZE];
	/* Set by a source that names the bytes itself (a git blob's object
	 * id, zero-padded): what derived data is shared by, and sha256 is not
	 * computed (hashed stays false). */
	bool identified;
	unsigned char id[AP_SHA256_SIZE];
} ap_file;

/* A source loads the file at f->path. It returns AP_FILE_OK with *data
 * (malloc'd) and *len, or another status with *reason (malloc'd). A source
 * that reads bytes it does not return (a file over max_bytes, streamed) may
 * record their digest itself: f->sha256, f->len and f->hashed; one that
 * knows the bytes by an id of its own sets f->id and f->identified. */
typedef struct ap_source_ops {
	ap_file_status (*load)(void *ctx, ap_file *f, size_t max_bytes, char **data, size_t *len,
	                       char **reason);
	void (*free)(void *ctx);
} ap_source_ops;

typedef struct ap_reader ap_reader;

/* A reader over a folder, with paths of the meta folder's (ap_path_in_meta)
 * read under meta (NULL: the root). Both must be folders (AP_EINPUT
 * otherwise). */
int ap_reader_new_fs(ap_reader **out, const char *root, const char *meta, size_t max_bytes);
/* A reader over any source; takes ownership of ctx. root is only reported. */
int ap_reader_new(ap_reader **out, const ap_source_ops *ops, void *ctx, const char *root,
                  size_t max_bytes);
void ap_reader_free(ap_reader *r);

/* Canonical absolute root (fs) or the name given (other sources). */
const char *ap_reader_root(const ap_reader *r);
/* The canonical meta folder (fs), else the root. */
const char *ap_reader_meta(const ap_reader *r);

/* The interpreter that will import the tree (engine/pytarget.h), which the
 * Python kinds ask what the tree's conditions and imports depend on; it
 * outlives the reader. NULL, the default: none, and such answers are not
 * known. */
struct ap_pytarget;
void ap_reader_set_python(ap_reader *r, struct ap_pytarget *python);
struct ap_pytarget *ap_reader_python(const ap_reader *r);

/* Python modules parsed with what their try statements import left
 * unasked (each such try may end at any import, each handler may run), as
 * a first pass: most questions have one answer whichever way a try goes,
 * and deciding every try reads every module it imports, and theirs in turn
 * (on AITER, 154 files a scan instead of 61). The parses are kept apart
 * from those that ask. Setting it counts afresh the parses handed out that
 * left an import unasked (ap_reader_unasked): none, and the answer is the
 * one asking would give. Off by default. */
void ap_reader_set_tries_unasked(ap_reader *r, bool unasked);
bool ap_reader_tries_unasked(const ap_reader *r);
void ap_reader_count_unasked(ap_reader *r);
size_t ap_reader_unasked(const ap_reader *r);

/* The file at rel, read on first use and cached. Never NULL. */
const ap_file *ap_reader_get(ap_reader *r, const char *rel);
/* The normalized text of an OK file, computed on first use and cached per
 * (language, whitespace mode). NULL (message in ap_error) when it cannot be. */
const ap_text *ap_reader_text(ap_reader *r, const ap_file *f, ap_lang lang, ap_ws ws);

/* What a kind derived from f (a parsed module) under key, kept so that every
 * rule reading f shares one: NULL when none was kept. */
void *ap_reader_derived(ap_reader *r, const ap_file *f, const char *key);
/* Keeps data (of about bytes) under key (not kept yet) until the reader, or
 * the cache it shares, is freed. Data kept must not point into f. */
void ap_reader_keep(ap_reader *r, const ap_file *f, const char *key, void *data, size_t bytes,
                    void (*free_data)(void *));

/* Counts bytes that the scan now holds against the reader's budget
 * (AP_READER_BUDGET_CAPS times its size cap): 0, or AP_ELIMIT with a message
 * "WHAT would pass the N-byte budget ..." and nothing counted. */
int ap_reader_charge(ap_reader *r, size_t bytes, const char *what);
/* Whether bytes more would fit the budget now. */
bool ap_reader_has_room(const ap_reader *r, size_t bytes);

/* Rounds, for a caller that keeps a rule's answer with the files it asked
 * for (history): a round begins before each rule. ap_reader_touched tells
 * whether file i (ap_reader_at) was asked for in the round, read or found
 * read; ap_reader_round_bytes bounds what a scan of the round's rule alone
 * would hold (the contents and texts of the files it touched, and all it
 * charged); ap_reader_round_refused tells whether the budget refused a
 * charge in it (an answer that depends on the rules before). */
void ap_reader_begin_round(ap_reader *r);
bool ap_reader_touched(const ap_reader *r, size_t i);
size_t ap_reader_round_bytes(const ap_reader *r);
bool ap_reader_round_refused(const ap_reader *r);
/* As ap_reader_keep, but kept with this reader alone, never shared with the
 * readers after it: what holds for this scan only (a budget it ran out of). */
void ap_reader_keep_here(ap_reader *r, const ap_file *f, const char *key, void *data,
                         void (*free_data)(void *));

/* Derived data shared by readers one after another (history), by content. */
typedef struct ap_derived_cache ap_derived_cache;
ap_derived_cache *ap_derived_cache_new(void);
void ap_derived_cache_free(ap_derived_cache *c);
/* What the cache keeps of what readers before the last used, the most
 * recently used first: AITER's files and modules of about ten commits
 * apart, where a history's rules recalled (evaluate.h) leave them unread. */
#define AP_DERIVED_CACHE_BYTES ((size_t)64 << 20)
/* Past AP_DERIVED_CACHE_BYTES, drops what no reader used since the last
 * sweep, the least recently used first, down to three quarters of it. */
void ap_derived_cache_sweep(ap_derived_cache *c);
/* The entries kept. */
size_t ap_derived_cache_count(const ap_derived_cache *c);
/* By any byte key (a source's own: history keeps blobs by object id); data
 * holds about bytes. */
void *ap_derived_cache_get(ap_derived_cache *c, const void *key, size_t len);
void ap_derived_cache_put(ap_derived_cache *c, const void *key, size_t len, void *data,
                          size_t bytes, void (*free_data)(void *));
/* r keeps derived data in c (which outlives it). */
void ap_reader_share(ap_reader *r, ap_derived_cache *c);

/* Files read so far, in the order they were first asked for. */
size_t ap_reader_count(const ap_reader *r);
const ap_file *ap_reader_at(const ap_reader *r, size_t i);

#endif
