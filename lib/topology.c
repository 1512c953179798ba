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
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "topology.h"

/* A package or NUMA node: its OS number and the CPUs (online or not) it holds. */
typedef struct TopologyDomain {
        unsigned os_index;
        CpuSet cpus;
} TopologyDomain;

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

        return topology_index_cores(t);
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
        free(t);
        return NULL;
}

hwloc_topology_t topology_hwloc(const Topology *t) {
        return t->hwloc;
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
