/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Planning: each policy's selectors become concrete CPU sets against a topology, in file
 * order. Nothing here touches the kernel: the inputs are the Config, the Topology and the
 * user database (getpwnam_r), so the same inputs always give the same plan.
 *
 * A selector mapping is a pipeline over a set of candidate CPUs: start from the online,
 * allowed CPUs; narrow by NUMA nodes and packages; apply the reserve. Each step that empties
 * the set stops with a reason naming that step, so a pending policy says what went wrong.
 */

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* What resolution needs besides the selector. Later: CPUs held by exclusive policies. */
typedef struct PlanContext {
        const Topology *topology;
        const CpuSet *reserve;       /* online reserved CPUs; never NULL */
        const CpuSet *reserve_given; /* the reserve as configured; NULL when none was given */
} PlanContext;

/* ---- small helpers ---- */

/* "0-3", or "none" for the empty set, for messages. NULL on OOM. */
static char *set_str(const CpuSet *s) {
        if (cpuset_is_empty(s))
                return strdup("none");
        return cpuset_to_string(s);
}

/* Appends a formatted string to the NULL-terminated vector *l. Returns 0 or -ENOMEM. */
_printf_(2, 3) static int strv_extendf(char ***l, const char *format, ...) {
        size_t n = strv_length(*l);
        char **nl, *s = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        nl = reallocarray(*l, n + 2, sizeof(char *));
        if (!nl) {
                free(s);
                return -ENOMEM;
        }
        nl[n] = s;
        nl[n + 1] = NULL;
        *l = nl;
        return 0;
}

/* Sets *ret to a newly formatted reason. Returns error (the errno to pass on) or -ENOMEM. */
_printf_(3, 4) static int reasonf(int error, char **ret, const char *format, ...) {
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

/* dst := a ∩ b. Returns 0 or -ENOMEM. */
static int set_and(CpuSet *dst, const CpuSet *a, const CpuSet *b) {
        int r = cpuset_copy(dst, a);
        if (r < 0)
                return r;
        cpuset_and(dst, b);
        return 0;
}

/* dst := a \ b. Returns 0 or -ENOMEM. */
static int set_andnot(CpuSet *dst, const CpuSet *a, const CpuSet *b) {
        int r = cpuset_copy(dst, a);
        if (r < 0)
                return r;
        cpuset_andnot(dst, b);
        return 0;
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

/* "NUMA node 1", "NUMA nodes 0-1", "package 0", "NUMA node 1 in package 0", "the online CPUs". */
static char *selector_describe(const CpuSelector *s) {
        _cleanup_free_ char *nodes = NULL, *packages = NULL;
        char *d = NULL;
        int r;

        if (s->has_nodes && !(nodes = set_str(&s->nodes)))
                return NULL;
        if (s->has_packages && !(packages = set_str(&s->packages)))
                return NULL;

        if (s->has_nodes && s->has_packages)
                r = asprintf(
                        &d, "NUMA node%s %s in package%s %s", cpuset_count(&s->nodes) == 1 ? "" : "s", nodes,
                        cpuset_count(&s->packages) == 1 ? "" : "s", packages);
        else if (s->has_nodes)
                r = asprintf(&d, "NUMA node%s %s", cpuset_count(&s->nodes) == 1 ? "" : "s", nodes);
        else if (s->has_packages)
                r = asprintf(&d, "package%s %s", cpuset_count(&s->packages) == 1 ? "" : "s", packages);
        else
                r = asprintf(&d, "the online CPUs");
        return r < 0 ? NULL : d;
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
        _cleanup_cpuset_ CpuSet missing = CPUSET_NULL;
        int r;

        r = set_andnot(&missing, want, exist);
        if (r < 0)
                return r;
        if (!cpuset_is_empty(&missing)) {
                _cleanup_free_ char *m = set_str(&missing), *e = set_str(exist);
                bool one = cpuset_count(&missing) == 1;

                if (!m || !e)
                        return -ENOMEM;
                return reasonf(
                        -ENOENT, ret_reason, "%s%s %s %s not exist here (%ss: %s)", word, one ? "" : "s", m,
                        one ? "does" : "do", nodes ? "node" : "package", e);
        }

        r = nodes ? topology_cpus_of_nodes(ctx->topology, want, domain_cpus)
                  : topology_cpus_of_packages(ctx->topology, want, domain_cpus);
        if (r < 0)
                return r; /* -ENOENT can't happen: every domain exists */

        cpuset_and(cpus, domain_cpus);
        return 0;
}

/* Literal cpu-list: taken as written, minus what is not online. */
static int resolve_literal(const PlanContext *ctx, const CpuSelector *s, CpuSet *ret, char **ret_reason) {
        const CpuSet *online = topology_online_cpus(ctx->topology);
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        int r;

        r = set_and(&cpus, &s->literal, online);
        if (r < 0)
                return r;
        if (cpuset_is_empty(&cpus)) {
                _cleanup_free_ char *l = set_str(&s->literal), *o = set_str(online);

                if (!l || !o)
                        return -ENOMEM;
                if (cpuset_count(&s->literal) == 1)
                        return reasonf(-EINVAL, ret_reason, "CPU %s is not online here (online: %s)", l, o);
                return reasonf(-EINVAL, ret_reason, "none of CPUs %s is online here (online: %s)", l, o);
        }

        cpuset_done(ret);
        *ret = cpus;
        cpus = CPUSET_NULL;
        return 0;
}

static int resolve_mapping(const PlanContext *ctx, const CpuSelector *s, CpuSet *ret, char **ret_reason) {
        const Topology *t = ctx->topology;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, node_cpus = CPUSET_NULL, package_cpus = CPUSET_NULL,
                                selected = CPUSET_NULL;
        _cleanup_free_ char *what = NULL;
        int r;

        what = selector_describe(s);
        if (!what)
                return -ENOMEM;

        /* 1. Online CPUs the machine's cpuset allows. */
        r = cpuset_copy(&cpus, topology_allowed_cpus(t));
        if (r < 0)
                return r;
        if (cpuset_is_empty(&cpus))
                return reasonf(-EINVAL, ret_reason, "no CPU is online and allowed here");

        /* 2. Nodes and packages. */
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
                _cleanup_free_ char *sel = NULL, *allowed = NULL;

                if (s->has_nodes && s->has_packages && !cpuset_intersects(&node_cpus, &package_cpus))
                        return reasonf(
                                -EINVAL, ret_reason, "%s: the nodes and packages have no CPU in common",
                                what);

                /* What the domains hold, online or not. */
                if (s->has_nodes && s->has_packages)
                        r = set_and(&selected, &node_cpus, &package_cpus);
                else
                        r = cpuset_copy(&selected, s->has_nodes ? &node_cpus : &package_cpus);
                if (r < 0)
                        return r;
                if (cpuset_is_empty(&selected))
                        return reasonf(
                                -EINVAL, ret_reason, "%s %s no CPU", what,
                                (s->has_nodes ? cpuset_count(&s->nodes) : cpuset_count(&s->packages)) == 1
                                        ? "has"
                                        : "have");

                sel = set_str(&selected);
                allowed = set_str(topology_allowed_cpus(t));
                if (!sel || !allowed)
                        return -ENOMEM;
                return reasonf(
                        -EINVAL, ret_reason, "no CPU of %s (%s) is online and allowed here (%s)", what, sel,
                        allowed);
        }

        /* 3. The reserve. */
        switch (s->reserved) {
        case RESERVED_AVOID:
                if (cpuset_is_subset(&cpus, ctx->reserve)) {
                        _cleanup_free_ char *c = set_str(&cpus), *rs = reserve_describe(ctx);

                        if (!c || !rs)
                                return -ENOMEM;
                        return reasonf(
                                -EINVAL, ret_reason,
                                "every CPU of %s (%s) is reserved (%s); "
                                "use reserved: allow or only to place on them",
                                what, c, rs);
                }
                cpuset_andnot(&cpus, ctx->reserve);
                break;

        case RESERVED_ONLY:
                if (!cpuset_intersects(&cpus, ctx->reserve)) {
                        _cleanup_free_ char *c = set_str(&cpus), *rs = reserve_describe(ctx);

                        if (!c || !rs)
                                return -ENOMEM;
                        return reasonf(
                                -EINVAL, ret_reason,
                                "reserved: only, but no CPU of %s (%s) is reserved (%s)", what, c, rs);
                }
                cpuset_and(&cpus, ctx->reserve);
                break;

        case RESERVED_ALLOW:
                break;
        }

        cpuset_done(ret);
        *ret = cpus;
        cpus = CPUSET_NULL;
        return 0;
}

static int resolve_selector(const PlanContext *ctx, const CpuSelector *s, CpuSet *ret, char **ret_reason) {
        switch (s->kind) {
        case CPU_SELECTOR_LITERAL:
                return resolve_literal(ctx, s, ret, ret_reason);
        case CPU_SELECTOR_MAPPING:
                return resolve_mapping(ctx, s, ret, ret_reason);
        case CPU_SELECTOR_NONE:
                break;
        case CPU_SELECTOR_SPREAD:
                return reasonf(-EINVAL, ret_reason, "\"spread\" is only valid in a thread rule");
        }
        return reasonf(-EINVAL, ret_reason, "no CPU selector");
}

int plan_resolve_selector(
        const CpuSelector *s, const Topology *t, const CpuSet *reserve, CpuSet *ret, char **ret_reason) {
        static const CpuSet empty = CPUSET_NULL;
        _cleanup_cpuset_ CpuSet online_reserve = CPUSET_NULL;
        _cleanup_free_ char *reason = NULL;
        PlanContext ctx = {.topology = t, .reserve = &empty, .reserve_given = reserve};
        int r;

        if (reserve) {
                r = set_and(&online_reserve, reserve, topology_online_cpus(t));
                if (r < 0)
                        return r;
                ctx.reserve = &online_reserve;
        }

        r = resolve_selector(&ctx, s, ret, &reason);
        if (r < 0 && reason && ret_reason)
                *ret_reason = TAKE_PTR(reason);
        return r;
}

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

/*
 * Warnings for a literal cpu-list: CPUs that don't exist, are offline, disallowed, reserved.
 * where: the place the cpu-list is written.
 */
static int literal_warnings(
        const PlanContext *ctx, const CpuSelector *s, const char *prefix, const Location *where,
        PolicyPlan *pp) {
        const Topology *t = ctx->topology;
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        _cleanup_free_ char *l = NULL;
        int r;

        l = set_str(&s->literal);
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
                {ctx->reserve, NULL, "overlaps the reserve on", ctx->reserve, "reserve"},
        };

        for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
                _cleanup_free_ char *bad = NULL, *context = NULL;

                r = cpuset_copy(&x, &s->literal);
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
                r = policy_plan_warn(
                        pp, where, "%scpu-list %s %s CPU%s %s (%s: %s)", prefix, l, checks[i].what,
                        cpuset_count(&x) == 1 ? "" : "s", bad, checks[i].context_name, context);
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
                        return reasonf(-ERANGE, ret_reason, "user \"%s\" is not a valid uid", user);
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
                return reasonf(-ENOENT, ret_reason, "user \"%s\" does not exist", user);
        if (r == ENOMEM)
                return -ENOMEM;
        return reasonf(-r, ret_reason, "could not look up user \"%s\": %s", user, strerror(r));
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
        strv_free(pp->explanation);
        if (pp->threads)
                for (size_t i = 0; i < pp->policy->n_threads; i++) {
                        cpuset_done(&pp->threads[i].cpus);
                        free(pp->threads[i].spread_order);
                }
        free(pp->threads);
        free(pp->uids);
        strv_free(pp->warnings);
        free(pp->warning_locations);
        *pp = (PolicyPlan){};
}

/* Forgets what was resolved, so a pending policy carries nothing to apply. */
static void policy_plan_make_pending(PolicyPlan *pp, char *reason, const Location *where) {
        pp->pending_reason = reason;
        pp->pending_location = where;
        pp->has_cpus = false;
        cpuset_done(&pp->cpus);
        for (size_t i = 0; i < pp->policy->n_threads; i++) {
                pp->threads[i].has_cpus = false;
                cpuset_done(&pp->threads[i].cpus);
        }
        pp->uids = mfree(pp->uids);
        pp->n_uids = 0;
}

/* Resolves one policy into *pp (zeroed by the caller). Returns 0 (pending or not) or -ENOMEM. */
static int policy_plan_resolve(const PlanContext *ctx, const Policy *p, PolicyPlan *pp) {
        _cleanup_free_ char *reason = NULL;
        const Location *where = &p->location;
        int r;

        pp->policy = p;
        if (p->n_threads > 0) {
                pp->threads = calloc(p->n_threads, sizeof(ThreadPlan));
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
                r = resolve_selector(ctx, &p->cpus, &pp->cpus, &reason);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        where = selector_location(&p->cpus, &p->location);
                        goto pending;
                }
                pp->has_cpus = true;
        }

        /* Thread rules with their own cpus. */
        for (size_t i = 0; i < p->n_threads; i++) {
                const ThreadRule *rule = &p->threads[i];
                const Location *rule_where = selector_location(
                        &rule->cpus, rule->location.line > 0 ? &rule->location : &p->location);
                _cleanup_free_ char *prefix = NULL, *rule_reason = NULL;

                if (rule->cpus.kind == CPU_SELECTOR_NONE)
                        continue;

                if (asprintf(&prefix, "thread rule \"%s\": ", rule->name) < 0)
                        return -ENOMEM;
                if (rule->cpus.kind == CPU_SELECTOR_LITERAL) {
                        r = literal_warnings(ctx, &rule->cpus, prefix, rule_where, pp);
                        if (r < 0)
                                return r;
                }
                r = resolve_selector(ctx, &rule->cpus, &pp->threads[i].cpus, &rule_reason);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (asprintf(&reason, "%s%s", prefix, rule_reason) < 0)
                                return -ENOMEM;
                        where = rule_where;
                        goto pending;
                }
                pp->threads[i].has_cpus = true;
        }

        /* user: entries. */
        r = resolve_users(&p->match, pp, &reason);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                goto pending;

        return 0;

pending:
        policy_plan_make_pending(pp, TAKE_PTR(reason), where);
        return 0;
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
        _cleanup_(plan_freep) Plan *p = NULL;
        PlanContext ctx;
        int r;

        p = calloc(1, sizeof(Plan));
        if (!p)
                return -ENOMEM;
        p->config = c;

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
                .reserve_given = c->has_reserve ? &c->reserve : NULL,
        };
        for (size_t i = 0; i < c->n_policies; i++) {
                r = policy_plan_resolve(&ctx, &c->policies[i], &p->policies[i]);
                if (r < 0)
                        return r;
        }

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
        cpuset_done(&p->reserve);
        strv_free(p->warnings);
        free(p);
        return NULL;
}

const PolicyPlan *plan_find_policy(const Plan *p, const char *name) {
        if (!p || !name)
                return NULL;
        for (size_t i = 0; i < p->n_policies; i++)
                if (streq_ptr(p->policies[i].policy->name, name))
                        return &p->policies[i];
        return NULL;
}
