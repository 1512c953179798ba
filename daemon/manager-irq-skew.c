/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context the Manager gives the IRQ and softirq skew check: see manager-devices.h. */

#include <errno.h>
#include <stdio.h>

#include "irq-skew-watch.h"
#include "log.h"
#include "manager-devices.h"
#include "manager-internal.h"

/* An episode began: once to the journal (MESSAGE_ID=AFFINITYD_MESSAGE_IRQ_SKEW, DEVICE=, CPU=,
 * IRQ= the comma list), once as the IrqSkew signal. */
static void on_irq_skew(void *userdata, const IrqSkewFinding *f) {
        Manager *m = userdata;
        char cpu[12];
        int r;

        snprintf(cpu, sizeof(cpu), "%u", f->cpu);
        if (f->kind == IRQ_SKEW_IRQ)
                log_full_errno_fields(
                        LOG_WARNING, 0,
                        &((const LogFields){
                                .message_id = AFFINITYD_MESSAGE_IRQ_SKEW,
                                .device = f->device,
                                .cpu = cpu,
                                .irq = f->irqs_text,
                        }),
                        "IRQ skew: CPU %u took %.0f%% of the %.0f interrupts/s of %s (IRQs %s), its other "
                        "queues idle; to spread them: %s",
                        f->cpu, f->share * 100, f->rate, f->device, f->irqs_text, f->suggestion);
        else
                log_full_errno_fields(
                        LOG_WARNING, 0,
                        &((const LogFields){
                                .message_id = AFFINITYD_MESSAGE_IRQ_SKEW,
                                .device = f->device,
                                .cpu = cpu,
                        }),
                        "NET_RX softirq skew: CPU %u ran %.0f%% of the %.0f receive softirqs/s "
                        "(single-queue "
                        "devices: %s); to spread the protocol processing with RPS: %s",
                        f->cpu, f->share * 100, f->rate, f->device, f->suggestion);
        r = manager_report(m, irq_skew, f);
        if (r < 0)
                log_debug_errno(r, "Failed to send the IrqSkew signal: %m");
}

int manager_irq_skew_new(Manager *m, IrqSkewWatch **ret) {
        return irq_skew_watch_new(
                &(const IrqSkewWatchContext){
                        .event = m->event,
                        .root = "/",
                        .config = &m->config,
                        .skew_detected = on_irq_skew,
                        .userdata = m,
                },
                ret);
}
