/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/evaluate.h"
#include "engine/report/history.h"
#include "engine/source-git.h"
#include "engine/manifest.h"
#include "engine/pytarget.h"

/* --- The walk ----------------------------------------------------------- */

/* The verdicts of one set of file versions: a JSON array of rule states and
 * one of capability booleans, both in the rule set's order; NULL once
 * dropped (below). */
typedef struct verdict {
	json_t *rules;
	json_t *caps;
	size_t set;    /* the pathset of its evaluation */
	size_t weight; /* its rule states and capture tuples */
} verdict;

/* The rule states and capture tuples the verdicts kept at once may hold
 * (each about 300 bytes of JSON): past it the oldest are dropped, and a
 * commit that would have reused one is evaluated again. AITER's whole
 * history (955 evaluations of about 150 each) fits; 500 commits of 10,000
 * captures each keep the last 20, not all 500. */
#define VERDICT_BUDGET 200000

/* The paths one evaluation looked up (read, or found absent), sorted: the
 * verdict depends on nothing else of the tree. */
typedef struct pathset {
	char **paths;
	size_t n;
} pathset;

/* A rule's last answer, with what each path it asked for led to then: at
 * a commit where every one leads to the same object, the answer is the
 * same, and the rule is not run. */
typedef struct rule_memo {
	bool known;
	char **paths;
	ap_git_found *found;
	size_t npaths;
	ap_rule_result res; /* its file is file's */
	char *file;
	size_t bytes; /* its matches' JSON bytes (ap_match_json_bytes) */
	size_t held;  /* what a scan of the rule alone holds, at most */
	/* Its state (rule_state), once made, and the status, matches and
	 * reason the scan's limits left it it was made from: the same answer
	 * past the same limits is the same state. */
	json_t *state;
	ap_rule_status state_status;
	size_t state_matches;
	char *state_reason;
} rule_memo;

/* The matches the rules' answers kept at once may take, as JSON
 * (ap_match_json_bytes, an upper bound of what they and their states
 * hold): as much as one scan's may. An answer that would pass it is not kept, and its rule runs
 * at every commit it is asked. AITER's rules keep about 2 MiB. */
#define MEMO_BUDGET AP_MATCH_SCAN_JSON_MAX

typedef struct history {
	const ap_ruleset *rs;
	git_repository *repo;
	size_t max_bytes;
	pathset *sets;   /* every distinct pathset of an evaluation, newest last */
	size_t nsets;
	size_t sets_cap;
	ap_map *set_ids;  /* a pathset's paths, joined -> index into sets */
	ap_map *by_files; /* pathset index and what its paths resolve to -> verdict */
	ap_map *by_commit;/* commit id -> verdict */
	ap_derived_cache *cache; /* blobs and parsed modules of the last evaluations */
	ap_pytarget *python;     /* asked by every commit's reader */
	verdict *verdicts;
	size_t nverdicts;
	size_t verdicts_cap;
	size_t kept_weight; /* of the verdicts not dropped */
	size_t oldest;      /* every verdict before it is dropped */
	const ap_history_sink *sink;
	rule_memo *memo;   /* one per rule */
	size_t memo_bytes; /* of the answers kept */
	/* While a commit is evaluated: */
	git_tree *tree;
	ap_reader *reader;
	ap_map *found_ids;    /* path -> index into found */
	ap_git_found *found;  /* what the paths asked lead to in tree */
	bool *found_recalled; /* of found: among recalled, once each */
	size_t nfound, found_cap, found_recalled_cap;
	bool memo_asked;      /* the scan asked the memo */
	char **recalled;      /* the paths of the rules recalled (borrowed) */
	size_t nrecalled, recalled_cap;
	size_t recalled_held; /* what those rules would hold, at most */
} history;

/* Where path leads in the tree of the commit evaluated, resolved once per
 * commit, and its index into found: AP_MAP_ABSENT when it cannot be read. */
static size_t found_of(history *h, const char *path, ap_git_found *out)
{
	size_t i = ap_map_get_str(h->found_ids, path);

	if (i == AP_MAP_ABSENT) {
		if (ap_git_resolve(out, h->repo, h->tree, path) < 0)
			return AP_MAP_ABSENT;
		ap_xgrow((void **)&h->found, &h->found_cap, h->nfound + 1, sizeof *h->found);
		ap_xgrow((void **)&h->found_recalled, &h->found_recalled_cap, h->nfound + 1,
		         sizeof *h->found_recalled);
		h->found[h->nfound] = *out;
		h->found_recalled[h->nfound] = false;
		ap_xok(ap_map_put_str(h->found_ids, path, h->nfound));
		return h->nfound++;
	}
	*out = h->found[i];
	return i;
}

static bool same_found(const ap_git_found *a, const ap_git_found *b)
{
	return a->kind == b->kind && git_oid_equal(&a->oid, &b->oid);
}

static void memo_forget(history *h, rule_memo *m)
{
	if (!m->known)
		return;
	for (size_t i = 0; i < m->npaths; i++)
		free(m->paths[i]);
	free(m->paths);
	free(m->found);
	free(m->res.reason);
	ap_match_list_free(&m->res.matches);
	free(m->file);
	json_decref(m->state);
	free(m->state_reason);
	h->memo_bytes -= m->bytes;
	memset(m, 0, sizeof *m);
}

static bool memo_recall(void *ctx, size_t index, ap_rule_result *res)
{
	history *h = ctx;
	const rule_memo *m = &h->memo[index];
	ap_git_found f;

	if (!m->known)
		return false;
	for (size_t i = 0; i < m->npaths; i++)
		if (found_of(h, m->paths[i], &f) == AP_MAP_ABSENT || !same_found(&f, &m->found[i]))
			return false;
	res->status = m->res.status;
	res->file = m->file;
	res->reason = m->res.reason ? ap_xstrdup(m->res.reason) : NULL;
	ap_match_list_copy(&res->matches, &m->res.matches);
	ap_xgrow((void **)&h->recalled, &h->recalled_cap, h->nrecalled + m->npaths,
	         sizeof *h->recalled);
	for (size_t i = 0; i < m->npaths; i++) {
		size_t k = found_of(h, m->paths[i], &f);

		if (!h->found_recalled[k]) {
			h->found_recalled[k] = true;
			h->recalled[h->nrecalled++] = m->paths[i];
		}
	}
	h->recalled_held += m->held;
	return true;
}

static void memo_learn(void *ctx, size_t index, const ap_rule_result *res)
{
	history *h = ctx;
	rule_memo *m = &h->memo[index];
	size_t bytes = ap_match_json_bytes(&res->matches), n = ap_reader_count(h->reader);

	memo_forget(h, m);
	/* An answer the budget cut short depends on the rules before it. */
	if (ap_reader_round_refused(h->reader) || bytes > MEMO_BUDGET - h->memo_bytes)
		return;
	m->paths = ap_xcalloc(n ? n : 1, sizeof *m->paths);
	m->found = ap_xcalloc(n ? n : 1, sizeof *m->found);
	for (size_t i = 0; i < n; i++) {
		const char *path = ap_reader_at(h->reader, i)->path;

		if (!ap_reader_touched(h->reader, i))
			continue;
		m->paths[m->npaths] = ap_xstrdup(path);
		if (found_of(h, path, &m->found[m->npaths++]) == AP_MAP_ABSENT) {
			m->known = true; /* for memo_forget */
			memo_forget(h, m);
			return;
		}
	}
	m->res.status = res->status;
	m->res.reason = res->reason ? ap_xstrdup(res->reason) : NULL;
	ap_match_list_copy(&m->res.matches, &res->matches);
	m->file = res->file ? ap_xstrdup(res->file) : NULL;
	m->res.file = m->file;
	m->bytes = bytes;
	m->held = ap_reader_round_bytes(h->reader);
	h->memo_bytes += bytes;
	m->known = true;
}

/* The pathset of what reader looked up, with the paths of the rules
 * recalled, added to the known ones if new. */
static size_t record_pathset(history *h, const ap_reader *reader)
{
	size_t n = ap_reader_count(reader), all = n + h->nrecalled, kept = 0;
	char **paths = ap_xcalloc(all ? all : 1, sizeof *paths);
	ap_buf joined = AP_BUF_INIT;
	size_t id;

	for (size_t i = 0; i < n; i++)
		paths[i] = ap_reader_at(reader, i)->path;
	if (h->nrecalled > 0)
		memcpy(paths + n, h->recalled, h->nrecalled * sizeof *paths);
	qsort(paths, all, sizeof *paths, ap_cmp_strs);
	for (size_t i = 0; i < all; i++)
		if (kept == 0 || strcmp(paths[kept - 1], paths[i]) != 0)
			paths[kept++] = paths[i];
	n = kept;
	for (size_t i = 0; i < n; i++) {
		paths[i] = ap_xstrdup(paths[i]);
		ap_buf_append(&joined, paths[i], strlen(paths[i]) + 1);
	}
	id = ap_map_get(h->set_ids, joined.data ? joined.data : "", joined.len);
	if (id != AP_MAP_ABSENT) {
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
	} else {
		id = h->nsets;
		ap_xgrow((void **)&h->sets, &h->sets_cap, h->nsets + 1, sizeof *h->sets);
		h->sets[h->nsets++] = (pathset){paths, n};
		ap_xok(ap_map_put(h->set_ids, joined.data ? joined.data : "", joined.len, id));
	}
	ap_buf_free(&joined);
	return id;
}

/* The key of pathset set in tree: its index, then where each path leads. */
static int files_key(history *h, git_tree *tree, size_t set, ap_buf *key)
{
	const pathset *ps = &h->sets[set];

	key->len = 0;
	ap_buf_append(key, &set, sizeof set);
	for (size_t i = 0; i < ps->n; i++) {
		ap_git_found f;
		unsigned char kind;
		int rc = ap_git_resolve(&f, h->repo, tree, ps->paths[i]);

		if (rc < 0)
			return rc;
		kind = (unsigned char)f.kind;
		ap_buf_append(key, &kind, 1);
		ap_buf_append(key, f.oid.id, GIT_OID_RAWSZ);
	}
	return 0;
}

/* A rule's state as history compares it: the status and the distinct
 * tuples of named captures of the matches that have any, in the order first
 * matched (a case the source lists twice is one case, as in diff; line
 * numbers move with every edit, so they are not part of it). */
static json_t *rule_state(const ap_rule_result *res)
{
	json_t *captures = json_array();
	ap_map *seen = ap_xnonnull(ap_map_new());
	ap_buf key = AP_BUF_INIT;
	size_t i, j;

	for (i = 0; i < res->matches.n; i++) {
		const ap_match *m = &res->matches.v[i];
		json_t *one;

		if (m->ncaps == 0)
			continue;
		key.len = 0;
		for (j = 0; j < m->ncaps; j++) {
			ap_buf_append(&key, m->caps[j].name, strlen(m->caps[j].name) + 1);
			ap_buf_append(&key, m->caps[j].value, strlen(m->caps[j].value) + 1);
		}
		if (ap_map_get(seen, key.data, key.len) != AP_MAP_ABSENT)
			continue;
		ap_xok(ap_map_put(seen, key.data, key.len, i));
		one = json_object();
		for (j = 0; j < m->ncaps; j++)
			json_object_set_new(one, m->caps[j].name, ap_json_text(m->caps[j].value));
		json_array_append_new(captures, one);
	}
	ap_buf_free(&key);
	ap_map_free(seen);
	return json_pack("{s:s, s:o}", "status", ap_rule_status_name(res->status), "captures",
	                 captures);
}

/* A capture tuple as a key: "name\0value\0" each, in the order the rule
 * names them (the same in every state of one rule). */
static void tuple_key(ap_buf *key, const json_t *tuple)
{
	const char *name;
	const json_t *value;

	key->len = 0;
	json_object_foreach((json_t *)tuple, name, value) {
		ap_buf_append(key, name, strlen(name) + 1);
		ap_buf_append(key, json_string_value(value), json_string_length(value) + 1);
	}
}

json_t *ap_history_captures_missing(const json_t *from, const json_t *to)
{
	json_t *missing = json_array(), *one;
	ap_map *have = ap_xnonnull(ap_map_new());
	ap_buf key = AP_BUF_INIT;
	size_t i;

	/* Hashed, not pairwise: 10,000 cases on each side are 20,000 lookups,
	 * not 100 million comparisons. */
	json_array_foreach(to, i, one) {
		tuple_key(&key, one);
		ap_xok(ap_map_put(have, key.data, key.len, i));
	}
	json_array_foreach(from, i, one) {
		tuple_key(&key, one);
		if (ap_map_get(have, key.data, key.len) == AP_MAP_ABSENT)
			json_array_append(missing, one);
	}
	ap_buf_free(&key);
	ap_map_free(have);
	return missing;
}

/* Whether two rule states are the same: the status, and the captures as
 * sets (each state's tuples are distinct, so equal counts and one side
 * within the other is equality; the order found is no change). */
static bool same_rule_state(const json_t *a, const json_t *b)
{
	const json_t *ca = json_object_get(a, "captures"), *cb = json_object_get(b, "captures");
	json_t *missing;
	bool same;

	if (!json_equal(json_object_get(a, "status"), json_object_get(b, "status")) ||
	    json_array_size(ca) != json_array_size(cb))
		return false;
	if (json_equal(ca, cb))
		return true;
	missing = ap_history_captures_missing(ca, cb);
	same = json_array_size(missing) == 0;
	json_decref(missing);
	return same;
}

static bool same_reason(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The state of rule index in a scan: made once an answer the memo keeps
 * (the scan recalled it, or learned it), and reused while the scan's
 * limits leave it as they did. */
static json_t *memo_state(history *h, size_t index, const ap_rule_result *res)
{
	rule_memo *m = &h->memo[index];

	if (!h->memo_asked || !m->known)
		return rule_state(res);
	if (m->state != NULL && m->state_status == res->status &&
	    m->state_matches == res->matches.n && same_reason(m->state_reason, res->reason))
		return json_incref(m->state);
	json_decref(m->state);
	free(m->state_reason);
	m->state = rule_state(res);
	m->state_status = res->status;
	m->state_matches = res->matches.n;
	m->state_reason = res->reason ? ap_xstrdup(res->reason) : NULL;
	return json_incref(m->state);
}

/* A scan of tree, asking the rules' memo when use_memo. */
static int scan_tree(history *h, git_tree *tree, const char *hex, bool use_memo, ap_scan **scan,
                     ap_reader **reader)
{
	ap_scan_memo memo = {memo_recall, memo_learn, h};
	int rc = ap_reader_new_git(reader, h->repo, tree, hex, h->max_bytes, h->cache);

	if (rc < 0)
		return rc;
	ap_reader_set_python(*reader, h->python);
	h->tree = tree;
	h->reader = *reader;
	h->nfound = h->nrecalled = h->recalled_held = 0;
	h->memo_asked = use_memo;
	ap_map_clear(h->found_ids);
	/* history never launches */
	rc = ap_scan_run_memo(scan, h->rs, *reader, NULL, use_memo ? &memo : NULL);
	if (rc < 0) {
		ap_reader_free(*reader);
		ap_error_prefix("commit %s", hex);
	}
	return rc;
}

static int evaluate(history *h, git_tree *tree, const git_oid *commit, verdict *out, size_t *set)
{
	char hex[GIT_OID_HEXSZ + 1];
	ap_reader *reader;
	ap_scan *scan;
	size_t i;
	int rc;

	git_oid_tostr(hex, sizeof hex, commit);
	rc = scan_tree(h, tree, hex, true, &scan, &reader);
	if (rc < 0)
		return rc;
	/* Had the rules recalled run, the budget might have refused what the
	 * others asked: the commit is scanned again, every rule run. */
	if (!ap_reader_has_room(reader, h->recalled_held)) {
		ap_scan_free(scan);
		ap_reader_free(reader);
		rc = scan_tree(h, tree, hex, false, &scan, &reader);
		if (rc < 0)
			return rc;
	}
	out->rules = json_array();
	out->caps = json_array();
	out->weight = 1;
	for (i = 0; i < scan->nrules; i++) {
		json_t *state = memo_state(h, i, &scan->rules[i]);
		out->weight += 1 + json_array_size(json_object_get(state, "captures"));
		json_array_append_new(out->rules, state);
	}
	for (i = 0; i < scan->ncaps; i++)
		json_array_append_new(out->caps, json_boolean(scan->caps[i].supported));
	ap_scan_free(scan);
	*set = record_pathset(h, reader);
	ap_reader_free(reader);
	ap_derived_cache_sweep(h->cache);
	return 0;
}

/* The verdict of a commit: looked up by commit; else reused from an
 * evaluation whose every looked-up path leads to the same object here (of
 * the pathsets of the parent's verdict, hint, and of the last evaluation:
 * what the rules read depends on what the files say, so only a pathset seen
 * near this commit is worth resolving); else evaluated. */
static int verdict_of(history *h, git_commit *commit, size_t hint, size_t *out)
{
	const git_oid *id = git_commit_id(commit);
	size_t sets[2] = {AP_MAP_ABSENT, AP_MAP_ABSENT};
	ap_buf key = AP_BUF_INIT;
	git_tree *tree;
	int rc = 0;

	*out = ap_map_get(h->by_commit, id->id, GIT_OID_RAWSZ);
	if (*out != AP_MAP_ABSENT && h->verdicts[*out].rules != NULL)
		return 0;
	*out = AP_MAP_ABSENT;
	if (git_commit_tree(&tree, commit) < 0)
		return ap_git_fail("reading a commit's tree");
	if (hint != AP_MAP_ABSENT && h->verdicts[hint].rules != NULL)
		sets[0] = h->verdicts[hint].set;
	if (h->nverdicts > 0 && h->verdicts[h->nverdicts - 1].set != sets[0])
		sets[1] = h->verdicts[h->nverdicts - 1].set;
	for (size_t k = 0; k < 2 && *out == AP_MAP_ABSENT; k++) {
		if (sets[k] == AP_MAP_ABSENT)
			continue;
		rc = files_key(h, tree, sets[k], &key);
		if (rc < 0)
			goto done;
		*out = ap_map_get(h->by_files, key.data, key.len);
		if (*out != AP_MAP_ABSENT && h->verdicts[*out].rules == NULL)
			*out = AP_MAP_ABSENT;
	}
	if (*out == AP_MAP_ABSENT) {
		size_t set;

		ap_xgrow((void **)&h->verdicts, &h->verdicts_cap, h->nverdicts + 1,
		         sizeof *h->verdicts);
		rc = evaluate(h, tree, id, &h->verdicts[h->nverdicts], &set);
		if (rc < 0)
			goto done;
		h->verdicts[h->nverdicts].set = set;
		h->kept_weight += h->verdicts[h->nverdicts].weight;
		*out = h->nverdicts++;
		rc = files_key(h, tree, set, &key);
		if (rc < 0)
			goto done;
		ap_xok(ap_map_put(h->by_files, key.data, key.len, *out));
	}
	ap_xok(ap_map_put(h->by_commit, id->id, GIT_OID_RAWSZ, *out));
done:
	ap_buf_free(&key);
	git_tree_free(tree);
	return rc;
}

/* --- Revisions ---------------------------------------------------------- */

/* The commit rev names (an empty rev is HEAD, as in "A.."). */
/* Whether rev is a reference whose object cannot be read (a truncated or
 * missing pack): the repository is corrupt, which "unknown revision" would
 * hide. Sets the message when it is. A dangling symbolic ref (HEAD of an
 * empty repository) is no corruption. */
static bool corrupt_ref(git_repository *repo, const char *rev)
{
	git_reference *ref, *resolved;
	char hex[GIT_OID_HEXSZ + 1];
	bool corrupt = false;

	if (git_reference_dwim(&ref, repo, rev) < 0)
		return false;
	if (git_reference_resolve(&resolved, ref) == 0) {
		git_object *obj;
		const git_oid *id = git_reference_target(resolved);

		if (git_object_lookup(&obj, repo, id, GIT_OBJECT_ANY) == 0) {
			git_object_free(obj);
		} else {
			git_oid_tostr(hex, sizeof hex, id);
			corrupt = true;
			ap_error_set("the repository is corrupt: '%s' names %s, which cannot be read",
			             rev, hex);
		}
		git_reference_free(resolved);
	}
	git_reference_free(ref);
	return corrupt;
}

static int resolve_commit(git_oid *out, git_repository *repo, const char *rev)
{
	git_object *obj, *commit;
	int rc;

	/* Before revparse, whose failure on an unreadable object leaks. */
	if (corrupt_ref(repo, rev[0] ? rev : "HEAD"))
		return AP_EINPUT;
	rc = git_revparse_single(&obj, repo, rev[0] ? rev : "HEAD");
	if (rc == GIT_ENOTFOUND || rc == GIT_EAMBIGUOUS) {
		ap_error_set("%s revision '%s'", rc == GIT_EAMBIGUOUS ? "ambiguous" : "unknown",
		             rev[0] ? rev : "HEAD");
		return AP_EINPUT;
	}
	if (rc < 0) {
		const git_error *e = git_error_last();

		ap_error_set("invalid revision '%s': %s", rev,
		             e && e->message ? e->message : "unknown libgit2 error");
		return AP_EINPUT;
	}
	rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0) {
		ap_error_set("'%s' does not name a commit", rev);
		return AP_EINPUT;
	}
	git_oid_cpy(out, git_object_id(commit));
	git_object_free(commit);
	return 0;
}

/* Hides from walk the merge bases of a and b ("A...B"). */
static int hide_merge_bases(git_revwalk *walk, git_repository *repo, const git_oid *a,
                            const git_oid *b)
{
	git_oidarray bases = {NULL, 0};
	size_t i;
	int rc = git_merge_bases(&bases, repo, a, b);

	if (rc == GIT_ENOTFOUND) /* unrelated histories: nothing in common */
		return 0;
	if (rc < 0)
		return ap_git_fail("finding the merge base");
	for (i = 0; rc == 0 && i < bases.count; i++)
		if (git_revwalk_hide(walk, &bases.ids[i]) < 0)
			rc = ap_git_fail("walking");
	git_oidarray_dispose(&bases);
	return rc;
}

/* Pushes what range means onto walk, as git rev-list reads it: "A..B",
 * "A...B" (either side empty meaning HEAD) or one revision. */
static int push_range(git_revwalk *walk, git_repository *repo, const char *range)
{
	const char *dots = strstr(range, "..");
	bool symmetric = dots && dots[2] == '.';
	git_oid from, to;
	char *left;
	int rc;

	if (dots == NULL) {
		rc = resolve_commit(&to, repo, range);
		if (rc == 0 && git_revwalk_push(walk, &to) < 0)
			rc = ap_git_fail("walking");
		return rc;
	}
	left = ap_xstrndup(range, (size_t)(dots - range));
	rc = resolve_commit(&from, repo, left);
	free(left);
	if (rc == 0)
		rc = resolve_commit(&to, repo, dots + (symmetric ? 3 : 2));
	if (rc < 0)
		return rc;
	if (git_revwalk_push(walk, &to) < 0 ||
	    (symmetric ? git_revwalk_push(walk, &from) : git_revwalk_hide(walk, &from)) < 0)
		return ap_git_fail("walking");
	return symmetric ? hide_merge_bases(walk, repo, &from, &to) : 0;
}

static int list_commits(git_oid **out, size_t *n, git_repository *repo, const char *range)
{
	git_revwalk *walk;
	size_t cap = 0;
	git_oid id;
	int rc;

	*out = NULL;
	*n = 0;
	if (git_revwalk_new(&walk, repo) < 0)
		return ap_git_fail("walking");
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME | GIT_SORT_REVERSE);
	rc = push_range(walk, repo, range);
	if (rc == 0) {
		while ((rc = git_revwalk_next(&id, walk)) == 0) {
			ap_xgrow((void **)out, &cap, *n + 1, sizeof **out);
			git_oid_cpy(&(*out)[(*n)++], &id);
		}
		rc = rc == GIT_ITEROVER ? 0 : ap_git_fail("walking");
	}
	git_revwalk_free(walk);
	return rc;
}

/* --- The report ---------------------------------------------------------- */

/* The committer's time in ISO 8601, in the committer's own offset. */
static void format_date(char out[32], const git_time *when)
{
	time_t local = (time_t)(when->time + (git_time_t)when->offset * 60);
	int off = when->offset < 0 ? -when->offset : when->offset;
	struct tm tm;

	gmtime_r(&local, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + strlen(out), 32 - strlen(out), "%c%02d:%02d", when->offset < 0 ? '-' : '+',
	         off / 60, off % 60);
}

/* Sets commit, date and subject of c on obj. */
static void describe_commit(json_t *obj, git_commit *c)
{
	char hex[GIT_OID_HEXSZ + 1], date[32];
	const char *subject = git_commit_summary(c);

	git_oid_tostr(hex, sizeof hex, git_commit_id(c));
	format_date(date, &git_commit_committer(c)->when);
	json_object_set_new(obj, "commit", json_string(hex));
	json_object_set_new(obj, "date", json_string(date));
	json_object_set_new(obj, "subject", ap_json_text(subject ? subject : ""));
}

static json_t *initial_state(const history *h, const verdict *v, git_commit *c)
{
	json_t *obj = json_object(), *rules = json_object(), *caps = json_object();
	size_t i;

	describe_commit(obj, c);
	for (i = 0; i < h->rs->nrules; i++)
		json_object_set(rules, h->rs->rules[i].id, json_array_get(v->rules, i));
	for (i = 0; i < h->rs->nprobes; i++)
		json_object_set(caps, h->rs->probes[i].id, json_array_get(v->caps, i));
	json_object_set_new(obj, "rules", rules);
	json_object_set_new(obj, "capabilities", caps);
	return obj;
}

/* Hands one change to the sink, which may keep nothing of it. */
static int emit_change(const history *h, const char *id, const char *kind, git_commit *c,
                       json_t *before, json_t *after)
{
	json_t *change = json_pack("{s:s, s:s}", "id", id, "kind", kind);
	int rc;

	describe_commit(change, c);
	json_object_set(change, "before", before);
	json_object_set(change, "after", after);
	rc = h->sink->change(h->sink->ctx, change);
	json_decref(change);
	return rc;
}

static int compare(const history *h, const verdict *before, const verdict *after,
                   git_commit *c)
{
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < h->rs->nrules; i++) {
		json_t *b = json_array_get(before->rules, i), *a = json_array_get(after->rules, i);

		if (!same_rule_state(b, a))
			rc = emit_change(h, h->rs->rules[i].id, "rule", c, b, a);
	}
	for (i = 0; rc == 0 && i < h->rs->nprobes; i++) {
		json_t *b = json_array_get(before->caps, i), *a = json_array_get(after->caps, i);

		if (!json_equal(b, a))
			rc = emit_change(h, h->rs->probes[i].id, "capability", c, b, a);
	}
	return rc;
}

/* Drops the oldest verdicts but keep while those kept pass the budget:
 * memory stays bounded whatever the range's length. */
static void drop_old_verdicts(history *h, size_t keep)
{
	for (size_t i = h->oldest; i < h->nverdicts && h->kept_weight > VERDICT_BUDGET; i++) {
		verdict *v = &h->verdicts[i];

		if (i == keep || v->rules == NULL)
			continue;
		h->kept_weight -= v->weight;
		json_decref(v->rules);
		json_decref(v->caps);
		v->rules = v->caps = NULL;
	}
	while (h->oldest < h->nverdicts && h->verdicts[h->oldest].rules == NULL)
		h->oldest++;
}

/* Handles one commit of the walk: its verdict, compared with its first
 * parent's. The first commit also sets the initial state: its parent's when
 * it has one (so "A..B" reports what the commits after A changed), else its
 * own. */
static int visit(history *h, git_commit *c, bool first)
{
	git_commit *parent = NULL;
	size_t mine, theirs = AP_MAP_ABSENT;
	int rc = 0;

	if (git_commit_parentcount(c) > 0) {
		if (git_commit_parent(&parent, c, 0) < 0)
			return ap_git_fail("reading a parent commit");
		rc = verdict_of(h, parent, AP_MAP_ABSENT, &theirs);
	}
	if (rc == 0)
		rc = verdict_of(h, c, theirs, &mine);
	if (rc == 0 && first) {
		json_t *initial = parent ? initial_state(h, &h->verdicts[theirs], parent)
		                         : initial_state(h, &h->verdicts[mine], c);
		rc = h->sink->initial(h->sink->ctx, initial);
		json_decref(initial);
	}
	if (rc == 0 && parent != NULL)
		rc = compare(h, &h->verdicts[theirs], &h->verdicts[mine], c);
	if (rc == 0)
		drop_old_verdicts(h, mine);
	git_commit_free(parent);
	return rc;
}

static int walk(history *h, const char *range, const ap_history_opts *opts)
{
	git_oid *ids;
	size_t n, i;
	int rc = list_commits(&ids, &n, h->repo, range);

	if (rc == 0)
		rc = h->sink->start(h->sink->ctx, range, n);
	for (i = 0; rc == 0 && i < n; i++) {
		git_commit *c;

		if (git_commit_lookup(&c, h->repo, &ids[i]) < 0) {
			rc = ap_git_fail("reading a commit");
			break;
		}
		rc = visit(h, c, i == 0);
		git_commit_free(c);
		if (opts && opts->progress)
			opts->progress(opts->progress_ctx, i + 1, n);
	}
	free(ids);
	return rc;
}

static void history_free(history *h)
{
	size_t i;

	ap_pytarget_free(h->python);
	for (i = h->oldest; i < h->nverdicts; i++) {
		json_decref(h->verdicts[i].rules);
		json_decref(h->verdicts[i].caps);
	}
	free(h->verdicts);
	for (i = 0; i < h->nsets; i++) {
		for (size_t j = 0; j < h->sets[i].n; j++)
			free(h->sets[i].paths[j]);
		free(h->sets[i].paths);
	}
	free(h->sets);
	ap_map_free(h->set_ids);
	ap_map_free(h->by_files);
	ap_map_free(h->by_commit);
	for (i = 0; i < h->rs->nrules; i++)
		memo_forget(h, &h->memo[i]);
	free(h->memo);
	ap_map_free(h->found_ids);
	free(h->found);
	free(h->found_recalled);
	free(h->recalled);
	ap_derived_cache_free(h->cache);
	git_repository_free(h->repo);
}

/* The repository at git_dir itself (a bare one, or a work tree's top),
 * never one found by searching the folders above. */
static int open_repository(git_repository **out, const char *git_dir)
{
	struct stat st;

	/* A path that is not there is told as such, not as "not a repository". */
	if (stat(git_dir, &st) != 0) {
		ap_error_set("%s: %s", git_dir, strerror(errno));
		return AP_EINPUT;
	}
	if (git_repository_open_ext(out, git_dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		ap_error_set("not a git repository: %s", git_dir);
		return AP_EINPUT;
	}
	if (git_repository_is_shallow(*out) == 1) {
		/* libgit2 cannot walk past the missing parents */
		ap_error_set("%s is a shallow clone; history needs every commit "
		             "(git fetch --unshallow)", git_dir);
		git_repository_free(*out);
		*out = NULL;
		return AP_EINPUT;
	}
	return 0;
}

int ap_history_run(const ap_ruleset *rs, const char *git_dir, const char *range,
                   const ap_history_opts *opts, const ap_history_sink *sink, size_t *evaluated)
{
	history h = {.rs = rs, .sink = sink};
	int rc;

	*evaluated = 0;
	if ((rc = ap_pytarget_check_env()) < 0)
		return rc;
	h.max_bytes = opts && opts->max_bytes ? opts->max_bytes : AP_READER_DEFAULT_MAX_BYTES;
	git_libgit2_init();
	/* Every path is resolved from the root at each commit: AITER's
	 * folders of more than libgit2's 4 KiB default would be read again each
	 * time (its cache's total cap, 256 MiB, still holds). */
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_TREE, (size_t)1 << 20);
	rc = open_repository(&h.repo, git_dir);
	if (rc < 0) {
		git_libgit2_shutdown();
		return rc;
	}
	h.set_ids = ap_xnonnull(ap_map_new());
	h.by_files = ap_xnonnull(ap_map_new());
	h.by_commit = ap_xnonnull(ap_map_new());
	h.found_ids = ap_xnonnull(ap_map_new());
	h.memo = ap_xcalloc(rs->nrules ? rs->nrules : 1, sizeof *h.memo);
	h.cache = ap_derived_cache_new();
	h.python = ap_pytarget_new(opts ? opts->python : NULL, opts ? opts->python_version : NULL);
	rc = walk(&h, range, opts);
	if (rc == 0 && ap_pytarget_error(h.python) != NULL) {
		ap_error_set("%s (name the interpreter with --python PATH, or its version with "
		             "--python-version X.Y)", ap_pytarget_error(h.python));
		rc = AP_EINPUT;
	}
	*evaluated = h.nverdicts;
	history_free(&h);
	git_libgit2_shutdown();
	return rc < 0 ? rc : 0;
}
