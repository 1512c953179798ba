/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Unit tests for lib/spread.c: the slot allocator (lowest free slot, reuse after release, one
 * slot per TID), slot → CPU round robin, the CPUs handed out and the set left for threads that
 * match no rule; a random walk against a naive reference; and end to end with real spread
 * orders made by plan_new() from a policy file on synthetic and corpus topologies: slots
 * 0..cores-1 land on distinct physical cores, the next ones on the remaining SMT siblings,
 * and the rest round robin.
 */

#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "macro.h"
#include "plan.h"
#include "policy-yaml.h"
#include "spread.h"
#include "topology.h"

static CpuSet set_of(const char *list) {
        CpuSet s = CPUSET_NULL;

        ck_assert_int_eq(cpuset_parse_list(list, &s, NULL), 0);
        return s;
}

static void assert_set(const CpuSet *s, const char *expect) {
        _cleanup_free_ char *got = cpuset_to_string(s);

        ck_assert_ptr_nonnull(got);
        ck_assert_msg(streq(got, expect), "set %s, expected %s", got, expect);
}

/* ---- the allocator ---- */

START_TEST(test_acquire_release_reuse) {
        SpreadSlots s = SPREAD_SLOTS_NULL;

        ck_assert_int_eq(spread_slots_find(&s, 100), -ENOENT);
        ck_assert_int_eq(spread_slots_release(&s, 100), -ENOENT);
        ck_assert_int_eq(spread_slots_acquire(&s, 0), -EINVAL);
        ck_assert_int_eq(spread_slots_acquire(&s, -5), -EINVAL);

        ck_assert_int_eq(spread_slots_acquire(&s, 100), 0);
        ck_assert_int_eq(spread_slots_acquire(&s, 101), 1);
        ck_assert_int_eq(spread_slots_acquire(&s, 102), 2);
        /* Asking again keeps the slot held. */
        ck_assert_int_eq(spread_slots_acquire(&s, 101), 1);
        ck_assert_uint_eq(spread_slots_n_held(&s), 3);
        ck_assert_int_eq(spread_slots_find(&s, 102), 2);

        /* A released slot is the next one handed out, before any new one. */
        ck_assert_int_eq(spread_slots_release(&s, 100), 0);
        ck_assert_int_eq(spread_slots_find(&s, 100), -ENOENT);
        ck_assert_uint_eq(spread_slots_n_held(&s), 2);
        ck_assert_int_eq(spread_slots_release(&s, 100), -ENOENT);
        ck_assert_int_eq(spread_slots_acquire(&s, 103), 0);
        ck_assert_int_eq(spread_slots_acquire(&s, 104), 3);

        /* The lowest of several holes first. */
        ck_assert_int_eq(spread_slots_release(&s, 102), 2);
        ck_assert_int_eq(spread_slots_release(&s, 101), 1);
        ck_assert_int_eq(spread_slots_acquire(&s, 105), 1);
        ck_assert_int_eq(spread_slots_acquire(&s, 106), 2);
        ck_assert_int_eq(spread_slots_acquire(&s, 107), 4);

        /* Releasing the highest ones shrinks the range scanned. */
        ck_assert_int_eq(spread_slots_release(&s, 107), 4);
        ck_assert_int_eq(spread_slots_release(&s, 104), 3);
        ck_assert_uint_eq(s.n_owners, 3);
        ck_assert_int_eq(spread_slots_acquire(&s, 108), 3);

        spread_slots_done(&s);
        ck_assert_uint_eq(spread_slots_n_held(&s), 0);
        ck_assert_int_eq(spread_slots_find(&s, 103), -ENOENT);
        /* Reusable after done. */
        ck_assert_int_eq(spread_slots_acquire(&s, 7), 0);
        spread_slots_done(&s);
        spread_slots_done(&s);
}
END_TEST

/* A given slot: taken when free (holes below it stay free, the lowest of them next), refused
 * when held, the holder's own slot when it has one. */
START_TEST(test_acquire_at) {
        _cleanup_(spread_slots_done) SpreadSlots s = SPREAD_SLOTS_NULL;

        ck_assert_int_eq(spread_slots_acquire_at(&s, 100, 3), 3);
        ck_assert_uint_eq(spread_slots_n_held(&s), 1);
        ck_assert_int_eq(spread_slots_acquire_at(&s, 100, 5), 3);
        ck_assert_int_eq(spread_slots_acquire_at(&s, 101, 3), -EBUSY);
        ck_assert_int_eq(spread_slots_acquire(&s, 101), 0);
        ck_assert_int_eq(spread_slots_acquire_at(&s, 102, 20), 20);
        ck_assert_int_eq(spread_slots_acquire(&s, 103), 1);
        ck_assert_int_eq(spread_slots_release(&s, 102), 20);
        ck_assert_int_eq(spread_slots_acquire(&s, 104), 2);
        ck_assert_int_eq(spread_slots_acquire(&s, 105), 4);
        ck_assert_int_eq(spread_slots_acquire_at(&s, 0, 1), -EINVAL);
        ck_assert_uint_eq(spread_slots_n_held(&s), 5);
}
END_TEST

START_TEST(test_many_threads) {
        SpreadSlots s = SPREAD_SLOTS_NULL;
        const int n = 5000;

        for (int i = 0; i < n; i++)
                ck_assert_int_eq(spread_slots_acquire(&s, 1000 + i), i);
        /* Every even slot freed, then refilled lowest first by new threads. */
        for (int i = 0; i < n; i += 2)
                ck_assert_int_eq(spread_slots_release(&s, 1000 + i), i);
        ck_assert_uint_eq(spread_slots_n_held(&s), (size_t)n / 2);
        for (int i = 0; i < n; i += 2)
                ck_assert_int_eq(spread_slots_acquire(&s, 100000 + i), i);
        ck_assert_int_eq(spread_slots_acquire(&s, 99), n);
        ck_assert_uint_eq(spread_slots_n_held(&s), (size_t)n + 1);
        spread_slots_done(&s);
}
END_TEST

/* A random walk of acquires and releases against a reference that searches from slot 0. */
START_TEST(test_random_walk) {
        enum { N_TIDS = 64, STEPS = 20000 };
        SpreadSlots s = SPREAD_SLOTS_NULL;
        int ref_slot_of[N_TIDS]; /* -1: none */
        bool ref_used[N_TIDS] = {};
        uint64_t state = 0x9e3779b97f4a7c15ULL;

        for (int i = 0; i < N_TIDS; i++)
                ref_slot_of[i] = -1;

        for (int step = 0; step < STEPS; step++) {
                int tid, expect, got;

                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                tid = (int)(state % N_TIDS);

                if ((state >> 32) & 1) {
                        if (ref_slot_of[tid] >= 0)
                                expect = ref_slot_of[tid];
                        else {
                                for (expect = 0; ref_used[expect]; expect++)
                                        ;
                                ref_used[expect] = true;
                                ref_slot_of[tid] = expect;
                        }
                        got = spread_slots_acquire(&s, tid + 1);
                } else {
                        expect = ref_slot_of[tid] >= 0 ? ref_slot_of[tid] : -ENOENT;
                        if (ref_slot_of[tid] >= 0) {
                                ref_used[ref_slot_of[tid]] = false;
                                ref_slot_of[tid] = -1;
                        }
                        got = spread_slots_release(&s, tid + 1);
                }
                if (got != expect)
                        ck_abort_msg("step %d, tid %d: slot %d, expected %d", step, tid + 1, got, expect);
        }

        for (int i = 0; i < N_TIDS; i++)
                ck_assert_int_eq(
                        spread_slots_find(&s, i + 1), ref_slot_of[i] >= 0 ? ref_slot_of[i] : -ENOENT);
        spread_slots_done(&s);
}
END_TEST

/* ---- slots to CPUs ---- */

START_TEST(test_cpu_of_slot) {
        const unsigned order[] = {0, 2, 4, 6, 1, 3, 5, 7};

        ck_assert_int_eq(spread_cpu_of_slot(order, 0, 0), -ENOENT);
        ck_assert_int_eq(spread_cpu_of_slot(NULL, 3, 0), -ENOENT);
        for (size_t i = 0; i < 3 * ELEMENTSOF(order); i++)
                ck_assert_int_eq(
                        spread_cpu_of_slot(order, ELEMENTSOF(order), i), (int)order[i % ELEMENTSOF(order)]);
}
END_TEST

START_TEST(test_handed_and_rest) {
        _cleanup_cpuset_ CpuSet set = set_of("0-3"), handed = CPUSET_NULL, rest = set_of("9");
        const unsigned order[] = {0, 2, 1, 3};
        SpreadSlots s = SPREAD_SLOTS_NULL;

        /* No thread spread yet: nothing handed, the rest is the whole set. */
        ck_assert_int_eq(spread_slots_cpus(&s, order, ELEMENTSOF(order), &handed), 0);
        assert_set(&handed, "");
        ck_assert_int_eq(spread_rest_cpus(&set, &s, order, ELEMENTSOF(order), &rest), 0);
        assert_set(&rest, "0-3");

        ck_assert_int_eq(spread_slots_acquire(&s, 10), 0);
        ck_assert_int_eq(spread_slots_acquire(&s, 11), 1);
        ck_assert_int_eq(spread_slots_cpus(&s, order, ELEMENTSOF(order), &handed), 0);
        assert_set(&handed, "0,2");
        ck_assert_int_eq(spread_rest_cpus(&set, &s, order, ELEMENTSOF(order), &rest), 0);
        assert_set(&rest, "1,3");

        /* Every CPU handed: the others share the whole set rather than nothing. */
        ck_assert_int_eq(spread_slots_acquire(&s, 12), 2);
        ck_assert_int_eq(spread_slots_acquire(&s, 13), 3);
        ck_assert_int_eq(spread_rest_cpus(&set, &s, order, ELEMENTSOF(order), &rest), 0);
        assert_set(&rest, "0-3");
        /* Round robin: slot 4 is CPU 0 again. */
        ck_assert_int_eq(spread_slots_acquire(&s, 14), 4);
        ck_assert_int_eq(spread_cpu_of_slot(order, ELEMENTSOF(order), 4), 0);

        /* Slot 1 (CPU 2) released: CPU 2 is free for the others. Then slot 0 (CPU 0): still held
         * through slot 4. */
        ck_assert_int_eq(spread_slots_release(&s, 11), 1);
        ck_assert_int_eq(spread_rest_cpus(&set, &s, order, ELEMENTSOF(order), &rest), 0);
        assert_set(&rest, "2");
        ck_assert_int_eq(spread_slots_release(&s, 10), 0);
        ck_assert_int_eq(spread_slots_cpus(&s, order, ELEMENTSOF(order), &handed), 0);
        assert_set(&handed, "0-1,3");
        ck_assert_int_eq(spread_rest_cpus(&set, &s, order, ELEMENTSOF(order), &rest), 0);
        assert_set(&rest, "2");

        /* Without an order (a pending policy) nothing is handed out. */
        ck_assert_int_eq(spread_slots_cpus(&s, NULL, 0, &handed), 0);
        assert_set(&handed, "");
        ck_assert_int_eq(spread_rest_cpus(&set, &s, NULL, 0, &rest), 0);
        assert_set(&rest, "0-3");
        spread_slots_done(&s);
}
END_TEST

/* ---- with spread orders from the planner ---- */

typedef struct Planned {
        char dir[64];
        Topology *topology;
        Config *config;
        Plan *plan;
} Planned;

static void planned_done(Planned *p) {
        char path[128];

        p->plan = plan_free(p->plan);
        p->config = config_free(p->config);
        p->topology = topology_free(p->topology);
        snprintf(path, sizeof path, "%s/policy.d/50-spread.yaml", p->dir);
        (void)unlink(path);
        snprintf(path, sizeof path, "%s/policy.d", p->dir);
        (void)rmdir(path);
        (void)rmdir(p->dir);
}

/* Plans one policy (cpus: cpus_yaml, one spread rule) against t (taken). */
static void plan_spread_policy(Planned *p, Topology *t, const char *cpus_yaml) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        char path[128];
        FILE *f;

        snprintf(p->dir, sizeof p->dir, "/tmp/test-spread-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(p->dir));
        snprintf(path, sizeof path, "%s/policy.d", p->dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/policy.d/50-spread.yaml", p->dir);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f,
                "policies:\n"
                "  - name: pool\n"
                "    match: { comm: pool }\n"
                "    cpus: %s\n"
                "    threads:\n"
                "      - name: \"wrk-*\"\n"
                "        cpus: spread\n",
                cpus_yaml);
        ck_assert_int_eq(fclose(f), 0);

        p->topology = t;
        ck_assert_int_eq(config_load(p->dir, &p->config, &diag), 0);
        ck_assert_int_eq(plan_new(p->config, p->topology, &p->plan), 0);
}

/*
 * Against the plan's spread order over the policy's set: n threads acquire slots; the first
 * (number of cores of the set) are on distinct cores, the next fill the remaining siblings
 * (all distinct CPUs up to the set's size), then the CPUs repeat round robin; the rest set
 * shrinks while free CPUs remain and is the whole set once every CPU is handed.
 */
static void check_spread_over_plan(const Planned *p) {
        const PolicyPlan *pp = plan_find_policy(p->plan, "pool");
        _cleanup_cpuset_ CpuSet cores = CPUSET_NULL, cpus = CPUSET_NULL, rest = CPUSET_NULL;
        SpreadSlots s = SPREAD_SLOTS_NULL;
        const ThreadPlan *tp;
        unsigned n_cores, n_cpus;

        ck_assert_ptr_nonnull(pp);
        ck_assert_msg(!pp->pending_reason, "pool is pending: %s", pp->pending_reason);
        tp = &pp->threads[0];
        ck_assert(tp->spread);
        n_cpus = cpuset_count(&pp->cpus);
        ck_assert_uint_eq(tp->n_spread_order, n_cpus);

        CPUSET_FOREACH (c, &pp->cpus) {
                int core = topology_core_of_cpu(p->topology, (unsigned)c);
                ck_assert_int_ge(core, 0);
                ck_assert_int_eq(cpuset_add(&cores, (unsigned)core), 0);
        }
        n_cores = cpuset_count(&cores);

        cpuset_clear(&cores);
        for (unsigned i = 0; i < 2 * n_cpus + 1; i++) {
                int slot = spread_slots_acquire(&s, (pid_t)(5000 + i));
                int cpu, core;

                ck_assert_int_eq(slot, (int)i);
                cpu = spread_cpu_of_slot(tp->spread_order, tp->n_spread_order, (size_t)slot);
                ck_assert_msg(
                        cpuset_contains(&pp->cpus, (unsigned)cpu), "slot %d: CPU %d outside the set", slot,
                        cpu);
                core = topology_core_of_cpu(p->topology, (unsigned)cpu);
                if (i < n_cores)
                        ck_assert_msg(
                                !cpuset_contains(&cores, (unsigned)core),
                                "slot %u: CPU %d shares core %d with an earlier slot", i, cpu, core);
                if (i < n_cpus)
                        ck_assert_msg(
                                !cpuset_contains(&cpus, (unsigned)cpu), "slot %u: CPU %d twice", i, cpu);
                else
                        ck_assert_int_eq(cpu, (int)tp->spread_order[i % n_cpus]);
                ck_assert_int_eq(cpuset_add(&cores, (unsigned)core), 0);
                ck_assert_int_eq(cpuset_add(&cpus, (unsigned)cpu), 0);

                ck_assert_int_eq(
                        spread_rest_cpus(&pp->cpus, &s, tp->spread_order, tp->n_spread_order, &rest), 0);
                if (i + 1 < n_cpus) {
                        ck_assert_uint_eq(cpuset_count(&rest), n_cpus - i - 1);
                        ck_assert(!cpuset_intersects(&rest, &cpus));
                } else
                        ck_assert(cpuset_equal(&rest, &pp->cpus));
        }
        ck_assert(cpuset_equal(&cpus, &pp->cpus));
        spread_slots_done(&s);
}

START_TEST(test_plan_synthetic_smt) {
        Planned p = {};
        Topology *t = NULL;
        const PolicyPlan *pp;

        ck_assert_int_eq(topology_load_synthetic("pack:2 numa:1 core:4 pu:2", &t), 0);
        plan_spread_policy(&p, t, "{ cores: 3 }");
        pp = plan_find_policy(p.plan, "pool");
        ck_assert_ptr_nonnull(pp);
        ck_assert_uint_eq(cpuset_count(&pp->cpus), 6);
        check_spread_over_plan(&p);
        planned_done(&p);
}
END_TEST

/* Every topology of the corpus, with a count (whole cores, packed) and with the whole machine. */
START_TEST(test_plan_corpus) {
        const char *corpus = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *dir = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        unsigned n_checked = 0;
        struct dirent *de;

        ck_assert_msg(corpus && *corpus, "AFFINITYD_CORPUS is not set (tests/meson.build sets it)");
        ck_assert_int_ge(asprintf(&dir, "%s/topologies", corpus), 0);
        d = opendir(dir);
        ck_assert_msg(d, "cannot open %s", dir);
        while ((de = readdir(d))) {
                static const char *const selectors[] = {"{ cores: 4 }", "{ reserved: allow }"};
                size_t l = strlen(de->d_name);

                if (l < 5 || !streq(de->d_name + l - 4, ".xml"))
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(selectors); i++) {
                        _cleanup_free_ char *path = NULL;
                        Planned p = {};
                        Topology *t = NULL;

                        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, de->d_name), 0);
                        ck_assert_msg(topology_load_xml(path, &t) == 0, "cannot load %s", path);
                        plan_spread_policy(&p, t, selectors[i]);
                        check_spread_over_plan(&p);
                        planned_done(&p);
                }
                n_checked++;
        }
        ck_assert_uint_ge(n_checked, 3);
}
END_TEST

START_TEST(test_plan_live) {
        Planned p = {};
        Topology *t = NULL;

        ck_assert_int_eq(topology_load_live(&t), 0);
        plan_spread_policy(&p, t, "{ reserved: allow }");
        check_spread_over_plan(&p);
        planned_done(&p);
}
END_TEST

static Suite *spread_suite(void) {
        Suite *s = suite_create("spread");
        TCase *tc = tcase_create("slots");

        tcase_add_test(tc, test_acquire_release_reuse);
        tcase_add_test(tc, test_acquire_at);
        tcase_add_test(tc, test_many_threads);
        tcase_add_test(tc, test_random_walk);
        tcase_add_test(tc, test_cpu_of_slot);
        tcase_add_test(tc, test_handed_and_rest);
        suite_add_tcase(s, tc);

        tc = tcase_create("plan");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_plan_synthetic_smt);
        tcase_add_test(tc, test_plan_corpus);
        tcase_add_test(tc, test_plan_live);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(spread_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
