/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests for lib/plan: selectors resolved against synthetic topologies, the corpus of real
 * machines' hwloc XML ($AFFINITYD_CORPUS/topologies) and the live machine. Configs are built
 * by hand through the policy model (lib/policy.h), independently of the YAML loader.
 *
 * Hand-checked expectations come from `lstopo-no-graphics -p -i FILE` and
 * `hwloc-calc -i FILE --po -I pu node:N` on the corpus files; those for synthetic topologies
 * follow from hwloc numbering synthetic PUs in order ("pack:2 numa:1 core:4 pu:2": node N =
 * CPUs 8N..8N+7, core k = CPUs 2k, 2k+1).
 */

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "macro.h"
#include "match-index.h"
#include "plan.h"
#include "policy.h"
#include "topology.h"
#include "util.h"

/* ---- building configurations by hand ---- */

static CpuSet set_of(const char *list) {
        CpuSet s = CPUSET_NULL;
        ck_assert_msg(cpuset_parse_list(list, &s, NULL) == 0, "bad test cpu-list \"%s\"", list);
        return s;
}

static CpuSelector sel_literal(const char *list) {
        return (CpuSelector){.kind = CPU_SELECTOR_LITERAL, .literal = set_of(list)};
}

/* nodes / packages NULL: not given. */
static CpuSelector sel_map(const char *nodes, const char *packages, ReservedMode reserved) {
        CpuSelector s = {.kind = CPU_SELECTOR_MAPPING, .reserved = reserved};

        if (nodes) {
                s.has_nodes = true;
                s.nodes = set_of(nodes);
        }
        if (packages) {
                s.has_packages = true;
                s.packages = set_of(packages);
        }
        return s;
}

/* The whole selector, for SEL(.near = "eth0", .cores = 8, …); unset fields are the defaults. */
typedef struct Sel {
        const char *nodes, *packages, *near;
        unsigned cores, cpus;
        SmtMode smt;
        CpuKindSelector kind;
        bool exclusive;
        ReservedMode reserved;
        CpuWithin within;
} Sel;

static CpuSelector sel_full(Sel o) {
        CpuSelector s = sel_map(o.nodes, o.packages, o.reserved);

        if (o.near) {
                s.near = strdup(o.near);
                ck_assert_ptr_nonnull(s.near);
        }
        s.n_cores = o.cores;
        s.n_cpus = o.cpus;
        s.smt = o.smt;
        s.cpu_kind = o.kind;
        s.exclusive = o.exclusive;
        s.within = o.within;
        return s;
}
#define SEL(...) sel_full((Sel){__VA_ARGS__})

static CpuSelector sel_spread(void) {
        return (CpuSelector){.kind = CPU_SELECTOR_SPREAD};
}

static Policy *config_add(Config *c, const char *name, CpuSelector cpus) {
        Policy p = {.name = strdup(name), .cpus = cpus};

        ck_assert_ptr_nonnull(p.name);
        ck_assert_int_eq(config_add_policy(c, &p), 0);
        return &c->policies[c->n_policies - 1];
}

static void policy_add_thread(Policy *p, const char *name, CpuSelector cpus) {
        p->threads = reallocarray(p->threads, p->n_threads + 1, sizeof(ThreadRule));
        ck_assert_ptr_nonnull(p->threads);
        p->threads[p->n_threads++] = (ThreadRule){.name = strdup(name), .cpus = cpus};
}

/* users: NULL-terminated list. */
static void policy_set_users(Policy *p, ...) {
        va_list ap;
        size_t n = 0;

        va_start(ap, p);
        for (const char *u; (u = va_arg(ap, const char *));) {
                p->match.user = reallocarray(p->match.user, n + 2, sizeof(char *));
                ck_assert_ptr_nonnull(p->match.user);
                p->match.user[n++] = strdup(u);
                p->match.user[n] = NULL;
        }
        va_end(ap);
}

static void config_set_reserve(Config *c, const char *list) {
        c->has_reserve = true;
        cpuset_done(&c->reserve);
        c->reserve = set_of(list);
}

/* The hwloc XML $env/subdir/file (tests/meson.build sets the variables). */
static Topology *load_xml_under(const char *env, const char *subdir, const char *file) {
        const char *dir = getenv(env);
        _cleanup_free_ char *path = NULL;
        Topology *t = NULL;

        ck_assert_msg(dir && *dir, "%s is not set (tests/meson.build sets it)", env);
        ck_assert_int_ge(asprintf(&path, "%s/%s/%s", dir, subdir, file), 0);
        ck_assert_msg(topology_load_xml(path, &t) == 0, "cannot load %s", path);
        return t;
}

static Topology *load_corpus(const char *file) {
        return load_xml_under("AFFINITYD_CORPUS", "topologies", file);
}

static Topology *load_synthetic(const char *description) {
        Topology *t = NULL;
        ck_assert_int_eq(topology_load_synthetic(description, &t), 0);
        return t;
}

/* ---- checking results ---- */

static void assert_set(const CpuSet *set, const char *expect) {
        _cleanup_free_ char *got = cpuset_to_string(set);

        ck_assert_ptr_nonnull(got);
        ck_assert_msg(streq(got, expect), "set %s, expected %s", got, expect);
}

static void assert_cpus(const Plan *p, const char *name, const char *expect) {
        const PolicyPlan *pp = plan_find_policy(p, name);
        _cleanup_free_ char *got = NULL;

        ck_assert_msg(pp, "no plan for policy %s", name);
        ck_assert_msg(!pp->pending_reason, "policy %s is pending: %s", name, pp->pending_reason);
        ck_assert_msg(pp->has_cpus, "policy %s has no cpus", name);
        got = cpuset_to_string(&pp->cpus);
        ck_assert_msg(streq(got, expect), "policy %s: cpus %s, expected %s", name, got, expect);
}

static void assert_pending(const Plan *p, const char *name, const char *reason) {
        const PolicyPlan *pp = plan_find_policy(p, name);

        ck_assert_msg(pp, "no plan for policy %s", name);
        ck_assert_msg(pp->pending_reason, "policy %s is not pending", name);
        ck_assert_msg(
                streq(pp->pending_reason, reason), "policy %s: reason \"%s\", expected \"%s\"", name,
                pp->pending_reason, reason);
        /* Nothing to apply. */
        ck_assert(!pp->has_cpus);
        ck_assert(cpuset_is_empty(&pp->cpus));
        ck_assert_ptr_null(pp->uids);
        for (size_t i = 0; i < pp->policy->n_threads; i++)
                ck_assert(!pp->threads[i].has_cpus);
}

/* The spread order of thread rule i of policy name, as "6,7,54,55". */
static void assert_spread(const Plan *p, const char *name, size_t i, const char *expect) {
        const PolicyPlan *pp = plan_find_policy(p, name);
        char *got = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&got, &size);

        ck_assert_ptr_nonnull(f);
        ck_assert_msg(pp && !pp->pending_reason, "policy %s is pending", name);
        ck_assert(pp->threads[i].spread);
        ck_assert(!pp->threads[i].has_cpus);
        for (size_t k = 0; k < pp->threads[i].n_spread_order; k++)
                fprintf(f, "%s%u", k > 0 ? "," : "", pp->threads[i].spread_order[k]);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_msg(streq(got, expect), "policy %s: spread order %s, expected %s", name, got, expect);
        free(got);
}

/* Whether the explanation of policy name has the line expect. */
static void assert_explains(const Plan *p, const char *name, const char *expect) {
        const PolicyPlan *pp = plan_find_policy(p, name);

        ck_assert_ptr_nonnull(pp);
        STRV_FOREACH (l, pp->explanation)
                if (streq(*l, expect))
                        return;
        ck_assert_msg(
                false, "policy %s: no explanation line \"%s\" (first: %s)", name, expect,
                pp->explanation ? pp->explanation[0] : "none");
}

static void assert_warnings(const PolicyPlan *pp, ...) {
        va_list ap;
        size_t n = 0;

        va_start(ap, pp);
        for (const char *w; (w = va_arg(ap, const char *)); n++) {
                ck_assert_msg(
                        n < strv_length(pp->warnings), "policy %s: missing warning \"%s\"", pp->policy->name,
                        w);
                ck_assert_msg(
                        streq(pp->warnings[n], w), "policy %s: warning \"%s\", expected \"%s\"",
                        pp->policy->name, pp->warnings[n], w);
        }
        va_end(ap);
        ck_assert_msg(
                strv_length(pp->warnings) == n, "policy %s: %zu warnings, expected %zu (first extra: %s)",
                pp->policy->name, strv_length(pp->warnings), n,
                n < strv_length(pp->warnings) ? pp->warnings[n] : "");
}

/* ---- literal cpu-lists ---- */

START_TEST(test_literal) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:2 numa:1 core:4 pu:2");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;

        ck_assert_ptr_nonnull(c);
        config_set_reserve(c, "0-1");
        config_add(c, "plain", sel_literal("2-5"));
        config_add(c, "partly-beyond", sel_literal("14-17"));
        config_add(c, "beyond", sel_literal("20-21"));
        config_add(c, "one-beyond", sel_literal("30"));
        config_add(c, "reserved", sel_literal("0-3"));

        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_ptr_eq(p->config, c);
        ck_assert_uint_eq(p->n_policies, 5);
        for (size_t i = 0; i < p->n_policies; i++)
                ck_assert_ptr_eq(p->policies[i].policy, &c->policies[i]);

        assert_cpus(p, "plain", "2-5");
        assert_warnings(plan_find_policy(p, "plain"), NULL);

        assert_cpus(p, "partly-beyond", "14-15");
        assert_warnings(
                plan_find_policy(p, "partly-beyond"),
                "cpu-list 14-17 names nonexistent CPUs 16-17 (CPUs here: 0-15)", NULL);

        assert_pending(p, "beyond", "none of CPUs 20-21 is online here (online: 0-15)");
        assert_warnings(
                plan_find_policy(p, "beyond"),
                "cpu-list 20-21 names nonexistent CPUs 20-21 (CPUs here: 0-15)", NULL);
        assert_pending(p, "one-beyond", "CPU 30 is not online here (online: 0-15)");

        /* Taken as written, reserve or not, with a warning. */
        assert_cpus(p, "reserved", "0-3");
        assert_warnings(
                plan_find_policy(p, "reserved"),
                "cpu-list 0-3 overlaps the reserve on CPUs 0-1 (reserve: 0-1)", NULL);
}
END_TEST

/* Offline CPUs: coral-lassen has CPUs 0-7 and 88-95 in its complete cpuset but not online. */
START_TEST(test_literal_offline) {
        _cleanup_(topology_freep) Topology *lassen = load_corpus("coral-lassen.xml");
        _cleanup_(topology_freep) Topology *amd = load_corpus("16amd64-8n2c-cpusets.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;

        config_add(c, "some-offline", sel_literal("4-9"));
        config_add(c, "all-offline", sel_literal("88-90"));

        ck_assert_int_eq(plan_new(c, lassen, &p), 0);
        assert_cpus(p, "some-offline", "8-9");
        assert_warnings(
                plan_find_policy(p, "some-offline"),
                "cpu-list 4-9 names offline CPUs 4-7 (online: 8-87,96-175)", NULL);
        assert_pending(p, "all-offline", "none of CPUs 88-90 is online here (online: 8-87,96-175)");
        assert_warnings(
                plan_find_policy(p, "all-offline"),
                "cpu-list 88-90 names offline CPUs 88-90 (online: 8-87,96-175)", NULL);

        /* 16amd64: CPUs 4 and 7-11 exist (complete cpuset 0-15) but are offline. */
        ck_assert_int_eq(plan_new(c, amd, &q), 0);
        assert_cpus(q, "some-offline", "5-6");
        assert_warnings(
                plan_find_policy(q, "some-offline"),
                "cpu-list 4-9 names offline CPUs 4,7-9 (online: 0-3,5-6,12-15)", NULL);
}
END_TEST

/* CPUs 0-3 online, 3 disallowed by the cpuset (allowed_cpuset 0x7). */
static const char disallowed_xml[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
        "<topology version=\"2.0\">\n"
        "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\""
        " allowed_cpuset=\"0x00000007\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\">\n"
        " <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\""
        " nodeset=\"0x1\" complete_nodeset=\"0x1\" local_memory=\"1048576\"/>\n"
        " <object type=\"Package\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\">\n"
        "  <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\"/>\n"
        "  <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\"/>\n"
        "  <object type=\"PU\" os_index=\"2\" cpuset=\"0x00000004\" complete_cpuset=\"0x00000004\"/>\n"
        "  <object type=\"PU\" os_index=\"3\" cpuset=\"0x00000008\" complete_cpuset=\"0x00000008\"/>\n"
        " </object>\n"
        "</object>\n"
        "</topology>\n";

START_TEST(test_disallowed) {
        char dir[] = "/tmp/test-plan-XXXXXX";
        _cleanup_free_ char *path = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        FILE *f;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(asprintf(&path, "%s/disallowed.xml", dir), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(disallowed_xml, f), 0);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(topology_load_xml(path, &t), 0);
        unlink(path);
        rmdir(dir);

        config_add(c, "any", sel_map(NULL, NULL, RESERVED_AVOID));
        config_add(c, "node", sel_map("0", NULL, RESERVED_AVOID));
        config_add(c, "literal", sel_literal("2-3"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        /* Selectors never pick a disallowed CPU; a literal keeps it, with a warning. */
        assert_cpus(p, "any", "0-2");
        assert_cpus(p, "node", "0-2");
        assert_cpus(p, "literal", "2-3");
        assert_warnings(
                plan_find_policy(p, "literal"), "cpu-list 2-3 names disallowed CPU 3 (allowed: 0-2)", NULL);
}
END_TEST

/* ---- nodes and packages ---- */

START_TEST(test_nodes_packages) {
        /* 32em64t: package/node 0 = CPUs 0-7,16-23; package/node 1 = 8-15,24-31 (lstopo -p). */
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        /* 24em64t: node 0 = even CPUs, node 1 = odd CPUs. */
        _cleanup_(topology_freep) Topology *w = load_corpus("24em64t-2n6c2t-pci.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;

        config_add(c, "node1", sel_map("1", NULL, RESERVED_AVOID));
        config_add(c, "pkg0", sel_map(NULL, "0", RESERVED_AVOID));
        config_add(c, "both", sel_map("0-1", "0-1", RESERVED_AVOID));
        config_add(c, "node1-pkg1", sel_map("1", "1", RESERVED_AVOID));
        config_add(c, "disjoint", sel_map("0", "1", RESERVED_AVOID));
        config_add(c, "no-node", sel_map("2", NULL, RESERVED_AVOID));
        config_add(c, "no-nodes", sel_map("2-3,7", "0", RESERVED_AVOID));
        config_add(c, "no-pkg", sel_map(NULL, "4", RESERVED_AVOID));
        config_add(c, "everything", sel_map(NULL, NULL, RESERVED_AVOID));

        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_cpus(p, "node1", "8-15,24-31");
        assert_cpus(p, "pkg0", "0-7,16-23");
        assert_cpus(p, "both", "0-31");
        assert_cpus(p, "node1-pkg1", "8-15,24-31");
        assert_pending(
                p, "disjoint", "NUMA node 0 in package 1: the nodes and packages have no CPU in common");
        assert_pending(p, "no-node", "NUMA node 2 does not exist here (nodes: 0-1)");
        assert_pending(p, "no-nodes", "NUMA nodes 2-3,7 do not exist here (nodes: 0-1)");
        assert_pending(p, "no-pkg", "package 4 does not exist here (packages: 0-1)");
        assert_cpus(p, "everything", "0-31");

        ck_assert_int_eq(plan_new(c, w, &q), 0);
        assert_cpus(q, "node1", "1,3,5,7,9,11,13,15,17,19,21,23");
        assert_cpus(q, "pkg0", "0,2,4,6,8,10,12,14,16,18,20,22");
}
END_TEST

/* A policy asking for a NUMA node or package the machine doesn't have is pending, and its reason
 * names it and the ones there are. */
START_TEST(test_nonexistent_node) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:1 core:2 pu:1");
        _cleanup_(topology_freep) Topology *live = NULL;
        _cleanup_(topology_freep) Topology *lassen = load_corpus("coral-lassen.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL, *r = NULL;
        _cleanup_free_ char *live_nodes = NULL, *expect = NULL, *reason = NULL;
        _cleanup_cpuset_ CpuSet out = CPUSET_NULL;

        config_add(c, "db", sel_map("7", NULL, RESERVED_AVOID));
        config_add(c, "pkg1", sel_map(NULL, "1", RESERVED_AVOID));
        config_add(c, "node8", sel_map("8", NULL, RESERVED_AVOID));

        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_pending(p, "db", "NUMA node 7 does not exist here (nodes: 0)");
        assert_pending(p, "pkg1", "package 1 does not exist here (packages: 0)");

        /* Lassen numbers its nodes and packages 0 and 8. */
        ck_assert_int_eq(plan_new(c, lassen, &q), 0);
        assert_pending(q, "db", "NUMA node 7 does not exist here (nodes: 0,8)");
        assert_pending(q, "pkg1", "package 1 does not exist here (packages: 0,8)");
        assert_cpus(q, "node8", "96-175"); /* 88-95 are offline */

        /* The live machine: the node list in the reason is the machine's own. */
        ck_assert_int_eq(topology_load_live(&live), 0);
        if (!cpuset_contains(topology_nodes(live), 7)) {
                live_nodes = cpuset_to_string(topology_nodes(live));
                ck_assert_int_ge(
                        asprintf(&expect, "NUMA node 7 does not exist here (nodes: %s)", live_nodes), 0);
                ck_assert_int_eq(plan_new(c, live, &r), 0);
                assert_pending(r, "db", expect);
        }

        /* The same through plan_resolve_selector(). */
        ck_assert_int_eq(plan_resolve_selector(&c->policies[0].cpus, t, NULL, &out, &reason), -ENOENT);
        ck_assert_str_eq(reason, "NUMA node 7 does not exist here (nodes: 0)");
        ck_assert(cpuset_is_empty(&out));
}
END_TEST

/* 16amd64: NUMA nodes 4 and 5 have memory but no CPU. */
START_TEST(test_memory_only_node) {
        _cleanup_(topology_freep) Topology *t = load_corpus("16amd64-8n2c-cpusets.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;

        config_add(c, "mem", sel_map("4", NULL, RESERVED_AVOID));
        config_add(c, "mems", sel_map("4-5", NULL, RESERVED_AVOID));
        config_add(c, "with-cpus", sel_map("1,4", NULL, RESERVED_AVOID));
        config_add(c, "pkg6", sel_map(NULL, "6", RESERVED_AVOID));
        config_add(c, "no-node-0", sel_map("0", NULL, RESERVED_AVOID));
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_pending(p, "mem", "NUMA node 4 has no CPU");
        assert_pending(p, "mems", "NUMA nodes 4-5 have no CPU");
        assert_cpus(p, "with-cpus", "2-3");
        assert_cpus(p, "pkg6", "12-13");
        assert_pending(p, "no-node-0", "NUMA node 0 does not exist here (nodes: 1-5)");
}
END_TEST

/* ---- the reserve ---- */

START_TEST(test_reserve) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:2 numa:1 core:4 pu:2");
        _cleanup_(config_freep) Config *c = config_new(), *d = config_new(), *e = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL, *r = NULL;

        /* Whole cores 0 and 4 (CPUs 0-1 and 8-9) are housekeeping. */
        config_set_reserve(c, "0-1,8-9");
        config_add(c, "avoid", sel_map(NULL, NULL, RESERVED_AVOID));
        config_add(c, "avoid-node0", sel_map("0", NULL, RESERVED_AVOID));
        config_add(c, "only", sel_map(NULL, NULL, RESERVED_ONLY));
        config_add(c, "only-node1", sel_map("1", NULL, RESERVED_ONLY));
        config_add(c, "allow", sel_map(NULL, NULL, RESERVED_ALLOW));
        config_add(c, "allow-pkg0", sel_map(NULL, "0", RESERVED_ALLOW));
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_ptr_null(p->warnings); /* whole cores, all online */
        ck_assert(cpuset_equal(&p->reserve, &c->reserve));
        assert_cpus(p, "avoid", "2-7,10-15");
        assert_cpus(p, "avoid-node0", "2-7");
        assert_cpus(p, "only", "0-1,8-9");
        assert_cpus(p, "only-node1", "8-9");
        assert_cpus(p, "allow", "0-15");
        assert_cpus(p, "allow-pkg0", "0-7");

        /* The reserve takes all of node 0; CPU 20 doesn't exist; CPU 7's sibling 6 is not reserved. */
        config_set_reserve(d, "0-5,7,20");
        config_add(d, "node0", sel_map("0", NULL, RESERVED_AVOID));
        config_add(d, "node1-only", sel_map("1", NULL, RESERVED_ONLY));
        config_add(d, "node0-only", sel_map("0", NULL, RESERVED_ONLY));
        ck_assert_int_eq(plan_new(d, t, &q), 0);
        assert_cpus(q, "node0", "6");
        assert_pending(
                q, "node1-only",
                "reserved: only, but no CPU of NUMA node 1 (8-15) is reserved (reserve: 0-5,7)");
        assert_cpus(q, "node0-only", "0-5,7");
        assert_set(&q->reserve, "0-5,7");
        ck_assert_uint_eq(strv_length(q->warnings), 2);
        ck_assert_str_eq(q->warnings[0], "reserve: CPU 20 does not exist here (CPUs here: 0-15)");
        ck_assert_str_eq(q->warnings[1], "reserve 0-5,7,20 splits SMT cores: sibling CPU 6 is not reserved");

        /* Everything a selector could pick is reserved; or there is no reserve at all. */
        config_set_reserve(e, "0-7");
        config_add(e, "node0", sel_map("0", NULL, RESERVED_AVOID));
        ck_assert_int_eq(plan_new(e, t, &r), 0);
        assert_pending(
                r, "node0",
                "every CPU of NUMA node 0 (0-7) is reserved (reserve: 0-7); use reserved: allow or only to "
                "place on "
                "them");
        r = plan_free(r);
        e->has_reserve = false;
        cpuset_done(&e->reserve);
        config_add(e, "only", sel_map(NULL, NULL, RESERVED_ONLY));
        ck_assert_int_eq(plan_new(e, t, &r), 0);
        assert_cpus(r, "node0", "0-7");
        assert_pending(
                r, "only",
                "reserved: only, but no CPU of the online CPUs (0-15) is reserved (reserve: none)");
        ck_assert(cpuset_is_empty(&r->reserve));
}
END_TEST

/*
 * A reserve whose CPUs are offline (coral-lassen: 0-7 exist but are offline) or don't exist
 * at all: each said as what it is, and a reason that names the reserve as given, not "none".
 */
START_TEST(test_reserve_not_online) {
        _cleanup_(topology_freep) Topology *t = load_corpus("coral-lassen.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_free_ char *all = cpuset_to_string(topology_all_cpus(t)), *want = NULL;

        ck_assert_ptr_nonnull(all);
        ck_assert(!cpuset_contains(topology_all_cpus(t), 500)); /* the premise */
        config_set_reserve(c, "0-1,500");
        config_add(c, "only", sel_map(NULL, NULL, RESERVED_ONLY));
        config_add(c, "avoid", sel_literal("8"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        ck_assert(cpuset_is_empty(&p->reserve));
        ck_assert_uint_eq(strv_length(p->warnings), 2);
        ck_assert_int_ge(asprintf(&want, "reserve: CPU 500 does not exist here (CPUs here: %s)", all), 0);
        ck_assert_str_eq(p->warnings[0], want);
        ck_assert_str_eq(
                p->warnings[1],
                "reserve 0-1,500 names CPUs 0-1 that are not online here (online: 8-87,96-175)");

        assert_pending(
                p, "only",
                "reserved: only, but no CPU of the online CPUs (8-87,96-175) is reserved "
                "(reserve 0-1,500 has no online CPU here)");
        assert_cpus(p, "avoid", "8");
        assert_warnings(plan_find_policy(p, "avoid"), NULL);

        /* plan_resolve_selector() says the same of a reserve given to it. */
        {
                _cleanup_cpuset_ CpuSet reserve = set_of("0-1"), out = CPUSET_NULL;
                _cleanup_free_ char *reason = NULL;
                CpuSelector only = sel_map(NULL, NULL, RESERVED_ONLY);

                ck_assert_int_eq(plan_resolve_selector(&only, t, &reserve, &out, &reason), -EINVAL);
                ck_assert_str_eq(
                        reason,
                        "reserved: only, but no CPU of the online CPUs (8-87,96-175) is reserved "
                        "(reserve 0-1 has no online CPU here)");
                cpu_selector_done(&only);
        }
}
END_TEST

/*
 * Every warning and pending reason carries the most precise place known: a thread rule's
 * cpus: value for its cpu-list, the policy's cpus: for its own, the policy for user:.
 */
START_TEST(test_locations) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:2 numa:1 core:4 pu:2");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        const PolicyPlan *pp;
        Policy *pol;

        ck_assert_ptr_nonnull(c);
        config_set_reserve(c, "0-1");
        /* Only thread rules; two of them with warnings on different lines. */
        pol = config_add(c, "threads-only", (CpuSelector){.kind = CPU_SELECTOR_NONE});
        pol->location = (Location){"f.yaml", 2, 5};
        policy_add_thread(pol, "a", sel_literal("0"));
        pol->threads[0].location = (Location){"f.yaml", 5, 9};
        pol->threads[0].cpus.location = (Location){"f.yaml", 6, 15};
        policy_add_thread(pol, "b", sel_literal("1,20"));
        pol->threads[1].location = (Location){"f.yaml", 7, 9};
        pol->threads[1].cpus.location = (Location){"f.yaml", 8, 15};
        /* Its own cpu-list warns at its cpus:, a failing thread rule is pending at the rule's. */
        pol = config_add(c, "mixed", sel_literal("1-2"));
        pol->location = (Location){"f.yaml", 10, 5};
        pol->cpus.location = (Location){"f.yaml", 12, 11};
        policy_add_thread(pol, "w", sel_map("7", NULL, RESERVED_AVOID));
        pol->threads[0].location = (Location){"f.yaml", 14, 9};
        pol->threads[0].cpus.location = (Location){"f.yaml", 15, 15};
        /* A policy's own failing selector; an unknown user. */
        pol = config_add(c, "bad-node", sel_map("5", NULL, RESERVED_AVOID));
        pol->location = (Location){"f.yaml", 20, 5};
        pol->cpus.location = (Location){"f.yaml", 22, 11};
        pol = config_add(c, "ghost", sel_literal("3"));
        pol->location = (Location){"f.yaml", 30, 5};
        pol->cpus.location = (Location){"f.yaml", 32, 11};
        policy_set_users(pol, "nosuchuser-affinityd-test", NULL);

        ck_assert_int_eq(plan_new(c, t, &p), 0);

        pp = plan_find_policy(p, "threads-only");
        ck_assert_ptr_null(pp->pending_reason);
        ck_assert_ptr_null(pp->pending_location);
        ck_assert_uint_eq(strv_length(pp->warnings), 3);
        ck_assert_ptr_nonnull(pp->warning_locations);
        ck_assert(strstr(pp->warnings[0], "thread rule \"a\""));
        ck_assert_ptr_eq(pp->warning_locations[0], &pp->policy->threads[0].cpus.location);
        for (size_t i = 1; i < 3; i++) {
                ck_assert(strstr(pp->warnings[i], "thread rule \"b\""));
                ck_assert_uint_eq(pp->warning_locations[i]->line, 8);
                ck_assert_uint_eq(pp->warning_locations[i]->column, 15);
        }

        pp = plan_find_policy(p, "mixed");
        assert_pending(p, "mixed", "thread rule \"w\": NUMA node 7 does not exist here (nodes: 0-1)");
        ck_assert_ptr_eq(pp->pending_location, &pp->policy->threads[0].cpus.location);
        ck_assert_uint_eq(strv_length(pp->warnings), 1); /* kept while pending */
        ck_assert_uint_eq(pp->warning_locations[0]->line, 12);
        ck_assert_uint_eq(pp->warning_locations[0]->column, 11);

        pp = plan_find_policy(p, "bad-node");
        ck_assert_ptr_nonnull(pp->pending_reason);
        ck_assert_ptr_eq(pp->pending_location, &pp->policy->cpus.location);

        pp = plan_find_policy(p, "ghost");
        assert_pending(p, "ghost", "user \"nosuchuser-affinityd-test\" does not exist");
        ck_assert_ptr_eq(pp->pending_location, &pp->policy->location);
}
END_TEST

/* ---- thread rules ---- */

/*
 * processes: spread on a real 2-socket SMT machine: the slots' order is the policy's spread
 * order (what a spread thread rule of it gets), every CPU of the set once, one PU of each core
 * before any sibling; without cpus: over the bare set; pending, none. spread-over: policy is
 * carried to the thread rule's plan.
 */
START_TEST(test_processes_spread) {
        _cleanup_(topology_freep) Topology *t = load_corpus("24em64t-2n6c2t-pci.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL, cores = CPUSET_NULL;
        const PolicyPlan *pp, *bare;
        Policy *pol;
        size_t n_cores = 0;

        pol = config_add(c, "web", SEL(.nodes = "1"));
        pol->spread_processes = true;
        policy_add_thread(pol, "w*", sel_spread());
        pol->threads[0].spread_over_policy = true;
        pol = config_add(c, "bare", (CpuSelector){.kind = CPU_SELECTOR_NONE});
        pol->spread_processes = true;
        pol = config_add(c, "gone", SEL(.nodes = "7"));
        pol->spread_processes = true;
        pol = config_add(c, "plain", SEL(.nodes = "0"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        pp = plan_find_policy(p, "web");
        ck_assert(!pp->pending_reason);
        ck_assert_uint_eq(pp->n_process_order, cpuset_count(&pp->cpus));
        ck_assert(pp->threads[0].spread_over_policy);
        ck_assert_uint_eq(pp->threads[0].n_spread_order, pp->n_process_order);
        for (size_t i = 0; i < pp->n_process_order; i++) {
                unsigned cpu = pp->process_order[i];
                int core = topology_core_of_cpu(t, cpu);

                /* the thread rule's order is the same */
                ck_assert_uint_eq(pp->threads[0].spread_order[i], cpu);
                ck_assert(cpuset_contains(&pp->cpus, cpu));
                ck_assert(!cpuset_contains(&seen, cpu));
                ck_assert_int_eq(cpuset_add(&seen, cpu), 0);
                ck_assert_int_ge(core, 0);
                /* one PU of every core first: a core seen again only once every core was */
                if (!cpuset_contains(&cores, (unsigned)core)) {
                        ck_assert_uint_eq(n_cores, i);
                        n_cores++;
                        ck_assert_int_eq(cpuset_add(&cores, (unsigned)core), 0);
                }
        }
        /* the machine has SMT: node 1 has more CPUs than cores, so siblings come after */
        ck_assert_uint_gt(pp->n_process_order, n_cores);

        bare = plan_find_policy(p, "bare");
        ck_assert(!bare->pending_reason);
        ck_assert(!bare->has_cpus);
        ck_assert_uint_eq(bare->n_process_order, cpuset_count(topology_online_cpus(t)));
        assert_explains(
                p, "bare",
                "processes: spread over the online CPUs neither reserved nor held (the policy has no "
                "cpus:): 0-23");

        assert_pending(p, "gone", "NUMA node 7 does not exist here (nodes: 0-1)");
        ck_assert_ptr_null(plan_find_policy(p, "gone")->process_order);
        ck_assert_uint_eq(plan_find_policy(p, "plain")->n_process_order, 0);
}
END_TEST

START_TEST(test_threads) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:2 numa:1 core:4 pu:2");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        const PolicyPlan *pp;
        Policy *pol;

        config_set_reserve(c, "0-1");
        pol = config_add(c, "svc", sel_map("0", NULL, RESERVED_AVOID));
        policy_add_thread(pol, "io*", sel_literal("1,15"));
        policy_add_thread(pol, "main", (CpuSelector){.kind = CPU_SELECTOR_NONE});
        policy_add_thread(pol, "gc", sel_map("1", NULL, RESERVED_AVOID));
        pol = config_add(c, "bad-thread", sel_literal("2-3"));
        policy_add_thread(pol, "ok", sel_literal("4"));
        policy_add_thread(pol, "worker*", sel_map("9", NULL, RESERVED_AVOID));
        pol = config_add(c, "offline-thread", (CpuSelector){.kind = CPU_SELECTOR_NONE});
        policy_add_thread(pol, "x", sel_literal("40-41"));

        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_cpus(p, "svc", "2-7");
        pp = plan_find_policy(p, "svc");
        ck_assert(pp->threads[0].has_cpus);
        assert_set(&pp->threads[0].cpus, "1,15");
        ck_assert(!pp->threads[1].has_cpus);
        ck_assert(pp->threads[2].has_cpus);
        assert_set(&pp->threads[2].cpus, "8-15");
        assert_warnings(
                pp, "thread rule \"io*\": cpu-list 1,15 overlaps the reserve on CPU 1 (reserve: 0-1)", NULL);

        assert_pending(
                p, "bad-thread", "thread rule \"worker*\": NUMA node 9 does not exist here (nodes: 0-1)");
        assert_pending(
                p, "offline-thread", "thread rule \"x\": none of CPUs 40-41 is online here (online: 0-15)");
        pp = plan_find_policy(p, "offline-thread");
        ck_assert(!pp->has_cpus);
}
END_TEST

/* ---- the kubelet's CPU manager ---- */

#define POD_P "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"

/* A checkpoint from JSON text. */
static KubeletCpuState *kubelet_state(const char *json) {
        _cleanup_free_ char *error = NULL;
        KubeletCpuState *k = NULL;

        ck_assert_msg(
                kubelet_cpu_state_parse("cpu_manager_state", json, strlen(json), &k, &error) == 0, "%s",
                strna(error));
        return k;
}

/*
 * The kubelet holds 2-3 (core 1) and 9 (half of core 4): selector mappings leave them out,
 * naming the pod and container; within: cpuset keeps them; a literal is taken as written,
 * with a warning; thread rules and spread rules too. Synthetic "pack:2 numa:1 core:4 pu:2":
 * node N = CPUs 8N..8N+7, core k = 2k, 2k+1.
 */
START_TEST(test_kubelet_exclusive) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:2 numa:1 core:4 pu:2");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        KubeletCpuState *k = kubelet_state(
                "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1,4-8,10-15\",\"entries\":{\"" POD_P
                "\":{\"db\":\"2-3\",\"cache\":\"9\"}},\"checksum\":1}");
        CpuSelector own = SEL();
        const PolicyPlan *pp;
        Policy *pol;

        own.within = WITHIN_CPUSET;
        config_add(c, "bare", SEL());
        config_add(c, "node1", SEL(.nodes = "1"));
        config_add(c, "cores", SEL(.nodes = "1", .cores = 3));
        config_add(c, "too-many", SEL(.nodes = "1", .cores = 4));
        config_add(c, "pod", own);
        config_add(c, "literal", sel_literal("1-3"));
        pol = config_add(c, "threads", (CpuSelector){.kind = CPU_SELECTOR_NONE});
        policy_add_thread(pol, "worker", SEL(.nodes = "0"));
        own = SEL(.nodes = "0");
        own.within = WITHIN_CPUSET;
        policy_add_thread(pol, "own", own);
        policy_add_thread(pol, "spread", sel_spread());

        ck_assert_int_eq(plan_new_with(c, t, &(PlanInputs){.kubelet = k}, &p), 0);
        k = kubelet_cpu_state_free(k); /* the plan has its own copy */
        assert_set(kubelet_cpu_state_exclusive(p->kubelet), "2-3,9");

        assert_cpus(p, "bare", "0-1,4-8,10-15");
        assert_explains(
                p, "bare",
                "held by the kubelet's CPU manager: 2-3 (pod " POD_P " container db), 9 (pod " POD_P
                " container cache)");
        assert_cpus(p, "node1", "8,10-15");
        assert_explains(p, "node1", "held by the kubelet's CPU manager: 9 (pod " POD_P " container cache)");
        /* Core 4 (8-9) is split by the kubelet: not whole, the three others are taken. */
        assert_cpus(p, "cores", "10-15");
        assert_pending(
                p, "too-many", "wanted 4 cores on NUMA node 1, 3 free, 1 held by the kubelet's CPU manager");
        /* within: cpuset: the process's cgroup bounds it, and a Guaranteed pod's is 2-3 or 9. */
        assert_cpus(p, "pod", "0-15");
        pp = plan_find_policy(p, "pod");
        STRV_FOREACH (l, pp->explanation)
                ck_assert_msg(!strstr(*l, "kubelet"), "pod: %s", *l);
        assert_cpus(p, "literal", "1-3");
        assert_warnings(
                plan_find_policy(p, "literal"),
                "cpu-list 1-3 overlaps CPUs 2-3 held by the kubelet's CPU manager: 2-3 (pod " POD_P
                " container db)",
                NULL);

        pp = plan_find_policy(p, "threads");
        ck_assert(!pp->pending_reason);
        assert_set(&pp->threads[0].cpus, "0-1,4-7");
        assert_set(&pp->threads[1].cpus, "0-7");
        assert_explains(
                p, "threads",
                "thread rule \"worker\": held by the kubelet's CPU manager: 2-3 (pod " POD_P
                " container db)");
        /* One PU of every core first, node 1 (four cores with a free CPU) before node 0 (three);
         * the kubelet's CPUs never. */
        assert_spread(p, "threads", 2, "8,10,12,14,0,4,6,11,13,15,1,5,7");

        /* Without the kubelet's checkpoint, the same configuration has every CPU. */
        ck_assert_int_eq(plan_new(c, t, &q), 0);
        ck_assert_ptr_null(q->kubelet);
        assert_cpus(q, "bare", "0-15");
        assert_cpus(q, "node1", "8-15");
        assert_warnings(plan_find_policy(q, "literal"), NULL);
}
END_TEST

/* Every CPU of a selector held by the kubelet: pending, saying who holds them and what to use. */
START_TEST(test_kubelet_all_held) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:2 numa:1 core:4 pu:2");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *k =
                kubelet_state("{\"policyName\":\"static\",\"defaultCpuSet\":\"0-7\",\"entries\":{\"" POD_P
                              "\":{\"big\":\"8-15\"}}}");

        config_add(c, "node1", SEL(.nodes = "1"));
        config_add(c, "node0", SEL(.nodes = "0"));
        ck_assert_int_eq(plan_new_with(c, t, &(PlanInputs){.kubelet = k}, &p), 0);
        assert_pending(
                p, "node1",
                "every CPU of NUMA node 1 (8-15) is held by the kubelet's CPU manager: 8-15 (pod " POD_P
                " container big) (cpus: { within: cpuset } places a pod's processes on its own)");
        assert_cpus(p, "node0", "0-7");
}
END_TEST

/* ---- users ---- */

START_TEST(test_users) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:1 core:2 pu:1");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        const PolicyPlan *pp;
        struct passwd *daemon_pw;
        Policy *pol;

        /* Independent source for the expected uid: the non-reentrant getpwnam(3). */
        daemon_pw = getpwnam("daemon");
        ck_assert_msg(daemon_pw, "Debian always has the user \"daemon\"");

        pol = config_add(c, "users", (CpuSelector){.kind = CPU_SELECTOR_NONE});
        policy_set_users(pol, "root", "0", "daemon", "123456", NULL);
        pol = config_add(c, "unknown", sel_literal("0"));
        policy_set_users(pol, "root", "no-such-user-affinityd", NULL);
        pol = config_add(c, "too-big", sel_literal("0"));
        policy_set_users(pol, "4294967295", NULL);
        config_add(c, "nobody-asked", sel_literal("1"));

        ck_assert_int_eq(plan_new(c, t, &p), 0);
        pp = plan_find_policy(p, "users");
        ck_assert_ptr_null(pp->pending_reason);
        ck_assert(!pp->has_cpus);         /* no cpus: key: affinity untouched */
        ck_assert_uint_eq(pp->n_uids, 3); /* "root" and "0" are the same uid */
        ck_assert_uint_eq(pp->uids[0], 0);
        ck_assert_uint_eq(pp->uids[1], daemon_pw->pw_uid);
        ck_assert_uint_eq(pp->uids[2], 123456);

        assert_pending(p, "unknown", "user \"no-such-user-affinityd\" does not exist");
        assert_pending(p, "too-big", "user \"4294967295\" is not a valid uid");

        pp = plan_find_policy(p, "nobody-asked");
        ck_assert_uint_eq(pp->n_uids, 0);
        ck_assert_ptr_null(pp->uids);
        assert_cpus(p, "nobody-asked", "1");
}
END_TEST

/* ---- hand-checked selections on real machines ---- */

/*
 * 32em64t-2n8c2t-pci-wholeio.xml, read off `lstopo-no-graphics -p -i FILE`: 2 packages, each
 * one NUMA node with one L3 (L3 #0 = CPUs 0-7,16-23 on node 0, L3 #1 = 8-15,24-31 on node 1)
 * and 8 cores whose SMT siblings are 16 apart: core k of package 0 = CPUs k and k+16, of
 * package 1 = CPUs 8+k and 24+k. eth0 is PCI 81:00.0 below the host bridge of package 1:
 * node 1.
 */
START_TEST(test_hand_2socket_gateway) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(config_freep) Config *a = config_new(), *b = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        Policy *pol;

        /*
         * Reserve 0-1 is on node 0 and doesn't matter to eth0's node: node 1 has 8 whole cores,
         * all taken; one-per-core keeps the lower sibling of each: 8-15. The reserve splits
         * cores 0 and 1 (siblings 16, 17): a plan warning.
         */
        config_set_reserve(a, "0-1");
        config_add(a, "gateway", SEL(.near = "eth0", .cores = 8, .smt = SMT_ONE_PER_CORE));
        ck_assert_int_eq(plan_new(a, t, &p), 0);
        assert_cpus(p, "gateway", "8-15");
        assert_set(&plan_find_policy(p, "gateway")->nodes, "1");
        assert_explains(p, "gateway", "near eth0 (NUMA node 1): 8-15,24-31");
        assert_explains(p, "gateway", "cores: 8: whole cores: 8-15,24-31");
        assert_explains(p, "gateway", "smt: one-per-core: 1 PU of each of 8 cores: 8-15");
        ck_assert(cpuset_is_empty(&plan_find_policy(p, "gateway")->exclusive_cpus));
        ck_assert_uint_eq(strv_length(p->warnings), 1);
        ck_assert_str_eq(
                p->warnings[0], "reserve 0-1 splits SMT cores: sibling CPUs 16-17 are not reserved");

        /*
         * Tokio: reserve 0-3 (the NIC's IRQ CPUs). Cores 0-3 of node 0 are not whole any more;
         * L3 #0 keeps 4 whole cores (4-7), L3 #1 all 8: both hold 4 cores, the one with the
         * most free cores wins: L3 #1, its 4 lowest cores 8-11 with siblings 24-27. Spread:
         * the 4 cores first, then their siblings. Pinned to node 0, the same request takes
         * cores 4-7 and leaves 0-3 alone.
         */
        config_set_reserve(b, "0-3");
        pol = config_add(b, "tokio", SEL(.cores = 4));
        policy_add_thread(pol, "tokio-runtime-w*", sel_spread());
        pol = config_add(b, "tokio-node0", SEL(.nodes = "0", .cores = 4));
        policy_add_thread(pol, "tokio-runtime-w*", sel_spread());
        policy_add_thread(pol, "main", sel_literal("0"));
        ck_assert_int_eq(plan_new(b, t, &q), 0);
        assert_cpus(q, "tokio", "8-11,24-27");
        assert_spread(q, "tokio", 0, "8,9,10,11,24,25,26,27");
        assert_explains(q, "tokio", "packed into L3 #1 (8-15,24-31) of NUMA node 1");
        assert_cpus(q, "tokio-node0", "4-7,20-23");
        assert_spread(q, "tokio-node0", 0, "4,5,6,7,20,21,22,23");
        assert_explains(q, "tokio-node0", "reserved removed: 0-3");
        /* An explicit thread cpu-list stands on its own (with the reserve warning). */
        assert_set(&plan_find_policy(q, "tokio-node0")->threads[1].cpus, "0");
        assert_warnings(
                plan_find_policy(q, "tokio-node0"),
                "thread rule \"main\": cpu-list 0 overlaps the reserve on CPU 0 (reserve: 0-3)", NULL);
}
END_TEST

/* Same machine: exclusive sets in file order, and the reasons when they leave too little. */
START_TEST(test_hand_2socket_exclusive) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(config_freep) Config *c = config_new(), *d = config_new(), *e = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL, *r = NULL;
        const PolicyPlan *pp;

        /*
         * db: 4 cores near eth0, exclusive: L3 #1's 4 lowest cores, 8-11 and 24-27. cache: the
         * rest of eth0's node, exclusive: 12-15,28-31. After them node 1 is all held: a plain
         * near: eth0 is pending, and so is a count there (the holdings empty the node before any count is
         * taken). A count without nodes goes to node 0 (0-1,16-17); a literal list keeps what it says, with
         * a warning for each holder it overlaps.
         */
        config_add(c, "db", SEL(.near = "eth0", .cores = 4, .exclusive = true));
        config_add(c, "cache", SEL(.near = "eth0", .exclusive = true));
        config_add(c, "late", SEL(.near = "eth0"));
        config_add(c, "late-cores", SEL(.nodes = "1", .cores = 2));
        config_add(c, "anywhere", SEL(.cores = 2));
        config_add(c, "literal", sel_literal("8-9,12"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        assert_cpus(p, "db", "8-11,24-27");
        assert_set(&plan_find_policy(p, "db")->exclusive_cpus, "8-11,24-27");
        assert_cpus(p, "cache", "12-15,28-31");
        assert_set(&plan_find_policy(p, "cache")->exclusive_cpus, "12-15,28-31");
        assert_explains(p, "cache", "held by exclusive policy \"db\": 8-11,24-27");
        assert_pending(
                p, "late",
                "every CPU of the CPUs near eth0 (NUMA node 1) (8-15,24-31) is held by earlier exclusive "
                "policies: \"db\" (8-11,24-27), \"cache\" (12-15,28-31)");
        assert_pending(
                p, "late-cores",
                "every CPU of NUMA node 1 (8-15,24-31) is held by earlier exclusive policies: \"db\" "
                "(8-11,24-27), "
                "\"cache\" (12-15,28-31)");
        assert_cpus(p, "anywhere", "0-1,16-17");
        ck_assert(cpuset_is_empty(&plan_find_policy(p, "anywhere")->exclusive_cpus));
        assert_cpus(p, "literal", "8-9,12");
        assert_warnings(
                plan_find_policy(p, "literal"),
                "cpu-list 8-9,12 overlaps CPUs 8-9 held by exclusive policy \"db\"",
                "cpu-list 8-9,12 overlaps CPU 12 held by exclusive policy \"cache\"", NULL);

        /* db holds 5 of node 1's 8 cores; 3 are left for a gateway wanting 8. */
        config_add(d, "db", SEL(.nodes = "1", .cores = 5, .exclusive = true));
        config_add(d, "gateway", SEL(.nodes = "1", .cores = 8));
        ck_assert_int_eq(plan_new(d, t, &q), 0);
        assert_cpus(q, "db", "8-12,24-28");
        assert_pending(q, "gateway", "wanted 8 cores on NUMA node 1, 3 free, 5 held by policy \"db\"");
        pp = plan_find_policy(q, "gateway");
        ck_assert(cpuset_is_empty(&pp->nodes));
        ck_assert_ptr_null(pp->explanation);

        /*
         * Reserve whole cores 8 and 9 (8-9,24-25); db takes 3 of the 6 cores left (10-12 with
         * 26-28): the gateway near eth0 sees 3 free, 2 reserved, 3 held. db is pending here
         * for a missing node first, and a pending policy holds nothing.
         */
        config_set_reserve(e, "8-9,24-25");
        config_add(e, "ghost", SEL(.nodes = "3", .cores = 1, .exclusive = true));
        config_add(e, "db", SEL(.nodes = "1", .cores = 3, .exclusive = true));
        config_add(e, "gateway", SEL(.near = "eth0", .cores = 8));
        config_add(e, "gateway-6", SEL(.near = "eth0", .cores = 3, .smt = SMT_ONE_PER_CORE));
        ck_assert_int_eq(plan_new(e, t, &r), 0);
        assert_pending(r, "ghost", "NUMA node 3 does not exist here (nodes: 0-1)");
        ck_assert(cpuset_is_empty(&plan_find_policy(r, "ghost")->exclusive_cpus));
        assert_cpus(r, "db", "10-12,26-28");
        assert_pending(
                r, "gateway",
                "wanted 8 cores on the CPUs near eth0 (NUMA node 1), 3 free, 2 reserved, 3 held by policy "
                "\"db\"");
        assert_cpus(r, "gateway-6", "13-15");
}
END_TEST

/*
 * AMD-17h-Zen-2xEpyc-7451.xml, read off `lstopo-no-graphics -p -i FILE`: 2 packages of 4 NUMA
 * nodes; node N holds CPUs 6N..6N+5 and their siblings 48 higher, in two L3 caches of 3 cores:
 * L3 #2N (cores 6N..6N+2) and L3 #2N+1 (6N+3..6N+5). Package 1 = nodes 4-7.
 */
START_TEST(test_hand_epyc) {
        _cleanup_(topology_freep) Topology *t = load_corpus("AMD-17h-Zen-2xEpyc-7451.xml");
        _cleanup_(config_freep) Config *c = config_new(), *d = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        Policy *pol;

        config_set_reserve(c, "0-3");
        /*
         * tokio, 4 cores avoiding 0-3: cores 0-3 are not whole, so L3 #0 has none, L3 #1 two
         * (4, 5), every other L3 three. No L3 holds 4: the first full one (L3 #2, node 1)
         * and one core of its neighbour on the same node (L3 #3: core 9), 2 L3s on 1 node.
         * Spread: cores 6, 7, 8 of the larger L3 first, then 9, then the siblings.
         */
        pol = config_add(c, "tokio", SEL(.cores = 4));
        policy_add_thread(pol, "tokio-runtime-w*", sel_spread());
        /*
         * db: 3 cores, one PU each, exclusive: fits one L3; the first with 3 free cores is L3 #2.
         * It holds those cores whole (6-8 and their siblings 54-56), though it uses one PU of each.
         */
        config_add(c, "db", SEL(.cores = 3, .smt = SMT_ONE_PER_CORE, .exclusive = true));
        /*
         * cache: 2 whole cores, exclusive. L3 #2's cores are all held by db;
         * L3 #1 holds 2 and L3 #3 3: the one with the most free cores wins: 9-10 and 57-58.
         */
        config_add(c, "cache", SEL(.cores = 2, .exclusive = true));
        /* Node 1 (6-11,54-59) without what db and cache hold. */
        config_add(c, "node1", SEL(.nodes = "1"));
        /* 48 cores: 4 reserved, 3 held by db, 2 by cache: 39 free. */
        config_add(c, "big", SEL(.cores = 46));
        /*
         * 8 cores of package 1: two whole L3s of node 4 (#8, #9), then 2 cores of the first L3
         * of node 5 (#10: cores 30, 31): 3 L3s, 2 nodes, the fewest possible.
         */
        config_add(c, "pkg1", SEL(.packages = "1", .cores = 8));
        /* cpus: 4 on node 7: one PU of 4 cores, L3 #14 (42-44) then L3 #15 (45). */
        config_add(c, "n7", SEL(.nodes = "7", .cpus = 4));
        /* cpus: 9 on node 7's 6 cores: every core, then 3 siblings in packed order (90-92). */
        config_add(c, "n7-siblings", SEL(.nodes = "7", .cpus = 9));
        config_add(c, "n7-one", SEL(.nodes = "7", .cpus = 7, .smt = SMT_ONE_PER_CORE));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        assert_cpus(p, "tokio", "6-9,54-57");
        assert_set(&plan_find_policy(p, "tokio")->nodes, "1");
        assert_explains(p, "tokio", "packed into L3 #2 (6-8,54-56), L3 #3 (9-11,57-59) of NUMA node 1");
        assert_spread(p, "tokio", 0, "6,7,8,9,54,55,56,57");
        assert_cpus(p, "db", "6-8");
        assert_set(&plan_find_policy(p, "db")->exclusive_cpus, "6-8,54-56");
        assert_cpus(p, "cache", "9-10,57-58");
        assert_cpus(p, "node1", "11,59");
        assert_explains(p, "node1", "held by exclusive policy \"db\": 6-8,54-56");
        assert_explains(p, "node1", "held by exclusive policy \"cache\": 9-10,57-58");
        assert_pending(
                p, "big",
                "wanted 46 cores on the online CPUs, 39 free, 4 reserved, 3 held by policy \"db\", 2 held "
                "by "
                "policy \"cache\"");
        assert_cpus(p, "pkg1", "24-31,72-79");
        assert_set(&plan_find_policy(p, "pkg1")->nodes, "4-5");
        assert_explains(
                p, "pkg1",
                "packed into L3 #8 (24-26,72-74), L3 #9 (27-29,75-77) of NUMA node 4; L3 #10 (30-32,78-80) "
                "of "
                "NUMA node 5");
        assert_cpus(p, "n7", "42-45");
        assert_cpus(p, "n7-siblings", "42-47,90-92");
        assert_explains(
                p, "n7-siblings", "cpus: 9: 1 PU of each of 6 cores, then 3 SMT siblings: 42-47,90-92");
        assert_pending(
                p, "n7-one",
                "wanted 7 CPUs on separate cores (smt: one-per-core) on NUMA node 7, 6 cores free");

        /*
         * Fewest nodes among the fewest L3s. Reserve cores 3-5 (all of L3 #1) and cores 6 and 9:
         * on nodes 0-1, L3 #0 has 3 free cores, L3 #1 none, L3 #2 two (7, 8), L3 #3 two (10, 11).
         * 4 cores need 2 L3s either way; starting with the biggest (L3 #0) the second would be
         * on node 1, while L3 #2 + L3 #3 stay on node 1 alone: cores 7, 8, 10, 11.
         */
        config_set_reserve(d, "3-6,9,51-54,57");
        config_add(d, "two-nodes-or-one", SEL(.nodes = "0-1", .cores = 4));
        ck_assert_int_eq(plan_new(d, t, &q), 0);
        assert_cpus(q, "two-nodes-or-one", "7-8,10-11,55-56,58-59");
        assert_set(&plan_find_policy(q, "two-nodes-or-one")->nodes, "1");
}
END_TEST

/*
 * Intel-RaptorLake-Corei7-1370P.xml: 6 P-cores with SMT (CPUs 0-1, 2-3, …, 10-11; hwloc kind
 * IntelCore, efficiency 1 in the XML's <cpukind>) and 8 E-cores without (12-19, IntelAtom,
 * efficiency 0); one package, one node, one L3.
 */
START_TEST(test_hand_hybrid) {
        _cleanup_(topology_freep) Topology *t = load_corpus("Intel-RaptorLake-Corei7-1370P.xml");
        _cleanup_(topology_freep) Topology *w = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(config_freep) Config *c = config_new(), *d = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL, *r = NULL;
        Policy *pol;

        /* 4 CPUs of P-cores: the first PU of the 4 lowest P-cores. */
        config_add(c, "fast", SEL(.kind = CPU_KIND_PERFORMANCE, .cpus = 4));
        config_add(c, "background", SEL(.kind = CPU_KIND_EFFICIENCY, .cores = 2));
        config_add(c, "too-many", SEL(.kind = CPU_KIND_PERFORMANCE, .cores = 7));
        pol = config_add(c, "perf-pool", SEL(.kind = CPU_KIND_PERFORMANCE));
        policy_add_thread(pol, "worker*", sel_spread());
        config_add(c, "one-each", SEL(.smt = SMT_ONE_PER_CORE));
        config_add(c, "e-excl", SEL(.kind = CPU_KIND_EFFICIENCY, .exclusive = true));
        config_add(c, "e-late", SEL(.kind = CPU_KIND_EFFICIENCY));
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_cpus(p, "fast", "0,2,4,6");
        assert_explains(p, "fast", "kind: performance (IntelCore): 0-11");
        assert_explains(p, "fast", "cpus: 4: 1 PU of each of 4 cores: 0,2,4,6");
        assert_cpus(p, "background", "12-13");
        assert_pending(p, "too-many", "wanted 7 cores on the performance CPUs, 6 free");
        assert_cpus(p, "perf-pool", "0-11");
        assert_spread(p, "perf-pool", 0, "0,2,4,6,8,10,1,3,5,7,9,11");
        assert_cpus(p, "one-each", "0,2,4,6,8,10,12-19");
        assert_cpus(p, "e-excl", "12-19");
        assert_pending(
                p, "e-late",
                "every CPU of the efficiency CPUs (12-19) is held by earlier exclusive policy: \"e-excl\" "
                "(12-19)");

        /* Reserve P-core 0: fast moves up by one core. */
        config_set_reserve(d, "0-1");
        config_add(d, "fast", SEL(.kind = CPU_KIND_PERFORMANCE, .cpus = 4));
        config_add(
                d, "e-node",
                SEL(.nodes = "0", .kind = CPU_KIND_EFFICIENCY, .cpus = 3, .smt = SMT_ONE_PER_CORE));
        ck_assert_int_eq(plan_new(d, t, &q), 0);
        assert_cpus(q, "fast", "2,4,6,8");
        assert_cpus(q, "e-node", "12-14");

        /*
         * A machine without CPU kinds: efficiency can't be had, performance is every CPU.
         * There 4 CPUs avoiding reserve 0-1 prefer whole cores (not 16, 17, whose siblings are
         * reserved): L3 #0 has 6 (cores 2-7), L3 #1 8: the one with more, cores 8-11.
         */
        ck_assert_int_eq(plan_new(d, w, &r), 0);
        assert_cpus(r, "fast", "8-11");
        assert_explains(r, "fast", "kind: performance: this machine has one CPU kind, every CPU is of it");
        assert_pending(r, "e-node", "kind: efficiency: this machine has one CPU kind");
}
END_TEST

/* An XML of this directory's fixtures/ (AFFINITYD_SOURCE_ROOT/tests/unit/fixtures/FILE). */
static Topology *load_fixture(const char *file) {
        return load_xml_under("AFFINITYD_SOURCE_ROOT", "tests/unit/fixtures", file);
}

/*
 * near: as close as the machine allows. In the fixture (the corpus's 96em64t with eth0's host
 * bridge below package 2 of node 0: CPUs 2,6,10,14,18,22, one L3) near: eth0 takes that
 * package's CPUs, and a count that fits there; a count that doesn't gets the node's, as does
 * every count on the unchanged corpus file, where the NIC hangs off the node itself.
 */
START_TEST(test_near_closest) {
        _cleanup_(topology_freep) Topology *chiplet = load_fixture("96em64t-nic-below-package.xml");
        _cleanup_(topology_freep) Topology *flat = load_corpus("96em64t-4n4d3ca2co-pci.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;

        config_add(c, "any", SEL(.near = "eth0"));
        config_add(c, "four", SEL(.near = "eth0", .cores = 4));
        config_add(c, "six", SEL(.near = "eth0", .cores = 6));
        config_add(c, "ten", SEL(.near = "eth0", .cores = 10));
        config_add(c, "far", SEL(.near = "eth2", .cores = 2));

        ck_assert_int_eq(plan_new(c, chiplet, &p), 0);
        assert_cpus(p, "any", "2,6,10,14,18,22");
        assert_explains(p, "any", "near eth0: below its Package: 2,6,10,14,18,22");
        assert_cpus(p, "four", "2,6,10,14");
        assert_cpus(p, "six", "2,6,10,14,18,22");
        ck_assert_uint_eq(cpuset_count(&plan_find_policy(p, "ten")->cpus), 10);
        assert_explains(
                p, "ten",
                "near eth0: the CPUs below its Package (2,6,10,14,18,22) are too few for the count: the "
                "node's");
        assert_set(&plan_find_policy(p, "ten")->nodes, "0");
        assert_cpus(p, "far", "24,28"); /* eth2 is on node 1 itself */

        ck_assert_int_eq(plan_new(c, flat, &q), 0);
        assert_cpus(q, "any", "0-23");
        assert_cpus(q, "four", "0,4,8,12");
}
END_TEST

/* Whether one of pp's explanation lines contains expect. */
static bool explains(const PolicyPlan *pp, const char *expect) {
        STRV_FOREACH (l, pp->explanation)
                if (strstr(*l, expect))
                        return true;
        return false;
}

/*
 * within: cpuset on the 2-socket SMT machine (0-7,16-23 on node 0): a Guaranteed pod's cgroup
 * allows 4 cores of node 1 with their siblings. The process's own plan is the policy's set
 * narrowed to them, on node 1, its memory: local there; the spread order keeps the policy's
 * order, one PU of each core first; a thread rule with within: is narrowed too, one without
 * isn't. A set the cgroup doesn't meet is left (the kernel refuses it: placement reports it).
 */
START_TEST(test_within_cpuset) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_(policy_plan_clear) PolicyPlan own = {}, other = {}, none = {};
        _cleanup_cpuset_ CpuSet pod = set_of("8-11,24-27");
        const PolicyPlan *pp;
        Policy *pol;

        pol = config_add(c, "guaranteed", SEL(.within = WITHIN_CPUSET));
        pol->memory.kind = MEMORY_LOCAL;
        policy_add_thread(pol, "worker*", sel_spread());
        policy_add_thread(pol, "io*", SEL(.within = WITHIN_CPUSET, .nodes = "1"));
        policy_add_thread(pol, "main", sel_literal("0"));
        pol = config_add(c, "node0", SEL(.within = WITHIN_CPUSET, .nodes = "0"));
        config_add(c, "plain", SEL(.nodes = "1"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        /* The policy's own plan is the ceiling: every CPU. */
        pp = plan_find_policy(p, "guaranteed");
        ck_assert(policy_plan_within_cpuset(pp));
        assert_set(&pp->cpus, "0-31");
        assert_explains(
                p, "guaranteed", "within: cpuset: each process gets those of these CPUs its cgroup allows");
        ck_assert_int_eq(plan_narrow_to_cpuset(pp, t, &pod, &own), 1);
        assert_set(&own.cpus, "8-11,24-27");
        assert_set(&own.nodes, "1");
        assert_set(&own.memory_nodes, "1");
        ck_assert(explains(&own, "within: cpuset: its cgroup allows 8-11,24-27: 8-11,24-27"));
        ck_assert(own.threads[0].spread);
        ck_assert_uint_eq(own.threads[0].n_spread_order, 8);
        {
                static const unsigned order[] = {8, 9, 10, 11, 24, 25, 26, 27};

                for (size_t i = 0; i < ELEMENTSOF(order); i++)
                        ck_assert_uint_eq(own.threads[0].spread_order[i], order[i]);
        }
        assert_set(&own.threads[1].cpus, "8-11,24-27");
        assert_set(&own.threads[2].cpus, "0");
        /* The policy's plan is left as it was. */
        assert_set(&pp->cpus, "0-31");
        ck_assert_uint_eq(pp->threads[0].n_spread_order, 32);

        /* Disjoint: kept, and said. */
        ck_assert_int_eq(plan_narrow_to_cpuset(plan_find_policy(p, "node0"), t, &pod, &other), 1);
        assert_set(&other.cpus, "0-7,16-23");
        ck_assert(explains(&other, "its cgroup allows 8-11,24-27, none of 0-7,16-23"));

        /* Not within: nothing to do. */
        ck_assert(!policy_plan_within_cpuset(plan_find_policy(p, "plain")));
        ck_assert_int_eq(plan_narrow_to_cpuset(plan_find_policy(p, "plain"), t, &pod, &none), 0);
        ck_assert_ptr_null(none.threads);
}
END_TEST

/*
 * near: through the sysfs fallback on a fixture tree: a device on node 1 of the 2-socket file,
 * and a virtual one (no device link) with no NUMA locality: every CPU, with a warning since
 * this machine has two nodes. A missing device is pending.
 */
START_TEST(test_near_sysfs) {
        char dir[] = "/tmp/test-plan-sysfs-XXXXXX";
        _cleanup_free_ char *cmd = NULL;
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        const PolicyPlan *pp;
        Policy *pol;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(
                asprintf(
                        &cmd,
                        "mkdir -p %1$s/sys/devices/pci0000:00/0000:00:09.0 %1$s/sys/class/net/ens9 "
                        "%1$s/sys/class/net/veth0 && echo 1 > "
                        "%1$s/sys/devices/pci0000:00/0000:00:09.0/numa_node "
                        "&& ln -s ../../../devices/pci0000:00/0000:00:09.0 %1$s/sys/class/net/ens9/device",
                        dir),
                0);
        ck_assert_int_eq(system(cmd), 0);
        ck_assert_int_eq(topology_set_sysfs_root(t, dir), 0);

        config_set_reserve(c, "8,24");
        config_add(c, "ens9", SEL(.near = "ens9", .cores = 2));
        pol = config_add(c, "veth", SEL(.near = "veth0", .cores = 1));
        pol->cpus.location = (Location){"v.yaml", 4, 9};
        pol = config_add(c, "nosuch", SEL(.near = "eth9"));
        pol->cpus.location = (Location){"n.yaml", 7, 11};
        config_add(c, "nosuch-pci", SEL(.near = "0000:99:00.0"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        /* Node 1 without reserved core 8: cores 9 and 10. */
        assert_cpus(p, "ens9", "9-10,25-26");
        assert_cpus(p, "veth", "0,16");
        pp = plan_find_policy(p, "veth");
        assert_warnings(
                pp,
                "near: veth0 has no NUMA locality (a virtual device, or the firmware doesn't say); using "
                "every "
                "online CPU",
                NULL);
        ck_assert_uint_eq(pp->warning_locations[0]->line, 4);
        assert_explains(
                p, "veth", "near veth0: the device has no NUMA locality, every online CPU is near it");
        assert_pending(p, "nosuch", "near: eth9: no such network device or PCI address here");
        pp = plan_find_policy(p, "nosuch");
        ck_assert_uint_eq(pp->pending_location->line, 7);
        assert_pending(p, "nosuch-pci", "near: 0000:99:00.0: no such network device or PCI address here");

        free(cmd);
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", dir), 0);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * What can't be resolved on this machine is pending
 * with the reason: a node it lacks (test_nonexistent_node), a device it lacks, more cores
 * than it has. The counts come from sysfs, not from lib/topology.
 */
START_TEST(test_live_pending) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL, sib = CPUSET_NULL;
        _cleanup_free_ char *expect = NULL;
        unsigned whole = 0;

        ck_assert_int_eq(topology_load_live(&t), 0);
        /* Whole cores: sysfs sibling lists entirely within the allowed CPUs. */
        CPUSET_FOREACH (cpu, topology_online_cpus(t)) {
                _cleanup_free_ char *path = NULL, *line = NULL;
                _cleanup_fclose_ FILE *f = NULL;
                size_t size = 0;

                if (cpuset_contains(&seen, cpu))
                        continue;
                ck_assert_int_ge(
                        asprintf(&path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu),
                        0);
                f = fopen(path, "re");
                ck_assert_ptr_nonnull(f);
                ck_assert_int_ge(getline(&line, &size, f), 0);
                ck_assert_int_eq(cpuset_parse_list(line, &sib, NULL), 0);
                cpuset_and(&sib, topology_online_cpus(t));
                ck_assert_int_eq(cpuset_or(&seen, &sib), 0);
                whole += cpuset_is_subset(&sib, topology_allowed_cpus(t));
        }

        config_add(c, "nosuchdev", SEL(.near = "nosuchdev"));
        config_add(c, "huge", SEL(.cores = 100000));
        config_add(c, "huge-cpus", SEL(.cpus = 100000));
        config_add(c, "one", SEL(.cores = 1));
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_pending(p, "nosuchdev", "near: nosuchdev: no such network device or PCI address here");
        ck_assert_int_ge(asprintf(&expect, "wanted 100000 cores on the online CPUs, %u free", whole), 0);
        assert_pending(p, "huge", expect);
        free(expect);
        ck_assert_int_ge(
                asprintf(
                        &expect, "wanted 100000 CPUs on the online CPUs, %u free",
                        cpuset_count(topology_allowed_cpus(t))),
                0);
        assert_pending(p, "huge-cpus", expect);
        if (whole > 0) {
                const PolicyPlan *pp = plan_find_policy(p, "one");

                ck_assert_msg(!pp->pending_reason, "one core is pending: %s", pp->pending_reason);
                ck_assert_int_ge(topology_core_siblings(t, (unsigned)cpuset_next(&pp->cpus, -1), &sib), 0);
                ck_assert(cpuset_equal(&sib, &pp->cpus));
        }
}
END_TEST

/* ---- determinism ---- */

static void assert_plans_equal(const Plan *a, const Plan *b) {
        ck_assert_uint_eq(a->n_policies, b->n_policies);
        ck_assert(cpuset_equal(&a->reserve, &b->reserve));
        ck_assert_uint_eq(strv_length(a->warnings), strv_length(b->warnings));
        for (size_t i = 0; i < strv_length(a->warnings); i++)
                ck_assert_str_eq(a->warnings[i], b->warnings[i]);

        for (size_t i = 0; i < a->n_policies; i++) {
                const PolicyPlan *x = &a->policies[i], *y = &b->policies[i];

                ck_assert_ptr_eq(x->policy, y->policy);
                ck_assert(streq_ptr(x->pending_reason, y->pending_reason));
                ck_assert_int_eq(x->has_cpus, y->has_cpus);
                ck_assert(cpuset_equal(&x->cpus, &y->cpus));
                ck_assert_uint_eq(x->n_uids, y->n_uids);
                for (size_t j = 0; j < x->n_uids; j++)
                        ck_assert_uint_eq(x->uids[j], y->uids[j]);
                for (size_t j = 0; j < x->policy->n_threads; j++) {
                        ck_assert_int_eq(x->threads[j].has_cpus, y->threads[j].has_cpus);
                        ck_assert(cpuset_equal(&x->threads[j].cpus, &y->threads[j].cpus));
                }
                ck_assert_uint_eq(strv_length(x->warnings), strv_length(y->warnings));
                for (size_t j = 0; j < strv_length(x->warnings); j++)
                        ck_assert_str_eq(x->warnings[j], y->warnings[j]);
        }
}

START_TEST(test_deterministic) {
        static const char *const files[] = {
                "AMD-17h-Zen-2xEpyc-7451.xml", "coral-lassen.xml", "16amd64-8n2c-cpusets.xml"};
        _cleanup_(config_freep) Config *c = config_new();
        Policy *pol;

        config_set_reserve(c, "0-3,48-51,90");
        config_add(c, "lit", sel_literal("0-9,100-200"));
        config_add(c, "n1", sel_map("1", NULL, RESERVED_AVOID));
        config_add(c, "n8", sel_map("8", NULL, RESERVED_AVOID));
        config_add(c, "p0-only", sel_map(NULL, "0", RESERVED_ONLY));
        pol = config_add(c, "threads", sel_map("0-1", "0", RESERVED_ALLOW));
        policy_add_thread(pol, "a", sel_literal("5"));
        policy_add_thread(pol, "b", sel_map("3", NULL, RESERVED_AVOID));
        pol = config_add(c, "users", sel_literal("6"));
        policy_set_users(pol, "daemon", "root", NULL);

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_(topology_freep) Topology *t = load_corpus(files[i]);
                _cleanup_(plan_freep) Plan *a = NULL, *b = NULL;

                ck_assert_int_eq(plan_new(c, t, &a), 0);
                ck_assert_int_eq(plan_new(c, t, &b), 0);
                assert_plans_equal(a, b);
        }
}
END_TEST

static int is_xml(const struct dirent *de) {
        size_t l = strlen(de->d_name);
        return l > 4 && streq(de->d_name + l - 4, ".xml");
}

/*
 * For every corpus topology: a node (or package) selector gives that domain's online, allowed
 * CPUs, minus the reserve (here: the first online core), exactly as the topology reports them.
 */
START_TEST(test_corpus_domains) {
        const char *corpus = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *dir = NULL;
        struct dirent **files = NULL;
        int n_files;

        ck_assert_msg(corpus && *corpus, "AFFINITYD_CORPUS is not set");
        ck_assert_int_ge(asprintf(&dir, "%s/topologies", corpus), 0);
        n_files = scandir(dir, &files, is_xml, alphasort);
        ck_assert_msg(n_files > 0, "no topology in %s", dir);

        for (int f = 0; f < n_files; f++) {
                _cleanup_(topology_freep) Topology *t = load_corpus(files[f]->d_name);
                _cleanup_(config_freep) Config *c = config_new();
                _cleanup_(plan_freep) Plan *p = NULL;
                _cleanup_cpuset_ CpuSet reserve = CPUSET_NULL;
                size_t i = 0;

                ck_assert_int_eq(
                        topology_core_siblings(
                                t, (unsigned)cpuset_next(topology_online_cpus(t), -1), &reserve),
                        0);
                c->has_reserve = true;
                ck_assert_int_eq(cpuset_copy(&c->reserve, &reserve), 0);

                CPUSET_FOREACH (n, topology_nodes(t)) {
                        _cleanup_free_ char *name = NULL, *list = NULL;
                        ck_assert_int_ge(asprintf(&name, "node%d", n), 0);
                        ck_assert_int_ge(asprintf(&list, "%d", n), 0);
                        config_add(c, name, sel_map(list, NULL, RESERVED_AVOID));
                }
                CPUSET_FOREACH (n, topology_packages(t)) {
                        _cleanup_free_ char *name = NULL, *list = NULL;
                        ck_assert_int_ge(asprintf(&name, "package%d", n), 0);
                        ck_assert_int_ge(asprintf(&list, "%d", n), 0);
                        config_add(c, name, sel_map(NULL, list, RESERVED_AVOID));
                }
                ck_assert_int_eq(plan_new(c, t, &p), 0);

                CPUSET_FOREACH (n, topology_nodes(t)) {
                        _cleanup_cpuset_ CpuSet one = CPUSET_NULL, want = CPUSET_NULL;
                        const PolicyPlan *pp = &p->policies[i++];

                        ck_assert_int_eq(cpuset_add(&one, n), 0);
                        ck_assert_int_eq(topology_cpus_of_nodes(t, &one, &want), 0);
                        cpuset_and(&want, topology_allowed_cpus(t));
                        cpuset_andnot(&want, &reserve);
                        if (cpuset_is_empty(&want)) {
                                ck_assert_msg(
                                        pp->pending_reason, "%s: node %d should be pending",
                                        files[f]->d_name, n);
                                continue;
                        }
                        ck_assert_msg(
                                !pp->pending_reason, "%s: node %d pending: %s", files[f]->d_name, n,
                                pp->pending_reason);
                        ck_assert_msg(cpuset_equal(&pp->cpus, &want), "%s: node %d", files[f]->d_name, n);
                        ck_assert(!cpuset_intersects(&pp->cpus, &reserve));
                        ck_assert(cpuset_is_subset(&pp->cpus, topology_online_cpus(t)));
                }
                CPUSET_FOREACH (n, topology_packages(t)) {
                        _cleanup_cpuset_ CpuSet one = CPUSET_NULL, want = CPUSET_NULL;
                        const PolicyPlan *pp = &p->policies[i++];

                        ck_assert_int_eq(cpuset_add(&one, n), 0);
                        ck_assert_int_eq(topology_cpus_of_packages(t, &one, &want), 0);
                        cpuset_and(&want, topology_allowed_cpus(t));
                        cpuset_andnot(&want, &reserve);
                        if (cpuset_is_empty(&want)) {
                                ck_assert(pp->pending_reason);
                                continue;
                        }
                        ck_assert_msg(
                                !pp->pending_reason, "%s: package %d pending: %s", files[f]->d_name, n,
                                pp->pending_reason);
                        ck_assert_msg(cpuset_equal(&pp->cpus, &want), "%s: package %d", files[f]->d_name, n);
                }
        }
        for (int f = 0; f < n_files; f++)
                free(files[f]);
        free(files);
}
END_TEST

/* ---- every selector on every corpus topology ---- */

/* The network devices INDEX.md lists for file, with their nodes ("eth0→N1, enp3s0→N0,4"). */
typedef struct IndexDevice {
        char name[64];
        CpuSet nodes;
} IndexDevice;

static size_t index_devices(const char *file, IndexDevice *ret, size_t max) {
        const char *corpus = getenv("AFFINITYD_CORPUS"), *arrow = "→";
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0, n = 0;
        char *line;

        ck_assert_int_ge(asprintf(&path, "%s/topologies/INDEX.md", corpus), 0);
        f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(getdelim(&text, &size, '\0', f), 0);
        path = mfree(path);
        ck_assert_int_ge(asprintf(&path, "| `%s` |", file), 0);
        line = strstr(text, path);
        ck_assert_msg(line, "%s is not in INDEX.md", file);
        *strchrnul(line, '\n') = '\0';
        line = strrchr(line, '|'); /* the end of the row */
        *line = '\0';
        line = strrchr(strstr(text, path), '|') + 1; /* the last cell */

        for (const char *p = line; (p = strstr(p, arrow)) && n < max;) {
                const char *start = p, *q = p + strlen(arrow) + 1; /* after "N" */
                char list[64];
                size_t l;

                while (start > line && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
                        start--;
                ck_assert_uint_lt((size_t)(p - start), sizeof(ret[n].name));
                memcpy(ret[n].name, start, (size_t)(p - start));
                ret[n].name[p - start] = '\0';
                l = strspn(q, "0123456789,");
                ck_assert_uint_lt(l, sizeof(list));
                memcpy(list, q, l);
                list[l] = '\0';
                ret[n].nodes = set_of(list);
                n++;
                p = q;
        }
        return n;
}

/* Whole cores of t within pool. */
static unsigned whole_cores_within(const Topology *t, const CpuSet *pool) {
        unsigned n = 0;

        for (unsigned c = 0; c < topology_n_cores(t); c++)
                n += cpuset_is_subset(topology_core_cpus(t, c), pool);
        return n;
}

/* Cores of t with a PU in set. */
static unsigned cores_touched(const Topology *t, const CpuSet *set) {
        unsigned n = 0;

        for (unsigned c = 0; c < topology_n_cores(t); c++)
                n += cpuset_intersects(topology_core_cpus(t, c), set);
        return n;
}

/* No two CPUs of set on one core. */
static void assert_one_per_core(const Topology *t, const CpuSet *set, const char *what) {
        ck_assert_msg(
                cores_touched(t, set) == cpuset_count(set), "%s: two SMT siblings in %s", what,
                cpuset_to_string(set));
}

/* A spread order: every CPU of set once; distinct cores first, then only cores already used. */
static void assert_spread_order(
        const Topology *t, const ThreadPlan *tp, const CpuSet *set, const char *what) {
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL, cores = CPUSET_NULL;
        unsigned n_cores = cores_touched(t, set);

        ck_assert(tp->spread);
        ck_assert_uint_eq(tp->n_spread_order, cpuset_count(set));
        for (size_t i = 0; i < tp->n_spread_order; i++) {
                unsigned cpu = tp->spread_order[i];
                int core = topology_core_of_cpu(t, cpu);

                ck_assert_msg(cpuset_contains(set, cpu), "%s: spread CPU %u is not in the set", what, cpu);
                ck_assert_msg(!cpuset_contains(&seen, cpu), "%s: spread CPU %u twice", what, cpu);
                ck_assert_int_eq(cpuset_add(&seen, cpu), 0);
                ck_assert_int_ge(core, 0);
                if (i < n_cores)
                        ck_assert_msg(
                                !cpuset_contains(&cores, (unsigned)core),
                                "%s: spread position %zu (CPU %u) is a sibling before every core is used",
                                what, i, cpu);
                else
                        ck_assert(cpuset_contains(&cores, (unsigned)core));
                ck_assert_int_eq(cpuset_add(&cores, (unsigned)core), 0);
        }
}

/*
 * For every corpus topology, a policy set exercising each selector, planned,
 * with the invariants checked against what the topology says (not against the plan's own
 * bookkeeping): nothing offline, disallowed or reserved unless asked; one-per-core never
 * gives two siblings; cores: N gives N whole cores; exclusive sets are disjoint and withheld;
 * near lands on the device's nodes as INDEX.md lists them; spread uses distinct cores before
 * siblings; a count is pending exactly when there are not enough cores for it.
 */
START_TEST(test_corpus_selectors) {
        const char *corpus = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *dir = NULL;
        struct dirent **files = NULL;
        int n_files;

        ck_assert_int_ge(asprintf(&dir, "%s/topologies", corpus), 0);
        n_files = scandir(dir, &files, is_xml, alphasort);
        ck_assert_msg(n_files > 0, "no topology in %s", dir);

        for (int f = 0; f < n_files; f++) {
                const char *file = files[f]->d_name;
                _cleanup_(topology_freep) Topology *t = load_corpus(file);
                _cleanup_(config_freep) Config *c = config_new();
                _cleanup_(plan_freep) Plan *p = NULL;
                _cleanup_cpuset_ CpuSet reserve = CPUSET_NULL, held = CPUSET_NULL, pool = CPUSET_NULL,
                                        x = CPUSET_NULL;
                _cleanup_free_ char *first_node = NULL, *last_package = NULL, *first_cpu = NULL;
                IndexDevice devices[16] = {};
                size_t n_devices = index_devices(file, devices, ELEMENTSOF(devices));
                const CpuSet *allowed = topology_allowed_cpus(t);
                unsigned n_kinds = topology_n_cpu_kinds(t);
                Policy *pol;

                /* Reserve the first online core. */
                ck_assert_int_eq(topology_core_siblings(t, (unsigned)cpuset_next(allowed, -1), &reserve), 0);
                c->has_reserve = true;
                ck_assert_int_eq(cpuset_copy(&c->reserve, &reserve), 0);

                CPUSET_FOREACH (n, topology_nodes(t)) {
                        _cleanup_cpuset_ CpuSet one = CPUSET_NULL, nc = CPUSET_NULL;

                        ck_assert_int_eq(cpuset_add(&one, n), 0);
                        ck_assert_int_eq(topology_cpus_of_nodes(t, &one, &nc), 0);
                        if (!first_node && cpuset_intersects(&nc, allowed))
                                ck_assert_int_ge(asprintf(&first_node, "%d", n), 0);
                }
                ck_assert_ptr_nonnull(first_node);
                ck_assert_int_ge(asprintf(&last_package, "%d", cpuset_last(topology_packages(t))), 0);
                ck_assert_int_ge(asprintf(&first_cpu, "%d", cpuset_next(allowed, -1)), 0);

                config_add(c, "cores2", SEL(.cores = 2));
                config_add(c, "cores2-one", SEL(.cores = 2, .smt = SMT_ONE_PER_CORE));
                config_add(c, "cpus3", SEL(.cpus = 3));
                config_add(c, "cpus3-one", SEL(.cpus = 3, .smt = SMT_ONE_PER_CORE));
                config_add(c, "excl-core", SEL(.cores = 1, .exclusive = true));
                config_add(c, "excl-cpus", SEL(.cpus = 2, .smt = SMT_ONE_PER_CORE, .exclusive = true));
                config_add(c, "excl-pkg", SEL(.packages = last_package, .cores = 1, .exclusive = true));
                config_add(c, "one-per-core", SEL(.smt = SMT_ONE_PER_CORE));
                config_add(c, "allow", SEL(.cores = 1, .reserved = RESERVED_ALLOW));
                config_add(c, "only", SEL(.reserved = RESERVED_ONLY));
                config_add(c, "perf", SEL(.kind = CPU_KIND_PERFORMANCE, .cpus = 2));
                config_add(c, "eff", SEL(.kind = CPU_KIND_EFFICIENCY));
                pol = config_add(c, "spread", SEL(.nodes = first_node));
                policy_add_thread(pol, "w*", sel_spread());
                policy_add_thread(pol, "x", sel_literal(first_cpu));
                pol = config_add(c, "spread-bare", (CpuSelector){.kind = CPU_SELECTOR_NONE});
                policy_add_thread(pol, "w*", sel_spread());
                for (size_t d = 0; d < n_devices; d++) {
                        _cleanup_free_ char *a = NULL, *b = NULL;

                        ck_assert_int_ge(asprintf(&a, "near-%s", devices[d].name), 0);
                        ck_assert_int_ge(asprintf(&b, "near-%s-core", devices[d].name), 0);
                        config_add(c, a, SEL(.near = devices[d].name));
                        config_add(c, b, SEL(.near = devices[d].name, .cores = 1, .smt = SMT_ONE_PER_CORE));
                }
                config_add(c, "rest", SEL());
                config_add(c, "literal", sel_literal("0-8191"));

                ck_assert_int_eq(plan_new(c, t, &p), 0);
                ck_assert_uint_eq(p->n_policies, c->n_policies);

                for (size_t i = 0; i < p->n_policies; i++) {
                        const PolicyPlan *pp = &p->policies[i];
                        const CpuSelector *s = &pp->policy->cpus;
                        const char *name = pp->policy->name;
                        _cleanup_free_ char *what = NULL;
                        bool count_possible = true;

                        ck_assert_int_ge(asprintf(&what, "%s: %s", file, name), 0);

                        /* The candidates, from the topology: allowed, reserve applied, not held. */
                        ck_assert_int_eq(cpuset_copy(&pool, allowed), 0);
                        if (s->reserved == RESERVED_AVOID)
                                cpuset_andnot(&pool, &reserve);
                        else if (s->reserved == RESERVED_ONLY)
                                cpuset_and(&pool, &reserve);
                        cpuset_andnot(&pool, &held);
                        if (s->has_packages) {
                                ck_assert_int_eq(topology_cpus_of_packages(t, &s->packages, &x), 0);
                                cpuset_and(&pool, &x);
                        }
                        if (s->n_cores > 0)
                                count_possible = whole_cores_within(t, &pool) >= s->n_cores;
                        else if (s->n_cpus > 0 && s->smt == SMT_ONE_PER_CORE)
                                count_possible = cores_touched(t, &pool) >= s->n_cpus;
                        else if (s->n_cpus > 0)
                                count_possible = cpuset_count(&pool) >= s->n_cpus;
                        if (s->near || (s->cpu_kind != CPU_KIND_ANY && n_kinds > 1))
                                count_possible = true; /* narrower: checked below when resolved */

                        if (streq(name, "eff") && n_kinds <= 1) {
                                assert_pending(p, name, "kind: efficiency: this machine has one CPU kind");
                                continue;
                        }
                        if (pp->pending_reason) {
                                ck_assert_msg(
                                        !count_possible || s->near || s->cpu_kind != CPU_KIND_ANY,
                                        "%s: pending though the machine has room: %s", what,
                                        pp->pending_reason);
                                if (s->n_cores > 0 || s->n_cpus > 0)
                                        ck_assert_msg(
                                                strncmp(pp->pending_reason, "wanted ", 7) == 0 ||
                                                        strstr(pp->pending_reason, "held by earlier"),
                                                "%s: %s", what, pp->pending_reason);
                                ck_assert(cpuset_is_empty(&pp->exclusive_cpus));
                                continue;
                        }
                        ck_assert_msg(count_possible, "%s: resolved though there is no room", what);
                        if (!pp->has_cpus) {
                                ck_assert_int_eq(s->kind, CPU_SELECTOR_NONE);
                                ck_assert(cpuset_is_empty(&pp->nodes));
                        } else {
                                ck_assert(!cpuset_is_empty(&pp->cpus));
                                ck_assert_int_eq(topology_nodes_of_cpus(t, &pp->cpus, &x), 0);
                                ck_assert_msg(cpuset_equal(&x, &pp->nodes), "%s: nodes", what);
                        }

                        if (s->kind == CPU_SELECTOR_MAPPING) {
                                /* Never offline, disallowed, reserved (unless asked) or held. */
                                ck_assert_msg(
                                        cpuset_is_subset(&pp->cpus, allowed), "%s: %s not allowed", what,
                                        cpuset_to_string(&pp->cpus));
                                if (s->reserved == RESERVED_AVOID)
                                        ck_assert_msg(
                                                !cpuset_intersects(&pp->cpus, &reserve), "%s: reserved CPU",
                                                what);
                                if (s->reserved == RESERVED_ONLY)
                                        ck_assert(cpuset_is_subset(&pp->cpus, &reserve));
                                ck_assert_msg(!cpuset_intersects(&pp->cpus, &held), "%s: held CPU", what);
                                ck_assert(cpuset_is_subset(&pp->cpus, &pool));
                        }
                        if (s->smt == SMT_ONE_PER_CORE)
                                assert_one_per_core(t, &pp->cpus, what);
                        if (s->n_cores > 0) {
                                /* N cores, each whole within the candidates. */
                                ck_assert_uint_eq(cores_touched(t, &pp->cpus), s->n_cores);
                                for (unsigned k = 0; k < topology_n_cores(t); k++) {
                                        const CpuSet *core = topology_core_cpus(t, k);

                                        if (!cpuset_intersects(core, &pp->cpus))
                                                continue;
                                        ck_assert_msg(
                                                cpuset_is_subset(core, &pool), "%s: core %s is not whole",
                                                what, cpuset_to_string(core));
                                        if (s->smt == SMT_ALL)
                                                ck_assert(cpuset_is_subset(core, &pp->cpus));
                                }
                        }
                        if (s->n_cpus > 0) {
                                _cleanup_cpuset_ CpuSet kpool = CPUSET_NULL, kind = CPUSET_NULL;

                                /* One PU per core whenever the candidates (of the kind asked
                                 * for) have enough cores. */
                                ck_assert_int_eq(cpuset_copy(&kpool, &pool), 0);
                                if (s->cpu_kind != CPU_KIND_ANY && n_kinds > 1) {
                                        ck_assert_int_eq(
                                                topology_cpu_kind(
                                                        t,
                                                        s->cpu_kind == CPU_KIND_PERFORMANCE ? n_kinds - 1
                                                                                            : 0,
                                                        &kind, NULL),
                                                0);
                                        cpuset_and(&kpool, &kind);
                                }
                                ck_assert_uint_eq(cpuset_count(&pp->cpus), s->n_cpus);
                                if (cores_touched(t, &kpool) >= s->n_cpus)
                                        assert_one_per_core(t, &pp->cpus, what);
                        }
                        if (s->cpu_kind == CPU_KIND_PERFORMANCE && n_kinds > 1) {
                                ck_assert_int_eq(topology_cpu_kind(t, n_kinds - 1, &x, NULL), 0);
                                ck_assert(cpuset_is_subset(&pp->cpus, &x));
                        }
                        if (s->near) {
                                /* On the device's node(s), as INDEX.md says. */
                                const IndexDevice *dev = NULL;

                                for (size_t d = 0; d < n_devices; d++)
                                        if (streq(devices[d].name, s->near))
                                                dev = &devices[d];
                                ck_assert_ptr_nonnull(dev);
                                ck_assert_int_eq(topology_cpus_of_nodes(t, &dev->nodes, &x), 0);
                                ck_assert_msg(
                                        cpuset_is_subset(&pp->cpus, &x), "%s: %s is not on nodes %s", what,
                                        cpuset_to_string(&pp->cpus), cpuset_to_string(&dev->nodes));
                                ck_assert(cpuset_is_subset(&pp->nodes, &dev->nodes));
                                if (s->n_cores == 0) {
                                        /* All of the node(s) that is still free. */
                                        cpuset_and(&x, &pool);
                                        ck_assert(cpuset_equal(&x, &pp->cpus));
                                }
                        }
                        if (streq(name, "rest"))
                                ck_assert(cpuset_equal(&pp->cpus, &pool));
                        if (streq(name, "literal")) {
                                ck_assert(cpuset_equal(&pp->cpus, topology_online_cpus(t)));
                                ck_assert_uint_ge(strv_length(pp->warnings), 1);
                        }
                        for (size_t k = 0; k < pp->policy->n_threads; k++)
                                if (pp->policy->threads[k].cpus.kind == CPU_SELECTOR_SPREAD)
                                        assert_spread_order(
                                                t, &pp->threads[k], pp->has_cpus ? &pp->cpus : &pool, what);

                        /* Exclusive: disjoint from what was held before, and held from now on:
                         * the chosen CPUs and the other online, unreserved PUs of their cores. */
                        if (s->exclusive) {
                                _cleanup_cpuset_ CpuSet whole = CPUSET_NULL, sib = CPUSET_NULL;

                                CPUSET_FOREACH (cpu, &pp->cpus) {
                                        ck_assert_int_eq(topology_core_siblings(t, (unsigned)cpu, &sib), 0);
                                        ck_assert_int_eq(cpuset_or(&whole, &sib), 0);
                                }
                                cpuset_and(&whole, topology_online_cpus(t));
                                cpuset_andnot(&whole, &p->reserve);
                                ck_assert_int_eq(cpuset_or(&whole, &pp->cpus), 0);
                                ck_assert(cpuset_equal(&pp->exclusive_cpus, &whole));
                                ck_assert(!cpuset_intersects(&pp->exclusive_cpus, &held));
                                ck_assert_int_eq(cpuset_or(&held, &pp->exclusive_cpus), 0);
                        } else
                                ck_assert(cpuset_is_empty(&pp->exclusive_cpus));
                }

                /* The three exclusive policies resolve on every corpus machine, so something is held. */
                ck_assert_msg(!cpuset_is_empty(&held), "%s: nothing held", file);
                for (size_t d = 0; d < n_devices; d++)
                        cpuset_done(&devices[d].nodes);
        }
        for (int f = 0; f < n_files; f++)
                free(files[f]);
        free(files);
}
END_TEST

/* ---- why a spread order ---- */

/* The corpus's topology files, in order, into *ret (each and the array to be freed). Returns
 * their number, at least 1. */
static int corpus_topologies(struct dirent ***ret) {
        _cleanup_free_ char *dir = NULL;
        int n;

        ck_assert_int_ge(asprintf(&dir, "%s/topologies", getenv("AFFINITYD_CORPUS")), 0);
        n = scandir(dir, ret, is_xml, alphasort);
        ck_assert_msg(n > 0, "no topology in %s", dir);
        return n;
}

/* The lines plan_spread_explain() gives for plan_spread_order() of the cpu-list set on t. */
static char **spread_explained(const Topology *t, const char *set) {
        _cleanup_cpuset_ CpuSet s = set_of(set);
        _cleanup_free_ unsigned *order = NULL;
        char **lines = NULL;
        size_t n = 0;

        ck_assert_int_eq(plan_spread_order(t, &s, &order, &n), 0);
        ck_assert_int_eq(plan_spread_explain(t, order, n, &lines), 0);
        return lines;
}

/* lines are exactly the NULL-terminated varargs. */
static void assert_lines(char **lines, ...) {
        va_list ap;
        size_t i = 0;

        va_start(ap, lines);
        for (const char *want; (want = va_arg(ap, const char *)); i++) {
                ck_assert_msg(lines && lines[i], "line %zu missing, want \"%s\"", i, want);
                ck_assert_str_eq(lines[i], want);
        }
        va_end(ap);
        ck_assert_msg(!lines || !lines[i], "unexpected line %zu: \"%s\"", i, lines[i]);
}

/*
 * The explanation of a spread order on the corpus's shapes, checked against lstopo: cores
 * first then siblings (SMT2, SMT4, a hybrid part with SMT on its P-cores only, no SMT), and
 * how the cores are packed (one L3 of one node, two L3s on two nodes, four L3s of one node,
 * a package split into NUMA nodes without L3), or nothing of packing on a single-L3 machine.
 */
START_TEST(test_spread_explain) {
        _cleanup_(topology_freep) Topology *two = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(topology_freep) Topology *hybrid = load_corpus("Intel-RaptorLake-Corei7-1370P.xml");
        _cleanup_(topology_freep) Topology *knl = load_corpus("topo.knl05_v2_4.xml");
        _cleanup_(topology_freep) Topology *flat = load_corpus("96em64t-4n4d3ca2co-pci.xml");
        _cleanup_strv_free_ char **node1 = spread_explained(two, "8-15,24-31"),
                                 **whole = spread_explained(two, "0-31"),
                                 **pcores = spread_explained(hybrid, "0-19"),
                                 **quadrant = spread_explained(knl, "16-31,80-95,144-159,208-223"),
                                 **l3s = spread_explained(flat, "24-47"), **none = NULL;

        /* Node 1 of the 2-socket machine: cores 8-15 (siblings 24-31), all in L3 #1. */
        assert_lines(
                node1,
                "one PU of each of 8 cores first, so that no two threads share a core while one is free: "
                "8-15",
                "cores: all 8 cores in L3 #1 (8-15,24-31) on NUMA node 1",
                "then their second SMT siblings: 24-31", NULL);
        /* The whole machine: L3 #0 of node 0, then L3 #1 of node 1, 8 cores each. */
        assert_lines(
                whole,
                "one PU of each of 16 cores first, so that no two threads share a core while one is free: "
                "0-15",
                "cores packed, so that consecutive threads share an L3 cache and a NUMA node: 8 cores in L3 "
                "#0 "
                "(0-7,16-23) on NUMA node 0, then 8 cores in L3 #1 (8-15,24-31) on NUMA node 1; as many "
                "cores "
                "in each: the lowest CPUs first",
                "then their second SMT siblings: 16-31", NULL);
        /* Raptor Lake: 6 P-cores of 2 PUs (0-11), 8 E-cores (12-19); one L3, one node. */
        assert_lines(
                pcores,
                "one PU of each of 14 cores first, so that no two threads share a core while one is free: "
                "0,2,4,6,8,10,12-19",
                "then the second SMT siblings of 6 of them: 1,3,5,7,9,11", NULL);
        /* Xeon Phi quadrant node 1: 16 cores of 4 PUs (16-31, +64, +128, +192), no L3. */
        assert_lines(
                quadrant,
                "one PU of each of 16 cores first, so that no two threads share a core while one is free: "
                "16-31",
                "cores: all 16 cores in package 0 (16-31,80-95,144-159,208-223) on NUMA node 1",
                "then their second SMT siblings: 80-95", "then their third SMT siblings: 144-159",
                "then their fourth SMT siblings: 208-223", NULL);
        /* 96em64t node 1: four L3s of 6 cores (24+k, 28+k, ... for L3 #4+k), no SMT. */
        assert_lines(
                l3s, "one PU of each of 24 cores (no two of them SMT siblings): 24-47",
                "cores packed, so that consecutive threads share an L3 cache and a NUMA node: 6 cores in L3 "
                "#4 "
                "(24,28,32,36,40,44), 6 cores in L3 #5 (25,29,33,37,41,45), 6 cores in L3 #6 "
                "(26,30,34,38,42,46), 6 cores in L3 #7 (27,31,35,39,43,47) on NUMA node 1; as many cores in "
                "each: the lowest CPUs first",
                NULL);

        /* Nothing to explain. */
        ck_assert_int_eq(plan_spread_explain(two, NULL, 0, &none), 0);
        ck_assert_ptr_null(none);
}
END_TEST

/*
 * For every corpus topology, the explanation of spreading over every allowed CPU says as many
 * cores as the set touches, one line per further SMT sibling the widest core has in it, and a
 * packing line exactly when the machine has several cache domains or NUMA nodes.
 */
START_TEST(test_corpus_spread_explain) {
        struct dirent **files = NULL;
        int n_files = corpus_topologies(&files);

        for (int f = 0; f < n_files; f++) {
                _cleanup_(topology_freep) Topology *t = load_corpus(files[f]->d_name);
                _cleanup_free_ char *list = cpuset_to_string(topology_allowed_cpus(t)), *first = NULL;
                _cleanup_strv_free_ char **lines = spread_explained(t, list);
                _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
                unsigned widest = 0, n_then = 0, n_packing = 0;
                bool packs = topology_n_cache_domains(t) > 1 || topology_n_nodes(t) > 1;

                for (unsigned c = 0; c < topology_n_cores(t); c++) {
                        ck_assert_int_eq(cpuset_copy(&x, topology_core_cpus(t, c)), 0);
                        cpuset_and(&x, topology_allowed_cpus(t));
                        widest = MAX(widest, cpuset_count(&x));
                }
                ck_assert_int_ge(
                        asprintf(
                                &first, "one PU of each of %u cores ",
                                cores_touched(t, topology_allowed_cpus(t))),
                        0);
                ck_assert_ptr_nonnull(lines);
                ck_assert_msg(
                        strncmp(lines[0], first, strlen(first)) == 0, "%s: \"%s\", want \"%s...\"",
                        files[f]->d_name, lines[0], first);
                STRV_FOREACH (l, lines + 1) {
                        n_then += startswith(*l, "then ");
                        n_packing += startswith(*l, "cores");
                }
                ck_assert_msg(
                        n_then == widest - 1, "%s: %u sibling lines for SMT%u", files[f]->d_name, n_then,
                        widest);
                ck_assert_msg(n_packing == packs, "%s: %u packing lines", files[f]->d_name, n_packing);
                ck_assert_uint_eq(strv_length(lines), 1 + n_then + n_packing);
                free(files[f]);
        }
        free(files);
}
END_TEST

START_TEST(test_empty_config) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:1 core:2 pu:1");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;

        ck_assert_int_eq(plan_new(c, t, &p), 0);
        ck_assert_uint_eq(p->n_policies, 0);
        ck_assert(cpuset_is_empty(&p->reserve));
        ck_assert_ptr_null(p->warnings);
        ck_assert_ptr_null(plan_find_policy(p, "x"));
}
END_TEST

/* ---- memory: ---- */

static void policy_set_memory(Policy *p, MemoryNodesKind kind, const char *nodes, bool migrate) {
        p->memory.kind = kind;
        p->memory.migrate = migrate;
        p->memory.location = (Location){.file = "mem.yaml", .line = 7, .column = 7};
        if (nodes)
                p->memory.nodes = set_of(nodes);
}

static void assert_memory(const Plan *p, const char *name, const char *expect) {
        const PolicyPlan *pp = plan_find_policy(p, name);
        _cleanup_free_ char *got = NULL, *line = NULL;

        ck_assert_msg(pp, "no plan for policy %s", name);
        ck_assert_msg(!pp->pending_reason, "policy %s is pending: %s", name, pp->pending_reason);
        ck_assert_msg(pp->has_memory, "policy %s has no memory plan", name);
        got = cpuset_to_string(&pp->memory_nodes);
        ck_assert_msg(streq(got, expect), "policy %s: memory nodes %s, expected %s", name, got, expect);
        ck_assert_int_ge(
                asprintf(
                        &line, "memory: nodes %s%s", expect,
                        pp->has_cpus || pp->policy->memory.kind != MEMORY_LOCAL
                                ? ""
                                : " (nodes: local without cpus: is every node)"),
                0);
        assert_explains(p, name, line);
}

/*
 * nodes: local on multi-node machines is the nodes of the CPUs
 * the policy was given; a node list is taken as written if every node exists, else pending.
 */
START_TEST(test_memory_2socket) {
        _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        const PolicyPlan *pp;
        Policy *pol;

        /* eth0 is on node 1 (see test_hand_2socket_gateway). */
        pol = config_add(c, "db", SEL(.near = "eth0", .cores = 4));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, true);
        pol = config_add(c, "node0", SEL(.nodes = "0"));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        /* A literal list across both sockets: both nodes. */
        pol = config_add(c, "both", sel_literal("7-8"));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        /* CPUs of node 1, memory interleaved by hand on node 0 (as written). */
        pol = config_add(c, "remote", SEL(.nodes = "1"));
        policy_set_memory(pol, MEMORY_NODES, "0", false);
        /* No cpus: local is every node. */
        pol = config_add(c, "no-cpus", (CpuSelector){});
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        pol = config_add(c, "no-node-3", SEL(.nodes = "1"));
        policy_set_memory(pol, MEMORY_NODES, "1,3", false);
        pol = config_add(c, "no-nodes-2-3", (CpuSelector){});
        policy_set_memory(pol, MEMORY_NODES, "0,2-3", false);
        /* A policy pending for its CPUs has no memory plan either. */
        pol = config_add(c, "cpus-pending", SEL(.near = "eth9"));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        /* No memory: nothing planned. */
        config_add(c, "plain", SEL(.nodes = "1"));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        assert_cpus(p, "db", "8-11,24-27");
        assert_memory(p, "db", "1");
        ck_assert(plan_find_policy(p, "db")->policy->memory.migrate);
        assert_memory(p, "node0", "0");
        assert_memory(p, "both", "0-1");
        assert_memory(p, "remote", "0");
        assert_set(&plan_find_policy(p, "remote")->nodes, "1");
        assert_memory(p, "no-cpus", "0-1");
        ck_assert(!plan_find_policy(p, "no-cpus")->has_cpus);
        assert_explains(p, "no-cpus", "memory: nodes 0-1 (nodes: local without cpus: is every node)");

        assert_pending(p, "no-node-3", "memory: NUMA node 3 does not exist here (nodes: 0-1)");
        pp = plan_find_policy(p, "no-node-3");
        ck_assert(!pp->has_memory);
        ck_assert(cpuset_is_empty(&pp->memory_nodes));
        ck_assert_ptr_eq(pp->pending_location, &pp->policy->memory.location);
        ck_assert_uint_eq(pp->pending_location->line, 7);
        assert_pending(p, "no-nodes-2-3", "memory: NUMA nodes 2-3 do not exist here (nodes: 0-1)");

        assert_pending(p, "cpus-pending", "near: eth9: no such network device or PCI address here");
        ck_assert(!plan_find_policy(p, "cpus-pending")->has_memory);

        pp = plan_find_policy(p, "plain");
        ck_assert(!pp->has_memory);
        ck_assert(cpuset_is_empty(&pp->memory_nodes));
        STRV_FOREACH (l, pp->explanation)
                ck_assert_msg(strncmp(*l, "memory:", 7) != 0, "unexpected line \"%s\"", *l);
}
END_TEST

/* AMD EPYC 7451 x2 (see test_hand_epyc): 8 NUMA nodes of 6 cores, nodes 0-3 on package 0. */
START_TEST(test_memory_epyc) {
        _cleanup_(topology_freep) Topology *t = load_corpus("AMD-17h-Zen-2xEpyc-7451.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        Policy *pol;

        config_set_reserve(c, "0-3");
        /* Packed onto node 1 (as tokio in test_hand_epyc). */
        pol = config_add(c, "tokio", SEL(.cores = 4));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, true);
        pol = config_add(c, "n7", SEL(.nodes = "7", .cpus = 4));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        pol = config_add(c, "pkg1", SEL(.packages = "1"));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        /* 8 cores of package 1 take two nodes (4 and 5, see test_hand_epyc). */
        pol = config_add(c, "pkg1-8", SEL(.packages = "1", .cores = 8));
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        pol = config_add(c, "listed", SEL(.nodes = "2"));
        policy_set_memory(pol, MEMORY_NODES, "2-3", false);
        pol = config_add(c, "node8", SEL(.nodes = "2"));
        policy_set_memory(pol, MEMORY_NODES, "8", false);
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        assert_cpus(p, "tokio", "6-9,54-57");
        assert_memory(p, "tokio", "1");
        assert_memory(p, "n7", "7");
        assert_memory(p, "pkg1", "4-7");
        assert_memory(p, "pkg1-8", "4-5");
        assert_memory(p, "listed", "2-3");
        assert_pending(p, "node8", "memory: NUMA node 8 does not exist here (nodes: 0-7)");
}
END_TEST

/* Nodes with memory and no CPU exist for memory: (16amd64-8n2c-cpusets.xml: nodes 1-5, 4-5 CPU-less). */
START_TEST(test_memory_cpuless_node) {
        _cleanup_(topology_freep) Topology *t = load_corpus("16amd64-8n2c-cpusets.xml");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL;
        Policy *pol;

        pol = config_add(c, "far-memory", sel_map("1", NULL, RESERVED_AVOID));
        policy_set_memory(pol, MEMORY_NODES, "4-5", false);
        pol = config_add(c, "every", (CpuSelector){});
        policy_set_memory(pol, MEMORY_LOCAL, NULL, false);
        pol = config_add(c, "zero", (CpuSelector){});
        policy_set_memory(pol, MEMORY_NODES, "0", false);
        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_memory(p, "far-memory", "4-5");
        assert_memory(p, "every", "1-5");
        assert_pending(p, "zero", "memory: NUMA node 0 does not exist here (nodes: 1-5)");
}
END_TEST

/* The plan indexes its active policies' comm: keys for matching; pending ones are left out. */
START_TEST(test_match_index) {
        _cleanup_(topology_freep) Topology *t = load_synthetic("pack:1 core:2 pu:1");
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *empty = NULL;
        MatchCandidates mc;
        Policy *pol;

        pol = config_add(c, "web", sel_literal("0"));
        ck_assert_int_eq(strv_extendf(&pol->match.comm, "nginx"), 0);
        pol = config_add(c, "pending-web", sel_map("7", NULL, RESERVED_AVOID));
        ck_assert_int_eq(strv_extendf(&pol->match.comm, "nginx"), 0);
        pol = config_add(c, "pg", sel_literal("1"));
        ck_assert_int_eq(strv_extendf(&pol->match.comm, "pg*"), 0);
        config_add(c, "everything", sel_literal("1"));

        ck_assert_int_eq(plan_new(c, t, &p), 0);
        assert_pending(p, "pending-web", "NUMA node 7 does not exist here (nodes: 0)");
        ck_assert_ptr_nonnull(p->match_index);
        ck_assert_uint_eq(p->match_index->n_exact, 1);
        ck_assert_uint_eq(p->match_index->n_prefix, 1);
        ck_assert_uint_eq(p->match_index->n_always, 1);
        match_index_candidates(p->match_index, "nginx", false, &mc);
        ck_assert_int_eq(match_candidates_next(&mc), 0);
        ck_assert_int_eq(match_candidates_next(&mc), 3);
        ck_assert_int_eq(match_candidates_next(&mc), -ENOENT);
        match_index_candidates(p->match_index, "pgbouncer", false, &mc);
        ck_assert_int_eq(match_candidates_next(&mc), 2);
        ck_assert_int_eq(match_candidates_next(&mc), 3);
        ck_assert_int_eq(match_candidates_next(&mc), -ENOENT);

        /* No policies: an index all the same. */
        _cleanup_(config_freep) Config *none = config_new();
        ck_assert_int_eq(plan_new(none, t, &empty), 0);
        ck_assert_ptr_nonnull(empty->match_index);
        ck_assert(!match_index_uses_comm(empty->match_index));
}
END_TEST

/* ---- reserve: as a selector ---- */

static void config_set_reserve_selector(Config *c, CpuSelector sel, ReservePer per) {
        c->has_reserve = true;
        cpu_selector_done(&c->reserve_selector.cpus);
        c->reserve_selector = (ReserveSelector){.cpus = sel, .per = per};
}

/* Adds to *ret the PUs of the n lowest-numbered cores with every PU in cpus (and online). */
static void add_lowest_whole_cores(const Topology *t, const CpuSet *cpus, unsigned n, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL;

        CPUSET_FOREACH (cpu, cpus) {
                int core = topology_core_of_cpu(t, cpu);

                if (n == 0)
                        break;
                if (core < 0 || cpuset_contains(&seen, (unsigned)core))
                        continue;
                ck_assert_int_eq(cpuset_add(&seen, (unsigned)core), 0);
                if (!cpuset_is_subset(topology_core_cpus(t, (unsigned)core), cpus))
                        continue;
                ck_assert_int_eq(cpuset_or(ret, topology_core_cpus(t, (unsigned)core)), 0);
                n--;
        }
        ck_assert_uint_eq(n, 0);
}

/*
 * reserve: { cores: 1, per: package } on real machines: in each package its lowest-numbered
 * whole core, every SMT sibling of it (coral-lassen has no CPU 0: its first core is 8-11).
 * per: node likewise per NUMA node. Policies then leave those cores out entirely.
 */
START_TEST(test_reserve_selector_per_package) {
        static const char *const files[] = {
                "24em64t-2n6c2t-pci.xml", "32em64t-2n8c2t-pci-wholeio.xml", "AMD-17h-Zen-2xEpyc-7451.xml",
                "coral-lassen.xml",       "96em64t-4n4d3ca2co-pci.xml",
        };

        for (size_t f = 0; f < ELEMENTSOF(files); f++)
                for (ReservePer per = RESERVE_PER_PACKAGE; per <= RESERVE_PER_NODE; per++) {
                        _cleanup_(topology_freep) Topology *t = load_corpus(files[f]);
                        _cleanup_(config_freep) Config *c = config_new();
                        _cleanup_(plan_freep) Plan *p = NULL;
                        _cleanup_cpuset_ CpuSet expect = CPUSET_NULL, in = CPUSET_NULL;
                        _cleanup_free_ char *sel = NULL, *last = NULL, *l = NULL;
                        const CpuSet *domains =
                                per == RESERVE_PER_PACKAGE ? topology_packages(t) : topology_nodes(t);

                        CPUSET_FOREACH (d, domains) {
                                CpuSet one = CPUSET_NULL;

                                ck_assert_int_eq(cpuset_add(&one, d), 0);
                                ck_assert_int_eq(
                                        per == RESERVE_PER_PACKAGE ? topology_cpus_of_packages(t, &one, &in)
                                                                   : topology_cpus_of_nodes(t, &one, &in),
                                        0);
                                cpuset_done(&one);
                                cpuset_and(&in, topology_allowed_cpus(t));
                                if (!cpuset_is_empty(&in)) /* a node without CPUs reserves nothing */
                                        add_lowest_whole_cores(t, &in, 1, &expect);
                        }

                        config_set_reserve_selector(c, SEL(.cores = 1), per);
                        config_add(c, "rest", SEL(.smt = SMT_ONE_PER_CORE));
                        ck_assert_int_eq(plan_new(c, t, &p), 0);
                        ck_assert_msg(
                                cpuset_equal(&p->reserve, &expect), "%s per %s: reserve %s, expected %s",
                                files[f], per == RESERVE_PER_PACKAGE ? "package" : "node",
                                cpuset_to_string(&p->reserve), cpuset_to_string(&expect));
                        ck_assert_msg(!p->warnings, "%s: warning %s", files[f], p->warnings[0]);
                        /* Whole cores: the policies' one-per-core set shares no core with it. */
                        CPUSET_FOREACH (cpu, &plan_find_policy(p, "rest")->cpus) {
                                _cleanup_cpuset_ CpuSet sib = CPUSET_NULL;

                                ck_assert_int_eq(topology_core_siblings(t, cpu, &sib), 0);
                                ck_assert(!cpuset_intersects(&sib, &p->reserve));
                        }
                        ck_assert_int_eq(reserve_selector_format(&c->reserve_selector, &sel), 0);
                        l = cpuset_to_string(&expect);
                        ck_assert_int_ge(
                                asprintf(&last, "reserve %s: whole cores, every SMT sibling: %s", sel, l),
                                0);
                        ck_assert_ptr_nonnull(p->reserve_explanation);
                        ck_assert_str_eq(
                                p->reserve_explanation[strv_length(p->reserve_explanation) - 1], last);
                        ck_assert_str_eq(
                                plan_reserve_given(p) == &p->reserve ? "resolved" : "literal", "resolved");
                }

        /*
         * The lowest-numbered cores, not packed: on the 96em64t consecutive CPUs are on different
         * packages (L3s), so a policy's cores: 2 on a node takes two of one L3, the reserve the
         * node's two lowest-numbered cores.
         */
        {
                _cleanup_(topology_freep) Topology *t = load_corpus("96em64t-4n4d3ca2co-pci.xml");
                _cleanup_(config_freep) Config *c = config_new();
                _cleanup_(plan_freep) Plan *p = NULL;
                _cleanup_cpuset_ CpuSet expect = CPUSET_NULL, in = CPUSET_NULL, zero = CPUSET_NULL;

                ck_assert_int_eq(cpuset_add(&zero, 0), 0);
                ck_assert_int_eq(topology_cpus_of_nodes(t, &zero, &in), 0);
                add_lowest_whole_cores(t, &in, 2, &expect);
                config_set_reserve_selector(c, SEL(.nodes = "0", .cores = 2), RESERVE_PER_NONE);
                config_add(c, "packed", SEL(.nodes = "0", .cores = 2, .reserved = RESERVED_ALLOW));
                ck_assert_int_eq(plan_new(c, t, &p), 0);
                ck_assert(cpuset_equal(&p->reserve, &expect));
                ck_assert(!cpuset_equal(&plan_find_policy(p, "packed")->cpus, &expect));
        }

        /* Named where the first core is not CPU 0, and how the plan says so. */
        {
                _cleanup_(topology_freep) Topology *t = load_corpus("coral-lassen.xml");
                _cleanup_(config_freep) Config *c = config_new();
                _cleanup_(plan_freep) Plan *p = NULL;

                ck_assert(!cpuset_contains(topology_online_cpus(t), 0));
                config_set_reserve_selector(c, SEL(.cores = 1), RESERVE_PER_PACKAGE);
                ck_assert_int_eq(plan_new(c, t, &p), 0);
                ck_assert(!cpuset_contains(&p->reserve, 0));
                ck_assert_uint_eq(cpuset_count(&p->reserve), 8); /* SMT4, two packages */
                ck_assert_str_eq(p->reserve_explanation[0], "package 0: online CPUs of package 0: 8-87");
        }
}
END_TEST

/*
 * reserve: { cores: 2, near: eth0 }: the two lowest-numbered whole cores of the NIC's node (eth0
 * is on node 1 of the 32em64t, on node 0 of the 24em64t); a device that is absent, or a count
 * a package can't give, reserves nothing there and says so in a warning.
 */
START_TEST(test_reserve_selector_near) {
        static const char *const files[] = {"32em64t-2n8c2t-pci-wholeio.xml", "24em64t-2n6c2t-pci.xml"};

        for (size_t f = 0; f < ELEMENTSOF(files); f++) {
                _cleanup_(topology_freep) Topology *t = load_corpus(files[f]);
                _cleanup_(config_freep) Config *c = config_new();
                _cleanup_(plan_freep) Plan *p = NULL;
                _cleanup_cpuset_ CpuSet near_cpus = CPUSET_NULL, near_nodes = CPUSET_NULL,
                                        expect = CPUSET_NULL;

                ck_assert_int_ge(topology_device_locality(t, "eth0", &near_cpus, &near_nodes, NULL), 0);
                ck_assert_uint_eq(cpuset_count(&near_nodes), 1);
                cpuset_and(&near_cpus, topology_allowed_cpus(t));
                add_lowest_whole_cores(t, &near_cpus, 2, &expect);

                config_set_reserve_selector(c, SEL(.near = "eth0", .cores = 2), RESERVE_PER_NONE);
                config_add(c, "near", SEL(.near = "eth0", .cores = 2));
                ck_assert_int_eq(plan_new(c, t, &p), 0);
                ck_assert_msg(
                        cpuset_equal(&p->reserve, &expect), "%s: reserve %s, expected %s", files[f],
                        cpuset_to_string(&p->reserve), cpuset_to_string(&expect));
                ck_assert_ptr_null(p->warnings);
                /* The policy near the same NIC gets two other cores of its node. */
                ck_assert(!cpuset_intersects(&plan_find_policy(p, "near")->cpus, &p->reserve));
                ck_assert(cpuset_is_subset(&plan_find_policy(p, "near")->cpus, &near_cpus));
        }

        {
                _cleanup_(topology_freep) Topology *t = load_corpus("32em64t-2n8c2t-pci-wholeio.xml");
                _cleanup_(config_freep) Config *c = config_new(), *d = config_new();
                _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
                _cleanup_cpuset_ CpuSet pkg1 = CPUSET_NULL, one = CPUSET_NULL, expect = CPUSET_NULL;
                _cleanup_free_ char *w = NULL, *l = NULL;
                unsigned n_cores;

                config_set_reserve_selector(c, SEL(.near = "eth9", .cores = 2), RESERVE_PER_NONE);
                config_add(c, "all", SEL());
                ck_assert_int_eq(plan_new(c, t, &p), 0);
                ck_assert(cpuset_is_empty(&p->reserve));
                ck_assert_uint_eq(strv_length(p->warnings), 1);
                ck_assert_str_eq(
                        p->warnings[0],
                        "reserve { near: eth9, cores: 2 }: near: eth9: no such network device or PCI "
                        "address here; nothing reserved (every CPU is open to policies)");
                {
                        _cleanup_free_ char *online = cpuset_to_string(topology_online_cpus(t));

                        assert_set(&plan_find_policy(p, "all")->cpus, online);
                }

                /* Package 1 gives what it has; package 0 too few whole cores for this count. */
                ck_assert_int_eq(cpuset_add(&one, 1), 0);
                ck_assert_int_eq(topology_cpus_of_packages(t, &one, &pkg1), 0);
                n_cores = cpuset_count(&pkg1) / 2; /* SMT2 */
                config_set_reserve_selector(d, SEL(.packages = "1", .cores = n_cores), RESERVE_PER_PACKAGE);
                ck_assert_int_eq(plan_new(d, t, &q), 0);
                add_lowest_whole_cores(t, &pkg1, n_cores, &expect);
                ck_assert(cpuset_equal(&q->reserve, &expect));
                ck_assert_ptr_null(q->warnings);

                config_set_reserve_selector(d, SEL(.cores = n_cores + 1), RESERVE_PER_PACKAGE);
                q = plan_free(q);
                ck_assert_int_eq(plan_new(d, t, &q), 0);
                ck_assert(cpuset_is_empty(&q->reserve));
                ck_assert_uint_eq(strv_length(q->warnings), 2);
                ck_assert_int_ge(
                        asprintf(
                                &w,
                                "reserve { cores: %u, per: package }: package 1: wanted %u cores on package "
                                "1, "
                                "%u free; nothing reserved there",
                                n_cores + 1, n_cores + 1, n_cores),
                        0);
                ck_assert_str_eq(q->warnings[1], w);
        }
}
END_TEST

/*
 * reserve "0" on an SMT machine: CPU 0's sibling is never picked by smt: one-per-core or cpus: N
 * while another core (or, for cpus: N, a PU of another core) is left; when nothing else is, it
 * is, and the explanation says so.
 */
START_TEST(test_partial_core_last) {
        _cleanup_(topology_freep) Topology *t = load_corpus("24em64t-2n6c2t-pci.xml");
        _cleanup_(config_freep) Config *c = config_new(), *d = config_new();
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        _cleanup_cpuset_ CpuSet sib = CPUSET_NULL, node0 = CPUSET_NULL, zero = CPUSET_NULL,
                                lows = CPUSET_NULL;
        _cleanup_free_ char *line = NULL;
        unsigned n_cores = topology_n_cores(t), n_cpus = cpuset_count(topology_online_cpus(t)), s0;
        const PolicyPlan *pp;

        ck_assert_int_eq(topology_core_siblings(t, 0, &sib), 0);
        ck_assert_uint_eq(cpuset_count(&sib), 2);
        s0 = (unsigned)cpuset_next(&sib, 0); /* CPU 0's sibling */

        config_set_reserve(c, "0");
        config_add(c, "one", SEL(.smt = SMT_ONE_PER_CORE));
        config_add(c, "cores-worth", SEL(.cpus = n_cores));
        config_add(c, "all-but-one", SEL(.cpus = n_cpus - 2));
        config_add(c, "one-short", SEL(.cpus = n_cores - 1, .smt = SMT_ONE_PER_CORE));
        config_add(c, "every", SEL(.cpus = n_cpus - 1));
        config_add(c, "one-each", SEL(.cpus = n_cores, .smt = SMT_ONE_PER_CORE));
        ck_assert_int_eq(plan_new(c, t, &p), 0);

        pp = plan_find_policy(p, "one");
        ck_assert(!cpuset_contains(&pp->cpus, s0));
        ck_assert_uint_eq(cpuset_count(&pp->cpus), n_cores - 1);
        ck_assert_int_ge(
                asprintf(
                        &line,
                        "smt: one-per-core: left out, their cores are shared (a sibling reserved, held or "
                        "disallowed): %u",
                        s0),
                0);
        assert_explains(p, "one", line);
        ck_assert(!cpuset_contains(&plan_find_policy(p, "cores-worth")->cpus, s0));
        ck_assert(!cpuset_contains(&plan_find_policy(p, "all-but-one")->cpus, s0));
        ck_assert(!cpuset_contains(&plan_find_policy(p, "one-short")->cpus, s0));
        ck_assert_ptr_null(plan_find_policy(p, "cores-worth")->warnings);

        /* Nothing else left: CPU 0's sibling is used, and the plan says why. */
        line = mfree(line);
        ck_assert(cpuset_contains(&plan_find_policy(p, "every")->cpus, s0));
        ck_assert_int_ge(
                asprintf(
                        &line, "cpus: %u: CPU %u: its core's sibling 0 is reserved; nothing else was left",
                        n_cpus - 1, s0),
                0);
        assert_explains(p, "every", line);
        assert_warnings(plan_find_policy(p, "every"), line, NULL);
        line = mfree(line);
        ck_assert(cpuset_contains(&plan_find_policy(p, "one-each")->cpus, s0));
        ck_assert_int_ge(
                asprintf(
                        &line, "cpus: %u: CPU %u: its core's sibling 0 is reserved; nothing else was left",
                        n_cores, s0),
                0);
        assert_explains(p, "one-each", line);

        /* smt: one-per-core alone where every core of node 0 has a reserved PU: the free siblings. */
        ck_assert_int_eq(cpuset_add(&zero, 0), 0);
        ck_assert_int_eq(topology_cpus_of_nodes(t, &zero, &node0), 0);
        CPUSET_FOREACH (cpu, &node0) {
                int core = topology_core_of_cpu(t, cpu);

                ck_assert_int_ge(core, 0);
                ck_assert_int_eq(
                        cpuset_add(&lows, (unsigned)cpuset_next(topology_core_cpus(t, (unsigned)core), -1)),
                        0);
        }
        d->has_reserve = true;
        ck_assert_int_eq(cpuset_copy(&d->reserve, &lows), 0);
        config_add(d, "node0", SEL(.nodes = "0", .smt = SMT_ONE_PER_CORE));
        ck_assert_int_eq(plan_new(d, t, &q), 0);
        pp = plan_find_policy(q, "node0");
        ck_assert(cpuset_contains(&pp->cpus, s0));
        ck_assert_uint_eq(cpuset_count(&pp->cpus), cpuset_count(&lows));
        ck_assert(!cpuset_intersects(&pp->cpus, &lows));
        line = mfree(line);
        ck_assert_int_ge(
                asprintf(&line, "smt: one-per-core: CPU %u: its core's sibling 0 is reserved; ", s0), 0);
        ck_assert_ptr_nonnull(pp->explanation);
        {
                bool found = false;

                STRV_FOREACH (l, pp->explanation)
                        found = found ||
                                (strncmp(*l, line, strlen(line)) == 0 &&
                                 strstr(*l, "; nothing else was left"));
                ck_assert_msg(found, "no \"%s…nothing else was left\" line", line);
        }
}
END_TEST

static Suite *plan_suite(void) {
        Suite *s = suite_create("plan");
        TCase *tc = tcase_create("plan");

        tcase_add_test(tc, test_literal);
        tcase_add_test(tc, test_literal_offline);
        tcase_add_test(tc, test_kubelet_exclusive);
        tcase_add_test(tc, test_kubelet_all_held);
        tcase_add_test(tc, test_disallowed);
        tcase_add_test(tc, test_nodes_packages);
        tcase_add_test(tc, test_nonexistent_node);
        tcase_add_test(tc, test_memory_only_node);
        tcase_add_test(tc, test_reserve);
        tcase_add_test(tc, test_reserve_not_online);
        tcase_add_test(tc, test_reserve_selector_per_package);
        tcase_add_test(tc, test_reserve_selector_near);
        tcase_add_test(tc, test_partial_core_last);
        tcase_add_test(tc, test_locations);
        tcase_add_test(tc, test_threads);
        tcase_add_test(tc, test_processes_spread);
        tcase_add_test(tc, test_users);
        tcase_add_test(tc, test_match_index);
        tcase_add_test(tc, test_deterministic);
        tcase_add_test(tc, test_corpus_domains);
        tcase_add_test(tc, test_empty_config);
        tcase_add_test(tc, test_hand_2socket_gateway);
        tcase_add_test(tc, test_hand_2socket_exclusive);
        tcase_add_test(tc, test_hand_epyc);
        tcase_add_test(tc, test_hand_hybrid);
        tcase_add_test(tc, test_near_sysfs);
        tcase_add_test(tc, test_near_closest);
        tcase_add_test(tc, test_within_cpuset);
        tcase_add_test(tc, test_live_pending);
        tcase_add_test(tc, test_corpus_selectors);
        tcase_add_test(tc, test_spread_explain);
        tcase_add_test(tc, test_corpus_spread_explain);
        tcase_add_test(tc, test_memory_2socket);
        tcase_add_test(tc, test_memory_epyc);
        tcase_add_test(tc, test_memory_cpuless_node);
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
        sr = srunner_create(plan_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
