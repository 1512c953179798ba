/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The Manager: affinityd's state and its event loop. It owns the loaded configuration, the
 * topology and the plan made from them, the table of tracked (managed) processes with what
 * was applied to each thread and what the thread had before, the counters and the
 * placement-latency histogram that D-Bus shows, and every event source: the proc connector
 * (or a /proc polling timer where it can't be used), signals, and the bus.
 *
 * The process lifecycle it implements (docs/architecture.md, "The process lifecycle"):
 * subscribe first, then scan /proc; place on exec; track children a managed process forks
 * without exec; place new threads; re-match on comm and uid changes; forget a process only
 * when no thread of it is left; rescan on lost events and on reload.
 *
 * Threads matching a `cpus: spread` rule hold a spread slot of their process (lib/spread.h):
 * one CPU each, released when the thread exits or stops matching; the process's other threads
 * get the policy's set without the CPUs handed out, and are written again when that changes.
 *
 * CPU hotplug (kernel uevents, daemon/uevent-monitor.h) re-plans the configuration in force
 * against the new topology, ~100 ms after the last change of a burst, and re-places every
 * tracked process, writing every thread again (the kernel moved threads off an offline CPU by
 * itself). A policy that a hotplug makes pending keeps its processes as they are, tracked but
 * untouched, until it resolves again (a reload, by contrast, restores them).
 *
 * scheduler: keys (the thread rule's over the policy's, key by key) are applied per thread next
 * to its affinity, its original state recorded at first touch and given back wherever the
 * affinity is. memory: with migrate moves a process's pages once per plan installed (and per
 * exec). A target is intersected with the process's cpuset (read once per placement pass):
 * none of it allowed is a per-process error, the mask left as it is.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "apply-sched.h"
#include "caller-budget.h"
#include "cpuset.h"
#include "debounce.h"
#include "kube.h"
#include "latency.h"
#include "log.h"
#include "worker.h"
#include "plan.h"
#include "policy.h"
#include "proc-monitor.h"
#include "regex-set.h"
#include "irq-skew.h"
#include "spread.h"
#include "topology.h"
#include "uevent-monitor.h"

typedef enum ManagerState {
        MANAGER_STARTING,
        MANAGER_RUNNING,
        MANAGER_DEGRADED, /* running, but the last reload failed or discovery fell back to polling */
        MANAGER_STOPPING,
        _MANAGER_STATE_MAX,
} ManagerState;

typedef enum ManagerBusKind {
        MANAGER_BUS_SYSTEM,
        MANAGER_BUS_SESSION,
        MANAGER_BUS_NONE,
        _MANAGER_BUS_KIND_MAX,
        _MANAGER_BUS_KIND_INVALID = -EINVAL,
} ManagerBusKind;

/* How processes are discovered: the proc connector, or periodic /proc scans without it. */
typedef enum ManagerDiscovery {
        MANAGER_DISCOVERY_NETLINK,
        MANAGER_DISCOVERY_POLLING,
        _MANAGER_DISCOVERY_MAX,
} ManagerDiscovery;

/* What the command line asks for; strings are borrowed for the duration of manager_new(). */
typedef struct ManagerOptions {
        const char *config_dir;          /* --config-dir, NULL for the standard search path */
        const char *topology_path;       /* --topology (hwloc XML), NULL for the live machine */
        const char *state_dir;           /* --state-dir: persisted originals, NULL for /run/affinityd */
        bool dry_run;                    /* --dry-run (implied by topology_path) */
        ManagerBusKind bus_kind;         /* --bus */
        const char *bus_address;         /* --bus-address, NULL for the default of bus_kind */
        uint64_t poll_interval_usec;     /* /proc rescan period when the proc connector fails; 0 = 1 s */
        const char *systemd_bus_address; /* --systemd-bus-address: systemd for via: systemd, NULL
                                          * for the system bus */
        bool watch_config;               /* --watch-config: reload when the configuration's files
                                          * change (daemon/config-watch.h) */
        const char *api_socket;          /* --api-socket: the API peer to peer on this unix socket
                                          * too (daemon/api-socket.h), NULL: not */
} ManagerOptions;

/*
 * The scheduler counters of a thread sampled shortly after its placement (lib/threadstat.h),
 * the baseline of Explain's "since placement" deltas. Migrations and involuntary switches keep
 * their low 32 bits (the deltas are taken modulo 2^32): 16 bytes, inline in every TrackedThread
 * (docs/performance.md).
 */
typedef struct ThreadBaseline {
        uint64_t run_delay_ns;  /* schedstat field 2, THREADSTAT_UNKNOWN when none */
        uint32_t nr_migrations; /* se.nr_migrations, low 32 bits */
        uint32_t nonvoluntary;  /* nonvoluntary_ctxt_switches, low 32 bits */
} ThreadBaseline;

/*
 * One thread of a tracked process, keyed by tid in TrackedProcess.threads (tsearch(3)). Only
 * what differs from the common case is stored apart (docs/performance.md): nearly every thread
 * had its process's original mask, and the kernel kept what was asked for.
 */
typedef struct TrackedThread {
        pid_t tid;           /* first: the tsearch key */
        unsigned generation; /* placement pass that last saw the thread (for pruning) */
        bool has_original;
        bool has_applied;
        bool has_baseline; /* baseline was sampled (by the deferred pass after its placement) */
        CpuSet applied;    /* what the daemon last asked for */
        CpuSet *original;  /* its affinity before the daemon first touched it, when that is not the
                            * process's original (TrackedProcess.original); NULL: it is */
        CpuSet *effective; /* what the kernel reported back (applied ∩ cpuset ∩ online), when
                            * that is not applied; NULL: it is */
        struct ThreadSchedState *sched; /* NULL until a scheduler: key touched the thread */
        ThreadBaseline baseline;        /* Explain's "since placement" counters, when has_baseline */
} TrackedThread;

/* The scheduling state of a thread a scheduler: key touched (TrackedThread.sched). */
typedef struct ThreadSchedState {
        ThreadSched original; /* before the daemon first touched it (or the process's original,
                               * for a thread that inherited a state the daemon set) */
        bool has_applied;
        ThreadSched applied; /* what the kernel reported back after the last write */
} ThreadSchedState;

/* TrackedProcess.policy of a process whose policy a reload removed (or made pending): it has
 * none until the rescan re-matches or restores it. */
#define POLICY_NONE SIZE_MAX

/* The spread slots of a process whose threads match a `cpus: spread` rule. */
typedef struct ProcessSpread {
        SpreadSlots slots; /* owners: the TIDs of its spread threads */
        CpuSet handed;     /* the CPUs the slots stood for when its other threads were last placed */
} ProcessSpread;

/*
 * The slots of one policy that spreads over its processes (processes: spread, or a thread rule
 * with spread-over: policy): Manager.policy_spreads, parallel to plan->policies. Kept across
 * reloads for the policy of the same name, so that a reload moves no process off its slot.
 */
typedef struct PolicySpread {
        SpreadSlots processes; /* owners: the PIDs of its processes that hold a slot */
        SpreadSlots threads;   /* owners: the TIDs of its spread-over: policy threads */
} PolicySpread;

/*
 * The plan of one process of a policy whose cpus: says within: cpuset: the policy's, narrowed to
 * what its cgroup allows (lib/plan.h: plan_narrow_to_cpuset()). Made at each placement pass
 * where the cgroup's CPUs, the policy or the plan changed (placement.c). Kept in
 * Manager.within_plans, keyed by pid, not in the TrackedProcess: every tracked process would
 * pay for the pointer (docs/performance.md).
 */
typedef struct ProcessWithin {
        pid_t pid;           /* first: the tsearch key */
        uint64_t starttime;  /* of the process it was made for */
        PolicyPlan plan;     /* owned; plan.policy may point into a configuration replaced since */
        CpuSet allowed;      /* the cgroup's CPUs it was made for */
        size_t policy;       /* the TrackedProcess.policy and ... */
        unsigned generation; /* ... the Manager.plan_generation it was made for */
} ProcessWithin;

/* A process that matched an active policy (or was forked by one), keyed by pid. */
typedef struct TrackedProcess {
        /* Field order keeps the struct at 168 bytes (one 6-byte hole, after the flags), a
         * 176-byte malloc chunk (docs/performance.md): one is tracked per managed process. Add
         * to it only what every process needs. */
        pid_t pid;          /* first: the tsearch key */
        pid_t parent;       /* forked: the managed parent's pid */
        uint64_t starttime; /* /proc/PID/stat field 22: with pid, the process identity */
        size_t policy;      /* index into Manager.config->policies / plan->policies, or POLICY_NONE;
                             * always bounds-checked before use */
        char comm[16];
        bool explicit_only; /* a kernel thread or the daemon itself: only rules naming its comm
                             * literally apply (match_process()) */
        bool forked;        /* forked by a managed process and has not exec'd since */
        bool placed;        /* a full placement pass completed (counted in processes_placed) */
        bool leader_exited; /* the leader exited (pthread_exit) while other threads live on */
        bool has_original;
        bool has_sched_original;
        bool settled;       /* its settle pass ran: cgroup watched (placement.c) */
        bool settle_queued; /* in Manager.settle */
        bool state_dirty;   /* originals recorded since its record was last written */
        bool state_saved;   /* the originals journal has a record of it (daemon/manager-originals.h) */
        bool spread_master; /* processes: spread: it forked processes of its policy (a pre-fork
                             * master), so it holds no slot; until it execs */
        CpuSet original;    /* first original seen: the default for threads created later */
        ThreadSched sched_original; /* first original scheduling state seen: the default for
                                     * threads created later (they inherit what was set) */
        unsigned memory_generation; /* Manager.plan_generation of the last page migration, 0: none
                                     * since the process was tracked or exec'd */
        unsigned n_threads;
        void *threads;                 /* tsearch(3) root of TrackedThread */
        unsigned generation;           /* placement pass counter (threads not seen in a pass are dropped) */
        int rescan_policy;             /* scratch for manager_rescan(): the policy decided, or -errno */
        ProcessSpread *spread;         /* NULL until one of its threads takes a spread slot */
        uint64_t identity_ns;          /* CLOCK_MONOTONIC ns, taken after starttime was read: an EXIT
                                        * event sent later is not about an earlier process with this PID */
        struct CpusetRefusal *refusal; /* its cgroup allows none of the policy's CPUs: what was
                                        * reported (once), NULL otherwise */
} TrackedProcess;

/* A process's cgroup allows none of its policy's CPUs: reported once per (wanted, allowed). */
typedef struct CpusetRefusal {
        CpuSet wanted;  /* the target refused */
        CpuSet allowed; /* what its cgroup's cpuset allowed then */
} CpusetRefusal;

/* At most this many processes wait for a match that needs their whole, long command line. */
#define MATCH_DEFERRED_MAX 256U
/* The share of the worker's time for those of one unprivileged uid: µs per second (manager-events.c). */
#define MATCH_BUDGET_RATE_USEC (10U * 1000U)
/* ... of them at most this many of one unprivileged uid (the real uid of the process). */
#define MATCH_DEFERRED_PER_UID 8U
/* Explain calls being answered at once, all callers (manager-bus-explain.c): each has at most one job on
 * the worker. */
#define EXPLAIN_JOBS_MAX 16U
/* The worker's jobs: room for both, so that neither waits for the other's slots. */
#define MANAGER_WORKER_JOBS (MATCH_DEFERRED_MAX + EXPLAIN_JOBS_MAX)

/* A match that waits for the whole command line (manager-events.c, MATCH_CMDLINE_BUDGET). */
typedef struct DeferredMatch {
        pid_t pid;
        uid_t uid; /* real uid: whose share of the worker's time it takes */
        bool exec;
        uint64_t starttime;
        uint64_t timestamp_ns;
} DeferredMatch;

typedef struct ManagerCounters {
        uint64_t events_received;
        uint64_t events_lost;        /* ENOBUFS on the proc connector */
        uint64_t rescans;            /* full /proc rescans after lost events */
        uint64_t processes_matched;  /* distinct processes that matched an active policy */
        uint64_t processes_placed;   /* of those, whose placement pass completed */
        uint64_t processes_vanished; /* of those, that exited before placement completed */
        uint64_t placement_failures; /* per-thread refusals other than the thread vanishing */
        uint64_t reloads;            /* reload requests handled (successful or not) */
        uint64_t drift_detected;     /* managed threads found changed by someone else (daemon/drift.h) */
        uint64_t drift_corrections;  /* of those, put back (on-drift: enforce) */
        uint64_t restores;          /* processes given their originals back (policy gone, restore-on-exit) */
        uint64_t matches_undecided; /* deferred matches dropped (queue full, or the uid's share of
                                     * the worker spent): see manager-events.c */
} ManagerCounters;

typedef struct Manager Manager;

/*
 * What the Manager reports as it happens: PropertiesChanged for the named properties (a
 * NULL-terminated list) and the org.affinityd1.Manager signals (docs/org.affinityd1.xml). The bus
 * layer provides it (daemon/manager-bus.h: manager_bus_report), and manager.c installs it when
 * the daemon connects to a bus; the rest of the daemon reports through manager_report*()
 * (manager-internal.h) and never calls the bus layer. Each report returns 0 or a negative
 * errno, which callers ignore.
 */
typedef struct ManagerReport {
        /* Whether the per-event reports (process_placed, placement_failed, drift_detected)
         * reach anyone: callers skip the work of making their text when not. */
        bool (*events_wanted)(Manager *m);
        int (*changed)(Manager *m, char **properties);
        int (*process_placed)(Manager *m, pid_t pid, const char *comm, const char *policy, const char *cpus);
        int (*placement_failed)(
                Manager *m, pid_t pid, const char *comm, const char *policy, const char *error);
        int (*reloaded)(Manager *m, bool success, const char *error);
        /* An IRQ or NET_RX softirq skew episode began (daemon/irq-skew-watch.h). */
        int (*irq_skew)(Manager *m, const IrqSkewFinding *f);
        int (*drift_detected)(
                Manager *m, const char *kind, const char *target, const char *policy, const char *found,
                const char *action);
        int (*cpu_intrusion)(
                Manager *m, const char *policy, unsigned cpu, const char *kind, uint64_t usec,
                uint64_t count, const char *who);
} ManagerReport;

struct Manager {
        const ManagerReport *report; /* NULL: nothing reported (no bus) */
        sd_event *event;
        sd_event_source *sigterm_source;
        sd_event_source *sigint_source;
        sd_event_source *sighup_source;
        sd_event_source *poll_source;         /* armed only in polling discovery */
        sd_event_source *summary_source;      /* armed only while a placement summary is due */
        sd_event_source *rescan_source;       /* pending rescan after lost events: once the queue is read */
        sd_event_source *rescan_timer_source; /* ... or RESCAN_DELAY_MAX_USEC later at the latest */
        sd_event_source *hotplug_source;      /* armed while a re-plan after a CPU change is due */
        sd_bus *bus;
        sd_bus_slot *bus_slot;
        ProcMonitor *monitor;
        UeventMonitor *uevent_monitor; /* NULL with --topology= or when uevents can't be had */
        UeventSubscription *cpu_subscription;
        struct Drift *drift; /* the drift re-check (daemon/drift.h), NULL until manager_new() made it */
        struct CpuAudit *cpu_audit; /* the isolation audit (daemon/cpu-audit.h), likewise */
        /* the effect sampler (daemon/effect.h), NULL until manager_new() made it */
        struct Effect *effect;
        struct UnitPlacement *units;      /* via: systemd (daemon/unit-placement.h) */
        struct CpusetWatch *cpuset_watch; /* cgroups of managed processes (daemon/cpuset-watch.h) */
        struct DevicePlacement *devices;  /* irqs: and net: rules (daemon/device-placement.h) */
        struct IrqSkewWatch *irq_skew;    /* the IRQ/softirq skew check (daemon/irq-skew-watch.h) */
        struct ConfigWatch *config_watch; /* --watch-config (daemon/config-watch.h), NULL: off */
        /* The kubelet's CPU manager checkpoint (daemon/manager-kubelet.c): what it holds as last
         * read (NULL: nothing, no such file, or kubelet-cpu-manager-state: none), the path read
         * and watched (NULL: none), and the watch of its directory. */
        struct KubeletCpuState *kubelet;
        char *kubelet_path;
        struct ConfigWatch *kubelet_watch;
        bool watch_config;
        char *api_socket_path;        /* --api-socket, NULL: none */
        struct ApiSocket *api_socket; /* serving it (daemon/api-socket.h) */

        /* Options. */
        char *config_dir;
        char *topology_path;
        bool dry_run;
        ManagerBusKind bus_kind;
        char *bus_address;
        uint64_t poll_interval_usec;
        char *state_dir;                /* persisted originals (lib/state.h); NULL: none */
        struct StateJournal *journal;   /* STATE_DIR/originals (lib/state-journal.h), opened at first use */
        size_t n_state_saved;           /* tracked processes with a record there (state_saved) */
        Debounce journal_flush;         /* writes queued "drop" records at most 1 s after the first */
        struct StateProcess *recovered; /* read at startup, sorted by PID; consumed by the first scan */
        size_t n_recovered;
        bool recovered_legacy; /* STATE_DIR/processes (from before the journal) had files */
        bool recovery_rewrite; /* the journal had records: rewritten after the first scan */

        /* Configuration in force. */
        Config *config;
        Topology *topology;
        Plan *plan;
        bool force_placement; /* manager_rescan() writes every thread, not only changed targets */
        bool polling_pass;    /* a /proc polling pass: placed threads are not read back */
        /* Matches that need a long command line, decided on the worker's thread (manager-events.c,
         * worker.h); the worker also reads /proc for Explain (manager-bus-explain.c). */
        size_t cmdline_budget;         /* ProcessFacts.cmdline_budget for the match at hand */
        struct FairQueue *match_queue; /* DeferredMatch jobs: waiting, or on the worker */
        Worker *worker;
        RegexScratch *worker_scratch; /* the worker thread's (regex_set_search_with()) */
        /* The kubelet's records under /var/log, for pod:, namespace: and container: (kube.h):
         * ProcessFacts.kube of every match, on the loop's thread and the worker's (it locks). */
        KubeRecords *kube;
        /* tsearch(3) root of ProcessWithin, by pid: the own plans of the processes of within:
         * cpuset policies (placement.c) */
        void *within_plans;
        /* Parallel to plan->policies (n_policy_spreads entries): the slots of the policies that
         * spread over their processes (placement.c); zeroed entries for the others. */
        PolicySpread *policy_spreads;
        size_t n_policy_spreads;
        /* While a policy has pod:, namespace: or container:: new container records
         * (manager-kube.c), NULL otherwise. */
        struct KubeWatch *kube_watch;
        /* Held by the worker while it matches against config and plan; taken for writing by the
         * loop's thread only to install new ones (manager_install()): the loop's thread reads
         * them without it, as it is the only writer. */
        pthread_rwlock_t plan_lock;
        /* Unprivileged D-Bus callers' share of the loop's time, and the Explain calls being
         * answered in steps (manager-bus-explain.c). */
        CallerBudget bus_budget;
        CallerBudget match_budget;         /* unprivileged uids' share of the worker's matching time */
        struct FairQueue *explain_queue;   /* Explain calls being answered (manager-bus-explain.c) */
        struct BusCallers *bus_callers;    /* senders' credentials by unique name */
        sd_bus_track *subscribers;         /* Subscribe()d connections (manager-bus.c) */
        sd_event_source *bus_guard_source; /* a bus message every 1024 events (manager-events.c) */
        unsigned events_since_bus_guard;
        bool *narrowing_reported; /* per policy: kernel narrowing already reported at info */
        unsigned plan_generation; /* bumped by every plan installed (memory: migrates again; a
                                   * worker's match against an older one is done again) */

        /* Tracked processes. */
        void *processes; /* tsearch(3) root of TrackedProcess */
        uint32_t n_processes;
        pid_t self;

        ManagerState state;
        ManagerDiscovery discovery;
        char *last_reload_error;    /* NULL (shown as "") when the last reload succeeded */
        uint64_t last_reload_usec;  /* CLOCK_REALTIME µs of the last reload attempt, 0: none */
        struct SettleQueue *settle; /* processes placed, due for their settle pass (placement.c);
                                     * made at the first */
        ManagerCounters counters;
        LatencyHistogram latency; /* event timestamp → last thread set, ns */

        /* Rate-limited info summary of placements. */
        uint64_t summary_processes;
        uint64_t summary_threads;
        RateLimit failure_ratelimit;
        RateLimit placed_ratelimit; /* per-placement info lines (the summary counts the rest) */
        RateLimit lost_ratelimit;
        RateLimit event_ratelimit;   /* failures handling a process event */
        RateLimit monitor_ratelimit; /* proc connector receive errors */
        RateLimit uevent_ratelimit;  /* lost kernel uevents */
};

/*
 * Creates a Manager: an sd_event loop with SIGTERM/SIGINT (exit) and SIGHUP (reload)
 * sources (the signals are blocked in the calling thread first). Loads nothing yet.
 * Returns 0 and *ret, -ENOMEM, or -errno from sd-event.
 */
int manager_new(const ManagerOptions *o, Manager **ret);

/* Tears everything down (sources, bus, monitor, table). Accepts NULL, returns NULL. */
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/*
 * Everything up to READY=1: loads the configuration (errors logged, each diagnostic on its
 * own line), the topology and the plan; connects the bus (unless MANAGER_BUS_NONE) and
 * takes the name org.affinityd1 (-EEXIST if another instance has it); opens the proc
 * connector (falling back to /proc polling, loudly, when it can't); scans /proc and places
 * every matching process; notifies READY=1.
 * Returns 0; -EINVAL on a bad configuration; other -errno (already logged).
 */
int manager_startup(Manager *m);

/* Runs the event loop until SIGTERM/SIGINT. Returns the loop's exit code (0) or -errno. */
int manager_run(Manager *m);

/*
 * Loads a new configuration and plan; on success swaps them in and rescans /proc (re-place
 * tracked processes, place newly matching ones, restore the originals of those that no
 * longer match); on failure keeps everything as it was and stores the diagnostics text in
 * last_reload_error. Sends RELOADING=1 … READY=1. Returns 0, or -EINVAL with the diagnostics
 * ("file:line:column: error: …" lines) in *ret_error (may be NULL; newly allocated), or another
 * -errno with its description there.
 */
int manager_reload(Manager *m, char **ret_error);

/*
 * The tracked processes in ascending PID order, as a newly allocated array of borrowed
 * pointers (valid until the loop runs again). Returns 0 or -ENOMEM.
 */
int manager_list_processes(Manager *m, TrackedProcess ***ret, size_t *ret_n);

/*
 * Stops managing p (on-drift: respect): forgets it without restoring anything, so its threads
 * keep what they have now. p is freed. Its pid and start time are remembered by daemon/drift.h,
 * so no rescan takes it back until it execs.
 */
void manager_release_process(Manager *m, TrackedProcess *p);

/* Union of the effective masks the kernel reported for the process's threads into *ret. */
int tracked_process_cpus(const TrackedProcess *p, CpuSet *ret);

/* The name of the policy p is tracked under. */
const char *manager_process_policy_name(const Manager *m, const TrackedProcess *p);

/* Placement latency quantile q (0..1) in µs, from the histogram. */
uint64_t manager_latency_usec(const Manager *m, double q);

/* "starting", "running", "degraded", "stopping" (the D-Bus State property), NULL if invalid. */
const char *manager_state_to_string(ManagerState s);
/*
 * Why the state is degraded: human lines (NULL-terminated, newly allocated; an empty vector when
 * it is not). Returns 0 or -ENOMEM.
 */
int manager_degraded_reasons(const Manager *m, char ***ret);

/*
 * A full /proc rescan (re-match every process, place new matches, restore those that no longer
 * match) followed by a device pass (IRQs and queues), as Rescan() does. Returns 0, -EOPNOTSUPP
 * with --topology= (nothing of this machine is managed), or -errno of the rescan.
 */
int manager_rescan_all(Manager *m);

/*
 * Looks up the tracked process pid, NULL if it isn't tracked. The thread of tid within it
 * through tracked_process_thread() (NULL if unknown).
 */
TrackedProcess *manager_find_process(Manager *m, pid_t pid);
TrackedThread *tracked_process_thread(TrackedProcess *p, pid_t tid);

/* The process's policy plan in force, or NULL (no policy, or index out of range): its own plan
 * (Manager.within_plans) when its policy says within: cpuset and that plan is current, else
 * the policy's. */
const PolicyPlan *manager_process_plan(const Manager *m, const TrackedProcess *p);

/* "netlink" or "polling" (the D-Bus Discovery property), NULL if invalid. */
const char *manager_discovery_to_string(ManagerDiscovery d);
/* "system", "session", "none" → ManagerBusKind, or -EINVAL. */
ManagerBusKind manager_bus_kind_from_string(const char *s);
