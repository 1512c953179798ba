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

static Topology *load_corpus(const char *file) {
        const char *corpus = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *path = NULL;
        Topology *t = NULL;

        ck_assert_msg(corpus && *corpus, "AFFINITYD_CORPUS is not set (tests/meson.build sets it)");
        ck_assert_int_ge(asprintf(&path, "%s/topologies/%s", corpus, file), 0);
        ck_assert_msg(topology_load_xml(path, &t) == 0, "cannot load %s", path);
        return t;
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

/* The reason the brief and DESIGN.md spell out, on a single-node machine like this one. */
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

static Suite *plan_suite(void) {
        Suite *s = suite_create("plan");
        TCase *tc = tcase_create("plan");

        tcase_add_test(tc, test_literal);
        tcase_add_test(tc, test_literal_offline);
        tcase_add_test(tc, test_disallowed);
        tcase_add_test(tc, test_nodes_packages);
        tcase_add_test(tc, test_nonexistent_node);
        tcase_add_test(tc, test_memory_only_node);
        tcase_add_test(tc, test_reserve);
        tcase_add_test(tc, test_reserve_not_online);
        tcase_add_test(tc, test_locations);
        tcase_add_test(tc, test_threads);
        tcase_add_test(tc, test_users);
        tcase_add_test(tc, test_deterministic);
        tcase_add_test(tc, test_corpus_domains);
        tcase_add_test(tc, test_empty_config);
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
