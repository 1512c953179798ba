/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl metrics: prints the daemon's metrics once (ctl-metrics.h), or with --listen=ADDR
 * serves them over HTTP, GET /metrics, with libmicrohttpd: on a socket of its own, or with
 * --listen=systemd on the one socket systemd passed (sd_listen_fds(3): the socket unit
 * systemd/affinityd-metrics.socket). Every scrape is a fresh read of the daemon on a fresh bus
 * connection, so a daemon that restarts is simply read again; while it can't be read the
 * scrape answers affinityd_up 0. The daemon itself never listens on the network.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <systemd/sd-daemon.h>

#include "ctl-bus.h"
#include "ctl-metrics.h"
#include "ctl.h"
#include "macro.h"

#define METRICS_PATH "/metrics"
/* At most this many scrapers at once; an idle connection is closed after the timeout (s). */
#define HTTP_CONNECTION_LIMIT   16
#define HTTP_CONNECTION_TIMEOUT 10

/* Reads the daemon into *ret and formats it. Returns 0, or the exit code after saying on
 * stderr what went wrong. */
static int metrics_text(char **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {};
        int r;

        r = ctl_connect(&bus);
        if (r > 0)
                return r;
        r = metrics_snapshot_read(bus, &s, &error);
        if (r == -EBADMSG) {
                fprintf(stderr, "Failed to parse the daemon's properties and lists: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        if (r < 0)
                return ctl_call_failed("read the daemon's metrics", r, &error);
        r = metrics_format(&s, ret);
        if (r < 0) {
                fprintf(stderr, "Failed to format the daemon's metrics: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        return 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, const char *type) {
        struct MHD_Response *response;
        enum MHD_Result ret;

        response = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
        if (!response) {
                free(body);
                return MHD_NO;
        }
        if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
            (status == MHD_HTTP_METHOD_NOT_ALLOWED &&
             MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") != MHD_YES))
                ret = MHD_NO;
        else
                ret = MHD_queue_response(c, status, response);
        MHD_destroy_response(response);
        return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text) {
        char *body = strdup(text);

        return body ? reply(c, status, body, "text/plain; charset=utf-8") : MHD_NO;
}

/* libmicrohttpd's request handler; called on its one thread, so one scrape at a time. */
static enum MHD_Result handle_request(
        void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
        const char *upload_data, size_t *upload_data_size, void **req_cls) {
        _cleanup_free_ char *text = NULL;

        if (!streq(method, MHD_HTTP_METHOD_GET) && !streq(method, MHD_HTTP_METHOD_HEAD))
                return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "Only GET and HEAD.\n");
        if (!streq(url, METRICS_PATH))
                return reply_text(
                        c, MHD_HTTP_NOT_FOUND, "Not found; the metrics are at " METRICS_PATH ".\n");

        if (metrics_text(&text) != 0) {
                /* Said on stderr why; the scrape still answers, so that alerts can say so. */
                MetricsSnapshot down = {.up = false};

                if (metrics_format(&down, &text) < 0)
                        return MHD_NO;
        }
        return reply(c, MHD_HTTP_OK, TAKE_PTR(text), METRICS_CONTENT_TYPE);
}

static void log_mhd(void *cls, const char *format, va_list ap) {
        fputs("libmicrohttpd: ", stderr);
        vfprintf(stderr, format, ap);
}

/* "127.0.0.1:9187", "[::1]:9187" of the socket fd into buf; "?" when it can't be said. */
static void format_local_address(int fd, char *buf, size_t size) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        char host[INET6_ADDRSTRLEN] = "?";

        snprintf(buf, size, "?");
        if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
                return;
        if (ss.ss_family == AF_INET) {
                const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

                inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
                snprintf(buf, size, "%s:%u", host, ntohs(a->sin_port));
        } else if (ss.ss_family == AF_INET6) {
                const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

                inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
                snprintf(buf, size, "[%s]:%u", host, ntohs(a->sin6_port));
        } else if (ss.ss_family == AF_UNIX)
                snprintf(buf, size, "a unix socket");
}

/* A listening TCP socket on addr (metrics_parse_listen_address()), dual-stack when addr is
 * IPv6. Returns the fd or a negative errno. */
static int listen_on(const struct sockaddr_storage *addr, socklen_t len) {
        _cleanup_close_ int fd = -EBADF;
        int one = 1, zero = 0;

        fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
                return -errno;
        if (addr->ss_family == AF_INET6 &&
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0)
                return -errno;
        if (bind(fd, (const struct sockaddr *)addr, len) < 0 || listen(fd, SOMAXCONN) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* The socket --listen= names: the one systemd passed, or a new one. Returns the fd, or the
 * exit code negated after saying why not. */
static int listen_socket(const char *listen) {
        struct sockaddr_storage addr;
        socklen_t len;
        int n, r;

        if (streq(listen, "systemd")) {
                n = sd_listen_fds(true);
                if (n < 0) {
                        fprintf(stderr, "--listen=systemd: failed to read LISTEN_FDS: %s\n", strerror(-n));
                        return -EXIT_FAILURE_;
                }
                if (n != 1) {
                        fprintf(stderr,
                                "--listen=systemd: expected one socket from systemd (LISTEN_FDS), got %d.\n",
                                n);
                        return -EXIT_FAILURE_;
                }
                r = sd_is_socket(SD_LISTEN_FDS_START, AF_UNSPEC, SOCK_STREAM, 1);
                if (r <= 0) {
                        fprintf(stderr,
                                "--listen=systemd: the socket systemd passed is not a listening stream "
                                "socket.\n");
                        return -EXIT_FAILURE_;
                }
                return SD_LISTEN_FDS_START;
        }

        r = metrics_parse_listen_address(listen, &addr, &len);
        if (r < 0) {
                fprintf(stderr,
                        "--listen= needs ADDRESS:PORT (127.0.0.1:9187, [::1]:9187, :9187) or \"systemd\", "
                        "not \"%s\".\n",
                        listen);
                return -EXIT_USAGE;
        }
        r = listen_on(&addr, len);
        if (r < 0) {
                fprintf(stderr, "Failed to listen on %s: %s\n", listen, strerror(-r));
                return -EXIT_FAILURE_;
        }
        return r;
}

/* Serves GET /metrics on --listen= until SIGINT or SIGTERM. Returns the exit code. */
static int serve(const char *listen) {
        _cleanup_close_ int fd = -EBADF;
        struct MHD_Daemon *d;
        char where[INET6_ADDRSTRLEN + 16];
        sigset_t mask;
        int sig = 0;

        fd = listen_socket(listen);
        if (fd < 0)
                return -fd;

        /* A scraper that goes away mid-answer must not kill the server (libmicrohttpd sends with
         * MSG_NOSIGNAL; this is for anything else that writes to a socket). */
        (void)signal(SIGPIPE, SIG_IGN);
        /* Blocked before libmicrohttpd starts its thread, which inherits the mask: the signals
         * come to sigwait() below. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0) {
                fprintf(stderr, "Failed to block SIGINT and SIGTERM.\n");
                return EXIT_FAILURE_;
        }

        d = MHD_start_daemon(
                MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle_request, NULL,
                /* The logger first, so that it has every message. */
                MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
                (unsigned)HTTP_CONNECTION_TIMEOUT, MHD_OPTION_END);
        if (!d) {
                fprintf(stderr, "Failed to start the HTTP server on %s.\n", listen);
                return EXIT_FAILURE_;
        }
        format_local_address(fd, where, sizeof(where));
        fprintf(stderr, "Serving the metrics at http://%s" METRICS_PATH "\n", where);

        while (sigwait(&mask, &sig) != 0)
                ;
        /* MHD_stop_daemon() closes the listening socket it was given. */
        MHD_stop_daemon(d);
        fd = -EBADF;
        return EXIT_OK;
}

int verb_metrics(char **args) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (arg_json) {
                fprintf(stderr, "metrics writes the Prometheus text format; --json does not apply.\n");
                return EXIT_USAGE;
        }
        if (arg_listen)
                return serve(arg_listen);

        r = metrics_text(&text);
        if (r != 0)
                return r;
        fputs(text, stdout);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILURE_;
}
