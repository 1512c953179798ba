/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * RPS/RFS/XPS on this machine for real, with veth pairs of 4 rx and 4 tx
 * queues (there is no dummy driver here):
 *  - a net: rule (rps: a cpu-list, xps: a cpu-list divided among the tx queues) and rfs: in
 *    affinityd.yaml: every rx-N/rps_cpus, rx-N/rps_flow_cnt (rfs / 4, rounded up to a power of
 *    two by the kernel), tx-N/xps_cpus and net.core.rps_sock_flow_entries are what they should
 *    be, read from sysfs/procfs directly; ListNetQueues agrees;
 *  - a reload without the rule and without rfs: gives back every value read before the test;
 *  - xps: spread divides the rps: CPUs among the tx queues;
 *  - a veth created after the daemon started is placed (rtnetlink / uevents), and one deleted
 *    has its records dropped;
 *  - a veth renamed (ip link set X name Y) keeps its originals: renamed out of the rule, it gets
 *    them back; renamed within it, a later restore gives the true originals, not the rule's;
 *  - an rx queue whose rps_flow_cnt drifted shows drifted in ListNetQueues;
 *  - link changes that can't matter (MTU, alias) cause no pass; a link going up does.
 * Interfaces are named afd<PID>… after the runner's PID; main() deletes every one of them and
 * puts rps_sock_flow_entries back after the run, whatever happened in the tests (check's fork
 * mode skips a failed test's teardown).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define N_QUEUES 4
#define RFS      4096

static pid_t runner; /* main()'s PID: the prefix of every interface the tests make */

/* Interface name afd<runner><tag>. */
static void ifname(char *buf, size_t size, const char *tag) {
        snprintf(buf, size, "afd%d%s", (int)runner, tag);
        ck_assert_msg(strlen(buf) < 16, "interface name %s too long", buf);
}

/* A veth pair afd<runner><tag>0 / afd<runner><tag>1 with N_QUEUES rx and tx queues each. */
static void veth_add(const char *tag, char a[static 16], char b[static 16]) {
        char ta[8], tb[8], q[8];

        snprintf(ta, sizeof ta, "%s0", tag);
        snprintf(tb, sizeof tb, "%s1", tag);
        ifname(a, 16, ta);
        ifname(b, 16, tb);
        snprintf(q, sizeof q, "%d", N_QUEUES);
        ck_assert_int_eq(
                harness_run_quiet(
                        ARGS("ip", "link", "add", a, "numtxqueues", q, "numrxqueues", q, "type", "veth",
                             "peer", "name", b, "numtxqueues", q, "numrxqueues", q)),
                0);
}

static void veth_del(const char *a) {
        (void)harness_run_quiet(ARGS("ip", "link", "del", a));
}

/* Deletes every interface whose name starts with afd<runner>. */
static void veth_cleanup(void) {
        char prefix[32];
        DIR *dir = opendir("/sys/class/net");
        struct dirent *de;

        snprintf(prefix, sizeof prefix, "afd%d", (int)runner);
        if (!dir)
                return;
        while ((de = readdir(dir)))
                if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
                        veth_del(de->d_name);
        closedir(dir);
}

/* The first line of a file, newline stripped, newly allocated; NULL if unreadable. */
static char *read_line(const char *path) {
        char buf[512];
        FILE *f = fopen(path, "re");
        char *r = NULL;

        if (!f)
                return NULL;
        if (fgets(buf, sizeof buf, f)) {
                buf[strcspn(buf, "\n")] = '\0';
                r = strdup(buf);
        }
        fclose(f);
        return r;
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ssize_t l = (ssize_t)strlen(text);

        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        ck_assert_msg(write(fd, text, (size_t)l) == l, "write %s \"%s\": %s", path, text, strerror(errno));
        close(fd);
}

/* A hex mask as the kernel prints it ("00000000,00000002") as a number (this machine: < 64 CPUs). */
static uint64_t parse_mask(const char *s) {
        uint64_t v = 0;

        ck_assert_ptr_nonnull(s);
        for (; *s; s++) {
                if (*s == ',')
                        continue;
                ck_assert_msg(
                        (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'), "not a hex mask: \"%s\"", s);
                v = v << 4 | (uint64_t)(*s <= '9' ? *s - '0' : *s - 'a' + 10);
        }
        return v;
}

static char *queue_path(const char *dev, const char *queue, const char *file) {
        char *p = NULL;
        ck_assert_int_ge(asprintf(&p, "/sys/class/net/%s/queues/%s/%s", dev, queue, file), 0);
        return p;
}

/* rx-N/rps_cpus, tx-N/xps_cpus as masks; rx-N/rps_flow_cnt. */
static uint64_t read_queue_mask(const char *dev, bool tx, unsigned q) {
        char queue[16];
        _cleanup_free_ char *p = NULL, *v = NULL;

        snprintf(queue, sizeof queue, "%s-%u", tx ? "tx" : "rx", q);
        p = queue_path(dev, queue, tx ? "xps_cpus" : "rps_cpus");
        v = read_line(p);
        ck_assert_msg(v, "cannot read %s", p);
        return parse_mask(v);
}

static unsigned long read_flow_cnt(const char *dev, unsigned q) {
        char queue[16];
        _cleanup_free_ char *p = NULL, *v = NULL;

        snprintf(queue, sizeof queue, "rx-%u", q);
        p = queue_path(dev, queue, "rps_flow_cnt");
        v = read_line(p);
        ck_assert_msg(v, "cannot read %s", p);
        return strtoul(v, NULL, 10);
}

static unsigned long read_rfs(void) {
        _cleanup_free_ char *v = read_line("/proc/sys/net/core/rps_sock_flow_entries");
        ck_assert_ptr_nonnull(v);
        return strtoul(v, NULL, 10);
}

/* Everything a rule may change on one interface. */
typedef struct QueueSnapshot {
        uint64_t rps[N_QUEUES];
        unsigned long flow[N_QUEUES];
        uint64_t xps[N_QUEUES];
} QueueSnapshot;

static void snapshot(const char *dev, QueueSnapshot *ret) {
        for (unsigned q = 0; q < N_QUEUES; q++) {
                ret->rps[q] = read_queue_mask(dev, false, q);
                ret->flow[q] = read_flow_cnt(dev, q);
                ret->xps[q] = read_queue_mask(dev, true, q);
        }
}

static bool snapshot_equal(const QueueSnapshot *a, const QueueSnapshot *b) {
        return memcmp(a, b, sizeof(QueueSnapshot)) == 0;
}

static void assert_snapshot(const char *dev, const QueueSnapshot *want) {
        QueueSnapshot now;

        snapshot(dev, &now);
        for (unsigned q = 0; q < N_QUEUES; q++) {
                ck_assert_msg(
                        now.rps[q] == want->rps[q], "%s rx-%u rps_cpus %" PRIx64 ", expected %" PRIx64, dev,
                        q, now.rps[q], want->rps[q]);
                ck_assert_msg(
                        now.flow[q] == want->flow[q], "%s rx-%u rps_flow_cnt %lu, expected %lu", dev, q,
                        now.flow[q], want->flow[q]);
                ck_assert_msg(
                        now.xps[q] == want->xps[q], "%s tx-%u xps_cpus %" PRIx64 ", expected %" PRIx64, dev,
                        q, now.xps[q], want->xps[q]);
        }
}

/* Waits until dev has the values of want (a failure bound, not a timing assertion). */
static void wait_snapshot(const char *dev, const QueueSnapshot *want) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        QueueSnapshot now;

        for (;;) {
                snapshot(dev, &now);
                if (snapshot_equal(&now, want))
                        return;
                if (harness_now_usec() >= deadline)
                        break;
                usleep(20 * 1000);
        }
        assert_snapshot(dev, want); /* fails, naming the first difference */
}

/* Rounded up to a power of two, as the kernel keeps rps_flow_cnt. */
static unsigned long pow2_ceil(unsigned long v) {
        unsigned long p = 1;

        if (v == 0)
                return 0;
        while (p < v)
                p <<= 1;
        return p;
}

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        write_file(path, text);
}

/* One entry of ListNetQueues() -> a(ssssuss). */
typedef struct QueueEntry {
        char device[32];
        char queue[16];
        char kind[8];
        char cpus[64];
        uint32_t flow_cnt;
        char rule[64];
        char state[16];
} QueueEntry;

static size_t list_queues(Harness *h, QueueEntry **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        QueueEntry *e = NULL;
        size_t n = 0;
        sd_bus *b = NULL;
        int r;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        ck_assert_int_ge(sd_bus_start(b), 0);
        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListNetQueues", &error,
                &reply, "");
        ck_assert_msg(r >= 0, "ListNetQueues failed: %s: %s", strna(error.name), strna(error.message));
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ssssuss)"), 0);
        for (;;) {
                const char *device, *queue, *kind, *cpus, *rule, *state;
                uint32_t flow;

                r = sd_bus_message_read(
                        reply, "(ssssuss)", &device, &queue, &kind, &cpus, &flow, &rule, &state);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        break;
                e = reallocarray(e, n + 1, sizeof(QueueEntry));
                ck_assert_ptr_nonnull(e);
                e[n] = (QueueEntry){.flow_cnt = flow};
                snprintf(e[n].device, sizeof e[n].device, "%s", device);
                snprintf(e[n].queue, sizeof e[n].queue, "%s", queue);
                snprintf(e[n].kind, sizeof e[n].kind, "%s", kind);
                snprintf(e[n].cpus, sizeof e[n].cpus, "%s", cpus);
                snprintf(e[n].rule, sizeof e[n].rule, "%s", rule);
                snprintf(e[n].state, sizeof e[n].state, "%s", state);
                n++;
        }
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(b);
        *ret = e;
        return n;
}

static const QueueEntry *find_queue(const QueueEntry *e, size_t n, const char *dev, const char *queue) {
        for (size_t i = 0; i < n; i++)
                if (streq(e[i].device, dev) && streq(e[i].queue, queue))
                        return &e[i];
        return NULL;
}

/* The cpu-list of a one-word mask, for comparing with ListNetQueues ("" for none). */
static void mask_to_list(uint64_t mask, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = '\0';
        for (unsigned c = 0; c < 64; c++)
                if (mask & (UINT64_C(1) << c))
                        n += (size_t)snprintf(buf + n, size - n, "%s%u", n ? "," : "", c);
}

/* rps: "1", xps: "0-1" (divided: 2 CPUs, 4 queues: queue q gets CPU q mod 2) and rfs: RFS,
 * then a reload without either gives every value back. */
START_TEST(test_net_place_and_restore) {
        Harness *h = harness_new();
        char a[16], b[16], glob[32];
        QueueSnapshot before_a, before_b, want;
        unsigned long rfs_before;
        _cleanup_free_ QueueEntry *entries = NULL;
        size_t n;

        veth_add("p", a, b);
        snapshot(a, &before_a);
        snapshot(b, &before_b);
        rfs_before = read_rfs();
        ck_assert_msg(
                rfs_before != RFS, "rps_sock_flow_entries is %d already: nothing would be tested", RFS);

        ifname(glob, sizeof glob, "p*");
        write_settings(h, "rfs: 4096\n");
        harness_write_policy(
                h, "10-net.yaml",
                "net:\n"
                "  - device: \"%s\"\n"
                "    name: veth\n"
                "    rps: \"1\"\n"
                "    xps: \"0-1\"\n",
                glob);
        harness_start_daemon(h);

        /* The first placement happens before READY=1. */
        for (unsigned q = 0; q < N_QUEUES; q++) {
                want.rps[q] = UINT64_C(1) << 1;
                want.flow[q] = pow2_ceil(RFS / N_QUEUES);
                want.xps[q] = UINT64_C(1) << (q % 2);
        }
        assert_snapshot(a, &want);
        assert_snapshot(b, &want);
        ck_assert_uint_eq(read_rfs(), pow2_ceil(RFS));

        /* ListNetQueues shows the same. */
        n = list_queues(h, &entries);
        for (unsigned q = 0; q < N_QUEUES; q++) {
                char rx[16], tx[16], list[64];
                const QueueEntry *e;

                snprintf(rx, sizeof rx, "rx-%u", q);
                snprintf(tx, sizeof tx, "tx-%u", q);
                e = find_queue(entries, n, a, rx);
                ck_assert_msg(e, "ListNetQueues lacks %s %s", a, rx);
                ck_assert_str_eq(e->kind, "rps");
                ck_assert_str_eq(e->cpus, "1");
                ck_assert_uint_eq(e->flow_cnt, want.flow[q]);
                ck_assert_str_eq(e->rule, "veth");
                ck_assert_str_eq(e->state, "applied");
                e = find_queue(entries, n, a, tx);
                ck_assert_msg(e, "ListNetQueues lacks %s %s", a, tx);
                ck_assert_str_eq(e->kind, "xps");
                mask_to_list(want.xps[q], list, sizeof list);
                ck_assert_str_eq(e->cpus, list);
                ck_assert_str_eq(e->state, "applied");
        }

        /* The rule and rfs: gone: every original back, at once (Reload replies when done). */
        harness_remove_policy(h, "10-net.yaml");
        write_settings(h, "");
        ck_assert_int_ge(harness_reload(h, NULL), 0);
        assert_snapshot(a, &before_a);
        assert_snapshot(b, &before_b);
        ck_assert_uint_eq(read_rfs(), rfs_before);

        free(entries);
        n = list_queues(h, &entries);
        for (size_t i = 0; i < n; i++)
                if (streq(entries[i].device, a))
                        ck_assert_str_eq(entries[i].state, "unmanaged");

        harness_stop_daemon(h);
        veth_del(a);
}
END_TEST

/* xps: spread divides the rps: CPUs; a veth made while the daemon runs is placed when it
 * appears, and one deleted and made again is placed again. */
START_TEST(test_net_new_device) {
        Harness *h = harness_new();
        char a[16], b[16], glob[32];
        QueueSnapshot want;
        ManagerProps p = {};

        ifname(glob, sizeof glob, "n*");
        harness_write_policy(
                h, "10-net.yaml",
                "net:\n"
                "  - device: \"%s\"\n"
                "    rps: \"0-1\"\n"
                "    xps: spread\n",
                glob);
        harness_start_daemon(h);

        veth_add("n", a, b);
        for (unsigned q = 0; q < N_QUEUES; q++) {
                want.rps[q] = 0x3;
                want.flow[q] = 0; /* no rfs: flow counts untouched */
                want.xps[q] = UINT64_C(1) << (q % 2);
        }
        wait_snapshot(a, &want);
        wait_snapshot(b, &want);

        /* Deleted and made again (another ifindex): placed again. */
        veth_del(a);
        veth_add("n", a, b);
        wait_snapshot(a, &want);
        wait_snapshot(b, &want);

        harness_get_props(h, &p);
        ck_assert_str_eq(p.state, "running");
        manager_props_done(&p);
        harness_assert_daemon_alive(h);
        harness_stop_daemon(h);
        veth_del(a);
}
END_TEST

/* How often needle occurs in the daemon's log. */
static unsigned log_count(Harness *h, const char *needle) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t size = 0;
        unsigned n = 0;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/affinityd.log", harness_dir(h)), 0);
        f = fopen(path, "re");
        ck_assert_msg(f, "open %s: %s", path, strerror(errno));
        ck_assert_int_ge(getdelim(&text, &size, '\0', f), 0);
        fclose(f);
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static void rename_link(const char *from, const char *to) {
        ck_assert_int_eq(harness_run_quiet(ARGS("ip", "link", "set", "dev", from, "name", to)), 0);
}

/* Waits until ListNetQueues shows dev's queue with state (and rule, when not NULL). */
static void wait_queue_state(
        Harness *h, const char *dev, const char *queue, const char *rule, const char *state) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        for (;;) {
                _cleanup_free_ QueueEntry *entries = NULL;
                size_t n = list_queues(h, &entries);
                const QueueEntry *e = find_queue(entries, n, dev, queue);

                if (e && streq(e->state, state) && (!rule || streq(e->rule, rule)))
                        return;
                ck_assert_msg(
                        harness_now_usec() < deadline,
                        "%s %s is %s (rule \"%s\") in ListNetQueues, expected %s", dev, queue,
                        e ? e->state : "missing", e ? e->rule : "", state);
                usleep(20 * 1000);
        }
}

/* Renaming an interface keeps its originals. Renamed to a name no rule covers, the veth
 * gets its originals back; renamed back, the rule applies again; renamed to another name the
 * rule covers, its original stays the true one: removing the rule gives that back. */
START_TEST(test_net_rename) {
        Harness *h = harness_new();
        char a[16], b[16], c[16], d[16], glob[32];
        QueueSnapshot before_a, want;

        veth_add("r", a, b);
        ifname(c, sizeof c, "x0"); /* not covered by the rule */
        ifname(d, sizeof d, "rz"); /* covered */
        snapshot(a, &before_a);
        ifname(glob, sizeof glob, "r*");
        harness_write_policy(
                h, "10-net.yaml",
                "net:\n"
                "  - device: \"%s\"\n"
                "    name: veth\n"
                "    rps: \"1\"\n"
                "    xps: \"0-1\"\n",
                glob);
        harness_start_daemon(h);
        for (unsigned q = 0; q < N_QUEUES; q++) {
                want.rps[q] = UINT64_C(1) << 1;
                want.flow[q] = before_a.flow[q];
                want.xps[q] = UINT64_C(1) << (q % 2);
        }
        ck_assert_msg(!snapshot_equal(&want, &before_a), "the rule changes nothing: nothing to test");
        assert_snapshot(a, &want);

        /* Out of the rule's reach: its originals back, on the renamed device. */
        rename_link(a, c);
        wait_snapshot(c, &before_a);
        wait_queue_state(h, c, "rx-0", "", "unmanaged");

        /* Back under the rule. */
        rename_link(c, a);
        wait_snapshot(a, &want);
        wait_queue_state(h, a, "rx-0", "veth", "applied");

        /* Renamed within the rule: still placed, the original carried along. */
        rename_link(a, d);
        wait_queue_state(h, d, "rx-0", "veth", "applied");
        wait_queue_state(h, d, "tx-3", "veth", "applied");
        assert_snapshot(d, &want);

        /* The rule gone: the true originals, not the rule's values. */
        harness_remove_policy(h, "10-net.yaml");
        ck_assert_int_ge(harness_reload(h, NULL), 0);
        assert_snapshot(d, &before_a);

        harness_stop_daemon(h);
        veth_del(d);
}
END_TEST

/* An rx queue's row says what its rps_flow_cnt does too: drifted when that one drifted. */
START_TEST(test_net_flow_state) {
        Harness *h = harness_new();
        char a[16], b[16], glob[32];
        _cleanup_free_ char *path = NULL;
        QueueSnapshot want;

        veth_add("f", a, b);
        ifname(glob, sizeof glob, "f*");
        write_settings(h, "rfs: 4096\ndrift-interval: 50ms\n");
        harness_write_policy(
                h, "10-net.yaml",
                "net:\n"
                "  - device: \"%s\"\n"
                "    name: veth\n"
                "    rps: \"1\"\n",
                glob);
        harness_start_daemon(h);
        snapshot(a, &want);
        ck_assert_uint_eq(want.flow[0], pow2_ceil(RFS / N_QUEUES));
        wait_queue_state(h, a, "rx-0", "veth", "applied");

        /* rps_cpus untouched, rps_flow_cnt changed by hand. */
        path = queue_path(a, "rx-0", "rps_flow_cnt");
        write_file(path, "2"); /* a power of two every kernel accepts (some refuse 1) */
        wait_queue_state(h, a, "rx-0", "veth", "drifted");
        ck_assert_uint_eq(read_queue_mask(a, false, 0), UINT64_C(1) << 1);
        wait_queue_state(h, a, "rx-1", "veth", "applied");

        harness_stop_daemon(h);
        veth_del(a);
}
END_TEST

/* Link changes that can't change what is placed (MTU, alias) are counted but cause no pass; a
 * link coming up does (drivers allocate IRQs then). */
START_TEST(test_net_link_events_filtered) {
        Harness *h = harness_new();
        char a[16], b[16], glob[32];
        QueueSnapshot want;
        uint64_t events;
        unsigned passes;
        ManagerProps p = {};

        ifname(glob, sizeof glob, "e*");
        harness_write_policy(
                h, "10-net.yaml",
                "net:\n"
                "  - device: \"%s\"\n"
                "    rps: \"1\"\n",
                glob);
        harness_start_daemon(h);
        veth_add("e", a, b);
        snapshot(a, &want);
        for (unsigned q = 0; q < N_QUEUES; q++)
                want.rps[q] = UINT64_C(1) << 1;
        wait_snapshot(a, &want);
        wait_snapshot(b, &want);
        /* Let the burst of the creation settle: its pass is done when the log says so. */
        harness_wait_log(h, "Device pass ");
        usleep(300 * 1000);
        passes = log_count(h, "Device pass ");
        events = 0;
        {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *bus = NULL;

                ck_assert_int_ge(sd_bus_new(&bus), 0);
                ck_assert_int_ge(sd_bus_set_address(bus, harness_bus_address(h)), 0);
                ck_assert_int_ge(sd_bus_set_bus_client(bus, 1), 0);
                ck_assert_int_ge(sd_bus_start(bus), 0);
                ck_assert_int_ge(
                        sd_bus_get_property_trivial(
                                bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE,
                                "DeviceEvents", &error, 't', &events),
                        0);
                sd_bus_error_free(&error);
                sd_bus_flush_close_unref(bus);
        }

        ck_assert_int_eq(harness_run_quiet(ARGS("ip", "link", "set", "dev", a, "mtu", "1400")), 0);
        ck_assert_int_eq(
                harness_run_quiet(ARGS("ip", "link", "set", "dev", a, "alias", "affinityd-test")), 0);
        harness_wait_log(h, "nothing relevant changed, ignored");
        /* Well past the debounce of a pass that should not come. */
        usleep(500 * 1000);
        ck_assert_uint_eq(log_count(h, "Device pass "), passes);

        /* Up: relevant. */
        ck_assert_int_eq(harness_run_quiet(ARGS("ip", "link", "set", "dev", a, "up")), 0);
        {
                uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
                while (log_count(h, "Device pass ") == passes) {
                        ck_assert_msg(harness_now_usec() < deadline, "no pass after link %s came up", a);
                        usleep(20 * 1000);
                }
        }
        harness_get_props(h, &p);
        ck_assert_str_eq(p.state, "running");
        manager_props_done(&p);
        ck_assert(events > 0);
        harness_stop_daemon(h);
        veth_del(a);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-net");
        unsigned long rfs;
        char text[32];
        int r;

        runner = getpid();
        if (access("/sys/class/net/lo/queues/rx-0/rps_cpus", F_OK) < 0) {
                printf("no RPS in this kernel (CONFIG_RPS), skipping\n");
                return 77;
        }
        {
                _cleanup_free_ char *v = read_line("/proc/sys/net/core/rps_sock_flow_entries");
                if (!v) {
                        printf("no net.core.rps_sock_flow_entries in this kernel (CONFIG_RFS), skipping\n");
                        return 77;
                }
                rfs = strtoul(v, NULL, 10);
        }

        harness_add_test(s, test_net_place_and_restore);
        harness_add_test(s, test_net_new_device);
        harness_add_test(s, test_net_rename);
        harness_add_test(s, test_net_flow_state);
        harness_add_test(s, test_net_link_events_filtered);
        r = harness_main(s);

        /* Whatever the tests did: no veth of ours left, the global RFS table as it was. */
        veth_cleanup();
        snprintf(text, sizeof text, "%lu", rfs);
        {
                int fd = open("/proc/sys/net/core/rps_sock_flow_entries", O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void)!write(fd, text, strlen(text));
                        close(fd);
                }
        }
        return r;
}
