/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The benchmark's floors: a proc connector listener that does nothing but receive, and the
 * minimal placer. It subscribes like affinityd (NETLINK_CONNECTOR, CN_IDX_PROC,
 * PROC_CN_MCAST_LISTEN), waits in epoll_wait(2) and reads every datagram with recvmmsg(2), as
 * affinityd's loop does, and (as the bare listener) does nothing with them. bench-affinityd runs it under
 * the same load as the daemon: its CPU time per exec is what receiving the events costs on this machine
 * before any placement work, and its wakeups while idle are the ones other processes' events cause.
 *
 *   bench-listener PARENT_PID [COMM CPU]
 *
 * With COMM and CPU it is the minimal placer, the reference a placement daemon's cost is held
 * against: for each exec event it reads /proc/PID/comm and, when that is COMM, sets the
 * process's affinity to CPU (sched_setaffinity(2) of the leader: after an exec it is the only
 * thread). Nothing more: no policy, no state, no bus.
 *
 * Writes "ready\n" to stdout once subscribed, and on SIGUSR1 the number of datagrams (events)
 * received so far ("%llu\n"); dies with PARENT_PID (PR_SET_PDEATHSIG).
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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

/* The minimal placer's work for one datagram: an exec of a process named comm goes to cpu. */
static void place(const char *buf, size_t len, const char *comm, const cpu_set_t *cpu) {
        const struct nlmsghdr *nl = (const struct nlmsghdr *)buf;
        const struct cn_msg *cn = NLMSG_DATA(nl);
        const struct proc_event *ev = (const struct proc_event *)cn->data;
        char path[64], name[32];
        ssize_t n;
        int fd;

        if (len < NLMSG_LENGTH(sizeof(*cn) + sizeof(*ev)) || ev->what != PROC_EVENT_EXEC)
                return;
        snprintf(path, sizeof path, "/proc/%d/comm", (int)ev->event_data.exec.process_tgid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        n = read(fd, name, sizeof name - 1);
        close(fd);
        if (n <= 0)
                return;
        name[n] = '\0';
        name[strcspn(name, "\n")] = '\0';
        if (strcmp(name, comm) == 0)
                (void)sched_setaffinity(ev->event_data.exec.process_pid, sizeof(*cpu), cpu);
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
        const char *comm = argc == 4 ? argv[2] : NULL;
        cpu_set_t cpu;

        if (argc != 2 && argc != 4)
                return 2;
        CPU_ZERO(&cpu);
        if (comm)
                CPU_SET(atoi(argv[3]), &cpu);
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
                        for (int i = 0; comm && i < n; i++)
                                place(bufs[i], msgs[i].msg_len, comm, &cpu);
                } while (n > 0 || (n < 0 && errno == ENOBUFS));
                if (report) {
                        report = 0;
                        printf("%llu\n", n_events);
                        fflush(stdout);
                }
        }
}
