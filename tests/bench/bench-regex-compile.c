/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-regex-compile [COUNT [SEED]]: what compiling a cmdline: pattern can cost. Generates
 * COUNT (default 200000) random EREs, half of them general (nested groups, alternatives with
 * empty branches, every repetition operator) and half built to be hard for glibc's regcomp(3)
 * (sequences of parts that match the empty string, under loops), compiles each with
 * regex_set_new() as the policy loader does, and for each one taken times regcomp(3) alone.
 * Prints the counts and the worst times, and every pattern over 5 ms. The limits of
 * lib/regex-set.h are what keeps the worst of the taken ones low (docs/fuzzing.md).
 */

#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "regex-set.h"

#define MAX_LEN 4096

typedef struct Gen {
        uint64_t state;
        char buf[MAX_LEN];
        size_t len;
} Gen;

static uint64_t next(Gen *g) {
        /* xorshift64* */
        g->state ^= g->state >> 12;
        g->state ^= g->state << 25;
        g->state ^= g->state >> 27;
        return g->state * 2685821657736338717ULL;
}

static unsigned pick(Gen *g, unsigned n) {
        return (unsigned)(next(g) % n);
}

static void put(Gen *g, const char *s) {
        size_t n = strlen(s);

        if (g->len + n < MAX_LEN) {
                memcpy(g->buf + g->len, s, n);
                g->len += n;
        }
}

static const char *const atoms[] = {"a", "b", ".", "[ab]", "\\w"};
static const char *const repeats[] = {"?", "*", "+", "{0,2}", "{1,3}", "{2}", "{0,}", "{,2}", "{1,}"};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Any element, up to depth levels of groups and repetitions. */
static void general(Gen *g, int depth) {
        unsigned r = pick(g, 100);

        if (depth <= 0 || r < 25)
                put(g, atoms[pick(g, N(atoms))]);
        else if (r < 55) {
                general(g, depth - 1);
                put(g, repeats[pick(g, N(repeats))]);
        } else if (r < 80) {
                unsigned k = 1 + pick(g, 3);

                put(g, "(");
                for (unsigned i = 0; i < k; i++)
                        general(g, depth - 1);
                put(g, ")");
        } else {
                unsigned k = 2 + pick(g, 2);

                put(g, "(");
                for (unsigned i = 0; i < k; i++) {
                        if (i > 0)
                                put(g, "|");
                        if (pick(g, 2))
                                general(g, depth - 1);
                }
                put(g, ")");
        }
}

/* An element that matches the empty string, in more ways the deeper it goes. */
static void nullable(Gen *g, int depth) {
        static const char *const leaves[] = {"a?", "(|)", "(||)", "a*", "(a|)", "(a?)?", "b{0,2}"};
        static const char *const reps[] = {"?", "*", "+", "{0,2}", "{1,3}", "{2}", "{0,}"};
        unsigned r = pick(g, 100);

        if (depth <= 0)
                put(g, leaves[pick(g, N(leaves))]);
        else if (r < 30) {
                put(g, "(");
                nullable(g, depth - 1);
                put(g, ")");
                put(g, reps[pick(g, N(reps))]);
        } else if (r < 60) {
                unsigned k = 1 + pick(g, 4);

                put(g, "(");
                for (unsigned i = 0; i < k; i++)
                        nullable(g, depth - 1);
                put(g, ")");
        } else if (r < 80) {
                unsigned k = 2 + pick(g, 2);

                put(g, "(");
                for (unsigned i = 0; i < k; i++) {
                        if (i > 0)
                                put(g, "|");
                        nullable(g, depth - 1);
                }
                put(g, ")");
        } else {
                nullable(g, depth - 1);
                put(g, (const char *[]){"?", "+", "*"}[pick(g, 3)]);
        }
}

static void pattern(Gen *g, bool hard) {
        static const char *const loops[] = {"+", "*", "{1,}", "+{2}", "{2}+", "+?"};
        unsigned k = 1 + pick(g, hard ? 6 : 4);

        g->len = 0;
        if (hard) {
                bool wrap = pick(g, 10) < 3;

                if (wrap)
                        put(g, "x");
                put(g, "(");
                for (unsigned i = 0; i < k; i++)
                        nullable(g, 1 + (int)pick(g, 6));
                put(g, ")");
                put(g, loops[pick(g, N(loops))]);
                if (wrap)
                        put(g, "y");
        } else {
                bool wrap = pick(g, 2);

                if (wrap)
                        put(g, "(");
                for (unsigned i = 0; i < k; i++)
                        general(g, 3 + (int)pick(g, 12));
                if (wrap) {
                        put(g, ")");
                        put(g, (const char *[]){"+", "*", "+*", "{1,2}"}[pick(g, 4)]);
                }
        }
        g->buf[g->len] = '\0';
}

static double now_ms(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
        unsigned long count = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
        Gen g = {.state = argc > 2 ? strtoull(argv[2], NULL, 10) | 1 : 0x9e3779b97f4a7c15ULL};
        double worst_regcomp = 0, worst_taken = 0, worst_refused = 0, start = now_ms();
        unsigned long taken = 0, refused_cost = 0;
        regex_t warm;

        /* The first regcomp(3) sets up the locale's tables: not a pattern's cost. */
        if (regcomp(&warm, "a", REG_EXTENDED | REG_NOSUB) == 0)
                regfree(&warm);

        for (unsigned long i = 0; i < count; i++) {
                RegexSet *s = NULL;
                char *error = NULL;
                double t0, t;
                int r;

                pattern(&g, i % 2 == 1);
                t0 = now_ms();
                r = regex_set_new((char *[]){g.buf, NULL}, &s, NULL, &error);
                t = now_ms() - t0;
                if (r == 0) {
                        regex_t re;
                        double rt;

                        taken++;
                        t0 = now_ms();
                        if (regcomp(&re, g.buf, REG_EXTENDED | REG_NOSUB) == 0)
                                regfree(&re);
                        rt = now_ms() - t0;
                        if (rt > worst_regcomp)
                                worst_regcomp = rt;
                        if (t > worst_taken)
                                worst_taken = t;
                        if (rt > 5)
                                printf("slow regcomp(3): %.2f ms (regex_set_new() %.2f ms): %s\n", rt, t,
                                       g.buf);
                } else if (r == -EINVAL) {
                        refused_cost +=
                                error && (strstr(error, "positions") || strstr(error, "empty string"));
                        if (t > worst_refused)
                                worst_refused = t;
                        if (t > 5)
                                printf("slow refusal: %.2f ms: %s (%s)\n", t, g.buf, error);
                } else {
                        fprintf(stderr, "regex_set_new(): %s\n", strerror(-r));
                        return EXIT_FAILURE;
                }
                regex_set_free(s);
                free(error);
        }
        printf("patterns: %lu, taken: %lu, refused by the cost limits: %lu, in %.1f s\n", count, taken,
               refused_cost, (now_ms() - start) / 1e3);
        printf("worst of the taken: regcomp(3) %.2f ms, regex_set_new() %.2f ms; worst refusal: %.2f ms\n",
               worst_regcomp, worst_taken, worst_refused);
        return EXIT_SUCCESS;
}
