/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Configuration: loading and reloading policies (lib/policy-yaml.h), installing the plan,
 * and re-planning after CPU hotplug (kernel uevents). */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config-watch.h"
#include "device-placement.h"
#include "cpu-audit.h"
#include "drift.h"
#include "effect.h"
#include "irq-skew-watch.h"
#include "config.h"
#include "log.h"
#include "manager.h"
#include "plan.h"
#include "regex-set.h"
#include "policy-yaml.h"
#include "unit-placement.h"
#include "manager-internal.h"
#include "util.h"

/* ---- configuration ---- */

/* The index in plan of the active policy named name, or -ENOENT. */
static int plan_find_active(const Plan *plan, const char *name) {
        for (size_t i = 0; i < plan->n_policies; i++)
                if (plan->policies[i].policy && streq(plan->policies[i].policy->name, name))
                        return plan->policies[i].pending_reason ? -ENOENT : (int)i;
        return -ENOENT;
}

/* Logs each diagnostic of d as "file:line:column: message": errors at error_level (LOG_ERR at
 * startup, LOG_WARNING for a reload that keeps the running configuration), warnings at
 * LOG_WARNING. */
void log_diagnostics(const Diagnostics *d, int error_level) {
        for (size_t i = 0; i < d->n_items; i++) {
                _cleanup_free_ char *line = NULL;

                if (diagnostic_format(&d->items[i], &line) < 0)
                        continue;
                log_full(d->items[i].level == DIAGNOSTIC_ERROR ? error_level : LOG_WARNING, "%s", line);
        }
}

/* Logs what a plan resolved to: each policy's CPUs, pending policies and every warning,
 * each at the place in the files it is about (as affinityctl validate prints them). */
void log_plan(Manager *m, const Plan *plan) {
        char where[PATH_MAX + 32];

        STRV_FOREACH (w, plan->warnings)
                log_warning(
                        "%swarning: %s",
                        location_prefix(
                                plan->config->has_reserve ? &plan->config->reserve_location : NULL, where,
                                sizeof(where)),
                        *w);

        for (size_t i = 0; i < plan->n_policies; i++) {
                const PolicyPlan *pp = &plan->policies[i];
                const char *name = pp->policy->name;

                if (pp->pending_reason)
                        log_struct(
                                LOG_WARNING, 0, name, 0, NULL, NULL, "%spolicy %s is pending: %s",
                                location_prefix(
                                        pp->pending_location ?: &pp->policy->location, where, sizeof(where)),
                                name, pp->pending_reason);
                else if (log_level_enabled(LOG_INFO)) {
                        _cleanup_free_ char *cpus = pp->has_cpus ? cpuset_to_string(&pp->cpus) : NULL;
                        log_struct(
                                LOG_INFO, 0, name, 0, NULL, cpus, "Policy %s: CPUs %s", name,
                                pp->has_cpus ? strna(cpus) : "unchanged (no cpus:)");
                }
                if (pp->policy->match.cmdline_re && !regex_set_linear(pp->policy->match.cmdline_re))
                        log_struct(
                                LOG_WARNING, 0, name, 0, NULL, NULL,
                                "%swarning: policy %s: its cmdline: patterns are searched with "
                                "regexec(3), whose time grows faster than the command line: libhs (%s) "
                                "could not be loaded, or this CPU can't run it",
                                location_prefix(&pp->policy->location, where, sizeof(where)), name,
                                HS_SONAME);
                for (size_t k = 0; pp->warnings && pp->warnings[k]; k++)
                        log_struct(
                                LOG_WARNING, 0, name, 0, NULL, NULL, "%swarning: policy %s: %s",
                                location_prefix(
                                        pp->warning_locations ? pp->warning_locations[k]
                                                              : &pp->policy->location,
                                        where, sizeof(where)),
                                name, pp->warnings[k]);
        }
}

/* Loads the configuration and makes a plan against t. Diagnostics go to *diag. */
static int manager_load(
        Manager *m, const Topology *t, Config **ret_config, Plan **ret_plan, Diagnostics *diag) {
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        int r;

        r = config_load(m->config_dir, &config, diag);
        if (r < 0)
                return r;
        manager_kubelet_configure(m, config); /* its path may have changed */
        r = manager_plan(m, config, t, &plan);
        if (r < 0)
                return r;
        *ret_config = TAKE_PTR(config);
        *ret_plan = TAKE_PTR(plan);
        return 0;
}

/* The machine's topology from hwloc: the XML file of --topology= when given (tests, planning for
 * another machine), else this machine's. Returns 0 and *ret, or topology_load_*()'s negative
 * errno. */
int manager_load_topology(Manager *m, Topology **ret) {
        if (m->topology_path)
                return topology_load_xml(m->topology_path, ret);
        return topology_load_live(ret);
}

typedef struct RemapContext {
        Manager *m;
        const Plan *old_plan;
        const Plan *new_plan;
        bool keep_pending;
} RemapContext;

static void remap_action(const void *nodep, VISIT which, void *userdata) {
        TrackedProcess *p = *(void *const *)nodep;
        const RemapContext *c = userdata;
        int k = -ENOENT;

        if (which != postorder && which != leaf)
                return;
        if (p->policy < c->old_plan->n_policies && c->old_plan->policies[p->policy].policy) {
                const char *name = c->old_plan->policies[p->policy].policy->name;
                const PolicyPlan *pp;

                k = plan_find_active(c->new_plan, name);
                pp = plan_find_policy(c->new_plan, name);
                if (k < 0 && c->keep_pending && pp)
                        k = (int)(pp - c->new_plan->policies);
                if (k < 0 && pp) {
                        /* Its slots moved to the pending policy of that name: give them back. */
                        p->policy = (size_t)(pp - c->new_plan->policies);
                        policy_spread_forget(c->m, p);
                }
        }
        p->policy = k >= 0 ? (size_t)k : POLICY_NONE;
}

/*
 * After a reload (or a CPU change) installed new_plan: points every tracked process at the
 * policy of the same name in it, or at POLICY_NONE when that policy is gone or pending (the
 * rescan that follows re-matches it, or restores and forgets it). With keep_pending (a CPU
 * change), a process whose policy became pending stays under it, and the rescan leaves it as
 * it is. Allocates nothing and cannot fail, so no index into the old configuration survives
 * it, whatever the rescan does after. old_plan (and the configuration it borrows from) must
 * still be alive.
 */
static void manager_remap_policies(
        Manager *m, const Plan *old_plan, const Plan *new_plan, bool keep_pending) {
        RemapContext c = {.m = m, .old_plan = old_plan, .new_plan = new_plan, .keep_pending = keep_pending};
        twalk_r(m->processes, remap_action, &c);
}

/*
 * The policy-wide spread slots for plan (parallel to plan->policies): those of the policy of the
 * same name in m's plan in force move over (m->policy_spreads is emptied of them), so a reload
 * or a CPU change moves no process off its slot; the others start empty. Returns the array
 * (plan->n_policies entries, at least one), or NULL on OOM.
 */
static PolicySpread *policy_spreads_carry(Manager *m, const Plan *plan) {
        PolicySpread *a = calloc(MAX(plan->n_policies, (size_t)1), sizeof(PolicySpread));

        if (!a)
                return NULL;
        for (size_t i = 0; m->plan && i < plan->n_policies; i++) {
                const char *name = plan->policies[i].policy ? plan->policies[i].policy->name : NULL;

                for (size_t j = 0; name && j < m->n_policy_spreads && j < m->plan->n_policies; j++)
                        if (m->plan->policies[j].policy && streq(m->plan->policies[j].policy->name, name)) {
                                a[i] = m->policy_spreads[j];
                                m->policy_spreads[j] = (PolicySpread){};
                                break;
                        }
        }
        return a;
}

/* Installs a new config + plan, and the per-policy report flags and spread slots sized for it. */
int manager_install(Manager *m, Config *config, Plan *plan) {
        bool *flags = calloc(MAX(config->n_policies, (size_t)1), sizeof(bool));
        PolicySpread *spreads = NULL;

        if (!flags)
                return -ENOMEM;
        spreads = policy_spreads_carry(m, plan);
        if (!spreads) {
                free(flags);
                return -ENOMEM;
        }
        free(m->narrowing_reported);
        m->narrowing_reported = flags;
        policy_spreads_free(m->policy_spreads, m->n_policy_spreads);
        m->policy_spreads = spreads;
        m->n_policy_spreads = plan->n_policies;
        pthread_rwlock_wrlock(&m->plan_lock); /* the worker matches against the old ones */
        m->plan_generation++;
        m->config = config;
        m->plan = plan;
        pthread_rwlock_unlock(&m->plan_lock);
        manager_update_proc_events(m);        /* before the rescan that follows */
        (void)drift_update(m->drift);         /* drift-interval may have changed */
        (void)cpu_audit_update(m->cpu_audit); /* effect-interval likewise */
        (void)effect_update(m->effect);       /* and for the effect sampler */
        if (m->irq_skew)
                (void)irq_skew_watch_update(m->irq_skew); /* and the skew check */
        if (m->units)
                unit_placement_new_plan(m->units);
        manager_update_kube_watch(m);
        return 0;
}

static char *strip_trailing_newlines(char *s) {
        size_t l = strlen(s);
        while (l > 0 && s[l - 1] == '\n')
                s[--l] = '\0';
        return s;
}

/*
 * What a configuration holds, for the "Loaded" and "Reloaded" lines: "3 policies (1 pending),
 * 1 irqs rule, 2 net rules from 4 files" — irqs: and net: rules named only when there are any,
 * as affinityctl validate counts them. Returns buf.
 */
const char *config_counts(const Config *c, size_t n_pending, char *buf, size_t size) {
        size_t n = strv_length(c->files);
        int k;

        k = snprintf(
                buf, size, "%zu polic%s (%zu pending)", c->n_policies, c->n_policies == 1 ? "y" : "ies",
                n_pending);
        if (c->n_irq_rules > 0 && k >= 0 && (size_t)k < size)
                k += snprintf(
                        buf + k, size - (size_t)k, ", %zu irqs rule%s", c->n_irq_rules,
                        c->n_irq_rules == 1 ? "" : "s");
        if (c->n_net_rules > 0 && k >= 0 && (size_t)k < size)
                k += snprintf(
                        buf + k, size - (size_t)k, ", %zu net rule%s", c->n_net_rules,
                        c->n_net_rules == 1 ? "" : "s");
        if (k >= 0 && (size_t)k < size)
                (void)snprintf(buf + k, size - (size_t)k, " from %zu file%s", n, n == 1 ? "" : "s");
        return buf;
}

int manager_reload(Manager *m, char **ret_error) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(topology_freep) Topology *topology = NULL;
        _cleanup_free_ char *text = NULL;
        Config *old_config;
        Plan *old_plan;
        int r;

        m->counters.reloads++;
        m->last_reload_usec = now_realtime_usec();
        /* State stays what it was during a reload (RELOADING=1 says it to the service manager) */
        (void)sd_notify(false, "RELOADING=1\nSTATUS=Reloading configuration");
        log_info("Reloading configuration");

        r = manager_load_topology(m, &topology);
        if (r < 0) {
                log_warning_errno(r, "Failed to reload the topology, keeping the previous one: %m");
                topology = NULL;
        }

        r = manager_load(m, topology ?: m->topology, &config, &plan, &diag);
        if (r < 0) {
                if (diagnostics_format(&diag, &text) < 0)
                        text = NULL;
                if (!text || text[0] == '\0') {
                        free(text);
                        if (asprintf(&text, "Failed to load the configuration: %s", strerror(-r)) < 0)
                                text = NULL;
                }
                if (text)
                        strip_trailing_newlines(text);
                log_struct_id(
                        LOG_ERR, 0, AFFINITYD_MESSAGE_RELOAD_FAILED, NULL, 0, NULL, NULL,
                        "Reload failed, keeping the previous configuration:\n%s", strna(text));
                free(m->last_reload_error);
                m->last_reload_error = strdup(text ?: "Reload failed");
                (void)manager_report_changed(m, "Reloads", "LastReloadError", "LastReloadUSec");
                manager_set_state(m, MANAGER_RUNNING); /* degraded: an older configuration is in force */
                (void)manager_report(m, reloaded, false, m->last_reload_error ?: "");
                manager_notify(m, "READY=1");
                if (ret_error)
                        *ret_error = TAKE_PTR(text);
                return r;
        }
        log_diagnostics(&diag, LOG_ERR);
        log_plan(m, plan);

        old_config = m->config;
        old_plan = m->plan;
        r = manager_install(m, config, plan);
        if (r < 0) {
                (void)free_and_strdup(&m->last_reload_error, "Out of memory");
                (void)manager_report_changed(m, "Reloads", "LastReloadError", "LastReloadUSec");
                manager_set_state(m, MANAGER_RUNNING);
                (void)manager_report(m, reloaded, false, "Out of memory");
                manager_notify(m, "READY=1");
                if (ret_error)
                        *ret_error = strdup("Out of memory");
                return log_error_errno(r, "Failed to reload: %m");
        }
        TAKE_PTR(config);
        TAKE_PTR(plan);
        if (topology) {
                /* old_plan's pending reasons are text; nothing borrows from the old topology. */
                topology_free(m->topology);
                m->topology = TAKE_PTR(topology);
        }

        /* Tracked processes still hold indexes into old_config: remap them while it is alive, in
         * a step that can't fail, before anything else can. */
        manager_remap_policies(m, old_plan, m->plan, false);
        plan_free(old_plan);
        config_free(old_config);
        (void)manager_rescan(m);
        unit_placement_flush(m->units); /* units no longer placed get their properties reset */
        manager_settle_units(m);
        (void)device_placement_apply(m->devices); /* IRQs and queues: placed, or restored */

        m->last_reload_error = mfree(m->last_reload_error);
        (void)manager_report_changed(
                m, "Reloads", "LastReloadError", "LastReloadUSec", "PolicyFiles", "Topology", "OnlineCPUs",
                "ReservedCPUs");
        manager_set_state(m, MANAGER_RUNNING);
        (void)manager_report(m, reloaded, true, "");
        manager_notify(m, "READY=1");
        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_RELOADED, NULL, 0, NULL, NULL,
                "Reloaded: %s; managing %" PRIu32 " processes",
                config_counts(m->config, plan_n_pending(m->plan), (char[256]){}, 256), m->n_processes);
        return 0;
}

/* ---- CPU hotplug ---- */

/* Names of the pending policies of plan, ", "-separated, newly allocated ("" when none); NULL on
 * OOM. */
static char *plan_pending_names(const Plan *plan) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        bool first = true;

        if (!f)
                return NULL;
        for (size_t i = 0; i < plan->n_policies; i++)
                if (plan->policies[i].pending_reason) {
                        fprintf(f, "%s%s", first ? "" : ", ", plan->policies[i].policy->name);
                        first = false;
                }
        if (fclose(f) < 0)
                return mfree(text);
        return text;
}

/*
 * Re-plans the configuration in force against topology (taken; NULL: the one in force) and the
 * kubelet's CPU manager checkpoint as last read, swaps the plan in as a reload does
 * (manager_remap_policies(), keeping the processes of policies that became pending as they
 * are), and re-places every tracked process, writing every thread: when a CPU goes offline the
 * kernel moves the threads that had only offline CPUs elsewhere by itself, and when it comes back
 * nothing gives them their CPUs back but this; when the kubelet hands a CPU to a pod, the
 * processes placed on it are moved off. Pending policies are retried: one that resolves again is
 * matched and placed by the rescan. Targets come from the plan, which holds online CPUs only, so
 * no empty mask is ever written (and the kernel refuses a mask with no online CPU). One info line
 * per re-plan, starting with why ("CPUs changed (online now: 0-3)").
 */
static int manager_replan(Manager *m, Topology *topology, const char *why) {
        _cleanup_(topology_freep) Topology *owned = topology;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *pending = NULL;
        Plan *old_plan;
        int r;

        if (!m->config)
                return 0;
        r = manager_plan(m, m->config, owned ?: m->topology, &plan);
        if (r < 0)
                return log_warning_errno(r, "%s: failed to re-plan, keeping the previous plan: %m", why);

        old_plan = m->plan;
        r = manager_install(m, m->config, plan);
        if (r < 0)
                return log_warning_errno(r, "%s: failed to re-plan, keeping the previous plan: %m", why);
        TAKE_PTR(plan);
        /* The same configuration: only the resolution changed. The old plan borrows the old
         * topology: free it first. */
        manager_remap_policies(m, old_plan, m->plan, true);
        plan_free(old_plan);
        if (owned) {
                topology_free(m->topology);
                m->topology = TAKE_PTR(owned);
        }

        pending = plan_pending_names(m->plan);
        log_info(
                "%s: re-planned %zu policies, %zu pending%s%s%s; re-placing %" PRIu32 " processes", why,
                m->plan->n_policies, plan_n_pending(m->plan), pending && *pending ? " (" : "",
                pending && *pending ? pending : "", pending && *pending ? ")" : "", m->n_processes);
        if (log_level_enabled(LOG_DEBUG))
                log_plan(m, m->plan);

        m->force_placement = true;
        r = manager_rescan(m);
        m->force_placement = false;
        (void)device_placement_apply(m->devices); /* IRQ and queue masks follow the new plan */
        (void)manager_report_changed(m, "Topology", "OnlineCPUs", "ReservedCPUs");
        manager_notify(m, NULL);
        return r;
}

/* The online CPUs changed: reloads the live topology and re-plans against it. */
static int manager_replan_topology(Manager *m) {
        _cleanup_(topology_freep) Topology *topology = NULL;
        _cleanup_free_ char *online = NULL, *why = NULL;
        int r;

        if (!m->config)
                return 0;
        r = topology_load_live(&topology);
        if (r < 0)
                return log_warning_errno(
                        r,
                        "Failed to reload the topology after a CPU change, keeping the previous plan: %m");
        online = cpuset_to_string(topology_online_cpus(topology));
        if (asprintf(&why, "CPUs changed (online now: %s)", strna(online)) < 0)
                why = NULL;
        return manager_replan(m, TAKE_PTR(topology), why ?: "CPUs changed");
}

static int on_hotplug_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void)manager_replan_topology(m);
        return 0;
}

/* Re-plans HOTPLUG_DEBOUNCE_USEC from now, so that a burst of CPU changes costs one re-plan;
 * changes during that time join the pending re-plan (it reads the state when it runs). */
static void manager_schedule_replan(Manager *m) {
        int enabled = SD_EVENT_OFF, r;

        if (m->hotplug_source && sd_event_source_get_enabled(m->hotplug_source, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return;
        if (!m->hotplug_source) {
                r = sd_event_add_time_relative(
                        m->event, &m->hotplug_source, CLOCK_MONOTONIC, HOTPLUG_DEBOUNCE_USEC,
                        10 * USEC_PER_MSEC, on_hotplug_timer, m);
                if (r >= 0)
                        (void)sd_event_source_set_description(m->hotplug_source, "cpu-hotplug-replan");
        } else {
                r = sd_event_source_set_time_relative(m->hotplug_source, HOTPLUG_DEBOUNCE_USEC);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->hotplug_source, SD_EVENT_ONESHOT);
        }
        if (r < 0) {
                log_warning_errno(r, "Failed to arm the re-plan timer, re-planning now: %m");
                (void)manager_replan_topology(m);
        }
}

static int on_cpu_uevent(UeventMonitor *monitor, const Uevent *ev, void *userdata) {
        Manager *m = userdata;
        int cpu = uevent_cpu_number(ev);

        if (cpu < 0 ||
            !(streq(ev->action, "online") || streq(ev->action, "offline") || streq(ev->action, "add") ||
              streq(ev->action, "remove")))
                return 0;
        log_debug("CPU %d: %s", cpu, ev->action);
        manager_schedule_replan(m);
        return 0;
}

static void on_uevent_lost(UeventMonitor *monitor, int error, void *userdata) {
        Manager *m = userdata;

        if (ratelimit_below(&m->uevent_ratelimit, NULL))
                log_warning_errno(
                        error,
                        "Kernel uevents may have been lost (%m), re-reading the topology in case CPUs "
                        "changed");
        manager_schedule_replan(m);
}

/*
 * Listens for CPU hotplug on the kernel's uevent socket (live topology only). Not fatal: without
 * it the daemon works on, but re-plans only on reload.
 */
void manager_start_uevents(Manager *m) {
        int r;

        if (m->topology_path)
                return;
        r = uevent_monitor_new(m->event, &m->uevent_monitor);
        if (r >= 0)
                r = uevent_monitor_subscribe(
                        m->uevent_monitor, "cpu", on_cpu_uevent, on_uevent_lost, m, &m->cpu_subscription);
        if (r < 0) {
                m->uevent_monitor = uevent_monitor_free(m->uevent_monitor);
                m->cpu_subscription = NULL;
                log_warning_errno(
                        r, "Cannot receive kernel uevents: %m. CPU hotplug will be noticed only on reload.");
        }
}

/* ---- the kubelet's CPU manager ---- */

/* The checkpoint changed on disk: read again; a change of its exclusive CPUs re-plans. */
static void on_kubelet_change(ConfigWatch *w, void *userdata) {
        Manager *m = userdata;

        if (manager_kubelet_read(m, m->kubelet_path, "; re-planning") > 0)
                (void)manager_replan(m, NULL, "The kubelet's CPU manager changed");
}

/*
 * At start and at each reload, before planning config: the kubelet's CPU manager checkpoint
 * config names (config_kubelet_cpu_manager_state()) is watched — its directory, for its name,
 * debounced like the configuration (CONFIG_WATCH_DELAY_USEC), a directory that doesn't exist yet
 * through its nearest ancestor — then read into m->kubelet (manager_kubelet_read()). A path that
 * is the same as before keeps its watch. Not fatal: without the watch, the file is read at
 * reload only (a warning says so).
 */
void manager_kubelet_configure(Manager *m, const Config *config) {
        const char *path = config_kubelet_cpu_manager_state(config);
        int r;

        if (!streq_ptr(path, m->kubelet_path)) {
                m->kubelet_watch = config_watch_free(m->kubelet_watch);
                if (free_and_strdup(&m->kubelet_path, path) < 0) {
                        log_warning_errno(-ENOMEM, "Failed to read the kubelet's CPU manager state: %m");
                        return;
                }
                if (path) {
                        r = config_watch_new(
                                m->event, (const char *const[]){path},
                                (const ConfigWatchKind[]){CONFIG_WATCH_FILE}, 1, CONFIG_WATCH_DELAY_USEC,
                                on_kubelet_change, m, &m->kubelet_watch);
                        if (r < 0)
                                log_warning_errno(
                                        r, "Failed to watch %s for changes (a reload reads it again): %m",
                                        path);
                }
        }
        (void)manager_kubelet_read(m, path, "");
}
