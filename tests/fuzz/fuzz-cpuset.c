/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: cpu-list ("0-3,8") and kernel mask ("ff,ffffffff") parsing (lib/cpuset.h), and
 * that whatever parses formats back to a list that parses to the same set. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *text = NULL;
        _cleanup_cpuset_ CpuSet a = CPUSET_NULL, b = CPUSET_NULL;
        size_t offset;
        const char *reason;

        if (size > 4096)
                return 0;
        s = strndup((const char *)data, size);
        if (!s)
                return 0;
        if (cpuset_parse_list_full(s, &a, &offset, &reason) >= 0) {
                if (cpuset_format_list(&a, &text) >= 0) {
                        if (cpuset_parse_list(text, &b, NULL) < 0 || !cpuset_equal(&a, &b))
                                abort(); /* what was formatted must parse back to the same set */
                }
        }
        cpuset_done(&a);
        (void)cpuset_parse_mask_full(s, &a, &offset, &reason);
        return 0;
}
