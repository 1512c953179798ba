/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of IRQ and NET_RX softirq skew detection (lib/irq-skew.h): sequences made from the real
 * multi-queue dumps in $AFFINITYD_CORPUS/interrupts/ (one CPU's counts scaled to make skew,
 * even counts for the negative), generated readings of 1,100 CPUs and hundreds of devices with
 * CPUs coming and going and reallocated IRQs, an idle NIC, episodes, and /proc/softirqs.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "irq-skew.h"

#define SEC 1000000ULL

static InterruptTable *corpus_table(const char *name) {
        _cleanup_free_ char *path = NULL, *err = NULL;
        InterruptTable *t = NULL;
        const char *c = getenv("AFFINITYD_CORPUS");

        ck_assert_msg(c, "AFFINITYD_CORPUS is not set (run through meson test)");
        ck_assert_int_ge(asprintf(&path, "%s/interrupts/%s", c, name), 0);
        ck_assert_int_eq(interrupts_read_full(path, INTERRUPTS_SKIP_BAD_LINES, &t, &err), 0);
        return t;
}

static int mkdir_p(const char *path) {
        _cleanup_free_ char *p = strdup(path);

        for (char *s = p + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        (void)mkdir(p, 0755);
                        *s = '/';
                }
        return mkdir(p, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* A fixture root with ROOT/sys/class/net/DEV/queues/rx-0..n-1 for each (dev, n). */
static char *fixture_root(const char *const *devs, const unsigned *n_rx, size_t n) {
        char tmpl[] = "/tmp/test-irq-skew-XXXXXX";
        char *root = strdup(mkdtemp(tmpl));

        for (size_t i = 0; i < n; i++)
                for (unsigned q = 0; q < n_rx[i]; q++) {
                        _cleanup_free_ char *p = NULL;

                        ck_assert_int_ge(
                                asprintf(&p, "%s/sys/class/net/%s/queues/rx-%u", root, devs[i], q), 0);
                        ck_assert_int_eq(mkdir_p(p), 0);
                }
        return root;
}

static void fixture_remove(char *root) {
        _cleanup_free_ char *cmd = NULL;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", root), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(root);
}

/* Column of OS CPU cpu in t. */
static size_t column_of(const InterruptTable *t, unsigned cpu) {
        for (size_t i = 0; i < t->n_cpus; i++)
                if (t->cpus[i] == cpu)
                        return i;
        ck_abort_msg("CPU %u is not a column", cpu);
        return 0;
}

/* Adds hot to column hot_col and cold to every other column of every line whose first action
 * name begins with prefix. Returns how many lines. */
static size_t add_counts(
        InterruptTable *t, const char *prefix, size_t hot_col, uint64_t hot, uint64_t cold) {
        size_t n = 0;

        for (size_t i = 0; i < t->n_lines; i++) {
                InterruptLine *l = &t->lines[i];

                if (!l->numeric || !l->names || !l->names[0] ||
                    strncmp(l->names[0], prefix, strlen(prefix)) != 0)
                        continue;
                for (size_t c = 0; c < l->n_counts; c++)
                        l->counts[c] += c == hot_col ? hot : cold;
                n++;
        }
        return n;
}

/* irqcli: eth0-TxRx-0..31 all on the second CPU column for a window; eth1 even. */
START_TEST(test_irqcli_skew) {
        _cleanup_(interrupt_table_freep) InterruptTable *prev =
                corpus_table("irqcli-interrupts-2col-ixgbe-32q.txt");
        _cleanup_(interrupt_table_freep) InterruptTable *cur =
                corpus_table("irqcli-interrupts-2col-ixgbe-32q.txt");
        _cleanup_(irq_skew_devices_freep) IrqSkewDevices *devs = NULL;
        _cleanup_(irq_skew_findings_freep) IrqSkewFindings *f = NULL;
        const char *names[] = {"eth0", "eth1"};
        const unsigned n_rx[] = {32, 32};
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        char *root = fixture_root(names, n_rx, 2);
        unsigned hot_cpu = cur->cpus[1];

        ck_assert_uint_eq(add_counts(cur, "eth0-TxRx-", 1, 400, 0), 32);
        ck_assert_uint_eq(add_counts(cur, "eth1-TxRx-", 1, 200, 200), 32);
        ck_assert_int_eq(irq_skew_devices_load(root, prev, &devs), 0);
        ck_assert_uint_eq(devs->n_devices, 2);
        ck_assert_str_eq(devs->devices[0].name, "eth0");
        ck_assert_uint_eq(devs->devices[0].n_irqs, 33); /* TxRx-0..31 and the misc vector "eth0" */
        ck_assert_uint_eq(devs->devices[0].n_queues, 32);

        ck_assert_int_eq(irq_skew_detect_irqs(prev, cur, 2 * SEC, devs, &th, &f), 0);
        ck_assert_uint_eq(f->n_findings, 1);
        ck_assert_str_eq(f->findings[0].device, "eth0");
        ck_assert_int_eq(f->findings[0].kind, IRQ_SKEW_IRQ);
        ck_assert_uint_eq(f->findings[0].cpu, hot_cpu);
        ck_assert_double_eq(f->findings[0].share, 1.0);
        ck_assert_uint_eq(f->findings[0].count, 32 * 400);
        ck_assert_double_eq_tol(f->findings[0].rate, 32 * 400 / 2.0, 1e-6);
        ck_assert_uint_eq(f->findings[0].n_irqs, 32); /* the misc vector did not fire */
        ck_assert_str_eq(
                f->findings[0].irqs_text,
                "132,133,134,135,136,137,138,139,140,141,142,143,144,145,146,147,"
                "148,149,150,151,152,153,154,155,156,157,158,159,160,161,162,163");
        ck_assert_ptr_nonnull(strstr(f->findings[0].suggestion, "match: { device: \"eth0\" }"));
        ck_assert_ptr_nonnull(strstr(f->findings[0].suggestion, "spread: true"));
        f = irq_skew_findings_free(f);

        /* The same traffic over a 20 s window is 640/s: below the rate, no finding. */
        ck_assert_int_eq(irq_skew_detect_irqs(prev, cur, 20 * SEC, devs, &th, &f), 0);
        ck_assert_uint_eq(f->n_findings, 0);
        fixture_remove(root);
}
END_TEST

/* rbench: the 40 mlx5_comp vectors of 0000:3b:00.0 over 40 CPUs; one CPU scaled up. */
START_TEST(test_rbench_share_threshold) {
        _cleanup_(interrupt_table_freep) InterruptTable *prev =
                corpus_table("rbench-interrupts-40cpu-xeon-ixgbe.txt");
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        IrqSkewDevice dev = {.name = (char *)"0000:3b:00.0", .n_queues = 40};
        IrqSkewDevices devs = {.devices = &dev, .n_devices = 1};
        unsigned irqs[64];
        unsigned hot = prev->cpus[prev->n_cpus - 3];

        for (size_t i = 0; i < prev->n_lines; i++)
                if (prev->lines[i].numeric && prev->lines[i].names && prev->lines[i].names[0] &&
                    strncmp(prev->lines[i].names[0], "mlx5_comp", 9) == 0)
                        irqs[dev.n_irqs++] = prev->lines[i].irq;
        ck_assert_uint_eq(dev.n_irqs, 40);
        dev.irqs = irqs;

        /* 40 × 1000 on the hot CPU, 40 × 39 × cold elsewhere: cold 5 → 83.7 %, cold 10 → 71.9 %. */
        for (uint64_t cold = 5; cold <= 10; cold += 5) {
                _cleanup_(interrupt_table_freep) InterruptTable *cur =
                        corpus_table("rbench-interrupts-40cpu-xeon-ixgbe.txt");
                _cleanup_(irq_skew_findings_freep) IrqSkewFindings *f = NULL;

                ck_assert_uint_eq(add_counts(cur, "mlx5_comp", column_of(cur, hot), 1000, cold), 40);
                ck_assert_int_eq(irq_skew_detect_irqs(prev, cur, SEC, &devs, &th, &f), 0);
                if (cold == 5) {
                        ck_assert_uint_eq(f->n_findings, 1);
                        ck_assert_uint_eq(f->findings[0].cpu, hot);
                        ck_assert_double_eq_tol(f->findings[0].share, 40000.0 / (40000 + 40 * 39 * 5), 1e-9);
                        ck_assert_uint_eq(f->findings[0].n_irqs, 40);
                } else
                        ck_assert_uint_eq(f->n_findings, 0);
        }
}
END_TEST

/* Even counts (the 8 p7p1 queues, all CPUs alike) and an idle NIC (a few interrupts a second on
 * one CPU: share 100 %, but below the rate) give nothing. */
START_TEST(test_even_and_idle) {
        _cleanup_(interrupt_table_freep) InterruptTable *prev =
                corpus_table("rbench-interrupts-40cpu-xeon-ixgbe.txt");
        _cleanup_(interrupt_table_freep) InterruptTable *even =
                corpus_table("rbench-interrupts-40cpu-xeon-ixgbe.txt");
        _cleanup_(interrupt_table_freep) InterruptTable *idle =
                corpus_table("rbench-interrupts-40cpu-xeon-ixgbe.txt");
        _cleanup_(irq_skew_findings_freep) IrqSkewFindings *f = NULL;
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        IrqSkewDevice dev = {.name = (char *)"p7p1", .n_queues = 8};
        IrqSkewDevices devs = {.devices = &dev, .n_devices = 1};
        unsigned irqs[8];

        for (size_t i = 0; i < prev->n_lines; i++)
                if (prev->lines[i].numeric && prev->lines[i].names && prev->lines[i].names[0] &&
                    strncmp(prev->lines[i].names[0], "p7p1-TxRx-", 10) == 0)
                        irqs[dev.n_irqs++] = prev->lines[i].irq;
        ck_assert_uint_eq(dev.n_irqs, 8);
        dev.irqs = irqs;

        ck_assert_uint_eq(add_counts(even, "p7p1-TxRx-", 0, 100, 100), 8);
        ck_assert_int_eq(irq_skew_detect_irqs(prev, even, SEC, &devs, &th, &f), 0);
        ck_assert_uint_eq(f->n_findings, 0);
        f = irq_skew_findings_free(f);

        ck_assert_uint_eq(add_counts(idle, "p7p1-TxRx-", 0, 3, 0), 8);
        ck_assert_int_eq(irq_skew_detect_irqs(prev, idle, SEC, &devs, &th, &f), 0);
        ck_assert_uint_eq(f->n_findings, 0);
        f = irq_skew_findings_free(f);

        /* The idle one with a threshold of 0 shows it is the rate that held it back. */
        th.min_rate = 0;
        th.min_count = 1;
        ck_assert_int_eq(irq_skew_detect_irqs(prev, idle, SEC, &devs, &th, &f), 0);
        ck_assert_uint_eq(f->n_findings, 1);
        ck_assert_uint_eq(f->findings[0].cpu, prev->cpus[0]);
}
END_TEST

#define GEN_CPUS    1100
#define GEN_DEVICES 300
#define GEN_QUEUES  16

/*
 * A generated /proc/interrupts: CPUs 0..GEN_CPUS-1 but leave_out, GEN_DEVICES devices of
 * GEN_QUEUES IRQs (IRQ 1000 + d * GEN_QUEUES + q, "devD-TxRx-Q"), count(d, q, cpu) each.
 */
typedef uint64_t (*CountFn)(unsigned d, unsigned q, unsigned cpu, void *userdata);

static InterruptTable *generate(unsigned leave_out, unsigned extra_cpu, CountFn count, void *userdata) {
        _cleanup_free_ char *text = NULL, *err = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        InterruptTable *t = NULL;

        ck_assert_ptr_nonnull(f);
        for (unsigned c = 0; c < GEN_CPUS; c++)
                if (c != leave_out)
                        fprintf(f, " CPU%u", c);
        if (extra_cpu)
                fprintf(f, " CPU%u", extra_cpu);
        fputc('\n', f);
        for (unsigned d = 0; d < GEN_DEVICES; d++)
                for (unsigned q = 0; q < GEN_QUEUES; q++) {
                        fprintf(f, "%u:", 1000 + d * GEN_QUEUES + q);
                        for (unsigned c = 0; c < GEN_CPUS; c++)
                                if (c != leave_out)
                                        fprintf(f, " %" PRIu64, count(d, q, c, userdata));
                        if (extra_cpu)
                                fprintf(f, " %" PRIu64, count(d, q, extra_cpu, userdata));
                        fprintf(f, " PCI-MSIX-0000:%02x:00.0 %u-edge dev%u-TxRx-%u\n", d % 256, q, d, q);
                }
        fprintf(f, "LOC: 1 2 3\n");
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(interrupts_parse(text, &t, &err), 0);
        return t;
}

static uint64_t gen_base(unsigned d, unsigned q, unsigned cpu, void *userdata) {
        return 1000000 + d * 7 + q * 3 + cpu;
}

/* Window 1: device 7 all on CPU 513; device 9's only busy IRQ was reallocated (counts went
 * down); device 11's traffic is all on CPU 5, which went offline (no data for it) while CPU
 * 1500 came online with a count that must not count as a delta. Others: 1 per CPU per IRQ. */
static uint64_t gen_next(unsigned d, unsigned q, unsigned cpu, void *userdata) {
        uint64_t v = gen_base(d, q, cpu, userdata);

        if (cpu == 1500)
                return 99999999;
        if (d == 7 && cpu == 513)
                return v + 5000;
        if (d == 9 && q == 0)
                return cpu == 100 ? 5 : v + (cpu == 100 ? 50000 : 0);
        if (d == 11 && cpu == 5)
                return v + 50000;
        return v + 1;
}

START_TEST(test_generated_large) {
        _cleanup_(interrupt_table_freep) InterruptTable *prev = generate(UINT32_MAX, 0, gen_base, NULL);
        _cleanup_(interrupt_table_freep) InterruptTable *cur = generate(5, 1500, gen_next, NULL);
        _cleanup_(irq_skew_findings_freep) IrqSkewFindings *f = NULL;
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        IrqSkewDevice *dev = calloc(GEN_DEVICES, sizeof(IrqSkewDevice));
        IrqSkewDevices devs = {.devices = dev, .n_devices = GEN_DEVICES};
        unsigned *irqs = calloc(GEN_DEVICES * GEN_QUEUES, sizeof(unsigned));
        char names[GEN_DEVICES][16];

        ck_assert_uint_eq(prev->n_cpus, GEN_CPUS);
        ck_assert_uint_eq(cur->n_cpus, GEN_CPUS);
        for (unsigned d = 0; d < GEN_DEVICES; d++) {
                snprintf(names[d], sizeof(names[d]), "dev%u", d);
                dev[d] = (IrqSkewDevice){
                        .name = names[d],
                        .irqs = irqs + d * GEN_QUEUES,
                        .n_irqs = GEN_QUEUES,
                        .n_queues = GEN_QUEUES};
                for (unsigned q = 0; q < GEN_QUEUES; q++)
                        irqs[d * GEN_QUEUES + q] = 1000 + d * GEN_QUEUES + q;
        }

        ck_assert_int_eq(irq_skew_detect_irqs(prev, cur, SEC, &devs, &th, &f), 0);
        ck_assert_uint_eq(f->n_findings, 1);
        ck_assert_str_eq(f->findings[0].device, "dev7");
        ck_assert_uint_eq(f->findings[0].cpu, 513);
        ck_assert_uint_eq(f->findings[0].count, GEN_QUEUES * (5000 + (GEN_CPUS - 2)));
        ck_assert_uint_eq(f->findings[0].n_irqs, GEN_QUEUES);
        free(dev);
        free(irqs);
}
END_TEST

/* Episodes: reported once at the start, ended after end_after clean windows. */
START_TEST(test_episodes) {
        IrqSkewEpisode e = {};
        const bool seq[] = {false, true, true,  false, true,  false, false,
                            true,  true, false, false, false, true};
        const IrqSkewTransition want[] = {IRQ_SKEW_STEADY, IRQ_SKEW_BEGIN,  IRQ_SKEW_STEADY, IRQ_SKEW_STEADY,
                                          IRQ_SKEW_STEADY, IRQ_SKEW_STEADY, IRQ_SKEW_STEADY, IRQ_SKEW_STEADY,
                                          IRQ_SKEW_STEADY, IRQ_SKEW_STEADY, IRQ_SKEW_STEADY, IRQ_SKEW_END,
                                          IRQ_SKEW_BEGIN};
        size_t begins = 0;

        for (size_t i = 0; i < ELEMENTSOF(seq); i++) {
                IrqSkewTransition t = irq_skew_episode_step(&e, seq[i], 3, 3);

                ck_assert_msg(t == want[i], "window %zu: %d, expected %d", i, t, want[i]);
                begins += t == IRQ_SKEW_BEGIN;
        }
        ck_assert_uint_eq(begins, 2);
        ck_assert_uint_eq(e.n_episodes, 2);
        ck_assert(e.active);
        ck_assert_uint_eq(e.cpu, 3);
}
END_TEST

/* Episodes driven by detection over a sequence of readings of the irqcli NIC. */
START_TEST(test_episode_sequence) {
        _cleanup_(interrupt_table_freep) InterruptTable *prev =
                corpus_table("irqcli-interrupts-2col-ixgbe-32q.txt");
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        IrqSkewDevice dev = {.name = (char *)"eth0", .n_queues = 32};
        IrqSkewDevices devs = {.devices = &dev, .n_devices = 1};
        const bool skewed[] = {true, true, true, false, true, false, false, false, false, true};
        IrqSkewEpisode e = {};
        unsigned irqs[32];
        size_t begins = 0;

        for (unsigned i = 0; i < 32; i++)
                irqs[i] = 132 + i;
        dev.irqs = irqs;
        dev.n_irqs = 32;
        for (size_t w = 0; w < ELEMENTSOF(skewed); w++) {
                InterruptTable *cur = corpus_table("irqcli-interrupts-2col-ixgbe-32q.txt");
                _cleanup_(irq_skew_findings_freep) IrqSkewFindings *f = NULL;

                /* Counters keep growing from the previous window. */
                for (size_t i = 0; i < cur->n_lines; i++)
                        for (size_t c = 0; c < cur->lines[i].n_counts && c < prev->lines[i].n_counts; c++)
                                cur->lines[i].counts[c] = prev->lines[i].counts[c];
                add_counts(cur, "eth0-TxRx-", 0, skewed[w] ? 900 : 450, skewed[w] ? 10 : 450);
                ck_assert_int_eq(irq_skew_detect_irqs(prev, cur, SEC, &devs, &th, &f), 0);
                ck_assert_uint_eq(f->n_findings, skewed[w]);
                begins += irq_skew_episode_step(
                                  &e, f->n_findings > 0, f->n_findings ? f->findings[0].cpu : 0,
                                  th.end_after) == IRQ_SKEW_BEGIN;
                interrupt_table_free(prev);
                prev = cur;
        }
        ck_assert_uint_eq(begins, 2);
}
END_TEST

static const char softirqs_fmt[] = "                    CPU0       CPU1       CPU2       CPU3\n"
                                   "          HI:          1          0          0          0\n"
                                   "       TIMER:     %7u     %7u     %7u     %7u\n"
                                   "      NET_TX:          5          1          0          2\n"
                                   "      NET_RX:     %7u     %7u     %7u     %7u\n"
                                   "       BLOCK:          0          0          0          0\n";

static InterruptTable *softirqs(unsigned a, unsigned b, unsigned c, unsigned d) {
        _cleanup_free_ char *text = NULL, *err = NULL;
        InterruptTable *t = NULL;

        ck_assert_int_ge(asprintf(&text, softirqs_fmt, a, b, c, d, a, b, c, d), 0);
        ck_assert_int_eq(interrupts_parse(text, &t, &err), 0);
        return t;
}

START_TEST(test_softirq_net_rx) {
        _cleanup_(interrupt_table_freep) InterruptTable *prev = softirqs(1000, 2000, 3000, 4000);
        _cleanup_(interrupt_table_freep) InterruptTable *hot = softirqs(1010, 2005, 9000, 4020);
        _cleanup_(interrupt_table_freep) InterruptTable *even = softirqs(3000, 4000, 5000, 6000);
        _cleanup_(interrupt_table_freep) InterruptTable *reset = softirqs(10, 20, 9000, 40);
        IrqSkewThresholds th = IRQ_SKEW_THRESHOLDS_DEFAULT;
        char *one[] = {(char *)"veth0", NULL};
        IrqSkewFinding f = {};

        ck_assert_int_eq(irq_skew_detect_net_rx(prev, hot, SEC, one, &th, &f), 1);
        ck_assert_int_eq(f.kind, IRQ_SKEW_NET_RX);
        ck_assert_uint_eq(f.cpu, 2);
        ck_assert_uint_eq(f.count, 6035);
        ck_assert_double_eq_tol(f.share, 6000.0 / 6035, 1e-9);
        ck_assert_str_eq(f.device, "veth0");
        ck_assert_str_eq(f.suggestion, "net: [{ device: \"veth0\", rps: \"0-1,3\" }]");
        irq_skew_finding_done(&f);

        ck_assert_int_eq(irq_skew_detect_net_rx(prev, hot, SEC, NULL, &th, &f), 1);
        ck_assert_str_eq(f.device, "*");
        irq_skew_finding_done(&f);

        ck_assert_int_eq(irq_skew_detect_net_rx(prev, even, SEC, one, &th, &f), 0);
        ck_assert_int_eq(irq_skew_detect_net_rx(prev, reset, SEC, one, &th, &f), 0);
        ck_assert_int_eq(irq_skew_detect_net_rx(prev, hot, 10 * SEC, one, &th, &f), 0); /* 603/s */
        ck_assert_int_eq(irq_skew_detect_net_rx(prev, hot, 0, one, &th, &f), -EINVAL);
}
END_TEST

/* Devices of a fixture root: a veth-like interface with no IRQs, one rx queue. */
START_TEST(test_devices_single_queue) {
        _cleanup_(interrupt_table_freep) InterruptTable *t =
                corpus_table("amzn-drivers-316-ena-4cpu-blank-names.txt");
        _cleanup_(irq_skew_devices_freep) IrqSkewDevices *devs = NULL;
        _cleanup_strv_free_ char **single = NULL;
        const char *names[] = {"enp39s0", "veth0"};
        const unsigned n_rx[] = {4, 1};
        char *root = fixture_root(names, n_rx, 2);

        ck_assert_int_eq(irq_skew_devices_load(root, t, &devs), 0);
        ck_assert_uint_eq(devs->n_devices, 2);
        ck_assert_str_eq(devs->devices[0].name, "enp39s0");
        ck_assert_uint_eq(devs->devices[0].n_irqs, 1); /* by name: the others are blank */
        ck_assert_uint_eq(devs->devices[0].n_queues, 4);
        ck_assert_uint_eq(devs->devices[1].n_irqs, 0);
        ck_assert_int_eq(irq_skew_devices_single_queue(devs, &single), 0);
        ck_assert_uint_eq(strv_length(single), 1);
        ck_assert_str_eq(single[0], "veth0");
        fixture_remove(root);
}
END_TEST

int main(void) {
        Suite *s = suite_create("irq-skew");
        TCase *tc = tcase_create("irq-skew");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_irqcli_skew);
        tcase_add_test(tc, test_rbench_share_threshold);
        tcase_add_test(tc, test_even_and_idle);
        tcase_add_test(tc, test_generated_large);
        tcase_add_test(tc, test_episodes);
        tcase_add_test(tc, test_episode_sequence);
        tcase_add_test(tc, test_softirq_net_rx);
        tcase_add_test(tc, test_devices_single_queue);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
