/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests for lib/devplan: the device plan made from the corpus topologies
 * ($AFFINITYD_CORPUS/topologies) and inventories built from the corpus /proc/interrupts dumps
 * ($AFFINITYD_CORPUS/interrupts) — spread order, near-node choice, masks beyond 64 CPUs,
 * exclusive holdings — and device_inventory_load() on a fixture tree standing in for /proc and
 * /sys.
 *
 * Inventories for the pure plan are built by hand: the IRQ numbers and names are taken from the
 * dumps by a small parser here (the number before ':' and the last word of the line), not by
 * lib/interrupts. Expected CPU sets come from the topology API or, where written out, from
 * `hwloc-calc -i FILE --po -I pu node:N` on the corpus files (noted where used).
 */

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "devplan.h"
#include "macro.h"
#include "plan.h"
#include "policy.h"
#include "topology.h"

/* ---- building configurations by hand ---- */

static CpuSet set_of(const char *list) {
        CpuSet s = CPUSET_NULL;
        ck_assert_msg(cpuset_parse_list(list, &s, NULL) == 0, "bad test cpu-list \"%s\"", list);
        return s;
}

static CpuSelector sel_literal(const char *list) {
        return (CpuSelector){.kind = CPU_SELECTOR_LITERAL, .literal = set_of(list)};
}

typedef struct Sel {
        const char *nodes, *near;
        unsigned cores;
        bool exclusive;
        ReservedMode reserved;
} Sel;

static CpuSelector sel_full(Sel o) {
        CpuSelector s = {.kind = CPU_SELECTOR_MAPPING, .reserved = o.reserved, .exclusive = o.exclusive};

        if (o.nodes) {
                s.has_nodes = true;
                s.nodes = set_of(o.nodes);
        }
        if (o.near) {
                s.near = strdup(o.near);
                ck_assert_ptr_nonnull(s.near);
        }
        s.n_cores = o.cores;
        return s;
}
#define SEL(...) sel_full((Sel){__VA_ARGS__})

/* A NULL-terminated vector from a NULL-terminated argument list. */
static char **strv_make(const char *first, ...) {
        char **l = NULL;
        size_t n = 0;
        va_list ap;

        va_start(ap, first);
        for (const char *s = first; s; s = va_arg(ap, const char *)) {
                l = reallocarray(l, n + 2, sizeof(char *));
                ck_assert_ptr_nonnull(l);
                l[n] = strdup(s);
                ck_assert_ptr_nonnull(l[n]);
                l[++n] = NULL;
        }
        va_end(ap);
        return l;
}

/* device / action: NULL-terminated-list vectors or NULL (not given). */
static void add_irq_rule(
        Config *c, const char *name, char **device, char **action, CpuSelector cpus, bool spread) {
        IrqRule r = {
                .name = strdup(name), .device = device, .action = action, .cpus = cpus, .spread = spread};

        ck_assert_ptr_nonnull(r.name);
        r.cpus.location = (Location){"irqs.yaml", (unsigned)c->n_irq_rules + 10, 9};
        ck_assert_int_eq(config_add_irq_rule(c, &r), 0);
}

static void add_net_rule(Config *c, const char *device, CpuSelector rps, XpsMode xps, CpuSelector xps_cpus) {
        NetRule r = {
                .name = strdup(device),
                .device = strdup(device),
                .rps = rps,
                .xps = xps,
                .xps_cpus = xps_cpus};

        ck_assert_ptr_nonnull(r.name);
        ck_assert_ptr_nonnull(r.device);
        ck_assert_int_eq(config_add_net_rule(c, &r), 0);
}

static void add_policy(Config *c, const char *name, CpuSelector cpus) {
        Policy p = {.name = strdup(name), .cpus = cpus};

        ck_assert_ptr_nonnull(p.name);
        ck_assert_int_eq(config_add_policy(c, &p), 0);
}

static void config_set_reserve(Config *c, const char *list) {
        c->has_reserve = true;
        cpuset_done(&c->reserve);
        c->reserve = set_of(list);
}

static Topology *load_corpus(const char *file) {
        const char *corpus = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *path = NULL;
        Topology *t = NULL;

        ck_assert_msg(corpus && *corpus, "AFFINITYD_CORPUS is not set (tests/meson.build sets it)");
        ck_assert_int_ge(asprintf(&path, "%s/topologies/%s", corpus, file), 0);
        ck_assert_msg(topology_load_xml(path, &t) == 0, "cannot load %s", path);
        return t;
}

static char *corpus_path(const char *dir, const char *file) {
        char *path = NULL;
        ck_assert_int_ge(asprintf(&path, "%s/%s/%s", getenv("AFFINITYD_CORPUS"), dir, file), 0);
        return path;
}

/* ---- building inventories by hand ---- */

static DeviceInventory *inv_new(void) {
        DeviceInventory *inv = calloc(1, sizeof(DeviceInventory));
        ck_assert_ptr_nonnull(inv);
        return inv;
}

static void inv_add_irq(DeviceInventory *inv, unsigned irq, const char *name, bool managed) {
        DeviceIrq *d;

        inv->irqs = reallocarray(inv->irqs, inv->n_irqs + 1, sizeof(DeviceIrq));
        ck_assert_ptr_nonnull(inv->irqs);
        d = &inv->irqs[inv->n_irqs++];
        *d = (DeviceIrq){.irq = irq, .actions = strdup(name), .managed = managed};
        d->names = *name ? strv_make(name, NULL) : calloc(1, sizeof(char *));
        ck_assert_ptr_nonnull(d->actions);
        ck_assert_ptr_nonnull(d->names);
}

/* irqs: ascending, count n. */
static void inv_add_lookup(
        DeviceInventory *inv, const char *device, int error, const unsigned *irqs, size_t n) {
        DeviceIrqLookup *l;

        inv->lookups = reallocarray(inv->lookups, inv->n_lookups + 1, sizeof(DeviceIrqLookup));
        ck_assert_ptr_nonnull(inv->lookups);
        l = &inv->lookups[inv->n_lookups++];
        *l = (DeviceIrqLookup){.device = strdup(device), .error = error, .n_irqs = n};
        if (n > 0) {
                l->irqs = calloc(n, sizeof(unsigned));
                ck_assert_ptr_nonnull(l->irqs);
                memcpy(l->irqs, irqs, n * sizeof(unsigned));
        }
}

static void inv_add_net(
        DeviceInventory *inv, const char *name, unsigned n_rx, unsigned n_tx, bool rps, bool xps) {
        inv->nets = reallocarray(inv->nets, inv->n_nets + 1, sizeof(DeviceNet));
        ck_assert_ptr_nonnull(inv->nets);
        inv->nets[inv->n_nets++] = (DeviceNet){
                .name = strdup(name),
                .queues = {.n_rx = n_rx, .n_tx = n_tx, .has_rps = rps, .has_xps = xps, .ifindex = 2},
        };
}

/*
 * The numeric lines of a corpus /proc/interrupts dump: IRQ number and the last word as its
 * name; an IRQ is marked managed when its name matches one of the globs in managed (NULL-
 * terminated vector or NULL).
 */
static DeviceInventory *inv_from_dump(const char *file, char **managed) {
        _cleanup_free_ char *path = corpus_path("interrupts", file);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        DeviceInventory *inv = inv_new();
        char line[4096];

        ck_assert_msg(f, "cannot open %s", path);
        while (fgets(line, sizeof line, f)) {
                char *p = line, *end, *last = NULL, *tok, *save = NULL;
                unsigned long irq;
                bool m = false;

                while (isspace((unsigned char)*p))
                        p++;
                if (!isdigit((unsigned char)*p))
                        continue;
                irq = strtoul(p, &end, 10);
                ck_assert(*end == ':');
                for (tok = strtok_r(end + 1, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
                        last = tok;
                ck_assert_ptr_nonnull(last);
                STRV_FOREACH (g, managed)
                        if (fnmatch(*g, last, 0) == 0)
                                m = true;
                inv_add_irq(inv, (unsigned)irq, last, m);
        }
        return inv;
}

static bool strv_contains_substring(char **l, const char *needle) {
        STRV_FOREACH (s, l)
                if (strstr(*s, needle))
                        return true;
        return false;
}

static void assert_set(const CpuSet *got, const CpuSet *want, const char *what) {
        _cleanup_free_ char *g = cpuset_to_string(got), *w = cpuset_to_string(want);
        ck_assert_msg(cpuset_equal(got, want), "%s: got \"%s\", want \"%s\"", what, g, w);
}

static void assert_set_str(const CpuSet *got, const char *want, const char *what) {
        _cleanup_cpuset_ CpuSet w = set_of(want);
        assert_set(got, &w, what);
}

static CpuSet node_cpus(const Topology *t, const char *nodes) {
        _cleanup_cpuset_ CpuSet n = set_of(nodes);
        CpuSet cpus = CPUSET_NULL;

        ck_assert_int_eq(topology_cpus_of_nodes(t, &n, &cpus), 0);
        cpuset_and(&cpus, topology_online_cpus(t));
        ck_assert(!cpuset_is_empty(&cpus));
        return cpus;
}

/*
 * Invariants of a spread order over set: every CPU of set exactly once; the first
 * (number of cores of set) entries are on distinct cores, one of each core; every later
 * entry's core appears earlier.
 */
static void assert_spread_order(const Topology *t, const CpuSet *set, const unsigned *order, size_t n) {
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL, cores = CPUSET_NULL, first = CPUSET_NULL;
        size_t n_cores;

        ck_assert_uint_eq(n, cpuset_count(set));
        CPUSET_FOREACH (cpu, set) {
                int core = topology_core_of_cpu(t, (unsigned)cpu);
                ck_assert_int_ge(core, 0);
                ck_assert_int_eq(cpuset_add(&cores, (unsigned)core), 0);
        }
        n_cores = cpuset_count(&cores);
        for (size_t i = 0; i < n; i++) {
                int core = topology_core_of_cpu(t, order[i]);

                ck_assert_msg(
                        cpuset_contains(set, order[i]), "spread order has CPU %u outside the set", order[i]);
                ck_assert_msg(
                        !cpuset_contains(&seen, order[i]), "CPU %u twice in the spread order", order[i]);
                ck_assert_int_eq(cpuset_add(&seen, order[i]), 0);
                if (i < n_cores) {
                        ck_assert_msg(
                                !cpuset_contains(&first, (unsigned)core),
                                "spread order position %zu: core %d already had a PU", i, core);
                        ck_assert_int_eq(cpuset_add(&first, (unsigned)core), 0);
                } else
                        ck_assert(cpuset_contains(&first, (unsigned)core));
        }
}

/* ---- IRQ spread on the 40-CPU ixgbe dump ---- */

/*
 * rbench dump (p7p1-TxRx-0..7 = IRQs 128-135, em4-* = 272-276, mlx5_async = 230 and
 * mlx5_comp0..39 = 231-270, nvme* and megasas* managed) on the 2-socket 32em64t file, whose eth0
 * is on NUMA node 1 (INDEX.md; hwloc-calc: node 1 = 8-15,24-31, cores (8,24) .. (15,31)).
 * Spread is in queue order: only names ending in a queue number take a CPU of the order.
 */
START_TEST(test_irq_spread_rbench) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_strv_free_ char **managed = strv_make("nvme*", "megasas*", NULL);
        _cleanup_(device_inventory_freep) DeviceInventory *inv =
                inv_from_dump("rbench-interrupts-40cpu-xeon-ixgbe.txt", managed);
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet node1 = node_cpus(t, "1"), low = set_of("0-7");
        const IrqRulePlan *pending, *nic, *mlx, *rest;
        size_t n_rest = 0, n_managed = 0, n_whole = 0;

        ck_assert_uint_ge(inv->n_irqs, 200);
        add_irq_rule(c, "pending", NULL, strv_make("em4-*", NULL), SEL(.near = "nosuchdev"), true);
        add_irq_rule(c, "nic", NULL, strv_make("p7p1-TxRx-*", NULL), SEL(.near = "eth0"), true);
        add_irq_rule(c, "mlx", NULL, strv_make("mlx5_*", NULL), SEL(.near = "eth0"), true);
        add_irq_rule(c, "rest", NULL, strv_make("*", NULL), sel_literal("0-7"), true);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        pending = &dp->irq_rules[0];
        nic = &dp->irq_rules[1];
        mlx = &dp->irq_rules[2];
        rest = &dp->irq_rules[3];

        /* The pending rule keeps em4's IRQs from "rest", and leaves them untouched. */
        ck_assert_ptr_nonnull(pending->pending_reason);
        ck_assert_msg(strstr(pending->pending_reason, "nosuchdev"), "reason: %s", pending->pending_reason);
        ck_assert_ptr_eq(pending->pending_location, &c->irq_rules[0].cpus.location);
        ck_assert_uint_eq(pending->n_matched, 5);
        for (unsigned irq = 272; irq <= 276; irq++) {
                const IrqAssignment *a = device_plan_find_irq(dp, irq);
                ck_assert_ptr_nonnull(a);
                ck_assert_uint_eq(a->rule, 0);
                ck_assert(cpuset_is_empty(&a->cpus));
        }

        /* Near eth0: node 1, spread one PU per core first. */
        ck_assert_ptr_null(nic->pending_reason);
        assert_set(&nic->cpus, &node1, "nic cpus");
        assert_spread_order(t, &node1, nic->spread_order, nic->n_spread_order);
        /* Hand-derived: node 1 is one L3; cores in ascending order, then their siblings. */
        for (unsigned i = 0; i < 8; i++) {
                ck_assert_uint_eq(nic->spread_order[i], 8 + i);
                ck_assert_uint_eq(nic->spread_order[8 + i], 24 + i);
        }
        ck_assert_uint_eq(nic->n_matched, 8);
        for (unsigned q = 0; q < 8; q++) {
                const IrqAssignment *a = device_plan_find_irq(dp, 128 + q);
                _cleanup_cpuset_ CpuSet want = CPUSET_NULL;

                ck_assert_ptr_nonnull(a);
                ck_assert_uint_eq(a->rule, 1); /* first match wins over "rest" */
                ck_assert(!a->managed);
                ck_assert_int_eq(cpuset_add(&want, nic->spread_order[q % nic->n_spread_order]), 0);
                assert_set(&a->cpus, &want, "p7p1 IRQ");
        }

        /* mlx5: the async (control) vector gets the whole set and takes no slot; comp0..39
         * (IRQs 231-270) take the 16 CPUs round robin from the first: comp0 the first CPU. */
        ck_assert_uint_eq(mlx->n_matched, 41);
        assert_set(&device_plan_find_irq(dp, 230)->cpus, &node1, "mlx5_async");
        for (unsigned q = 0; q < 40; q++) {
                const IrqAssignment *a = device_plan_find_irq(dp, 231 + q);
                _cleanup_cpuset_ CpuSet want = CPUSET_NULL;

                ck_assert_ptr_nonnull(a);
                ck_assert_uint_eq(a->rule, 2);
                ck_assert_int_eq(cpuset_add(&want, mlx->spread_order[q % mlx->n_spread_order]), 0);
                assert_set(&a->cpus, &want, "mlx5_comp");
        }
        ck_assert(strv_contains_substring(mlx->explanation, "spread: IRQ 230: not a queue vector"));
        ck_assert(!strv_contains_substring(nic->explanation, "not a queue vector"));

        /* "rest": everything else. Its only queue vectors are the two PCI functions' single
         * vectors named by address (hand-derived from the dump): "0000:00:17.0" (IRQ 149,
         * queue 0) before "0000:00:11.5" (IRQ 78, queue 5) though its IRQ number is higher. The
         * other unmanaged IRQs (timer, rtc0, pciehp, PME, dmar*, mei_me, ...) get the whole set,
         * managed ones nothing. */
        assert_spread_order(t, &low, rest->spread_order, rest->n_spread_order);
        ck_assert(cpuset_contains(&device_plan_find_irq(dp, 149)->cpus, rest->spread_order[0]));
        ck_assert_uint_eq(cpuset_count(&device_plan_find_irq(dp, 149)->cpus), 1);
        ck_assert(cpuset_contains(&device_plan_find_irq(dp, 78)->cpus, rest->spread_order[1]));
        ck_assert_uint_eq(cpuset_count(&device_plan_find_irq(dp, 78)->cpus), 1);
        for (size_t i = 0; i < inv->n_irqs; i++) {
                const DeviceIrq *irq = &inv->irqs[i];
                const IrqAssignment *a = device_plan_find_irq(dp, irq->irq);

                ck_assert_msg(a, "IRQ %u won by no rule", irq->irq);
                if (fnmatch("p7p1-TxRx-*", irq->names[0], 0) == 0 ||
                    fnmatch("em4-*", irq->names[0], 0) == 0 || fnmatch("mlx5_*", irq->names[0], 0) == 0)
                        continue;
                ck_assert_uint_eq(a->rule, 3);
                n_rest++;
                if (irq->managed) {
                        ck_assert(a->managed);
                        ck_assert(cpuset_is_empty(&a->cpus));
                        n_managed++;
                        continue;
                }
                ck_assert(!a->managed);
                if (irq->irq == 78 || irq->irq == 149)
                        continue;
                assert_set(&a->cpus, &low, "not a queue vector: the whole set");
                n_whole++;
        }
        ck_assert_uint_eq(rest->n_matched, n_rest);
        ck_assert_uint_eq(n_rest, n_managed + n_whole + 2);
        ck_assert_uint_eq(dp->n_irqs, inv->n_irqs);
        ck_assert_uint_ge(n_managed, 100); /* 41 megasas + 82 nvme vectors */
        ck_assert_uint_ge(n_whole, 50);
        /* rtc0 and dmar6 end in a number, but have no separator: not queue vectors. */
        assert_set(&device_plan_find_irq(dp, 8)->cpus, &low, "rtc0");
        assert_set(&device_plan_find_irq(dp, 104)->cpus, &low, "dmar6");
        /* The explanation names them as ranges, not one by one. */
        ck_assert(strv_contains_substring(rest->explanation, "spread: IRQs 0,8-10,"));
        ck_assert_ptr_null(dp->irq_rules[0].warnings);
}
END_TEST

/* The CPU at position k (round robin) of rule rp's spread order, as a set. */
static void assert_spread_slot(const DevicePlan *dp, const IrqRulePlan *rp, unsigned irq, size_t k) {
        const IrqAssignment *a = device_plan_find_irq(dp, irq);
        _cleanup_cpuset_ CpuSet want = CPUSET_NULL;
        char what[64];

        ck_assert_msg(a, "IRQ %u won by no rule", irq);
        ck_assert_uint_gt(rp->n_spread_order, 0);
        ck_assert_int_eq(cpuset_add(&want, rp->spread_order[k % rp->n_spread_order]), 0);
        snprintf(what, sizeof(what), "IRQ %u, queue slot %zu", irq, k);
        assert_set(&a->cpus, &want, what);
}

/*
 * Spread in queue order on the other corpus dumps: the irqcli ixgbe dump (eth0-TxRx-0..31 = IRQs
 * 132-163 and the misc vector "eth0" = 164) and rbench's em4 (em4-tx-0 = 272, em4-rx-1..4 =
 * 273-276), on the synthetic "pack:1 core:4 pu:2" (spread order: 4 cores, then siblings).
 */
START_TEST(test_irq_spread_corpus_names) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(device_inventory_freep) DeviceInventory *ixgbe =
                inv_from_dump("irqcli-interrupts-2col-ixgbe-32q.txt", NULL);
        _cleanup_(device_inventory_freep) DeviceInventory *rbench =
                inv_from_dump("rbench-interrupts-40cpu-xeon-ixgbe.txt", NULL);
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL, *dp2 = NULL;
        _cleanup_cpuset_ CpuSet all = set_of("0-7");
        const IrqRulePlan *rp;

        ck_assert_int_eq(topology_load_synthetic("pack:1 core:4 pu:2", &t), 0);
        add_irq_rule(c, "eth0", NULL, strv_make("eth0*", NULL), sel_literal("0-7"), true);
        add_irq_rule(c, "em4", NULL, strv_make("em4-*", NULL), sel_literal("0-7"), true);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, ixgbe, &dp), 0);

        /* ixgbe: the misc vector "eth0" gets the whole set; queue k the k-th CPU, round robin. */
        rp = &dp->irq_rules[0];
        ck_assert_uint_eq(rp->n_matched, 33);
        assert_spread_order(t, &all, rp->spread_order, rp->n_spread_order);
        assert_set(&device_plan_find_irq(dp, 164)->cpus, &all, "ixgbe misc vector eth0");
        for (unsigned q = 0; q < 32; q++)
                assert_spread_slot(dp, rp, 132 + q, q);
        ck_assert(strv_contains_substring(rp->explanation, "spread: IRQ 164: not a queue vector"));
        ck_assert(strv_contains_substring(rp->explanation, "matches IRQs 132-164"));
        ck_assert(strv_contains_substring(dp->irq_rules[1].warnings, "matches no IRQ"));

        /* em4: tx-0 then rx-1..4 take slots 0..4. */
        ck_assert_int_eq(device_plan_new(c, p, t, rbench, &dp2), 0);
        rp = &dp2->irq_rules[1];
        ck_assert_uint_eq(rp->n_matched, 5);
        for (unsigned q = 0; q < 5; q++)
                assert_spread_slot(dp2, rp, 272 + q, q);
        ck_assert(!strv_contains_substring(rp->explanation, "not a queue vector"));
}
END_TEST

/*
 * A virtio-net-like NIC pair (names as the kernel's virtio_net gives them; IRQ numbers of two
 * devices interleaved the way they are allocated): config vectors and a blank-named vector take
 * no slot, queue vectors go by queue number across both devices, then by IRQ number.
 */
START_TEST(test_irq_spread_virtio) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet all = set_of("0-3");
        const unsigned eth0[] = {37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47};
        const IrqRulePlan *rp;

        ck_assert_int_eq(topology_load_synthetic("pack:1 core:4 pu:1", &t), 0);
        /* Added out of order on purpose: the plan sorts. */
        inv_add_irq(inv, 45, "virtio3-input.0", false);
        inv_add_irq(inv, 37, "virtio2-config", false);
        inv_add_irq(inv, 38, "virtio2-input.0", false);
        inv_add_irq(inv, 39, "virtio2-output.0", false);
        inv_add_irq(inv, 40, "virtio2-input.1", false);
        inv_add_irq(inv, 41, "virtio2-output.1", false);
        inv_add_irq(inv, 42, "", false); /* a queue torn down: its name went blank */
        inv_add_irq(inv, 43, "p7p1", false);
        inv_add_irq(inv, 44, "virtio3-config", false);
        inv_add_irq(inv, 46, "virtio3-output.0", true); /* managed: no slot, untouched */
        inv_add_irq(inv, 47, "virtio3-input.1", false);
        inv_add_lookup(inv, "eth0", 0, eth0, ELEMENTSOF(eth0));
        add_irq_rule(c, "nic", strv_make("eth0", NULL), NULL, sel_literal("0-3"), true);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        rp = &dp->irq_rules[0];
        ck_assert_uint_eq(rp->n_matched, 11);
        ck_assert_uint_eq(dp->n_irqs, 11);
        assert_spread_order(t, &all, rp->spread_order, rp->n_spread_order);
        /* Queue 0: 38, 39, 45 (46 managed); queue 1: 40, 41, 47. */
        assert_spread_slot(dp, rp, 38, 0);
        assert_spread_slot(dp, rp, 39, 1);
        assert_spread_slot(dp, rp, 45, 2);
        assert_spread_slot(dp, rp, 40, 3);
        assert_spread_slot(dp, rp, 41, 4);
        assert_spread_slot(dp, rp, 47, 5);
        ck_assert(device_plan_find_irq(dp, 46)->managed);
        ck_assert(cpuset_is_empty(&device_plan_find_irq(dp, 46)->cpus));
        for (unsigned i = 0; i < 4; i++) {
                static const unsigned whole[] = {37, 42, 43, 44};
                assert_set(&device_plan_find_irq(dp, whole[i])->cpus, &all, "not a queue vector");
        }
        ck_assert(strv_contains_substring(rp->explanation, "spread: IRQs 37,42-44: not queue vectors"));
        ck_assert(strv_contains_substring(rp->explanation, "matches IRQs 37-47 (1 managed"));
}
END_TEST

/* device: and action: together; a device that isn't there matches nothing. */
START_TEST(test_irq_device_match) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv =
                inv_from_dump("rbench-interrupts-40cpu-xeon-ixgbe.txt", NULL);
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        const unsigned p7p1[] = {128, 129, 130, 131, 132, 133, 134, 135};

        inv_add_lookup(inv, "p7p1", 0, p7p1, ELEMENTSOF(p7p1));
        inv_add_lookup(inv, "eth9", -ENODEV, NULL, 0);
        inv_add_lookup(inv, "veth0", -ENXIO, NULL, 0);
        add_irq_rule(c, "gone", strv_make("eth9", "veth0", NULL), NULL, sel_literal("2"), false);
        add_irq_rule(
                c, "low-queues", strv_make("p7p1", NULL), strv_make("*TxRx-[0-3]", NULL),
                sel_literal("1,17"), false);
        add_irq_rule(c, "whole-nic", strv_make("eth9", "p7p1", NULL), NULL, sel_literal("3"), false);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        ck_assert_uint_eq(dp->irq_rules[0].n_matched, 0);
        ck_assert(strv_contains_substring(dp->irq_rules[0].warnings, "matches no IRQ"));
        ck_assert(strv_contains_substring(dp->irq_rules[0].explanation, "device eth9: not present"));
        ck_assert(strv_contains_substring(
                dp->irq_rules[0].explanation, "device veth0: no PCI function, no IRQs"));
        ck_assert(strv_contains_substring(dp->irq_rules[1].explanation, "device p7p1: IRQs 128-135"));
        ck_assert_uint_eq(dp->irq_rules[1].n_matched, 4);
        ck_assert_uint_eq(dp->irq_rules[2].n_matched, 4);
        ck_assert_uint_eq(dp->n_irqs, 8);
        for (unsigned irq = 128; irq <= 135; irq++) {
                const IrqAssignment *a = device_plan_find_irq(dp, irq);

                ck_assert_ptr_nonnull(a);
                ck_assert_uint_eq(a->rule, irq <= 131 ? 1 : 2);
                assert_set_str(&a->cpus, irq <= 131 ? "1,17" : "3", "device-matched IRQ");
        }
        ck_assert_ptr_null(device_plan_find_irq(dp, 0));
        ck_assert_ptr_null(device_plan_find_irq(dp, 272));
}
END_TEST

/* ---- near-node choice ---- */

/* 32em64t: eth0 on node 1 (INDEX.md). The CPUs are exactly node 1's minus the reserve. */
START_TEST(test_near_2socket) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet want = node_cpus(t, "1"), reserve = set_of("0,8,24");

        inv_add_irq(inv, 40, "eth0-TxRx-0", false);
        config_set_reserve(c, "0,8,24");
        add_irq_rule(c, "near", NULL, strv_make("eth0-*", NULL), SEL(.near = "eth0"), false);
        add_irq_rule(
                c, "near-housekeeping", NULL, strv_make("eth0-*", NULL),
                SEL(.near = "eth0", .reserved = RESERVED_ONLY), false);
        add_net_rule(c, "eth*", SEL(.near = "eth0"), XPS_NONE, (CpuSelector){});
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        cpuset_andnot(&want, &reserve);
        assert_set(&dp->irq_rules[0].cpus, &want, "near eth0, reserve avoided");
        assert_set_str(&dp->irq_rules[0].cpus, "9-15,25-31", "hand-derived (hwloc-calc node:1)");
        assert_set_str(&dp->irq_rules[1].cpus, "8,24", "near eth0, reserved: only");
        assert_set(&dp->net_rules[0].rps, &want, "rps near eth0");
        ck_assert(dp->net_rules[0].has_rps);
        ck_assert(!dp->net_rules[0].has_xps);
        ck_assert(strv_contains_substring(dp->net_rules[0].warnings, "matches no device"));
        /* The first rule wins IRQ 40; the second matches nothing. */
        ck_assert_uint_eq(device_plan_find_irq(dp, 40)->rule, 0);
        ck_assert(strv_contains_substring(dp->irq_rules[1].warnings, "matches no IRQ"));
}
END_TEST

static void run(const char *format, ...) {
        _cleanup_free_ char *cmd = NULL;
        va_list ap;

        va_start(ap, format);
        ck_assert_int_ge(vasprintf(&cmd, format, ap), 0);
        va_end(ap);
        ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/*
 * The 8-node EPYC (no NIC in the XML): eth0 through the sysfs fallback of a fixture tree, on
 * node 5 (hwloc-calc: node 5 = 30-35,78-83, cores (30,78) .. (35,83)). XPS divided core by core.
 */
START_TEST(test_near_epyc) {
        char dir[] = "/tmp/test-devplan-epyc-XXXXXX";
        _cleanup_(topology_freep) Topology *t = load_corpus("AMD-17h-Zen-2xEpyc-7451.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet want = CPUSET_NULL, reserve = set_of("30,78");
        static const char *const xps0[] = {"0-1,48", "2,49-50", "3-4,51", "5,52-53"};

        ck_assert_ptr_nonnull(mkdtemp(dir));
        run("mkdir -p %1$s/sys/devices/pci0000:40/0000:40:03.1/0000:43:00.0 %1$s/sys/class/net/eth0 && "
            "echo 5 > %1$s/sys/devices/pci0000:40/0000:40:03.1/0000:43:00.0/numa_node && "
            "ln -s ../../../devices/pci0000:40/0000:40:03.1/0000:43:00.0 %1$s/sys/class/net/eth0/device",
            dir);
        ck_assert_int_eq(topology_set_sysfs_root(t, dir), 0);

        inv_add_net(inv, "eth0", 4, 4, true, true);
        inv_add_net(inv, "eth1", 2, 4, true, true);
        config_set_reserve(c, "30,78");
        c->rfs_entries = 32768;
        add_net_rule(c, "eth0", SEL(.near = "eth0"), XPS_SPREAD, (CpuSelector){});
        add_net_rule(c, "eth1", (CpuSelector){}, XPS_SELECTOR, SEL(.nodes = "0"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        want = node_cpus(t, "5");
        cpuset_andnot(&want, &reserve);
        assert_set(&dp->net_rules[0].rps, &want, "rps near eth0 on node 5");
        assert_set_str(&dp->net_rules[0].rps, "31-35,79-83", "hand-derived");
        assert_set(&dp->net_rules[0].xps, &want, "xps: spread = the rps set");

        /* eth0: 10 CPUs over 4 tx queues, cores in order (31,79) (32,80) ... : [q*10/4, (q+1)*10/4). */
        assert_set_str(&device_plan_find_queue(dp, "eth0", NET_QUEUE_XPS, 0)->cpus, "31,79", "eth0 tx-0");
        assert_set_str(&device_plan_find_queue(dp, "eth0", NET_QUEUE_XPS, 1)->cpus, "32,80,33", "eth0 tx-1");
        assert_set_str(&device_plan_find_queue(dp, "eth0", NET_QUEUE_XPS, 2)->cpus, "81,34", "eth0 tx-2");
        assert_set_str(&device_plan_find_queue(dp, "eth0", NET_QUEUE_XPS, 3)->cpus, "82,35,83", "eth0 tx-3");
        for (unsigned q = 0; q < 4; q++) {
                const NetQueueAssignment *a = device_plan_find_queue(dp, "eth0", NET_QUEUE_RPS, q);

                ck_assert_ptr_nonnull(a);
                assert_set(&a->cpus, &want, "eth0 rps");
                ck_assert(a->has_flow_cnt);
                ck_assert_uint_eq(a->flow_cnt, 32768 / 4);
        }
        /* eth1: no rps: rule, xps over node 0 = 0-5,48-53: 12 CPUs over 4 queues, 3 each. */
        ck_assert_ptr_null(device_plan_find_queue(dp, "eth1", NET_QUEUE_RPS, 0));
        for (unsigned q = 0; q < 4; q++)
                assert_set_str(
                        &device_plan_find_queue(dp, "eth1", NET_QUEUE_XPS, q)->cpus, xps0[q], "eth1 xps");
        ck_assert_uint_eq(dp->n_queues, 4 + 4 + 4);
        ck_assert(dp->has_rfs);
        ck_assert_uint_eq(dp->rfs_entries, 32768);

        run("rm -rf '%s'", dir);
}
END_TEST

/* ---- masks beyond 64 CPUs ---- */

/*
 * The 104-CPU irqbalance dump: IRQs 4, 8, 9 with smp_affinity ff,ffffc000,000fffff,fc000000
 * (26-51,78-103) given back as a literal rule on the 256-CPU Xeon Phi file; the mask as written
 * 104 bits wide is the dump's, zero-padded.
 */
START_TEST(test_masks_104cpu_dump) {
        _cleanup_(topology_freep) Topology *t = load_corpus("topo.knl05_v2_4.xml");
        _cleanup_free_ char *path =
                corpus_path("interrupts", "irqbalance-169-proc-irq-node-and-smp_affinity-104cpu.txt");
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet mask = CPUSET_NULL;
        _cleanup_free_ char *mask_text = NULL, *formatted = NULL, *padded = NULL;
        char line[256];
        unsigned n = 0;

        ck_assert_ptr_nonnull(f);
        ck_assert_uint_ge(topology_n_cpus(t), 104);
        while (fgets(line, sizeof line, f)) {
                unsigned irq;
                char m[128];

                if (sscanf(line, "/proc/irq/%u/smp_affinity:%127s", &irq, m) != 2)
                        continue;
                inv_add_irq(inv, irq, "legacy", false);
                free(mask_text);
                mask_text = strdup(m);
                n++;
        }
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(cpuset_parse_mask(mask_text, &mask, NULL), 0);
        ck_assert_uint_eq(cpuset_count(&mask), 52);
        ck_assert(
                cpuset_contains(&mask, 103) && cpuset_contains(&mask, 78) && !cpuset_contains(&mask, 77) &&
                !cpuset_contains(&mask, 64));

        add_irq_rule(
                c, "legacy", NULL, strv_make("legacy", NULL), (CpuSelector){.kind = CPU_SELECTOR_LITERAL},
                false);
        ck_assert_int_eq(cpuset_copy(&c->irq_rules[0].cpus.literal, &mask), 0);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        ck_assert_uint_eq(dp->n_irqs, 3);
        for (size_t i = 0; i < dp->n_irqs; i++)
                assert_set(&dp->irqs[i].cpus, &mask, "IRQ of the 104-CPU dump");
        ck_assert_int_eq(cpuset_format_mask(&dp->irqs[0].cpus, 104, &formatted), 0);
        ck_assert_int_ge(asprintf(&padded, "000000%s", mask_text), 0);
        ck_assert_str_eq(formatted, padded);
        ck_assert(strv_contains_substring(dp->irq_rules[0].explanation, "taken as written"));
}
END_TEST

/*
 * rps_flow_cnt is rfs: divided among the rx queues, but never 1, which some kernels refuse
 * with EINVAL: 16 entries over 8 queues is 2, 6 over 8 (and 1 over 1) is raised to
 * NETDEV_FLOW_CNT_MIN, 2.
 */
static uint32_t planned_flow_cnt(uint32_t rfs, unsigned n_rx) {
        _cleanup_(topology_freep) Topology *t = load_corpus("coral-lassen.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        const NetQueueAssignment *a;
        uint32_t cnt;

        inv_add_net(inv, "mq0", n_rx, 1, true, false);
        c->rfs_entries = rfs;
        add_net_rule(c, "mq0", SEL(.nodes = "0"), XPS_NONE, (CpuSelector){});
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);
        a = device_plan_find_queue(dp, "mq0", NET_QUEUE_RPS, 0);
        ck_assert_ptr_nonnull(a);
        ck_assert(a->has_flow_cnt);
        cnt = a->flow_cnt;
        for (unsigned q = 1; q < n_rx; q++)
                ck_assert_uint_eq(device_plan_find_queue(dp, "mq0", NET_QUEUE_RPS, q)->flow_cnt, cnt);
        return cnt;
}

START_TEST(test_flow_cnt_never_one) {
        ck_assert_uint_eq(planned_flow_cnt(16, 8), 2);
        ck_assert_uint_eq(planned_flow_cnt(6, 8), NETDEV_FLOW_CNT_MIN);
        ck_assert_uint_eq(planned_flow_cnt(8, 8), NETDEV_FLOW_CNT_MIN);
        ck_assert_uint_eq(planned_flow_cnt(1, 1), NETDEV_FLOW_CNT_MIN);
        ck_assert_uint_eq(planned_flow_cnt(4096, 4), 1024);
}
END_TEST

/*
 * coral-lassen (POWER9 SMT4, 160 PUs: 8-87 on node 0, 96-175 on node 8; enP5p1s0f0 on node 0):
 * RPS over 80 CPUs (8-87), XPS spread over 6 tx queues (80 >= 6: chunks), a literal XPS with
 * fewer CPUs than queues (round robin), and devices without RPS/XPS.
 */
START_TEST(test_masks_lassen) {
        _cleanup_(topology_freep) Topology *t = load_corpus("coral-lassen.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet node0 = node_cpus(t, "0"), all = CPUSET_NULL;
        _cleanup_free_ unsigned *order = NULL;
        _cleanup_free_ char *mask = NULL;
        size_t n = 0, C, Q = 6;
        const NetQueueAssignment *prev = NULL;

        inv_add_net(inv, "ib9", 1, 1, false, false);
        inv_add_net(inv, "enP5p1s0f1", 2, 5, true, true);
        inv_add_net(inv, "enP5p1s0f0", 8, 6, true, true);
        inv_add_net(inv, "sq0", 1, 1, true, false);
        c->rfs_entries = 32768;
        add_net_rule(c, "enP5p1s0f0", SEL(.near = "enP5p1s0f0"), XPS_SPREAD, (CpuSelector){});
        add_net_rule(c, "enP5p1s0f*", (CpuSelector){}, XPS_SELECTOR, sel_literal("8,9,12"));
        add_net_rule(c, "*", SEL(.nodes = "8"), XPS_SPREAD, (CpuSelector){});
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        assert_set_str(&node0, "8-87", "hand-derived (hwloc-calc node:0)");
        assert_set(&dp->net_rules[0].rps, &node0, "rps near enP5p1s0f0");
        ck_assert_int_eq(cpuset_format_mask(&dp->net_rules[0].rps, 176, &mask), 0);
        /* 176 bits: six 32-bit words; CPUs 8-87 set. */
        ck_assert_str_eq(mask, "00000000,00000000,00000000,00ffffff,ffffffff,ffffff00");
        for (unsigned q = 0; q < 8; q++) {
                const NetQueueAssignment *a = device_plan_find_queue(dp, "enP5p1s0f0", NET_QUEUE_RPS, q);

                ck_assert_ptr_nonnull(a);
                assert_set(&a->cpus, &node0, "rps queue");
                ck_assert_uint_eq(a->flow_cnt, 32768 / 8);
        }

        /* The XPS order computed here: cores by lowest CPU, PUs of a core together. */
        C = cpuset_count(&node0);
        order = calloc(C, sizeof(unsigned));
        ck_assert_ptr_nonnull(order);
        CPUSET_FOREACH (cpu, &node0) {
                _cleanup_cpuset_ CpuSet sib = CPUSET_NULL;
                bool done = false;

                for (size_t i = 0; i < n; i++)
                        done = done || order[i] == (unsigned)cpu;
                if (done)
                        continue;
                ck_assert_int_eq(topology_core_siblings(t, (unsigned)cpu, &sib), 0);
                ck_assert_uint_eq(cpuset_count(&sib), 4);
                CPUSET_FOREACH (s, &sib)
                        order[n++] = (unsigned)s;
        }
        ck_assert_uint_eq(n, C);
        for (size_t q = 0; q < Q; q++) {
                const NetQueueAssignment *a =
                        device_plan_find_queue(dp, "enP5p1s0f0", NET_QUEUE_XPS, (unsigned)q);
                _cleanup_cpuset_ CpuSet want = CPUSET_NULL;

                ck_assert_ptr_nonnull(a);
                for (size_t j = q * C / Q; j < (q + 1) * C / Q; j++)
                        ck_assert_int_eq(cpuset_add(&want, order[j]), 0);
                assert_set(&a->cpus, &want, "xps chunk");
                ck_assert(!cpuset_intersects(&all, &a->cpus));
                ck_assert_int_eq(cpuset_or(&all, &a->cpus), 0);
                ck_assert(!a->has_flow_cnt);
        }
        assert_set(&all, &node0, "xps chunks cover the set");
        assert_set_str(&device_plan_find_queue(dp, "enP5p1s0f0", NET_QUEUE_XPS, 0)->cpus, "8-20", "tx-0");
        assert_set_str(&device_plan_find_queue(dp, "enP5p1s0f0", NET_QUEUE_XPS, 5)->cpus, "74-87", "tx-5");

        /* 3 CPUs over 5 queues: round robin in core order 8,9 (core 8-11), 12. */
        static const char *const rr[] = {"8", "9", "12", "8", "9"};
        for (unsigned q = 0; q < 5; q++)
                assert_set_str(
                        &device_plan_find_queue(dp, "enP5p1s0f1", NET_QUEUE_XPS, q)->cpus, rr[q],
                        "round robin");
        ck_assert_ptr_null(device_plan_find_queue(dp, "enP5p1s0f1", NET_QUEUE_RPS, 0));

        /* Rule 3: node 8 = 96-175; ib9 has neither, sq0 one tx queue. */
        assert_set_str(&dp->net_rules[2].rps, "96-175", "node 8");
        ck_assert(strv_contains_substring(dp->net_rules[2].warnings, "ib9: no RPS support"));
        ck_assert(strv_contains_substring(dp->net_rules[2].warnings, "sq0: one tx queue"));
        ck_assert(!strv_contains_substring(dp->net_rules[2].warnings, "sq0: no RPS"));
        assert_set_str(&device_plan_find_queue(dp, "sq0", NET_QUEUE_RPS, 0)->cpus, "96-175", "sq0 rps");
        ck_assert_uint_eq(device_plan_find_queue(dp, "sq0", NET_QUEUE_RPS, 0)->flow_cnt, 32768);
        ck_assert_ptr_null(device_plan_find_queue(dp, "sq0", NET_QUEUE_XPS, 0));
        ck_assert_ptr_null(device_plan_find_queue(dp, "ib9", NET_QUEUE_RPS, 0));

        /* Sorted by device, RPS before XPS, queue number. */
        ck_assert_uint_eq(dp->n_queues, 8 + 6 + 5 + 1);
        for (size_t i = 0; i < dp->n_queues; prev = &dp->queues[i], i++) {
                int d;

                if (!prev)
                        continue;
                d = strcmp(prev->device, dp->queues[i].device);
                ck_assert_int_le(d, 0);
                if (d == 0) {
                        ck_assert_int_le(prev->kind, dp->queues[i].kind);
                        if (prev->kind == dp->queues[i].kind)
                                ck_assert_uint_lt(prev->queue, dp->queues[i].queue);
                }
        }
}
END_TEST

/* ---- explanations stay short ---- */

/* The line naming a net: rule's devices: their count and the first four names. */
START_TEST(test_net_explanation_short) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL, *dp2 = NULL;
        _cleanup_strv_free_ char **before = NULL;

        ck_assert_int_eq(topology_load_synthetic("pack:1 core:2 pu:1", &t), 0);
        for (unsigned i = 6; i-- > 0;) {
                char name[16];

                snprintf(name, sizeof(name), "vt%u", i);
                inv_add_net(inv, name, 4, 4, true, true);
        }
        inv_add_net(inv, "eth0", 1, 1, true, false);
        add_net_rule(c, "vt*", sel_literal("1"), XPS_NONE, (CpuSelector){});
        add_net_rule(c, "eth*", SEL(.near = "nosuchdev"), XPS_NONE, (CpuSelector){});
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        ck_assert(strv_contains_substring(dp->net_rules[0].explanation, "6 devices: vt0, vt1, vt2, vt3, …"));
        ck_assert(!strv_contains_substring(dp->net_rules[0].explanation, "vt4"));
        ck_assert(!strv_contains_substring(dp->net_rules[0].explanation, "vt5"));
        ck_assert_uint_eq(dp->n_queues, 6 * 4); /* every device placed, named or not */
        ck_assert_ptr_nonnull(dp->net_rules[1].pending_reason);
        ck_assert(strv_contains_substring(
                dp->net_rules[1].explanation, "1 device: eth0 (left alone: pending)"));

        /* One more veth past the fourth: only the count changes. */
        before = strv_copy(dp->net_rules[0].explanation);
        ck_assert_ptr_nonnull(before);
        inv_add_net(inv, "vt6", 1, 1, true, false);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp2), 0);
        ck_assert(
                strv_contains_substring(dp2->net_rules[0].explanation, "7 devices: vt0, vt1, vt2, vt3, …"));
        ck_assert_uint_eq(strv_length(before), strv_length(dp2->net_rules[0].explanation));
}
END_TEST

/* ---- exclusive holdings ---- */

START_TEST(test_exclusive_holdings) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet want = node_cpus(t, "1");
        const PolicyPlan *db;

        inv_add_irq(inv, 50, "eth0-rx", false);
        inv_add_irq(inv, 51, "eth0-tx", false);
        inv_add_net(inv, "eth0", 2, 4, true, true);
        add_policy(c, "db", SEL(.nodes = "1", .cores = 2, .exclusive = true));
        add_policy(c, "web", SEL(.nodes = "0", .cores = 1, .exclusive = true));
        add_irq_rule(c, "rx", NULL, strv_make("*-rx", NULL), SEL(.near = "eth0"), false);
        add_irq_rule(c, "tx", NULL, strv_make("*-tx", NULL), sel_literal("8-11"), false);
        add_net_rule(c, "eth0", SEL(.nodes = "1"), XPS_SELECTOR, sel_literal("8-11,24-27"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        db = plan_find_policy(p, "db");
        ck_assert_uint_eq(cpuset_count(&db->exclusive_cpus), 4);
        ck_assert(cpuset_is_subset(&db->exclusive_cpus, &want));
        cpuset_andnot(&want, &db->exclusive_cpus);

        assert_set(&dp->irq_rules[0].cpus, &want, "mapping without db's holdings");
        assert_set(&device_plan_find_irq(dp, 50)->cpus, &want, "IRQ 50");
        ck_assert(strv_contains_substring(dp->irq_rules[0].explanation, "held by exclusive policy \"db\""));
        /* A literal list is taken as written, with a warning. */
        assert_set_str(&dp->irq_rules[1].cpus, "8-11", "literal");
        ck_assert(cpuset_intersects(&dp->irq_rules[1].cpus, &db->exclusive_cpus));
        ck_assert(strv_contains_substring(dp->irq_rules[1].warnings, "held by exclusive policy \"db\""));
        assert_set(&dp->net_rules[0].rps, &want, "rps mapping without db's holdings");
        assert_set_str(&dp->net_rules[0].xps, "8-11,24-27", "xps literal");
        assert_set_str(&device_plan_find_queue(dp, "eth0", NET_QUEUE_XPS, 0)->cpus, "8,24", "tx-0");
        assert_set_str(&device_plan_find_queue(dp, "eth0", NET_QUEUE_XPS, 3)->cpus, "11,27", "tx-3");

        /* A mapping that only exclusive CPUs would satisfy is pending. */
        device_plan_free(TAKE_PTR(dp));
        plan_free(TAKE_PTR(p));
        config_free(TAKE_PTR(c));
        c = config_new();
        add_policy(c, "all1", SEL(.nodes = "1", .exclusive = true));
        add_irq_rule(c, "rx", NULL, strv_make("*-rx", NULL), SEL(.near = "eth0"), false);
        add_net_rule(c, "eth0", (CpuSelector){}, XPS_SPREAD, (CpuSelector){});
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);
        ck_assert_ptr_nonnull(dp->irq_rules[0].pending_reason);
        ck_assert_msg(
                strstr(dp->irq_rules[0].pending_reason, "held by exclusive policy \"all1\""), "reason: %s",
                dp->irq_rules[0].pending_reason);
        ck_assert(cpuset_is_empty(&device_plan_find_irq(dp, 50)->cpus));
        ck_assert_ptr_null(device_plan_find_irq(dp, 51));
        /* xps: spread without rps: every online CPU but node 1. */
        cpuset_done(&want);
        want = node_cpus(t, "0");
        assert_set(&dp->net_rules[0].xps, &want, "xps: spread without rps:");
}
END_TEST

/* ---- device_inventory_load() on a fixture tree ---- */

static void write_file(const char *dir, const char *rel, const char *text, mode_t mode) {
        _cleanup_free_ char *path = NULL;
        _cleanup_fclose_ FILE *f = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, rel), 0);
        f = fopen(path, "we");
        ck_assert_msg(f, "cannot create %s", path);
        fputs(text, f);
        ck_assert_int_eq(fflush(f), 0);
        ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(test_inventory_fixture) {
        char dir[] = "/tmp/test-devplan-root-XXXXXX";
        _cleanup_free_ char *dump = corpus_path("interrupts", "amzn-drivers-316-ena-4cpu-blank-names.txt");
        _cleanup_(device_inventory_freep) DeviceInventory *loaded = NULL;
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_free_ char *error = NULL;
        const DeviceIrqLookup *l;
        const DeviceIrq *irq;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        run("mkdir -p %1$s/proc/irq %1$s/sys/class/net %1$s/sys/devices/system/cpu "
            "%1$s/sys/devices/pci0000:00/0000:00:05.0/msi_irqs %1$s/sys/bus/pci/devices "
            "%1$s/sys/devices/virtual/net/lo/queues/rx-0 %1$s/sys/devices/virtual/net/lo/queues/tx-0 && "
            "cp %2$s %1$s/proc/interrupts && "
            "for i in 65 66 67 68 69; do mkdir %1$s/proc/irq/$i && echo 0-3 > "
            "%1$s/proc/irq/$i/smp_affinity_list && "
            "echo f > %1$s/proc/irq/$i/smp_affinity && touch "
            "%1$s/sys/devices/pci0000:00/0000:00:05.0/msi_irqs/$i; done && "
            "ln -s ../../../devices/pci0000:00/0000:00:05.0 %1$s/sys/bus/pci/devices/0000:00:05.0 && "
            "mkdir -p %1$s/sys/devices/pci0000:00/0000:00:05.0/net/eth0 && "
            "ln -s ../../devices/pci0000:00/0000:00:05.0/net/eth0 %1$s/sys/class/net/eth0 && "
            "ln -s ../../devices/virtual/net/lo %1$s/sys/class/net/lo && "
            "ln -s ../../../0000:00:05.0 %1$s/sys/devices/pci0000:00/0000:00:05.0/net/eth0/device && "
            "echo 2 > %1$s/sys/class/net/eth0/ifindex && echo 1 > %1$s/sys/class/net/lo/ifindex && "
            "for q in 0 1 2 3; do mkdir -p %1$s/sys/class/net/eth0/queues/rx-$q "
            "%1$s/sys/class/net/eth0/queues/tx-$q && "
            "echo 0 > %1$s/sys/class/net/eth0/queues/rx-$q/rps_cpus && echo 0 > "
            "%1$s/sys/class/net/eth0/queues/rx-$q/rps_flow_cnt && "
            "echo 0 > %1$s/sys/class/net/eth0/queues/tx-$q/xps_cpus; done && "
            "echo 0 > %1$s/sys/class/net/lo/queues/rx-0/rps_cpus",
            dir, dump);
        write_file(dir, "sys/devices/system/cpu/possible", "0-103\n", 0444);
        write_file(dir, "proc/irq/66/smp_affinity", "1\n", 0444); /* kernel-managed */

        add_irq_rule(c, "nic", strv_make("eth0", "eth9", NULL), NULL, sel_literal("1"), false);
        add_irq_rule(c, "virt", strv_make("lo", "eth0", NULL), NULL, sel_literal("1"), false);
        ck_assert_int_eq(device_inventory_load(dir, c, &loaded, &error), 0);

        /* IRQs: the numeric lines of the dump (65-69), names, blank names, the managed one. */
        ck_assert_uint_eq(loaded->n_irqs, 5);
        for (unsigned i = 0; i < 5; i++)
                ck_assert_uint_eq(loaded->irqs[i].irq, 65 + i);
        irq = device_inventory_find_irq(loaded, 65);
        ck_assert_str_eq(irq->actions, "ena-mgmnt@pci:0000:27:00.0");
        ck_assert_str_eq(irq->names[0], "ena-mgmnt@pci:0000:27:00.0");
        ck_assert_ptr_null(irq->names[1]);
        ck_assert(!irq->managed);
        irq = device_inventory_find_irq(loaded, 66);
        ck_assert_str_eq(irq->names[0], "enp39s0-Tx-Rx-0");
        ck_assert(irq->managed);
        irq = device_inventory_find_irq(loaded, 68);
        ck_assert_str_eq(irq->actions, "");
        ck_assert_ptr_nonnull(irq->names);
        ck_assert_ptr_null(irq->names[0]);
        ck_assert(!irq->managed);
        ck_assert_ptr_null(device_inventory_find_irq(loaded, 70));

        /* Lookups: one per distinct device. */
        ck_assert_uint_eq(loaded->n_lookups, 3);
        l = device_inventory_find_lookup(loaded, "eth0");
        ck_assert_ptr_nonnull(l);
        ck_assert_int_eq(l->error, 0);
        ck_assert_uint_eq(l->n_irqs, 5);
        for (unsigned i = 0; i < 5; i++)
                ck_assert_uint_eq(l->irqs[i], 65 + i);
        ck_assert_int_eq(device_inventory_find_lookup(loaded, "eth9")->error, -ENODEV);
        ck_assert_int_eq(device_inventory_find_lookup(loaded, "lo")->error, -ENXIO);
        ck_assert_ptr_null(device_inventory_find_lookup(loaded, "lo")->irqs);

        /* Interfaces, sorted, with their queues. */
        ck_assert_uint_eq(loaded->n_nets, 2);
        ck_assert_str_eq(loaded->nets[0].name, "eth0");
        ck_assert_uint_eq(loaded->nets[0].queues.n_rx, 4);
        ck_assert_uint_eq(loaded->nets[0].queues.n_tx, 4);
        ck_assert(loaded->nets[0].queues.has_rps);
        ck_assert(loaded->nets[0].queues.has_xps);
        ck_assert_int_eq(loaded->nets[0].queues.ifindex, 2);
        ck_assert_str_eq(loaded->nets[1].name, "lo");
        ck_assert_uint_eq(loaded->nets[1].queues.n_rx, 1);
        ck_assert(loaded->nets[1].queues.has_rps);
        ck_assert(!loaded->nets[1].queues.has_xps);
        ck_assert_uint_eq(loaded->mask_bits, 104);

        /* The loaded inventory plans: rule "nic" wins every IRQ of eth0, the managed one kept. */
        {
                _cleanup_(topology_freep) Topology *t = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;
                _cleanup_(device_plan_freep) DevicePlan *dp = NULL;

                ck_assert_int_eq(topology_load_synthetic("pack:1 core:2 pu:2", &t), 0);
                ck_assert_int_eq(plan_new(c, t, &p), 0);
                ck_assert_int_eq(device_plan_new(c, p, t, loaded, &dp), 0);
                ck_assert_uint_eq(dp->n_irqs, 5);
                ck_assert_uint_eq(dp->irq_rules[0].n_matched, 5);
                ck_assert_uint_eq(dp->irq_rules[1].n_matched, 0);
                ck_assert(device_plan_find_irq(dp, 66)->managed);
                ck_assert(cpuset_is_empty(&device_plan_find_irq(dp, 66)->cpus));
                assert_set_str(&device_plan_find_irq(dp, 67)->cpus, "1", "IRQ 67");
        }

        /* Identity: "CHIP HWIRQ" as the dump prints them, blank names included; the five
         * vectors of the one PCI function all differ. */
        ck_assert_str_eq(device_inventory_find_irq(loaded, 65)->identity, "PCI-MSIX-0000:27:00.0 0-edge");
        ck_assert_str_eq(device_inventory_find_irq(loaded, 68)->identity, "PCI-MSIX-0000:27:00.0 3-edge");
        for (size_t i = 0; i < loaded->n_irqs; i++) {
                ck_assert_ptr_nonnull(loaded->irqs[i].identity);
                ck_assert(*loaded->irqs[i].identity);
                for (size_t j = 0; j < i; j++)
                        ck_assert_str_ne(loaded->irqs[i].identity, loaded->irqs[j].identity);
        }
        ck_assert_ptr_null(loaded->irq_warning);
        ck_assert_int_eq(loaded->irq_error, 0);

        /* A torn line (three counts under a two-CPU header: a CPU came online while the kernel
         * printed) is skipped and said, naming the file and the line; the rest is loaded. */
        write_file(
                dir, "proc/interrupts",
                "           CPU0       CPU1\n"
                " 65:       8362          0  PCI-MSIX-0000:27:00.0   0-edge      "
                "ena-mgmnt@pci:0000:27:00.0\n"
                " 66:        261          0          7  PCI-MSIX-0000:27:00.0   1-edge      "
                "enp39s0-Tx-Rx-0\n"
                " 67:          0        163  PCI-MSIX-0000:27:00.0   2-edge\n",
                0644);
        device_inventory_free(TAKE_PTR(loaded));
        ck_assert_int_eq(device_inventory_load(dir, c, &loaded, &error), 0);
        ck_assert_uint_eq(loaded->n_irqs, 2);
        ck_assert_ptr_nonnull(device_inventory_find_irq(loaded, 65));
        ck_assert_ptr_null(device_inventory_find_irq(loaded, 66));
        ck_assert_str_eq(device_inventory_find_irq(loaded, 67)->identity, "PCI-MSIX-0000:27:00.0 2-edge");
        ck_assert_int_eq(loaded->irq_error, 0);
        ck_assert_ptr_nonnull(loaded->irq_warning);
        ck_assert_msg(
                strstr(loaded->irq_warning,
                       "/proc/interrupts: 1 unparsable line skipped, the first: line 3"),
                "warning: %s", loaded->irq_warning);
        ck_assert_uint_eq(loaded->n_nets, 2);

        /* Missing: IRQs empty, the error kept, devices and lookups loaded all the same. */
        run("rm %s/proc/interrupts", dir);
        device_inventory_free(TAKE_PTR(loaded));
        ck_assert_int_eq(device_inventory_load(dir, c, &loaded, NULL), 0);
        ck_assert_int_eq(loaded->irq_error, -ENOENT);
        ck_assert_uint_eq(loaded->n_irqs, 0);
        ck_assert_ptr_nonnull(loaded->irq_warning);
        ck_assert_msg(
                strstr(loaded->irq_warning, "/proc/interrupts: No such file or directory"), "warning: %s",
                loaded->irq_warning);
        ck_assert_uint_eq(loaded->n_nets, 2);
        ck_assert_str_eq(loaded->nets[0].name, "eth0");
        ck_assert_uint_eq(loaded->n_lookups, 3);
        ck_assert_uint_eq(device_inventory_find_lookup(loaded, "eth0")->n_irqs, 5);
        ck_assert_uint_eq(loaded->mask_bits, 104);
        ck_assert_ptr_null(error); /* never written any more */

        run("rm -rf '%s'", dir);
}
END_TEST

/*
 * Identity on the old chip format (rbench: "IR-PCI-MSI-edge" and no hwirq column): "CHIP
 * ACTIONS"; p7p1's eight queue vectors differ. A line with nothing after its counts: "".
 */
START_TEST(test_inventory_identity_old_format) {
        char dir[] = "/tmp/test-devplan-ident-XXXXXX";
        _cleanup_free_ char *dump = corpus_path("interrupts", "rbench-interrupts-40cpu-xeon-ixgbe.txt");
        _cleanup_(device_inventory_freep) DeviceInventory *loaded = NULL;
        _cleanup_(config_freep) Config *c = config_new();
        const DeviceIrq *irq;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        run("mkdir -p %1$s/proc %1$s/sys/class/net && cp %2$s %1$s/proc/interrupts", dir, dump);
        ck_assert_int_eq(device_inventory_load(dir, c, &loaded, NULL), 0);
        ck_assert_int_eq(loaded->irq_error, 0);
        ck_assert_ptr_null(loaded->irq_warning);
        ck_assert_uint_ge(loaded->n_irqs, 200);
        ck_assert_str_eq(device_inventory_find_irq(loaded, 128)->identity, "IR-PCI-MSI-edge p7p1-TxRx-0");
        ck_assert_str_eq(device_inventory_find_irq(loaded, 0)->identity, "IR-IO-APIC-edge timer");
        ck_assert_str_eq(
                device_inventory_find_irq(loaded, 230)->identity,
                "IR-PCI-MSI-edge mlx5_async@pci:0000:3b:00.0");
        for (unsigned a = 128; a <= 135; a++)
                for (unsigned b = 128; b < a; b++)
                        ck_assert_str_ne(
                                device_inventory_find_irq(loaded, a)->identity,
                                device_inventory_find_irq(loaded, b)->identity);
        ck_assert_uint_eq(loaded->n_nets, 0);

        /* device_inventory_irq_identity() on the parsed lines gives the inventory's identities. */
        {
                _cleanup_(interrupt_table_freep) InterruptTable *table = NULL;
                size_t n = 0;

                ck_assert_int_eq(interrupts_read(dump, &table, NULL), 0);
                for (size_t i = 0; i < table->n_lines; i++) {
                        _cleanup_free_ char *id = NULL;

                        if (!table->lines[i].numeric)
                                continue;
                        ck_assert_int_eq(device_inventory_irq_identity(&table->lines[i], &id), 0);
                        ck_assert_str_eq(
                                id, device_inventory_find_irq(loaded, table->lines[i].irq)->identity);
                        n++;
                }
                ck_assert_uint_eq(n, loaded->n_irqs);
        }

        /* Nothing after the counts; a blank name without hwirq keeps the chip. */
        write_file(
                dir, "proc/interrupts",
                "           CPU0       CPU1\n"
                "  3:          0          0\n"
                " 67:          0        163  IR-PCI-MSI-edge\n",
                0644);
        device_inventory_free(TAKE_PTR(loaded));
        ck_assert_int_eq(device_inventory_load(dir, c, &loaded, NULL), 0);
        irq = device_inventory_find_irq(loaded, 3);
        ck_assert_ptr_nonnull(irq);
        ck_assert_str_eq(irq->identity, "");
        ck_assert_str_eq(device_inventory_find_irq(loaded, 67)->identity, "IR-PCI-MSI-edge");
        ck_assert_str_eq(device_inventory_find_irq(loaded, 67)->actions, "");

        run("rm -rf '%s'", dir);
}
END_TEST

/* ---- device_inventory_load_offline(): an XML topology and a saved /proc/interrupts ---- */

/* The IRQs of inv (hand-parsed dump) whose name is device or begins with "device-": ascending. */
static size_t dump_irqs_named(const DeviceInventory *inv, const char *device, unsigned *ret, size_t max) {
        size_t n = 0, len = strlen(device);

        for (size_t i = 0; i < inv->n_irqs; i++) {
                const char *name = inv->irqs[i].actions;

                if (strncmp(name, device, len) == 0 && (name[len] == '\0' || name[len] == '-')) {
                        ck_assert_uint_lt(n, max);
                        ret[n++] = inv->irqs[i].irq;
                }
        }
        return n;
}

static void assert_lookup_irqs(const DeviceIrqLookup *l, const unsigned *want, size_t n) {
        ck_assert_ptr_nonnull(l);
        ck_assert_int_eq(l->error, 0);
        ck_assert_msg(l->n_irqs == n, "%s: %zu IRQs, want %zu", l->device, l->n_irqs, n);
        for (size_t i = 0; i < n; i++)
                ck_assert_uint_eq(l->irqs[i], want[i]);
}

/*
 * The 24em64t XML (eth0, eth1, eth2, ib0, mlx4_0: INDEX.md) with the irqcli ixgbe dump (eth0's
 * and eth1's queue vectors by name): the devices come from the XML, the IRQs from the dump,
 * each device's IRQs by name; the spread plan gives eth0's queue q the q-th CPU of the order.
 * Expected IRQs come from the dump through this file's own parser (inv_from_dump()).
 */
START_TEST(test_inventory_offline) {
        _cleanup_(topology_freep) Topology *t = load_corpus("24em64t-2n6c2t-pci.xml");
        _cleanup_free_ char *dump = corpus_path("interrupts", "irqcli-interrupts-2col-ixgbe-32q.txt");
        _cleanup_(device_inventory_freep) DeviceInventory *hand =
                inv_from_dump("irqcli-interrupts-2col-ixgbe-32q.txt", NULL);
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL, *bare = NULL, *queues = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp_queues = NULL;
        char root[] = "/tmp/test-devplan-sysfs-XXXXXX";
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_strv_free_ char **devices = NULL;
        _cleanup_free_ char *pci = NULL;
        unsigned want[64];
        size_t n, q = 0;
        const DeviceIrqLookup *l;
        const IrqRulePlan *rp;

        ck_assert_int_eq(topology_network_devices(t, &devices), 0);
        ck_assert_uint_eq(strv_length(devices), 5);
        ck_assert_str_eq(devices[0], "eth0");
        ck_assert_int_eq(topology_device_pci_address(t, "eth0", &pci), 0);
        ck_assert_int_eq(topology_device_pci_address(t, "eno9", &pci), -ENODEV);

        add_irq_rule(c, "eth0", strv_make("eth0", "eno9", NULL), NULL, SEL(.near = "eth0"), true);
        add_irq_rule(c, "eth1", strv_make("eth1", NULL), NULL, sel_literal("0"), false);
        ck_assert_int_eq(device_inventory_load_offline(t, "server.xml", dump, NULL, c, &inv, NULL), 0);
        ck_assert(inv->offline && !inv->irqs_unknown && inv->nets_unknown);
        ck_assert_uint_eq(inv->n_nets, 0);
        ck_assert_uint_eq(inv->n_irqs, hand->n_irqs);
        for (size_t i = 0; i < hand->n_irqs; i++) {
                const DeviceIrq *irq = device_inventory_find_irq(inv, hand->irqs[i].irq);

                ck_assert_ptr_nonnull(irq);
                ck_assert_str_eq(irq->actions, hand->irqs[i].actions);
                ck_assert(!irq->managed);
        }
        ck_assert(strv_length(inv->offline_devices) == strv_length(devices));

        /* eth0: its queue vectors and its misc vector "eth0"; eth1: its own, none of eth0's. */
        n = dump_irqs_named(hand, "eth0", want, ELEMENTSOF(want));
        ck_assert_uint_eq(n, 33);
        assert_lookup_irqs(device_inventory_find_lookup(inv, "eth0"), want, n);
        l = device_inventory_find_lookup(inv, "eth0");
        ck_assert_msg(
                l->note && strstr(l->note, "in server.xml at PCI ") && strstr(l->note, pci), "%s", l->note);
        n = dump_irqs_named(hand, "eth1", want, ELEMENTSOF(want));
        ck_assert_uint_eq(n, 32);
        assert_lookup_irqs(device_inventory_find_lookup(inv, "eth1"), want, n);

        /* A device the XML doesn't list: named, with the devices it does list. */
        l = device_inventory_find_lookup(inv, "eno9");
        ck_assert_ptr_nonnull(l);
        ck_assert_int_eq(l->error, -ENODEV);
        ck_assert_msg(l->note && strstr(l->note, "not in server.xml (devices there: "), "%s", l->note);
        STRV_FOREACH (d, devices)
                ck_assert_msg(strstr(l->note, *d), "%s not in \"%s\"", *d, l->note);

        /* The plan: eth0's queue vector q (eth0-TxRx-q) takes slot q of the spread order. */
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);
        rp = &dp->irq_rules[0];
        ck_assert_ptr_null(rp->pending_reason);
        ck_assert_uint_eq(rp->n_matched, 33);
        for (size_t i = 0; i < hand->n_irqs; i++) {
                char name[32];

                snprintf(name, sizeof(name), "eth0-TxRx-%zu", q);
                if (streq(hand->irqs[i].actions, name))
                        assert_spread_slot(dp, rp, hand->irqs[i].irq, q++);
        }
        ck_assert_uint_eq(q, 32);
        ck_assert(strv_contains_substring(rp->explanation, "device eno9: not in server.xml"));
        ck_assert_uint_eq(dp->irq_rules[1].n_matched, 32);

        /* With a saved copy of /sys/class/net/DEV/queues: eth0's 32 rx queues (as many as the dump
         * has queue vectors) each get the rule's RPS set; eth1's single tx queue's xps_cpus is
         * empty, as cp(1) leaves a file the kernel refused to read: no XPS there. */
        ck_assert_ptr_nonnull(mkdtemp(root));
        run("for q in $(seq 0 31); do d=%1$s/sys/class/net/eth0/queues; mkdir -p $d/rx-$q $d/tx-$q && "
            "echo 0 > $d/rx-$q/rps_cpus && echo 0 > $d/tx-$q/xps_cpus; done && "
            "mkdir -p %1$s/sys/class/net/eth1/queues/rx-0 %1$s/sys/class/net/eth1/queues/tx-0 && "
            "echo 0 > %1$s/sys/class/net/eth1/queues/rx-0/rps_cpus && "
            ": > %1$s/sys/class/net/eth1/queues/tx-0/xps_cpus",
            root);
        add_net_rule(c, "eth*", SEL(.near = "eth0"), XPS_NONE, (CpuSelector){});
        ck_assert_int_eq(device_inventory_load_offline(t, "server.xml", dump, root, c, &queues, NULL), 0);
        ck_assert(!queues->nets_unknown);
        ck_assert_uint_eq(queues->n_nets, 2);
        ck_assert_str_eq(queues->nets[0].name, "eth0");
        ck_assert_uint_eq(queues->nets[0].queues.n_rx, 32);
        ck_assert(queues->nets[0].queues.has_xps);
        ck_assert(!queues->nets[1].queues.has_xps);
        plan_free(p);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, queues, &dp_queues), 0);
        for (unsigned k = 0; k < 32; k++) {
                const NetQueueAssignment *a = device_plan_find_queue(dp_queues, "eth0", NET_QUEUE_RPS, k);

                ck_assert_msg(a, "eth0 rx-%u not planned", k);
                assert_set(&a->cpus, &dp_queues->net_rules[0].rps, "eth0 rx queue");
        }
        run("rm -rf '%s'", root);

        /* Without a saved /proc/interrupts: the devices, no IRQs, and it says so. */
        ck_assert_int_eq(device_inventory_load_offline(t, "server.xml", NULL, NULL, c, &bare, NULL), 0);
        ck_assert(bare->irqs_unknown);
        ck_assert_uint_eq(bare->n_irqs, 0);
        l = device_inventory_find_lookup(bare, "eth0");
        ck_assert_int_eq(l->error, 0);
        ck_assert_msg(strstr(l->note, "its IRQs not known"), "%s", l->note);
}
END_TEST

/*
 * Matching by PCI address: a dump derived from the ENA one (amzn-drivers-316), its PCI address
 * replaced by eth0's in the 24em64t XML. Vectors with blank names are the device's by their chip
 * "PCI-MSIX-ADDRESS"; "ena-mgmnt@pci:ADDRESS" by the address after '@'; another address is not.
 */
START_TEST(test_inventory_offline_pci) {
        _cleanup_(topology_freep) Topology *t = load_corpus("24em64t-2n6c2t-pci.xml");
        _cleanup_free_ char *src = corpus_path("interrupts", "amzn-drivers-316-ena-4cpu-blank-names.txt");
        _cleanup_(device_inventory_freep) DeviceInventory *hand =
                inv_from_dump("amzn-drivers-316-ena-4cpu-blank-names.txt", NULL);
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_free_ char *pci = NULL, *path = NULL;
        char dir[] = "/tmp/test-devplan-offline-XXXXXX";
        const DeviceIrqLookup *l;

        ck_assert_int_eq(topology_device_pci_address(t, "eth1", &pci), 0);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(asprintf(&path, "%s/interrupts", dir), 0);
        run("sed 's/0000:27:00.0/%s/g' %s > %s && echo ' 99:  1  0  0  0  PCI-MSIX-0000:ff:1f.7   0-edge  "
            "other@pci:0000:ff:1f.7' >> %s",
            pci, src, path, path);

        add_irq_rule(c, "by-address", strv_make("eth1", NULL), NULL, sel_literal("0"), false);
        ck_assert_int_eq(device_inventory_load_offline(t, "server.xml", path, NULL, c, &inv, NULL), 0);
        l = device_inventory_find_lookup(inv, "eth1");
        ck_assert_ptr_nonnull(l);
        ck_assert_int_eq(l->error, 0);
        /* Every IRQ of the ENA dump, none of the added one. */
        ck_assert_uint_eq(l->n_irqs, hand->n_irqs);
        for (size_t i = 0; i < hand->n_irqs; i++)
                ck_assert_uint_eq(l->irqs[i], hand->irqs[i].irq);
        run("rm -rf '%s'", dir);
}
END_TEST

/*
 * The kubelet's exclusive CPUs (3 and 5) get no IRQs from a selector mapping (explained, naming
 * the pod and container), and no RPS/XPS either; a literal naming one is taken as written, with
 * a warning. Synthetic "pack:1 core:4 pu:2":
 * core k = CPUs 2k, 2k+1.
 */
START_TEST(test_kubelet_exclusive) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *k = NULL;
        const char *json = "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-2,4,6-7\",\"entries\":{\"pod-"
                           "a\":{\"db\":\"3\","
                           "\"web\":\"5\"}}}";
        const unsigned eth0[] = {40};
        const char *want = "held by the kubelet's CPU manager: 3 (pod pod-a container db), 5 (pod pod-a "
                           "container web)";

        ck_assert_int_eq(topology_load_synthetic("pack:1 core:4 pu:2", &t), 0);
        ck_assert_int_eq(kubelet_cpu_state_parse("state", json, strlen(json), &k, NULL), 0);
        inv_add_irq(inv, 40, "eth0-rx-0", false);
        inv_add_irq(inv, 41, "timer-x", false);
        inv_add_lookup(inv, "eth0", 0, eth0, ELEMENTSOF(eth0));
        inv_add_net(inv, "eth0", 1, 1, true, true);
        add_irq_rule(c, "nic", strv_make("eth0", NULL), NULL, SEL(), false);
        add_irq_rule(c, "timer", NULL, strv_make("timer-*", NULL), sel_literal("3-4"), false);
        add_net_rule(c, "eth0", SEL(), XPS_SPREAD, (CpuSelector){});
        ck_assert_int_eq(plan_new_with(c, t, &(PlanInputs){.kubelet = k}, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        assert_set_str(&dp->irq_rules[0].cpus, "0-2,4,6-7", "nic");
        ck_assert(strv_contains_substring(dp->irq_rules[0].explanation, want));
        assert_set_str(&dp->irq_rules[1].cpus, "3-4", "timer: taken as written");
        ck_assert(strv_contains_substring(
                dp->irq_rules[1].warnings,
                "cpu-list 3-4 overlaps CPU 3 held by the kubelet's CPU manager: 3 (pod pod-a container "
                "db)"));
        ck_assert_ptr_null(dp->irq_rules[0].pending_reason);
        assert_set_str(&dp->net_rules[0].rps, "0-2,4,6-7", "rps");
        assert_set_str(&dp->net_rules[0].xps, "0-2,4,6-7", "xps");
}
END_TEST

/* ---- avoid: the cores of process policies ---- */

/* s with avoid: names (NULL-terminated list; none: "avoid: []"). */
static CpuSelector sel_avoid(CpuSelector s, char **names) {
        s.has_avoid = true;
        s.avoid = names;
        s.n_avoid = strv_length(names);
        s.avoid_locations = calloc(MAX(s.n_avoid, 1U), sizeof(Location));
        ck_assert_ptr_nonnull(s.avoid_locations);
        return s;
}

/* The online PUs of the cores of cpus. */
static CpuSet cores_of(const Topology *t, const CpuSet *cpus) {
        _cleanup_cpuset_ CpuSet core = CPUSET_NULL;
        CpuSet cores = CPUSET_NULL;

        CPUSET_FOREACH (cpu, cpus) {
                ck_assert_int_eq(topology_core_siblings(t, (unsigned)cpu, &core), 0);
                ck_assert_int_eq(cpuset_or(&cores, &core), 0);
        }
        return cores;
}

/*
 * 32em64t: eth0 on node 1 (INDEX.md), 8 cores of 2 PUs there. The service "web" near eth0 takes
 * 2 cores, one PU of each (smt: one-per-core). IRQs near eth0 with avoid: [web] get node 1 without
 * both cores, the siblings too; without avoid: they share them, with a warning saying how to fix
 * it; avoid: [] says that is meant (no warning).
 */
START_TEST(test_avoid_policy_cores) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet node1 = node_cpus(t, "1"), web_cores = CPUSET_NULL, want = CPUSET_NULL,
                                shared = CPUSET_NULL;
        CpuSelector web = SEL(.near = "eth0", .cores = 2);
        const PolicyPlan *wp;

        web.smt = SMT_ONE_PER_CORE;
        inv_add_irq(inv, 40, "eth0-TxRx-0", false);
        inv_add_irq(inv, 41, "eth1-TxRx-0", false);
        inv_add_irq(inv, 42, "eth2-TxRx-0", false);
        inv_add_irq(inv, 43, "eth3-TxRx-0", false);
        inv_add_irq(inv, 44, "eth4-TxRx-0", false);
        inv_add_net(inv, "eth0", 4, 4, true, true);
        inv_add_net(inv, "eth1", 4, 4, true, true);
        add_policy(c, "web", web);
        add_irq_rule(
                c, "beside", NULL, strv_make("eth0-*", NULL),
                sel_avoid(SEL(.near = "eth0"), strv_make("web", NULL)), false);
        add_irq_rule(c, "on", NULL, strv_make("eth1-*", NULL), SEL(.near = "eth0"), false);
        add_irq_rule(
                c, "meant", NULL, strv_make("eth2-*", NULL), sel_avoid(SEL(.near = "eth0"), NULL), false);
        add_irq_rule(
                c, "count", NULL, strv_make("eth3-*", NULL),
                sel_avoid(SEL(.near = "eth0", .cores = 2), strv_make("web", NULL)), false);
        add_irq_rule(
                c, "too-many", NULL, strv_make("eth4-*", NULL),
                sel_avoid(SEL(.near = "eth0", .cores = 7), strv_make("web", NULL)), false);
        add_net_rule(
                c, "eth0", sel_avoid(SEL(.near = "eth0"), strv_make("web", NULL)), XPS_SPREAD,
                (CpuSelector){});
        add_net_rule(c, "eth1", SEL(.near = "eth0"), XPS_NONE, (CpuSelector){});
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        wp = plan_find_policy(p, "web");
        ck_assert_ptr_null(wp->pending_reason);
        ck_assert_uint_eq(cpuset_count(&wp->cpus), 2);
        web_cores = cores_of(t, &wp->cpus);
        ck_assert_uint_eq(cpuset_count(&web_cores), 4); /* the siblings count */
        ck_assert(cpuset_is_subset(&web_cores, &node1));
        ck_assert_int_eq(cpuset_copy(&want, &node1), 0);
        cpuset_andnot(&want, &web_cores);

        /* Beside: node 1 without web's two cores, both PUs of each. */
        assert_set(&dp->irq_rules[0].cpus, &want, "avoid: [web]");
        assert_set(&device_plan_find_irq(dp, 40)->cpus, &want, "IRQ 40");
        ck_assert(strv_contains_substring(dp->irq_rules[0].explanation, "avoid: policy \"web\": "));
        ck_assert(
                strv_contains_substring(dp->irq_rules[0].explanation, "(its CPUs and their SMT siblings)"));
        ck_assert(!strv_contains_substring(dp->irq_rules[0].warnings, "share cores"));
        assert_set(&dp->net_rules[0].rps, &want, "rps: avoid: [web]");
        assert_set(&dp->net_rules[0].xps, &want, "xps: spread over the rps: CPUs");
        ck_assert(!strv_contains_substring(dp->net_rules[0].warnings, "share cores"));

        /* On: the same cores as web, with a warning naming it and the fix. */
        assert_set(&dp->irq_rules[1].cpus, &node1, "no avoid:");
        ck_assert_int_eq(cpuset_copy(&shared, &web_cores), 0);
        {
                _cleanup_free_ char *l = cpuset_to_string(&shared), *w = NULL;

                ck_assert_int_ge(
                        asprintf(
                                &w,
                                "CPUs %s share cores with policy \"web\": add avoid: [web] to the selector "
                                "to keep them apart, or avoid: [] if that is meant",
                                l),
                        0);
                ck_assert_msg(
                        strv_contains_substring(dp->irq_rules[1].warnings, w), "want warning \"%s\"", w);
        }
        ck_assert(strv_contains_substring(dp->net_rules[1].warnings, "rps: CPUs "));
        ck_assert(strv_contains_substring(dp->net_rules[1].warnings, "add avoid: [web]"));

        /* Meant: avoid: [] shares, without a warning. */
        assert_set(&dp->irq_rules[2].cpus, &node1, "avoid: []");
        ck_assert(!strv_contains_substring(dp->irq_rules[2].warnings, "share cores"));

        /* A count is taken from what avoid: leaves: 2 whole cores of node 1, none of web's. */
        ck_assert_uint_eq(cpuset_count(&dp->irq_rules[3].cpus), 4);
        ck_assert(cpuset_is_subset(&dp->irq_rules[3].cpus, &want));
        ck_assert(!strv_contains_substring(dp->irq_rules[3].warnings, "share cores"));
        /* 7 cores: only 6 besides web's, so web's are kept, and said to be. */
        ck_assert_uint_eq(cpuset_count(&dp->irq_rules[4].cpus), 14);
        ck_assert(cpuset_intersects(&dp->irq_rules[4].cpus, &web_cores));
        ck_assert(strv_contains_substring(
                dp->irq_rules[4].explanation, "avoid: the count can't be met without"));
        ck_assert(strv_contains_substring(
                dp->irq_rules[4].warnings,
                "avoid: the count can't be met without the cores of policy \"web\""));
}
END_TEST

/*
 * avoid: prefers: when the policies' cores are all there is, the selection stays as it was, with
 * a note and a warning. A pending policy holds nothing. avoid: policies names every policy.
 */
START_TEST(test_avoid_fallback) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(device_inventory_freep) DeviceInventory *inv = inv_new();
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_cpuset_ CpuSet node1 = node_cpus(t, "1"), node0 = node_cpus(t, "0"), want = CPUSET_NULL;
        CpuSelector all = sel_avoid(SEL(), NULL);
        const PolicyPlan *one;

        all.avoid_policies = true;
        inv_add_irq(inv, 40, "eth0-TxRx-0", false);
        inv_add_irq(inv, 41, "eth1-TxRx-0", false);
        inv_add_irq(inv, 42, "eth2-TxRx-0", false);
        add_policy(c, "all1", SEL(.nodes = "1"));
        add_policy(c, "ghost", SEL(.nodes = "7"));
        add_policy(c, "one0", SEL(.nodes = "0", .cores = 1));
        add_irq_rule(
                c, "full", NULL, strv_make("eth0-*", NULL),
                sel_avoid(SEL(.near = "eth0"), strv_make("all1", NULL)), false);
        add_irq_rule(
                c, "pending", NULL, strv_make("eth1-*", NULL),
                sel_avoid(SEL(.nodes = "0"), strv_make("ghost", NULL)), false);
        add_irq_rule(c, "all", NULL, strv_make("eth2-*", NULL), all, false);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_int_eq(device_plan_new(c, p, t, inv, &dp), 0);

        /* Nothing would be left: node 1 as selected, said in the plan. */
        assert_set(&dp->irq_rules[0].cpus, &node1, "fallback");
        ck_assert_ptr_null(dp->irq_rules[0].pending_reason);
        ck_assert(strv_contains_substring(dp->irq_rules[0].explanation, "avoid: would leave no CPU"));
        ck_assert(strv_contains_substring(dp->irq_rules[0].warnings, "on the cores of policy \"all1\""));

        /* ghost is pending: it holds nothing. */
        ck_assert_ptr_nonnull(plan_find_policy(p, "ghost")->pending_reason);
        assert_set(&dp->irq_rules[1].cpus, &node0, "pending policy avoided");
        ck_assert(strv_contains_substring(
                dp->irq_rules[1].explanation, "avoid: policy \"ghost\" is pending: it holds no CPU"));

        /* policies: every online CPU but all1's node and one0's core. */
        one = plan_find_policy(p, "one0");
        ck_assert_uint_eq(cpuset_count(&one->cpus), 2);
        ck_assert_int_eq(cpuset_copy(&want, &node0), 0);
        cpuset_andnot(&want, &one->cpus);
        assert_set(&dp->irq_rules[2].cpus, &want, "avoid: policies");
        ck_assert(!strv_contains_substring(dp->irq_rules[2].warnings, "share cores"));
}
END_TEST

static Suite *devplan_suite(void) {
        Suite *s = suite_create("devplan");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_irq_spread_rbench);
        tcase_add_test(tc, test_irq_spread_corpus_names);
        tcase_add_test(tc, test_irq_spread_virtio);
        tcase_add_test(tc, test_irq_device_match);
        tcase_add_test(tc, test_near_2socket);
        tcase_add_test(tc, test_near_epyc);
        tcase_add_test(tc, test_masks_104cpu_dump);
        tcase_add_test(tc, test_masks_lassen);
        tcase_add_test(tc, test_flow_cnt_never_one);
        tcase_add_test(tc, test_net_explanation_short);
        tcase_add_test(tc, test_exclusive_holdings);
        tcase_add_test(tc, test_kubelet_exclusive);
        tcase_add_test(tc, test_avoid_policy_cores);
        tcase_add_test(tc, test_avoid_fallback);
        tcase_add_test(tc, test_inventory_fixture);
        tcase_add_test(tc, test_inventory_identity_old_format);
        tcase_add_test(tc, test_inventory_offline);
        tcase_add_test(tc, test_inventory_offline_pci);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr;
        int failed;

        if (!getenv("AFFINITYD_CORPUS")) {
                fprintf(stderr, "AFFINITYD_CORPUS is not set (tests/meson.build sets it)\n");
                return EXIT_FAILURE;
        }
        sr = srunner_create(devplan_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
