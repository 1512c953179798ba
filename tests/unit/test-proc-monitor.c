/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of daemon/proc-monitor.c.
 *  - "parse": hand-built proc connector datagrams of every event type, several messages per
 *    datagram, truncated and inconsistent ones, odd alignments and random garbage; every
 *    buffer is a heap block of exactly the datagram's size, so ASan catches any over-read.
 *  - "live": the real proc connector on a real sd_event loop, with a forked and exec'd
 *    /bin/true, a child that changes its uid, a thread that renames itself, and a provoked
 *    receive-queue overrun (ENOBUFS). Needs root in the initial PID and user namespaces;
 *    exits 77 only where that is not the case. With it, the subscription that kernels before
 *    6.6 take (forced), and its types dropped on receipt.
 *  - "filter": the kernel's event-type filter (Linux >= 6.6, proc_monitor_kernel_filters()):
 *    what reaches the socket, read past the monitor, before and after a change of types. Exits
 *    77 where the live tests can't run or the kernel doesn't filter.
 * Usage: test-proc-monitor [parse|live|filter] (no argument: all).
 */

#include <check.h>
#include <sched.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "proc-monitor.h"

#define NSEC_PER_SEC UINT64_C(1000000000)
#define USEC_PER_SEC UINT64_C(1000000)

static uint64_t now_ns(void) {
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---- recording handler ---- */

typedef struct Recorded {
        ProcEvent ev;
        uint64_t delivered_ns; /* CLOCK_MONOTONIC when the handler saw it */
} Recorded;

typedef struct Recorder {
        Recorded *items;
        size_t n, allocated;
} Recorder;

static int record(ProcMonitor *m, const ProcEvent *ev, void *userdata) {
        Recorder *rec = userdata;

        if (rec->n == rec->allocated) {
                rec->allocated = rec->allocated ? rec->allocated * 2 : 64;
                rec->items = realloc(rec->items, rec->allocated * sizeof(Recorded));
                ck_assert_ptr_nonnull(rec->items);
        }
        rec->items[rec->n++] = (Recorded){.ev = *ev, .delivered_ns = now_ns()};
        return 0;
}

static void recorder_done(Recorder *rec) {
        rec->items = mfree(rec->items);
        rec->n = rec->allocated = 0;
}

/* ---- datagram builder ---- */

typedef struct Datagram {
        uint8_t bytes[4096];
        size_t len;
        size_t ends[32]; /* end offset of each message */
        size_t n_msgs;
} Datagram;

/* Appends one netlink message: nlmsghdr (type nl_type) + cn_msg (idx/val, len cn_len) +
 * data_len bytes of data. nlmsg_len covers exactly the cn_msg and data_len bytes. */
static void datagram_add_raw(
        Datagram *d, uint16_t nl_type, uint32_t idx, uint32_t val, uint16_t cn_len, const void *data,
        size_t data_len) {
        size_t off = NLMSG_ALIGN(d->len);
        struct nlmsghdr nlh = {
                .nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) + data_len),
                .nlmsg_type = nl_type,
        };
        struct cn_msg cn = {
                .id = {.idx = idx, .val = val},
                .len = cn_len,
        };

        ck_assert_uint_le(off + nlh.nlmsg_len, sizeof(d->bytes));
        ck_assert_uint_lt(d->n_msgs, ELEMENTSOF(d->ends));
        memset(d->bytes + d->len, 0, off - d->len);
        memcpy(d->bytes + off, &nlh, sizeof(nlh));
        memcpy(d->bytes + off + NLMSG_HDRLEN, &cn, sizeof(cn));
        memcpy(d->bytes + off + NLMSG_HDRLEN + sizeof(cn), data, data_len);
        d->len = off + nlh.nlmsg_len;
        d->ends[d->n_msgs++] = d->len;
}

static void datagram_add(Datagram *d, const struct proc_event *pe) {
        datagram_add_raw(d, NLMSG_DONE, CN_IDX_PROC, CN_VAL_PROC, sizeof(*pe), pe, sizeof(*pe));
}

/* Parses len bytes of d through an exactly sized heap copy placed at offset align of the
 * allocation (so the data is misaligned when align % 8 != 0). */
static int parse_copy(ProcMonitor *m, const void *data, size_t len, size_t align) {
        /* The block ends exactly where the datagram ends. */
        uint8_t *block = malloc(MAX(len + align, (size_t)1));
        int r;

        ck_assert_ptr_nonnull(block);
        memcpy(block + align, data, len);
        r = proc_monitor_parse(m, block + align, len);
        free(block);
        return r;
}

static struct proc_event event_fork(uint64_t ts, pid_t ppid, pid_t ptgid, pid_t cpid, pid_t ctgid) {
        struct proc_event pe = {.what = PROC_EVENT_FORK, .cpu = 1, .timestamp_ns = ts};

        pe.event_data.fork.parent_pid = ppid;
        pe.event_data.fork.parent_tgid = ptgid;
        pe.event_data.fork.child_pid = cpid;
        pe.event_data.fork.child_tgid = ctgid;
        return pe;
}

static struct proc_event event_exec(uint64_t ts, pid_t pid, pid_t tgid) {
        struct proc_event pe = {.what = PROC_EVENT_EXEC, .timestamp_ns = ts};

        pe.event_data.exec.process_pid = pid;
        pe.event_data.exec.process_tgid = tgid;
        return pe;
}

static struct proc_event event_uid(uint64_t ts, pid_t pid, pid_t tgid, uint32_t ruid, uint32_t euid) {
        struct proc_event pe = {.what = PROC_EVENT_UID, .timestamp_ns = ts};

        pe.event_data.id.process_pid = pid;
        pe.event_data.id.process_tgid = tgid;
        pe.event_data.id.r.ruid = ruid;
        pe.event_data.id.e.euid = euid;
        return pe;
}

static struct proc_event event_comm(uint64_t ts, pid_t pid, pid_t tgid, const char *comm, size_t comm_len) {
        struct proc_event pe = {.what = PROC_EVENT_COMM, .timestamp_ns = ts};

        pe.event_data.comm.process_pid = pid;
        pe.event_data.comm.process_tgid = tgid;
        memcpy(pe.event_data.comm.comm, comm, comm_len);
        return pe;
}

static struct proc_event event_exit(uint64_t ts, pid_t pid, pid_t tgid, uint32_t code) {
        struct proc_event pe = {.what = PROC_EVENT_EXIT, .timestamp_ns = ts};

        pe.event_data.exit.process_pid = pid;
        pe.event_data.exit.process_tgid = tgid;
        pe.event_data.exit.exit_code = code;
        pe.event_data.exit.exit_signal = 17;
        return pe;
}

static struct proc_event event_other(uint32_t what, uint64_t ts, pid_t pid) {
        struct proc_event pe = {.what = what, .timestamp_ns = ts};

        pe.event_data.sid.process_pid = pid;
        pe.event_data.sid.process_tgid = pid;
        return pe;
}

/* The five reported types, in one datagram each or together; expectations alongside. */
static void build_all_types(struct proc_event pe[5], ProcEvent expected[5]) {
        pe[0] = event_fork(UINT64_C(1000000001), 10, 11, 1234, 1233);
        expected[0] = (ProcEvent){
                .type = PROC_MONITOR_FORK,
                .timestamp_ns = UINT64_C(1000000001),
                .pid = 1234,
                .tgid = 1233,
                .parent_pid = 10,
                .parent_tgid = 11};
        pe[1] = event_exec(UINT64_C(0xfedcba9876543210), 4242, 4242);
        expected[1] = (ProcEvent){
                .type = PROC_MONITOR_EXEC,
                .timestamp_ns = UINT64_C(0xfedcba9876543210),
                .pid = 4242,
                .tgid = 4242};
        pe[2] = event_uid(3, 77, 76, 0, 65534);
        expected[2] = (ProcEvent){
                .type = PROC_MONITOR_UID, .timestamp_ns = 3, .pid = 77, .tgid = 76, .euid = 65534};
        pe[3] = event_comm(4, 4000000, 3999999, "worker-7", sizeof("worker-7"));
        expected[3] = (ProcEvent){
                .type = PROC_MONITOR_COMM,
                .timestamp_ns = 4,
                .pid = 4000000,
                .tgid = 3999999,
                .comm = "worker-7"};
        pe[4] = event_exit(5, 99, 98, 256);
        expected[4] = (ProcEvent){.type = PROC_MONITOR_EXIT, .timestamp_ns = 5, .pid = 99, .tgid = 98};
}

static void assert_event_eq(const ProcEvent *a, const ProcEvent *b) {
        ck_assert_int_eq(a->type, b->type);
        ck_assert_uint_eq(a->timestamp_ns, b->timestamp_ns);
        ck_assert_int_eq(a->pid, b->pid);
        ck_assert_int_eq(a->tgid, b->tgid);
        ck_assert_int_eq(a->parent_pid, b->parent_pid);
        ck_assert_int_eq(a->parent_tgid, b->parent_tgid);
        ck_assert_uint_eq(a->euid, b->euid);
        ck_assert_str_eq(a->comm, b->comm);
}

static ProcMonitor *parser_new(Recorder *rec) {
        ProcMonitor *m = NULL;

        ck_assert_int_eq(proc_monitor_new_parser(record, rec, &m), 0);
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(proc_monitor_get_fd(m), -EBADF);
        return m;
}

START_TEST(test_parse_each_type) {
        struct proc_event pe[5];
        ProcEvent expected[5];
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);

        build_all_types(pe, expected);
        for (size_t i = 0; i < ELEMENTSOF(pe); i++) {
                Datagram d = {};

                rec.n = 0;
                datagram_add(&d, &pe[i]);
                ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), 1);
                ck_assert_uint_eq(rec.n, 1);
                assert_event_eq(&rec.items[0].ev, &expected[i]);
        }

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

START_TEST(test_parse_comm_unterminated) {
        /* 16 bytes without a NUL: the event's comm must still be a 15-character C string. */
        struct proc_event pe = event_comm(1, 5, 5, "abcdefghijklmnop", 16);
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);
        Datagram d = {};

        datagram_add(&d, &pe);
        ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), 1);
        ck_assert_str_eq(rec.items[0].ev.comm, "abcdefghijklmno");

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

START_TEST(test_parse_ignored) {
        static const uint32_t others[] = {
                PROC_EVENT_NONE,   PROC_EVENT_GID,      PROC_EVENT_SID,
                PROC_EVENT_PTRACE, PROC_EVENT_COREDUMP, 0x00000400, /* not (yet) defined */
        };
        struct proc_event pe = event_exec(1, 2, 2);
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);
        Datagram d = {};

        for (size_t i = 0; i < ELEMENTSOF(others); i++) {
                struct proc_event o = event_other(others[i], 7, 8);
                datagram_add(&d, &o);
        }
        /* An EXEC from another connector (CN_IDX_CIFS), and an EXEC in an NLMSG_NOOP message. */
        datagram_add_raw(&d, NLMSG_DONE, CN_IDX_CIFS, CN_VAL_CIFS, sizeof(pe), &pe, sizeof(pe));
        datagram_add_raw(&d, NLMSG_NOOP, CN_IDX_PROC, CN_VAL_PROC, sizeof(pe), &pe, sizeof(pe));

        ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), 0);
        ck_assert_uint_eq(rec.n, 0);
        /* The empty datagram holds nothing. */
        ck_assert_int_eq(proc_monitor_parse(m, d.bytes, 0), 0);
        ck_assert_uint_eq(rec.n, 0);

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

/* Only the types asked for are delivered; LOST is not a type (always delivered). */
START_TEST(test_parse_event_mask) {
        struct proc_event pe[5];
        ProcEvent expected[5];
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);
        Datagram d = {};

        ck_assert_uint_eq(proc_monitor_get_events(m), PROC_MONITOR_EVENTS_ALL);
        ck_assert(!proc_monitor_is_filtered(m));
        ck_assert_int_eq(proc_monitor_set_events(m, 0), -EINVAL);
        ck_assert_int_eq(proc_monitor_set_events(m, PROC_MONITOR_EVENT(PROC_MONITOR_LOST)), -EINVAL);
        ck_assert_int_eq(proc_monitor_set_events(NULL, PROC_MONITOR_EVENTS_ALL), -EINVAL);

        build_all_types(pe, expected); /* FORK, EXEC, UID, COMM, EXIT */
        for (size_t i = 0; i < ELEMENTSOF(pe); i++)
                datagram_add(&d, &pe[i]);

        ck_assert_int_eq(
                proc_monitor_set_events(
                        m, PROC_MONITOR_EVENT(PROC_MONITOR_EXEC) | PROC_MONITOR_EVENT(PROC_MONITOR_EXIT)),
                0);
        ck_assert_uint_eq(
                proc_monitor_get_events(m),
                PROC_MONITOR_EVENT(PROC_MONITOR_EXEC) | PROC_MONITOR_EVENT(PROC_MONITOR_EXIT));
        ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), 2);
        ck_assert_uint_eq(rec.n, 2);
        assert_event_eq(&rec.items[0].ev, &expected[1]);
        assert_event_eq(&rec.items[1].ev, &expected[4]);

        /* Back to every type. */
        rec.n = 0;
        ck_assert_int_eq(proc_monitor_set_events(m, PROC_MONITOR_EVENTS_ALL), 0);
        ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), 5);
        for (size_t i = 0; i < ELEMENTSOF(pe); i++)
                assert_event_eq(&rec.items[i].ev, &expected[i]);

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

/* Which kernel releases filter by event type, safely. */
START_TEST(test_kernel_filters) {
        static const struct {
                const char *release;
                bool filters;
        } cases[] = {
                /* Debian 12, and older kernels: no struct proc_input. */
                {"6.1.0-18-amd64", false},
                {"5.15.0-105-generic", false},
                {"5.14.0-427.13.1.el9_4.x86_64", false},
                {"6.5.13", false},
                {"4.19.0", false},
                /* 6.6 and later. */
                {"6.6.0", true},
                {"6.6", true},
                {"6.6.12", true},
                {"6.8.0-31-generic", true},
                {"6.12.27-amd64", true},
                {"6.18.0-rc1", true},
                {"6.18.44-fc-v669", true},
                {"7.0.0", true},
                {"10.2", true},
                /* c46bfba1337d without its revert. */
                {"6.6.13", false},
                {"6.6.17-200.fc39.x86_64", false},
                {"6.6.18", true},
                {"6.7.0", false},
                {"6.7.5-arch1-1", false},
                {"6.7.6", true},
                /* Not a release. */
                {"garbage", false},
                {"", false},
                {"6", false},
                {"6.", false},
                {"6.x", false},
                {".6.6", false},
                {"6.6.x", false},
                {"1234567.1", false},
                {"-6.6", false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(
                        proc_monitor_kernel_filters(cases[i].release) == cases[i].filters, "%s: expected %s",
                        cases[i].release, cases[i].filters ? "true" : "false");
        ck_assert(!proc_monitor_kernel_filters(NULL));
}
END_TEST

START_TEST(test_parse_multiple) {
        struct proc_event pe[5], gid = event_other(PROC_EVENT_GID, 9, 9);
        ProcEvent expected[5];
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);
        Datagram d = {};

        build_all_types(pe, expected);
        /* Reverse order with an ignored event in the middle: delivery must follow the datagram. */
        for (size_t i = 0; i < ELEMENTSOF(pe); i++) {
                datagram_add(&d, &pe[ELEMENTSOF(pe) - 1 - i]);
                if (i == 2)
                        datagram_add(&d, &gid);
        }
        ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), 5);
        ck_assert_uint_eq(rec.n, 5);
        for (size_t i = 0; i < ELEMENTSOF(pe); i++)
                assert_event_eq(&rec.items[i].ev, &expected[ELEMENTSOF(pe) - 1 - i]);

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

START_TEST(test_parse_truncated) {
        struct proc_event pe[5];
        ProcEvent expected[5];
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);

        build_all_types(pe, expected);

        /* A single message cut anywhere is malformed, and nothing is delivered. */
        for (size_t i = 0; i < ELEMENTSOF(pe); i++) {
                Datagram d = {};

                datagram_add(&d, &pe[i]);
                for (size_t cut = 1; cut < d.len; cut++) {
                        rec.n = 0;
                        ck_assert_int_eq(parse_copy(m, d.bytes, cut, 0), -EBADMSG);
                        ck_assert_uint_eq(rec.n, 0);
                }
        }

        /* Several messages cut anywhere: the complete messages before the cut are delivered; a
         * cut at a message boundary is a valid, shorter datagram. */
        Datagram d = {};
        for (size_t i = 0; i < ELEMENTSOF(pe); i++)
                datagram_add(&d, &pe[i]);
        for (size_t cut = 0; cut <= d.len; cut++) {
                size_t complete = 0;
                bool boundary = cut == 0;
                int r;

                for (size_t k = 0; k < d.n_msgs; k++)
                        if (d.ends[k] <= cut) {
                                complete = k + 1;
                                boundary = boundary || d.ends[k] == cut;
                        }
                rec.n = 0;
                r = parse_copy(m, d.bytes, cut, 0);
                if (boundary)
                        ck_assert_int_eq(r, (int)complete);
                else
                        ck_assert_int_eq(r, -EBADMSG);
                ck_assert_uint_eq(rec.n, complete);
                for (size_t k = 0; k < complete; k++)
                        assert_event_eq(&rec.items[k].ev, &expected[k]);
        }

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

START_TEST(test_parse_inconsistent_lengths) {
        struct proc_event pe[5];
        ProcEvent expected[5];
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);
        struct nlmsghdr nlh;

        build_all_types(pe, expected);

        for (size_t i = 0; i < ELEMENTSOF(pe); i++) {
                /* The event shorter than its type needs, though nlmsg_len and cn_msg.len agree:
                 * the header only, and the header plus 4 bytes. */
                for (size_t short_len = offsetof(struct proc_event, event_data);
                     short_len <= offsetof(struct proc_event, event_data) + 4; short_len += 4) {
                        Datagram d = {};

                        datagram_add_raw(
                                &d, NLMSG_DONE, CN_IDX_PROC, CN_VAL_PROC, short_len, &pe[i], short_len);
                        ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), -EBADMSG);
                }

                /* cn_msg.len claims more than the netlink message holds. */
                Datagram d = {};
                datagram_add_raw(
                        &d, NLMSG_DONE, CN_IDX_PROC, CN_VAL_PROC, sizeof(pe[i]) + 1, &pe[i], sizeof(pe[i]));
                ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), -EBADMSG);

                /* A newer kernel's longer event is fine: we read the prefix we know. */
                uint8_t longer[sizeof(struct proc_event) + 8] = {};
                memcpy(longer, &pe[i], sizeof(pe[i]));
                d = (Datagram){};
                datagram_add_raw(
                        &d, NLMSG_DONE, CN_IDX_PROC, CN_VAL_PROC, sizeof(longer), longer, sizeof(longer));
                rec.n = 0;
                ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), 1);
                assert_event_eq(&rec.items[0].ev, &expected[i]);
        }

        /* A netlink message too short for a cn_msg. */
        Datagram d = {};
        datagram_add(&d, &pe[1]);
        memcpy(&nlh, d.bytes, sizeof(nlh));
        nlh.nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) - 1);
        memcpy(d.bytes, &nlh, sizeof(nlh));
        ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), -EBADMSG);

        /* nlmsg_len shorter than the netlink header itself, zero, or beyond the datagram. */
        static const uint32_t bad_lens[] = {0, 1, NLMSG_HDRLEN - 1, 10000, UINT32_MAX};
        for (size_t i = 0; i < ELEMENTSOF(bad_lens); i++) {
                d = (Datagram){};
                datagram_add(&d, &pe[1]);
                memcpy(&nlh, d.bytes, sizeof(nlh));
                nlh.nlmsg_len = bad_lens[i];
                memcpy(d.bytes, &nlh, sizeof(nlh));
                rec.n = 0;
                ck_assert_int_eq(parse_copy(m, d.bytes, d.len, 0), -EBADMSG);
                ck_assert_uint_eq(rec.n, 0);
        }

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

START_TEST(test_parse_unaligned) {
        struct proc_event pe[5];
        ProcEvent expected[5];
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);
        Datagram d = {};

        build_all_types(pe, expected);
        for (size_t i = 0; i < ELEMENTSOF(pe); i++)
                datagram_add(&d, &pe[i]);
        for (size_t align = 1; align < 8; align++) {
                rec.n = 0;
                ck_assert_int_eq(parse_copy(m, d.bytes, d.len, align), 5);
                for (size_t k = 0; k < ELEMENTSOF(pe); k++)
                        assert_event_eq(&rec.items[k].ev, &expected[k]);
        }

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

static uint64_t xorshift(uint64_t *state) {
        uint64_t x = *state;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return *state = x;
}

START_TEST(test_parse_garbage) {
        struct proc_event pe[5];
        ProcEvent expected[5];
        Recorder rec = {};
        ProcMonitor *m = parser_new(&rec);
        Datagram valid = {};
        uint64_t seed = UINT64_C(0x9e3779b97f4a7c15);
        unsigned n_ok = 0, n_bad = 0;

        build_all_types(pe, expected);
        for (size_t i = 0; i < ELEMENTSOF(pe); i++)
                datagram_add(&valid, &pe[i]);

        for (unsigned iter = 0; iter < 20000; iter++) {
                Datagram d = {};
                int r;

                if (iter % 2 == 0) {
                        /* Random bytes, random length. */
                        d.len = xorshift(&seed) % 400;
                        for (size_t i = 0; i < d.len; i++)
                                d.bytes[i] = (uint8_t)xorshift(&seed);
                } else {
                        /* A valid datagram with a few bytes changed and maybe cut short. */
                        d = valid;
                        for (unsigned k = 0; k < 1 + xorshift(&seed) % 4; k++)
                                d.bytes[xorshift(&seed) % d.len] = (uint8_t)xorshift(&seed);
                        if (xorshift(&seed) % 2)
                                d.len = xorshift(&seed) % (d.len + 1);
                }

                rec.n = 0;
                r = parse_copy(m, d.bytes, d.len, xorshift(&seed) % 8);
                if (r < 0) {
                        ck_assert_int_eq(r, -EBADMSG);
                        n_bad++;
                } else {
                        ck_assert_uint_eq((size_t)r, rec.n);
                        /* Every message is at least header + cn_msg + event header. */
                        ck_assert_int_le(
                                r,
                                (int)(d.len /
                                      (NLMSG_HDRLEN + sizeof(struct cn_msg) +
                                       offsetof(struct proc_event, event_data))));
                        n_ok++;
                }
                for (size_t k = 0; k < rec.n; k++)
                        ck_assert_uint_lt(strnlen(rec.items[k].ev.comm, sizeof(rec.items[k].ev.comm)), 16);
        }
        /* Both outcomes were exercised. */
        ck_assert_uint_gt(n_ok, 0);
        ck_assert_uint_gt(n_bad, 0);

        proc_monitor_free(m);
        recorder_done(&rec);
}
END_TEST

/* ---- live ---- */

typedef struct ThreadInfo {
        pid_t tid;
} ThreadInfo;

static void *thread_rename(void *userdata) {
        ThreadInfo *t = userdata;

        t->tid = gettid();
        ck_assert_int_eq(prctl(PR_SET_NAME, "pm-renamed", 0, 0, 0), 0);
        return NULL;
}

static void *thread_noop(void *userdata) {
        return NULL;
}

static const Recorded *find_event(const Recorder *rec, ProcEventType type, pid_t pid, size_t *ret_index) {
        for (size_t i = 0; i < rec->n; i++)
                if (rec->items[i].ev.type == type && rec->items[i].ev.pid == pid) {
                        if (ret_index)
                                *ret_index = i;
                        return &rec->items[i];
                }
        return NULL;
}

static bool find_lost(const Recorder *rec) {
        for (size_t i = 0; i < rec->n; i++)
                if (rec->items[i].ev.type == PROC_MONITOR_LOST)
                        return true;
        return false;
}

typedef bool (*done_fn)(const Recorder *rec, const void *userdata);

/* Runs the loop until done() or a generous deadline (a failure, not a measurement). */
static void run_until(sd_event *e, const Recorder *rec, done_fn done, const void *userdata) {
        uint64_t deadline = now_ns() + 30 * NSEC_PER_SEC;

        while (!done(rec, userdata)) {
                ck_assert_msg(now_ns() < deadline, "timed out waiting for proc connector events");
                ck_assert_int_ge(sd_event_run(e, 100 * 1000), 0);
        }
}

typedef struct Expect {
        pid_t thread_tid, true_pid, uid_pid;
} Expect;

static bool saw_everything(const Recorder *rec, const void *userdata) {
        const Expect *x = userdata;

        return find_event(rec, PROC_MONITOR_FORK, x->thread_tid, NULL) &&
                find_event(rec, PROC_MONITOR_COMM, x->thread_tid, NULL) &&
                find_event(rec, PROC_MONITOR_EXIT, x->thread_tid, NULL) &&
                find_event(rec, PROC_MONITOR_FORK, x->true_pid, NULL) &&
                find_event(rec, PROC_MONITOR_EXEC, x->true_pid, NULL) &&
                find_event(rec, PROC_MONITOR_EXIT, x->true_pid, NULL) &&
                find_event(rec, PROC_MONITOR_UID, x->uid_pid, NULL) &&
                find_event(rec, PROC_MONITOR_EXIT, x->uid_pid, NULL);
}

static pid_t spawn_true(void) {
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
        }
        return pid;
}

static void wait_ok(pid_t pid) {
        int status;

        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
}

START_TEST(test_live_events) {
        uint64_t t0 = now_ns();
        sd_event *e = NULL;
        ProcMonitor *m = NULL;
        Recorder rec = {};
        ThreadInfo ti = {};
        pthread_t thread;
        Expect x = {};
        size_t i_fork, i_comm, i_exit, i_exec;
        const Recorded *fork_ev, *comm_ev, *exit_ev, *exec_ev, *uid_ev;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(
                proc_monitor_new(e, PROC_MONITOR_EVENTS_ALL, 5 * USEC_PER_SEC, record, &rec, &m), 0);
        ck_assert_int_ge(proc_monitor_get_fd(m), 0);
        /* Nothing is delivered from proc_monitor_new() itself. */
        ck_assert_uint_eq(rec.n, 0);

        /* A thread that renames itself. */
        ck_assert_int_eq(pthread_create(&thread, NULL, thread_rename, &ti), 0);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        x.thread_tid = ti.tid;
        ck_assert_int_ne(x.thread_tid, getpid());

        /* fork + exec /bin/true. */
        x.true_pid = spawn_true();
        wait_ok(x.true_pid);

        /* A child that changes its uids. */
        x.uid_pid = fork();
        ck_assert_int_ge(x.uid_pid, 0);
        if (x.uid_pid == 0)
                _exit(setresuid(65534, 65534, 65534) < 0 ? 1 : 0);
        wait_ok(x.uid_pid);

        run_until(e, &rec, saw_everything, &x);

        /* Every event: the kernel's CLOCK_MONOTONIC timestamp, taken after the test started and
         * before the handler saw it. */
        for (size_t i = 0; i < rec.n; i++) {
                ck_assert_uint_gt(rec.items[i].ev.timestamp_ns, t0);
                ck_assert_uint_le(rec.items[i].ev.timestamp_ns, rec.items[i].delivered_ns);
        }

        /* The thread: FORK (pid != tgid; the parent fields name the process's parent, not the
         * creating thread), then COMM, then EXIT, in the order the kernel sent them. */
        fork_ev = find_event(&rec, PROC_MONITOR_FORK, x.thread_tid, &i_fork);
        ck_assert_int_eq(fork_ev->ev.tgid, getpid());
        ck_assert_int_ne(fork_ev->ev.pid, fork_ev->ev.tgid);
        ck_assert_int_eq(fork_ev->ev.parent_tgid, getppid());
        comm_ev = find_event(&rec, PROC_MONITOR_COMM, x.thread_tid, &i_comm);
        ck_assert_int_eq(comm_ev->ev.tgid, getpid());
        ck_assert_str_eq(comm_ev->ev.comm, "pm-renamed");
        exit_ev = find_event(&rec, PROC_MONITOR_EXIT, x.thread_tid, &i_exit);
        ck_assert_int_eq(exit_ev->ev.tgid, getpid());
        ck_assert_uint_lt(i_fork, i_comm);
        ck_assert_uint_lt(i_comm, i_exit);
        ck_assert_uint_le(fork_ev->ev.timestamp_ns, comm_ev->ev.timestamp_ns);
        ck_assert_uint_le(comm_ev->ev.timestamp_ns, exit_ev->ev.timestamp_ns);

        /* /bin/true: FORK from us (pid == tgid), EXEC, EXIT. */
        fork_ev = find_event(&rec, PROC_MONITOR_FORK, x.true_pid, &i_fork);
        ck_assert_int_eq(fork_ev->ev.tgid, x.true_pid);
        ck_assert_int_eq(fork_ev->ev.parent_pid, gettid());
        ck_assert_int_eq(fork_ev->ev.parent_tgid, getpid());
        exec_ev = find_event(&rec, PROC_MONITOR_EXEC, x.true_pid, &i_exec);
        ck_assert_int_eq(exec_ev->ev.tgid, x.true_pid);
        exit_ev = find_event(&rec, PROC_MONITOR_EXIT, x.true_pid, &i_exit);
        ck_assert_int_eq(exit_ev->ev.tgid, x.true_pid);
        ck_assert_uint_lt(i_fork, i_exec);
        ck_assert_uint_lt(i_exec, i_exit);
        ck_assert_uint_le(fork_ev->ev.timestamp_ns, exec_ev->ev.timestamp_ns);
        ck_assert_uint_le(exec_ev->ev.timestamp_ns, exit_ev->ev.timestamp_ns);

        /* The uid change carries the new effective uid. */
        uid_ev = find_event(&rec, PROC_MONITOR_UID, x.uid_pid, NULL);
        ck_assert_int_eq(uid_ev->ev.tgid, x.uid_pid);
        ck_assert_uint_eq(uid_ev->ev.euid, 65534);

        proc_monitor_free(m);
        sd_event_unref(e);
        recorder_done(&rec);
}
END_TEST

static bool saw_lost(const Recorder *rec, const void *userdata) {
        return find_lost(rec);
}

static bool saw_exec(const Recorder *rec, const void *userdata) {
        return find_event(rec, PROC_MONITOR_EXEC, *(const pid_t *)userdata, NULL);
}

START_TEST(test_live_overrun) {
        sd_event *e = NULL;
        ProcMonitor *m = NULL;
        Recorder rec = {};
        int fd, small = 1, large = 1024 * 1024;
        pid_t pid;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(
                proc_monitor_new(e, PROC_MONITOR_EVENTS_ALL, 5 * USEC_PER_SEC, record, &rec, &m), 0);
        fd = proc_monitor_get_fd(m);
        ck_assert_int_ge(fd, 0);

        /* The smallest receive buffer the kernel allows, then far more events than it holds
         * while the loop does not run: the kernel drops them and reports ENOBUFS. */
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        for (unsigned i = 0; i < 500; i++) {
                pthread_t t;

                ck_assert_int_eq(pthread_create(&t, NULL, thread_noop, NULL), 0);
                ck_assert_int_eq(pthread_join(t, NULL), 0);
        }
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &large, sizeof(large)), 0);

        run_until(e, &rec, saw_lost, NULL);
        /* Fewer events than were sent made it: 500 threads make 1000 events. */
        ck_assert_uint_lt(rec.n, 1000);

        /* The monitor keeps working after the loss. */
        pid = spawn_true();
        wait_ok(pid);
        run_until(e, &rec, saw_exec, &pid);

        proc_monitor_free(m);
        sd_event_unref(e);
        recorder_done(&rec);
}
END_TEST

/* ---- receive errors: recvmmsg(2) replaced in this program, failing on demand ---- */

static int ignore_event(ProcMonitor *m, const ProcEvent *ev, void *userdata);

static int recv_fail_errno;      /* 0: the real system call */
static unsigned recv_fail_calls; /* calls failed on purpose */

/* Takes the place of glibc's recvmmsg() for the monitor linked into this program. */
int recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags, struct timespec *timeout) {
        if (recv_fail_errno != 0) {
                recv_fail_calls++;
                errno = recv_fail_errno;
                return -1;
        }
        return (int)syscall(SYS_recvmmsg, fd, msgs, vlen, flags, timeout);
}

static bool saw_error(const Recorder *rec, const void *userdata) {
        for (size_t i = 0; i < rec->n; i++)
                if (rec->items[i].ev.type == PROC_MONITOR_ERROR)
                        return true;
        return false;
}

/* A LOST event at index *userdata or later. */
static bool saw_lost_since(const Recorder *rec, const void *userdata) {
        for (size_t i = *(const size_t *)userdata; i < rec->n; i++)
                if (rec->items[i].ev.type == PROC_MONITOR_LOST)
                        return true;
        return false;
}

/*
 * A receive error that persists is reported to the handler (PROC_MONITOR_ERROR with the
 * errno), and the monitor pauses, twice as long each time, instead of calling recvmmsg(2) again
 * in every iteration of the loop while the socket stays readable. Once the error is gone it
 * reads again, reporting LOST first (events may have been lost), and events flow.
 */
START_TEST(test_live_receive_error_backoff) {
        sd_event *e = NULL;
        ProcMonitor *m = NULL;
        Recorder rec = {};
        size_t n_errors = 0, since;
        uint64_t last_retry = 0;
        pid_t pid;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(
                proc_monitor_new(e, PROC_MONITOR_EVENTS_ALL, 5 * USEC_PER_SEC, record, &rec, &m), 0);

        recv_fail_errno = EIO;
        recv_fail_calls = 0;
        pid = spawn_true(); /* something to read */
        wait_ok(pid);
        run_until(e, &rec, saw_error, NULL);
        ck_assert_uint_eq(recv_fail_calls, 1);

        /* The socket is still readable: a monitor that did not pause would try again in each of
         * these iterations. */
        for (unsigned i = 0; i < 100; i++)
                ck_assert_int_ge(sd_event_run(e, 0), 0);
        ck_assert_uint_lt(recv_fail_calls, 100);

        for (size_t i = 0; i < rec.n; i++) {
                const ProcEvent *ev = &rec.items[i].ev;

                if (ev->type != PROC_MONITOR_ERROR)
                        continue;
                n_errors++;
                ck_assert_int_eq(ev->error, -EIO);
                ck_assert_uint_gt(ev->retry_usec, 0);
                if (last_retry > 0)
                        ck_assert_uint_eq(ev->retry_usec, MIN(2 * last_retry, 30 * USEC_PER_SEC));
                last_retry = ev->retry_usec;
        }
        ck_assert_uint_eq(n_errors, recv_fail_calls); /* every failure reported, once */

        recv_fail_errno = 0;
        since = rec.n;
        run_until(e, &rec, saw_lost_since, &since);
        pid = spawn_true();
        wait_ok(pid);
        run_until(e, &rec, saw_exec, &pid);

        proc_monitor_free(m);
        sd_event_unref(e);
        recorder_done(&rec);
}
END_TEST

/* Drops CAP_NET_ADMIN from the calling process's effective and permitted sets. */
static int drop_net_admin(void) {
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {};

        if (syscall(SYS_capget, &hdr, data) < 0)
                return -errno;
        data[CAP_NET_ADMIN / 32].effective &= ~(1U << (CAP_NET_ADMIN % 32));
        data[CAP_NET_ADMIN / 32].permitted &= ~(1U << (CAP_NET_ADMIN % 32));
        if (syscall(SYS_capset, &hdr, data) < 0)
                return -errno;
        return 0;
}

/*
 * The receive buffer: with CAP_NET_ADMIN, SO_RCVBUFFORCE grants all of it; without (in a
 * child), SO_RCVBUFFORCE fails with EPERM, which the monitor reports, and the SO_RCVBUF
 * fallback is capped by net.core.rmem_max.
 */
START_TEST(test_live_receive_buffer) {
        _cleanup_fclose_ FILE *f = NULL;
        unsigned long rmem_max = 0;
        sd_event *e = NULL;
        ProcMonitor *m = NULL;
        size_t size = 0;
        int force_error = 1, status;
        pid_t pid;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(
                proc_monitor_new(e, PROC_MONITOR_EVENTS_ALL, 5 * USEC_PER_SEC, ignore_event, NULL, &m), 0);
        ck_assert_int_eq(proc_monitor_get_receive_buffer(m, &size, &force_error), 0);
        ck_assert_int_eq(force_error, 0);
        ck_assert_uint_ge(size, 2 * (size_t)PROC_MONITOR_RCVBUF_SIZE);
        proc_monitor_free(m);
        m = NULL;

        f = fopen("/proc/sys/net/core/rmem_max", "re");
        ck_assert_msg(f && fscanf(f, "%lu", &rmem_max) == 1, "can't read net.core.rmem_max");

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int r;

                sd_event *ce = NULL; /* an sd_event can't be used across fork() */

                if (drop_net_admin() < 0 || sd_event_new(&ce) < 0)
                        _exit(10);
                r = proc_monitor_new(ce, PROC_MONITOR_EVENTS_ALL, 5 * USEC_PER_SEC, ignore_event, NULL, &m);
                if (r == -EPERM || r == -EACCES)
                        _exit(0); /* subscribing needs CAP_NET_ADMIN on this kernel: nothing to check */
                if (r < 0)
                        _exit(11);
                if (proc_monitor_get_receive_buffer(m, &size, &force_error) < 0)
                        _exit(12);
                if (force_error != -EPERM)
                        _exit(13);
                if (size != 2 * MIN((size_t)rmem_max, (size_t)PROC_MONITOR_RCVBUF_SIZE))
                        _exit(14);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(
                WIFEXITED(status) && WEXITSTATUS(status) == 0, "without CAP_NET_ADMIN: check %d failed",
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        sd_event_unref(e);
}
END_TEST

/* Whether the live tests can run here; if not, *ret_reason says why. */
static int ignore_event(ProcMonitor *m, const ProcEvent *ev, void *userdata) {
        return 0;
}

/* From a non-initial PID namespace the kernel ignores the subscription, and the
 * daemon must notice (no acknowledgement) so it can fall back to scanning /proc. Runs the
 * monitor in a child of unshare(CLONE_NEWPID), the situation of a daemon in a container. */
START_TEST(test_live_pid_namespace_detected) {
        int pipefd[2];
        pid_t outer;
        int status, child_r = 0;

        ck_assert_int_eq(pipe(pipefd), 0);
        outer = fork();
        ck_assert_int_ge(outer, 0);
        if (outer == 0) {
                pid_t inner;
                int r;

                close(pipefd[0]);
                if (unshare(CLONE_NEWPID) < 0)
                        _exit(10);
                inner = fork(); /* the first child is PID 1 of the new namespace */
                if (inner < 0)
                        _exit(11);
                if (inner == 0) {
                        sd_event *e = NULL;
                        ProcMonitor *m = NULL;

                        if (getpid() != 1 || sd_event_new(&e) < 0)
                                _exit(12);
                        r = proc_monitor_new(e, PROC_MONITOR_EVENTS_ALL, 500 * 1000, ignore_event, NULL, &m);
                        if (write(pipefd[1], &r, sizeof(r)) != sizeof(r))
                                _exit(13);
                        proc_monitor_free(m);
                        sd_event_unref(e);
                        _exit(0);
                }
                _exit(waitpid(inner, &r, 0) == inner && WIFEXITED(r) ? WEXITSTATUS(r) : 14);
        }
        close(pipefd[1]);
        ck_assert_int_eq(read(pipefd[0], &child_r, sizeof(child_r)), (ssize_t)sizeof(child_r));
        close(pipefd[0]);
        ck_assert_int_eq(waitpid(outer, &status, 0), outer);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        /* And the same call from the initial namespace succeeds (test_live_events), so the
         * timeout is the namespace's doing. */
        ck_assert_int_eq(child_r, -ETIMEDOUT);
}
END_TEST

/* ---- the event types subscribed to ---- */

#define EV(t) PROC_MONITOR_EVENT(PROC_MONITOR_##t)

/* A child that forks and exits without exec: a FORK and an EXIT, nothing else. */
static pid_t spawn_exit(void) {
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        return pid;
}

/*
 * Reads what the kernel queued on m's socket, past the monitor (so past its dropping of the
 * types not asked for), into rec through a parser that delivers every type: until the EXEC of
 * pid is among it (a failure after 30 s), then whatever else is queued.
 */
static void read_raw_until_exec(ProcMonitor *m, Recorder *rec, pid_t pid) {
        ProcMonitor *parser = parser_new(rec);
        uint64_t deadline = now_ns() + 30 * NSEC_PER_SEC;
        int fd = proc_monitor_get_fd(m);
        bool seen = false;

        ck_assert_int_ge(fd, 0);
        for (;;) {
                uint64_t buf[1024 / sizeof(uint64_t)];
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                ssize_t n;

                n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n < 0) {
                        ck_assert_int_eq(errno, EAGAIN);
                        if (seen)
                                break; /* drained */
                        ck_assert_msg(now_ns() < deadline, "timed out waiting for the EXEC of %d", (int)pid);
                        ck_assert_int_ge(poll(&pfd, 1, 100), 0);
                        continue;
                }
                ck_assert_int_ge(proc_monitor_parse(parser, buf, (size_t)n), 0);
                seen = seen || find_event(rec, PROC_MONITOR_EXEC, pid, NULL);
        }
        proc_monitor_free(parser);
}

/* How many events of type rec holds, from anyone. */
static size_t count_type(const Recorder *rec, ProcEventType type) {
        size_t n = 0;

        for (size_t i = 0; i < rec->n; i++)
                n += rec->items[i].ev.type == type;
        return n;
}

/*
 * The subscription kernels before 6.6 take, forced: subscribed, not filtered by the kernel (every
 * type reaches the socket), and the types not asked for are dropped on receipt.
 */
START_TEST(test_live_unfiltered) {
        sd_event *e = NULL;
        ProcMonitor *m = NULL;
        Recorder raw = {}, rec = {};
        pid_t pid, sentinel;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(
                proc_monitor_new(
                        e, EV(EXEC) | PROC_MONITOR_NO_KERNEL_FILTER, 5 * USEC_PER_SEC, record, &rec, &m),
                0);
        ck_assert(!proc_monitor_is_filtered(m));
        ck_assert_uint_eq(proc_monitor_get_events(m), EV(EXEC)); /* the flag is no type */

        /* At the socket: the FORK and EXIT too. */
        pid = spawn_true();
        wait_ok(pid);
        read_raw_until_exec(m, &raw, pid);
        ck_assert_ptr_nonnull(find_event(&raw, PROC_MONITOR_FORK, pid, NULL));
        ck_assert_ptr_nonnull(find_event(&raw, PROC_MONITOR_EXIT, pid, NULL));

        /* Delivered: the EXEC only. The sentinel's EXEC comes after the first child's EXIT. */
        pid = spawn_true();
        wait_ok(pid);
        sentinel = spawn_true();
        wait_ok(sentinel);
        run_until(e, &rec, saw_exec, &sentinel);
        ck_assert_ptr_nonnull(find_event(&rec, PROC_MONITOR_EXEC, pid, NULL));
        ck_assert_uint_eq(count_type(&rec, PROC_MONITOR_EXEC), rec.n);

        proc_monitor_free(m);
        sd_event_unref(e);
        recorder_done(&raw);
        recorder_done(&rec);
}
END_TEST

/*
 * The kernel's filter: with EXEC only, a fork + exit and a fork + exec + exit put nothing but
 * EXECs on the socket, and EXECs keep coming after events the filter dropped (the listener
 * count survives them). After proc_monitor_set_events() adds FORK, FORKs come too, and still no
 * EXIT.
 */
START_TEST(test_filter_exec_only) {
        sd_event *e = NULL;
        ProcMonitor *m = NULL;
        Recorder raw = {};
        pid_t quiet, pid;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(proc_monitor_new(e, EV(EXEC), 5 * USEC_PER_SEC, record, &raw, &m), 0);
        ck_assert(proc_monitor_is_filtered(m));
        ck_assert_uint_eq(proc_monitor_get_events(m), EV(EXEC));

        quiet = spawn_exit();
        wait_ok(quiet);
        pid = spawn_true();
        wait_ok(pid);
        read_raw_until_exec(m, &raw, pid);
        ck_assert_uint_gt(raw.n, 0);
        ck_assert_uint_eq(count_type(&raw, PROC_MONITOR_EXEC), raw.n);
        ck_assert_ptr_null(find_event(&raw, PROC_MONITOR_FORK, quiet, NULL));
        ck_assert_ptr_null(find_event(&raw, PROC_MONITOR_EXIT, quiet, NULL));

        /* A second LISTEN on the same socket, with FORK added. */
        raw.n = 0;
        ck_assert_int_eq(proc_monitor_set_events(m, EV(EXEC) | EV(FORK)), 0);
        ck_assert(proc_monitor_is_filtered(m));
        ck_assert_uint_eq(proc_monitor_get_events(m), EV(EXEC) | EV(FORK));
        pid = spawn_true();
        wait_ok(pid);
        read_raw_until_exec(m, &raw, pid);
        ck_assert_ptr_nonnull(find_event(&raw, PROC_MONITOR_FORK, pid, NULL));
        ck_assert_uint_eq(count_type(&raw, PROC_MONITOR_EXIT), 0);
        ck_assert_uint_eq(count_type(&raw, PROC_MONITOR_EXEC) + count_type(&raw, PROC_MONITOR_FORK), raw.n);

        proc_monitor_free(m);
        sd_event_unref(e);
        recorder_done(&raw);
}
END_TEST

static bool live_possible(const char **ret_reason) {
        struct stat st;
        int fd;

        if (geteuid() != 0) {
                *ret_reason = "not root (the proc connector needs CAP_NET_ADMIN)";
                return false;
        }
        /* PROC_PID_INIT_INO and PROC_USER_INIT_INO: the kernel ignores subscriptions from other
         * namespaces. */
        if (stat("/proc/self/ns/pid", &st) < 0 || st.st_ino != 0xEFFFFFFCU) {
                *ret_reason = "not in the initial PID namespace";
                return false;
        }
        if (stat("/proc/self/ns/user", &st) < 0 || st.st_ino != 0xEFFFFFFDU) {
                *ret_reason = "not in the initial user namespace";
                return false;
        }
        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
        if (fd < 0 && errno == EPROTONOSUPPORT) {
                *ret_reason = "kernel without the netlink connector";
                return false;
        }
        if (fd >= 0)
                close(fd);
        return true;
}

/* Whether the filter tests can run here: the live tests can, and the kernel filters. */
static bool filter_possible(const char **ret_reason) {
        static char reason[128 + sizeof(((struct utsname *)0)->release)];
        struct utsname u;

        if (!live_possible(ret_reason))
                return false;
        if (uname(&u) < 0 || !proc_monitor_kernel_filters(u.release)) {
                snprintf(
                        reason, sizeof(reason),
                        "Linux %s does not filter proc connector events by type (before 6.6, or a "
                        "release that zeroes the listener count)",
                        uname(&u) < 0 ? "?" : u.release);
                *ret_reason = reason;
                return false;
        }
        return true;
}

/* Says why the tests of what can't run here. True when they were asked for by name (mode): the
 * program then exits 77, a skip (freeing s); false when they are only left out of a run of all. */
static bool not_running(Suite *s, const char *mode, const char *what, const char *reason) {
        printf("%s the %s tests: %s\n", mode ? "Skipping" : "Not running", what, reason);
        if (mode)
                srunner_free(srunner_create(s));
        return mode != NULL;
}

int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : NULL;
        const char *reason = NULL;
        Suite *s = suite_create("proc-monitor");
        SRunner *sr;
        int failed;

        if (mode && !streq(mode, "parse") && !streq(mode, "live") && !streq(mode, "filter")) {
                fprintf(stderr, "Usage: %s [parse|live|filter]\n", argv[0]);
                return 2;
        }

        if (!mode || streq(mode, "parse")) {
                TCase *tc = tcase_create("parse");
                tcase_add_test(tc, test_parse_each_type);
                tcase_add_test(tc, test_parse_comm_unterminated);
                tcase_add_test(tc, test_parse_ignored);
                tcase_add_test(tc, test_parse_multiple);
                tcase_add_test(tc, test_parse_truncated);
                tcase_add_test(tc, test_parse_inconsistent_lengths);
                tcase_add_test(tc, test_parse_unaligned);
                tcase_add_test(tc, test_parse_garbage);
                tcase_add_test(tc, test_parse_event_mask);
                tcase_add_test(tc, test_kernel_filters);
                suite_add_tcase(s, tc);
        }

        if (!mode || streq(mode, "live")) {
                if (live_possible(&reason)) {
                        TCase *tc = tcase_create("live");
                        tcase_set_timeout(tc, 60);
                        tcase_add_test(tc, test_live_events);
                        tcase_add_test(tc, test_live_overrun);
                        tcase_add_test(tc, test_live_receive_error_backoff);
                        tcase_add_test(tc, test_live_receive_buffer);
                        tcase_add_test(tc, test_live_pid_namespace_detected);
                        tcase_add_test(tc, test_live_unfiltered);
                        suite_add_tcase(s, tc);
                } else if (not_running(s, mode, "live proc connector", reason))
                        return 77;
        }

        if (!mode || streq(mode, "filter")) {
                if (filter_possible(&reason)) {
                        TCase *tc = tcase_create("filter");
                        tcase_set_timeout(tc, 60);
                        tcase_add_test(tc, test_filter_exec_only);
                        suite_add_tcase(s, tc);
                } else if (not_running(s, mode, "proc connector filter", reason))
                        return 77;
        }

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
