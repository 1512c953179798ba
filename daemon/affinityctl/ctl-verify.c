/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl verify: a one-shot check that placement is in force, for an operator or a canary
 * job. Asks the daemon (as any user) for its policies (ListPolicies, then each Policy object's
 * CPUs, ExclusiveCPUs and MatchedPIDs), then measures in /proc itself over a window (--for=):
 *
 *  - every thread of each policy's processes, sampled every window/10 (at least 100 ms):
 *    CPU time on CPUs outside the policy's (foreign CPU time), migrations, run-queue delay per
 *    sample interval, involuntary switches: the daemon's effect samples (lib/effect.h,
 *    /proc/PID/task/TID/schedstat, stat and sched);
 *  - the policy's exclusive CPUs: the isolation audit of lib/cpu-audit.h (intruder tasks,
 *    IRQs and softirqs that landed there), one snapshot at each end of the window;
 *  - the machine: IRQ and NET_RX softirq skew over the window (lib/irq-skew.h, /proc/interrupts
 *    and /proc/softirqs at each end), reported with the rule that would fix it, a violation of
 *    a policy only when it lands on one of the policy's exclusive CPUs.
 *
 * One verdict per policy; exit 0 when everything is as declared, 1 on a violation, 2 on an
 * error. The thresholds are the VERIFY_* constants below, documented in docs/verifying.md.
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "cpu-audit.h"
#include "cpuset.h"
#include "ctl-bus.h"
#include "ctl.h"
#include "fileio.h"
#include "interrupts.h"
#include "irq-skew.h"
#include "irq.h"
#include "latency-probe.h"
#include "latency.h"
#include "macro.h"
#include "procfs.h"
#include "effect.h"
#include "threadstat.h"

/* verify's exit codes (docs/verifying.md) */
enum {
        VERIFY_EXIT_OK = 0,
        VERIFY_EXIT_VIOLATION = 1,
        VERIFY_EXIT_ERROR = 2,
};

/* Threads sampled at most, over all policies: the rest are counted as untracked. */
#define VERIFY_MAX_THREADS 8192U
/* Intruders named per exclusive CPU. */
#define VERIFY_MAX_INTRUDERS 8U
/* A user task with this much CPU time (ns) on an exclusive CPU in the window is a violation:
 * two USER_HZ ticks, as one tick is the resolution of the task's utime + stime. */
#define VERIFY_INTRUDER_MIN_NS (UINT64_C(20) * 1000000)
/* A kernel thread (ksoftirqd/N, kworker/N, migration/N, ...) on an exclusive CPU is a violation
 * only above this share of the window, in per mille. */
#define VERIFY_KTHREAD_MAX_PER_MILLE 50U
/* The sample interval: window / VERIFY_SAMPLES, at least VERIFY_MIN_INTERVAL_USEC. */
#define VERIFY_SAMPLES           10U
#define VERIFY_MIN_INTERVAL_USEC (UINT64_C(100) * 1000)

/* What verify reads of one thread at one sample. */
typedef struct VerifyThread {
        pid_t pid, tid;
        size_t policy;   /* index into the policies */
        EffectSample es; /* es.starttime: identity with pid and tid */
} VerifyThread;

typedef struct VerifySample {
        VerifyThread *threads; /* sorted by tid */
        size_t n_threads;
        size_t n_untracked; /* beyond VERIFY_MAX_THREADS */
        size_t n_unreadable;
} VerifySample;

typedef struct VerifyPolicy {
        char *name;
        char *cpus_text, *exclusive_text;
        CpuSet cpus, exclusive;
        pid_t *pids; /* MatchedPIDs, ascending */
        size_t n_pids;

        /* over the window */
        size_t n_threads;    /* seen in at least one interval */
        uint64_t cpu_ns;     /* CPU time of its threads */
        uint64_t foreign_ns; /* ... of it on CPUs outside cpus */
        CpuSet foreign_cpus; /* where */
        bool has_migrations;
        uint64_t migrations, involuntary;
        LatencyHistogram run_delay; /* run-queue delay per thread per interval, ns */

        CpuAuditSnapshot *audit_before;
        CpuAuditReport *audit;
} VerifyPolicy;

static void verify_policy_done(VerifyPolicy *p) {
        free(p->name);
        free(p->cpus_text);
        free(p->exclusive_text);
        cpuset_done(&p->cpus);
        cpuset_done(&p->exclusive);
        cpuset_done(&p->foreign_cpus);
        free(p->pids);
        cpu_audit_snapshot_free(p->audit_before);
        cpu_audit_report_free(p->audit);
}

typedef struct Verify {
        VerifyPolicy *policies;
        size_t n_policies;
        uint64_t window_usec, interval_usec;
        size_t n_intervals;
        size_t n_vanished; /* threads gone (or reused) mid-window */
        size_t n_untracked, n_unreadable;
        pid_t *audit_owners; /* scratch: a policy's PIDs and ours (the probe's threads) */

        /* IRQ skew over the window */
        InterruptTable *irqs_before, *softirqs_before; /* NULL: unreadable */
        uint64_t skew_start_usec;
        bool skew_checked;     /* both ends of /proc/interrupts read */
        IrqSkewFindings *skew; /* kind irq, then the net-rx one if any */

        /* --latency */
        CpuSet reserved, probe_cpus;
        int shared_cpu; /* the probe's CPU of no exclusive set, or -1 */
        bool locked;    /* mlockall() succeeded */
        LatencyProbe *probe;
        const LatencyProbeCpu *probe_results;
        size_t n_probe_results;
} Verify;

static void verify_done(Verify *v) {
        for (size_t i = 0; i < v->n_policies; i++)
                verify_policy_done(&v->policies[i]);
        free(v->policies);
        free(v->audit_owners);
        interrupt_table_free(v->irqs_before);
        interrupt_table_free(v->softirqs_before);
        irq_skew_findings_free(v->skew);
        cpuset_done(&v->reserved);
        cpuset_done(&v->probe_cpus);
        latency_probe_free(v->probe);
}

static void verify_sample_done(VerifySample *s) {
        s->threads = mfree(s->threads);
        s->n_threads = s->n_untracked = s->n_unreadable = 0;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int pid_compare(const void *a, const void *b) {
        const pid_t *x = a, *y = b;

        return *x < *y ? -1 : *x > *y;
}

static int thread_compare(const void *a, const void *b) {
        const VerifyThread *x = a, *y = b;

        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Reads the Policy object's properties verify needs. Returns 0 or a negative errno. */
static int read_policy_property(
        sd_bus_message *reply, const char *name, const char *contents, void *userdata) {
        VerifyPolicy *p = userdata;
        const char *s;
        int r;

        if (streq(name, "CPUs") || streq(name, "ExclusiveCPUs")) {
                bool exclusive = streq(name, "ExclusiveCPUs");

                r = sd_bus_message_read(reply, "s", &s);
                if (r < 0)
                        return r;
                r = cpuset_parse_list(s, exclusive ? &p->exclusive : &p->cpus, NULL);
                if (r < 0)
                        return r;
                return free_and_strdup(exclusive ? &p->exclusive_text : &p->cpus_text, s);
        }
        if (streq(name, "MatchedPIDs")) {
                const void *a;
                size_t size;

                r = sd_bus_message_read_array(reply, 'u', &a, &size);
                if (r < 0)
                        return r;
                p->n_pids = size / sizeof(uint32_t);
                if (p->n_pids > 0) {
                        p->pids = calloc(p->n_pids, sizeof(pid_t));
                        if (!p->pids)
                                return -ENOMEM;
                        for (size_t i = 0; i < p->n_pids; i++)
                                p->pids[i] = (pid_t)((const uint32_t *)a)[i];
                        qsort(p->pids, p->n_pids, sizeof(pid_t), pid_compare);
                }
                return 0;
        }
        return sd_bus_message_skip(reply, contents);
}

static int policy_get_all(sd_bus *bus, VerifyPolicy *p) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *path = NULL;
        int r;

        r = sd_bus_path_encode(AFFINITYD_POLICY_PATH_PREFIX, p->name, &path);
        if (r < 0)
                return r;
        r = sd_bus_call_method(
                bus, AFFINITYD_BUS_NAME, path, "org.freedesktop.DBus.Properties", "GetAll", &error, &reply,
                "s", AFFINITYD_POLICY_INTERFACE);
        if (r < 0) {
                fprintf(stderr, "Failed to read policy %s (%s): %s\n", p->name, path,
                        error.message ?: strerror(-r));
                return -EIO;
        }
        r = ctl_read_properties(reply, read_policy_property, p);
        if (r < 0)
                fprintf(stderr, "Failed to parse the properties of policy %s: %s\n", p->name, strerror(-r));
        return r;
}

/*
 * The policies in force (ListPolicies; only those named in names, if any, each of which must
 * exist) with their properties. Returns 0, or VERIFY_EXIT_ERROR after saying why.
 */
static int verify_load_policies(sd_bus *bus, char **names, Verify *v) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = ctl_call(bus, AFFINITYD_BUS_INTERFACE, "ListPolicies", 0, &error, &reply, NULL);
        if (r < 0) {
                (void)ctl_call_failed("list the daemon's policies", r, &error);
                return VERIFY_EXIT_ERROR;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssuss)");
        while (r >= 0) {
                const char *name, *file, *cpus, *reason;
                VerifyPolicy *a;
                uint32_t line;
                bool wanted = !names || !names[0];

                r = sd_bus_message_read(reply, "(ssuss)", &name, &file, &line, &cpus, &reason);
                if (r <= 0)
                        break;
                for (char **n = names; n && *n; n++)
                        wanted = wanted || streq(*n, name);
                if (!wanted)
                        continue;
                a = reallocarray(v->policies, v->n_policies + 1, sizeof(VerifyPolicy));
                if (!a) {
                        r = -ENOMEM;
                        break;
                }
                v->policies = a;
                a[v->n_policies] = (VerifyPolicy){.name = strdup(name)};
                latency_reset(&a[v->n_policies].run_delay);
                v->n_policies++;
                if (!a[v->n_policies - 1].name) {
                        r = -ENOMEM;
                        break;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                fprintf(stderr, "Failed to parse the daemon's policy list: %s\n", strerror(-r));
                return VERIFY_EXIT_ERROR;
        }
        for (char **n = names; n && *n; n++) {
                bool found = false;

                for (size_t i = 0; i < v->n_policies && !found; i++)
                        found = streq(v->policies[i].name, *n);
                if (!found) {
                        fprintf(stderr, "No policy named \"%s\" (see affinityctl policies).\n", *n);
                        return VERIFY_EXIT_ERROR;
                }
        }
        for (size_t i = 0; i < v->n_policies; i++)
                if (policy_get_all(bus, &v->policies[i]) < 0)
                        return VERIFY_EXIT_ERROR;
        return 0;
}

/* Samples every thread of every policy's processes, bounded by VERIFY_MAX_THREADS. Returns 0 or
 * -ENOMEM. */
static int verify_sample(const Verify *v, VerifySample *ret) {
        _cleanup_(verify_sample_done) VerifySample s = {};

        s.threads = calloc(VERIFY_MAX_THREADS, sizeof(VerifyThread));
        if (!s.threads)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_policies; i++)
                for (size_t k = 0; k < v->policies[i].n_pids; k++) {
                        _cleanup_free_ pid_t *tids = NULL;
                        size_t n_tids = 0;
                        int r;

                        r = procfs_list_tids("/", v->policies[i].pids[k], &tids, &n_tids);
                        /* hidepid=2 hides the process: it is there (kill(2) says EPERM, not
                         * ESRCH) but /proc has no entry for us */
                        if (r == -EACCES || r == -EPERM ||
                            (r == -ENOENT && kill(v->policies[i].pids[k], 0) < 0 && errno == EPERM))
                                s.n_unreadable++;
                        if (r < 0)
                                continue; /* gone, or hidden */
                        for (size_t j = 0; j < n_tids; j++) {
                                if (s.n_threads >= VERIFY_MAX_THREADS) {
                                        s.n_untracked++;
                                        continue;
                                }
                                s.threads[s.n_threads] =
                                        (VerifyThread){.pid = v->policies[i].pids[k], .tid = tids[j]};
                                r = effect_sample_thread(
                                        "/", v->policies[i].pids[k], tids[j], NULL,
                                        &s.threads[s.n_threads].es);
                                if (r == -EACCES || r == -EPERM)
                                        s.n_unreadable++;
                                if (r < 0)
                                        continue;
                                s.threads[s.n_threads++].policy = i;
                        }
                }
        if (s.n_threads > 0)
                qsort(s.threads, s.n_threads, sizeof(VerifyThread), thread_compare);
        *ret = s;
        s = (VerifySample){};
        return 0;
}

/* Adds the interval prev → now of every thread present in both with the same identity (PID, TID,
 * starttime) to its policy; threads of prev missing from now count as vanished. */
static int verify_account(Verify *v, const VerifySample *prev, const VerifySample *now) {
        for (size_t i = 0; i < prev->n_threads; i++) {
                const VerifyThread *p = &prev->threads[i], *t;
                EffectTotals d = {};
                VerifyPolicy *pol;

                t = now->n_threads > 0
                        ? bsearch(p, now->threads, now->n_threads, sizeof(VerifyThread), thread_compare)
                        : NULL;
                if (!t || t->pid != p->pid || t->es.starttime != p->es.starttime || t->policy != p->policy) {
                        v->n_vanished++;
                        continue;
                }
                pol = &v->policies[t->policy];
                effect_totals_add(&d, &p->es, &t->es, &pol->cpus);
                pol->cpu_ns += d.cpu_ns;
                if (d.foreign_cpu_ns > 0) {
                        unsigned where = cpuset_contains(&pol->cpus, t->es.last_cpu) ? p->es.last_cpu
                                                                                     : t->es.last_cpu;
                        int r;

                        pol->foreign_ns += d.foreign_cpu_ns;
                        r = cpuset_add(&pol->foreign_cpus, where);
                        if (r < 0)
                                return r;
                }
                if (d.has_migrations) {
                        pol->has_migrations = true;
                        pol->migrations += d.migrations;
                }
                pol->involuntary += d.involuntary;
                /* an interval in which the thread neither ran nor waited says nothing */
                if (d.run_delay_ns > 0 || d.timeslices > 0)
                        latency_record(&pol->run_delay, d.run_delay_ns);
        }
        return 0;
}

/* Takes the audit snapshot of every policy with exclusive CPUs (after: the report too).
 * Returns 0 or a negative errno. */
static int verify_audit(Verify *v, bool after) {
        for (size_t i = 0; i < v->n_policies; i++) {
                VerifyPolicy *p = &v->policies[i];
                _cleanup_(cpu_audit_snapshot_freep) CpuAuditSnapshot *s = NULL;
                pid_t *a;
                int r;

                if (cpuset_is_empty(&p->exclusive))
                        continue;
                /* verify's own threads (the sampler, the probe's timers) are not intruders */
                a = reallocarray(v->audit_owners, p->n_pids + 1, sizeof(pid_t));
                if (!a)
                        return -ENOMEM;
                v->audit_owners = a;
                if (p->n_pids > 0)
                        memcpy(a, p->pids, p->n_pids * sizeof(pid_t));
                a[p->n_pids] = getpid();
                qsort(a, p->n_pids + 1, sizeof(pid_t), pid_compare);
                r = cpu_audit_snapshot(
                        "/", &p->exclusive, CPU_AUDIT_EXCLUSIVE, a, p->n_pids + 1, VERIFY_MAX_INTRUDERS, &s);
                if (r < 0)
                        return r;
                if (!after) {
                        p->audit_before = TAKE_PTR(s);
                        continue;
                }
                r = cpu_audit_diff(p->audit_before, s, &p->audit);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void sleep_usec(uint64_t usec) {
        struct timespec ts = {.tv_sec = (time_t)(usec / 1000000), .tv_nsec = (long)(usec % 1000000) * 1000};

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/*
 * The skew check's reading at one end of the window: at the start, /proc/interrupts and
 * /proc/softirqs are kept; at the end, the skew of each device's IRQs and of NET_RX between the
 * two readings goes to v->skew. An unreadable file leaves the check out (skew_checked false),
 * never an error. Returns 0 or -ENOMEM.
 */
static int verify_skew(Verify *v, bool after) {
        _cleanup_(interrupt_table_freep) InterruptTable *irqs = NULL, *softirqs = NULL;
        _cleanup_(irq_skew_devices_freep) IrqSkewDevices *devs = NULL;
        _cleanup_strv_free_ char **single = NULL;
        _cleanup_free_ char *e1 = NULL, *e2 = NULL;
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        IrqSkewFinding rx = {};
        uint64_t window;
        int r;

        if (interrupts_read_full("/proc/interrupts", INTERRUPTS_SKIP_BAD_LINES, &irqs, &e1) < 0)
                irqs = NULL;
        if (interrupts_read_full("/proc/softirqs", INTERRUPTS_SKIP_BAD_LINES, &softirqs, &e2) < 0)
                softirqs = NULL;
        if (!after) {
                v->irqs_before = TAKE_PTR(irqs);
                v->softirqs_before = TAKE_PTR(softirqs);
                v->skew_start_usec = now_usec();
                return 0;
        }
        window = now_usec() - v->skew_start_usec;
        if (!v->irqs_before || !irqs || window == 0)
                return 0;
        r = irq_skew_devices_load("/", irqs, &devs);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0; /* no /sys/class/net: nothing to say about devices */
        r = irq_skew_detect_irqs(v->irqs_before, irqs, window, devs, &th, &v->skew);
        if (r < 0)
                return r;
        v->skew_checked = true;
        if (!v->softirqs_before || !softirqs)
                return 0;
        r = irq_skew_devices_single_queue(devs, &single);
        if (r < 0)
                return r;
        r = irq_skew_detect_net_rx(v->softirqs_before, softirqs, window, single, &th, &rx);
        if (r <= 0)
                return r;
        {
                IrqSkewFinding *a =
                        reallocarray(v->skew->findings, v->skew->n_findings + 1, sizeof(IrqSkewFinding));

                if (!a) {
                        irq_skew_finding_done(&rx);
                        return -ENOMEM;
                }
                v->skew->findings = a;
                a[v->skew->n_findings++] = rx;
        }
        return 0;
}

/* Measures over the window. Returns 0 or a negative errno. */
static int verify_measure(Verify *v) {
        _cleanup_(verify_sample_done) VerifySample prev = {};
        uint64_t start, deadline;
        int r;

        r = verify_audit(v, false);
        if (r < 0)
                return r;
        r = verify_skew(v, false);
        if (r < 0)
                return r;
        r = verify_sample(v, &prev);
        if (r < 0)
                return r;
        start = now_usec();
        deadline = start + v->window_usec;
        for (uint64_t next = start + v->interval_usec;; next += v->interval_usec) {
                _cleanup_(verify_sample_done) VerifySample now = {};
                uint64_t t = now_usec();

                if (next > deadline)
                        next = deadline;
                if (next > t)
                        sleep_usec(next - t);
                r = verify_sample(v, &now);
                if (r < 0)
                        return r;
                r = verify_account(v, &prev, &now);
                if (r < 0)
                        return r;
                v->n_intervals++;
                v->n_untracked = MAX(v->n_untracked, now.n_untracked);
                v->n_unreadable = MAX(v->n_unreadable, now.n_unreadable);
                verify_sample_done(&prev);
                prev = now;
                now = (VerifySample){};
                if (next >= deadline)
                        break;
        }
        r = verify_skew(v, true);
        if (r < 0)
                return r;
        return verify_audit(v, true);
}

/* Whether the task's time on an exclusive CPU makes a violation (see the VERIFY_* thresholds). */
static bool intruder_violates(const Verify *v, const CpuAuditTask *t) {
        if (t->kthread)
                return t->cpu_ns * 1000 > v->window_usec * 1000 * VERIFY_KTHREAD_MAX_PER_MILLE;
        return t->cpu_ns >= VERIFY_INTRUDER_MIN_NS;
}

/* Whether the IRQ could be moved off the CPU (not kernel-managed): /proc/irq/N/smp_affinity. */
static bool irq_movable(unsigned irq) {
        return irq_is_managed("/", irq) == 0;
}

/* Writes the violations of p, "; "-separated, to f. Returns how many. */
static size_t policy_violations(const Verify *v, const VerifyPolicy *p, FILE *f) {
        size_t n = 0;

        if (p->foreign_ns > 0) {
                _cleanup_free_ char *l = cpuset_to_string(&p->foreign_cpus);

                fprintf(f, "%sforeign CPU time %.1f ms on CPU %s", n++ ? "; " : "",
                        (double)p->foreign_ns / 1e6, l ?: "?");
        }
        for (size_t c = 0; p->audit && c < p->audit->n_cpus; c++) {
                const CpuAuditCpu *cpu = &p->audit->cpus[c];

                for (size_t k = 0; k < cpu->n_tasks; k++)
                        if (intruder_violates(v, &cpu->tasks[k]))
                                fprintf(f, "%sintruder %s%s[%d] %.1f ms on CPU %u", n++ ? "; " : "",
                                        cpu->tasks[k].kthread ? "kernel thread " : "", cpu->tasks[k].comm,
                                        (int)cpu->tasks[k].tid, (double)cpu->tasks[k].cpu_ns / 1e6,
                                        cpu->cpu);
                if (cpu->other_ns >= VERIFY_INTRUDER_MIN_NS)
                        fprintf(f, "%s%zu more intruders %.1f ms on CPU %u", n++ ? "; " : "",
                                cpu->n_other_tasks, (double)cpu->other_ns / 1e6, cpu->cpu);
                for (size_t k = 0; k < cpu->n_irqs; k++)
                        if (irq_movable(cpu->irqs[k].irq))
                                fprintf(f, "%sIRQ %u (%s) fired %" PRIu64 " times on CPU %u",
                                        n++ ? "; " : "", cpu->irqs[k].irq,
                                        cpu->irqs[k].actions[0] ? cpu->irqs[k].actions : "-",
                                        cpu->irqs[k].count, cpu->cpu);
        }
        for (size_t k = 0; v->skew && k < v->skew->n_findings; k++) {
                const IrqSkewFinding *x = &v->skew->findings[k];

                if (cpuset_contains(&p->exclusive, x->cpu))
                        fprintf(f, "%s%s skew of %s onto exclusive CPU %u (%.0f%%)", n++ ? "; " : "",
                                x->kind == IRQ_SKEW_IRQ ? "IRQ" : "NET_RX softirq", x->device, x->cpu,
                                x->share * 100);
        }
        return n;
}

/* The verdict line's text into *ret: "ok", "pending" or "VIOLATION: ...". Returns true on a
 * violation. */
static bool policy_verdict(const Verify *v, const VerifyPolicy *p, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0, n;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f) {
                *ret = NULL;
                return false;
        }
        n = policy_violations(v, p, f);
        fclose(f);
        if (n > 0) {
                if (asprintf(ret, "VIOLATION: %s", text) < 0)
                        *ret = NULL;
                return true;
        }
        *ret = strdup(cpuset_is_empty(&p->cpus) ? "pending" : "ok");
        return false;
}

static void json_audit(const Verify *v, JsonWriter *w, const CpuAuditReport *a) {
        json_begin_array(w);
        for (size_t c = 0; c < a->n_cpus; c++) {
                const CpuAuditCpu *cpu = &a->cpus[c];

                json_begin_object(w);
                json_field_uint(w, "cpu", cpu->cpu);
                json_field_bool(w, "online", cpu->online);
                json_field_uint(w, "busy_ns", cpu->busy_ns);
                json_field_uint(w, "owners_ns", cpu->owners_ns);
                json_field_uint(w, "unnamed_ns", cpu->unnamed_ns);
                json_key(w, "intruders");
                json_begin_array(w);
                for (size_t k = 0; k < cpu->n_tasks; k++) {
                        json_begin_object(w);
                        json_field_uint(w, "pid", (uint64_t)cpu->tasks[k].pid);
                        json_field_uint(w, "tid", (uint64_t)cpu->tasks[k].tid);
                        json_field_string(w, "comm", cpu->tasks[k].comm);
                        json_field_bool(w, "kernel_thread", cpu->tasks[k].kthread);
                        if (cpu->tasks[k].unit)
                                json_field_string(w, "unit", cpu->tasks[k].unit);
                        else
                                json_field_null(w, "unit");
                        json_field_uint(w, "cpu_ns", cpu->tasks[k].cpu_ns);
                        json_field_bool(w, "violation", intruder_violates(v, &cpu->tasks[k]));
                        json_end_object(w);
                }
                json_end_array(w);
                json_field_uint(w, "other_intruders", cpu->n_other_tasks);
                json_field_uint(w, "other_intruders_ns", cpu->other_ns);
                json_key(w, "irqs");
                json_begin_array(w);
                for (size_t k = 0; k < cpu->n_irqs; k++) {
                        json_begin_object(w);
                        json_field_uint(w, "irq", cpu->irqs[k].irq);
                        json_field_string(w, "actions", cpu->irqs[k].actions);
                        json_field_uint(w, "count", cpu->irqs[k].count);
                        json_field_bool(w, "movable", irq_movable(cpu->irqs[k].irq));
                        json_end_object(w);
                }
                json_end_array(w);
                json_key(w, "softirqs");
                json_begin_object(w);
                for (size_t k = 0; k < cpu->n_softirqs; k++)
                        json_field_uint(w, cpu->softirqs[k].name, cpu->softirqs[k].count);
                json_end_object(w);
                json_end_object(w);
        }
        json_end_array(w);
}

static void json_latency(const Verify *v, JsonWriter *w);

static void print_json(const Verify *v, bool violation) {
        JsonWriter w = JSON_WRITER(stdout);

        json_begin_object(&w);
        json_field_uint(&w, "window_usec", v->window_usec);
        json_field_uint(&w, "interval_usec", v->interval_usec);
        json_field_uint(&w, "intervals", v->n_intervals);
        json_field_uint(&w, "vanished_threads", v->n_vanished);
        json_field_uint(&w, "untracked_threads", v->n_untracked);
        json_field_uint(&w, "unreadable", v->n_unreadable);
        json_key(&w, "irq_skew");
        if (!v->skew_checked)
                json_null(&w);
        else {
                json_begin_array(&w);
                for (size_t k = 0; v->skew && k < v->skew->n_findings; k++) {
                        const IrqSkewFinding *x = &v->skew->findings[k];

                        json_begin_object(&w);
                        json_field_string(&w, "kind", irq_skew_kind_to_string(x->kind));
                        json_field_string(&w, "device", x->device);
                        json_field_uint(&w, "cpu", x->cpu);
                        json_key(&w, "share");
                        json_fixed(&w, x->share, 3);
                        json_field_uint(&w, "count", x->count);
                        json_key(&w, "rate");
                        json_fixed(&w, x->rate, 1);
                        json_field_string(&w, "irqs", x->irqs_text ?: "");
                        json_field_string(&w, "suggestion", x->suggestion ?: "");
                        json_end_object(&w);
                }
                json_end_array(&w);
        }
        json_field_bool(&w, "violation", violation);
        json_latency(v, &w);
        json_key(&w, "policies");
        json_begin_array(&w);
        for (size_t i = 0; i < v->n_policies; i++) {
                const VerifyPolicy *p = &v->policies[i];
                _cleanup_free_ char *verdict = NULL, *foreign = cpuset_to_string(&p->foreign_cpus);
                bool bad = policy_verdict(v, p, &verdict);

                json_begin_object(&w);
                json_field_string(&w, "policy", p->name);
                json_field_string(&w, "cpus", p->cpus_text ?: "");
                json_field_string(&w, "exclusive_cpus", p->exclusive_text ?: "");
                json_field_uint(&w, "processes", p->n_pids);
                json_field_uint(&w, "cpu_ns", p->cpu_ns);
                json_field_uint(&w, "foreign_cpu_ns", p->foreign_ns);
                json_field_string(&w, "foreign_cpus", foreign ?: "");
                if (p->has_migrations)
                        json_field_uint(&w, "migrations", p->migrations);
                else
                        json_field_null(&w, "migrations");
                json_field_uint(&w, "involuntary_switches", p->involuntary);
                json_field_uint(&w, "run_delay_per_interval_samples", p->run_delay.count);
                json_field_uint(&w, "run_delay_per_interval_p50_ns", latency_quantile(&p->run_delay, 0.50));
                json_field_uint(&w, "run_delay_per_interval_p99_ns", latency_quantile(&p->run_delay, 0.99));
                json_field_uint(&w, "run_delay_per_interval_max_ns", p->run_delay.max_ns);
                json_key(&w, "audit");
                if (p->audit)
                        json_audit(v, &w, p->audit);
                else
                        json_null(&w);
                json_field_bool(&w, "violation", bad);
                json_field_string(&w, "verdict", verdict ?: "");
                json_end_object(&w);
        }
        json_end_array(&w);
        json_end_object(&w);
        json_end_document(&w);
}

static void print_text(const Verify *v) {
        for (size_t i = 0; i < v->n_policies; i++) {
                const VerifyPolicy *p = &v->policies[i];
                _cleanup_free_ char *verdict = NULL;
                char p50[32], p99[32], max[32];

                (void)policy_verdict(v, p, &verdict);
                format_nsec(latency_quantile(&p->run_delay, 0.50), p50, sizeof(p50));
                format_nsec(latency_quantile(&p->run_delay, 0.99), p99, sizeof(p99));
                format_nsec(p->run_delay.max_ns, max, sizeof(max));
                printf("%s: cpus %s%s%s, %zu process%s, cpu %.1f ms (foreign %.1f ms), ", p->name,
                       p->cpus_text && p->cpus_text[0] ? p->cpus_text : "-",
                       p->exclusive_text && p->exclusive_text[0] ? " exclusive " : "",
                       p->exclusive_text ?: "", p->n_pids, p->n_pids == 1 ? "" : "es",
                       (double)p->cpu_ns / 1e6, (double)p->foreign_ns / 1e6);
                if (p->has_migrations)
                        printf("%" PRIu64 " migrations, ", p->migrations);
                else
                        printf("migrations unknown, ");
                printf("%" PRIu64
                       " involuntary switches, run-queue delay per interval p50 %s p99 %s max %s\n",
                       p->involuntary, p50, p99, max);
                for (size_t c = 0; p->audit && c < p->audit->n_cpus; c++) {
                        const CpuAuditCpu *cpu = &p->audit->cpus[c];

                        printf("  CPU %u: busy %.1f ms, owners %.1f ms, unnamed %.1f ms, IRQs %" PRIu64 "\n",
                               cpu->cpu, (double)cpu->busy_ns / 1e6, (double)cpu->owners_ns / 1e6,
                               (double)cpu->unnamed_ns / 1e6, cpu->irq_count);
                        for (size_t k = 0; k < cpu->n_tasks; k++)
                                printf("    %s %s[%d] %.1f ms%s\n",
                                       cpu->tasks[k].kthread ? "kernel thread" : "task", cpu->tasks[k].comm,
                                       (int)cpu->tasks[k].tid, (double)cpu->tasks[k].cpu_ns / 1e6,
                                       intruder_violates(v, &cpu->tasks[k]) ? " (violation)" : "");
                        for (size_t k = 0; k < cpu->n_irqs; k++)
                                printf("    IRQ %u %s: %" PRIu64 "%s\n", cpu->irqs[k].irq,
                                       cpu->irqs[k].actions, cpu->irqs[k].count,
                                       irq_movable(cpu->irqs[k].irq) ? " (movable: violation)"
                                                                     : " (managed)");
                        for (size_t k = 0; k < cpu->n_softirqs; k++)
                                printf("    softirq %s: %" PRIu64 "\n", cpu->softirqs[k].name,
                                       cpu->softirqs[k].count);
                }
                printf("%s: %s\n", p->name, verdict ?: "?");
        }
        for (size_t k = 0; v->skew && k < v->skew->n_findings; k++) {
                const IrqSkewFinding *x = &v->skew->findings[k];

                printf("IRQ skew: %s %s on CPU %u, %.0f%% of %" PRIu64 " (%.0f/s)%s%s; fix: %s\n",
                       irq_skew_kind_to_string(x->kind), x->device, x->cpu, x->share * 100, x->count,
                       x->rate, x->irqs_text && x->irqs_text[0] ? ", IRQs " : "", x->irqs_text ?: "",
                       x->suggestion ?: "-");
        }
        if (!arg_no_legend) {
                printf("\n%zu polic%s over %.2fs in %zu intervals; %zu thread%s vanished", v->n_policies,
                       v->n_policies == 1 ? "y" : "ies", (double)v->window_usec / 1e6, v->n_intervals,
                       v->n_vanished, v->n_vanished == 1 ? "" : "s");
                if (v->n_untracked > 0)
                        printf(", %zu beyond the %u tracked", v->n_untracked, VERIFY_MAX_THREADS);
                if (v->n_unreadable > 0)
                        printf(", %zu unreadable (hidepid=?)", v->n_unreadable);
                if (!v->skew_checked)
                        printf("; IRQ skew: not checked (/proc/interrupts unreadable).\n");
                else if (v->skew->n_findings == 0)
                        printf("; no IRQ skew.\n");
                else
                        printf("; IRQ skew: %zu finding%s.\n", v->skew->n_findings,
                               v->skew->n_findings == 1 ? "" : "s");
        }
}

/*
 * The probe's CPUs: every exclusive CPU of the policies, and one shared CPU (online, of no
 * exclusive set; outside the Manager's ReservedCPUs if one is), into v->probe_cpus. Returns 0 or
 * a negative errno.
 */
static int verify_probe_cpus(sd_bus *bus, Verify *v) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *reserved = NULL, *online_text = NULL;
        _cleanup_(cpuset_done) CpuSet online = {}, shared = {};
        int r;

        r = sd_bus_get_property_string(
                bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ReservedCPUs", &error,
                &reserved);
        if (r >= 0)
                (void)cpuset_parse_list(reserved, &v->reserved, NULL);
        r = read_full_file("/sys/devices/system/cpu/online", 4096, 0, &online_text, NULL);
        if (r < 0)
                return r;
        r = cpuset_parse_list(online_text, &online, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < v->n_policies; i++) {
                r = cpuset_or(&v->probe_cpus, &v->policies[i].exclusive);
                if (r < 0)
                        return r;
        }
        r = cpuset_copy(&shared, &online);
        if (r < 0)
                return r;
        cpuset_andnot(&shared, &v->probe_cpus);
        v->shared_cpu = -1;
        CPUSET_FOREACH (c, &shared)
                if (v->shared_cpu < 0 ||
                    (cpuset_contains(&v->reserved, (unsigned)v->shared_cpu) &&
                     !cpuset_contains(&v->reserved, (unsigned)c)))
                        v->shared_cpu = c;
        if (v->shared_cpu >= 0)
                return cpuset_add(&v->probe_cpus, (unsigned)v->shared_cpu);
        return 0;
}

static void print_latency_text(const Verify *v) {
        printf("\nWake-up latency (clock_nanosleep every 1 ms%s):\n",
               v->locked ? ", memory locked" : ", memory not locked: not root");
        for (size_t i = 0; i < v->n_probe_results; i++) {
                const LatencyProbeCpu *c = &v->probe_results[i];
                char p50[32], p99[32], max[32];

                if (c->error < 0) {
                        printf("  CPU %u: not measured: %s\n", c->cpu, strerror(-c->error));
                        continue;
                }
                format_nsec(latency_quantile(&c->wakeup, 0.50), p50, sizeof(p50));
                format_nsec(latency_quantile(&c->wakeup, 0.99), p99, sizeof(p99));
                format_nsec(c->wakeup.max_ns, max, sizeof(max));
                printf("  CPU %u (%s, %s): p50 %s p99 %s max %s over %" PRIu64 " wake-ups\n", c->cpu,
                       (int)c->cpu == v->shared_cpu ? "shared" : "exclusive",
                       c->fifo ? "SCHED_FIFO 95" : "SCHED_OTHER: SCHED_FIFO not permitted", p50, p99, max,
                       c->wakeup.count);
        }
}

static void json_latency(const Verify *v, JsonWriter *w) {
        json_key(w, "latency");
        if (!v->probe) {
                json_null(w);
                return;
        }
        json_begin_object(w);
        json_field_uint(w, "interval_ns", 1000000);
        json_field_bool(w, "memory_locked", v->locked);
        json_key(w, "cpus");
        json_begin_array(w);
        for (size_t i = 0; i < v->n_probe_results; i++) {
                const LatencyProbeCpu *c = &v->probe_results[i];

                json_begin_object(w);
                json_field_uint(w, "cpu", c->cpu);
                json_field_string(w, "kind", (int)c->cpu == v->shared_cpu ? "shared" : "exclusive");
                json_field_string(w, "scheduler", c->fifo ? "SCHED_FIFO" : "SCHED_OTHER");
                if (c->error < 0)
                        json_field_string(w, "error", strerror(-c->error));
                json_field_uint(w, "wakeups", c->wakeup.count);
                json_field_uint(w, "wakeup_latency_p50_ns", latency_quantile(&c->wakeup, 0.50));
                json_field_uint(w, "wakeup_latency_p99_ns", latency_quantile(&c->wakeup, 0.99));
                json_field_uint(w, "wakeup_latency_max_ns", c->wakeup.max_ns);
                json_end_object(w);
        }
        json_end_array(w);
        json_end_object(w);
}

/* Moves verify's own (sampling) thread off every exclusive CPU, where it would intrude; best
 * effort (sched_setaffinity(2) to the online CPUs of no exclusive set, when there are any). The
 * probe's threads pin themselves. */
static void verify_stay_off_exclusive(const Verify *v) {
        _cleanup_free_ char *online_text = NULL;
        _cleanup_(cpuset_done) CpuSet cpus = {};
        _cleanup_free_ cpu_set_t *set = NULL;
        size_t size;

        if (read_full_file("/sys/devices/system/cpu/online", 4096, 0, &online_text, NULL) < 0 ||
            cpuset_parse_list(online_text, &cpus, NULL) < 0)
                return;
        for (size_t i = 0; i < v->n_policies; i++)
                cpuset_andnot(&cpus, &v->policies[i].exclusive);
        if (cpuset_is_empty(&cpus) || cpuset_to_cpu_set(&cpus, &set, &size) < 0)
                return;
        (void)sched_setaffinity(0, size, set);
}

int verb_verify(char **args) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(verify_done) Verify v = {
                .window_usec = arg_for_usec,
        };
        bool violation = false;
        int r;

        v.interval_usec = MAX(v.window_usec / VERIFY_SAMPLES, VERIFY_MIN_INTERVAL_USEC);
        r = ctl_connect(&bus);
        if (r > 0)
                return VERIFY_EXIT_ERROR;
        r = verify_load_policies(bus, args, &v);
        if (r > 0)
                return r;
        if (arg_latency) {
                r = verify_probe_cpus(bus, &v);
                if (r >= 0 && cpuset_is_empty(&v.probe_cpus))
                        r = -ENOENT;
                if (r < 0) {
                        fprintf(stderr, "Failed to choose the latency probe's CPUs: %s\n", strerror(-r));
                        return VERIFY_EXIT_ERROR;
                }
                v.locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0;
                r = latency_probe_start(&v.probe_cpus, UINT64_C(1000000), &v.probe);
                if (r < 0) {
                        fprintf(stderr, "Failed to start the latency probe: %s\n", strerror(-r));
                        return VERIFY_EXIT_ERROR;
                }
        }
        verify_stay_off_exclusive(&v);
        r = verify_measure(&v);
        if (r >= 0 && v.probe)
                r = latency_probe_stop(v.probe, &v.probe_results, &v.n_probe_results);
        if (r < 0) {
                fprintf(stderr, "Failed to measure: %s\n", strerror(-r));
                return VERIFY_EXIT_ERROR;
        }
        for (size_t i = 0; i < v.n_policies; i++) {
                _cleanup_free_ char *verdict = NULL;

                violation = policy_verdict(&v, &v.policies[i], &verdict) || violation;
        }
        if (arg_json)
                print_json(&v, violation);
        else {
                print_text(&v);
                if (v.probe)
                        print_latency_text(&v);
        }
        return violation ? VERIFY_EXIT_VIOLATION : VERIFY_EXIT_OK;
}
