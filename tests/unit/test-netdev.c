/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/netdev.c: queues and RPS/RFS/XPS of network devices. Fixture trees stand in for
 * /sys/class/net and /proc/sys/net/core; the live cases (root) use a veth pair with four queues
 * each way, eth0, and net.core.rps_sock_flow_entries (restored afterwards, whatever happens).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "netdev.h"

/* ---- fixture trees ---- */

static char *make_tmpdir(void) {
        char *d = strdup("/tmp/test-netdev-XXXXXX");
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_nonnull(mkdtemp(d));
        return d;
}

static void rm_rf(const char *dir) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

_printf_(1, 2) static char *path_of(const char *fmt, ...) {
        char *p = NULL;
        va_list ap;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&p, fmt, ap), 0);
        va_end(ap);
        return p;
}

/* mkdir -p */
static void mkdirs(const char *path) {
        _cleanup_free_ char *p = strdup(path);
        ck_assert_ptr_nonnull(p);
        for (char *s = p + 1; *s; s++)
                if (*s == '/') {
                        *s = 0;
                        ck_assert(mkdir(p, 0755) == 0 || errno == EEXIST);
                        *s = '/';
                }
        ck_assert(mkdir(p, 0755) == 0 || errno == EEXIST);
}

/* Writes text to path, creating its directory. */
static void put(const char *path, const char *text) {
        _cleanup_free_ char *dir = strdup(path);
        FILE *f;

        ck_assert_ptr_nonnull(dir);
        *strrchr(dir, '/') = 0;
        mkdirs(dir);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* The whole file, or NULL if it can't be read. */
static char *slurp(const char *path) {
        char buf[4097];
        ssize_t k;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k < 0)
                return NULL;
        buf[k] = 0;
        return strdup(buf);
}

/* A device in ROOT/sys/class/net with n_rx rx and n_tx tx queues, xps_cpus on every tx queue when
 * with_xps, ifindex when >= 0. */
static void fixture_device(
        const char *root, const char *dev, unsigned n_rx, unsigned n_tx, bool with_xps, int ifindex) {
        for (unsigned q = 0; q < n_rx; q++) {
                _cleanup_free_ char *a = path_of("%s/sys/class/net/%s/queues/rx-%u/rps_cpus", root, dev, q);
                _cleanup_free_ char *b =
                        path_of("%s/sys/class/net/%s/queues/rx-%u/rps_flow_cnt", root, dev, q);
                put(a, "0\n");
                put(b, "0\n");
        }
        for (unsigned q = 0; q < n_tx; q++) {
                _cleanup_free_ char *a =
                        path_of("%s/sys/class/net/%s/queues/tx-%u/tx_timeout", root, dev, q);
                put(a, "0\n");
                if (with_xps) {
                        _cleanup_free_ char *b =
                                path_of("%s/sys/class/net/%s/queues/tx-%u/xps_cpus", root, dev, q);
                        put(b, "0\n");
                }
        }
        if (ifindex >= 0) {
                _cleanup_free_ char *p = path_of("%s/sys/class/net/%s/ifindex", root, dev);
                _cleanup_free_ char *v = path_of("%d\n", ifindex);
                put(p, v);
        }
}

/*
 * The kernel hex mask of CPUs first..last (pairs, count pairs) nbits wide with every 32-bit word
 * as 8 hex digits, most significant first, computed word by word here rather than by the library.
 */
static char *expected_mask(unsigned nbits, const unsigned *ranges, size_t n_ranges) {
        size_t n_words = (nbits + 31) / 32;
        uint32_t *w = calloc(n_words, sizeof(uint32_t));
        char *out = malloc(n_words * 9 + 1), *p = out;

        ck_assert(w && out);
        for (size_t i = 0; i < n_ranges; i++)
                for (unsigned cpu = ranges[2 * i]; cpu <= ranges[2 * i + 1]; cpu++)
                        w[cpu / 32] |= UINT32_C(1) << (cpu % 32);
        for (size_t k = n_words; k-- > 0;)
                p += sprintf(p, "%08" PRIx32 "%s", w[k], k > 0 ? "," : "\n");
        free(w);
        return out;
}

START_TEST(test_fixture_queues) {
        _cleanup_free_ char *root = make_tmpdir();
        NetDeviceQueues q;

        fixture_device(root, "mq0", 4, 8, true, 7);
        ck_assert_int_eq(netdev_queues(root, "mq0", &q), 0);
        ck_assert_uint_eq(q.n_rx, 4);
        ck_assert_uint_eq(q.n_tx, 8);
        ck_assert(q.has_rps);
        ck_assert(q.has_xps);
        ck_assert_int_eq(q.ifindex, 7);

        /* Single queue, no xps_cpus (as older kernels show it), no ifindex. */
        fixture_device(root, "sq0", 1, 1, false, -1);
        ck_assert_int_eq(netdev_queues(root, "sq0", &q), 0);
        ck_assert_uint_eq(q.n_rx, 1);
        ck_assert_uint_eq(q.n_tx, 1);
        ck_assert(q.has_rps);
        ck_assert(!q.has_xps);
        ck_assert_int_eq(q.ifindex, -1);

        /* A gap (a queue-count change in progress): counted up to the first missing number. */
        fixture_device(root, "gap0", 2, 3, true, 9);
        _cleanup_free_ char *rx5 = path_of("%s/sys/class/net/gap0/queues/rx-5/rps_cpus", root);
        _cleanup_free_ char *tx1 = path_of("%s/sys/class/net/gap0/queues/tx-1", root);
        put(rx5, "0\n");
        rm_rf(tx1);
        ck_assert_int_eq(netdev_queues(root, "gap0", &q), 0);
        ck_assert_uint_eq(q.n_rx, 2);
        ck_assert_uint_eq(q.n_tx, 1);

        /* No rps_cpus (CONFIG_RPS off), and a device with no queues directory at all. */
        _cleanup_free_ char *norps = path_of("%s/sys/class/net/norps0/queues/rx-0", root);
        _cleanup_free_ char *noq = path_of("%s/sys/class/net/noq0", root);
        mkdirs(norps);
        mkdirs(noq);
        ck_assert_int_eq(netdev_queues(root, "norps0", &q), 0);
        ck_assert_uint_eq(q.n_rx, 1);
        ck_assert(!q.has_rps);
        ck_assert_int_eq(netdev_queues(root, "noq0", &q), 0);
        ck_assert_uint_eq(q.n_rx, 0);
        ck_assert_uint_eq(q.n_tx, 0);
        ck_assert(!q.has_rps && !q.has_xps);

        /* Missing device, and names that would leave the directory; *ret untouched. */
        q = (NetDeviceQueues){.n_rx = 99};
        ck_assert_int_eq(netdev_queues(root, "nope0", &q), -ENODEV);
        ck_assert_int_eq(netdev_queues(root, "../net", &q), -EINVAL);
        ck_assert_int_eq(netdev_queues(root, "..", &q), -EINVAL);
        ck_assert_int_eq(netdev_queues(root, "", &q), -EINVAL);
        ck_assert_uint_eq(q.n_rx, 99);
        rm_rf(root);
}
END_TEST

START_TEST(test_fixture_list) {
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ char *net = path_of("%s/sys/class/net", root);

        /* No sys/class/net at all: the error of opendir(3). */
        ck_assert_int_eq(netdev_list(root, &names), -ENOENT);
        mkdirs(net);
        ck_assert_int_eq(netdev_list(root, &names), 0);
        ck_assert_ptr_null(names);

        fixture_device(root, "eth1", 1, 1, false, 3);
        fixture_device(root, "lo", 1, 1, false, 1);
        fixture_device(root, "eth0", 1, 1, false, 2);
        fixture_device(root, "bond0", 1, 1, false, 4);
        ck_assert_int_eq(netdev_list(root, &names), 0);
        ck_assert_uint_eq(strv_length(names), 4);
        ck_assert_str_eq(names[0], "bond0");
        ck_assert_str_eq(names[1], "eth0");
        ck_assert_str_eq(names[2], "eth1");
        ck_assert_str_eq(names[3], "lo");
        rm_rf(root);
}
END_TEST

START_TEST(test_fixture_mask_bits) {
        static const struct {
                const char *possible;
                int bits;
        } cases[] = {
                {"0-1\n", 32},  {"0\n", 32},      {"0-31\n", 32},
                {"0-32\n", 33}, {"0-103\n", 104}, {"0,2-5,200\n", 201},
        };
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_free_ char *path = path_of("%s/sys/devices/system/cpu/possible", root);

        ck_assert_int_eq(netdev_mask_bits(root), -ENOENT);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                put(path, cases[i].possible);
                ck_assert_int_eq(netdev_mask_bits(root), cases[i].bits);
        }
        put(path, "zero\n");
        ck_assert_int_eq(netdev_mask_bits(root), -EBADMSG);
        put(path, "\n");
        ck_assert_int_eq(netdev_mask_bits(root), -EBADMSG);
        rm_rf(root);
}
END_TEST

/* Masks beyond 64 CPUs: 104 possible CPUs, two ranges straddling word boundaries. */
START_TEST(test_fixture_wide_masks) {
        static const unsigned ranges[] = {26, 51, 78, 103};
        _cleanup_free_ char *root = make_tmpdir(), *expected = NULL, *text = NULL, *empty = NULL;
        _cleanup_free_ char *possible = path_of("%s/sys/devices/system/cpu/possible", root);
        _cleanup_free_ char *rps = path_of("%s/sys/class/net/mq0/queues/rx-2/rps_cpus", root);
        _cleanup_free_ char *xps = path_of("%s/sys/class/net/mq0/queues/tx-1/xps_cpus", root);
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, back = CPUSET_NULL, none = CPUSET_NULL;
        int nbits;

        fixture_device(root, "mq0", 4, 4, true, 5);
        put(possible, "0-103\n");
        nbits = netdev_mask_bits(root);
        ck_assert_int_eq(nbits, 104);

        for (size_t i = 0; i < ELEMENTSOF(ranges); i += 2)
                ck_assert_int_eq(cpuset_add_range(&cpus, ranges[i], ranges[i + 1]), 0);
        expected = expected_mask((unsigned)nbits, ranges, ELEMENTSOF(ranges) / 2);
        ck_assert_str_eq(expected, "000000ff,ffffc000,000fffff,fc000000\n");

        ck_assert_int_eq(netdev_write_rps(root, "mq0", 2, &cpus, (unsigned)nbits), 0);
        text = slurp(rps);
        ck_assert_ptr_nonnull(text);
        ck_assert_str_eq(text, expected);
        ck_assert_int_eq(netdev_read_rps(root, "mq0", 2, &back), 0);
        ck_assert(cpuset_equal(&back, &cpus));
        ck_assert_uint_eq(cpuset_count(&back), 52);

        /* What the kernel shows (%*pb: the top word only as wide as its bits) reads the same. */
        put(rps, "ff,ffffc000,000fffff,fc000000\n");
        cpuset_clear(&back);
        ck_assert_int_eq(netdev_read_rps(root, "mq0", 2, &back), 0);
        ck_assert(cpuset_equal(&back, &cpus));

        /* XPS likewise. */
        ck_assert_int_eq(netdev_write_xps(root, "mq0", 1, &cpus, (unsigned)nbits), 0);
        text = mfree(text);
        text = slurp(xps);
        ck_assert_str_eq(text, expected);
        cpuset_clear(&back);
        ck_assert_int_eq(netdev_read_xps(root, "mq0", 1, &back), 0);
        ck_assert(cpuset_equal(&back, &cpus));

        /* A CPU at or beyond the width is refused as the kernel would, and nothing is written. */
        ck_assert_int_eq(cpuset_add(&cpus, 104), 0);
        ck_assert_int_eq(netdev_write_rps(root, "mq0", 2, &cpus, (unsigned)nbits), -EOVERFLOW);
        ck_assert_int_eq(netdev_write_xps(root, "mq0", 1, &cpus, (unsigned)nbits), -EOVERFLOW);
        text = mfree(text);
        text = slurp(xps);
        ck_assert_str_eq(text, expected);

        /* The empty set turns RPS off: all-zero words. */
        ck_assert_int_eq(netdev_write_rps(root, "mq0", 2, &none, (unsigned)nbits), 0);
        text = mfree(text);
        text = slurp(rps);
        empty = expected_mask((unsigned)nbits, NULL, 0);
        ck_assert_str_eq(text, empty);
        ck_assert_int_eq(netdev_read_rps(root, "mq0", 2, &back), 0);
        ck_assert(cpuset_is_empty(&back));

        /* A 2-CPU machine: one word. */
        _cleanup_cpuset_ CpuSet two = CPUSET_NULL;
        _cleanup_free_ char *rx0 = path_of("%s/sys/class/net/mq0/queues/rx-0/rps_cpus", root);
        ck_assert_int_eq(cpuset_add_range(&two, 0, 1), 0);
        ck_assert_int_eq(netdev_write_rps(root, "mq0", 0, &two, 32), 0);
        text = mfree(text);
        text = slurp(rx0);
        ck_assert_str_eq(text, "00000003\n");
        rm_rf(root);
}
END_TEST

START_TEST(test_fixture_mask_errors) {
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_free_ char *rps = path_of("%s/sys/class/net/mq0/queues/rx-0/rps_cpus", root);
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL, cpus = CPUSET_NULL;

        fixture_device(root, "mq0", 2, 1, false, 5);
        ck_assert_int_eq(cpuset_add(&set, 5), 0);
        ck_assert_int_eq(cpuset_add(&cpus, 1), 0);

        /* Missing queue, missing device, missing file: -ENOENT; *ret untouched. */
        ck_assert_int_eq(netdev_read_rps(root, "mq0", 2, &set), -ENOENT);
        ck_assert_int_eq(netdev_read_rps(root, "nope0", 0, &set), -ENOENT);
        ck_assert_int_eq(netdev_read_xps(root, "mq0", 0, &set), -ENOENT);
        ck_assert_int_eq(netdev_write_rps(root, "mq0", 2, &cpus, 32), -ENOENT);
        ck_assert_int_eq(netdev_write_xps(root, "mq0", 0, &cpus, 32), -ENOENT);
        ck_assert(cpuset_contains(&set, 5) && cpuset_count(&set) == 1);

        /* Unparsable contents. */
        put(rps, "zz,1\n");
        ck_assert_int_eq(netdev_read_rps(root, "mq0", 0, &set), -EBADMSG);
        put(rps, "");
        ck_assert_int_eq(netdev_read_rps(root, "mq0", 0, &set), -EBADMSG);
        ck_assert(cpuset_contains(&set, 5) && cpuset_count(&set) == 1);
        ck_assert_int_eq(netdev_read_rps(root, "../x", 0, &set), -EINVAL);
        ck_assert_int_eq(netdev_write_rps(root, "mq0", 0, NULL, 32), -EINVAL);
        rm_rf(root);
}
END_TEST

/*
 * Width unknown (nbits 0: possible CPUs unreadable): masks as wide as the set needs in whole
 * 32-bit words, not a refusal of every write.
 */
START_TEST(test_fixture_mask_unknown_width) {
        static const struct {
                const char *cpus;
                unsigned bits;
                const char *mask;
        } cases[] = {
                {"", 32, "00000000\n"},
                {"1", 32, "00000002\n"},
                {"0,31", 32, "80000001\n"},
                {"32", 64, "00000001,00000000\n"},
                {"1,40", 64, "00000100,00000002\n"},
                {"63", 64, "80000000,00000000\n"},
                {"64", 96, "00000001,00000000,00000000\n"},
        };
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_free_ char *rps = path_of("%s/sys/class/net/mq0/queues/rx-1/rps_cpus", root);
        _cleanup_free_ char *xps = path_of("%s/sys/class/net/mq0/queues/tx-0/xps_cpus", root);

        fixture_device(root, "mq0", 2, 2, true, 5);
        /* no ROOT/sys/devices/system/cpu/possible: the width the daemon would pass is 0 */
        ck_assert_int_eq(netdev_mask_bits(root), -ENOENT);
        ck_assert_uint_eq(netdev_mask_bits_for(NULL), 32);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, back = CPUSET_NULL;
                _cleanup_free_ char *text = NULL;

                ck_assert_int_eq(cpuset_parse_list(cases[i].cpus, &cpus, NULL), 0);
                ck_assert_uint_eq(netdev_mask_bits_for(&cpus), cases[i].bits);

                ck_assert_int_eq(netdev_write_rps(root, "mq0", 1, &cpus, 0), 0);
                text = slurp(rps);
                ck_assert_str_eq(text, cases[i].mask);
                ck_assert_int_eq(netdev_read_rps(root, "mq0", 1, &back), 0);
                ck_assert(cpuset_equal(&back, &cpus));
                text = mfree(text);

                ck_assert_int_eq(netdev_write_xps(root, "mq0", 0, &cpus, 0), 0);
                text = slurp(xps);
                ck_assert_str_eq(text, cases[i].mask);
        }
        rm_rf(root);
}
END_TEST

START_TEST(test_fixture_flow_cnt) {
        _cleanup_free_ char *root = make_tmpdir(), *text = NULL;
        _cleanup_free_ char *cnt = path_of("%s/sys/class/net/mq0/queues/rx-1/rps_flow_cnt", root);
        uint32_t v = 77;

        fixture_device(root, "mq0", 2, 2, true, 5);
        ck_assert_int_eq(netdev_read_flow_cnt(root, "mq0", 1, &v), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(netdev_write_flow_cnt(root, "mq0", 1, 2048), 0);
        text = slurp(cnt);
        ck_assert_str_eq(text, "2048\n");
        ck_assert_int_eq(netdev_read_flow_cnt(root, "mq0", 1, &v), 0);
        ck_assert_uint_eq(v, 2048);

        v = 77;
        put(cnt, "4294967296\n"); /* beyond uint32_t */
        ck_assert_int_eq(netdev_read_flow_cnt(root, "mq0", 1, &v), -EBADMSG);
        put(cnt, "-1\n");
        ck_assert_int_eq(netdev_read_flow_cnt(root, "mq0", 1, &v), -EBADMSG);
        put(cnt, "12abc\n");
        ck_assert_int_eq(netdev_read_flow_cnt(root, "mq0", 1, &v), -EBADMSG);
        ck_assert_uint_eq(v, 77);
        ck_assert_int_eq(netdev_read_flow_cnt(root, "mq0", 2, &v), -ENOENT);
        ck_assert_int_eq(netdev_write_flow_cnt(root, "mq0", 2, 2), -ENOENT);
        /* 1 is refused without writing: not every kernel accepts it. */
        put(cnt, "2048\n");
        ck_assert_int_eq(netdev_write_flow_cnt(root, "mq0", 1, 1), -EINVAL);
        free(text);
        text = slurp(cnt);
        ck_assert_str_eq(text, "2048\n");
        rm_rf(root);
}
END_TEST

/* roundup_pow_of_two(), computed the slow way. */
static uint64_t pow2_at_least(uint64_t v) {
        uint64_t p = 1;
        while (p < v)
                p <<= 1;
        return p;
}

START_TEST(test_expected_rounding) {
        static const uint32_t samples[] = {
                1,
                2,
                3,
                4,
                5,
                7,
                8,
                9,
                1000,
                1023,
                1024,
                1025,
                4096,
                32768,
                65535,
                65536,
                65537,
                (1U << 29) - 1,
                1U << 29,
                (1U << 29) + 1,
                (1U << 31) - 1,
                1U << 31,
        };

        ck_assert_uint_eq(netdev_flow_cnt_expected(0), 0);
        ck_assert_uint_eq(netdev_rfs_entries_expected(0), 0);
        ck_assert_uint_eq(netdev_flow_cnt_expected(1000), 1024);
        for (size_t i = 0; i < ELEMENTSOF(samples); i++) {
                uint32_t c = samples[i];
                ck_assert_uint_eq(netdev_flow_cnt_expected(c), pow2_at_least(c));
                if (c <= NETDEV_RFS_ENTRIES_MAX)
                        ck_assert_uint_eq(netdev_rfs_entries_expected(c), pow2_at_least(c));
                else
                        ck_assert_uint_eq(netdev_rfs_entries_expected(c), 0);
        }
        /* 2^32 doesn't fit. */
        ck_assert_uint_eq(netdev_flow_cnt_expected((1U << 31) + 1), UINT32_MAX);
        ck_assert_uint_eq(netdev_flow_cnt_expected(UINT32_MAX), UINT32_MAX);
        ck_assert_uint_eq(NETDEV_RFS_ENTRIES_MAX, 536870912U);
}
END_TEST

START_TEST(test_fixture_rfs) {
        _cleanup_free_ char *root = make_tmpdir(), *text = NULL;
        _cleanup_free_ char *path = path_of("%s/proc/sys/net/core/rps_sock_flow_entries", root);
        uint32_t v = 5;

        ck_assert_int_eq(netdev_read_rfs_entries(root, &v), -ENOENT);
        ck_assert_uint_eq(v, 5);
        put(path, "0\n");
        ck_assert_int_eq(netdev_read_rfs_entries(root, &v), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(netdev_write_rfs_entries(root, 32768), 0);
        text = slurp(path);
        ck_assert_str_eq(text, "32768\n");
        ck_assert_int_eq(netdev_read_rfs_entries(root, &v), 0);
        ck_assert_uint_eq(v, 32768);
        /* Above the kernel's limit: refused without writing. */
        ck_assert_int_eq(netdev_write_rfs_entries(root, NETDEV_RFS_ENTRIES_MAX + 1), -EINVAL);
        ck_assert_int_eq(netdev_read_rfs_entries(root, &v), 0);
        ck_assert_uint_eq(v, 32768);
        ck_assert_int_eq(netdev_write_rfs_entries(root, NETDEV_RFS_ENTRIES_MAX), 0);
        ck_assert_int_eq(netdev_read_rfs_entries(root, &v), 0);
        ck_assert_uint_eq(v, NETDEV_RFS_ENTRIES_MAX);
        put(path, "x\n");
        ck_assert_int_eq(netdev_read_rfs_entries(root, &v), -EBADMSG);
        rm_rf(root);
}
END_TEST

/* ---- live: this machine's kernel ---- */

static char veth_a[IFNAMSIZ], veth_b[IFNAMSIZ];
static bool veth_created, rfs_saved;
static uint32_t rfs_original;

static int run(const char *fmt, ...) {
        _cleanup_free_ char *cmd = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&cmd, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -1;
        return system(cmd);
}

/* Unchecked fixture: runs in the test runner itself, so the teardown runs even when a test fails
 * or crashes in its child process. No ck_assert here: the tests check veth_created. */
static void live_setup(void) {
        snprintf(veth_a, sizeof veth_a, "afd%da", (int)getpid() % 1000000);
        snprintf(veth_b, sizeof veth_b, "afd%db", (int)getpid() % 1000000);
        veth_created = run("ip link add %s numtxqueues 4 numrxqueues 4 type veth peer name %s "
                           "numtxqueues 4 numrxqueues 4",
                           veth_a, veth_b) == 0;
        rfs_saved = netdev_read_rfs_entries(NULL, &rfs_original) == 0;
}

static void live_teardown(void) {
        if (rfs_saved && netdev_write_rfs_entries(NULL, rfs_original) < 0)
                fprintf(stderr, "failed to restore net.core.rps_sock_flow_entries=%" PRIu32 "\n",
                        rfs_original);
        if (veth_created && run("ip link del %s", veth_a) != 0)
                fprintf(stderr, "failed to delete %s\n", veth_a);
}

/* The highest number of a cpu-list file ("0-1\n" -> 1), by hand. */
static int last_cpu_of(const char *path) {
        _cleanup_free_ char *text = slurp(path);
        int last = -1;

        ck_assert_ptr_nonnull(text);
        for (char *p = text; *p;) {
                if (*p >= '0' && *p <= '9')
                        last = (int)strtol(p, &p, 10);
                else
                        p++;
        }
        return last;
}

/* The value of a hex mask's low word as the kernel shows it ("3\n", "00000000,00000003\n"). */
static unsigned long low_word(const char *path) {
        _cleanup_free_ char *text = slurp(path);
        const char *p;

        ck_assert_ptr_nonnull(text);
        p = strrchr(text, ',');
        return strtoul(p ? p + 1 : text, NULL, 16);
}

START_TEST(test_live_veth) {
        _cleanup_cpuset_ CpuSet online = CPUSET_NULL, one = CPUSET_NULL, back = CPUSET_NULL,
                                none = CPUSET_NULL;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ char *online_text = slurp("/sys/devices/system/cpu/online");
        NetDeviceQueues q;
        unsigned nbits, first, last, n_online;
        uint32_t v;
        bool found_a = false, found_b = false;

        ck_assert_msg(veth_created, "could not create veth %s/%s", veth_a, veth_b);

        ck_assert_int_eq(netdev_queues(NULL, veth_a, &q), 0);
        ck_assert_uint_eq(q.n_rx, 4);
        ck_assert_uint_eq(q.n_tx, 4);
        ck_assert(q.has_rps);
        ck_assert(q.has_xps);
        ck_assert_int_eq(q.ifindex, (int)if_nametoindex(veth_a));
        ck_assert_int_gt(q.ifindex, 0);

        ck_assert_int_eq(netdev_list(NULL, &names), 0);
        STRV_FOREACH (n, names) {
                found_a = found_a || streq(*n, veth_a);
                found_b = found_b || streq(*n, veth_b);
        }
        ck_assert(found_a && found_b);

        /* The width: possible CPUs (highest + 1), at least one word. */
        ck_assert_int_gt(netdev_mask_bits(NULL), 0);
        nbits = (unsigned)netdev_mask_bits(NULL);
        ck_assert_uint_eq(nbits, MAX((unsigned)last_cpu_of("/sys/devices/system/cpu/possible") + 1, 32U));

        ck_assert_ptr_nonnull(online_text);
        ck_assert_int_eq(cpuset_parse_list(online_text, &online, NULL), 0);
        n_online = cpuset_count(&online);
        ck_assert_uint_gt(n_online, 0);
        first = (unsigned)cpuset_next(&online, -1);
        last = (unsigned)cpuset_last(&online);
        ck_assert_int_eq(cpuset_add(&one, last), 0);

        /* RPS: all online CPUs on rx-1, the last one on rx-3, then off again. */
        ck_assert_int_eq(netdev_write_rps(NULL, veth_a, 1, &online, nbits), 0);
        ck_assert_int_eq(netdev_read_rps(NULL, veth_a, 1, &back), 0);
        ck_assert(cpuset_equal(&back, &online));
        ck_assert_int_eq(netdev_write_rps(NULL, veth_a, 3, &one, nbits), 0);
        ck_assert_int_eq(netdev_read_rps(NULL, veth_a, 3, &back), 0);
        ck_assert(cpuset_equal(&back, &one));
        if (last < 32) {
                _cleanup_free_ char *p = path_of("/sys/class/net/%s/queues/rx-3/rps_cpus", veth_a);
                ck_assert_uint_eq(low_word(p), 1UL << last);
        }
        ck_assert_int_eq(netdev_read_rps(NULL, veth_a, 0, &back), 0);
        ck_assert(cpuset_is_empty(&back)); /* untouched queue */
        ck_assert_int_eq(netdev_write_rps(NULL, veth_a, 1, &none, nbits), 0);
        ck_assert_int_eq(netdev_read_rps(NULL, veth_a, 1, &back), 0);
        ck_assert(cpuset_is_empty(&back));

        /* XPS on tx-2. */
        _cleanup_cpuset_ CpuSet first_set = CPUSET_NULL;
        ck_assert_int_eq(cpuset_add(&first_set, first), 0);
        ck_assert_int_eq(netdev_write_xps(NULL, veth_a, 2, &first_set, nbits), 0);
        ck_assert_int_eq(netdev_read_xps(NULL, veth_a, 2, &back), 0);
        ck_assert(cpuset_equal(&back, &first_set));

        /* What the kernel refuses: a mask one word wider than nr_cpu_ids needs (EOVERFLOW, from the
         * kernel itself), a CPU beyond the width (refused before writing). */
        ck_assert_int_eq(
                netdev_write_rps(NULL, veth_a, 3, &online, (nbits + 31) / 32 * 32 + 32), -EOVERFLOW);
        ck_assert_int_eq(
                netdev_write_xps(NULL, veth_a, 2, &online, (nbits + 31) / 32 * 32 + 32), -EOVERFLOW);
        _cleanup_cpuset_ CpuSet beyond = CPUSET_NULL;
        ck_assert_int_eq(cpuset_add(&beyond, nbits), 0);
        ck_assert_int_eq(netdev_write_rps(NULL, veth_a, 3, &beyond, nbits), -EOVERFLOW);
        ck_assert_int_eq(netdev_read_rps(NULL, veth_a, 3, &back), 0);
        ck_assert(cpuset_equal(&back, &one)); /* unchanged */
        ck_assert_int_eq(netdev_read_xps(NULL, veth_a, 2, &back), 0);
        ck_assert(cpuset_equal(&back, &first_set));

        /* rps_flow_cnt: the kernel rounds up to a power of two. */
        ck_assert_int_eq(netdev_write_flow_cnt(NULL, veth_a, 1, 1000), 0);
        ck_assert_int_eq(netdev_read_flow_cnt(NULL, veth_a, 1, &v), 0);
        ck_assert_uint_eq(v, 1024);
        ck_assert_uint_eq(v, netdev_flow_cnt_expected(1000));
        ck_assert_int_eq(netdev_write_flow_cnt(NULL, veth_a, 1, 4096), 0);
        ck_assert_int_eq(netdev_read_flow_cnt(NULL, veth_a, 1, &v), 0);
        ck_assert_uint_eq(v, 4096);
        ck_assert_int_eq(netdev_write_flow_cnt(NULL, veth_a, 1, 3), 0);
        ck_assert_int_eq(netdev_read_flow_cnt(NULL, veth_a, 1, &v), 0);
        ck_assert_uint_eq(v, netdev_flow_cnt_expected(3));
        ck_assert_uint_eq(v, 4);
        ck_assert_int_eq(netdev_write_flow_cnt(NULL, veth_a, 1, 0), 0);
        ck_assert_int_eq(netdev_read_flow_cnt(NULL, veth_a, 1, &v), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(netdev_read_flow_cnt(NULL, veth_a, 2, &v), 0);
        ck_assert_uint_eq(v, 0);

        /* A queue that doesn't exist. */
        ck_assert_int_eq(netdev_read_rps(NULL, veth_a, 4, &back), -ENOENT);
        ck_assert_int_eq(netdev_write_flow_cnt(NULL, veth_a, 4, 16), -ENOENT);
}
END_TEST

START_TEST(test_live_rfs_entries) {
        uint32_t v;

        ck_assert_msg(rfs_saved, "could not read net.core.rps_sock_flow_entries");
        ck_assert_int_eq(netdev_write_rfs_entries(NULL, 1000), 0);
        ck_assert_int_eq(netdev_read_rfs_entries(NULL, &v), 0);
        ck_assert_uint_eq(v, 1024);
        ck_assert_uint_eq(v, netdev_rfs_entries_expected(1000));
        ck_assert_int_eq(netdev_write_rfs_entries(NULL, 32768), 0);
        ck_assert_int_eq(netdev_read_rfs_entries(NULL, &v), 0);
        ck_assert_uint_eq(v, 32768);
        ck_assert_int_eq(netdev_write_rfs_entries(NULL, NETDEV_RFS_ENTRIES_MAX + 1), -EINVAL);
        ck_assert_int_eq(netdev_read_rfs_entries(NULL, &v), 0);
        ck_assert_uint_eq(v, 32768);
        ck_assert_int_eq(netdev_write_rfs_entries(NULL, 0), 0);
        ck_assert_int_eq(netdev_read_rfs_entries(NULL, &v), 0);
        ck_assert_uint_eq(v, 0);
}
END_TEST

/* eth0 as it is: expectations derived from sysfs here, independently of the library. */
START_TEST(test_live_eth0) {
        _cleanup_free_ char *xps = NULL, *rps = NULL, *xps_text = NULL;
        _cleanup_cpuset_ CpuSet back = CPUSET_NULL;
        glob_t rx = {}, tx = {};
        NetDeviceQueues q;
        bool xps_readable;

        ck_assert_msg(access("/sys/class/net/eth0", F_OK) == 0, "this machine has eth0");
        ck_assert_int_eq(glob("/sys/class/net/eth0/queues/rx-*", 0, NULL, &rx), 0);
        ck_assert_int_eq(glob("/sys/class/net/eth0/queues/tx-*", 0, NULL, &tx), 0);
        xps = path_of("/sys/class/net/eth0/queues/tx-0/xps_cpus");
        rps = path_of("/sys/class/net/eth0/queues/rx-0/rps_cpus");
        xps_text = slurp(xps);
        xps_readable = xps_text != NULL;

        ck_assert_int_eq(netdev_queues(NULL, "eth0", &q), 0);
        ck_assert_uint_eq(q.n_rx, rx.gl_pathc);
        ck_assert_uint_eq(q.n_tx, tx.gl_pathc);
        ck_assert_int_eq(q.has_rps, access(rps, F_OK) == 0);
        ck_assert_int_eq(q.has_xps, xps_readable);
        ck_assert_int_eq(q.ifindex, (int)if_nametoindex("eth0"));
        if (q.n_tx == 1) {
                /* A single-queue device has no usable XPS, whether or not the file is there. */
                ck_assert(!q.has_xps);
                ck_assert_int_eq(netdev_read_xps(NULL, "eth0", 0, &back), -ENOENT);
        }
        if (q.has_rps) {
                _cleanup_cpuset_ CpuSet kernel = CPUSET_NULL;
                _cleanup_free_ char *text = slurp(rps);
                ck_assert_int_eq(netdev_read_rps(NULL, "eth0", 0, &back), 0);
                ck_assert_ptr_nonnull(text);
                ck_assert_int_eq(cpuset_parse_mask(text, &kernel, NULL), 0);
                ck_assert(cpuset_equal(&back, &kernel));
        }
        globfree(&rx);
        globfree(&tx);

        ck_assert_int_eq(netdev_queues(NULL, "afdnone0", &q), -ENODEV);
}
END_TEST

/*
 * Two modes, two meson tests: "fixture" (the default) reads fixture trees, anywhere; "live"
 * makes veth pairs and writes real queues and net.core.rps_sock_flow_entries (restored), and
 * exits 77 (a skip) without root or ip(8).
 */
int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "fixture";
        Suite *s = NULL;
        TCase *tc;
        SRunner *sr;
        int failed;

        if (streq(mode, "fixture")) {
                s = suite_create("netdev");
                tc = tcase_create("fixture");
                tcase_add_test(tc, test_fixture_queues);
                tcase_add_test(tc, test_fixture_list);
                tcase_add_test(tc, test_fixture_mask_bits);
                tcase_add_test(tc, test_fixture_wide_masks);
                tcase_add_test(tc, test_fixture_mask_errors);
                tcase_add_test(tc, test_fixture_mask_unknown_width);
                tcase_add_test(tc, test_fixture_flow_cnt);
                tcase_add_test(tc, test_expected_rounding);
                tcase_add_test(tc, test_fixture_rfs);
                suite_add_tcase(s, tc);
        } else if (streq(mode, "live")) {
                if (geteuid() != 0) {
                        printf("SKIP: not root\n");
                        return 77;
                }
                if (system("command -v ip >/dev/null 2>&1") != 0) {
                        printf("SKIP: no ip(8) to make veth pairs with (package iproute2)\n");
                        return 77;
                }
                s = suite_create("netdev");
                tc = tcase_create("live");
                tcase_add_unchecked_fixture(tc, live_setup, live_teardown);
                tcase_add_test(tc, test_live_veth);
                tcase_add_test(tc, test_live_rfs_entries);
                tcase_add_test(tc, test_live_eth0);
                suite_add_tcase(s, tc);
        } else {
                fprintf(stderr, "usage: %s [fixture|live]\n", argv[0]);
                return EXIT_FAILURE;
        }

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
