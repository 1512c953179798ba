/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Reloads: a broken file (by SIGHUP and by D-Bus Reload) keeps the old configuration and its
 * placements and reports file:line:column; a changed configuration re-places running
 * processes, places processes that match now, and gives processes that no longer match their
 * original masks back.
 */

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "macro.h"

/* "cpu:" instead of "cpus:" — an unknown key at line 3, column 5. */
#define BROKEN_POLICY \
        "policies:\n" \
        "  - name: broken\n" \
        "    cpu: \"0\"\n" \
        "    match:\n" \
        "      comm: nothing-matches-this\n"
#define BROKEN_WHERE "20-broken.yaml:3:5"

static const char *write_alpha(Harness *h, const char *name, const char *cpus) {
        return harness_write_policy(
                h, "10-alpha.yaml",
                "policies:\n"
                "  - name: alpha\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"%s\"\n",
                name, cpus);
}

START_TEST(test_reload_broken) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        ManagerProps p0 = {}, p = {};
        Child *c, *c2;
        int r;

        write_alpha(h, a, "1");
        harness_start_daemon(h);
        c = harness_spawn_threads(h, a, 2, "0");
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_get_props(h, &p0);
        ck_assert_str_eq(p0.last_reload_error, "");

        /* The good file changes too: nothing of the new configuration may take effect. */
        write_alpha(h, a, "0-1");
        harness_write_policy(h, "20-broken.yaml", BROKEN_POLICY);

        /* SIGHUP */
        harness_sighup_reload(h);
        harness_get_props(h, &p);
        ck_assert_msg(
                strstr(p.last_reload_error, BROKEN_WHERE), "LastReloadError \"%s\" does not name %s",
                p.last_reload_error, BROKEN_WHERE);
        ck_assert_msg(
                strstr(p.last_reload_error, "error"), "LastReloadError \"%s\" says no error",
                p.last_reload_error);
        /* an older configuration is in force: degraded until a reload succeeds */
        ck_assert_str_eq(p.state, "degraded");
        ck_assert_msg(
                !strv_contains_suffix(p.policy_files, "/20-broken.yaml"),
                "PolicyFiles lists the rejected file");
        harness_assert_process_cpus_now(c->pid, "1", 3);
        manager_props_done(&p);

        /* The old configuration still places new processes. */
        c2 = harness_spawn_threads(h, a, 1, "0");
        harness_wait_process_cpus(h, c2->pid, "1", 2);

        /* D-Bus Reload */
        r = harness_reload(h, &error);
        ck_assert_msg(r < 0, "Reload of a broken configuration succeeded");
        ck_assert_str_eq(error.name, "org.affinityd1.Error.InvalidPolicy");
        ck_assert_msg(
                strstr(error.message, BROKEN_WHERE), "Reload error \"%s\" does not name %s", error.message,
                BROKEN_WHERE);
        harness_get_props(h, &p);
        ck_assert_msg(
                strstr(p.last_reload_error, BROKEN_WHERE), "LastReloadError \"%s\" does not name %s",
                p.last_reload_error, BROKEN_WHERE);
        ck_assert_str_eq(p.state, "degraded");
        harness_assert_process_cpus_now(c->pid, "1", 3);
        harness_assert_process_cpus_now(c2->pid, "1", 2);
        manager_props_done(&p);
        sd_bus_error_free(&error);

        /* Fixed: the pending change of 10-alpha.yaml takes effect, the error is cleared. */
        harness_remove_policy(h, "20-broken.yaml");
        r = harness_reload(h, &error);
        ck_assert_msg(r >= 0, "Reload failed: %s: %s", strna(error.name), strna(error.message));
        harness_get_props(h, &p);
        ck_assert_str_eq(p.last_reload_error, "");
        ck_assert_str_eq(p.state, "running"); /* no longer degraded */
        ck_assert_uint_gt(p.reloads, p0.reloads);
        harness_assert_process_cpus_now(c->pid, "0-1", 3);
        harness_assert_process_cpus_now(c2->pid, "0-1", 2);
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

START_TEST(test_reload_changed) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h), *b = harness_unique_name(h), *cn = harness_unique_name(h);
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        ManagerProps p0 = {}, p = {};
        Child *ca, *cb, *cc;
        ProcessEntry *e = NULL;
        size_t n;
        int r;

        write_alpha(h, a, "1");
        harness_write_policy(
                h, "20-beta.yaml",
                "policies:\n"
                "  - name: beta\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"0\"\n",
                b);
        harness_start_daemon(h);
        harness_get_props(h, &p0);

        /* cc matches nothing yet; started first, so it was looked at once ca and cb are placed. */
        cc = harness_spawn_threads(h, cn, 2, "0");
        ca = harness_spawn_threads(h, a, 2, "0-1");
        cb = harness_spawn_threads(h, b, 2, "1"); /* its original mask: CPU 1; beta moves it to 0 */
        harness_wait_process_cpus(h, ca->pid, "1", 3);
        harness_wait_process_cpus(h, cb->pid, "0", 3);
        harness_assert_process_cpus_now(cc->pid, "0", 3);

        /* SIGHUP with alpha moved to CPU 0: the running process follows. */
        write_alpha(h, a, "0");
        harness_sighup_reload(h);
        harness_wait_process_cpus(h, ca->pid, "0", 3);
        harness_get_props(h, &p);
        ck_assert_str_eq(p.last_reload_error, "");
        manager_props_done(&p);

        /* D-Bus Reload: beta gone (cb gets its original CPU 1 back), gamma new (cc placed).
         * Reload replies when the reload is complete, rescan included. */
        harness_remove_policy(h, "20-beta.yaml");
        harness_write_policy(
                h, "30-gamma.yaml",
                "policies:\n"
                "  - name: gamma\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                cn);
        r = harness_reload(h, &error);
        ck_assert_msg(r >= 0, "Reload failed: %s: %s", strna(error.name), strna(error.message));
        harness_assert_process_cpus_now(cb->pid, "1", 3);
        harness_assert_process_cpus_now(cc->pid, "1", 3);
        harness_assert_process_cpus_now(ca->pid, "0", 3);

        harness_get_props(h, &p);
        ck_assert_str_eq(p.last_reload_error, "");
        ck_assert_uint_ge(p.reloads, p0.reloads + 2);
        ck_assert(strv_contains_suffix(p.policy_files, "/30-gamma.yaml"));
        ck_assert(!strv_contains_suffix(p.policy_files, "/20-beta.yaml"));
        manager_props_done(&p);
        manager_props_done(&p0);

        n = harness_list_processes(h, &e);
        ck_assert_msg(
                !process_entries_find(e, n, cb->pid), "no longer matching %d still listed", (int)cb->pid);
        ck_assert_msg(process_entries_find(e, n, cc->pid), "newly matching %d not listed", (int)cc->pid);
        ck_assert_str_eq(process_entries_find(e, n, cc->pid)->policy, "gamma");
        process_entries_free(e, n);

        /* New threads follow the new configuration; the restored process is left alone. */
        child_send(ca, "spawn 2");
        free(child_expect_line(ca));
        child_send(cb, "spawn 2");
        free(child_expect_line(cb));
        harness_wait_process_cpus(h, ca->pid, "0", 5);
        harness_barrier(h);
        harness_assert_process_cpus_now(cb->pid, "1", 5);
}
END_TEST

/*
 * --watch-config: a policy written while the daemon runs takes effect without a signal, a
 * broken one is reported and the running configuration kept, and a ConfigMap volume's swap
 * (kubelet style: a new "..TIMESTAMP" directory, "..data" renamed to point at it, the policy
 * files links through "..data") is picked up too.
 */
START_TEST(test_watch_config) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *pd = harness_asprintf("%s/policy.d", harness_config_dir(h)), *data = NULL,
                            *link = NULL, *tmp = NULL, *target = NULL;
        ManagerProps p0 = {}, p = {};
        unsigned ready;
        Child *c;
        FILE *f;

        harness_start_daemon_with(h, &(DaemonOptions){.args = ARGS("--watch-config")});
        c = harness_spawn_threads(h, a, 2, "0");
        harness_assert_process_cpus_now(c->pid, "0", 3); /* no policy yet */
        harness_get_props(h, &p0);

        /* Written, and nothing else done: placed. */
        ready = harness_ready_count(h);
        write_alpha(h, a, "1");
        harness_wait_ready(h, ready + 1); /* the reload's READY=1 */
        harness_wait_process_cpus(h, c->pid, "1", 3);

        /* Broken: the running configuration stays, the error names the place. */
        ready = harness_ready_count(h);
        harness_write_policy(h, "20-broken.yaml", BROKEN_POLICY);
        harness_wait_ready(h, ready + 1);
        harness_get_props(h, &p);
        ck_assert_msg(
                strstr(p.last_reload_error, BROKEN_WHERE), "LastReloadError \"%s\" does not name %s",
                p.last_reload_error, BROKEN_WHERE);
        harness_assert_process_cpus_now(c->pid, "1", 3);
        manager_props_done(&p);
        harness_remove_policy(h, "20-broken.yaml");
        harness_remove_policy(h, "10-alpha.yaml");
        harness_wait_process_cpus(h, c->pid, "0", 3); /* its original back */

        /* The kubelet's way: files are links through "..data", which is swapped. */
        data = harness_asprintf("%s/..2026_12_01_00_00_00.1", pd);
        ck_assert_int_eq(mkdir(data, 0755), 0);
        tmp = harness_asprintf("%s/10-alpha.yaml", data);
        f = fopen(tmp, "we");
        ck_assert(f);
        fprintf(f, "policies:\n  - name: alpha\n    match: {comm: \"%s\"}\n    cpus: \"1\"\n", a);
        ck_assert_int_eq(fclose(f), 0);
        free(tmp);
        tmp = harness_asprintf("%s/..data_tmp", pd);
        ck_assert_int_eq(symlink("..2026_12_01_00_00_00.1", tmp), 0);
        target = harness_asprintf("%s/..data", pd);
        ck_assert_int_eq(rename(tmp, target), 0);
        link = harness_asprintf("%s/10-alpha.yaml", pd);
        ck_assert_int_eq(symlink("..data/10-alpha.yaml", link), 0);
        harness_wait_process_cpus(h, c->pid, "1", 3);

        harness_get_props(h, &p);
        ck_assert_uint_ge(p.reloads, p0.reloads + 3);
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-reload");

        harness_add_test(s, test_reload_broken);
        harness_add_test(s, test_reload_changed);
        harness_add_test(s, test_watch_config);
        return harness_main(s);
}
