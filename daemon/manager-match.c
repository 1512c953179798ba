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
