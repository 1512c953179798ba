/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "netdev.h"
#include "util.h"

/* sysfs and sysctl files are one page at most. */
#define NETDEV_FILE_MAX 4096U

/* A name that cannot leave ROOT/sys/class/net. */
static bool dev_name_valid(const char *dev) {
        return dev && *dev && !strchr(dev, '/') && !streq(dev, ".") && !streq(dev, "..");
}

/* ROOT/sys/class/net/DEV/queues/{rx,tx}-N/FILE into *ret. */
static int queue_path(
        const char *root, const char *dev, char dir, unsigned queue, const char *file, char **ret) {
        if (!dev_name_valid(dev))
                return -EINVAL;
        if (asprintf(ret, "%s/sys/class/net/%s/queues/%cx-%u/%s", root_prefix(root), dev, dir, queue, file) <
            0)
                return -ENOMEM;
        return 0;
}

/* The whole of a small file, NUL-terminated, into *ret. Returns 0, -EBADMSG (too large or a NUL
 * byte), -errno (open(2), read(2)). */
static int read_small(const char *path, char **ret) {
        int r;

        r = read_full_file(path, NETDEV_FILE_MAX, READ_FULL_NO_NUL, ret, NULL);
        return r == -EFBIG ? -EBADMSG : r;
}

/*
 * Writes text to an existing file in a single write(2): a sysfs or sysctl store handler sees
 * each write(2) on its own, so a split write would be two (wrong) values. Returns 0, -EIO on a
 * short write, or -errno (open(2), write(2): the kernel's refusal).
 */
static int write_once(const char *path, const char *text) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(text);
        ssize_t k;

        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        do
                k = write(fd, text, len);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        if ((size_t)k != len)
                return -EIO;
        return 0;
}

/* A decimal number in [0, max] followed by at most blanks and a newline. */
static int parse_decimal(const char *s, uint64_t max, uint64_t *ret) {
        unsigned long long v;
        char *end;

        s += strspn(s, " \t");
        if (*s < '0' || *s > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || v > max)
                return -EBADMSG;
        end += strspn(end, " \t\n");
        if (*end)
                return -EBADMSG;
        *ret = v;
        return 0;
}

static int read_decimal(const char *path, uint64_t max, uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_small(path, &text);
        if (r < 0)
                return r;
        return parse_decimal(text, max, ret);
}

int netdev_list(const char *root, char ***ret) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *path = NULL;
        struct dirent *de;
        size_t n = 0;

        if (asprintf(&path, "%s/sys/class/net", root_prefix(root)) < 0)
                return -ENOMEM;
        d = opendir(path);
        if (!d)
                return -errno;
        for (;;) {
                char **a;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return -errno;
                        break;
                }
                if (de->d_name[0] == '.')
                        continue;
                a = reallocarray(names, n + 2, sizeof(char *));
                if (!a)
                        return -ENOMEM;
                names = a;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        return -ENOMEM;
                names[++n] = NULL;
        }
        if (n > 0)
                qsort(names, n, sizeof(char *), compare_string_ptr);
        *ret = TAKE_PTR(names);
        return 0;
}

/* rx-0, rx-1, ... (prefix "rx-") present in the queues directory, up to the first missing. */
static unsigned count_queues(int queues_fd, const char *prefix) {
        unsigned n = 0;

        if (queues_fd < 0)
                return 0;
        for (;; n++) {
                char name[32];
                struct stat st;

                snprintf(name, sizeof name, "%s%u", prefix, n);
                if (fstatat(queues_fd, name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                        return n;
        }
}

int netdev_queues(const char *root, const char *dev, NetDeviceQueues *ret) {
        _cleanup_close_ int dev_fd = -EBADF, queues_fd = -EBADF;
        _cleanup_free_ char *path = NULL, *text = NULL, *xps = NULL;
        NetDeviceQueues q = {.ifindex = -1};
        uint64_t ifindex;
        int r;

        if (!dev_name_valid(dev))
                return -EINVAL;
        if (asprintf(&path, "%s/sys/class/net/%s", root_prefix(root), dev) < 0)
                return -ENOMEM;
        dev_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dev_fd < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;

        /* A device without a queues directory has no queue to steer. */
        queues_fd = openat(dev_fd, "queues", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (queues_fd < 0 && errno != ENOENT)
                return -errno;
        q.n_rx = count_queues(queues_fd, "rx-");
        q.n_tx = count_queues(queues_fd, "tx-");
        if (queues_fd >= 0) {
                q.has_rps = faccessat(queues_fd, "rx-0/rps_cpus", F_OK, 0) == 0;
                /* Existing is not enough: 6.x kernels keep xps_cpus on single-queue devices and
                 * fail its reads with ENOENT. (An empty file is no mask either: what cp(1) leaves of
                 * such a file in a saved copy of the tree.) */
                r = queue_path(root, dev, 't', 0, "xps_cpus", &xps);
                if (r < 0)
                        return r;
                q.has_xps = read_small(xps, &text) >= 0 && text[0] != '\0';
        }

        text = mfree(text);
        path = mfree(path);
        if (asprintf(&path, "%s/sys/class/net/%s/ifindex", root_prefix(root), dev) < 0)
                return -ENOMEM;
        r = read_decimal(path, INT_MAX, &ifindex);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                q.ifindex = (int)ifindex;

        *ret = q;
        return 0;
}

int netdev_mask_bits(const char *root) {
        _cleanup_cpuset_ CpuSet possible = CPUSET_NULL;
        _cleanup_free_ char *path = NULL, *text = NULL;
        int r, last;

        if (asprintf(&path, "%s/sys/devices/system/cpu/possible", root_prefix(root)) < 0)
                return -ENOMEM;
        r = read_small(path, &text);
        if (r < 0)
                return r;
        r = cpuset_parse_list(text, &possible, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -EBADMSG;
        last = cpuset_last(&possible);
        if (last < 0)
                return -EBADMSG;
        return MAX(last + 1, 32);
}

unsigned netdev_mask_bits_for(const CpuSet *cpus) {
        int last = cpus ? cpuset_last(cpus) : -1;

        if (last < 32)
                return 32;
        return ((unsigned)last / 32 + 1) * 32;
}

static int read_mask(
        const char *root, const char *dev, char dir, unsigned queue, const char *file, CpuSet *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        int r;

        r = queue_path(root, dev, dir, queue, file, &path);
        if (r < 0)
                return r;
        r = read_small(path, &text);
        if (r < 0)
                return r;
        /* The kernel prints at least one digit ("0"); cpuset_parse_mask() would take "" as empty. */
        if (!text[strspn(text, " \t\n")])
                return -EBADMSG;
        r = cpuset_parse_mask(text, ret, NULL);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? -EBADMSG : 0;
}

static int write_mask(
        const char *root, const char *dev, char dir, unsigned queue, const char *file, const CpuSet *cpus,
        unsigned nbits) {
        _cleanup_free_ char *path = NULL, *mask = NULL, *text = NULL;
        int r;

        if (!cpus)
                return -EINVAL;
        /* Width unknown (possible CPUs unreadable): as wide as the set needs, in whole words. */
        if (nbits == 0)
                nbits = netdev_mask_bits_for(cpus);
        /* The kernel refuses a bit at or beyond its width, and a mask with more words than that
         * width needs (bitmap_parse()): keep the mask exactly nbits wide. */
        if (cpuset_last(cpus) >= 0 && (unsigned)cpuset_last(cpus) >= nbits)
                return -EOVERFLOW;
        r = queue_path(root, dev, dir, queue, file, &path);
        if (r < 0)
                return r;
        r = cpuset_format_mask(cpus, nbits, &mask);
        if (r < 0)
                return r;
        if (asprintf(&text, "%s\n", mask) < 0)
                return -ENOMEM;
        return write_once(path, text);
}

int netdev_read_rps(const char *root, const char *dev, unsigned queue, CpuSet *ret) {
        return read_mask(root, dev, 'r', queue, "rps_cpus", ret);
}

int netdev_write_rps(const char *root, const char *dev, unsigned queue, const CpuSet *cpus, unsigned nbits) {
        return write_mask(root, dev, 'r', queue, "rps_cpus", cpus, nbits);
}

int netdev_read_xps(const char *root, const char *dev, unsigned queue, CpuSet *ret) {
        return read_mask(root, dev, 't', queue, "xps_cpus", ret);
}

int netdev_write_xps(const char *root, const char *dev, unsigned queue, const CpuSet *cpus, unsigned nbits) {
        return write_mask(root, dev, 't', queue, "xps_cpus", cpus, nbits);
}

int netdev_read_flow_cnt(const char *root, const char *dev, unsigned queue, uint32_t *ret) {
        _cleanup_free_ char *path = NULL;
        uint64_t v;
        int r;

        r = queue_path(root, dev, 'r', queue, "rps_flow_cnt", &path);
        if (r < 0)
                return r;
        r = read_decimal(path, UINT32_MAX, &v);
        if (r < 0)
                return r;
        *ret = (uint32_t)v;
        return 0;
}

int netdev_write_flow_cnt(const char *root, const char *dev, unsigned queue, uint32_t count) {
        _cleanup_free_ char *path = NULL;
        char text[16];
        int r;

        if (count > 0 && count < NETDEV_FLOW_CNT_MIN)
                return -EINVAL;
        r = queue_path(root, dev, 'r', queue, "rps_flow_cnt", &path);
        if (r < 0)
                return r;
        snprintf(text, sizeof text, "%" PRIu32 "\n", count);
        return write_once(path, text);
}

/* The smallest power of two >= v, for 1 <= v <= 2^31. */
static uint32_t roundup_pow2(uint32_t v) {
        return v <= 1 ? 1 : UINT32_C(1) << (32 - __builtin_clz(v - 1));
}

uint32_t netdev_flow_cnt_expected(uint32_t count) {
        if (count == 0)
                return 0;
        if (count > UINT32_C(1) << 31)
                return UINT32_MAX;
        return roundup_pow2(count);
}

uint32_t netdev_rfs_entries_expected(uint32_t entries) {
        if (entries == 0 || entries > NETDEV_RFS_ENTRIES_MAX)
                return 0;
        return roundup_pow2(entries);
}

int netdev_read_rfs_entries(const char *root, uint32_t *ret) {
        _cleanup_free_ char *path = NULL;
        uint64_t v;
        int r;

        if (asprintf(&path, "%s/proc/sys/net/core/rps_sock_flow_entries", root_prefix(root)) < 0)
                return -ENOMEM;
        r = read_decimal(path, UINT32_MAX, &v);
        if (r < 0)
                return r;
        *ret = (uint32_t)v;
        return 0;
}

int netdev_write_rfs_entries(const char *root, uint32_t entries) {
        _cleanup_free_ char *path = NULL;
        char text[16];

        if (entries > NETDEV_RFS_ENTRIES_MAX)
                return -EINVAL;
        if (asprintf(&path, "%s/proc/sys/net/core/rps_sock_flow_entries", root_prefix(root)) < 0)
                return -ENOMEM;
        snprintf(text, sizeof text, "%" PRIu32 "\n", entries);
        return write_once(path, text);
}
