/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The device inventory: what IRQs and network devices this machine has, read from procfs and
 * sysfs under a root (so fixture trees stand in for the machine) for lib/devplan.h to plan
 * against. The only I/O of device planning: device_plan_new() takes an inventory and reads
 * nothing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interrupts.h"
#include "macro.h"
#include "netdev.h"
#include "policy.h"
#include "topology.h"

/* One IRQ of /proc/interrupts (numeric lines only). */
typedef struct DeviceIrq {
        unsigned irq;
        char *actions; /* as /proc/interrupts prints them ("rtc0, i8042"), "" when blank */
        char **names;  /* actions split at ", " (NULL-terminated, possibly empty) */
        bool managed;  /* irq_is_managed(): its affinity belongs to the kernel */
        /*
         * What the IRQ is, independent of its handler's name: "CHIP HWIRQ" from /proc/interrupts
         * ("PCI-MSIX-0000:00:03.0 1-edge"), stable while a driver frees and requests the vector
         * again at ifdown/ifup (the name goes blank or changes, the vector stays). When the
         * kernel prints no hwirq column, "CHIP ACTIONS" (older kernels: "IR-PCI-MSI-edge eth0-TxRx-0";
         * a blank-named IRQ there is just "CHIP"). A missing part is left out with its blank: ""
         * for a line with nothing after its counts. An IRQ number that passes to another device
         * gets another identity. NULL only in hand-built inventories.
         */
        char *identity;
} DeviceIrq;

/* A device: value of an irqs: rule, looked up once (irq_device_irqs()). */
typedef struct DeviceIrqLookup {
        char *device;   /* as written in the rule */
        int error;      /* 0, or -ENODEV (not present), -ENXIO (no PCI function), other -errno */
        unsigned *irqs; /* ascending; NULL when none */
        size_t n_irqs;
        /* NULL, or (offline inventories) what the files say of the device, for the plan's
         * explanation: "not in server.xml (devices there: eno1, eno2)", "in server.xml at PCI
         * 0000:3b:00.0, NUMA node 1; IRQs by name in interrupts.txt" */
        char *note;
} DeviceIrqLookup;

/* A network interface and its queues. */
typedef struct DeviceNet {
        char *name;
        NetDeviceQueues queues;
} DeviceNet;

typedef struct DeviceInventory {
        DeviceIrq *irqs; /* ascending IRQ number */
        size_t n_irqs;
        DeviceIrqLookup *lookups; /* one per distinct device: value of the config's irqs: rules */
        size_t n_lookups;
        DeviceNet *nets; /* ascending name */
        size_t n_nets;
        /* netdev_mask_bits(); 0 when unreadable: passed on as nbits, netdev_write_rps() and
         * netdev_write_xps() then write each mask as wide as its set needs
         * (netdev_mask_bits_for(): highest CPU + 1 rounded up to 32-bit words) */
        unsigned mask_bits;
        /* 0, or -errno when ROOT/proc/interrupts could not be read at all: irqs is then empty
         * (irqs: rules match nothing), while lookups and nets are loaded as usual. */
        int irq_error;
        /* NULL, or one line for the log naming the file: why it could not be read
         * ("/proc/interrupts: No such file or directory"), or which lines were skipped
         * ("/proc/interrupts: 2 unparsable lines skipped, the first: line 7: ..."); irqs then holds
         * the lines that parsed. */
        char *irq_warning;
        /* Offline inventories (device_inventory_load_offline()) only; false/NULL otherwise: */
        bool offline;
        char **offline_devices; /* the network devices the XML topology lists */
        bool irqs_unknown;      /* no saved /proc/interrupts given: irqs is empty, not known */
        bool nets_unknown;      /* no interface's queues known: nets is empty, not known */
} DeviceInventory;

/*
 * Reads what c's rules need from the machine under root ("/" live, or a fixture tree):
 * ROOT/proc/interrupts (interrupts_read_full() with INTERRUPTS_SKIP_BAD_LINES; every numeric
 * line, with irq_is_managed()), the IRQs of every distinct device: of c's irqs: rules (their
 * lookup errors kept, not returned), every interface of ROOT/sys/class/net with its queues
 * (netdev_queues(); an interface that vanishes while being read, or whose queues can't be read,
 * is skipped), and netdev_mask_bits().
 * An IRQ whose ROOT/proc/irq/N can't be stat(2)ed counts as not managed. Lines of
 * /proc/interrupts that can't be parsed are skipped and said in inv->irq_warning; when the file
 * can't be read at all the rest is loaded all the same, with inv->irq_error and
 * inv->irq_warning saying why (the caller logs it).
 * Returns 0 and *ret; -errno of listing the interfaces; -ENOMEM. ret_error (may be NULL) is
 * never written: it is kept for callers written when an unparsable /proc/interrupts failed the
 * whole load.
 */
int device_inventory_load(const char *root, const Config *c, DeviceInventory **ret, char **ret_error);
/*
 * An inventory of another machine, from what was saved there, for planning offline:
 * - its network devices from t, an hwloc XML topology with I/O objects
 *   (topology_network_devices(); topology_name is how notes name it, "server.xml");
 * - its IRQs from interrupts_path, a saved /proc/interrupts (interrupts_read_full() with
 *   INTERRUPTS_SKIP_BAD_LINES, skipped lines said in irq_warning); NULL: not given, irqs is
 *   then empty and irqs_unknown set. Whether an IRQ is kernel-managed is not in the file: every
 *   IRQ counts as not managed;
 * - its interfaces and their queues from sysfs_root, a directory holding a copy of that
 *   machine's ROOT/sys/class/net/DEV/queues (read as device_inventory_load() reads them;
 *   ifindex may be missing); NULL: not given, nets is then empty and nets_unknown set.
 * Each distinct device: of c's irqs: rules gets a lookup with a note. A device the XML doesn't
 * list is -ENODEV ("not in server.xml (devices there: ...)"). Otherwise its IRQs are found by
 * name, since the offline files hold no sysfs msi_irqs: an IRQ is the device's when one of its
 * action names is the device's name or begins with it and a separator ('-', '_', '.', ':', '@':
 * "eth0", "eth0-TxRx-3"), or names its PCI address after '@' ("mlx5_comp3@pci:0000:3b:00.0"),
 * or its chip is "PCI-MSI-ADDRESS" / "PCI-MSIX-ADDRESS" (newer kernels).
 * mask_bits is 0 (masks as wide as their sets need).
 * Returns 0 and *ret; -errno of reading interrupts_path or of listing sysfs_root's interfaces,
 * with a newly allocated "PATH: reason" in *ret_error (may be NULL); -ENOMEM.
 */
int device_inventory_load_offline(
        const Topology *t, const char *topology_name, const char *interrupts_path, const char *sysfs_root,
        const Config *c, DeviceInventory **ret, char **ret_error);
DeviceInventory *device_inventory_free(DeviceInventory *inv);
DEFINE_TRIVIAL_CLEANUP_FUNC(DeviceInventory *, device_inventory_free);

/*
 * DeviceIrq.identity of line l of /proc/interrupts (a numeric line of an InterruptTable):
 * "CHIP HWIRQ" ("PCI-MSIX-0000:00:03.0 1-edge"), or "CHIP ACTIONS" when the kernel prints no
 * hwirq column ("IR-PCI-MSI-edge eth0-TxRx-0"); a missing or blank part is left out with its
 * blank ("IR-PCI-MSI-edge" for a blank name there, "" for a line with nothing after its counts).
 * For callers that read /proc/interrupts themselves and compare with an inventory.
 * Returns 0 and a newly allocated *ret; -EINVAL (NULL l or ret); -ENOMEM.
 */
int device_inventory_irq_identity(const InterruptLine *l, char **ret);

/* The lookup of device (as written in a rule), or NULL. */
const DeviceIrqLookup *device_inventory_find_lookup(const DeviceInventory *inv, const char *device);
/* The IRQ irq, or NULL. */
const DeviceIrq *device_inventory_find_irq(const DeviceInventory *inv, unsigned irq);

/* Whether an IRQ action name is device's own ("eth0") or begins with it and a separator ('-',
 * '_', '.', ':', '@': "eth0-TxRx-3"): how IRQs are found by name when sysfs has no msi_irqs. */
bool device_irq_name_of_device(const char *name, const char *device);
