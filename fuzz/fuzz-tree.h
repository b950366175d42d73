/* SPDX-License-Identifier: MIT */
/* What the tree targets share: one input read as a small AITER tree of
 * several files, served to the engine's reader from memory (through
 * ap_source_ops, so that no input touches the disk), and a scan of it whose
 * manifest the core's reader must take back as written.
 *
 * Input layout: a line "#== PATH" starts the file PATH, which runs to the
 * next such line; the bytes before the first go to the target's first path.
 * fuzz/seeds.sh writes the fixture trees in this layout. */
#ifndef AP_FUZZ_TREE_H
#define AP_FUZZ_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ap-util.h"
#include "engine/reader.h"
#include "engine/rules.h"

/* Past this many files, the rest of the input belongs to the last one: a
 * tree stays small enough for every input to be quick. */
#define FUZZ_TREE_MAX_FILES 32
#define FUZZ_TREE_HEADER "#== "

typedef struct fuzz_file {
	char *path;
	const char *data; /* into the input */
	size_t len;
} fuzz_file;

typedef struct fuzz_tree {
	fuzz_file files[FUZZ_TREE_MAX_FILES];
	size_t n;
} fuzz_tree;

void fuzz_tree_split(fuzz_tree *t, const char *data, size_t size, const char *first_path);
void fuzz_tree_free(fuzz_tree *t);

/* A reader over t, which must outlive it. A path t holds twice reads as its
 * first. */
ap_reader *fuzz_tree_reader(const fuzz_tree *t);

/* The rule set of the shipped packs (rules/ and probes/ of the source tree),
 * loaded once; freed at exit. */
const ap_ruleset *fuzz_shipped_packs(void);

/* Scans r with rs and checks each result; with round_trip, also that the
 * manifest built from the scan reads back through the core's reader
 * unchanged (half an input's time: the targets ask it of their generated
 * packs, whose captures and reasons carry the input's bytes). */
void fuzz_scan(const ap_ruleset *rs, ap_reader *r, bool round_trip);

/* Scans t, round trip included, with the pack a target made from it: rules
 * is "version: 1\nrules:\n" and rule items, probes probe items (or none). */
void fuzz_scan_generated(const fuzz_tree *t, ap_buf *rules, const ap_buf *probes);

/* YAML single-quoted text of s when every byte is printable ASCII, so that a
 * generated pack never fails on the name of something the input holds; NULL
 * otherwise. */
char *fuzz_yaml_quote(const char *s);

#endif
