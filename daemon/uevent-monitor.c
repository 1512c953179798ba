/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel uevents on a NETLINK_KOBJECT_UEVENT socket as an sd-event I/O source (see
 * uevent-monitor.h).
 *
 * Wire format, as the kernel's kobject_uevent_env() builds it: one datagram per event, with no
 * netlink header, holding "ACTION@DEVPATH\0" and then the environment, "KEY=VALUE\0" strings
 * that always include ACTION, DEVPATH, SUBSYSTEM and SEQNUM. Messages that udevd re-broadcasts
 * (group 2, which we don't join) start with "libudev\0" and a binary header instead.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "netlink-socket.h"
#include "uevent-monitor.h"

/* The kernel's UEVENT_BUFFER_SIZE is 2048 for the environment, plus the header: anything
 * longer than this buffer is not a kernel uevent. */
#define RECV_BUFFER_SIZE 8192
/* Datagrams handled per dispatch, so a flood can't starve the loop's other sources (the
 * source is level-triggered and fires again). */
#define RECV_MAX_PER_DISPATCH 256
/* The kernel's uevent multicast group (udevd's is 2). */
#define KERNEL_GROUP 1U

struct UeventSubscription {
        UeventMonitor *monitor;
        UeventSubscription *prev, *next;
        char *subsystem; /* NULL: every event */
        uevent_handler_t on_event;
        uevent_lost_handler_t on_lost;
        void *userdata;
};

struct UeventMonitor {
        int fd;
        sd_event_source *source;
        NetlinkPause pause; /* after a receive error other than ENOBUFS */
        bool passcred;      /* SO_PASSCRED worked: datagrams must carry credentials */
        int rcvbuf_size;
        int rcvbuf_force_error;
        uint64_t n_dropped;
        UeventSubscription *subscriptions;
        UeventSubscription *dispatch_next; /* the next one to call while dispatching */
        char buffer[RECV_BUFFER_SIZE];
};

/* ---- parsing ---- */

/* The value of "KEY=VALUE" if s starts with key and '=', else NULL. */
static const char *env_value(const char *s, const char *key) {
        size_t l = strlen(key);

        if (strncmp(s, key, l) != 0 || s[l] != '=')
                return NULL;
        return s + l + 1;
}

int uevent_parse(const void *buf, size_t len, Uevent *ret) {
        static const char libudev_magic[] = "libudev"; /* 8 bytes with the NUL */
        const char *p = buf, *end = p + len, *header_end, *at;
        Uevent u = {};

        if (len >= sizeof(libudev_magic) && memcmp(p, libudev_magic, sizeof(libudev_magic)) == 0)
                return -EPROTO;
        /* The kernel terminates every string, the last one too: without it, it was cut short. */
        if (len == 0 || p[len - 1] != '\0')
                return -EBADMSG;

        header_end = memchr(p, '\0', len); /* found: p[len - 1] is one */
        at = memchr(p, '@', (size_t)(header_end - p));
        if (!at || at == p || at + 1 == header_end)
                return -EBADMSG;

        for (const char *s = header_end + 1; s < end; s += strlen(s) + 1) {
                /* Each s is NUL-terminated within buf: the last byte is a NUL. */
                const char *eq = strchr(s, '='), *v;

                if (!eq || eq == s)
                        return -EBADMSG; /* an empty string, or no KEY= */
                if (u.n_env >= UEVENT_MAX_ENV)
                        return -EBADMSG;
                u.env[u.n_env++] = s;

                if ((v = env_value(s, "ACTION"))) {
                        if (u.action || strlen(v) != (size_t)(at - p) || memcmp(v, p, (size_t)(at - p)) != 0)
                                return -EBADMSG;
                        u.action = v;
                } else if ((v = env_value(s, "DEVPATH"))) {
                        if (u.devpath || strcmp(v, at + 1) != 0)
                                return -EBADMSG;
                        u.devpath = v;
                } else if ((v = env_value(s, "SUBSYSTEM"))) {
                        if (u.subsystem || !*v)
                                return -EBADMSG;
                        u.subsystem = v;
                } else if ((v = env_value(s, "SEQNUM"))) {
                        char *e = NULL;

                        if (u.seqnum || *v < '0' || *v > '9')
                                return -EBADMSG;
                        errno = 0;
                        u.seqnum = strtoull(v, &e, 10);
                        if (errno != 0 || *e != '\0')
                                return -EBADMSG;
                }
        }
        /* The header's fields are not NUL-terminated where they stand: the kernel always
         * sends ACTION= and DEVPATH= too, and those are what the event points at. */
        if (!u.action || !u.devpath)
                return -EBADMSG;

        *ret = u;
        return 0;
}

const char *uevent_get(const Uevent *u, const char *key) {
        for (size_t i = 0; i < u->n_env; i++) {
                const char *v = env_value(u->env[i], key);
                if (v)
                        return v;
        }
        return NULL;
}

int uevent_cpu_number(const Uevent *u) {
        static const char prefix[] = "/devices/system/cpu/cpu";
        const char *n;
        unsigned long cpu;
        char *e = NULL;

        if (!u->subsystem || !streq(u->subsystem, "cpu") || !u->devpath ||
            strncmp(u->devpath, prefix, sizeof(prefix) - 1) != 0)
                return -EINVAL;
        n = u->devpath + sizeof(prefix) - 1;
        if (*n < '0' || *n > '9')
                return -EINVAL;
        errno = 0;
        cpu = strtoul(n, &e, 10);
        if (errno != 0 || *e != '\0' || cpu > INT_MAX)
                return -EINVAL;
        return (int)cpu;
}

/* ---- dispatching ---- */

static void dispatch_event(UeventMonitor *m, const Uevent *ev) {
        for (UeventSubscription *s = m->subscriptions; s; s = m->dispatch_next) {
                m->dispatch_next = s->next; /* s may free itself (or the next one: see _free()) */
                if (s->on_event && (!s->subsystem || streq_ptr(s->subsystem, ev->subsystem)))
                        (void)s->on_event(m, ev, s->userdata);
        }
        m->dispatch_next = NULL;
}

static void dispatch_lost(void *userdata, int error) {
        UeventMonitor *m = userdata;

        for (UeventSubscription *s = m->subscriptions; s; s = m->dispatch_next) {
                m->dispatch_next = s->next;
                if (s->on_lost)
                        s->on_lost(m, error, s->userdata);
        }
        m->dispatch_next = NULL;
}

/* True if the datagram came from the kernel: port id 0 and, when credentials are passed, uid 0. */
static bool sender_is_kernel(const UeventMonitor *m, const struct sockaddr_nl *sa, struct msghdr *mh) {
        bool have_creds = false;

        if (sa->nl_family != AF_NETLINK || sa->nl_pid != 0)
                return false;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                    c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
                        struct ucred cred;

                        memcpy(&cred, CMSG_DATA(c), sizeof(cred));
                        if (cred.uid != 0)
                                return false;
                        have_creds = true;
                }
        return have_creds || !m->passcred;
}

static int on_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        UeventMonitor *m = userdata;

        for (unsigned i = 0; i < RECV_MAX_PER_DISPATCH; i++) {
                union {
                        struct cmsghdr header;
                        uint8_t bytes[CMSG_SPACE(sizeof(struct ucred))];
                } control;
                struct sockaddr_nl sa = {};
                struct iovec iov = {.iov_base = m->buffer, .iov_len = sizeof(m->buffer)};
                struct msghdr mh = {
                        .msg_name = &sa,
                        .msg_namelen = sizeof(sa),
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = &control,
                        .msg_controllen = sizeof(control),
                };
                Uevent ev;
                ssize_t n;
                int r;

                n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (n < 0) {
                        if (netlink_recv_failed(&m->pause, -errno))
                                continue;
                        return 0;
                }
                if (!sender_is_kernel(m, &sa, &mh)) {
                        m->n_dropped++;
                        continue;
                }
                if (mh.msg_flags & MSG_TRUNC) {
                        m->n_dropped++;
                        dispatch_lost(m, -EBADMSG);
                        continue;
                }
                r = uevent_parse(m->buffer, (size_t)n, &ev);
                if (r < 0) {
                        m->n_dropped++;
                        continue;
                }
                dispatch_event(m, &ev);
        }
        return 0;
}

/* ---- lifecycle ---- */

int uevent_monitor_new(sd_event *event, UeventMonitor **ret) {
        _cleanup_(uevent_monitor_freep) UeventMonitor *m = NULL;
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = KERNEL_GROUP};
        int size = UEVENT_MONITOR_RCVBUF_SIZE, one = 1, r;

        m = calloc(1, sizeof(UeventMonitor));
        if (!m)
                return -ENOMEM;
        m->fd = netlink_socket_open(
                SOCK_DGRAM, NETLINK_KOBJECT_UEVENT, size, &m->rcvbuf_force_error, &m->rcvbuf_size);
        if (m->fd < 0)
                return m->fd;
        m->passcred = setsockopt(m->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) >= 0;

        r = netlink_socket_listen(m->fd, &sa, event, on_io, m, "kobject-uevent", &m->source);
        if (r < 0)
                return r;
        netlink_pause_init(
                &m->pause, m->source, UEVENT_MONITOR_RETRY_USEC, "kobject-uevent-retry", dispatch_lost, m);

        *ret = TAKE_PTR(m);
        return 0;
}

UeventMonitor *uevent_monitor_free(UeventMonitor *m) {
        if (!m)
                return NULL;
        while (m->subscriptions)
                uevent_subscription_free(m->subscriptions);
        m->source = sd_event_source_disable_unref(m->source);
        netlink_pause_done(&m->pause);
        if (m->fd >= 0)
                close(m->fd);
        return mfree(m);
}

int uevent_monitor_subscribe(
        UeventMonitor *m, const char *subsystem, uevent_handler_t on_event, uevent_lost_handler_t on_lost,
        void *userdata, UeventSubscription **ret) {
        UeventSubscription *s;

        s = calloc(1, sizeof(UeventSubscription));
        if (!s)
                return -ENOMEM;
        if (subsystem && !(s->subsystem = strdup(subsystem))) {
                free(s);
                return -ENOMEM;
        }
        s->monitor = m;
        s->on_event = on_event;
        s->on_lost = on_lost;
        s->userdata = userdata;
        /* At the head: one that subscribes while an event is dispatched doesn't get that one. */
        s->next = m->subscriptions;
        if (s->next)
                s->next->prev = s;
        m->subscriptions = s;
        if (ret)
                *ret = s;
        return 0;
}

UeventSubscription *uevent_subscription_free(UeventSubscription *s) {
        UeventMonitor *m;

        if (!s)
                return NULL;
        m = s->monitor;
        if (m->dispatch_next == s)
                m->dispatch_next = s->next;
        if (s->prev)
                s->prev->next = s->next;
        else
                m->subscriptions = s->next;
        if (s->next)
                s->next->prev = s->prev;
        free(s->subsystem);
        return mfree(s);
}

int uevent_monitor_get_fd(const UeventMonitor *m) {
        return m->fd;
}

void uevent_monitor_get_receive_buffer(const UeventMonitor *m, size_t *ret_size, int *ret_force_error) {
        if (ret_size)
                *ret_size = m->rcvbuf_size > 0 ? (size_t)m->rcvbuf_size : 0;
        if (ret_force_error)
                *ret_force_error = m->rcvbuf_force_error;
}

uint64_t uevent_monitor_n_dropped(const UeventMonitor *m) {
        return m->n_dropped;
}
