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

/* At most this many processes of one new container are matched again (the container's
 * cgroup.procs is read up to there): a container starts with a few. */
#define KUBE_CONTAINER_PIDS_MAX 1024U

/* The hierarchies where a container's cgroup is looked for: cgroup v2, then the hybrid layout's
 * cgroup2 and name=systemd mounts, then a v1 cpuset (lib/cgroup.h). */
static const char *const cgroup_roots[] = {
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup/systemd",
        "/sys/fs/cgroup/cpuset",
};

/*
 * Matches the processes of the container whose record name just appeared again: its cgroup is
 * found by the IDs of the record (kube_container_cgroup_paths(), the first hierarchy that has
 * it), and each PID of its cgroup.procs is matched as after a rename. Processes in cgroups
 * below the container's are left to their next exec or a rescan. Returns the number of
 * processes matched again.
 */
static unsigned rematch_container(Manager *m, const char *name) {
        _cleanup_strv_free_ char **paths = NULL;
        KubeCgroupIds ids;
        unsigned n = 0;
        int r;

        r = kube_read_container_record(NULL, name, &ids);
        if (r <= 0) {
                if (r < 0 && r != -ENOENT)
                        log_debug_errno(r, "Failed to read the container record %s: %m", name);
                return 0;
        }
        r = kube_container_cgroup_paths(&ids, &paths);
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
                        while (n < KUBE_CONTAINER_PIDS_MAX && fscanf(f, "%d", &pid) == 1)
                                if (pid > 0) {
                                        (void)manager_rematch_process(m, pid);
                                        n++;
                                }
                        log_debug(
                                "Container %s of pod %s named by the kubelet: matched its %u processes "
                                "again",
                                ids.container_id, ids.pod_uid, n);
                        return n;
                }
        return 0;
}

static void on_kube_records(KubeWatch *w, char **names, bool overflow, void *userdata) {
        Manager *m = userdata;
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
        STRV_FOREACH (n, names)
                (void)rematch_container(m, *n);
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
