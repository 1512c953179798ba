/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cpuset-watch.h"
#include "debounce.h"
#include "event-util.h"
#include "log.h"
#include "macro.h"

typedef struct WatchedDir {
        int wd; /* first: the key of by_wd */
        char *path;
} WatchedDir;

struct CpusetWatch {
        sd_event *event;
        int64_t priority;
        char *root; /* NULL: "/" */
        int fd;
        sd_event_source *io;
        Debounce debounce; /* armed while a burst is being collected */
        cpuset_watch_handler_t handler;
        void *userdata;
        void *by_path; /* tsearch(3) of WatchedDir, by path */
        void *by_wd;   /* the same entries, by wd */
        size_t n;
        bool limit_logged;
        char *last_dir;        /* the directory of the last write of the burst */
        char *last_membership; /* the /proc/PID/cgroup text whose directories were added last */
        bool relevant;         /* scratch of on_inotify() */
};

static int path_compare(const void *a, const void *b) {
        return strcmp(((const WatchedDir *)a)->path, ((const WatchedDir *)b)->path);
}

static int wd_compare(const void *a, const void *b) {
        int x = ((const WatchedDir *)a)->wd, y = ((const WatchedDir *)b)->wd;
        return x < y ? -1 : x > y;
}

static void watched_dir_free(void *p) {
        WatchedDir *d = p;

        if (!d)
                return;
        free(d->path);
        free(d);
}

static void nop_free(void *p) {
}

/* Only writes that can change tasks' CPUs (cgroups(7), the cpuset section of cgroup-v2.rst). */
static bool name_is_cpuset_write(const char *name) {
        static const char *const names[] = {
                "cpuset.cpus",
                "cpuset.cpus.partition",
                "cpuset.cpus.exclusive",
                "cgroup.subtree_control",
                "cgroup.procs",
                "cgroup.threads",
                "tasks", /* v1 */
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (streq(name, names[i]))
                        return true;
        return false;
}

static int on_debounce(sd_event_source *s, uint64_t usec, void *userdata) {
        CpusetWatch *w = userdata;

        w->handler(w, w->last_dir ?: "", w->userdata);
        return 0;
}

static WatchedDir *find_wd(CpusetWatch *w, int wd) {
        WatchedDir key = {.wd = wd};
        void **node = tfind(&key, &w->by_wd, wd_compare);

        return node ? *node : NULL;
}

static void forget(CpusetWatch *w, WatchedDir *d) {
        tdelete(d, &w->by_wd, wd_compare);
        tdelete(d, &w->by_path, path_compare);
        watched_dir_free(d);
        w->n--;
        /* A cgroup of that membership may be made again under the same path: look again. */
        w->last_membership = mfree(w->last_membership);
}

/* A watched directory's child directory name was removed: so is that cgroup (its watch stays
 * with the dead inode otherwise: cgroupfs sends no IN_IGNORED of its own). */
static void forget_child(CpusetWatch *w, const WatchedDir *parent, const char *name) {
        _cleanup_free_ char *path = NULL;
        WatchedDir key = {};
        void **node;

        if (asprintf(&path, "%s/%s", parent->path, name) < 0)
                return;
        key.path = path;
        node = tfind(&key, &w->by_path, path_compare);
        if (!node)
                return;
        (void)inotify_rm_watch(w->fd, (*(WatchedDir **)node)->wd);
        forget(w, *node);
}

/* Runs the handler CPUSET_WATCH_DEBOUNCE_USEC after the last write of a burst, but no later than
 * CPUSET_WATCH_MAX_DELAY_USEC after its first: a cgroup written to without pause can't hold the
 * check back. */
static void arm(CpusetWatch *w) {
        int r = debounce_arm(
                &w->debounce, w->event, CPUSET_WATCH_DEBOUNCE_USEC, CPUSET_WATCH_MAX_DELAY_USEC, w->priority,
                "cpuset-debounce", on_debounce, w);
        if (r < 0)
                log_warning_errno(
                        r, "Failed to arm the cpuset check after a cgroup change, skipping it: %m");
}

/* inotify_drain()'s callback: one event, noted in w->relevant when a cpuset may have changed. */
static void take_event(const struct inotify_event *ev, void *userdata) {
        CpusetWatch *w = userdata;
        WatchedDir *d;

        if (ev->mask & IN_Q_OVERFLOW) {
                w->relevant = true; /* something may have been lost: check */
                return;
        }
        d = find_wd(w, ev->wd);
        if (!d)
                return;
        if (ev->mask & IN_IGNORED) {
                forget(w, d);
                return;
        }
        if (ev->len == 0)
                return;
        if ((ev->mask & IN_DELETE) && (ev->mask & IN_ISDIR)) {
                forget_child(w, d, ev->name);
                return;
        }
        if ((ev->mask & IN_MODIFY) && name_is_cpuset_write(ev->name)) {
                char *dir = strdup(d->path);

                w->relevant = true;
                if (dir) {
                        free(w->last_dir);
                        w->last_dir = dir;
                }
        }
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        CpusetWatch *w = userdata;
        int r;

        w->relevant = false;
        r = inotify_drain(w->fd, take_event, w);
        if (r < 0) {
                log_warning_errno(r, "Failed to read cgroup inotify events, checking all: %m");
                w->relevant = true;
        }
        if (w->relevant)
                arm(w);
        return 0;
}

int cpuset_watch_new(
        sd_event *event, int64_t priority, const char *root, cpuset_watch_handler_t handler, void *userdata,
        CpusetWatch **ret) {
        CpusetWatch *w;
        int r;

        if (!event || !handler || !ret)
                return -EINVAL;
        w = calloc(1, sizeof(CpusetWatch));
        if (!w)
                return -ENOMEM;
        if (root && !(w->root = strdup(root))) {
                free(w);
                return -ENOMEM;
        }
        w->event = sd_event_ref(event);
        w->priority = priority;
        w->handler = handler;
        w->userdata = userdata;
        r = event_add_inotify(event, priority, on_inotify, w, "cpuset-watch", &w->fd, &w->io);
        if (r < 0) {
                cpuset_watch_free(w);
                return r;
        }
        *ret = w;
        return 0;
}

CpusetWatch *cpuset_watch_free(CpusetWatch *w) {
        if (!w)
                return NULL;
        debounce_done(&w->debounce);
        w->io = sd_event_source_disable_unref(w->io);
        tdestroy(w->by_wd, nop_free);
        tdestroy(w->by_path, watched_dir_free);
        if (w->fd >= 0)
                close(w->fd);
        free(w->last_dir);
        free(w->last_membership);
        free(w->root);
        sd_event_unref(w->event);
        return mfree(w);
}

/* Watches one directory. Returns 1 added, 0 watched already, -ENOSPC (the limit, or the kernel
 * refused: not watched), -ENOMEM. */
static int watch_dir(CpusetWatch *w, const char *path) {
        WatchedDir key = {.path = (char *)path}, *d;
        int wd;

        if (tfind(&key, &w->by_path, path_compare))
                return 0;
        if (w->n >= CPUSET_WATCH_MAX) {
                if (!w->limit_logged)
                        log_warning(
                                "Watching %u cgroups already: %s and other new ones are not watched for "
                                "cpuset changes (a rescan, a reload or drift-interval: still finds what "
                                "they do)",
                                (unsigned)CPUSET_WATCH_MAX, path);
                w->limit_logged = true;
                return -ENOSPC;
        }
        wd = inotify_add_watch(w->fd, path, IN_MODIFY | IN_DELETE | IN_ONLYDIR);
        if (wd < 0) {
                log_debug_errno(-errno, "Failed to watch %s for cpuset changes, skipping: %m", path);
                return -ENOSPC;
        }
        /* Two paths can be one inode (a v1 hierarchy reached through a symlink): one entry by wd. */
        if (find_wd(w, wd))
                return 0;
        d = calloc(1, sizeof(WatchedDir));
        if (!d || !(d->path = strdup(path))) {
                free(d);
                (void)inotify_rm_watch(w->fd, wd);
                return -ENOMEM;
        }
        d->wd = wd;
        if (!tsearch(d, &w->by_path, path_compare)) {
                watched_dir_free(d);
                return -ENOMEM;
        }
        if (!tsearch(d, &w->by_wd, wd_compare)) {
                tdelete(d, &w->by_path, path_compare);
                watched_dir_free(d);
                return -ENOMEM;
        }
        w->n++;
        if (w->n < CPUSET_WATCH_MAX)
                w->limit_logged = false; /* below the limit again: say it again when it is hit */
        return 1;
}

int cpuset_watch_add_process(CpusetWatch *w, pid_t pid) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *text = NULL;
        int added = 0, r;

        if (!w)
                return 0;
        r = cgroup_read_membership(w->root, pid, &text);
        if (r == -ESRCH || r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        /* Processes come in runs from one cgroup: the same membership costs this one read. */
        if (w->last_membership && streq(w->last_membership, text))
                return 0;
        r = cgroup_cpuset_dirs(w->root, text, &dirs);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (r != -ENODATA)
                        log_debug_errno(
                                r, "Failed to find the cgroup of PID %d, not watching it: %m", (int)pid);
                return 0;
        }
        /* The process's own cgroup first: once a directory is found watched, so are its
         * ancestors (they were added with it). */
        for (char **d = dirs; *d; d++) {
                r = watch_dir(w, *d);
                if (r == -ENOMEM)
                        return r;
                if (r == 0)
                        break;
                added |= r > 0;
        }
        if (r >= 0) {
                free(w->last_membership);
                w->last_membership = TAKE_PTR(text);
        }
        return added;
}

size_t cpuset_watch_count(const CpusetWatch *w) {
        return w ? w->n : 0;
}
