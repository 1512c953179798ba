/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/state-journal.c: the originals journal, its replay, its torn lines and its rewrite. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "tmpdir.h"
#include "state-journal.h"

static char *make_tmpdir(void) {
        return make_tmpdir_named("test-state-journal");
}

static char *journal_text(const char *dir) {
        char path[512], *text = NULL;

        snprintf(path, sizeof path, "%s/" STATE_JOURNAL_NAME, dir);
        ck_assert_int_eq(read_full_file(path, READ_FULL_NO_LIMIT, 0, &text, NULL), 0);
        return text;
}

static void append_text(const char *dir, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof path, "%s/" STATE_JOURNAL_NAME, dir);
        f = fopen(path, "ae");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* A process pid with default mask cpus, nice 0, and (threads > 0) one thread of its own. */
static void sample(StateProcess *s, pid_t pid, uint64_t starttime, const char *cpus, bool thread) {
        *s = (StateProcess){.pid = pid, .starttime = starttime, .has_affinity = true, .has_sched = true};
        ck_assert_int_eq(cpuset_parse_list(cpus, &s->affinity, NULL), 0);
        if (thread) {
                StateThread *t;

                ck_assert_int_eq(state_process_add_thread(s, pid + 1, &t), 0);
                ck_assert_int_eq(cpuset_parse_list("3", &t->affinity, NULL), 0);
                t->has_affinity = true;
        }
}

static void save(StateJournal *j, pid_t pid, uint64_t starttime, const char *cpus, bool thread) {
        _cleanup_(state_process_done) StateProcess s = {};

        sample(&s, pid, starttime, cpus, thread);
        ck_assert_int_eq(state_journal_save(j, &s), 0);
}

/* The replay has exactly the processes of pids[] (in that order, ascending) with masks cpus[]. */
static void assert_replay(const char *dir, size_t n, const pid_t *pids, const char *const *cpus) {
        StateProcess *a = NULL;
        size_t k = 0;

        ck_assert_int_eq(state_journal_read(dir, &a, &k, NULL), 0);
        ck_assert_uint_eq(k, n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *list = NULL;

                ck_assert_int_eq(a[i].pid, pids[i]);
                ck_assert(a[i].has_affinity);
                ck_assert_int_eq(cpuset_format_list(&a[i].affinity, &list), 0);
                ck_assert_str_eq(list, cpus[i]);
        }
        state_process_array_free(a, k);
}

START_TEST(test_save_drop_replay) {
        _cleanup_free_ char *dir = make_tmpdir(), *sub = NULL, *text = NULL;
        StateJournal *j = NULL;
        StateProcess *a = NULL;
        size_t n = 99;

        /* Nothing yet: an empty list, not an error. */
        ck_assert_int_eq(state_journal_read(dir, &a, &n, NULL), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(a);

        /* The directory is created on open. */
        ck_assert_int_ge(asprintf(&sub, "%s/state", dir), 0);
        ck_assert_int_eq(state_journal_open(sub, &j), 0);
        save(j, 300, 7, "0-1", true);
        save(j, 100, 5, "2", false);
        save(j, 200, 6, "1", false);
        /* A later save of the same process replaces the first; a drop forgets it. */
        save(j, 100, 5, "0", false);
        ck_assert_int_eq(state_journal_drop(j, 200, 6), 0);
        ck_assert(state_journal_pending(j));
        /* A drop of another starttime (a reused PID) forgets nothing. */
        ck_assert_int_eq(state_journal_drop(j, 300, 8), 0);

        /* The drops are queued, not written yet: the file still has 200. */
        assert_replay(sub, 3, (pid_t[]){100, 200, 300}, (const char *[]){"0", "1", "0-1"});
        ck_assert_int_eq(state_journal_flush(j), 0);
        ck_assert(!state_journal_pending(j));
        assert_replay(sub, 2, (pid_t[]){100, 300}, (const char *[]){"0", "0-1"});

        /* One record per line, the state file's lines joined by ';'. */
        text = journal_text(sub);
        ck_assert_msg(
                strstr(text,
                       "affinityd-originals 1\nsave process 300 7;default 0-1 0 0 0 0 0 0;thread 301 3 -\n"),
                "%s", text);
        ck_assert_msg(strstr(text, "\ndrop 200 6\ndrop 300 8\n"), "%s", text);
        ck_assert_uint_eq(state_journal_size(j), strlen(text));

        /* Reopened, it appends: the header is not written twice. */
        j = state_journal_free(j);
        ck_assert_int_eq(state_journal_open(sub, &j), 0);
        ck_assert_int_eq(state_journal_drop(j, 100, 5), 0);
        j = state_journal_free(j); /* writes the queued drop */
        free(text);
        text = journal_text(sub);
        ck_assert_ptr_eq(strstr(text, "affinityd-originals"), text);
        ck_assert_ptr_null(strstr(text + 1, "affinityd-originals"));
        assert_replay(sub, 1, (pid_t[]){300}, (const char *[]){"0-1"});
        rm_rf(dir);
}
END_TEST

/* The drops queued before a save go out in the same write, before it. */
START_TEST(test_drops_ride_with_save) {
        _cleanup_free_ char *dir = make_tmpdir(), *text = NULL;
        StateJournal *j = NULL;

        ck_assert_int_eq(state_journal_open(dir, &j), 0);
        save(j, 10, 1, "0", false);
        ck_assert_int_eq(state_journal_drop(j, 10, 1), 0);
        save(j, 11, 1, "1", false);
        ck_assert(!state_journal_pending(j));
        text = journal_text(dir);
        ck_assert_msg(strstr(text, "\ndrop 10 1\nsave process 11 1;"), "%s", text);
        assert_replay(dir, 1, (pid_t[]){11}, (const char *[]){"1"});
        state_journal_free(j);
        rm_rf(dir);
}
END_TEST

/* A last line without its newline (a crash mid-write) is not read, and the next record written
 * starts on a line of its own. Bad lines are reported with the path and line, and skipped. */
START_TEST(test_torn_and_bad_lines) {
        _cleanup_free_ char *dir = make_tmpdir(), *text = NULL;
        _cleanup_strv_free_ char **warnings = NULL;
        StateJournal *j = NULL;
        StateProcess *a = NULL;
        size_t n = 0;

        ck_assert_int_eq(state_journal_open(dir, &j), 0);
        save(j, 10, 1, "0", false);
        j = state_journal_free(j);
        append_text(dir, "bogus line\nsave process 12 1;default 0-x -\ndrop x y\nsave process 13 1;defau");
        /* The torn "13" is not there; the bad lines are skipped, each named. */
        ck_assert_int_eq(state_journal_read(dir, &a, &n, &warnings), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(a[0].pid, 10);
        state_process_array_free(a, n);
        ck_assert_uint_eq(strv_length(warnings), 3);
        ck_assert_msg(strstr(warnings[0], "/originals:3: unknown record"), "%s", warnings[0]);
        ck_assert_msg(strstr(warnings[1], "/originals:4: invalid cpu-list \"0-x\""), "%s", warnings[1]);
        ck_assert_msg(
                strstr(warnings[2], "/originals:5: expected \"drop PID STARTTIME\""), "%s", warnings[2]);

        /* Appending after the torn line: the new record is whole and read. */
        ck_assert_int_eq(state_journal_open(dir, &j), 0);
        save(j, 14, 1, "1", false);
        j = state_journal_free(j);
        warnings = strv_free(warnings);
        ck_assert_int_eq(state_journal_read(dir, &a, &n, &warnings), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(a[1].pid, 14);
        state_process_array_free(a, n);
        ck_assert_uint_eq(strv_length(warnings), 4); /* the torn line is now a bad one */
        text = journal_text(dir);
        ck_assert_msg(strstr(text, ";defau\nsave process 14 1;"), "%s", text);
        rm_rf(dir);
}
END_TEST

/* A write that the file size limit cuts short (SIGXFSZ ignored: EFBIG after a partial write)
 * fails the save; the next journal on the file starts a new line and loses nothing else. */
START_TEST(test_short_write) {
        _cleanup_free_ char *dir = make_tmpdir();
        pid_t pid;
        int status;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                StateJournal *j = NULL;
                StateProcess s = {};
                uint64_t size;

                if (state_journal_open(dir, &j) < 0)
                        _exit(2);
                save(j, 10, 1, "0", false);
                size = state_journal_size(j);
                (void)signal(SIGXFSZ, SIG_IGN);
                if (setrlimit(RLIMIT_FSIZE, &(struct rlimit){size + 10, size + 10}) < 0)
                        _exit(3);
                sample(&s, 11, 1, "0-1", true);
                if (state_journal_save(j, &s) != -EFBIG)
                        _exit(4);
                if (state_journal_size(j) != size + 10)
                        _exit(5);
                /* As a crash: nothing more is written (nothing is queued for the free to flush);
                 * freed only for valgrind's leak check of this child. */
                state_process_done(&s);
                state_journal_free(j);
                free(dir);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %d", status);

        {
                _cleanup_free_ char *text = journal_text(dir);
                StateJournal *j = NULL;

                ck_assert_msg(text[strlen(text) - 1] != '\n', "the write was not cut short: %s", text);
                ck_assert_int_eq(state_journal_open(dir, &j), 0);
                save(j, 12, 1, "1", false);
                state_journal_free(j);
        }
        assert_replay(dir, 2, (pid_t[]){10, 12}, (const char *[]){"0", "1"});
        rm_rf(dir);
}
END_TEST

/* The rewrite keeps exactly what it is given; the journal goes on in the new file. */
START_TEST(test_rewrite) {
        _cleanup_free_ char *dir = make_tmpdir(), *text = NULL;
        StateProcess keep[2] = {};
        StateJournal *j = NULL;
        uint64_t before;

        ck_assert_int_eq(state_journal_open(dir, &j), 0);
        for (pid_t p = 100; p < 20100; p++) {
                save(j, p, 1, "0-1", false);
                ck_assert_int_eq(state_journal_drop(j, p, 1), 0);
        }
        save(j, 5, 1, "1", false);
        ck_assert_int_eq(state_journal_flush(j), 0);
        before = state_journal_size(j);
        ck_assert_uint_gt(before, 1024 * 1024);
        /* 20,000 records written and dropped: with 1 left, it is time; with 10,000 not. */
        ck_assert(state_journal_wants_rewrite(j, 1));
        ck_assert(!state_journal_wants_rewrite(j, 10000));

        sample(&keep[0], 5, 1, "1", false);
        sample(&keep[1], 7, 2, "0", true);
        ck_assert_int_eq(state_journal_drop(j, 5, 1), 0); /* queued, then overtaken */
        ck_assert_int_eq(state_journal_rewrite(j, keep, 2), 0);
        ck_assert(!state_journal_pending(j));
        ck_assert_uint_lt(state_journal_size(j), 200);
        ck_assert(!state_journal_wants_rewrite(j, 0));
        save(j, 9, 1, "0", false);
        assert_replay(dir, 3, (pid_t[]){5, 7, 9}, (const char *[]){"1", "0", "0"});
        text = journal_text(dir);
        ck_assert_uint_eq(state_journal_size(j), strlen(text));
        state_process_done(&keep[0]);
        state_process_done(&keep[1]);
        state_journal_free(j);
        rm_rf(dir);
}
END_TEST

/* A file that is not a journal is an error naming it; a NUL byte spoils only its line. */
START_TEST(test_not_a_journal) {
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL;
        _cleanup_strv_free_ char **warnings = NULL;
        StateProcess *a = NULL;
        size_t n = 0;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/" STATE_JOURNAL_NAME, dir), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs("something else\nsave process 1 1;default 0 -\n", f);
        fclose(f);
        ck_assert_int_eq(state_journal_read(dir, &a, &n, &warnings), -EBADMSG);
        ck_assert_uint_eq(strv_length(warnings), 1);
        ck_assert_msg(
                strstr(warnings[0], "/originals:1: not an affinityd originals journal"), "%s", warnings[0]);
        warnings = strv_free(warnings);
        /* A NUL byte spoils its line only. */
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fwrite("affinityd-originals 1\nsave process 1 1;default 0 -\n\0\0\nsave process 2 1;default 1 -\n",
               1, 83, f);
        fclose(f);
        ck_assert_int_eq(state_journal_read(dir, &a, &n, &warnings), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(a[1].pid, 2);
        state_process_array_free(a, n);
        ck_assert_uint_eq(strv_length(warnings), 1);
        ck_assert_msg(strstr(warnings[0], "/originals:3: contains a NUL byte"), "%s", warnings[0]);
        rm_rf(dir);
}
END_TEST

int main(void) {
        Suite *s = suite_create("state-journal");
        TCase *tc = tcase_create("journal");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_save_drop_replay);
        tcase_add_test(tc, test_drops_ride_with_save);
        tcase_add_test(tc, test_torn_and_bad_lines);
        tcase_add_test(tc, test_short_write);
        tcase_add_test(tc, test_rewrite);
        tcase_add_test(tc, test_not_a_journal);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
