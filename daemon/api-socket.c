/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The API on a unix socket, peer to peer. See api-socket.h. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "api-socket.h"
#include "bus-names.h"
#include "log.h"
#include "macro.h"
#include "manager-bus.h"
#include "policy-bus.h"

typedef struct ApiConnection {
        sd_bus *bus;
        sd_bus_slot *disconnected;
} ApiConnection;

struct ApiSocket {
        Manager *manager;
        char *path;
        int fd;
        sd_event_source *io;
        ApiConnection connections[API_SOCKET_CONNECTIONS_MAX];
        sd_id128_t server_id;
};

static void connection_close(ApiConnection *c) {
        c->disconnected = sd_bus_slot_unref(c->disconnected);
        c->bus = sd_bus_flush_close_unref(c->bus);
}

static int on_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        ApiSocket *s = userdata;
        sd_bus *bus = sd_bus_message_get_bus(message);

        for (size_t i = 0; i < API_SOCKET_CONNECTIONS_MAX; i++)
                if (s->connections[i].bus == bus) {
                        connection_close(&s->connections[i]);
                        break;
                }
        return 0;
}

/* Serves fd (accepted; taken: closed on failure too) as a peer-to-peer D-Bus connection in
 * slot c. Returns 0 or -errno. */
static int connection_start(ApiSocket *s, ApiConnection *c, int fd) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0) {
                close(fd);
                return r;
        }
        (void)sd_bus_set_description(bus, "affinityd-api-socket");
        r = sd_bus_set_fd(bus, fd, fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        r = sd_bus_set_server(bus, true, s->server_id);
        if (r >= 0)
                r = sd_bus_add_object_vtable(
                        bus, NULL, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, manager_vtable, s->manager);
        if (r >= 0)
                r = policy_bus_register(bus, s->manager);
        if (r >= 0)
                r = sd_bus_match_signal(
                        bus, &c->disconnected, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                        "org.freedesktop.DBus.Local", "Disconnected", on_disconnected, s);
        if (r >= 0)
                r = sd_bus_attach_event(bus, s->manager->event, AFFINITYD_BUS_EVENT_PRIORITY);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                c->disconnected = sd_bus_slot_unref(c->disconnected);
                return r;
        }
        c->bus = TAKE_PTR(bus);
        return 0;
}

static int on_accept(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        ApiSocket *s = userdata;
        ApiConnection *c = NULL;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning_errno(errno, "Failed to accept a connection on %s: %m", s->path);
                return 0;
        }
        for (size_t i = 0; i < API_SOCKET_CONNECTIONS_MAX && !c; i++)
                if (!s->connections[i].bus)
                        c = &s->connections[i];
        if (!c) {
                log_warning(
                        "%s: %d connections already, closing a new one", s->path,
                        API_SOCKET_CONNECTIONS_MAX);
                close(cfd);
                return 0;
        }
        r = connection_start(s, c, cfd);
        if (r < 0)
                log_warning_errno(r, "Failed to serve a connection on %s: %m", s->path);
        return 0;
}

/* Whether something listens on the socket at path (a live daemon: leave it alone). */
static bool socket_alive(const struct sockaddr_un *sa) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool alive;

        if (fd < 0)
                return true; /* can't tell: don't touch it */
        alive = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) >= 0 || errno != ECONNREFUSED;
        close(fd);
        return alive;
}

int api_socket_new(Manager *m, const char *path, ApiSocket **ret) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        _cleanup_free_ ApiSocket *s = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!path || path[0] != '/' || strlen(path) >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path, path, strlen(path));
        if (lstat(path, &st) >= 0) {
                if (!S_ISSOCK(st.st_mode) || socket_alive(&sa))
                        return -EEXIST;
                if (unlink(path) < 0)
                        return -errno;
        }
        s = calloc(1, sizeof(ApiSocket));
        if (!s)
                return -ENOMEM;
        s->manager = m;
        r = sd_id128_randomize(&s->server_id);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        {
                mode_t old = umask(0177); /* 0600 from the start: no window where others connect */

                r = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
                umask(old);
        }
        if (r < 0)
                return -errno;
        if (listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                (void)unlink(path);
                return r;
        }
        s->path = strdup(path);
        if (!s->path) {
                (void)unlink(path);
                return -ENOMEM;
        }
        r = sd_event_add_io(m->event, &s->io, fd, EPOLLIN, on_accept, s);
        if (r < 0) {
                (void)unlink(path);
                free(s->path);
                return r;
        }
        (void)sd_event_source_set_description(s->io, "api-socket");
        s->fd = TAKE_FD(fd);
        *ret = TAKE_PTR(s);
        return 0;
}

ApiSocket *api_socket_free(ApiSocket *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < API_SOCKET_CONNECTIONS_MAX; i++)
                connection_close(&s->connections[i]);
        s->io = sd_event_source_disable_unref(s->io);
        if (s->fd >= 0)
                close(s->fd);
        if (s->path)
                (void)unlink(s->path);
        free(s->path);
        free(s);
        return NULL;
}

bool api_socket_owns(const ApiSocket *s, const sd_bus *bus) {
        for (size_t i = 0; s && bus && i < API_SOCKET_CONNECTIONS_MAX; i++)
                if (s->connections[i].bus == bus)
                        return true;
        return false;
}
