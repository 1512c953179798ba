/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * NET_RX softirq skew, on the real daemon with effect-interval: 1s: a UDP flood from a sender
 * pinned to one CPU, inside a network namespace of the test's own (unshare(CLONE_NEWNET): its
 * loopback, gone with the sender), puts the receive softirq work on that CPU (the kernel queues
 * a packet sent to a local device on the sending CPU's backlog and raises NET_RX there). The
 * daemon must find it and say so once: the journal line naming the CPU and an rps: rule, the
 * IrqSkewEpisodes property (an active net-rx episode on that CPU, one episode) and `affinityctl metrics`
 * (affinityd_irq_skew{...,kind="net-rx",cpu="N"} 1), and `affinityctl verify` over a window of its
 * own. Without traffic nothing is found (unless the
 * machine's own NET_RX is skewed over the thresholds meanwhile: measured, and then said instead
 * of asserted), and with effect-interval: off the same flood is not looked at.
 *
 * A multi-queue NIC's IRQ skew can't be made on this machine (eth0 is a virtio NIC with one
 * queue pair, and a veth has no IRQs): lib/irq-skew.h's unit test covers it on real dumps.
 */

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));

        harness_write_text(path, text);
}

/* The highest CPU of the online cpu-list: the sender's. */
static unsigned sender_cpu(void) {
        const char *l = harness_online_cpus(), *p = l + strlen(l);

        while (p > l && p[-1] >= '0' && p[-1] <= '9')
                p--;
        return (unsigned)strtoul(p, NULL, 10);
}

/* In a child: a network namespace of its own, lo up, pinned to cpu, UDP to itself until killed. */
static pid_t start_flood(unsigned cpu) {
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct sockaddr_in a = {
                        .sin_family = AF_INET,
                        .sin_port = htons(9),
                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                struct ifreq ifr = {.ifr_name = "lo"};
                char payload[64] = {};
                cpu_set_t set;
                int s, rx;

                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                if (unshare(CLONE_NEWNET) < 0 || sched_setaffinity(0, sizeof(set), &set) < 0)
                        _exit(2);
                s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                        _exit(3);
                ifr.ifr_flags |= IFF_UP;
                if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                        _exit(4);
                rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (rx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) < 0)
                        _exit(5);
                for (;;) {
                        (void)sendto(s, payload, sizeof(payload), 0, (struct sockaddr *)&a, sizeof(a));
                        while (recv(rx, payload, sizeof(payload), 0) > 0)
                                ;
                }
        }
        return pid;
}

static void stop_flood(pid_t pid) {
        int status;

        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFSIGNALED(status), "the flood's child failed (exit %d)", WEXITSTATUS(status));
}

typedef struct SkewEntry {
        char device[256];
        char kind[16];
        uint32_t cpu;
        bool active;
        uint64_t episodes;
} SkewEntry;

/* The Manager's IrqSkewEpisodes entry of kind, read on a connection of its own. Returns whether found. */
static bool get_skew(Harness *h, const char *kind, SkewEntry *ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *b = NULL;
        bool found = false;
        int r;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        ck_assert_int_ge(sd_bus_start(b), 0);
        r = sd_bus_get_property(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "IrqSkewEpisodes",
                &error, &reply, "a(ssubt)");
        ck_assert_msg(
                r >= 0, "Get(IrqSkewEpisodes) failed: %s: %s", strna(error.name), strna(error.message));
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ssubt)"), 0);
        for (;;) {
                const char *device, *k;
                uint32_t cpu;
                int active;
                uint64_t episodes;

                r = sd_bus_message_read(reply, "(ssubt)", &device, &k, &cpu, &active, &episodes);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        break;
                if (!streq(k, kind) || found)
                        continue;
                found = true;
                snprintf(ret->device, sizeof(ret->device), "%s", device);
                snprintf(ret->kind, sizeof(ret->kind), "%s", k);
                ret->cpu = cpu;
                ret->active = active;
                ret->episodes = episodes;
        }
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(b);
        return found;
}

/* NET_RX per CPU of /proc/softirqs: the total and the largest, for the negative's tolerance. */
static void read_net_rx(uint64_t *counts, size_t n, size_t *ret_n) {
        FILE *f = fopen("/proc/softirqs", "re");
        char line[65536];

        ck_assert_ptr_nonnull(f);
        *ret_n = 0;
        while (fgets(line, sizeof(line), f)) {
                char *p = strstr(line, "NET_RX:"), *end;

                if (!p)
                        continue;
                p += strlen("NET_RX:");
                for (;;) {
                        unsigned long long v = strtoull(p, &end, 10);

                        if (end == p || *ret_n >= n)
                                break;
                        counts[(*ret_n)++] = v;
                        p = end;
                }
        }
        fclose(f);
}

START_TEST(test_net_rx_skew) {
        Harness *h = harness_new();
        unsigned cpu = sender_cpu();
        uint64_t deadline;
        _cleanup_free_ char *needle = NULL, *out = NULL, *sample = NULL;
        uint64_t before[4096], after[4096];
        size_t n_before, n_after;
        SkewEntry e = {};
        pid_t flood;

        write_settings(h, "effect-interval: 1s\n");
        harness_start_daemon(h);
        flood = start_flood(cpu);
        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        while (!get_skew(h, "net-rx", &e) || !e.active) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "no NET_RX skew found with the flood on CPU %u", cpu);
                usleep(200 * 1000);
        }
        ck_assert_uint_eq(e.cpu, cpu);
        ck_assert_uint_eq(e.episodes, 1);
        needle = harness_asprintf("NET_RX softirq skew: CPU %u ran ", cpu);
        harness_wait_log(h, needle);
        ck_assert(harness_log_contains(h, "to spread the protocol processing with RPS: net: [{ device: "));

        /* Three more windows of the same flood: still the one episode. */
        read_net_rx(before, ELEMENTSOF(before), &n_before);
        usleep(3200 * 1000);
        read_net_rx(after, ELEMENTSOF(after), &n_after);
        for (size_t i = 0; i < n_after && i < n_before; i++)
                fprintf(stderr, "NET_RX column %zu: %" PRIu64 "/s\n", i, (after[i] - before[i]) * 10 / 32);
        fprintf(stderr, "IrqSkewEpisodes: device %s, CPU %u, episodes %" PRIu64 "\n", e.device, e.cpu,
                e.episodes);
        ck_assert(get_skew(h, "net-rx", &e));
        ck_assert(e.active);
        ck_assert_uint_eq(e.episodes, 1);

        ck_assert_int_eq(harness_run_ctl(h, &out, NULL, "metrics", NULL), 0);
        sample = harness_asprintf("kind=\"net-rx\",cpu=\"%u\"} 1\n", cpu);
        ck_assert_msg(strstr(out, sample), "affinityctl metrics lacks %s:\n%s", sample, out);
        ck_assert_msg(
                strstr(out, "affinityd_irq_skew_episodes_total{device=\""), "no episodes counter:\n%s", out);

        /* affinityctl verify finds the same skew over its own window, with the rule to fix it. */
        out = mfree(out);
        {
                _cleanup_free_ char *err = NULL;
                int st = harness_run_ctl(h, &out, &err, "verify", "--for=2", "--json", NULL);

                ck_assert_msg(st == 0, "affinityctl verify exited %d: %s%s", st, strna(err), strna(out));
        }
        sample = mfree(sample);
        sample = harness_asprintf("{\"kind\":\"net-rx\",\"device\":\"%s\",\"cpu\":%u,", e.device, cpu);
        ck_assert_msg(strstr(out, sample), "affinityctl verify lacks %s:\n%s", sample, out);
        ck_assert_msg(strstr(out, "\"suggestion\":\"net: [{ device: "), "no rps: rule in:\n%s", out);
        stop_flood(flood);
        harness_free(h);
}
END_TEST

START_TEST(test_no_traffic) {
        Harness *h = harness_new();
        uint64_t before[4096], after[4096], total = 0, top = 0;
        size_t n_before, n_after;
        SkewEntry e = {};

        write_settings(h, "effect-interval: 1s\n");
        harness_start_daemon(h);
        read_net_rx(before, ELEMENTSOF(before), &n_before);
        usleep(4200 * 1000); /* four windows */
        read_net_rx(after, ELEMENTSOF(after), &n_after);
        ck_assert_uint_eq(n_before, n_after);
        for (size_t i = 0; i < n_after; i++) {
                uint64_t d = after[i] - before[i];

                total += d;
                top = MAX(top, d);
        }
        if (get_skew(h, "net-rx", &e)) {
                /* Only true when the machine's own traffic was skewed meanwhile (other work here). */
                ck_assert_msg(
                        total >= 1000 && top * 10 >= total * 7,
                        "NET_RX skew reported without traffic: %" PRIu64 " NET_RX in 4 s, %" PRIu64
                        " on one CPU",
                        total, top);
                fprintf(stderr,
                        "the machine's own NET_RX was skewed (%" PRIu64 " of %" PRIu64 "): reported\n", top,
                        total);
        }
        ck_assert(!get_skew(h, "irq", &e)); /* no multi-queue NIC here, nothing to find */
        harness_free(h);
}
END_TEST

START_TEST(test_off) {
        Harness *h = harness_new();
        SkewEntry e = {};
        pid_t flood;

        write_settings(h, "effect-interval: off\n");
        harness_start_daemon(h);
        flood = start_flood(sender_cpu());
        usleep(3200 * 1000);
        stop_flood(flood);
        ck_assert(!get_skew(h, "net-rx", &e));
        ck_assert(!harness_log_contains(h, "softirq skew"));
        harness_free(h);
}
END_TEST

/* Whether a child can have a network namespace of its own (root, not denied by a sandbox). */
static bool can_unshare_net(void) {
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return false;
        if (pid == 0)
                _exit(unshare(CLONE_NEWNET) < 0 ? 1 : 0);
        return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void) {
        Suite *s = suite_create("integ-skew");

        if (access("/proc/softirqs", R_OK) < 0) {
                printf("no /proc/softirqs, skipping\n");
                return 77;
        }
        if (geteuid() == 0 && !can_unshare_net()) {
                printf("unshare(CLONE_NEWNET) refused here (no network namespace for the flood), "
                       "skipping\n");
                return 77;
        }

        harness_add_test(s, test_net_rx_skew);
        harness_add_test(s, test_no_traffic);
        harness_add_test(s, test_off);
        return harness_main(s);
}
