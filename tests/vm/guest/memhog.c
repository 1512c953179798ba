/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memhog: a guest test program. Allocates and touches MiB of memory (-m), starts extra
 * threads (-t) that sleep, writes its PID to a file (-r) when all of that is done, and then
 * waits until it is killed. Linked statically: the guest has no compiler.
 *
 *   memhog [-m MIB] [-t THREADS] [-r READY_FILE]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *idle_thread(void *arg) {
        (void)arg;
        for (;;)
                pause();
        return NULL;
}

int main(int argc, char **argv) {
        long mib = 0, threads = 0;
        const char *ready = NULL;
        int c;

        while ((c = getopt(argc, argv, "m:t:r:")) != -1) {
                switch (c) {
                case 'm':
                        mib = strtol(optarg, NULL, 10);
                        break;
                case 't':
                        threads = strtol(optarg, NULL, 10);
                        break;
                case 'r':
                        ready = optarg;
                        break;
                default:
                        fprintf(stderr, "usage: memhog [-m MIB] [-t THREADS] [-r READY_FILE]\n");
                        return 2;
                }
        }

        if (mib > 0) {
                size_t len = (size_t)mib << 20;
                long page = sysconf(_SC_PAGESIZE);
                char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED) {
                        fprintf(stderr, "memhog: mmap %ld MiB: %s\n", mib, strerror(errno));
                        return 1;
                }
                /* No transparent huge pages: base pages migrate one by one, as the test counts. */
                (void)madvise(p, len, MADV_NOHUGEPAGE);
                for (size_t off = 0; off < len; off += (size_t)page)
                        p[off] = 1;
        }

        for (long i = 0; i < threads; i++) {
                pthread_t t;
                char name[16];

                if (pthread_create(&t, NULL, idle_thread, NULL) != 0) {
                        fprintf(stderr, "memhog: pthread_create failed\n");
                        return 1;
                }
                snprintf(name, sizeof(name), "hog-worker-%d", (int)(i % 1000));
                (void)pthread_setname_np(t, name);
        }

        if (ready) {
                FILE *f = fopen(ready, "we");

                if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
                        fprintf(stderr, "memhog: %s: %s\n", ready, strerror(errno));
                        return 1;
                }
        }

        for (;;)
                pause();
}
