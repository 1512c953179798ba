/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl as a user meets it: status shows the policies that are pending on this machine
 * (and --json carries them, read with json-reader.h), and validate reads a file, a configuration
 * directory and a policy.d directory, naming file:line:column for a broken file, and counts
 * every kind of rule.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "json-reader.h"
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

START_TEST(test_status_pending) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *pending;
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
        doc = json_parse_document(out);
        ck_assert_str_eq(jstr(doc, "State"), "running");
        pending = jarray(doc, "PendingPolicies");
        ck_assert_uint_eq(pending->n_items, 1);
        ck_assert_str_eq(jstr(pending->items[0], "name"), "ghost");
        ck_assert_msg(
                strstr(jstr(pending->items[0], "file"), "10-ghost.yaml"), "file: %s",
                jstr(pending->items[0], "file"));
        ck_assert_uint_eq(jnum(pending->items[0], "line"), 2);
        ck_assert_str_eq(jstr(pending->items[0], "reason"), "user \"" GHOST_USER "\" does not exist");
}
END_TEST

START_TEST(test_validate) {
        Harness *h = harness_new();
        _cleanup_(json_freep) Json *doc = NULL;
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

        /* irqs: and net: rules are counted too, each kind once there is one. */
        harness_write_policy(
                h, "60-devices.yaml",
                "irqs:\n"
                "  - name: nothing\n"
                "    match: {action: \"no-such-irq-*\"}\n"
                "    cpus: \"1\"\n"
                "net:\n"
                "  - device: \"no-such-dev*\"\n"
                "    rps: \"1\"\n");
        r = harness_run_ctl(h, &out, &err, "validate", harness_config_dir(h), NULL);
        ck_assert_msg(r == 0, "affinityctl validate CONFIG-DIR exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, "3 files, 2 policies, 1 irqs rule, 1 net rule: valid"), "stdout: %s\nstderr: %s",
                out, err);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "--json", "validate", harness_config_dir(h), NULL);
        ck_assert_msg(r == 0, "affinityctl --json validate exited %d: %s", r, err);
        doc = json_parse_document(out);
        ck_assert(jbool(doc, "valid"));
        ck_assert_uint_eq(jarray(doc, "policies")->n_items, 2);
        ck_assert_uint_eq(jarray(doc, "irqs")->n_items, 1);
        ck_assert_str_eq(jstr(jarray(doc, "irqs")->items[0], "name"), "nothing");
        ck_assert_uint_eq(jnum(jarray(doc, "irqs")->items[0], "line"), 2);
        ck_assert_uint_eq(jarray(doc, "net")->n_items, 1);
        ck_assert_str_eq(jstr(jarray(doc, "net")->items[0], "name"), "no-such-dev*");
        ck_assert_str_eq(jstr(jarray(doc, "net")->items[0], "device"), "no-such-dev*");
        harness_remove_policy(h, "60-devices.yaml");
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
