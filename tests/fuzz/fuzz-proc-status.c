/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: /proc/PID/status parsing (procfs_parse_status_euid(), procfs_parse_status_cpus_allowed(),
 * lib/procfs.h) from a buffer of exactly the input's size, so ASan sees any read past its length;
 * that a value that parses, written back as the kernel writes it, parses to the same value; and
 * that lines after the input never change what parsed (the first line of a field is the one). */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "macro.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char tail[] = "\nUid:\t7\t7\t7\t7\nCpus_allowed_list:\t7\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *buf = NULL, *longer = NULL, *list = NULL, *line = NULL;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, again = CPUSET_NULL;
        uid_t uid, uid_again;
        int n;

        if (size > 64 * 1024)
                return 0;
        buf = malloc(size ? size : 1);
        longer = malloc(size + sizeof(tail) - 1);
        if (!buf || !longer)
                return 0;
        memcpy(buf, data, size);
        memcpy(longer, data, size);
        memcpy(longer + size, tail, sizeof(tail) - 1);

        if (procfs_parse_status_euid(buf, size, &uid) >= 0) {
                char text[64];

                n = snprintf(text, sizeof(text), "Name:\tx\nUid:\t0\t%u\t0\t0\n", (unsigned)uid);
                if (procfs_parse_status_euid(text, (size_t)n, &uid_again) < 0 || uid_again != uid)
                        abort(); /* what parsed must parse again from the kernel's layout */
                if (procfs_parse_status_euid(longer, size + sizeof(tail) - 1, &uid_again) < 0 ||
                    uid_again != uid)
                        abort(); /* a later line was taken, or the end of the input misread */
        }

        if (procfs_parse_status_cpus_allowed(buf, size, &cpus) >= 0) {
                if (cpuset_format_list(&cpus, &list) < 0 ||
                    asprintf(&line, "Cpus_allowed_list:\t%s\n", list) < 0)
                        return 0;
                if (procfs_parse_status_cpus_allowed(line, strlen(line), &again) < 0 ||
                    !cpuset_equal(&cpus, &again))
                        abort();
                cpuset_clear(&again);
                if (procfs_parse_status_cpus_allowed(longer, size + sizeof(tail) - 1, &again) < 0 ||
                    !cpuset_equal(&cpus, &again))
                        abort();
        }
        return 0;
}
