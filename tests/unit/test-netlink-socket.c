/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of daemon/netlink-socket.c, what the netlink monitors share, without root: the
 * socket's flags and buffer, and how a reader reacts to each kind of receive error (read again,
 * stop, report a loss, pause and resume), on a test loop with an eventfd standing in for the
 * socket.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "netlink-socket.h"
#include "util.h"

typedef struct Lost {
        unsigned n;
        int error;
} Lost;

static void on_lost(void *userdata, int error) {
        Lost *l = userdata;

        l->n++;
        l->error = error;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        return 0;
}

static int io_enabled(sd_event_source *io) {
        int enabled = -1;

        ck_assert_int_ge(sd_event_source_get_enabled(io, &enabled), 0);
        return enabled;
}

START_TEST(test_open) {
        int fd, force_error = 1, size = 0;

        fd = netlink_socket_open(SOCK_RAW, NETLINK_ROUTE, 1 << 20, &force_error, &size);
        ck_assert_int_ge(fd, 0);
        ck_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
        ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        /* SO_RCVBUFFORCE needs CAP_NET_ADMIN; SO_RCVBUF gives at least something either way */
        ck_assert_int_eq(force_error, geteuid() == 0 ? 0 : -EPERM);
        ck_assert_int_gt(size, 0);
        if (force_error == 0)
                ck_assert_int_ge(size, 1 << 20);
        ck_assert_int_eq(close(fd), 0);
        /* NULL outputs are fine */
        fd = netlink_socket_open(SOCK_DGRAM, NETLINK_KOBJECT_UEVENT, 4096, NULL, NULL);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(close(fd), 0);
        /* a protocol that does not exist */
        ck_assert_int_lt(netlink_socket_open(SOCK_RAW, 1000, 4096, NULL, NULL), 0);
}
END_TEST

/* EAGAIN: stop; EINTR: again; ENOBUFS: a loss, and again; nothing paused. */
START_TEST(test_recv_errors) {
        sd_event *e = NULL;
        sd_event_source *io = NULL;
        NetlinkPause p;
        Lost l = {};
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(sd_event_add_io(e, &io, fd, EPOLLIN, on_io, NULL), 0);
        netlink_pause_init(&p, io, 1000, "test-retry", on_lost, &l);

        ck_assert(!netlink_recv_failed(&p, -EAGAIN));
        ck_assert(netlink_recv_failed(&p, -EINTR));
        ck_assert_uint_eq(l.n, 0);
        ck_assert(netlink_recv_failed(&p, -ENOBUFS));
        ck_assert_uint_eq(l.n, 1);
        ck_assert_int_eq(l.error, -ENOBUFS);
        ck_assert_int_eq(io_enabled(io), SD_EVENT_ON);
        ck_assert_ptr_null(p.timer);

        netlink_pause_done(&p);
        sd_event_source_unref(io);
        sd_event_unref(e);
        close(fd);
}
END_TEST

/* Another error: reading stops (io off) for the pause, then resumes with the error reported as
 * a loss; a second error pauses again with the same timer. */
START_TEST(test_pause_and_resume) {
        sd_event *e = NULL;
        sd_event_source *io = NULL;
        NetlinkPause p;
        Lost l = {};
        uint64_t deadline;
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(sd_event_add_io(e, &io, fd, EPOLLIN, on_io, NULL), 0);
        netlink_pause_init(&p, io, 20 * 1000, "test-retry", on_lost, &l);

        for (unsigned round = 1; round <= 2; round++) {
                ck_assert(!netlink_recv_failed(&p, round == 1 ? -EIO : -ENOMEM));
                ck_assert_int_eq(io_enabled(io), SD_EVENT_OFF);
                ck_assert_ptr_nonnull(p.timer);
                ck_assert_uint_eq(l.n, round - 1); /* nothing reported until it resumes */
                deadline = now_monotonic_usec() + 5 * 1000 * 1000;
                while (l.n < round) {
                        ck_assert_msg(now_monotonic_usec() < deadline, "reading did not resume");
                        ck_assert_int_ge(sd_event_run(e, 100 * 1000), 0);
                }
                ck_assert_int_eq(l.error, round == 1 ? -EIO : -ENOMEM);
                ck_assert_int_eq(io_enabled(io), SD_EVENT_ON);
        }

        netlink_pause_done(&p);
        ck_assert_ptr_null(p.timer);
        sd_event_source_unref(io);
        sd_event_unref(e);
        close(fd);
}
END_TEST

int main(void) {
        Suite *s = suite_create("netlink-socket");
        TCase *tc = tcase_create("reader");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_open);
        tcase_add_test(tc, test_recv_errors);
        tcase_add_test(tc, test_pause_and_resume);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
