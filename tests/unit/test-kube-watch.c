/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/kube-watch.c: which new records of a fixture /var/log/containers reach the handler, on
 * a real inotify fd: names in bursts, the directory made after the watch, and the bound. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "kube-watch.h"
#include "macro.h"
#include "tmpdir.h"

#define WAIT_USEC (5 * 1000 * 1000)

typedef struct Seen {
        unsigned calls;
        char **names; /* of every call, in order */
        bool overflow;
} Seen;

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void on_records(KubeWatch *w, char **names, bool overflow, void *userdata) {
        Seen *s = userdata;

        s->calls++;
        s->overflow |= overflow;
        STRV_FOREACH (n, names)
                ck_assert_int_eq(strv_extendf(&s->names, "%s", *n), 0);
}

/* Runs e until the handler has run once more than before, then for the longest debounce delay
 * more (nothing else comes). */
static void wait_call(sd_event *e, Seen *s, const char *what) {
        unsigned before = s->calls;
        uint64_t deadline = now_usec() + WAIT_USEC, quiet;

        while (s->calls == before) {
                ck_assert_msg(now_usec() < deadline, "no call after %s", what);
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        }
        quiet = now_usec() + KUBE_WATCH_MAX_DELAY_USEC;
        while (now_usec() < quiet)
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        ck_assert_uint_eq(s->calls, before + 1);
}

static void link_record(const char *dir, const char *name) {
        char path[1024];

        snprintf(path, sizeof path, "%s/%s", dir, name);
        ck_assert_int_eq(symlink("/var/log/pods/ns_pod_uid/c/0.log", path), 0);
}

START_TEST(test_names_and_bound) {
        _cleanup_free_ char *root = make_tmpdir_named("test-kube-watch");
        char logdir[512], dir[512];
        sd_event *e = NULL;
        KubeWatch *w = NULL;
        Seen s = {};

        snprintf(logdir, sizeof logdir, "%s/var/log", root);
        snprintf(dir, sizeof dir, "%s/var/log/containers", root);
        mkdir_p(logdir);
        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(kube_watch_new(e, root, on_records, &s, &w), 0);

        /* The directory made after the watch: everything in it is new. */
        mkdir_p(dir);
        wait_call(e, &s, "mkdir containers");
        ck_assert(s.overflow);
        s.overflow = false;

        /* A burst of two records: one call with both names. */
        link_record(dir, "a_ns_c-1.log");
        link_record(dir, "b_ns_c-2.log");
        wait_call(e, &s, "two records");
        ck_assert(!s.overflow);
        ck_assert_uint_eq(strv_length(s.names), 2);
        ck_assert_str_eq(s.names[0], "a_ns_c-1.log");
        ck_assert_str_eq(s.names[1], "b_ns_c-2.log");

        /* A rename into it (an atomic replace) counts; a removal does not. */
        {
                char tmp[1024], to[1024];

                snprintf(tmp, sizeof tmp, "%s/c_ns_c-3.log", logdir);
                snprintf(to, sizeof to, "%s/c_ns_c-3.log", dir);
                ck_assert_int_eq(symlink("/var/log/pods/x/0.log", tmp), 0);
                ck_assert_int_eq(rename(tmp, to), 0);
        }
        {
                char gone[1024];

                snprintf(gone, sizeof gone, "%s/a_ns_c-1.log", dir);
                ck_assert_int_eq(unlink(gone), 0);
        }
        wait_call(e, &s, "a rename");
        ck_assert_uint_eq(strv_length(s.names), 3);
        ck_assert_str_eq(s.names[2], "c_ns_c-3.log");

        /* More than the bound in one burst: the names up to it, and overflow. */
        for (unsigned i = 0; i < KUBE_WATCH_MAX_NAMES + 10; i++) {
                char name[64];

                snprintf(name, sizeof name, "p%u_ns_c-%u.log", i, i);
                link_record(dir, name);
        }
        wait_call(e, &s, "a flood of records");
        ck_assert(s.overflow);
        ck_assert_uint_eq(strv_length(s.names), 3 + KUBE_WATCH_MAX_NAMES);

        kube_watch_free(w);
        sd_event_unref(e);
        strv_free(s.names);
        rm_rf(root);
}
END_TEST

/* ROOT/var/log/containers a symlink (the logs on another disk): a record is seen through it,
 * and after the symlink is pointed elsewhere, or replaced by a directory, the records made in
 * what it is now are seen too (the watch follows the name, not the directory it named). */
START_TEST(test_containers_symlink_replaced) {
        _cleanup_free_ char *root = make_tmpdir_named("test-kube-watch");
        char logdir[512], dir[512], a[512], b[512], tmp[512];
        sd_event *e = NULL;
        KubeWatch *w = NULL;
        Seen s = {};

        snprintf(logdir, sizeof logdir, "%s/var/log", root);
        snprintf(dir, sizeof dir, "%s/var/log/containers", root);
        snprintf(a, sizeof a, "%s/var/log/containers.a", root);
        snprintf(b, sizeof b, "%s/var/log/containers.b", root);
        snprintf(tmp, sizeof tmp, "%s/var/log/containers.tmp", root);
        mkdir_p(a);
        mkdir_p(b);
        ck_assert_int_eq(symlink("containers.a", dir), 0);
        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(kube_watch_new(e, root, on_records, &s, &w), 0);

        link_record(dir, "a_ns_c-1.log");
        wait_call(e, &s, "a record through the symlink");
        ck_assert(!s.overflow);
        ck_assert_uint_eq(strv_length(s.names), 1);

        /* Pointed elsewhere, atomically (ln -sfn): everything there is new. */
        ck_assert_int_eq(symlink("containers.b", tmp), 0);
        ck_assert_int_eq(rename(tmp, dir), 0);
        wait_call(e, &s, "the symlink pointed elsewhere");
        ck_assert(s.overflow);
        s.overflow = false;
        link_record(dir, "b_ns_c-2.log");
        wait_call(e, &s, "a record in the new target");
        ck_assert(!s.overflow);
        ck_assert_uint_eq(strv_length(s.names), 2);
        ck_assert_str_eq(s.names[1], "b_ns_c-2.log");

        /* The symlink removed, a directory made in its place. */
        ck_assert_int_eq(unlink(dir), 0);
        mkdir_p(dir);
        wait_call(e, &s, "the symlink replaced by a directory");
        ck_assert(s.overflow);
        s.overflow = false;
        link_record(dir, "c_ns_c-3.log");
        wait_call(e, &s, "a record in the directory");
        ck_assert(!s.overflow);
        ck_assert_uint_eq(strv_length(s.names), 3);
        ck_assert_str_eq(s.names[2], "c_ns_c-3.log");

        kube_watch_free(w);
        sd_event_unref(e);
        strv_free(s.names);
        rm_rf(root);
}
END_TEST

int main(void) {
        Suite *s = suite_create("kube-watch");
        TCase *tc = tcase_create("watch");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_names_and_bound);
        tcase_add_test(tc, test_containers_symlink_replaced);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
