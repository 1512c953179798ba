/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device placement's originals (device-placement-internal.h): recorded in STATE_DIR/targets
 * (lib/state.h) before a target is first written, given back, and recovered at start from what a
 * previous instance left. */

#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device-placement-internal.h"

#include "state.h"

/* Writes t's record (its original) to the state dir unless it is there already. Returns 0 (also
 * with no state dir, in dry run, or with no original) or -errno of state_target_write() (not
 * logged: the caller says what it means). */
int target_persist(DevicePlacement *d, Target *t) {
        int r;

        if (!d->state_dir || d->ctx.dry_run || !t->original || t->persisted)
                return 0;
        r = state_target_write(
                d->state_dir,
                &(const StateTarget){
                        .kind = (char *)target_kind_table[t->kind],
                        .key = t->key,
                        .identity = t->identity,
                        .original = t->original,
                });
        if (r < 0)
                return r;
        t->persisted = true;
        return 0;
}

/* Removes t's record from the state dir (t stays). */
static void target_unpersist(DevicePlacement *d, Target *t) {
        char what[128];
        int r;

        if (!t->persisted || !d->state_dir || d->ctx.dry_run)
                return;
        r = state_target_remove(d->state_dir, target_kind_table[t->kind], t->key);
        if (r < 0)
                log_warning_errno(
                        r, "Failed to remove the record of %s from %s: %m",
                        target_describe(t, what, sizeof(what)), d->state_dir);
        t->persisted = false;
}

/* Forgets t: its record is removed (nothing is written to the kernel) and t freed. */
void target_forget(DevicePlacement *d, Target *t) {
        target_unpersist(d, t);
        if (tdelete(t, &d->targets, target_compare))
                d->n_targets--;
        target_free(t);
}

/*
 * Gives t its original back (why: "rule nic removed", "restore-on-exit"). Returns 0; -ENOENT:
 * the target vanished meanwhile (at debug); -EBADMSG: the recorded original is unusable (logged;
 * nothing to retry); other -errno: the write failed (logged at warning the first time, then at
 * debug: the caller keeps the record and retries).
 */
int target_restore(DevicePlacement *d, Target *t, const char *why) {
        _cleanup_(target_value_done) TargetValue v = {};
        _cleanup_free_ char *text = NULL;
        char what[128];
        int r;

        target_describe(t, what, sizeof(what));
        r = target_parse_original(t, &v);
        if (r < 0) {
                log_target(
                        LOG_WARNING, r, t, NULL,
                        "Cannot restore %s: its recorded original \"%s\" is unusable", what,
                        strempty(t->original));
                return -EBADMSG;
        }
        text = target_value_to_string(t->kind, &v);
        r = target_write(d, t, &v);
        if (r == -ENOENT)
                return log_debug_errno(r, "%s is gone, nothing to restore", what);
        if (r == -EBADMSG)
                r = -EIO; /* -EBADMSG means something else to callers */
        if (r < 0) {
                log_target(
                        t->restore_failed ? LOG_DEBUG : LOG_WARNING, r, t, text,
                        "Failed to restore %s to %s (%s): %m; its record is kept and restoring is tried "
                        "again at the next pass and at exit",
                        what, strna(text), why);
                t->restore_failed = true;
                return r;
        }
        t->restore_failed = false;
        d->counters.restores++;
        d->n_restored++;
        log_target_id(
                t->kind == TARGET_IRQ ? LOG_INFO : LOG_DEBUG, 0, AFFINITYD_MESSAGE_RESTORED, t, text,
                "Restored %s to %s (%s)", what, strna(text), why);
        return 0;
}

/* t's original could not be recorded in the state dir (error): t is not written (a restarted
 * daemon could not give it back), refused like a kernel refusal. */
void target_not_recorded(DevicePlacement *d, Target *t, int error) {
        _cleanup_free_ char *reason = NULL;
        char what[128];

        t->state = TARGET_REFUSED;
        if (asprintf(&reason, "cannot record its original in %s: %s", d->state_dir, strerror(-error)) >= 0)
                (void)target_set_reason(t, reason);
        if (t->kind == TARGET_IRQ)
                d->counters.irq_refusals++;
        else
                d->counters.queue_failures++;
        log_target(
                LOG_WARNING, error, t, NULL,
                "Cannot record the original of %s in %s: %m; not setting it (%s), as it could not be "
                "given back after a restart; tried again when a reload or a CPU change re-plans",
                target_describe(t, what, sizeof(what)), d->state_dir, rule_label(t));
}

/*
 * Records t's original (the value cur it has before the daemon's first write), in memory and in
 * the state dir, which must hold it before t is written. Returns 0 or -ENOMEM; *ret_error is 0,
 * or -errno of the state dir when the record could not be written: t must not be written then
 * (its original is forgotten again: read anew at the next try, as nothing was written).
 * A target that has its original already (written before, or recovered) is only re-persisted
 * if it has no record yet (a record that failed when a renamed interface's targets moved).
 */
int target_record_original(DevicePlacement *d, Target *t, const TargetValue *cur, int *ret_error) {
        int r;

        *ret_error = 0;
        if (d->ctx.dry_run)
                return 0;
        if (t->original) {
                (void)target_persist(d, t);
                return 0;
        }
        r = target_format_original(d, t, cur, &t->original);
        if (r < 0)
                return r;
        r = target_persist(d, t);
        if (r < 0) {
                t->original = mfree(t->original);
                *ret_error = r;
        }
        return 0;
}

/* The records a previous instance left: each becomes a target with its original, reconciled by
 * the first pass (still covered: kept; not covered: restored; vanished or another device now:
 * dropped). */
int device_recover(DevicePlacement *d) {
        StateTarget *records = NULL;
        size_t n = 0, taken = 0;
        int r;

        if (!d->state_dir || d->ctx.dry_run)
                return 0;
        r = state_target_list(d->state_dir, &records, &n);
        if (r < 0) {
                log_warning_errno(
                        r, "Failed to read the device originals recorded in %s/targets: %m", d->state_dir);
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                TargetKind kind = target_kind_from_string(records[i].kind);
                Target *t = NULL;

                r = kind < 0 ? -EINVAL : target_new(kind, records[i].key, records[i].identity, &t);
                if (r == -ENOMEM)
                        goto finish;
                if (r < 0) {
                        log_warning(
                                "%s/targets: ignoring the record of %s \"%s\": not a target this daemon "
                                "knows",
                                d->state_dir, records[i].kind, records[i].key);
                        (void)state_target_remove(d->state_dir, records[i].kind, records[i].key);
                        continue;
                }
                t->original = TAKE_PTR(records[i].original);
                t->persisted = true;
                r = target_insert(d, t);
                if (r < 0) {
                        target_free(t);
                        if (r == -ENOMEM)
                                goto finish;
                        continue;
                }
                taken++;
        }
        if (taken > 0)
                log_info(
                        "Read the originals of %zu IRQ and queue settings recorded by a previous instance",
                        taken);
        r = 0;
finish:
        for (size_t i = 0; i < n; i++)
                state_target_done(&records[i]);
        free(records);
        return r;
}

/* The target (kind, key), made when missing; one whose identity changed (the IRQ number reused,
 * the interface made again) is forgotten first, its original not written back. */
int target_get(DevicePlacement *d, TargetKind kind, const char *key, const char *identity, Target **ret) {
        Target *t = target_find(d, kind, key);
        char what[128];
        int r;

        if (t && !streq(t->identity, strempty(identity))) {
                log_debug(
                        "%s is another one now (was \"%s\", is \"%s\"), dropping what was recorded of it",
                        target_describe(t, what, sizeof(what)), t->identity, strempty(identity));
                target_forget(d, t);
                t = NULL;
        }
        if (!t) {
                r = target_new(kind, key, identity, &t);
                if (r < 0)
                        return r;
                r = target_insert(d, t);
                if (r < 0) {
                        target_free(t);
                        return r;
                }
        }
        *ret = t;
        return 0;
}
