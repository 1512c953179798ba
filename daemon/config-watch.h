/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Watching the configuration's directories (affinityd --watch-config): a change to what a
 * reload would read — a *.yaml file of a policy.d directory written, created, renamed or
 * removed, affinityd.yaml of the configuration directory, a policy.d directory created or
 * removed, or a kubelet ConfigMap volume swapping its "..data" link — runs the handler once,
 * debounced, from the event loop. The caller reloads there, as for SIGHUP: the same validation,
 * and the running configuration kept when the new one is bad.
 *
 * inotify(7) on each directory, or, while a directory does not exist, on its nearest existing
 * ancestor (for the name that leads to it), so that creating it is seen too. The watches are
 * set again after each run of the handler (a directory may have come or gone meanwhile).
 * Editors' temporary files (".x.yaml.swp", "x.yaml~") are not what a reload reads and are
 * ignored. A symlinked file whose target is edited in place elsewhere is not seen (the
 * kubelet never does that: it swaps "..data").
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

typedef enum ConfigWatchKind {
        CONFIG_WATCH_SETTINGS_DIR, /* a configuration directory: affinityd.yaml and policy.d/ */
        CONFIG_WATCH_POLICY_DIR,   /* a policy.d directory: its *.yaml files */
        /* one file (the path given is the file's): written, created, renamed over or removed in
         * its directory, which is what is watched — a file replaced by rename(2), as the
         * kubelet writes its checkpoints, is a new inode each time (the kubelet's CPU manager
         * state, daemon/manager-kubelet.c) */
        CONFIG_WATCH_FILE,
} ConfigWatchKind;

typedef struct ConfigWatch ConfigWatch;

/* Called on the event loop after a burst of changes. */
typedef void (*config_watch_handler_t)(ConfigWatch *w, void *userdata);

/*
 * Whether an inotify event (mask, and name: NULL or "" for the watched directory itself) on a
 * directory of kind matters to a reload. Names: in a configuration directory "affinityd.yaml"
 * and "policy.d"; in a policy.d directory names ending in ".yaml" that are not hidden; in both,
 * the kubelet's ConfigMap links and directories ("..data", "..2026_12_01_..."). The directory
 * itself removed, moved or unmounted (IN_DELETE_SELF, IN_MOVE_SELF, IN_IGNORED, IN_UNMOUNT) and
 * a queue overflow (IN_Q_OVERFLOW) always matter. For CONFIG_WATCH_FILE only those do: which
 * name is the file's is the watch's to say. Pure.
 */
bool config_watch_relevant(ConfigWatchKind kind, uint32_t mask, const char *name);

/*
 * Watches the n directories dirs (kinds[i] says what dirs[i] is) on event (an inotify fd as an
 * I/O source, description "config-watch"); handler runs delay_usec after the last change of a
 * burst, and no later than 10 × delay_usec after its first. Directories that do not exist are
 * watched through their nearest existing ancestor. Returns 0 and *ret, -EINVAL (n is 0, a
 * path is not absolute, or a CONFIG_WATCH_FILE path ends in "/"), -ENOMEM, or inotify_init1(2)'s -errno; a
 * directory that can't be watched (its -errno) is skipped, and logged at debug.
 */
int config_watch_new(
        sd_event *event, const char *const *dirs, const ConfigWatchKind *kinds, size_t n,
        uint64_t delay_usec, config_watch_handler_t handler, void *userdata, ConfigWatch **ret);

/* Closes the inotify fd and frees w. NULL accepted; returns NULL. */
ConfigWatch *config_watch_free(ConfigWatch *w);
