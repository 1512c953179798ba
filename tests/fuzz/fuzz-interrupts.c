/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: /proc/interrupts parsing (lib/interrupts.h), strict and skipping bad lines. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interrupts.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *error = NULL;
        InterruptTable *t = NULL;

        if (size > 256 * 1024)
                return 0;
        s = strndup((const char *)data, size);
        if (!s)
                return 0;
        (void)interrupts_parse(s, &t, &error);
        t = interrupt_table_free(t);
        error = mfree(error);
        (void)interrupts_parse_full(s, INTERRUPTS_SKIP_BAD_LINES, &t, &error);
        interrupt_table_free(t);
        return 0;
}
