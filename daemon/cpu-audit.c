/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The isolation audit on the effect-interval timer: see cpu-audit.h. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu-audit.h"
#include "event-util.h"
#include "log.h"

/* The previous snapshot of one target. */
typedef struct AuditState {
        char *policy; /* NULL: the reserve */
        CpuSet cpus;
        CpuAuditSnapshot *snapshot;
} AuditState;

struct CpuAudit {
        CpuAuditContext ctx;
        sd_event_source *timer;
        uint64_t interval_usec;
        AuditState *states;
        size_t n_states;
        CpuAuditCounter *counters; /* sorted by cpu, policy, kind */
        size_t n_counters;
};

void cpu_audit_targets_free(CpuAuditTarget *l, size_t n) {
        for (size_t i = 0; l && i < n; i++) {
                free(l[i].policy);
                cpuset_done(&l[i].cpus);
                free(l[i].pids);
                if (l[i].policies)
                        for (size_t k = 0; k < l[i].n_pids; k++)
                                free(l[i].policies[k]);
                free(l[i].policies);
        }
        free(l);
}

static void states_free(AuditState *s, size_t n) {
        for (size_t i = 0; s && i < n; i++) {
                free(s[i].policy);
                cpuset_done(&s[i].cpus);
                cpu_audit_snapshot_free(s[i].snapshot);
        }
        free(s);
}

int cpu_audit_new(const CpuAuditContext *c, CpuAudit **ret) {
        CpuAudit *a = calloc(1, sizeof(CpuAudit));

        if (!a)
                return -ENOMEM;
        a->ctx = *c;
        *ret = a;
        return 0;
}

CpuAudit *cpu_audit_free(CpuAudit *a) {
        if (!a)
                return NULL;
        a->timer = sd_event_source_disable_unref(a->timer);
        states_free(a->states, a->n_states);
        for (size_t i = 0; i < a->n_counters; i++)
                free(a->counters[i].policy);
        free(a->counters);
        return mfree(a);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

static int counter_cmp(unsigned cpu, const char *policy, const char *kind, const CpuAuditCounter *c) {
        int r;

        if (cpu != c->cpu)
                return cpu < c->cpu ? -1 : 1;
        r = strcmp(policy, c->policy);
        return r != 0 ? r : strcmp(kind, c->kind);
}

/* The counter of (cpu, policy, kind), made when missing; NULL on OOM. */
static CpuAuditCounter *counter_get(CpuAudit *a, unsigned cpu, const char *policy, const char *kind) {
        size_t lo = 0, hi = a->n_counters;
        CpuAuditCounter *l;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = counter_cmp(cpu, policy, kind, &a->counters[mid]);

                if (c == 0)
                        return &a->counters[mid];
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        l = reallocarray(a->counters, a->n_counters + 1, sizeof(CpuAuditCounter));
        if (!l)
                return NULL;
        a->counters = l;
        memmove(l + lo + 1, l + lo, (a->n_counters - lo) * sizeof(CpuAuditCounter));
        l[lo] = (CpuAuditCounter){.cpu = cpu};
        l[lo].policy = strdup(policy);
        if (!l[lo].policy) {
                memmove(l + lo, l + lo + 1, (a->n_counters - lo) * sizeof(CpuAuditCounter));
                return NULL;
        }
        snprintf(l[lo].kind, sizeof(l[lo].kind), "%s", kind);
        a->n_counters++;
        return &l[lo];
}

const CpuAuditCounter *cpu_audit_counters(const CpuAudit *a, size_t *ret_n) {
        *ret_n = a ? a->n_counters : 0;
        return a ? a->counters : NULL;
}

/* One journal line per CPU and policy: the parts whose kind may be logged now. */
typedef struct Message {
        FILE *f;
        char *text;
        size_t size;
        size_t n_parts;
} Message;

/* Counts an intrusion, reports it, and says whether its kind may be logged now (and notes the
 * time if so). */
static int intrusion(
        CpuAudit *a, uint64_t now, const char *policy, unsigned cpu, const char *kind, uint64_t usec,
        uint64_t count, const char *who, bool *ret_log) {
        CpuAuditCounter *c = counter_get(a, cpu, policy, kind);

        if (!c)
                return -ENOMEM;
        c->usec += usec;
        c->count += count;
        if (a->ctx.intrusion)
                a->ctx.intrusion(a->ctx.userdata, policy, cpu, kind, usec, count, who);
        *ret_log = c->last_logged_usec == 0 || now - c->last_logged_usec >= CPU_AUDIT_LOG_INTERVAL_USEC;
        return 0;
}

static void message_part(Message *msg, bool log, const char *fmt, ...) _printf_(3, 4);
static void message_part(Message *msg, bool log, const char *fmt, ...) {
        va_list ap;

        if (!log || !msg->f)
                return;
        if (msg->n_parts++ > 0)
                fputs("; ", msg->f);
        va_start(ap, fmt);
        vfprintf(msg->f, fmt, ap);
        va_end(ap);
}

static void seconds_text(char buf[32], uint64_t ns) {
        snprintf(
                buf, 32, "%" PRIu64 ".%02" PRIu64 " s", ns / UINT64_C(1000000000),
                ns % UINT64_C(1000000000) / UINT64_C(10000000));
}

/* The kinds logged in this message get their time noted. */
static void mark_logged(CpuAudit *a, uint64_t now, unsigned cpu, const char *policy, const char *kind) {
        CpuAuditCounter *c = counter_get(a, cpu, policy, kind);

        if (c)
                c->last_logged_usec = now;
}

/* The intrusions of one CPU of an exclusive policy's set. */
static int report_exclusive(
        CpuAudit *a, uint64_t now, const char *policy, const CpuAuditReport *r, const CpuAuditCpu *c) {
        static const char *const kinds[] = {"task", "kthread", "other", "unnamed", "irq", "softirq"};
        bool logk[ELEMENTSOF(kinds)] = {}, log = false;
        Message msg = {};
        char t[32];
        int k;

        msg.f = open_memstream(&msg.text, &msg.size);
        if (!msg.f)
                return -ENOMEM;
        fprintf(msg.f, "CPU %u (exclusive to policy \"%s\"): ", c->cpu, policy);
        for (size_t j = 0; j < c->n_tasks; j++) {
                const CpuAuditTask *tk = &c->tasks[j];
                _cleanup_free_ char *who = NULL;
                size_t kind = tk->kthread ? 1 : 0;

                if (tk->kthread)
                        who = strprintf("%s[%d] (kernel thread)", tk->comm, tk->tid);
                else if (tk->unit)
                        who = strprintf(
                                "%s[%d] (%s %s)", tk->comm, tk->tid, tk->unit[0] == '/' ? "cgroup" : "unit",
                                tk->unit);
                else
                        who = strprintf("%s[%d]", tk->comm, tk->tid);
                if (!who)
                        goto oom;
                k = intrusion(a, now, policy, c->cpu, kinds[kind], tk->cpu_ns / 1000, 0, who, &log);
                if (k < 0)
                        goto fail;
                logk[kind] |= log;
                seconds_text(t, tk->cpu_ns);
                message_part(&msg, log, "%s ran %s", who, t);
        }
        if (c->n_other_tasks > 0 && c->other_ns > 0) {
                _cleanup_free_ char *who = strprintf("%zu other tasks", c->n_other_tasks);

                if (!who)
                        goto oom;
                k = intrusion(
                        a, now, policy, c->cpu, "other", c->other_ns / 1000, c->n_other_tasks, who, &log);
                if (k < 0)
                        goto fail;
                logk[2] |= log;
                seconds_text(t, c->other_ns);
                message_part(&msg, log, "%s ran %s", who, t);
        }
        if (c->unnamed_ns > 0) {
                k = intrusion(a, now, policy, c->cpu, "unnamed", c->unnamed_ns / 1000, 0, "", &log);
                if (k < 0)
                        goto fail;
                logk[3] |= log;
                seconds_text(t, c->unnamed_ns);
                message_part(&msg, log, "%s of busy time no sampled task accounts for", t);
        }
        for (size_t j = 0; j < c->n_irqs; j++) {
                _cleanup_free_ char *who = NULL;
                uint64_t count = c->irqs[j].count;

                if (j + 1 == CPU_AUDIT_MAX_IRQS && c->n_irqs > CPU_AUDIT_MAX_IRQS) {
                        for (size_t q = j + 1; q < c->n_irqs; q++)
                                count += c->irqs[q].count;
                        who = strprintf("%zu other IRQs", c->n_irqs - j);
                } else
                        who = strprintf("IRQ %u (%s)", c->irqs[j].irq, c->irqs[j].actions);
                if (!who)
                        goto oom;
                k = intrusion(a, now, policy, c->cpu, "irq", 0, count, who, &log);
                if (k < 0)
                        goto fail;
                logk[4] |= log;
                message_part(&msg, log, "%s fired %" PRIu64 " times", who, count);
                if (j + 1 == CPU_AUDIT_MAX_IRQS)
                        break;
        }
        if (c->n_softirqs > 0) {
                _cleanup_free_ char *who = NULL;
                uint64_t count = 0;
                size_t size = 0;
                FILE *w = open_memstream(&who, &size);

                if (!w)
                        goto oom;
                for (size_t j = 0; j < c->n_softirqs; j++) {
                        fprintf(w, "%s%s %" PRIu64, j > 0 ? ", " : "", c->softirqs[j].name,
                                c->softirqs[j].count);
                        count += c->softirqs[j].count;
                }
                if (fclose(w) != 0 || !who)
                        goto oom;
                k = intrusion(a, now, policy, c->cpu, "softirq", c->softirq_ns / 1000, count, who, &log);
                if (k < 0)
                        goto fail;
                logk[5] |= log;
                message_part(&msg, log, "softirqs %s", who);
        }
        if (fclose(msg.f) != 0)
                msg.n_parts = 0;
        msg.f = NULL;
        if (msg.n_parts > 0) {
                char cpu[16];

                snprintf(cpu, sizeof(cpu), "%u", c->cpu);
                (void)log_full_errno_fields(
                        LOG_WARNING, 0,
                        (&(const LogFields){
                                .message_id = AFFINITYD_MESSAGE_CPU_INTRUSION,
                                .policy = policy,
                                .cpu = cpu}),
                        "%s (in %" PRIu64 " ms)", msg.text, r->window_usec / 1000);
                for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                        if (logk[i])
                                mark_logged(a, now, c->cpu, policy, kinds[i]);
        }
        free(msg.text);
        return 0;
oom:
        k = -ENOMEM;
fail:
        if (msg.f)
                fclose(msg.f);
        free(msg.text);
        return k;
}

static int pid_cmp(const void *a, const void *b) {
        pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

        return x < y ? -1 : x > y;
}

/* The managed threads that ran on one CPU of the reserve. */
static int report_reserve(
        CpuAudit *a, uint64_t now, const CpuAuditTarget *t, const CpuAuditReport *r, const CpuAuditCpu *c) {
        char cpu[16], sec[32];

        snprintf(cpu, sizeof(cpu), "%u", c->cpu);
        for (size_t j = 0; j < c->n_tasks; j++) {
                const CpuAuditTask *tk = &c->tasks[j];
                _cleanup_free_ char *who = strprintf("%s[%d]", tk->comm, tk->tid);
                const char *policy = "";
                pid_t *hit;
                bool log;
                int k;

                if (!who)
                        return -ENOMEM;
                hit = bsearch(&tk->pid, t->pids, t->n_pids, sizeof(pid_t), pid_cmp);
                if (hit && t->policies)
                        policy = t->policies[hit - t->pids];
                k = intrusion(a, now, policy, c->cpu, "reserve", tk->cpu_ns / 1000, 0, who, &log);
                if (k < 0)
                        return k;
                if (!log)
                        continue;
                seconds_text(sec, tk->cpu_ns);
                (void)log_full_errno_fields(
                        LOG_WARNING, 0,
                        (&(const LogFields){
                                .message_id = AFFINITYD_MESSAGE_CPU_INTRUSION,
                                .policy = policy,
                                .pid = tk->pid,
                                .comm = tk->comm,
                                .cpu = cpu}),
                        "CPU %u (reserve): %s of policy \"%s\" ran %s (in %" PRIu64 " ms)", c->cpu, who,
                        policy, sec, r->window_usec / 1000);
                mark_logged(a, now, c->cpu, policy, "reserve");
        }
        if (c->irq_count > 0 || c->n_softirqs > 0)
                log_debug(
                        "CPU %u (reserve): %" PRIu64 " IRQs, %zu softirq kinds (expected here)", c->cpu,
                        c->irq_count, c->n_softirqs);
        return 0;
}

static AuditState *state_find(AuditState *l, size_t n, const CpuAuditTarget *t) {
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(l[i].policy, t->policy) && cpuset_equal(&l[i].cpus, &t->cpus))
                        return &l[i];
        return NULL;
}

int cpu_audit_pass(CpuAudit *a) {
        CpuAuditTarget *targets = NULL;
        AuditState *states = NULL;
        CpuAuditRequest *requests = NULL;
        CpuAuditSnapshot **snaps = NULL;
        size_t n_targets = 0, n = 0;
        uint64_t now = now_usec();
        int r;

        r = a->ctx.list_targets(a->ctx.userdata, &targets, &n_targets);
        if (r < 0)
                return r;
        if (n_targets == 0)
                goto done;
        states = calloc(n_targets, sizeof(AuditState));
        requests = calloc(n_targets, sizeof(CpuAuditRequest));
        snaps = calloc(n_targets, sizeof(CpuAuditSnapshot *));
        if (!states || !requests || !snaps) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < n_targets; i++)
                requests[i] = (CpuAuditRequest){
                        .cpus = &targets[i].cpus,
                        .mode = targets[i].policy ? CPU_AUDIT_EXCLUSIVE : CPU_AUDIT_RESERVE,
                        .owner_pids = targets[i].pids,
                        .n_owners = targets[i].n_pids,
                        .max_tasks = CPU_AUDIT_MAX_TASKS,
                };
        /* One walk of /proc for every set. */
        r = cpu_audit_snapshot_many(a->ctx.root, requests, n_targets, snaps);
        if (r < 0) {
                snaps = mfree(snaps);
                goto finish;
        }
        for (size_t i = 0; i < n_targets; i++) {
                const CpuAuditTarget *t = &targets[i];
                _cleanup_(cpu_audit_report_freep) CpuAuditReport *report = NULL;
                AuditState *prev = state_find(a->states, a->n_states, t);

                if (prev && prev->snapshot) {
                        r = cpu_audit_diff(prev->snapshot, snaps[i], &report);
                        if (r < 0)
                                goto finish;
                        for (size_t k = 0; k < report->n_cpus; k++) {
                                r = t->policy ? report_exclusive(a, now, t->policy, report, &report->cpus[k])
                                              : report_reserve(a, now, t, report, &report->cpus[k]);
                                if (r < 0)
                                        goto finish;
                        }
                }
                states[n].policy = t->policy ? strdup(t->policy) : NULL;
                if ((t->policy && !states[n].policy) || cpuset_copy(&states[n].cpus, &t->cpus) < 0) {
                        free(states[n].policy);
                        r = -ENOMEM;
                        goto finish;
                }
                states[n++].snapshot = TAKE_PTR(snaps[i]);
        }
done:
        states_free(a->states, a->n_states);
        a->states = TAKE_PTR(states);
        a->n_states = n;
        r = 0;
finish:
        states_free(states, n);
        for (size_t i = 0; snaps && i < n_targets; i++)
                cpu_audit_snapshot_free(snaps[i]);
        free(snaps);
        free(requests);
        cpu_audit_targets_free(targets, n_targets);
        return r;
}

static uint64_t audit_interval(const CpuAudit *a) {
        return config_effect_interval_usec(*a->ctx.config);
}

static int on_audit_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        CpuAudit *a = userdata;
        int r;

        r = cpu_audit_pass(a);
        if (r < 0)
                log_warning_errno(r, "Failed to audit the exclusive CPUs and the reserve: %m");
        (void)cpu_audit_update(a);
        return 0;
}

int cpu_audit_update(CpuAudit *a) {
        uint64_t interval = *a->ctx.config ? audit_interval(a) : 0;

        if (interval == 0) {
                states_free(a->states, a->n_states);
                a->states = NULL;
                a->n_states = 0;
        }
        return event_periodic_timer_update(
                a->ctx.event, &a->timer, &a->interval_usec, interval, on_audit_timer, a, "cpu-audit",
                "isolation audit timer");
}
