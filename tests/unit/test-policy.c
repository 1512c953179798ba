/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Unit tests for lib/policy.c: cpu_selector_format(), the text of a cpus: value that D-Bus shows
 * (org.affinityd1.Policy.Selector). Selectors come from real YAML through config_parse_string();
 * each text is checked against what the documentation promises (keys in documented order, only
 * non-default keys, literal lists canonical) and parsed back as YAML into the same selector.
 * Plus config_find_policy() and the lifecycle helpers' reset-to-zero contract.
 */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "macro.h"
#include "policy-yaml.h"
#include "policy.h"

/* Parses one policy whose cpus: value is cpus_yaml (a YAML scalar or flow mapping); fails the
 * test, printing the diagnostics, if it is not valid. */
static Config *parse_cpus(const char *cpus_yaml) {
        _cleanup_free_ char *text = NULL, *diag_text = NULL;
        Diagnostics diag = {};
        Config *c = config_new();
        int r;

        ck_assert_ptr_nonnull(c);
        ck_assert_int_ge(
                asprintf(
                        &text,
                        "policies:\n"
                        "  - name: p\n"
                        "    match: { comm: x }\n"
                        "    cpus: %s\n",
                        cpus_yaml),
                0);
        r = config_parse_string(c, "test.yaml", text, strlen(text), false, &diag);
        if (r < 0 && diagnostics_format(&diag, &diag_text) >= 0)
                fprintf(stderr, "%s", diag_text);
        diagnostics_done(&diag);
        ck_assert_msg(r == 0, "cpus: %s: parse failed (%d)", cpus_yaml, r);
        ck_assert_uint_eq(c->n_policies, 1);
        return c;
}

static void assert_same_set(const CpuSet *a, const CpuSet *b, const char *what) {
        _cleanup_free_ char *x = cpuset_to_string(a), *y = cpuset_to_string(b);

        ck_assert_ptr_nonnull(x);
        ck_assert_ptr_nonnull(y);
        ck_assert_msg(streq(x, y), "%s: %s != %s", what, x, y);
}

/* Every field the formatter shows is equal in a and b. */
static void assert_same_selector(const CpuSelector *a, const CpuSelector *b) {
        ck_assert_int_eq(a->kind, b->kind);
        assert_same_set(&a->literal, &b->literal, "literal");
        ck_assert_int_eq(a->has_nodes, b->has_nodes);
        assert_same_set(&a->nodes, &b->nodes, "nodes");
        ck_assert_int_eq(a->has_packages, b->has_packages);
        assert_same_set(&a->packages, &b->packages, "packages");
        ck_assert_msg(streq_ptr(a->near, b->near), "near %s != %s", strna(a->near), strna(b->near));
        ck_assert_uint_eq(a->n_cores, b->n_cores);
        ck_assert_uint_eq(a->n_cpus, b->n_cpus);
        ck_assert_int_eq(a->smt, b->smt);
        ck_assert_int_eq(a->cpu_kind, b->cpu_kind);
        ck_assert_int_eq(a->exclusive, b->exclusive);
        ck_assert_int_eq(a->reserved, b->reserved);
}

/* cpus: written as in, formatted as want, and want parsed back gives the same selector. */
static const struct {
        const char *in, *want;
} cases[] = {
        {"\"3\"", "3"},
        {"\"0,1,2-3,8\"", "0-3,8"}, /* canonical, not as written */
        {"\"8,0-2\"", "0-2,8"},
        {"{}", "{}"},
        {"{ near: eth0, cores: 8 }", "{ near: eth0, cores: 8 }"},
        {"{ smt: one-per-core, cores: 8, near: eth0 }", "{ near: eth0, cores: 8, smt: one-per-core }"},
        {"{ nodes: \"1,0\" }", "{ nodes: 0-1 }"},
        {"{ nodes: \"0,2\", packages: 1 }", "{ nodes: \"0,2\", packages: 1 }"},
        {"{ near: \"0000:3b:00.0\", cpus: 2 }", "{ near: \"0000:3b:00.0\", cpus: 2 }"},
        {"{ kind: performance, reserved: only }", "{ kind: performance, reserved: only }"},
        {"{ kind: efficiency, reserved: allow, exclusive: true }",
         "{ kind: efficiency, reserved: allow, exclusive: true }"},
        /* defaults are left out */
        {"{ reserved: avoid, smt: all, exclusive: false, cores: 2 }", "{ cores: 2 }"},
        {"{ exclusive: true, smt: one-per-core, cpus: 4, packages: \"0-1\", nodes: 0 }",
         "{ nodes: 0, packages: 0-1, cpus: 4, smt: one-per-core, exclusive: true }"},
};

START_TEST(test_format_round_trip) {
        _cleanup_(config_freep) Config *c = parse_cpus(cases[_i].in);
        _cleanup_(config_freep) Config *back = NULL;
        _cleanup_free_ char *text = NULL, *again = NULL;

        ck_assert_int_eq(cpu_selector_format(&c->policies[0].cpus, &text), 0);
        ck_assert_msg(
                streq(text, cases[_i].want), "cpus: %s formatted as '%s', expected '%s'", cases[_i].in, text,
                cases[_i].want);
        ck_assert_ptr_null(strchr(text, '\n'));

        /* The text is YAML for the same selector, and formats to itself. */
        back = parse_cpus(text);
        assert_same_selector(&c->policies[0].cpus, &back->policies[0].cpus);
        ck_assert_int_eq(cpu_selector_format(&back->policies[0].cpus, &again), 0);
        ck_assert_str_eq(again, text);
}
END_TEST

START_TEST(test_format_none_and_spread) {
        static const char yaml[] = "policies:\n"
                                   "  - name: p\n"
                                   "    match: { comm: x }\n"
                                   "    threads:\n"
                                   "      - name: \"w*\"\n"
                                   "        cpus: spread\n"
                                   "      - name: \"io*\"\n"
                                   "        cpus: \"1\"\n";
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_free_ char *none = NULL, *spread = NULL, *literal = NULL;
        const Policy *p;

        ck_assert_ptr_nonnull(c);
        ck_assert_int_eq(config_parse_string(c, "test.yaml", yaml, strlen(yaml), false, NULL), 0);
        p = config_find_policy(c, "p");
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq(p->n_threads, 2);

        ck_assert_int_eq(p->cpus.kind, CPU_SELECTOR_NONE);
        ck_assert_int_eq(cpu_selector_format(&p->cpus, &none), 0);
        ck_assert_str_eq(none, "");
        ck_assert_int_eq(cpu_selector_format(&p->threads[0].cpus, &spread), 0);
        ck_assert_str_eq(spread, "spread");
        ck_assert_int_eq(cpu_selector_format(&p->threads[1].cpus, &literal), 0);
        ck_assert_str_eq(literal, "1");
}
END_TEST

START_TEST(test_format_invalid) {
        CpuSelector s = {.kind = CPU_SELECTOR_MAPPING, .smt = 7};
        CpuSelector k = {.kind = (CpuSelectorKind)42};
        char *text = (char *)"untouched";

        ck_assert_int_eq(cpu_selector_format(&s, &text), -EINVAL);
        ck_assert_int_eq(cpu_selector_format(&k, &text), -EINVAL);
        ck_assert_str_eq(text, "untouched"); /* ret_* written only on success */
}
END_TEST

START_TEST(test_find_policy) {
        static const char yaml[] = "policies:\n"
                                   "  - name: db\n"
                                   "    match: { comm: pg }\n"
                                   "    cpus: \"0\"\n"
                                   "  - name: web/front end\n"
                                   "    match: { comm: nginx }\n"
                                   "    cpus: { cores: 1 }\n";
        _cleanup_(config_freep) Config *c = config_new();
        const Policy *p;

        ck_assert_ptr_nonnull(c);
        ck_assert_int_eq(config_parse_string(c, "test.yaml", yaml, strlen(yaml), false, NULL), 0);
        p = config_find_policy(c, "web/front end");
        ck_assert_ptr_eq(p, &c->policies[1]);
        ck_assert_uint_eq(p->location.line, 5);
        ck_assert_int_eq(p->cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert_ptr_eq(config_find_policy(c, "db"), &c->policies[0]);
        ck_assert_ptr_null(config_find_policy(c, "web"));
        ck_assert_ptr_null(config_find_policy(c, NULL));
        ck_assert_ptr_null(config_find_policy(NULL, "db"));
}
END_TEST

/* The prefix a message about a place gets: file, line and column, and nothing without a file. */
START_TEST(test_location_prefix) {
        char buf[64], small[8];

        ck_assert_str_eq(
                location_prefix(
                        &(Location){.file = "/etc/affinityd/policy.d/10-a.yaml", .line = 3, .column = 7},
                        buf, sizeof(buf)),
                "/etc/affinityd/policy.d/10-a.yaml:3:7: ");
        ck_assert_str_eq(
                location_prefix(&(Location){.file = "a.yaml", .line = 3}, buf, sizeof(buf)), "a.yaml:3: ");
        ck_assert_str_eq(location_prefix(&(Location){.line = 3, .column = 1}, buf, sizeof(buf)), "");
        ck_assert_str_eq(location_prefix(NULL, buf, sizeof(buf)), "");
        ck_assert_str_eq(
                location_prefix(&(Location){.file = "long.yaml", .line = 12}, small, sizeof(small)),
                "long.ya");
}
END_TEST

START_TEST(test_selector_done_resets) {
        _cleanup_(config_freep) Config *c = parse_cpus("{ near: eth0, nodes: 0 }");
        CpuSelector s = c->policies[0].cpus;
        CpuSelector zero = {};

        c->policies[0].cpus = (CpuSelector){}; /* s now owns near and nodes */
        ck_assert_ptr_nonnull(s.near);
        cpu_selector_done(&s);
        ck_assert_int_eq(memcmp(&s, &zero, sizeof s), 0);
        cpu_selector_done(&s); /* again: a no-op */
        cpu_selector_done(NULL);
}
END_TEST

static Suite *policy_suite(void) {
        Suite *s = suite_create("policy");
        TCase *tc = tcase_create("format");

        tcase_add_loop_test(tc, test_format_round_trip, 0, ELEMENTSOF(cases));
        tcase_add_test(tc, test_format_none_and_spread);
        tcase_add_test(tc, test_format_invalid);
        suite_add_tcase(s, tc);

        tc = tcase_create("model");
        tcase_add_test(tc, test_find_policy);
        tcase_add_test(tc, test_selector_done_resets);
        tcase_add_test(tc, test_location_prefix);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(policy_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
