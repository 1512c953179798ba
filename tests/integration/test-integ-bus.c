/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The D-Bus surface and affinityctl against the running daemon: ListProcesses and
 * ListPolicies show what is placed, a process that exits leaves the list, Reload is refused to
 * a non-root caller (who may still read properties), and affinityctl status / reload work and
 * exit 3 when no daemon is on the bus.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "macro.h"

static Child *spawn(Harness *h, const char *name, const char *initial_cpus) {
        Child *c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "1"),
                        .initial_cpus = initial_cpus,
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        return c;
}

static void write_two_policies(Harness *h, const char *first, const char *second) {
        harness_write_policy(
                h, "10-first.yaml",
                "policies:\n"
                "  - name: first\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                first);
        harness_write_policy(
                h, "20-second.yaml",
                "# a comment line first\n"
                "policies:\n"
                "  - name: second\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"0\"\n",
                second);
}

START_TEST(test_list_processes) {
        Harness *h = harness_new();
        const char *first = harness_unique_name(h), *second = harness_unique_name(h);
        const char *other = harness_unique_name(h);
        Child *a1, *a2, *b, *x;
        ProcessEntry *e = NULL;
        PolicyEntry *pe = NULL;
        ManagerProps p = {};
        size_t n;
        bool seen_first = false, seen_second = false;

        write_two_policies(h, first, second);
        harness_start_daemon(h);

        x = spawn(h, other, "0-1");
        a1 = spawn(h, first, "0");
        a2 = spawn(h, first, "0-1");
        b = spawn(h, second, "1");
        harness_wait_process_cpus(h, a1->pid, "1", 2);
        harness_wait_process_cpus(h, a2->pid, "1", 2);
        harness_wait_process_cpus(h, b->pid, "0", 2);

        n = harness_list_processes(h, &e);
        {
                const struct {
                        Child *c;
                        const char *policy, *cpus;
                } want[] = {{a1, "first", "1"}, {a2, "first", "1"}, {b, "second", "0"}};

                for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                        const ProcessEntry *f = process_entries_find(e, n, want[i].c->pid);
                        ck_assert_msg(
                                f, "%s[%d] not in ListProcesses", want[i].c->name, (int)want[i].c->pid);
                        ck_assert_str_eq(f->comm, want[i].c->name);
                        ck_assert_str_eq(f->policy, want[i].policy);
                        ck_assert_str_eq(f->cpus, want[i].cpus);
                }
                ck_assert_msg(!process_entries_find(e, n, x->pid), "unmatched %d is listed", (int)x->pid);
        }
        process_entries_free(e, n);

        harness_get_props(h, &p);
        ck_assert_uint_ge(p.managed_processes, 3);
        manager_props_done(&p);

        /* ListPolicies: name, file, line of the list item, resolved cpu-list, not pending. */
        n = harness_list_policies(h, &pe);
        for (size_t i = 0; i < n; i++) {
                if (streq(pe[i].name, "first")) {
                        seen_first = true;
                        ck_assert_msg(strstr(pe[i].file, "10-first.yaml"), "file %s", pe[i].file);
                        ck_assert_uint_eq(pe[i].line, 2);
                        ck_assert_str_eq(pe[i].cpus, "1");
                        ck_assert_str_eq(pe[i].pending_reason, "");
                } else if (streq(pe[i].name, "second")) {
                        seen_second = true;
                        ck_assert_msg(strstr(pe[i].file, "20-second.yaml"), "file %s", pe[i].file);
                        ck_assert_uint_eq(pe[i].line, 3);
                        ck_assert_str_eq(pe[i].cpus, "0");
                        ck_assert_str_eq(pe[i].pending_reason, "");
                }
        }
        ck_assert(seen_first && seen_second);
        policy_entries_free(pe, n);

        /* An exited process leaves the list (its EXIT was handled before the barrier's exec). */
        child_kill(a1);
        harness_barrier(h);
        n = harness_list_processes(h, &e);
        ck_assert_msg(!process_entries_find(e, n, a1->pid), "exited %d still listed", (int)a1->pid);
        ck_assert_msg(process_entries_find(e, n, a2->pid), "%d no longer listed", (int)a2->pid);
        process_entries_free(e, n);
}
END_TEST

START_TEST(test_access_denied) {
        Harness *h = harness_new();
        _cleanup_free_ char *error_name = NULL, *state = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        ManagerProps p0 = {}, p = {};
        int r;

        harness_start_daemon(h);
        harness_get_props(h, &p0);

        r = harness_call_as_nobody(h, "Reload", NULL, &error_name);
        ck_assert_msg(r < 0, "Reload as uid 65534 succeeded");
        ck_assert_str_eq(error_name, "org.freedesktop.DBus.Error.AccessDenied");

        /* Anyone may read. */
        r = harness_call_as_nobody(h, "State", &state, NULL);
        ck_assert_msg(r == 0, "reading State as uid 65534 failed");
        ck_assert_str_eq(state, "running");

        harness_get_props(h, &p);
        ck_assert_uint_eq(p.reloads, p0.reloads);
        manager_props_done(&p);

        /* root may. */
        r = harness_reload(h, &error);
        ck_assert_msg(r >= 0, "Reload as root failed: %s: %s", strna(error.name), strna(error.message));
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.reloads, p0.reloads + 1);
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

START_TEST(test_ctl_status_reload) {
        Harness *h = harness_new();
        const char *first = harness_unique_name(h), *second = harness_unique_name(h);
        _cleanup_free_ char *out = NULL, *err = NULL;
        ManagerProps p0 = {}, p = {};
        const char *s;
        int r;

        write_two_policies(h, first, second);
        harness_start_daemon(h);
        harness_get_props(h, &p0);

        r = harness_run_ctl(h, &out, &err, "status", NULL);
        ck_assert_msg(r == 0, "affinityctl status exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "running"), "affinityctl status does not show the state:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "--json", "status", NULL);
        ck_assert_msg(r == 0, "affinityctl --json status exited %d: %s", r, err);
        s = out + strspn(out, " \t\n");
        ck_assert_msg(*s == '{', "affinityctl --json status is not a JSON object:\n%s", out);
        ck_assert_msg(
                strstr(out, "\"running\""), "affinityctl --json status does not show the state:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "reload", NULL);
        ck_assert_msg(r == 0, "affinityctl reload exited %d: %s", r, err);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.reloads, p0.reloads + 1);
        manager_props_done(&p);
        out = mfree(out);
        err = mfree(err);

        /* A broken file: exit 1 and the place of the error. */
        harness_write_policy(
                h, "30-broken.yaml",
                "policies:\n"
                "  - name: broken\n"
                "    match:\n"
                "      comm: x\n"
                "    cpus: \"0-\"\n");
        r = harness_run_ctl(h, &out, &err, "reload", NULL);
        ck_assert_msg(r == 1, "affinityctl reload of a broken configuration exited %d", r);
        ck_assert_msg(
                strstr(err, "30-broken.yaml:5:") || strstr(out, "30-broken.yaml:5:"),
                "affinityctl reload does not say where the error is:\nstdout: %s\nstderr: %s", out, err);
        harness_get_props(h, &p);
        ck_assert_msg(
                strstr(p.last_reload_error, "30-broken.yaml:5:"), "LastReloadError: %s",
                p.last_reload_error);
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

START_TEST(test_ctl_no_daemon) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        int r;

        harness_start_bus(h); /* a bus, but no affinityd on it */
        r = harness_run_ctl(h, &out, &err, "status", NULL);
        ck_assert_msg(r == 3, "affinityctl status without a daemon exited %d (want 3): %s", r, err);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "reload", NULL);
        ck_assert_msg(r == 3, "affinityctl reload without a daemon exited %d (want 3): %s", r, err);
}
END_TEST

/*
 * comm is whatever bytes a process names itself with: one that is not valid UTF-8 is shown
 * escaped ("\\xff"), and ListProcesses (which sd-bus would refuse as a whole) works for
 * everyone else too.
 */
START_TEST(test_list_processes_invalid_utf8) {
        Harness *h = harness_new();
        const char *u = harness_unique_name(h), *other = harness_unique_name(h);
        char name[16], glob[16], shown[32];
        const ProcessEntry *f;
        ProcessEntry *e = NULL;
        ManagerProps p = {};
        Child *c, *d;
        size_t n;

        snprintf(name, sizeof name, "x\xff%s", u + 2);
        snprintf(glob, sizeof glob, "x?%s", u + 2);
        snprintf(shown, sizeof shown, "x\\xff%s", u + 2);
        write_two_policies(h, glob, other);
        harness_start_daemon(h);

        c = spawn(h, name, "0");
        d = spawn(h, other, "1");
        harness_wait_process_cpus(h, c->pid, "1", 2);
        harness_wait_process_cpus(h, d->pid, "0", 2);

        n = harness_list_processes(h, &e); /* fails the test if the call fails */
        f = process_entries_find(e, n, c->pid);
        ck_assert_msg(f, "%d not in ListProcesses", (int)c->pid);
        ck_assert_str_eq(f->comm, shown);
        ck_assert_str_eq(f->policy, "first");
        f = process_entries_find(e, n, d->pid);
        ck_assert_msg(f, "%d not in ListProcesses", (int)d->pid);
        ck_assert_str_eq(f->comm, other);
        process_entries_free(e, n);

        harness_get_props(h, &p);
        ck_assert_uint_ge(p.managed_processes, 2);
        manager_props_done(&p);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-bus");

        harness_add_test(s, test_list_processes);
        harness_add_test(s, test_list_processes_invalid_utf8);
        harness_add_test(s, test_access_denied);
        harness_add_test(s, test_ctl_status_reload);
        harness_add_test(s, test_ctl_no_daemon);
        return harness_main(s);
}
