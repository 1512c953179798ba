/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The isolation audit on a timer: every effect-interval (affinityd.yaml; off: no timer), the
 * CPUs each policy holds with exclusive: true and the reserve are snapshotted
 * (lib/cpu-audit.h) and diffed against the previous pass's snapshot of the same set. What ran
 * there that does not belong is an intrusion:
 *   exclusive CPUs of a policy: tasks other than the policy's managed processes ("task",
 *     kernel threads "kthread", those beyond the named ones "other"), busy time no sampled
 *     task accounts for ("unnamed"), device IRQs ("irq") and softirqs ("softirq");
 *   the reserve: threads of managed processes (kind "reserve", counted under the policy that
 *     placed them); IRQs, softirqs and every other task are expected there and only logged at
 *     debug level.
 * Each intrusion is counted (CpuAuditCounter, the Manager's CpuIntrusions property), reported
 * through CpuAuditContext.intrusion (the CpuIntrusion signal) and logged (MESSAGE_ID
 * AFFINITYD_MESSAGE_CPU_INTRUSION, POLICY=, CPU=) at most once per CPU, policy and kind every
 * CPU_AUDIT_LOG_INTERVAL_USEC.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

/* The lib/ module of the same name (snapshots and their diff), by path: this header's name is
 * the same, so a plain "cpu-audit.h" from daemon/ finds this one. */
#include "../lib/cpu-audit.h"
#include "cpuset.h"
#include "macro.h"
#include "policy.h"

/* Journal messages of one CPU, policy and kind: at most one per this much time. */
#define CPU_AUDIT_LOG_INTERVAL_USEC (UINT64_C(60) * 1000000)

/* Intruders named per CPU and pass; the rest are aggregated ("other"). */
#define CPU_AUDIT_MAX_TASKS 8U

/* IRQs reported one by one per CPU and pass (most interrupts first); the rest are aggregated. */
#define CPU_AUDIT_MAX_IRQS 8U

typedef struct CpuAudit CpuAudit;

/* One set of CPUs to audit. */
typedef struct CpuAuditTarget {
        char *policy;    /* the exclusive policy's name; NULL: the reserve */
        CpuSet cpus;     /* its CPUs (OS numbers) */
        pid_t *pids;     /* the policy's managed processes (the reserve: every managed process),
                          * ascending */
        char **policies; /* the reserve only: the policy of each of pids (parallel) */
        size_t n_pids;
} CpuAuditTarget;

/* Accumulated intrusions of one CPU, policy and kind. */
typedef struct CpuAuditCounter {
        unsigned cpu;
        char *policy;   /* the exclusive policy, or (kind "reserve") the policy of the intruder */
        char kind[8];   /* task, kthread, other, unnamed, irq, softirq, reserve */
        uint64_t usec;  /* CPU time, µs (irq: 0) */
        uint64_t count; /* interrupts (irq, softirq), else 0 */
        uint64_t last_logged_usec;
} CpuAuditCounter;

typedef struct CpuAuditContext {
        sd_event *event;
        const char *root;      /* "/" (or a fixture root) */
        Config *const *config; /* the configuration in force: effect-interval; *NULL: none */
        /* The sets to audit now, newly allocated (cpu_audit_targets_free()). Returns 0 or -ENOMEM. */
        int (*list_targets)(void *userdata, CpuAuditTarget **ret, size_t *ret_n);
        /* An intrusion found by a pass, as CpuIntrusion(policy, cpu, kind, usec, count, who)
         * says it. NULL: not reported. */
        void (*intrusion)(
                void *userdata, const char *policy, unsigned cpu, const char *kind, uint64_t usec,
                uint64_t count, const char *who);
        void *userdata;
} CpuAuditContext;

/* Frees targets of CpuAuditContext.list_targets(). Accepts NULL. */
void cpu_audit_targets_free(CpuAuditTarget *l, size_t n);

/* An auditor working with c (copied; what its pointers point to must outlive it). No timer yet.
 * Returns 0 or -ENOMEM. */
int cpu_audit_new(const CpuAuditContext *c, CpuAudit **ret);

/* Disables its timer and frees it. Accepts NULL, returns NULL. */
CpuAudit *cpu_audit_free(CpuAudit *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(CpuAudit *, cpu_audit_free);

/*
 * Arms the timer (CLOCK_MONOTONIC, description "cpu-audit") at config_effect_interval_usec() of
 * the configuration in force, or disarms it (0: off; the previous snapshots are dropped, so a
 * later pass starts anew). Call after a configuration is installed. Returns 0 or -errno of
 * sd-event (logged at debug).
 */
int cpu_audit_update(CpuAudit *a);

/* One pass, as described above (what the timer runs): the first pass of a set only takes its
 * snapshot. Returns 0, -ENOMEM or -errno of reading /proc. */
int cpu_audit_pass(CpuAudit *a);

/* The counters, ordered by CPU, policy and kind (borrowed; valid until the next pass). NULL a:
 * none. */
const CpuAuditCounter *cpu_audit_counters(const CpuAudit *a, size_t *ret_n);
