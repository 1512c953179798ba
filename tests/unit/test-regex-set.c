/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The cmdline: matcher's regex set (lib/regex-set.h) against glibc's regexec(3), which defines
 * what a POSIX ERE means here: a table of ERE features and of the spots where POSIX and PCRE
 * syntax differ, a random differential test, which pattern of a set is reported, and hostile
 * command lines that make regexec(3) super-linear (the answers are checked, not the time:
 * tests/bench has the timing).
 */

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "regex-set.h"

/* What regexec(3) says: 1 match, 0 none. */
static int posix_match(const char *pattern, const char *text) {
        regex_t re;
        int r;

        ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
        r = regexec(&re, text, 0, NULL, 0) == 0;
        regfree(&re);
        return r;
}

static int set_match(const char *pattern, const char *text) {
        RegexSet *s = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = regex_set_new((char *[]){(char *)pattern, NULL}, &s, NULL, &error);
        ck_assert_msg(r == 0, "regex_set_new(\"%s\"): %d %s", pattern, r, strna(error));
        ck_assert(regex_set_linear(s));
        r = regex_set_search(s, text, strlen(text));
        ck_assert_msg(r == 0 || r == -ENOENT, "search: %d", r);
        regex_set_free(s);
        return r == 0;
}

static const struct {
        const char *pattern, *text;
} cases[] = {
        {"--role=(edge|gw)", "envoy --role=gw -c x"},
        {"--role=(edge|gw)", "envoy --role=core"},
        {"^postgres ", "postgres -D /srv/db"},
        {"^postgres ", "/usr/bin/postgres -D"},
        {"db$", "postgres -D /srv/db"},
        {"^$", ""},
        {"^$", "x"},
        {"a*", ""},
        {"x{3,}", "xx"},
        {"x{3,}", "axxxb"},
        {"x{2,3}y", "xxxxy"},
        {"ax{,2}y", "ay"}, /* glibc: "{,n}" is "{0,n}" */
        {"ax{,2}y", "axxxy"},
        {"ax{,}y", "axxxy"},
        {"[[:digit:]]+-[[:alpha:]]", "run 42-b"},
        {"[[:digit:]]+-[[:alpha:]]", "run 42-"},
        {"[^a-c]z", "az bz cz"},
        {"[^a-c]z", "az dz"},
        {"a.b", "a\nb"},   /* '.' matches a newline in POSIX without REG_NEWLINE */
        {"[a\\]", "x\\y"}, /* a backslash in brackets is an ordinary character */
        {"[a\\]]", "\\]"}, /* ... so this is [a\] followed by ']' */
        {"[a\\]]", "a"},
        {"[]x]", "]"}, /* ']' first in brackets is literal */
        {"[]x]", "y"},
        {"[[.-.]]", "a-b"}, /* collating symbol */
        {"\\d", "d"},       /* glibc: an escaped ordinary character is itself */
        {"\\d", "7"},
        {"\\.", "a.b"},
        {"\\.", "ab"},
        {"\\bx\\b", "a x b"},
        {"\\w+\\s\\w+", "ab cd"},
        {"\\`ab", "abc"},
        {"\\`ab", "cab"},
        {"bc\\'", "abc"},
        {"(a|)b", "b"},
        {"a+?", "a"}, /* ERE: '?' after '+' applies to the repetition */
        {"\\(x\\)", "(x)"},
        {"-Xmx[0-9]+[gGmM]", "java -Xmx16g -jar app.jar"},
};

START_TEST(test_cases) {
        int want = posix_match(cases[_i].pattern, cases[_i].text),
            got = set_match(cases[_i].pattern, cases[_i].text);

        ck_assert_msg(
                got == want, "/%s/ on \"%s\": regexec says %d, the set %d", cases[_i].pattern,
                cases[_i].text, want, got);
}
END_TEST

/* Random patterns over a small alphabet of ERE pieces, against random texts. */
START_TEST(test_differential) {
        static const char *const pieces[] = {
                "a",  "b",     ".",           "a*", "b+",   "(a|b)", "[ab]",  "[^a]", "^",   "$",
                "a?", "(ab)*", "[[:space:]]", " ",  "x{2}", "\\.",   "[a\\]", "\\b",  "\\w",
        };
        static const char alphabet[] = "ab x.\\\n]";
        unsigned seed = 4242;
        unsigned n = 0, refused = 0;
        RegexSet *s = NULL;

        for (unsigned k = 0; k < 3000; k++) {
                char pattern[64] = "", text[24];
                unsigned np = 1 + (unsigned)rand_r(&seed) % 4,
                         nt = (unsigned)rand_r(&seed) % (sizeof text - 1);
                regex_t re;

                for (unsigned i = 0; i < np; i++)
                        strcat(pattern, pieces[(unsigned)rand_r(&seed) % ELEMENTSOF(pieces)]);
                if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
                        continue;
                regfree(&re);
                /* What Hyperscan refuses is refused at load time (an anchor inside a pattern,
                 * "a$b", which can never match): not compared. */
                if (regex_set_new((char *[]){pattern, NULL}, &s, NULL, NULL) == -EINVAL) {
                        refused++;
                        continue;
                }
                s = regex_set_free(s);
                for (unsigned i = 0; i < nt; i++)
                        text[i] = alphabet[(unsigned)rand_r(&seed) % (sizeof alphabet - 1)];
                text[nt] = '\0';
                ck_assert_msg(
                        set_match(pattern, text) == posix_match(pattern, text),
                        "/%s/ on \"%s\": the set and regexec disagree", pattern, text);
                n++;
        }
        ck_assert_uint_gt(n, 1000);
        ck_assert_uint_lt(refused, n / 4);
}
END_TEST

/* The first pattern (in the order given) that matches is reported, whichever matches first in
 * the text. */
START_TEST(test_first_pattern) {
        RegexSet *s = NULL;

        ck_assert_int_eq(regex_set_new((char *[]){"zzz", "b$", "a", NULL}, &s, NULL, NULL), 0);
        ck_assert_int_eq(regex_set_search(s, "ab", 2), 1);
        ck_assert_int_eq(regex_set_search(s, "ba", 2), 2);
        ck_assert_int_eq(regex_set_search(s, "a zzz", 5), 0);
        ck_assert_int_eq(regex_set_search(s, "cd", 2), -ENOENT);
        /* The length is the text's, NUL bytes and all. */
        ck_assert_int_eq(regex_set_search(s, "c\0a", 3), 2);
        ck_assert_int_eq(regex_set_search(s, "ab", 1), 2);
        regex_set_free(s);
}
END_TEST

START_TEST(test_invalid) {
        _cleanup_free_ char *error = NULL;
        RegexSet *s = NULL;
        size_t index = 99;

        /* Not an ERE: regcomp(3)'s message, the pattern's index. */
        ck_assert_int_eq(regex_set_new((char *[]){"ok", "(", NULL}, &s, &index, &error), -EINVAL);
        ck_assert_ptr_null(s);
        ck_assert_uint_eq(index, 1);
        ck_assert_ptr_nonnull(error);
        error = mfree(error);
        /* EREs Hyperscan refuses: the pattern named, or the set. */
        ck_assert_int_eq(regex_set_new((char *[]){"ok", "a$b", NULL}, &s, &index, &error), -EINVAL);
        ck_assert_uint_eq(index, 1);
        ck_assert_msg(error && strstr(error, "anchor"), "%s", strna(error));
        error = mfree(error);
        ck_assert_int_eq(regex_set_new((char *[]){"\\<word", NULL}, &s, &index, &error), -EINVAL);
        ck_assert_uint_eq(index, 0);
        ck_assert_msg(error && strstr(error, "\\b"), "%s", strna(error));
        error = mfree(error);
        ck_assert_int_eq(regex_set_new((char *[]){"a{30000}", NULL}, &s, &index, &error), -EINVAL);
        ck_assert_msg(error && strstr(error, "limit"), "%s", strna(error));
        ck_assert_int_eq(regex_set_new((char *[]){NULL}, &s, NULL, NULL), -EINVAL);
}
END_TEST

/* The set of "ok" and pattern is refused, blaming pattern (index 1) with a message holding why. */
static void assert_refused(const char *pattern, const char *why) {
        _cleanup_free_ char *error = NULL;
        RegexSet *s = NULL;
        size_t index = 99;

        ck_assert_msg(
                regex_set_new((char *[]){"ok", (char *)pattern, NULL}, &s, &index, &error) == -EINVAL, "%s",
                pattern);
        ck_assert_ptr_null(s);
        ck_assert_uint_eq(index, 1);
        ck_assert_msg(error && strstr(error, why), "%s: %s", pattern, strna(error));
}

/* Patterns whose repetitions regcomp(3) would expand for seconds into gigabytes (a fuzzer found
 * "what" and 117 '+' in a policy: fuzz-policy-yaml ran out of memory) are refused at once, by
 * counting; below the limit they compile. */
START_TEST(test_expansion) {
        char plus[256], nested[256];
        int k = 0;

        k = snprintf(plus, sizeof(plus), "what");
        for (int i = 0; i < 117; i++)
                plus[k++] = '+';
        strcpy(plus + k, "ever");
        k = 0;
        for (int i = 0; i < 30; i++)
                nested[k++] = '(';
        nested[k++] = 't';
        for (int i = 0; i < 30; i++) {
                nested[k++] = '+';
                nested[k++] = ')';
        }
        nested[k] = '\0';

        const char *refused[] = {
                plus,
                nested,
                "((a{1000}){1000}){1000}",
                "x{1,32767}",
                "(ab){1,32767}",
                "x{,32767}",
                "--opt=(x*){3000}",
                "x{1,1024}", /* 1025 positions: one over */
        };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                assert_refused(refused[i], "1024 positions");

        const char *taken[] = {
                "x{1,1023}", /* 1024 positions: the limit */
                "[0-9a-f]{64}( [0-9a-f]{64}){3}",
                "(a+)+b",
                "(a{2}){3}",
                "x{,5}y",
                "[[:digit:]{}]{1,8}",
                "a{2", /* not an interval: regcomp(3)'s to judge */
        };
        for (size_t i = 0; i < ELEMENTSOF(taken); i++) {
                _cleanup_free_ char *error = NULL;
                RegexSet *s = NULL;
                int r = regex_set_new((char *[]){(char *)taken[i], NULL}, &s, NULL, &error);

                if (streq(taken[i], "a{2"))
                        ck_assert_msg(
                                r == -EINVAL && error && !strstr(error, "positions"), "%s", strna(error));
                else
                        ck_assert_msg(r == 0, "%s: %d %s", taken[i], r, strna(error));
                regex_set_free(s);
        }
        ck_assert_int_eq(set_match("x{1,1022}$", "axx"), 1);
}
END_TEST

/* s and n copies of what, in a new string. */
static char *repeat(const char *s, const char *what, size_t n, const char *end) {
        size_t ls = strlen(s), lw = strlen(what), le = strlen(end);
        char *r = malloc(ls + lw * n + le + 1), *p = r;

        ck_assert_ptr_nonnull(r);
        p = mempcpy(p, s, ls);
        for (size_t i = 0; i < n; i++)
                p = mempcpy(p, what, lw);
        memcpy(p, end, le + 1);
        return r;
}

/*
 * Patterns of a few hundred positions that glibc's regcomp(3) takes seconds to compile (each
 * was measured, release build): a loop round what matches the empty string in many ways,
 * which its closure computation walks again from every node (REGEX_SET_MAX_CLOSURE_WORK). What the fuzzer
 * found (tests/fuzz/seeds/policy-yaml/policy-yaml-slow-regcomp-*.yaml: 2.8 s) is refused at once, with the
 * reason; what is under the limit, or has no such loop, is taken.
 */
START_TEST(test_empty_ways) {
        /* Each measured in the release build: */
        _cleanup_free_ char *optional12 = repeat("(", "(a?)?", 12, ")+");    /* 4.7 s */
        _cleanup_free_ char *alternatives12 = repeat("(", "(||)", 12, ")+"); /* 3.3 s */
        _cleanup_free_ char *questions55 = repeat("a", "?", 55, "+++");      /* 3.9 s */
        _cleanup_free_ char *nested40 = repeat("((", "(|", 40, "a");         /* 1.4 s, closed below */
        /* 43 positions, 2^5 (2^5 + 1) ways: under the limit; 6: 51 and 4,160, over (1 ms) */
        _cleanup_free_ char *optional5 = repeat("(", "(a?)?", 5, ")+");
        _cleanup_free_ char *optional6 = repeat("(", "(a?)?", 6, ")+");
        _cleanup_free_ char *sequence = repeat("(", "(a|)", 40, ")+"); /* 1 way each */
        _cleanup_free_ char *no_loop = repeat("", "(||)", 40, "");     /* no loop: 3^40 ways */
        _cleanup_free_ char *nested = NULL;

        ck_assert_int_ge(
                asprintf(&nested, "%s%s)+++", nested40, "))))))))))))))))))))))))))))))))))))))))"), 0);
        const char *refused[] = {
                optional12,
                alternatives12,
                questions55,
                nested,
                optional6,
                "policies:++cmdline:+++++++???????????????c8res:??????????????????????????????????????"
                "????????????+++tervtill |$)",                         /* the fuzzer's, 2.8 s */
                "(||(((b)||)|){1,}{1,3}{2}{,2})",                      /* 4.3 s: bounded copies of a loop */
                "(((a?)?)?((a?)?)?((a?)?)?((a?)?)?((a?)?)?((a?)?)?)+", /* 53 ms */
                /* 383 positions, 1,008 ways: 119 ms */
                "((b))+((((((((\\wa)b?.?))(a(|[ab]){1,3}((|a|b)|b|[ab]))(.))((((||)[ab]+)(|)a*)(.{2}*)[ab]))"
                "?"
                "{0,2}?{0,2}(((|)((|(|(\\w|.)??|b))+|)((|([ab]\\w{1,3})|){0,2}((|(((|a|[ab])|(b|)|a){0,2}("
                "\\w|"
                "a|)(bba)*{2}))([ab]|(\\w|\\w|)?{,2}|){1,}b))))(((.|){,2}b)||))||)|)*",
        };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                assert_refused(refused[i], "more than 65536");

        const char *taken[] = {
                optional5,
                sequence,
                no_loop,
                "(.*)*",
                "(a?b?c?d?e?f?g?h?)+",
                "( -[a-z]+)*$",
                "(([a-z]{1,8}\\.){1,16})+",
                "((x|y)?(z|)?)+",
                "(a?)?(b?)?(c?)?(d?)?(e?)?(f?)?(g?)?(h?)?(i?)?(j?)?(k?)?(l?)?(m?)?(n?)?(o?)?(p?)?x+",
        };
        for (size_t i = 0; i < ELEMENTSOF(taken); i++) {
                _cleanup_free_ char *error = NULL;
                RegexSet *s = NULL;
                int r = regex_set_new((char *[]){(char *)taken[i], NULL}, &s, NULL, &error);

                ck_assert_msg(r == 0, "%s: %d %s", taken[i], r, strna(error));
                regex_set_free(s);
        }
        ck_assert_int_eq(set_match(optional5, "xaay"), 1);
        ck_assert_int_eq(set_match("((x|y)?(z|)?)+q", "zzq"), 1);
        ck_assert_int_eq(set_match("((x|y)?(z|)?)+q", "zz"), 0);
}
END_TEST

/* What makes regexec(3) take seconds: a long command line of what the pattern almost matches.
 * The set gives the right answers (whatever the time: see tests/bench). */
START_TEST(test_hostile) {
        size_t len = 2 * 1024 * 1024; /* ARG_MAX-sized */
        _cleanup_free_ char *text = malloc(len + 4);
        RegexSet *s = NULL;

        ck_assert_ptr_nonnull(text);
        for (size_t i = 0; i < len; i++)
                text[i] = "foo"[i % 3];
        ck_assert_int_eq(
                regex_set_new((char *[]){"foo.*bar", "(o|f)+x", "(f+o*)*z", NULL}, &s, NULL, NULL), 0);
        ck_assert_int_eq(regex_set_search(s, text, len), -ENOENT);
        memcpy(text + len, "bar", 4);
        ck_assert_int_eq(regex_set_search(s, text, len + 3), 0);
        regex_set_free(s);
}
END_TEST

/*
 * Two threads search the same sets at once, each with its own scratch space (as the daemon's
 * loop and its match worker do); a set's own scratch is in one scan at a time, and a shared one
 * would make hs_scan() fail (HS_SCRATCH_IN_USE) or corrupt a scan. Every answer must be right.
 * One scratch serves two sets of different sizes (it is grown to fit).
 */
typedef struct SearchThread {
        RegexSet *small, *big;
        bool own_scratch; /* else the sets' own (only one thread may do that) */
        unsigned wrong;
        int error;
} SearchThread;

static void *search_thread(void *userdata) {
        SearchThread *t = userdata;
        RegexScratch *scratch = t->own_scratch ? regex_scratch_new() : NULL;
        /* Long enough (8 KiB) that scans of the two threads overlap. */
        char yes[8192 + 64], no[8192 + 64];

        memset(yes, 'x', 8192);
        memset(no, 'x', 8192);
        strcpy(yes + 8192, " prog --data=/srv/db --port 5432");
        strcpy(no + 8192, " prog --port 5432 --data");

        if (t->own_scratch && !scratch) {
                t->error = -ENOMEM;
                return NULL;
        }
        for (unsigned i = 0; i < 5000; i++) {
                int a = regex_set_search_with(t->small, scratch, yes, strlen(yes)),
                    b = regex_set_search_with(t->small, scratch, no, strlen(no)),
                    c = regex_set_search_with(t->big, scratch, yes, strlen(yes));

                for (int *r = (int[]){a, b, c, 1}; *r != 1; r++)
                        if (*r < 0 && *r != -ENOENT && t->error == 0)
                                t->error = *r; /* -ENOMEM, -EIO: the scratch was in use */
                t->wrong += (a != 0) + (b != -ENOENT) + (c != 2);
        }
        regex_scratch_free(scratch);
        return NULL;
}

START_TEST(test_threads) {
        RegexSet *small = NULL, *big = NULL;
        SearchThread loop, worker;
        pthread_t th;

        ck_assert_int_eq(regex_set_new((char *[]){"--data=/[a-z]+/db", NULL}, &small, NULL, NULL), 0);
        ck_assert_int_eq(
                regex_set_new(
                        (char *[]){"^nginx", "worker [0-9]+$", "--port [0-9]{4}$", "(a|b)*c{3,9}d", NULL},
                        &big, NULL, NULL),
                0);
        loop = (SearchThread){.small = small, .big = big, .own_scratch = false};
        worker = (SearchThread){.small = small, .big = big, .own_scratch = true};
        ck_assert_int_eq(pthread_create(&th, NULL, search_thread, &worker), 0);
        (void)search_thread(&loop);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
        ck_assert_int_eq(loop.error, 0);
        ck_assert_int_eq(worker.error, 0);
        ck_assert_uint_eq(loop.wrong, 0);
        ck_assert_uint_eq(worker.wrong, 0);
        regex_set_free(small);
        regex_set_free(big);
}
END_TEST

int main(void) {
        Suite *s = suite_create("regex-set");
        TCase *tc = tcase_create("regex-set");
        SRunner *sr;
        int failed;

        tcase_add_loop_test(tc, test_cases, 0, ELEMENTSOF(cases));
        tcase_add_test(tc, test_differential);
        tcase_add_test(tc, test_first_pattern);
        tcase_add_test(tc, test_invalid);
        tcase_add_test(tc, test_expansion);
        tcase_add_test(tc, test_empty_ways);
        tcase_add_test(tc, test_hostile);
        tcase_add_test(tc, test_threads);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
