/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Watching the kubelet's container records. See kube-watch.h. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "debounce.h"
#include "event-util.h"
#include "kube-watch.h"
#include "log.h"
#include "macro.h"
#include "util.h"

struct KubeWatch {
        sd_event *event;
        int fd;
        sd_event_source *io;
        Debounce debounce;
        kube_watch_handler_t handler;
        void *userdata;
        char *dir;     /* ROOT/var/log/containers */
        char *parent;  /* ROOT/var/log */
        int wd;        /* on dir, or -1 */
        int parent_wd; /* on parent, for the name "containers", or -1 */
        char **names;  /* collected since the last run */
        size_t n_names;
        bool overflow;
};

/* Stops watching what dir named (it is gone, or the name is another directory now). */
static void unwatch_dir(KubeWatch *w) {
        if (w->wd >= 0)
                (void)inotify_rm_watch(w->fd, w->wd);
        w->wd = -1;
}

/*
 * Watches dir if it exists, and always its parent for the name "containers": made, removed or
 * replaced there (a symlink pointed elsewhere: inotify follows it, so the watch on dir would
 * stay on the directory it named before, which sends no event of its own).
 */
static void watch_dir(KubeWatch *w) {
        if (w->parent_wd < 0) {
                w->parent_wd = inotify_add_watch(
                        w->fd, w->parent, IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR);
                if (w->parent_wd < 0)
                        log_debug_errno(errno, "Failed to watch %s: %m", w->parent);
        }
        if (w->wd >= 0)
                return;
        /* IN_MASK_ADD: a symlink to the parent itself is the parent's watch (one per inode), whose
         * mask must stay; such a directory is not watched. */
        w->wd = inotify_add_watch(
                w->fd, w->dir,
                IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_MASK_ADD);
        if (w->wd < 0)
                log_debug_errno(errno, "Failed to watch %s, watching %s for it: %m", w->dir, w->parent);
        else if (w->wd == w->parent_wd) {
                log_debug("%s is %s itself, not watching it", w->dir, w->parent);
                w->wd = -1;
        }
}

static int on_debounced(sd_event_source *s, uint64_t usec, void *userdata) {
        KubeWatch *w = userdata;
        _cleanup_strv_free_ char **names = TAKE_PTR(w->names);
        bool overflow = w->overflow;

        w->n_names = 0;
        w->overflow = false;
        watch_dir(w); /* it may have come or gone meanwhile */
        w->handler(w, names ?: (char *[]){NULL}, overflow, w->userdata);
        return 0;
}

/* One event: a name collected, or the directory's own change noted. */
static void take_event(const struct inotify_event *e, void *userdata) {
        KubeWatch *w = userdata;

        if (e->mask & IN_Q_OVERFLOW) {
                w->overflow = true;
                return;
        }
        if (e->wd == w->parent_wd && w->parent_wd >= 0) {
                if (e->mask & IN_IGNORED) { /* the parent itself is gone: watched again later */
                        w->parent_wd = -1;
                        w->overflow = true;
                } else if (e->len > 0 && streq(e->name, "containers")) {
                        /* made, removed or replaced: whatever it is now is new */
                        unwatch_dir(w);
                        w->overflow = true;
                }
                return;
        }
        if (e->wd != w->wd)
                return;
        if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
                unwatch_dir(w);
                w->overflow = true;
                return;
        }
        if (e->len == 0 || !(e->mask & (IN_CREATE | IN_MOVED_TO)))
                return;
        if (w->n_names >= KUBE_WATCH_MAX_NAMES || strv_extendf(&w->names, "%s", e->name) < 0) {
                w->overflow = true;
                return;
        }
        w->n_names++;
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        KubeWatch *w = userdata;
        int r;

        r = inotify_drain(fd, take_event, w);
        if (r < 0) {
                log_debug_errno(r, "Failed to read the container records' inotify events: %m");
                w->overflow = true; /* something may have been lost */
        }
        if (w->n_names == 0 && !w->overflow)
                return 0;
        r = debounce_arm(
                &w->debounce, w->event, KUBE_WATCH_DELAY_USEC, KUBE_WATCH_MAX_DELAY_USEC,
                SD_EVENT_PRIORITY_NORMAL, "kube-watch-debounce", on_debounced, w);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule matching the new containers again: %m");
        return 0;
}

int kube_watch_new(
        sd_event *event, const char *root, kube_watch_handler_t handler, void *userdata, KubeWatch **ret) {
        const char *r0 = root && !streq(root, "/") ? root : "";
        KubeWatch *w;
        int r;

        if (!event || !handler || !ret)
                return -EINVAL;
        w = calloc(1, sizeof(KubeWatch));
        if (!w)
                return -ENOMEM;
        w->event = sd_event_ref(event);
        w->handler = handler;
        w->userdata = userdata;
        w->fd = -EBADF;
        w->wd = w->parent_wd = -1;
        w->dir = strprintf("%s/var/log/containers", r0);
        w->parent = strprintf("%s/var/log", r0);
        if (!w->dir || !w->parent) {
                kube_watch_free(w);
                return -ENOMEM;
        }
        r = event_add_inotify(event, SD_EVENT_PRIORITY_NORMAL, on_inotify, w, "kube-watch", &w->fd, &w->io);
        if (r < 0) {
                kube_watch_free(w);
                return r;
        }
        watch_dir(w);
        *ret = w;
        return 0;
}

KubeWatch *kube_watch_free(KubeWatch *w) {
        if (!w)
                return NULL;
        debounce_done(&w->debounce);
        w->io = sd_event_source_disable_unref(w->io);
        if (w->fd >= 0)
                close(w->fd);
        strv_free(w->names);
        free(w->dir);
        free(w->parent);
        sd_event_unref(w->event);
        free(w);
        return NULL;
}
