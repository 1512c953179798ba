/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/config-watch.c: which changes of a configuration's directories make a reload, on real
 * directories and a real inotify fd. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "config-watch.h"
#include "macro.h"
#include "tmpdir.h"

#define DELAY_USEC (100 * 1000)
#define WAIT_USEC  (5 * 1000 * 1000)

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void on_change(ConfigWatch *w, void *userdata) {
        (*(unsigned *)userdata)++;
}

/* Runs e for 5 debounce delays whatever happens: long enough for a change to have been seen. */
static void run_quiet(sd_event *e) {
        uint64_t end = now_usec() + 5 * DELAY_USEC;

        while (now_usec() < end)
                ck_assert_int_ge(sd_event_run(e, DELAY_USEC), 0);
}

static void write_file(const char *dir, const char *name, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        f = fopen(path, "we");
        ck_assert_msg(f, "%s: %s", path, strerror(errno));
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_relevant) {
        ck_assert(config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_CLOSE_WRITE, "10-db.yaml"));
        ck_assert(config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_MOVED_TO, "..data"));
        ck_assert(config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_CREATE, "..2026_12_01_10_00_00.123"));
        ck_assert(!config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_CLOSE_WRITE, ".10-db.yaml.swp"));
        ck_assert(!config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_CLOSE_WRITE, "10-db.yaml~"));
        ck_assert(!config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_CLOSE_WRITE, ".yaml"));
        ck_assert(!config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_CLOSE_WRITE, ".."));
        ck_assert(config_watch_relevant(CONFIG_WATCH_SETTINGS_DIR, IN_CLOSE_WRITE, "affinityd.yaml"));
        ck_assert(config_watch_relevant(CONFIG_WATCH_SETTINGS_DIR, IN_CREATE, "policy.d"));
        ck_assert(!config_watch_relevant(CONFIG_WATCH_SETTINGS_DIR, IN_CLOSE_WRITE, "10-db.yaml"));
        ck_assert(config_watch_relevant(CONFIG_WATCH_SETTINGS_DIR, IN_DELETE_SELF, NULL));
        ck_assert(config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_Q_OVERFLOW, NULL));
        ck_assert(!config_watch_relevant(CONFIG_WATCH_POLICY_DIR, IN_ATTRIB, NULL));
        /* A file's directory: its name is the watch's to match, not a ConfigMap's. */
        ck_assert(!config_watch_relevant(CONFIG_WATCH_FILE, IN_MOVED_TO, "..data"));
        ck_assert(!config_watch_relevant(CONFIG_WATCH_FILE, IN_MOVED_TO, "cpu_manager_state"));
        ck_assert(config_watch_relevant(CONFIG_WATCH_FILE, IN_DELETE_SELF, NULL));
}
END_TEST

/* Waits for a reload after *seen, lets the burst end, and moves *seen on. */
static void expect_reload(sd_event *e, const unsigned *calls, unsigned *seen, const char *what) {
        uint64_t deadline = now_usec() + WAIT_USEC;

        while (*calls <= *seen) {
                ck_assert_msg(now_usec() < deadline, "no reload after %s", what);
                ck_assert_int_ge(sd_event_run(e, 50 * 1000), 0);
        }
        run_quiet(e);
        *seen = *calls;
}

/* Asserts that nothing is reloaded for what was just done. */
static void expect_none(sd_event *e, const unsigned *calls, unsigned seen, const char *what) {
        run_quiet(e);
        ck_assert_msg(*calls == seen, "%s made %u reloads", what, *calls - seen);
}

START_TEST(test_changes_reload) {
        _cleanup_free_ char *root = make_tmpdir_named("test-config-watch"), *conf = NULL, *pd = NULL,
                            *data = NULL;
        sd_event *e = NULL;
        ConfigWatch *w = NULL;
        unsigned calls = 0, seen = 0;
        char path[512], target[512];

        ck_assert_int_ge(asprintf(&conf, "%s/conf", root), 0);
        ck_assert_int_ge(asprintf(&pd, "%s/conf/policy.d", root), 0);
        ck_assert_int_eq(sd_event_new(&e), 0);
        /* Neither exists yet: watched through root. */
        ck_assert_int_eq(
                config_watch_new(
                        e, (const char *[]){conf, pd},
                        (ConfigWatchKind[]){CONFIG_WATCH_SETTINGS_DIR, CONFIG_WATCH_POLICY_DIR}, 2,
                        DELAY_USEC, on_change, &calls, &w),
                0);
        expect_none(e, &calls, seen, "watching");

        /* The configuration directory created, then its policy.d. */
        ck_assert_int_eq(mkdir(conf, 0755), 0);
        expect_reload(e, &calls, &seen, "creating the configuration directory");
        ck_assert_int_eq(mkdir(pd, 0755), 0);
        expect_reload(e, &calls, &seen, "creating policy.d");

        /* Two policies written at once: one burst, one reload. affinityd.yaml too. */
        write_file(pd, "10-a.yaml", "policies: []\n");
        write_file(pd, "20-b.yaml", "policies: []\n");
        expect_reload(e, &calls, &seen, "writing two policies");
        ck_assert_uint_eq(seen, 3);
        write_file(conf, "affinityd.yaml", "restore-on-exit: true\n");
        expect_reload(e, &calls, &seen, "writing affinityd.yaml");

        /* What a reload doesn't read: nothing. */
        write_file(pd, ".10-a.yaml.swp", "x");
        write_file(pd, "notes.txt", "x");
        write_file(conf, "README", "x");
        expect_none(e, &calls, seen, "editors' and other files");

        /* A removal, a rename into place. */
        snprintf(path, sizeof path, "%s/20-b.yaml", pd);
        ck_assert_int_eq(unlink(path), 0);
        expect_reload(e, &calls, &seen, "removing a policy");
        write_file(pd, ".tmp", "policies: []\n");
        expect_none(e, &calls, seen, "writing a hidden file");
        snprintf(path, sizeof path, "%s/.tmp", pd);
        snprintf(target, sizeof target, "%s/30-c.yaml", pd);
        ck_assert_int_eq(rename(path, target), 0);
        expect_reload(e, &calls, &seen, "renaming a policy into place");

        /* The kubelet's swap of a ConfigMap volume: a new timestamped directory, "..data_tmp"
         * pointing at it renamed over "..data"; the files are links through "..data". */
        ck_assert_int_ge(asprintf(&data, "%s/..2026_12_01_00_00_00.1", pd), 0);
        ck_assert_int_eq(mkdir(data, 0755), 0);
        write_file(data, "40-d.yaml", "policies: []\n");
        expect_reload(e, &calls, &seen, "the kubelet's new directory");
        snprintf(path, sizeof path, "%s/..data_tmp", pd);
        ck_assert_int_eq(symlink("..2026_12_01_00_00_00.1", path), 0);
        snprintf(target, sizeof target, "%s/..data", pd);
        ck_assert_int_eq(rename(path, target), 0);
        expect_reload(e, &calls, &seen, "the kubelet's swap of ..data");

        /* policy.d removed and made again: watched again after the reload of its removal. */
        rm_rf(pd);
        expect_reload(e, &calls, &seen, "removing policy.d");
        ck_assert_int_eq(mkdir(pd, 0755), 0);
        expect_reload(e, &calls, &seen, "making policy.d again");
        write_file(pd, "50-e.yaml", "policies: []\n");
        expect_reload(e, &calls, &seen, "a policy in the new policy.d");

        config_watch_free(w);
        sd_event_unref(e);
        rm_rf(root);
}
END_TEST

/*
 * CONFIG_WATCH_FILE, as for the kubelet's CPU manager state: its directory doesn't exist yet
 * (watched through an ancestor); the kubelet's write (a hidden temporary file renamed over the
 * name) is one change; other files of the directory, and the temporary file alone, are none;
 * a removal is one.
 */
START_TEST(test_file) {
        _cleanup_free_ char *root = make_tmpdir_named("test-config-watch"), *dir = NULL, *file = NULL;
        sd_event *e = NULL;
        ConfigWatch *w = NULL;
        unsigned calls = 0, seen = 0;
        char tmp[512];

        ck_assert_int_ge(asprintf(&dir, "%s/var/lib/kubelet", root), 0);
        ck_assert_int_ge(asprintf(&file, "%s/cpu_manager_state", dir), 0);
        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(
                config_watch_new(
                        e, (const char *[]){file}, (ConfigWatchKind[]){CONFIG_WATCH_FILE}, 1, DELAY_USEC,
                        on_change, &calls, &w),
                0);
        expect_none(e, &calls, seen, "watching");

        /* The kubelet's directory made (a change: the file may be in it), then the kubelet's
         * other files: none. */
        mkdir_p(dir);
        expect_reload(e, &calls, &seen, "making the directory");
        write_file(dir, "memory_manager_state", "{}");
        write_file(dir, ".cpu_manager_state123", "{\"policyName\":\"none\"}");
        expect_none(e, &calls, seen, "other files of the directory");

        /* The temporary file renamed over the name. */
        snprintf(tmp, sizeof tmp, "%s/.cpu_manager_state123", dir);
        ck_assert_int_eq(rename(tmp, file), 0);
        expect_reload(e, &calls, &seen, "renaming over the file");
        /* Written in place, removed. */
        write_file(dir, "cpu_manager_state", "{\"policyName\":\"static\"}");
        expect_reload(e, &calls, &seen, "writing the file");
        ck_assert_int_eq(unlink(file), 0);
        expect_reload(e, &calls, &seen, "removing the file");

        config_watch_free(w);
        sd_event_unref(e);
        rm_rf(root);
}
END_TEST

START_TEST(test_invalid) {
        sd_event *e = NULL;
        ConfigWatch *w = NULL;
        unsigned calls = 0;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(
                config_watch_new(
                        e, (const char *[]){"relative/dir"}, (ConfigWatchKind[]){CONFIG_WATCH_POLICY_DIR}, 1,
                        DELAY_USEC, on_change, &calls, &w),
                -EINVAL);
        ck_assert_int_eq(
                config_watch_new(
                        e, (const char *[]){"/"}, (ConfigWatchKind[]){0}, 0, DELAY_USEC, on_change, &calls,
                        &w),
                -EINVAL);
        /* A file watch needs a file name. */
        ck_assert_int_eq(
                config_watch_new(
                        e, (const char *[]){"/var/lib/kubelet/"}, (ConfigWatchKind[]){CONFIG_WATCH_FILE}, 1,
                        DELAY_USEC, on_change, &calls, &w),
                -EINVAL);
        sd_event_unref(e);
}
END_TEST

int main(void) {
        Suite *s = suite_create("config-watch");
        TCase *tc = tcase_create("config-watch");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_relevant);
        tcase_add_test(tc, test_changes_reload);
        tcase_add_test(tc, test_file);
        tcase_add_test(tc, test_invalid);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
