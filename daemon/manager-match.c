/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which processes are managed: matching a PID against the plan (lib/match.c), starting to track
 * one, and forgetting one. Called by the event handlers (manager-events.c) and the rescan
 * (manager-rescan.c) alike. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "log.h"
#include "manager-internal.h"
#include "match.h"
#include "plan.h"
#include "procfs.h"
#include "util.h"

/* See manager.h. */
void manager_release_process(Manager *m, TrackedProcess *p) {
        manager_remove_process(m, p);
}

/* Forgets a process that is gone; if its placement never completed, it counts as vanished. */
void manager_forget_gone(Manager *m, TrackedProcess *p) {
        if (!p->placed)
                m->counters.processes_vanished++;
        manager_remove_process(m, p);
}

/*
 * True if the process whose /proc/PID/stat is st has exited: its leader is a zombie (or dead)
 * and no other thread is left. sched_setaffinity(2) succeeds on a zombie, so without this an
 * exited process would count as placed. A leader that called pthread_exit() is a zombie too
 * while the other threads live on: that process is alive. The stat line says both: a zombie
 * leader counts itself in num_threads until it is reaped, and every other thread leaves the
 * count when it exits (before its EXIT event is sent), so num_threads > 1 means some other
 * thread lives. No /proc/PID/task listing needed.
 */
bool process_is_dead(pid_t pid, const ProcfsStat *st) {
        if (st->state != 'Z' && st->state != 'X' && st->state != 'x')
                return false;
        return st->n_threads <= 1;
}

/*
 * The policy pid matches (match_process(), explicit_only as it says), reading only the facts the
 * policies need; st, if not NULL, is its /proc/PID/stat read just before, whose comm is used
 * instead of reading /proc/PID/comm again. When it matched and ret_comm is non-NULL, its comm
 * goes there ("" if it could not be read). Returns a policy index, -ENOENT, -ESRCH (gone),
 * -ENOMEM.
 */
int manager_match_pid_stat(
        Manager *m, pid_t pid, bool explicit_only, const ProcfsStat *st, char ret_comm[16]) {
        ProcessFacts facts;
        int k;

        process_facts_init(&facts, NULL, pid);
        facts.cmdline_budget = m->cmdline_budget;
        facts.kube = m->kube;
        if (st) {
                memcpy(facts.comm, st->comm, sizeof(facts.comm));
                facts.loaded |= FACT_COMM;
        }
        k = match_process(m->plan, &facts, explicit_only);
        if (k >= 0 && ret_comm) {
                if (process_facts_load(&facts, FACT_COMM) >= 0 && (facts.loaded & FACT_COMM))
                        memcpy(ret_comm, facts.comm, sizeof(facts.comm));
                else
                        ret_comm[0] = '\0';
        }
        process_facts_done(&facts);
        return k;
}

/* manager_match_pid_stat() without a /proc/PID/stat read at hand. */
int manager_match_pid(Manager *m, pid_t pid, bool explicit_only, char ret_comm[16]) {
        return manager_match_pid_stat(m, pid, explicit_only, NULL, ret_comm);
}

/* Starts tracking pid under policy and places it. Counts it as matched. comm may be NULL or "".
 * n_threads as for place_process(). ppid: its parent (0: not known); a tracked parent of the
 * same policy is its pre-fork master (process_spread_note_child()). */
int manager_track_new(
        Manager *m, pid_t pid, uint64_t starttime, size_t policy, const char *comm, bool explicit_only,
        uint64_t timestamp_ns, unsigned n_threads, pid_t ppid) {
        TrackedProcess *p, *parent;
        int r;

        if (drift_is_released(m->drift, pid, starttime))
                return 0; /* on-drift: respect let it go until it execs */
        r = manager_add_process(m, pid, starttime, policy, &p);
        if (r < 0)
                return log_debug_errno(r, "Failed to track process %d: %m", (int)pid);
        if (comm && comm[0]) {
                size_t l = strnlen(comm, sizeof(p->comm) - 1);

                memcpy(p->comm, comm, l);
                p->comm[l] = '\0';
        } else
                (void)procfs_read_comm(NULL, pid, 0, p->comm);
        p->explicit_only = explicit_only;
        m->counters.processes_matched++;
        /* A child of a process of its policy (a pre-fork server found running, or one that
         * execs its workers): the parent is its master. */
        parent = ppid > 0 ? manager_find_process(m, ppid) : NULL;
        if (parent && parent->starttime <= starttime) {
                r = process_spread_note_child(m, parent, p);
                if (r < 0)
                        return r;
        }
        r = process_spread_prefer_current(m, p);
        if (r < 0)
                return r;
        return place_process(m, p, false, timestamp_ns, n_threads);
}

/*
 * True if a task with starttime (clock ticks since boot, /proc/PID/stat field 22) started no
 * later than the event sent at event_ns (CLOCK_MONOTONIC ns, the proc connector's timestamp).
 * The start time is CLOCK_BOOTTIME rounded down to a tick: a task the event is about always
 * passes; one that started later (a reused PID) fails unless it started within the same tick.
 * An event_ns of 0 (no event) passes.
 */
bool started_before(uint64_t starttime, uint64_t event_ns) {
        static uint64_t tick_ns;
        struct timespec boot, mono;
        uint64_t offset;

        if (event_ns == 0)
                return true;
        if (tick_ns == 0) {
                long hz = sysconf(_SC_CLK_TCK);
                tick_ns = NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100);
        }
        if (clock_gettime(CLOCK_BOOTTIME, &boot) < 0 || clock_gettime(CLOCK_MONOTONIC, &mono) < 0)
                return true;
        offset = (uint64_t)boot.tv_sec * NSEC_PER_SEC + (uint64_t)boot.tv_nsec -
                ((uint64_t)mono.tv_sec * NSEC_PER_SEC + (uint64_t)mono.tv_nsec);
        return starttime * tick_ns <= event_ns + offset;
}

/*
 * True for a child that systemd (PID 1, or a "systemd" user manager) forked to start a unit and
 * that has not exec'd yet: systemd names it "(BINARY)" and moves it into the unit's cgroup,
 * sets its user and so on before the exec. It is placed by its exec, not before (a unit: match
 * would place it twice). Reads the parent's comm and both executables only for a "(…" comm.
 */
bool is_service_manager_child(pid_t pid, const ProcfsStat *st) {
        _cleanup_free_ char *exe = NULL, *parent_exe = NULL;
        char parent[16] = "";
        const char *base;
        ProcfsStat again;
        uint64_t now;

        if (st->comm[0] != '(' || st->ppid <= 0)
                return false;
        if (st->ppid != 1 && (procfs_read_comm(NULL, st->ppid, 0, parent) < 0 || !streq(parent, "systemd")))
                return false;
        /* Not exec'd yet: it still runs its parent's program (or systemd 255's executor). A
         * process that calls itself "(…" and was reparented to PID 1 runs its own. */
        if (procfs_read_exe(NULL, pid, &exe) < 0 || procfs_read_exe(NULL, st->ppid, &parent_exe) < 0)
                return false;
        base = strrchr(exe, '/');
        if (streq(exe, parent_exe) || streq(base ? base + 1 : exe, "systemd-executor"))
                return true;
        /* Another program: a daemon calling itself "(…", or the child is exec'ing (execve(2)
         * replaces the program before the comm): then its EXEC event follows this one. A child
         * is seconds old at most; such a daemon is older. */
        if (procfs_read_stat(NULL, pid, 0, &again) >= 0 && again.comm[0] != '(')
                return true;
        now = now_monotonic_nsec();
        return now <= SERVICE_CHILD_AGE_MAX_NSEC ||
                !started_before(st->starttime, now - SERVICE_CHILD_AGE_MAX_NSEC);
}
