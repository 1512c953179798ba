/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The benchmark's floor: a proc connector listener that does nothing but receive. It subscribes
 * like affinityd (NETLINK_CONNECTOR, CN_IDX_PROC, PROC_CN_MCAST_LISTEN), waits in epoll_wait(2)
 * and reads every datagram with recvmmsg(2), as affinityd's loop does, and does nothing with
 * them. bench-affinityd runs it under the same load as the daemon: its CPU time per exec is
 * what receiving the events costs on this machine before any placement work, and its wakeups
 * while idle are the ones other processes' events cause.
 *
 *   bench-listener PARENT_PID
 *
 * Writes "ready\n" to stdout once subscribed, and on SIGUSR1 the number of datagrams (events)
 * received so far ("%llu\n"); dies with PARENT_PID (PR_SET_PDEATHSIG).
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#define BATCH 32

static volatile sig_atomic_t report;

static void on_usr1(int sig) {
        report = 1;
}

int main(int argc, char *argv[]) {
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
        struct {
                struct nlmsghdr nl;
                struct cn_msg cn;
                enum proc_cn_mcast_op op;
        } __attribute__((packed)) req = {
                .nl = {.nlmsg_len = sizeof(req), .nlmsg_type = NLMSG_DONE},
                .cn = {.id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC}, .len = sizeof(enum proc_cn_mcast_op)},
                .op = PROC_CN_MCAST_LISTEN,
        };
        static char bufs[BATCH][1024];
        struct mmsghdr msgs[BATCH];
        struct iovec iovs[BATCH];
        struct epoll_event ev = {.events = EPOLLIN};
        int size = 8 * 1024 * 1024, fd, ep;
        unsigned long long n_events = 0;

        if (argc != 2)
                return 2;
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != (pid_t)atoi(argv[1]))
                return 1;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                fprintf(stderr, "bench-listener: proc connector: %s\n", strerror(errno));
                return 1;
        }
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
        if (send(fd, &req, sizeof(req), 0) < 0) {
                fprintf(stderr, "bench-listener: subscribe: %s\n", strerror(errno));
                return 1;
        }
        ep = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
                return 1;
        for (size_t i = 0; i < BATCH; i++) {
                iovs[i] = (struct iovec){.iov_base = bufs[i], .iov_len = sizeof(bufs[i])};
                msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iovs[i], .msg_iovlen = 1}};
        }
        signal(SIGUSR1, on_usr1); /* epoll_wait() returns EINTR, whatever SA_RESTART says */
        printf("ready\n");
        fflush(stdout);

        for (;;) {
                struct epoll_event out;
                int n;

                if (epoll_wait(ep, &out, 1, -1) < 0 && errno != EINTR)
                        return 1;
                do {
                        n = recvmmsg(fd, msgs, BATCH, MSG_DONTWAIT, NULL);
                        if (n > 0)
                                n_events += (unsigned long long)n;
                } while (n > 0 || (n < 0 && errno == ENOBUFS));
                if (report) {
                        report = 0;
                        printf("%llu\n", n_events);
                        fflush(stdout);
                }
        }
}
