/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "state.h"
#include "util.h"

#define STATE_MAX_TOKENS 9

void state_process_done(StateProcess *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_threads; i++)
                cpuset_done(&s->threads[i].affinity);
        free(s->threads);
        cpuset_done(&s->affinity);
        cpuset_done(&s->refusal_wanted);
        cpuset_done(&s->refusal_allowed);
        *s = (StateProcess){};
}

int state_process_add_thread(StateProcess *s, pid_t tid, StateThread **ret) {
        StateThread *n;

        n = reallocarray(s->threads, s->n_threads + 1, sizeof(StateThread));
        if (!n)
                return -ENOMEM;
        s->threads = n;
        n[s->n_threads] = (StateThread){.tid = tid};
        *ret = &n[s->n_threads++];
        return 0;
}

StateThread *state_process_find_thread(const StateProcess *s, pid_t tid) {
        for (size_t i = 0; i < s->n_threads; i++)
                if (s->threads[i].tid == tid)
                        return &s->threads[i];
        return NULL;
}

static int format_record(
        FILE *f, bool has_affinity, const CpuSet *affinity, bool has_sched, const ThreadSched *sched) {
        _cleanup_free_ char *list = NULL;

        if (has_affinity) {
                if (cpuset_count(affinity) == 0)
                        return -EINVAL;
                if (cpuset_format_list(affinity, &list) < 0)
                        return -ENOMEM;
        }
        fprintf(f, " %s", list ?: "-");
        if (has_sched)
                fprintf(f, " %d %u %d %d %d %u", sched->policy, sched->priority, sched->nice,
                        sched->reset_on_fork ? 1 : 0, sched->io_class, sched->io_level);
        else
                fputs(" -", f);
        fputc('\n', f);
        return 0;
}

int state_format(const StateProcess *s, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        if (s->pid <= 0)
                return -EINVAL;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, STATE_MAGIC "\nprocess %d %" PRIu64 "\ndefault", (int)s->pid, s->starttime);
        r = format_record(f, s->has_affinity, &s->affinity, s->has_sched, &s->sched);
        for (size_t i = 0; r >= 0 && i < s->n_threads; i++) {
                const StateThread *t = &s->threads[i];
                fprintf(f, "thread %d", (int)t->tid);
                r = format_record(f, t->has_affinity, &t->affinity, t->has_sched, &t->sched);
        }
        if (r >= 0 && s->has_refusal) {
                _cleanup_free_ char *wanted = cpuset_to_string(&s->refusal_wanted),
                                    *allowed = cpuset_to_string(&s->refusal_allowed);

                if (!wanted || !allowed)
                        r = -ENOMEM;
                else if (!*wanted || !*allowed)
                        r = -EINVAL;
                else
                        fprintf(f, "refused %s %s\n", wanted, allowed);
        }
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

_printf_(3, 4) static int parse_error(char **ret_error, unsigned line, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        if (!ret_error)
                return -EBADMSG;
        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (asprintf(ret_error, "line %u: %s", line, msg) < 0) {
                *ret_error = NULL;
                return -ENOMEM;
        }
        return -EBADMSG;
}

static bool parse_int(const char *s, long long min, long long max, long long *ret) {
        char *end;
        long long v;

        if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
                return false;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || *end || v < min || v > max)
                return false;
        *ret = v;
        return true;
}

static bool parse_u64(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!s || *s < '0' || *s > '9')
                return false;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end)
                return false;
        *ret = v;
        return true;
}

/* tokens[0..n): AFFINITY SCHED... */
static int parse_record(
        char **tokens, size_t n, unsigned line, bool *has_affinity, CpuSet *affinity, bool *has_sched,
        ThreadSched *sched, char **ret_error) {
        long long v[6];
        int r;

        if (n != 2 && n != 7)
                return parse_error(
                        ret_error, line, "expected AFFINITY and SCHED (\"-\" or 6 numbers), got %zu fields",
                        n);
        if (streq(tokens[0], "-"))
                *has_affinity = false;
        else {
                r = cpuset_parse_list(tokens[0], affinity, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return parse_error(ret_error, line, "invalid cpu-list \"%s\"", tokens[0]);
                if (cpuset_count(affinity) == 0)
                        return parse_error(ret_error, line, "empty affinity");
                *has_affinity = true;
        }
        if (n == 2) {
                if (!streq(tokens[1], "-"))
                        return parse_error(ret_error, line, "invalid scheduling state \"%s\"", tokens[1]);
                *has_sched = false;
                return 0;
        }
        if (!parse_int(tokens[1], 0, INT_MAX, &v[0]) || !parse_int(tokens[2], 0, 99, &v[1]) ||
            !parse_int(tokens[3], -20, 19, &v[2]) || !parse_int(tokens[4], 0, 1, &v[3]) ||
            !parse_int(tokens[5], 0, 3, &v[4]) || !parse_int(tokens[6], 0, 7, &v[5]))
                return parse_error(
                        ret_error, line,
                        "invalid scheduling state (POLICY PRIORITY NICE RESET_ON_FORK IO_CLASS IO_LEVEL)");
        *sched = (ThreadSched){
                .policy = (int)v[0],
                .priority = (unsigned)v[1],
                .nice = (int)v[2],
                .reset_on_fork = v[3] != 0,
                .io_class = (int)v[4],
                .io_level = (unsigned)v[5],
        };
        *has_sched = true;
        return 0;
}

int state_parse(const char *text, StateProcess *ret, char **ret_error) {
        _cleanup_(state_process_done) StateProcess s = {};
        _cleanup_free_ char *copy = NULL;
        bool seen_process = false, seen_default = false;
        char *save = NULL, *l;
        unsigned line = 0;
        int r;

        copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        /* strsep keeps empty lines, so line numbers stay right. */
        for (char *cursor = copy; (l = strsep(&cursor, "\n"));) {
                char *tokens[STATE_MAX_TOKENS + 1];
                size_t n = 0;
                long long v;

                line++;
                if (!cursor && !*l)
                        break; /* after the final newline */
                if (line == 1) {
                        if (!streq(l, STATE_MAGIC))
                                return parse_error(
                                        ret_error, line, "not an affinityd state file (expected \"%s\")",
                                        STATE_MAGIC);
                        continue;
                }
                for (char *tok = strtok_r(l, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
                        if (n == ELEMENTSOF(tokens))
                                return parse_error(ret_error, line, "too many fields");
                        tokens[n++] = tok;
                }
                if (n == 0)
                        return parse_error(ret_error, line, "empty line");
                if (streq(tokens[0], "process")) {
                        if (seen_process)
                                return parse_error(ret_error, line, "duplicate \"process\" line");
                        if (n != 3 || !parse_int(tokens[1], 1, INT_MAX, &v) ||
                            !parse_u64(tokens[2], &s.starttime))
                                return parse_error(ret_error, line, "expected \"process PID STARTTIME\"");
                        s.pid = (pid_t)v;
                        seen_process = true;
                } else if (streq(tokens[0], "default")) {
                        if (!seen_process || seen_default)
                                return parse_error(
                                        ret_error, line,
                                        "\"default\" must follow the \"process\" line, once");
                        r = parse_record(
                                tokens + 1, n - 1, line, &s.has_affinity, &s.affinity, &s.has_sched,
                                &s.sched, ret_error);
                        if (r < 0)
                                return r;
                        seen_default = true;
                } else if (streq(tokens[0], "thread")) {
                        StateThread *t;

                        if (!seen_default)
                                return parse_error(
                                        ret_error, line, "\"thread\" before the \"default\" line");
                        if (n < 2 || !parse_int(tokens[1], 1, INT_MAX, &v))
                                return parse_error(
                                        ret_error, line, "expected \"thread TID AFFINITY SCHED\"");
                        if (state_process_find_thread(&s, (pid_t)v))
                                return parse_error(ret_error, line, "duplicate thread %lld", v);
                        r = state_process_add_thread(&s, (pid_t)v, &t);
                        if (r < 0)
                                return r;
                        r = parse_record(
                                tokens + 2, n - 2, line, &t->has_affinity, &t->affinity, &t->has_sched,
                                &t->sched, ret_error);
                        if (r < 0)
                                return r;
                } else if (streq(tokens[0], "refused")) {
                        /* Only a note that a refusal was logged: one that can't be read is
                         * ignored, the originals (what matters) are kept. */
                        _cleanup_cpuset_ CpuSet w = CPUSET_NULL, a = CPUSET_NULL;

                        if (n == 3 && cpuset_parse_list(tokens[1], &w, NULL) >= 0 &&
                            cpuset_parse_list(tokens[2], &a, NULL) >= 0 && !cpuset_is_empty(&w) &&
                            !cpuset_is_empty(&a)) {
                                cpuset_done(&s.refusal_wanted);
                                cpuset_done(&s.refusal_allowed);
                                s.refusal_wanted = w;
                                s.refusal_allowed = a;
                                w = a = CPUSET_NULL;
                                s.has_refusal = true;
                        }
                } else
                        return parse_error(ret_error, line, "unknown record \"%s\"", tokens[0]);
        }
        if (line == 0 || !seen_process || !seen_default)
                return parse_error(
                        ret_error, line, "truncated: \"process\" and \"default\" lines are required");
        *ret = s;
        s = (StateProcess){};
        return 0;
}

int state_file_name(pid_t pid, uint64_t starttime, char **ret) {
        return asprintf(ret, "%d-%" PRIu64, (int)pid, starttime) < 0 ? -ENOMEM : 0;
}

int state_parse_file_name(const char *name, StateId *ret) {
        _cleanup_free_ char *copy = strdup(name);
        long long pid;
        uint64_t st;
        char *dash;

        if (!copy)
                return -ENOMEM;
        dash = strchr(copy, '-');
        if (!dash)
                return -EINVAL;
        *dash = 0;
        if (!parse_int(copy, 1, INT_MAX, &pid) || copy[0] == '-' || !parse_u64(dash + 1, &st))
                return -EINVAL;
        *ret = (StateId){.pid = (pid_t)pid, .starttime = st};
        return 0;
}

static int state_path(const char *dir, pid_t pid, uint64_t starttime, char **ret) {
        return asprintf(ret, "%s/processes/%d-%" PRIu64, dir, (int)pid, starttime) < 0 ? -ENOMEM : 0;
}

static int mkdir_one(const char *path) {
        return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/*
 * Writes text to path atomically: creates dir and its subdirectory sub if needed, writes tmp
 * (in sub) and renames it over path, so a reader sees the old file or the new one, never a
 * part. Returns 0 or -errno (tmp removed).
 */
static int write_atomic(
        const char *dir, const char *sub, const char *tmp, const char *path, const char *text) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(text), done = 0;
        int r;

        /* The directories exist but for the first write: create them only when open says so
         * (one system call per write instead of three; startup writes one file per process). */
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 && errno == ENOENT) {
                r = mkdir_one(dir);
                if (r < 0)
                        return r;
                r = mkdir_one(sub);
                if (r < 0)
                        return r;
                fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        }
        if (fd < 0)
                return -errno;
        while (done < len) {
                ssize_t k = write(fd, text + done, len - done);
                if (k < 0) {
                        r = -errno;
                        (void)unlink(tmp);
                        return r;
                }
                done += (size_t)k;
        }
        if (rename(tmp, path) < 0) {
                r = -errno;
                (void)unlink(tmp);
                return r;
        }
        return 0;
}

int state_write(const char *dir, const StateProcess *s) {
        _cleanup_free_ char *text = NULL, *sub = NULL, *path = NULL, *tmp = NULL;
        int r;

        r = state_format(s, &text);
        if (r < 0)
                return r;
        if (asprintf(&sub, "%s/processes", dir) < 0)
                return -ENOMEM;
        r = state_path(dir, s->pid, s->starttime, &path);
        if (r < 0)
                return r;
        if (asprintf(&tmp, "%s/processes/.%d.tmp", dir, (int)s->pid) < 0)
                return -ENOMEM;
        return write_atomic(dir, sub, tmp, path, text);
}

/* Sets *ret_error (if non-NULL) to "PATH:REST" and returns -EBADMSG (or -ENOMEM). */
_printf_(3, 4) static int file_error(char **ret_error, const char *path, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        if (!ret_error)
                return -EBADMSG;
        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0) {
                msg = NULL; /* undefined after a failure */
                return -ENOMEM;
        }
        if (asprintf(ret_error, "%s:%s", path, msg) < 0) {
                *ret_error = NULL;
                return -ENOMEM;
        }
        return -EBADMSG;
}

/* The whole file, NUL-terminated. Returns 0, -EBADMSG for a NUL byte in it, -errno. */
static int read_file(const char *path, char **ret) {
        return read_full_file(path, READ_FULL_NO_LIMIT, READ_FULL_NO_NUL, ret, NULL);
}

/* What read_state_file() parses a file into: one of them is set, the others are NULL. */
typedef struct StateFile {
        StateProcess *process; /* state_parse() */
        StateUnit *unit;       /* state_unit_parse() */
        StateTarget *target;   /* state_target_parse() */
} StateFile;

/*
 * Reads the file at path and parses it into the one of f that is set. A NUL byte in the file
 * or a line the parser rejects is -EBADMSG with "PATH: contains a NUL byte" or "PATH:N: reason"
 * in *ret_error (if non-NULL). Returns 0, -EBADMSG, -ENOMEM or -errno.
 */
static int read_state_file(const char *path, const StateFile *f, char **ret_error) {
        _cleanup_free_ char *text = NULL, *err = NULL;
        int r;

        r = read_file(path, &text);
        if (r == -EBADMSG)
                return file_error(ret_error, path, " contains a NUL byte");
        if (r < 0)
                return r;
        if (f->process)
                r = state_parse(text, f->process, &err);
        else if (f->unit)
                r = state_unit_parse(text, f->unit, &err);
        else
                r = state_target_parse(text, f->target, &err);
        if (r == -EBADMSG)
                /* err is "line N: reason": make it "PATH:N: reason". */
                return file_error(ret_error, path, "%s", err ? err + strlen("line ") : "malformed");
        return r;
}

/* Removes the file at path; one that does not exist is no error. Returns 0 or -errno. */
static int remove_file(const char *path) {
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

/* Writes text to dir/sub/name with write_atomic(), through dir/sub/.name.tmp. Returns 0 or -errno. */
static int write_named(const char *dir, const char *sub, const char *name, const char *text) {
        _cleanup_free_ char *subdir = NULL, *path = NULL, *tmp = NULL;

        if (asprintf(&subdir, "%s/%s", dir, sub) < 0 || asprintf(&path, "%s/%s", subdir, name) < 0 ||
            asprintf(&tmp, "%s/.%s.tmp", subdir, name) < 0)
                return -ENOMEM;
        return write_atomic(dir, subdir, tmp, path, text);
}

/*
 * Opens the subdirectory sub of dir into *ret, NULL when it does not exist (nothing was
 * written there yet: next_entry() gives no entry). Returns 0, -ENOMEM or -errno.
 */
static int open_subdir(const char *dir, const char *sub, DIR **ret) {
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/%s", dir, sub) < 0)
                return -ENOMEM;
        *ret = opendir(path);
        if (!*ret && errno != ENOENT)
                return -errno;
        return 0;
}

/* The next entry of d (of open_subdir(); NULL: none), or NULL at the end (errno 0) or on error (errno). */
static struct dirent *next_entry(DIR *d) {
        errno = 0;
        return d ? readdir(d) : NULL;
}

int state_read(const char *dir, pid_t pid, uint64_t starttime, StateProcess *ret, char **ret_error) {
        _cleanup_(state_process_done) StateProcess s = {};
        _cleanup_free_ char *path = NULL;
        int r;

        r = state_path(dir, pid, starttime, &path);
        if (r < 0)
                return r;
        r = read_state_file(path, &(StateFile){.process = &s}, ret_error);
        if (r < 0)
                return r;
        if (s.pid != pid || s.starttime != starttime)
                return file_error(
                        ret_error, path, "2: names process %d-%" PRIu64 ", not the file's", (int)s.pid,
                        s.starttime);
        *ret = s;
        s = (StateProcess){};
        return 0;
}

int state_remove(const char *dir, pid_t pid, uint64_t starttime) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = state_path(dir, pid, starttime, &path);
        if (r < 0)
                return r;
        return remove_file(path);
}

static int state_id_compare(const void *a, const void *b) {
        const StateId *x = a, *y = b;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

int state_list(const char *dir, StateId **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ StateId *ids = NULL;
        size_t n = 0;
        struct dirent *de;
        int r;

        r = open_subdir(dir, "processes", &d);
        if (r < 0)
                return r;
        while ((de = next_entry(d))) {
                StateId id, *a;
                if (state_parse_file_name(de->d_name, &id) < 0)
                        continue;
                a = reallocarray(ids, n + 1, sizeof(StateId));
                if (!a)
                        return -ENOMEM;
                ids = a;
                ids[n++] = id;
        }
        if (errno != 0)
                return -errno;
        if (n > 0)
                qsort(ids, n, sizeof(StateId), state_id_compare);
        *ret = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

/* ---- unit properties ---- */

#define STATE_UNIT_MAGIC "affinityd-unit 1"

void state_unit_done(StateUnit *s) {
        if (!s)
                return;
        free(s->unit);
        cpuset_done(&s->allowed_cpus);
        cpuset_done(&s->allowed_memory_nodes);
        *s = (StateUnit){};
}

static bool unit_char_plain(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                strchr(":_.@-", c);
}

int state_unit_escape(const char *unit, char **ret) {
        char *buf, *p;

        if (!unit || !*unit)
                return -EINVAL;
        buf = malloc(strlen(unit) * 3 + 1);
        if (!buf)
                return -ENOMEM;
        p = buf;
        for (const char *c = unit; *c; c++) {
                if (unit_char_plain(*c) && !(c == unit && *c == '.'))
                        *p++ = *c;
                else
                        p += sprintf(p, "%%%02X", (unsigned)(unsigned char)*c);
        }
        *p = 0;
        *ret = buf;
        return 0;
}

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int state_unit_unescape(const char *name, char **ret) {
        _cleanup_free_ char *buf = NULL, *check = NULL;
        char *p;
        int r;

        if (!name || !*name || name[0] == '.')
                return -EINVAL;
        buf = malloc(strlen(name) + 1);
        if (!buf)
                return -ENOMEM;
        p = buf;
        for (const char *c = name; *c; c++) {
                if (*c == '%') {
                        int hi = unhex(c[1]), lo = hi >= 0 ? unhex(c[2]) : -1;
                        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                                return -EINVAL;
                        *p++ = (char)(hi * 16 + lo);
                        c += 2;
                } else if (unit_char_plain(*c))
                        *p++ = *c;
                else
                        return -EINVAL;
        }
        *p = 0;
        /* Only the canonical escaping is accepted: one unit, one file name. */
        r = state_unit_escape(buf, &check);
        if (r < 0)
                return r;
        if (!streq(check, name))
                return -EINVAL;
        *ret = TAKE_PTR(buf);
        return 0;
}

static int format_unit_list(FILE *f, const char *key, const CpuSet *s) {
        _cleanup_free_ char *list = NULL;

        if (!cpuset_is_empty(s) && cpuset_format_list(s, &list) < 0)
                return -ENOMEM;
        fprintf(f, "%s %s\n", key, list ?: "-");
        return 0;
}

int state_unit_format(const StateUnit *s, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        if (!s->unit || !*s->unit || strpbrk(s->unit, "\n \t"))
                return -EINVAL;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, STATE_UNIT_MAGIC "\nunit %s\n", s->unit);
        r = format_unit_list(f, "allowed-cpus", &s->allowed_cpus);
        if (r >= 0)
                r = format_unit_list(f, "allowed-memory-nodes", &s->allowed_memory_nodes);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

static int unit_parse_error(char **ret_error, unsigned line, const char *reason) {
        if (ret_error && asprintf(ret_error, "line %u: %s", line, reason) < 0)
                return -ENOMEM;
        return -EBADMSG;
}

int state_unit_parse(const char *text, StateUnit *ret, char **ret_error) {
        static const char *const keys[] = {NULL, "unit", "allowed-cpus", "allowed-memory-nodes"};
        _cleanup_(state_unit_done) StateUnit s = {};
        _cleanup_free_ char *copy = strdup(text);
        char *line, *save = NULL;
        unsigned n = 0;
        int r;

        if (!copy)
                return -ENOMEM;
        for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                _cleanup_free_ char *why = NULL;
                char *value;
                CpuSet *set;

                n++;
                if (n == 1) {
                        if (!streq(line, STATE_UNIT_MAGIC))
                                return unit_parse_error(ret_error, n, "not an affinityd-unit 1 file");
                        continue;
                }
                if (n > ELEMENTSOF(keys))
                        return unit_parse_error(ret_error, n, "unexpected extra line");
                value = strchr(line, ' ');
                if (!value || (size_t)(value - line) != strlen(keys[n - 1]) ||
                    strncmp(line, keys[n - 1], (size_t)(value - line)) != 0) {
                        if (asprintf(&why, "expected \"%s VALUE\"", keys[n - 1]) < 0)
                                return -ENOMEM;
                        return unit_parse_error(ret_error, n, why);
                }
                value++;
                if (n == 2) {
                        if (!*value || strpbrk(value, " \t"))
                                return unit_parse_error(ret_error, n, "bad unit name");
                        s.unit = strdup(value);
                        if (!s.unit)
                                return -ENOMEM;
                        continue;
                }
                set = n == 3 ? &s.allowed_cpus : &s.allowed_memory_nodes;
                if (streq(value, "-"))
                        continue;
                r = cpuset_parse_list(value, set, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || cpuset_is_empty(set))
                        return unit_parse_error(ret_error, n, "bad cpu-list");
        }
        if (n < ELEMENTSOF(keys))
                return unit_parse_error(ret_error, n + 1, "missing line");
        *ret = s;
        s = (StateUnit){};
        return 0;
}

static int state_unit_path(const char *dir, const char *unit, char **ret) {
        _cleanup_free_ char *name = NULL;
        int r;

        r = state_unit_escape(unit, &name);
        if (r < 0)
                return r;
        return asprintf(ret, "%s/units/%s", dir, name) < 0 ? -ENOMEM : 0;
}

int state_unit_write(const char *dir, const StateUnit *s) {
        _cleanup_free_ char *text = NULL, *name = NULL;
        int r;

        r = state_unit_format(s, &text);
        if (r < 0)
                return r;
        r = state_unit_escape(s->unit, &name);
        if (r < 0)
                return r;
        return write_named(dir, "units", name, text);
}

int state_unit_read(const char *dir, const char *unit, StateUnit *ret, char **ret_error) {
        _cleanup_(state_unit_done) StateUnit s = {};
        _cleanup_free_ char *path = NULL;
        int r;

        r = state_unit_path(dir, unit, &path);
        if (r < 0)
                return r;
        r = read_state_file(path, &(StateFile){.unit = &s}, ret_error);
        if (r < 0)
                return r;
        if (!streq(s.unit, unit))
                return file_error(ret_error, path, "2: names unit %s, not the file's", s.unit);
        *ret = s;
        s = (StateUnit){};
        return 0;
}

int state_unit_remove(const char *dir, const char *unit) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = state_unit_path(dir, unit, &path);
        if (r < 0)
                return r;
        return remove_file(path);
}

int state_unit_list(const char *dir, char ***ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_strv_free_ char **units = NULL;
        size_t n = 0;
        struct dirent *de;
        int r;

        r = open_subdir(dir, "units", &d);
        if (r < 0)
                return r;
        while ((de = next_entry(d))) {
                char *unit, **a;

                r = state_unit_unescape(de->d_name, &unit);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                a = reallocarray(units, n + 2, sizeof(char *));
                if (!a) {
                        free(unit);
                        return -ENOMEM;
                }
                units = a;
                units[n++] = unit;
                units[n] = NULL;
        }
        if (errno != 0)
                return -errno;
        if (n > 0)
                qsort(units, n, sizeof(char *), compare_string_ptr);
        *ret = TAKE_PTR(units);
        return 0;
}

/* ---- device targets ---- */

#define STATE_TARGET_MAGIC "affinityd-target 1"

void state_target_done(StateTarget *s) {
        if (!s)
                return;
        free(s->kind);
        free(s->key);
        free(s->identity);
        free(s->original);
        *s = (StateTarget){};
}

static bool target_kind_valid(const char *kind) {
        return kind && *kind && strspn(kind, "abcdefghijklmnopqrstuvwxyz") == strlen(kind);
}

/* A field that fits on its line: present, no newline, non-empty unless empty_ok. */
static bool target_field_valid(const char *s, bool empty_ok) {
        return s && (empty_ok || *s) && !strchr(s, '\n');
}

int state_target_format(const StateTarget *s, char **ret) {
        char *text;

        if (!target_kind_valid(s->kind) || !target_field_valid(s->key, false) ||
            !target_field_valid(s->identity, true) || !target_field_valid(s->original, false))
                return -EINVAL;
        if (asprintf(
                    &text, STATE_TARGET_MAGIC "\nkind %s\nkey %s\nidentity %s\noriginal %s\n", s->kind,
                    s->key, s->identity, s->original) < 0)
                return -ENOMEM;
        *ret = text;
        return 0;
}

int state_target_parse(const char *text, StateTarget *ret, char **ret_error) {
        static const char *const keys[] = {"kind", "key", "identity", "original"};
        _cleanup_(state_target_done) StateTarget s = {};
        _cleanup_free_ char *copy = NULL;
        char **fields[] = {&s.kind, &s.key, &s.identity, &s.original};
        size_t n_fields = 0;
        unsigned line = 0;
        char *l;

        copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        /* strsep keeps empty lines, so line numbers stay right. */
        for (char *cursor = copy; (l = strsep(&cursor, "\n"));) {
                size_t i, klen;
                const char *value;

                line++;
                if (line > 1 && !cursor && !*l)
                        break; /* after the final newline */
                if (line == 1) {
                        if (!streq(l, STATE_TARGET_MAGIC))
                                return parse_error(
                                        ret_error, line, "not an affinityd target file (expected \"%s\")",
                                        STATE_TARGET_MAGIC);
                        continue;
                }
                i = line - 2;
                if (i >= ELEMENTSOF(keys))
                        return parse_error(ret_error, line, "unexpected extra line");
                klen = strlen(keys[i]);
                if (strncmp(l, keys[i], klen) != 0 || (l[klen] != ' ' && l[klen] != 0))
                        return parse_error(ret_error, line, "expected \"%s VALUE\"", keys[i]);
                value = l[klen] ? l + klen + 1 : l + klen;
                if (i == 0 && !target_kind_valid(value))
                        return parse_error(ret_error, line, "invalid kind \"%s\" (expected [a-z]+)", value);
                if (i != 2 && !*value)
                        return parse_error(ret_error, line, "empty %s", keys[i]);
                *fields[i] = strdup(value);
                if (!*fields[i])
                        return -ENOMEM;
                n_fields++;
        }
        if (n_fields < ELEMENTSOF(keys))
                return parse_error(
                        ret_error, 2 + (unsigned)n_fields, "truncated: the \"%s\" line is missing",
                        keys[n_fields]);
        *ret = s;
        s = (StateTarget){};
        return 0;
}

/* The file name of (kind, key): "KIND@ESCAPED". -EINVAL for a kind not [a-z]+ or an empty key. */
static int state_target_name(const char *kind, const char *key, char **ret) {
        _cleanup_free_ char *escaped = NULL;
        int r;

        if (!target_kind_valid(kind))
                return -EINVAL;
        r = state_unit_escape(key, &escaped);
        if (r < 0)
                return r;
        return asprintf(ret, "%s@%s", kind, escaped) < 0 ? -ENOMEM : 0;
}

/* dir/targets/KIND@ESCAPED, the file of (kind, key). -EINVAL as state_target_name(). */
static int state_target_path(const char *dir, const char *kind, const char *key, char **ret) {
        _cleanup_free_ char *name = NULL;
        int r;

        r = state_target_name(kind, key, &name);
        if (r < 0)
                return r;
        return asprintf(ret, "%s/targets/%s", dir, name) < 0 ? -ENOMEM : 0;
}

int state_target_write(const char *dir, const StateTarget *s) {
        _cleanup_free_ char *text = NULL, *name = NULL;
        int r;

        r = state_target_format(s, &text);
        if (r < 0)
                return r;
        r = state_target_name(s->kind, s->key, &name);
        if (r < 0)
                return r;
        return write_named(dir, "targets", name, text);
}

int state_target_read(
        const char *dir, const char *kind, const char *key, StateTarget *ret, char **ret_error) {
        _cleanup_(state_target_done) StateTarget s = {};
        _cleanup_free_ char *path = NULL;
        int r;

        r = state_target_path(dir, kind, key, &path);
        if (r < 0)
                return r;
        r = read_state_file(path, &(StateFile){.target = &s}, ret_error);
        if (r < 0)
                return r;
        if (!streq(s.kind, kind))
                return file_error(ret_error, path, "2: names kind \"%s\", not the file's", s.kind);
        if (!streq(s.key, key))
                return file_error(ret_error, path, "3: names key \"%s\", not the file's", s.key);
        *ret = s;
        s = (StateTarget){};
        return 0;
}

int state_target_remove(const char *dir, const char *kind, const char *key) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = state_target_path(dir, kind, key, &path);
        if (r < 0)
                return r;
        return remove_file(path);
}

static int state_target_compare(const void *a, const void *b) {
        const StateTarget *x = a, *y = b;
        int c = strcmp(x->kind, y->kind);
        return c != 0 ? c : strcmp(x->key, y->key);
}

static void state_target_array_free(StateTarget *a, size_t n) {
        for (size_t i = 0; i < n; i++)
                state_target_done(&a[i]);
        free(a);
}

int state_target_list(const char *dir, StateTarget **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        StateTarget *targets = NULL;
        size_t n = 0;
        int r = 0;

        r = open_subdir(dir, "targets", &d);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_(state_target_done) StateTarget t = {};
                _cleanup_free_ char *kind = NULL, *key = NULL;
                struct dirent *de;
                const char *at;
                StateTarget *a;

                de = next_entry(d);
                if (!de) {
                        r = -errno;
                        break;
                }
                /* "KIND@ESCAPED"; temporary files (".NAME.tmp") and anything else skipped. */
                at = strchr(de->d_name, '@');
                if (!at || at == de->d_name)
                        continue;
                kind = strndup(de->d_name, (size_t)(at - de->d_name));
                if (!kind) {
                        r = -ENOMEM;
                        break;
                }
                if (!target_kind_valid(kind))
                        continue;
                r = state_unit_unescape(at + 1, &key);
                if (r == -ENOMEM)
                        break;
                if (r < 0) {
                        r = 0;
                        continue;
                }
                r = state_target_read(dir, kind, key, &t, NULL);
                if (r == -ENOMEM)
                        break;
                if (r < 0) {
                        r = 0;
                        continue; /* unreadable or malformed: skipped */
                }
                a = reallocarray(targets, n + 1, sizeof(StateTarget));
                if (!a) {
                        r = -ENOMEM;
                        break;
                }
                targets = a;
                targets[n++] = t;
                t = (StateTarget){};
        }
        if (r < 0) {
                state_target_array_free(targets, n);
                return r;
        }
        if (n > 0)
                qsort(targets, n, sizeof(StateTarget), state_target_compare);
        *ret = targets;
        *ret_n = n;
        return 0;
}
