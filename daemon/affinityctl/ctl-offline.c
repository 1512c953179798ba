/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl validate, and the loading validate and plan share (ctl-offline.h): both work
 * offline, with the same loader and planner the daemon uses. validate checks the files as the
 * daemon's loader does (schema, types, values, the checks across files), which does not depend
 * on any machine; with --here it also resolves them against this machine, with
 * --topology=FILE.xml against that hwloc XML topology. plan always resolves: against this
 * machine, or --topology.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpuset.h"
#include "ctl-offline.h"
#include "ctl.h"
#include "macro.h"
#include "plan.h"

int ctl_load_config(char **paths, Config **ret, Diagnostics *diag) {
        if (arg_config_dir)
                return config_load(arg_config_dir, ret, diag);
        if (strv_length(paths) > 0)
                return config_load_paths(paths, ret, diag);
        return config_load(NULL, ret, diag);
}

int ctl_load_topology(Topology **ret) {
        int r;

        if (!arg_topology) {
                r = topology_load_live(ret);
                if (r < 0 && r != -ENOMEM)
                        fprintf(stderr, "Failed to load this machine's topology: %s\n", strerror(-r));
                return r;
        }
        r = topology_load_xml(arg_topology, ret);
        if (r == -EINVAL)
                fprintf(stderr, "Failed to load the topology %s: not an hwloc XML topology\n", arg_topology);
        else if (r < 0 && r != -ENOMEM)
                fprintf(stderr, "Failed to load the topology %s: %s\n", arg_topology, strerror(-r));
        return r;
}

int ctl_print_diagnostics(const Diagnostics *diag) {
        for (size_t i = 0; i < diag->n_items; i++) {
                _cleanup_free_ char *line = NULL;

                if (diagnostic_format(&diag->items[i], &line) < 0)
                        return -ENOMEM;
                fprintf(stderr, "%s\n", line);
        }
        return 0;
}

void ctl_json_location(JsonWriter *w, const Location *l) {
        json_field_string(w, "file", l->file);
        json_field_uint(w, "line", l->line);
        json_field_uint(w, "column", l->column);
}

void ctl_json_diagnostics(JsonWriter *w, const Diagnostics *diag) {
        json_begin_array(w);
        for (size_t i = 0; diag && i < diag->n_items; i++) {
                const Diagnostic *d = &diag->items[i];

                json_begin_object(w);
                json_field_string(w, "level", d->level == DIAGNOSTIC_ERROR ? "error" : "warning");
                ctl_json_location(
                        w, &(const Location){.file = d->file, .line = d->line, .column = d->column});
                json_field_string(w, "message", d->message);
                json_end_object(w);
        }
        json_end_array(w);
}

/*
 * Whether a pending policy is pending because of its CPUs (its cpus: or a thread rule's could
 * not be resolved on the topology), as opposed to user: names this machine's user database
 * doesn't know. The plan says which by where it points (PolicyPlan.pending_location).
 */
static bool pending_on_topology(const PolicyPlan *pp) {
        const Policy *p = pp->policy;

        if (pp->pending_location == &p->cpus.location)
                return true;
        for (size_t k = 0; k < p->n_threads; k++)
                if (pp->pending_location == &p->threads[k].cpus.location)
                        return true;
        return false;
}

/*
 * Adds what planning says as diagnostics: the reserve's warnings, each policy's, and pending
 * policies — warnings when planning against this machine (--here: pending is a normal state
 * there); with --topology (validate --topology asks whether everything resolves there) errors
 * when the CPUs can't be resolved on that topology, warnings for users unknown here (they are
 * looked up in this machine's user database, which says nothing about the target machine).
 */
static int add_plan_diagnostics(const Plan *plan, DiagnosticLevel pending_level, Diagnostics *diag) {
        const Location *rl = &plan->config->reserve_location;
        int r;

        STRV_FOREACH (w, plan->warnings) {
                r = diagnostics_add(diag, DIAGNOSTIC_WARNING, rl->file, rl->line, rl->column, "%s", *w);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < plan->n_policies; i++) {
                const PolicyPlan *pp = &plan->policies[i];
                const Policy *p = pp->policy;

                /* Each at the most precise place the plan knows, else at the policy. */
                if (pp->pending_reason) {
                        const Location *l = pp->pending_location ?: &p->location;

                        if (arg_topology && pending_on_topology(pp))
                                r = diagnostics_add(
                                        diag, pending_level, l->file, l->line, l->column,
                                        "policy \"%s\" can't be resolved on %s: %s", p->name, arg_topology,
                                        pp->pending_reason);
                        else if (arg_topology)
                                r = diagnostics_add(
                                        diag, DIAGNOSTIC_WARNING, l->file, l->line, l->column,
                                        "policy \"%s\" is pending on this machine (users are looked up "
                                        "here, not in %s): %s",
                                        p->name, arg_topology, pp->pending_reason);
                        else
                                r = diagnostics_add(
                                        diag, pending_level, l->file, l->line, l->column,
                                        "policy \"%s\" is pending on this machine: %s", p->name,
                                        pp->pending_reason);
                        if (r < 0)
                                return r;
                }
                for (size_t k = 0; pp->warnings && pp->warnings[k]; k++) {
                        const Location *l = pp->warning_locations ? pp->warning_locations[k] : &p->location;

                        r = diagnostics_add(
                                diag, DIAGNOSTIC_WARNING, l->file, l->line, l->column, "policy \"%s\": %s",
                                p->name, pp->warnings[k]);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static void print_validate_json(bool valid, const Config *c, const Plan *plan, const Diagnostics *diag) {
        JsonWriter w = JSON_WRITER(stdout);

        json_begin_object(&w);
        json_field_bool(&w, "valid", valid);
        json_field_bool(&w, "resolved", plan != NULL);
        json_field_string(&w, "topology", arg_topology);
        json_field_strv(&w, "files", c ? c->files : NULL);

        json_key(&w, "policies");
        json_begin_array(&w);
        for (size_t i = 0; c && i < c->n_policies; i++) {
                const Policy *p = &c->policies[i];
                const PolicyPlan *pp = plan ? &plan->policies[i] : NULL;
                _cleanup_free_ char *cpus = NULL;

                if (pp && !pp->pending_reason && pp->has_cpus)
                        cpus = cpuset_to_string(&pp->cpus);

                json_begin_object(&w);
                json_field_string(&w, "name", p->name);
                ctl_json_location(&w, &p->location);
                json_field_string(&w, "cpus", cpus);
                json_field_string(&w, "pending_reason", pp ? pp->pending_reason : NULL);
                json_end_object(&w);
        }
        json_end_array(&w);

        json_key(&w, "irqs");
        json_begin_array(&w);
        for (size_t i = 0; c && i < c->n_irq_rules; i++) {
                json_begin_object(&w);
                json_field_string(&w, "name", c->irq_rules[i].name);
                ctl_json_location(&w, &c->irq_rules[i].location);
                json_end_object(&w);
        }
        json_end_array(&w);

        json_key(&w, "net");
        json_begin_array(&w);
        for (size_t i = 0; c && i < c->n_net_rules; i++) {
                json_begin_object(&w);
                json_field_string(&w, "name", c->net_rules[i].name);
                json_field_string(&w, "device", c->net_rules[i].device);
                ctl_json_location(&w, &c->net_rules[i].location);
                json_end_object(&w);
        }
        json_end_array(&w);

        json_key(&w, "diagnostics");
        ctl_json_diagnostics(&w, diag);
        json_end_object(&w);
        json_end_document(&w);
}

/* "2 files, 3 policies, 1 irqs rule: valid (1 warning)" on stdout. */
static void print_validate_summary(const Config *c, const Diagnostics *diag) {
        size_t n_files = strv_length(c->files);

        /* Policies always; irqs: and net: rules when there are any. */
        printf("%zu file%s, %zu polic%s", n_files, n_files == 1 ? "" : "s", c->n_policies,
               c->n_policies == 1 ? "y" : "ies");
        if (c->n_irq_rules > 0)
                printf(", %zu irqs rule%s", c->n_irq_rules, c->n_irq_rules == 1 ? "" : "s");
        if (c->n_net_rules > 0)
                printf(", %zu net rule%s", c->n_net_rules, c->n_net_rules == 1 ? "" : "s");
        fputs(": valid", stdout);
        if (arg_topology)
                printf(", every policy resolved on %s", arg_topology);
        else if (arg_here)
                fputs(", resolved on this machine", stdout);
        if (diag->n_warnings > 0)
                printf(" (%u warning%s)", diag->n_warnings, diag->n_warnings == 1 ? "" : "s");
        putchar('\n');
}

/*
 * Resolves c on the topology (--topology, else this machine: --here) and adds what planning
 * says to diag. Returns 0 with *ret_resolved (false: a policy can't be resolved on --topology),
 * EXIT_FAILURE_ after saying why (the topology can't be loaded, or planning failed), or -ENOMEM.
 */
static int resolve(const Config *c, Diagnostics *diag, Plan **ret_plan, bool *ret_resolved) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        unsigned errors = diag->n_errors;
        int r;

        r = ctl_load_topology(&t);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (ctl_print_diagnostics(diag) < 0)
                        return -ENOMEM;
                if (arg_json)
                        print_validate_json(false, c, NULL, diag);
                return EXIT_FAILURE_;
        }

        /* On this machine a policy that can't be resolved is pending: a warning. On the topology
         * named by --topology it is an error: that is what the option asks. */
        r = plan_new(c, t, &plan);
        if (r >= 0)
                r = add_plan_diagnostics(plan, arg_topology ? DIAGNOSTIC_ERROR : DIAGNOSTIC_WARNING, diag);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                fprintf(stderr, "Failed to plan against %s: %s\n", arg_topology ?: "this machine",
                        strerror(-r));
                return EXIT_FAILURE_;
        }
        *ret_plan = TAKE_PTR(plan);
        *ret_resolved = diag->n_errors == errors;
        return 0;
}

/* verb_validate() but for "Out of memory.": returns the exit code, or -ENOMEM. */
static int validate(char **paths, Diagnostics *diag) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        bool valid, resolved = true;
        int r;

        r = ctl_load_config(paths, &c, diag);
        if (r == -ENOMEM)
                return r;
        valid = r >= 0;
        /* Validation looks at no machine; resolution only when asked. */
        if (valid && (arg_here || arg_topology)) {
                int k = resolve(c, diag, &plan, &resolved);

                if (k != 0)
                        return k;
        }

        if (ctl_print_diagnostics(diag) < 0)
                return -ENOMEM;
        if (arg_json)
                print_validate_json(valid && resolved, c, plan, diag);
        else if (valid && resolved)
                print_validate_summary(c, diag);

        if (!valid) {
                if (diag->n_errors == 0)
                        /* e.g. a directory that can't be read, if the loader didn't say */
                        fprintf(stderr, "Failed to load the configuration: %s\n", strerror(-r));
                fprintf(stderr, "Invalid configuration: %u error%s.\n", diag->n_errors,
                        diag->n_errors == 1 ? "" : "s");
                return EXIT_FAILURE_;
        }
        if (!resolved) {
                fprintf(stderr, "The configuration is valid, but %u polic%s can't be resolved on %s.\n",
                        diag->n_errors, diag->n_errors == 1 ? "y" : "ies", arg_topology);
                return EXIT_FAILURE_;
        }
        return EXIT_OK;
}

int ctl_run_offline(int (*run)(char **paths, Diagnostics *diag), char **paths) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        int r;

        r = run(paths, &diag);
        if (r == -ENOMEM) {
                fprintf(stderr, "Out of memory.\n");
                return EXIT_FAILURE_;
        }
        return r;
}

int verb_validate(char **args) {
        return ctl_run_offline(validate, args);
}
