/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of read_full_file() (lib/fileio.c): regular files of sizes around every buffer
 * boundary compared byte for byte with what was written, size limits, NUL bytes, the
 * regular-file mode (directories, FIFOs, character devices), missing files, and a procfs
 * seq_file far larger than the first buffer (/proc/kallsyms, which says st_size 0).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

static char *dir; /* temp dir of the current test */

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)st;
        (void)type;
        (void)ftw;
        return remove(path);
}

static void setup(void) {
        char tmpl[] = "/tmp/test-fileio-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        dir = strdup(tmpl);
        ck_assert_ptr_nonnull(dir);
}

static void teardown(void) {
        if (dir)
                nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        dir = mfree(dir);
}

/* DIR/name, in a static buffer. */
static const char *at(const char *name) {
        static char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return path;
}

/* Writes n bytes of data to DIR/name. */
static void put(const char *name, const char *data, size_t n) {
        int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
        ck_assert_int_eq(close(fd), 0);
}

/* n bytes of printable text that differ from position to position (a misplaced chunk shows). */
static char *pattern(size_t n) {
        char *p = malloc(n + 1);

        ck_assert_ptr_nonnull(p);
        for (size_t i = 0; i < n; i++)
                p[i] = (char)('!' + (i * 7 + i / 91) % 94);
        p[n] = '\0';
        return p;
}

/* read_full_file() fails with error and leaves the outputs alone. */
static void assert_fails(const char *path, size_t max, ReadFullFlags flags, int error) {
        char *text = (char *)"untouched";
        size_t size = 4242;
        int r = read_full_file(path, max, flags, &text, &size);

        ck_assert_msg(r == error, "%s: %d, expected %d", path, r, error);
        ck_assert_str_eq(text, "untouched");
        ck_assert_uint_eq(size, 4242);
}

START_TEST(test_sizes) {
        /* around the first buffer (4096), its doublings, and the +1 for the NUL */
        static const size_t sizes[] = {0,    1,    2,    4094, 4095,   4096,   4097,
                                       8190, 8191, 8192, 8193, 100000, 1048577};

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                _cleanup_free_ char *want = pattern(sizes[i]), *text = NULL, *text2 = NULL;
                size_t size = 4242;

                put("f", want, sizes[i]);
                for (unsigned flags = 0; flags < 4; flags++) {
                        text = mfree(text);
                        ck_assert_int_eq(
                                read_full_file(at("f"), READ_FULL_NO_LIMIT, flags, &text, &size), 0);
                        ck_assert_uint_eq(size, sizes[i]);
                        ck_assert_msg(memcmp(text, want, sizes[i] + 1) == 0, "size %zu differs", sizes[i]);
                }

                /* exactly at the limit: read; one byte over: -EFBIG, in either mode */
                ck_assert_int_eq(read_full_file(at("f"), sizes[i], 0, &text2, NULL), 0);
                ck_assert_str_eq(text2, want);
                if (sizes[i] > 0) {
                        assert_fails(at("f"), sizes[i] - 1, 0, -EFBIG);
                        assert_fails(at("f"), sizes[i] - 1, READ_FULL_REGULAR, -EFBIG);
                        assert_fails(at("f"), sizes[i] - 1, READ_FULL_NO_NUL, -EFBIG);
                }
        }
}
END_TEST

START_TEST(test_nul) {
        static const char data[] = "ab\0cd\n";
        _cleanup_free_ char *text = NULL;
        size_t size = 0;

        put("nul", data, sizeof(data) - 1);
        assert_fails(at("nul"), READ_FULL_NO_LIMIT, READ_FULL_NO_NUL, -EBADMSG);
        assert_fails(at("nul"), READ_FULL_NO_LIMIT, READ_FULL_NO_NUL | READ_FULL_REGULAR, -EBADMSG);

        /* without the flag the bytes come through whole, the size counting them all */
        ck_assert_int_eq(read_full_file(at("nul"), READ_FULL_NO_LIMIT, 0, &text, &size), 0);
        ck_assert_uint_eq(size, 6);
        ck_assert(memcmp(text, data, sizeof(data)) == 0);
        ck_assert_str_eq(text, "ab");

        /* a NUL beyond the limit is still -EFBIG: the size is the first thing wrong */
        assert_fails(at("nul"), 3, READ_FULL_NO_NUL, -EFBIG);
}
END_TEST

START_TEST(test_not_regular) {
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(mkdir(at("d"), 0755), 0);
        ck_assert_int_eq(mkfifo(at("fifo"), 0644), 0);

        assert_fails(at("missing"), READ_FULL_NO_LIMIT, 0, -ENOENT);
        assert_fails(at("missing"), READ_FULL_NO_LIMIT, READ_FULL_REGULAR, -ENOENT);
        assert_fails(at("d"), READ_FULL_NO_LIMIT, READ_FULL_REGULAR, -EISDIR);
        assert_fails(at("d"), READ_FULL_NO_LIMIT, 0, -EISDIR); /* read(2) says so */
        /* not opened for blocking: no writer would ever come */
        assert_fails(at("fifo"), READ_FULL_NO_LIMIT, READ_FULL_REGULAR, -EBADFD);
        assert_fails("/dev/null", READ_FULL_NO_LIMIT, READ_FULL_REGULAR, -EBADFD);

        /* the same character device without the flag: an empty file */
        ck_assert_int_eq(read_full_file("/dev/null", 16, 0, &text, NULL), 0);
        ck_assert_str_eq(text, "");

        /* a regular file whose st_size is beyond the limit is refused before reading */
        put("big", "", 0);
        ck_assert_int_eq(truncate(at("big"), 1 << 20), 0);
        assert_fails(at("big"), (1 << 20) - 1, READ_FULL_REGULAR, -EFBIG);

        ck_assert_int_eq(read_full_file(NULL, 1, 0, &text, NULL), -EINVAL);
        ck_assert_int_eq(read_full_file(at("big"), 1, 0, NULL, NULL), -EINVAL);
}
END_TEST

/* A procfs seq_file says st_size 0 and comes in page-sized reads: all of it must be read. */
START_TEST(test_procfs) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0, lines = 0;
        struct stat st;

        ck_assert_int_eq(stat("/proc/kallsyms", &st), 0);
        ck_assert_int_eq(st.st_size, 0);
        ck_assert_int_eq(
                read_full_file("/proc/kallsyms", READ_FULL_NO_LIMIT, READ_FULL_NO_NUL, &text, &size), 0);
        ck_assert_uint_gt(size, 256 * 1024);
        ck_assert_uint_eq(strlen(text), size);
        ck_assert_int_eq(text[size - 1], '\n');
        /* every line is "ADDRESS TYPE NAME[ [MODULE]]": no chunk lost or repeated mid-line */
        for (char *p = text, *nl; *p; p = nl + 1) {
                char addr[32], type[8], name[512];

                nl = strchr(p, '\n');
                ck_assert_ptr_nonnull(nl);
                *nl = '\0';
                ck_assert_msg(sscanf(p, "%31s %7s %511s", addr, type, name) == 3, "line %zu: %s", lines, p);
                ck_assert_uint_eq(strspn(addr, "0123456789abcdef"), strlen(addr));
                lines++;
        }
        ck_assert_uint_gt(lines, 1000);

        assert_fails("/proc/kallsyms", 10000, 0, -EFBIG);
}
END_TEST

int main(void) {
        Suite *s = suite_create("fileio");
        TCase *tc = tcase_create("read_full_file");
        SRunner *sr;
        int failed;

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_sizes);
        tcase_add_test(tc, test_nul);
        tcase_add_test(tc, test_not_regular);
        tcase_add_test(tc, test_procfs);
        suite_add_tcase(s, tc);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
