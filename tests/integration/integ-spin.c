/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A busy test program for the integration suite (affinityctl top). Usage:
 *
 *   integ-spin [-n N]
 *
 * Starts N busy threads (default 1), named spin0, spin1, ..., that never sleep, prints
 * "ready TID ..." (their TIDs) and then obeys commands read line by line from stdin:
 *
 *   spin       start one more busy thread                  -> "spinning TID"
 *   exit / EOF exit(0)
 *
 * New threads inherit the affinity mask of the main thread (where the daemon placed it).
 */

#include <stdatomic.h>
#include <sys/prctl.h>

#include "integ-util.h"

static atomic_ulong spins;

typedef struct SpinInfo {
        sem_t started;
        pid_t tid;
        unsigned k;
} SpinInfo;

static void *spin_main(void *p) {
        SpinInfo *si = p;
        char name[16];

        snprintf(name, sizeof name, "spin%u", si->k);
        if (prctl(PR_SET_NAME, name) < 0) {
                fprintf(stderr, "integ-spin: PR_SET_NAME: %m\n");
                exit(EXIT_FAILURE);
        }
        si->tid = (pid_t)syscall(SYS_gettid);
        sem_post(&si->started); /* si belongs to the creator from here on */

        for (;;)
                atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
        return NULL;
}

/* Starts busy thread number k; returns its TID. */
static pid_t start_spinner(unsigned k) {
        SpinInfo si = {.k = k};
        pthread_attr_t attr;
        pthread_t t;
        int r;

        sem_init(&si.started, 0, 0);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&t, &attr, spin_main, &si);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                fprintf(stderr, "integ-spin: pthread_create: %s\n", strerror(r));
                exit(EXIT_FAILURE);
        }
        integ_sem_wait(&si.started);
        sem_destroy(&si.started);
        return si.tid;
}

int main(int argc, char *argv[]) {
        unsigned n = 1, k = 0;
        char line[256];
        int opt;

        while ((opt = getopt(argc, argv, "n:")) >= 0)
                switch (opt) {
                case 'n':
                        n = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                default:
                        return EXIT_FAILURE;
                }

        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready");
        for (; k < n; k++)
                printf(" %d", (int)start_spinner(k));
        printf("\n");

        while (fgets(line, sizeof line, stdin)) {
                line[strcspn(line, "\n")] = '\0';
                if (strcmp(line, "spin") == 0)
                        printf("spinning %d\n", (int)start_spinner(k++));
                else if (strcmp(line, "exit") == 0)
                        break;
                else
                        printf("error unknown command \"%s\"\n", line);
        }
        return EXIT_SUCCESS;
}
