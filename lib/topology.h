/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The machine's CPU topology, through hwloc: PUs (logical CPUs), cores and their SMT
 * siblings, packages (sockets), NUMA nodes, and which CPUs are online and allowed.
 * Loaded from the live machine, an hwloc XML file, or an hwloc synthetic description, always
 * with disallowed CPUs and I/O devices included (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED,
 * io type filter KEEP_ALL), so the daemon sees the whole machine, not its own cgroup's share.
 * Every CPU and node number in and out of this module is an OS index (hwloc's os_index),
 * never an hwloc logical index.
 */

#include <hwloc.h>

#include "cpuset.h"
#include "macro.h"

typedef struct Topology Topology;

/*
 * Loads the live machine's topology (hwloc reads /sys and /proc). Returns 0 or a negative
 * errno (-ENOMEM, or -errno from hwloc_topology_load()). All three loaders may also return
 * -ERANGE (a CPU number >= CPUSET_MAX_CPUS).
 */
int topology_load_live(Topology **ret);
/*
 * Loads an hwloc XML export (lstopo foo.xml). Returns 0, -ENOENT, -EACCES, -EINVAL (not hwloc
 * XML). Never falls back to the live machine.
 */
int topology_load_xml(const char *path, Topology **ret);
/* Loads an hwloc synthetic description, e.g. "pack:2 numa:1 core:4 pu:2". Returns 0 or -EINVAL. */
int topology_load_synthetic(const char *description, Topology **ret);

Topology *topology_free(Topology *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Topology *, topology_free);

/* The underlying hwloc topology, for modules that need more than this API offers. */
hwloc_topology_t topology_hwloc(const Topology *t);

/* Every PU hwloc knows of (online or not, allowed or not): hwloc's complete cpuset. */
const CpuSet *topology_all_cpus(const Topology *t);
/*
 * Online CPUs: hwloc's topology cpuset (hwloc marks offline PUs only in the complete cpuset).
 * For the live machine this matches /sys/devices/system/cpu/online.
 */
const CpuSet *topology_online_cpus(const Topology *t);
/* Online CPUs that the topology's cgroup/cpuset allows (hwloc's allowed cpuset ∩ online). */
const CpuSet *topology_allowed_cpus(const Topology *t);
/*
 * NUMA nodes (OS numbers) that exist, memory-only nodes included. CPUs may be covered by no
 * node at all (an XML file that has no NUMANode above them).
 */
const CpuSet *topology_nodes(const Topology *t);
/* Packages (OS numbers: physical_package_id; hwloc's logical index if it has none) that exist. */
const CpuSet *topology_packages(const Topology *t);

/* Package objects hwloc found (each counted, even if two share a number). */
unsigned topology_n_packages(const Topology *t);
/* NUMANode objects hwloc found, memory-only and memory-side ones included. */
unsigned topology_n_nodes(const Topology *t);
/* Cores: hwloc's Core objects, plus each PU that has no Core above it (a core of its own). */
unsigned topology_n_cores(const Topology *t);
/*
 * CPUs hwloc knows of, online or not: the size of topology_all_cpus(). Offline CPUs have no
 * PU object (so no core), so this may exceed the PUs of topology_n_cores().
 */
unsigned topology_n_cpus(const Topology *t);

/*
 * The set arguments named ret below must be initialised sets (CPUSET_NULL or in use): their
 * contents are replaced. ret may be the same set as the input.
 */

/*
 * CPUs (online or not) of the NUMA nodes in nodes (OS node numbers) into *ret: hwloc's
 * complete cpusets of the nodes. Memory-side nodes (Xeon Phi MCDRAM) share the CPUs of their
 * DDR node; a memory-only node has none.
 * Returns 0, -ENOENT if a node in the set does not exist (the set is still filled with the
 * CPUs of the nodes that do), -ENOMEM.
 */
int topology_cpus_of_nodes(const Topology *t, const CpuSet *nodes, CpuSet *ret);
/* CPUs of the packages in packages (OS package numbers, physical_package_id). As above. */
int topology_cpus_of_packages(const Topology *t, const CpuSet *packages, CpuSet *ret);
/* NUMA nodes (OS numbers) whose CPUs intersect cpus. Returns 0 or -ENOMEM. */
int topology_nodes_of_cpus(const Topology *t, const CpuSet *cpus, CpuSet *ret);

/*
 * The SMT siblings of cpu, cpu included (the PUs of its core) into *ret.
 * Returns 0, -ENOENT if the topology has no such CPU, -ENOMEM.
 */
int topology_core_siblings(const Topology *t, unsigned cpu, CpuSet *ret);
/*
 * Logical index of the core holding cpu (stable within one Topology: hwloc's logical index
 * of the Core object, then PUs without a core numbered after them), or -ENOENT (no such CPU,
 * or an offline CPU, whose core hwloc can't know).
 */
int topology_core_of_cpu(const Topology *t, unsigned cpu);
/*
 * The PUs (OS numbers) of core number core (as topology_core_of_cpu() returns, 0 ≤ core <
 * topology_n_cores()), or NULL if there is no such core. Borrowed from t.
 */
const CpuSet *topology_core_cpus(const Topology *t, unsigned core);
/*
 * OS number of the NUMA node holding cpu, or -ENOENT (no such CPU or no NUMA information).
 * When several nodes cover the CPU (memory-side nodes), the lowest numbered one.
 */
int topology_node_of_cpu(const Topology *t, unsigned cpu);

/*
 * One line for logs and D-Bus, e.g. "2 packages, 2 NUMA nodes, 16 cores, 32 CPUs (30 online)".
 * Returns 0 or -ENOMEM.
 */
int topology_summary(const Topology *t, char **ret);
