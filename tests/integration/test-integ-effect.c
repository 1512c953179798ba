/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Effect metrics on the real daemon: with effect-interval: 1s, a managed spinning process makes
 * its policy's affinityd_policy_cpu_seconds_total grow, and none of it is foreign while it stays
 * on its CPU; promtool accepts the text. A thread moved off its CPUs adds foreign CPU time. With
 * effect-interval: off the effect counters are not written at all.
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));
        FILE *f = fopen(path, "we");

        ck_assert_msg(f, "open %s: %s", path, strerror(errno));
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* The highest online CPU (OS number), as a cpu-list of one. */
static char *last_online_cpu(void) {
        const char *list = harness_online_cpus(), *p = list + strlen(list);

        while (p > list && p[-1] != ',' && p[-1] != '-')
                p--;
        return harness_asprintf("%s", p);
}

/* The value of the sample NAME{policy="POLICY"} in `affinityctl metrics`, as a double; -1 when
 * the sample is absent. *ret_text: the whole text. */
static double metric(Harness *h, const char *name, const char *policy, char **ret_text) {
        _cleanup_free_ char *out = NULL, *err = NULL, *needle = NULL;
        const char *p;
        int r;

        r = harness_run_ctl(h, &out, &err, "metrics", NULL);
        ck_assert_msg(r == 0, "affinityctl metrics: %d: %s", r, err);
        needle = harness_asprintf("\n%s{policy=\"%s\"} ", name, policy);
        p = strstr(out, needle);
        if (ret_text)
                *ret_text = harness_asprintf("%s", out);
        return p ? strtod(p + strlen(needle), NULL) : -1;
}

/* Starts the daemon with policy spin (cpus: cpu, on-drift: report) and a spinner under it;
 * *ret_tid: its spinning thread. */
static Child *spawn_spin(Harness *h, const char *name, const char *cpu, pid_t *ret_tid) {
        _cleanup_free_ char *line = NULL;
        Child *c;
        int tid = 0;

        harness_write_policy(
                h, "10-spin.yaml",
                "policies:\n"
                "  - name: spin\n"
                "    match: {comm: %s}\n"
                "    cpus: \"%s\"\n"
                "    on-drift: report\n",
                name, cpu);
        harness_start_daemon(h);
        c = harness_spawn(h, &(SpawnOptions){.helper = "integ-spin", .name = name, .pipes = true});
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "ready %d", &tid) == 1, "integ-spin said \"%s\"", line);
        if (ret_tid)
                *ret_tid = tid;
        harness_wait_process_cpus(h, c->pid, cpu, 2);
        harness_wait_listed(h, c->pid, "spin");
        return c;
}

START_TEST(test_effect_cpu_time) {
        Harness *h = harness_new();
        _cleanup_free_ char *cpu = last_online_cpu(), *text = NULL, *path = NULL, *cmd = NULL, *err = NULL;
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        double first, v;
        FILE *f;

        write_settings(h, "effect-interval: 1s\n");
        (void)spawn_spin(h, harness_unique_name(h), cpu, NULL);

        /* The first pass is a baseline; a later one adds the spinner's CPU time. */
        while ((first = metric(h, "affinityd_policy_cpu_seconds_total", "spin", NULL)) <= 0) {
                ck_assert_msg(harness_now_usec() < deadline, "no CPU time counted for policy spin");
                (void)usleep(200000);
        }
        do {
                ck_assert_msg(harness_now_usec() < deadline, "CPU time of policy spin stays at %g", first);
                (void)usleep(200000);
                text = mfree(text);
                v = metric(h, "affinityd_policy_cpu_seconds_total", "spin", &text);
        } while (v <= first);
        ck_assert_msg(
                metric(h, "affinityd_policy_foreign_cpu_seconds_total", "spin", NULL) == 0,
                "foreign CPU time of a placed spinner:\n%s", text);
        ck_assert_msg(
                metric(h, "affinityd_policy_involuntary_switches_total", "spin", NULL) >= 0, "%s", text);

        path = harness_asprintf("%s/metrics.txt", harness_dir(h));
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
        if (harness_run(h, false, NULL, NULL, ARGS("sh", "-c", "command -v promtool >/dev/null")) == 0) {
                cmd = harness_asprintf("promtool check metrics < '%s' 2>&1", path);
                ck_assert_msg(
                        harness_run(h, false, &err, NULL, ARGS("sh", "-c", cmd)) == 0, "promtool: %s", err);
        }
}
END_TEST

/* A thread moved off its CPUs (what `taskset -p` does; on-drift: report leaves it there) runs on
 * a foreign CPU: its policy's foreign CPU time grows. */
START_TEST(test_effect_foreign) {
        Harness *h = harness_new();
        _cleanup_free_ char *cpu = last_online_cpu(),
                            *others = harness_cpus_andnot(harness_online_cpus(), cpu);
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        cpu_set_t set;
        pid_t tid = 0;

        if (others[0] == '\0') {
                printf("one online CPU: no CPU to move a thread to\n");
                exit(77);
        }
        write_settings(h, "effect-interval: 1s\n");
        (void)spawn_spin(h, harness_unique_name(h), cpu, &tid);
        CPU_ZERO(&set);
        CPU_SET((int)strtoul(others, NULL, 10), &set);
        ck_assert_msg(
                sched_setaffinity(tid, sizeof(set), &set) == 0, "sched_setaffinity(%d): %s", (int)tid,
                strerror(errno));
        while (metric(h, "affinityd_policy_foreign_cpu_seconds_total", "spin", NULL) <= 0) {
                ck_assert_msg(
                        harness_now_usec() < deadline,
                        "no foreign CPU time after moving thread %d to CPU %s", (int)tid, others);
                (void)usleep(200000);
        }
}
END_TEST

START_TEST(test_effect_off) {
        Harness *h = harness_new();
        _cleanup_free_ char *cpu = last_online_cpu(), *text = NULL;

        write_settings(h, "effect-interval: off\n");
        (void)spawn_spin(h, harness_unique_name(h), cpu, NULL);
        (void)usleep(1500000); /* a pass would have run at 1s; none is armed */
        ck_assert_msg(metric(h, "affinityd_policy_cpu_seconds_total", "spin", &text) < 0, "%s", text);
        ck_assert_ptr_null(strstr(text, "affinityd_policy_run_delay_seconds_total"));
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-effect");

        harness_add_test(s, test_effect_cpu_time);
        harness_add_test(s, test_effect_foreign);
        harness_add_test(s, test_effect_off);
        return harness_main(s);
}
