/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the kubelet's CPU manager checkpoint reader (lib/kubelet-cpu-manager.c) on the
 * fixture files of tests/unit/fixtures/kubelet/, in the kubelet's one-line JSON: the static
 * policy's v2 entries (pod UID → container → cpu-list) and v1 ones (container ID → cpu-list),
 * the none policy, empty entries; errors named at file:line:column (truncated JSON, a list
 * where a mapping belongs, a bad cpu-list); a missing file, a file over 1 MiB, a directory;
 * copies, descriptions and the removal of the exclusive CPUs from a set.
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubelet-cpu-manager.h"
#include "macro.h"
#include "tmpdir.h"

#define UID_A "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
#define UID_B "0a1b2c3d-0000-4111-8222-333344445555"
#define CID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* AFFINITYD_SOURCE_ROOT/tests/unit/fixtures/kubelet/NAME, newly allocated. */
static char *fixture(const char *name) {
        const char *root = getenv("AFFINITYD_SOURCE_ROOT");
        char *p = NULL;

        ck_assert_msg(root && *root, "AFFINITYD_SOURCE_ROOT is not set (run through meson test)");
        ck_assert_int_ge(asprintf(&p, "%s/tests/unit/fixtures/kubelet/%s", root, name), 0);
        return p;
}

/* Loads fixture name, expecting success. */
static KubeletCpuState *load_ok(const char *name) {
        _cleanup_free_ char *path = fixture(name), *error = NULL;
        KubeletCpuState *s = NULL;
        int r;

        r = kubelet_cpu_state_load(path, &s, &error);
        ck_assert_msg(r == 0, "%s: %d %s", name, r, strna(error));
        ck_assert_ptr_null(error);
        ck_assert_ptr_nonnull(s);
        return s;
}

/* Loads fixture name, expecting error r with an error text that ends in suffix (after the
 * fixture's path). */
static void load_fails(const char *name, int want, const char *suffix) {
        _cleanup_free_ char *path = fixture(name), *error = NULL, *expected = NULL;
        KubeletCpuState *s = NULL;

        ck_assert_int_eq(kubelet_cpu_state_load(path, &s, &error), want);
        ck_assert_ptr_null(s);
        ck_assert_ptr_nonnull(error);
        ck_assert_int_ge(asprintf(&expected, "%s%s", path, suffix), 0);
        ck_assert_str_eq(error, expected);
}

static void assert_set(const CpuSet *s, const char *want) {
        _cleanup_free_ char *l = cpuset_to_string(s);

        ck_assert_ptr_nonnull(l);
        ck_assert_str_eq(l, want);
}

START_TEST(test_static_v2) {
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *s = load_ok("static.json");
        _cleanup_free_ char *all = NULL, *some = NULL;
        _cleanup_cpuset_ CpuSet two = CPUSET_NULL;

        ck_assert_str_eq(s->policy_name, "static");
        assert_set(&s->default_cpus, "0,5-7");
        ck_assert_uint_eq(s->n_entries, 3);
        ck_assert_str_eq(s->entries[0].pod_uid, UID_A);
        ck_assert_str_eq(s->entries[0].container, "db");
        assert_set(&s->entries[0].cpus, "1-2");
        ck_assert_str_eq(s->entries[1].pod_uid, UID_A);
        ck_assert_str_eq(s->entries[1].container, "sidecar");
        assert_set(&s->entries[1].cpus, "3");
        ck_assert_str_eq(s->entries[2].pod_uid, UID_B);
        ck_assert_str_eq(s->entries[2].container, "app");
        assert_set(&s->entries[2].cpus, "4");
        assert_set(kubelet_cpu_state_exclusive(s), "1-4");

        ck_assert_int_eq(kubelet_cpu_state_describe(s, NULL, &all), 0);
        ck_assert_str_eq(
                all,
                "1-2 (pod " UID_A " container db), 3 (pod " UID_A " container sidecar), 4 (pod " UID_B
                " container app)");
        ck_assert_int_eq(cpuset_parse_list("2,7", &two, NULL), 0);
        ck_assert_int_eq(kubelet_cpu_state_describe(s, &two, &some), 0);
        ck_assert_str_eq(some, "2 (pod " UID_A " container db)");
}
END_TEST

START_TEST(test_static_v1) {
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *s = load_ok("static-v1.json");
        _cleanup_free_ char *all = NULL;

        ck_assert_uint_eq(s->n_entries, 1);
        ck_assert_ptr_null(s->entries[0].pod_uid);
        ck_assert_str_eq(s->entries[0].container, CID_A);
        assert_set(kubelet_cpu_state_exclusive(s), "1-2");
        ck_assert_int_eq(kubelet_cpu_state_describe(s, NULL, &all), 0);
        ck_assert_str_eq(all, "1-2 (container " CID_A ")");
}
END_TEST

START_TEST(test_nothing_exclusive) {
        static const char *const names[] = {"none.json", "static-empty.json"};

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *s = load_ok(names[i]);
                _cleanup_free_ char *d = NULL;

                ck_assert_str_eq(s->policy_name, i == 0 ? "none" : "static");
                ck_assert_uint_eq(s->n_entries, 0);
                ck_assert(cpuset_is_empty(kubelet_cpu_state_exclusive(s)));
                ck_assert_int_eq(kubelet_cpu_state_describe(s, NULL, &d), 0);
                ck_assert_str_eq(d, "");
        }
        /* NULL is nothing exclusive too. */
        ck_assert(cpuset_is_empty(kubelet_cpu_state_exclusive(NULL)));
}
END_TEST

START_TEST(test_bad_files) {
        /* Truncated: libyaml's error at the end of the stream, naming the mapping left open. */
        load_fails(
                "truncated.json", -EBADMSG,
                ":2:1: YAML syntax error: did not find expected ',' or '}' (while parsing a flow mapping at "
                "line 1, column 54)");
        /* A list where a container mapping belongs, at the list's column. */
        load_fails(
                "wrong-type.json", -EBADMSG,
                ":1:94: entries: " UID_A ": expected a mapping of container names to cpu-lists, got a list");
        /* The column of the bad character inside the quotes. */
        load_fails(
                "bad-cpu-list.json", -EBADMSG,
                ":1:103: entries: " UID_A ": db: invalid cpu-list \"1-x\": expected a CPU number after '-'");
}
END_TEST

START_TEST(test_bad_strings) {
        static const struct {
                const char *text;
                int ret;
                const char *error;
        } cases[] = {
                {"", -EBADMSG, "t: empty: not a CPU manager checkpoint"},
                {"[1, 2]", -EBADMSG, "t:1:1: the checkpoint: expected a JSON object, got a list"},
                {"{\"defaultCpuSet\":\"0\"}", -EBADMSG,
                 "t:1:1: policyName: missing: not a CPU manager checkpoint"},
                {"{\"policyName\":null}", -EBADMSG,
                 "t:1:15: policyName: expected a string, got an empty value"},
                {"{\"policyName\":\"static\",\"defaultCpuSet\":{}}", -EBADMSG,
                 "t:1:40: defaultCpuSet: expected a string, got a mapping"},
                {"{\"policyName\":\"static\",\"entries\":\"1-4\"}", -EBADMSG,
                 "t:1:34: entries: expected a mapping of pod UIDs, got \"1-4\""},
                {"{\"policyName\":\"static\",\"entries\":{\"p\":{\"c\":\"9000\"}}}", -ERANGE,
                 "t:1:45: entries: p: c: invalid cpu-list \"9000\": number too large (CPU numbers go up to "
                 "8191)"},
                {"{\"policyName\":\"static\"}\n---\n{}", -EBADMSG, "t:2:1: a second document"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *error = NULL;
                KubeletCpuState *s = NULL;

                ck_assert_int_eq(
                        kubelet_cpu_state_parse("t", cases[i].text, strlen(cases[i].text), &s, &error),
                        cases[i].ret);
                ck_assert_ptr_null(s);
                ck_assert_msg(error && streq(error, cases[i].error), "case %zu: %s", i, strna(error));
        }

        /* A null entries and unknown keys are fine; YAML flow style too. */
        {
                _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *s = NULL;
                const char *t = "{\"policyName\":\"none\",\"entries\":null,\"newKey\":[1],\"checksum\":1}";

                ck_assert_int_eq(kubelet_cpu_state_parse("t", t, strlen(t), &s, NULL), 0);
                ck_assert_uint_eq(s->n_entries, 0);
        }
}
END_TEST

START_TEST(test_load_errors) {
        _cleanup_free_ char *dir = make_tmpdir_named("test-kubelet"), *big = NULL, *missing = NULL,
                            *error = NULL, *expected = NULL;
        KubeletCpuState *s = NULL;
        FILE *f;

        /* Missing: nothing exclusive, and nothing to say. */
        ck_assert_int_ge(asprintf(&missing, "%s/cpu_manager_state", dir), 0);
        ck_assert_int_eq(kubelet_cpu_state_load(missing, &s, &error), -ENOENT);
        ck_assert_ptr_null(error);

        /* Over 1 MiB: refused before parsing, however valid it starts. */
        ck_assert_int_ge(asprintf(&big, "%s/big", dir), 0);
        f = fopen(big, "we");
        ck_assert_ptr_nonnull(f);
        fputs("{\"policyName\":\"static\",\"defaultCpuSet\":\"", f);
        for (size_t i = 0; i < KUBELET_CPU_MANAGER_STATE_MAX / 2; i++)
                fputs("0,", f);
        fputs("0\"}", f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(kubelet_cpu_state_load(big, &s, &error), -EFBIG);
        ck_assert_ptr_null(s);
        ck_assert_int_ge(asprintf(&expected, "%s: larger than 1 MiB: not a CPU manager checkpoint", big), 0);
        ck_assert_str_eq(error, expected);
        error = mfree(error);
        expected = mfree(expected);

        /* A directory. */
        ck_assert_int_eq(kubelet_cpu_state_load(dir, &s, &error), -EISDIR);
        ck_assert_int_ge(asprintf(&expected, "%s: %s", dir, strerror(EISDIR)), 0);
        ck_assert_str_eq(error, expected);

        rm_rf(dir);
}
END_TEST

START_TEST(test_copy_and_remove) {
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *s = load_ok("static.json"), *c = NULL;
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL, other = CPUSET_NULL;
        _cleanup_free_ char *who = NULL, *a = NULL, *b = NULL;

        ck_assert_int_eq(kubelet_cpu_state_copy(s, &c), 0);
        kubelet_cpu_state_free(TAKE_PTR(s)); /* the copy owns its own */
        ck_assert_int_eq(kubelet_cpu_state_describe(c, NULL, &a), 0);
        ck_assert_uint_eq(c->n_entries, 3);
        assert_set(&c->default_cpus, "0,5-7");
        ck_assert_str_eq(c->entries[2].pod_uid, UID_B);

        ck_assert_int_eq(cpuset_parse_list("0-7", &set, NULL), 0);
        ck_assert_int_eq(kubelet_cpu_state_remove_from(c, &set, &who), 1);
        assert_set(&set, "0,5-7");
        ck_assert_str_eq(who, a); /* every entry was in 0-7 */
        who = mfree(who);
        ck_assert_int_eq(kubelet_cpu_state_remove_from(c, &set, &who), 0);
        ck_assert_ptr_null(who);
        assert_set(&set, "0,5-7");

        ck_assert_int_eq(cpuset_parse_list("3-5", &other, NULL), 0);
        ck_assert_int_eq(kubelet_cpu_state_remove_from(c, &other, &b), 1);
        assert_set(&other, "5");
        ck_assert_str_eq(b, "3 (pod " UID_A " container sidecar), 4 (pod " UID_B " container app)");
        ck_assert_int_eq(kubelet_cpu_state_remove_from(NULL, &other, &who), 0);

        /* A copy of nothing is nothing. */
        ck_assert_int_eq(kubelet_cpu_state_copy(NULL, &s), 0);
        ck_assert_ptr_null(s);
}
END_TEST

int main(void) {
        Suite *s = suite_create("kubelet-cpu-manager");
        TCase *tc = tcase_create("checkpoint");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_static_v2);
        tcase_add_test(tc, test_static_v1);
        tcase_add_test(tc, test_nothing_exclusive);
        tcase_add_test(tc, test_bad_files);
        tcase_add_test(tc, test_bad_strings);
        tcase_add_test(tc, test_load_errors);
        tcase_add_test(tc, test_copy_and_remove);
        suite_add_tcase(s, tc);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
