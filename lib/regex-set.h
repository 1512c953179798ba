/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A set of POSIX extended regular expressions (the cmdline: matcher) searched in time linear
 * in the text, whatever the patterns: command lines are written by unprivileged users, and
 * glibc's regexec(3) is super-linear even for simple patterns ("foo.*bar" against 64 KiB of
 * "foo" takes seconds). The patterns are compiled together into one Hyperscan block-mode
 * database (Intel's Hyperscan, or its portable fork Vectorscan: the libhs API), with POSIX
 * semantics where they differ from Hyperscan's defaults: '.' matches a newline too
 * (HS_FLAG_DOTALL), a pattern may match the empty string (HS_FLAG_ALLOWEMPTY), a search is
 * unanchored. Each pattern is also compiled by regcomp(3), so only valid POSIX EREs are taken.
 * On a CPU Hyperscan can't run on (x86 without SSSE3), or when libhs (HS_SONAME of config.h,
 * dlopen(3)ed by the first regex_set_new(), so that a daemon without cmdline: regexes never maps
 * it) can't be loaded, the set falls back to regexec(3), and regex_set_linear() says so.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct RegexSet RegexSet;
/* Scratch space for searches (a scan's mutable state): one per thread that searches. */
typedef struct RegexScratch RegexScratch;

/*
 * Most positions a pattern may have once its repetitions are expanded, as regcomp(3) expands
 * them (X+ is X X*, X{m,n} n copies of X): repetitions that nest or follow each other multiply,
 * and glibc's compile time and memory grow with the square of the positions (x{1,1023}: 10 ms,
 * 8 MB) or, through stacked or nested '+', exponentially with the pattern's length.
 */
#define REGEX_SET_MAX_POSITIONS 1024U

/*
 * Most closure work a pattern may need when it has a '*', '+' or "{m,}" that repeats what can
 * match the empty string ("(a?)*"): its positions times the most ways a part of it matches
 * the empty string. "(a|)" matches it 1 way, "(a?)?" 2 (skipping the outer '?', or the inner),
 * a sequence multiplies them ("(a?)?(b?)?(c?)?": 8), a loop multiplies what it repeats by the
 * ways round it. glibc's regcomp(3) walks each of those ways, from each node near such a loop
 * to each node they reach, since it keeps no closure that comes round the loop: twelve "(a?)?"
 * in a row under a '+' (16.8 million ways) take 4.7 s, "a" and 55 '?' then "+++" 4 s, 721
 * positions and 38,892 ways 1.4 s. At the limit it takes 20 ms at most.
 */
#define REGEX_SET_MAX_CLOSURE_WORK 65536U

/*
 * Compiles the NULL-terminated patterns (at least one). Returns 0 and *ret; -EINVAL when a
 * pattern is not a valid POSIX ERE or uses what Hyperscan does not support (back-references
 * are not ERE; a few constructs such as very large bounded repeats are refused): then
 * *ret_index (may be NULL) is the index of the pattern (or the count, when no single pattern
 * is to blame) and *ret_error (may be NULL) a newly allocated message; -ENOMEM. Refused as well:
 * an anchor inside a pattern ("a^b", "a$b": they never match), glibc's \< and \> (use \b), a
 * collating element of more than one character, a pattern of more than REGEX_SET_MAX_POSITIONS
 * positions ("x{1,2000}", "t" and 10 '+'), or one that needs more than REGEX_SET_MAX_CLOSURE_WORK
 * ("((a?)?(b?)?(c?)?(d?)?(e?)?(f?)?(g?)?)+").
 */
int regex_set_new(char *const *patterns, RegexSet **ret, size_t *ret_index, char **ret_error);

/* Frees s. NULL accepted, returns NULL. */
RegexSet *regex_set_free(RegexSet *s);

/*
 * Searches text (len bytes, NUL bytes allowed) for every pattern at once. Returns the index of
 * the first pattern (in the order given) that matches somewhere in text, -ENOENT when none does,
 * -ENOMEM (the scan's scratch space could not be allocated).
 */
int regex_set_search(const RegexSet *s, const char *text, size_t len);

/*
 * regex_set_search() with the caller's scratch space instead of the set's own, for a thread
 * other than the one that uses the set's (a set's scratch must never be in two scans at once:
 * Hyperscan's hs_scan() would fail with HS_SCRATCH_IN_USE). scratch is grown to fit s
 * (hs_alloc_scratch()), so one serves every set. Returns as regex_set_search().
 */
int regex_set_search_with(const RegexSet *s, RegexScratch *scratch, const char *text, size_t len);
/* A new, empty scratch space (grown by its first search), or NULL (out of memory). */
RegexScratch *regex_scratch_new(void);
/* Frees scratch. NULL accepted, returns NULL. */
RegexScratch *regex_scratch_free(RegexScratch *scratch);
/* True when searches are linear-time (Hyperscan); false when falling back to regexec(3). */
bool regex_set_linear(const RegexSet *s);
