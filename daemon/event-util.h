/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * sd-event helpers the daemon's periodic re-checks share (daemon/drift.h, the device drift check
 * of daemon/device-placement.h), and the inotify(7) reader its watches share (cgroups, the
 * configuration, the kubelet's records).
 */

#include <stdint.h>
#include <sys/inotify.h>

#include <systemd/sd-event.h>

/*
 * Keeps *source, a one-shot CLOCK_MONOTONIC timer that its handler re-arms through this call,
 * running every interval_usec (accuracy a quarter of it, at least 1 ms): made on first use (with
 * description), armed interval_usec from now unless it is armed already with that interval
 * (*armed_usec, updated). interval_usec 0 disables it. what names it in debug messages
 * ("drift timer": "Failed to arm the drift timer: ..."). Returns 0 or -errno of sd-event (logged
 * at debug).
 */
int event_periodic_timer_update(
        sd_event *e, sd_event_source **source, uint64_t *armed_usec, uint64_t interval_usec,
        sd_event_time_handler_t handler, void *userdata, const char *description, const char *what);

/*
 * Reads every inotify event queued on fd (non-blocking) and calls fn(e, userdata) for each, in
 * order; e is valid for the call only. Returns 0 when the queue is empty (EAGAIN), or read(2)'s
 * -errno (the events read before it were handed to fn).
 */
int inotify_drain(int fd, void (*fn)(const struct inotify_event *e, void *userdata), void *userdata);

/*
 * A new inotify(7) instance (non-blocking, close-on-exec) as an I/O source of e at priority,
 * with handler(userdata) and description: *ret_fd and *ret_source. Returns 0, or
 * inotify_init1(2)'s or sd-event's -errno (nothing is left open).
 */
int event_add_inotify(
        sd_event *e, int64_t priority, sd_event_io_handler_t handler, void *userdata,
        const char *description, int *ret_fd, sd_event_source **ret_source);
