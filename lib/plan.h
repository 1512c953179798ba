/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Planning: turns each policy's selectors into concrete CPU sets against a topology.
 * A pure function of (Config, Topology): the same inputs give the same plan, which is what
 * lets multi-socket behaviour be tested from hwloc XML on any machine. A policy that can't be
 * resolved on this machine (a node that doesn't exist, a selector that leaves no CPU, an
 * unknown user) is pending, with a reason; that is not an error of the plan.
 */

#include <sys/types.h>

#include "policy.h"
#include "topology.h"

typedef struct ThreadPlan {
        bool has_cpus; /* false: the thread gets the policy's set */
        CpuSet cpus;
        /*
         * cpus: spread — each matching thread gets its own CPU from the policy's set, taken in
         * this order: one PU of every core first (cores in the packed order of the set), then
         * the second SMT siblings, and so on; past the end, round robin. has_cpus is false.
         */
        bool spread;
        unsigned *spread_order; /* OS CPU numbers, every CPU of the policy's set once */
        size_t n_spread_order;
} ThreadPlan;

/*
 * One policy resolved. When pending_reason is set, nothing is to be applied: has_cpus is
 * false, cpus and every thread's cpus are empty and uids is NULL (warnings are kept).
 */
typedef struct PolicyPlan {
        const Policy *policy; /* borrowed from the Config the plan was made from */
        char *pending_reason; /* non-NULL: not applied, reported, re-resolved on reload (later: on
                               * CPU/device changes) */
        bool has_cpus;        /* false: the policy does not touch CPU affinity */
        CpuSet cpus;          /* resolved CPUs (OS numbers), never empty when has_cpus */
        CpuSet nodes;         /* the NUMA nodes (OS numbers) of cpus */
        /*
         * NULL-terminated lines saying how cpus was chosen, for `affinityctl plan` and
         * Explain: "online CPUs of node 1: 8-15,24-31", "reserved removed: 8",
         * "held by exclusive policy \"db\": 9-10", "packed into L3 #2 of node 1",
         * "smt: one-per-core: 1 PU of each of 8 cores". NULL when nothing to say.
         */
        char **explanation;
        ThreadPlan *threads; /* parallel to policy->threads (NULL when it has none) */
        uid_t *uids;         /* policy->match.user resolved, duplicates dropped, in order */
        size_t n_uids;
        /*
         * Where the cause of pending_reason is written, the most precise place known: the
         * cpus: value (the policy's or a thread rule's) that could not be resolved, or the
         * policy's list item (user:). Borrowed from the policy; NULL when not pending.
         */
        const Location *pending_location;
        /*
         * NULL-terminated (NULL when none): a literal cpu-list naming nonexistent, offline or
         * disallowed CPUs, or overlapping the reserve; "thread rule \"NAME\": " prefixes the
         * warnings of a thread rule's list.
         */
        char **warnings;
        /*
         * Parallel to warnings: where each one's cpu-list is written (the policy's or the
         * thread rule's cpus: value). Borrowed from the policy; NULL when there are no warnings.
         */
        const Location **warning_locations;
} PolicyPlan;

typedef struct Plan {
        const Config *config; /* borrowed */
        PolicyPlan *policies; /* parallel to config->policies */
        size_t n_policies;
        CpuSet reserve; /* the reserve as resolved (online CPUs only) */
        /*
         * NULL-terminated (NULL when none): a reserve naming CPUs that don't exist here or are
         * not online, or splitting cores. They are about config->reserve_location.
         */
        char **warnings;
} Plan;

/*
 * Resolves every policy of c against t, in order. c and t must outlive the plan (it borrows
 * the policies). The reserve becomes its online CPUs. For each policy:
 *  - a literal cpu-list is taken as written: the set is its online CPUs, with warnings for
 *    CPUs that don't exist, are offline or disallowed, or are reserved; pending if none is
 *    online;
 *  - a selector mapping is resolved as plan_resolve_selector() does;
 *  - each thread rule with cpus: likewise (a failure makes the policy pending, the reason
 *    prefixed with 'thread rule "NAME": ');
 *  - user: entries become uids: a decimal number as is, a name through getpwnam_r(3) (the
 *    NSS user database); an unknown name makes the policy pending ('user "foo" does not
 *    exist').
 * The first failure in that order is the pending reason. Same inputs, same plan.
 * Returns 0 and *ret, or -ENOMEM. Pending policies are not errors.
 */
int plan_new(const Config *c, const Topology *t, Plan **ret);
/* Frees p and its PolicyPlans (not the Config or Topology it borrowed). Accepts NULL, returns NULL. */
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

/* The plan of the policy named name, or NULL. Borrowed from p. */
const PolicyPlan *plan_find_policy(const Plan *p, const char *name);

/*
 * Resolves one selector against t and the reserve (NULL: none; only its online CPUs count)
 * into *ret (an initialised set, replaced on success).
 * A literal: its online CPUs. A mapping: the online CPUs the machine's cpuset allows,
 * narrowed to the CPUs of its nodes and packages, then without the reserved CPUs
 * (reserved: avoid, the default), only the reserved ones (only) or regardless (allow).
 * Returns 0, or with a newly allocated human reason in *ret_reason (if non-NULL):
 * -ENOENT when a node or package does not exist here ("NUMA node 7 does not exist here
 * (nodes: 0)"), -EINVAL when nothing is left (the reason names the step that removed the
 * last CPUs), or -ENOMEM (no reason).
 */
int plan_resolve_selector(
        const CpuSelector *s, const Topology *t, const CpuSet *reserve, CpuSet *ret, char **ret_reason);
