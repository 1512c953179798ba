/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: /proc/PID/stat parsing (procfs_parse_stat(), lib/procfs.h) from a buffer of exactly
 * the input's size, so ASan sees any read past its length; and that what parses, written back as
 * the kernel would write it, parses to the same fields. */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *buf = NULL;
        char line[256];
        ProcfsStat st, again;
        int n;

        if (size > 64 * 1024)
                return 0;
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        if (procfs_parse_stat(buf, size, &st) < 0)
                return 0;

        if (memchr(st.comm, '\0', sizeof(st.comm)) == NULL)
                abort(); /* comm is a string of at most 15 bytes */

        /* The kernel's layout (fs/proc/array.c), with the fields we parse in their places. */
        n = snprintf(
                line, sizeof(line),
                "1 (%s) %c %d 1 1 0 -1 %u 0 0 0 0 0 0 0 0 20 0 %u 0 %" PRIu64
                " 4464640 759 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
                st.comm, st.state, (int)st.ppid, st.flags, st.n_threads, st.starttime);
        if (n < 0 || (size_t)n >= sizeof(line))
                abort();
        if (procfs_parse_stat(line, (size_t)n, &again) < 0)
                abort();
        if (!streq(st.comm, again.comm) || st.state != again.state || st.ppid != again.ppid ||
            st.flags != again.flags || st.n_threads != again.n_threads || st.starttime != again.starttime)
                abort(); /* a field was read from the wrong place */
        return 0;
}
