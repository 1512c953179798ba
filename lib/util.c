/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "util.h"

const char *root_prefix(const char *root) {
        if (!root || streq(root, "/"))
                return "";
        return root;
}

int parse_u64_digits(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EBADMSG;
                if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
                        return -EBADMSG;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        *ret = v;
        return 0;
}

int hex_digit_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int compare_unsigned(const void *a, const void *b) {
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return x < y ? -1 : x > y;
}

int compare_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
        return x < y ? -1 : x > y;
}

int compare_string_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t now_monotonic_usec(void) {
        return now_ns() / 1000;
}

uint64_t now_monotonic_nsec(void) {
        return now_ns();
}

typedef struct TreeCollect {
        void **items;
        size_t n, size;
} TreeCollect;

static void tree_collect_action(const void *nodep, VISIT which, void *userdata) {
        TreeCollect *c = userdata;

        /* postorder (between the children) and leaf visit each node once, in ascending order */
        if ((which == postorder || which == leaf) && c->n < c->size)
                c->items[c->n++] = *(void *const *)nodep;
}

int tree_collect(const void *root, size_t n, void ***ret, size_t *ret_n) {
        TreeCollect c = {.size = n};

        c.items = calloc(MAX(n, (size_t)1), sizeof(void *));
        if (!c.items)
                return -ENOMEM;
        twalk_r(root, tree_collect_action, &c);
        *ret = c.items;
        *ret_n = c.n;
        return 0;
}

uint64_t now_realtime_usec(void) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000000U + (uint64_t)ts.tv_nsec / 1000U;
}
