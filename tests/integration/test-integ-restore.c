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
#include "state-journal.h"

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

/* The record of pid in the originals journal (lib/state-journal.h) in the state file format
 * of lib/state.h, newly allocated; NULL when the journal has none. */
static char *journal_record(Harness *h, pid_t pid) {
        _cleanup_free_ char *dir = harness_asprintf("%s/state", harness_dir(h));
        unsigned long long starttime = read_starttime(pid);
        StateProcess *records = NULL;
        char *text = NULL;
        size_t n = 0;

        ck_assert_int_eq(state_journal_read(dir, &records, &n, NULL), 0);
        for (size_t i = 0; i < n; i++)
                if (records[i].pid == pid && records[i].starttime == starttime)
                        ck_assert_int_eq(state_format(&records[i], &text), 0);
        state_process_array_free(records, n);
        return text;
}

/* Waits (bounded) until the journal has no record of pid: a "drop" is written at most a second
 * after the process got its originals back. */
static void wait_no_record(Harness *h, pid_t pid) {
        uint64_t deadline = harness_now_usec() + 10 * 1000 * 1000;
        char *text;

        while ((text = journal_record(h, pid)) && harness_now_usec() < deadline) {
                free(text);
                usleep(20 * 1000);
        }
        ck_assert_msg(!text, "the journal still records %d after the restore:\n%s", (int)pid, text);
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

/* The journal's record of pid holds its original (pre-daemon) mask as the process default. */
static void assert_state_file(Harness *h, pid_t pid, const char *default_prefix) {
        _cleanup_free_ char *text = journal_record(h, pid);

        ck_assert_msg(text, "the originals journal has no record of %d", (int)pid);
        ck_assert_msg(
                strstr(text, default_prefix), "record of %d:\n%s\nlacks \"%s\"", (int)pid, text,
                default_prefix);
}

START_TEST(test_restore_reload_removal) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        Child *c;
        int r;

        write_policy(h, a);
        start_daemon(h);
        c = spawn(h, a);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        /* Nice 0 is the 3rd number of the SCHED part: "default 0 <policy> <prio> 0 ..." */
        assert_state_file(h, c->pid, "\ndefault 0 0 0 0 ");

        harness_remove_policy(h, "10-keep.yaml");
        r = harness_reload(h, &error);
        ck_assert_msg(r >= 0, "Reload failed: %s: %s", strna(error.name), strna(error.message));
        harness_assert_process_cpus_now(c->pid, "0", 3);
        assert_nice(c->pid, 0, 3);
        wait_no_record(h, c->pid);
}
END_TEST

START_TEST(test_restore_after_restart) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        Child *c, *gone;

        write_policy(h, a);
        start_daemon(h);
        c = spawn(h, a);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        /* One more, started later (a higher PID: the journal's last record), gone by the restart:
         * a record of no process any more is forgotten, nothing else. */
        gone = spawn(h, a);
        harness_wait_process_cpus(h, gone->pid, "1", 3);

        /* restore-on-exit is off: the placement survives the daemon, its originals in the file. */
        harness_stop_daemon(h);
        child_kill(gone);
        harness_assert_process_cpus_now(c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        assert_state_file(h, c->pid, "\ndefault 0 ");

        /* Policy removed while no daemon runs: the next instance restores it from the file. */
        harness_remove_policy(h, "10-keep.yaml");
        start_daemon(h);
        harness_assert_process_cpus_now(c->pid, "0", 3); /* before READY=1 */
        assert_nice(c->pid, 0, 3);
        wait_no_record(h, c->pid);
        harness_wait_log(h, "no longer matches a policy: restored the originals");
        /* Counted like any other restore. */
        ck_assert_uint_eq(restores(h), 1);
}
END_TEST

START_TEST(test_restart_keeps_true_originals) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
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

        harness_remove_policy(h, "10-keep.yaml");
        r = harness_reload(h, &error);
        ck_assert_msg(r >= 0, "Reload failed: %s: %s", strna(error.name), strna(error.message));
        harness_assert_process_cpus_now(c->pid, "0", 3);
        assert_nice(c->pid, 0, 3);
        wait_no_record(h, c->pid);
}
END_TEST

START_TEST(test_restore_on_exit) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        Child *c;

        write_settings(h, "restore-on-exit: true\n");
        write_policy(h, a);
        start_daemon(h);
        c = spawn(h, a);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        assert_nice(c->pid, 5, 3);
        assert_state_file(h, c->pid, "\ndefault 0 ");

        harness_stop_daemon(h);
        harness_assert_process_cpus_now(c->pid, "0", 3);
        assert_nice(c->pid, 0, 3);
        {
                _cleanup_free_ char *text = journal_record(h, c->pid);

                ck_assert_msg(!text, "record of %d left after restore-on-exit:\n%s", (int)c->pid, text);
        }
}
END_TEST

/*
 * A daemon killed (SIGKILL: no exit path runs) in the middle of a burst of matching execs, then
 * started again with the policy gone: every process the first one changed gets its original
 * back, whether it was placed, half placed or not reached at all.
 */
START_TEST(test_kill_mid_burst) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *path = harness_asprintf("%s/%s", harness_dir(h), a);
        const char *own = harness_own_cpus(h);
        const unsigned n = 300;
        pid_t pids[300];
        unsigned placed = 0;

        /* exec through a link named like the policy's comm: comm is the name exec'd */
        ck_assert_msg(symlink("/bin/sleep", path) == 0, "symlink %s: %s", path, strerror(errno));
        write_policy(h, a);
        start_daemon(h);
        for (unsigned i = 0; i < n; i++) {
                pids[i] = harness_spawn_quick(h, path, ARGS("600"), false);
                if (i == n / 2)
                        harness_kill_daemon(h);
        }
        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *cpus = harness_read_task_cpus(pids[i], pids[i]);

                if (cpus && streq(cpus, "1"))
                        placed++;
        }
        /* Else the test proves nothing: the first instance must have placed some. */
        ck_assert_msg(placed > 0, "none of the first %u processes was placed before the kill", n / 2);

        harness_remove_policy(h, "10-keep.yaml");
        start_daemon(h);
        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *cpus = harness_read_task_cpus(pids[i], pids[i]);

                ck_assert_msg(cpus, "process %d is gone", (int)pids[i]);
                ck_assert_msg(
                        streq(cpus, own), "process %d (%u of %u) is on %s after the restart, not %s",
                        (int)pids[i], i, n, cpus, own);
                assert_nice(pids[i], 0, 1);
        }
        ck_assert_uint_ge(restores(h), placed);
        printf("kill mid-burst: %u of %u placed before the kill, all restored\n", placed, n);
}
END_TEST

/*
 * An upgrade from an instance that kept a file per process (STATE_DIR/processes/PID-STARTTIME):
 * the new one reads them like journal records, gives a process whose policy is gone its original
 * back, and removes the old files.
 */
START_TEST(test_legacy_state_files) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *dir = harness_asprintf("%s/state", harness_dir(h)),
                            *sub = harness_asprintf("%s/state/processes", harness_dir(h)), *pid_text = NULL;
        _cleanup_(state_process_done) StateProcess s = {};
        Child *c;

        c = spawn(h, a); /* on CPU 0, nice 0 */
        pid_text = harness_asprintf("%d", (int)c->pid);
        /* What the old instance did: recorded the original, then moved it and reniced it. */
        s.pid = c->pid;
        s.starttime = read_starttime(c->pid);
        ck_assert_int_eq(cpuset_parse_list("0", &s.affinity, NULL), 0);
        s.has_affinity = true;
        s.has_sched = true; /* SCHED_OTHER, nice 0, no I/O class */
        ck_assert_int_eq(state_write(dir, &s), 0);
        ck_assert_int_eq(harness_run_quiet(ARGS("taskset", "-a", "-p", "-c", "1", pid_text)), 0);
        harness_assert_process_cpus_now(c->pid, "1", 3);

        start_daemon(h); /* no policy matches it */
        harness_assert_process_cpus_now(c->pid, "0", 3);
        ck_assert_msg(access(sub, F_OK) < 0 && errno == ENOENT, "%s is still there", sub);
        ck_assert_uint_eq(restores(h), 1);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-restore");

        harness_add_test(s, test_restore_reload_removal);
        harness_add_test(s, test_restore_after_restart);
        harness_add_test(s, test_restart_keeps_true_originals);
        harness_add_test(s, test_restore_on_exit);
        harness_add_test(s, test_kill_mid_burst);
        harness_add_test(s, test_legacy_state_files);
        return harness_main(s);
}
