/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Planning, one selector (plan_resolve_selector()): a literal cpu-list or a selector mapping
 * becomes a concrete CPU set against a topology, with the lines explaining how and, when
 * nothing is left, the reason. The policies of a Config are resolved in plan.c, the counts
 * and their packing chosen in plan-cores.c.
 *
 * A selector mapping is a pipeline over a set of candidate CPUs: start from the online,
 * allowed CPUs; narrow by NUMA nodes, packages, the near: device's nodes and the CPU kind;
 * apply the reserve; drop what earlier exclusive policies hold and what the kubelet's CPU
 * manager holds (but for within: cpuset); then take a count if asked.
 * Each step that empties the set stops with a reason naming that step, so a pending policy
 * says what went wrong, and each step that changes it adds a line to the explanation.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan-internal.h"

/* ---- reasons and descriptions ---- */

/* Sets *ret to a newly formatted reason. Returns error (the errno to pass on) or -ENOMEM. */
int plan_reasonf(int error, char **ret, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(ret, format, ap);
        va_end(ap);
        if (r < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return error;
}

/*
 * How a reason names the reserve: "reserve: 0-1", "reserve: none" (none was given), or, when
 * one was given but none of its CPUs is online, "reserve 0 has no online CPU here". NULL on OOM.
 */
static char *reserve_describe(const PlanContext *ctx) {
        _cleanup_free_ char *l = NULL;
        char *d = NULL;

        if (cpuset_is_empty(ctx->reserve) && ctx->reserve_given && !cpuset_is_empty(ctx->reserve_given)) {
                l = set_str(ctx->reserve_given);
                if (!l || asprintf(&d, "reserve %s has no online CPU here", l) < 0)
                        return NULL;
                return d;
        }
        l = set_str(ctx->reserve);
        if (!l || asprintf(&d, "reserve: %s", l) < 0)
                return NULL;
        return d;
}

/* "NUMA node 1", "NUMA nodes 0-1", "package 0", "NUMA node 1 in package 0"; "" if neither. */
static char *domains_describe(const CpuSelector *s) {
        _cleanup_free_ char *nodes = NULL, *packages = NULL;
        char *d = NULL;
        int r;

        if (s->has_nodes && !(nodes = plan_numbers_describe("NUMA node", &s->nodes)))
                return NULL;
        if (s->has_packages && !(packages = plan_numbers_describe("package", &s->packages)))
                return NULL;

        if (s->has_nodes && s->has_packages)
                r = asprintf(&d, "%s in %s", nodes, packages);
        else
                r = asprintf(&d, "%s", nodes ?: packages ?: "");
        return r < 0 ? NULL : d;
}

/* "near eth0 (NUMA node 1)", or "near eth0" when its nodes are unknown. NULL on OOM. */
static char *near_describe(const CpuSelector *s, const CpuSet *near_nodes) {
        _cleanup_free_ char *n = NULL;
        char *d = NULL;

        if (near_nodes && !cpuset_is_empty(near_nodes)) {
                n = plan_numbers_describe("NUMA node", near_nodes);
                if (!n || asprintf(&d, "near %s (%s)", s->near, n) < 0)
                        return NULL;
                return d;
        }
        if (asprintf(&d, "near %s", s->near) < 0)
                return NULL;
        return d;
}

static const char *kind_word(CpuKindSelector k) {
        return k == CPU_KIND_PERFORMANCE ? "performance" : "efficiency";
}

/*
 * What a selector selects, for reasons: "NUMA node 1", "NUMA node 1 in package 0", "the CPUs
 * near eth0 (NUMA node 1)", "the performance CPUs of package 0", "the online CPUs".
 * with_kind: whether to name its kind:. NULL on OOM.
 */
static char *selector_describe(const CpuSelector *s, const CpuSet *near_nodes, bool with_kind) {
        _cleanup_free_ char *domains = NULL, *near = NULL;
        char *d = NULL;
        int r;

        domains = domains_describe(s);
        if (!domains)
                return NULL;
        if (s->near && !(near = near_describe(s, near_nodes)))
                return NULL;

        if (with_kind && s->cpu_kind != CPU_KIND_ANY)
                r = asprintf(
                        &d, "the %s CPUs%s%s%s%s", kind_word(s->cpu_kind), *domains ? " of " : "", domains,
                        near ? (*domains ? ", " : " ") : "", near ?: "");
        else if (*domains)
                r = asprintf(&d, "%s%s%s", domains, near ? ", " : "", near ?: "");
        else if (near)
                r = asprintf(&d, "the CPUs %s", near);
        else
                r = asprintf(&d, "the online CPUs");
        return r < 0 ? NULL : d;
}

/* ---- one resolution ---- */

void resolution_done(Resolution *res) {
        cpuset_done(&res->cpus);
        cpuset_done(&res->held);
        res->explanation = strv_free(res->explanation);
        res->notes = strv_free(res->notes);
}

/*
 * 0 if every number in want is in exist; else -ENOENT with a reason naming the missing ones,
 * e.g. "memory: NUMA node 7 does not exist here (nodes: 0-1)": prefix, then word ("NUMA node",
 * "package"), and key ("node", "package") for the list of what exists. -ENOMEM.
 */
int plan_reason_missing(
        const CpuSet *want, const CpuSet *exist, const char *prefix, const char *word, const char *key,
        char **ret_reason) {
        _cleanup_cpuset_ CpuSet missing = CPUSET_NULL;
        _cleanup_free_ char *m = NULL, *e = NULL;
        bool one;
        int r;

        r = set_andnot(&missing, want, exist);
        if (r < 0)
                return r;
        if (cpuset_is_empty(&missing))
                return 0;
        m = set_str(&missing);
        e = set_str(exist);
        if (!m || !e)
                return -ENOMEM;
        one = cpuset_count(&missing) == 1;
        return plan_reasonf(
                -ENOENT, ret_reason, "%s%s%s %s %s not exist here (%ss: %s)", prefix, word, one ? "" : "s",
                m, one ? "does" : "do", key, e);
}

/*
 * Narrows *cpus to the CPUs of the domains named in want (nodes or packages). A domain that
 * doesn't exist here is -ENOENT with a reason listing those that do.
 */
static int narrow_by_domains(
        const PlanContext *ctx, const CpuSet *want, bool nodes, CpuSet *cpus, CpuSet *domain_cpus,
        char **ret_reason) {
        const CpuSet *exist = nodes ? topology_nodes(ctx->topology) : topology_packages(ctx->topology);
        const char *word = nodes ? "NUMA node" : "package";
        int r;

        r = plan_reason_missing(want, exist, "", word, nodes ? "node" : "package", ret_reason);
        if (r != 0)
                return r;

        r = nodes ? topology_cpus_of_nodes(ctx->topology, want, domain_cpus)
                  : topology_cpus_of_packages(ctx->topology, want, domain_cpus);
        if (r < 0)
                return r; /* -ENOENT can't happen: every domain exists */

        cpuset_and(cpus, domain_cpus);
        return 0;
}

/* Literal cpu-list: taken as written, minus what is not online. */
static int resolve_literal(
        const PlanContext *ctx, const CpuSelector *s, Resolution *res, char **ret_reason) {
        const CpuSet *online = topology_online_cpus(ctx->topology);
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        _cleanup_free_ char *l = NULL;
        int r;

        r = set_and(&cpus, &s->literal, online);
        if (r < 0)
                return r;
        l = set_str(&s->literal);
        if (!l)
                return -ENOMEM;
        if (cpuset_is_empty(&cpus)) {
                _cleanup_free_ char *o = set_str(online);

                if (!o)
                        return -ENOMEM;
                if (cpuset_count(&s->literal) == 1)
                        return plan_reasonf(
                                -EINVAL, ret_reason, "CPU %s is not online here (online: %s)", l, o);
                return plan_reasonf(
                        -EINVAL, ret_reason, "none of CPUs %s is online here (online: %s)", l, o);
        }

        if (cpuset_equal(&cpus, &s->literal))
                r = strv_extendf(&res->explanation, "cpu-list %s taken as written", l);
        else {
                _cleanup_free_ char *prefix = NULL;

                if (asprintf(&prefix, "cpu-list %s: its online CPUs", l) < 0)
                        return -ENOMEM;
                r = resolution_explain_set(res, prefix, &cpus);
        }
        if (r < 0)
                return r;

        set_move(&res->cpus, &cpus);
        return 0;
}

/* ---- selector mappings ---- */

/* near: narrows *cpus to the device's NUMA nodes. */
static int narrow_near(
        const PlanContext *ctx, const CpuSelector *s, int locality, const CpuSet *near_cpus,
        const CpuSet *near_nodes, CpuSet *cpus, Resolution *res, char **ret_reason) {
        const Topology *t = ctx->topology;
        _cleanup_cpuset_ CpuSet before = CPUSET_NULL;
        _cleanup_free_ char *near = NULL;
        int r;

        near = near_describe(s, near_nodes);
        if (!near)
                return -ENOMEM;

        if (locality == TOPOLOGY_LOCALITY_NONE) {
                unsigned nodes_with_cpus = 0;

                r = strv_extendf(
                        &res->explanation,
                        "near %s: the device has no NUMA locality, every online CPU is near it", s->near);
                if (r < 0)
                        return r;
                /* Worth a warning only where locality matters: several nodes with CPUs. */
                CPUSET_FOREACH (node, topology_nodes(t)) {
                        _cleanup_cpuset_ CpuSet one = CPUSET_NULL, c = CPUSET_NULL;

                        if (cpuset_add(&one, node) < 0 || topology_cpus_of_nodes(t, &one, &c) < 0)
                                return -ENOMEM;
                        nodes_with_cpus += !cpuset_is_empty(&c);
                }
                if (nodes_with_cpus > 1) {
                        r = strv_extendf(
                                &res->notes,
                                "near: %s has no NUMA locality (a virtual device, or the firmware doesn't "
                                "say); "
                                "using every online CPU",
                                s->near);
                        if (r < 0)
                                return r;
                }
                return 0;
        }

        r = cpuset_copy(&before, cpus);
        if (r < 0)
                return r;
        cpuset_and(cpus, near_cpus);
        if (cpuset_is_empty(cpus)) {
                _cleanup_free_ char *domains = domains_describe(s), *l = set_str(near_cpus);

                if (!domains || !l)
                        return -ENOMEM;
                if (*domains)
                        return plan_reasonf(-EINVAL, ret_reason, "no CPU of %s is %s: %s", domains, near, l);
                return plan_reasonf(-EINVAL, ret_reason, "no online, allowed CPU is %s: %s", near, l);
        }
        if (!cpuset_equal(&before, cpus))
                return resolution_explain_set(res, near, cpus);
        return 0;
}

/* kind: narrows *cpus to hwloc's most (performance) or least (efficiency) performant kind. */
static int narrow_kind(
        const PlanContext *ctx, const CpuSelector *s, CpuSet *cpus, Resolution *res, char **ret_reason) {
        const Topology *t = ctx->topology;
        const char *word = kind_word(s->cpu_kind), *core_type = NULL;
        _cleanup_cpuset_ CpuSet kind = CPUSET_NULL, before = CPUSET_NULL;
        _cleanup_free_ char *prefix = NULL;
        unsigned n = topology_n_cpu_kinds(t);
        int r;

        if (n <= 1) {
                if (s->cpu_kind == CPU_KIND_EFFICIENCY)
                        return plan_reasonf(
                                -ENOENT, ret_reason, "kind: efficiency: this machine has one CPU kind");
                return strv_extendf(
                        &res->explanation,
                        "kind: performance: this machine has one CPU kind, every CPU is of it");
        }
        if (!topology_cpu_kinds_ranked(t))
                return plan_reasonf(
                        -ENOENT, ret_reason, "kind: %s: hwloc can't rank the %u CPU kinds of this machine",
                        word, n);

        r = topology_cpu_kind(t, s->cpu_kind == CPU_KIND_PERFORMANCE ? n - 1 : 0, &kind, &core_type);
        if (r < 0)
                return r;
        r = cpuset_copy(&before, cpus);
        if (r < 0)
                return r;
        cpuset_and(cpus, &kind);

        if (cpuset_is_empty(cpus)) {
                _cleanup_free_ char *what = selector_describe(s, NULL, false), *k = set_str(&kind);

                if (!what || !k)
                        return -ENOMEM;
                return plan_reasonf(
                        -EINVAL, ret_reason, "kind: %s: no CPU of %s is of that kind (%s%s%s)", word, what,
                        core_type ?: "", core_type ? ": " : "", k);
        }
        if (cpuset_equal(&before, cpus))
                return 0;
        if (asprintf(
                    &prefix, "kind: %s%s%s%s", word, core_type ? " (" : "", core_type ?: "",
                    core_type ? ")" : "") < 0)
                return -ENOMEM;
        return resolution_explain_set(res, prefix, cpus);
}

/* *ret := the online PUs of every core that has a CPU in cpus, minus the reserve. */
static int hold_whole_cores(const PlanContext *ctx, const CpuSet *cpus, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet held = CPUSET_NULL, siblings = CPUSET_NULL;
        int r;

        CPUSET_FOREACH (cpu, cpus) {
                r = topology_core_siblings(ctx->topology, (unsigned)cpu, &siblings);
                if (r == -ENOENT) /* no core information: the PU alone */
                        r = cpuset_add(&siblings, (unsigned)cpu);
                if (r < 0)
                        return r;
                r = cpuset_or(&held, &siblings);
                if (r < 0)
                        return r;
                cpuset_clear(&siblings);
        }
        cpuset_and(&held, topology_online_cpus(ctx->topology));
        cpuset_andnot(&held, ctx->reserve);
        r = cpuset_or(&held, cpus); /* what was chosen is held whatever the above removed */
        if (r < 0)
                return r;
        set_move(ret, &held);
        return 0;
}

/* Drops the CPUs earlier exclusive policies hold from *cpus. */
static int remove_held(
        const PlanContext *ctx, const char *what, CpuSet *cpus, Resolution *res, char **ret_reason) {
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        _cleanup_free_ char *holders = NULL, *c = NULL;
        size_t n_holders = 0;
        int r;

        if (!cpuset_intersects(cpus, ctx->held))
                return 0;

        for (size_t i = 0; i < ctx->n_earlier; i++) {
                _cleanup_free_ char *l = NULL, *prefix = NULL, *joined = NULL;

                r = set_and(&x, cpus, &ctx->earlier[i].exclusive_cpus);
                if (r < 0)
                        return r;
                if (cpuset_is_empty(&x))
                        continue;
                l = set_str(&x);
                if (!l ||
                    asprintf(&prefix, "held by exclusive policy \"%s\"", ctx->earlier[i].policy->name) < 0)
                        return -ENOMEM;
                r = resolution_explain_set(res, prefix, &x);
                if (r < 0)
                        return r;
                if (asprintf(
                            &joined, "%s%s\"%s\" (%s)", holders ?: "", holders ? ", " : "",
                            ctx->earlier[i].policy->name, l) < 0)
                        return -ENOMEM;
                free(holders);
                holders = TAKE_PTR(joined);
                n_holders++;
        }

        c = set_str(cpus);
        if (!c)
                return -ENOMEM;
        cpuset_andnot(cpus, ctx->held);
        if (cpuset_is_empty(cpus))
                return plan_reasonf(
                        -EINVAL, ret_reason, "every CPU of %s (%s) is held by earlier exclusive polic%s: %s",
                        what, c, n_holders == 1 ? "y" : "ies", holders);
        return 0;
}

/*
 * Drops the CPUs the kubelet's CPU manager holds from *cpus, unless s says within: cpuset: then
 * the process's cgroup bounds them, and a Guaranteed pod's is its exclusive CPUs.
 */
static int remove_kubelet(
        const PlanContext *ctx, const CpuSelector *s, const char *what, CpuSet *cpus, Resolution *res,
        char **ret_reason) {
        _cleanup_free_ char *who = NULL, *c = NULL;
        int r;

        if (s->within == WITHIN_CPUSET)
                return 0;
        c = set_str(cpus);
        if (!c)
                return -ENOMEM;
        r = kubelet_cpu_state_remove_from(ctx->kubelet, cpus, &who);
        if (r <= 0)
                return r;
        r = strv_extendf(&res->explanation, "held by the kubelet's CPU manager: %s", who);
        if (r < 0)
                return r;
        if (cpuset_is_empty(cpus))
                return plan_reasonf(
                        -EINVAL, ret_reason,
                        "every CPU of %s (%s) is held by the kubelet's CPU manager: %s (cpus: { within: "
                        "cpuset } places a pod's processes on its own)",
                        what, c, who);
        return 0;
}

/* Whether the count of s (cores:, cpus:; none: any set will do) can be taken from cpus. */
static int count_fits(
        const PlanContext *ctx, const CpuSelector *s, const char *what, const CpuSet *domain,
        const CpuSet *reserved, const CpuSet *cpus) {
        _cleanup_(resolution_done) Resolution scratch = {};
        _cleanup_cpuset_ CpuSet try = CPUSET_NULL;
        _cleanup_free_ char *why = NULL;
        int r;

        if (s->n_cores == 0 && s->n_cpus == 0)
                return 1;
        r = cpuset_copy(&try, cpus);
        if (r < 0)
                return r;
        r = plan_take_count(ctx, s, what, domain, reserved, &try, &scratch, &why);
        if (r == -ENOMEM)
                return r;
        return r >= 0;
}

/*
 * near: narrowed *cpus to the device's NUMA nodes; on a machine where hwloc attaches the device
 * below something narrower (an L3, a die, a group: topology_device_closest_cpus()), take those
 * CPUs instead when the count fits in them (or there is none), else keep the node's: the same
 * policy is as close as each machine allows.
 */
static int narrow_closest(
        const PlanContext *ctx, const CpuSelector *s, const char *what, const CpuSet *domain,
        const CpuSet *reserved, CpuSet *cpus, Resolution *res) {
        _cleanup_cpuset_ CpuSet close = CPUSET_NULL, closest = CPUSET_NULL;
        _cleanup_free_ char *label = NULL;
        const char *type = NULL;
        int r;

        r = topology_device_closest_cpus(ctx->topology, s->near, &close, &type);
        if (r == -ENODEV)
                return 0;
        if (r < 0)
                return r;
        r = set_and(&closest, cpus, &close);
        if (r < 0)
                return r;
        if (cpuset_is_empty(&closest) || cpuset_equal(&closest, cpus))
                return 0;
        r = count_fits(ctx, s, what, domain, reserved, &closest);
        if (r < 0)
                return r;
        if (r == 0) {
                _cleanup_free_ char *l = set_str(&closest);

                if (!l)
                        return -ENOMEM;
                return strv_extendf(
                        &res->explanation,
                        "near %s: the CPUs below its %s (%s) are too few for the count: the node's", s->near,
                        type, l);
        }
        if (asprintf(&label, "near %s: below its %s", s->near, type) < 0)
                return -ENOMEM;
        r = cpuset_copy(cpus, &closest);
        if (r < 0)
                return r;
        return resolution_explain_set(res, label, cpus);
}

static int resolve_mapping(
        const PlanContext *ctx, const CpuSelector *s, Resolution *res, char **ret_reason) {
        const Topology *t = ctx->topology;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, node_cpus = CPUSET_NULL, package_cpus = CPUSET_NULL,
                                selected = CPUSET_NULL, near_cpus = CPUSET_NULL, near_nodes = CPUSET_NULL,
                                before = CPUSET_NULL, domain = CPUSET_NULL, reserved = CPUSET_NULL;
        _cleanup_free_ char *what = NULL;
        int locality = -1;
        int r;

        /* The near: device first: its nodes are part of what the selector is called. */
        if (s->near) {
                locality = topology_device_locality(t, s->near, &near_cpus, &near_nodes, NULL);
                if (locality == -ENODEV || locality == -EINVAL)
                        return plan_reasonf(
                                -ENODEV, ret_reason, "near: %s: no such network device or PCI address here",
                                s->near);
                if (locality < 0)
                        return locality;
        }

        what = selector_describe(s, &near_nodes, true);
        if (!what)
                return -ENOMEM;

        /* 1. Online CPUs the machine's cpuset allows. */
        r = cpuset_copy(&cpus, topology_allowed_cpus(t));
        if (r < 0)
                return r;
        if (cpuset_is_empty(&cpus))
                return plan_reasonf(-EINVAL, ret_reason, "no CPU is online and allowed here");
        if (!cpuset_equal(&cpus, topology_online_cpus(t))) {
                r = set_andnot(&before, topology_online_cpus(t), &cpus);
                if (r >= 0)
                        r = resolution_explain_set(res, "disallowed removed", &before);
                if (r < 0)
                        return r;
        }

        /* 2. Nodes and packages. */
        r = cpuset_copy(&before, &cpus);
        if (r < 0)
                return r;
        if (s->has_nodes) {
                r = narrow_by_domains(ctx, &s->nodes, true, &cpus, &node_cpus, ret_reason);
                if (r < 0)
                        return r;
        }
        if (s->has_packages) {
                r = narrow_by_domains(ctx, &s->packages, false, &cpus, &package_cpus, ret_reason);
                if (r < 0)
                        return r;
        }
        if (cpuset_is_empty(&cpus)) {
                _cleanup_free_ char *sel = NULL, *allowed = NULL, *domains = domains_describe(s);

                if (!domains)
                        return -ENOMEM;
                if (s->has_nodes && s->has_packages && !cpuset_intersects(&node_cpus, &package_cpus))
                        return plan_reasonf(
                                -EINVAL, ret_reason, "%s: the nodes and packages have no CPU in common",
                                domains);

                /* What the domains hold, online or not. */
                if (s->has_nodes && s->has_packages)
                        r = set_and(&selected, &node_cpus, &package_cpus);
                else
                        r = cpuset_copy(&selected, s->has_nodes ? &node_cpus : &package_cpus);
                if (r < 0)
                        return r;
                if (cpuset_is_empty(&selected))
                        return plan_reasonf(
                                -EINVAL, ret_reason, "%s %s no CPU", domains,
                                (s->has_nodes ? cpuset_count(&s->nodes) : cpuset_count(&s->packages)) == 1
                                        ? "has"
                                        : "have");

                sel = set_str(&selected);
                allowed = set_str(topology_allowed_cpus(t));
                if (!sel || !allowed)
                        return -ENOMEM;
                return plan_reasonf(
                        -EINVAL, ret_reason, "no CPU of %s (%s) is online and allowed here (%s)", domains,
                        sel, allowed);
        }
        if (!cpuset_equal(&before, &cpus)) {
                _cleanup_free_ char *domains = domains_describe(s), *prefix = NULL;

                if (!domains || asprintf(&prefix, "online CPUs of %s", domains) < 0)
                        return -ENOMEM;
                r = resolution_explain_set(res, prefix, &cpus);
                if (r < 0)
                        return r;
        }

        /* 3. near: and kind:. */
        if (s->near) {
                r = narrow_near(ctx, s, locality, &near_cpus, &near_nodes, &cpus, res, ret_reason);
                if (r < 0)
                        return r;
        }
        if (s->cpu_kind != CPU_KIND_ANY) {
                r = narrow_kind(ctx, s, &cpus, res, ret_reason);
                if (r < 0)
                        return r;
        }
        r = cpuset_copy(&domain, &cpus);
        if (r < 0)
                return r;

        /* 4. The reserve. */
        switch (s->reserved) {
        case RESERVED_AVOID:
                if (cpuset_is_subset(&cpus, ctx->reserve)) {
                        _cleanup_free_ char *c = set_str(&cpus), *rs = reserve_describe(ctx);

                        if (!c || !rs)
                                return -ENOMEM;
                        return plan_reasonf(
                                -EINVAL, ret_reason,
                                "every CPU of %s (%s) is reserved (%s); "
                                "use reserved: allow or only to place on them",
                                what, c, rs);
                }
                if (cpuset_intersects(&cpus, ctx->reserve)) {
                        r = set_and(&before, &cpus, ctx->reserve);
                        if (r >= 0)
                                r = resolution_explain_set(res, "reserved removed", &before);
                        if (r < 0)
                                return r;
                }
                cpuset_andnot(&cpus, ctx->reserve);
                break;

        case RESERVED_ONLY:
                if (!cpuset_intersects(&cpus, ctx->reserve)) {
                        _cleanup_free_ char *c = set_str(&cpus), *rs = reserve_describe(ctx);

                        if (!c || !rs)
                                return -ENOMEM;
                        return plan_reasonf(
                                -EINVAL, ret_reason,
                                "reserved: only, but no CPU of %s (%s) is reserved (%s)", what, c, rs);
                }
                cpuset_and(&cpus, ctx->reserve);
                r = resolution_explain_set(res, "reserved: only", &cpus);
                if (r < 0)
                        return r;
                break;

        case RESERVED_ALLOW:
                break;
        }
        r = cpuset_copy(&reserved, &cpus);
        if (r < 0)
                return r;

        /* 5. What earlier exclusive policies hold. */
        r = remove_held(ctx, what, &cpus, res, ret_reason);
        if (r < 0)
                return r;
        r = remove_kubelet(ctx, s, what, &cpus, res, ret_reason);
        if (r < 0)
                return r;

        /* 5a. A device rule's avoid:, when what is left is not empty and meets the count. */
        if (ctx->avoid && cpuset_intersects(&cpus, ctx->avoid)) {
                r = set_andnot(&before, &cpus, ctx->avoid);
                if (r >= 0)
                        r = cpuset_is_empty(&before) ? 0
                                                     : count_fits(ctx, s, what, &domain, &reserved, &before);
                if (r < 0)
                        return r;
                if (r > 0)
                        set_move(&cpus, &before);
                else
                        res->avoid_kept = true;
        }

        /* 5b. near: as close as the machine allows. */
        if (s->near && locality == TOPOLOGY_LOCALITY_NODES) {
                r = narrow_closest(ctx, s, what, &domain, &reserved, &cpus, res);
                if (r < 0)
                        return r;
        }

        /* 6. The count. */
        r = plan_take_count(ctx, s, what, &domain, &reserved, &cpus, res, ret_reason);
        if (r < 0)
                return r;

        /*
         * 7. Exclusive: the chosen cores are withheld from every later selector — whole cores,
         * SMT siblings included (except reserved ones), even when smt: one-per-core uses one
         * PU of each: a later policy on the siblings would share the cores' execution units,
         * which is what exclusive cores exist to prevent.
         */
        if (s->exclusive) {
                r = hold_whole_cores(ctx, &cpus, &res->held);
                if (r >= 0)
                        r = resolution_explain_set(
                                res, "exclusive: cores withheld from later selectors", &res->held);
                if (r < 0)
                        return r;
        }

        set_move(&res->cpus, &cpus);
        return 0;
}

/* Resolves s into res (zeroed by the caller, released by it whatever happens). */
int plan_context_resolve(const PlanContext *ctx, const CpuSelector *s, Resolution *res, char **ret_reason) {
        switch (s->kind) {
        case CPU_SELECTOR_LITERAL:
                return resolve_literal(ctx, s, res, ret_reason);
        case CPU_SELECTOR_MAPPING:
                return resolve_mapping(ctx, s, res, ret_reason);
        case CPU_SELECTOR_NONE:
                break;
        case CPU_SELECTOR_SPREAD:
                return plan_reasonf(-EINVAL, ret_reason, "\"spread\" is only valid in a thread rule");
        }
        return plan_reasonf(-EINVAL, ret_reason, "no CPU selector");
}

int plan_resolve_selector(
        const CpuSelector *s, const Topology *t, const CpuSet *reserve, CpuSet *ret, char **ret_reason) {
        return plan_resolve_selector_avoiding(s, t, reserve, NULL, ret, NULL, ret_reason);
}

int plan_resolve_selector_avoiding(
        const CpuSelector *s, const Topology *t, const CpuSet *reserve, const CpuSet *avoid, CpuSet *ret,
        bool *ret_kept, char **ret_reason) {
        static const CpuSet empty = CPUSET_NULL;
        _cleanup_cpuset_ CpuSet online_reserve = CPUSET_NULL;
        _cleanup_(resolution_done) Resolution res = {};
        _cleanup_free_ char *reason = NULL;
        PlanContext ctx = {
                .topology = t, .reserve = &empty, .reserve_given = reserve, .held = &empty, .avoid = avoid};
        int r;

        if (reserve) {
                r = set_and(&online_reserve, reserve, topology_online_cpus(t));
                if (r < 0)
                        return r;
                ctx.reserve = &online_reserve;
        }

        r = plan_context_resolve(&ctx, s, &res, &reason);
        if (r < 0) {
                if (reason && ret_reason)
                        *ret_reason = TAKE_PTR(reason);
                return r;
        }
        set_move(ret, &res.cpus);
        if (ret_kept)
                *ret_kept = res.avoid_kept;
        return 0;
}
