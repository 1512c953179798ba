/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * bench-affinityd: the placement benchmark of docs/performance.md. It runs the real affinityd
 * (AFFINITYD_BIN or --daemon) on a private dbus-daemon with one policy, "bench", that matches
 * only a copy of bench-probe installed under a unique name and asks for CPU 1; the probes are
 * started on CPU 0. Everything it starts dies with it (PR_SET_PDEATHSIG), and it restores what
 * it changes (its own affinity, pid_max, RLIMIT_NPROC).
 *
 *   bench-affinityd [OPTIONS] [MEASUREMENT...]
 *
 * Measurements (default: all of them, in this order):
 *   idle       the daemon idle for --idle-seconds (default 60), next to bench-listener (a bare
 *              proc connector listener): the daemon's voluntary + involuntary context switches
 *              (/proc/PID/task/TID/status) and timeslices (/proc/PID/task/TID/schedstat, field
 *              3), the proc events it received meanwhile from other processes of the machine,
 *              the listener's wakeups for the same events, and how many of the daemon's timerfds
 *              are armed (/proc/PID/fdinfo: it_value not zero).
 *   rate:N     --count (default 2000) probes exec'd at N per second. Each probe reports how long
 *              after the start of its own main() it first saw its affinity mask be { 1 }: 0 when
 *              the daemon placed it before main() ran. Reported: the share placed before main(),
 *              p50/p99/max of the unplaced window (probes never placed within --bound-ms count
 *              as infinite), the count never placed; the daemon's own PlacementLatency*
 *              properties (proc event timestamp → last thread set); its CPU time per exec (the
 *              fork, exec and exit events of a probe; /proc/PID/task/TID/schedstat field 1 in ns,
 *              and /proc/PID/stat utime + stime) and per event received; with --perf, perf
 *              stat's task-clock; with --callgrind, instructions per exec (callgrind_control -z
 *              before, -d after the load).
 *   floor:N    the same load with bench-listener instead of the daemon: what receiving the
 *              events costs on this machine before any placement work (probes exit at once).
 *   placer:N   the same load as rate:N with the minimal placer (bench-listener COMM CPU: proc
 *              connector, comm, sched_setaffinity(2)) instead of the daemon, the probes waiting
 *              to be placed: the reference for the daemon's CPU per exec (its CPU, and the bus
 *              daemon's, against the placer's), unplaced window and share placed before main().
 *   rss        --processes (default 10000) matching sleeping probes: VmRSS, VmHWM and
 *              smaps_rollup's Pss of the daemon before and once ManagedProcesses reached them.
 *   startup    with those processes already running (put back on CPU 0 first), a new daemon:
 *              time from exec to READY=1 and its "Ready: placed N processes ... in X ms" line,
 *              and its memory afterwards; then (put back again) the minimal scan, bench-scan,
 *              from fork() to exit, the reference. Runs after rss (shares its processes).
 *   reload     with those processes running and managed, --startup-runs SIGHUPs to one daemon:
 *              time from the signal to its READY=1 (load, plan, remap and the /proc rescan of a
 *              reload) and the daemon's CPU time meanwhile (schedstat). Not part of "all".
 *   threads:N  N threads in processes of 1,000 (bench-probe threads) running, a new daemon: time
 *              from exec to READY=1 and its memory after the settle pass. Not part of "all".
 *   "all" = idle rate:200 rate:1000 rate:5000 floor:200 floor:1000 floor:5000 placer:1000 rss
 *   startup.
 *
 * Options: --daemon=PATH --probe=PATH --listener=PATH (default: AFFINITYD_BIN,
 *   AFFINITYD_BENCH_PROBE, AFFINITYD_BENCH_LISTENER, else next to this program; bench-scan is
 *   AFFINITYD_BENCH_SCAN, else next to this program) --count=N
 *   --processes=N --idle-seconds=S --bound-ms=MS --match=comm|exe|cmdline (the policy's match
 *   key; default comm) --perf --callgrind --perf-record=FILE (perf record -g of the daemon
 *   during each rate run, FILE.RATE) --keep (keep the work directory and the daemon logs)
 *   --state-dir=DIR (the daemon's --state-dir, e.g. on a tmpfs; default: its own)
 *   --startup-runs=N (default 5) --attempts=N (default 3: a rate or floor run in which more than 5% of
 *   the events came from other processes of the machine is run again, and the least disturbed
 *   run is reported) --quick (count 500, processes 2000, idle 10 s, 2 startup runs: a
 *   smoke run) --hostile=N (during rate runs, N loops as nobody start shells with 1.5 MiB command
 *   lines of "foo" while a first policy has cmdline: "foo.*bar" (--hostile-regex=RE another, ""
 *   none: the loops' own cost to the machine; a RE given on the command line matches the
 *   benchmark itself and the shell that started it, whose children are then tracked: write it so
 *   that its own text does not match, such as foo.*ba[r]; --hostile-cpu=N keeps the loops on
 *   CPU N, as any user may, so that what they cost the machine and what the daemon's matching
 *   costs can be told apart): what any user can do to the matcher; one attempt)
 *   --bus-flood=N (during rate runs, N D-Bus clients as nobody alternate Explain of a process of
 *   --flood-threads threads, default 2000, with ListProcesses: what any user can ask of the
 *   daemon; one attempt)
 *   --policies=N (default 1: "bench" alone) loads N policies: N-1 before "bench" in file order
 *   (policy.d/45-extra.yaml), so that the probe's match is the last one: each a distinct literal
 *   comm: except one in 200, a glob with a literal prefix ("xyz100*"), and one (the middle one) with
 *   only a cmdline: regex that matches nothing (tried on every exec: it has no comm:). None of
 *   them matches the probe or, by their names, anything else. For the cost per exec at scale:
 *   compare rate:N with --policies=2000 against the default.
 *
 * This is a measurement, not a test: it asserts nothing about time; it exits non-zero only when
 * it could not measure (daemon failed to start, ...).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bench-probe.h"
#include "bus-names.h"
#include "macro.h"

#define NSEC_PER_SEC  INT64_C(1000000000)
#define NSEC_PER_MSEC INT64_C(1000000)
#define NSEC_PER_USEC INT64_C(1000)
#define TIMEOUT_NS    (120 * NSEC_PER_SEC) /* failure bound of every wait */

extern char **environ;

typedef struct Options {
        const char *daemon;
        const char *probe;
        const char *listener;
        const char *scan;
        unsigned count;
        unsigned processes;
        unsigned idle_seconds;
        unsigned startup_runs;
        unsigned attempts;
        unsigned bound_ms;
        const char *match;
        bool perf;
        bool callgrind;
        const char *perf_record;
        bool keep;
        const char *state_dir; /* the daemon's --state-dir; NULL: its default */
        unsigned hostile;
        const char *hostile_regex;
        int hostile_cpu; /* -1: any */
        unsigned bus_flood;
        unsigned flood_threads;
        unsigned policies; /* policies loaded, "bench" last */
} Options;

static Options arg = {
        .count = 2000,
        .processes = 10000,
        .idle_seconds = 60,
        .startup_runs = 5,
        .attempts = 3,
        .bound_ms = 1000,
        .match = "comm",
        .hostile_regex = "foo.*bar",
        .hostile_cpu = -1,
        .flood_threads = 2000,
        .policies = 1,
};

/* Everything the benchmark started, for the cleanup on any exit. */
static struct {
        char *dir;
        char *probe_path;
        char *probe_name;
        char *config_dir;
        pid_t bus_pid;
        char *bus_address;
        pid_t daemon_pid;
        int notify_fd;
        unsigned n_ready;
        sd_bus *bus;
        char *daemon_log;
        unsigned n_runs;
        pid_t *sleepers;
        size_t n_sleepers;
        pid_t sleeper_pgid;
        pid_t threads_pgid; /* threads:N's processes, while they run */
        long saved_pid_max; /* > 0: restore this */
        struct rlimit saved_nproc;
        bool nproc_changed;
        cpu_set_t saved_mask;
        bool mask_changed;
        bool in_child; /* a spawner process: die() only exits */
} B = {.notify_fd = -EBADF};

/* The numbers for the summary table. */
typedef struct RateResult {
        unsigned rate;
        double achieved_rate;
        unsigned n, n_reports, n_before_main, n_never, n_errors;
        int64_t p50_ns, p99_ns, max_ns;        /* unplaced window; INT64_MAX: never placed */
        int64_t main_p50_ns;                   /* posix_spawn → main() */
        uint64_t d_p50_us, d_p99_us, d_max_us; /* daemon's PlacementLatency* */
        double cpu_ns_per_exec;                /* schedstat */
        double cpu_stat_ns_per_exec;           /* /proc/PID/stat utime + stime */
        double cpu_ns_per_event;
        double bus_ns_per_exec;  /* the bus daemon's CPU (schedstat) over the same load */
        double perf_ns_per_exec; /* perf stat task-clock, < 0 if not measured */
        double ir_per_exec;      /* callgrind, < 0 if not measured */
        uint64_t events, lost, matched, placed, vanished, failures;
        double foreign_share; /* of events, from other processes of the machine */
} RateResult;

/* The median, least and greatest of a few runs' values. */
typedef struct RunStats {
        double median, min, max;
} RunStats;

typedef struct MemSample {
        uint64_t rss_kb, hwm_kb, pss_kb, anon_kb, private_kb;
} MemSample;

static struct {
        bool idle_done, rss_done, startup_done, reload_done;
        double idle_seconds;
        uint64_t idle_wakeups, idle_ctxt, idle_slices, idle_events;
        MemSample mem0, mem_n, mem_startup;
        unsigned mem_n_processes, startup_processes;
        double startup_ready_ms, startup_ready_min_ms, startup_ready_max_ms;
        double startup_scan_ms; /* the minimal scan's median, fork -> exit (0: not run) */
        double restart_ms;      /* a daemon started over the last one's records, exec -> READY=1 */
        bool threads_done;
        unsigned threads_n;
        double threads_ready_ms;
        MemSample mem_threads;
        unsigned startup_runs;
        long startup_log_ms;
        unsigned reload_processes, reload_runs;
        RunStats reload_ms, reload_cpu_ms;
        unsigned startup_log_placed;
        RateResult rates[8];
        size_t n_rates;
        struct {
                unsigned rate;
                double ns_per_exec, ns_per_event, foreign_share;
        } floors[8];
        size_t n_floors;
        RateResult placers[8]; /* the minimal placer under rate:N (placer:N) */
        size_t n_placers;
        uint64_t idle_listener_wakeups, idle_listener_events;
        unsigned idle_timerfds, idle_timerfds_armed;
} R;

/* ---- small utilities ---- */

static int64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_ns(int64_t ns) {
        struct timespec ts = {.tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC};

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void cleanup(void);

static int safe_close(int fd) {
        if (fd >= 0)
                close(fd);
        return -EBADF;
}

_printf_(1, 2) _Noreturn static void die(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        fputs("bench-affinityd: ", stderr);
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
        va_end(ap);
        if (B.in_child)
                _exit(EXIT_FAILURE); /* a spawner: the benchmark itself cleans up */
        if (B.daemon_log)
                fprintf(stderr, "bench-affinityd: daemon log: %s\n", B.daemon_log);
        arg.keep = true;
        cleanup();
        exit(EXIT_FAILURE);
}

_printf_(1, 2) static char *xasprintf(const char *format, ...) {
        va_list ap;
        char *s = NULL;

        va_start(ap, format);
        if (vasprintf(&s, format, ap) < 0)
                die("out of memory");
        va_end(ap);
        return s;
}

/* The whole file, NUL-terminated (malloc()ed), or NULL with errno set. */
static char *read_text(const char *path) {
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0, cap = 4096;
        char *buf = malloc(cap);

        if (!buf)
                return NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                free(buf);
                return NULL;
        }
        for (;;) {
                ssize_t k;

                if (n + 1 >= cap) {
                        char *t = realloc(buf, cap * 2);
                        if (!t) {
                                free(buf);
                                errno = ENOMEM;
                                return NULL;
                        }
                        buf = t;
                        cap *= 2;
                }
                k = read(fd, buf + n, cap - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        free(buf);
                        return NULL;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        buf[n] = '\0';
        return buf;
}

static void write_text(const char *path, const char *text) {
        _cleanup_close_ int fd = -EBADF;
        size_t n = strlen(text);

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, text, n) != (ssize_t)n)
                die("can't write %s: %m", path);
}

/* The number after "Key:" in a /proc status-like text, or 0. */
static uint64_t field_u64(const char *text, const char *key) {
        size_t k = strlen(key);

        for (const char *p = text; p && *p;) {
                if (strncmp(p, key, k) == 0 && p[k] == ':')
                        return strtoull(p + k + 1, NULL, 10);
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)remove(path);
        return 0;
}

/* ---- what the kernel says about the daemon ---- */

typedef struct ProcSample {
        uint64_t exec_ns;    /* Σ schedstat field 1 over threads: time on CPU, ns */
        uint64_t slices;     /* Σ schedstat field 3: timeslices run */
        uint64_t ctxt;       /* Σ voluntary + nonvoluntary context switches */
        uint64_t wakeups;    /* Σ voluntary context switches: each one is a sleep, ended by a wakeup */
        uint64_t stat_ticks; /* utime + stime of /proc/PID/stat (whole process), clock ticks */
        unsigned threads;
} ProcSample;

static int sample_proc(pid_t pid, ProcSample *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *stat = NULL;
        ProcSample s = {};
        char path[128];
        struct dirent *de;
        const char *p;

        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        stat = read_text(path);
        if (!stat)
                return -errno;
        p = strrchr(stat, ')');
        if (p) {
                unsigned long long utime = 0, stime = 0;
                /* Fields 3.. after the comm: state(3) ... utime(14) stime(15). */
                if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) ==
                    2)
                        s.stat_ticks = utime + stime;
        }

        snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                _cleanup_free_ char *ss = NULL, *st = NULL;
                unsigned long long run = 0, wait = 0, slices = 0;
                char tpath[384];

                if (de->d_name[0] == '.')
                        continue;
                snprintf(tpath, sizeof tpath, "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
                ss = read_text(tpath);
                if (ss && sscanf(ss, "%llu %llu %llu", &run, &wait, &slices) == 3) {
                        s.exec_ns += run;
                        s.slices += slices;
                }
                snprintf(tpath, sizeof tpath, "/proc/%d/task/%s/status", (int)pid, de->d_name);
                st = read_text(tpath);
                if (st) {
                        s.wakeups += field_u64(st, "voluntary_ctxt_switches");
                        s.ctxt += field_u64(st, "voluntary_ctxt_switches") +
                                field_u64(st, "nonvoluntary_ctxt_switches");
                }
                s.threads++;
        }
        *ret = s;
        return 0;
}

static void sample_mem(pid_t pid, MemSample *ret) {
        _cleanup_free_ char *status = NULL, *rollup = NULL;
        char path[128];

        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
        status = read_text(path);
        snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
        rollup = read_text(path);
        if (!status || !rollup)
                die("can't read the memory of the daemon (%d): %m", (int)pid);
        /* smaps_rollup's first line is the address range; its fields follow. */
        *ret = (MemSample){
                .rss_kb = field_u64(status, "VmRSS"),
                .hwm_kb = field_u64(status, "VmHWM"),
                .anon_kb = field_u64(status, "RssAnon"),
                .pss_kb = field_u64(strchr(rollup, '\n') ?: rollup, "Pss"),
                .private_kb = field_u64(rollup, "Private_Clean") + field_u64(rollup, "Private_Dirty"),
        };
}

/* ---- children ---- */

/* In a child between fork() and exec(): die with the benchmark, output to log. */
static void child_setup(pid_t parent, const char *log) {
        int fd;

        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(125);
        fd = open(log ?: "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                _exit(126);
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
                _exit(126);
}

static void kill_wait(pid_t *pid, int sig) {
        if (*pid <= 0)
                return;
        (void)kill(*pid, sig);
        (void)waitpid(*pid, NULL, 0);
        *pid = 0;
}

static void kill_sleepers(void) {
        if (B.sleeper_pgid > 0)
                (void)kill(-B.sleeper_pgid, SIGKILL);
        if (B.threads_pgid > 0)
                (void)kill(-B.threads_pgid, SIGKILL);
        for (size_t i = 0; i < B.n_sleepers; i++)
                (void)kill(B.sleepers[i], SIGKILL);
        for (size_t i = 0; i < B.n_sleepers; i++)
                (void)waitpid(B.sleepers[i], NULL, 0);
        B.sleepers = mfree(B.sleepers);
        B.n_sleepers = 0;
        B.sleeper_pgid = 0;
}

static void restore_limits(void) {
        if (B.saved_pid_max > 0) {
                char buf[32];
                _cleanup_close_ int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
                snprintf(buf, sizeof buf, "%ld\n", B.saved_pid_max);
                if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
                        fprintf(stderr, "bench-affinityd: can't restore kernel.pid_max=%ld: %m\n",
                                B.saved_pid_max);
                B.saved_pid_max = 0;
        }
        if (B.nproc_changed) {
                (void)setrlimit(RLIMIT_NPROC, &B.saved_nproc);
                B.nproc_changed = false;
        }
        if (B.mask_changed) {
                (void)sched_setaffinity(0, sizeof B.saved_mask, &B.saved_mask);
                B.mask_changed = false;
        }
}

static void stop_daemon(void);

static void cleanup(void) {
        kill_sleepers();
        if (B.daemon_pid > 0)
                stop_daemon();
        B.bus = sd_bus_flush_close_unref(B.bus);
        kill_wait(&B.bus_pid, SIGTERM);
        restore_limits();
        if (B.dir) {
                if (arg.keep)
                        fprintf(stderr, "bench-affinityd: kept %s\n", B.dir);
                else
                        (void)nftw(B.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
                B.dir = mfree(B.dir);
        }
}

static void on_signal(int sig) {
        /* Children die with us (PR_SET_PDEATHSIG); put back what we changed. */
        if (B.saved_pid_max > 0 || B.nproc_changed || B.mask_changed)
                restore_limits();
        signal(sig, SIG_DFL);
        raise(sig);
}

/* Pins the calling thread (the benchmark is single-threaded) to CPU cpu, or back. */
static void pin_self(int cpu) {
        cpu_set_t s;

        if (cpu < 0) {
                if (B.mask_changed && sched_setaffinity(0, sizeof B.saved_mask, &B.saved_mask) < 0)
                        die("sched_setaffinity: %m");
                B.mask_changed = false;
                return;
        }
        if (!B.mask_changed && sched_getaffinity(0, sizeof B.saved_mask, &B.saved_mask) < 0)
                die("sched_getaffinity: %m");
        CPU_ZERO(&s);
        CPU_SET(cpu, &s);
        if (sched_setaffinity(0, sizeof s, &s) < 0)
                die("can't pin the benchmark to CPU %d: %m", cpu);
        B.mask_changed = true;
}

/* ---- the bus and the daemon ---- */

static void start_bus(void) {
        _cleanup_free_ char *conf = NULL, *conf_path = NULL, *sock_dir = NULL, *log = NULL;
        _cleanup_free_ char *arg_conf = NULL;
        _cleanup_close_ int rfd = -EBADF;
        pid_t parent = getpid();
        char addr[1024];
        size_t n = 0;
        int p[2];

        sock_dir = xasprintf("%s/bus", B.dir);
        if (mkdir(sock_dir, 0755) < 0)
                die("mkdir %s: %m", sock_dir);
        conf = xasprintf(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig>\n"
                "  <type>session</type>\n"
                "  <listen>unix:dir=%s</listen>\n"
                "  <auth>EXTERNAL</auth>\n"
                "  <policy context=\"default\">\n"
                "    <allow user=\"*\"/>\n"
                "    <allow send_destination=\"*\"/>\n"
                "    <allow receive_sender=\"*\"/>\n"
                "    <allow own=\"*\"/>\n"
                "  </policy>\n"
                "</busconfig>\n",
                sock_dir);
        conf_path = xasprintf("%s/bus.conf", B.dir);
        write_text(conf_path, conf);
        log = xasprintf("%s/dbus.log", B.dir);
        arg_conf = xasprintf("--config-file=%s", conf_path);

        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe: %m");
        rfd = p[0];
        B.bus_pid = fork();
        if (B.bus_pid < 0)
                die("fork: %m");
        if (B.bus_pid == 0) {
                child_setup(parent, log);
                if (dup2(p[1], 3) < 0)
                        _exit(126);
                execlp("dbus-daemon", "dbus-daemon", arg_conf, "--print-address=3", "--nofork",
                       "--nopidfile", (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        while (!memchr(addr, '\n', n)) {
                ssize_t k = read(rfd, addr + n, sizeof addr - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        die("dbus-daemon printed no address; see %s", log);
                n += (size_t)k;
                if (n >= sizeof addr - 1)
                        die("dbus-daemon address too long");
        }
        addr[strcspn(addr, "\n")] = '\0';
        B.bus_address = xasprintf("%s", addr);
}

static void drain_notify(void) {
        for (;;) {
                char buf[4097];
                ssize_t n = recv(B.notify_fd, buf, sizeof buf - 1, MSG_DONTWAIT);

                if (n < 0)
                        return;
                buf[n] = '\0';
                for (char *line = buf, *next; line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        if (streq(line, "READY=1"))
                                B.n_ready++;
                }
        }
}

static bool daemon_alive(void) {
        int status;

        if (B.daemon_pid <= 0)
                return false;
        if (waitpid(B.daemon_pid, &status, WNOHANG) == B.daemon_pid) {
                B.daemon_pid = 0;
                return false;
        }
        return true;
}

/* How the --policies extras are made: policy i (0-based, before "bench"). */
#define EXTRA_GLOB_EVERY 200 /* one in this many is a prefixed glob */
#define EXTRA_CMDLINE_RE "^affinityd-bench-no-such-program( |$)"

static bool extra_is_cmdline(unsigned i) {
        return i == (arg.policies - 1) / 2;
}

static bool extra_is_glob(unsigned i) {
        return !extra_is_cmdline(i) && i % EXTRA_GLOB_EVERY == EXTRA_GLOB_EVERY / 2;
}

/* --policies: the N-1 policies before "bench", in policy.d/45-extra.yaml. */
static void write_extra_policies(void) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t size = 0;
        FILE *f;

        if (arg.policies <= 1)
                return;
        f = open_memstream(&text, &size);
        if (!f)
                die("out of memory");
        fprintf(f,
                "# --policies=%u: before \"bench\", matching neither the probe nor anything else.\n"
                "policies:\n",
                arg.policies);
        for (unsigned i = 0; i + 1 < arg.policies; i++) {
                fprintf(f, "  - name: extra-%u\n    match:\n", i);
                if (extra_is_cmdline(i))
                        fprintf(f, "      cmdline: \"%s\"\n", EXTRA_CMDLINE_RE);
                else if (extra_is_glob(i))
                        fprintf(f, "      comm: \"xyz%u*\"\n", i);
                else
                        fprintf(f, "      comm: \"afbx%05u\"\n", i);
                fprintf(f, "    cpus: \"0\"\n");
        }
        if (fclose(f) != 0)
                die("out of memory");
        path = xasprintf("%s/policy.d/45-extra.yaml", B.config_dir);
        write_text(path, text);
}

/* Waits, until deadline (CLOCK_MONOTONIC ns), for the daemon's READY=1 number n + 1 since
 * B.n_ready was last reset; what says when ("before READY=1", "during a reload") if it dies. */
static void wait_ready(unsigned n, int64_t deadline, const char *what) {
        while (B.n_ready <= n) {
                struct pollfd p = {.fd = B.notify_fd, .events = POLLIN};

                if (!daemon_alive())
                        die("affinityd exited %s; see %s", what, B.daemon_log);
                if (now_ns() > deadline)
                        die("affinityd sent no READY=1 within %" PRId64 " s (%s)", TIMEOUT_NS / NSEC_PER_SEC,
                            what);
                if (poll(&p, 1, 100) > 0)
                        drain_notify();
        }
}

static void write_policy(void) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *key = arg.match, *value = B.probe_name;
        _cleanup_free_ char *v = NULL;

        if (streq(key, "exe"))
                value = v = xasprintf("*/%s", B.probe_name);
        else if (streq(key, "cmdline"))
                value = v = xasprintf("%s (place|sleep)", B.probe_name);
        else if (!streq(key, "comm"))
                die("--match: expected comm, exe or cmdline, got \"%s\"", key);
        if (arg.hostile > 0 && *arg.hostile_regex) {
                _cleanup_free_ char *hpath = xasprintf("%s/policy.d/40-hostile.yaml", B.config_dir),
                                    *htext = xasprintf(
                                            "# --hostile: a regex tried on every exec, before \"bench\".\n"
                                            "policies:\n"
                                            "  - name: hostile\n"
                                            "    match:\n"
                                            "      cmdline: \"%s\"\n"
                                            "    cpus: \"0\"\n",
                                            arg.hostile_regex);

                write_text(hpath, htext);
        }
        write_extra_policies();
        path = xasprintf("%s/policy.d/50-bench.yaml", B.config_dir);
        text = xasprintf(
                "# The benchmark's policy: only the probe (a unique name) matches; CPU 1.\n"
                "policies:\n"
                "  - name: bench\n"
                "    match:\n"
                "      %s: \"%s\"\n"
                "    cpus: \"1\"\n",
                key, value);
        write_text(path, text);
}

/*
 * Starts affinityd (under callgrind with --callgrind) with NOTIFY_SOCKET, waits for READY=1 and
 * connects to the bus. Returns the time from fork() to READY=1 in ns.
 */
static int64_t start_daemon(const char *run_name) {
        _cleanup_free_ char *notify_path = NULL, *arg_bus = NULL, *arg_conf = NULL, *cg_out = NULL,
                            *arg_state = NULL;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        pid_t parent = getpid();
        int64_t t0;
        int r;

        if (B.bus_pid == 0)
                start_bus();
        B.n_runs++;
        free(B.daemon_log);
        B.daemon_log = xasprintf("%s/affinityd-%02u-%s.log", B.dir, B.n_runs, run_name);

        notify_path = xasprintf("%s/notify", B.dir);
        if (B.notify_fd < 0) {
                if (strlen(notify_path) >= sizeof sa.sun_path)
                        die("%s: path too long", notify_path);
                strcpy(sa.sun_path, notify_path);
                B.notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (B.notify_fd < 0 || bind(B.notify_fd, (struct sockaddr *)&sa, sizeof sa) < 0)
                        die("notify socket %s: %m", notify_path);
        }
        drain_notify();
        B.n_ready = 0;

        arg_bus = xasprintf("--bus-address=%s", B.bus_address);
        arg_conf = xasprintf("--config-dir=%s", B.config_dir);
        arg_state =
                arg.state_dir ? xasprintf("--state-dir=%s", arg.state_dir) : xasprintf("--log-level=info");
        cg_out = xasprintf("--callgrind-out-file=%s/callgrind.out.%02u", B.dir, B.n_runs);

        t0 = now_ns();
        B.daemon_pid = fork();
        if (B.daemon_pid < 0)
                die("fork: %m");
        if (B.daemon_pid == 0) {
                child_setup(parent, B.daemon_log);
                (void)unsetenv("JOURNAL_STREAM");
                (void)unsetenv("WATCHDOG_USEC");
                (void)unsetenv("WATCHDOG_PID");
                (void)setenv("NOTIFY_SOCKET", notify_path, 1);
                if (arg.callgrind)
                        execlp("valgrind", "valgrind", "--tool=callgrind", cg_out, "--dump-instr=no",
                               arg.daemon, arg_bus, arg_conf, arg_state, "--log-level=info", (char *)NULL);
                else
                        execl(arg.daemon, arg.daemon, arg_bus, arg_conf, arg_state, "--log-level=info",
                              (char *)NULL);
                _exit(127);
        }

        wait_ready(0, t0 + TIMEOUT_NS, "before READY=1");
        t0 = now_ns() - t0;

        if (!B.bus) {
                r = sd_bus_new(&B.bus);
                if (r >= 0)
                        r = sd_bus_set_address(B.bus, B.bus_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(B.bus, true);
                if (r >= 0)
                        r = sd_bus_start(B.bus);
                if (r < 0)
                        die("can't connect to the private bus: %s", strerror(-r));
        }
        return t0;
}

static void stop_daemon(void) {
        int64_t deadline = now_ns() + TIMEOUT_NS;
        int status = 0;

        if (B.daemon_pid <= 0)
                return;
        (void)kill(B.daemon_pid, SIGTERM);
        while (waitpid(B.daemon_pid, &status, WNOHANG) == 0) {
                if (now_ns() > deadline) {
                        fprintf(stderr, "bench-affinityd: affinityd did not exit on SIGTERM, killing it\n");
                        kill_wait(&B.daemon_pid, SIGKILL);
                        return;
                }
                sleep_ns(10 * NSEC_PER_MSEC);
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fprintf(stderr, "bench-affinityd: affinityd exited with status 0x%x; see %s\n",
                        (unsigned)status, B.daemon_log);
        B.daemon_pid = 0;
}

typedef struct Props {
        uint32_t managed;
        uint64_t events, lost, rescans, matched, placed, vanished, failures;
        uint64_t p50_us, p99_us, max_us;
} Props;

static void get_props(Props *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        static const struct {
                const char *name;
                size_t offset;
        } table[] = {
                {"EventsReceived", offsetof(Props, events)},
                {"EventsLost", offsetof(Props, lost)},
                {"Rescans", offsetof(Props, rescans)},
                {"ProcessesMatched", offsetof(Props, matched)},
                {"ProcessesPlaced", offsetof(Props, placed)},
                {"ProcessesVanished", offsetof(Props, vanished)},
                {"PlacementFailures", offsetof(Props, failures)},
                {"PlacementLatencyP50USec", offsetof(Props, p50_us)},
                {"PlacementLatencyP99USec", offsetof(Props, p99_us)},
                {"PlacementLatencyMaxUSec", offsetof(Props, max_us)},
        };
        Props p = {};
        int r;

        r = sd_bus_call_method(
                B.bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                &error, &reply, "s", AFFINITYD_BUS_INTERFACE);
        if (r < 0)
                die("GetAll: %s", error.message ?: strerror(-r));
        if (sd_bus_message_enter_container(reply, 'a', "{sv}") < 0)
                die("GetAll: bad reply");
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *name, *contents;
                char type;
                bool done = false;

                if (sd_bus_message_read(reply, "s", &name) < 0 ||
                    sd_bus_message_peek_type(reply, &type, &contents) < 0)
                        die("GetAll: bad reply");
                if (streq(name, "ManagedProcesses") && streq(contents, "u")) {
                        if (sd_bus_message_read(reply, "v", "u", &p.managed) < 0)
                                die("GetAll: bad ManagedProcesses");
                        done = true;
                }
                for (size_t i = 0; !done && i < ELEMENTSOF(table); i++)
                        if (streq(name, table[i].name) && streq(contents, "t")) {
                                if (sd_bus_message_read(reply, "v", "t", (uint8_t *)&p + table[i].offset) <
                                    0)
                                        die("GetAll: bad %s", name);
                                done = true;
                        }
                if (!done && sd_bus_message_skip(reply, "v") < 0)
                        die("GetAll: bad reply");
                if (sd_bus_message_exit_container(reply) < 0)
                        die("GetAll: bad reply");
        }
        sd_bus_message_unref(reply);
        *ret = p;
}

/* Waits until the daemon is idle by its counters (placed + vanished == matched, matched at
 * least min_matched unless events were lost) and EventsReceived stopped moving. */
static void wait_settled(uint64_t min_matched, const Props *p0, Props *ret) {
        int64_t deadline = now_ns() + TIMEOUT_NS;
        uint64_t last_events = UINT64_MAX;
        Props p;

        for (;;) {
                get_props(&p);
                if (p.placed + p.vanished == p.matched &&
                    (p.matched >= min_matched || (p0 && p.lost > p0->lost)) && p.events == last_events)
                        break;
                last_events = p.events;
                if (now_ns() > deadline)
                        die("the daemon did not settle: matched %" PRIu64 " placed %" PRIu64
                            " vanished %" PRIu64 " (want >= %" PRIu64 " matched)",
                            p.matched, p.placed, p.vanished, min_matched);
                sleep_ns(100 * NSEC_PER_MSEC);
        }
        *ret = p;
}

/* ---- probes ---- */

/* Spawns the probe with argv (argv[0] set here); fd 3 = report_fd if >= 0; pgid: 0 = own group
 * leader, > 0 join, < 0 leave as is. Returns the pid. */
static pid_t spawn_probe(char **argv, int report_fd, pid_t pgid) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none;
        pid_t pid;
        int r;

        argv[0] = B.probe_name;
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        sigemptyset(&none);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setflags(
                &attr,
                POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (pgid >= 0 ? POSIX_SPAWN_SETPGROUP : 0));
        {
                sigset_t def;
                sigemptyset(&def);
                sigaddset(&def, SIGTERM);
                sigaddset(&def, SIGINT);
                sigaddset(&def, SIGPIPE);
                posix_spawnattr_setsigdefault(&attr, &def);
        }
        if (pgid >= 0)
                posix_spawnattr_setpgroup(&attr, pgid);
        if (report_fd >= 0)
                posix_spawn_file_actions_adddup2(&fa, report_fd, 3);
        r = posix_spawn(&pid, B.probe_path, &fa, &attr, argv, (char *[]){NULL});
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        if (r != 0)
                die("posix_spawn %s: %s", B.probe_path, strerror(r));
        return pid;
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

/* Nearest-rank quantile of a sorted array. */
static int64_t quantile(const int64_t *v, size_t n, double q) {
        size_t k;

        if (n == 0)
                return 0;
        k = (size_t)ceil(q * (double)n);
        if (k < 1)
                k = 1;
        if (k > n)
                k = n;
        return v[k - 1];
}

static const char *fmt_ns(char *buf, size_t size, int64_t ns) {
        if (ns == INT64_MAX)
                snprintf(buf, size, "never");
        else if (ns < 10 * NSEC_PER_USEC)
                snprintf(buf, size, "%.1f us", (double)ns / 1e3);
        else if (ns < 10 * NSEC_PER_MSEC)
                snprintf(buf, size, "%.0f us", (double)ns / 1e3);
        else
                snprintf(buf, size, "%.1f ms", (double)ns / 1e6);
        return buf;
}

/* Waits until pid has used less than 1 ms of CPU in each of two consecutive 200 ms windows
 * (it has handled the events of the load; other processes' events still trickle in), at most
 * 60 s. */
static void wait_cpu_idle(pid_t pid) {
        int64_t deadline = now_ns() + 60 * NSEC_PER_SEC;
        unsigned quiet = 0;
        ProcSample a, b;

        if (sample_proc(pid, &a) < 0)
                die("can't read the daemon's /proc");
        while (quiet < 2) {
                sleep_ns(200 * NSEC_PER_MSEC);
                if (sample_proc(pid, &b) < 0)
                        die("can't read the daemon's /proc");
                quiet = b.exec_ns - a.exec_ns < 1000000 ? quiet + 1 : 0;
                a = b;
                if (now_ns() > deadline) {
                        fprintf(stderr,
                                "bench-affinityd: the daemon stayed busy for 60 s, measuring anyway\n");
                        return;
                }
        }
}

/* ---- perf and callgrind ---- */

static pid_t start_perf(pid_t pid, const char *out, bool record) {
        char p[16];
        pid_t parent = getpid(), child;

        snprintf(p, sizeof p, "%d", (int)pid);
        child = fork();
        if (child < 0)
                die("fork: %m");
        if (child == 0) {
                _cleanup_free_ char *log = xasprintf("%s.log", out);
                child_setup(parent, log);
                if (record)
                        execlp("perf", "perf", "record", "-q", "-e", "cpu-clock", "-F", "4999", "-g", "-o",
                               out, "-p", p, (char *)NULL);
                else
                        execlp("perf", "perf", "stat", "-x", ",", "-e", "task-clock,context-switches", "-o",
                               out, "-p", p, (char *)NULL);
                _exit(127);
        }
        sleep_ns(300 * NSEC_PER_MSEC); /* let it attach */
        return child;
}

static void stop_perf(pid_t *pid) {
        int status;

        if (*pid <= 0)
                return;
        (void)kill(*pid, SIGINT);
        (void)waitpid(*pid, &status, 0);
        *pid = 0;
}

/* task-clock of a perf stat -x , output file, in ns; < 0 if absent. */
static double perf_task_clock_ns(const char *path) {
        _cleanup_free_ char *text = read_text(path);

        for (const char *l = text; l && *l;) {
                double v;
                char unit[32], event[64];
                if (sscanf(l, "%lf,%31[^,],%63[^,]", &v, unit, event) == 3 && streq(event, "task-clock"))
                        return streq(unit, "msec") ? v * 1e6 : v;
                l = strchr(l, '\n');
                if (l)
                        l++;
        }
        return -1;
}

/* Runs callgrind_control ARG PID; the daemon may be blocked in epoll_wait(), which vgdb
 * interrupts through ptrace. */
static void callgrind_control(const char *what) {
        char p[16];
        pid_t parent = getpid(), child;
        int status;

        snprintf(p, sizeof p, "%d", (int)B.daemon_pid);
        child = fork();
        if (child < 0)
                die("fork: %m");
        if (child == 0) {
                _cleanup_free_ char *log = xasprintf("%s/callgrind_control.log", B.dir);
                child_setup(parent, log);
                execlp("callgrind_control", "callgrind_control", what, p, (char *)NULL);
                _exit(127);
        }
        if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("callgrind_control %s %s failed; see %s/callgrind_control.log", what, p, B.dir);
}

/* The "totals:" (else "summary:") Ir of the newest callgrind dump of this run. */
static double callgrind_last_totals(void) {
        _cleanup_closedir_ DIR *d = opendir(B.dir);
        _cleanup_free_ char *best = NULL, *prefix = xasprintf("callgrind.out.%02u.", B.n_runs);
        struct dirent *de;
        unsigned best_n = 0;

        if (!d)
                return -1;
        while ((de = readdir(d))) {
                /* dumps are PREFIX.PID.N or PREFIX.N depending on the valgrind version */
                const char *dot;
                if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 &&
                    strncmp(de->d_name, prefix, strlen(prefix) - 1) != 0)
                        continue;
                dot = strrchr(de->d_name, '.');
                if (dot && (unsigned)atoi(dot + 1) > best_n && strlen(de->d_name) > strlen(prefix)) {
                        best_n = (unsigned)atoi(dot + 1);
                        free(best);
                        best = xasprintf("%s/%s", B.dir, de->d_name);
                }
        }
        if (!best)
                return -1;
        {
                _cleanup_free_ char *text = read_text(best);
                double v = -1;
                for (const char *l = text; l && *l;) {
                        if (strncmp(l, "totals:", 7) == 0)
                                return strtod(l + 7, NULL);
                        if (strncmp(l, "summary:", 8) == 0)
                                v = strtod(l + 8, NULL);
                        l = strchr(l, '\n');
                        if (l)
                                l++;
                }
                return v;
        }
}

/* ---- measurements ---- */

/* Counts the timerfds of pid (sd-event's timers) and those armed (it_value not zero), from
 * /proc/PID/fdinfo. */
static void count_timerfds(pid_t pid, unsigned *ret_n, unsigned *ret_armed) {
        _cleanup_closedir_ DIR *d = NULL;
        char path[64];
        struct dirent *de;
        unsigned n = 0, armed = 0;

        snprintf(path, sizeof path, "/proc/%d/fdinfo", (int)pid);
        d = opendir(path);
        if (!d)
                die("can't read %s: %m", path);
        while ((de = readdir(d))) {
                _cleanup_free_ char *text = NULL;
                char p[384];
                const char *v;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof p, "/proc/%d/fdinfo/%s", (int)pid, de->d_name);
                text = read_text(p);
                v = text ? strstr(text, "it_value:") : NULL;
                if (!v)
                        continue;
                n++;
                if (!strstr(v, "(0, 0)"))
                        armed++;
        }
        *ret_n = n;
        *ret_armed = armed;
}

/* bench-listener, running. */
typedef struct Listener {
        pid_t pid;
        int fd; /* its stdout */
} Listener;
static void start_listener(Listener *ret, bool placer);
static uint64_t listener_events(Listener *l);
static void stop_listener(Listener *l);

/*
 * The daemon idle (nothing of the benchmark running) for --idle-seconds, next to a bare
 * listener: the proc connector wakes both for every process event on the machine, so the
 * daemon's own wakeups are those beyond the listener's; and its timerfds must all be disarmed.
 */
static void measure_idle(void) {
        ProcSample s0, s1, l0, l1;
        Props p0, p1;
        int64_t t0, t1;
        uint64_t e0, e1;
        Listener li;

        printf("== idle: %u s with no timer configured ==\n", arg.idle_seconds);
        start_daemon("idle");
        start_listener(&li, false);
        sleep_ns(2 * NSEC_PER_SEC);
        get_props(&p0);
        e0 = listener_events(&li);
        sleep_ns(200 * NSEC_PER_MSEC); /* the GetAll reply is written, the listener asleep again */
        if (sample_proc(B.daemon_pid, &s0) < 0 || sample_proc(li.pid, &l0) < 0)
                die("can't read the daemon's /proc");
        t0 = now_ns();
        sleep_ns((int64_t)arg.idle_seconds * NSEC_PER_SEC);
        if (sample_proc(B.daemon_pid, &s1) < 0 || sample_proc(li.pid, &l1) < 0)
                die("can't read the daemon's /proc");
        t1 = now_ns();
        count_timerfds(B.daemon_pid, &R.idle_timerfds, &R.idle_timerfds_armed);
        e1 = listener_events(&li);
        get_props(&p1);
        stop_listener(&li);
        stop_daemon();

        R.idle_done = true;
        R.idle_seconds = (double)(t1 - t0) / 1e9;
        R.idle_wakeups = s1.wakeups - s0.wakeups;
        R.idle_ctxt = s1.ctxt - s0.ctxt;
        R.idle_slices = s1.slices - s0.slices;
        R.idle_events = p1.events - p0.events;
        R.idle_listener_events = e1 - e0;
        R.idle_listener_wakeups = l1.wakeups - l0.wakeups;
        printf("daemon: %u threads; wakeups (voluntary context switches) %" PRIu64 " (%.3f/s), all context "
               "switches %" PRIu64 ", timeslices %" PRIu64
               " in %.1f s; CPU time %.3f ms; timerfds %u, armed %u; "
               "proc events received %" PRIu64 "\n",
               s1.threads, R.idle_wakeups, (double)R.idle_wakeups / R.idle_seconds, R.idle_ctxt,
               R.idle_slices, R.idle_seconds, (double)(s1.exec_ns - s0.exec_ns) / 1e6, R.idle_timerfds,
               R.idle_timerfds_armed, R.idle_events);
        printf("a bare listener meanwhile: %" PRIu64
               " proc events (other processes of the machine), %" PRIu64 " wakeups\n",
               R.idle_listener_events, R.idle_listener_wakeups);
}

/* The reports of one load run. */
typedef struct Load {
        int64_t *windows; /* unplaced window after main(), ns; 0: before main(); INT64_MAX: never */
        int64_t *mains;   /* posix_spawn() -> main(), ns */
        unsigned n_reports, n_before_main, n_never, n_errors;
        double achieved_rate;
} Load;

static void load_done(Load *l) {
        l->windows = mfree(l->windows);
        l->mains = mfree(l->mains);
}

/* Number of processes that exec the probes, each for every N_SPAWNERS-th due time: posix_spawn()
 * waits (vfork) until the child has exec'd, so one spawner can't reach 5,000 execs/s here. */
#define N_SPAWNERS 2

/* In a spawner (a child of the benchmark): spawns probes k, k + N_SPAWNERS, ... at their due
 * times (start + i / rate), reaping as it goes; exits once all of them have exited. */
_Noreturn static void spawner_main(
        unsigned k, unsigned rate, int64_t start, int report_fd, unsigned bound_ms) {
        char spawn_buf[32], bound_buf[16];
        char *argv[] = {NULL, (char *)"place", spawn_buf, (char *)"1", bound_buf, NULL};

        snprintf(bound_buf, sizeof bound_buf, "%u", bound_ms);
        for (unsigned i = k; i < arg.count; i += N_SPAWNERS) {
                int64_t due = start + (int64_t)((double)i * 1e9 / rate);
                struct timespec ts = {.tv_sec = due / NSEC_PER_SEC, .tv_nsec = due % NSEC_PER_SEC};

                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                        ;
                snprintf(spawn_buf, sizeof spawn_buf, "%" PRId64, now_ns());
                spawn_probe(argv, report_fd, -1);
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
        }
        while (wait(NULL) > 0 || errno == EINTR)
                ;
        _exit(0);
}

/*
 * Execs arg.count probes at rate per second (each with "place SPAWN_NS 1 bound_ms") from
 * N_SPAWNERS processes with the benchmark's own affinity (both CPUs: the probes start with the
 * mask { 0, 1 }), and collects their reports until every probe has exited. Spawning is paced
 * against absolute due times; if it falls behind, probes start back to back (achieved_rate,
 * from the first and last spawn times the probes report, says so).
 */
static void run_load(unsigned rate, unsigned bound_ms, Load *ret) {
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        pid_t spawners[N_SPAWNERS], parent = getpid();
        int64_t start, first_spawn = INT64_MAX, last_spawn = INT64_MIN;
        Load l = {};
        int p[2];

        l.windows = calloc(arg.count, sizeof(int64_t));
        l.mains = calloc(arg.count, sizeof(int64_t));
        if (!l.windows || !l.mains)
                die("out of memory");

        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe: %m");
        rfd = p[0];
        /* Not 3 itself: a dup2() onto the same fd would keep O_CLOEXEC. */
        wfd = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
        close(p[1]);
        if (wfd < 0)
                die("fcntl: %m");
        (void)fcntl(rfd, F_SETPIPE_SZ, 1024 * 1024);

        start = now_ns() + 50 * NSEC_PER_MSEC;
        for (unsigned k = 0; k < N_SPAWNERS; k++) {
                spawners[k] = fork();
                if (spawners[k] < 0)
                        die("fork: %m");
                if (spawners[k] == 0) {
                        B.in_child = true;
                        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != parent)
                                _exit(125);
                        safe_close(rfd);
                        spawner_main(k, rate, start, wfd, bound_ms);
                }
        }
        wfd = safe_close(wfd);

        /* Until every writer (spawners and probes) is gone. */
        for (;;) {
                BenchProbeReport rep[64];
                ssize_t k = read(rfd, rep, sizeof rep);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        die("read: %m");
                if (k == 0)
                        break;
                if (k % sizeof rep[0] != 0)
                        die("short probe report");
                for (size_t j = 0; j < (size_t)k / sizeof rep[0]; j++) {
                        const BenchProbeReport *r = &rep[j];

                        if (r->magic != BENCH_PROBE_MAGIC || l.n_reports >= arg.count)
                                die("bad probe report");
                        first_spawn = MIN(first_spawn, r->spawn_ns);
                        last_spawn = MAX(last_spawn, r->spawn_ns);
                        l.mains[l.n_reports] = r->main_ns - r->spawn_ns;
                        if (r->error)
                                l.n_errors++;
                        if (r->placed_ns < 0) {
                                l.n_never++;
                                l.windows[l.n_reports] = INT64_MAX;
                        } else if (r->before_main) {
                                l.n_before_main++;
                                l.windows[l.n_reports] = 0;
                        } else
                                l.windows[l.n_reports] = r->placed_ns - r->main_ns;
                        l.n_reports++;
                }
        }
        for (unsigned k = 0; k < N_SPAWNERS; k++) {
                int status;
                if (waitpid(spawners[k], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        die("a spawner failed (status 0x%x)", (unsigned)status);
        }
        l.n_never += arg.count - l.n_reports; /* a probe that could not report */
        l.achieved_rate = l.n_reports > 1 && last_spawn > first_spawn
                ? (double)(l.n_reports - 1) * 1e9 / (double)(last_spawn - first_spawn)
                : 0;
        qsort(l.windows, l.n_reports, sizeof(int64_t), cmp_i64);
        qsort(l.mains, l.n_reports, sizeof(int64_t), cmp_i64);
        *ret = l;
}

/* Share of a run's events that came from other processes of the machine (a probe's life is 3
 * events: fork, exec, exit). */
static double foreign_share(uint64_t events) {
        uint64_t own = 3 * (uint64_t)arg.count;
        return events > own ? (double)(events - own) / (double)events : 0.0;
}

/* A run in which more than this share of the events came from other processes is run again
 * (up to --attempts times; the least disturbed run counts): they cost CPU too. */
#define FOREIGN_SHARE_MAX 0.05

/* In a forked child of parent: uid and gid nobody, no supplementary groups, killed with parent
 * (or exits if parent is gone already). */
static void become_nobody(pid_t parent) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
            setresuid(65534, 65534, 65534) < 0)
                _exit(1);
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* cleared by the uid change */
        if (getppid() != parent)
                _exit(1);
}

/*
 * --hostile=N: N loops as nobody, each starting every 10 ms a shell that lives 300 ms
 * (sh -c "sleep 0.3; :") with 12 more arguments of 128 KiB of "foo" (MAX_ARG_STRLEN each:
 * a 1.5 MiB command line, about what the 8 MiB default stack limit lets argv have), until killed: what an
 * unprivileged user can do to a cmdline: matcher (glibc's regexec(3) takes 2 s for "foo.*bar" on 64 KiB of
 * "foo"). Returns the loops' PIDs.
 */
static void start_hostile(pid_t *pids, unsigned n) {
        static char *argv[20];
        pid_t parent = getpid();

        if (!argv[0]) {
                argv[0] = (char *)"sh";
                argv[1] = (char *)"-c";
                argv[2] = (char *)"sleep 0.3; :";
                for (unsigned i = 3; i < 15; i++) {
                        char *a = malloc(128 * 1024);

                        if (!a)
                                die("out of memory");
                        for (size_t k = 0; k < 128 * 1024 - 1; k++)
                                a[k] = "foo"[k % 3];
                        a[128 * 1024 - 1] = '\0';
                        argv[i] = a;
                }
        }
        for (unsigned i = 0; i < n; i++) {
                pids[i] = fork();
                if (pids[i] < 0)
                        die("fork: %m");
                if (pids[i] == 0) {
                        if (arg.hostile_cpu >= 0) {
                                cpu_set_t one;

                                CPU_ZERO(&one);
                                CPU_SET(arg.hostile_cpu, &one);
                                if (sched_setaffinity(0, sizeof(one), &one) < 0)
                                        die("--hostile-cpu=%d: %m", arg.hostile_cpu);
                        }
                        become_nobody(parent);
                        for (;;) {
                                pid_t c = fork();

                                if (c == 0) {
                                        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                                        execv("/bin/sh", argv);
                                        _exit(127);
                                }
                                usleep(10 * 1000);
                                while (waitpid(-1, NULL, WNOHANG) > 0)
                                        ;
                        }
                }
        }
}

static void stop_hostile(pid_t *pids, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                if (pids[i] > 0) {
                        (void)kill(pids[i], SIGKILL);
                        (void)waitpid(pids[i], NULL, 0);
                }
}

/*
 * --bus-flood=N: N clients as nobody on the daemon's bus, each alternating, as fast as answers
 * come, Explain of a process of --flood-threads threads (default 2000; a child of the benchmark
 * that matches no policy) with ListProcesses: what an unprivileged user can ask of the daemon.
 * Their answers (ok, org.affinityd1.Error.Busy, other errors) are counted in shared memory.
 */
typedef struct FloodCounts {
        uint64_t ok, busy, other;
} FloodCounts;

static void *flood_thread_main(void *userdata) {
        for (;;)
                pause();
        return NULL;
}

/* The Explain target: forks a process of n threads; returns its PID once they all exist. */
static pid_t start_flood_target(unsigned n) {
        int p[2];
        pid_t pid;
        char c;

        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe: %m");
        pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                pthread_attr_t attr;

                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                (void)prctl(PR_SET_NAME, "bench-flood");
                pthread_attr_init(&attr);
                pthread_attr_setstacksize(&attr, 64 * 1024);
                for (unsigned i = 1; i < n; i++) {
                        pthread_t t;

                        if (pthread_create(&t, &attr, flood_thread_main, NULL) != 0)
                                _exit(1);
                }
                (void)!write(p[1], "r", 1);
                for (;;)
                        pause();
        }
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
                die("the --bus-flood target could not start %u threads", n);
        close(p[0]);
        return pid;
}

static void start_flood(pid_t *pids, unsigned n, pid_t target, FloodCounts *counts) {
        pid_t parent = getpid();

        /* nobody must reach the bus socket in the benchmark's directory */
        if (chmod(B.dir, 0711) < 0)
                die("chmod %s: %m", B.dir);
        for (unsigned i = 0; i < n; i++) {
                pids[i] = fork();
                if (pids[i] < 0)
                        die("fork: %m");
                if (pids[i] == 0) {
                        sd_bus *b = NULL;

                        become_nobody(parent);
                        if (sd_bus_new(&b) < 0 || sd_bus_set_address(b, B.bus_address) < 0 ||
                            sd_bus_set_bus_client(b, true) < 0 || sd_bus_start(b) < 0)
                                _exit(1);
                        for (unsigned k = 0;; k++) {
                                sd_bus_error e = SD_BUS_ERROR_NULL;
                                sd_bus_message *reply = NULL;
                                int r = k % 2 == 0
                                        ? sd_bus_call_method(
                                                  b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH,
                                                  AFFINITYD_BUS_INTERFACE, "Explain", &e, &reply, "u",
                                                  (uint32_t)target)
                                        : sd_bus_call_method(
                                                  b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH,
                                                  AFFINITYD_BUS_INTERFACE, "ListProcesses", &e, &reply, "");

                                if (r >= 0)
                                        __atomic_fetch_add(&counts[i].ok, 1, __ATOMIC_RELAXED);
                                else if (sd_bus_error_has_name(&e, AFFINITYD_ERROR_BUSY)) {
                                        __atomic_fetch_add(&counts[i].busy, 1, __ATOMIC_RELAXED);
                                        usleep(10 * 1000); /* a client that backs off a little */
                                } else
                                        __atomic_fetch_add(&counts[i].other, 1, __ATOMIC_RELAXED);
                                sd_bus_error_free(&e);
                                sd_bus_message_unref(reply);
                        }
                }
        }
}

static void measure_rate_once(unsigned rate, unsigned attempt, RateResult *ret) {
        _cleanup_free_ char *perf_out = NULL, *rec_out = NULL,
                            *run_name = xasprintf("rate%u%s", rate, attempt > 0 ? "-again" : "");
        RateResult res = {.rate = rate, .perf_ns_per_exec = -1, .ir_per_exec = -1};
        char b1[32], b2[32], b3[32], b4[32];
        ProcSample s0, s1, bus0, bus1;
        Props p0, p1;
        pid_t perf_pid = 0, rec_pid = 0;
        Load l;

        printf("== rate: %u probes at %u/s%s ==\n", arg.count, rate, attempt > 0 ? " (again)" : "");
        start_daemon(run_name);
        wait_settled(0, NULL, &p0);
        if (arg.perf) {
                perf_out = xasprintf("%s/perf-stat-%u.txt", B.dir, rate);
                perf_pid = start_perf(B.daemon_pid, perf_out, false);
        }
        if (arg.perf_record) {
                rec_out = xasprintf("%s.%u", arg.perf_record, rate);
                rec_pid = start_perf(B.daemon_pid, rec_out, true);
        }
        get_props(&p0);
        /* No D-Bus call from here to the second sample: its cost would be counted too. */
        wait_cpu_idle(B.daemon_pid);
        if (arg.callgrind)
                callgrind_control("-z");
        if (sample_proc(B.daemon_pid, &s0) < 0 || sample_proc(B.bus_pid, &bus0) < 0)
                die("can't read the daemon's or the bus daemon's /proc");

        {
                pid_t hostile[64] = {};
                unsigned n_hostile = MIN(arg.hostile, (unsigned)ELEMENTSOF(hostile));

                if (n_hostile > 0) {
                        printf("%u hostile loops as nobody: a shell every 10 ms living 300 ms with a 1.5 "
                               "MiB "
                               "command line of \"foo\"; a first policy with cmdline: \"%s\"\n",
                               n_hostile, *arg.hostile_regex ? arg.hostile_regex : "(none)");
                        start_hostile(hostile, n_hostile);
                        usleep(500 * 1000);
                }
                pid_t flood[64] = {}, target = 0;
                unsigned n_flood = MIN(arg.bus_flood, (unsigned)ELEMENTSOF(flood));
                FloodCounts *counts = NULL;
                int64_t t_flood = 0;

                if (n_flood > 0) {
                        counts =
                                mmap(NULL, sizeof(FloodCounts) * n_flood, PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
                        if (counts == MAP_FAILED)
                                die("mmap: %m");
                        memset(counts, 0, sizeof(FloodCounts) * n_flood);
                        target = start_flood_target(arg.flood_threads);
                        printf("%u D-Bus clients as nobody alternating Explain of a %u-thread process with "
                               "ListProcesses\n",
                               n_flood, arg.flood_threads);
                        start_flood(flood, n_flood, target, counts);
                        usleep(500 * 1000);
                        t_flood = now_ns();
                }
                run_load(rate, arg.bound_ms, &l);
                stop_hostile(hostile, n_hostile);
                if (n_flood > 0) {
                        FloodCounts sum = {};
                        double secs = (double)(now_ns() - t_flood) / 1e9;

                        stop_hostile(flood, n_flood);
                        stop_hostile(&target, 1);
                        for (unsigned i = 0; i < n_flood; i++) {
                                sum.ok += counts[i].ok;
                                sum.busy += counts[i].busy;
                                sum.other += counts[i].other;
                        }
                        printf("D-Bus flood: %.0f calls/s answered, %.0f/s refused Busy, %" PRIu64
                               " other errors\n",
                               sum.ok / secs, sum.busy / secs, sum.other);
                        munmap(counts, sizeof(FloodCounts) * n_flood);
                }
        }

        wait_cpu_idle(B.daemon_pid);
        if (sample_proc(B.daemon_pid, &s1) < 0 || sample_proc(B.bus_pid, &bus1) < 0)
                die("can't read the daemon's or the bus daemon's /proc");
        stop_perf(&perf_pid);
        stop_perf(&rec_pid);
        if (arg.callgrind) {
                callgrind_control("-d");
                res.ir_per_exec = callgrind_last_totals() / arg.count;
        }
        wait_settled(p0.matched + arg.count, &p0, &p1);
        stop_daemon();

        res.n = arg.count;
        res.achieved_rate = l.achieved_rate;
        res.n_reports = l.n_reports;
        res.n_before_main = l.n_before_main;
        res.n_never = l.n_never;
        res.n_errors = l.n_errors;
        res.p50_ns = quantile(l.windows, l.n_reports, 0.50);
        res.p99_ns = quantile(l.windows, l.n_reports, 0.99);
        res.max_ns = l.n_reports > 0 ? l.windows[l.n_reports - 1] : 0;
        res.main_p50_ns = quantile(l.mains, l.n_reports, 0.50);
        load_done(&l);
        res.d_p50_us = p1.p50_us;
        res.d_p99_us = p1.p99_us;
        res.d_max_us = p1.max_us;
        res.events = p1.events - p0.events;
        res.lost = p1.lost - p0.lost;
        res.matched = p1.matched - p0.matched;
        res.placed = p1.placed - p0.placed;
        res.vanished = p1.vanished - p0.vanished;
        res.failures = p1.failures - p0.failures;
        res.cpu_ns_per_exec = (double)(s1.exec_ns - s0.exec_ns) / arg.count;
        res.cpu_stat_ns_per_exec =
                (double)(s1.stat_ticks - s0.stat_ticks) * 1e9 / (double)sysconf(_SC_CLK_TCK) / arg.count;
        res.cpu_ns_per_event = res.events > 0 ? (double)(s1.exec_ns - s0.exec_ns) / (double)res.events : 0;
        res.bus_ns_per_exec = (double)(bus1.exec_ns - bus0.exec_ns) / arg.count;
        if (perf_out)
                res.perf_ns_per_exec = perf_task_clock_ns(perf_out) / arg.count;

        printf("achieved %.0f/s; %u reports; placed before main(): %u (%.1f%%); never placed within %u ms: "
               "%u; "
               "errors %u\n",
               res.achieved_rate, res.n_reports, res.n_before_main, 100.0 * res.n_before_main / res.n,
               arg.bound_ms, res.n_never, res.n_errors);
        printf("unplaced window after main(): p50 %s, p99 %s, max %s (posix_spawn -> main() p50 %s)\n",
               fmt_ns(b1, sizeof b1, res.p50_ns), fmt_ns(b2, sizeof b2, res.p99_ns),
               fmt_ns(b3, sizeof b3, res.max_ns), fmt_ns(b4, sizeof b4, res.main_p50_ns));
        printf("daemon latency (event -> last thread set): p50 %" PRIu64 " us, p99 %" PRIu64
               " us, max %" PRIu64 " us\n",
               res.d_p50_us, res.d_p99_us, res.d_max_us);
        printf("daemon CPU per exec: %.2f us (schedstat), %.1f us (/proc/PID/stat, %ld Hz ticks)",
               res.cpu_ns_per_exec / 1e3, res.cpu_stat_ns_per_exec / 1e3, sysconf(_SC_CLK_TCK));
        if (res.perf_ns_per_exec >= 0)
                printf(", %.2f us (perf stat task-clock)", res.perf_ns_per_exec / 1e3);
        printf("\nbus daemon CPU per exec: %.2f us (schedstat); daemon + bus daemon: %.2f us\n",
               res.bus_ns_per_exec / 1e3, (res.cpu_ns_per_exec + res.bus_ns_per_exec) / 1e3);
        if (res.ir_per_exec >= 0)
                printf("daemon instructions per exec (callgrind Ir): %.0f\n", res.ir_per_exec);
        printf("events received %" PRIu64 " (%.2f us CPU each), lost %" PRIu64 "; matched %" PRIu64
               ", placed %" PRIu64 ", vanished %" PRIu64 ", placement failures %" PRIu64 "\n",
               res.events, res.cpu_ns_per_event / 1e3, res.lost, res.matched, res.placed, res.vanished,
               res.failures);
        if (rec_out)
                printf("perf record: %s (perf report -i %s --no-children)\n", rec_out, rec_out);
        *ret = res;
}

static void measure_rate(unsigned rate) {
        RateResult best = {};

        for (unsigned attempt = 0; attempt < arg.attempts; attempt++) {
                RateResult res;

                measure_rate_once(rate, attempt, &res);
                if (attempt == 0 || foreign_share(res.events) < foreign_share(best.events))
                        best = res;
                if (foreign_share(best.events) <= FOREIGN_SHARE_MAX)
                        break;
                printf("%.0f%% of the events came from other processes of the machine%s\n",
                       100.0 * foreign_share(res.events),
                       attempt + 1 < arg.attempts ? ": running again" : "; keeping the least disturbed run");
        }
        best.foreign_share = foreign_share(best.events);
        if (R.n_rates < ELEMENTSOF(R.rates))
                R.rates[R.n_rates++] = best;
}

/* Starts bench-listener, as the minimal placer of the probes on CPU 1 when placer is true;
 * returns once it has subscribed. */
static void start_listener(Listener *ret, bool placer) {
        _cleanup_free_ char *self = xasprintf("%d", (int)getpid());
        pid_t parent = getpid(), pid;
        char buf[16] = "";
        int p[2];
        ssize_t k;

        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe: %m");
        pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                child_setup(parent, NULL);
                if (dup2(p[1], STDOUT_FILENO) < 0)
                        _exit(126);
                if (placer)
                        execl(arg.listener, arg.listener, self, B.probe_name, "1", (char *)NULL);
                else
                        execl(arg.listener, arg.listener, self, (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        k = read(p[0], buf, sizeof buf - 1);
        if (k <= 0 || strncmp(buf, "ready\n", 6) != 0)
                die("bench-listener (%s) did not subscribe to the proc connector", arg.listener);
        *ret = (Listener){.pid = pid, .fd = p[0]};
}

/* The number of events the listener has received (asks with SIGUSR1). */
static uint64_t listener_events(Listener *l) {
        char buf[32];
        size_t n = 0;

        if (kill(l->pid, SIGUSR1) < 0)
                die("bench-listener is gone: %m");
        while (n == 0 || buf[n - 1] != '\n') {
                ssize_t k = read(l->fd, buf + n, sizeof buf - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0 || n + (size_t)k >= sizeof buf - 1)
                        die("bench-listener did not answer");
                n += (size_t)k;
        }
        buf[n] = '\0';
        return strtoull(buf, NULL, 10);
}

static void stop_listener(Listener *l) {
        kill_wait(&l->pid, SIGKILL);
        if (l->fd >= 0)
                close(l->fd);
        l->fd = -EBADF;
}

/*
 * One run of bench-listener (as the minimal placer when placer is true) under the load rate:
 * the probes wait up to bound_ms to be placed (0: they don't wait). Fills *l, the listener's
 * /proc samples before and after, and the events it received meanwhile.
 */
static void listener_run(
        bool placer, unsigned rate, unsigned bound_ms, Load *l, ProcSample *s0, ProcSample *s1,
        uint64_t *ret_events) {
        Listener li;
        uint64_t e0, e1;

        start_listener(&li, placer);
        sleep_ns(200 * NSEC_PER_MSEC);
        e0 = listener_events(&li);
        if (sample_proc(li.pid, s0) < 0)
                die("can't read bench-listener's /proc");
        run_load(rate, bound_ms, l);
        sleep_ns(200 * NSEC_PER_MSEC);
        if (sample_proc(li.pid, s1) < 0)
                die("can't read bench-listener's /proc");
        e1 = listener_events(&li);
        stop_listener(&li);
        *ret_events = e1 - e0;
}

/* The floor: bench-listener, which only receives the proc connector's events, under the same
 * load (the probes don't wait to be placed: nothing places them). */
static void measure_floor(unsigned rate) {
        double best_share = 2, best_exec = 0, best_event = 0;

        for (unsigned attempt = 0; attempt < arg.attempts; attempt++) {
                ProcSample s0, s1;
                uint64_t events;
                double per_event, share;
                Load l;

                printf("== floor: a bare proc connector listener, %u probes at %u/s%s ==\n", arg.count, rate,
                       attempt > 0 ? " (again)" : "");
                listener_run(false, rate, 0, &l, &s0, &s1, &events);
                per_event = events > 0 ? (double)(s1.exec_ns - s0.exec_ns) / (double)events : 0;
                share = foreign_share(events);
                printf("achieved %.0f/s; listener CPU per exec: %.2f us, per event %.2f us (%" PRIu64
                       " events: %.0f%% from other processes); wakeups per exec %.2f\n",
                       l.achieved_rate, (double)(s1.exec_ns - s0.exec_ns) / 1e3 / arg.count, per_event / 1e3,
                       events, 100.0 * share, (double)(s1.wakeups - s0.wakeups) / arg.count);
                load_done(&l);
                if (share < best_share) {
                        best_share = share;
                        best_exec = (double)(s1.exec_ns - s0.exec_ns) / arg.count;
                        best_event = per_event;
                }
                if (best_share <= FOREIGN_SHARE_MAX)
                        break;
        }
        if (R.n_floors < ELEMENTSOF(R.floors)) {
                R.floors[R.n_floors].rate = rate;
                R.floors[R.n_floors].ns_per_exec = best_exec;
                R.floors[R.n_floors].foreign_share = best_share;
                R.floors[R.n_floors++].ns_per_event = best_event;
        }
}

/*
 * The minimal placer (bench-listener with the probes' name and CPU 1: proc connector, comm,
 * sched_setaffinity(2), nothing else) under the same load as rate:N, the probes waiting to be
 * placed as they do for the daemon: the reference for the daemon's CPU per exec, its unplaced
 * window and its share placed before main().
 */
static void measure_placer(unsigned rate) {
        RateResult best = {.rate = rate, .foreign_share = 2};
        char b1[32], b2[32], b3[32];

        for (unsigned attempt = 0; attempt < arg.attempts; attempt++) {
                RateResult res = {.rate = rate};
                ProcSample s0, s1;
                Load l;

                printf("== placer: the minimal placer, %u probes at %u/s%s ==\n", arg.count, rate,
                       attempt > 0 ? " (again)" : "");
                listener_run(true, rate, arg.bound_ms, &l, &s0, &s1, &res.events);
                res.n = arg.count;
                res.achieved_rate = l.achieved_rate;
                res.n_reports = l.n_reports;
                res.n_before_main = l.n_before_main;
                res.n_never = l.n_never;
                res.p50_ns = quantile(l.windows, l.n_reports, 0.50);
                res.p99_ns = quantile(l.windows, l.n_reports, 0.99);
                res.max_ns = l.n_reports > 0 ? l.windows[l.n_reports - 1] : 0;
                res.cpu_ns_per_exec = (double)(s1.exec_ns - s0.exec_ns) / arg.count;
                res.cpu_ns_per_event =
                        res.events > 0 ? (double)(s1.exec_ns - s0.exec_ns) / (double)res.events : 0;
                res.foreign_share = foreign_share(res.events);
                load_done(&l);
                printf("achieved %.0f/s; placed before main(): %u (%.1f%%); never placed within %u ms: %u; "
                       "unplaced window p50 %s, p99 %s, max %s; placer CPU per exec: %.2f us (%.0f%% of the "
                       "events from other processes)\n",
                       res.achieved_rate, res.n_before_main, 100.0 * res.n_before_main / res.n, arg.bound_ms,
                       res.n_never, fmt_ns(b1, sizeof b1, res.p50_ns), fmt_ns(b2, sizeof b2, res.p99_ns),
                       fmt_ns(b3, sizeof b3, res.max_ns), res.cpu_ns_per_exec / 1e3,
                       100.0 * res.foreign_share);
                if (res.foreign_share < best.foreign_share)
                        best = res;
                if (best.foreign_share <= FOREIGN_SHARE_MAX)
                        break;
        }
        if (R.n_placers < ELEMENTSOF(R.placers))
                R.placers[R.n_placers++] = best;
}

/* Raises kernel.pid_max and RLIMIT_NPROC if n more processes would not fit (restored at exit). */
static void make_room(unsigned n) {
        _cleanup_free_ char *text = read_text("/proc/sys/kernel/pid_max");
        _cleanup_closedir_ DIR *d = opendir("/proc");
        unsigned long existing = 0, need;
        struct rlimit rl;
        struct dirent *de;
        long pid_max;

        if (!text || !d)
                die("can't read /proc: %m");
        while ((de = readdir(d)))
                if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
                        existing++;
        pid_max = strtol(text, NULL, 10);
        need = existing + n + 4096;
        if ((unsigned long)pid_max < need) {
                char buf[32];
                _cleanup_close_ int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
                snprintf(buf, sizeof buf, "%lu\n", need);
                if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
                        die("can't raise kernel.pid_max to %lu: %m", need);
                B.saved_pid_max = pid_max;
                printf("raised kernel.pid_max from %ld to %lu (restored at exit)\n", pid_max, need);
        }
        if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
                B.saved_nproc = rl;
                rl.rlim_cur = rl.rlim_max = need;
                if (setrlimit(RLIMIT_NPROC, &rl) >= 0)
                        B.nproc_changed = true;
                else if (geteuid() == 0) /* fork(2) does not hold root to it */
                        printf("RLIMIT_NPROC stays %llu (raising it: %m; root is exempt from it)\n",
                               (unsigned long long)B.saved_nproc.rlim_cur);
                else
                        die("can't raise RLIMIT_NPROC: %m");
        }
}

static void spawn_sleepers(unsigned n) {
        char self[16];
        char *argv[] = {NULL, (char *)"sleep", self, NULL};

        make_room(n);
        snprintf(self, sizeof self, "%d", (int)getpid());
        B.sleepers = calloc(n, sizeof(pid_t));
        if (!B.sleepers)
                die("out of memory");
        pin_self(0);
        for (unsigned i = 0; i < n; i++) {
                B.sleepers[i] = spawn_probe(argv, -1, B.sleeper_pgid);
                if (B.sleeper_pgid == 0)
                        B.sleeper_pgid = B.sleepers[0];
                B.n_sleepers++;
        }
        pin_self(-1);
}

/* Waits until the daemon manages n processes, all placed. */
static void wait_managed(unsigned n, Props *ret) {
        int64_t deadline = now_ns() + TIMEOUT_NS;

        for (;;) {
                get_props(ret);
                if (ret->managed >= n && ret->placed + ret->vanished == ret->matched)
                        return;
                if (now_ns() > deadline)
                        die("ManagedProcesses reached only %u of %u", ret->managed, n);
                sleep_ns(200 * NSEC_PER_MSEC);
        }
}

static void print_mem(const char *what, const MemSample *m) {
        printf("%s: VmRSS %" PRIu64 " KiB, VmHWM %" PRIu64 " KiB, RssAnon %" PRIu64 " KiB, Pss %" PRIu64
               " KiB, private %" PRIu64 " KiB\n",
               what, m->rss_kb, m->hwm_kb, m->anon_kb, m->pss_kb, m->private_kb);
}

static void measure_rss(void) {
        Props p0, p;

        printf("== rss: %u tracked processes ==\n", arg.processes);
        start_daemon("rss");
        wait_settled(0, NULL, &p0);
        sleep_ns(500 * NSEC_PER_MSEC);
        sample_mem(B.daemon_pid, &R.mem0);
        print_mem("before (0 tracked)", &R.mem0);

        spawn_sleepers(arg.processes);
        wait_managed(arg.processes, &p);
        sleep_ns(500 * NSEC_PER_MSEC);
        sample_mem(B.daemon_pid, &R.mem_n);
        R.mem_n_processes = p.managed;
        R.rss_done = true;
        print_mem("tracking", &R.mem_n);
        printf("ManagedProcesses %u; %.0f bytes of VmRSS per tracked process; events lost %" PRIu64
               ", rescans %" PRIu64 "\n",
               p.managed, (double)(R.mem_n.rss_kb - R.mem0.rss_kb) * 1024.0 / p.managed, p.lost - p0.lost,
               p.rescans - p0.rescans);
        stop_daemon();
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* Removes what a daemon run left in its state directory (--state-dir, else the daemon's default
 * /run/affinityd): the originals journal, and the per-process files of versions before it, so
 * that the next run is a first start. */
static void empty_state_dir(void) {
        const char *dir = arg.state_dir ?: "/run/affinityd";
        _cleanup_free_ char *journal = xasprintf("%s/originals", dir),
                            *cmd = xasprintf("rm -rf '%s/processes'", dir);

        if (unlink(journal) < 0 && errno != ENOENT)
                die("unlink %s: %m", journal);
        if (system(cmd) != 0)
                die("%s failed", cmd);
}

/* Every sleeper back on CPU 0, so that a scan has real work to do; returns how many. */
static unsigned sleepers_to_cpu0(void) {
        unsigned moved = 0;
        cpu_set_t zero;

        CPU_ZERO(&zero);
        CPU_SET(0, &zero);
        for (size_t i = 0; i < B.n_sleepers; i++)
                if (sched_setaffinity(B.sleepers[i], sizeof zero, &zero) == 0)
                        moved++;
        sleep_ns(300 * NSEC_PER_MSEC);
        return moved;
}

/* Runs the minimal scan (bench-scan: walk /proc, read comm, set each thread of the probes' to CPU
 * 1) on the sleepers; returns the time from fork() to its exit in ms, and prints its line. */
static double run_minimal_scan(void) {
        _cleanup_free_ char *out = xasprintf("%s/scan.out", B.dir), *text = NULL;

        (void)unlink(out); /* child_setup() appends */
        int64_t t0 = now_ns(), t1;
        int status;
        pid_t pid;

        pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                child_setup(getppid(), out);
                execl(arg.scan, arg.scan, B.probe_name, "1", (char *)NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("%s failed (status %d)", arg.scan, status);
        t1 = now_ns();
        text = read_text(out);
        printf("minimal scan: fork -> exit %.1f ms; %.*s\n", (double)(t1 - t0) / 1e6,
               text ? (int)strcspn(text, "\n") : 3, text ?: "n/a");
        return (double)(t1 - t0) / 1e6;
}

/* The stats of the n (>= 1) values v, which it sorts. */
static RunStats run_stats(double *v, unsigned n) {
        qsort(v, n, sizeof(double), cmp_double);
        return (RunStats){.median = v[n / 2], .min = v[0], .max = v[n - 1]};
}

/* --startup-runs new daemons, one after the other, each with every sleeper put back on CPU 0
 * first (so the scan has real work to do) and an empty state directory (a first start), each
 * followed by a run of the minimal scan on the same processes (put back again). The median run is
 * the result; min and max are shown because other processes of the machine disturb single runs.
 * Then one restart: a daemon that finds the records of every process the last one placed. */
static void measure_startup(void) {
        double ready_ms[32], log_ms[32], scan_ms[32];
        unsigned runs = MIN(arg.startup_runs, (unsigned)ELEMENTSOF(ready_ms));
        Props p = {};

        if (B.n_sleepers == 0)
                spawn_sleepers(arg.processes);
        printf("== startup: a new daemon with %zu matching processes running, %u runs ==\n", B.n_sleepers,
               runs);
        for (unsigned run = 0; run < runs; run++) {
                _cleanup_free_ char *log = NULL;
                const char *line;
                unsigned moved;
                int64_t ns;

                moved = sleepers_to_cpu0();
                empty_state_dir();
                ns = start_daemon("startup");
                get_props(&p);
                if (run == 0) {
                        sleep_ns(500 * NSEC_PER_MSEC);
                        sample_mem(B.daemon_pid, &R.mem_startup);
                }
                stop_daemon();

                log = read_text(B.daemon_log);
                line = log ? strstr(log, "Ready: ") : NULL;
                log_ms[run] = -1;
                if (line) {
                        const char *in = strstr(line, " in ");
                        long ms;
                        if (in && sscanf(in, " in %ld ms", &ms) == 1)
                                log_ms[run] = (double)ms;
                }
                ready_ms[run] = (double)ns / 1e6;
                printf("run %u: %u processes put back on CPU 0; exec -> READY=1 %.1f ms; ManagedProcesses "
                       "%u; "
                       "log: %.*s\n",
                       run + 1, moved, ready_ms[run], p.managed, line ? (int)strcspn(line, "\n") : 3,
                       line ?: "n/a");
                if (run == 0)
                        print_mem("after the startup scan", &R.mem_startup);
                (void)sleepers_to_cpu0();
                scan_ms[run] = run_minimal_scan();
        }
        {
                /* The last run's records are all there; the processes are on CPU 0 again, so the
                 * restart has to place them all (none is where its policy puts it). */
                (void)sleepers_to_cpu0();
                int64_t ns = start_daemon("restart");

                stop_daemon();
                R.restart_ms = (double)ns / 1e6;
                printf("restart with the records of %zu processes: exec -> READY=1 %.1f ms\n", B.n_sleepers,
                       R.restart_ms);
        }
        qsort(ready_ms, runs, sizeof(double), cmp_double);
        qsort(log_ms, runs, sizeof(double), cmp_double);
        qsort(scan_ms, runs, sizeof(double), cmp_double);
        R.startup_scan_ms = scan_ms[runs / 2];
        R.startup_done = true;
        R.startup_processes = p.managed;
        R.startup_runs = runs;
        R.startup_ready_ms = ready_ms[runs / 2];
        R.startup_ready_min_ms = ready_ms[0];
        R.startup_ready_max_ms = ready_ms[runs - 1];
        R.startup_log_ms = (long)log_ms[runs / 2];
        printf("exec -> READY=1: median %.1f ms, min %.1f ms, max %.1f ms; logged scan time median %ld ms\n",
               R.startup_ready_ms, R.startup_ready_min_ms, R.startup_ready_max_ms, R.startup_log_ms);
        printf("minimal scan, fork -> exit: median %.1f ms; affinityd / minimal scan: %.2fx\n",
               R.startup_scan_ms, R.startup_ready_ms / R.startup_scan_ms);
}

/* --startup-runs reloads (SIGHUP) of one daemon managing every sleeper: signal → READY=1. */
static void measure_reload(void) {
        double wall_ms[32], cpu_ms[32];
        unsigned runs = MIN(arg.startup_runs, (unsigned)ELEMENTSOF(wall_ms)), n_reloaded = 0;
        _cleanup_free_ char *log = NULL;
        Props p;

        if (B.n_sleepers == 0)
                spawn_sleepers(arg.processes);
        printf("== reload: %u policies, %zu matching processes running, %u runs ==\n", arg.policies,
               B.n_sleepers, runs);
        start_daemon("reload");
        wait_managed((unsigned)B.n_sleepers, &p);
        for (unsigned run = 0; run < runs; run++) {
                int64_t t0;
                ProcSample s0, s1;
                unsigned n0;

                sleep_ns(300 * NSEC_PER_MSEC);
                drain_notify();
                n0 = B.n_ready;
                if (sample_proc(B.daemon_pid, &s0) < 0)
                        die("can't sample the daemon: %m");
                t0 = now_ns();
                if (kill(B.daemon_pid, SIGHUP) < 0)
                        die("kill(SIGHUP): %m");
                wait_ready(n0, t0 + TIMEOUT_NS, "during a reload");
                wall_ms[run] = (double)(now_ns() - t0) / 1e6;
                if (sample_proc(B.daemon_pid, &s1) < 0)
                        die("can't sample the daemon: %m");
                cpu_ms[run] = (double)(s1.exec_ns - s0.exec_ns) / 1e6;
                get_props(&p);
                printf("run %u: SIGHUP -> READY=1 %.1f ms, daemon CPU %.1f ms; ManagedProcesses %u\n",
                       run + 1, wall_ms[run], cpu_ms[run], p.managed);
        }
        stop_daemon();
        log = read_text(B.daemon_log);
        for (const char *l = log; l && (l = strstr(l, "Reloaded: ")); l++)
                n_reloaded++;
        if (n_reloaded < runs)
                die("%u of %u reloads logged \"Reloaded: \"; see %s", n_reloaded, runs, B.daemon_log);
        R.reload_done = true;
        R.reload_processes = p.managed;
        R.reload_runs = runs;
        R.reload_ms = run_stats(wall_ms, runs);
        R.reload_cpu_ms = run_stats(cpu_ms, runs);
        printf("SIGHUP -> READY=1: median %.1f ms, min %.1f ms, max %.1f ms; daemon CPU median %.1f ms\n",
               R.reload_ms.median, R.reload_ms.min, R.reload_ms.max, R.reload_cpu_ms.median);
}

/*
 * threads:N: N threads in processes of 1,000 (bench-probe threads), running before a new daemon
 * starts: the time from its exec to READY=1 (every thread placed by the startup scan), and its
 * memory once the settle pass is over. kernel.pid_max is raised for them if needed (restored
 * at exit).
 */
static void measure_threads(unsigned n) {
        const unsigned per = 1000, n_procs = (n + per - 1) / per;
        _cleanup_free_ pid_t *pids = calloc(n_procs, sizeof(pid_t));
        char self[16], count[16];
        MemSample mem = {};
        Props p = {};
        int64_t ns;
        pid_t pgid = 0;

        if (!pids)
                die("out of memory");
        printf("== threads: %u threads in %u processes of %u, running before the daemon starts ==\n",
               n_procs * per, n_procs, per);
        make_room(n_procs * per + arg.processes);
        snprintf(self, sizeof self, "%d", (int)getpid());
        snprintf(count, sizeof count, "%u", per);
        for (unsigned i = 0; i < n_procs; i++) {
                int out[2];
                char buf[8];
                posix_spawn_file_actions_t fa;
                posix_spawnattr_t attr;
                char *argv[] = {B.probe_name, (char *)"threads", count, self, NULL};
                int r;

                if (pipe2(out, O_CLOEXEC) < 0)
                        die("pipe: %m");
                posix_spawn_file_actions_init(&fa);
                posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
                posix_spawnattr_init(&attr);
                posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
                posix_spawnattr_setpgroup(&attr, pgid);
                r = posix_spawn(&pids[i], B.probe_path, &fa, &attr, argv, (char *[]){NULL});
                posix_spawn_file_actions_destroy(&fa);
                posix_spawnattr_destroy(&attr);
                close(out[1]);
                if (r != 0)
                        die("posix_spawn %s: %s", B.probe_path, strerror(r));
                if (pgid == 0)
                        pgid = B.threads_pgid = pids[0];
                if (read(out[0], buf, sizeof buf) != 6)
                        die("bench-probe threads %u did not get ready", per);
                close(out[0]);
        }

        ns = start_daemon("threads");
        get_props(&p);
        sleep_ns(2500 * NSEC_PER_MSEC); /* the settle pass of every process is over */
        sample_mem(B.daemon_pid, &mem);
        stop_daemon();
        (void)kill(-pgid, SIGKILL);
        for (unsigned i = 0; i < n_procs; i++)
                (void)waitpid(pids[i], NULL, 0);
        B.threads_pgid = 0;

        R.threads_done = true;
        R.threads_n = n_procs * per;
        R.threads_ready_ms = (double)ns / 1e6;
        R.mem_threads = mem;
        printf("exec -> READY=1 %.1f ms; ManagedProcesses %u\n", R.threads_ready_ms, p.managed);
        print_mem("with them tracked", &mem);
}

static void run_measurement(const char *t) {
        if (streq(t, "idle"))
                measure_idle();
        else if (strncmp(t, "rate:", 5) == 0 && atoi(t + 5) > 0)
                measure_rate((unsigned)atoi(t + 5));
        else if (strncmp(t, "floor:", 6) == 0 && atoi(t + 6) > 0)
                measure_floor((unsigned)atoi(t + 6));
        else if (strncmp(t, "threads:", 8) == 0 && atoi(t + 8) > 0)
                measure_threads((unsigned)atoi(t + 8));
        else if (strncmp(t, "placer:", 7) == 0 && atoi(t + 7) > 0)
                measure_placer((unsigned)atoi(t + 7));
        else if (streq(t, "rss"))
                measure_rss();
        else if (streq(t, "startup"))
                measure_startup();
        else if (streq(t, "reload"))
                measure_reload();
        else
                die("unknown measurement \"%s\"; see --help", t);
}

static const char *target_for(unsigned rate, const char *target) {
        return rate == 1000 ? target : "—";
}

static void print_summary(void) {
        char b1[32], b2[32], b3[32];

        printf("\n== summary (the targets of docs/performance.md, for this 2-CPU machine) ==\n");
        printf("| measurement | target | measured |\n|---|---|---|\n");
        if (arg.policies > 1) {
                unsigned globs = 0;

                for (unsigned i = 0; i + 1 < arg.policies; i++)
                        globs += extra_is_glob(i);
                printf("| policies loaded (\"bench\" last) | — | %u: %u literal comm:, %u prefixed globs, 1 "
                       "cmdline: only, then \"bench\" |\n",
                       arg.policies, arg.policies - 2 - globs, globs);
        }
        for (size_t i = 0; i < R.n_rates; i++) {
                const RateResult *r = &R.rates[i];

                printf("| %u execs/s (achieved %.0f/s): placed before main() | — | %.1f%% |\n", r->rate,
                       r->achieved_rate, 100.0 * r->n_before_main / r->n);
                printf("| %u execs/s: never placed within %u ms | %s | %u of %u |\n", r->rate, arg.bound_ms,
                       target_for(r->rate, "0"), r->n_never, r->n);
                printf("| %u execs/s: unplaced window p50 / p99 / max | %s | %s / %s / %s |\n", r->rate,
                       target_for(r->rate, "p99 ≤ 5 ms"), fmt_ns(b1, sizeof b1, r->p50_ns),
                       fmt_ns(b2, sizeof b2, r->p99_ns), fmt_ns(b3, sizeof b3, r->max_ns));
                printf("| %u execs/s: daemon latency p50 / p99 / max | — | %" PRIu64 " / %" PRIu64
                       " / %" PRIu64 " µs |\n",
                       r->rate, r->d_p50_us, r->d_p99_us, r->d_max_us);
                printf("| %u execs/s: daemon CPU per exec (fork + exec + exit handled) | ≤ 10 µs | %.1f µs "
                       "(/proc/PID/stat: %.0f µs",
                       r->rate, r->cpu_ns_per_exec / 1e3, r->cpu_stat_ns_per_exec / 1e3);
                if (r->perf_ns_per_exec >= 0)
                        printf("; perf stat: %.1f µs", r->perf_ns_per_exec / 1e3);
                printf(") |\n");
                printf("| %u execs/s: the bus daemon's CPU per exec (the daemon's signals routed) | — | "
                       "%.1f "
                       "µs |\n",
                       r->rate, r->bus_ns_per_exec / 1e3);
                printf("| %u execs/s: daemon CPU per proc connector event (%" PRIu64
                       " events, %.0f%% from other processes) | — | %.1f µs |\n",
                       r->rate, r->events, 100.0 * r->foreign_share, r->cpu_ns_per_event / 1e3);
                if (r->ir_per_exec >= 0)
                        printf("| %u execs/s: daemon instructions per exec (callgrind) | — | %.0f |\n",
                               r->rate, r->ir_per_exec);
        }
        for (size_t i = 0; i < R.n_placers; i++) {
                const RateResult *pl = &R.placers[i];
                const RateResult *d = NULL;

                for (size_t k = 0; k < R.n_rates; k++)
                        if (R.rates[k].rate == pl->rate)
                                d = &R.rates[k];
                printf("| %u execs/s: the minimal placer: CPU per exec; unplaced window p99; placed before "
                       "main() | — | %.1f µs; %s; %.1f%% |\n",
                       pl->rate, pl->cpu_ns_per_exec / 1e3, fmt_ns(b2, sizeof b2, pl->p99_ns),
                       100.0 * pl->n_before_main / pl->n);
                if (d && pl->cpu_ns_per_exec > 0)
                        printf("| %u execs/s: daemon + bus daemon CPU per exec / the minimal placer's | ≤ "
                               "1.5x | "
                               "%.2fx (%.1f + %.1f µs / %.1f µs) |\n",
                               pl->rate, (d->cpu_ns_per_exec + d->bus_ns_per_exec) / pl->cpu_ns_per_exec,
                               d->cpu_ns_per_exec / 1e3, d->bus_ns_per_exec / 1e3,
                               pl->cpu_ns_per_exec / 1e3);
                if (d && pl->p99_ns > 0 && pl->p99_ns != INT64_MAX && d->p99_ns != INT64_MAX)
                        printf("| %u execs/s: unplaced window p99, the daemon's / the minimal placer's | ≤ "
                               "1.5x | "
                               "%.2fx |\n",
                               pl->rate, (double)d->p99_ns / (double)pl->p99_ns);
        }
        for (size_t i = 0; i < R.n_floors; i++)
                printf("| %u execs/s: a bare proc connector listener (the floor): CPU per exec / per event "
                       "(%.0f%% of the events from other processes) | — | %.1f / %.1f µs |\n",
                       R.floors[i].rate, 100.0 * R.floors[i].foreign_share, R.floors[i].ns_per_exec / 1e3,
                       R.floors[i].ns_per_event / 1e3);
        if (R.idle_done)
                printf("| idle: daemon wakeups (no timer configured) | 0/s of its own | %.3f/s: %" PRIu64
                       " in %.0f s, "
                       "%" PRIu64 " proc events received; a bare listener got %" PRIu64
                       " events and woke %" PRIu64 " times; %u of %u timerfds armed |\n",
                       (double)R.idle_wakeups / R.idle_seconds, R.idle_wakeups, R.idle_seconds,
                       R.idle_events, R.idle_listener_events, R.idle_listener_wakeups, R.idle_timerfds_armed,
                       R.idle_timerfds);
        if (R.rss_done)
                printf("| RSS with %u tracked processes | ≤ 8 MiB | VmRSS %.2f MiB, Pss %.2f MiB (0 "
                       "tracked: "
                       "%.2f / %.2f MiB) |\n",
                       R.mem_n_processes, R.mem_n.rss_kb / 1024.0, R.mem_n.pss_kb / 1024.0,
                       R.mem0.rss_kb / 1024.0, R.mem0.pss_kb / 1024.0);
        if (R.startup_done) {
                printf("| startup scan of %u processes | ≤ 250 ms | exec → READY=1: median %.1f ms of %u "
                       "runs "
                       "(%.1f–%.1f); logged scan time \"in %ld ms\" |\n",
                       R.startup_processes, R.startup_ready_ms, R.startup_runs, R.startup_ready_min_ms,
                       R.startup_ready_max_ms, R.startup_log_ms);
                printf("| startup scan against the minimal scan (bench-scan), same processes | ≤ 2x | "
                       "%.1f ms / %.1f ms = %.2fx |\n",
                       R.startup_ready_ms, R.startup_scan_ms, R.startup_ready_ms / R.startup_scan_ms);
                printf("| restart with the records of %u processes (every process to place again) | — | "
                       "exec → READY=1 %.1f ms |\n",
                       R.startup_processes, R.restart_ms);
                printf("| RSS after the startup scan of %u processes | ≤ 8 MiB | VmRSS %.2f MiB, Pss %.2f "
                       "MiB |\n",
                       R.startup_processes, R.mem_startup.rss_kb / 1024.0, R.mem_startup.pss_kb / 1024.0);
        }
        if (R.threads_done)
                printf("| %u tracked threads (startup scan; memory after the settle pass) | reported | "
                       "exec → READY=1 %.1f ms; VmRSS %.2f MiB, Pss %.2f MiB |\n",
                       R.threads_n, R.threads_ready_ms, R.mem_threads.rss_kb / 1024.0,
                       R.mem_threads.pss_kb / 1024.0);
        if (R.reload_done)
                printf("| reload (SIGHUP → READY=1) of %u policies, %u processes managed | — | median %.1f "
                       "ms "
                       "of %u runs (%.1f–%.1f); daemon CPU median %.1f ms |\n",
                       arg.policies, R.reload_processes, R.reload_ms.median, R.reload_runs, R.reload_ms.min,
                       R.reload_ms.max, R.reload_cpu_ms.median);
}

/* ---- setup ---- */

/* $env, else NAME next to our own executable (the build directory); newly allocated. */
static char *default_helper(const char *env, const char *name) {
        const char *d = getenv(env);
        char self[PATH_MAX];
        ssize_t n;
        char *slash;

        if (d)
                return xasprintf("%s", d);
        n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n < 0)
                return NULL;
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (!slash)
                return NULL;
        *slash = '\0';
        return xasprintf("%s/%s", self, name);
}

static void setup(void) {
        char tmpl[] = "/tmp/affinityd-bench-XXXXXX";
        _cleanup_free_ char *bin = NULL, *pd = NULL;
        uint8_t rnd[8];
        char name[16];

        if (!mkdtemp(tmpl))
                die("mkdtemp: %m");
        B.dir = xasprintf("%s", tmpl);
        (void)chmod(B.dir, 0755);

        /* "afbp" + 8 random [a-z0-9]: a comm nothing else on the machine has. */
        if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
                die("getrandom: %m");
        strcpy(name, "afbp");
        for (size_t i = 0; i < 8; i++)
                name[4 + i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rnd[i] % 36];
        name[12] = '\0';
        B.probe_name = xasprintf("%s", name);

        bin = xasprintf("%s/bin", B.dir);
        if (mkdir(bin, 0755) < 0)
                die("mkdir: %m");
        B.probe_path = xasprintf("%s/%s", bin, B.probe_name);
        {
                /* A copy under the unique name. */
                struct stat st;
                _cleanup_close_ int in = open(arg.probe, O_RDONLY | O_CLOEXEC);
                _cleanup_close_ int out = open(B.probe_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
                char buf[65536];
                ssize_t k;
                if (in < 0 || out < 0 || fstat(in, &st) < 0)
                        die("can't copy %s to %s: %m", arg.probe, B.probe_path);
                while ((k = read(in, buf, sizeof buf)) > 0)
                        if (write(out, buf, (size_t)k) != k)
                                die("write %s: %m", B.probe_path);
                if (k < 0)
                        die("read %s: %m", arg.probe);
        }

        B.config_dir = xasprintf("%s/config", B.dir);
        pd = xasprintf("%s/policy.d", B.config_dir);
        if (mkdir(B.config_dir, 0755) < 0 || mkdir(pd, 0755) < 0)
                die("mkdir: %m");
        write_policy();
}

static void help(void) {
        printf("Usage: bench-affinityd [OPTIONS...] [MEASUREMENT...]\n"
               "Measurements: all (default) | idle | rate:N | floor:N | placer:N | rss | startup | reload "
               "|\n"
               "              threads:N\n"
               "Options: --daemon=PATH --probe=PATH --listener=PATH --count=N --processes=N\n"
               "         --idle-seconds=S --bound-ms=MS --match=comm|exe|cmdline --hostile=N\n"
               "         --hostile-regex=RE --hostile-cpu=N --bus-flood=N --flood-threads=N --perf\n"
               "         --perf-record=FILE --callgrind --startup-runs=N --attempts=N --keep --quick "
               "--state-dir=DIR\n"
               "         --policies=N\n"
               "See the comment at the top of tests/bench/bench-affinityd.c and docs/performance.md.\n");
}

int main(int argc, char *argv[]) {
        enum {
                ARG_DAEMON = 0x100,
                ARG_PROBE,
                ARG_LISTENER,
                ARG_STARTUP_RUNS,
                ARG_ATTEMPTS,
                ARG_COUNT,
                ARG_PROCESSES,
                ARG_IDLE,
                ARG_BOUND,
                ARG_MATCH,
                ARG_PERF,
                ARG_PERF_RECORD,
                ARG_CALLGRIND,
                ARG_KEEP,
                ARG_STATE_DIR,
                ARG_QUICK,
                ARG_HOSTILE,
                ARG_HOSTILE_REGEX,
                ARG_HOSTILE_CPU,
                ARG_BUS_FLOOD,
                ARG_FLOOD_THREADS,
                ARG_POLICIES,
        };
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"daemon", required_argument, NULL, ARG_DAEMON},
                {"probe", required_argument, NULL, ARG_PROBE},
                {"listener", required_argument, NULL, ARG_LISTENER},
                {"startup-runs", required_argument, NULL, ARG_STARTUP_RUNS},
                {"attempts", required_argument, NULL, ARG_ATTEMPTS},
                {"count", required_argument, NULL, ARG_COUNT},
                {"processes", required_argument, NULL, ARG_PROCESSES},
                {"idle-seconds", required_argument, NULL, ARG_IDLE},
                {"bound-ms", required_argument, NULL, ARG_BOUND},
                {"match", required_argument, NULL, ARG_MATCH},
                {"hostile", required_argument, NULL, ARG_HOSTILE},
                {"hostile-regex", required_argument, NULL, ARG_HOSTILE_REGEX},
                {"hostile-cpu", required_argument, NULL, ARG_HOSTILE_CPU},
                {"bus-flood", required_argument, NULL, ARG_BUS_FLOOD},
                {"flood-threads", required_argument, NULL, ARG_FLOOD_THREADS},
                {"policies", required_argument, NULL, ARG_POLICIES},
                {"perf", no_argument, NULL, ARG_PERF},
                {"perf-record", required_argument, NULL, ARG_PERF_RECORD},
                {"callgrind", no_argument, NULL, ARG_CALLGRIND},
                {"keep", no_argument, NULL, ARG_KEEP},
                {"state-dir", required_argument, NULL, ARG_STATE_DIR},
                {"quick", no_argument, NULL, ARG_QUICK},
                {},
        };
        const char *const all[] = {"idle",       "rate:200",   "rate:1000",   "rate:5000", "floor:200",
                                   "floor:1000", "floor:5000", "placer:1000", "rss",       "startup"};
        const char *const *todo;
        size_t n_todo;
        int c;

        setvbuf(stdout, NULL, _IOLBF, 0);
        arg.daemon = getenv("AFFINITYD_BIN");
        arg.probe = default_helper("AFFINITYD_BENCH_PROBE", "bench-probe");
        arg.listener = default_helper("AFFINITYD_BENCH_LISTENER", "bench-listener");
        arg.scan = default_helper("AFFINITYD_BENCH_SCAN", "bench-scan");
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_DAEMON:
                        arg.daemon = optarg;
                        break;
                case ARG_PROBE:
                        arg.probe = optarg;
                        break;
                case ARG_LISTENER:
                        arg.listener = optarg;
                        break;
                case ARG_STARTUP_RUNS:
                        arg.startup_runs = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_ATTEMPTS:
                        arg.attempts = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_COUNT:
                        arg.count = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_PROCESSES:
                        arg.processes = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_IDLE:
                        arg.idle_seconds = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_BOUND:
                        arg.bound_ms = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_MATCH:
                        arg.match = optarg;
                        break;
                case ARG_HOSTILE_REGEX:
                        arg.hostile_regex = optarg;
                        break;
                case ARG_HOSTILE_CPU:
                        arg.hostile_cpu = (int)strtol(optarg, NULL, 10);
                        break;
                case ARG_BUS_FLOOD:
                        arg.bus_flood = (unsigned)strtoul(optarg, NULL, 10);
                        arg.attempts = 1; /* the flood's events are foreign by design */
                        break;
                case ARG_FLOOD_THREADS:
                        arg.flood_threads = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_POLICIES:
                        arg.policies = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case ARG_HOSTILE:
                        arg.hostile = (unsigned)strtoul(optarg, NULL, 10);
                        arg.attempts = 1; /* the hostile loops' events are foreign by design */
                        break;
                case ARG_PERF:
                        arg.perf = true;
                        break;
                case ARG_PERF_RECORD:
                        arg.perf_record = optarg;
                        break;
                case ARG_CALLGRIND:
                        arg.callgrind = true;
                        break;
                case ARG_KEEP:
                        arg.keep = true;
                        break;
                case ARG_STATE_DIR:
                        arg.state_dir = optarg;
                        break;
                case ARG_QUICK:
                        arg.count = 500;
                        arg.processes = 2000;
                        arg.idle_seconds = 10;
                        arg.startup_runs = 2;
                        break;
                default:
                        return 2;
                }
        if (arg.count < 2 || arg.processes < 1 || arg.bound_ms < 1 || arg.startup_runs < 1 ||
            arg.attempts < 1 || arg.policies < 1 || arg.policies > 100000) {
                fprintf(stderr,
                        "bench-affinityd: --count must be >= 2, --processes, --bound-ms, "
                        "--startup-runs, --attempts >= 1, --policies 1..100000\n");
                return 2;
        }
        if (!arg.daemon || access(arg.daemon, X_OK) < 0 || !arg.probe || access(arg.probe, R_OK) < 0 ||
            !arg.listener || access(arg.listener, X_OK) < 0) {
                fprintf(stderr,
                        "bench-affinityd: need --daemon (or AFFINITYD_BIN), --probe and --listener; "
                        "see --help\n");
                return 2;
        }
        if (geteuid() != 0) {
                printf("SKIP: the benchmark places real processes and reads the daemon's /proc: needs "
                       "root\n");
                return 77;
        }
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
                printf("SKIP: the benchmark moves processes from CPU 0 to CPU 1: needs 2 CPUs\n");
                return 77;
        }

        if (optind < argc) {
                todo = (const char *const *)argv + optind;
                n_todo = (size_t)(argc - optind);
        } else {
                todo = all;
                n_todo = ELEMENTSOF(all);
        }

        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGPIPE, SIG_IGN);
        setup();
        printf("affinityd: %s; probe: %s as %s; policy: match %s, cpus \"1\", %u of %u in file order; "
               "probes "
               "start on every CPU%s\n",
               arg.daemon, arg.probe, B.probe_name, arg.match, arg.policies, arg.policies,
               arg.callgrind ? "; daemon under callgrind" : "");

        for (size_t i = 0; i < n_todo; i++) {
                const char *t = todo[i];
                if (streq(t, "all"))
                        for (size_t k = 0; k < ELEMENTSOF(all); k++)
                                run_measurement(all[k]);
                else
                        run_measurement(t);
        }
        print_summary();
        cleanup();
        return 0;
}
