/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Small helpers that several modules of lib/ and daemon/ need in exactly the same form: root
 * directory prefixes, strict decimal and hex digits, qsort(3)/bsearch(3)/tsearch(3) comparators,
 * the monotonic clock. Nothing here allocates or logs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* "" for s NULL, else s: for printing optional strings. */
static inline const char *strempty(const char *s) {
        return s ?: "";
}

/* Whether s begins with prefix (both not NULL). */
static inline bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Every element of a tsearch(3) tree of n elements (at most n are taken), in ascending order,
 * into a newly allocated array *ret of *ret_n pointers (never NULL, also for an empty tree).
 * Returns 0 or -ENOMEM.
 */
int tree_collect(const void *root, size_t n, void ***ret, size_t *ret_n);

/* The prefix a root directory gives to absolute paths ("/proc/…"): "" for NULL or "/", else
 * root itself. */
const char *root_prefix(const char *root);

/* The n bytes at s as a decimal number, digits only (no sign, no blank). Returns 0, or
 * -EBADMSG when n is 0, a byte is not a digit, or the value is over UINT64_MAX. */
int parse_u64_digits(const char *s, size_t n, uint64_t *ret);

/* The value of hex digit c (either case), or -1. */
int hex_digit_value(char c);

/* Comparators of two unsigned, two pid_t, two char * (strcmp(3)), through pointers to them. */
int compare_unsigned(const void *a, const void *b);
int compare_pid(const void *a, const void *b);
int compare_string_ptr(const void *a, const void *b);

/* CLOCK_MONOTONIC now, in µs and in ns. */
uint64_t now_monotonic_usec(void);
uint64_t now_monotonic_nsec(void);
/* CLOCK_REALTIME now, in µs (for timestamps people read, like LastReloadUSec). */
uint64_t now_realtime_usec(void);
