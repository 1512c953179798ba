/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: the persisted state files (lib/state.h): process, unit and target records, and
 * that a process record that parses formats to text that parses again. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *error = NULL, *text = NULL;
        _cleanup_(state_process_done) StateProcess p = {}, again = {};
        _cleanup_(state_unit_done) StateUnit u = {};
        _cleanup_(state_target_done) StateTarget t = {};
        StateId id;

        if (size > 64 * 1024)
                return 0;
        s = strndup((const char *)data, size);
        if (!s)
                return 0;
        if (state_parse(s, &p, &error) >= 0 && state_format(&p, &text) >= 0)
                if (state_parse(text, &again, NULL) < 0)
                        abort(); /* what the daemon writes, it must read back */
        error = mfree(error);
        (void)state_unit_parse(s, &u, &error);
        error = mfree(error);
        (void)state_target_parse(s, &t, &error);
        (void)state_parse_file_name(s, &id);
        return 0;
}
