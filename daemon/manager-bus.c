/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.affinityd1.Manager: vtable, property getters and method marshalling. See manager-bus.h. */

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "device-placement.h"
#include "fileio.h"
#include "bus-string.h"
#include "manager-bus.h"
#include "manager-explain.h"
#include "procfs.h"
#include "util.h"

static int property_get_string(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        return bus_append_string(reply, *(char **)userdata);
}

static int property_get_version(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_state(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", manager_state_to_string(m->state));
}

static int property_get_discovery(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", manager_discovery_to_string(m->discovery));
}

static int property_get_policy_files(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        STRV_FOREACH (f, m->config ? m->config->files : NULL) {
                r = bus_append_string(reply, *f);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_degraded_reasons(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = manager_degraded_reasons(userdata, &l);
        if (r < 0)
                return r;
        return sd_bus_message_append_strv(reply, l);
}

static int property_get_topology(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        int r;

        if (m->topology) {
                r = topology_summary(m->topology, &text);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_append(reply, "s", strempty(text));
}

/* OnlineCPUs (of the topology in force) and ReservedCPUs (affinityd.yaml reserve:). */
static int property_get_cpus(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        const CpuSet *set = NULL;
        int r;

        if (streq(property, "OnlineCPUs"))
                set = m->topology ? topology_online_cpus(m->topology) : NULL;
        else if (m->config && m->config->has_reserve)
                set = &m->config->reserve;
        if (set) {
                r = cpuset_format_list(set, &text);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_append(reply, "s", strempty(text));
}

static int property_get_latency(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        double q = streq(property, "PlacementLatencyP50USec") ? 0.50
                : streq(property, "PlacementLatencyP99USec")  ? 0.99
                                                              : 1.0;
        return sd_bus_message_append(reply, "t", manager_latency_usec(m, q));
}

static int method_list_policies(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssuss)");
        if (r < 0)
                return r;
        for (size_t i = 0; m->plan && i < m->plan->n_policies; i++) {
                const PolicyPlan *pp = &m->plan->policies[i];
                _cleanup_free_ char *cpus = NULL, *b1 = NULL, *b2 = NULL, *b3 = NULL;
                const char *name, *file, *reason;

                if (pp->has_cpus && !pp->pending_reason) {
                        r = cpuset_format_list(&pp->cpus, &cpus);
                        if (r < 0)
                                return r;
                }
                name = bus_string(pp->policy->name, &b1);
                file = bus_string(pp->policy->location.file, &b2);
                reason = bus_string(pp->pending_reason, &b3);
                if (!name || !file || !reason)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(ssuss)", name, file, (uint32_t)pp->policy->location.line, strempty(cpus),
                        reason);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        return sd_bus_send(NULL, reply, NULL);
}

static int method_reload(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        uid_t euid;
        int r;

        r = sd_bus_query_sender_creds(message, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &euid);
        if (r < 0 || euid != 0)
                return sd_bus_error_set(
                        error, SD_BUS_ERROR_ACCESS_DENIED, "Only root may reload affinityd.");

        r = manager_reload(m, &text);
        if (r < 0) {
                _cleanup_free_ char *buf = NULL;
                const char *msg = bus_string(text, &buf); /* names files */

                if (!msg)
                        return -ENOMEM;
                if (r == -EINVAL)
                        return sd_bus_error_set(error, AFFINITYD_ERROR_INVALID_POLICY, msg);
                return sd_bus_error_set_errnof(error, r, "Reload failed: %s", msg);
        }

        return sd_bus_reply_method_return(message, NULL);
}

/*
 * The reply to Explain(): (comm, policy, cpus, explanation, unmatched, threads), built as the
 * threads are explained: begin appends everything but the threads and opens their array;
 * explain_reply_threads() appends e->threads[from..]; explain_reply_send() closes and sends.
 */
static int explain_reply_begin(sd_bus_message *message, const ManagerExplanation *e, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *b1 = NULL, *b2 = NULL;
        const char *comm_s, *policy_s;
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        comm_s = bus_string(e->comm, &b1);
        policy_s = bus_string(e->policy, &b2);
        if (!comm_s || !policy_s)
                return -ENOMEM;
        r = sd_bus_message_append(reply, "sss", comm_s, policy_s, strempty(e->cpus));
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        STRV_FOREACH (line, e->explanation) {
                r = bus_append_string(reply, *line);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "(ss)");
        if (r < 0)
                return r;
        for (char **u = e->unmatched; u && u[0] && u[1]; u += 2) {
                _cleanup_free_ char *c1 = NULL, *c2 = NULL;
                const char *name = bus_string(u[0], &c1), *why = bus_string(u[1], &c2);

                if (!name || !why)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(ss)", name, why);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "(ussssuttt)");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(reply);
        return 0;
}

static int explain_reply_threads(sd_bus_message *reply, const ManagerExplanation *e, size_t from) {
        int r;

        for (size_t i = from; i < e->n_threads; i++) {
                const ManagerExplainThread *t = &e->threads[i];
                _cleanup_free_ char *c1 = NULL, *c2 = NULL;
                const char *comm = bus_string(t->comm, &c1), *rule = bus_string(t->rule, &c2);

                if (!comm || !rule)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(ussssuttt)", (uint32_t)t->tid, comm, rule, strempty(t->applied),
                        strempty(t->kernel), t->last_cpu, t->migrations, t->run_delay_ns, t->nonvoluntary);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int explain_reply_send(sd_bus_message *reply) {
        int r = sd_bus_message_close_container(reply);

        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static bool has_prefix(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- callers: who asks, what /proc lets them see, their share of the loop ---- */

#define CALLER_GIDS_MAX  64
#define CALLER_CACHE_MAX 64

typedef struct Caller {
        uid_t uid; /* effective */
        gid_t gid;
        gid_t gids[CALLER_GIDS_MAX]; /* supplementary (the first CALLER_GIDS_MAX) */
        int n_gids;
} Caller;

/* The credentials of recent senders by unique name: a unique name is never given to another
 * connection, and the bus reports the credentials of when it connected, so they can't change.
 * Asking the bus costs a round trip (GetConnectionCredentials) on the loop at every call. */
typedef struct CallerEntry {
        char *name;
        Caller caller;
        uint64_t used;
} CallerEntry;

struct BusCallers {
        CallerEntry entries[CALLER_CACHE_MAX];
        uint64_t clock;
};

static void bus_callers_free(Manager *m) {
        if (!m->bus_callers)
                return;
        for (size_t i = 0; i < CALLER_CACHE_MAX; i++)
                free(m->bus_callers->entries[i].name);
        m->bus_callers = mfree(m->bus_callers);
}

static int caller_get(Manager *m, sd_bus_message *message, Caller *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *sender = sd_bus_message_get_sender(message);
        CallerEntry *slot = NULL;
        const gid_t *gids = NULL;
        Caller c = {};
        int r, n;

        if (!m->bus_callers && !(m->bus_callers = calloc(1, sizeof(struct BusCallers))))
                return -ENOMEM;
        if (sender)
                for (size_t i = 0; i < CALLER_CACHE_MAX; i++) {
                        CallerEntry *e = &m->bus_callers->entries[i];

                        if (e->name && streq(e->name, sender)) {
                                e->used = ++m->bus_callers->clock;
                                *ret = e->caller;
                                return 0;
                        }
                        if (!slot || !e->name || (slot->name && e->used < slot->used))
                                slot = e;
                }

        r = sd_bus_query_sender_creds(
                message,
                SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_SUPPLEMENTARY_GIDS |
                        SD_BUS_CREDS_AUGMENT,
                &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &c.uid);
        if (r < 0)
                return r;
        if (sd_bus_creds_get_egid(creds, &c.gid) < 0)
                c.gid = (gid_t)-1;
        n = sd_bus_creds_get_supplementary_gids(creds, &gids);
        c.n_gids = n < 0 ? 0 : MIN(n, CALLER_GIDS_MAX);
        if (c.n_gids > 0)
                memcpy(c.gids, gids, c.n_gids * sizeof(gid_t));
        if (slot) {
                char *name = strdup(sender);

                if (name) {
                        free(slot->name);
                        *slot = (CallerEntry){.name = name, .caller = c, .used = ++m->bus_callers->clock};
                }
        }
        *ret = c;
        return 0;
}

/* hidepid= and gid= of the /proc the daemon sees (proc(5)): 0 off, 1 noaccess, 2 invisible, 4
 * ptraceable. Read at each call: an administrator may remount. */
static int proc_hidepid(gid_t *ret_gid, bool *ret_has_gid) {
        _cleanup_free_ char *text = NULL;
        int hidepid = 0;

        *ret_has_gid = false;
        if (read_full_file("/proc/self/mountinfo", 4 * 1024 * 1024, 0, &text, NULL) < 0)
                return 0;
        for (char *line = text, *next; line && *line; line = next) {
                char *sep, *opt, *save = NULL;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                /* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE SUPEROPTS" */
                if (!strstr(line, " /proc ") || !(sep = strstr(line, " - proc ")))
                        continue;
                sep = strchr(sep + strlen(" - proc "), ' ');
                if (!sep)
                        continue;
                hidepid = 0;
                *ret_has_gid = false;
                for (opt = strtok_r(sep + 1, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
                        if (has_prefix(opt, "hidepid=")) {
                                const char *v = opt + strlen("hidepid=");

                                hidepid = streq(v, "noaccess") || streq(v, "1")   ? 1
                                        : streq(v, "invisible") || streq(v, "2")  ? 2
                                        : streq(v, "ptraceable") || streq(v, "4") ? 4
                                                                                  : 0;
                        } else if (has_prefix(opt, "gid=")) {
                                *ret_gid = (gid_t)strtoul(opt + strlen("gid="), NULL, 10);
                                *ret_has_gid = true;
                        }
                }
        }
        return hidepid;
}

/*
 * Whether the caller could read pid's /proc files that need ptrace access (PTRACE_MODE_READ:
 * /proc/PID/exe, and every file under hidepid=): root, or the same uid and gid in every one of
 * the target's real, effective, saved and filesystem ids (ptrace_may_access() also asks for a
 * dumpable task and no LSM veto; this is at least as strict on the ids).
 */
static bool caller_may_ptrace(const Caller *c, pid_t pid) {
        uid_t uids[4];
        gid_t gids[4];

        if (c->uid == 0)
                return true;
        if (procfs_read_ids(NULL, pid, uids, gids) < 0)
                return false;
        for (int i = 0; i < 4; i++)
                if (uids[i] != c->uid || gids[i] != c->gid)
                        return false;
        return true;
}

static bool caller_in_group(const Caller *c, gid_t gid) {
        if (c->gid == gid)
                return true;
        for (int i = 0; i < c->n_gids; i++)
                if (c->gids[i] == gid)
                        return true;
        return false;
}

/*
 * What /proc shows the caller of pid, given hidepid (proc_hidepid()): 0 everything, -EACCES the
 * PID but none of its files (hidepid=noaccess), -ESRCH not even the PID (invisible,
 * ptraceable). The kernel's rule (has_pid_permissions()): a member of gid= sees all, otherwise
 * ptrace read access is needed.
 */
static int caller_visibility(const Caller *c, pid_t pid, int hidepid, gid_t gid, bool has_gid) {
        if (c->uid == 0 || hidepid == 0)
                return 0;
        if (has_gid && caller_in_group(c, gid))
                return 0;
        if (caller_may_ptrace(c, pid))
                return 0;
        return hidepid == 1 ? -EACCES : -ESRCH;
}

/* Replaces the executable path in the "exe ..." explanation line: /proc/PID/exe needs ptrace
 * access, which the caller does not have. */
static int redact_exe(ManagerExplanation *e) {
        for (char **line = e->explanation; line && *line; line++) {
                char *q, *end, *n;

                if (!has_prefix(*line, "exe \"") || !(q = *line + strlen("exe ")) ||
                    !(end = strstr(q + 1, "\" ")))
                        continue;
                if (asprintf(
                            &n, "exe (not shown: reading /proc/%d/exe needs ptrace access)%s", (int)e->pid,
                            end + 1) < 0)
                        return -ENOMEM;
                free(*line);
                *line = n;
        }
        return 0;
}

/* Busy, with how long to wait, for a caller beyond its share. */
static int reply_busy(sd_bus_error *error, uid_t uid, uint64_t wait_usec) {
        return sd_bus_error_setf(
                error, AFFINITYD_ERROR_BUSY,
                "Calls of uid %u have used their share of affinityd's time; try again in %" PRIu64 " ms",
                (unsigned)uid, (wait_usec + 999) / 1000);
}

static int method_list_processes(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ TrackedProcess **list = NULL;
        Caller c = {};
        Manager *m = userdata;
        uint64_t t0 = now_monotonic_usec(), wait;
        size_t n = 0;
        gid_t gid = 0;
        bool has_gid = false;
        int hidepid = 0, r;

        r = caller_get(m, message, &c);
        if (r < 0)
                return r;
        if (c.uid != 0) {
                wait = caller_budget_wait(&m->bus_budget, c.uid, t0);
                if (wait > 0)
                        return reply_busy(error, c.uid, wait);
                hidepid = proc_hidepid(&gid, &has_gid);
        }
        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(usss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
                _cleanup_free_ char *text = NULL, *b1 = NULL, *b2 = NULL;
                const char *comm, *policy;

                /* Under hidepid=, what /proc would show the caller. */
                if (hidepid > 0 && caller_visibility(&c, list[i]->pid, hidepid, gid, has_gid) < 0)
                        continue;
                r = tracked_process_cpus(list[i], &cpus);
                if (r < 0)
                        return r;
                r = cpuset_format_list(&cpus, &text);
                if (r < 0)
                        return r;
                /* comm is whatever bytes the process named itself with */
                comm = bus_string(list[i]->comm, &b1);
                policy = bus_string(manager_process_policy_name(m, list[i]), &b2);
                if (!comm || !policy)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(usss)", (uint32_t)list[i]->pid, comm, policy, text);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        if (c.uid != 0)
                caller_budget_charge(&m->bus_budget, c.uid, now_monotonic_usec() - t0, now_monotonic_usec());
        return sd_bus_send(NULL, reply, NULL);
}

/* ---- Explain(), answered in steps ---- */

/*
 * The threads are read on the worker's thread (worker.h), EXPLAIN_READ_THREADS at a time (~4 ms
 * of /proc reads, at nice 19); the loop only merges them with the tracked state and appends them
 * to the reply (a few µs each). When the worker has no room, a step reads EXPLAIN_STEP_THREADS on
 * the loop instead. Both kinds of time count against an unprivileged caller's share.
 */
#define EXPLAIN_READ_THREADS MANAGER_EXPLAIN_READ_MAX
#define EXPLAIN_STEP_THREADS 8  /* ~0.5 ms of /proc reads on the loop */
#define EXPLAIN_JOBS_PER_UID 2U /* being answered at once, of one unprivileged uid */

typedef struct ExplainJob {
        Manager *manager;
        sd_bus_message *message;
        sd_bus_message *reply; /* explain_reply_begin()'s, e->threads[..n_sent] appended */
        size_t n_sent;
        uid_t uid;
        ManagerExplanation *e;
        sd_event_source *source; /* the next step, within the caller's share; off while the worker
                                  * reads (e is then the worker's, until on_explain_read()) */
        struct ExplainJob *next;
} ExplainJob;

static void explain_job_free(ExplainJob *j) {
        Manager *m = j->manager;

        for (ExplainJob **x = &m->explain_jobs; *x; x = &(*x)->next)
                if (*x == j) {
                        *x = j->next;
                        m->n_explain_jobs--;
                        break;
                }
        sd_event_source_disable_unref(j->source);
        sd_bus_message_unref(j->reply);
        sd_bus_message_unref(j->message);
        manager_explanation_free(j->e);
        free(j);
}

/* The daemon frees the worker first (manager_free()): no job is then being read. */
void manager_bus_jobs_free(Manager *m) {
        while (m->explain_jobs)
                explain_job_free(m->explain_jobs);
        bus_callers_free(m);
}

/* On the loop, after a read (r: its result): merges, appends, and answers or schedules the next
 * step within the caller's share. cost_usec: the read's time, counted with the merge's. */
static void explain_job_continue(ExplainJob *j, int r, uint64_t cost_usec) {
        Manager *m = j->manager;
        uint64_t t0 = now_monotonic_usec(), wait = 0;
        int k;

        k = manager_explain_merge(m, j->e);
        if (r >= 0)
                r = k;
        if (r >= 0) {
                k = explain_reply_threads(j->reply, j->e, j->n_sent);
                j->n_sent = j->e->n_threads;
                if (k < 0)
                        r = k;
        }
        if (j->uid != 0) {
                uint64_t t1 = now_monotonic_usec();

                caller_budget_charge(&m->bus_budget, j->uid, cost_usec + (t1 - t0), t1);
                wait = caller_budget_wait(&m->bus_budget, j->uid, t1);
        }
        if (r == 0) {
                /* More threads: after whatever else is pending, and within the caller's share. */
                r = sd_event_source_set_time(j->source, wait > 0 ? t0 + wait : 0);
                if (r >= 0)
                        r = sd_event_source_set_enabled(j->source, SD_EVENT_ONESHOT);
                if (r >= 0)
                        return;
        }
        if (r < 0)
                (void)sd_bus_reply_method_errnof(j->message, r, "Explain failed: %m");
        else
                (void)explain_reply_send(j->reply);
        explain_job_free(j);
}

/* On the worker's thread. */
static void explain_read_on_worker(WorkerJob *job) {
        ExplainJob *j = job->userdata;

        job->result = manager_explain_read(j->e, EXPLAIN_READ_THREADS);
}

static void on_explain_read(const WorkerJob *job) {
        ExplainJob *j = job->userdata;

        explain_job_continue(j, job->result, job->cpu_usec);
}

static int on_explain_step(sd_event_source *s, uint64_t usec, void *userdata) {
        ExplainJob *j = userdata;
        uint64_t t0;
        int r;

        r = worker_submit(
                j->manager->worker,
                &(WorkerJob){
                        .run = explain_read_on_worker,
                        .done = on_explain_read,
                        .userdata = j,
                        .pid = j->e->pid});
        if (r >= 0)
                return 0;
        /* No room on the worker: a small step here. */
        t0 = now_monotonic_usec();
        r = manager_explain_read(j->e, EXPLAIN_STEP_THREADS);
        explain_job_continue(j, r, now_monotonic_usec() - t0);
        return 0;
}

static int method_explain(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(manager_explanation_freep) ManagerExplanation *e = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Caller c = {};
        Manager *m = userdata;
        ExplainJob *j;
        unsigned n_uid = 0;
        uint64_t t0, wait;
        uint32_t pid;
        gid_t gid = 0;
        bool has_gid = false;
        int hidepid, r;

        r = sd_bus_message_read(message, "u", &pid);
        if (r < 0)
                return r;
        r = caller_get(m, message, &c);
        if (r < 0)
                return r;
        if (c.uid != 0) {
                wait = caller_budget_wait(&m->bus_budget, c.uid, now_monotonic_usec());
                if (wait > 0)
                        return reply_busy(error, c.uid, wait);
        }
        for (ExplainJob *x = m->explain_jobs; x; x = x->next)
                n_uid += x->uid == c.uid;
        if (m->n_explain_jobs >= EXPLAIN_JOBS_MAX || (c.uid != 0 && n_uid >= EXPLAIN_JOBS_PER_UID))
                return sd_bus_error_setf(
                        error, AFFINITYD_ERROR_BUSY, "%u Explain calls are being answered; try again later",
                        c.uid != 0 && n_uid >= EXPLAIN_JOBS_PER_UID ? n_uid : m->n_explain_jobs);

        hidepid = c.uid != 0 ? proc_hidepid(&gid, &has_gid) : 0;
        r = pid > INT32_MAX ? -ESRCH : caller_visibility(&c, (pid_t)pid, hidepid, gid, has_gid);
        if (r == -EACCES)
                return sd_bus_error_setf(
                        error, SD_BUS_ERROR_ACCESS_DENIED,
                        "/proc is mounted with hidepid=noaccess: process %" PRIu32 " is not yours", pid);
        t0 = now_monotonic_usec();
        if (r >= 0)
                r = manager_explain_begin(m, (pid_t)pid, &e);
        if (c.uid != 0)
                caller_budget_charge(&m->bus_budget, c.uid, now_monotonic_usec() - t0, now_monotonic_usec());
        if (r == -ESRCH)
                return sd_bus_error_setf(error, AFFINITYD_ERROR_NO_SUCH_PROCESS, "No process %" PRIu32, pid);
        if (r < 0)
                return r;
        /* Visible, but the executable is behind ptrace access (the PID may be a thread's). */
        if (c.uid != 0 && !caller_may_ptrace(&c, e->pid)) {
                r = redact_exe(e);
                if (r < 0)
                        return r;
        }
        r = explain_reply_begin(message, e, &reply);
        if (r < 0)
                return r;
        if (manager_explain_done(e))
                return explain_reply_send(reply);

        j = calloc(1, sizeof(ExplainJob));
        if (!j)
                return -ENOMEM;
        *j = (ExplainJob){
                .manager = m,
                .message = sd_bus_message_ref(message),
                .reply = TAKE_PTR(reply),
                .uid = c.uid,
                .e = TAKE_PTR(e)};
        j->next = m->explain_jobs;
        m->explain_jobs = j;
        m->n_explain_jobs++;
        r = sd_event_add_time(
                sd_bus_get_event(sd_bus_message_get_bus(message)), &j->source, CLOCK_MONOTONIC, 0, 0,
                on_explain_step, j);
        if (r >= 0)
                r = sd_event_source_set_priority(j->source, AFFINITYD_BUS_EVENT_PRIORITY + 1);
        if (r < 0) {
                explain_job_free(j);
                return r;
        }
        (void)sd_event_source_set_description(j->source, "explain-step");
        return 1; /* answered by on_explain_step() */
}

static int method_rescan(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        Manager *m = userdata;
        uid_t euid;
        int r;

        r = sd_bus_query_sender_creds(message, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &euid);
        if (r < 0 || euid != 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Only root may rescan.");

        r = manager_rescan_all(m);
        if (r == -EOPNOTSUPP)
                return sd_bus_error_set(
                        error, AFFINITYD_ERROR_NOT_SUPPORTED,
                        "Rescan is not supported with --topology= (no process of this machine is managed).");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Rescan failed: %m");
        return sd_bus_reply_method_return(message, NULL);
}

/* The device placement counters by property name (DevicePlacementCounters fields). */
static const struct {
        const char *property;
        size_t offset;
} device_counters[] = {
        {"IrqsPlaced", offsetof(DevicePlacementCounters, irqs_placed)},
        {"IrqRefusals", offsetof(DevicePlacementCounters, irq_refusals)},
        {"QueuesPlaced", offsetof(DevicePlacementCounters, queues_placed)},
        {"QueueFailures", offsetof(DevicePlacementCounters, queue_failures)},
        {"DeviceRestores", offsetof(DevicePlacementCounters, restores)},
        {"DeviceDriftDetected", offsetof(DevicePlacementCounters, drift_detected)},
        {"DeviceDriftCorrections", offsetof(DevicePlacementCounters, drift_corrections)},
        {"DeviceEvents", offsetof(DevicePlacementCounters, device_events)},
};

/* 0 while there is no device placement (m->devices NULL). */
static int property_get_device_counter(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const DevicePlacementCounters *c = m->devices ? device_placement_counters(m->devices) : NULL;
        uint64_t v = 0;

        for (size_t i = 0; c && i < ELEMENTSOF(device_counters); i++)
                if (streq(device_counters[i].property, property)) {
                        memcpy(&v, (const uint8_t *)c + device_counters[i].offset, sizeof(v));
                        break;
                }
        return sd_bus_message_append(reply, "t", v);
}

/* Every IRQ with its rule and state: a(ussssss) irq, name, rule, requested cpu-list, effective
 * cpu-list ("" unknown), state, reason. Empty while there is no device placement. */
static int method_list_irqs(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const IrqStatus *list = NULL;
        Manager *m = userdata;
        size_t n = 0;
        int r;

        if (m->devices) {
                r = device_placement_list_irqs(m->devices, &list, &n);
                if (r < 0)
                        return r;
        }

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ussssss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *requested = NULL, *effective = NULL, *b1 = NULL, *b2 = NULL, *b3 = NULL;
                const char *name, *rule, *reason;

                r = cpuset_format_list(&list[i].requested, &requested);
                if (r < 0)
                        return r;
                r = cpuset_format_list(&list[i].effective, &effective);
                if (r < 0)
                        return r;
                /* action names come from drivers, rule names from files: bytes either way */
                name = bus_string(list[i].name, &b1);
                rule = bus_string(list[i].rule, &b2);
                reason = bus_string(list[i].reason, &b3);
                if (!name || !rule || !reason)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(ussssss)", (uint32_t)list[i].irq, name, rule, requested, effective,
                        strempty(list[i].state), reason);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        return sd_bus_send(NULL, reply, NULL);
}

/* Every rps/xps setting of every queue: a(ssssuss) device, queue, kind, cpu-list ("" empty
 * mask), flow_cnt, rule, state. Empty while there is no device placement. */
static int method_list_net_queues(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const NetQueueStatus *list = NULL;
        Manager *m = userdata;
        size_t n = 0;
        int r;

        if (m->devices) {
                r = device_placement_list_queues(m->devices, &list, &n);
                if (r < 0)
                        return r;
        }

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssssuss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *cpus = NULL, *b1 = NULL, *b2 = NULL;
                const char *device, *rule;

                r = cpuset_format_list(&list[i].cpus, &cpus);
                if (r < 0)
                        return r;
                device = bus_string(list[i].device, &b1);
                rule = bus_string(list[i].rule, &b2);
                if (!device || !rule)
                        return -ENOMEM;
                r = sd_bus_message_append(
                        reply, "(ssssuss)", device, strempty(list[i].queue), strempty(list[i].kind), cpus,
                        list[i].flow_cnt, rule, strempty(list[i].state));
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        return sd_bus_send(NULL, reply, NULL);
}

/*
 * Annotations: Version never changes (const). State, DegradedReasons, Discovery, Topology,
 * OnlineCPUs, ReservedCPUs, PolicyFiles, LastReloadUSec, LastReloadError and Reloads change only
 * at state changes, reloads, CPU hotplug re-plans and the fallback to /proc polling, where
 * the Manager reports PropertiesChanged (Manager.report; emits-change). The counters (the device ones too),
 * ManagedProcesses and the latency quantiles change with every event; signalling each change
 * would flood the bus, so they carry no emits flag, which sd-bus publishes as
 * EmitsChangedSignal="false": read them when needed.
 *
 * Explain's per-thread migrations, run-queue delay and involuntary switches are counted since
 * the daemon last set the thread's CPUs: a low-priority pass after each placement samples the
 * baseline. A thread sampled by no such pass yet (just placed, or never placed: not managed)
 * reports totals since it started. UINT64_MAX: the kernel does not provide the counter.
 */
const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),

        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", property_get_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "DegradedReasons", "as", property_get_degraded_reasons, 0,
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Discovery", "s", property_get_discovery, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Topology", "s", property_get_topology, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("OnlineCPUs", "s", property_get_cpus, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ReservedCPUs", "s", property_get_cpus, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ManagedProcesses", "u", NULL, offsetof(Manager, n_processes), 0),
        SD_BUS_PROPERTY("EventsReceived", "t", NULL, offsetof(Manager, counters.events_received), 0),
        SD_BUS_PROPERTY("EventsLost", "t", NULL, offsetof(Manager, counters.events_lost), 0),
        SD_BUS_PROPERTY("MatchesUndecided", "t", NULL, offsetof(Manager, counters.matches_undecided), 0),
        SD_BUS_PROPERTY("Rescans", "t", NULL, offsetof(Manager, counters.rescans), 0),
        SD_BUS_PROPERTY("ProcessesMatched", "t", NULL, offsetof(Manager, counters.processes_matched), 0),
        SD_BUS_PROPERTY("ProcessesPlaced", "t", NULL, offsetof(Manager, counters.processes_placed), 0),
        SD_BUS_PROPERTY("ProcessesVanished", "t", NULL, offsetof(Manager, counters.processes_vanished), 0),
        SD_BUS_PROPERTY("PlacementFailures", "t", NULL, offsetof(Manager, counters.placement_failures), 0),
        SD_BUS_PROPERTY("DriftDetected", "t", NULL, offsetof(Manager, counters.drift_detected), 0),
        SD_BUS_PROPERTY("DriftCorrections", "t", NULL, offsetof(Manager, counters.drift_corrections), 0),
        SD_BUS_PROPERTY("Restores", "t", NULL, offsetof(Manager, counters.restores), 0),
        SD_BUS_PROPERTY(
                "Reloads", "t", NULL, offsetof(Manager, counters.reloads),
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "PolicyFiles", "as", property_get_policy_files, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "LastReloadUSec", "t", NULL, offsetof(Manager, last_reload_usec),
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(
                "LastReloadError", "s", property_get_string, offsetof(Manager, last_reload_error),
                SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("PlacementLatencyP50USec", "t", property_get_latency, 0, 0),
        SD_BUS_PROPERTY("PlacementLatencyP99USec", "t", property_get_latency, 0, 0),
        SD_BUS_PROPERTY("PlacementLatencyMaxUSec", "t", property_get_latency, 0, 0),
        SD_BUS_PROPERTY("IrqsPlaced", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("IrqRefusals", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("QueuesPlaced", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("QueueFailures", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("DeviceRestores", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("DeviceDriftDetected", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("DeviceDriftCorrections", "t", property_get_device_counter, 0, 0),
        SD_BUS_PROPERTY("DeviceEvents", "t", property_get_device_counter, 0, 0),

        SD_BUS_METHOD_WITH_NAMES(
                "ListPolicies", NULL, "", "a(ssuss)", SD_BUS_PARAM(policies), method_list_policies,
                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "ListProcesses", NULL, "", "a(usss)", SD_BUS_PARAM(processes), method_list_processes,
                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "ListIrqs", NULL, "", "a(ussssss)", SD_BUS_PARAM(irqs), method_list_irqs,
                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "ListNetQueues", NULL, "", "a(ssssuss)", SD_BUS_PARAM(queues), method_list_net_queues,
                SD_BUS_VTABLE_UNPRIVILEGED),
        /* Unprivileged for sd-bus's own check: method_reload checks the sender's euid itself,
         * so the refusal is the documented AccessDenied on any bus. */
        SD_BUS_METHOD_WITH_NAMES("Reload", NULL, "", NULL, "", method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Rescan", NULL, "", NULL, "", method_rescan, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES(
                "Explain", "u", SD_BUS_PARAM(pid), "sssasa(ss)a(ussssuttt)",
                SD_BUS_PARAM(comm) SD_BUS_PARAM(policy) SD_BUS_PARAM(cpus) SD_BUS_PARAM(explanation)
                        SD_BUS_PARAM(unmatched) SD_BUS_PARAM(threads),
                method_explain, SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_NAMES(
                "ProcessPlaced", "usss",
                SD_BUS_PARAM(pid) SD_BUS_PARAM(comm) SD_BUS_PARAM(policy) SD_BUS_PARAM(cpus), 0),
        SD_BUS_SIGNAL_WITH_NAMES(
                "PlacementFailed", "usss",
                SD_BUS_PARAM(pid) SD_BUS_PARAM(comm) SD_BUS_PARAM(policy) SD_BUS_PARAM(error), 0),
        SD_BUS_SIGNAL_WITH_NAMES("Reloaded", "bs", SD_BUS_PARAM(success) SD_BUS_PARAM(error), 0),
        SD_BUS_SIGNAL_WITH_NAMES(
                "DriftDetected", "sssss",
                SD_BUS_PARAM(kind) SD_BUS_PARAM(target) SD_BUS_PARAM(policy) SD_BUS_PARAM(found)
                        SD_BUS_PARAM(action),
                0),

        SD_BUS_VTABLE_END,
};

static int manager_bus_emit_changed_strv(Manager *m, char **properties) {
        if (!m->bus)
                return 0;
        return sd_bus_emit_properties_changed_strv(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, properties);
}

static int manager_bus_emit_process_placed(
        Manager *m, pid_t pid, const char *comm, const char *policy, const char *cpus) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL;
        const char *c, *p;

        if (!m || !m->bus)
                return 0;
        c = bus_string(comm, &b1);
        p = bus_string(policy, &b2);
        if (!c || !p)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ProcessPlaced", "usss", (uint32_t)pid,
                c, p, strempty(cpus));
}

static int manager_bus_emit_placement_failed(
        Manager *m, pid_t pid, const char *comm, const char *policy, const char *error) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL, *b3 = NULL;
        const char *c, *p, *e;

        if (!m || !m->bus)
                return 0;
        c = bus_string(comm, &b1);
        p = bus_string(policy, &b2);
        e = bus_string(error, &b3);
        if (!c || !p || !e)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "PlacementFailed", "usss",
                (uint32_t)pid, c, p, e);
}

static int manager_bus_emit_reloaded(Manager *m, bool success, const char *error) {
        _cleanup_free_ char *b = NULL;
        const char *e;

        if (!m || !m->bus)
                return 0;
        e = bus_string(error, &b);
        if (!e)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Reloaded", "bs", (int)success, e);
}

static int manager_bus_emit_drift_detected(
        Manager *m, const char *kind, const char *target, const char *policy, const char *found,
        const char *action) {
        _cleanup_free_ char *b1 = NULL, *b2 = NULL, *b3 = NULL;
        const char *t, *p, *f;

        if (!m || !m->bus)
                return 0;
        t = bus_string(target, &b1);
        p = bus_string(policy, &b2);
        f = bus_string(found, &b3);
        if (!t || !p || !f)
                return -ENOMEM;
        return sd_bus_emit_signal(
                m->bus, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "DriftDetected", "sssss",
                strempty(kind), t, p, f, strempty(action));
}

const ManagerReport manager_bus_report = {
        .changed = manager_bus_emit_changed_strv,
        .process_placed = manager_bus_emit_process_placed,
        .placement_failed = manager_bus_emit_placement_failed,
        .reloaded = manager_bus_emit_reloaded,
        .drift_detected = manager_bus_emit_drift_detected,
};
