/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kubelet's CPU manager checkpoint as the Manager holds it (lib/kubelet-cpu-manager.h): read
 * at start, at reload and whenever the kubelet rewrites it (the watch and the re-plan are
 * manager-config.c's), what its exclusive CPUs are, and what changed, said once at info.
 */

#include <errno.h>
#include <stdlib.h>

#include "kubelet-cpu-manager.h"
#include "log.h"
#include "manager-internal.h"

/* "1-4 (pod UID container NAME), 6 (…)", or "none". NULL on OOM. */
static char *describe(const KubeletCpuState *s) {
        char *d = NULL;

        if (cpuset_is_empty(kubelet_cpu_state_exclusive(s)))
                return strdup("none");
        return kubelet_cpu_state_describe(s, NULL, &d) < 0 ? NULL : d;
}

/*
 * Reads the checkpoint at path (NULL: none, kubelet-cpu-manager-state: none) into m->kubelet.
 * No such file is nothing exclusive; a file that can't be read or parsed is a warning naming
 * where (file:line:column) and what, and m->kubelet stays as it was: the kubelet rewrites the
 * whole file, so the next write puts it right. When the exclusive CPUs changed, an info line
 * says from what to what, ending in suffix ("; re-planning"). Returns 1 when they changed
 * (the caller re-plans), 0 when not (m->kubelet may still have been replaced: other pods,
 * the same CPUs), or -ENOMEM.
 */
int manager_kubelet_read(Manager *m, const char *path, const char *suffix) {
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *s = NULL;
        _cleanup_free_ char *error = NULL, *was = NULL, *now = NULL;
        bool changed;
        int r;

        if (path) {
                r = kubelet_cpu_state_load(path, &s, &error);
                if (r == -ENOMEM)
                        return log_warning_errno(r, "Failed to read %s: %m", path);
                if (r < 0 && r != -ENOENT) {
                        was = describe(m->kubelet);
                        log_warning(
                                "%s; keeping the CPUs the kubelet's CPU manager held before (%s)",
                                strna(error), strna(was));
                        return 0;
                }
        }

        changed = !cpuset_equal(kubelet_cpu_state_exclusive(s), kubelet_cpu_state_exclusive(m->kubelet));
        if (changed) {
                was = describe(m->kubelet);
                now = describe(s);
                log_info(
                        "The kubelet's CPU manager holds %s now (was: %s)%s", strna(now), strna(was),
                        suffix);
        }
        kubelet_cpu_state_free(m->kubelet);
        m->kubelet = TAKE_PTR(s);
        if (changed)
                (void)manager_report_changed(m, "KubeletExclusiveCPUs");
        return changed;
}

/* Plans config against t with the kubelet's checkpoint as last read (plan_new_with()). */
int manager_plan(Manager *m, const Config *config, const Topology *t, Plan **ret) {
        return plan_new_with(config, t, &(PlanInputs){.kubelet = m->kubelet}, ret);
}
