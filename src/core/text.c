/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/text.h"

int ap_color_mode_parse(const char *text, ap_color_mode *mode)
{
	static const struct {
		const char *name;
		ap_color_mode mode;
	} names[] = {{"auto", AP_COLOR_AUTO}, {"always", AP_COLOR_ALWAYS}, {"never", AP_COLOR_NEVER}};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(text, names[i].name) == 0) {
			*mode = names[i].mode;
			return 0;
		}
	return -1;
}

bool ap_text_color(FILE *to, ap_color_mode mode)
{
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");

	if (mode != AP_COLOR_AUTO)
		return mode == AP_COLOR_ALWAYS;
	return isatty(fileno(to)) && (no_color == NULL || *no_color == '\0') &&
	       (term == NULL || strcmp(term, "dumb") != 0);
}

int ap_text_width(FILE *to)
{
	const char *columns = getenv("COLUMNS");
	struct winsize ws;

	if (columns != NULL) {
		char *end;
		long n = strtol(columns, &end, 10);
		if (end != columns && *end == '\0' && n >= 20 && n <= 10000)
			return (int)n;
	}
	if (isatty(fileno(to)) && ioctl(fileno(to), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

const char *ap_text_paint(bool color, const char *code)
{
	return color ? code : "";
}

const char *ap_text_hue(const char *word)
{
	static const char *const green[] = {"matched", "supported", "yes", "passed", "gained",
	                                    "fresh"};
	static const char *const yellow[] = {"unmatched", "unknown", "skipped", "unverifiable"};
	size_t i;

	for (i = 0; i < sizeof green / sizeof green[0]; i++)
		if (strcmp(word, green[i]) == 0)
			return AP_TEXT_GREEN;
	for (i = 0; i < sizeof yellow / sizeof yellow[0]; i++)
		if (strcmp(word, yellow[i]) == 0)
			return AP_TEXT_YELLOW;
	return AP_TEXT_RED;
}

int ap_text_word(ap_buf *b, const char *value)
{
	json_t *string;
	char *quoted;
	int rc;

	if (value[0] != '\0' && strpbrk(value, " \t\r\n=,:\"\\") == NULL)
		return ap_buf_try_puts(b, value);
	string = json_string(value);
	if (string == NULL) {
		/* Not UTF-8, or no memory: the unchecked string fails only for
		 * want of memory. */
		json_t *raw = json_stringn_nocheck(value, strlen(value));
		if (raw != NULL) {
			json_decref(raw);
			return ap_buf_try_puts(b, "\"?\"");
		}
	}
	quoted = string != NULL ? json_dumps(string, JSON_ENCODE_ANY) : NULL;
	json_decref(string);
	if (quoted == NULL) {
		ap_error_set("out of memory quoting '%s'", value);
		return AP_ENOMEM;
	}
	rc = ap_buf_try_puts(b, quoted);
	free(quoted);
	return rc;
}

/* Characters in s[0..n): UTF-8 continuation bytes take no column, nor does
 * a colour (ESC [ ... m: text from a tree is escaped before it gets here, so
 * every ESC is ours). */
static int columns_of(const char *s, size_t n)
{
	int cols = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\033' && i + 1 < n && s[i + 1] == '[') {
			for (i += 2; i < n && s[i] != 'm'; i++)
				;
			continue;
		}
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	}
	return cols;
}

int ap_text_columns(const char *text)
{
	return columns_of(text, strlen(text));
}

/* The indent of continued lines: one past half the width is cut to 8. */
static int hanging(int indent, int width)
{
	return indent > width / 2 ? 8 : indent;
}

/* A word (or a lead), with each AP_TEXT_JOIN as the space it stands for. */
static void put_word(FILE *to, const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		fputc(p[i] == AP_TEXT_JOIN[0] ? ' ' : p[i], to);
}

void ap_text_wrap(FILE *to, const char *text, int col, int indent, int width)
{
	const char *p = text;
	bool line_empty = true;

	indent = hanging(indent, width);
	while (*p != '\0') {
		size_t spaces = strspn(p, " ");
		size_t len;
		int cols;

		p += spaces;
		if (*p == '\0')
			break;
		len = strcspn(p, " ");
		cols = columns_of(p, len);
		if (!line_empty && col + 1 + cols > width) {
			fprintf(to, "\n%*s", indent, "");
			col = indent;
			line_empty = true;
		}
		if (!line_empty) {
			fputc(' ', to);
			col++;
		}
		put_word(to, p, len);
		col += cols;
		line_empty = false;
		p += len;
	}
	fputc('\n', to);
}

void ap_text_wrap_after(FILE *to, const char *lead, const char *text, int indent, int width)
{
	const char *first = text + strspn(text, " ");
	size_t len = strlen(lead);
	int col = columns_of(lead, len);
	bool next_line;

	indent = hanging(indent, width);
	next_line = *first != '\0' && col > indent &&
	            col + columns_of(first, strcspn(first, " ")) > width;
	while (next_line && len > 0 && lead[len - 1] == ' ')
		len--;
	put_word(to, lead, len);
	if (next_line) {
		fprintf(to, "\n%*s", indent, "");
		col = indent;
	}
	ap_text_wrap(to, text, col, indent, width);
}

/* The length of the control at s (n bytes left) that a terminal could act
 * on, or 0: a C0 byte other than tab, DEL, a C1 control in UTF-8 (U+0080 to
 * U+009F, C2 80 to C2 9F; 8-bit CSI and OSC on some terminals), or a
 * bidirectional mark, embedding, override or isolate (U+061C, U+200E,
 * U+200F, U+202A to U+202E, U+2066 to U+2069), which reorders the text
 * shown after it so that a line reads other than it is. */
static size_t control_at(const unsigned char *s, size_t n)
{
	if ((s[0] < 0x20 && s[0] != '\t') || s[0] == 0x7F)
		return 1;
	if (n >= 2 && s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
		return 2;
	if (n >= 2 && s[0] == 0xD8 && s[1] == 0x9C)
		return 2;
	if (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 &&
	    (s[2] == 0x8E || s[2] == 0x8F || (s[2] >= 0xAA && s[2] <= 0xAE)))
		return 3;
	if (n >= 3 && s[0] == 0xE2 && s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9)
		return 3;
	return 0;
}

char *ap_terminal_text(const char *s, size_t len)
{
	const unsigned char *bytes = (const unsigned char *)s;
	ap_buf b = AP_BUF_INIT;
	size_t i, k, c;
	int rc = ap_buf_try_append(&b, "", 0);

	for (i = 0; rc == AP_OK && i < len; i += c ? c : 1) {
		c = control_at(bytes + i, len - i);
		if (c == 0) {
			rc = ap_buf_try_append(&b, s + i, 1);
			continue;
		}
		for (k = 0; rc == AP_OK && k < c; k++)
			rc = ap_buf_try_printf(&b, "\\x%02x", bytes[i + k]);
	}
	if (rc < 0) {
		ap_buf_free(&b);
		return NULL;
	}
	return ap_buf_try_detach(&b);
}

bool ap_text_has_control(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (control_at((const unsigned char *)s + i, len - i))
			return true;
	return false;
}
