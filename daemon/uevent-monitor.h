/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Device events straight from the kernel: a NETLINK_KOBJECT_UEVENT socket bound to the kernel's
 * multicast group 1 (no udevd is assumed: docs/architecture.md, "The data path"), as an sd-event
 * I/O source shared by every consumer. Consumers subscribe by subsystem ("cpu" for CPU
 * hotplug; "net" and "queues" for devices and their queues): each gets the events of its
 * subsystem, and every consumer is told when events may have been lost, so that it rescans.
 *
 * The kernel sends one datagram per event: "ACTION@DEVPATH\0" followed by "KEY=VALUE\0"
 * strings (ACTION, DEVPATH, SUBSYSTEM, SEQNUM, and per subsystem more, e.g. DEVTYPE,
 * INTERFACE, IFINDEX). CPU hotplug arrives as ACTION=online / offline with SUBSYSTEM=cpu and
 * DEVPATH=/devices/system/cpu/cpuN. Datagrams not from the kernel (sender port id not 0, or
 * SCM_CREDENTIALS not uid 0), libudev's own format (starting with "libudev") and malformed
 * ones are dropped and counted. The receive buffer is large (SO_RCVBUFFORCE); ENOBUFS (the
 * kernel dropped events) is reported to every subscriber as lost. Like lib/, the monitor logs
 * nothing: errors go to the subscribers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "macro.h"

/* The receive buffer asked for, bytes. */
#define UEVENT_MONITOR_RCVBUF_SIZE (4 * 1024 * 1024)
/* Most KEY=VALUE strings one event may carry (the kernel's UEVENT_NUM_ENVP is 64). */
#define UEVENT_MAX_ENV 128
/* After a receive error other than ENOBUFS, reading pauses this long (µs), then resumes with a
 * lost report. */
#define UEVENT_MONITOR_RETRY_USEC (1000 * 1000)

/* One event, parsed in place: every string points into the datagram it was parsed from. */
typedef struct Uevent {
        const char *action;    /* "add", "remove", "change", "move", "online", "offline", "bind", ... */
        const char *devpath;   /* "/devices/system/cpu/cpu1", below /sys */
        const char *subsystem; /* SUBSYSTEM=, NULL if the event has none */
        uint64_t seqnum;       /* SEQNUM=, 0 if none */
        const char *env[UEVENT_MAX_ENV]; /* the "KEY=VALUE" strings, in order */
        size_t n_env;
} Uevent;

/*
 * Parses one datagram of len bytes from the kernel into *ret (strings point into buf, which
 * must outlive them). The header "ACTION@DEVPATH" must be non-empty on both sides, every string
 * NUL-terminated within len (the kernel terminates the last one too: one that isn't was cut
 * short), every later string "KEY=VALUE" with a non-empty KEY, at most UEVENT_MAX_ENV of them,
 * ACTION= and DEVPATH= present (the kernel always sends them) and equal to the header's, and
 * SEQNUM=, if present, decimal. Never reads outside buf[0..len).
 * Returns 0; -EPROTO for a libudev-format message (from udevd, not the kernel); -EBADMSG for
 * anything else malformed (*ret untouched on error).
 */
int uevent_parse(const void *buf, size_t len, Uevent *ret);

/* The value of KEY in u's environment ("SUBSYSTEM" → "cpu"), or NULL. */
const char *uevent_get(const Uevent *u, const char *key);

/*
 * For a CPU device event (SUBSYSTEM=cpu, DEVPATH=/devices/system/cpu/cpuN): the OS CPU number
 * N. Returns it (>= 0) or -EINVAL (not such an event).
 */
int uevent_cpu_number(const Uevent *u);

typedef struct UeventMonitor UeventMonitor;
typedef struct UeventSubscription UeventSubscription;

/* Called for each event of the subscribed subsystem, in the order received. The return value is
 * ignored (the handler reports its own failures). */
typedef int (*uevent_handler_t)(UeventMonitor *m, const Uevent *ev, void *userdata);
/*
 * Events may have been lost: error is -ENOBUFS (the receive queue overran) or the negative errno
 * of a receive that failed (called once reading resumed, UEVENT_MONITOR_RETRY_USEC later), or
 * -EBADMSG (a datagram cut short: what it held is unknown). The consumer should rescan.
 */
typedef void (*uevent_lost_handler_t)(UeventMonitor *m, int error, void *userdata);

/*
 * Opens the socket (NETLINK_KOBJECT_UEVENT, group 1, SO_PASSCRED, a receive buffer of
 * UEVENT_MONITOR_RCVBUF_SIZE) and attaches an I/O source to event (description
 * "kobject-uevent"). Events are delivered from the event loop only. Returns 0; -EPERM /
 * -EACCES; -EPROTONOSUPPORT; -errno. Nothing is left open on failure.
 */
int uevent_monitor_new(sd_event *event, UeventMonitor **ret);

/* Closes the socket and frees the monitor and every subscription still registered (their
 * handles become invalid). Accepts NULL, returns NULL. */
UeventMonitor *uevent_monitor_free(UeventMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(UeventMonitor *, uevent_monitor_free);

/*
 * Subscribes: on_event (may be NULL) gets every event whose SUBSYSTEM= is subsystem (NULL:
 * every event); on_lost (may be NULL) is told of lost events, whatever the subsystem. The
 * handle (ret may be NULL: the subscription then lives as long as the monitor) is released
 * with uevent_subscription_free(). Handlers must not free the monitor; they may free their own
 * subscription. Returns 0 or -ENOMEM.
 */
int uevent_monitor_subscribe(
        UeventMonitor *m, const char *subsystem, uevent_handler_t on_event, uevent_lost_handler_t on_lost,
        void *userdata, UeventSubscription **ret);

/* Unsubscribes and frees. Accepts NULL, returns NULL. */
UeventSubscription *uevent_subscription_free(UeventSubscription *s);

/* The netlink socket, e.g. for tests that shrink SO_RCVBUF to provoke ENOBUFS. The monitor
 * keeps ownership. */
int uevent_monitor_get_fd(const UeventMonitor *m);

/*
 * The receive buffer as granted: *ret_size is getsockopt(SO_RCVBUF), bytes (twice what was
 * granted, for the kernel's bookkeeping); *ret_force_error 0 if SO_RCVBUFFORCE worked, else its
 * negative errno (the SO_RCVBUF fallback is capped by net.core.rmem_max). Either may be NULL.
 */
void uevent_monitor_get_receive_buffer(const UeventMonitor *m, size_t *ret_size, int *ret_force_error);

/* Datagrams dropped so far: not from the kernel, in libudev's format, or malformed. */
uint64_t uevent_monitor_n_dropped(const UeventMonitor *m);
