/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The noisy neighbours of the effect benchmark (docs/performance.md, "Effect of placement"):
 *
 *   effect-neighbour hog                 burn CPU until killed (comm effect-hog)
 *   effect-neighbour flood ADDR PORT     send 64-byte UDP datagrams to ADDR:PORT as fast as
 *                                        the socket takes them (comm effect-flood): run in a
 *                                        network namespace across a veth pair, it makes the
 *                                        receive side's NET_RX softirq work
 *   effect-neighbour sink PORT           receive and drop UDP datagrams on PORT (comm effect-sink)
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int udp_socket(void) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (fd < 0) {
                perror("effect-neighbour: socket");
                exit(EXIT_FAILURE);
        }
        return fd;
}

int main(int argc, char *argv[]) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        char buf[64] = {0};
        int fd;

        if (argc == 2 && strcmp(argv[1], "hog") == 0) {
                volatile unsigned long x = 0;

                prctl(PR_SET_NAME, "effect-hog");
                for (;;)
                        x++;
        }
        if (argc == 4 && strcmp(argv[1], "flood") == 0) {
                prctl(PR_SET_NAME, "effect-flood");
                sa.sin_port = htons((unsigned short)strtoul(argv[3], NULL, 10));
                if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1) {
                        fprintf(stderr, "effect-neighbour: bad address %s\n", argv[2]);
                        return EXIT_FAILURE;
                }
                fd = udp_socket();
                if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
                        perror("effect-neighbour: connect");
                        return EXIT_FAILURE;
                }
                for (;;)
                        (void)send(fd, buf, sizeof buf, 0); /* ECONNREFUSED, ENOBUFS: go on */
        }
        if (argc == 3 && strcmp(argv[1], "sink") == 0) {
                prctl(PR_SET_NAME, "effect-sink");
                sa.sin_port = htons((unsigned short)strtoul(argv[2], NULL, 10));
                sa.sin_addr.s_addr = htonl(INADDR_ANY);
                fd = udp_socket();
                if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
                        perror("effect-neighbour: bind");
                        return EXIT_FAILURE;
                }
                for (;;)
                        if (recv(fd, buf, sizeof buf, 0) < 0 && errno != EINTR)
                                return EXIT_FAILURE;
        }
        fprintf(stderr, "usage: effect-neighbour hog | flood ADDR PORT | sink PORT\n");
        return EXIT_FAILURE;
}
