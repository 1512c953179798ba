/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context the Manager gives the isolation audit (daemon/cpu-audit.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-audit.h"
#include "manager-devices.h"
#include "manager-internal.h"

/* CpuAuditContext.intrusion: the CpuIntrusion signal. */
static void on_intrusion(
        void *userdata, const char *policy, unsigned cpu, const char *kind, uint64_t usec, uint64_t count,
        const char *who) {
        Manager *m = userdata;

        (void)manager_report(m, cpu_intrusion, policy, cpu, kind, usec, count, who);
}

/* The tracked processes under policy index i (POLICY_NONE: under any policy that sets CPUs),
 * ascending, with their policies' names when names is true. */
static int target_pids(
        Manager *m, TrackedProcess **list, size_t n, size_t i, bool names, CpuAuditTarget *t) {
        t->pids = calloc(MAX(n, (size_t)1), sizeof(pid_t));
        if (!t->pids)
                return -ENOMEM;
        if (names) {
                t->policies = calloc(MAX(n, (size_t)1), sizeof(char *));
                if (!t->policies)
                        return -ENOMEM;
        }
        for (size_t k = 0; k < n; k++) {
                const PolicyPlan *pp = manager_process_plan(m, list[k]);

                if (!pp || pp->pending_reason)
                        continue;
                if (i != POLICY_NONE ? list[k]->policy != i : !pp->has_cpus)
                        continue;
                if (names) {
                        t->policies[t->n_pids] = strdup(pp->policy->name);
                        if (!t->policies[t->n_pids])
                                return -ENOMEM;
                }
                t->pids[t->n_pids++] = list[k]->pid; /* manager_list_processes(): ascending */
        }
        return 0;
}

/* CpuAuditContext.list_targets: each active policy's exclusive CPUs, and the reserve. */
static int list_targets(void *userdata, CpuAuditTarget **ret, size_t *ret_n) {
        _cleanup_free_ TrackedProcess **list = NULL;
        Manager *m = userdata;
        CpuAuditTarget *l;
        size_t n = 0, k = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (!m->plan)
                return 0;
        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return r;
        l = calloc(m->plan->n_policies + 1, sizeof(CpuAuditTarget));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i <= m->plan->n_policies; i++) {
                const CpuSet *cpus;

                if (i < m->plan->n_policies) {
                        const PolicyPlan *pp = &m->plan->policies[i];

                        if (pp->pending_reason || cpuset_is_empty(&pp->exclusive_cpus))
                                continue;
                        cpus = &pp->exclusive_cpus;
                        l[k].policy = strdup(pp->policy->name);
                        if (!l[k].policy)
                                goto oom;
                } else {
                        cpus = &m->plan->reserve;
                        if (cpuset_is_empty(cpus))
                                continue;
                }
                if (cpuset_copy(&l[k].cpus, cpus) < 0)
                        goto oom;
                r = target_pids(
                        m, list, n, i < m->plan->n_policies ? i : POLICY_NONE, i == m->plan->n_policies,
                        &l[k]);
                k++;
                if (r < 0)
                        goto oom;
        }
        *ret = l;
        *ret_n = k;
        return 0;
oom:
        cpu_audit_targets_free(l, k + 1);
        return -ENOMEM;
}

int manager_cpu_audit_new(Manager *m, CpuAudit **ret) {
        return cpu_audit_new(
                &(const CpuAuditContext){
                        .event = m->event,
                        .root = "/",
                        .config = &m->config,
                        .list_targets = list_targets,
                        .intrusion = on_intrusion,
                        .userdata = m,
                },
                ret);
}
