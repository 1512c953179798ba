/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The contexts the Manager gives device placement and the drift check: see manager-devices.h. */

#include <errno.h>
#include <search.h>
#include <stdlib.h>

#include "manager-devices.h"
#include "manager-internal.h"

/* DeviceContext.drift_detected and DriftContext.drift_detected: the DriftDetected signal. */
static void on_drift_detected(
        void *userdata, const char *kind, const char *target, const char *rule, const char *found,
        const char *action) {
        Manager *m = userdata;

        (void)manager_report(m, drift_detected, kind, target, rule, found, action);
}

int manager_devices_new(Manager *m, DevicePlacement **ret) {
        return device_placement_new(
                &(const DeviceContext){
                        .event = m->event,
                        .root = "/",
                        .state_dir = m->state_dir,
                        .dry_run = m->dry_run,
                        .listen = !m->topology_path,
                        .config = &m->config,
                        .plan = &m->plan,
                        .topology = &m->topology,
                        .plan_generation = &m->plan_generation,
                        .uevent_monitor = &m->uevent_monitor,
                        .drift_detected = on_drift_detected,
                        .userdata = m,
                },
                ret);
}

/* DriftContext.paused: a re-plan after a CPU change is due, or a rescan after lost events. */
static bool drift_paused(void *userdata) {
        Manager *m = userdata;
        int enabled = SD_EVENT_OFF;

        if (m->hotplug_source && sd_event_source_get_enabled(m->hotplug_source, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return true;
        return m->rescan_source != NULL;
}

/* The threads of a process into DriftThread views (size: its n_threads). */
typedef struct ThreadList {
        DriftThread *threads;
        size_t n, size;
} ThreadList;

static void collect_thread_action(const void *nodep, VISIT which, void *userdata) {
        const TrackedThread *t = *(TrackedThread *const *)nodep;
        ThreadList *l = userdata;

        /* postorder (between the children) and leaf visit each node once, in ascending order */
        if ((which != postorder && which != leaf) || l->n >= l->size)
                return;
        l->threads[l->n++] = (DriftThread){
                .tid = t->tid,
                .has_applied = t->has_applied,
                .applied = &t->applied,
                .expected = t->effective ?: &t->applied,
                .sched = t->sched && t->sched->has_applied ? &t->sched->applied : NULL,
        };
}

/* DriftContext.list_processes: the tracked processes whose policy plan is in force and not
 * pending. */
int manager_drift_list_processes(void *userdata, DriftProcess **ret, size_t *ret_n) {
        _cleanup_free_ TrackedProcess **processes = NULL;
        Manager *m = userdata;
        DriftProcess *l;
        size_t n = 0, k = 0;
        int r;

        r = manager_list_processes(m, &processes, &n);
        if (r < 0)
                return r;
        l = calloc(MAX(n, (size_t)1), sizeof(DriftProcess));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = processes[i];
                const PolicyPlan *pp = manager_process_plan(m, p);
                ThreadList tl = {.size = p->n_threads};

                if (!pp || pp->pending_reason)
                        continue;
                tl.threads = calloc(MAX(tl.size, (size_t)1), sizeof(DriftThread));
                if (!tl.threads) {
                        drift_processes_free(l, k);
                        return -ENOMEM;
                }
                twalk_r(p->threads, collect_thread_action, &tl);
                l[k++] = (DriftProcess){
                        .pid = p->pid,
                        .starttime = p->starttime,
                        .comm = p->comm,
                        .policy = pp->policy->name,
                        .cpus = pp->has_cpus ? &pp->cpus : NULL,
                        .on_drift = pp->policy->on_drift,
                        .threads = tl.threads,
                        .n_threads = tl.n,
                };
        }
        *ret = l;
        *ret_n = k;
        return 0;
}

/* DriftContext.release_process. */
static void drift_release_process(void *userdata, pid_t pid) {
        Manager *m = userdata;
        TrackedProcess *p = manager_find_process(m, pid);

        if (p)
                manager_release_process(m, p);
}

int manager_drift_new(Manager *m, Drift **ret) {
        return drift_new(
                &(const DriftContext){
                        .event = m->event,
                        .dry_run = m->dry_run,
                        .config = &m->config,
                        .n_processes = &m->n_processes,
                        .n_detected = &m->counters.drift_detected,
                        .n_corrected = &m->counters.drift_corrections,
                        .paused = drift_paused,
                        .list_processes = manager_drift_list_processes,
                        .release_process = drift_release_process,
                        .drift_detected = on_drift_detected,
                        .userdata = m,
                },
                ret);
}

int manager_effect_new(Manager *m, Effect **ret) {
        return effect_new(
                &(const EffectContext){
                        .event = m->event,
                        .config = &m->config,
                        .n_processes = &m->n_processes,
                        .root = NULL,
                        .list_processes = manager_drift_list_processes,
                        .userdata = m,
                },
                ret);
}
