/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of daemon/cpuset-watch.c on a fixture tree (ROOT/proc/PID/cgroup and
 * ROOT/sys/fs/cgroup/...), no root needed: which directories a process's membership adds, that
 * a burst of cpuset writes runs the handler once and only after the debounce, that other files'
 * writes run nothing, and that a removed cgroup's watch is dropped and can be added again.
 * inotify reports writes to a tmpfs file as it does to a cgroupfs one (IN_MODIFY on the
 * directory's watch).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "cpuset-watch.h"
#include "macro.h"
#include "util.h"

#define WAIT_USEC (5 * 1000 * 1000)

static char *root;

typedef struct Calls {
        unsigned n;
        char last_dir[4096];
} Calls;

static void on_change(CpusetWatch *w, const char *dir, void *userdata) {
        Calls *c = userdata;

        c->n++;
        snprintf(c->last_dir, sizeof(c->last_dir), "%s", dir);
}

static void mkdir_p(const char *rel) {
        char buf[4096];

        ck_assert_int_lt(snprintf(buf, sizeof(buf), "%s/%s", root, rel), (int)sizeof(buf));
        for (char *p = buf + strlen(root) + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
                        *p = '/';
                }
        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

/* Writes s to ROOT/rel (its directory must exist), as a cgroupfs write would: open, write, close. */
static void put(const char *rel, const char *s) {
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_msg(fd >= 0, "%s: %m", path);
        ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
        ck_assert_int_eq(close(fd), 0);
}

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

static void setup(void) {
        char tmpl[] = "/tmp/test-cpuset-watch-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        root = strdup(tmpl);
        ck_assert_ptr_nonnull(root);
        /* cgroup v2 with the cpuset controller; web and db in system.slice. */
        mkdir_p("sys/fs/cgroup/system.slice/web.service");
        mkdir_p("sys/fs/cgroup/system.slice/db.service");
        put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory\n");
        put("sys/fs/cgroup/system.slice/web.service/cpuset.cpus", "\n");
        put("sys/fs/cgroup/system.slice/db.service/cpuset.cpus", "\n");
        mkdir_p("proc/100");
        mkdir_p("proc/101");
        mkdir_p("proc/102");
        put("proc/100/cgroup", "0::/system.slice/web.service\n");
        put("proc/101/cgroup", "0::/system.slice/web.service\n");
        put("proc/102/cgroup", "0::/system.slice/db.service\n");
}

static void teardown(void) {
        ck_assert_int_eq(nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS), 0);
        root = mfree(root);
}

/* Runs e until c has seen n calls; fails after WAIT_USEC. */
static void run_until_calls(sd_event *e, const Calls *c, unsigned n) {
        uint64_t deadline = now_monotonic_usec() + WAIT_USEC;

        while (c->n < n) {
                ck_assert_msg(now_monotonic_usec() < deadline, "timed out waiting for call %u", n);
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        }
}

/* Runs e for usec µs whatever happens. */
static void run_for(sd_event *e, uint64_t usec) {
        uint64_t end = now_monotonic_usec() + usec;

        while (now_monotonic_usec() < end)
                ck_assert_int_ge(sd_event_run(e, 20 * 1000), 0);
}

static char *under_root(const char *rel) {
        char *s = NULL;

        ck_assert_int_ge(asprintf(&s, "%s/%s", root, rel), 0);
        return s;
}

static CpusetWatch *new_watch(sd_event *e, Calls *c) {
        CpusetWatch *w = NULL;

        ck_assert_int_eq(cpuset_watch_new(e, 0, root, on_change, c, &w), 0);
        ck_assert_ptr_nonnull(w);
        return w;
}

/* A process's own cgroup and each ancestor are watched once; the same membership adds nothing;
 * a sibling cgroup adds only itself. */
START_TEST(test_membership) {
        sd_event *e = NULL;
        Calls c = {};
        CpusetWatch *w;

        ck_assert_int_eq(sd_event_new(&e), 0);
        w = new_watch(e, &c);
        ck_assert_uint_eq(cpuset_watch_count(w), 0);
        ck_assert_int_eq(cpuset_watch_add_process(w, 100), 1);
        ck_assert_uint_eq(cpuset_watch_count(w), 3); /* web.service, system.slice, the root */
        ck_assert_int_eq(cpuset_watch_add_process(w, 101), 0);
        ck_assert_int_eq(cpuset_watch_add_process(w, 100), 0);
        ck_assert_uint_eq(cpuset_watch_count(w), 3);
        ck_assert_int_eq(cpuset_watch_add_process(w, 102), 1);
        ck_assert_uint_eq(cpuset_watch_count(w), 4);
        /* A process that is gone. */
        ck_assert_int_eq(cpuset_watch_add_process(w, 999), -ESRCH);
        ck_assert_uint_eq(cpuset_watch_count(w), 4);
        /* A process in no cpuset hierarchy (v1 without cpuset): nothing to watch, not an error. */
        mkdir_p("proc/103");
        put("proc/103/cgroup", "1:name=systemd:/\n");
        put("sys/fs/cgroup/cgroup.controllers", "cpu io memory\n");
        ck_assert_int_eq(cpuset_watch_add_process(w, 103), 0);
        ck_assert_uint_eq(cpuset_watch_count(w), 4);
        /* NULL is a watch of nothing. */
        ck_assert_int_eq(cpuset_watch_add_process(NULL, 100), 0);
        ck_assert_uint_eq(cpuset_watch_count(NULL), 0);
        ck_assert_ptr_null(cpuset_watch_free(w));
        sd_event_unref(e);
}
END_TEST

/* Five writes to cpuset.cpus in a row run the handler once, naming the directory; a write to
 * the parent's cgroup.subtree_control runs it again; writes to other files run nothing. */
START_TEST(test_burst) {
        _cleanup_free_ char *web = under_root("sys/fs/cgroup/system.slice/web.service"),
                            *slice = under_root("sys/fs/cgroup/system.slice");
        sd_event *e = NULL;
        Calls c = {};
        CpusetWatch *w;

        ck_assert_int_eq(sd_event_new(&e), 0);
        w = new_watch(e, &c);
        ck_assert_int_eq(cpuset_watch_add_process(w, 100), 1);

        for (unsigned i = 0; i < 5; i++)
                put("sys/fs/cgroup/system.slice/web.service/cpuset.cpus", i % 2 ? "0\n" : "0-1\n");
        run_until_calls(e, &c, 1);
        ck_assert_str_eq(c.last_dir, web);
        run_for(e, 3 * CPUSET_WATCH_DEBOUNCE_USEC);
        ck_assert_uint_eq(c.n, 1);

        put("sys/fs/cgroup/system.slice/cgroup.subtree_control", "+cpuset\n");
        run_until_calls(e, &c, 2);
        ck_assert_str_eq(c.last_dir, slice);

        /* Not files that move CPUs; and a directory not watched (db.service). */
        put("sys/fs/cgroup/system.slice/web.service/memory.max", "max\n");
        put("sys/fs/cgroup/system.slice/db.service/cpuset.cpus", "1\n");
        run_for(e, 3 * CPUSET_WATCH_DEBOUNCE_USEC);
        ck_assert_uint_eq(c.n, 2);

        /* Moving a task in (cgroup.procs) can reset it too. */
        put("sys/fs/cgroup/system.slice/web.service/cgroup.procs", "100\n");
        run_until_calls(e, &c, 3);
        ck_assert_str_eq(c.last_dir, web);

        ck_assert_ptr_null(cpuset_watch_free(w));
        sd_event_unref(e);
}
END_TEST

/* Writes without pause can't hold the handler back past CPUSET_WATCH_MAX_DELAY_USEC: it runs
 * while they go on. */
START_TEST(test_endless_burst) {
        sd_event *e = NULL;
        Calls c = {};
        CpusetWatch *w;
        uint64_t end;

        ck_assert_int_eq(sd_event_new(&e), 0);
        w = new_watch(e, &c);
        ck_assert_int_eq(cpuset_watch_add_process(w, 100), 1);
        end = now_monotonic_usec() + 2 * CPUSET_WATCH_MAX_DELAY_USEC + CPUSET_WATCH_DEBOUNCE_USEC;
        while (now_monotonic_usec() < end && c.n == 0) {
                /* a write every fifth of the debounce: never quiet for long enough */
                put("sys/fs/cgroup/system.slice/web.service/cpuset.cpus", "0\n");
                ck_assert_int_ge(sd_event_run(e, CPUSET_WATCH_DEBOUNCE_USEC / 5), 0);
        }
        ck_assert_uint_ge(c.n, 1);
        ck_assert_ptr_null(cpuset_watch_free(w));
        sd_event_unref(e);
}
END_TEST

/* A watched cgroup removed is forgotten (its parent reports IN_DELETE, or its own watch
 * IN_IGNORED); made again under the same path, it is watched again. */
START_TEST(test_removed_cgroup) {
        _cleanup_free_ char *db = under_root("sys/fs/cgroup/system.slice/db.service"),
                            *cpus = under_root("sys/fs/cgroup/system.slice/db.service/cpuset.cpus");
        sd_event *e = NULL;
        Calls c = {};
        CpusetWatch *w;
        uint64_t deadline;

        ck_assert_int_eq(sd_event_new(&e), 0);
        w = new_watch(e, &c);
        ck_assert_int_eq(cpuset_watch_add_process(w, 100), 1);
        ck_assert_int_eq(cpuset_watch_add_process(w, 102), 1);
        ck_assert_uint_eq(cpuset_watch_count(w), 4);

        ck_assert_int_eq(unlink(cpus), 0);
        ck_assert_int_eq(rmdir(db), 0);
        deadline = now_monotonic_usec() + WAIT_USEC;
        while (cpuset_watch_count(w) != 3) {
                ck_assert_msg(now_monotonic_usec() < deadline, "the removed cgroup is still watched");
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        }
        /* Removing a cgroup is not a cpuset write. */
        run_for(e, 3 * CPUSET_WATCH_DEBOUNCE_USEC);
        ck_assert_uint_eq(c.n, 0);

        mkdir_p("sys/fs/cgroup/system.slice/db.service");
        ck_assert_int_eq(cpuset_watch_add_process(w, 102), 1);
        ck_assert_uint_eq(cpuset_watch_count(w), 4);
        put("sys/fs/cgroup/system.slice/db.service/cpuset.cpus", "1\n");
        run_until_calls(e, &c, 1);
        ck_assert_str_eq(c.last_dir, db);

        ck_assert_ptr_null(cpuset_watch_free(w));
        sd_event_unref(e);
}
END_TEST

START_TEST(test_invalid) {
        sd_event *e = NULL;
        CpusetWatch *w = NULL;
        Calls c = {};

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(cpuset_watch_new(NULL, 0, root, on_change, &c, &w), -EINVAL);
        ck_assert_int_eq(cpuset_watch_new(e, 0, root, NULL, &c, &w), -EINVAL);
        ck_assert_int_eq(cpuset_watch_new(e, 0, root, on_change, &c, NULL), -EINVAL);
        ck_assert_ptr_null(w);
        ck_assert_ptr_null(cpuset_watch_free(NULL));
        sd_event_unref(e);
}
END_TEST

int main(void) {
        Suite *s = suite_create("cpuset-watch");
        TCase *tc = tcase_create("fixture");
        SRunner *sr;
        int failed;

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_membership);
        tcase_add_test(tc, test_burst);
        tcase_add_test(tc, test_endless_burst);
        tcase_add_test(tc, test_removed_cgroup);
        tcase_add_test(tc, test_invalid);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
