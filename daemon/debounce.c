/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A debounced sd-event timer. See debounce.h. */

#include "debounce.h"
#include "macro.h"

int debounce_arm(
        Debounce *d, sd_event *e, uint64_t delay_usec, uint64_t max_usec, int64_t priority,
        const char *description, sd_event_time_handler_t handler, void *userdata) {
        int enabled = SD_EVENT_OFF, r;
        uint64_t now = 0, when, due = 0;

        r = sd_event_now(e, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return r;
        if (d->source && sd_event_source_get_enabled(d->source, &enabled) >= 0 && enabled != SD_EVENT_OFF) {
                if (sd_event_source_get_time(d->source, &due) >= 0 && due <= now)
                        return 0; /* due: it runs in this iteration or the next */
        } else
                d->burst_start_usec = now;
        when = MIN(now + delay_usec, d->burst_start_usec + max_usec);
        if (!d->source) {
                r = sd_event_add_time(e, &d->source, CLOCK_MONOTONIC, when, 10 * 1000, handler, userdata);
                if (r < 0)
                        return r;
                (void)sd_event_source_set_description(d->source, description);
                (void)sd_event_source_set_priority(d->source, priority);
                return 0;
        }
        r = sd_event_source_set_time(d->source, when);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(d->source, SD_EVENT_ONESHOT);
}

void debounce_cancel(Debounce *d) {
        if (d->source)
                (void)sd_event_source_set_enabled(d->source, SD_EVENT_OFF);
}

void debounce_done(Debounce *d) {
        d->source = sd_event_source_disable_unref(d->source);
}
