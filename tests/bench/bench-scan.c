/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The minimal scan, the reference for affinityd's startup scan: walks /proc once, reads each
 * process's /proc/PID/comm and, when it is COMM, sets the affinity of every thread of it
 * (/proc/PID/task) to CPU with sched_setaffinity(2). Nothing more: no policy, no state, no
 * identity check, no read-back.
 *
 *   bench-scan COMM CPU
 *
 * Prints "placed N processes (M threads) in X.X ms" (CLOCK_MONOTONIC, from its first readdir to
 * its last write) and exits 0. bench-affinityd's "startup" measurement times it from fork() to
 * exit, as it times affinityd from fork() to READY=1.
 */

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int read_comm(int proc_fd, const char *pid, char *buf, size_t size) {
        char path[300];
        ssize_t n;
        int fd;

        snprintf(path, sizeof path, "%s/comm", pid);
        fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

/* Sets every thread of pid to cpu; returns how many were set. */
static unsigned place_threads(int proc_fd, const char *pid, const cpu_set_t *cpu) {
        char path[300];
        struct dirent *de;
        unsigned n = 0;
        DIR *d;
        int fd;

        snprintf(path, sizeof path, "%s/task", pid);
        fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return 0;
        }
        while ((de = readdir(d)))
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
                    sched_setaffinity(atoi(de->d_name), sizeof(*cpu), cpu) == 0)
                        n++;
        closedir(d);
        return n;
}

int main(int argc, char *argv[]) {
        struct timespec t0, t1;
        unsigned n_processes = 0, n_threads = 0;
        struct dirent *de;
        cpu_set_t cpu;
        DIR *proc;

        if (argc != 3)
                return 2;
        CPU_ZERO(&cpu);
        CPU_SET(atoi(argv[2]), &cpu);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        proc = opendir("/proc");
        if (!proc)
                return 1;
        while ((de = readdir(proc))) {
                char comm[32];
                unsigned k;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                if (read_comm(dirfd(proc), de->d_name, comm, sizeof comm) < 0 || strcmp(comm, argv[1]) != 0)
                        continue;
                k = place_threads(dirfd(proc), de->d_name, &cpu);
                n_processes += k > 0;
                n_threads += k;
        }
        closedir(proc);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("placed %u processes (%u threads) in %.1f ms\n", n_processes, n_threads,
               (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        return 0;
}
