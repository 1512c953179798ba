/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl top, the way an operator checks placement by hand: a busy thread that a policy
 * pins to CPU 1 shows 0 migrations over the interval and runs on CPU 1; once a competing busy
 * thread is pinned to the same CPU, its run-queue delay over an interval grows (the two
 * --json documents are compared with each other, never with a wall-clock figure).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json-reader.h"
#include "macro.h"

/* The thread object of tid in a top --json document (NULL if not listed). */
static const Json *find_thread(const Json *doc, pid_t tid) {
        const Json *threads = jarray(doc, "threads");

        for (size_t i = 0; i < threads->n_items; i++)
                if (jnum(threads->items[i], "tid") == (unsigned)tid)
                        return threads->items[i];
        return NULL;
}

/* Runs affinityctl --json top once over interval and returns the parsed document. */
static Json *run_top(Harness *h, const char *interval) {
        _cleanup_free_ char *out = NULL, *err = NULL, *arg = NULL;
        int r;

        ck_assert_int_ge(asprintf(&arg, "--interval=%s", interval), 0);
        r = harness_run_ctl(h, &out, &err, "--json", "top", arg, "--iterations=1", NULL);
        ck_assert_msg(r == 0, "affinityctl --json top exited %d: %s", r, err);
        return json_parse_document(out);
}

START_TEST(test_top_pinned_spinner) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(json_freep) Json *doc1 = NULL, *doc2 = NULL;
        _cleanup_free_ char *line = NULL, *line2 = NULL;
        const Json *t, *policy;
        unsigned delay1, delay2, p99_1, p99_2;
        Child *c;
        int spin0 = 0, spin1 = 0;

        harness_write_policy(
                h, "10-spin.yaml",
                "policies:\n"
                "  - name: spin\n"
                "    match: {comm: %s}\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);

        c = harness_spawn(h, &(SpawnOptions){.helper = "integ-spin", .name = name, .pipes = true});
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "ready %d", &spin0) == 1, "integ-spin said \"%s\"", line);
        harness_wait_process_cpus(h, c->pid, "1", 2);
        harness_wait_listed(h, c->pid, "spin");

        /* Alone on CPU 1 (the only busy thread the test put there). */
        doc1 = run_top(h, "0.5");
        ck_assert_uint_gt(jnum(doc1, "interval_usec"), 0);
        t = find_thread(doc1, spin0);
        ck_assert_msg(t, "top does not list the busy thread %d", spin0);
        ck_assert_uint_eq(jnum(t, "pid"), (unsigned)c->pid);
        ck_assert_str_eq(jstr(t, "policy"), "spin");
        ck_assert_str_eq(jstr(t, "comm"), "spin0");
        ck_assert_uint_eq(jnum(t, "cpu"), 1);
        ck_assert_msg(!jnull(t, "migrations"), "this kernel has se.nr_migrations; top says null");
        ck_assert_uint_eq(jnum(t, "migrations"), 0);
        delay1 = jnum(t, "run_delay_usec");
        policy = jfind(jarray(doc1, "policies"), "policy", "spin");
        ck_assert_msg(policy, "top has no summary of the policy spin");
        ck_assert_uint_eq(jnum(policy, "threads"), 2); /* main thread + spin0 */
        ck_assert_uint_eq(jnum(policy, "migrations_per_sec"), 0);
        p99_1 = jnum(policy, "run_delay_p99_usec");

        /* A competitor on the same CPU: the new thread inherits CPU 1, and the daemon places it
         * there too. */
        child_send(c, "spin");
        line2 = child_expect_line(c);
        ck_assert_msg(sscanf(line2, "spinning %d", &spin1) == 1, "integ-spin said \"%s\"", line2);
        harness_wait_process_cpus(h, c->pid, "1", 3);

        doc2 = run_top(h, "0.5");
        t = find_thread(doc2, spin0);
        ck_assert_msg(t, "top does not list the busy thread %d", spin0);
        ck_assert_uint_eq(jnum(t, "cpu"), 1);
        ck_assert_uint_eq(jnum(t, "migrations"), 0); /* pinned: still never moved */
        delay2 = jnum(t, "run_delay_usec");
        ck_assert_msg(
                delay2 > delay1,
                "the run-queue delay of the busy thread did not grow with a competitor on its CPU: "
                "%u us alone, %u us shared",
                delay1, delay2);
        t = find_thread(doc2, spin1);
        ck_assert_msg(t, "top does not list the competing thread %d", spin1);
        ck_assert_uint_eq(jnum(t, "cpu"), 1);
        ck_assert_str_eq(jstr(t, "comm"), "spin1");
        policy = jfind(jarray(doc2, "policies"), "policy", "spin");
        ck_assert_msg(policy, "top has no summary of the policy spin");
        ck_assert_uint_eq(jnum(policy, "threads"), 3);
        p99_2 = jnum(policy, "run_delay_p99_usec");
        ck_assert_msg(
                p99_2 > p99_1, "the policy's run-queue delay p99 did not grow: %u us, then %u us", p99_1,
                p99_2);

        child_kill(c); /* stop burning CPU 1 before the teardown */
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-top");

        harness_add_test(s, test_top_pinned_spinner);
        return harness_main(s);
}
