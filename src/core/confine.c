/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ap-map.h"
#include "core/ap-util.h"
#include "core/confine.h"

const char *ap_path_refusal(const char *rel)
{
	const char *p = rel;

	if (rel == NULL || rel[0] == '\0')
		return "empty path";
	if (rel[0] == '/')
		return "absolute path";
	while (*p) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return "'..' component";
		p += len;
		if (*p == '/')
			p++;
	}
	return NULL;
}

char *ap_real_folder(const char *dir)
{
	struct stat st;
	char *real = realpath(dir, NULL);

	if (real != NULL && (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))) {
		free(real);
		errno = ENOTDIR;
		return NULL;
	}
	return real;
}

bool ap_is_folder(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool ap_path_in_meta(const char *rel)
{
	static const char *const meta_dirs[] = {"csrc", "hsa", "3rdparty", "gradlib"};
	size_t len = strcspn(rel, "/");

	if (rel[len] != '/')
		return false;
	for (size_t i = 0; i < sizeof meta_dirs / sizeof meta_dirs[0]; i++)
		if (strlen(meta_dirs[i]) == len && strncmp(rel, meta_dirs[i], len) == 0)
			return true;
	return false;
}

bool ap_path_under(const char *root, const char *path)
{
	size_t rl = strlen(root);

	if (strcmp(root, "/") == 0)
		return path[0] == '/';
	return strncmp(path, root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0');
}

/* Records the outcome; anything but a regular file is closed again. */
static ap_confined_kind settle(ap_confined *c, ap_confined_kind kind, int err)
{
	if (kind != AP_CONFINED_FILE && c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	c->kind = kind;
	c->err = err;
	return kind;
}

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* The folders opened beneath a root, kept for a reader's many opens: a
 * file then costs one openat from its folder, not one per component. keep
 * 0 (ap_open_under, ap_list_under) keeps none. */
struct ap_under {
	char *root;
	size_t keep;
	ap_map *index; /* a folder's path, as rel spells it, to its slot in fds */
	int *fds;
	size_t nfds;
};

/* Folders deeper than this many bytes are walked from the root each time:
 * a hostile path of a million components must not cost a lookup of each
 * prefix. */
#define UNDER_KEY_MAX 1024

/* Keeps fd when there is room (*kept); memory running out is ENOMEM, as
 * any other failure to open would be, with fd closed. */
static int keep_folder(ap_under *u, const char *dir, size_t len, int fd, bool *kept)
{
	*kept = false;
	if (u->nfds == u->keep || len > UNDER_KEY_MAX)
		return 0;
	if ((u->index == NULL && (u->index = ap_map_new()) == NULL) ||
	    ap_map_put(u->index, dir, len, u->nfds) < 0) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	u->fds[u->nfds++] = fd;
	*kept = true;
	return 0;
}

/* The folder dir[0, len) (components split by '/', "" and "." skipped;
 * len 0: the root) opened beneath the root following no symlink: ELOOP or
 * ENOTDIR for one on the way. *kept: whether u keeps it; else the caller
 * closes it. -1 with errno. */
static int folder_fd(ap_under *u, const char *dir, size_t len, bool *kept)
{
	size_t slot, at = 0;
	int fd, err;

	*kept = false;
	if (u->index != NULL && len <= UNDER_KEY_MAX &&
	    (slot = ap_map_get(u->index, dir, len)) != AP_MAP_ABSENT) {
		*kept = true;
		return u->fds[slot];
	}
	/* From the deepest folder kept on the way, else the root. */
	fd = -1;
	if (u->index != NULL)
		for (size_t cut = len < UNDER_KEY_MAX ? len : UNDER_KEY_MAX; cut > 0; cut--)
			if (dir[cut - 1] == '/' &&
			    (slot = ap_map_get(u->index, dir, cut - 1)) != AP_MAP_ABSENT) {
				fd = u->fds[slot];
				*kept = true;
				at = cut;
				break;
			}
	if (fd < 0) {
		if (u->index != NULL && (slot = ap_map_get(u->index, "", 0)) != AP_MAP_ABSENT) {
			fd = u->fds[slot];
			*kept = true;
		} else {
			if ((fd = open(u->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
			    keep_folder(u, "", 0, fd, kept) < 0)
				return -1;
		}
	}
	while (at < len) {
		size_t end = at, clen;
		char name[NAME_MAX + 1];
		int next;

		while (end < len && dir[end] != '/')
			end++;
		clen = end - at;
		if (clen == 0 || (clen == 1 && dir[at] == '.')) {
			at = end + 1;
			continue;
		}
		if (clen > NAME_MAX) {
			next = -1;
			errno = ENAMETOOLONG;
		} else {
			memcpy(name, dir + at, clen);
			name[clen] = '\0';
			next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		}
		err = errno;
		if (!*kept)
			close(fd);
		errno = err;
		if (next < 0)
			return -1;
		fd = next;
		if (keep_folder(u, dir, end, fd, kept) < 0)
			return -1;
		at = end + 1;
	}
	return fd;
}

/* rel (relative, no "..") opened beneath the root without following a
 * symlink in any component: ELOOP for one (ENOTDIR for one in a folder's
 * place). flags: the last component's. An fd of the caller's, or -1 with
 * errno. */
static int open_beneath(ap_under *u, const char *rel, int flags)
{
	const char *slash = strrchr(rel, '/');
	const char *name = slash != NULL ? slash + 1 : rel;
	bool kept;
	int dir, fd, err;

	dir = folder_fd(u, rel, slash != NULL ? (size_t)(slash - rel) : 0, &kept);
	if (dir < 0)
		return -1;
	fd = openat(dir, name[0] != '\0' ? name : ".", flags | O_NOFOLLOW);
	err = errno;
	if (!kept)
		close(dir);
	errno = err;
	return fd;
}

ap_under *ap_under_new(const char *root, size_t keep)
{
	ap_under *u = ap_calloc(1, sizeof *u);

	if (u == NULL)
		return NULL;
	u->keep = keep;
	if ((u->root = ap_strdup(root)) == NULL ||
	    (keep > 0 && (u->fds = ap_calloc(keep, sizeof *u->fds)) == NULL)) {
		ap_under_free(u);
		return NULL;
	}
	return u;
}

void ap_under_free(ap_under *u)
{
	if (u == NULL)
		return;
	for (size_t i = 0; i < u->nfds; i++)
		close(u->fds[i]);
	free(u->fds);
	ap_map_free(u->index);
	free(u->root);
	free(u);
}

/* fd opened (or -1 with err): what it is. */
static ap_confined_kind opened(ap_confined *c, int fd, int err)
{
	c->fd = fd;
	if (c->fd < 0)
		return settle(c, AP_CONFINED_ERRNO, err);
	if (fstat(c->fd, &c->st) != 0)
		return settle(c, AP_CONFINED_ERRNO, errno);
	if (S_ISDIR(c->st.st_mode))
		return settle(c, AP_CONFINED_FOLDER, 0);
	if (!S_ISREG(c->st.st_mode))
		return settle(c, AP_CONFINED_NOT_FILE, 0);
	return settle(c, AP_CONFINED_FILE, 0);
}

ap_confined_kind ap_under_open(ap_under *u, const char *rel, ap_confined *c)
{
	char *joined, *real;
	const char *root = u->root;
	int err, fd;

	c->fd = -1;
	c->target = NULL;
	/* Most paths a scan asks of are not there, and most that are hold no
	 * symlink; realpath costs a readlink per component, the root's too.
	 * Opened beneath the root following no symlink, a component that is
	 * not there (ENOENT) is not there whatever a symlink elsewhere holds.
	 * A symlink on the way (ELOOP, or ENOTDIR from a folder's
	 * O_DIRECTORY), or any other failure, is told as below. */
	if (ap_path_refusal(rel) == NULL && rel[strlen(rel) - 1] != '/') {
		fd = open_beneath(u, rel, OPEN_FLAGS);
		if (fd >= 0 || errno == ENOMEM)
			return opened(c, fd, errno);
		if (errno == ENOENT)
			return settle(c, AP_CONFINED_MISSING, ENOENT);
	}
	joined = ap_asprintf("%s/%s", strcmp(root, "/") == 0 ? "" : root, rel);
	if (joined == NULL)
		return settle(c, AP_CONFINED_ERRNO, ENOMEM);
	real = realpath(joined, NULL);
	err = errno;
	free(joined);
	if (real == NULL)
		return settle(c, err == ENOENT || err == ENOTDIR ? AP_CONFINED_MISSING : AP_CONFINED_ERRNO,
		              err);
	if (!ap_path_under(root, real)) {
		c->target = real;
		return settle(c, AP_CONFINED_OUTSIDE, 0);
	}
	/* The resolved path has no symlinks left: it is opened beneath the root
	 * following none, so that a folder swapped for a symlink since (to a
	 * folder outside, say) is refused, not read. O_NONBLOCK keeps a FIFO
	 * from blocking. */
	fd = open_beneath(u, real + (strcmp(root, "/") == 0 ? 1 : strlen(root) + 1), OPEN_FLAGS);
	err = errno;
	free(real);
	return opened(c, fd, err);
}

ap_confined_kind ap_open_under(const char *root, const char *rel, ap_confined *c)
{
	ap_under once = {.root = (char *)root};

	return ap_under_open(&once, rel, c);
}

const char *ap_seen_of(ap_confined_kind kind, int err)
{
	switch (kind) {
	case AP_CONFINED_FILE:
		return "file";
	case AP_CONFINED_MISSING:
		return "absent";
	case AP_CONFINED_OUTSIDE:
		return "outside";
	case AP_CONFINED_FOLDER:
		return "folder";
	case AP_CONFINED_NOT_FILE:
		return "not-file";
	case AP_CONFINED_ERRNO:
		break;
	}
	return err == ELOOP ? "loop" : err == ENAMETOOLONG ? "too-long" : "unreadable";
}

void ap_sha256_buf(const void *data, size_t len, unsigned char digest[AP_SHA256_SIZE])
{
	struct sha256_ctx sha;

	sha256_init(&sha);
	sha256_update(&sha, len, data);
	sha256_digest(&sha, AP_SHA256_SIZE, digest);
}

int ap_sha256_fd(int fd, unsigned char digest[AP_SHA256_SIZE], size_t *bytes)
{
	struct sha256_ctx ctx;
	unsigned char chunk[1 << 16];
	size_t total = 0;
	ssize_t n;

	sha256_init(&ctx);
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		sha256_update(&ctx, (size_t)n, chunk);
		total += (size_t)n;
	}
	sha256_digest(&ctx, AP_SHA256_SIZE, digest);
	if (bytes != NULL)
		*bytes = total;
	return 0;
}

void ap_sha256_hex(const unsigned char digest[AP_SHA256_SIZE], char hex[2 * AP_SHA256_SIZE + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < AP_SHA256_SIZE; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 0xF];
	}
	hex[2 * AP_SHA256_SIZE] = '\0';
}

static ap_confined_kind no_memory(int *err)
{
	*err = ENOMEM;
	return AP_CONFINED_ERRNO;
}

ap_confined_kind ap_under_list(ap_under *u, const char *rel, char **text, size_t *len, int *err)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	ap_buf out = AP_BUF_INIT;
	ap_confined_kind kind = AP_CONFINED_FOLDER;
	struct dirent *de;
	DIR *d;
	int fd;

	*text = NULL;
	*len = 0;
	*err = 0;
	/* rel ends in '/': the folder itself is opened as "." in it, a reading
	 * of its own that no other listing's position disturbs. */
	fd = open_beneath(u, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*err = errno;
		/* ELOOP: a symlink on the way, which a listing does not follow. */
		return errno == ENOENT ? AP_CONFINED_MISSING
		       : errno == ENOTDIR || errno == ELOOP ? AP_CONFINED_NOT_FILE
		                                            : AP_CONFINED_ERRNO;
	}
	d = fdopendir(fd);
	if (d == NULL) {
		*err = errno;
		close(fd);
		return AP_CONFINED_ERRNO;
	}
	for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
		unsigned char type = de->d_type;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (type == DT_UNKNOWN && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_LNK;
		if (type != DT_REG && type != DT_DIR)
			continue;
		if (n == AP_LISTING_MAX) {
			*err = EFBIG;
			kind = AP_CONFINED_ERRNO;
			break;
		}
		if (ap_grow((void **)&names, &cap, n + 1, sizeof *names) < 0 ||
		    !(names[n] = ap_asprintf("%s%s", de->d_name, type == DT_DIR ? "/" : ""))) {
			kind = no_memory(err);
			break;
		}
		n++;
	}
	if (errno != 0 && kind == AP_CONFINED_FOLDER) {
		*err = errno;
		kind = AP_CONFINED_ERRNO;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof *names, ap_cmp_strs);
	for (size_t i = 0; i < n; i++) {
		if (kind == AP_CONFINED_FOLDER && ap_buf_try_printf(&out, "%s\n", names[i]) < 0)
			kind = no_memory(err);
		free(names[i]);
	}
	free(names);
	if (kind == AP_CONFINED_FOLDER) {
		*len = out.len;
		if ((*text = ap_buf_try_detach(&out)) != NULL)
			return kind;
		*len = 0;
		kind = no_memory(err);
	}
	ap_buf_free(&out);
	return kind;
}

ap_confined_kind ap_list_under(const char *root, const char *rel, char **text, size_t *len,
                               int *err)
{
	ap_under once = {.root = (char *)root};

	return ap_under_list(&once, rel, text, len, err);
}
