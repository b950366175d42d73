/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ap-util.h"
#include "cli/cmd.h"
#include "engine/helper.h"

static int run_helper(int argc, char **argv);

/* history needs libgit2, and loading it with the TLS and SSH libraries behind
 * it costs more than a whole scan; so it runs in a program of its own and the
 * scan that precedes every server start does not pay for it. */
static const struct ap_cmd ap_cmd_history_helper = {
	.name = "history",
	.summary = "when did a verdict change? (rules over a git range of AITER)",
	.exec = run_helper,
};

static int run_helper(int argc, char **argv)
{
	char *name = ap_xasprintf("aiter-probe-%s", argv[0]);
	char *path = ap_helper_path(name);

	(void)argc;
	execv(path, argv);
	ap_cli_fail("cannot run %s: %s", path, strerror(errno));
	free(path);
	free(name);
	return AP_EXIT_ERROR;
}

static const struct ap_cmd *const commands[] = {
	&ap_cmd_scan,
	&ap_cmd_check,
	&ap_cmd_history_helper,
	&ap_cmd_diff,
	&ap_cmd_verify,
	&ap_cmd_list,
	&ap_cmd_explain,
	&ap_cmd_merge,
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_tool_help(FILE *to)
{
	size_t i;

	fputs("Usage: aiter-probe COMMAND [OPTION]...\n"
	      "Tell what an installed AITER build can really do.\n\n"
	      "Commands:\n", to);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(to, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\nOptions:\n"
	      "  -h, --help     show this help (COMMAND --help: that command's)\n"
	      "  -V, --version  show the version\n\n"
	      "Exit status: 0 done or all good, 1 the answer is no, 2 usage or input error.\n\n"
	      "Report bugs to <" PACKAGE_BUGREPORT ">.\n",
	      to);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		print_tool_help(stderr);
		return AP_EXIT_ERROR;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		print_tool_help(stdout);
		return ap_cli_stdout_done(AP_EXIT_OK);
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("aiter-probe %s\n"
		       "License MIT (SPDX-License-Identifier: MIT): see the LICENSE file, or\n"
		       "<https://spdx.org/licenses/MIT.html>. There is NO WARRANTY.\n",
		       PACKAGE_VERSION);
		return ap_cli_stdout_done(AP_EXIT_OK);
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i]->name) == 0)
			return ap_cli_stdout_done(commands[i]->exec(argc - 1, argv + 1));
	return ap_cli_fail("unknown command '%s'; try 'aiter-probe --help'", argv[1]);
}
