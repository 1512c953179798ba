/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Watching the kubelet's container records (docs/kubernetes.md, "A container's first
 * process"). The kubelet makes a container's symlink in /var/log/containers just after the
 * runtime started it, so the container's first process often execs before its record exists:
 * matched then, it has a pod and a namespace but no container name, and a policy with
 * container: misses it. An inotify(7) watch on ROOT/var/log/containers reports each name
 * created there (IN_CREATE, IN_MOVED_TO), and the handler runs once per burst, debounced, with
 * the names: the manager then lists the records again and matches the processes of those
 * containers again. ROOT/var/log is watched for the name itself: a directory made later, or
 * removed, or a symlink pointed elsewhere, is watched again as it is now.
 *
 * Bounded: at most KUBE_WATCH_MAX_NAMES names per run; beyond that (or when the kernel's
 * inotify queue overflowed) the handler is told to look at everything instead.
 */

#include <stdbool.h>

#include <systemd/sd-event.h>

typedef struct KubeWatch KubeWatch;

/* Names collected per run of the handler, at most. */
#define KUBE_WATCH_MAX_NAMES 256U
/* The quiet time after the last new record of a burst, and the longest wait from its first, µs. */
#define KUBE_WATCH_DELAY_USEC     (100 * 1000)
#define KUBE_WATCH_MAX_DELAY_USEC (1000 * 1000)

/*
 * Called on the event loop after a burst: names (NULL-terminated, borrowed for the call) are the
 * entries created in the directory; overflow: some were not collected (more than
 * KUBE_WATCH_MAX_NAMES, an inotify queue overflow, or the directory itself appeared), so the
 * caller must look at every container.
 */
typedef void (*kube_watch_handler_t)(KubeWatch *w, char **names, bool overflow, void *userdata);

/*
 * A watch on ROOT/var/log/containers (root NULL or "/": the real one; tests give a fixture
 * root), on event (an inotify fd as an I/O source, description "kube-watch"). Returns 0 and
 * *ret, -EINVAL, -ENOMEM, or inotify_init1(2)'s -errno; a directory that can't be watched is
 * logged at debug and watched again at the next run.
 */
int kube_watch_new(
        sd_event *event, const char *root, kube_watch_handler_t handler, void *userdata, KubeWatch **ret);

/* Closes the inotify fd and frees w. NULL accepted; returns NULL. */
KubeWatch *kube_watch_free(KubeWatch *w);
