/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Control-group facts about a task (cgroup.h): its cpuset's CPUs on the unified or the v1
 * hierarchy, and its v1 cpu cgroup's real-time runtime. Read-only; never writes to cgroupfs.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "macro.h"
#include "util.h"

/* cgroup files are small; /proc/PID/cgroup has one line per hierarchy. */
#define CGROUP_FILE_MAX (1024U * 1024U)

/* Reads the whole file into a newly allocated NUL-terminated string. Returns 0 or -errno. */
static int read_text(const char *path, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 4096, n = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k;

                if (n + 1 >= size) {
                        char *t;

                        if (size >= CGROUP_FILE_MAX)
                                return -EFBIG;
                        t = realloc(buf, size * 2);
                        if (!t)
                                return -ENOMEM;
                        buf = t;
                        size *= 2;
                }
                k = read(fd, buf + n, size - n - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Reads ROOT/proc/PID[/task/TID]/cgroup; a task that went away is -ESRCH. */
static int read_proc_cgroup(const char *root, pid_t pid, pid_t tid, char **ret) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (pid <= 0 || tid < 0)
                return -EINVAL;
        if (tid > 0)
                path = strprintf("%s/proc/%d/task/%d/cgroup", root_prefix(root), (int)pid, (int)tid);
        else
                path = strprintf("%s/proc/%d/cgroup", root_prefix(root), (int)pid);
        if (!path)
                return -ENOMEM;
        r = read_text(path, ret);
        if (r == -ENOENT || r == -ESRCH)
                return -ESRCH;
        return r;
}

/* true if the comma-separated list s (n bytes) holds the element name. */
static bool list_has(const char *s, size_t n, const char *name, char sep) {
        size_t l = strlen(name);

        for (const char *p = s, *end = s + n; p < end;) {
                const char *q = memchr(p, sep, (size_t)(end - p));
                size_t k = q ? (size_t)(q - p) : (size_t)(end - p);

                if (k == l && memcmp(p, name, l) == 0)
                        return true;
                p += k + 1;
        }
        return false;
}

/* A line of /proc/PID/cgroup: "hierarchy-ID:controller-list:cgroup-path" (cgroups(7)). */
typedef struct CgroupLine {
        const char *controllers;
        size_t controllers_len;
        const char *path;
        size_t path_len;
} CgroupLine;

/*
 * Finds the v2 line ("0::path") when controller is NULL, else the first v1 line whose controller
 * list holds controller. Returns 1 and fills *ret when found, 0 when not, -EBADMSG when the
 * line found has a path that is not absolute, -EXDEV when it is outside the reader's cgroup
 * namespace (it starts with "/..") or no path can be looked up (cgroup_set_unresolvable()).
 */
/* cgroup_set_unresolvable(): no path of /proc/PID/cgroup is looked up under /sys/fs/cgroup. */
static bool unresolvable;

void cgroup_set_unresolvable(bool b) {
        unresolvable = b;
}

static int find_line(const char *text, const char *controller, CgroupLine *ret) {
        for (const char *line = text; *line;) {
                const char *nl = strchrnul(line, '\n'), *c1, *c2;

                c1 = memchr(line, ':', (size_t)(nl - line));
                c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;
                if (c2) {
                        CgroupLine l = {
                                .controllers = c1 + 1,
                                .controllers_len = (size_t)(c2 - c1 - 1),
                                .path = c2 + 1,
                                .path_len = (size_t)(nl - c2 - 1),
                        };
                        bool v2 = c1 - line == 1 && line[0] == '0' && l.controllers_len == 0;
                        bool hit = controller
                                ? !v2 && list_has(l.controllers, l.controllers_len, controller, ',')
                                : v2;

                        if (hit) {
                                if (l.path_len == 0 || l.path[0] != '/')
                                        return -EBADMSG;
                                if (unresolvable)
                                        return -EXDEV;
                                /* Outside the reader's cgroup namespace: "/.." components lead out
                                 * of what the hierarchy's mount shows, never to this cgroup. */
                                if (l.path_len >= 3 && memcmp(l.path, "/..", 3) == 0 &&
                                    (l.path_len == 3 || l.path[3] == '/'))
                                        return -EXDEV;
                                *ret = l;
                                return 1;
                        }
                }
                line = *nl ? nl + 1 : nl;
        }
        return 0;
}

static bool is_dir(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The directory of the cgroup path p (n bytes, absolute) below hierarchy directory h. */
static int join_cgroup_dir(const char *h, const char *p, size_t n, char **ret) {
        /* "/" is the hierarchy's root itself: no trailing slash, so callers append "/file". */
        if (n == 1)
                n = 0;
        char *d = strprintf("%s%.*s", h, (int)n, p);

        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

/* The mount directory of the v1 hierarchy with the given controller list (see cgroup.h). */
static int v1_hierarchy_dir(const char *root, const CgroupLine *l, const char *controller, char **ret) {
        const char *name = controller;
        _cleanup_free_ char *d = NULL;

        if (!(d = strprintf(
                      "%s/sys/fs/cgroup/%.*s", root_prefix(root), (int)l->controllers_len, l->controllers)))
                return -ENOMEM;
        if (is_dir(d)) {
                *ret = TAKE_PTR(d);
                return 0;
        }
        d = mfree(d);

        /* "name=systemd" is mounted at .../systemd. */
        if (strncmp(name, "name=", 5) == 0)
                name += 5;
        if (!(d = strprintf("%s/sys/fs/cgroup/%s", root_prefix(root), name)))
                return -ENOMEM;
        if (is_dir(d)) {
                *ret = TAKE_PTR(d);
                return 0;
        }
        return -ENODATA;
}

int cgroup_find_v1(
        const char *root, pid_t pid, pid_t tid, const char *controller, char **ret_dir, char **ret_path) {
        _cleanup_free_ char *text = NULL, *h = NULL, *dir = NULL, *p = NULL;
        CgroupLine l;
        int r;

        if (!controller || !*controller || !ret_dir)
                return -EINVAL;
        r = read_proc_cgroup(root, pid, tid, &text);
        if (r < 0)
                return r;
        r = find_line(text, controller, &l);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENODATA;

        r = v1_hierarchy_dir(root, &l, controller, &h);
        if (r < 0)
                return r;
        r = join_cgroup_dir(h, l.path, l.path_len, &dir);
        if (r < 0)
                return r;
        if (ret_path) {
                p = strndup(l.path, l.path_len);
                if (!p)
                        return -ENOMEM;
                *ret_path = TAKE_PTR(p);
        }
        *ret_dir = TAKE_PTR(dir);
        return 0;
}

/*
 * The cgroup2 mount: ROOT/sys/fs/cgroup on a unified layout, ROOT/sys/fs/cgroup/unified on a
 * hybrid one. *ret_cpuset tells whether the cpuset controller is attached to it.
 * Returns 0, -ENOENT (no cgroup2 mount), -ENOMEM, -errno.
 */
static int v2_root(const char *root, char **ret_dir, bool *ret_cpuset) {
        static const char *const where[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};

        for (size_t i = 0; i < ELEMENTSOF(where); i++) {
                _cleanup_free_ char *d = NULL, *f = NULL, *text = NULL;
                int r;

                if (!(d = strprintf("%s%s", root_prefix(root), where[i])))
                        return -ENOMEM;
                if (!(f = strprintf("%s/cgroup.controllers", d)))
                        return -ENOMEM;
                r = read_text(f, &text);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                text[strcspn(text, "\n")] = '\0';
                *ret_cpuset = list_has(text, strlen(text), "cpuset", ' ');
                *ret_dir = TAKE_PTR(d);
                return 0;
        }
        return -ENOENT;
}

/* Parses a cpu-list file's contents (trailing newline allowed). */
static int parse_cpus(char *text, CpuSet *ret) {
        text[strcspn(text, "\n")] = '\0';
        return cpuset_parse_list(text, ret, NULL) < 0 ? -EBADMSG : 0;
}

/* The length of the parent of cgroup path p (n bytes, absolute, n > 1): "/a/b" -> "/a", "/a" -> "/". */
static size_t parent_len(const char *p, size_t n) {
        while (n > 1 && p[n - 1] != '/')
                n--;
        return n > 1 ? n - 1 : n; /* drop the '/' too, unless it is the root's */
}

/* cpuset.cpus.effective of the v2 cgroup path p or of its nearest ancestor having the file. */
static int read_v2_cpuset(const char *v2dir, const CgroupLine *l, CpuSet *ret) {
        size_t n = l->path_len;

        for (;;) {
                _cleanup_free_ char *dir = NULL, *f = NULL, *text = NULL;
                int r;

                r = join_cgroup_dir(v2dir, l->path, n, &dir);
                if (r < 0)
                        return r;
                if (!(f = strprintf("%s/cpuset.cpus.effective", dir)))
                        return -ENOMEM;
                r = read_text(f, &text);
                if (r >= 0)
                        return parse_cpus(text, ret);
                if (r != -ENOENT)
                        return r;
                /* Without the controller enabled here the cgroup is bound by its parent; a
                 * missing directory means the cgroup itself is gone. */
                if (n <= 1 || !is_dir(dir))
                        return -ENOENT;
                n = parent_len(l->path, n);
        }
}

static int read_v1_cpuset(const char *dir, CpuSet *ret) {
        static const char *const files[] = {"cpuset.effective_cpus", "cpuset.cpus"};

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *f = NULL, *text = NULL;
                int r;

                if (!(f = strprintf("%s/%s", dir, files[i])))
                        return -ENOMEM;
                r = read_text(f, &text);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                return parse_cpus(text, ret);
        }
        return -ENOENT;
}

/*
 * Where the cpuset of a task whose /proc/PID/cgroup says text is: on the unified hierarchy if it
 * has the cpuset controller (and the task a "0::" line), else on the v1 cpuset hierarchy.
 * *ret_dir: that hierarchy's mount directory (newly allocated), *ret_v2 which one, *ret_line
 * the task's line (pointing into text). Returns 0, -ENODATA (in no cpuset hierarchy),
 * -EBADMSG, -ENOMEM, -errno.
 */
static int cpuset_hierarchy(
        const char *root, const char *text, char **ret_dir, bool *ret_v2, CgroupLine *ret_line) {
        _cleanup_free_ char *h = NULL;
        bool v2_cpuset = false;
        int r;

        r = v2_root(root, &h, &v2_cpuset);
        if (r < 0 && r != -ENOENT)
                return r;
        r = v2_cpuset ? find_line(text, NULL, ret_line) : 0;
        if (r < 0)
                return r;
        if (r == 0) {
                h = mfree(h);
                v2_cpuset = false;
                r = find_line(text, "cpuset", ret_line);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -ENODATA;
                r = v1_hierarchy_dir(root, ret_line, "cpuset", &h);
                if (r < 0)
                        return r;
        }
        *ret_dir = TAKE_PTR(h);
        *ret_v2 = v2_cpuset;
        return 0;
}

int cgroup_read_cpuset(const char *root, pid_t pid, pid_t tid, CpuSet *ret_allowed, char **ret_path) {
        _cleanup_free_ char *text = NULL, *h = NULL, *dir = NULL, *p = NULL;
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        bool v2_cpuset = false;
        CgroupLine l;
        int r;

        if (!ret_allowed)
                return -EINVAL;
        r = read_proc_cgroup(root, pid, tid, &text);
        if (r < 0)
                return r;

        r = cpuset_hierarchy(root, text, &h, &v2_cpuset, &l);
        if (r < 0)
                return r;
        if (v2_cpuset)
                r = read_v2_cpuset(h, &l, &s);
        else {
                r = join_cgroup_dir(h, l.path, l.path_len, &dir);
                if (r < 0)
                        return r;
                r = read_v1_cpuset(dir, &s);
        }
        if (r < 0)
                return r;

        if (ret_path) {
                p = strndup(l.path, l.path_len);
                if (!p)
                        return -ENOMEM;
                *ret_path = TAKE_PTR(p);
        }
        cpuset_done(ret_allowed);
        *ret_allowed = s;
        s = CPUSET_NULL;
        return 0;
}

int cgroup_read_membership(const char *root, pid_t pid, char **ret) {
        if (!ret)
                return -EINVAL;
        return read_proc_cgroup(root, pid, 0, ret);
}

int cgroup_cpuset_dirs(const char *root, const char *text, char ***ret_dirs) {
        _cleanup_free_ char *h = NULL;
        _cleanup_strv_free_ char **dirs = NULL;
        bool v2_cpuset = false;
        size_t n_dirs = 0;
        CgroupLine l;
        int r;

        if (!text || !ret_dirs)
                return -EINVAL;
        r = cpuset_hierarchy(root, text, &h, &v2_cpuset, &l);
        if (r < 0)
                return r;

        /* The cgroup itself, then each ancestor up to the hierarchy's root ("/"). */
        for (size_t n = l.path_len;;) {
                char **a = reallocarray(dirs, n_dirs + 2, sizeof(char *));

                if (!a)
                        return -ENOMEM;
                dirs = a;
                dirs[n_dirs + 1] = NULL;
                r = join_cgroup_dir(h, l.path, n, &dirs[n_dirs]);
                if (r < 0)
                        return r;
                n_dirs++;
                if (n <= 1)
                        break;
                n = parent_len(l.path, n);
        }
        *ret_dirs = TAKE_PTR(dirs);
        return 0;
}

int cgroup_read_rt_runtime(
        const char *root, pid_t pid, pid_t tid, int64_t *ret_runtime_us, char **ret_path) {
        _cleanup_free_ char *dir = NULL, *path = NULL, *f = NULL, *text = NULL;
        long long v;
        char *end;
        int r;

        if (!ret_runtime_us)
                return -EINVAL;
        r = cgroup_find_v1(root, pid, tid, "cpu", &dir, &path);
        if (r < 0)
                return r;
        if (!(f = strprintf("%s/cpu.rt_runtime_us", dir)))
                return -ENOMEM;
        r = read_text(f, &text);
        if (r < 0)
                return r;

        errno = 0;
        v = strtoll(text, &end, 10);
        if (errno != 0 || end == text || (*end != '\0' && *end != '\n') || v < -1)
                return -EBADMSG;

        if (ret_path)
                *ret_path = TAKE_PTR(path);
        *ret_runtime_us = (int64_t)v;
        return 0;
}

int cgroup_format_cpuset_conflict(
        const char *policy, const CpuSet *wanted, pid_t pid, const CpuSet *allowed, char **ret) {
        _cleanup_free_ char *w = NULL, *a = NULL;
        char *m;
        int r;

        if (!policy || !wanted || !allowed || !ret)
                return -EINVAL;
        r = cpuset_format_list(wanted, &w);
        if (r < 0)
                return r;
        r = cpuset_format_list(allowed, &a);
        if (r < 0)
                return r;
        m = strprintf(
                "policy %s wants %s, PID %d's cgroup allows %s", policy, *w ? w : "no CPU", (int)pid,
                *a ? a : "no CPU");
        if (!m)
                return -ENOMEM;
        *ret = m;
        return 0;
}
