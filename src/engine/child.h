/* SPDX-License-Identifier: MIT */
/* Child processes run under a time limit, their output collected: the
 * kernel launcher (one per GPU, at once) and the Python that locates the
 * aiter package. A child runs in a process group of its own, so that a
 * timeout kills it and anything it started. A child is done once it has
 * exited: what it wrote is read then, without waiting for the end of its
 * output, which something it left behind may hold open; what is left of its
 * process group is killed. */
#ifndef AP_CHILD_H
#define AP_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/ap-util.h"

/* The most of a child's stdout that is kept: its answer is one small JSON
 * object or one line. More is a failure; the child's group is killed. */
#define AP_CHILD_OUT_MAX ((size_t)1 << 20)

typedef struct ap_child {
	pid_t pid;
	int out_fd;
	int err_fd;
	int in_fd;      /* its stdin, when started fed; else -1 */
	ap_buf out;     /* what it wrote on stdout, at most AP_CHILD_OUT_MAX bytes */
	ap_buf err;     /* the start of what it wrote on stderr */
	int status;     /* waitpid's, once exited; after an overflow it reads as
	                 * killed by SIGKILL, so no caller takes out for an answer */
	bool exited;
	bool timed_out;
	bool overflowed;/* wrote more than AP_CHILD_OUT_MAX bytes on stdout: killed, out emptied */
	bool abandoned; /* still running after the kill's grace: never reaped */
	double deadline;
} ap_child;

/* A child not started, which ap_child_stop and ap_child_free take (a zeroed
 * one holds fd 0, which they would close). */
void ap_child_init(ap_child *c);
/* Starts argv (argv[0] searched in PATH when it has no slash). Returns 0, or
 * an errno value when it cannot run. */
int ap_child_start(ap_child *c, char *const *argv, double timeout_s);
/* Starts argv as ap_child_start does, its stdin fed by ap_child_ask: one
 * process asked many questions, each answered before the next. */
int ap_child_start_fed(ap_child *c, char *const *argv, double timeout_s);
/* Writes question (NULL: none, for what it prints unasked) to the stdin of
 * c and waits, timeout_s at most, for the next lines of its answer; the
 * group is killed when it outlives that. Returns the bytes of c->out that
 * hold them (ap_child_take drops them), or 0 when it gave no such answer:
 * it exited, timed out or overflowed, which ap_child_failure explains. */
size_t ap_child_ask(ap_child *c, const char *question, size_t lines, double timeout_s);
void ap_child_take(ap_child *c, size_t len);
/* Kills the group of a fed child that is no longer needed and reaps it,
 * with the grace of a timeout's kill. */
void ap_child_stop(ap_child *c);
/* Waits for every started child, reading their output as it comes, and kills
 * the process group of each that outlives its deadline. */
void ap_children_wait(ap_child *cs, size_t n);
/* Why a child ended without the answer expected of it, in words; what names
 * it ("launcher"). Caller frees. */
char *ap_child_failure(const ap_child *c, const char *what, double timeout_s);
void ap_child_free(ap_child *c);

#endif
