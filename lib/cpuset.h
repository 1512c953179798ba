/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * CPU and NUMA-node sets, and their two text forms:
 *  - cpu-lists as written by taskset -c, CPUAffinity=, Cpus_allowed_list, cpuset.cpus and
 *    /proc/irq/N/smp_affinity_list: "0-3,8,10-11", util-linux strides "0-15:2" and the
 *    kernel's group syntax "0-31:3/4";
 *  - the kernel's hex masks as in /proc/irq/N/smp_affinity and rx-N/rps_cpus:
 *    comma-separated 32-bit words, most significant first ("ff,ffffffff").
 * Bit i is OS CPU (or NUMA node) number i, never an hwloc logical index.
 * The accepted syntax is documented in docs/cpu-lists.md.
 */

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

/* Largest CPU number (exclusive) a set may hold; the kernel's NR_CPUS maximum is 8192. */
#define CPUSET_MAX_CPUS 8192U

/* Words of a set kept inside the CpuSet itself: CPUs 0..255 (64-bit) need no heap allocation. */
#define CPUSET_INLINE_WORDS 4U

/*
 * A set of CPU (or NUMA node) numbers. Treat as opaque and use the functions below. An all-zero
 * CpuSet (CPUSET_NULL, {}, calloc()) is the empty set. A CpuSet may be moved by plain struct
 * assignment (it holds no pointer into itself); a copy made that way must not outlive the
 * original's cpuset_done(), and only one of the two may be cpuset_done()d: use cpuset_copy().
 */
typedef struct CpuSet {
        size_t n_words; /* width in words; <= CPUSET_INLINE_WORDS: the words are in w.inl */
        union {
                unsigned long inl[CPUSET_INLINE_WORDS]; /* words beyond n_words are zero */
                unsigned long *heap;                    /* n_words > CPUSET_INLINE_WORDS */
        } w;
} CpuSet;

#define CPUSET_NULL ((CpuSet){.n_words = 0})

/* Frees the storage (if any was allocated); the set is empty afterwards and may be reused. */
void cpuset_done(CpuSet *s);
static inline void cpuset_donep(CpuSet *s) {
        cpuset_done(s);
}
#define _cleanup_cpuset_ __attribute__((__cleanup__(cpuset_donep)))

/* Adds CPU number cpu (growing the set). Returns 0, -ERANGE if cpu >= CPUSET_MAX_CPUS, -ENOMEM. */
int cpuset_add(CpuSet *s, unsigned cpu);
/* Adds the range first..last inclusive. Returns 0, -ERANGE, -EINVAL if first > last, -ENOMEM. */
int cpuset_add_range(CpuSet *s, unsigned first, unsigned last);
/* Removes CPU number cpu (no-op if absent or out of range). Cannot fail. */
void cpuset_remove(CpuSet *s, unsigned cpu);
/* Empties the set, keeping its storage. Cannot fail. */
void cpuset_clear(CpuSet *s);
/* true if CPU number cpu is in the set (any cpu may be asked). */
bool cpuset_contains(const CpuSet *s, unsigned cpu);
/* Number of CPUs in the set. */
unsigned cpuset_count(const CpuSet *s);
/* true if the set holds no CPU (whatever storage it has). */
bool cpuset_is_empty(const CpuSet *s);
/* Highest CPU in the set, or -1 when empty. */
int cpuset_last(const CpuSet *s);
/* Iteration: the first CPU > prev (prev = -1 to start), or -1 at the end. */
int cpuset_next(const CpuSet *s, int prev);
#define CPUSET_FOREACH(cpu, s) for (int cpu = cpuset_next((s), -1); cpu >= 0; cpu = cpuset_next((s), cpu))

/* dst := copy of src. Returns 0 or -ENOMEM (dst untouched on failure). */
int cpuset_copy(CpuSet *dst, const CpuSet *src);
/* In place: s := s ∪ o. Returns 0 or -ENOMEM. */
int cpuset_or(CpuSet *s, const CpuSet *o);
/* In place: s := s ∩ o. Cannot fail. */
void cpuset_and(CpuSet *s, const CpuSet *o);
/* In place: s := s \ o. Cannot fail. */
void cpuset_andnot(CpuSet *s, const CpuSet *o);
/* Same CPUs (however much storage each set has). */
bool cpuset_equal(const CpuSet *a, const CpuSet *b);
/* true if every CPU of a is in b (the empty set is a subset of everything). */
bool cpuset_is_subset(const CpuSet *a, const CpuSet *b);
/* true if a and b have at least one CPU in common. */
bool cpuset_intersects(const CpuSet *a, const CpuSet *b);

/*
 * Parses a cpu-list. Leading/trailing blanks and empty elements are ignored; see
 * docs/cpu-lists.md for the full grammar. On success writes *ret (replacing its contents).
 * On error returns -EINVAL (syntax) or -ERANGE (number >= CPUSET_MAX_CPUS) and, if
 * error_offset is non-NULL, the byte offset of the offending character in s; *ret is
 * untouched.
 */
int cpuset_parse_list(const char *s, CpuSet *ret, size_t *error_offset);

/*
 * Parses a kernel hex mask ("ff,ffffffff", optional "0x" prefix, surrounding blanks and a
 * trailing newline allowed). Same error convention as cpuset_parse_list().
 */
int cpuset_parse_mask(const char *s, CpuSet *ret, size_t *error_offset);

/*
 * Like cpuset_parse_list() and cpuset_parse_mask(), and on error also a static English
 * description of the problem in *error_reason (e.g. "range end is lower than its start"),
 * so callers can write "FILE:LINE:COLUMN: invalid cpu-list \"10-1\": range end is lower than
 * its start" with COLUMN = their column + *error_offset. ret may be NULL to only validate.
 * Both out parameters for the error (either may be NULL) are written only on error.
 */
int cpuset_parse_list_full(const char *s, CpuSet *ret, size_t *error_offset, const char **error_reason);
int cpuset_parse_mask_full(const char *s, CpuSet *ret, size_t *error_offset, const char **error_reason);

/*
 * Formats the set as a canonical cpu-list ("0-3,8", "" for the empty set) in a newly
 * allocated string. Returns 0 or -ENOMEM.
 */
int cpuset_format_list(const CpuSet *s, char **ret);

/*
 * Formats as a kernel hex mask of at least nbits bits (rounded up to 32-bit words; the set's
 * own width, up to its highest CPU, is used if larger; at least one word), every word as 8 hex
 * digits, most significant first: "00000000,0000000f". As written to /proc/irq/N/smp_affinity
 * and rps_cpus, which take at most nr_cpu_ids bits: pass that as nbits. Returns 0, -ERANGE if
 * nbits > CPUSET_MAX_CPUS, or -ENOMEM.
 */
int cpuset_format_mask(const CpuSet *s, unsigned nbits, char **ret);

/*
 * Converts to a dynamically allocated glibc cpu_set_t for sched_setaffinity(2):
 * *ret from CPU_ALLOC(), sized for the highest CPU of the set (at least one CPU), *ret_size its
 * size in bytes (CPU_ALLOC_SIZE). Caller CPU_FREE()s. Returns 0 or -ENOMEM.
 */
int cpuset_to_cpu_set(const CpuSet *s, cpu_set_t **ret, size_t *ret_size);
/*
 * Reads a glibc cpu_set_t of size bytes (a multiple of sizeof(unsigned long), as CPU_ALLOC_SIZE()
 * and sched_getaffinity(2) use) into *ret. Returns 0, -EINVAL if size is not such a multiple,
 * -ERANGE if a CPU >= CPUSET_MAX_CPUS is set, or -ENOMEM; *ret untouched on failure.
 */
int cpuset_from_cpu_set(const cpu_set_t *c, size_t size, CpuSet *ret);

/* Convenience for logs: a newly allocated cpu-list, or NULL on OOM; callers free(). */
char *cpuset_to_string(const CpuSet *s);
