/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* affinityctl plan --json: the plan report (ctl-plan.h) as one JSON document. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cpuset.h"
#include "ctl-offline.h"
#include "ctl-plan.h"
#include "ctl.h"
#include "macro.h"

/* A set as a JSON cpu-list string. Returns 0 or -ENOMEM. */
static int json_cpuset(JsonWriter *w, const CpuSet *s) {
        _cleanup_free_ char *text = cpuset_to_string(s);

        if (!text)
                return -ENOMEM;
        json_string(w, text);
        return 0;
}

/* key: s as a cpu-list string, or null when has is false. Returns 0 or -ENOMEM. */
static int json_field_cpuset(JsonWriter *w, const char *key, bool has, const CpuSet *s) {
        json_key(w, key);
        if (has)
                return json_cpuset(w, s);
        json_null(w);
        return 0;
}

/* key: the NUMA nodes of s as a cpu-list string, or null when has is false. Returns 0 or
 * -ENOMEM. */
static int json_field_nodes_of(
        JsonWriter *w, const char *key, bool has, const Topology *t, const CpuSet *s) {
        _cleanup_cpuset_ CpuSet nodes = CPUSET_NULL;
        int r;

        if (has) {
                r = topology_nodes_of_cpus(t, s, &nodes);
                if (r < 0)
                        return r;
        }
        return json_field_cpuset(w, key, has, &nodes);
}

/* key: a spread order as an array of CPUs, or null when has is false. */
static void json_field_cpu_order(JsonWriter *w, const char *key, bool has, const unsigned *cpus, size_t n) {
        json_key(w, key);
        if (!has) {
                json_null(w);
                return;
        }
        json_begin_array(w);
        for (size_t i = 0; i < n; i++)
                json_uint(w, cpus[i]);
        json_end_array(w);
}

/* key: why the spread order (n CPUs on t) is what it is, as lines (plan_spread_explain()), or null
 * when has is false. Returns 0 or -ENOMEM. */
static int json_field_spread_explanation(
        JsonWriter *w, const char *key, const Topology *t, bool has, const unsigned *order, size_t n) {
        _cleanup_strv_free_ char **why = NULL;
        int r;

        if (!has) {
                json_field_null(w, key);
                return 0;
        }
        r = plan_spread_explain(t, order, n, &why);
        if (r < 0)
                return r;
        json_field_strv(w, key, why);
        return 0;
}

/* key: l as an array of strings, or null for NULL. */
static void json_field_strv_or_null(JsonWriter *w, const char *key, char *const *l) {
        if (l)
                json_field_strv(w, key, l);
        else
                json_field_null(w, key);
}

/* "name", "file", "line", "column" of something the configuration names. */
static void json_named(JsonWriter *w, const char *name, const Location *l) {
        json_field_string(w, "name", name);
        ctl_json_location(w, l);
}

/* "error": REASON, "error_location": {file, line, column} or null; then "warnings". */
static void json_error(JsonWriter *w, const char *reason, const Location *l) {
        json_field_string(w, "error", reason);
        json_key(w, "error_location");
        if (reason && l && l->file) {
                json_begin_object(w);
                ctl_json_location(w, l);
                json_end_object(w);
        } else
                json_null(w);
}

/* key: a device rule's explanation or warnings, as plan_report_note_shown() lets through. */
static void json_device_notes(
        JsonWriter *w, const char *key, const PlanReport *rep, char *const *l, bool warning) {
        json_key(w, key);
        json_begin_array(w);
        STRV_FOREACH (s, l)
                if (plan_report_note_shown(rep, *s, warning))
                        json_string(w, *s);
        json_end_array(w);
}

static int json_policy_plan(JsonWriter *w, const Topology *t, const PolicyPlan *pp) {
        const Policy *p = pp->policy;
        bool active = !pp->pending_reason;
        int r;

        json_begin_object(w);
        json_named(w, p->name, &p->location);
        r = json_field_cpuset(w, "cpus", active && pp->has_cpus, &pp->cpus);
        if (r >= 0)
                r = json_field_cpuset(w, "nodes", active && pp->has_cpus, &pp->nodes);
        if (r < 0)
                return r;
        json_field_strv(w, "explanation", pp->explanation);

        json_key(w, "threads");
        json_begin_array(w);
        for (size_t k = 0; k < p->n_threads; k++) {
                const ThreadPlan *tp = active && pp->threads ? &pp->threads[k] : NULL;

                json_begin_object(w);
                json_field_string(w, "name", p->threads[k].name);
                r = json_field_cpuset(w, "cpus", tp && tp->has_cpus, tp ? &tp->cpus : NULL);
                if (r < 0)
                        return r;
                json_field_cpu_order(
                        w, "spread", tp && tp->spread, tp ? tp->spread_order : NULL,
                        tp ? tp->n_spread_order : 0);
                json_field_string(
                        w, "spread_over",
                        p->threads[k].cpus.kind != CPU_SELECTOR_SPREAD ? NULL
                                : p->threads[k].spread_over_policy     ? "policy"
                                                                       : "process");
                r = json_field_spread_explanation(
                        w, "spread_explanation", t, tp && tp->spread, tp ? tp->spread_order : NULL,
                        tp ? tp->n_spread_order : 0);
                if (r < 0)
                        return r;
                json_end_object(w);
        }
        json_end_array(w);
        /* processes: spread: the slots' order; null when the policy doesn't spread processes. */
        json_field_cpu_order(
                w, "processes_spread", active && pp->n_process_order > 0, pp->process_order,
                pp->n_process_order);
        r = json_field_spread_explanation(
                w, "processes_spread_explanation", t, active && pp->n_process_order > 0, pp->process_order,
                pp->n_process_order);
        if (r < 0)
                return r;
        json_error(w, pp->pending_reason, pp->pending_location);
        json_field_strv(w, "warnings", pp->warnings);
        json_end_object(w);
        return 0;
}

/* One irqs: rule: its CPUs, the IRQs it takes and what each would get. Returns 0 or -ENOMEM. */
static int json_irq_rule_plan(JsonWriter *w, const PlanReport *rep, size_t i) {
        const IrqRulePlan *rp = &rep->devices->irq_rules[i];
        const IrqRule *rule = rp->rule;
        bool resolved = !rp->pending_reason;
        int r;

        json_begin_object(w);
        json_named(w, rule->name, &rule->location);
        json_field_strv_or_null(w, "device", rule->device);
        json_field_strv_or_null(w, "action", rule->action);
        r = json_field_cpuset(w, "cpus", resolved, &rp->cpus);
        if (r >= 0)
                r = json_field_nodes_of(w, "nodes", resolved, rep->topology, &rp->cpus);
        if (r < 0)
                return r;
        json_field_cpu_order(w, "spread", resolved && rule->spread, rp->spread_order, rp->n_spread_order);
        json_device_notes(w, "explanation", rep, rp->explanation, false);

        /* cpus null: left alone (managed by the kernel, or the rule is pending). */
        json_key(w, "irqs");
        json_begin_array(w);
        for (size_t k = 0; k < rep->devices->n_irqs; k++) {
                const IrqAssignment *a = &rep->devices->irqs[k];
                const DeviceIrq *irq = device_inventory_find_irq(rep->inventory, a->irq);

                if (a->rule != i)
                        continue;
                json_begin_object(w);
                json_field_uint(w, "irq", a->irq);
                json_field_string(w, "name", irq ? irq->actions : "");
                r = json_field_cpuset(w, "cpus", !a->managed && resolved, &a->cpus);
                if (r < 0)
                        return r;
                json_field_bool(w, "managed", a->managed);
                json_end_object(w);
        }
        json_end_array(w);
        json_error(w, rp->pending_reason, rp->pending_location);
        json_device_notes(w, "warnings", rep, rp->warnings, true);
        json_end_object(w);
        return 0;
}

/* One net: rule: its RPS and XPS sets, the queues it sets. Returns 0 or -ENOMEM. */
static int json_net_rule_plan(JsonWriter *w, const PlanReport *rep, size_t i) {
        const NetRulePlan *np = &rep->devices->net_rules[i];
        const NetRule *rule = np->rule;
        _cleanup_cpuset_ CpuSet both = CPUSET_NULL;
        int r;

        json_begin_object(w);
        json_field_string(w, "name", rule->name);
        json_field_string(w, "device", rule->device);
        ctl_json_location(w, &rule->location);
        r = json_field_cpuset(w, "rps", np->has_rps, &np->rps);
        if (r >= 0)
                r = json_field_cpuset(w, "xps", np->has_xps, &np->xps);
        if (r >= 0 && !np->pending_reason)
                r = cpuset_copy(&both, &np->rps);
        if (r >= 0 && !np->pending_reason)
                r = cpuset_or(&both, &np->xps);
        if (r >= 0)
                r = json_field_nodes_of(w, "nodes", !np->pending_reason, rep->topology, &both);
        if (r < 0)
                return r;
        json_device_notes(w, "explanation", rep, np->explanation, false);

        /* As affinityctl net --json names them. */
        json_key(w, "queues");
        json_begin_array(w);
        for (size_t k = 0; k < rep->devices->n_queues; k++) {
                const NetQueueAssignment *a = &rep->devices->queues[k];
                char queue[32];

                if (a->rule != i)
                        continue;
                snprintf(queue, sizeof(queue), "%s-%u", a->kind == NET_QUEUE_RPS ? "rx" : "tx", a->queue);
                json_begin_object(w);
                json_field_string(w, "device", a->device);
                json_field_string(w, "queue", queue);
                json_field_string(w, "kind", net_queue_kind_to_string(a->kind));
                r = json_field_cpuset(w, "cpus", true, &a->cpus);
                if (r < 0)
                        return r;
                if (a->kind == NET_QUEUE_RPS && a->has_flow_cnt)
                        json_field_uint(w, "flow_cnt", a->flow_cnt);
                else
                        json_field_null(w, "flow_cnt");
                json_end_object(w);
        }
        json_end_array(w);
        json_error(w, np->pending_reason, np->pending_location);
        json_device_notes(w, "warnings", rep, np->warnings, true);
        json_end_object(w);
        return 0;
}

/* "devices": what plan knows of the machine's IRQs and interfaces. */
static void json_devices(JsonWriter *w, const PlanReport *rep) {
        const DeviceInventory *inv = rep->inventory;

        json_key(w, "devices");
        if (!inv) {
                json_null(w);
                return;
        }
        json_begin_object(w);
        json_field_bool(w, "known", !rep->devices_unknown && !inv->irqs_unknown && !inv->nets_unknown);
        json_field_bool(w, "offline", inv->offline);
        if (inv->offline) {
                json_field_strv(w, "topology_devices", inv->offline_devices);
                json_field_string(w, "interrupts", arg_interrupts);
                json_field_string(w, "sysfs", arg_sysfs);
        }
        if (rep->devices_unknown || inv->irqs_unknown)
                json_field_null(w, "irqs");
        else
                json_field_uint(w, "irqs", inv->n_irqs);
        if (rep->devices_unknown || inv->nets_unknown)
                json_field_null(w, "interfaces");
        else {
                json_key(w, "interfaces");
                json_begin_array(w);
                for (size_t i = 0; i < inv->n_nets; i++)
                        json_string(w, inv->nets[i].name);
                json_end_array(w);
        }
        if (rep->devices_unknown)
                json_field_string(w, "reason", rep->devices_unknown);
        else if (inv->irqs_unknown)
                json_field_string(w, "reason", "IRQs " PLAN_IRQS_UNKNOWN);
        else if (inv->nets_unknown)
                json_field_string(w, "reason", "queues " PLAN_QUEUES_UNKNOWN);
        else
                json_field_null(w, "reason");
        json_end_object(w);
}

/* "topology": its file, summary, counts and online CPUs, or null. Returns 0 or -ENOMEM. */
static int json_topology(JsonWriter *w, const Topology *t) {
        _cleanup_free_ char *summary = NULL;
        int r;

        json_key(w, "topology");
        if (!t) {
                json_null(w);
                return 0;
        }
        r = topology_summary(t, &summary);
        if (r < 0)
                return r;
        json_begin_object(w);
        json_field_string(w, "file", arg_topology);
        json_field_string(w, "summary", summary);
        json_field_uint(w, "packages", topology_n_packages(t));
        json_field_uint(w, "nodes", topology_n_nodes(t));
        json_field_uint(w, "cores", topology_n_cores(t));
        json_field_uint(w, "cpus", topology_n_cpus(t));
        r = json_field_cpuset(w, "online", true, topology_online_cpus(t));
        json_end_object(w);
        return r;
}

/*
 * "reserve_selector": reserve: as a selector ("{ cores: 1, per: package }") or null for a
 * cpu-list or none; "reserve_explanation": how the plan resolved it, or null. Returns 0 or
 * -ENOMEM.
 */
static int json_reserve_selector(JsonWriter *w, const Config *c, const Plan *plan) {
        _cleanup_free_ char *sel = NULL;
        int r;

        if (!c || !plan || !c->has_reserve || c->reserve_selector.cpus.kind != CPU_SELECTOR_MAPPING) {
                json_field_null(w, "reserve_selector");
                json_field_null(w, "reserve_explanation");
                return 0;
        }
        r = reserve_selector_format(&c->reserve_selector, &sel);
        if (r < 0)
                return r;
        json_field_string(w, "reserve_selector", sel);
        json_field_strv(w, "reserve_explanation", plan->reserve_explanation);
        return 0;
}

int plan_report_print_json(FILE *f, const PlanReport *rep) {
        const Config *c = rep->config;
        const Plan *plan = rep->plan;
        const DevicePlan *dp = rep->devices;
        JsonWriter w = JSON_WRITER(f);
        int r;

        json_begin_object(&w);
        r = json_topology(&w, rep->topology);
        if (r >= 0)
                r = json_field_cpuset(
                        &w, "reserve", plan && c && c->has_reserve, plan ? &plan->reserve : NULL);
        if (r >= 0)
                r = json_reserve_selector(&w, c, plan);
        if (r < 0)
                return r;
        if (c && c->rfs_entries > 0)
                json_field_uint(&w, "rfs", c->rfs_entries);
        else
                json_field_null(&w, "rfs");
        json_devices(&w, rep);
        json_field_strv(&w, "files", c ? c->files : NULL);

        json_key(&w, "policies");
        json_begin_array(&w);
        for (size_t i = 0; r >= 0 && plan && i < plan->n_policies; i++)
                r = json_policy_plan(&w, rep->topology, &plan->policies[i]);
        json_end_array(&w);
        json_key(&w, "irqs");
        json_begin_array(&w);
        for (size_t i = 0; r >= 0 && dp && i < dp->n_irq_rules; i++)
                r = json_irq_rule_plan(&w, rep, i);
        json_end_array(&w);
        json_key(&w, "net");
        json_begin_array(&w);
        for (size_t i = 0; r >= 0 && dp && i < dp->n_net_rules; i++)
                r = json_net_rule_plan(&w, rep, i);
        json_end_array(&w);
        if (r < 0)
                return r;
        json_field_strv(&w, "warnings", plan ? plan->warnings : NULL);
        json_key(&w, "diagnostics");
        ctl_json_diagnostics(&w, rep->diag);
        json_field_string(&w, "error", rep->error);
        json_end_object(&w);
        json_end_document(&w);
        return 0;
}

bool plan_report_note_shown(const PlanReport *rep, const char *line, bool warning) {
        const DeviceInventory *inv = rep->inventory;

        if (!rep->devices_unknown)
                return !(
                        warning && inv &&
                        ((inv->irqs_unknown && streq(line, "matches no IRQ")) ||
                         (inv->nets_unknown && streq(line, "matches no device"))));
        if (warning)
                return !streq(line, "matches no IRQ") && !streq(line, "matches no device");
        return strncmp(line, "device ", strlen("device ")) != 0;
}
