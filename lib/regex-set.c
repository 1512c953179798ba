/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cmdline: matcher's regular expressions on Hyperscan (regex-set.h). */

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hs.h>

#include "macro.h"
#include "regex-set.h"

struct RegexSet {
        size_t n;
        hs_database_t *db;     /* NULL: the regexec(3) fallback */
        hs_scratch_t *scratch; /* for db; a scan's only mutable state */
        regex_t *re;           /* the fallback, n of them */
};

struct RegexScratch {
        hs_scratch_t *hs; /* NULL until the first search */
};

RegexScratch *regex_scratch_new(void) {
        return calloc(1, sizeof(RegexScratch));
}

RegexScratch *regex_scratch_free(RegexScratch *scratch) {
        if (!scratch)
                return NULL;
        if (scratch->hs)
                hs_free_scratch(scratch->hs);
        return mfree(scratch);
}

RegexSet *regex_set_free(RegexSet *s) {
        if (!s)
                return NULL;
        if (s->scratch)
                hs_free_scratch(s->scratch);
        if (s->db)
                hs_free_database(s->db);
        for (size_t i = 0; s->re && i < s->n; i++)
                regfree(&s->re[i]);
        free(s->re);
        return mfree(s);
}

static int fail(size_t index, const char *message, size_t *ret_index, char **ret_error) {
        if (ret_index)
                *ret_index = index;
        if (ret_error && !(*ret_error = strdup(message)))
                return -ENOMEM;
        return -EINVAL;
}

/*
 * A POSIX ERE (as glibc's regcomp(3) reads it, REG_EXTENDED) in the PCRE syntax Hyperscan
 * reads, newly allocated, or NULL on OOM. The two differ in backslashes: in a bracket
 * expression a backslash is an ordinary character ("[a\]" is 'a' or '\'); outside, glibc knows
 * \w \W \s \S \b \B (as PCRE does), \` \' (the text's start and end: \A \z), and takes a
 * backslash before any other character as that character, literally (so \d is 'd', not a
 * digit). And '$' is the end of the text only (\z: PCRE's also matches before a final
 * newline). glibc's \< \> (a word's start, end) have no Hyperscan equivalent: NULL with errno
 * EINVAL.
 */
static char *ere_to_pcre(const char *ere) {
        size_t n = strlen(ere);
        char *out = malloc(4 * n + 1), *o = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                char c = ere[i];

                if (c == '[') {
                        /* A bracket expression: "[", an optional "^", an optional "]" taken
                         * literally, then up to the closing "]"; "[:class:]", "[=x=]", "[.x.]"
                         * inside are copied whole. */
                        *o++ = ere[i++];
                        if (i < n && ere[i] == '^')
                                *o++ = ere[i++];
                        if (i < n && ere[i] == ']') {
                                *o++ = '\\';
                                *o++ = ere[i++];
                        }
                        for (; i < n && ere[i] != ']'; i++) {
                                if (ere[i] == '[' && i + 1 < n && strchr(":=.", ere[i + 1])) {
                                        const char *end = strchr(ere + i + 2, ere[i + 1]);

                                        /* A one-character collating symbol or equivalence
                                         * class is that character (Hyperscan has neither). */
                                        if (ere[i + 1] != ':' && end == ere + i + 3 && end[1] == ']') {
                                                *o++ = '\\';
                                                *o++ = ere[i + 2];
                                                i += 4;
                                                continue;
                                        }
                                        if (end && end[1] == ']') {
                                                size_t k = (size_t)(end + 2 - (ere + i));

                                                memcpy(o, ere + i, k);
                                                o += k;
                                                i += k - 1;
                                                continue;
                                        }
                                }
                                if (ere[i] == '\\' || ere[i] == '[')
                                        *o++ = '\\';
                                *o++ = ere[i];
                        }
                        if (i < n)
                                *o++ = ']';
                        continue;
                }
                if (c == '\\' && i + 1 < n) {
                        char e = ere[++i];

                        if (strchr("wWsSbB", e)) {
                                *o++ = '\\';
                                *o++ = e;
                        } else if (e == '<' || e == '>') {
                                /* A word's start or end: Hyperscan has \b, not these. */
                                free(out);
                                errno = EINVAL;
                                return NULL;
                        } else if (e == '`') {
                                *o++ = '\\';
                                *o++ = 'A';
                        } else if (e == '\'') {
                                *o++ = '\\';
                                *o++ = 'z';
                        } else if (
                                (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9'))
                                *o++ = e; /* an ordinary character, escaped for nothing */
                        else {
                                *o++ = '\\';
                                *o++ = e;
                        }
                        continue;
                }
                if (c == '$') {
                        /* The end of the text only: PCRE's '$' also matches before a final
                         * newline. */
                        *o++ = '\\';
                        *o++ = 'z';
                        continue;
                }
                *o++ = c;
        }
        *o = '\0';
        return out;
}

int regex_set_new(char *const *patterns, RegexSet **ret, size_t *ret_index, char **ret_error) {
        _cleanup_free_ unsigned *flags = NULL, *ids = NULL;
        _cleanup_strv_free_ char **pcre = NULL;
        hs_compile_error_t *error = NULL;
        RegexSet *s;
        size_t n = 0;
        int r = 0;

        while (patterns && patterns[n])
                n++;
        if (n == 0 || n > UINT_MAX)
                return fail(0, "no pattern", ret_index, ret_error);

        s = calloc(1, sizeof(RegexSet));
        if (!s)
                return -ENOMEM;
        s->n = n;
        s->re = calloc(n, sizeof(regex_t));
        if (!s->re) {
                free(s);
                return -ENOMEM;
        }

        /* POSIX first: the patterns are EREs, whatever else Hyperscan would take. */
        for (size_t i = 0; i < n; i++) {
                int e = regcomp(&s->re[i], patterns[i], REG_EXTENDED | REG_NOSUB);

                if (e != 0) {
                        char buf[256];

                        regerror(e, &s->re[i], buf, sizeof buf);
                        s->n = i; /* the ones compiled so far are freed */
                        regex_set_free(s);
                        return e == REG_ESPACE ? -ENOMEM : fail(i, buf, ret_index, ret_error);
                }
        }

        if (hs_valid_platform() != HS_SUCCESS) {
                *ret = s;
                return 0;
        }

        flags = calloc(n, sizeof(unsigned));
        ids = calloc(n, sizeof(unsigned));
        pcre = calloc(n + 1, sizeof(char *));
        if (!flags || !ids || !pcre) {
                regex_set_free(s);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                flags[i] = HS_FLAG_DOTALL | HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY;
                ids[i] = (unsigned)i;
                pcre[i] = ere_to_pcre(patterns[i]);
                if (!pcre[i]) {
                        r = errno == EINVAL ? fail(i,
                                                   "\\< and \\> (a word's start and end) are not supported "
                                                   "by the linear-time matcher; \\b (a word boundary) is",
                                                   ret_index, ret_error)
                                            : -ENOMEM;
                        regex_set_free(s);
                        return r;
                }
        }
        if (hs_compile_multi(
                    (const char *const *)pcre, flags, ids, (unsigned)n, HS_MODE_BLOCK, NULL, &s->db,
                    &error) != HS_SUCCESS) {
                size_t index = error && error->expression >= 0 ? (size_t)error->expression : n;

                r =
                        fail(index, error && error->message ? error->message : "cannot be compiled",
                             ret_index, ret_error);
                hs_free_compile_error(error);
                regex_set_free(s);
                return r;
        }
        if (hs_alloc_scratch(s->db, &s->scratch) != HS_SUCCESS) {
                regex_set_free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

/* Keeps the lowest pattern index reported; stops the scan at pattern 0 (nothing comes first). */
static int on_match(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void *ctx) {
        unsigned *lowest = ctx;

        if (id < *lowest)
                *lowest = id;
        return id == 0;
}

int regex_set_search(const RegexSet *s, const char *text, size_t len) {
        return regex_set_search_with(s, NULL, text, len);
}

int regex_set_search_with(const RegexSet *s, RegexScratch *scratch, const char *text, size_t len) {
        unsigned lowest = UINT_MAX;
        hs_scratch_t *hs = s->scratch;
        hs_error_t e;

        if (!s->db) {
                _cleanup_free_ char *copy = NULL;
                const char *t = text;

                /* regexec(3) wants a C string: stop at the first NUL, as it would. */
                if (memchr(text, '\0', len) == NULL) {
                        copy = strndup(text, len);
                        if (!copy)
                                return -ENOMEM;
                        t = copy;
                }
                for (size_t i = 0; i < s->n; i++)
                        if (regexec(&s->re[i], t, 0, NULL, 0) == 0)
                                return (int)i;
                return -ENOENT;
        }
        if (len > UINT_MAX)
                return -E2BIG;
        if (scratch) {
                /* Grown (reallocated) only if s needs more than it has. */
                e = hs_alloc_scratch(s->db, &scratch->hs);
                if (e != HS_SUCCESS)
                        return e == HS_NOMEM ? -ENOMEM : -EIO;
                hs = scratch->hs;
        }
        e = hs_scan(s->db, text, (unsigned)len, 0, hs, on_match, &lowest);
        if (e != HS_SUCCESS && e != HS_SCAN_TERMINATED)
                return e == HS_NOMEM ? -ENOMEM : -EIO;
        return lowest == UINT_MAX ? -ENOENT : (int)lowest;
}

bool regex_set_linear(const RegexSet *s) {
        return s && s->db;
}
