/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Every file in policy-examples/ validates: no error, no warning, and it says something (a
 * policy, or the reserve for affinityd.yaml). The files are found by listing the directory,
 * so a new example is checked without touching this test; the count guards against the
 * listing silently finding nothing.
 *
 * The topology scenarios (gateway, tokio-spread, numa-db, latency-exclusive) are also planned
 * against every corpus topology: where the topology has what they need they resolve, with the
 * properties they promise (8 whole cores near eth0 without SMT siblings, one PU per core
 * spread over the workers, disjoint exclusive cores); where it hasn't, they are pending with
 * a reason rather than placed somewhere wrong.
 *
 * Examples using real-time classes (realtime_examples) are validated with an affinityd.yaml
 * that opts in: the examples' own settings with allow-realtime: true added, written to a
 * temporary file; standalone they must be refused, naming the real-time places.
 */

#include <check.h>
#include <dirent.h>
#include <sched.h>

#include "plan.h"
#include "policy-yaml.h"
#include "topology.h"

/* six matchers, threads, the selector, four topology scenarios, two memory and unit ones,
 * affinityd.yaml (the demo is a config dir) */
#define EXAMPLES_MIN 15U

/*
 * Examples that use a real-time class: they need allow-realtime: true in affinityd.yaml, which
 * the examples' own affinityd.yaml deliberately doesn't say (copying it must not switch real
 * time on). Standalone they must be refused with exactly the real-time errors; with the
 * examples' settings plus allow-realtime: true (realtime_settings()) they must load cleanly.
 */
static const char *const realtime_examples[] = {"realtime-threads.yaml"};

static char **examples = NULL; /* full paths, sorted */
static char realtime_dir[] = "/tmp/test-examples-XXXXXX";
static char *realtime_settings_path = NULL; /* see realtime_settings() */

static void realtime_settings_remove(void);

static const char *source_root(void) {
        const char *root = getenv("AFFINITYD_SOURCE_ROOT");

        ck_assert_msg(root && *root, "AFFINITYD_SOURCE_ROOT is not set (run through meson test)");
        return root;
}

static int compare_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_examples(void) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0;

        ck_assert_int_ge(asprintf(&dir, "%s/policy-examples", source_root()), 0);
        d = opendir(dir);
        ck_assert_msg(d, "cannot open %s: %m", dir);

        for (struct dirent *de; (de = readdir(d));) {
                size_t len = strlen(de->d_name);
                char **a = NULL;

                if (de->d_name[0] == '.' || len <= 5 || !streq(de->d_name + len - 5, ".yaml"))
                        continue;
                a = reallocarray(examples, n + 2, sizeof(char *));
                ck_assert_ptr_nonnull(a);
                examples = a;
                ck_assert_int_ge(asprintf(&examples[n], "%s/%s", dir, de->d_name), 0);
                examples[++n] = NULL;
        }
        if (n > 0)
                qsort(examples, n, sizeof(char *), compare_str);
}

static void setup(void) {
        list_examples();
}

static void teardown(void) {
        examples = strv_free(examples);
        realtime_settings_remove();
}

static bool is_settings(const char *path) {
        const char *base = strrchr(path, '/');

        return streq(base ? base + 1 : path, "affinityd.yaml");
}

static bool is_realtime_example(const char *path) {
        const char *base = strrchr(path, '/');

        for (size_t i = 0; i < ELEMENTSOF(realtime_examples); i++)
                if (streq(base ? base + 1 : path, realtime_examples[i]))
                        return true;
        return false;
}

/*
 * A temporary affinityd.yaml: the examples' settings plus allow-realtime: true. Its path, owned
 * by this file (removed by realtime_settings_remove()).
 */
static const char *realtime_settings(void) {
        _cleanup_free_ char *src = NULL;
        FILE *in = NULL, *out = NULL;
        char buf[4096];
        size_t n;

        if (realtime_settings_path)
                return realtime_settings_path;
        ck_assert_int_ge(asprintf(&src, "%s/policy-examples/affinityd.yaml", source_root()), 0);
        strcpy(realtime_dir, "/tmp/test-examples-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(realtime_dir));
        ck_assert_int_ge(asprintf(&realtime_settings_path, "%s/affinityd.yaml", realtime_dir), 0);
        in = fopen(src, "re");
        ck_assert_msg(in, "cannot open %s: %m", src);
        out = fopen(realtime_settings_path, "we");
        ck_assert_msg(out, "cannot create %s: %m", realtime_settings_path);
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
                ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
        fclose(in);
        fputs("\n# added by test-examples for the real-time examples\nallow-realtime: true\n", out);
        ck_assert_int_eq(fclose(out), 0);
        return realtime_settings_path;
}

static void realtime_settings_remove(void) {
        if (!realtime_settings_path)
                return;
        (void)unlink(realtime_settings_path);
        (void)rmdir(realtime_dir);
        realtime_settings_path = mfree(realtime_settings_path);
}

/* examples, with the examples' affinityd.yaml replaced by realtime_settings(). A new strv. */
static char **examples_with_realtime(void) {
        size_t n = strv_length(examples);
        char **l = calloc(n + 1, sizeof(char *));

        ck_assert_ptr_nonnull(l);
        for (size_t i = 0; i < n; i++) {
                l[i] = strdup(is_settings(examples[i]) ? realtime_settings() : examples[i]);
                ck_assert_ptr_nonnull(l[i]);
        }
        return l;
}

static void fail_with_diagnostics(const char *path, int r, const Diagnostics *d) {
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(diagnostics_format(d, &text), 0);
        ck_abort_msg(
                "%s: load returned %d, %u errors, %u warnings:\n%s", path, r, d->n_errors, d->n_warnings,
                text);
}

START_TEST(test_every_example_validates) {
        size_t n = strv_length(examples);

        printf("policy examples checked (%zu):\n", n);
        STRV_FOREACH (path, examples) {
                _cleanup_(config_freep) Config *c = NULL;
                _cleanup_(diagnostics_done) Diagnostics d = {};
                int r;

                printf("  %s\n", *path);
                r = config_load_paths((char *[]){*path, NULL}, &c, &d);
                if (is_realtime_example(*path)) {
                        /* Refused standalone, every error about the real-time opt-in ... */
                        ck_assert_int_eq(r, -EINVAL);
                        ck_assert_uint_ge(d.n_errors, 1);
                        for (size_t i = 0; i < d.n_items; i++)
                                ck_assert_msg(
                                        d.items[i].level == DIAGNOSTIC_ERROR &&
                                                streq_ptr(d.items[i].file, *path) &&
                                                strstr(d.items[i].message, "needs allow-realtime: true"),
                                        "%s:%u:%u: unexpected: %s", *path, d.items[i].line,
                                        d.items[i].column, d.items[i].message);
                        diagnostics_done(&d);
                        /* ... and clean with the opt-in. */
                        r = config_load_paths((char *[]){(char *)realtime_settings(), *path, NULL}, &c, &d);
                        if (r != 0 || d.n_items > 0)
                                fail_with_diagnostics(*path, r, &d);
                        ck_assert(c->allow_realtime);
                        ck_assert(strv_length(c->files) == 2 && streq(c->files[1], *path));
                } else {
                        if (r != 0 || d.n_items > 0)
                                fail_with_diagnostics(*path, r, &d);
                        ck_assert(strv_length(c->files) == 1 && streq(c->files[0], *path));
                }
                if (is_settings(*path))
                        ck_assert_msg(c->has_reserve, "%s: sets no reserve", *path);
                else
                        ck_assert_msg(c->n_policies >= 1, "%s: defines no policy", *path);
                for (size_t i = 0; i < c->n_policies; i++) {
                        ck_assert_ptr_nonnull(c->policies[i].name);
                        ck_assert_uint_ne(c->policies[i].match.facts, 0);
                }
        }
        ck_assert_msg(
                n >= EXAMPLES_MIN, "found only %zu example files, expected at least %u", n, EXAMPLES_MIN);
}
END_TEST

START_TEST(test_examples_together) {
        /* Copying every example into policy.d must work: names are unique across files. */
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_strv_free_ char **all = examples_with_realtime();
        size_t policies = 0;
        int r;

        ck_assert_uint_ge(strv_length(examples), EXAMPLES_MIN);
        /* Without the opt-in only the real-time examples are refused. */
        r = config_load_paths(examples, &c, &d);
        ck_assert_int_eq(r, -EINVAL);
        for (size_t i = 0; i < d.n_items; i++)
                ck_assert_msg(
                        is_realtime_example(d.items[i].file), "%s:%u:%u: unexpected: %s", d.items[i].file,
                        d.items[i].line, d.items[i].column, d.items[i].message);
        diagnostics_done(&d);
        r = config_load_paths(all, &c, &d);
        if (r != 0 || d.n_items > 0)
                fail_with_diagnostics("policy-examples/*.yaml", r, &d);
        ck_assert_uint_eq(strv_length(c->files), strv_length(examples));
        STRV_FOREACH (path, examples)
                if (!is_settings(*path))
                        policies++;
        ck_assert_uint_ge(c->n_policies, policies);
}
END_TEST

START_TEST(test_demo_policy) {
        /* The README's demo: a config dir (run as affinityd --config-dir=policy-examples/demo)
         * placing only the demo's own programs (demo-sleep, demo-yes) on CPUs that exist on a
         * two-CPU machine. */
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_free_ char *path = NULL;
        const Policy *sleep_p, *yes_p;
        int r;

        ck_assert_int_ge(asprintf(&path, "%s/policy-examples/demo", source_root()), 0);
        r = config_load(path, &c, &d);
        if (r != 0 || d.n_items > 0)
                fail_with_diagnostics(path, r, &d);
        ck_assert_uint_eq(strv_length(c->files), 1);

        sleep_p = config_find_policy(c, "demo-sleep");
        yes_p = config_find_policy(c, "demo-yes");
        ck_assert_ptr_nonnull(sleep_p);
        ck_assert_ptr_nonnull(yes_p);
        ck_assert(strv_length(sleep_p->match.comm) == 1 && streq(sleep_p->match.comm[0], "demo-sleep"));
        ck_assert(strv_length(yes_p->match.comm) == 1 && streq(yes_p->match.comm[0], "demo-yes"));
        ck_assert_int_eq(sleep_p->cpus.kind, CPU_SELECTOR_LITERAL);
        ck_assert_int_eq(yes_p->cpus.kind, CPU_SELECTOR_LITERAL);
        ck_assert_int_le(cpuset_last(&sleep_p->cpus.literal), 1);
        ck_assert_int_le(cpuset_last(&yes_p->cpus.literal), 1);
        ck_assert(!cpuset_is_empty(&sleep_p->cpus.literal));
        ck_assert(!cpuset_is_empty(&yes_p->cpus.literal));
}
END_TEST

/* ---- the topology scenarios, planned against the corpus topologies ----------------------- */

/*
 * What each scenario example needs, and each corpus topology by hand (tests/corpus/topologies/
 * INDEX.md): gateway.yaml and numa-db.yaml need eth0, and gateway.yaml 8 cores on its node
 * besides the reserve; tokio-spread.yaml and latency-exclusive.yaml need only a few cores.
 * eth0_node is the NUMA node eth0 is attached to (-1: no eth0 there).
 */
typedef enum Expect {
        RESOLVES,
        PENDING,
} Expect;

static const struct {
        const char *topology;
        int eth0_node;
        Expect gateway, numa_db, tokio, latency;
} scenario_expectations[] = {
        /* eth0 on node 0, which has only 6 cores: 8 can't be had there. */
        {"24em64t-2n6c2t-pci.xml", 0, PENDING, RESOLVES, RESOLVES, RESOLVES},
        /* eth0 on node 1: 8 cores, exactly what the gateway wants. */
        {"32em64t-2n8c2t-pci-wholeio.xml", 1, RESOLVES, RESOLVES, RESOLVES, RESOLVES},
        /* eth0 on node 0 of 4, 24 cores per node, no SMT. */
        {"96em64t-4n4d3ca2co-pci.xml", 0, RESOLVES, RESOLVES, RESOLVES, RESOLVES},
        /* No network device at all in these. */
        {"16amd64-8n2c-cpusets.xml", -1, PENDING, PENDING, RESOLVES, RESOLVES},
        {"AMD-17h-Zen-2xEpyc-7451.xml", -1, PENDING, PENDING, RESOLVES, RESOLVES},
        {"Intel-RaptorLake-Corei7-1370P.xml", -1, PENDING, PENDING, RESOLVES, RESOLVES},
        /* Network devices, but none named eth0. */
        {"coral-lassen.xml", -1, PENDING, PENDING, RESOLVES, RESOLVES},
        {"topo.knl05_v2_4.xml", -1, PENDING, PENDING, RESOLVES, RESOLVES},
};

/* One example with the examples' affinityd.yaml (reserve: "0"), planned against one topology. */
typedef struct Planned {
        char *topology_path;
        Config *config;
        Topology *topology;
        Plan *plan;
} Planned;

static void planned_done(Planned *x) {
        x->plan = plan_free(x->plan);
        x->topology = topology_free(x->topology);
        x->config = config_free(x->config);
        x->topology_path = mfree(x->topology_path);
}

static const char *corpus_dir(void) {
        const char *dir = getenv("AFFINITYD_CORPUS");

        ck_assert_msg(dir && *dir, "AFFINITYD_CORPUS is not set (run through meson test)");
        return dir;
}

static void planned_load(Planned *x, const char *example, const char *topology) {
        _cleanup_free_ char *settings = NULL, *file = NULL;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        int r;

        *x = (Planned){};
        ck_assert_int_ge(asprintf(&settings, "%s/policy-examples/affinityd.yaml", source_root()), 0);
        ck_assert_int_ge(asprintf(&file, "%s/policy-examples/%s", source_root(), example), 0);
        ck_assert_int_ge(asprintf(&x->topology_path, "%s/topologies/%s", corpus_dir(), topology), 0);

        r = config_load_paths((char *[]){settings, file, NULL}, &x->config, &d);
        if (r != 0 || d.n_items > 0)
                fail_with_diagnostics(file, r, &d);
        ck_assert_int_eq(topology_load_xml(x->topology_path, &x->topology), 0);
        ck_assert_int_eq(plan_new(x->config, x->topology, &x->plan), 0);
        ck_assert_uint_eq(x->plan->n_policies, x->config->n_policies);
}

static const PolicyPlan *planned_policy(const Planned *x, const char *name) {
        const PolicyPlan *pp = plan_find_policy(x->plan, name);

        ck_assert_msg(pp, "%s: no policy \"%s\" in the plan", x->topology_path, name);
        return pp;
}

/* Asserts the policy's pending state is as expected; a pending one must say why. */
static void assert_expectation(const Planned *x, const PolicyPlan *pp, Expect e) {
        if (e == RESOLVES) {
                ck_assert_msg(
                        !pp->pending_reason, "%s: policy \"%s\" is pending: %s", x->topology_path,
                        pp->policy->name, pp->pending_reason);
                ck_assert(pp->has_cpus);
                ck_assert(!cpuset_is_empty(&pp->cpus));
        } else {
                ck_assert_msg(
                        pp->pending_reason, "%s: policy \"%s\" resolved to %s, expected it pending",
                        x->topology_path, pp->policy->name, cpuset_to_string(&pp->cpus));
                ck_assert_msg(pp->pending_reason[0] != '\0', "empty pending reason");
                ck_assert(!pp->has_cpus && cpuset_is_empty(&pp->cpus));
                ck_assert_ptr_nonnull(pp->pending_location); /* where in the file */
        }
}

/* The CPUs a selector may ever use on t: online, allowed, not reserved. */
static void usable_cpus(const Planned *x, CpuSet *ret) {
        ck_assert_int_eq(cpuset_copy(ret, topology_allowed_cpus(x->topology)), 0);
        cpuset_and(ret, topology_online_cpus(x->topology));
        cpuset_andnot(ret, &x->plan->reserve);
}

/* Distinct cores under the CPUs of s (each CPU must be on a known core). */
static unsigned cores_of(const Planned *x, const CpuSet *s) {
        _cleanup_cpuset_ CpuSet cores = CPUSET_NULL;

        CPUSET_FOREACH (cpu, s) {
                int core = topology_core_of_cpu(x->topology, (unsigned)cpu);

                ck_assert_msg(core >= 0, "CPU %d is on no core", cpu);
                ck_assert_int_eq(cpuset_add(&cores, (unsigned)core), 0);
        }
        return cpuset_count(&cores);
}

static void assert_within_usable(const Planned *x, const PolicyPlan *pp) {
        _cleanup_cpuset_ CpuSet usable = CPUSET_NULL;

        usable_cpus(x, &usable);
        ck_assert_msg(
                cpuset_is_subset(&pp->cpus, &usable), "%s: policy \"%s\" uses %s, outside the usable %s",
                x->topology_path, pp->policy->name, cpuset_to_string(&pp->cpus), cpuset_to_string(&usable));
        ck_assert(!cpuset_intersects(&pp->cpus, &x->plan->reserve));
}

/* The reserve of the examples is CPU 0, as affinityd.yaml says. */
static void assert_reserve(const Planned *x) {
        ck_assert(x->config->has_reserve);
        ck_assert(cpuset_contains(&x->config->reserve, 0) && cpuset_count(&x->config->reserve) == 1);
}

START_TEST(test_scenarios_cover_corpus) {
        /* Every corpus topology has its expectations written down above. */
        _cleanup_free_ char *dir = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0;

        ck_assert_int_ge(asprintf(&dir, "%s/topologies", corpus_dir()), 0);
        d = opendir(dir);
        ck_assert_msg(d, "cannot open %s: %m", dir);
        for (struct dirent *de; (de = readdir(d));) {
                size_t len = strlen(de->d_name);
                bool found = false;

                if (len <= 4 || !streq(de->d_name + len - 4, ".xml"))
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(scenario_expectations); i++)
                        found = found || streq(scenario_expectations[i].topology, de->d_name);
                ck_assert_msg(
                        found, "corpus topology %s has no expectations in test-examples.c", de->d_name);
                n++;
        }
        ck_assert_uint_eq(n, ELEMENTSOF(scenario_expectations));
}
END_TEST

START_TEST(test_scenario_gateway) {
        const char *name = scenario_expectations[_i].topology;
        _cleanup_(planned_done) Planned x = {};
        const PolicyPlan *pp;

        planned_load(&x, "gateway.yaml", name);
        assert_reserve(&x);
        pp = planned_policy(&x, "gateway");
        assert_expectation(&x, pp, scenario_expectations[_i].gateway);
        if (pp->pending_reason) {
                /* Either there is no eth0 (the reason names it), or too few cores near it. */
                if (scenario_expectations[_i].eth0_node < 0)
                        ck_assert_msg(strstr(pp->pending_reason, "eth0"), "reason: %s", pp->pending_reason);
                else
                        ck_assert_msg(strstr(pp->pending_reason, "8"), "reason: %s", pp->pending_reason);
                return;
        }

        /* 8 physical cores of eth0's node, one PU each: 8 CPUs on 8 distinct cores means no two
         * SMT siblings. */
        assert_within_usable(&x, pp);
        ck_assert_uint_eq(cpuset_count(&pp->cpus), 8);
        ck_assert_uint_eq(cores_of(&x, &pp->cpus), 8);
        CPUSET_FOREACH (cpu, &pp->cpus)
                ck_assert_int_eq(
                        topology_node_of_cpu(x.topology, (unsigned)cpu),
                        scenario_expectations[_i].eth0_node);
        ck_assert_uint_eq(cpuset_count(&pp->nodes), 1);
        ck_assert(cpuset_contains(&pp->nodes, (unsigned)scenario_expectations[_i].eth0_node));
}
END_TEST

START_TEST(test_scenario_numa_db) {
        const char *name = scenario_expectations[_i].topology;
        _cleanup_(planned_done) Planned x = {};
        _cleanup_cpuset_ CpuSet node = CPUSET_NULL, expected = CPUSET_NULL;
        const PolicyPlan *pp;
        int eth0_node = scenario_expectations[_i].eth0_node;

        planned_load(&x, "numa-db.yaml", name);
        pp = planned_policy(&x, "db-near-nic");
        assert_expectation(&x, pp, scenario_expectations[_i].numa_db);
        if (pp->pending_reason) {
                ck_assert_msg(strstr(pp->pending_reason, "eth0"), "reason: %s", pp->pending_reason);
                return;
        }

        /* Every usable CPU of eth0's node, and nothing else. */
        ck_assert_int_ge(eth0_node, 0);
        ck_assert_int_eq(cpuset_add(&node, (unsigned)eth0_node), 0);
        ck_assert_int_eq(topology_cpus_of_nodes(x.topology, &node, &expected), 0);
        {
                _cleanup_cpuset_ CpuSet usable = CPUSET_NULL;

                usable_cpus(&x, &usable);
                cpuset_and(&expected, &usable);
        }
        ck_assert_msg(
                cpuset_equal(&pp->cpus, &expected), "%s: db-near-nic got %s, expected %s", name,
                cpuset_to_string(&pp->cpus), cpuset_to_string(&expected));
        ck_assert(cpuset_equal(&pp->nodes, &node));
}
END_TEST

START_TEST(test_scenario_tokio) {
        const char *name = scenario_expectations[_i].topology;
        _cleanup_(planned_done) Planned x = {};
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL;
        const PolicyPlan *pp;
        const ThreadPlan *tp;

        planned_load(&x, "tokio-spread.yaml", name);
        pp = planned_policy(&x, "tokio-service");
        assert_expectation(&x, pp, scenario_expectations[_i].tokio);
        if (pp->pending_reason)
                return;

        /* One PU of each usable core: as many CPUs as cores, none reserved. */
        assert_within_usable(&x, pp);
        ck_assert_uint_eq(cpuset_count(&pp->cpus), cores_of(&x, &pp->cpus));

        /* The workers' rule spreads over exactly the policy's set, each CPU once, so the first
         * workers (as many as there are cores) each get a core of their own. */
        ck_assert_uint_eq(pp->policy->n_threads, 1);
        tp = &pp->threads[0];
        ck_assert(tp->spread);
        ck_assert(!tp->has_cpus);
        ck_assert_uint_eq(tp->n_spread_order, cpuset_count(&pp->cpus));
        for (size_t i = 0; i < tp->n_spread_order; i++) {
                ck_assert(cpuset_contains(&pp->cpus, tp->spread_order[i]));
                ck_assert_msg(
                        !cpuset_contains(&seen, tp->spread_order[i]), "CPU %u twice", tp->spread_order[i]);
                ck_assert_int_eq(cpuset_add(&seen, tp->spread_order[i]), 0);
        }
}
END_TEST

START_TEST(test_scenario_latency) {
        static const char *const exclusive[] = {"market-data", "order-gateway", "risk-engine"};
        static const unsigned cores[] = {2, 2, 1};
        const char *name = scenario_expectations[_i].topology;
        _cleanup_(planned_done) Planned x = {};
        _cleanup_cpuset_ CpuSet all = CPUSET_NULL, usable = CPUSET_NULL;
        const PolicyPlan *batch;

        planned_load(&x, "latency-exclusive.yaml", name);
        usable_cpus(&x, &usable);

        for (size_t i = 0; i < ELEMENTSOF(exclusive); i++) {
                const PolicyPlan *pp = planned_policy(&x, exclusive[i]);

                assert_expectation(&x, pp, scenario_expectations[_i].latency);
                if (pp->pending_reason)
                        return;
                ck_assert(pp->policy->cpus.exclusive);
                assert_within_usable(&x, pp);

                /* N whole cores: every usable PU of each core the set touches. */
                ck_assert_uint_eq(cores_of(&x, &pp->cpus), cores[i]);
                CPUSET_FOREACH (cpu, &pp->cpus) {
                        _cleanup_cpuset_ CpuSet siblings = CPUSET_NULL;

                        ck_assert_int_eq(topology_core_siblings(x.topology, (unsigned)cpu, &siblings), 0);
                        cpuset_and(&siblings, &usable);
                        ck_assert_msg(
                                cpuset_is_subset(&siblings, &pp->cpus),
                                "%s: %s has CPU %d but not all of %s", name, exclusive[i], cpu,
                                cpuset_to_string(&siblings));
                }

                /* Disjoint from every earlier exclusive set. */
                ck_assert_msg(
                        !cpuset_intersects(&pp->cpus, &all), "%s: %s (%s) overlaps an earlier exclusive set",
                        name, exclusive[i], cpuset_to_string(&pp->cpus));
                ck_assert_int_eq(cpuset_or(&all, &pp->cpus), 0);
        }

        /* The rest goes to the non-exclusive policy: everything usable the others don't hold. */
        batch = planned_policy(&x, "batch-work");
        assert_expectation(&x, batch, scenario_expectations[_i].latency);
        ck_assert(!cpuset_intersects(&batch->cpus, &all));
        ck_assert_int_eq(cpuset_or(&all, &batch->cpus), 0);
        ck_assert_msg(
                cpuset_equal(&all, &usable), "%s: the four policies cover %s, not all of %s", name,
                cpuset_to_string(&all), cpuset_to_string(&usable));
}
END_TEST

START_TEST(test_examples_together_planned) {
        /* Every example at once, in file order, on the 2-socket machine with eth0 on node 1: an
         * exclusive set is withheld from every later selector, and the scenarios resolve. */
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_free_ char *xml = NULL;
        _cleanup_cpuset_ CpuSet held = CPUSET_NULL;
        /* db-near-nic is left out: see below. */
        static const char *const scenario_policies[] = {
                "gateway", "tokio-service", "market-data", "order-gateway", "risk-engine",
        };
        _cleanup_strv_free_ char **all = examples_with_realtime();
        const PolicyPlan *db;
        int r;

        ck_assert_int_ge(asprintf(&xml, "%s/topologies/32em64t-2n8c2t-pci-wholeio.xml", corpus_dir()), 0);
        r = config_load_paths(all, &c, &d);
        if (r != 0 || d.n_items > 0)
                fail_with_diagnostics("policy-examples/*.yaml", r, &d);
        ck_assert_int_eq(topology_load_xml(xml, &t), 0);
        ck_assert_int_eq(plan_new(c, t, &plan), 0);

        for (size_t i = 0; i < plan->n_policies; i++) {
                const PolicyPlan *pp = &plan->policies[i];

                if (pp->pending_reason || !pp->has_cpus)
                        continue;
                if (pp->policy->cpus.kind == CPU_SELECTOR_MAPPING)
                        ck_assert_msg(
                                !cpuset_intersects(&pp->cpus, &held),
                                "policy \"%s\" (%s) got CPUs held by an earlier exclusive policy (%s)",
                                pp->policy->name, cpuset_to_string(&pp->cpus), cpuset_to_string(&held));
                if (pp->policy->cpus.exclusive) {
                        ck_assert(!cpuset_is_empty(&pp->exclusive_cpus));
                        /* The chosen CPUs, and their cores' siblings, held whole. */
                        ck_assert(cpuset_is_subset(&pp->cpus, &pp->exclusive_cpus));
                        ck_assert_int_eq(cpuset_or(&held, &pp->exclusive_cpus), 0);
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(scenario_policies); i++) {
                const PolicyPlan *pp = plan_find_policy(plan, scenario_policies[i]);

                ck_assert_ptr_nonnull(pp);
                ck_assert_msg(
                        !pp->pending_reason, "policy \"%s\" is pending: %s", scenario_policies[i],
                        pp->pending_reason);
        }
        /*
         * Here eth0's node 1 has 8 cores, and the gateway (an earlier file) holds all 8 whole,
         * SMT siblings included: the database near eth0 can't be given any of them, and says
         * who holds them rather than sharing the gateway's cores.
         */
        db = plan_find_policy(plan, "db-near-nic");
        ck_assert_ptr_nonnull(db);
        ck_assert_ptr_nonnull(db->pending_reason);
        ck_assert_msg(
                strstr(db->pending_reason, "held by earlier exclusive polic") &&
                        strstr(db->pending_reason, "\"gateway\""),
                "unexpected reason: %s", db->pending_reason);
}
END_TEST

/*
 * numa-db-memory.yaml: CPUs near eth0 as numa-db.yaml, and memory: nodes: local on eth0's node,
 * with migration; pending (CPUs and memory) wherever numa-db is.
 */
START_TEST(test_scenario_numa_db_memory) {
        const char *name = scenario_expectations[_i].topology;
        _cleanup_(planned_done) Planned x = {};
        _cleanup_cpuset_ CpuSet node = CPUSET_NULL;
        const PolicyPlan *pp;
        int eth0_node = scenario_expectations[_i].eth0_node;

        planned_load(&x, "numa-db-memory.yaml", name);
        pp = planned_policy(&x, "db-numa-local");
        assert_expectation(&x, pp, scenario_expectations[_i].numa_db);
        ck_assert(pp->policy->memory.kind == MEMORY_LOCAL);
        ck_assert(pp->policy->memory.migrate);
        if (pp->pending_reason) {
                ck_assert(!pp->has_memory);
                ck_assert(cpuset_is_empty(&pp->memory_nodes));
                return;
        }
        ck_assert_int_ge(eth0_node, 0);
        ck_assert_int_eq(cpuset_add(&node, (unsigned)eth0_node), 0);
        ck_assert(pp->has_memory);
        ck_assert_msg(
                cpuset_equal(&pp->memory_nodes, &node), "%s: memory nodes %s, expected %d", name,
                cpuset_to_string(&pp->memory_nodes), eth0_node);
        ck_assert(cpuset_equal(&pp->memory_nodes, &pp->nodes));
}
END_TEST

/* realtime-threads.yaml: two fifo threads on CPUs of their own, a batch logger, with the opt-in. */
START_TEST(test_realtime_example_model) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(diagnostics_done) Diagnostics d = {};
        _cleanup_free_ char *file = NULL;
        const Policy *p;
        unsigned fifo = 0;
        int r;

        ck_assert_int_ge(asprintf(&file, "%s/policy-examples/realtime-threads.yaml", source_root()), 0);
        r = config_load_paths((char *[]){(char *)realtime_settings(), file, NULL}, &c, &d);
        if (r != 0 || d.n_items > 0)
                fail_with_diagnostics(file, r, &d);
        p = config_find_policy(c, "rt-pipeline");
        ck_assert_ptr_nonnull(p);
        for (size_t i = 0; i < p->n_threads; i++) {
                const SchedulerSpec *s = &p->threads[i].scheduler;

                if (s->has_policy && s->policy == SCHED_FIFO) {
                        fifo++;
                        ck_assert(s->has_priority && s->priority >= 1 && s->priority <= 99);
                        ck_assert(p->threads[i].cpus.kind == CPU_SELECTOR_SPREAD);
                } else
                        ck_assert(!s->has_policy || s->policy != SCHED_RR);
        }
        ck_assert_uint_eq(fifo, 2);
        ck_assert(p->scheduler.has_reset_on_fork && p->scheduler.reset_on_fork);
}
END_TEST

static Suite *examples_suite(void) {
        Suite *s = suite_create("examples");
        TCase *tc = tcase_create("examples");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_every_example_validates);
        tcase_add_test(tc, test_examples_together);
        tcase_add_test(tc, test_demo_policy);
        tcase_add_test(tc, test_realtime_example_model);
        suite_add_tcase(s, tc);

        tc = tcase_create("scenarios");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_scenarios_cover_corpus);
        tcase_add_loop_test(tc, test_scenario_gateway, 0, ELEMENTSOF(scenario_expectations));
        tcase_add_loop_test(tc, test_scenario_numa_db, 0, ELEMENTSOF(scenario_expectations));
        tcase_add_loop_test(tc, test_scenario_numa_db_memory, 0, ELEMENTSOF(scenario_expectations));
        tcase_add_loop_test(tc, test_scenario_tokio, 0, ELEMENTSOF(scenario_expectations));
        tcase_add_loop_test(tc, test_scenario_latency, 0, ELEMENTSOF(scenario_expectations));
        tcase_add_test(tc, test_examples_together_planned);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(examples_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
