/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A multi-threaded test program for the integration suite. Usage:
 *
 *   integ-threads [-n N] [-x] [ARG...]
 *
 * Starts N extra threads (default 2) that block forever, prints "ready N" and then obeys
 * commands read line by line from stdin, answering each with one line on stdout:
 *
 *   spawn K       start K more blocking threads            -> "spawned TID TID ..."
 *   creator       start a creator thread, parked           -> "creator TID"
 *   go K CPU      the creator prints its own mask (BEFORE), moves itself alone to CPU with
 *                 sched_setaffinity(2), prints its mask again (AFTER), starts K blocking threads
 *                 (which inherit {CPU}) and exits
 *                                                          -> "spawnedpinned BEFORE AFTER TID ..."
 *   rename NAME   start a thread that renames itself with prctl(PR_SET_NAME) right after it
 *                 was created                              -> "renamed TID"
 *   setuid UID    change real, effective and saved uid of every thread (setresuid(2))
 *                                                          -> "uid UID"
 *   ephemeral     start a thread that exits at once, and join it
 *                                                          -> "joined TID"
 *   linger        start a thread that waits for "release"  -> "lingering TID"
 *   release       the lingering thread exits, and is joined -> "released TID"
 *   forkexit      fork a child (no exec) that exits at once, and reap it
 *                                                          -> "reaped PID"
 *   leader-exit   start a thread that takes over reading commands, then the main thread (the
 *                 leader) calls pthread_exit(): the process lives on with a zombie leader
 *                                                          -> "leader-exited TID" (the new
 *                 reader's TID; the leader may still be exiting when it is printed)
 *   exit / EOF    exit(0)
 *
 * With -x it exits right after creating its threads, without printing anything: a process
 * that vanishes while the daemon is placing it. Other arguments are ignored (the cmdline
 * matcher tests put tags there).
 */

#include <sys/prctl.h>
#include <sys/wait.h>

#include "integ-util.h"

typedef struct StartInfo {
        sem_t started;
        pid_t tid;
        char name[16]; /* empty: keep the inherited name */
} StartInfo;

static void *thread_main(void *p) {
        StartInfo *si = p;

        if (si->name[0] != '\0' && prctl(PR_SET_NAME, si->name) < 0) {
                fprintf(stderr, "integ-threads: PR_SET_NAME: %m\n");
                exit(EXIT_FAILURE);
        }
        si->tid = (pid_t)syscall(SYS_gettid);
        sem_post(&si->started); /* si belongs to the creator from here on */

        for (;;)
                pause();
        return NULL;
}

/* Starts one blocking thread (renamed to name if non-NULL) and returns its TID. */
static pid_t start_thread(const char *name) {
        StartInfo si = {};
        pthread_attr_t attr;
        pthread_t t;
        int r;

        sem_init(&si.started, 0, 0);
        if (name) /* a thread name is at most 15 characters: longer ones are cut */
                memcpy(si.name, name, strnlen(name, sizeof si.name - 1));

        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&t, &attr, thread_main, &si);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                fprintf(stderr, "integ-threads: pthread_create: %s\n", strerror(r));
                exit(EXIT_FAILURE);
        }
        integ_sem_wait(&si.started);
        sem_destroy(&si.started);
        return si.tid;
}

static sem_t linger_sem;

static void *linger_main(void *p) {
        *(pid_t *)p = (pid_t)syscall(SYS_gettid);
        integ_sem_wait(&linger_sem);
        return NULL;
}

static void *ephemeral_main(void *p) {
        *(pid_t *)p = (pid_t)syscall(SYS_gettid);
        return NULL;
}

static void creator_work(Parked *p) {
        char before[256], after[256];

        integ_format_own_mask(before, sizeof before);
        if (integ_pin_self(p->cpu) < 0) {
                fprintf(stderr, "integ-threads: sched_setaffinity: %m\n");
                exit(EXIT_FAILURE);
        }
        integ_format_own_mask(after, sizeof after);
        printf("spawnedpinned %s %s", before, after);
        for (unsigned i = 0; i < p->k; i++)
                printf(" %d", (int)start_thread(NULL));
        printf("\n");
}

static void *command_loop(void *userdata);

/* The new command reader of "leader-exit". */
static void *reader_main(void *userdata) {
        printf("leader-exited %d\n", (int)syscall(SYS_gettid));
        return command_loop(userdata);
}

/* Obeys the commands on stdin until "exit" or EOF, then exits the process. */
static void *command_loop(void *userdata) {
        static Parked creator = {.work = creator_work};
        static bool have_creator = false, lingering = false;
        static pthread_t linger_thread;
        static pid_t linger_tid;
        char line[256];

        while (fgets(line, sizeof line, stdin)) {
                char arg[64];
                unsigned k;
                int cpu;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "spawn %u", &k) == 1) {
                        printf("spawned");
                        for (unsigned i = 0; i < k; i++)
                                printf(" %d", (int)start_thread(NULL));
                        printf("\n");
                } else if (strcmp(line, "creator") == 0 && !have_creator) {
                        integ_park(&creator);
                        have_creator = true;
                        printf("creator %d\n", (int)creator.tid);
                } else if (sscanf(line, "go %u %d", &k, &cpu) == 2 && have_creator) {
                        creator.k = k;
                        creator.cpu = cpu;
                        integ_unpark(&creator);
                        pthread_join(creator.thread, NULL); /* the creator is gone before the next command */
                        have_creator = false;
                } else if (sscanf(line, "rename %63s", arg) == 1) {
                        printf("renamed %d\n", (int)start_thread(arg));
                } else if (sscanf(line, "setuid %u", &k) == 1) {
                        if (setresuid(k, k, k) < 0) {
                                fprintf(stderr, "integ-threads: setresuid(%u): %m\n", k);
                                exit(EXIT_FAILURE);
                        }
                        printf("uid %u\n", k);
                } else if (strcmp(line, "ephemeral") == 0) {
                        pthread_t t;
                        pid_t tid = 0;
                        int r = pthread_create(&t, NULL, ephemeral_main, &tid);

                        if (r != 0) {
                                fprintf(stderr, "integ-threads: pthread_create: %s\n", strerror(r));
                                exit(EXIT_FAILURE);
                        }
                        pthread_join(t, NULL);
                        printf("joined %d\n", (int)tid);
                } else if (strcmp(line, "linger") == 0 && !lingering) {
                        int r;

                        sem_init(&linger_sem, 0, 0);
                        linger_tid = 0;
                        r = pthread_create(&linger_thread, NULL, linger_main, &linger_tid);
                        if (r != 0) {
                                fprintf(stderr, "integ-threads: pthread_create: %s\n", strerror(r));
                                exit(EXIT_FAILURE);
                        }
                        while (__atomic_load_n(&linger_tid, __ATOMIC_SEQ_CST) == 0)
                                usleep(1000);
                        lingering = true;
                        printf("lingering %d\n", (int)linger_tid);
                } else if (strcmp(line, "release") == 0 && lingering) {
                        sem_post(&linger_sem);
                        pthread_join(linger_thread, NULL);
                        lingering = false;
                        printf("released %d\n", (int)linger_tid);
                } else if (strcmp(line, "forkexit") == 0) {
                        pid_t pid = fork();

                        if (pid < 0) {
                                fprintf(stderr, "integ-threads: fork: %m\n");
                                exit(EXIT_FAILURE);
                        }
                        if (pid == 0)
                                _exit(0);
                        (void)waitpid(pid, NULL, 0);
                        printf("reaped %d\n", (int)pid);
                } else if (strcmp(line, "leader-exit") == 0 && getpid() == (pid_t)syscall(SYS_gettid)) {
                        pthread_attr_t attr;
                        pthread_t t;
                        int r;

                        pthread_attr_init(&attr);
                        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                        r = pthread_create(&t, &attr, reader_main, NULL);
                        pthread_attr_destroy(&attr);
                        if (r != 0) {
                                fprintf(stderr, "integ-threads: pthread_create: %s\n", strerror(r));
                                exit(EXIT_FAILURE);
                        }
                        pthread_exit(NULL);
                } else if (strcmp(line, "exit") == 0) {
                        break;
                } else {
                        fprintf(stderr, "integ-threads: bad command \"%s\"\n", line);
                        exit(EXIT_FAILURE);
                }
        }
        exit(EXIT_SUCCESS);
}

int main(int argc, char *argv[]) {
        unsigned n = 2;
        bool exit_at_once = false;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
                        n = (unsigned)strtoul(argv[++i], NULL, 10);
                else if (strcmp(argv[i], "-x") == 0)
                        exit_at_once = true;
                /* anything else: a tag for the cmdline matcher, ignored */
        }

        for (unsigned i = 0; i < n; i++)
                (void)start_thread(NULL);
        if (exit_at_once)
                return EXIT_SUCCESS;

        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready %u\n", n);

        command_loop(NULL);
        return EXIT_SUCCESS;
}
