/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-thread effect samples and per-policy totals (effect.h). */

#include <errno.h>

#include "effect.h"
#include "threadstat.h"

int effect_sample_thread(
        const char *root, pid_t pid, pid_t tid, const EffectSample *prev, EffectSample *ret) {
        EffectSample s = {};
        int r;

        if (pid <= 0 || tid < 0 || !ret)
                return -EINVAL;

        r = threadstat_read_schedstat(root, pid, tid, &s.cpu_ns, &s.run_delay_ns, &s.timeslices);
        if (r < 0)
                return r;

        if (prev && prev->timeslices == s.timeslices && prev->cpu_ns == s.cpu_ns) {
                /* Not run since prev: its CPU, identity and switch counts are as they were. A
                 * reused TID with exactly the same counters is not told apart here; it is when
                 * it runs. */
                s.starttime = prev->starttime;
                s.last_cpu = prev->last_cpu;
                s.migrations = prev->migrations;
                s.involuntary = prev->involuntary;
                *ret = s;
                return 0;
        }

        r = threadstat_read_stat(root, pid, tid, &s.starttime, &s.last_cpu);
        if (r < 0)
                return r;
        r = threadstat_read_switches(root, pid, tid, &s.migrations, &s.involuntary);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}

static void add_delta(uint64_t *total, uint64_t now, uint64_t base) {
        uint64_t d = threadstat_delta(now, base);

        if (d != THREADSTAT_UNKNOWN)
                *total += d;
}

void effect_totals_add(
        EffectTotals *t, const EffectSample *prev, const EffectSample *now, const CpuSet *cpus) {
        uint64_t cpu;

        if (!t || !prev || !now || prev->starttime != now->starttime)
                return;

        cpu = threadstat_delta(now->cpu_ns, prev->cpu_ns);
        if (cpu != THREADSTAT_UNKNOWN) {
                t->cpu_ns += cpu;
                if (cpus && !cpuset_is_empty(cpus) &&
                    (!cpuset_contains(cpus, prev->last_cpu) || !cpuset_contains(cpus, now->last_cpu)))
                        t->foreign_cpu_ns += cpu;
        }
        add_delta(&t->run_delay_ns, now->run_delay_ns, prev->run_delay_ns);
        add_delta(&t->timeslices, now->timeslices, prev->timeslices);
        add_delta(&t->involuntary, now->involuntary, prev->involuntary);
        if (now->migrations != THREADSTAT_UNKNOWN && prev->migrations != THREADSTAT_UNKNOWN) {
                add_delta(&t->migrations, now->migrations, prev->migrations);
                t->has_migrations = true;
        }
}
