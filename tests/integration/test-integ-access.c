/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Access control of the D-Bus API. A client running as nobody (through
 * `setpriv --reuid=nobody --regid=nogroup --clear-groups`: the integ-busclient helper, busctl
 * and affinityctl) reads every property of the Manager and of a policy object, introspects,
 * and calls ListPolicies, ListProcesses, ListIrqs, ListNetQueues and Explain — and is refused
 * Reload and Rescan with org.freedesktop.DBus.Error.AccessDenied, leaving the configuration
 * and the counters as they were; root may do both. Twice:
 *  - on a private dbus-daemon that loads systemd/org.affinityd1.conf (from the source tree):
 *    the bus refuses (dbus-daemon's "Rejected send message" — the daemon never sees the call),
 *    and nobody may not own org.affinityd1 either;
 *  - on a permissive bus: the daemon's own credential check refuses, with its own message.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define MANAGER          AFFINITYD_BUS_PATH " " AFFINITYD_BUS_INTERFACE
#define ACCESS_DENIED    "org.freedesktop.DBus.Error.AccessDenied"
#define BUS_REJECTED     "Rejected send message" /* how dbus-daemon words a refusal by its policy */
#define BUS_OWN_REJECTED "due to security policies in the configuration file"

_printf_(1, 2) static char *xasprintf(const char *format, ...) {
        va_list ap;
        char *s = NULL;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        ck_assert_int_ge(r, 0);
        return s;
}

/* The answer lines of integ-busclient. */
typedef struct Answers {
        char **lines;
        size_t n;
} Answers;

static void answers_done(Answers *a) {
        strv_free(a->lines);
        *a = (Answers){};
}

/*
 * Runs integ-busclient (as nobody, or as root) with the actions; asserts it ran them all.
 * Answers line i is the answer to action i: "OK ..." or "ERR NAME\tMESSAGE".
 */
static void busclient(Harness *h, bool as_nobody, const char *const *actions, Answers *ret) {
        const char *path = harness_install(h, "integ-busclient", "integ-busclient");
        const char *argv[64];
        _cleanup_free_ char *out = NULL, *err = NULL;
        size_t n = 0, k = 0;
        Answers a = {};
        int r;

        argv[n++] = path;
        argv[n++] = harness_bus_address(h);
        for (const char *const *x = actions; *x; x++) {
                ck_assert(n < ELEMENTSOF(argv) - 1);
                argv[n++] = *x;
                k++;
        }
        argv[n] = NULL;
        r = harness_run(h, as_nobody, &out, &err, argv);
        ck_assert_msg(r == 0, "integ-busclient%s exited %d: %s", as_nobody ? " as nobody" : "", r, err);

        a.lines = calloc(k + 1, sizeof(char *));
        ck_assert_ptr_nonnull(a.lines);
        for (char *line = out, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                ck_assert_msg(a.n < k, "integ-busclient answered more than %zu actions:\n%s", k, out);
                a.lines[a.n] = strdup(line);
                ck_assert_ptr_nonnull(a.lines[a.n]);
                a.n++;
        }
        ck_assert_msg(a.n == k, "integ-busclient answered %zu of %zu actions: %s", a.n, k, err);
        *ret = a;
}

static void assert_ok(const Answers *a, size_t i, const char *what) {
        ck_assert_msg(strncmp(a->lines[i], "OK ", 3) == 0, "%s as nobody: %s", what, a->lines[i]);
}

/* Answer i is AccessDenied; by_bus: refused by dbus-daemon's policy (its message says so: "Rejected
 * send message, ..." for a call, "... due to security policies in the configuration file" for a
 * name), else by the daemon. */
static void assert_denied(const Answers *a, size_t i, const char *what, bool by_bus) {
        const char *l = a->lines[i], *msg;

        ck_assert_msg(
                strncmp(l, "ERR " ACCESS_DENIED "\t", strlen("ERR " ACCESS_DENIED "\t")) == 0,
                "%s as nobody was not refused with %s: %s", what, ACCESS_DENIED, l);
        msg = strchr(l, '\t') + 1;
        if (by_bus)
                ck_assert_msg(
                        strstr(msg, BUS_REJECTED) || strstr(msg, BUS_OWN_REJECTED),
                        "%s as nobody was not refused by the bus policy: %s", what, msg);
        else
                ck_assert_msg(
                        !strstr(msg, BUS_REJECTED) && *msg,
                        "%s as nobody was refused by the bus, not by the daemon's own check: %s", what, msg);
}

/* The comma-separated words of "OK N a,b,c" (getall) as a list. */
static char **getall_names(const char *line) {
        const char *p = strchr(line + 3, ' ');
        char **l = NULL;
        size_t n = 0;

        ck_assert_ptr_nonnull(p);
        p++;
        l = calloc(1, sizeof(char *));
        ck_assert_ptr_nonnull(l);
        while (*p) {
                size_t k = strcspn(p, ",");
                l = realloc(l, (n + 2) * sizeof(char *));
                ck_assert_ptr_nonnull(l);
                l[n] = strndup(p, k);
                ck_assert_ptr_nonnull(l[n]);
                l[++n] = NULL;
                p += k;
                if (*p == ',')
                        p++;
        }
        return l;
}

/* Word w (0-based, space-separated) of line, newly allocated. */
static char *word(const char *line, unsigned w) {
        const char *p = line;

        for (unsigned i = 0; i < w; i++) {
                p = strchr(p, ' ');
                ck_assert_msg(p, "\"%s\" has no word %u", line, w);
                p++;
        }
        return strndup(p, strcspn(p, " "));
}

/* The text value of a Manager property, read as root. */
static char *root_get(Harness *h, const char *property) {
        _cleanup_free_ char *action = xasprintf("get " MANAGER " %s", property);
        Answers a = {};
        char *v;

        busclient(h, false, (const char *const[]){action, NULL}, &a);
        ck_assert_msg(strncmp(a.lines[0], "OK ", 3) == 0, "Get(%s) as root: %s", property, a.lines[0]);
        v = strdup(strchr(a.lines[0] + 3, ' ') + 1);
        ck_assert_ptr_nonnull(v);
        answers_done(&a);
        return v;
}

/* The policy the tests run with, and a process it placed. */
static Child *setup(Harness *h, bool bus_policy) {
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *conf = NULL;
        const char *src = getenv("AFFINITYD_SOURCE_ROOT");
        Child *c;

        harness_write_policy(
                h, "10-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                name);
        if (bus_policy) {
                ck_assert_msg(src, "AFFINITYD_SOURCE_ROOT is not set");
                conf = xasprintf("%s/systemd/org.affinityd1.conf", src);
                harness_start_bus_with(h, &(BusOptions){.include_policy = conf});
        } else
                harness_start_bus(h);
        harness_start_daemon(h); /* as root: may own org.affinityd1 under the policy file */

        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "1"),
                        .initial_cpus = "0",
                        .pipes = true});
        free(child_expect_line(c));
        harness_wait_process_cpus(h, c->pid, "1", 2);
        harness_wait_listed(h, c->pid, "web");
        return c;
}

static void check_access(bool bus_policy) {
        Harness *h = harness_new();
        Child *c = setup(h, bus_policy);
        _cleanup_free_ char *explain = xasprintf("call " MANAGER " Explain %d", (int)c->pid);
        _cleanup_free_ char *last0 = NULL, *last1 = NULL, *err0 = NULL, *err1 = NULL, *policy_action = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL, *arg_address = NULL;
        _cleanup_strv_free_ char **names = NULL, **policy_names = NULL;
        const char *const reads[] = {
                "getall " MANAGER,
                "getall /org/affinityd1/policy/web " AFFINITYD_POLICY_INTERFACE,
                "call " MANAGER " ListPolicies",
                "call " MANAGER " ListProcesses",
                "call " MANAGER " ListIrqs",
                "call " MANAGER " ListNetQueues",
                explain,
                "introspect " AFFINITYD_BUS_PATH,
                "introspect /org/affinityd1/policy",
                NULL,
        };
        Answers root = {}, nobody = {}, a = {};
        ManagerProps p0 = {}, p = {};
        int r;

        /* Reads: nobody gets what root gets. */
        busclient(h, false, reads, &root);
        busclient(h, true, reads, &nobody);
        for (size_t i = 0; reads[i]; i++) {
                assert_ok(&root, i, reads[i]);
                assert_ok(&nobody, i, reads[i]);
                /* The same answer, for everything that can't change meanwhile (the counters of
                 * GetAll and the lists could, but not their shape: compare up to the count). */
                if (strncmp(reads[i], "getall", 6) == 0 || strncmp(reads[i], "introspect", 10) == 0 ||
                    reads[i] == explain)
                        ck_assert_msg(
                                streq(root.lines[i], nobody.lines[i]), "%s: root got \"%s\", nobody \"%s\"",
                                reads[i], root.lines[i], nobody.lines[i]);
                else {
                        _cleanup_free_ char *sr = word(root.lines[i], 1), *sn = word(nobody.lines[i], 1);
                        ck_assert_str_eq(sr, sn);
                }
        }
        ck_assert_msg(
                strstr(nobody.lines[6], "|web"), "Explain(%d) as nobody: %s", (int)c->pid, nobody.lines[6]);
        ck_assert_msg(
                strstr(nobody.lines[8], "web"), "no policy object web below /org/affinityd1/policy: %s",
                nobody.lines[8]);

        /* Every property one by one (Get), of the Manager and of the policy object. */
        names = getall_names(root.lines[0]);
        policy_names = getall_names(root.lines[1]);
        ck_assert_msg(
                strv_contains_suffix(names, "Reloads") && strv_contains_suffix(policy_names, "MatchedPIDs"),
                "%s / %s", root.lines[0], root.lines[1]);
        {
                const char *gets[128];
                char *owned[128];
                size_t n = 0;

                STRV_FOREACH (x, names) {
                        ck_assert(n < ELEMENTSOF(gets) - 1);
                        owned[n] = xasprintf("get " MANAGER " %s", *x);
                        gets[n] = owned[n];
                        n++;
                }
                STRV_FOREACH (x, policy_names) {
                        ck_assert(n < ELEMENTSOF(gets) - 1);
                        owned[n] = xasprintf(
                                "get /org/affinityd1/policy/web " AFFINITYD_POLICY_INTERFACE " %s", *x);
                        gets[n] = owned[n];
                        n++;
                }
                gets[n] = NULL;
                busclient(h, true, gets, &a);
                for (size_t i = 0; i < n; i++) {
                        assert_ok(&a, i, gets[i]);
                        free(owned[i]);
                }
                answers_done(&a);
        }

        /* Mutations: refused, and nothing changed. */
        harness_get_props(h, &p0);
        last0 = root_get(h, "LastReloadUSec");
        err0 = root_get(h, "LastReloadError");
        busclient(
                h, true,
                (const char *const[]){
                        "call " MANAGER " Reload", "call " MANAGER " Rescan",
                        bus_policy ? "own " AFFINITYD_BUS_NAME : "introspect /", NULL},
                &a);
        assert_denied(&a, 0, "Reload", bus_policy);
        assert_denied(&a, 1, "Rescan", bus_policy);
        if (bus_policy)
                assert_denied(&a, 2, "RequestName(" AFFINITYD_BUS_NAME ")", true);
        answers_done(&a);

        /* The same with the tools operators use: busctl and affinityctl. */
        arg_address = xasprintf("--address=%s", harness_bus_address(h));
        r = harness_run(
                h, true, &out, &err,
                ARGS("busctl", arg_address, "get-property", AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH,
                     AFFINITYD_BUS_INTERFACE, "State"));
        ck_assert_msg(r == 0, "busctl get-property as nobody exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "s \"running\""), "busctl get-property State as nobody: %s", out);
        free(out);
        free(err);
        r = harness_run(
                h, true, &out, &err,
                ARGS("busctl", arg_address, "call", AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH,
                     AFFINITYD_BUS_INTERFACE, "Reload"));
        ck_assert_msg(r != 0, "busctl call Reload as nobody succeeded: %s", out);
        /* busctl shows the error as strerror(EACCES) of its name. */
        ck_assert_msg(
                strstr(err, "Access denied") || strstr(err, BUS_REJECTED),
                "busctl call Reload as nobody: %s", err);
        free(out);
        free(err);
        {
                _cleanup_free_ char *ctl_bus = xasprintf("--bus-address=%s", harness_bus_address(h));
                const char *ctl = getenv("AFFINITYCTL_BIN");

                ck_assert_ptr_nonnull(ctl);
                r = harness_run(h, true, &out, &err, ARGS(ctl, ctl_bus, "status"));
                ck_assert_msg(r == 0, "affinityctl status as nobody exited %d: %s", r, err);
                free(out);
                free(err);
                r = harness_run(h, true, &out, &err, ARGS(ctl, ctl_bus, "reload"));
                ck_assert_msg(r == 1, "affinityctl reload as nobody exited %d (want 1): %s", r, err);
                free(out);
                free(err);
                r = harness_run(h, true, &out, &err, ARGS(ctl, ctl_bus, "rescan"));
                ck_assert_msg(r == 1, "affinityctl rescan as nobody exited %d (want 1): %s", r, err);
                out = mfree(out);
                err = mfree(err);
        }

        harness_get_props(h, &p);
        ck_assert_uint_eq(p.reloads, p0.reloads);
        ck_assert_uint_eq(p.rescans, p0.rescans);
        ck_assert_str_eq(p.last_reload_error, p0.last_reload_error);
        last1 = root_get(h, "LastReloadUSec");
        err1 = root_get(h, "LastReloadError");
        ck_assert_str_eq(last1, last0);
        ck_assert_str_eq(err1, err0);
        harness_assert_process_cpus_now(c->pid, "1", 2);
        harness_wait_listed(h, c->pid, "web");
        manager_props_done(&p);

        /* root may. */
        busclient(
                h, false, (const char *const[]){"call " MANAGER " Reload", "call " MANAGER " Rescan", NULL},
                &a);
        ck_assert_msg(strncmp(a.lines[0], "OK", 2) == 0, "Reload as root: %s", a.lines[0]);
        ck_assert_msg(strncmp(a.lines[1], "OK", 2) == 0, "Rescan as root: %s", a.lines[1]);
        answers_done(&a);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.reloads, p0.reloads + 1);
        ck_assert_uint_ge(p.rescans, p0.rescans + 1);
        manager_props_done(&p);
        manager_props_done(&p0);

        answers_done(&root);
        answers_done(&nobody);
        child_kill(c);
}

START_TEST(test_access_bus_policy) {
        check_access(true);
}
END_TEST

START_TEST(test_access_daemon_check) {
        check_access(false);
}
END_TEST

/*
 * Unprivileged callers share the loop's time (daemon/manager-bus.h; here 1 ms per second and uid
 * with $AFFINITYD_BUS_SHARE_USEC, 2 ms saved up at most): a caller as nobody that keeps asking to
 * Explain is told org.affinityd1.Error.Busy once its share is spent, with how long to wait,
 * while root is still answered at once.
 */
START_TEST(test_access_budget) {
        Harness *h = harness_new();
        enum { N_CALLS = 40 };
        const char *actions[N_CALLS + 1] = {};
        _cleanup_free_ char *explain = NULL;
        Answers nobody = {}, root = {};
        unsigned ok = 0, busy = 0;
        Child *c;

        ck_assert_int_eq(setenv("AFFINITYD_BUS_SHARE_USEC", "1000", 1), 0); /* this test's process only */
        c = setup(h, false);
        explain = xasprintf("call " MANAGER " Explain %d", (int)c->pid);
        for (unsigned i = 0; i < N_CALLS; i++)
                actions[i] = explain;
        busclient(h, true, actions, &nobody);
        assert_ok(&nobody, 0, "the first Explain");
        for (size_t i = 0; i < nobody.n; i++) {
                if (strncmp(nobody.lines[i], "OK ", 3) == 0)
                        ok++;
                else {
                        ck_assert_msg(
                                strstr(nobody.lines[i], "ERR org.affinityd1.Error.Busy\t") &&
                                        strstr(nobody.lines[i], "uid 65534") &&
                                        strstr(nobody.lines[i], " ms"),
                                "Explain %zu as nobody: %s", i, nobody.lines[i]);
                        busy++;
                }
        }
        ck_assert_msg(
                busy > 0, "%u Explain calls as nobody with a share of 1 ms per second, none refused", ok);
        busclient(h, false, (const char *const[]){explain, NULL}, &root);
        assert_ok(&root, 0, "Explain as root while nobody is over its share");
        answers_done(&nobody);
        answers_done(&root);
}
END_TEST

/* /proc's hidepid= back to off (the test sets it; restored by the test, else by main()). */
static void proc_hidepid_off(void) {
        (void)harness_run_quiet((const char *const[]){"mount", "-o", "remount,hidepid=off", "/proc", NULL});
}

/*
 * Under hidepid=invisible, /proc shows nobody no other user's processes, and neither does the
 * daemon: Explain of root's process is NoSuchProcess, ListProcesses leaves it out; root still
 * sees it. Without hidepid= both answer as before.
 */
START_TEST(test_access_hidepid) {
        Harness *h = harness_new();
        Child *c = setup(h, false);
        _cleanup_free_ char *explain = xasprintf("call " MANAGER " Explain %d", (int)c->pid);
        const char *list = "call " MANAGER " ListProcesses";
        Answers before = {}, hidden = {}, root = {};
        int r;

        busclient(h, true, (const char *const[]){explain, list, NULL}, &before);
        assert_ok(&before, 0, "Explain without hidepid=");
        ck_assert_msg(strstr(before.lines[1], "OK a(usss) 1 "), "ListProcesses: %s", before.lines[1]);

        r = harness_run_quiet(
                (const char *const[]){"mount", "-o", "remount,hidepid=invisible", "/proc", NULL});
        ck_assert_msg(r == 0, "mount -o remount,hidepid=invisible /proc exited %d", r);
        busclient(h, true, (const char *const[]){explain, list, NULL}, &hidden);
        busclient(h, false, (const char *const[]){explain, list, NULL}, &root);
        proc_hidepid_off();
        ck_assert_msg(
                strstr(hidden.lines[0], "ERR org.affinityd1.Error.NoSuchProcess"),
                "Explain of root's process as nobody under hidepid=invisible: %s", hidden.lines[0]);
        ck_assert_msg(
                strstr(hidden.lines[1], "OK a(usss) 0"),
                "ListProcesses as nobody under hidepid=invisible: %s", hidden.lines[1]);
        assert_ok(&root, 0, "Explain as root under hidepid=invisible");
        ck_assert_msg(strstr(root.lines[1], "OK a(usss) 1 "), "ListProcesses as root: %s", root.lines[1]);
        answers_done(&before);
        answers_done(&hidden);
        answers_done(&root);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-access");
        int r;

        harness_add_test(s, test_access_bus_policy);
        harness_add_test(s, test_access_daemon_check);
        harness_add_test_tagged(s, test_access_budget, "time-share");
        harness_add_test_tagged(s, test_access_hidepid, "time-share");
        r = harness_main(s);
        proc_hidepid_off();
        return r;
}
