/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement of network queues (device-placement-internal.h): net: rules' RPS, XPS and
 * flow counts, the rfs: setting, queue targets following interface renames, ListNetQueues. */

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device-placement-internal.h"

#include "netdev.h"
#include "state.h"

/* ---- queues ---- */

static void queue_key(char *buf, size_t size, const char *device, bool tx, unsigned queue) {
        snprintf(buf, size, "%s/%s-%u", device, tx ? "tx" : "rx", queue);
}

/* Covers one queue setting with rule: brought to want, or with want NULL left as it is, pending
 * (pending_reason: why). */
static int place_queue(
        DevicePlacement *d, TargetKind kind, const char *device, const char *identity, unsigned queue,
        const NetRule *rule, const TargetValue *want, const char *pending_reason) {
        char key[PATH_MAX];
        Target *t;
        int r;

        queue_key(key, sizeof(key), device, kind == TARGET_XPS, queue);
        r = target_get(d, kind, key, identity, &t);
        if (r < 0)
                return r;
        if (!want) {
                r = target_cover(d, t, rule->name, rule->on_drift, NULL);
                if (r < 0)
                        return r;
                t->state = TARGET_PENDING;
                return target_set_reason(t, pending_reason);
        }
        r = target_cover(d, t, rule->name, rule->on_drift, want);
        if (r < 0)
                return r;
        return target_bring(d, t, want);
}

/* The first net: rule whose device glob matches name (file order), or SIZE_MAX. */
static size_t net_rule_for(const Config *c, const char *name) {
        for (size_t i = 0; i < c->n_net_rules; i++)
                if (fnmatch(c->net_rules[i].device, name, 0) == 0)
                        return i;
        return SIZE_MAX;
}

int place_queues(DevicePlacement *d, const DeviceInventory *inv, const DevicePlan *dp) {
        const Config *c = dp->config;
        int r;

        for (size_t i = 0; i < dp->n_queues; i++) {
                const NetQueueAssignment *a = &dp->queues[i];
                const DeviceNet *net = inventory_find_net(inv, a->device);
                char identity[16];

                if (!net || a->rule >= c->n_net_rules)
                        continue;
                snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                r = place_queue(
                        d, a->kind == NET_QUEUE_XPS ? TARGET_XPS : TARGET_RPS, a->device, identity, a->queue,
                        &c->net_rules[a->rule], &(const TargetValue){.cpus = a->cpus}, NULL);
                if (r < 0)
                        return r;
                if (a->kind == NET_QUEUE_RPS && a->has_flow_cnt) {
                        r = place_queue(
                                d, TARGET_FLOW, a->device, identity, a->queue, &c->net_rules[a->rule],
                                &(const TargetValue){.count = a->flow_cnt}, NULL);
                        if (r < 0)
                                return r;
                }
        }

        /* Devices of a pending rule: left alone, shown as pending. */
        for (size_t i = 0; dp->net_rules && i < inv->n_nets; i++) {
                const DeviceNet *net = &inv->nets[i];
                size_t k = net_rule_for(c, net->name);
                const NetRule *rule;
                char identity[16];

                if (k == SIZE_MAX || !dp->net_rules[k].pending_reason)
                        continue;
                rule = &c->net_rules[k];
                snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                for (unsigned q = 0;
                     rule->rps.kind != CPU_SELECTOR_NONE && net->queues.has_rps && q < net->queues.n_rx;
                     q++) {
                        r = place_queue(
                                d, TARGET_RPS, net->name, identity, q, rule, NULL,
                                dp->net_rules[k].pending_reason);
                        if (r < 0)
                                return r;
                }
                for (unsigned q = 0; rule->xps != XPS_NONE && net->queues.has_xps && q < net->queues.n_tx;
                     q++) {
                        r = place_queue(
                                d, TARGET_XPS, net->name, identity, q, rule, NULL,
                                dp->net_rules[k].pending_reason);
                        if (r < 0)
                                return r;
                }
                /* Flow counts: kept as they are, with their originals. */
                for (unsigned q = 0; q < net->queues.n_rx; q++) {
                        char key[PATH_MAX];
                        Target *t;

                        queue_key(key, sizeof(key), net->name, false, q);
                        t = target_find(d, TARGET_FLOW, key);
                        if (t && streq(t->identity, identity)) {
                                t->pass = d->pass;
                                t->state = TARGET_PENDING;
                                r = target_set_reason(t, dp->net_rules[k].pending_reason);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

int place_rfs(DevicePlacement *d, const DevicePlan *dp) {
        Target *t;
        int r;

        if (!dp->has_rfs)
                return 0;
        r = target_get(d, TARGET_RFS, RFS_KEY, "", &t);
        if (r < 0)
                return r;
        r = target_cover(d, t, NULL, DRIFT_REPORT, &(const TargetValue){.count = dp->rfs_entries});
        if (r < 0)
                return r;
        return target_bring(d, t, &(const TargetValue){.count = dp->rfs_entries});
}

/* The interface of inv with ifindex identity (decimal), or NULL. */
static const DeviceNet *inventory_find_ifindex(const DeviceInventory *inv, const char *identity) {
        unsigned ifindex;

        if (device_parse_unsigned(identity, &ifindex) < 0)
                return NULL;
        for (size_t i = 0; inv && i < inv->n_nets; i++)
                if (inv->nets[i].queues.ifindex >= 0 && (unsigned)inv->nets[i].queues.ifindex == ifindex)
                        return &inv->nets[i];
        return NULL;
}

/* Gives queue target t (not in the tree) the interface name device: key and device. Returns 0 or
 * -ENOMEM. */
static int target_set_device(Target *t, const char *device) {
        char key[PATH_MAX];
        char *k, *dev;

        queue_key(key, sizeof(key), device, t->kind == TARGET_XPS, t->queue);
        k = strdup(key);
        dev = strdup(device);
        if (!k || !dev) {
                free(k);
                free(dev);
                return -ENOMEM;
        }
        free(t->key);
        t->key = k;
        free(t->device);
        t->device = dev;
        return 0;
}

/*
 * Interfaces renamed since the last pass (ip link set X name Y): the queue targets of an
 * interface whose name is gone, or is another interface's now, while its ifindex exists under
 * another name, are carried over to that name before the pass covers anything: new key, the
 * record written under it and the old one removed. The pass then treats them as the renamed
 * device's: covered by a rule, they keep their true original; not covered, they get it back.
 * Names swapped between interfaces work too (every target moves out of the tree first, then
 * in). Returns 0 or -ENOMEM (the targets not moved yet keep their old names).
 */
int targets_follow_renames(DevicePlacement *d, const DeviceInventory *inv) {
        _cleanup_free_ Target **targets = NULL, **movers = NULL;
        _cleanup_free_ const char **new_names = NULL;
        _cleanup_strv_free_ char **old_keys = NULL;
        _cleanup_free_ bool *keep_old = NULL;
        size_t n = 0, n_movers = 0;
        int r, ret = 0;

        r = targets_collect(d, &targets, &n);
        if (r < 0)
                return r;
        movers = calloc(MAX(n, (size_t)1), sizeof(Target *));
        new_names = calloc(MAX(n, (size_t)1), sizeof(char *));
        old_keys = calloc(n + 1, sizeof(char *));
        keep_old = calloc(MAX(n, (size_t)1), sizeof(bool));
        if (!movers || !new_names || !old_keys || !keep_old)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                Target *t = targets[i];
                const DeviceNet *net, *renamed;
                char identity[16];

                if (t->kind != TARGET_RPS && t->kind != TARGET_XPS && t->kind != TARGET_FLOW)
                        continue;
                net = inventory_find_net(inv, t->device);
                if (net) {
                        snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
                        if (streq(identity, t->identity))
                                continue; /* still there under its name */
                }
                renamed = inventory_find_ifindex(inv, t->identity);
                if (!renamed || streq(renamed->name, t->device))
                        continue; /* gone: the sweep drops it */
                old_keys[n_movers] = strdup(t->key);
                if (!old_keys[n_movers])
                        break; /* the ones found so far move */
                new_names[n_movers] = renamed->name;
                movers[n_movers++] = t;
        }
        if (n_movers == 0)
                return 0;

        /* Out of the tree first, so that swapped names don't collide. */
        for (size_t i = 0; i < n_movers; i++)
                if (tdelete(movers[i], &d->targets, target_compare))
                        d->n_targets--;

        for (size_t i = 0; i < n_movers; i++) {
                Target *t = movers[i], *other;
                const char *slash = strrchr(old_keys[i], '/');
                size_t prefix = slash ? (size_t)(slash - old_keys[i]) + 1 : 0;
                bool had_record = t->persisted, first = true;
                char what[128];

                if (ret < 0 || target_set_device(t, new_names[i]) < 0) {
                        /* Out of memory: back under its old name (the sweep may drop it). */
                        ret = -ENOMEM;
                        keep_old[i] = true;
                        if (target_insert(d, t) < 0) {
                                t->persisted = false; /* its record stays for a restart */
                                target_free(t);
                                movers[i] = NULL;
                        }
                        continue;
                }
                other = target_find(d, t->kind, t->key);
                if (other) {
                        /* What was recorded under the new name is of an interface gone since (its
                         * ifindex is nowhere now, or it would have moved as well). */
                        log_debug(
                                "%s: dropping what was recorded of an interface gone since, ifindex %s "
                                "has the name now",
                                target_describe(other, what, sizeof(what)), t->identity);
                        target_forget(d, other);
                }
                r = target_insert(d, t);
                if (r < 0) {
                        ret = -ENOMEM;
                        keep_old[i] = true;
                        t->persisted = false; /* its record, under the old key, stays for a restart */
                        target_free(t);
                        movers[i] = NULL;
                        continue;
                }
                t->persisted = false;
                if (had_record) {
                        r = target_persist(d, t);
                        if (r < 0) {
                                log_target(
                                        LOG_WARNING, r, t, NULL,
                                        "Failed to record the original of %s under its new name in %s: "
                                        "%m; it stays recorded under the old name",
                                        target_describe(t, what, sizeof(what)), d->state_dir);
                                /* The old record stays: a restarted daemon follows the rename too. */
                                keep_old[i] = true;
                        }
                }
                /* Once per interface: the earlier movers of the same old name were told. */
                for (size_t k = 0; k < i && first; k++)
                        first = strncmp(old_keys[k], old_keys[i], prefix) != 0;
                if (first)
                        log_info(
                                "Interface %.*s is %s now (ifindex %s): what was recorded of its queues "
                                "follows it",
                                (int)(prefix > 0 ? prefix - 1 : 0), old_keys[i], t->device, t->identity);
        }

        /* The old records, unless a record just written has that key (names swapped). */
        for (size_t i = 0; d->state_dir && !d->ctx.dry_run && i < n_movers; i++) {
                bool taken = false;

                if (!movers[i] || keep_old[i])
                        continue;
                for (size_t k = 0; k < n_movers && !taken; k++)
                        taken = movers[k] && movers[k]->persisted && movers[k]->kind == movers[i]->kind &&
                                streq(movers[k]->key, old_keys[i]);
                if (taken)
                        continue;
                r = state_target_remove(d->state_dir, target_kind_table[movers[i]->kind], old_keys[i]);
                if (r < 0)
                        log_warning_errno(
                                r, "Failed to remove the record of %s from %s: %m", old_keys[i],
                                d->state_dir);
        }
        return ret;
}

/* How much a state says something is wrong with a queue setting, for merging an rx queue's
 * rps_cpus and rps_flow_cnt into one row. */
static int state_severity(TargetState s) {
        switch (s) {
        case TARGET_REFUSED:
        case TARGET_MANAGED:
                return 3;
        case TARGET_DRIFTED:
                return 2;
        case TARGET_PENDING:
                return 1;
        default:
                return 0;
        }
}

/* Appends the status of one queue setting. An rx row is its rps_cpus target's, made worse by its
 * rps_flow_cnt target's (refused, drifted, pending: with that one's reason). */
static int queue_status_add(DevicePlacement *d, const DeviceNet *net, bool tx, unsigned q) {
        NetQueueStatus *s = &d->queue_status[d->n_queue_status];
        char *name = d->queue_names[d->n_queue_status];
        char key[PATH_MAX], identity[16];
        Target *t, *flow = NULL, *shown;
        int r;

        snprintf(name, sizeof(d->queue_names[0]), "%s-%u", tx ? "tx" : "rx", q);
        queue_key(key, sizeof(key), net->name, tx, q);
        snprintf(identity, sizeof(identity), "%d", net->queues.ifindex);
        t = target_find(d, tx ? TARGET_XPS : TARGET_RPS, key);
        if (t && !streq(t->identity, identity))
                t = NULL;
        if (!tx) {
                flow = target_find(d, TARGET_FLOW, key);
                if (flow && !streq(flow->identity, identity))
                        flow = NULL;
        }
        shown = t;
        if (flow && (!t || state_severity(flow->state) > state_severity(t->state)))
                shown = flow;
        *s = (NetQueueStatus){
                .device = net->name,
                .queue = name,
                .kind = tx ? "xps" : "rps",
                .rule = t      ? strempty(t->rule)
                        : flow ? strempty(flow->rule)
                               : "",
                .state = target_state_table[shown ? shown->state : TARGET_UNMANAGED],
                .reason = shown ? strempty(shown->reason) : "",
        };
        d->n_queue_status++;
        r = tx ? netdev_read_xps(d->root, net->name, q, &s->cpus)
               : netdev_read_rps(d->root, net->name, q, &s->cpus);
        if (r == -ENOMEM)
                return r;
        if (!tx && netdev_read_flow_cnt(d->root, net->name, q, &s->flow_cnt) < 0)
                s->flow_cnt = 0;
        return 0;
}

int device_placement_list_queues(DevicePlacement *d, const NetQueueStatus **ret, size_t *ret_n) {
        const DeviceInventory *inv = d->inv;
        size_t n = 0;
        int r;

        device_status_clear(d);
        for (size_t i = 0; inv && i < inv->n_nets; i++)
                n += (inv->nets[i].queues.has_rps ? inv->nets[i].queues.n_rx : 0) +
                        (inv->nets[i].queues.has_xps ? inv->nets[i].queues.n_tx : 0);
        if (n == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        d->queue_status = calloc(n, sizeof(NetQueueStatus));
        d->queue_names = calloc(n, sizeof(d->queue_names[0]));
        if (!d->queue_status || !d->queue_names)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_nets; i++) {
                const DeviceNet *net = &inv->nets[i];

                for (unsigned q = 0; net->queues.has_rps && q < net->queues.n_rx; q++) {
                        r = queue_status_add(d, net, false, q);
                        if (r < 0)
                                return r;
                }
                for (unsigned q = 0; net->queues.has_xps && q < net->queues.n_tx; q++) {
                        r = queue_status_add(d, net, true, q);
                        if (r < 0)
                                return r;
                }
        }
        *ret = d->queue_status;
        *ret_n = d->n_queue_status;
        return 0;
}
