/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Matching processes to policies and threads to thread rules (match.h). Facts come from
 * procfs.h lazily: a policy's keys are tested cheapest first and the first failing key ends
 * the test, so an exec storm of non-matching processes costs one comm read each.
 */

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "kube.h"
#include "macro.h"
#include "match-index.h"
#include "match.h"
#include "procfs.h"

void process_facts_init(ProcessFacts *f, const char *root, pid_t pid) {
        *f = (ProcessFacts){
                .root = root,
                .pid = pid,
        };
}

void process_facts_done(ProcessFacts *f) {
        if (!f)
                return;
        f->exe = mfree(f->exe);
        f->cmdline = mfree(f->cmdline);
        f->cgroup = mfree(f->cgroup);
        f->unit = mfree(f->unit);
        f->pod = mfree(f->pod);
        f->pod_namespace = mfree(f->pod_namespace);
        f->container = mfree(f->container);
        f->comm[0] = '\0';
        f->loaded = f->failed = 0;
}

/* Records the outcome r of reading fact: loaded, failed, or an error to pass up. */
static int fact_done(ProcessFacts *f, unsigned fact, int r) {
        if (r >= 0) {
                f->loaded |= fact;
                return 0;
        }
        if (r == -ESRCH || r == -ENOMEM)
                return r;
        f->failed |= fact;
        return 0;
}

/*
 * Loads FACT_KUBE, after FACT_CGROUP: the IDs in the cgroup path (or, when there is none, in
 * the v1 cpuset line of /proc/PID/cgroup), named by f->kube. Returns 0, -ESRCH, -ENOMEM.
 */
static int load_kube(ProcessFacts *f) {
        _cleanup_free_ char *membership = NULL, *v1 = NULL;
        const char *path = f->loaded & FACT_CGROUP ? f->cgroup : NULL;
        KubeCgroupIds ids;
        KubeNames names;
        int r;

        if (!f->kube) {
                f->failed |= FACT_KUBE;
                return 0;
        }
        if (!path) {
                r = cgroup_read_membership(f->root, f->pid, &membership);
                if (r == -ESRCH || r == -ENOMEM)
                        return r;
                r = r < 0 ? r : kube_cpuset_cgroup_path(membership, &v1);
                if (r == -ENOMEM)
                        return r;
                path = v1;
        }
        if (!kube_parse_cgroup(path, &ids)) {
                f->failed |= FACT_KUBE;
                return 0;
        }
        r = kube_records_lookup(f->kube, &ids, &names);
        if (r < 0)
                return r;
        if (r == 0) {
                f->failed |= FACT_KUBE;
                return 0;
        }
        f->pod = names.pod;
        f->pod_namespace = names.pod_namespace;
        f->container = names.container;
        f->loaded |= FACT_POD | FACT_NAMESPACE | (f->container ? FACT_CONTAINER : 0);
        f->failed |= f->container ? 0 : FACT_CONTAINER;
        return 0;
}

int process_facts_load(ProcessFacts *f, unsigned mask) {
        unsigned todo = mask & ~(f->loaded | f->failed);
        int r;

        if (todo & (FACT_UNIT | FACT_KUBE))
                todo |= FACT_CGROUP & ~(f->loaded | f->failed);

        if (todo & FACT_COMM) {
                r = fact_done(f, FACT_COMM, procfs_read_comm(f->root, f->pid, 0, f->comm));
                if (r < 0)
                        return r;
        }
        if (todo & FACT_UID) {
                r = fact_done(f, FACT_UID, procfs_read_euid(f->root, f->pid, &f->euid));
                if (r < 0)
                        return r;
        }
        if (todo & FACT_CGROUP) {
                r = fact_done(f, FACT_CGROUP, procfs_read_cgroup(f->root, f->pid, &f->cgroup));
                if (r < 0)
                        return r;
        }
        if (todo & FACT_UNIT) {
                if (f->failed & FACT_CGROUP)
                        f->failed |= FACT_UNIT;
                else {
                        r = fact_done(f, FACT_UNIT, procfs_unit_from_cgroup(f->cgroup, &f->unit));
                        if (r < 0)
                                return r;
                }
        }
        if (todo & FACT_KUBE) {
                r = load_kube(f);
                if (r < 0)
                        return r;
        }
        if (todo & FACT_EXE) {
                r = fact_done(f, FACT_EXE, procfs_read_exe(f->root, f->pid, &f->exe));
                if (r < 0)
                        return r;
        }
        if (todo & FACT_CMDLINE) {
                r = procfs_read_cmdline_max(f->root, f->pid, f->cmdline_budget, &f->cmdline);
                if (r == -E2BIG)
                        return -EAGAIN; /* neither loaded nor failed: asked again later */
                r = fact_done(f, FACT_CMDLINE, r);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Any glob of l matches s. A glob without a special character is compared as a string, which
 * is what fnmatch(3) would do with it, at a fraction of the cost. */
static bool globs_match(char *const *l, const char *s) {
        STRV_FOREACH (g, l)
                if (strpbrk(*g, "*?[\\") ? fnmatch(*g, s, 0) == 0 : streq(*g, s))
                        return true;
        return false;
}

/* Loads fact; returns 1 if it is usable, 0 if it failed to read (matches nothing), < 0 on error. */
static int need(ProcessFacts *f, unsigned fact) {
        int r;

        r = process_facts_load(f, fact);
        if (r < 0)
                return r;
        return !!(f->loaded & fact);
}

/* The value of a loaded string fact (FACT_COMM, _CGROUP, _UNIT, _POD, _NAMESPACE, _CONTAINER,
 * _EXE, _CMDLINE). */
static const char *fact_value(const ProcessFacts *f, unsigned fact) {
        switch (fact) {
        case FACT_COMM:
                return f->comm;
        case FACT_CGROUP:
                return f->cgroup;
        case FACT_UNIT:
                return f->unit;
        case FACT_POD:
                return f->pod;
        case FACT_NAMESPACE:
                return f->pod_namespace;
        case FACT_CONTAINER:
                return f->container;
        case FACT_EXE:
                return f->exe;
        case FACT_CMDLINE:
                return f->cmdline;
        default:
                return NULL;
        }
}

/* The keys of a matcher, in the order they are tested (cheapest first) and explained. */
static const struct {
        unsigned fact; /* the fact the key is about */
        const char *name;
} match_keys[] = {
        {FACT_COMM, "comm"},           {FACT_UID, "user"}, {FACT_CGROUP, "cgroup"},
        {FACT_UNIT, "unit"},           {FACT_POD, "pod"},  {FACT_NAMESPACE, "namespace"},
        {FACT_CONTAINER, "container"}, {FACT_EXE, "exe"},  {FACT_CMDLINE, "cmdline"},
};

/* The patterns of m's key about fact (FACT_UID: the user: entries), NULL when it is not given. */
static char *const *key_patterns(const Matcher *m, unsigned fact) {
        switch (fact) {
        case FACT_COMM:
                return m->comm;
        case FACT_UID:
                return m->user;
        case FACT_CGROUP:
                return m->cgroup;
        case FACT_UNIT:
                return m->unit;
        case FACT_POD:
                return m->pod;
        case FACT_NAMESPACE:
                return m->pod_namespace;
        case FACT_CONTAINER:
                return m->container;
        case FACT_EXE:
                return m->exe;
        case FACT_CMDLINE:
                return m->cmdline;
        default:
                return NULL;
        }
}

/* Whether uid is one of the n_uids uids. */
static bool uid_listed(const uid_t *uids, size_t n_uids, uid_t uid) {
        for (size_t i = 0; i < n_uids; i++)
                if (uids[i] == uid)
                        return true;
        return false;
}

/* Whether fact, loaded in f, matches m's key about it: 1, 0, or -ENOMEM. */
static int key_matches(const Matcher *m, unsigned fact, const uid_t *uids, size_t n_uids, ProcessFacts *f) {
        int r;

        switch (fact) {
        case FACT_UID:
                return uid_listed(uids, n_uids, f->euid);
        case FACT_CMDLINE:
                if (!m->cmdline_re)
                        return 0;
                r = regex_set_search_with(m->cmdline_re, f->scratch, f->cmdline, strlen(f->cmdline));
                if (r == -ENOMEM)
                        return r;
                return r >= 0;
        default:
                return globs_match(key_patterns(m, fact), fact_value(f, fact));
        }
}

int matcher_test(const Matcher *m, const uid_t *uids, size_t n_uids, ProcessFacts *f) {
        for (size_t i = 0; i < ELEMENTSOF(match_keys); i++) {
                unsigned fact = match_keys[i].fact;
                int r;

                if (!key_patterns(m, fact))
                        continue;
                r = need(f, fact);
                if (r <= 0)
                        return r;
                r = key_matches(m, fact, uids, n_uids, f);
                if (r <= 0)
                        return r;
        }
        return 1;
}

bool policy_names_comm(const Policy *p, const char *comm) {
        STRV_FOREACH (g, p->match.comm)
                if (!strpbrk(*g, "*?[\\") && streq(*g, comm))
                        return true;
        return false;
}

/* The first policy of every policy in plan that matches: match_process() without the index. */
static int match_every_policy(const Plan *plan, ProcessFacts *f, bool explicit_only) {
        for (size_t i = 0; i < plan->n_policies; i++) {
                const PolicyPlan *pp = &plan->policies[i];
                int r;

                if (pp->pending_reason || !pp->policy)
                        continue;
                if (explicit_only && !policy_names_comm(pp->policy, f->comm))
                        continue;
                r = matcher_test(&pp->policy->match, pp->uids, pp->n_uids, f);
                if (r < 0)
                        return r;
                if (r > 0)
                        return (int)i;
        }
        return -ENOENT;
}

int match_process(const Plan *plan, ProcessFacts *f, bool explicit_only) {
        const MatchIndex *x = plan->match_index;
        MatchCandidates c;
        int k, r;

        if (explicit_only) {
                r = need(f, FACT_COMM);
                if (r <= 0)
                        return r < 0 ? r : -ENOENT;
        } else if (x && match_index_uses_comm(x)) {
                /* Without the comm the index can't say: every policy is tested, as unindexed
                 * (a policy without keys before the first with a comm: still matches a process
                 * that is gone, and a comm that could not be read fails every comm: key). */
                r = need(f, FACT_COMM);
                if (r <= 0)
                        x = NULL;
        }
        if (!x)
                return match_every_policy(plan, f, explicit_only);

        /* Only the candidates can match; the others' comm: keys fail without reading a fact.
         * They come in file order, so the first that matches is the one the loop would find.
         * (When the index does not use the comm, f->comm may be unread: "", found nowhere.) */
        match_index_candidates(x, f->comm, explicit_only, &c);
        while ((k = match_candidates_next(&c)) >= 0) {
                const PolicyPlan *pp = &plan->policies[k];

                if (pp->pending_reason) /* the index has none; a plan edited since might */
                        continue;
                r = matcher_test(&pp->policy->match, pp->uids, pp->n_uids, f);
                if (r < 0)
                        return r;
                if (r > 0)
                        return k;
        }
        return -ENOENT;
}

int match_thread(const Policy *p, const char *thread_comm) {
        for (size_t i = 0; i < p->n_threads; i++)
                if (p->threads[i].name && fnmatch(p->threads[i].name, thread_comm, 0) == 0)
                        return (int)i;
        return -ENOENT;
}

/* ", "-separated list of the strings of l, each in double quotes (or /slashes/ when regex). */
static char *quote_list(char *const *l, bool regex) {
        size_t size = 1;
        char *s, *p;

        STRV_FOREACH (i, l)
                size += strlen(*i) + 4;
        s = p = malloc(size);
        if (!s)
                return NULL;
        *p = '\0';
        STRV_FOREACH (i, l)
                p += sprintf(p, "%s%c%s%c", i == l ? "" : ", ", regex ? '/' : '"', *i, regex ? '/' : '"');
        return s;
}

/*
 * Adds the line for one key: `NAME FACT matches|does not match PATTERNS`, fact as already
 * formatted (NULL: could not be read); on a match with first set, only that pattern is named.
 * Appends the line to *failed ("; "-joined) too when it did not match. Returns 0 or -ENOMEM.
 */
static int explain_line(
        char ***lines, char **failed, const char *name, const char *fact, bool matched,
        char *const *patterns, const char *first, bool regex) {
        _cleanup_free_ char *list = NULL, *line = NULL;

        list = quote_list(first ? (char *[]){(char *)first, NULL} : patterns, regex);
        if (!list)
                return -ENOMEM;
        if (asprintf(
                    &line, "%s %s %s %s", name, fact ?: "unknown (could not be read)",
                    matched ? "matches" : "does not match", list) < 0) {
                line = NULL;
                return -ENOMEM;
        }
        if (!matched) {
                char *joined = NULL;

                if (asprintf(&joined, "%s%s%s", *failed ?: "", *failed ? "; " : "", line) < 0)
                        return -ENOMEM;
                free(*failed);
                *failed = joined;
        }
        return strv_extendf(lines, "%s", line);
}

/* The first glob of l that matches s, or NULL. */
static const char *first_glob_match(char *const *l, const char *s) {
        STRV_FOREACH (g, l)
                if (fnmatch(*g, s, 0) == 0)
                        return *g;
        return NULL;
}

/* Bytes of a fact an explanation line quotes at most. */
#define EXPLAIN_VALUE_MAX 512

/*
 * Explains one string key: globs (fnmatch) or, with re, the compiled regexes of patterns.
 * Returns 1 matched, 0 not, -ESRCH, -ENOMEM.
 */
static int explain_key(
        char ***lines, char **failed, ProcessFacts *f, unsigned fact, const char *name,
        char *const *patterns, bool regex, const RegexSet *re) {
        _cleanup_free_ char *quoted = NULL;
        const char *value, *hit = NULL;
        int r;

        r = need(f, fact);
        if (r < 0)
                return r;
        value = r > 0 ? fact_value(f, fact) : NULL;
        if (value) {
                size_t len = strlen(value);

                /* A command line can be megabytes: the explanation shows its start. */
                if ((len > EXPLAIN_VALUE_MAX
                             ? asprintf(&quoted, "\"%.*s\"... (%zu bytes)", EXPLAIN_VALUE_MAX, value, len)
                             : asprintf(&quoted, "\"%s\"", value)) < 0) {
                        quoted = NULL;
                        return -ENOMEM;
                }
                if (!regex)
                        hit = first_glob_match(patterns, value);
                else if (re) {
                        r = regex_set_search(re, value, strlen(value));
                        if (r == -ENOMEM)
                                return r;
                        if (r >= 0)
                                hit = patterns[r];
                }
        }
        r = explain_line(lines, failed, name, quoted, hit, patterns, hit, fact == FACT_CMDLINE);
        if (r < 0)
                return r;
        return !!hit;
}

/*
 * Explains the user: key users, the effective uid against uids. Returns 1 matched, 0 not,
 * -ESRCH, -ENOMEM.
 */
static int explain_user(
        char ***lines, char **failed, char *const *users, const uid_t *uids, size_t n_uids,
        ProcessFacts *f) {
        char uid_text[32];
        bool found = false;
        int r;

        r = need(f, FACT_UID);
        if (r < 0)
                return r;
        if (r > 0) {
                snprintf(uid_text, sizeof(uid_text), "%u", (unsigned)f->euid);
                found = uid_listed(uids, n_uids, f->euid);
        }
        r = explain_line(lines, failed, "user", r > 0 ? uid_text : NULL, found, users, NULL, false);
        if (r < 0)
                return r;
        return found;
}

int matcher_explain(
        const Matcher *m, const uid_t *uids, size_t n_uids, ProcessFacts *f, char ***ret_lines,
        char **ret_failed) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *failed = NULL;
        bool all = true;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(match_keys); i++) {
                unsigned fact = match_keys[i].fact;
                char *const *patterns = key_patterns(m, fact);

                if (!patterns)
                        continue;
                /* cmdline without compiled regexes (a matcher not made by the loader) matches nothing */
                if (fact == FACT_UID)
                        r = explain_user(&lines, &failed, patterns, uids, n_uids, f);
                else
                        r = explain_key(
                                &lines, &failed, f, fact, match_keys[i].name, patterns, fact == FACT_CMDLINE,
                                m->cmdline_re);
                if (r < 0)
                        return r;
                all = all && r > 0;
        }

        if (!lines) {
                r = strv_extendf(&lines, "no match keys: matches every process");
                if (r < 0)
                        return r;
        }

        if (ret_failed) {
                if (!failed && !(failed = strdup("")))
                        return -ENOMEM;
                *ret_failed = TAKE_PTR(failed);
        }
        *ret_lines = TAKE_PTR(lines);
        return all;
}
