/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The kubelet's CPU manager checkpoint (docs/kubernetes.md, "Coexisting with the kubelet's CPU
 * manager"): the file the kubelet's static CPU manager policy records its assignments in,
 * /var/lib/kubelet/cpu_manager_state by default. It is JSON, one line, written by the kubelet's
 * checkpoint manager to a hidden temporary file in the same directory and renamed over the old
 * one, so a reader never sees half of it:
 *
 *   {"policyName":"static","defaultCpuSet":"0,5-7",
 *    "entries":{"POD-UID":{"CONTAINER-NAME":"1-4"}},"checksum":1234567}
 *
 * entries (absent with the "none" policy, or when nothing is assigned) maps each pod UID to its
 * containers' exclusive CPUs, cpu-lists as the kernel writes them. The older format (v1) mapped
 * container IDs straight to a cpu-list: {"entries":{"CONTAINER-ID":"1-4"}}; both are read. The
 * exclusive CPUs are the union of every entry: the CPUs of Guaranteed pods' containers with
 * integer CPU requests. defaultCpuSet, the shared pool, is kept for messages only. The checksum
 * (a hash of the kubelet's Go structure, not of the text) is not verified; unknown keys are
 * ignored, so a newer kubelet's additions don't make the file unreadable.
 *
 * JSON is read as YAML (libyaml, through the node tree of policy-yaml-tree.c), so errors have a
 * line and column. Nothing here logs or watches: the daemon does (daemon/manager-kubelet.c).
 */

#include <stddef.h>

#include "cpuset.h"
#include "macro.h"

#define KUBELET_CPU_MANAGER_STATE_DEFAULT "/var/lib/kubelet/cpu_manager_state"
/* The largest checkpoint read, bytes: a node's entries are a few dozen bytes per container. */
#define KUBELET_CPU_MANAGER_STATE_MAX (1024U * 1024U)

/* One container's exclusive CPUs. */
typedef struct KubeletCpuAssignment {
        char *pod_uid;   /* the entries key: a pod UID (v2), or NULL (v1) */
        char *container; /* the container's name (v2) or container ID (v1) */
        CpuSet cpus;     /* OS CPU numbers */
} KubeletCpuAssignment;

typedef struct KubeletCpuState {
        char *policy_name;   /* policyName: "static", "none" */
        CpuSet default_cpus; /* defaultCpuSet: the shared pool */
        KubeletCpuAssignment *entries;
        size_t n_entries; /* in file order */
        CpuSet exclusive; /* the union of every entry's cpus */
} KubeletCpuState;

/*
 * Parses a checkpoint from text (len bytes, need not be NUL-terminated); file names it in
 * errors. The top level must be a mapping with policyName: a string; defaultCpuSet: a cpu-list
 * string if given; entries: if given (null is none), a mapping of pod UIDs to mappings of
 * container names to cpu-list strings, or (v1) of container IDs to cpu-list strings.
 * Returns 0 and *ret (free with kubelet_cpu_state_free()); -EBADMSG (not YAML/JSON, or the
 * wrong shape) or -ERANGE (a CPU number >= CPUSET_MAX_CPUS) with a newly allocated
 * "FILE:LINE:COLUMN: message" in *ret_error (if non-NULL); -ENOMEM.
 */
int kubelet_cpu_state_parse(
        const char *file, const char *text, size_t len, KubeletCpuState **ret, char **ret_error);

/*
 * Reads and parses the checkpoint at path: a regular file of at most
 * KUBELET_CPU_MANAGER_STATE_MAX bytes (read_full_file() with READ_FULL_REGULAR and
 * READ_FULL_NO_NUL). Returns 0 and *ret; -ENOENT when there is no such file (no kubelet, or no
 * CPU manager state yet: nothing is exclusive, and no error text); the errors of
 * kubelet_cpu_state_parse(); or read_full_file()'s -errno (-EFBIG for a larger file, -EACCES,
 * -EISDIR, -ESTALE while the kubelet writes it in place …), each but -ENOENT with a
 * "PATH: reason" in *ret_error.
 */
int kubelet_cpu_state_load(const char *path, KubeletCpuState **ret, char **ret_error);

/* Frees s and what it owns. NULL accepted; returns NULL. */
KubeletCpuState *kubelet_cpu_state_free(KubeletCpuState *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeletCpuState *, kubelet_cpu_state_free);

/* A deep copy of s (NULL: *ret = NULL). Returns 0 or -ENOMEM. */
int kubelet_cpu_state_copy(const KubeletCpuState *s, KubeletCpuState **ret);

/* The exclusive CPUs of s; an empty set for NULL. Borrowed. */
const CpuSet *kubelet_cpu_state_exclusive(const KubeletCpuState *s);

/*
 * Who holds the CPUs of cpus (NULL: all of them), for messages: each entry that holds any of
 * them, as "1-4 (pod UID container NAME)" (v1: "1-4 (container ID)"), ", "-separated, in file
 * order, into a newly allocated *ret ("" when none). Returns 0 or -ENOMEM.
 */
int kubelet_cpu_state_describe(const KubeletCpuState *s, const CpuSet *cpus, char **ret);

/*
 * Takes the exclusive CPUs of s (NULL: none) out of *cpus. Returns 0 when *cpus had none of
 * them (nothing changed), 1 with who holds the removed ones in a newly allocated *ret_who
 * (kubelet_cpu_state_describe()), or -ENOMEM (*cpus unchanged).
 */
int kubelet_cpu_state_remove_from(const KubeletCpuState *s, CpuSet *cpus, char **ret_who);
