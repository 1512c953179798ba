/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the /proc/interrupts parser: on the real dumps in $AFFINITYD_CORPUS/interrupts/
 * (values picked by hand from the files, and every line checked against an independent
 * whitespace-token scan), on this machine's /proc/interrupts (against the directories of
 * /proc/irq), on synthetic edge cases, and on every prefix of every corpus file.
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "interrupts.h"
#include "macro.h"

#define RBENCH     "rbench-interrupts-40cpu-xeon-ixgbe.txt"
#define IRQCLI     "irqcli-interrupts-2col-ixgbe-32q.txt"
#define SERVERFLT  "serverfault-254355-interrupts-16cpu-columns-trimmed.txt"
#define AMZN       "amzn-drivers-316-ena-4cpu-blank-names.txt"
#define SF_MASK    "serverfault-254355-proc-irq-98-smp_affinity.txt"
#define IRQBALANCE "irqbalance-169-proc-irq-node-and-smp_affinity-104cpu.txt"

static const char *corpus_dir(void) {
        const char *c = getenv("AFFINITYD_CORPUS");
        ck_assert_msg(c, "AFFINITYD_CORPUS is not set (run through meson test)");
        return c;
}

/* The whole file, NUL-terminated; *ret_size its length. */
static char *slurp(const char *path, size_t *ret_size) {
        FILE *f = fopen(path, "re");
        char *buf;
        long n;

        ck_assert_msg(f, "cannot open %s: %m", path);
        ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        ck_assert_int_ge(n, 0);
        rewind(f);
        buf = malloc((size_t)n + 1);
        ck_assert_ptr_nonnull(buf);
        ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
        buf[n] = '\0';
        fclose(f);
        if (ret_size)
                *ret_size = (size_t)n;
        return buf;
}

static char *corpus_file(const char *name, size_t *ret_size) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/interrupts/%s", corpus_dir(), name);
        return slurp(path, ret_size);
}

static InterruptTable *parse_corpus(const char *name) {
        _cleanup_free_ char *text = corpus_file(name, NULL), *error = NULL;
        InterruptTable *t = NULL;
        int r;

        r = interrupts_parse(text, &t, &error);
        ck_assert_msg(r == 0, "%s: %s (%d)", name, strna(error), r);
        ck_assert_ptr_nonnull(t);
        return t;
}

static bool is_mask_file(const char *name) {
        return streq(name, SF_MASK) || streq(name, IRQBALANCE);
}

/* ---- independent token scan ---------------------------------------------------------------- */

typedef struct Tokens {
        char **v;
        size_t n;
} Tokens;

static Tokens tokenize(const char *line) {
        Tokens t = {};
        _cleanup_free_ char *copy = strdup(line);
        char *save = NULL;

        ck_assert_ptr_nonnull(copy);
        for (char *w = strtok_r(copy, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
                t.v = reallocarray(t.v, t.n + 1, sizeof(char *));
                ck_assert_ptr_nonnull(t.v);
                t.v[t.n] = strdup(w);
                ck_assert_ptr_nonnull(t.v[t.n]);
                t.n++;
        }
        return t;
}

static void tokens_done(Tokens *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i]);
        free(t->v);
}

static bool all_digits(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

/* The text with every run of blanks replaced by one space, trimmed. */
static char *collapse(const char *s) {
        Tokens t = tokenize(s);
        size_t len = 1;
        char *r;

        for (size_t i = 0; i < t.n; i++)
                len += strlen(t.v[i]) + 1;
        r = calloc(len, 1);
        ck_assert_ptr_nonnull(r);
        for (size_t i = 0; i < t.n; i++) {
                if (i > 0)
                        strcat(r, " ");
                strcat(r, t.v[i]);
        }
        tokens_done(&t);
        return r;
}

/* Splits text into lines (the newline removed). */
static char **split_lines(const char *text, size_t *ret_n) {
        char **v = NULL;
        size_t n = 0;
        const char *p = text;

        while (*p) {
                const char *e = strchrnul(p, '\n');
                v = reallocarray(v, n + 2, sizeof(char *));
                ck_assert_ptr_nonnull(v);
                v[n] = strndup(p, (size_t)(e - p));
                ck_assert_ptr_nonnull(v[n]);
                v[++n] = NULL;
                p = *e ? e + 1 : e;
        }
        *ret_n = n;
        return v;
}

/*
 * Checks every line of the parsed table of file name against a whitespace-token scan of the text:
 * IDs, every count and the per-line total, the chip and what follows it.
 */
static void check_against_scan(const char *name) {
        _cleanup_free_ char *text = corpus_file(name, NULL);
        _cleanup_(interrupt_table_freep) InterruptTable *t = parse_corpus(name);
        _cleanup_strv_free_ char **lines = NULL;
        size_t n_lines, first = SIZE_MAX, ncols = 0, li = 0;
        bool header = false;

        lines = split_lines(text, &n_lines);
        for (size_t i = 0; i < n_lines; i++) {
                Tokens tk = tokenize(lines[i]);
                bool blank = tk.n == 0;
                if (!blank && first == SIZE_MAX) {
                        first = i;
                        header = strncmp(tk.v[0], "CPU", 3) == 0;
                        if (header)
                                ncols = tk.n;
                }
                tokens_done(&tk);
                if (!blank && first != SIZE_MAX)
                        break;
        }
        ck_assert_uint_ne(first, SIZE_MAX);
        ck_assert_int_eq(t->has_header, header);

        if (!header) {
                /* The widest numeric line sets the number of columns. */
                for (size_t i = 0; i < n_lines; i++) {
                        Tokens tk = tokenize(lines[i]);
                        if (tk.n > 0 && tk.v[0][strlen(tk.v[0]) - 1] == ':') {
                                size_t k = 0;
                                tk.v[0][strlen(tk.v[0]) - 1] = '\0';
                                if (all_digits(tk.v[0])) {
                                        while (1 + k < tk.n && all_digits(tk.v[1 + k]))
                                                k++;
                                        ncols = MAX(ncols, k);
                                }
                        }
                        tokens_done(&tk);
                }
        }
        ck_assert_uint_eq(t->n_cpus, ncols);

        for (size_t i = 0; i < n_lines; i++) {
                Tokens tk = tokenize(lines[i]);
                const InterruptLine *l;
                uint64_t sum_scan = 0, sum_parsed = 0;
                size_t k = 0, j;
                _cleanup_free_ char *tail = NULL, *rest = NULL;

                if (tk.n == 0 || (header && i == first)) {
                        tokens_done(&tk);
                        continue;
                }
                ck_assert_uint_lt(li, t->n_lines);
                l = &t->lines[li++];

                ck_assert_uint_eq(tk.v[0][strlen(tk.v[0]) - 1], ':');
                tk.v[0][strlen(tk.v[0]) - 1] = '\0';
                ck_assert_msg(
                        streq(l->id, tk.v[0]), "%s line %zu: id %s, scan %s", name, i + 1, l->id, tk.v[0]);
                ck_assert_int_eq(l->numeric, all_digits(tk.v[0]));
                if (l->numeric)
                        ck_assert_uint_eq(l->irq, strtoul(tk.v[0], NULL, 10));

                while (k < ncols && 1 + k < tk.n && all_digits(tk.v[1 + k])) {
                        uint64_t v = strtoull(tk.v[1 + k], NULL, 10);
                        ck_assert_uint_lt(k, l->n_counts);
                        ck_assert_msg(
                                l->counts[k] == v, "%s line %zu column %zu: %" PRIu64 " != %" PRIu64, name,
                                i + 1, k, l->counts[k], v);
                        sum_scan += v;
                        k++;
                }
                ck_assert_uint_eq(l->n_counts, k);
                for (size_t c = 0; c < l->n_counts; c++)
                        sum_parsed += l->counts[c];
                ck_assert_uint_eq(sum_parsed, sum_scan);

                /* What follows the counts, blanks collapsed. */
                j = 1 + k;
                {
                        size_t len = 1;
                        for (size_t m = j; m < tk.n; m++)
                                len += strlen(tk.v[m]) + 1;
                        tail = calloc(len, 1);
                        ck_assert_ptr_nonnull(tail);
                        for (size_t m = j; m < tk.n; m++) {
                                if (m > j)
                                        strcat(tail, " ");
                                strcat(tail, tk.v[m]);
                        }
                }
                ck_assert_ptr_nonnull(l->actions);
                if (!l->numeric) {
                        rest = collapse(l->actions);
                        ck_assert_str_eq(rest, tail);
                        ck_assert_ptr_null(l->names);
                        ck_assert_ptr_null(l->chip);
                } else {
                        _cleanup_free_ char *rebuilt = NULL, *acts = collapse(l->actions);
                        _cleanup_free_ char *joined = NULL;
                        size_t jl = 1;

                        if (j < tk.n) {
                                ck_assert_ptr_nonnull(l->chip);
                                ck_assert_str_eq(l->chip, tk.v[j]);
                        } else
                                ck_assert_ptr_null(l->chip);
                        ck_assert(
                                asprintf(
                                        &rebuilt, "%s%s%s%s%s", l->chip ?: "", l->hwirq ? " " : "",
                                        l->hwirq ?: "", *acts ? " " : "", acts) >= 0);
                        ck_assert_str_eq(rebuilt, tail);

                        /* names joined with ", " give the actions back */
                        ck_assert_ptr_nonnull(l->names);
                        STRV_FOREACH (s, l->names) {
                                ck_assert_str_ne(*s, "");
                                jl += strlen(*s) + 2;
                        }
                        joined = calloc(jl, 1);
                        ck_assert_ptr_nonnull(joined);
                        STRV_FOREACH (s, l->names) {
                                if (s != l->names)
                                        strcat(joined, ", ");
                                strcat(joined, *s);
                        }
                        ck_assert_str_eq(joined, l->actions);
                        ck_assert_ptr_eq(interrupt_table_find(t, l->irq), l);
                }
                tokens_done(&tk);
        }
        ck_assert_uint_eq(li, t->n_lines);
}

START_TEST(test_corpus_scan) {
        _cleanup_closedir_ DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;
        unsigned n = 0;

        snprintf(path, sizeof(path), "%s/interrupts", corpus_dir());
        d = opendir(path);
        ck_assert_msg(d, "%s: %m", path);
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (len < 4 || !streq(de->d_name + len - 4, ".txt") || is_mask_file(de->d_name))
                        continue;
                check_against_scan(de->d_name);
                n++;
        }
        /* rbench, irqcli, serverfault, amzn */
        ck_assert_uint_ge(n, 4);
}
END_TEST

/* ---- values read by hand from the files ------------------------------------------------------ */

static const InterruptLine *find(const InterruptTable *t, unsigned irq) {
        const InterruptLine *l = interrupt_table_find(t, irq);
        ck_assert_msg(l, "IRQ %u not found", irq);
        return l;
}

static const InterruptLine *find_id_or_null(const InterruptTable *t, const char *id) {
        for (size_t i = 0; i < t->n_lines; i++)
                if (streq(t->lines[i].id, id))
                        return &t->lines[i];
        return NULL;
}

static const InterruptLine *find_id(const InterruptTable *t, const char *id) {
        const InterruptLine *l = find_id_or_null(t, id);

        ck_assert_msg(l, "line %s: not found", id);
        return l;
}

START_TEST(test_rbench) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = parse_corpus(RBENCH);
        const InterruptLine *l;
        bool present;

        ck_assert(t->has_header);
        ck_assert_uint_eq(t->n_cpus, 40);
        for (unsigned i = 0; i < 40; i++)
                ck_assert_uint_eq(t->cpus[i], i);

        l = find(t, 0);
        ck_assert_uint_eq(l->n_counts, 40);
        ck_assert_uint_eq(l->counts[0], 154);
        ck_assert_str_eq(l->chip, "IR-IO-APIC-edge");
        ck_assert_ptr_null(l->hwirq);
        ck_assert_str_eq(l->actions, "timer");

        /* shared: two names, the first with a blank inside */
        l = find(t, 25);
        ck_assert_str_eq(l->chip, "IR-PCI-MSI-edge");
        ck_assert_str_eq(l->actions, "PCIe PME, pciehp");
        ck_assert_uint_eq(strv_length(l->names), 2);
        ck_assert_str_eq(l->names[0], "PCIe PME");
        ck_assert_str_eq(l->names[1], "pciehp");

        l = find(t, 84);
        ck_assert_str_eq(l->actions, "megasas0-msix5");
        ck_assert_uint_eq(interrupt_line_count(t, l, 8, &present), 1082463);
        ck_assert(present);
        ck_assert_uint_eq(interrupt_line_count(t, l, 7, NULL), 0);

        l = find(t, 104);
        ck_assert_str_eq(l->chip, "DMAR_MSI-edge");
        ck_assert_str_eq(l->names[0], "dmar6");

        for (unsigned q = 0; q < 8; q++) {
                char name[32];
                snprintf(name, sizeof(name), "p7p1-TxRx-%u", q);
                l = find(t, 128 + q);
                ck_assert_str_eq(l->actions, name);
                for (unsigned c = 0; c < 40; c++)
                        ck_assert_uint_eq(interrupt_line_count(t, l, c, NULL), 0);
        }

        l = find(t, 169);
        ck_assert_str_eq(l->names[0], "nvme0q0");
        ck_assert_uint_eq(interrupt_line_count(t, l, 0, NULL), 5761);

        l = find(t, 231);
        ck_assert_str_eq(l->actions, "mlx5_comp0@pci:0000:3b:00.0");
        ck_assert_uint_eq(l->counts[0], 2);

        l = find(t, 276);
        ck_assert_str_eq(l->actions, "em4-rx-4");
        ck_assert_uint_eq(l->counts[0], 99);
        ck_assert_uint_eq(l->counts[2], 2006011804);
        ck_assert_uint_eq(l->counts[39], 0);

        l = find_id(t, "LOC");
        ck_assert(!l->numeric);
        ck_assert_uint_eq(l->n_counts, 40);
        ck_assert_uint_eq(l->counts[0], 1513827581);
        ck_assert_uint_eq(l->counts[22], 1538130418);
        ck_assert_uint_eq(l->counts[39], 565213653);
        ck_assert_str_eq(l->actions, "Local timer interrupts");

        l = find_id(t, "ERR");
        ck_assert_uint_eq(l->n_counts, 1);
        ck_assert_uint_eq(l->counts[0], 0);
        ck_assert_uint_eq(interrupt_line_count(t, l, 1, &present), 0);
        ck_assert(!present);
        ck_assert_str_eq(l->actions, "");

        ck_assert_ptr_null(interrupt_table_find(t, 1));
        ck_assert_ptr_null(interrupt_table_find(t, 277));
}
END_TEST

START_TEST(test_irqcli) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = parse_corpus(IRQCLI);
        const InterruptLine *l;

        ck_assert(t->has_header);
        ck_assert_uint_eq(t->n_cpus, 2);
        ck_assert_uint_eq(t->n_lines, 65); /* IRQs 132..196 */
        for (unsigned irq = 132; irq <= 196; irq++)
                ck_assert_ptr_nonnull(interrupt_table_find(t, irq));

        l = find(t, 134);
        ck_assert_str_eq(l->names[0], "eth0-TxRx-2");
        ck_assert_uint_eq(l->counts[0], 3150750313ULL); /* beyond 2^31 */
        ck_assert_uint_eq(l->counts[1], 16107924);
        ck_assert_str_eq(l->chip, "IR-PCI-MSI-edge");
        ck_assert_ptr_null(l->hwirq);

        l = find(t, 164);
        ck_assert_str_eq(l->actions, "eth0");
        ck_assert_uint_eq(interrupt_line_count(t, l, 0, NULL), 9232);
        ck_assert_uint_eq(interrupt_line_count(t, l, 1, NULL), 25456);

        l = find(t, 196);
        ck_assert_str_eq(l->actions, "eth1-TxRx-31");
        ck_assert_uint_eq(l->counts[0], 152210);
        ck_assert_uint_eq(l->counts[1], 514647);
}
END_TEST

START_TEST(test_serverfault_trimmed_columns) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = parse_corpus(SERVERFLT);
        const InterruptLine *l;
        bool present;

        ck_assert(t->has_header);
        ck_assert_uint_eq(t->n_cpus, 3);
        ck_assert_uint_eq(t->cpus[0], 0);
        ck_assert_uint_eq(t->cpus[1], 1);
        ck_assert_uint_eq(t->cpus[2], 15);

        /* the third column is CPU 15, not CPU 2 */
        l = find(t, 98);
        ck_assert_str_eq(l->chip, "PCI-MSI-X");
        ck_assert_ptr_null(l->hwirq);
        ck_assert_str_eq(l->actions, "eth1-0");
        ck_assert_uint_eq(interrupt_line_count(t, l, 15, &present), 2902361);
        ck_assert(present);
        ck_assert_uint_eq(interrupt_line_count(t, l, 2, &present), 0);
        ck_assert(!present);
        ck_assert_uint_eq(interrupt_line_count(t, l, 0, NULL), 35);

        l = find(t, 122);
        ck_assert_uint_eq(interrupt_line_count(t, l, 1, NULL), 1586);
        ck_assert_uint_eq(interrupt_line_count(t, l, 15, NULL), 22);

        l = find(t, 50);
        ck_assert_str_eq(l->chip, "IO-APIC-level");
        ck_assert_uint_eq(strv_length(l->names), 2);
        ck_assert_str_eq(l->names[0], "uhci_hcd:usb6");
        ck_assert_str_eq(l->names[1], "uhci_hcd:usb8");

        l = find(t, 217);
        ck_assert_uint_eq(strv_length(l->names), 3);
        ck_assert_str_eq(l->names[2], "uhci_hcd:usb7");

        /* trailer: NMI/LOC without text, ERR/MIS with one value */
        l = find_id(t, "NMI");
        ck_assert_uint_eq(l->n_counts, 3);
        ck_assert_uint_eq(interrupt_line_count(t, l, 15, NULL), 2931);
        ck_assert_str_eq(l->actions, "");
        l = find_id(t, "LOC");
        ck_assert_uint_eq(l->counts[1], 600328099);
        l = find_id(t, "MIS");
        ck_assert_uint_eq(l->n_counts, 1);
        ck_assert_ptr_eq(&t->lines[t->n_lines - 1], l);
}
END_TEST

START_TEST(test_amzn_no_header_blank_names) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = parse_corpus(AMZN);
        const InterruptLine *l;

        ck_assert(!t->has_header);
        ck_assert_uint_eq(t->n_cpus, 4);
        for (unsigned i = 0; i < 4; i++)
                ck_assert_uint_eq(t->cpus[i], i);

        l = find(t, 65);
        ck_assert_str_eq(l->chip, "PCI-MSIX-0000:27:00.0");
        ck_assert_str_eq(l->hwirq, "0-edge");
        ck_assert_str_eq(l->actions, "ena-mgmnt@pci:0000:27:00.0");
        ck_assert_uint_eq(l->counts[0], 8362);
        ck_assert_uint_eq(l->counts[3], 2);

        l = find(t, 66);
        ck_assert_str_eq(l->hwirq, "1-edge");
        ck_assert_str_eq(l->names[0], "enp39s0-Tx-Rx-0");
        ck_assert_ptr_null(l->names[1]);

        for (unsigned irq = 67; irq <= 69; irq++) {
                char hw[16];
                l = find(t, irq);
                snprintf(hw, sizeof(hw), "%u-edge", irq - 65);
                ck_assert_str_eq(l->chip, "PCI-MSIX-0000:27:00.0");
                ck_assert_str_eq(l->hwirq, hw);
                ck_assert_str_eq(l->actions, "");
                ck_assert_ptr_nonnull(l->names);
                ck_assert_ptr_null(l->names[0]);
        }
        l = find(t, 67);
        ck_assert_uint_eq(l->counts[1], 163);
        ck_assert_uint_eq(l->counts[3], 1);
        l = find(t, 69);
        ck_assert_uint_eq(interrupt_line_count(t, l, 3, NULL), 134);

        l = find_id(t, "CAL");
        ck_assert_uint_eq(l->counts[0], 5408);
        ck_assert_uint_eq(l->counts[3], 13832208);
        ck_assert_str_eq(l->actions, "Function call interrupts");
}
END_TEST

/* The masks in the corpus give the cpulists INDEX.md states; the bits are also decoded here. */
static void decode_hex_mask(const char *s, CpuSet *ret) {
        size_t len = strlen(s);
        unsigned bit = 0;

        cpuset_clear(ret);
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' '))
                len--;
        for (size_t i = len; i > 0; i--) {
                char c = s[i - 1];
                unsigned v;
                if (c == ',')
                        continue;
                v = (unsigned)(c >= 'a' ? c - 'a' + 10 : c - '0');
                for (unsigned b = 0; b < 4; b++, bit++)
                        if (v & (1U << b))
                                ck_assert_int_eq(cpuset_add(ret, bit), 0);
        }
}

static void check_mask(const char *mask, const char *expected_list) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, d = CPUSET_NULL;
        _cleanup_free_ char *list = NULL;

        ck_assert_int_eq(cpuset_parse_mask(mask, &s, NULL), 0);
        ck_assert_int_eq(cpuset_format_list(&s, &list), 0);
        ck_assert_str_eq(list, expected_list);
        decode_hex_mask(mask, &d);
        ck_assert(cpuset_equal(&s, &d));
}

START_TEST(test_corpus_masks) {
        _cleanup_free_ char *sf = corpus_file(SF_MASK, NULL), *ib = corpus_file(IRQBALANCE, NULL);
        _cleanup_strv_free_ char **lines = NULL;
        size_t n, masks = 0, nodes = 0;

        check_mask(sf, "15");

        lines = split_lines(ib, &n);
        for (size_t i = 0; i < n; i++) {
                char *colon = strrchr(lines[i], ':');
                ck_assert_ptr_nonnull(colon);
                if (strstr(lines[i], "/smp_affinity:")) {
                        check_mask(colon + 1, "26-51,78-103");
                        masks++;
                } else if (strstr(lines[i], "/node:")) {
                        ck_assert_str_eq(colon + 1, "0");
                        nodes++;
                }
        }
        ck_assert_uint_eq(masks, 3);
        ck_assert_uint_eq(nodes, 3);
}
END_TEST

/* ---- this machine ---------------------------------------------------------------------------- */

START_TEST(test_live) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t in_proc_irq = 0, numeric = 0;
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        int r;

        r = interrupts_read("/proc/interrupts", &t, &error);
        ck_assert_msg(r == 0, "%s (%d)", strna(error), r);
        ck_assert(t->has_header);
        ck_assert_int_eq((long)t->n_cpus, online);

        /* The numeric IRQs are exactly the directories of /proc/irq. */
        d = opendir("/proc/irq");
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                if (!all_digits(de->d_name))
                        continue;
                in_proc_irq++;
                ck_assert_msg(
                        interrupt_table_find(t, (unsigned)strtoul(de->d_name, NULL, 10)),
                        "IRQ %s in /proc/irq but not in /proc/interrupts", de->d_name);
        }
        for (size_t i = 0; i < t->n_lines; i++) {
                const InterruptLine *l = &t->lines[i];
                char path[PATH_MAX];
                struct stat st;

                if (!l->numeric)
                        continue;
                numeric++;
                snprintf(path, sizeof(path), "/proc/irq/%u", l->irq);
                ck_assert_msg(stat(path, &st) == 0, "%s: %m", path);
                /* the kernel makes /proc/irq/N/NAME for every action name */
                STRV_FOREACH (s, l->names) {
                        if (strchr(*s, '/'))
                                continue;
                        snprintf(path, sizeof(path), "/proc/irq/%u/%s", l->irq, *s);
                        ck_assert_msg(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "%s: %m", path);
                }
                ck_assert_uint_eq(l->n_counts, t->n_cpus);
        }
        ck_assert_uint_eq(numeric, in_proc_irq);
        ck_assert_uint_gt(numeric, 0);

        ck_assert_int_eq(interrupts_read("/proc/nonexistent-interrupts", &t, &error), -ENOENT);
}
END_TEST

/* ---- synthetic ------------------------------------------------------------------------------- */

static int parse(const char *text, InterruptTable **t, char **error) {
        return interrupts_parse(text, t, error);
}

START_TEST(test_junk) {
        InterruptTable *sentinel = (InterruptTable *)(uintptr_t)1, *t = sentinel;
        char *error = NULL;

        ck_assert_int_eq(
                parse("           CPU0       CPU1\n  1:   2   3  IO-APIC 1-edge  i8042\nthis is junk\n", &t,
                      &error),
                -EBADMSG);
        ck_assert_ptr_eq(t, sentinel);
        ck_assert_ptr_nonnull(error);
        ck_assert_msg(strncmp(error, "line 3: ", 8) == 0, "%s", error);
        error = mfree(error);

        /* a count that is not a number, after blank lines */
        ck_assert_int_eq(parse("\n\n  CPU0 CPU1\n  7:  12x  3  IO-APIC 7-edge foo\n", &t, &error), -EBADMSG);
        ck_assert_msg(strncmp(error, "line 4: ", 8) == 0, "%s", error);
        ck_assert_msg(strstr(error, "12x"), "%s", error);
        error = mfree(error);

        /* a counter beyond 64 bits */
        ck_assert_int_eq(parse("CPU0\n 1: 18446744073709551616 chip x\n", &t, &error), -EBADMSG);
        ck_assert_msg(strncmp(error, "line 2: ", 8) == 0, "%s", error);
        error = mfree(error);

        /* ":" with no ID */
        ck_assert_int_eq(parse("CPU0\n : 1 chip x\n", &t, &error), -EBADMSG);
        ck_assert_msg(strncmp(error, "line 2: ", 8) == 0, "%s", error);
        error = mfree(error);

        /* numeric IRQ with words but no counts */
        ck_assert_int_eq(parse("CPU0 CPU1\n 5: chip x\n", &t, &error), -EBADMSG);
        error = mfree(error);

        /* the error text is optional */
        ck_assert_int_eq(parse("junk\n", &t, NULL), -EBADMSG);
        ck_assert_ptr_eq(t, sentinel);
}
END_TEST

START_TEST(test_synthetic_shapes) {
        _cleanup_(interrupt_table_freep) InterruptTable *t = NULL;
        _cleanup_free_ char *error = NULL;
        const InterruptLine *l;

        ck_assert_int_eq(
                parse("  CPU0  CPU3\n"
                      "  0:  18446744073709551615  7\n"
                      " 11:  100  200  GICv3  27 Level     arch_timer\n"
                      "  1:  4  5  xen-pirq    -ioapic-edge  i8042\n"
                      " 38:  212  448 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0   \n"
                      "\n"
                      "IPI0:  9  8  Rescheduling interrupts\n"
                      "ERR:  3\n"
                      "MIS:  0\n",
                      &t, &error),
                0);
        ck_assert_ptr_null(error);
        ck_assert_uint_eq(t->n_cpus, 2);
        ck_assert_uint_eq(t->cpus[1], 3);
        ck_assert_uint_eq(t->n_lines, 7);

        l = find(t, 0);
        ck_assert_uint_eq(l->counts[0], UINT64_MAX);
        ck_assert_uint_eq(interrupt_line_count(t, l, 3, NULL), 7);
        ck_assert_ptr_null(l->chip);
        ck_assert_ptr_null(l->hwirq);
        ck_assert_str_eq(l->actions, "");
        ck_assert_ptr_null(l->names[0]);

        l = find(t, 11);
        ck_assert_str_eq(l->chip, "GICv3");
        ck_assert_str_eq(l->hwirq, "27 Level");
        ck_assert_str_eq(l->actions, "arch_timer");

        l = find(t, 1);
        ck_assert_str_eq(l->chip, "xen-pirq");
        ck_assert_str_eq(l->hwirq, "-ioapic-edge");
        ck_assert_str_eq(l->names[0], "i8042");

        l = find(t, 38);
        ck_assert_str_eq(l->hwirq, "1-edge");
        ck_assert_str_eq(l->actions, "virtio2-input.0");

        l = find_id(t, "IPI0");
        ck_assert(!l->numeric);
        ck_assert_uint_eq(l->counts[1], 8);
        ck_assert_str_eq(l->actions, "Rescheduling interrupts");

        l = find_id(t, "ERR");
        ck_assert_uint_eq(l->n_counts, 1);
        ck_assert_uint_eq(l->counts[0], 3);
        t = interrupt_table_free(t);

        /* header-less: columns from the widest numeric line, not from LOC */
        ck_assert_int_eq(
                parse(" 5: 1 2 3 IO-APIC 5-edge a\n 6: 4 5 IO-APIC 6-edge b\nLOC: 1 2 3 4 5\n", &t, &error),
                0);
        ck_assert(!t->has_header);
        ck_assert_uint_eq(t->n_cpus, 3);
        l = find(t, 6);
        ck_assert_uint_eq(l->n_counts, 2);
        ck_assert_str_eq(l->chip, "IO-APIC");
        l = find_id(t, "LOC");
        ck_assert_uint_eq(l->n_counts, 3);
        ck_assert_str_eq(l->actions, "4 5");
        t = interrupt_table_free(t);

        /* empty text */
        ck_assert_int_eq(parse("", &t, &error), 0);
        ck_assert_uint_eq(t->n_lines, 0);
        ck_assert_uint_eq(t->n_cpus, 0);
        ck_assert_ptr_null(interrupt_table_find(t, 0));
        ck_assert_ptr_null(interrupt_table_free(NULL));
}
END_TEST

/*
 * A CPU brought online while /proc/interrupts was printed: the header names 2 CPUs, later lines
 * have 3 counts. Strict parsing refuses the text (the third count would be taken for the chip);
 * lenient parsing leaves those lines and unparsable ones out, counted, and keeps the rest.
 */
START_TEST(test_skip_bad_lines) {
        static const char text[] = "           CPU0       CPU1\n"
                                   " 37:   1   2  PCI-MSIX-0000:00:03.0   0-edge  virtio2-config\n"
                                   " 38:   3   4   5  PCI-MSIX-0000:00:03.0   1-edge  virtio2-input.0\n"
                                   "garbage without a colon\n"
                                   " 39:   6   7  PCI-MSIX-0000:00:03.0   2-edge  virtio2-output.0\n"
                                   " 40:  8x   9  PCI-MSIX-0000:00:04.0   0-edge  virtio3-req.0\n"
                                   "NMI:   1   2   3  Non-maskable interrupts\n"
                                   "ERR:   0\n";
        _cleanup_(interrupt_table_freep) InterruptTable *t = NULL;
        InterruptTable *sentinel = (InterruptTable *)(uintptr_t)1, *strict = sentinel;
        _cleanup_free_ char *error = NULL;
        const InterruptLine *l;

        ck_assert_int_eq(interrupts_parse(text, &strict, &error), -EBADMSG);
        ck_assert_ptr_eq(strict, sentinel);
        ck_assert_msg(strncmp(error, "line 3: ", 8) == 0, "%s", error);
        ck_assert_msg(strstr(error, "more count columns"), "%s", error);
        error = mfree(error);
        ck_assert_int_eq(interrupts_parse_full(text, 0, &strict, &error), -EBADMSG);
        ck_assert_ptr_eq(strict, sentinel);
        error = mfree(error);

        ck_assert_int_eq(interrupts_parse_full(text, INTERRUPTS_SKIP_BAD_LINES, &t, &error), 0);
        ck_assert_ptr_null(error);
        ck_assert_uint_eq(t->n_skipped, 4); /* 38, the garbage, 40, NMI */
        ck_assert_ptr_nonnull(t->first_skip_reason);
        ck_assert_msg(strncmp(t->first_skip_reason, "line 3: ", 8) == 0, "%s", t->first_skip_reason);
        ck_assert_uint_eq(t->n_lines, 3);
        ck_assert_ptr_null(interrupt_table_find(t, 38));
        ck_assert_ptr_null(interrupt_table_find(t, 40));
        ck_assert_ptr_null(find_id_or_null(t, "NMI"));

        l = find(t, 37);
        ck_assert_str_eq(l->chip, "PCI-MSIX-0000:00:03.0");
        ck_assert_str_eq(l->actions, "virtio2-config");
        l = find(t, 39);
        ck_assert_ptr_eq(l, &t->lines[1]);
        ck_assert_str_eq(l->hwirq, "2-edge");
        ck_assert_uint_eq(interrupt_line_count(t, l, 1, NULL), 7);
        ck_assert_ptr_eq(find_id(t, "ERR"), &t->lines[2]);
        t = interrupt_table_free(t);

        /* a good text: nothing skipped, the same as strict */
        ck_assert_int_eq(
                interrupts_parse_full(
                        "CPU0 CPU1\n 5: 1 2 IO-APIC 5-edge a\n", INTERRUPTS_SKIP_BAD_LINES, &t, &error),
                0);
        ck_assert_uint_eq(t->n_skipped, 0);
        ck_assert_ptr_null(t->first_skip_reason);
        ck_assert_uint_eq(t->n_lines, 1);
        t = interrupt_table_free(t);

        /* header-less: the widest line sets the columns, so no line has too many */
        ck_assert_int_eq(
                interrupts_parse(" 5: 1 2 3 IO-APIC 5-edge a\n 6: 4 5 IO-APIC 6-edge b\n", &t, &error), 0);
        ck_assert_uint_eq(t->n_cpus, 3);
        ck_assert_uint_eq(t->n_skipped, 0);
}
END_TEST

/* interrupts_read_full() on a file: the same lenient table. */
START_TEST(test_read_full) {
        char path[] = "/tmp/test-interrupts-XXXXXX";
        static const char text[] = "  CPU0\n 1: 5 IO-APIC 1-edge i8042\n 2: 1 2 XT-PIC 2-edge cascade\n";
        _cleanup_(interrupt_table_freep) InterruptTable *t = NULL;
        _cleanup_free_ char *error = NULL;
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        ck_assert_int_eq(close(fd), 0);

        ck_assert_int_eq(interrupts_read(path, &t, &error), -EBADMSG);
        ck_assert_msg(strncmp(error, "line 3: ", 8) == 0, "%s", error);
        ck_assert_int_eq(interrupts_read_full(path, INTERRUPTS_SKIP_BAD_LINES, &t, NULL), 0);
        ck_assert_uint_eq(t->n_lines, 1);
        ck_assert_uint_eq(t->n_skipped, 1);
        ck_assert_str_eq(find(t, 1)->actions, "i8042");
        ck_assert_int_eq(unlink(path), 0);
        t = interrupt_table_free(t);
        ck_assert_int_eq(interrupts_read_full(path, INTERRUPTS_SKIP_BAD_LINES, &t, NULL), -ENOENT);
}
END_TEST

/*
 * A cut after every byte of every corpus file, each in a buffer of exactly its size (ASan sees
 * overreads). What a truncation can break is at the cut: the lines before it parse as they do in
 * the whole file (the corpus tests check those). So a small file is cut whole; a large one (the
 * 40-CPU dump is 116 KiB: every prefix would parse 7 GB) is cut in a window — its header line,
 * the line before the cut's line, and the cut line up to the cut — which keeps the parser's
 * column count and continuation rules and makes the test linear in the file's size.
 */
#define PREFIX_WHOLE_MAX 8192

/* Where the line holding offset n begins: just after the last '\n' before n, or 0. */
static size_t line_begin(const char *text, size_t n) {
        while (n > 0 && text[n - 1] != '\n')
                n--;
        return n;
}

/* The buffer for a cut at n: text[0, n), or the header + text[window, n). */
static char *cut_at(const char *text, size_t size, size_t n, size_t *ret_len) {
        const char *nl = memchr(text, '\n', size);
        size_t header = nl ? (size_t)(nl - text) + 1 : size, from = 0, len;
        char *p;

        if (size > PREFIX_WHOLE_MAX) {
                size_t b = line_begin(text, n);

                from = b > 0 ? line_begin(text, b - 1) : 0;
                if (from <= header)
                        from = 0;
        }
        len = (from > 0 ? header : 0) + (n - from);
        p = malloc(len + 1);
        ck_assert_ptr_nonnull(p);
        if (from > 0) {
                memcpy(p, text, header);
                memcpy(p + header, text + from, n - from);
        } else
                memcpy(p, text, n);
        p[len] = '\0';
        *ret_len = len;
        return p;
}

START_TEST(test_prefixes) {
        _cleanup_closedir_ DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;
        unsigned files = 0, windowed = 0;

        snprintf(path, sizeof(path), "%s/interrupts", corpus_dir());
        d = opendir(path);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *text = NULL;
                size_t size, len = strlen(de->d_name);

                if (len < 4 || !streq(de->d_name + len - 4, ".txt"))
                        continue;
                text = corpus_file(de->d_name, &size);
                files++;
                windowed += size > PREFIX_WHOLE_MAX;
                for (size_t n = 0; n <= size; n++) {
                        size_t plen;
                        char *p = cut_at(text, size, n, &plen);
                        InterruptTable *t = NULL;
                        char *error = NULL;
                        int r;

                        r = interrupts_parse(p, &t, &error);
                        if (is_mask_file(de->d_name) && n > 0 && strchr(p, ':') == NULL)
                                ck_assert_int_eq(r, -EBADMSG);
                        ck_assert_msg(r == 0 || r == -EBADMSG, "%s[0..%zu): %d", de->d_name, n, r);
                        if (r == 0)
                                ck_assert_ptr_null(error);
                        else
                                ck_assert_msg(error && strncmp(error, "line ", 5) == 0, "%s", strna(error));
                        /* The whole file, at the last cut, parses. */
                        if (n == size && !is_mask_file(de->d_name))
                                ck_assert_msg(r == 0, "%s: %s", de->d_name, strna(error));
                        interrupt_table_free(t);
                        free(error);
                        free(p);
                }
        }
        ck_assert_uint_ge(files, 6);
        ck_assert_uint_ge(windowed, 1);
}
END_TEST

int main(void) {
        Suite *s = suite_create("interrupts");
        TCase *corpus = tcase_create("corpus"), *live = tcase_create("live"),
              *syn = tcase_create("synthetic"), *prefix = tcase_create("prefixes");
        SRunner *sr;
        int failed;

        tcase_add_test(corpus, test_corpus_scan);
        tcase_add_test(corpus, test_rbench);
        tcase_add_test(corpus, test_irqcli);
        tcase_add_test(corpus, test_serverfault_trimmed_columns);
        tcase_add_test(corpus, test_amzn_no_header_blank_names);
        tcase_add_test(corpus, test_corpus_masks);
        suite_add_tcase(s, corpus);

        tcase_add_test(live, test_live);
        suite_add_tcase(s, live);

        tcase_add_test(syn, test_junk);
        tcase_add_test(syn, test_synthetic_shapes);
        tcase_add_test(syn, test_skip_bad_lines);
        tcase_add_test(syn, test_read_full);
        suite_add_tcase(s, syn);

        tcase_add_test(prefix, test_prefixes);
        suite_add_tcase(s, prefix);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
