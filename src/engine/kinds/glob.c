/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/lang/glob-pattern.h"
#include "engine/kind.h"

/* `glob`: files matching a pattern exist, or any of a list of patterns:
 * `*`, `?` and `[...]` within a name, a whole `**` segment for any depth.
 * Folders are read through the reader as listings ("dir/"), so each one the
 * walk looks at is an input of the manifest and history sees it change;
 * literal segments are looked up without listing their parent. Symlinks
 * are not followed. */

/* A walk that reads more folders than this is refused rather than slow. */
#define GLOB_MAX_FOLDERS 10000
#define GLOB_MAX_DEPTH 64

struct glob_rule {
	ap_glob **globs;
	size_t n;
};

struct walk {
	ap_reader *reader;
	const ap_glob *g;
	size_t nseg;
	size_t folders;
	ap_map *found;  /* paths found, deduplicated */
	char **paths;
	size_t npaths, paths_cap;
	char *error;
};

/* The listing of dir ("./" for the root), NULL when it has none. */
static const ap_file *listing(struct walk *w, const char *dir)
{
	const ap_file *f;

	if (++w->folders > GLOB_MAX_FOLDERS) {
		if (w->error == NULL)
			w->error = ap_xasprintf("the walk read more than %d folders", GLOB_MAX_FOLDERS);
		return NULL;
	}
	f = ap_reader_get(w->reader, dir[0] ? dir : "./");
	if (f->status == AP_FILE_ERROR && w->error == NULL)
		w->error = ap_xasprintf("%s: %s", f->path, f->reason);
	return f->status == AP_FILE_OK ? f : NULL;
}

static void found(struct walk *w, const char *path)
{
	if (ap_map_get_str(w->found, path) != AP_MAP_ABSENT)
		return;
	ap_xok(ap_map_put_str(w->found, path, w->npaths));
	ap_xgrow((void **)&w->paths, &w->paths_cap, w->npaths + 1, sizeof *w->paths);
	w->paths[w->npaths++] = ap_xstrdup(path);
}

/* Segments k.. of the pattern under dir ("" or "a/b/"). */
static void walk(struct walk *w, size_t k, const char *dir, unsigned depth)
{
	ap_glob_seg_kind kind = ap_glob_segment_kind(w->g, k);
	bool last = k + 1 == w->nseg;
	const ap_file *f;
	const char *p, *end;

	if (w->error != NULL)
		return;
	/* Cut short, the walk would call a file below unmatched. */
	if (depth > GLOB_MAX_DEPTH) {
		w->error = ap_xasprintf("glob '%s' goes deeper than %d folders (at %s)",
		                        ap_glob_pattern(w->g), GLOB_MAX_DEPTH, dir);
		return;
	}
	if (kind == AP_GLOB_LITERAL && !last) {
		char *sub = ap_xasprintf("%s%s/", dir, ap_glob_segment_text(w->g, k));
		walk(w, k + 1, sub, depth + 1);
		free(sub);
		return;
	}
	if (kind == AP_GLOB_ANY_DEPTH && !last)
		walk(w, k + 1, dir, depth);
	f = listing(w, dir);
	if (f == NULL)
		return;
	for (p = f->data, end = f->data + f->len; p < end && w->error == NULL;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		bool folder = len > 0 && p[len - 1] == '/';
		char *name = ap_xstrndup(p, folder ? len - 1 : len);
		char *path = ap_xasprintf("%s%s%s", dir, name, folder ? "/" : "");

		p += len + 1;
		if (kind == AP_GLOB_ANY_DEPTH && name[0] == '.') {
			/* `**` goes through no hidden folder and matches no hidden
			 * file, as a shell's does. */
		} else if (kind == AP_GLOB_ANY_DEPTH) {
			/* `**` last matches the files below, at any depth. */
			if (folder)
				walk(w, k, path, depth + 1);
			else if (last)
				found(w, path);
		} else if (ap_glob_segment_match(w->g, k, name)) {
			if (last && !folder)
				found(w, path);
			else if (!last && folder)
				walk(w, k + 1, path, depth + 1);
		}
		free(name);
		free(path);
	}
}

static int glob_load(const ap_kind_load *l, void **state)
{
	struct glob_rule *gr = ap_xcalloc(1, sizeof *gr);
	char **patterns;
	size_t n, off = 0;
	int rc;

	*state = gr;
	rc = ap_y_strings(l->pack, l->arg, "glob", &patterns, &n);
	gr->globs = ap_xcalloc(n ? n : 1, sizeof *gr->globs);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const ap_ynode *at = l->arg->kind == AP_Y_SEQ ? l->arg->kids[i] : l->arg;
		rc = ap_glob_new(&gr->globs[i], patterns[i], &off);
		if (rc < 0) {
			char *why = ap_xstrdup(ap_error_last());
			unsigned col = ap_y_scalar_byte_col(at, off);
			rc = col ? ap_y_fail_lc(l->pack, at->line, col, "invalid glob: %s", why)
			         : ap_y_fail(l->pack, at, "invalid glob at offset %zu: %s", off, why);
			free(why);
			break;
		}
		gr->n++;
	}
	ap_y_strings_free(patterns, n);
	return rc;
}

static void glob_run(const void *state, ap_kind_run *run)
{
	const struct glob_rule *gr = state;
	ap_rule_result *res = run->res;
	struct walk w = {.reader = run->reader, .found = ap_xnonnull(ap_map_new())};

	for (size_t i = 0; i < gr->n && w.error == NULL; i++) {
		w.g = gr->globs[i];
		w.nseg = ap_glob_nsegments(w.g);
		walk(&w, 0, "", 0);
	}
	if (w.npaths > 0)
		qsort(w.paths, w.npaths, sizeof *w.paths, ap_cmp_strs);
	if (w.error != NULL) {
		ap_rule_set_error(res, "%s", w.error);
	} else {
		for (size_t i = 0; i < w.npaths; i++) {
			ap_match *m = ap_match_add_text(&res->matches, 1, w.paths[i], strlen(w.paths[i]));
			ap_match_capture(m, "path", w.paths[i], strlen(w.paths[i]));
			if (run->rule->collect == AP_COLLECT_FIRST || res->matches.over)
				break;
		}
		res->status = w.npaths > 0 ? AP_RULE_MATCHED : AP_RULE_UNMATCHED;
		if (w.npaths > 0)
			res->file = ap_reader_get(run->reader, w.paths[0])->path;
	}
	for (size_t i = 0; i < w.npaths; i++)
		free(w.paths[i]);
	free(w.paths);
	free(w.error);
	ap_map_free(w.found);
}

static void glob_free(void *state)
{
	struct glob_rule *gr = state;

	if (gr == NULL)
		return;
	for (size_t i = 0; i < gr->n; i++)
		ap_glob_free(gr->globs[i]);
	free(gr->globs);
	free(gr);
}

const ap_kind ap_kind_glob = {
	.key = "glob",
	.flags = AP_KIND_COLLECT,
	.load = glob_load,
	.run = glob_run,
	.free = glob_free,
};
