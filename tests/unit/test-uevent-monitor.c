/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of daemon/uevent-monitor.c.
 *  - "parse": hand-built kernel uevent datagrams (CPU hotplug, a network device), every
 *    truncation of one, libudev-format messages, inconsistent headers, bad environments and
 *    random garbage; every buffer is a heap block of exactly the datagram's size, so ASan
 *    catches any over-read.
 *  - "live": the real NETLINK_KOBJECT_UEVENT socket on a real sd_event loop: synthetic
 *    uevents (writing "change UUID KEY=VALUE" to /sys/devices/system/cpu/cpu0/uevent)
 *    delivered by subsystem, a forged datagram from a user-space sender dropped, a provoked
 *    receive-queue overrun reported as lost, and CPU 1 really taken offline and back online
 *    (/sys/devices/system/cpu/cpu1/online), asserting both events arrive. CPU 1 is brought
 *    back online in any case: by the test, by the test case's teardown (which runs in this
 *    process even when the forked test dies), and finally by main(), which fails the run if it
 *    is not online at the end. Needs root; exits 77 only where CPU 1 can't be hotplugged at all
 *    or uevents can't be received.
 * Usage: test-uevent-monitor [parse|live] (no argument: both).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "uevent-monitor.h"

#define USEC_PER_SEC  UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
/* Failure bound of every wait for an event (not a timing assertion). */
#define WAIT_USEC (30 * USEC_PER_SEC)

#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"
#define CPU0_UEVENT "/sys/devices/system/cpu/cpu0/uevent"

/* ---- datagram builder: strings joined with their NULs, in a heap block of exact size ---- */

typedef struct Datagram {
        char *bytes;
        size_t len;
} Datagram;

/* The strings of a NULL-terminated argument list, each with its terminating NUL. */
static Datagram datagram_v(const char *first, va_list ap) {
        Datagram d = {};
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ck_assert_ptr_nonnull(f);
        for (const char *s = first; s; s = va_arg(ap, const char *))
                ck_assert_uint_eq(fwrite(s, 1, strlen(s) + 1, f), strlen(s) + 1);
        ck_assert_int_eq(fclose(f), 0);
        d.len = size;
        d.bytes = malloc(MAX(size, (size_t)1));
        ck_assert_ptr_nonnull(d.bytes);
        memcpy(d.bytes, buf, size);
        free(buf);
        return d;
}

static Datagram datagram(const char *first, ...) {
        va_list ap;
        Datagram d;

        va_start(ap, first);
        d = datagram_v(first, ap);
        va_end(ap);
        return d;
}

/* A copy of the first len bytes, in a block of exactly len bytes. */
static Datagram datagram_prefix(const Datagram *d, size_t len) {
        Datagram p = {.len = len};

        p.bytes = malloc(MAX(len, (size_t)1));
        ck_assert_ptr_nonnull(p.bytes);
        memcpy(p.bytes, d->bytes, len);
        return p;
}

static void datagram_done(Datagram *d) {
        d->bytes = mfree(d->bytes);
        d->len = 0;
}

static int parse_strings(Uevent *ret, const char *first, ...) {
        va_list ap;
        Datagram d;
        int r;

        va_start(ap, first);
        d = datagram_v(first, ap);
        va_end(ap);
        r = uevent_parse(d.bytes, d.len, ret);
        datagram_done(&d);
        return r;
}

/* ---- parse ---- */

START_TEST(test_parse_cpu_offline) {
        Datagram d = datagram(
                "offline@/devices/system/cpu/cpu1", "ACTION=offline", "DEVPATH=/devices/system/cpu/cpu1",
                "SUBSYSTEM=cpu", "SEQNUM=4711", NULL);
        Uevent u;

        ck_assert_int_eq(uevent_parse(d.bytes, d.len, &u), 0);
        ck_assert_str_eq(u.action, "offline");
        ck_assert_str_eq(u.devpath, "/devices/system/cpu/cpu1");
        ck_assert_str_eq(u.subsystem, "cpu");
        ck_assert_uint_eq(u.seqnum, 4711);
        ck_assert_uint_eq(u.n_env, 4);
        ck_assert_str_eq(u.env[0], "ACTION=offline");
        ck_assert_str_eq(u.env[3], "SEQNUM=4711");
        /* Pointers into the datagram itself. */
        ck_assert(u.action >= d.bytes && u.action < d.bytes + d.len);
        ck_assert_str_eq(uevent_get(&u, "SEQNUM"), "4711");
        ck_assert_str_eq(uevent_get(&u, "SUBSYSTEM"), "cpu");
        ck_assert_ptr_null(uevent_get(&u, "SEQNU"));
        ck_assert_ptr_null(uevent_get(&u, "DRIVER"));
        ck_assert_int_eq(uevent_cpu_number(&u), 1);
        datagram_done(&d);
}
END_TEST

START_TEST(test_parse_net_add) {
        Uevent u;

        ck_assert_int_eq(
                parse_strings(
                        &u, "add@/devices/virtual/net/dummy0", "ACTION=add",
                        "DEVPATH=/devices/virtual/net/dummy0", "SUBSYSTEM=net", "INTERFACE=dummy0",
                        "IFINDEX=7", "SEQNUM=12", NULL),
                0);
        /* u points into a freed block now: only compare what was copied out. */
        ck_assert_uint_eq(u.seqnum, 12);
        ck_assert_uint_eq(u.n_env, 6);

        {
                Datagram d = datagram(
                        "add@/devices/virtual/net/dummy0", "ACTION=add",
                        "DEVPATH=/devices/virtual/net/dummy0", "SUBSYSTEM=net", "INTERFACE=dummy0",
                        "IFINDEX=7", "SEQNUM=12", NULL);

                ck_assert_int_eq(uevent_parse(d.bytes, d.len, &u), 0);
                ck_assert_str_eq(uevent_get(&u, "INTERFACE"), "dummy0");
                ck_assert_str_eq(uevent_get(&u, "IFINDEX"), "7");
                ck_assert_int_eq(uevent_cpu_number(&u), -EINVAL);
                datagram_done(&d);
        }

        /* No SUBSYSTEM= and no SEQNUM=: allowed, reported as NULL and 0. */
        {
                Datagram d = datagram("change@/module/foo", "ACTION=change", "DEVPATH=/module/foo", NULL);

                ck_assert_int_eq(uevent_parse(d.bytes, d.len, &u), 0);
                ck_assert_ptr_null(u.subsystem);
                ck_assert_uint_eq(u.seqnum, 0);
                ck_assert_int_eq(uevent_cpu_number(&u), -EINVAL);
                datagram_done(&d);
        }
}
END_TEST

/* Every prefix of a valid datagram: cut inside a string it is malformed; cut right after a
 * string it is a shorter event, valid once ACTION= and DEVPATH= are in. */
START_TEST(test_parse_truncated) {
        Datagram d = datagram(
                "online@/devices/system/cpu/cpu3", "ACTION=online", "DEVPATH=/devices/system/cpu/cpu3",
                "SUBSYSTEM=cpu", "SEQNUM=99", NULL);
        size_t need = strlen("online@/devices/system/cpu/cpu3") + 1 + strlen("ACTION=online") + 1 +
                strlen("DEVPATH=/devices/system/cpu/cpu3") + 1;
        unsigned n_ok = 0;

        for (size_t len = 0; len <= d.len; len++) {
                Datagram p = datagram_prefix(&d, len);
                Uevent u;
                int r = uevent_parse(p.bytes, p.len, &u);

                if (len > 0 && p.bytes[len - 1] == '\0' && len >= need) {
                        ck_assert_msg(r == 0, "prefix of %zu bytes: %d", len, r);
                        ck_assert_str_eq(u.devpath, "/devices/system/cpu/cpu3");
                        ck_assert_int_eq(
                                uevent_cpu_number(&u),
                                len >= need + strlen("SUBSYSTEM=cpu") + 1 ? 3 : -EINVAL);
                        n_ok++;
                } else
                        ck_assert_msg(r == -EBADMSG, "prefix of %zu bytes: %d", len, r);
                datagram_done(&p);
        }
        ck_assert_uint_eq(n_ok, 3);
        datagram_done(&d);
}
END_TEST

START_TEST(test_parse_libudev) {
        /* udevd's format: "libudev\0", then a binary header (magic 0xfeedcafe, big endian). */
        static const uint8_t msg[] = {'l',  'i', 'b', 'u', 'd', 'e', 'v', 0,   0xfe, 0xed, 0xca,
                                      0xfe, 40,  0,   0,   0,   40,  0,   0,   0,    'A',  'C',
                                      'T',  'I', 'O', 'N', '=', 'a', 'd', 'd', 0};
        char *b = malloc(sizeof(msg));
        Uevent u;

        ck_assert_ptr_nonnull(b);
        memcpy(b, msg, sizeof(msg));
        ck_assert_int_eq(uevent_parse(b, sizeof(msg), &u), -EPROTO);
        ck_assert_int_eq(uevent_parse(b, 8, &u), -EPROTO);
        /* "libudev" without its NUL is just a malformed kernel-format message. */
        ck_assert_int_eq(uevent_parse(b, 7, &u), -EBADMSG);
        free(b);
}
END_TEST

START_TEST(test_parse_malformed) {
        char many[UEVENT_MAX_ENV + 1][48]; /* "KEY%zu=%zu" of any size_t fits */
        Uevent u = {.seqnum = 77};

        /* Header. */
        ck_assert_int_eq(
                parse_strings(&u, "offline/devices/system/cpu/cpu1", "ACTION=offline", "DEVPATH=x", NULL),
                -EBADMSG);
        ck_assert_int_eq(parse_strings(&u, "@/devices/x", "ACTION=", "DEVPATH=/devices/x", NULL), -EBADMSG);
        ck_assert_int_eq(parse_strings(&u, "add@", "ACTION=add", "DEVPATH=", NULL), -EBADMSG);
        ck_assert_int_eq(parse_strings(&u, "", NULL), -EBADMSG);
        ck_assert_int_eq(uevent_parse("", 0, &u), -EBADMSG);
        /* ACTION= and DEVPATH= missing, or disagreeing with the header. */
        ck_assert_int_eq(parse_strings(&u, "add@/devices/x", "DEVPATH=/devices/x", NULL), -EBADMSG);
        ck_assert_int_eq(parse_strings(&u, "add@/devices/x", "ACTION=add", NULL), -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=remove", "DEVPATH=/devices/x", NULL), -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=ad", "DEVPATH=/devices/x", NULL), -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=addd", "DEVPATH=/devices/x", NULL), -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "DEVPATH=/devices/y", NULL), -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "ACTION=add", "DEVPATH=/devices/x", NULL),
                -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=", NULL),
                -EBADMSG);
        /* Environment strings. */
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "NOEQUALS", NULL),
                -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "=value", NULL),
                -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "", "DEVPATH=/devices/x", NULL), -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SEQNUM=12a", NULL),
                -EBADMSG);
        ck_assert_int_eq(
                parse_strings(&u, "add@/devices/x", "ACTION=add", "DEVPATH=/devices/x", "SEQNUM=-1", NULL),
                -EBADMSG);
        ck_assert_int_eq(
                parse_strings(
                        &u, "add@/devices/x", "ACTION=add", "DEVPATH=/devices/x",
                        "SEQNUM=99999999999999999999999", NULL),
                -EBADMSG);
        /* Nothing was written on error. */
        ck_assert_uint_eq(u.seqnum, 77);

        /* At most UEVENT_MAX_ENV strings. */
        for (int extra = 0; extra <= 1; extra++) {
                char *buf = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&buf, &size);
                size_t n = UEVENT_MAX_ENV - 2 + (size_t)extra;
                Datagram d;

                ck_assert_ptr_nonnull(f);
                fputs("add@/devices/x", f);
                fputc(0, f);
                fputs("ACTION=add", f);
                fputc(0, f);
                fputs("DEVPATH=/devices/x", f);
                fputc(0, f);
                for (size_t i = 0; i < n; i++) {
                        snprintf(many[i], sizeof many[i], "KEY%zu=%zu", i, i);
                        fputs(many[i], f);
                        fputc(0, f);
                }
                ck_assert_int_eq(fclose(f), 0);
                d = (Datagram){.len = size, .bytes = malloc(size)};
                ck_assert_ptr_nonnull(d.bytes);
                memcpy(d.bytes, buf, size);
                free(buf);
                if (extra == 0) {
                        ck_assert_int_eq(uevent_parse(d.bytes, d.len, &u), 0);
                        ck_assert_uint_eq(u.n_env, UEVENT_MAX_ENV);
                        ck_assert_str_eq(uevent_get(&u, "KEY3"), "3");
                } else
                        ck_assert_int_eq(uevent_parse(d.bytes, d.len, &u), -EBADMSG);
                datagram_done(&d);
        }
}
END_TEST

START_TEST(test_cpu_number) {
        static const struct {
                const char *subsystem, *devpath;
                int expect;
        } cases[] = {
                {"cpu", "/devices/system/cpu/cpu0", 0},
                {"cpu", "/devices/system/cpu/cpu127", 127},
                {"cpu", "/devices/system/cpu/cpu", -EINVAL},
                {"cpu", "/devices/system/cpu/cpufreq", -EINVAL},
                {"cpu", "/devices/system/cpu/cpu1x", -EINVAL},
                {"cpu", "/devices/system/cpu/cpu-1", -EINVAL},
                {"cpu", "/devices/system/cpu/cpu99999999999", -EINVAL},
                {"cpu", "/devices/system/memory/memory1", -EINVAL},
                {"node", "/devices/system/cpu/cpu1", -EINVAL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Uevent u = {
                        .action = "online", .devpath = cases[i].devpath, .subsystem = cases[i].subsystem};
                ck_assert_msg(
                        uevent_cpu_number(&u) == cases[i].expect, "%s %s: %d, expected %d",
                        cases[i].subsystem, cases[i].devpath, uevent_cpu_number(&u), cases[i].expect);
        }
}
END_TEST

/* Random bytes and random mutations of a valid datagram: never a crash or an over-read, and a
 * success always points at NUL-terminated strings inside the buffer. */
START_TEST(test_parse_garbage) {
        Datagram valid = datagram(
                "offline@/devices/system/cpu/cpu1", "ACTION=offline", "DEVPATH=/devices/system/cpu/cpu1",
                "SUBSYSTEM=cpu", "SEQNUM=4711", NULL);
        uint64_t state = 0x2545f4914f6cdd1dULL;
        unsigned n_ok = 0;

        for (unsigned iter = 0; iter < 200000; iter++) {
                size_t len;
                char *b;
                Uevent u;
                int r;

                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if (iter % 2 == 0) {
                        len = state % 96;
                        b = malloc(MAX(len, (size_t)1));
                        ck_assert_ptr_nonnull(b);
                        for (size_t i = 0; i < len; i++) {
                                state ^= state << 13;
                                state ^= state >> 7;
                                state ^= state << 17;
                                /* Mostly printable, with NULs, '@' and '=' often. */
                                b[i] = "\0@=AC/x"[state % 7];
                        }
                } else {
                        len = valid.len;
                        b = malloc(len);
                        ck_assert_ptr_nonnull(b);
                        memcpy(b, valid.bytes, len);
                        b[state % len] = (char)(state >> 16);
                        b[(state >> 24) % len] = (char)(state >> 40);
                }
                r = uevent_parse(b, len, &u);
                ck_assert(r == 0 || r == -EBADMSG || r == -EPROTO);
                if (r == 0) {
                        ck_assert(u.action >= b && u.action < b + len);
                        ck_assert(u.devpath >= b && u.devpath < b + len);
                        ck_assert_ptr_nonnull(memchr(u.devpath, 0, (size_t)(b + len - u.devpath)));
                        ck_assert_uint_le(u.n_env, UEVENT_MAX_ENV);
                        n_ok++;
                }
                free(b);
        }
        /* The single-byte mutations that keep the datagram valid (a changed value byte). */
        ck_assert_uint_gt(n_ok, 0);
        datagram_done(&valid);
}
END_TEST

/* ---- live ---- */

typedef struct Recorded {
        char action[32];
        char devpath[128];
        char subsystem[32];
        char synth_uuid[64];
        char synth_tag[64];
        int cpu;
} Recorded;

typedef struct Recorder {
        Recorded items[512];
        size_t n;
        unsigned n_lost;
        int last_lost_error;
        UeventSubscription *self; /* one-shot: freed by the handler at its first event */
} Recorder;

static void copy_str(char *dst, size_t size, const char *src) {
        snprintf(dst, size, "%s", src ? src : "");
}

static int record(UeventMonitor *m, const Uevent *ev, void *userdata) {
        Recorder *rec = userdata;
        Recorded *r;

        if (rec->n >= ELEMENTSOF(rec->items))
                return 0;
        r = &rec->items[rec->n++];
        copy_str(r->action, sizeof r->action, ev->action);
        copy_str(r->devpath, sizeof r->devpath, ev->devpath);
        copy_str(r->subsystem, sizeof r->subsystem, ev->subsystem);
        copy_str(r->synth_uuid, sizeof r->synth_uuid, uevent_get(ev, "SYNTH_UUID"));
        copy_str(r->synth_tag, sizeof r->synth_tag, uevent_get(ev, "SYNTH_ARG_TAG"));
        r->cpu = uevent_cpu_number(ev);
        if (rec->self)
                rec->self = uevent_subscription_free(rec->self);
        return 0;
}

static void record_lost(UeventMonitor *m, int error, void *userdata) {
        Recorder *rec = userdata;

        rec->n_lost++;
        rec->last_lost_error = error;
}

static const Recorded *recorder_find(
        const Recorder *rec, const char *action, const char *devpath, const char *uuid) {
        for (size_t i = 0; i < rec->n; i++)
                if (streq(rec->items[i].action, action) && streq(rec->items[i].devpath, devpath) &&
                    (!uuid || streq(rec->items[i].synth_uuid, uuid)))
                        return &rec->items[i];
        return NULL;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

typedef bool (*condition_t)(const void *userdata);

/* Runs the loop until cond holds; fails after WAIT_USEC. */
static void run_until(sd_event *e, condition_t cond, const void *userdata, const char *what) {
        uint64_t deadline = now_usec() + WAIT_USEC;

        while (!cond(userdata)) {
                ck_assert_msg(now_usec() < deadline, "timed out waiting for %s", what);
                ck_assert_int_ge(sd_event_run(e, 100 * USEC_PER_MSEC), 0);
        }
}

/* Runs the loop until it has been idle (nothing dispatched) for a moment. */
static void run_until_idle(sd_event *e) {
        for (unsigned idle = 0; idle < 3;) {
                int r = sd_event_run(e, 50 * USEC_PER_MSEC);
                ck_assert_int_ge(r, 0);
                idle = r == 0 ? idle + 1 : 0;
        }
}

static int write_file(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, text, strlen(text));
        if (n < 0)
                return -errno;
        return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* '1', '0', or '\0' when it can't be read. */
static char read_cpu1_online(void) {
        _cleanup_close_ int fd = open(CPU1_ONLINE, O_RDONLY | O_CLOEXEC);
        char c = '\0';

        if (fd < 0 || read(fd, &c, 1) != 1)
                return '\0';
        return c;
}

/* Brings CPU 1 back online if it is not. Safe to call from anywhere (no check assertions). */
static void restore_cpu1(void) {
        for (unsigned i = 0; i < 50 && read_cpu1_online() == '0'; i++) {
                if (write_file(CPU1_ONLINE, "1") == 0)
                        break;
                usleep(100 * 1000);
        }
}

static void synth_uuid(char buf[37]) {
        uint64_t a = now_usec() * 2654435761ULL ^ (uint64_t)getpid(), b = a * 0x9e3779b97f4a7c15ULL;

        snprintf(
                buf, 37, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
                (unsigned)a & 0xffff, (unsigned)(b >> 48), (unsigned long long)(b & 0xffffffffffffULL));
}

/* Writes "change UUID TAG=tag" to cpu0's uevent file: the kernel sends a synthetic uevent. */
static void synthesize(const char *uuid, const char *tag) {
        char text[160];
        int r;

        snprintf(text, sizeof text, "change %s TAG=%s", uuid, tag);
        r = write_file(CPU0_UEVENT, text);
        ck_assert_msg(r == 0, "writing \"%s\" to %s: %s", text, CPU0_UEVENT, strerror(-r));
}

typedef struct FindArgs {
        const Recorder *rec;
        const char *action, *devpath, *uuid;
} FindArgs;

static bool found(const void *userdata) {
        const FindArgs *a = userdata;
        return recorder_find(a->rec, a->action, a->devpath, a->uuid) != NULL;
}

static bool got_lost(const void *userdata) {
        return ((const Recorder *)userdata)->n_lost > 0;
}

static sd_event *new_event(void) {
        sd_event *e = NULL;

        ck_assert_int_eq(sd_event_new(&e), 0);
        return e;
}

/* Synthetic uevents reach the subscribers of their subsystem (and of every subsystem), not
 * others; a subscription freed from its own handler is gone. */
START_TEST(test_live_subscriptions) {
        _cleanup_(uevent_monitor_freep) UeventMonitor *m = NULL;
        sd_event *e = new_event();
        Recorder *cpu = calloc(1, sizeof(Recorder)), *net = calloc(1, sizeof(Recorder)),
                 *all = calloc(1, sizeof(Recorder)), *once = calloc(1, sizeof(Recorder));
        UeventSubscription *net_sub = NULL;
        char uuid[37], uuid2[37];
        const Recorded *r;
        size_t size = 0;
        int force_error = 1;

        ck_assert(cpu && net && all && once);
        ck_assert_int_eq(uevent_monitor_new(e, &m), 0);
        uevent_monitor_get_receive_buffer(m, &size, &force_error);
        ck_assert_int_eq(force_error, 0); /* root: SO_RCVBUFFORCE works */
        ck_assert_uint_ge(size, UEVENT_MONITOR_RCVBUF_SIZE);
        ck_assert_int_eq(uevent_monitor_subscribe(m, "cpu", record, record_lost, cpu, NULL), 0);
        ck_assert_int_eq(uevent_monitor_subscribe(m, "net", record, record_lost, net, &net_sub), 0);
        ck_assert_int_eq(uevent_monitor_subscribe(m, NULL, record, NULL, all, NULL), 0);
        ck_assert_int_eq(uevent_monitor_subscribe(m, "cpu", record, NULL, once, &once->self), 0);

        synth_uuid(uuid);
        synthesize(uuid, "first");
        run_until(
                e, found,
                &(FindArgs){
                        .rec = cpu, .action = "change", .devpath = "/devices/system/cpu/cpu0", .uuid = uuid},
                "the synthetic change event of cpu0");
        r = recorder_find(cpu, "change", "/devices/system/cpu/cpu0", uuid);
        ck_assert_str_eq(r->subsystem, "cpu");
        ck_assert_str_eq(r->synth_tag, "first");
        ck_assert_int_eq(r->cpu, 0);
        ck_assert_ptr_nonnull(recorder_find(all, "change", "/devices/system/cpu/cpu0", uuid));
        ck_assert_ptr_nonnull(recorder_find(once, "change", "/devices/system/cpu/cpu0", uuid));
        ck_assert_ptr_null(once->self);
        ck_assert_ptr_null(recorder_find(net, "change", "/devices/system/cpu/cpu0", uuid));

        /* A second one: the one-shot subscriber is gone; net unsubscribed explicitly. */
        net_sub = uevent_subscription_free(net_sub);
        synth_uuid(uuid2);
        ck_assert_str_ne(uuid, uuid2);
        synthesize(uuid2, "second");
        run_until(
                e, found,
                &(FindArgs){
                        .rec = cpu,
                        .action = "change",
                        .devpath = "/devices/system/cpu/cpu0",
                        .uuid = uuid2},
                "the second synthetic change event");
        ck_assert_ptr_nonnull(recorder_find(all, "change", "/devices/system/cpu/cpu0", uuid2));
        ck_assert_ptr_null(recorder_find(once, "change", "/devices/system/cpu/cpu0", uuid2));
        ck_assert_uint_eq(cpu->n_lost, 0);
        ck_assert_uint_eq(net->n, 0);

        m = uevent_monitor_free(m);
        sd_event_unref(e);
        free(cpu), free(net), free(all), free(once);
}
END_TEST

/* A datagram sent to the kernel's group by a user-space socket (root may) is dropped. */
START_TEST(test_live_forged_sender) {
        _cleanup_(uevent_monitor_freep) UeventMonitor *m = NULL;
        _cleanup_close_ int s = -EBADF;
        sd_event *e = new_event();
        Recorder *all = calloc(1, sizeof(Recorder));
        static const char forged[] =
                "add@/devices/virtual/affinityd-test\0ACTION=add\0"
                "DEVPATH=/devices/virtual/affinityd-test\0SUBSYSTEM=affinityd-test\0SEQNUM=1";
        struct sockaddr_nl dst = {.nl_family = AF_NETLINK, .nl_groups = 1};
        char uuid[37];

        ck_assert_ptr_nonnull(all);
        ck_assert_int_eq(uevent_monitor_new(e, &m), 0);
        ck_assert_int_eq(uevent_monitor_subscribe(m, NULL, record, NULL, all, NULL), 0);
        ck_assert_uint_eq(uevent_monitor_n_dropped(m), 0);

        s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        ck_assert_int_ge(s, 0);
        ck_assert_msg(
                sendto(s, forged, sizeof(forged), 0, (const struct sockaddr *)&dst, sizeof(dst)) ==
                        (ssize_t)sizeof(forged),
                "sending to the uevent group: %m");

        /* A real event after it, as a barrier: once it is in, the forged one was handled. */
        synth_uuid(uuid);
        synthesize(uuid, "barrier");
        run_until(
                e, found,
                &(FindArgs){
                        .rec = all, .action = "change", .devpath = "/devices/system/cpu/cpu0", .uuid = uuid},
                "the barrier event");
        ck_assert_ptr_null(recorder_find(all, "add", "/devices/virtual/affinityd-test", NULL));
        ck_assert_uint_ge(uevent_monitor_n_dropped(m), 1);

        m = uevent_monitor_free(m);
        sd_event_unref(e);
        free(all);
}
END_TEST

/* A receive queue overrun is reported as lost to every subscriber with a lost handler; events
 * flow again afterwards. */
START_TEST(test_live_overrun) {
        _cleanup_(uevent_monitor_freep) UeventMonitor *m = NULL;
        sd_event *e = new_event();
        Recorder *a = calloc(1, sizeof(Recorder)), *b = calloc(1, sizeof(Recorder));
        int fd, tiny = 0;
        char uuid[37];

        ck_assert(a && b);
        ck_assert_int_eq(uevent_monitor_new(e, &m), 0);
        ck_assert_int_eq(uevent_monitor_subscribe(m, "cpu", record, record_lost, a, NULL), 0);
        ck_assert_int_eq(uevent_monitor_subscribe(m, "net", NULL, record_lost, b, NULL), 0);
        run_until_idle(e);

        /* The smallest receive buffer the kernel allows holds a couple of uevents. */
        fd = uevent_monitor_get_fd(m);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &tiny, sizeof(tiny)), 0);
        for (unsigned i = 0; i < 200; i++) {
                synth_uuid(uuid);
                synthesize(uuid, "flood");
        }
        run_until(e, got_lost, a, "the lost report");
        ck_assert_int_eq(a->last_lost_error, -ENOBUFS);
        ck_assert_uint_ge(b->n_lost, 1);
        ck_assert_int_eq(b->last_lost_error, -ENOBUFS);
        ck_assert_uint_lt(a->n, 200);

        synth_uuid(uuid);
        synthesize(uuid, "after");
        run_until(
                e, found,
                &(FindArgs){
                        .rec = a, .action = "change", .devpath = "/devices/system/cpu/cpu0", .uuid = uuid},
                "an event after the overrun");

        m = uevent_monitor_free(m);
        sd_event_unref(e);
        free(a), free(b);
}
END_TEST

typedef struct CpuArgs {
        const Recorder *rec;
        const char *action;
} CpuArgs;

static bool cpu1_event(const void *userdata) {
        const CpuArgs *a = userdata;

        for (size_t i = 0; i < a->rec->n; i++)
                if (a->rec->items[i].cpu == 1 && streq(a->rec->items[i].action, a->action))
                        return true;
        return false;
}

/* CPU 1 offline and back: an "offline" and then an "online" event of cpu1 arrive. */
START_TEST(test_live_hotplug) {
        _cleanup_(uevent_monitor_freep) UeventMonitor *m = NULL;
        sd_event *e = new_event();
        Recorder *rec = calloc(1, sizeof(Recorder));
        size_t offline_at;
        int r;

        ck_assert_ptr_nonnull(rec);
        ck_assert_msg(read_cpu1_online() == '1', "CPU 1 is not online before the test");
        ck_assert_int_eq(uevent_monitor_new(e, &m), 0);
        ck_assert_int_eq(uevent_monitor_subscribe(m, "cpu", record, record_lost, rec, NULL), 0);

        r = write_file(CPU1_ONLINE, "0");
        ck_assert_msg(r == 0, "taking CPU 1 offline: %s", strerror(-r));
        run_until(e, cpu1_event, &(CpuArgs){.rec = rec, .action = "offline"}, "the offline event of CPU 1");
        offline_at = rec->n;
        ck_assert_int_eq(read_cpu1_online(), '0');
        ck_assert_str_eq(rec->items[offline_at - 1].devpath, "/devices/system/cpu/cpu1");
        ck_assert_str_eq(rec->items[offline_at - 1].subsystem, "cpu");

        r = write_file(CPU1_ONLINE, "1");
        ck_assert_msg(r == 0, "bringing CPU 1 back online: %s", strerror(-r));
        run_until(e, cpu1_event, &(CpuArgs){.rec = rec, .action = "online"}, "the online event of CPU 1");
        ck_assert_int_eq(read_cpu1_online(), '1');
        /* In that order. */
        for (size_t i = 0; i < offline_at; i++)
                ck_assert_str_ne(rec->items[i].action, "online");
        ck_assert_uint_eq(rec->n_lost, 0);

        m = uevent_monitor_free(m);
        sd_event_unref(e);
        free(rec);
}
END_TEST

/* Unchecked teardown: runs in the runner process, even when the forked test died. */
static void hotplug_teardown(void) {
        restore_cpu1();
}

static Suite *parse_suite(void) {
        Suite *s = suite_create("uevent-monitor-parse");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_parse_cpu_offline);
        tcase_add_test(tc, test_parse_net_add);
        tcase_add_test(tc, test_parse_truncated);
        tcase_add_test(tc, test_parse_libudev);
        tcase_add_test(tc, test_parse_malformed);
        tcase_add_test(tc, test_cpu_number);
        tcase_add_test(tc, test_parse_garbage);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

static Suite *live_suite(void) {
        Suite *s = suite_create("uevent-monitor-live");
        TCase *tc = tcase_create("live");

        tcase_add_test(tc, test_live_subscriptions);
        tcase_add_test(tc, test_live_forged_sender);
        tcase_add_test(tc, test_live_overrun);
        suite_add_tcase(s, tc);

        tc = tcase_create("hotplug");
        tcase_add_unchecked_fixture(tc, NULL, hotplug_teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_live_hotplug);
        suite_add_tcase(s, tc);
        return s;
}

/* 0 if the live tests can run here, else 77 with the reason printed. */
static int live_preconditions(void) {
        _cleanup_close_ int fd = -EBADF;

        if (geteuid() != 0) {
                printf("SKIP: the live tests synthesize uevents and hotplug CPU 1, which needs root\n");
                return 77;
        }
        if (access(CPU1_ONLINE, W_OK) < 0) {
                printf("SKIP: CPU 1 can't be hotplugged here (%s: %m)\n", CPU1_ONLINE);
                return 77;
        }
        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0) {
                printf("SKIP: no NETLINK_KOBJECT_UEVENT socket here: %m\n");
                return 77;
        }
        return 0;
}

static int run_suite(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed;
}

int main(int argc, char *argv[]) {
        const char *what = argc > 1 ? argv[1] : "all";
        bool parse = streq(what, "parse") || streq(what, "all");
        bool live = streq(what, "live") || streq(what, "all");
        int failed = 0, r;

        if (!parse && !live) {
                fprintf(stderr, "usage: %s [parse|live]\n", argv[0]);
                return 2;
        }
        if (parse)
                failed += run_suite(parse_suite());
        if (live) {
                r = live_preconditions();
                if (r != 0)
                        return parse && failed > 0 ? EXIT_FAILURE : r;
                failed += run_suite(live_suite());
                /* Whatever happened above, CPU 1 ends online, and the run fails if it did not. */
                restore_cpu1();
                if (read_cpu1_online() != '1') {
                        printf("FAIL: CPU 1 is not online at the end of the run\n");
                        failed++;
                }
        }
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
