/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/reader.h"

/* One normalized text per (language, whitespace mode) a rule asked for. */
#define TEXT_SLOTS 6

/* What a kind derived from a file, kept for the other rules that read it. */
struct derived {
	char *key;
	void *data;
	void (*free)(void *);
};

struct entry {
	ap_file file; /* first: an ap_file handed out is its entry */
	ap_text *texts[TEXT_SLOTS];
	struct derived *derived;
	size_t nderived;
	size_t charged;        /* its contents' and texts' bytes of the budget */
	unsigned long touched; /* the round it was last asked for in */
};

struct ap_reader {
	const ap_source_ops *ops;
	void *ctx;
	char *root;
	char *meta;           /* NULL: the root */
	ap_derived_cache *shared; /* NULL: derived data lives with the reader */
	size_t max_bytes;
	size_t held;          /* bytes held for the scan (ap_reader_charge) */
	struct entry **files; /* in the order first asked for */
	size_t nfiles;
	size_t files_cap;
	ap_map *index;        /* path -> index into files */
	struct ap_pytarget *python; /* borrowed; NULL: none */
	bool tries_unasked; /* ap_reader_set_tries_unasked */
	size_t unasked;     /* parses handed out that left a try's imports unasked */
	unsigned long round;   /* ap_reader_begin_round */
	size_t round_charged;  /* bytes charged in the round */
	bool round_refused;    /* a charge was refused in the round */
};

/* --- Folder source ---------------------------------------------------------- */

/* The folders a scan reads from, kept open (FS_KEPT_FOLDERS of each root):
 * a scan of AITER reads from some twenty. */
#define FS_KEPT_FOLDERS 32

struct fs_source {
	ap_under *root; /* beneath the canonical root */
	ap_under *meta; /* the meta folder; root itself when they are one */
};

/* Reads at most max + 1 bytes, so that an oversized file that grew since
 * fstat is still caught without reading it whole. */
static int read_capped(int fd, size_t hint, size_t max, char **data, size_t *len)
{
	size_t cap = (hint < max ? hint : max) + 1;
	size_t n = 0;
	char *buf = ap_xmalloc(cap + 1);

	for (;;) {
		ssize_t got;
		if (n == cap) {
			if (cap > max)
				break;
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			buf = ap_xrealloc(buf, cap + 1);
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

/* Memory running out is no class of what is at a path: the scan ends, as on
 * every allocation that fails, rather than record the input unreadable. */
static void end_if_no_memory(ap_confined_kind kind, int err, const char *path)
{
	if (kind == AP_CONFINED_ERRNO && err == ENOMEM) {
		ap_error_set("out of memory reading %s", path);
		ap_xok(AP_ENOMEM);
	}
}

/* A folder's listing (ap_list_under), as the text of the path "dir/". */
static ap_file_status fs_list(ap_under *base, ap_file *f, char **data, size_t *len,
                              char **reason)
{
	int err;

	ap_confined_kind kind = ap_under_list(base, f->path, data, len, &err);

	end_if_no_memory(kind, err, f->path);
	f->seen = kind == AP_CONFINED_FOLDER ? "folder" : ap_seen_of(kind, err);
	switch (kind) {
	case AP_CONFINED_FOLDER:
		return AP_FILE_OK;
	case AP_CONFINED_MISSING:
		*reason = ap_xstrdup("no such folder");
		return AP_FILE_MISSING;
	case AP_CONFINED_NOT_FILE:
		*reason = ap_xstrdup("not a folder, or a symlink (a listing follows none)");
		return AP_FILE_ERROR;
	default:
		*reason = ap_xstrdup(err == EFBIG ? "more entries than a listing holds" : strerror(err));
		return AP_FILE_ERROR;
	}
}

static ap_file_status fs_load(void *ctx, ap_file *f, size_t max_bytes, char **data, size_t *len,
                              char **reason)
{
	const struct fs_source *fs = ctx;
	ap_confined c;
	int err;

	ap_under *base = ap_path_in_meta(f->path) ? fs->meta : fs->root;
	ap_confined_kind kind;

	if (f->path[strlen(f->path) - 1] == '/')
		return fs_list(base, f, data, len, reason);
	kind = ap_under_open(base, f->path, &c);
	end_if_no_memory(kind, c.err, f->path);
	f->seen = ap_seen_of(kind, c.err);
	switch (kind) {
	case AP_CONFINED_FILE:
		break;
	case AP_CONFINED_MISSING:
		*reason = ap_xstrdup("no such file");
		return AP_FILE_MISSING;
	case AP_CONFINED_OUTSIDE:
		*reason = ap_xasprintf("symlink resolves outside the AITER root (%s)", c.target);
		free(c.target);
		return AP_FILE_ERROR;
	case AP_CONFINED_FOLDER:
		*reason = ap_xstrdup("is a folder");
		return AP_FILE_ERROR;
	case AP_CONFINED_NOT_FILE:
		*reason = ap_xstrdup("not a regular file");
		return AP_FILE_ERROR;
	case AP_CONFINED_ERRNO:
		*reason = ap_xstrdup(strerror(c.err));
		return AP_FILE_ERROR;
	}
	/* Over the cap, the rule gets no text, but the file is still hashed
	 * (streamed, never held) so that a manifest can tell whether it changed. */
	if ((uintmax_t)c.st.st_size > AP_HASH_MAX_BYTES) {
		close(c.fd);
		f->seen = "over-hash-cap";
		*reason = ap_xasprintf("larger than the %zu-byte cap (%jd bytes), and than the "
		                       "%zu-byte hashing cap: unverifiable",
		                       max_bytes, (intmax_t)c.st.st_size, AP_HASH_MAX_BYTES);
		return AP_FILE_ERROR;
	}
	if ((uintmax_t)c.st.st_size > max_bytes) {
		err = ap_sha256_fd(c.fd, f->sha256, &f->len);
		close(c.fd);
		if (err < 0) {
			*reason = ap_xstrdup(strerror(-err));
			return AP_FILE_ERROR;
		}
		f->hashed = true;
		*reason = ap_xasprintf("larger than the %zu-byte cap (%jd bytes)", max_bytes,
		                       (intmax_t)c.st.st_size);
		return AP_FILE_ERROR;
	}
	err = read_capped(c.fd, (size_t)c.st.st_size, max_bytes, data, len);
	close(c.fd);
	if (err < 0) {
		*reason = ap_xstrdup(strerror(-err));
		return AP_FILE_ERROR;
	}
	return AP_FILE_OK;
}

static void fs_free(void *ctx)
{
	struct fs_source *fs = ctx;

	if (fs == NULL)
		return;
	if (fs->meta != fs->root)
		ap_under_free(fs->meta);
	ap_under_free(fs->root);
	free(fs);
}

static const ap_source_ops fs_ops = {.load = fs_load, .free = fs_free};

/* The canonical path of a folder, or NULL with a message naming what. */
static int canonical_folder(const char *what, const char *dir, char **out)
{
	int err;

	*out = ap_real_folder(dir);
	if (*out != NULL)
		return 0;
	err = errno;
	if (err == ENOMEM) {
		ap_error_set("%s '%s': out of memory", what, dir);
		return AP_ENOMEM;
	}
	if (err == ENOTDIR)
		ap_error_set("%s '%s' is not a folder", what, dir);
	else
		ap_error_set("%s '%s': %s", what, dir, strerror(err));
	return AP_EINPUT;
}

int ap_reader_new_fs(ap_reader **out, const char *root, const char *meta, size_t max_bytes)
{
	struct fs_source *fs;
	char *real_root, *real_meta;
	int rc;

	*out = NULL;
	if ((rc = canonical_folder("AITER root", root, &real_root)) < 0)
		return rc;
	if ((rc = canonical_folder("AITER meta folder", meta != NULL ? meta : root, &real_meta)) < 0) {
		free(real_root);
		return rc;
	}
	fs = ap_xcalloc(1, sizeof *fs);
	fs->root = ap_xnonnull(ap_under_new(real_root, FS_KEPT_FOLDERS));
	fs->meta = strcmp(real_meta, real_root) == 0
	                   ? fs->root
	                   : ap_xnonnull(ap_under_new(real_meta, FS_KEPT_FOLDERS));
	rc = ap_reader_new(out, &fs_ops, fs, real_root, max_bytes);
	if (rc == 0)
		(*out)->meta = ap_xstrdup(real_meta);
	free(real_root);
	free(real_meta);
	return rc;
}

/* --- The reader ------------------------------------------------------------- */

int ap_reader_new(ap_reader **out, const ap_source_ops *ops, void *ctx, const char *root,
                  size_t max_bytes)
{
	ap_reader *r = ap_xcalloc(1, sizeof *r);

	r->ops = ops;
	r->ctx = ctx;
	r->root = ap_xstrdup(root);
	r->max_bytes = max_bytes;
	r->index = ap_xnonnull(ap_map_new());
	*out = r;
	return 0;
}

static void entry_free(struct entry *e)
{
	for (size_t k = 0; k < e->nderived; k++) {
		free(e->derived[k].key);
		if (e->derived[k].data != NULL)
			e->derived[k].free(e->derived[k].data);
	}
	free(e->derived);
	for (size_t k = 0; k < TEXT_SLOTS; k++) {
		ap_text_free(e->texts[k]);
		free(e->texts[k]);
	}
	free(e->file.path);
	free(e->file.reason);
	free(e->file.data);
	free(e);
}

void ap_reader_free(ap_reader *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nfiles; i++)
		entry_free(r->files[i]);
	free(r->files);
	ap_map_free(r->index);
	if (r->ops->free)
		r->ops->free(r->ctx);
	free(r->root);
	free(r->meta);
	free(r);
}

const char *ap_reader_root(const ap_reader *r)
{
	return r->root;
}

const char *ap_reader_meta(const ap_reader *r)
{
	return r->meta != NULL ? r->meta : r->root;
}

void ap_reader_set_python(ap_reader *r, struct ap_pytarget *python)
{
	r->python = python;
}

struct ap_pytarget *ap_reader_python(const ap_reader *r)
{
	return r->python;
}

void ap_reader_set_tries_unasked(ap_reader *r, bool unasked)
{
	r->tries_unasked = unasked;
	r->unasked = 0;
}

bool ap_reader_tries_unasked(const ap_reader *r)
{
	return r->tries_unasked;
}

void ap_reader_count_unasked(ap_reader *r)
{
	r->unasked++;
}

size_t ap_reader_unasked(const ap_reader *r)
{
	return r->unasked;
}

static void set_failure(ap_file *f, ap_file_status status, char *reason)
{
	f->status = status;
	f->reason = reason;
	free(f->data);
	f->data = NULL;
}

static void load(ap_reader *r, ap_file *f)
{
	const char *refusal = ap_path_refusal(f->path);
	char *data = NULL;
	char *reason = NULL;
	size_t len = 0;
	ap_file_status st;
	const char *nul;

	if (refusal != NULL) {
		set_failure(f, AP_FILE_ERROR, ap_xasprintf("path refused: %s", refusal));
		return;
	}
	st = r->ops->load(r->ctx, f, r->max_bytes, &data, &len, &reason);
	/* A source that knows the digest of what it returns, or an id of it
	 * (history's blobs), has set it. */
	if (data != NULL && !f->hashed && !f->identified) {
		ap_sha256_buf(data, len, f->sha256);
		f->hashed = true;
	}
	if (data != NULL)
		f->len = len;
	f->data = data;
	if (st != AP_FILE_OK) {
		set_failure(f, st, reason ? reason : ap_xstrdup("unreadable"));
		return;
	}
	free(reason);
	/* A source that does not check the cap itself is held to it here. */
	if (len > r->max_bytes) {
		set_failure(f, AP_FILE_ERROR,
		            ap_xasprintf("larger than the %zu-byte cap (%zu bytes)", r->max_bytes, len));
		return;
	}
	nul = memchr(data, '\0', len);
	if (nul != NULL) {
		set_failure(f, AP_FILE_ERROR,
		            ap_xasprintf("binary file (NUL byte at offset %zu)", (size_t)(nul - data)));
		return;
	}
	/* Its digest is kept, so that a manifest can still tell whether it changed. */
	if (ap_reader_charge(r, len, "reading it") < 0) {
		set_failure(f, AP_FILE_ERROR, ap_xstrdup(ap_error_last()));
		return;
	}
	((struct entry *)f)->charged += len;
	f->status = AP_FILE_OK;
}

static size_t budget_of(const ap_reader *r)
{
	return r->max_bytes > SIZE_MAX / AP_READER_BUDGET_CAPS ? SIZE_MAX
	                                                       : r->max_bytes * AP_READER_BUDGET_CAPS;
}

int ap_reader_charge(ap_reader *r, size_t bytes, const char *what)
{
	size_t budget = budget_of(r);

	if (bytes > budget - r->held) {
		r->round_refused = true;
		ap_error_set("%s would pass the %zu-byte budget of what one scan holds (%zu "
		             "bytes held, %zu more asked)",
		             what, budget, r->held, bytes);
		return AP_ELIMIT;
	}
	r->held += bytes;
	r->round_charged += bytes;
	return 0;
}

bool ap_reader_has_room(const ap_reader *r, size_t bytes)
{
	return bytes <= budget_of(r) - r->held;
}

void ap_reader_begin_round(ap_reader *r)
{
	r->round++;
	r->round_charged = 0;
	r->round_refused = false;
}

bool ap_reader_touched(const ap_reader *r, size_t i)
{
	return i < r->nfiles && r->files[i]->touched == r->round;
}

size_t ap_reader_round_bytes(const ap_reader *r)
{
	size_t bytes = r->round_charged;

	for (size_t i = 0; i < r->nfiles; i++)
		if (r->files[i]->touched == r->round)
			bytes += r->files[i]->charged;
	return bytes;
}

bool ap_reader_round_refused(const ap_reader *r)
{
	return r->round_refused;
}

const ap_file *ap_reader_get(ap_reader *r, const char *rel)
{
	size_t i = ap_map_get_str(r->index, rel);
	struct entry *e;

	if (i != AP_MAP_ABSENT) {
		r->files[i]->touched = r->round;
		return &r->files[i]->file;
	}
	e = ap_xcalloc(1, sizeof *e);
	e->touched = r->round;
	e->file.path = ap_xstrdup(rel);
	load(r, &e->file);
	ap_xgrow((void **)&r->files, &r->files_cap, r->nfiles + 1, sizeof *r->files);
	ap_xok(ap_map_put_str(r->index, rel, r->nfiles));
	r->files[r->nfiles++] = e;
	return &e->file;
}

const ap_text *ap_reader_text(ap_reader *r, const ap_file *f, ap_lang lang, ap_ws ws)
{
	struct entry *e = (struct entry *)f;
	size_t k;
	ap_text *t;
	int rc;

	if (f->status != AP_FILE_OK) {
		ap_error_set("%s: %s", f->path, f->reason);
		return NULL;
	}
	if (lang == AP_LANG_AUTO)
		lang = ap_lang_for_path(f->path);
	k = (size_t)(lang - AP_LANG_TEXT) * 2 + (ws == AP_WS_STRIP);
	if (e->texts[k] != NULL)
		return e->texts[k];
	t = ap_xcalloc(1, sizeof *t);
	rc = ap_normalize(t, f->data, f->len, lang, ws);
	if (rc == 0 &&
	    (rc = ap_reader_charge(r, t->len + 1 + (t->len + 1 + t->nlines) * sizeof(uint32_t),
	                           "normalizing it")) < 0) {
		ap_text_free(t);
	}
	if (rc < 0) {
		ap_error_prefix("%s", f->path);
		free(t);
		return NULL;
	}
	e->charged += t->len + 1 + (t->len + 1 + t->nlines) * sizeof(uint32_t);
	e->texts[k] = t;
	return t;
}

/* --- What kinds derive from files ----------------------------------------- */

/* Derived data kept across readers, by the content's digest and the key:
 * history's evaluations of one commit after another share the modules of
 * every file that did not change. */
struct shared {
	void *data;
	void (*free)(void *);
	unsigned long used; /* the sweep it was last used in */
	char *key;          /* 's' sha256 or 'i' id, + key, as indexed */
	size_t keylen;
	size_t bytes;       /* what it holds, about */
};

struct ap_derived_cache {
	ap_map *index; /* its key -> index into v */
	struct shared *v;
	size_t n, cap;
	size_t bytes; /* of the entries kept */
	unsigned long sweep;
};

ap_derived_cache *ap_derived_cache_new(void)
{
	ap_derived_cache *c = ap_xcalloc(1, sizeof *c);

	c->index = ap_xnonnull(ap_map_new());
	return c;
}

void ap_derived_cache_free(ap_derived_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		c->v[i].free(c->v[i].data);
		free(c->v[i].key);
	}
	free(c->v);
	ap_map_free(c->index);
	free(c);
}

/* The most recently used first. */
static int by_use(const void *a, const void *b)
{
	const struct shared *x = a, *y = b;

	return x->used == y->used ? 0 : x->used > y->used ? -1 : 1;
}

/* Past AP_DERIVED_CACHE_BYTES, keeps what the last readers used, the most
 * recent first, while it fits three quarters of it: the index is rebuilt
 * once in many sweeps, not at each. What was used since the last sweep
 * stays whatever its size: one scan's, which its reader's budget bounds. */
void ap_derived_cache_sweep(ap_derived_cache *c)
{
	const size_t room = AP_DERIVED_CACHE_BYTES / 4 * 3;
	size_t kept = 0, bytes = 0;
	bool full = false;

	if (c->bytes > AP_DERIVED_CACHE_BYTES) {
		qsort(c->v, c->n, sizeof *c->v, by_use);
		ap_map_clear(c->index);
		for (size_t i = 0; i < c->n; i++) {
			bool recent = c->v[i].used == c->sweep;

			full = full || (!recent && (bytes > room || c->v[i].bytes > room - bytes));
			if (full && !recent) {
				c->v[i].free(c->v[i].data);
				free(c->v[i].key);
				continue;
			}
			bytes += c->v[i].bytes;
			ap_xok(ap_map_put(c->index, c->v[i].key, c->v[i].keylen, kept));
			c->v[kept++] = c->v[i];
		}
		c->n = kept;
		c->bytes = bytes;
	}
	c->sweep++;
}

size_t ap_derived_cache_count(const ap_derived_cache *c)
{
	return c->n;
}

void ap_reader_share(ap_reader *r, ap_derived_cache *c)
{
	r->shared = c;
}

/* Whether f's bytes have a name derived data can be shared by. */
static bool named(const ap_file *f)
{
	return f->hashed || f->identified;
}

static void shared_key(ap_buf *b, const ap_file *f, const char *key)
{
	b->len = 0;
	ap_buf_putc(b, f->identified ? 'i' : 's');
	ap_buf_append(b, f->identified ? f->id : f->sha256, sizeof f->sha256);
	ap_buf_puts(b, key);
}

void *ap_derived_cache_get(ap_derived_cache *c, const void *key, size_t len)
{
	size_t i = ap_map_get(c->index, key, len);

	if (i == AP_MAP_ABSENT)
		return NULL;
	c->v[i].used = c->sweep;
	return c->v[i].data;
}

void ap_derived_cache_put(ap_derived_cache *c, const void *key, size_t len, void *data,
                          size_t bytes, void (*free_data)(void *))
{
	char *copy = ap_xmalloc(len);

	memcpy(copy, key, len);
	ap_xgrow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v);
	ap_xok(ap_map_put(c->index, key, len, c->n));
	bytes += len + sizeof(struct shared);
	c->v[c->n++] = (struct shared){data, free_data, c->sweep, copy, len, bytes};
	c->bytes += bytes;
}

void *ap_reader_derived(ap_reader *r, const ap_file *f, const char *key)
{
	const struct entry *e = (const struct entry *)f;
	ap_buf b = AP_BUF_INIT;
	void *data;

	for (size_t k = 0; k < e->nderived; k++)
		if (strcmp(e->derived[k].key, key) == 0)
			return e->derived[k].data;
	if (r->shared == NULL || !named(f))
		return NULL;
	shared_key(&b, f, key);
	data = ap_derived_cache_get(r->shared, b.data, b.len);
	ap_buf_free(&b);
	return data;
}

void ap_reader_keep_here(ap_reader *r, const ap_file *f, const char *key, void *data,
                         void (*free_data)(void *))
{
	struct entry *e = (struct entry *)f;

	(void)r;
	e->derived = ap_xrealloc(e->derived, (e->nderived + 1) * sizeof *e->derived);
	e->derived[e->nderived++] = (struct derived){ap_xstrdup(key), data, free_data};
}

void ap_reader_keep(ap_reader *r, const ap_file *f, const char *key, void *data, size_t bytes,
                    void (*free_data)(void *))
{
	if (r->shared != NULL && named(f)) {
		ap_buf b = AP_BUF_INIT;
		shared_key(&b, f, key);
		ap_derived_cache_put(r->shared, b.data, b.len, data, bytes, free_data);
		ap_buf_free(&b);
		return;
	}
	ap_reader_keep_here(r, f, key, data, free_data);
}

size_t ap_reader_count(const ap_reader *r)
{
	return r->nfiles;
}

const ap_file *ap_reader_at(const ap_reader *r, size_t i)
{
	return i < r->nfiles ? &r->files[i]->file : NULL;
}
