/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The comm index of a plan (match-index.h): sorted arrays of the active policies' comm:
 * names and glob prefixes, so that match_process() only tests the policies a comm could match.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "match-index.h"

/* The fnmatch(3) characters that are not literal (flags 0). */
#define GLOB_SPECIAL "*?[\\"

/* Orders entries by (len, key bytes): the search order. */
static int entry_key_cmp(const void *a, const void *b) {
        const MatchIndexEntry *x = a, *y = b;

        if (x->len != y->len)
                return x->len < y->len ? -1 : 1;
        return memcmp(x->key, y->key, x->len);
}

/* Orders entries by (len, key bytes, policy): the sort order, so each key's run is ascending. */
static int entry_cmp(const void *a, const void *b) {
        const MatchIndexEntry *x = a, *y = b;
        int c = entry_key_cmp(a, b);

        if (c != 0)
                return c;
        return x->policy < y->policy ? -1 : x->policy > y->policy;
}

/* Where comm: entry g goes: 'e' exact (*ret_len its length), 'p' prefix (*ret_len the literal
 * prefix), 'a' always (no literal prefix), 0 left out (can't match a comm). */
static char classify(const char *g, size_t *ret_len) {
        size_t n = strcspn(g, GLOB_SPECIAL);

        if (n == 0 && g[0])
                return 'a';
        if (n > MATCH_COMM_MAX)
                return 0;
        *ret_len = n;
        return g[n] ? 'p' : 'e';
}

/* Whether p's comm: key makes it a policy to try for every process. */
static bool policy_always(const Policy *p) {
        size_t len;

        if (!p->match.comm)
                return true;
        STRV_FOREACH (g, p->match.comm)
                if (classify(*g, &len) == 'a')
                        return true;
        return false;
}

/* Fills (when x's arrays are allocated) or counts the entries of the n policies. */
static void index_fill(const PolicyPlan *policies, size_t n, MatchIndex *x) {
        x->n_exact = x->n_prefix = x->n_always = 0;
        for (size_t i = 0; i < n; i++) {
                const Policy *p = policies[i].policy;
                bool always;

                if (!p || policies[i].pending_reason)
                        continue;
                always = policy_always(p);
                if (always) {
                        if (x->always)
                                x->always[x->n_always] = (MatchIndexEntry){.policy = i};
                        x->n_always++;
                }
                /* An always-tried policy's names still go in exact: explicit-only lookups see
                 * nothing else. Its prefixes would add nothing. */
                STRV_FOREACH (g, p->match.comm) {
                        MatchIndexEntry e = {.key = *g, .policy = i};

                        switch (classify(*g, &e.len)) {
                        case 'e':
                                if (x->exact)
                                        x->exact[x->n_exact] = e;
                                x->n_exact++;
                                break;
                        case 'p':
                                if (always)
                                        break;
                                if (x->prefix)
                                        x->prefix[x->n_prefix] = e;
                                x->n_prefix++;
                                x->prefix_lengths |= UINT32_C(1) << e.len;
                                break;
                        default:
                                break;
                        }
                }
        }
}

int match_index_new(const PolicyPlan *policies, size_t n, MatchIndex **ret) {
        _cleanup_(match_index_freep) MatchIndex *x = NULL;

        x = calloc(1, sizeof(MatchIndex));
        if (!x)
                return -ENOMEM;
        index_fill(policies, n, x);
        x->exact = calloc(MAX(x->n_exact, (size_t)1), sizeof(MatchIndexEntry));
        x->prefix = calloc(MAX(x->n_prefix, (size_t)1), sizeof(MatchIndexEntry));
        x->always = calloc(MAX(x->n_always, (size_t)1), sizeof(MatchIndexEntry));
        if (!x->exact || !x->prefix || !x->always)
                return -ENOMEM;
        index_fill(policies, n, x);
        qsort(x->exact, x->n_exact, sizeof(MatchIndexEntry), entry_cmp);
        qsort(x->prefix, x->n_prefix, sizeof(MatchIndexEntry), entry_cmp);
        *ret = TAKE_PTR(x);
        return 0;
}

MatchIndex *match_index_free(MatchIndex *x) {
        if (!x)
                return NULL;
        free(x->exact);
        free(x->prefix);
        free(x->always);
        free(x);
        return NULL;
}

bool match_index_uses_comm(const MatchIndex *x) {
        return x->n_exact > 0 || x->n_prefix > 0;
}

/* Adds to c the run of entries (sorted by entry_cmp()) whose key is the len bytes of s. */
static void add_run(
        MatchCandidates *c, const MatchIndexEntry *entries, size_t n, const char *s, size_t len) {
        const MatchIndexEntry key = {.key = s, .len = len};
        const MatchIndexEntry *hit, *first, *last;

        if (n == 0)
                return; /* entries may be NULL then, which bsearch(3) does not take */
        hit = bsearch(&key, entries, n, sizeof(MatchIndexEntry), entry_key_cmp);
        if (!hit)
                return;
        /* The run is usually one entry (a name one policy gives); walk to both its ends. */
        for (first = hit; first > entries && entry_key_cmp(first - 1, &key) == 0; first--)
                ;
        for (last = hit + 1; last < entries + n && entry_key_cmp(last, &key) == 0; last++)
                ;
        c->lists[c->n_lists].pos = first;
        c->lists[c->n_lists].end = last;
        c->n_lists++;
}

void match_index_candidates(
        const MatchIndex *x, const char *comm, bool explicit_only, MatchCandidates *ret) {
        size_t len = strnlen(comm, MATCH_COMM_MAX);

        *ret = (MatchCandidates){};
        add_run(ret, x->exact, x->n_exact, comm, len);
        if (explicit_only)
                return;
        for (size_t l = 1; l <= len; l++)
                if (x->prefix_lengths & (UINT32_C(1) << l))
                        add_run(ret, x->prefix, x->n_prefix, comm, l);
        if (x->n_always > 0) {
                ret->lists[ret->n_lists].pos = x->always;
                ret->lists[ret->n_lists].end = x->always + x->n_always;
                ret->n_lists++;
        }
}

int match_candidates_next(MatchCandidates *c) {
        size_t best = SIZE_MAX;

        for (size_t i = 0; i < c->n_lists; i++) {
                /* Entries below next were given already (or are a policy's second entry). */
                while (c->lists[i].pos < c->lists[i].end && c->lists[i].pos->policy < c->next)
                        c->lists[i].pos++;
                if (c->lists[i].pos < c->lists[i].end)
                        best = MIN(best, c->lists[i].pos->policy);
        }
        if (best == SIZE_MAX)
                return -ENOENT;
        c->next = best + 1;
        return (int)best;
}
