/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * /proc/interrupts, parsed (kernel fs/proc/interrupts.c → show_interrupts() in
 * kernel/irq/proc.c, and arch_show_interrupts() for the per-architecture trailer lines).
 *
 * The text is a header of CPU column names ("CPU0 CPU1 CPU15": the online CPUs when it was read,
 * so the column index is not the CPU number) and one line per IRQ:
 *
 *    38:   212   448  PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 *    24:     1     0  IR-PCI-MSI-edge      eth0-TxRx-0          (older kernels: no hwirq column)
 *    67:     0     0  PCI-MSIX-0000:27:00.0   3-edge                (blank action name)
 *     8:     0     0  IO-APIC   8-edge      rtc0, i8042         (shared: names joined by ", ")
 *   NMI:     0     0  Non-maskable interrupts                     (architecture lines)
 *   ERR:     0                                                     (one value only)
 *
 * Dumps posted by people may lack the header (then the columns are CPUs 0..N-1, N the count of
 * the widest numeric line) or have columns removed. Counters are decimal, up to 64 bits.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef struct InterruptLine {
        char *id;         /* the text before ':' ("38", "NMI", "LOC"), never empty */
        bool numeric;     /* id is an IRQ number */
        unsigned irq;     /* when numeric */
        uint64_t *counts; /* n_counts per-CPU counts, counts[i] for InterruptTable.cpus[i] */
        size_t n_counts;  /* may be fewer than the table's CPUs (ERR:, MIS:, trimmed dumps) */
        char *chip;       /* numeric lines: the irq_chip name ("IO-APIC", "PCI-MSIX-0000:00:03.0",
                           * "IR-PCI-MSI-edge"); NULL when the line has nothing after the counts */
        char *hwirq;      /* numeric lines: the hardware IRQ column with its trigger ("1-edge",
                           * "524288-edge"; "-edge" or "-ioapic-edge" when the IRQ has no
                           * domain; "27 Level" on GENERIC_IRQ_SHOW_LEVEL kernels such as
                           * arm64); NULL on kernels that don't print it */
        char *actions;    /* numeric lines: the action names as printed ("virtio2-input.0",
                           * "rtc0, i8042"), "" when blank; other lines: the description
                           * ("Non-maskable interrupts") or "" */
        char **names;     /* numeric lines: actions split at ", " (NULL-terminated; empty when
                           * blank); NULL on other lines */
} InterruptLine;

typedef struct InterruptTable {
        bool has_header; /* the first line named the CPU columns */
        unsigned *cpus;  /* OS CPU number of each count column */
        size_t n_cpus;
        InterruptLine *lines; /* in the order of the text */
        size_t n_lines;
        size_t n_skipped;        /* lines left out (INTERRUPTS_SKIP_BAD_LINES only) */
        char *first_skip_reason; /* why the first of them was: "line N: reason"; NULL when none */
} InterruptTable;

/* Flags of interrupts_parse_full(). */
typedef enum InterruptsFlags {
        /*
         * Leave out a line that does not parse (and, with a header, a line with more count
         * columns than the header has: a CPU came online while the text was printed), counting
         * it in InterruptTable.n_skipped, instead of failing the whole text with -EBADMSG.
         */
        INTERRUPTS_SKIP_BAD_LINES = 1U << 0,
} InterruptsFlags;

/*
 * Parses the text of /proc/interrupts into *ret. Columns are found by position: every count
 * column is a decimal number; after the last one (n_cpus of them, or fewer on short lines) comes
 * the chip name, then — if the next word is a decimal number followed by "-edge", "-level" or
 * another "-TRIGGER" (or a bare number) — the hwirq, then the action names (the rest of the
 * line, leading and trailing blanks removed). A header-less dump takes its CPU count from the
 * widest numeric line. Blank lines are skipped.
 * Returns 0; -EBADMSG for a line that has no "ID:" prefix, a count that is not a number, or (with
 * a header) more count columns than the header names CPUs — the kernel prints the header and
 * each line for the CPUs online at that moment, so a CPU brought online during the read widens
 * the lines after it — with a newly allocated "line N: reason" in *ret_error (may be NULL; set
 * only on -EBADMSG); -ENOMEM. Strict: interrupts_parse_full() with flags 0.
 */
int interrupts_parse(const char *text, InterruptTable **ret, char **ret_error);

/*
 * As interrupts_parse(), with flags (InterruptsFlags). With INTERRUPTS_SKIP_BAD_LINES a line
 * that would be -EBADMSG is left out instead (counted in n_skipped, the first reason in
 * first_skip_reason), so one torn line does not cost the whole table; -EBADMSG is then never
 * returned. Returns 0, -EBADMSG (strict), -ENOMEM, -EINVAL (NULL text or ret).
 */
int interrupts_parse_full(const char *text, unsigned flags, InterruptTable **ret, char **ret_error);

/* Reads and parses PATH (normally "/proc/interrupts", read_full_file()). Returns as
 * interrupts_parse(), or -errno of reading it (no *ret_error then). */
int interrupts_read(const char *path, InterruptTable **ret, char **ret_error);

/* interrupts_read() with interrupts_parse_full()'s flags. */
int interrupts_read_full(const char *path, unsigned flags, InterruptTable **ret, char **ret_error);

/* Frees t and everything it owns. Accepts NULL, returns NULL. */
InterruptTable *interrupt_table_free(InterruptTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(InterruptTable *, interrupt_table_free);

/* The line of IRQ irq, or NULL. */
const InterruptLine *interrupt_table_find(const InterruptTable *t, unsigned irq);

/* The count of line l on OS CPU cpu (0 when cpu is not a column or the line has no such column);
 * *ret_present (may be NULL) says whether it was there. */
uint64_t interrupt_line_count(
        const InterruptTable *t, const InterruptLine *l, unsigned cpu, bool *ret_present);
