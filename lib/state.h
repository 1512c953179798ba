/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Persisted originals: what each thread of a process had before the daemon first wrote to it
 * (affinity and scheduling state), kept under a state directory (the daemon's default is
 * /run/affinityd, a tmpfs that survives a daemon restart but not a reboot), so a restarted
 * daemon can still give them back. The daemon keeps them as records of one append-only journal
 * (lib/state-journal.h), each record holding the lines of the format below.
 *
 * Versions before the journal kept one file per process, STATE_DIR/processes/PID-STARTTIME
 * (STARTTIME being field 22 of /proc/PID/stat: with the PID, the identity of a process, as a
 * reused PID has another starttime); state_read() and state_list() read them after an upgrade,
 * state_write() writes them (for tests).
 *
 * File format (text, one record per line, fields separated by single spaces):
 *
 *   affinityd-state 1
 *   process PID STARTTIME
 *   default AFFINITY SCHED
 *   thread TID AFFINITY SCHED
 *   ...
 *   refused WANTED ALLOWED
 *
 * "default" is the process's first original: what threads not listed (created later, or not
 * seen yet) get back. AFFINITY is a cpu-list ("0-3,8") of OS CPU numbers, or "-" when not
 * recorded. SCHED is "-" when not recorded, else six integers: POLICY (SCHED_* of <sched.h>)
 * PRIORITY NICE RESET_ON_FORK (0 or 1) IO_CLASS (APPLY_IOPRIO_CLASS_*) IO_LEVEL. The "process"
 * line must name the same PID and starttime as the file name. The optional "refused" line (last,
 * as written) says that the process's cgroup allowed none of its policy's CPUs and that this was
 * reported: WANTED is the cpu-list asked for, ALLOWED the cpuset's (a restarted daemon does not
 * report the same refusal again). A "refused" line that can't be read is ignored, not an error:
 * it is only a note, and the file's originals are kept. Files are written to a temporary
 * name and renamed into place, so a reader never sees half a file.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "apply-sched.h"
#include "config.h"
#include "cpuset.h"

#define STATE_DIR_DEFAULT AFFINITYD_RUNTIME_DIR /* config.h: RUNSTATEDIR/affinityd */

/* The first line of a process state file. */
#define STATE_MAGIC "affinityd-state 1"

typedef struct StateThread {
        pid_t tid;
        bool has_affinity;
        CpuSet affinity;
        bool has_sched;
        ThreadSched sched;
} StateThread;

typedef struct StateProcess {
        pid_t pid;
        uint64_t starttime;
        bool has_affinity; /* the process default ("default" line) */
        CpuSet affinity;
        bool has_sched;
        ThreadSched sched;
        StateThread *threads;
        size_t n_threads;
        bool has_refusal; /* the "refused" line */
        CpuSet refusal_wanted;
        CpuSet refusal_allowed;
} StateProcess;

/* A process named by a state file: PID and starttime. */
typedef struct StateId {
        pid_t pid;
        uint64_t starttime;
} StateId;

/* Releases what s owns and zeroes it. NULL accepted. */
void state_process_done(StateProcess *s);

/* Appends a zeroed thread entry with tid to s; *ret points into s->threads (valid until the next
 * append). Returns 0 or -ENOMEM. */
int state_process_add_thread(StateProcess *s, pid_t tid, StateThread **ret);

/* The thread entry for tid, or NULL. */
StateThread *state_process_find_thread(const StateProcess *s, pid_t tid);

/* The text of s in the format above, newly allocated. Returns 0, -ENOMEM, or -EINVAL for a
 * pid <= 0 or an empty affinity marked as recorded. */
int state_format(const StateProcess *s, char **ret);

/*
 * Parses text (the format above) into *ret. Returns 0; -EBADMSG for a malformed file, with a
 * newly allocated "line N: reason" in *ret_error (may be NULL; not written on success); or
 * -ENOMEM.
 */
int state_parse(const char *text, StateProcess *ret, char **ret_error);

/* "PID-STARTTIME" newly allocated into *ret. Returns 0 or -ENOMEM. */
int state_file_name(pid_t pid, uint64_t starttime, char **ret);

/* Parses a file name "PID-STARTTIME". Returns 0 or -EINVAL (anything else, e.g. a temporary
 * file). */
int state_parse_file_name(const char *name, StateId *ret);

/*
 * Writes s to DIR/processes/PID-STARTTIME (creating DIR and DIR/processes, mode 0755) through a
 * temporary file renamed over it. Returns 0 or -errno (open(2), write(2), rename(2)).
 */
int state_write(const char *dir, const StateProcess *s);

/*
 * Reads DIR/processes/PID-STARTTIME into *ret. Returns 0; -ENOENT when there is none; -EBADMSG
 * for a malformed file or one whose "process" line names another process, with
 * "PATH:LINE: reason" in *ret_error (may be NULL); other -errno.
 */
int state_read(const char *dir, pid_t pid, uint64_t starttime, StateProcess *ret, char **ret_error);

/* Removes DIR/processes/PID-STARTTIME. Returns 0 (also when it did not exist) or -errno. */
int state_remove(const char *dir, pid_t pid, uint64_t starttime);

/*
 * Lists the state files of DIR/processes in ascending PID order (names that are not
 * "PID-STARTTIME" are skipped). An absent directory is an empty list. Returns 0 with a newly
 * allocated array (NULL when empty) in *ret and its length in *ret_n, or -errno (opendir(3)).
 */
int state_list(const char *dir, StateId **ret, size_t *ret_n);

/*
 * Persisted unit properties (via: systemd): before the daemon first sets AllowedCPUs= and
 * AllowedMemoryNodes= on a systemd unit, it records what the unit had, so a restarted daemon can
 * set them back. One file per unit: STATE_DIR/units/ESCAPED, ESCAPED being the unit name with
 * every byte outside [A-Za-z0-9:_.@-] and a leading "." written as "%XX" (two uppercase hex
 * digits), so a name never is "." or "..", contains no "/" and never looks like a temporary file
 * (".NAME.tmp").
 *
 * File format (text, one record per line):
 *
 *   affinityd-unit 1
 *   unit NAME
 *   allowed-cpus LIST
 *   allowed-memory-nodes LIST
 *
 * LIST is a cpu-list ("0-3,8") of OS CPU (or NUMA node) numbers, or "-" for the empty set (the
 * property not set). The "unit" line must name the unit the file name escapes. Written to a
 * temporary name and renamed into place.
 */
typedef struct StateUnit {
        char *unit;
        CpuSet allowed_cpus;
        CpuSet allowed_memory_nodes;
} StateUnit;

/* Releases what s owns and zeroes it. NULL accepted. */
void state_unit_done(StateUnit *s);

/* The file name of unit (escaped as above) newly allocated into *ret. Returns 0, -EINVAL for an
 * empty name, or -ENOMEM. */
int state_unit_escape(const char *unit, char **ret);

/* The unit name a file name escapes, newly allocated into *ret. Returns 0, -EINVAL for a name
 * that is not one state_unit_escape() produces (e.g. a temporary file), or -ENOMEM. */
int state_unit_unescape(const char *name, char **ret);

/* The text of s in the format above, newly allocated. Returns 0, -EINVAL for a missing or
 * multi-line unit name, or -ENOMEM. */
int state_unit_format(const StateUnit *s, char **ret);

/* Parses text (the format above) into *ret. Returns 0; -EBADMSG for a malformed file, with a
 * newly allocated "line N: reason" in *ret_error (may be NULL); or -ENOMEM. */
int state_unit_parse(const char *text, StateUnit *ret, char **ret_error);

/* Writes s to DIR/units/ESCAPED (creating DIR and DIR/units, mode 0755) through a temporary file
 * renamed over it. Returns 0 or -errno (open(2), write(2), rename(2)). */
int state_unit_write(const char *dir, const StateUnit *s);

/* Reads DIR/units/ESCAPED of unit into *ret. Returns 0; -ENOENT when there is none; -EBADMSG for
 * a malformed file or one naming another unit, with "PATH:LINE: reason" in *ret_error (may be
 * NULL); other -errno. */
int state_unit_read(const char *dir, const char *unit, StateUnit *ret, char **ret_error);

/* Removes DIR/units/ESCAPED of unit. Returns 0 (also when it did not exist) or -errno. */
int state_unit_remove(const char *dir, const char *unit);

/* The units of DIR/units (unescaped names, sorted; other names skipped) as a newly allocated
 * NULL-terminated string vector (NULL when empty) in *ret. An absent directory is an empty list.
 * Returns 0 or -errno (opendir(3)). */
int state_unit_list(const char *dir, char ***ret);

/*
 * Persisted originals of device targets (irqs:/net: rules): before the daemon first writes an
 * IRQ's affinity, a queue's rps_cpus / xps_cpus / rps_flow_cnt or net.core.rps_sock_flow_entries,
 * it records the value there, so that it can be put back when the rule goes away — also by a
 * restarted daemon. One file per target: STATE_DIR/targets/KIND@ESCAPED, ESCAPED being the key
 * escaped as state_unit_escape() does.
 *
 *   KIND  key                 value (as read from the kernel, verbatim)   identity
 *   irq   "38"                smp_affinity_list ("0-1")                   "CHIP HWIRQ"
 * ("PCI-MSIX-0000:00:03.0 1-edge") rps   "eth0/rx-0"         rps_cpus ("00000000,00000003") ifindex ("2")
 *   xps   "eth0/tx-1"         xps_cpus                                    ifindex
 *   flow  "eth0/rx-0"         rps_flow_cnt ("0")                          ifindex
 *   rfs   "rps_sock_flow_entries"  rps_sock_flow_entries ("0")           ""
 *
 * The identity tells a target from a later one with the same key (an IRQ number reused by
 * another device, an interface deleted and created again): a record whose identity no longer
 * matches is dropped without writing anything back.
 *
 * File format (text):
 *
 *   affinityd-target 1
 *   kind KIND
 *   key KEY
 *   identity IDENTITY      (may be empty after the space)
 *   original VALUE
 *
 * Written to a temporary name and renamed into place.
 */
typedef struct StateTarget {
        char *kind;     /* "irq", "rps", "xps", "flow", "rfs": [a-z]+ */
        char *key;      /* non-empty, one line */
        char *identity; /* one line, may be "" */
        char *original; /* one line, non-empty */
} StateTarget;

/* Releases what s owns and zeroes it. NULL accepted. */
void state_target_done(StateTarget *s);

/* The text of s in the format above. Returns 0, -EINVAL (a field missing, multi-line, a kind not
 * [a-z]+), -ENOMEM. */
int state_target_format(const StateTarget *s, char **ret);
/* Parses text into *ret. Returns 0; -EBADMSG with "line N: reason" in *ret_error (may be NULL);
 * -ENOMEM. */
int state_target_parse(const char *text, StateTarget *ret, char **ret_error);

/* Writes s to DIR/targets/KIND@ESCAPED (creating the directories, 0755) through a temporary file.
 * Returns 0 or -errno. */
int state_target_write(const char *dir, const StateTarget *s);
/* Reads the record of (kind, key). Returns 0; -ENOENT; -EBADMSG ("PATH:LINE: reason" in
 * *ret_error, may be NULL; also for a file naming another kind or key); -errno. */
int state_target_read(
        const char *dir, const char *kind, const char *key, StateTarget *ret, char **ret_error);
/* Removes the record of (kind, key). Returns 0 (also when there was none) or -errno. */
int state_target_remove(const char *dir, const char *kind, const char *key);
/* Every record of DIR/targets, sorted by kind then key, newly allocated into *ret (NULL when
 * none; free each with state_target_done(), then the array), count in *ret_n. Unreadable or
 * malformed files are skipped. An absent directory is an empty list. Returns 0 or -errno. */
int state_target_list(const char *dir, StateTarget **ret, size_t *ret_n);
