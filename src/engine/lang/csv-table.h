/* SPDX-License-Identifier: MIT */
/* RFC 4180 tables, such as AITER's kernel lists (hsa/<arch>/mla/mla_asm.csv)
 * and tuned configurations (aiter/configs/<name>.csv): a header row of
 * column names, then data rows.
 *
 * What the reader accepts, since these files come from anyone's wheel:
 * - a UTF-8 byte order mark at the start, skipped;
 * - line ends LF, CRLF and a lone CR (each ends one line, as Python's csv
 *   module reads them); line breaks inside a quoted field are kept as written;
 * - quoted fields with "" for a quote, and commas and line breaks inside;
 *   spaces and tabs around the quotes are skipped, and a quoted field is kept
 *   exactly; a quote inside an unquoted field is an ordinary character;
 * - header names trimmed of surrounding spaces and tabs, quoted or not, and
 *   unquoted fields too; an empty header name is a name (pandas writes one);
 * - blank lines (empty, or only spaces and tabs) skipped, anywhere;
 * - a last line without a line end;
 * - rows with more fields than the header (the extra ones are checked for
 *   syntax, then dropped) or fewer (the missing ones read as NULL).
 * Errors are AP_EINPUT, or AP_ELIMIT past 1,000,000 data rows or 4,096 header
 * columns, with one message naming the line. */
#ifndef AP_CSV_H
#define AP_CSV_H

#include <stdbool.h>
#include <stddef.h>

#define AP_CSV_MAX_ROWS 1000000u
#define AP_CSV_MAX_COLS 4096u

typedef struct ap_csv ap_csv;

/* Parses len bytes of data (not NUL-terminated; a NUL byte is an error). */
int ap_csv_parse(ap_csv **out, const char *data, size_t len);
/* Parses data as AITER's hsa/codegen.py reads a kernel table since v0.1.12: its
 * comments dropped first (// # ; to the line's end, outside quotes, and blocks
 * between slash-star and star-slash: see csv-table.c for the details codegen has),
 * then what is left as ap_csv_parse reads it, each row and message numbered by its
 * line in data. Text that is not UTF-8 is an error, as codegen cannot decode it.
 * *stripped says whether dropping the comments changed the text (line ends aside). */
int ap_csv_parse_codegen(ap_csv **out, const char *data, size_t len, bool *stripped);
void ap_csv_free(ap_csv *t);

size_t ap_csv_ncols(const ap_csv *t);
/* NULL past the last column. */
const char *ap_csv_col_name(const ap_csv *t, size_t col);
/* The index of the column with that header name, or -1. */
long ap_csv_col(const ap_csv *t, const char *name);
/* Data rows, header excluded. */
size_t ap_csv_nrows(const ap_csv *t);
/* 1-based line of the file where the row's first byte is; 0 past the last row. */
unsigned ap_csv_row_line(const ap_csv *t, size_t row);
/* The field, NUL-terminated; NULL when the row has fewer fields than col + 1,
 * and past the last row or column. */
const char *ap_csv_field(const ap_csv *t, size_t row, size_t col);

#endif
