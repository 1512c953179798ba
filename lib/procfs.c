/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Readers of /proc under a configurable root (procfs.h). They run on the event path, thousands
 * of times per second under an exec storm, so each file is opened once and read with a single
 * read(2) into a stack buffer when it fits (procfs returns a whole seq_file, and regular files
 * of a fixture tree, in one read when the buffer is large enough); no stdio. Directories of
 * threads are read with getdents64(2) into stack buffers (no DIR: opendir() costs an fstat(2)
 * and a 32 KiB allocation), see docs/performance.md.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "procfs.h"
#include "util.h"

/* Largest file we are prepared to hold in memory (a huge argv). */
#define PROCFS_FILE_MAX (64U * 1024U * 1024U)

/* ENOENT and ESRCH on a /proc/PID file both mean the task has gone away. */
static int gone_errno(int e) {
        if (e == ENOENT || e == ESRCH)
                return -ESRCH;
        return -e;
}

/* Writes ROOT/proc/PID[/task/TID][/FILE] into buf. */
/* Appends the n bytes of s at buf[*k] if they fit below size (keeping room for the NUL). */
static bool path_append(char *buf, size_t size, size_t *k, const char *s, size_t n) {
        if (n >= size - *k)
                return false;
        memcpy(buf + *k, s, n);
        *k += n;
        return true;
}

/* Appends the decimal form of v (> 0). */
static bool path_append_number(char *buf, size_t size, size_t *k, pid_t v) {
        char tmp[3 * sizeof(pid_t)];
        size_t n = sizeof(tmp);

        do {
                tmp[--n] = (char)('0' + v % 10);
                v /= 10;
        } while (v > 0);
        return path_append(buf, size, k, tmp + n, sizeof(tmp) - n);
}

/*
 * Writes ROOT/proc/PID[/task/TID][/FILE] into buf. By hand rather than with snprintf(): this
 * runs several times per process event, and snprintf()'s format interpretation was a fifth of
 * the daemon's instructions per exec (docs/performance.md).
 */
static int proc_path(char *buf, size_t size, const char *root, pid_t pid, pid_t tid, const char *file) {
        const char *prefix = root_prefix(root);
        size_t k = 0;
        bool ok;

        if (pid <= 0 || tid < 0)
                return -EINVAL;
        if (size == 0)
                return -ENAMETOOLONG;

        ok = path_append(buf, size, &k, prefix, strlen(prefix)) && path_append(buf, size, &k, "/proc/", 6) &&
                path_append_number(buf, size, &k, pid);
        if (ok && tid > 0)
                ok = path_append(buf, size, &k, "/task/", 6) && path_append_number(buf, size, &k, tid);
        if (ok && file)
                ok = path_append(buf, size, &k, "/", 1) && path_append(buf, size, &k, file, strlen(file));
        if (!ok)
                return -ENAMETOOLONG;
        buf[k] = '\0';
        return 0;
}

/*
 * Reads the whole file at path, NUL-terminated. The first read(2) goes into buf (size bytes);
 * if it comes back short, that was the whole file. A file that fills buf is read on into a
 * heap buffer, handed to the caller in *ret_heap (NULL otherwise). *ret points to buf or to
 * *ret_heap. A file of max bytes or more is -EFBIG, or with truncate cut to its first max - 1
 * bytes. Errors on a /proc/PID file map ENOENT/ESRCH to -ESRCH.
 */
static int read_file_max(
        const char *path, char *buf, size_t size, size_t max, bool truncate, char **ret_heap, char **ret,
        size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *heap = NULL;
        char *p = buf;
        size_t cap = size, len = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return gone_errno(errno);

        for (;;) {
                ssize_t n;

                n = read(fd, p + len, cap - 1 - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return gone_errno(errno);
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len < cap - 1) {
                        if (!heap)
                                break; /* a short first read is the whole file */
                        continue;
                }

                /* Buffer full: continue into a larger heap buffer. */
                if (cap >= max) {
                        if (truncate)
                                break;
                        return -EFBIG;
                }
                size_t ncap = MIN(cap * 2, max);
                char *t = realloc(heap, ncap);
                if (!t)
                        return -ENOMEM;
                if (!heap)
                        memcpy(t, buf, len);
                heap = p = t;
                cap = ncap;
        }

        p[len] = '\0';
        *ret_heap = TAKE_PTR(heap);
        *ret = p;
        if (ret_len)
                *ret_len = len;
        return 0;
}

static int read_file(
        const char *path, char *buf, size_t size, char **ret_heap, char **ret, size_t *ret_len) {
        return read_file_max(path, buf, size, PROCFS_FILE_MAX, false, ret_heap, ret, ret_len);
}

/* Reads /proc/PID[/task/TID]/FILE (under root) as read_file() does. */
static int read_proc_file(
        const char *root, pid_t pid, pid_t tid, const char *file, char *buf, size_t size, char **ret_heap,
        char **ret, size_t *ret_len) {
        char path[PATH_MAX];
        int r;

        r = proc_path(path, sizeof(path), root, pid, tid, file);
        if (r < 0)
                return r;
        return read_file(path, buf, size, ret_heap, ret, ret_len);
}

/* Parses the decimal number in [s, s + n) (digits only). Returns 0 or -EBADMSG. */
/* A PID/TID directory name: a positive decimal number that fits pid_t. */
static int parse_pid(const char *s, pid_t *ret) {
        uint64_t v;

        if (parse_u64_digits(s, strlen(s), &v) < 0 || v == 0 || v > INT_MAX)
                return -EINVAL;
        *ret = (pid_t)v;
        return 0;
}

int procfs_parse_stat(const char *buf, size_t len, ProcfsStat *ret) {
        ProcfsStat st = {};
        const char *p, *c, *end;
        unsigned field = 3;

        /* A NUL (never in what the kernel writes) ends the text, as in a NUL-terminated buffer. */
        len = len > 0 ? strnlen(buf, len) : 0;
        if (len == 0)
                return -EBADMSG;
        end = buf + len;

        /* The comm (field 2) is in parentheses and may itself hold ") (": it ends at the last ')'. */
        c = memchr(buf, '(', len);
        p = memrchr(buf, ')', len);
        if (!c || !p || p < c)
                return -EBADMSG;
        /* As procfs_read_comm(): the name as it is (prctl() allows any byte but NUL, a newline
         * included), at most 15 bytes. */
        memcpy(st.comm, c + 1, MIN((size_t)(p - c - 1), sizeof(st.comm) - 1));
        p++;

        while (field <= 22) {
                const char *tok;
                size_t n;
                uint64_t v;

                while (p < end && *p == ' ')
                        p++;
                tok = p;
                while (p < end && *p != ' ' && *p != '\n')
                        p++;
                n = (size_t)(p - tok);
                if (n == 0)
                        return -EBADMSG;

                switch (field) {
                case 3:
                        if (n != 1)
                                return -EBADMSG;
                        st.state = tok[0];
                        break;
                case 4:
                        if (parse_u64_digits(tok, n, &v) < 0 || v > INT_MAX)
                                return -EBADMSG;
                        st.ppid = (pid_t)v;
                        break;
                case 9:
                        if (parse_u64_digits(tok, n, &v) < 0 || v > UINT_MAX)
                                return -EBADMSG;
                        st.flags = (unsigned)v;
                        break;
                case 20:
                        if (parse_u64_digits(tok, n, &v) < 0 || v > UINT_MAX)
                                return -EBADMSG;
                        st.n_threads = (unsigned)v;
                        break;
                case 22:
                        if (parse_u64_digits(tok, n, &v) < 0)
                                return -EBADMSG;
                        st.starttime = v;
                        break;
                default:
                        break;
                }
                field++;
        }

        *ret = st;
        return 0;
}

int procfs_read_stat(const char *root, pid_t pid, pid_t tid, ProcfsStat *ret) {
        char buf[1024], *s;
        _cleanup_free_ char *heap = NULL;
        size_t len;
        int r;

        r = read_proc_file(root, pid, tid, "stat", buf, sizeof(buf), &heap, &s, &len);
        if (r < 0)
                return r;
        return procfs_parse_stat(s, len, ret);
}

int procfs_stat_field(const char *buf, unsigned field, uint64_t *ret) {
        const char *p = strrchr(buf, ')');
        char *end;
        unsigned long long v;

        if (!p || field < 3)
                return -EBADMSG;
        p++;
        for (unsigned f = 3; f < field; f++) {
                while (*p == ' ')
                        p++;
                if (!*p || *p == '\n')
                        return -EBADMSG;
                while (*p && *p != ' ' && *p != '\n')
                        p++;
        }
        while (*p == ' ')
                p++;
        if (*p < '0' || *p > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoull(p, &end, 10);
        if (errno != 0)
                return -EBADMSG;
        *ret = v;
        return 0;
}

int procfs_read_starttime(const char *root, pid_t pid, uint64_t *ret) {
        ProcfsStat st;
        int r;

        r = procfs_read_stat(root, pid, 0, &st);
        if (r < 0)
                return r;
        *ret = st.starttime;
        return 0;
}

int procfs_is_kernel_thread(const char *root, pid_t pid) {
        ProcfsStat st;
        int r;

        r = procfs_read_stat(root, pid, 0, &st);
        if (r < 0)
                return r;
        return !!(st.flags & PROCFS_PF_KTHREAD);
}

int procfs_read_comm(const char *root, pid_t pid, pid_t tid, char ret[16]) {
        char buf[128], *s;
        _cleanup_free_ char *heap = NULL;
        size_t len;
        int r;

        r = read_proc_file(root, pid, tid, "comm", buf, sizeof(buf), &heap, &s, &len);
        if (r < 0)
                return r;

        /* The kernel writes the name and one newline; the name itself may hold a newline
         * (prctl(PR_SET_NAME) takes any byte but NUL), so only the last one is dropped.
         * Kernel worker threads show "kworker/0:1-events" here, longer than TASK_COMM_LEN - 1:
         * keep the first 15 characters, as the kernel's own comm. */
        if (len > 0 && s[len - 1] == '\n')
                len--;
        if (len > 15)
                len = 15;
        memcpy(ret, s, len);
        ret[len] = '\0';
        return 0;
}

int procfs_read_exe(const char *root, pid_t pid, char **ret) {
        static const char deleted[] = " (deleted)";
        char path[PATH_MAX], buf[PATH_MAX + sizeof(deleted)];
        ssize_t n;
        char *s;
        int r;

        r = proc_path(path, sizeof(path), root, pid, 0, "exe");
        if (r < 0)
                return r;

        n = readlink(path, buf, sizeof(buf));
        if (n < 0) {
                if (errno == ENOENT) {
                        /* No exe link: a kernel thread or zombie if /proc/PID is still there. */
                        r = proc_path(path, sizeof(path), root, pid, 0, NULL);
                        if (r < 0)
                                return r;
                        if (access(path, F_OK) < 0)
                                return gone_errno(errno);
                        return -ENOENT;
                }
                return gone_errno(errno);
        }
        if ((size_t)n >= sizeof(buf))
                return -ENAMETOOLONG;
        buf[n] = '\0';

        if ((size_t)n >= sizeof(deleted) - 1 && streq(buf + n - (sizeof(deleted) - 1), deleted))
                buf[n - (sizeof(deleted) - 1)] = '\0';

        s = strdup(buf);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int procfs_read_cmdline(const char *root, pid_t pid, char **ret) {
        return procfs_read_cmdline_max(root, pid, 0, ret);
}

int procfs_read_cmdline_max(const char *root, pid_t pid, size_t max, char **ret) {
        char path[PATH_MAX], buf[4096], *s, *c;
        _cleanup_free_ char *heap = NULL;
        size_t len;
        int r;

        r = proc_path(path, sizeof(path), root, pid, 0, "cmdline");
        if (r < 0)
                return r;
        if (max > 0 && max < PROCFS_CMDLINE_MAX) {
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                ssize_t n;
                char last;

                if (fd < 0)
                        return gone_errno(errno);
                /* Most command lines are whole in the first read. A longer one is tried at its
                 * max-th byte first (the file reads at any offset, fs/proc/base.c
                 * get_mm_cmdline()): a command line of megabytes costs a page here, not max. */
                do
                        n = read(fd, buf, sizeof(buf) - 1);
                while (n < 0 && errno == EINTR);
                if (n < 0)
                        return gone_errno(errno);
                if ((size_t)n < sizeof(buf) - 1) {
                        s = buf;
                        len = (size_t)n;
                        r = len >= max ? -E2BIG : 0;
                } else {
                        do
                                n = pread(fd, &last, 1, (off_t)max - 1);
                        while (n < 0 && errno == EINTR);
                        if (n < 0)
                                return gone_errno(errno);
                        if (n > 0)
                                return -E2BIG;
                        r = read_file_max(path, buf, sizeof(buf), max + 1, false, &heap, &s, &len);
                        if (r == -EFBIG)
                                return -E2BIG;
                }
                if (r < 0)
                        return r;
        } else {
                r = read_file_max(path, buf, sizeof(buf), PROCFS_CMDLINE_MAX + 1, true, &heap, &s, &len);
                if (r < 0)
                        return r;
        }

        /* Drop the terminating NULs, then join the arguments with single spaces. */
        while (len > 0 && s[len - 1] == '\0')
                len--;
        for (size_t i = 0; i < len; i++)
                if (s[i] == '\0')
                        s[i] = ' ';
        s[len] = '\0';

        if (heap && s == heap) {
                *ret = TAKE_PTR(heap);
                return 0;
        }
        c = strndup(s, len);
        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

/*
 * In the len bytes of a /proc/PID/status text at buf, the value of the first line "NAME:...":
 * from after the colon and its leading blanks to the end of the line (its newline excluded)
 * in *ret and *ret_len. false if no line is that field. A NUL ends the text.
 */
static bool status_field(const char *buf, size_t len, const char *name, const char **ret, size_t *ret_len) {
        size_t l = strlen(name);
        const char *end;

        len = len > 0 ? strnlen(buf, len) : 0;
        end = buf + len;
        for (const char *line = buf; line < end;) {
                const char *nl = memchr(line, '\n', (size_t)(end - line));
                const char *eol = nl ?: end;

                if ((size_t)(eol - line) > l && memcmp(line, name, l) == 0 && line[l] == ':') {
                        const char *v = line + l + 1;

                        while (v < eol && (*v == ' ' || *v == '\t'))
                                v++;
                        *ret = v;
                        *ret_len = (size_t)(eol - v);
                        return true;
                }
                if (!nl)
                        break;
                line = nl + 1;
        }
        return false;
}

/* How many of the first n bytes at s are blanks (blanks true) or are not (blanks false): a
 * strspn(s, " \t") or strcspn(s, " \t") that stops at n. */
static size_t blank_span(const char *s, size_t n, bool blanks) {
        size_t i = 0;

        while (i < n && (s[i] == ' ' || s[i] == '\t') == blanks)
                i++;
        return i;
}

int procfs_parse_status_euid(const char *buf, size_t len, uid_t *ret) {
        const char *v;
        size_t n, k;
        uint64_t uid;

        /* "Uid:\treal\teffective\tsaved\tfs" */
        if (!status_field(buf, len, "Uid", &v, &n))
                return -EBADMSG;
        k = blank_span(v, n, false); /* skip the real uid */
        k += blank_span(v + k, n - k, true);
        if (parse_u64_digits(v + k, blank_span(v + k, n - k, false), &uid) < 0 || uid >= (uid_t)-1)
                return -EBADMSG;
        *ret = (uid_t)uid;
        return 0;
}

/* The four blank-separated ids of field name ("Uid", "Gid") into ret. */
static int parse_four_ids(const char *buf, size_t len, const char *name, uint32_t ret[4]) {
        const char *v;
        size_t n, k = 0;

        if (!status_field(buf, len, name, &v, &n))
                return -EBADMSG;
        for (unsigned i = 0; i < 4; i++) {
                uint64_t id;
                size_t w;

                k += blank_span(v + k, n - k, true);
                w = blank_span(v + k, n - k, false);
                if (parse_u64_digits(v + k, w, &id) < 0 || id >= UINT32_MAX)
                        return -EBADMSG;
                ret[i] = (uint32_t)id;
                k += w;
        }
        return 0;
}

int procfs_parse_status_ids(const char *buf, size_t len, uid_t uids[4], gid_t gids[4]) {
        uint32_t u[4], g[4];
        int r;

        r = parse_four_ids(buf, len, "Uid", u);
        if (r >= 0)
                r = parse_four_ids(buf, len, "Gid", g);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < 4; i++) {
                uids[i] = (uid_t)u[i];
                gids[i] = (gid_t)g[i];
        }
        return 0;
}

int procfs_parse_status_cpus_allowed(const char *buf, size_t len, CpuSet *ret) {
        _cleanup_free_ char *heap = NULL;
        char small[256], *s = small;
        const char *v;
        size_t n;
        int r;

        if (!status_field(buf, len, "Cpus_allowed_list", &v, &n))
                return -EBADMSG;
        /* cpuset_parse_list() takes a string: the value NUL-terminated, on the stack if it fits
         * (an 8192-CPU list of single CPUs is ~40 KiB, 256 bytes hold any usual one). */
        if (n >= sizeof(small)) {
                s = heap = malloc(n + 1);
                if (!heap)
                        return -ENOMEM;
        }
        memcpy(s, v, n);
        s[n] = '\0';
        r = cpuset_parse_list(s, ret, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -EBADMSG;
        return 0;
}

/* Where read_status() puts the one field it is asked for; the others are NULL. */
typedef struct StatusFields {
        uid_t *euid; /* procfs_parse_status_euid() */
        pid_t *tgid; /* procfs_parse_status_tgid() */
        uid_t *uids; /* with gids: procfs_parse_status_ids() */
        gid_t *gids;
        CpuSet *cpus_allowed; /* procfs_parse_status_cpus_allowed() */
} StatusFields;

/* Reads /proc/PID[/task/TID]/status and parses the field f asks for. */
static int read_status(const char *root, pid_t pid, pid_t tid, const StatusFields *f) {
        char buf[4096], *s;
        _cleanup_free_ char *heap = NULL;
        size_t len;
        int r;

        r = read_proc_file(root, pid, tid, "status", buf, sizeof(buf), &heap, &s, &len);
        if (r < 0)
                return r;
        if (f->euid)
                return procfs_parse_status_euid(s, len, f->euid);
        if (f->tgid)
                return procfs_parse_status_tgid(s, len, f->tgid);
        if (f->uids)
                return procfs_parse_status_ids(s, len, f->uids, f->gids);
        return procfs_parse_status_cpus_allowed(s, len, f->cpus_allowed);
}

int procfs_read_euid(const char *root, pid_t pid, uid_t *ret) {
        return read_status(root, pid, 0, &(StatusFields){.euid = ret});
}

int procfs_parse_status_tgid(const char *buf, size_t len, pid_t *ret) {
        const char *v;
        uint64_t tgid;
        size_t n;

        if (!status_field(buf, len, "Tgid", &v, &n))
                return -EBADMSG;
        if (parse_u64_digits(v, blank_span(v, n, false), &tgid) < 0 || tgid == 0 || tgid > INT32_MAX)
                return -EBADMSG;
        *ret = (pid_t)tgid;
        return 0;
}

int procfs_read_tgid(const char *root, pid_t tid, pid_t *ret) {
        return read_status(root, tid, 0, &(StatusFields){.tgid = ret});
}

int procfs_read_ids(const char *root, pid_t pid, uid_t uids[4], gid_t gids[4]) {
        return read_status(root, pid, 0, &(StatusFields){.uids = uids, .gids = gids});
}

int procfs_read_cpus_allowed(const char *root, pid_t pid, pid_t tid, CpuSet *ret) {
        return read_status(root, pid, tid, &(StatusFields){.cpus_allowed = ret});
}

/* true if the comma-separated controller list ctl (ctl_len bytes) holds "name=systemd". */
static bool has_name_systemd(const char *ctl, size_t ctl_len) {
        static const char name[] = "name=systemd";
        const size_t l = sizeof(name) - 1;

        for (size_t i = 0; i < ctl_len;) {
                size_t j = i;
                while (j < ctl_len && ctl[j] != ',')
                        j++;
                if (j - i == l && memcmp(ctl + i, name, l) == 0)
                        return true;
                i = j + 1;
        }
        return false;
}

int procfs_read_cgroup(const char *root, pid_t pid, char **ret) {
        char buf[4096], *s, *c;
        _cleanup_free_ char *heap = NULL;
        const char *v2 = NULL, *systemd = NULL;
        size_t v2_len = 0, systemd_len = 0;
        int r;

        r = read_proc_file(root, pid, 0, "cgroup", buf, sizeof(buf), &heap, &s, NULL);
        if (r < 0)
                return r;

        /* Lines "hierarchy-ID:controller-list:cgroup-path" (cgroups(7)); the path may hold ':'. */
        for (const char *line = s; *line;) {
                const char *nl = strchrnul(line, '\n'), *c1, *c2;

                c1 = memchr(line, ':', (size_t)(nl - line));
                c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;
                if (c2) {
                        const char *p = c2 + 1;
                        size_t pl = (size_t)(nl - p);

                        if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
                                v2 = p;
                                v2_len = pl;
                        } else if (has_name_systemd(c1 + 1, (size_t)(c2 - c1 - 1))) {
                                systemd = p;
                                systemd_len = pl;
                        }
                }
                line = *nl ? nl + 1 : nl;
        }

        /* Hybrid layout: the unified hierarchy may exist but hold everything at "/", with the
         * real placement in the v1 name=systemd hierarchy. */
        if (v2 && !(v2_len == 1 && v2[0] == '/'))
                c = strndup(v2, v2_len);
        else if (systemd)
                c = strndup(systemd, systemd_len);
        else if (v2)
                c = strndup(v2, v2_len);
        else
                return -ENODATA;
        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

/* A valid systemd unit name (unit_name_is_valid(), plain or instance): returns the length of
 * its prefix before ".TYPE", or 0 if s (n bytes) is not a unit name. *ret_slice tells a slice. */
static size_t unit_name_check(const char *s, size_t n, bool *ret_slice) {
        static const char *const types[] = {
                "service", "socket", "target", "device", "mount", "automount",
                "swap",    "timer",  "path",   "slice",  "scope",
        };
        const char *dot = NULL, *at = NULL;

        if (n == 0 || n > 255)
                return 0;
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];
                if (ch == '.')
                        dot = s + i;
                else if (ch == '@') {
                        if (at)
                                return 0;
                        at = s + i;
                } else if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                             (ch >= '0' && ch <= '9') || ch == ':' || ch == '-' || ch == '_' || ch == '\\'))
                        return 0;
        }
        if (!dot || dot == s)
                return 0;
        if (at && (at == s || at > dot || at + 1 == dot))
                return 0;

        size_t tl = n - (size_t)(dot - s) - 1;
        for (size_t i = 0; i < ELEMENTSOF(types); i++)
                if (strlen(types[i]) == tl && memcmp(dot + 1, types[i], tl) == 0) {
                        *ret_slice = streq(types[i], "slice");
                        return (size_t)(dot - s);
                }
        return 0;
}

int procfs_unit_from_cgroup(const char *cgroup_path, char **ret) {
        const char *p = cgroup_path;

        if (!p)
                return -ENXIO;

        for (;;) {
                const char *e;
                size_t n;
                bool slice = false;

                p += strspn(p, "/");
                if (!*p)
                        return -ENXIO;
                e = strchrnul(p, '/');
                n = (size_t)(e - p);

                /* systemd escapes names that would clash with cgroupfs attributes with '_'. */
                const char *name = p;
                if (name[0] == '_') {
                        name++;
                        n--;
                }

                if (unit_name_check(name, n, &slice) == 0)
                        return -ENXIO;
                if (!slice) {
                        char *u = strndup(name, n);
                        if (!u)
                                return -ENOMEM;
                        *ret = u;
                        return 0;
                }
                p = e;
        }
}

/*
 * A growable array of PIDs that starts in caller-provided storage (usually on the stack), so the
 * common case of a few threads allocates nothing.
 */
typedef struct PidArray {
        pid_t *a;
        size_t n, cap;
        pid_t *fixed; /* the initial storage: not to be freed */
} PidArray;

#define PID_ARRAY_INIT(storage) ((PidArray){.a = (storage), .cap = ELEMENTSOF(storage), .fixed = (storage)})

static void pid_array_done(PidArray *v) {
        if (v->a != v->fixed)
                free(v->a);
        v->a = v->fixed;
        v->n = 0;
}

static int pid_array_push(PidArray *v, pid_t pid) {
        if (v->n == v->cap) {
                size_t ncap = v->cap ? v->cap * 2 : 64;
                pid_t *t;

                if (v->a == v->fixed) {
                        t = malloc(ncap * sizeof(pid_t));
                        if (t && v->n > 0)
                                memcpy(t, v->a, v->n * sizeof(pid_t));
                } else
                        t = reallocarray(v->a, ncap, sizeof(pid_t));
                if (!t)
                        return -ENOMEM;
                v->a = t;
                v->cap = ncap;
        }
        v->a[v->n++] = pid;
        return 0;
}

/* The array as a newly allocated one (the caller frees). */
static int pid_array_steal(PidArray *v, pid_t **ret, size_t *ret_n) {
        pid_t *a = v->a;

        if (a == v->fixed) {
                a = malloc(MAX(v->n, (size_t)1) * sizeof(pid_t));
                if (!a)
                        return -ENOMEM;
                if (v->n > 0)
                        memcpy(a, v->fixed, v->n * sizeof(pid_t));
        }
        *ret = a;
        *ret_n = v->n;
        v->a = v->fixed;
        v->n = 0;
        return 0;
}

/* Every numeric entry of the open directory fd, from its current position on, appended to v
 * (not sorted). getdents64(2) into a stack buffer. Returns 0 or -errno. */
static int read_numeric_fd(int fd, PidArray *v) {
        union {
                struct dirent64 de; /* alignment */
                uint8_t bytes[4096];
        } buf;

        for (;;) {
                ssize_t n = getdents64(fd, buf.bytes, sizeof(buf.bytes));

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return 0;
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64 *de = (const struct dirent64 *)(buf.bytes + off);
                        pid_t pid;
                        int r;

                        off += de->d_reclen;
                        if (parse_pid(de->d_name, &pid) < 0)
                                continue;
                        r = pid_array_push(v, pid);
                        if (r < 0)
                                return r;
                }
        }
}

static int open_dir(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int procfs_list_pids(const char *root, pid_t **ret, size_t *ret_n) {
        _cleanup_close_ int fd = -EBADF;
        pid_t storage[1];
        PidArray v = PID_ARRAY_INIT(storage);
        char path[PATH_MAX];
        int n, r;

        n = snprintf(path, sizeof(path), "%s/proc", root_prefix(root));
        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        fd = open_dir(path);
        if (fd < 0)
                return fd;
        r = read_numeric_fd(fd, &v);
        if (r >= 0) {
                if (v.n > 1)
                        qsort(v.a, v.n, sizeof(pid_t), compare_pid);
                r = pid_array_steal(&v, ret, ret_n);
        }
        pid_array_done(&v);
        return r;
}

static int open_task_dir(const char *root, pid_t pid) {
        char path[PATH_MAX];
        int r;

        r = proc_path(path, sizeof(path), root, pid, 0, "task");
        if (r < 0)
                return r;
        r = open_dir(path);
        return r < 0 ? gone_errno(-r) : r;
}

int procfs_list_tids(const char *root, pid_t pid, pid_t **ret, size_t *ret_n) {
        _cleanup_close_ int fd = -EBADF;
        pid_t storage[16];
        PidArray v = PID_ARRAY_INIT(storage);
        int r;

        fd = open_task_dir(root, pid);
        if (fd < 0)
                return fd;
        r = read_numeric_fd(fd, &v);
        if (r < 0)
                r = gone_errno(-r);
        else {
                if (v.n > 1)
                        qsort(v.a, v.n, sizeof(pid_t), compare_pid);
                r = pid_array_steal(&v, ret, ret_n);
        }
        pid_array_done(&v);
        return r;
}

static int foreach_thread(
        const char *root, pid_t pid, bool once, procfs_thread_visitor_t visit, void *userdata) {
        _cleanup_close_ int fd = -EBADF;
        pid_t visited_storage[16], tids_storage[16];
        PidArray visited = PID_ARRAY_INIT(visited_storage), tids = PID_ARRAY_INIT(tids_storage);
        int count = 0, r;

        fd = open_task_dir(root, pid);
        if (fd < 0)
                return fd;

        for (bool first = true;; first = false) {
                size_t n_new = 0;

                if (!first && lseek(fd, 0, SEEK_SET) < 0) {
                        r = gone_errno(errno);
                        goto finish;
                }
                tids.n = 0;
                r = read_numeric_fd(fd, &tids);
                if (r < 0) {
                        r = gone_errno(-r);
                        goto finish;
                }
                if (tids.n == 0) {
                        r = -ESRCH; /* no thread left: the process is gone */
                        goto finish;
                }
                if (tids.n > 1)
                        qsort(tids.a, tids.n, sizeof(pid_t), compare_pid);

                /* Keep only the TIDs not seen in an earlier pass (compacting in place). */
                for (size_t i = 0; i < tids.n; i++)
                        if (visited.n == 0 ||
                            !bsearch(&tids.a[i], visited.a, visited.n, sizeof(pid_t), compare_pid))
                                tids.a[n_new++] = tids.a[i];
                if (n_new == 0)
                        break;

                /* Record them before calling out, so the sets stay right whatever the visitor does:
                 * append, then merge the two ascending runs from the back. */
                {
                        size_t n_old = visited.n;

                        for (size_t j = 0; j < n_new; j++) {
                                r = pid_array_push(&visited, 0);
                                if (r < 0)
                                        goto finish;
                        }
                        for (size_t i = n_old, j = n_new, k = n_old + n_new; j > 0;) {
                                if (i > 0 && visited.a[i - 1] > tids.a[j - 1])
                                        visited.a[--k] = visited.a[--i];
                                else
                                        visited.a[--k] = tids.a[--j];
                        }
                }

                for (size_t i = 0; i < n_new; i++) {
                        r = visit(pid, tids.a[i], userdata);
                        if (r == -ESRCH)
                                continue;
                        if (r < 0)
                                goto finish;
                        if (count < INT_MAX)
                                count++;
                }
                if (once)
                        break;
        }
        r = count;

finish:
        pid_array_done(&tids);
        pid_array_done(&visited);
        return r;
}

int procfs_foreach_thread(const char *root, pid_t pid, procfs_thread_visitor_t visit, void *userdata) {
        return foreach_thread(root, pid, false, visit, userdata);
}

int procfs_foreach_thread_once(const char *root, pid_t pid, procfs_thread_visitor_t visit, void *userdata) {
        return foreach_thread(root, pid, true, visit, userdata);
}

int procfs_hidepid(const char *root, gid_t *ret_gid, bool *ret_has_gid) {
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX];
        int hidepid = 0;

        *ret_has_gid = false;
        if (snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root_prefix(root)) >= (int)sizeof(path) ||
            read_full_file(path, 4 * 1024 * 1024, 0, &text, NULL) < 0)
                return 0;
        for (char *line = text, *next; line && *line; line = next) {
                char *sep, *opt, *save = NULL;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                /* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE SUPEROPTS" */
                if (!strstr(line, " /proc ") || !(sep = strstr(line, " - proc ")))
                        continue;
                sep = strchr(sep + strlen(" - proc "), ' ');
                if (!sep)
                        continue;
                hidepid = 0;
                *ret_has_gid = false;
                for (opt = strtok_r(sep + 1, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
                        if (startswith(opt, "hidepid=")) {
                                const char *v = opt + strlen("hidepid=");

                                hidepid = streq(v, "noaccess") || streq(v, "1")   ? 1
                                        : streq(v, "invisible") || streq(v, "2")  ? 2
                                        : streq(v, "ptraceable") || streq(v, "4") ? 4
                                                                                  : 0;
                        } else if (startswith(opt, "gid=")) {
                                *ret_gid = (gid_t)strtoul(opt + strlen("gid="), NULL, 10);
                                *ret_has_gid = true;
                        }
                }
        }
        return hidepid;
}

bool procfs_stat_is_dead(const ProcfsStat *st) {
        if (st->state != 'Z' && st->state != 'X' && st->state != 'x')
                return false;
        return st->n_threads <= 1;
}

bool procfs_started_before(uint64_t starttime, uint64_t event_ns) {
        static uint64_t tick_ns;
        struct timespec boot, mono;
        uint64_t offset;

        if (event_ns == 0)
                return true;
        if (tick_ns == 0) {
                long hz = sysconf(_SC_CLK_TCK);
                tick_ns = UINT64_C(1000000000) / (uint64_t)(hz > 0 ? hz : 100);
        }
        if (clock_gettime(CLOCK_BOOTTIME, &boot) < 0 || clock_gettime(CLOCK_MONOTONIC, &mono) < 0)
                return true;
        offset = (uint64_t)boot.tv_sec * UINT64_C(1000000000) + (uint64_t)boot.tv_nsec -
                ((uint64_t)mono.tv_sec * UINT64_C(1000000000) + (uint64_t)mono.tv_nsec);
        return starttime * tick_ns <= event_ns + offset;
}

bool procfs_is_service_manager_child(const char *root, pid_t pid, const ProcfsStat *st) {
        _cleanup_free_ char *exe = NULL, *parent_exe = NULL;
        char parent[16] = "";
        const char *base;
        ProcfsStat again;
        uint64_t now;

        if (st->comm[0] != '(' || st->ppid <= 0)
                return false;
        if (st->ppid != 1 && (procfs_read_comm(root, st->ppid, 0, parent) < 0 || !streq(parent, "systemd")))
                return false;
        /* Not exec'd yet: it still runs its parent's program (or systemd 255's executor). A
         * process that calls itself "(…" and was reparented to PID 1 runs its own. */
        if (procfs_read_exe(root, pid, &exe) < 0 || procfs_read_exe(root, st->ppid, &parent_exe) < 0)
                return false;
        base = strrchr(exe, '/');
        if (streq(exe, parent_exe) || streq(base ? base + 1 : exe, "systemd-executor"))
                return true;
        /* Another program: a daemon calling itself "(…", or the child is exec'ing (execve(2)
         * replaces the program before the comm): then its EXEC event follows this one. A child
         * is seconds old at most; such a daemon is older. */
        if (procfs_read_stat(root, pid, 0, &again) >= 0 && again.comm[0] != '(')
                return true;
        now = now_monotonic_nsec();
        return now <= PROCFS_SERVICE_CHILD_AGE_MAX_NSEC ||
                !procfs_started_before(st->starttime, now - PROCFS_SERVICE_CHILD_AGE_MAX_NSEC);
}
