/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Readers of /proc under a configurable root, so tests can point them at a fixture tree.
 * root is a directory path; NULL or "/" means the real /proc. Paths read are
 * ROOT/proc/PID/..., exactly as the kernel lays them out (proc(5)).
 * A process or thread that has gone away yields -ESRCH (the kernel's ENOENT/ESRCH on its
 * /proc files are both mapped to it), so callers can tell "gone" from real failures.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"

/* comm of a process (tid 0) or of thread tid of pid: /proc/PID[/task/TID]/comm, newline
 * stripped, into ret (16 bytes, TASK_COMM_LEN). Returns 0, -ESRCH, -errno. */
int procfs_read_comm(const char *root, pid_t pid, pid_t tid, char ret[16]);

/* The fields of /proc/PID[/task/TID]/stat the daemon uses (proc(5) numbering). */
typedef struct ProcfsStat {
        char comm[16];      /* field 2 without the parentheses, at most 15 bytes (as procfs_read_comm()) */
        char state;         /* field 3: R, S, D, Z, ... */
        pid_t ppid;         /* field 4 */
        unsigned flags;     /* field 9: PF_* flags */
        unsigned n_threads; /* field 20, num_threads: live threads (a zombie leader counts as one) */
        uint64_t starttime; /* field 22: clock ticks since boot */
} ProcfsStat;

/* The kernel's PF_KTHREAD bit in ProcfsStat.flags. */
#define PROCFS_PF_KTHREAD 0x00200000U

/*
 * Parses the text of a /proc/PID[/task/TID]/stat file (proc(5)): the len bytes at buf, which
 * need not be NUL-terminated and are never read past (a NUL ends the text early, as the kernel
 * never writes one). The comm is what lies between the first '(' and the last ')', so a comm
 * holding spaces, ") (" or a newline is safe; fields 3 to 22 follow it, separated by spaces,
 * on one line; field 1 (the pid), fields after 22 and whatever follows them are not looked at. Numbers are
 * decimal digits only; a ppid above INT_MAX, a flags or num_threads above UINT_MAX or a
 * starttime above UINT64_MAX is unparsable. *ret is written only on success.
 * Returns 0 or -EBADMSG (no "(comm)", a field missing, empty, or not a number, a state of
 * more than one byte, a number out of range).
 */
int procfs_parse_stat(const char *buf, size_t len, ProcfsStat *ret);

/*
 * Reads /proc/PID/stat (tid 0) or /proc/PID/task/TID/stat with one read(2) and parses it with
 * procfs_parse_stat(). Lets a /proc scan get the comm, the start time and the kernel-thread
 * flag from one read. Returns 0, -ESRCH, -EBADMSG (unparsable), -errno.
 */
int procfs_read_stat(const char *root, pid_t pid, pid_t tid, ProcfsStat *ret);

/*
 * Field field (proc(5) numbering, 3 or more: after the comm) of the NUL-terminated text of a
 * /proc/PID[/task/TID]/stat file, as an unsigned decimal: counted from the last ')' so any comm
 * is safe, e.g. 14 utime, 15 stime, 39 processor (the CPU it last ran on). Returns 0 and *ret,
 * or -EBADMSG (no ')', field < 3, the line ends before it, not a number or out of range).
 */
int procfs_stat_field(const char *buf, unsigned field, uint64_t *ret);

/* Field 22 of /proc/PID/stat (starttime, clock ticks since boot) — with the PID, the identity
 * of a process across PID reuse. Parsed after the last ')' so any comm is safe.
 * Returns 0, -ESRCH, -EBADMSG (unparsable), -errno. */
int procfs_read_starttime(const char *root, pid_t pid, uint64_t *ret);

/* true if pid is a kernel thread (PF_KTHREAD, 0x00200000, in field 9 "flags" of
 * /proc/PID/stat). Returns 1, 0, -ESRCH, -errno. */
int procfs_is_kernel_thread(const char *root, pid_t pid);

/* readlink of /proc/PID/exe with a " (deleted)" suffix removed, newly allocated.
 * Returns 0, -ESRCH, -EACCES (no ptrace access), -ENOENT (no exe: kernel thread, zombie). */
int procfs_read_exe(const char *root, pid_t pid, char **ret);

/* Bytes of /proc/PID/cmdline read at most: more than the kernel lets a process have (its
 * arguments and environment together are capped at 3/4 of the 8 MiB default stack limit, 6 MiB,
 * in fs/exec.c), so a cmdline: pattern sees the whole command line — matched in linear time
 * (regex-set.h), so that a user's megabytes of arguments cost a scan, not a stall. */
#define PROCFS_CMDLINE_MAX (8U * 1024U * 1024U)

/* /proc/PID/cmdline (at most PROCFS_CMDLINE_MAX bytes of it), NUL separators turned into single
 * spaces, trailing ones dropped, newly allocated ("" for a zombie). Returns 0, -ESRCH, -errno. */
int procfs_read_cmdline(const char *root, pid_t pid, char **ret);
/* The same, but -E2BIG without reading on when the file has max bytes or more (max 0: no limit
 * but PROCFS_CMDLINE_MAX): how the daemon keeps reading and scanning huge command lines off
 * its event path (docs/security.md). */
int procfs_read_cmdline_max(const char *root, pid_t pid, size_t max, char **ret);

/*
 * Parsers of the text of a /proc/PID[/task/TID]/status file (proc(5)): the len bytes at buf,
 * which need not be NUL-terminated and are never read past (a NUL ends the text early).
 * The file is one "Name:\tvalue" line per field; each parser takes the first line that is
 * exactly its field (a line "XUid:" or "Uid_x:" is not "Uid:"), the value from after the colon
 * and its blanks to the end of the line. *ret is written only on success.
 *
 * procfs_parse_status_euid(): the effective uid, the second of the four blank-separated uids
 * of "Uid:\treal\teffective\tsaved\tfs" (decimal; (uid_t)-1 is not a uid).
 * Returns 0 or -EBADMSG (no Uid: line, fewer than two uids, not a number, out of range).
 *
 * procfs_parse_status_cpus_allowed(): the CPUs of "Cpus_allowed_list:" (a cpu-list of OS CPU
 * numbers, cpuset_parse_list()), replacing *ret's contents. Returns 0, -EBADMSG (no such line,
 * not a cpu-list, a CPU >= CPUSET_MAX_CPUS), -ENOMEM.
 */
int procfs_parse_status_euid(const char *buf, size_t len, uid_t *ret);
int procfs_parse_status_cpus_allowed(const char *buf, size_t len, CpuSet *ret);
/* procfs_parse_status_ids(): the real, effective, saved and filesystem uids of "Uid:" and gids
 * of "Gid:", in that order. Returns 0 or -EBADMSG (a field missing, or not four numbers). */
int procfs_parse_status_ids(const char *buf, size_t len, uid_t uids[4], gid_t gids[4]);

/* Effective uid of /proc/PID/status (procfs_parse_status_euid()). Returns 0, -ESRCH, -EBADMSG,
 * -errno. */
int procfs_read_euid(const char *root, pid_t pid, uid_t *ret);

/* procfs_parse_status_tgid(): the thread group (process) of "Tgid:", a positive decimal that
 * fits pid_t. Returns 0 or -EBADMSG. procfs_read_tgid(): of /proc/TID/status, which the kernel
 * serves for every thread although readdir(3) of /proc lists only thread group leaders: the
 * process a thread ID belongs to. Returns 0, -ESRCH, -EBADMSG, -errno. */
int procfs_parse_status_tgid(const char *buf, size_t len, pid_t *ret);
int procfs_read_tgid(const char *root, pid_t tid, pid_t *ret);

/* The cgroup path of pid: the cgroup v2 line "0::/path" if present and not "/", else the v1
 * "name=systemd" hierarchy's path (hybrid layout); newly allocated. Returns 0, -ESRCH,
 * -ENODATA (neither present), -errno. */
int procfs_read_cgroup(const char *root, pid_t pid, char **ret);

/* The systemd unit owning a cgroup path: the first path component that is a unit but not a
 * slice (".service", ".scope", ...), e.g. "/system.slice/nginx.service/x" -> "nginx.service"
 * and "/user.slice/user-0.slice/session-3.scope" -> "session-3.scope". Newly allocated.
 * As systemd's cg_path_get_unit(): leading slices are skipped and the next component must be
 * a valid unit name (a component escaped with a leading '_' is unescaped first), so
 * "/docker/x/foo.service" has no unit. Returns 0, -ENXIO (no unit in the path), -ENOMEM. */
int procfs_unit_from_cgroup(const char *cgroup_path, char **ret);

/* The Uid: and Gid: ids of /proc/PID/status (procfs_parse_status_ids()). Returns 0, -ESRCH,
 * -EBADMSG, -ENOMEM. */
int procfs_read_ids(const char *root, pid_t pid, uid_t uids[4], gid_t gids[4]);

/*
 * hidepid= and gid= of the proc mounted at /proc, from ROOT/proc/self/mountinfo (proc(5); the
 * last such mount wins): returns 0 off (also when mountinfo can't be read), 1 noaccess, 2
 * invisible, 4 ptraceable; *ret_has_gid says whether gid= is set, *ret_gid its value. Read at
 * each call: an administrator may remount.
 */
int procfs_hidepid(const char *root, gid_t *ret_gid, bool *ret_has_gid);

/* Cpus_allowed_list of /proc/PID[/task/TID]/status into *ret (procfs_parse_status_cpus_allowed()).
 * Returns 0, -ESRCH, -EBADMSG, -ENOMEM, -errno. */
int procfs_read_cpus_allowed(const char *root, pid_t pid, pid_t tid, CpuSet *ret);

/* Every numeric entry of /proc (processes), ascending, newly allocated array in *ret,
 * count in *ret_n. Returns 0 or -errno. */
int procfs_list_pids(const char *root, pid_t **ret, size_t *ret_n);

/* Every entry of /proc/PID/task, ascending, newly allocated array in *ret, count in *ret_n.
 * Returns 0, -ESRCH, -errno. */
int procfs_list_tids(const char *root, pid_t pid, pid_t **ret, size_t *ret_n);

/*
 * Calls visit(pid, tid, userdata) once for every thread of pid, re-reading /proc/PID/task
 * until a pass finds no thread not already visited, so threads created while iterating are
 * not missed. A visitor returning < 0 stops the walk with that value (except -ESRCH, which
 * means only that this thread exited and is skipped). Returns the number of threads visited,
 * -ESRCH if the process is gone, or the visitor's error.
 * Threads are visited in ascending TID order within a pass. The directory is opened once and
 * rewound for each pass; visited TIDs are kept in a sorted array. Threads the visitor
 * skipped with -ESRCH are not counted. A pass that finds no thread at all means the process
 * is gone (-ESRCH), even if some threads were visited before.
 */
typedef int (*procfs_thread_visitor_t)(pid_t pid, pid_t tid, void *userdata);
int procfs_foreach_thread(const char *root, pid_t pid, procfs_thread_visitor_t visit, void *userdata);

/*
 * Like procfs_foreach_thread(), but one pass over /proc/PID/task only: threads created while
 * visiting may be missed. For callers that hear of new threads anyway (the proc connector's
 * fork events), it saves re-reading the directory. Returns the number of threads visited,
 * -ESRCH if the process is gone, or the visitor's error.
 */
int procfs_foreach_thread_once(const char *root, pid_t pid, procfs_thread_visitor_t visit, void *userdata);

/*
 * True if the process whose /proc/PID/stat is st has exited: its leader is a zombie (or dead)
 * and no other thread is left. sched_setaffinity(2) succeeds on a zombie, so without this an
 * exited process would count as placed. A leader that called pthread_exit() is a zombie too
 * while the other threads live on: that process is alive. The stat line says both: a zombie
 * leader counts itself in num_threads until it is reaped, and every other thread leaves the
 * count when it exits (before its EXIT event is sent), so num_threads > 1 means some other
 * thread lives. No /proc/PID/task listing needed.
 */
bool procfs_stat_is_dead(const ProcfsStat *st);

/*
 * True if a task with start time starttime (/proc/PID/stat field 22, clock ticks since boot)
 * started no later than event_ns (CLOCK_MONOTONIC ns, e.g. the proc connector's timestamp). The
 * start time is CLOCK_BOOTTIME rounded down to a tick (sysconf(_SC_CLK_TCK)): a task the event
 * is about always passes; one that started later (a reused PID) fails unless it started within
 * the same tick. An event_ns of 0 (no event) passes, and so does everything when the clocks
 * cannot be read.
 */
bool procfs_started_before(uint64_t starttime, uint64_t event_ns);

/* How old systemd's child before its exec can be (procfs_is_service_manager_child()), ns: it
 * execs within milliseconds of its fork. */
#define PROCFS_SERVICE_CHILD_AGE_MAX_NSEC (UINT64_C(2) * 1000000000)

/*
 * True for ROOT/proc/PID, whose stat is st, if it is a child that systemd (PID 1, or a
 * "systemd" user manager) forked to start a unit and that has not exec'd yet: systemd names it
 * "(BINARY)" and moves it into the unit's cgroup, sets its user and so on before the exec. Such a
 * child still runs its parent's executable (or systemd-executor, systemd 255 and later); a
 * process calling itself "(…" that runs another program is one only if it is being exec'd (its
 * comm changed since st) or is younger than PROCFS_SERVICE_CHILD_AGE_MAX_NSEC. Reads the
 * parent's comm and both executables, and only for a "(…" comm. root NULL: "/".
 */
bool procfs_is_service_manager_child(const char *root, pid_t pid, const ProcfsStat *st);
