/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of manager_proc_events() (daemon/manager-events.c): which proc connector event
 * types a configuration needs, on configurations parsed from YAML text (so the facts are the
 * loader's), and proc_events_format(). No root, no loop.
 */

#include <check.h>
#include <string.h>

#include "macro.h"
#include "manager-internal.h"
#include "policy-yaml.h"

#define EV(t) PROC_MONITOR_EVENT(PROC_MONITOR_##t)

/* The events manager_proc_events() gives for a rules file of text. */
static unsigned events_of(const char *text) {
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        unsigned events;

        ck_assert_ptr_nonnull(c);
        ck_assert_int_eq(config_parse_string(c, "test.yaml", text, strlen(text), false, &diag), 0);
        events = manager_proc_events(c);
        /* Never a type the monitor can't deliver, never without EXEC and EXIT. */
        ck_assert_uint_eq(events & ~PROC_MONITOR_EVENTS_ALL, 0);
        ck_assert_uint_eq(events & (EV(EXEC) | EV(EXIT)), EV(EXEC) | EV(EXIT));
        return events;
}

/* Nothing loaded, or no policy (device rules only): EXEC and EXIT, nothing else. */
START_TEST(test_no_policy) {
        _cleanup_(config_freep) Config *empty = config_new();

        ck_assert_uint_eq(manager_proc_events(NULL), EV(EXEC) | EV(EXIT));
        ck_assert_ptr_nonnull(empty);
        ck_assert_uint_eq(manager_proc_events(empty), EV(EXEC) | EV(EXIT));
        ck_assert_uint_eq(events_of("policies: []\n"), EV(EXEC) | EV(EXIT));
}
END_TEST

/* Any policy: FORK (children and threads of tracked processes) and COMM (renames of tracked
 * processes and threads), whatever it matches on; no UID without a user: key. */
START_TEST(test_policy_without_user) {
        const unsigned want = EV(EXEC) | EV(EXIT) | EV(FORK) | EV(COMM);

        ck_assert_uint_eq(
                events_of("policies:\n"
                          "  - name: by-exe\n"
                          "    match: {exe: /usr/bin/true}\n"
                          "    cpus: \"0\"\n"),
                want);
        ck_assert_uint_eq(
                events_of("policies:\n"
                          "  - name: by-comm\n"
                          "    match: {comm: nginx}\n"
                          "    cpus: \"0\"\n"),
                want);
        ck_assert_uint_eq(
                events_of("policies:\n"
                          "  - name: threads\n"
                          "    match: {cmdline: \"^java\"}\n"
                          "    threads:\n"
                          "      - name: \"GC*\"\n"
                          "        cpus: \"0\"\n"),
                want);
}
END_TEST

/* A user: key anywhere adds UID; only then. */
START_TEST(test_policy_with_user) {
        ck_assert_uint_eq(
                events_of("policies:\n"
                          "  - name: first\n"
                          "    match: {comm: a}\n"
                          "    cpus: \"0\"\n"
                          "  - name: db\n"
                          "    match: {user: postgres, cmdline: \"^postgres\"}\n"
                          "    cpus: \"0\"\n"),
                EV(EXEC) | EV(EXIT) | EV(FORK) | EV(COMM) | EV(UID));
}
END_TEST

START_TEST(test_format) {
        char buf[64], small[8];

        ck_assert_str_eq(proc_events_format(EV(EXEC) | EV(EXIT), buf, sizeof(buf)), "EXEC EXIT");
        ck_assert_str_eq(
                proc_events_format(PROC_MONITOR_EVENTS_ALL, buf, sizeof(buf)), "FORK EXEC UID COMM EXIT");
        ck_assert_str_eq(proc_events_format(0, buf, sizeof(buf)), "");
        /* Truncated, terminated. */
        ck_assert_str_eq(proc_events_format(PROC_MONITOR_EVENTS_ALL, small, sizeof(small)), "FORK EX");
}
END_TEST

int main(void) {
        Suite *s = suite_create("proc-events");
        TCase *tc = tcase_create("mask");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_no_policy);
        tcase_add_test(tc, test_policy_without_user);
        tcase_add_test(tc, test_policy_with_user);
        tcase_add_test(tc, test_format);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
