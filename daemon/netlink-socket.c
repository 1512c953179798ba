/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the three netlink monitors share. See netlink-socket.h. */

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "netlink-socket.h"

int netlink_socket_open(int type, int protocol, int rcvbuf, int *ret_force_error, int *ret_size) {
        int fd, force_error = 0, size = 0, r;
        socklen_t l = sizeof(size);

        fd = socket(AF_NETLINK, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0) {
                force_error = -errno;
                if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
                        goto fail;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &l) < 0)
                goto fail;
        if (ret_force_error)
                *ret_force_error = force_error;
        if (ret_size)
                *ret_size = size;
        return fd;
fail:
        r = -errno;
        close(fd);
        return r;
}

void netlink_pause_init(
        NetlinkPause *p, sd_event_source *io, uint64_t usec, const char *description, netlink_lost_t lost,
        void *userdata) {
        *p = (NetlinkPause){
                .io = io, .usec = usec, .description = description, .lost = lost, .userdata = userdata};
}

static int on_resume(sd_event_source *s, uint64_t usec, void *userdata) {
        NetlinkPause *p = userdata;

        (void)sd_event_source_set_enabled(p->io, SD_EVENT_ON);
        p->lost(p->userdata, p->error);
        return 0;
}

/* Disables io and arms the timer that enables it again. Returns 0 or sd-event's -errno (then io
 * is left enabled). */
static int netlink_pause(NetlinkPause *p, int error) {
        int r;

        p->error = error;
        (void)sd_event_source_set_enabled(p->io, SD_EVENT_OFF);
        if (!p->timer) {
                r = sd_event_add_time_relative(
                        sd_event_source_get_event(p->io), &p->timer, CLOCK_MONOTONIC, p->usec, 0, on_resume,
                        p);
                if (r >= 0)
                        (void)sd_event_source_set_description(p->timer, p->description);
        } else {
                r = sd_event_source_set_time_relative(p->timer, p->usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                (void)sd_event_source_set_enabled(p->io, SD_EVENT_ON);
        return r;
}

bool netlink_recv_failed(NetlinkPause *p, int error) {
        if (error == -EAGAIN || error == -EWOULDBLOCK)
                return false;
        if (error == -EINTR)
                return true;
        if (error == -ENOBUFS) {
                p->lost(p->userdata, -ENOBUFS);
                return true;
        }
        if (netlink_pause(p, error) < 0)
                p->lost(p->userdata, error); /* can't pause: keep reading, and say what happened now */
        return false;
}

void netlink_pause_done(NetlinkPause *p) {
        p->timer = sd_event_source_disable_unref(p->timer);
}

int netlink_socket_listen(
        int fd, const struct sockaddr_nl *sa, sd_event *event, sd_event_io_handler_t handler, void *userdata,
        const char *description, sd_event_source **ret_source) {
        int r;

        if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
                return -errno;
        r = sd_event_add_io(event, ret_source, fd, EPOLLIN, handler, userdata);
        if (r < 0)
                return r;
        (void)sd_event_source_set_description(*ret_source, description);
        return 0;
}
