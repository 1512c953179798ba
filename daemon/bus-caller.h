/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Callers on the bus, for the methods that answer differently by who asks (ListProcesses,
 * Explain: docs/security.md): the sender's credentials (cached by unique name), what /proc's
 * hidepid= lets that caller see of a process, and the Busy error of a caller beyond its share.
 */

#include <stdbool.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "manager.h"

#define CALLER_GIDS_MAX  64
#define CALLER_CACHE_MAX 64

typedef struct Caller {
        uid_t uid; /* effective */
        gid_t gid;
        gid_t gids[CALLER_GIDS_MAX]; /* supplementary (the first CALLER_GIDS_MAX) */
        int n_gids;
} Caller;

/* The credentials of recent senders by unique name: a unique name is never given to another
 * connection, and the bus reports the credentials of when it connected, so they can't change.
 * Asking the bus costs a round trip (GetConnectionCredentials) on the loop at every call. */
typedef struct CallerEntry {
        char *name;
        Caller caller;
        uint64_t used;
} CallerEntry;

struct BusCallers {
        CallerEntry entries[CALLER_CACHE_MAX];
        uint64_t clock;
};

/* Frees the credentials cache (the daemon stops). */
void bus_callers_free(Manager *m);

/*
 * The credentials of the sender of message into *ret: effective uid and gid, and the first
 * CALLER_GIDS_MAX supplementary groups, from the bus (sd_bus_query_sender_creds(), a round trip
 * to the broker the first time a unique name calls, then cached for CALLER_CACHE_MAX names).
 * Returns 0, -ENOMEM, or sd-bus's negative errno (the caller's credentials are unknown: refuse).
 */
int bus_caller_get(Manager *m, sd_bus_message *message, Caller *ret);

/*
 * Whether caller c could read pid's /proc files that need ptrace access (PTRACE_MODE_READ:
 * /proc/PID/exe, and every file under hidepid=): root, or the same uid and gid in every one of
 * the target's real, effective, saved and filesystem ids, read from /proc/PID/status
 * (ptrace_may_access() also asks for a dumpable task and no LSM veto; this is at least as strict
 * on the ids). False when pid is gone.
 */
bool bus_caller_may_ptrace(const Caller *c, pid_t pid);

/*
 * What /proc shows caller c of pid, given hidepid and gid (procfs_hidepid(), lib/procfs.h): 0 everything,
 * -EACCES the PID but none of its files (hidepid=noaccess), -ESRCH not even the PID (invisible,
 * ptraceable). The kernel's rule (has_pid_permissions()): a member of gid= sees all, otherwise
 * ptrace read access is needed (bus_caller_may_ptrace()).
 */
int bus_caller_visibility(const Caller *c, pid_t pid, int hidepid, gid_t gid, bool has_gid);

/* Sets error to org.affinityd1.Error.Busy for uid, beyond its share, saying to retry in
 * wait_usec µs. Returns what sd_bus_error_setf() returns, for the method to return. */
int bus_caller_reply_busy(sd_bus_error *error, uid_t uid, uint64_t wait_usec);

/*
 * For methods only root may call: 0 when the sender of message has euid 0 (asked of the bus
 * afresh, sd_bus_query_sender_creds()); else error is set to AccessDenied, "Only root may
 * WHAT.", and its negative errno returned; or sd-bus's negative errno.
 */
int bus_caller_require_root(sd_bus_message *message, sd_bus_error *error, const char *what);
