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
 * Cache domains: where counted selections are packed. A core's cache domain is the L3 cache
 * above it (hwloc L3Cache object); where there is none, its package; without a package, its
 * NUMA node; failing all, the whole machine. Domains are numbered 0 … n-1 in the order of
 * their lowest CPU (OS number), so a lower number means a domain holding a lower-numbered CPU.
 */
unsigned topology_n_cache_domains(const Topology *t);
/*
 * The cache domain number of core number core (as topology_core_of_cpu() returns), or -ENOENT
 * if there is no such core.
 */
int topology_cache_domain_of_core(const Topology *t, unsigned core);
/* Every CPU (online or not) of cache domain number domain, or NULL if there is none. Borrowed. */
const CpuSet *topology_cache_domain_cpus(const Topology *t, unsigned domain);
/*
 * A name for cache domain number domain, for explanations: "L3 #2" (hwloc's logical index of
 * the L3 cache: they have no OS number), "package 1", "NUMA node 3" (OS numbers) or "the
 * machine". A static or borrowed string, valid as long as t; NULL if there is no such domain.
 */
const char *topology_cache_domain_name(const Topology *t, unsigned domain);

/*
 * CPU kinds (hwloc_cpukinds_*: P-cores and E-cores of hybrid parts), read once at load time.
 * The number of kinds hwloc reports: 0 when it knows none (most XML files, many VMs), 1 on
 * a homogeneous machine.
 */
unsigned topology_n_cpu_kinds(const Topology *t);
/*
 * true when hwloc ranked the kinds by efficiency (it does when there is only one kind, and when
 * the OS or the hwloc XML gives efficiencies or it can compare core types and frequencies).
 */
bool topology_cpu_kinds_ranked(const Topology *t);
/*
 * The CPUs (OS numbers) of the kind of rank i into *ret: ranks are in hwloc's order of rising
 * efficiency value, and a higher efficiency value means higher intrinsic performance, so rank
 * 0 is the most energy-efficient kind (E-cores) and rank n-1 the most performant (P-cores).
 * *ret_core_type (if non-NULL) is hwloc's "CoreType" info of the kind ("IntelCore",
 * "IntelAtom"), or NULL when it has none; borrowed from t.
 * Returns 0, -ENOENT if there is no kind i, -ENOMEM.
 */
int topology_cpu_kind(const Topology *t, unsigned i, CpuSet *ret, const char **ret_core_type);

/*
 * Where sysfs is for the sysfs fallback of topology_device_locality(): root is a directory
 * holding sys/ (NULL: no sysfs fallback; "/": the real machine). The live loader sets "/";
 * the XML and synthetic loaders set NULL, since this machine's sysfs doesn't describe them.
 * Tests point it at a fixture tree. Returns 0 or -ENOMEM.
 */
int topology_set_sysfs_root(Topology *t, const char *root);

/* What topology_device_locality() found out (non-negative returns). */
typedef enum TopologyLocality {
        TOPOLOGY_LOCALITY_NODES = 0, /* the device is attached to the NUMA node(s) returned */
        TOPOLOGY_LOCALITY_NONE = 1,  /* the device has no NUMA locality: every online CPU */
} TopologyLocality;

/*
 * The locality of a device, for the near: selector. device is a network interface name
 * ("eth0"; also an RDMA device name as hwloc lists it, "mlx5_0") or a PCI address
 * ("0000:3b:00.0", or "3b:00.0" for domain 0; hex digits in either case).
 * First from hwloc: the OS device of type network (or OpenFabrics) with that name, or the PCI
 * device with that address; its locality is the NUMA nodes (hwloc nodeset) of its first non-I/O
 * ancestor. When hwloc doesn't know the device and a sysfs root is set, from sysfs:
 * ROOT/sys/class/net/DEV/device (or ROOT/sys/bus/pci/devices/ADDRESS) and the directories
 * above it, the first holding numa_node or local_cpulist: numa_node ≥ 0 and known here gives
 * that node, else local_cpulist gives those CPUs (and the nodes that cover them).
 * No NUMA locality — hwloc attaches the device to the machine itself, numa_node is -1 with no
 * usable local_cpulist, or a virtual interface has no device link (veth, bridges) — is
 * TOPOLOGY_LOCALITY_NONE with every online CPU and no node.
 * On success *ret_cpus gets the CPUs (online or not) of the device's nodes, *ret_nodes the
 * NUMA nodes (OS numbers; may be NULL), and *ret_source (may be NULL) a static word saying
 * where it came from: "hwloc", "sysfs".
 * Returns TOPOLOGY_LOCALITY_NODES or TOPOLOGY_LOCALITY_NONE; -ENODEV when neither knows the
 * device, -EINVAL for an empty name, -ENOMEM. Reads sysfs only for devices hwloc doesn't know.
 */
int topology_device_locality(
        const Topology *t, const char *device, CpuSet *ret_cpus, CpuSet *ret_nodes, const char **ret_source);

/*
 * The CPUs closest to a device (named as for topology_device_locality()) that hwloc knows: the
 * online CPUs of its first non-I/O ancestor — on a chiplet machine an L3 cache, a die or a
 * group narrower than the NUMA node; elsewhere the node or the package, the same CPUs as the
 * node's. *ret_what (may be NULL) gets hwloc's name of that ancestor's type ("L3Cache",
 * "Package", "Group", "NUMANode"...), static. Returns 0; -ENODEV when hwloc doesn't know the
 * device, or attaches it to the machine itself (no locality); -EINVAL for an empty name;
 * -ENOMEM.
 */
int topology_device_closest_cpus(const Topology *t, const char *device, CpuSet *ret, const char **ret_what);

/*
 * The network devices hwloc lists in t (OS devices of type network or OpenFabrics: "eth0",
 * "ib0", "mlx5_0"; in an XML only when it was exported with its I/O objects, lstopo's
 * default), in hwloc's order, into *ret (NULL-terminated, possibly empty). The live topology
 * lists this machine's. Returns 0 or -ENOMEM.
 */
int topology_network_devices(const Topology *t, char ***ret);

/*
 * The PCI address ("0000:3b:00.0", lower-case hex) of a device named as for
 * topology_device_locality() that hwloc knows: the PCI device above a network or OpenFabrics
 * OS device, or the PCI device itself. Returns 0 and a newly allocated *ret; -ENODEV when
 * hwloc doesn't know the device; -ENXIO when no PCI device is above it; -EINVAL for an empty
 * name; -ENOMEM.
 */
int topology_device_pci_address(const Topology *t, const char *device, char **ret);

/*
 * One line for logs and D-Bus, e.g. "2 packages, 2 NUMA nodes, 16 cores, 32 CPUs (30 online)".
 * Returns 0 or -ENOMEM.
 */
int topology_summary(const Topology *t, char **ret);
