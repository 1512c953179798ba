/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl top: asks the daemon only which processes it manages (ListProcesses) and samples
 * their threads in /proc itself (stat, sched, schedstat, status: readable by anyone), so it
 * costs the daemon one call per interval; shows per policy and per thread the migrations,
 * run-queue delay and involuntary switches over each interval.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "bus-names.h"
#include "ctl-bus.h"
#include "ctl.h"
#include "macro.h"
#include "procfs.h"
#include "cpuset.h"
#include "effect.h"
#include "threadstat.h"

/* What top reads of one thread of a managed process, at one moment. */
typedef struct TaskSample {
        pid_t pid, tid;
        char comm[16];
        char *policy;
        CpuSet cpus;     /* the CPUs ListProcesses gives its process: foreign CPU time is outside them */
        EffectSample es; /* lib/effect.h: what the daemon's effect sampler reads too */
} TaskSample;

typedef struct Sample {
        TaskSample *tasks; /* sorted by tid */
        size_t n_tasks;
        size_t n_processes;
        uint64_t time_usec; /* CLOCK_MONOTONIC */
} Sample;

static void sample_done(Sample *s) {
        for (size_t i = 0; i < s->n_tasks; i++) {
                free(s->tasks[i].policy);
                cpuset_done(&s->tasks[i].cpus);
        }
        s->tasks = mfree(s->tasks);
        s->n_tasks = s->n_processes = 0;
}

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Samples one thread: its comm and effect_sample_thread() (/proc/PID/task/TID/schedstat, stat,
 * sched: readable by anyone). Returns 0, -ESRCH (gone), -EBADMSG, -errno.
 */
static int sample_task(pid_t pid, pid_t tid, TaskSample *ret) {
        TaskSample t = {.pid = pid, .tid = tid};
        int r;

        r = procfs_read_comm("/", pid, tid, t.comm);
        if (r < 0)
                return r;
        r = effect_sample_thread("/", pid, tid, NULL, &t.es);
        if (r < 0)
                return r;
        *ret = t;
        return 0;
}

static int task_sample_compare(const void *a, const void *b) {
        const TaskSample *x = a, *y = b;

        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * Reads ListProcesses() from the daemon and samples every thread of every process listed.
 * Threads and processes that vanish meanwhile are left out. Returns 0, or an exit code (> 0)
 * after saying what went wrong.
 */
static int sample_take(sd_bus *bus, Sample *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sample_done) Sample s = {};
        int r;

        r = ctl_call(bus, AFFINITYD_BUS_INTERFACE, "ListProcesses", 0, &error, &reply, NULL);
        if (r < 0)
                return ctl_call_failed("list the daemon's processes", r, &error);
        r = sd_bus_message_enter_container(reply, 'a', "(usss)");
        while (r >= 0) {
                _cleanup_free_ pid_t *tids = NULL;
                const char *comm, *policy, *cpus;
                size_t n_tids = 0;
                uint32_t pid;

                r = sd_bus_message_read(reply, "(usss)", &pid, &comm, &policy, &cpus);
                if (r <= 0)
                        break;
                if (procfs_list_tids("/", (pid_t)pid, &tids, &n_tids) < 0)
                        continue; /* gone */
                s.n_processes++;
                for (size_t i = 0; i < n_tids; i++) {
                        TaskSample t, *a;

                        if (sample_task((pid_t)pid, tids[i], &t) < 0)
                                continue;
                        t.policy = strdup(policy);
                        (void)cpuset_parse_list(cpus, &t.cpus, NULL); /* "": nothing foreign */
                        a = reallocarray(s.tasks, s.n_tasks + 1, sizeof(TaskSample));
                        if (!t.policy || !a) {
                                free(t.policy);
                                cpuset_done(&t.cpus);
                                if (a)
                                        s.tasks = a;
                                r = -ENOMEM;
                                break;
                        }
                        s.tasks = a;
                        s.tasks[s.n_tasks++] = t;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                fprintf(stderr, "Failed to sample the daemon's processes: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        s.time_usec = now_usec(CLOCK_MONOTONIC);
        if (s.n_tasks > 0)
                qsort(s.tasks, s.n_tasks, sizeof(TaskSample), task_sample_compare);
        *ret = s;
        s = (Sample){};
        return 0;
}

/* One thread's change over an interval. */
typedef struct TaskDelta {
        const TaskSample *now;
        EffectTotals t; /* effect_totals_add() of the two samples */
} TaskDelta;

static int task_delta_compare_policy(const void *a, const void *b) {
        const TaskDelta *x = a, *y = b;
        int c = strcmp(x->now->policy, y->now->policy);

        if (c != 0)
                return c;
        return x->now->tid < y->now->tid ? -1 : x->now->tid > y->now->tid;
}

static int uint64_compare(const void *a, const void *b) {
        const uint64_t *x = a, *y = b;

        return *x < *y ? -1 : *x > *y;
}

/* The quantile of per_mille/1000 (1..1000, nearest rank) of n > 0 sorted values. */
static uint64_t quantile(const uint64_t *sorted, size_t n, unsigned per_mille) {
        size_t rank = (per_mille * n + 999) / 1000;

        return sorted[rank > 0 ? rank - 1 : 0];
}

/*
 * The deltas between prev and now of every thread present in both (same TID, PID and start
 * time: the TID was not reused), sorted by policy, then TID. Returns the count,
 * or -ENOMEM.
 */
static ssize_t sample_diff(const Sample *prev, const Sample *now, TaskDelta **ret) {
        TaskDelta *d = NULL;
        size_t n = 0;

        if (now->n_tasks > 0) {
                d = calloc(now->n_tasks, sizeof(TaskDelta));
                if (!d)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < now->n_tasks; i++) {
                const TaskSample *t = &now->tasks[i], *p;

                p = prev->n_tasks > 0
                        ? bsearch(t, prev->tasks, prev->n_tasks, sizeof(TaskSample), task_sample_compare)
                        : NULL;
                if (!p || p->pid != t->pid || p->es.starttime != t->es.starttime)
                        continue;
                d[n] = (TaskDelta){.now = t};
                effect_totals_add(&d[n].t, &p->es, &t->es, &t->cpus);
                n++;
        }
        if (n > 0)
                qsort(d, n, sizeof(TaskDelta), task_delta_compare_policy);
        *ret = d;
        return (ssize_t)n;
}

/* A policy's summary over an interval: deltas [first, first + n) share its name. */
typedef struct PolicySummary {
        const char *policy;
        size_t first, n;
        bool has_migrations;
        double migrations_per_sec;
        uint64_t run_delay_p50_usec, run_delay_p99_usec;
        double involuntary_per_sec;
        uint64_t cpu_nsec, foreign_cpu_nsec;
} PolicySummary;

static int summarize(
        const TaskDelta *d, size_t n, uint64_t interval_usec, PolicySummary **ret, size_t *ret_n) {
        _cleanup_free_ uint64_t *delays = NULL;
        PolicySummary *s = NULL;
        size_t n_s = 0;
        double seconds = (double)interval_usec / 1e6;

        if (n > 0) {
                delays = calloc(n, sizeof(uint64_t));
                s = calloc(n, sizeof(PolicySummary));
                if (!delays || !s) {
                        free(s);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < n;) {
                PolicySummary *p = &s[n_s++];
                uint64_t migrations = 0, involuntary = 0;
                size_t k = 0;

                p->policy = d[i].now->policy;
                p->first = i;
                for (; i < n && streq(d[i].now->policy, p->policy); i++, k++) {
                        delays[k] = d[i].t.run_delay_ns / 1000;
                        involuntary += d[i].t.involuntary;
                        p->cpu_nsec += d[i].t.cpu_ns;
                        p->foreign_cpu_nsec += d[i].t.foreign_cpu_ns;
                        if (d[i].t.has_migrations) {
                                p->has_migrations = true;
                                migrations += d[i].t.migrations;
                        }
                }
                p->n = k;
                qsort(delays, k, sizeof(uint64_t), uint64_compare);
                p->run_delay_p50_usec = quantile(delays, k, 500);
                p->run_delay_p99_usec = quantile(delays, k, 990);
                p->migrations_per_sec = seconds > 0 ? (double)migrations / seconds : 0;
                p->involuntary_per_sec = seconds > 0 ? (double)involuntary / seconds : 0;
        }
        *ret = s;
        *ret_n = n_s;
        return 0;
}

static const Column policy_columns[] = {
        {"POLICY", "policy"},
        {"THREADS", "threads"},
        {"CPU-TIME", "cpu_usec"},
        {"FOREIGN", "foreign_cpu_usec"},
        {"MIGR/S", "migrations_per_sec"},
        {"RUNQ-DELAY-P50", "run_delay_p50_usec"},
        {"RUNQ-DELAY-P99", "run_delay_p99_usec"},
        {"INVOL/S", "involuntary_per_sec"},
};

static const Column thread_columns[] = {
        {"PID", "pid"},
        {"TID", "tid"},
        {"COMM", "comm"},
        {"POLICY", "policy"},
        {"CPU", "cpu"},
        {"CPU-TIME", "cpu_usec"},
        {"FOREIGN", "foreign_cpu_usec"},
        {"MIGR", "migrations"},
        {"RUNQ-DELAY", "run_delay_usec"},
        {"INVOL", "involuntary"},
};

/* One report: the policies' summaries, the threads' deltas. Returns 0 or -ENOMEM. */
static int print_top(
        uint64_t interval_usec, size_t n_processes, const PolicySummary *s, size_t n_s, const TaskDelta *d,
        size_t n) {
        _cleanup_(table_done) Table policies = TABLE_INIT(policy_columns),
                                    threads = TABLE_INIT(thread_columns);
        int r = 0;

        /* null (text "-") where the kernel has no migration count */
        for (size_t i = 0; r >= 0 && i < n_s; i++)
                r = table_add_row(
                        &policies,
                        (Cell[]){
                                CELL_STR_DASH(s[i].policy), CELL_UINT(s[i].n), CELL_NSEC(s[i].cpu_nsec),
                                CELL_NSEC(s[i].foreign_cpu_nsec),
                                s[i].has_migrations ? CELL_RATE(s[i].migrations_per_sec) : CELL_NONE,
                                CELL_NSEC(s[i].run_delay_p50_usec * 1000),
                                CELL_NSEC(s[i].run_delay_p99_usec * 1000),
                                CELL_RATE(s[i].involuntary_per_sec)});
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const TaskSample *t = d[i].now;

                r = table_add_row(
                        &threads,
                        (Cell[]){
                                CELL_INT(t->pid), CELL_INT(t->tid), CELL_STR_DASH(t->comm),
                                CELL_STR_DASH(t->policy), CELL_UINT(t->es.last_cpu),
                                CELL_NSEC(d[i].t.cpu_ns), CELL_NSEC(d[i].t.foreign_cpu_ns),
                                d[i].t.has_migrations ? CELL_UINT(d[i].t.migrations) : CELL_NONE,
                                CELL_NSEC(d[i].t.run_delay_ns), CELL_UINT(d[i].t.involuntary)});
        }
        if (r < 0)
                return r;

        if (arg_json) {
                const Field fields[] = {
                        {"interval_usec", NULL, CELL_UINT(interval_usec)},
                        {"policies", NULL, CELL_TABLE(&policies)},
                        {"threads", NULL, CELL_TABLE(&threads)},
                };

                output_record(fields, ELEMENTSOF(fields), 0);
                return 0;
        }
        table_print(&policies);
        putchar('\n');
        table_print(&threads);
        if (!arg_no_legend)
                printf("\n%zu thread%s of %zu process%s over %.2fs.\n", n, n == 1 ? "" : "s", n_processes,
                       n_processes == 1 ? "" : "es", (double)interval_usec / 1e6);
        return 0;
}

static volatile sig_atomic_t top_interrupted = 0;

static void top_on_signal(int sig) {
        top_interrupted = 1;
}

/* Sleeps for --interval; a signal ends it. Returns false when interrupted. */
static bool top_sleep(void) {
        struct timespec ts = {
                .tv_sec = (time_t)(arg_interval_usec / 1000000),
                .tv_nsec = (long)(arg_interval_usec % 1000000) * 1000,
        };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                if (top_interrupted)
                        break;
        return !top_interrupted;
}

int verb_top(char **args) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sample_done) Sample prev = {};
        struct sigaction sa = {.sa_handler = top_on_signal};
        uint64_t iterations = arg_iterations > 0 ? arg_iterations : arg_json ? 1 : UINT64_MAX;
        int r;

        r = ctl_connect(&bus);
        if (r > 0)
                return r;

        /* Ctrl-C ends the loop between samples: exit 0 with whole reports printed. */
        sigemptyset(&sa.sa_mask);
        (void)sigaction(SIGINT, &sa, NULL);
        (void)sigaction(SIGTERM, &sa, NULL);

        r = sample_take(bus, &prev);
        if (r > 0)
                return r;
        for (uint64_t i = 0; i < iterations && !top_interrupted; i++) {
                _cleanup_(sample_done) Sample now = {};
                _cleanup_free_ TaskDelta *d = NULL;
                _cleanup_free_ PolicySummary *s = NULL;
                size_t n_s = 0;
                ssize_t n;

                if (!top_sleep())
                        break;
                r = sample_take(bus, &now);
                if (r > 0)
                        return r;
                n = sample_diff(&prev, &now, &d);
                r = n < 0 ? (int)n : summarize(d, (size_t)n, now.time_usec - prev.time_usec, &s, &n_s);
                if (r >= 0 && !arg_json && i > 0)
                        putchar('\n');
                if (r >= 0)
                        r = print_top(now.time_usec - prev.time_usec, now.n_processes, s, n_s, d, (size_t)n);
                if (r < 0) {
                        fprintf(stderr, "Out of memory.\n");
                        return EXIT_FAILURE_;
                }
                fflush(stdout);
                /* d points into now: printed, now becomes prev. */
                sample_done(&prev);
                prev = now;
                now = (Sample){};
        }
        return EXIT_OK;
}
