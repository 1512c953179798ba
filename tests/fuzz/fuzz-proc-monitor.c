/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: one proc connector datagram (daemon/proc-monitor.h: netlink messages carrying
 * cn_msg/proc_event), parsed as the daemon parses what the kernel sends. */

#include <stdint.h>
#include <stdlib.h>

#include "proc-monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_event(ProcMonitor *m, const ProcEvent *ev, void *userdata) {
        (*(size_t *)userdata)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static ProcMonitor *m;
        static size_t n;

        if (!m && proc_monitor_new_parser(on_event, &n, &m) < 0)
                abort();
        (void)proc_monitor_parse(m, data, size);
        return 0;
}
