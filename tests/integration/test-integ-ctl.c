/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl as a user meets it: status shows the policies that are pending on this machine
 * (and --json carries them), and validate reads a file, a configuration directory and a
 * policy.d directory, naming file:line:column for a broken file.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "macro.h"

/* A user name no machine has. */
#define GHOST_USER "nosuchuser-xyz"

static char *xpath(Harness *h, const char *rel) {
        char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/%s", harness_dir(h), rel), 0);
        return p;
}

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ck_assert_msg(f, "fopen %s: %s", path, strerror(errno));
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

/*
 * A small structural check of a JSON document: one object, brackets and braces balanced
 * outside strings, strings closed, nothing but whitespace after it.
 */
static bool json_looks_valid(const char *s) {
        char stack[64];
        size_t depth = 0;
        bool in_string = false, started = false;

        s += strspn(s, " \t\n");
        if (*s != '{')
                return false;
        for (; *s; s++) {
                if (in_string) {
                        if (*s == '\\' && s[1])
                                s++;
                        else if (*s == '"')
                                in_string = false;
                        else if ((unsigned char)*s < 0x20)
                                return false;
                        continue;
                }
                if (started && depth == 0)
                        return strspn(s, " \t\n") == strlen(s);
                switch (*s) {
                case '"':
                        in_string = true;
                        break;
                case '{':
                case '[':
                        if (depth >= sizeof stack)
                                return false;
                        stack[depth++] = *s;
                        started = true;
                        break;
                case '}':
                case ']':
                        if (depth == 0 || stack[--depth] != (*s == '}' ? '{' : '['))
                                return false;
                        break;
                }
        }
        return started && depth == 0 && !in_string;
}

START_TEST(test_status_pending) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        int r;

        harness_write_policy(
                h, "10-ghost.yaml",
                "policies:\n"
                "  - name: ghost\n"
                "    match:\n"
                "      user: " GHOST_USER "\n"
                "    cpus: \"1\"\n");
        harness_start_daemon(h);

        r = harness_run_ctl(h, &out, &err, "status", NULL);
        ck_assert_msg(r == 0, "affinityctl status exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "Pending:"), "affinityctl status shows no pending policies:\n%s", out);
        ck_assert_msg(
                strstr(out, "ghost (") && strstr(out, "10-ghost.yaml:2)") &&
                        strstr(out, "user \"" GHOST_USER "\" does not exist"),
                "affinityctl status does not show the pending policy with its place and reason:\n%s", out);
        /* The marker policy of the harness is active: not listed as pending. */
        ck_assert_msg(!strstr(out, "integ-marker ("), "an active policy is shown as pending:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "--json", "status", NULL);
        ck_assert_msg(r == 0, "affinityctl --json status exited %d: %s", r, err);
        ck_assert_msg(json_looks_valid(out), "affinityctl --json status is not one JSON object:\n%s", out);
        ck_assert_msg(strstr(out, "\"State\":\"running\""), "no State in:\n%s", out);
        ck_assert_msg(
                strstr(out, "\"PendingPolicies\":[{\"name\":\"ghost\",\"file\":\""),
                "no PendingPolicies in:\n%s", out);
        ck_assert_msg(strstr(out, "10-ghost.yaml\",\"line\":2,"), "no file and line in:\n%s", out);
        ck_assert_msg(
                strstr(out, "\"reason\":\"user \\\"" GHOST_USER "\\\" does not exist\"}]"),
                "no reason in:\n%s", out);
}
END_TEST

START_TEST(test_validate) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *file = xpath(h, "one.yaml"), *pd = xpath(h, "pd"),
                            *good = xpath(h, "pd/10-good.yaml"), *broken = xpath(h, "pd/20-broken.yaml"),
                            *where = NULL;
        int r;

        /* One file. */
        write_text(file, "policies:\n  - name: one\n    match: {comm: one}\n    cpus: \"0\"\n");
        r = harness_run_ctl(h, &out, &err, "validate", file, NULL);
        ck_assert_msg(r == 0, "affinityctl validate FILE exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "1 file, 1 policy: valid"), "stdout: %s\nstderr: %s", out, err);
        out = mfree(out);
        err = mfree(err);

        /* A configuration directory: affinityd.yaml (if any) and policy.d/. */
        harness_write_policy(h, "50-two.yaml", "policies:\n  - name: two\n    match: {comm: two}\n");
        r = harness_run_ctl(h, &out, &err, "validate", harness_config_dir(h), NULL);
        ck_assert_msg(r == 0, "affinityctl validate CONFIG-DIR exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "2 files, 2 policies: valid"), "stdout: %s\nstderr: %s", out, err);
        out = mfree(out);
        err = mfree(err);

        /* A policy.d directory: its files are read, a broken one fails with its place. */
        ck_assert_int_eq(mkdir(pd, 0755), 0);
        write_text(good, "policies:\n  - name: good\n    match: {comm: good}\n");
        r = harness_run_ctl(h, &out, &err, "validate", pd, NULL);
        ck_assert_msg(r == 0, "affinityctl validate POLICY-DIR exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "1 file, 1 policy: valid"), "stdout: %s\nstderr: %s", out, err);
        out = mfree(out);
        err = mfree(err);

        write_text(
                broken,
                "policies:\n"
                "  - name: broken\n"
                "    match:\n"
                "      comm: x\n"
                "    cpu: \"1\"\n");
        r = harness_run_ctl(h, &out, &err, "validate", pd, NULL);
        ck_assert_msg(r == 1, "affinityctl validate of a broken policy.d exited %d (want 1)", r);
        ck_assert_int_ge(asprintf(&where, "%s:5:5: error: unknown key \"cpu\"", broken), 0);
        ck_assert_msg(strstr(err, where), "stderr does not say \"%s\":\n%s", where, err);
        ck_assert_msg(!strstr(out, "valid"), "stdout claims valid:\n%s", out);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-ctl");

        harness_add_test(s, test_status_pending);
        harness_add_test(s, test_validate);
        return harness_main(s);
}
