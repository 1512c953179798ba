/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: one kernel uevent datagram (daemon/uevent-monitor.h), and lookups in what parsed. */

#include <stdint.h>
#include <stdlib.h>

#include "uevent-monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Uevent u;

        if (uevent_parse(data, size, &u) == 0) {
                (void)uevent_get(&u, "SUBSYSTEM");
                (void)uevent_get(&u, "INTERFACE");
        }
        return 0;
}
