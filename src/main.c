#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static const struct ap_cmd *const commands[] = {
	&ap_cmd_scan,
	&ap_cmd_check,
	&ap_cmd_history,
	&ap_cmd_diff,
	&ap_cmd_verify,
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

int ap_cli_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("aiter-probe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return AP_EXIT_ERROR;
}

int ap_cli_usage_error(const struct ap_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aiter-probe %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'aiter-probe %s --help'.\n", cmd->name);
	return AP_EXIT_ERROR;
}

int ap_cli_color(FILE *to)
{
	const char *no_color = getenv("NO_COLOR");
	return isatty(fileno(to)) && (no_color == NULL || *no_color == '\0');
}

int ap_cli_print_help(const struct ap_cmd *cmd, FILE *to)
{
	fputs(cmd->usage, to);
	return AP_EXIT_OK;
}

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
	      "Exit status: 0 done or all good, 1 the answer is no, 2 usage or input error.\n",
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
		return AP_EXIT_OK;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("aiter-probe %s\n", PACKAGE_VERSION);
		return AP_EXIT_OK;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i]->name) == 0)
			return commands[i]->exec(argc - 1, argv + 1);
	return ap_cli_fail("unknown command '%s'; try 'aiter-probe --help'", argv[1]);
}
