/* SPDX-License-Identifier: MIT */
/* The command table: one file per subcommand (cmd-*.c), each defining one
 * struct ap_cmd. main.c dispatches; a command reports its own errors. */
#ifndef AP_CMD_H
#define AP_CMD_H

#include <stdio.h>

enum {
	AP_EXIT_OK = 0,    /* done; for check/diff/verify: all good */
	AP_EXIT_FAIL = 1,  /* the answer is no: unsupported, lost, stale */
	AP_EXIT_ERROR = 2, /* usage or input error */
	AP_EXIT_PARTIAL = 3, /* done, but for some input left out (merge: a file it could not read) */
};

struct ap_cmd {
	const char *name;
	const char *summary; /* one line for the tool's --help */
	const char *usage;   /* the full --help text of the subcommand */
	/* argv[0] is the subcommand's name; returns the exit status. */
	int (*exec)(int argc, char **argv);
};

extern const struct ap_cmd ap_cmd_scan;
extern const struct ap_cmd ap_cmd_check;
extern const struct ap_cmd ap_cmd_history;
extern const struct ap_cmd ap_cmd_diff;
extern const struct ap_cmd ap_cmd_verify;
extern const struct ap_cmd ap_cmd_list;
extern const struct ap_cmd ap_cmd_explain;
extern const struct ap_cmd ap_cmd_merge;

struct ap_ruleset;
struct json_t;

/* Loads the installed packs (rules/ and probes/ under the package data dir,
 * or $AITER_PROBE_DATADIR) unless no_defaults, then each extra path (file or
 * folder), and finishes the set. On failure prints the loader's
 * file:line:column message and returns AP_EXIT_ERROR; else AP_EXIT_OK. */
int ap_cli_load_rules(struct ap_ruleset **out, char *const *extra, size_t nextra, int no_defaults);

/* Options shared by the commands that scan (scan, check). */
struct ap_scan_cli {
	const char *aiter_root;
	char **rules;          /* --rules, in order */
	size_t nrules;
	int no_default_rules;
	int no_launch;
	int signatures; /* --signatures */
	const char *devices;   /* "all" or "0,2" */
	double launch_timeout; /* seconds; 0: default */
	size_t max_file_size;  /* bytes; 0: default */
	const char *host;      /* the manifest's "host"; NULL: gethostname */
	const char *python;         /* --python; NULL: $AITER_PROBE_PYTHON, else python3 */
	const char *python_version; /* --python-version X.Y instead */
};

/* Takes the scan option at argv[*i] (and its value, advancing *i). Returns
 * 1 when taken, 0 when argv[*i] is not a scan option, -1 after printing a
 * usage error. */
int ap_scan_cli_option(const struct ap_cmd *cmd, struct ap_scan_cli *o, int argc, char **argv,
                       int *i);
/* Takes --python PATH or --python-version X.Y at argv[*i] (and its value,
 * advancing *i) into *python or *version: the interpreter that will import
 * AITER, or its version alone. Returns 1 when taken, 0 when argv[*i] is
 * neither, -1 after a usage error: "--python: /x: No such file or
 * directory", "--python-version takes X.Y or X.Y.Z (such as 3.12), not 'x'",
 * "--python and --python-version cannot both be given". */
int ap_cli_python_option(const struct ap_cmd *cmd, const char **python, const char **version,
                         int argc, char **argv, int *i);

/* Runs the scan the options describe and returns the manifest in *manifest;
 * returns AP_EXIT_OK, or AP_EXIT_ERROR after printing why. The scan checks
 * the rule set in *rs when there is one, else loads it (after finding the
 * tree) and leaves it in *rs for the caller to free: a command that needs
 * the packs too reads them once. */
int ap_scan_cli_run(const struct ap_scan_cli *o, struct ap_ruleset **rs,
                    struct json_t **manifest);
void ap_scan_cli_free(struct ap_scan_cli *o);
/* Whether o holds an option that only a scan of the tree uses (every one but
 * --rules and --no-default-rules, which also say which packs explain a
 * manifest read with --manifest). */
int ap_scan_cli_reads_tree(const struct ap_scan_cli *o);

/* What differs between the facts the manifest's answers depended on (its
 * "python") and what the interpreter gives now: python, else version
 * alone, else the recorded executable, asked again (none when the manifest
 * records no python, or only a version that was given). One line a
 * difference in *lines ("version 3.12.3 when scanned, now 3.11.2"), *n of
 * them (ap_cli_lines_free). AP_EXIT_OK, or AP_EXIT_ERROR after printing
 * why the interpreter cannot be asked. */
int ap_cli_python_changes(const struct json_t *manifest, const char *python, const char *version,
                          char ***lines, size_t *n);
void ap_cli_lines_free(char **lines, size_t n);

/* Reads the manifest at path into *manifest when it still describes its
 * tree (its inputs re-hashed unchanged) and its interpreter
 * (ap_cli_python_changes): AP_EXIT_OK, else AP_EXIT_ERROR after printing
 * why ("m.json is stale (a.cu changed): run 'aiter-probe scan' again", "m.json
 * is stale (the interpreter's version 3.12.3 when scanned, now 3.11.2): ..."). */
int ap_cli_read_fresh_manifest(const char *path, struct json_t **manifest);

/* Takes "--name VALUE" or "--name=VALUE" at argv[*i], and for a short name
 * "-n VALUE" or "-nVALUE". Returns 1 with *value set, 0 when argv[*i] is
 * another option, -1 after a usage error (no value). */
int ap_cli_value(const struct ap_cmd *cmd, const char *name, int argc, char **argv, int *i,
                 const char **value);

/* What argv[i] is to a command, the same in every command: an operand (any
 * argument after "--", "-" alone, or one not starting with '-'), "--"
 * itself (taken: *operands_only is set), -h or --help, or an option for the
 * command to parse. */
typedef enum ap_cli_arg_kind {
	AP_ARG_OPTION,
	AP_ARG_OPERAND,
	AP_ARG_END,
	AP_ARG_HELP,
} ap_cli_arg_kind;
ap_cli_arg_kind ap_cli_arg(const char *arg, int *operands_only);
/* The usage errors "unknown option 'ARG'" and "unexpected argument 'ARG'"
 * (an operand too many); both return AP_EXIT_ERROR. */
int ap_cli_unknown_option(const struct ap_cmd *cmd, const char *arg);
int ap_cli_unexpected(const struct ap_cmd *cmd, const char *arg);

/* --format's value: 0 for text, 1 for json, or -1 after a usage error. */
int ap_cli_format_is_json(const struct ap_cmd *cmd, const char *format);
/* Prints doc on stdout as the manifest is written: indented, ASCII,
 * newline-terminated. */
void ap_cli_print_json(const struct json_t *doc);

/* Whether to paint text written to `to`: as --color said, else only on a
 * terminal, never with NO_COLOR set (no-color.org) or TERM=dumb. */
int ap_cli_color(FILE *to);
/* Takes --color or --color=auto|always|never at argv[*i] (bare: always) for
 * every later ap_cli_color. Returns 1 when taken, 0 when argv[*i] is another
 * argument, -1 after a usage error. */
int ap_cli_color_option(const struct ap_cmd *cmd, char **argv, int *i);

/* Prints "aiter-probe: <message>" on stderr; returns AP_EXIT_ERROR. */
int ap_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the usage error and a pointer to --help; returns AP_EXIT_ERROR. */
int ap_cli_usage_error(const struct ap_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints cmd's --help on to; on stdout, through ap_cli_stdout_done. */
int ap_cli_print_help(const struct ap_cmd *cmd, FILE *to);

/* Every command's last word on stdout: flushes it and returns rc, or, when
 * anything written to it was lost (a full disk, a closed descriptor),
 * prints "aiter-probe: writing to stdout: <why>" and returns AP_EXIT_ERROR
 * whatever rc was. main() calls it after each command. */
int ap_cli_stdout_done(int rc);

/* The first call of each program's main(), before anything is allocated:
 * sets the heap up for a short process that keeps what it allocates. */
void ap_cli_heap_setup(void);

#endif
