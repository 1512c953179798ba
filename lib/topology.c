/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The machine's topology through hwloc. Everything the rest of affinityd asks often (the CPU
 * sets, counts, the core and NUMA node of each CPU, the CPUs of each node and package) is
 * computed once at load time from the hwloc tree and kept as our own CpuSets, indexed by OS
 * numbers; the hwloc topology stays available for the rarer questions (caches, CPU kinds,
 * I/O locality).
 *
 * Odd topologies this copes with (all present in the corpus of real machines' XML files):
 *  - CPUs that no NUMA node covers (a package without a NUMANode object);
 *  - NUMA nodes with no CPU at all (memory-only), and several memory-side nodes sharing the
 *    locality of one CPU set (Xeon Phi MCDRAM beside DDR): then a CPU's node is the lowest
 *    numbered one;
 *  - sparse OS numbering of packages and nodes (0 and 8), offline CPUs that exist only in the
 *    complete cpuset, PUs without a Core object above them (each then counts as its own core).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hwloc.h>

#include "topology.h"

/* A package or NUMA node: its OS number and the CPUs (online or not) it holds. */
typedef struct TopologyDomain {
        unsigned os_index;
        CpuSet cpus;
} TopologyDomain;

/* A cache domain: an L3 cache, or what stands in for one (see topology.h). */
typedef struct CacheDomain {
        char *name; /* "L3 #2", "package 1", "NUMA node 3", "the machine" */
        CpuSet cpus;
} CacheDomain;

struct Topology {
        hwloc_topology_t hwloc;

        CpuSet all;     /* complete cpuset */
        CpuSet online;  /* topology cpuset */
        CpuSet allowed; /* allowed cpuset ∩ online */
        CpuSet node_set;
        CpuSet package_set;

        TopologyDomain *nodes; /* hwloc logical order */
        size_t n_nodes;
        TopologyDomain *packages; /* hwloc logical order */
        size_t n_packages;

        CpuSet *cores; /* index = our core index; the PUs of each core */
        size_t n_cores;

        /* Indexed by OS CPU number, n_cpu_slots entries; -1 when unknown. */
        int *cpu_core;
        int *cpu_node;
        size_t n_cpu_slots;

        CacheDomain *domains; /* in the order of their lowest CPU */
        size_t n_domains;
        unsigned *core_domain; /* index = core index */

        CpuSet *kinds;                /* hwloc's order: rising efficiency */
        const char **kind_core_types; /* borrowed from hwloc's infos, NULL entries allowed */
        size_t n_kinds;
        bool kinds_ranked;

        char *sysfs_root; /* NULL: no sysfs fallback for device locality */
};

/* OS number of an object, falling back to its logical index when hwloc doesn't know it. */
static unsigned obj_number(const struct hwloc_obj *o) {
        return o->os_index != HWLOC_UNKNOWN_INDEX ? o->os_index : o->logical_index;
}

/* OS number of a PU: its os_index, or else the bit of its cpuset (the same number). */
static unsigned pu_number(const struct hwloc_obj *pu) {
        if (pu->os_index != HWLOC_UNKNOWN_INDEX)
                return pu->os_index;
        return (unsigned)MAX(hwloc_bitmap_first(pu->cpuset), 0);
}

/* Converts an hwloc bitmap (indexes are OS numbers) into *ret. -EINVAL if infinite. */
static int cpuset_from_hwloc(hwloc_const_bitmap_t b, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        int r;

        if (b) {
                if (hwloc_bitmap_weight(b) < 0)
                        return -EINVAL; /* infinite bitmap: not a real set of CPUs */

                for (int i = hwloc_bitmap_first(b); i >= 0; i = hwloc_bitmap_next(b, i)) {
                        r = cpuset_add(&s, (unsigned)i);
                        if (r < 0)
                                return r;
                }
        }

        cpuset_done(ret);
        *ret = s;
        s = CPUSET_NULL;
        return 0;
}

static void domains_free(TopologyDomain *d, size_t n) {
        for (size_t i = 0; i < n; i++)
                cpuset_done(&d[i].cpus);
        free(d);
}

/* Collects every object of type (PACKAGE, NUMANODE, later L3…) with its complete cpuset. */
static int collect_domains(
        hwloc_topology_t h, hwloc_obj_type_t type, TopologyDomain **ret, size_t *ret_n,
        CpuSet *ret_numbers) {
        TopologyDomain *d = NULL;
        _cleanup_cpuset_ CpuSet numbers = CPUSET_NULL;
        int n, r;

        n = hwloc_get_nbobjs_by_type(h, type);
        if (n < 0)
                n = 0; /* the type lives on several depths; none of ours does */

        if (n > 0) {
                d = calloc(n, sizeof(TopologyDomain));
                if (!d)
                        return -ENOMEM;
        }

        for (int i = 0; i < n; i++) {
                hwloc_obj_t o = hwloc_get_obj_by_type(h, type, (unsigned)i);

                d[i].os_index = obj_number(o);
                r = cpuset_from_hwloc(o->complete_cpuset ?: o->cpuset, &d[i].cpus);
                if (r >= 0)
                        r = cpuset_add(&numbers, d[i].os_index);
                if (r < 0) {
                        domains_free(d, n);
                        return r;
                }
        }

        *ret = d;
        *ret_n = (size_t)n;
        cpuset_done(ret_numbers);
        *ret_numbers = numbers;
        numbers = CPUSET_NULL;
        return 0;
}

static int max_cpu_of(const CpuSet *s, int m) {
        return MAX(cpuset_last(s), m);
}

static int topology_index_cores(Topology *t) {
        unsigned n_hw_cores, extra = 0;
        hwloc_obj_t pu = NULL;
        int r;

        n_hw_cores = (unsigned)MAX(hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_CORE), 0);
        t->n_cores = n_hw_cores;
        if (n_hw_cores > 0) {
                t->cores = calloc(n_hw_cores, sizeof(CpuSet));
                if (!t->cores)
                        return -ENOMEM;
        }

        while ((pu = hwloc_get_next_obj_by_type(t->hwloc, HWLOC_OBJ_PU, pu))) {
                hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t->hwloc, HWLOC_OBJ_CORE, pu);
                unsigned cpu = pu_number(pu), idx;

                if (core)
                        idx = core->logical_index;
                else {
                        /* No Core object: the PU is a core of its own, numbered after hwloc's. */
                        CpuSet *a;

                        idx = n_hw_cores + extra++;
                        a = realloc(t->cores, (idx + 1) * sizeof(CpuSet));
                        if (!a)
                                return -ENOMEM;
                        t->cores = a;
                        t->cores[idx] = CPUSET_NULL;
                        t->n_cores = idx + 1;
                }
                if (idx >= t->n_cores)
                        return -EINVAL;

                r = cpuset_add(&t->cores[idx], cpu);
                if (r < 0)
                        return r;
                if (cpu >= t->n_cpu_slots)
                        return -EINVAL; /* a PU outside every cpuset: corrupt topology */
                t->cpu_core[cpu] = (int)idx;
        }

        return 0;
}

/* What a cache domain stands for, to find the domain of a core (see topology.h). */
typedef enum DomainKind {
        DOMAIN_L3,
        DOMAIN_PACKAGE,
        DOMAIN_NODE,
        DOMAIN_MACHINE,
} DomainKind;

typedef struct DomainKey {
        DomainKind kind;
        const struct hwloc_obj *obj; /* L3 and package */
        int node;                    /* NUMA node */
} DomainKey;

/* Finds or adds the domain for key; *keys is parallel to t->domains. Returns its index or -ENOMEM. */
static int domain_get(Topology *t, DomainKey **keys, const DomainKey *key) {
        _cleanup_free_ char *name = NULL;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        CacheDomain *d;
        DomainKey *k;
        int r;

        for (size_t i = 0; i < t->n_domains; i++)
                if ((*keys)[i].kind == key->kind && (*keys)[i].obj == key->obj &&
                    (*keys)[i].node == key->node)
                        return (int)i;

        switch (key->kind) {
        case DOMAIN_L3:
        case DOMAIN_PACKAGE:
                if (key->kind == DOMAIN_L3)
                        r = asprintf(&name, "L3 #%u", key->obj->logical_index);
                else
                        r = asprintf(&name, "package %u", obj_number(key->obj));
                if (r < 0)
                        return -ENOMEM;
                r = cpuset_from_hwloc(key->obj->complete_cpuset ?: key->obj->cpuset, &cpus);
                break;
        case DOMAIN_NODE: {
                _cleanup_cpuset_ CpuSet one = CPUSET_NULL;

                if (asprintf(&name, "NUMA node %d", key->node) < 0)
                        return -ENOMEM;
                r = cpuset_add(&one, (unsigned)key->node);
                if (r >= 0)
                        r = topology_cpus_of_nodes(t, &one, &cpus);
                break;
        }
        case DOMAIN_MACHINE:
        default:
                name = strdup("the machine");
                if (!name)
                        return -ENOMEM;
                r = cpuset_copy(&cpus, &t->all);
                break;
        }
        if (r < 0)
                return r;

        d = reallocarray(t->domains, t->n_domains + 1, sizeof(CacheDomain));
        if (!d)
                return -ENOMEM;
        t->domains = d;
        k = reallocarray(*keys, t->n_domains + 1, sizeof(DomainKey));
        if (!k)
                return -ENOMEM;
        *keys = k;

        k[t->n_domains] = *key;
        d[t->n_domains] = (CacheDomain){.name = TAKE_PTR(name), .cpus = cpus};
        cpus = CPUSET_NULL;
        return (int)t->n_domains++;
}

typedef struct DomainOrder {
        int first_cpu;
        size_t index;
} DomainOrder;

static int domain_order_compare(const void *a, const void *b) {
        const DomainOrder *x = a, *y = b;

        if (x->first_cpu != y->first_cpu)
                return x->first_cpu < y->first_cpu ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

/* The cache domain of every core (topology.h), numbered in the order of their lowest CPU. */
static int topology_index_domains(Topology *t) {
        _cleanup_free_ DomainKey *keys = NULL;
        _cleanup_free_ DomainOrder *order = NULL;
        _cleanup_free_ size_t *renumber = NULL;
        CacheDomain *sorted = NULL;
        int r;

        if (t->n_cores == 0)
                return 0;
        t->core_domain = calloc(t->n_cores, sizeof(unsigned));
        if (!t->core_domain)
                return -ENOMEM;

        for (size_t c = 0; c < t->n_cores; c++) {
                int cpu = cpuset_next(&t->cores[c], -1);
                hwloc_obj_t pu, o;
                DomainKey key = {.kind = DOMAIN_MACHINE, .node = -1};

                if (cpu < 0)
                        return -EINVAL;
                pu = hwloc_get_pu_obj_by_os_index(t->hwloc, (unsigned)cpu);
                if (pu && (o = hwloc_get_ancestor_obj_by_type(t->hwloc, HWLOC_OBJ_L3CACHE, pu)))
                        key = (DomainKey){.kind = DOMAIN_L3, .obj = o, .node = -1};
                else if (pu && (o = hwloc_get_ancestor_obj_by_type(t->hwloc, HWLOC_OBJ_PACKAGE, pu)))
                        key = (DomainKey){.kind = DOMAIN_PACKAGE, .obj = o, .node = -1};
                else if ((size_t)cpu < t->n_cpu_slots && t->cpu_node[cpu] >= 0)
                        key = (DomainKey){.kind = DOMAIN_NODE, .node = t->cpu_node[cpu]};

                r = domain_get(t, &keys, &key);
                if (r < 0)
                        return r;
                t->core_domain[c] = (unsigned)r;
        }

        /* Renumber by lowest CPU. */
        order = calloc(t->n_domains, sizeof(DomainOrder));
        renumber = calloc(t->n_domains, sizeof(size_t));
        sorted = calloc(t->n_domains, sizeof(CacheDomain));
        if (!order || !renumber || !sorted) {
                free(sorted);
                return -ENOMEM;
        }
        for (size_t i = 0; i < t->n_domains; i++)
                order[i] = (DomainOrder){.first_cpu = cpuset_next(&t->domains[i].cpus, -1), .index = i};
        qsort(order, t->n_domains, sizeof(DomainOrder), domain_order_compare);
        for (size_t i = 0; i < t->n_domains; i++) {
                sorted[i] = t->domains[order[i].index];
                renumber[order[i].index] = i;
        }
        free(t->domains);
        t->domains = sorted;
        for (size_t c = 0; c < t->n_cores; c++)
                t->core_domain[c] = (unsigned)renumber[t->core_domain[c]];
        return 0;
}

/* hwloc's CPU kinds, in its order (rising efficiency). */
static int topology_index_kinds(Topology *t) {
        hwloc_bitmap_t b = NULL;
        int n, r = 0;

        n = hwloc_cpukinds_get_nr(t->hwloc, 0);
        if (n <= 0)
                return 0;

        t->kinds = calloc((size_t)n, sizeof(CpuSet));
        t->kind_core_types = calloc((size_t)n, sizeof(char *));
        b = hwloc_bitmap_alloc();
        if (!t->kinds || !t->kind_core_types || !b) {
                hwloc_bitmap_free(b);
                return -ENOMEM;
        }
        t->n_kinds = (size_t)n;
        t->kinds_ranked = true;

        for (int i = 0; i < n; i++) {
                struct hwloc_info_s *infos = NULL;
                unsigned n_infos = 0;
                int efficiency = -1;

                if (hwloc_cpukinds_get_info(t->hwloc, (unsigned)i, b, &efficiency, &n_infos, &infos, 0) <
                    0) {
                        r = -EINVAL;
                        break;
                }
                if (efficiency < 0)
                        t->kinds_ranked = false;
                for (unsigned k = 0; k < n_infos; k++)
                        if (infos[k].name && streq(infos[k].name, "CoreType")) {
                                t->kind_core_types[i] = infos[k].value;
                                break;
                        }
                r = cpuset_from_hwloc(b, &t->kinds[i]);
                if (r < 0)
                        break;
        }

        hwloc_bitmap_free(b);
        return r;
}

static int topology_index(Topology *t) {
        hwloc_topology_t h = t->hwloc;
        int last, r;

        r = cpuset_from_hwloc(hwloc_topology_get_complete_cpuset(h), &t->all);
        if (r < 0)
                return r;
        r = cpuset_from_hwloc(hwloc_topology_get_topology_cpuset(h), &t->online);
        if (r < 0)
                return r;
        r = cpuset_from_hwloc(hwloc_topology_get_allowed_cpuset(h), &t->allowed);
        if (r < 0)
                return r;
        cpuset_and(&t->allowed, &t->online);

        r = collect_domains(h, HWLOC_OBJ_NUMANODE, &t->nodes, &t->n_nodes, &t->node_set);
        if (r < 0)
                return r;
        r = collect_domains(h, HWLOC_OBJ_PACKAGE, &t->packages, &t->n_packages, &t->package_set);
        if (r < 0)
                return r;

        /* Size the per-CPU tables for every CPU number any set mentions. */
        last = max_cpu_of(&t->all, -1);
        last = max_cpu_of(&t->online, last);
        for (size_t i = 0; i < t->n_nodes; i++)
                last = max_cpu_of(&t->nodes[i].cpus, last);
        for (size_t i = 0; i < t->n_packages; i++)
                last = max_cpu_of(&t->packages[i].cpus, last);
        for (hwloc_obj_t pu = NULL; (pu = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PU, pu));) {
                unsigned cpu = MIN(pu_number(pu), CPUSET_MAX_CPUS);
                last = MAX(last, (int)cpu);
        }
        if (last >= (int)CPUSET_MAX_CPUS)
                return -ERANGE;

        t->n_cpu_slots = (size_t)(last + 1);
        if (t->n_cpu_slots > 0) {
                t->cpu_core = malloc(t->n_cpu_slots * sizeof(int));
                t->cpu_node = malloc(t->n_cpu_slots * sizeof(int));
                if (!t->cpu_core || !t->cpu_node)
                        return -ENOMEM;
                for (size_t i = 0; i < t->n_cpu_slots; i++)
                        t->cpu_core[i] = t->cpu_node[i] = -1;
        }

        /* A CPU covered by several nodes (memory-side nodes) belongs to the lowest numbered. */
        for (size_t i = 0; i < t->n_nodes; i++)
                CPUSET_FOREACH (cpu, &t->nodes[i].cpus)
                        if (t->cpu_node[cpu] < 0 || (unsigned)t->cpu_node[cpu] > t->nodes[i].os_index)
                                t->cpu_node[cpu] = (int)t->nodes[i].os_index;

        r = topology_index_cores(t);
        if (r < 0)
                return r;
        r = topology_index_domains(t);
        if (r < 0)
                return r;
        return topology_index_kinds(t);
}

typedef enum TopologySource {
        TOPOLOGY_SOURCE_LIVE,
        TOPOLOGY_SOURCE_XML,
        TOPOLOGY_SOURCE_SYNTHETIC,
} TopologySource;

/* hwloc components the live load leaves out (see topology_load()). */
static const char *const components_unused[] = {"pci", "opencl", "gl", "cuda", "nvml", "rsmi", "levelzero"};

static int topology_load(TopologySource source, const char *arg, Topology **ret) {
        _cleanup_(topology_freep) Topology *t = NULL;
        int r;

        t = calloc(1, sizeof(Topology));
        if (!t)
                return -ENOMEM;

        if (hwloc_topology_init(&t->hwloc) < 0) {
                t->hwloc = NULL;
                return -ENOMEM;
        }

        if (hwloc_topology_set_flags(t->hwloc, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0)
                return errno > 0 ? -errno : -EINVAL;
        if (hwloc_topology_set_io_types_filter(t->hwloc, HWLOC_TYPE_FILTER_KEEP_ALL) < 0)
                return errno > 0 ? -errno : -EINVAL;

        /*
         * hwloc falls back to the live machine when the XML or synthetic backend can't be set
         * up, so a failure here must stop the load: a typo in --topology= must not plan
         * against this machine.
         */
        errno = 0;
        switch (source) {
        case TOPOLOGY_SOURCE_LIVE:
                /*
                 * PCI devices and their network/block children come from the Linux backend
                 * reading /sys/bus/pci: the libpciaccess "pci" component only adds vendor names,
                 * and leaks its pci.ids cache on every load. The GPU components (OpenCL ICDs, an
                 * X display) are slow and of no use for placement. A component that this hwloc
                 * was built without can't be blacklisted; that is fine.
                 */
                for (size_t i = 0; i < ELEMENTSOF(components_unused); i++)
                        (void)hwloc_topology_set_components(
                                t->hwloc, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, components_unused[i]);
                r = 0;
                break;
        case TOPOLOGY_SOURCE_XML:
                r = hwloc_topology_set_xml(t->hwloc, arg);
                if (r < 0)
                        return errno == ENOENT || errno == EACCES ? -errno : -EINVAL;
                break;
        case TOPOLOGY_SOURCE_SYNTHETIC:
                r = hwloc_topology_set_synthetic(t->hwloc, arg);
                if (r < 0)
                        return -EINVAL;
                break;
        }

        errno = 0;
        if (hwloc_topology_load(t->hwloc) < 0) {
                if (source != TOPOLOGY_SOURCE_LIVE)
                        return -EINVAL;
                return errno > 0 ? -errno : -EIO;
        }

        r = topology_index(t);
        if (r < 0)
                return r;

        /* Only the live machine is described by this machine's sysfs. */
        if (source == TOPOLOGY_SOURCE_LIVE) {
                r = topology_set_sysfs_root(t, "/");
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(t);
        return 0;
}

int topology_load_live(Topology **ret) {
        return topology_load(TOPOLOGY_SOURCE_LIVE, NULL, ret);
}

int topology_load_xml(const char *path, Topology **ret) {
        if (!path)
                return -EINVAL;
        return topology_load(TOPOLOGY_SOURCE_XML, path, ret);
}

int topology_load_synthetic(const char *description, Topology **ret) {
        if (!description)
                return -EINVAL;
        return topology_load(TOPOLOGY_SOURCE_SYNTHETIC, description, ret);
}

Topology *topology_free(Topology *t) {
        if (!t)
                return NULL;

        if (t->hwloc)
                hwloc_topology_destroy(t->hwloc);
        cpuset_done(&t->all);
        cpuset_done(&t->online);
        cpuset_done(&t->allowed);
        cpuset_done(&t->node_set);
        cpuset_done(&t->package_set);
        domains_free(t->nodes, t->n_nodes);
        domains_free(t->packages, t->n_packages);
        for (size_t i = 0; i < t->n_cores; i++)
                cpuset_done(&t->cores[i]);
        free(t->cores);
        free(t->cpu_core);
        free(t->cpu_node);
        for (size_t i = 0; i < t->n_domains; i++) {
                free(t->domains[i].name);
                cpuset_done(&t->domains[i].cpus);
        }
        free(t->domains);
        free(t->core_domain);
        for (size_t i = 0; i < t->n_kinds; i++)
                cpuset_done(&t->kinds[i]);
        free(t->kinds);
        free(t->kind_core_types);
        free(t->sysfs_root);
        free(t);
        return NULL;
}

const CpuSet *topology_all_cpus(const Topology *t) {
        return &t->all;
}

const CpuSet *topology_online_cpus(const Topology *t) {
        return &t->online;
}

const CpuSet *topology_allowed_cpus(const Topology *t) {
        return &t->allowed;
}

const CpuSet *topology_nodes(const Topology *t) {
        return &t->node_set;
}

const CpuSet *topology_packages(const Topology *t) {
        return &t->package_set;
}

unsigned topology_n_packages(const Topology *t) {
        return (unsigned)t->n_packages;
}

unsigned topology_n_nodes(const Topology *t) {
        return (unsigned)t->n_nodes;
}

unsigned topology_n_cores(const Topology *t) {
        return (unsigned)t->n_cores;
}

unsigned topology_n_cpus(const Topology *t) {
        return cpuset_count(&t->all);
}

/* Union of the CPUs of every domain whose number is in numbers; -ENOENT if one is missing. */
static int domains_cpus(const TopologyDomain *d, size_t n, const CpuSet *numbers, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet acc = CPUSET_NULL;
        bool missing = false;
        int r;

        CPUSET_FOREACH (number, numbers) {
                bool found = false;

                for (size_t i = 0; i < n; i++) {
                        if (d[i].os_index != (unsigned)number)
                                continue;
                        found = true;
                        r = cpuset_or(&acc, &d[i].cpus);
                        if (r < 0)
                                return r;
                }
                if (!found)
                        missing = true;
        }

        cpuset_done(ret);
        *ret = acc;
        acc = CPUSET_NULL;
        return missing ? -ENOENT : 0;
}

int topology_cpus_of_nodes(const Topology *t, const CpuSet *nodes, CpuSet *ret) {
        return domains_cpus(t->nodes, t->n_nodes, nodes, ret);
}

int topology_cpus_of_packages(const Topology *t, const CpuSet *packages, CpuSet *ret) {
        return domains_cpus(t->packages, t->n_packages, packages, ret);
}

int topology_nodes_of_cpus(const Topology *t, const CpuSet *cpus, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet acc = CPUSET_NULL;
        int r;

        for (size_t i = 0; i < t->n_nodes; i++)
                if (cpuset_intersects(&t->nodes[i].cpus, cpus)) {
                        r = cpuset_add(&acc, t->nodes[i].os_index);
                        if (r < 0)
                                return r;
                }

        cpuset_done(ret);
        *ret = acc;
        acc = CPUSET_NULL;
        return 0;
}

int topology_core_siblings(const Topology *t, unsigned cpu, CpuSet *ret) {
        int idx = topology_core_of_cpu(t, cpu);

        if (idx < 0)
                return idx;
        return cpuset_copy(ret, &t->cores[idx]);
}

int topology_core_of_cpu(const Topology *t, unsigned cpu) {
        if (cpu >= t->n_cpu_slots || t->cpu_core[cpu] < 0)
                return -ENOENT;
        return t->cpu_core[cpu];
}

const CpuSet *topology_core_cpus(const Topology *t, unsigned core) {
        if (core >= t->n_cores)
                return NULL;
        return &t->cores[core];
}

int topology_node_of_cpu(const Topology *t, unsigned cpu) {
        if (cpu >= t->n_cpu_slots || t->cpu_node[cpu] < 0)
                return -ENOENT;
        return t->cpu_node[cpu];
}

int topology_summary(const Topology *t, char **ret) {
        unsigned p = topology_n_packages(t), n = topology_n_nodes(t), c = topology_n_cores(t),
                 cpus = topology_n_cpus(t), online = cpuset_count(&t->online);
        char *s = NULL;

        if (asprintf(
                    &s, "%u package%s, %u NUMA node%s, %u core%s, %u CPU%s (%u online)", p,
                    p == 1 ? "" : "s", n, n == 1 ? "" : "s", c, c == 1 ? "" : "s", cpus,
                    cpus == 1 ? "" : "s", online) < 0)
                return -ENOMEM;

        *ret = s;
        return 0;
}

unsigned topology_n_cache_domains(const Topology *t) {
        return (unsigned)t->n_domains;
}

int topology_cache_domain_of_core(const Topology *t, unsigned core) {
        if (core >= t->n_cores || !t->core_domain)
                return -ENOENT;
        return (int)t->core_domain[core];
}

const CpuSet *topology_cache_domain_cpus(const Topology *t, unsigned domain) {
        if (domain >= t->n_domains)
                return NULL;
        return &t->domains[domain].cpus;
}

const char *topology_cache_domain_name(const Topology *t, unsigned domain) {
        if (domain >= t->n_domains)
                return NULL;
        return t->domains[domain].name;
}

unsigned topology_n_cpu_kinds(const Topology *t) {
        return (unsigned)t->n_kinds;
}

bool topology_cpu_kinds_ranked(const Topology *t) {
        return t->n_kinds > 0 && t->kinds_ranked;
}

int topology_cpu_kind(const Topology *t, unsigned i, CpuSet *ret, const char **ret_core_type) {
        int r;

        if (i >= t->n_kinds)
                return -ENOENT;
        r = cpuset_copy(ret, &t->kinds[i]);
        if (r < 0)
                return r;
        if (ret_core_type)
                *ret_core_type = t->kind_core_types[i];
        return 0;
}

int topology_set_sysfs_root(Topology *t, const char *root) {
        return free_and_strdup(&t->sysfs_root, root);
}

/* ---- device locality ---- */

/* n hex digits at s, 1 ≤ n ≤ max, into *ret; the number of digits read, 0 if not that. */
static size_t hex_field(const char *s, size_t max, unsigned *ret) {
        size_t n = strspn(s, "0123456789abcdefABCDEF");

        if (n == 0 || n > max)
                return 0;
        *ret = (unsigned)strtoul(s, NULL, 16);
        return n;
}

/* "0000:3b:00.0" or "3b:00.0" into its parts. Returns true if s is a PCI address. */
static bool pci_address_parse(
        const char *s, unsigned *domain, unsigned *bus, unsigned *dev, unsigned *func) {
        size_t k;

        *domain = 0;
        if (strchr(s, ':') != strrchr(s, ':')) {
                k = hex_field(s, 8, domain);
                if (k == 0 || s[k] != ':')
                        return false;
                s += k + 1;
        }
        k = hex_field(s, 2, bus);
        if (k == 0 || s[k] != ':')
                return false;
        s += k + 1;
        k = hex_field(s, 2, dev);
        if (k == 0 || s[k] != '.' || *dev > 0x1f)
                return false;
        s += k + 1;
        if (!(s[0] >= '0' && s[0] <= '7') || s[1] != '\0')
                return false;
        *func = (unsigned)(s[0] - '0');
        return true;
}

/* The hwloc object of device: a network/OpenFabrics OS device by name, or a PCI device. */
static hwloc_obj_t hwloc_find_device(const Topology *t, const char *device) {
        unsigned domain, bus, dev, func;

        if (strchr(device, ':')) {
                if (!pci_address_parse(device, &domain, &bus, &dev, &func))
                        return NULL;
                return hwloc_get_pcidev_by_busid(t->hwloc, domain, bus, dev, func);
        }

        for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(t->hwloc, o));)
                if (o->name && streq(o->name, device) &&
                    (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
                     o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS))
                        return o;
        return NULL;
}

/* The CPUs of nodes (those this topology has) into *cpus. Returns 0 or -ENOMEM. */
static int cpus_of_known_nodes(const Topology *t, const CpuSet *nodes, CpuSet *cpus) {
        int r = topology_cpus_of_nodes(t, nodes, cpus);
        return r == -ENOENT ? 0 : r;
}

/* Locality from hwloc's tree: the nodeset of the device's first non-I/O ancestor. */
static int hwloc_device_locality(const Topology *t, hwloc_obj_t o, CpuSet *cpus, CpuSet *nodes) {
        hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t->hwloc, o);
        int r;

        if (!a || a == hwloc_get_root_obj(t->hwloc))
                return TOPOLOGY_LOCALITY_NONE; /* hwloc knows no locality: attached to the machine */

        r = cpuset_from_hwloc(a->complete_nodeset ?: a->nodeset, nodes);
        if (r < 0)
                return r;
        cpuset_and(nodes, &t->node_set);
        r = cpus_of_known_nodes(t, nodes, cpus);
        if (r < 0)
                return r;
        if (cpuset_is_empty(cpus)) {
                /* No node with CPUs above it (odd XML): the ancestor's own CPUs. */
                r = cpuset_from_hwloc(a->complete_cpuset ?: a->cpuset, cpus);
                if (r < 0)
                        return r;
                r = topology_nodes_of_cpus(t, cpus, nodes);
                if (r < 0)
                        return r;
        }
        return cpuset_is_empty(cpus) ? TOPOLOGY_LOCALITY_NONE : TOPOLOGY_LOCALITY_NODES;
}

/* The first line of ROOT-relative file dir/name, newline stripped. -errno on failure. */
static int read_line_at(const char *dir, const char *name, char **ret) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;
        ssize_t n;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f)
                return -errno;
        n = getline(&line, &size, f);
        if (n < 0)
                return ferror(f) ? -EIO : -ENODATA;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
                line[--n] = '\0';
        *ret = TAKE_PTR(line);
        return 0;
}

/*
 * Locality from the sysfs directory of a device (/sys/bus/pci/devices/ADDRESS, or
 * /sys/class/net/DEV/device), or one of the two above it: the first with numa_node or
 * local_cpulist. Returns TOPOLOGY_LOCALITY_*, -ENOMEM.
 */
static int sysfs_device_locality(const Topology *t, const char *dir, CpuSet *cpus, CpuSet *nodes) {
        static const char *const up[] = {"", "/..", "/../.."};

        for (size_t i = 0; i < ELEMENTSOF(up); i++) {
                _cleanup_free_ char *d = NULL, *numa = NULL, *list = NULL;
                _cleanup_cpuset_ CpuSet local = CPUSET_NULL;
                int rn, rl, r;

                if (asprintf(&d, "%s%s", dir, up[i]) < 0)
                        return -ENOMEM;
                rn = read_line_at(d, "numa_node", &numa);
                rl = read_line_at(d, "local_cpulist", &list);
                if (rn == -ENOMEM || rl == -ENOMEM)
                        return -ENOMEM;
                if (rn < 0 && rl < 0)
                        continue;

                if (rn >= 0) {
                        char *end = NULL;
                        long node;

                        errno = 0;
                        node = strtol(numa, &end, 10);
                        if (errno == 0 && end != numa && *end == '\0' && node >= 0 &&
                            node < (long)CPUSET_MAX_CPUS && cpuset_contains(&t->node_set, (unsigned)node)) {
                                cpuset_clear(nodes);
                                r = cpuset_add(nodes, (unsigned)node);
                                if (r < 0)
                                        return r;
                                r = cpus_of_known_nodes(t, nodes, cpus);
                                if (r < 0)
                                        return r;
                                if (!cpuset_is_empty(cpus))
                                        return TOPOLOGY_LOCALITY_NODES;
                        }
                }

                /* A local_cpulist that narrows the online CPUs (-1 nodes list them all). */
                if (rl >= 0 && cpuset_parse_list(list, &local, NULL) >= 0 &&
                    cpuset_intersects(&local, &t->online) && !cpuset_is_subset(&t->online, &local)) {
                        r = cpuset_copy(cpus, &local);
                        if (r < 0)
                                return r;
                        r = topology_nodes_of_cpus(t, cpus, nodes);
                        if (r < 0)
                                return r;
                        return TOPOLOGY_LOCALITY_NODES;
                }
                return TOPOLOGY_LOCALITY_NONE;
        }
        return TOPOLOGY_LOCALITY_NONE;
}

static int sysfs_find_device(const Topology *t, const char *device, CpuSet *cpus, CpuSet *nodes) {
        _cleanup_free_ char *dir = NULL, *devdir = NULL;
        unsigned domain, bus, dev, func;
        struct stat st;

        if (strchr(device, ':')) {
                if (!pci_address_parse(device, &domain, &bus, &dev, &func))
                        return -ENODEV;
                if (asprintf(
                            &dir, "%s/sys/bus/pci/devices/%04x:%02x:%02x.%x", t->sysfs_root, domain, bus,
                            dev, func) < 0)
                        return -ENOMEM;
                if (stat(dir, &st) < 0)
                        return -ENODEV;
                return sysfs_device_locality(t, dir, cpus, nodes);
        }

        if (strchr(device, '/') || streq(device, ".") || streq(device, ".."))
                return -ENODEV;
        if (asprintf(&dir, "%s/sys/class/net/%s", t->sysfs_root, device) < 0)
                return -ENOMEM;
        if (stat(dir, &st) < 0)
                return -ENODEV;
        if (asprintf(&devdir, "%s/device", dir) < 0)
                return -ENOMEM;
        if (stat(devdir, &st) < 0)
                return TOPOLOGY_LOCALITY_NONE; /* virtual: veth, bridge, bond, tun … */
        return sysfs_device_locality(t, devdir, cpus, nodes);
}

int topology_device_closest_cpus(const Topology *t, const char *device, CpuSet *ret, const char **ret_what) {
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        hwloc_obj_t o, a;
        int r;

        if (!device || !*device)
                return -EINVAL;
        o = hwloc_find_device(t, device);
        if (!o)
                return -ENODEV;
        a = hwloc_get_non_io_ancestor_obj(t->hwloc, o);
        if (!a || a == hwloc_get_root_obj(t->hwloc))
                return -ENODEV;
        r = cpuset_from_hwloc(a->complete_cpuset ?: a->cpuset, &cpus);
        if (r < 0)
                return r;
        cpuset_and(&cpus, &t->online);
        if (cpuset_is_empty(&cpus))
                return -ENODEV;
        cpuset_done(ret);
        *ret = cpus;
        cpus = CPUSET_NULL;
        if (ret_what)
                *ret_what = hwloc_obj_type_string(a->type);
        return 0;
}

int topology_device_locality(
        const Topology *t, const char *device, CpuSet *ret_cpus, CpuSet *ret_nodes,
        const char **ret_source) {
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, nodes = CPUSET_NULL;
        const char *source;
        hwloc_obj_t o;
        int r;

        if (!device || !*device)
                return -EINVAL;

        o = hwloc_find_device(t, device);
        if (o) {
                source = "hwloc";
                r = hwloc_device_locality(t, o, &cpus, &nodes);
        } else if (t->sysfs_root) {
                source = "sysfs";
                r = sysfs_find_device(t, device, &cpus, &nodes);
        } else
                return -ENODEV;
        if (r < 0)
                return r;

        if (r == TOPOLOGY_LOCALITY_NONE) {
                cpuset_clear(&nodes);
                r = cpuset_copy(&cpus, &t->online);
                if (r < 0)
                        return r;
                r = TOPOLOGY_LOCALITY_NONE;
        }

        cpuset_done(ret_cpus);
        *ret_cpus = cpus;
        cpus = CPUSET_NULL;
        if (ret_nodes) {
                cpuset_done(ret_nodes);
                *ret_nodes = nodes;
                nodes = CPUSET_NULL;
        }
        if (ret_source)
                *ret_source = source;
        return r;
}

int topology_network_devices(const Topology *t, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(t->hwloc, o));) {
                if (!o->name ||
                    (o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
                     o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS))
                        continue;
                r = strv_extendf(&l, "%s", o->name);
                if (r < 0)
                        return r;
        }
        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int topology_device_pci_address(const Topology *t, const char *device, char **ret) {
        hwloc_obj_t o;
        char *s = NULL;

        if (!device || !*device)
                return -EINVAL;
        o = hwloc_find_device(t, device);
        while (o && o->type != HWLOC_OBJ_PCI_DEVICE)
                o = o->parent;
        if (!o)
                return hwloc_find_device(t, device) ? -ENXIO : -ENODEV;
        if (asprintf(
                    &s, "%04x:%02x:%02x.%x", o->attr->pcidev.domain, o->attr->pcidev.bus,
                    o->attr->pcidev.dev, o->attr->pcidev.func) < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}
