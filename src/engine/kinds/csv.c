/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/csv-table.h"
#include "engine/lang/python/pysource.h"
#include "engine/kind.h"

/* `csv`: rows of a CSV table with a header row (AITER's kernel tables
 * hsa/<arch>/mla/mla_asm.csv and tuned configs aiter/configs/ tables):
 *
 *   csv:
 *     where: {qType: bf16, Gqa: 16, causal: {eq: 1, missing: 1}, qSeqLen: {in: [1, 4]}}
 *     capture: {qlen: qSeqLen, lse: {column: lse, missing: 1}}
 *
 * Each row that meets every condition is a match, captures naming columns.
 * A table without a named column is an error, unless the condition or the
 * capture says what value the column has when absent (AITER's tables gained
 * columns over releases: lse, cprr).
 *
 * `comments:` says how comments are read: `codegen` (default under hsa/)
 * as the tree's hsa/codegen.py reads its kernel tables (dropped since
 * v0.1.12, data before), `strip` dropped that way, `none` (default
 * elsewhere) data, as pandas reads a table. */

typedef enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN } cond_op;

static const char *const op_keys[] = {"eq", "ne", "lt", "le", "gt", "ge", "in"};
#define NOPS (sizeof op_keys / sizeof op_keys[0])

struct cond {
	char *column;
	cond_op op;
	char **values; /* one, or the list of `in` */
	size_t nvalues;
	char *missing; /* the column's value when the table has none; NULL: an error */
};

struct capture {
	char *name;
	char *column;
	char *missing; /* the value when the table has no such column; NULL: an error */
};

typedef enum { COMMENTS_DEFAULT, COMMENTS_CODEGEN, COMMENTS_STRIP, COMMENTS_NONE } comments_mode;

static const char *const comments_names[] = {"codegen", "strip", "none"};

struct csv_rule {
	struct cond *conds;
	size_t nconds;
	struct capture *caps;
	size_t ncaps;
	comments_mode comments;
	ap_pyconf pyconf; /* for reading hsa/codegen.py */
};

static const char *const csv_options[] = {"comments", NULL};

/* A whole decimal number (integer or fraction, sign allowed), as *out. */
static bool number_of(const char *s, double *out)
{
	char *end;

	if (*s == '\0' || strchr(" \t", *s) != NULL)
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return *end == '\0' && errno != ERANGE && isfinite(*out) &&
	       strspn(s, "+-0123456789.eE") == strlen(s);
}

/* Equal as numbers when both are numbers (so 1 and 1.0 agree), else as text. */
static int compare(const char *field, const char *value, bool *numeric)
{
	double a, b;

	*numeric = number_of(field, &a) && number_of(value, &b);
	if (*numeric)
		return (a > b) - (a < b);
	return strcmp(field, value);
}

static bool cond_holds(const struct cond *c, const char *field)
{
	bool numeric;
	int r;

	if (field == NULL)
		return false;
	if (c->op == OP_IN) {
		for (size_t i = 0; i < c->nvalues; i++)
			if (compare(field, c->values[i], &numeric) == 0)
				return true;
		return false;
	}
	r = compare(field, c->values[0], &numeric);
	switch (c->op) {
	case OP_EQ:
		return r == 0;
	case OP_NE:
		return r != 0;
	case OP_LT:
		return numeric && r < 0;
	case OP_LE:
		return numeric && r <= 0;
	case OP_GT:
		return numeric && r > 0;
	case OP_GE:
		return numeric && r >= 0;
	case OP_IN:
		break;
	}
	return false;
}

static int scalar_text(const char *pack, const ap_ynode *n, const char *what, char **out)
{
	if (n->kind != AP_Y_SCALAR || ap_y_is_null(n))
		return ap_y_fail(pack, n, "%s must be a value, not %s", what, ap_y_kind_name(n));
	return ap_y_string(pack, n, what, out);
}

static int load_cond(const char *pack, const ap_ynode *key, const ap_ynode *val, struct cond *c)
{
	static const char *const keys[] = {"eq", "ne", "lt", "le", "gt", "ge", "in", "missing"};
	ap_yfield f[NOPS + 1];
	const ap_yfield *first, *second;
	double num;
	int rc;

	c->column = ap_xstrdup(key->s);
	if (val->kind != AP_Y_MAP) {
		c->op = OP_EQ;
		c->values = ap_xcalloc(1, sizeof *c->values);
		c->nvalues = 1;
		return scalar_text(pack, val, "a 'where' value", &c->values[0]);
	}
	if ((rc = ap_y_fields(pack, val, "a 'where' condition", keys, NOPS + 1, f)) < 0)
		return rc;
	second = ap_y_second_present(f, NOPS, &first);
	if (first == NULL)
		return ap_y_fail(pack, val,
		                 "a 'where' condition needs one of 'eq', 'ne', 'lt', 'le', 'gt', 'ge' "
		                 "or 'in'");
	if (second != NULL)
		return ap_y_fail(pack, second->key,
		                 "both '%s' and '%s' given: a 'where' condition has one operator",
		                 first->key->s, second->key->s);
	c->op = (cond_op)(first - f);
	if (f[NOPS].key != NULL &&
	    (rc = scalar_text(pack, f[NOPS].val, "'missing'", &c->missing)) < 0)
		return rc;
	if (c->op == OP_IN) {
		const ap_ynode *seq = first->val;
		if (seq->kind != AP_Y_SEQ || seq->nkids == 0)
			return ap_y_fail(pack, seq, "'in' must be a non-empty sequence of values");
		c->values = ap_xcalloc(seq->nkids, sizeof *c->values);
		for (size_t i = 0; i < seq->nkids; i++) {
			c->nvalues++;
			if ((rc = scalar_text(pack, seq->kids[i], "an 'in' value", &c->values[i])) < 0)
				return rc;
		}
		return 0;
	}
	c->values = ap_xcalloc(1, sizeof *c->values);
	c->nvalues = 1;
	if ((rc = scalar_text(pack, first->val, first->key->s, &c->values[0])) < 0)
		return rc;
	if (c->op >= OP_LT && !number_of(c->values[0], &num))
		return ap_y_fail(pack, first->val, "'%s' compares numbers, and '%s' is not one",
		                 first->key->s, c->values[0]);
	return 0;
}

static void csv_free(void *state)
{
	struct csv_rule *cr = state;

	if (cr == NULL)
		return;
	for (size_t i = 0; i < cr->nconds; i++) {
		free(cr->conds[i].column);
		ap_y_strings_free(cr->conds[i].values, cr->conds[i].nvalues);
		free(cr->conds[i].missing);
	}
	for (size_t i = 0; i < cr->ncaps; i++) {
		free(cr->caps[i].name);
		free(cr->caps[i].column);
		free(cr->caps[i].missing);
	}
	free(cr->conds);
	free(cr->caps);
	ap_pyconf_free(&cr->pyconf);
	free(cr);
}

/* A capture's column: a name, or {column: NAME, missing: VALUE}. */
static int load_capture(const char *pack, const ap_ynode *val, struct capture *cap)
{
	static const char *const keys[] = {"column", "missing"};
	ap_yfield f[2];
	int rc;

	if (val->kind != AP_Y_MAP)
		return scalar_text(pack, val, "a capture's column", &cap->column);
	if ((rc = ap_y_fields(pack, val, "a capture", keys, 2, f)) < 0)
		return rc;
	if (f[0].key == NULL)
		return ap_y_fail(pack, val, "a capture needs its 'column'");
	if ((rc = scalar_text(pack, f[0].val, "a capture's column", &cap->column)) < 0)
		return rc;
	if (f[1].key != NULL)
		return scalar_text(pack, f[1].val, "'missing'", &cap->missing);
	return 0;
}

static int csv_load(const ap_kind_load *l, void **state)
{
	static const char *const keys[] = {"where", "capture"};
	struct csv_rule *cr = ap_xcalloc(1, sizeof *cr);
	ap_yfield f[2];
	int rc;

	*state = cr;
	if ((rc = ap_y_need_map(l->pack, l->arg, "'csv'")) < 0 ||
	    (rc = ap_y_fields(l->pack, l->arg, "'csv'", keys, 2, f)) < 0)
		return rc;
	if (l->opts[0].key != NULL) {
		char *mode;
		if ((rc = scalar_text(l->pack, l->opts[0].val, "'comments'", &mode)) < 0)
			return rc;
		for (size_t k = 0; k < 3 && cr->comments == COMMENTS_DEFAULT; k++)
			if (strcmp(mode, comments_names[k]) == 0)
				cr->comments = (comments_mode)(k + 1);
		free(mode);
		if (cr->comments == COMMENTS_DEFAULT)
			return ap_y_fail(l->pack, l->opts[0].val,
			                 "'comments' is one of codegen, strip or none");
	}
	{
		ap_yfield none = {0};
		if ((rc = ap_pyconf_load(l->pack, &none, &cr->pyconf)) < 0)
			return rc;
	}
	if (f[0].key != NULL) {
		const ap_ynode *w = f[0].val;
		if ((rc = ap_y_need_map(l->pack, w, "'where'")) < 0)
			return rc;
		cr->conds = ap_xcalloc(w->nkids / 2 + 1, sizeof *cr->conds);
		for (size_t k = 0; k + 1 < w->nkids; k += 2) {
			if (!ap_y_is_string(w->kids[k]))
				return ap_y_fail(l->pack, w->kids[k], "a column name must be a string");
			cr->nconds++;
			rc = load_cond(l->pack, w->kids[k], w->kids[k + 1], &cr->conds[cr->nconds - 1]);
			if (rc < 0)
				return rc;
		}
	}
	if (f[1].key != NULL) {
		const ap_ynode *c = f[1].val;
		if ((rc = ap_y_need_map(l->pack, c, "'capture'")) < 0)
			return rc;
		cr->caps = ap_xcalloc(c->nkids / 2 + 1, sizeof *cr->caps);
		for (size_t k = 0; k + 1 < c->nkids; k += 2) {
			struct capture *cap = &cr->caps[cr->ncaps++];
			if ((rc = ap_y_string(l->pack, c->kids[k], "a capture name", &cap->name)) < 0 ||
			    (rc = load_capture(l->pack, c->kids[k + 1], cap)) < 0)
				return rc;
		}
	}
	return 0;
}

static char *columns_text(const ap_csv *t)
{
	ap_buf b = AP_BUF_INIT;

	for (size_t i = 0; i < ap_csv_ncols(t); i++)
		ap_buf_printf(&b, "%s%s", i ? ", " : "", ap_csv_col_name(t, i));
	return ap_buf_detach(&b);
}

static bool no_column(ap_rule_result *res, const ap_csv *t, const char *what, const char *col)
{
	char *cols = columns_text(t);

	ap_rule_set_error(res, "the table has no column '%s' (%s; its columns: %s)", col, what, cols);
	free(cols);
	return false;
}

/* The column of each condition and capture, or false with an error. */
static bool find_columns(const struct csv_rule *cr, const ap_csv *t, long *cond_col,
                         long *cap_col, ap_rule_result *res)
{
	for (size_t i = 0; i < cr->nconds; i++) {
		cond_col[i] = ap_csv_col(t, cr->conds[i].column);
		if (cond_col[i] < 0 && cr->conds[i].missing == NULL)
			return no_column(res, t, "named in 'where'", cr->conds[i].column);
	}
	for (size_t i = 0; i < cr->ncaps; i++) {
		cap_col[i] = ap_csv_col(t, cr->caps[i].column);
		if (cap_col[i] < 0 && cr->caps[i].missing == NULL)
			return no_column(res, t, "named in 'capture'", cr->caps[i].column);
	}
	return true;
}

#define CODEGEN_PY "hsa/codegen.py"

/* Whether the tree's hsa/codegen.py drops a table's comments before pandas
 * reads it (it defines _strip_csv_comments and read_csv_strip_comments, as
 * from v0.1.12): 1 yes, 0 no, -1 not known (*why says why: it is missing or
 * does not parse). */
static int codegen_strips(const struct csv_rule *cr, ap_reader *r, char **why)
{
	const ap_file *f = ap_reader_get(r, CODEGEN_PY);
	const ap_py_module *m;
	const char *error;

	if (f->status != AP_FILE_OK) {
		*why = ap_xasprintf("%s: %s", CODEGEN_PY, f->reason);
		return -1;
	}
	m = ap_pysource_module(r, f, &cr->pyconf, &error);
	if (m == NULL) {
		*why = ap_xasprintf("%s: %s", CODEGEN_PY, error);
		return -1;
	}
	return ap_py_find_def(m, "_strip_csv_comments") != NULL &&
	       ap_py_find_def(m, "read_csv_strip_comments") != NULL;
}

/* The table, read with its comments as the rule says; NULL with the
 * rule's status set when it cannot be. */
static ap_csv *read_table(const struct csv_rule *cr, ap_kind_run *run)
{
	const ap_file *f = run->file;
	comments_mode mode = cr->comments;
	ap_csv *t = NULL;
	bool stripped = false;
	char *why = NULL;
	int strips = mode != COMMENTS_NONE, rc;

	if (mode == COMMENTS_DEFAULT)
		strips = strncmp(f->path, "hsa/", 4) == 0 ? codegen_strips(cr, run->reader, &why) : 0;
	else if (mode == COMMENTS_CODEGEN)
		strips = codegen_strips(cr, run->reader, &why);
	if (strips == 0)
		rc = ap_csv_parse(&t, f->data, f->len);
	else
		rc = ap_csv_parse_codegen(&t, f->data, f->len, &stripped);
	if (strips < 0 && (stripped || rc < 0)) {
		/* Which reading built this AITER's kernels matters, unless the
		 * table is broken either way. */
		ap_csv *as_is = NULL;
		if (stripped || ap_csv_parse(&as_is, f->data, f->len) >= 0) {
			ap_csv_free(t);
			ap_csv_free(as_is);
			ap_rule_set_error(run->res, "the table reads otherwise with its comments dropped "
			                  "(as hsa/codegen.py does from v0.1.12) and kept (before), and "
			                  "what this tree's codegen does is not known: %s", why);
			run->res->status = AP_RULE_UNKNOWN;
			free(why);
			return NULL;
		}
	}
	free(why);
	if (rc < 0) {
		ap_rule_set_error(run->res, "%s", ap_error_last());
		return NULL;
	}
	return t;
}

static void csv_run(const void *state, ap_kind_run *run)
{
	const struct csv_rule *cr = state;
	ap_rule_result *res = run->res;
	const ap_text *lines = ap_reader_text(run->reader, run->file, AP_LANG_TEXT, AP_WS_KEEP);
	long *cond_col, *cap_col;
	ap_csv *t;

	if (lines == NULL) {
		ap_rule_set_error(res, "%s", ap_error_last());
		return;
	}
	if ((t = read_table(cr, run)) == NULL)
		return;
	cond_col = ap_xcalloc(cr->nconds + 1, sizeof *cond_col);
	cap_col = ap_xcalloc(cr->ncaps + 1, sizeof *cap_col);
	if (find_columns(cr, t, cond_col, cap_col, res)) {
		for (size_t row = 0; row < ap_csv_nrows(t); row++) {
			bool ok = true;
			ap_match *m;
			for (size_t i = 0; i < cr->nconds && ok; i++)
				ok = cond_holds(&cr->conds[i],
				                cond_col[i] < 0 ? cr->conds[i].missing
				                                : ap_csv_field(t, row, (size_t)cond_col[i]));
			if (!ok)
				continue;
			m = ap_match_add_line(&res->matches, lines, ap_csv_row_line(t, row));
			for (size_t i = 0; i < cr->ncaps; i++) {
				const char *v = cap_col[i] < 0 ? cr->caps[i].missing
				                               : ap_csv_field(t, row, (size_t)cap_col[i]);
				if (v != NULL)
					ap_match_capture(m, cr->caps[i].name, v, strlen(v));
			}
			if (run->rule->collect == AP_COLLECT_FIRST || res->matches.over)
				break;
		}
		res->status = res->matches.n > 0 ? AP_RULE_MATCHED : AP_RULE_UNMATCHED;
	}
	free(cond_col);
	free(cap_col);
	ap_csv_free(t);
}

const ap_kind ap_kind_csv = {
	.key = "csv",
	.options = csv_options,
	.flags = AP_KIND_FILE | AP_KIND_COLLECT,
	.load = csv_load,
	.run = csv_run,
	.free = csv_free,
};
