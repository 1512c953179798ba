/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/interrupts parser (see interrupts.h). The text is read in two passes: the first decides
 * the CPU columns (from the header, or for a header-less dump from the widest numeric line), the
 * second splits every line into ID, counts, chip, hwirq and action names.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "interrupts.h"
#include "macro.h"

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* A line of the text: [start, end), end excluding the newline. */
typedef struct Span {
        const char *p;
        size_t n;
} Span;

/* Advances *s past blanks. */
static void span_skip_blanks(Span *s) {
        while (s->n > 0 && is_blank(*s->p)) {
                s->p++;
                s->n--;
        }
}

/* The next blank-delimited word of *s (empty at the end); *s is advanced past it. */
static Span span_word(Span *s) {
        Span w;

        span_skip_blanks(s);
        w.p = s->p;
        w.n = 0;
        while (s->n > 0 && !is_blank(*s->p)) {
                s->p++;
                s->n--;
                w.n++;
        }
        return w;
}

static bool span_all_digits(Span w) {
        if (w.n == 0)
                return false;
        for (size_t i = 0; i < w.n; i++)
                if (!is_digit(w.p[i]))
                        return false;
        return true;
}

/* Decimal digits of w into *ret. Returns false on a non-digit or on overflow of max. */
static bool span_to_u64(Span w, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (!span_all_digits(w))
                return false;
        for (size_t i = 0; i < w.n; i++) {
                unsigned d = (unsigned)(w.p[i] - '0');
                if (v > (max - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

static bool span_eq(Span w, const char *s) {
        return strlen(s) == w.n && memcmp(w.p, s, w.n) == 0;
}

/* The next line of *text (NUL-terminated), advancing *text past its newline. false at the end. */
static bool next_line(const char **text, Span *ret) {
        const char *p = *text, *nl;

        if (!*p)
                return false;
        nl = strchrnul(p, '\n');
        ret->p = p;
        ret->n = (size_t)(nl - p);
        *text = *nl ? nl + 1 : nl;
        return true;
}

static bool line_is_blank(Span l) {
        span_skip_blanks(&l);
        return l.n == 0;
}

/* A header line: one or more words "CPU<number>". Returns 1 and the columns, 0 when not a header. */
static int parse_header(Span l, unsigned **ret_cpus, size_t *ret_n) {
        _cleanup_free_ unsigned *cpus = NULL;
        size_t n = 0;

        for (;;) {
                Span w = span_word(&l);
                uint64_t v;
                unsigned *a;

                if (w.n == 0)
                        break;
                if (w.n < 4 || memcmp(w.p, "CPU", 3) != 0)
                        return 0;
                w.p += 3;
                w.n -= 3;
                if (!span_to_u64(w, UINT32_MAX - 1, &v))
                        return 0;
                a = reallocarray(cpus, n + 1, sizeof(unsigned));
                if (!a)
                        return -ENOMEM;
                cpus = a;
                cpus[n++] = (unsigned)v;
        }
        if (n == 0)
                return 0;
        *ret_cpus = TAKE_PTR(cpus);
        *ret_n = n;
        return 1;
}

/*
 * Splits "ID:" off the front of *l. Returns false when the line has no such prefix (the first
 * word has no ':' or the ID is empty).
 */
static bool take_id(Span *l, Span *ret_id) {
        Span s = *l, id;

        span_skip_blanks(&s);
        id.p = s.p;
        id.n = 0;
        while (s.n > 0 && !is_blank(*s.p) && *s.p != ':') {
                s.p++;
                s.n--;
                id.n++;
        }
        if (s.n == 0 || *s.p != ':' || id.n == 0)
                return false;
        s.p++;
        s.n--;
        *l = s;
        *ret_id = id;
        return true;
}

/* Number of leading decimal words after the ID (for header-less dumps). */
static size_t count_leading_numbers(Span l) {
        size_t n = 0;

        for (;;) {
                Span w = span_word(&l);
                if (!span_all_digits(w))
                        return n;
                n++;
        }
}

static void line_done(InterruptLine *l) {
        free(l->id);
        free(l->counts);
        free(l->chip);
        free(l->hwirq);
        free(l->actions);
        strv_free(l->names);
}

InterruptTable *interrupt_table_free(InterruptTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_lines; i++)
                line_done(&t->lines[i]);
        free(t->lines);
        free(t->cpus);
        free(t->first_skip_reason);
        free(t);
        return NULL;
}

_printf_(3, 4) static int bad(char **ret_error, size_t line, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        char *msg = NULL;
        va_list ap;
        int r;

        if (!ret_error)
                return -EBADMSG;
        va_start(ap, fmt);
        r = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (r < 0) {
                reason = NULL;
                return -ENOMEM;
        }
        r = asprintf(&msg, "line %zu: %s", line, reason);
        if (r < 0)
                return -ENOMEM;
        *ret_error = msg;
        return -EBADMSG;
}

static char *span_dup(Span w) {
        return strndup(w.p, w.n);
}

/* The text with leading and trailing blanks removed. */
static Span span_trim(Span s) {
        span_skip_blanks(&s);
        while (s.n > 0 && is_blank(s.p[s.n - 1]))
                s.n--;
        return s;
}

/* Splits the action names at ", " into a NULL-terminated vector (empty for ""). */
static char **split_names(const char *actions) {
        _cleanup_strv_free_ char **v = NULL;
        size_t n = 0;
        const char *p = actions;

        v = calloc(1, sizeof(char *));
        if (!v)
                return NULL;
        while (*p) {
                const char *e = strstr(p, ", ");
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char **a = reallocarray(v, n + 2, sizeof(char *));

                if (!a)
                        return NULL;
                v = a;
                v[n] = strndup(p, len);
                if (!v[n])
                        return NULL;
                v[++n] = NULL;
                p += len;
                if (e)
                        p += 2;
        }
        return TAKE_PTR(v);
}

/*
 * Whether w is the hwirq column: a number with an optional "-trigger" ("1-edge", "524288-edge"),
 * a bare number, or a trigger alone after a blank hwirq ("-edge", "-ioapic-edge" on Xen).
 */
static bool is_hwirq_word(Span w) {
        size_t i = 0;

        if (w.n == 0)
                return false;
        if (w.p[0] == '-')
                return w.n > 1;
        while (i < w.n && is_digit(w.p[i]))
                i++;
        if (i == 0)
                return false;
        if (i == w.n)
                return true;
        return w.p[i] == '-' && i + 1 < w.n;
}

/* Parses one non-blank line (line number lineno) into *l. */
static int parse_line(
        Span s, size_t lineno, size_t max_counts, bool has_header, InterruptLine *l, char **ret_error) {
        Span id, rest;
        uint64_t v;

        if (!take_id(&s, &id))
                return bad(ret_error, lineno, "expected \"IRQ:\" or \"NAME:\" at the start of the line");

        l->id = span_dup(id);
        if (!l->id)
                return -ENOMEM;
        if (span_all_digits(id)) {
                if (!span_to_u64(id, UINT32_MAX, &v))
                        return bad(ret_error, lineno, "IRQ number \"%s\" is too large", l->id);
                l->numeric = true;
                l->irq = (unsigned)v;
        }

        if (max_counts > 0) {
                l->counts = calloc(max_counts, sizeof(uint64_t));
                if (!l->counts)
                        return -ENOMEM;
        }
        while (l->n_counts < max_counts) {
                Span save = s, w = span_word(&s);

                if (w.n == 0 || !is_digit(w.p[0])) {
                        s = save;
                        break;
                }
                if (!span_to_u64(w, UINT64_MAX, &l->counts[l->n_counts]))
                        return bad(
                                ret_error, lineno,
                                "count %zu of \"%s:\", \"%.*s\", is not a 64-bit decimal number",
                                l->n_counts + 1, l->id, (int)MIN(w.n, 64), w.p);
                l->n_counts++;
        }

        /* With a header, a count beyond its columns: a CPU came online while the text was printed
         * (without one, the widest line set the columns). */
        if (has_header && l->n_counts == max_counts) {
                Span save = s, w = span_word(&s);

                s = save;
                if (span_all_digits(w))
                        return bad(
                                ret_error, lineno,
                                "\"%s:\" has more count columns than the header's %zu CPUs (CPUs "
                                "brought online while it was read?)",
                                l->id, max_counts);
        }

        if (!l->numeric) {
                rest = span_trim(s);
                l->actions = span_dup(rest);
                return l->actions ? 0 : -ENOMEM;
        }

        if (l->n_counts == 0 && max_counts > 0) {
                Span w = span_word(&s);
                if (w.n > 0)
                        return bad(
                                ret_error, lineno, "IRQ %u has no counts (found \"%.*s\")", l->irq,
                                (int)MIN(w.n, 64), w.p);
        }

        /* chip */
        {
                Span w = span_word(&s);
                if (w.n > 0) {
                        l->chip = span_dup(w);
                        if (!l->chip)
                                return -ENOMEM;
                }
        }

        /* hwirq, with its trigger; GENERIC_IRQ_SHOW_LEVEL kernels print "27 Level" */
        if (l->chip) {
                Span save = s, w = span_word(&s);

                if (is_hwirq_word(w)) {
                        Span save2 = s, t = span_word(&s);

                        if (span_all_digits(w) && (span_eq(t, "Level") || span_eq(t, "Edge")))
                                w.n = (size_t)(t.p + t.n - w.p);
                        else
                                s = save2;
                        l->hwirq = span_dup(w);
                        if (!l->hwirq)
                                return -ENOMEM;
                } else
                        s = save;
        }

        rest = span_trim(s);
        l->actions = span_dup(rest);
        if (!l->actions)
                return -ENOMEM;
        l->names = split_names(l->actions);
        if (!l->names)
                return -ENOMEM;
        return 0;
}

int interrupts_parse(const char *text, InterruptTable **ret, char **ret_error) {
        return interrupts_parse_full(text, 0, ret, ret_error);
}

int interrupts_parse_full(const char *text, unsigned flags, InterruptTable **ret, char **ret_error) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = NULL;
        bool skip = flags & INTERRUPTS_SKIP_BAD_LINES;
        const char *p;
        Span l;
        size_t lineno = 0, header_line = 0, allocated = 0;
        int r;

        if (!text || !ret)
                return -EINVAL;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;

        /* Pass 1: the header, or the widest numeric line. */
        p = text;
        while (next_line(&p, &l)) {
                lineno++;
                if (line_is_blank(l))
                        continue;
                r = parse_header(l, &t->cpus, &t->n_cpus);
                if (r < 0)
                        return r;
                if (r > 0) {
                        t->has_header = true;
                        header_line = lineno;
                }
                break;
        }
        if (!t->has_header) {
                size_t widest = 0, widest_any = 0;
                Span id;

                p = text;
                while (next_line(&p, &l)) {
                        size_t n;

                        if (!take_id(&l, &id))
                                continue;
                        n = count_leading_numbers(l);
                        widest_any = MAX(widest_any, n);
                        if (span_all_digits(id))
                                widest = MAX(widest, n);
                }
                if (widest == 0)
                        widest = widest_any;
                if (widest > 0) {
                        t->cpus = calloc(widest, sizeof(unsigned));
                        if (!t->cpus)
                                return -ENOMEM;
                        for (size_t i = 0; i < widest; i++)
                                t->cpus[i] = (unsigned)i;
                }
                t->n_cpus = widest;
        }

        /* Pass 2: every line. */
        p = text;
        lineno = 0;
        while (next_line(&p, &l)) {
                lineno++;
                if (lineno == header_line || line_is_blank(l))
                        continue;
                if (t->n_lines == allocated) {
                        size_t na = allocated ? allocated * 2 : 64;
                        InterruptLine *a = reallocarray(t->lines, na, sizeof(InterruptLine));
                        if (!a)
                                return -ENOMEM;
                        t->lines = a;
                        allocated = na;
                }
                t->lines[t->n_lines] = (InterruptLine){};
                t->n_lines++;
                r = parse_line(
                        l, lineno, t->n_cpus, t->has_header, &t->lines[t->n_lines - 1],
                        skip ? (t->first_skip_reason ? NULL : &t->first_skip_reason) : ret_error);
                if (r == -EBADMSG && skip) {
                        /* Leave the line out: the one just parsed is always the last. */
                        line_done(&t->lines[--t->n_lines]);
                        t->n_skipped++;
                        continue;
                }
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(t);
        return 0;
}

int interrupts_read(const char *path, InterruptTable **ret, char **ret_error) {
        return interrupts_read_full(path, 0, ret, ret_error);
}

int interrupts_read_full(const char *path, unsigned flags, InterruptTable **ret, char **ret_error) {
        _cleanup_free_ char *buf = NULL;
        int r;

        if (!path || !ret)
                return -EINVAL;
        r = read_full_file(path, READ_FULL_NO_LIMIT, 0, &buf, NULL);
        if (r < 0)
                return r;
        return interrupts_parse_full(buf, flags, ret, ret_error);
}

const InterruptLine *interrupt_table_find(const InterruptTable *t, unsigned irq) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_lines; i++)
                if (t->lines[i].numeric && t->lines[i].irq == irq)
                        return &t->lines[i];
        return NULL;
}

uint64_t interrupt_line_count(
        const InterruptTable *t, const InterruptLine *l, unsigned cpu, bool *ret_present) {
        if (t && l)
                for (size_t i = 0; i < t->n_cpus && i < l->n_counts; i++)
                        if (t->cpus[i] == cpu) {
                                if (ret_present)
                                        *ret_present = true;
                                return l->counts[i];
                        }
        if (ret_present)
                *ret_present = false;
        return 0;
}
