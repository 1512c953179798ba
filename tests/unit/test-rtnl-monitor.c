/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of daemon/rtnl-monitor.c.
 *  - "parse": hand-built rtnetlink datagrams (one and several messages, other message types and
 *    AF_BRIDGE copies skipped, a missing IFLA_IFNAME, attributes whose length is not a multiple
 *    of 4, a last message without its padding, a datagram at an odd address), every truncation
 *    of a datagram, malformed headers and attributes, and random mutations; every buffer is a
 *    heap block of exactly the datagram's size, so ASan catches any over-read.
 *  - "live": the real NETLINK_ROUTE socket on a real sd_event loop: a veth pair with 4 rx and
 *    4 tx queues created (RTM_NEWLINK with its name and queue counts), set up (IFF_UP) and
 *    deleted (RTM_DELLINK); a datagram forged by a user-space sender to RTMGRP_LINK dropped; a
 *    provoked receive-queue overrun reported as lost. The veth pair (named afd<pid>a/b) is
 *    deleted in any case: by the test, by the test case's teardown (which runs in this process
 *    even when the forked test dies), and finally by main(), which fails the run if it is still
 *    there. Needs root and ip(8); exits 77 only without them.
 * Usage: test-rtnl-monitor [parse|live] (no argument: both).
 */

#include <check.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <systemd/sd-event.h>

#include "macro.h"
#include "rtnl-monitor.h"

#define USEC_PER_SEC  UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
/* Failure bound of every wait for an event (not a timing assertion). */
#define WAIT_USEC (30 * USEC_PER_SEC)

/* ---- datagram builder ---- */

typedef struct Builder {
        uint8_t bytes[4096];
        size_t len;       /* bytes used */
        size_t msg_start; /* offset of the message being built */
} Builder;

static void builder_put(Builder *b, const void *p, size_t n) {
        ck_assert_uint_le(b->len + n, sizeof(b->bytes));
        memcpy(b->bytes + b->len, p, n);
        b->len += n;
}

static void builder_pad(Builder *b, size_t align) {
        static const uint8_t zeros[8] = {};
        size_t n = (align - b->len % align) % align;

        builder_put(b, zeros, n);
}

/* Starts a message: nlmsghdr, then an ifinfomsg for link types (family AF_UNSPEC unless given). */
static void msg_begin(
        Builder *b, uint16_t type, bool ifinfo, unsigned char family, int ifindex, unsigned flags) {
        struct nlmsghdr h = {.nlmsg_type = type, .nlmsg_seq = 7};

        builder_pad(b, NLMSG_ALIGNTO);
        b->msg_start = b->len;
        builder_put(b, &h, sizeof(h));
        if (ifinfo) {
                struct ifinfomsg ifi = {
                        .ifi_family = family,
                        .ifi_index = ifindex,
                        .ifi_flags = flags,
                        .ifi_change = 0xffffffff};
                builder_put(b, &ifi, sizeof(ifi));
        }
}

/* Adds an attribute, padding the previous one first. */
static void msg_attr(Builder *b, uint16_t type, const void *data, size_t n) {
        struct rtattr rta = {.rta_len = (unsigned short)RTA_LENGTH(n), .rta_type = type};

        builder_pad(b, RTA_ALIGNTO);
        builder_put(b, &rta, sizeof(rta));
        builder_put(b, data, n);
}

static void msg_attr_str(Builder *b, uint16_t type, const char *s) {
        msg_attr(b, type, s, strlen(s) + 1);
}

static void msg_attr_u32(Builder *b, uint16_t type, uint32_t v) {
        msg_attr(b, type, &v, sizeof(v));
}

/* Ends the message: nlmsg_len covers it without trailing padding. */
static void msg_end(Builder *b) {
        uint32_t l = (uint32_t)(b->len - b->msg_start);

        memcpy(b->bytes + b->msg_start + offsetof(struct nlmsghdr, nlmsg_len), &l, sizeof(l));
}

/* A link message with the usual attributes; name and counts optional (NULL / 0: absent). */
static void msg_link(
        Builder *b, uint16_t type, int ifindex, unsigned flags, const char *name, uint32_t rx, uint32_t tx) {
        uint32_t mtu = 1500;

        msg_begin(b, type, true, AF_UNSPEC, ifindex, flags);
        msg_attr_u32(b, IFLA_MTU, mtu);
        if (name)
                msg_attr_str(b, IFLA_IFNAME, name);
        if (tx)
                msg_attr_u32(b, IFLA_NUM_TX_QUEUES, tx);
        if (rx)
                msg_attr_u32(b, IFLA_NUM_RX_QUEUES, rx);
        msg_end(b);
}

/* A heap copy of exactly len bytes (at least 1 allocated). */
static uint8_t *exact_copy(const void *p, size_t len) {
        uint8_t *c = malloc(MAX(len, (size_t)1));

        ck_assert_ptr_nonnull(c);
        memcpy(c, p, len);
        return c;
}

/* ---- collected events ---- */

typedef struct Seen {
        RtnlLinkAction action;
        int ifindex;
        unsigned flags, change;
        bool has_name;
        char name[IF_NAMESIZE];
        const char *name_ptr; /* where the name pointed (parse tests: inside the buffer) */
        uint32_t rx, tx;
} Seen;

typedef struct Collector {
        Seen items[256];
        size_t n;
} Collector;

static void collect(const RtnlLinkEvent *ev, void *userdata) {
        Collector *c = userdata;
        Seen *s;

        if (c->n >= ELEMENTSOF(c->items))
                return;
        s = &c->items[c->n++];
        *s = (Seen){
                .action = ev->action,
                .ifindex = ev->ifindex,
                .flags = ev->flags,
                .change = ev->change,
                .has_name = ev->name != NULL,
                .name_ptr = ev->name,
                .rx = ev->n_rx_queues,
                .tx = ev->n_tx_queues,
        };
        if (ev->name) {
                ck_assert_uint_lt(strlen(ev->name), sizeof(s->name));
                strcpy(s->name, ev->name);
        }
}

/* Parses the builder's bytes from an exact-size heap copy. */
static int parse_built(const Builder *b, size_t len, Collector *c) {
        uint8_t *copy = exact_copy(b->bytes, len);
        int r;

        *c = (Collector){};
        r = rtnl_parse_links(copy, len, collect, c);
        for (size_t i = 0; i < c->n; i++)
                if (c->items[i].has_name)
                        ck_assert(
                                (const uint8_t *)c->items[i].name_ptr >= copy &&
                                (const uint8_t *)c->items[i].name_ptr < copy + len);
        free(copy);
        return r;
}

/* ---- parse ---- */

START_TEST(test_parse_one) {
        Builder b = {};
        Collector c;

        msg_link(&b, RTM_NEWLINK, 42, IFF_UP | IFF_BROADCAST, "vt0", 4, 3);
        ck_assert_int_eq(parse_built(&b, b.len, &c), 1);
        ck_assert_uint_eq(c.n, 1);
        ck_assert_int_eq(c.items[0].action, RTNL_LINK_NEW);
        ck_assert_int_eq(c.items[0].ifindex, 42);
        ck_assert_uint_eq(c.items[0].flags, IFF_UP | IFF_BROADCAST);
        ck_assert_uint_eq(c.items[0].change, 0xffffffff);
        ck_assert(c.items[0].has_name);
        ck_assert_str_eq(c.items[0].name, "vt0");
        ck_assert_uint_eq(c.items[0].rx, 4);
        ck_assert_uint_eq(c.items[0].tx, 3);

        /* An empty datagram holds nothing. */
        ck_assert_int_eq(rtnl_parse_links(b.bytes, 0, collect, &c), 0);
}
END_TEST

START_TEST(test_parse_several) {
        Builder b = {};
        Collector c;

        msg_link(&b, RTM_NEWLINK, 5, 0, "eth0", 1, 1);
        msg_begin(&b, NLMSG_NOOP, false, 0, 0, 0);
        msg_end(&b);
        /* An address message: other type, skipped (its body is not an ifinfomsg). */
        msg_begin(&b, RTM_NEWADDR, false, 0, 0, 0);
        {
                struct ifaddrmsg ifa = {.ifa_family = AF_INET, .ifa_prefixlen = 24, .ifa_index = 5};
                builder_put(&b, &ifa, sizeof(ifa));
                msg_attr_str(&b, IFA_LABEL, "eth0");
        }
        msg_end(&b);
        /* A bridge port's copy: same type, family AF_BRIDGE, skipped. */
        msg_begin(&b, RTM_DELLINK, true, AF_BRIDGE, 5, 0);
        msg_attr_str(&b, IFLA_IFNAME, "eth0");
        msg_end(&b);
        msg_link(&b, RTM_DELLINK, 6, 0, "vt1", 2, 2);
        msg_link(&b, RTM_NEWLINK, 7, IFF_UP | IFF_RUNNING | IFF_MULTICAST, "lo", 0, 0);
        msg_begin(&b, NLMSG_DONE, false, 0, 0, 0);
        {
                int zero = 0;
                builder_put(&b, &zero, sizeof(zero));
        }
        msg_end(&b);

        ck_assert_int_eq(parse_built(&b, b.len, &c), 3);
        ck_assert_uint_eq(c.n, 3);
        ck_assert_int_eq(c.items[0].action, RTNL_LINK_NEW);
        ck_assert_str_eq(c.items[0].name, "eth0");
        ck_assert_int_eq(c.items[0].ifindex, 5);
        ck_assert_int_eq(c.items[1].action, RTNL_LINK_DEL);
        ck_assert_str_eq(c.items[1].name, "vt1");
        ck_assert_int_eq(c.items[1].ifindex, 6);
        ck_assert_uint_eq(c.items[1].rx, 2);
        ck_assert_int_eq(c.items[2].action, RTNL_LINK_NEW);
        ck_assert_str_eq(c.items[2].name, "lo");
        ck_assert_uint_eq(c.items[2].flags, IFF_UP | IFF_RUNNING | IFF_MULTICAST);
        /* Absent counts are 0. */
        ck_assert_uint_eq(c.items[2].rx, 0);
        ck_assert_uint_eq(c.items[2].tx, 0);
}
END_TEST

START_TEST(test_parse_no_name) {
        Builder b = {};
        Collector c;

        msg_link(&b, RTM_NEWLINK, 9, IFF_UP, NULL, 8, 8);
        ck_assert_int_eq(parse_built(&b, b.len, &c), 1);
        ck_assert(!c.items[0].has_name);
        ck_assert_int_eq(c.items[0].ifindex, 9);
        ck_assert_uint_eq(c.items[0].rx, 8);
        ck_assert_uint_eq(c.items[0].tx, 8);

        /* No attributes at all: just the ifinfomsg. */
        b = (Builder){};
        msg_begin(&b, RTM_DELLINK, true, AF_UNSPEC, 11, 0);
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), 1);
        ck_assert_int_eq(c.items[0].action, RTNL_LINK_DEL);
        ck_assert(!c.items[0].has_name);
        ck_assert_int_eq(c.items[0].ifindex, 11);
}
END_TEST

/* Attribute lengths that are not multiples of 4, the last attribute and the last message
 * without their padding, and a datagram at an odd address. */
START_TEST(test_parse_alignment) {
        Builder b = {};
        Collector c, c2;
        uint8_t *odd;

        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 3, 0);
        msg_attr_str(&b, IFLA_IFNAME, "abcde"); /* rta_len 10, padded to 12 */
        msg_attr_u32(&b, IFLA_NUM_RX_QUEUES, 16);
        msg_attr(&b, IFLA_OPERSTATE, "\x06", 1); /* rta_len 5 */
        msg_attr_u32(&b, IFLA_NUM_TX_QUEUES, 2);
        msg_end(&b);
        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 4, 0);
        msg_attr_u32(&b, IFLA_NUM_RX_QUEUES, 1);
        msg_attr_str(&b, IFLA_IFNAME, "x1"); /* rta_len 7, last: no padding after it */
        msg_end(&b);
        ck_assert_uint_ne(b.len % 4, 0);

        ck_assert_int_eq(parse_built(&b, b.len, &c), 2);
        ck_assert_str_eq(c.items[0].name, "abcde");
        ck_assert_uint_eq(c.items[0].rx, 16);
        ck_assert_uint_eq(c.items[0].tx, 2);
        ck_assert_str_eq(c.items[1].name, "x1");
        ck_assert_uint_eq(c.items[1].rx, 1);
        ck_assert_uint_eq(c.items[1].tx, 0);

        /* The same bytes one byte off alignment: the same events. */
        odd = malloc(b.len + 1);
        ck_assert_ptr_nonnull(odd);
        memcpy(odd + 1, b.bytes, b.len);
        c2 = (Collector){};
        ck_assert_int_eq(rtnl_parse_links(odd + 1, b.len, collect, &c2), 2);
        ck_assert_uint_eq(c2.n, 2);
        for (size_t i = 0; i < 2; i++) {
                ck_assert_str_eq(c2.items[i].name, c.items[i].name);
                ck_assert_int_eq(c2.items[i].ifindex, c.items[i].ifindex);
                ck_assert_uint_eq(c2.items[i].rx, c.items[i].rx);
                ck_assert_uint_eq(c2.items[i].tx, c.items[i].tx);
        }
        free(odd);

        /* With the padding present at the end too. */
        builder_pad(&b, NLMSG_ALIGNTO);
        ck_assert_int_eq(parse_built(&b, b.len, &c), 2);
}
END_TEST

/* Every prefix of a two-message datagram: cut at the end of a message it is a shorter valid
 * datagram; cut anywhere else, -EBADMSG after the events of the whole messages before it. */
START_TEST(test_parse_truncated) {
        Builder b = {};
        size_t first_end;
        unsigned n_ok = 0;

        msg_link(&b, RTM_NEWLINK, 21, 0, "trunc0", 4, 4);
        first_end = b.len;
        ck_assert_uint_eq(first_end % 4, 0);
        msg_link(&b, RTM_DELLINK, 22, 0, "trunc1", 4, 4);

        for (size_t len = 0; len <= b.len; len++) {
                Collector c;
                int r = parse_built(&b, len, &c);

                if (len == 0 || len == first_end || len == b.len) {
                        int expect = len == 0 ? 0 : len == first_end ? 1 : 2;
                        ck_assert_msg(r == expect, "prefix of %zu bytes: %d", len, r);
                        n_ok++;
                } else {
                        ck_assert_msg(r == -EBADMSG, "prefix of %zu bytes: %d", len, r);
                        /* Events of the complete messages before the cut were delivered. */
                        ck_assert_uint_eq(c.n, len > first_end ? 1 : 0);
                        if (c.n == 1)
                                ck_assert_str_eq(c.items[0].name, "trunc0");
                }
        }
        ck_assert_uint_eq(n_ok, 3);
}
END_TEST

static void set_u32(Builder *b, size_t off, uint32_t v) {
        memcpy(b->bytes + off, &v, sizeof(v));
}

static void set_u16(Builder *b, size_t off, uint16_t v) {
        memcpy(b->bytes + off, &v, sizeof(v));
}

START_TEST(test_parse_malformed) {
        const size_t attrs = NLMSG_LENGTH(sizeof(struct ifinfomsg)); /* first attribute */
        Builder b;
        Collector c;

        /* nlmsg_len smaller than a header. */
        b = (Builder){};
        msg_link(&b, RTM_NEWLINK, 1, 0, "a", 1, 1);
        set_u32(&b, 0, 8);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        /* nlmsg_len beyond the datagram. */
        set_u32(&b, 0, (uint32_t)b.len + 4);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        /* A link message too short for its ifinfomsg. */
        b = (Builder){};
        msg_begin(&b, RTM_NEWLINK, false, 0, 0, 0);
        builder_put(&b, "\0\0\0\0\0\0\0\0", 8);
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        /* An attribute longer than what is left of its message (the message itself is whole). */
        b = (Builder){};
        msg_link(&b, RTM_NEWLINK, 1, 0, "abc", 0, 0); /* IFLA_MTU first, then IFLA_IFNAME */
        set_u16(&b, attrs + 8, 40);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        /* An attribute shorter than its own header. */
        set_u16(&b, attrs + 8, 2);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        /* Bytes after the last attribute that hold no attribute. */
        b = (Builder){};
        msg_link(&b, RTM_NEWLINK, 1, 0, "abc", 0, 0);
        builder_put(&b, "\0\0", 2);
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        /* IFLA_IFNAME unterminated, empty, or IFNAMSIZ long. */
        b = (Builder){};
        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 1, 0);
        msg_attr(&b, IFLA_IFNAME, "abcd", 4);
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        b = (Builder){};
        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 1, 0);
        msg_attr_str(&b, IFLA_IFNAME, "");
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        b = (Builder){};
        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 1, 0);
        msg_attr_str(&b, IFLA_IFNAME, "0123456789abcdef");
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        b = (Builder){};
        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 1, 0);
        msg_attr_str(&b, IFLA_IFNAME, "0123456789abcde"); /* 15: the longest there is */
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), 1);
        ck_assert_str_eq(c.items[0].name, "0123456789abcde");
        /* A queue count that is not a u32. */
        b = (Builder){};
        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 1, 0);
        msg_attr(&b, IFLA_NUM_RX_QUEUES, "\x04\x00", 2);
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        /* A bad message after a good one: the good one's event was delivered. */
        b = (Builder){};
        msg_link(&b, RTM_NEWLINK, 1, 0, "good", 1, 1);
        msg_begin(&b, RTM_NEWLINK, true, AF_UNSPEC, 2, 0);
        msg_attr_str(&b, IFLA_IFNAME, "");
        msg_end(&b);
        ck_assert_int_eq(parse_built(&b, b.len, &c), -EBADMSG);
        ck_assert_uint_eq(c.n, 1);
        ck_assert_str_eq(c.items[0].name, "good");
        /* Malformed messages of types that are skipped don't matter, as long as the netlink
         * header is sound. */
        b = (Builder){};
        msg_begin(&b, RTM_NEWADDR, false, 0, 0, 0);
        builder_put(&b, "\xff\xff\xff", 3);
        msg_end(&b);
        msg_link(&b, RTM_NEWLINK, 3, 0, "after", 0, 0);
        ck_assert_int_eq(parse_built(&b, b.len, &c), 1);
        ck_assert_str_eq(c.items[0].name, "after");
}
END_TEST

/* Random mutations of a valid datagram and random bytes: never a crash or an over-read; a
 * success delivers names inside the buffer (parse_built checks) and shorter than IFNAMSIZ. */
START_TEST(test_parse_garbage) {
        Builder valid = {};
        uint64_t state = 0x2545f4914f6cdd1dULL;
        unsigned n_ok = 0, n_bad = 0;

        msg_link(&valid, RTM_NEWLINK, 1, IFF_UP, "garbage0", 4, 4);
        msg_link(&valid, RTM_DELLINK, 2, 0, "garbage1", 1, 1);

        for (unsigned iter = 0; iter < 100000; iter++) {
                Builder b = valid;
                Collector c;
                size_t len = valid.len;
                int r;

                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if (iter % 4 == 0) {
                        len = state % 128;
                        for (size_t i = 0; i < len; i++) {
                                state ^= state << 13;
                                state ^= state >> 7;
                                state ^= state << 17;
                                b.bytes[i] = (uint8_t)(state % 4 == 0 ? state >> 8 : state % 3 == 0 ? 0 : state % 40);
                        }
                } else {
                        b.bytes[state % len] = (uint8_t)(state >> 16);
                        if (iter % 3 == 0)
                                b.bytes[(state >> 24) % len] = (uint8_t)(state >> 40);
                        if (iter % 5 == 0)
                                len -= (state >> 48) % len;
                }
                r = parse_built(&b, len, &c);
                ck_assert_msg(r >= 0 || r == -EBADMSG, "iteration %u: %d", iter, r);
                if (r >= 0) {
                        ck_assert_uint_eq(c.n, (size_t)r);
                        n_ok++;
                } else
                        n_bad++;
        }
        ck_assert_uint_gt(n_ok, 0);
        ck_assert_uint_gt(n_bad, 0);
}
END_TEST

/* ---- live ---- */

static char veth_a[IF_NAMESIZE], veth_b[IF_NAMESIZE];

static int run_command(const char *fmt, ...) _printf_(1, 2);
static int run_command(const char *fmt, ...) {
        char cmd[512];
        va_list ap;
        int status;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof cmd, fmt, ap);
        va_end(ap);
        status = system(cmd);
        if (status < 0 || !WIFEXITED(status))
                return -1;
        return WEXITSTATUS(status);
}

/* Deletes the veth pair if it exists (deleting one end deletes both). No check assertions:
 * called from teardown and main(). */
static void delete_veth(void) {
        if (if_nametoindex(veth_a) > 0)
                (void)run_command("ip link del dev %s 2>/dev/null", veth_a);
        if (if_nametoindex(veth_b) > 0)
                (void)run_command("ip link del dev %s 2>/dev/null", veth_b);
}

/* Creates the pair, after deleting what a failed test before may have left. */
static void create_veth(void) {
        delete_veth();
        ck_assert_msg(
                run_command(
                        "ip link add %s numtxqueues 4 numrxqueues 4 type veth peer name %s "
                        "numtxqueues 4 numrxqueues 4",
                        veth_a, veth_b) == 0,
                "creating the veth pair %s/%s failed", veth_a, veth_b);
}

typedef struct Recorder {
        Seen items[4096];
        size_t n;
        unsigned n_lost;
        int last_lost_error;
} Recorder;

static void record(RtnlMonitor *m, const RtnlLinkEvent *ev, void *userdata) {
        Recorder *rec = userdata;
        Seen *s;

        if (rec->n >= ELEMENTSOF(rec->items))
                return;
        s = &rec->items[rec->n++];
        *s = (Seen){
                .action = ev->action,
                .ifindex = ev->ifindex,
                .flags = ev->flags,
                .change = ev->change,
                .has_name = ev->name != NULL,
                .rx = ev->n_rx_queues,
                .tx = ev->n_tx_queues,
        };
        if (ev->name)
                snprintf(s->name, sizeof s->name, "%s", ev->name);
}

static void record_lost(RtnlMonitor *m, int error, void *userdata) {
        Recorder *rec = userdata;

        rec->n_lost++;
        rec->last_lost_error = error;
}

typedef struct FindArgs {
        const Recorder *rec;
        RtnlLinkAction action;
        const char *name;
        unsigned flags_set; /* these IFF_* bits must be set */
        size_t from;        /* look at items from this index */
} FindArgs;

static const Seen *recorder_find(const FindArgs *a) {
        for (size_t i = a->from; i < a->rec->n; i++) {
                const Seen *s = &a->rec->items[i];
                if (s->action == a->action && s->has_name && streq(s->name, a->name) &&
                    (s->flags & a->flags_set) == a->flags_set)
                        return s;
        }
        return NULL;
}

static bool found(const void *userdata) {
        return recorder_find(userdata) != NULL;
}

static bool got_lost(const void *userdata) {
        return ((const Recorder *)userdata)->n_lost > 0;
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

static sd_event *new_event(void) {
        sd_event *e = NULL;

        ck_assert_int_eq(sd_event_new(&e), 0);
        return e;
}

/* A veth pair created, set up and deleted: RTM_NEWLINK with name, index and 4/4 queues;
 * RTM_NEWLINK with IFF_UP; RTM_DELLINK. */
START_TEST(test_live_veth) {
        _cleanup_(rtnl_monitor_freep) RtnlMonitor *m = NULL;
        sd_event *e = new_event();
        Recorder *rec = calloc(1, sizeof(Recorder));
        const Seen *s;
        unsigned ifindex;
        size_t mark;

        ck_assert_ptr_nonnull(rec);
        ck_assert_int_eq(rtnl_monitor_new(e, record, record_lost, rec, &m), 0);
        ck_assert_int_ge(rtnl_monitor_get_fd(m), 0);
        run_until_idle(e);

        create_veth();
        ifindex = if_nametoindex(veth_a);
        ck_assert_uint_gt(ifindex, 0);
        run_until(
                e, found, &(FindArgs){.rec = rec, .action = RTNL_LINK_NEW, .name = veth_a},
                "RTM_NEWLINK of the veth");
        s = recorder_find(&(FindArgs){.rec = rec, .action = RTNL_LINK_NEW, .name = veth_a});
        ck_assert_int_eq(s->ifindex, (int)ifindex);
        ck_assert_uint_eq(s->rx, 4);
        ck_assert_uint_eq(s->tx, 4);
        ck_assert_uint_eq(s->flags & IFF_UP, 0);
        /* The peer is announced too. */
        run_until(
                e, found, &(FindArgs){.rec = rec, .action = RTNL_LINK_NEW, .name = veth_b},
                "RTM_NEWLINK of the peer");

        mark = rec->n;
        ck_assert_int_eq(run_command("ip link set dev %s up", veth_a), 0);
        run_until(
                e, found,
                &(FindArgs){
                        .rec = rec,
                        .action = RTNL_LINK_NEW,
                        .name = veth_a,
                        .flags_set = IFF_UP,
                        .from = mark},
                "RTM_NEWLINK with IFF_UP");
        s = recorder_find(&(FindArgs){
                .rec = rec, .action = RTNL_LINK_NEW, .name = veth_a, .flags_set = IFF_UP, .from = mark});
        ck_assert_int_eq(s->ifindex, (int)ifindex);
        ck_assert_uint_ne(s->change & IFF_UP, 0);

        mark = rec->n;
        ck_assert_int_eq(run_command("ip link del dev %s", veth_a), 0);
        run_until(
                e, found, &(FindArgs){.rec = rec, .action = RTNL_LINK_DEL, .name = veth_a, .from = mark},
                "RTM_DELLINK");
        s = recorder_find(&(FindArgs){.rec = rec, .action = RTNL_LINK_DEL, .name = veth_a, .from = mark});
        ck_assert_int_eq(s->ifindex, (int)ifindex);
        ck_assert_uint_eq(if_nametoindex(veth_a), 0);
        /* Deleting one end deleted the peer. */
        run_until(
                e, found, &(FindArgs){.rec = rec, .action = RTNL_LINK_DEL, .name = veth_b, .from = mark},
                "RTM_DELLINK of the peer");
        ck_assert_uint_eq(rec->n_lost, 0);
        ck_assert_uint_eq(rtnl_monitor_n_dropped(m), 0);

        m = rtnl_monitor_free(m);
        sd_event_unref(e);
        free(rec);
}
END_TEST

/* An RTM_NEWLINK sent to RTMGRP_LINK by a user-space socket (root may) is dropped. Without
 * NLM_F_REQUEST, the kernel's own copy of it is ignored. */
START_TEST(test_live_forged_sender) {
        _cleanup_(rtnl_monitor_freep) RtnlMonitor *m = NULL;
        _cleanup_close_ int s = -EBADF;
        sd_event *e = new_event();
        Recorder *rec = calloc(1, sizeof(Recorder));
        struct sockaddr_nl dst = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
        Builder b = {};

        ck_assert_ptr_nonnull(rec);
        ck_assert_int_eq(rtnl_monitor_new(e, record, record_lost, rec, &m), 0);
        run_until_idle(e);

        msg_link(&b, RTM_NEWLINK, 999999, IFF_UP, "afdforged", 1, 1);
        s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        ck_assert_int_ge(s, 0);
        ck_assert_msg(
                sendto(s, b.bytes, b.len, 0, (const struct sockaddr *)&dst, sizeof(dst)) == (ssize_t)b.len,
                "sending to RTMGRP_LINK: %m");

        /* A real event after it, as a barrier: once it is in, the forged one was handled. */
        create_veth();
        run_until(
                e, found, &(FindArgs){.rec = rec, .action = RTNL_LINK_NEW, .name = veth_a},
                "the barrier event");
        ck_assert_ptr_null(
                recorder_find(&(FindArgs){.rec = rec, .action = RTNL_LINK_NEW, .name = "afdforged"}));
        ck_assert_uint_ge(rtnl_monitor_n_dropped(m), 1);
        delete_veth();

        m = rtnl_monitor_free(m);
        sd_event_unref(e);
        free(rec);
}
END_TEST

/* A receive queue overrun (the smallest receive buffer, and the veth flapped a few hundred times
 * while nobody reads) is reported as lost; events flow again afterwards. */
START_TEST(test_live_overrun) {
        _cleanup_(rtnl_monitor_freep) RtnlMonitor *m = NULL;
        char batch[] = "/tmp/test-rtnl-monitor-XXXXXX";
        _cleanup_fclose_ FILE *f = NULL;
        sd_event *e = new_event();
        Recorder *rec = calloc(1, sizeof(Recorder));
        int fd, tiny = 0;
        size_t mark;

        ck_assert_ptr_nonnull(rec);
        create_veth();
        ck_assert_int_eq(rtnl_monitor_new(e, record, record_lost, rec, &m), 0);
        fd = rtnl_monitor_get_fd(m);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &tiny, sizeof(tiny)), 0);

        fd = mkstemp(batch);
        ck_assert_int_ge(fd, 0);
        f = fdopen(fd, "w");
        ck_assert_ptr_nonnull(f);
        for (unsigned i = 0; i < 200; i++)
                fprintf(f, "link set dev %s %s\n", veth_a, i % 2 ? "down" : "up");
        ck_assert_int_eq(fflush(f), 0);
        ck_assert_int_eq(run_command("ip -batch %s", batch), 0);
        (void)unlink(batch);

        run_until(e, got_lost, rec, "the lost report");
        ck_assert_int_eq(rec->last_lost_error, -ENOBUFS);
        ck_assert_uint_lt(rec->n, 200);

        mark = rec->n;
        ck_assert_int_eq(run_command("ip link del dev %s", veth_a), 0);
        run_until(
                e, found, &(FindArgs){.rec = rec, .action = RTNL_LINK_DEL, .name = veth_a, .from = mark},
                "an event after the overrun");

        m = rtnl_monitor_free(m);
        sd_event_unref(e);
        free(rec);
}
END_TEST

/* Unchecked teardown: runs in the runner process, even when the forked test died. */
static void veth_teardown(void) {
        delete_veth();
}

static Suite *parse_suite(void) {
        Suite *s = suite_create("rtnl-monitor-parse");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_parse_one);
        tcase_add_test(tc, test_parse_several);
        tcase_add_test(tc, test_parse_no_name);
        tcase_add_test(tc, test_parse_alignment);
        tcase_add_test(tc, test_parse_truncated);
        tcase_add_test(tc, test_parse_malformed);
        tcase_add_test(tc, test_parse_garbage);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

static Suite *live_suite(void) {
        Suite *s = suite_create("rtnl-monitor-live");
        TCase *tc = tcase_create("live");

        tcase_add_unchecked_fixture(tc, NULL, veth_teardown);
        tcase_add_test(tc, test_live_veth);
        tcase_add_test(tc, test_live_forged_sender);
        tcase_add_test(tc, test_live_overrun);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);
        return s;
}

/* 0 if the live tests can run here, else 77 with the reason printed. */
static int live_preconditions(void) {
        _cleanup_close_ int fd = -EBADF;

        if (geteuid() != 0) {
                printf("SKIP: the live tests create and delete a veth pair, which needs root\n");
                return 77;
        }
        if (run_command("ip -V >/dev/null 2>&1") != 0) {
                printf("SKIP: no ip(8) here to create a veth pair with\n");
                return 77;
        }
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0) {
                printf("SKIP: no NETLINK_ROUTE socket here: %m\n");
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
        snprintf(veth_a, sizeof veth_a, "afd%da", (int)getpid() % 10000000);
        snprintf(veth_b, sizeof veth_b, "afd%db", (int)getpid() % 10000000);
        if (parse)
                failed += run_suite(parse_suite());
        if (live) {
                r = live_preconditions();
                if (r != 0)
                        return parse && failed > 0 ? EXIT_FAILURE : r;
                failed += run_suite(live_suite());
                /* Whatever happened above, the veth pair is gone, and the run fails if not. */
                delete_veth();
                if (if_nametoindex(veth_a) > 0 || if_nametoindex(veth_b) > 0) {
                        printf("FAIL: the veth pair %s/%s is still there at the end of the run\n", veth_a,
                               veth_b);
                        failed++;
                }
        }
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
