/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of IRQ affinity and device IRQs: on fixture trees built per test in a temp dir
 * (ROOT/proc/irq/N/..., ROOT/sys/class/net/DEV/device -> ROOT/sys/devices/..., and
 * ROOT/sys/bus/pci/devices/ADDR), read-only on this machine's /proc/irq and /sys, and one real
 * write: eth0's rx IRQ moved to CPU 1 and back (restored on every path).
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "interrupts.h"
#include "irq.h"
#include "macro.h"

static char *top;  /* temp dir of the current test: holds root/ and out/ */
static char *root; /* the fixture tree of the current test: TOP/root */

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

/* Writes s to ROOT/rel with mode, creating directories. */
static void put_mode(const char *rel, const char *s, mode_t mode) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        *strrchr(path, '/') = '\0';
        mkdir_p(path);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
        close(fd);
        ck_assert_int_eq(chmod(path, mode), 0);
}

static void put(const char *rel, const char *s) {
        put_mode(rel, s, 0644);
}

static void put_dir(const char *rel) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        mkdir_p(path);
}

static void put_link(const char *rel, const char *target) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        *strrchr(path, '/') = '\0';
        mkdir_p(path);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        ck_assert_int_eq(symlink(target, path), 0);
}

/* The content of ROOT/rel ("" root: an absolute path), newly allocated. */
static char *get_abs(const char *path) {
        char buf[65536];
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        ck_assert_msg(fd >= 0, "%s: %m", path);
        n = read(fd, buf, sizeof(buf) - 1);
        ck_assert_int_ge(n, 0);
        buf[n] = '\0';
        close(fd);
        return strdup(buf);
}

static char *get(const char *rel) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        return get_abs(path);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)st;
        (void)type;
        (void)ftw;
        return remove(path);
}

static void fixture_setup(void) {
        char tmpl[] = "/tmp/test-irq-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        top = strdup(tmpl);
        ck_assert_ptr_nonnull(top);
        ck_assert_int_ge(asprintf(&root, "%s/root", top), 0);
        ck_assert_int_eq(mkdir(root, 0755), 0);
}

static void fixture_teardown(void) {
        if (top)
                nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        top = mfree(top);
        root = mfree(root);
}

/* An IRQ directory as the kernel makes it; managed ones read-only. */
static void put_irq(
        unsigned irq, const char *list, const char *mask, const char *effective, const char *node,
        bool managed) {
        char rel[PATH_MAX];
        mode_t m = managed ? 0444 : 0644;

        snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", irq);
        put_mode(rel, list, m);
        snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity", irq);
        put_mode(rel, mask, m);
        if (effective) {
                snprintf(rel, sizeof(rel), "proc/irq/%u/effective_affinity_list", irq);
                put_mode(rel, effective, 0444);
        }
        snprintf(rel, sizeof(rel), "proc/irq/%u/node", irq);
        put_mode(rel, node, 0444);
}

/*
 * The sysfs of this machine's eth0 (virtio-net below a PCI function) plus: an SR-IOV-like VF
 * whose device link is the PCI function, a legacy INTx device, a veth with no device link, a
 * platform NIC, a USB NIC below the xHCI controller's PCI function, a virtio-net device on
 * virtio-mmio (no PCI function at all), and a link leading outside ROOT.
 */
static void put_sysfs(void) {
        char target[PATH_MAX];

        put_dir("sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");
        put("sys/devices/pci0000:00/0000:00:03.0/irq", "11\n");
        /* created out of order; 100 sorts after 39 numerically, not as text */
        put("sys/devices/pci0000:00/0000:00:03.0/msi_irqs/100", "msix\n");
        put("sys/devices/pci0000:00/0000:00:03.0/msi_irqs/39", "msix\n");
        put("sys/devices/pci0000:00/0000:00:03.0/msi_irqs/37", "msix\n");
        put("sys/devices/pci0000:00/0000:00:03.0/msi_irqs/38", "msix\n");
        put_link("sys/class/net/eth0/device", "../../../devices/pci0000:00/0000:00:03.0/virtio2");
        put_link("sys/bus/pci/devices/0000:00:03.0", "../../../devices/pci0000:00/0000:00:03.0");

        put("sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.2/msi_irqs/200", "msix\n");
        put("sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.2/irq", "0\n");
        put_link("sys/class/net/ens1f0v2/device", "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.2");
        put_link(
                "sys/bus/pci/devices/0000:3b:00.2", "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.2");

        put("sys/devices/pci0000:00/0000:00:1f.2/irq", "19\n");
        put_link("sys/bus/pci/devices/0000:00:1f.2", "../../../devices/pci0000:00/0000:00:1f.2");

        put("sys/devices/pci0000:00/0000:00:1f.3/irq", "0\n");
        put_dir("sys/devices/pci0000:00/0000:00:1f.3/msi_irqs");
        put_link("sys/bus/pci/devices/0000:00:1f.3", "../../../devices/pci0000:00/0000:00:1f.3");

        /* USB NIC: the PCI function above it is the host controller, shared by every USB device */
        put_dir("sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/net/usb0");
        put("sys/devices/pci0000:00/0000:00:14.0/msi_irqs/120", "msi\n");
        put_link("sys/class/net/usb0/device", "../../../devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0");
        put_link("sys/bus/pci/devices/0000:00:14.0", "../../../devices/pci0000:00/0000:00:14.0");

        /* virtio-net on virtio-mmio: "virtio0" is stepped over, but no PCI function is above */
        put_dir("sys/devices/platform/a000000.virtio_mmio/virtio0/net/mmio0");
        put_link("sys/class/net/mmio0/device", "../../../devices/platform/a000000.virtio_mmio/virtio0");

        /* only "virtio" + digits is stepped over */
        put_dir("sys/devices/pci0000:00/0000:00:05.0/virtio-x/net/odd0");
        put_link("sys/class/net/odd0/device", "../../../devices/pci0000:00/0000:00:05.0/virtio-x");

        put_dir("sys/class/net/veth0");
        put_dir("sys/devices/platform/ftgmac/net/plat0");
        put_link("sys/class/net/plat0/device", "../../../devices/platform/ftgmac");

        /* a device link out of ROOT (into TOP/out), into a directory named like a PCI function */
        snprintf(target, sizeof(target), "%s/out/0000:00:09.0", top);
        mkdir_p(target);
        put_link("sys/class/net/escape0/device", "../../../../out/0000:00:09.0");
}

/* ---- refusals -------------------------------------------------------------------------------- */

START_TEST(test_refusal_mapping) {
        static const struct {
                int error;
                IrqRefusal refusal;
                const char *token;
        } cases[] = {
                {0, IRQ_REFUSAL_NONE, "none"},
                {-EPERM, IRQ_REFUSAL_MANAGED, "managed"},
                {-EIO, IRQ_REFUSAL_MANAGED, "managed"},
                {-ENOSPC, IRQ_REFUSAL_NO_VECTOR, "no-vector"},
                {-EINVAL, IRQ_REFUSAL_OFFLINE, "offline"},
                {-ERANGE, IRQ_REFUSAL_TOO_WIDE, "too-wide"},
                {-EOVERFLOW, IRQ_REFUSAL_TOO_WIDE, "too-wide"},
                {-ENOENT, IRQ_REFUSAL_GONE, "gone"},
                {-EBUSY, IRQ_REFUSAL_OTHER, "failed"},
                {-EACCES, IRQ_REFUSAL_OTHER, "failed"},
                {-ENOMEM, IRQ_REFUSAL_OTHER, "failed"},
                {EIO, IRQ_REFUSAL_MANAGED, "managed"}, /* positive errno alike */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                IrqRefusal r = irq_refusal_from_errno(cases[i].error);
                ck_assert_msg(r == cases[i].refusal, "errno %d: %d", cases[i].error, r);
                ck_assert_str_eq(irq_refusal_to_string(r), cases[i].token);
                ck_assert_ptr_nonnull(irq_refusal_explain(r));
        }
        ck_assert_str_eq(
                irq_refusal_explain(IRQ_REFUSAL_MANAGED), "managed by the kernel; see isolcpus=managed_irq");
        ck_assert_str_eq(
                irq_refusal_explain(IRQ_REFUSAL_NO_VECTOR),
                "no free interrupt vector on those CPUs (ENOSPC)");
        ck_assert_str_eq(irq_refusal_explain(IRQ_REFUSAL_OFFLINE), "no online CPU in the mask (EINVAL)");
        ck_assert_str_eq(
                irq_refusal_explain(IRQ_REFUSAL_TOO_WIDE), "CPU beyond the kernel's limit (nr_cpu_ids)");
        ck_assert_str_eq(irq_refusal_explain(IRQ_REFUSAL_GONE), "the IRQ no longer exists");
        ck_assert_str_ne(irq_refusal_explain(IRQ_REFUSAL_OTHER), "");
        ck_assert_str_eq(irq_refusal_to_string(IRQ_REFUSAL_NOT_MOVABLE), "not-movable");
        ck_assert_str_eq(
                irq_refusal_explain(IRQ_REFUSAL_NOT_MOVABLE), "the kernel does not allow moving this IRQ");
        ck_assert_ptr_null(irq_refusal_to_string(_IRQ_REFUSAL_MAX));
        ck_assert_ptr_null(irq_refusal_explain(_IRQ_REFUSAL_MAX));
}
END_TEST

/* ---- affinity on fixtures -------------------------------------------------------------------- */

START_TEST(test_fixture_read) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, want = CPUSET_NULL;
        int node = 42;

        put_irq(38, "0-3,8\n", "0000010f\n", "2\n", "1\n", false);
        put_irq(36, "5\n", "00000020\n", "5\n", "-1\n", true);
        put_irq(50, "garbage-\n", "1\n", NULL, "x\n", false);

        ck_assert_int_eq(cpuset_add(&s, 99), 0); /* replaced, not merged */
        ck_assert_int_eq(irq_read_affinity(root, 38, &s), 0);
        ck_assert_int_eq(cpuset_parse_list("0-3,8", &want, NULL), 0);
        ck_assert(cpuset_equal(&s, &want));

        ck_assert_int_eq(irq_read_effective(root, 38, &s), 0);
        ck_assert_uint_eq(cpuset_count(&s), 1);
        ck_assert(cpuset_contains(&s, 2));

        ck_assert_int_eq(irq_read_node(root, 38, &node), 0);
        ck_assert_int_eq(node, 1);
        ck_assert_int_eq(irq_read_node(root, 36, &node), 0);
        ck_assert_int_eq(node, -1);
        node = 42;
        ck_assert_int_eq(irq_read_node(root, 50, &node), -EBADMSG);
        ck_assert_int_eq(node, 42);
        ck_assert_int_eq(irq_read_node(root, 51, &node), -ENOENT);

        /* unparsable list: -EBADMSG, set untouched */
        ck_assert_int_eq(irq_read_affinity(root, 50, &s), -EBADMSG);
        ck_assert(cpuset_contains(&s, 2));
        ck_assert_int_eq(irq_read_effective(root, 50, &s), -ENOENT); /* kernel without the file */
        ck_assert_int_eq(irq_read_affinity(root, 51, &s), -ENOENT);  /* IRQ gone */
        ck_assert_int_eq(irq_read_effective(root, 51, &s), -ENOENT);

        ck_assert_int_eq(irq_is_managed(root, 38), 0);
        ck_assert_int_eq(irq_is_managed(root, 36), 1);
        ck_assert_int_eq(irq_is_managed(root, 51), -ENOENT);
}
END_TEST

START_TEST(test_fixture_write) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, back = CPUSET_NULL, empty = CPUSET_NULL;
        _cleanup_free_ char *text = NULL;

        put_irq(38, "0-1\n", "3\n", "0\n", "0\n", false);
        put_irq(36, "0-1\n", "3\n", "0\n", "0\n", true);

        ck_assert_int_eq(cpuset_add(&s, 1), 0);
        ck_assert_int_eq(irq_write_affinity(root, 38, &s), 0);
        text = get("proc/irq/38/smp_affinity_list");
        ck_assert_str_eq(text, "1");
        ck_assert_int_eq(irq_read_affinity(root, 38, &back), 0);
        ck_assert(cpuset_equal(&back, &s));
        text = mfree(text);

        /* beyond 64 CPUs: a cpu-list, not a mask, replacing the longer old content */
        ck_assert_int_eq(cpuset_parse_list("70-130,200,4095", &s, NULL), 0);
        ck_assert_int_eq(irq_write_affinity(root, 38, &s), 0);
        text = get("proc/irq/38/smp_affinity_list");
        ck_assert_str_eq(text, "70-130,200,4095");
        ck_assert_int_eq(irq_read_affinity(root, 38, &back), 0);
        ck_assert(cpuset_equal(&back, &s));
        ck_assert_uint_eq(cpuset_count(&back), 63);
        text = mfree(text);

        ck_assert_int_eq(cpuset_parse_list("2", &s, NULL), 0);
        ck_assert_int_eq(irq_write_affinity(root, 38, &s), 0);
        text = get("proc/irq/38/smp_affinity_list");
        ck_assert_str_eq(text, "2"); /* truncated: nothing of the old list left */
        text = mfree(text);

        /* managed: refused without writing (root could write the 0444 file) */
        ck_assert_int_eq(irq_write_affinity(root, 36, &s), -EPERM);
        text = get("proc/irq/36/smp_affinity_list");
        ck_assert_str_eq(text, "0-1\n");
        text = mfree(text);
        ck_assert(irq_refusal_from_errno(-EPERM) == IRQ_REFUSAL_MANAGED);

        /* empty set: -EINVAL, nothing written */
        ck_assert_int_eq(irq_write_affinity(root, 38, &empty), -EINVAL);
        text = get("proc/irq/38/smp_affinity_list");
        ck_assert_str_eq(text, "2");

        /* gone */
        ck_assert_int_eq(irq_write_affinity(root, 77, &s), -ENOENT);
        ck_assert(irq_refusal_from_errno(irq_write_affinity(root, 77, &s)) == IRQ_REFUSAL_GONE);
}
END_TEST

/* EIO and EPERM are managed only when the IRQ is: the kernel refuses per-CPU and
 * IRQF_NOBALANCING IRQs with EIO as well. */
START_TEST(test_fixture_refusal_classify) {
        static const struct {
                unsigned irq;
                int error;
                IrqRefusal refusal;
        } cases[] = {
                {36, -EIO, IRQ_REFUSAL_MANAGED},        {36, -EPERM, IRQ_REFUSAL_MANAGED},
                {36, EPERM, IRQ_REFUSAL_MANAGED},       {40, -EIO, IRQ_REFUSAL_NOT_MOVABLE},
                {40, EIO, IRQ_REFUSAL_NOT_MOVABLE},     {40, -EPERM, IRQ_REFUSAL_NOT_MOVABLE},
                {77, -EIO, IRQ_REFUSAL_GONE}, /* vanished since the write */
                {40, -ENOSPC, IRQ_REFUSAL_NO_VECTOR},   {40, -EINVAL, IRQ_REFUSAL_OFFLINE},
                {40, -EOVERFLOW, IRQ_REFUSAL_TOO_WIDE}, {40, -ENOENT, IRQ_REFUSAL_GONE},
                {36, -EBUSY, IRQ_REFUSAL_OTHER},        {40, 0, IRQ_REFUSAL_NONE},
        };

        put_irq(36, "0-1\n", "3\n", "0\n", "0\n", true);
        put_irq(40, "0\n", "1\n", "0\n", "0\n", false);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                IrqRefusal r = irq_refusal_classify(root, cases[i].irq, cases[i].error);
                ck_assert_msg(
                        r == cases[i].refusal, "IRQ %u, errno %d: %s, expected %s", cases[i].irq,
                        cases[i].error, irq_refusal_to_string(r), irq_refusal_to_string(cases[i].refusal));
        }
        /* the plain mapping does not look */
        ck_assert(irq_refusal_from_errno(-EIO) == IRQ_REFUSAL_MANAGED);
}
END_TEST

/* The refusal of each IRQ of the real /proc/irq, by its mode: managed when smp_affinity has no
 * write bit, else not movable. The live-managed mode runs it, so both kinds are there. */
START_TEST(test_live_refusal_classify) {
        _cleanup_closedir_ DIR *d = opendir("/proc/irq");
        struct dirent *de;
        unsigned seen_managed = 0, seen_plain = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                char *end;
                unsigned long irq = strtoul(de->d_name, &end, 10);
                int m;

                if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end)
                        continue;
                m = irq_is_managed("/", (unsigned)irq);
                if (m < 0)
                        continue;
                ck_assert(
                        irq_refusal_classify("/", (unsigned)irq, -EIO) ==
                        (m ? IRQ_REFUSAL_MANAGED : IRQ_REFUSAL_NOT_MOVABLE));
                if (m)
                        seen_managed++;
                else
                        seen_plain++;
        }
        ck_assert_uint_gt(seen_managed, 0);
        ck_assert_uint_gt(seen_plain, 0);
}
END_TEST

/* ---- device IRQs on fixtures ----------------------------------------------------------------- */

static void assert_address(const char *device, const char *want) {
        char *addr = NULL;
        int r = irq_device_pci_address(root, device, &addr);

        ck_assert_msg(r == 0, "%s: %d", device, r);
        ck_assert_str_eq(addr, want);
        free(addr);
}

static void assert_address_error(const char *device, int error) {
        char *addr = (char *)"untouched";
        int r = irq_device_pci_address(root, device, &addr);

        ck_assert_msg(r == error, "%s: %d, expected %d", device, r, error);
        ck_assert_str_eq(addr, "untouched");
}

START_TEST(test_fixture_pci_address) {
        put_sysfs();

        assert_address("eth0", "0000:00:03.0");
        assert_address("ens1f0v2", "0000:3b:00.2");
        assert_address("0000:00:03.0", "0000:00:03.0");
        assert_address("00:03.0", "0000:00:03.0");
        assert_address("0000:3B:00.2", "0000:3b:00.2");
        assert_address("3b:00.2", "0000:3b:00.2");
        assert_address("0000:00:1f.2", "0000:00:1f.2");

        assert_address_error("veth0", -ENXIO);
        assert_address_error("usb0", -ENXIO);
        assert_address_error("mmio0", -ENXIO);
        assert_address_error("odd0", -ENXIO);
        /* the controller itself, named by address, is still a PCI function */
        assert_address("0000:00:14.0", "0000:00:14.0");
        assert_address_error("plat0", -ENXIO);
        assert_address_error("escape0", -ENXIO);
        assert_address_error("nope0", -ENODEV);
        assert_address_error("0000:00:09.0", -ENODEV);
        assert_address_error("09.0:00", -ENODEV);
        assert_address_error("", -EINVAL);
        assert_address_error("../net/eth0", -EINVAL);
        assert_address_error("..", -EINVAL);
}
END_TEST

static void assert_irqs(const char *device, const unsigned *want, size_t n_want) {
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n = 12345;
        int r = irq_device_irqs(root, device, &irqs, &n);

        ck_assert_msg(r == 0, "%s: %d", device, r);
        ck_assert_uint_eq(n, n_want);
        if (n_want == 0)
                ck_assert_ptr_null(irqs);
        for (size_t i = 0; i < n_want; i++)
                ck_assert_uint_eq(irqs[i], want[i]);
}

START_TEST(test_fixture_device_irqs) {
        static const unsigned eth0[] = {37, 38, 39, 100}, vf[] = {200}, legacy[] = {19};
        unsigned *irqs = (unsigned *)(uintptr_t)1;
        size_t n = 7;

        put_sysfs();

        assert_irqs("eth0", eth0, ELEMENTSOF(eth0));
        assert_irqs("00:03.0", eth0, ELEMENTSOF(eth0));
        assert_irqs("ens1f0v2", vf, ELEMENTSOF(vf));
        assert_irqs("0000:00:1f.2", legacy, ELEMENTSOF(legacy)); /* no msi_irqs/: the INTx line */
        assert_irqs("0000:00:1f.3", NULL, 0);                    /* empty msi_irqs/, irq 0 */

        ck_assert_int_eq(irq_device_irqs(root, "veth0", &irqs, &n), -ENXIO);
        ck_assert_int_eq(irq_device_irqs(root, "usb0", &irqs, &n), -ENXIO); /* not the xHCI's IRQ 120 */
        ck_assert_int_eq(irq_device_irqs(root, "nope0", &irqs, &n), -ENODEV);
        ck_assert_ptr_eq(irqs, (unsigned *)(uintptr_t)1);
        ck_assert_uint_eq(n, 7);
}
END_TEST

/* ---- this machine, read-only ----------------------------------------------------------------- */

/* A network interface with a PCI function (eth0 if it has one), derived from /sys; NULL if none. */
static char *live_pci_interface(void) {
        _cleanup_closedir_ DIR *d = opendir("/sys/class/net");
        struct dirent *de;
        char path[PATH_MAX];
        char *found = NULL;

        if (!d)
                return NULL; /* also called from main(), outside a test: no ck_assert here */
        snprintf(path, sizeof(path), "/sys/class/net/eth0/device");
        if (access(path, F_OK) == 0)
                return strdup("eth0");
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        snprintf(path, sizeof(path), "/sys/class/net/%s/device", de->d_name);
                        if (access(path, F_OK) == 0) {
                                found = strdup(de->d_name);
                                break;
                        }
                }
        return found;
}

/* The PCI function of ifname, found by matching each /sys/bus/pci/devices/X against its path. */
static char *live_pci_function_of(const char *ifname) {
        _cleanup_closedir_ DIR *d = opendir("/sys/bus/pci/devices");
        _cleanup_free_ char *dev = NULL;
        char path[PATH_MAX], *best = NULL;
        size_t best_len = 0;
        struct dirent *de;

        snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifname);
        dev = realpath(path, NULL);
        ck_assert_ptr_nonnull(dev);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *fn = NULL;
                size_t len;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", de->d_name);
                fn = realpath(path, NULL);
                if (!fn)
                        continue;
                len = strlen(fn);
                /* the deepest function containing the device (a bridge also contains it) */
                if (strncmp(dev, fn, len) == 0 && (dev[len] == '/' || dev[len] == '\0') && len > best_len) {
                        free(best);
                        best = strdup(de->d_name);
                        best_len = len;
                }
        }
        return best;
}

static int cmp_unsigned(const void *a, const void *b) {
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return x < y ? -1 : x > y;
}

static size_t live_msi_irqs(const char *addr, unsigned *out, size_t max) {
        char path[PATH_MAX];
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;

        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/msi_irqs", addr);
        d = opendir(path);
        if (!d)
                return 0;
        while ((de = readdir(d)))
                if (de->d_name[0] >= '0' && de->d_name[0] <= '9') {
                        ck_assert_uint_lt(n, max);
                        out[n++] = (unsigned)strtoul(de->d_name, NULL, 10);
                }
        qsort(out, n, sizeof(unsigned), cmp_unsigned);
        return n;
}

START_TEST(test_live_device_irqs) {
        _cleanup_free_ char *ifname = live_pci_interface(), *fn = NULL, *addr = NULL;
        _cleanup_free_ unsigned *irqs = NULL;
        unsigned want[256];
        size_t n_want, n;

        ck_assert_msg(ifname, "no network interface with a PCI function (main() checked there was one)");
        fn = live_pci_function_of(ifname);
        ck_assert_msg(fn, "no PCI function found for %s", ifname);

        ck_assert_int_eq(irq_device_pci_address("/", ifname, &addr), 0);
        ck_assert_str_eq(addr, fn);
        addr = mfree(addr);
        ck_assert_int_eq(irq_device_pci_address(NULL, ifname, &addr), 0);
        ck_assert_str_eq(addr, fn);

        n_want = live_msi_irqs(fn, want, ELEMENTSOF(want));
        ck_assert_int_eq(irq_device_irqs("/", ifname, &irqs, &n), 0);
        if (n_want > 0) {
                ck_assert_uint_eq(n, n_want);
                for (size_t i = 0; i < n; i++) {
                        char path[PATH_MAX];
                        ck_assert_uint_eq(irqs[i], want[i]);
                        snprintf(path, sizeof(path), "/proc/irq/%u", irqs[i]);
                        ck_assert_msg(access(path, F_OK) == 0, "%s: %m", path);
                }
        }

        /* lo has no device */
        addr = mfree(addr);
        ck_assert_int_eq(irq_device_pci_address("/", "lo", &addr), -ENXIO);
        ck_assert_int_eq(irq_device_pci_address("/", "afd-no-such-if", &addr), -ENODEV);
}
END_TEST

START_TEST(test_live_proc_irq) {
        _cleanup_closedir_ DIR *d = opendir("/proc/irq");
        struct dirent *de;
        unsigned n = 0, managed = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                _cleanup_cpuset_ CpuSet aff = CPUSET_NULL, eff = CPUSET_NULL, m = CPUSET_NULL;
                char path[PATH_MAX];
                struct stat st;
                unsigned irq;
                int node, want_node;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                irq = (unsigned)strtoul(de->d_name, NULL, 10);
                n++;

                /* managed exactly when smp_affinity has no write bit */
                snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity", irq);
                ck_assert_int_eq(stat(path, &st), 0);
                ck_assert_int_eq(irq_is_managed("/", irq), (st.st_mode & 0222) == 0);
                if ((st.st_mode & 0222) == 0)
                        managed++;

                /* the list and the hex mask agree */
                ck_assert_int_eq(irq_read_affinity("/", irq, &aff), 0);
                {
                        _cleanup_free_ char *mask = get_abs(path);
                        ck_assert_int_eq(cpuset_parse_mask(mask, &m, NULL), 0);
                        ck_assert_msg(cpuset_equal(&aff, &m), "IRQ %u: list and mask differ", irq);
                }
                snprintf(path, sizeof(path), "/proc/irq/%u/effective_affinity", irq);
                if (access(path, F_OK) == 0) {
                        _cleanup_free_ char *mask = get_abs(path);
                        ck_assert_int_eq(irq_read_effective("/", irq, &eff), 0);
                        ck_assert_int_eq(cpuset_parse_mask(mask, &m, NULL), 0);
                        ck_assert_msg(cpuset_equal(&eff, &m), "IRQ %u: effective list and mask differ", irq);
                }

                snprintf(path, sizeof(path), "/proc/irq/%u/node", irq);
                {
                        _cleanup_free_ char *t = get_abs(path);
                        want_node = atoi(t);
                }
                ck_assert_int_eq(irq_read_node("/", irq, &node), 0);
                ck_assert_int_eq(node, want_node);
        }
        ck_assert_uint_gt(n, 0);
        fprintf(stderr, "%u IRQs, %u managed\n", n, managed);
}
END_TEST

/* ---- this machine, one real write ------------------------------------------------------------ */

/* Originals, saved before and restored after every live write test (in the test process by
 * the checked teardown, and again in the runner by the unchecked one, which runs even when a
 * failed assertion ended the test process early). */
static unsigned live_rx_irq, live_managed_irq;
static char *live_rx_original, *live_managed_original;

static void write_raw(unsigned irq, const char *list) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", irq);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        (void)!write(fd, list, strlen(list));
        close(fd);
}

static char *read_list(unsigned irq) {
        char path[PATH_MAX];
        char *s;

        snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", irq);
        if (access(path, F_OK) < 0)
                return NULL;
        s = get_abs(path);
        s[strcspn(s, "\n")] = '\0';
        return s;
}

/* eth0's rx IRQ: the one whose /proc/interrupts name contains "input", else its 2nd MSI IRQ. */
static unsigned find_rx_irq(const char *ifname) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = NULL;
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n = 0;

        if (irq_device_irqs("/", ifname, &irqs, &n) < 0 || n == 0)
                return 0;
        if (interrupts_read("/proc/interrupts", &t, NULL) >= 0)
                for (size_t i = 0; i < n; i++) {
                        const InterruptLine *l = interrupt_table_find(t, irqs[i]);
                        if (l && strstr(l->actions, "input") && irq_is_managed("/", irqs[i]) == 0)
                                return irqs[i];
                }
        if (n >= 2 && irq_is_managed("/", irqs[1]) == 0)
                return irqs[1];
        return 0;
}

static unsigned find_managed_irq(void) {
        _cleanup_closedir_ DIR *d = opendir("/proc/irq");
        struct dirent *de;

        if (!d)
                return 0;
        while ((de = readdir(d)))
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9') {
                        char path[PATH_MAX];
                        struct stat st;
                        snprintf(path, sizeof(path), "/proc/irq/%s/smp_affinity", de->d_name);
                        if (stat(path, &st) == 0 && (st.st_mode & 0222) == 0)
                                return (unsigned)strtoul(de->d_name, NULL, 10);
                }
        return 0;
}

static void live_save(void) {
        _cleanup_free_ char *ifname = live_pci_interface();

        live_rx_irq = ifname ? find_rx_irq(ifname) : 0;
        live_managed_irq = find_managed_irq();
        live_rx_original = live_rx_irq ? read_list(live_rx_irq) : NULL;
        live_managed_original = live_managed_irq ? read_list(live_managed_irq) : NULL;
}

static void live_restore(void) {
        if (live_rx_original) {
                _cleanup_free_ char *now = read_list(live_rx_irq);
                if (!now || !streq(now, live_rx_original))
                        write_raw(live_rx_irq, live_rx_original);
        }
        if (live_managed_original) {
                _cleanup_free_ char *now = read_list(live_managed_irq);
                if (!now || !streq(now, live_managed_original))
                        write_raw(live_managed_irq, live_managed_original);
        }
}

static void live_unchecked_teardown(void) {
        live_restore();
        live_rx_original = mfree(live_rx_original);
        live_managed_original = mfree(live_managed_original);
}

START_TEST(test_live_write) {
        _cleanup_cpuset_ CpuSet one = CPUSET_NULL, back = CPUSET_NULL, orig = CPUSET_NULL;
        _cleanup_free_ char *now = NULL;

        ck_assert_msg(
                live_rx_irq > 0 && live_rx_original, "no movable rx IRQ of a PCI network interface found");

        ck_assert_int_eq(cpuset_parse_list(live_rx_original, &orig, NULL), 0);
        ck_assert_int_eq(cpuset_add(&one, 1), 0);
        ck_assert_int_eq(irq_write_affinity("/", live_rx_irq, &one), 0);
        now = read_list(live_rx_irq);
        ck_assert_str_eq(now, "1");
        ck_assert_int_eq(irq_read_affinity("/", live_rx_irq, &back), 0);
        ck_assert(cpuset_equal(&back, &one));
        ck_assert_int_eq(irq_read_effective("/", live_rx_irq, &back), 0);

        ck_assert_int_eq(irq_write_affinity("/", live_rx_irq, &orig), 0);
        now = mfree(now);
        now = read_list(live_rx_irq);
        ck_assert_str_eq(now, live_rx_original);
}
END_TEST

/* A kernel-managed IRQ's affinity is refused (EPERM) by irq_write_affinity() and by the kernel
 * itself, and stays as it was. */
START_TEST(test_live_write_managed) {
        _cleanup_cpuset_ CpuSet cur = CPUSET_NULL, other = CPUSET_NULL;
        _cleanup_free_ char *now = NULL;
        char path[PATH_MAX];
        int fd;

        ck_assert_msg(live_managed_irq > 0 && live_managed_original, "no kernel-managed IRQ found");
        ck_assert_int_eq(irq_is_managed("/", live_managed_irq), 1);
        ck_assert_int_eq(irq_read_affinity("/", live_managed_irq, &cur), 0);
        ck_assert_int_eq(cpuset_add(&other, cpuset_contains(&cur, 0) ? 1 : 0), 0);
        ck_assert_int_eq(irq_write_affinity("/", live_managed_irq, &other), -EPERM);
        ck_assert(irq_refusal_from_errno(-EPERM) == IRQ_REFUSAL_MANAGED);
        now = read_list(live_managed_irq);
        ck_assert_str_eq(now, live_managed_original);

        /* The kernel itself refuses too (root passes the 0444 check): writing the current
         * list, which changes nothing even if it were accepted, fails EPERM (EIO on older
         * kernels) — the refusal irq_refusal_from_errno() calls managed. */
        snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", live_managed_irq);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_lt(write(fd, live_managed_original, strlen(live_managed_original)), 0);
        ck_assert(irq_refusal_from_errno(-errno) == IRQ_REFUSAL_MANAGED);
        close(fd);
}
END_TEST

/* True when the write tests can run here: root, CPU 1, and an rx IRQ of a PCI network interface
 * that can be moved (why not, into *ret_why). */
static bool live_write_possible(const char **ret_why) {
        _cleanup_free_ char *ifname = NULL;

        if (geteuid() != 0)
                *ret_why = "not root";
        else if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || access("/sys/devices/system/cpu/cpu1", F_OK) < 0)
                *ret_why = "no CPU 1 to move an IRQ to";
        else if (!(ifname = live_pci_interface()))
                *ret_why = "no network interface with a PCI function";
        else if (find_rx_irq(ifname) == 0)
                *ret_why = "no movable rx IRQ of a PCI network interface";
        else
                return true;
        return false;
}

/*
 * Four modes, four meson tests: "fixture" (the default) runs on fixture trees, anywhere; "live"
 * reads the real /proc/irq and a PCI network interface's IRQs; "live-write" moves that
 * interface's rx IRQ to CPU 1 and back; "live-managed" tries to move a kernel-managed IRQ. Each
 * live mode exits 77 (a skip, with the reason) where what it needs is absent.
 */
int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "fixture", *why = NULL;
        _cleanup_free_ char *ifname = NULL;
        Suite *s;
        TCase *tc;
        SRunner *sr;
        int failed;

        if (streq(mode, "fixture")) {
                tc = tcase_create("fixture");
                tcase_add_test(tc, test_refusal_mapping);
                tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
                tcase_add_test(tc, test_fixture_read);
                tcase_add_test(tc, test_fixture_write);
                tcase_add_test(tc, test_fixture_refusal_classify);
                tcase_add_test(tc, test_fixture_pci_address);
                tcase_add_test(tc, test_fixture_device_irqs);
        } else if (streq(mode, "live")) {
                if (!(ifname = live_pci_interface())) {
                        printf("SKIP: no network interface with a PCI function\n");
                        return 77;
                }
                tc = tcase_create("live");
                tcase_add_test(tc, test_live_device_irqs);
                tcase_add_test(tc, test_live_proc_irq);
        } else if (streq(mode, "live-write")) {
                if (!live_write_possible(&why)) {
                        printf("SKIP: %s\n", why);
                        return 77;
                }
                tc = tcase_create("live-write");
                tcase_add_unchecked_fixture(tc, live_save, live_unchecked_teardown);
                tcase_add_checked_fixture(tc, NULL, live_restore);
                tcase_add_test(tc, test_live_write);
        } else if (streq(mode, "live-managed")) {
                if (geteuid() != 0 || find_managed_irq() == 0) {
                        printf("SKIP: %s\n", geteuid() != 0 ? "not root" : "no kernel-managed IRQ here");
                        return 77;
                }
                tc = tcase_create("live-managed");
                tcase_add_unchecked_fixture(tc, live_save, live_unchecked_teardown);
                tcase_add_checked_fixture(tc, NULL, live_restore);
                tcase_add_test(tc, test_live_write_managed);
                tcase_add_test(tc, test_live_refusal_classify);
        } else {
                fprintf(stderr, "usage: %s [fixture|live|live-write|live-managed]\n", argv[0]);
                return EXIT_FAILURE;
        }

        s = suite_create("irq");
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
