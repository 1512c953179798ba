/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * IRQ affinity, read and written through procfs (kernel/irq/proc.c), and the IRQs of a device
 * from sysfs (drivers/pci/msi: /sys/bus/pci/devices/ADDR/msi_irqs/N, and the legacy INTx line
 * in /sys/bus/pci/devices/ADDR/irq).
 *
 * Every function takes root: a directory holding proc/ and sys/ ("/" for the real machine;
 * tests pass fixture trees). Paths used: ROOT/proc/irq/N/smp_affinity_list,
 * ROOT/proc/irq/N/smp_affinity, ROOT/proc/irq/N/effective_affinity_list, ROOT/proc/irq/N/node,
 * ROOT/sys/class/net/DEV/device, ROOT/sys/bus/pci/devices/ADDR/{msi_irqs/,irq}.
 * Nothing here logs: errors are returned.
 */

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

/* Why the kernel refused an affinity write (irq_write_affinity()). */
typedef enum IrqRefusal {
        IRQ_REFUSAL_NONE,
        IRQ_REFUSAL_MANAGED,     /* kernel-managed (smp_affinity mode 0444; EPERM, EIO on older kernels) */
        IRQ_REFUSAL_NOT_MOVABLE, /* EIO on an IRQ that is not kernel-managed: per-CPU, IRQF_NOBALANCING,
                                  * a chip without irq_set_affinity, no_irq_affinity
                                  * (irq_can_set_affinity_usr() in kernel/irq/manage.c) */
        IRQ_REFUSAL_NO_VECTOR,   /* ENOSPC: no free interrupt vector on the target CPUs */
        IRQ_REFUSAL_OFFLINE,     /* EINVAL: no online CPU in the mask */
        IRQ_REFUSAL_TOO_WIDE,    /* ERANGE / EOVERFLOW: a CPU beyond the kernel's nr_cpu_ids */
        IRQ_REFUSAL_GONE,        /* ENOENT: the IRQ no longer exists */
        IRQ_REFUSAL_OTHER,       /* anything else (the errno says what) */
        _IRQ_REFUSAL_MAX,
} IrqRefusal;

/*
 * The refusal an errno (negative or positive) of irq_write_affinity() stands for, by the errno
 * alone: -EPERM and -EIO are IRQ_REFUSAL_MANAGED without checking the IRQ — but the kernel
 * also fails with EIO for IRQs that are not managed and cannot be moved at all
 * (IRQ_REFUSAL_NOT_MOVABLE): to tell them apart, use irq_refusal_classify(). Never returns
 * IRQ_REFUSAL_NOT_MOVABLE.
 * irq_refusal_explain() gives the meaning for operators: "managed by the kernel; see
 * isolcpus=managed_irq", "no free interrupt vector on those CPUs (ENOSPC)", "no online CPU in
 * the mask (EINVAL)", "CPU beyond the kernel's limit (nr_cpu_ids)", "the IRQ no longer exists",
 * "the kernel does not allow moving this IRQ"; irq_refusal_to_string() a token for D-Bus
 * ("managed", "no-vector", "offline", "too-wide", "gone", "failed", "not-movable"). Both return
 * NULL for a value out of range.
 */
IrqRefusal irq_refusal_from_errno(int error);

/*
 * The refusal error (negative or positive errno of irq_write_affinity(root, irq, ...)) stands
 * for, checking the IRQ for -EIO and -EPERM: irq_is_managed() (ROOT/proc/irq/N/smp_affinity
 * mode 0444) → IRQ_REFUSAL_MANAGED; not managed → IRQ_REFUSAL_NOT_MOVABLE (EIO: per-CPU,
 * IRQF_NOBALANCING, a chip without irq_set_affinity, no_irq_affinity; EPERM on a writable
 * file likewise); the IRQ gone meanwhile (-ENOENT) → IRQ_REFUSAL_GONE; the check failing
 * otherwise → IRQ_REFUSAL_NOT_MOVABLE (true of managed IRQs too). Other errors as
 * irq_refusal_from_errno(). Never fails.
 */
IrqRefusal irq_refusal_classify(const char *root, unsigned irq, int error);
const char *irq_refusal_to_string(IrqRefusal r);
const char *irq_refusal_explain(IrqRefusal r);

/* The IRQ's affinity (ROOT/proc/irq/N/smp_affinity_list) into *ret (an initialised set,
 * replaced). Returns 0, -ENOENT (no such IRQ), -EBADMSG (unparsable), -errno. */
int irq_read_affinity(const char *root, unsigned irq, CpuSet *ret);

/* The effective affinity (effective_affinity_list: where the kernel really delivers it; on x86
 * a single CPU). Returns 0, -ENOENT when the kernel doesn't provide it or the IRQ is gone,
 * -EBADMSG, -errno. */
int irq_read_effective(const char *root, unsigned irq, CpuSet *ret);

/* Whether the kernel manages the IRQ's affinity: smp_affinity has no write permission bit
 * (the kernel creates it 0444 for managed IRQs). Returns 1, 0, -ENOENT, -errno (stat(2)). */
int irq_is_managed(const char *root, unsigned irq);

/*
 * Writes cpus (non-empty) as a cpu-list to ROOT/proc/irq/N/smp_affinity_list in one write(2).
 * A managed IRQ (irq_is_managed()) is not written: -EPERM. Returns 0 or the kernel's refusal as
 * -errno (see IrqRefusal): -EPERM/-EIO, -ENOSPC, -EINVAL, -ERANGE/-EOVERFLOW, -ENOENT; -EINVAL
 * also for an empty set (nothing written). On failure the IRQ keeps its mask (the kernel
 * applies a write whole or not at all).
 */
int irq_write_affinity(const char *root, unsigned irq, const CpuSet *cpus);

/* The NUMA node the kernel assigned the IRQ (ROOT/proc/irq/N/node), -1 for none. Returns 0,
 * -ENOENT, -errno. */
int irq_read_node(const char *root, unsigned irq, int *ret);

/*
 * The PCI function of device: a network interface name (ROOT/sys/class/net/DEV/device, resolved:
 * its last component must be a PCI address "DDDD:BB:DD.F" — an SR-IOV VF is its own function —
 * stepping up only through "virtioN" components: virtio-net sits below its virtio-pci function,
 * .../0000:00:03.0/virtio2) or a PCI address itself ("0000:3b:00.0", or "3b:00.0" for domain 0,
 * any case; must exist in ROOT/sys/bus/pci/devices). The normalized address (lower case, with
 * domain) is newly allocated into *ret.
 * Returns 0; -ENODEV (no such interface or address); -ENXIO (an interface that is not itself a
 * PCI function: a veth, a bridge, loopback; a USB NIC (.../0000:00:14.0/usb1/1-1/1-1:1.0: the
 * PCI function above is the USB host controller, whose IRQs serve every USB device), a platform
 * or virtio-mmio device; or whose device link leads outside ROOT); -EINVAL (empty name, ".",
 * "..", or a name containing '/'); -ENOMEM.
 */
int irq_device_pci_address(const char *root, const char *device, char **ret);

/*
 * The IRQs of device (as irq_device_pci_address()): the entries of ADDR/msi_irqs/ (MSI and
 * MSI-X vectors), or when there are none, the legacy line in ADDR/irq if non-zero. Sorted
 * ascending, newly allocated (NULL when none) into *ret, count in *ret_n.
 * Returns 0 (also with none), or as irq_device_pci_address(), or -errno.
 */
int irq_device_irqs(const char *root, const char *device, unsigned **ret, size_t *ret_n);
