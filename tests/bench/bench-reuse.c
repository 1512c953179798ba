/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * PID and TID reuse, reproduced naturally (docs/performance.md, docs/security.md): with
 * kernel.pid_max lowered to 1000, a managed process (policy: CPU 1) creates and joins threads
 * and forks children that exit at once, as fast as it can, while a spawner starts unrelated
 * processes on CPUs 0-1. The daemon is stopped for 20 ms every 200 ms (SIGSTOP), so that it
 * handles its events late, when their numbers belong to someone else. Every unrelated process
 * checks its own affinity after 30 ms and again right before it exits; it counts as a reuse
 * opportunity when its PID was a task of the managed process before, and as touched when its
 * mask is not 0-1. Runs until --opportunities (default 10000) or --seconds (default 120).
 *
 *   bench-reuse --daemon=BUILD/daemon/affinityd [--opportunities=N] [--seconds=S]
 *
 * Needs root and CPUs 0 and 1. Restores pid_max (and kills everything it started) on exit.
 * Exits 0 when no unrelated process was touched, 1 otherwise.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PID_MAX_BENCH 1000

typedef struct Shared {
        uint8_t managed_used[PID_MAX_BENCH + 1]; /* 1: the number was a managed task */
        uint64_t unrelated, opportunities, touched, managed_tasks;
        int touched_pid[16];
} Shared;

static Shared *S;
static char saved_pid_max[32];
static pid_t daemon_pid, managed_pid, spawner_pid;
static char config_dir[] = "/tmp/affinityd-reuse-XXXXXX";

static void die(const char *what) {
        perror(what);
        exit(2);
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                die(path);
}

static void cleanup(void) {
        for (pid_t *p = (pid_t[]){spawner_pid, managed_pid, daemon_pid, 0}; *p; p++)
                if (*p > 0) {
                        (void)kill(*p, SIGCONT);
                        (void)kill(*p, SIGKILL);
                        (void)waitpid(*p, NULL, 0);
                }
        spawner_pid = managed_pid = daemon_pid = 0;
        if (saved_pid_max[0])
                write_file("/proc/sys/kernel/pid_max", saved_pid_max);
}

static void on_signal(int sig) {
        cleanup();
        _exit(3);
}

static void set_cpus(const char *list) {
        cpu_set_t s;

        CPU_ZERO(&s);
        CPU_SET(0, &s);
        if (strcmp(list, "0-1") == 0)
                CPU_SET(1, &s);
        if (sched_setaffinity(0, sizeof(s), &s) < 0)
                die("sched_setaffinity");
}

static bool on_0_1(void) {
        cpu_set_t s;

        CPU_ZERO(&s);
        return sched_getaffinity(0, sizeof(s), &s) == 0 && CPU_COUNT(&s) == 2 && CPU_ISSET(0, &s) &&
                CPU_ISSET(1, &s);
}

static void mark_managed(pid_t tid) {
        if (tid > 0 && tid <= PID_MAX_BENCH)
                __atomic_store_n(&S->managed_used[tid], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&S->managed_tasks, 1, __ATOMIC_RELAXED);
}

static void *managed_thread(void *p) {
        mark_managed((pid_t)syscall(SYS_gettid));
        return NULL;
}

/* The managed process: threads created and joined, children forked and reaped, forever. */
static void run_managed(void) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void)prctl(PR_SET_NAME, "reuse-managed");
        usleep(200 * 1000); /* matched by its COMM event, placed */
        for (unsigned i = 0;; i++) {
                pthread_t t;

                if (pthread_create(&t, NULL, managed_thread, NULL) == 0)
                        pthread_join(t, NULL);
                if (i % 4 == 0) {
                        pid_t c = fork();

                        if (c == 0)
                                _exit(0);
                        if (c > 0) {
                                mark_managed(c);
                                (void)waitpid(c, NULL, 0);
                        }
                }
        }
}

/* The spawner: unrelated processes on 0-1, each checking its own mask. */
static void run_spawner(void) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void)prctl(PR_SET_NAME, "reuse-spawner");
        set_cpus("0-1");
        for (;;) {
                pid_t c = fork();

                if (c == 0) {
                        pid_t me = getpid();
                        bool reused = me <= PID_MAX_BENCH &&
                                __atomic_load_n(&S->managed_used[me], __ATOMIC_RELAXED);
                        bool ok;

                        usleep(30 * 1000);
                        ok = on_0_1();
                        usleep(5 * 1000);
                        ok = ok && on_0_1();
                        __atomic_fetch_add(&S->unrelated, 1, __ATOMIC_RELAXED);
                        if (reused)
                                __atomic_fetch_add(&S->opportunities, 1, __ATOMIC_RELAXED);
                        if (!ok) {
                                uint64_t k = __atomic_fetch_add(&S->touched, 1, __ATOMIC_RELAXED);

                                if (k < 16)
                                        S->touched_pid[k] = me;
                        }
                        _exit(0);
                }
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                usleep(500);
        }
}

int main(int argc, char **argv) {
        const char *daemon = NULL;
        unsigned long want = 10000, seconds = 120;
        char path[256], arg_config[300];
        struct timespec t0, t;
        int c;

        static const struct option options[] = {
                {"daemon", required_argument, NULL, 'd'},
                {"opportunities", required_argument, NULL, 'o'},
                {"seconds", required_argument, NULL, 's'},
                {}};
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'd':
                        daemon = optarg;
                        break;
                case 'o':
                        want = strtoul(optarg, NULL, 10);
                        break;
                case 's':
                        seconds = strtoul(optarg, NULL, 10);
                        break;
                default:
                        return 2;
                }
        if (!daemon || geteuid() != 0) {
                fprintf(stderr,
                        "usage (as root): bench-reuse --daemon=PATH [--opportunities=N] [--seconds=S]\n");
                return 2;
        }

        S = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (S == MAP_FAILED)
                die("mmap");
        if (!mkdtemp(config_dir))
                die("mkdtemp");
        snprintf(path, sizeof(path), "%s/policy.d", config_dir);
        if (mkdir(path, 0755) < 0)
                die(path);
        snprintf(path, sizeof(path), "%s/policy.d/50-reuse.yaml", config_dir);
        write_file(
                path, "policies:\n  - name: managed\n    match: { comm: reuse-managed }\n    cpus: \"1\"\n");

        {
                FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

                if (!f || !fgets(saved_pid_max, sizeof(saved_pid_max), f))
                        die("/proc/sys/kernel/pid_max");
                fclose(f);
        }
        atexit(cleanup);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);

        snprintf(arg_config, sizeof(arg_config), "--config-dir=%s", config_dir);
        daemon_pid = fork();
        if (daemon_pid == 0) {
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (!freopen("/dev/null", "w", stderr))
                        _exit(127);
                execl(daemon, daemon, arg_config, "--bus=none", (char *)NULL);
                _exit(127);
        }
        sleep(1);
        write_file("/proc/sys/kernel/pid_max", "1000");

        managed_pid = fork();
        if (managed_pid == 0) {
                set_cpus("0-1");
                run_managed();
        }
        sleep(1);
        spawner_pid = fork();
        if (spawner_pid == 0)
                run_spawner();

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (unsigned i = 0;; i++) {
                /* the daemon behind its events: stopped 20 ms of every 200 */
                (void)kill(daemon_pid, SIGSTOP);
                usleep(20 * 1000);
                (void)kill(daemon_pid, SIGCONT);
                usleep(180 * 1000);
                clock_gettime(CLOCK_MONOTONIC, &t);
                if (__atomic_load_n(&S->opportunities, __ATOMIC_RELAXED) >= want ||
                    (unsigned long)(t.tv_sec - t0.tv_sec) >= seconds)
                        break;
                if (waitpid(daemon_pid, NULL, WNOHANG) == daemon_pid) {
                        daemon_pid = 0;
                        fprintf(stderr, "bench-reuse: the daemon exited\n");
                        return 2;
                }
        }
        (void)kill(spawner_pid, SIGKILL);
        (void)waitpid(spawner_pid, NULL, 0);
        spawner_pid = 0;
        usleep(100 * 1000);

        printf("pid_max %d, %.0f s: managed tasks created %" PRIu64 ", unrelated processes %" PRIu64
               ", reuse opportunities %" PRIu64 ", unrelated processes touched %" PRIu64 "\n",
               PID_MAX_BENCH, (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9,
               S->managed_tasks, S->unrelated, S->opportunities, S->touched);
        for (uint64_t k = 0; k < S->touched && k < 16; k++)
                printf("touched: PID %d\n", S->touched_pid[k]);
        return S->touched == 0 ? 0 : 1;
}
