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
        }
        free(inv->lookups);
        for (size_t i = 0; i < inv->n_nets; i++)
                free(inv->nets[i].name);
        free(inv->nets);
        free(inv->irq_warning);
        free(inv);
        return NULL;
}

static int device_irq_compare(const void *a, const void *b) {
        const DeviceIrq *x = a, *y = b;
        return x->irq < y->irq ? -1 : x->irq > y->irq;
}

/* Every numeric line of table into inv->irqs, ascending, with irq_is_managed() under root. */
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
                d->managed = irq_is_managed(root, l->irq) > 0;
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

/* One lookup per distinct device: value of c's irqs: rules. */
static int inventory_add_lookups(DeviceInventory *inv, const char *root, const Config *c) {
        for (size_t i = 0; c && i < c->n_irq_rules; i++)
                STRV_FOREACH (d, c->irq_rules[i].device) {
                        DeviceIrqLookup *l, *nl;
                        int r;

                        if (device_inventory_find_lookup(inv, *d))
                                continue;
                        nl = reallocarray(inv->lookups, inv->n_lookups + 1, sizeof(DeviceIrqLookup));
                        if (!nl)
                                return -ENOMEM;
                        inv->lookups = nl;
                        l = &inv->lookups[inv->n_lookups];
                        *l = (DeviceIrqLookup){.device = strdup(*d)};
                        if (!l->device)
                                return -ENOMEM;
                        inv->n_lookups++;

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

/* The IRQs of ROOT/proc/interrupts into inv; what goes wrong into inv->irq_error and
 * inv->irq_warning. Returns 0 or -ENOMEM. */
static int inventory_load_irqs(DeviceInventory *inv, const char *root) {
        _cleanup_(interrupt_table_freep) InterruptTable *table = NULL;
        _cleanup_free_ char *path = NULL, *error = NULL;
        int r;

        path = root_path(root, "/proc/interrupts");
        if (!path)
                return -ENOMEM;

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
