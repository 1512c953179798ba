/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The wake-up latency probe (latency-probe.h). */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "latency-probe.h"

typedef struct ProbeThread {
        LatencyProbeCpu result;
        uint64_t interval_ns;
        atomic_bool *stop;
        pthread_t thread;
        bool started;
} ProbeThread;

struct LatencyProbe {
        atomic_bool stop;
        ProbeThread *threads;
        size_t n;
        LatencyProbeCpu *results;
        bool stopped;
};

static uint64_t timespec_ns(const struct timespec *ts) {
        return (uint64_t)ts->tv_sec * UINT64_C(1000000000) + (uint64_t)ts->tv_nsec;
}

static void *probe_thread(void *userdata) {
        ProbeThread *t = userdata;
        struct sched_param sp = {.sched_priority = LATENCY_PROBE_PRIORITY};
        struct timespec now, next;
        cpu_set_t set;
        int r;

        CPU_ZERO(&set);
        CPU_SET(t->result.cpu, &set);
        r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        if (r != 0) {
                t->result.error = -r;
                return NULL;
        }
        t->result.fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        next = now;
        while (!atomic_load(t->stop)) {
                uint64_t intended;

                next.tv_nsec += (long)t->interval_ns;
                while (next.tv_nsec >= 1000000000L) {
                        next.tv_nsec -= 1000000000L;
                        next.tv_sec++;
                }
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
                        ;
                clock_gettime(CLOCK_MONOTONIC, &now);
                intended = timespec_ns(&next);
                latency_record(
                        &t->result.wakeup, timespec_ns(&now) > intended ? timespec_ns(&now) - intended : 0);
                /* late by more than an interval: the next deadline is from now, as cyclictest does */
                if (timespec_ns(&now) > intended + t->interval_ns)
                        next = now;
        }
        return NULL;
}

int latency_probe_start(const CpuSet *cpus, uint64_t interval_ns, LatencyProbe **ret) {
        _cleanup_(latency_probe_freep) LatencyProbe *p = NULL;
        unsigned n = cpus ? cpuset_count(cpus) : 0;
        size_t i = 0;

        if (n == 0 || interval_ns == 0 || interval_ns >= UINT64_C(1000000000))
                return -EINVAL;
        p = calloc(1, sizeof(LatencyProbe));
        if (!p)
                return -ENOMEM;
        atomic_init(&p->stop, false);
        p->threads = calloc(n, sizeof(ProbeThread));
        p->results = calloc(n, sizeof(LatencyProbeCpu));
        if (!p->threads || !p->results)
                return -ENOMEM;
        for (int c = cpuset_next(cpus, -1); c >= 0; c = cpuset_next(cpus, c), i++) {
                ProbeThread *t = &p->threads[i];
                int r;

                t->result.cpu = (unsigned)c;
                latency_reset(&t->result.wakeup);
                t->interval_ns = interval_ns;
                t->stop = &p->stop;
                p->n = i + 1;
                r = pthread_create(&t->thread, NULL, probe_thread, t);
                if (r != 0)
                        return -r;
                t->started = true;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

int latency_probe_stop(LatencyProbe *p, const LatencyProbeCpu **ret, size_t *ret_n) {
        if (!p->stopped) {
                atomic_store(&p->stop, true);
                for (size_t i = 0; i < p->n; i++)
                        if (p->threads[i].started) {
                                (void)pthread_join(p->threads[i].thread, NULL);
                                p->threads[i].started = false;
                        }
                for (size_t i = 0; i < p->n; i++)
                        p->results[i] = p->threads[i].result;
                p->stopped = true;
        }
        *ret = p->results;
        *ret_n = p->n;
        return 0;
}

LatencyProbe *latency_probe_free(LatencyProbe *p) {
        const LatencyProbeCpu *r;
        size_t n;

        if (!p)
                return NULL;
        (void)latency_probe_stop(p, &r, &n);
        free(p->threads);
        free(p->results);
        free(p);
        return NULL;
}
