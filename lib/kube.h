/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Kubernetes facts about a process, for the match: keys pod:, namespace: and container:
 * (docs/kubernetes.md):
 *  - the pod UID and the container ID, from the process's cgroup path, in every naming the
 *    kubelet's cgroup drivers and the container runtimes use (kube_parse_cgroup(), pure);
 *  - the pod's name and namespace and the container's name, from the kubelet's per-node log
 *    records under a root directory: the symlinks
 *    ROOT/var/log/containers/<pod>_<namespace>_<container>-<container id>.log and the pod log
 *    directories ROOT/var/log/pods/<namespace>_<pod>_<pod uid>/ (KubeRecords, a cache that is
 *    listed again only for an ID it does not know, and then at most once per interval).
 */

#include <stdbool.h>
#include <stdint.h>

/* A container ID: 64 lowercase hex digits. A pod UID: a UUID (36 characters) or, for a static
 * pod, the kubelet's 32-hex-digit hash. Both plus their NUL. */
#define KUBE_CONTAINER_ID_LEN 64U
#define KUBE_POD_UID_MAX      36U

/* What a cgroup path says about a Kubernetes process. */
typedef struct KubeCgroupIds {
        char pod_uid[KUBE_POD_UID_MAX + 1];           /* "" when the path names no pod */
        char container_id[KUBE_CONTAINER_ID_LEN + 1]; /* "" when it names no container */
} KubeCgroupIds;

/*
 * The pod UID and the container ID in a cgroup path as /proc/PID/cgroup gives it (the v2 path
 * or a v1 one). The path must be the kubelet's tree, level by level:
 *  - its top-level cgroup, "kubepods.slice" (systemd cgroup driver) or "kubepods" (cgroupfs);
 *  - optionally the QoS class's, "kubepods-burstable.slice" or "kubepods-besteffort.slice",
 *    "burstable" or "besteffort";
 *  - the pod's: "kubepods-pod<uid>.slice", "kubepods-burstable-pod<uid>.slice",
 *    "kubepods-besteffort-pod<uid>.slice" (the UID's '-' written '_'), or "pod<uid>";
 *  - the container's: "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope",
 *    the same without ".scope" (cgroupfs), or a bare "<id>" (cgroupfs). CRI-O's
 *    "crio-conmon-<id>.scope" is the runtime's monitor, not the container: no container ID.
 * An absolute path starts at the top level (which only root can create, so a delegated
 * subtree elsewhere can't pass for a pod). A path relative to the reader's cgroup namespace
 * (starting with "/.." or not with "/") may start at any level after its ".."s:
 * "/../../kubepods-pod<uid>.slice/…", "/../cri-containerd-<id>.scope". Whatever follows the
 * container's cgroup (sub-cgroups) is ignored; a pod's cgroup followed by something else gives
 * the pod alone. UIDs (a UUID, or a static pod's 32 hex digits) and IDs are lowercase hex
 * only; *ret gets the UID with '-'.
 * Returns 1 when the path names a pod or a container (*ret filled in, either field may be ""),
 * 0 when it names neither (*ret zeroed). Never fails.
 */
int kube_parse_cgroup(const char *path, KubeCgroupIds *ret);

/*
 * A cgroup path for kube_parse_cgroup() from the whole of /proc/PID/cgroup (text, as
 * cgroup_read_membership() gives it), for a host where neither the v2 line nor a v1
 * name=systemd one holds the process's place (v1 without systemd): the path of the v1 line
 * whose controller list holds "cpuset". Newly allocated into *ret. Returns 0, -ENODATA (no such
 * line), -ENOMEM.
 */
int kube_cpuset_cgroup_path(const char *text, char **ret);

/* The names of a container's pod, newly allocated; container NULL when only the pod is known. */
typedef struct KubeNames {
        char *pod;
        char *pod_namespace;
        char *container;
} KubeNames;

/* Frees what n holds and zeroes it. NULL is accepted. */
void kube_names_done(KubeNames *n);

/* The clock KubeRecords bounds its listings with: monotonic µs. */
typedef uint64_t (*KubeClock)(void *userdata);

/* Default interval between two listings of the kubelet's directories, µs. */
#define KUBE_RELIST_USEC (1000U * 1000U)

typedef struct KubeRecords KubeRecords;

/*
 * A new, empty cache of the kubelet's records under root (copied; NULL or "/" = the real
 * /var/log). Nothing is read until the first lookup. relist_usec: the least time, in µs,
 * between two listings (0: KUBE_RELIST_USEC). clock: NULL for CLOCK_MONOTONIC, else called
 * with userdata (tests). The cache is safe to use from several threads (a mutex).
 * Returns 0 or -ENOMEM.
 */
int kube_records_new(
        const char *root, uint64_t relist_usec, KubeClock clock, void *userdata, KubeRecords **ret);
/* Frees k. NULL is accepted; returns NULL. */
KubeRecords *kube_records_free(KubeRecords *k);

/*
 * The names for ids (kube_parse_cgroup()): by the container ID from the log symlinks of
 * ROOT/var/log/containers, else (no symlink for it, or no container ID) the pod's name and
 * namespace by the pod UID from the directories of ROOT/var/log/pods, with ret->container NULL.
 * The directories are listed (readdir(3); only the names are read, nothing is followed) at the
 * first lookup, and again when an ID is not found — at most once per relist interval, so a
 * flood of processes with unknown IDs costs no more than one listing per interval. A missing or
 * unreadable directory is an empty one. Names that are not the kubelet's are skipped.
 * Returns 1 (*ret filled in), 0 (not found; *ret zeroed), -ENOMEM.
 */
int kube_records_lookup(KubeRecords *k, const KubeCgroupIds *ids, KubeNames *ret);

/*
 * Lists the directories again now, whenever the last listing was: a new record was seen
 * (inotify on ROOT/var/log/containers). The caller bounds how often. Returns 0 or -ENOMEM (the
 * old tables kept).
 */
int kube_records_relist(KubeRecords *k);

/*
 * The IDs of the container a record of ROOT/var/log/containers names: name is the entry's
 * name ("<pod>_<namespace>_<container>-<id>.log": the container ID), and its symlink, read
 * with readlink(2) and never followed, points into the pod's log directory
 * (".../var/log/pods/<namespace>_<pod>_<uid>/<container>/<n>.log": the pod UID). root: NULL or
 * "/" for the real /var/log. Returns 1 (*ret filled in), 0 (not the kubelet's name or target:
 * *ret zeroed), -ENOMEM, or readlink(2)'s -errno (-ENOENT: removed meanwhile).
 */
int kube_read_container_record(const char *root, const char *name, KubeCgroupIds *ret);

/*
 * The cgroup paths (from a hierarchy's root, as /proc/PID/cgroup gives them outside any cgroup
 * namespace) where the container ids names can be, one for each layout kube_parse_cgroup()
 * understands: the systemd and the cgroupfs driver, no QoS class (Guaranteed), burstable and
 * besteffort, and each runtime's naming (containerd, CRI-O, docker). Each parses back to ids.
 * *ret: a newly allocated NULL-terminated strv (21 paths). Returns 0, -EINVAL (no pod UID or no
 * container ID in ids), -ENOMEM.
 */
int kube_container_cgroup_paths(const KubeCgroupIds *ids, char ***ret);

/* How many times k has listed the directories (each listing reads both). */
unsigned kube_records_listings(KubeRecords *k);
