/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Planning: each policy's selectors become concrete CPU sets against a topology, in file
 * order. Nothing here touches the kernel: the inputs are the Config, the Topology and the
 * user database (getpwnam_r), so the same inputs always give the same plan.
 *
 * This file makes the Plan of a Config: the reserve, and for each policy its own set, its
 * thread rules' sets and spread orders, its users and its memory nodes, the warnings about
 * literal cpu-lists, and what it holds exclusively for the policies after it; a policy whose
 * first failure makes it pending carries nothing to apply. One selector is resolved in
 * plan-selector.c, its count packed in plan-cores.c.
 */

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match-index.h"
#include "plan-internal.h"

/* ---- warnings ---- */

/* Appends a warning about what is written at where to pp. Returns 0 or -ENOMEM. */
_printf_(3, 4) static int policy_plan_warn(PolicyPlan *pp, const Location *where, const char *format, ...) {
        size_t n = strv_length(pp->warnings);
        const Location **a = NULL;
        char **nl = NULL, *w = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&w, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        /* Locations first: an array one longer than the warnings is harmless. */
        a = reallocarray(pp->warning_locations, n + 1, sizeof(Location *));
        if (!a) {
                free(w);
                return -ENOMEM;
        }
        pp->warning_locations = a;
        nl = reallocarray(pp->warnings, n + 2, sizeof(char *));
        if (!nl) {
                free(w);
                return -ENOMEM;
        }
        nl[n] = w;
        nl[n + 1] = NULL;
        pp->warnings = nl;
        pp->warning_locations[n] = where;
        return 0;
}

/* Where a selector was written: its cpus: value, else fallback (the rule or the policy). */
static const Location *selector_location(const CpuSelector *s, const Location *fallback) {
        return s->location.line > 0 ? &s->location : fallback;
}

/* See plan.h. */
int plan_literal_warnings(
        const CpuSet *literal, const Topology *t, const CpuSet *reserve, const PolicyPlan *holders,
        size_t n_holders, const KubeletCpuState *kubelet, const char *prefix, char ***warnings) {
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        _cleanup_free_ char *l = NULL;
        int r;

        l = set_str(literal);
        if (!l)
                return -ENOMEM;

        struct {
                const CpuSet *in, *out; /* CPUs of the literal in `in` (NULL: any) and not in `out` */
                const char *what;
                const CpuSet *context;
                const char *context_name;
        } checks[] = {
                {NULL, topology_all_cpus(t), "names nonexistent", topology_all_cpus(t), "CPUs here"},
                {topology_all_cpus(t), topology_online_cpus(t), "names offline", topology_online_cpus(t),
                 "online"},
                {topology_online_cpus(t), topology_allowed_cpus(t), "names disallowed",
                 topology_allowed_cpus(t), "allowed"},
                {reserve, NULL, "overlaps the reserve on", reserve, "reserve"},
        };

        for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
                _cleanup_free_ char *bad = NULL, *context = NULL;

                if (!checks[i].context)
                        continue; /* no reserve */
                r = cpuset_copy(&x, literal);
                if (r < 0)
                        return r;
                if (checks[i].in)
                        cpuset_and(&x, checks[i].in);
                if (checks[i].out)
                        cpuset_andnot(&x, checks[i].out);
                if (cpuset_is_empty(&x))
                        continue;

                bad = set_str(&x);
                context = set_str(checks[i].context);
                if (!bad || !context)
                        return -ENOMEM;
                r = strv_extendf(
                        warnings, "%scpu-list %s %s CPU%s %s (%s: %s)", prefix, l, checks[i].what,
                        cpuset_count(&x) == 1 ? "" : "s", bad, checks[i].context_name, context);
                if (r < 0)
                        return r;
        }

        /* Literal lists are not narrowed by exclusive holdings, but say so when they overlap. */
        for (size_t i = 0; i < n_holders; i++) {
                _cleanup_free_ char *bad = NULL;

                r = set_and(&x, literal, &holders[i].exclusive_cpus);
                if (r < 0)
                        return r;
                if (cpuset_is_empty(&x))
                        continue;
                bad = set_str(&x);
                if (!bad)
                        return -ENOMEM;
                r = strv_extendf(
                        warnings, "%scpu-list %s overlaps CPU%s %s held by exclusive policy \"%s\"", prefix,
                        l, cpuset_count(&x) == 1 ? "" : "s", bad, holders[i].policy->name);
                if (r < 0)
                        return r;
        }

        /* Nor by the kubelet's: taken as written, but a Guaranteed pod's CPUs are its own. */
        r = set_and(&x, literal, kubelet_cpu_state_exclusive(kubelet));
        if (r < 0)
                return r;
        if (!cpuset_is_empty(&x)) {
                _cleanup_free_ char *bad = set_str(&x), *who = NULL;

                if (!bad || kubelet_cpu_state_describe(kubelet, &x, &who) < 0)
                        return -ENOMEM;
                r = strv_extendf(
                        warnings, "%scpu-list %s overlaps CPU%s %s held by the kubelet's CPU manager: %s",
                        prefix, l, cpuset_count(&x) == 1 ? "" : "s", bad, who);
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * Warnings for a literal cpu-list of a policy or thread rule (plan_literal_warnings(), the
 * holders being the earlier policies), each recorded with where: the place the cpu-list is
 * written.
 */
static int literal_warnings(
        const PlanContext *ctx, const CpuSelector *s, const char *prefix, const Location *where,
        PolicyPlan *pp) {
        _cleanup_strv_free_ char **lines = NULL;
        int r;

        r = plan_literal_warnings(
                &s->literal, ctx->topology, ctx->reserve, ctx->earlier, ctx->n_earlier, ctx->kubelet, prefix,
                &lines);
        if (r < 0)
                return r;
        STRV_FOREACH (line, lines) {
                r = policy_plan_warn(pp, where, "%s", *line);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- users ---- */

/* Resolves a user: name or decimal uid. Returns 0, -ENOENT/-EIO with a reason, -ENOMEM. */
static int resolve_user(const char *user, uid_t *ret, char **ret_reason) {
        _cleanup_free_ char *buf = NULL;
        struct passwd pw, *result = NULL;
        long size_max = sysconf(_SC_GETPW_R_SIZE_MAX);
        size_t size = size_max > 0 ? (size_t)size_max : 1024;
        int r;

        if (*user && strspn(user, "0123456789") == strlen(user)) {
                unsigned long long v;
                char *end;

                errno = 0;
                v = strtoull(user, &end, 10);
                if (errno != 0 || *end || v >= (uid_t)-1 || (uid_t)v != v)
                        return plan_reasonf(-ERANGE, ret_reason, "user \"%s\" is not a valid uid", user);
                *ret = (uid_t)v;
                return 0;
        }

        for (;;) {
                buf = malloc(size);
                if (!buf)
                        return -ENOMEM;
                r = getpwnam_r(user, &pw, buf, size, &result);
                if (r != ERANGE)
                        break;
                if (size > 1024 * 1024)
                        break;
                size *= 2;
                buf = mfree(buf);
        }

        if (r == 0 && result) {
                *ret = result->pw_uid;
                return 0;
        }
        if (r == 0 || r == ENOENT || r == ESRCH || r == EBADF || r == EPERM)
                return plan_reasonf(-ENOENT, ret_reason, "user \"%s\" does not exist", user);
        if (r == ENOMEM)
                return -ENOMEM;
        return plan_reasonf(-r, ret_reason, "could not look up user \"%s\": %s", user, strerror(r));
}

static int resolve_users(const Matcher *m, PolicyPlan *pp, char **ret_reason) {
        size_t n = strv_length(m->user);
        int r;

        if (n == 0)
                return 0;

        pp->uids = calloc(n, sizeof(uid_t));
        if (!pp->uids)
                return -ENOMEM;

        STRV_FOREACH (u, m->user) {
                uid_t uid = 0;
                bool dup = false;

                r = resolve_user(*u, &uid, ret_reason);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < pp->n_uids; i++)
                        dup = dup || pp->uids[i] == uid;
                if (!dup)
                        pp->uids[pp->n_uids++] = uid;
        }
        return 0;
}

/* ---- policies ---- */

static void policy_plan_done(PolicyPlan *pp) {
        free(pp->pending_reason);
        cpuset_done(&pp->cpus);
        cpuset_done(&pp->nodes);
        cpuset_done(&pp->memory_nodes);
        cpuset_done(&pp->exclusive_cpus);
        strv_free(pp->explanation);
        if (pp->threads)
                for (size_t i = 0; i < pp->n_threads; i++) {
                        cpuset_done(&pp->threads[i].cpus);
                        free(pp->threads[i].spread_order);
                }
        free(pp->threads);
        free(pp->process_order);
        free(pp->uids);
        strv_free(pp->warnings);
        free(pp->warning_locations);
        *pp = (PolicyPlan){};
}

/* Forgets what was resolved, so a pending policy carries nothing to apply (and holds nothing). */
static void policy_plan_make_pending(PolicyPlan *pp, char *reason, const Location *where) {
        pp->pending_reason = reason;
        pp->pending_location = where;
        pp->has_cpus = false;
        pp->has_memory = false;
        cpuset_done(&pp->cpus);
        cpuset_done(&pp->nodes);
        cpuset_done(&pp->memory_nodes);
        cpuset_done(&pp->exclusive_cpus);
        pp->explanation = strv_free(pp->explanation);
        for (size_t i = 0; i < pp->n_threads; i++) {
                pp->threads[i].has_cpus = false;
                cpuset_done(&pp->threads[i].cpus);
                pp->threads[i].spread_order = mfree(pp->threads[i].spread_order);
                pp->threads[i].n_spread_order = 0;
        }
        pp->process_order = mfree(pp->process_order);
        pp->n_process_order = 0;
        pp->uids = mfree(pp->uids);
        pp->n_uids = 0;
}

/*
 * Takes what a resolution says besides its set into pp: explanation lines and notes (as
 * warnings about where), each with prefix, and its exclusive holding.
 */
static int policy_plan_adopt(PolicyPlan *pp, Resolution *res, const char *prefix, const Location *where) {
        int r;

        STRV_FOREACH (l, res->explanation) {
                r = strv_extendf(&pp->explanation, "%s%s", prefix, *l);
                if (r < 0)
                        return r;
        }
        STRV_FOREACH (n, res->notes) {
                r = policy_plan_warn(pp, where, "%s%s", prefix, *n);
                if (r < 0)
                        return r;
        }
        return cpuset_or(&pp->exclusive_cpus, &res->held);
}

/*
 * The set spread rules draw from when the policy has no cpus: what a bare selector gives
 * (online, allowed, not reserved, not held). Returns 0, -ENOMEM, or a pending reason.
 */
static int resolve_bare(const PlanContext *ctx, CpuSet *ret, char **ret_reason) {
        _cleanup_(resolution_done) Resolution res = {};
        CpuSelector bare = {.kind = CPU_SELECTOR_MAPPING};
        int r;

        r = plan_context_resolve(ctx, &bare, &res, ret_reason);
        if (r < 0)
                return r;
        set_move(ret, &res.cpus);
        return 0;
}

/*
 * memory: into pp->memory_nodes: local → the NUMA nodes of the policy's CPUs (every node of the
 * machine when the policy has no cpus:); a node list → as written, each node checked to exist.
 * Adds the explanation line "memory: nodes 1" (the word of the key, whatever the count). Returns 0, -ENOMEM,
 * or -ENOENT with a reason.
 */
static int resolve_memory(const PlanContext *ctx, const Policy *p, PolicyPlan *pp, char **ret_reason) {
        const CpuSet *exist = topology_nodes(ctx->topology);
        _cleanup_free_ char *l = NULL;
        int r;

        switch (p->memory.kind) {
        case MEMORY_NONE:
                return 0;
        case MEMORY_LOCAL:
                r = cpuset_copy(&pp->memory_nodes, pp->has_cpus ? &pp->nodes : exist);
                if (r < 0)
                        return r;
                break;
        case MEMORY_NODES: {
                r = plan_reason_missing(
                        &p->memory.nodes, exist, "memory: ", "NUMA node", "node", ret_reason);
                if (r != 0)
                        return r;
                r = cpuset_copy(&pp->memory_nodes, &p->memory.nodes);
                if (r < 0)
                        return r;
                break;
        }
        }

        l = set_str(&pp->memory_nodes);
        if (!l)
                return -ENOMEM;
        r = strv_extendf(
                &pp->explanation, "memory: nodes %s%s", l,
                p->memory.kind == MEMORY_LOCAL && !pp->has_cpus
                        ? " (nodes: local without cpus: is every node)"
                        : "");
        if (r < 0)
                return r;
        pp->has_memory = true;
        return 0;
}

/* Resolves one policy into *pp (zeroed by the caller). Returns 0 (pending or not) or -ENOMEM. */
static int policy_plan_resolve(const PlanContext *ctx, const Policy *p, PolicyPlan *pp) {
        _cleanup_free_ char *reason = NULL;
        _cleanup_cpuset_ CpuSet bare = CPUSET_NULL;
        const Location *where = &p->location;
        bool have_bare = false;
        int r;

        pp->policy = p;
        if (p->n_threads > 0) {
                pp->threads = calloc(p->n_threads, sizeof(ThreadPlan));
                pp->n_threads = pp->threads ? p->n_threads : 0;
                if (!pp->threads)
                        return -ENOMEM;
        }

        /* The policy's own set. */
        if (p->cpus.kind == CPU_SELECTOR_LITERAL) {
                r = literal_warnings(ctx, &p->cpus, "", selector_location(&p->cpus, &p->location), pp);
                if (r < 0)
                        return r;
        }
        if (p->cpus.kind != CPU_SELECTOR_NONE) {
                _cleanup_(resolution_done) Resolution res = {};

                r = plan_context_resolve(ctx, &p->cpus, &res, &reason);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        where = selector_location(&p->cpus, &p->location);
                        goto pending;
                }
                r = policy_plan_adopt(pp, &res, "", selector_location(&p->cpus, &p->location));
                if (r < 0)
                        return r;
                set_move(&pp->cpus, &res.cpus);
                pp->has_cpus = true;
        }

        /* Thread rules with their own cpus: standalone. */
        for (size_t i = 0; i < p->n_threads; i++) {
                const ThreadRule *rule = &p->threads[i];
                const Location *rule_where = selector_location(
                        &rule->cpus, rule->location.line > 0 ? &rule->location : &p->location);
                _cleanup_(resolution_done) Resolution res = {};
                _cleanup_free_ char *prefix = NULL, *rule_reason = NULL;

                if (rule->cpus.kind == CPU_SELECTOR_NONE || rule->cpus.kind == CPU_SELECTOR_SPREAD)
                        continue;

                if (asprintf(&prefix, "thread rule \"%s\": ", rule->name) < 0)
                        return -ENOMEM;
                if (rule->cpus.kind == CPU_SELECTOR_LITERAL) {
                        r = literal_warnings(ctx, &rule->cpus, prefix, rule_where, pp);
                        if (r < 0)
                                return r;
                }
                r = plan_context_resolve(ctx, &rule->cpus, &res, &rule_reason);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (asprintf(&reason, "%s%s", prefix, rule_reason) < 0)
                                return -ENOMEM;
                        where = rule_where;
                        goto pending;
                }
                r = policy_plan_adopt(pp, &res, prefix, rule_where);
                if (r < 0)
                        return r;
                set_move(&pp->threads[i].cpus, &res.cpus);
                pp->threads[i].has_cpus = true;
        }

        /* Spread rules, and processes: spread: over the policy's set. */
        for (size_t i = 0; i <= p->n_threads; i++) {
                bool processes = i == p->n_threads;
                const ThreadRule *rule = processes ? NULL : &p->threads[i];
                const CpuSet *set = &pp->cpus;
                unsigned **order;
                size_t *n_order;

                if (processes ? !p->spread_processes : rule->cpus.kind != CPU_SELECTOR_SPREAD)
                        continue;

                if (!pp->has_cpus) {
                        if (!have_bare) {
                                _cleanup_free_ char *bare_reason = NULL;

                                r = resolve_bare(ctx, &bare, &bare_reason);
                                if (r == -ENOMEM)
                                        return r;
                                if (r < 0) {
                                        if (processes ? asprintf(
                                                                &reason, "processes: spread: %s",
                                                                bare_reason) < 0
                                                      : asprintf(
                                                                &reason,
                                                                "thread rule \"%s\": cpus: spread: %s",
                                                                rule->name, bare_reason) < 0)
                                                return -ENOMEM;
                                        where = processes ? &p->processes_location
                                                          : selector_location(
                                                                    &rule->cpus,
                                                                    rule->location.line > 0 ? &rule->location
                                                                                            : &p->location);
                                        goto pending;
                                }
                                have_bare = true;
                        }
                        set = &bare;
                }

                if (processes) {
                        order = &pp->process_order;
                        n_order = &pp->n_process_order;
                } else {
                        order = &pp->threads[i].spread_order;
                        n_order = &pp->threads[i].n_spread_order;
                        pp->threads[i].spread = true;
                        pp->threads[i].spread_over_policy = rule->spread_over_policy;
                }
                r = plan_spread_order(ctx->topology, set, order, n_order);
                if (r < 0)
                        return r;
                if (!pp->has_cpus) {
                        _cleanup_free_ char *l = set_str(&bare);

                        if (!l)
                                return -ENOMEM;
                        r = processes
                                ? strv_extendf(
                                          &pp->explanation,
                                          "processes: spread over the online CPUs neither reserved nor "
                                          "held (the policy has no cpus:): %s",
                                          l)
                                : strv_extendf(
                                          &pp->explanation,
                                          "thread rule \"%s\": spread over the online CPUs neither "
                                          "reserved nor held (the policy has no cpus:): %s",
                                          rule->name, l);
                        if (r < 0)
                                return r;
                }
        }

        /* user: entries. */
        r = resolve_users(&p->match, pp, &reason);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                goto pending;

        if (pp->has_cpus) {
                r = topology_nodes_of_cpus(ctx->topology, &pp->cpus, &pp->nodes);
                if (r < 0)
                        return r;
        }

        /* memory: after the CPUs, whose nodes nodes: local names. */
        r = resolve_memory(ctx, p, pp, &reason);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                where = p->memory.location.line > 0 ? &p->memory.location : &p->location;
                goto pending;
        }

        /* within: cpuset — what the set above is to each process (plan_narrow_to_cpuset()). */
        if (pp->has_cpus && p->cpus.within == WITHIN_CPUSET) {
                pp->within_cpuset = true;
                r = strv_extendf(
                        &pp->explanation,
                        "within: cpuset: each process gets those of these CPUs its cgroup allows");
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < p->n_threads; i++)
                if (pp->threads[i].has_cpus && p->threads[i].cpus.within == WITHIN_CPUSET) {
                        pp->within_cpuset = true;
                        r = strv_extendf(
                                &pp->explanation,
                                "thread rule \"%s\": within: cpuset: each process's threads get those of "
                                "these CPUs its cgroup allows",
                                p->threads[i].name);
                        if (r < 0)
                                return r;
                }
        return 0;

pending:
        policy_plan_make_pending(pp, TAKE_PTR(reason), where);
        return 0;
}

/*
 * Resolves the reserve selector s with its cores: count narrowed to the package or NUMA node
 * domain (per: package or node; RESERVE_PER_NONE: domain ignored) against t with no reserve
 * and no holdings: whole cores. Adds the chosen cores to p->reserve and the steps to
 * p->reserve_explanation, each prefixed with prefix; a count that can't be met here adds a
 * warning instead. Returns 0 or -ENOMEM.
 */
static int reserve_resolve_one(
        const ReserveSelector *rs, const Topology *t, unsigned domain, const char *prefix, Plan *p) {
        _cleanup_(resolution_done) Resolution res = {};
        _cleanup_cpuset_ CpuSet only = CPUSET_NULL, empty = CPUSET_NULL;
        _cleanup_free_ char *reason = NULL, *sel = NULL;
        PlanContext ctx = {.topology = t, .reserve = &empty, .held = &empty, .lowest_cores = true};
        CpuSelector one = rs->cpus; /* shallow: borrows what rs->cpus owns */
        int r, r2;

        if (rs->per != RESERVE_PER_NONE) {
                r = cpuset_add(&only, domain);
                if (r < 0)
                        return r;
                if (rs->per == RESERVE_PER_PACKAGE) {
                        one.has_packages = true;
                        one.packages = only;
                } else {
                        one.has_nodes = true;
                        one.nodes = only;
                }
        }

        r = plan_context_resolve(&ctx, &one, &res, &reason);
        if (r == -ENOMEM)
                return r;
        r2 = reserve_selector_format(rs, &sel);
        if (r2 < 0)
                return r2;
        if (r < 0)
                return strv_extendf(
                        &p->warnings, "reserve %s: %s%s; nothing reserved%s%s", sel, prefix,
                        reason ?: "can't be resolved here", *prefix ? " there" : "",
                        *prefix ? "" : " (every CPU is open to policies)");
        STRV_FOREACH (note, res.notes) {
                r = strv_extendf(&p->warnings, "reserve %s: %s%s", sel, prefix, *note);
                if (r < 0)
                        return r;
        }
        STRV_FOREACH (line, res.explanation) {
                r = strv_extendf(&p->reserve_explanation, "%s%s", prefix, *line);
                if (r < 0)
                        return r;
        }
        return cpuset_or(&p->reserve, &res.cpus);
}

/*
 * The reserve as a selector (Config.reserve_selector): whole cores, cores: N in all or, with
 * per:, in each package or NUMA node that has a CPU of what the selector covers on t (its
 * nodes:, packages:, near:, kind: without the count). What can't be resolved here reserves
 * nothing (there) and is a warning. Returns 0 or -ENOMEM.
 */
static int plan_resolve_reserve_selector(const Config *c, const Topology *t, Plan *p) {
        const ReserveSelector *rs = &c->reserve_selector;
        _cleanup_(resolution_done) Resolution where = {};
        _cleanup_cpuset_ CpuSet empty = CPUSET_NULL, in = CPUSET_NULL;
        _cleanup_free_ char *reason = NULL, *sel = NULL, *l = NULL;
        PlanContext ctx = {.topology = t, .reserve = &empty, .held = &empty};
        CpuSelector uncounted = rs->cpus; /* shallow: borrows what rs->cpus owns */
        int r;

        r = reserve_selector_format(rs, &sel);
        if (r < 0)
                return r;

        if (rs->per == RESERVE_PER_NONE)
                r = reserve_resolve_one(rs, t, 0, "", p);
        else {
                /* Where the selector reaches on this machine: the domains to take cores in. */
                uncounted.n_cores = 0;
                r = plan_context_resolve(&ctx, &uncounted, &where, &reason);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return strv_extendf(
                                &p->warnings,
                                "reserve %s: %s; nothing reserved (every CPU is open to policies)", sel,
                                reason ?: "can't be resolved here");

                CPUSET_FOREACH (
                        domain, rs->per == RESERVE_PER_PACKAGE ? topology_packages(t) : topology_nodes(t)) {
                        _cleanup_free_ char *prefix = NULL;
                        CpuSet one = CPUSET_NULL;

                        r = cpuset_add(&one, domain);
                        if (r >= 0)
                                r = rs->per == RESERVE_PER_PACKAGE ? topology_cpus_of_packages(t, &one, &in)
                                                                   : topology_cpus_of_nodes(t, &one, &in);
                        cpuset_done(&one);
                        if (r < 0)
                                return r;
                        if (!cpuset_intersects(&in, &where.cpus))
                                continue;
                        if (asprintf(
                                    &prefix, "%s %u: ",
                                    rs->per == RESERVE_PER_PACKAGE ? "package" : "NUMA node", domain) < 0)
                                return -ENOMEM;
                        r = reserve_resolve_one(rs, t, domain, prefix, p);
                        if (r < 0)
                                return r;
                }
        }
        if (r < 0)
                return r;

        l = set_str(&p->reserve);
        if (!l)
                return -ENOMEM;
        return strv_extendf(
                &p->reserve_explanation, "reserve %s: whole cores, every SMT sibling: %s", sel, l);
}

/* The reserve: its online CPUs, with warnings for offline ones and split cores. */
static int plan_resolve_reserve(const Config *c, const Topology *t, Plan *p) {
        const CpuSet *online = topology_online_cpus(t), *all = topology_all_cpus(t);
        _cleanup_cpuset_ CpuSet missing = CPUSET_NULL, off = CPUSET_NULL, split = CPUSET_NULL,
                                sib = CPUSET_NULL;
        _cleanup_free_ char *l = NULL;
        int r;

        if (!c->has_reserve)
                return 0;
        if (c->reserve_selector.cpus.kind == CPU_SELECTOR_MAPPING)
                return plan_resolve_reserve_selector(c, t, p);

        r = set_and(&p->reserve, &c->reserve, online);
        if (r < 0)
                return r;

        l = set_str(&c->reserve);
        if (!l)
                return -ENOMEM;

        /* CPUs this machine doesn't have at all, then those it has but not online. */
        r = set_andnot(&missing, &c->reserve, all);
        if (r < 0)
                return r;
        if (!cpuset_is_empty(&missing)) {
                _cleanup_free_ char *m = set_str(&missing), *a = set_str(all);
                bool one = cpuset_count(&missing) == 1;

                if (!m || !a)
                        return -ENOMEM;
                r = strv_extendf(
                        &p->warnings, "reserve: CPU%s %s %s not exist here (CPUs here: %s)", one ? "" : "s",
                        m, one ? "does" : "do", a);
                if (r < 0)
                        return r;
        }

        r = set_and(&off, &c->reserve, all);
        if (r < 0)
                return r;
        cpuset_andnot(&off, online);
        if (!cpuset_is_empty(&off)) {
                _cleanup_free_ char *o = set_str(&off), *on = set_str(online);

                if (!o || !on)
                        return -ENOMEM;
                r = strv_extendf(
                        &p->warnings, "reserve %s names CPU%s %s that %s not online here (online: %s)", l,
                        cpuset_count(&off) == 1 ? "" : "s", o, cpuset_count(&off) == 1 ? "is" : "are", on);
                if (r < 0)
                        return r;
        }

        /* SMT siblings of reserved CPUs that are not reserved themselves. */
        CPUSET_FOREACH (cpu, &p->reserve) {
                if (topology_core_siblings(t, cpu, &sib) < 0)
                        continue;
                cpuset_andnot(&sib, &p->reserve);
                cpuset_and(&sib, online);
                r = cpuset_or(&split, &sib);
                if (r < 0)
                        return r;
        }
        if (!cpuset_is_empty(&split)) {
                _cleanup_free_ char *s = set_str(&split);

                if (!s)
                        return -ENOMEM;
                r = strv_extendf(
                        &p->warnings, "reserve %s splits SMT cores: sibling CPU%s %s %s not reserved", l,
                        cpuset_count(&split) == 1 ? "" : "s", s, cpuset_count(&split) == 1 ? "is" : "are");
                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_new(const Config *c, const Topology *t, Plan **ret) {
        return plan_new_with(c, t, NULL, ret);
}

int plan_new_with(const Config *c, const Topology *t, const PlanInputs *in, Plan **ret) {
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_cpuset_ CpuSet held = CPUSET_NULL;
        PlanContext ctx;
        int r;

        p = calloc(1, sizeof(Plan));
        if (!p)
                return -ENOMEM;
        p->config = c;
        r = kubelet_cpu_state_copy(in ? in->kubelet : NULL, &p->kubelet);
        if (r < 0)
                return r;

        r = plan_resolve_reserve(c, t, p);
        if (r < 0)
                return r;

        if (c->n_policies > 0) {
                p->policies = calloc(c->n_policies, sizeof(PolicyPlan));
                if (!p->policies)
                        return -ENOMEM;
        }
        p->n_policies = c->n_policies;

        ctx = (PlanContext){
                .topology = t,
                .reserve = &p->reserve,
                .reserve_given = plan_reserve_given(p),
                .earlier = p->policies,
                .held = &held,
                .kubelet = p->kubelet,
        };
        /* In file order: each policy sees what the ones before it hold. */
        for (size_t i = 0; i < c->n_policies; i++) {
                ctx.n_earlier = i;
                r = policy_plan_resolve(&ctx, &c->policies[i], &p->policies[i]);
                if (r < 0)
                        return r;
                r = cpuset_or(&held, &p->policies[i].exclusive_cpus);
                if (r < 0)
                        return r;
        }

        r = match_index_new(p->policies, p->n_policies, &p->match_index);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;

        for (size_t i = 0; i < p->n_policies; i++)
                if (p->policies[i].policy)
                        policy_plan_done(&p->policies[i]);
        free(p->policies);
        match_index_free(p->match_index);
        cpuset_done(&p->reserve);
        kubelet_cpu_state_free(p->kubelet);
        strv_free(p->warnings);
        strv_free(p->reserve_explanation);
        free(p);
        return NULL;
}

const PolicyPlan *plan_find_policy(const Plan *p, const char *name) {
        const Policy *policy = p ? config_find_policy(p->config, name) : NULL;

        /* p->policies is parallel to p->config->policies. */
        return policy ? &p->policies[policy - p->config->policies] : NULL;
}

const CpuSet *plan_reserve_given(const Plan *p) {
        if (!p || !p->config || !p->config->has_reserve)
                return NULL;
        if (p->config->reserve_selector.cpus.kind == CPU_SELECTOR_MAPPING)
                return &p->reserve;
        return &p->config->reserve;
}

size_t plan_n_pending(const Plan *plan) {
        size_t n = 0;
        for (size_t i = 0; plan && i < plan->n_policies; i++)
                if (plan->policies[i].pending_reason)
                        n++;
        return n;
}

/* ---- within: cpuset ---- */

bool policy_plan_within_cpuset(const PolicyPlan *pp) {
        return pp && pp->within_cpuset;
}

/* A copy of n bytes at p (n > 0), or NULL on OOM. */
static void *copy_bytes(const void *p, size_t n) {
        void *c = malloc(n);

        return c ? memcpy(c, p, n) : NULL;
}

void policy_plan_clear(PolicyPlan *pp) {
        if (pp)
                policy_plan_done(pp); /* reads nothing of pp->policy, which may be gone */
}

/*
 * *set narrowed to allowed, unless they don't meet: then *set is left as it is (the kernel
 * refuses it and placement reports the conflict). Adds an explanation line to pp either way.
 * Returns 0 or -ENOMEM.
 */
static int narrow_set(PolicyPlan *pp, const char *prefix, CpuSet *set, const CpuSet *allowed) {
        _cleanup_free_ char *before = set_str(set), *cg = set_str(allowed), *after = NULL;

        if (!before || !cg)
                return -ENOMEM;
        if (!cpuset_intersects(set, allowed))
                return strv_extendf(
                        &pp->explanation,
                        "%swithin: cpuset: its cgroup allows %s, none of %s (left to the kernel)", prefix,
                        cg, before);
        cpuset_and(set, allowed);
        after = set_str(set);
        if (!after)
                return -ENOMEM;
        return strv_extendf(
                &pp->explanation, "%swithin: cpuset: its cgroup allows %s: %s", prefix, cg, after);
}

int plan_narrow_to_cpuset(const PolicyPlan *pp, const Topology *t, const CpuSet *allowed, PolicyPlan *ret) {
        _cleanup_(policy_plan_clear) PolicyPlan n = {};
        const Policy *p;
        int r;

        if (!policy_plan_within_cpuset(pp) || !allowed || cpuset_is_empty(allowed))
                return 0;
        p = pp->policy;

        n = (PolicyPlan){
                .policy = p,
                .has_cpus = pp->has_cpus,
                .has_memory = pp->has_memory,
                .n_uids = pp->n_uids,
                .within_cpuset = true,
        };
        if (cpuset_copy(&n.cpus, &pp->cpus) < 0 || cpuset_copy(&n.nodes, &pp->nodes) < 0 ||
            cpuset_copy(&n.memory_nodes, &pp->memory_nodes) < 0)
                return -ENOMEM;
        if (pp->explanation && !(n.explanation = strv_copy(pp->explanation)))
                return -ENOMEM;
        if (pp->warnings) {
                size_t k = strv_length(pp->warnings);

                n.warnings = strv_copy(pp->warnings);
                n.warning_locations = copy_bytes(pp->warning_locations, k * sizeof(*n.warning_locations));
                if (!n.warnings || !n.warning_locations)
                        return -ENOMEM;
        }
        if (pp->n_uids > 0 && !(n.uids = copy_bytes(pp->uids, pp->n_uids * sizeof(*n.uids))))
                return -ENOMEM;
        if (p->n_threads > 0) {
                n.threads = calloc(p->n_threads, sizeof(*n.threads));
                if (!n.threads)
                        return -ENOMEM;
                n.n_threads = p->n_threads;
        }
        for (size_t i = 0; i < p->n_threads; i++) {
                const ThreadPlan *tp = &pp->threads[i];
                ThreadPlan *nt = &n.threads[i];

                nt->has_cpus = tp->has_cpus;
                nt->spread = tp->spread;
                nt->spread_over_policy = tp->spread_over_policy;
                if (cpuset_copy(&nt->cpus, &tp->cpus) < 0)
                        return -ENOMEM;
                if (tp->has_cpus && p->threads[i].cpus.within == WITHIN_CPUSET) {
                        _cleanup_free_ char *prefix = NULL;

                        if (asprintf(&prefix, "thread rule \"%s\": ", p->threads[i].name) < 0)
                                return -ENOMEM;
                        r = narrow_set(&n, prefix, &nt->cpus, allowed);
                        if (r < 0)
                                return r;
                }
        }

        if (n.has_cpus && p->cpus.within == WITHIN_CPUSET) {
                r = narrow_set(&n, "", &n.cpus, allowed);
                if (r < 0)
                        return r;
                r = topology_nodes_of_cpus(t, &n.cpus, &n.nodes);
                if (r < 0)
                        return r;
                if (p->memory.kind == MEMORY_LOCAL && cpuset_copy(&n.memory_nodes, &n.nodes) < 0)
                        return -ENOMEM;
        }

        /* Spread rules: pp's order (one PU of every core first, in the packed order of the policy's
         * set), keeping the CPUs the narrowed set has; over pp's set when the policy's is not within:. */
        for (size_t i = 0; i < p->n_threads; i++) {
                const ThreadPlan *tp = &pp->threads[i];
                ThreadPlan *nt = &n.threads[i];
                size_t k = 0;

                if (!tp->spread || tp->n_spread_order == 0)
                        continue;
                nt->spread_order = calloc(tp->n_spread_order, sizeof(unsigned));
                if (!nt->spread_order)
                        return -ENOMEM;
                for (size_t j = 0; j < tp->n_spread_order; j++)
                        if (!n.has_cpus || cpuset_contains(&n.cpus, tp->spread_order[j]))
                                nt->spread_order[k++] = tp->spread_order[j];
                nt->n_spread_order = k;
        }

        *ret = n;
        n = (PolicyPlan){};
        return 1;
}
