/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's first process, matched again once the kubelet has named its container
 * (daemon/kube-watch.h, docs/kubernetes.md). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube-watch.h"
#include "kube.h"
#include "log.h"
#include "manager-internal.h"

/* At most this many processes are matched again per run, all new containers together (each
 * container's cgroup.procs is read up to there): a container starts with a few. What is left
 * is matched at its next exec, rename or uid change, or at a rescan. */
#define KUBE_REMATCH_MAX 1024U

/* The hierarchies where a container's cgroup is looked for: cgroup v2, then the hybrid layout's
 * cgroup2 and name=systemd mounts, then a v1 cpuset (lib/cgroup.h). */
static const char *const cgroup_roots[] = {
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup/systemd",
        "/sys/fs/cgroup/cpuset",
};

/*
 * Matches the processes of the container ids names again, at most budget of them: its cgroup is
 * found by its IDs (kube_container_cgroup_paths(), the first hierarchy that has it), and each
 * PID of its cgroup.procs is matched as after a rename. Processes in cgroups below the
 * container's are left to their next exec or a rescan. Returns the number of processes
 * matched again.
 */
static unsigned rematch_container(Manager *m, const KubeCgroupIds *ids, unsigned budget) {
        _cleanup_strv_free_ char **paths = NULL;
        unsigned n = 0;
        int r;

        r = kube_container_cgroup_paths(ids, &paths);
        if (r < 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(cgroup_roots); i++)
                STRV_FOREACH (p, paths) {
                        _cleanup_fclose_ FILE *f = NULL;
                        _cleanup_free_ char *procs = NULL;
                        int pid;

                        if (asprintf(&procs, "%s%s/cgroup.procs", cgroup_roots[i], *p) < 0)
                                return n;
                        f = fopen(procs, "re");
                        if (!f)
                                continue;
                        while (n < budget && fscanf(f, "%d", &pid) == 1)
                                if (pid > 0) {
                                        (void)manager_rematch_process(m, pid);
                                        n++;
                                }
                        log_debug(
                                "Container %s of pod %s named by the kubelet: matched its %u processes "
                                "again",
                                ids->container_id, ids->pod_uid, n);
                        return n;
                }
        return 0;
}

/*
 * The handler of the records watch: the records listed again, then each new container's
 * processes matched again — each container once, however many of its records appeared, and at
 * most KUBE_REMATCH_MAX processes in all — or, when names were lost, every process rescanned.
 */
static void on_kube_records(KubeWatch *w, char **names, bool overflow, void *userdata) {
        Manager *m = userdata;
        _cleanup_free_ KubeCgroupIds *done = NULL;
        unsigned budget = KUBE_REMATCH_MAX;
        size_t n_done = 0;
        int r;

        r = kube_records_relist(m->kube);
        if (r < 0)
                return (void)log_warning_errno(r, "Failed to list the kubelet's records: %m");
        if (overflow) {
                log_debug("Many new container records at once: rescanning every process");
                r = manager_rescan(m);
                if (r < 0)
                        log_warning_errno(r, "Failed to rescan after new container records: %m");
                return;
        }
        done = calloc(MAX(strv_length(names), (size_t)1), sizeof(KubeCgroupIds));
        if (!done)
                return (void)log_warning_errno(-ENOMEM, "Failed to match new containers' processes: %m");
        STRV_FOREACH (name, names) {
                KubeCgroupIds ids;
                bool seen = false;

                r = kube_read_container_record(NULL, *name, &ids);
                if (r < 0 && r != -ENOENT)
                        log_debug_errno(r, "Failed to read the container record %s: %m", *name);
                if (r <= 0)
                        continue;
                for (size_t i = 0; i < n_done && !seen; i++)
                        seen = streq(done[i].container_id, ids.container_id) &&
                                streq(done[i].pod_uid, ids.pod_uid);
                if (seen)
                        continue;
                if (budget == 0) {
                        log_debug(
                                "Matched %u processes of new containers again: the others at their next "
                                "event or rescan",
                                KUBE_REMATCH_MAX);
                        break;
                }
                done[n_done++] = ids;
                budget -= rematch_container(m, &ids, budget);
        }
}

void manager_update_kube_watch(Manager *m) {
        bool wanted = m->kube && m->config && (m->config->facts & FACT_KUBE) && !m->topology_path;
        int r;

        if (!wanted) {
                m->kube_watch = kube_watch_free(m->kube_watch);
                return;
        }
        if (m->kube_watch)
                return;
        r = kube_watch_new(m->event, NULL, on_kube_records, m, &m->kube_watch);
        if (r < 0)
                log_warning_errno(
                        r,
                        "Failed to watch /var/log/containers (a container's first process is matched by "
                        "container: at its next exec or rescan): %m");
}
