/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Network device queues and their packet steering (kernel Documentation/networking/scaling.rst,
 * net/core/net-sysfs.c): RPS (rx-N/rps_cpus), RFS (rx-N/rps_flow_cnt and the global
 * /proc/sys/net/core/rps_sock_flow_entries) and XPS (tx-N/xps_cpus).
 *
 * Every function takes root: a directory holding proc/ and sys/ ("/" for the real machine;
 * tests pass fixture trees). Paths: ROOT/sys/class/net/DEV/{ifindex,queues/rx-N,queues/tx-N},
 * ROOT/proc/sys/net/core/rps_sock_flow_entries. Masks are read and written in the kernel's hex
 * format (comma-separated 32-bit words, most significant first: cpuset_parse_mask()); written
 * masks are nbits wide, nbits being netdev_mask_bits(). Nothing here logs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"

/*
 * What a device has: queue counts (rx-N / tx-N directories) and which files exist. The kernel
 * numbers queues contiguously from 0 and adds and removes them at the top; n_rx (n_tx) counts
 * rx-0, rx-1, ... up to the first number missing, so a gap (only seen while the count changes)
 * hides the queues above it and every queue counted existed when looked at.
 */
typedef struct NetDeviceQueues {
        unsigned n_rx; /* rx-0 .. rx-(n_rx-1) */
        unsigned n_tx; /* tx-0 .. tx-(n_tx-1) */
        bool has_rps;  /* rx-0/rps_cpus exists (CONFIG_RPS) */
        bool has_xps;  /* tx-0/xps_cpus exists and can be read: older kernels show it only on
                        * multi-queue devices, current ones (6.18 here) keep the file on single-queue
                        * devices but fail reads and writes with ENOENT */
        int ifindex;   /* ROOT/sys/class/net/DEV/ifindex, -1 if unreadable */
} NetDeviceQueues;

/* Network interface names in ROOT/sys/class/net, sorted, as a newly allocated NULL-terminated
 * vector (NULL when none). Returns 0 or -errno (opendir(3)). */
int netdev_list(const char *root, char ***ret);

/* The queues of dev into *ret. Returns 0, -ENODEV (no such device), -EINVAL (an empty name, one
 * holding "/", "." or ".."), -errno. */
int netdev_queues(const char *root, const char *dev, NetDeviceQueues *ret);

/*
 * The width, in bits, of masks written to the kernel: the number of possible CPUs
 * (ROOT/sys/devices/system/cpu/possible, highest + 1), at least 32. Returns it (> 0) or -errno.
 */
int netdev_mask_bits(const char *root);

/*
 * The width, in bits, a mask of cpus needs when the kernel's is unknown (netdev_mask_bits()
 * failed): highest CPU + 1 rounded up to whole 32-bit words, at least 32 (also for an empty or
 * NULL set). The kernel refuses such a mask only when it holds a CPU beyond its nr_cpu_ids.
 */
unsigned netdev_mask_bits_for(const CpuSet *cpus);

/* rx-N/rps_cpus into *ret (initialised, replaced). Returns 0, -ENOENT, -EBADMSG, -errno. */
int netdev_read_rps(const char *root, const char *dev, unsigned queue, CpuSet *ret);
/*
 * Writes cpus (may be empty: RPS off) as a mask nbits wide to rx-N/rps_cpus, in one write(2).
 * nbits is netdev_mask_bits(); 0 when that failed (possible CPUs unreadable): the mask is then
 * as wide as cpus needs (netdev_mask_bits_for()), which the kernel accepts as long as it is not
 * wider than its own.
 * Returns 0 or the kernel's -errno: -EOVERFLOW for a CPU >= nbits (checked before writing, as
 * the kernel's bitmap_parse() would refuse it; a mask wider than nr_cpu_ids is refused the same
 * way, hence nbits = netdev_mask_bits()), -EINVAL when no housekeeping CPU is left (isolcpus=,
 * nohz_full=) or cpus is NULL, -ENOENT, -EPERM, ... The kernel keeps only the online CPUs of the
 * mask: an offline-only mask turns RPS off, without an error.
 */
int netdev_write_rps(const char *root, const char *dev, unsigned queue, const CpuSet *cpus, unsigned nbits);

/* tx-N/xps_cpus, likewise (one write(2), nbits 0 as above, -EOVERFLOW for a CPU >= nbits). On a
 * single-queue device the kernel fails both with -ENOENT even where the file exists (has_xps
 * false). */
int netdev_read_xps(const char *root, const char *dev, unsigned queue, CpuSet *ret);
int netdev_write_xps(const char *root, const char *dev, unsigned queue, const CpuSet *cpus, unsigned nbits);

/* The smallest non-zero rps_flow_cnt every kernel accepts: some kernels refuse 1 with EINVAL
 * (a one-entry table has no hash bits), while 0 (no table) and every count >= 2 are taken. */
#define NETDEV_FLOW_CNT_MIN UINT32_C(2)

/* rx-N/rps_flow_cnt (decimal, one write(2)). Returns 0, -ENOENT, -EBADMSG (unparsable, or
 * beyond uint32_t), -errno (-ENOMEM: the kernel could not allocate the table). The kernel rounds
 * what is written up to a power of two (netdev_flow_cnt_expected()). The writer returns -EINVAL
 * without writing for a count between 0 and NETDEV_FLOW_CNT_MIN, which not every kernel accepts. */
int netdev_read_flow_cnt(const char *root, const char *dev, unsigned queue, uint32_t *ret);
int netdev_write_flow_cnt(const char *root, const char *dev, unsigned queue, uint32_t count);

/*
 * What the kernel keeps when count is written to rps_flow_cnt: 0 stays 0 (no table), anything
 * else is rounded up to the next power of two (net/core/net-sysfs.c,
 * store_rps_dev_flow_table_cnt(): mask = roundup_pow_of_two(count) - 1). The kernel caps nothing
 * below 2^32 entries on 64-bit (it only refuses a mask beyond u32 with EINVAL) but must vmalloc()
 * 2^k entries, so huge counts fail with ENOMEM. A count above 2^31 would round to 2^32, which a
 * uint32_t cannot hold: UINT32_MAX is returned for those, a value no read-back equals.
 */
uint32_t netdev_flow_cnt_expected(uint32_t count);

/* The largest net.core.rps_sock_flow_entries the kernel accepts (sysctl_net_core.c,
 * rps_sock_flow_sysctl(): larger values fail with EINVAL). */
#define NETDEV_RFS_ENTRIES_MAX (UINT32_C(1) << 29)

/*
 * ROOT/proc/sys/net/core/rps_sock_flow_entries (net.core.rps_sock_flow_entries, decimal; the
 * kernel rounds it up to a power of two as well: netdev_rfs_entries_expected()). Returns 0,
 * -EBADMSG (unparsable), -errno. The writer writes in one write(2) and returns -EINVAL without
 * writing for entries > NETDEV_RFS_ENTRIES_MAX (as the kernel would), else 0 or the kernel's
 * -errno (-ENOMEM: table not allocated, -EPERM).
 */
int netdev_read_rfs_entries(const char *root, uint32_t *ret);
int netdev_write_rfs_entries(const char *root, uint32_t entries);

/* What the kernel keeps when entries is written to rps_sock_flow_entries: 0 stays 0 (RFS off),
 * 1..NETDEV_RFS_ENTRIES_MAX are rounded up to a power of two (roundup_pow_of_two()); larger
 * values are refused by the kernel, for which this returns 0. */
uint32_t netdev_rfs_entries_expected(uint32_t entries);
