/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The comm index of a plan: which active policies could match a process with a given comm, so
 * that match_process() tests those and not every policy. Built once per plan (plan_new()),
 * read-only afterwards (safe to share between threads). A policy's comm: entries go in:
 *  - exact: a name with no fnmatch(3) special character ('*', '?', '[', '\\'), by the name;
 *  - prefix: a glob with a literal prefix ("pg*", "rcu_*", "a\\*b*" → "a": nothing past a
 *    backslash counts), by that prefix;
 *  - always: a policy with no comm: key, or with a glob that starts with a special character
 *    ("*", "[a-z]*", "\\*"): it is tried for every process.
 * Entries that can't match any comm (longer than MATCH_COMM_MAX bytes) are left out. The exact
 * and prefix lists are sorted arrays searched by binary search; a lookup costs
 * O(log n) per prefix length present, and never grows with the number of exact names.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

/* The most bytes of a comm (the kernel's TASK_COMM_LEN 16, less the NUL). */
#define MATCH_COMM_MAX 15

typedef struct MatchIndexEntry {
        const char *key; /* a comm: entry, borrowed from the policy; NULL in the always list */
        size_t len;      /* bytes of key that count: the whole name (exact), its literal prefix */
        size_t policy;   /* index in the plan's policies */
} MatchIndexEntry;

struct MatchIndex {
        MatchIndexEntry *exact; /* sorted by (len, key bytes, policy) */
        size_t n_exact;
        MatchIndexEntry *prefix; /* sorted likewise */
        size_t n_prefix;
        uint32_t prefix_lengths; /* bit L: some prefix entry is L bytes long (1..MATCH_COMM_MAX) */
        MatchIndexEntry *always; /* by policy, ascending, each policy once */
        size_t n_always;
};

/*
 * The candidates for one comm, in ascending policy order, each once: a merge of the exact
 * range, one prefix range per prefix length of the comm, and the always list. Lives on the
 * caller's stack; no allocation.
 */
typedef struct MatchCandidates {
        struct {
                const MatchIndexEntry *pos, *end;
        } lists[MATCH_COMM_MAX + 2];
        size_t n_lists;
        size_t next; /* the lowest policy index still to give */
} MatchCandidates;

/*
 * Builds the index of the n policy plans (a Plan's policies array; the Policies they point to
 * must outlive the index, which borrows their comm: strings). Policies without a Policy or with
 * a pending_reason are left out. Returns 0 and *ret, or -ENOMEM.
 */
int match_index_new(const PolicyPlan *policies, size_t n, MatchIndex **ret);
/* Frees x. Accepts NULL, returns NULL. */
MatchIndex *match_index_free(MatchIndex *x);
DEFINE_TRIVIAL_CLEANUP_FUNC(MatchIndex *, match_index_free);

/* Whether the candidates depend on the comm at all (some exact or prefix entry): if not, the
 * always list is every active policy and the comm need not be read. */
bool match_index_uses_comm(const MatchIndex *x);

/*
 * Starts *ret on the candidates of x for a process whose comm is comm (at most
 * MATCH_COMM_MAX bytes count; NUL-terminated): the policies with a comm: entry equal to comm,
 * those with a glob whose literal prefix is a prefix of comm, and the always list. With
 * explicit_only, only the first kind (the policies that name comm literally,
 * policy_names_comm()). A policy that is not a candidate can't match the process: its comm:
 * key fails. A candidate may still fail; matcher_test() decides.
 */
void match_index_candidates(const MatchIndex *x, const char *comm, bool explicit_only, MatchCandidates *ret);

/* The next candidate's policy index (ascending), or -ENOENT when there are no more. */
int match_candidates_next(MatchCandidates *c);
