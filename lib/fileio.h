/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reading a whole file into memory: the one read-until-EOF loop that the readers of /proc,
 * /sys, state files and policy files share. Nothing here logs: errors are returned.
 */

#include <stddef.h>
#include <stdint.h>

/* No size limit for read_full_file() (beyond what memory allows). */
#define READ_FULL_NO_LIMIT SIZE_MAX

typedef enum ReadFullFlags {
        /*
         * The file must be a regular file, read as a consistent whole: opened with O_NONBLOCK
         * (a FIFO does not block the open), fstat(2)ed first (a directory is -EISDIR, anything
         * else that is not a regular file -EBADFD, an st_size beyond max_size -EFBIG at once;
         * st_size only sizes the first buffer: the file is still read until EOF) and again at
         * EOF: a size or mtime that changed meanwhile (someone is writing it) is -ESTALE.
         * Without this flag nothing is fstat(2)ed, as procfs and sysfs files report a size of
         * 0 or 4096 whatever they hold.
         */
        READ_FULL_REGULAR = 1U << 0,
        /* A NUL byte in the content is -EBADMSG (text that C strings would silently cut). */
        READ_FULL_NO_NUL = 1U << 1,
} ReadFullFlags;

/*
 * Reads the whole file at path with read(2) until EOF (EINTR retried), into a newly allocated
 * buffer, NUL-terminated, into *ret (an empty file gives ""); its length in bytes, excluding
 * the NUL, into *ret_size (may be NULL). max_size is the largest content in bytes accepted
 * (READ_FULL_NO_LIMIT for none): a file that holds more is -EFBIG, found by reading one byte
 * beyond max_size, never by trusting st_size.
 * Returns 0; -errno of open(2), fstat(2) or read(2) (-ENOENT, -EACCES, -EISDIR for a directory
 * read without READ_FULL_REGULAR, ...); -EFBIG; -EISDIR, -EBADFD, -ESTALE (READ_FULL_REGULAR);
 * -EBADMSG (READ_FULL_NO_NUL); -ENOMEM; -EINVAL for a NULL path or ret.
 */
int read_full_file(const char *path, size_t max_size, ReadFullFlags flags, char **ret, size_t *ret_size);
