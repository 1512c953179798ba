/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Kubernetes on real cgroups, with the real daemon: processes are moved into cgroups named as
 * the kubelet and its runtimes name them (containerd and CRI-O with the systemd cgroup driver,
 * containerd with cgroupfs), on the hierarchy /proc/PID/cgroup reports first here (the unified
 * one) and on the v1 cpuset one, and the kubelet's records are written to /var/log/containers
 * and /var/log/pods as the kubelet writes them. Everything made is removed at the end.
 *  - pod:, namespace: and container: place by those names; a look-alike tree outside
 *    kubepods is not a pod;
 *  - cpus: { within: cpuset } with threads: spread puts each worker on its own CPU of the
 *    container's cpuset, and follows cpuset.cpus when it changes, both ways;
 *  - from a DaemonSet's cgroup namespace: the daemon joins the node's, and within: works;
 *    without CAP_SYS_ADMIN it can't, and pod: still matches through the relative paths.
 * The VM lane checks within: cpuset on cgroup v2 (tests/vm).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define xasprintf harness_asprintf

/* for (const char *x ...): each of the strings given, in order. */
#define FOR_EACH_OF(x, ...) for (const char *const *x##_p = ARGS(__VA_ARGS__), *x; (x = *x##_p); x##_p++)

#define CG          "/sys/fs/cgroup"
#define CPUSET_ROOT CG "/cpuset"
#define V2_ROOT     CG "/unified"

/* The pod UIDs and container IDs of this run (random-looking, fixed; the run's PID in them). */
static char pod_uid[3][40], container_id[3][72];
static bool made_log_containers, made_log_pods;

static char *read_line(const char *path) {
        char buf[256] = "";
        FILE *f = fopen(path, "re");

        ck_assert_msg(f, "open %s: %s", path, strerror(errno));
        ck_assert(fgets(buf, sizeof buf, f));
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
        return xasprintf("%s", buf);
}

/* The pod UID as the systemd driver writes it in a slice name ('-' as '_'). */
static char *uid_underscored(int pod) {
        char *s = xasprintf("%s", pod_uid[pod]);

        for (char *c = s; *c; c++)
                if (*c == '-')
                        *c = '_';
        return s;
}

/* Cgroup paths (from a hierarchy's root) of the containers of this run. */
static char *path_containerd(int pod) { /* containerd, systemd driver, Burstable QoS */
        _cleanup_free_ char *u = uid_underscored(pod);
        return xasprintf(
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
                "cri-containerd-%s.scope",
                u, container_id[pod]);
}

static char *path_crio(int pod) { /* CRI-O, systemd driver, Guaranteed QoS */
        _cleanup_free_ char *u = uid_underscored(pod);
        return xasprintf("/kubepods.slice/kubepods-pod%s.slice/crio-%s.scope", u, container_id[pod]);
}

static char *path_cgroupfs(int pod) { /* containerd, cgroupfs driver, BestEffort QoS */
        return xasprintf("/kubepods/besteffort/pod%s/%s", pod_uid[pod], container_id[pod]);
}

/* mkdir -p of path under a hierarchy; on the cpuset one each new level gets its parent's CPUs
 * and memory nodes (a v1 cpuset cgroup holds no task until both are set). */
static void make_dirs(const char *hierarchy, const char *path) {
        _cleanup_free_ char *copy = xasprintf("%s", path);
        bool cpuset = streq(hierarchy, CPUSET_ROOT);

        for (char *slash = copy + 1;; slash++) {
                bool end = *slash == '\0';

                if (*slash != '/' && !end)
                        continue;
                *slash = '\0';
                _cleanup_free_ char *dir = xasprintf("%s%s", hierarchy, copy);
                ck_assert_msg(
                        mkdir(dir, 0755) >= 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
                if (cpuset) {
                        _cleanup_free_ char *parent = xasprintf("%s", dir), *cpus = NULL, *mems = NULL;

                        *strrchr(parent, '/') = '\0';
                        FOR_EACH_OF(file, "cpuset.mems", "cpuset.cpus") {
                                _cleanup_free_ char *from = xasprintf("%s/%s", parent, file),
                                                    *to = xasprintf("%s/%s", dir, file),
                                                    *value = read_line(from);
                                harness_write_text(to, value);
                        }
                }
                if (end)
                        break;
                *slash = '/';
        }
}

/* Removes path and its ancestors up to the hierarchy's root, those that are empty now. */
static void remove_dirs(const char *hierarchy, const char *path) {
        _cleanup_free_ char *copy = xasprintf("%s", path);
        for (bool leaf = true;; leaf = false) {
                _cleanup_free_ char *dir = xasprintf("%s%s", hierarchy, copy);
                /* A task that just exited may hold the leaf a little longer; an ancestor is busy
                 * only with other cgroups below it, which stay. */
                for (int i = 0; i < (leaf ? 200 : 1) && rmdir(dir) < 0 && errno == EBUSY; i++)
                        usleep(10 * 1000);
                char *slash = strrchr(copy, '/');

                if (!slash || slash == copy)
                        break;
                *slash = '\0';
        }
}

/* The cgroup path on both hierarchies, made, with pid moved into it. */
static void move_to(const char *path, pid_t pid) {
        _cleanup_free_ char *text = xasprintf("%d", (int)pid);

        FOR_EACH_OF(h, V2_ROOT, CPUSET_ROOT) {
                _cleanup_free_ char *procs = xasprintf("%s%s/cgroup.procs", h, path);

                make_dirs(h, path);
                harness_write_text(procs, text);
        }
}

static void set_cpus(const char *path, const char *cpus) {
        _cleanup_free_ char *file = xasprintf("%s%s/cpuset.cpus", CPUSET_ROOT, path);

        harness_write_text(file, cpus);
}

static void remove_cgroup(const char *path) {
        FOR_EACH_OF(h, V2_ROOT, CPUSET_ROOT)
        remove_dirs(h, path);
}

/* The kubelet's records of container pod (pod name, namespace, container name). */
static void write_records(int pod, const char *name, const char *ns, const char *container) {
        _cleanup_free_ char *dir = xasprintf("/var/log/pods/%s_%s_%s", ns, name, pod_uid[pod]),
                            *cdir = xasprintf("%s/%s", dir, container), *log = xasprintf("%s/0.log", cdir),
                            *link = xasprintf(
                                    "/var/log/containers/%s_%s_%s-%s.log", name, ns, container,
                                    container_id[pod]);

        made_log_containers = made_log_containers || (mkdir("/var/log/containers", 0755) >= 0);
        made_log_pods = made_log_pods || (mkdir("/var/log/pods", 0755) >= 0);
        ck_assert_msg(mkdir(dir, 0755) >= 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
        ck_assert_msg(mkdir(cdir, 0755) >= 0 || errno == EEXIST, "mkdir %s: %s", cdir, strerror(errno));
        harness_write_text(log, "");
        (void)unlink(link);
        ck_assert_msg(symlink(log, link) >= 0, "symlink %s: %s", link, strerror(errno));
}

static void remove_records(void) {
        _cleanup_free_ char *cmd = NULL;

        for (int pod = 0; pod < 3; pod++) {
                free(cmd);
                cmd = xasprintf(
                        "rm -rf /var/log/pods/*_%s /var/log/containers/*-%s.log", pod_uid[pod],
                        container_id[pod]);
                (void)system(cmd);
        }
        if (made_log_containers)
                (void)rmdir("/var/log/containers");
        if (made_log_pods)
                (void)rmdir("/var/log/pods");
}

/* Every cgroup and record a test of this run may have made (the tests' own clean-up doesn't
 * run after a failed assertion). */
static void remove_everything(void) {
        _cleanup_free_ char *fake = NULL;

        for (int pod = 0; pod < 3; pod++) {
                _cleanup_free_ char *a = path_containerd(pod), *b = path_crio(pod), *c = path_cgroupfs(pod);

                free(fake);
                fake = xasprintf("/affinityd-integ-kube-%d%s", (int)getpid(), a);
                remove_cgroup(a);
                remove_cgroup(b);
                remove_cgroup(c);
                remove_cgroup(fake);
        }
        made_log_containers = made_log_pods = true; /* removed if empty */
        remove_records();
}

static Child *spawn(Harness *h, unsigned n_threads) {
        _cleanup_free_ char *n = xasprintf("%u", n_threads);
        Child *c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .args = ARGS("-n", n),
                        .initial_cpus = "0-1",
                        .pipes = true,
                });

        free(child_expect_line(c)); /* "ready N" */
        return c;
}

/* A thread of c that names itself name; its TID. */
static pid_t named_thread(Child *c, const char *name) {
        _cleanup_free_ char *line = NULL;
        int tid = 0;

        child_send(c, "rename %s\n", name);
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "renamed %d", &tid) == 1, "unexpected answer: %s", line);
        return (pid_t)tid;
}

/* Waits (bounded) until thread tid of pid has the mask cpus. */
static void wait_thread_cpus(pid_t pid, pid_t tid, const char *cpus) {
        _cleanup_free_ char *now = NULL;

        for (int i = 0; i < 500; i++) {
                free(now);
                now = harness_read_task_cpus(pid, tid);
                if (now && streq(now, cpus))
                        return;
                usleep(10 * 1000);
        }
        ck_abort_msg("thread %d of %d is on %s, not %s", (int)tid, (int)pid, strna(now), cpus);
}

/* pod:, namespace:, container: by the kubelet's records, on the runtimes' cgroup layouts. */
START_TEST(test_kube_names) {
        Harness *h = harness_new();
        _cleanup_free_ char *p0 = path_containerd(0), *p1 = path_crio(1), *p2 = path_cgroupfs(2),
                            *fake = NULL;
        Child *web, *db, *batch, *impostor;

        harness_write_policy(
                h, "10-kube.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {pod: \"web-*\", namespace: shop, container: app}\n"
                "    cpus: \"1\"\n"
                "  - name: db\n"
                "    match: {namespace: shop, container: postgres}\n"
                "    cpus: \"0\"\n"
                "  - name: batch\n"
                "    match: {pod: \"report-*\"}\n"
                "    cpus: \"1\"\n");
        write_records(0, "web-7d9f8", "shop", "app");
        write_records(1, "db-0", "shop", "postgres");
        write_records(2, "report-28391", "jobs", "report");
        web = spawn(h, 1);
        db = spawn(h, 1);
        batch = spawn(h, 1);
        impostor = spawn(h, 1);
        move_to(p0, web->pid);
        move_to(p1, db->pid);
        move_to(p2, batch->pid);
        /* pod 0's IDs in a tree a user could make: not the kubelet's. */
        fake = xasprintf("/affinityd-integ-kube-%d%s", (int)getpid(), p0);
        move_to(fake, impostor->pid);

        harness_start_daemon(h);
        harness_wait_process_cpus(h, web->pid, "1", 2);
        harness_wait_process_cpus(h, db->pid, "0", 2);
        harness_wait_process_cpus(h, batch->pid, "1", 2);
        harness_barrier(h);
        harness_assert_process_cpus_now(impostor->pid, "0-1", 2);

        harness_stop_daemon(h);
        child_kill(web);
        child_kill(db);
        child_kill(batch);
        child_kill(impostor);
        remove_cgroup(p0);
        remove_cgroup(p1);
        remove_cgroup(p2);
        remove_cgroup(fake);
        remove_records();
}
END_TEST

/* within: cpuset and spread: each worker its own CPU of the container's, following cpuset.cpus. */
START_TEST(test_within_cpuset) {
        Harness *h = harness_new();
        _cleanup_free_ char *path = path_crio(1), *first = NULL, *pid_text = NULL, *out = NULL, *err = NULL;
        pid_t w1, w2, logger;
        int r;
        Child *c;

        harness_write_policy(
                h, "10-kube.yaml",
                "policies:\n"
                "  - name: guaranteed\n"
                "    match: {pod: \"db-*\"}\n"
                "    cpus: {within: cpuset}\n"
                "    threads:\n"
                "      - name: \"worker*\"\n"
                "        cpus: spread\n");
        write_records(1, "db-0", "shop", "postgres");
        c = spawn(h, 0);
        move_to(path, c->pid);
        set_cpus(path, "1");
        w1 = named_thread(c, "worker-1");
        w2 = named_thread(c, "worker-2");
        logger = named_thread(c, "logger");

        harness_start_daemon(h);
        /* The cgroup allows CPU 1 only: everything there. */
        wait_thread_cpus(c->pid, w1, "1");
        wait_thread_cpus(c->pid, w2, "1");
        wait_thread_cpus(c->pid, logger, "1");

        /* The kubelet widens the container's cpuset: a worker on each CPU, the rest on both. */
        set_cpus(path, "0-1");
        harness_wait_log(h, "allows CPUs 0-1 now (before: 1)");
        wait_thread_cpus(c->pid, logger, "0-1");
        first = harness_read_task_cpus(c->pid, w1);
        wait_thread_cpus(c->pid, w1, streq(strna(first), "1") ? "1" : "0");
        wait_thread_cpus(c->pid, w2, streq(strna(first), "1") ? "0" : "1");

        /* ... and narrows it to the other CPU. */
        set_cpus(path, "0");
        harness_wait_log(h, "allows CPUs 0 now (before: 0-1)");
        wait_thread_cpus(c->pid, w1, "0");
        wait_thread_cpus(c->pid, w2, "0");
        wait_thread_cpus(c->pid, logger, "0");

        /* Explain shows the process's own set and why. */
        pid_text = xasprintf("%d", (int)c->pid);
        r = harness_run_ctl(h, &out, &err, "explain", pid_text, NULL);
        ck_assert_msg(r == 0, "affinityctl explain exited %d: %s", r, strna(err));
        ck_assert_msg(strstr(out, "within: cpuset: its cgroup allows 0: 0"), "explain says: %s", out);

        harness_stop_daemon(h);
        child_kill(c);
        remove_cgroup(path);
        remove_records();
}
END_TEST

/*
 * A container's first process, exec'd in its cgroup before the kubelet wrote its record: it
 * matches no container: policy then, and is placed when the record appears.
 */
START_TEST(test_first_process) {
        Harness *h = harness_new();
        _cleanup_free_ char *path = path_containerd(1), *script = NULL, *comm_path = NULL;
        char comm[32] = "";
        pid_t pid;

        harness_write_policy(
                h, "10-kube.yaml",
                "policies:\n"
                "  - name: db\n"
                "    match: {container: postgres}\n"
                "    cpus: \"1\"\n");
        FOR_EACH_OF(hierarchy, V2_ROOT, CPUSET_ROOT)
        make_dirs(hierarchy, path);
        harness_start_daemon(h);

        /* Into its cgroup, then exec: as the runtime starts a container. */
        script = xasprintf(
                "echo $$ > %s%s/cgroup.procs && echo $$ > %s%s/cgroup.procs && exec sleep 600", V2_ROOT,
                path, CPUSET_ROOT, path);
        pid = harness_spawn_quick(h, "/bin/sh", ARGS("-c", script), false);
        comm_path = xasprintf("/proc/%d/comm", (int)pid);
        for (int i = 0; i < 500 && !streq(comm, "sleep\n"); i++) {
                FILE *f = fopen(comm_path, "re");

                comm[0] = '\0';
                if (f) {
                        if (!fgets(comm, sizeof comm, f))
                                comm[0] = '\0';
                        fclose(f);
                }
                if (!streq(comm, "sleep\n"))
                        usleep(10 * 1000);
        }
        ck_assert_str_eq(comm, "sleep\n");
        harness_barrier(h); /* its exec was matched: no record, no container name */
        harness_assert_process_cpus_now(pid, "0-1", 1);

        /* The kubelet names the container: placed, without an exec or a rescan. */
        write_records(1, "db-0", "shop", "postgres");
        harness_wait_process_cpus(h, pid, "1", 1);
        harness_wait_listed(h, pid, "db");

        harness_stop_daemon(h);
        (void)kill(pid, SIGKILL);
        (void)harness_reap_quick(h);
        remove_cgroup(path);
        remove_records();
}
END_TEST

/* The daemon in a DaemonSet pod's cgroup and cgroup namespace. */
static void run_in_cgroup_namespace(bool can_join) {
        Harness *h = harness_new();
        _cleanup_free_ char *path = path_crio(1), *ds = path_containerd(0), *v2 = NULL, *v1 = NULL;
        Child *c;

        harness_write_policy(
                h, "10-kube.yaml",
                "policies:\n"
                "  - name: guaranteed\n"
                "    match: {pod: \"db-*\", container: postgres}\n"
                "    cpus: {within: cpuset}\n");
        write_records(1, "db-0", "shop", "postgres");
        c = spawn(h, 1);
        move_to(path, c->pid);
        /* Its cgroup allows both CPUs; the daemon only knows that if it can read the cpuset. */
        set_cpus(path, "0-1");
        make_dirs(V2_ROOT, ds);
        make_dirs(CPUSET_ROOT, ds);
        v2 = xasprintf("%s%s", V2_ROOT, ds);
        v1 = xasprintf("%s%s", CPUSET_ROOT, ds);

        harness_start_daemon_with(
                h,
                &(DaemonOptions){
                        .cgroups = ARGS(v2, v1),
                        .new_cgroup_ns = true,
                        .drop_sys_admin = !can_join,
                });
        if (can_join) {
                harness_wait_log(h, "Joined the node's cgroup namespace");
                /* within: read the cpuset: the narrowing is in its plan, and a change is followed. */
                set_cpus(path, "1");
                harness_wait_log(h, "allows CPUs 1 now (before: 0-1)");
                harness_wait_process_cpus(h, c->pid, "1", 2);
        } else {
                harness_wait_log(h, "could not join the node's");
                /* and /sys/fs/cgroup is the node's, not its namespace's: nothing is looked up
                 * there (a path inside its own subtree would name another cgroup) */
                harness_wait_log(h, "does not list the daemon, though its cgroup path names it");
                /* Matched through the path relative to its namespace: placed on the policy's
                 * CPUs, which the kernel narrows to the cgroup's itself. */
                harness_wait_listed(h, c->pid, "guaranteed");
                ck_assert(!harness_log_contains(h, "allows CPUs"));
        }

        harness_stop_daemon(h);
        child_kill(c);
        remove_cgroup(path);
        remove_cgroup(ds);
        remove_records();
}

START_TEST(test_cgroup_namespace_joined) {
        run_in_cgroup_namespace(true);
}
END_TEST

START_TEST(test_cgroup_namespace_relative) {
        run_in_cgroup_namespace(false);
}
END_TEST

/* Last: removes what a failed test left behind (its own clean-up doesn't run after a failed
 * assertion), and checks that the node is as it was. */
START_TEST(test_nothing_left) {
        remove_everything();
        FOR_EACH_OF(hierarchy, V2_ROOT, CPUSET_ROOT) {
                _cleanup_free_ char *fake =
                        xasprintf("%s/affinityd-integ-kube-%d", hierarchy, (int)getpid());

                ck_assert_msg(access(fake, F_OK) < 0, "%s is left", fake);
                for (int pod = 0; pod < 3; pod++) {
                        _cleanup_free_ char *u = uid_underscored(pod),
                                            *a = xasprintf(
                                                    "%s/kubepods.slice/kubepods-pod%s.slice", hierarchy, u),
                                            *b = xasprintf(
                                                    "%s/kubepods/besteffort/pod%s", hierarchy, pod_uid[pod]);

                        ck_assert_msg(access(a, F_OK) < 0, "%s is left", a);
                        ck_assert_msg(access(b, F_OK) < 0, "%s is left", b);
                }
        }
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-kube");
        unsigned seed = (unsigned)getpid();

        if (access(CPUSET_ROOT "/cpuset.cpus", F_OK) < 0 || access(V2_ROOT "/cgroup.procs", F_OK) < 0) {
                printf("no hybrid cgroup layout (v1 cpuset at %s, cgroup2 at %s): skipping; the VM lane "
                       "covers cgroup v2\n",
                       CPUSET_ROOT, V2_ROOT);
                return 77;
        }
        for (int i = 0; i < 3; i++) {
                snprintf(pod_uid[i], sizeof pod_uid[i], "%08x-1d2e-4f3a-8b4c-%012x", seed, 0x5d6e7f80u + i);
                snprintf(container_id[i], sizeof container_id[i], "%08x%056x", seed, 0xc0ffee00u + i);
        }
        harness_add_test(s, test_kube_names);
        harness_add_test(s, test_within_cpuset);
        harness_add_test(s, test_first_process);
        harness_add_test(s, test_cgroup_namespace_joined);
        harness_add_test(s, test_cgroup_namespace_relative);
        harness_add_test(s, test_nothing_left);
        return harness_main(s);
}
