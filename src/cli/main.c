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
static int help_exec(int argc, char **argv);

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

/* help CMD runs CMD --help, so that the two cannot differ (history's text is
 * in its own program). */
static const struct ap_cmd ap_cmd_help = {
	.name = "help",
	.summary = "show a command's help (as COMMAND --help does)",
	.usage =
	"Usage: aiter-probe help [COMMAND]\n"
	"Show the help of COMMAND, the same as 'aiter-probe COMMAND --help'; without\n"
	"one, the tool's (as 'aiter-probe --help').\n\n"
	"Options:\n"
	"  -h, --help  show this help\n\n"
	"Exit status: 0 shown, 2 usage error (an unknown command).\n",
	.exec = help_exec,
};

static const struct ap_cmd *const commands[] = {
	&ap_cmd_scan,
	&ap_cmd_check,
	&ap_cmd_history_helper,
	&ap_cmd_diff,
	&ap_cmd_verify,
	&ap_cmd_list,
	&ap_cmd_explain,
	&ap_cmd_merge,
	&ap_cmd_help,
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

static int help_exec(int argc, char **argv)
{
	const char *name = NULL;
	int i, operands_only = 0;

	for (i = 1; i < argc; i++) {
		ap_cli_arg_kind kind = ap_cli_arg(argv[i], &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind == AP_ARG_HELP)
			return ap_cli_print_help(&ap_cmd_help, stdout);
		if (kind == AP_ARG_OPTION)
			return ap_cli_unknown_option(&ap_cmd_help, argv[i]);
		if (name != NULL)
			return ap_cli_unexpected(&ap_cmd_help, argv[i]);
		name = argv[i];
	}
	if (name == NULL) {
		print_tool_help(stdout);
		return AP_EXIT_OK;
	}
	for (size_t c = 0; c < NCOMMANDS; c++)
		if (strcmp(name, commands[c]->name) == 0) {
			char *help_argv[] = {(char *)commands[c]->name, (char *)"--help", NULL};
			return commands[c]->exec(2, help_argv);
		}
	return ap_cli_usage_error(&ap_cmd_help, "unknown command '%s'", name);
}

int main(int argc, char **argv)
{
	size_t i;

	ap_cli_heap_setup();
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
