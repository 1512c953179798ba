/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The netlink proc connector as an sd-event I/O source (see proc-monitor.h).
 *
 * Wire format of one event, as the kernel's cn_netlink_send() builds it: a datagram holding
 * one or more netlink messages, each
 *
 *     struct nlmsghdr | struct cn_msg (id CN_IDX_PROC/CN_VAL_PROC, len) | struct proc_event
 *
 * The proc_event sits at offset 36 of each message, so its 8-byte timestamp is not 8-byte
 * aligned in our buffer: every header is copied out with memcpy() before it is read, which
 * also makes the parser safe on arbitrary (fuzzed) buffers at any alignment.
 *
 * Filtering by event type (Linux 6.6, "connector/cn_proc: Add filtering to fix some bugs" and
 * the series around it), as drivers/connector/cn_proc.c has it:
 *  - cn_proc_mcast_ctl() takes a 4-byte enum proc_cn_mcast_op (event_type becomes
 *    PROC_EVENT_ALL) or an 8-byte struct proc_input; before 6.6 it returns at once, without an
 *    acknowledgement, for any length but 4. It keeps the socket's last request in
 *    sk_user_data, and counts a LISTEN in proc_event_num_listeners only if the socket was not
 *    listening already, an IGNORE only if it was: repeated LISTENs on one socket (a new filter)
 *    leave the count balanced. Before 6.6 each LISTEN and IGNORE counts, blindly.
 *  - cn_filter() is applied to every message sent, the acknowledgements (PROC_EVENT_NONE, 0)
 *    included: with event_type PROC_EVENT_ALL everything passes; otherwise a message passes only
 *    if event_type & what, so a filtered socket never sees an acknowledgement, its own included
 *    (the filter is set before the acknowledgement is sent). PROC_EVENT_NONZERO_EXIT lets the
 *    EXITs with a nonzero exit code through even without PROC_EVENT_EXIT; with PROC_EVENT_EXIT
 *    every EXIT passes, which is what we ask for.
 *  - IGNORE makes cn_filter() drop everything for the socket.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "netlink-socket.h"
#include "proc-monitor.h"
#include "util.h"

/* The kernel's event-type filter (Linux 6.6 uapi linux/cn_proc.h, which defines PROC_EVENT_ALL
 * with struct proc_input); older userspace headers (Debian 12's, 6.1) have neither. The values
 * are the kernel's ABI. */
#ifndef PROC_EVENT_ALL
#define PROC_EVENT_NONZERO_EXIT 0x20000000U
#define PROC_EVENT_ALL \
        (PROC_EVENT_FORK | PROC_EVENT_EXEC | PROC_EVENT_UID | PROC_EVENT_GID | PROC_EVENT_SID | \
         PROC_EVENT_PTRACE | PROC_EVENT_COMM | PROC_EVENT_NONZERO_EXIT | PROC_EVENT_COREDUMP | \
         PROC_EVENT_EXIT)
struct proc_input {
        enum proc_cn_mcast_op mcast_op;
        uint32_t event_type; /* enum proc_cn_event: PROC_EVENT_* bits */
};
#endif
_Static_assert(sizeof(struct proc_input) == 8, "struct proc_input is 8 bytes on the wire");

/* Datagrams fetched per recvmmsg(2) call, and the size of each buffer. A proc connector
 * datagram is 76 bytes; anything longer than the buffer is reported as truncated. */
#define RECV_BATCH         32
#define RECV_DATAGRAM_SIZE 1024
/* Upper bound of datagrams handled per dispatch: the loop gets back control at least this often
 * in a flood of events. The source is level-triggered and fires again right away, before the
 * sources of lower priority (the bus), but not before a source that the callback enabled above
 * it (the manager's bus guard, every 1024 events: daemon/manager-events.c, BUS_GUARD_EVENTS). */
#define RECV_MAX_PER_DISPATCH 1024
#define RCVBUF_SIZE           PROC_MONITOR_RCVBUF_SIZE
/* Pause after a receive error, doubled while the error persists (CLOCK_MONOTONIC µs). */
#define RETRY_MIN_USEC (UINT64_C(100) * 1000)
#define RETRY_MAX_USEC (UINT64_C(30) * 1000 * 1000)

/* The minimal lengths of struct proc_event for each type we read: the fixed header (what,
 * cpu, timestamp_ns) plus the event_data fields we use. */
#define PROC_EVENT_HEADER_SIZE offsetof(struct proc_event, event_data)
#define PROC_EVENT_MIN_SIZE(member, last_field) \
        (PROC_EVENT_HEADER_SIZE + \
         offsetof(__typeof__(((struct proc_event *)0)->event_data.member), last_field) + \
         sizeof(((struct proc_event *)0)->event_data.member.last_field))

typedef enum MonitorState {
        MONITOR_DETACHED,   /* no socket: proc_monitor_new_parser() */
        MONITOR_AWAIT_ACK,  /* subscribed, acknowledgement not yet seen: events are dropped */
        MONITOR_SUBSCRIBED, /* events are delivered */
} MonitorState;

struct ProcMonitor {
        MonitorState state;
        int fd;
        uint32_t portid; /* our netlink port id */
        sd_event_source *source;
        sd_event_source *retry_source; /* armed while reading is paused after an error */
        uint64_t retry_usec;           /* the last pause; 0 once a receive succeeds again */
        int rcvbuf_size;               /* getsockopt(SO_RCVBUF) after setting it */
        int rcvbuf_force_error;        /* 0, or -errno of SO_RCVBUFFORCE */
        proc_monitor_handler_t handler;
        void *userdata;
        bool debug;
        unsigned events; /* PROC_MONITOR_EVENT() bits delivered */
        bool filtered;   /* the kernel took struct proc_input: it sends only those types */

        /* Our request's seq and ack; the acknowledgement carries ack_value + 1. */
        uint32_t ack_seq;
        uint32_t ack_value;
        bool ack_seen;
        uint32_t ack_err; /* positive errno from the kernel, 0 on success */

        /* recvmmsg(2) buffers, reused across calls. */
        struct mmsghdr msgs[RECV_BATCH];
        struct iovec iovs[RECV_BATCH];
        struct sockaddr_nl addrs[RECV_BATCH];
        uint64_t bufs[RECV_BATCH][RECV_DATAGRAM_SIZE / sizeof(uint64_t)]; /* 8-byte aligned */
};

_printf_(2, 3) static void monitor_debug(const ProcMonitor *m, const char *format, ...) {
        va_list ap;

        if (!m->debug)
                return;
        va_start(ap, format);
        fputs("proc-monitor: ", stderr);
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
        va_end(ap);
}

static void monitor_deliver(ProcMonitor *m, const ProcEvent *ev) {
        int r;

        if (!m->handler)
                return;
        r = m->handler(m, ev, m->userdata);
        if (r < 0)
                monitor_debug(
                        m, "Handler failed for event %d of %d/%d: %s", (int)ev->type, (int)ev->pid,
                        (int)ev->tgid, strerror(-r));
}

/*
 * Translates one proc_event (len bytes, at any alignment) into *ret. Returns 1 if the event
 * is one we report, 0 if it is ignored (other types, acknowledgements), -EBADMSG if it is too
 * short for its type.
 */
static int parse_event(
        ProcMonitor *m, const struct cn_msg *cn, const uint8_t *data, size_t len, ProcEvent *ret) {
        struct proc_event pe = {};
        ProcEvent ev;
        size_t need;

        if (len < PROC_EVENT_HEADER_SIZE)
                return -EBADMSG;
        /* Newer kernels may send longer events; we read the prefix we know. */
        memcpy(&pe, data, MIN(len, sizeof(pe)));

        ev = (ProcEvent){.timestamp_ns = pe.timestamp_ns};

        switch (pe.what) {
        case PROC_EVENT_NONE:
                need = PROC_EVENT_MIN_SIZE(ack, err);
                if (len < need)
                        return -EBADMSG;
                /* The kernel multicasts every listener's acknowledgement: only ours counts. It
                 * echoes our ack + 1; our seq is overwritten by its per-CPU sequence counter
                 * since Linux 6.6, so only the ack value identifies the reply. */
                if (m->state == MONITOR_AWAIT_ACK && cn->ack == m->ack_value + 1) {
                        m->ack_seen = true;
                        m->ack_err = pe.event_data.ack.err;
                }
                return 0;

        case PROC_EVENT_FORK:
                need = PROC_EVENT_MIN_SIZE(fork, child_tgid);
                if (len < need)
                        return -EBADMSG;
                ev.type = PROC_MONITOR_FORK;
                ev.pid = pe.event_data.fork.child_pid;
                ev.tgid = pe.event_data.fork.child_tgid;
                ev.parent_pid = pe.event_data.fork.parent_pid;
                ev.parent_tgid = pe.event_data.fork.parent_tgid;
                goto done;

        case PROC_EVENT_EXEC:
                need = PROC_EVENT_MIN_SIZE(exec, process_tgid);
                if (len < need)
                        return -EBADMSG;
                ev.type = PROC_MONITOR_EXEC;
                ev.pid = pe.event_data.exec.process_pid;
                ev.tgid = pe.event_data.exec.process_tgid;
                goto done;

        case PROC_EVENT_UID:
                need = PROC_EVENT_MIN_SIZE(id, e.euid);
                if (len < need)
                        return -EBADMSG;
                ev.type = PROC_MONITOR_UID;
                ev.pid = pe.event_data.id.process_pid;
                ev.tgid = pe.event_data.id.process_tgid;
                ev.euid = pe.event_data.id.e.euid;
                goto done;

        case PROC_EVENT_COMM:
                need = PROC_EVENT_MIN_SIZE(comm, comm);
                if (len < need)
                        return -EBADMSG;
                ev.type = PROC_MONITOR_COMM;
                ev.pid = pe.event_data.comm.process_pid;
                ev.tgid = pe.event_data.comm.process_tgid;
                /* The kernel NUL-terminates comm; don't rely on it. */
                memcpy(ev.comm, pe.event_data.comm.comm, sizeof(ev.comm) - 1);
                ev.comm[sizeof(ev.comm) - 1] = 0;
                goto done;

        case PROC_EVENT_EXIT:
                need = PROC_EVENT_MIN_SIZE(exit, process_tgid);
                if (len < need)
                        return -EBADMSG;
                ev.type = PROC_MONITOR_EXIT;
                ev.pid = pe.event_data.exit.process_pid;
                ev.tgid = pe.event_data.exit.process_tgid;
                goto done;

        default:
                /* GID, SID, PTRACE, COREDUMP and anything newer */
                return 0;
        }

done:
        *ret = ev;
        return 1;
}

static int monitor_parse(ProcMonitor *m, const void *buf, size_t len) {
        const uint8_t *p = buf;
        int n = 0;

        if (!buf && len > 0)
                return -EBADMSG;

        while (len > 0) {
                struct nlmsghdr nlh;
                struct cn_msg cn;
                size_t payload, step;
                ProcEvent ev;
                int r;

                if (len < sizeof(nlh))
                        return -EBADMSG;
                memcpy(&nlh, p, sizeof(nlh));
                if (!NLMSG_OK(&nlh, (int)MIN(len, (size_t)INT32_MAX)))
                        return -EBADMSG;

                /* The last message may lack its alignment padding. */
                step = MIN((size_t)NLMSG_ALIGN(nlh.nlmsg_len), len);
                payload = nlh.nlmsg_len - NLMSG_HDRLEN;

                /* The kernel sends connector messages as NLMSG_DONE; NOOP and anything else
                 * (none is expected on this socket) carry no event. */
                if (nlh.nlmsg_type != NLMSG_DONE)
                        goto next;

                if (payload < sizeof(cn))
                        return -EBADMSG;
                memcpy(&cn, p + NLMSG_HDRLEN, sizeof(cn));
                if (cn.len > payload - sizeof(cn))
                        return -EBADMSG;
                if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC)
                        goto next;

                r = parse_event(m, &cn, p + NLMSG_HDRLEN + sizeof(cn), cn.len, &ev);
                if (r < 0)
                        return r;
                if (r > 0 && m->state != MONITOR_AWAIT_ACK && (m->events & PROC_MONITOR_EVENT(ev.type))) {
                        monitor_deliver(m, &ev);
                        n++;
                }

next:
                p += step;
                len -= step;
        }

        return n;
}

int proc_monitor_parse(ProcMonitor *m, const void *buf, size_t len) {
        if (!m)
                return -EINVAL;
        return monitor_parse(m, buf, len);
}

static void monitor_deliver_lost(ProcMonitor *m) {
        ProcEvent ev = {
                .type = PROC_MONITOR_LOST,
                .timestamp_ns = now_monotonic_nsec(),
        };

        if (m->state == MONITOR_SUBSCRIBED)
                monitor_deliver(m, &ev);
}

/* Makes the first n recvmmsg(2) headers ready for a call again: the kernel writes msg_namelen,
 * msg_flags and msg_len of each entry that received a datagram, and nothing else. */
static void monitor_reset_msgs(ProcMonitor *m, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                m->iovs[i] = (struct iovec){.iov_base = m->bufs[i], .iov_len = sizeof(m->bufs[i])};
                m->msgs[i].msg_hdr = (struct msghdr){
                        .msg_name = &m->addrs[i],
                        .msg_namelen = sizeof(m->addrs[i]),
                        .msg_iov = &m->iovs[i],
                        .msg_iovlen = 1,
                };
                m->msgs[i].msg_len = 0;
        }
}

/*
 * Receives and handles whatever is queued, up to max datagrams, vlen (≤ RECV_BATCH) per
 * recvmmsg(2) call. Returns the number of datagrams read, ENOBUFS reports included (>= 0),
 * once the socket is drained (EAGAIN, or a call that returned fewer than vlen) or max is reached, or -errno
 * on an unexpected receive error.
 */
static int monitor_receive(ProcMonitor *m, unsigned max, unsigned vlen) {
        unsigned total = 0;

        while (total < max) {
                int k;

                k = recvmmsg(m->fd, m->msgs, vlen, MSG_DONTWAIT, NULL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        if (errno == ENOBUFS) {
                                /* The receive queue overflowed: events are lost, the socket
                                 * keeps working. */
                                monitor_debug(m, "Receive queue overrun, events lost");
                                monitor_deliver_lost(m);
                                total++; /* counts as a datagram: the loop stays bounded */
                                continue;
                        }
                        return -errno;
                }

                for (int i = 0; i < k; i++) {
                        const struct msghdr *h = &m->msgs[i].msg_hdr;
                        int r;

                        total++;
                        if (h->msg_namelen < sizeof(struct sockaddr_nl) ||
                            m->addrs[i].nl_family != AF_NETLINK || m->addrs[i].nl_pid != 0) {
                                monitor_debug(
                                        m, "Ignoring datagram from netlink port %u, not the kernel",
                                        (unsigned)m->addrs[i].nl_pid);
                                continue;
                        }
                        if (h->msg_flags & MSG_TRUNC) {
                                monitor_debug(m, "Ignoring truncated datagram");
                                monitor_deliver_lost(m);
                                continue;
                        }

                        r = monitor_parse(m, m->bufs[i], m->msgs[i].msg_len);
                        if (r < 0) {
                                /* Whatever the datagram held is unknown: treat as lost. */
                                monitor_debug(m, "Malformed datagram of %u bytes", m->msgs[i].msg_len);
                                monitor_deliver_lost(m);
                        }
                }
                /* Only the entries that received a datagram were written (one more, to be safe). */
                monitor_reset_msgs(m, MIN((unsigned)k + 1, vlen));

                /* Fewer than asked: the queue is drained (or an error after the first datagram
                 * ended the batch, which the kernel keeps for the next call and reports as
                 * EPOLLERR). The source is level-triggered, so whatever arrives meanwhile wakes
                 * the loop again: no recvmmsg(2) just to be told EAGAIN. */
                if ((unsigned)k < vlen)
                        break;
        }

        return (int)total;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        ProcMonitor *m = userdata;
        int r;

        monitor_debug(m, "Reading again after a pause of %" PRIu64 " ms", m->retry_usec / 1000);
        r = sd_event_source_set_enabled(m->source, SD_EVENT_ON);
        if (r < 0)
                return r;
        /* Whatever was queued meanwhile is still there, but the failed reads may have cost
         * events. */
        monitor_deliver_lost(m);
        return 0;
}

/*
 * A receive error that is not the kernel dropping events: reading at once again would most
 * likely fail again, and the level-triggered source would spin. Stops reading for a while
 * (doubling while the error persists), tells the handler, and resumes from a timer.
 */
static int monitor_pause(ProcMonitor *m, int error) {
        ProcEvent ev = {
                .type = PROC_MONITOR_ERROR,
                .timestamp_ns = now_monotonic_nsec(),
                .error = error,
        };
        int r;

        m->retry_usec = m->retry_usec == 0 ? RETRY_MIN_USEC : MIN(2 * m->retry_usec, RETRY_MAX_USEC);
        monitor_debug(
                m, "Failed to receive from the proc connector: %s; pausing for %" PRIu64 " ms",
                strerror(-error), m->retry_usec / 1000);

        r = sd_event_source_set_enabled(m->source, SD_EVENT_OFF);
        if (r < 0)
                return r;
        if (!m->retry_source) {
                r = sd_event_add_time_relative(
                        sd_event_source_get_event(m->source), &m->retry_source, CLOCK_MONOTONIC,
                        m->retry_usec, 0, on_retry, m);
                if (r < 0)
                        return r;
                (void)sd_event_source_set_description(m->retry_source, "proc-connector-retry");
        } else {
                r = sd_event_source_set_time_relative(m->retry_source, m->retry_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->retry_source, SD_EVENT_ONESHOT);
                if (r < 0)
                        return r;
        }

        ev.retry_usec = m->retry_usec;
        monitor_deliver(m, &ev);
        return 0;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ProcMonitor *m = userdata;
        int r;

        r = monitor_receive(m, RECV_MAX_PER_DISPATCH, RECV_BATCH);
        if (r >= 0) {
                m->retry_usec = 0;
                return 0;
        }
        /* Failing here would disable the source for good, with nobody told: only if even
         * pausing fails. */
        return monitor_pause(m, r);
}

/* Sends a request of len bytes (enum proc_cn_mcast_op, or struct proc_input) to the kernel, with
 * our seq/ack. */
static int monitor_send(ProcMonitor *m, const void *request, uint16_t len) {
        union {
                uint64_t align;
                uint8_t bytes[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(struct proc_input))];
        } buf = {};
        struct nlmsghdr nlh = {
                .nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) + len),
                .nlmsg_type = NLMSG_DONE,
                .nlmsg_pid = m->portid,
                .nlmsg_seq = m->ack_seq,
        };
        struct cn_msg cn = {
                .id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC},
                .seq = m->ack_seq,
                .ack = m->ack_value,
                .len = len,
        };
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK}; /* nl_pid 0: the kernel */

        assert(len <= sizeof(struct proc_input));
        memcpy(buf.bytes, &nlh, sizeof(nlh));
        memcpy(buf.bytes + NLMSG_HDRLEN, &cn, sizeof(cn));
        memcpy(buf.bytes + NLMSG_HDRLEN + sizeof(cn), request, len);

        if (sendto(m->fd, buf.bytes, nlh.nlmsg_len, 0, (const struct sockaddr *)&kernel, sizeof(kernel)) < 0)
                return -errno;
        return 0;
}

/* Sends PROC_CN_MCAST_LISTEN or _IGNORE in the 4-byte form every kernel takes (event_type
 * PROC_EVENT_ALL since 6.6). */
static int monitor_send_op(ProcMonitor *m, enum proc_cn_mcast_op op) {
        return monitor_send(m, &op, sizeof(op));
}

/* The kernel's PROC_EVENT_* bits for PROC_MONITOR_EVENT() bits. */
static uint32_t kernel_event_mask(unsigned events) {
        static const uint32_t bits[] = {
                [PROC_MONITOR_FORK] = PROC_EVENT_FORK, [PROC_MONITOR_EXEC] = PROC_EVENT_EXEC,
                [PROC_MONITOR_UID] = PROC_EVENT_UID,   [PROC_MONITOR_COMM] = PROC_EVENT_COMM,
                [PROC_MONITOR_EXIT] = PROC_EVENT_EXIT,
        };
        uint32_t k = 0;

        for (size_t i = 0; i < ELEMENTSOF(bits); i++)
                if (events & PROC_MONITOR_EVENT(i))
                        k |= bits[i];
        return k;
}

/* Sends PROC_CN_MCAST_LISTEN as a struct proc_input (Linux >= 6.6) for the kernel's event_type
 * bits (never 0: the kernel reads 0 as PROC_EVENT_ALL). */
static int monitor_send_listen_filter(ProcMonitor *m, uint32_t event_type) {
        struct proc_input in = {.mcast_op = PROC_CN_MCAST_LISTEN, .event_type = event_type};

        return monitor_send(m, &in, sizeof(in));
}

/*
 * Waits for the acknowledgement of our LISTEN request. Datagrams are read one at a time and
 * reading stops right after the acknowledgement, so every event sent after it stays queued
 * for the event loop; events before it are dropped (the caller's /proc scan, which starts
 * after proc_monitor_new() returns, sees their outcome).
 */
static int monitor_await_ack(ProcMonitor *m, uint64_t timeout_usec) {
        uint64_t deadline = now_monotonic_nsec() + timeout_usec * UINT64_C(1000);

        for (;;) {
                struct pollfd pfd = {.fd = m->fd, .events = POLLIN};
                struct timespec ts;
                uint64_t now;
                int r;

                do {
                        r = monitor_receive(m, 1, 1);
                        if (r < 0)
                                return r;
                        if (m->ack_seen)
                                return m->ack_err == 0 ? 0 : -(int)m->ack_err;
                } while (r > 0);

                now = now_monotonic_nsec();
                if (now >= deadline)
                        return -ETIMEDOUT;
                ts = (struct timespec){
                        .tv_sec = (time_t)((deadline - now) / UINT64_C(1000000000)),
                        .tv_nsec = (long)((deadline - now) % UINT64_C(1000000000)),
                };
                if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR)
                        return -errno;
        }
}

static ProcMonitor *monitor_alloc(proc_monitor_handler_t handler, void *userdata) {
        ProcMonitor *m = calloc(1, sizeof(ProcMonitor));

        if (!m)
                return NULL;
        m->fd = -EBADF;
        m->handler = handler;
        m->userdata = userdata;
        m->events = PROC_MONITOR_EVENTS_ALL;
        monitor_reset_msgs(m, RECV_BATCH);
        return m;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(ProcMonitor *, proc_monitor_free);

/* Sets the ack value of our next request: its acknowledgement carries value + 1. Not 0, which
 * most listeners send, nor UINT32_MAX, whose reply would be 0. */
static void monitor_set_ack_value(ProcMonitor *m, uint32_t value) {
        m->ack_value = value == 0 || value == UINT32_MAX ? 0x5a5a5a5a : value;
        m->ack_seen = false;
        m->ack_err = 0;
}

/* Whether the running kernel filters safely (proc_monitor_kernel_filters()). */
static bool running_kernel_filters(void) {
        struct utsname u;

        return uname(&u) >= 0 && proc_monitor_kernel_filters(u.release);
}

/*
 * After the plain subscription was acknowledged: asks for every type in the 8-byte form and
 * waits up to timeout_usec for its acknowledgement, which shows that the kernel takes that form
 * (a kernel before 6.6 ignores it: no reply, no change), then names the types of m->events.
 * A second LISTEN leaves the listener count as it is (see the top of this file), and so does an
 * ignored one. Sets m->filtered when the kernel filters; any failure leaves the plain
 * subscription in force, which is no error.
 */
static void monitor_probe_filter(ProcMonitor *m, uint64_t timeout_usec) {
        int r;

        monitor_set_ack_value(m, m->ack_value + 2);
        r = monitor_send_listen_filter(m, PROC_EVENT_ALL);
        if (r >= 0)
                r = monitor_await_ack(m, timeout_usec);
        if (r >= 0)
                r = monitor_send_listen_filter(m, kernel_event_mask(m->events));
        if (r < 0) {
                monitor_debug(
                        m, "The kernel does not filter by event type (%s): filtering on receipt",
                        strerror(-r));
                return;
        }
        m->filtered = true;
}

int proc_monitor_new(
        sd_event *event, unsigned events, uint64_t timeout_usec, proc_monitor_handler_t handler,
        void *userdata, ProcMonitor **ret) {
        _cleanup_(proc_monitor_freep) ProcMonitor *m = NULL;
        struct sockaddr_nl addr = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
        socklen_t addrlen = sizeof(addr);
        int size = RCVBUF_SIZE;
        uint32_t ack_value;
        int r;

        if (!event || !handler || !ret || !(events & PROC_MONITOR_EVENTS_ALL))
                return -EINVAL;

        m = monitor_alloc(handler, userdata);
        if (!m)
                return -ENOMEM;
        m->events = events & PROC_MONITOR_EVENTS_ALL;

        /* The fallback from SO_RCVBUFFORCE is capped by rmem_max: the caller learns of it from
         * proc_monitor_get_receive_buffer(). */
        m->fd = netlink_socket_open(
                SOCK_DGRAM, NETLINK_CONNECTOR, size, &m->rcvbuf_force_error, &m->rcvbuf_size);
        if (m->fd < 0)
                return m->fd;

        /* Joining the CN_IDX_PROC multicast group needs CAP_NET_ADMIN before Linux 6.6. */
        if (bind(m->fd, (const struct sockaddr *)&addr, sizeof(addr)) < 0)
                return -errno;
        if (getsockname(m->fd, (struct sockaddr *)&addr, &addrlen) < 0)
                return -errno;

        /* A random ack value makes the acknowledgement of our request recognizable among the
         * ones the kernel multicasts to every listener (most listeners send ack 0). */
        m->portid = addr.nl_pid;
        m->ack_seq = addr.nl_pid;
        if (getrandom(&ack_value, sizeof(ack_value), GRND_NONBLOCK) != sizeof(ack_value))
                ack_value = (uint32_t)now_monotonic_nsec() ^ (addr.nl_pid << 16);
        monitor_set_ack_value(m, ack_value);
        m->state = MONITOR_AWAIT_ACK;

        /* The 4-byte form first, on every kernel: whether the connector can be used at all is
         * decided as before filtering existed, and a namespace that ignores us costs one
         * timeout, not two. */
        r = monitor_send_op(m, PROC_CN_MCAST_LISTEN);
        if (r < 0)
                return r;
        r = monitor_await_ack(m, timeout_usec);
        if (r < 0) {
                /* Before Linux 6.6 the listener count is global: undo a subscription the
                 * kernel may have taken without our seeing the acknowledgement. A refused
                 * one (the acknowledgement carries an error) took nothing. */
                if (!m->ack_seen)
                        (void)monitor_send_op(m, PROC_CN_MCAST_IGNORE);
                return r;
        }
        if (!(events & PROC_MONITOR_NO_KERNEL_FILTER) && running_kernel_filters())
                monitor_probe_filter(m, MIN(timeout_usec, PROC_MONITOR_FILTER_PROBE_USEC));
        m->state = MONITOR_SUBSCRIBED;

        r = sd_event_add_io(event, &m->source, m->fd, EPOLLIN, on_io, m);
        if (r < 0)
                return r;
        (void)sd_event_source_set_description(m->source, "proc-connector");

        *ret = TAKE_PTR(m);
        return 0;
}

int proc_monitor_set_events(ProcMonitor *m, unsigned events) {
        int r;

        if (!m || !(events & PROC_MONITOR_EVENTS_ALL))
                return -EINVAL;
        events &= PROC_MONITOR_EVENTS_ALL;
        if (m->filtered && kernel_event_mask(events) != kernel_event_mask(m->events)) {
                r = monitor_send_listen_filter(m, kernel_event_mask(events));
                if (r < 0)
                        return r;
        }
        m->events = events;
        return 0;
}

unsigned proc_monitor_get_events(const ProcMonitor *m) {
        return m ? m->events : 0;
}

bool proc_monitor_is_filtered(const ProcMonitor *m) {
        return m && m->filtered;
}

/* Reads a decimal number of at most 6 digits at *p, advancing *p. Returns 0 or -EINVAL. */
static int parse_version_number(const char **p, unsigned *ret) {
        unsigned n = 0;
        size_t k = 0;

        for (; (*p)[k] >= '0' && (*p)[k] <= '9'; k++) {
                if (k >= 6)
                        return -EINVAL;
                n = n * 10 + (unsigned)((*p)[k] - '0');
        }
        if (k == 0)
                return -EINVAL;
        *p += k;
        *ret = n;
        return 0;
}

bool proc_monitor_kernel_filters(const char *release) {
        unsigned major, minor, patch = 0;
        const char *p = release;

        if (!p || parse_version_number(&p, &major) < 0 || *p++ != '.' ||
            parse_version_number(&p, &minor) < 0)
                return false;
        if (*p == '.' && (p++, parse_version_number(&p, &patch) < 0))
                return false;

        if (major < 6 || (major == 6 && minor < 6))
                return false;
        /* c46bfba1337d without its revert (see proc-monitor.h): 6.6.13 (January 2024) to
         * 6.6.17; 6.7 from 6.7.1, and 6.7.0 to be safe, to 6.7.5. The revert is in 6.6.18,
         * 6.7.6 and 6.8. */
        if (major == 6 && minor == 6 && patch >= 13 && patch <= 17)
                return false;
        if (major == 6 && minor == 7 && patch <= 5)
                return false;
        return true;
}

int proc_monitor_new_parser(proc_monitor_handler_t handler, void *userdata, ProcMonitor **ret) {
        ProcMonitor *m;

        if (!ret)
                return -EINVAL;
        m = monitor_alloc(handler, userdata);
        if (!m)
                return -ENOMEM;
        m->state = MONITOR_DETACHED;
        *ret = m;
        return 0;
}

void proc_monitor_set_debug(ProcMonitor *m, bool debug) {
        if (m)
                m->debug = debug;
}

int proc_monitor_get_fd(const ProcMonitor *m) {
        if (!m || m->fd < 0)
                return -EBADF;
        return m->fd;
}

int proc_monitor_get_receive_buffer(const ProcMonitor *m, size_t *ret_size, int *ret_force_error) {
        if (!m || m->fd < 0)
                return -EBADF;
        if (ret_size)
                *ret_size = (size_t)MAX(m->rcvbuf_size, 0);
        if (ret_force_error)
                *ret_force_error = m->rcvbuf_force_error;
        return 0;
}

ProcMonitor *proc_monitor_free(ProcMonitor *m) {
        if (!m)
                return NULL;

        m->source = sd_event_source_disable_unref(m->source);
        m->retry_source = sd_event_source_disable_unref(m->retry_source);
        if (m->fd >= 0) {
                if (m->state == MONITOR_SUBSCRIBED)
                        (void)monitor_send_op(m, PROC_CN_MCAST_IGNORE);
                (void)close(m->fd);
        }
        free(m);
        return NULL;
}
