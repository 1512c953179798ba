/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement's targets (device-placement-internal.h): their values, keys and tree, how each
 * is read and written, and whether what one is about is still there. */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device-placement-internal.h"

#include "irq.h"
#include "netdev.h"

const char *const target_kind_table[_TARGET_KIND_MAX] = {
        [TARGET_IRQ] = "irq",   [TARGET_RPS] = "rps", [TARGET_XPS] = "xps",
        [TARGET_FLOW] = "flow", [TARGET_RFS] = "rfs",
};

const char *const target_state_table[_TARGET_STATE_MAX] = {
        [TARGET_UNMANAGED] = "unmanaged", [TARGET_APPLIED] = "applied", [TARGET_MANAGED] = "managed",
        [TARGET_REFUSED] = "refused",     [TARGET_DRIFTED] = "drifted", [TARGET_RELEASED] = "released",
        [TARGET_PENDING] = "pending",
};

/* ---- values ---- */

bool kind_is_mask(TargetKind k) {
        return k == TARGET_IRQ || k == TARGET_RPS || k == TARGET_XPS;
}

void target_value_done(TargetValue *v) {
        cpuset_done(&v->cpus);
        v->count = 0;
}

bool target_value_equal(TargetKind k, const TargetValue *a, const TargetValue *b) {
        return kind_is_mask(k) ? cpuset_equal(&a->cpus, &b->cpus) : a->count == b->count;
}

int target_value_copy(TargetValue *dst, const TargetValue *src) {
        int r = cpuset_copy(&dst->cpus, &src->cpus);
        if (r < 0)
                return r;
        dst->count = src->count;
        return 0;
}

/* What the kernel keeps when v is written: counts are rounded up to a power of two. */
int target_value_expected(TargetKind k, const TargetValue *v, TargetValue *ret) {
        int r = target_value_copy(ret, v);
        if (r < 0)
                return r;
        if (!kind_is_mask(k))
                ret->count = netdev_flow_cnt_expected(v->count);
        return 0;
}

/* For logs: a cpu-list ("none" for an empty mask) or the count. NULL on OOM. */
char *target_value_to_string(TargetKind k, const TargetValue *v) {
        char *s = NULL;

        if (kind_is_mask(k)) {
                if (cpuset_is_empty(&v->cpus))
                        return strdup("none");
                return cpuset_to_string(&v->cpus);
        }
        if (asprintf(&s, "%" PRIu32, v->count) < 0)
                return NULL;
        return s;
}

/* ---- targets ---- */

int target_compare(const void *a, const void *b) {
        const Target *x = a, *y = b;

        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        return strcmp(x->key, y->key);
}

Target *target_free(Target *t) {
        if (!t)
                return NULL;
        free(t->key);
        free(t->identity);
        free(t->name);
        free(t->device);
        free(t->original);
        free(t->rule);
        free(t->reason);
        target_value_done(&t->wanted);
        target_value_done(&t->applied);
        target_value_done(&t->drift);
        return mfree(t);
}

void target_free_void(void *p) {
        target_free(p);
}

TargetKind target_kind_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(target_kind_table); i++)
                if (streq(s, target_kind_table[i]))
                        return (TargetKind)i;
        return _TARGET_KIND_INVALID;
}

int device_parse_unsigned(const char *s, unsigned *ret) {
        unsigned long v;
        char *end;

        if (!s || !isdigit((unsigned char)s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > UINT_MAX)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}

/* Splits key into what the target is about (lib/state.h's keys). Returns 0 or -EINVAL. */
static int target_parse_key(Target *t) {
        const char *slash, *prefix;

        switch (t->kind) {
        case TARGET_IRQ:
                return device_parse_unsigned(t->key, &t->irq);
        case TARGET_RFS:
                return streq(t->key, RFS_KEY) ? 0 : -EINVAL;
        case TARGET_RPS:
        case TARGET_FLOW:
        case TARGET_XPS:
                prefix = t->kind == TARGET_XPS ? "tx-" : "rx-";
                slash = strrchr(t->key, '/');
                if (!slash || slash == t->key || strncmp(slash + 1, prefix, 3) != 0 ||
                    device_parse_unsigned(slash + 4, &t->queue) < 0)
                        return -EINVAL;
                t->device = strndup(t->key, (size_t)(slash - t->key));
                return t->device ? 0 : -ENOMEM;
        default:
                return -EINVAL;
        }
}

Target *target_find(DevicePlacement *d, TargetKind kind, const char *key) {
        Target probe = {.kind = kind, .key = (char *)key};
        void *node = tfind(&probe, &d->targets, target_compare);
        return node ? *(Target **)node : NULL;
}

/* A new target (not in the tree yet). */
int target_new(TargetKind kind, const char *key, const char *identity, Target **ret) {
        Target *t = calloc(1, sizeof(Target));
        int r;

        if (!t)
                return -ENOMEM;
        t->kind = kind;
        t->key = strdup(key);
        t->identity = strdup(strempty(identity));
        if (!t->key || !t->identity) {
                target_free(t);
                return -ENOMEM;
        }
        r = target_parse_key(t);
        if (r < 0) {
                target_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

int target_insert(DevicePlacement *d, Target *t) {
        void *node = tsearch(t, &d->targets, target_compare);
        if (!node)
                return -ENOMEM;
        if (*(Target **)node != t)
                return -EEXIST;
        d->n_targets++;
        return 0;
}

/*
 * The identity of an IRQ of the inventory: DeviceIrq.identity ("CHIP HWIRQ": the same IRQ while
 * its name goes blank or changes at ifdown/ifup), or its action names where an inventory has no
 * identity (hand-built ones). Records of a previous version, whose IRQ identity was the action
 * names, don't match the new identity: they are dropped like those of an IRQ number that passed
 * to another device, without writing anything back.
 */
const char *device_irq_identity(const DeviceIrq *irq) {
        return irq->identity ?: strempty(irq->actions);
}

/* "IRQ 38 (virtio2-input.0)", "vt0 rx-1 rps_cpus", ... into buf. */
const char *target_describe(const Target *t, char *buf, size_t size) {
        switch (t->kind) {
        case TARGET_IRQ:
                if (t->name && t->name[0])
                        snprintf(buf, size, "IRQ %u (%s)", t->irq, t->name);
                else
                        snprintf(buf, size, "IRQ %u", t->irq);
                break;
        case TARGET_RPS:
                snprintf(buf, size, "%s rx-%u rps_cpus", t->device, t->queue);
                break;
        case TARGET_XPS:
                snprintf(buf, size, "%s tx-%u xps_cpus", t->device, t->queue);
                break;
        case TARGET_FLOW:
                snprintf(buf, size, "%s rx-%u rps_flow_cnt", t->device, t->queue);
                break;
        default:
                snprintf(buf, size, "net.core.rps_sock_flow_entries");
                break;
        }
        return buf;
}

/* Journal fields of a message about t; irq_buf holds the IRQ= text. */
LogFields target_fields(const Target *t, const char *cpus, char irq_buf[static 16]) {
        irq_buf[0] = '\0';
        if (t->kind == TARGET_IRQ)
                snprintf(irq_buf, 16, "%u", t->irq);
        return (LogFields){
                .policy = t->rule,
                .irq = t->kind == TARGET_IRQ ? irq_buf : NULL,
                .interface = t->device,
                .cpus = cpus,
        };
}

/* "rule NAME" for messages ("rfs: setting" for the global RFS table). One per message: the
 * buffer is static. */
const char *rule_label(const Target *t) {
        static char buf[256];

        if (!t->rule)
                return "rfs: setting";
        snprintf(buf, sizeof(buf), "rule %s", t->rule);
        return buf;
}

int target_set_reason(Target *t, const char *reason) {
        return free_and_strdup(&t->reason, reason);
}

int target_read(DevicePlacement *d, const Target *t, TargetValue *ret) {
        switch (t->kind) {
        case TARGET_IRQ:
                return irq_read_affinity(d->root, t->irq, &ret->cpus);
        case TARGET_RPS:
                return netdev_read_rps(d->root, t->device, t->queue, &ret->cpus);
        case TARGET_XPS:
                return netdev_read_xps(d->root, t->device, t->queue, &ret->cpus);
        case TARGET_FLOW:
                return netdev_read_flow_cnt(d->root, t->device, t->queue, &ret->count);
        case TARGET_RFS:
                return netdev_read_rfs_entries(d->root, &ret->count);
        default:
                return -EINVAL;
        }
}

int target_write(DevicePlacement *d, const Target *t, const TargetValue *v) {
        switch (t->kind) {
        case TARGET_IRQ:
                return irq_write_affinity(d->root, t->irq, &v->cpus);
        case TARGET_RPS:
                return netdev_write_rps(d->root, t->device, t->queue, &v->cpus, d->mask_bits);
        case TARGET_XPS:
                return netdev_write_xps(d->root, t->device, t->queue, &v->cpus, d->mask_bits);
        case TARGET_FLOW:
                return netdev_write_flow_cnt(d->root, t->device, t->queue, v->count);
        case TARGET_RFS:
                return netdev_write_rfs_entries(d->root, v->count);
        default:
                return -EINVAL;
        }
}

/* The original as recorded: a cpu-list for IRQs, the kernel's hex mask for queues, decimal
 * counts (lib/state.h). */
int target_format_original(DevicePlacement *d, const Target *t, const TargetValue *v, char **ret) {
        switch (t->kind) {
        case TARGET_IRQ:
                return cpuset_format_list(&v->cpus, ret);
        case TARGET_RPS:
        case TARGET_XPS:
                return cpuset_format_mask(&v->cpus, d->mask_bits, ret);
        default:
                return asprintf(ret, "%" PRIu32, v->count) < 0 ? -ENOMEM : 0;
        }
}

int target_parse_original(const Target *t, TargetValue *ret) {
        unsigned v;
        int r;

        if (!t->original)
                return -ENODATA;
        switch (t->kind) {
        case TARGET_IRQ:
                r = cpuset_parse_list(t->original, &ret->cpus, NULL);
                if (r >= 0 && cpuset_is_empty(&ret->cpus))
                        r = -EINVAL; /* never written: the kernel refuses an empty IRQ mask */
                return r;
        case TARGET_RPS:
        case TARGET_XPS:
                return cpuset_parse_mask(t->original, &ret->cpus, NULL);
        default:
                r = device_parse_unsigned(t->original, &v);
                if (r < 0)
                        return r;
                ret->count = v;
                return 0;
        }
}

int targets_collect(DevicePlacement *d, Target ***ret, size_t *ret_n) {
        return tree_collect(d->targets, d->n_targets, (void ***)ret, ret_n);
}

/* Whether ROOT/proc/irq/N exists. */
bool irq_dir_exists(DevicePlacement *d, unsigned irq) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/proc/irq/%u", streq(d->root, "/") ? "" : d->root, irq);
        return access(path, F_OK) >= 0 || errno != ENOENT;
}

/* Whether what t is about still exists as the same thing in inv. An IRQ is the same while its
 * identity is (its name may have gone blank); one /proc/interrupts does not list is
 * unverifiable while ROOT/proc/irq/N exists. */
TargetPresence target_presence(DevicePlacement *d, const Target *t, const DeviceInventory *inv) {
        const DeviceIrq *irq;
        const DeviceNet *net;
        char identity[16];

        switch (t->kind) {
        case TARGET_IRQ:
                irq = device_inventory_find_irq(inv, t->irq);
                if (irq)
                        return streq(device_irq_identity(irq), t->identity) ? TARGET_PRESENT : TARGET_GONE;
                return irq_dir_exists(d, t->irq) ? TARGET_UNVERIFIABLE : TARGET_GONE;
        case TARGET_RFS:
                return TARGET_PRESENT;
        default:
                net = inventory_find_net(inv, t->device);
                if (!net)
                        return TARGET_GONE;
                snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                if (!streq(identity, t->identity))
                        return TARGET_GONE;
                if (t->kind == TARGET_XPS)
                        return net->queues.has_xps && t->queue < net->queues.n_tx ? TARGET_PRESENT
                                                                                  : TARGET_GONE;
                return t->queue < net->queues.n_rx && (t->kind == TARGET_FLOW || net->queues.has_rps)
                        ? TARGET_PRESENT
                        : TARGET_GONE;
        }
}

void device_status_clear(DevicePlacement *d) {
        for (size_t i = 0; i < d->n_irq_status; i++) {
                cpuset_done(&d->irq_status[i].requested);
                cpuset_done(&d->irq_status[i].effective);
        }
        d->irq_status = mfree(d->irq_status);
        d->n_irq_status = 0;
        for (size_t i = 0; i < d->n_queue_status; i++)
                cpuset_done(&d->queue_status[i].cpus);
        d->queue_status = mfree(d->queue_status);
        d->queue_names = mfree(d->queue_names);
        d->n_queue_status = 0;
}

const DeviceNet *inventory_find_net(const DeviceInventory *inv, const char *name) {
        for (size_t i = 0; inv && i < inv->n_nets; i++)
                if (streq(inv->nets[i].name, name))
                        return &inv->nets[i];
        return NULL;
}

/* Whether queue target t's interface name still has the ifindex it had
 * (ROOT/sys/class/net/DEV/ifindex): 1 yes, 0 no (renamed, made again, gone: the pass that the
 * link event causes sorts it out). */
bool queue_same_device(DevicePlacement *d, const Target *t) {
        NetDeviceQueues q = {};
        char identity[16];

        if (t->kind == TARGET_RFS)
                return true;
        if (netdev_queues(d->root, t->device, &q) < 0)
                return false;
        snprintf(identity, sizeof(identity), "%d", q.ifindex);
        return streq(identity, t->identity);
}
