/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Placement of real processes by the real daemon: a process started after READY=1, one
 * started before the daemon (initial scan), threads created later and a thread renaming
 * itself, and a pre-forking server whose workers never exec.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "harness.h"
#include "json-reader.h"
#include "macro.h"

/* Reads the "ready N" line of integ-threads. */
static void expect_ready(Child *c, unsigned n) {
        _cleanup_free_ char *line = child_expect_line(c);
        char want[32];

        snprintf(want, sizeof want, "ready %u", n);
        ck_assert_str_eq(line, want);
}

/* 1: a process started after READY=1, matched by comm: every thread gets the policy's cpus. */
START_TEST(test_comm_after_ready) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h), *other = harness_unique_name(h);
        ProcessEntry *e = NULL;
        ManagerProps p = {};
        const char *file;
        Child *c, *bystander;
        size_t n;

        file = harness_write_policy(
                h, "50-comm.yaml",
                "policies:\n"
                "  - name: by-comm\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);

        /* Started on CPU 0 only, so the policy's CPU 1 can't be there by accident. */
        bystander = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = other,
                        .args = ARGS("-n", "2"),
                        .initial_cpus = "0",
                        .pipes = true});
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "3"),
                        .initial_cpus = "0",
                        .pipes = true});
        expect_ready(bystander, 2);
        expect_ready(c, 3);

        harness_wait_process_cpus(h, c->pid, "1", 4);
        /* The bystander exec'd first: by now its exec was handled, and it stays where it was. */
        harness_assert_process_cpus_now(bystander->pid, "0", 3);

        harness_wait_listed(h, c->pid, "by-comm");
        n = harness_list_processes(h, &e);
        ck_assert_msg(!process_entries_find(e, n, bystander->pid), "the unmatched bystander is listed");
        process_entries_free(e, n);

        harness_get_props(h, &p);
        ck_assert_str_eq(p.version, PACKAGE_VERSION);
        ck_assert_str_eq(p.state, "running");
        ck_assert_str_eq(p.last_reload_error, "");
        ck_assert_msg(
                strv_contains_suffix(p.policy_files, "/policy.d/50-comm.yaml"),
                "PolicyFiles does not list %s", file);
        ck_assert_uint_ge(p.managed_processes, 1);
        ck_assert_uint_ge(p.processes_matched, 1);
        ck_assert_uint_ge(p.events_received, 1);
        ck_assert_uint_eq(p.placement_failures, 0);
        manager_props_done(&p);
}
END_TEST

/* 2: processes already running when the daemon starts are placed by the initial scan, before
 * READY=1 (READY=1 comes "after the first full placement"). */
START_TEST(test_started_before_daemon) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h), *other = harness_unique_name(h);
        Child *c1, *c2, *bystander;

        harness_write_policy(
                h, "50-early.yaml",
                "policies:\n"
                "  - name: early\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                name);

        c1 = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "4"),
                        .initial_cpus = "0",
                        .pipes = true});
        c2 = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "1"),
                        .initial_cpus = "0-1",
                        .pipes = true});
        bystander = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = other,
                        .args = ARGS("-n", "1"),
                        .initial_cpus = "0",
                        .pipes = true});
        expect_ready(c1, 4);
        expect_ready(c2, 1);
        expect_ready(bystander, 1);
        harness_assert_process_cpus_now(c1->pid, "0", 5);

        harness_start_daemon(h); /* returns once READY=1 came */

        harness_assert_process_cpus_now(c1->pid, "1", 5);
        harness_assert_process_cpus_now(c2->pid, "1", 2);
        harness_assert_process_cpus_now(bystander->pid, "0", 2);
        harness_wait_listed(h, c1->pid, "early");
        harness_wait_listed(h, c2->pid, "early");

        /* Threads created after the scan are placed too. */
        child_send(c1, "spawn 2");
        free(child_expect_line(c1));
        harness_wait_process_cpus(h, c1->pid, "1", 7);
}
END_TEST

/*
 * 3: a multi-threaded process: all threads placed, including threads created afterwards by a
 * thread whose own mask differs (so they don't simply inherit the right mask), and a thread that
 * renames itself after creation gets its thread rule's cpus.
 */
START_TEST(test_threads) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *line = NULL, *tid_cpus = NULL;
        char worker[16], before[64], after[64];
        int tid, k, pos = 0;
        unsigned n_new = 0;
        Child *c;

        /* a per-test thread name, so a stale thread could never pass for this one */
        snprintf(worker, sizeof worker, "wk%s", name + 2);

        harness_write_policy(
                h, "50-threads.yaml",
                "policies:\n"
                "  - name: threaded\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n"
                "    threads:\n"
                "      - name: \"wk*\"\n"
                "        cpus: \"0\"\n",
                name);
        harness_start_daemon(h);

        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "4"),
                        .initial_cpus = "0-1",
                        .pipes = true});
        expect_ready(c, 4);
        harness_wait_process_cpus(h, c->pid, "1", 5);

        /* More threads from the (placed) main thread. */
        child_send(c, "spawn 3");
        free(child_expect_line(c));
        harness_wait_process_cpus(h, c->pid, "1", 8);

        /* More threads from a thread that moved itself to CPU 0 after the daemon handled its
         * creation (barrier): they inherit {0}, and the daemon must put them on the policy's
         * CPU 1 explicitly. The creator exits afterwards. */
        child_send(c, "creator");
        free(child_expect_line(c));
        harness_barrier(h);
        child_send(c, "go 3 0");
        line = child_expect_line(c);
        ck_assert_msg(
                sscanf(line, "spawnedpinned %63s %63s%n", before, after, &pos) == 2, "bad answer \"%s\"",
                line);
        ck_assert_msg(streq(before, "1"), "the creator thread was not placed on CPU 1: %s", line);
        ck_assert_msg(streq(after, "0"), "the creator thread could not move itself to CPU 0: %s", line);
        harness_wait_process_cpus(h, c->pid, "1", 11);
        for (const char *p = line + pos; sscanf(p, " %d%n", &tid, &k) == 1; p += k) {
                _cleanup_free_ char *cpus = harness_read_task_cpus(c->pid, tid);
                ck_assert_msg(
                        cpus && streq(cpus, "1"), "thread %d created on CPU 0 is on %s", tid, strna(cpus));
                n_new++;
        }
        ck_assert_uint_eq(n_new, 3);
        line = mfree(line);

        /* A thread that renames itself after creation gets the thread rule's CPU 0; all others
         * stay on 1. */
        child_send(c, "rename %s", worker);
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "renamed %d", &tid) == 1, "bad answer \"%s\"", line);
        harness_wait_process_cpus_by_name(h, c->pid, "wk*", "0", "1", 12);
        tid_cpus = harness_read_task_cpus(c->pid, tid);
        ck_assert_msg(tid_cpus && streq(tid_cpus, "0"), "renamed thread %d is on %s", tid, strna(tid_cpus));
}
END_TEST

typedef struct Worker {
        pid_t pid;
        bool from_thread;
} Worker;

/* Reads "worker PID main|thread MASK" lines until terminator; appends to *w. */
static void read_workers(Child *c, const char *terminator, Worker **w, size_t *n) {
        for (;;) {
                _cleanup_free_ char *line = child_expect_line(c);
                char from[16], mask[64];
                int pid;
                Worker *t;

                if (streq(line, terminator))
                        return;
                ck_assert_msg(
                        sscanf(line, "worker %d %15s %63s", &pid, from, mask) == 3, "bad line \"%s\"", line);
                if (streq(from, "thread"))
                        ck_assert_msg(
                                streq(mask, "0"), "worker %d was forked by a thread on %s, not on CPU 0",
                                pid, mask);
                t = realloc(*w, (*n + 1) * sizeof **w);
                ck_assert(t);
                *w = t;
                (*w)[(*n)++] = (Worker){.pid = pid, .from_thread = streq(from, "thread")};
        }
}

/* Lets a new forking thread of the server move itself to CPU 0 once the daemon handled its
 * creation, and fork k workers from there. */
static void fork_from_thread(Harness *h, Child *c, unsigned k, Worker **w, size_t *n) {
        _cleanup_free_ char *line = NULL;

        child_send(c, "thread");
        line = child_expect_line(c);
        ck_assert_msg(strncmp(line, "thread ", 7) == 0, "bad answer \"%s\"", line);
        harness_barrier(h);
        child_send(c, "fork-thread %u 0", k);
        read_workers(c, "done", w, n);
}

/* 4: a pre-forking server: workers forked without exec, some by a thread whose own mask is
 * CPU 0, are tracked under the parent's policy and placed on its CPU 1. */
START_TEST(test_prefork) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ Worker *w = NULL;
        _cleanup_free_ char *main_cpus = NULL;
        size_t n = 0, n_thread = 0;
        ProcessEntry *e = NULL;
        size_t n_e;
        Child *c;

        harness_write_policy(
                h, "50-prefork.yaml",
                "policies:\n"
                "  - name: prefork\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);

        /* Workers forked at once after exec, maybe before the server itself is placed. */
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-prefork",
                        .name = name,
                        .args = ARGS("-m", "3"),
                        .initial_cpus = "0-1",
                        .pipes = true});
        read_workers(c, "ready", &w, &n);
        fork_from_thread(h, c, 3, &w, &n);
        child_send(c, "fork-main 2");
        read_workers(c, "done", &w, &n);
        fork_from_thread(h, c, 2, &w, &n);
        ck_assert_uint_eq(n, 10);

        for (size_t i = 0; i < n; i++) {
                harness_wait_process_cpus(h, w[i].pid, "1", 1);
                harness_wait_listed(h, w[i].pid, "prefork");
                n_thread += w[i].from_thread;
        }
        ck_assert_uint_eq(n_thread, 5);

        /* The server itself: its main thread is on the policy's CPU (the forking threads moved
         * themselves, and nothing says the daemon must notice that). */
        main_cpus = harness_read_task_cpus(c->pid, c->pid);
        ck_assert_msg(main_cpus && streq(main_cpus, "1"), "server main thread on %s", strna(main_cpus));
        harness_wait_listed(h, c->pid, "prefork");

        n_e = harness_list_processes(h, &e);
        for (size_t i = 0; i < n; i++) {
                const ProcessEntry *f = process_entries_find(e, n_e, w[i].pid);
                ck_assert_msg(f, "worker %d not in ListProcesses", (int)w[i].pid);
                ck_assert_str_eq(f->comm, name);
                ck_assert_str_eq(f->cpus, "1");
        }
        process_entries_free(e, n_e);
}
END_TEST

/*
 * The spread order of policy name as affinityctl plan --json gives it for the harness's
 * configuration on this machine ("processes_spread", or a thread rule's "spread" with
 * thread >= 0), as CPU numbers, and its CPUs into ret_cpus; the count. Derived from this machine's topology,
 * as the daemon plans it.
 */
static size_t plan_order(
        Harness *h, const char *name, int thread, unsigned order[static 256], char ret_cpus[static 64]) {
        _cleanup_free_ char *out = NULL, *err = NULL;
        _cleanup_free_ char *cdir = harness_asprintf("--config-dir=%s", harness_config_dir(h));
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *policies, *a = NULL;
        int r;

        r = harness_run_ctl(h, &out, &err, "plan", "--json", cdir, NULL);
        ck_assert_msg(r == 0, "affinityctl plan --json exited %d: %s", r, err);
        doc = json_parse_document(out);
        policies = jarray(doc, "policies");
        for (size_t i = 0; i < policies->n_items; i++)
                if (streq(jstr(policies->items[i], "name"), name)) {
                        a = thread < 0
                                ? jarray(policies->items[i], "processes_spread")
                                : jarray(jarray(policies->items[i], "threads")->items[thread], "spread");
                        snprintf(ret_cpus, 64, "%s", jstr(policies->items[i], "cpus"));
                }
        ck_assert_msg(a, "no policy %s in the plan", name);
        ck_assert_uint_ge(a->n_items, 1);
        ck_assert_uint_le(a->n_items, 256);
        for (size_t i = 0; i < a->n_items; i++)
                order[i] = (unsigned)a->items[i]->number;
        return a->n_items;
}

/* "7": one CPU as a cpu-list, in buf. */
static const char *cpu_str(unsigned cpu, char buf[static 16]) {
        snprintf(buf, 16, "%u", cpu);
        return buf;
}

/* Waits until every thread of pid is on CPU cpu. */
static void wait_on_cpu(Harness *h, pid_t pid, unsigned cpu) {
        char l[16];

        harness_wait_process_cpus(h, pid, cpu_str(cpu, l), 1);
}

/*
 * 4c: processes: spread. A pre-fork server with two workers per CPU: the server (the master)
 * holds no slot and keeps every CPU of the policy; the k-th worker gets the k-th CPU of the
 * plan's order (one per core first), round robin past its end, so every CPU has two workers.
 * A killed worker's replacement takes the CPU it freed, and a restarted daemon moves no worker;
 * all killed and forked again ("after a crash"), one per CPU again. Without processes: spread a spread rule
 * on the workers' name puts every worker on the order's first CPU: per process, each process's first thread
 * has slot 0.
 */
START_TEST(test_prefork_spread) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ Worker *w = NULL, *again = NULL;
        _cleanup_free_ char *main_cpus = NULL;
        char cpus[64], l[16];
        unsigned order[256];
        size_t n = 0, n_again = 0, n_order;
        Child *c;

        harness_write_policy(
                h, "50-prefork.yaml",
                "policies:\n"
                "  - name: prefork\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: {}\n"
                "    processes: spread\n",
                name);
        n_order = plan_order(h, "prefork", -1, order, cpus);
        harness_start_daemon(h);

        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-prefork", .name = name, .args = ARGS("-m", "0"), .pipes = true});
        read_workers(c, "ready", &w, &n);
        harness_wait_listed(h, c->pid, "prefork");
        child_send(c, "fork-main %zu", 2 * n_order);
        read_workers(c, "done", &w, &n);
        ck_assert_uint_eq(n, 2 * n_order);
        for (size_t i = 0; i < n; i++) {
                wait_on_cpu(h, w[i].pid, order[i % n_order]);
                harness_wait_listed(h, w[i].pid, "prefork");
        }
        /* The master: every CPU of the policy (not the first slot it had before it forked). */
        harness_barrier(h);
        main_cpus = harness_read_task_cpus(c->pid, c->pid);
        ck_assert_msg(main_cpus && streq(main_cpus, cpus), "master on %s, not %s", strna(main_cpus), cpus);
        /* Explain says which slot a worker holds, and that the master holds none. */
        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *out = NULL, *err = NULL, *pid = NULL, *want = NULL;

                pid = harness_asprintf("%d", i == 0 ? (int)c->pid : (int)w[n - 1].pid);
                ck_assert_int_eq(harness_run_ctl(h, &out, &err, "explain", pid, NULL), 0);
                want = i == 0
                        ? harness_asprintf("processes: spread: a pre-fork master")
                        : harness_asprintf(
                                  "processes: spread: slot %zu (%zu of the policy's processes hold one)",
                                  n - 1, n);
                ck_assert_msg(strstr(out, want), "explain %s: no \"%s\" in:\n%s", pid, want, out);
        }

        /* A worker dies: its replacement takes its slot, the others stay. */
        ck_assert_int_eq(kill(w[1].pid, SIGKILL), 0);
        harness_barrier(h);
        child_send(c, "fork-main 1");
        read_workers(c, "done", &again, &n_again);
        ck_assert_uint_eq(n_again, 1);
        wait_on_cpu(h, again[0].pid, order[1 % n_order]);
        for (size_t i = 0; i < n; i++)
                if (i != 1)
                        harness_assert_process_cpus_now(w[i].pid, cpu_str(order[i % n_order], l), 1);

        /* A restarted daemon finds them in PID order, the replacement last: each keeps its CPU
         * (the slot that stands for it), not the next slot of the order. */
        harness_stop_daemon(h);
        harness_start_daemon(h);
        harness_barrier(h);
        for (size_t i = 0; i < n; i++)
                if (i != 1)
                        harness_assert_process_cpus_now(w[i].pid, cpu_str(order[i % n_order], l), 1);
        harness_assert_process_cpus_now(again[0].pid, cpu_str(order[1 % n_order], l), 1);

        /* Every worker killed ("a crash") and forked again: one per CPU again. */
        for (size_t i = 0; i < n; i++)
                if (i != 1)
                        ck_assert_int_eq(kill(w[i].pid, SIGKILL), 0);
        ck_assert_int_eq(kill(again[0].pid, SIGKILL), 0);
        harness_barrier(h);
        n_again = 0;
        child_send(c, "fork-main %zu", n_order);
        read_workers(c, "done", &again, &n_again);
        for (size_t i = 0; i < n_again; i++)
                wait_on_cpu(h, again[i].pid, order[i]);
}
END_TEST

/*
 * 4d: spread-over: policy. One spread thread in each of two processes: with the policy's slots
 * they get the first two CPUs of the order (two distinct CPUs where there are two), where each
 * process's own slots would put both on the first.
 */
START_TEST(test_spread_over_policy) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h), *worker = harness_unique_name(h);
        char cpus[64], l[16];
        unsigned order[256];
        size_t n_order;
        Child *c[2];
        int tid[2];

        harness_write_policy(
                h, "50-pool.yaml",
                "policies:\n"
                "  - name: pool\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: {}\n"
                "    threads:\n"
                "      - name: \"%s\"\n"
                "        cpus: spread\n"
                "        spread-over: policy\n",
                name, worker);
        n_order = plan_order(h, "pool", 0, order, cpus);
        harness_start_daemon(h);

        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *line = NULL;

                c[i] = harness_spawn_threads(h, name, 0, NULL);
                harness_wait_listed(h, c[i]->pid, "pool");
                child_send(c[i], "rename %s", worker);
                line = child_expect_line(c[i]);
                ck_assert_msg(sscanf(line, "renamed %d", &tid[i]) == 1, "bad answer \"%s\"", line);
                harness_wait_process_cpus_by_name(
                        h, c[i]->pid, worker, cpu_str(order[i % n_order], l), cpus, 2);
        }
        if (n_order > 1)
                ck_assert_uint_ne(order[0], order[1]);
}
END_TEST

/* Asserts that every worker is on cpus and listed under policy with comm. */
static void assert_workers(
        Harness *h, const Worker *w, size_t n, const char *cpus, const char *policy, const char *comm) {
        ProcessEntry *e = NULL;
        size_t n_e = harness_list_processes(h, &e);

        for (size_t i = 0; i < n; i++) {
                const ProcessEntry *f = process_entries_find(e, n_e, w[i].pid);

                harness_assert_process_cpus_now(w[i].pid, cpus, 1);
                ck_assert_msg(f, "worker %d not in ListProcesses", (int)w[i].pid);
                ck_assert_str_eq(f->policy, policy);
                ck_assert_str_eq(f->comm, comm);
        }
        process_entries_free(e, n_e);
}

/*
 * 4b: a pre-forking server started before the daemon, whose workers renamed themselves (so they
 * don't match by comm): the startup scan tracks them under the server's policy, as a FORK event
 * would have; so does the scan of a restarted daemon (a new CPU list proves it placed them). A
 * child of the server that exec'd another program is not a worker and is left alone.
 */
START_TEST(test_prefork_before_daemon) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h), *wname = harness_unique_name(h);
        _cleanup_free_ Worker *w = NULL;
        _cleanup_free_ char *line = NULL;
        ProcessEntry *e = NULL;
        size_t n = 0, n_e;
        int execd = 0;
        Child *c;

        harness_write_policy(
                h, "50-prefork.yaml",
                "policies:\n"
                "  - name: prefork\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                name);
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-prefork",
                        .name = name,
                        .args = ARGS("-m", "4", "-r", wname, "-e"),
                        .initial_cpus = "0-1",
                        .pipes = true});
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "execd %d", &execd) == 1, "bad line \"%s\"", line);
        read_workers(c, "ready", &w, &n);
        ck_assert_uint_eq(n, 4);
        for (size_t i = 0; i < n; i++)
                harness_wait_comm(h, w[i].pid, wname);
        harness_wait_comm(h, execd, "sleep");

        harness_start_daemon(h); /* READY=1 comes after the scan placed everything */
        harness_assert_process_cpus_now(c->pid, "1", 1);
        assert_workers(h, w, n, "1", "prefork", wname);
        harness_assert_process_cpus_now(execd, "0-1", 1);
        n_e = harness_list_processes(h, &e);
        ck_assert_msg(!process_entries_find(e, n_e, execd), "the exec'd child %d is tracked", execd);
        process_entries_free(e, n_e);

        /* A restart with another CPU list: the new instance's scan finds them all again. */
        harness_stop_daemon(h);
        harness_write_policy(
                h, "50-prefork.yaml",
                "policies:\n"
                "  - name: prefork\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"0\"\n",
                name);
        harness_start_daemon(h);
        harness_assert_process_cpus_now(c->pid, "0", 1);
        assert_workers(h, w, n, "0", "prefork", wname);
        harness_assert_process_cpus_now(execd, "0-1", 1);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-place");

        harness_add_test(s, test_comm_after_ready);
        harness_add_test(s, test_started_before_daemon);
        harness_add_test(s, test_threads);
        harness_add_test(s, test_prefork);
        harness_add_test(s, test_prefork_before_daemon);
        harness_add_test(s, test_prefork_spread);
        harness_add_test(s, test_spread_over_policy);
        return harness_main(s);
}
