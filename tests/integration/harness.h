/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The integration suite's harness: runs the real affinityd on a private dbus-daemon against
 * real processes of this machine, and checks placement through /proc/PID/task/TID/status.
 *
 * Every test gets its own directory under one base directory (made by harness_main(), removed
 * when the run ends): the bus configuration and socket, the daemon's config dir
 * (DIR/config/policy.d), the notify socket, copies of the helper programs under unique names
 * (so a policy's comm/exe pattern can never catch an unrelated process) and the logs. Every
 * process the harness starts gets PR_SET_PDEATHSIG(SIGKILL), so a failing test (check's fork
 * mode _exit()s without teardown) leaves nothing running; harness_main() prints the daemon log
 * of every failed test case.
 *
 * Waits are conditions with a deadline (HARNESS_TIMEOUT_USEC): a failure bound, never a
 * timing assertion. Failures are check assertions, so these functions are only for the
 * process running a test.
 *
 * Environment: AFFINITYD_BIN, AFFINITYCTL_BIN, INTEG_HELPER_DIR (set by meson);
 * INTEG_KEEP=1 keeps the directories.
 */

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#define USEC_PER_SEC  1000000ULL
#define USEC_PER_MSEC 1000ULL
/* Failure bound of every wait. */
#define HARNESS_TIMEOUT_USEC (30 * USEC_PER_SEC)

#include "bus-names.h" /* AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, … */

#define NOBODY_UID  65534
#define NOGROUP_GID 65534

typedef struct Harness Harness;

/* A helper program started by harness_spawn(). Owned by the Harness. */
typedef struct Child {
        pid_t pid;
        char *name;    /* the name it was exec'd under: its comm and exe basename */
        char *path;    /* its executable (a copy in the test directory) */
        int stdin_fd;  /* write end of its stdin, or -1 */
        int stdout_fd; /* read end of its stdout, or -1 */
        char buf[8192];
        size_t n_buf;
        bool reaped;
        int status; /* wait status once reaped */
} Child;

typedef struct SpawnOptions {
        const char *helper;       /* integ-threads, integ-prefork, integ-exit */
        const char *name;         /* exec name (comm, exe basename); NULL: a fresh unique one */
        const char *const *args;  /* argv after argv[0], NULL-terminated; may be NULL */
        const char *initial_cpus; /* cpu-list set with sched_setaffinity() before exec; NULL: inherit */
        bool as_nobody;           /* exec as uid nobody / gid nogroup, no supplementary groups */
        bool pipes;               /* connect stdin and stdout to the harness */
} SpawnOptions;

/* The properties of org.affinityd1.Manager, read in one GetAll call (one consistent snapshot). */
typedef struct ManagerProps {
        char *version;
        char *state;
        uint32_t managed_processes;
        uint64_t events_received;
        uint64_t events_lost;
        uint64_t matches_undecided;
        uint64_t rescans;
        uint64_t processes_matched;
        uint64_t processes_placed;
        uint64_t processes_vanished;
        uint64_t placement_failures;
        uint64_t reloads;
        char **policy_files;
        char *last_reload_error;
        uint64_t latency_p50_usec;
        uint64_t latency_p99_usec;
        uint64_t latency_max_usec;
} ManagerProps;

/* One entry of ListProcesses() -> a(usss). */
typedef struct ProcessEntry {
        uint32_t pid;
        char *comm;
        char *policy;
        char *cpus;
} ProcessEntry;

/* One entry of ListPolicies() -> a(ssuss). */
typedef struct PolicyEntry {
        char *name;
        char *file;
        uint32_t line;
        char *cpus;
        char *pending_reason;
} PolicyEntry;

/* One thread of a process as /proc shows it. */
typedef struct TaskInfo {
        pid_t tid;
        char comm[64];
        char cpus[256]; /* Cpus_allowed_list */
} TaskInfo;

/*
 * Runs the suite: checks the preconditions (root, CPUs 0 and 1 online, AFFINITYD_BIN), reads the
 * online CPUs (harness_online_cpus()), makes the base directory, runs every test (check's fork mode), prints
 * the daemon log of each failed test case, removes the base directory. Returns the process exit code (0, 1,
 * or 77 to skip).
 */
int harness_main(Suite *s);

/* Adds test t as a test case of its own, named like the test (which names its directory and the
 * logs printed when it fails), with a generous timeout and a checked teardown that frees the
 * test's harness (harness_free()). */
void harness_add_test(Suite *s, const TTest *t);
/* The same, the test case tagged with tags (space-separated): CK_EXCLUDE_TAGS=TAG leaves it out.
 * The valgrind setup (tests/meson.build) leaves out what can't run under valgrind: "migrate-pages"
 * (migrate_pages(2)), "pidfd" (pidfd_open(2), pidfd_getfd(2)), "own-comm" (the daemon's own
 * comm, which is valgrind's there), "time-share" (unprivileged calls that must fit in the
 * daemon's time share per uid, which a daemon 20-50 times slower overruns). */
void harness_add_test_tagged(Suite *s, const TTest *t, const char *tags);

/* argv tail for SpawnOptions.args and harness_spawn_quick(). */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A new harness with its own directory, named after the running test; call it first in the test
 * (one per test; freed by the teardown of harness_add_test()). Writes the marker policy (see
 * harness_barrier()). No bus yet. */
Harness *harness_new(void);
/* Stops the daemon if it still runs (asserting a clean exit), kills every child, the bus, and
 * removes the directory. Asserts that the runner's own affinity mask is what it was. */
Harness *harness_free(Harness *h);

const char *harness_dir(Harness *h);
const char *harness_config_dir(Harness *h);
const char *harness_bus_address(Harness *h);
/* The cpu-list the harness (and so every child started without initial_cpus, and every process
 * the test forks itself) runs on: what such a process's Cpus_allowed_list is when nobody moved
 * it. Not necessarily every online CPU (the runner may be pinned). */
const char *harness_own_cpus(Harness *h);
pid_t harness_daemon_pid(Harness *h);

/* Starts a private dbus-daemon (allow-all policy, any user may connect, EXTERNAL auth). */
void harness_start_bus(Harness *h);

/* How harness_start_bus_with() configures the private dbus-daemon. */
typedef struct BusOptions {
        /*
         * NULL: the allow-all policy of harness_start_bus(). Else the path of a bus policy file
         * (e.g. systemd/org.affinityd1.conf) that the configuration <include>s after a default
         * context which lets any user connect, own and send anything: the included file's rules
         * come later and so decide about everything they name (dbus-daemon applies the rules of
         * a context in order, the last match wins; user contexts after the default one).
         */
        const char *include_policy;
} BusOptions;
/* Starts the private dbus-daemon with options (before harness_start_daemon*(), which then uses
 * it). Fails the test if dbus-daemon refuses the configuration (e.g. a bad included file). */
void harness_start_bus_with(Harness *h, const BusOptions *o);

/* The harness's own client connection (root) to the private bus; NULL before the daemon ran. */
sd_bus *harness_bus(Harness *h);

/* How harness_start_daemon_with() runs affinityd. */
typedef struct DaemonOptions {
        bool no_bus;             /* --bus=none instead of --bus-address (no bus started for it) */
        const char *const *args; /* more arguments (ARGS(...)), after the harness's own; may be NULL */
        bool drop_net_admin;     /* drop CAP_NET_ADMIN from the bounding set before exec */
        bool drop_sys_admin;     /* likewise CAP_SYS_ADMIN (no setns(2): no joining the node's
                                  * cgroup namespace) */
        /* NULL-terminated cgroup directories (/sys/fs/cgroup/...) the daemon is moved into
         * before exec, in order; may be NULL */
        const char *const *cgroups;
        bool new_cgroup_ns; /* then a cgroup namespace of its own (unshare(2) CLONE_NEWCGROUP),
                             * rooted at the cgroups it is in: a DaemonSet's container */
} DaemonOptions;
/*
 * Starts affinityd (--bus-address, --config-dir, --log-level=debug) with NOTIFY_SOCKET at a
 * socket of the harness; waits for READY=1 and for org.affinityd1 to have an owner; connects
 * the harness's client. Starts the bus first if needed.
 */
void harness_start_daemon(Harness *h);
/* The same with options. May be called again after harness_stop_daemon() (a restart: the log
 * file and the notify socket are kept, so READY=1 counts go on). With no_bus, returns once
 * READY=1 came. */
void harness_start_daemon_with(Harness *h, const DaemonOptions *o);
/* SIGTERM; asserts that the daemon sent STOPPING=1 and exited with status 0. */
void harness_stop_daemon(Harness *h);
/* SIGKILLs the daemon (a crash: nothing of its exit path runs) and reaps it. May be followed by
 * harness_start_daemon_with() (a restart). */
void harness_kill_daemon(Harness *h);
/* Kills the private dbus-daemon and waits (bounded) for affinityd to exit; returns its wait
 * status. The daemon is then gone: teardown doesn't stop it. */
int harness_kill_bus(Harness *h);
/* Asserts that the daemon process is still running. */
void harness_assert_daemon_alive(Harness *h);

/* Number of READY=1 / RELOADING=1 notifications received so far (reads pending ones). */
unsigned harness_ready_count(Harness *h);
unsigned harness_reloading_count(Harness *h);
/* Sends SIGHUP and waits for the READY=1 that ends the reload (asserting a RELOADING=1 came). */
void harness_sighup_reload(Harness *h);
/* Only sends SIGHUP; returns the READY=1 count that will mean the reload is over. */
unsigned harness_sighup(Harness *h);
/* Waits until count READY=1 notifications have come in total. */
void harness_wait_ready(Harness *h, unsigned count);

/*
 * A barrier through the daemon's event queue: starts a marker process (exec'd on CPU 1 under a
 * name that only the policy "integ-marker" of policy.d/00-integ-marker.yaml, which harness_new()
 * writes, matches: CPU 0) and waits until the daemon has placed it (with a bus: until it is
 * listed, so its placement pass is complete and it counts as placed, not vanished). The daemon handles proc
 * events in order, so everything before the marker's exec has been handled by then. Each
 * barrier is one more matched (and placed) process; harness_n_barriers() counts them.
 */
void harness_barrier(Harness *h);
unsigned harness_n_barriers(Harness *h);

/* Writes DIR/config/policy.d/FILENAME (printf format). Returns the full path (owned by h). */
const char *harness_write_policy(Harness *h, const char *filename, const char *format, ...)
        __attribute__((__format__(printf, 3, 4)));
void harness_remove_policy(Harness *h, const char *filename);
/* Writes path (printf format) as the kubelet writes its checkpoints: to a hidden temporary file
 * of the same directory, renamed over path. Returns path (owned by h). */
const char *harness_write_file_renamed(Harness *h, const char *path, const char *format, ...)
        __attribute__((__format__(printf, 3, 4)));

/* A fresh name "at" + 8 random [a-z0-9], unique per call (owned by h). */
const char *harness_unique_name(Harness *h);
/* Copies helper program HELPER to DIR/bin/NAME (mode 0755) once; returns the path (owned by h). */
const char *harness_install(Harness *h, const char *helper, const char *name);

/* Starts a helper program. */
Child *harness_spawn(Harness *h, const SpawnOptions *o);
/* Starts integ-threads under name (NULL: a fresh one) with n_threads threads besides the main
 * one, on initial_cpus (NULL: inherited), and waits for its "ready" line. */
Child *harness_spawn_threads(Harness *h, const char *name, unsigned n_threads, const char *initial_cpus);
/* Writes text to path (created 0644, or truncated) in one write(2): a cgroup file, a settings
 * file. Asserts that open, write and close succeed. */
void harness_write_text(const char *path, const char *text);
/*
 * Lightweight start for bursts: fork + exec path (argv[0] = path, then args) with nothing
 * connected. reap: wait for it right away; otherwise it stays a zombie (its /proc/PID/comm
 * stays readable) until harness_reap_quick(). Returns the PID.
 */
pid_t harness_spawn_quick(Harness *h, const char *path, const char *const *args, bool reap);
/* Reaps every quick child not reaped yet. Returns how many exited with status 0. */
unsigned harness_reap_quick(Harness *h);

/* Writes a line (printf format; newline added) to the child's stdin. */
void child_send(Child *c, const char *format, ...) __attribute__((__format__(printf, 2, 3)));
/* Reads the next line of the child's stdout (newline stripped; caller frees); fails the test on
 * EOF or after the deadline. */
char *child_expect_line(Child *c);
/* Closes the child's stdin (integ-threads and integ-prefork exit on EOF). */
void child_close_stdin(Child *c);
/* Waits for the child to exit and reaps it; returns the wait status. */
int child_wait(Child *c);
/* SIGKILLs and reaps the child. */
void child_kill(Child *c);

/* Reads Name and Cpus_allowed_list of every thread of pid. Returns the count, or -errno
 * (-ENOENT: gone). *ret is malloc()ed. */
int harness_read_tasks(pid_t pid, TaskInfo **ret);
/* Cpus_allowed_list of one thread, newly allocated; NULL if it's gone. */
char *harness_read_task_cpus(pid_t pid, pid_t tid);

/*
 * Waits until every thread of pid has Cpus_allowed_list cpus and there are at least min_threads
 * of them; fails the test (listing the threads) after the deadline.
 */
void harness_wait_process_cpus(Harness *h, pid_t pid, const char *cpus, unsigned min_threads);
/*
 * Same, but threads whose name matches the fnmatch(3) glob must have cpus_match and the others
 * cpus_other; at least min_threads threads and at least one matching the glob.
 */
void harness_wait_process_cpus_by_name(
        Harness *h, pid_t pid, const char *glob, const char *cpus_match, const char *cpus_other,
        unsigned min_threads);
/* Asserts, now, that every thread of pid has Cpus_allowed_list cpus (and at least min_threads). */
void harness_assert_process_cpus_now(pid_t pid, const char *cpus, unsigned min_threads);

/* True if the daemon's log (DIR/affinityd.log, kept across restarts) holds needle now. */
bool harness_log_contains(Harness *h, const char *needle);
/* Waits until the daemon's log holds needle. */
void harness_wait_log(Harness *h, const char *needle);
/* Waits until /proc/PID/comm is comm. */
void harness_wait_comm(Harness *h, pid_t pid, const char *comm);

/*
 * SIGSTOPs the daemon and waits until it is stopped: the kernel queues its proc events in its
 * socket meanwhile (see harness_daemon_proc_connector_fd()). harness_resume_daemon() sends
 * SIGCONT.
 */
void harness_pause_daemon(Harness *h);
void harness_resume_daemon(Harness *h);
/* The state letter of /proc/PID/stat (R, S, Z, T, ...), '\0' if gone. */
char harness_proc_state(pid_t pid);
/*
 * A duplicate in the test process (pidfd_getfd(2)) of the daemon's proc connector socket: the
 * same socket, so what the test reads from it the daemon never sees (events lost without an
 * ENOBUFS), and its receive buffer can be shrunk to provoke ENOBUFS. The caller closes it.
 */
int harness_daemon_proc_connector_fd(Harness *h);

/* Reads every property at once (GetAll); fails the test if one of the contract's is missing. */
void harness_get_props(Harness *h, ManagerProps *ret);
void manager_props_done(ManagerProps *p);
/*
 * Waits until the daemon is idle by its counters: ProcessesPlaced + ProcessesVanished ==
 * ProcessesMatched, and ProcessesMatched >= min_matched unless (baseline non-NULL) EventsLost
 * grew past baseline's, when no count can be promised. Fills *ret with that snapshot.
 */
void harness_wait_counters_settled(
        Harness *h, uint64_t min_matched, const ManagerProps *baseline, ManagerProps *ret);

/* ListProcesses(); returns the count, *ret malloc()ed. */
size_t harness_list_processes(Harness *h, ProcessEntry **ret);
void process_entries_free(ProcessEntry *e, size_t n);
const ProcessEntry *process_entries_find(const ProcessEntry *e, size_t n, pid_t pid);
/* ListPolicies(); returns the count, *ret malloc()ed. */
size_t harness_list_policies(Harness *h, PolicyEntry **ret);
void policy_entries_free(PolicyEntry *e, size_t n);
/* Waits until ListProcesses() shows pid under policy. */
void harness_wait_listed(Harness *h, pid_t pid, const char *policy);

/* Calls Reload() as root. Returns 0, or the negative errno of the error; the D-Bus error goes to
 * *error (sd_bus_error_free() it). */
int harness_reload(Harness *h, sd_bus_error *error);

/*
 * In a forked child that switches to uid/gid nobody, connects to the private bus, and calls
 * member on the manager: "Reload" (a method) or "State" (a property read). Returns 0 on
 * success (and the property value in *ret_value if non-NULL), or -1 with the D-Bus error name
 * in *ret_error_name (both newly allocated).
 */
int harness_call_as_nobody(Harness *h, const char *member, char **ret_value, char **ret_error_name);

/* Runs AFFINITYCTL_BIN --bus-address=ADDRESS ARGS... (NULL-terminated). Returns its exit
 * status (128+N for signal N); stdout and stderr into *ret_out / *ret_err when non-NULL. */
int harness_run_ctl(Harness *h, char **ret_out, char **ret_err, ...) __attribute__((__sentinel__));

/*
 * Runs argv[0] (a path, or a name looked up in PATH) with argv, stdin /dev/null, killed with
 * the test (PR_SET_PDEATHSIG). as_nobody: through `setpriv --reuid=nobody --regid=nogroup
 * --clear-groups --pdeathsig=KILL`, i.e. as uid 65534 / gid 65534 without supplementary
 * groups. Returns its exit status (128+N for signal N); stdout and stderr into *ret_out /
 * *ret_err when non-NULL. Fails the test after the deadline.
 */
/* CLOCK_MONOTONIC in µs (for polling deadlines; tests never assert on time). */
uint64_t harness_now_usec(void);

/* Runs argv (no shell, searched in PATH) without a Harness, e.g. `ip link del` in main()'s
 * cleanup. Returns its exit status, 128+N for a signal, or -errno of fork/wait. Output is
 * dropped. */
int harness_run_quiet(const char *const *argv);

int harness_run(Harness *h, bool as_nobody, char **ret_out, char **ret_err, const char *const *argv);

/*
 * The online CPUs of the machine, a canonical cpu-list ("0-1" on a 2-CPU machine, "0-63", "0-3,8")
 * read from /sys/devices/system/cpu/online once, by harness_main() before the first test: the
 * same string throughout the run, also while a test has taken a CPU offline. It is what "all
 * CPUs" means to the daemon — OnlineCPUs, and the set every selector starts from, as long as the
 * run's cgroup cpuset allows every online CPU. Fails the test if the file can't be read.
 */
const char *harness_online_cpus(void);
/* The CPUs of cpu-list a that are not in cpu-list b, a canonical cpu-list ("" when none), newly
 * allocated: e.g. harness_cpus_andnot(harness_online_cpus(), "1") is what is online once CPU 1
 * goes offline. Fails the test if a or b is not a cpu-list of CPUs < CPU_SETSIZE. */
char *harness_cpus_andnot(const char *a, const char *b);
/* Whether every CPU of cpu-list a is in cpu-list b ("" is a subset of anything). Fails the test
 * if a or b is not a cpu-list of CPUs < CPU_SETSIZE. */
bool harness_cpus_subset(const char *a, const char *b);

/* String helpers for tests. harness_asprintf(): asprintf(3) into a new string; fails the test
 * when out of memory. */
char *harness_asprintf(const char *format, ...) __attribute__((__format__(printf, 1, 2)));
/* String helpers for tests. */
bool strv_contains_suffix(char *const *l, const char *suffix);

/* ---- IRQs and CPU-lists for the tests that move an IRQ ---- */

/* The last CPU of a canonical cpu-list ("0-1" -> 1, "0-3,8" -> 8). */
unsigned harness_last_cpu(const char *list);
/* Writes text to path (a /proc or /sys knob) in one write(2): 0 or -errno. */
int harness_write_knob(const char *path, const char *text);
/*
 * The busiest IRQ (total count of /proc/interrupts) whose /proc/irq/N/smp_affinity_list takes a
 * write of its own value: returns N and its cpu-list in original (size bytes), or 0 when no IRQ
 * here is movable.
 */
unsigned harness_find_movable_irq(char *original, size_t size);
