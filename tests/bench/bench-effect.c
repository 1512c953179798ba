/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cost of effect sampling (docs/performance.md, "Effect sampling"): a child process makes
 * THREADS threads (default 10000), BUSY of them (default 50) running a little in every 100 ms, the
 * rest asleep; then PASSES passes (default 5, one a second) sample every thread as the daemon's
 * effect sampler does — effect_sample_thread() with the previous sample, effect_totals_add(),
 * and the per-TID tsearch(3) tree moved from one pass to the next — timed with
 * CLOCK_PROCESS_CPUTIME_ID. Prints µs per thread per pass and the share of one CPU at the
 * default effect-interval (EFFECT_INTERVAL_DEFAULT_USEC).
 *
 *   bench-effect [THREADS [BUSY [PASSES]]]
 */

#include <errno.h>
#include <pthread.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "effect.h"
#include "policy.h"
#include "procfs.h"

typedef struct Entry {
        pid_t tid; /* first: the key */
        EffectSample s;
} Entry;

static int entry_compare(const void *a, const void *b) {
        pid_t x = ((const Entry *)a)->tid, y = ((const Entry *)b)->tid;
        return x < y ? -1 : x > y;
}

static void *busy_thread(void *arg) {
        for (;;) {
                struct timespec ts = {0, 100 * 1000 * 1000};
                volatile unsigned x = 0;

                for (unsigned i = 0; i < 200000; i++)
                        x += i;
                nanosleep(&ts, NULL);
        }
        return NULL;
}

static void *sleeping_thread(void *arg) {
        for (;;)
                pause();
        return NULL;
}

static void child(unsigned n, unsigned busy, int ready_fd) {
        pthread_attr_t attr;
        char c = 'r';

        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        for (unsigned i = 0; i < n; i++) {
                pthread_t t;
                int r = pthread_create(&t, &attr, i < busy ? busy_thread : sleeping_thread, NULL);

                if (r != 0) {
                        fprintf(stderr, "bench-effect: thread %u of %u: %s\n", i, n, strerror(r));
                        _exit(1);
                }
        }
        (void)!write(ready_fd, &c, 1);
        for (;;)
                pause();
}

static double cpu_seconds(void) {
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 10000;
        unsigned busy = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 50;
        unsigned passes = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 5;
        double sum = 0, worst = 0;
        size_t sampled = 0;
        void *tree = NULL;
        EffectTotals totals = {};
        CpuSet cpus = {};
        int p[2], status;
        pid_t pid;
        char c;

        if (pipe(p) < 0)
                return 1;
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                close(p[0]);
                child(n, busy, p[1]);
        }
        close(p[1]);
        if (read(p[0], &c, 1) != 1) {
                fprintf(stderr, "bench-effect: the child could not make %u threads\n", n);
                return 1;
        }
        (void)cpuset_add(&cpus, 0);

        for (unsigned pass = 0; pass <= passes; pass++) {
                pid_t *tids = NULL;
                size_t n_tids = 0, n_new = 0;
                void *new = NULL;
                double t0, t;

                if (pass > 0)
                        sleep(1);
                /* The daemon knows its threads from its tables; listing them is not its cost. */
                if (procfs_list_tids(NULL, pid, &tids, &n_tids) < 0)
                        return 1;
                t0 = cpu_seconds();
                for (size_t i = 0; i < n_tids; i++) {
                        Entry key = {.tid = tids[i]}, **found = tfind(&key, &tree, entry_compare), *e;
                        EffectSample now;

                        e = found ? *found : NULL;
                        if (e)
                                (void)tdelete(&key, &tree, entry_compare);
                        if (effect_sample_thread(NULL, pid, tids[i], e ? &e->s : NULL, &now) < 0) {
                                free(e);
                                continue;
                        }
                        effect_totals_add(&totals, e ? &e->s : NULL, &now, &cpus);
                        if (!e)
                                e = malloc(sizeof(Entry));
                        if (!e)
                                return 1;
                        *e = (Entry){.tid = tids[i], .s = now};
                        (void)tsearch(e, &new, entry_compare);
                        n_new++;
                }
                tdestroy(tree, free);
                tree = new;
                free(tids);
                t = cpu_seconds() - t0;
                printf("pass %u: %zu threads, %.0f µs CPU, %.2f µs/thread%s\n", pass, n_new, t * 1e6,
                       n_new ? t * 1e6 / (double)n_new : 0,
                       pass == 0 ? " (first: full reads, baseline)" : "");
                if (pass > 0) {
                        sum += t;
                        worst = t > worst ? t : worst;
                        sampled = n_new;
                }
        }
        kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        tdestroy(tree, free);
        cpuset_done(&cpus);
        if (passes > 0) {
                double mean = sum / passes;
                double interval = (double)EFFECT_INTERVAL_DEFAULT_USEC / 1e6;

                printf("threads %zu (busy %u): mean %.0f µs/pass (%.2f µs/thread), worst %.0f µs; "
                       "at the default %.0f s interval: %.3f %% of one CPU (target <= 1 %%)\n",
                       sampled, busy, mean * 1e6, sampled ? mean * 1e6 / (double)sampled : 0, worst * 1e6,
                       interval, 100.0 * mean / interval);
                printf("(cpu seconds counted: %.3f, foreign %.3f)\n", (double)totals.cpu_ns / 1e9,
                       (double)totals.foreign_cpu_ns / 1e9);
        }
        return 0;
}
