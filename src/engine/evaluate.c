/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/evaluate.h"

/* rule run once; res zeroed. */
static void run_rule(ap_rule_result *res, const ap_rule *rule, ap_reader *r)
{
	ap_kind_rule view = ap_rule_view(rule);
	ap_kind_run run = {.reader = r, .rule = &view, .res = res};
	const ap_file *f;

	res->rule = rule;
	if (rule->kind->flags & AP_KIND_FILE) {
		f = ap_kind_pick_file(r, &view);
		if (f == NULL) {
			res->status = AP_RULE_MISSING;
			res->reason = ap_kind_missing_reason(&view);
			return;
		}
		res->file = f->path;
		if (f->status == AP_FILE_ERROR) {
			res->status = AP_RULE_ERROR;
			res->reason = ap_xstrdup(f->reason);
			return;
		}
		run.file = f;
	}
	ap_kind_run_rule(rule->kind, rule->state, &run);
}

/* spent: what the scan's rules before this one take of the manifest. The
 * rule is run first with the tries of the Python modules it reads left
 * unasked (reader.h); only an answer that pass could not give, where it
 * left one unasked, is asked again, deciding each try. */
static void check_rule(ap_rule_result *res, const ap_rule *rule, size_t index, ap_reader *r,
                       const ap_scan_memo *memo, size_t *spent)
{
	size_t bytes;

	if (memo != NULL && memo->recall(memo->ctx, index, res)) {
		res->rule = rule;
	} else {
		ap_reader_begin_round(r);
		ap_reader_set_tries_unasked(r, true);
		run_rule(res, rule, r);
		if ((res->status == AP_RULE_UNKNOWN || res->status == AP_RULE_ERROR) &&
		    ap_reader_unasked(r) > 0) {
			free(res->reason);
			ap_match_list_free(&res->matches);
			memset(res, 0, sizeof *res);
			ap_reader_set_tries_unasked(r, false);
			run_rule(res, rule, r);
		}
		ap_reader_set_tries_unasked(r, false);
		if (memo != NULL)
			memo->learn(memo->ctx, index, res);
	}
	if (res->matches.over > 0) {
		ap_rule_set_error(res, "matched more than %d times, the most a rule may report",
		                  AP_MATCH_MAX);
		ap_match_list_free(&res->matches);
	}
	/* A verdict from matches the manifest cannot hold would be one no
	 * reader could check: the rule is an error instead, and says why. */
	bytes = ap_match_json_bytes(&res->matches);
	if (bytes > AP_MATCH_JSON_MAX) {
		ap_rule_set_error(res, "its %zu matches would take %zu MiB of the manifest, more than "
		                  "the %zu MiB a rule's may", res->matches.n, bytes >> 20,
		                  AP_MATCH_JSON_MAX >> 20);
		ap_match_list_free(&res->matches);
	} else if (bytes > AP_MATCH_SCAN_JSON_MAX - *spent) {
		ap_rule_set_error(res, "its %zu matches would take the scan's matches past %zu MiB of "
		                  "the manifest, the most they may take (%zu MiB before this rule)",
		                  res->matches.n, AP_MATCH_SCAN_JSON_MAX >> 20, *spent >> 20);
		ap_match_list_free(&res->matches);
	} else {
		*spent += bytes;
	}
	/* What a kind found before it could not decide is no evidence. */
	if (res->status == AP_RULE_UNKNOWN)
		ap_match_list_free(&res->matches);
}

/* Requirements are three-valued: a rule whose file is missing or unreadable,
 * or that ends `unknown` (what its file binds is known only by running it),
 * is unknown, and `not` of unknown stays unknown, so input that cannot decide
 * never makes a capability supported. */
typedef enum { TRI_FALSE, TRI_TRUE, TRI_UNKNOWN } tri;

typedef struct verdict {
	tri value;
	ap_buf reason;
	char **evidence;
	size_t nevidence;
	size_t evidence_cap;
} verdict;

/* A capability's reason and evidence are bounded, so that probes requiring
 * probes (each naming the last twice, say) cannot grow them exponentially. */
#define REASON_MAX 4096
#define EVIDENCE_MAX 64

/* Cuts a reason past REASON_MAX at a character boundary, saying so. */
static void bound_reason(ap_buf *b)
{
	size_t cut = REASON_MAX;

	if (b->len <= REASON_MAX)
		return;
	while (cut > 0 && ((unsigned char)b->data[cut] & 0xC0) == 0x80)
		cut--;
	b->len = cut;
	b->data[cut] = '\0';
	ap_buf_puts(b, " … (cut)");
}

static void add_evidence(verdict *v, const char *item)
{
	size_t i;

	if (v->nevidence >= EVIDENCE_MAX)
		return;
	for (i = 0; i < v->nevidence; i++)
		if (strcmp(v->evidence[i], item) == 0)
			return;
	ap_xgrow((void **)&v->evidence, &v->evidence_cap, v->nevidence + 1, sizeof *v->evidence);
	v->evidence[v->nevidence++] = ap_xstrdup(item);
}

static void verdict_free(verdict *v)
{
	size_t i;

	for (i = 0; i < v->nevidence; i++)
		free(v->evidence[i]);
	free(v->evidence);
	ap_buf_free(&v->reason);
}

/* Moves the evidence of from into to. */
static void take_evidence(verdict *to, verdict *from)
{
	size_t i;

	for (i = 0; i < from->nevidence; i++)
		add_evidence(to, from->evidence[i]);
}

static void rule_verdict(verdict *v, const ap_rule_result *res)
{
	size_t i;

	for (i = 0; i < res->matches.n; i++) {
		char *item = ap_xasprintf("%s:%u", res->file, res->matches.v[i].line);
		add_evidence(v, item);
		free(item);
	}
	switch (res->status) {
	case AP_RULE_MATCHED:
		v->value = TRI_TRUE;
		ap_buf_printf(&v->reason, "rule %s matched in %s", res->rule->id, res->file);
		break;
	case AP_RULE_UNMATCHED:
		v->value = TRI_FALSE;
		if (res->reason != NULL)
			ap_buf_printf(&v->reason, "rule %s did not match: %s", res->rule->id,
			              res->reason);
		else if (res->file != NULL)
			ap_buf_printf(&v->reason, "rule %s did not match in %s", res->rule->id,
			              res->file);
		else
			ap_buf_printf(&v->reason, "rule %s did not match", res->rule->id);
		break;
	case AP_RULE_MISSING:
		v->value = TRI_UNKNOWN;
		ap_buf_printf(&v->reason, "rule %s: %s", res->rule->id, res->reason);
		break;
	case AP_RULE_UNKNOWN:
		v->value = TRI_UNKNOWN;
		if (res->file != NULL)
			ap_buf_printf(&v->reason, "rule %s is unknown: %s: %s", res->rule->id,
			              res->file, res->reason);
		else
			ap_buf_printf(&v->reason, "rule %s is unknown: %s", res->rule->id,
			              res->reason);
		break;
	case AP_RULE_ERROR:
		v->value = TRI_UNKNOWN;
		if (res->file != NULL)
			ap_buf_printf(&v->reason, "rule %s could not be checked: %s: %s",
			              res->rule->id, res->file, res->reason);
		else
			ap_buf_printf(&v->reason, "rule %s could not be checked: %s", res->rule->id,
			              res->reason);
		break;
	}
}

/* What eval reads: the rule results, and each probe evaluated so far with its
 * three-valued verdict, so that `not` of a probe left unknown by missing
 * input stays unknown instead of turning into support. */
typedef struct eval_ctx {
	const ap_scan *scan;
	const tri *probe_values;
} eval_ctx;

static void eval(verdict *v, const ap_expr *e, const eval_ctx *ctx);

static void eval_list(verdict *v, const ap_expr *e, const eval_ctx *ctx)
{
	tri decisive = e->kind == AP_EXPR_ALL ? TRI_FALSE : TRI_TRUE;
	tri result = e->kind == AP_EXPR_ALL ? TRI_TRUE : TRI_FALSE;
	verdict *kids = ap_xcalloc(e->nkids, sizeof *kids);
	size_t i;

	for (i = 0; i < e->nkids; i++) {
		eval(&kids[i], e->kids[i], ctx);
		if (kids[i].value == decisive)
			result = decisive;
		else if (kids[i].value == TRI_UNKNOWN && result != decisive)
			result = TRI_UNKNOWN;
	}
	/* The reason and evidence are those of the operands that decided. */
	v->value = result;
	for (i = 0; i < e->nkids; i++) {
		size_t k;
		if (kids[i].value != result)
			continue;
		/* An operand's reason said once (a capture leaf repeats its rule's). */
		for (k = 0; k < i; k++)
			if (kids[k].value == result && kids[k].reason.data && kids[i].reason.data &&
			    strcmp(kids[k].reason.data, kids[i].reason.data) == 0)
				break;
		if (k < i) {
			take_evidence(v, &kids[i]);
			continue;
		}
		if (v->reason.len > 0)
			ap_buf_puts(&v->reason, "; ");
		ap_buf_append(&v->reason, kids[i].reason.data, kids[i].reason.len);
		bound_reason(&v->reason);
		take_evidence(v, &kids[i]);
	}
	for (i = 0; i < e->nkids; i++)
		verdict_free(&kids[i]);
	free(kids);
}

/* True when some match of the rule has the capture and it compares as
 * asked; the rule's own unknowns stay unknown. */
static void eval_capture(verdict *v, const ap_expr *e, const ap_rule_result *res)
{
	const char *seen = NULL;
	char *rhs;

	if (res->status != AP_RULE_MATCHED) {
		rule_verdict(v, res);
		return;
	}
	v->value = TRI_FALSE;
	for (size_t i = 0; i < res->matches.n && v->value == TRI_FALSE; i++) {
		const ap_match *m = &res->matches.v[i];
		for (size_t k = 0; k < m->ncaps; k++) {
			if (strcmp(m->caps[k].name, e->capture) != 0)
				continue;
			seen = m->caps[k].value;
			if (ap_expr_capture_holds(e, seen)) {
				char *item = ap_xasprintf("%s:%u", res->file, m->line);
				v->value = TRI_TRUE;
				add_evidence(v, item);
				free(item);
				break;
			}
		}
	}
	rhs = e->numeric ? ap_xasprintf("%lld", e->num) : ap_xstrdup(e->text);
	if (v->value == TRI_TRUE)
		ap_buf_printf(&v->reason, "rule %s has %s %s %s", res->rule->id, e->capture,
		              ap_cmp_op_name(e->op), rhs);
	else if (seen != NULL)
		ap_buf_printf(&v->reason, "rule %s has no %s %s %s (it has %s)", res->rule->id,
		              e->capture, ap_cmp_op_name(e->op), rhs, seen);
	else
		ap_buf_printf(&v->reason, "rule %s captured no %s", res->rule->id, e->capture);
	free(rhs);
}

static void eval(verdict *v, const ap_expr *e, const eval_ctx *ctx)
{
	memset(v, 0, sizeof *v);
	switch (e->kind) {
	case AP_EXPR_CAPTURE:
		eval_capture(v, e, &ctx->scan->rules[e->ref_index]);
		break;
	case AP_EXPR_REF:
		if (!e->ref_probe) {
			rule_verdict(v, &ctx->scan->rules[e->ref_index]);
		} else {
			const ap_cap_result *cap = &ctx->scan->caps[e->ref_index];
			size_t i;
			v->value = ctx->probe_values[e->ref_index];
			ap_buf_printf(&v->reason, "capability %s is %s (%s)", cap->probe->id,
			              v->value == TRI_TRUE      ? "supported"
			              : v->value == TRI_UNKNOWN ? "unknown"
			                                        : "unsupported",
			              cap->reason);
			for (i = 0; i < cap->nevidence; i++)
				add_evidence(v, cap->evidence[i]);
		}
		break;
	case AP_EXPR_ALL:
	case AP_EXPR_ANY:
		eval_list(v, e, ctx);
		break;
	case AP_EXPR_NOT: {
		verdict kid;
		eval(&kid, e->kids[0], ctx);
		v->value = kid.value == TRI_UNKNOWN ? TRI_UNKNOWN
		                                    : kid.value == TRI_TRUE ? TRI_FALSE : TRI_TRUE;
		ap_buf_printf(&v->reason, "not (%s)", kid.reason.data ? kid.reason.data : "");
		take_evidence(v, &kid);
		verdict_free(&kid);
		break;
	}
	}
}

static void set_cap_from_verdict(ap_cap_result *cap, verdict *v)
{
	bound_reason(&v->reason);
	cap->supported = v->value == TRI_TRUE;
	if (v->value == TRI_UNKNOWN)
		cap->reason = ap_xasprintf(AP_CAP_UNKNOWN_PREFIX "%s", v->reason.data);
	else
		cap->reason = ap_xstrdup(v->reason.data ? v->reason.data : "");
	cap->evidence = v->evidence;
	cap->nevidence = v->nevidence;
	cap->evidence_cap = v->evidence_cap;
	v->evidence = NULL;
	v->nevidence = v->evidence_cap = 0;
}

static json_t *skipped_launch(const char *reason)
{
	return json_pack("{s:s, s:s, s:[]}", "status", "skipped", "reason", reason, "results");
}

/* The status, the reason and the first failure of the results. */
static json_t *fold_launch(json_t *results, char **failure)
{
	size_t i, ran = 0;
	json_t *res;
	const char *skipped = NULL;

	*failure = NULL;
	json_array_foreach(results, i, res) {
		const char *status = json_string_value(json_object_get(res, "status"));
		const char *error = json_string_value(json_object_get(res, "error"));
		json_t *dev = json_object_get(res, "device");
		const char *name = json_string_value(json_object_get(dev, "name"));
		json_int_t index = json_integer_value(json_object_get(dev, "index"));

		if (status != NULL && strcmp(status, "skipped") == 0) {
			if (skipped == NULL)
				skipped = json_string_value(json_object_get(res, "reason"));
			continue;
		}
		ran++;
		if (status != NULL && strcmp(status, "passed") == 0)
			continue;
		*failure = ap_xasprintf("launch %s on device %lld (%s): %s",
		                        status ? status : "error", (long long)index,
		                        name ? name : "unknown", error ? error : "no detail");
		return json_pack("{s:s, s:s, s:o}", "status",
		                 status && strcmp(status, "failed") == 0 ? "failed" : "error",
		                 "reason", *failure, "results", results);
	}
	if (ran == 0)
		return json_pack("{s:s, s:s, s:o}", "status", "skipped", "reason",
		                 json_array_size(results) == 0 ? "no device selected"
		                 : skipped != NULL ? skipped : "every launch was skipped",
		                 "results", results);
	return json_pack("{s:s, s:s, s:o}", "status", "passed", "reason",
	                 ran < json_array_size(results) ? "every device that ran it passed"
	                                                : "every device passed",
	                 "results", results);
}

/* Folds the per-device results into one status; the first device that did
 * not pass names the reason. A device whose launch was skipped (AITER's
 * kernel could not run there, and no reference could) decides nothing. The
 * summary's "kernel" is AITER's when it ran on some device, else the
 * reference's when that ran. */
static json_t *summarize_launch(json_t *results, char **failure)
{
	json_t *sum = fold_launch(results, failure);
	const json_t *res;
	const char *kernel = NULL;
	size_t i;

	json_array_foreach(results, i, res) {
		const char *status = json_string_value(json_object_get(res, "status"));
		const char *ran = json_string_value(json_object_get(res, "kernel"));
		if (status == NULL || strcmp(status, "skipped") == 0 || ran == NULL)
			continue;
		if (kernel == NULL || strcmp(ran, "aiter") == 0)
			kernel = ran;
	}
	if (kernel != NULL)
		json_object_set_new(sum, "kernel", json_string(kernel));
	return sum;
}

/* s as JSON text, or instead when s is not UTF-8 (a tree's bytes). */
static json_t *utf8_or(const char *s, const char *instead)
{
	json_t *j = json_string(s);

	return j != NULL ? j : json_string(instead);
}

/* What the scan read of the AITER calls a launch of AITER's kernels makes,
 * for AITER's launcher: each call's rule, its status, the signature it
 * matched or the reason. */
static char *aiter_calls(const ap_scan *s)
{
	json_t *calls = json_object();
	char *text;
	size_t i;

	for (i = 0; ap_launch_aiter_calls[i] != NULL; i++) {
		char *id = ap_xasprintf("vllm.calls_bind.%s", ap_launch_aiter_calls[i]);
		const ap_rule_result *res = ap_scan_rule(s, id);
		json_t *call = json_pack("{s:s}", "rule", id);
		const char *params = NULL;
		size_t k;

		if (res == NULL) {
			json_object_set_new(call, "status", json_string("missing"));
			json_object_set_new(call, "reason", json_string("the rule is not loaded"));
		} else {
			json_object_set_new(call, "status",
			                    json_string(ap_rule_status_name(res->status)));
			if (res->reason != NULL)
				json_object_set_new(call, "reason",
				                    utf8_or(res->reason, "(its reason is not UTF-8)"));
			for (k = 0; res->matches.n > 0 && k < res->matches.v[0].ncaps; k++)
				if (strcmp(res->matches.v[0].caps[k].name, "params") == 0)
					params = res->matches.v[0].caps[k].value;
			/* A signature that is no UTF-8 is none the launcher reads:
			 * without params, it makes no call. */
			if (params != NULL)
				json_object_set_new(call, "params", json_string(params));
		}
		json_object_set_new(calls, ap_launch_aiter_calls[i], call);
		free(id);
	}
	text = ap_xnonnull(json_dumps(calls, JSON_COMPACT));
	json_decref(calls);
	return text;
}

static void run_launch(ap_cap_result *cap, const ap_scan_launch *launch, const char *calls)
{
	const ap_launch_spec *spec = cap->probe->launch;
	char *failure;
	json_t *results;

	if (launch->skip_reason != NULL) {
		cap->launch = skipped_launch(launch->skip_reason);
		return;
	}
	results = ap_launch_run(spec, launch->devs, launch->opts, calls);
	cap->launch = summarize_launch(results, &failure);
	if (failure != NULL && cap->supported) {
		char *reason = ap_xasprintf("%s; but %s", cap->reason, failure);
		free(cap->reason);
		cap->reason = reason;
		cap->supported = false;
	}
	free(failure);
}

int ap_scan_run(ap_scan **out, const ap_ruleset *rs, ap_reader *r, const ap_scan_launch *launch)
{
	return ap_scan_run_memo(out, rs, r, launch, NULL);
}

int ap_scan_run_memo(ap_scan **out, const ap_ruleset *rs, ap_reader *r,
                     const ap_scan_launch *launch, const ap_scan_memo *memo)
{
	ap_scan *s = ap_xcalloc(1, sizeof *s);
	tri *probe_values = ap_xcalloc(rs->nprobes, sizeof *probe_values);
	eval_ctx ctx = {.scan = s, .probe_values = probe_values};
	char *calls = NULL;
	size_t i, spent = 0;

	s->nrules = rs->nrules;
	s->rules = ap_xcalloc(rs->nrules, sizeof *s->rules);
	for (i = 0; i < rs->nrules; i++)
		check_rule(&s->rules[i], &rs->rules[i], i, r, memo, &spent);

	/* Probes are ordered so that each follows those it requires. */
	s->ncaps = rs->nprobes;
	s->caps = ap_xcalloc(rs->nprobes, sizeof *s->caps);
	for (i = 0; i < rs->nprobes; i++) {
		verdict v;
		s->caps[i].probe = &rs->probes[i];
		eval(&v, rs->probes[i].requires, &ctx);
		set_cap_from_verdict(&s->caps[i], &v);
		if (launch != NULL && rs->probes[i].launch != NULL) {
			if (calls == NULL)
				calls = aiter_calls(s);
			run_launch(&s->caps[i], launch, calls);
		}
		/* A failed launch is a definite no; unknown input stays unknown. */
		probe_values[i] = s->caps[i].supported ? TRI_TRUE
		                  : v.value == TRI_UNKNOWN ? TRI_UNKNOWN
		                                           : TRI_FALSE;
		verdict_free(&v);
	}
	free(probe_values);
	free(calls);
	*out = s;
	return AP_OK;
}

void ap_scan_free(ap_scan *s)
{
	size_t i, j;

	if (s == NULL)
		return;
	json_decref(s->signatures);
	for (i = 0; i < s->nrules; i++) {
		free(s->rules[i].reason);
		ap_match_list_free(&s->rules[i].matches);
	}
	for (i = 0; i < s->ncaps; i++) {
		free(s->caps[i].reason);
		for (j = 0; j < s->caps[i].nevidence; j++)
			free(s->caps[i].evidence[j]);
		free(s->caps[i].evidence);
		json_decref(s->caps[i].launch);
	}
	free(s->rules);
	free(s->caps);
	free(s);
}

const ap_rule_result *ap_scan_rule(const ap_scan *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->nrules; i++)
		if (strcmp(s->rules[i].rule->id, id) == 0)
			return &s->rules[i];
	return NULL;
}

const ap_cap_result *ap_scan_cap(const ap_scan *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->ncaps; i++)
		if (strcmp(s->caps[i].probe->id, id) == 0)
			return &s->caps[i];
	return NULL;
}
