/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Device placement (daemon/device-placement.h) on a fixture tree standing in for /proc and /sys:
 * the IRQs of a corpus /proc/interrupts dump ($AFFINITYD_CORPUS/interrupts, an ENA NIC on 4
 * CPUs, one of its vectors kernel-managed), eth0 with two rx and two tx queues, and the RFS
 * table. A DeviceContext points it at the tree, a state directory inside it, a hand-built
 * configuration and plan and a synthetic 4-CPU topology, and records what the drift callback
 * reports. Asserted: what the pass wrote (the files' contents), what it recorded in the state
 * directory, what ListIrqs / ListNetQueues show, the counters; a rule removed giving the
 * originals back; restore-on-exit; --dry-run writing and recording nothing; drift found by the
 * timer, reported, and put back under on-drift: enforce only. Runs without root.
 */

#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "cpuset.h"
#include "device-placement.h"
#include "fileio.h"
#include "plan.h"
#include "policy.h"
#include "state.h"
#include "topology.h"
#include "util.h"

#define DUMP "amzn-drivers-316-ena-4cpu-blank-names.txt"

typedef struct Report {
        char kind[16], target[64], rule[32], found[32], action[16];
} Report;

/* What one test works with: the tree, the Manager's side of the context, the placement. */
typedef struct Fixture {
        char dir[64]; /* the fixture root */
        char *state_dir;
        sd_event *event;
        Config *config;
        Plan *plan;
        Topology *topology;
        unsigned generation;
        Report reports[16];
        unsigned n_reports;
        DevicePlacement *d;
} Fixture;

static void run(const char *format, ...) {
        _cleanup_free_ char *cmd = NULL;
        va_list ap;

        va_start(ap, format);
        ck_assert_int_ge(vasprintf(&cmd, format, ap), 0);
        va_end(ap);
        ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* The contents of ROOT/rel, its trailing newline dropped. */
static char *read_rel(const Fixture *f, const char *rel) {
        _cleanup_free_ char *path = NULL;
        char *text = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/%s", f->dir, rel), 0);
        ck_assert_msg(read_full_file(path, 4096, 0, &text, NULL) >= 0, "cannot read %s", path);
        text[strcspn(text, "\n")] = '\0';
        return text;
}

#define assert_file(f, rel, expected) \
        ({ \
                _cleanup_free_ char *_t_ = read_rel((f), (rel)); \
                ck_assert_msg( \
                        streq(_t_, (expected)), "%s: \"%s\", expected \"%s\"", (rel), _t_, (expected)); \
        })

static void write_rel(const Fixture *f, const char *rel, const char *text) {
        _cleanup_free_ char *path = NULL;
        _cleanup_fclose_ FILE *file = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/%s", f->dir, rel), 0);
        file = fopen(path, "we");
        ck_assert_msg(file, "cannot write %s", path);
        fputs(text, file);
        ck_assert_int_eq(fflush(file), 0);
}

/* A record as a previous instance leaves it in the state dir: target kind/key, the identity of
 * what it was about, its original. */
static void write_record(
        Fixture *f, const char *kind, const char *key, const char *identity, const char *original) {
        ck_assert_int_eq(
                state_target_write(
                        f->state_dir,
                        &(const StateTarget){
                                .kind = (char *)kind,
                                .key = (char *)key,
                                .identity = (char *)identity,
                                .original = (char *)original}),
                0);
}

/* A queue mask file (hex, any width) as a cpu-list. */
static char *mask_rel(const Fixture *f, const char *rel) {
        _cleanup_free_ char *text = read_rel(f, rel);
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        char *list;

        ck_assert_msg(cpuset_parse_mask(text, &s, NULL) >= 0, "%s: bad mask \"%s\"", rel, text);
        list = cpuset_is_empty(&s) ? strdup("") : cpuset_to_string(&s);
        ck_assert_ptr_nonnull(list);
        return list;
}

#define assert_mask(f, rel, expected) \
        ({ \
                _cleanup_free_ char *_t_ = mask_rel((f), (rel)); \
                ck_assert_msg( \
                        streq(_t_, (expected)), "%s: CPUs \"%s\", expected \"%s\"", (rel), _t_, \
                        (expected)); \
        })

static void on_drift_detected(
        void *userdata, const char *kind, const char *target, const char *rule, const char *found,
        const char *action) {
        Fixture *f = userdata;
        Report *r;

        ck_assert_uint_lt(f->n_reports, ELEMENTSOF(f->reports));
        r = &f->reports[f->n_reports++];
        snprintf(r->kind, sizeof(r->kind), "%s", kind);
        snprintf(r->target, sizeof(r->target), "%s", target);
        snprintf(r->rule, sizeof(r->rule), "%s", rule);
        snprintf(r->found, sizeof(r->found), "%s", found);
        snprintf(r->action, sizeof(r->action), "%s", action);
}

static const Report *find_report(const Fixture *f, const char *target) {
        for (unsigned i = 0; i < f->n_reports; i++)
                if (streq(f->reports[i].target, target))
                        return &f->reports[i];
        return NULL;
}

/*
 * The tree: ROOT/proc/interrupts (the dump: IRQs 65-69 of PCI 0000:00:05.0, MSI-X), each
 * ROOT/proc/irq/N with smp_affinity_list 0-3 (IRQ 66's smp_affinity read-only: kernel-managed),
 * eth0 (ifindex 2) with rx-0, rx-1 (rps_cpus 0, rps_flow_cnt 0) and tx-0, tx-1 (xps_cpus 0),
 * 4 possible CPUs, net.core.rps_sock_flow_entries 0.
 */
static void fixture_init(Fixture *f, bool dry_run) {
        _cleanup_free_ char *dump = NULL;
        const char *corpus = getenv("AFFINITYD_CORPUS");

        *f = (Fixture){};
        ck_assert_msg(corpus && *corpus, "AFFINITYD_CORPUS is not set (tests/meson.build sets it)");
        ck_assert_int_ge(asprintf(&dump, "%s/interrupts/%s", corpus, DUMP), 0);
        snprintf(f->dir, sizeof(f->dir), "/tmp/test-device-placement-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(f->dir));
        run("mkdir -p %1$s/proc/irq %1$s/proc/sys/net/core %1$s/sys/class/net %1$s/sys/devices/system/cpu "
            "%1$s/sys/devices/pci0000:00/0000:00:05.0/msi_irqs %1$s/sys/bus/pci/devices %1$s/state && "
            "cp %2$s %1$s/proc/interrupts && "
            "for i in 65 66 67 68 69; do mkdir %1$s/proc/irq/$i && echo 0-3 > "
            "%1$s/proc/irq/$i/smp_affinity_list && echo f > %1$s/proc/irq/$i/smp_affinity && "
            "touch %1$s/sys/devices/pci0000:00/0000:00:05.0/msi_irqs/$i; done && "
            "chmod 0444 %1$s/proc/irq/66/smp_affinity && "
            "ln -s ../../../devices/pci0000:00/0000:00:05.0 %1$s/sys/bus/pci/devices/0000:00:05.0 && "
            "mkdir -p %1$s/sys/devices/pci0000:00/0000:00:05.0/net/eth0 && "
            "ln -s ../../devices/pci0000:00/0000:00:05.0/net/eth0 %1$s/sys/class/net/eth0 && "
            "ln -s ../../../0000:00:05.0 %1$s/sys/devices/pci0000:00/0000:00:05.0/net/eth0/device && "
            "echo 2 > %1$s/sys/class/net/eth0/ifindex && "
            "for q in 0 1; do mkdir -p %1$s/sys/class/net/eth0/queues/rx-$q "
            "%1$s/sys/class/net/eth0/queues/tx-$q && "
            "echo 0 > %1$s/sys/class/net/eth0/queues/rx-$q/rps_cpus && "
            "echo 0 > %1$s/sys/class/net/eth0/queues/rx-$q/rps_flow_cnt && "
            "echo 0 > %1$s/sys/class/net/eth0/queues/tx-$q/xps_cpus; done && "
            "echo 0-3 > %1$s/sys/devices/system/cpu/possible && "
            "echo 0-3 > %1$s/sys/devices/system/cpu/online && "
            "echo 0 > %1$s/proc/sys/net/core/rps_sock_flow_entries",
            f->dir, dump);
        ck_assert_int_ge(asprintf(&f->state_dir, "%s/state", f->dir), 0);
        ck_assert_int_ge(sd_event_new(&f->event), 0);
        ck_assert_int_eq(topology_load_synthetic("pack:1 core:2 pu:2", &f->topology), 0);
        f->generation = 1;
        ck_assert_int_eq(
                device_placement_new(
                        &(const DeviceContext){
                                .event = f->event,
                                .root = f->dir,
                                .state_dir = f->state_dir,
                                .dry_run = dry_run,
                                .config = &f->config,
                                .plan = &f->plan,
                                .topology = &f->topology,
                                .plan_generation = &f->generation,
                                .drift_detected = on_drift_detected,
                                .userdata = f,
                        },
                        &f->d),
                0);
        ck_assert_int_eq(device_placement_start(f->d), 0);
}

static void fixture_done(Fixture *f) {
        f->d = device_placement_free(f->d);
        plan_free(f->plan);
        config_free(f->config);
        topology_free(f->topology);
        sd_event_unref(f->event);
        free(f->state_dir);
        run("rm -rf '%s'", f->dir);
}

static CpuSelector literal(const char *list) {
        CpuSelector s = {.kind = CPU_SELECTOR_LITERAL};
        ck_assert_int_eq(cpuset_parse_list(list, &s.literal, NULL), 0);
        return s;
}

/* irqs: rule "nic" (device eth0: CPU 1) when irqs; net: rule "eth0" (rps: CPUs 2-3) when net;
 * rfs: 4096 entries with net. */
static Config *make_config(
        bool irqs, bool net, DriftMode irq_drift, DriftMode net_drift, uint64_t drift_usec) {
        Config *c = config_new();

        ck_assert_ptr_nonnull(c);
        c->drift_interval_usec = drift_usec;
        if (irqs) {
                IrqRule r = {.name = strdup("nic"), .cpus = literal("1"), .on_drift = irq_drift};

                r.device = calloc(2, sizeof(char *));
                ck_assert_ptr_nonnull(r.device);
                r.device[0] = strdup("eth0");
                ck_assert_ptr_nonnull(r.name);
                ck_assert_ptr_nonnull(r.device[0]);
                ck_assert_int_eq(config_add_irq_rule(c, &r), 0);
        }
        if (net) {
                NetRule r = {
                        .name = strdup("eth0"),
                        .device = strdup("eth0"),
                        .rps = literal("2-3"),
                        .xps = XPS_NONE,
                        .on_drift = net_drift,
                };

                ck_assert_ptr_nonnull(r.name);
                ck_assert_ptr_nonnull(r.device);
                ck_assert_int_eq(config_add_net_rule(c, &r), 0);
                c->rfs_entries = 4096;
        }
        return c;
}

/* Installs c as the Manager would: a new plan, the generation bumped. */
static void install(Fixture *f, Config *c) {
        plan_free(f->plan);
        f->plan = NULL;
        config_free(f->config);
        f->config = c;
        ck_assert_int_eq(plan_new(c, f->topology, &f->plan), 0);
        f->generation++;
}

static size_t n_records(const Fixture *f, const char *kind) {
        StateTarget *records = NULL;
        size_t n = 0, k = 0;

        ck_assert_int_eq(state_target_list(f->state_dir, &records, &n), 0);
        for (size_t i = 0; i < n; i++) {
                if (!kind || streq(records[i].kind, kind))
                        k++;
                state_target_done(&records[i]);
        }
        free(records);
        return k;
}

static const IrqStatus *find_irq(const IrqStatus *l, size_t n, unsigned irq) {
        for (size_t i = 0; i < n; i++)
                if (l[i].irq == irq)
                        return &l[i];
        return NULL;
}

static const NetQueueStatus *find_queue(const NetQueueStatus *l, size_t n, const char *queue) {
        for (size_t i = 0; i < n; i++)
                if (streq(l[i].device, "eth0") && streq(l[i].queue, queue))
                        return &l[i];
        return NULL;
}

/* ---- a pass, a rule removed, restore-on-exit ---- */

START_TEST(test_apply_and_restore) {
        Fixture f;
        const DevicePlacementCounters *c;
        const IrqStatus *irqs, *s;
        const NetQueueStatus *queues, *q;
        size_t n_irqs, n_queues;
        StateTarget record = {};

        fixture_init(&f, false);
        c = device_placement_counters(f.d);
        /* No configuration yet: nothing is done. */
        ck_assert_int_eq(device_placement_apply(f.d), 0);
        assert_file(&f, "proc/irq/65/smp_affinity_list", "0-3");

        install(&f, make_config(true, true, DRIFT_REPORT, DRIFT_REPORT, 0));
        ck_assert_int_eq(device_placement_apply(f.d), 0);

        /* IRQs of eth0: CPU 1, but the kernel-managed one. */
        assert_file(&f, "proc/irq/65/smp_affinity_list", "1");
        assert_file(&f, "proc/irq/66/smp_affinity_list", "0-3");
        for (unsigned i = 67; i <= 69; i++) {
                char rel[64];

                snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", i);
                assert_file(&f, rel, "1");
        }
        /* Queues: rps 2-3, flow counts 4096 over two rx queues, xps untouched, RFS. */
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "2-3");
        assert_mask(&f, "sys/class/net/eth0/queues/rx-1/rps_cpus", "2-3");
        assert_file(&f, "sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "2048");
        assert_file(&f, "sys/class/net/eth0/queues/rx-1/rps_flow_cnt", "2048");
        assert_mask(&f, "sys/class/net/eth0/queues/tx-0/xps_cpus", "");
        assert_file(&f, "proc/sys/net/core/rps_sock_flow_entries", "4096");

        ck_assert_uint_eq(c->irqs_placed, 4);
        ck_assert_uint_eq(c->irq_refusals, 1); /* the managed one, once */
        ck_assert_uint_eq(c->queues_placed, 2 + 2 + 1);
        ck_assert_uint_eq(c->queue_failures, 0);
        ck_assert_uint_eq(c->restores, 0);

        /* Every original recorded before its write, in the kernel's own format. */
        ck_assert_uint_eq(n_records(&f, "irq"), 4);
        ck_assert_uint_eq(n_records(&f, "rps"), 2);
        ck_assert_uint_eq(n_records(&f, "flow"), 2);
        ck_assert_uint_eq(n_records(&f, "rfs"), 1);
        ck_assert_uint_eq(n_records(&f, NULL), 9);
        ck_assert_int_eq(state_target_read(f.state_dir, "irq", "65", &record, NULL), 0);
        ck_assert_str_eq(record.original, "0-3");
        ck_assert_str_eq(record.identity, "PCI-MSIX-0000:27:00.0 0-edge");
        state_target_done(&record);
        ck_assert_int_eq(state_target_read(f.state_dir, "flow", "eth0/rx-1", &record, NULL), 0);
        ck_assert_str_eq(record.original, "0");
        ck_assert_str_eq(record.identity, "2");
        state_target_done(&record);

        ck_assert_int_eq(device_placement_list_irqs(f.d, &irqs, &n_irqs), 0);
        ck_assert_uint_eq(n_irqs, 5);
        s = find_irq(irqs, n_irqs, 65);
        ck_assert_str_eq(s->state, "applied");
        ck_assert_str_eq(s->rule, "nic");
        ck_assert_int_eq(cpuset_count(&s->requested), 1);
        ck_assert(cpuset_contains(&s->requested, 1));
        s = find_irq(irqs, n_irqs, 66);
        ck_assert_str_eq(s->state, "managed");
        ck_assert_msg(strstr(s->reason, "managed by the kernel"), "reason: %s", s->reason);

        ck_assert_int_eq(device_placement_list_queues(f.d, &queues, &n_queues), 0);
        ck_assert_uint_eq(n_queues, 4);
        q = find_queue(queues, n_queues, "rx-1");
        ck_assert_ptr_nonnull(q);
        ck_assert_str_eq(q->kind, "rps");
        ck_assert_str_eq(q->state, "applied");
        ck_assert_str_eq(q->rule, "eth0");
        ck_assert_uint_eq(q->flow_cnt, 2048);
        ck_assert_int_eq(cpuset_count(&q->cpus), 2);
        q = find_queue(queues, n_queues, "tx-0");
        ck_assert_str_eq(q->state, "unmanaged");
        ck_assert_str_eq(q->rule, "");

        /* The same plan again: nothing written, nothing refused again. */
        ck_assert_int_eq(device_placement_apply(f.d), 0);
        ck_assert_uint_eq(c->irqs_placed, 4);
        ck_assert_uint_eq(c->queues_placed, 5);
        ck_assert_uint_eq(c->irq_refusals, 1);

        /* The irqs: rule removed: the IRQs get their originals back, their records go. */
        install(&f, make_config(false, true, DRIFT_REPORT, DRIFT_REPORT, 0));
        ck_assert_int_eq(device_placement_apply(f.d), 0);
        for (unsigned i = 65; i <= 69; i++) {
                char rel[64];

                snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", i);
                assert_file(&f, rel, "0-3");
        }
        ck_assert_uint_eq(c->restores, 4);
        ck_assert_uint_eq(n_records(&f, "irq"), 0);
        ck_assert_uint_eq(n_records(&f, NULL), 5);
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "2-3");

        /* restore-on-exit: the rest. */
        ck_assert_int_eq(device_placement_restore_all(f.d), 0);
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "");
        assert_mask(&f, "sys/class/net/eth0/queues/rx-1/rps_cpus", "");
        assert_file(&f, "sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "0");
        assert_file(&f, "proc/sys/net/core/rps_sock_flow_entries", "0");
        ck_assert_uint_eq(c->restores, 4 + 5);
        ck_assert_uint_eq(n_records(&f, NULL), 0);
        ck_assert_uint_eq(f.n_reports, 0);

        fixture_done(&f);
}
END_TEST

/* ---- a previous instance's records ---- */

/* What a previous instance recorded is taken over: a target still covered keeps its true
 * original (given back at exit), one no rule covers is given it back at the first pass. */
START_TEST(test_recover) {
        Fixture f;

        fixture_init(&f, false);
        /* As a previous instance left them: IRQ 65 set to 1 (its original 2-3), IRQ 67 set to 1
         * (original 0,2; not covered now). */
        write_rel(&f, "proc/irq/65/smp_affinity_list", "1\n");
        write_rel(&f, "proc/irq/67/smp_affinity_list", "1\n");
        write_record(&f, "irq", "65", "PCI-MSIX-0000:27:00.0 0-edge", "2-3");
        write_record(&f, "irq", "67", "PCI-MSIX-0000:27:00.0 2-edge", "0,2");
        /* Another device's IRQ 68 now: dropped, nothing written. */
        write_record(&f, "irq", "68", "IR-PCI-MSI-edge other", "3");
        device_placement_free(f.d);
        ck_assert_int_eq(
                device_placement_new(
                        &(const DeviceContext){
                                .event = f.event,
                                .root = f.dir,
                                .state_dir = f.state_dir,
                                .config = &f.config,
                                .plan = &f.plan,
                                .topology = &f.topology,
                                .plan_generation = &f.generation,
                        },
                        &f.d),
                0);
        ck_assert_int_eq(device_placement_start(f.d), 0);

        install(&f, make_config(false, false, DRIFT_REPORT, DRIFT_REPORT, 0));
        ck_assert_int_eq(device_placement_apply(f.d), 0);
        assert_file(&f, "proc/irq/65/smp_affinity_list", "2-3");
        assert_file(&f, "proc/irq/67/smp_affinity_list", "0,2");
        assert_file(&f, "proc/irq/68/smp_affinity_list", "0-3");
        ck_assert_uint_eq(device_placement_counters(f.d)->restores, 2);
        ck_assert_uint_eq(n_records(&f, NULL), 0);

        fixture_done(&f);
}
END_TEST

/* ---- --dry-run ---- */

START_TEST(test_dry_run) {
        Fixture f;
        const IrqStatus *irqs, *s;
        size_t n_irqs;

        fixture_init(&f, true);
        install(&f, make_config(true, true, DRIFT_REPORT, DRIFT_REPORT, 10 * 1000));
        ck_assert_int_eq(device_placement_apply(f.d), 0);

        assert_file(&f, "proc/irq/65/smp_affinity_list", "0-3");
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "");
        assert_file(&f, "sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "0");
        assert_file(&f, "proc/sys/net/core/rps_sock_flow_entries", "0");
        ck_assert_uint_eq(device_placement_counters(f.d)->irqs_placed, 0);
        ck_assert_uint_eq(device_placement_counters(f.d)->queues_placed, 0);
        ck_assert_uint_eq(n_records(&f, NULL), 0);

        ck_assert_int_eq(device_placement_list_irqs(f.d, &irqs, &n_irqs), 0);
        s = find_irq(irqs, n_irqs, 65);
        ck_assert_str_eq(s->state, "unmanaged");
        ck_assert_str_eq(s->rule, "nic");
        ck_assert_str_eq(s->reason, "dry run: would set 1 (now 0-3)");

        /* No drift timer in a dry run: the loop has nothing to wait for. */
        ck_assert_int_eq(sd_event_run(f.event, 50 * 1000), 0);
        ck_assert_uint_eq(f.n_reports, 0);
        ck_assert_int_eq(device_placement_restore_all(f.d), 0);
        assert_file(&f, "proc/irq/65/smp_affinity_list", "0-3");

        fixture_done(&f);
}
END_TEST

/* ---- drift ---- */

static uint64_t now_usec(void) {
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* IRQ 65 (on-drift: report) and rx-0's rps_cpus (on-drift: enforce) changed behind the daemon's
 * back: the timer finds both, reports each once through the callback, and puts back the queue
 * only. */
START_TEST(test_drift) {
        Fixture f;
        const Report *r;
        const IrqStatus *irqs, *s;
        size_t n_irqs;
        uint64_t deadline;

        fixture_init(&f, false);
        install(&f, make_config(true, true, DRIFT_REPORT, DRIFT_ENFORCE, 20 * 1000));
        ck_assert_int_eq(device_placement_apply(f.d), 0);
        assert_file(&f, "proc/irq/65/smp_affinity_list", "1");
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "2-3");

        write_rel(&f, "proc/irq/65/smp_affinity_list", "3\n");
        write_rel(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "1\n");
        deadline = now_usec() + 5 * 1000 * 1000;
        while (f.n_reports < 2 && now_usec() < deadline)
                ck_assert_int_ge(sd_event_run(f.event, 100 * 1000), 0);
        /* A few more ticks: nothing is reported twice. */
        for (unsigned i = 0; i < 5; i++)
                ck_assert_int_ge(sd_event_run(f.event, 30 * 1000), 0);

        ck_assert_uint_eq(f.n_reports, 2);
        r = find_report(&f, "65");
        ck_assert_ptr_nonnull(r);
        ck_assert_str_eq(r->kind, "irq");
        ck_assert_str_eq(r->rule, "nic");
        ck_assert_str_eq(r->found, "3");
        ck_assert_str_eq(r->action, "report");
        r = find_report(&f, "eth0/rx-0 rps");
        ck_assert_ptr_nonnull(r);
        ck_assert_str_eq(r->kind, "queue");
        ck_assert_str_eq(r->rule, "eth0");
        ck_assert_str_eq(r->found, "0");
        ck_assert_str_eq(r->action, "enforce");

        assert_file(&f, "proc/irq/65/smp_affinity_list", "3");             /* reported only */
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "2-3"); /* put back */
        ck_assert_uint_eq(device_placement_counters(f.d)->drift_detected, 2);
        ck_assert_uint_eq(device_placement_counters(f.d)->drift_corrections, 1);
        ck_assert_int_eq(device_placement_list_irqs(f.d, &irqs, &n_irqs), 0);
        s = find_irq(irqs, n_irqs, 65);
        ck_assert_str_eq(s->state, "drifted");
        ck_assert_msg(strstr(s->reason, "changed to 3 by someone else"), "reason: %s", s->reason);

        /* restore-on-exit gives the drifted IRQ its original too. */
        ck_assert_int_eq(device_placement_restore_all(f.d), 0);
        assert_file(&f, "proc/irq/65/smp_affinity_list", "0-3");
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "");

        fixture_done(&f);
}
END_TEST

/* ---- interface renames ---- */

/* eth0 renamed to lan0 (same ifindex) between passes: its queue targets and records follow it,
 * and the originals given back at exit are the true ones. */
START_TEST(test_rename) {
        Fixture f;
        Config *c;
        StateTarget record = {};

        fixture_init(&f, false);
        c = make_config(false, true, DRIFT_REPORT, DRIFT_REPORT, 0);
        free(c->net_rules[0].device);
        c->net_rules[0].device = strdup("*");
        ck_assert_ptr_nonnull(c->net_rules[0].device);
        install(&f, c);
        ck_assert_int_eq(device_placement_apply(f.d), 0);
        assert_mask(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "2-3");

        run("mv %1$s/sys/devices/pci0000:00/0000:00:05.0/net/eth0 "
            "%1$s/sys/devices/pci0000:00/0000:00:05.0/net/lan0 && rm %1$s/sys/class/net/eth0 && "
            "ln -s ../../devices/pci0000:00/0000:00:05.0/net/lan0 %1$s/sys/class/net/lan0",
            f.dir);
        ck_assert_int_eq(device_placement_apply(f.d), 0);
        ck_assert_int_eq(state_target_read(f.state_dir, "rps", "lan0/rx-0", &record, NULL), 0);
        ck_assert_str_eq(record.original, "00000000"); /* 32 bits wide, as the kernel prints it */
        ck_assert_str_eq(record.identity, "2");
        state_target_done(&record);
        ck_assert_int_eq(state_target_read(f.state_dir, "rps", "eth0/rx-0", &record, NULL), -ENOENT);
        ck_assert_uint_eq(device_placement_counters(f.d)->queues_placed, 5); /* nothing written again */
        ck_assert_uint_eq(n_records(&f, NULL), 5);

        ck_assert_int_eq(device_placement_restore_all(f.d), 0);
        assert_mask(&f, "sys/class/net/lan0/queues/rx-0/rps_cpus", "");
        assert_file(&f, "sys/class/net/lan0/queues/rx-1/rps_flow_cnt", "0");
        ck_assert_uint_eq(n_records(&f, NULL), 0);

        fixture_done(&f);
}
END_TEST

static Suite *device_placement_suite(void) {
        Suite *s = suite_create("device-placement");
        TCase *tc = tcase_create("fixture");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_apply_and_restore);
        tcase_add_test(tc, test_recover);
        tcase_add_test(tc, test_dry_run);
        tcase_add_test(tc, test_drift);
        tcase_add_test(tc, test_rename);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(device_placement_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
