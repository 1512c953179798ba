/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of apply-numa.c: /proc/PID/numa_maps parsing on fixture files (4 KiB and huge pages,
 * anonymous and file mappings, mappings with nothing resident, file names with spaces,
 * malformed tokens), and the real migrate_pages(2) path on a child process of this machine:
 * node 0 to node 0 (it has one node) moves nothing and leaves nothing behind, a node that
 * doesn't exist is refused before any syscall, a reaped process is -ESRCH.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <numa.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apply-numa.h"
#include "cpuset.h"
#include "macro.h"

static char *root; /* the fixture tree of the current test */

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

static void fixture_setup(void) {
        char tmpl[] = "/tmp/test-apply-numa-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        root = strdup(tmpl);
        ck_assert_ptr_nonnull(root);
}

static void fixture_teardown(void) {
        ck_assert_int_eq(nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS), 0);
        root = mfree(root);
}

/* Writes ROOT/proc/PID/numa_maps. */
static void put_maps(pid_t pid, const char *text) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/proc", root);
        ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
        snprintf(path, sizeof(path), "%s/proc/%d", root, (int)pid);
        ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
        snprintf(path, sizeof(path), "%s/proc/%d/numa_maps", root, (int)pid);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* A two-node machine's numa_maps: executable, heap, a hugetlbfs mapping on node 1, an
 * interleaved anonymous mapping, mappings with nothing resident, the stack. */
static const char maps_two_nodes[] =
        "55d0c0a00000 default file=/usr/sbin/db mapped=10 mapmax=2 N0=6 N1=4 kernelpagesize_kB=4\n"
        "55d0c0c00000 default file=/usr/sbin/db anon=2 dirty=2 active=0 N1=2 kernelpagesize_kB=4\n"
        "55d0c1000000 default heap anon=100 dirty=100 active=90 N0=100 kernelpagesize_kB=4\n"
        "7f0000000000 bind:1 file=/dev/hugepages/pool huge dirty=3 N1=3 kernelpagesize_kB=2048\n"
        "7f0100000000 interleave:0-1 anon=8 dirty=8 N0=4 N1=4 kernelpagesize_kB=4\n"
        "7f0200000000 default file=/usr/lib/x86_64-linux-gnu/libc.so.6\n"
        "7f0300000000 default anon=0\n"
        "7ffd00000000 default stack anon=5 dirty=5 N0=5 kernelpagesize_kB=4\n";

START_TEST(test_parse_two_nodes) {
        _cleanup_free_ NumaNodePages *a = NULL;
        _cleanup_cpuset_ CpuSet n0 = CPUSET_NULL, n1 = CPUSET_NULL, both = CPUSET_NULL;
        NumaNodePages sum;
        size_t n = 0;

        ck_assert_int_eq(apply_numa_parse_maps(maps_two_nodes, &a, &n), 0);
        ck_assert_uint_eq(n, 2);
        /* node 0: 6 + 100 + 4 + 5 small pages */
        ck_assert_uint_eq(a[0].pages, 115);
        ck_assert_uint_eq(a[0].kib, 115 * 4);
        /* node 1: 4 + 2 + 4 small pages and 3 huge pages of 2 MiB */
        ck_assert_uint_eq(a[1].pages, 13);
        ck_assert_uint_eq(a[1].kib, 10 * 4 + 3 * 2048);

        ck_assert_int_eq(cpuset_add(&n0, 0), 0);
        ck_assert_int_eq(cpuset_add(&n1, 1), 0);
        ck_assert_int_eq(cpuset_parse_list("0-1,5", &both, NULL), 0);
        sum = apply_numa_sum(a, n, &n1);
        ck_assert_uint_eq(sum.pages, 13);
        ck_assert_uint_eq(sum.kib, 6184);
        sum = apply_numa_sum(a, n, &both); /* node 5 is beyond the array: counts nothing */
        ck_assert_uint_eq(sum.pages, 128);
        ck_assert_uint_eq(sum.kib, 460 + 6184);
        sum = apply_numa_sum(NULL, 0, &n0);
        ck_assert_uint_eq(sum.pages, 0);
}
END_TEST

START_TEST(test_parse_edge_cases) {
        _cleanup_free_ NumaNodePages *a = NULL;
        size_t n = 0;

        /* 1 GiB huge pages, a sparse node number, a file name with spaces holding something
         * that looks like an N token (the kernel does not escape spaces), and a line whose
         * file name ends like one but has nothing resident. */
        ck_assert_int_eq(
                apply_numa_parse_maps(
                        "7e0000000000 default file=/dev/hugepages1G/x huge dirty=1 N3=1 "
                        "kernelpagesize_kB=1048576\n"
                        "7f0000000000 default file=/tmp/a N7=99 b mapped=1 N0=2 kernelpagesize_kB=4\n"
                        "7f1000000000 default file=/tmp/c N7=50\n"
                        "\n",
                        &a, &n),
                0);
        ck_assert_uint_eq(n, 4);
        ck_assert_uint_eq(a[0].pages, 2);
        ck_assert_uint_eq(a[0].kib, 8);
        ck_assert_uint_eq(a[1].pages, 0);
        ck_assert_uint_eq(a[2].pages, 0);
        ck_assert_uint_eq(a[3].pages, 1);
        ck_assert_uint_eq(a[3].kib, 1048576);
        a = mfree(a);

        /* Nothing resident anywhere: no array. */
        n = 99;
        ck_assert_int_eq(
                apply_numa_parse_maps("7f0200000000 default file=/lib/x.so\n7f03 default anon=0\n", &a, &n),
                0);
        ck_assert_ptr_null(a);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(apply_numa_parse_maps("", &a, &n), 0);
        ck_assert_ptr_null(a);
        ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_parse_malformed) {
        static const char *const bad[] = {
                "7f00 default anon=1 N0=x kernelpagesize_kB=4\n",
                "7f00 default anon=1 N0 kernelpagesize_kB=4\n",
                "7f00 default anon=1 N0=1 kernelpagesize_kB=\n",
                "7f00 default anon=1 N0=1 kernelpagesize_kB=4k\n",
                "7f00 default anon=1 N99999=1 kernelpagesize_kB=4\n",
                "7f00 default anon=1 N0=99999999999999999999 kernelpagesize_kB=4\n",
                "7f00 default anon=1 N0=1 kernelpagesize_kB=4\n  default N0=1 kernelpagesize_kB=4\n",
        };
        NumaNodePages *untouched = (NumaNodePages *)&bad;
        size_t n = 77;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ck_assert_msg(
                        apply_numa_parse_maps(bad[i], &untouched, &n) == -EBADMSG, "accepted: %s", bad[i]);
                ck_assert_ptr_eq(untouched, (NumaNodePages *)&bad);
                ck_assert_uint_eq(n, 77);
        }
        ck_assert_int_eq(apply_numa_parse_maps(NULL, &untouched, &n), -EINVAL);
}
END_TEST

START_TEST(test_read_fixture) {
        _cleanup_free_ NumaNodePages *a = NULL;
        size_t n = 0;

        put_maps(4242, maps_two_nodes);
        ck_assert_int_eq(apply_numa_read_pages(root, 4242, &a, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(a[0].pages, 115);
        ck_assert_uint_eq(a[1].kib, 6184);
        a = mfree(a);

        /* A zombie's file is empty. */
        put_maps(4243, "");
        ck_assert_int_eq(apply_numa_read_pages(root, 4243, &a, &n), 0);
        ck_assert_ptr_null(a);
        ck_assert_uint_eq(n, 0);

        put_maps(4244, "7f00 default anon=1 N0=1 kernelpagesize_kB=z\n");
        ck_assert_int_eq(apply_numa_read_pages(root, 4244, &a, &n), -EBADMSG);
        ck_assert_int_eq(apply_numa_read_pages(root, 4245, &a, &n), -ESRCH);
        ck_assert_int_eq(apply_numa_read_pages(root, 0, &a, &n), -EINVAL);
        ck_assert_ptr_null(a);
}
END_TEST

/* ---- the real thing, on this machine ---- */

#define CHILD_PAGES 64

/* A child that touches CHILD_PAGES pages of anonymous memory, says so on fd, then waits. */
static pid_t spawn_toucher(void) {
        pid_t parent = getpid(), c;
        int p[2];
        char ok;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        c = fork();
        ck_assert_int_ge(c, 0);
        if (c == 0) {
                long ps = sysconf(_SC_PAGESIZE);
                char *m;

                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(1);
                m =
                        mmap(NULL, (size_t)ps * CHILD_PAGES, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (m == MAP_FAILED)
                        _exit(1);
                memset(m, 0x5a, (size_t)ps * CHILD_PAGES);
                if (write(p[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &ok, 1), 1);
        close(p[0]);
        return c;
}

static void reap(pid_t c) {
        int status;

        ck_assert_int_eq(kill(c, SIGKILL), 0);
        ck_assert_int_eq(waitpid(c, &status, 0), c);
}

START_TEST(test_real_migrate_same_node) {
        _cleanup_free_ NumaNodePages *before = NULL, *after = NULL;
        _cleanup_cpuset_ CpuSet n0 = CPUSET_NULL, all = CPUSET_NULL;
        size_t nb = 0, na = 0;
        long ps_kib = sysconf(_SC_PAGESIZE) / 1024;
        pid_t c;

        ck_assert_msg(numa_available() >= 0, "libnuma: no NUMA support on this machine");
        ck_assert_int_eq(cpuset_add(&n0, 0), 0);
        ck_assert_int_eq(cpuset_add_range(&all, 0, (unsigned)numa_max_node()), 0);

        c = spawn_toucher();
        /* The real numa_maps: the pages it touched are resident on this machine's node(s). */
        ck_assert_int_eq(apply_numa_read_pages(NULL, c, &before, &nb), 0);
        ck_assert_uint_ge(nb, 1);
        ck_assert_uint_le(nb, (size_t)numa_max_node() + 1);
        ck_assert_uint_ge(apply_numa_sum(before, nb, &all).pages, CHILD_PAGES);
        ck_assert_uint_ge(apply_numa_sum(before, nb, &all).kib, (uint64_t)CHILD_PAGES * (uint64_t)ps_kib);

        /* Node 0 to node 0: the syscall runs and reports that no page failed to move. */
        ck_assert_int_eq(apply_numa_migrate(c, &n0, &n0), 0);
        /* From every node to node 0 (the same here; on a bigger machine it would gather). */
        ck_assert_int_eq(apply_numa_migrate(c, &all, &n0), 0);

        ck_assert_int_eq(apply_numa_read_pages(NULL, c, &after, &na), 0);
        ck_assert_uint_ge(apply_numa_sum(after, na, &n0).pages, CHILD_PAGES);
        if (numa_max_node() == 0)
                /* one node: everything was and is on node 0 */
                ck_assert_uint_eq(
                        apply_numa_sum(before, nb, &n0).pages, apply_numa_sum(before, nb, &all).pages);

        /* pid 0 is the caller itself. */
        ck_assert_int_eq(apply_numa_migrate(0, &n0, &n0), 0);
        reap(c);
}
END_TEST

START_TEST(test_real_bad_node) {
        _cleanup_cpuset_ CpuSet n0 = CPUSET_NULL, nowhere = CPUSET_NULL, mixed = CPUSET_NULL,
                                empty = CPUSET_NULL;
        pid_t c;
        int status;

        ck_assert_msg(numa_available() >= 0, "libnuma: no NUMA support on this machine");
        ck_assert_int_eq(cpuset_add(&n0, 0), 0);
        ck_assert_int_eq(cpuset_add(&nowhere, (unsigned)numa_max_node() + 1), 0);
        ck_assert_int_eq(cpuset_add(&mixed, 0), 0);
        ck_assert_int_eq(cpuset_add(&mixed, 1000), 0);

        c = spawn_toucher();
        ck_assert_int_eq(apply_numa_migrate(c, &n0, &nowhere), -ENOENT);
        ck_assert_int_eq(apply_numa_migrate(c, &nowhere, &n0), -ENOENT);
        ck_assert_int_eq(apply_numa_migrate(c, &n0, &mixed), -ENOENT);
        ck_assert_int_eq(apply_numa_migrate(c, &empty, &n0), -EINVAL);
        ck_assert_int_eq(apply_numa_migrate(c, &n0, NULL), -EINVAL);
        ck_assert_int_eq(apply_numa_migrate(-1, &n0, &n0), -EINVAL);
        reap(c);

        /* Reaped: the syscall says ESRCH... */
        ck_assert_int_eq(apply_numa_migrate(c, &n0, &n0), -ESRCH);
        /* ...but a bad node is refused before any syscall, so it is what is reported. */
        ck_assert_int_eq(apply_numa_migrate(c, &n0, &nowhere), -ENOENT);
        /* Its numa_maps is gone too. */
        {
                NumaNodePages *a = NULL;
                size_t n = 0;
                ck_assert_int_eq(apply_numa_read_pages(NULL, c, &a, &n), -ESRCH);
                ck_assert_ptr_null(a);
        }

        /* A process that exited but is not reaped yet (a zombie): its mm is gone. */
        c = fork();
        ck_assert_int_ge(c, 0);
        if (c == 0)
                _exit(0);
        ck_assert_int_eq(waitid(P_PID, (id_t)c, NULL, WEXITED | WNOWAIT), 0);
        {
                _cleanup_free_ NumaNodePages *a = NULL;
                size_t n = 5;
                /* The kernel finds the task but no memory to move. */
                ck_assert_int_eq(apply_numa_migrate(c, &n0, &n0), -EINVAL);
                ck_assert_int_eq(apply_numa_read_pages(NULL, c, &a, &n), 0);
                ck_assert_uint_eq(n, 0);
        }
        ck_assert_int_eq(waitpid(c, &status, 0), c);
}
END_TEST

int main(void) {
        Suite *s = suite_create("apply-numa");
        TCase *tc = tcase_create("numa_maps"), *real = tcase_create("real");
        SRunner *sr;
        int failed;

        tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
        tcase_add_test(tc, test_parse_two_nodes);
        tcase_add_test(tc, test_parse_edge_cases);
        tcase_add_test(tc, test_parse_malformed);
        tcase_add_test(tc, test_read_fixture);
        suite_add_tcase(s, tc);

        /* The tag lets the valgrind setup leave these out: valgrind 3.19 does not implement
         * migrate_pages(2) and fails it with ENOSYS (tests/meson.build). */
        tcase_set_tags(real, "migrate-pages");
        tcase_add_test(real, test_real_migrate_same_node);
        tcase_add_test(real, test_real_bad_node);
        suite_add_tcase(s, real);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
