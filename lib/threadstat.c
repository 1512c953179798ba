/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-thread scheduler counters from /proc/PID/task/TID/{stat,sched,schedstat,status}
 * (threadstat.h).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "procfs.h"
#include "threadstat.h"

/* Largest file read: /proc/PID/task/TID/sched is ~2 KiB, status ~1.5 KiB. */
#define THREADSTAT_FILE_MAX (64U * 1024U)

static int thread_file(const char *root, pid_t pid, pid_t tid, const char *file, char **ret) {
        char path[PATH_MAX];
        const char *prefix = (!root || streq(root, "/")) ? "" : root;
        int n;

        if (tid > 0)
                n = snprintf(path, sizeof(path), "%s/proc/%d/task/%d/%s", prefix, (int)pid, (int)tid, file);
        else
                n = snprintf(path, sizeof(path), "%s/proc/%d/%s", prefix, (int)pid, file);
        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        return read_full_file(path, THREADSTAT_FILE_MAX, 0, ret, NULL);
}

/* Parses a decimal unsigned 64-bit number at *p, advancing *p. Returns 0 or -EBADMSG. */
static int parse_u64(const char **p, uint64_t *ret) {
        char *end;
        unsigned long long v;

        while (**p == ' ' || **p == '\t')
                (*p)++;
        if (**p < '0' || **p > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoull(*p, &end, 10);
        if (errno != 0)
                return -EBADMSG;
        *p = end;
        *ret = v;
        return 0;
}

/* The three numbers of a schedstat line: CPU time (ns), run-queue delay (ns), timeslices. NULL
 * outputs are skipped. Returns 0 or -EBADMSG. */
static int parse_schedstat(const char *s, uint64_t *cpu_ns, uint64_t *run_delay_ns, uint64_t *timeslices) {
        uint64_t v[3];

        for (size_t i = 0; i < 3; i++)
                if (parse_u64(&s, &v[i]) < 0)
                        return -EBADMSG;
        if (cpu_ns)
                *cpu_ns = v[0];
        if (run_delay_ns)
                *run_delay_ns = v[1];
        if (timeslices)
                *timeslices = v[2];
        return 0;
}

/* Field 39 (processor) of a stat line (procfs_stat_field()). */
static int parse_stat(const char *s, unsigned *ret) {
        uint64_t v;

        if (procfs_stat_field(s, 39, &v) < 0 || v > UINT_MAX)
                return -EBADMSG;
        *ret = (unsigned)v;
        return 0;
}

/*
 * The value of the line "KEY<blanks>SEP<blanks>NUMBER" of text, sep ':' (sched uses
 * "se.nr_migrations   :   5", status "nonvoluntary_ctxt_switches:\t3"). Returns 0, -ENOENT when
 * no line has the key, -EBADMSG when it has no number.
 */
static int parse_keyed(const char *text, const char *key, uint64_t *ret) {
        size_t n = strlen(key);

        for (const char *line = text; line && *line;
             line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
                const char *p;

                if (strncmp(line, key, n) != 0)
                        continue;
                p = line + n;
                while (*p == ' ' || *p == '\t')
                        p++;
                if (*p != ':') /* a longer key with the same start */
                        continue;
                p++;
                return parse_u64(&p, ret);
        }
        return -ENOENT;
}

int threadstat_read(const char *root, pid_t pid, pid_t tid, ThreadStat *ret) {
        _cleanup_free_ char *stat = NULL, *status = NULL, *sched = NULL, *schedstat = NULL;
        ThreadStat ts = {
                .nr_migrations = THREADSTAT_UNKNOWN,
                .run_delay_ns = THREADSTAT_UNKNOWN,
                .timeslices = THREADSTAT_UNKNOWN,
        };
        int r;

        if (pid <= 0 || tid < 0 || !ret)
                return -EINVAL;

        r = thread_file(root, pid, tid, "stat", &stat);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        r = parse_stat(stat, &ts.last_cpu);
        if (r < 0)
                return r;

        r = thread_file(root, pid, tid, "status", &status);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        r = parse_keyed(status, "nonvoluntary_ctxt_switches", &ts.nonvoluntary);
        if (r < 0)
                return -EBADMSG;

        r = thread_file(root, pid, tid, "sched", &sched);
        if (r >= 0) {
                r = parse_keyed(sched, "se.nr_migrations", &ts.nr_migrations);
                if (r == -EBADMSG)
                        return r;
        } else if (r != -ENOENT)
                return r;

        r = thread_file(root, pid, tid, "schedstat", &schedstat);
        if (r >= 0) {
                if (parse_schedstat(schedstat, NULL, &ts.run_delay_ns, &ts.timeslices) < 0)
                        return -EBADMSG;
        } else if (r != -ENOENT)
                return r;

        *ret = ts;
        return 0;
}

int threadstat_read_counters(const char *root, pid_t pid, pid_t tid, ThreadStat *ret) {
        _cleanup_free_ char *sched = NULL, *schedstat = NULL, *status = NULL;
        ThreadStat ts = {
                .nr_migrations = THREADSTAT_UNKNOWN,
                .run_delay_ns = THREADSTAT_UNKNOWN,
                .timeslices = THREADSTAT_UNKNOWN,
                .nonvoluntary = THREADSTAT_UNKNOWN,
        };
        int r;

        if (pid <= 0 || tid < 0 || !ret)
                return -EINVAL;

        r = thread_file(root, pid, tid, "sched", &sched);
        if (r >= 0) {
                r = parse_keyed(sched, "se.nr_migrations", &ts.nr_migrations);
                if (r == -EBADMSG)
                        return r;
                /* The same counter as status's nonvoluntary_ctxt_switches (task->nivcsw). */
                r = parse_keyed(sched, "nr_involuntary_switches", &ts.nonvoluntary);
                if (r == -EBADMSG)
                        return r;
        } else if (r != -ENOENT)
                return r;

        if (ts.nonvoluntary == THREADSTAT_UNKNOWN) {
                r = thread_file(root, pid, tid, "status", &status);
                if (r == -ENOENT)
                        return -ESRCH;
                if (r < 0)
                        return r;
                if (parse_keyed(status, "nonvoluntary_ctxt_switches", &ts.nonvoluntary) < 0)
                        return -EBADMSG;
        }

        r = thread_file(root, pid, tid, "schedstat", &schedstat);
        if (r >= 0) {
                if (parse_schedstat(schedstat, NULL, &ts.run_delay_ns, &ts.timeslices) < 0)
                        return -EBADMSG;
        } else if (r == -ENOENT && !sched && !status)
                return -ESRCH;
        else if (r < 0 && r != -ENOENT)
                return r;

        *ret = ts;
        return 0;
}

int threadstat_read_schedstat(
        const char *root, pid_t pid, pid_t tid, uint64_t *ret_cpu_ns, uint64_t *ret_run_delay_ns,
        uint64_t *ret_timeslices) {
        /* Three numbers of at most 20 digits: one read(2) into the stack, no allocation (this is
         * the per-thread cost of effect sampling). */
        char schedstat[128], path[PATH_MAX];
        const char *prefix = (!root || streq(root, "/")) ? "" : root;
        uint64_t cpu_ns, run_delay_ns, timeslices;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;
        int r;

        if (pid <= 0 || tid < 0)
                return -EINVAL;

        if (tid > 0)
                r = snprintf(path, sizeof(path), "%s/proc/%d/task/%d/schedstat", prefix, (int)pid, (int)tid);
        else
                r = snprintf(path, sizeof(path), "%s/proc/%d/schedstat", prefix, (int)pid);
        if (r < 0 || (size_t)r >= sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                r = errno == ESRCH ? -ESRCH : -errno;
        else {
                do
                        n = read(fd, schedstat, sizeof(schedstat) - 1);
                while (n < 0 && errno == EINTR);
                if (n < 0)
                        r = errno == ESRCH ? -ESRCH : -errno;
                else {
                        schedstat[n] = '\0';
                        r = 0;
                }
        }
        if (r == -ENOENT) {
                _cleanup_free_ char *stat = NULL;

                /* Gone, or a kernel without CONFIG_SCHED_INFO: stat tells. */
                r = thread_file(root, pid, tid, "stat", &stat);
                return r == -ENOENT ? -ESRCH : r < 0 ? r : -EOPNOTSUPP;
        }
        if (r == -ESRCH)
                return r;
        if (r < 0)
                return r;
        if (parse_schedstat(schedstat, &cpu_ns, &run_delay_ns, &timeslices) < 0)
                return -EBADMSG;
        if (ret_cpu_ns)
                *ret_cpu_ns = cpu_ns;
        if (ret_run_delay_ns)
                *ret_run_delay_ns = run_delay_ns;
        if (ret_timeslices)
                *ret_timeslices = timeslices;
        return 0;
}

int threadstat_read_stat(
        const char *root, pid_t pid, pid_t tid, uint64_t *ret_starttime, unsigned *ret_last_cpu) {
        _cleanup_free_ char *stat = NULL;
        ProcfsStat ps;
        unsigned last_cpu;
        int r;

        if (pid <= 0 || tid < 0)
                return -EINVAL;

        r = thread_file(root, pid, tid, "stat", &stat);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        r = procfs_parse_stat(stat, strlen(stat), &ps);
        if (r < 0)
                return r;
        r = parse_stat(stat, &last_cpu);
        if (r < 0)
                return r;
        if (ret_starttime)
                *ret_starttime = ps.starttime;
        if (ret_last_cpu)
                *ret_last_cpu = last_cpu;
        return 0;
}

int threadstat_read_switches(
        const char *root, pid_t pid, pid_t tid, uint64_t *ret_migrations, uint64_t *ret_involuntary) {
        _cleanup_free_ char *sched = NULL;
        uint64_t migrations = THREADSTAT_UNKNOWN, involuntary = THREADSTAT_UNKNOWN;
        int r;

        if (pid <= 0 || tid < 0)
                return -EINVAL;

        r = thread_file(root, pid, tid, "sched", &sched);
        if (r >= 0) {
                r = parse_keyed(sched, "se.nr_migrations", &migrations);
                if (r == -EBADMSG)
                        return r;
                r = parse_keyed(sched, "nr_involuntary_switches", &involuntary);
                if (r == -EBADMSG)
                        return r;
        } else if (r != -ENOENT)
                return r;

        if (involuntary == THREADSTAT_UNKNOWN) {
                _cleanup_free_ char *status = NULL;

                r = thread_file(root, pid, tid, "status", &status);
                if (r == -ENOENT)
                        return -ESRCH;
                if (r < 0)
                        return r;
                if (parse_keyed(status, "nonvoluntary_ctxt_switches", &involuntary) < 0)
                        return -EBADMSG;
        }
        if (ret_migrations)
                *ret_migrations = migrations;
        if (ret_involuntary)
                *ret_involuntary = involuntary;
        return 0;
}

uint64_t threadstat_delta(uint64_t now, uint64_t base) {
        if (now == THREADSTAT_UNKNOWN || base == THREADSTAT_UNKNOWN)
                return THREADSTAT_UNKNOWN;
        if (base > now)
                return now;
        return now - base;
}
