/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the comm index (lib/match-index.c) on hand-made policy plans: where each kind of
 * comm: entry goes, the candidates of a comm in file order and each once, escaped and long
 * patterns, explicit-only lookups and pending policies left out. match_process() on top of it is
 * tested in test-match.c.
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "match-index.h"
#include "plan.h"
#include "policy.h"

#define STRV(...)         ((char *[]){__VA_ARGS__, NULL})
#define MAX_TEST_POLICIES 16

typedef struct TestPolicies {
        Policy policies[MAX_TEST_POLICIES];
        PolicyPlan pps[MAX_TEST_POLICIES];
        size_t n;
} TestPolicies;

/* Adds a policy with comm: comm (NULL: no comm: key), pending when pending is set. */
static void add(TestPolicies *t, char **comm, const char *pending) {
        ck_assert_uint_lt(t->n, MAX_TEST_POLICIES);
        t->policies[t->n] = (Policy){.name = (char *)"p", .match.comm = comm};
        t->pps[t->n] = (PolicyPlan){.policy = &t->policies[t->n], .pending_reason = (char *)pending};
        t->n++;
}

static MatchIndex *build(const TestPolicies *t) {
        MatchIndex *x = NULL;

        ck_assert_int_eq(match_index_new(t->pps, t->n, &x), 0);
        ck_assert_ptr_nonnull(x);
        return x;
}

/* The candidates of x for comm, as "0,2,5" ("" for none). */
static char *candidates(const MatchIndex *x, const char *comm, bool explicit_only) {
        MatchCandidates c;
        char *s = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&s, &size);
        int k, prev = -1;

        ck_assert_ptr_nonnull(f);
        match_index_candidates(x, comm, explicit_only, &c);
        while ((k = match_candidates_next(&c)) >= 0) {
                ck_assert_int_gt(k, prev); /* ascending, each once */
                fprintf(f, "%s%d", prev < 0 ? "" : ",", k);
                prev = k;
        }
        ck_assert_int_eq(k, -ENOENT);
        ck_assert_int_eq(match_candidates_next(&c), -ENOENT); /* and stays done */
        ck_assert_int_eq(fclose(f), 0);
        return s;
}

#define assert_candidates(x, comm, explicit_only, expect) \
        do { \
                _cleanup_free_ char *_got = candidates(x, comm, explicit_only); \
                ck_assert_msg( \
                        streq(_got, expect), "comm \"%s\"%s: candidates \"%s\", expected \"%s\"", comm, \
                        explicit_only ? " (explicit only)" : "", _got, expect); \
        } while (0)

/* How many entries each list of x has. */
static void assert_sizes(const MatchIndex *x, size_t n_exact, size_t n_prefix, size_t n_always) {
        ck_assert_msg(
                x->n_exact == n_exact && x->n_prefix == n_prefix && x->n_always == n_always,
                "lists of %zu, %zu, %zu entries, expected %zu, %zu, %zu", x->n_exact, x->n_prefix,
                x->n_always, n_exact, n_prefix, n_always);
}

/* Each kind of entry in its list; the candidates merged in file order. */
START_TEST(test_kinds) {
        TestPolicies t = {};

        add(&t, STRV("nginx"), NULL);                /* 0 exact */
        add(&t, NULL, NULL);                         /* 1 always: no comm: key */
        add(&t, STRV("pg*"), NULL);                  /* 2 prefix "pg" */
        add(&t, STRV("*worker"), NULL);              /* 3 always: no literal prefix */
        add(&t, STRV("postgres"), NULL);             /* 4 exact */
        add(&t, STRV("p?stgres", "nginx"), NULL);    /* 5 prefix "p", exact */
        add(&t, STRV("kworker/*", "[k]*"), NULL);    /* 6 always: one glob has no prefix */
        add(&t, STRV("postgres", "postgres"), NULL); /* 7 exact, twice */
        add(&t, STRV("*x", "nginx"), NULL);          /* 8 always, and exact for explicit-only */
        _cleanup_(match_index_freep) MatchIndex *x = build(&t);

        assert_sizes(x, 6, 2, 4); /* not 6's "kworker/" */
        ck_assert_uint_eq(x->prefix_lengths, (1U << 1) | (1U << 2));
        ck_assert(match_index_uses_comm(x));

        assert_candidates(x, "nginx", false, "0,1,3,5,6,8");
        assert_candidates(x, "postgres", false, "1,3,4,5,6,7,8"); /* not "pg*" */
        assert_candidates(x, "pg", false, "1,2,3,5,6,8");
        assert_candidates(x, "p", false, "1,3,5,6,8");
        assert_candidates(x, "bash", false, "1,3,6,8");
        assert_candidates(x, "", false, "1,3,6,8");

        /* Explicit only: the literal names, nothing else. */
        assert_candidates(x, "postgres", true, "4,7");
        assert_candidates(x, "nginx", true, "0,5,8");
        assert_candidates(x, "pg", true, "");
        assert_candidates(x, "kworker/0:1", true, "");
}
END_TEST

/* A literal prefix ends at the first special character, a backslash included. */
START_TEST(test_escaped_prefix) {
        TestPolicies t = {};

        add(&t, STRV("a\\*b*"), NULL); /* 0 prefix "a" */
        add(&t, STRV("ab\\?"), NULL);  /* 1 prefix "ab": not a literal name */
        add(&t, STRV("\\x"), NULL);    /* 2 always */
        add(&t, STRV("ab[c]d"), NULL); /* 3 prefix "ab" */
        add(&t, STRV("ab?"), NULL);    /* 4 prefix "ab" */
        _cleanup_(match_index_freep) MatchIndex *x = build(&t);

        assert_sizes(x, 0, 4, 1);
        assert_candidates(x, "a*bc", false, "0,2");
        assert_candidates(x, "ab?", false, "0,1,2,3,4");
        assert_candidates(x, "abcd", false, "0,1,2,3,4");
        assert_candidates(x, "b", false, "2");
        /* "ab\\?" names no process literally. */
        assert_candidates(x, "ab?", true, "");
        ck_assert(match_index_uses_comm(x));
}
END_TEST

/* Comms shorter and longer than the prefixes, and entries too long for any comm. */
START_TEST(test_lengths) {
        TestPolicies t = {};

        add(&t, STRV("kworker/*"), NULL);             /* 0 prefix, 8 bytes */
        add(&t, STRV("averyveryverylo*"), NULL);      /* 1 prefix of 15 bytes: kept */
        add(&t, STRV("averyveryverylon*"), NULL);     /* 2 prefix of 16 bytes: left out */
        add(&t, STRV("averyveryverylongname"), NULL); /* 3 a name of 21 bytes: left out */
        add(&t, STRV("averyveryverylo"), NULL);       /* 4 exact, 15 bytes */
        add(&t, STRV("k*"), NULL);                    /* 5 prefix, 1 byte */
        _cleanup_(match_index_freep) MatchIndex *x = build(&t);

        assert_sizes(x, 1, 3, 0);
        assert_candidates(x, "kworker/0:1", false, "0,5");
        assert_candidates(x, "kworker/", false, "0,5");
        assert_candidates(x, "kworker", false, "5"); /* shorter than the prefix */
        assert_candidates(x, "k", false, "5");
        assert_candidates(x, "averyveryverylo", false, "1,4");
        assert_candidates(x, "averyveryveryl", false, "");
        /* At most 15 bytes of a comm count (a kernel comm has no more). */
        assert_candidates(x, "averyveryverylongname", false, "1,4");
}
END_TEST

/* Pending policies and plans without a policy are left out; an index of none has no candidates. */
START_TEST(test_pending_and_empty) {
        TestPolicies t = {};

        add(&t, STRV("nginx"), "pending");
        add(&t, NULL, "pending");
        add(&t, STRV("ng*"), "pending");
        add(&t, STRV("nginx"), NULL);
        t.pps[t.n++] = (PolicyPlan){}; /* no Policy */
        _cleanup_(match_index_freep) MatchIndex *x = build(&t);

        assert_sizes(x, 1, 0, 0);
        assert_candidates(x, "nginx", false, "3");
        assert_candidates(x, "nginx", true, "3");

        _cleanup_(match_index_freep) MatchIndex *none = NULL;
        ck_assert_int_eq(match_index_new(NULL, 0, &none), 0);
        ck_assert(!match_index_uses_comm(none));
        assert_candidates(none, "nginx", false, "");

        /* Only policies without comm: keys: every one is always tried; the comm is not needed. */
        TestPolicies u = {};
        add(&u, NULL, NULL);
        add(&u, STRV("*"), NULL);
        _cleanup_(match_index_freep) MatchIndex *all = build(&u);
        ck_assert(!match_index_uses_comm(all));
        assert_candidates(all, "", false, "0,1");
        assert_candidates(all, "", true, "");

        ck_assert_ptr_null(match_index_free(NULL));
}
END_TEST

/* Many policies under one prefix and one name: every one, in order. */
START_TEST(test_runs) {
        char **name = STRV("db"), **glob = STRV("d*"), **both = STRV("db*", "db");
        TestPolicies t = {};

        for (size_t i = 0; i < MAX_TEST_POLICIES; i++)
                add(&t, i % 3 == 0 ? name : i % 3 == 1 ? glob : both, NULL);
        _cleanup_(match_index_freep) MatchIndex *x = build(&t);

        assert_candidates(x, "db", false, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
        assert_candidates(x, "dx", false, "1,4,7,10,13");
        assert_candidates(x, "db", true, "0,2,3,5,6,8,9,11,12,14,15");
}
END_TEST

int main(void) {
        Suite *s = suite_create("match-index");
        TCase *tc = tcase_create("index");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_kinds);
        tcase_add_test(tc, test_escaped_prefix);
        tcase_add_test(tc, test_lengths);
        tcase_add_test(tc, test_pending_and_empty);
        tcase_add_test(tc, test_runs);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? 0 : 1;
}
