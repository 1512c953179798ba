/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A thread-pool test program for the integration suite (spread thread rules). Usage:
 *
 *   integ-pool
 *
 * Prints "ready" and then obeys commands read line by line from stdin, answering each with one
 * line on stdout:
 *
 *   start NAME    start a thread that names itself NAME (prctl(PR_SET_NAME), first thing it
 *                 does) and blocks                          -> "started TID"
 *   stop TID      that thread exits; answered once it is joined
 *                                                           -> "stopped TID"
 *   exit / EOF    exit(0)
 */

#include <sys/prctl.h>

#include "integ-util.h"

#define MAX_THREADS 64

typedef struct Worker {
        pthread_t thread;
        pid_t tid;
        char name[16];
        sem_t started, stop;
        bool used;
} Worker;

static Worker workers[MAX_THREADS];

static void *worker_main(void *p) {
        Worker *w = p;

        if (prctl(PR_SET_NAME, w->name) < 0) {
                fprintf(stderr, "integ-pool: PR_SET_NAME: %m\n");
                exit(EXIT_FAILURE);
        }
        w->tid = (pid_t)syscall(SYS_gettid);
        sem_post(&w->started);
        integ_sem_wait(&w->stop);
        return NULL;
}

int main(void) {
        char line[256];

        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready\n");

        while (fgets(line, sizeof line, stdin)) {
                char name[64];
                int tid;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "start %63s", name) == 1) {
                        Worker *w = NULL;
                        int r;

                        for (size_t i = 0; i < MAX_THREADS && !w; i++)
                                if (!workers[i].used)
                                        w = &workers[i];
                        if (!w) {
                                fprintf(stderr, "integ-pool: too many threads\n");
                                return EXIT_FAILURE;
                        }
                        *w = (Worker){.used = true};
                        name[sizeof w->name - 1] = '\0'; /* the kernel keeps 15 characters */
                        memcpy(w->name, name, sizeof w->name);
                        sem_init(&w->started, 0, 0);
                        sem_init(&w->stop, 0, 0);
                        r = pthread_create(&w->thread, NULL, worker_main, w);
                        if (r != 0) {
                                fprintf(stderr, "integ-pool: pthread_create: %s\n", strerror(r));
                                return EXIT_FAILURE;
                        }
                        integ_sem_wait(&w->started);
                        printf("started %d\n", (int)w->tid);
                } else if (sscanf(line, "stop %d", &tid) == 1) {
                        Worker *w = NULL;

                        for (size_t i = 0; i < MAX_THREADS && !w; i++)
                                if (workers[i].used && workers[i].tid == tid)
                                        w = &workers[i];
                        if (!w) {
                                fprintf(stderr, "integ-pool: no thread %d\n", tid);
                                return EXIT_FAILURE;
                        }
                        sem_post(&w->stop);
                        pthread_join(w->thread, NULL);
                        sem_destroy(&w->started);
                        sem_destroy(&w->stop);
                        w->used = false;
                        printf("stopped %d\n", tid);
                } else if (strcmp(line, "exit") == 0) {
                        break;
                } else {
                        fprintf(stderr, "integ-pool: bad command \"%s\"\n", line);
                        return EXIT_FAILURE;
                }
        }
        return EXIT_SUCCESS;
}
