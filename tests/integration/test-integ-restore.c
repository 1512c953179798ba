/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Restore, on real processes: the originals (affinity and nice) are persisted
 * under the state dir before the first write, and given back
 *  - when a reload removes the policy that placed a process;
 *  - after a daemon restart: the first instance stops (restore-on-exit off, placements kept),
 *    the policy is removed while no daemon runs, and the second instance restores the process
 *    from the state file — to the mask it had before the first instance, not the one it set;
 *  - across a restart that keeps the policy: the second instance takes over the recorded
 *    originals, so a later reload-removal still gives the true originals back;
 *  - at SIGTERM with restore-on-exit: true.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ssize_t l = (ssize_t)strlen(text);

        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        ck_assert_msg(write(fd, text, (size_t)l) == l, "write %s: %s", path, strerror(errno));
        close(fd);
}

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        write_file(path, text);
}

static char *state_dir_arg(Harness *h) {
        char *arg = NULL;

        ck_assert_int_ge(asprintf(&arg, "--state-dir=%s/state", harness_dir(h)), 0);
        return arg;
}

/* The Restores counter (processes given their originals back). */
static uint64_t restores(Harness *h) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t v = 0;
        int r;

        r = sd_bus_get_property_trivial(
                harness_bus(h), AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Restores",
                &error, 't', &v);
        ck_assert_msg(r >= 0, "Get(Restores) failed: %s", strna(error.message));
        sd_bus_error_free(&error);
        return v;
}

static void start_daemon(Harness *h) {
        _cleanup_free_ char *arg = state_dir_arg(h);

        harness_start_daemon_with(h, &(DaemonOptions){.args = ARGS(arg)});
}

static void write_policy(Harness *h, const char *name) {
        harness_write_policy(
                h, "10-keep.yaml",
                "policies:\n"
                "  - name: keep\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "    scheduler: {nice: 5}\n",
                name);
}

static Child *spawn(Harness *h, const char *name) {
        Child *c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "2"),
                        .initial_cpus = "0",
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        return c;
}

/* Field 22 (starttime) of /proc/PID/stat. */
static unsigned long long read_starttime(pid_t pid) {
        char path[64], buf[1024], *p;
        unsigned long long v = 0;
        FILE *f;

        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        f = fopen(path, "re");
        ck_assert_msg(f, "open %s: %s", path, strerror(errno));
        ck_assert(fgets(buf, sizeof buf, f));
        fclose(f);
        p = strrchr(buf, ')');
        ck_assert(p);
        /* after ") ": field 3 is the first; 22 is the 20th from there */
        p += 2;
        for (int i = 3; i < 22; i++) {
                p = strchr(p, ' ');
                ck_assert(p);
                p++;
        }
        ck_assert_int_eq(sscanf(p, "%llu", &v), 1);
        return v;
}

static char *state_file(Harness *h, pid_t pid) {
        char *path = NULL;

        ck_assert_int_ge(
                asprintf(&path, "%s/state/processes/%d-%llu", harness_dir(h), (int)pid, read_starttime(pid)),
                0);
        return path;
}

/* Every thread of pid has nice value `nice` (field 19 of /proc/PID/task/TID/stat). */
static void assert_nice(pid_t pid, long nice, unsigned min_threads) {
        _cleanup_free_ TaskInfo *tasks = NULL;
        int n = harness_read_tasks(pid, &tasks);

        ck_assert_int_ge(n, (int)min_threads);
        for (int i = 0; i < n; i++) {
                char path[96], buf[1024], *p;
                long v = 0;
                FILE *f;

                snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tasks[i].tid);
                f = fopen(path, "re");
                ck_assert_msg(f, "open %s: %s", path, strerror(errno));
                ck_assert(fgets(buf, sizeof buf, f));
                fclose(f);
                p = strrchr(buf, ')') + 2;
                for (int k = 3; k < 19; k++)
                        p = strchr(p, ' ') + 1;
                ck_assert_int_eq(sscanf(p, "%ld", &v), 1);
                ck_assert_msg(
                        v == nice, "%d thread %d: nice %ld, expected %ld", (int)pid, (int)tasks[i].tid, v,
                        nice);
        }
}

static bool file_exists(const char *path) {
        return access(path, F_OK) == 0;
}

/* The state file of pid holds its original (pre-daemon) mask as the process default. */
static void assert_state_file(Harness *h, pid_t pid, const char *default_prefix) {
        _cleanup_free_ char *path = state_file(h, pid);
        char buf[4096] = "";
        FILE *f = fopen(path, "re");
        size_t k;

        ck_assert_msg(f, "no state file %s: %s", path, strerror(errno));
        k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        ck_assert_msg(
                strstr(buf, default_prefix), "state file %s:\n%s\nlacks \"%s\"", path, buf, default_prefix);
}

START_TEST(test_restore_reload_removal) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *path = NULL;
        Child *c;
        int r;

        write_policy(h, a);
        start_daemon(h);
        c = spawn(h, a);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        /* Nice 0 is the 3rd number of the SCHED part: "default 0 <policy> <prio> 0 ..." */
        assert_state_file(h, c->pid, "\ndefault 0 0 0 0 ");
        path = state_file(h, c->pid);

        harness_remove_policy(h, "10-keep.yaml");
        r = harness_reload(h, &error);
        ck_assert_msg(r >= 0, "Reload failed: %s: %s", strna(error.name), strna(error.message));
        harness_assert_process_cpus_now(c->pid, "0", 3);
        assert_nice(c->pid, 0, 3);
        ck_assert_msg(!file_exists(path), "state file %s left after the restore", path);
}
END_TEST

START_TEST(test_restore_after_restart) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *path = NULL;
        Child *c;

        write_policy(h, a);
        start_daemon(h);
        c = spawn(h, a);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);

        /* restore-on-exit is off: the placement survives the daemon, its originals in the file. */
        harness_stop_daemon(h);
        harness_assert_process_cpus_now(c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        assert_state_file(h, c->pid, "\ndefault 0 ");
        path = state_file(h, c->pid);

        /* Policy removed while no daemon runs: the next instance restores it from the file. */
        harness_remove_policy(h, "10-keep.yaml");
        start_daemon(h);
        harness_assert_process_cpus_now(c->pid, "0", 3); /* before READY=1 */
        assert_nice(c->pid, 0, 3);
        ck_assert_msg(!file_exists(path), "state file %s left after the restore", path);
        harness_wait_log(h, "no longer matches a policy: restored the originals");
        /* Counted like any other restore. */
        ck_assert_uint_eq(restores(h), 1);
}
END_TEST

START_TEST(test_restart_keeps_true_originals) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *path = NULL;
        Child *c;
        int r;

        write_policy(h, a);
        start_daemon(h);
        c = spawn(h, a);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_stop_daemon(h);

        /* Same policy: the second instance keeps the placement (no write needed) and the
         * originals of the file, not the masks the first instance set. */
        start_daemon(h);
        harness_assert_process_cpus_now(c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        assert_state_file(h, c->pid, "\ndefault 0 ");
        path = state_file(h, c->pid);

        harness_remove_policy(h, "10-keep.yaml");
        r = harness_reload(h, &error);
        ck_assert_msg(r >= 0, "Reload failed: %s: %s", strna(error.name), strna(error.message));
        harness_assert_process_cpus_now(c->pid, "0", 3);
        assert_nice(c->pid, 0, 3);
        ck_assert_msg(!file_exists(path), "state file %s left after the restore", path);
}
END_TEST

START_TEST(test_restore_on_exit) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *path = NULL;
        Child *c;

        write_settings(h, "restore-on-exit: true\n");
        write_policy(h, a);
        start_daemon(h);
        c = spawn(h, a);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        path = state_file(h, c->pid);
        ck_assert_msg(file_exists(path), "no state file %s", path);

        harness_stop_daemon(h);
        harness_assert_process_cpus_now(c->pid, "0", 3);
        assert_nice(c->pid, 0, 3);
        ck_assert_msg(!file_exists(path), "state file %s left after restore-on-exit", path);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-restore");

        harness_add_test(s, test_restore_reload_removal);
        harness_add_test(s, test_restore_after_restart);
        harness_add_test(s, test_restart_keeps_true_originals);
        harness_add_test(s, test_restore_on_exit);
        return harness_main(s);
}
