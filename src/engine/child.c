/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/ap-util.h"
#include "engine/child.h"
#include "engine/helper.h"

extern char **environ;

/* How long a killed child may take to die and let go of its pipes. */
#define KILL_GRACE_S 5.0
/* How often exits are looked for while no output comes. */
#define REAP_POLL_S 0.1
/* Once every pipe is closed the exit is near: it is looked for this soon,
 * then twice as late each time, up to REAP_POLL_S. */
#define REAP_SOON_S 0.0005
/* Enough of a child's stderr to explain a failure; the rest is dropped. */
#define STDERR_KEEP 2048

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ap_child_init(ap_child *c)
{
	memset(c, 0, sizeof *c);
	c->out_fd = c->err_fd = c->in_fd = -1;
}

/* fed: its stdin is a socket the caller writes questions to (a socket, so
 * that a question to a child gone fails with EPIPE instead of SIGPIPE). */
static int start(ap_child *c, char *const *argv, double timeout_s, bool fed)
{
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	int out[2], err[2], in[2] = {-1, -1}, rc;

	ap_child_init(c);
	if ((rc = ap_runnable(argv[0])) != 0)
		return rc;
	if (fed && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
		return errno;
	if (pipe2(out, O_CLOEXEC) != 0) {
		rc = errno;
		goto close_in;
	}
	if (pipe2(err, O_CLOEXEC) != 0) {
		rc = errno;
		close(out[0]);
		close(out[1]);
		goto close_in;
	}
	posix_spawn_file_actions_init(&actions);
	if (fed)
		posix_spawn_file_actions_adddup2(&actions, in[1], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawnp(&c->pid, argv[0], &actions, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	close(out[1]);
	close(err[1]);
	if (rc != 0) {
		close(out[0]);
		close(err[0]);
		goto close_in;
	}
	if (fed) {
		close(in[1]);
		c->in_fd = in[0];
	}
	/* Non-blocking: once the child has exited, what is there is read without
	 * waiting for more (finish). */
	fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
	fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
	c->out_fd = out[0];
	c->err_fd = err[0];
	c->deadline = now_s() + timeout_s;
	return 0;
close_in:
	if (fed) {
		close(in[0]);
		close(in[1]);
	}
	return rc;
}

int ap_child_start(ap_child *c, char *const *argv, double timeout_s)
{
	return start(c, argv, timeout_s, false);
}

int ap_child_start_fed(ap_child *c, char *const *argv, double timeout_s)
{
	return start(c, argv, timeout_s, true);
}

/* Once a child has exited, what is left in its pipes is read up to this
 * much of stderr (stdout stops at AP_CHILD_OUT_MAX): something it left behind
 * may still be writing. */
#define EXIT_DRAIN_MAX ((size_t)1 << 20)

static void overflow(ap_child *c)
{
	c->overflowed = true;
	ap_buf_free(&c->out);
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->out_fd = -1;
	/* Not reaped yet (see settle), so the group id is still the child's. */
	kill(-c->pid, SIGKILL);
}

/* One read of fd (c's stdout or stderr) into c. Returns the bytes read, 0
 * when nothing is there now, -1 once fd is done and closed: at its end, on
 * an error, or when stdout passed AP_CHILD_OUT_MAX. */
static ssize_t drain(ap_child *c, int *fd)
{
	char chunk[65536];
	ssize_t n = read(*fd, chunk, sizeof chunk);

	if (n > 0) {
		if (fd == &c->out_fd) {
			if (c->out.len + (size_t)n > AP_CHILD_OUT_MAX) {
				overflow(c);
				return -1;
			}
			ap_buf_append(&c->out, chunk, (size_t)n);
		} else if (c->err.len < STDERR_KEEP) {
			ap_buf_append(&c->err, chunk, (size_t)n);
		}
		return n;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	close(*fd);
	*fd = -1;
	return -1;
}

/* Whether the child has exited, without reaping it: while it is a zombie
 * its pid, and so its process group's id, cannot be reused. */
static bool has_exited(const ap_child *c)
{
	siginfo_t info;
	int r;

	memset(&info, 0, sizeof info);
	do
		r = waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT);
	while (r < 0 && errno == EINTR);
	return r == 0 && info.si_pid == c->pid;
}

static void close_pipes(ap_child *c)
{
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->out_fd = c->err_fd = c->in_fd = -1;
}

/* The child has exited: everything it wrote is in its pipes. Reads what is
 * there now (the pipes are non-blocking) rather than waiting for their end,
 * which a process it left behind may hold off for as long as it likes, after
 * killing what is left of its group; reaps it. */
static void finish(ap_child *c)
{
	size_t err_read = 0;
	int status;
	pid_t r;

	kill(-c->pid, SIGKILL);
	while (c->out_fd >= 0 && drain(c, &c->out_fd) > 0)
		;
	while (c->err_fd >= 0 && err_read < EXIT_DRAIN_MAX) {
		ssize_t n = drain(c, &c->err_fd);
		if (n <= 0)
			break;
		err_read += (size_t)n;
	}
	do
		r = waitpid(c->pid, &status, 0);
	while (r < 0 && errno == EINTR);
	if (r == c->pid)
		c->status = status;
	c->exited = true;
	if (c->overflowed && !WIFSIGNALED(c->status))
		c->status = SIGKILL; /* as killed by SIGKILL: which it was meant to be */
	close_pipes(c);
}

/* A child is done once it has exited, or once the grace after its kill is
 * over: a process stuck in the driver may not die at once, and must not hold
 * the scan. */
static bool settle(ap_child *c, double t)
{
	if (c->pid <= 0 || c->exited) {
		close_pipes(c);
		return true; /* never started, or done */
	}
	if (has_exited(c)) {
		finish(c);
		return true;
	}
	if (!c->timed_out && t >= c->deadline) {
		c->timed_out = true;
		kill(-c->pid, SIGKILL);
		c->deadline = t + KILL_GRACE_S;
	} else if (c->timed_out && t >= c->deadline) {
		close_pipes(c);
		c->abandoned = true;
		return true;
	}
	return false;
}

static void add_fd(struct pollfd *fds, size_t *nfds, int fd)
{
	if (fd >= 0)
		fds[(*nfds)++] = (struct pollfd){.fd = fd, .events = POLLIN};
}

void ap_children_wait(ap_child *cs, size_t n)
{
	struct pollfd *fds = ap_xcalloc(2 * n, sizeof *fds);
	double soon = REAP_SOON_S;
	size_t i, k;

	for (;;) {
		size_t nfds = 0, active = 0;
		double t = now_s(), next = t + REAP_POLL_S;
		int wait_ms;

		for (i = 0; i < n; i++) {
			if (settle(&cs[i], t))
				continue;
			active++;
			add_fd(fds, &nfds, cs[i].out_fd);
			add_fd(fds, &nfds, cs[i].err_fd);
			if (cs[i].deadline < next)
				next = cs[i].deadline;
		}
		if (active == 0)
			break;
		/* Exits are noticed by polling waitpid too: a child can close its
		 * pipes before it exits, as every child does an instant before. */
		if (nfds == 0 && t + soon < next) {
			struct timespec nap = {0, (long)(soon * 1e9)};
			soon = soon * 2 < REAP_POLL_S ? soon * 2 : REAP_POLL_S;
			nanosleep(&nap, NULL);
			continue;
		}
		soon = REAP_SOON_S;
		wait_ms = next > t ? (int)((next - t) * 1000) + 1 : 0;
		if (poll(fds, nfds, wait_ms) < 0 && errno != EINTR)
			break;
		for (k = 0; k < nfds; k++) {
			if (fds[k].revents == 0)
				continue;
			for (i = 0; i < n; i++) {
				if (fds[k].fd == cs[i].out_fd)
					drain(&cs[i], &cs[i].out_fd);
				else if (fds[k].fd == cs[i].err_fd)
					drain(&cs[i], &cs[i].err_fd);
			}
		}
	}
	free(fds);
}

/* The bytes of out up to its lines-th newline; 0 when it has fewer. */
static size_t answer_len(const ap_child *c, size_t lines)
{
	size_t at = 0;

	while (lines > 0 && at < c->out.len) {
		const char *nl = memchr(c->out.data + at, '\n', c->out.len - at);
		if (nl == NULL)
			return 0;
		at = (size_t)(nl - c->out.data) + 1;
		lines--;
	}
	return lines == 0 ? at : 0;
}

size_t ap_child_ask(ap_child *c, const char *question, size_t lines, double timeout_s)
{
	struct pollfd fds[2];
	size_t len, sent = 0, qlen = question != NULL ? strlen(question) : 0;

	if (c->pid <= 0 || c->exited || c->timed_out)
		return 0;
	c->deadline = now_s() + timeout_s;
	/* A child that does not read, or is gone, is told nothing more: its
	 * exit or its time limit says why it gave no answer. */
	while (sent < qlen && c->in_fd >= 0) {
		ssize_t n = send(c->in_fd, question + sent, qlen - sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(c->in_fd);
			c->in_fd = -1;
			break;
		}
		sent += (size_t)n;
	}
	for (;;) {
		double t;
		size_t nfds = 0;
		int wait_ms;

		if ((len = answer_len(c, lines)) > 0)
			return len;
		t = now_s();
		if (settle(c, t))
			return c->exited && !c->overflowed ? answer_len(c, lines) : 0;
		add_fd(fds, &nfds, c->out_fd);
		add_fd(fds, &nfds, c->err_fd);
		/* with its pipes closed, its exit is near: looked for soon */
		wait_ms = nfds == 0 ? 1 : c->deadline > t ? (int)((c->deadline - t) * 1000) + 1 : 0;
		if (poll(fds, nfds, wait_ms) < 0 && errno != EINTR)
			return 0;
		for (size_t k = 0; k < nfds; k++) {
			if (fds[k].revents == 0)
				continue;
			if (fds[k].fd == c->out_fd)
				drain(c, &c->out_fd);
			else if (fds[k].fd == c->err_fd)
				drain(c, &c->err_fd);
		}
	}
}

void ap_child_take(ap_child *c, size_t len)
{
	if (len == 0)
		return;
	/* with the NUL after it */
	memmove(c->out.data, c->out.data + len, c->out.len - len + 1);
	c->out.len -= len;
}

void ap_child_stop(ap_child *c)
{
	/* due now: the wait kills its group as at a time limit, and reaps it */
	if (!c->timed_out)
		c->deadline = 0;
	ap_children_wait(c, 1);
}

void ap_child_free(ap_child *c)
{
	close_pipes(c);
	ap_buf_free(&c->out);
	ap_buf_free(&c->err);
}

char *ap_child_failure(const ap_child *c, const char *what, double timeout_s)
{
	char *tail;
	char *why;
	size_t len = c->err.len;

	while (len > 0 && (c->err.data[len - 1] == '\n' || c->err.data[len - 1] == ' '))
		len--;
	tail = len ? ap_xasprintf(": %.*s", (int)len, c->err.data) : ap_xstrdup("");
	if (c->abandoned)
		why = ap_xasprintf("timed out after %g s, and still running %g s after it was "
		                   "killed%s", timeout_s, KILL_GRACE_S, tail);
	else if (c->timed_out)
		why = ap_xasprintf("timed out after %g s (killed)%s", timeout_s, tail);
	else if (c->overflowed)
		why = ap_xasprintf("%s wrote more than %zu bytes%s", what, AP_CHILD_OUT_MAX, tail);
	else if (WIFSIGNALED(c->status))
		why = ap_xasprintf("%s killed by signal %d (%s)%s", what, WTERMSIG(c->status),
		                   strsignal(WTERMSIG(c->status)), tail);
	else
		why = ap_xasprintf("%s exited with status %d without a result%s", what,
		                   WEXITSTATUS(c->status), tail);
	free(tail);
	return why;
}

