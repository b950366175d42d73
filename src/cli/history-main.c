/* SPDX-License-Identifier: MIT */
/* aiter-probe-history: the history command as a program of its own, run by
 * `aiter-probe history`, so that only it links libgit2 (see main.c). */
#include "config.h"

#include "cli/cmd.h"

int main(int argc, char **argv)
{
	ap_cli_heap_setup();
	argv[0] = (char *)ap_cmd_history.name;
	return ap_cli_stdout_done(ap_cmd_history.exec(argc, argv));
}
