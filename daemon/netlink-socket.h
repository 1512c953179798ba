/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the three netlink monitors (proc connector, kernel uevents, rtnetlink) do alike: open a
 * non-blocking socket with a large receive buffer, and stop reading for a while after a receive
 * error other than ENOBUFS (rather than spin on it), then read again and report that events may
 * have been lost (docs/architecture.md, "The process lifecycle": a loss means a rescan).
 */

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

/* A reader paused after a receive error: its timer, and the error to report when it resumes. */
typedef struct NetlinkPause {
        sd_event_source *timer; /* owned; armed while reading is paused */
        int error;              /* the error that paused reading */
} NetlinkPause;

/*
 * Pauses io (the reader's I/O source) for usec µs after a receive error: disables it and arms
 * the timer (made on io's event loop, named description), whose callback on_resume (given
 * userdata) must enable io again and report p->error as a possible loss. Returns 0, or -errno
 * when no timer could be armed: then io is left enabled, and the caller reports the loss now.
 */
int netlink_pause(
        NetlinkPause *p, sd_event_source *io, int error, uint64_t usec, const char *description,
        sd_event_time_handler_t on_resume, void *userdata);

/* Frees p's timer. */
void netlink_pause_done(NetlinkPause *p);
