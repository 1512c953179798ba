/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Moving a process's pages between NUMA nodes with libnuma, and counting them per node from
 * /proc/PID/numa_maps (apply-numa.h). Decides nothing: moves what it is told, counts what is.
 */

#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply-numa.h"
#include "macro.h"
#include "util.h"

/* The node numbers of s as a libnuma bitmask of nbits bits, backed by *ret_words (caller frees). */
static int to_bitmask(const CpuSet *s, unsigned long nbits, struct bitmask *ret, unsigned long **ret_words) {
        const unsigned long bits = sizeof(unsigned long) * CHAR_BIT;
        unsigned long *w;

        w = calloc(nbits / bits + 1, sizeof(unsigned long));
        if (!w)
                return -ENOMEM;
        CPUSET_FOREACH (node, s)
                w[(unsigned long)node / bits] |= 1UL << ((unsigned long)node % bits);
        *ret = (struct bitmask){.size = nbits, .maskp = w};
        *ret_words = w;
        return 0;
}

/* -ENOENT unless every node of s exists here (validated before any syscall). */
static int check_nodes(const CpuSet *s) {
        int max = numa_max_node();

        CPUSET_FOREACH (node, s)
                if (node > max || !numa_nodes_ptr || !numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)node))
                        return -ENOENT;
        return 0;
}

int apply_numa_migrate(pid_t pid, const CpuSet *from, const CpuSet *to) {
        _cleanup_free_ unsigned long *fw = NULL, *tw = NULL;
        struct bitmask fb, tb;
        unsigned long nbits;
        int r;

        if (pid < 0 || !from || !to || cpuset_is_empty(from) || cpuset_is_empty(to))
                return -EINVAL;
        if (numa_available() < 0)
                return -EOPNOTSUPP;
        r = check_nodes(from);
        if (r < 0)
                return r;
        r = check_nodes(to);
        if (r < 0)
                return r;

        /* numa_migrate_pages() passes numa_num_possible_nodes() + 1 as maxnode: the masks must
         * hold that many bits. Every node here is below it (checked above). */
        nbits = (unsigned long)numa_num_possible_nodes();
        r = to_bitmask(from, nbits, &fb, &fw);
        if (r < 0)
                return r;
        r = to_bitmask(to, nbits, &tb, &tw);
        if (r < 0)
                return r;

        r = numa_migrate_pages((int)pid, &fb, &tb);
        if (r < 0)
                return -errno;
        return r;
}

/* Per-node totals being built. */
typedef struct Acc {
        NumaNodePages *a;
        size_t n;
} Acc;

/* Parses the decimal number in s[0..n) (no sign, no blanks). Returns 0 or -EBADMSG. */
static int acc_add(Acc *acc, uint64_t node, uint64_t pages, uint64_t kib_per_page) {
        if (node >= CPUSET_MAX_CPUS)
                return -EBADMSG;
        if (node >= acc->n) {
                NumaNodePages *t = realloc(acc->a, (node + 1) * sizeof(NumaNodePages));

                if (!t)
                        return -ENOMEM;
                memset(t + acc->n, 0, (node + 1 - acc->n) * sizeof(NumaNodePages));
                acc->a = t;
                acc->n = node + 1;
        }
        acc->a[node].pages += pages;
        acc->a[node].kib += pages * kib_per_page;
        return 0;
}

/* Finds the last blank-separated token in s[0..*n), sets *n to where it starts, returns it. */
static const char *prev_token(const char *s, size_t *n, size_t *ret_len) {
        size_t end = *n, start;

        while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t'))
                end--;
        start = end;
        while (start > 0 && s[start - 1] != ' ' && s[start - 1] != '\t')
                start--;
        *n = start;
        *ret_len = end - start;
        return s + start;
}

/* One line of numa_maps (without its newline), read from the end (see apply-numa.h). */
static int parse_line(const char *line, size_t len, Acc *acc) {
        static const char kps[] = "kernelpagesize_kB=";
        const char *t;
        size_t tl, n = len;
        uint64_t kib;
        int r;

        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
                n--;
        if (n == 0)
                return 0; /* empty line */
        if (line[0] == ' ' || line[0] == '\t')
                return -EBADMSG; /* no address */

        t = prev_token(line, &n, &tl);
        if (n == 0)
                return 0; /* only an address: nothing resident */
        if (tl < sizeof(kps) - 1 || memcmp(t, kps, sizeof(kps) - 1) != 0)
                return 0; /* nothing resident */
        r = parse_u64_digits(t + sizeof(kps) - 1, tl - (sizeof(kps) - 1), &kib);
        if (r < 0)
                return r;

        for (;;) {
                const char *eq;
                uint64_t node, pages;

                t = prev_token(line, &n, &tl);
                if (n == 0 || tl < 2 || t[0] != 'N' || t[1] < '0' || t[1] > '9')
                        return 0; /* the address, or the first token before the N run */
                eq = memchr(t, '=', tl);
                if (!eq)
                        return -EBADMSG;
                r = parse_u64_digits(t + 1, (size_t)(eq - t - 1), &node);
                if (r < 0)
                        return r;
                r = parse_u64_digits(eq + 1, (size_t)(t + tl - eq - 1), &pages);
                if (r < 0)
                        return r;
                r = acc_add(acc, node, pages, kib);
                if (r < 0)
                        return r;
        }
}

static int acc_finish(Acc *acc, NumaNodePages **ret, size_t *ret_n) {
        *ret = TAKE_PTR(acc->a);
        *ret_n = acc->n;
        return 0;
}

int apply_numa_parse_maps(const char *text, NumaNodePages **ret, size_t *ret_n) {
        _cleanup_free_ NumaNodePages *a = NULL;
        Acc acc = {};
        int r = 0;

        if (!text || !ret || !ret_n)
                return -EINVAL;
        for (const char *line = text; *line;) {
                const char *nl = strchrnul(line, '\n');

                r = parse_line(line, (size_t)(nl - line), &acc);
                if (r < 0)
                        break;
                line = *nl ? nl + 1 : nl;
        }
        a = acc.a; /* freed on error */
        if (r < 0)
                return r;
        acc.a = TAKE_PTR(a);
        return acc_finish(&acc, ret, ret_n);
}

int apply_numa_read_pages(const char *root, pid_t pid, NumaNodePages **ret, size_t *ret_n) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_free_ NumaNodePages *a = NULL;
        const char *prefix = (!root || streq(root, "/")) ? "" : root;
        size_t cap = 0;
        Acc acc = {};
        ssize_t k;
        int r = 0;

        if (pid <= 0 || !ret || !ret_n)
                return -EINVAL;
        if (asprintf(&path, "%s/proc/%d/numa_maps", prefix, (int)pid) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;

        /* Streamed line by line: a process with many mappings has a long file. */
        errno = 0;
        while ((k = getline(&line, &cap, f)) >= 0) {
                r = parse_line(line, (size_t)k - (k > 0 && line[k - 1] == '\n'), &acc);
                if (r < 0)
                        break;
        }
        a = acc.a; /* freed on error */
        if (r < 0)
                return r;
        if (ferror(f))
                return errno == ESRCH ? -ESRCH : (errno > 0 ? -errno : -EIO);
        acc.a = TAKE_PTR(a);
        return acc_finish(&acc, ret, ret_n);
}

NumaNodePages apply_numa_sum(const NumaNodePages *per_node, size_t n, const CpuSet *nodes) {
        NumaNodePages s = {};

        if (!per_node || !nodes)
                return s;
        CPUSET_FOREACH (node, nodes) {
                if ((size_t)node >= n)
                        break;
                s.pages += per_node[node].pages;
                s.kib += per_node[node].kib;
        }
        return s;
}
