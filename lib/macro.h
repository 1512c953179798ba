/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Small helpers shared by every module: cleanup attributes for owned resources, ownership
 * transfer, array sizes and string vectors. Modelled on systemd's src/fundamental/macro.h.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#define _unused_       __attribute__((__unused__))
#define _pure_         __attribute__((__pure__))
#define _printf_(a, b) __attribute__((__format__(printf, a, b)))
#define _cleanup_(f)   __attribute__((__cleanup__(f)))
#define _likely_(x)    (__builtin_expect(!!(x), 1))
#define _unlikely_(x)  (__builtin_expect(!!(x), 0))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b)     ((a) < (b) ? (a) : (b))
#define MAX(a, b)     ((a) > (b) ? (a) : (b))

/* Hand ownership out of a _cleanup_ variable: returns the value and leaves NULL behind. */
#define TAKE_PTR(p) \
        ({ \
                __typeof__(p) _p_ = (p); \
                (p) = NULL; \
                _p_; \
        })
#define TAKE_FD(fd) \
        ({ \
                int _fd_ = (fd); \
                (fd) = -EBADF; \
                _fd_; \
        })

/* Declares "static inline void name##p(type **p)" that calls func(*p) when *p is non-NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
        static inline void func##p(type *p) { \
                if (*p) \
                        *p = func(*p); \
        }

static inline void freep(void *p) {
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* NULL-terminated string vectors. */
static inline char **strv_free(char **l) {
        if (l)
                for (char **i = l; *i; i++)
                        free(*i);
        free(l);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)

static inline size_t strv_length(char *const *l) {
        size_t n = 0;
        if (l)
                while (l[n])
                        n++;
        return n;
}

#define STRV_FOREACH(s, l) for (char *const *s = (l); s && *s; s++)

/* asprintf(3) into a new string, or NULL: the target is never left undefined on failure. */
_printf_(1, 2) static inline char *strprintf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

/* Appends a newly formatted string to the NULL-terminated vector *l (NULL: an empty vector),
 * reallocating it. Returns 0, or -ENOMEM with *l unchanged. */
_printf_(2, 3) static inline int strv_extendf(char ***l, const char *format, ...) {
        size_t n = strv_length(*l);
        char **nl, *s = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        nl = reallocarray(*l, n + 2, sizeof(char *));
        if (!nl) {
                free(s);
                return -ENOMEM;
        }
        nl[n] = s;
        nl[n + 1] = NULL;
        *l = nl;
        return 0;
}

/* A newly allocated copy of the NULL-terminated vector l (an empty vector for NULL). NULL on
 * OOM. */
static inline char **strv_copy(char *const *l) {
        size_t n = strv_length(l);
        char **c = calloc(n + 1, sizeof(char *));

        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(l[i]);
                if (!c[i])
                        return strv_free(c);
        }
        return c;
}

/* The strings of l joined by sep, newly allocated ("" for an empty or NULL l). NULL on OOM. */
static inline char *strv_join(char *const *l, const char *sep) {
        size_t n = 1, k = 0;
        char *s;

        STRV_FOREACH (e, l)
                n += strlen(*e) + strlen(sep);
        s = malloc(n);
        if (!s)
                return NULL;
        STRV_FOREACH (e, l)
                k += (size_t)sprintf(s + k, "%s%s", e == l ? "" : sep, *e);
        s[k] = '\0';
        return s;
}

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

/* Free *p and set it to NULL; returns NULL, for "p = mfree(p)". */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

/* Replace *p by a copy of s (s may be NULL). Returns 0 or -ENOMEM. */
static inline int free_and_strdup(char **p, const char *s) {
        char *t = NULL;
        if (s) {
                t = strdup(s);
                if (!t)
                        return -ENOMEM;
        }
        free(*p);
        *p = t;
        return 0;
}
