/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl metrics against the real daemon: the text's values are the bus's (counters
 * between two GetAll snapshots taken around it, the policies' processes and pending state, the
 * histogram cumulative with +Inf = _count), and promtool check metrics accepts it; --listen
 * serves GET /metrics (404 elsewhere), one fresh reading per scrape (affinityd_up 0 while the
 * daemon is gone, 1 again when it is back); --listen=systemd serves the socket passed as
 * systemd does (LISTEN_FDS); and a real Prometheus scrapes it and can query what it scraped.
 *
 * Needs promtool and prometheus (Debian's package prometheus, in tests/install-deps --tests);
 * exits 77 only without them.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

/* A Prometheus server starts in a few seconds; bound what it may take to scrape and answer. */
#define PROMETHEUS_TIMEOUT_USEC (90 * USEC_PER_SEC)

/* A program started in the background by bg_start(), its stderr in a file. */
typedef struct Bg {
        pid_t pid;
        char *err_path;
} Bg;

/*
 * Starts argv (argv[0] a path or a name in PATH) with stdin /dev/null, stdout and stderr to
 * DIR/NAME.log, killed with the test. listen_fd >= 0: passed as fd 3 with LISTEN_FDS=1 and
 * LISTEN_PID, as systemd passes a socket.
 */
static void bg_start(Harness *h, Bg *b, const char *name, const char *const *argv, int listen_fd) {
        pid_t parent = getpid();

        b->err_path = harness_asprintf("%s/%s.log", harness_dir(h), name);
        b->pid = fork();
        ck_assert_int_ge(b->pid, 0);
        if (b->pid == 0) {
                char pid_text[32];
                int null, log;

                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(126);
                null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                log = open(b->err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
                        _exit(126);
                if (listen_fd >= 0) {
                        /* dup2() of fd 3 onto itself would keep its O_CLOEXEC. */
                        if (listen_fd == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(listen_fd, 3) < 0)
                                _exit(126);
                        snprintf(pid_text, sizeof(pid_text), "%d", (int)getpid());
                        setenv("LISTEN_FDS", "1", 1);
                        setenv("LISTEN_PID", pid_text, 1);
                } else {
                        unsetenv("LISTEN_FDS");
                        unsetenv("LISTEN_PID");
                }
                execvp(argv[0], (char *const *)argv);
                _exit(127);
        }
}

/* SIGTERM, then the exit status (128+N for signal N); bounded. */
static int bg_stop(Bg *b) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        int status = 0;

        if (b->pid <= 0)
                return -1;
        ck_assert_int_eq(kill(b->pid, SIGTERM), 0);
        for (;;) {
                pid_t r = waitpid(b->pid, &status, WNOHANG);

                if (r == b->pid)
                        break;
                if (harness_now_usec() >= deadline) {
                        (void)kill(b->pid, SIGKILL);
                        (void)waitpid(b->pid, &status, 0);
                        ck_abort_msg("%s did not exit within the deadline after SIGTERM", b->err_path);
                }
                usleep(10 * 1000);
        }
        b->pid = 0;
        free(b->err_path);
        b->err_path = NULL;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The whole file at path, newly allocated; "" when it can't be read or is empty. */
static char *read_text(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t size = 0;

        if (!f || getdelim(&text, &size, 0, f) < 0) {
                free(text); /* getdelim() may have allocated before it found nothing to read */
                return harness_asprintf("%s", "");
        }
        return text;
}

/* Waits until b's output holds needle, failing if b exits first; returns the output. */
static char *bg_wait_output(Bg *b, const char *needle) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        for (;;) {
                char *text = read_text(b->err_path);
                int status;

                if (strstr(text, needle))
                        return text;
                ck_assert_msg(
                        waitpid(b->pid, &status, WNOHANG) == 0, "%s exited before saying \"%s\":\n%s",
                        b->err_path, needle, text);
                ck_assert_msg(
                        harness_now_usec() < deadline, "no \"%s\" in %s:\n%s", needle, b->err_path, text);
                free(text);
                usleep(20 * 1000);
        }
}

/* The port of "Serving the metrics at http://127.0.0.1:PORT/metrics" in b's output. */
static unsigned bg_wait_serving(Bg *b) {
        _cleanup_free_ char *text = bg_wait_output(b, "/metrics\n");
        const char *p = strstr(text, "http://127.0.0.1:");
        unsigned port = 0;

        ck_assert_msg(p && sscanf(p, "http://127.0.0.1:%u/metrics", &port) == 1, "no address in:\n%s", text);
        ck_assert_uint_gt(port, 0);
        return port;
}

/* A listening TCP socket on 127.0.0.1 at a port the kernel picks; its port into *ret_port. */
static int listen_loopback(unsigned *ret_port) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        *ret_port = ntohs(a.sin_port);
        return fd;
}

/* A port free on 127.0.0.1 now (for a server that binds it itself). */
static unsigned free_port(void) {
        unsigned port;

        close(listen_loopback(&port));
        return port;
}

/*
 * GET http://127.0.0.1:port/path (HTTP/1.0, the connection closed after the answer): the status
 * into *ret_status, headers and body into *ret_head and *ret_body (newly allocated). Returns 0,
 * or -errno when no connection can be made (nobody listening yet). A connection that gives no
 * answer within the deadline fails the test.
 */
static int http_get(
        unsigned port, const char *path, unsigned *ret_status, char **ret_head, char **ret_body) {
        struct sockaddr_in a = {
                .sin_family = AF_INET,
                .sin_port = htons((uint16_t)port),
                .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
        };
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        _cleanup_free_ char *request = NULL, *buf = NULL;
        size_t n = 0, size = 0;
        char *end;
        int fd, r;

        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        request = harness_asprintf("GET %s HTTP/1.0\r\nHost: 127.0.0.1:%u\r\n\r\n", path, port);
        ck_assert_int_eq(send(fd, request, strlen(request), MSG_NOSIGNAL), (ssize_t)strlen(request));
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                uint64_t now = harness_now_usec();
                ssize_t k;

                ck_assert_msg(now < deadline, "no complete answer from port %u for %s", port, path);
                if (poll(&p, 1, (int)((deadline - now) / USEC_PER_MSEC) + 1) <= 0)
                        continue;
                if (n + 4096 > size) {
                        size = (n + 4096) * 2;
                        buf = realloc(buf, size);
                        ck_assert_ptr_nonnull(buf);
                }
                k = recv(fd, buf + n, size - n - 1, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                ck_assert_msg(k >= 0, "recv: %s", strerror(errno));
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        close(fd);
        ck_assert_ptr_nonnull(buf);
        buf[n] = 0;
        ck_assert_msg(sscanf(buf, "HTTP/1.%*u %u", ret_status) == 1, "not an HTTP answer: %s", buf);
        end = strstr(buf, "\r\n\r\n");
        ck_assert_msg(end, "no end of the headers: %s", buf);
        *end = 0;
        *ret_head = harness_asprintf("%s", buf);
        *ret_body = harness_asprintf("%s", end + 4);
        return 0;
}

/* GET /metrics once the server accepts connections; fails the test unless the answer is 200 of
 * the exposition format. Returns the body. */
static char *scrape(unsigned port) {
        _cleanup_free_ char *head = NULL;
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        unsigned status = 0;
        char *body = NULL;

        while (http_get(port, "/metrics", &status, &head, &body) < 0) {
                ck_assert_msg(harness_now_usec() < deadline, "nothing listens on port %u", port);
                usleep(20 * 1000);
        }
        ck_assert_msg(status == 200, "GET /metrics: %u\n%s", status, body);
        ck_assert_msg(
                strstr(head, "Content-Type: text/plain; version=0.0.4"),
                "GET /metrics: Content-Type in:\n%s", head);
        return body;
}

/* The value of the sample line "NAME VALUE" (NAME with its labels) in text; fails if absent. */
static uint64_t sample(const char *text, const char *name) {
        _cleanup_free_ char *needle = harness_asprintf("\n%s ", name);
        const char *p = strstr(text, needle);

        ck_assert_msg(p, "no sample %s in:\n%s", name, text);
        return strtoull(p + strlen(needle), NULL, 10);
}

static bool promtool_accepts(Harness *h, const char *text, char **ret_err) {
        _cleanup_free_ char *path = harness_asprintf("%s/metrics.txt", harness_dir(h)), *cmd = NULL;
        FILE *f = fopen(path, "we");
        int r;

        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
        cmd = harness_asprintf("promtool check metrics < '%s' 2>&1", path);
        r = harness_run(h, false, ret_err, NULL, ARGS("sh", "-c", cmd));
        return r == 0;
}

/* Writes the policies of the tests: web (CPU 1) for the process started under name, and ghost,
 * pending (a user no machine has). */
static void write_policies(Harness *h, const char *name) {
        harness_write_policy(
                h, "50-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match:\n"
                "      comm: %s\n"
                "    cpus: \"1\"\n"
                "  - name: ghost\n"
                "    match:\n"
                "      user: nosuchuser-xyz\n"
                "    cpus: \"1\"\n",
                name);
}

static Child *spawn_web(Harness *h, const char *name) {
        Child *c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads", .name = name, .args = ARGS("-n", "2"), .pipes = true});

        free(child_expect_line(c)); /* "ready N" */
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_wait_listed(h, c->pid, "web");
        return c;
}

static uint64_t latency_count(Harness *h) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t n = 0;
        int r = sd_bus_get_property_trivial(
                harness_bus(h), AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE,
                "PlacementLatencyCount", &error, 't', &n);

        ck_assert_msg(r >= 0, "PlacementLatencyCount: %s", strna(error.message));
        return n;
}

/* Checks that the histogram is cumulative, ends in +Inf = _count, and has _sum; returns the
 * count. */
static uint64_t check_histogram(const char *text) {
        uint64_t prev = 0, n = 0, inf = UINT64_MAX;

        for (const char *p = text; (p = strstr(p, "\naffinityd_placement_latency_seconds_bucket{le=\""));
             p++) {
                const char *v = strstr(p, "\"} ");
                uint64_t c;

                ck_assert_ptr_nonnull(v);
                c = strtoull(v + 3, NULL, 10);
                ck_assert_msg(c >= prev, "histogram not cumulative at %.60s", p + 1);
                ck_assert_msg(inf == UINT64_MAX, "a bucket after +Inf: %.60s", p + 1);
                prev = c;
                n++;
                if (strncmp(p + 48, "+Inf\"", 5) == 0)
                        inf = c;
        }
        ck_assert_uint_eq(n, 17); /* 16 bounds and +Inf */
        ck_assert_uint_eq(inf, sample(text, "affinityd_placement_latency_seconds_count"));
        ck_assert_ptr_nonnull(strstr(text, "\naffinityd_placement_latency_seconds_sum "));
        return inf;
}

START_TEST(test_metrics_text) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *out = NULL, *err = NULL, *lint = NULL, *build_info = NULL;
        ManagerProps before = {}, after = {};
        uint64_t count_before, count_after, n;
        Child *c;
        int r;

        write_policies(h, name);
        harness_start_daemon(h);
        c = spawn_web(h, name);
        harness_wait_counters_settled(h, 1, NULL, &before);
        count_before = latency_count(h);

        r = harness_run_ctl(h, &out, &err, "metrics", NULL);
        ck_assert_msg(r == 0, "affinityctl metrics exited %d: %s", r, err);
        harness_get_props(h, &after);
        count_after = latency_count(h);

        ck_assert_msg(!strstr(out, "pid"), "a PID in the metrics:\n%s", out);
        ck_assert_uint_eq(sample(out, "affinityd_up"), 1);
        build_info = harness_asprintf("affinityd_build_info{version=\"%s\"}", before.version);
        ck_assert_uint_eq(sample(out, build_info), 1);
        ck_assert_uint_eq(sample(out, "affinityd_state{state=\"running\"}"), 1);
        ck_assert_uint_eq(sample(out, "affinityd_state{state=\"degraded\"}"), 0);
        ck_assert_uint_eq(sample(out, "affinityd_discovery{mode=\"netlink\"}"), 1);
        ck_assert_uint_eq(sample(out, "affinityd_last_reload_success"), 1);

        /* Every counter between the snapshots taken before and after. */
#define BETWEEN(metric, field) \
        do { \
                uint64_t v_ = sample(out, metric); \
                ck_assert_msg( \
                        v_ >= before.field && v_ <= after.field, "%s = %llu, not in [%llu, %llu]", metric, \
                        (unsigned long long)v_, (unsigned long long)before.field, \
                        (unsigned long long)after.field); \
        } while (0)
        BETWEEN("affinityd_events_received_total", events_received);
        BETWEEN("affinityd_events_lost_total", events_lost);
        BETWEEN("affinityd_matches_undecided_total", matches_undecided);
        BETWEEN("affinityd_rescans_total", rescans);
        BETWEEN("affinityd_processes_matched_total", processes_matched);
        BETWEEN("affinityd_processes_placed_total", processes_placed);
        BETWEEN("affinityd_processes_vanished_total", processes_vanished);
        BETWEEN("affinityd_placement_failures_total", placement_failures);
        BETWEEN("affinityd_reloads_total", reloads);
#undef BETWEEN
        ck_assert_uint_ge(sample(out, "affinityd_processes_placed_total"), 1);
        n = sample(out, "affinityd_managed_processes");
        ck_assert_uint_ge(n, 1);
        ck_assert_uint_le(n, MAX(before.managed_processes, after.managed_processes));

        /* Per policy: web manages the process, ghost is pending; nothing is labelled by PID. */
        ck_assert_uint_eq(sample(out, "affinityd_policy_processes{policy=\"web\"}"), 1);
        ck_assert_uint_eq(sample(out, "affinityd_policy_processes{policy=\"ghost\"}"), 0);
        ck_assert_uint_eq(sample(out, "affinityd_policy_pending{policy=\"web\"}"), 0);
        ck_assert_uint_eq(sample(out, "affinityd_policy_pending{policy=\"ghost\"}"), 1);

        /* The latency histogram: at least the web process's placement. */
        n = check_histogram(out);
        ck_assert_uint_ge(n, 1);
        ck_assert_uint_ge(n, count_before);
        ck_assert_uint_le(n, count_after);

        ck_assert_msg(promtool_accepts(h, out, &lint), "promtool check metrics:\n%s\n%s", lint, out);

        /* --json does not apply; --listen= is metrics' alone. */
        ck_assert_int_eq(harness_run_ctl(h, NULL, NULL, "--json", "metrics", NULL), 2);
        ck_assert_int_eq(harness_run_ctl(h, NULL, NULL, "--listen=:0", "status", NULL), 2);
        ck_assert_int_eq(harness_run_ctl(h, NULL, NULL, "--listen=nowhere", "metrics", NULL), 2);

        child_close_stdin(c);
        child_wait(c);
        manager_props_done(&before);
        manager_props_done(&after);
}
END_TEST

/* Not running: exit 3, nothing on stdout. */
START_TEST(test_metrics_not_running) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        int r;

        harness_start_bus(h);
        r = harness_run_ctl(h, &out, &err, "metrics", NULL);
        ck_assert_msg(r == 3, "affinityctl metrics without a daemon exited %d: %s", r, err);
        ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_metrics_listen) {
        Harness *h = harness_new();
        _cleanup_free_ char *bus = NULL, *head = NULL, *body = NULL, *m1 = NULL, *m2 = NULL, *m3 = NULL,
                            *lint = NULL;
        const char *bin = getenv("AFFINITYCTL_BIN");
        unsigned port, status = 0;
        Bg ctl = {};

        ck_assert_ptr_nonnull(bin);
        write_policies(h, harness_unique_name(h));
        harness_start_daemon(h);
        bus = harness_asprintf("--bus-address=%s", harness_bus_address(h));
        bg_start(h, &ctl, "ctl-listen", ARGS(bin, bus, "metrics", "--listen=127.0.0.1:0"), -1);
        port = bg_wait_serving(&ctl);

        m1 = scrape(port);
        ck_assert_uint_eq(sample(m1, "affinityd_up"), 1);
        ck_assert_uint_eq(sample(m1, "affinityd_state{state=\"running\"}"), 1);
        ck_assert_uint_eq(sample(m1, "affinityd_policy_pending{policy=\"ghost\"}"), 1);
        check_histogram(m1);
        ck_assert_msg(promtool_accepts(h, m1, &lint), "promtool check metrics:\n%s\n%s", lint, m1);

        ck_assert_int_eq(http_get(port, "/", &status, &head, &body), 0);
        ck_assert_uint_eq(status, 404);
        head = mfree(head);
        body = mfree(body);
        ck_assert_int_eq(http_get(port, "/metrics/x", &status, &head, &body), 0);
        ck_assert_uint_eq(status, 404);

        /* Each scrape reads the daemon afresh: gone, then back. */
        harness_stop_daemon(h);
        m2 = scrape(port);
        ck_assert_uint_eq(sample(m2, "affinityd_up"), 0);
        ck_assert_ptr_null(strstr(m2, "affinityd_build_info"));
        harness_start_daemon_with(h, &(DaemonOptions){});
        m3 = scrape(port);
        ck_assert_uint_eq(sample(m3, "affinityd_up"), 1);

        ck_assert_int_eq(bg_stop(&ctl), 0);
}
END_TEST

/* --listen=systemd: the socket comes as fd 3 with LISTEN_FDS=1, as from a socket unit. */
START_TEST(test_metrics_socket_activation) {
        Harness *h = harness_new();
        _cleanup_free_ char *bus = NULL, *m = NULL, *err = NULL;
        const char *bin = getenv("AFFINITYCTL_BIN");
        unsigned port;
        Bg ctl = {};
        int fd, r;

        ck_assert_ptr_nonnull(bin);
        harness_start_daemon(h);
        bus = harness_asprintf("--bus-address=%s", harness_bus_address(h));

        /* Without a socket from systemd: says so, exit 1. */
        r = harness_run_ctl(h, NULL, &err, "metrics", "--listen=systemd", NULL);
        ck_assert_msg(
                r == 1 && strstr(err, "LISTEN_FDS"), "affinityctl metrics --listen=systemd exited %d: %s", r,
                err);

        fd = listen_loopback(&port);
        bg_start(h, &ctl, "ctl-systemd", ARGS(bin, bus, "metrics", "--listen=systemd"), fd);
        close(fd);
        ck_assert_uint_eq(bg_wait_serving(&ctl), port);
        m = scrape(port);
        ck_assert_uint_eq(sample(m, "affinityd_up"), 1);
        ck_assert_uint_eq(sample(m, "affinityd_state{state=\"running\"}"), 1);
        ck_assert_int_eq(bg_stop(&ctl), 0);
}
END_TEST

/* Queries Prometheus' HTTP API at port until the answer to query has a result holding needle;
 * returns the answer. */
static char *prometheus_wait(unsigned port, const char *query, const char *needle, Bg *server) {
        uint64_t deadline = harness_now_usec() + PROMETHEUS_TIMEOUT_USEC;
        _cleanup_free_ char *path = harness_asprintf("/api/v1/query?query=%s", query);

        for (;;) {
                _cleanup_free_ char *head = NULL;
                char *body = NULL;
                unsigned status = 0;
                int wstatus;

                if (http_get(port, path, &status, &head, &body) == 0) {
                        if (status == 200 && strstr(body, "\"result\":[{") && strstr(body, needle))
                                return body;
                }
                ck_assert_msg(
                        waitpid(server->pid, &wstatus, WNOHANG) == 0, "prometheus exited; see %s",
                        server->err_path);
                if (harness_now_usec() >= deadline) {
                        _cleanup_free_ char *log = read_text(server->err_path);

                        ck_abort_msg(
                                "Prometheus has no %s with %s; last answer: %s\nits log:\n%s", query, needle,
                                strna(body), log);
                }
                free(body);
                usleep(200 * 1000);
        }
}

START_TEST(test_metrics_prometheus) {
        Harness *h = harness_new();
        _cleanup_free_ char *bus = NULL, *config = NULL, *config_arg = NULL, *storage_arg = NULL,
                            *web_arg = NULL, *answer = NULL, *up = NULL, *quantile = NULL, *version = NULL;
        const char *bin = getenv("AFFINITYCTL_BIN");
        unsigned ctl_port, prom_port;
        ManagerProps props = {};
        Bg ctl = {}, prom = {};
        FILE *f;

        ck_assert_ptr_nonnull(bin);
        write_policies(h, harness_unique_name(h));
        harness_start_daemon(h);
        harness_barrier(h); /* one placement at least: a histogram with a count */
        harness_get_props(h, &props);
        bus = harness_asprintf("--bus-address=%s", harness_bus_address(h));
        bg_start(h, &ctl, "ctl-listen", ARGS(bin, bus, "metrics", "--listen=127.0.0.1:0"), -1);
        ctl_port = bg_wait_serving(&ctl);

        config = harness_asprintf("%s/prometheus.yml", harness_dir(h));
        f = fopen(config, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f,
                "global:\n"
                "  scrape_interval: 1s\n"
                "  evaluation_interval: 1s\n"
                "scrape_configs:\n"
                "  - job_name: affinityd\n"
                "    static_configs:\n"
                "      - targets: ['127.0.0.1:%u']\n",
                ctl_port);
        ck_assert_int_eq(fclose(f), 0);

        prom_port = free_port();
        config_arg = harness_asprintf("--config.file=%s", config);
        storage_arg = harness_asprintf("--storage.tsdb.path=%s/prometheus-data", harness_dir(h));
        web_arg = harness_asprintf("--web.listen-address=127.0.0.1:%u", prom_port);
        bg_start(h, &prom, "prometheus", ARGS("prometheus", config_arg, storage_arg, web_arg), -1);

        /* Scraped and parsed: the build info with the daemon's version, the target up, and the
         * histogram usable by histogram_quantile(). */
        version = harness_asprintf("\"version\":\"%s\"", props.version);
        answer = prometheus_wait(prom_port, "affinityd_build_info", version, &prom);
        ck_assert_ptr_nonnull(strstr(answer, "\"__name__\":\"affinityd_build_info\""));
        up = prometheus_wait(prom_port, "up%7Bjob%3D%22affinityd%22%7D", "\"1\"]", &prom);
        quantile = prometheus_wait(
                prom_port, "histogram_quantile(0.99%2Caffinityd_placement_latency_seconds_bucket)",
                "\"value\"", &prom);

        ck_assert_int_eq(bg_stop(&prom), 0);
        ck_assert_int_eq(bg_stop(&ctl), 0);
        manager_props_done(&props);
}
END_TEST

/* Whether program is an executable in $PATH (outside a test: no check assertions). */
static bool in_path(const char *program) {
        char *path = strdup(getenv("PATH") ?: "/usr/bin:/bin"), *save = NULL;
        bool found = false;

        for (char *d = path ? strtok_r(path, ":", &save) : NULL; d && !found;
             d = strtok_r(NULL, ":", &save)) {
                char p[4096];

                snprintf(p, sizeof(p), "%s/%s", d, program);
                found = access(p, X_OK) == 0;
        }
        free(path);
        return found;
}

int main(void) {
        Suite *s = suite_create("integration-metrics");

        if (!in_path("promtool") || !in_path("prometheus")) {
                printf("SKIP: promtool and prometheus (Debian's package prometheus, tests/install-deps "
                       "--tests) "
                       "are not installed\n");
                return 77;
        }
        harness_add_test(s, test_metrics_text);
        harness_add_test(s, test_metrics_not_running);
        harness_add_test(s, test_metrics_listen);
        harness_add_test(s, test_metrics_socket_activation);
        harness_add_test(s, test_metrics_prometheus);
        return harness_main(s);
}
