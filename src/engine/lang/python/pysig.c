/* SPDX-License-Identifier: MIT */
/* What a def must satisfy for the Python kinds (`params`, `binds`, by
 * Python's rules for binding a call), and its signature as Python writes it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/signature.h"
#include "engine/lang/python/pysource.h"

static int call_load(const char *pack, const ap_ynode *n, ap_pycall *call)
{
	static const char *const keys[] = {"positional", "keywords"};
	ap_yfield f[2];
	int rc;

	call->given = true;
	if ((rc = ap_y_need_map(pack, n, "'binds'")) < 0 ||
	    (rc = ap_y_fields(pack, n, "'binds'", keys, 2, f)) < 0)
		return rc;
	if (f[0].key != NULL &&
	    (rc = ap_y_int(pack, f[0].val, "positional", 0, 255, &call->positional)) < 0)
		return rc;
	if (f[1].key != NULL)
		rc = ap_y_strings(pack, f[1].val, "keywords", &call->keywords, &call->nkeywords);
	if (rc == 0)
		for (size_t i = 0; i < call->nkeywords; i++)
		ap_py_name_normalize(&call->keywords[i]);
	return rc;
}

int ap_pydef_check_load(const char *pack, const ap_yfield *opts, ap_pydef_check *c)
{
	int rc = 0;

	memset(c, 0, sizeof *c);
	if (opts[0].key != NULL &&
	    (rc = ap_y_strings(pack, opts[0].val, "params", &c->params, &c->nparams)) < 0)
		return rc;
	for (size_t i = 0; i < c->nparams; i++)
		ap_py_name_normalize(&c->params[i]);
	if (opts[1].key != NULL && (rc = call_load(pack, opts[1].val, &c->call)) < 0)
		return rc;
	if (opts[2].key != NULL)
		rc = ap_y_int(pack, opts[2].val, "param_at", 1, 255, &c->param_at);
	return rc;
}

bool ap_pydef_check_asks(const ap_pydef_check *c)
{
	return c->nparams > 0 || c->call.given || c->param_at > 0;
}

void ap_pydef_check_free(ap_pydef_check *c)
{
	ap_y_strings_free(c->params, c->nparams);
	ap_y_strings_free(c->call.keywords, c->call.nkeywords);
	memset(c, 0, sizeof *c);
}

static const ap_py_param *param_named(const ap_py_def *d, const char *name)
{
	for (size_t i = 0; i < d->nparams; i++)
		if (strcmp(d->params[i].name, name) == 0)
			return &d->params[i];
	return NULL;
}

static bool positional_kind(ap_py_param_kind k)
{
	return k == AP_PY_POSONLY || k == AP_PY_POS;
}

/* Python's binding of a call to a signature (core/signature.c, the one the
 * readers answer with): NULL when it binds, else why not. */
static char *bind_refusal(const ap_py_def *d, const ap_pycall *call)
{
	ap_sig_param *params = ap_xcalloc(d->nparams + 1, sizeof *params);
	bool *scratch = ap_xcalloc(d->nparams + 1, sizeof *scratch);
	char why[AP_SIG_WHY_BYTES];
	bool binds;

	for (size_t i = 0; i < d->nparams; i++)
		params[i] = (ap_sig_param){d->params[i].name, strlen(d->params[i].name),
		                           d->params[i].kind, d->params[i].has_default};
	binds = ap_sig_binds(params, d->nparams, (size_t)call->positional,
	                     (const char *const *)call->keywords, call->nkeywords, scratch, why,
	                     sizeof why);
	free(params);
	free(scratch);
	return binds ? NULL : ap_xstrdup(why);
}

char *ap_pydef_check_refusal(const ap_pydef_check *c, const ap_py_def *d)
{
	for (size_t i = 0; i < c->nparams; i++) {
		const ap_py_param *p = param_named(d, c->params[i]);
		if (p == NULL || p->kind == AP_PY_VARARGS || p->kind == AP_PY_VARKW)
			return ap_xasprintf("%s has no parameter '%s'", d->qualname, c->params[i]);
	}
	if (c->call.given) {
		char *why = bind_refusal(d, &c->call);
		if (why != NULL) {
			char *full = ap_xasprintf("a call of %s with %ld positional%s%s does not bind: %s",
			                          d->qualname, c->call.positional,
			                          c->call.positional == 1 ? "" : "s",
			                          c->call.nkeywords ? " and its keywords" : "", why);
			free(why);
			return full;
		}
	}
	return NULL;
}

char *ap_py_signature(const ap_py_def *d)
{
	ap_buf b = AP_BUF_INIT;
	bool star = false;

	for (size_t i = 0; i < d->nparams; i++) {
		const ap_py_param *p = &d->params[i];
		bool last_posonly = p->kind == AP_PY_POSONLY &&
		                    (i + 1 == d->nparams || d->params[i + 1].kind != AP_PY_POSONLY);

		if (p->kind == AP_PY_KWONLY && !star)
			ap_buf_puts(&b, b.len ? ", *" : "*");
		star |= p->kind == AP_PY_VARARGS || p->kind == AP_PY_KWONLY;
		ap_buf_printf(&b, "%s%s%s%s", b.len ? ", " : "",
		              p->kind == AP_PY_VARARGS ? "*" : p->kind == AP_PY_VARKW ? "**" : "",
		              p->name, p->has_default ? "=…" : "");
		if (last_posonly)
			ap_buf_puts(&b, ", /");
	}
	return ap_buf_detach(&b);
}

void ap_pydef_capture(const ap_pydef_check *c, const ap_py_def *d, ap_match *m)
{
	char *sig = ap_py_signature(d);

	ap_match_capture(m, "params", sig, strlen(sig));
	free(sig);
	if (c->param_at > 0) {
		long k = 0;
		for (size_t i = 0; i < d->nparams; i++) {
			if (positional_kind(d->params[i].kind) && ++k == c->param_at) {
				ap_match_capture(m, "param", d->params[i].name, strlen(d->params[i].name));
				break;
			}
		}
	}
}


ap_py_def *ap_pydef_view(const ap_py_def *d, char *qualname)
{
	ap_py_def *v = ap_xmalloc(sizeof *v);

	*v = *d;
	v->qualname = qualname != NULL ? qualname : ap_xstrdup(d->qualname);
	v->params = ap_xcalloc(d->nparams + 1, sizeof *v->params);
	if (d->nparams > 0)
		memcpy(v->params, d->params, d->nparams * sizeof *v->params);
	return v;
}

void ap_pydef_view_free(ap_py_def *v)
{
	if (v == NULL)
		return;
	free(v->qualname);
	free(v->params);
	free(v);
}

ap_py_def *ap_pydef_partial(const ap_py_def *d, const ap_py_args *a, char *qualname, char **why)
{
	bool *bound = ap_xcalloc(d->nparams + 1, sizeof *bound);
	bool *by_kw = ap_xcalloc(d->nparams + 1, sizeof *by_kw);
	bool varargs = false, varkw = false, kwonly = false;
	ap_py_def *v = NULL;
	size_t given = 0, n = 0;

	*why = NULL;
	for (size_t i = 0; i < d->nparams; i++) {
		varargs |= d->params[i].kind == AP_PY_VARARGS;
		varkw |= d->params[i].kind == AP_PY_VARKW;
		if (positional_kind(d->params[i].kind) && given < a->positional)
			bound[i] = true, given++;
	}
	/* Signature.bind_partial: what is left over goes to *args or **kwargs. */
	if (given < a->positional && !varargs)
		*why = ap_xasprintf("it gives %u positional arguments, and %s takes %zu", a->positional,
		                    d->qualname, given);
	for (size_t k = 0; k < a->nkeywords && *why == NULL; k++) {
		const ap_py_param *p = param_named(d, a->keywords[k]);
		size_t i = p ? (size_t)(p - d->params) : 0;
		if (p != NULL && (p->kind == AP_PY_POS || p->kind == AP_PY_KWONLY)) {
			if (bound[i])
				*why = ap_xasprintf("'%s' given both by position and by keyword", p->name);
			bound[i] = by_kw[i] = true;
		} else if (p != NULL && p->kind == AP_PY_POSONLY && !bound[i]) {
			/* bind_partial refuses it though **kwargs would take it */
			*why = ap_xasprintf("'%s' is positional-only, given by keyword", p->name);
		} else if (!varkw) {
			*why = ap_xasprintf("%s has no parameter '%s' (and no **kwargs)", d->qualname,
			                    a->keywords[k]);
		}
	}
	if (*why != NULL) {
		free(qualname);
		goto done;
	}
	/* As inspect's _signature_get_partial: a positional parameter bound
	 * by position goes; one bound by keyword takes a default and makes it
	 * and every later one keyword-only (*args goes); a keyword-only one
	 * bound takes a default. */
	v = ap_pydef_view(d, qualname);
	for (size_t i = 0; i < d->nparams; i++) {
		ap_py_param p = d->params[i];
		if (bound[i] && (p.kind == AP_PY_POSONLY || (p.kind == AP_PY_POS && !by_kw[i])))
			continue;
		p.has_default |= bound[i] && (p.kind == AP_PY_POS || p.kind == AP_PY_KWONLY);
		kwonly |= by_kw[i] && p.kind == AP_PY_POS;
		if (kwonly && p.kind == AP_PY_VARARGS)
			continue;
		if (kwonly && p.kind == AP_PY_POS)
			p.kind = AP_PY_KWONLY;
		v->params[n++] = p;
	}
	v->nparams = n;
done:
	free(bound);
	free(by_kw);
	return v;
}

ap_py_def *ap_pydef_bound_method(const ap_py_def *d)
{
	ap_py_def *v;

	/* inspect's _signature_bound_method */
	if (d->nparams == 0 || d->params[0].kind == AP_PY_KWONLY || d->params[0].kind == AP_PY_VARKW)
		return NULL;
	v = ap_pydef_view(d, NULL);
	if (d->params[0].kind != AP_PY_VARARGS) {
		memmove(v->params, v->params + 1, (d->nparams - 1) * sizeof *v->params);
		v->nparams--;
	}
	return v;
}
