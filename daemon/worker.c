/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker thread (worker.h). */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "worker.h"

/* A ring of n slots. */
typedef struct Ring {
        size_t head, n;
} Ring;

struct Worker {
        sd_event_source *source;
        int efd;

        pthread_t thread;
        bool started;
        pthread_mutex_t lock; /* everything below */
        pthread_cond_t wake;
        bool stop;
        size_t max;
        WorkerJob *jobs; /* max slots */
        Ring queued;
        WorkerJob *results; /* max slots */
        Ring ran;           /* run, not handed back yet */
        bool running;       /* the thread holds one job outside both rings */
};

static size_t ring_slot(const Ring *r, size_t i, size_t max) {
        return (r->head + i) % max;
}

static uint64_t thread_cpu_usec(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void *worker_main(void *userdata) {
        Worker *w = userdata;

        /* Last among the daemon's threads and every normal task: the loop places first. Not
         * SCHED_IDLE: with it the benchmark's probes waited longer for their CPU under an Explain
         * flood (docs/performance.md). */
        (void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
        pthread_mutex_lock(&w->lock);
        for (;;) {
                WorkerJob job;
                uint64_t t0;

                while (!w->stop && w->queued.n == 0)
                        pthread_cond_wait(&w->wake, &w->lock);
                if (w->stop)
                        break;
                job = w->jobs[w->queued.head];
                w->queued.head = (w->queued.head + 1) % w->max;
                w->queued.n--;
                w->running = true;
                pthread_mutex_unlock(&w->lock);

                t0 = thread_cpu_usec();
                job.run(&job);
                job.cpu_usec = thread_cpu_usec() - t0;

                pthread_mutex_lock(&w->lock);
                w->running = false;
                w->results[ring_slot(&w->ran, w->ran.n, w->max)] = job;
                w->ran.n++;
                (void)eventfd_write(w->efd, 1);
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

static int on_results(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;
        eventfd_t value;

        (void)eventfd_read(w->efd, &value);
        /* One at a time, without the lock: done may submit again. */
        for (;;) {
                WorkerJob job;

                pthread_mutex_lock(&w->lock);
                if (w->ran.n == 0) {
                        pthread_mutex_unlock(&w->lock);
                        break;
                }
                job = w->results[w->ran.head];
                w->ran.head = (w->ran.head + 1) % w->max;
                w->ran.n--;
                pthread_mutex_unlock(&w->lock);
                job.done(&job);
        }
        return 0;
}

int worker_new(sd_event *e, const char *name, size_t max_jobs, Worker **ret) {
        sigset_t all, old;
        Worker *w;
        int r;

        if (max_jobs == 0 || !name)
                return -EINVAL;
        w = calloc(1, sizeof(Worker));
        if (!w)
                return -ENOMEM;
        w->efd = -1;
        w->max = max_jobs;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->wake, NULL);
        w->jobs = calloc(max_jobs, sizeof(WorkerJob));
        w->results = calloc(max_jobs, sizeof(WorkerJob));
        if (!w->jobs || !w->results) {
                worker_free(w);
                return -ENOMEM;
        }
        w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->efd < 0) {
                r = -errno;
                worker_free(w);
                return r;
        }
        r = sd_event_add_io(e, &w->source, w->efd, EPOLLIN, on_results, w);
        if (r < 0) {
                worker_free(w);
                return r;
        }
        (void)sd_event_source_set_description(w->source, name);
        /* Signals are the loop's (signalfd): the thread starts with every one blocked. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        r = pthread_create(&w->thread, NULL, worker_main, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
                worker_free(w);
                return -r;
        }
        w->started = true;
        (void)pthread_setname_np(w->thread, name);
        *ret = w;
        return 0;
}

int worker_submit(Worker *w, const WorkerJob *job) {
        int r = 0;

        if (!job->run || !job->done)
                return -EINVAL;
        pthread_mutex_lock(&w->lock);
        if (w->queued.n + w->ran.n + (w->running ? 1 : 0) >= w->max)
                r = -EBUSY;
        else {
                w->jobs[ring_slot(&w->queued, w->queued.n, w->max)] = *job;
                w->queued.n++;
                pthread_cond_signal(&w->wake);
        }
        pthread_mutex_unlock(&w->lock);
        return r;
}

size_t worker_pending(Worker *w) {
        size_t n;

        pthread_mutex_lock(&w->lock);
        n = w->queued.n + w->ran.n + (w->running ? 1 : 0);
        pthread_mutex_unlock(&w->lock);
        return n;
}

Worker *worker_free(Worker *w) {
        if (!w)
                return NULL;
        if (w->started) {
                pthread_mutex_lock(&w->lock);
                w->stop = true;
                pthread_cond_signal(&w->wake);
                pthread_mutex_unlock(&w->lock);
                pthread_join(w->thread, NULL);
        }
        sd_event_source_disable_unref(w->source);
        if (w->efd >= 0)
                close(w->efd);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w->jobs);
        free(w->results);
        return mfree(w);
}
