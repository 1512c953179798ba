/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Network link events straight from the kernel: a NETLINK_ROUTE socket bound to RTMGRP_LINK
 * (rtnetlink(7)), as an sd-event I/O source. The kernel multicasts RTM_NEWLINK when a link
 * appears or changes (flags: IFF_UP, IFF_RUNNING, IFF_LOWER_UP; a queue-count change) and
 * RTM_DELLINK when it goes away. Many drivers allocate their IRQs only at link-up, so the
 * device placement rescans on these. Messages not from the kernel (nl_pid != 0) are dropped.
 * ENOBUFS (the kernel dropped messages) is reported as lost: the consumer rescans. Logs nothing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "macro.h"

#define RTNL_MONITOR_RCVBUF_SIZE (1024 * 1024)

typedef enum RtnlLinkAction {
        RTNL_LINK_NEW, /* RTM_NEWLINK: appeared or changed */
        RTNL_LINK_DEL, /* RTM_DELLINK */
} RtnlLinkAction;

/* One link message, parsed. name points into the datagram (or an aligned copy of it): valid
 * during the callback only. */
typedef struct RtnlLinkEvent {
        RtnlLinkAction action;
        int ifindex;
        unsigned flags;       /* ifinfomsg.ifi_flags (IFF_*) */
        unsigned change;      /* ifinfomsg.ifi_change */
        const char *name;     /* IFLA_IFNAME, NULL if absent */
        uint32_t n_rx_queues; /* IFLA_NUM_RX_QUEUES, 0 if absent */
        uint32_t n_tx_queues; /* IFLA_NUM_TX_QUEUES, 0 if absent */
} RtnlLinkEvent;

/*
 * Parses the netlink messages of one datagram (len bytes): calls cb for each RTM_NEWLINK /
 * RTM_DELLINK of family AF_UNSPEC, in order, skipping other types, NLMSG_DONE/NOOP and the
 * AF_BRIDGE copies the bridge code multicasts when a port joins or leaves a bridge (the device
 * itself did not appear or go). The last message and the last attribute may lack their
 * alignment padding. A buf that is not NLMSG_ALIGNTO-aligned is parsed from a copy. Never reads
 * outside buf[0..len). Returns the number of link events, or -EBADMSG for a truncated or
 * malformed message (a header or attribute cut short, an ifinfomsg missing, an IFLA_IFNAME that
 * is empty, unterminated or IFNAMSIZ long, a queue count that is not a u32; events before it
 * were delivered), or -ENOMEM (unaligned buf only).
 */
int rtnl_parse_links(
        const void *buf, size_t len, void (*cb)(const RtnlLinkEvent *ev, void *userdata), void *userdata);

typedef struct RtnlMonitor RtnlMonitor;

typedef void (*rtnl_link_handler_t)(RtnlMonitor *m, const RtnlLinkEvent *ev, void *userdata);
/* Messages may have been lost (-ENOBUFS, -EBADMSG, or a receive error's -errno). */
typedef void (*rtnl_lost_handler_t)(RtnlMonitor *m, int error, void *userdata);

/* Opens the socket (RTMGRP_LINK, receive buffer RTNL_MONITOR_RCVBUF_SIZE via SO_RCVBUFFORCE
 * where allowed) on event (description "rtnetlink-link"). Returns 0, -errno of socket(2)/bind(2)
 * or sd-event. Nothing is left open on failure. */
int rtnl_monitor_new(
        sd_event *event, rtnl_link_handler_t on_link, rtnl_lost_handler_t on_lost, void *userdata,
        RtnlMonitor **ret);
RtnlMonitor *rtnl_monitor_free(RtnlMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(RtnlMonitor *, rtnl_monitor_free);

/* The socket, for tests. */
int rtnl_monitor_get_fd(const RtnlMonitor *m);

/* Datagrams dropped so far: not from the kernel (sender nl_pid != 0), cut short (MSG_TRUNC),
 * or malformed. */
uint64_t rtnl_monitor_n_dropped(const RtnlMonitor *m);
