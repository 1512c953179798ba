/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Small helpers shared by the integration suite's helper programs (integ-threads,
 * integ-prefork): printing the calling thread's own affinity mask as a cpu-list, moving the
 * calling thread alone to one CPU, and a thread parked until the harness says go. The helpers
 * are stand-alone programs, so they don't link libaffinity.
 */

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Formats the calling thread's affinity mask as a canonical cpu-list ("0-1,3") into buf. */
static inline void integ_format_own_mask(char *buf, size_t size) {
        cpu_set_t s;
        size_t n = 0;
        int first = -1;

        buf[0] = '\0';
        if (sched_getaffinity(0, sizeof s, &s) < 0) {
                snprintf(buf, size, "error");
                return;
        }
        for (int c = 0; c <= CPU_SETSIZE && n < size; c++) {
                bool in = c < CPU_SETSIZE && CPU_ISSET(c, &s);

                if (in && first < 0)
                        first = c;
                if (!in && first >= 0) {
                        if (c - 1 > first)
                                n += snprintf(buf + n, size - n, "%s%d-%d", n ? "," : "", first, c - 1);
                        else
                                n += snprintf(buf + n, size - n, "%s%d", n ? "," : "", first);
                        first = -1;
                }
        }
}

/* Moves the calling thread (only) to CPU cpu. Returns 0 or -1 (errno set). */
static inline int integ_pin_self(int cpu) {
        cpu_set_t s;

        CPU_ZERO(&s);
        CPU_SET(cpu, &s);
        return sched_setaffinity(0, sizeof s, &s);
}

/*
 * A thread started early and parked until told to go: the harness makes sure the daemon has
 * handled its creation (a barrier) before it moves itself elsewhere, so the daemon's placement
 * of the new thread can't undo the move.
 */
typedef struct Parked {
        pthread_t thread;
        pid_t tid;
        sem_t started, go, done;
        void (*work)(struct Parked *p); /* run on go, in the parked thread */
        unsigned k;
        int cpu;
        bool stay; /* keep the thread alive after work (pause forever) */
} Parked;

static inline void integ_sem_wait(sem_t *s) {
        while (sem_wait(s) < 0 && errno == EINTR)
                ;
}

static inline void *integ_parked_main(void *userdata) {
        Parked *p = userdata;

        p->tid = (pid_t)syscall(SYS_gettid);
        sem_post(&p->started);
        integ_sem_wait(&p->go);
        p->work(p);
        sem_post(&p->done);
        if (p->stay)
                for (;;)
                        pause();
        return NULL;
}

/* Starts a parked thread; returns once it runs (p->tid is set). */
static inline void integ_park(Parked *p) {
        int r;

        sem_init(&p->started, 0, 0);
        sem_init(&p->go, 0, 0);
        sem_init(&p->done, 0, 0);
        r = pthread_create(&p->thread, NULL, integ_parked_main, p);
        if (r != 0) {
                fprintf(stderr, "pthread_create: %s\n", strerror(r));
                exit(EXIT_FAILURE);
        }
        integ_sem_wait(&p->started);
}

/* Lets the parked thread run p->work and waits until the work is done. */
static inline void integ_unpark(Parked *p) {
        sem_post(&p->go);
        integ_sem_wait(&p->done);
}
