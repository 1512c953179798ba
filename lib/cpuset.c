/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * CPU and NUMA-node sets as growable bitmaps of unsigned long words (bit i of the set = bit
 * i % BITS_PER_WORD of word i / BITS_PER_WORD, the layout of the kernel's cpumask and of glibc's
 * cpu_set_t), and their cpu-list and hex-mask text forms. The grammar is in docs/cpu-lists.md.
 * Parsers work on a fixed CPUSET_MAX_CPUS-bit bitmap on the stack and copy it out only on
 * success, so *ret is never left half-written.
 *
 * Storage: up to CPUSET_INLINE_WORDS words live in the CpuSet itself (no allocation: the daemon
 * keeps a few sets per tracked thread, and machines up to 256 CPUs are the common case); wider
 * sets move to the heap. Inline words beyond n_words are always zero, so growing within the
 * inline words only raises n_words.
 */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cpuset.h"
#include "macro.h"
#include "util.h"

#define BITS_PER_WORD (sizeof(unsigned long) * CHAR_BIT)
#define MAX_WORDS     (CPUSET_MAX_CPUS / BITS_PER_WORD)

_Static_assert(CPUSET_MAX_CPUS % 64 == 0, "CPUSET_MAX_CPUS must be a multiple of 64");
_Static_assert(CPUSET_MAX_CPUS == 8192, "update the \"number too large\" message");

/* ---- storage ---- */

static bool set_is_inline(const CpuSet *s) {
        return s->n_words <= CPUSET_INLINE_WORDS;
}

static unsigned long *set_words(CpuSet *s) {
        return set_is_inline(s) ? s->w.inl : s->w.heap;
}

static const unsigned long *set_cwords(const CpuSet *s) {
        return set_is_inline(s) ? s->w.inl : s->w.heap;
}

/* ---- bitmap helpers, word at a time ---- */

/* Number of words up to and including the last non-zero one. */
static size_t words_used(const unsigned long *bits, size_t n_words) {
        while (n_words > 0 && bits[n_words - 1] == 0)
                n_words--;
        return n_words;
}

/* Sets bits first..last inclusive; the caller made sure the words exist. */
static void bits_set_range(unsigned long *bits, size_t first, size_t last) {
        size_t i = first / BITS_PER_WORD, j = last / BITS_PER_WORD;
        unsigned long head = ~0UL << (first % BITS_PER_WORD);
        unsigned long tail = ~0UL >> (BITS_PER_WORD - 1 - last % BITS_PER_WORD);

        if (i == j) {
                bits[i] |= head & tail;
                return;
        }
        bits[i++] |= head;
        while (i < j)
                bits[i++] = ~0UL;
        bits[j] |= tail;
}

/* First set bit at or after from, or SIZE_MAX. */
static size_t bits_next_set(const unsigned long *bits, size_t n_words, size_t from) {
        size_t i = from / BITS_PER_WORD;
        unsigned long w;

        if (i >= n_words)
                return SIZE_MAX;
        w = bits[i] & (~0UL << (from % BITS_PER_WORD));
        for (;;) {
                if (w)
                        return i * BITS_PER_WORD + (size_t)__builtin_ctzl(w);
                if (++i >= n_words)
                        return SIZE_MAX;
                w = bits[i];
        }
}

/* First clear bit at or after from (bits beyond the array are clear). */
static size_t bits_next_clear(const unsigned long *bits, size_t n_words, size_t from) {
        size_t i = from / BITS_PER_WORD;
        unsigned long w;

        if (i >= n_words)
                return from;
        w = ~bits[i] & (~0UL << (from % BITS_PER_WORD));
        for (;;) {
                if (w)
                        return i * BITS_PER_WORD + (size_t)__builtin_ctzl(w);
                if (++i >= n_words)
                        return n_words * BITS_PER_WORD;
                w = ~bits[i];
        }
}

/* Grows s to at least n_words words, zero-filled. */
static int cpuset_grow(CpuSet *s, size_t n_words) {
        unsigned long *p;

        if (s->n_words >= n_words)
                return 0;
        if (n_words <= CPUSET_INLINE_WORDS) {
                s->n_words = n_words; /* the inline words beyond the old width are zero */
                return 0;
        }
        if (set_is_inline(s)) {
                p = malloc(n_words * sizeof(unsigned long));
                if (!p)
                        return -ENOMEM;
                memcpy(p, s->w.inl, s->n_words * sizeof(unsigned long));
        } else {
                p = realloc(s->w.heap, n_words * sizeof(unsigned long));
                if (!p)
                        return -ENOMEM;
        }
        memset(p + s->n_words, 0, (n_words - s->n_words) * sizeof(unsigned long));
        s->w.heap = p;
        s->n_words = n_words;
        return 0;
}

/* Replaces the contents of *ret by the first n_words of bits (trailing zero words dropped).
 * bits may point into *ret. */
static int cpuset_assign(CpuSet *ret, const unsigned long *bits, size_t n_words) {
        CpuSet n = CPUSET_NULL;

        n_words = words_used(bits, n_words);
        if (n_words > CPUSET_INLINE_WORDS) {
                n.w.heap = malloc(n_words * sizeof(unsigned long));
                if (!n.w.heap)
                        return -ENOMEM;
                memcpy(n.w.heap, bits, n_words * sizeof(unsigned long));
        } else if (n_words > 0)
                memcpy(n.w.inl, bits, n_words * sizeof(unsigned long));
        n.n_words = n_words;
        cpuset_done(ret);
        *ret = n;
        return 0;
}

/* ---- basic operations ---- */

void cpuset_done(CpuSet *s) {
        if (!s)
                return;
        if (!set_is_inline(s))
                free(s->w.heap);
        *s = CPUSET_NULL;
}

int cpuset_add(CpuSet *s, unsigned cpu) {
        int r;

        assert(s);
        if (cpu >= CPUSET_MAX_CPUS)
                return -ERANGE;
        r = cpuset_grow(s, cpu / BITS_PER_WORD + 1);
        if (r < 0)
                return r;
        set_words(s)[cpu / BITS_PER_WORD] |= 1UL << (cpu % BITS_PER_WORD);
        return 0;
}

int cpuset_add_range(CpuSet *s, unsigned first, unsigned last) {
        int r;

        assert(s);
        if (first >= CPUSET_MAX_CPUS || last >= CPUSET_MAX_CPUS)
                return -ERANGE;
        if (first > last)
                return -EINVAL;
        r = cpuset_grow(s, last / BITS_PER_WORD + 1);
        if (r < 0)
                return r;
        bits_set_range(set_words(s), first, last);
        return 0;
}

void cpuset_remove(CpuSet *s, unsigned cpu) {
        assert(s);
        if (cpu / BITS_PER_WORD < s->n_words)
                set_words(s)[cpu / BITS_PER_WORD] &= ~(1UL << (cpu % BITS_PER_WORD));
}

void cpuset_clear(CpuSet *s) {
        assert(s);
        if (s->n_words > 0)
                memset(set_words(s), 0, s->n_words * sizeof(unsigned long));
}

bool cpuset_contains(const CpuSet *s, unsigned cpu) {
        assert(s);
        return cpu / BITS_PER_WORD < s->n_words &&
                (set_cwords(s)[cpu / BITS_PER_WORD] >> (cpu % BITS_PER_WORD)) & 1;
}

unsigned cpuset_count(const CpuSet *s) {
        const unsigned long *w;
        unsigned n = 0;

        assert(s);
        w = set_cwords(s);
        for (size_t i = 0; i < s->n_words; i++)
                n += (unsigned)__builtin_popcountl(w[i]);
        return n;
}

bool cpuset_is_empty(const CpuSet *s) {
        assert(s);
        return words_used(set_cwords(s), s->n_words) == 0;
}

int cpuset_last(const CpuSet *s) {
        const unsigned long *w;
        size_t n;

        assert(s);
        w = set_cwords(s);
        n = words_used(w, s->n_words);
        if (n == 0)
                return -1;
        return (int)((n - 1) * BITS_PER_WORD + BITS_PER_WORD - 1 - (size_t)__builtin_clzl(w[n - 1]));
}

int cpuset_next(const CpuSet *s, int prev) {
        size_t i;

        assert(s);
        i = bits_next_set(set_cwords(s), s->n_words, prev < 0 ? 0 : (size_t)prev + 1);
        return i == SIZE_MAX ? -1 : (int)i;
}

/* ---- set algebra ---- */

int cpuset_copy(CpuSet *dst, const CpuSet *src) {
        assert(dst);
        assert(src);
        if (dst == src)
                return 0;
        return cpuset_assign(dst, set_cwords(src), src->n_words);
}

int cpuset_or(CpuSet *s, const CpuSet *o) {
        unsigned long *sw;
        const unsigned long *ow;
        size_t n;
        int r;

        assert(s);
        assert(o);
        if (s == o)
                return 0;
        n = words_used(set_cwords(o), o->n_words);
        r = cpuset_grow(s, n);
        if (r < 0)
                return r;
        sw = set_words(s);
        ow = set_cwords(o);
        for (size_t i = 0; i < n; i++)
                sw[i] |= ow[i];
        return 0;
}

void cpuset_and(CpuSet *s, const CpuSet *o) {
        unsigned long *sw;
        const unsigned long *ow;

        assert(s);
        assert(o);
        sw = set_words(s);
        ow = set_cwords(o);
        for (size_t i = 0; i < s->n_words; i++)
                sw[i] &= i < o->n_words ? ow[i] : 0;
}

void cpuset_andnot(CpuSet *s, const CpuSet *o) {
        unsigned long *sw;
        const unsigned long *ow;
        size_t n;

        assert(s);
        assert(o);
        n = MIN(s->n_words, o->n_words);
        if (s == o) {
                cpuset_clear(s);
                return;
        }
        sw = set_words(s);
        ow = set_cwords(o);
        for (size_t i = 0; i < n; i++)
                sw[i] &= ~ow[i];
}

bool cpuset_equal(const CpuSet *a, const CpuSet *b) {
        const unsigned long *aw, *bw;
        size_t na, nb;

        assert(a);
        assert(b);
        aw = set_cwords(a);
        bw = set_cwords(b);
        na = words_used(aw, a->n_words);
        nb = words_used(bw, b->n_words);
        return na == nb && (na == 0 || memcmp(aw, bw, na * sizeof(unsigned long)) == 0);
}

bool cpuset_is_subset(const CpuSet *a, const CpuSet *b) {
        const unsigned long *aw, *bw;

        assert(a);
        assert(b);
        aw = set_cwords(a);
        bw = set_cwords(b);
        for (size_t i = 0; i < a->n_words; i++)
                if (aw[i] & ~(i < b->n_words ? bw[i] : 0))
                        return false;
        return true;
}

bool cpuset_intersects(const CpuSet *a, const CpuSet *b) {
        const unsigned long *aw, *bw;
        size_t n;

        assert(a);
        assert(b);
        aw = set_cwords(a);
        bw = set_cwords(b);
        n = MIN(a->n_words, b->n_words);
        for (size_t i = 0; i < n; i++)
                if (aw[i] & bw[i])
                        return true;
        return false;
}

/* ---- parsing ---- */

typedef struct ParseError {
        size_t offset;
        const char *reason;
} ParseError;

static int parse_fail(ParseError *e, size_t offset, int error, const char *reason) {
        e->offset = offset;
        e->reason = reason;
        return error;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_alnum(char c) {
        return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The text is one line: after its newline only blanks and further newlines may follow. */
static int parse_line_end(const char *s, size_t i, ParseError *e) {
        for (; s[i]; i++)
                if (!is_blank(s[i]) && s[i] != '\n')
                        return parse_fail(e, i, -EINVAL, "unexpected text after the end of the line");
        return 0;
}

/*
 * A decimal number < CPUSET_MAX_CPUS at s + *i; advances *i past it. Digits beyond the limit are
 * consumed without accumulating, so arbitrarily long numbers cannot overflow.
 */
static int parse_number(const char *s, size_t *i, unsigned *ret, const char *expected, ParseError *e) {
        size_t start = *i, p = start;
        unsigned v = 0;
        bool too_large = false;

        if (s[p] == 'N')
                return parse_fail(
                        e, p, -EINVAL,
                        "\"N\" (the kernel's last bit) is not supported: it depends on the bitmap's width, "
                        "write the CPU number");
        if (!is_digit(s[p]))
                return parse_fail(e, p, -EINVAL, expected);
        for (; is_digit(s[p]); p++) {
                if (too_large)
                        continue;
                v = v * 10 + (unsigned)(s[p] - '0');
                if (v >= CPUSET_MAX_CPUS)
                        too_large = true;
        }
        if (too_large)
                return parse_fail(e, start, -ERANGE, "number too large (CPU numbers go up to 8191)");
        *i = p;
        *ret = v;
        return 0;
}

/*
 * One element at s + *i: "A", "A-B", "A-B:STRIDE" (util-linux) or "A-B:USED/GROUP" (kernel).
 * Sets its CPUs in bits and advances *i to the separator, newline or NUL that ends it.
 */
static int parse_list_element(const char *s, size_t *i, unsigned long *bits, ParseError *e) {
        size_t p = *i, pos;
        unsigned first, last, used = 0, group = 0;
        int r;

        if (strncasecmp(s + p, "all", 3) == 0 && !is_alnum(s[p + 3]))
                return parse_fail(
                        e, p, -EINVAL,
                        "\"all\" is not supported: it depends on the number of CPUs, write the range "
                        "(e.g. \"0-63\")");

        r = parse_number(s, &p, &first, "expected a CPU number", e);
        if (r < 0)
                return r;
        last = first;

        if (s[p] == '-') {
                p++;
                pos = p;
                r = parse_number(s, &p, &last, "expected a CPU number after '-'", e);
                if (r < 0)
                        return r;
                if (last < first)
                        return parse_fail(e, pos, -EINVAL, "range end is lower than its start");

                if (s[p] == ':') {
                        unsigned x;

                        p++;
                        pos = p;
                        r = parse_number(
                                s, &p, &x,
                                "expected a stride (\"A-B:STRIDE\") or \"A-B:USED/GROUP\" after ':'", e);
                        if (r < 0)
                                return r;
                        if (s[p] == '/') {
                                size_t gpos;

                                p++;
                                gpos = p;
                                r = parse_number(s, &p, &group, "expected a group size after '/'", e);
                                if (r < 0)
                                        return r;
                                if (group == 0)
                                        return parse_fail(e, gpos, -EINVAL, "group size must be at least 1");
                                if (x > group)
                                        return parse_fail(
                                                e, pos, -EINVAL,
                                                "CPUs used per group exceed the group size");
                                used = x;
                        } else {
                                if (x == 0)
                                        return parse_fail(e, pos, -EINVAL, "stride must be at least 1");
                                used = 1;
                                group = x;
                        }
                }
        } else if (s[p] == ':')
                return parse_fail(e, p, -EINVAL, "a stride needs a range: write \"FIRST-LAST:STRIDE\"");

        if (s[p] != '\0' && s[p] != ',' && s[p] != '\n' && !is_blank(s[p]))
                return parse_fail(e, p, -EINVAL, "unexpected character (separate CPUs with ',' or blanks)");

        if (group == 0)
                bits_set_range(bits, first, last);
        else if (used > 0)
                /* The kernel's bitmap_set_region(): the first 'used' CPUs of every group. */
                for (unsigned start = first; start <= last; start += group)
                        bits_set_range(bits, start, MIN(last, start + used - 1));

        *i = p;
        return 0;
}

static int parse_list(const char *s, unsigned long *bits, ParseError *e) {
        size_t i = 0;
        int r;

        for (;;) {
                while (is_blank(s[i]) || s[i] == ',')
                        i++;
                if (s[i] == '\0')
                        return 0;
                if (s[i] == '\n')
                        return parse_line_end(s, i + 1, e);
                r = parse_list_element(s, &i, bits, e);
                if (r < 0)
                        return r;
        }
}

#define MASK_GROUP_TOO_WIDE "group wider than 32 bits (more than 8 hex digits between commas)"

/*
 * Pass 1 checks the characters and counts the groups (runs of hex digits between commas or
 * blanks); pass 2, knowing which 32-bit word each group is, sets the bits. A mask of a single
 * group may be of any length (taskset's "0x100200400800"); with several groups each is one
 * 32-bit word, as the kernel writes them.
 */
static int parse_mask(const char *s, unsigned long *bits, ParseError *e) {
        size_t i, end, n_groups = 0, group_start = 0, group_len = 0, first_wide = SIZE_MAX,
                       prefix = SIZE_MAX;
        bool in_group = false;
        int r;

        for (i = 0; s[i] && s[i] != '\n'; i++) {
                char c = s[i];

                if (is_blank(c) || c == ',') {
                        in_group = false;
                        continue;
                }
                if (!in_group && n_groups == 0 && prefix == SIZE_MAX && c == '0' &&
                    (s[i + 1] == 'x' || s[i + 1] == 'X')) {
                        prefix = i;
                        i++;
                        if (hex_digit_value(s[i + 1]) < 0)
                                return parse_fail(e, i + 1, -EINVAL, "expected hex digits after \"0x\"");
                        continue;
                }
                if (hex_digit_value(c) < 0)
                        return parse_fail(
                                e, i, -EINVAL,
                                c == 'x' || c == 'X' ? "\"0x\" is only allowed at the start of the mask"
                                                     : "invalid character in hex mask (expected hex digits, "
                                                       "',' or blanks)");
                if (!in_group) {
                        in_group = true;
                        group_start = i;
                        group_len = 0;
                        if (++n_groups == 2 && first_wide != SIZE_MAX)
                                return parse_fail(e, first_wide, -EINVAL, MASK_GROUP_TOO_WIDE);
                }
                if (++group_len == 9) {
                        if (n_groups >= 2)
                                return parse_fail(e, group_start, -EINVAL, MASK_GROUP_TOO_WIDE);
                        first_wide = group_start;
                }
        }
        end = i;
        if (s[end] == '\n') {
                r = parse_line_end(s, end + 1, e);
                if (r < 0)
                        return r;
        }

        /* Pass 2: group g (0 = leftmost) is 32-bit word n_groups - 1 - g; a lone group starts at bit 0. */
        for (size_t g = 0, p = 0; g < n_groups; g++) {
                size_t start, len, base;

                while (is_blank(s[p]) || s[p] == ',')
                        p++;
                if (p == prefix)
                        p += 2;
                start = p;
                while (p < end && hex_digit_value(s[p]) >= 0)
                        p++;
                len = p - start;
                base = n_groups == 1 ? 0 : (n_groups - 1 - g) * 32;

                for (size_t j = 0; j < len; j++) {
                        unsigned long v = (unsigned long)hex_digit_value(s[start + j]);
                        size_t bit = base + 4 * (len - 1 - j);

                        if (v == 0)
                                continue;
                        if (bit >= CPUSET_MAX_CPUS)
                                return parse_fail(
                                        e, start + j, -ERANGE,
                                        "mask names CPUs beyond 8191 (CPUSET_MAX_CPUS)");
                        bits[bit / BITS_PER_WORD] |= v << (bit % BITS_PER_WORD);
                }
        }
        return 0;
}

static int parse_finish(
        int r, const ParseError *e, const unsigned long *bits, CpuSet *ret, size_t *error_offset,
        const char **error_reason) {
        if (r < 0) {
                if (error_offset)
                        *error_offset = e->offset;
                if (error_reason)
                        *error_reason = e->reason;
                return r;
        }
        return ret ? cpuset_assign(ret, bits, MAX_WORDS) : 0;
}

int cpuset_parse_list_full(const char *s, CpuSet *ret, size_t *error_offset, const char **error_reason) {
        unsigned long bits[MAX_WORDS] = {};
        ParseError e = {};

        assert(s);
        return parse_finish(parse_list(s, bits, &e), &e, bits, ret, error_offset, error_reason);
}

int cpuset_parse_mask_full(const char *s, CpuSet *ret, size_t *error_offset, const char **error_reason) {
        unsigned long bits[MAX_WORDS] = {};
        ParseError e = {};

        assert(s);
        return parse_finish(parse_mask(s, bits, &e), &e, bits, ret, error_offset, error_reason);
}

int cpuset_parse_list(const char *s, CpuSet *ret, size_t *error_offset) {
        return cpuset_parse_list_full(s, ret, error_offset, NULL);
}

int cpuset_parse_mask(const char *s, CpuSet *ret, size_t *error_offset) {
        return cpuset_parse_mask_full(s, ret, error_offset, NULL);
}

/* ---- formatting ---- */

static char *format_decimal(char *p, size_t v) {
        char tmp[3 * sizeof(size_t)];
        size_t k = 0;

        do {
                tmp[k++] = (char)('0' + v % 10);
                v /= 10;
        } while (v > 0);
        while (k > 0)
                *p++ = tmp[--k];
        return p;
}

static size_t decimal_width(size_t v) {
        size_t n = 1;

        while (v >= 10) {
                v /= 10;
                n++;
        }
        return n;
}

int cpuset_format_list(const CpuSet *s, char **ret) {
        const unsigned long *sw;
        size_t n, runs = 0, pos = 0;
        unsigned long carry = 0;
        char *buf, *p;

        assert(s);
        assert(ret);

        /* A run starts at every set bit whose lower neighbour is clear. */
        sw = set_cwords(s);
        n = words_used(sw, s->n_words);
        for (size_t i = 0; i < n; i++) {
                unsigned long w = sw[i];

                runs += (size_t)__builtin_popcountl(w & ~((w << 1) | carry));
                carry = w >> (BITS_PER_WORD - 1);
        }

        buf = malloc(runs * (2 * decimal_width(n * BITS_PER_WORD) + 2) + 1);
        if (!buf)
                return -ENOMEM;
        p = buf;
        while ((pos = bits_next_set(sw, n, pos)) != SIZE_MAX) {
                size_t end = bits_next_clear(sw, n, pos);

                if (p != buf)
                        *p++ = ',';
                p = format_decimal(p, pos);
                if (end - pos >= 2) {
                        *p++ = '-';
                        p = format_decimal(p, end - 1);
                }
                pos = end;
        }
        *p = '\0';
        *ret = buf;
        return 0;
}

/* 32-bit word k of the set (bits 32k..32k+31). */
static uint32_t cpuset_word32(const CpuSet *s, size_t k) {
        size_t bit = k * 32;

        if (bit / BITS_PER_WORD >= s->n_words)
                return 0;
        return (uint32_t)(set_cwords(s)[bit / BITS_PER_WORD] >> (bit % BITS_PER_WORD));
}

int cpuset_format_mask(const CpuSet *s, unsigned nbits, char **ret) {
        static const char hex[] = "0123456789abcdef";
        size_t width, n32;
        char *buf, *p;

        assert(s);
        assert(ret);
        if (nbits > CPUSET_MAX_CPUS)
                return -ERANGE;

        width = MAX((size_t)nbits, (size_t)(cpuset_last(s) + 1));
        n32 = MAX((width + 31) / 32, (size_t)1);
        buf = malloc(n32 * 9);
        if (!buf)
                return -ENOMEM;
        p = buf;
        for (size_t k = n32; k-- > 0;) {
                uint32_t w = cpuset_word32(s, k);

                for (int d = 28; d >= 0; d -= 4)
                        *p++ = hex[(w >> d) & 0xf];
                *p++ = k > 0 ? ',' : '\0';
        }
        *ret = buf;
        return 0;
}

char *cpuset_to_string(const CpuSet *s) {
        char *p = NULL;

        if (cpuset_format_list(s, &p) < 0)
                return NULL;
        return p;
}

/* ---- glibc cpu_set_t ---- */

int cpuset_to_cpu_set(const CpuSet *s, cpu_set_t **ret, size_t *ret_size) {
        size_t n_cpus, size, n_bytes;
        cpu_set_t *c;

        assert(s);
        assert(ret);
        assert(ret_size);

        n_cpus = (size_t)(cpuset_last(s) + 1);
        if (n_cpus == 0)
                n_cpus = 1;
        c = CPU_ALLOC(n_cpus);
        if (!c)
                return -ENOMEM;
        size = CPU_ALLOC_SIZE(n_cpus);
        CPU_ZERO_S(size, c);
        /* cpu_set_t is an array of unsigned long with the same bit layout as ours. */
        n_bytes = MIN(size, words_used(set_cwords(s), s->n_words) * sizeof(unsigned long));
        if (n_bytes > 0)
                memcpy(c, set_cwords(s), n_bytes);

        *ret = c;
        *ret_size = size;
        return 0;
}

int cpuset_from_cpu_set(const cpu_set_t *c, size_t size, CpuSet *ret) {
        const unsigned long *words = (const unsigned long *)c;
        size_t n;

        assert(c || size == 0);
        assert(ret);
        if (size % sizeof(unsigned long) != 0)
                return -EINVAL;
        n = words_used(words, size / sizeof(unsigned long));
        if (n > MAX_WORDS)
                return -ERANGE;
        return cpuset_assign(ret, words, n);
}
