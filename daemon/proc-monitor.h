/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Process events from the kernel's netlink proc connector (NETLINK_CONNECTOR, CN_IDX_PROC,
 * linux/cn_proc.h), as an sd-event I/O source. Subscribes with PROC_CN_MCAST_LISTEN and
 * waits for the kernel's acknowledgement (a PROC_EVENT_NONE reply whose err field is 0): from a
 * non-initial PID namespace the kernel ignores the subscription and no acknowledgement comes,
 * which is how unavailability is detected. Where the kernel filters by event type (Linux 6.6's
 * struct proc_input), it is then told which types to send, so that the others cost neither a
 * datagram nor a wakeup; elsewhere they are dropped on receipt. Receive buffer is large
 * (SO_RCVBUFFORCE, 8 MiB); ENOBUFS (events lost) is reported through the callback, not treated
 * as fatal. Like lib/, the monitor logs nothing (except the opt-in debug messages): receive
 * errors and a receive buffer smaller than asked for are reported to the caller, who logs them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

/* The receive buffer asked for, bytes. */
#define PROC_MONITOR_RCVBUF_SIZE (8 * 1024 * 1024)

typedef enum ProcEventType {
        PROC_MONITOR_FORK, /* parent_pid/parent_tgid created child_pid/child_tgid */
        PROC_MONITOR_EXEC, /* pid/tgid exec'd */
        PROC_MONITOR_UID,  /* pid/tgid changed uids (euid in .euid) */
        PROC_MONITOR_COMM, /* pid/tgid renamed itself (.comm) */
        PROC_MONITOR_EXIT, /* pid/tgid exited (fires for every thread) */
        PROC_MONITOR_LOST, /* ENOBUFS: the kernel dropped events; rescan */
        /* Receiving failed with .error (an error other than ENOBUFS, EAGAIN, EINTR). Rather than
         * spin on it, the monitor stops reading for .retry_usec (from 100 ms, doubling while the
         * error persists, up to 30 s), then reads again and delivers PROC_MONITOR_LOST, since
         * events may have been lost meanwhile. */
        PROC_MONITOR_ERROR,
} ProcEventType;

/* The event types a monitor delivers, as a mask of PROC_MONITOR_EVENT(type) bits (FORK, EXEC,
 * UID, COMM, EXIT); LOST and ERROR are always delivered. */
#define PROC_MONITOR_EVENT(type) (1U << (type))
#define PROC_MONITOR_EVENTS_ALL \
        (PROC_MONITOR_EVENT(PROC_MONITOR_FORK) | PROC_MONITOR_EVENT(PROC_MONITOR_EXEC) | \
         PROC_MONITOR_EVENT(PROC_MONITOR_UID) | PROC_MONITOR_EVENT(PROC_MONITOR_COMM) | \
         PROC_MONITOR_EVENT(PROC_MONITOR_EXIT))
/* For tests, or-ed into the events of proc_monitor_new(): subscribe as on kernels before 6.6,
 * without asking the kernel to filter (the types left out are dropped on receipt). */
#define PROC_MONITOR_NO_KERNEL_FILTER (1U << 16)

typedef struct ProcEvent {
        ProcEventType type;
        uint64_t timestamp_ns;         /* the kernel's timestamp_ns: CLOCK_MONOTONIC at the event */
        pid_t pid, tgid;               /* the task the event is about (child for FORK) */
        pid_t parent_pid, parent_tgid; /* FORK only */
        uid_t euid;                    /* UID only */
        char comm[16];                 /* COMM only, NUL-terminated */
        int error;                     /* ERROR only: the negative errno of recvmmsg(2) */
        uint64_t retry_usec;           /* ERROR only: µs until the monitor reads again */
} ProcEvent;

typedef struct ProcMonitor ProcMonitor;

/* Called for each event, in the order the kernel sent them. A negative return is written to
 * the debug messages (proc_monitor_set_debug()) and otherwise ignored: the handler reports its
 * own failures. */
typedef int (*proc_monitor_handler_t)(ProcMonitor *m, const ProcEvent *ev, void *userdata);

/*
 * Opens the socket, subscribes to the event types in events (PROC_MONITOR_EVENT() bits, at least
 * one of PROC_MONITOR_EVENTS_ALL; PROC_MONITOR_NO_KERNEL_FILTER for tests), and waits up to
 * timeout_usec (CLOCK_MONOTONIC µs) for the kernel's acknowledgement. Attaches an I/O source to
 * event (description "proc-connector").
 *
 * The subscription is the 4-byte PROC_CN_MCAST_LISTEN that every kernel takes. Then, where
 * proc_monitor_kernel_filters() says the running kernel filters safely (uname(2)), an 8-byte
 * struct proc_input asking for every type is sent, whose acknowledgement shows the kernel took
 * that form, and one naming the types in events (the kernel's filter drops the acknowledgement
 * of that one). No acknowledgement within PROC_MONITOR_FILTER_PROBE_USEC (a backport that lacks
 * the filter): the plain subscription stays, unfiltered. Either way only the types in events
 * are delivered (proc_monitor_is_filtered() says where they are dropped).
 *
 * Events the kernel sent before the acknowledgements are dropped (a /proc scan started after
 * this returns sees their outcome); every later one is delivered from the event loop, never
 * from this call. A datagram that arrives truncated or malformed is reported as
 * PROC_MONITOR_LOST too (what it held is unknown). The handler must not free the monitor.
 * Returns 0; -EINVAL (no event type); -EPERM / -EACCES (no CAP_NET_ADMIN); -EPROTONOSUPPORT
 * (kernel without CONFIG_PROC_EVENTS); -ETIMEDOUT (no acknowledgement: a non-initial PID
 * namespace); -errno. Nothing is left open on failure.
 */
int proc_monitor_new(
        sd_event *event, unsigned events, uint64_t timeout_usec, proc_monitor_handler_t handler,
        void *userdata, ProcMonitor **ret);

/* How long proc_monitor_new() waits for the acknowledgement of the 8-byte form, µs. The kernel
 * sends it before sendto(2) returns (cn_proc_mcast_ctl() runs in the sender's context), so this
 * only bounds a kernel that ignores the form. */
#define PROC_MONITOR_FILTER_PROBE_USEC (UINT64_C(50) * 1000)

/*
 * Changes the event types delivered to events (as proc_monitor_new(); the NO_KERNEL_FILTER flag
 * is ignored here). With the kernel's filter, sends a new struct proc_input on the same socket:
 * a second LISTEN on a socket already listening leaves the kernel's listener count as it is
 * (cn_proc_mcast_ctl()), and events of the added types are sent from the moment sendto(2)
 * returns. Types removed stop being delivered at once, queued ones included. Returns 0, -EINVAL
 * (no event type), or sendto(2)'s -errno: the kernel then still sends
 * the previous types only, and the added ones are missed until a later call succeeds. On a
 * parser-only monitor it only changes what proc_monitor_parse() delivers.
 */
int proc_monitor_set_events(ProcMonitor *m, unsigned events);

/* The event types delivered (PROC_MONITOR_EVENT() bits); PROC_MONITOR_EVENTS_ALL for a
 * parser-only monitor. */
unsigned proc_monitor_get_events(const ProcMonitor *m);

/* True when the kernel drops the types not delivered, before they are sent (Linux >= 6.6); false
 * when the monitor drops them on receipt, and for a parser-only monitor. */
bool proc_monitor_is_filtered(const ProcMonitor *m);

/*
 * Whether a kernel of this release (uname(2)'s, "6.8.0-31-generic") filters proc connector events
 * by type, safely: Linux 6.6 and later, except the stable kernels that carried commit c46bfba1337d
 * ("connector: Fix proc_event_num_listeners count not cleared") and not yet its revert 8929f95b2b58:
 * 6.6.13 to 6.6.17 and 6.7 before 6.7.6. Their send_msg() zeroes the kernel's listener count
 * whenever an event reaches no socket (netlink_broadcast() returns -ESRCH), which a filter that
 * drops the event for its only listener causes: the kernel would then send nothing more.
 * Unparsable text: false. Pure; no system call.
 */
bool proc_monitor_kernel_filters(const char *release);

/* Unsubscribes (PROC_CN_MCAST_IGNORE), closes, frees. Accepts NULL, returns NULL. */
ProcMonitor *proc_monitor_free(ProcMonitor *m);

/* Parses one netlink datagram of len bytes into events, calling handler for each; exposed for
 * tests and fuzzing. Returns the number of events delivered or -EBADMSG (a message that is
 * truncated or whose lengths disagree; events of the messages before it have been delivered).
 * Never reads outside buf[0..len), whatever its alignment. */
int proc_monitor_parse(ProcMonitor *m, const void *buf, size_t len);

/*
 * A monitor without a socket, only for proc_monitor_parse() (tests and fuzzing): handler is
 * called for each parsed event. Returns 0 and *ret, -ENOMEM.
 */
int proc_monitor_new_parser(proc_monitor_handler_t handler, void *userdata, ProcMonitor **ret);

/* Debug messages (handler failures, lost events, foreign datagrams) go to stderr when debug is
 * true; off by default. */
void proc_monitor_set_debug(ProcMonitor *m, bool debug);

/* The netlink socket (NETLINK_CONNECTOR), e.g. for tests that shrink SO_RCVBUF to provoke
 * ENOBUFS; -EBADF for a parser-only monitor. The monitor keeps ownership. */
int proc_monitor_get_fd(const ProcMonitor *m);

/*
 * The socket's receive buffer as the kernel granted it when the monitor was made: *ret_size is
 * getsockopt(SO_RCVBUF), bytes (the kernel doubles what it grants, for its bookkeeping: 2 ×
 * PROC_MONITOR_RCVBUF_SIZE when the request was met). *ret_force_error is 0 if SO_RCVBUFFORCE
 * worked, else the negative errno it failed with (-EPERM without CAP_NET_ADMIN): the
 * SO_RCVBUF fallback is then capped by net.core.rmem_max. Either pointer may be NULL.
 * Returns 0, or -EBADF for a parser-only monitor.
 */
int proc_monitor_get_receive_buffer(const ProcMonitor *m, size_t *ret_size, int *ret_force_error);
