/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager's state as others see it: the state and discovery names, sd_notify(3) STATUS=,
 * the degraded reasons, placement latency and the periodic summary. Reports changes through
 * Manager.report (daemon/manager-bus.c turns them into D-Bus signals). */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "manager-internal.h"
#include "plan.h"
#include "util.h"

static const char *const state_table[_MANAGER_STATE_MAX] = {
        [MANAGER_STARTING] = "starting",
        [MANAGER_RUNNING] = "running",
        [MANAGER_DEGRADED] = "degraded",
        [MANAGER_STOPPING] = "stopping",
};

static const char *const discovery_table[_MANAGER_DISCOVERY_MAX] = {
        [MANAGER_DISCOVERY_NETLINK] = "netlink",
        [MANAGER_DISCOVERY_POLLING] = "polling",
};

static const char *const bus_kind_table[_MANAGER_BUS_KIND_MAX] = {
        [MANAGER_BUS_SYSTEM] = "system",
        [MANAGER_BUS_SESSION] = "session",
        [MANAGER_BUS_NONE] = "none",
};

const char *manager_state_to_string(ManagerState s) {
        if (s < 0 || s >= _MANAGER_STATE_MAX)
                return NULL;
        return state_table[s];
}

const char *manager_discovery_to_string(ManagerDiscovery d) {
        if (d < 0 || d >= _MANAGER_DISCOVERY_MAX)
                return NULL;
        return discovery_table[d];
}

ManagerBusKind manager_bus_kind_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(bus_kind_table); i++)
                if (streq(s, bus_kind_table[i]))
                        return (ManagerBusKind)i;
        return _MANAGER_BUS_KIND_INVALID;
}

uint64_t manager_latency_usec(const Manager *m, double q) {
        uint64_t ns = q >= 1.0 ? m->latency.max_ns : latency_quantile(&m->latency, q);
        /* Round up, so a recorded placement never reads as 0 µs. */
        return (ns + NSEC_PER_USEC - 1) / NSEC_PER_USEC;
}

int manager_degraded_reasons(const Manager *m, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        if (m->last_reload_error) {
                r = strv_extendf(&l, "the last reload failed; the previous configuration is in force");
                if (r < 0)
                        return r;
        }
        if (m->discovery == MANAGER_DISCOVERY_POLLING) {
                r = strv_extendf(
                        &l,
                        "process discovery fell back to polling /proc (the proc connector is unavailable)");
                if (r < 0)
                        return r;
        }
        if (!l && !(l = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

/*
 * Enters state s; MANAGER_RUNNING becomes MANAGER_DEGRADED while manager_degraded_reasons() has
 * any. Emits PropertiesChanged for State and DegradedReasons (the reasons may change while the
 * state does not: a failed reload while polling).
 */
void manager_set_state(Manager *m, ManagerState s) {
        if (s == MANAGER_RUNNING && (m->last_reload_error || m->discovery == MANAGER_DISCOVERY_POLLING))
                s = MANAGER_DEGRADED;
        if (m->state != s)
                log_debug("State %s → %s", manager_state_to_string(m->state), manager_state_to_string(s));
        m->state = s;
        (void)manager_report_changed(m, "State", "DegradedReasons");
}

/* sd_notify(3) with the current STATUS= line, plus extra assignments (may be NULL). */
void manager_notify(Manager *m, const char *extra) {
        size_t n_policies = m->plan ? m->plan->n_policies : 0;

        (void)sd_notifyf(
                false, "%s%sSTATUS=Managing %" PRIu32 " processes with %zu policies (%zu pending)%s",
                extra ?: "", extra ? "\n" : "", m->n_processes, n_policies, plan_n_pending(m->plan),
                m->discovery == MANAGER_DISCOVERY_POLLING ? ", polling /proc" : "");
}

/* Records in the latency histogram the time from timestamp_ns (an event's CLOCK_MONOTONIC
 * timestamp from the proc connector, in ns; 0: none, as for scans) to now. */
void manager_record_latency(Manager *m, uint64_t timestamp_ns) {
        uint64_t now = now_monotonic_nsec();

        if (timestamp_ns > 0 && now >= timestamp_ns)
                latency_record(&m->latency, now - timestamp_ns);
}

/* ---- the periodic summary ---- */

static int on_summary(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->summary_processes > 0)
                log_info(
                        "%s %" PRIu64 " processes (%" PRIu64 " threads) in the last %" PRIu64
                        " s; managing %" PRIu32 " processes",
                        m->dry_run ? "Would have placed" : "Placed", m->summary_processes,
                        m->summary_threads, SUMMARY_INTERVAL_USEC / USEC_PER_SEC, m->n_processes);
        m->summary_processes = m->summary_threads = 0;
        manager_notify(m, NULL);
        return 0;
}

/* Arms the one-shot summary timer, once per interval and only when something was placed. */
void manager_schedule_summary(Manager *m) {
        int enabled = SD_EVENT_OFF, r;

        if (m->state == MANAGER_STARTING)
                return; /* the startup scan is summarised by manager_startup() */
        if (!m->summary_source) {
                r = sd_event_add_time_relative(
                        m->event, &m->summary_source, CLOCK_MONOTONIC, SUMMARY_INTERVAL_USEC, USEC_PER_SEC,
                        on_summary, m);
                if (r < 0)
                        return (void)log_debug_errno(r, "Failed to arm the summary timer: %m");
                (void)sd_event_source_set_description(m->summary_source, "placement-summary");
                return;
        }
        if (sd_event_source_get_enabled(m->summary_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(m->summary_source, SUMMARY_INTERVAL_USEC) >= 0)
                (void)sd_event_source_set_enabled(m->summary_source, SD_EVENT_ONESHOT);
}
