/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Every file in policy-examples/ validates: no error, no warning, and it says something (a
 * policy, or the reserve for affinityd.yaml). The files are found by listing the directory,
 * so a new example is checked without touching this test; the count guards against the
 * listing silently finding nothing.
 */

#include <check.h>
#include <dirent.h>

#include "policy-yaml.h"

#define EXAMPLES_MIN 8U /* six matchers, threads, affinityd.yaml (the demo is a config dir) */

static char **examples = NULL; /* full paths, sorted */

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
}

static bool is_settings(const char *path) {
        const char *base = strrchr(path, '/');

        return streq(base ? base + 1 : path, "affinityd.yaml");
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
                if (r != 0 || d.n_items > 0)
                        fail_with_diagnostics(*path, r, &d);

                ck_assert(strv_length(c->files) == 1 && streq(c->files[0], *path));
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
        size_t policies = 0;
        int r;

        ck_assert_uint_ge(strv_length(examples), EXAMPLES_MIN);
        r = config_load_paths(examples, &c, &d);
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

static Suite *examples_suite(void) {
        Suite *s = suite_create("examples");
        TCase *tc = tcase_create("examples");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_every_example_validates);
        tcase_add_test(tc, test_examples_together);
        tcase_add_test(tc, test_demo_policy);
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
