/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl verify on the real daemon, with a policy "iso" holding the last online CPU
 * exclusive (the reserve is every other CPU) and a managed spinner (integ-spin) on it; each
 * window is 1 s (--for=1):
 *  - as placed: exit 0, the policy's verdict "ok", no foreign CPU time, its CPU time counted;
 *  - a hog started on that CPU by hand (integ-spin under a name no policy matches, affinity set
 *    before exec, as taskset -c CPU does): exit 1, the verdict names the hog's busy thread and
 *    its CPU time, and the audit lists it with cpu_ns >= 20 ms;
 *  - a policy name the daemon doesn't have: exit 2, stderr names it;
 *  - mode "irq": a movable IRQ of this machine (one whose /proc/irq/N/smp_affinity_list takes a
 *    write; the busiest one) moved onto that CPU while the test makes disk and network traffic:
 *    exit 1 and the verdict names "IRQ N". main() writes the IRQ's mask back, whatever happened.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-reader.h"
#include "macro.h"

static unsigned movable_irq; /* 0: none found */
static char movable_original[256];

/* The policy "iso" holding the last online CPU exclusive for comm name; returns that CPU. */
static unsigned setup_policy(Harness *h, const char *name) {
        unsigned cpu = harness_last_cpu(harness_online_cpus());
        _cleanup_free_ char *cpu_text = harness_asprintf("%u", cpu),
                            *rest = harness_cpus_andnot(harness_online_cpus(), cpu_text),
                            *settings = harness_asprintf("reserve: \"%s\"\n", rest),
                            *path = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));

        harness_write_text(path, settings);
        harness_write_policy(
                h, "10-iso.yaml",
                "policies:\n"
                "  - name: iso\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: {cpus: 1, exclusive: true}\n",
                name);
        return cpu;
}

/* The managed spinner, placed on cpu. */
static Child *start_owner(Harness *h, const char *name, unsigned cpu) {
        _cleanup_free_ char *cpu_text = harness_asprintf("%u", cpu), *line = NULL;
        Child *c = harness_spawn(h, &(SpawnOptions){.helper = "integ-spin", .name = name, .pipes = true});

        line = child_expect_line(c);
        ck_assert_msg(strncmp(line, "ready ", 6) == 0, "integ-spin said \"%s\"", line);
        harness_wait_process_cpus(h, c->pid, cpu_text, 2);
        harness_wait_listed(h, c->pid, "iso");
        return c;
}

/* Runs verify --for=1 --json [POLICY]; its exit status, the document into *ret (exit 0 or 1). */
static int run_verify(Harness *h, const char *policy, Json **ret, char **ret_err) {
        _cleanup_free_ char *out = NULL;
        int r;

        r = harness_run_ctl(h, &out, ret_err, "verify", "--for=1", "--json", policy, NULL);
        if (r == 0 || r == 1) {
                *ret = json_parse_document(out);
                printf("%s", out);
        }
        return r;
}

START_TEST(test_verify_ok) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(json_freep) Json *j = NULL;
        _cleanup_free_ char *err = NULL;
        const Json *p;
        unsigned cpu;
        int r;

        cpu = setup_policy(h, name);
        harness_start_daemon(h);
        (void)start_owner(h, name, cpu);

        r = run_verify(h, "iso", &j, &err);
        p = r <= 1 ? jfind(jarray(j, "policies"), "policy", "iso") : NULL;
        ck_assert_msg(p, "verify exited %d: %s", r, err);
        /* Other helpers' load may land on the CPU: then the verdict says what, and only that. */
        if (r == 1)
                ck_assert_msg(
                        strncmp(jstr(p, "verdict"), "VIOLATION: intruder", 19) == 0 ||
                                strncmp(jstr(p, "verdict"), "VIOLATION: IRQ", 14) == 0,
                        "verdict %s", jstr(p, "verdict"));
        else
                ck_assert_str_eq(jstr(p, "verdict"), "ok");
        ck_assert_uint_eq(jnum(p, "foreign_cpu_ns"), 0);
        ck_assert_uint_ge(jnum(p, "processes"), 1);
        /* the spinner spins: it ran for most of the window */
        ck_assert_uint_gt(jnum(p, "cpu_ns"), 0);
        ck_assert_uint_gt(jnum(p, "run_delay_per_interval_samples"), 0);
        ck_assert_uint_ge(
                jnum(p, "run_delay_per_interval_max_ns"), jnum(p, "run_delay_per_interval_p99_ns"));
        ck_assert_uint_ge(
                jnum(p, "run_delay_per_interval_p99_ns"), jnum(p, "run_delay_per_interval_p50_ns"));
        ck_assert_uint_eq(jnum(jarray(p, "audit")->items[0], "cpu"), cpu);
}
END_TEST

START_TEST(test_verify_names_hog) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(json_freep) Json *j = NULL;
        _cleanup_free_ char *err = NULL, *cpu_text = NULL, *line = NULL, *want = NULL;
        const Json *p, *intruders, *hog = NULL;
        pid_t hog_tid = 0;
        unsigned cpu;
        Child *c;
        int r;

        cpu = setup_policy(h, name);
        harness_start_daemon(h);
        (void)start_owner(h, name, cpu);
        cpu_text = harness_asprintf("%u", cpu);
        c = harness_spawn(
                h, &(SpawnOptions){.helper = "integ-spin", .initial_cpus = cpu_text, .pipes = true});
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "ready %d", &hog_tid) == 1, "integ-spin said \"%s\"", line);

        r = run_verify(h, NULL, &j, &err);
        ck_assert_msg(r == 1, "verify exited %d with a hog on CPU %u: %s", r, cpu, err);
        ck_assert(jbool(j, "violation"));
        p = jfind(jarray(j, "policies"), "policy", "iso");
        ck_assert_ptr_nonnull(p);
        want = harness_asprintf("[%d] ", hog_tid);
        ck_assert_msg(
                strstr(jstr(p, "verdict"), want), "verdict %s does not name TID %d", jstr(p, "verdict"),
                hog_tid);
        intruders = jarray(jarray(p, "audit")->items[0], "intruders");
        for (size_t i = 0; i < intruders->n_items; i++)
                if (jnum(intruders->items[i], "tid") == (unsigned)hog_tid)
                        hog = intruders->items[i];
        ck_assert_msg(hog, "TID %d not among the intruders", hog_tid);
        ck_assert_uint_ge(jnum(hog, "cpu_ns"), 20 * 1000 * 1000);
        ck_assert(jbool(hog, "violation"));
        child_kill(c);
}
END_TEST

START_TEST(test_verify_bad_name) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *out = NULL, *err = NULL;
        int r;

        (void)setup_policy(h, name);
        harness_start_daemon(h);
        r = harness_run_ctl(h, &out, &err, "verify", "--for=0.1", "no-such-policy", NULL);
        ck_assert_int_eq(r, 2);
        ck_assert_msg(strstr(err, "\"no-such-policy\""), "stderr: %s", err);
        /* the text form: one verdict line for the policy named */
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "verify", "--for=0.2", "iso", NULL);
        ck_assert_msg(r == 0 || r == 1, "verify exited %d: %s", r, err);
        printf("%s", out);
        ck_assert_msg(
                strstr(out, "\niso: ok\n") || strstr(out, "\niso: pending\n") ||
                        strstr(out, "\niso: VIOLATION: "),
                "no verdict line in:\n%s\nstderr:\n%s", out, err);
}
END_TEST

START_TEST(test_verify_latency) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(json_freep) Json *j = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL;
        const Json *cpus;
        unsigned cpu;
        int r;

        cpu = setup_policy(h, name);
        harness_start_daemon(h);
        (void)start_owner(h, name, cpu);
        r = harness_run_ctl(h, &out, &err, "verify", "--for=1", "--latency", "--json", "iso", NULL);
        ck_assert_msg(r == 0 || r == 1, "verify --latency exited %d: %s", r, err);
        printf("%s", out);
        j = json_parse_document(out);
        ck_assert(jbool(jget(j, "latency"), "memory_locked"));
        cpus = jarray(jget(j, "latency"), "cpus");
        /* the exclusive CPU, and a shared one when the machine has another */
        ck_assert_uint_ge(cpus->n_items, 1);
        ck_assert_msg(jfind(cpus, "kind", "exclusive"), "no exclusive CPU probed");
        ck_assert_uint_eq(jnum(jfind(cpus, "kind", "exclusive"), "cpu"), cpu);
        for (size_t i = 0; i < cpus->n_items; i++) {
                const Json *c = cpus->items[i];

                ck_assert_str_eq(jstr(c, "scheduler"), "SCHED_FIFO");
                ck_assert_uint_gt(jnum(c, "wakeups"), 100);
                ck_assert_uint_gt(jnum(c, "wakeup_latency_p50_ns"), 0);
                ck_assert_uint_ge(jnum(c, "wakeup_latency_p99_ns"), jnum(c, "wakeup_latency_p50_ns"));
                ck_assert_uint_ge(jnum(c, "wakeup_latency_max_ns"), jnum(c, "wakeup_latency_p99_ns"));
        }
        /* verify's own threads on the exclusive CPU are not intruders */
        ck_assert_msg(!strstr(out, "\"comm\":\"affinityctl\""), "the probe is listed as an intruder");
}
END_TEST

/* Traffic that makes the usual IRQs of a VM fire: a synced disk write, a ping of the gateway. */
static void make_traffic(Harness *h) {
        _cleanup_free_ char *path = harness_asprintf("%s/traffic", harness_dir(h));
        char buf[4096] = {};
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        if (fd >= 0) {
                for (int i = 0; i < 16; i++)
                        if (write(fd, buf, sizeof buf) < 0)
                                break;
                (void)fsync(fd);
                close(fd);
        }
        (void)harness_run_quiet(
                ARGS("sh", "-c",
                     "ping -c 3 -i 0.2 -W 1 \"$(ip route | awk '/default/ {print $3; exit}')\" >/dev/null "
                     "2>&1 &"));
}

START_TEST(test_verify_irq) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(json_freep) Json *j = NULL;
        _cleanup_free_ char *err = NULL, *path = NULL, *cpu_text = NULL, *want = NULL;
        const Json *p;
        unsigned cpu;
        int r = -1;

        cpu = setup_policy(h, name);
        harness_start_daemon(h);
        (void)start_owner(h, name, cpu);
        path = harness_asprintf("/proc/irq/%u/smp_affinity_list", movable_irq);
        cpu_text = harness_asprintf("%u", cpu);
        ck_assert_int_eq(harness_write_knob(path, cpu_text), 0);
        want = harness_asprintf("IRQ %u ", movable_irq);
        /* an IRQ fires when traffic comes: up to three windows with traffic in each */
        for (int i = 0; i < 3; i++) {
                j = json_free(j);
                err = mfree(err);
                make_traffic(h);
                r = run_verify(h, "iso", &j, &err);
                p = r == 1 ? jfind(jarray(j, "policies"), "policy", "iso") : NULL;
                if (p && strstr(jstr(p, "verdict"), want))
                        break;
        }
        (void)harness_write_knob(path, movable_original);
        ck_assert_msg(r == 1, "verify exited %d with IRQ %u on CPU %u: %s", r, movable_irq, cpu, err);
        p = jfind(jarray(j, "policies"), "policy", "iso");
        ck_assert_msg(
                strstr(jstr(p, "verdict"), want), "verdict %s does not name IRQ %u", jstr(p, "verdict"),
                movable_irq);
}
END_TEST

int main(int argc, char **argv) {
        Suite *s = suite_create("integ-verify");
        const char *mode = argc > 1 ? argv[1] : "";
        int r;

        if (streq(mode, "irq")) {
                movable_irq = harness_find_movable_irq(movable_original, sizeof movable_original);
                if (movable_irq == 0) {
                        printf("SKIP: no IRQ of this machine takes a write of its smp_affinity_list\n");
                        return 77;
                }
                harness_add_test(s, test_verify_irq);
        } else {
                harness_add_test(s, test_verify_ok);
                harness_add_test(s, test_verify_names_hog);
                harness_add_test(s, test_verify_bad_name);
                harness_add_test(s, test_verify_latency);
        }
        r = harness_main(s);
        if (movable_irq > 0) {
                char path[64];

                snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", movable_irq);
                (void)harness_write_knob(path, movable_original);
        }
        return r;
}
