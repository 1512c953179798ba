/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager's persisted originals, and forgetting a tracked process. See manager-originals.h. */

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply-sched.h"
#include "log.h"
#include "manager-internal.h"
#include "manager-originals.h"
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

/* The originals journal, opened at first use (the state directory is created then). */
static int journal(Manager *m, StateJournal **ret) {
        int r;

        if (!m->journal) {
                r = state_journal_open(m->state_dir, &m->journal);
                if (r < 0)
                        return r;
        }
        *ret = m->journal;
        return 0;
}

/* Every tracked process with a record, as records: what a rewrite of the journal holds. */
typedef struct CompactContext {
        Manager *manager;
        StateProcess *records;
        size_t n;
        int error;
} CompactContext;

static void compact_action(const void *nodep, VISIT which, void *userdata) {
        CompactContext *c = userdata;
        TrackedProcess *p = *(TrackedProcess *const *)nodep;
        int r;

        if ((which != postorder && which != leaf) || c->error < 0 || !p->state_saved)
                return;
        if (c->n >= c->manager->n_state_saved) {
                c->error = -EINVAL; /* the count is off: better keep the file as it is */
                return;
        }
        r = state_from_process(p, &c->records[c->n]);
        if (r < 0) {
                c->error = r;
                return;
        }
        c->n++;
}

/* Rewrites the journal with the records of the tracked processes only. */
static int journal_compact(Manager *m) {
        CompactContext c = {.manager = m};
        int r;

        c.records = calloc(MAX(m->n_state_saved, (size_t)1), sizeof(StateProcess));
        if (!c.records)
                return -ENOMEM;
        twalk_r(m->processes, compact_action, &c);
        r = c.error;
        if (r >= 0)
                r = state_journal_rewrite(m->journal, c.records, c.n);
        state_process_array_free(c.records, c.n);
        if (r >= 0)
                debounce_cancel(&m->journal_flush); /* nothing is queued any more */
        return r;
}

void manager_originals_save(Manager *m, TrackedProcess *p) {
        _cleanup_(state_process_done) StateProcess s = {};
        StateJournal *j = NULL;
        int r;

        if (!p->state_dirty || m->dry_run || !m->state_dir)
                return;
        if (!p->has_original && !p->has_sched_original)
                return;
        r = state_from_process(p, &s);
        if (r >= 0)
                r = journal(m, &j);
        if (r >= 0)
                r = state_journal_save(j, &s);
        if (r < 0) {
                log_struct(
                        LOG_WARNING, r, NULL, p->pid, p->comm, NULL,
                        "Failed to persist the originals of %s[%d] under %s: %m (a restarted daemon "
                        "could not restore them)",
                        p->comm, (int)p->pid, m->state_dir);
                return;
        }
        p->state_dirty = false;
        if (!p->state_saved) {
                p->state_saved = true;
                m->n_state_saved++;
        }
        if (m->n_recovered == 0 && state_journal_wants_rewrite(j, m->n_state_saved)) {
                r = journal_compact(m);
                if (r < 0)
                        log_warning_errno(
                                r, "Failed to compact %s/" STATE_JOURNAL_NAME ": %m", m->state_dir);
        }
}

static int journal_flush_handler(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        r = state_journal_flush(m->journal);
        if (r < 0)
                log_warning_errno(r, "Failed to write to %s/" STATE_JOURNAL_NAME ": %m", m->state_dir);
        return 0;
}

void manager_originals_drop(Manager *m, TrackedProcess *p) {
        bool was_pending;
        int r;

        if (!p->state_saved || !m->journal)
                return;
        p->state_saved = false;
        m->n_state_saved--;
        /* A drop that a crash loses leaves only a record of a process that is gone (its
         * starttime tells) or has its originals back: written with the next save, or a second
         * later. */
        was_pending = state_journal_pending(m->journal);
        r = state_journal_drop(m->journal, p->pid, p->starttime);
        if (r >= 0 && m->event && !was_pending) /* armed already otherwise: no timer touched */
                r = debounce_arm(
                        &m->journal_flush, m->event, USEC_PER_SEC, USEC_PER_SEC, SD_EVENT_PRIORITY_IDLE,
                        "journal-flush", journal_flush_handler, m);
        if (r < 0)
                log_warning_errno(r, "Failed to forget the originals of %s[%d]: %m", p->comm, (int)p->pid);
}

/* ---- recovery at startup ---- */

static int recovered_compare(const void *a, const void *b) {
        const StateProcess *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

const StateProcess *manager_originals_recovered(const Manager *m, const TrackedProcess *p) {
        StateProcess key = {.pid = p->pid, .starttime = p->starttime};

        if (m->n_recovered == 0)
                return NULL;
        return bsearch(&key, m->recovered, m->n_recovered, sizeof(StateProcess), recovered_compare);
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

/* Appends s to m->recovered (taking what it owns). Returns 0 or -ENOMEM. */
static int recovered_add(Manager *m, StateProcess *s) {
        StateProcess *a;

        a = reallocarray(m->recovered, m->n_recovered + 1, sizeof(StateProcess));
        if (!a)
                return -ENOMEM;
        m->recovered = a;
        m->recovered[m->n_recovered++] = *s;
        *s = (StateProcess){};
        return 0;
}

/* The records of the journal whose process still runs (same PID and starttime). */
static int recover_journal(Manager *m) {
        _cleanup_strv_free_ char **warnings = NULL;
        StateProcess *records = NULL;
        size_t n = 0;
        int r;

        r = state_journal_read(m->state_dir, &records, &n, &warnings);
        STRV_FOREACH (w, warnings)
                log_warning("%s, ignoring it: the originals it held are lost", *w);
        if (r == -ENOMEM)
                return r;
        if (r == -EBADMSG) {
                /* Not a journal: kept aside for whoever wants to look, and a new one begun
                 * (appending to it would spoil the records that follow). */
                _cleanup_free_ char *from = NULL, *to = NULL;

                if (asprintf(&from, "%s/" STATE_JOURNAL_NAME, m->state_dir) < 0 ||
                    asprintf(&to, "%s/" STATE_JOURNAL_NAME ".bad", m->state_dir) < 0)
                        return -ENOMEM;
                if (rename(from, to) < 0)
                        log_warning_errno(errno, "Failed to move %s aside: %m", from);
                else
                        log_warning("Moved %s aside as %s", from, to);
                return 0;
        }
        if (r < 0) {
                log_warning_errno(r, "Failed to read %s/" STATE_JOURNAL_NAME ": %m", m->state_dir);
                return 0;
        }
        if (n > 0 || warnings)
                m->recovery_rewrite = true;
        /* Whether each process still runs is for manager_originals_finish_recovery() to see: the
         * first scan reads the /proc/PID/stat of every one that does anyway. */
        free(m->recovered);
        m->recovered = records;
        m->n_recovered = n;
        return 0;
}

/* The state files of STATE_DIR/processes, one per process, that an instance from before the
 * journal left (an upgrade while processes were placed): read like the journal's records,
 * removed once the journal holds what they said (manager_originals_finish_recovery()). */
static int recover_legacy(Manager *m) {
        _cleanup_free_ StateId *ids = NULL;
        size_t n = 0;
        int r;

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
                uint64_t starttime;

                m->recovered_legacy = m->recovery_rewrite = true;
                r = procfs_read_starttime(NULL, ids[i].pid, &starttime);
                if (r < 0 || starttime != ids[i].starttime)
                        continue; /* gone: removed with the others */
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
                        continue;
                }
                if (manager_originals_recovered(
                            m, &(TrackedProcess){.pid = s.pid, .starttime = s.starttime}))
                        continue; /* the journal knows it too; it is newer */
                r = recovered_add(m, &s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Removes what recover_legacy() read, and the directory. */
static void remove_legacy(Manager *m) {
        _cleanup_free_ StateId *ids = NULL;
        _cleanup_free_ char *dir = NULL;
        size_t n = 0;

        if (state_list(m->state_dir, &ids, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++)
                (void)state_remove(m->state_dir, ids[i].pid, ids[i].starttime);
        if (asprintf(&dir, "%s/processes", m->state_dir) >= 0)
                (void)rmdir(dir);
        m->recovered_legacy = false;
}

int manager_originals_recover(Manager *m) {
        size_t n_journal;
        int r;

        if (m->dry_run || !m->state_dir)
                return 0;
        if (m->units) {
                r = unit_placement_recover(m->units);
                if (r < 0)
                        return r;
        }
        r = recover_journal(m);
        if (r < 0)
                return r;
        n_journal = m->n_recovered;
        r = recover_legacy(m);
        if (r < 0)
                return r;
        if (m->n_recovered > n_journal) /* sorted for manager_originals_recovered() */
                qsort(m->recovered, m->n_recovered, sizeof(StateProcess), recovered_compare);
        if (m->n_recovered > 0)
                log_info(
                        "Read the originals of %zu processes placed by a previous instance from %s",
                        m->n_recovered, m->state_dir);
        return 0;
}

void manager_originals_finish_recovery(Manager *m) {
        size_t n = m->n_recovered;
        int r;

        for (size_t i = 0; i < n; i++) {
                StateProcess *s = &m->recovered[i];
                TrackedProcess *p = manager_find_process(m, s->pid);
                RestoreContext c = {.state = s};

                if (p && p->starttime != s->starttime)
                        p = NULL;
                if (p && !p->has_original && !p->has_sched_original)
                        p = NULL; /* tracked, but nothing recorded: the record has no owner */
                if (!p) {
                        uint64_t starttime;

                        r = procfs_read_starttime(NULL, s->pid, &starttime);
                        if (r < 0 || starttime != s->starttime) {
                                log_debug(
                                        "Originals of process %d-%" PRIu64
                                        ": the process is gone, forgetting them",
                                        (int)s->pid, s->starttime);
                                if (m->journal)
                                        (void)state_journal_drop(m->journal, s->pid, s->starttime);
                                continue;
                        }
                }
                c.tracked = p;
                /* Still managed: give back only what the new placement did not take over (a
                 * policy that lost its scheduler: keys while the daemon was down). Not managed any
                 * more: give everything back. */
                r = procfs_foreach_thread(NULL, s->pid, recovered_thread_restore, &c);
                if (p) {
                        p->state_dirty = true;
                        manager_originals_save(m, p); /* the record now says what this instance knows */
                        continue;
                }
                if (r < 0 && r != -ESRCH)
                        log_warning_errno(
                                r, "Failed to restore process %d from its recorded originals: %m",
                                (int)s->pid);
                else if (r >= 0) {
                        m->counters.restores++;
                        log_info(
                                "Process %d no longer matches a policy: restored the originals a previous "
                                "instance recorded (%u threads%s)",
                                (int)s->pid, c.n_set, c.n_failed > 0 ? ", some refused" : "");
                }
                if (m->journal)
                        (void)state_journal_drop(m->journal, s->pid, s->starttime);
        }
        for (size_t i = 0; i < n; i++)
                state_process_done(&m->recovered[i]);
        m->recovered = mfree(m->recovered);
        m->n_recovered = 0;
        /* The journal holds what the previous instance wrote, the records of processes that are
         * gone included: rewrite it with this instance's, then the files from before the
         * journal can go. Should that fail, the queued drops say the same, more slowly. */
        if (m->recovery_rewrite && !m->dry_run && m->state_dir) {
                StateJournal *j;

                r = journal(m, &j);
                if (r >= 0)
                        r = journal_compact(m);
                if (r < 0)
                        log_warning_errno(
                                r, "Failed to rewrite %s/" STATE_JOURNAL_NAME ": %m", m->state_dir);
                else if (m->recovered_legacy)
                        remove_legacy(m);
                if (r < 0 && m->journal)
                        (void)state_journal_flush(m->journal);
                m->recovery_rewrite = false;
        }
        /* Units a previous instance set that the first pass did not place get their originals. */
        if (m->units)
                unit_placement_flush(m->units);
}

/* ---- removing a process ---- */

/* Stops tracking p: its record is dropped (nothing is left to give back after a crash) and it
 * leaves the table; p is freed. */
void manager_remove_process(Manager *m, TrackedProcess *p) {
        manager_originals_drop(m, p);
        tracked_process_remove(m, p);
}
