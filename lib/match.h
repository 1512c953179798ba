/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Matching: which policy applies to a process, and which thread rule to a thread.
 * Facts about a process are read from /proc lazily — only those the loaded policies need
 * (Config.facts), and only when an earlier key of the same policy did not already fail.
 */

#include <sys/types.h>

#include "kube.h"
#include "plan.h"
#include "policy.h"
#include "regex-set.h"

typedef struct ProcessFacts {
        const char *root; /* procfs root, NULL for / */
        pid_t pid;
        unsigned loaded; /* ProcessFact bits read so far */
        unsigned failed; /* ProcessFact bits that could not be read (e.g. -EACCES on exe) */
        char comm[16];
        char *exe;
        char *cmdline;
        uid_t euid;
        char *cgroup;
        char *unit;
        char *pod, *pod_namespace, *container; /* FACT_POD, FACT_NAMESPACE, FACT_CONTAINER */
        KubeRecords *kube;     /* borrowed: the kubelet's records for those three; NULL: they fail */
        size_t cmdline_budget; /* bytes: a longer command line is not read (the load returns
                                * -EAGAIN and the fact stays unloaded); 0: no limit */
        RegexScratch *scratch; /* for cmdline: searches (regex_set_search_with()); NULL: each
                                * set's own, on the thread that compiled the sets */
} ProcessFacts;

/* Starts an empty set of facts about pid under root (borrowed; NULL or "/" = real /proc). */
void process_facts_init(ProcessFacts *f, const char *root, pid_t pid);
/* Frees what the facts hold; f is empty (nothing loaded) afterwards and may be re-initialised. */
void process_facts_done(ProcessFacts *f);
/*
 * Reads the facts in mask not yet loaded (nor failed), through procfs.h: FACT_COMM
 * /proc/PID/comm, FACT_UID the effective uid from /proc/PID/status, FACT_CGROUP
 * /proc/PID/cgroup, FACT_UNIT the unit derived from the cgroup (loads FACT_CGROUP too),
 * FACT_EXE readlink /proc/PID/exe, FACT_CMDLINE /proc/PID/cmdline, and FACT_POD,
 * FACT_NAMESPACE, FACT_CONTAINER together (any of them loads all three, and FACT_CGROUP): the
 * pod UID and container ID in the cgroup path (kube_parse_cgroup(); where /proc/PID/cgroup has
 * neither a v2 nor a name=systemd line, the v1 cpuset line's), named by f->kube
 * (kube_records_lookup()). Nothing outside mask is read. A fact that can't be read for a
 * reason other than the process being gone is marked failed (it then matches nothing):
 * -EACCES on exe, no exe (kernel thread), a cgroup path with no unit, a process in no pod or
 * in one the kubelet's records don't name (or f->kube NULL), a container the records don't
 * name (FACT_CONTAINER alone; the pod's name and namespace may still be known). Returns 0,
 * -ESRCH when the process is gone (the fact stays unloaded), -EAGAIN when the command line is
 * longer than f->cmdline_budget (not read: try again without a budget, when there is time), or
 * -ENOMEM.
 */
int process_facts_load(ProcessFacts *f, unsigned mask);

/*
 * True if every key given in m matches the facts (loading what is needed).
 * uids/n_uids are m->user resolved by the plan. Returns 1, 0, -ESRCH.
 * Keys are tested cheapest first — comm, user, cgroup, unit, pod, namespace, container, exe,
 * cmdline — and the first key that fails ends the test, so the facts of later keys are not
 * read. Within a key a list means "any of": comm, exe, cgroup, unit, pod, namespace and
 * container are fnmatch(3) globs (flags 0, so '*' also matches '/'); comm is compared as the
 * kernel keeps it (at most 15 characters), so a longer pattern can only match through
 * wildcards; exe has " (deleted)" stripped; cmdline is a search of the regex set
 * m->cmdline_re (regex-set.h) on argv joined by single spaces; user is the effective uid
 * against uids. A matcher with no key matches every process. -ENOMEM too, and -EAGAIN when
 * the command line is over f->cmdline_budget.
 */
int matcher_test(const Matcher *m, const uid_t *uids, size_t n_uids, ProcessFacts *f);

/*
 * True if one of p's comm: entries has no fnmatch(3) special character ('*', '?', '[', '\\')
 * and equals comm: the policy names that process literally.
 */
bool policy_names_comm(const Policy *p, const char *comm);

/*
 * The first active (non-pending) policy of plan that matches the process, in file order.
 * With explicit_only (a kernel thread, or the daemon itself: placed only by a rule that names
 * it, docs/policy-format.md) only the policies that name its comm literally
 * (policy_names_comm()) are considered, and every key of such a policy must match as usual.
 * Returns its index in plan->policies (>= 0), -ENOENT if none matches (or, explicit_only, the
 * comm can't be read), -ESRCH if the process is gone, -EAGAIN if deciding needs a command line
 * longer than f->cmdline_budget (undecided: no policy is skipped for it), -ENOMEM. Policies
 * with a pending_reason are skipped.
 * With plan->match_index (plan_new() makes it) the comm is read first, and only the policies the
 * index gives for it are tested (match-index.h), so the cost does not grow with the number of
 * policies keyed by comm: names or prefixed globs. The result is the same as testing every
 * policy in order; when the comm can't be read, every policy is tested.
 */
int match_process(const Plan *plan, ProcessFacts *f, bool explicit_only);

/* The index of the first thread rule of p whose glob (fnmatch(3), flags 0) matches
 * thread_comm (/proc/PID/task/TID/comm), or -ENOENT. */
int match_thread(const Policy *p, const char *thread_comm);

/*
 * Explains m against the process's facts, key by key, for Explain and `affinityctl explain`:
 * unlike matcher_test() every key given is tested (loading the facts it needs), in the same
 * order (comm, user, cgroup, unit, pod, namespace, container, exe, cmdline). One line per key
 * into *ret_lines (NULL-terminated, newly allocated), the fact in double quotes, then the
 * patterns:
 *   comm "pg" matches "pg*"                         (the first glob that matched)
 *   exe "/usr/bin/x" does not match "/usr/sbin/nginx", "/opt/x"   (every glob)
 *   user 1000 matches "postgres", "1001"            (the user: values as written)
 *   pod "web-1" matches "web-*"
 *   cmdline "a b" does not match /-D .+data/   (each regex, slash-delimited)
 * A fact longer than 512 bytes (a command line) is quoted up to there, then "... (N bytes)".
 *   exe unknown (could not be read) does not match "/usr/bin/x"
 * A matcher with no key gives the single line "no match keys: matches every process".
 * If ret_failed is not NULL it gets the lines of the failing keys only, joined by "; " ("" when
 * every key matched), for ListPolicies-style "why not" texts. uids/n_uids as for matcher_test().
 * Returns 1 (every key matched), 0 (some did not), -ESRCH (the process is gone), -ENOMEM; the
 * out parameters are written only on success.
 */
int matcher_explain(
        const Matcher *m, const uid_t *uids, size_t n_uids, ProcessFacts *f, char ***ret_lines,
        char **ret_failed);
