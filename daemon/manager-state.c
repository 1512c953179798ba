/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager's persisted originals, and forgetting a tracked process. See manager-state.h. */

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "apply-sched.h"
#include "log.h"
#include "manager-internal.h"
#include "manager-state.h"
#include "procfs.h"
#include "state.h"
#include "unit-placement.h"
#include "util.h"

typedef struct SaveContext {
        const TrackedProcess *process;
        StateProcess *state;
        int error;
} SaveContext;

static void save_thread_action(const void *nodep, VISIT which, void *userdata) {
        SaveContext *c = userdata;
        const TrackedProcess *p = c->process;
        const TrackedThread *t = *(TrackedThread *const *)nodep;
        bool own_affinity, own_sched;
        StateThread *st;
        int r;

        if ((which != postorder && which != leaf) || c->error < 0)
                return;
        own_affinity = t->has_original && t->original;
        own_sched = t->sched &&
                (!p->has_sched_original || !apply_sched_equal(&t->sched->original, &p->sched_original));
        if (!own_affinity && !own_sched)
                return; /* it has the process default */
        r = state_process_add_thread(c->state, t->tid, &st);
        if (r < 0) {
                c->error = r;
                return;
        }
        if (own_affinity) {
                r = cpuset_copy(&st->affinity, t->original);
                if (r < 0) {
                        c->error = r;
                        return;
                }
                st->has_affinity = true;
        }
        if (own_sched) {
                st->sched = t->sched->original;
                st->has_sched = true;
        }
}

static int state_from_process(const TrackedProcess *p, StateProcess *ret) {
        _cleanup_(state_process_done) StateProcess s = {.pid = p->pid, .starttime = p->starttime};
        SaveContext c = {.process = p, .state = &s};
        int r;

        if (p->has_original) {
                r = cpuset_copy(&s.affinity, &p->original);
                if (r < 0)
                        return r;
                s.has_affinity = true;
        }
        if (p->has_sched_original) {
                s.sched = p->sched_original;
                s.has_sched = true;
        }
        twalk_r(p->threads, save_thread_action, &c);
        if (c.error < 0)
                return c.error;
        if (p->refusal) {
                r = cpuset_copy(&s.refusal_wanted, &p->refusal->wanted);
                if (r >= 0)
                        r = cpuset_copy(&s.refusal_allowed, &p->refusal->allowed);
                if (r < 0)
                        return r;
                s.has_refusal = true;
        }
        *ret = s;
        s = (StateProcess){};
        return 0;
}

void manager_state_save(Manager *m, TrackedProcess *p) {
        _cleanup_(state_process_done) StateProcess s = {};
        int r;

        if (!p->state_dirty || m->dry_run || !m->state_dir)
                return;
        if (!p->has_original && !p->has_sched_original)
                return;
        r = state_from_process(p, &s);
        if (r >= 0)
                r = state_write(m->state_dir, &s);
        if (r < 0) {
                log_struct(
                        LOG_WARNING, r, NULL, p->pid, p->comm, NULL,
                        "Failed to persist the originals of %s[%d] under %s: %m (a restarted daemon "
                        "could not restore them)",
                        p->comm, (int)p->pid, m->state_dir);
                return;
        }
        p->state_dirty = false;
        p->state_saved = true;
}

void manager_state_drop(Manager *m, TrackedProcess *p) {
        int r;

        if (!p->state_saved || !m->state_dir)
                return;
        r = state_remove(m->state_dir, p->pid, p->starttime);
        if (r < 0)
                log_warning_errno(r, "Failed to remove the state file of %s[%d]: %m", p->comm, (int)p->pid);
        p->state_saved = false;
}

/* ---- recovery at startup ---- */

const StateProcess *manager_state_recovered(const Manager *m, const TrackedProcess *p) {
        for (size_t i = 0; i < m->n_recovered; i++)
                if (m->recovered[i].pid == p->pid && m->recovered[i].starttime == p->starttime)
                        return &m->recovered[i];
        return NULL;
}

typedef struct RestoreContext {
        const StateProcess *state;
        TrackedProcess *tracked; /* NULL: restore every thread; else only those it did not record */
        unsigned n_set;
        unsigned n_failed;
} RestoreContext;

static int recovered_thread_restore(pid_t pid, pid_t tid, void *userdata) {
        RestoreContext *c = userdata;
        const StateProcess *s = c->state;
        const StateThread *st = state_process_find_thread(s, tid);
        const TrackedThread *t = c->tracked ? tracked_process_thread(c->tracked, tid) : NULL;
        const CpuSet *affinity = NULL;
        const ThreadSched *sched = NULL;
        int r;

        if (st && st->has_affinity)
                affinity = &st->affinity;
        else if (s->has_affinity)
                affinity = &s->affinity;
        if (st && st->has_sched)
                sched = &st->sched;
        else if (s->has_sched)
                sched = &s->sched;
        if (c->tracked && t && t->has_original)
                affinity = NULL; /* recorded (from the file) and managed again */
        if (c->tracked && t && t->sched)
                sched = NULL;

        if (sched) {
                r = apply_set_thread_sched(NULL, tid, sched, NULL);
                if (r == -ESRCH)
                        return 0;
                if (r < 0)
                        c->n_failed++;
        }
        if (affinity) {
                r = apply_set_thread_affinity(tid, affinity, NULL);
                if (r == -ESRCH)
                        return 0;
                if (r < 0)
                        c->n_failed++;
                else
                        c->n_set++;
        }
        return 0;
}

int manager_state_recover(Manager *m) {
        _cleanup_free_ StateId *ids = NULL;
        size_t n = 0;
        int r;

        if (m->dry_run || !m->state_dir)
                return 0;
        if (m->units) {
                r = unit_placement_recover(m->units);
                if (r < 0)
                        return r;
        }
        r = state_list(m->state_dir, &ids, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning_errno(r, "Failed to read the state directory %s/processes: %m", m->state_dir);
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_(state_process_done) StateProcess s = {};
                _cleanup_free_ char *error = NULL;
                StateProcess *a;
                uint64_t starttime;

                r = procfs_read_starttime(NULL, ids[i].pid, &starttime);
                if (r < 0 || starttime != ids[i].starttime) {
                        log_debug(
                                "State file of process %d-%" PRIu64 ": the process is gone, removing it",
                                (int)ids[i].pid, ids[i].starttime);
                        (void)state_remove(m->state_dir, ids[i].pid, ids[i].starttime);
                        continue;
                }
                r = state_read(m->state_dir, ids[i].pid, ids[i].starttime, &s, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (error)
                                log_warning(
                                        "%s, ignoring and removing it: the originals of process %d are lost",
                                        error, (int)ids[i].pid);
                        else
                                log_warning_errno(
                                        r, "Failed to read the state file of process %d: %m",
                                        (int)ids[i].pid);
                        (void)state_remove(m->state_dir, ids[i].pid, ids[i].starttime);
                        continue;
                }
                a = reallocarray(m->recovered, m->n_recovered + 1, sizeof(StateProcess));
                if (!a)
                        return -ENOMEM;
                m->recovered = a;
                m->recovered[m->n_recovered++] = s;
                s = (StateProcess){};
        }
        if (m->n_recovered > 0)
                log_info(
                        "Read the originals of %zu processes placed by a previous instance from %s",
                        m->n_recovered, m->state_dir);
        return 0;
}

void manager_state_finish_recovery(Manager *m) {
        for (size_t i = 0; i < m->n_recovered; i++) {
                StateProcess *s = &m->recovered[i];
                TrackedProcess *p = manager_find_process(m, s->pid);
                RestoreContext c = {.state = s};
                int r;

                if (p && p->starttime != s->starttime)
                        p = NULL;
                if (p && !p->has_original && !p->has_sched_original)
                        p = NULL; /* tracked, but nothing recorded: the file has no owner */
                c.tracked = p;
                /* Still managed: give back only what the new placement did not take over (a
                 * policy that lost its scheduler: keys while the daemon was down). Not managed any
                 * more: give everything back. */
                r = procfs_foreach_thread(NULL, s->pid, recovered_thread_restore, &c);
                if (p) {
                        p->state_dirty = true;
                        manager_state_save(m, p); /* the file now says what this instance knows */
                        continue;
                }
                if (r < 0 && r != -ESRCH)
                        log_warning_errno(
                                r, "Failed to restore process %d from its state file: %m", (int)s->pid);
                else if (r >= 0) {
                        m->counters.restores++;
                        log_info(
                                "Process %d no longer matches a policy: restored the originals a previous "
                                "instance recorded (%u threads%s)",
                                (int)s->pid, c.n_set, c.n_failed > 0 ? ", some refused" : "");
                }
                (void)state_remove(m->state_dir, s->pid, s->starttime);
        }
        for (size_t i = 0; i < m->n_recovered; i++)
                state_process_done(&m->recovered[i]);
        m->recovered = mfree(m->recovered);
        /* Units a previous instance set that the first pass did not place get their originals. */
        if (m->units)
                unit_placement_flush(m->units);
        m->n_recovered = 0;
}

/* ---- removing a process ---- */

/* Stops tracking p: its state file is removed (nothing is left to give back after a crash)
 * and it leaves the table; p is freed. */
void manager_remove_process(Manager *m, TrackedProcess *p) {
        manager_state_drop(m, p);
        tracked_process_remove(m, p);
}
