/* SPDX-License-Identifier: MIT */
/* Text for people: colour, the width to fit and wrapping to it. One place,
 * so every command's text breaks and paints the same way. */
#ifndef AP_TEXT_H
#define AP_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/ap-util.h"

typedef enum ap_color_mode {
	AP_COLOR_AUTO,   /* on a terminal, unless NO_COLOR is set or TERM=dumb */
	AP_COLOR_ALWAYS,
	AP_COLOR_NEVER,
} ap_color_mode;

/* --color's value (auto, always, never) in *mode; -1 for anything else. */
int ap_color_mode_parse(const char *text, ap_color_mode *mode);
/* Whether text written to `to` is painted under mode. */
bool ap_text_color(FILE *to, ap_color_mode mode);
/* The columns to fit: $COLUMNS when it is a number from 20 to 10000, else
 * the terminal's width when `to` is one, else 80. */
int ap_text_width(FILE *to);

/* Colours of a word (SGR codes); ap_text_paint gives "" when not painting. */
#define AP_TEXT_GREEN "\033[32m"
#define AP_TEXT_RED "\033[31m"
#define AP_TEXT_YELLOW "\033[33m"
#define AP_TEXT_BOLD "\033[1m"
#define AP_TEXT_RESET "\033[0m"
const char *ap_text_paint(bool color, const char *code);
/* The colour of a verdict word, the same in every command: green for
 * matched, supported, yes, passed, gained and fresh; yellow for unmatched,
 * unknown, skipped and unverifiable; red for the rest (unsupported, no,
 * missing, error, failed, lost, stale, changed). */
const char *ap_text_hue(const char *word);

/* The columns text takes: UTF-8 characters, not bytes; colours none. */
int ap_text_columns(const char *text);

/* Appends value to b as one word of a list: as it is, or, when it is empty
 * or holds a space, tab, CR, LF, '=', ',', ':', quote or backslash (so could be
 * misread beside others: "a=1 b=2", "dim 512: heads 16 24"), as a JSON
 * string. AP_OK, or AP_ENOMEM with the error set. */
AP_CHECKED int ap_text_word(ap_buf *b, const char *value);

/* Writes text (already escaped for a terminal) starting at column col, on as
 * many lines as it takes to stay within width: breaks at spaces, continues
 * each further line after indent spaces, never cuts a word (one too long for
 * a line is written whole on a line of its own, so a line passes the width
 * only by one such word), and ends with a newline. An
 * indent past half the width is cut to 8, so a long label does not leave a
 * column of one word a line. Columns count UTF-8 characters; colours (ESC [
 * ... m) take none. */
void ap_text_wrap(FILE *to, const char *text, int col, int indent, int width);
/* A space inside text for ap_text_wrap (or ap_text_wrap_after) that joins
 * two words into one it never breaks ("and" AP_TEXT_JOIN "9,958"
 * AP_TEXT_JOIN "more"); written as a space. A control byte, which escaped
 * text never holds; only for text given to the wrappers. */
#define AP_TEXT_JOIN "\037"
/* Writes lead (one line, as it is but for AP_TEXT_JOIN: "  rule  ID  "),
 * then text as ap_text_wrap does from the column after lead, unless text's
 * first word does not fit there: then lead less its trailing spaces ends
 * the line and text starts on the next one after indent spaces (cut as
 * ap_text_wrap cuts it), so only a word too long for any line passes the
 * width. */
void ap_text_wrap_after(FILE *to, const char *lead, const char *text, int indent, int width);

/* s (len bytes) for a terminal, in a new string: each C0 control byte but
 * tab (newline included), DEL, and each byte of a UTF-8 C1 control
 * (U+0080 to U+009F) or bidirectional control (U+061C, U+200E, U+200F,
 * U+202A to U+202E, U+2066 to U+2069) written as \xHH (lowercase hex); the
 * rest as it is.
 * NULL with the error set when memory runs out. */
AP_CHECKED char *ap_terminal_text(const char *s, size_t len);
/* Whether s (len bytes) holds a control ap_terminal_text would escape. */
bool ap_text_has_control(const char *s, size_t len);

#endif
