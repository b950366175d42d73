/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* rel (symlink-free, relative) opened beneath the folder root without
 * following a symlink in any component: one openat with O_NOFOLLOW per
 * component, each from the folder opened before it. (openat2's
 * RESOLVE_BENEATH would save the calls, but valgrind and some sandboxes do
 * not know it and say so on stderr.) An fd, or -1 with errno (ELOOP for a
 * symlink). */
static int open_beneath(const char *root, const char *rel)
{
	int dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *todo, *comp, *next, *save = NULL;
	int fd = -1, err;

	if (dir < 0)
		return -1;
	if (rel[0] == '\0')
		return dir;
	if ((todo = ap_strdup(rel)) == NULL) {
		close(dir);
		errno = ENOMEM;
		return -1;
	}
	comp = strtok_r(todo, "/", &save);
	while (comp != NULL) {
		next = strtok_r(NULL, "/", &save);
		fd = openat(dir, comp, (next ? O_RDONLY | O_DIRECTORY | O_CLOEXEC : OPEN_FLAGS) |
		                           O_NOFOLLOW);
		err = errno;
		close(dir);
		errno = err;
		if (fd < 0 || next == NULL)
			break;
		dir = fd;
		comp = next;
	}
	free(todo);
	return fd;
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

ap_confined_kind ap_open_under(const char *root, const char *rel, ap_confined *c)
{
	char *joined, *real;
	int err, fd;

	c->fd = -1;
	c->target = NULL;
	joined = ap_asprintf("%s/%s", strcmp(root, "/") == 0 ? "" : root, rel);
	if (joined == NULL)
		return settle(c, AP_CONFINED_ERRNO, ENOMEM);
	/* Most paths a scan asks of are not there, and most that are hold no
	 * symlink; realpath costs a readlink per component, the root's too.
	 * A path the kernel cannot resolve, symlinks followed, realpath cannot
	 * either: one lstat tells it. One with no symlink opens beneath the
	 * root following none; a symlink on the way (ELOOP, or ENOTDIR from a
	 * folder's O_DIRECTORY), or any other failure, is told as below. */
	if (lstat(joined, &c->st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
		err = errno;
		free(joined);
		return settle(c, AP_CONFINED_MISSING, err);
	}
	if (ap_path_refusal(rel) == NULL && rel[strlen(rel) - 1] != '/') {
		fd = open_beneath(root, rel);
		if (fd >= 0 || errno == ENOMEM) {
			err = errno;
			free(joined);
			return opened(c, fd, err);
		}
	}
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
	fd = open_beneath(root, real + (strcmp(root, "/") == 0 ? 1 : strlen(root) + 1));
	err = errno;
	free(real);
	return opened(c, fd, err);
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

ap_confined_kind ap_list_under(const char *root, const char *rel, char **text, size_t *len,
                               int *err)
{
	char *todo = ap_strdup(rel);
	char **names = NULL;
	size_t n = 0, cap = 0;
	ap_buf out = AP_BUF_INIT;
	ap_confined_kind kind = AP_CONFINED_FOLDER;
	struct dirent *de;
	char *save = NULL;
	DIR *d;
	int fd;

	*text = NULL;
	*len = 0;
	*err = 0;
	if (todo == NULL)
		return no_memory(err);
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (char *comp = strtok_r(todo, "/", &save); fd >= 0 && comp != NULL;
	     comp = strtok_r(NULL, "/", &save)) {
		int next;
		if (strcmp(comp, ".") == 0)
			continue;
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		close(fd);
		fd = next;
	}
	free(todo);
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
