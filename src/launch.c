#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ap-error.h"
#include "ap-util.h"
#include "helper.h"
#include "launch.h"

extern char **environ;

#define DEFAULT_TIMEOUT_S 120.0
#define LIST_TIMEOUT_S 60.0
/* How long a killed child may take to die and let go of its pipes. */
#define KILL_GRACE_S 5.0
/* How often exits are looked for while no output comes. */
#define REAP_POLL_S 0.1
/* Enough of a child's stderr to explain a crash; the rest is dropped. */
#define STDERR_KEEP 2048

typedef struct child {
	pid_t pid;
	int out_fd;
	int err_fd;
	ap_buf out;
	ap_buf err;
	int status;
	bool exited;
	bool timed_out;
	bool abandoned; /* still running after the kill's grace: never reaped */
	double deadline;
} child;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *launcher_path(const ap_launch_opts *o)
{
	const char *env = getenv("AITER_PROBE_LAUNCHER");

	if (o != NULL && o->launcher != NULL)
		return ap_xstrdup(o->launcher);
	if (env != NULL && *env != '\0')
		return ap_xstrdup(env);
	return ap_helper_path("aiter-probe-launcher");
}

/* Starts argv in a process group of its own, so that a timeout kills the
 * launcher and anything it started. */
static int child_start(child *c, char *const *argv, double timeout_s)
{
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	int out[2], err[2], rc;

	memset(c, 0, sizeof *c);
	c->out_fd = c->err_fd = -1;
	if ((rc = ap_runnable(argv[0])) != 0)
		return rc;
	if (pipe2(out, O_CLOEXEC) != 0)
		return errno;
	if (pipe2(err, O_CLOEXEC) != 0) {
		rc = errno;
		close(out[0]);
		close(out[1]);
		return rc;
	}
	posix_spawn_file_actions_init(&actions);
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
		return rc;
	}
	c->out_fd = out[0];
	c->err_fd = err[0];
	c->deadline = now_s() + timeout_s;
	return 0;
}

static void drain(int *fd, ap_buf *into, size_t keep)
{
	char chunk[4096];
	ssize_t n = read(*fd, chunk, sizeof chunk);

	if (n > 0) {
		if (keep == 0 || into->len < keep)
			ap_buf_append(into, chunk, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	close(*fd);
	*fd = -1;
}

static void reap(child *c)
{
	int status;
	pid_t r;

	if (c->exited || c->pid <= 0)
		return;
	do
		r = waitpid(c->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->pid) {
		c->status = status;
		c->exited = true;
	}
}

static void close_pipes(child *c)
{
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->out_fd = c->err_fd = -1;
}

/* A child is done once it has exited and its pipes are closed, or once the
 * grace after its kill is over: something outside its process group may hold
 * a pipe open, and a process stuck in the driver may not die at once, and
 * neither may hold the scan. */
static bool settle(child *c, double t)
{
	if (c->pid <= 0)
		return true; /* never started */
	reap(c);
	if (c->exited && c->out_fd < 0 && c->err_fd < 0)
		return true;
	if (!c->timed_out && t >= c->deadline) {
		c->timed_out = true;
		kill(-c->pid, SIGKILL);
		c->deadline = t + KILL_GRACE_S;
	} else if (c->timed_out && t >= c->deadline) {
		close_pipes(c);
		c->abandoned = !c->exited;
		return true;
	}
	return false;
}

static void add_fd(struct pollfd *fds, size_t *nfds, int fd)
{
	if (fd >= 0)
		fds[(*nfds)++] = (struct pollfd){.fd = fd, .events = POLLIN};
}

/* Waits for every child, reading their output as it comes, and kills the
 * process group of each child that outlives its deadline. */
static void wait_children(child *cs, size_t n)
{
	struct pollfd *fds = ap_xcalloc(2 * n, sizeof *fds);
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
		 * pipes before it exits. */
		wait_ms = next > t ? (int)((next - t) * 1000) + 1 : 0;
		if (poll(fds, nfds, wait_ms) < 0 && errno != EINTR)
			break;
		for (k = 0; k < nfds; k++) {
			if (fds[k].revents == 0)
				continue;
			for (i = 0; i < n; i++) {
				if (fds[k].fd == cs[i].out_fd)
					drain(&cs[i].out_fd, &cs[i].out, 0);
				else if (fds[k].fd == cs[i].err_fd)
					drain(&cs[i].err_fd, &cs[i].err, STDERR_KEEP);
			}
		}
	}
	free(fds);
}

static void child_free(child *c)
{
	close_pipes(c);
	ap_buf_free(&c->out);
	ap_buf_free(&c->err);
}

/* Why a child gave no usable JSON, in words. */
static char *child_failure(const child *c, double timeout_s)
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
	else if (WIFSIGNALED(c->status))
		why = ap_xasprintf("launcher killed by signal %d (%s)%s", WTERMSIG(c->status),
		                   strsignal(WTERMSIG(c->status)), tail);
	else
		why = ap_xasprintf("launcher exited with status %d without a result%s",
		                   WEXITSTATUS(c->status), tail);
	free(tail);
	return why;
}

static json_t *child_json(const child *c)
{
	json_t *j;

	if (c->timed_out || !WIFEXITED(c->status) || c->out.len == 0)
		return NULL;
	j = json_loadb(c->out.data, c->out.len, 0, NULL);
	if (j != NULL && !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Reads the launcher's device list; NULL with *reason when there is none. */
static json_t *list_devices(char *path, char **reason)
{
	char *argv[] = {path, "--list", NULL};
	json_t *answer, *devs;
	child c;
	int rc = child_start(&c, argv, LIST_TIMEOUT_S);

	if (rc != 0) {
		*reason = ap_xasprintf("cannot run the launcher %s: %s", path, strerror(rc));
		return NULL;
	}
	wait_children(&c, 1);
	answer = child_json(&c);
	if (answer == NULL) {
		char *why = child_failure(&c, LIST_TIMEOUT_S);
		*reason = ap_xasprintf("listing devices failed: %s", why);
		free(why);
	}
	child_free(&c);
	if (answer == NULL)
		return NULL;
	devs = json_incref(json_object_get(answer, "devices"));
	if (!json_is_array(devs))
		*reason = ap_xstrdup("the launcher's device list has no \"devices\" array");
	else if (json_array_size(devs) == 0) {
		const char *why = json_string_value(json_object_get(answer, "reason"));
		*reason = ap_xstrdup(why ? why : "no GPU found");
	}
	json_decref(answer);
	if (!json_is_array(devs)) {
		json_decref(devs);
		return NULL;
	}
	return devs;
}

json_t *ap_launch_devices(const ap_launch_opts *o, char **reason)
{
	char *path;
	json_t *devs;

	*reason = NULL;
#ifdef GPU_BUILD_REASON
	if ((o == NULL || o->launcher == NULL) &&
	    (getenv("AITER_PROBE_LAUNCHER") == NULL || *getenv("AITER_PROBE_LAUNCHER") == '\0')) {
		*reason = ap_xstrdup(GPU_BUILD_REASON);
		return json_array();
	}
#endif
	path = launcher_path(o);
	devs = list_devices(path, reason);
	free(path);
	return devs != NULL ? devs : json_array();
}

typedef struct args {
	char *v[32];
	size_t n;
	char ints[12][16];
	size_t nints;
} args;

static void arg(args *a, const char *s)
{
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void arg_int(args *a, const char *flag, int value)
{
	char *slot = a->ints[a->nints++];

	snprintf(slot, sizeof a->ints[0], "%d", value);
	arg(a, flag);
	arg(a, slot);
}

static json_t *device_result(const child *c, const json_t *dev, double timeout_s)
{
	json_t *j = child_json(c);
	char *why;

	if (j != NULL && json_is_string(json_object_get(j, "status"))) {
		if (json_object_get(j, "device") == NULL)
			json_object_set(j, "device", (json_t *)dev);
		return j;
	}
	json_decref(j);
	why = child_failure(c, timeout_s);
	j = json_pack("{s:O, s:s, s:s}", "device", dev, "status", "error", "error", why);
	free(why);
	return j;
}

/* o->inject is "MODE" for every device or "MODE@INDEX" for one, so a test
 * can show that one device's fault leaves the others alone. Returns the
 * mode for dev (in mode, of size n), or NULL. */
static const char *inject_for(const ap_launch_opts *o, const json_t *dev, char *mode, size_t n)
{
	const char *at;

	if (o == NULL || o->inject == NULL || *o->inject == '\0')
		return NULL;
	at = strchr(o->inject, '@');
	if (at != NULL &&
	    strtol(at + 1, NULL, 10) != json_integer_value(json_object_get(dev, "index")))
		return NULL;
	snprintf(mode, n, "%.*s", at ? (int)(at - o->inject) : (int)strlen(o->inject), o->inject);
	return mode;
}

json_t *ap_launch_run(const ap_launch_spec *spec, const json_t *devs, const ap_launch_opts *o)
{
	double timeout_s = spec->timeout_s > 0 ? spec->timeout_s
	                   : o != NULL && o->timeout_s > 0 ? o->timeout_s
	                                                   : DEFAULT_TIMEOUT_S;
	size_t ndev = json_array_size(devs);
	child *cs = ap_xcalloc(ndev, sizeof *cs);
	json_t *results = json_array();
	char *path = launcher_path(o);
	size_t i;

	for (i = 0; i < ndev; i++) {
		json_t *dev = json_array_get(devs, i);
		args a = {.n = 0};
		char mode[32];
		int rc;

		arg(&a, path);
		arg_int(&a, "--device", (int)json_integer_value(json_object_get(dev, "index")));
		arg(&a, "--kernel");
		arg(&a, spec->kernel);
		arg_int(&a, "--heads", spec->heads);
		arg_int(&a, "--pad-to", spec->pad_to);
		arg_int(&a, "--head-dim", spec->head_dim);
		arg_int(&a, "--rope", spec->rope);
		if (spec->batch > 0)
			arg_int(&a, "--batch", spec->batch);
		if (spec->context > 0)
			arg_int(&a, "--context", spec->context);
		if (spec->page_size > 0)
			arg_int(&a, "--page-size", spec->page_size);
		if (inject_for(o, dev, mode, sizeof mode) != NULL) {
			arg(&a, "--inject");
			arg(&a, mode);
		}
		rc = child_start(&cs[i], a.v, timeout_s);
		if (rc != 0) {
			/* Recorded as an exit without a result, with the reason. */
			cs[i].exited = true;
			cs[i].status = 127 << 8;
			ap_buf_printf(&cs[i].err, "cannot run the launcher %s: %s", a.v[0], strerror(rc));
		}
	}
	wait_children(cs, ndev);
	for (i = 0; i < ndev; i++) {
		json_array_append_new(results,
		                      device_result(&cs[i], json_array_get(devs, i), timeout_s));
		child_free(&cs[i]);
	}
	free(path);
	free(cs);
	return results;
}
