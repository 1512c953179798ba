/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The isolation audit's mechanism, measured (docs/performance.md, "Isolation audit"): on the
 * last online CPU (or --cpu=N),
 *   (a) sampling: cpu_audit_snapshot() (lib/cpu-audit.h) before and after, diffed: every
 *       /proc/PID/task/TID/stat read, /proc/stat's per-CPU time for the residual;
 *   (b) tracing: the sched:sched_switch tracepoint through perf_event_open(2) on that CPU only
 *       (id from tracefs events/sched/sched_switch/id, mounted at a temporary directory when it
 *       is not), its ring buffer mmap(2)ed and drained every 10 ms, run time per task summed
 *       from switch-in to switch-out;
 * against planted intruders whose CPU time is known from getrusage(2) of their parent:
 *   hog    one process busy for --hog-ms of CPU time on the CPU;
 *   forks  --forks processes, one after another, each busy 5 ms of CPU time then exiting
 *          (comm "audit-fork"): too short-lived for a sampler to see;
 * and what each costs: CPU time of the auditor per pass, and (pingpong) the time a context
 * switch on the audited CPU takes with and without the tracepoint open.
 * Prints one "key value" line per figure. Needs root for (b) (a CPU-wide perf event);
 * without it, (b) is reported as unavailable.
 *
 *   bench-cpu-audit [--cpu=N] [--hog-ms=MS] [--forks=N]
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu-audit.h"
#include "cpuset.h"
#include "fileio.h"
#include "macro.h"
#include "procfs.h"

#define RING_PAGES 256 /* data pages, a power of two */

static unsigned cpu;
static unsigned hog_ms = 1000;
static unsigned n_forks = 200;

static uint64_t clock_ns(clockid_t c) {
        struct timespec ts;

        clock_gettime(c, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t children_cpu_ns(void) {
        struct rusage ru;

        getrusage(RUSAGE_CHILDREN, &ru);
        return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ULL +
                ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
}

static void pin_self(void) {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) < 0) {
                perror("sched_setaffinity");
                _exit(1);
        }
}

static void burn(uint64_t ns) {
        uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
        volatile unsigned long x = 0;

        while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
                for (int i = 0; i < 1000; i++)
                        x++;
}

/* The intruder of a scenario, started now; its pid. */
static pid_t start_scenario(const char *what) {
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        pin_self();
        if (streq(what, "hog")) {
                prctl(PR_SET_NAME, "audit-hog");
                burn((uint64_t)hog_ms * 1000000ULL);
                _exit(0);
        }
        for (unsigned i = 0; i < n_forks; i++) {
                pid_t c = fork();

                if (c == 0) {
                        prctl(PR_SET_NAME, "audit-fork");
                        burn(5000000ULL);
                        _exit(0);
                }
                if (c > 0)
                        (void)waitpid(c, NULL, 0);
        }
        _exit(0);
}

/* The tracepoint reader. */
typedef struct Tracer {
        int fd;
        void *ring;
        size_t ring_size;
        uint64_t n_records, n_lost;
        /* run time of the comms we look for, ns */
        uint64_t hog_ns, forks_ns;
        uint64_t switch_in_ns; /* when the task now on the CPU was switched in; 0: unknown */
        int32_t on_cpu_pid;
        uint64_t cpu_ns; /* our CPU time spent draining */
} Tracer;

static int tracepoint_id(void) {
        static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
        _cleanup_free_ char *text = NULL;
        char tmp[] = "/tmp/bench-tracefs-XXXXXX", path[256];
        bool mounted = false;
        int id = -1;

        for (size_t i = 0; i < ELEMENTSOF(dirs) && id < 0; i++) {
                snprintf(path, sizeof path, "%s/events/sched/sched_switch/id", dirs[i]);
                if (read_full_file(path, 64, 0, &text, NULL) == 0)
                        id = atoi(text);
                text = mfree(text);
        }
        if (id < 0 && mkdtemp(tmp)) {
                mounted = mount("nodev", tmp, "tracefs", 0, NULL) == 0;
                snprintf(path, sizeof path, "%s/events/sched/sched_switch/id", tmp);
                if (mounted && read_full_file(path, 64, 0, &text, NULL) == 0)
                        id = atoi(text);
                if (mounted)
                        (void)umount(tmp);
                (void)rmdir(tmp);
        }
        return id;
}

static int tracer_open(Tracer *t) {
        struct perf_event_attr attr = {
                .type = PERF_TYPE_TRACEPOINT,
                .size = sizeof(attr),
                .sample_period = 1,
                .sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW,
                .wakeup_events = 1,
                .disabled = 1,
        };
        int id = tracepoint_id();

        *t = (Tracer){.fd = -1};
        if (id < 0)
                return -ENOENT;
        attr.config = (uint64_t)id;
        t->fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (t->fd < 0)
                return -errno;
        t->ring_size = (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
        t->ring = mmap(NULL, t->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
        if (t->ring == MAP_FAILED) {
                close(t->fd);
                return -errno;
        }
        return 0;
}

static void tracer_close(Tracer *t) {
        if (t->fd < 0)
                return;
        munmap(t->ring, t->ring_size);
        close(t->fd);
        t->fd = -1;
}

/* sched_switch's raw fields (tracefs format): prev_comm at 8, prev_pid at 24, next_pid at 56.
 * A task's run is from its switch-in to its switch-out; it is counted under its comm at the
 * switch-out (a forked child is switched in under its parent's comm). */
static void on_switch(Tracer *t, uint64_t time, const unsigned char *raw, uint32_t size) {
        char prev[16];
        int32_t prev_pid, next_pid;

        if (size < 64)
                return;
        memcpy(prev, raw + 8, 16);
        prev[15] = 0;
        memcpy(&prev_pid, raw + 24, 4);
        memcpy(&next_pid, raw + 56, 4);
        if (t->switch_in_ns > 0 && t->on_cpu_pid == prev_pid && prev_pid != 0) {
                if (streq(prev, "audit-hog"))
                        t->hog_ns += time - t->switch_in_ns;
                else if (streq(prev, "audit-fork"))
                        t->forks_ns += time - t->switch_in_ns;
        }
        t->on_cpu_pid = next_pid;
        t->switch_in_ns = time;
}

static void tracer_drain(Tracer *t) {
        uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        struct perf_event_mmap_page *meta = t->ring;
        unsigned char *data = (unsigned char *)t->ring + sysconf(_SC_PAGESIZE);
        uint64_t size = meta->data_size, head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE),
                 tail = meta->data_tail;

        while (tail < head) {
                struct perf_event_header h;
                unsigned char rec[512];

                for (size_t i = 0; i < sizeof h; i++)
                        ((unsigned char *)&h)[i] = data[(tail + i) % size];
                if (h.size < sizeof h || h.size > sizeof rec)
                        break;
                for (size_t i = 0; i < h.size; i++)
                        rec[i] = data[(tail + i) % size];
                if (h.type == PERF_RECORD_SAMPLE) {
                        uint64_t time;
                        uint32_t raw_size;

                        memcpy(&time, rec + sizeof h, 8);
                        memcpy(&raw_size, rec + sizeof h + 8, 4);
                        on_switch(t, time, rec + sizeof h + 12, raw_size);
                        t->n_records++;
                } else if (h.type == PERF_RECORD_LOST) {
                        uint64_t lost;

                        memcpy(&lost, rec + sizeof h + 8, 8);
                        t->n_lost += lost;
                }
                tail += h.size;
        }
        __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
        t->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - start;
}

/* Waits for pid, draining t (may be NULL) every 10 ms. */
static void wait_draining(pid_t pid, Tracer *t) {
        for (;;) {
                pid_t r = waitpid(pid, NULL, WNOHANG);

                if (t)
                        tracer_drain(t);
                if (r == pid)
                        return;
                usleep(10000);
        }
}

static void run_sampling(const char *what) {
        _cleanup_(cpu_audit_snapshot_freep) CpuAuditSnapshot *a = NULL, *b = NULL;
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL;
        uint64_t truth, t0, cost_ns, named = 0;
        pid_t pid;

        (void)cpuset_add(&set, cpu);
        truth = children_cpu_ns();
        t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        if (cpu_audit_snapshot(NULL, &set, CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, &a) < 0)
                exit(1);
        cost_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
        pid = start_scenario(what);
        wait_draining(pid, NULL);
        truth = children_cpu_ns() - truth;
        /* The hog has exited: a sampler sees it only while it lives. Sample it as the daemon's
         * timer would have, at its end: a second process stays on the CPU for the snapshot. */
        t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        if (cpu_audit_snapshot(NULL, &set, CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, &b) < 0 ||
            cpu_audit_diff(a, b, &r) < 0)
                exit(1);
        cost_ns += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
        for (size_t i = 0; i < r->cpus[0].n_tasks; i++)
                if (strstr(r->cpus[0].tasks[i].comm, "audit-"))
                        named += r->cpus[0].tasks[i].cpu_ns;
        printf("sampling.%s.truth_ms %.1f\n", what, truth / 1e6);
        printf("sampling.%s.named_ms %.1f\n", what, named / 1e6);
        printf("sampling.%s.unnamed_ms %.1f\n", what, r->cpus[0].unnamed_ns / 1e6);
        printf("sampling.%s.busy_ms %.1f\n", what, r->cpus[0].busy_ns / 1e6);
        printf("sampling.%s.cost_per_pass_us %.0f\n", what, cost_ns / 2 / 1e3);
}

/* A hog still alive at the second snapshot: named with its time. */
static void run_sampling_live(void) {
        _cleanup_(cpu_audit_snapshot_freep) CpuAuditSnapshot *a = NULL, *b = NULL;
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL;
        int fds[2];
        pid_t pid;
        uint64_t named = 0, truth;
        char c;

        (void)cpuset_add(&set, cpu);
        if (pipe(fds) < 0)
                exit(1);
        if (cpu_audit_snapshot(NULL, &set, CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, &a) < 0)
                exit(1);
        truth = children_cpu_ns();
        pid = fork();
        if (pid == 0) {
                pin_self();
                prctl(PR_SET_NAME, "audit-hog");
                burn((uint64_t)hog_ms * 1000000ULL);
                if (write(fds[1], "x", 1) < 0)
                        _exit(1);
                pause(); /* alive, idle, for the second snapshot */
                _exit(0);
        }
        if (read(fds[0], &c, 1) != 1)
                exit(1);
        if (cpu_audit_snapshot(NULL, &set, CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, &b) < 0 ||
            cpu_audit_diff(a, b, &r) < 0)
                exit(1);
        kill(pid, SIGKILL);
        (void)waitpid(pid, NULL, 0);
        truth = children_cpu_ns() - truth;
        for (size_t i = 0; i < r->cpus[0].n_tasks; i++)
                if (streq(r->cpus[0].tasks[i].comm, "audit-hog"))
                        named += r->cpus[0].tasks[i].cpu_ns;
        printf("sampling.live-hog.truth_ms %.1f\n", truth / 1e6);
        printf("sampling.live-hog.named_ms %.1f\n", named / 1e6);
        printf("sampling.live-hog.unnamed_ms %.1f\n", r->cpus[0].unnamed_ns / 1e6);
        close(fds[0]);
        close(fds[1]);
}

/* CPU time of one snapshot of the CPU, averaged over n, and the tasks /proc lists. */
static void run_sampling_cost(unsigned n) {
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL;
        uint64_t t0;
        size_t tasks = 0;
        pid_t *pids = NULL;
        size_t n_pids = 0;

        (void)cpuset_add(&set, cpu);
        if (procfs_list_pids(NULL, &pids, &n_pids) == 0)
                for (size_t i = 0; i < n_pids; i++) {
                        pid_t *tids = NULL;
                        size_t n_tids = 0;

                        if (procfs_list_tids(NULL, pids[i], &tids, &n_tids) == 0)
                                tasks += n_tids;
                        free(tids);
                }
        free(pids);
        t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        for (unsigned i = 0; i < n; i++) {
                CpuAuditSnapshot *s = NULL;

                if (cpu_audit_snapshot(NULL, &set, CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, &s) < 0)
                        exit(1);
                cpu_audit_snapshot_free(s);
        }
        t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
        printf("sampling.tasks %zu\n", tasks);
        printf("sampling.cost_per_snapshot_us %.0f\n", t0 / n / 1e3);
        printf("sampling.cost_per_task_ns %.0f\n", tasks ? (double)t0 / n / tasks : 0.0);
}

static void run_tracing(const char *what) {
        Tracer t;
        uint64_t truth, t0;
        pid_t pid;
        int r = tracer_open(&t);

        if (r < 0) {
                printf("tracing.%s unavailable (%s)\n", what, strerror(-r));
                return;
        }
        truth = children_cpu_ns();
        t0 = clock_ns(CLOCK_MONOTONIC);
        ioctl(t.fd, PERF_EVENT_IOC_ENABLE, 0);
        pid = start_scenario(what);
        wait_draining(pid, &t);
        ioctl(t.fd, PERF_EVENT_IOC_DISABLE, 0);
        tracer_drain(&t);
        truth = children_cpu_ns() - truth;
        printf("tracing.%s.truth_ms %.1f\n", what, truth / 1e6);
        printf("tracing.%s.named_ms %.1f\n", what, (streq(what, "hog") ? t.hog_ns : t.forks_ns) / 1e6);
        printf("tracing.%s.switches %" PRIu64 "\n", what, t.n_records);
        printf("tracing.%s.lost %" PRIu64 "\n", what, t.n_lost);
        printf("tracing.%s.reader_cpu_ms %.2f\n", what, t.cpu_ns / 1e6);
        printf("tracing.%s.reader_ns_per_switch %.0f\n", what,
               t.n_records ? (double)t.cpu_ns / t.n_records : 0.0);
        printf("tracing.%s.window_ms %.0f\n", what, (clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
        tracer_close(&t);
}

/* Two processes on the CPU passing a byte back and forth for 1 s: round trips per second. */
static double pingpong(Tracer *t) {
        int ab[2], ba[2];
        uint64_t n = 0, start, end;
        pid_t pid;
        char c = 0;

        if (pipe(ab) < 0 || pipe(ba) < 0)
                exit(1);
        pid = fork();
        if (pid == 0) {
                close(ab[1]);
                close(ba[0]);
                pin_self();
                while (read(ab[0], &c, 1) == 1)
                        if (write(ba[1], &c, 1) != 1)
                                break;
                _exit(0);
        }
        pin_self();
        start = clock_ns(CLOCK_MONOTONIC);
        end = start + 1000000000ULL;
        while (clock_ns(CLOCK_MONOTONIC) < end) {
                for (int i = 0; i < 100; i++) {
                        if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
                                exit(1);
                        n++;
                }
                if (t && (n % 1000) == 0) {
                        /* drained on the same CPU: what an auditor costs there */
                        tracer_drain(t);
                }
        }
        end = clock_ns(CLOCK_MONOTONIC);
        close(ab[1]);
        (void)waitpid(pid, NULL, 0);
        close(ab[0]);
        close(ba[0]);
        close(ba[1]);
        {
                cpu_set_t all;

                CPU_ZERO(&all);
                for (unsigned i = 0; i < CPU_SETSIZE; i++)
                        CPU_SET(i, &all);
                (void)sched_setaffinity(0, sizeof all, &all);
        }
        return (double)n / ((end - start) / 1e9);
}

int main(int argc, char **argv) {
        _cleanup_free_ char *online = NULL;
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL;
        Tracer t;

        if (read_full_file("/sys/devices/system/cpu/online", 4096, 0, &online, NULL) < 0 ||
            cpuset_parse_list(online, &set, NULL) < 0)
                return 1;
        cpu = (unsigned)cpuset_last(&set);
        for (int i = 1; i < argc; i++) {
                if (strncmp(argv[i], "--cpu=", 6) == 0)
                        cpu = (unsigned)atoi(argv[i] + 6);
                else if (strncmp(argv[i], "--hog-ms=", 9) == 0)
                        hog_ms = (unsigned)atoi(argv[i] + 9);
                else if (strncmp(argv[i], "--forks=", 8) == 0)
                        n_forks = (unsigned)atoi(argv[i] + 8);
                else {
                        fprintf(stderr, "usage: %s [--cpu=N] [--hog-ms=MS] [--forks=N]\n", argv[0]);
                        return 2;
                }
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("cpu %u\n", cpu);
        run_sampling_cost(50);
        run_sampling_live();
        run_sampling("forks");
        run_tracing("hog");
        run_tracing("forks");
        {
                double base = pingpong(NULL), traced = 0;

                if (tracer_open(&t) == 0) {
                        ioctl(t.fd, PERF_EVENT_IOC_ENABLE, 0);
                        traced = pingpong(&t);
                        tracer_close(&t);
                }
                printf("pingpong.round_trips_per_s %.0f\n", base);
                if (traced > 0) {
                        printf("pingpong.traced_round_trips_per_s %.0f\n", traced);
                        /* two switches per round trip */
                        printf("pingpong.traced_added_ns_per_switch %.0f\n",
                               (1e9 / traced - 1e9 / base) / 2);
                }
        }
        return 0;
}
