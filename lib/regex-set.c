/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cmdline: matcher's regular expressions on Hyperscan (regex-set.h). */

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <pthread.h>

#include <hs.h>

#include "config.h"

#include "macro.h"
#include "regex-set.h"

/*
 * libhs, loaded at the first compile (dlopen(3) of HS_SONAME): a daemon without cmdline: regexes
 * never maps it. Its functions are called through these pointers, typed by <hs.h>'s prototypes.
 * When it can't be loaded, sets fall back to regexec(3), as on a CPU Hyperscan can't run on.
 */
static struct {
        typeof(hs_valid_platform) *valid_platform;
        typeof(hs_compile_multi) *compile_multi;
        typeof(hs_free_compile_error) *free_compile_error;
        typeof(hs_alloc_scratch) *alloc_scratch;
        typeof(hs_free_scratch) *free_scratch;
        typeof(hs_free_database) *free_database;
        typeof(hs_scan) *scan;
} libhs;
static bool hs_loaded;
static pthread_once_t hs_once = PTHREAD_ONCE_INIT;

static void hs_load(void) {
        void *dl = dlopen(HS_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

        if (!dl)
                return;
#define HS_SYM(field) (libhs.field = (typeof(libhs.field))dlsym(dl, "hs_" #field))
        if (!HS_SYM(valid_platform) || !HS_SYM(compile_multi) || !HS_SYM(free_compile_error) ||
            !HS_SYM(alloc_scratch) || !HS_SYM(free_scratch) || !HS_SYM(free_database) || !HS_SYM(scan)) {
                dlclose(dl);
                return;
        }
#undef HS_SYM
        hs_loaded = true;
}

/* True if libhs is loaded (loading it the first time) and runs on this CPU. */
static bool hs_usable(void) {
        (void)pthread_once(&hs_once, hs_load);
        return hs_loaded && libhs.valid_platform() == HS_SUCCESS;
}

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
                libhs.free_scratch(scratch->hs);
        return mfree(scratch);
}

RegexSet *regex_set_free(RegexSet *s) {
        if (!s)
                return NULL;
        if (s->scratch)
                libhs.free_scratch(s->scratch);
        if (s->db)
                libhs.free_database(s->db);
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
                if (c == '{' && i + 1 < n && ere[i + 1] == ',') {
                        size_t j = i + 2;

                        /* glibc's interval "{,n}" is "{0,n}" (and "{,}" "{0,}"); PCRE would
                         * take it literally. The ',' is copied next. */
                        while (j < n && ere[j] >= '0' && ere[j] <= '9')
                                j++;
                        if (j < n && ere[j] == '}') {
                                *o++ = '{';
                                *o++ = '0';
                                continue;
                        }
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

/* a + b and a * b, or cap if that is cap or more (a, b <= cap). */
static uint64_t add_sat(uint64_t a, uint64_t b, uint64_t cap) {
        return a >= cap || b >= cap - a ? cap : a + b;
}

static uint64_t mul_sat(uint64_t a, uint64_t b, uint64_t cap) {
        return a != 0 && b > (cap - 1) / a ? cap : a * b;
}

/* The digits at s (advanced past them) as a number, saturating at cap; false if there are none. */
static bool parse_count(const char **s, uint64_t cap, uint64_t *ret) {
        uint64_t v = 0;
        const char *p = *s;

        if (*p < '0' || *p > '9')
                return false;
        for (; *p >= '0' && *p <= '9'; p++)
                v = add_sat(mul_sat(v, 10, cap), (uint64_t)(*p - '0'), cap);
        *s = p;
        *ret = v;
        return true;
}

typedef struct EreCost {
        uint64_t positions; /* NFA nodes, saturating at REGEX_SET_MAX_POSITIONS + 1 */
        uint64_t ways;      /* the most ways from a point to the end of a part that follows it
                             * match the empty string, saturating at REGEX_SET_MAX_CLOSURE_WORK + 1 */
        bool nullable_loop; /* some '*', '+' or "{m,}" repeats what can match the empty string */
} EreCost;

/* A group of the ERE being read (the whole ERE at the bottom of the stack). */
typedef struct EreFrame {
        /* Positions: */
        uint64_t alt;  /* the branches before the last '|' */
        uint64_t seq;  /* the current branch but its last element */
        uint64_t last; /* the last element, what a repetition operator applies to */
        /* Ways to match the empty string: */
        uint64_t alt_ways;  /* W of the branches before the last '|' */
        uint64_t alt_run;   /* their most S */
        uint64_t seq_ways;  /* W of the current branch but its last element */
        uint64_t seq_run;   /* its S: the most ways from a point in it to its end */
        uint64_t last_ways; /* W of the last element */
        uint64_t last_run;  /* S of the last element */
} EreFrame;

#define ERE_POSITIONS_CAP (REGEX_SET_MAX_POSITIONS + 1)
#define ERE_WAYS_CAP      (REGEX_SET_MAX_CLOSURE_WORK + 1)

/* S of the frame's current branch: the most ways from a point in it to its end. */
static uint64_t ere_branch_run(const EreFrame *f) {
        return MAX(mul_sat(f->seq_run, f->last_ways, ERE_WAYS_CAP), f->last_run);
}

/* The last element becomes part of the branch. */
static void ere_append_last(EreFrame *f, EreCost *c) {
        f->seq = add_sat(f->seq, f->last, ERE_POSITIONS_CAP);
        f->seq_run = ere_branch_run(f);
        f->seq_ways = mul_sat(f->seq_ways, f->last_ways, ERE_WAYS_CAP);
        c->ways = MAX(c->ways, f->seq_run);
}

/*
 * The cost of compiling the ERE with glibc's regcomp(3), in *ret. Returns 0 or -ENOMEM.
 *
 * Positions: an upper bound on the NFA nodes glibc builds. It expands a repetition by copying
 * its operand: X+ becomes X X*, X{m,n} n copies (m + 1 for X{m,}), so repetitions that nest or
 * follow each other multiply ("t" and 20 '+', or 20 nested "(…)+": 2^20 positions, seconds;
 * 117 '+': more memory than any machine has), and its closure computation is quadratic in the
 * positions ("x{1,4095}": 134 MB). An atom (a character, an escape, '.', a bracket expression)
 * is one position.
 *
 * Ways: glibc computes each node's epsilon closure by walking every path of epsilon
 * transitions from it. It keeps a closure for the next node that reaches it only when the
 * walk completed, and a walk that comes round a loop to where it started is not complete: so
 * with a loop whose operand can match the empty string, each node near it walks every path
 * again, and their number multiplies along a sequence ("(a?)?(b?)?(c?)?" matches the empty
 * string 2 × 2 × 2 ways) and adds up through alternatives and nested '?'. For each element
 * this counts W, the ways from its start to its end that match the empty string (an atom 0,
 * an empty branch 1, X? and X* W + 1, X+ W (W + 1), a sequence the product, alternatives the
 * sum), and S, the most from any point inside it to its end (a loop multiplies it by W + 1,
 * the ways round); ways is the most S of any element or run of elements. Each of those walks
 * may reach every position, so the work is bounded by positions × ways
 * (REGEX_SET_MAX_CLOSURE_WORK).
 */
static int ere_cost(const char *ere, EreCost *ret) {
        static const EreFrame empty = {.seq_ways = 1, .seq_run = 1, .last_ways = 1, .last_run = 1};
        _cleanup_free_ EreFrame *stack = NULL;
        const uint64_t cap = ERE_POSITIONS_CAP, wcap = ERE_WAYS_CAP;
        size_t depth = 0, opens = 0;
        EreCost c = {};

        for (const char *p = ere; *p; p++)
                opens += *p == '(';
        stack = calloc(opens + 1, sizeof(EreFrame));
        if (!stack)
                return -ENOMEM;
        stack[0] = empty;

        for (const char *p = ere; *p; p++) {
                EreFrame *f = &stack[depth];
                uint64_t m, n, w;
                bool have_m, unbounded = false;
                const char *q;

                switch (*p) {
                case '(':
                        ere_append_last(f, &c);
                        f->last = 0;
                        f->last_ways = f->last_run = 1;
                        stack[++depth] = empty;
                        continue;
                case ')':
                        if (depth == 0)
                                break; /* an atom, or regcomp(3)'s error */
                        m = add_sat(add_sat(add_sat(f->alt, f->seq, cap), f->last, cap), 1, cap);
                        w = add_sat(f->alt_ways, mul_sat(f->seq_ways, f->last_ways, wcap), wcap);
                        n = MAX(MAX(w, f->alt_run), ere_branch_run(f));
                        f = &stack[--depth];
                        f->last = m;
                        f->last_ways = w;
                        f->last_run = n;
                        c.ways = MAX(c.ways, n);
                        continue;
                case '|':
                        f->alt = add_sat(add_sat(f->alt, f->seq, cap), add_sat(f->last, 1, cap), cap);
                        f->seq = f->last = 0;
                        f->alt_ways = add_sat(f->alt_ways, mul_sat(f->seq_ways, f->last_ways, wcap), wcap);
                        f->alt_run = MAX(f->alt_run, ere_branch_run(f));
                        f->seq_ways = f->seq_run = f->last_ways = f->last_run = 1;
                        continue;
                case '*':
                case '?':
                        f->last = add_sat(f->last, 1, cap);
                        w = add_sat(f->last_ways, 1, wcap);
                        if (*p == '*') {
                                c.nullable_loop |= f->last_ways > 0;
                                f->last_run = mul_sat(f->last_run, w, wcap);
                        }
                        f->last_ways = w;
                        f->last_run = MAX(f->last_run, w);
                        c.ways = MAX(c.ways, f->last_run);
                        continue;
                case '+':
                        /* X X* */
                        f->last = add_sat(mul_sat(f->last, 2, cap), 1, cap);
                        c.nullable_loop |= f->last_ways > 0;
                        w = add_sat(f->last_ways, 1, wcap);
                        f->last_run = mul_sat(f->last_run, w, wcap);
                        f->last_ways = mul_sat(f->last_ways, w, wcap);
                        c.ways = MAX(c.ways, f->last_run);
                        continue;
                case '{':
                        /* An interval "{m}", "{m,}", "{m,n}", or glibc's "{,n}" (m = 0);
                         * anything else is no repetition. */
                        q = p + 1;
                        have_m = parse_count(&q, cap, &m);
                        if (!have_m)
                                m = 0;
                        n = m;
                        if (*q == ',') {
                                q++;
                                if (!parse_count(&q, cap, &n)) {
                                        n = add_sat(m, 1, cap);
                                        unbounded = true;
                                }
                        } else if (!have_m)
                                break;
                        if (*q != '}')
                                break;
                        f->last = add_sat(mul_sat(f->last, MAX(MAX(m, n), (uint64_t)1), cap), 1, cap);
                        /* X{m,n} is m copies of X, then n - m nested optional ones
                         * ("X(X(X)?)?"); X{m,} m copies and X*. */
                        w = 1;
                        for (uint64_t k = 0; k < m && w > 0 && w < wcap; k++)
                                w = mul_sat(w, f->last_ways, wcap);
                        if (unbounded) {
                                c.nullable_loop |= f->last_ways > 0;
                                w = mul_sat(w, add_sat(f->last_ways, 1, wcap), wcap);
                        } else if (n > m) {
                                uint64_t chain = 1;

                                for (uint64_t k = m; k < n && chain < wcap; k++)
                                        chain = add_sat(mul_sat(f->last_ways, chain, wcap), 1, wcap);
                                w = mul_sat(w, chain, wcap);
                        }
                        /* From a point in the first copy, through the rest. */
                        f->last_run = MAX(mul_sat(f->last_run, MAX(w, (uint64_t)1), wcap), w);
                        f->last_ways = w;
                        c.ways = MAX(c.ways, f->last_run);
                        p = q;
                        continue;
                case '\\':
                        if (p[1])
                                p++;
                        break;
                case '[':
                        /* A bracket expression, as ere_to_pcre() delimits it: one position. */
                        q = p + 1;
                        if (*q == '^')
                                q++;
                        if (*q == ']')
                                q++;
                        for (; *q && *q != ']'; q++)
                                if (*q == '[' && q[1] && strchr(":=.", q[1])) {
                                        const char *end = strchr(q + 2, q[1]);

                                        if (end && end[1] == ']')
                                                q = end + 1;
                                }
                        p = *q ? q : q - 1;
                        break;
                default:
                        break;
                }
                /* An atom: one position, no way to match the empty string. */
                ere_append_last(f, &c);
                f->last = 1;
                f->last_ways = 0;
                f->last_run = 1;
        }

        /* Unclosed groups (regcomp(3) refuses those): count them anyway. */
        for (size_t d = depth + 1; d-- > 0;)
                c.positions =
                        add_sat(c.positions,
                                add_sat(add_sat(stack[d].alt, stack[d].seq, cap), stack[d].last, cap), cap);
        *ret = c;
        return 0;
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

        /* POSIX first: the patterns are EREs, whatever else Hyperscan would take. But not one
         * that regcomp(3) would take seconds and gigabytes to expand. */
        for (size_t i = 0; i < n; i++) {
                const char *why = NULL;
                EreCost c;
                int e;

                r = ere_cost(patterns[i], &c);
                if (r >= 0 && c.positions > REGEX_SET_MAX_POSITIONS)
                        why = "more than 1024 positions once its repetitions are expanded (the limit; "
                              "repetitions that nest or follow each other multiply)";
                else if (
                        r >= 0 && c.nullable_loop &&
                        mul_sat(c.positions, c.ways, ERE_WAYS_CAP) > REGEX_SET_MAX_CLOSURE_WORK)
                        why = "a loop round what matches the empty string, where the positions times the "
                              "ways a part matches it are more than 65536 (the limit; \"(a?)?(b?)?\" "
                              "matches it 4 ways, 2 for each \"(a?)?\")";
                if (r < 0 || why) {
                        s->n = i; /* the ones compiled so far are freed */
                        regex_set_free(s);
                        return r < 0 ? r : fail(i, why, ret_index, ret_error);
                }
                e = regcomp(&s->re[i], patterns[i], REG_EXTENDED | REG_NOSUB);

                if (e != 0) {
                        char buf[256];

                        regerror(e, &s->re[i], buf, sizeof buf);
                        s->n = i; /* the ones compiled so far are freed */
                        regex_set_free(s);
                        return e == REG_ESPACE ? -ENOMEM : fail(i, buf, ret_index, ret_error);
                }
        }

        if (!hs_usable()) {
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
        if (libhs.compile_multi(
                    (const char *const *)pcre, flags, ids, (unsigned)n, HS_MODE_BLOCK, NULL, &s->db,
                    &error) != HS_SUCCESS) {
                size_t index = error && error->expression >= 0 ? (size_t)error->expression : n;

                r =
                        fail(index, error && error->message ? error->message : "cannot be compiled",
                             ret_index, ret_error);
                libhs.free_compile_error(error);
                regex_set_free(s);
                return r;
        }
        if (libhs.alloc_scratch(s->db, &s->scratch) != HS_SUCCESS) {
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
                e = libhs.alloc_scratch(s->db, &scratch->hs);
                if (e != HS_SUCCESS)
                        return e == HS_NOMEM ? -ENOMEM : -EIO;
                hs = scratch->hs;
        }
        e = libhs.scan(s->db, text, (unsigned)len, 0, hs, on_match, &lowest);
        if (e != HS_SUCCESS && e != HS_SCAN_TERMINATED)
                return e == HS_NOMEM ? -ENOMEM : -EIO;
        return lowest == UINT_MAX ? -ENOENT : (int)lowest;
}

bool regex_set_linear(const RegexSet *s) {
        return s && s->db;
}
