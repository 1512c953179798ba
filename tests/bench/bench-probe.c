/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The benchmark's probe: a tiny program that bench-affinityd execs under a unique name that
 * only the benchmark's policy matches. Stand-alone (no libaffinity), and linked statically
 * (tests/bench/meson.build), so that almost nothing runs between exec and main(): the hardest
 * case for placing a process before its code runs. bench-probe-dynamic is the same program
 * linked as usual, with the dynamic loader's start-up before main().
 *
 *   bench-probe place SPAWN_NS TARGET_CPU BOUND_MS
 *       The first thing main() does is read CLOCK_MONOTONIC, then it polls its own affinity
 *       mask (sched_getaffinity(2)) until it is exactly { TARGET_CPU } or BOUND_MS have passed,
 *       and writes one BenchProbeReport to fd 3 (a pipe: one write(2) of less than PIPE_BUF
 *       bytes is atomic, so many probes can share it). A mask already right at the first check
 *       means the daemon placed the process before its code ran: unplaced window 0.
 *       Polling: sched_yield() for the first 20 ms (the probe is never off-CPU for long, so
 *       the window is measured to within a few µs), then 100 µs sleeps.
 *
 *   bench-probe sleep
 *       pause()s until killed (SIGKILL from the benchmark, or PR_SET_PDEATHSIG when the
 *       benchmark dies): the tracked processes of the RSS and startup-scan measurements.
 *
 *   bench-probe threads N PARENT_PID
 *       The same with N threads (N - 1 more, on 16 KiB stacks, each in pause()), writes "ready\n"
 *       to stdout once they all run: the tracked threads of the "threads:N" measurement.
 */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "bench-probe.h"

static int64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int mask_is(int cpu) {
        cpu_set_t s;

        if (sched_getaffinity(0, sizeof s, &s) < 0)
                return -1;
        return CPU_COUNT(&s) == 1 && CPU_ISSET(cpu, &s);
}

static int do_place(int64_t spawn_ns, int cpu, int64_t bound_ns) {
        int64_t main_ns = now_ns(), t = main_ns;
        BenchProbeReport rep = {
                .magic = BENCH_PROBE_MAGIC,
                .pid = (int32_t)getpid(),
                .spawn_ns = spawn_ns,
                .main_ns = main_ns,
                .placed_ns = -1,
        };
        int k;

        k = mask_is(cpu);
        if (k > 0) {
                rep.placed_ns = main_ns;
                rep.before_main = 1;
        }
        while (k == 0) {
                t = now_ns();
                if (t - main_ns >= bound_ns)
                        break;
                if (t - main_ns < 20 * 1000000)
                        sched_yield();
                else
                        nanosleep(&(struct timespec){.tv_nsec = 100 * 1000}, NULL);
                k = mask_is(cpu);
                if (k > 0)
                        rep.placed_ns = now_ns();
        }
        if (k < 0)
                rep.error = 1;
        if (write(3, &rep, sizeof rep) != (ssize_t)sizeof rep)
                return 2;
        return k > 0 ? 0 : 1;
}

static void *thread_pause(void *arg) {
        for (;;)
                pause();
        return NULL;
}

static int do_threads(unsigned n) {
        pthread_attr_t attr;

        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 16 * 1024);
        for (unsigned i = 1; i < n; i++) {
                pthread_t t;

                if (pthread_create(&t, &attr, thread_pause, NULL) != 0)
                        return 3;
        }
        if (write(STDOUT_FILENO, "ready\n", 6) != 6)
                return 2;
        for (;;)
                pause();
}

int main(int argc, char *argv[]) {
        if (argc == 5 && strcmp(argv[1], "place") == 0)
                return do_place(
                        strtoll(argv[2], NULL, 10), atoi(argv[3]), strtoll(argv[4], NULL, 10) * 1000000);

        if (argc == 3 && strcmp(argv[1], "sleep") == 0) {
                /* Die with the benchmark, whatever happens to it (argv[2] is its pid). */
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != (pid_t)atoi(argv[2]))
                        return 1;
                for (;;)
                        pause();
        }
        if (argc == 4 && strcmp(argv[1], "threads") == 0) {
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != (pid_t)atoi(argv[3]))
                        return 1;
                return do_threads((unsigned)atoi(argv[2]));
        }
        return 2;
}
