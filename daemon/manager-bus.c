/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.affinityd1.Manager: vtable, property getters and method marshalling. See manager-bus.h. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bus-caller.h"
#include "bus-util.h"
#include "config.h"
#include "cpu-audit.h"
#include "device-placement.h"
#include "effect.h"
#include "irq-skew-watch.h"
#include "manager-bus-internal.h"
#include "manager-explain.h"
#include "procfs.h"
#include "util.h"

static int property_get_string(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        return bus_append_string(reply, *(char **)userdata);
}

static int property_get_version(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_state(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", manager_state_to_string(m->state));
}

static int property_get_discovery(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", manager_discovery_to_string(m->discovery));
}

static int property_get_policy_files(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        STRV_FOREACH (f, m->config ? m->config->files : NULL) {
                r = bus_append_string(reply, *f);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_degraded_reasons(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = manager_degraded_reasons(userdata, &l);
        if (r < 0)
                return r;
        return sd_bus_message_append_strv(reply, l);
}

static int property_get_topology(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        int r;

        if (m->topology) {
                r = topology_summary(m->topology, &text);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_append(reply, "s", strempty(text));
}

/* OnlineCPUs (of the topology in force), ReservedCPUs (affinityd.yaml reserve:; a selector as
 * the plan in force resolved it) and KubeletExclusiveCPUs (the kubelet's CPU manager checkpoint
 * as last read). */
static int property_get_cpus(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        const CpuSet *set = NULL;
        int r;

        if (streq(property, "OnlineCPUs"))
                set = m->topology ? topology_online_cpus(m->topology) : NULL;
        else if (streq(property, "KubeletExclusiveCPUs"))
                set = kubelet_cpu_state_exclusive(m->kubelet);
        else
                set = plan_reserve_given(m->plan);
        if (set) {
                r = cpuset_format_list(set, &text);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_append(reply, "s", strempty(text));
}

static int property_get_latency(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        double q = streq(property, "PlacementLatencyP50USec") ? 0.50
                : streq(property, "PlacementLatencyP99USec")  ? 0.99
                                                              : 1.0;
        return sd_bus_message_append(reply, "t", manager_latency_usec(m, q));
}

/*
 * The upper bounds of PlacementLatencyHistogram, µs: Prometheus-style steps (1, 2.5, 5 per decade)
 * from 10 µs to 1 s. Part of the API (org.affinityd1(5)): change them only with its version.
 */
static const uint64_t latency_histogram_bounds_usec[] = {
        10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000,
};

/* a(tt): per bound (µs), how many placements took at most that long (latency_count_at_most()). */
static int property_get_latency_histogram(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(tt)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(latency_histogram_bounds_usec); i++) {
                uint64_t us = latency_histogram_bounds_usec[i];

                r = sd_bus_message_append(reply, "(tt)", us, latency_count_at_most(&m->latency, us * 1000));
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* µs, rounded up like the quantiles (manager_latency_usec()), so Sum >= Max. */
static int property_get_latency_sum(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "t", (m->latency.sum_ns + 999) / 1000);
}

/* CpuIntrusions: the isolation audit's counters (daemon/cpu-audit.h), (cpu, policy, kind, µs,
 * interrupts) ordered by CPU, policy and kind; empty until a pass found an intrusion. */
static int property_get_cpu_intrusions(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const CpuAuditCounter *l;
        size_t n;
        int r;

        l = cpu_audit_counters(m->cpu_audit, &n);
        r = sd_bus_message_open_container(reply, 'a', "(usstt)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *b = NULL;
                const char *p = bus_string(l[i].policy, &b);

                if (!p)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(usstt)", (uint32_t)l[i].cpu, p, l[i].kind, l[i].usec, l[i].count);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* PolicyEffects: a(sttttttb), one entry per policy sampled so far (daemon/effect.h). */
static int property_get_policy_effects(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ EffectPolicyTotals *l = NULL;
        Manager *m = userdata;
        size_t n = 0;
        int r;

        r = effect_list_totals(m->effect, &l, &n);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sttttttb)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *b = NULL;
                const char *name = bus_string(l[i].policy, &b);
                const EffectTotals *t = &l[i].totals;

                if (!name)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(sttttttb)", name, t->cpu_ns / 1000, t->foreign_cpu_ns / 1000,
                        t->run_delay_ns / 1000, t->timeslices, t->migrations, t->involuntary,
                        (int)t->has_migrations);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* a(su): every policy in force, in plan order, with the number of processes it manages now. */
static int property_get_processes_by_policy(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ TrackedProcess **list = NULL;
        _cleanup_free_ uint32_t *counts = NULL;
        Manager *m = userdata;
        size_t n = 0, n_policies = m->plan ? m->plan->n_policies : 0;
        int r;

        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return r;
        counts = calloc(MAX(n_policies, (size_t)1), sizeof(uint32_t));
        if (!counts)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++)
                if (list[k]->policy < n_policies)
                        counts[list[k]->policy]++;

        r = sd_bus_message_open_container(reply, 'a', "(su)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_policies; i++) {
                _cleanup_free_ char *b = NULL;
                const char *name = bus_string(m->plan->policies[i].policy->name, &b);

                if (!name)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(su)", name, counts[i]);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int method_list_policies(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssuss)");
        if (r < 0)
                return r;
        for (size_t i = 0; m->plan && i < m->plan->n_policies; i++) {
                const PolicyPlan *pp = &m->plan->policies[i];
                _cleanup_free_ char *cpus = NULL, *b1 = NULL, *b2 = NULL, *b3 = NULL;
                const char *name, *file, *reason;

                if (pp->has_cpus && !pp->pending_reason) {
                        r = cpuset_format_list(&pp->cpus, &cpus);
                        if (r < 0)
                                return r;
                }
                name = bus_string(pp->policy->name, &b1);
                file = bus_string(pp->policy->location.file, &b2);
                reason = bus_string(pp->pending_reason, &b3);
                if (!name || !file || !reason)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(ssuss)", name, file, (uint32_t)pp->policy->location.line, strempty(cpus),
                        reason);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        return sd_bus_send(NULL, reply, NULL);
}

static int method_reload(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        int r;

        r = bus_caller_require_root(message, error, "reload affinityd");
        if (r < 0)
                return r;

        r = manager_reload(m, &text);
        if (r < 0) {
                _cleanup_free_ char *buf = NULL;
                const char *msg = bus_string(text, &buf); /* names files */

                if (!msg)
                        return -ENOMEM;
                if (r == -EINVAL)
                        return sd_bus_error_set(error, AFFINITYD_ERROR_INVALID_POLICY, msg);
                return sd_bus_error_set_errnof(error, r, "Reload failed: %s", msg);
        }

        return sd_bus_reply_method_return(message, NULL);
}

static int method_list_processes(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ TrackedProcess **list = NULL;
        Caller c = {};
        Manager *m = userdata;
        uint64_t t0 = now_monotonic_usec(), wait;
        size_t n = 0;
        gid_t gid = 0;
        bool has_gid = false;
        int hidepid = 0, r;

        r = bus_caller_get(m, message, &c);
        if (r < 0)
                return r;
        if (c.uid != 0) {
                wait = caller_budget_wait(&m->bus_budget, c.uid, t0);
                if (wait > 0)
                        return bus_caller_reply_busy(error, c.uid, wait);
                hidepid = procfs_hidepid(NULL, &gid, &has_gid);
        }
        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(usss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
                _cleanup_free_ char *text = NULL, *b1 = NULL, *b2 = NULL;
                const char *comm, *policy;

                /* Under hidepid=, what /proc would show the caller. */
                if (hidepid > 0 && bus_caller_visibility(&c, list[i]->pid, hidepid, gid, has_gid) < 0)
                        continue;
                r = tracked_process_cpus(list[i], &cpus);
                if (r < 0)
                        return r;
                r = cpuset_format_list(&cpus, &text);
                if (r < 0)
                        return r;
                /* comm is whatever bytes the process named itself with */
                comm = bus_string(list[i]->comm, &b1);
                policy = bus_string(manager_process_policy_name(m, list[i]), &b2);
                if (!comm || !policy)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(usss)", (uint32_t)list[i]->pid, comm, policy, text);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        if (c.uid != 0)
                caller_budget_charge(&m->bus_budget, c.uid, now_monotonic_usec() - t0, now_monotonic_usec());
        return sd_bus_send(NULL, reply, NULL);
}

static int method_rescan(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = bus_caller_require_root(message, error, "rescan");
        if (r < 0)
                return r;

        r = manager_rescan_all(m);
        if (r == -EOPNOTSUPP)
                return sd_bus_error_set(
                        error, AFFINITYD_ERROR_NOT_SUPPORTED,
                        "Rescan is not supported with --topology= (no process of this machine is managed).");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Rescan failed: %m");
        return sd_bus_reply_method_return(message, NULL);
}

/* The device placement counters by property name (DevicePlacementCounters fields). */
static const struct {
        const char *property;
        size_t offset;
} device_counters[] = {
        {"IrqsPlaced", offsetof(DevicePlacementCounters, irqs_placed)},
        {"IrqRefusals", offsetof(DevicePlacementCounters, irq_refusals)},
        {"QueuesPlaced", offsetof(DevicePlacementCounters, queues_placed)},
        {"QueueFailures", offsetof(DevicePlacementCounters, queue_failures)},
        {"DeviceRestores", offsetof(DevicePlacementCounters, restores)},
        {"DeviceDriftDetected", offsetof(DevicePlacementCounters, drift_detected)},
        {"DeviceDriftCorrections", offsetof(DevicePlacementCounters, drift_corrections)},
        {"DeviceEvents", offsetof(DevicePlacementCounters, device_events)},
};

/* IrqSkewEpisodes: a(ssubt) — every (device, kind) the skew check (daemon/irq-skew-watch.h) found skewed
 * since the daemon started: device, kind ("irq", "net-rx"), the CPU of its latest skewed window,
 * whether an episode is on, episodes begun. Empty until one was found, or with effect-interval:
 * off. */
static int property_get_irq_skew(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const IrqSkewWatchEntry *l;
        size_t n;
        int r;

        l = irq_skew_watch_entries(m->irq_skew, &n);
        r = sd_bus_message_open_container(reply, 'a', "(ssubt)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *b = NULL;
                const char *d = bus_string(l[i].device, &b);

                if (!d)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(ssubt)", d, irq_skew_kind_to_string(l[i].kind), (uint32_t)l[i].episode.cpu,
                        (int)l[i].episode.active, l[i].episode.n_episodes);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* 0 while there is no device placement (m->devices NULL). */
static int property_get_device_counter(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const DevicePlacementCounters *c = m->devices ? device_placement_counters(m->devices) : NULL;
        uint64_t v = 0;

        for (size_t i = 0; c && i < ELEMENTSOF(device_counters); i++)
                if (streq(device_counters[i].property, property)) {
                        memcpy(&v, (const uint8_t *)c + device_counters[i].offset, sizeof(v));
                        break;
                }
        return sd_bus_message_append(reply, "t", v);
}

/* One element of ListIrqs' reply: element i of the IrqStatus array userdata. */
static int append_irq(sd_bus_message *reply, size_t i, const void *userdata) {
        const IrqStatus *x = (const IrqStatus *)userdata + i;
        _cleanup_free_ char *requested = NULL, *effective = NULL, *b1 = NULL, *b2 = NULL, *b3 = NULL;
        const char *name, *rule, *reason;
        int r;

        r = cpuset_format_list(&x->requested, &requested);
        if (r < 0)
                return r;
        r = cpuset_format_list(&x->effective, &effective);
        if (r < 0)
                return r;
        /* action names come from drivers, rule names from files: bytes either way */
        name = bus_string(x->name, &b1);
        rule = bus_string(x->rule, &b2);
        reason = bus_string(x->reason, &b3);
        if (!name || !rule || !reason)
                return -ENOMEM;
        return sd_bus_message_append(
                reply, "(ussssss)", (uint32_t)x->irq, name, rule, requested, effective, strempty(x->state),
                reason);
}

/* Every IRQ with its rule and state: a(ussssss) irq, name, rule, requested cpu-list, effective
 * cpu-list ("" unknown), state, reason. Empty while there is no device placement. */
static int method_list_irqs(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        const IrqStatus *list = NULL;
        Manager *m = userdata;
        size_t n = 0;
        int r;

        if (m->devices) {
                r = device_placement_list_irqs(m->devices, &list, &n);
                if (r < 0)
                        return r;
        }
        return bus_reply_array(message, "(ussssss)", n, append_irq, list);
}

/* One element of ListNetQueues' reply: element i of the NetQueueStatus array userdata. */
static int append_net_queue(sd_bus_message *reply, size_t i, const void *userdata) {
        const NetQueueStatus *x = (const NetQueueStatus *)userdata + i;
        _cleanup_free_ char *cpus = NULL, *b1 = NULL, *b2 = NULL;
        const char *device, *rule;
        int r;

        r = cpuset_format_list(&x->cpus, &cpus);
        if (r < 0)
                return r;
        device = bus_string(x->device, &b1);
        rule = bus_string(x->rule, &b2);
        if (!device || !rule)
                return -ENOMEM;
        return sd_bus_message_append(
                reply, "(ssssuss)", device, strempty(x->queue), strempty(x->kind), cpus, x->flow_cnt, rule,
                strempty(x->state));
}

/* Every rps/xps setting of every queue: a(ssssuss) device, queue, kind, cpu-list ("" empty
 * mask), flow_cnt, rule, state. Empty while there is no device placement. */
static int method_list_net_queues(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        const NetQueueStatus *list = NULL;
        Manager *m = userdata;
        size_t n = 0;
        int r;

        if (m->devices) {
                r = device_placement_list_queues(m->devices, &list, &n);
                if (r < 0)
                        return r;
        }
        return bus_reply_array(message, "(ssssuss)", n, append_net_queue, list);
}

/*
 * Annotations: Version never changes (const). State, DegradedReasons, Discovery, Topology,
 * OnlineCPUs, ReservedCPUs, PolicyFiles, LastReloadUSec, LastReloadError and Reloads change only
 * at state changes, reloads, CPU hotplug re-plans and the fallback to /proc polling, where
 * the Manager reports PropertiesChanged (Manager.report; emits-change). The counters (the device ones too),
 * ManagedProcesses, ManagedProcessesByPolicy and the latency quantiles and histogram change
 * with every event; signalling each change
 * would flood the bus, so they carry no emits flag, which sd-bus publishes as
 * EmitsChangedSignal="false": read them when needed.
 *
 * Explain's per-thread migrations, run-queue delay and involuntary switches are counted since
 * the daemon last set the thread's CPUs: a low-priority pass after each placement samples the
 * baseline. A thread sampled by no such pass yet (just placed, or never placed: not managed)
 * reports totals since it started. UINT64_MAX: the kernel does not provide the counter.
 */
/*
 * Subscribe() and Unsubscribe(): the per-event signals (ProcessPlaced, PlacementFailed,
 * DriftDetected, CpuIntrusion) are sent only while some connection is subscribed, as systemd's Manager does
 * with its unit signals: a placement costs no message, and no broker time, that nobody reads. A
 * subscription ends with Unsubscribe() or when the connection goes away (sd_bus_track(3)); one
 * connection is one subscription, however often it calls Subscribe().
 */
static int method_subscribe(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        if (sd_bus_message_get_bus(message) != m->bus)
                return sd_bus_error_set(
                        error, SD_BUS_ERROR_NOT_SUPPORTED,
                        "The signals are sent on the bus only, not on a peer-to-peer connection "
                        "(--api-socket)");
        if (!m->subscribers) {
                r = sd_bus_track_new(sd_bus_message_get_bus(message), &m->subscribers, NULL, NULL);
                if (r < 0)
                        return r;
        }
        r = sd_bus_track_add_sender(m->subscribers, message);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(message, NULL);
}

static int method_unsubscribe(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        if (m->subscribers)
                (void)sd_bus_track_remove_sender(m->subscribers, message);
        return sd_bus_reply_method_return(message, NULL);
}

const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),

        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", property_get_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "DegradedReasons", "as", property_get_degraded_reasons, 0,
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Discovery", "s", property_get_discovery, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Topology", "s", property_get_topology, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("OnlineCPUs", "s", property_get_cpus, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ReservedCPUs", "s", property_get_cpus, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "KubeletExclusiveCPUs", "s", property_get_cpus, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ManagedProcesses", "u", NULL, offsetof(Manager, n_processes), 0),
        SD_BUS_PROPERTY("EventsReceived", "t", NULL, offsetof(Manager, counters.events_received), 0),
        SD_BUS_PROPERTY("EventsLost", "t", NULL, offsetof(Manager, counters.events_lost), 0),
        SD_BUS_PROPERTY("MatchesUndecided", "t", NULL, offsetof(Manager, counters.matches_undecided), 0),
        SD_BUS_PROPERTY("Rescans", "t", NULL, offsetof(Manager, counters.rescans), 0),
        SD_BUS_PROPERTY("ProcessesMatched", "t", NULL, offsetof(Manager, counters.processes_matched), 0),
        SD_BUS_PROPERTY("ProcessesPlaced", "t", NULL, offsetof(Manager, counters.processes_placed), 0),
        SD_BUS_PROPERTY("ProcessesVanished", "t", NULL, offsetof(Manager, counters.processes_vanished), 0),
        SD_BUS_PROPERTY("PlacementFailures", "t", NULL, offsetof(Manager, counters.placement_failures), 0),
        SD_BUS_PROPERTY("DriftDetected", "t", NULL, offsetof(Manager, counters.drift_detected), 0),
        SD_BUS_PROPERTY("DriftCorrections", "t", NULL, offsetof(Manager, counters.drift_corrections), 0),
        SD_BUS_PROPERTY("Restores", "t", NULL, offsetof(Manager, counters.restores), 0),
        SD_BUS_PROPERTY(
                "Reloads", "t", NULL, offsetof(Manager, counters.reloads),
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "PolicyFiles", "as", property_get_policy_files, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "LastReloadUSec", "t", NULL, offsetof(Manager, last_reload_usec),
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "LastReloadError", "s", property_get_string, offsetof(Manager, last_reload_error),
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("PlacementLatencyP50USec", "t", property_get_latency, 0, 0),
        SD_BUS_PROPERTY("PlacementLatencyP99USec", "t", property_get_latency, 0, 0),
        SD_BUS_PROPERTY("PlacementLatencyMaxUSec", "t", property_get_latency, 0, 0),
        SD_BUS_PROPERTY("PlacementLatencyCount", "t", NULL, offsetof(Manager, latency.count), 0),
        SD_BUS_PROPERTY("PlacementLatencySumUSec", "t", property_get_latency_sum, 0, 0),
        SD_BUS_PROPERTY("PlacementLatencyHistogram", "a(tt)", property_get_latency_histogram, 0, 0),
        SD_BUS_PROPERTY("ManagedProcessesByPolicy", "a(su)", property_get_processes_by_policy, 0, 0),
        SD_BUS_PROPERTY("PolicyEffects", "a(sttttttb)", property_get_policy_effects, 0, 0),
        SD_BUS_PROPERTY("IrqsPlaced", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("IrqRefusals", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("QueuesPlaced", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("QueueFailures", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("DeviceRestores", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("IrqSkewEpisodes", "a(ssubt)", property_get_irq_skew, 0, 0),
        SD_BUS_PROPERTY("DeviceDriftDetected", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("DeviceDriftCorrections", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("DeviceEvents", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("CpuIntrusions", "a(usstt)", property_get_cpu_intrusions, 0, 0),

        SD_BUS_METHOD_WITH_NAMES(
                "ListPolicies", NULL, "", "a(ssuss)", SD_BUS_PARAM(policies), method_list_policies,
                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "ListProcesses", NULL, "", "a(usss)", SD_BUS_PARAM(processes), method_list_processes,
                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "ListIrqs", NULL, "", "a(ussssss)", SD_BUS_PARAM(irqs), method_list_irqs,
                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "ListNetQueues", NULL, "", "a(ssssuss)", SD_BUS_PARAM(queues), method_list_net_queues,
                SD_BUS_VTABLE_UNPRIVILEGED),
        /* Unprivileged for sd-bus's own check: method_reload checks the sender's euid itself,
         * so the refusal is the documented AccessDenied on any bus. */
        SD_BUS_METHOD_WITH_NAMES("Reload", NULL, "", NULL, "", method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Rescan", NULL, "", NULL, "", method_rescan, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "Explain", "u", SD_BUS_PARAM(pid), "sssasa(ss)a(ussssuttt)",
                SD_BUS_PARAM(comm) SD_BUS_PARAM(policy) SD_BUS_PARAM(cpus) SD_BUS_PARAM(explanation)
                        SD_BUS_PARAM(unmatched) SD_BUS_PARAM(threads),
                method_explain, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "Subscribe", NULL, "", NULL, "", method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "Unsubscribe", NULL, "", NULL, "", method_unsubscribe, SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_NAMES(
                "ProcessPlaced", "usss",
                SD_BUS_PARAM(pid) SD_BUS_PARAM(comm) SD_BUS_PARAM(policy) SD_BUS_PARAM(cpus), 0),
        SD_BUS_SIGNAL_WITH_NAMES(
                "PlacementFailed", "usss",
                SD_BUS_PARAM(pid) SD_BUS_PARAM(comm) SD_BUS_PARAM(policy) SD_BUS_PARAM(error), 0),
        SD_BUS_SIGNAL_WITH_NAMES("Reloaded", "bs", SD_BUS_PARAM(success) SD_BUS_PARAM(error), 0),
        SD_BUS_SIGNAL_WITH_NAMES(
                "IrqSkew", "ssudss",
                SD_BUS_PARAM(device) SD_BUS_PARAM(kind) SD_BUS_PARAM(cpu) SD_BUS_PARAM(share)
                        SD_BUS_PARAM(irqs) SD_BUS_PARAM(suggestion),
                0),
        SD_BUS_SIGNAL_WITH_NAMES(
                "DriftDetected", "sssss",
                SD_BUS_PARAM(kind) SD_BUS_PARAM(target) SD_BUS_PARAM(policy) SD_BUS_PARAM(found)
                        SD_BUS_PARAM(action),
                0),
        SD_BUS_SIGNAL_WITH_NAMES(
                "CpuIntrusion", "usstts",
                SD_BUS_PARAM(cpu) SD_BUS_PARAM(policy) SD_BUS_PARAM(kind) SD_BUS_PARAM(usec)
                        SD_BUS_PARAM(count) SD_BUS_PARAM(who),
                0),

        SD_BUS_VTABLE_END,
};

/* Whether a per-event signal has anyone to go to (Subscribe()). */
static bool manager_bus_events_wanted(Manager *m) {
        return m && m->bus && m->subscribers && sd_bus_track_count(m->subscribers) > 0;
}

static int manager_bus_emit_changed_strv(Manager *m, char **properties) {
        if (!m->bus)
                return 0;
        return sd_bus_emit_properties_changed_strv(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, properties);
}

static int manager_bus_emit_process_placed(
        Manager *m, pid_t pid, const char *comm, const char *policy, const char *cpus) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL;
        const char *c, *p;

        if (!manager_bus_events_wanted(m))
                return 0;
        c = bus_string(comm, &b1);
        p = bus_string(policy, &b2);
        if (!c || !p)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ProcessPlaced", "usss", (uint32_t)pid,
                c, p, strempty(cpus));
}

static int manager_bus_emit_placement_failed(
        Manager *m, pid_t pid, const char *comm, const char *policy, const char *error) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL, *b3 = NULL;
        const char *c, *p, *e;

        if (!manager_bus_events_wanted(m))
                return 0;
        c = bus_string(comm, &b1);
        p = bus_string(policy, &b2);
        e = bus_string(error, &b3);
        if (!c || !p || !e)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "PlacementFailed", "usss",
                (uint32_t)pid, c, p, e);
}

static int manager_bus_emit_reloaded(Manager *m, bool success, const char *error) {
        _cleanup_free_ char *b = NULL;
        const char *e;

        if (!m || !m->bus)
                return 0;
        e = bus_string(error, &b);
        if (!e)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Reloaded", "bs", (int)success, e);
}

static int manager_bus_emit_irq_skew(Manager *m, const IrqSkewFinding *f) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL, *b3 = NULL;
        const char *d, *i, *s;

        if (!manager_bus_events_wanted(m))
                return 0;
        d = bus_string(f->device, &b1);
        i = bus_string(f->irqs_text, &b2);
        s = bus_string(f->suggestion, &b3);
        if (!d || !i || !s)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "IrqSkew", "ssudss", d,
                irq_skew_kind_to_string(f->kind), (uint32_t)f->cpu, f->share, i, s);
}

static int manager_bus_emit_drift_detected(
        Manager *m, const char *kind, const char *target, const char *policy, const char *found,
        const char *action) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL, *b3 = NULL;
        const char *t, *p, *f;

        if (!manager_bus_events_wanted(m))
                return 0;
        t = bus_string(target, &b1);
        p = bus_string(policy, &b2);
        f = bus_string(found, &b3);
        if (!t || !p || !f)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "DriftDetected", "sssss",
                strempty(kind), t, p, f, strempty(action));
}

static int manager_bus_emit_cpu_intrusion(
        Manager *m, const char *policy, unsigned cpu, const char *kind, uint64_t usec, uint64_t count,
        const char *who) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL;
        const char *p, *w;

        if (!manager_bus_events_wanted(m))
                return 0;
        p = bus_string(policy, &b1);
        w = bus_string(who, &b2);
        if (!p || !w)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "CpuIntrusion", "usstts", (uint32_t)cpu,
                p, strempty(kind), usec, count, w);
}

const ManagerReport manager_bus_report = {
        .events_wanted = manager_bus_events_wanted,
        .changed = manager_bus_emit_changed_strv,
        .process_placed = manager_bus_emit_process_placed,
        .placement_failed = manager_bus_emit_placement_failed,
        .reloaded = manager_bus_emit_reloaded,
        .irq_skew = manager_bus_emit_irq_skew,
        .drift_detected = manager_bus_emit_drift_detected,
        .cpu_intrusion = manager_bus_emit_cpu_intrusion,
};
