/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The match worker thread (match-worker.h). */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "macro.h"
#include "match-worker.h"

/* A ring of n slots. */
typedef struct Ring {
        size_t head, n;
} Ring;

struct MatchWorker {
        sd_event_source *source;
        int efd;
        match_worker_decide_t decide;
        match_worker_done_t done;
        void *userdata;

        pthread_t thread;
        bool started;
        pthread_mutex_t lock; /* everything below */
        pthread_cond_t wake;
        bool stop;
        size_t max;
        MatchJob *jobs; /* max slots */
        Ring queued;
        MatchResult *results; /* max slots */
        Ring decided;
        bool deciding; /* the thread holds one job outside both rings */
};

static size_t ring_slot(const Ring *r, size_t i, size_t max) {
        return (r->head + i) % max;
}

static void *worker_main(void *userdata) {
        MatchWorker *w = userdata;

        /* Last among the daemon's threads and every normal task: the loop places first. */
        (void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
        pthread_mutex_lock(&w->lock);
        for (;;) {
                MatchResult res = {};

                while (!w->stop && w->queued.n == 0)
                        pthread_cond_wait(&w->wake, &w->lock);
                if (w->stop)
                        break;
                res.job = w->jobs[w->queued.head];
                w->queued.head = (w->queued.head + 1) % w->max;
                w->queued.n--;
                w->deciding = true;
                pthread_mutex_unlock(&w->lock);

                w->decide(w->userdata, &res.job, &res);

                pthread_mutex_lock(&w->lock);
                w->deciding = false;
                w->results[ring_slot(&w->decided, w->decided.n, w->max)] = res;
                w->decided.n++;
                (void)eventfd_write(w->efd, 1);
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

static int on_results(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        MatchWorker *w = userdata;
        eventfd_t value;

        (void)eventfd_read(w->efd, &value);
        /* One at a time, without the lock: done may submit again. */
        for (;;) {
                MatchResult res;

                pthread_mutex_lock(&w->lock);
                if (w->decided.n == 0) {
                        pthread_mutex_unlock(&w->lock);
                        break;
                }
                res = w->results[w->decided.head];
                w->decided.head = (w->decided.head + 1) % w->max;
                w->decided.n--;
                pthread_mutex_unlock(&w->lock);
                w->done(w->userdata, &res);
        }
        return 0;
}

int match_worker_new(
        sd_event *e, size_t max_jobs, match_worker_decide_t decide, match_worker_done_t done, void *userdata,
        MatchWorker **ret) {
        sigset_t all, old;
        MatchWorker *w;
        int r;

        if (max_jobs == 0 || !decide || !done)
                return -EINVAL;
        w = calloc(1, sizeof(MatchWorker));
        if (!w)
                return -ENOMEM;
        w->efd = -1;
        w->max = max_jobs;
        w->decide = decide;
        w->done = done;
        w->userdata = userdata;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->wake, NULL);
        w->jobs = calloc(max_jobs, sizeof(MatchJob));
        w->results = calloc(max_jobs, sizeof(MatchResult));
        if (!w->jobs || !w->results) {
                match_worker_free(w);
                return -ENOMEM;
        }
        w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->efd < 0) {
                r = -errno;
                match_worker_free(w);
                return r;
        }
        r = sd_event_add_io(e, &w->source, w->efd, EPOLLIN, on_results, w);
        if (r < 0) {
                match_worker_free(w);
                return r;
        }
        (void)sd_event_source_set_description(w->source, "match-worker");
        /* Signals are the loop's (signalfd): the thread starts with every one blocked. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        r = pthread_create(&w->thread, NULL, worker_main, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
                match_worker_free(w);
                return -r;
        }
        w->started = true;
        (void)pthread_setname_np(w->thread, "affinityd-match");
        *ret = w;
        return 0;
}

int match_worker_submit(MatchWorker *w, const MatchJob *job) {
        int r = 0;

        pthread_mutex_lock(&w->lock);
        if (w->queued.n + w->decided.n + (w->deciding ? 1 : 0) >= w->max)
                r = -EBUSY;
        else {
                w->jobs[ring_slot(&w->queued, w->queued.n, w->max)] = *job;
                w->queued.n++;
                pthread_cond_signal(&w->wake);
        }
        pthread_mutex_unlock(&w->lock);
        return r;
}

size_t match_worker_pending(MatchWorker *w) {
        size_t n;

        pthread_mutex_lock(&w->lock);
        n = w->queued.n + w->decided.n + (w->deciding ? 1 : 0);
        pthread_mutex_unlock(&w->lock);
        return n;
}

MatchWorker *match_worker_free(MatchWorker *w) {
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
