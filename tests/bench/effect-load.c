/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The load generator of the effect benchmark (docs/performance.md, "Effect of placement"):
 * sends requests to effect-server on 127.0.0.1:PORT at a fixed rate (open loop: the schedule does
 * not wait for replies, so a slow server shows as latency, not as a lower offered rate), from
 * SOCKETS sockets in turn (the server's SO_REUSEPORT sockets split them by source port), and
 * times every reply: CLOCK_MONOTONIC at receipt minus the send time carried in the request.
 *
 *   effect-load PORT RATE SECONDS [SOCKETS]
 *
 * Prints one line, "p50_us=… p99_us=… p999_us=… max_us=… sent=… received=… rps=…", the
 * latencies from lib/latency.h's histogram (within 6.25 %). Replies still missing 1 s after the
 * last send count as lost (sent − received).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "latency.h"

#define SOCKETS_MAX 64

static int fds[SOCKETS_MAX];
static unsigned n_fds = 16;
static LatencyHistogram hist;
static uint64_t received;
static volatile int sending_done;

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *receiver(void *arg) {
        struct pollfd p[SOCKETS_MAX];
        uint64_t quiet_since = 0;

        (void)arg;
        for (unsigned i = 0; i < n_fds; i++)
                p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        for (;;) {
                int r = poll(p, n_fds, 100);

                if (r < 0 && errno != EINTR)
                        break;
                if (r <= 0) {
                        if (sending_done) {
                                if (!quiet_since)
                                        quiet_since = now_ns();
                                else if (now_ns() - quiet_since > 1000000000ULL)
                                        break;
                        }
                        continue;
                }
                quiet_since = 0;
                for (unsigned i = 0; i < n_fds; i++) {
                        uint64_t sent;

                        if (!(p[i].revents & POLLIN))
                                continue;
                        while (recv(fds[i], &sent, sizeof sent, MSG_DONTWAIT) == (ssize_t)sizeof sent) {
                                latency_record(&hist, now_ns() - sent);
                                received++;
                        }
                }
        }
        return NULL;
}

int main(int argc, char *argv[]) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        uint64_t rate, seconds, period_ns, start, n_total, sent = 0;
        struct timespec next;
        pthread_t rt;

        if (argc < 4 || argc > 5) {
                fprintf(stderr, "usage: effect-load PORT RATE SECONDS [SOCKETS]\n");
                return EXIT_FAILURE;
        }
        sa.sin_port = htons((unsigned short)strtoul(argv[1], NULL, 10));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rate = strtoull(argv[2], NULL, 10);
        seconds = strtoull(argv[3], NULL, 10);
        if (argc == 5)
                n_fds = (unsigned)strtoul(argv[4], NULL, 10);
        if (rate == 0 || rate > 1000000 || seconds == 0 || n_fds == 0 || n_fds > SOCKETS_MAX) {
                fprintf(stderr, "effect-load: bad RATE (1-1000000), SECONDS or SOCKETS (1-64)\n");
                return EXIT_FAILURE;
        }
        for (unsigned i = 0; i < n_fds; i++) {
                fds[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sizeof sa) < 0) {
                        perror("effect-load: socket");
                        return EXIT_FAILURE;
                }
        }
        latency_reset(&hist);
        if (pthread_create(&rt, NULL, receiver, NULL) != 0)
                return EXIT_FAILURE;

        period_ns = 1000000000ULL / rate;
        n_total = rate * seconds;
        start = now_ns();
        clock_gettime(CLOCK_MONOTONIC, &next);
        for (uint64_t i = 0; i < n_total; i++) {
                uint64_t due = start + i * period_ns, t;

                next.tv_sec = (time_t)(due / 1000000000ULL);
                next.tv_nsec = (long)(due % 1000000000ULL);
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
                        ;
                /* The intended send time, not the actual one: a late sender must not hide the
                 * delay (coordinated omission). */
                t = due;
                if (send(fds[i % n_fds], &t, sizeof t, 0) == (ssize_t)sizeof t)
                        sent++;
        }
        sending_done = 1;
        pthread_join(rt, NULL);

        printf("p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f sent=%llu received=%llu rps=%.0f\n",
               latency_quantile(&hist, 0.50) / 1e3, latency_quantile(&hist, 0.99) / 1e3,
               latency_quantile(&hist, 0.999) / 1e3, hist.max_ns / 1e3, (unsigned long long)sent,
               (unsigned long long)received, (double)received / (double)seconds);
        return EXIT_SUCCESS;
}
