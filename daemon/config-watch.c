/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Watching the configuration's directories. See config-watch.h. */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-watch.h"
#include "debounce.h"
#include "event-util.h"
#include "log.h"
#include "macro.h"
#include "util.h"

#define SETTINGS_FILE "affinityd.yaml"
#define POLICY_SUBDIR "policy.d"

/* What is asked of every watched directory. */
#define WATCH_MASK \
        (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | \
         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

typedef struct WatchedPath {
        char *dir;            /* the directory of the configuration (CONFIG_WATCH_FILE: the file's) */
        char *file;           /* CONFIG_WATCH_FILE: the file's name in dir; else NULL */
        ConfigWatchKind kind; /* what it is */
        char *watched;        /* dir itself, or its nearest existing ancestor */
        char *child;          /* NULL: watched is dir; else the name under watched that leads to dir */
        int wd;               /* -1: none */
} WatchedPath;

struct ConfigWatch {
        sd_event *event;
        int fd;
        sd_event_source *io;
        Debounce debounce;
        uint64_t delay_usec;
        config_watch_handler_t handler;
        void *userdata;
        bool relevant; /* scratch of on_inotify() */
        WatchedPath *paths;
        size_t n;
};

/* A kubelet ConfigMap volume's names: "..data" and "..<timestamp>" (and their "_tmp"). */
static bool kubelet_name(const char *name) {
        return startswith(name, "..") && name[2] != '\0';
}

bool config_watch_relevant(ConfigWatchKind kind, uint32_t mask, const char *name) {
        size_t l;

        if (mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT))
                return true;
        if (!name || !*name || kind == CONFIG_WATCH_FILE)
                return false;
        if (kubelet_name(name))
                return true;
        if (kind == CONFIG_WATCH_SETTINGS_DIR)
                return streq(name, SETTINGS_FILE) || streq(name, POLICY_SUBDIR);
        l = strlen(name);
        return name[0] != '.' && l > strlen(".yaml") && streq(name + l - strlen(".yaml"), ".yaml");
}

/* (Re)sets p's watch: on p->dir if it is a directory, else on its nearest existing ancestor. */
static void watch_path(ConfigWatch *w, WatchedPath *p) {
        _cleanup_free_ char *at = strdup(p->dir);
        char *child = NULL;

        if (!at)
                return;
        for (;;) {
                struct stat st;
                char *slash;

                if (stat(at, &st) >= 0 && S_ISDIR(st.st_mode)) {
                        int wd = inotify_add_watch(w->fd, at, WATCH_MASK);

                        if (wd < 0) {
                                log_debug_errno(
                                        errno, "Failed to watch %s for configuration changes: %m", at);
                                return;
                        }
                        free(p->watched);
                        free(p->child);
                        p->watched = TAKE_PTR(at);
                        p->child = child;
                        p->wd = wd;
                        return;
                }
                slash = strrchr(at, '/');
                if (!slash)
                        return;
                free(child);
                child = strdup(slash + 1);
                if (!child)
                        return;
                if (slash == at)
                        slash[1] = '\0'; /* "/" */
                else
                        *slash = '\0';
                if (streq(at, "/") && !*child)
                        return;
        }
}

/* Every path watched again: directories may have come or gone. Old watches that nothing uses
 * any more are removed. */
static void watch_all(ConfigWatch *w) {
        int old[8];
        size_t n_old = 0;

        for (size_t i = 0; i < w->n; i++) {
                if (w->paths[i].wd >= 0 && n_old < ELEMENTSOF(old))
                        old[n_old++] = w->paths[i].wd;
                w->paths[i].wd = -1;
        }
        for (size_t i = 0; i < w->n; i++)
                watch_path(w, &w->paths[i]);
        for (size_t k = 0; k < n_old; k++) {
                bool used = false;

                for (size_t i = 0; i < w->n; i++)
                        used |= w->paths[i].wd == old[k];
                if (!used)
                        (void)inotify_rm_watch(w->fd, old[k]);
        }
}

static int on_debounced(sd_event_source *s, uint64_t usec, void *userdata) {
        ConfigWatch *w = userdata;

        watch_all(w);
        w->handler(w, w->userdata);
        return 0;
}

/* Whether an event on watch wd matters: for a directory watched itself by its kind, for an
 * ancestor when it is about the name that leads to the directory. */
static bool event_relevant(const ConfigWatch *w, const struct inotify_event *e) {
        if (e->mask & IN_Q_OVERFLOW)
                return true;
        for (size_t i = 0; i < w->n; i++) {
                const WatchedPath *p = &w->paths[i];

                if (p->wd != e->wd)
                        continue;
                if (!p->child) {
                        if (config_watch_relevant(p->kind, e->mask, e->len > 0 ? e->name : NULL))
                                return true;
                        if (p->file && e->len > 0 && streq(e->name, p->file))
                                return true;
                } else if (
                        (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) ||
                        (e->len > 0 && streq(e->name, p->child)))
                        return true;
        }
        return false;
}

/* inotify_drain()'s callback: notes in the watch whether e matters. */
static void take_event(const struct inotify_event *e, void *userdata) {
        ConfigWatch *w = userdata;

        w->relevant = w->relevant || event_relevant(w, e);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ConfigWatch *w = userdata;
        bool relevant;
        int r;

        w->relevant = false;
        r = inotify_drain(fd, take_event, w);
        relevant = w->relevant || r < 0; /* a read error: something may have been lost */
        if (!relevant)
                return 0;
        r = debounce_arm(
                &w->debounce, w->event, w->delay_usec, 10 * w->delay_usec, SD_EVENT_PRIORITY_NORMAL,
                "config-watch-debounce", on_debounced, w);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule a reload after a configuration change: %m");
        return 0;
}

int config_watch_new(
        sd_event *event, const char *const *dirs, const ConfigWatchKind *kinds, size_t n,
        uint64_t delay_usec, config_watch_handler_t handler, void *userdata, ConfigWatch **ret) {
        ConfigWatch *w;
        int r;

        if (!event || !dirs || !kinds || n == 0 || n > 8 || !handler || !ret)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!dirs[i] || dirs[i][0] != '/')
                        return -EINVAL;
        w = calloc(1, sizeof(ConfigWatch));
        if (!w)
                return -ENOMEM;
        w->event = sd_event_ref(event);
        w->delay_usec = delay_usec;
        w->handler = handler;
        w->userdata = userdata;
        w->fd = -EBADF;
        w->paths = calloc(n, sizeof(WatchedPath));
        if (!w->paths) {
                config_watch_free(w);
                return -ENOMEM;
        }
        w->n = n;
        for (size_t i = 0; i < n; i++) {
                WatchedPath *p = &w->paths[i];

                *p = (WatchedPath){.dir = strdup(dirs[i]), .kind = kinds[i], .wd = -1};
                if (p->dir && kinds[i] == CONFIG_WATCH_FILE) {
                        /* Its directory is watched, for its name. */
                        char *slash = strrchr(p->dir, '/');

                        p->file = strdup(slash + 1);
                        if (slash == p->dir)
                                slash[1] = '\0';
                        else
                                *slash = '\0';
                }
                if (!p->dir || (kinds[i] == CONFIG_WATCH_FILE && (!p->file || !*p->file))) {
                        r = p->dir && p->file ? -EINVAL : -ENOMEM;
                        config_watch_free(w);
                        return r;
                }
        }
        r = event_add_inotify(
                event, SD_EVENT_PRIORITY_NORMAL, on_inotify, w, "config-watch", &w->fd, &w->io);
        if (r < 0) {
                config_watch_free(w);
                return r;
        }
        watch_all(w);
        *ret = w;
        return 0;
}

ConfigWatch *config_watch_free(ConfigWatch *w) {
        if (!w)
                return NULL;
        debounce_done(&w->debounce);
        w->io = sd_event_source_disable_unref(w->io);
        if (w->fd >= 0)
                close(w->fd);
        for (size_t i = 0; w->paths && i < w->n; i++) {
                free(w->paths[i].dir);
                free(w->paths[i].file);
                free(w->paths[i].watched);
                free(w->paths[i].child);
        }
        free(w->paths);
        sd_event_unref(w->event);
        free(w);
        return NULL;
}
