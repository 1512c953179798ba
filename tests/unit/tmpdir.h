/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A test's scratch directory under /tmp, directories in it, and its removal. For check tests:
 * failures abort. */

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A new directory /tmp/PREFIX-XXXXXX (mkdtemp(3)), newly allocated. */
static inline char *make_tmpdir_named(const char *prefix) {
        char *d = NULL;

        ck_assert_int_ge(asprintf(&d, "/tmp/%s-XXXXXX", prefix), 0);
        ck_assert_ptr_nonnull(mkdtemp(d));
        return d;
}

/* Removes dir and everything in it. */
static inline void rm_rf(const char *dir) {
        char cmd[512];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

/* mkdir -p path (0755). */
static inline void mkdir_p(const char *path) {
        char buf[PATH_MAX];

        ck_assert_uint_lt(strlen(path), sizeof(buf));
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
                        *p = '/';
                }
        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
}
