/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole-file reads (see fileio.h).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

/* The first buffer when st_size gives no hint: one page, what a sysfs file holds at most. */
#define READ_FULL_FIRST 4096U

static bool stat_changed(const struct stat *a, const struct stat *b) {
        return a->st_size != b->st_size || a->st_mtim.tv_sec != b->st_mtim.tv_sec ||
                a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

int read_full_file(const char *path, size_t max_size, ReadFullFlags flags, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st = {}, st_after;
        size_t size = 0, alloc = READ_FULL_FIRST, limit;
        bool regular = flags & READ_FULL_REGULAR, too_big = false;

        if (!path || !ret)
                return -EINVAL;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (regular ? O_NONBLOCK : 0));
        if (fd < 0)
                return -errno;

        if (regular) {
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode))
                        return -EISDIR;
                if (!S_ISREG(st.st_mode))
                        return -EBADFD;
                if ((uintmax_t)st.st_size > (uintmax_t)max_size)
                        return -EFBIG;
                /* Room for the expected size, one byte more to see EOF, and the NUL. */
                if ((uintmax_t)st.st_size < (uintmax_t)SIZE_MAX - 2)
                        alloc = MAX(alloc, (size_t)st.st_size + 2);
        }

        /* Never more than max_size + 1 bytes of content (one beyond the limit proves the file
         * too large) and the NUL. */
        limit = max_size < SIZE_MAX - 2 ? max_size + 2 : SIZE_MAX;
        alloc = MIN(alloc, limit);
        buf = malloc(alloc);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t n;

                if (size + 1 >= alloc) {
                        size_t grown;
                        char *b;

                        if (alloc >= limit) {
                                too_big = true;
                                break;
                        }
                        grown = alloc > limit / 2 ? limit : alloc * 2;
                        b = realloc(buf, grown);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        alloc = grown;
                }
                n = read(fd, buf + size, alloc - 1 - size);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                size += (size_t)n;
                if (size > max_size) {
                        too_big = true;
                        break;
                }
        }

        if (regular) {
                if (fstat(fd, &st_after) < 0)
                        return -errno;
                if (stat_changed(&st, &st_after))
                        return -ESTALE;
        }
        if (too_big)
                return -EFBIG;
        if ((flags & READ_FULL_NO_NUL) && memchr(buf, '\0', size))
                return -EBADMSG;

        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}
