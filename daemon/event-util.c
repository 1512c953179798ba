/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd-event helpers: see event-util.h. */

#include <errno.h>
#include <unistd.h>

#include "event-util.h"

#include "log.h"
#include "macro.h"

int event_periodic_timer_update(
        sd_event *e, sd_event_source **source, uint64_t *armed_usec, uint64_t interval_usec,
        sd_event_time_handler_t handler, void *userdata, const char *description, const char *what) {
        int enabled = SD_EVENT_OFF, r;

        if (interval_usec == 0) {
                if (*source)
                        (void)sd_event_source_set_enabled(*source, SD_EVENT_OFF);
                return 0;
        }
        if (*source) {
                r = sd_event_source_get_enabled(*source, &enabled);
                if (r < 0)
                        return log_debug_errno(r, "Failed to query the %s: %m", what);
                if (enabled != SD_EVENT_OFF && *armed_usec == interval_usec)
                        return 0;
                r = sd_event_source_set_time_relative(*source, interval_usec);
                if (r >= 0)
                        r = sd_event_source_set_time_accuracy(
                                *source, MAX(interval_usec / 4, (uint64_t)1000));
                if (r >= 0)
                        r = sd_event_source_set_enabled(*source, SD_EVENT_ONESHOT);
                if (r < 0)
                        return log_debug_errno(r, "Failed to arm the %s: %m", what);
        } else {
                r = sd_event_add_time_relative(
                        e, source, CLOCK_MONOTONIC, interval_usec, MAX(interval_usec / 4, (uint64_t)1000),
                        handler, userdata);
                if (r < 0)
                        return log_debug_errno(r, "Failed to add the %s: %m", what);
                (void)sd_event_source_set_description(*source, description);
        }
        *armed_usec = interval_usec;
        return 0;
}

int inotify_drain(int fd, void (*fn)(const struct inotify_event *e, void *userdata), void *userdata) {
        union {
                struct inotify_event e;
                char bytes[4096];
        } buf;
        ssize_t n;

        for (;;) {
                n = read(fd, buf.bytes, sizeof(buf.bytes));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? 0 : -errno;
                if (n == 0)
                        return 0;
                for (const char *p = buf.bytes; p < buf.bytes + n;) {
                        const struct inotify_event *e = (const struct inotify_event *)p;

                        p += sizeof(struct inotify_event) + e->len;
                        fn(e, userdata);
                }
        }
}

int event_add_inotify(
        sd_event *e, int64_t priority, sd_event_io_handler_t handler, void *userdata,
        const char *description, int *ret_fd, sd_event_source **ret_source) {
        sd_event_source *source = NULL;
        int fd, r;

        fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = sd_event_add_io(e, &source, fd, EPOLLIN, handler, userdata);
        if (r >= 0) {
                (void)sd_event_source_set_description(source, description);
                r = sd_event_source_set_priority(source, priority);
        }
        if (r < 0) {
                sd_event_source_disable_unref(source);
                close(fd);
                return r;
        }
        *ret_fd = fd;
        *ret_source = source;
        return 0;
}
