/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Diagnostics of the YAML loader (policy-yaml.h): a growing list of errors and warnings, each
 * with the file, line and column it is about, and their formatting as compilers write them.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-yaml-internal.h"

void diagnostics_done(Diagnostics *d) {
        if (!d)
                return;
        for (size_t i = 0; i < d->n_items; i++) {
                free(d->items[i].file);
                free(d->items[i].message);
        }
        free(d->items);
        *d = (Diagnostics){};
}

int diagnostics_addv(
        Diagnostics *d, DiagnosticLevel level, const char *file, unsigned line, unsigned column,
        const char *format, va_list ap) {
        _cleanup_free_ char *message = NULL, *f = NULL;
        Diagnostic *items = NULL;

        if (vasprintf(&message, format, ap) < 0)
                return -ENOMEM;
        if (file) {
                f = strdup(file);
                if (!f)
                        return -ENOMEM;
        }
        items = reallocarray(d->items, d->n_items + 1, sizeof(Diagnostic));
        if (!items)
                return -ENOMEM;
        d->items = items;
        d->items[d->n_items++] = (Diagnostic){
                .level = level,
                .file = TAKE_PTR(f),
                .line = line,
                .column = column,
                .message = TAKE_PTR(message),
        };
        if (level == DIAGNOSTIC_ERROR)
                d->n_errors++;
        else
                d->n_warnings++;
        return 0;
}

int diagnostics_add(
        Diagnostics *d, DiagnosticLevel level, const char *file, unsigned line, unsigned column,
        const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = diagnostics_addv(d, level, file, line, column, format, ap);
        va_end(ap);
        return r;
}

int diagnostic_format(const Diagnostic *d, char **ret) {
        const char *level = d->level == DIAGNOSTIC_ERROR ? "error" : "warning";
        char *s = NULL;
        int r;

        if (d->file && d->line > 0 && d->column > 0)
                r = asprintf(&s, "%s:%u:%u: %s: %s", d->file, d->line, d->column, level, d->message);
        else if (d->file && d->line > 0)
                r = asprintf(&s, "%s:%u: %s: %s", d->file, d->line, level, d->message);
        else if (d->file)
                r = asprintf(&s, "%s: %s: %s", d->file, level, d->message);
        else
                r = asprintf(&s, "%s: %s", level, d->message);
        if (r < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int diagnostics_format(const Diagnostics *d, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = NULL;
        int r = 0;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; d && i < d->n_items; i++) {
                _cleanup_free_ char *line = NULL;

                r = diagnostic_format(&d->items[i], &line);
                if (r < 0)
                        break;
                fputs(line, f);
                fputc('\n', f);
        }
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}
