/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * IRQ affinity through /proc/irq/N/ and the IRQs of a PCI function from sysfs (see irq.h).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "fileio.h"
#include "irq.h"
#include "macro.h"
#include "util.h"

IrqRefusal irq_refusal_from_errno(int error) {
        if (error < 0)
                error = -error;
        switch (error) {
        case 0:
                return IRQ_REFUSAL_NONE;
        case EPERM:
        case EIO:
                return IRQ_REFUSAL_MANAGED;
        case ENOSPC:
                return IRQ_REFUSAL_NO_VECTOR;
        case EINVAL:
                return IRQ_REFUSAL_OFFLINE;
        case ERANGE:
        case EOVERFLOW:
                return IRQ_REFUSAL_TOO_WIDE;
        case ENOENT:
                return IRQ_REFUSAL_GONE;
        default:
                return IRQ_REFUSAL_OTHER;
        }
}

const char *irq_refusal_to_string(IrqRefusal r) {
        static const char *const table[_IRQ_REFUSAL_MAX] = {
                [IRQ_REFUSAL_NONE] = "none",           [IRQ_REFUSAL_MANAGED] = "managed",
                [IRQ_REFUSAL_NO_VECTOR] = "no-vector", [IRQ_REFUSAL_OFFLINE] = "offline",
                [IRQ_REFUSAL_TOO_WIDE] = "too-wide",   [IRQ_REFUSAL_GONE] = "gone",
                [IRQ_REFUSAL_OTHER] = "failed",        [IRQ_REFUSAL_NOT_MOVABLE] = "not-movable",
        };

        if ((unsigned)r >= _IRQ_REFUSAL_MAX)
                return NULL;
        return table[r];
}

const char *irq_refusal_explain(IrqRefusal r) {
        static const char *const table[_IRQ_REFUSAL_MAX] = {
                [IRQ_REFUSAL_NONE] = "",
                [IRQ_REFUSAL_MANAGED] = "managed by the kernel; see isolcpus=managed_irq",
                [IRQ_REFUSAL_NO_VECTOR] = "no free interrupt vector on those CPUs (ENOSPC)",
                [IRQ_REFUSAL_OFFLINE] = "no online CPU in the mask (EINVAL)",
                [IRQ_REFUSAL_TOO_WIDE] = "CPU beyond the kernel's limit (nr_cpu_ids)",
                [IRQ_REFUSAL_GONE] = "the IRQ no longer exists",
                [IRQ_REFUSAL_OTHER] = "the kernel refused the affinity",
                [IRQ_REFUSAL_NOT_MOVABLE] = "the kernel does not allow moving this IRQ",
        };

        if ((unsigned)r >= _IRQ_REFUSAL_MAX)
                return NULL;
        return table[r];
}

IrqRefusal irq_refusal_classify(const char *root, unsigned irq, int error) {
        int r;

        if (error < 0)
                error = -error;
        if (error != EIO && error != EPERM)
                return irq_refusal_from_errno(error);

        r = irq_is_managed(root, irq);
        if (r > 0)
                return IRQ_REFUSAL_MANAGED;
        if (r == -ENOENT)
                return IRQ_REFUSAL_GONE;
        /* Not managed, or unknown: either way the kernel won't move it. */
        return IRQ_REFUSAL_NOT_MOVABLE;
}

/* ROOT/REL in a newly allocated string (root NULL or "/" = real), or NULL on OOM. */
_printf_(2, 3) static char *root_path(const char *root, const char *fmt, ...) {
        _cleanup_free_ char *rel = NULL;
        char *p = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&rel, fmt, ap);
        va_end(ap);
        if (r < 0)
                return NULL;
        if (!root || streq(root, "/"))
                root = "";
        if (asprintf(&p, "%s%s", root, rel) < 0)
                return NULL;
        return p;
}

static int read_list_file(const char *root, unsigned irq, const char *file, CpuSet *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL;
        int r;

        if (!ret)
                return -EINVAL;
        path = root_path(root, "/proc/irq/%u/%s", irq, file);
        if (!path)
                return -ENOMEM;
        r = read_full_file(path, READ_FULL_NO_LIMIT, 0, &text, NULL);
        if (r < 0)
                return r;
        r = cpuset_parse_list(text, &set, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -EBADMSG;
        cpuset_done(ret);
        *ret = set;
        set = CPUSET_NULL;
        return 0;
}

int irq_read_affinity(const char *root, unsigned irq, CpuSet *ret) {
        return read_list_file(root, irq, "smp_affinity_list", ret);
}

int irq_read_effective(const char *root, unsigned irq, CpuSet *ret) {
        return read_list_file(root, irq, "effective_affinity_list", ret);
}

int irq_is_managed(const char *root, unsigned irq) {
        _cleanup_free_ char *path = NULL;
        struct stat st;

        path = root_path(root, "/proc/irq/%u/smp_affinity", irq);
        if (!path)
                return -ENOMEM;
        if (stat(path, &st) < 0)
                return -errno;
        return (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0;
}

int irq_write_affinity(const char *root, unsigned irq, const CpuSet *cpus) {
        _cleanup_free_ char *path = NULL, *list = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t len;
        ssize_t n;
        int r;

        if (!cpus || cpuset_is_empty(cpus))
                return -EINVAL;

        r = irq_is_managed(root, irq);
        if (r < 0)
                return r;
        if (r > 0)
                return -EPERM;

        r = cpuset_format_list(cpus, &list);
        if (r < 0)
                return r;
        len = strlen(list);

        path = root_path(root, "/proc/irq/%u/smp_affinity_list", irq);
        if (!path)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        do
                n = write(fd, list, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t)n != len)
                return -EIO;
        if (close(TAKE_FD(fd)) < 0)
                return -errno;
        return 0;
}

int irq_read_node(const char *root, unsigned irq, int *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        char *end;
        long v;
        int r;

        if (!ret)
                return -EINVAL;
        path = root_path(root, "/proc/irq/%u/node", irq);
        if (!path)
                return -ENOMEM;
        r = read_full_file(path, READ_FULL_NO_LIMIT, 0, &text, NULL);
        if (r < 0)
                return r;
        errno = 0;
        v = strtol(text, &end, 10);
        if (errno != 0 || end == text || v < -1 || v > INT_MAX)
                return -EBADMSG;
        while (*end == ' ' || *end == '\t' || *end == '\n')
                end++;
        if (*end)
                return -EBADMSG;
        *ret = (int)v;
        return 0;
}

/*
 * Whether s is a PCI address "DDDD:BB:DD.F" (domain of 4 to 8 hex digits; with allow_short also
 * "BB:DD.F" for domain 0), any case. The normalized form (lower case, domain included) goes into
 * ret (at least 20 bytes) when non-NULL.
 */
static bool pci_address_parse(const char *s, bool allow_short, char *ret) {
        size_t len = strlen(s), dom;
        const char *bdf;

        /* "BB:DD.F" is 7 characters; the domain and its ':' come before. */
        if (len < 7)
                return false;
        bdf = s + len - 7;
        if (hex_digit_value(bdf[0]) < 0 || hex_digit_value(bdf[1]) < 0 || bdf[2] != ':' ||
            hex_digit_value(bdf[3]) < 0 || hex_digit_value(bdf[4]) < 0 || bdf[5] != '.' || bdf[6] < '0' ||
            bdf[6] > '7')
                return false;
        if (len == 7) {
                if (!allow_short)
                        return false;
                dom = 0;
        } else {
                dom = len - 8;
                if (s[dom] != ':' || dom < 4 || dom > 8)
                        return false;
                for (size_t i = 0; i < dom; i++)
                        if (hex_digit_value(s[i]) < 0)
                                return false;
        }
        if (ret) {
                size_t o = 0;
                if (dom == 0) {
                        memcpy(ret, "0000:", 5);
                        o = 5;
                } else {
                        for (size_t i = 0; i <= dom; i++)
                                ret[o++] =
                                        (char)(s[i] == ':' ? ':'
                                                           : "0123456789abcdef"[hex_digit_value(s[i])]);
                }
                for (size_t i = 0; i < 7; i++)
                        ret[o++] =
                                (char)(bdf[i] == ':' || bdf[i] == '.'
                                               ? bdf[i]
                                               : "0123456789abcdef"[hex_digit_value(bdf[i])]);
                ret[o] = '\0';
        }
        return true;
}

/* "virtioN": a virtio device (drivers/virtio/virtio.c names them "virtio%u"). */
static bool is_virtio_name(const char *s) {
        if (strncmp(s, "virtio", strlen("virtio")) != 0)
                return false;
        s += strlen("virtio");
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

int irq_device_pci_address(const char *root, const char *device, char **ret) {
        _cleanup_free_ char *path = NULL, *resolved = NULL, *rootreal = NULL;
        char addr[32];
        struct stat st;
        size_t rootlen;

        if (!device || !ret)
                return -EINVAL;
        if (device[0] == '\0' || strchr(device, '/') || streq(device, ".") || streq(device, ".."))
                return -EINVAL;

        if (pci_address_parse(device, true, addr)) {
                path = root_path(root, "/sys/bus/pci/devices/%s", addr);
                if (!path)
                        return -ENOMEM;
                if (stat(path, &st) < 0)
                        return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
                if (!S_ISDIR(st.st_mode))
                        return -ENODEV;
                *ret = strdup(addr);
                return *ret ? 0 : -ENOMEM;
        }

        path = root_path(root, "/sys/class/net/%s", device);
        if (!path)
                return -ENOMEM;
        if (stat(path, &st) < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
        path = mfree(path);

        path = root_path(root, "/sys/class/net/%s/device", device);
        if (!path)
                return -ENOMEM;
        resolved = realpath(path, NULL);
        if (!resolved)
                return errno == ENOENT || errno == ENOTDIR ? -ENXIO : -errno;

        rootreal = realpath(root && *root ? root : "/", NULL);
        if (!rootreal)
                return -errno;
        rootlen = streq(rootreal, "/") ? 0 : strlen(rootreal);
        if (strncmp(resolved, rootreal, rootlen) != 0 || (resolved[rootlen] != '/' && rootlen > 0))
                return -ENXIO;

        /*
         * The device itself must be a PCI function. Only virtio devices ("virtioN", the
         * virtio-net device below its virtio-pci function) are stepped over: any other component
         * that is not a PCI function (a USB interface "1-1:1.0", a platform device) is a device
         * of its own, and the PCI function above it a controller shared with other devices
         * (xHCI), whose IRQs are not this interface's.
         */
        for (;;) {
                char *slash = strrchr(resolved, '/');

                if (!slash || (size_t)(slash - resolved) < rootlen)
                        return -ENXIO;
                if (pci_address_parse(slash + 1, false, addr)) {
                        *ret = strdup(addr);
                        return *ret ? 0 : -ENOMEM;
                }
                if (!is_virtio_name(slash + 1) || (size_t)(slash - resolved) == rootlen)
                        return -ENXIO;
                *slash = '\0';
        }
}

/* A decimal unsigned number filling all of s (no sign, no blanks). */
static bool parse_unsigned(const char *s, unsigned *ret) {
        unsigned long v;
        char *end;

        if (s[0] < '0' || s[0] > '9')
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > UINT_MAX)
                return false;
        *ret = (unsigned)v;
        return true;
}

int irq_device_irqs(const char *root, const char *device, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ char *addr = NULL, *dir = NULL, *path = NULL, *text = NULL;
        _cleanup_free_ unsigned *irqs = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0, allocated = 0;
        struct stat st;
        int r;

        if (!ret || !ret_n)
                return -EINVAL;

        r = irq_device_pci_address(root, device, &addr);
        if (r < 0)
                return r;

        dir = root_path(root, "/sys/bus/pci/devices/%s", addr);
        if (!dir)
                return -ENOMEM;
        if (stat(dir, &st) < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;

        path = root_path(root, "/sys/bus/pci/devices/%s/msi_irqs", addr);
        if (!path)
                return -ENOMEM;
        d = opendir(path);
        if (!d && errno != ENOENT)
                return -errno;
        if (d) {
                struct dirent *de;

                errno = 0;
                while ((de = readdir(d))) {
                        unsigned v;

                        if (!parse_unsigned(de->d_name, &v))
                                continue;
                        if (n == allocated) {
                                size_t na = allocated ? allocated * 2 : 16;
                                unsigned *a = reallocarray(irqs, na, sizeof(unsigned));
                                if (!a)
                                        return -ENOMEM;
                                irqs = a;
                                allocated = na;
                        }
                        irqs[n++] = v;
                        errno = 0;
                }
                if (errno != 0)
                        return -errno;
        }

        if (n == 0) {
                unsigned v;
                char *e;

                path = mfree(path);
                path = root_path(root, "/sys/bus/pci/devices/%s/irq", addr);
                if (!path)
                        return -ENOMEM;
                r = read_full_file(path, READ_FULL_NO_LIMIT, 0, &text, NULL);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (r >= 0) {
                        e = text + strcspn(text, " \t\n");
                        *e = '\0';
                        if (parse_unsigned(text, &v) && v > 0) {
                                irqs = malloc(sizeof(unsigned));
                                if (!irqs)
                                        return -ENOMEM;
                                irqs[n++] = v;
                        }
                }
        } else
                qsort(irqs, n, sizeof(unsigned), compare_unsigned);

        *ret = TAKE_PTR(irqs);
        *ret_n = n;
        return 0;
}
