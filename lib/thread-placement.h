/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Per-thread decisions: which CPUs and which scheduling state a thread of a managed process gets
 * under its policy's plan, and which states count as the daemon's own (handed out by it, so
 * inherited by a new thread or child rather than chosen by the program). Pure functions of
 * their arguments: nothing here reads /proc or makes a system call; the daemon
 * (daemon/placement.c) applies what they decide and keeps the spread slots. The rules are those
 * of docs/policy-format.md (`threads:`, `scheduler:`).
 */

#include <stdbool.h>
#include <stddef.h>

#include "apply-sched.h"
#include "cpuset.h"
#include "plan.h"
#include "policy.h"
#include "spread.h"

/* Where a thread's CPUs come from. */
typedef enum ThreadCpusKind {
        THREAD_CPUS_NONE,    /* the thread's affinity is not touched */
        THREAD_CPUS_SPREAD,  /* a spread slot of rule (one CPU of rule->spread_order): the process's
                              * own slots, or the policy's with rule->spread_over_policy */
        THREAD_CPUS_RULE,    /* rule->cpus */
        THREAD_CPUS_POLICY,  /* the policy's set, without the CPUs handed to spread slots */
        THREAD_CPUS_PROCESS, /* processes: spread: the CPU of its process's slot (one CPU of
                              * PolicyPlan.process_order); the policy's set for a process that
                              * holds none (a pre-fork master: process_spread_cpus()) */
} ThreadCpusKind;

typedef struct ThreadCpusChoice {
        ThreadCpusKind kind;
        const ThreadPlan *rule; /* the matching thread rule's plan (SPREAD, RULE), else NULL */
} ThreadCpusChoice;

/*
 * Where the CPUs of a thread named thread_comm (/proc/PID/task/TID/comm) come from under pp:
 * NONE when pp is NULL or pending, or nothing sets CPUs for it; SPREAD when the first thread
 * rule matching it (match_thread()) is a spread rule with CPUs to spread over; RULE when that
 * rule has cpus:; PROCESS when the policy says processes: spread; POLICY when the policy has
 * cpus:. A thread taking a spread slot must release any it holds otherwise.
 */
ThreadCpusChoice thread_cpus_choice(const PolicyPlan *pp, const char *thread_comm);

/*
 * The spread order of pp's spread rules (every spread rule of a policy spreads over the same
 * set, in the same order: lib/plan.h, ThreadPlan.spread_order), or NULL with *ret_n = 0 when it
 * has none (or pp is NULL or pending).
 */
const unsigned *thread_spread_order(const PolicyPlan *pp, size_t *ret_n);

/*
 * The CPUs of a THREAD_CPUS_POLICY thread: pp's set without the CPUs handed to the held slots of
 * slots (NULL: none held), the whole set when that would leave nothing (spread_rest_cpus()).
 * *ret points at pp->cpus or at buf. pp must have has_cpus. Returns 0 or -ENOMEM.
 */
int thread_policy_cpus(const PolicyPlan *pp, const SpreadSlots *slots, CpuSet *buf, const CpuSet **ret);

/*
 * The CPUs of a THREAD_CPUS_PROCESS thread, into *ret (an initialised set, replaced): the CPU
 * of slot (>= 0: the slot its process holds among the policy's, lib/spread.h) in
 * pp->process_order; with slot < 0 (the process holds none: a pre-fork master) every CPU of
 * that order (the policy's set, or what it spreads over when it has no cpus:). Returns 1 (*ret
 * set), 0 (pp has no process order: *ret empty, nothing to set), or -ENOMEM.
 */
int process_spread_cpus(const PolicyPlan *pp, int slot, CpuSet *ret);

/*
 * True if mask is one of the sets pp hands out: the policy's cpus: or a thread rule's. (A spread
 * slot's single CPU and what a cpuset made of a set are the daemon's to check against the
 * threads it placed.)
 */
bool thread_mask_in_plan(const PolicyPlan *pp, const CpuSet *mask);

/*
 * The scheduler: keys for a thread named thread_comm under pp, into *ret: the first matching
 * thread rule's keys over the policy's, key by key. Returns true if any key is given; false (and
 * an empty *ret) when pp is NULL or pending, or no key is.
 */
bool thread_sched_spec(const PolicyPlan *pp, const char *thread_comm, SchedulerSpec *ret);

/*
 * The state a thread whose original is *original gets under spec: the original with the keys
 * spec gives replaced. A class change drops the real-time priority (to 0) or supplies one (1)
 * when none is given; the idle I/O class has level 0.
 */
ThreadSched thread_sched_target(const ThreadSched *original, const SchedulerSpec *spec);

/*
 * True if cur could have been inherited from a thread being set from original to set: the
 * daemon writes the class (sched_setattr(2)), then the nice (setpriority(2)), then the I/O
 * priority (ioprio_set(2)), and a thread cloned in between copies a mix of the two. So each
 * part of cur (class with priority and reset-on-fork, nice, I/O class with level) is set's or
 * original's.
 */
bool thread_sched_inherited(const ThreadSched *cur, const ThreadSched *set, const ThreadSched *original);
