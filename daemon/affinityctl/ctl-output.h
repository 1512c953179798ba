/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * affinityctl's output: one layer for both modes. A verb describes what it shows once — as
 * values (Cell), rows of a table (Table) or the named fields of a record (Field) — and the
 * layer prints it as text (tables like systemctl list-units, "Label: value" lines) or, with
 * --json, as JSON, written compactly by the JsonWriter below.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"

/* ---- JSON ---- */

/*
 * Writes one compact JSON document to f: the writer puts the commas between the items of an
 * object or array. Up to 63 nested levels.
 */
typedef struct JsonWriter {
        FILE *f;
        unsigned depth;
        uint64_t has_item; /* bit d: level d has an item already, the next one follows a comma */
        bool after_key;    /* a key was written, its value comes next */
} JsonWriter;

#define JSON_WRITER(file) ((JsonWriter){.f = (file)})

/*
 * The writer: each call writes one token to w->f, with the comma before it where one is due.
 * Nothing fails here: a write error stays in ferror(w->f), which the caller checks when the
 * document is done.
 */
void json_begin_object(JsonWriter *w);
void json_end_object(JsonWriter *w);
void json_begin_array(JsonWriter *w);
void json_end_array(JsonWriter *w);
/* Ends the document with a newline; w can start the next one. */
void json_end_document(JsonWriter *w);
void json_key(JsonWriter *w, const char *key);
/* s as a JSON string: quote and backslash escaped, control characters and DEL as \uXXXX or
 * their short forms, every other byte (UTF-8 included) as is; NULL as null. */
void json_string(JsonWriter *w, const char *s);
void json_uint(JsonWriter *w, uint64_t u);
void json_int(JsonWriter *w, int64_t i);
void json_bool(JsonWriter *w, bool b);
void json_null(JsonWriter *w);
/* A number already written as JSON text ("12", "0.5"), put in as is. */
void json_number_text(JsonWriter *w, const char *text);
/* d with a fixed number of decimals ("%.3f"). */
void json_fixed(JsonWriter *w, double d, int decimals);
/* l (NULL: empty) as an array of strings. */
void json_strv(JsonWriter *w, char *const *l);

/* A key and its value in one call. */
void json_field_string(JsonWriter *w, const char *key, const char *s);
void json_field_uint(JsonWriter *w, const char *key, uint64_t u);
void json_field_bool(JsonWriter *w, const char *key, bool b);
void json_field_null(JsonWriter *w, const char *key);
void json_field_strv(JsonWriter *w, const char *key, char *const *l);

/* ---- values ---- */

typedef struct Table Table;

typedef enum CellType {
        CELL_STRING, /* s (NULL: JSON null); text: s */
        CELL_UINT,   /* u */
        CELL_INT,    /* i */
        CELL_BOOL,   /* b; text "yes" or "no" */
        CELL_NULL,   /* JSON null; text "-" */
        CELL_NUMBER, /* s, a number written as JSON text ("12", "0.5"); text s */
        CELL_RATE,   /* d, a per-second rate: "%.3f" in JSON, "%.1f" in text */
        CELL_NSEC,   /* u ns: µs (u / 1000) in JSON, format_nsec() in text */
        CELL_STRV,   /* strv: an array of strings; text one line each (records only) */
        CELL_TABLE,  /* table: an array of its rows as objects (records only) */
} CellType;

/* One value, as JSON and as text. Initialise with the CELL_* macros, then adjust. */
typedef struct Cell {
        CellType type;
        const char *s;
        uint64_t u;
        int64_t i;
        double d;
        bool b;
        char *const *strv;
        const Table *table;
        const char *text; /* text: this instead of what the value reads as */
        bool dash;        /* text: "-" for an empty string */
        bool hidden;      /* text: left out */
} Cell;

#define CELL_STR(x)      ((Cell){.type = CELL_STRING, .s = (x)})
#define CELL_STR_DASH(x) ((Cell){.type = CELL_STRING, .s = (x), .dash = true})
#define CELL_UINT(x)     ((Cell){.type = CELL_UINT, .u = (x)})
#define CELL_INT(x)      ((Cell){.type = CELL_INT, .i = (x)})
#define CELL_BOOL(x)     ((Cell){.type = CELL_BOOL, .b = (x)})
#define CELL_NONE        ((Cell){.type = CELL_NULL})
#define CELL_NUMBER(x)   ((Cell){.type = CELL_NUMBER, .s = (x)})
#define CELL_RATE(x)     ((Cell){.type = CELL_RATE, .d = (x)})
#define CELL_NSEC(x)     ((Cell){.type = CELL_NSEC, .u = (x)})
#define CELL_STRV(x)     ((Cell){.type = CELL_STRV, .strv = (x)})
#define CELL_TABLE(x)    ((Cell){.type = CELL_TABLE, .table = (x)})

/* c with text shown instead (NULL: as it was). */
static inline Cell cell_with_text(Cell c, const char *text) {
        if (text)
                c.text = text;
        return c;
}

/* Writes c as a JSON value. */
void json_cell(JsonWriter *w, const Cell *c);

/* ns as "0", "850ns", "12us", "1.2ms", "3.40s". */
void format_nsec(uint64_t ns, char *buf, size_t size);

/* "-" for an empty (or NULL) string, so that every column of a row has a word. */
const char *dash(const char *s);

/* ---- tables ---- */

typedef enum ColumnFlags {
        COLUMN_HIDE_EMPTY = 1 << 0, /* text: shown only if some row has text in it */
} ColumnFlags;

typedef struct Column {
        const char *header; /* text: the header, upper case */
        const char *key;    /* JSON: the key of the value in each row's object */
        ColumnFlags flags;
} Column;

/*
 * Rows of cells under columns. As text like systemctl list-units: an upper-case header line
 * (not with --no-legend), columns left-aligned and padded to their widest cell, two spaces
 * apart, a row ending at its last non-empty cell; as JSON an array of one object per row.
 */
struct Table {
        const Column *columns;
        size_t n_columns;
        struct TableCell *cells; /* row-major, n_rows * n_columns */
        size_t n_rows;
};

#define TABLE_INIT(cols) ((Table){.columns = (cols), .n_columns = ELEMENTSOF(cols)})

/* Appends a row of t->n_columns cells (strings are copied). Returns 0 or -ENOMEM. */
int table_add_row(Table *t, const Cell *row);
/* Frees t's rows and their strings; t is empty (its columns kept) afterwards. */
void table_done(Table *t);
/* The value of row, column (both in range) as added, its strings owned by t. */
const Cell *table_cell(const Table *t, size_t row, size_t column);
/* The table as text on stdout. */
void table_print(const Table *t);
/* The table as a JSON array. */
void table_print_json(const Table *t, JsonWriter *w);

/*
 * A list verb's result on stdout: with --json {"KEY":[rows]} (also after a failure, with the
 * rows read until then, so that stdout holds one document); as text, when complete, the table
 * and, unless --no-legend, an empty line and summary.
 */
void output_list(const Table *t, const char *key, bool complete, const char *summary);

/* ---- records ---- */

/* A named value: label for text ("Label: value"; NULL: JSON only), key for JSON (NULL: text
 * only). */
typedef struct Field {
        const char *key;
        const char *label;
        Cell value;
} Field;

/*
 * The fields on stdout: with --json one object on a line; as text "Label: value" lines, the
 * labels right-aligned to width, a string field's continuation lines and each further line of
 * an array aligned under the first, a table under a label one line per row with its cells
 * joined by ": "; then each table without a label, after an empty line, when it has rows.
 */
void output_record(const Field *fields, size_t n, int width);

/* The fields on one line of stdout: with --json one object, as text their texts joined by
 * spaces. */
void output_event(const Field *fields, size_t n);

/* "Label: text" (NULL: a continuation of the previous field) with the label right-aligned to
 * width, continuation lines of text aligned under the first. */
void output_field(int width, const char *label, const char *text);
