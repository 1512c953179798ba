/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager: new/free/startup/run, its event sources, the bus connection and signals.
 * See manager.h and docs/architecture.md. */

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "device-placement.h"
#include "api-socket.h"
#include "config-watch.h"
#include "config.h"
#include "cpuset-watch.h"
#include "cpu-audit.h"
#include "drift.h"
#include "effect.h"
#include "irq-skew-watch.h"
#include "kube-watch.h"
#include "log.h"
#include "manager-bus.h"
#include "manager-devices.h"
#include "manager-originals.h"
#include "manager.h"
#include "plan.h"
#include "policy-bus.h"
#include "policy-yaml.h"
#include "settle-queue.h"
#include "unit-placement.h"
#include "util.h"
#include "manager-internal.h"

/* The /proc scan period in polling discovery: poll-interval: from affinityd.yaml, else the
 * option's (default 1 s). Read at every tick, so a reload changes it. */
static uint64_t manager_poll_interval(const Manager *m) {
        if (m->config && m->config->poll_interval_usec > 0)
                return m->config->poll_interval_usec;
        return m->poll_interval_usec;
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        /* Discovery, once a second: what is placed already is not read back each time. */
        m->polling_pass = true;
        (void)manager_rescan(m);
        m->polling_pass = false;
        r = sd_event_source_set_time_relative(s, manager_poll_interval(m));
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                log_error_errno(r, "Failed to re-arm the /proc polling timer, discovery stops: %m");
        return 0;
}

static int manager_start_discovery(Manager *m) {
        int r;

        r = proc_monitor_new(
                m->event, manager_proc_events(m->config), PROC_MONITOR_ACK_TIMEOUT_USEC, on_proc_event, m,
                &m->monitor);
        if (r >= 0) {
                size_t rcvbuf = 0;
                int force_error = 0;
                char names[64];

                m->discovery = MANAGER_DISCOVERY_NETLINK;
                proc_monitor_set_debug(m->monitor, log_get_max_level() >= LOG_DEBUG);
                log_debug(
                        "Subscribed to the proc connector: %s%s",
                        proc_events_format(proc_monitor_get_events(m->monitor), names, sizeof(names)),
                        proc_monitor_is_filtered(m->monitor)
                                ? ""
                                : " (the kernel sends every type: no filter before Linux 6.6)");
                /* The kernel reports twice what it granted (bookkeeping). */
                if (proc_monitor_get_receive_buffer(m->monitor, &rcvbuf, &force_error) >= 0 &&
                    force_error < 0 && rcvbuf / 2 < PROC_MONITOR_RCVBUF_SIZE)
                        log_warning_errno(
                                force_error,
                                "Could not set the proc connector's receive buffer to %d KiB "
                                "(SO_RCVBUFFORCE: %m); got %zu KiB, capped by net.core.rmem_max. "
                                "Bursts of process events may be lost (and cost /proc rescans).",
                                PROC_MONITOR_RCVBUF_SIZE / 1024, rcvbuf / 2 / 1024);
                return 0;
        }

        log_warning_errno(
                r,
                "Cannot use the proc connector (%s): %m. Falling back to scanning /proc every %" PRIu64
                " ms; new processes will be placed late.",
                r == -ETIMEDOUT                       ? "no acknowledgement: a non-initial PID namespace?"
                        : r == -EPERM || r == -EACCES ? "CAP_NET_ADMIN missing"
                                                      : "unavailable",
                manager_poll_interval(m) / 1000);
        m->discovery = MANAGER_DISCOVERY_POLLING;
        (void)manager_report_changed(m, "Discovery");
        if (m->state == MANAGER_RUNNING || m->state == MANAGER_DEGRADED)
                manager_set_state(m, MANAGER_RUNNING); /* → degraded */
        r = sd_event_add_time_relative(
                m->event, &m->poll_source, CLOCK_MONOTONIC, manager_poll_interval(m),
                manager_poll_interval(m) / 10, on_poll, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the /proc polling timer: %m");
        (void)sd_event_source_set_description(m->poll_source, "proc-poll");
        return 0;
}

/*
 * Losing the bus (dbus-daemon restarted or killed) leaves affinityd unreachable for queries
 * and reloads while it keeps placing. Say so and exit with a failure, so that the service
 * manager (Restart=on-failure) starts it again on the new bus, rather than running on
 * unseen.
 */
static int on_bus_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        log_error("Lost the connection to the bus, exiting so the service manager can restart affinityd");
        return sd_event_exit(m->event, -ENOTCONN);
}

static int manager_connect_bus(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (m->bus_address) {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to allocate a bus: %m");
                (void)sd_bus_set_description(bus, "affinityd-bus");
                r = sd_bus_set_address(bus, m->bus_address);
                if (r < 0)
                        return log_error_errno(r, "Invalid bus address \"%s\": %m", m->bus_address);
                r = sd_bus_set_bus_client(bus, true);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the bus connection: %m");
                r = sd_bus_start(bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to the bus at %s: %m", m->bus_address);
        } else if (m->bus_kind == MANAGER_BUS_SESSION) {
                r = sd_bus_open_user_with_description(&bus, "affinityd-bus");
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to the session bus: %m");
        } else {
                r = sd_bus_open_system_with_description(&bus, "affinityd-bus");
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to the system bus: %m");
        }

        r = sd_bus_add_object_vtable(
                bus, &m->bus_slot, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to register %s: %m", AFFINITYD_BUS_PATH);
        r = policy_bus_register(bus, m);
        if (r < 0)
                return log_error_errno(r, "Failed to register %s: %m", AFFINITYD_POLICY_PATH_PREFIX);
        r = sd_bus_attach_event(bus, m->event, AFFINITYD_BUS_EVENT_PRIORITY);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");

        /* sd-bus synthesizes this local signal when the connection drops. */
        r = sd_bus_match_signal(
                bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                "org.freedesktop.DBus.Local", "Disconnected", on_bus_disconnected, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for the bus disconnecting: %m");

        m->bus = TAKE_PTR(bus);
        m->report = &manager_bus_report;
        return 0;
}

static int manager_request_name(Manager *m) {
        int r;

        if (!m->bus)
                return 0;
        r = sd_bus_request_name(m->bus, AFFINITYD_BUS_NAME, 0);
        if (r == -EEXIST)
                return log_error_errno(
                        r, "The bus name %s is already owned: is affinityd running already?",
                        AFFINITYD_BUS_NAME);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire the bus name %s: %m", AFFINITYD_BUS_NAME);
        return 0;
}

/* restore-on-exit: every tracked process gets its originals back, its record dropped. */
static void manager_restore_all(Manager *m) {
        _cleanup_free_ TrackedProcess **processes = NULL;
        size_t n = 0;
        int r;

        r = manager_list_processes(m, &processes, &n);
        if (r < 0) {
                log_error_errno(r, "Failed to restore the managed processes: %m");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                restore_process(m, processes[i], process_policy_label(m, processes[i]));
                manager_originals_drop(m, processes[i]);
        }
        unit_placement_reset_all(m->units);
        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_RESTORED, NULL, 0, NULL, NULL,
                "restore-on-exit: gave %zu processes their original placement back", n);
        (void)device_placement_restore_all(m->devices);
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_STOPPED, NULL, 0, NULL, NULL, "Received %s, exiting",
                si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        manager_set_state(m, MANAGER_STOPPING);
        (void)sd_notify(false, "STOPPING=1\nSTATUS=Shutting down");
        if (m->config && m->config->restore_on_exit && !m->dry_run)
                manager_restore_all(m);
        return sd_event_exit(m->event, 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received SIGHUP");
        (void)manager_reload(m, NULL);
        return 0;
}

static int add_signal(
        Manager *m, sd_event_source **ret, int sig, sd_event_signal_handler_t handler,
        const char *description) {
        int r;

        r = sd_event_add_signal(m->event, ret, sig, handler, m);
        if (r < 0)
                return r;
        return sd_event_source_set_description(*ret, description);
}

/*
 * A share of the daemon's time for unprivileged users (lib/caller-budget.h): rate µs per second
 * per uid, twice that saved up, twice that per second for all of them (four times saved up), as
 * the bus's (manager-bus.h, BUS_BUDGET_*); $variable sets the per-uid rate in µs and the rest in
 * proportion (affinityd(8), ENVIRONMENT).
 */
static void share_budget_init(CallerBudget *b, const char *variable, uint64_t rate) {
        const char *e = getenv(variable);
        char *end;

        if (e) {
                unsigned long long v = strtoull(e, &end, 10);

                if (*e && !*end && v >= 1 && v <= 1000000)
                        rate = v;
                else
                        log_warning("Ignoring $%s=%s: not a number of µs from 1 to 1000000", variable, e);
        }
        caller_budget_init(
                b, rate, rate * BUS_BUDGET_BURST_USEC / BUS_BUDGET_RATE_USEC,
                rate * BUS_BUDGET_ALL_RATE_USEC / BUS_BUDGET_RATE_USEC,
                rate * BUS_BUDGET_ALL_BURST_USEC / BUS_BUDGET_RATE_USEC, now_monotonic_nsec() / 1000);
}

int manager_new(const ManagerOptions *o, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        sigset_t mask;
        int r;

        /*
         * hwloc dlopen()s every plugin it finds when the first topology is created, before our
         * component blacklist (lib/topology.c) applies: the OpenCL, GL (X11, xcb) and PCI
         * (libpciaccess) ones, and the libxml2 XML reader (libxml2, ICU, libstdc++). The daemon
         * uses none of them — I/O devices come from the core Linux backend, XML topologies
         * are read by hwloc's built-in parser — and they cost 2.8 MiB of RSS for as long as
         * the topology lives (docs/performance.md). hwloc reads this once, at its first
         * topology; an administrator's own setting wins.
         */
        (void)setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl,hwloc_opencl,hwloc_pci,hwloc_xml_libxml", 0);

        m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        m->self = getpid();
        pthread_rwlock_init(&m->plan_lock, NULL);
        share_budget_init(&m->bus_budget, "AFFINITYD_BUS_SHARE_USEC", BUS_BUDGET_RATE_USEC);
        share_budget_init(&m->match_budget, "AFFINITYD_MATCH_SHARE_USEC", MATCH_BUDGET_RATE_USEC);
        m->state = MANAGER_STARTING;
        m->dry_run = o->dry_run || o->topology_path;
        m->bus_kind = o->bus_kind;
        m->poll_interval_usec = o->poll_interval_usec ?: POLL_INTERVAL_DEFAULT_USEC;
        m->lost_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 3};
        m->failure_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 10};
        m->placed_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 100};
        m->event_ratelimit = (RateLimit){.interval_usec = 10 * USEC_PER_SEC, .burst = 5};
        m->monitor_ratelimit = (RateLimit){.interval_usec = 60 * USEC_PER_SEC, .burst = 1};
        m->uevent_ratelimit = (RateLimit){.interval_usec = 60 * USEC_PER_SEC, .burst = 3};
        latency_reset(&m->latency);
        r = kube_records_new(NULL, 0, NULL, NULL, &m->kube);
        if (r < 0)
                return r;
        if ((o->config_dir && !(m->config_dir = strdup(o->config_dir))) ||
            (o->topology_path && !(m->topology_path = strdup(o->topology_path))) ||
            (o->bus_address && !(m->bus_address = strdup(o->bus_address))) ||
            !(m->state_dir = strdup(o->state_dir ?: STATE_DIR_DEFAULT)))
                return -ENOMEM;
        m->watch_config = o->watch_config;
        if (o->api_socket && !(m->api_socket_path = strdup(o->api_socket)))
                return -ENOMEM;

        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        /* WATCHDOG=1 from the loop when the service manager asks for it ($WATCHDOG_USEC). */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return r;
        r = worker_new(m->event, "affinityd-work", MANAGER_WORKER_JOBS, &m->worker);
        if (r < 0)
                return r;
        r = manager_match_queue_new(m);
        if (r < 0)
                return r;
        r = manager_drift_new(m, &m->drift);
        if (r < 0)
                return r;
        r = manager_cpu_audit_new(m, &m->cpu_audit);
        if (r < 0)
                return r;
        r = manager_effect_new(m, &m->effect);
        if (r < 0)
                return r;
        r = manager_irq_skew_new(m, &m->irq_skew);
        if (r < 0)
                return r;
        r = unit_placement_new(o->systemd_bus_address, m->dry_run, &m->units);
        if (r < 0)
                return r;
        r = unit_placement_set_state_dir(m->units, m->state_dir);
        if (r < 0)
                return r;
        r = manager_devices_new(m, &m->devices);
        if (r < 0)
                return r;
        if (!m->dry_run) {
                r = cpuset_watch_new(m->event, 0, NULL, on_cpuset_change, m, &m->cpuset_watch);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_warning_errno(
                                r,
                                "Failed to watch cgroups for cpuset changes (drift-interval: still "
                                "finds what they do): %m");
        }

        /* sd_event_add_signal() needs the signals blocked. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;

        r = add_signal(m, &m->sigterm_source, SIGTERM, on_exit_signal, "signal-SIGTERM");
        if (r < 0)
                return r;
        r = add_signal(m, &m->sigint_source, SIGINT, on_exit_signal, "signal-SIGINT");
        if (r < 0)
                return r;
        r = add_signal(m, &m->sighup_source, SIGHUP, on_sighup, "signal-SIGHUP");
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;

        m->sigterm_source = sd_event_source_disable_unref(m->sigterm_source);
        m->sigint_source = sd_event_source_disable_unref(m->sigint_source);
        m->sighup_source = sd_event_source_disable_unref(m->sighup_source);
        m->poll_source = sd_event_source_disable_unref(m->poll_source);
        m->summary_source = sd_event_source_disable_unref(m->summary_source);
        m->rescan_source = sd_event_source_disable_unref(m->rescan_source);
        m->rescan_timer_source = sd_event_source_disable_unref(m->rescan_timer_source);
        m->monitor = proc_monitor_free(m->monitor);
        m->hotplug_source = sd_event_source_disable_unref(m->hotplug_source);
        m->bus_guard_source = sd_event_source_disable_unref(m->bus_guard_source);
        /* The worker first: it may be matching against the plan freed below. */
        m->worker = worker_free(m->worker);
        manager_match_queue_free(m);
        m->worker_scratch = regex_scratch_free(m->worker_scratch);
        m->kube_watch = kube_watch_free(m->kube_watch);
        m->kube = kube_records_free(m->kube);
        m->settle = settle_queue_free(m->settle);
        m->drift = drift_free(m->drift);
        m->cpu_audit = cpu_audit_free(m->cpu_audit);
        m->effect = effect_free(m->effect);
        m->irq_skew = irq_skew_watch_free(m->irq_skew);
        m->units = unit_placement_free(m->units);
        m->cpuset_watch = cpuset_watch_free(m->cpuset_watch);
        m->config_watch = config_watch_free(m->config_watch);
        m->kubelet_watch = config_watch_free(m->kubelet_watch);
        m->kubelet = kubelet_cpu_state_free(m->kubelet);
        m->kubelet_path = mfree(m->kubelet_path);
        /* Before the uevent monitor: it holds subscriptions to it. */
        m->devices = device_placement_free(m->devices);
        m->cpu_subscription = uevent_subscription_free(m->cpu_subscription);
        m->uevent_monitor = uevent_monitor_free(m->uevent_monitor);
        m->api_socket = api_socket_free(m->api_socket); /* its connections, before the objects go */
        free(m->api_socket_path);
        manager_bus_jobs_free(m);
        m->subscribers = sd_bus_track_unref(m->subscribers);
        m->bus_slot = sd_bus_slot_unref(m->bus_slot);
        m->bus = sd_bus_flush_close_unref(m->bus);

        tdestroy(m->processes, tracked_process_free_void);
        tdestroy(m->within_plans, process_within_free_void);
        m->policy_spreads = policy_spreads_free(m->policy_spreads, m->n_policy_spreads);
        m->processes = NULL;
        for (size_t i = 0; i < m->n_recovered; i++)
                state_process_done(&m->recovered[i]);
        free(m->recovered);
        debounce_done(&m->journal_flush);
        m->journal = state_journal_free(m->journal); /* writes the queued drops */
        free(m->state_dir);

        plan_free(m->plan);
        config_free(m->config);
        topology_free(m->topology);
        free(m->narrowing_reported);
        free(m->last_reload_error);
        free(m->config_dir);
        free(m->topology_path);
        free(m->bus_address);
        sd_event_unref(m->event);
        pthread_rwlock_destroy(&m->plan_lock);
        return mfree(m);
}

/* The configuration watch's handler: a reload, as for SIGHUP. */
static void on_config_change(ConfigWatch *w, void *userdata) {
        Manager *m = userdata;

        log_info("The configuration changed on disk: reloading");
        (void)manager_reload(m, NULL);
}

/* --watch-config: the directories config_load() reads (lib/policy-yaml.h) are watched. */
static void manager_start_config_watch(Manager *m) {
        _cleanup_free_ char *policy_dir = NULL, *real = NULL;
        const char *dirs[8];
        ConfigWatchKind kinds[8];
        size_t n = 0;
        int r;

        if (m->config_dir) {
                real = realpath(m->config_dir, NULL);
                if (!real) {
                        log_warning_errno(errno, "Failed to watch %s for changes: %m", m->config_dir);
                        return;
                }
                if (asprintf(&policy_dir, "%s/policy.d", real) < 0) {
                        log_warning_errno(-ENOMEM, "Failed to watch %s for changes: %m", m->config_dir);
                        return;
                }
                dirs[n] = real;
                kinds[n++] = CONFIG_WATCH_SETTINGS_DIR;
                dirs[n] = policy_dir;
                kinds[n++] = CONFIG_WATCH_POLICY_DIR;
        } else {
                dirs[n] = AFFINITYD_CONF_DIR;
                kinds[n++] = CONFIG_WATCH_SETTINGS_DIR;
                for (size_t i = 0; policy_dirs_default[i] && n < ELEMENTSOF(dirs); i++) {
                        dirs[n] = policy_dirs_default[i];
                        kinds[n++] = CONFIG_WATCH_POLICY_DIR;
                }
        }
        r = config_watch_new(
                m->event, dirs, kinds, n, CONFIG_WATCH_DELAY_USEC, on_config_change, m, &m->config_watch);
        if (r < 0)
                log_warning_errno(
                        r, "Failed to watch the configuration for changes (SIGHUP still reloads): %m");
        else
                log_debug("Watching the configuration's directories: a change reloads");
}

int manager_startup(Manager *m) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *summary = NULL;
        uint64_t begin = now_monotonic_nsec();
        int r;

        if (m->watch_config) /* before the load: a change made while it reads is not missed */
                manager_start_config_watch(m);
        r = config_load(m->config_dir, &config, &diag);
        log_diagnostics(&diag, LOG_ERR);
        if (r == -EINVAL)
                return log_error_errno(
                        r, "Configuration in %s is invalid (%u error%s), refusing to start",
                        m->config_dir ?: "the standard directories", diag.n_errors,
                        diag.n_errors == 1 ? "" : "s");
        if (r < 0)
                return log_error_errno(r, "Failed to load the configuration: %m");

        /* CPU changes from here on re-plan: none is missed between the topology load and the
         * subscription. */
        manager_start_uevents(m);
        /* Link and queue events too (the same uevent socket, and rtnetlink); the device originals
         * a previous instance recorded are read. */
        r = device_placement_start(m->devices);
        if (r < 0)
                return log_error_errno(r, "Failed to start device placement: %m");
        r = manager_load_topology(m, &m->topology);
        if (r < 0)
                return log_error_errno(
                        r, "Failed to load the topology%s%s: %m", m->topology_path ? " from " : "",
                        m->topology_path ?: "");
        if (topology_summary(m->topology, &summary) >= 0)
                log_info(
                        "Topology: %s%s%s", summary, m->topology_path ? " from " : "",
                        m->topology_path ?: "");

        /* Watched first, then read: a write of the kubelet's in between is not missed. */
        manager_kubelet_configure(m, config);
        r = manager_plan(m, config, m->topology, &plan);
        if (r < 0)
                return log_error_errno(r, "Failed to plan the configuration: %m");
        r = manager_install(m, config, plan);
        if (r < 0)
                return log_error_errno(r, "Failed to start: %m");
        TAKE_PTR(config);
        TAKE_PTR(plan);
        log_info(
                "Loaded %s%s", config_counts(m->config, plan_n_pending(m->plan), (char[256]){}, 256),
                m->dry_run ? "; dry run, writing nothing" : "");
        log_plan(m, m->plan);

        /* The name early, so a second instance stops before touching anything; calls wait in
         * the queue until the loop runs, and State says "starting" meanwhile. */
        if (m->bus_kind != MANAGER_BUS_NONE || m->bus_address) {
                r = manager_connect_bus(m);
                if (r < 0)
                        return r;
                r = manager_request_name(m);
                if (r < 0)
                        return r;
        }
        if (m->api_socket_path) {
                r = api_socket_new(m, m->api_socket_path, &m->api_socket);
                if (r == -EEXIST)
                        return log_error_errno(
                                r,
                                "%s exists and is not a socket of a daemon gone: is affinityd running "
                                "already?",
                                m->api_socket_path);
                if (r < 0)
                        return log_error_errno(r, "Failed to listen on %s: %m", m->api_socket_path);
                log_info("Serving the API peer to peer on %s", m->api_socket_path);
        }

        /* Subscribe first, then scan: nothing exec'd in between is missed. The originals a
         * previous instance persisted are read before the scan, which takes them over. */
        r = manager_start_discovery(m);
        if (r < 0)
                return r;
        r = manager_originals_recover(m);
        if (r < 0)
                return log_error_errno(r, "Failed to read the state directory: %m");
        r = manager_rescan(m);
        if (r < 0)
                return r;
        manager_originals_finish_recovery(m);
        /* READY=1 means placed: not before the kernel's resets that unit placements caused are
         * repaired. */
        manager_settle_units(m);
        r = device_placement_apply(m->devices);
        if (r < 0)
                return r;

        manager_set_state(m, MANAGER_RUNNING);
        manager_notify(m, "READY=1");
        log_struct_id(
                LOG_INFO, 0, AFFINITYD_MESSAGE_STARTED, NULL, 0, NULL, NULL,
                "Ready: %s %" PRIu64 " processes (%" PRIu64 " threads) in %" PRIu64 " ms; managing %" PRIu32
                " processes with %zu policies",
                m->dry_run ? "would place" : "placed", m->summary_processes, m->summary_threads,
                (now_monotonic_nsec() - begin) / (NSEC_PER_USEC * 1000), m->n_processes,
                m->config->n_policies);
        m->summary_processes = m->summary_threads = 0;
        return 0;
}

int manager_run(Manager *m) {
        return sd_event_loop(m->event);
}
