/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devinventory.h"
#include "interrupts.h"
#include "irq.h"
#include "netdev.h"
#include "util.h"

/* ROOT + suffix ("/proc/interrupts" for NULL or "/"). NULL on OOM. */
static char *root_path(const char *root, const char *suffix) {
        char *p = NULL;

        if (!root || streq(root, "/"))
                return strdup(suffix);
        if (asprintf(&p, "%s%s", root, suffix) < 0)
                return NULL;
        return p;
}

static void device_irq_done(DeviceIrq *i) {
        free(i->actions);
        strv_free(i->names);
        free(i->identity);
}

int device_inventory_irq_identity(const InterruptLine *l, char **ret) {
        const char *chip, *second;
        char *s = NULL;

        if (!l || !ret)
                return -EINVAL;
        chip = l->chip ?: "";
        second = l->hwirq ?: (l->actions ?: "");
        if (asprintf(&s, "%s%s%s", chip, *chip && *second ? " " : "", second) < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

DeviceInventory *device_inventory_free(DeviceInventory *inv) {
        if (!inv)
                return NULL;
        for (size_t i = 0; i < inv->n_irqs; i++)
                device_irq_done(&inv->irqs[i]);
        free(inv->irqs);
        for (size_t i = 0; i < inv->n_lookups; i++) {
                free(inv->lookups[i].device);
                free(inv->lookups[i].irqs);
                free(inv->lookups[i].note);
        }
        free(inv->lookups);
        for (size_t i = 0; i < inv->n_nets; i++)
                free(inv->nets[i].name);
        free(inv->nets);
        free(inv->irq_warning);
        strv_free(inv->offline_devices);
        free(inv);
        return NULL;
}

static int device_irq_compare(const void *a, const void *b) {
        const DeviceIrq *x = a, *y = b;
        return x->irq < y->irq ? -1 : x->irq > y->irq;
}

/* Every numeric line of table into inv->irqs, ascending, with irq_is_managed() under root (NULL:
 * another machine's table, none managed). */
static int inventory_add_irqs(DeviceInventory *inv, const char *root, const InterruptTable *table) {
        size_t n = 0;

        inv->irqs = calloc(MAX(table->n_lines, 1U), sizeof(DeviceIrq));
        if (!inv->irqs)
                return -ENOMEM;

        for (size_t i = 0; i < table->n_lines; i++) {
                const InterruptLine *l = &table->lines[i];
                DeviceIrq *d = &inv->irqs[n];

                if (!l->numeric)
                        continue;
                d->irq = l->irq;
                d->actions = strdup(l->actions ?: "");
                d->names = strv_copy(l->names);
                n++; /* counted now: device_inventory_free() frees a half-filled entry */
                inv->n_irqs = n;
                if (!d->actions || !d->names || device_inventory_irq_identity(l, &d->identity) < 0)
                        return -ENOMEM;
                /* -ENOENT (no ROOT/proc/irq/N: gone, or a fixture without it) and other stat(2)
                 * failures leave it unmanaged: writing it will say what is wrong. */
                d->managed = root && irq_is_managed(root, l->irq) > 0;
        }

        qsort(inv->irqs, n, sizeof(DeviceIrq), device_irq_compare);
        /* A line printed twice (never by the kernel; a pasted dump may): keep one. */
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
                if (w > 0 && inv->irqs[i].irq == inv->irqs[w - 1].irq) {
                        device_irq_done(&inv->irqs[i]);
                        continue;
                }
                inv->irqs[w++] = inv->irqs[i];
        }
        inv->n_irqs = w;
        return 0;
}

/* A new, empty lookup for device at the end of inv->lookups, or NULL on OOM. */
static DeviceIrqLookup *inventory_new_lookup(DeviceInventory *inv, const char *device) {
        DeviceIrqLookup *nl = reallocarray(inv->lookups, inv->n_lookups + 1, sizeof(DeviceIrqLookup));

        if (!nl)
                return NULL;
        inv->lookups = nl;
        nl[inv->n_lookups] = (DeviceIrqLookup){.device = strdup(device)};
        if (!nl[inv->n_lookups].device)
                return NULL;
        return &nl[inv->n_lookups++];
}

/* One lookup per distinct device: value of c's irqs: rules. */
static int inventory_add_lookups(DeviceInventory *inv, const char *root, const Config *c) {
        for (size_t i = 0; c && i < c->n_irq_rules; i++)
                STRV_FOREACH (d, c->irq_rules[i].device) {
                        DeviceIrqLookup *l;
                        int r;

                        if (device_inventory_find_lookup(inv, *d))
                                continue;
                        l = inventory_new_lookup(inv, *d);
                        if (!l)
                                return -ENOMEM;

                        r = irq_device_irqs(root, *d, &l->irqs, &l->n_irqs);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) {
                                l->error = r;
                                l->irqs = NULL;
                                l->n_irqs = 0;
                        } else if (l->n_irqs == 0)
                                l->irqs = mfree(l->irqs);
                }
        return 0;
}

/* Every interface of ROOT/sys/class/net with its queues. */
static int inventory_add_nets(DeviceInventory *inv, const char *root) {
        _cleanup_strv_free_ char **names = NULL;
        size_t n;
        int r;

        r = netdev_list(root, &names);
        if (r < 0)
                return r;
        n = strv_length(names);
        if (n == 0)
                return 0;
        inv->nets = calloc(n, sizeof(DeviceNet));
        if (!inv->nets)
                return -ENOMEM;

        STRV_FOREACH (name, names) {
                NetDeviceQueues q = {};

                r = netdev_queues(root, *name, &q);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue; /* vanished while being read (-ENODEV, -ENOENT), or unreadable */
                inv->nets[inv->n_nets] = (DeviceNet){.name = strdup(*name), .queues = q};
                if (!inv->nets[inv->n_nets].name)
                        return -ENOMEM;
                inv->n_nets++;
        }
        return 0;
}

/* Sets inv->irq_warning to a newly formatted line. Returns 0 or -ENOMEM. */
_printf_(2, 3) static int irq_warning(DeviceInventory *inv, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&inv->irq_warning, format, ap);
        va_end(ap);
        if (r < 0) {
                inv->irq_warning = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The IRQs of path (a /proc/interrupts) into inv, managed as under root (NULL: none); what goes
 * wrong into inv->irq_error and inv->irq_warning. Returns 0 or -ENOMEM. */
static int inventory_read_irqs(DeviceInventory *inv, const char *root, const char *path) {
        _cleanup_(interrupt_table_freep) InterruptTable *table = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = interrupts_read_full(path, INTERRUPTS_SKIP_BAD_LINES, &table, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* Unreadable. (-EBADMSG can't come with INTERRUPTS_SKIP_BAD_LINES; said all the
                 * same should the parser ever refuse a text as a whole.) */
                inv->irq_error = r;
                return irq_warning(
                        inv, "%s: %s", path, r == -EBADMSG ? error ?: "unparsable" : strerror(-r));
        }
        if (table->n_skipped > 0) {
                r = irq_warning(
                        inv, "%s: %zu unparsable line%s skipped, the first: %s", path, table->n_skipped,
                        table->n_skipped == 1 ? "" : "s", table->first_skip_reason ?: "unparsable");
                if (r < 0)
                        return r;
        }
        return inventory_add_irqs(inv, root, table);
}

/* The IRQs of ROOT/proc/interrupts into inv, as inventory_read_irqs(). */
static int inventory_load_irqs(DeviceInventory *inv, const char *root) {
        _cleanup_free_ char *path = root_path(root, "/proc/interrupts");

        if (!path)
                return -ENOMEM;
        return inventory_read_irqs(inv, root, path);
}

int device_inventory_load(const char *root, const Config *c, DeviceInventory **ret, char **ret_error) {
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        int r;

        (void)ret_error; /* nothing to say there any more: see inv->irq_warning */
        if (!root)
                root = "/";
        inv = calloc(1, sizeof(DeviceInventory));
        if (!inv)
                return -ENOMEM;

        r = inventory_load_irqs(inv, root);
        if (r < 0)
                return r;
        r = inventory_add_lookups(inv, root, c);
        if (r < 0)
                return r;
        r = inventory_add_nets(inv, root);
        if (r < 0)
                return r;

        r = netdev_mask_bits(root);
        if (r == -ENOMEM)
                return r;
        inv->mask_bits = r > 0 ? (unsigned)r : 0;

        *ret = TAKE_PTR(inv);
        return 0;
}

bool device_irq_name_of_device(const char *name, const char *device) {
        size_t n = strlen(device);

        return strncmp(name, device, n) == 0 && (name[n] == '\0' || strchr("-_.:@", name[n]));
}

/*
 * Whether IRQ irq is device's by what a saved /proc/interrupts says (device_inventory_load_offline()):
 * an action name of the device, a name "...@pci:ADDRESS" or "...@ADDRESS", or the chip
 * "PCI-MSI-ADDRESS" / "PCI-MSIX-ADDRESS" (with any "IR-" prefix). pci may be NULL.
 */
static bool irq_of_device_by_name(const DeviceIrq *irq, const char *device, const char *pci) {
        STRV_FOREACH (name, irq->names) {
                const char *at = strrchr(*name, '@');

                if (device_irq_name_of_device(*name, device))
                        return true;
                if (pci && at && (streq(at + 1, pci) || (startswith(at + 1, "pci:") && streq(at + 5, pci))))
                        return true;
        }
        if (pci && irq->identity) {
                const char *chip = irq->identity, *end = strchrnul(chip, ' ');
                size_t n = strlen(pci);

                if (startswith(chip, "IR-"))
                        chip += 3;
                if ((startswith(chip, "PCI-MSI-") || startswith(chip, "PCI-MSIX-")) &&
                    (size_t)(end - chip) > n && strncmp(end - n, pci, n) == 0 && end[-(ssize_t)n - 1] == '-')
                        return true;
        }
        return false;
}

/* ", NUMA node 1" / ", NUMA nodes 0,4" / ", no NUMA locality" for device in t. NULL on OOM. */
static char *device_node_words(const Topology *t, const char *device) {
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, nodes = CPUSET_NULL;
        _cleanup_free_ char *list = NULL;
        int r;

        r = topology_device_locality(t, device, &cpus, &nodes, NULL);
        if (r == -ENOMEM)
                return NULL;
        if (r != TOPOLOGY_LOCALITY_NODES || cpuset_is_empty(&nodes))
                return strdup(", no NUMA locality");
        list = cpuset_to_string(&nodes);
        if (!list)
                return NULL;
        return strprintf(", NUMA node%s %s", cpuset_count(&nodes) == 1 ? "" : "s", list);
}

/* The offline lookup of device into l: where t places it, and its IRQs in inv by name. */
static int offline_lookup(
        DeviceInventory *inv, const Topology *t, const char *topology_name, const char *interrupts_name,
        DeviceIrqLookup *l) {
        _cleanup_free_ char *pci = NULL, *node = NULL, *where = NULL, *list = NULL;
        int r;

        r = topology_device_pci_address(t, l->device, &pci);
        if (r == -ENOMEM)
                return r;
        if (r == -ENODEV || r == -EINVAL) {
                l->error = -ENODEV;
                if (strv_length(inv->offline_devices) == 0)
                        l->note = strprintf(
                                "not in %s (it lists no network devices: export it with its I/O objects, "
                                "lstopo's default)",
                                topology_name);
                else {
                        list = strv_join(inv->offline_devices, ", ");
                        if (!list)
                                return -ENOMEM;
                        l->note = strprintf("not in %s (devices there: %s)", topology_name, list);
                }
                return l->note ? 0 : -ENOMEM;
        }

        node = device_node_words(t, l->device);
        if (!node)
                return -ENOMEM;
        where = r == -ENXIO ? strprintf("in %s, below no PCI device%s", topology_name, node)
                            : strprintf("in %s at PCI %s%s", topology_name, pci, node);
        if (!where)
                return -ENOMEM;

        for (size_t i = 0; i < inv->n_irqs; i++) {
                unsigned *n;

                if (!irq_of_device_by_name(&inv->irqs[i], l->device, pci))
                        continue;
                n = reallocarray(l->irqs, l->n_irqs + 1, sizeof(unsigned));
                if (!n)
                        return -ENOMEM;
                l->irqs = n;
                l->irqs[l->n_irqs++] = inv->irqs[i].irq; /* ascending, as inv->irqs */
        }

        if (inv->irqs_unknown)
                l->note = strprintf("%s; its IRQs not known", where);
        else
                l->note = strprintf(
                        "%s; IRQs by name in %s (named %s or %s-…%s%s; offline there is no sysfs "
                        "msi_irqs)",
                        where, interrupts_name, l->device, l->device, pci ? ", or naming " : "",
                        strempty(pci));
        return l->note ? 0 : -ENOMEM;
}

int device_inventory_load_offline(
        const Topology *t, const char *topology_name, const char *interrupts_path, const char *sysfs_root,
        const Config *c, DeviceInventory **ret, char **ret_error) {
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        int r;

        inv = calloc(1, sizeof(DeviceInventory));
        if (!inv)
                return -ENOMEM;
        inv->offline = true;
        r = topology_network_devices(t, &inv->offline_devices);
        if (r < 0)
                return r;
        if (sysfs_root) {
                r = inventory_add_nets(inv, sysfs_root);
                if (r < 0 && r != -ENOMEM && ret_error)
                        *ret_error = strprintf("%s/sys/class/net: %s", sysfs_root, strerror(-r));
                if (r < 0)
                        return r;
        } else
                inv->nets_unknown = true;

        if (interrupts_path) {
                r = inventory_read_irqs(inv, NULL, interrupts_path);
                if (r < 0)
                        return r;
                if (inv->irq_error < 0) {
                        if (ret_error)
                                *ret_error = TAKE_PTR(inv->irq_warning);
                        return inv->irq_error;
                }
        } else
                inv->irqs_unknown = true;

        for (size_t i = 0; c && i < c->n_irq_rules; i++)
                STRV_FOREACH (d, c->irq_rules[i].device) {
                        DeviceIrqLookup *l;

                        if (device_inventory_find_lookup(inv, *d))
                                continue;
                        l = inventory_new_lookup(inv, *d);
                        if (!l)
                                return -ENOMEM;
                        r = offline_lookup(inv, t, topology_name, interrupts_path, l);
                        if (r < 0)
                                return r;
                }

        *ret = TAKE_PTR(inv);
        return 0;
}

const DeviceIrqLookup *device_inventory_find_lookup(const DeviceInventory *inv, const char *device) {
        if (!inv || !device)
                return NULL;
        for (size_t i = 0; i < inv->n_lookups; i++)
                if (streq_ptr(inv->lookups[i].device, device))
                        return &inv->lookups[i];
        return NULL;
}

const DeviceIrq *device_inventory_find_irq(const DeviceInventory *inv, unsigned irq) {
        DeviceIrq key = {.irq = irq};

        if (!inv || inv->n_irqs == 0)
                return NULL;
        return bsearch(&key, inv->irqs, inv->n_irqs, sizeof(DeviceIrq), device_irq_compare);
}
