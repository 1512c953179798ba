/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The decisions of a placement pass: see placement-decision.h. */

#include <errno.h>

#include "placement-decision.h"

ThreadAffinityStep thread_affinity_step(const ThreadAffinityFacts *f) {
        if (!f->has_target || f->left_to_unit)
                return THREAD_AFFINITY_KEEP;
        /* A dry run that is forced "writes" again: it counts the thread as set. */
        if (f->applied_is_target && !(f->force && f->dry_run)) {
                if (!f->force && (!f->verify || f->dry_run))
                        return THREAD_AFFINITY_KEEP;
                return THREAD_AFFINITY_RECHECK;
        }
        return THREAD_AFFINITY_WRITE;
}

ThreadAffinityRecheck thread_affinity_recheck(
        bool current_known, bool current_is_effective, bool cpuset_reset, bool force) {
        if (current_known && current_is_effective)
                return THREAD_RECHECK_KEEP;
        if (force)
                return THREAD_RECHECK_WRITE;
        if (!current_known || !cpuset_reset)
                return THREAD_RECHECK_DRIFT;
        return THREAD_RECHECK_RESET;
}

ThreadWriteRefusal thread_write_refusal(int error, bool cpuset_known, bool target_in_cpuset) {
        if (error == -ESRCH)
                return THREAD_REFUSAL_GONE;
        /* The kernel refuses an empty intersection with the task's cpuset with EINVAL. */
        if (error == -EINVAL && cpuset_known && !target_in_cpuset)
                return THREAD_REFUSAL_CPUSET_CONFLICT;
        return THREAD_REFUSAL_FAILURE;
}

NarrowingReport thread_narrowing_report(bool within_target, bool reported, bool debug) {
        if (!within_target)
                return NARROWING_OUTSIDE;
        if (!reported)
                return NARROWING_ONCE;
        return debug ? NARROWING_DEBUG : NARROWING_QUIET;
}

ProcessPassActions process_pass_actions(const ProcessPassFacts *f) {
        ProcessPassActions a = {};

        a.refused = f->cpuset_conflict && f->n_set == 0;
        a.drop_refusal = !a.refused && f->had_refusal && f->n_failed == 0;
        a.save_state = a.refused || a.drop_refusal;
        /* A child forked without exec is in its parent's cgroup, watched already. */
        a.watch_cgroup = f->settled && f->verify && !f->forked && !f->dry_run;
        a.first = !f->placed && !a.refused;
        a.queue_settle = f->n_set > 0 || a.first || !f->settled;
        /* A refusal by the cgroup is one per process: reported when new. */
        a.report_failed = f->n_failed > 0 && (!f->cpuset_conflict || f->refusal_new);
        a.report_placed = f->n_set > 0 || a.first;
        a.count_summary = f->n_set > 0;
        return a;
}

PlacedLogLevel process_placed_log_level(bool wrote, bool info, bool debug, bool within_rate) {
        if (!wrote)
                return PLACED_LOG_NONE;
        if (info && within_rate)
                return PLACED_LOG_INFO;
        return debug ? PLACED_LOG_DEBUG : PLACED_LOG_NONE;
}
