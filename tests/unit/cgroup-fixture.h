/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Helpers for unit tests that create real cgroup v1 directories: finding a controller's
 * hierarchy and reading and writing its files. Written independently of lib/cgroup.c, so
 * the tests of that module don't set themselves up with the code under test.
 */

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

/* The mount point of the v1 hierarchy holding controller, from /proc/self/mountinfo, or NULL. */
static inline char *v1_mount(const char *controller) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;

        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return NULL;
        while (getline(&line, &cap, f) > 0) {
                char mnt[PATH_MAX], fstype[64], src[64], opts[1024];
                const char *sep = strstr(line, " - ");

                if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
                    sscanf(sep + 3, "%63s %63s %1023s", fstype, src, opts) != 3 || !streq(fstype, "cgroup"))
                        continue;
                for (char *save = NULL, *t = strtok_r(opts, ",", &save); t; t = strtok_r(NULL, ",", &save))
                        if (streq(t, controller))
                                return strdup(mnt);
        }
        return NULL;
}

/* Writes s to dir/file; fails the test if that doesn't work. */
static inline void write_str(const char *dir, const char *file, const char *s) {
        char path[PATH_MAX * 2];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "%s: %m", path);
        ck_assert_msg(write(fd, s, strlen(s)) == (ssize_t)strlen(s), "%s <- %s: %m", path, s);
        close(fd);
}

/* The first line of dir/file, newline dropped, into buf ("" when empty). */
static inline void read_str(const char *dir, const char *file, char *buf, size_t size) {
        char path[PATH_MAX * 2];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        f = fopen(path, "re");
        ck_assert_msg(f != NULL, "%s: %m", path);
        if (!fgets(buf, (int)size, f))
                buf[0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        fclose(f);
}

/* dir/file as a number. */
static inline long read_long(const char *dir, const char *file) {
        char buf[64];

        read_str(dir, file, buf, sizeof(buf));
        return strtol(buf, NULL, 10);
}
