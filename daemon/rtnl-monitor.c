/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtnetlink link events on a NETLINK_ROUTE socket as an sd-event I/O source (see
 * rtnl-monitor.h).
 *
 * Wire format (rtnetlink(7), netlink(7)): a datagram holds one or more netlink messages, each a
 * struct nlmsghdr padded to NLMSG_ALIGNTO (4) bytes. An RTM_NEWLINK / RTM_DELLINK message
 * carries a struct ifinfomsg followed by route attributes (struct rtattr + payload, each padded
 * to RTA_ALIGNTO); the ones read here are IFLA_IFNAME (a NUL-terminated string) and
 * IFLA_NUM_RX_QUEUES / IFLA_NUM_TX_QUEUES (u32). The kernel also multicasts RTM_NEWLINK /
 * RTM_DELLINK with ifi_family AF_BRIDGE to the same group when a port joins or leaves a bridge:
 * those describe the port, not the device's existence, and are skipped.
 */

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "netlink-socket.h"
#include "rtnl-monitor.h"

/* The first receive buffer; grown to the size of a larger datagram (peeked first). */
#define RECV_BUFFER_SIZE (32 * 1024)
/* Datagrams handled per dispatch, so a flood can't starve the loop's other sources (the
 * source is level-triggered and fires again). */
#define RECV_MAX_PER_DISPATCH 256
/* After a receive error other than ENOBUFS, reading pauses this long (µs), then resumes with a
 * lost report. */
#define RECV_RETRY_USEC (1000 * 1000)

struct RtnlMonitor {
        int fd;
        sd_event_source *source;
        NetlinkPause pause; /* after a receive error other than ENOBUFS */
        rtnl_link_handler_t on_link;
        rtnl_lost_handler_t on_lost;
        void *userdata;
        uint64_t n_dropped;
        void *buffer; /* malloc()ed: aligned for struct nlmsghdr */
        size_t buffer_size;
};

/* ---- parsing ---- */

/* Reads the attributes of one link message into *ev. Returns 0 or -EBADMSG. */
static int parse_link_attributes(const struct nlmsghdr *nlh, RtnlLinkEvent *ev) {
        const struct ifinfomsg *ifi = NLMSG_DATA(nlh);
        /* nlmsg_len >= NLMSG_LENGTH(sizeof(*ifi)) was checked: IFLA_PAYLOAD() is >= 0. */
        int attrlen = (int)IFLA_PAYLOAD(nlh);
        const struct rtattr *rta;

        for (rta = IFLA_RTA(ifi); RTA_OK(rta, attrlen); rta = RTA_NEXT(rta, attrlen)) {
                size_t payload = RTA_PAYLOAD(rta);

                switch (rta->rta_type) {
                case IFLA_IFNAME: {
                        const char *name = RTA_DATA(rta);
                        size_t l = strnlen(name, payload);

                        /* The kernel sends a NUL-terminated, non-empty name shorter than
                         * IFNAMSIZ. */
                        if (l == 0 || l == payload || l >= IFNAMSIZ)
                                return -EBADMSG;
                        ev->name = name;
                        break;
                }
                case IFLA_NUM_RX_QUEUES:
                case IFLA_NUM_TX_QUEUES: {
                        uint32_t v;

                        if (payload != sizeof(v))
                                return -EBADMSG;
                        memcpy(&v, RTA_DATA(rta), sizeof(v));
                        if (rta->rta_type == IFLA_NUM_RX_QUEUES)
                                ev->n_rx_queues = v;
                        else
                                ev->n_tx_queues = v;
                        break;
                }
                default:
                        break;
                }
                /* RTA_NEXT() subtracts the padded length: the last attribute may come without
                 * its padding at the end of the message. */
                if ((int)RTA_ALIGN(rta->rta_len) >= attrlen)
                        return 0;
        }
        /* Bytes left that don't hold a whole attribute: cut short. */
        return attrlen == 0 ? 0 : -EBADMSG;
}

static int parse_aligned(
        const void *buf, int len, void (*cb)(const RtnlLinkEvent *ev, void *userdata), void *userdata) {
        const struct nlmsghdr *nlh;
        int n = 0, r;

        for (nlh = buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
                if (nlh->nlmsg_type == RTM_NEWLINK || nlh->nlmsg_type == RTM_DELLINK) {
                        const struct ifinfomsg *ifi = NLMSG_DATA(nlh);
                        RtnlLinkEvent ev = {
                                .action = nlh->nlmsg_type == RTM_NEWLINK ? RTNL_LINK_NEW : RTNL_LINK_DEL,
                        };

                        if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
                                return -EBADMSG;
                        if (ifi->ifi_family == AF_UNSPEC) {
                                ev.ifindex = ifi->ifi_index;
                                ev.flags = ifi->ifi_flags;
                                ev.change = ifi->ifi_change;
                                r = parse_link_attributes(nlh, &ev);
                                if (r < 0)
                                        return r;
                                cb(&ev, userdata);
                                n++;
                        }
                }
                /* Other types (NLMSG_NOOP, NLMSG_DONE, NLMSG_ERROR, ...) are skipped. As for
                 * attributes, the last message may lack its padding: stop before NLMSG_NEXT()
                 * would step past the end. */
                if ((int)NLMSG_ALIGN(nlh->nlmsg_len) >= len)
                        return n;
        }
        /* Bytes left that don't hold a whole message: cut short. */
        return len == 0 ? n : -EBADMSG;
}

int rtnl_parse_links(
        const void *buf, size_t len, void (*cb)(const RtnlLinkEvent *ev, void *userdata), void *userdata) {
        _cleanup_free_ void *copy = NULL;

        if (len > INT_MAX)
                return -EBADMSG; /* no datagram is that long */
        if (len == 0)
                return 0;
        /* The rtnetlink macros read the headers in place: that needs NLMSG_ALIGNTO alignment,
         * which every receive buffer has. Anything else is parsed from an aligned copy. */
        if ((uintptr_t)buf % NLMSG_ALIGNTO != 0) {
                copy = malloc(len);
                if (!copy)
                        return -ENOMEM;
                memcpy(copy, buf, len);
                buf = copy;
        }
        return parse_aligned(buf, (int)len, cb, userdata);
}

/* ---- receiving ---- */

static void dispatch_link(const RtnlLinkEvent *ev, void *userdata) {
        RtnlMonitor *m = userdata;

        if (m->on_link)
                m->on_link(m, ev, m->userdata);
}

static void dispatch_lost(void *userdata, int error) {
        RtnlMonitor *m = userdata;

        if (m->on_lost)
                m->on_lost(m, error, m->userdata);
}

/* Makes the buffer hold at least size bytes. Returns 0 or -ENOMEM. */
static int buffer_reserve(RtnlMonitor *m, size_t size) {
        void *b;

        if (size <= m->buffer_size)
                return 0;
        b = malloc(size);
        if (!b)
                return -ENOMEM;
        free(m->buffer);
        m->buffer = b;
        m->buffer_size = size;
        return 0;
}

static int on_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        RtnlMonitor *m = userdata;

        for (unsigned i = 0; i < RECV_MAX_PER_DISPATCH; i++) {
                struct sockaddr_nl sa = {};
                struct iovec iov;
                struct msghdr mh = {
                        .msg_name = &sa,
                        .msg_namelen = sizeof(sa),
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                };
                ssize_t n;
                int r;

                /* The size of the next datagram (MSG_TRUNC: its real length), so that a long
                 * one (a device with many VFs) is read whole. A pending error (ENOBUFS) is
                 * reported by whichever call comes first, and only once: this one. */
                n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
                if (n >= 0) {
                        /* If it can't grow, the datagram is cut short and reported lost below. */
                        (void)buffer_reserve(m, (size_t)n);
                        iov = (struct iovec){.iov_base = m->buffer, .iov_len = m->buffer_size};
                        n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                }
                if (n < 0) {
                        if (netlink_recv_failed(&m->pause, -errno))
                                continue;
                        return 0;
                }
                if (mh.msg_namelen < sizeof(sa) || sa.nl_family != AF_NETLINK || sa.nl_pid != 0) {
                        /* Not from the kernel: another process sending to the group. */
                        m->n_dropped++;
                        continue;
                }
                if (mh.msg_flags & MSG_TRUNC) {
                        m->n_dropped++;
                        dispatch_lost(m, -EBADMSG);
                        continue;
                }
                r = rtnl_parse_links(m->buffer, (size_t)n, dispatch_link, m);
                if (r < 0) {
                        /* The events before the bad message were delivered; what it and the
                         * rest held is unknown. */
                        m->n_dropped++;
                        dispatch_lost(m, r);
                }
        }
        return 0;
}

/* ---- lifecycle ---- */

int rtnl_monitor_new(
        sd_event *event, rtnl_link_handler_t on_link, rtnl_lost_handler_t on_lost, void *userdata,
        RtnlMonitor **ret) {
        _cleanup_(rtnl_monitor_freep) RtnlMonitor *m = NULL;
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
        int size = RTNL_MONITOR_RCVBUF_SIZE, r;

        m = calloc(1, sizeof(RtnlMonitor));
        if (!m)
                return -ENOMEM;
        m->fd = -EBADF;
        m->on_link = on_link;
        m->on_lost = on_lost;
        m->userdata = userdata;
        r = buffer_reserve(m, RECV_BUFFER_SIZE);
        if (r < 0)
                return r;

        m->fd = netlink_socket_open(SOCK_RAW, NETLINK_ROUTE, size, NULL, NULL);
        if (m->fd < 0)
                return m->fd;
        r = netlink_socket_listen(m->fd, &sa, event, on_io, m, "rtnetlink-link", &m->source);
        if (r < 0)
                return r;
        netlink_pause_init(&m->pause, m->source, RECV_RETRY_USEC, "rtnetlink-link-retry", dispatch_lost, m);

        *ret = TAKE_PTR(m);
        return 0;
}

RtnlMonitor *rtnl_monitor_free(RtnlMonitor *m) {
        if (!m)
                return NULL;
        m->source = sd_event_source_disable_unref(m->source);
        netlink_pause_done(&m->pause);
        if (m->fd >= 0)
                close(m->fd);
        free(m->buffer);
        return mfree(m);
}

int rtnl_monitor_get_fd(const RtnlMonitor *m) {
        return m->fd;
}

uint64_t rtnl_monitor_n_dropped(const RtnlMonitor *m) {
        return m->n_dropped;
}
