/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Spread slots: see spread.h. */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "macro.h"
#include "spread.h"

void spread_slots_done(SpreadSlots *s) {
        if (!s)
                return;
        free(s->owners);
        *s = SPREAD_SLOTS_NULL;
}

int spread_slots_find(const SpreadSlots *s, pid_t tid) {
        if (tid <= 0)
                return -ENOENT;
        for (size_t i = 0; i < s->n_owners; i++)
                if (s->owners[i] == tid)
                        return (int)i;
        return -ENOENT;
}

/* Gives tid slot (free, below INT_MAX), growing the array to it. Returns the slot or -ENOMEM
 * (nothing changed). */
static int slots_take(SpreadSlots *s, pid_t tid, size_t slot) {
        if (slot >= s->allocated) {
                size_t n = MAX(MAX(s->allocated * 2, (size_t)8), slot + 1);
                pid_t *o = reallocarray(s->owners, n, sizeof(pid_t));

                if (!o)
                        return -ENOMEM;
                for (size_t i = s->allocated; i < n; i++)
                        o[i] = 0;
                s->owners = o;
                s->allocated = n;
        }
        s->owners[slot] = tid;
        s->n_owners = MAX(s->n_owners, slot + 1);
        s->n_held++;
        return (int)slot;
}

int spread_slots_acquire(SpreadSlots *s, pid_t tid) {
        size_t slot;
        int r;

        if (tid <= 0)
                return -EINVAL;
        r = spread_slots_find(s, tid);
        if (r >= 0)
                return r;

        /* The lowest free slot: a hole left by a released one, else the next past the end. */
        for (slot = 0; slot < s->n_owners; slot++)
                if (s->owners[slot] == 0)
                        break;
        if (slot >= (size_t)INT_MAX)
                return -ENOMEM;
        return slots_take(s, tid, slot);
}

int spread_slots_acquire_at(SpreadSlots *s, pid_t tid, size_t slot) {
        int r;

        if (tid <= 0 || slot >= (size_t)INT_MAX)
                return -EINVAL;
        r = spread_slots_find(s, tid);
        if (r >= 0)
                return r;
        if (slot < s->n_owners && s->owners[slot] != 0)
                return -EBUSY;
        return slots_take(s, tid, slot);
}

int spread_slots_release(SpreadSlots *s, pid_t tid) {
        int slot = spread_slots_find(s, tid);

        if (slot < 0)
                return slot;
        s->owners[slot] = 0;
        s->n_held--;
        /* Keep n_owners tight, so that scans stop at the highest slot held. */
        while (s->n_owners > 0 && s->owners[s->n_owners - 1] == 0)
                s->n_owners--;
        return slot;
}

size_t spread_slots_n_held(const SpreadSlots *s) {
        return s->n_held;
}

int spread_cpu_of_slot(const unsigned *order, size_t n_order, size_t slot) {
        if (n_order == 0 || !order)
                return -ENOENT;
        return (int)order[slot % n_order];
}

int spread_slots_cpus(const SpreadSlots *s, const unsigned *order, size_t n_order, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet u = CPUSET_NULL;
        int r;

        for (size_t i = 0; n_order > 0 && i < s->n_owners; i++) {
                if (s->owners[i] == 0)
                        continue;
                r = cpuset_add(&u, (unsigned)spread_cpu_of_slot(order, n_order, i));
                if (r < 0)
                        return r;
                if (i + 1 >= n_order && cpuset_count(&u) >= n_order)
                        break; /* every CPU of the order is handed out already */
        }
        cpuset_done(ret);
        *ret = u;
        u = CPUSET_NULL;
        return 0;
}

int spread_rest_cpus(
        const CpuSet *set, const SpreadSlots *s, const unsigned *order, size_t n_order, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet rest = CPUSET_NULL, handed = CPUSET_NULL;
        int r;

        r = cpuset_copy(&rest, set);
        if (r < 0)
                return r;
        r = spread_slots_cpus(s, order, n_order, &handed);
        if (r < 0)
                return r;
        cpuset_andnot(&rest, &handed);
        if (cpuset_is_empty(&rest)) {
                r = cpuset_copy(&rest, set);
                if (r < 0)
                        return r;
        }
        cpuset_done(ret);
        *ret = rest;
        rest = CPUSET_NULL;
        return 0;
}
