/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of cgroup.c: the CPUs a task's cpuset allows and its v1 cpu cgroup's real-time runtime,
 * on fixture trees of the three layouts (unified, hybrid, legacy v1), and for real: a v1 cpuset
 * cgroup allowing only CPU 0 is created, a child process moved there and read back, and
 * everything is removed again (an unchecked teardown in the runner removes what a failed test
 * left behind).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apply-sched.h"
#include "cgroup.h"
#include "cgroup-fixture.h"
#include "cpuset.h"
#include "macro.h"
#include "procfs.h"

static char *root;       /* the fixture tree of the current test */
static pid_t runner_pid; /* names the real cgroups this run creates: affinityd-test-PID-... */

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

/* Writes s to ROOT/rel, creating directories. */
static void put(const char *rel, const char *s) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        *strrchr(path, '/') = '\0';
        mkdir_p(path);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        f = fopen(path, "we");
        ck_assert_msg(f != NULL, "%s: %m", path);
        ck_assert_int_ge(fputs(s, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

static void put_dir(const char *rel) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        mkdir_p(path);
}

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

static void fixture_setup(void) {
        char tmpl[] = "/tmp/test-cgroup-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        root = strdup(tmpl);
        ck_assert_ptr_nonnull(root);
}

static void fixture_teardown(void) {
        ck_assert_int_eq(nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS), 0);
        root = mfree(root);
}

/* Reads the cpuset of pid/tid under root and checks it against the cpu-list want and the
 * cgroup path want_path. */
static void expect_cpuset(pid_t pid, pid_t tid, const char *want, const char *want_path) {
        _cleanup_cpuset_ CpuSet got = CPUSET_NULL, exp = CPUSET_NULL;
        _cleanup_free_ char *path = NULL, *s = NULL;
        int r;

        ck_assert_int_eq(cpuset_parse_list(want, &exp, NULL), 0);
        r = cgroup_read_cpuset(root, pid, tid, &got, &path);
        ck_assert_msg(r == 0, "cpuset of %d/%d: %s", (int)pid, (int)tid, strerror(-r));
        s = cpuset_to_string(&got);
        ck_assert_msg(
                cpuset_equal(&got, &exp), "cpuset of %d/%d: %s, expected %s", (int)pid, (int)tid, s, want);
        ck_assert_str_eq(path, want_path);
}

/* An error leaves the output set alone. */
static void expect_cpuset_error(pid_t pid, pid_t tid, int error) {
        _cleanup_cpuset_ CpuSet got = CPUSET_NULL;
        char *path = (char *)"untouched";

        ck_assert_int_eq(cpuset_add(&got, 42), 0);
        ck_assert_int_eq(cgroup_read_cpuset(root, pid, tid, &got, &path), error);
        ck_assert_uint_eq(cpuset_count(&got), 1);
        ck_assert(cpuset_contains(&got, 42));
        ck_assert_str_eq(path, "untouched");
}

START_TEST(test_unified) {
        put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
        put("sys/fs/cgroup/cpuset.cpus.effective", "0-15\n");
        put("sys/fs/cgroup/system.slice/cpuset.cpus.effective", "0-7\n");
        put("sys/fs/cgroup/system.slice/web.service/cpuset.cpus.effective", "0-3\n");
        put("sys/fs/cgroup/system.slice/web.service/worker/cpuset.cpus.effective", "2\n");
        put_dir("sys/fs/cgroup/system.slice/db.service/inner");
        put("sys/fs/cgroup/broken/cpuset.cpus.effective", "0-x\n");

        put("proc/100/cgroup", "0::/system.slice/web.service\n");
        put("proc/100/task/105/cgroup", "0::/system.slice/web.service/worker\n");
        put("proc/101/cgroup", "0::/system.slice/db.service/inner\n");
        put("proc/102/cgroup", "0::/\n");
        put("proc/103/cgroup", "0::/user.slice/gone.scope\n");
        put("proc/104/cgroup", "0::/broken\n");
        put("proc/106/cgroup", "0::relative\n");

        expect_cpuset(100, 0, "0-3", "/system.slice/web.service");
        /* A thread in a threaded sub-cgroup of its own. */
        expect_cpuset(100, 105, "2", "/system.slice/web.service/worker");
        /* cpuset not enabled below system.slice: bound by the nearest ancestor with the file. */
        expect_cpuset(101, 0, "0-7", "/system.slice/db.service/inner");
        expect_cpuset(102, 0, "0-15", "/");
        /* The cgroup directory is gone. */
        expect_cpuset_error(103, 0, -ENOENT);
        expect_cpuset_error(104, 0, -EBADMSG);
        expect_cpuset_error(106, 0, -EBADMSG);
        /* No such process, no such thread. */
        expect_cpuset_error(999, 0, -ESRCH);
        expect_cpuset_error(100, 999, -ESRCH);
        expect_cpuset_error(0, 0, -EINVAL);
        expect_cpuset_error(100, -1, -EINVAL);

        /* Path output is optional. */
        {
                _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
                ck_assert_int_eq(cgroup_read_cpuset(root, 100, 0, &s, NULL), 0);
                ck_assert_uint_eq(cpuset_count(&s), 4);
        }
}
END_TEST

/* Outside the reader's cgroup namespace ("/.."), or nothing resolvable at all: -EXDEV, and no
 * other cgroup's file is read in its place. */
START_TEST(test_unresolvable) {
        _cleanup_strv_free_ char **dirs = NULL;

        put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n");
        put("sys/fs/cgroup/cpuset.cpus.effective", "0-15\n");
        put("sys/fs/cgroup/pod/cpuset.cpus.effective", "4-5\n");
        put("proc/100/cgroup", "0::/../../pod\n");
        put("proc/101/cgroup", "0::/pod\n");

        expect_cpuset_error(100, 0, -EXDEV);
        ck_assert_int_eq(cgroup_cpuset_dirs(root, "0::/../pod\n", &dirs), -EXDEV);
        expect_cpuset(101, 0, "4-5", "/pod");

        cgroup_set_unresolvable(true);
        expect_cpuset_error(101, 0, -EXDEV);
        ck_assert_int_eq(cgroup_cpuset_dirs(root, "0::/pod\n", &dirs), -EXDEV);
        cgroup_set_unresolvable(false);
        expect_cpuset(101, 0, "4-5", "/pod");
}
END_TEST

START_TEST(test_unified_without_cpuset) {
        /* cgroup2 without the cpuset controller and no v1 cpuset: nothing restricts the task. */
        put("sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
        put("sys/fs/cgroup/cpuset.cpus.effective", "0-3\n"); /* would be wrong to read */
        put("proc/100/cgroup", "0::/system.slice/x.service\n");
        expect_cpuset_error(100, 0, -ENODATA);
}
END_TEST

START_TEST(test_legacy_v1) {
        /* Only v1 hierarchies; systemd-style "cpu,cpuacct" mount with a "cpu" symlink. */
        put_dir("sys/fs/cgroup/cpuset");
        put("sys/fs/cgroup/cpuset/lim/cpuset.effective_cpus", "2-3\n");
        put("sys/fs/cgroup/cpuset/lim/cpuset.cpus", "0-3\n");
        put("sys/fs/cgroup/cpuset/old/cpuset.cpus", "1\n"); /* a kernel without effective_cpus */
        put("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-7\n");
        put_dir("sys/fs/cgroup/cpuset/nofiles");
        put("sys/fs/cgroup/cpu,cpuacct/grp/cpu.rt_runtime_us", "0\n");
        put("sys/fs/cgroup/cpu,cpuacct/cpu.rt_runtime_us", "950000\n");
        put("sys/fs/cgroup/cpu,cpuacct/unlimited/cpu.rt_runtime_us", "-1\n");
        put("sys/fs/cgroup/cpu,cpuacct/garbage/cpu.rt_runtime_us", "lots\n");
        put_dir("sys/fs/cgroup/cpu,cpuacct/nort");
        put_dir("sys/fs/cgroup/systemd/system.slice/x.service");

        put("proc/200/cgroup",
            "12:cpu,cpuacct:/grp\n"
            "11:memory:/system.slice/x.service\n"
            "3:cpuset:/lim\n"
            "1:name=systemd:/system.slice/x.service\n");
        put("proc/201/cgroup", "3:cpuset:/old\n12:cpu,cpuacct:/\n");
        put("proc/202/cgroup", "12:cpu,cpuacct:/unlimited\n1:name=systemd:/\n");
        put("proc/203/cgroup", "3:cpuset:/\n12:cpu,cpuacct:/garbage\n");
        put("proc/204/cgroup", "3:cpuset:/nofiles\n12:cpu,cpuacct:/nort\n");
        put("proc/200/task/210/cgroup",
            "12:cpu,cpuacct:/\n3:cpuset:/\n1:name=systemd:/system.slice/x.service\n");

        expect_cpuset(200, 0, "2-3", "/lim");
        expect_cpuset(201, 0, "1", "/old");
        expect_cpuset(203, 0, "0-7", "/");
        expect_cpuset(200, 210, "0-7", "/");
        expect_cpuset_error(202, 0, -ENODATA); /* no cpuset line */
        expect_cpuset_error(204, 0, -ENOENT);

        /* The hierarchy directories. */
        {
                _cleanup_free_ char *dir = NULL, *path = NULL, *want = NULL;

                ck_assert_int_eq(cgroup_find_v1(root, 200, 0, "cpu", &dir, &path), 0);
                ck_assert_int_ge(asprintf(&want, "%s/sys/fs/cgroup/cpu,cpuacct/grp", root), 0);
                ck_assert_str_eq(dir, want);
                ck_assert_str_eq(path, "/grp");
                dir = mfree(dir);
                want = mfree(want);
                ck_assert_int_eq(cgroup_find_v1(root, 200, 0, "name=systemd", &dir, NULL), 0);
                ck_assert_int_ge(
                        asprintf(&want, "%s/sys/fs/cgroup/systemd/system.slice/x.service", root), 0);
                ck_assert_str_eq(dir, want);
                dir = mfree(dir);
                want = mfree(want);
                /* A controller at the hierarchy's root: the directory itself, no trailing '/'. */
                ck_assert_int_eq(cgroup_find_v1(root, 201, 0, "cpuacct", &dir, NULL), 0);
                ck_assert_int_ge(asprintf(&want, "%s/sys/fs/cgroup/cpu,cpuacct", root), 0);
                ck_assert_str_eq(dir, want);
                dir = mfree(dir);
                /* "cpu" must not match "cpuset" (and vice versa): 202 has no cpuset line. */
                ck_assert_int_eq(cgroup_find_v1(root, 202, 0, "cpuset", &dir, NULL), -ENODATA);
                ck_assert_int_eq(cgroup_find_v1(root, 200, 0, "blkio", &dir, NULL), -ENODATA);
                /* memory has a line but its hierarchy is not mounted in the fixture. */
                ck_assert_int_eq(cgroup_find_v1(root, 200, 0, "memory", &dir, NULL), -ENODATA);
                ck_assert_int_eq(cgroup_find_v1(root, 999, 0, "cpu", &dir, NULL), -ESRCH);
                ck_assert_ptr_null(dir);
        }

        /* Real-time runtime of the cpu cgroup. */
        {
                _cleanup_free_ char *path = NULL;
                int64_t rt = 12345;

                ck_assert_int_eq(cgroup_read_rt_runtime(root, 200, 0, &rt, &path), 0);
                ck_assert_int_eq(rt, 0);
                ck_assert_str_eq(path, "/grp");
                ck_assert_int_eq(cgroup_read_rt_runtime(root, 201, 0, &rt, NULL), 0);
                ck_assert_int_eq(rt, 950000);
                ck_assert_int_eq(cgroup_read_rt_runtime(root, 202, 0, &rt, NULL), 0);
                ck_assert_int_eq(rt, -1);
                rt = 777;
                ck_assert_int_eq(cgroup_read_rt_runtime(root, 203, 0, &rt, NULL), -EBADMSG);
                ck_assert_int_eq(cgroup_read_rt_runtime(root, 204, 0, &rt, NULL), -ENOENT);
                ck_assert_int_eq(cgroup_read_rt_runtime(root, 999, 0, &rt, NULL), -ESRCH);
                ck_assert_int_eq(rt, 777);
                ck_assert_int_eq(cgroup_read_rt_runtime(root, 200, 210, &rt, NULL), 0);
                ck_assert_int_eq(rt, 950000);
        }
}
END_TEST

START_TEST(test_v1_symlinked_controller) {
        /* Hierarchy mounted under a joint name, found through the controller's own name
         * (systemd's "cpu" -> "cpu,cpuacct" symlink), and a joint name that is the directory. */
        put("sys/fs/cgroup/cpu,cpuacct/a/cpu.rt_runtime_us", "5000\n");
        {
                char link[PATH_MAX];
                snprintf(link, sizeof(link), "%s/sys/fs/cgroup/cpu", root);
                ck_assert_int_eq(symlink("cpu,cpuacct", link), 0);
        }
        put("sys/fs/cgroup/cpuset,cpu2/b/cpuset.effective_cpus", "4-5\n");
        /* The kernel lists "cpuacct,cpu" in whatever order it has; the symlink still finds it. */
        put("proc/300/cgroup", "4:cpuacct,cpu:/a\n3:cpuset,cpu2:/b\n");

        int64_t rt = 0;
        ck_assert_int_eq(cgroup_read_rt_runtime(root, 300, 0, &rt, NULL), 0);
        ck_assert_int_eq(rt, 5000);
        expect_cpuset(300, 0, "4-5", "/b");
}
END_TEST

START_TEST(test_hybrid) {
        /* systemd's hybrid layout: cgroup2 at unified/ without cpuset, cpuset on v1. */
        put("sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
        put("sys/fs/cgroup/unified/cpuset.cpus.effective", "0-63\n"); /* must not be used */
        put("sys/fs/cgroup/cpuset/pinned/cpuset.effective_cpus", "1\n");
        put("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-1\n");
        put("proc/400/cgroup",
            "9:name=systemd:/user.slice/x.scope\n"
            "3:cpuset:/pinned\n"
            "0::/user.slice/x.scope\n");
        put("proc/401/cgroup", "3:cpuset:/\n0::/\n");
        expect_cpuset(400, 0, "1", "/pinned");
        expect_cpuset(401, 0, "0-1", "/");
}
END_TEST

START_TEST(test_hybrid_cpuset_on_unified) {
        /* A hybrid machine whose cpuset controller was left to the unified hierarchy. */
        put("sys/fs/cgroup/unified/cgroup.controllers", "cpuset hugetlb\n");
        put("sys/fs/cgroup/unified/cpuset.cpus.effective", "0-3\n");
        put("sys/fs/cgroup/unified/a/cpuset.cpus.effective", "3\n");
        put_dir("sys/fs/cgroup/cpu");
        put("proc/500/cgroup", "4:cpu:/\n0::/a\n");
        expect_cpuset(500, 0, "3", "/a");
}
END_TEST

/* The directories cgroup_cpuset_dirs() gives for pid: want, "|"-separated, relative to root. */
static void expect_dirs(pid_t pid, const char *want) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *got = NULL, *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        ck_assert_int_eq(cgroup_read_membership(root, pid, &text), 0);
        r = cgroup_cpuset_dirs(root, text, &dirs);
        ck_assert_msg(r == 0, "cpuset dirs of %d: %s", (int)pid, strerror(-r));
        f = open_memstream(&got, &size);
        ck_assert_ptr_nonnull(f);
        for (char **d = dirs; *d; d++) {
                ck_assert_msg(strncmp(*d, root, strlen(root)) == 0, "%s is not below %s", *d, root);
                fprintf(f, "%s%s", d == dirs ? "" : "|", *d + strlen(root));
        }
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_str_eq(got, want);
}

/* The cgroup directories whose cpuset writes reset a task: its own, then every ancestor. */
START_TEST(test_cpuset_dirs) {
        _cleanup_strv_free_ char **dirs = NULL;
        char *text = NULL;

        /* Unified with cpuset: the v2 tree. */
        put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory\n");
        put_dir("sys/fs/cgroup/system.slice/web.service");
        put("proc/100/cgroup", "0::/system.slice/web.service\n");
        put("proc/102/cgroup", "0::/\n");
        put("proc/106/cgroup", "0::relative\n");
        expect_dirs(
                100, "/sys/fs/cgroup/system.slice/web.service|/sys/fs/cgroup/system.slice|/sys/fs/cgroup");
        expect_dirs(102, "/sys/fs/cgroup");
        ck_assert_int_eq(cgroup_cpuset_dirs(root, "0::relative\n", &dirs), -EBADMSG);
        ck_assert_int_eq(cgroup_read_membership(root, 999, &text), -ESRCH);
        ck_assert_int_eq(cgroup_cpuset_dirs(root, "0::/\n", NULL), -EINVAL);
        ck_assert_int_eq(cgroup_cpuset_dirs(root, NULL, &dirs), -EINVAL);
        ck_assert_ptr_null(dirs);
}
END_TEST

START_TEST(test_cpuset_dirs_v1) {
        _cleanup_strv_free_ char **dirs = NULL;

        /* Hybrid: cgroup2 without cpuset, the v1 cpuset hierarchy decides. */
        put("sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
        put_dir("sys/fs/cgroup/cpuset/a/b");
        put("proc/400/cgroup",
            "9:name=systemd:/user.slice/x.scope\n3:cpuset:/a/b\n0::/user.slice/x.scope\n");
        put("proc/401/cgroup", "9:name=systemd:/\n0::/\n");
        expect_dirs(400, "/sys/fs/cgroup/cpuset/a/b|/sys/fs/cgroup/cpuset/a|/sys/fs/cgroup/cpuset");
        /* In no cpuset hierarchy at all. */
        ck_assert_int_eq(cgroup_cpuset_dirs(root, "9:name=systemd:/\n0::/\n", &dirs), -ENODATA);
}
END_TEST

START_TEST(test_no_cgroups) {
        put("proc/600/cgroup", "");
        expect_cpuset_error(600, 0, -ENODATA);
        put("proc/601/cgroup", "0::/\n"); /* cgroup2 line but no cgroup2 mount */
        expect_cpuset_error(601, 0, -ENODATA);
}
END_TEST

START_TEST(test_format_conflict) {
        _cleanup_cpuset_ CpuSet want = CPUSET_NULL, allow = CPUSET_NULL, empty = CPUSET_NULL;
        _cleanup_free_ char *m = NULL;
        char *untouched = (char *)"x";

        ck_assert_int_eq(cpuset_parse_list("8-15", &want, NULL), 0);
        ck_assert_int_eq(cpuset_parse_list("0-3", &allow, NULL), 0);
        ck_assert_int_eq(cgroup_format_cpuset_conflict("web", &want, 4242, &allow, &m), 0);
        ck_assert_str_eq(m, "policy web wants 8-15, PID 4242's cgroup allows 0-3");
        m = mfree(m);

        ck_assert_int_eq(cpuset_parse_list("1,3,5-6", &want, NULL), 0);
        ck_assert_int_eq(cgroup_format_cpuset_conflict("db-primary", &want, 1, &empty, &m), 0);
        ck_assert_str_eq(m, "policy db-primary wants 1,3,5-6, PID 1's cgroup allows no CPU");

        ck_assert_int_eq(cgroup_format_cpuset_conflict(NULL, &want, 1, &allow, &untouched), -EINVAL);
        ck_assert_int_eq(cgroup_format_cpuset_conflict("x", NULL, 1, &allow, &untouched), -EINVAL);
        ck_assert_str_eq(untouched, "x");
}
END_TEST

/* ---- the real cpuset hierarchy ---- */

/* A child that waits to be killed, and dies with the test process. */
static pid_t spawn_sleeper(void) {
        pid_t parent = getpid(), c = fork();

        ck_assert_int_ge(c, 0);
        if (c == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                for (;;)
                        pause();
        }
        return c;
}

static void reap(pid_t c) {
        int status;

        ck_assert_int_eq(kill(c, SIGKILL), 0);
        ck_assert_int_eq(waitpid(c, &status, 0), c);
}

/*
 * Removes every cgroup affinityd-test-RUNNER-* of the hierarchy at mnt, moving whatever tasks
 * are left in it back to the hierarchy's root first. Runs in the runner (unchecked teardown)
 * so that a test that failed halfway leaves nothing behind.
 */
static void cleanup_hierarchy(const char *controller) {
        _cleanup_free_ char *mnt = v1_mount(controller);
        _cleanup_closedir_ DIR *d = NULL;
        char prefix[64];
        struct dirent *de;

        if (!mnt)
                return;
        snprintf(prefix, sizeof(prefix), "affinityd-test-%d-", (int)runner_pid);
        d = opendir(mnt);
        if (!d)
                return;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
                        char path[PATH_MAX], line[64];
                        FILE *f;

                        snprintf(path, sizeof(path), "%s/%s/cgroup.procs", mnt, de->d_name);
                        f = fopen(path, "re");
                        while (f && fgets(line, sizeof(line), f)) {
                                char to[PATH_MAX];
                                FILE *w;

                                snprintf(to, sizeof(to), "%s/cgroup.procs", mnt);
                                w = fopen(to, "we");
                                if (w) {
                                        fputs(line, w);
                                        fclose(w);
                                }
                        }
                        if (f)
                                fclose(f);
                        snprintf(path, sizeof(path), "%s/%s", mnt, de->d_name);
                        if (rmdir(path) < 0)
                                fprintf(stderr, "test-cgroup: could not remove %s: %m\n", path);
                }
}

static void real_teardown(void) {
        cleanup_hierarchy("cpuset");
}

START_TEST(test_real_v1_cpuset) {
        _cleanup_free_ char *mnt = v1_mount("cpuset"), *orig_path = NULL, *path = NULL, *msg = NULL;
        _cleanup_cpuset_ CpuSet got = CPUSET_NULL, before = CPUSET_NULL, want = CPUSET_NULL,
                                eff = CPUSET_NULL, allowed = CPUSET_NULL;
        char dir[PATH_MAX], name[64], mems[256], buf[128], orig_dir[PATH_MAX];
        pid_t c;

        ck_assert_ptr_nonnull(mnt);
        snprintf(name, sizeof(name), "affinityd-test-%d-cpuset", (int)runner_pid);
        snprintf(dir, sizeof(dir), "%s/%s", mnt, name);
        ck_assert_msg(mkdir(dir, 0755) == 0, "mkdir %s: %m", dir);
        /* A v1 cpuset takes no task until both cpus and mems are set; mems: the parent's. */
        read_str(mnt, "cpuset.mems", mems, sizeof(mems));
        write_str(dir, "cpuset.mems", mems);
        write_str(dir, "cpuset.cpus", "0");

        c = spawn_sleeper();
        /* Where the child starts: our own cpuset (read through the library, then moved back
         * there); the kernel agrees on its CPUs. */
        ck_assert_int_eq(cgroup_read_cpuset(NULL, c, 0, &before, &orig_path), 0);
        ck_assert_int_eq(procfs_read_cpus_allowed(NULL, c, 0, &got), 0);
        ck_assert(cpuset_is_subset(&got, &before));
        ck_assert(cpuset_contains(&before, 0));

        snprintf(buf, sizeof(buf), "%d", (int)c);
        write_str(dir, "cgroup.procs", buf);

        ck_assert_int_eq(cgroup_read_cpuset(NULL, c, 0, &allowed, &path), 0);
        ck_assert_uint_eq(cpuset_count(&allowed), 1);
        ck_assert(cpuset_contains(&allowed, 0));
        ck_assert_str_eq(path + 1, name);
        ck_assert(path[0] == '/');
        /* The kernel narrowed the child's mask to the same set. */
        ck_assert_int_eq(procfs_read_cpus_allowed(NULL, c, 0, &got), 0);
        ck_assert(cpuset_equal(&got, &allowed));
        /* The same through its thread. */
        cpuset_clear(&got);
        ck_assert_int_eq(cgroup_read_cpuset(NULL, c, c, &got, NULL), 0);
        ck_assert(cpuset_equal(&got, &allowed));

        /* A plan wanting CPU 1 only: empty intersection -> the clear error, mask untouched. */
        ck_assert_int_eq(cpuset_add(&want, 1), 0);
        ck_assert(!cpuset_intersects(&want, &allowed));
        ck_assert_int_eq(cgroup_format_cpuset_conflict("web", &want, c, &allowed, &msg), 0);
        snprintf(buf, sizeof(buf), "policy web wants 1, PID %d's cgroup allows 0", (int)c);
        ck_assert_str_eq(msg, buf);
        ck_assert_int_eq(apply_set_thread_affinity(c, &want, &eff), -EINVAL);
        ck_assert_int_eq(procfs_read_cpus_allowed(NULL, c, 0, &got), 0);
        ck_assert(cpuset_equal(&got, &allowed));

        /* Move it back, then remove the cgroup. */
        snprintf(orig_dir, sizeof(orig_dir), "%s%s", mnt, streq(orig_path, "/") ? "" : orig_path);
        snprintf(buf, sizeof(buf), "%d", (int)c);
        write_str(orig_dir, "cgroup.procs", buf);
        ck_assert_int_eq(cgroup_read_cpuset(NULL, c, 0, &got, NULL), 0);
        ck_assert(cpuset_equal(&got, &before));
        reap(c);
        ck_assert_msg(rmdir(dir) == 0, "rmdir %s: %m", dir);
}
END_TEST

/*
 * Two modes, two meson tests: "fixtures" (the default) runs on fixture trees, anywhere; "real"
 * writes a real v1 cpuset and exits 77 (a skip) without root or a v1 cpuset hierarchy.
 */
int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "fixtures";
        _cleanup_free_ char *cpuset_mnt = NULL;
        Suite *s;
        SRunner *sr;
        int failed;

        runner_pid = getpid();

        if (streq(mode, "real")) {
                TCase *real;

                /* Root and a v1 cpuset hierarchy (the hybrid layout has one). */
                cpuset_mnt = v1_mount("cpuset");
                if (geteuid() != 0 || !cpuset_mnt) {
                        printf("SKIP: %s\n", geteuid() != 0 ? "not root" : "no v1 cpuset hierarchy mounted");
                        return 77;
                }
                s = suite_create("cgroup");
                real = tcase_create("real");
                tcase_add_unchecked_fixture(real, NULL, real_teardown);
                tcase_add_test(real, test_real_v1_cpuset);
                suite_add_tcase(s, real);
        } else if (streq(mode, "fixtures")) {
                TCase *tc = tcase_create("fixtures");

                s = suite_create("cgroup");
                tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
                tcase_add_test(tc, test_unified);
                tcase_add_test(tc, test_unresolvable);
                tcase_add_test(tc, test_cpuset_dirs);
                tcase_add_test(tc, test_cpuset_dirs_v1);
                tcase_add_test(tc, test_unified_without_cpuset);
                tcase_add_test(tc, test_legacy_v1);
                tcase_add_test(tc, test_v1_symlinked_controller);
                tcase_add_test(tc, test_hybrid);
                tcase_add_test(tc, test_hybrid_cpuset_on_unified);
                tcase_add_test(tc, test_no_cgroups);
                tcase_add_test(tc, test_format_conflict);
                suite_add_tcase(s, tc);
        } else {
                fprintf(stderr, "usage: %s [fixtures|real]\n", argv[0]);
                return EXIT_FAILURE;
        }

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
