/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Planning: turns each policy's selectors into concrete CPU sets against a topology.
 * A pure function of (Config, Topology, PlanInputs: the kubelet's CPU manager checkpoint): the
 * same inputs give the same plan, which is what
 * lets multi-socket behaviour be tested from hwloc XML on any machine. A policy that can't be
 * resolved on this machine (a node that doesn't exist, a selector that leaves no CPU, an
 * unknown user) is pending, with a reason; that is not an error of the plan.
 */

#include <sys/types.h>

#include "kubelet-cpu-manager.h"
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
        /* spread-over: policy: the slots are the policy's, shared by the matching threads of
         * every process of it; false: each process has its own (the default). */
        bool spread_over_policy;
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
        bool has_memory;      /* memory: given and resolved */
        CpuSet memory_nodes;  /* memory: local → nodes (of cpus); a node list → as written,
                               * each checked to exist (else pending) */
        /*
         * What this policy withholds from every later selector: the chosen set of its cpus:
         * (and of its thread rules') where exclusive: true. With smt: one-per-core that is one
         * PU per core: the siblings stay free for later selectors. Empty when the policy is not
         * exclusive or is pending.
         */
        CpuSet exclusive_cpus;
        /*
         * NULL-terminated lines saying how cpus was chosen, for `affinityctl plan` and
         * Explain: "online CPUs of node 1: 8-15,24-31", "reserved removed: 8",
         * "held by exclusive policy \"db\": 9-10", "packed into L3 #2 of node 1",
         * "smt: one-per-core: 1 PU of each of 8 cores". NULL when nothing to say.
         * One line per step that changed the set; thread rules' lines are prefixed with
         * 'thread rule "NAME": ' (a spread rule says what it spreads over when the policy has
         * no cpus:). NULL when pending.
         */
        char **explanation;
        ThreadPlan *threads; /* parallel to policy->threads (NULL when it has none) */
        size_t n_threads;    /* entries of threads: policy->n_threads when the plan was made */
        bool within_cpuset;  /* active, and its cpus: or a thread rule's says within: cpuset */
        /*
         * processes: spread — the slots its processes hold, in this order (OS CPU numbers, every
         * CPU of the policy's set once, as ThreadPlan.spread_order): slot i is CPU
         * process_order[i % n_process_order]. NULL (0) when the policy doesn't say processes:
         * spread, or is pending.
         */
        unsigned *process_order;
        size_t n_process_order;
        uid_t *uids; /* policy->match.user resolved, duplicates dropped, in order */
        size_t n_uids;
        /*
         * Where the cause of pending_reason is written, the most precise place known: the
         * cpus: value (the policy's or a thread rule's) that could not be resolved, or the
         * policy's list item (user:). Borrowed from the policy; NULL when not pending.
         */
        const Location *pending_location;
        /*
         * NULL-terminated (NULL when none): a literal cpu-list naming nonexistent, offline or
         * disallowed CPUs, overlapping the reserve or CPUs held by an earlier exclusive policy;
         * a near: device with no NUMA locality on a machine with several NUMA nodes (every
         * online CPU is used); "thread rule \"NAME\": " prefixes the warnings of a thread rule.
         */
        char **warnings;
        /*
         * Parallel to warnings: where each one's cpu-list is written (the policy's or the
         * thread rule's cpus: value). Borrowed from the policy; NULL when there are no warnings.
         */
        const Location **warning_locations;
} PolicyPlan;

/* The comm index of a plan's active policies (match-index.h). */
typedef struct MatchIndex MatchIndex;

typedef struct Plan {
        const Config *config; /* borrowed */
        PolicyPlan *policies; /* parallel to config->policies */
        size_t n_policies;
        /*
         * Which active policies a comm could match, for match_process(); made with the plan.
         * NULL (a plan filled in by hand): match_process() tests every policy.
         */
        MatchIndex *match_index;
        CpuSet reserve; /* the reserve as resolved (online CPUs only) */
        /*
         * NULL-terminated (NULL when none, and for a cpu-list reserve): how a reserve selector
         * was resolved here, the steps of each package or node prefixed with "package 0: " or
         * "NUMA node 1: ", then "reserve { cores: 1, per: package }: whole cores, every SMT
         * sibling: 0-1,64-65".
         */
        char **reserve_explanation;
        /* A copy of PlanInputs.kubelet: the kubelet's exclusive CPUs, which no selector mapping
         * hands out but those of within: cpuset (and device rules' never); NULL when none. */
        KubeletCpuState *kubelet;
        /*
         * NULL-terminated (NULL when none): a reserve naming CPUs that don't exist here or are
         * not online, or splitting cores; a reserve selector that can't be resolved here, or in
         * a package or node (that part reserves nothing: "reserve { cores: 40, per: package }:
         * package 1: wanted 40 cores on package 1, 32 free; nothing reserved there"). They are
         * about config->reserve_location.
         */
        char **warnings;
} Plan;

/* What a plan depends on besides the Config and the Topology. */
typedef struct PlanInputs {
        /* The kubelet's CPU manager checkpoint (kubelet-cpu-manager.h), NULL: none. Copied. */
        const KubeletCpuState *kubelet;
} PlanInputs;

/*
 * Resolves every policy of c against t, in order. c and t must outlive the plan (it borrows
 * the policies). The reserve becomes its online CPUs; a reserve selector (Config.reserve_selector)
 * is resolved as plan_resolve_selector() does with no reserve, cores: N whole cores (all their
 * online PUs), in all or per: package / node, in each package or NUMA node that has a CPU of
 * what it covers (nodes:, packages:, near:, kind:); what can't be met is a warning (see
 * Plan.warnings) and reserves nothing there. For each policy:
 *  - a literal cpu-list is taken as written: the set is its online CPUs, with warnings for
 *    CPUs that don't exist, are offline or disallowed, are reserved or held by an earlier
 *    exclusive policy (literal lists are not narrowed by exclusive holdings); pending if none
 *    is online;
 *  - a selector mapping is resolved as plan_resolve_selector() does, and also without the CPUs
 *    held by earlier exclusive policies (file order; pending policies hold nothing); an
 *    exclusive selector's set then joins the holdings (see PolicyPlan.exclusive_cpus);
 *  - and without the kubelet's exclusive CPUs (plan_new_with()), unless it says within: cpuset:
 *    those CPUs are a Guaranteed pod's own, and its cgroup bounds such a selector per process;
 *    a literal cpu-list overlapping them gets a warning naming the pods and containers;
 *  - each thread rule with cpus: likewise, standalone (not within the policy's set; the
 *    policy's own holdings don't apply to its rules); a failure makes the policy pending, the
 *    reason prefixed with 'thread rule "NAME": ';
 *  - each thread rule with cpus: spread gets its spread_order over the policy's set (over
 *    what a bare selector would give, every online allowed CPU not reserved or held, when the
 *    policy has no cpus:);
 *  - user: entries become uids: a decimal number as is, a name through getpwnam_r(3) (the
 *    NSS user database); an unknown name makes the policy pending ('user "foo" does not
 *    exist').
 * The first failure in that order is the pending reason. Same inputs, same plan.
 * Last, the active policies' comm: keys are indexed (Plan.match_index).
 * Returns 0 and *ret, or -ENOMEM. Pending policies are not errors.
 */
int plan_new(const Config *c, const Topology *t, Plan **ret);
/* plan_new() with more inputs (in NULL: none, as plan_new()). Same returns. */
int plan_new_with(const Config *c, const Topology *t, const PlanInputs *in, Plan **ret);
/* Frees p and its PolicyPlans (not the Config or Topology it borrowed). Accepts NULL, returns NULL. */
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

/* The plan of the policy named name, or NULL. Borrowed from p. */
const PolicyPlan *plan_find_policy(const Plan *p, const char *name);

/*
 * The reserve as policies' messages name it: the cpu-list of a literal reserve: as written,
 * the resolved Plan.reserve of a reserve selector, NULL when p (or its config) is NULL or has
 * no reserve. Borrowed from p.
 */
const CpuSet *plan_reserve_given(const Plan *p);

/* How many policies of plan (NULL: none) are pending (PolicyPlan.pending_reason set). */
size_t plan_n_pending(const Plan *plan);

/*
 * Resolves one selector against t and the reserve (NULL: none; only its online CPUs count)
 * into *ret (an initialised set, replaced on success), with no exclusive holdings.
 * A literal: its online CPUs. A mapping, step by step (each step that leaves nothing stops
 * with a reason naming it):
 *  1. the online CPUs the machine's cpuset allows;
 *  2. narrowed to the CPUs of its nodes, its packages, the NUMA node(s) of its near: device
 *     (topology_device_locality(); a device with no NUMA locality leaves every CPU), and its
 *     kind: (performance: hwloc's highest-ranked CPU kind, efficiency: the lowest; on a
 *     machine with one kind, performance is every CPU and efficiency can't be resolved);
 *  3. without the reserved CPUs (reserved: avoid, the default), only the reserved ones (only)
 *     or regardless (allow);
 *  4. (plan_new() only) without the CPUs held by earlier exclusive policies, and (plan_new_with())
 *     those the kubelet's CPU manager holds, unless within: cpuset;
 *  5. the count: cores: N takes N whole cores — a core counts only if every PU of it is still
 *     in the set (a core split by the reserve, an exclusive holding or a disallowed sibling is
 *     not whole) — all their PUs, or with smt: one-per-core the lowest-numbered PU of each;
 *     cpus: N takes N PUs, one per core (its lowest-numbered PU) while there are cores, then
 *     second SMT siblings and so on (with smt: one-per-core, only one per core); when N whole
 *     cores are left it takes only whole ones, so as not to share a core with a reserved,
 *     held or disallowed sibling, and the PUs of such shared cores come after every PU of the
 *     whole ones (with smt: one-per-core, after the whole cores), with an explanation line and
 *     a note ("cpus: 23: CPU 12: its core's sibling 0 is reserved; nothing else was left").
 *     The cores are packed: into the fewest cache domains
 *     (topology_cache_domain_of_core(): L3 caches), then the fewest NUMA nodes, preferring the
 *     domain with the most candidate cores, ties to the one with the lowest-numbered CPU;
 *     deterministic. Without a count, smt: one-per-core keeps the lowest-numbered PU of each
 *     whole core, leaving shared cores out (an explanation line lists them) unless no core is
 *     whole (then one PU of each, with a line and a note saying so).
 * Returns 0, or with a newly allocated human reason in *ret_reason (if non-NULL):
 * -ENOENT when a node, package or CPU kind does not exist here ("NUMA node 7 does not exist
 * here (nodes: 0)", "kind: efficiency: this machine has one CPU kind"), -ENODEV when the
 * near: device does not ("near: eth9: no such network device or PCI address here"), -EINVAL
 * when nothing is left (the reason names the step that removed the last CPUs), -ERANGE when a
 * count can't be met ("wanted 8 cores on NUMA node 1, 3 free, 5 reserved"), or -ENOMEM (no
 * reason).
 */
int plan_resolve_selector(
        const CpuSelector *s, const Topology *t, const CpuSet *reserve, CpuSet *ret, char **ret_reason);

/*
 * plan_resolve_selector() for a device rule's avoid:: the CPUs of avoid (OS numbers; NULL: none)
 * are left out after the reserve and before near:'s closest CPUs and the count, when what is
 * left is not empty and still meets the count; else they are kept. *ret_kept (if non-NULL) says
 * whether they were kept. Same returns.
 */
int plan_resolve_selector_avoiding(
        const CpuSelector *s, const Topology *t, const CpuSet *reserve, const CpuSet *avoid, CpuSet *ret,
        bool *ret_kept, char **ret_reason);

/*
 * within: cpuset. True if pp (NULL: false) is active and its policy's cpus: or a thread rule's
 * cpus: says within: cpuset, so each process gets its own plan (plan_narrow_to_cpuset()).
 */
bool policy_plan_within_cpuset(const PolicyPlan *pp);

/*
 * The plan of one process of pp's policy, whose cgroup allows allowed (OS CPU numbers: its
 * cpuset.cpus.effective, lib/cgroup.h: cgroup_read_cpuset()), into *ret (overwritten; free with
 * policy_plan_clear()): a deep copy of pp in which each set whose selector says within: cpuset
 * — the policy's cpus:, a thread rule's cpus: — is narrowed to allowed, with the policy's nodes
 * (and memory: local's nodes) those of the narrowed set, and each spread rule's order pp's
 * order with only the CPUs of the narrowed policy set (still one PU of every core first). A
 * set that allowed doesn't meet is kept as it is: the kernel refuses it, and placement reports
 * the conflict as for any policy. Each narrowing adds an explanation line ("within: cpuset:
 * its cgroup allows 4-7: 4-7"). Pointers borrowed by pp (policy, locations) are shared.
 * Returns 1 (narrowed), 0 (pp is not policy_plan_within_cpuset(), or allowed is NULL or
 * empty: *ret untouched), or -ENOMEM.
 */
int plan_narrow_to_cpuset(const PolicyPlan *pp, const Topology *t, const CpuSet *allowed, PolicyPlan *ret);

/* Frees what a PolicyPlan made by plan_narrow_to_cpuset() owns and zeroes it. NULL and a zeroed
 * plan accepted. */
void policy_plan_clear(PolicyPlan *pp);

/*
 * The spread order of set on t (see ThreadPlan.spread_order): every CPU of set once, as a newly
 * allocated array of OS CPU numbers in *ret (to be freed; *ret_n is 0 when set is empty) and its length in
 * *ret_n — one PU of every core first, cores in the packed order of the set (fewest cache domains, then NUMA
 * nodes), then the second SMT siblings, and so on. CPUs t doesn't know come last, in ascending order.
 * Returns 0 or -ENOMEM.
 */
int plan_spread_order(const Topology *t, const CpuSet *set, unsigned **ret, size_t *ret_n);

/*
 * Why the spread order order (n OS CPU numbers, as plan_spread_order() made it on t) is what it
 * is, derived from the order and t alone, as a newly allocated NULL-terminated list of lines in
 * *ret (NULL when n is 0; free with strv_free()), for `affinityctl plan`:
 *  - "one PU of each of 8 cores first, so that no two threads share a core while one is
 *    free: 0-7" (or, when no CPU of the order has an SMT sibling in it, "one PU of each of
 *    8 cores (no two of them SMT siblings): 0-7");
 *  - on a machine of several cache domains or NUMA nodes, how those cores are packed: runs of
 *    consecutive first PUs in one cache domain (topology_cache_domain_name()) and one NUMA
 *    node, in order, each with the order's CPUs on its cores — "cores packed, so that
 *    consecutive threads share an L3 cache and a NUMA node: 4 cores in L3 #0 (0-3,16-19) on
 *    NUMA node 0, then 4 cores in L3 #1 (8-11,24-27) on NUMA node 1; as many cores in each: the
 *    lowest CPUs first" (runs on one node joined by ", ", the node said after the last; the
 *    last part only where the sizes show it, else "the most cores first" or nothing), or
 *    "cores: all 8 cores in L3 #1 (8-15,24-31) on NUMA node 1";
 *  - each round of SMT siblings: "then their second SMT siblings: 8-15", "then the second SMT
 *    siblings of 6 of them: …" when only some cores have one;
 *  - "then CPUs of no known core: …" for CPUs t has no core of.
 * Returns 0 or -ENOMEM.
 */
int plan_spread_explain(const Topology *t, const unsigned *order, size_t n, char ***ret);

/*
 * Warnings about a literal cpu-list (a cpus: value taken as written), appended to *warnings
 * (a NULL-terminated vector, possibly NULL) as lines "PREFIXcpu-list L names offline CPU 3
 * (online: 0-2)": CPUs of literal (OS numbers) that t doesn't have, that are offline or
 * disallowed, that are in reserve (NULL: no reserve), that any of the n_holders policy plans
 * holds exclusively ('overlaps CPUs 4-5 held by exclusive policy "db"'), and that the kubelet's
 * CPU manager holds (kubelet NULL: none; "overlaps CPU 1 held by the kubelet's CPU manager: 1
 * (pod UID container NAME)"). Returns 0 or -ENOMEM.
 */
int plan_literal_warnings(
        const CpuSet *literal, const Topology *t, const CpuSet *reserve, const PolicyPlan *holders,
        size_t n_holders, const KubeletCpuState *kubelet, const char *prefix, char ***warnings);
