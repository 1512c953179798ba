/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: one rtnetlink datagram of RTM_NEWLINK / RTM_DELLINK messages (daemon/rtnl-monitor.h). */

#include <stdint.h>
#include <stdlib.h>

#include "rtnl-monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_link(const RtnlLinkEvent *ev, void *userdata) {
        (*(size_t *)userdata)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t n = 0;

        (void)rtnl_parse_links(data, size, on_link, &n);
        return 0;
}
