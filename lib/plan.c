/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Planning: each policy's selectors become concrete CPU sets against a topology, in file
 * order. Nothing here touches the kernel: the inputs are the Config, the Topology and the
 * user database (getpwnam_r), so the same inputs always give the same plan.
 *
 * A selector mapping is a pipeline over a set of candidate CPUs: start from the online,
 * allowed CPUs; narrow by NUMA nodes, packages, the near: device's nodes and the CPU kind;
 * apply the reserve; drop what earlier exclusive policies hold; then take a count if asked.
 * Each step that empties the set stops with a reason naming that step, so a pending policy
 * says what went wrong, and each step that changes it adds a line to the explanation.
 *
 * Counts are packed: the candidate cores are grouped by cache domain (L3), and domains are
 * taken greedily, the one with the most candidate cores first (the one holding the
 * lowest-numbered CPU on ties, and among equals one whose cores sit on NUMA nodes already
 * used); the last domain is any that holds what is still wanted, preferring one on a node
 * already used. Largest-first needs the fewest domains; every domain is tried as the first one
 * and the start giving the fewest domains, then the fewest nodes, wins, so a request that
 * fits one node's L3 caches lands on one node. Within a domain, cores on nodes already used
 * come first, then those of its node with the most candidate cores, then by lowest CPU.
 */

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
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
        const CpuSet *held; /* union of their exclusive_cpus; never NULL */
} PlanContext;

/* ---- small helpers ---- */

/* "0-3", or "none" for the empty set, for messages. NULL on OOM. */
static char *set_str(const CpuSet *s) {
        if (cpuset_is_empty(s))
                return strdup("none");
        return cpuset_to_string(s);
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

/* The earlier policy holding cpu (an index into ctx->earlier), or -1. */
static int holder_of(const PlanContext *ctx, unsigned cpu) {
        for (size_t i = 0; i < ctx->n_earlier; i++)
                if (cpuset_contains(&ctx->earlier[i].exclusive_cpus, cpu))
                        return (int)i;
        return -1;
}

/* "NUMA node%s LIST" or "package%s LIST" for a set of numbers. NULL on OOM. */
static char *numbers_describe(const char *word, const CpuSet *numbers) {
        _cleanup_free_ char *l = set_str(numbers);
        char *d = NULL;

        if (!l || asprintf(&d, "%s%s %s", word, cpuset_count(numbers) == 1 ? "" : "s", l) < 0)
                return NULL;
        return d;
}

/* "NUMA node 1", "NUMA nodes 0-1", "package 0", "NUMA node 1 in package 0"; "" if neither. */
static char *domains_describe(const CpuSelector *s) {
        _cleanup_free_ char *nodes = NULL, *packages = NULL;
        char *d = NULL;
        int r;

        if (s->has_nodes && !(nodes = numbers_describe("NUMA node", &s->nodes)))
                return NULL;
        if (s->has_packages && !(packages = numbers_describe("package", &s->packages)))
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
                n = numbers_describe("NUMA node", near_nodes);
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

/* What resolving one selector gives, besides a pending reason. */
typedef struct Resolution {
        CpuSet cpus;
        CpuSet held;        /* exclusive: what it withholds from later selectors */
        char **explanation; /* lines, see PolicyPlan.explanation */
        char **notes;       /* to become warnings */
} Resolution;

static void resolution_done(Resolution *res) {
        cpuset_done(&res->cpus);
        cpuset_done(&res->held);
        res->explanation = strv_free(res->explanation);
        res->notes = strv_free(res->notes);
}

/* Adds "PREFIX: LIST" to the explanation. Returns 0 or -ENOMEM. */
static int explain_set(Resolution *res, const char *prefix, const CpuSet *set) {
        _cleanup_free_ char *l = set_str(set);

        if (!l)
                return -ENOMEM;
        return strv_extendf(&res->explanation, "%s: %s", prefix, l);
}

/*
 * Narrows *cpus to the CPUs of the domains named in want (nodes or packages). A domain that
 * doesn't exist here is -ENOENT with a reason listing those that do.
 */
/*
 * 0 if every number in want is in exist; else -ENOENT with a reason naming the missing ones,
 * e.g. "memory: NUMA node 7 does not exist here (nodes: 0-1)": prefix, then word ("NUMA node",
 * "package"), and key ("node", "package") for the list of what exists. -ENOMEM.
 */
static int reason_missing(
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
        return reasonf(
                -ENOENT, ret_reason, "%s%s%s %s %s not exist here (%ss: %s)", prefix, word, one ? "" : "s",
                m, one ? "does" : "do", key, e);
}

static int narrow_by_domains(
        const PlanContext *ctx, const CpuSet *want, bool nodes, CpuSet *cpus, CpuSet *domain_cpus,
        char **ret_reason) {
        const CpuSet *exist = nodes ? topology_nodes(ctx->topology) : topology_packages(ctx->topology);
        const char *word = nodes ? "NUMA node" : "package";
        int r;

        r = reason_missing(want, exist, "", word, nodes ? "node" : "package", ret_reason);
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
                        return reasonf(-EINVAL, ret_reason, "CPU %s is not online here (online: %s)", l, o);
                return reasonf(-EINVAL, ret_reason, "none of CPUs %s is online here (online: %s)", l, o);
        }

        if (cpuset_equal(&cpus, &s->literal))
                r = strv_extendf(&res->explanation, "cpu-list %s taken as written", l);
        else {
                _cleanup_free_ char *prefix = NULL;

                if (asprintf(&prefix, "cpu-list %s: its online CPUs", l) < 0)
                        return -ENOMEM;
                r = explain_set(res, prefix, &cpus);
        }
        if (r < 0)
                return r;

        cpuset_done(&res->cpus);
        res->cpus = cpus;
        cpus = CPUSET_NULL;
        return 0;
}

/* ---- cores and packing ---- */

/* The lowest CPU of core number core (cores are never empty). */
static unsigned core_first_cpu(const Topology *t, unsigned core) {
        return (unsigned)cpuset_next(topology_core_cpus(t, core), -1);
}

/* The NUMA node of a core (of its lowest CPU), or -1 when none covers it. */
static int core_node(const Topology *t, unsigned core) {
        int r = topology_node_of_cpu(t, core_first_cpu(t, core));
        return r < 0 ? -1 : r;
}

/*
 * The cores with a PU in set (whole: only those with every PU in it), in the order of their
 * lowest CPU. Returns 0 with a newly allocated array (NULL when there is none), or -ENOMEM.
 */
static int cores_in(const Topology *t, const CpuSet *set, bool whole, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *cores = NULL;
        _cleanup_free_ bool *seen = NULL;
        unsigned n_cores = topology_n_cores(t);
        size_t n = 0;

        if (n_cores == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        seen = calloc(n_cores, sizeof(bool));
        cores = calloc(n_cores, sizeof(unsigned));
        if (!seen || !cores)
                return -ENOMEM;

        /* Visiting CPUs in order meets each core at its lowest CPU in set; whole cores at their lowest. */
        CPUSET_FOREACH (cpu, set) {
                int c = topology_core_of_cpu(t, cpu);

                if (c < 0 || seen[c])
                        continue;
                seen[c] = true;
                if (whole && !cpuset_is_subset(topology_core_cpus(t, c), set))
                        continue;
                cores[n++] = (unsigned)c;
        }

        *ret = n > 0 ? TAKE_PTR(cores) : NULL;
        *ret_n = n;
        return 0;
}

typedef struct PackDomain {
        unsigned domain; /* topology cache domain number: lower holds a lower CPU */
        unsigned *cores; /* candidate cores in it, by lowest CPU */
        size_t n_cores;
} PackDomain;

typedef struct Packer {
        const Topology *t;
        PackDomain *domains; /* by domain number */
        size_t n_domains;
        size_t max_cores; /* of one domain */
} Packer;

static void packer_done(Packer *p) {
        for (size_t i = 0; i < p->n_domains; i++)
                free(p->domains[i].cores);
        p->domains = mfree(p->domains);
        p->n_domains = 0;
}

static int core_compare(const void *a, const void *b, void *userdata) {
        const Topology *t = userdata;
        unsigned x = core_first_cpu(t, *(const unsigned *)a), y = core_first_cpu(t, *(const unsigned *)b);
        return x < y ? -1 : x > y;
}

static int pack_domain_compare(const void *a, const void *b) {
        const PackDomain *x = a, *y = b;
        return x->domain < y->domain ? -1 : x->domain > y->domain;
}

/* Groups cores by cache domain. Returns 0 or -ENOMEM. */
static int packer_init(Packer *p, const Topology *t, const unsigned *cores, size_t n) {
        *p = (Packer){.t = t};

        for (size_t i = 0; i < n; i++) {
                int dom = topology_cache_domain_of_core(t, cores[i]);
                unsigned d = dom < 0 ? UINT32_MAX : (unsigned)dom;
                PackDomain *pd = NULL;
                unsigned *a;

                for (size_t k = 0; k < p->n_domains && !pd; k++)
                        if (p->domains[k].domain == d)
                                pd = &p->domains[k];
                if (!pd) {
                        PackDomain *nd = reallocarray(p->domains, p->n_domains + 1, sizeof(PackDomain));

                        if (!nd)
                                return -ENOMEM;
                        p->domains = nd;
                        pd = &p->domains[p->n_domains++];
                        *pd = (PackDomain){.domain = d};
                }
                a = reallocarray(pd->cores, pd->n_cores + 1, sizeof(unsigned));
                if (!a)
                        return -ENOMEM;
                pd->cores = a;
                pd->cores[pd->n_cores++] = cores[i];
        }

        qsort(p->domains, p->n_domains, sizeof(PackDomain), pack_domain_compare);
        for (size_t k = 0; k < p->n_domains; k++) {
                qsort_r(p->domains[k].cores, p->domains[k].n_cores, sizeof(unsigned), core_compare,
                        (void *)t);
                p->max_cores = MAX(p->max_cores, p->domains[k].n_cores);
        }
        return 0;
}

/* A core of a domain with what orders it when taken: see the comment at the top. */
typedef struct CoreRank {
        bool new_node;     /* on a node not used yet */
        size_t node_cores; /* the domain's candidate cores on its node */
        int node;
        unsigned first_cpu;
        unsigned core;
} CoreRank;

static int core_rank_compare(const void *a, const void *b) {
        const CoreRank *x = a, *y = b;

        if (x->new_node != y->new_node)
                return x->new_node ? 1 : -1;
        if (x->node_cores != y->node_cores)
                return x->node_cores > y->node_cores ? -1 : 1;
        if (x->node != y->node)
                return x->node < y->node ? -1 : 1;
        return x->first_cpu < y->first_cpu ? -1 : x->first_cpu > y->first_cpu;
}

static bool node_used(const CpuSet *used, int node) {
        return node < 0 || cpuset_contains(used, (unsigned)node);
}

/* The cores of d in the order they are taken, given the nodes used so far, into ranks. */
static void domain_order(const Packer *p, const PackDomain *d, const CpuSet *used, CoreRank *ranks) {
        for (size_t i = 0; i < d->n_cores; i++) {
                int node = core_node(p->t, d->cores[i]);

                ranks[i] = (CoreRank){
                        .new_node = !node_used(used, node),
                        .node = node,
                        .first_cpu = core_first_cpu(p->t, d->cores[i]),
                        .core = d->cores[i],
                };
        }
        /* Cores per node: a domain spans few nodes, so count once per distinct node. */
        for (size_t i = 0; i < d->n_cores; i++) {
                size_t first = 0, count = 0;

                while (ranks[first].node != ranks[i].node)
                        first++;
                if (first < i) {
                        ranks[i].node_cores = ranks[first].node_cores;
                        continue;
                }
                for (size_t k = i; k < d->n_cores; k++)
                        count += ranks[k].node == ranks[i].node;
                ranks[i].node_cores = count;
        }
        qsort(ranks, d->n_cores, sizeof(CoreRank), core_rank_compare);
}

/* Whether taking need cores of d adds no NUMA node to used. */
static bool domain_stays_on_nodes(const Packer *p, const PackDomain *d, const CpuSet *used, size_t need) {
        size_t on = 0;

        for (size_t i = 0; i < d->n_cores; i++)
                on += node_used(used, core_node(p->t, d->cores[i]));
        return on >= MIN(need, d->n_cores);
}

/* Whether domain a is a better next pick than b (both unused and eligible). */
static bool pack_better(const Packer *p, size_t a, size_t b, const CpuSet *used, size_t need, bool fits) {
        const PackDomain *x = &p->domains[a], *y = &p->domains[b];
        bool sx = domain_stays_on_nodes(p, x, used, need), sy = domain_stays_on_nodes(p, y, used, need);

        if (fits && sx != sy)
                return sx;
        if (x->n_cores != y->n_cores)
                return x->n_cores > y->n_cores;
        if (sx != sy)
                return sx;
        return x->domain < y->domain;
}

/* The next domain to take from when need cores are still wanted, or -1 if none is left. */
static long pack_pick(const Packer *p, const bool *used_domains, const CpuSet *used, size_t need) {
        bool fits = false;
        long best = -1;

        for (size_t d = 0; d < p->n_domains; d++)
                if (!used_domains[d] && p->domains[d].n_cores >= need)
                        fits = true;

        for (size_t d = 0; d < p->n_domains; d++) {
                if (used_domains[d] || p->domains[d].n_cores == 0)
                        continue;
                if (fits && p->domains[d].n_cores < need)
                        continue;
                if (best < 0 || pack_better(p, d, (size_t)best, used, need, fits))
                        best = (long)d;
        }
        return best;
}

/*
 * Takes want cores starting with domain start, greedily after that, into out (want entries).
 * The domains and NUMA nodes used in *ret_domains and *ret_nodes. Returns 0, -ENOMEM.
 */
static int pack_simulate(
        const Packer *p, size_t start, size_t want, unsigned *out, size_t *ret_domains, size_t *ret_nodes) {
        _cleanup_free_ bool *used_domains = NULL;
        _cleanup_free_ CoreRank *ranks = NULL;
        _cleanup_cpuset_ CpuSet used = CPUSET_NULL;
        size_t taken = 0, n_domains = 0;
        long d = (long)start;
        int r;

        used_domains = calloc(p->n_domains, sizeof(bool));
        ranks = calloc(MAX(p->max_cores, 1U), sizeof(CoreRank));
        if (!used_domains || !ranks)
                return -ENOMEM;

        while (taken < want) {
                size_t k;

                if (taken > 0)
                        d = pack_pick(p, used_domains, &used, want - taken);
                if (d < 0)
                        return -EINVAL; /* fewer candidates than wanted: the callers check first */

                used_domains[d] = true;
                n_domains++;
                domain_order(p, &p->domains[d], &used, ranks);
                k = MIN(want - taken, p->domains[d].n_cores);
                for (size_t i = 0; i < k; i++) {
                        out[taken + i] = ranks[i].core;
                        if (ranks[i].node >= 0) {
                                r = cpuset_add(&used, (unsigned)ranks[i].node);
                                if (r < 0)
                                        return r;
                        }
                }
                taken += k;
        }

        *ret_domains = n_domains;
        *ret_nodes = cpuset_count(&used);
        return 0;
}

/*
 * Packs want of the n candidate cores (want ≤ n) into the fewest cache domains, then the
 * fewest NUMA nodes (see the top of this file), into a newly allocated array of want cores in
 * the order taken ("packed order"). Returns 0 or -ENOMEM.
 */
static int pack_cores(const Topology *t, const unsigned *cores, size_t n, size_t want, unsigned **ret) {
        _cleanup_(packer_done) Packer p = {};
        _cleanup_free_ unsigned *best = NULL, *trial = NULL;
        _cleanup_free_ bool *none = NULL;
        size_t best_domains = SIZE_MAX, best_nodes = SIZE_MAX;
        long first;
        int r;

        if (want > n)
                return -EINVAL;
        if (want == 0) {
                *ret = NULL;
                return 0;
        }

        r = packer_init(&p, t, cores, n);
        if (r < 0)
                return r;
        best = calloc(want, sizeof(unsigned));
        trial = calloc(want, sizeof(unsigned));
        none = calloc(p.n_domains, sizeof(bool));
        if (!best || !trial || !none)
                return -ENOMEM;

        /* The greedy first pick; then, unless every core is taken anyway, every other start. */
        {
                _cleanup_cpuset_ CpuSet empty = CPUSET_NULL;
                first = pack_pick(&p, none, &empty, want);
        }
        if (first < 0)
                return -EINVAL;
        r = pack_simulate(&p, (size_t)first, want, best, &best_domains, &best_nodes);
        if (r < 0)
                return r;

        if (want < n)
                for (size_t d = 0; d < p.n_domains; d++) {
                        size_t n_domains, n_nodes;

                        if ((long)d == first)
                                continue;
                        r = pack_simulate(&p, d, want, trial, &n_domains, &n_nodes);
                        if (r < 0)
                                return r;
                        if (n_domains < best_domains ||
                            (n_domains == best_domains && n_nodes < best_nodes)) {
                                unsigned *swap = best;

                                best = trial;
                                trial = swap;
                                best_domains = n_domains;
                                best_nodes = n_nodes;
                        }
                }

        *ret = TAKE_PTR(best);
        return 0;
}

/*
 * "packed into L3 #2 (6-8,54-56), L3 #3 (9-11,57-59) of NUMA node 1" for cores in packed
 * order; nothing when the machine has one cache domain and one node.
 */
static int explain_packing(const Topology *t, const unsigned *cores, size_t n, Resolution *res) {
        _cleanup_free_ unsigned *domains = NULL;
        _cleanup_free_ CpuSet *nodes = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n_domains = 0;
        int r = 0;

        if (n == 0 || (topology_n_cache_domains(t) <= 1 && topology_n_nodes(t) <= 1))
                return 0;

        domains = calloc(n, sizeof(unsigned));
        nodes = calloc(n, sizeof(CpuSet));
        if (!domains || !nodes)
                return -ENOMEM;

        /* The domains in the order first used, each with the nodes of its chosen cores. */
        for (size_t i = 0; i < n && r >= 0; i++) {
                int dom = topology_cache_domain_of_core(t, cores[i]), node = core_node(t, cores[i]);
                size_t k = 0;

                if (dom < 0)
                        continue;
                while (k < n_domains && domains[k] != (unsigned)dom)
                        k++;
                if (k == n_domains)
                        domains[n_domains++] = (unsigned)dom;
                if (node >= 0)
                        r = cpuset_add(&nodes[k], (unsigned)node);
        }

        /* "DOMAIN (CPUS)", ", " between domains on the same nodes, " of NUMA node N" after them. */
        for (size_t k = 0; k < n_domains && r >= 0; k++) {
                const char *name = topology_cache_domain_name(t, domains[k]);
                bool same_as_previous = k > 0 && cpuset_equal(&nodes[k - 1], &nodes[k]);
                bool same_as_next = k + 1 < n_domains && cpuset_equal(&nodes[k], &nodes[k + 1]);
                _cleanup_free_ char *cpus = NULL, *of = NULL, *joined = NULL;

                cpus = set_str(topology_cache_domain_cpus(t, domains[k]));
                if (!cpus) {
                        r = -ENOMEM;
                        break;
                }
                /* A domain that is a NUMA node (no L3, no package) needs no "of NUMA node". */
                if (!same_as_next && !cpuset_is_empty(&nodes[k]) && strncmp(name, "NUMA node", 9) != 0) {
                        of = numbers_describe("NUMA node", &nodes[k]);
                        if (!of) {
                                r = -ENOMEM;
                                break;
                        }
                }
                if (asprintf(
                            &joined, "%s%s%s (%s)%s%s", line ?: "packed into ",
                            !line                      ? ""
                                    : same_as_previous ? ", "
                                                       : "; ",
                            name, cpus, of ? " of " : "", of ?: "") < 0) {
                        r = -ENOMEM;
                        break;
                }
                free(line);
                line = TAKE_PTR(joined);
        }

        for (size_t k = 0; k < n; k++)
                cpuset_done(&nodes[k]);
        if (r < 0)
                return r;
        return strv_extendf(&res->explanation, "%s", line);
}

/*
 * A pending reason for a count that can't be met: what was wanted, how many are free, and
 * what keeps the others (reserve, holders). mode: 'c' whole cores, 's' cores with a free PU
 * (smt: one-per-core), 'p' PUs. domain: the set before the reserve, reserved: after it, free:
 * after the holdings. Returns -ERANGE with *ret_reason, or -ENOMEM.
 */
static int count_reason(
        const PlanContext *ctx, const CpuSelector *s, const char *what, char mode, unsigned wanted,
        const CpuSet *domain, const CpuSet *reserved, const CpuSet *free_cpus, char **ret_reason) {
        const Topology *t = ctx->topology;
        _cleanup_free_ unsigned *held = NULL, *cores = NULL;
        _cleanup_free_ char *reason = NULL, *rest = NULL;
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        unsigned n_free = 0, n_reserved = 0;
        size_t n_cores = 0;
        int r;

        held = calloc(ctx->n_earlier + 1, sizeof(unsigned));
        if (!held)
                return -ENOMEM;

        if (mode == 'p')
                CPUSET_FOREACH (cpu, domain) {
                        int h;

                        if (cpuset_contains(free_cpus, cpu))
                                n_free++;
                        else if (!cpuset_contains(reserved, cpu))
                                n_reserved++;
                        else if ((h = holder_of(ctx, cpu)) >= 0)
                                held[h]++;
                }
        else {
                r = cores_in(t, domain, mode == 'c', &cores, &n_cores);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n_cores; i++) {
                        const CpuSet *c = topology_core_cpus(t, cores[i]);
                        bool is_free, is_reserved;
                        int h;

                        if (mode == 'c') {
                                is_free = cpuset_is_subset(c, free_cpus);
                                is_reserved = !cpuset_is_subset(c, reserved);
                        } else {
                                is_free = cpuset_intersects(c, free_cpus);
                                is_reserved = !cpuset_intersects(c, reserved);
                        }
                        if (is_free) {
                                n_free++;
                                continue;
                        }
                        if (is_reserved) {
                                n_reserved++;
                                continue;
                        }
                        /* Held: the holder of its first reserved-step CPU that is not free. */
                        r = set_and(&x, c, reserved);
                        if (r < 0)
                                return r;
                        cpuset_andnot(&x, free_cpus);
                        h = cpuset_is_empty(&x) ? -1 : holder_of(ctx, (unsigned)cpuset_next(&x, -1));
                        if (h >= 0)
                                held[h]++;
                }
        }

        if (mode == 'c')
                r = asprintf(
                        &reason, "wanted %u core%s on %s, %u free", wanted, wanted == 1 ? "" : "s", what,
                        n_free);
        else if (mode == 's')
                r = asprintf(
                        &reason,
                        "wanted %u CPU%s on separate cores (smt: one-per-core) on %s, %u core%s free",
                        wanted, wanted == 1 ? "" : "s", what, n_free, n_free == 1 ? "" : "s");
        else
                r = asprintf(
                        &reason, "wanted %u CPU%s on %s, %u free", wanted, wanted == 1 ? "" : "s", what,
                        n_free);
        if (r < 0)
                return -ENOMEM;

        if (n_reserved > 0) {
                if (asprintf(
                            &rest, "%s, %u %s", reason, n_reserved,
                            s->reserved == RESERVED_ONLY ? "not reserved" : "reserved") < 0)
                        return -ENOMEM;
                free(reason);
                reason = TAKE_PTR(rest);
        }
        for (size_t i = 0; i < ctx->n_earlier; i++) {
                if (held[i] == 0)
                        continue;
                if (asprintf(
                            &rest, "%s, %u held by policy \"%s\"", reason, held[i],
                            ctx->earlier[i].policy->name) < 0)
                        return -ENOMEM;
                free(reason);
                reason = TAKE_PTR(rest);
        }

        *ret_reason = TAKE_PTR(reason);
        return -ERANGE;
}

/* The lowest CPU of core that is in set. */
static unsigned core_first_in(const Topology *t, unsigned core, const CpuSet *set) {
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;

        if (set_and(&x, topology_core_cpus(t, core), set) < 0 || cpuset_is_empty(&x))
                return core_first_cpu(t, core);
        return (unsigned)cpuset_next(&x, -1);
}

/* cores: N on the candidate set *cpus (replaced by the choice). */
static int take_cores(
        const PlanContext *ctx, const CpuSelector *s, const char *what, const CpuSet *domain,
        const CpuSet *reserved, CpuSet *cpus, Resolution *res, char **ret_reason) {
        const Topology *t = ctx->topology;
        _cleanup_free_ unsigned *cores = NULL, *order = NULL;
        _cleanup_cpuset_ CpuSet chosen = CPUSET_NULL, all = CPUSET_NULL;
        _cleanup_free_ char *prefix = NULL;
        size_t n = 0;
        int r;

        r = cores_in(t, cpus, true, &cores, &n);
        if (r < 0)
                return r;
        if (n < s->n_cores)
                return count_reason(ctx, s, what, 'c', s->n_cores, domain, reserved, cpus, ret_reason);

        r = pack_cores(t, cores, n, s->n_cores, &order);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_cores; i++) {
                r = cpuset_or(&all, topology_core_cpus(t, order[i]));
                if (r >= 0 && s->smt == SMT_ONE_PER_CORE)
                        r = cpuset_add(&chosen, core_first_cpu(t, order[i]));
                if (r < 0)
                        return r;
        }
        if (s->smt != SMT_ONE_PER_CORE) {
                r = cpuset_copy(&chosen, &all);
                if (r < 0)
                        return r;
        }

        r = explain_packing(t, order, s->n_cores, res);
        if (r < 0)
                return r;
        if (asprintf(&prefix, "cores: %u: whole cores", s->n_cores) < 0)
                return -ENOMEM;
        r = explain_set(res, prefix, &all);
        if (r < 0)
                return r;
        if (s->smt == SMT_ONE_PER_CORE) {
                prefix = mfree(prefix);
                if (asprintf(
                            &prefix, "smt: one-per-core: 1 PU of each of %u core%s", s->n_cores,
                            s->n_cores == 1 ? "" : "s") < 0)
                        return -ENOMEM;
                r = explain_set(res, prefix, &chosen);
                if (r < 0)
                        return r;
        }

        r = cpuset_copy(cpus, &chosen);
        if (r < 0)
                return r;
        return 0;
}

/* cpus: N on the candidate set *cpus (replaced by the choice). */
static int take_cpus(
        const PlanContext *ctx, const CpuSelector *s, const char *what, const CpuSet *domain,
        const CpuSet *reserved, CpuSet *cpus, Resolution *res, char **ret_reason) {
        const Topology *t = ctx->topology;
        _cleanup_free_ unsigned *cores = NULL, *order = NULL;
        _cleanup_cpuset_ CpuSet chosen = CPUSET_NULL, x = CPUSET_NULL;
        _cleanup_free_ char *prefix = NULL;
        size_t n = 0, n_order, siblings = 0;
        int r;

        /*
         * Cores entirely free first: a core whose sibling is reserved, held or disallowed shares
         * its caches and pipeline with what runs there. When there are not enough, any core.
         */
        r = cores_in(t, cpus, true, &cores, &n);
        if (r < 0)
                return r;
        if (n < s->n_cpus) {
                cores = mfree(cores);
                r = cores_in(t, cpus, false, &cores, &n);
                if (r < 0)
                        return r;
        }
        if (s->smt == SMT_ONE_PER_CORE && n < s->n_cpus)
                return count_reason(ctx, s, what, 's', s->n_cpus, domain, reserved, cpus, ret_reason);
        if (cpuset_count(cpus) < s->n_cpus)
                return count_reason(ctx, s, what, 'p', s->n_cpus, domain, reserved, cpus, ret_reason);

        /* One PU of each of N cores while there are cores; else every core, then siblings. */
        n_order = MIN(n, (size_t)s->n_cpus);
        r = pack_cores(t, cores, n, n_order, &order);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_order; i++) {
                r = cpuset_add(&chosen, core_first_in(t, order[i], cpus));
                if (r < 0)
                        return r;
        }
        for (unsigned round = 1; cpuset_count(&chosen) < s->n_cpus; round++)
                for (size_t i = 0; i < n_order && cpuset_count(&chosen) < s->n_cpus; i++) {
                        unsigned k = 0;

                        r = set_and(&x, topology_core_cpus(t, order[i]), cpus);
                        if (r < 0)
                                return r;
                        CPUSET_FOREACH (cpu, &x)
                                if (k++ == round) {
                                        r = cpuset_add(&chosen, cpu);
                                        if (r < 0)
                                                return r;
                                        siblings++;
                                        break;
                                }
                }

        r = explain_packing(t, order, n_order, res);
        if (r < 0)
                return r;
        if (siblings > 0)
                r = asprintf(
                        &prefix, "cpus: %u: 1 PU of each of %zu core%s, then %zu SMT sibling%s", s->n_cpus,
                        n_order, n_order == 1 ? "" : "s", siblings, siblings == 1 ? "" : "s");
        else
                r = asprintf(
                        &prefix, "cpus: %u: 1 PU of each of %zu core%s", s->n_cpus, n_order,
                        n_order == 1 ? "" : "s");
        if (r < 0)
                return -ENOMEM;
        r = explain_set(res, prefix, &chosen);
        if (r < 0)
                return r;

        return cpuset_copy(cpus, &chosen);
}

/* smt: one-per-core without a count: the lowest PU of every core of *cpus. */
static int keep_one_per_core(const Topology *t, CpuSet *cpus, Resolution *res) {
        _cleanup_free_ unsigned *cores = NULL;
        _cleanup_cpuset_ CpuSet chosen = CPUSET_NULL;
        _cleanup_free_ char *prefix = NULL;
        size_t n = 0;
        int r;

        r = cores_in(t, cpus, false, &cores, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = cpuset_add(&chosen, core_first_in(t, cores[i], cpus));
                if (r < 0)
                        return r;
        }
        if (cpuset_equal(&chosen, cpus))
                return 0;
        if (asprintf(&prefix, "smt: one-per-core: 1 PU of each of %zu core%s", n, n == 1 ? "" : "s") < 0)
                return -ENOMEM;
        r = explain_set(res, prefix, &chosen);
        if (r < 0)
                return r;
        return cpuset_copy(cpus, &chosen);
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
                        return reasonf(-EINVAL, ret_reason, "no CPU of %s is %s: %s", domains, near, l);
                return reasonf(-EINVAL, ret_reason, "no online, allowed CPU is %s: %s", near, l);
        }
        if (!cpuset_equal(&before, cpus))
                return explain_set(res, near, cpus);
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
                        return reasonf(
                                -ENOENT, ret_reason, "kind: efficiency: this machine has one CPU kind");
                return strv_extendf(
                        &res->explanation,
                        "kind: performance: this machine has one CPU kind, every CPU is of it");
        }
        if (!topology_cpu_kinds_ranked(t))
                return reasonf(
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
                return reasonf(
                        -EINVAL, ret_reason, "kind: %s: no CPU of %s is of that kind (%s%s%s)", word, what,
                        core_type ?: "", core_type ? ": " : "", k);
        }
        if (cpuset_equal(&before, cpus))
                return 0;
        if (asprintf(
                    &prefix, "kind: %s%s%s%s", word, core_type ? " (" : "", core_type ?: "",
                    core_type ? ")" : "") < 0)
                return -ENOMEM;
        return explain_set(res, prefix, cpus);
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
        cpuset_done(ret);
        *ret = held;
        held = CPUSET_NULL;
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
                r = explain_set(res, prefix, &x);
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
                return reasonf(
                        -EINVAL, ret_reason, "every CPU of %s (%s) is held by earlier exclusive polic%s: %s",
                        what, c, n_holders == 1 ? "y" : "ies", holders);
        return 0;
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
                        return reasonf(
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
                return reasonf(-EINVAL, ret_reason, "no CPU is online and allowed here");
        if (!cpuset_equal(&cpus, topology_online_cpus(t))) {
                r = set_andnot(&before, topology_online_cpus(t), &cpus);
                if (r >= 0)
                        r = explain_set(res, "disallowed removed", &before);
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
                        return reasonf(
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
                        return reasonf(
                                -EINVAL, ret_reason, "%s %s no CPU", domains,
                                (s->has_nodes ? cpuset_count(&s->nodes) : cpuset_count(&s->packages)) == 1
                                        ? "has"
                                        : "have");

                sel = set_str(&selected);
                allowed = set_str(topology_allowed_cpus(t));
                if (!sel || !allowed)
                        return -ENOMEM;
                return reasonf(
                        -EINVAL, ret_reason, "no CPU of %s (%s) is online and allowed here (%s)", domains,
                        sel, allowed);
        }
        if (!cpuset_equal(&before, &cpus)) {
                _cleanup_free_ char *domains = domains_describe(s), *prefix = NULL;

                if (!domains || asprintf(&prefix, "online CPUs of %s", domains) < 0)
                        return -ENOMEM;
                r = explain_set(res, prefix, &cpus);
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
                        return reasonf(
                                -EINVAL, ret_reason,
                                "every CPU of %s (%s) is reserved (%s); "
                                "use reserved: allow or only to place on them",
                                what, c, rs);
                }
                if (cpuset_intersects(&cpus, ctx->reserve)) {
                        r = set_and(&before, &cpus, ctx->reserve);
                        if (r >= 0)
                                r = explain_set(res, "reserved removed", &before);
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
                        return reasonf(
                                -EINVAL, ret_reason,
                                "reserved: only, but no CPU of %s (%s) is reserved (%s)", what, c, rs);
                }
                cpuset_and(&cpus, ctx->reserve);
                r = explain_set(res, "reserved: only", &cpus);
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

        /* 6. The count. */
        if (s->n_cores > 0)
                r = take_cores(ctx, s, what, &domain, &reserved, &cpus, res, ret_reason);
        else if (s->n_cpus > 0)
                r = take_cpus(ctx, s, what, &domain, &reserved, &cpus, res, ret_reason);
        else if (s->smt == SMT_ONE_PER_CORE)
                r = keep_one_per_core(t, &cpus, res);
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
                        r = explain_set(res, "exclusive: cores withheld from later selectors", &res->held);
                if (r < 0)
                        return r;
        }

        cpuset_done(&res->cpus);
        res->cpus = cpus;
        cpus = CPUSET_NULL;
        return 0;
}

/* Resolves s into res (zeroed by the caller, released by it whatever happens). */
static int resolve_selector(
        const PlanContext *ctx, const CpuSelector *s, Resolution *res, char **ret_reason) {
        switch (s->kind) {
        case CPU_SELECTOR_LITERAL:
                return resolve_literal(ctx, s, res, ret_reason);
        case CPU_SELECTOR_MAPPING:
                return resolve_mapping(ctx, s, res, ret_reason);
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
        _cleanup_(resolution_done) Resolution res = {};
        _cleanup_free_ char *reason = NULL;
        PlanContext ctx = {.topology = t, .reserve = &empty, .reserve_given = reserve, .held = &empty};
        int r;

        if (reserve) {
                r = set_and(&online_reserve, reserve, topology_online_cpus(t));
                if (r < 0)
                        return r;
                ctx.reserve = &online_reserve;
        }

        r = resolve_selector(&ctx, s, &res, &reason);
        if (r < 0) {
                if (reason && ret_reason)
                        *ret_reason = TAKE_PTR(reason);
                return r;
        }
        cpuset_done(ret);
        *ret = res.cpus;
        res.cpus = CPUSET_NULL;
        return 0;
}

/* ---- spread ---- */

/* See plan.h. */
int plan_spread_order(const Topology *t, const CpuSet *set, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *cores = NULL, *order = NULL, *out = NULL;
        _cleanup_cpuset_ CpuSet added = CPUSET_NULL, x = CPUSET_NULL;
        size_t n_cores = 0, n = 0, total = cpuset_count(set);
        bool progress = true;
        int r;

        r = cores_in(t, set, false, &cores, &n_cores);
        if (r < 0)
                return r;
        r = pack_cores(t, cores, n_cores, n_cores, &order);
        if (r < 0)
                return r;
        out = calloc(MAX(total, 1U), sizeof(unsigned));
        if (!out)
                return -ENOMEM;

        for (unsigned round = 0; progress; round++) {
                progress = false;
                for (size_t i = 0; i < n_cores; i++) {
                        unsigned k = 0;

                        r = set_and(&x, topology_core_cpus(t, order[i]), set);
                        if (r < 0)
                                return r;
                        CPUSET_FOREACH (cpu, &x)
                                if (k++ == round) {
                                        out[n++] = (unsigned)cpu;
                                        r = cpuset_add(&added, cpu);
                                        if (r < 0)
                                                return r;
                                        progress = true;
                                        break;
                                }
                }
        }
        /* CPUs without a core (none online): last, in order. */
        CPUSET_FOREACH (cpu, set)
                if (!cpuset_contains(&added, cpu) && n < total)
                        out[n++] = (unsigned)cpu;

        *ret = TAKE_PTR(out);
        *ret_n = n;
        return 0;
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

/* See plan.h. */
int plan_literal_warnings(
        const CpuSet *literal, const Topology *t, const CpuSet *reserve, const PolicyPlan *holders,
        size_t n_holders, const char *prefix, char ***warnings) {
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
                &s->literal, ctx->topology, ctx->reserve, ctx->earlier, ctx->n_earlier, prefix, &lines);
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
        cpuset_done(&pp->memory_nodes);
        cpuset_done(&pp->exclusive_cpus);
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
        for (size_t i = 0; i < pp->policy->n_threads; i++) {
                pp->threads[i].has_cpus = false;
                cpuset_done(&pp->threads[i].cpus);
                pp->threads[i].spread_order = mfree(pp->threads[i].spread_order);
                pp->threads[i].n_spread_order = 0;
        }
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

        r = resolve_mapping(ctx, &bare, &res, ret_reason);
        if (r < 0)
                return r;
        cpuset_done(ret);
        *ret = res.cpus;
        res.cpus = CPUSET_NULL;
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
                r = reason_missing(&p->memory.nodes, exist, "memory: ", "NUMA node", "node", ret_reason);
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

                r = resolve_selector(ctx, &p->cpus, &res, &reason);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        where = selector_location(&p->cpus, &p->location);
                        goto pending;
                }
                r = policy_plan_adopt(pp, &res, "", selector_location(&p->cpus, &p->location));
                if (r < 0)
                        return r;
                pp->cpus = res.cpus;
                res.cpus = CPUSET_NULL;
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
                r = resolve_selector(ctx, &rule->cpus, &res, &rule_reason);
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
                pp->threads[i].cpus = res.cpus;
                res.cpus = CPUSET_NULL;
                pp->threads[i].has_cpus = true;
        }

        /* Spread rules: over the policy's set. */
        for (size_t i = 0; i < p->n_threads; i++) {
                const ThreadRule *rule = &p->threads[i];
                ThreadPlan *tp = &pp->threads[i];
                const CpuSet *set = &pp->cpus;

                if (rule->cpus.kind != CPU_SELECTOR_SPREAD)
                        continue;

                if (!pp->has_cpus) {
                        if (!have_bare) {
                                _cleanup_free_ char *bare_reason = NULL;

                                r = resolve_bare(ctx, &bare, &bare_reason);
                                if (r == -ENOMEM)
                                        return r;
                                if (r < 0) {
                                        if (asprintf(
                                                    &reason, "thread rule \"%s\": cpus: spread: %s",
                                                    rule->name, bare_reason) < 0)
                                                return -ENOMEM;
                                        where = selector_location(
                                                &rule->cpus,
                                                rule->location.line > 0 ? &rule->location : &p->location);
                                        goto pending;
                                }
                                have_bare = true;
                        }
                        set = &bare;
                }

                r = plan_spread_order(ctx->topology, set, &tp->spread_order, &tp->n_spread_order);
                if (r < 0)
                        return r;
                tp->spread = true;
                if (!pp->has_cpus) {
                        _cleanup_free_ char *l = set_str(&bare);

                        if (!l)
                                return -ENOMEM;
                        r = strv_extendf(
                                &pp->explanation,
                                "thread rule \"%s\": spread over the online CPUs neither reserved nor held "
                                "(the "
                                "policy has no cpus:): %s",
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
        _cleanup_cpuset_ CpuSet held = CPUSET_NULL;
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
                .earlier = p->policies,
                .held = &held,
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
