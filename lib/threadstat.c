/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-thread scheduler counters from /proc/PID/task/TID/{stat,sched,schedstat,status}
 * (threadstat.h).
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
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

/* Field 39 (processor) of a stat line: counted from the last ')' (comm may hold anything). */
static int parse_stat(const char *s, unsigned *ret) {
        const char *p = strrchr(s, ')');
        uint64_t v;

        if (!p)
                return -EBADMSG;
        p++;
        /* Fields 3..38 are 36 fields before field 39. */
        for (unsigned field = 3; field < 39; field++) {
                while (*p == ' ')
                        p++;
                if (!*p || *p == '\n')
                        return -EBADMSG;
                while (*p && *p != ' ' && *p != '\n')
                        p++;
        }
        if (parse_u64(&p, &v) < 0 || v > UINT_MAX)
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
                const char *p = schedstat;
                uint64_t runtime;

                if (parse_u64(&p, &runtime) < 0 || parse_u64(&p, &ts.run_delay_ns) < 0 ||
                    parse_u64(&p, &ts.timeslices) < 0)
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
                const char *p = schedstat;
                uint64_t runtime;

                if (parse_u64(&p, &runtime) < 0 || parse_u64(&p, &ts.run_delay_ns) < 0 ||
                    parse_u64(&p, &ts.timeslices) < 0)
                        return -EBADMSG;
        } else if (r == -ENOENT && !sched && !status)
                return -ESRCH;
        else if (r < 0 && r != -ENOENT)
                return r;

        *ret = ts;
        return 0;
}

uint64_t threadstat_delta(uint64_t now, uint64_t base) {
        if (now == THREADSTAT_UNKNOWN || base == THREADSTAT_UNKNOWN)
                return THREADSTAT_UNKNOWN;
        if (base > now)
                return now;
        return now - base;
}
