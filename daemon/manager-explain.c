/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The data behind Explain. See manager-explain.h. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "manager-explain.h"
#include "manager-internal.h"

#include "apply-sched.h"
#include "cgroup.h"
#include "cpuset.h"
#include "match.h"
#include "procfs.h"
#include "threadstat.h"

/* Appends the cpu-list of set (NULL: "") to *l as "PREFIX<list>". Returns 0 or -ENOMEM. */
static int explain_cpus_line(char ***l, const char *prefix, const CpuSet *set) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = cpuset_format_list(set, &text);
        if (r < 0)
                return r;
        return strv_extendf(l, "%s%s", prefix, text);
}

/* "scheduler: policy batch, nice 5, io best-effort 4, reset-on-fork" for the keys given. */
static int explain_scheduler_line(char ***l, const char *prefix, const SchedulerSpec *s) {
        char buf[256];
        int k = 0;

        if (!s->has_policy && !s->has_priority && !s->has_nice && !s->has_io && !s->has_reset_on_fork)
                return 0;
        if (s->has_policy)
                k += snprintf(
                        buf + k, sizeof(buf) - k, ", policy %s",
                        strna(apply_sched_policy_to_string(s->policy)));
        if (s->has_priority && k < (int)sizeof(buf))
                k += snprintf(buf + k, sizeof(buf) - k, ", priority %u", s->priority);
        if (s->has_nice && k < (int)sizeof(buf))
                k += snprintf(buf + k, sizeof(buf) - k, ", nice %d", s->nice);
        if (s->has_io && k < (int)sizeof(buf))
                k += snprintf(
                        buf + k, sizeof(buf) - k, ", io %s %u",
                        strna(apply_ioprio_class_to_string(s->io_class)), s->io_level);
        if (s->has_reset_on_fork && k < (int)sizeof(buf))
                (void)snprintf(
                        buf + k, sizeof(buf) - k, ", reset-on-fork %s", s->reset_on_fork ? "yes" : "no");
        return strv_extendf(l, "%sscheduler: %s", prefix, buf + 2);
}

/*
 * Matches pid against every policy in order, as far as the one it is under (tracked: p's, even a
 * policy a later key change would no longer pick) or, untracked, the first active one that
 * matches. The matching policy's key lines (and a forked process's note) go to *explanation; for
 * each policy before it a flat (name, why not) pair to *unmatched. *ret_policy: the index, -1 when
 * none. Returns 0, -ESRCH (gone), -ENOMEM.
 */
static int explain_matching(
        Manager *m, pid_t pid, TrackedProcess *p, char ***explanation, char ***unmatched, int *ret_policy) {
        _cleanup_(process_facts_done) ProcessFacts f = {};
        /* By index: a process's own plan (within: cpuset) is not the policy's. */
        size_t tracked = p && manager_process_plan(m, p) ? p->policy : SIZE_MAX;
        bool explicit_only;
        int found = -1, r;

        process_facts_init(&f, NULL, pid);
        f.kube = m->kube;
        /* Kernel threads and the daemon itself are placed only by a policy that names their comm
         * (match_process()): the others are not considered, whatever their keys say. */
        if (p)
                explicit_only = p->explicit_only;
        else {
                ProcfsStat st;

                r = procfs_read_stat(NULL, pid, 0, &st);
                if (r == -ESRCH)
                        return r;
                explicit_only = pid == m->self || (r >= 0 && (st.flags & PROCFS_PF_KTHREAD));
        }
        if (explicit_only) {
                r = process_facts_load(&f, FACT_COMM);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; m->plan && i < m->plan->n_policies && found < 0; i++) {
                const PolicyPlan *pp = &m->plan->policies[i];
                _cleanup_strv_free_ char **lines = NULL;
                _cleanup_free_ char *why = NULL, *text = NULL;
                bool matched;

                if (!pp->policy)
                        continue;
                if (explicit_only && i != tracked &&
                    !((f.loaded & FACT_COMM) && policy_names_comm(pp->policy, f.comm))) {
                        r = strv_extendf(unmatched, "%s", pp->policy->name);
                        if (r >= 0)
                                r = strv_extendf(
                                        unmatched, "%s",
                                        pid == m->self
                                                ? "not considered: affinityd itself is placed only by a "
                                                  "policy whose comm: names it (no glob)"
                                                : "not considered: a kernel thread is placed only by a "
                                                  "policy whose comm: names it (no glob)");
                        if (r < 0)
                                return r;
                        continue;
                }
                r = matcher_explain(&pp->policy->match, pp->uids, pp->n_uids, &f, &lines, &why);
                if (r < 0)
                        return r;
                matched = r > 0;
                if (tracked != SIZE_MAX ? i == tracked : (matched && !pp->pending_reason)) {
                        found = (int)i;
                        if (p && p->forked) {
                                r = strv_extendf(
                                        explanation,
                                        "forked by %d without exec: tracked under its parent's policy",
                                        (int)p->parent);
                                if (r < 0)
                                        return r;
                        }
                        STRV_FOREACH (line, lines) {
                                r = strv_extendf(explanation, "%s", *line);
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                if (!matched)
                        text = TAKE_PTR(why);
                else if (pp->pending_reason) {
                        if (asprintf(&text, "matches, but the policy is pending: %s", pp->pending_reason) <
                            0)
                                return -ENOMEM;
                } else if (!(text = strdup(
                                     "matches now, but the process is tracked under a later policy "
                                     "(matched before its last change; the next rescan re-matches it)")))
                        return -ENOMEM;
                r = strv_extendf(unmatched, "%s", pp->policy->name);
                if (r >= 0)
                        r = strv_extendf(unmatched, "%s", text);
                if (r < 0)
                        return r;
        }
        *ret_policy = found;
        return 0;
}

/*
 * processes: spread: which slot p holds, and the CPU it stands for, or why it holds none (a
 * pre-fork master, or none of its threads follows the process's slot). Nothing for a policy
 * that doesn't spread its processes. Returns 0 or -ENOMEM.
 */
static int explain_process_slot(const Manager *m, const TrackedProcess *p, const PolicyPlan *pp, char ***l) {
        const PolicySpread *ps = manager_policy_spread(m, p);
        _cleanup_free_ char *order = NULL;
        char *text = NULL;
        size_t size = 0;
        FILE *f;
        int slot;

        if (pp->pending_reason || pp->n_process_order == 0)
                return 0;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < pp->n_process_order; i++)
                fprintf(f, "%s%u", i > 0 ? "," : "", pp->process_order[i]);
        if (fclose(f) != 0)
                return -ENOMEM;
        order = text;
        if (p->spread_master)
                return strv_extendf(
                        l,
                        "processes: spread: a pre-fork master (it forked processes of the policy): it "
                        "holds no slot, and its threads may use every CPU of the order %s",
                        order);
        slot = ps ? spread_slots_find(&ps->processes, p->pid) : -ENOENT;
        if (slot < 0)
                return strv_extendf(
                        l, "processes: spread: it holds no slot (none of its threads follows it)");
        return strv_extendf(
                l,
                "processes: spread: slot %d (%zu of the policy's processes hold one) of the order %s: CPU "
                "%u%s",
                slot, spread_slots_n_held(&ps->processes), order,
                pp->process_order[(size_t)slot % pp->n_process_order],
                (size_t)slot >= pp->n_process_order ? " (round robin: more processes than CPUs)" : "");
}

/* The lines saying what the policy applies: where it is written, how its CPUs were chosen,
 * memory and scheduler, and a pending reason. */
static int explain_policy(const PolicyPlan *pp, char ***l) {
        const Policy *policy = pp->policy;
        int r;

        r = strv_extendf(
                l, "policy %s at %s:%u", policy->name, strna(policy->location.file), policy->location.line);
        if (r < 0)
                return r;
        if (pp->pending_reason)
                return strv_extendf(l, "pending: %s (nothing is applied)", pp->pending_reason);
        STRV_FOREACH (line, pp->explanation) {
                r = strv_extendf(l, "%s", *line);
                if (r < 0)
                        return r;
        }
        if (pp->has_cpus)
                r = explain_cpus_line(l, "cpus: ", &pp->cpus);
        else
                r = strv_extendf(l, "cpus: not set (the CPU affinity is left as it is)");
        if (r < 0)
                return r;
        if (pp->has_memory) {
                r = explain_cpus_line(
                        l, policy->memory.migrate ? "memory: nodes (pages migrated) " : "memory: nodes ",
                        &pp->memory_nodes);
                if (r < 0)
                        return r;
        }
        r = explain_scheduler_line(l, "", &policy->scheduler);
        if (r < 0)
                return r;
        for (size_t i = 0; i < policy->n_threads; i++) {
                char prefix[128];

                snprintf(prefix, sizeof(prefix), "thread rule \"%s\": ", policy->threads[i].name);
                r = explain_scheduler_line(l, prefix, &policy->threads[i].scheduler);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Reads thread tid of pid from /proc into *raw; touches nothing else (the worker's thread may run
 * it). Returns 0, -ESRCH (the thread exited meanwhile), -ENOMEM, other -errno of
 * threadstat_read(). */
static int explain_thread_read(pid_t pid, pid_t tid, ManagerExplainRaw *raw) {
        _cleanup_cpuset_ CpuSet now = CPUSET_NULL;
        int r;

        *raw = (ManagerExplainRaw){
                .tid = tid,
                .stat =
                        {
                                .nr_migrations = THREADSTAT_UNKNOWN,
                                .run_delay_ns = THREADSTAT_UNKNOWN,
                                .timeslices = THREADSTAT_UNKNOWN,
                                .nonvoluntary = THREADSTAT_UNKNOWN,
                        },
        };
        r = procfs_read_comm(NULL, pid, tid, raw->comm);
        if (r < 0)
                return r; /* -ESRCH: the thread exited meanwhile; the caller skips it */
        if (apply_get_thread_affinity(tid, &now) >= 0) {
                r = cpuset_format_list(&now, &raw->kernel);
                if (r < 0)
                        return r;
        }
        r = threadstat_read(NULL, pid, tid, &raw->stat);
        if (r < 0 && r != -ESRCH && r != -EBADMSG) {
                raw->kernel = mfree(raw->kernel);
                return r;
        }
        return 0;
}

/* Fills *t from raw (taking raw->kernel) and the tracked state: the rule, the mask applied, the
 * counters since the baseline. Returns 0 or -ENOMEM. */
static int explain_thread_merge(
        ManagerExplainRaw *raw, TrackedProcess *p, const PolicyPlan *pp, ManagerExplainThread *t) {
        _cleanup_free_ char *applied = NULL, *rule = NULL;
        const ThreadStat *ts = &raw->stat;
        const ThreadBaseline *base = NULL;
        TrackedThread *tt = p ? tracked_process_thread(p, raw->tid) : NULL;
        int r;

        if (pp && pp->policy->n_threads > 0) {
                int k = match_thread(pp->policy, raw->comm);
                if (k >= 0 && !(rule = strdup(pp->policy->threads[k].name)))
                        return -ENOMEM;
        }
        if (tt && tt->has_applied) {
                r = cpuset_format_list(&tt->applied, &applied);
                if (r < 0)
                        return r;
        }
        if (tt && tt->has_baseline)
                base = &tt->baseline;

        *t = (ManagerExplainThread){
                .tid = raw->tid,
                .rule = TAKE_PTR(rule),
                .applied = TAKE_PTR(applied),
                .kernel = TAKE_PTR(raw->kernel),
                .last_cpu = (uint32_t)ts->last_cpu,
        };
        memcpy(t->comm, raw->comm, sizeof(t->comm));
        if (!base) {
                /* no baseline yet: totals since the thread started */
                t->migrations = ts->nr_migrations;
                t->run_delay_ns = ts->run_delay_ns;
                t->nonvoluntary = ts->nonvoluntary;
        } else {
                t->migrations = ts->nr_migrations == THREADSTAT_UNKNOWN
                        ? THREADSTAT_UNKNOWN
                        : (uint64_t)(uint32_t)((uint32_t)ts->nr_migrations - base->nr_migrations);
                t->run_delay_ns = threadstat_delta(ts->run_delay_ns, base->run_delay_ns);
                t->nonvoluntary = ts->nonvoluntary == THREADSTAT_UNKNOWN
                        ? THREADSTAT_UNKNOWN
                        : (uint64_t)(uint32_t)((uint32_t)ts->nonvoluntary - base->nonvoluntary);
        }
        return 0;
}

bool manager_explain_done(const ManagerExplanation *e) {
        return e->task_fd < 0 && e->next_tid >= e->n_tids && e->n_raw == 0;
}

/* Lists the next few thread IDs of /proc/PID/task into e->tids; closes it at its end. */
static void explain_list_more(ManagerExplanation *e) {
        /* Every entry read must be kept: the directory's offset moves past it. An entry is at
         * least 24 bytes (struct dirent64 with a short name), so this holds at most 42. */
        char buf[1024] __attribute__((aligned(8)));
        ssize_t n;

        _Static_assert(sizeof(buf) / 24 <= ELEMENTSOF(e->tids), "e->tids must hold a full buffer");

        e->n_tids = e->next_tid = 0;
        while (e->task_fd >= 0 && e->n_tids == 0) {
                n = syscall(SYS_getdents64, e->task_fd, buf, sizeof(buf));
                if (n <= 0) {
                        /* the end, or the process is gone (ENOENT): what was listed stands */
                        close(e->task_fd);
                        e->task_fd = -1;
                        break;
                }
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64 *d = (const struct dirent64 *)(buf + off);
                        char *end;
                        long tid = strtol(d->d_name, &end, 10);

                        if (*end == '\0' && tid > 0 && tid <= INT32_MAX && e->n_tids < ELEMENTSOF(e->tids))
                                e->tids[e->n_tids++] = (pid_t)tid;
                        off += d->d_reclen;
                }
        }
}

int manager_explain_read(ManagerExplanation *e, size_t max) {
        int r;

        max = MIN(max, ELEMENTSOF(e->raw));
        while (e->n_raw < max && (e->task_fd >= 0 || e->next_tid < e->n_tids)) {
                if (e->next_tid >= e->n_tids) {
                        explain_list_more(e);
                        if (e->n_tids == 0)
                                break;
                }
                r = explain_thread_read(e->pid, e->tids[e->next_tid++], &e->raw[e->n_raw]);
                if (r == -ESRCH)
                        continue; /* exited meanwhile */
                if (r < 0)
                        return r;
                e->n_raw++;
        }
        return 0;
}

int manager_explain_merge(Manager *m, ManagerExplanation *e) {
        TrackedProcess *p = e->managed ? manager_find_process(m, e->pid) : NULL;
        const PolicyPlan *pp;
        size_t i;
        int r = 0;

        if (p && p->starttime != e->starttime)
                p = NULL; /* gone, and the PID reused meanwhile */
        pp = p ? manager_process_plan(m, p) : NULL;
        if (e->n_threads + e->n_raw > e->n_allocated) {
                size_t n = MAX(MAX(e->n_allocated * 2, (size_t)16), e->n_threads + e->n_raw);
                ManagerExplainThread *t = reallocarray(e->threads, n, sizeof(ManagerExplainThread));

                if (!t)
                        r = -ENOMEM;
                else {
                        e->threads = t;
                        e->n_allocated = n;
                }
        }
        for (i = 0; r >= 0 && i < e->n_raw;) {
                r = explain_thread_merge(&e->raw[i], p, pp, &e->threads[e->n_threads]);
                if (r >= 0) {
                        e->n_threads++;
                        i++;
                }
        }
        for (; i < e->n_raw; i++) /* not merged: ENOMEM */
                e->raw[i].kernel = mfree(e->raw[i].kernel);
        e->n_raw = 0;
        return r < 0 ? r : manager_explain_done(e);
}

ManagerExplanation *manager_explanation_free(ManagerExplanation *e) {
        if (!e)
                return NULL;
        for (size_t i = 0; i < e->n_threads; i++) {
                free(e->threads[i].rule);
                free(e->threads[i].applied);
                free(e->threads[i].kernel);
        }
        free(e->threads);
        for (size_t i = 0; i < e->n_raw; i++)
                free(e->raw[i].kernel);
        if (e->task_fd >= 0)
                close(e->task_fd);
        strv_free(e->unmatched);
        strv_free(e->explanation);
        free(e->cpus);
        free(e->policy);
        free(e);
        return NULL;
}

int manager_explain_begin(Manager *m, pid_t pid, ManagerExplanation **ret) {
        _cleanup_(manager_explanation_freep) ManagerExplanation *e = NULL;
        const PolicyPlan *pp = NULL;
        TrackedProcess *p;
        char comm[16] = "", path[64];
        pid_t tgid;
        int policy = -1, r;

        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        if (pid <= 0 || access(path, F_OK) < 0 || procfs_read_comm(NULL, pid, 0, comm) < 0)
                return -ESRCH;

        e = calloc(1, sizeof(ManagerExplanation));
        if (!e)
                return -ENOMEM;
        e->task_fd = -1;

        /* A thread ID (from top -H, ps -L, perf): explain its process, and say so. */
        /* /proc/TID exists for every thread, though only thread group leaders are listed. */
        if (procfs_read_tgid(NULL, pid, &tgid) < 0)
                return -ESRCH;
        if (tgid != pid) {
                r = strv_extendf(
                        &e->explanation, "%d is a thread of process %d (%s); the process is explained",
                        (int)pid, (int)tgid, comm);
                if (r < 0)
                        return r;
                pid = tgid;
                if (procfs_read_comm(NULL, pid, 0, comm) < 0)
                        return -ESRCH;
        }

        p = manager_find_process(m, pid);
        r = explain_matching(m, pid, p, &e->explanation, &e->unmatched, &policy);
        if (r < 0)
                return r;
        if (policy >= 0)
                /* the process's own plan when it has one (within: cpuset) */
                pp = p && p->policy == (size_t)policy ? manager_process_plan(m, p)
                                                      : &m->plan->policies[policy];

        if (p && pp) {
                r = explain_policy(pp, &e->explanation);
                if (r >= 0)
                        r = explain_process_slot(m, p, pp, &e->explanation);
                if (r < 0)
                        return r;
                if (pp->has_cpus && !pp->pending_reason) {
                        r = cpuset_format_list(&pp->cpus, &e->cpus);
                        if (r < 0)
                                return r;
                }
                e->policy = strdup(pp->policy->name);
                if (!e->policy)
                        return -ENOMEM;
                if (p->refusal) {
                        _cleanup_free_ char *why = NULL;

                        r = cgroup_format_cpuset_conflict(
                                pp->policy->name, &p->refusal->wanted, pid, &p->refusal->allowed, &why);
                        if (r >= 0)
                                r = strv_extendf(
                                        &e->explanation,
                                        "not placed: %s (its cgroup's cpuset allows none of the policy's "
                                        "CPUs; the kernel refuses such a mask, so the affinity is left as "
                                        "it is until the cgroup or the policy changes)",
                                        why);
                        if (r < 0)
                                return r;
                }
        } else {
                r = pp ? strv_extendf(
                                 &e->explanation,
                                 "not managed: policy %s matches, but the process is not tracked (released "
                                 "by on-drift: respect, a kernel thread or the daemon itself, or not seen "
                                 "yet)",
                                 pp->policy->name)
                       : strv_extendf(&e->explanation, "not managed: no active policy matches");
                if (r < 0)
                        return r;
                pp = NULL; /* policy and cpus NULL: nothing is applied */
        }
        memcpy(e->comm, p ? p->comm : comm, sizeof(e->comm));

        e->pid = pid;
        e->managed = p && pp;
        e->starttime = p ? p->starttime : 0;
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        e->task_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        *ret = TAKE_PTR(e);
        return 0;
}

/* ---- Explain baselines ---- */

typedef struct BaselineWalk {
        const TrackedProcess *process;
        unsigned n; /* threads looked at */
} BaselineWalk;

/* twalk_r(3) visitor: samples one thread that has no baseline yet. */
static void baseline_visit(const void *node, VISIT which, void *userdata) {
        TrackedThread *t = *(TrackedThread *const *)node;
        BaselineWalk *w = userdata;
        ThreadStat ts;

        if (which != postorder && which != leaf)
                return;
        w->n++;
        if (t->has_baseline || threadstat_read_counters(NULL, w->process->pid, t->tid, &ts) < 0)
                return;
        t->has_baseline = true;
        t->baseline = (ThreadBaseline){
                .run_delay_ns = ts.run_delay_ns,
                .nr_migrations = (uint32_t)ts.nr_migrations,
                .nonvoluntary = (uint32_t)ts.nonvoluntary,
        };
}

/* Samples the counters of every thread of p that has no baseline yet (the settle pass of
 * placement.c calls it). Returns how many threads were looked at (the work done). */
unsigned manager_sample_baseline(TrackedProcess *p) {
        BaselineWalk w = {.process = p};

        twalk_r(p->threads, baseline_visit, &w);
        return w.n;
}
