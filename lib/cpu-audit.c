/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu-audit.h"
#include "fileio.h"
#include "interrupts.h"
#include "procfs.h"
#include "util.h"

/* A task seen on a CPU of the set. */
typedef struct AuditEntry {
        pid_t pid;
        pid_t tid;
        uint64_t starttime;
        uint64_t cpu_ticks; /* utime + stime, USER_HZ ticks */
        unsigned cpu;       /* field 39 */
        bool listed;        /* its pid is in owner_pids */
        bool kthread;
        char comm[16];
} AuditEntry;

/* The tasks kept for one CPU: at most cap, those with the most CPU time. */
typedef struct AuditCpuTasks {
        AuditEntry *entries;
        size_t n, cap;
} AuditCpuTasks;

typedef struct AuditCpuTimes {
        bool online;
        uint64_t busy, irq, softirq; /* USER_HZ ticks */
} AuditCpuTimes;

struct CpuAuditSnapshot {
        char *root;
        CpuAuditMode mode;
        size_t max_tasks;
        CpuSet cpus;
        unsigned *cpu_list; /* the set's CPUs, ascending */
        size_t n_cpus;
        AuditCpuTimes *times; /* per cpu_list entry */
        AuditCpuTasks *tasks; /* per cpu_list entry */
        AuditEntry **by_tid;  /* every kept entry, by (tid, starttime): for the diff */
        size_t n_by_tid;
        uint64_t mono_usec;
        uint64_t boot_ticks; /* CLOCK_BOOTTIME in USER_HZ ticks when taken */
        size_t n_unreadable;
        InterruptTable *interrupts; /* NULL: unreadable */
        InterruptTable *softirqs;
        long hz;
};

static long user_hz(void) {
        long hz = sysconf(_SC_CLK_TCK);

        return hz > 0 ? hz : 100;
}

static uint64_t ticks_to_ns(uint64_t ticks, long hz) {
        return ticks / (uint64_t)hz * 1000000000ULL + ticks % (uint64_t)hz * 1000000000ULL / (uint64_t)hz;
}

static uint64_t sub0(uint64_t a, uint64_t b) {
        return a >= b ? a - b : 0;
}

static ssize_t cpu_index(const CpuAuditSnapshot *s, unsigned cpu) {
        size_t lo = 0, hi = s->n_cpus;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (s->cpu_list[mid] == cpu)
                        return (ssize_t)mid;
                if (s->cpu_list[mid] < cpu)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* The "cpuN user nice system idle iowait irq softirq steal ..." lines of /proc/stat. */
static int read_proc_stat(CpuAuditSnapshot *s) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        int r;

        path = strprintf("%s/proc/stat", root_prefix(s->root));
        if (!path)
                return -ENOMEM;
        r = read_full_file(path, 16U * 1024U * 1024U, 0, &text, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : 0; /* no /proc/stat: no busy time */

        for (char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
                unsigned long long v[8] = {};
                unsigned cpu;
                int n, consumed = 0;
                ssize_t i;

                if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
                        continue;
                n =
                        sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu%n", &cpu, &v[0], &v[1],
                               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &consumed);
                if (n < 8)
                        continue; /* malformed or too old a kernel: nothing for this CPU */
                i = cpu_index(s, cpu);
                if (i < 0)
                        continue;
                s->times[i].online = true;
                /* user nice system idle iowait irq softirq steal */
                s->times[i].busy = v[0] + v[1] + v[2] + v[5] + v[6] + (n >= 9 ? v[7] : 0);
                s->times[i].irq = v[5];
                s->times[i].softirq = v[6];
        }
        return 0;
}

static bool pid_listed(const pid_t *pids, size_t n, pid_t pid) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (pids[mid] == pid)
                        return true;
                if (pids[mid] < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

/* Keeps e in t: appended while there is room, else in place of the entry with the least time
 * if e has more. */
static void tasks_keep(AuditCpuTasks *t, const AuditEntry *e) {
        size_t min = 0;

        if (t->n < t->cap) {
                t->entries[t->n++] = *e;
                return;
        }
        for (size_t i = 1; i < t->n; i++)
                if (t->entries[i].cpu_ticks < t->entries[min].cpu_ticks)
                        min = i;
        if (t->n > 0 && t->entries[min].cpu_ticks < e->cpu_ticks)
                t->entries[min] = *e;
}

typedef struct ScanState {
        CpuAuditSnapshot **snapshots;
        const CpuAuditRequest *requests;
        size_t n;
} ScanState;

/* Reads one task's stat once and keeps it in every snapshot whose CPUs hold its last CPU. */
static int scan_thread(pid_t pid, pid_t tid, void *userdata) {
        ScanState *st = userdata;
        _cleanup_free_ char *path = NULL, *buf = NULL;
        ProcfsStat ps;
        uint64_t cpu, utime, stime;
        size_t len;
        int r;

        path = strprintf("%s/proc/%d/task/%d/stat", root_prefix(st->snapshots[0]->root), pid, tid);
        if (!path)
                return -ENOMEM;
        r = read_full_file(path, 4096, 0, &buf, &len);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT || r == -ESRCH)
                return -ESRCH;
        if (r >= 0 &&
            (procfs_parse_stat(buf, len, &ps) < 0 || procfs_stat_field(buf, 39, &cpu) < 0 ||
             procfs_stat_field(buf, 14, &utime) < 0 || procfs_stat_field(buf, 15, &stime) < 0))
                r = -EBADMSG;
        if (r < 0) {
                for (size_t k = 0; k < st->n; k++)
                        st->snapshots[k]->n_unreadable++;
                return -ESRCH;
        }
        if (cpu > UINT_MAX)
                return -ESRCH;

        for (size_t k = 0; k < st->n; k++) {
                CpuAuditSnapshot *s = st->snapshots[k];
                ssize_t i = cpu_index(s, (unsigned)cpu);
                AuditEntry e = {};

                if (i < 0)
                        continue;
                e.pid = pid;
                e.tid = tid;
                e.starttime = ps.starttime;
                e.cpu_ticks = utime + stime;
                e.cpu = (unsigned)cpu;
                e.listed = pid_listed(st->requests[k].owner_pids, st->requests[k].n_owners, pid);
                e.kthread = ps.flags & PROCFS_PF_KTHREAD;
                memcpy(e.comm, ps.comm, sizeof(e.comm));
                e.comm[sizeof(e.comm) - 1] = 0;
                tasks_keep(&s->tasks[i], &e);
        }
        return 0;
}

static int entry_cmp(const void *a, const void *b) {
        const AuditEntry *x = *(AuditEntry *const *)a, *y = *(AuditEntry *const *)b;

        if (x->tid != y->tid)
                return x->tid < y->tid ? -1 : 1;
        if (x->starttime != y->starttime)
                return x->starttime < y->starttime ? -1 : 1;
        return 0;
}

static int read_table(const CpuAuditSnapshot *s, const char *file, InterruptTable **ret) {
        _cleanup_free_ char *path = strprintf("%s/proc/%s", root_prefix(s->root), file);
        int r;

        if (!path)
                return -ENOMEM;
        r = interrupts_read_full(path, INTERRUPTS_SKIP_BAD_LINES, ret, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                *ret = NULL; /* unreadable: nothing of that kind is reported */
        return 0;
}

/* A snapshot of the request's CPUs with its counters read, its task tables empty. */
static int snapshot_prepare(const char *root, const CpuAuditRequest *q, CpuAuditSnapshot **ret) {
        _cleanup_(cpu_audit_snapshot_freep) CpuAuditSnapshot *s = NULL;
        struct timespec ts;
        size_t k = 0, cap;
        int r;

        if (!q->cpus || cpuset_is_empty(q->cpus) || q->max_tasks == 0 ||
            (q->mode != CPU_AUDIT_EXCLUSIVE && q->mode != CPU_AUDIT_RESERVE) ||
            (q->n_owners > 0 && !q->owner_pids))
                return -EINVAL;
        for (size_t i = 1; i < q->n_owners; i++)
                if (q->owner_pids[i - 1] >= q->owner_pids[i])
                        return -EINVAL;
        if (q->max_tasks > SIZE_MAX / CPU_AUDIT_TRACK_FACTOR / sizeof(AuditEntry))
                return -EINVAL;
        cap = q->max_tasks * CPU_AUDIT_TRACK_FACTOR;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = q->mode;
        s->max_tasks = q->max_tasks;
        s->hz = user_hz();
        if (root && !(s->root = strdup(root)))
                return -ENOMEM;
        r = cpuset_copy(&s->cpus, q->cpus);
        if (r < 0)
                return r;
        s->n_cpus = cpuset_count(q->cpus);
        s->cpu_list = calloc(s->n_cpus, sizeof(unsigned));
        s->times = calloc(s->n_cpus, sizeof(AuditCpuTimes));
        s->tasks = calloc(s->n_cpus, sizeof(AuditCpuTasks));
        if (!s->cpu_list || !s->times || !s->tasks)
                return -ENOMEM;
        CPUSET_FOREACH (cpu, q->cpus) {
                s->cpu_list[k] = (unsigned)cpu;
                s->tasks[k].cap = cap;
                s->tasks[k].entries = calloc(cap, sizeof(AuditEntry));
                if (!s->tasks[k].entries)
                        return -ENOMEM;
                k++;
        }

        clock_gettime(CLOCK_MONOTONIC, &ts);
        s->mono_usec = (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
        clock_gettime(CLOCK_BOOTTIME, &ts);
        s->boot_ticks = (uint64_t)ts.tv_sec * (uint64_t)s->hz +
                (uint64_t)ts.tv_nsec * (uint64_t)s->hz / 1000000000ULL;

        /* Counters first, tasks after: a task's time read later than the CPU's can only make
         * the unnamed residual smaller, never attribute time the CPU did not spend. */
        r = read_proc_stat(s);
        if (r < 0)
                return r;
        r = read_table(s, "interrupts", &s->interrupts);
        if (r < 0)
                return r;
        r = read_table(s, "softirqs", &s->softirqs);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

/* The index of the kept tasks by (TID, start time), for the diff. */
static int snapshot_finish(CpuAuditSnapshot *s) {
        size_t k = 0;

        for (size_t i = 0; i < s->n_cpus; i++)
                s->n_by_tid += s->tasks[i].n;
        s->by_tid = calloc(MAX(s->n_by_tid, (size_t)1), sizeof(AuditEntry *));
        if (!s->by_tid)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_cpus; i++)
                for (size_t j = 0; j < s->tasks[i].n; j++)
                        s->by_tid[k++] = &s->tasks[i].entries[j];
        qsort(s->by_tid, s->n_by_tid, sizeof(AuditEntry *), entry_cmp);
        return 0;
}

int cpu_audit_snapshot_many(
        const char *root, const CpuAuditRequest *requests, size_t n, CpuAuditSnapshot **ret) {
        _cleanup_free_ CpuAuditSnapshot **l = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n_pids = 0;
        ScanState st;
        int r;

        if (!requests || n == 0 || !ret)
                return -EINVAL;
        l = calloc(n, sizeof(CpuAuditSnapshot *));
        if (!l)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
                r = snapshot_prepare(root, &requests[k], &l[k]);
                if (r < 0)
                        goto fail;
        }

        r = procfs_list_pids(root, &pids, &n_pids);
        if (r < 0)
                goto fail;
        st = (ScanState){.snapshots = l, .requests = requests, .n = n};
        for (size_t i = 0; i < n_pids; i++) {
                r = procfs_foreach_thread_once(root, pids[i], scan_thread, &st);
                if (r == -ENOMEM)
                        goto fail;
                if (r == -EACCES || r == -EPERM)
                        for (size_t k = 0; k < n; k++)
                                l[k]->n_unreadable++;
        }
        for (size_t k = 0; k < n; k++) {
                r = snapshot_finish(l[k]);
                if (r < 0)
                        goto fail;
        }
        memcpy(ret, l, n * sizeof(CpuAuditSnapshot *));
        return 0;
fail:
        for (size_t k = 0; k < n; k++)
                cpu_audit_snapshot_free(l[k]);
        return r;
}

int cpu_audit_snapshot(
        const char *root, const CpuSet *cpus, CpuAuditMode mode, const pid_t *owner_pids, size_t n_owners,
        size_t max_tasks, CpuAuditSnapshot **ret) {
        if (!ret)
                return -EINVAL;
        return cpu_audit_snapshot_many(
                root,
                &(const CpuAuditRequest){
                        .cpus = cpus,
                        .mode = mode,
                        .owner_pids = owner_pids,
                        .n_owners = n_owners,
                        .max_tasks = max_tasks},
                1, ret);
}

CpuAuditSnapshot *cpu_audit_snapshot_free(CpuAuditSnapshot *s) {
        if (!s)
                return NULL;
        if (s->tasks)
                for (size_t i = 0; i < s->n_cpus; i++)
                        free(s->tasks[i].entries);
        free(s->tasks);
        free(s->times);
        free(s->cpu_list);
        free(s->by_tid);
        cpuset_done(&s->cpus);
        interrupt_table_free(s->interrupts);
        interrupt_table_free(s->softirqs);
        free(s->root);
        free(s);
        return NULL;
}

static const AuditEntry *find_entry(const CpuAuditSnapshot *s, const AuditEntry *e) {
        const AuditEntry *key = e;
        AuditEntry *const *hit = bsearch(&key, s->by_tid, s->n_by_tid, sizeof(AuditEntry *), entry_cmp);

        return hit ? *hit : NULL;
}

/* The unit (or container scope) of pid's cgroup, or the cgroup path itself; NULL if unreadable. */
static char *task_unit(const char *root, pid_t pid) {
        _cleanup_free_ char *cg = NULL;
        char *unit = NULL;

        if (procfs_read_cgroup(root, pid, &cg) < 0)
                return NULL;
        if (procfs_unit_from_cgroup(cg, &unit) >= 0)
                return unit;
        if (streq(cg, "/"))
                return NULL; /* the root cgroup says nothing */
        return TAKE_PTR(cg);
}

typedef struct Intruder {
        const AuditEntry *e;
        uint64_t ticks;
} Intruder;

static int intruder_cmp(const void *a, const void *b) {
        const Intruder *x = a, *y = b;

        if (x->ticks != y->ticks)
                return x->ticks > y->ticks ? -1 : 1;
        return x->e->tid < y->e->tid ? -1 : x->e->tid > y->e->tid;
}

static int irq_cmp(const void *a, const void *b) {
        const CpuAuditIrq *x = a, *y = b;

        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        return x->irq < y->irq ? -1 : x->irq > y->irq;
}

/* Count of line l of after on cpu, minus the same line's (found by id) in before. */
static uint64_t line_delta(
        const InterruptTable *before, const InterruptTable *after, const InterruptLine *l, unsigned cpu) {
        uint64_t now = interrupt_line_count(after, l, cpu, NULL), then = 0;

        if (before)
                for (size_t i = 0; i < before->n_lines; i++)
                        if (streq(before->lines[i].id, l->id)) {
                                then = interrupt_line_count(before, &before->lines[i], cpu, NULL);
                                break;
                        }
        return sub0(now, then);
}

static int diff_cpu(
        const CpuAuditSnapshot *before, const CpuAuditSnapshot *after, size_t i, CpuAuditCpu *c) {
        const AuditCpuTasks *t = &after->tasks[i];
        _cleanup_free_ Intruder *intr = NULL;
        size_t n_intr = 0, named;
        ssize_t bi = cpu_index(before, after->cpu_list[i]);
        uint64_t owners = 0, named_ticks = 0, other_ticks = 0;
        long hz = after->hz;

        c->cpu = after->cpu_list[i];
        c->online = after->times[i].online && bi >= 0 && before->times[bi].online;
        if (after->times[i].online) {
                /* A CPU absent before (it came online, or was not audited) starts from zero. */
                const AuditCpuTimes *b = bi >= 0 && before->times[bi].online ? &before->times[bi] : NULL;

                c->busy_ns = ticks_to_ns(sub0(after->times[i].busy, b ? b->busy : 0), hz);
                c->irq_ns = ticks_to_ns(sub0(after->times[i].irq, b ? b->irq : 0), hz);
                c->softirq_ns = ticks_to_ns(sub0(after->times[i].softirq, b ? b->softirq : 0), hz);
        }

        intr = calloc(MAX(t->n, (size_t)1), sizeof(Intruder));
        if (!intr)
                return -ENOMEM;
        for (size_t j = 0; j < t->n; j++) {
                const AuditEntry *e = &t->entries[j], *p = find_entry(before, e);
                uint64_t d;
                bool intruder;

                if (p)
                        d = sub0(e->cpu_ticks, p->cpu_ticks);
                else if (e->starttime >= before->boot_ticks)
                        d = e->cpu_ticks; /* born in the window: all its time is in it */
                else
                        continue; /* came from another CPU or from beyond the bound: unknown */
                if (d == 0)
                        continue;
                intruder = after->mode == CPU_AUDIT_EXCLUSIVE ? !e->listed : e->listed;
                if (!intruder) {
                        owners += d;
                        continue;
                }
                intr[n_intr++] = (Intruder){.e = e, .ticks = d};
        }
        qsort(intr, n_intr, sizeof(Intruder), intruder_cmp);
        named = MIN(n_intr, after->max_tasks);
        c->tasks = calloc(MAX(named, (size_t)1), sizeof(CpuAuditTask));
        if (!c->tasks)
                return -ENOMEM;
        for (size_t j = 0; j < n_intr; j++) {
                const AuditEntry *e = intr[j].e;

                if (j >= named) {
                        c->n_other_tasks++;
                        other_ticks += intr[j].ticks;
                        continue;
                }
                c->tasks[j] = (CpuAuditTask){
                        .pid = e->pid,
                        .tid = e->tid,
                        .starttime = e->starttime,
                        .kthread = e->kthread,
                        .unit = e->kthread ? NULL : task_unit(after->root, e->pid),
                        .cpu_ns = ticks_to_ns(intr[j].ticks, hz),
                };
                memcpy(c->tasks[j].comm, e->comm, sizeof(c->tasks[j].comm));
                c->n_tasks++;
                named_ticks += intr[j].ticks;
        }
        c->owners_ns = ticks_to_ns(owners, hz);
        c->other_ns = ticks_to_ns(other_ticks, hz);
        c->unnamed_ns = sub0(c->busy_ns, c->owners_ns + ticks_to_ns(named_ticks, hz) + c->other_ns);

        if (after->interrupts) {
                const InterruptTable *a = after->interrupts;

                c->irqs = calloc(MAX(a->n_lines, (size_t)1), sizeof(CpuAuditIrq));
                if (!c->irqs)
                        return -ENOMEM;
                for (size_t j = 0; j < a->n_lines; j++) {
                        const InterruptLine *l = &a->lines[j];
                        uint64_t d;

                        if (!l->numeric)
                                continue;
                        d = line_delta(before->interrupts, a, l, c->cpu);
                        if (d == 0)
                                continue;
                        c->irqs[c->n_irqs].irq = l->irq;
                        c->irqs[c->n_irqs].actions = strdup(l->actions ? l->actions : "");
                        if (!c->irqs[c->n_irqs].actions)
                                return -ENOMEM;
                        c->irqs[c->n_irqs++].count = d;
                        c->irq_count += d;
                }
                qsort(c->irqs, c->n_irqs, sizeof(CpuAuditIrq), irq_cmp);
        }
        if (after->softirqs) {
                const InterruptTable *a = after->softirqs;

                c->softirqs = calloc(MAX(a->n_lines, (size_t)1), sizeof(CpuAuditSoftirq));
                if (!c->softirqs)
                        return -ENOMEM;
                for (size_t j = 0; j < a->n_lines; j++) {
                        uint64_t d = line_delta(before->softirqs, a, &a->lines[j], c->cpu);

                        if (d == 0)
                                continue;
                        snprintf(
                                c->softirqs[c->n_softirqs].name, sizeof(c->softirqs[0].name), "%s",
                                a->lines[j].id);
                        c->softirqs[c->n_softirqs++].count = d;
                }
        }
        return 0;
}

int cpu_audit_diff(const CpuAuditSnapshot *before, const CpuAuditSnapshot *after, CpuAuditReport **ret) {
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;
        int k;

        if (!before || !after || !ret)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->mode = after->mode;
        r->window_usec = sub0(after->mono_usec, before->mono_usec);
        r->n_unreadable = after->n_unreadable;
        r->cpus = calloc(after->n_cpus, sizeof(CpuAuditCpu));
        if (!r->cpus)
                return -ENOMEM;
        r->n_cpus = after->n_cpus;
        for (size_t i = 0; i < after->n_cpus; i++) {
                k = diff_cpu(before, after, i, &r->cpus[i]);
                if (k < 0)
                        return k;
        }
        *ret = TAKE_PTR(r);
        return 0;
}

CpuAuditReport *cpu_audit_report_free(CpuAuditReport *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; r->cpus && i < r->n_cpus; i++) {
                CpuAuditCpu *c = &r->cpus[i];

                for (size_t j = 0; j < c->n_tasks; j++)
                        free(c->tasks[j].unit);
                free(c->tasks);
                for (size_t j = 0; j < c->n_irqs; j++)
                        free(c->irqs[j].actions);
                free(c->irqs);
                free(c->softirqs);
        }
        free(r->cpus);
        free(r);
        return NULL;
}

bool cpu_audit_cpu_intruded(const CpuAuditReport *r, const CpuAuditCpu *c, uint64_t min_ns) {
        if (!r || !c)
                return false;
        for (size_t j = 0; j < c->n_tasks; j++)
                if (c->tasks[j].cpu_ns > 0 && c->tasks[j].cpu_ns >= min_ns)
                        return true;
        if (c->n_other_tasks > 0 && c->other_ns > 0 && c->other_ns >= min_ns)
                return true;
        return r->mode == CPU_AUDIT_EXCLUSIVE && c->irq_count > 0;
}
