/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A debounced sd-event timer: a burst of events costs one run of the handler, delay µs after
 * the burst's last event, but never later than max µs after its first, however long the burst
 * goes on. Used for cgroup cpuset writes (daemon/cpuset-watch.c) and device events
 * (daemon/device-placement.c).
 */

#include <stdint.h>

#include <systemd/sd-event.h>

typedef struct Debounce {
        sd_event_source *source;   /* a CLOCK_MONOTONIC one-shot timer, NULL until first armed */
        uint64_t burst_start_usec; /* the loop's time of the first event of the current burst */
} Debounce;

/*
 * One more event of a burst: (re)arms d's timer on e to run handler(userdata) delay_usec from now
 * (the loop's CLOCK_MONOTONIC time), or at burst start + max_usec if that is earlier. The timer
 * is made on first use, with priority and description. A timer that is due already is left
 * alone: setting its time again would take back its pending state, and events without pause
 * would keep it from ever running. The handler's run ends the burst (the timer is one-shot).
 * Returns 0 or sd-event's negative errno (then nothing was armed).
 */
int debounce_arm(
        Debounce *d, sd_event *e, uint64_t delay_usec, uint64_t max_usec, int64_t priority,
        const char *description, sd_event_time_handler_t handler, void *userdata);

/* Ends the burst without running the handler (the caller did the work now). */
void debounce_cancel(Debounce *d);

/* Disables and frees d's timer. */
void debounce_done(Debounce *d);
