/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The integration suite's harness; see harness.h. The test process is single-threaded, so
 * the code between fork() and exec() may use ordinary libc calls.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define NETLINK_CONNECTOR_PROTOCOL 11 /* linux/netlink.h */

struct Harness {
        char *dir;        /* this test's directory */
        char *config_dir; /* DIR/config, given to --config-dir */
        char *policy_dir; /* DIR/config/policy.d */
        char *own_cpus;   /* Cpus_allowed_list of the test process at start */

        pid_t bus_pid;
        char *bus_address;

        pid_t daemon_pid; /* 0: not started */
        bool daemon_exited;
        int daemon_status;
        int notify_fd;
        unsigned n_ready, n_reloading, n_stopping;

        sd_bus *bus; /* our client connection */

        Child **children;
        size_t n_children;
        pid_t *quick;
        bool *quick_reaped;
        size_t n_quick, n_quick_alloc;
        unsigned n_ctl_runs;

        char *marker_name; /* comm of the barrier processes (policy integ-marker) */
        unsigned n_barriers;

        char **owned; /* strings handed out to tests */
        size_t n_owned;
};

static char *base_dir; /* made by harness_main(); inherited by check's forked test processes */

/* ---- small utilities ---- */

uint64_t harness_now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

int harness_run_quiet(const char *const *argv) {
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        dup2(fd, STDOUT_FILENO);
                        dup2(fd, STDERR_FILENO);
                }
                execvp(argv[0], (char *const *)argv);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *xstrdup(const char *s) {
        char *t = strdup(s);
        ck_assert_msg(t, "out of memory");
        return t;
}

char *harness_asprintf(const char *format, ...) {
        va_list ap;
        char *s = NULL;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        ck_assert_msg(r >= 0, "out of memory");
        return s;
}
#define xasprintf harness_asprintf

static const char *own(Harness *h, char *s) {
        char **l = realloc(h->owned, (h->n_owned + 1) * sizeof(char *));
        ck_assert_msg(l, "out of memory");
        h->owned = l;
        h->owned[h->n_owned++] = s;
        return s;
}

static int read_file(const char *path, char **ret) {
        _cleanup_fclose_ FILE *f = NULL;
        char *buf = NULL;
        size_t size = 0;

        f = fopen(path, "re");
        if (!f)
                return -errno;
        if (getdelim(&buf, &size, '\0', f) < 0) {
                free(buf);
                if (ferror(f))
                        return -EIO;
                buf = strdup("");
                if (!buf)
                        return -ENOMEM;
        }
        *ret = buf;
        return 0;
}

/* The value of the "Key:\t" line of a /proc status file, newly allocated; NULL if absent. */
static char *status_field(const char *status, const char *key) {
        size_t k = strlen(key);

        for (const char *p = status; p && *p;) {
                const char *eol = strchrnul(p, '\n');
                if (strncmp(p, key, k) == 0 && p[k] == ':') {
                        const char *v = p + k + 1;
                        while (*v == '\t' || *v == ' ')
                                v++;
                        return strndup(v, eol - v);
                }
                p = *eol ? eol + 1 : eol;
        }
        return NULL;
}

static char *own_cpus_now(void) {
        _cleanup_free_ char *status = NULL;
        char *v;

        ck_assert_msg(read_file("/proc/self/status", &status) >= 0, "can't read /proc/self/status");
        v = status_field(status, "Cpus_allowed_list");
        ck_assert_msg(v, "no Cpus_allowed_list in /proc/self/status");
        return v;
}

static void write_file(const char *path, mode_t mode, const char *content) {
        size_t n = strlen(content);
        int fd;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ck_assert_msg(fd >= 0, "can't create %s: %s", path, strerror(errno));
        ck_assert_msg(write(fd, content, n) == (ssize_t)n, "can't write %s: %s", path, strerror(errno));
        ck_assert_msg(close(fd) == 0, "can't close %s: %s", path, strerror(errno));
}

void harness_write_text(const char *path, const char *text) {
        write_file(path, 0644, text);
}

static int rm_rf_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)remove(path);
        return 0;
}

static void rm_rf(const char *path) {
        (void)nftw(path, rm_rf_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Makes fd the child's file descriptor target (clearing O_CLOEXEC). Only between fork and exec. */
static void child_move_fd(int fd, int target) {
        if (fd == target)
                (void)fcntl(fd, F_SETFD, 0);
        else if (dup2(fd, target) < 0)
                _exit(126);
}

/* Common set-up of every child between fork() and exec(): die with the test, stdio. */
static void child_setup(pid_t parent, int in_fd, int out_fd, const char *log_path) {
        int fd;

        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(125);
        (void)signal(SIGPIPE, SIG_DFL);

        if (in_fd < 0)
                in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        fd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (in_fd < 0 || fd < 0)
                _exit(126);
        if (out_fd < 0)
                out_fd = fd;
        /* Move everything out of 0..2 first, so that the dup2()s below don't clobber. */
        in_fd = fcntl(in_fd, F_DUPFD_CLOEXEC, 10);
        out_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 10);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 10);
        if (in_fd < 0 || out_fd < 0 || fd < 0)
                _exit(126);
        child_move_fd(in_fd, STDIN_FILENO);
        child_move_fd(out_fd, STDOUT_FILENO);
        child_move_fd(fd, STDERR_FILENO);
}

static int parse_cpu_list_to_set(const char *s, cpu_set_t *ret) {
        cpu_set_t set;

        CPU_ZERO(&set);
        while (*s) {
                char *end;
                unsigned long a = strtoul(s, &end, 10), b = a;
                if (end == s)
                        return -EINVAL;
                if (*end == '-') {
                        s = end + 1;
                        b = strtoul(s, &end, 10);
                        if (end == s || b < a)
                                return -EINVAL;
                }
                if (b >= CPU_SETSIZE)
                        return -ERANGE;
                for (unsigned long c = a; c <= b; c++)
                        CPU_SET(c, &set);
                s = end;
                if (*s == ',')
                        s++;
                else if (*s)
                        return -EINVAL;
        }
        *ret = set;
        return 0;
}

/* The canonical cpu-list of set ("0-3,8"), as the kernel prints it; NULL when out of memory. */
static char *format_cpu_set(const cpu_set_t *set) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        bool first = true;

        if (!f)
                return NULL;
        for (int c = 0; c < CPU_SETSIZE; c++) {
                int e = c;

                if (!CPU_ISSET(c, set))
                        continue;
                while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
                        e++;
                if (e == c)
                        fprintf(f, "%s%d", first ? "" : ",", c);
                else
                        fprintf(f, "%s%d-%d", first ? "" : ",", c, e);
                first = false;
                c = e;
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static cpu_set_t parse_cpu_list_or_fail(const char *list) {
        cpu_set_t set;

        ck_assert_msg(list && parse_cpu_list_to_set(list, &set) == 0, "bad cpu-list \"%s\"", strna(list));
        return set;
}

char *harness_cpus_andnot(const char *a, const char *b) {
        cpu_set_t sa = parse_cpu_list_or_fail(a), sb = parse_cpu_list_or_fail(b), r;
        char *s;

        CPU_ZERO(&r);
        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &sa) && !CPU_ISSET(c, &sb))
                        CPU_SET(c, &r);
        s = format_cpu_set(&r);
        ck_assert_msg(s, "out of memory");
        return s;
}

bool harness_cpus_subset(const char *a, const char *b) {
        cpu_set_t sa = parse_cpu_list_or_fail(a), sb = parse_cpu_list_or_fail(b);

        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &sa) && !CPU_ISSET(c, &sb))
                        return false;
        return true;
}

/* /sys/devices/system/cpu/online as read by harness_main() before the first test: forked test
 * processes inherit it, so a test that takes a CPU offline still sees the list of the run. */
static char *online_cpus;

/* The canonical cpu-list of /sys/devices/system/cpu/online, newly allocated; NULL if it can't be
 * read or parsed. Outside of tests (no check assertions). */
static char *read_online_cpus(void) {
        _cleanup_free_ char *text = NULL;
        cpu_set_t set;

        if (read_file("/sys/devices/system/cpu/online", &text) < 0)
                return NULL;
        text[strcspn(text, "\n")] = '\0';
        if (parse_cpu_list_to_set(text, &set) < 0 || CPU_COUNT(&set) == 0)
                return NULL;
        return format_cpu_set(&set);
}

const char *harness_online_cpus(void) {
        if (!online_cpus)
                online_cpus = read_online_cpus();
        ck_assert_msg(online_cpus, "can't read /sys/devices/system/cpu/online");
        return online_cpus;
}

/*
 * Helper programs must not start processes of their own: in sanitizer builds LeakSanitizer
 * runs at exit in a cloned tracer process, which the daemon rightly tracks as a forked child
 * under the parent's policy and counts. Only between fork and exec.
 */
static void child_no_leak_check(void) {
        const char *o = getenv("ASAN_OPTIONS");
        char buf[4096];

        snprintf(buf, sizeof buf, "%s%sdetect_leaks=0", o ? o : "", o && *o ? ":" : "");
        (void)setenv("ASAN_OPTIONS", buf, 1);
}

/* ---- the run ---- */

/* Outside of tests (no check assertions here: they report to the running test). */
static bool cpu_online(unsigned cpu) {
        _cleanup_free_ char *v = NULL;
        char path[128];
        int r;

        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%u", cpu);
        if (access(path, F_OK) < 0)
                return false;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%u/online", cpu);
        r = read_file(path, &v);
        if (r < 0)
                return r == -ENOENT; /* no online file: the CPU can't go offline */
        return v[0] == '1';
}

static void print_tail(const char *path, unsigned max_lines) {
        _cleanup_free_ char *text = NULL;
        const char *start;
        unsigned n = 0;

        if (read_file(path, &text) < 0)
                return;
        start = text + strlen(text);
        while (start > text) {
                start--;
                if (*start == '\n' && start[1] != '\0' && ++n > max_lines) {
                        start++;
                        break;
                }
        }
        printf("----- %s%s -----\n%s%s", path, start > text ? " (tail)" : "", start,
               (*start && text[strlen(text) - 1] != '\n') ? "\n" : "");
}

static void print_logs_of(const char *tcname) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n = strlen(tcname);

        d = opendir(base_dir);
        if (!d)
                return;
        while ((de = readdir(d))) {
                if (strncmp(de->d_name, tcname, n) != 0 || (de->d_name[n] != '\0' && de->d_name[n] != '-'))
                        continue;
                static const char *const logs[] = {
                        "affinityd.log", "dbus.log", "children.log", "notify.log"};
                for (size_t i = 0; i < ELEMENTSOF(logs); i++) {
                        char p[PATH_MAX];
                        snprintf(p, sizeof p, "%s/%s/%s", base_dir, de->d_name, logs[i]);
                        print_tail(p, streq(logs[i], "affinityd.log") ? 400 : 60);
                }
        }
}

/* 0 if the suite can run here, else the exit code (77: skip, with the reason printed). */
static int preconditions(void) {
        const char *bin;

        if (geteuid() != 0) {
                printf("SKIP: the integration tests place real processes and run a private bus as "
                       "root; not root here\n");
                return 77;
        }
        if (!cpu_online(0) || !cpu_online(1)) {
                printf("SKIP: the integration tests need CPUs 0 and 1 online\n");
                return 77;
        }
        online_cpus = read_online_cpus();
        if (!online_cpus) {
                printf("FAIL: can't read the list of online CPUs (/sys/devices/system/cpu/online)\n");
                return EXIT_FAILURE;
        }
        bin = getenv("AFFINITYD_BIN");
        if (!bin || access(bin, X_OK) < 0) {
                printf("FAIL: AFFINITYD_BIN (%s) is not an executable; run through meson test\n",
                       strna(bin));
                return EXIT_FAILURE;
        }
        if (!getenv("INTEG_HELPER_DIR")) {
                printf("FAIL: INTEG_HELPER_DIR is not set; run through meson test\n");
                return EXIT_FAILURE;
        }
        return 0;
}

int harness_main(Suite *s) {
        SRunner *sr = srunner_create(s); /* owns s */
        char tmpl[] = "/tmp/affinityd-integ-XXXXXX";
        int n_failed, r;

        setvbuf(stdout, NULL, _IOLBF, 0);
        r = preconditions();
        if (r == 0) {
                base_dir = mkdtemp(tmpl);
                if (!base_dir || chmod(base_dir, 0755) < 0) {
                        printf("FAIL: can't make a directory under /tmp: %m\n");
                        r = EXIT_FAILURE;
                }
        }
        if (r != 0) {
                srunner_free(sr);
                return r;
        }

        srunner_run_all(sr, CK_NORMAL);
        n_failed = srunner_ntests_failed(sr);

        if (n_failed > 0) {
                TestResult **failures = srunner_failures(sr);
                for (int i = 0; i < n_failed; i++) {
                        bool seen = false;
                        for (int j = 0; j < i; j++)
                                if (streq(tr_tcname(failures[j]), tr_tcname(failures[i])))
                                        seen = true;
                        if (!seen)
                                print_logs_of(tr_tcname(failures[i]));
                }
                free(failures);
        }
        srunner_free(sr);

        if (getenv("INTEG_KEEP"))
                printf("keeping %s\n", base_dir);
        else
                rm_rf(base_dir);
        return n_failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static Harness *current; /* the one harness of the running test */

static void harness_teardown(void) {
        current = harness_free(current);
}

void harness_add_test(Suite *s, const TTest *t) {
        harness_add_test_tagged(s, t, NULL);
}

void harness_add_test_tagged(Suite *s, const TTest *t, const char *tags) {
        TCase *tc = tcase_create(t->name);

        if (tags)
                tcase_set_tags(tc, tags);
        tcase_add_checked_fixture(tc, NULL, harness_teardown);
        tcase_set_timeout(tc, 300);
        _tcase_add_test(tc, t, 0, 0, 0, 1);
        suite_add_tcase(s, tc);
}

/* ---- the harness ---- */

Harness *harness_new(void) {
        Harness *h;
        const char *tc = tcase_name(); /* in a test: the test's name */

        ck_assert_msg(base_dir, "harness_new() outside harness_main()");
        ck_assert_msg(!current, "one harness per test");
        h = calloc(1, sizeof *h);
        ck_assert_msg(h, "out of memory");
        h->notify_fd = -EBADF;

        for (unsigned i = 0;; i++) {
                h->dir = i == 0 ? xasprintf("%s/%s", base_dir, tc ? tc : "test")
                                : xasprintf("%s/%s-%u", base_dir, tc ? tc : "test", i);
                if (mkdir(h->dir, 0755) == 0)
                        break;
                ck_assert_msg(errno == EEXIST, "mkdir %s: %s", h->dir, strerror(errno));
                h->dir = mfree(h->dir);
        }
        (void)chmod(h->dir, 0755);
        h->config_dir = xasprintf("%s/config", h->dir);
        h->policy_dir = xasprintf("%s/policy.d", h->config_dir);
        ck_assert(mkdir(h->config_dir, 0755) == 0);
        ck_assert(mkdir(h->policy_dir, 0755) == 0);
        {
                _cleanup_free_ char *bin = xasprintf("%s/bin", h->dir);
                ck_assert(mkdir(bin, 0755) == 0);
                (void)chmod(bin, 0755);
        }
        h->own_cpus = own_cpus_now();

        h->marker_name = xstrdup(harness_unique_name(h));
        harness_write_policy(
                h, "00-integ-marker.yaml",
                "# written by the integration harness: harness_barrier() processes\n"
                "policies:\n"
                "  - name: integ-marker\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"0\"\n",
                h->marker_name);
        current = h;
        return h;
}

void harness_barrier(Harness *h) {
        Child *m;

        m = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = h->marker_name,
                        .args = ARGS("-n", "0"),
                        .initial_cpus = "1",
                        .pipes = true});
        harness_wait_process_cpus(h, m->pid, "0", 1);
        /* Its thread has CPU 0, but the daemon's placement pass may not be complete: killed now,
         * it would count as vanished, not placed. Listed means complete. */
        if (h->bus)
                harness_wait_listed(h, m->pid, "integ-marker");
        child_kill(m);
        h->n_barriers++;
}

unsigned harness_n_barriers(Harness *h) {
        return h->n_barriers;
}

const char *harness_dir(Harness *h) {
        return h->dir;
}

const char *harness_config_dir(Harness *h) {
        return h->config_dir;
}

const char *harness_bus_address(Harness *h) {
        return h->bus_address;
}

const char *harness_own_cpus(Harness *h) {
        return h->own_cpus;
}

pid_t harness_daemon_pid(Harness *h) {
        return h->daemon_pid;
}

static void describe_status(int status, char *buf, size_t size) {
        if (WIFEXITED(status))
                snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
                snprintf(
                        buf, size, "killed by signal %d (%s)%s", WTERMSIG(status),
                        strsignal(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
        else
                snprintf(buf, size, "wait status 0x%x", (unsigned)status);
}

/* Reads every pending notification; counts READY=1, RELOADING=1, STOPPING=1; logs them. */
static void drain_notify(Harness *h) {
        if (h->notify_fd < 0)
                return;
        for (;;) {
                char buf[4096 + 1];
                ssize_t n = recv(h->notify_fd, buf, sizeof buf - 1, MSG_DONTWAIT);
                if (n < 0)
                        return;
                buf[n] = '\0';
                for (char *line = buf, *next; line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        if (streq(line, "READY=1"))
                                h->n_ready++;
                        else if (streq(line, "RELOADING=1"))
                                h->n_reloading++;
                        else if (streq(line, "STOPPING=1"))
                                h->n_stopping++;
                }
                {
                        _cleanup_free_ char *path = xasprintf("%s/notify.log", h->dir);
                        _cleanup_fclose_ FILE *f = fopen(path, "ae");
                        if (f)
                                fprintf(f, "%s\n--\n", buf);
                }
        }
}

static bool daemon_alive(Harness *h) {
        int status;

        if (h->daemon_pid <= 0 || h->daemon_exited)
                return false;
        if (waitpid(h->daemon_pid, &status, WNOHANG) == h->daemon_pid) {
                h->daemon_exited = true;
                h->daemon_status = status;
                return false;
        }
        return true;
}

void harness_assert_daemon_alive(Harness *h) {
        char what[128];

        ck_assert_msg(h->daemon_pid > 0, "affinityd was never started");
        if (daemon_alive(h))
                return;
        describe_status(h->daemon_status, what, sizeof what);
        ck_abort_msg(
                "affinityd (pid %d) is gone: %s; see %s/affinityd.log", (int)h->daemon_pid, what, h->dir);
}

typedef bool (*cond_t)(Harness *h, void *userdata);

/* Polls cond every 20 ms until it holds (true) or the deadline passes (false). While the daemon
 * is supposed to run, fails the test at once if it dies. */
static bool wait_for(Harness *h, cond_t cond, void *userdata) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        for (;;) {
                drain_notify(h);
                if (cond(h, userdata))
                        return true;
                if (h->daemon_pid > 0 && !h->daemon_exited)
                        harness_assert_daemon_alive(h);
                if (harness_now_usec() >= deadline)
                        return false;
                if (h->notify_fd >= 0) {
                        struct pollfd p = {.fd = h->notify_fd, .events = POLLIN};
                        (void)poll(&p, 1, 20);
                } else
                        usleep(20 * 1000);
        }
}

unsigned harness_ready_count(Harness *h) {
        drain_notify(h);
        return h->n_ready;
}

unsigned harness_reloading_count(Harness *h) {
        drain_notify(h);
        return h->n_reloading;
}

/* ---- the bus ---- */

void harness_start_bus(Harness *h) {
        harness_start_bus_with(h, &(BusOptions){});
}

sd_bus *harness_bus(Harness *h) {
        return h->bus;
}

void harness_start_bus_with(Harness *h, const BusOptions *o) {
        _cleanup_free_ char *conf = NULL, *conf_path = NULL, *sock_dir = NULL, *log = NULL;
        _cleanup_free_ char *arg_conf = NULL;
        _cleanup_close_ int rfd = -EBADF;
        int p[2];
        pid_t parent = getpid(), pid;
        char addr[1024];
        size_t n = 0;
        uint64_t deadline;

        ck_assert_msg(h->bus_pid == 0, "bus already started");
        sock_dir = xasprintf("%s/bus", h->dir);
        ck_assert(mkdir(sock_dir, 0755) == 0);
        (void)chmod(sock_dir, 0755);
        if (o->include_policy) {
                ck_assert_msg(
                        access(o->include_policy, R_OK) == 0, "bus policy file %s: %s", o->include_policy,
                        strerror(errno));
                /* Like the system bus: anyone may connect, own and send, except where the
                 * included file (read later, so its rules win) says otherwise. */
                conf = xasprintf(
                        "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration "
                        "1.0//EN\"\n"
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
                        "  <include>%s</include>\n"
                        "</busconfig>\n",
                        sock_dir, o->include_policy);
        } else
                conf = xasprintf(
                        "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration "
                        "1.0//EN\"\n"
                        " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                        "<busconfig>\n"
                        "  <type>session</type>\n"
                        "  <listen>unix:dir=%s</listen>\n"
                        "  <auth>EXTERNAL</auth>\n"
                        "  <policy context=\"default\">\n"
                        "    <allow user=\"*\"/>\n"
                        "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
                        "    <allow eavesdrop=\"true\"/>\n"
                        "    <allow own=\"*\"/>\n"
                        "  </policy>\n"
                        "</busconfig>\n",
                        sock_dir);
        conf_path = xasprintf("%s/bus.conf", h->dir);
        write_file(conf_path, 0644, conf);
        log = xasprintf("%s/dbus.log", h->dir);
        arg_conf = xasprintf("--config-file=%s", conf_path);

        ck_assert(pipe2(p, O_CLOEXEC) == 0);
        rfd = p[0];
        pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                int wfd;
                child_setup(parent, -1, -1, log);
                wfd = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
                if (wfd < 0)
                        _exit(126);
                child_move_fd(wfd, 3);
                execlp("dbus-daemon", "dbus-daemon", arg_conf, "--print-address=3", "--nofork",
                       "--nopidfile", (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        h->bus_pid = pid;

        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        while (!memchr(addr, '\n', n)) {
                struct pollfd pfd = {.fd = rfd, .events = POLLIN};
                uint64_t now = harness_now_usec();
                ssize_t k;

                ck_assert_msg(now < deadline, "dbus-daemon printed no address; see %s", log);
                if (poll(&pfd, 1, (int)((deadline - now) / 1000) + 1) <= 0)
                        continue;
                k = read(rfd, addr + n, sizeof addr - 1 - n);
                ck_assert_msg(k > 0, "dbus-daemon exited without printing its address; see %s", log);
                n += (size_t)k;
                ck_assert_msg(n < sizeof addr - 1, "dbus-daemon address too long");
        }
        addr[strcspn(addr, "\n")] = '\0';
        h->bus_address = xstrdup(addr);
}

static sd_bus *bus_connect(const char *address) {
        sd_bus *b = NULL;
        int r;

        r = sd_bus_new(&b);
        ck_assert_msg(r >= 0, "sd_bus_new: %s", strerror(-r));
        ck_assert(sd_bus_set_address(b, address) >= 0);
        ck_assert(sd_bus_set_bus_client(b, 1) >= 0);
        r = sd_bus_start(b);
        ck_assert_msg(r >= 0, "can't connect to the private bus %s: %s", address, strerror(-r));
        return b;
}

static bool name_has_owner(Harness *h, void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int has = 0, r;

        r = sd_bus_call_method(
                h->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "NameHasOwner", &error, &reply, "s", AFFINITYD_BUS_NAME);
        if (r >= 0)
                r = sd_bus_message_read(reply, "b", &has);
        sd_bus_message_unref(reply);
        return r >= 0 && has;
}

static bool ready_seen(Harness *h, void *userdata) {
        return h->n_ready >= *(unsigned *)userdata;
}

void harness_start_daemon(Harness *h) {
        harness_start_daemon_with(h, &(DaemonOptions){});
}

void harness_start_daemon_with(Harness *h, const DaemonOptions *o) {
        _cleanup_free_ char *log = NULL, *notify_path = NULL, *arg_bus = NULL, *arg_conf = NULL,
                            *arg_state = NULL;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        const char *bin = getenv("AFFINITYD_BIN");
        const char *argv[32];
        size_t n = 0;
        pid_t parent = getpid(), pid;
        unsigned want_ready;
        int rcvbuf = 8 * 1024 * 1024;

        ck_assert_msg(bin, "AFFINITYD_BIN is not set");
        ck_assert_msg(h->daemon_pid == 0, "affinityd already started");
        if (h->bus_pid == 0 && !o->no_bus)
                harness_start_bus(h);

        notify_path = xasprintf("%s/notify", h->dir);
        if (h->notify_fd < 0) { /* kept across restarts */
                ck_assert_msg(strlen(notify_path) < sizeof sa.sun_path, "notify socket path too long");
                strcpy(sa.sun_path, notify_path);
                h->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                ck_assert(h->notify_fd >= 0);
                (void)setsockopt(h->notify_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
                ck_assert_msg(
                        bind(h->notify_fd, (struct sockaddr *)&sa, sizeof sa) == 0, "bind %s: %s",
                        notify_path, strerror(errno));
        }
        drain_notify(h);
        want_ready = h->n_ready + 1;
        h->daemon_exited = false;
        h->daemon_status = 0;
        h->n_stopping = 0;

        log = xasprintf("%s/affinityd.log", h->dir);
        arg_bus = o->no_bus ? xstrdup("--bus=none") : xasprintf("--bus-address=%s", h->bus_address);
        arg_conf = xasprintf("--config-dir=%s", h->config_dir);
        argv[n++] = bin;
        argv[n++] = arg_bus;
        argv[n++] = arg_conf;
        /* The test's own state dir: never /run/affinityd, which another daemon may use. A test
         * may give another one in o->args (the last --state-dir= wins). */
        arg_state = xasprintf("--state-dir=%s/state", h->dir);
        argv[n++] = arg_state;
        argv[n++] = "--log-level=debug";
        for (const char *const *a = o->args; a && *a; a++) {
                ck_assert(n < ELEMENTSOF(argv) - 1);
                argv[n++] = *a;
        }
        argv[n] = NULL;

        pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                child_setup(parent, -1, -1, log);
                if (o->drop_net_admin && prctl(PR_CAPBSET_DROP, CAP_NET_ADMIN, 0, 0, 0) < 0)
                        _exit(122);
                for (const char *const *d = o->cgroups; d && *d; d++) {
                        char procs[PATH_MAX];
                        int fd;

                        snprintf(procs, sizeof procs, "%s/cgroup.procs", *d);
                        fd = open(procs, O_WRONLY | O_CLOEXEC);
                        if (fd < 0 || write(fd, "0", 1) != 1) /* "0": the writer */
                                _exit(123);
                        close(fd);
                }
                if (o->new_cgroup_ns && unshare(CLONE_NEWCGROUP) < 0)
                        _exit(124);
                if (o->drop_sys_admin && prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0)
                        _exit(122);
                /* Log to stderr (our file), not to a journal the runner might have. */
                (void)unsetenv("JOURNAL_STREAM");
                (void)unsetenv("INVOCATION_ID");
                (void)unsetenv("LISTEN_FDS");
                (void)unsetenv("LISTEN_PID");
                (void)unsetenv("WATCHDOG_USEC");
                (void)unsetenv("WATCHDOG_PID");
                (void)setenv("NOTIFY_SOCKET", notify_path, 1);
                execv(bin, (char *const *)argv);
                _exit(127);
        }
        h->daemon_pid = pid;

        ck_assert_msg(
                wait_for(h, ready_seen, &want_ready), "affinityd sent no READY=1 within %llu s; see %s",
                HARNESS_TIMEOUT_USEC / USEC_PER_SEC, log);

        if (o->no_bus)
                return;
        if (!h->bus)
                h->bus = bus_connect(h->bus_address);
        ck_assert_msg(
                wait_for(h, name_has_owner, NULL), "%s has no owner on the bus after READY=1; see %s",
                AFFINITYD_BUS_NAME, log);
}

void harness_stop_daemon(Harness *h) {
        char what[128];

        if (h->daemon_pid <= 0)
                return;
        if (daemon_alive(h)) {
                uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

                (void)kill(h->daemon_pid, SIGTERM);
                while (daemon_alive(h) && harness_now_usec() < deadline) {
                        drain_notify(h);
                        usleep(10 * 1000);
                }
                if (daemon_alive(h)) {
                        (void)kill(h->daemon_pid, SIGKILL);
                        (void)waitpid(h->daemon_pid, NULL, 0);
                        h->daemon_pid = 0;
                        ck_abort_msg(
                                "affinityd did not exit within %llu s of SIGTERM; see %s/affinityd.log",
                                HARNESS_TIMEOUT_USEC / USEC_PER_SEC, h->dir);
                }
        }
        h->daemon_pid = 0;
        drain_notify(h);
        describe_status(h->daemon_status, what, sizeof what);
        ck_assert_msg(
                WIFEXITED(h->daemon_status) && WEXITSTATUS(h->daemon_status) == 0,
                "affinityd did not exit cleanly on SIGTERM: %s; see %s/affinityd.log", what, h->dir);
        ck_assert_msg(h->n_stopping > 0, "affinityd exited without sending STOPPING=1");
}

void harness_kill_daemon(Harness *h) {
        ck_assert_msg(daemon_alive(h), "no daemon to kill");
        ck_assert(kill(h->daemon_pid, SIGKILL) == 0);
        ck_assert(waitpid(h->daemon_pid, &h->daemon_status, 0) == h->daemon_pid);
        h->daemon_exited = true;
        h->daemon_pid = 0;
        drain_notify(h);
}

int harness_kill_bus(Harness *h) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        ck_assert_msg(h->bus_pid > 0, "no bus to kill");
        h->bus = sd_bus_flush_close_unref(h->bus);
        ck_assert(kill(h->bus_pid, SIGKILL) == 0);
        ck_assert(waitpid(h->bus_pid, NULL, 0) == h->bus_pid);
        h->bus_pid = 0;

        while (daemon_alive(h) && harness_now_usec() < deadline) {
                drain_notify(h);
                usleep(10 * 1000);
        }
        ck_assert_msg(
                !daemon_alive(h),
                "affinityd still runs %llu s after its bus went away; see %s/affinityd.log",
                HARNESS_TIMEOUT_USEC / USEC_PER_SEC, h->dir);
        h->daemon_pid = 0; /* gone: teardown has nothing to stop */
        return h->daemon_status;
}

unsigned harness_sighup(Harness *h) {
        unsigned want;

        harness_assert_daemon_alive(h);
        want = harness_ready_count(h) + 1;
        ck_assert(kill(h->daemon_pid, SIGHUP) == 0);
        return want;
}

void harness_wait_ready(Harness *h, unsigned count) {
        ck_assert_msg(
                wait_for(h, ready_seen, &count), "no READY=1 #%u within %llu s; see %s/affinityd.log", count,
                HARNESS_TIMEOUT_USEC / USEC_PER_SEC, h->dir);
}

void harness_sighup_reload(Harness *h) {
        unsigned reloading = harness_reloading_count(h);

        harness_wait_ready(h, harness_sighup(h));
        ck_assert_msg(
                h->n_reloading > reloading, "the SIGHUP reload sent READY=1 but no RELOADING=1 before it");
}

Harness *harness_free(Harness *h) {
        _cleanup_free_ char *cpus = NULL;

        if (!h)
                return NULL;

        if (h->daemon_pid > 0)
                harness_stop_daemon(h);

        for (size_t i = 0; i < h->n_children; i++) {
                Child *c = h->children[i];
                if (!c->reaped) {
                        (void)kill(c->pid, SIGKILL);
                        (void)waitpid(c->pid, &c->status, 0);
                }
                if (c->stdin_fd >= 0)
                        close(c->stdin_fd);
                if (c->stdout_fd >= 0)
                        close(c->stdout_fd);
                free(c->name);
                free(c->path);
                free(c);
        }
        free(h->children);
        for (size_t i = 0; i < h->n_quick; i++)
                if (!h->quick_reaped[i]) {
                        (void)kill(h->quick[i], SIGKILL);
                        (void)waitpid(h->quick[i], NULL, 0);
                }
        free(h->quick);
        free(h->quick_reaped);

        h->bus = sd_bus_flush_close_unref(h->bus);
        if (h->bus_pid > 0) {
                (void)kill(h->bus_pid, SIGTERM);
                (void)waitpid(h->bus_pid, NULL, 0);
        }
        if (h->notify_fd >= 0)
                close(h->notify_fd);

        cpus = own_cpus_now();
        ck_assert_msg(
                streq(cpus, h->own_cpus), "the test process's own affinity changed from %s to %s",
                h->own_cpus, cpus);

        if (!getenv("INTEG_KEEP"))
                rm_rf(h->dir);

        for (size_t i = 0; i < h->n_owned; i++)
                free(h->owned[i]);
        free(h->owned);
        free(h->bus_address);
        free(h->marker_name);
        free(h->own_cpus);
        free(h->policy_dir);
        free(h->config_dir);
        free(h->dir);
        if (current == h)
                current = NULL;
        free(h);
        return NULL;
}

/* ---- files ---- */

/* Writes the text of format and ap to tmp and renames it to path, so that no reader ever sees
 * half a file. Returns path (owned by h). */
static const char *write_renamed(Harness *h, const char *tmp, char *path, const char *format, va_list ap) {
        _cleanup_free_ char *text = NULL;

        ck_assert_msg(vasprintf(&text, format, ap) >= 0, "out of memory");
        write_file(tmp, 0644, text);
        ck_assert_msg(rename(tmp, path) == 0, "rename to %s: %s", path, strerror(errno));
        return own(h, path);
}

const char *harness_write_policy(Harness *h, const char *filename, const char *format, ...) {
        _cleanup_free_ char *tmp = xasprintf("%s/.%s.tmp", h->dir, filename);
        const char *path;
        va_list ap;

        va_start(ap, format);
        path = write_renamed(h, tmp, xasprintf("%s/%s", h->policy_dir, filename), format, ap);
        va_end(ap);
        return path;
}

const char *harness_write_file_renamed(Harness *h, const char *path, const char *format, ...) {
        _cleanup_free_ char *dir = xstrdup(path), *tmp = NULL;
        char *slash = strrchr(dir, '/');
        const char *ret;
        va_list ap;

        ck_assert_msg(slash, "%s: not a path", path);
        *slash = '\0';
        tmp = xasprintf("%s/.%s.tmp", dir, slash + 1);
        va_start(ap, format);
        ret = write_renamed(h, tmp, xstrdup(path), format, ap);
        va_end(ap);
        return ret;
}

void harness_remove_policy(Harness *h, const char *filename) {
        _cleanup_free_ char *path = xasprintf("%s/%s", h->policy_dir, filename);
        ck_assert_msg(unlink(path) == 0, "unlink %s: %s", path, strerror(errno));
}

const char *harness_unique_name(Harness *h) {
        static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
        unsigned char rnd[8];
        char name[11] = "at";

        ck_assert(getrandom(rnd, sizeof rnd, 0) == (ssize_t)sizeof rnd);
        for (size_t i = 0; i < sizeof rnd; i++)
                name[2 + i] = chars[rnd[i] % (sizeof chars - 1)];
        name[10] = '\0';
        return own(h, xstrdup(name));
}

const char *harness_install(Harness *h, const char *helper, const char *name) {
        _cleanup_free_ char *src = NULL;
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        const char *dir = getenv("INTEG_HELPER_DIR");
        char *dst;

        ck_assert_msg(dir, "INTEG_HELPER_DIR is not set");
        dst = xasprintf("%s/bin/%s", h->dir, name);
        if (access(dst, X_OK) == 0)
                return own(h, dst);

        src = xasprintf("%s/%s", dir, helper);
        in = open(src, O_RDONLY | O_CLOEXEC);
        ck_assert_msg(in >= 0, "open %s: %s", src, strerror(errno));
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        ck_assert_msg(out >= 0, "create %s: %s", dst, strerror(errno));
        for (;;) {
                char buf[65536];
                ssize_t n = read(in, buf, sizeof buf);
                ck_assert_msg(n >= 0, "read %s: %s", src, strerror(errno));
                if (n == 0)
                        break;
                ck_assert_msg(write(out, buf, n) == n, "write %s: %s", dst, strerror(errno));
        }
        ck_assert(fchmod(out, 0755) == 0);
        return own(h, dst);
}

/* ---- children ---- */

Child *harness_spawn(Harness *h, const SpawnOptions *o) {
        _cleanup_free_ char *log = NULL;
        const char *name = o->name ?: harness_unique_name(h);
        const char *path = harness_install(h, o->helper, name);
        const char *argv[64];
        size_t n = 0;
        int in[2] = {-1, -1}, out[2] = {-1, -1};
        cpu_set_t initial;
        pid_t parent = getpid(), pid;
        Child *c, **l;

        argv[n++] = path;
        for (const char *const *a = o->args; a && *a; a++) {
                ck_assert(n < ELEMENTSOF(argv) - 1);
                argv[n++] = *a;
        }
        argv[n] = NULL;
        if (o->initial_cpus)
                ck_assert_msg(
                        parse_cpu_list_to_set(o->initial_cpus, &initial) == 0, "bad cpu-list %s",
                        o->initial_cpus);
        if (o->pipes) {
                ck_assert(pipe2(in, O_CLOEXEC) == 0);
                ck_assert(pipe2(out, O_CLOEXEC) == 0);
        }
        log = xasprintf("%s/children.log", h->dir);

        pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                child_setup(parent, in[0], out[1], log);
                child_no_leak_check();
                if (o->initial_cpus && sched_setaffinity(0, sizeof initial, &initial) < 0)
                        _exit(124);
                if (o->as_nobody) {
                        if (setgroups(0, NULL) < 0 || setresgid(NOGROUP_GID, NOGROUP_GID, NOGROUP_GID) < 0 ||
                            setresuid(NOBODY_UID, NOBODY_UID, NOBODY_UID) < 0)
                                _exit(123);
                        /* A credential change clears the parent-death signal. */
                        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != parent)
                                _exit(125);
                }
                execv(path, (char *const *)argv);
                _exit(127);
        }
        if (o->pipes) {
                close(in[0]);
                close(out[1]);
        }

        c = calloc(1, sizeof *c);
        ck_assert(c);
        c->pid = pid;
        c->name = xstrdup(name);
        c->path = xstrdup(path);
        c->stdin_fd = in[1];
        c->stdout_fd = out[0];
        l = realloc(h->children, (h->n_children + 1) * sizeof(Child *));
        ck_assert(l);
        h->children = l;
        h->children[h->n_children++] = c;
        return c;
}

Child *harness_spawn_threads(Harness *h, const char *name, unsigned n_threads, const char *initial_cpus) {
        char n[16];
        Child *c;

        snprintf(n, sizeof n, "%u", n_threads);
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", n),
                        .initial_cpus = initial_cpus,
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        return c;
}

pid_t harness_spawn_quick(Harness *h, const char *path, const char *const *args, bool reap) {
        const char *argv[16];
        size_t n = 0;
        pid_t parent = getpid(), pid;

        argv[n++] = path;
        for (const char *const *a = args; a && *a; a++) {
                ck_assert(n < ELEMENTSOF(argv) - 1);
                argv[n++] = *a;
        }
        argv[n] = NULL;

        if (h->n_quick == h->n_quick_alloc) {
                size_t k = MAX(h->n_quick_alloc * 2, (size_t)256);
                pid_t *q = realloc(h->quick, k * sizeof(pid_t));
                ck_assert(q);
                h->quick = q;
                bool *r = realloc(h->quick_reaped, k * sizeof(bool));
                ck_assert(r);
                h->quick_reaped = r;
                h->n_quick_alloc = k;
        }

        pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(125);
                child_no_leak_check();
                execv(path, (char *const *)argv);
                _exit(127);
        }
        h->quick[h->n_quick] = pid;
        h->quick_reaped[h->n_quick] = false;
        if (reap) {
                (void)waitpid(pid, NULL, 0);
                h->quick_reaped[h->n_quick] = true;
        }
        h->n_quick++;
        /* Keep the notify socket's queue short: a full queue would block the daemon. */
        drain_notify(h);
        return pid;
}

unsigned harness_reap_quick(Harness *h) {
        unsigned ok = 0;

        for (size_t i = 0; i < h->n_quick; i++) {
                int status;
                if (h->quick_reaped[i])
                        continue;
                if (waitpid(h->quick[i], &status, 0) == h->quick[i] && WIFEXITED(status) &&
                    WEXITSTATUS(status) == 0)
                        ok++;
                h->quick_reaped[i] = true;
        }
        return ok;
}

void child_send(Child *c, const char *format, ...) {
        _cleanup_free_ char *line = NULL;
        va_list ap;
        size_t n;
        int r;

        ck_assert_msg(c->stdin_fd >= 0, "child %s has no stdin pipe", c->name);
        va_start(ap, format);
        r = vasprintf(&line, format, ap);
        va_end(ap);
        ck_assert(r >= 0);
        n = strlen(line);
        line[n - (n > 0 && line[n - 1] == '\n')] = '\0';
        {
                _cleanup_free_ char *with_nl = xasprintf("%s\n", line);
                n = strlen(with_nl);
                ck_assert_msg(
                        write(c->stdin_fd, with_nl, n) == (ssize_t)n, "write to %s[%d]: %s", c->name,
                        (int)c->pid, strerror(errno));
        }
}

char *child_expect_line(Child *c) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        ck_assert_msg(c->stdout_fd >= 0, "child %s has no stdout pipe", c->name);
        for (;;) {
                char *nl = memchr(c->buf, '\n', c->n_buf);
                struct pollfd p = {.fd = c->stdout_fd, .events = POLLIN};
                uint64_t now;
                ssize_t k;

                if (nl) {
                        size_t len = (size_t)(nl - c->buf);
                        char *line = strndup(c->buf, len);
                        ck_assert(line);
                        memmove(c->buf, nl + 1, c->n_buf - len - 1);
                        c->n_buf -= len + 1;
                        return line;
                }
                now = harness_now_usec();
                ck_assert_msg(
                        now < deadline, "%s[%d] wrote no line within %llu s", c->name, (int)c->pid,
                        HARNESS_TIMEOUT_USEC / USEC_PER_SEC);
                if (poll(&p, 1, (int)((deadline - now) / 1000) + 1) <= 0)
                        continue;
                ck_assert_msg(c->n_buf < sizeof c->buf, "%s[%d]: line too long", c->name, (int)c->pid);
                k = read(c->stdout_fd, c->buf + c->n_buf, sizeof c->buf - c->n_buf);
                ck_assert_msg(
                        k > 0, "%s[%d] closed its stdout (exited?); see children.log", c->name, (int)c->pid);
                c->n_buf += (size_t)k;
        }
}

void child_close_stdin(Child *c) {
        if (c->stdin_fd >= 0)
                close(c->stdin_fd);
        c->stdin_fd = -1;
}

int child_wait(Child *c) {
        if (!c->reaped) {
                ck_assert_msg(
                        waitpid(c->pid, &c->status, 0) == c->pid, "waitpid %d: %s", (int)c->pid,
                        strerror(errno));
                c->reaped = true;
        }
        return c->status;
}

void child_kill(Child *c) {
        if (c->reaped)
                return;
        (void)kill(c->pid, SIGKILL);
        (void)waitpid(c->pid, &c->status, 0);
        c->reaped = true;
}

/* ---- /proc ---- */

int harness_read_tasks(pid_t pid, TaskInfo **ret) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        TaskInfo *tasks = NULL;
        size_t n = 0;
        struct dirent *de;

        dir = xasprintf("/proc/%d/task", (int)pid);
        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                _cleanup_free_ char *path = NULL, *status = NULL, *name = NULL, *cpus = NULL;
                TaskInfo *t;

                if (de->d_name[0] == '.')
                        continue;
                path = xasprintf("%s/%s/status", dir, de->d_name);
                if (read_file(path, &status) < 0)
                        continue; /* the thread just exited */
                name = status_field(status, "Name");
                cpus = status_field(status, "Cpus_allowed_list");
                if (!name || !cpus)
                        continue;
                t = realloc(tasks, (n + 1) * sizeof *tasks);
                ck_assert(t);
                tasks = t;
                tasks[n] = (TaskInfo){.tid = atoi(de->d_name)};
                snprintf(tasks[n].comm, sizeof tasks[n].comm, "%s", name);
                snprintf(tasks[n].cpus, sizeof tasks[n].cpus, "%s", cpus);
                n++;
        }
        *ret = tasks;
        return (int)n;
}

char *harness_read_task_cpus(pid_t pid, pid_t tid) {
        _cleanup_free_ char *path = NULL, *status = NULL;

        path = xasprintf("/proc/%d/task/%d/status", (int)pid, (int)tid);
        if (read_file(path, &status) < 0)
                return NULL;
        return status_field(status, "Cpus_allowed_list");
}

typedef struct ProcessCpusWait {
        pid_t pid;
        const char *glob; /* NULL: every thread wants cpus_match */
        const char *cpus_match, *cpus_other;
        unsigned min_threads;
        char last[4096]; /* what was seen last, for the failure message */
} ProcessCpusWait;

static bool process_cpus_ok(Harness *h, void *userdata) {
        ProcessCpusWait *w = userdata;
        _cleanup_free_ TaskInfo *tasks = NULL;
        bool ok = true, any_glob = false;
        size_t len = 0;
        int n;

        n = harness_read_tasks(w->pid, &tasks);
        if (n < 0) {
                snprintf(w->last, sizeof w->last, "/proc/%d/task: %s", (int)w->pid, strerror(-n));
                return false;
        }
        w->last[0] = '\0';
        for (int i = 0; i < n; i++) {
                bool m = w->glob && fnmatch(w->glob, tasks[i].comm, 0) == 0;
                const char *want = (!w->glob || m) ? w->cpus_match : w->cpus_other;

                any_glob = any_glob || m;
                if (!streq(tasks[i].cpus, want))
                        ok = false;
                if (len < sizeof w->last)
                        len += snprintf(
                                w->last + len, sizeof w->last - len, "%s%d %s cpus %s (want %s)",
                                i ? "; " : "", (int)tasks[i].tid, tasks[i].comm, tasks[i].cpus, want);
        }
        if ((unsigned)n < w->min_threads || (w->glob && !any_glob))
                ok = false;
        return ok;
}

void harness_wait_process_cpus(Harness *h, pid_t pid, const char *cpus, unsigned min_threads) {
        ProcessCpusWait w = {.pid = pid, .cpus_match = cpus, .min_threads = min_threads};

        ck_assert_msg(
                wait_for(h, process_cpus_ok, &w),
                "threads of %d not all on CPUs %s (at least %u threads) after %llu s: %s", (int)pid, cpus,
                min_threads, HARNESS_TIMEOUT_USEC / USEC_PER_SEC, w.last);
}

void harness_wait_process_cpus_by_name(
        Harness *h, pid_t pid, const char *glob, const char *cpus_match, const char *cpus_other,
        unsigned min_threads) {
        ProcessCpusWait w = {
                .pid = pid,
                .glob = glob,
                .cpus_match = cpus_match,
                .cpus_other = cpus_other,
                .min_threads = min_threads,
        };

        ck_assert_msg(
                wait_for(h, process_cpus_ok, &w),
                "threads of %d: want \"%s\" on %s, others on %s (at least %u threads) after %llu s: %s",
                (int)pid, glob, cpus_match, cpus_other, min_threads, HARNESS_TIMEOUT_USEC / USEC_PER_SEC,
                w.last);
}

void harness_assert_process_cpus_now(pid_t pid, const char *cpus, unsigned min_threads) {
        ProcessCpusWait w = {.pid = pid, .cpus_match = cpus, .min_threads = min_threads};

        ck_assert_msg(
                process_cpus_ok(NULL, &w), "threads of %d not all on CPUs %s (at least %u threads): %s",
                (int)pid, cpus, min_threads, w.last);
}

/* ---- D-Bus ---- */

typedef struct PropDef {
        const char *name;
        const char *signature;
        size_t offset;
} PropDef;

static const PropDef prop_defs[] = {
        {"Version", "s", offsetof(ManagerProps, version)},
        {"State", "s", offsetof(ManagerProps, state)},
        {"ManagedProcesses", "u", offsetof(ManagerProps, managed_processes)},
        {"EventsReceived", "t", offsetof(ManagerProps, events_received)},
        {"EventsLost", "t", offsetof(ManagerProps, events_lost)},
        {"MatchesUndecided", "t", offsetof(ManagerProps, matches_undecided)},
        {"Rescans", "t", offsetof(ManagerProps, rescans)},
        {"ProcessesMatched", "t", offsetof(ManagerProps, processes_matched)},
        {"ProcessesPlaced", "t", offsetof(ManagerProps, processes_placed)},
        {"ProcessesVanished", "t", offsetof(ManagerProps, processes_vanished)},
        {"PlacementFailures", "t", offsetof(ManagerProps, placement_failures)},
        {"Reloads", "t", offsetof(ManagerProps, reloads)},
        {"PolicyFiles", "as", offsetof(ManagerProps, policy_files)},
        {"LastReloadError", "s", offsetof(ManagerProps, last_reload_error)},
        {"PlacementLatencyP50USec", "t", offsetof(ManagerProps, latency_p50_usec)},
        {"PlacementLatencyP99USec", "t", offsetof(ManagerProps, latency_p99_usec)},
        {"PlacementLatencyMaxUSec", "t", offsetof(ManagerProps, latency_max_usec)},
};

void manager_props_done(ManagerProps *p) {
        free(p->version);
        free(p->state);
        strv_free(p->policy_files);
        free(p->last_reload_error);
        *p = (ManagerProps){};
}

void harness_get_props(Harness *h, ManagerProps *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        ManagerProps p = {};
        bool seen[ELEMENTSOF(prop_defs)] = {};
        int r;

        ck_assert_msg(h->bus, "not connected");
        drain_notify(h);
        r = sd_bus_call_method(
                h->bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                &error, &reply, "s", AFFINITYD_BUS_INTERFACE);
        ck_assert_msg(
                r >= 0, "GetAll(%s) failed: %s: %s", AFFINITYD_BUS_INTERFACE, strna(error.name),
                strna(error.message));

        ck_assert(sd_bus_message_enter_container(reply, 'a', "{sv}") > 0);
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *name;
                size_t i;

                ck_assert(sd_bus_message_read(reply, "s", &name) > 0);
                for (i = 0; i < ELEMENTSOF(prop_defs); i++)
                        if (streq(prop_defs[i].name, name))
                                break;
                if (i == ELEMENTSOF(prop_defs)) {
                        ck_assert(sd_bus_message_skip(reply, "v") >= 0);
                } else {
                        const PropDef *d = &prop_defs[i];
                        void *field = (uint8_t *)&p + d->offset;

                        r = sd_bus_message_enter_container(reply, 'v', d->signature);
                        ck_assert_msg(r > 0, "property %s is not of type %s", name, d->signature);
                        if (streq(d->signature, "as"))
                                r = sd_bus_message_read_strv(reply, (char ***)field);
                        else if (streq(d->signature, "s")) {
                                const char *s;
                                r = sd_bus_message_read(reply, "s", &s);
                                if (r > 0)
                                        *(char **)field = xstrdup(s);
                        } else
                                r = sd_bus_message_read_basic(reply, d->signature[0], field);
                        ck_assert_msg(r >= 0, "can't read property %s: %s", name, strerror(-r));
                        ck_assert(sd_bus_message_exit_container(reply) >= 0);
                        seen[i] = true;
                }
                ck_assert(sd_bus_message_exit_container(reply) >= 0);
        }
        ck_assert_msg(r >= 0, "bad GetAll reply: %s", strerror(-r));
        sd_bus_message_unref(reply);

        for (size_t i = 0; i < ELEMENTSOF(prop_defs); i++)
                ck_assert_msg(
                        seen[i], "property %s missing from %s", prop_defs[i].name, AFFINITYD_BUS_INTERFACE);
        if (!p.policy_files) {
                p.policy_files = calloc(1, sizeof(char *));
                ck_assert(p.policy_files);
        }
        *ret = p;
}

typedef struct SettledWait {
        uint64_t min_matched;
        const ManagerProps *baseline;
        ManagerProps props;
} SettledWait;

static bool counters_settled(Harness *h, void *userdata) {
        SettledWait *w = userdata;
        const ManagerProps *p = &w->props;

        manager_props_done(&w->props);
        harness_get_props(h, &w->props);
        if (p->processes_placed + p->processes_vanished != p->processes_matched)
                return false;
        return p->processes_matched >= w->min_matched ||
                (w->baseline && p->events_lost > w->baseline->events_lost);
}

void harness_wait_counters_settled(
        Harness *h, uint64_t min_matched, const ManagerProps *baseline, ManagerProps *ret) {
        SettledWait w = {.min_matched = min_matched, .baseline = baseline};

        ck_assert_msg(
                wait_for(h, counters_settled, &w),
                "counters did not settle within %llu s: ProcessesMatched=%" PRIu64 " (want >= %" PRIu64
                ") ProcessesPlaced=%" PRIu64 " ProcessesVanished=%" PRIu64 " EventsLost=%" PRIu64
                " Rescans=%" PRIu64,
                HARNESS_TIMEOUT_USEC / USEC_PER_SEC, w.props.processes_matched, min_matched,
                w.props.processes_placed, w.props.processes_vanished, w.props.events_lost, w.props.rescans);
        *ret = w.props;
}

size_t harness_list_processes(Harness *h, ProcessEntry **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        ProcessEntry *e = NULL;
        size_t n = 0;
        uint32_t pid;
        const char *comm, *policy, *cpus;
        int r;

        drain_notify(h);
        r = sd_bus_call_method(
                h->bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListProcesses",
                &error, &reply, NULL);
        ck_assert_msg(r >= 0, "ListProcesses failed: %s: %s", strna(error.name), strna(error.message));
        r = sd_bus_message_enter_container(reply, 'a', "(usss)");
        ck_assert_msg(r > 0, "ListProcesses reply is not a(usss): %s", strerror(-r));
        while ((r = sd_bus_message_read(reply, "(usss)", &pid, &comm, &policy, &cpus)) > 0) {
                ProcessEntry *t = realloc(e, (n + 1) * sizeof *e);
                ck_assert(t);
                e = t;
                e[n++] = (ProcessEntry){
                        .pid = pid,
                        .comm = xstrdup(comm),
                        .policy = xstrdup(policy),
                        .cpus = xstrdup(cpus),
                };
        }
        ck_assert_msg(r >= 0, "bad ListProcesses reply: %s", strerror(-r));
        sd_bus_message_unref(reply);
        *ret = e;
        return n;
}

void process_entries_free(ProcessEntry *e, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(e[i].comm);
                free(e[i].policy);
                free(e[i].cpus);
        }
        free(e);
}

const ProcessEntry *process_entries_find(const ProcessEntry *e, size_t n, pid_t pid) {
        for (size_t i = 0; i < n; i++)
                if (e[i].pid == (uint32_t)pid)
                        return &e[i];
        return NULL;
}

size_t harness_list_policies(Harness *h, PolicyEntry **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        PolicyEntry *e = NULL;
        size_t n = 0;
        const char *name, *file, *cpus, *pending;
        uint32_t line;
        int r;

        drain_notify(h);
        r = sd_bus_call_method(
                h->bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListPolicies",
                &error, &reply, NULL);
        ck_assert_msg(r >= 0, "ListPolicies failed: %s: %s", strna(error.name), strna(error.message));
        r = sd_bus_message_enter_container(reply, 'a', "(ssuss)");
        ck_assert_msg(r > 0, "ListPolicies reply is not a(ssuss): %s", strerror(-r));
        while ((r = sd_bus_message_read(reply, "(ssuss)", &name, &file, &line, &cpus, &pending)) > 0) {
                PolicyEntry *t = realloc(e, (n + 1) * sizeof *e);
                ck_assert(t);
                e = t;
                e[n++] = (PolicyEntry){
                        .name = xstrdup(name),
                        .file = xstrdup(file),
                        .line = line,
                        .cpus = xstrdup(cpus),
                        .pending_reason = xstrdup(pending),
                };
        }
        ck_assert_msg(r >= 0, "bad ListPolicies reply: %s", strerror(-r));
        sd_bus_message_unref(reply);
        *ret = e;
        return n;
}

void policy_entries_free(PolicyEntry *e, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(e[i].name);
                free(e[i].file);
                free(e[i].cpus);
                free(e[i].pending_reason);
        }
        free(e);
}

typedef struct ListedWait {
        pid_t pid;
        const char *policy;
        char last[256];
} ListedWait;

static bool listed(Harness *h, void *userdata) {
        ListedWait *w = userdata;
        ProcessEntry *e = NULL;
        size_t n = harness_list_processes(h, &e);
        const ProcessEntry *f = process_entries_find(e, n, w->pid);
        bool ok = f && streq(f->policy, w->policy);

        if (f)
                snprintf(
                        w->last, sizeof w->last, "listed as (%u, %s, %s, %s)", f->pid, f->comm, f->policy,
                        f->cpus);
        else
                snprintf(w->last, sizeof w->last, "not among the %zu listed", n);
        process_entries_free(e, n);
        return ok;
}

void harness_wait_listed(Harness *h, pid_t pid, const char *policy) {
        ListedWait w = {.pid = pid, .policy = policy, .last = ""};

        ck_assert_msg(
                wait_for(h, listed, &w), "ListProcesses does not show %d under policy %s after %llu s: %s",
                (int)pid, policy, HARNESS_TIMEOUT_USEC / USEC_PER_SEC, w.last);
}

int harness_reload(Harness *h, sd_bus_error *error) {
        int r;

        drain_notify(h);
        r = sd_bus_call_method(
                h->bus, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Reload", error,
                NULL, NULL);
        drain_notify(h);
        return r;
}

int harness_call_as_nobody(Harness *h, const char *member, char **ret_value, char **ret_error_name) {
        _cleanup_close_ int rfd = -EBADF;
        char buf[4096];
        size_t n = 0;
        int p[2], status;
        pid_t pid;
        uint64_t deadline;

        ck_assert(h->bus_address);
        ck_assert(pipe2(p, O_CLOEXEC) == 0);
        rfd = p[0];
        pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *b = NULL;
                char out[4096];
                int r;

                close(p[0]);
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (setgroups(0, NULL) < 0 || setresgid(NOGROUP_GID, NOGROUP_GID, NOGROUP_GID) < 0 ||
                    setresuid(NOBODY_UID, NOBODY_UID, NOBODY_UID) < 0) {
                        snprintf(out, sizeof out, "SETUP setresuid: %s", strerror(errno));
                        goto finish;
                }
                if (geteuid() != NOBODY_UID) {
                        snprintf(out, sizeof out, "SETUP still euid %u", (unsigned)geteuid());
                        goto finish;
                }
                if (sd_bus_new(&b) < 0 || sd_bus_set_address(b, h->bus_address) < 0 ||
                    sd_bus_set_bus_client(b, 1) < 0 || (r = sd_bus_start(b)) < 0) {
                        snprintf(out, sizeof out, "SETUP can't connect as nobody");
                        goto finish;
                }
                if (streq(member, "Reload")) {
                        r = sd_bus_call_method(
                                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Reload",
                                &error, NULL, NULL);
                        if (r >= 0)
                                snprintf(out, sizeof out, "OK ");
                } else {
                        char *v = NULL;
                        r = sd_bus_get_property_string(
                                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, member,
                                &error, &v);
                        if (r >= 0)
                                snprintf(out, sizeof out, "OK %s", v);
                        free(v);
                }
                if (r < 0)
                        snprintf(out, sizeof out, "ERR %s", error.name ? error.name : strerror(-r));
finish:
                (void)!write(p[1], out, strlen(out));
                _exit(0);
        }
        close(p[1]);

        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        for (;;) {
                struct pollfd pfd = {.fd = rfd, .events = POLLIN};
                uint64_t now = harness_now_usec();
                ssize_t k;

                if (now >= deadline) {
                        (void)kill(pid, SIGKILL);
                        (void)waitpid(pid, NULL, 0);
                        ck_abort_msg(
                                "the call of %s as nobody did not finish within %llu s", member,
                                HARNESS_TIMEOUT_USEC / USEC_PER_SEC);
                }
                drain_notify(h);
                if (poll(&pfd, 1, 50) <= 0)
                        continue;
                k = read(rfd, buf + n, sizeof buf - 1 - n);
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        buf[n] = '\0';
        ck_assert(waitpid(pid, &status, 0) == pid);
        ck_assert_msg(strncmp(buf, "SETUP", 5) != 0, "as nobody: %s", buf);
        if (strncmp(buf, "OK ", 3) == 0) {
                if (ret_value)
                        *ret_value = xstrdup(buf + 3);
                return 0;
        }
        ck_assert_msg(strncmp(buf, "ERR ", 4) == 0, "unexpected answer from the nobody child: \"%s\"", buf);
        if (ret_error_name)
                *ret_error_name = xstrdup(buf + 4);
        return -1;
}

int harness_run_ctl(Harness *h, char **ret_out, char **ret_err, ...) {
        _cleanup_free_ char *out_path = NULL, *err_path = NULL, *arg_bus = NULL;
        const char *bin = getenv("AFFINITYCTL_BIN");
        const char *argv[32];
        size_t n = 0;
        pid_t parent = getpid(), pid;
        int status = 0;
        uint64_t deadline;
        va_list ap;

        ck_assert_msg(bin, "AFFINITYCTL_BIN is not set");
        argv[n++] = bin;
        if (h->bus_address) {
                arg_bus = xasprintf("--bus-address=%s", h->bus_address);
                argv[n++] = arg_bus;
        }
        va_start(ap, ret_err);
        for (const char *a; (a = va_arg(ap, const char *));) {
                ck_assert(n < ELEMENTSOF(argv) - 1);
                argv[n++] = a;
        }
        va_end(ap);
        argv[n] = NULL;

        h->n_ctl_runs++;
        out_path = xasprintf("%s/ctl-%u.out", h->dir, h->n_ctl_runs);
        err_path = xasprintf("%s/ctl-%u.err", h->dir, h->n_ctl_runs);

        pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (out < 0)
                        _exit(126);
                child_setup(parent, -1, out, err_path);
                execv(bin, (char *const *)argv);
                _exit(127);
        }

        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        for (;;) {
                pid_t r = waitpid(pid, &status, WNOHANG);
                if (r == pid)
                        break;
                if (harness_now_usec() >= deadline) {
                        (void)kill(pid, SIGKILL);
                        (void)waitpid(pid, NULL, 0);
                        ck_abort_msg(
                                "affinityctl %s did not finish within %llu s", n > 2 ? argv[n - 1] : "",
                                HARNESS_TIMEOUT_USEC / USEC_PER_SEC);
                }
                drain_notify(h);
                usleep(5 * 1000);
        }

        if (ret_out)
                ck_assert(read_file(out_path, ret_out) >= 0);
        if (ret_err)
                ck_assert(read_file(err_path, ret_err) >= 0);
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + WTERMSIG(status);
}

int harness_run(Harness *h, bool as_nobody, char **ret_out, char **ret_err, const char *const *argv) {
        _cleanup_free_ char *out_path = NULL, *err_path = NULL;
        const char *args[64];
        size_t n = 0;
        pid_t parent = getpid(), pid;
        int status = 0;
        uint64_t deadline;

        ck_assert(argv && argv[0]);
        if (as_nobody) {
                static const char *const setpriv[] = {"setpriv",          "--reuid=nobody",
                                                      "--regid=nogroup",  "--clear-groups",
                                                      "--pdeathsig=KILL", "--"};
                for (size_t i = 0; i < ELEMENTSOF(setpriv); i++)
                        args[n++] = setpriv[i];
        }
        for (const char *const *a = argv; *a; a++) {
                ck_assert(n < ELEMENTSOF(args) - 1);
                args[n++] = *a;
        }
        args[n] = NULL;

        h->n_ctl_runs++;
        out_path = xasprintf("%s/run-%u.out", h->dir, h->n_ctl_runs);
        err_path = xasprintf("%s/run-%u.err", h->dir, h->n_ctl_runs);

        pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (out < 0)
                        _exit(126);
                child_setup(parent, -1, out, err_path);
                child_no_leak_check();
                execvp(args[0], (char *const *)args);
                _exit(127);
        }

        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        for (;;) {
                pid_t r = waitpid(pid, &status, WNOHANG);
                if (r == pid)
                        break;
                if (harness_now_usec() >= deadline) {
                        (void)kill(pid, SIGKILL);
                        (void)waitpid(pid, NULL, 0);
                        ck_abort_msg(
                                "%s did not finish within %llu s", argv[0],
                                HARNESS_TIMEOUT_USEC / USEC_PER_SEC);
                }
                drain_notify(h);
                usleep(5 * 1000);
        }

        if (ret_out)
                ck_assert(read_file(out_path, ret_out) >= 0);
        if (ret_err)
                ck_assert(read_file(err_path, ret_err) >= 0);
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + WTERMSIG(status);
}

bool strv_contains_suffix(char *const *l, const char *suffix) {
        size_t k = strlen(suffix);

        STRV_FOREACH (s, l) {
                size_t n = strlen(*s);
                if (n >= k && streq(*s + n - k, suffix))
                        return true;
        }
        return false;
}

/* ---- the daemon's log ---- */

bool harness_log_contains(Harness *h, const char *needle) {
        _cleanup_free_ char *path = xasprintf("%s/affinityd.log", h->dir), *text = NULL;

        return read_file(path, &text) >= 0 && strstr(text, needle);
}

static bool log_has(Harness *h, void *userdata) {
        return harness_log_contains(h, userdata);
}

void harness_wait_log(Harness *h, const char *needle) {
        ck_assert_msg(
                wait_for(h, log_has, (void *)needle), "\"%s\" not in %s/affinityd.log within %llu s", needle,
                h->dir, HARNESS_TIMEOUT_USEC / USEC_PER_SEC);
}

typedef struct CommWait {
        pid_t pid;
        const char *comm;
} CommWait;

static bool comm_is(Harness *h, void *userdata) {
        const CommWait *w = userdata;
        _cleanup_free_ char *path = xasprintf("/proc/%d/comm", (int)w->pid), *text = NULL;

        if (read_file(path, &text) < 0)
                return false;
        text[strcspn(text, "\n")] = '\0';
        return streq(text, w->comm);
}

void harness_wait_comm(Harness *h, pid_t pid, const char *comm) {
        CommWait w = {.pid = pid, .comm = comm};
        ck_assert_msg(
                wait_for(h, comm_is, &w), "/proc/%d/comm did not become \"%s\" within %llu s", (int)pid,
                comm, HARNESS_TIMEOUT_USEC / USEC_PER_SEC);
}

/* ---- reaching into the daemon ---- */

static char proc_state(pid_t pid) {
        _cleanup_free_ char *path = xasprintf("/proc/%d/stat", (int)pid), *text = NULL;
        const char *p;

        if (read_file(path, &text) < 0)
                return '\0';
        p = strrchr(text, ')');
        return p && p[1] == ' ' ? p[2] : '\0';
}

static bool daemon_stopped(Harness *h, void *userdata) {
        char s = proc_state(h->daemon_pid);
        return s == 'T' || s == 't';
}

void harness_pause_daemon(Harness *h) {
        harness_assert_daemon_alive(h);
        ck_assert(kill(h->daemon_pid, SIGSTOP) == 0);
        ck_assert_msg(wait_for(h, daemon_stopped, NULL), "affinityd did not stop on SIGSTOP");
}

void harness_resume_daemon(Harness *h) {
        ck_assert(kill(h->daemon_pid, SIGCONT) == 0);
}

char harness_proc_state(pid_t pid) {
        return proc_state(pid);
}

/* The inodes of the NETLINK_CONNECTOR sockets of this network namespace (/proc/net/netlink:
 * "sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode"). */
static bool inode_is_connector(unsigned long inode) {
        _cleanup_fclose_ FILE *f = fopen("/proc/net/netlink", "re");
        char line[512];

        ck_assert_msg(f, "can't open /proc/net/netlink: %s", strerror(errno));
        while (fgets(line, sizeof line, f)) {
                unsigned long long sk;
                unsigned long ino;
                int eth;

                if (sscanf(line, "%llx %d %*d %*x %*d %*d %*d %*d %*d %lu", &sk, &eth, &ino) == 3 &&
                    eth == NETLINK_CONNECTOR_PROTOCOL && ino == inode)
                        return true;
        }
        return false;
}

int harness_daemon_proc_connector_fd(Harness *h) {
        _cleanup_free_ char *dir = xasprintf("/proc/%d/fd", (int)h->daemon_pid);
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        struct dirent *de;
        int target = -1, fd;

        harness_assert_daemon_alive(h);
        d = opendir(dir);
        ck_assert_msg(d, "opendir %s: %s", dir, strerror(errno));
        while ((de = readdir(d))) {
                char path[PATH_MAX], link[128];
                unsigned long inode;
                ssize_t n;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                n = readlink(path, link, sizeof link - 1);
                if (n <= 0)
                        continue;
                link[n] = '\0';
                if (sscanf(link, "socket:[%lu]", &inode) == 1 && inode_is_connector(inode)) {
                        target = atoi(de->d_name);
                        break;
                }
        }
        ck_assert_msg(target >= 0, "affinityd has no proc connector socket");

        pidfd = (int)syscall(SYS_pidfd_open, h->daemon_pid, 0);
        ck_assert_msg(pidfd >= 0, "pidfd_open: %s", strerror(errno));
        fd = (int)syscall(SYS_pidfd_getfd, pidfd, target, 0);
        ck_assert_msg(fd >= 0, "pidfd_getfd: %s", strerror(errno));
        return fd;
}

unsigned harness_last_cpu(const char *list) {
        const char *p = list + strlen(list);

        while (p > list && p[-1] >= '0' && p[-1] <= '9')
                p--;
        return (unsigned)strtoul(p, NULL, 10);
}

int harness_write_knob(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
        ssize_t l = (ssize_t)strlen(text);

        if (fd < 0)
                return -errno;
        if (write(fd, text, (size_t)l) != l)
                r = -errno;
        close(fd);
        return r;
}

/* The first line of path without its newline, newly allocated; NULL when unreadable. */
static char *read_first_line(const char *path) {
        char buf[512];
        FILE *f = fopen(path, "re");
        char *r = NULL;

        if (!f)
                return NULL;
        if (fgets(buf, sizeof buf, f)) {
                buf[strcspn(buf, "\n")] = '\0';
                r = strdup(buf);
        }
        fclose(f);
        return r;
}

/* The total count of IRQ irq over every CPU in /proc/interrupts (0 when absent). */
static uint64_t irq_total(unsigned irq) {
        FILE *f = fopen("/proc/interrupts", "re");
        char line[8192];
        uint64_t total = 0;

        if (!f)
                return 0;
        while (fgets(line, sizeof line, f)) {
                char *p = line, *end;

                while (*p == ' ')
                        p++;
                if (strtoul(p, &end, 10) != irq || end == p || *end != ':')
                        continue;
                p = end + 1;
                for (;;) {
                        uint64_t v = strtoull(p, &end, 10);

                        if (end == p)
                                break;
                        total += v;
                        p = end;
                }
                break;
        }
        fclose(f);
        return total;
}

unsigned harness_find_movable_irq(char *original, size_t size) {
        DIR *d = opendir("/proc/irq");
        struct dirent *de;
        uint64_t best = 0;
        unsigned found = 0;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                char path[300];
                unsigned irq;
                char *end, *now;
                uint64_t total;

                irq = (unsigned)strtoul(de->d_name, &end, 10);
                if (end == de->d_name || *end || irq == 0)
                        continue;
                snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", irq);
                now = read_first_line(path);
                if (!now)
                        continue;
                total = irq_total(irq);
                if (total > best && harness_write_knob(path, now) == 0) {
                        best = total;
                        found = irq;
                        snprintf(original, size, "%s", now);
                }
                free(now);
        }
        closedir(d);
        return found;
}
