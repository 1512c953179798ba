/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the three parts of planning share (plan.h is the public API): plan-selector.c resolves
 * one selector step by step, plan-cores.c chooses and packs cores for a count and gives the
 * spread order, plan.c resolves the policies of a Config into a Plan. Nothing here touches
 * the kernel.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* What resolution needs besides the selector. */
typedef struct PlanContext {
        const Topology *topology;
        const CpuSet *reserve;       /* online reserved CPUs; never NULL */
        const CpuSet *reserve_given; /* the reserve as configured; NULL when none was given */
        const PolicyPlan *earlier;   /* the plans of the policies before this one: the holders */
        size_t n_earlier;
        const CpuSet *held;             /* union of their exclusive_cpus; never NULL */
        const KubeletCpuState *kubelet; /* the kubelet's exclusive CPUs; NULL: none */
        /* A device rule's avoid: CPUs to leave out before the count when that leaves enough
         * (plan_resolve_selector_avoiding()); NULL: none. */
        const CpuSet *avoid;
        bool lowest_cores; /* cores: N takes the N lowest-numbered whole cores, unpacked (the reserve) */
} PlanContext;

/* What resolving one selector gives, besides a pending reason. */
typedef struct Resolution {
        CpuSet cpus;
        CpuSet held;        /* exclusive: what it withholds from later selectors */
        char **explanation; /* lines, see PolicyPlan.explanation */
        char **notes;       /* to become warnings */
        bool avoid_kept;    /* PlanContext.avoid would leave too little: its CPUs were kept */
} Resolution;

/* ---- small helpers ---- */

/* "0-3", or "none" for the empty set, for messages. NULL on OOM. */
static inline char *set_str(const CpuSet *s) {
        if (cpuset_is_empty(s))
                return strdup("none");
        return cpuset_to_string(s);
}

/* dst := a ∩ b. Returns 0 or -ENOMEM. */
static inline int set_and(CpuSet *dst, const CpuSet *a, const CpuSet *b) {
        int r = cpuset_copy(dst, a);
        if (r < 0)
                return r;
        cpuset_and(dst, b);
        return 0;
}

/* dst := a \ b. Returns 0 or -ENOMEM. */
static inline int set_andnot(CpuSet *dst, const CpuSet *a, const CpuSet *b) {
        int r = cpuset_copy(dst, a);
        if (r < 0)
                return r;
        cpuset_andnot(dst, b);
        return 0;
}

/* Moves *src into *dst (whose old storage is released); *src is empty afterwards. */
static inline void set_move(CpuSet *dst, CpuSet *src) {
        cpuset_done(dst);
        *dst = *src;
        *src = CPUSET_NULL;
}

/* ---- plan-selector.c ---- */

/*
 * Sets *ret to a newly formatted reason (printf(3) format). Returns error (the negative errno
 * to pass on), or -ENOMEM with *ret NULL.
 */
_printf_(3, 4) int plan_reasonf(int error, char **ret, const char *format, ...);

/*
 * 0 if every number in want is in exist; else -ENOENT with a newly allocated reason in
 * *ret_reason naming the missing ones, e.g. "memory: NUMA node 7 does not exist here (nodes: 0-1)":
 * prefix, then word ("NUMA node", "package"), and key ("node", "package") for the list of what
 * exists. -ENOMEM.
 */
int plan_reason_missing(
        const CpuSet *want, const CpuSet *exist, const char *prefix, const char *word, const char *key,
        char **ret_reason);

/* Releases what res holds; res is empty (zeroed) afterwards. */
void resolution_done(Resolution *res);

/*
 * Resolves s (a literal or a mapping; see plan_resolve_selector() in plan.h for the steps)
 * against ctx, into res (zeroed by the caller, released by it whatever happens): its CPUs (OS
 * numbers), what an exclusive selector holds, the explanation lines and the notes that are to
 * become warnings. Returns 0, -ENOMEM, or another negative errno with a newly allocated reason
 * in *ret_reason (the errors of plan_resolve_selector()).
 */
int plan_context_resolve(const PlanContext *ctx, const CpuSelector *s, Resolution *res, char **ret_reason);

/* ---- plan-cores.c (plan-selector.c calls it; not the other way round) ---- */

/* word and the set of numbers, word plural for several: "NUMA node 1", "packages 0-1". NULL on OOM. */
char *plan_numbers_describe(const char *word, const CpuSet *numbers);

/* Adds "PREFIX: LIST" (set as a cpu-list, "none" when empty) to res's explanation. Returns 0 or -ENOMEM. */
int resolution_explain_set(Resolution *res, const char *prefix, const CpuSet *set);

/*
 * The count of mapping s (the count step of plan_resolve_selector(): cores: N, cpus: N, or
 * smt: one-per-core alone) taken from the candidate set *cpus, which it replaces with the choice;
 * nothing when s asks for none of them. what names the selector in reasons; domain is the
 * candidate set before the reserve, reserved the set after it (before the holdings), both
 * to say what keeps the CPUs a count can't have. Adds the packing and count lines to res.
 * Returns 0, -ERANGE with a newly allocated reason in *ret_reason when the count can't be met
 * ("wanted 8 cores on NUMA node 1, 3 free, 5 reserved"), or -ENOMEM.
 */
int plan_take_count(
        const PlanContext *ctx, const CpuSelector *s, const char *what, const CpuSet *domain,
        const CpuSet *reserved, CpuSet *cpus, Resolution *res, char **ret_reason);
