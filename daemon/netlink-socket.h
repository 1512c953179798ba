/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the three netlink monitors (proc connector, kernel uevents, rtnetlink) do alike: open a
 * non-blocking socket with a large receive buffer, and stop reading for a while after a receive
 * error other than ENOBUFS (rather than spin on it), then read again and report that events may
 * have been lost (docs/architecture.md, "The process lifecycle": a loss means a rescan).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include <systemd/sd-event.h>

/*
 * A netlink socket of protocol (NETLINK_CONNECTOR, NETLINK_KOBJECT_UEVENT, NETLINK_ROUTE) of
 * type (SOCK_DGRAM, SOCK_RAW), non-blocking and close-on-exec, whose receive buffer is asked to
 * be rcvbuf bytes: SO_RCVBUFFORCE, which ignores net.core.rmem_max but needs CAP_NET_ADMIN, and
 * else SO_RCVBUF, capped by rmem_max (socket(7)). *ret_force_error (may be NULL) is 0 or the
 * -errno of SO_RCVBUFFORCE, *ret_size (may be NULL) the size the kernel reports
 * (getsockopt(SO_RCVBUF): twice what was granted). Returns the fd, or -errno.
 */
int netlink_socket_open(int type, int protocol, int rcvbuf, int *ret_force_error, int *ret_size);

/*
 * Binds fd (from netlink_socket_open()) to sa (its multicast groups), then watches it for EPOLLIN
 * on event with handler(userdata) as *ret_source, named description. Returns 0, bind(2)'s -errno,
 * or sd-event's.
 */
int netlink_socket_listen(
        int fd, const struct sockaddr_nl *sa, sd_event *event, sd_event_io_handler_t handler, void *userdata,
        const char *description, sd_event_source **ret_source);

/* Told that events may have been lost (error: the negative errno that says why). */
typedef void (*netlink_lost_t)(void *userdata, int error);

/* How a monitor's reader reacts to receive errors, the same in each. */
typedef struct NetlinkPause {
        sd_event_source *io;     /* the reader's I/O source; not owned */
        sd_event_source *timer;  /* owned; armed while reading is paused */
        int error;               /* the error that paused reading */
        uint64_t usec;           /* how long reading pauses */
        const char *description; /* the timer's name (a static string) */
        netlink_lost_t lost;
        void *userdata;
} NetlinkPause;

/* Sets p up for the reader io: pauses of usec µs, a timer named description, losses reported to
 * lost(userdata). */
void netlink_pause_init(
        NetlinkPause *p, sd_event_source *io, uint64_t usec, const char *description, netlink_lost_t lost,
        void *userdata);

/*
 * A receive call on p's socket failed with error (a negative errno). Returns true when the caller
 * should read again: -EINTR, and -ENOBUFS (the queue overflowed: reported as a loss first).
 * Returns false when it should stop reading for now: -EAGAIN (nothing left), or any other error,
 * after which reading pauses for p->usec (io disabled, rather than spinning on the error) and
 * then resumes, reporting the error as a loss; when no timer can be armed, io stays enabled and
 * the loss is reported at once.
 */
bool netlink_recv_failed(NetlinkPause *p, int error);

/* Frees p's timer. */
void netlink_pause_done(NetlinkPause *p);
