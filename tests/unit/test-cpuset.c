/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Unit tests for lib/cpuset.c: the cpu-list and hex-mask cases of the shared corpus
 * ($AFFINITYD_CORPUS/cpulist-cases.tsv, every row, with the rows where affinityd deliberately
 * differs from the upstream tool listed below with the reason), error offsets, format round
 * trips against a naive bit-by-bit reference, set algebra, glibc cpu_set_t conversion, and the
 * kernel's own cpu-lists and masks in /proc and /sys (read only).
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "macro.h"

#define NCPUS CPUSET_MAX_CPUS

/* check's ck_assert*() record every passed assertion in a file: too slow per CPU in tight loops. */
#define require(cond, ...) \
        do { \
                if (!(cond)) \
                        ck_abort_msg(__VA_ARGS__); \
        } while (0)

/* ---- a naive reference: one bool per CPU ---- */

typedef struct RefSet {
        bool bit[CPUSET_MAX_CPUS];
} RefSet;

static uint64_t rng_state;

static void rng_seed(uint64_t seed) {
        rng_state = seed ?: 1;
}

/* xorshift64*: fixed seed, same sequence on every run. */
static uint64_t rng_next(void) {
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * UINT64_C(2685821657736338717);
}

static unsigned rng_below(unsigned n) {
        return (unsigned)(rng_next() % n);
}

/* A random subset of 0..width-1, in one of a few shapes (sparse, half, dense, runs). */
static void ref_random(RefSet *r, unsigned width) {
        unsigned shape = rng_below(4);
        bool on = false;

        memset(r, 0, sizeof(*r));
        for (unsigned i = 0; i < width; i++) {
                switch (shape) {
                case 0:
                        r->bit[i] = rng_below(16) == 0;
                        break;
                case 1:
                        r->bit[i] = rng_below(2) == 0;
                        break;
                case 2:
                        r->bit[i] = rng_below(16) != 0;
                        break;
                default:
                        if (rng_below(8) == 0)
                                on = !on;
                        r->bit[i] = on;
                }
        }
}

/* Reference helpers look at CPUs below width only (NCPUS = all); the rest must be clear. */
static unsigned ref_count(const RefSet *r, unsigned width) {
        unsigned n = 0;

        for (unsigned i = 0; i < width; i++)
                n += r->bit[i];
        return n;
}

/* Canonical cpu-list, bit by bit: runs of two or more as "a-b". */
static char *ref_format_list(const RefSet *r, unsigned width) {
        char *buf = malloc(NCPUS * 6 + 1), *p = buf;

        ck_assert_ptr_nonnull(buf);
        *p = '\0';
        for (unsigned i = 0; i < width; i++) {
                unsigned j = i;

                if (!r->bit[i])
                        continue;
                while (j + 1 < width && r->bit[j + 1])
                        j++;
                p += sprintf(p, "%s%u", p == buf ? "" : ",", i);
                if (j > i)
                        p += sprintf(p, "-%u", j);
                i = j;
        }
        return buf;
}

/* Hex mask of n32 32-bit words, each as 8 digits, most significant first, bit by bit. */
static char *ref_format_mask(const RefSet *r, unsigned n32) {
        char *buf = malloc(n32 * 9 + 1), *p = buf;

        ck_assert_ptr_nonnull(buf);
        for (unsigned k = n32; k-- > 0;) {
                uint32_t v = 0;

                for (unsigned b = 0; b < 32; b++)
                        if (k * 32 + b < NCPUS && r->bit[k * 32 + b])
                                v |= UINT32_C(1) << b;
                p += sprintf(p, "%s%08" PRIx32, k + 1 == n32 ? "" : ",", v);
        }
        return buf;
}

/* Reads the corpus' canonical expected form ("0-3,8", "(empty)") without the code under test. */
static void ref_parse_canonical(const char *s, RefSet *r) {
        memset(r, 0, sizeof(*r));
        if (streq(s, "(empty)"))
                return;
        for (const char *p = s;;) {
                char *end;
                unsigned long a = strtoul(p, &end, 10), b = a;

                ck_assert_msg(end != p, "bad expected list \"%s\"", s);
                if (*end == '-') {
                        p = end + 1;
                        b = strtoul(p, &end, 10);
                        ck_assert_msg(end != p, "bad expected list \"%s\"", s);
                }
                ck_assert_msg(a <= b && b < NCPUS, "bad expected list \"%s\"", s);
                for (unsigned long i = a; i <= b; i++)
                        r->bit[i] = true;
                if (*end == '\0')
                        return;
                ck_assert_msg(*end == ',', "bad expected list \"%s\"", s);
                p = end + 1;
        }
}

static void set_from_ref(CpuSet *s, const RefSet *r, unsigned width) {
        cpuset_done(s);
        for (unsigned i = 0; i < width; i++)
                if (r->bit[i])
                        require(cpuset_add(s, i) == 0, "cpuset_add(%u) failed", i);
}

static void assert_set_is_ref(const CpuSet *s, const RefSet *r, unsigned width, const char *what) {
        int last = -1;

        for (unsigned i = 0; i < width; i++) {
                require(cpuset_contains(s, i) == r->bit[i], "%s: CPU %u is %s", what, i,
                        r->bit[i] ? "missing" : "extra");
                if (r->bit[i])
                        last = (int)i;
        }
        ck_assert_msg(cpuset_contains(s, NCPUS) == false, "%s: CPU %u", what, NCPUS);
        ck_assert_uint_eq(cpuset_count(s), ref_count(r, width));
        ck_assert_int_eq(cpuset_last(s), last); /* so nothing at or above width */
        ck_assert(cpuset_is_empty(s) == (last < 0));
}

/* ---- the corpus ---- */

/*
 * Which rows are hex masks (cpuset_parse_mask) rather than cpu-lists: the note column says so in
 * the words of its source. Everything else is a cpu-list.
 */
static const char *const mask_note_patterns[] = {
        "bitmap_parse =",                /* kernel parse_tests: the smp_affinity hex format */
        "cpu_set_to_mask_string output", /* systemd's mask output, parsed back */
        "taskset.1.adoc: mask",          /* taskset's mask argument */
        "inverse of",                    /* bits(1): what bits --mask / --grouped-mask printed */
        "grouped mask",                  /* bits(1): a grouped mask given as input */
        "output of bits -g",             /* bits(1): --grouped-mask output */
        "bits -l prints it as",          /* bits(1): a mask converted to a list */
        "--list prints",                 /* bits.1 EXAMPLES: a mask converted with --list */
        "--list; leading comma",         /* bits.1 EXAMPLES: a grouped mask converted with --list */
};

static bool note_is_mask(const char *note) {
        for (size_t i = 0; i < ELEMENTSOF(mask_note_patterns); i++)
                if (strstr(note, mask_note_patterns[i]))
                        return true;
        return false;
}

static const char *note_tool(const char *note) {
        if (strncmp(note, "linux ", 6) == 0)
                return "kernel";
        if (strncmp(note, "systemd ", 8) == 0)
                return "systemd";
        if (strncmp(note, "util-linux ", 11) == 0)
                return "util-linux";
        ck_abort_msg("corpus row with an unknown source: %s", note);
        return NULL;
}

/*
 * Rows where affinityd deliberately gives another result than the upstream tool the row comes
 * from. Keyed by the (unescaped) input and the upstream expected result, since the corpus has
 * the same input under different widths/options. Every other row must give exactly the
 * upstream result: the rule of the tool named in its note.
 */
typedef struct Deviation {
        const char *input;
        const char *upstream;  /* the corpus' expected column */
        const char *affinityd; /* our result: a canonical list, "(empty)" or "ERROR" */
        int error;             /* for ERROR: -EINVAL or -ERANGE */
        size_t offset;         /* for ERROR: the offending character */
        const char *rule;      /* whose rule affinityd follows on this row */
        const char *reason;
        unsigned hits;
} Deviation;

#define NO_N \
        "affinityd: no width-dependent syntax", \
                "'N' is the last bit of the parser's bitmap; a policy is validated without knowing the " \
                "width"
#define NO_ALL \
        "affinityd: no width-dependent syntax", \
                "'all' is every bit of the parser's bitmap; a policy is validated without knowing the " \
                "width"
#define WIDTH_8192 \
        "affinityd: the width is always CPUSET_MAX_CPUS (8192)", \
                "the upstream case uses a narrower bitmap and rejects or drops CPUs beyond it"
#define NO_OPERATORS \
        "kernel/systemd/util-linux cpulist_parse: a cpu-list has no operators", \
                "bits(1) command-line operators (| & ^ ~), not cpu-list syntax"
#define DEADBEEF_96 "32,64-67,69-71,73-77,79-80,82-83,85,87,89-92,94-95"
#define BADF00D_124 \
        "32,64-67,69-71,73-77,79-80,82-83,85,87,89-92,94-96,98-99,108-112,114-115,117,119-121,123"

static Deviation deviations[] = {
        /* kernel bitmap_parselist: 'N' and 'all' depend on the bitmap width */
        {"N-N", "31", "ERROR", -EINVAL, 0, NO_N},
        {"0-0:1/N", "0", "ERROR", -EINVAL, 6, NO_N},
        {"0-0:N/N", "0", "ERROR", -EINVAL, 4, NO_N},
        {"0-15:16/N", "0-15", "ERROR", -EINVAL, 8, NO_N},
        {"15-15:N/N", "15", "ERROR", -EINVAL, 6, NO_N},
        {"15-N:1/N", "15", "ERROR", -EINVAL, 3, NO_N},
        {"16-N:16/N", "16-31", "ERROR", -EINVAL, 3, NO_N},
        {"N-N:N/N", "31", "ERROR", -EINVAL, 0, NO_N},
        {"0-N:1/3,1-N:1/3,2-N:1/3", "0-31", "ERROR", -EINVAL, 2, NO_N},
        {"all", "0-31", "ERROR", -EINVAL, 0, NO_ALL},
        {"0, 1, all,  ", "0-31", "ERROR", -EINVAL, 6, NO_ALL},
        {"all:1/2", "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30", "ERROR", -EINVAL, 0, NO_ALL},
        {"ALL:1/2", "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30", "ERROR", -EINVAL, 0, NO_ALL},
        /* kernel: cases run with an 8-bit bitmap (bit >= nbits is ERANGE there) */
        {"8-8", "ERROR", "8", 0, 0, WIDTH_8192},
        {"0-31", "ERROR", "0-31", 0, 0, WIDTH_8192},
        /* kernel bitmap_parse: cases run with 33-, 90-, 95- and 100-bit bitmaps */
        {"3,0", "ERROR", "32-33", 0, 0, WIDTH_8192},
        {"badf00d,deadbeef,1,0", "ERROR", BADF00D_124, 0, 0, WIDTH_8192},
        {"fbadf00d,deadbeef,1,0", "ERROR", BADF00D_124 "-127", 0, 0, WIDTH_8192},
        /* kernel bitmap_parse stops at the first newline and ignores the rest */
        {"deadbeef,\n,0,1", "0-3,5-7,9-13,15-16,18-19,21,23,25-28,30-31", "ERROR", -EINVAL, 10,
         "affinityd: text after the newline is an error",
         "the kernel silently ignores what follows the newline; affinityd never drops text"},
        /* systemd parse_cpu_set_full */
        {"8 '9' 10 \"11\"", "8-11", "ERROR", -EINVAL, 2, "kernel/util-linux: no quotes",
         "quoting belongs to the unit-file (and YAML) syntax around the value, not to the cpu-list"},
        {"3-0", "(empty)", "ERROR", -EINVAL, 2, "kernel/util-linux: a reversed range is an error",
         "systemd silently yields an empty set, which would leave a task with no CPU"},
        /* util-linux bits(1) */
        {"1,10000", "1", "ERROR", -ERANGE, 2,
         "util-linux bits --fail-width: CPUs beyond the width are an error",
         "bits(1) drops them by default, a silently shorter set"},
        {"10000", "10000", "ERROR", -ERANGE, 0, "affinityd: CPU numbers stop at 8191 (CPUSET_MAX_CPUS)",
         "bits --width 16384 widens its bitmap; affinityd's width is the kernel's NR_CPUS maximum"},
        {"11,22,33,44", "11,22", "11,22,33,44", 0, 0, WIDTH_8192},
        {"2,22,74,79", "2,22", "2,22,74,79", 0, 0, WIDTH_8192},
        {"50-100 |75-150", "50-150", "ERROR", -EINVAL, 7, NO_OPERATORS},
        {"50-100 &75-150", "75-100", "ERROR", -EINVAL, 7, NO_OPERATORS},
        {"50-100 ^75-150", "50-74,101-150", "ERROR", -EINVAL, 7, NO_OPERATORS},
        {"50-100 ~75-150", "50-74", "ERROR", -EINVAL, 7, NO_OPERATORS},
        {"1,2,3,4 ~3-10", "1-2", "ERROR", -EINVAL, 8, NO_OPERATORS},
        {"1,2,3,4 ^3-10", "1-2,5-10", "ERROR", -EINVAL, 8, NO_OPERATORS},
        {"11,22,33,44\n^22", "11,33,44", "ERROR", -EINVAL, 12,
         "affinityd: one line; text after the newline is an error",
         "bits(1) reads a second line as a second operand"},
};

static Deviation *deviation_find(const char *input, const char *upstream) {
        for (size_t i = 0; i < ELEMENTSOF(deviations); i++)
                if (streq(deviations[i].input, input) && streq(deviations[i].upstream, upstream))
                        return &deviations[i];
        return NULL;
}

/* The corpus' escapes: \n, \t, \\. Anything else is a corrupt corpus. */
static char *unescape(const char *s, unsigned line) {
        char *buf = malloc(strlen(s) + 1), *p = buf;

        ck_assert_ptr_nonnull(buf);
        for (; *s; s++) {
                if (*s != '\\') {
                        *p++ = *s;
                        continue;
                }
                s++;
                switch (*s) {
                case 'n':
                        *p++ = '\n';
                        break;
                case 't':
                        *p++ = '\t';
                        break;
                case '\\':
                        *p++ = '\\';
                        break;
                default:
                        ck_abort_msg("cpulist-cases.tsv:%u: unknown escape \\%c", line, *s ?: '0');
                }
        }
        *p = '\0';
        return buf;
}

/* Checks one parse result against an expected list/"(empty)"/"ERROR". Returns a failure text or NULL. */
static char *check_result(
        const char *input, bool mask, const char *expected, int want_error, size_t want_offset,
        bool exact_error) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        size_t offset = SIZE_MAX;
        const char *reason = NULL;
        char *msg = NULL;
        int r;

        r = mask ? cpuset_parse_mask_full(input, &s, &offset, &reason)
                 : cpuset_parse_list_full(input, &s, &offset, &reason);

        if (streq(expected, "ERROR")) {
                if (r >= 0) {
                        _cleanup_free_ char *got = cpuset_to_string(&s);
                        ck_assert(asprintf(&msg, "expected an error, got \"%s\"", got) >= 0);
                        return msg;
                }
                if (r != -EINVAL && r != -ERANGE)
                        ck_assert(asprintf(&msg, "error %d is neither -EINVAL nor -ERANGE", r) >= 0);
                else if (offset > strlen(input) || !reason || !*reason)
                        ck_assert(
                                asprintf(&msg, "error without a usable offset (%zu) or reason", offset) >=
                                0);
                else if (exact_error && (r != want_error || offset != want_offset))
                        ck_assert(
                                asprintf(
                                        &msg, "expected error %d at offset %zu, got %d at %zu (%s)",
                                        want_error, want_offset, r, offset, reason) >= 0);
                else
                        printf("        -> error at offset %zu: %s\n", offset, reason);
                return msg;
        }

        if (r < 0) {
                ck_assert(
                        asprintf(
                                &msg, "expected \"%s\", got error %d at offset %zu: %s", expected, r, offset,
                                reason) >= 0);
                return msg;
        }
        ck_assert_msg(offset == SIZE_MAX && reason == NULL, "error outputs written on success");

        RefSet ref;
        ref_parse_canonical(expected, &ref);
        for (unsigned i = 0; i < NCPUS; i++)
                if (cpuset_contains(&s, i) != ref.bit[i]) {
                        _cleanup_free_ char *got = cpuset_to_string(&s);
                        ck_assert(
                                asprintf(&msg, "expected \"%s\", got \"%s\" (CPU %u)", expected, got, i) >=
                                0);
                        return msg;
                }

        /* Printed back in the canonical form (the corpus' column mostly is, but not always:
         * "58,59,120,123"), as the naive reference prints it. */
        _cleanup_free_ char *formatted = NULL, *canonical = ref_format_list(&ref, NCPUS);
        ck_assert_int_eq(cpuset_format_list(&s, &formatted), 0);
        if (!streq(formatted, canonical))
                ck_assert(asprintf(&msg, "formats as \"%s\", expected \"%s\"", formatted, canonical) >= 0);
        return msg;
}

START_TEST(test_corpus) {
        const char *dir = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t line_size = 0;
        unsigned n_line = 0, n_rows = 0, n_masks = 0, n_failed = 0;
        struct {
                const char *tool;
                unsigned follow, differ;
        } tally[] = {{"kernel", 0, 0}, {"systemd", 0, 0}, {"util-linux", 0, 0}};

        ck_assert_msg(dir && *dir, "AFFINITYD_CORPUS is not set (tests/meson.build sets it)");
        ck_assert(asprintf(&path, "%s/cpulist-cases.tsv", dir) >= 0);
        f = fopen(path, "re");
        ck_assert_msg(f, "cannot open %s: %s", path, strerror(errno));

        printf("%s:\n", path);
        while (getline(&line, &line_size, f) >= 0) {
                _cleanup_free_ char *input = NULL, *failure = NULL;
                char *expected, *note, *nl;
                const char *tool;
                Deviation *d;
                bool mask;

                n_line++;
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                if (line[0] == '#' || line[0] == '\0')
                        continue;

                expected = strchr(line, '\t');
                ck_assert_msg(expected, "%s:%u: no TAB after the input", path, n_line);
                *expected++ = '\0';
                note = strchr(expected, '\t');
                ck_assert_msg(note, "%s:%u: no TAB after the expected column", path, n_line);
                *note++ = '\0';

                input = unescape(line, n_line);
                mask = note_is_mask(note);
                tool = note_tool(note);
                d = deviation_find(input, expected);
                n_rows++;
                n_masks += mask;

                if (d) {
                        ck_assert_msg(
                                !streq(d->upstream, d->affinityd),
                                "deviation for \"%s\" gives the upstream result", line);
                        d->hits++;
                        printf("  %u: %-10s %-4s \"%s\": upstream %s, affinityd %s -- follows %s: %s\n",
                               n_line, tool, mask ? "mask" : "list", line, expected, d->affinityd, d->rule,
                               d->reason);
                        failure = check_result(input, mask, d->affinityd, d->error, d->offset, true);
                } else {
                        printf("  %u: %-10s %-4s \"%s\": %s -- follows %s\n", n_line, tool,
                               mask ? "mask" : "list", line, expected, tool);
                        failure = check_result(input, mask, expected, 0, 0, false);
                }

                for (size_t i = 0; i < ELEMENTSOF(tally); i++)
                        if (streq(tally[i].tool, tool)) {
                                if (d)
                                        tally[i].differ++;
                                else
                                        tally[i].follow++;
                        }

                if (failure) {
                        n_failed++;
                        fprintf(stderr, "%s:%u: %s \"%s\" (%s): %s\n", path, n_line, mask ? "mask" : "list",
                                line, note, failure);
                }
        }
        ck_assert_msg(!ferror(f), "reading %s failed", path);

        for (size_t i = 0; i < ELEMENTSOF(tally); i++)
                printf("%s: %u rows, %u follow %s's rule, %u deliberately differ (listed in deviations[])\n",
                       tally[i].tool, tally[i].follow + tally[i].differ, tally[i].follow, tally[i].tool,
                       tally[i].differ);
        printf("%u rows (%u hex masks), %u failed\n", n_rows, n_masks, n_failed);

        for (size_t i = 0; i < ELEMENTSOF(deviations); i++)
                ck_assert_msg(
                        deviations[i].hits > 0, "deviation for \"%s\" (upstream %s) matches no corpus row",
                        deviations[i].input, deviations[i].upstream);
        ck_assert_msg(n_rows > 0 && n_masks > 0, "%s has no list or no mask rows", path);
        ck_assert_msg(n_failed == 0, "%u corpus rows failed (see above)", n_failed);
}
END_TEST

/* ---- error offsets ---- */

typedef struct ErrorCase {
        const char *input;
        bool mask;
        int error;
        size_t offset;
        const char *reason; /* a substring of the reason */
} ErrorCase;

static const ErrorCase error_cases[] = {
        {"0-3x", false, -EINVAL, 3, "unexpected character"},
        {"x", false, -EINVAL, 0, "expected a CPU number"},
        {"0-", false, -EINVAL, 2, "after '-'"},
        {"0-\n", false, -EINVAL, 2, "after '-'"},
        {"-1", false, -EINVAL, 0, "expected a CPU number"},
        {"+1", false, -EINVAL, 0, "expected a CPU number"},
        {"1-+2", false, -EINVAL, 2, "after '-'"},
        {"0-3 x", false, -EINVAL, 4, "expected a CPU number"},
        {"0,,1a", false, -EINVAL, 4, "unexpected character"},
        {"10-1", false, -EINVAL, 3, "lower than its start"},
        {"5:2", false, -EINVAL, 1, "needs a range"},
        {"0-31:", false, -EINVAL, 5, "stride"},
        {"0-31:0", false, -EINVAL, 5, "stride must be at least 1"},
        {"0-31:0/", false, -EINVAL, 7, "group size after"},
        {"0-31:1/0", false, -EINVAL, 7, "group size must be at least 1"},
        {"0-31:10/1", false, -EINVAL, 5, "exceed the group size"},
        {"0-31:1/2x", false, -EINVAL, 8, "unexpected character"},
        {"0-31:1/2/3", false, -EINVAL, 8, "unexpected character"},
        {"0-31:2:3", false, -EINVAL, 6, "unexpected character"},
        {"8192", false, -ERANGE, 0, "too large"},
        {"0-8192", false, -ERANGE, 2, "too large"},
        {"1,99999999999999999999999999", false, -ERANGE, 2, "too large"},
        {"0-4294967296", false, -ERANGE, 2, "too large"},           /* 2^32: wraps to 0 in 32 bits */
        {"0-18446744073709551617", false, -ERANGE, 2, "too large"}, /* 2^64 + 1 */
        {"0-3:18446744073709551617", false, -ERANGE, 4, "too large"},
        {"0-7:1/99999", false, -ERANGE, 6, "too large"},
        {"N", false, -EINVAL, 0, "\"N\""},
        {"0-N", false, -EINVAL, 2, "\"N\""},
        {"all", false, -EINVAL, 0, "\"all\""},
        {" ALL", false, -EINVAL, 1, "\"all\""},
        {"alll", false, -EINVAL, 0, "expected a CPU number"},
        {"0-3\n4", false, -EINVAL, 4, "after the end of the line"},
        {"0;1", false, -EINVAL, 1, "unexpected character"},
        {"0\t1\r", false, -EINVAL, 3, "unexpected character"},
        {"1,2,3abc,4", false, -EINVAL, 5, "unexpected character"},
        {"0 1 2 3 \"4 5 6 7 ", false, -EINVAL, 8, "expected a CPU number"},
        {"0x3", false, -EINVAL, 1, "unexpected character"},
        {"fg", true, -EINVAL, 1, "invalid character"},
        {"0x", true, -EINVAL, 2, "after \"0x\""},
        {" 0xzz", true, -EINVAL, 3, "after \"0x\""},
        {"ff,0x1", true, -EINVAL, 4, "only allowed at the start"},
        {"123456789,0", true, -EINVAL, 0, "wider than 32 bits"},
        {"0,123456789", true, -EINVAL, 2, "wider than 32 bits"},
        {"0, 1 ,123456789", true, -EINVAL, 6, "wider than 32 bits"},
        {"ff\nff", true, -EINVAL, 3, "after the end of the line"},
        {"ff;", true, -EINVAL, 2, "invalid character"},
        {"-1", true, -EINVAL, 0, "invalid character"},
        {"deadbeef,g", true, -EINVAL, 9, "invalid character"},
        {"0-3", true, -EINVAL, 1, "invalid character"},
};

static void assert_error(const char *input, bool mask, int error, size_t offset, const char *reason_part) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        size_t got_offset = 4242;
        const char *reason = NULL;
        int r;

        /* *ret must be left untouched on error. */
        ck_assert_int_eq(cpuset_add_range(&s, 3, 70), 0);
        r = mask ? cpuset_parse_mask_full(input, &s, &got_offset, &reason)
                 : cpuset_parse_list_full(input, &s, &got_offset, &reason);
        ck_assert_msg(
                r == error && got_offset == offset, "%s \"%s\": expected %d at %zu, got %d at %zu (%s)",
                mask ? "mask" : "list", input, error, offset, r, got_offset, strna(reason));
        ck_assert_msg(
                reason && strstr(reason, reason_part), "%s \"%s\": reason \"%s\" lacks \"%s\"",
                mask ? "mask" : "list", input, strna(reason), reason_part);
        ck_assert_int_eq(cpuset_count(&s), 68);
        ck_assert(cpuset_contains(&s, 3) && cpuset_contains(&s, 70));

        /* The short forms give the same error and offset. */
        got_offset = 4242;
        r = mask ? cpuset_parse_mask(input, NULL, &got_offset) : cpuset_parse_list(input, NULL, &got_offset);
        ck_assert_int_eq(r, error);
        ck_assert_uint_eq(got_offset, offset);
}

START_TEST(test_error_offsets) {
        for (size_t i = 0; i < ELEMENTSOF(error_cases); i++) {
                const ErrorCase *c = &error_cases[i];
                assert_error(c->input, c->mask, c->error, c->offset, c->reason);
        }
}
END_TEST

START_TEST(test_mask_range) {
        _cleanup_free_ char *high = NULL, *groups = NULL, *zeros = NULL, *zero_groups = NULL;
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        size_t offset = SIZE_MAX;

        /* Bit 8192 in a single long group: the digit holding it is named. */
        high = malloc(1 + 2048 + 1);
        ck_assert_ptr_nonnull(high);
        high[0] = '1';
        memset(high + 1, '0', 2048);
        high[2049] = '\0';
        assert_error(high, true, -ERANGE, 0, "beyond 8191");
        /* ...but bit 8191 is fine: "8" followed by 2047 zeros. */
        high[0] = '0';
        high[1] = '8';
        ck_assert_int_eq(cpuset_parse_mask(high, &s, &offset), 0);
        ck_assert_uint_eq(cpuset_count(&s), 1);
        ck_assert_int_eq(cpuset_last(&s), 8191);

        /* 257 comma-separated words: word 256 is CPUs 8192-8223. */
        groups = malloc(2 + 256 * 9 + 1);
        ck_assert_ptr_nonnull(groups);
        strcpy(groups, "1");
        for (unsigned i = 0; i < 256; i++)
                strcat(groups, ",00000000");
        assert_error(groups, true, -ERANGE, 0, "beyond 8191");
        groups[0] = '0';
        groups[strlen(groups) - 1] = '5';
        ck_assert_int_eq(cpuset_parse_mask(groups, &s, &offset), 0);
        ck_assert_uint_eq(cpuset_count(&s), 2);
        ck_assert(cpuset_contains(&s, 0) && cpuset_contains(&s, 2));

        /* Leading zero digits and zero words beyond the width name no CPU: accepted. */
        zeros = malloc(3000 + 2);
        ck_assert_ptr_nonnull(zeros);
        memset(zeros, '0', 3000);
        strcpy(zeros + 3000, "3");
        ck_assert_int_eq(cpuset_parse_mask(zeros, &s, &offset), 0);
        ck_assert_uint_eq(cpuset_count(&s), 2);
        ck_assert(cpuset_contains(&s, 0) && cpuset_contains(&s, 1));

        zero_groups = malloc(300 * 2 + 2);
        ck_assert_ptr_nonnull(zero_groups);
        zero_groups[0] = '\0';
        for (unsigned i = 0; i < 300; i++)
                strcat(zero_groups, "0,");
        strcat(zero_groups, "8");
        ck_assert_int_eq(cpuset_parse_mask(zero_groups, &s, &offset), 0);
        ck_assert_uint_eq(cpuset_count(&s), 1);
        ck_assert(cpuset_contains(&s, 3));
        ck_assert_uint_eq(offset, SIZE_MAX);
}
END_TEST

/* ---- accepted syntax beyond the corpus ---- */

typedef struct GoodCase {
        const char *input;
        bool mask;
        const char *expected;
} GoodCase;

static const GoodCase good_cases[] = {
        {"0-3,8,10-11", false, "0-3,8,10-11"},
        {"0-15:2", false, "0,2,4,6,8,10,12,14"},
        {"1-15:4", false, "1,5,9,13"},
        {"0-8191:8191", false, "0,8191"},
        {"0-8191:4096/8191", false, "0-4095,8191"},
        {"0-7:0/2,9", false, "9"},
        {"  7,\t 3-4 \n", false, "3-4,7"},
        {"0-3\n\n  \n", false, "0-3"},
        {"0007,00-01", false, "0-1,7"},
        {"8191", false, "8191"},
        {"0-8191", false, "0-8191"},
        {"3,2,1,0", false, "0-3"},
        {"0-3,2-5", false, "0-5"},
        {"0xff,00000000", true, "32-39"},
        {"0XFF", true, "0-7"},
        {" 0x1 ", true, "0"},
        {"ff ff", true, "0-7,32-39"},
        {"1\n", true, "0"},
        {"\n", true, "(empty)"},
        {"0,0,0", true, "(empty)"},
        {"80000000,00000000,00000001", true, "0,95"},
        {"ffffffffffffffff", true, "0-63"},
};

START_TEST(test_good_cases) {
        for (size_t i = 0; i < ELEMENTSOF(good_cases); i++) {
                const GoodCase *c = &good_cases[i];
                _cleanup_free_ char *failure = check_result(c->input, c->mask, c->expected, 0, 0, false);

                ck_assert_msg(!failure, "%s \"%s\": %s", c->mask ? "mask" : "list", c->input, failure);
        }
}
END_TEST

/* ---- format round trips against the naive reference ---- */

START_TEST(test_roundtrip_widths) {
        rng_seed(0x5eed0001);

        for (unsigned width = 1; width <= NCPUS; width++) {
                for (unsigned shape = 0; shape < 3; shape++) {
                        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, back = CPUSET_NULL;
                        _cleanup_free_ char *list = NULL, *mask = NULL, *ref_list = NULL, *ref_mask = NULL;
                        unsigned n32 = (width + 31) / 32;
                        RefSet ref;

                        if (shape == 0)
                                ref_random(&ref, width);
                        else {
                                /* the whole width, or only its highest CPU */
                                memset(&ref, 0, sizeof(ref));
                                for (unsigned i = shape == 1 ? 0 : width - 1; i < width; i++)
                                        ref.bit[i] = true;
                        }
                        set_from_ref(&s, &ref, width);
                        assert_set_is_ref(&s, &ref, width, "built");

                        ck_assert_int_eq(cpuset_format_list(&s, &list), 0);
                        ref_list = ref_format_list(&ref, width);
                        ck_assert_str_eq(list, ref_list);
                        ck_assert_int_eq(cpuset_parse_list(list, &back, NULL), 0);
                        ck_assert(cpuset_equal(&s, &back));

                        ck_assert_int_eq(cpuset_format_mask(&s, width, &mask), 0);
                        ref_mask = ref_format_mask(&ref, n32);
                        ck_assert_str_eq(mask, ref_mask);
                        ck_assert_int_eq(cpuset_parse_mask(mask, &back, NULL), 0);
                        ck_assert(cpuset_equal(&s, &back));
                        assert_set_is_ref(&back, &ref, width, "parsed back");
                }
        }
}
END_TEST

START_TEST(test_format_mask_width) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        char *e = NULL;

        ck_assert_int_eq(cpuset_format_mask(&s, 0, &a), 0);
        ck_assert_str_eq(a, "00000000");
        ck_assert_int_eq(cpuset_format_list(&s, &b), 0);
        ck_assert_str_eq(b, "");

        /* nbits smaller than the set: the set's width wins. */
        ck_assert_int_eq(cpuset_add(&s, 40), 0);
        ck_assert_int_eq(cpuset_format_mask(&s, 2, &c), 0);
        ck_assert_str_eq(c, "00000100,00000000");
        /* nbits larger: padded with zero words. */
        ck_assert_int_eq(cpuset_format_mask(&s, 65, &d), 0);
        ck_assert_str_eq(d, "00000000,00000100,00000000");

        ck_assert_int_eq(cpuset_format_mask(&s, NCPUS + 1, &e), -ERANGE);
        ck_assert_ptr_null(e);
}
END_TEST

/* ---- set algebra ---- */

START_TEST(test_algebra) {
        rng_seed(0x5eed0002);

        for (unsigned iter = 0; iter < 600; iter++) {
                _cleanup_cpuset_ CpuSet a = CPUSET_NULL, b = CPUSET_NULL, x = CPUSET_NULL;
                RefSet ra, rb, rx;
                bool subset = true, intersects = false, equal = true;
                unsigned kind = rng_below(4);

                ref_random(&ra, 1 + rng_below(NCPUS));
                if (kind == 0)
                        /* b ⊆ a */
                        for (unsigned i = 0; i < NCPUS; i++)
                                rb.bit[i] = ra.bit[i] && rng_below(3) != 0;
                else if (kind == 1)
                        rb = ra;
                else
                        ref_random(&rb, 1 + rng_below(NCPUS));
                set_from_ref(&a, &ra, NCPUS);
                set_from_ref(&b, &rb, NCPUS);
                if (kind == 1) {
                        /* Same CPUs, different storage width. */
                        ck_assert_int_eq(cpuset_add(&b, NCPUS - 1), 0);
                        if (!rb.bit[NCPUS - 1])
                                cpuset_remove(&b, NCPUS - 1);
                }

                for (unsigned i = 0; i < NCPUS; i++) {
                        if (rb.bit[i] && !ra.bit[i])
                                subset = false;
                        if (ra.bit[i] && rb.bit[i])
                                intersects = true;
                        if (ra.bit[i] != rb.bit[i])
                                equal = false;
                }
                ck_assert(cpuset_is_subset(&b, &a) == subset);
                ck_assert(cpuset_intersects(&a, &b) == intersects);
                ck_assert(cpuset_intersects(&b, &a) == intersects);
                ck_assert(cpuset_equal(&a, &b) == equal);
                ck_assert(cpuset_equal(&b, &a) == equal);
                ck_assert(cpuset_is_subset(&a, &a));

                ck_assert_int_eq(cpuset_copy(&x, &a), 0);
                ck_assert_int_eq(cpuset_or(&x, &b), 0);
                for (unsigned i = 0; i < NCPUS; i++)
                        rx.bit[i] = ra.bit[i] || rb.bit[i];
                assert_set_is_ref(&x, &rx, NCPUS, "or");
                ck_assert(cpuset_is_subset(&a, &x) && cpuset_is_subset(&b, &x));

                ck_assert_int_eq(cpuset_copy(&x, &a), 0);
                cpuset_and(&x, &b);
                for (unsigned i = 0; i < NCPUS; i++)
                        rx.bit[i] = ra.bit[i] && rb.bit[i];
                assert_set_is_ref(&x, &rx, NCPUS, "and");

                ck_assert_int_eq(cpuset_copy(&x, &a), 0);
                cpuset_andnot(&x, &b);
                for (unsigned i = 0; i < NCPUS; i++)
                        rx.bit[i] = ra.bit[i] && !rb.bit[i];
                assert_set_is_ref(&x, &rx, NCPUS, "andnot");
                ck_assert(!cpuset_intersects(&x, &b));

                /* Iteration visits exactly the reference's CPUs, in order. */
                unsigned expect = 0;
                CPUSET_FOREACH (cpu, &a) {
                        while (expect < NCPUS && !ra.bit[expect])
                                expect++;
                        require(cpu == (int)expect, "iteration gave %d, expected %u", cpu, expect);
                        expect++;
                }
                while (expect < NCPUS && !ra.bit[expect])
                        expect++;
                ck_assert_uint_eq(expect, NCPUS);

                /* Aliasing. */
                ck_assert_int_eq(cpuset_copy(&x, &a), 0);
                ck_assert_int_eq(cpuset_or(&x, &x), 0);
                ck_assert(cpuset_equal(&x, &a));
                cpuset_and(&x, &x);
                ck_assert(cpuset_equal(&x, &a));
                cpuset_andnot(&x, &x);
                ck_assert(cpuset_is_empty(&x));
        }
}
END_TEST

START_TEST(test_basic) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, t = CPUSET_NULL;

        ck_assert(cpuset_is_empty(&s));
        ck_assert_int_eq(cpuset_last(&s), -1);
        ck_assert_int_eq(cpuset_next(&s, -1), -1);
        ck_assert_uint_eq(cpuset_count(&s), 0);
        ck_assert(!cpuset_contains(&s, 0));
        cpuset_remove(&s, 5000); /* no-op on storage that doesn't exist */
        ck_assert(cpuset_equal(&s, &t));
        ck_assert(cpuset_is_subset(&s, &t));
        ck_assert(!cpuset_intersects(&s, &t));

        ck_assert_int_eq(cpuset_add(&s, NCPUS), -ERANGE);
        ck_assert_int_eq(cpuset_add(&s, UINT32_MAX), -ERANGE);
        ck_assert_int_eq(cpuset_add_range(&s, 5, 3), -EINVAL);
        ck_assert_int_eq(cpuset_add_range(&s, 0, NCPUS), -ERANGE);
        ck_assert(cpuset_is_empty(&s));

        ck_assert_int_eq(cpuset_add_range(&s, 63, 64), 0);
        ck_assert_int_eq(cpuset_add_range(&s, 100, 100), 0);
        ck_assert_int_eq(cpuset_add(&s, NCPUS - 1), 0);
        ck_assert_uint_eq(cpuset_count(&s), 4);
        ck_assert_int_eq(cpuset_next(&s, -1), 63);
        ck_assert_int_eq(cpuset_next(&s, 63), 64);
        ck_assert_int_eq(cpuset_next(&s, 64), 100);
        ck_assert_int_eq(cpuset_next(&s, 100), (int)NCPUS - 1);
        ck_assert_int_eq(cpuset_next(&s, (int)NCPUS - 1), -1);
        ck_assert_int_eq(cpuset_next(&s, 1 << 30), -1);
        ck_assert_int_eq(cpuset_last(&s), (int)NCPUS - 1);

        _cleanup_free_ char *str = cpuset_to_string(&s);
        ck_assert_str_eq(str, "63-64,100,8191");

        cpuset_remove(&s, NCPUS - 1);
        ck_assert_int_eq(cpuset_last(&s), 100);
        ck_assert_int_eq(cpuset_add_range(&t, 63, 64), 0);
        ck_assert_int_eq(cpuset_add(&t, 100), 0);
        ck_assert(cpuset_equal(&s, &t)); /* s still has storage for CPU 8191 */

        cpuset_clear(&s);
        ck_assert(cpuset_is_empty(&s));
        ck_assert(cpuset_is_subset(&s, &t));

        /* Parsing replaces the old contents. */
        ck_assert_int_eq(cpuset_parse_list("7", &t, NULL), 0);
        ck_assert_uint_eq(cpuset_count(&t), 1);
        ck_assert(cpuset_contains(&t, 7));
        ck_assert_int_eq(cpuset_parse_list("", &t, NULL), 0);
        ck_assert(cpuset_is_empty(&t));

        cpuset_done(&s);
        cpuset_done(&s);
        ck_assert_uint_eq(s.n_words, 0);
        ck_assert(cpuset_is_empty(&s));
        ck_assert_int_eq(cpuset_last(&s), -1);
        /* Reusable after cpuset_done(). */
        ck_assert_int_eq(cpuset_add(&s, 3), 0);
        ck_assert_uint_eq(cpuset_count(&s), 1);
}
END_TEST

/*
 * Storage: small sets live inside the CpuSet (CPUSET_INLINE_WORDS words), wider ones on the
 * heap. Every transition keeps the contents: growing out of the inline words, replacing a wide
 * set by a narrow one and back, copying onto itself, moving by struct assignment, and the
 * algebra between an inline and a heap set (checked against the reference, bit by bit).
 */
START_TEST(test_storage_transitions) {
        const unsigned inline_cpus = CPUSET_INLINE_WORDS * (unsigned)(sizeof(unsigned long) * 8);
        const unsigned edges[] = {0, 1, inline_cpus - 1, inline_cpus, inline_cpus + 1, 1000, NCPUS - 1};

        rng_seed(0x5eed0004);
        for (size_t i = 0; i < ELEMENTSOF(edges); i++)
                for (size_t j = 0; j < ELEMENTSOF(edges); j++) {
                        _cleanup_cpuset_ CpuSet a = CPUSET_NULL, b = CPUSET_NULL, moved = CPUSET_NULL;
                        RefSet ra, rb, rx;
                        unsigned wa = edges[i] + 1, wb = edges[j] + 1;

                        /* Grown one CPU at a time across the inline boundary. */
                        ref_random(&ra, wa);
                        ra.bit[edges[i]] = true;
                        set_from_ref(&a, &ra, wa);
                        assert_set_is_ref(&a, &ra, NCPUS, "grown");

                        /* Replaced by a parse of another width (wide -> narrow and back). */
                        ref_random(&rb, wb);
                        rb.bit[edges[j]] = true;
                        {
                                _cleanup_free_ char *text = ref_format_list(&rb, wb);
                                ck_assert_int_eq(cpuset_parse_list(text, &a, NULL), 0);
                                assert_set_is_ref(&a, &rb, NCPUS, "replaced by a parse");
                        }
                        set_from_ref(&a, &ra, wa);

                        /* Copies, also onto itself and onto a set of another width. */
                        set_from_ref(&b, &rb, wb);
                        ck_assert_int_eq(cpuset_copy(&a, &a), 0);
                        assert_set_is_ref(&a, &ra, NCPUS, "copied onto itself");
                        ck_assert_int_eq(cpuset_copy(&b, &a), 0);
                        assert_set_is_ref(&b, &ra, NCPUS, "copied");
                        set_from_ref(&b, &rb, wb);

                        /* A move by struct assignment keeps the contents. */
                        ck_assert_int_eq(cpuset_copy(&moved, &a), 0);
                        {
                                CpuSet tmp = moved;
                                moved = CPUSET_NULL;
                                assert_set_is_ref(&tmp, &ra, NCPUS, "moved");
                                moved = tmp;
                        }

                        /* Algebra between the two widths. */
                        ck_assert_int_eq(cpuset_or(&a, &b), 0);
                        for (unsigned k = 0; k < NCPUS; k++)
                                rx.bit[k] = ra.bit[k] || rb.bit[k];
                        assert_set_is_ref(&a, &rx, NCPUS, "union");
                        cpuset_and(&a, &b);
                        assert_set_is_ref(&a, &rb, NCPUS, "intersection with a subset");
                        ck_assert(cpuset_equal(&a, &b));
                        cpuset_andnot(&a, &b);
                        ck_assert(cpuset_is_empty(&a));
                        ck_assert(cpuset_equal(&moved, &moved));
                        assert_set_is_ref(&moved, &ra, NCPUS, "the moved set afterwards");
                }
}
END_TEST

/* ---- glibc cpu_set_t ---- */

START_TEST(test_cpu_set_t) {
        rng_seed(0x5eed0003);

        for (unsigned iter = 0; iter < 300; iter++) {
                _cleanup_cpuset_ CpuSet s = CPUSET_NULL, back = CPUSET_NULL;
                cpu_set_t *c = NULL;
                size_t size = 0;
                unsigned width = iter == 0 ? 0 : 1 + rng_below(NCPUS);
                int last = -1;
                RefSet ref;

                ref_random(&ref, width);
                set_from_ref(&s, &ref, NCPUS);
                for (unsigned i = 0; i < NCPUS; i++)
                        if (ref.bit[i])
                                last = (int)i;

                ck_assert_int_eq(cpuset_to_cpu_set(&s, &c, &size), 0);
                ck_assert_uint_eq(size, CPU_ALLOC_SIZE(last < 0 ? 1 : last + 1));
                ck_assert_int_eq(CPU_COUNT_S(size, c), (int)ref_count(&ref, NCPUS));
                for (unsigned i = 0; i < size * 8; i++)
                        require(!!CPU_ISSET_S(i, size, c) == ref.bit[i], "CPU %u", i);

                ck_assert_int_eq(cpuset_from_cpu_set(c, size, &back), 0);
                ck_assert(cpuset_equal(&s, &back));
                CPU_FREE(c);
        }

        /* A fixed-size cpu_set_t as glibc declares it. */
        cpu_set_t fixed;
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        CPU_ZERO(&fixed);
        CPU_SET(0, &fixed);
        CPU_SET(65, &fixed);
        CPU_SET(CPU_SETSIZE - 1, &fixed);
        ck_assert_int_eq(cpuset_from_cpu_set(&fixed, sizeof(fixed), &s), 0);
        _cleanup_free_ char *str = cpuset_to_string(&s);
        ck_assert_str_eq(str, "0,65,1023");

        /* CPUs the set cannot hold, and sizes that are not whole words. */
        cpu_set_t *big = CPU_ALLOC(2 * NCPUS);
        size_t big_size = CPU_ALLOC_SIZE(2 * NCPUS);
        ck_assert_ptr_nonnull(big);
        CPU_ZERO_S(big_size, big);
        CPU_SET_S(NCPUS - 1, big_size, big);
        ck_assert_int_eq(cpuset_from_cpu_set(big, big_size, &s), 0);
        ck_assert_int_eq(cpuset_last(&s), (int)NCPUS - 1);
        CPU_SET_S(NCPUS, big_size, big);
        ck_assert_int_eq(cpuset_from_cpu_set(big, big_size, &s), -ERANGE);
        ck_assert_int_eq(cpuset_last(&s), (int)NCPUS - 1);
        ck_assert_uint_eq(cpuset_count(&s), 1);
        ck_assert_int_eq(cpuset_from_cpu_set(big, 3, &s), -EINVAL);
        CPU_FREE(big);
}
END_TEST

/* ---- the kernel's own cpu-lists and masks (read only) ---- */

static char *read_line(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t n = 0;

        if (!f)
                return NULL;
        if (getline(&line, &n, f) < 0)
                return mfree(line);
        return line;
}

static char *status_field(const char *field) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        _cleanup_free_ char *line = NULL;
        size_t n = 0, len = strlen(field);

        ck_assert_ptr_nonnull(f);
        while (getline(&line, &n, f) >= 0)
                if (strncmp(line, field, len) == 0 && line[len] == ':')
                        return strdup(line + len + 1); /* with the TAB and the newline: parsers take both */
        ck_abort_msg("no %s in /proc/self/status", field);
        return NULL;
}

/* The kernel's cpu-list text equals our canonical format, modulo the newline. */
static void assert_formats_as_kernel(const CpuSet *s, const char *kernel_text) {
        _cleanup_free_ char *ours = NULL, *theirs = strdup(kernel_text + strspn(kernel_text, " \t"));

        ck_assert_ptr_nonnull(theirs);
        theirs[strcspn(theirs, "\n")] = '\0';
        ck_assert_int_eq(cpuset_format_list(s, &ours), 0);
        ck_assert_str_eq(ours, theirs);
}

START_TEST(test_kernel_text) {
        _cleanup_cpuset_ CpuSet list = CPUSET_NULL, mask = CPUSET_NULL, affinity = CPUSET_NULL,
                                online = CPUSET_NULL, possible = CPUSET_NULL;
        _cleanup_free_ char *allowed_list = status_field("Cpus_allowed_list"),
                            *allowed = status_field("Cpus_allowed");
        _cleanup_free_ char *mems_list = status_field("Mems_allowed_list"),
                            *mems = status_field("Mems_allowed");
        _cleanup_free_ char *online_text = read_line("/sys/devices/system/cpu/online");
        _cleanup_free_ char *possible_text = read_line("/sys/devices/system/cpu/possible");
        cpu_set_t *c = CPU_ALLOC(NCPUS);
        size_t size = CPU_ALLOC_SIZE(NCPUS);
        unsigned n_irqs = 0;

        /* Cpus_allowed (mask) and Cpus_allowed_list describe the same set as sched_getaffinity(). */
        ck_assert_int_eq(cpuset_parse_list(allowed_list, &list, NULL), 0);
        ck_assert_int_eq(cpuset_parse_mask(allowed, &mask, NULL), 0);
        ck_assert(cpuset_equal(&list, &mask));
        ck_assert(!cpuset_is_empty(&list));
        assert_formats_as_kernel(&list, allowed_list);

        ck_assert_ptr_nonnull(c);
        CPU_ZERO_S(size, c);
        ck_assert_int_eq(sched_getaffinity(0, size, c), 0);
        ck_assert_int_eq(cpuset_from_cpu_set(c, size, &affinity), 0);
        CPU_FREE(c);
        ck_assert(cpuset_equal(&affinity, &list));

        /* NUMA node sets use the same text forms. */
        ck_assert_int_eq(cpuset_parse_list(mems_list, &list, NULL), 0);
        ck_assert_int_eq(cpuset_parse_mask(mems, &mask, NULL), 0);
        ck_assert(cpuset_equal(&list, &mask));
        assert_formats_as_kernel(&list, mems_list);

        ck_assert_ptr_nonnull(online_text);
        ck_assert_ptr_nonnull(possible_text);
        ck_assert_int_eq(cpuset_parse_list(online_text, &online, NULL), 0);
        ck_assert_int_eq(cpuset_parse_list(possible_text, &possible, NULL), 0);
        assert_formats_as_kernel(&online, online_text);
        ck_assert(cpuset_is_subset(&online, &possible));
        ck_assert(cpuset_is_subset(&affinity, &possible));

        /* Every IRQ's smp_affinity and smp_affinity_list agree. */
        _cleanup_closedir_ DIR *d = opendir("/proc/irq");
        ck_assert_ptr_nonnull(d);
        for (struct dirent *de; (de = readdir(d));) {
                _cleanup_free_ char *p1 = NULL, *p2 = NULL, *t1 = NULL, *t2 = NULL;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                ck_assert(asprintf(&p1, "/proc/irq/%s/smp_affinity", de->d_name) >= 0);
                ck_assert(asprintf(&p2, "/proc/irq/%s/smp_affinity_list", de->d_name) >= 0);
                t1 = read_line(p1);
                t2 = read_line(p2);
                if (!t1 || !t2)
                        continue; /* the IRQ went away */
                ck_assert_msg(cpuset_parse_mask(t1, &mask, NULL) == 0, "%s: \"%s\"", p1, t1);
                ck_assert_msg(cpuset_parse_list(t2, &list, NULL) == 0, "%s: \"%s\"", p2, t2);
                ck_assert_msg(cpuset_equal(&mask, &list), "%s and %s differ", p1, p2);
                assert_formats_as_kernel(&list, t2);
                n_irqs++;
        }
        printf("checked %u IRQs' smp_affinity against smp_affinity_list\n", n_irqs);
}
END_TEST

static Suite *cpuset_suite(void) {
        Suite *s = suite_create("cpuset");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_basic);
        tcase_add_test(tc, test_storage_transitions);
        tcase_add_test(tc, test_corpus);
        tcase_add_test(tc, test_error_offsets);
        tcase_add_test(tc, test_mask_range);
        tcase_add_test(tc, test_good_cases);
        tcase_add_test(tc, test_roundtrip_widths);
        tcase_add_test(tc, test_format_mask_width);
        tcase_add_test(tc, test_algebra);
        tcase_add_test(tc, test_cpu_set_t);
        tcase_add_test(tc, test_kernel_text);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(cpuset_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
