/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Spread slots: the per-process allocator behind `cpus: spread` thread rules
 * (docs/policy-format.md, `threads:`). Every thread of a process that matches a spread rule
 * holds a slot: the lowest one free when it asked. Slot i stands for CPU order[i % n] of the
 * rule's ThreadPlan.spread_order (n its length), an order that already lists one PU of every
 * core first, then the SMT siblings, so slots 0..n-1 are distinct CPUs, distinct cores first,
 * and further slots go round robin. A slot is released when its thread exits or stops matching
 * the rule, and the next thread that asks reuses it. Threads that match no rule get the
 * policy's set without the CPUs handed to slots (spread_rest_cpus()).
 *
 * Every spread rule of one policy spreads over the same set (the policy's), so one allocator per
 * process serves all of its spread rules: threads of two rules don't share a CPU while there
 * are free ones. Pure logic, no I/O; slot owners are TIDs in a plain array (processes have at
 * most a few thousand threads).
 */

#include <stddef.h>
#include <sys/types.h>

#include "cpuset.h"

typedef struct SpreadSlots {
        pid_t *owners;    /* owners[i]: the TID holding slot i, 0 when slot i is free */
        size_t n_owners;  /* slots up to the highest one held (owners[n_owners - 1] != 0) */
        size_t allocated; /* length of owners */
        size_t n_held;    /* slots held */
} SpreadSlots;

#define SPREAD_SLOTS_NULL ((SpreadSlots){.owners = NULL})

/* Frees the storage; the allocator is empty afterwards and may be reused. Cannot fail. */
void spread_slots_done(SpreadSlots *s);

/* The slot tid holds, or -ENOENT. */
int spread_slots_find(const SpreadSlots *s, pid_t tid);

/*
 * Gives tid (> 0) a slot: the one it holds already, else the lowest free one. Returns the slot
 * (>= 0), -EINVAL (tid <= 0) or -ENOMEM (nothing changed).
 */
int spread_slots_acquire(SpreadSlots *s, pid_t tid);

/*
 * Gives tid (> 0) slot slot, when it is free: for a process found already on the CPU a slot
 * stands for (a restarted daemon keeps it there). Returns the slot tid holds already if it holds
 * one, else slot (>= 0); -EBUSY when another holds it, -EINVAL (tid <= 0, slot past INT_MAX),
 * -ENOMEM (nothing changed).
 */
int spread_slots_acquire_at(SpreadSlots *s, pid_t tid, size_t slot);

/* Releases tid's slot, for the next thread to reuse. Returns the slot released, or -ENOENT. */
int spread_slots_release(SpreadSlots *s, pid_t tid);

/* Number of slots held. */
size_t spread_slots_n_held(const SpreadSlots *s);

/*
 * The OS CPU number slot stands for in order[0..n_order) (a ThreadPlan.spread_order):
 * order[slot % n_order]. Returns it (>= 0), or -ENOENT when n_order is 0.
 */
int spread_cpu_of_slot(const unsigned *order, size_t n_order, size_t slot);

/*
 * The CPUs handed to the held slots of s under order, into *ret (an initialised set, replaced).
 * Empty when n_order is 0. Returns 0 or -ENOMEM (*ret untouched).
 */
int spread_slots_cpus(const SpreadSlots *s, const unsigned *order, size_t n_order, CpuSet *ret);

/*
 * The set for threads that match no thread rule, into *ret (replaced): set without the CPUs
 * handed to the held slots of s under order; the whole of set when that would leave nothing
 * (docs/policy-format.md, `threads:`). Returns 0 or -ENOMEM (*ret untouched).
 */
int spread_rest_cpus(
        const CpuSet *set, const SpreadSlots *s, const unsigned *order, size_t n_order, CpuSet *ret);
