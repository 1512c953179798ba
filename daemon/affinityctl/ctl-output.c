/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl's output layer (ctl-output.h): the JSON writer, values printed as JSON or text,
 * tables and records.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-output.h"
#include "ctl.h"
#include "macro.h"

/* ---- JSON ---- */

/* The short escape of c in a JSON string, NULL if it has none. */
static const char *json_escape(unsigned char c) {
        switch (c) {
        case '"':
                return "\\\"";
        case '\\':
                return "\\\\";
        case '\b':
                return "\\b";
        case '\f':
                return "\\f";
        case '\n':
                return "\\n";
        case '\r':
                return "\\r";
        case '\t':
                return "\\t";
        default:
                return NULL;
        }
}

static void json_write_string(FILE *f, const char *s) {
        if (!s) {
                fputs("null", f);
                return;
        }
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                const char *e = json_escape(*p);

                if (e)
                        fputs(e, f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\u%04x", (unsigned)*p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

/* Before a value or a key: the comma, unless it is the first item of its level or a key's
 * value. */
static void json_item(JsonWriter *w) {
        uint64_t bit = UINT64_C(1) << w->depth;

        if (w->after_key) {
                w->after_key = false;
                return;
        }
        if (w->has_item & bit)
                fputc(',', w->f);
        w->has_item |= bit;
}

static void json_open(JsonWriter *w, char c) {
        json_item(w);
        fputc(c, w->f);
        w->depth++;
        w->has_item &= ~(UINT64_C(1) << w->depth);
}

static void json_close(JsonWriter *w, char c) {
        if (w->depth > 0)
                w->depth--;
        fputc(c, w->f);
}

void json_begin_object(JsonWriter *w) {
        json_open(w, '{');
}

void json_end_object(JsonWriter *w) {
        json_close(w, '}');
}

void json_begin_array(JsonWriter *w) {
        json_open(w, '[');
}

void json_end_array(JsonWriter *w) {
        json_close(w, ']');
}

void json_end_document(JsonWriter *w) {
        fputc('\n', w->f);
        *w = JSON_WRITER(w->f);
}

void json_key(JsonWriter *w, const char *key) {
        json_item(w);
        json_write_string(w->f, key);
        fputc(':', w->f);
        w->after_key = true;
}

void json_string(JsonWriter *w, const char *s) {
        json_item(w);
        json_write_string(w->f, s);
}

void json_uint(JsonWriter *w, uint64_t u) {
        json_item(w);
        fprintf(w->f, "%" PRIu64, u);
}

void json_int(JsonWriter *w, int64_t i) {
        json_item(w);
        fprintf(w->f, "%" PRIi64, i);
}

void json_bool(JsonWriter *w, bool b) {
        json_item(w);
        fputs(b ? "true" : "false", w->f);
}

void json_null(JsonWriter *w) {
        json_item(w);
        fputs("null", w->f);
}

void json_number_text(JsonWriter *w, const char *text) {
        json_item(w);
        fputs(text, w->f);
}

void json_fixed(JsonWriter *w, double d, int decimals) {
        json_item(w);
        fprintf(w->f, "%.*f", decimals, d);
}

void json_strv(JsonWriter *w, char *const *l) {
        json_begin_array(w);
        STRV_FOREACH (s, l)
                json_string(w, *s);
        json_end_array(w);
}

void json_field_string(JsonWriter *w, const char *key, const char *s) {
        json_key(w, key);
        json_string(w, s);
}

void json_field_uint(JsonWriter *w, const char *key, uint64_t u) {
        json_key(w, key);
        json_uint(w, u);
}

void json_field_bool(JsonWriter *w, const char *key, bool b) {
        json_key(w, key);
        json_bool(w, b);
}

void json_field_null(JsonWriter *w, const char *key) {
        json_key(w, key);
        json_null(w);
}

void json_field_strv(JsonWriter *w, const char *key, char *const *l) {
        json_key(w, key);
        json_strv(w, l);
}

/* ---- values ---- */

void json_cell(JsonWriter *w, const Cell *c) {
        switch (c->type) {
        case CELL_STRING:
                json_string(w, c->s);
                break;
        case CELL_UINT:
                json_uint(w, c->u);
                break;
        case CELL_INT:
                json_int(w, c->i);
                break;
        case CELL_BOOL:
                json_bool(w, c->b);
                break;
        case CELL_NULL:
                json_null(w);
                break;
        case CELL_NUMBER:
                json_number_text(w, c->s);
                break;
        case CELL_RATE:
                json_fixed(w, c->d, 3);
                break;
        case CELL_NSEC:
                json_uint(w, c->u / 1000);
                break;
        case CELL_STRV:
                json_strv(w, c->strv);
                break;
        case CELL_TABLE:
                table_print_json(c->table, w);
                break;
        }
}

void format_nsec(uint64_t ns, char *buf, size_t size) {
        if (ns == 0)
                snprintf(buf, size, "0");
        else if (ns < 1000)
                snprintf(buf, size, "%" PRIu64 "ns", ns);
        else if (ns < 1000000)
                snprintf(buf, size, "%" PRIu64 "us", ns / 1000);
        else if (ns < 1000000000)
                snprintf(buf, size, "%.1fms", (double)ns / 1e6);
        else
                snprintf(buf, size, "%.2fs", (double)ns / 1e9);
}

const char *dash(const char *s) {
        return s && s[0] ? s : "-";
}

/* What a scalar cell reads as in text; buf holds it where it is formatted. */
static const char *cell_text(const Cell *c, char *buf, size_t size) {
        if (c->text)
                return c->text;
        switch (c->type) {
        case CELL_STRING:
        case CELL_NUMBER:
                return c->dash ? dash(c->s) : c->s ?: "";
        case CELL_UINT:
                snprintf(buf, size, "%" PRIu64, c->u);
                return buf;
        case CELL_INT:
                snprintf(buf, size, "%" PRIi64, c->i);
                return buf;
        case CELL_BOOL:
                return c->b ? "yes" : "no";
        case CELL_NULL:
                return "-";
        case CELL_RATE:
                snprintf(buf, size, "%.1f", c->d);
                return buf;
        case CELL_NSEC:
                format_nsec(c->u, buf, size);
                return buf;
        case CELL_STRV:
        case CELL_TABLE:
                break;
        }
        return "";
}

/* ---- tables ---- */

/* A stored cell: the value with its string copied, and its text. */
struct TableCell {
        Cell value;
        char *s;
        char *text;
};

static void table_cell_done(struct TableCell *c) {
        free(c->s);
        free(c->text);
}

int table_add_row(Table *t, const Cell *row) {
        struct TableCell *c;

        c = reallocarray(t->cells, (t->n_rows + 1) * t->n_columns, sizeof(struct TableCell));
        if (!c)
                return -ENOMEM;
        t->cells = c;
        c += t->n_rows * t->n_columns;
        for (size_t i = 0; i < t->n_columns; i++) {
                char buf[64];

                c[i] = (struct TableCell){.value = row[i]};
                c[i].text = strdup(cell_text(&row[i], buf, sizeof(buf)));
                if (row[i].s)
                        c[i].s = strdup(row[i].s);
                if (!c[i].text || (row[i].s && !c[i].s)) {
                        for (size_t k = 0; k <= i; k++)
                                table_cell_done(&c[k]);
                        return -ENOMEM;
                }
                c[i].value.s = c[i].s;
                c[i].value.text = c[i].text;
        }
        t->n_rows++;
        return 0;
}

void table_done(Table *t) {
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                table_cell_done(&t->cells[i]);
        t->cells = mfree(t->cells);
        t->n_rows = 0;
}

const Cell *table_cell(const Table *t, size_t row, size_t column) {
        return &t->cells[row * t->n_columns + column].value;
}

/* The text of row r, cell c; row -1 is the header. */
static const char *table_text(const Table *t, ssize_t r, size_t c) {
        return r < 0 ? t->columns[c].header : t->cells[(size_t)r * t->n_columns + c].text;
}

void table_print(const Table *t) {
        _cleanup_free_ size_t *width = calloc(t->n_columns, sizeof(size_t));
        _cleanup_free_ bool *show = calloc(t->n_columns, sizeof(bool));
        ssize_t first_row = arg_no_legend ? 0 : -1;

        if (!width || !show)
                return;
        for (size_t c = 0; c < t->n_columns; c++) {
                show[c] = !(t->columns[c].flags & COLUMN_HIDE_EMPTY);
                for (size_t r = 0; r < t->n_rows; r++)
                        show[c] = show[c] || table_text(t, (ssize_t)r, c)[0];
        }
        for (ssize_t r = first_row; r < (ssize_t)t->n_rows; r++)
                for (size_t c = 0; c < t->n_columns; c++)
                        width[c] = MAX(width[c], strlen(table_text(t, r, c)));
        for (ssize_t r = first_row; r < (ssize_t)t->n_rows; r++) {
                size_t last = 0;
                bool first = true;

                for (size_t c = 0; c < t->n_columns; c++)
                        if (show[c] && table_text(t, r, c)[0])
                                last = c;
                for (size_t c = 0; c <= last; c++) {
                        if (!show[c])
                                continue;
                        printf("%s%-*s", first ? "" : "  ", c == last ? 0 : (int)width[c],
                               table_text(t, r, c));
                        first = false;
                }
                fputc('\n', stdout);
        }
}

void table_print_json(const Table *t, JsonWriter *w) {
        json_begin_array(w);
        for (size_t r = 0; r < t->n_rows; r++) {
                json_begin_object(w);
                for (size_t c = 0; c < t->n_columns; c++) {
                        json_key(w, t->columns[c].key);
                        json_cell(w, &t->cells[r * t->n_columns + c].value);
                }
                json_end_object(w);
        }
        json_end_array(w);
}

void output_list(const Table *t, const char *key, bool complete, const char *summary) {
        if (arg_json) {
                JsonWriter w = JSON_WRITER(stdout);

                json_begin_object(&w);
                json_key(&w, key);
                table_print_json(t, &w);
                json_end_object(&w);
                json_end_document(&w);
                return;
        }
        if (!complete)
                return;
        table_print(t);
        if (!arg_no_legend && summary)
                printf("\n%s\n", summary);
}

/* ---- records ---- */

void output_field(int width, const char *label, const char *text) {
        const char *nl;

        if (label)
                printf("%*s: ", width, label);
        else
                printf("%*s  ", width, "");
        while ((nl = strchr(text, '\n')) && nl[1]) {
                printf("%.*s\n%*s  ", (int)(nl - text), text, width, "");
                text = nl + 1;
        }
        printf("%s%s", text, nl ? "" : "\n");
}

static void record_print_json(const Field *fields, size_t n) {
        JsonWriter w = JSON_WRITER(stdout);

        json_begin_object(&w);
        for (size_t i = 0; i < n; i++)
                if (fields[i].key) {
                        json_key(&w, fields[i].key);
                        json_cell(&w, &fields[i].value);
                }
        json_end_object(&w);
        json_end_document(&w);
}

/* A table's rows under a label, one line each, the cells joined by ": ". */
static void print_table_lines(int width, const char *label, const Table *t) {
        for (size_t r = 0; r < t->n_rows; r++) {
                _cleanup_free_ char *line = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&line, &size);

                if (!f)
                        return;
                for (size_t c = 0; c < t->n_columns; c++)
                        fprintf(f, "%s%s", c > 0 ? ": " : "", table_text(t, (ssize_t)r, c));
                if (fclose(f) != 0)
                        return;
                output_field(width, r == 0 ? label : NULL, line);
        }
}

void output_record(const Field *fields, size_t n, int width) {
        if (arg_json) {
                record_print_json(fields, n);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const Cell *c = &fields[i].value;
                char buf[64];

                if (!fields[i].label || c->hidden)
                        continue;
                if (c->type == CELL_STRV)
                        for (size_t k = 0; c->strv && c->strv[k]; k++)
                                output_field(width, k == 0 ? fields[i].label : NULL, c->strv[k]);
                else if (c->type == CELL_TABLE)
                        print_table_lines(width, fields[i].label, c->table);
                else
                        output_field(width, fields[i].label, cell_text(c, buf, sizeof(buf)));
        }
        for (size_t i = 0; i < n; i++) {
                const Cell *c = &fields[i].value;

                if (fields[i].label || c->hidden || c->type != CELL_TABLE || c->table->n_rows == 0)
                        continue;
                putchar('\n');
                table_print(c->table);
        }
}

void output_event(const Field *fields, size_t n) {
        bool first = true;

        if (arg_json) {
                record_print_json(fields, n);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                char buf[64];

                if (fields[i].value.hidden)
                        continue;
                printf("%s%s", first ? "" : " ", cell_text(&fields[i].value, buf, sizeof(buf)));
                first = false;
        }
        putchar('\n');
}
