/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The isolation audit on the real daemon (effect-interval: 1s), with a policy holding the last
 * online CPU exclusive (the reserve is every other CPU, so the selector can pick nothing else)
 * and a managed spinner (integ-spin) on it:
 *  - a hog started there by hand (integ-spin under a name no policy matches, affinity set to that
 *    CPU before exec, as taskset -c CPU does) is named in a CpuIntrusion signal, kind "task",
 *    with its busy thread's comm and TID and CPU time; the journal line names the policy; the
 *    metric affinityd_cpu_intrusion_seconds_total{cpu,policy,kind="task"} grows, and promtool
 *    accepts the text;
 *  - a movable IRQ of this machine (one whose /proc/irq/N/smp_affinity_list takes a write; the
 *    busiest one), moved onto that CPU while the test makes disk and network traffic, is
 *    reported with its number and count (kind "irq"), and counted in
 *    affinityd_cpu_intrusion_interrupts_total (mode "irq", integ-audit-irq: exits 77 only when no
 *    IRQ here is movable);
 *  - with effect-interval: off the same hog is never reported and CpuIntrusions stays empty;
 *  - the managed spinner's busy thread moved by hand onto a CPU of the reserve is reported
 *    there (kind "reserve", under the policy "iso") and counted.
 * main() saves the IRQ's mask before the run and writes it back after it, whatever happened.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

static unsigned movable_irq; /* 0: none found */
static char movable_original[256];

/* The busiest movable IRQ and its smp_affinity_list (tests/integration/harness.h). */
static void find_movable_irq(void) {
        movable_irq = harness_find_movable_irq(movable_original, sizeof movable_original);
}

/* Prints the daemon's log lines holding needle (what an operator reads), for the test's log. */
static void print_log_lines(Harness *h, const char *needle) {
        _cleanup_free_ char *path = harness_asprintf("%s/affinityd.log", harness_dir(h));
        char line[4096];
        FILE *f = fopen(path, "re");

        if (!f)
                return;
        while (fgets(line, sizeof line, f))
                if (strstr(line, needle))
                        fputs(line, stdout);
        fclose(f);
}

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));

        harness_write_text(path, text);
}

/* The last online CPU, as text, and the policy "iso" holding it exclusive for comm name. */
static unsigned setup_policy(Harness *h, const char *name, const char *interval) {
        unsigned cpu = harness_last_cpu(harness_online_cpus());
        _cleanup_free_ char *cpu_text = harness_asprintf("%u", cpu),
                            *rest = harness_cpus_andnot(harness_online_cpus(), cpu_text),
                            *settings = harness_asprintf(
                                    "effect-interval: %s\nreserve: \"%s\"\n", interval, rest);

        write_settings(h, settings);
        harness_write_policy(
                h, "10-iso.yaml",
                "policies:\n"
                "  - name: iso\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: {cpus: 1, exclusive: true}\n",
                name);
        return cpu;
}

/* The managed spinner, placed on cpu; its busy thread into *ret_tid (may be NULL). */
static Child *start_owner_tid(Harness *h, const char *name, unsigned cpu, pid_t *ret_tid) {
        _cleanup_free_ char *cpu_text = harness_asprintf("%u", cpu), *line = NULL;
        Child *c = harness_spawn(h, &(SpawnOptions){.helper = "integ-spin", .name = name, .pipes = true});
        pid_t tid = 0;

        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "ready %d", &tid) == 1, "integ-spin said \"%s\"", line);
        if (ret_tid)
                *ret_tid = tid;
        harness_wait_process_cpus(h, c->pid, cpu_text, 2);
        harness_wait_listed(h, c->pid, "iso");
        return c;
}

static Child *start_owner(Harness *h, const char *name, unsigned cpu) {
        return start_owner_tid(h, name, cpu, NULL);
}

/* A hog started on cpu by hand, under a name no policy matches; its busy thread into *ret_tid. */
static Child *start_hog(Harness *h, unsigned cpu, pid_t *ret_tid) {
        _cleanup_free_ char *cpu_text = harness_asprintf("%u", cpu), *line = NULL;
        Child *c = harness_spawn(
                h, &(SpawnOptions){.helper = "integ-spin", .initial_cpus = cpu_text, .pipes = true});

        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "ready %d", ret_tid) == 1, "integ-spin said \"%s\"", line);
        return c;
}

/* What the test waits for in CpuIntrusion signals. */
typedef struct Wanted {
        unsigned cpu;
        const char *kind;
        const char *who_prefix; /* NULL: any */
        /* found */
        bool found;
        uint64_t usec, count;
        char who[256];
        unsigned n_signals;
} Wanted;

static int on_intrusion(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Wanted *w = userdata;
        const char *policy, *kind, *who;
        uint64_t usec, count;
        uint32_t cpu;

        if (sd_bus_message_read(m, "usstts", &cpu, &policy, &kind, &usec, &count, &who) < 0)
                return 0;
        w->n_signals++;
        if (w->found || cpu != w->cpu || !streq(policy, "iso") || !streq(kind, w->kind))
                return 0;
        if (w->who_prefix && strncmp(who, w->who_prefix, strlen(w->who_prefix)) != 0)
                return 0;
        w->found = true;
        w->usec = usec;
        w->count = count;
        snprintf(w->who, sizeof w->who, "%s", who);
        return 0;
}

static void subscribe(Harness *h, Wanted *w, sd_bus_slot **ret_slot) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *b = harness_bus(h);
        int r;

        r = sd_bus_match_signal(
                b, ret_slot, NULL, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "CpuIntrusion", on_intrusion,
                w);
        ck_assert_msg(r >= 0, "AddMatch: %s", strerror(-r));
        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Subscribe", &error,
                NULL, "");
        ck_assert_msg(r >= 0, "Subscribe: %s", strna(error.message));
        sd_bus_error_free(&error);
}

/* Processes the bus until w is found or until usec from now; each loop calls tick (may be NULL). */
static void pump(Harness *h, Wanted *w, uint64_t usec, void (*tick)(Harness *h)) {
        uint64_t deadline = harness_now_usec() + usec;
        sd_bus *b = harness_bus(h);

        while (!w->found && harness_now_usec() < deadline) {
                int r = sd_bus_process(b, NULL);

                ck_assert_msg(r >= 0, "sd_bus_process: %s", strerror(-r));
                if (r > 0)
                        continue;
                if (tick)
                        tick(h);
                (void)sd_bus_wait(b, 100 * USEC_PER_MSEC);
        }
}

/* The value of the sample that starts with prefix in text; -1 when there is none. */
static double sample(const char *text, const char *prefix) {
        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, prefix, strlen(prefix)) == 0)
                        return strtod(p + strlen(prefix), NULL);
        return -1;
}

static char *metrics(Harness *h) {
        char *out = NULL, *err = NULL;
        int r = harness_run_ctl(h, &out, &err, "metrics", NULL);

        ck_assert_msg(r == 0, "affinityctl metrics exited %d: %s", r, err);
        free(err);
        return out;
}

static bool promtool_accepts(Harness *h, const char *text, char **ret_err) {
        _cleanup_free_ char *path = harness_asprintf("%s/metrics.txt", harness_dir(h)), *cmd = NULL;

        harness_write_text(path, text);
        cmd = harness_asprintf("promtool check metrics < '%s' 2>&1", path);
        return harness_run(h, false, ret_err, NULL, ARGS("sh", "-c", cmd)) == 0;
}

START_TEST(test_audit_names_hog) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *prefix = NULL, *m1 = NULL, *m2 = NULL, *sample_prefix = NULL, *lint = NULL,
                            *logline = NULL;
        sd_bus_slot *slot = NULL;
        Wanted w = {.kind = "task"};
        double s1, s2;
        pid_t hog_tid = 0;
        Child *hog;

        w.cpu = setup_policy(h, name, "1s");
        harness_start_daemon(h);
        (void)start_owner(h, name, w.cpu);
        subscribe(h, &w, &slot);
        hog = start_hog(h, w.cpu, &hog_tid);
        prefix = harness_asprintf("spin0[%d]", hog_tid);
        w.who_prefix = prefix;

        pump(h, &w, HARNESS_TIMEOUT_USEC, NULL);
        ck_assert_msg(
                w.found, "no CpuIntrusion names the hog %s on CPU %u (%u signals)", prefix, w.cpu,
                w.n_signals);
        /* It shares the CPU with the owner's spinner for the 1 s pass: some of it is its own. */
        ck_assert_msg(w.usec >= 100 * USEC_PER_MSEC, "the hog ran %" PRIu64 " us in a 1 s pass", w.usec);
        ck_assert_msg(w.usec <= 10 * USEC_PER_SEC, "the hog ran %" PRIu64 " us in a 1 s pass", w.usec);
        logline = harness_asprintf("CPU %u (exclusive to policy \"iso\"): ", w.cpu);
        harness_wait_log(h, logline);
        print_log_lines(h, logline);

        sample_prefix = harness_asprintf(
                "affinityd_cpu_intrusion_seconds_total{cpu=\"%u\",policy=\"iso\",kind=\"task\"} ", w.cpu);
        m1 = metrics(h);
        s1 = sample(m1, sample_prefix);
        ck_assert_msg(s1 > 0, "no %s in:\n%s", sample_prefix, m1);
        ck_assert_msg(!strstr(m1, "pid="), "a PID label in the metrics:\n%s", m1);
        ck_assert_msg(promtool_accepts(h, m1, &lint), "promtool check metrics:\n%s\n%s", lint, m1);
        /* The hog still runs: the next passes add to the total. */
        {
                uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

                do {
                        usleep(200 * 1000);
                        m2 = mfree(m2);
                        m2 = metrics(h);
                        s2 = sample(m2, sample_prefix);
                } while (s2 <= s1 && harness_now_usec() < deadline);
        }
        ck_assert_msg(s2 > s1, "%s stays %f", sample_prefix, s1);

        child_kill(hog);
        sd_bus_slot_unref(slot);
}
END_TEST

/* Traffic that makes the usual IRQs of a VM fire: a synced disk write, a DNS-less UDP send. */
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
                ARGS("sh", "-c", "ping -c 1 -W 1 \"$(ip route | awk '/default/ {print $3; exit}')\""));
}

START_TEST(test_audit_reports_irq) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *prefix = NULL, *path = NULL, *cpu_text = NULL, *m = NULL, *sample_prefix = NULL;
        sd_bus_slot *slot = NULL;
        Wanted w = {.kind = "irq"};
        int r;

        w.cpu = setup_policy(h, name, "1s");
        harness_start_daemon(h);
        (void)start_owner(h, name, w.cpu);
        subscribe(h, &w, &slot);

        prefix = harness_asprintf("IRQ %u (", movable_irq);
        w.who_prefix = prefix;
        path = harness_asprintf("/proc/irq/%u/smp_affinity_list", movable_irq);
        cpu_text = harness_asprintf("%u", w.cpu);
        r = harness_write_knob(path, cpu_text);
        ck_assert_msg(r == 0, "write %s to %s: %s", cpu_text, path, strerror(-r));

        pump(h, &w, HARNESS_TIMEOUT_USEC, make_traffic);
        (void)harness_write_knob(path, movable_original);
        ck_assert_msg(
                w.found, "no CpuIntrusion reports IRQ %u moved onto CPU %u (%u signals)", movable_irq, w.cpu,
                w.n_signals);
        ck_assert_uint_gt(w.count, 0);
        ck_assert_uint_eq(w.usec, 0);

        sample_prefix = harness_asprintf(
                "affinityd_cpu_intrusion_interrupts_total{cpu=\"%u\",policy=\"iso\",kind=\"irq\"} ", w.cpu);
        m = metrics(h);
        ck_assert_msg(
                sample(m, sample_prefix) >= (double)w.count, "no %s >= %" PRIu64 " in:\n%s", sample_prefix,
                w.count, m);
        sd_bus_slot_unref(slot);
}
END_TEST

/* A managed thread moved by hand onto a reserve CPU (no drift-interval: nobody moves it back) is
 * the reserve's intruder, counted under the policy that manages it. */
START_TEST(test_audit_reserve) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *prefix = NULL, *m = NULL, *sample_prefix = NULL;
        sd_bus_slot *slot = NULL;
        Wanted w = {.kind = "reserve"};
        unsigned exclusive;
        pid_t tid = 0;
        cpu_set_t set;

        exclusive = setup_policy(h, name, "1s");
        /* The first online CPU: in the reserve, which is every online CPU but the last. */
        w.cpu = (unsigned)strtoul(harness_online_cpus(), NULL, 10);
        ck_assert_uint_ne(w.cpu, exclusive);
        harness_start_daemon(h);
        (void)start_owner_tid(h, name, exclusive, &tid);
        subscribe(h, &w, &slot);
        CPU_ZERO(&set);
        CPU_SET(w.cpu, &set);
        ck_assert_msg(
                sched_setaffinity(tid, sizeof set, &set) == 0, "sched_setaffinity(%d): %s", (int)tid,
                strerror(errno));
        prefix = harness_asprintf("spin0[%d]", tid);
        w.who_prefix = prefix;

        pump(h, &w, HARNESS_TIMEOUT_USEC, NULL);
        ck_assert_msg(
                w.found, "no CpuIntrusion names the managed thread %s on reserve CPU %u (%u signals)",
                prefix, w.cpu, w.n_signals);
        ck_assert_uint_gt(w.usec, 0);
        sample_prefix = harness_asprintf(
                "affinityd_cpu_intrusion_seconds_total{cpu=\"%u\",policy=\"iso\",kind=\"reserve\"} ", w.cpu);
        m = metrics(h);
        ck_assert_msg(sample(m, sample_prefix) > 0, "no %s in:\n%s", sample_prefix, m);
        sd_bus_slot_unref(slot);
}
END_TEST

/* The CpuIntrusions property: how many entries it has. */
static unsigned n_intrusion_counters(Harness *h) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        unsigned n = 0;
        int r;

        r = sd_bus_get_property(
                harness_bus(h), AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE,
                "CpuIntrusions", &error, &reply, "a(usstt)");
        ck_assert_msg(r >= 0, "Get(CpuIntrusions): %s", strna(error.message));
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(usstt)"), 0);
        while ((r = sd_bus_message_skip(reply, "(usstt)")) > 0)
                n++;
        ck_assert_int_ge(r, 0);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return n;
}

START_TEST(test_audit_off) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *m = NULL;
        sd_bus_slot *slot = NULL;
        Wanted w = {.kind = "task"};
        pid_t hog_tid;
        Child *hog;

        w.cpu = setup_policy(h, name, "off");
        harness_start_daemon(h);
        (void)start_owner(h, name, w.cpu);
        subscribe(h, &w, &slot);
        hog = start_hog(h, w.cpu, &hog_tid);

        /* Three times the interval the other tests use: no pass runs at all. */
        pump(h, &w, 3 * USEC_PER_SEC, NULL);
        ck_assert_msg(w.n_signals == 0, "%u CpuIntrusion signals with effect-interval: off", w.n_signals);
        ck_assert_uint_eq(n_intrusion_counters(h), 0);
        m = metrics(h);
        ck_assert_msg(
                !strstr(m, "affinityd_cpu_intrusion_"), "intrusion metrics with the audit off:\n%s", m);
        ck_assert(!harness_log_contains(h, "(exclusive to policy \"iso\")"));
        child_kill(hog);
        sd_bus_slot_unref(slot);
}
END_TEST

int main(int argc, char **argv) {
        Suite *s = suite_create("integ-audit");
        const char *mode = argc > 1 ? argv[1] : "";
        int r;

        if (streq(mode, "irq")) {
                find_movable_irq();
                if (movable_irq == 0) {
                        printf("SKIP: no IRQ of this machine takes a write of its smp_affinity_list\n");
                        return 77;
                }
                harness_add_test(s, test_audit_reports_irq);
        } else {
                harness_add_test(s, test_audit_names_hog);
                harness_add_test(s, test_audit_off);
                harness_add_test(s, test_audit_reserve);
        }
        r = harness_main(s);
        if (movable_irq > 0) {
                char path[64];

                snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", movable_irq);
                (void)harness_write_knob(path, movable_original);
        }
        return r;
}
