/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the files of the Manager's core share, and nothing outside the Manager uses. Calls go down
 * this list, never up (docs/architecture.md, "Who may call whom"):
 *   manager.c           new, free, startup, run: event sources, the bus connection, signals
 *   manager-config.c    load, reload, install the plan, re-plan after CPU hotplug and after the
 *                       kubelet's CPU manager changed (watching its checkpoint)
 *   manager-kubelet.c   reading the kubelet's CPU manager checkpoint; planning with it
 *   manager-events.c    the proc connector's events, deferred matches on the worker
 *   manager-kube.c      matching again the processes of a container the kubelet just named
 *   manager-rescan.c    the /proc rescan, verifying tracked processes
 *   manager-match.c     matching a PID, tracking a new process, forgetting a gone one
 *   process-spread.c    processes: spread: the slot of a process found running, pre-fork
 *                       masters, placing again when spread threads' CPUs change
 *   placement.c         writing a process's threads, and restoring them; the settle pass
 *   placement-sched.c   a thread's scheduler: state (class, priority, nice, I/O priority)
 *   manager-explain.c   Explain, and its baselines
 *   manager-originals.c persisted originals; removing a process from the table
 *   manager-status.c    state names, STATUS=, degraded reasons, latency, the summary
 *   tracked-process.c   the table
 * Each function is documented where it is defined. What is reported outside (D-Bus) goes through
 * manager_report*() below, never through the bus layer's functions.
 */

#include <search.h>

#include "cpuset-watch.h"
#include "manager.h"
#include "policy-yaml.h"
#include "procfs.h"

#define USEC_PER_SEC                  UINT64_C(1000000)
#define USEC_PER_MSEC                 UINT64_C(1000)
#define NSEC_PER_USEC                 UINT64_C(1000)
#define NSEC_PER_SEC                  UINT64_C(1000000000)
#define PROC_MONITOR_ACK_TIMEOUT_USEC (1 * USEC_PER_SEC)
#define POLL_INTERVAL_DEFAULT_USEC    (1 * USEC_PER_SEC)
#define SUMMARY_INTERVAL_USEC         (10 * USEC_PER_SEC)
#define BUS_GUARD_EVENTS              1024U /* on_bus_guard() */
#define BUS_GUARD_MESSAGES            8U
/* Command lines longer than this (bytes) are read and scanned off the event path. */
#define MATCH_CMDLINE_BUDGET (64U * 1024U)
/* A rescan after lost events waits until the socket's queue is read, but not longer than this. */
#define RESCAN_DELAY_MAX_USEC (100 * USEC_PER_MSEC)
/* --watch-config: a reload this long after the last change of a burst (ten times at most after
 * its first). */
#define CONFIG_WATCH_DELAY_USEC (200 * USEC_PER_MSEC)
/* A re-plan after a CPU change waits this long for the rest of a burst. */
#define HOTPLUG_DEBOUNCE_USEC (100 * USEC_PER_MSEC)

typedef bool (*thread_predicate_t)(const TrackedProcess *p, const TrackedThread *t);

typedef struct PlaceContext {
        Manager *manager;
        const char *policy_name; /* restore: the policy the process was under, for messages */
        TrackedProcess *process;
        bool force;         /* compare with the kernel's mask even where the target is what was
                             * applied last (write only if they differ) */
        bool verify;        /* where the target is what was applied last, ask the kernel: a mask
                             * equal to the cpuset's CPUs (a kernel reset, docs/cgroups.md) is
                             * written again; any other drift is left to the drift check */
        unsigned n_reset;   /* threads found on their cpuset's CPUs, and written again */
        bool refusal_new;   /* report_cpuset_conflict() reported a refusal not reported before */
        bool identify;      /* the TIDs come from events, not from a listing of /proc/PID/task:
                             * each is checked to be a thread of the process before any write */
        unsigned n_threads; /* threads seen */
        unsigned n_set;     /* threads whose affinity was written (or would be, dry run) */
        unsigned n_failed;  /* threads the kernel refused */
        int error;          /* the last refusal's negative errno (PlacementFailed), 0: none */
        char *error_text;   /* a better description of the refusal than the errno, or NULL */
        unsigned n_sched;   /* threads whose scheduling state was written */
        /* The cpuset of the process, read once per placement pass (place_context_cpuset()). */
        int cpuset_state; /* 0: not read yet; 1: cpuset_allowed holds it; -errno: none known */
        CpuSet cpuset_allowed;
        bool cpuset_conflict; /* the policy's CPUs and the cpuset are disjoint: reported, skipped */
        bool via_unit;        /* via: systemd is effective for the process's unit: threads whose
                               * target is the policy's set are left to the cgroup */
} PlaceContext;

/* tracked-process.c */
int cpuset_store_if_differs(CpuSet **slot, const CpuSet *value, const CpuSet *common);
const CpuSet *thread_original(const TrackedProcess *p, const TrackedThread *t);
const CpuSet *thread_effective(const TrackedThread *t);
int thread_set_applied(TrackedThread *t, const CpuSet *applied, const CpuSet *effective);
int tracked_process_add_thread(TrackedProcess *p, pid_t tid, TrackedThread **ret);
void process_spread_release(TrackedProcess *p, pid_t tid);
/* The policy-wide slots of p's policy (m->policy_spreads[p->policy]), NULL when p has no policy
 * in force. */
PolicySpread *manager_policy_spread(const Manager *m, const TrackedProcess *p);
/* Gives back the spread-over: policy slot thread tid of p holds, if any. */
void policy_spread_release_thread(Manager *m, const TrackedProcess *p, pid_t tid);
/* Gives back every policy-wide slot p holds (its processes: spread slot, its threads'
 * spread-over: policy slots): p leaves its policy, or is forgotten. */
void policy_spread_forget(Manager *m, TrackedProcess *p);
/* Moves p to policy (an index into m->plan, or POLICY_NONE), giving back its policy-wide slots
 * when that is another policy. */
void tracked_process_set_policy(Manager *m, TrackedProcess *p, size_t policy);
/* Frees the n entries of a (NULL accepted) and a; returns NULL. */
PolicySpread *policy_spreads_free(PolicySpread *a, size_t n);
void tracked_process_remove_thread(Manager *m, TrackedProcess *p, TrackedThread *t);
int tracked_process_remove_threads_if(Manager *m, TrackedProcess *p, thread_predicate_t pred);
bool thread_not_seen(const TrackedProcess *p, const TrackedThread *t);
bool thread_not_leader(const TrackedProcess *p, const TrackedThread *t);
CpusetRefusal *cpuset_refusal_free(CpusetRefusal *r);
/* Frees w and its plan. NULL accepted, returns NULL. */
ProcessWithin *process_within_free(ProcessWithin *w);
void process_within_free_void(void *w);
/* p's own plan in m->within_plans (made for its pid and start time), or NULL. */
ProcessWithin *manager_find_within(const Manager *m, const TrackedProcess *p);
/* Replaces p's own plan by w (taken, its pid and start time set; NULL: p has none now). Returns
 * 0, or -ENOMEM (w freed, p has none). */
int manager_set_within(Manager *m, const TrackedProcess *p, ProcessWithin *w);
TrackedProcess *tracked_process_free(TrackedProcess *p);
void tracked_process_free_void(void *p);
int manager_add_process(Manager *m, pid_t pid, uint64_t starttime, size_t policy, TrackedProcess **ret);
void tracked_process_remove(Manager *m, TrackedProcess *p);
const char *process_policy_label(const Manager *m, const TrackedProcess *p);

/* manager-originals.c (the rest of it: manager-originals.h) */
void manager_remove_process(Manager *m, TrackedProcess *p);

/* process-spread.c */
int process_spread_settle(Manager *m, TrackedProcess *p);
/*
 * processes: spread: parent forked child, a process of its policy (by a fork, or found as its
 * child in /proc): parent is a pre-fork master from now on, until it execs. It gives its slot
 * back — before child takes one, so that the first worker gets the first slot — and its threads
 * are placed again, on the policy's whole set. Nothing happens for a parent already a master,
 * of another policy, or of a policy without processes: spread. Returns 0 or -ENOMEM (the parent
 * may be gone from the table afterwards if it exited meanwhile: callers don't use it after).
 */
int process_spread_note_child(Manager *m, TrackedProcess *parent, const TrackedProcess *child);
/*
 * processes: spread: p, found running (the startup scan, a rescan, an exec), takes the lowest
 * free slot that stands for the one CPU it is on already, if it is on one of the policy's order
 * (sched_getaffinity(2) of its main thread): a restarted daemon gives each worker back the slot
 * it had, whatever order they are found in. Nothing otherwise (it takes the lowest free slot
 * when placed). Returns 0 or -ENOMEM.
 */
int process_spread_prefer_current(Manager *m, TrackedProcess *p);

/* placement.c */
void place_context_done(PlaceContext *ctx);
int process_spread_update(Manager *m, TrackedProcess *p);
int place_thread(PlaceContext *ctx, pid_t tid);
int place_process(Manager *m, TrackedProcess *p, bool force, uint64_t timestamp_ns, unsigned n_threads);
void manager_queue_settle(Manager *m, TrackedProcess *p);
void restore_process(Manager *m, TrackedProcess *p, const char *policy_name);

/* placement-sched.c */
int place_thread_sched(PlaceContext *ctx, TrackedThread *t, pid_t tid, const char *thread_comm);
void report_sched_failure(
        Manager *m, const TrackedProcess *p, const char *policy_name, pid_t tid, const ThreadSched *s,
        int error);

/* manager-explain.c */
unsigned manager_sample_baseline(TrackedProcess *p);

/* manager-match.c */
int manager_track_new(
        Manager *m, pid_t pid, uint64_t starttime, size_t policy, const char *comm, bool explicit_only,
        uint64_t timestamp_ns, unsigned n_threads, pid_t ppid);
int manager_match_pid(Manager *m, pid_t pid, bool explicit_only, char ret_comm[16]);
int manager_match_pid_stat(
        Manager *m, pid_t pid, bool explicit_only, const ProcfsStat *st, char ret_comm[16]);
void manager_forget_gone(Manager *m, TrackedProcess *p);

/* manager-events.c */
/* The match queue (m->match_queue, fair-queue.h) for matches that need the whole command line;
 * made after the worker, freed after it. Returns 0 or a negative errno. */
int manager_match_queue_new(Manager *m);
void manager_match_queue_free(Manager *m);
/* Matches pid again, as after a rename: tracked, placed or released as its policy now says.
 * Returns 0 or -ENOMEM. */
int manager_rematch_process(Manager *m, pid_t pid);
int on_proc_event(ProcMonitor *monitor, const ProcEvent *ev, void *userdata);
unsigned manager_proc_events(const Config *c);
/* The names of the event types in events ("FORK EXEC EXIT"), into buf of size bytes (truncated
 * to fit); returns buf. */
const char *proc_events_format(unsigned events, char *buf, size_t size);
void manager_update_proc_events(Manager *m);

/* manager-kube.c */
/* Watches the kubelet's container records while the configuration has pod:, namespace: or
 * container: keys; after each configuration installed. */
void manager_update_kube_watch(Manager *m);

/* manager-rescan.c */
int manager_rescan(Manager *m);
void on_cpuset_change(CpusetWatch *w, const char *dir, void *userdata);
void manager_settle_units(Manager *m);

/* manager-config.c */
void log_diagnostics(const Diagnostics *d, int error_level);
void log_plan(Manager *m, const Plan *plan);
int manager_load_topology(Manager *m, Topology **ret);
int manager_install(Manager *m, Config *config, Plan *plan);
const char *config_counts(const Config *c, size_t n_pending, char *buf, size_t size);
void manager_start_uevents(Manager *m);
void manager_kubelet_configure(Manager *m, const Config *config);

/* manager-kubelet.c */
int manager_kubelet_read(Manager *m, const char *path, const char *suffix);
int manager_plan(Manager *m, const Config *config, const Topology *t, Plan **ret);

/* manager-status.c */
void manager_set_state(Manager *m, ManagerState s);
void manager_notify(Manager *m, const char *extra);
void manager_record_latency(Manager *m, uint64_t timestamp_ns);
void manager_schedule_summary(Manager *m);

/* Reports through Manager.report (manager.h); nothing without a bus. */
#define manager_report_changed(m, ...) \
        ((m)->report ? (m)->report->changed((m), (char *[]){__VA_ARGS__, NULL}) : 0)
#define manager_report(m, what, ...)    ((m)->report ? (m)->report->what((m), __VA_ARGS__) : 0)
#define manager_report_events_wanted(m) ((m)->report && (m)->report->events_wanted(m))
