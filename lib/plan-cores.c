/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Planning, the count of a selector (cores: N, cpus: N, smt: one-per-core) and the spread
 * order of thread rules: which cores of a candidate set are taken, in what order, and, when
 * a count can't be met, what keeps the CPUs it would need. Called by plan-selector.c for
 * counts, by plan.c and lib/devplan.c for the spread order.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan-internal.h"

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
                        of = plan_numbers_describe("NUMA node", &nodes[k]);
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

/* The earlier policy holding cpu (an index into ctx->earlier), or -1. */
static int holder_of(const PlanContext *ctx, unsigned cpu) {
        for (size_t i = 0; i < ctx->n_earlier; i++)
                if (cpuset_contains(&ctx->earlier[i].exclusive_cpus, cpu))
                        return (int)i;
        return -1;
}

/*
 * A pending reason for a count that can't be met: what was wanted, how many are free, and
 * what keeps the others (reserve, holders, the kubelet's CPU manager). mode: 'c' whole cores, 's' cores with
 * a free PU (smt: one-per-core), 'p' PUs. domain: the set before the reserve, reserved: after it, free:
 * after the holdings. Returns -ERANGE with *ret_reason, or -ENOMEM.
 */
static int count_reason(
        const PlanContext *ctx, const CpuSelector *s, const char *what, char mode, unsigned wanted,
        const CpuSet *domain, const CpuSet *reserved, const CpuSet *free_cpus, char **ret_reason) {
        const Topology *t = ctx->topology;
        _cleanup_free_ unsigned *held = NULL, *cores = NULL;
        _cleanup_free_ char *reason = NULL, *rest = NULL;
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        const CpuSet *kubelet = kubelet_cpu_state_exclusive(ctx->kubelet);
        unsigned n_free = 0, n_reserved = 0, n_kubelet = 0;
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
                        else if (cpuset_contains(kubelet, cpu))
                                n_kubelet++;
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
                        else if (cpuset_intersects(&x, kubelet))
                                n_kubelet++;
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
        if (n_kubelet > 0) {
                if (asprintf(&rest, "%s, %u held by the kubelet's CPU manager", reason, n_kubelet) < 0)
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

        if (ctx->lowest_cores) { /* cores_in() gives them by lowest CPU */
                order = TAKE_PTR(cores);
                r = 0;
        } else
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

        r = ctx->lowest_cores ? 0 : explain_packing(t, order, s->n_cores, res);
        if (r < 0)
                return r;
        if (asprintf(
                    &prefix, "cores: %u: %swhole cores", s->n_cores,
                    ctx->lowest_cores ? "the lowest-numbered " : "") < 0)
                return -ENOMEM;
        r = resolution_explain_set(res, prefix, &all);
        if (r < 0)
                return r;
        if (s->smt == SMT_ONE_PER_CORE) {
                prefix = mfree(prefix);
                if (asprintf(
                            &prefix, "smt: one-per-core: 1 PU of each of %u core%s", s->n_cores,
                            s->n_cores == 1 ? "" : "s") < 0)
                        return -ENOMEM;
                r = resolution_explain_set(res, prefix, &chosen);
                if (r < 0)
                        return r;
        }

        r = cpuset_copy(cpus, &chosen);
        if (r < 0)
                return r;
        return 0;
}

/*
 * The cores with a PU in cpus that are not whole in it (a sibling reserved, held, disallowed):
 * they share a core with what runs on the others. In the order of their lowest CPU. Returns 0
 * with a newly allocated array (NULL when there is none), or -ENOMEM.
 */
static int partial_cores_in(const Topology *t, const CpuSet *cpus, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *all = NULL;
        size_t n_all = 0, n = 0;
        int r;

        r = cores_in(t, cpus, false, &all, &n_all);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_all; i++)
                if (!cpuset_is_subset(topology_core_cpus(t, all[i]), cpus))
                        all[n++] = all[i];
        *ret = n > 0 ? TAKE_PTR(all) : NULL;
        *ret_n = n;
        return 0;
}

/*
 * Adds PUs of cpus from the n cores of order (packed order) to *chosen until want are added:
 * one PU of each core (its lowest in cpus), then the second SMT siblings, and so on; with
 * one_per_core only the first round. Each PU added is also written to out[] (NULL: not), in
 * the order taken; those past the first of a core are counted in *siblings. Returns the number
 * added or -ENOMEM.
 */
static int take_round_robin(
        const Topology *t, const unsigned *order, size_t n, const CpuSet *cpus, size_t want,
        bool one_per_core, CpuSet *chosen, unsigned *out, size_t *siblings) {
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        size_t added = 0;
        bool progress = true;
        int r;

        for (unsigned round = 0; added < want && progress && (round == 0 || !one_per_core); round++) {
                progress = false;
                for (size_t i = 0; i < n && added < want; i++) {
                        unsigned k = 0;

                        r = set_and(&x, topology_core_cpus(t, order[i]), cpus);
                        if (r < 0)
                                return r;
                        CPUSET_FOREACH (cpu, &x)
                                if (k++ == round) {
                                        r = cpuset_add(chosen, cpu);
                                        if (r < 0)
                                                return r;
                                        if (out)
                                                out[added] = (unsigned)cpu;
                                        added++;
                                        *siblings += round > 0;
                                        progress = true;
                                        break;
                                }
                }
        }
        return (int)added;
}

/*
 * Why PU cpu of a core not whole in cpus is shared: "CPU 64: its core's sibling 0 is reserved"
 * (or held by exclusive policy "db", by the kubelet's CPU manager, or not in the set: disallowed
 * or left out by the selector). NULL on OOM.
 */
static char *partial_core_describe(const PlanContext *ctx, unsigned cpu, const CpuSet *cpus) {
        _cleanup_cpuset_ CpuSet others = CPUSET_NULL;
        _cleanup_free_ char *l = NULL, *why = NULL;
        int core = topology_core_of_cpu(ctx->topology, cpu), h;
        unsigned first;
        char *d = NULL;

        if (core < 0 || set_andnot(&others, topology_core_cpus(ctx->topology, (unsigned)core), cpus) < 0)
                return NULL;
        if (cpuset_is_empty(&others))
                return NULL;
        first = (unsigned)cpuset_next(&others, -1);
        l = set_str(&others);
        if (!l)
                return NULL;
        if (cpuset_is_subset(&others, ctx->reserve))
                why = strdup("reserved");
        else if ((h = holder_of(ctx, first)) >= 0)
                (void)!asprintf(&why, "held by exclusive policy \"%s\"", ctx->earlier[h].policy->name);
        else if (cpuset_contains(kubelet_cpu_state_exclusive(ctx->kubelet), first))
                why = strdup("held by the kubelet's CPU manager");
        else
                why = strdup("not in the set");
        if (!why)
                return NULL;
        if (asprintf(
                    &d, "CPU %u: its core's sibling%s %s %s %s", cpu, cpuset_count(&others) == 1 ? "" : "s",
                    l, cpuset_count(&others) == 1 ? "is" : "are", why) < 0)
                return NULL;
        return d;
}

/*
 * Says in the explanation (and a note, to become a warning) that the PUs of used, taken from
 * cores not whole in cpus, share their cores: "cpus: 3: CPU 64: its core's sibling 0 is
 * reserved; nothing else was left". Returns 0 or -ENOMEM.
 */
static int explain_partial(
        const PlanContext *ctx, const char *prefix, const CpuSet *used, const CpuSet *cpus,
        Resolution *res) {
        _cleanup_free_ char *line = NULL;
        int r;

        if (cpuset_is_empty(used))
                return 0;
        CPUSET_FOREACH (cpu, used) {
                _cleanup_free_ char *d = partial_core_describe(ctx, cpu, cpus), *joined = NULL;

                if (!d)
                        return -ENOMEM;
                if (asprintf(&joined, "%s%s%s", line ?: "", line ? "; " : "", d) < 0)
                        return -ENOMEM;
                free(line);
                line = TAKE_PTR(joined);
        }
        r = strv_extendf(&res->explanation, "%s: %s; nothing else was left", prefix, line);
        if (r < 0)
                return r;
        return strv_extendf(&res->notes, "%s: %s; nothing else was left", prefix, line);
}

/*
 * cpus: N on the candidate set *cpus (replaced by the choice). Whole cores first: a core whose
 * sibling is reserved, held or disallowed shares its caches and pipeline with what runs there,
 * so its PUs are taken only when the whole cores' are not enough (with smt: one-per-core, when
 * there are fewer whole cores than N), and the explanation says so.
 */
static int take_cpus(
        const PlanContext *ctx, const CpuSelector *s, const char *what, const CpuSet *domain,
        const CpuSet *reserved, CpuSet *cpus, Resolution *res, char **ret_reason) {
        const Topology *t = ctx->topology;
        bool one = s->smt == SMT_ONE_PER_CORE;
        _cleanup_free_ unsigned *cores = NULL, *order = NULL, *partial = NULL, *partial_order = NULL;
        _cleanup_cpuset_ CpuSet chosen = CPUSET_NULL, whole_cpus = CPUSET_NULL, shared = CPUSET_NULL,
                                added = CPUSET_NULL;
        _cleanup_free_ char *prefix = NULL;
        size_t n = 0, n_partial = 0, n_order, n_partial_order = 0, want_whole, siblings = 0;
        int r;

        r = cores_in(t, cpus, true, &cores, &n);
        if (r >= 0)
                r = partial_cores_in(t, cpus, &partial, &n_partial);
        if (r < 0)
                return r;
        if (one && n + n_partial < s->n_cpus)
                return count_reason(ctx, s, what, 's', s->n_cpus, domain, reserved, cpus, ret_reason);
        if (cpuset_count(cpus) < s->n_cpus)
                return count_reason(ctx, s, what, 'p', s->n_cpus, domain, reserved, cpus, ret_reason);

        /* The whole cores: N of them, or all when there are fewer. */
        for (size_t i = 0; i < n; i++) {
                r = cpuset_or(&whole_cpus, topology_core_cpus(t, cores[i]));
                if (r < 0)
                        return r;
        }
        n_order = MIN(n, (size_t)s->n_cpus);
        want_whole = one ? n_order : MIN(cpuset_count(&whole_cpus), (size_t)s->n_cpus);
        r = pack_cores(t, cores, n, n_order, &order);
        if (r >= 0)
                r = take_round_robin(t, order, n_order, cpus, want_whole, one, &chosen, NULL, &siblings);
        if (r < 0)
                return r;

        /* Then, only when those are not enough, the cores shared with something else. */
        if (want_whole < s->n_cpus) {
                n_partial_order = one ? s->n_cpus - want_whole : n_partial;
                r = pack_cores(t, partial, n_partial, n_partial_order, &partial_order);
                if (r >= 0)
                        r = cpuset_copy(&shared, &chosen); /* what the whole cores gave */
                if (r >= 0)
                        r = take_round_robin(
                                t, partial_order, n_partial_order, cpus, s->n_cpus - want_whole, one,
                                &chosen, NULL, &siblings);
                if (r < 0)
                        return r;
                r = set_andnot(&added, &chosen, &shared); /* what the shared cores gave */
                if (r < 0)
                        return r;
                set_move(&shared, &added);
        }

        r = explain_packing(t, order, n_order, res);
        if (r < 0)
                return r;
        if (siblings > 0)
                r = asprintf(
                        &prefix, "cpus: %u: 1 PU of each of %zu core%s, then %zu SMT sibling%s", s->n_cpus,
                        n_order + n_partial_order, n_order + n_partial_order == 1 ? "" : "s", siblings,
                        siblings == 1 ? "" : "s");
        else
                r = asprintf(
                        &prefix, "cpus: %u: 1 PU of each of %zu core%s", s->n_cpus,
                        n_order + n_partial_order, n_order + n_partial_order == 1 ? "" : "s");
        if (r < 0)
                return -ENOMEM;
        r = resolution_explain_set(res, prefix, &chosen);
        if (r < 0)
                return r;
        prefix = mfree(prefix);
        if (asprintf(&prefix, "cpus: %u", s->n_cpus) < 0)
                return -ENOMEM;
        r = explain_partial(ctx, prefix, &shared, cpus, res);
        if (r < 0)
                return r;

        return cpuset_copy(cpus, &chosen);
}

/*
 * smt: one-per-core without a count: the lowest PU of every core of *cpus — of the whole ones
 * only, while there is one (a core whose sibling is reserved, held or disallowed is left out;
 * when no core is whole, one PU of each and the explanation says so).
 */
static int keep_one_per_core(const PlanContext *ctx, CpuSet *cpus, Resolution *res) {
        const Topology *t = ctx->topology;
        _cleanup_free_ unsigned *cores = NULL;
        _cleanup_cpuset_ CpuSet chosen = CPUSET_NULL;
        _cleanup_free_ char *prefix = NULL;
        size_t n = 0;
        bool whole = true;
        int r;

        r = cores_in(t, cpus, true, &cores, &n);
        if (r >= 0 && n == 0) {
                whole = false;
                r = cores_in(t, cpus, false, &cores, &n);
        }
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = cpuset_add(&chosen, core_first_in(t, cores[i], cpus));
                if (r < 0)
                        return r;
        }
        if (!whole) {
                r = explain_partial(ctx, "smt: one-per-core", &chosen, cpus, res);
                if (r < 0)
                        return r;
        }
        if (cpuset_equal(&chosen, cpus))
                return 0;
        if (asprintf(&prefix, "smt: one-per-core: 1 PU of each of %zu core%s", n, n == 1 ? "" : "s") < 0)
                return -ENOMEM;
        r = resolution_explain_set(res, prefix, &chosen);
        if (r < 0)
                return r;
        if (whole) {
                /* The PUs of shared cores this left out, when it left any out. */
                _cleanup_free_ unsigned *partial = NULL;
                _cleanup_cpuset_ CpuSet shared = CPUSET_NULL;
                size_t n_partial = 0;

                r = partial_cores_in(t, cpus, &partial, &n_partial);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n_partial; i++) {
                        r = cpuset_or(&shared, topology_core_cpus(t, partial[i]));
                        if (r < 0)
                                return r;
                }
                cpuset_and(&shared, cpus);
                if (!cpuset_is_empty(&shared)) {
                        r = resolution_explain_set(
                                res,
                                "smt: one-per-core: left out, their cores are shared (a sibling reserved, "
                                "held or "
                                "disallowed)",
                                &shared);
                        if (r < 0)
                                return r;
                }
        }
        return cpuset_copy(cpus, &chosen);
}

/* See plan-internal.h. */
int plan_take_count(
        const PlanContext *ctx, const CpuSelector *s, const char *what, const CpuSet *domain,
        const CpuSet *reserved, CpuSet *cpus, Resolution *res, char **ret_reason) {
        if (s->n_cores > 0)
                return take_cores(ctx, s, what, domain, reserved, cpus, res, ret_reason);
        if (s->n_cpus > 0)
                return take_cpus(ctx, s, what, domain, reserved, cpus, res, ret_reason);
        if (s->smt == SMT_ONE_PER_CORE)
                return keep_one_per_core(ctx, cpus, res);
        return 0;
}

/* ---- spread ---- */

/* See plan.h. */
int plan_spread_order(const Topology *t, const CpuSet *set, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *cores = NULL, *order = NULL, *out = NULL;
        _cleanup_cpuset_ CpuSet added = CPUSET_NULL;
        size_t n_cores = 0, n = 0, total = cpuset_count(set), siblings = 0;
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

        r = take_round_robin(t, order, n_cores, set, total, false, &added, out, &siblings);
        if (r < 0)
                return r;
        n = (size_t)r;
        /* CPUs without a core (none online): last, in order. */
        CPUSET_FOREACH (cpu, set)
                if (!cpuset_contains(&added, cpu) && n < total)
                        out[n++] = (unsigned)cpu;

        *ret = TAKE_PTR(out);
        *ret_n = n;
        return 0;
}

/* "second" … "eighth" for SMT round 1 … 7 (round 0 is the first PU of each core); NULL past. */
static const char *sibling_ordinal(unsigned round) {
        static const char *const words[] = {"second", "third",   "fourth", "fifth",
                                            "sixth",  "seventh", "eighth"};

        return round >= 1 && round <= ELEMENTSOF(words) ? words[round - 1] : NULL;
}

/* What a group of cores in a spread order is in: an L3 (or package) and a NUMA node. */
typedef struct SpreadGroup {
        int domain, node; /* -1: none */
        size_t n_cores;
        unsigned first_cpu;
        CpuSet cpus; /* the order's CPUs on those cores */
} SpreadGroup;

/*
 * "8 cores in L3 #0 (0-7,16-23) on NUMA node 0", worded for what the domain is; without the
 * node unless with_node. NULL on OOM.
 */
static char *spread_group_describe(const Topology *t, const SpreadGroup *g, bool with_node) {
        const char *name = g->domain >= 0 ? topology_cache_domain_name(t, (unsigned)g->domain) : NULL;
        _cleanup_free_ char *cpus = set_str(&g->cpus), *in = NULL, *on = NULL;
        char *d = NULL;

        if (!cpus)
                return NULL;
        /* A domain that is a NUMA node needs no "on NUMA node"; "the machine" says nothing. */
        if (name && !streq(name, "the machine") && asprintf(&in, " in %s", name) < 0)
                return NULL;
        if (with_node && g->node >= 0 && !(name && strncmp(name, "NUMA node", 9) == 0) &&
            asprintf(&on, " on NUMA node %d", g->node) < 0)
                return NULL;
        if (asprintf(
                    &d, "%zu core%s%s (%s)%s", g->n_cores, g->n_cores == 1 ? "" : "s", in ?: "", cpus,
                    on ?: "") < 0)
                return NULL;
        return d;
}

/*
 * The packing line of plan_spread_explain(): the groups of consecutive first PUs that share a
 * cache domain and a NUMA node, in order (", " between groups on one node, the node after the
 * last of them, ", then " before the next node), and which came first when that is plain from
 * their sizes. Nothing on a machine of one cache domain and one node. Returns 0 or -ENOMEM.
 */
static int spread_explain_packing(
        const Topology *t, const SpreadGroup *groups, size_t n_groups, char ***lines) {
        _cleanup_free_ char *line = NULL;
        bool decreasing = true, equal = true, ascending = true;
        const char *kind;

        if (n_groups == 0 || (topology_n_cache_domains(t) <= 1 && topology_n_nodes(t) <= 1))
                return 0;
        for (size_t g = 0; g < n_groups; g++) {
                bool same_node = g + 1 < n_groups && groups[g + 1].node == groups[g].node;
                bool new_node = g > 0 && groups[g - 1].node != groups[g].node;
                _cleanup_free_ char *d = spread_group_describe(t, &groups[g], !same_node);
                char *joined = NULL;

                if (!d)
                        return -ENOMEM;
                if (g > 0) {
                        decreasing = decreasing && groups[g].n_cores <= groups[g - 1].n_cores;
                        equal = equal && groups[g].n_cores == groups[g - 1].n_cores;
                        ascending = ascending && groups[g].first_cpu > groups[g - 1].first_cpu;
                }
                if (asprintf(&joined, "%s%s%s", line ?: "", !line ? "" : new_node ? ", then " : ", ", d) < 0)
                        return -ENOMEM;
                free(line);
                line = joined;
        }
        if (n_groups == 1)
                return strv_extendf(lines, "cores: all %s", line);

        /* The words for what is shared, from the first group's domain. */
        kind = groups[0].domain < 0 ? NULL : topology_cache_domain_name(t, (unsigned)groups[0].domain);
        kind = !kind                               ? "a NUMA node"
                : strncmp(kind, "L3", 2) == 0      ? "an L3 cache and a NUMA node"
                : strncmp(kind, "package", 7) == 0 ? "a package and a NUMA node"
                                                   : "a NUMA node";
        return strv_extendf(
                lines, "cores packed, so that consecutive threads share %s: %s%s", kind, line,
                equal && ascending             ? "; as many cores in each: the lowest CPUs first"
                        : decreasing && !equal ? "; the most cores first"
                                               : "");
}

/* See plan.h. */
int plan_spread_explain(const Topology *t, const unsigned *order, size_t n, char ***ret) {
        _cleanup_free_ unsigned *rounds = NULL, *seen = NULL;
        _cleanup_free_ int *cores = NULL;
        _cleanup_free_ SpreadGroup *groups = NULL;
        _cleanup_cpuset_ CpuSet all = CPUSET_NULL, loose = CPUSET_NULL, x = CPUSET_NULL;
        _cleanup_strv_free_ char **lines = NULL;
        unsigned n_cores = topology_n_cores(t), max_round = 0;
        size_t n_first = 0, n_groups = 0;
        int r = 0;

        rounds = calloc(MAX(n, 1U), sizeof(unsigned));
        seen = calloc(MAX(n_cores, 1U), sizeof(unsigned));
        cores = calloc(MAX(n, 1U), sizeof(int));
        groups = calloc(MAX(n, 1U), sizeof(SpreadGroup));
        if (!rounds || !seen || !cores || !groups)
                return -ENOMEM;

        /* Each CPU's core (-1: none known) and round: how many CPUs of its core came before it. */
        for (size_t i = 0; i < n && r >= 0; i++) {
                int core = topology_core_of_cpu(t, order[i]);

                cores[i] = core >= 0 && (unsigned)core < n_cores ? core : -1;
                r = cpuset_add(&all, order[i]);
                if (r >= 0 && cores[i] < 0)
                        r = cpuset_add(&loose, order[i]);
                if (r < 0 || cores[i] < 0)
                        continue;
                rounds[i] = seen[cores[i]]++;
                max_round = MAX(max_round, rounds[i]);
        }

        /* The first PUs, grouped while they share a cache domain and a NUMA node. */
        for (size_t i = 0; i < n && r >= 0; i++) {
                int core = cores[i], domain, node;
                SpreadGroup *g;

                if (core < 0 || rounds[i] > 0)
                        continue;
                n_first++;
                domain = topology_cache_domain_of_core(t, (unsigned)core);
                node = topology_node_of_cpu(t, order[i]);
                domain = domain < 0 ? -1 : domain;
                node = node < 0 ? -1 : node;
                g = n_groups > 0 ? &groups[n_groups - 1] : NULL;
                if (!g || g->domain != domain || g->node != node) {
                        g = &groups[n_groups++];
                        *g = (SpreadGroup){.domain = domain, .node = node, .first_cpu = order[i]};
                }
                g->n_cores++;
                r = set_and(&x, topology_core_cpus(t, (unsigned)core), &all);
                if (r >= 0)
                        r = cpuset_or(&g->cpus, &x);
        }

        if (r >= 0 && n_first > 0) {
                _cleanup_cpuset_ CpuSet first = CPUSET_NULL;
                _cleanup_free_ char *l = NULL;

                for (size_t i = 0; i < n && r >= 0; i++)
                        if (cores[i] >= 0 && rounds[i] == 0)
                                r = cpuset_add(&first, order[i]);
                l = r >= 0 ? set_str(&first) : NULL;
                if (!l)
                        r = -ENOMEM;
                else if (max_round == 0)
                        r = strv_extendf(
                                &lines, "one PU of each of %zu core%s (no two of them SMT siblings): %s",
                                n_first, n_first == 1 ? "" : "s", l);
                else
                        r = strv_extendf(
                                &lines,
                                "one PU of each of %zu core%s first, so that no two threads share a core "
                                "while one is free: %s",
                                n_first, n_first == 1 ? "" : "s", l);
        }
        if (r >= 0)
                r = spread_explain_packing(t, groups, n_groups, &lines);

        /* Then each round of SMT siblings. */
        for (unsigned round = 1; round <= max_round && r >= 0; round++) {
                _cleanup_cpuset_ CpuSet sib = CPUSET_NULL;
                _cleanup_free_ char *l = NULL, *which = NULL;
                const char *ordinal = sibling_ordinal(round);
                size_t m = 0;

                for (size_t i = 0; i < n && r >= 0; i++)
                        if (cores[i] >= 0 && rounds[i] == round) {
                                r = cpuset_add(&sib, order[i]);
                                m++;
                        }
                if (r < 0)
                        break;
                l = set_str(&sib);
                if (!l ||
                    (ordinal ? asprintf(&which, "%s SMT siblings", ordinal)
                             : asprintf(&which, "SMT siblings number %u", round + 1)) < 0) {
                        r = -ENOMEM;
                        break;
                }
                if (m == n_first)
                        r = strv_extendf(&lines, "then their %s: %s", which, l);
                else
                        r = strv_extendf(&lines, "then the %s of %zu of them: %s", which, m, l);
        }

        if (r >= 0 && !cpuset_is_empty(&loose)) {
                _cleanup_free_ char *l = set_str(&loose);

                r = l ? strv_extendf(&lines, "%sCPUs of no known core: %s", n_first > 0 ? "then " : "", l)
                      : -ENOMEM;
        }

        for (size_t g = 0; g < n_groups; g++)
                cpuset_done(&groups[g].cpus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(lines);
        return 0;
}

/* "NUMA node%s LIST" or "package%s LIST" for a set of numbers. NULL on OOM. */
char *plan_numbers_describe(const char *word, const CpuSet *numbers) {
        _cleanup_free_ char *l = set_str(numbers);
        char *d = NULL;

        if (!l || asprintf(&d, "%s%s %s", word, cpuset_count(numbers) == 1 ? "" : "s", l) < 0)
                return NULL;
        return d;
}

/* Adds "PREFIX: LIST" to the explanation. Returns 0 or -ENOMEM. */
int resolution_explain_set(Resolution *res, const char *prefix, const CpuSet *set) {
        _cleanup_free_ char *l = set_str(set);

        if (!l)
                return -ENOMEM;
        return strv_extendf(&res->explanation, "%s: %s", prefix, l);
}
