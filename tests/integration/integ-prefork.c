/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A pre-forking server for the integration suite: a parent that forks workers without exec,
 * as nginx or postgres do. Usage:
 *
 *   integ-prefork [-m M] [-r NAME] [-e]
 *
 * At start it forks M workers (default 2) from the main thread and prints "ready". Every worker
 * is reported as one line on stdout:
 *
 *   worker PID main|thread CPULIST
 *
 * where CPULIST is the forking thread's own affinity mask read just before fork(). With -r,
 * every worker renames itself to NAME (prctl(PR_SET_NAME)) right after fork, as servers name
 * their workers, so that a policy matching the server's comm does not match the workers. With
 * -e, before the workers it forks one child that execs "sleep 1000000" (stdin and stdout on
 * /dev/null) and prints "execd PID": a child that is not a worker. Commands on stdin:
 *
 *   fork-main K        fork K more workers from the main thread   -> worker lines, "done"
 *   thread             start a forking thread, parked             -> "thread TID"
 *   fork-thread K CPU  the parked thread moves itself alone to CPU with sched_setaffinity(2),
 *                      then forks K workers, which inherit {CPU}  -> worker lines, "done"
 *   exit / EOF         exit (workers die with their forking thread: PR_SET_PDEATHSIG)
 *
 * Workers block until killed.
 */

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>

#include "integ-util.h"

static pid_t server_pid;
static const char *worker_name;

/* Forks k workers from the calling thread; prints one line per worker. */
static void fork_workers(unsigned k, const char *from) {
        for (unsigned i = 0; i < k; i++) {
                char mask[256];
                pid_t pid;

                integ_format_own_mask(mask, sizeof mask);
                pid = fork();
                if (pid < 0) {
                        fprintf(stderr, "integ-prefork: fork: %m\n");
                        exit(EXIT_FAILURE);
                }
                if (pid == 0) {
                        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != server_pid)
                                _exit(EXIT_SUCCESS);
                        if (worker_name)
                                (void)prctl(PR_SET_NAME, worker_name);
                        for (;;)
                                pause();
                }
                printf("worker %d %s %s\n", (int)pid, from, mask);
        }
}

/* Forks a child that execs sleep(1); prints "execd PID". */
static void fork_exec(void) {
        pid_t pid = fork();

        if (pid < 0) {
                fprintf(stderr, "integ-prefork: fork: %m\n");
                exit(EXIT_FAILURE);
        }
        if (pid == 0) {
                int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != server_pid || fd < 0 || dup2(fd, STDIN_FILENO) < 0 ||
                    dup2(fd, STDOUT_FILENO) < 0)
                        _exit(EXIT_FAILURE);
                execlp("sleep", "sleep", "1000000", (char *)NULL);
                _exit(127);
        }
        printf("execd %d\n", (int)pid);
}

static void forker_work(Parked *p) {
        if (integ_pin_self(p->cpu) < 0) {
                fprintf(stderr, "integ-prefork: sched_setaffinity: %m\n");
                exit(EXIT_FAILURE);
        }
        fork_workers(p->k, "thread");
}

int main(int argc, char *argv[]) {
        unsigned m = 2;
        bool exec_child = false;
        Parked *forker = NULL;
        char line[256];

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "-m") == 0 && i + 1 < argc)
                        m = (unsigned)strtoul(argv[++i], NULL, 10);
                else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
                        worker_name = argv[++i];
                else if (strcmp(argv[i], "-e") == 0)
                        exec_child = true;
                else {
                        fprintf(stderr, "integ-prefork: unknown argument \"%s\"\n", argv[i]);
                        return EXIT_FAILURE;
                }
        }

        server_pid = getpid();
        setvbuf(stdout, NULL, _IOLBF, 0);

        if (exec_child)
                fork_exec();
        fork_workers(m, "main");
        printf("ready\n");

        while (fgets(line, sizeof line, stdin)) {
                unsigned k;
                int cpu;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "fork-main %u", &k) == 1) {
                        fork_workers(k, "main");
                        printf("done\n");
                } else if (strcmp(line, "thread") == 0 && !forker) {
                        /* Never freed: the thread stays alive, the workers' PR_SET_PDEATHSIG is
                         * tied to it. */
                        forker = calloc(1, sizeof *forker);
                        if (!forker)
                                return EXIT_FAILURE;
                        forker->work = forker_work;
                        forker->stay = true;
                        integ_park(forker);
                        printf("thread %d\n", (int)forker->tid);
                } else if (sscanf(line, "fork-thread %u %d", &k, &cpu) == 2 && forker) {
                        forker->k = k;
                        forker->cpu = cpu;
                        integ_unpark(forker);
                        forker = NULL;
                        printf("done\n");
                } else if (strcmp(line, "exit") == 0)
                        break;
                else {
                        fprintf(stderr, "integ-prefork: bad command \"%s\"\n", line);
                        return EXIT_FAILURE;
                }
        }
        return EXIT_SUCCESS;
}
