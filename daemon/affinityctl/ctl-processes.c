/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl policies, processes and explain: the daemon's policies (ListPolicies), the
 * processes it manages (ListProcesses) and why one process is placed as it is (Explain).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bus-names.h"
#include "ctl-bus.h"
#include "ctl.h"
#include "macro.h"

/* ---- policies ---- */

static const Column policy_columns[] = {
        {"NAME", "name"}, {"FILE", "file"},   {"LINE", "line"},
        {"CPUS", "cpus"}, {"STATE", "state"}, {"PENDING", "pending_reason", COLUMN_HIDE_EMPTY},
};

static int policy_read_row(sd_bus_message *reply, Table *t, void *userdata) {
        size_t *n_pending = userdata;
        const char *name, *file, *cpus, *reason;
        uint32_t line;
        int r;

        r = sd_bus_message_read(reply, "(ssuss)", &name, &file, &line, &cpus, &reason);
        if (r < 0)
                return r;
        if (reason[0])
                (*n_pending)++;
        return table_add_row(
                t,
                (Cell[]){
                        CELL_STR(name), CELL_STR_DASH(file),
                        cell_with_text(CELL_UINT(line), line > 0 ? NULL : "-"),
                        cell_with_text(CELL_STR_DASH(cpus), reason[0] ? "-" : NULL),
                        CELL_STR(reason[0] ? "pending" : "active"), CELL_STR(reason)});
}

static int policy_summary(char **ret, size_t n, const void *userdata) {
        const size_t *n_pending = userdata;

        return asprintf(
                ret, "%zu polic%s listed, %zu active, %zu pending.", n, n == 1 ? "y" : "ies", n - *n_pending,
                *n_pending);
}

int verb_policies(char **args) {
        static const ListVerb v = {
                .method = "ListPolicies",
                .what = "list the daemon's policies",
                .contents = "(ssuss)",
                .list_name = "policy list",
                .json_key = "policies",
                .columns = policy_columns,
                .n_columns = ELEMENTSOF(policy_columns),
                .read_row = policy_read_row,
                .summary = policy_summary,
        };
        size_t n_pending = 0;

        return ctl_run_list(&v, &n_pending);
}

/* ---- processes ---- */

static const Column process_columns[] = {
        {"PID", "pid"},
        {"COMM", "comm"},
        {"POLICY", "policy"},
        {"CPUS", "cpus"},
};

static int process_read_row(sd_bus_message *reply, Table *t, void *userdata) {
        const char *comm, *policy, *cpus;
        uint32_t pid;
        int r;

        r = sd_bus_message_read(reply, "(usss)", &pid, &comm, &policy, &cpus);
        if (r < 0)
                return r;
        return table_add_row(
                t,
                (Cell[]){CELL_UINT(pid), CELL_STR_DASH(comm), CELL_STR_DASH(policy), CELL_STR_DASH(cpus)});
}

static int process_summary(char **ret, size_t n, const void *userdata) {
        return asprintf(ret, "%zu process%s listed.", n, n == 1 ? "" : "es");
}

int verb_processes(char **args) {
        static const ListVerb v = {
                .method = "ListProcesses",
                .what = "list the daemon's processes",
                .contents = "(usss)",
                .list_name = "process list",
                .json_key = "processes",
                .columns = process_columns,
                .n_columns = ELEMENTSOF(process_columns),
                .read_row = process_read_row,
                .summary = process_summary,
        };

        return ctl_run_list(&v, NULL);
}

/* ---- explain ---- */

#define EXPLAIN_LABEL_WIDTH 9

static const Column unmatched_columns[] = {
        {"POLICY", "policy"},
        {"REASON", "reason"},
};

static const Column thread_columns[] = {
        {"TID", "tid"},           {"COMM", "comm"}, {"RULE", "rule"},       {"APPLIED", "applied"},
        {"NOW", "cpus"},          {"CPU", "cpu"},   {"MIGR", "migrations"}, {"RUNDELAY", "run_delay_usec"},
        {"INVOL", "involuntary"},
};

/* An Explain() reply. */
typedef struct Explanation {
        char *comm, *policy, *cpus;
        char **lines;
        Table unmatched; /* the policies that don't match, and why */
        Table threads;
} Explanation;

static void explanation_done(Explanation *e) {
        free(e->comm);
        free(e->policy);
        free(e->cpus);
        strv_free(e->lines);
        table_done(&e->unmatched);
        table_done(&e->threads);
}

/* Reads an Explain() reply, (sssasa(ss)a(ussssuttt)), into e. Returns 0 or a negative errno. */
static int read_explanation(sd_bus_message *reply, Explanation *e) {
        const char *comm, *policy, *cpus;
        int r;

        r = sd_bus_message_read(reply, "sss", &comm, &policy, &cpus);
        if (r < 0)
                return r;
        e->comm = strdup(comm);
        e->policy = strdup(policy);
        e->cpus = strdup(cpus);
        if (!e->comm || !e->policy || !e->cpus)
                return -ENOMEM;
        r = sd_bus_message_read_strv(reply, &e->lines);
        if (r < 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "(ss)");
        while (r >= 0) {
                const char *name, *why;

                r = sd_bus_message_read(reply, "(ss)", &name, &why);
                if (r <= 0)
                        break;
                r = table_add_row(&e->unmatched, (Cell[]){CELL_STR(name), CELL_STR(why)});
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "(ussssuttt)");
        while (r >= 0) {
                const char *tcomm, *rule, *applied, *now;
                uint32_t tid, cpu;
                uint64_t migrations, run_delay_nsec, involuntary;

                r = sd_bus_message_read(
                        reply, "(ussssuttt)", &tid, &tcomm, &rule, &applied, &now, &cpu, &migrations,
                        &run_delay_nsec, &involuntary);
                if (r <= 0)
                        break;
                /* migrations UINT64_MAX: the kernel doesn't say */
                r = table_add_row(
                        &e->threads,
                        (Cell[]){
                                CELL_UINT(tid), CELL_STR_DASH(tcomm), CELL_STR_DASH(rule),
                                CELL_STR_DASH(applied), CELL_STR_DASH(now), CELL_UINT(cpu),
                                migrations == UINT64_MAX ? CELL_NONE : CELL_UINT(migrations),
                                CELL_NSEC(run_delay_nsec), CELL_UINT(involuntary)});
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        return r < 0 ? r : 0;
}

/* "explain: \"%s\" is not a PID." unless s is one. Returns 0 with *ret set, or EXIT_USAGE. */
static int parse_pid(const char *s, uint32_t *ret) {
        unsigned long pid;
        char *end;

        errno = 0;
        pid = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end || s[0] == '-' || pid == 0 || pid > INT32_MAX) {
                fprintf(stderr, "explain: \"%s\" is not a PID.\n", s);
                return EXIT_USAGE;
        }
        *ret = (uint32_t)pid;
        return 0;
}

int verb_explain(char **args) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(explanation_done) Explanation e = {
                .unmatched = TABLE_INIT(unmatched_columns),
                .threads = TABLE_INIT(thread_columns),
        };
        uint32_t pid;
        int r;

        r = parse_pid(args[0], &pid);
        if (r > 0)
                return r;
        r = ctl_connect(&bus);
        if (r > 0)
                return r;

        r = ctl_call(bus, AFFINITYD_BUS_INTERFACE, "Explain", 0, &error, &reply, "u", pid);
        if (r < 0) {
                if (!sd_bus_error_has_name(&error, AFFINITYD_ERROR_NO_SUCH_PROCESS))
                        return ctl_call_failed("explain the process", r, &error);
                fprintf(stderr, "%s\n", error.message ?: "No such process.");
                return EXIT_NO_SUCH_PROCESS;
        }
        r = read_explanation(reply, &e);
        if (r < 0) {
                fprintf(stderr, "Failed to parse the daemon's explanation: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }

        /* "-" for no policy, like the tables: a policy may be named "none". */
        Cell cpus = cell_with_text(CELL_STR(e.cpus), e.cpus[0] ? NULL : "not set");
        cpus.hidden = e.policy[0] == 0;
        const Field fields[] = {
                {"pid", "PID", CELL_UINT(pid)},
                {"comm", "Comm", CELL_STR(e.comm)},
                {"policy", "Policy", CELL_STR_DASH(e.policy)},
                {"cpus", "CPUs", cpus},
                {"explanation", "Why", CELL_STRV(e.lines)},
                {"unmatched", "Unmatched", CELL_TABLE(&e.unmatched)},
                {"threads", NULL, CELL_TABLE(&e.threads)},
        };
        output_record(fields, ELEMENTSOF(fields), EXPLAIN_LABEL_WIDTH);
        return EXIT_OK;
}
