/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the /proc readers: on fixture trees built per test in a temp dir (fake
 * /proc/PID/{stat,status,comm,cmdline,cgroup,exe,task/...}), and on the real /proc for this
 * test's own process and threads.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpuset.h"
#include "macro.h"
#include "procfs.h"

static char *root; /* the fixture tree of the current test */

static void mkdir_p(const char *path) {
        char buf[PATH_MAX];

        ck_assert_uint_lt(strlen(path), sizeof(buf));
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
                        *p = '/';
                }
        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

/* Writes len bytes of data to ROOT/rel, creating directories. */
static void put(const char *rel, const char *data, size_t len) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        *strrchr(path, '/') = '\0';
        mkdir_p(path);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
        close(fd);
}

static void puts_(const char *rel, const char *s) {
        put(rel, s, strlen(s));
}

static void put_link(const char *rel, const char *target) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        *strrchr(path, '/') = '\0';
        mkdir_p(path);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        ck_assert_int_eq(symlink(target, path), 0);
}

/* A /proc/PID/stat line as the kernel prints it (52 fields). */
static void put_stat(
        const char *rel, int pid, const char *comm, int ppid, unsigned flags, unsigned long long starttime) {
        char buf[1024];

        snprintf(
                buf, sizeof(buf),
                "%d (%s) S %d %d %d 0 -1 %u 120 0 0 0 3 1 0 0 20 0 1 0 %llu 5177344 321 "
                "18446744073709551615 "
                "1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                pid, comm, ppid, pid, pid, flags, starttime);
        puts_(rel, buf);
}

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

static void fixture_setup(void) {
        char tmpl[] = "/tmp/test-procfs-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        root = strdup(tmpl);
        ck_assert_ptr_nonnull(root);
}

static void fixture_teardown(void) {
        if (root)
                nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
        root = mfree(root);
}

START_TEST(test_comm) {
        char comm[16];

        puts_("proc/100/comm", "nginx\n");
        puts_("proc/100/task/101/comm", "worker 1\n");
        puts_("proc/2/comm", "kworker/0:1-events_unbound\n");
        puts_("proc/7/comm", "no-newline");

        ck_assert_int_eq(procfs_read_comm(root, 100, 0, comm), 0);
        ck_assert_str_eq(comm, "nginx");
        ck_assert_int_eq(procfs_read_comm(root, 100, 101, comm), 0);
        ck_assert_str_eq(comm, "worker 1");
        /* Longer than TASK_COMM_LEN - 1 (kworkers): the kernel's 15 characters. */
        ck_assert_int_eq(procfs_read_comm(root, 2, 0, comm), 0);
        ck_assert_str_eq(comm, "kworker/0:1-eve");
        ck_assert_int_eq(procfs_read_comm(root, 7, 0, comm), 0);
        ck_assert_str_eq(comm, "no-newline");
        /* A name with a newline in it (prctl(PR_SET_NAME) allows one): only the kernel's
         * trailing newline goes. */
        puts_("proc/9/comm", "xq-nl\nline2\n");
        ck_assert_int_eq(procfs_read_comm(root, 9, 0, comm), 0);
        ck_assert_str_eq(comm, "xq-nl\nline2");

        /* Gone: the process, the thread. Untouched output on failure. */
        strcpy(comm, "keep");
        ck_assert_int_eq(procfs_read_comm(root, 555, 0, comm), -ESRCH);
        ck_assert_int_eq(procfs_read_comm(root, 100, 102, comm), -ESRCH);
        ck_assert_str_eq(comm, "keep");
        ck_assert_int_eq(procfs_read_comm(root, 0, 0, comm), -EINVAL);
}
END_TEST

START_TEST(test_stat) {
        ProcfsStat st;
        uint64_t t;

        /* A comm that looks like the end of the comm and further fields. */
        put_stat("proc/42/stat", 42, "evil) (x) R 9 9 9 0 -1 2097152 ) (", 17, 0x400100, 987654321ULL);
        put_stat("proc/42/task/43/stat", 43, "a b", 17, 0x400040, 987654400ULL);
        put_stat("proc/2/stat", 2, "kthreadd", 0, 0x208040, 24);
        put_stat("proc/3/stat", 3, "()", 2, 0x04208060, 1ULL << 40);
        puts_("proc/5/stat", "5 (short) S 1 5 5 0 -1 0 0 0\n");
        puts_("proc/6/stat", "6 no parentheses S 1 6 6 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 10 0\n");
        puts_("proc/8/stat", "8 (x) S 1 8 8 0 -1 0x40 0 0 0 0 0 0 0 0 20 0 1 0 10 0\n");
        puts_("proc/7/stat", "7 (t) Z 1 7 7 0 -1 64 0 0 0 0 0 0 0 0 20 0 7 0 10 0\n");
        puts_("proc/9/stat", "");

        ck_assert_int_eq(procfs_read_starttime(root, 42, &t), 0);
        ck_assert_uint_eq(t, 987654321ULL);
        ck_assert_int_eq(procfs_read_stat(root, 42, 0, &st), 0);
        ck_assert_str_eq(st.comm, "evil) (x) R 9 9"); /* up to the last ')', cut to 15 bytes */
        ck_assert_int_eq(st.state, 'S');
        ck_assert_int_eq(st.ppid, 17);
        ck_assert_uint_eq(st.flags, 0x400100);
        ck_assert_uint_eq(st.n_threads, 1);
        ck_assert_uint_eq(st.starttime, 987654321ULL);
        ck_assert_int_eq(procfs_is_kernel_thread(root, 42), 0);

        ck_assert_int_eq(procfs_read_stat(root, 42, 43, &st), 0);
        ck_assert_str_eq(st.comm, "a b");
        ck_assert_uint_eq(st.starttime, 987654400ULL);
        ck_assert_uint_eq(st.flags, 0x400040);

        ck_assert_int_eq(procfs_is_kernel_thread(root, 2), 1);
        ck_assert_int_eq(procfs_is_kernel_thread(root, 3), 1);
        ck_assert_int_eq(procfs_read_starttime(root, 3, &t), 0);
        ck_assert_uint_eq(t, 1ULL << 40);

        /* A name with a newline in it, raw in stat as in comm. */
        puts_("proc/11/stat", "11 (xq-nl\nline2) S 1 11 11 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 10 0\n");
        ck_assert_int_eq(procfs_read_stat(root, 11, 0, &st), 0);
        ck_assert_str_eq(st.comm, "xq-nl\nline2");

        /* A zombie leader whose six other threads live on. */
        ck_assert_int_eq(procfs_read_stat(root, 7, 0, &st), 0);
        ck_assert_str_eq(st.comm, "t");
        ck_assert_int_eq(st.state, 'Z');
        ck_assert_uint_eq(st.n_threads, 7);
        ck_assert_uint_eq(st.starttime, 10);

        t = 77;
        ck_assert_int_eq(procfs_read_starttime(root, 5, &t), -EBADMSG);
        ck_assert_int_eq(procfs_read_starttime(root, 6, &t), -EBADMSG);
        ck_assert_int_eq(procfs_is_kernel_thread(root, 8), -EBADMSG);
        ck_assert_int_eq(procfs_read_starttime(root, 9, &t), -EBADMSG);
        ck_assert_uint_eq(t, 77);

        ck_assert_int_eq(procfs_read_starttime(root, 1234, &t), -ESRCH);
        ck_assert_int_eq(procfs_is_kernel_thread(root, 1234), -ESRCH);
        ck_assert_int_eq(procfs_read_stat(root, 42, 44, &st), -ESRCH);

        /* A root whose paths can't fit PATH_MAX: refused, not truncated into another path. */
        {
                char long_root[PATH_MAX];

                memset(long_root, 'a', sizeof(long_root) - 12);
                long_root[0] = '/';
                long_root[sizeof(long_root) - 12] = '\0';
                ck_assert_int_eq(procfs_read_stat(long_root, 42, 0, &st), -ENAMETOOLONG);
                ck_assert_int_eq(procfs_read_stat(long_root, 42, 43, &st), -ENAMETOOLONG);
                ck_assert_int_eq(procfs_read_stat(root, 42, -1, &st), -EINVAL);
        }
}
END_TEST

START_TEST(test_exe) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        char *x = (char *)"untouched";

        put_link("proc/10/exe", "/usr/sbin/nginx");
        put_link("proc/11/exe", "/usr/lib/postgresql/15/bin/postgres (deleted)");
        put_link("proc/12/exe", "/opt/a (deleted)/b");
        put_link("proc/13/exe", "/opt/my (deleted) (deleted)");
        puts_("proc/14/comm", "kthreadd\n"); /* a process without exe (kernel thread) */

        ck_assert_int_eq(procfs_read_exe(root, 10, &a), 0);
        ck_assert_str_eq(a, "/usr/sbin/nginx");
        ck_assert_int_eq(procfs_read_exe(root, 11, &b), 0);
        ck_assert_str_eq(b, "/usr/lib/postgresql/15/bin/postgres");
        ck_assert_int_eq(procfs_read_exe(root, 12, &c), 0);
        ck_assert_str_eq(c, "/opt/a (deleted)/b");
        /* Only one suffix is the kernel's. */
        ck_assert_int_eq(procfs_read_exe(root, 13, &d), 0);
        ck_assert_str_eq(d, "/opt/my (deleted)");

        ck_assert_int_eq(procfs_read_exe(root, 14, &x), -ENOENT);
        ck_assert_int_eq(procfs_read_exe(root, 15, &x), -ESRCH);
        ck_assert_str_eq(x, "untouched");
}
END_TEST

START_TEST(test_cmdline) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *big_expect = NULL;
        char *x = (char *)"untouched";
        size_t big_len = 20000;

        put("proc/10/cmdline", "nginx\0-g\0daemon off;\0", 22);
        put("proc/11/cmdline", "", 0);                       /* zombie */
        put("proc/12/cmdline", "a\0\0b \0", 6);              /* empty argument, trailing blank in one */
        put("proc/13/cmdline", "nginx: worker process", 21); /* setproctitle(): no NUL at all */

        /* Larger than any stack buffer: many arguments. */
        _cleanup_free_ char *big = malloc(big_len);
        big_expect = malloc(big_len);
        ck_assert_ptr_nonnull(big);
        ck_assert_ptr_nonnull(big_expect);
        for (size_t i = 0; i < big_len; i++) {
                big[i] = (i % 10 == 9) ? '\0' : (char)('a' + i % 10);
                big_expect[i] = (i % 10 == 9) ? ' ' : (char)('a' + i % 10);
        }
        big_expect[big_len - 1] = '\0';
        put("proc/14/cmdline", big, big_len);

        ck_assert_int_eq(procfs_read_cmdline(root, 10, &a), 0);
        ck_assert_str_eq(a, "nginx -g daemon off;");
        ck_assert_int_eq(procfs_read_cmdline(root, 11, &b), 0);
        ck_assert_str_eq(b, "");
        ck_assert_int_eq(procfs_read_cmdline(root, 12, &c), 0);
        ck_assert_str_eq(c, "a  b ");
        ck_assert_int_eq(procfs_read_cmdline(root, 13, &d), 0);
        ck_assert_str_eq(d, "nginx: worker process");
        ck_assert_int_eq(procfs_read_cmdline(root, 14, &e), 0);
        ck_assert_uint_eq(strlen(e), big_len - 1);
        ck_assert(streq(e, big_expect));

        ck_assert_int_eq(procfs_read_cmdline(root, 15, &x), -ESRCH);
        ck_assert_str_eq(x, "untouched");
}
END_TEST

/* An ARG_MAX-sized command line (2 MiB) is read whole: a cmdline: pattern sees all of it. */
START_TEST(test_cmdline_whole) {
        const size_t len = 2 * 1024 * 1024 + 7;
        _cleanup_free_ char *huge = malloc(len), *got = NULL;

        ck_assert_ptr_nonnull(huge);
        for (size_t i = 0; i < len; i++)
                huge[i] = (i % 100 == 99) ? '\0' : (char)('a' + i % 26);
        huge[len - 1] = '\0';
        put("proc/17/cmdline", huge, len);

        ck_assert_int_eq(procfs_read_cmdline(root, 17, &got), 0);
        ck_assert_uint_eq(strlen(got), len - 1);
        ck_assert_int_eq(got[len - 2], 'a' + (int)((len - 2) % 26));
}
END_TEST

/* One longer than PROCFS_CMDLINE_MAX (more than the kernel allows) is cut there, not refused. */
START_TEST(test_cmdline_cap) {
        const size_t len = PROCFS_CMDLINE_MAX + 4096 + 7;
        _cleanup_free_ char *huge = malloc(len), *got = NULL;

        ck_assert_ptr_nonnull(huge);
        for (size_t i = 0; i < len; i++)
                huge[i] = (i % 100 == 99) ? '\0' : (char)('a' + i % 26);
        put("proc/16/cmdline", huge, len);

        ck_assert_int_eq(procfs_read_cmdline(root, 16, &got), 0);
        ck_assert_uint_eq(strlen(got), PROCFS_CMDLINE_MAX);
        for (size_t i = 0; i < PROCFS_CMDLINE_MAX; i++)
                if (got[i] != ((i % 100 == 99) ? ' ' : (char)('a' + i % 26)))
                        ck_abort_msg("byte %zu differs", i);
}
END_TEST

/* Fills a command line of len bytes: arguments of 99 letters, NUL-terminated. */
static char *fake_cmdline(size_t len) {
        char *b = malloc(len + 1);

        ck_assert_ptr_nonnull(b);
        for (size_t i = 0; i < len; i++)
                b[i] = (i % 100 == 99 || i + 1 == len) ? '\0' : (char)('a' + i % 26);
        return b;
}

/*
 * procfs_read_cmdline_max(): -E2BIG when the file holds max bytes or more, whether the first
 * read holds all of it or not (a long one is tried at its max-th byte), else the whole command
 * line, as procfs_read_cmdline() reads it.
 */
START_TEST(test_cmdline_max) {
        const size_t max = 64 * 1024;
        const size_t lens[] = {50, 4095, 4096, 5000, max - 1, max, max + 1, 1536 * 1024};
        char *got;

        for (size_t k = 0; k < ELEMENTSOF(lens); k++) {
                _cleanup_free_ char *b = fake_cmdline(lens[k]), *whole = NULL;
                char path[64];
                int r;

                snprintf(path, sizeof(path), "proc/%zu/cmdline", 300 + k);
                put(path, b, lens[k]);
                got = NULL;
                r = procfs_read_cmdline_max(root, (pid_t)(300 + k), max, &got);
                if (lens[k] >= max) {
                        ck_assert_msg(r == -E2BIG, "%zu bytes, max %zu: %d", lens[k], max, r);
                        ck_assert_ptr_null(got);
                        continue;
                }
                ck_assert_msg(r == 0, "%zu bytes, max %zu: %d", lens[k], max, r);
                ck_assert_int_eq(procfs_read_cmdline(root, (pid_t)(300 + k), &whole), 0);
                ck_assert_str_eq(got, whole);
                ck_assert_uint_eq(strlen(got), lens[k] - 1);
                free(got);
        }
        /* A short file over a small max, and max 0 (no limit but PROCFS_CMDLINE_MAX). */
        put("proc/320/cmdline", "nginx\0-g\0daemon off;\0", 22);
        ck_assert_int_eq(procfs_read_cmdline_max(root, 320, 10, &got), -E2BIG);
        ck_assert_int_eq(procfs_read_cmdline_max(root, 320, 0, &got), 0);
        ck_assert_str_eq(got, "nginx -g daemon off;");
        free(got);
        ck_assert_int_eq(procfs_read_cmdline_max(root, 321, max, &got), -ESRCH);
}
END_TEST

static const char status_head[] = "Name:\tnginx\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t100\nNgid:\t0\n"
                                  "Pid:\t100\nPPid:\t1\nTracerPid:\t0\n";

START_TEST(test_status) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, t = CPUSET_NULL, big = CPUSET_NULL;
        static char buf[65536];
        pid_t tgid = 0;
        uid_t uid;
        int n;

        snprintf(
                buf, sizeof(buf),
                "%sUid:\t1000\t33\t33\t33\nGid:\t1000\t33\t33\t33\nCpus_allowed:\t10f\n"
                "Cpus_allowed_list:\t0-3,8\nMems_allowed_list:\t0\n",
                status_head);
        puts_("proc/100/status", buf);
        puts_("proc/100/task/101/status", "Name:\tw\nUid:\t0\t0\t0\t0\nCpus_allowed_list:\t2\n");
        puts_("proc/102/status", "Name:\tx\nUid:\t5\nCpus_allowed_list:\t0-z\n");
        puts_("proc/103/status", "Name:\tx\nEuid:\t5 6\nXCpus_allowed_list:\t1\n");

        /* A status larger than one read buffer: an 8192-CPU machine with every other CPU allowed. */
        n = snprintf(buf, sizeof(buf), "%sCpus_allowed:\t", status_head);
        for (int i = 0; i < 256; i++)
                n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s55555555", i ? "," : "");
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "\nUid:\t7\t8\t9\t10\nCpus_allowed_list:\t");
        for (int i = 0; i < 8192; i += 2)
                n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%d", i ? "," : "", i);
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "\nMems_allowed_list:\t0\n");
        ck_assert_int_gt(n, 16384);
        ck_assert_int_lt(n, (int)sizeof(buf) - 1);
        puts_("proc/104/status", buf);

        ck_assert_int_eq(procfs_read_euid(root, 100, &uid), 0);
        ck_assert_uint_eq(uid, 33);
        ck_assert_int_eq(procfs_read_tgid(root, 100, &tgid), 0);
        ck_assert_int_eq(tgid, 100);
        ck_assert_int_eq(procfs_read_tgid(root, 102, &tgid), -EBADMSG); /* no Tgid: line */
        ck_assert_int_eq(procfs_read_tgid(root, 99, &tgid), -ESRCH);
        ck_assert_int_eq(tgid, 100); /* untouched */
        ck_assert_int_eq(procfs_parse_status_tgid("Tgid:\t4194304\n", 14, &tgid), 0);
        ck_assert_int_eq(tgid, 4194304);
        ck_assert_int_eq(procfs_parse_status_tgid("Tgid:\t0\n", 8, &tgid), -EBADMSG);
        ck_assert_int_eq(procfs_parse_status_tgid("Tgid:\t-1\n", 9, &tgid), -EBADMSG);
        ck_assert_int_eq(procfs_parse_status_tgid("XTgid:\t7\n", 9, &tgid), -EBADMSG);
        ck_assert_int_eq(procfs_parse_status_tgid("Tgid:\t2147483648\n", 17, &tgid), -EBADMSG);
        ck_assert_int_eq(procfs_read_cpus_allowed(root, 100, 0, &s), 0);
        ck_assert_uint_eq(cpuset_count(&s), 5);
        for (unsigned c = 0; c < 4; c++)
                ck_assert(cpuset_contains(&s, c));
        ck_assert(cpuset_contains(&s, 8));

        ck_assert_int_eq(procfs_read_cpus_allowed(root, 100, 101, &t), 0);
        ck_assert_uint_eq(cpuset_count(&t), 1);
        ck_assert(cpuset_contains(&t, 2));

        ck_assert_int_eq(procfs_read_euid(root, 104, &uid), 0);
        ck_assert_uint_eq(uid, 8);
        ck_assert_int_eq(procfs_read_cpus_allowed(root, 104, 0, &big), 0);
        ck_assert_uint_eq(cpuset_count(&big), 4096);
        ck_assert(cpuset_contains(&big, 8190));
        ck_assert(cpuset_contains(&big, 6));
        ck_assert(!cpuset_contains(&big, 7));
        ck_assert(!cpuset_contains(&big, 8191));

        /* Malformed: only one uid, junk cpu-list, fields missing (a prefix is not the field). */
        uid = 4242;
        ck_assert_int_eq(procfs_read_euid(root, 102, &uid), -EBADMSG);
        ck_assert_int_eq(procfs_read_cpus_allowed(root, 102, 0, &s), -EBADMSG);
        ck_assert_int_eq(procfs_read_euid(root, 103, &uid), -EBADMSG);
        ck_assert_int_eq(procfs_read_cpus_allowed(root, 103, 0, &s), -EBADMSG);
        ck_assert_uint_eq(uid, 4242);
        ck_assert_uint_eq(cpuset_count(&s), 5); /* untouched */

        ck_assert_int_eq(procfs_read_euid(root, 999, &uid), -ESRCH);
        ck_assert_int_eq(procfs_read_cpus_allowed(root, 100, 999, &s), -ESRCH);
}
END_TEST

/* A shell's stat line as this machine's kernel (6.18) printed it: 52 fields. */
static const char real_stat[] =
        "14226 (bash) S 14224 14224 25547 0 -1 4194304 181 0 0 0 0 0 0 0 20 0 1 0 1044858 4464640 759 "
        "18446744073709551615 94487901495296 94487902284701 140732327556416 0 0 0 65536 4 65538 1 0 0 "
        "17 1 0 0 0 0 0 94487902518000 94487902566244 94488203440128 140732327557744 140732327557791 "
        "140732327557791 140732327559146 0\n";

#define LIT(s) (s), (sizeof(s) - 1)

/* procfs_parse_stat() on len bytes copied into a buffer of exactly that size (ASan sees a read
 * past len), *ret untouched ('?' everywhere) on failure. */
static int parse_stat_exact(const char *s, size_t len, ProcfsStat *ret) {
        _cleanup_free_ char *b = malloc(len ? len : 1);
        ProcfsStat st;
        int r;

        ck_assert_ptr_nonnull(b);
        if (len > 0) /* s may be NULL for an empty input */
                memcpy(b, s, len);
        memset(&st, '?', sizeof(st));
        r = procfs_parse_stat(b, len, &st);
        if (r < 0) {
                ProcfsStat q;

                memset(&q, '?', sizeof(q));
                ck_assert(memcmp(&st, &q, sizeof(st)) == 0);
        }
        *ret = st;
        return r;
}

static int parse_stat_str(const char *s, ProcfsStat *ret) {
        return parse_stat_exact(s, strlen(s), ret);
}

/* hidepid= and gid= of the proc at /proc, from mountinfo: each spelling, the last mount at
 * /proc winning, other mounts and file systems ignored, and no file at all. */
START_TEST(test_hidepid) {
        gid_t gid = 12345;
        bool has_gid = true;

        /* no mountinfo: off */
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 0);
        ck_assert(!has_gid);

        puts_("proc/self/mountinfo",
              "22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
              "23 1 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:14 - proc proc rw\n"
              "24 23 0:23 / /proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw\n");
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 0);
        ck_assert(!has_gid);

        puts_("proc/self/mountinfo",
              "23 1 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:14 - proc proc "
              "rw,gid=1000,hidepid=invisible\n"
              "30 1 0:40 / /srv/proc rw - proc proc rw,hidepid=ptraceable\n");
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 2);
        ck_assert(has_gid);
        ck_assert_uint_eq(gid, 1000);

        /* numbers, and the last mount at /proc wins (one mounted over the first) */
        puts_("proc/self/mountinfo",
              "23 1 0:22 / /proc rw - proc proc rw,hidepid=2,gid=7\n"
              "31 23 0:41 / /proc rw - proc proc rw,hidepid=1\n");
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 1);
        ck_assert(!has_gid);
        puts_("proc/self/mountinfo", "23 1 0:22 / /proc rw - proc proc rw,hidepid=4\n");
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 4);
        puts_("proc/self/mountinfo", "23 1 0:22 / /proc rw - proc proc rw,hidepid=ptraceable\n");
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 4);
        puts_("proc/self/mountinfo", "23 1 0:22 / /proc rw - proc proc rw,hidepid=noaccess\n");
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 1);
        /* a tmpfs at /proc is not proc */
        puts_("proc/self/mountinfo", "23 1 0:22 / /proc rw - tmpfs tmpfs rw,hidepid=2\n");
        ck_assert_int_eq(procfs_hidepid(root, &gid, &has_gid), 0);
}
END_TEST

START_TEST(test_parse_stat) {
        ProcfsStat st;
        char buf[512];
        size_t len, f22;

        ck_assert_int_eq(parse_stat_str(real_stat, &st), 0);
        ck_assert_str_eq(st.comm, "bash");
        ck_assert_int_eq(st.state, 'S');
        ck_assert_int_eq(st.ppid, 14224);
        ck_assert_uint_eq(st.flags, 4194304);
        ck_assert_uint_eq(st.n_threads, 1);
        ck_assert_uint_eq(st.starttime, 1044858);

        /* The comm ends at the last ')', whatever it holds: ") (", fields, a newline, '('. */
        ck_assert_int_eq(
                parse_stat_str(
                        "9 (a) (b) R 1 2 3 4 5 6 7 8) Z 44 0 0 0 0 1 0 0 0 0 0 0 0 0 20 0 3 0 77\n", &st),
                0);
        ck_assert_str_eq(st.comm, "a) (b) R 1 2 3 ");
        ck_assert_int_eq(st.state, 'Z');
        ck_assert_int_eq(st.ppid, 44);
        ck_assert_uint_eq(st.flags, 1);
        ck_assert_uint_eq(st.n_threads, 3);
        ck_assert_uint_eq(st.starttime, 77);
        ck_assert_int_eq(parse_stat_str("9 (x\ny) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), 0);
        ck_assert_str_eq(st.comm, "x\ny");
        ck_assert_uint_eq(st.starttime, 5); /* no newline at the end: the text ends the field */
        ck_assert_int_eq(parse_stat_str("9 (() S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), 0);
        ck_assert_str_eq(st.comm, "(");
        ck_assert_int_eq(parse_stat_str("9 () S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), 0);
        ck_assert_str_eq(st.comm, "");
        /* Runs of spaces separate fields; fields after 22 are not looked at. */
        ck_assert_int_eq(
                parse_stat_str("9 (x)  S  1 0 0 0 0 7 0 0 0 0 0 0 0 0 20 0 2 0 5 junk ) ( \n", &st),
                -EBADMSG); /* that ')' is the last one: the comm runs up to it */
        ck_assert_int_eq(
                parse_stat_str("9 (x)  S  1 0 0 0 0 7 0 0 0 0 0 0 0 0 20 0 2 0   5 junk\nmore\n", &st), 0);
        ck_assert_uint_eq(st.flags, 7);
        ck_assert_uint_eq(st.n_threads, 2);
        ck_assert_uint_eq(st.starttime, 5);

        /* Bytes past len are never looked at: here, one more would move the last ')' and one
         * digit more would change the start time. */
        strcpy(buf, "9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 12345)");
        ck_assert_int_eq(parse_stat_exact(buf, strlen(buf), &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_exact(buf, strlen(buf) - 1, &st), 0);
        ck_assert_str_eq(st.comm, "x");
        ck_assert_uint_eq(st.starttime, 12345);
        ck_assert_int_eq(parse_stat_exact(buf, strlen(buf) - 2, &st), 0);
        ck_assert_uint_eq(st.starttime, 1234);

        /* Every truncation of a real line: unparsable until field 22 has begun, then the start
         * time's prefix (a length-bounded parser cannot tell "104" from a cut "1044858"). */
        len = strlen(real_stat);
        f22 = (size_t)(strstr(real_stat, " 1044858 ") + 1 - real_stat);
        for (size_t k = 0; k <= len; k++) {
                char digits[8] = {};
                int r = parse_stat_exact(real_stat, k, &st);

                if (k <= f22) {
                        ck_assert_msg(r == -EBADMSG, "prefix of %zu bytes: %d", k, r);
                        continue;
                }
                ck_assert_msg(r == 0, "prefix of %zu bytes: %d", k, r);
                ck_assert_str_eq(st.comm, "bash");
                ck_assert_uint_eq(st.flags, 4194304);
                memcpy(digits, real_stat + f22, MIN(k - f22, (size_t)7));
                ck_assert_uint_eq(st.starttime, strtoull(digits, NULL, 10));
        }

        /* A NUL (never from the kernel) ends the text. */
        ck_assert_int_eq(
                parse_stat_exact(LIT("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5\0 6 7)"), &st), 0);
        ck_assert_uint_eq(st.starttime, 5);
        ck_assert_int_eq(
                parse_stat_exact(LIT("9 (x\0) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5"), &st), -EBADMSG);

        /* Missing, empty and malformed fields. */
        ck_assert_int_eq(parse_stat_exact(NULL, 0, &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("()", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0\n", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 ", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0\n5\n", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 )x( S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) SS 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) S\t1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) S -1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) S 1 0 0 0 0 0x40 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(parse_stat_str("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 +5", &st), -EBADMSG);

        /* Numbers at and past their limits. */
        ck_assert_int_eq(
                parse_stat_str(
                        "9 (x) S 2147483647 0 0 0 0 4294967295 0 0 0 0 0 0 0 0 20 0 "
                        "4294967295 0 18446744073709551615",
                        &st),
                0);
        ck_assert_int_eq(st.ppid, INT_MAX);
        ck_assert_uint_eq(st.flags, UINT_MAX);
        ck_assert_uint_eq(st.n_threads, UINT_MAX);
        ck_assert_uint_eq(st.starttime, UINT64_MAX);
        ck_assert_int_eq(
                parse_stat_str("9 (x) S 2147483648 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(
                parse_stat_str("9 (x) S 1 0 0 0 0 4294967296 0 0 0 0 0 0 0 0 20 0 1 0 5", &st), -EBADMSG);
        ck_assert_int_eq(
                parse_stat_str("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 4294967296 0 5", &st), -EBADMSG);
        ck_assert_int_eq(
                parse_stat_str("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551616", &st),
                -EBADMSG);
        ck_assert_int_eq(
                parse_stat_str("9 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999999", &st),
                -EBADMSG);
        /* Leading zeros are only digits. */
        ck_assert_int_eq(
                parse_stat_str(
                        "9 (x) S 000000000000000000000000001 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st),
                0);
        ck_assert_int_eq(st.ppid, 1);

        /* A comm longer than TASK_COMM_LEN - 1 (a hand-made file): its first 15 bytes. */
        ck_assert_int_eq(
                parse_stat_str(
                        "9 (kworker/0:1-events_unbound) I 2 0 0 0 0 69238880 0 0 0 0 0 0 0 0 20 0 1 0 5",
                        &st),
                0);
        ck_assert_str_eq(st.comm, "kworker/0:1-eve");
        ck_assert_uint_eq(st.flags & PROCFS_PF_KTHREAD, PROCFS_PF_KTHREAD);
}
END_TEST

/* procfs_parse_status_*() on len bytes copied into a buffer of exactly that size. */
static int parse_euid_exact(const char *s, size_t len, uid_t *ret) {
        _cleanup_free_ char *b = malloc(len ? len : 1);

        ck_assert_ptr_nonnull(b);
        if (len > 0) /* s may be NULL for an empty input */
                memcpy(b, s, len);
        return procfs_parse_status_euid(b, len, ret);
}

static int parse_cpus_exact(const char *s, size_t len, CpuSet *ret) {
        _cleanup_free_ char *b = malloc(len ? len : 1);

        ck_assert_ptr_nonnull(b);
        if (len > 0) /* s may be NULL for an empty input */
                memcpy(b, s, len);
        return procfs_parse_status_cpus_allowed(b, len, ret);
}

/* The cpu-list of set, formatted (for comparisons). */
static char *list_of(const CpuSet *set) {
        static char buf[256];
        _cleanup_free_ char *t = NULL;

        ck_assert_int_eq(cpuset_format_list(set, &t), 0);
        ck_assert_uint_lt(strlen(t), sizeof(buf));
        strcpy(buf, t);
        return buf;
}

/* This machine's status of a process (cat, kernel 6.18), the Uid: line changed to distinct
 * real, effective, saved and fs uids (a setuid program's). */
static const char real_status[] =
        "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t14827\nNgid:\t0\nPid:\t14827\n"
        "PPid:\t14825\nTracerPid:\t0\nUid:\t1000\t1001\t1002\t1003\nGid:\t0\t0\t0\t0\n"
        "FDSize:\t256\nGroups:\t \nNStgid:\t14827\nNSpid:\t14827\nNSpgid:\t14825\nNSsid:\t25547\n"
        "Kthread:\t0\nVmPeak:\t    3060 kB\nVmSize:\t    3060 kB\nVmLck:\t       0 kB\n"
        "VmPin:\t       0 kB\nVmHWM:\t    1676 kB\nVmRSS:\t    1676 kB\nRssAnon:\t     116 kB\n"
        "RssFile:\t    1560 kB\nRssShmem:\t       0 kB\nVmData:\t     360 kB\nVmStk:\t     132 kB\n"
        "VmExe:\t      20 kB\nVmLib:\t    1528 kB\nVmPTE:\t      44 kB\nVmSwap:\t       0 kB\n"
        "HugetlbPages:\t       0 kB\nCoreDumping:\t0\nTHP_enabled:\t1\n"
        "untag_mask:\t0xffffffffffffffff\nThreads:\t1\nSigQ:\t2/96365\nSigPnd:\t0000000000000000\n"
        "ShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
        "SigCgt:\t0000000000000000\nCapInh:\t0000000000000000\nCapPrm:\t000001fffeffffff\n"
        "CapEff:\t000001fffeffffff\nCapBnd:\t000001fffeffffff\nCapAmb:\t0000000000000000\n"
        "NoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\nSpeculation_Store_Bypass:\tvulnerable\n"
        "SpeculationIndirectBranch:\talways enabled\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n"
        "Mems_allowed:\t00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,000"
        "00000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,000"
        "00000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,000"
        "00000,00000000,00000000,00000001\nMems_allowed_list:\t0\nvoluntary_ctxt_switches:\t1\n"
        "nonvoluntary_ctxt_switches:\t1\n";

/* Uid: and Gid: whole, for the ptrace-access check of D-Bus callers (daemon/bus-caller.c). */
START_TEST(test_parse_status_ids) {
        uid_t u[4] = {9, 9, 9, 9};
        gid_t g[4] = {9, 9, 9, 9};
        const char *t;

        ck_assert_int_eq(procfs_parse_status_ids(real_status, strlen(real_status), u, g), 0);
        ck_assert_uint_eq(u[0], 1000);
        ck_assert_uint_eq(u[1], 1001);
        ck_assert_uint_eq(u[2], 1002);
        ck_assert_uint_eq(u[3], 1003);
        for (int i = 0; i < 4; i++)
                ck_assert_uint_eq(g[i], 0);
        /* three uids, a missing Gid:, a number too large: refused, nothing written */
        u[0] = 7;
        t = "Uid:\t1\t2\t3\nGid:\t1\t2\t3\t4\n";
        ck_assert_int_eq(procfs_parse_status_ids(t, strlen(t), u, g), -EBADMSG);
        t = "Uid:\t1\t2\t3\t4\n";
        ck_assert_int_eq(procfs_parse_status_ids(t, strlen(t), u, g), -EBADMSG);
        t = "Uid:\t1\t2\t3\t4294967296\nGid:\t1\t2\t3\t4\n";
        ck_assert_int_eq(procfs_parse_status_ids(t, strlen(t), u, g), -EBADMSG);
        ck_assert_uint_eq(u[0], 7);
        /* this process */
        ck_assert_int_eq(procfs_read_ids(NULL, getpid(), u, g), 0);
        ck_assert_uint_eq(u[1], geteuid());
        ck_assert_uint_eq(g[1], getegid());
}
END_TEST

START_TEST(test_parse_status) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        _cleanup_free_ char *big = NULL;
        const char *t;
        size_t len, n;
        uid_t uid;

        ck_assert_int_eq(parse_euid_exact(real_status, strlen(real_status), &uid), 0);
        ck_assert_uint_eq(uid, 1001);
        ck_assert_int_eq(parse_cpus_exact(real_status, strlen(real_status), &s), 0);
        ck_assert_str_eq(list_of(&s), "0-1");

        /* Bytes past len are never looked at. */
        t = "Uid:\t1\t23\t4\t5";
        ck_assert_int_eq(parse_euid_exact(t, 9, &uid), 0);
        ck_assert_uint_eq(uid, 23);
        ck_assert_int_eq(parse_euid_exact(t, 8, &uid), 0);
        ck_assert_uint_eq(uid, 2);
        uid = 4242;
        ck_assert_int_eq(parse_euid_exact(t, 7, &uid), -EBADMSG); /* "Uid:\t1\t": one uid */
        ck_assert_int_eq(parse_euid_exact(t, 3, &uid), -EBADMSG); /* "Uid": no colon */
        ck_assert_uint_eq(uid, 4242);
        t = "Cpus_allowed_list:\t0-3,8";
        len = strlen(t);
        ck_assert_int_eq(parse_cpus_exact(t, len, &s), 0);
        ck_assert_str_eq(list_of(&s), "0-3,8");
        ck_assert_int_eq(parse_cpus_exact(t, len - 1, &s), 0); /* "0-3," */
        ck_assert_str_eq(list_of(&s), "0-3");
        ck_assert_int_eq(parse_cpus_exact(t, len - 3, &s), -EBADMSG); /* "0-" */
        ck_assert_str_eq(list_of(&s), "0-3");                         /* untouched */
        ck_assert_int_eq(parse_cpus_exact(t, len - 4, &s), 0);        /* "0" */
        ck_assert_str_eq(list_of(&s), "0");

        /* Every truncation of the real file: a field is there once its line has begun past the
         * value's first byte, and it has the value's prefix. */
        len = strlen(real_status);
        n = (size_t)(strstr(real_status, "Uid:\t") - real_status) + 10; /* the "1" of "1001" */
        for (size_t k = 0; k <= len; k++) {
                int r = parse_euid_exact(real_status, k, &uid);

                if (k <= n)
                        ck_assert_msg(r == -EBADMSG, "prefix of %zu bytes: %d", k, r);
                else {
                        ck_assert_msg(r == 0, "prefix of %zu bytes: %d", k, r);
                        ck_assert_uint_eq(uid, k >= n + 4 ? 1001 : k == n + 3 ? 100 : k == n + 2 ? 10 : 1);
                }
        }

        /* Only the field itself: not a longer name, not another case, not without its colon. */
        t = "XUid:\t7\t7\t7\t7\nUid_x:\t8\t8\t8\t8\nuid:\t9\t9\t9\t9\nUid\t6\t6\t6\t6\n"
            "Cpus_allowed_listx:\t5\nXCpus_allowed_list:\t5\nCpus_allowed:\tf\n";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), -EBADMSG);
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), -EBADMSG);
        /* The first line that is the field wins; a last line needs no newline; blanks may be
         * spaces; a value may be empty. */
        t = "Name:\tx\nUid:  5   6 7 8\nUid:\t9\t10\t11\t12\nCpus_allowed_list:\t  2,4  "
            "\nCpus_allowed_list:\t0";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), 0);
        ck_assert_uint_eq(uid, 6);
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), 0);
        ck_assert_str_eq(list_of(&s), "2,4");
        t = "Cpus_allowed_list:\n";
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), 0);
        ck_assert(cpuset_is_empty(&s));
        t = "Cpus_allowed_list:";
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), 0);
        ck_assert(cpuset_is_empty(&s));

        /* Malformed and out of range. */
        uid = 4242;
        t = "Uid:\t5\n";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), -EBADMSG);
        t = "Uid:\t5\n6\t7\t8\n";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), -EBADMSG);
        t = "Uid:\t0\t-1\t0\t0\n";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), -EBADMSG);
        t = "Uid:\t0\t4294967295\t0\t0\n"; /* (uid_t)-1 */
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), -EBADMSG);
        t = "Uid:\t0\t99999999999999999999999\t0\t0\n";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), -EBADMSG);
        t = "Uid:\t0\t12a\t0\t0\n";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), -EBADMSG);
        ck_assert_uint_eq(uid, 4242);
        t = "Uid:\t0\t4294967294\t0\t0\n";
        ck_assert_int_eq(parse_euid_exact(t, strlen(t), &uid), 0);
        ck_assert_uint_eq(uid, 4294967294U);
        ck_assert_int_eq(parse_euid_exact(NULL, 0, &uid), -EBADMSG);
        ck_assert_int_eq(parse_cpus_exact(NULL, 0, &s), -EBADMSG);

        ck_assert_int_eq(parse_cpus_exact(LIT("Cpus_allowed_list:\t0-8191\n"), &s), 0);
        ck_assert_uint_eq(cpuset_count(&s), 8192);
        t = "Cpus_allowed_list:\t8192\n";
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), -EBADMSG);
        t = "Cpus_allowed_list:\t99999999999999999999\n";
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), -EBADMSG);
        t = "Cpus_allowed_list:\t3-1\n";
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), -EBADMSG);
        t = "Cpus_allowed_list:\t0-3 junk\n";
        ck_assert_int_eq(parse_cpus_exact(t, strlen(t), &s), -EBADMSG);
        ck_assert_uint_eq(cpuset_count(&s), 8192); /* untouched */

        /* A NUL (never from the kernel) ends the text. */
        ck_assert_int_eq(parse_euid_exact(LIT("Name:\tx\0\nUid:\t1\t2\t3\t4\n"), &uid), -EBADMSG);
        ck_assert_int_eq(parse_cpus_exact(LIT("Cpus_allowed_list:\t0-1\0junk\n"), &s), 0);
        ck_assert_str_eq(list_of(&s), "0-1");

        /* A value longer than any stack buffer: every other CPU of 8192. */
        big = malloc(64 * 1024);
        ck_assert_ptr_nonnull(big);
        n = (size_t)sprintf(big, "Cpus_allowed_list:\t");
        for (int i = 0; i < 8192; i += 2)
                n += (size_t)sprintf(big + n, "%s%d", i ? "," : "", i);
        ck_assert_int_eq(parse_cpus_exact(big, n, &s), 0);
        ck_assert_uint_eq(cpuset_count(&s), 4096);
        ck_assert(cpuset_contains(&s, 8190));
        ck_assert(!cpuset_contains(&s, 8191));
}
END_TEST

static void check_cgroup(pid_t pid, const char *content, int expect_r, const char *expect) {
        char rel[64];
        char *c = NULL;
        int r;

        snprintf(rel, sizeof(rel), "proc/%d/cgroup", (int)pid);
        puts_(rel, content);
        r = procfs_read_cgroup(root, pid, &c);
        ck_assert_msg(r == expect_r, "cgroup file %d: got %d, expected %d", (int)pid, r, expect_r);
        if (expect)
                ck_assert_str_eq(c, expect);
        else
                ck_assert_ptr_null(c);
        free(c);
}

START_TEST(test_cgroup) {
        char *c = NULL;

        /* Pure v2. */
        check_cgroup(10, "0::/system.slice/nginx.service\n", 0, "/system.slice/nginx.service");
        check_cgroup(11, "0::/\n", 0, "/");
        /* Hybrid, systemd's layout: v2 at "/", the real path in name=systemd (as this machine). */
        check_cgroup(
                12,
                "12:name=systemd:/system.slice/postgresql@15-main.service\n11:pids:/system.slice\n"
                "4:memory:/x/y\n1:cpu,cpuacct:/\n0::/\n",
                0, "/system.slice/postgresql@15-main.service");
        /* Hybrid where the unified hierarchy has the placement: prefer it. */
        check_cgroup(
                13, "9:name=systemd:/user.slice/a.scope\n0::/system.slice/b.service\n", 0,
                "/system.slice/b.service");
        /* Hybrid, "0::/" and no name=systemd: "/". */
        check_cgroup(14, "3:cpuset:/foo\n0::/\n", 0, "/");
        /* v1 only: name=systemd, also inside a list of controllers; order does not matter. */
        check_cgroup(15, "2:cpu:/other\n1:name=systemd:/init.scope\n", 0, "/init.scope");
        check_cgroup(16, "1:cpu,name=systemd:/a/b.scope\n", 0, "/a/b.scope");
        /* Not name=systemd: a prefix or a different name. */
        check_cgroup(17, "1:name=systemdx:/a\n2:name=elogind:/b\n", -ENODATA, NULL);
        check_cgroup(18, "", -ENODATA, NULL);
        /* A path with ':' and no trailing newline. */
        check_cgroup(19, "0::/machine.slice/a:b.scope", 0, "/machine.slice/a:b.scope");
        /* A hierarchy 10 with empty controllers is not v2 ("0" exactly). */
        check_cgroup(20, "10::/not-v2\n1:name=systemd:/sd\n", 0, "/sd");

        ck_assert_int_eq(procfs_read_cgroup(root, 999, &c), -ESRCH);
        ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_unit_from_cgroup) {
        static const struct {
                const char *path;
                const char *unit; /* NULL: -ENXIO */
        } cases[] = {
                {"/system.slice/nginx.service", "nginx.service"},
                {"/system.slice/nginx.service/x", "nginx.service"},
                {"/user.slice/user-0.slice/session-3.scope", "session-3.scope"},
                {"/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "user@1000.service"},
                {"/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service"},
                {"/init.scope", "init.scope"},
                {"/system.slice/docker.socket", "docker.socket"},
                {"/system.slice/_cpu.service", "cpu.service"}, /* systemd's escaping */
                {"//system.slice//a.service", "a.service"},
                {"/", NULL},
                {"", NULL},
                {"/system.slice", NULL},
                {"/user.slice/user-0.slice", NULL},
                {"/docker/abc/foo.service", NULL}, /* not systemd's: a non-unit comes first */
                {"/process_api/8460474c6a188f75", NULL},
                {"/system.slice/nginx.servic", NULL}, /* unknown type */
                {"/system.slice/.service", NULL},
                {"/system.slice/foo@.service", NULL}, /* a template, not an instance */
                {"/system.slice/foo bar.service", NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *u = NULL;
                int r = procfs_unit_from_cgroup(cases[i].path, &u);

                if (cases[i].unit) {
                        ck_assert_msg(r == 0, "%s: %d", cases[i].path, r);
                        ck_assert_str_eq(u, cases[i].unit);
                } else {
                        ck_assert_msg(r == -ENXIO, "%s: %d", cases[i].path, r);
                        ck_assert_ptr_null(u);
                }
                free(u);
        }
}
END_TEST

START_TEST(test_list) {
        _cleanup_free_ pid_t *pids = NULL, *tids = NULL;
        size_t n = 99;
        pid_t *x = NULL;

        puts_("proc/1/comm", "init\n");
        puts_("proc/20/comm", "b\n");
        puts_("proc/3/comm", "a\n");
        puts_("proc/100000/comm", "c\n");
        puts_("proc/abc/comm", "not a pid\n");
        puts_("proc/12x/comm", "not a pid\n");
        puts_("proc/0/comm", "not a pid\n");
        puts_("proc/99999999999/comm", "too large\n");
        puts_("proc/uptime", "1.0 1.0\n");
        put_link("proc/self", "3");
        puts_("proc/20/task/20/comm", "b\n");
        puts_("proc/20/task/25/comm", "b2\n");
        puts_("proc/20/task/21/comm", "b1\n");

        ck_assert_int_eq(procfs_list_pids(root, &pids, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_int_eq(pids[0], 1);
        ck_assert_int_eq(pids[1], 3);
        ck_assert_int_eq(pids[2], 20);
        ck_assert_int_eq(pids[3], 100000);

        ck_assert_int_eq(procfs_list_tids(root, 20, &tids, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(tids[0], 20);
        ck_assert_int_eq(tids[1], 21);
        ck_assert_int_eq(tids[2], 25);

        n = 99;
        ck_assert_int_eq(procfs_list_tids(root, 3, &x, &n), -ESRCH); /* no task dir */
        ck_assert_int_eq(procfs_list_tids(root, 4, &x, &n), -ESRCH);
        ck_assert_ptr_null(x);
        ck_assert_uint_eq(n, 99);
}
END_TEST

typedef struct Visits {
        pid_t tids[64];
        size_t n;
        int fail_at; /* return fail_r for this tid */
        int fail_r;
} Visits;

static int record_visit(pid_t pid, pid_t tid, void *userdata) {
        Visits *v = userdata;

        ck_assert_uint_lt(v->n, ELEMENTSOF(v->tids));
        v->tids[v->n++] = tid;
        if (tid == v->fail_at)
                return v->fail_r;
        return 0;
}

START_TEST(test_foreach_fixture) {
        char p[PATH_MAX];
        Visits v = {};

        puts_("proc/30/task/30/comm", "a\n");
        puts_("proc/30/task/32/comm", "b\n");
        puts_("proc/30/task/31/comm", "c\n");
        snprintf(p, sizeof(p), "%s/proc/40/task", root);
        mkdir_p(p); /* a process whose task dir is empty: gone */

        ck_assert_int_eq(procfs_foreach_thread(root, 30, record_visit, &v), 3);
        ck_assert_uint_eq(v.n, 3);
        ck_assert_int_eq(v.tids[0], 30);
        ck_assert_int_eq(v.tids[1], 31);
        ck_assert_int_eq(v.tids[2], 32);

        /* A thread that exited under the visitor is skipped and not counted. */
        v = (Visits){.fail_at = 31, .fail_r = -ESRCH};
        ck_assert_int_eq(procfs_foreach_thread(root, 30, record_visit, &v), 2);
        ck_assert_uint_eq(v.n, 3);

        /* Any other error stops the walk. */
        v = (Visits){.fail_at = 31, .fail_r = -EPERM};
        ck_assert_int_eq(procfs_foreach_thread(root, 30, record_visit, &v), -EPERM);
        ck_assert_uint_eq(v.n, 2);

        v = (Visits){};
        ck_assert_int_eq(procfs_foreach_thread(root, 41, record_visit, &v), -ESRCH);
        ck_assert_int_eq(procfs_foreach_thread(root, 40, record_visit, &v), -ESRCH);
        ck_assert_uint_eq(v.n, 0);
}
END_TEST

/* --- the real /proc ------------------------------------------------------------------------ */

/* procfs_stat_is_dead(): a zombie or dead leader with no other thread left. */
START_TEST(test_stat_is_dead) {
        static const struct {
                char state;
                unsigned n_threads;
                bool dead;
        } cases[] = {
                {'R', 1, false}, {'S', 1, false}, {'D', 4, false}, {'T', 1, false},
                {'t', 1, false}, {'I', 1, false}, {'Z', 1, true},  {'Z', 0, true},
                {'X', 1, true},  {'x', 1, true},  {'Z', 2, false}, /* a leader that called pthread_exit():
                                                                      its threads live on */
                {'X', 3, false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ProcfsStat st = {.state = cases[i].state, .n_threads = cases[i].n_threads};

                ck_assert_msg(
                        procfs_stat_is_dead(&st) == cases[i].dead, "state %c, %u threads", cases[i].state,
                        cases[i].n_threads);
        }
}
END_TEST

/* The clock ticks since boot now (CLOCK_BOOTTIME), as /proc/PID/stat's starttime counts. */
static unsigned long long boot_ticks_now(void) {
        struct timespec ts;
        long hz = sysconf(_SC_CLK_TCK);

        ck_assert_int_eq(clock_gettime(CLOCK_BOOTTIME, &ts), 0);
        return ((unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec) /
                (1000000000ULL / (unsigned long long)hz);
}

static uint64_t monotonic_ns_now(void) {
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* procfs_started_before(): this process against now and a minute ago; a later start fails. */
START_TEST(test_started_before) {
        ProcfsStat self;
        long hz = sysconf(_SC_CLK_TCK);
        uint64_t now = monotonic_ns_now();

        ck_assert_int_eq(procfs_read_stat(NULL, getpid(), 0, &self), 0);
        ck_assert(procfs_started_before(self.starttime, now));
        ck_assert(procfs_started_before(self.starttime, 0)); /* no event */
        /* A task started 10 s from now (a PID reused after the event) did not. */
        ck_assert(!procfs_started_before(boot_ticks_now() + 10 * (unsigned long long)hz, now));
        /* One started at boot did, whenever the event. */
        ck_assert(procfs_started_before(0, 1));
}
END_TEST

/* A "(…" child of a service manager (pid, parent ppid), with its and its parent's executables. */
static void put_child(int pid, const char *comm, int ppid, const char *exe, unsigned long long starttime) {
        char rel[64];

        snprintf(rel, sizeof rel, "proc/%d/stat", pid);
        put_stat(rel, pid, comm, ppid, 0, starttime);
        snprintf(rel, sizeof rel, "proc/%d/exe", pid);
        if (exe)
                put_link(rel, exe);
}

static bool manager_child(int pid) {
        ProcfsStat st;

        ck_assert_int_eq(procfs_read_stat(root, pid, 0, &st), 0);
        return procfs_is_service_manager_child(root, pid, &st);
}

START_TEST(test_service_manager_child) {
        unsigned long long young = boot_ticks_now(), old = 0;
        ProcfsStat st;

        /* PID 1 and a user manager (PID 500), both systemd; a shell (PID 600). */
        put_child(1, "systemd", 0, "/usr/lib/systemd/systemd", old);
        puts_("proc/1/comm", "systemd\n");
        put_child(500, "systemd", 1, "/usr/lib/systemd/systemd", old);
        puts_("proc/500/comm", "systemd\n");
        put_child(600, "bash", 1, "/usr/bin/bash", old);
        puts_("proc/600/comm", "bash\n");

        /* Not "(…": never. */
        put_child(10, "sshd", 1, "/usr/lib/systemd/systemd", young);
        ck_assert(!manager_child(10));
        /* systemd's forked child, still running systemd: yes, old or young. */
        put_child(11, "(sshd)", 1, "/usr/lib/systemd/systemd", old);
        ck_assert(manager_child(11));
        /* A user manager's child running systemd-executor (systemd 255 and later). */
        put_child(12, "(sd-pam)", 500, "/usr/lib/systemd/systemd-executor", old);
        ck_assert(manager_child(12));
        /* A "(…" child of a shell: not a service manager's. */
        put_child(13, "(sshd)", 600, "/usr/bin/bash", young);
        ck_assert(!manager_child(13));
        /* A daemon calling itself "(foo)" under PID 1 for long: its own program, not a child. */
        put_child(14, "(foo)", 1, "/usr/bin/foo", old);
        ck_assert(!manager_child(14));
        /* The same program, just forked (younger than the age limit): exec'ing, its EXEC follows. */
        put_child(15, "(foo)", 1, "/usr/bin/foo", young);
        ck_assert(manager_child(15));
        /* Old, but its comm changed since the caller's read: it is being exec'd. */
        put_child(16, "(bar)", 1, "/usr/bin/bar", old);
        ck_assert_int_eq(procfs_read_stat(root, 16, 0, &st), 0);
        put_child(16, "bar", 1, NULL, old);
        ck_assert(procfs_is_service_manager_child(root, 16, &st));
        /* Its executable unreadable (no ptrace access, gone): not known to be one. */
        put_child(17, "(baz)", 1, NULL, young);
        ck_assert(!manager_child(17));
        /* A parent whose comm can't be read: not a service manager. */
        put_child(18, "(qux)", 700, "/usr/lib/systemd/systemd", young);
        ck_assert(!manager_child(18));
}
END_TEST

static char **saved_argv;

/* Field 22 of a stat line, parsed independently of procfs.c with sscanf. */
static unsigned long long stat_starttime(const char *path) {
        char buf[2048];
        unsigned long long t = 0;
        ssize_t n;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        ck_assert_int_gt(n, 0);
        buf[n] = '\0';
        ck_assert_int_eq(
                sscanf(strrchr(buf, ')') + 2,
                       "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                       &t),
                1);
        return t;
}

START_TEST(test_real_self) {
        _cleanup_free_ char *exe = NULL, *cmdline = NULL, *expect_cmdline = NULL, *cg = NULL;
        _cleanup_cpuset_ CpuSet allowed = CPUSET_NULL, expect_allowed = CPUSET_NULL;
        char comm[16], path[PATH_MAX], real_exe[PATH_MAX];
        uint64_t t;
        uid_t uid;
        pid_t pid = getpid();
        cpu_set_t mask;
        size_t len = 0;

        /* A comm that breaks naive stat parsers, in the kernel's own stat line. */
        ck_assert_int_eq(prctl(PR_SET_NAME, "a) (b c) S 1 2"), 0);
        ck_assert_int_eq(procfs_read_comm(NULL, pid, 0, comm), 0);
        ck_assert_str_eq(comm, "a) (b c) S 1 2");
        ck_assert_int_eq(procfs_read_comm("/", pid, gettid(), comm), 0);
        ck_assert_str_eq(comm, "a) (b c) S 1 2");

        ck_assert_int_eq(procfs_read_starttime(NULL, pid, &t), 0);
        ck_assert_uint_eq(t, stat_starttime("/proc/self/stat"));
        ck_assert_uint_gt(t, 0);
        ck_assert_int_eq(procfs_is_kernel_thread(NULL, pid), 0);
        {
                ProcfsStat st;

                /* The comm of the stat line is the one /proc/PID/comm shows. */
                ck_assert_int_eq(procfs_read_stat(NULL, pid, 0, &st), 0);
                ck_assert_str_eq(st.comm, "a) (b c) S 1 2");
                ck_assert_uint_eq(st.starttime, t);
                {
                        _cleanup_free_ pid_t *tids = NULL;
                        size_t n = 0;

                        /* num_threads is the number of entries of /proc/PID/task. */
                        ck_assert_int_eq(procfs_list_tids(NULL, pid, &tids, &n), 0);
                        ck_assert_uint_eq(st.n_threads, n);
                        ck_assert_uint_ge(st.n_threads, 1);
                }
        }

        ck_assert_int_eq(procfs_read_euid(NULL, pid, &uid), 0);
        ck_assert_uint_eq(uid, geteuid());

        ck_assert_ptr_nonnull(realpath("/proc/self/exe", real_exe));
        snprintf(path, sizeof(path), "%s/tests/unit/test-procfs", getenv("AFFINITYD_BUILD_ROOT") ?: ".");
        ck_assert_int_eq(procfs_read_exe(NULL, pid, &exe), 0);
        ck_assert_str_eq(exe, real_exe);
        if (getenv("AFFINITYD_BUILD_ROOT")) {
                char rp[PATH_MAX];
                ck_assert_ptr_nonnull(realpath(path, rp));
                ck_assert_str_eq(exe, rp);
        }

        for (char **a = saved_argv; *a; a++)
                len += strlen(*a) + 1;
        expect_cmdline = calloc(1, len + 1);
        ck_assert_ptr_nonnull(expect_cmdline);
        for (char **a = saved_argv; *a; a++) {
                if (a != saved_argv)
                        strcat(expect_cmdline, " ");
                strcat(expect_cmdline, *a);
        }
        ck_assert_int_eq(procfs_read_cmdline(NULL, pid, &cmdline), 0);
        ck_assert_str_eq(cmdline, expect_cmdline);

        ck_assert_int_eq(sched_getaffinity(0, sizeof(mask), &mask), 0);
        ck_assert_int_eq(cpuset_from_cpu_set(&mask, sizeof(mask), &expect_allowed), 0);
        ck_assert_int_eq(procfs_read_cpus_allowed(NULL, pid, 0, &allowed), 0);
        ck_assert(cpuset_equal(&allowed, &expect_allowed));
        ck_assert(!cpuset_is_empty(&allowed));

        /* The cgroup is one of the lines of /proc/self/cgroup: the v2 path unless it is "/",
         * then name=systemd's. */
        ck_assert_int_eq(procfs_read_cgroup(NULL, pid, &cg), 0);
        {
                char buf[4096], v2[4096] = "", sd[4096] = "";
                FILE *f = fopen("/proc/self/cgroup", "re");
                ck_assert_ptr_nonnull(f);
                while (fgets(buf, sizeof(buf), f)) {
                        buf[strcspn(buf, "\n")] = '\0';
                        if (strncmp(buf, "0::", 3) == 0)
                                snprintf(v2, sizeof(v2), "%s", buf + 3);
                        else if (strstr(buf, ":name=systemd:"))
                                snprintf(sd, sizeof(sd), "%s", strstr(buf, ":name=systemd:") + 14);
                }
                fclose(f);
                if (*v2 && !streq(v2, "/"))
                        ck_assert_str_eq(cg, v2);
                else if (*sd)
                        ck_assert_str_eq(cg, sd);
                else
                        ck_assert_str_eq(cg, v2);
        }
}
END_TEST

START_TEST(test_real_kernel_thread) {
        char comm[16];
        char *exe = NULL;

        /* kthreadd is PID 2 in the initial PID namespace. */
        if (procfs_read_comm(NULL, 2, 0, comm) < 0 || !streq(comm, "kthreadd")) {
                /* In a PID namespace no kernel thread is visible; PID 1 is then ours. */
                ck_assert_int_eq(procfs_is_kernel_thread(NULL, 1), 0);
                return;
        }
        ck_assert_int_eq(procfs_is_kernel_thread(NULL, 2), 1);
        ck_assert_int_eq(procfs_read_exe(NULL, 2, &exe), -ENOENT);
        ck_assert_ptr_null(exe);
        ck_assert_int_eq(procfs_is_kernel_thread(NULL, 1), 0);
}
END_TEST

/* The child of test_real_zombie_leader: its leader leaves with pthread_exit() while a second
 * thread waits for a byte on fd, then exits. */
static int zombie_leader_fd = -1;

static void *zombie_leader_worker(void *userdata) {
        char c;

        (void)!read(zombie_leader_fd, &c, 1);
        _exit(0); /* not exit(): no leak checker run in this copy of the test process */
}

/*
 * What the daemon's liveness check relies on (procfs_stat_is_dead()): a leader that
 * called pthread_exit() is a zombie ('Z') while its other threads live on, and num_threads still counts
 * them; once the last other thread has exited, num_threads is 1 (the zombie leader itself) until
 * the process is reaped.
 */
START_TEST(test_real_zombie_leader) {
        ProcfsStat st = {};
        pid_t child;
        int p[2], status;

        ck_assert_int_eq(pipe(p), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pthread_t t;

                close(p[1]);
                zombie_leader_fd = p[0];
                if (pthread_create(&t, NULL, zombie_leader_worker, NULL) != 0)
                        _exit(1);
                pthread_exit(NULL);
        }
        close(p[0]);

        /* Wait for the leader to be a zombie with the worker alive. */
        for (unsigned i = 0; i < 10000; i++) {
                ck_assert_int_eq(procfs_read_stat(NULL, child, 0, &st), 0);
                if (st.state == 'Z')
                        break;
                usleep(1000);
        }
        ck_assert_int_eq(st.state, 'Z');
        ck_assert_uint_eq(st.n_threads, 2);

        /* The worker exits: the zombie leader is all that is left. */
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        close(p[1]);
        for (unsigned i = 0; i < 10000; i++) {
                ck_assert_int_eq(procfs_read_stat(NULL, child, 0, &st), 0);
                if (st.n_threads == 1)
                        break;
                usleep(1000);
        }
        ck_assert_int_eq(st.state, 'Z');
        ck_assert_uint_eq(st.n_threads, 1);

        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ck_assert_int_eq(procfs_read_stat(NULL, child, 0, &st), -ESRCH);
}
END_TEST

START_TEST(test_real_gone) {
        _cleanup_free_ pid_t *pids = NULL;
        uint64_t t;
        pid_t child, *x = NULL;
        size_t n;
        char comm[16];
        int status;

        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0)
                _exit(0);
        ck_assert_int_eq(waitpid(child, &status, 0), child);

        ck_assert_int_eq(procfs_read_starttime(NULL, child, &t), -ESRCH);
        ck_assert_int_eq(procfs_read_comm(NULL, child, 0, comm), -ESRCH);
        ck_assert_int_eq(procfs_list_tids(NULL, child, &x, &n), -ESRCH);

        ck_assert_int_eq(procfs_list_pids(NULL, &pids, &n), 0);
        ck_assert_uint_gt(n, 0);
        {
                bool self = false, dead = false;
                for (size_t i = 0; i < n; i++) {
                        if (i > 0)
                                ck_assert_int_lt(pids[i - 1], pids[i]);
                        self = self || pids[i] == getpid();
                        dead = dead || pids[i] == child;
                }
                ck_assert(self);
                ck_assert(!dead);
        }
}
END_TEST

/* Threads that block until released, reporting their TIDs. */
#define MAX_THREADS 16

typedef struct Threads {
        pthread_t threads[MAX_THREADS];
        _Atomic pid_t tids[MAX_THREADS];
        atomic_uint n;
        sem_t ready, quit;
        /* visitor state */
        pid_t visited[4 * MAX_THREADS];
        size_t n_visited;
        unsigned spawn_from_visitor; /* threads the visitor still has to create */
} Threads;

typedef struct Slot {
        Threads *t;
        unsigned i;
} Slot;

static void *slot_main(void *p) {
        Slot *s = p;
        Threads *t = s->t;
        unsigned i = s->i;

        free(s);
        atomic_store(&t->tids[i], gettid());
        sem_post(&t->ready);
        sem_wait(&t->quit);
        return NULL;
}

static void spawn(Threads *t) {
        Slot *s = malloc(sizeof(Slot));
        unsigned i = atomic_fetch_add(&t->n, 1);

        ck_assert_ptr_nonnull(s);
        ck_assert_uint_lt(i, MAX_THREADS);
        *s = (Slot){.t = t, .i = i};
        ck_assert_int_eq(pthread_create(&t->threads[i], NULL, slot_main, s), 0);
}

static void stop_all(Threads *t) {
        unsigned n = atomic_load(&t->n);

        for (unsigned i = 0; i < n; i++)
                sem_post(&t->quit);
        for (unsigned i = 0; i < n; i++)
                ck_assert_int_eq(pthread_join(t->threads[i], NULL), 0);
}

static int spawning_visitor(pid_t pid, pid_t tid, void *userdata) {
        Threads *t = userdata;

        ck_assert_int_eq(pid, getpid());
        ck_assert_uint_lt(t->n_visited, ELEMENTSOF(t->visited));
        t->visited[t->n_visited++] = tid;
        if (t->spawn_from_visitor > 0) {
                t->spawn_from_visitor--;
                spawn(t);
        }
        return 0;
}

static void check_visited(Threads *t) {
        unsigned n = atomic_load(&t->n);

        for (unsigned i = 0; i < n; i++)
                sem_wait(&t->ready); /* every TID is known */

        /* Each thread exactly once: the main thread and every one created. */
        ck_assert_uint_eq(t->n_visited, n + 1);
        for (size_t i = 0; i < t->n_visited; i++)
                for (size_t j = i + 1; j < t->n_visited; j++)
                        ck_assert_int_ne(t->visited[i], t->visited[j]);
        for (unsigned i = 0; i <= n; i++) {
                pid_t want = i == n ? gettid() : atomic_load(&t->tids[i]);
                bool found = false;
                for (size_t j = 0; j < t->n_visited; j++)
                        found = found || t->visited[j] == want;
                ck_assert_msg(found, "thread %d not visited", (int)want);
        }
}

START_TEST(test_real_foreach_threads) {
        Threads *t = calloc(1, sizeof(Threads));
        int r;

        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(sem_init(&t->ready, 0, 0), 0);
        ck_assert_int_eq(sem_init(&t->quit, 0, 0), 0);
        for (int i = 0; i < 4; i++)
                spawn(t);

        r = procfs_foreach_thread(NULL, getpid(), spawning_visitor, t);
        ck_assert_int_eq(r, 5);
        check_visited(t);
        stop_all(t);
        free(t);
}
END_TEST

START_TEST(test_real_foreach_threads_created_while_visiting) {
        Threads *t = calloc(1, sizeof(Threads));
        int r;

        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(sem_init(&t->ready, 0, 0), 0);
        ck_assert_int_eq(sem_init(&t->quit, 0, 0), 0);
        for (int i = 0; i < 2; i++)
                spawn(t);

        /* The visitor creates a thread on each of its first 6 calls: those appear in later
         * passes over /proc/self/task and must be visited too, each once. */
        t->spawn_from_visitor = 6;
        r = procfs_foreach_thread("/", getpid(), spawning_visitor, t);
        ck_assert_uint_eq(t->spawn_from_visitor, 0);
        ck_assert_uint_eq(atomic_load(&t->n), 8);
        ck_assert_int_eq(r, 9);
        check_visited(t);
        stop_all(t);
        free(t);
}
END_TEST

int main(int argc, char **argv) {
        Suite *s = suite_create("procfs");
        TCase *fx = tcase_create("fixture"), *parse = tcase_create("parse"), *real = tcase_create("real");
        SRunner *sr;
        int failed;

        saved_argv = argv;

        tcase_add_checked_fixture(fx, fixture_setup, fixture_teardown);
        tcase_add_test(fx, test_comm);
        tcase_add_test(fx, test_stat);
        tcase_add_test(fx, test_exe);
        tcase_add_test(fx, test_service_manager_child);
        tcase_add_test(fx, test_started_before);
        tcase_add_test(fx, test_cmdline);
        tcase_add_test(fx, test_cmdline_whole);
        tcase_add_test(fx, test_cmdline_cap);
        tcase_add_test(fx, test_cmdline_max);
        tcase_add_test(fx, test_status);
        tcase_add_test(fx, test_cgroup);
        tcase_add_test(fx, test_unit_from_cgroup);
        tcase_add_test(fx, test_list);
        tcase_add_test(fx, test_foreach_fixture);
        tcase_add_test(fx, test_hidepid);
        suite_add_tcase(s, fx);

        tcase_add_test(parse, test_parse_stat);
        tcase_add_test(parse, test_stat_is_dead);
        tcase_add_test(parse, test_parse_status);
        tcase_add_test(parse, test_parse_status_ids);
        suite_add_tcase(s, parse);

        tcase_add_test(real, test_real_self);
        tcase_add_test(real, test_real_kernel_thread);
        tcase_add_test(real, test_real_gone);
        tcase_add_test(real, test_real_zombie_leader);
        tcase_add_test(real, test_real_foreach_threads);
        tcase_add_test(real, test_real_foreach_threads_created_while_visiting);
        suite_add_tcase(s, real);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
