/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: the YAML policy loader (lib/policy-yaml.h) on one file from a buffer, as a policy.d
 * file and as affinityd.yaml, then the whole-configuration checks; every diagnostic formatted. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "policy-yaml.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size, bool is_settings) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        _cleanup_(config_freep) Config *c = config_new();
        _cleanup_free_ char *text = NULL;

        if (!c)
                return;
        if (config_parse_string(
                    c, is_settings ? "affinityd.yaml" : "50-fuzz.yaml", (const char *)data, size,
                    is_settings, &diag) >= 0)
                (void)config_verify(c, &diag);
        (void)diagnostics_format(&diag, &text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 64 * 1024)
                return 0;
        one(data, size, false);
        one(data, size, true);
        return 0;
}
