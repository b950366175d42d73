/* SPDX-License-Identifier: MIT */
/* Reading under a root only: the one check the reader and verify share, so
 * that neither a rule, a tampered manifest nor a symlink makes them read
 * outside the AITER root, and one streaming SHA-256 for what they read. */
#ifndef AP_CONFINE_H
#define AP_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define AP_SHA256_SIZE 32

/* Checks a path before anything is read: relative, not empty, no ".."
 * component, no NUL. Returns NULL when fine, else a static reason. */
const char *ap_path_refusal(const char *rel);

/* Rules and manifests name paths in the layout of an AITER checkout. In an
 * installed wheel the C sources and kernel tables live apart from the
 * Python package, in the meta folder (aiter_meta/ beside the package, or
 * $AITER_META_DIR): a path whose first component is one of these is read
 * under the meta folder, every other under the root. */
bool ap_path_in_meta(const char *rel);

/* Whether path is root or below it; both canonical (realpath). */
bool ap_path_under(const char *root, const char *path);

/* The canonical path of dir when it is a folder, else NULL with errno set
 * (ENOTDIR for a path that is something else): the roots the reader and
 * verify read beneath. */
char *ap_real_folder(const char *dir);

/* path exists and is a folder (symlinks followed). */
bool ap_is_folder(const char *path);

typedef enum {
	AP_CONFINED_FILE,    /* a regular file, open: fd and st */
	AP_CONFINED_MISSING, /* no such file, or a component is not a folder */
	AP_CONFINED_OUTSIDE, /* resolves outside the root: target */
	AP_CONFINED_FOLDER,
	AP_CONFINED_NOT_FILE, /* a FIFO, a device, a socket */
	AP_CONFINED_ERRNO,    /* the system refused: err (ENOMEM: memory ran out) */
} ap_confined_kind;

typedef struct ap_confined {
	ap_confined_kind kind;
	int fd;         /* FILE only; the caller closes it */
	struct stat st; /* FILE only */
	char *target;   /* OUTSIDE only: the resolved path; the caller frees it */
	int err;        /* ERRNO only: an errno value */
} ap_confined;

/* Opens root/rel (root canonical, rel already passed ap_path_refusal) for
 * reading when it resolves to a regular file under root; symlinks inside the
 * root are followed. Never blocks on a FIFO. Returns c->kind. */
ap_confined_kind ap_open_under(const char *root, const char *rel, ap_confined *c);

/* The folders beneath one root that a reader has opened, kept open (at most
 * keep of them) for its next opens, so that a file costs one openat from
 * its folder instead of one for each component: ap_under_open and
 * ap_under_list are ap_open_under and ap_list_under through them. A folder
 * kept is the one opened then: one renamed or swapped for a symlink since
 * is still read as it was opened, never through the symlink. NULL when
 * memory runs out (the error set). */
typedef struct ap_under ap_under;
ap_under *ap_under_new(const char *root, size_t keep);
void ap_under_free(ap_under *u);
ap_confined_kind ap_under_open(ap_under *u, const char *rel, ap_confined *c);
ap_confined_kind ap_under_list(ap_under *u, const char *rel, char **text, size_t *len,
                               int *err);

/* A folder's listing as the reader and verify see it: the names of its
 * regular files ("name\n") and folders ("name/\n"), byte-sorted; symlinks and
 * special files are left out, so a listing never leads outside the root.
 * rel names the folder with a trailing '/' ("a/b/"; "./" is the root). Every
 * component is opened beneath root without following a symlink. At most
 * AP_LISTING_MAX entries. */
#define AP_LISTING_MAX 100000
ap_confined_kind ap_list_under(const char *root, const char *rel, char **text, size_t *len,
                               int *err);

/* A file over this many bytes is not hashed either: a manifest records it
 * as unverifiable (its seen class) instead of a scan reading gigabytes. */
#define AP_HASH_MAX_BYTES ((size_t)1 << 30)

/* What a scan saw at a path it could not read, as a manifest records it
 * (inputs[].seen) and verify compares it: "absent", "outside" (a symlink
 * leading out of the root), "folder", "not-file" (a FIFO, a device, a
 * socket), "loop" (symlinks), "too-long" (a name), "unreadable" (refused by
 * the system), "over-hash-cap". */
const char *ap_seen_of(ap_confined_kind kind, int err);

/* Hashes what is left to read of fd in 64 KiB chunks, so that a file of any
 * size costs no memory. 0 with digest and *bytes (when not NULL), or -errno. */
int ap_sha256_fd(int fd, unsigned char digest[AP_SHA256_SIZE], size_t *bytes);

void ap_sha256_buf(const void *data, size_t len, unsigned char digest[AP_SHA256_SIZE]);

/* The digest as 64 lowercase hex digits, the way manifests record it. */
void ap_sha256_hex(const unsigned char digest[AP_SHA256_SIZE], char hex[2 * AP_SHA256_SIZE + 1]);

#endif
