/* SPDX-License-Identifier: MIT */
/* The text layer: when to paint (on a pseudo-terminal, so auto is tested as
 * a terminal sees it), the width to fit, and wrapping. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/text.h"
#include "core/ap-util.h"

/* A pseudo-terminal's far side as a stream, `cols` columns wide. */
typedef struct pty {
	int master;
	FILE *tty;
} pty;

static int pty_open(void **state)
{
	pty *p = calloc(1, sizeof *p);
	struct winsize ws = {.ws_row = 24, .ws_col = 123};
	int fd;

	assert_non_null(p);
	p->master = posix_openpt(O_RDWR | O_NOCTTY);
	if (p->master < 0 || grantpt(p->master) < 0 || unlockpt(p->master) < 0) {
		free(p);
		skip();
	}
	fd = open(ptsname(p->master), O_RDWR | O_NOCTTY);
	assert_true(fd >= 0);
	assert_int_equal(ioctl(fd, TIOCSWINSZ, &ws), 0);
	p->tty = fdopen(fd, "w");
	assert_non_null(p->tty);
	*state = p;
	return 0;
}

static int pty_close(void **state)
{
	pty *p = *state;

	if (p != NULL) {
		fclose(p->tty);
		close(p->master);
		free(p);
	}
	unsetenv("TERM");
	unsetenv("NO_COLOR");
	unsetenv("COLUMNS");
	return 0;
}

static void auto_paints_a_terminal(void **state)
{
	pty *p = *state;

	setenv("TERM", "xterm", 1);
	unsetenv("NO_COLOR");
	assert_true(ap_text_color(p->tty, AP_COLOR_AUTO));
	setenv("NO_COLOR", "", 1); /* no-color.org: only a non-empty value counts */
	assert_true(ap_text_color(p->tty, AP_COLOR_AUTO));
	unsetenv("TERM");
	assert_true(ap_text_color(p->tty, AP_COLOR_AUTO));
}

static void auto_and_dumb_or_no_color(void **state)
{
	pty *p = *state;

	setenv("TERM", "dumb", 1);
	assert_false(ap_text_color(p->tty, AP_COLOR_AUTO));
	assert_true(ap_text_color(p->tty, AP_COLOR_ALWAYS));
	setenv("TERM", "xterm", 1);
	setenv("NO_COLOR", "1", 1);
	assert_false(ap_text_color(p->tty, AP_COLOR_AUTO));
	assert_true(ap_text_color(p->tty, AP_COLOR_ALWAYS));
	unsetenv("NO_COLOR");
	assert_false(ap_text_color(p->tty, AP_COLOR_NEVER));
}

static void auto_leaves_a_file_plain(void **state)
{
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	setenv("TERM", "xterm", 1);
	assert_false(ap_text_color(f, AP_COLOR_AUTO));
	assert_true(ap_text_color(f, AP_COLOR_ALWAYS));
	fclose(f);
}

static void color_mode_words(void **state)
{
	static const struct {
		const char *word;
		ap_color_mode mode;
	} words[] = {{"auto", AP_COLOR_AUTO}, {"always", AP_COLOR_ALWAYS}, {"never", AP_COLOR_NEVER}};
	ap_color_mode m = AP_COLOR_NEVER;

	(void)state;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		assert_int_equal(ap_color_mode_parse(words[i].word, &m), 0);
		assert_int_equal(m, words[i].mode);
	}
	/* anything else is refused and leaves the mode as it was */
	assert_int_equal(ap_color_mode_parse("yes", &m), -1);
	assert_int_equal(ap_color_mode_parse("", &m), -1);
	assert_int_equal(m, AP_COLOR_NEVER);
}

static void width_from_columns_or_the_terminal(void **state)
{
	pty *p = *state;
	FILE *f = tmpfile();

	assert_non_null(f);
	unsetenv("COLUMNS");
	assert_int_equal(ap_text_width(p->tty), 123);
	assert_int_equal(ap_text_width(f), 80);
	setenv("COLUMNS", "60", 1);
	assert_int_equal(ap_text_width(p->tty), 60);
	assert_int_equal(ap_text_width(f), 60);
	/* not a number from 20 to 10000: the terminal's, else 80 */
	setenv("COLUMNS", "19", 1);
	assert_int_equal(ap_text_width(p->tty), 123);
	setenv("COLUMNS", "60x", 1);
	assert_int_equal(ap_text_width(f), 80);
	setenv("COLUMNS", "99999", 1);
	assert_int_equal(ap_text_width(f), 80);
	fclose(f);
}

/* What ap_text_wrap writes, in a new string; with a lead, what
 * ap_text_wrap_after writes (col unused). */
static char *wrapped(const char *lead, const char *text, int col, int indent, int width)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	if (lead != NULL)
		ap_text_wrap_after(f, lead, text, indent, width);
	else
		ap_text_wrap(f, text, col, indent, width);
	fclose(f);
	return out;
}

static void expect_wrap(const char *text, int col, int indent, int width, const char *want)
{
	char *got = wrapped(NULL, text, col, indent, width);

	assert_string_equal(got, want);
	free(got);
}

static void wraps_at_spaces(void **state)
{
	(void)state;
	expect_wrap("aaa bbb ccc ddd", 0, 2, 20, "aaa bbb ccc ddd\n");
	expect_wrap("aaa bbb ccc ddd", 0, 2, 11, "aaa bbb ccc\n  ddd\n");
	/* from column 6, a line holds up to width characters in all */
	expect_wrap("aaa bbb ccc", 6, 8, 20, "aaa bbb ccc\n");
	expect_wrap("aaa bbb ccc", 10, 10, 20, "aaa bbb\n          ccc\n");
	/* runs of spaces are one break; an empty text is an empty line */
	expect_wrap("  aaa   bbb  ", 0, 0, 20, "aaa bbb\n");
	expect_wrap("", 4, 4, 20, "\n");
}

static void never_cuts_a_word(void **state)
{
	(void)state;
	/* too long for the rest of the line, not for a line: moves down */
	expect_wrap("ab abcdefghijklmnopqr", 0, 2, 20, "ab\n  abcdefghijklmnopqr\n");
	/* too long for any line: a line of its own, so only it overflows */
	expect_wrap("ab abcdefghijklmnopqrstuvwxyz cd", 0, 2, 20,
	            "ab\n  abcdefghijklmnopqrstuvwxyz\n  cd\n");
}

static void columns_are_characters(void **state)
{
	(void)state;
	/* "é" is two bytes and one column; "…" three bytes and one column */
	expect_wrap("\xc3\xa9\xc3\xa9\xc3\xa9 \xe2\x80\xa6\xe2\x80\xa6", 0, 0, 6,
	            "\xc3\xa9\xc3\xa9\xc3\xa9 \xe2\x80\xa6\xe2\x80\xa6\n");
	/* colours take no column */
	expect_wrap(AP_TEXT_GREEN "aaa" AP_TEXT_RESET " bbb", 0, 0, 7,
	            AP_TEXT_GREEN "aaa" AP_TEXT_RESET " bbb\n");
	assert_int_equal(ap_text_columns(AP_TEXT_RED "x\xc3\xa9" AP_TEXT_RESET), 2);
}

static void a_long_indent_is_cut(void **state)
{
	(void)state;
	/* 12 is past half of 20: continued after 8 */
	expect_wrap("aaa bbb ccc", 12, 12, 20, "aaa bbb\n        ccc\n");
}

static void joined_words_are_one(void **state)
{
	(void)state;
	/* "and 12 more" moves down whole, written with spaces */
	expect_wrap("aaa bbb, and" AP_TEXT_JOIN "12" AP_TEXT_JOIN "more", 0, 2, 15,
	            "aaa bbb,\n  and 12 more\n");
	expect_wrap("a" AP_TEXT_JOIN "b c", 0, 0, 20, "a b c\n");
	assert_int_equal(ap_text_columns("a" AP_TEXT_JOIN "b"), 3);
}

static void expect_wrap_after(const char *lead, const char *text, int indent, int width,
                              const char *want)
{
	char *got = wrapped(lead, text, 0, indent, width);

	assert_string_equal(got, want);
	free(got);
}

static void a_value_starts_on_the_next_line_when_it_must(void **state)
{
	(void)state;
	/* the first word fits after the lead: wrapped from there */
	expect_wrap_after("  id  ", "aaa bbb ccc", 6, 20, "  id  aaa bbb ccc\n");
	expect_wrap_after("  id  ", "aaa bbb ccc", 6, 14, "  id  aaa bbb\n      ccc\n");
	/* it does not: the lead, less its trailing spaces, ends the line */
	expect_wrap_after("  long-id-here  ", "matched", 4, 20, "  long-id-here\n    matched\n");
	/* the indent cut as ap_text_wrap cuts it */
	expect_wrap_after("  long-id-here  ", "matched x", 14, 20,
	                  "  long-id-here\n        matched x\n");
	/* a lead no wider than the indent: nothing to gain by a break */
	expect_wrap_after("    ", "abcdefghijklmnopqrstuvwxyz", 4, 20,
	                  "    abcdefghijklmnopqrstuvwxyz\n");
	/* joins in the lead are spaces too; colours take no column */
	expect_wrap_after("  a" AP_TEXT_JOIN "b  ", AP_TEXT_RED "1 of 2" AP_TEXT_RESET, 4, 20,
	                  "  a b  " AP_TEXT_RED "1 of 2" AP_TEXT_RESET "\n");
	expect_wrap_after("  id  ", "", 4, 20, "  id  \n");
}

static void expect_word(const char *value, const char *want)
{
	ap_buf b = AP_BUF_INIT;

	assert_int_equal(ap_text_word(&b, value), AP_OK);
	assert_string_equal(b.data, want);
	ap_buf_free(&b);
}

static void words_that_could_be_misread_are_quoted(void **state)
{
	(void)state;
	expect_word("512", "512");
	expect_word("bf16_x", "bf16_x");
	expect_word("", "\"\"");
	expect_word("a b", "\"a b\"");
	expect_word("k=v", "\"k=v\"");
	expect_word("a,b", "\"a,b\"");
	expect_word("dim:512", "\"dim:512\"");
	expect_word("say \"x\"", "\"say \\\"x\\\"\"");
	expect_word("\xc3\xa9", "\xc3\xa9");
	/* not UTF-8: no JSON string says it */
	expect_word("a \xff", "\"?\"");
}

static void hues(void **state)
{
	(void)state;
	assert_string_equal(ap_text_hue("matched"), AP_TEXT_GREEN);
	assert_string_equal(ap_text_hue("supported"), AP_TEXT_GREEN);
	assert_string_equal(ap_text_hue("unmatched"), AP_TEXT_YELLOW);
	assert_string_equal(ap_text_hue("unsupported"), AP_TEXT_RED);
	assert_string_equal(ap_text_hue("missing"), AP_TEXT_RED);
	assert_string_equal(ap_text_paint(false, AP_TEXT_RED), "");
	assert_string_equal(ap_text_paint(true, AP_TEXT_RED), AP_TEXT_RED);
}

/* The engine's formats of text and %s alone are joined without printf:
 * what they give must be what printf gives, appended where a buffer ends. */
static void formats_join_as_printf(void **state)
{
	char want[64], *got;
	ap_buf b = AP_BUF_INIT;

	(void)state;
	got = ap_asprintf("%s.%s", "aiter", "ops");
	assert_string_equal(got, "aiter.ops");
	free(got);
	got = ap_asprintf("%s%s/held", "", "k");
	assert_string_equal(got, "k/held");
	free(got);
	got = ap_asprintf("plain");
	assert_string_equal(got, "plain");
	free(got);
	/* Any other conversion goes to printf. */
	snprintf(want, sizeof want, "%s: line %u: 100%%", "m.py", 7u);
	got = ap_asprintf("%s: line %u: 100%%", "m.py", 7u);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(ap_buf_try_printf(&b, "%s/", "a"), 0);
	assert_int_equal(ap_buf_try_printf(&b, "%s%s", "b", "c"), 0);
	assert_int_equal(b.len, 4);
	assert_string_equal(b.data, "a/bc");
	ap_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(auto_paints_a_terminal, pty_open, pty_close),
		cmocka_unit_test_setup_teardown(auto_and_dumb_or_no_color, pty_open, pty_close),
		cmocka_unit_test_setup_teardown(width_from_columns_or_the_terminal, pty_open,
		                                pty_close),
		cmocka_unit_test(auto_leaves_a_file_plain),
		cmocka_unit_test(formats_join_as_printf),
		cmocka_unit_test(color_mode_words),
		cmocka_unit_test(wraps_at_spaces),
		cmocka_unit_test(never_cuts_a_word),
		cmocka_unit_test(columns_are_characters),
		cmocka_unit_test(a_long_indent_is_cut),
		cmocka_unit_test(joined_words_are_one),
		cmocka_unit_test(a_value_starts_on_the_next_line_when_it_must),
		cmocka_unit_test(words_that_could_be_misread_are_quoted),
		cmocka_unit_test(hues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
