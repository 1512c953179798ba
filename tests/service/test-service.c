/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityd as a real systemd service. Boots this machine's own systemd in a container
 * (systemd-nspawn -D / --volatile=yes: a tmpfs root with the host's /usr), installs the build
 * into it with `meson install --destdir` (the staged /usr laid over the host's /usr with
 * --overlay-ro, a staged /etc copied in), and drives it from the host through
 * `nsenter -t PID1 -a` with the tools an operator uses: systemctl, systemd-analyze, busctl,
 * dbus-send, journalctl.
 *
 * Inside a new PID namespace the proc connector does not work, so the daemon discovers
 * processes by polling /proc there (Discovery=polling): placements of processes started after
 * the daemon are waited for, with a deadline that is a failure bound, not a timing assertion.
 *
 * The probe is a copy of sleep(1) named affinityd-probe (its comm), in /opt/affinityd-test
 * (bound read-only from the host), run as nobody, so the policy's comm:, exe: and user:
 * matchers and the daemon's CAP_SYS_NICE / CAP_SYS_PTRACE towards another user's process all
 * take part. One probe runs under SCHED_DEADLINE: the kernel refuses to narrow such a task's
 * affinity (EBUSY), which gives a real placement failure and its journal fields.
 *
 * The container is booted once (an unchecked fixture) and the tests run in order, each one
 * building on the state the previous ones left (daemon started, probes running, reloaded,
 * stopped). It is always torn down by SIGTERM to systemd-nspawn (the container powers off);
 * if this program dies first, PR_SET_PDEATHSIG sends that SIGTERM.
 *
 * Environment: AFFINITYD_BUILD_ROOT, AFFINITYD_SOURCE_ROOT, MESON, AFFINITYD_SANITIZE (set by
 * meson). SERVICE_TEST_KEEP=1 keeps the work directory (staging tree, nspawn log).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bus-names.h"
#include "config.h"
#include "macro.h"

#define USEC_PER_SEC UINT64_C(1000000)
/* Failure bounds of the waits (in the container the daemon polls /proc once a second). */
#define BOOT_TIMEOUT_USEC     (120 * USEC_PER_SEC)
#define WAIT_TIMEOUT_USEC     (30 * USEC_PER_SEC)
#define POWEROFF_TIMEOUT_USEC (60 * USEC_PER_SEC)
/* sd-event pings between 1/2 and 3/4 of WatchdogSec= (30 s in the unit). */
#define WATCHDOG_TIMEOUT_USEC (40 * USEC_PER_SEC)

#define UNIT            "affinityd.service"
#define METRICS_SOCKET  "affinityd-metrics.socket"
#define METRICS_SERVICE "affinityd-metrics.service"
#define PROBE_DIR       "/opt/affinityd-test"
#define STAGING_DIR     "/opt/affinityd-staging"
#define PROBE_EXE       PROBE_DIR "/affinityd-probe"
#define PROBE_COMM      "affinityd-probe"
/* The configuration directory the build reads (config.h, from meson's prefix and sysconfdir):
 * /etc/affinityd when built as distributions do, /usr/local/etc/affinityd with meson's default
 * prefix. Below /usr it would be read-only in the container (the overlay): a tmpfs is put there. */
#define CONF_DIR    AFFINITYD_CONF_DIR
#define POLICY_FILE CONF_DIR "/policy.d/50-probe.yaml"
#define BUS_ARGS    AFFINITYD_BUS_NAME " " AFFINITYD_BUS_PATH " " AFFINITYD_BUS_INTERFACE
/* Runs the rest of a shell command as nobody/nogroup, without supplementary groups. */
#define AS_NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups "
/* The journal MESSAGE_IDs of daemon/log.h, spelled out: they are a documented, stable interface
 * (affinityd(8)) that scripts match on, so the test checks the values themselves. */
#define AFFINITYD_MESSAGE_STARTED          "52147dbbc21d471cb0b1f8e143e1c430"
#define AFFINITYD_MESSAGE_STOPPED          "56f2f7494edd45eba7d4c9c6aa01107e"
#define AFFINITYD_MESSAGE_PROCESS_PLACED   "f3ef3557485149bfbdce989b86b57403"
#define AFFINITYD_MESSAGE_PLACEMENT_FAILED "c954a3e220b0424fac32c12acb6b5088"
#define AFFINITYD_MESSAGE_RELOADED         "0df1d9ba4bc04958ac5b2d1221319721"
#define AFFINITYD_MESSAGE_RELOAD_FAILED    "6e10ac077b6746df89e7bc3ba6c425e3"
/* How the daemon's messages we look for begin. */
#define POLICY_PREFIX  "Policy probe: CPUs "
#define FAILURE_PREFIX "Failed to set affinity of " PROBE_COMM "["

typedef struct Container {
        char *work;    /* host directory holding the three below */
        char *staging; /* meson install --destdir; bound at STAGING_DIR */
        char *share;   /* the probe and the policy variants; bound at PROBE_DIR */
        char *log;     /* systemd-nspawn's output (the container's console) */
        pid_t nspawn;
        pid_t leader;     /* the container's PID 1 (its systemd), as the host sees it */
        char *cursor;     /* the container's journal when the tests begin */
        char error[1024]; /* why the fixture failed; "" if it did not */
} Container;

static Container container = {.nspawn = -1, .leader = -1};

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static void sleep_usec(uint64_t usec) {
        struct timespec ts = {.tv_sec = usec / USEC_PER_SEC, .tv_nsec = (usec % USEC_PER_SEC) * 1000};

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static char *strip(char *s) {
        size_t l = strlen(s);

        while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == ' '))
                s[--l] = '\0';
        return s;
}

static char *xasprintf(const char *format, ...) _printf_(1, 2);
static char *xasprintf(const char *format, ...) {
        char *s = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&s, format, ap) < 0)
                abort();
        va_end(ap);
        return s;
}

/* ---- running programs ---- */

/*
 * Runs argv (PATH lookup) with stdin from /dev/null, stdout and stderr captured together into
 * *ret_output (may be NULL). Returns the exit status (128 + signal if killed), or -errno.
 */
static int run_argv(char *const argv[], char **ret_output) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, size = 0;
        int pipefd[2], status;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(pipefd[0]);
                close(pipefd[1]);
                return r;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(pipefd[1], STDOUT_FILENO) < 0 ||
                    dup2(pipefd[1], STDERR_FILENO) < 0)
                        _exit(127);
                execvp(argv[0], argv);
                _exit(127);
        }
        close(pipefd[1]);
        for (;;) {
                ssize_t k;

                if (n + 4096 + 1 > size) {
                        char *p = realloc(buf, size = MAX(size * 2, (size_t)8192));
                        if (!p)
                                abort();
                        buf = p;
                }
                k = read(pipefd[0], buf + n, size - n - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        close(pipefd[0]);
        buf[n] = '\0';
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (ret_output)
                *ret_output = TAKE_PTR(buf);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs a shell command (printf format) inside the container, as root. As run_argv(). */
static int in_container(char **ret_output, const char *format, ...) _printf_(2, 3);
static int in_container(char **ret_output, const char *format, ...) {
        _cleanup_free_ char *cmd = NULL;
        char leader[32];
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&cmd, format, ap) < 0)
                abort();
        va_end(ap);
        snprintf(leader, sizeof(leader), "%d", (int)container.leader);
        return run_argv(
                (char *[]){"nsenter", "-t", leader, "-a", "--", "/bin/sh", "-c", cmd, NULL}, ret_output);
}

/* in_container() that must exit 0; returns its output without trailing newlines. */
static char *checked(const char *format, ...) _printf_(1, 2);
static char *checked(const char *format, ...) {
        _cleanup_free_ char *cmd = NULL;
        char *out = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        if (vasprintf(&cmd, format, ap) < 0)
                abort();
        va_end(ap);
        r = in_container(&out, "%s", cmd);
        ck_assert_msg(r == 0, "exit status %d: %s\n%s", r, cmd, strna(out));
        return strip(out);
}

#define CHECKED(...) checked(__VA_ARGS__)

static uint64_t parse_u64(const char *what, const char *s) {
        char *end = NULL;
        uint64_t u;

        errno = 0;
        u = strtoull(s, &end, 10);
        ck_assert_msg(
                errno == 0 && end && end != s && (*end == '\0' || *end == '\n'), "%s: \"%s\"", what, s);
        return u;
}

/* One property of a unit, as `systemctl show -p NAME --value` prints it. */
static char *unit_property(const char *unit, const char *property) {
        return CHECKED("systemctl show -p %s --value %s", property, unit);
}

static uint64_t unit_property_u64(const char *unit, const char *property) {
        _cleanup_free_ char *v = unit_property(unit, property);
        return parse_u64(property, v);
}

static pid_t unit_main_pid(const char *unit) {
        pid_t pid = (pid_t)unit_property_u64(unit, "MainPID");

        ck_assert_msg(pid > 0, "%s has no main process", unit);
        return pid;
}

static void assert_unit_state(const char *unit, const char *active, const char *sub) {
        _cleanup_free_ char *a = unit_property(unit, "ActiveState"), *s = unit_property(unit, "SubState");

        ck_assert_msg(
                streq(a, active) && streq(s, sub), "%s is %s (%s), expected %s (%s)", unit, a, s, active,
                sub);
}

/* A property of the daemon's Manager object on the container's system bus, as busctl prints it
 * ("s \"running\"", "t 42"). */
static char *bus_property(const char *property) {
        return CHECKED("busctl get-property " BUS_ARGS " %s", property);
}

static uint64_t bus_property_u64(const char *property) {
        _cleanup_free_ char *v = bus_property(property);
        uint64_t u;

        ck_assert_msg(sscanf(v, "%*s %" SCNu64, &u) == 1, "%s: \"%s\"", property, v);
        return u;
}

/* A field of /proc/PID/status of a process in the container ("Cpus_allowed_list"). */
static char *proc_status_field(pid_t pid, const char *field) {
        _cleanup_free_ char *out = NULL;
        char *p, *e;

        if (in_container(&out, "cat /proc/%d/status", (int)pid) != 0)
                return NULL; /* gone */
        for (p = out; p; p = strchr(p, '\n')) {
                p += *p == '\n';
                if (strncmp(p, field, strlen(field)) == 0 && p[strlen(field)] == ':') {
                        p += strlen(field) + 1;
                        p += strspn(p, " \t");
                        e = strchrnul(p, '\n');
                        return strndup(p, (size_t)(e - p));
                }
        }
        return NULL;
}

static char *cpus_allowed(pid_t pid) {
        char *c = proc_status_field(pid, "Cpus_allowed_list");

        ck_assert_msg(c, "cannot read the affinity of process %d in the container", (int)pid);
        return c;
}

/* Waits until process pid is allowed exactly the cpu-list cpus. */
static void wait_for_cpus(pid_t pid, const char *cpus) {
        uint64_t deadline = now_usec() + WAIT_TIMEOUT_USEC;
        _cleanup_free_ char *now = NULL;

        for (;;) {
                free(now);
                now = cpus_allowed(pid);
                if (streq(now, cpus))
                        return;
                ck_assert_msg(
                        now_usec() < deadline, "process %d still on CPUs %s, not %s, after %" PRIu64 " s",
                        (int)pid, now, cpus, WAIT_TIMEOUT_USEC / USEC_PER_SEC);
                sleep_usec(USEC_PER_SEC / 10);
        }
}

/* Starts the probe as a transient service running as nobody; returns its PID. prefix goes
 * before the probe on the command line (e.g. chrt). */
static pid_t start_probe(const char *unit, const char *prefix) {
        _cleanup_free_ char *out = NULL;

        if (prefix)
                out = CHECKED("systemd-run -q --unit=%s %s " AS_NOBODY PROBE_EXE " infinity", unit, prefix);
        else
                out = CHECKED(
                        "systemd-run -q --unit=%s --uid=65534 --gid=65534 " PROBE_EXE " infinity", unit);
        return unit_main_pid(unit);
}

/* ---- the container ---- */

static void fixture_error(const char *format, ...) _printf_(1, 2);
static void fixture_error(const char *format, ...) {
        va_list ap;

        if (container.error[0])
                return; /* the first error is the one that matters */
        va_start(ap, format);
        vsnprintf(container.error, sizeof(container.error), format, ap);
        va_end(ap);
        fprintf(stderr, "test-service setup: %s\n", container.error);
}

static int write_file(const char *path, const char *content) {
        _cleanup_fclose_ FILE *f = fopen(path, "we");

        if (!f)
                return -errno;
        fputs(content, f);
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

static char *read_file(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *s = NULL;
        size_t n = 0;

        if (!f || getdelim(&s, &n, '\0', f) < 0) {
                free(s);
                return NULL;
        }
        return s;
}

/* The policy the tests install: the probe, by comm, exe and user, on cpus. typo: "cpu:". */
static char *policy_text(const char *cpus, bool typo) {
        return xasprintf(
                "# written by tests/service/test-service.c\n"
                "policies:\n"
                "  - name: probe\n"
                "    match:\n"
                "      comm: " PROBE_COMM "\n"
                "      exe: \"" PROBE_DIR "/*\"\n"
                "      user: nobody\n"
                "    %s: \"%s\"\n",
                typo ? "cpu" : "cpus", cpus);
}

/* The directory bound at PROBE_DIR: the probe and the policy variants. */
static int make_share(void) {
        static const struct {
                const char *name, *cpus;
                bool typo;
        } policies[] = {
                {"policy-cpu1.yaml", "1", false},
                {"policy-cpu0.yaml", "0", false},
                {"policy-broken.yaml", "0", true},
        };
        _cleanup_free_ char *probe = xasprintf("%s/affinityd-probe", container.share), *out = NULL;
        int r;

        if (mkdir(container.share, 0755) < 0 || chmod(container.share, 0755) < 0)
                return -errno;
        r = run_argv((char *[]){"cp", "/usr/bin/sleep", probe, NULL}, &out);
        if (r != 0 || chmod(probe, 0755) < 0) {
                fixture_error("cannot copy /usr/bin/sleep to %s: %s", probe, strna(out));
                return -EIO;
        }
        for (size_t i = 0; i < ELEMENTSOF(policies); i++) {
                _cleanup_free_ char *path = xasprintf("%s/%s", container.share, policies[i].name),
                                    *text = policy_text(policies[i].cpus, policies[i].typo);
                r = write_file(path, text);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* meson install --destdir into container.staging, with bin, sbin, lib as symlinks into usr/
 * where the host has them so (merged /usr): all of /usr then comes from the overlay. */
static int stage_install(void) {
        const char *meson = getenv("MESON"), *build = getenv("AFFINITYD_BUILD_ROOT");
        _cleanup_free_ char *usr = xasprintf("%s/usr", container.staging), *out = NULL;
        int r;

        if (!build) {
                fixture_error("AFFINITYD_BUILD_ROOT is not set (run this through meson test)");
                return -EINVAL;
        }
        if (mkdir(container.staging, 0755) < 0 || mkdir(usr, 0755) < 0)
                return -errno;
        for (const char *const *l = (const char *const[]){"bin", "sbin", "lib", NULL}; *l; l++) {
                _cleanup_free_ char *host = xasprintf("/%s", *l),
                                    *link = xasprintf("%s/%s", container.staging, *l),
                                    *target = xasprintf("usr/%s", *l), *dir = xasprintf("%s/%s", usr, *l);
                struct stat st;

                if (lstat(host, &st) < 0 || !S_ISLNK(st.st_mode))
                        continue;
                if (mkdir(dir, 0755) < 0 || symlink(target, link) < 0)
                        return -errno;
        }

        r = run_argv(
                (char *[]){
                        (char *)(meson && *meson ? meson : "meson"), "install", "-C", (char *)build,
                        "--destdir", container.staging, "--no-rebuild", "--quiet", NULL},
                &out);
        if (r != 0) {
                fixture_error(
                        "meson install --destdir %s failed (%d):\n%s", container.staging, r, strna(out));
                return -EIO;
        }
        return 0;
}

/* The PID of a child of parent whose comm is comm, or 0. */
static pid_t find_child(pid_t parent, const char *comm) {
        _cleanup_closedir_ DIR *d = opendir("/proc");
        struct dirent *de;

        while (d && (de = readdir(d))) {
                _cleanup_free_ char *path = NULL, *status = NULL;
                const char *p;
                pid_t pid = (pid_t)atoi(de->d_name);

                if (pid <= 0)
                        continue;
                path = xasprintf("/proc/%d/status", (int)pid);
                status = read_file(path);
                if (!status)
                        continue;
                p = strstr(status, "\nPPid:");
                if (!p || atoi(p + strlen("\nPPid:")) != parent)
                        continue;
                if (strncmp(status, "Name:\t", 6) == 0 && strncmp(status + 6, comm, strlen(comm)) == 0 &&
                    status[6 + strlen(comm)] == '\n')
                        return pid;
        }
        return 0;
}

static void print_log_tail(void) {
        _cleanup_free_ char *out = NULL;

        if (container.log && run_argv((char *[]){"tail", "-n", "40", container.log, NULL}, &out) == 0)
                fprintf(stderr, "---- last lines of %s ----\n%s\n", container.log, out);
}

static void spawn_nspawn(void) {
        _cleanup_free_ char *machine = xasprintf("affinityd-svc-%d", (int)getpid()),
                            *machine_arg = xasprintf("--machine=%s", machine),
                            *overlay = xasprintf("--overlay-ro=/usr:%s/usr:/usr", container.staging),
                            *bind_share = xasprintf("--bind-ro=%s:" PROBE_DIR, container.share),
                            *bind_staging = xasprintf("--bind-ro=%s:" STAGING_DIR, container.staging);
        char *argv[] = {
                "systemd-nspawn",
                "-D",
                "/",
                "--volatile=yes",
                "--register=no",
                "--keep-unit",
                "-q",
                machine_arg,
                "--console=passive",
                overlay,
                bind_share,
                bind_staging,
                "-b",
                "--",
                "systemd.firstboot=off",
                NULL,
                NULL,
        };

        /* A writable configuration directory where the overlay would make it read-only: an
         * option before "-b" (the slot of "--" moves down). */
        if (strncmp(CONF_DIR, "/usr/", 5) == 0) {
                size_t b = ELEMENTSOF(argv) - 5;

                memmove(argv + b + 1, argv + b, 4 * sizeof(char *));
                argv[b] = "--tmpfs=" CONF_DIR;
        }
        pid_t parent = getpid();
        int fd;

        fd = open(container.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                fixture_error("cannot create %s: %m", container.log);
                return;
        }
        container.nspawn = fork();
        if (container.nspawn < 0) {
                fixture_error("fork: %m");
                close(fd);
                return;
        }
        if (container.nspawn == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                /* If this program dies, the container powers off. */
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                        _exit(127);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
                    dup2(fd, STDERR_FILENO) < 0)
                        _exit(127);
                execvp(argv[0], argv);
                _exit(127);
        }
        close(fd);
}

/* Boots the container and waits until its systemd has finished booting. */
static void container_boot(void) {
        const char *sanitize = getenv("AFFINITYD_SANITIZE");
        uint64_t deadline;
        _cleanup_free_ char *out = NULL;
        char template[] = "/var/tmp/affinityd-svc-XXXXXX";
        struct stat st;
        int r;

        if (!mkdtemp(template) || chmod(template, 0755) < 0) {
                fixture_error("mkdtemp: %m");
                return;
        }
        container.work = strdup(template);
        container.staging = xasprintf("%s/staging", template);
        container.share = xasprintf("%s/share", template);
        container.log = xasprintf("%s/nspawn.log", template);
        if (!container.work)
                abort();

        r = make_share();
        if (r < 0) {
                fixture_error("cannot fill %s: %s", container.share, strerror(-r));
                return;
        }
        r = stage_install();
        if (r < 0) {
                fixture_error("cannot stage the installation in %s: %s", container.staging, strerror(-r));
                return;
        }

        spawn_nspawn();
        if (container.nspawn <= 0)
                return;

        /* nspawn's child becomes the container's PID 1 and execs systemd. */
        deadline = now_usec() + BOOT_TIMEOUT_USEC;
        while ((container.leader = find_child(container.nspawn, "systemd")) <= 0) {
                int status;

                if (waitpid(container.nspawn, &status, WNOHANG) == container.nspawn) {
                        container.nspawn = -1;
                        print_log_tail();
                        fixture_error("systemd-nspawn exited before the container's systemd started");
                        return;
                }
                if (now_usec() >= deadline) {
                        print_log_tail();
                        fixture_error("the container's systemd did not start");
                        return;
                }
                sleep_usec(USEC_PER_SEC / 20);
        }

        /* Until its bus is up, systemctl fails: retry. "degraded" is fine here (some unit of
         * the host's may not start in a container); the daemon's own units are checked later. */
        for (;;) {
                out = mfree(out);
                (void)in_container(&out, "systemctl is-system-running --wait");
                if (out && (strstr(out, "running") || strstr(out, "degraded")))
                        break;
                if (now_usec() >= deadline) {
                        print_log_tail();
                        fixture_error("the container did not finish booting: %s", strna(out));
                        return;
                }
                sleep_usec(USEC_PER_SEC / 5);
        }

        /* Whatever meson installed outside /usr (with prefix /usr: /etc/affinityd). */
        out = mfree(out);
        {
                _cleanup_free_ char *etc = xasprintf("%s/etc", container.staging);

                if (stat(etc, &st) == 0 &&
                    in_container(&out, "cp -a " STAGING_DIR "/etc/. /etc/ && systemctl daemon-reload") !=
                            0) {
                        fixture_error("cannot copy the staged /etc into the container: %s", strna(out));
                        return;
                }
        }

        /* A sanitizer build's leak check at exit needs ptrace(2), which the units' system call
         * filters refuse; the sanitizers stay on otherwise. The daemon's unit and the metrics
         * service (affinityctl) alike. */
        if (sanitize && *sanitize && !streq(sanitize, "none")) {
                out = mfree(out);
                if (in_container(
                            &out,
                            "for u in " UNIT " " METRICS_SERVICE "; do "
                            "mkdir -p /etc/systemd/system/$u.d && "
                            "printf '[Service]\\nEnvironment=ASAN_OPTIONS=detect_leaks=0\\n' "
                            "> /etc/systemd/system/$u.d/sanitizer.conf || exit 1; done && "
                            "systemctl daemon-reload") != 0) {
                        fixture_error("cannot add the sanitizer drop-in: %s", strna(out));
                        return;
                }
        }

        /* Presets may have enabled the service, so it may have started at boot: the tests
         * start it themselves. */
        out = mfree(out);
        if (in_container(
                    &out,
                    "systemctl stop " UNIT " && systemctl reset-failed " UNIT " ; "
                    "mkdir -p " CONF_DIR "/policy.d") != 0) {
                fixture_error("cannot prepare the container: %s", strna(out));
                return;
        }

        /* The journal test looks at what the daemon logged from here on. */
        out = mfree(out);
        if (in_container(&out, "journalctl -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'") != 0 ||
            strip(out)[0] == '\0') {
                fixture_error("no journal cursor: %s", strna(out));
                return;
        }
        container.cursor = TAKE_PTR(out);
}

static void container_poweroff(void) {
        if (container.leader > 0 && container.nspawn > 0) {
                _cleanup_free_ char *out = NULL;

                if (in_container(
                            &out, "journalctl -u " UNIT " -o short-monotonic --no-pager | tail -n 150") == 0)
                        fprintf(stderr, "---- journal of %s in the container ----\n%s\n", UNIT, out);
        }

        if (container.nspawn > 0) {
                uint64_t deadline = now_usec() + POWEROFF_TIMEOUT_USEC;
                int status;

                /* systemd-nspawn turns SIGTERM into an orderly poweroff of the container. */
                (void)kill(container.nspawn, SIGTERM);
                while (waitpid(container.nspawn, &status, WNOHANG) == 0) {
                        if (now_usec() >= deadline) {
                                fprintf(stderr, "test-service: container did not power off, killing it\n");
                                (void)kill(container.nspawn, SIGKILL);
                                (void)waitpid(container.nspawn, &status, 0);
                                break;
                        }
                        sleep_usec(USEC_PER_SEC / 10);
                }
                container.nspawn = -1;
        }

        if (container.work) {
                const char *keep = getenv("SERVICE_TEST_KEEP");

                if (keep && streq(keep, "1"))
                        fprintf(stderr, "test-service: keeping %s\n", container.work);
                else
                        (void)run_argv(
                                (char *[]){"rm", "-rf", "--one-file-system", container.work, NULL}, NULL);
        }
        container.work = mfree(container.work);
        container.staging = mfree(container.staging);
        container.share = mfree(container.share);
        container.log = mfree(container.log);
        container.cursor = mfree(container.cursor);
}

#define REQUIRE_CONTAINER() \
        ck_assert_msg( \
                container.error[0] == '\0' && container.leader > 0, "no container: %s", container.error)

/* ---- the tests, in order ---- */

/* The journal of the unit since cursor, messages only. */
static char *journal_since(const char *cursor) {
        return CHECKED("journalctl -u " UNIT " --after-cursor='%s' -o cat --no-pager", cursor);
}

/* systemd-analyze verify is clean, and the exposure is the one docs/systemd.md reports. */
START_TEST(test_unit_files) {
        static const char marker[] = "Overall exposure level for " UNIT ": ";
        const char *source_root = getenv("AFFINITYD_SOURCE_ROOT");
        _cleanup_free_ char *verify = NULL, *security = NULL, *doc_path = NULL, *doc = NULL, *type = NULL,
                            *bus_name = NULL;
        const char *measured, *documented;
        int r;

        REQUIRE_CONTAINER();

        /* --man=no: verify would run man(1) for the Documentation= pages, which are checked by
         * the docs suite (man -l on the built pages); here only the unit itself is judged. */
        r = in_container(&verify, "systemd-analyze verify --man=no " UNIT);
        ck_assert_msg(r == 0 && strip(verify)[0] == '\0', "systemd-analyze verify (%d):\n%s", r, verify);

        type = unit_property(UNIT, "Type");
        ck_assert_str_eq(type, "notify");
        bus_name = unit_property(UNIT, "BusName");
        ck_assert_str_eq(bus_name, "org.affinityd1");

        security = CHECKED("systemd-analyze security --no-pager " UNIT);
        measured = strstr(security, marker);
        ck_assert_msg(measured, "no exposure in:\n%s", security);
        measured += strlen(marker);

        ck_assert_ptr_nonnull(source_root);
        doc_path = xasprintf("%s/docs/systemd.md", source_root);
        doc = read_file(doc_path);
        ck_assert_msg(doc, "cannot read %s", doc_path);
        documented = strstr(doc, marker);
        ck_assert_msg(documented, "%s does not record \"%s…\"", doc_path, marker);
        documented += strlen(marker);
        ck_assert_msg(
                strncmp(measured, documented, strcspn(measured, " \n")) == 0 &&
                        strcspn(measured, " \n") == strcspn(documented, " \n"),
                "exposure is %.*s, docs/systemd.md says %.*s: update the docs",
                (int)strcspn(measured, " \n"), measured, (int)strcspn(documented, " \n"), documented);
}
END_TEST

/* systemctl start returns (the unit is active) only after READY=1, which the daemon sends after
 * placing what was already running; the status line and the sandbox are in place. */
START_TEST(test_start) {
        uint64_t want_caps, leader_caps, daemon_bnd, daemon_eff;
        _cleanup_free_ char *before = NULL, *after = NULL, *cursor = NULL, *journal = NULL, *status = NULL,
                            *status_text = NULL, *line = NULL, *bnd = NULL, *eff = NULL, *nnp = NULL,
                            *seccomp = NULL, *leader_bnd = NULL;
        const char *loaded, *policy, *started;
        uint64_t deadline;
        pid_t probe, daemon;

        REQUIRE_CONTAINER();

        /* A probe running before the daemon starts: the startup scan must place it. */
        free(CHECKED("cp " PROBE_DIR "/policy-cpu1.yaml " POLICY_FILE));
        probe = start_probe("affinityd-probe-a", NULL);
        before = cpus_allowed(probe);
        ck_assert_msg(!streq(before, "1"), "the probe starts on CPUs %s already", before);

        cursor = CHECKED("journalctl -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'");
        ck_assert_msg(cursor[0], "no journal cursor");

        free(CHECKED("systemctl start " UNIT));
        after = cpus_allowed(probe);
        ck_assert_msg(
                streq(after, "1"),
                "systemctl start returned while the running probe was still on CPUs %s: READY=1 before "
                "the startup scan?",
                after);
        assert_unit_state(UNIT, "active", "running");

        /* systemd logs "Started" when READY=1 arrives: after the daemon loaded its policies. Both
         * write to the same journal socket, so the journal keeps their order. */
        deadline = now_usec() + WAIT_TIMEOUT_USEC;
        for (;;) {
                journal = mfree(journal);
                journal = journal_since(cursor);
                started = strstr(journal, "Started " UNIT);
                if (started)
                        break;
                ck_assert_msg(now_usec() < deadline, "no \"Started\" in the journal:\n%s", journal);
                sleep_usec(USEC_PER_SEC / 10);
        }
        loaded = strstr(journal, "Loaded 1 policy (");
        policy = strstr(journal, "Policy probe: CPUs 1");
        ck_assert_msg(
                loaded && policy && loaded < started && policy < started,
                "the daemon's start-up messages should precede systemd's \"Started\":\n%s", journal);

        /* systemctl status shows the STATUS= line. */
        status_text = unit_property(UNIT, "StatusText");
        ck_assert_msg(strstr(status_text, "polling /proc"), "StatusText: \"%s\"", status_text);
        (void)in_container(&status, "systemctl status --no-pager --lines=0 " UNIT);
        line = xasprintf("Status: \"%s\"", status_text);
        ck_assert_msg(strstr(status, line), "systemctl status lacks %s:\n%s", line, status);

        /* The sandbox: the capabilities are the unit's three, as far as the container has them. */
        daemon = unit_main_pid(UNIT);
        want_caps = (UINT64_C(1) << CAP_SYS_NICE) | (UINT64_C(1) << CAP_NET_ADMIN) |
                (UINT64_C(1) << CAP_SYS_PTRACE);
        leader_bnd = proc_status_field(1, "CapBnd");
        bnd = proc_status_field(daemon, "CapBnd");
        eff = proc_status_field(daemon, "CapEff");
        nnp = proc_status_field(daemon, "NoNewPrivs");
        seccomp = proc_status_field(daemon, "Seccomp");
        ck_assert(leader_bnd && bnd && eff && nnp && seccomp);
        leader_caps = strtoull(leader_bnd, NULL, 16);
        daemon_bnd = strtoull(bnd, NULL, 16);
        daemon_eff = strtoull(eff, NULL, 16);
        ck_assert_msg(
                daemon_bnd == (leader_caps & want_caps) && daemon_eff == daemon_bnd,
                "affinityd has CapBnd %s, CapEff %s; expected %016" PRIx64, bnd, eff,
                leader_caps & want_caps);
        ck_assert_str_eq(nnp, "1");
        ck_assert_str_eq(seccomp, "2");
}
END_TEST

/* A process started after the daemon is placed (by polling: Discovery=polling); a placement
 * the kernel refuses is counted. */
START_TEST(test_place_new) {
        _cleanup_free_ char *discovery = NULL, *list = NULL, *entry_a = NULL, *entry_b = NULL, *dl = NULL;
        uint64_t failures, deadline;
        pid_t a, b, d;

        REQUIRE_CONTAINER();

        discovery = bus_property("Discovery");
        ck_assert_str_eq(discovery, "s \"polling\"");

        a = unit_main_pid("affinityd-probe-a");
        b = start_probe("affinityd-probe-b", NULL);
        wait_for_cpus(b, "1");

        list = CHECKED("busctl --json=short call " BUS_ARGS " ListProcesses");
        entry_a = xasprintf("[%d,\"" PROBE_COMM "\",\"probe\",\"1\"]", (int)a);
        entry_b = xasprintf("[%d,\"" PROBE_COMM "\",\"probe\",\"1\"]", (int)b);
        ck_assert_msg(
                strstr(list, entry_a) && strstr(list, entry_b), "ListProcesses lacks %s or %s:\n%s", entry_a,
                entry_b, list);

        /* SCHED_DEADLINE: sched_setaffinity(2) to less than the root domain fails with EBUSY. */
        failures = bus_property_u64("PlacementFailures");
        d = start_probe(
                "affinityd-probe-dl",
                "chrt -d --sched-runtime 1000000 --sched-deadline 100000000 --sched-period 100000000 0");
        deadline = now_usec() + WAIT_TIMEOUT_USEC;
        while (bus_property_u64("PlacementFailures") <= failures) {
                ck_assert_msg(
                        now_usec() < deadline, "no placement failure counted for the SCHED_DEADLINE probe");
                sleep_usec(USEC_PER_SEC / 10);
        }
        dl = cpus_allowed(d);
        ck_assert_msg(!streq(dl, "1"), "the SCHED_DEADLINE probe was placed on CPUs %s", dl);
        free(CHECKED("systemctl stop affinityd-probe-dl"));
}
END_TEST

/* systemctl reload with a broken file fails and keeps the old policy running; a good one
 * returns once everything is placed anew. */
START_TEST(test_reload) {
        _cleanup_free_ char *out = NULL, *error = NULL, *policies = NULL, *ca = NULL, *cb = NULL,
                            *cleared = NULL;
        uint64_t reloads;
        pid_t daemon, a, b, c;
        int r;

        REQUIRE_CONTAINER();

        daemon = unit_main_pid(UNIT);
        a = unit_main_pid("affinityd-probe-a");
        b = unit_main_pid("affinityd-probe-b");
        reloads = bus_property_u64("Reloads");

        /* Would move everything to CPU 0, but for the typo. */
        free(CHECKED("cp " PROBE_DIR "/policy-broken.yaml " POLICY_FILE));
        r = in_container(&out, "systemctl reload " UNIT);
        ck_assert_msg(r != 0, "systemctl reload succeeded with a broken policy:\n%s", out);
        assert_unit_state(UNIT, "active", "running");
        ck_assert_int_eq(unit_main_pid(UNIT), daemon);
        ck_assert_uint_eq(bus_property_u64("Reloads"), reloads + 1);

        error = bus_property("LastReloadError");
        ck_assert_msg(
                strstr(error, POLICY_FILE ":") && strstr(error, "\\\"cpu\\\""),
                "LastReloadError does not name the file and the key: %s", error);
        policies = CHECKED("busctl --json=short call " BUS_ARGS " ListPolicies");
        ck_assert_msg(
                strstr(policies, "[\"probe\",\"" POLICY_FILE "\",") && strstr(policies, ",\"1\",\"\"]"),
                "ListPolicies after the failed reload:\n%s", policies);

        ca = cpus_allowed(a);
        cb = cpus_allowed(b);
        ck_assert_msg(
                streq(ca, "1") && streq(cb, "1"), "probes moved to %s and %s by a failed reload", ca, cb);
        c = start_probe("affinityd-probe-c", NULL);
        wait_for_cpus(c, "1"); /* placed by the old policy */

        /* The fixed file: ExecReload= returns only when the reload is done, so every probe is
         * on its new CPU by then. */
        free(CHECKED("cp " PROBE_DIR "/policy-cpu0.yaml " POLICY_FILE));
        free(CHECKED("systemctl reload " UNIT));
        assert_unit_state(UNIT, "active", "running");
        ck_assert_int_eq(unit_main_pid(UNIT), daemon);
        ck_assert_uint_eq(bus_property_u64("Reloads"), reloads + 2);
        cleared = bus_property("LastReloadError");
        ck_assert_str_eq(cleared, "s \"\"");
        for (size_t i = 0; i < 3; i++) {
                pid_t pid = (pid_t[]){a, b, c}[i];
                _cleanup_free_ char *now = cpus_allowed(pid);

                ck_assert_msg(
                        streq(now, "0"), "probe %d on CPUs %s right after systemctl reload, not 0", (int)pid,
                        now);
        }
}
END_TEST

/* busctl on the real system bus: properties and ListProcesses for root and nobody; Reload is
 * refused to nobody by the bus policy file itself. */
START_TEST(test_bus) {
        _cleanup_free_ char *version = NULL, *state = NULL, *state_nobody = NULL, *list = NULL,
                            *policies = NULL, *introspect = NULL, *denied = NULL, *entry = NULL,
                            *want = NULL, *reasons = NULL;
        uint64_t reloads;
        pid_t a;
        int r;

        REQUIRE_CONTAINER();

        version = bus_property("Version");
        want = xasprintf("s \"%s\"", PACKAGE_VERSION);
        ck_assert_str_eq(version, want);
        /* Inside the container's PID namespace discovery falls back to polling: degraded, with
         * the reason on the bus. */
        state = bus_property("State");
        ck_assert_str_eq(state, "s \"degraded\"");
        reasons = bus_property("DegradedReasons");
        ck_assert_msg(strstr(reasons, "poll"), "DegradedReasons does not name polling: %s", reasons);
        reloads = bus_property_u64("Reloads");

        a = unit_main_pid("affinityd-probe-a");
        entry = xasprintf("[%d,\"" PROBE_COMM "\",\"probe\",\"0\"]", (int)a);
        list = CHECKED("busctl --json=short call " BUS_ARGS " ListProcesses");
        ck_assert_msg(strstr(list, entry), "ListProcesses (root) lacks %s:\n%s", entry, list);

        /* Anyone may read. */
        state_nobody = CHECKED(AS_NOBODY "busctl get-property " BUS_ARGS " State");
        ck_assert_str_eq(state_nobody, "s \"degraded\"");
        free(list);
        list = CHECKED(AS_NOBODY "busctl --json=short call " BUS_ARGS " ListProcesses");
        ck_assert_msg(strstr(list, entry), "ListProcesses (nobody) lacks %s:\n%s", entry, list);
        policies = CHECKED(AS_NOBODY "busctl --json=short call " BUS_ARGS " ListPolicies");
        ck_assert_msg(strstr(policies, "\"probe\""), "ListPolicies (nobody):\n%s", policies);
        introspect = CHECKED(AS_NOBODY "busctl introspect org.affinityd1 /org/affinityd1");
        ck_assert_msg(strstr(introspect, ".Reload"), "introspection (nobody):\n%s", introspect);

        /* Only root may reload: the bus refuses before the daemon sees the call. */
        r = in_container(
                &denied,
                AS_NOBODY "dbus-send --system --print-reply --dest=org.affinityd1 "
                          "/org/affinityd1 org.affinityd1.Manager.Reload");
        ck_assert_msg(
                r != 0 && strstr(denied, "org.freedesktop.DBus.Error.AccessDenied") &&
                        strstr(denied, "Rejected send message"),
                "Reload as nobody (%d): %s", r, denied);
        ck_assert_uint_eq(bus_property_u64("Reloads"), reloads);

        free(CHECKED("busctl call " BUS_ARGS " Reload"));
        ck_assert_uint_eq(bus_property_u64("Reloads"), reloads + 1);
}
END_TEST

/*
 * The Prometheus endpoint as a host runs it: the socket unit listens on 9187, the first scrape
 * starts affinityctl metrics --listen=systemd as the unprivileged affinityd-metrics (made by
 * systemd-sysusers, as a package does), which reads the daemon as anyone may. The scrape is
 * bash's /dev/tcp: no HTTP client needed. (The container has no nsswitch.conf, so a dynamic
 * uid would not resolve, and dbus-daemon would refuse it: see affinityd-metrics.service.)
 */
START_TEST(test_metrics_socket) {
        _cleanup_free_ char *verify = NULL, *metrics = NULL, *dynamic = NULL, *user = NULL, *want = NULL;
        int r;

        REQUIRE_CONTAINER();

        r = in_container(&verify, "systemd-analyze verify --man=no " METRICS_SOCKET " " METRICS_SERVICE);
        ck_assert_msg(r == 0 && strip(verify)[0] == '\0', "systemd-analyze verify (%d):\n%s", r, verify);

        /* The user, as a package's installation makes it. */
        free(CHECKED("systemd-sysusers affinityd-metrics.conf && getent passwd affinityd-metrics"));
        free(CHECKED("systemctl start " METRICS_SOCKET));
        assert_unit_state(METRICS_SOCKET, "active", "listening");
        metrics = CHECKED("bash -c 'exec 3<>/dev/tcp/127.0.0.1/9187 && "
                          "printf \"GET /metrics HTTP/1.0\\r\\n\\r\\n\" >&3 && cat <&3'");
        ck_assert_msg(
                strstr(metrics, "HTTP/1.0 200") || strstr(metrics, "HTTP/1.1 200"), "scrape:\n%s", metrics);
        if (!strstr(metrics, "\naffinityd_up 1\n")) {
                _cleanup_free_ char *journal = NULL;

                (void)in_container(&journal, "journalctl -u " METRICS_SERVICE " -o cat --no-pager");
                ck_abort_msg("scrape:\n%s\njournal of " METRICS_SERVICE ":\n%s", metrics, strna(journal));
        }
        want = xasprintf("\naffinityd_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
        ck_assert_msg(strstr(metrics, want), "scrape lacks %s:\n%s", want, metrics);
        /* Polling in the container's PID namespace: degraded (test_bus). */
        ck_assert_msg(strstr(metrics, "\naffinityd_state{state=\"degraded\"} 1\n"), "scrape:\n%s", metrics);
        ck_assert_msg(
                strstr(metrics, "\naffinityd_policy_processes{policy=\"probe\"} "), "scrape:\n%s", metrics);

        assert_unit_state(METRICS_SERVICE, "active", "running");
        dynamic = unit_property(METRICS_SERVICE, "DynamicUser");
        ck_assert_str_eq(dynamic, "yes");
        user = CHECKED("ps -o user= -p $(systemctl show -p MainPID --value " METRICS_SERVICE ")");
        ck_assert_str_eq(user, "affinityd-metrics");

        free(CHECKED("systemctl stop " METRICS_SOCKET " " METRICS_SERVICE));
        assert_unit_state(METRICS_SERVICE, "inactive", "dead");
}
END_TEST

static void assert_clean_stop(void) {
        _cleanup_free_ char *result = NULL;

        free(CHECKED("systemctl stop " UNIT));
        assert_unit_state(UNIT, "inactive", "dead");
        result = unit_property(UNIT, "Result");
        ck_assert_str_eq(result, "success");
        ck_assert_uint_eq(unit_property_u64(UNIT, "ExecMainCode"), CLD_EXITED);
        ck_assert_uint_eq(unit_property_u64(UNIT, "ExecMainStatus"), 0);
}

/* The loop pings the watchdog; systemctl stop is clean; D-Bus activation starts it again. */
START_TEST(test_watchdog_stop_activation) {
        _cleanup_free_ char *watchdog = NULL, *policies = NULL, *active = NULL;
        uint64_t last, deadline;

        REQUIRE_CONTAINER();

        /* WatchdogTimestamp moves only on WATCHDOG=1 (the daemon never restarted: NRestarts). */
        watchdog = unit_property(UNIT, "WatchdogUSec");
        ck_assert_msg(!streq(watchdog, "0") && !streq(watchdog, "infinity"), "WatchdogUSec=%s", watchdog);
        last = unit_property_u64(UNIT, "WatchdogTimestampMonotonic");
        deadline = now_usec() + WATCHDOG_TIMEOUT_USEC;
        while (unit_property_u64(UNIT, "WatchdogTimestampMonotonic") <= last) {
                ck_assert_msg(
                        now_usec() < deadline, "no WATCHDOG=1 within %" PRIu64 " s",
                        WATCHDOG_TIMEOUT_USEC / USEC_PER_SEC);
                sleep_usec(USEC_PER_SEC / 2);
        }
        ck_assert_uint_eq(unit_property_u64(UNIT, "NRestarts"), 0);

        assert_clean_stop();

        /* The activation file: a call to the name starts the unit. */
        policies = CHECKED("busctl --json=short call " BUS_ARGS " ListPolicies");
        ck_assert_msg(strstr(policies, "\"probe\""), "ListPolicies through activation:\n%s", policies);
        deadline = now_usec() + WAIT_TIMEOUT_USEC;
        for (;;) {
                active = mfree(active);
                active = unit_property(UNIT, "ActiveState");
                if (streq(active, "active"))
                        break;
                ck_assert_msg(now_usec() < deadline, "%s is %s after activation", UNIT, active);
                sleep_usec(USEC_PER_SEC / 10);
        }
        assert_clean_stop();
}
END_TEST

typedef struct JournalEntry {
        char **fields; /* "KEY=VALUE" */
} JournalEntry;

static const char *entry_field(const JournalEntry *e, const char *key) {
        size_t l = strlen(key);

        STRV_FOREACH (f, e->fields)
                if (strncmp(*f, key, l) == 0 && (*f)[l] == '=')
                        return *f + l + 1;
        return NULL;
}

/* Parses `journalctl -o verbose`: an unindented header line per entry, then "    KEY=VALUE". */
static size_t parse_verbose(char *text, JournalEntry **ret) {
        JournalEntry *entries = NULL;
        size_t n = 0, n_fields = 0;

        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (line[0] != ' ') {
                        entries = realloc(entries, (n + 1) * sizeof(JournalEntry));
                        if (!entries)
                                abort();
                        entries[n++] = (JournalEntry){};
                        n_fields = 0;
                        continue;
                }
                if (n == 0)
                        continue;
                line += strspn(line, " ");
                entries[n - 1].fields = realloc(entries[n - 1].fields, (n_fields + 2) * sizeof(char *));
                if (!entries[n - 1].fields)
                        abort();
                entries[n - 1].fields[n_fields++] = line;
                entries[n - 1].fields[n_fields] = NULL;
        }
        *ret = entries;
        return n;
}

static void free_entries(JournalEntry *entries, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(entries[i].fields);
        free(entries);
}

/* How many of the daemon's entries carry MESSAGE_ID=id. */
static size_t count_message_id(const JournalEntry *entries, size_t n, const char *id) {
        size_t count = 0;

        for (size_t i = 0; i < n; i++)
                if (streq_ptr(entry_field(&entries[i], "SYSLOG_IDENTIFIER"), "affinityd") &&
                    streq_ptr(entry_field(&entries[i], "MESSAGE_ID"), id))
                        count++;
        return count;
}

/*
 * `journalctl -u affinityd POLICY=probe MESSAGE_ID=<process placed>`, as an operator types it in
 * the container (journald does the matching; no --after-cursor: journalctl 252 finds nothing
 * when it is combined with field matches, and only the tests' instance knows the policy
 * "probe"), gives the placements of the probes: each entry is
 * one of the policy's, with PID=, COMM= and CPUS=. Probe a was placed at start, b and c when
 * they started (all on CPU 1), and all three moved to CPU 0 by the reload: each PID has an entry
 * with CPUS=1 and one with CPUS=0, and its message names the PID.
 */
static void assert_placements_in_journal(void) {
        _cleanup_free_ char *text = NULL;
        JournalEntry *entries = NULL;
        pid_t probes[3];
        size_t n;

        probes[0] = unit_main_pid("affinityd-probe-a");
        probes[1] = unit_main_pid("affinityd-probe-b");
        probes[2] = unit_main_pid("affinityd-probe-c");

        text = CHECKED("journalctl -u " UNIT " POLICY=probe MESSAGE_ID=" AFFINITYD_MESSAGE_PROCESS_PLACED
                       " -q -o verbose --no-pager");
        n = parse_verbose(text, &entries);
        ck_assert_msg(
                n > 0,
                "journalctl -u " UNIT " POLICY=probe MESSAGE_ID=" AFFINITYD_MESSAGE_PROCESS_PLACED
                " found no placement");
        for (size_t i = 0; i < n; i++) {
                const JournalEntry *e = &entries[i];

                ck_assert_str_eq(entry_field(e, "MESSAGE_ID"), AFFINITYD_MESSAGE_PROCESS_PLACED);
                ck_assert_str_eq(entry_field(e, "POLICY"), "probe");
                ck_assert_str_eq(entry_field(e, "COMM"), PROBE_COMM);
                ck_assert_msg(
                        entry_field(e, "PID"), "placement without PID=: %s", entry_field(e, "MESSAGE"));
                ck_assert_msg(
                        entry_field(e, "CPUS"), "placement without CPUS=: %s", entry_field(e, "MESSAGE"));
        }
        for (size_t p = 0; p < ELEMENTSOF(probes); p++) {
                _cleanup_free_ char *pid = xasprintf("%d", (int)probes[p]),
                                    *bracketed = xasprintf("[%d]", (int)probes[p]);
                bool on1 = false, on0 = false;

                for (size_t i = 0; i < n; i++) {
                        const char *cpus = entry_field(&entries[i], "CPUS");

                        if (!streq_ptr(entry_field(&entries[i], "PID"), pid))
                                continue;
                        ck_assert_msg(
                                strstr(entry_field(&entries[i], "MESSAGE"), bracketed),
                                "the placement message of PID=%s does not name it: %s", pid,
                                entry_field(&entries[i], "MESSAGE"));
                        on1 = on1 || streq(cpus, "1");
                        on0 = on0 || streq(cpus, "0");
                }
                ck_assert_msg(
                        on1 && on0, "probe %s: placement on CPU 1 %s, on CPU 0 (after the reload) %s:\n%s",
                        pid, on1 ? "logged" : "missing", on0 ? "logged" : "missing", text);
        }
        free_entries(entries, n);
}

/* The daemon's messages since the tests began (an instance started at boot is not ours) carry
 * PRIORITY= and its own fields, POLICY= PID= COMM= CPUS=, and a MESSAGE_ID= per kind of event
 * (daemon/log.h, documented in affinityd(8)). */
START_TEST(test_journal) {
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ JournalEntry *entries = NULL;
        const JournalEntry *policy_entry = NULL, *failure_entry = NULL;
        size_t n, n_daemon = 0;

        REQUIRE_CONTAINER();

        text = CHECKED("journalctl -u " UNIT " --after-cursor='%s' -o verbose --no-pager", container.cursor);
        n = parse_verbose(text, &entries);

        for (size_t i = 0; i < n; i++) {
                const JournalEntry *e = &entries[i];
                const char *id = entry_field(e, "SYSLOG_IDENTIFIER"), *message = entry_field(e, "MESSAGE");

                if (!id || !streq(id, "affinityd") || !message)
                        continue;
                n_daemon++;
                /* Native protocol (JOURNAL_STREAM was recognised), with a priority. */
                ck_assert_msg(
                        entry_field(e, "PRIORITY") && streq_ptr(entry_field(e, "_TRANSPORT"), "journal"),
                        "daemon message without PRIORITY= or not native: %s", message);
                if (!policy_entry && strncmp(message, POLICY_PREFIX, strlen(POLICY_PREFIX)) == 0)
                        policy_entry = e;
                if (!failure_entry && strncmp(message, FAILURE_PREFIX, strlen(FAILURE_PREFIX)) == 0)
                        failure_entry = e;
        }
        ck_assert_msg(n_daemon > 0, "no messages of the daemon in the journal");

        /* A state message at info: which CPUs a policy got. */
        ck_assert_msg(policy_entry, "no \"Policy probe: CPUs …\" message");
        ck_assert_str_eq(entry_field(policy_entry, "PRIORITY"), "6");
        ck_assert_str_eq(entry_field(policy_entry, "POLICY"), "probe");
        ck_assert_str_eq(
                entry_field(policy_entry, "CPUS"),
                entry_field(policy_entry, "MESSAGE") + strlen(POLICY_PREFIX));

        /* The SCHED_DEADLINE probe's failure, at warning, with all four fields and the errno. */
        ck_assert_msg(failure_entry, "no placement failure message");
        {
                const char *message = entry_field(failure_entry, "MESSAGE");
                _cleanup_free_ char *pid = NULL, *cpus = NULL;
                const char *thread = strstr(message, "] thread "),
                           *to = thread ? strstr(thread, " to ") : NULL;

                pid = strndup(
                        message + strlen(FAILURE_PREFIX), strcspn(message + strlen(FAILURE_PREFIX), "]"));
                ck_assert_ptr_nonnull(to);
                cpus = strndup(to + 4, strcspn(to + 4, " "));
                ck_assert_str_eq(entry_field(failure_entry, "PRIORITY"), "4");
                ck_assert_str_eq(entry_field(failure_entry, "POLICY"), "probe");
                ck_assert_str_eq(entry_field(failure_entry, "COMM"), PROBE_COMM);
                ck_assert_str_eq(entry_field(failure_entry, "PID"), pid);
                ck_assert_str_eq(entry_field(failure_entry, "CPUS"), cpus);
                ck_assert_str_eq(entry_field(failure_entry, "ERRNO"), "16"); /* EBUSY */
                ck_assert_str_eq(
                        entry_field(failure_entry, "MESSAGE_ID"), AFFINITYD_MESSAGE_PLACEMENT_FAILED);
        }

        /* One message ID per kind of event: started by test_start and again by D-Bus activation,
         * stopped once, the good reload of test_reload succeeded and its broken one failed,
         * at err, with the diagnostics naming the file (several lines: read with -o cat; only the
         * tests' instance reloaded, so no cursor is needed). */
        {
                _cleanup_free_ char *failed_text = NULL;
                size_t started = count_message_id(entries, n, AFFINITYD_MESSAGE_STARTED),
                       stopped = count_message_id(entries, n, AFFINITYD_MESSAGE_STOPPED),
                       reloaded = count_message_id(entries, n, AFFINITYD_MESSAGE_RELOADED),
                       failed = count_message_id(entries, n, AFFINITYD_MESSAGE_RELOAD_FAILED);

                ck_assert_msg(started >= 2, "%zu messages with the STARTED message ID, expected 2", started);
                ck_assert_msg(stopped >= 1, "no message with the STOPPED message ID");
                ck_assert_msg(reloaded >= 1, "no message with the RELOADED message ID");
                ck_assert_msg(
                        failed == 1, "%zu messages with the RELOAD_FAILED message ID, expected 1", failed);
                failed_text = CHECKED("journalctl -u " UNIT " MESSAGE_ID=" AFFINITYD_MESSAGE_RELOAD_FAILED
                                      " -p err..err -q -o cat --no-pager");
                ck_assert_msg(
                        strstr(failed_text, POLICY_FILE ":"),
                        "the failed reload's message (at err) does not name " POLICY_FILE ":\n%s",
                        failed_text);
        }
        for (size_t i = 0; i < n; i++)
                free(entries[i].fields);

        assert_placements_in_journal();
}
END_TEST

/*
 * via: systemd. A service started in the container is matched by its unit;
 * the daemon, run by the shipped unit as it is, sets AllowedCPUs=1 on it through
 * SetUnitProperties on the system bus. systemctl show reads
 * the property back; EffectiveCPUs tells whether the cgroup enforces it: where it does not
 * (the hybrid hierarchy of this machine) the daemon says so and places the unit's process
 * itself. A reload without the policy resets the property and gives the process its mask back.
 */
#define VIA_UNIT        "affinityd-via-test.service"
#define VIA_POLICY_FILE CONF_DIR "/policy.d/60-via.yaml"
#define VIA_STATE_FILE  "/run/affinityd/units/" VIA_UNIT

/* The daemon's record of the unit's original properties is gone (in the container). */
static void assert_no_state_file(void) {
        _cleanup_free_ char *out = NULL;
        int r = in_container(&out, "test ! -e " VIA_STATE_FILE);
        ck_assert_msg(r == 0, VIA_STATE_FILE " still exists: %s", strna(out));
}

START_TEST(test_via_systemd) {
        _cleanup_free_ char *cursor = NULL, *original = NULL, *allowed = NULL, *effective = NULL,
                            *journal = NULL, *reset = NULL, *restored = NULL, *ineffective = NULL,
                            *state = NULL;
        pid_t pid;

        REQUIRE_CONTAINER();

        cursor = CHECKED("journalctl -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'");
        ck_assert_msg(cursor[0] != '\0', "no journal cursor");

        free(CHECKED("systemd-run -q --unit=" VIA_UNIT " -p Type=exec " PROBE_EXE " infinity"));
        pid = unit_main_pid(VIA_UNIT);
        original = cpus_allowed(pid);
        ck_assert_str_eq(original, "0-1");

        free(CHECKED("rm -f " POLICY_FILE " && printf '%%s\\n' 'policies:' '  - name: via-unit' "
                     "'    match:' '      unit: " VIA_UNIT
                     "' '    via: systemd' '    cpus: \"1\"' > " VIA_POLICY_FILE));
        /* READY=1 (the end of systemctl start) comes after the first full placement. */
        free(CHECKED("systemctl start " UNIT));
        assert_unit_state(UNIT, "active", "running");

        allowed = unit_property(VIA_UNIT, "AllowedCPUs");
        ck_assert_msg(streq(allowed, "1"), "AllowedCPUs of %s is \"%s\", not \"1\"", VIA_UNIT, allowed);
        /* The original (empty) was recorded before the first write. */
        state = CHECKED("cat " VIA_STATE_FILE);
        ck_assert_str_eq(
                state,
                "affinityd-unit 1\nunit " VIA_UNIT
                "\nallowed-cpus -\nallowed-memory-nodes -"); /* stripped */

        effective = unit_property(VIA_UNIT, "EffectiveCPUs");
        journal = journal_since(cursor);
        ineffective = xasprintf("AllowedCPUs=1 on " VIA_UNIT " is ineffective");
        if (streq(effective, "1"))
                ck_assert_msg(
                        !strstr(journal, ineffective), "EffectiveCPUs is 1 but the daemon reported:\n%s",
                        journal);
        else
                ck_assert_msg(
                        strstr(journal, ineffective),
                        "EffectiveCPUs of %s is \"%s\" and the daemon did not report it:\n%s", VIA_UNIT,
                        effective, journal);
        /* Either the cgroup or the fallback put the process on CPU 1. */
        wait_for_cpus(pid, "1");

        /* The policy removed: the property reset, the process given its mask back. */
        free(CHECKED("rm -f " VIA_POLICY_FILE));
        free(CHECKED("systemctl reload " UNIT));
        reset = unit_property(VIA_UNIT, "AllowedCPUs");
        ck_assert_msg(reset[0] == '\0', "AllowedCPUs of %s is \"%s\" after the reload", VIA_UNIT, reset);
        restored = cpus_allowed(pid);
        ck_assert_str_eq(restored, original);
        assert_no_state_file();

        /* The unit's original properties are persisted before the first write, so a
         * daemon stopped without restore-on-exit and started again without the policy sets them
         * back and removes the file. */
        free(CHECKED("printf '%%s\\n' 'policies:' '  - name: via-unit' '    match:' '      unit: " VIA_UNIT
                     "' '    via: systemd' '    cpus: \"1\"' > " VIA_POLICY_FILE));
        free(CHECKED("systemctl reload " UNIT));
        state = mfree(state);
        allowed = mfree(allowed);
        allowed = unit_property(VIA_UNIT, "AllowedCPUs");
        ck_assert_msg(
                streq(allowed, "1"), "AllowedCPUs of %s is \"%s\" after the reload", VIA_UNIT, allowed);
        state = CHECKED("cat " VIA_STATE_FILE);
        ck_assert_str_eq(
                state,
                "affinityd-unit 1\nunit " VIA_UNIT
                "\nallowed-cpus -\nallowed-memory-nodes -"); /* stripped */
        assert_clean_stop();                                 /* restore-on-exit is off: the property stays */
        allowed = mfree(allowed);
        allowed = unit_property(VIA_UNIT, "AllowedCPUs");
        ck_assert_msg(streq(allowed, "1"), "AllowedCPUs of %s is \"%s\" after the stop", VIA_UNIT, allowed);
        free(CHECKED("rm -f " VIA_POLICY_FILE));
        free(CHECKED("systemctl start " UNIT));
        assert_unit_state(UNIT, "active", "running");
        reset = mfree(reset);
        reset = unit_property(VIA_UNIT, "AllowedCPUs");
        ck_assert_msg(reset[0] == '\0', "AllowedCPUs of %s is \"%s\" after the restart", VIA_UNIT, reset);
        assert_no_state_file();
        wait_for_cpus(pid, original);

        free(CHECKED("systemctl stop " VIA_UNIT));
        assert_clean_stop();
}
END_TEST

static const char *missing_tool(void) {
        static const char *const tools[] = {"systemd-nspawn", "nsenter", "setpriv", "chrt"};

        for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
                _cleanup_free_ char *cmd = xasprintf("command -v %s >/dev/null", tools[i]);
                if (run_argv((char *[]){"/bin/sh", "-c", cmd, NULL}, NULL) != 0)
                        return tools[i];
        }
        return NULL;
}

int main(void) {
        SRunner *sr;
        Suite *s;
        TCase *tc;
        const char *tool;
        int failed;

        if (geteuid() != 0) {
                printf("SKIP: booting a container needs root\n");
                return 77;
        }
        tool = missing_tool();
        if (tool) {
                printf("SKIP: %s is not installed (systemd-nspawn: package systemd-container)\n", tool);
                return 77;
        }
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || access("/sys/devices/system/cpu/cpu1", F_OK) < 0) {
                printf("SKIP: needs CPUs 0 and 1\n");
                return 77;
        }
        /* Plain output from systemctl & co. */
        setenv("SYSTEMD_COLORS", "0", 1);
        setenv("SYSTEMD_PAGER", "cat", 1);
        setenv("LC_ALL", "C.UTF-8", 1);

        s = suite_create("service");
        tc = tcase_create("nspawn");
        tcase_add_unchecked_fixture(tc, container_boot, container_poweroff);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_unit_files);
        tcase_add_test(tc, test_start);
        tcase_add_test(tc, test_place_new);
        tcase_add_test(tc, test_reload);
        tcase_add_test(tc, test_bus);
        tcase_add_test(tc, test_metrics_socket);
        tcase_add_test(tc, test_watchdog_stop_activation);
        tcase_add_test(tc, test_journal);
        tcase_add_test(tc, test_via_systemd);
        suite_add_tcase(s, tc);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_VERBOSE);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
