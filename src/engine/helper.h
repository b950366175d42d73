/* SPDX-License-Identifier: MIT */
/* Finding the programs aiter-probe runs: the kernel launcher and the history
 * command's program. */
#ifndef AP_HELPER_H
#define AP_HELPER_H

/* The path of helper program name: beside the running executable when it is
 * there (a build tree), else in the package's libexec folder. Malloc'd. */
char *ap_helper_path(const char *name);

/* 0 when path can be run, else an errno value. A path without a slash is
 * left to the PATH search (0). Checked before spawning, because under some
 * runtimes (valgrind's) a failed exec shows only as exit status 127. */
int ap_runnable(const char *path);

#endif
