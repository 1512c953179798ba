/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc rescan: adopts processes that events did not bring (startup, lost events, polling,
 * reload) and verifies tracked ones against what the kernel reports now. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-event.h>

#include "cpuset-watch.h"
#include "device-placement.h"
#include "log.h"
#include "manager.h"
#include "plan.h"
#include "procfs.h"
#include "unit-placement.h"
#include "manager-internal.h"

/* ---- scans ---- */

/* A process a scan found that the daemon does not track. */
typedef struct ScanCandidate {
        pid_t pid;
        ProcfsStat stat;
} ScanCandidate;

/* By start time (then PID): parents come before their children, whatever PID wrapping did. */
static int scan_candidate_compare(const void *a, const void *b) {
        const ScanCandidate *x = a, *y = b;

        if (x->stat.starttime != y->stat.starttime)
                return x->stat.starttime < y->stat.starttime ? -1 : 1;
        return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * A process a scan found that matches no policy itself, but whose parent is tracked: most
 * likely a worker a tracked server forked without exec (nginx, postgres), started while the
 * daemon was not running or was losing events, which may have renamed itself so that it no
 * longer matches by comm. A FORK event would have put it under its parent's policy until it
 * execs; the scan does the same, if it has not exec'd since the fork. The kernel keeps no
 * such flag: the heuristic is that a child that has not exec'd runs its parent's executable
 * (/proc/PID/exe names the same file). A child that exec'd its parent's binary again can't be
 * told apart and is adopted too (it would usually match by comm itself anyway); one whose
 * exe can't be read is not adopted. Returns 1 (adopted), 0 (not), -ENOMEM.
 */
static int manager_adopt_child(Manager *m, pid_t pid, const ProcfsStat *st) {
        _cleanup_free_ char *exe = NULL, *parent_exe = NULL;
        TrackedProcess *parent, *p;
        int r;

        parent = manager_find_process(m, st->ppid);
        if (!parent || parent->explicit_only || !manager_process_plan(m, parent) ||
            manager_process_plan(m, parent)->pending_reason || parent->starttime > st->starttime)
                return 0;

        r = procfs_read_exe(NULL, pid, &exe);
        if (r >= 0)
                r = procfs_read_exe(NULL, parent->pid, &parent_exe);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !streq(exe, parent_exe))
                return 0;

        r = manager_add_process(m, pid, st->starttime, parent->policy, &p);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        m->counters.processes_matched++;
        p->forked = true;
        p->parent = parent->pid;
        memcpy(p->comm, parent->comm, sizeof(p->comm));
        (void)procfs_read_comm(NULL, pid, 0, p->comm);
        /* As for a FORK event: a thread whose mask is what the daemon gave the parent inherited
         * it, and gets the parent's original (thread_record_original()). */
        if (parent->has_original) {
                r = cpuset_copy(&p->original, &parent->original);
                if (r < 0)
                        return r;
                p->has_original = true;
        }
        if (parent->has_sched_original) {
                p->sched_original = parent->sched_original;
                p->has_sched_original = true;
        }

        log_debug(
                "%s[%d] is a child of %s[%d] that has not exec'd: tracked under policy %s", p->comm,
                (int)p->pid, parent->comm, (int)parent->pid, manager_process_policy_name(m, p));
        r = process_spread_note_child(m, parent, p); /* a pre-fork master gives its slot up */
        if (r >= 0)
                r = process_spread_prefer_current(m, p); /* and a worker keeps its CPU */
        if (r < 0)
                return r;
        r = place_process(m, p, false, 0, st->n_threads);
        return r == -ENOMEM ? r : 1;
}

/*
 * Rescans /proc: tracked processes that are gone are forgotten; the others are re-matched
 * (children forked without exec follow their parent, or keep their policy when the parent is
 * gone) and placed again where their target changed, or restored and forgotten when nothing
 * matches any more; processes not tracked that match are tracked and placed, and so are
 * children of tracked processes that have not exec'd (manager_adopt_child()). Threads whose
 * target differs from what was applied are written; the others are read back (except in a
 * polling pass): one the kernel reset to its cpuset's CPUs is written again, one that moved
 * itself (or was moved) after placement is left alone unless its policy says on-drift: enforce.
 */
int manager_rescan(Manager *m) {
        _cleanup_free_ TrackedProcess **list = NULL;
        _cleanup_free_ ScanCandidate *candidates = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, n_pids = 0, n_candidates = 0;
        bool progress;
        int r;

        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to rescan: %m");

        /* Forget what is gone; re-match the processes that matched by themselves. */
        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];
                ProcfsStat st;

                r = procfs_read_stat(NULL, p->pid, 0, &st);
                if (r == -ESRCH || (r >= 0 && (st.starttime != p->starttime || procfs_stat_is_dead(&st)))) {
                        manager_forget_gone(m, p);
                        list[i] = NULL;
                        continue;
                }
                if (manager_process_plan(m, p) && manager_process_plan(m, p)->pending_reason) {
                        /* Kept as it is by a CPU change that made its policy pending
                         * (manager_replan_topology()), until the policy resolves again. */
                        p->rescan_policy = (int)p->policy;
                        continue;
                }
                p->rescan_policy = p->forked ? -EAGAIN /* decided below */
                                             : manager_match_pid(m, p->pid, p->explicit_only, NULL);
        }

        /* Forked children follow their parent (a chain resolves parent first); with the parent
         * gone they keep their policy if it is still active, else they match by themselves. */
        do {
                progress = false;
                for (size_t i = 0; i < n; i++) {
                        TrackedProcess *p = list[i], *parent;

                        if (!p || p->rescan_policy != -EAGAIN)
                                continue;
                        parent = manager_find_process(m, p->parent);
                        if (parent && parent->rescan_policy == -EAGAIN)
                                continue; /* not decided yet */
                        if (parent && (parent->rescan_policy >= 0 || parent->rescan_policy == -ENOENT))
                                p->rescan_policy = parent->rescan_policy;
                        else if (manager_process_plan(m, p) && !manager_process_plan(m, p)->pending_reason)
                                p->rescan_policy = (int)p->policy;
                        else
                                p->rescan_policy = manager_match_pid(m, p->pid, p->explicit_only, NULL);
                        progress = true;
                }
        } while (progress);

        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];

                if (!p)
                        continue;
                if (p->rescan_policy == -EAGAIN) { /* a cycle through reused PIDs: match by itself */
                        p->rescan_policy = manager_match_pid(m, p->pid, p->explicit_only, NULL);
                        p->forked = false;
                }
                if (p->rescan_policy == -ESRCH) { /* exited meanwhile */
                        manager_forget_gone(m, p);
                        continue;
                }
                if (p->rescan_policy < 0) {
                        const char *name = process_policy_label(m, p);

                        restore_process(m, p, name);
                        log_struct(
                                LOG_DEBUG, 0, name, p->pid, p->comm, NULL,
                                "%s[%d] no longer matches policy %s, forgotten", p->comm, (int)p->pid, name);
                        manager_remove_process(m, p);
                        continue;
                }
                tracked_process_set_policy(m, p, (size_t)p->rescan_policy);
                (void)procfs_read_comm(NULL, p->pid, 0, p->comm); /* an exec may have been missed */
                (void)place_process(m, p, m->force_placement, 0, 0);
        }

        /* Processes not tracked: one read of /proc/PID/stat each gives identity, parent,
         * kernel-thread flag and zombie state; then, parents before children, match them or
         * adopt them as children of tracked processes. */
        r = procfs_list_pids(NULL, &pids, &n_pids);
        if (r < 0)
                return log_error_errno(r, "Failed to list /proc: %m");
        candidates = calloc(MAX(n_pids, (size_t)1), sizeof(ScanCandidate));
        if (!candidates)
                return log_error_errno(-ENOMEM, "Failed to rescan: %m");
        for (size_t i = 0; i < n_pids; i++) {
                ScanCandidate *c = &candidates[n_candidates];

                if (manager_find_process(m, pids[i]))
                        continue;
                c->pid = pids[i];
                if (procfs_read_stat(NULL, c->pid, 0, &c->stat) < 0 || procfs_stat_is_dead(&c->stat))
                        continue; /* gone, or exited and not reaped yet */
                if (procfs_is_service_manager_child(NULL, c->pid, &c->stat))
                        continue; /* placed by its exec */
                n_candidates++;
        }
        qsort(candidates, n_candidates, sizeof(ScanCandidate), scan_candidate_compare);

        for (size_t i = 0; i < n_candidates; i++) {
                const ScanCandidate *c = &candidates[i];
                bool explicit_only = c->pid == m->self || (c->stat.flags & PROCFS_PF_KTHREAD);
                char comm[16] = "";
                int k;

                k = manager_match_pid_stat(m, c->pid, explicit_only, &c->stat, comm);
                if (k >= 0)
                        r = manager_track_new(
                                m, c->pid, c->stat.starttime, (size_t)k, comm, explicit_only, 0,
                                c->stat.n_threads, c->stat.ppid);
                else if (k == -ENOENT && !explicit_only)
                        r = manager_adopt_child(m, c->pid, &c->stat);
                else
                        r = k;
                if (r == -ENOMEM)
                        return log_error_errno(r, "Failed to rescan: %m");
        }
        return 0;
}

/*
 * Asks the kernel about every managed thread (place_process() with verify) and writes again
 * those it reset to their cgroup's CPUs — on cgroup v1, and on v2 before Linux 6.2, it does
 * that to every task of a cgroup whose cpuset changes (docs/cgroups.md) — and those that drifted
 * under on-drift: enforce. why says what prompted it, for the debug log.
 */
static void manager_verify_all(Manager *m, const char *why) {
        _cleanup_free_ TrackedProcess **list = NULL;
        size_t n = 0;
        int enabled = SD_EVENT_OFF;

        if (m->dry_run || m->n_processes == 0)
                return;
        /* A re-plan after a CPU change is due: it writes every thread anyway. */
        if (m->hotplug_source && sd_event_source_get_enabled(m->hotplug_source, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return;
        if (manager_list_processes(m, &list, &n) < 0)
                return (void)log_warning_errno(-ENOMEM, "Failed to check managed threads after %s: %m", why);
        log_debug("Checking %zu managed processes against the kernel after %s", n, why);
        for (size_t i = 0; i < n; i++) {
                TrackedProcess *p = list[i];

                if (!manager_process_plan(m, p) || manager_process_plan(m, p)->pending_reason)
                        continue;
                (void)place_process(m, p, false, 0, 0);
        }
}

/* The cgroup watch's handler (cpuset_watch_handler_t, userdata the Manager): after a burst of
 * cpuset writes, every tracked process is checked against what the kernel reports now. */
void on_cpuset_change(CpusetWatch *w, const char *dir, void *userdata) {
        Manager *m = userdata;
        _cleanup_free_ char *why = NULL;

        if (asprintf(&why, "a cpuset change in %s", dir) < 0)
                why = NULL;
        manager_verify_all(m, why ?: "a cpuset change");
}

/* After systemd changed units' AllowedCPUs= (via: systemd, set or reset): the kernel has reset
 * the threads of those cgroups already, before the D-Bus call returned. */
void manager_settle_units(Manager *m) {
        if (m->units && unit_placement_take_changed(m->units))
                manager_verify_all(m, "changing units' AllowedCPUs=");
}

/* See manager.h: the Rescan method. */
int manager_rescan_all(Manager *m) {
        int r;

        if (m->topology_path)
                return -EOPNOTSUPP;
        m->counters.rescans++;
        r = manager_rescan(m);
        if (r < 0)
                return r;
        manager_settle_units(m);
        r = device_placement_apply(m->devices);
        manager_notify(m, NULL);
        return r;
}
