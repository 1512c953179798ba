/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The latency-sensitive service of the effect benchmark (docs/performance.md, "Effect of
 * placement"): a UDP request/response server on 127.0.0.1 with worker threads. Each worker has
 * its own SO_REUSEPORT socket on the port (the kernel spreads the client's sockets over them by
 * their source ports), and for every request burns a fixed amount of its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID, so being preempted does not shorten the work) and sends the request
 * back unchanged: the client's timestamp in it gives the round trip.
 *
 *   effect-server PORT WORKERS WORK_USEC
 *
 * The process is named effect-server and its workers effect-worker (comm), so a policy can match
 * them. Runs until killed.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned arg_port;
static uint64_t arg_work_ns;

static uint64_t thread_cpu_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(arg_port)};
        int fd, one = 1;

        (void)arg;
        prctl(PR_SET_NAME, "effect-worker");
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
            bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
                perror("effect-server: socket");
                exit(EXIT_FAILURE);
        }
        for (;;) {
                char buf[64];
                struct sockaddr_in from;
                socklen_t len = sizeof from;
                ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
                uint64_t end;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("effect-server: recvfrom");
                        exit(EXIT_FAILURE);
                }
                end = thread_cpu_ns() + arg_work_ns;
                while (thread_cpu_ns() < end)
                        ;
                (void)sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, len);
        }
        return NULL;
}

int main(int argc, char *argv[]) {
        unsigned workers;

        if (argc != 4) {
                fprintf(stderr, "usage: effect-server PORT WORKERS WORK_USEC\n");
                return EXIT_FAILURE;
        }
        arg_port = (unsigned)strtoul(argv[1], NULL, 10);
        workers = (unsigned)strtoul(argv[2], NULL, 10);
        arg_work_ns = strtoull(argv[3], NULL, 10) * 1000;
        if (arg_port == 0 || arg_port > 65535 || workers == 0 || workers > 64) {
                fprintf(stderr, "effect-server: bad PORT or WORKERS (1-64)\n");
                return EXIT_FAILURE;
        }
        prctl(PR_SET_NAME, "effect-server");
        for (unsigned i = 0; i < workers; i++) {
                pthread_t t;

                if (pthread_create(&t, NULL, worker, NULL) != 0) {
                        fprintf(stderr, "effect-server: pthread_create failed\n");
                        return EXIT_FAILURE;
                }
        }
        for (;;)
                pause();
}
