/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl plan: shows offline what the configuration resolves to — for each policy its CPUs
 * and NUMA nodes and why, its thread rules, or why it is pending; for each irqs: rule the IRQs
 * it takes and their CPUs; for each net: rule the RPS/XPS masks and RFS flow counts of the
 * queues it sets — as a report (here) or a JSON document (ctl-plan-json.c).
 */

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "ctl-offline.h"
#include "ctl-plan.h"
#include "ctl.h"
#include "macro.h"

#define PLAN_LABEL_WIDTH 9

/* "  LABEL: text" with the label right-aligned (NULL: a continuation line), like systemctl status. */
_printf_(3, 4) static void plan_field(FILE *f, const char *label, const char *format, ...) {
        va_list ap;

        fprintf(f, "%*s%s ", PLAN_LABEL_WIDTH, label ?: "", label ? ":" : " ");
        va_start(ap, format);
        vfprintf(f, format, ap);
        va_end(ap);
        fputc('\n', f);
}

/* "8,24,9,25": a spread order, as given (not sorted into ranges: the order is the point). */
static void print_cpu_order(FILE *f, const unsigned *cpus, size_t n) {
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%u", i > 0 ? "," : "", cpus[i]);
}

/* Under a spread order (n CPUs on t), why it is what it is: plan_spread_explain()'s lines,
 * indented. Returns 0 or -ENOMEM. */
static int plan_field_spread_explanation(FILE *f, const Topology *t, const unsigned *order, size_t n) {
        _cleanup_strv_free_ char **why = NULL;
        int r;

        r = plan_spread_explain(t, order, n, &why);
        if (r < 0)
                return r;
        STRV_FOREACH (l, why)
                plan_field(f, NULL, "  %s", *l);
        return 0;
}

/* How many distinct cores the CPUs of s are on (CPUs hwloc knows no core of count as one each). */
static unsigned count_cores(const Topology *t, const CpuSet *s) {
        _cleanup_cpuset_ CpuSet cores = CPUSET_NULL;
        unsigned unknown = 0;

        CPUSET_FOREACH (cpu, s) {
                int core = topology_core_of_cpu(t, (unsigned)cpu);

                if (core < 0 || cpuset_add(&cores, (unsigned)core) < 0)
                        unknown++;
        }
        return cpuset_count(&cores) + unknown;
}

/* "  LABEL: 8-15 (8 CPUs on 8 cores)SUFFIX". Returns 0 or -ENOMEM. */
static int plan_field_cpus(
        FILE *f, const Topology *t, const char *label, const CpuSet *s, const char *suffix) {
        _cleanup_free_ char *cpus = cpuset_to_string(s);
        unsigned n = cpuset_count(s), cores = count_cores(t, s);

        if (!cpus)
                return -ENOMEM;
        plan_field(
                f, label, "%s (%u CPU%s on %u core%s)%s", cpus, n, n == 1 ? "" : "s", cores,
                cores == 1 ? "" : "s", suffix ?: "");
        return 0;
}

/* "  Nodes: 1" for the NUMA nodes of s, nothing when they are unknown. Returns 0 or -ENOMEM. */
static int plan_field_nodes(FILE *f, const Topology *t, const CpuSet *s) {
        _cleanup_cpuset_ CpuSet nodes = CPUSET_NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = topology_nodes_of_cpus(t, s, &nodes);
        if (r < 0)
                return r;
        if (cpuset_is_empty(&nodes))
                return 0;
        text = cpuset_to_string(&nodes);
        if (!text)
                return -ENOMEM;
        plan_field(f, "Nodes", "%s", text);
        return 0;
}

/* "  Pending: reason" and "       At: file:line:column". */
static void plan_field_pending(FILE *f, const char *reason, const Location *l) {
        plan_field(f, "Pending", "%s", reason);
        if (l && l->file)
                plan_field(f, "At", "%s:%u:%u", l->file, l->line, l->column);
}

/* The human report of one policy's plan. Returns 0 or -ENOMEM. */
static int print_policy_plan(FILE *f, const Topology *t, const PolicyPlan *pp) {
        const Policy *p = pp->policy;
        int r;

        fprintf(f, "\n%s (%s:%u)%s\n", p->name, strna(p->location.file), p->location.line,
                pp->pending_reason ? " [pending]" : "");

        if (pp->pending_reason)
                plan_field_pending(f, pp->pending_reason, pp->pending_location);
        else if (pp->has_cpus) {
                _cleanup_free_ char *nodes = NULL;

                r = plan_field_cpus(f, t, "CPUs", &pp->cpus, NULL);
                if (r < 0)
                        return r;
                if (!cpuset_is_empty(&pp->nodes)) {
                        nodes = cpuset_to_string(&pp->nodes);
                        if (!nodes)
                                return -ENOMEM;
                        plan_field(f, "Nodes", "%s", nodes);
                }
        } else
                plan_field(f, "CPUs", "not managed (the policy has no cpus:)");

        for (size_t k = 0; pp->explanation && pp->explanation[k]; k++)
                plan_field(f, k == 0 ? "Why" : NULL, "%s", pp->explanation[k]);

        if (pp->n_process_order > 0) {
                fprintf(f, "%*s: spread, one CPU each, slot k the k-th of: ", PLAN_LABEL_WIDTH, "Processes");
                print_cpu_order(f, pp->process_order, pp->n_process_order);
                fprintf(f,
                        "\n%*s  (the lowest free slot to each new process; round robin past the end; a "
                        "pre-fork master gets them all)\n",
                        PLAN_LABEL_WIDTH, "");
                r = plan_field_spread_explanation(f, t, pp->process_order, pp->n_process_order);
                if (r < 0)
                        return r;
        }

        for (size_t k = 0; k < p->n_threads && pp->threads && !pp->pending_reason; k++) {
                const ThreadRule *tr = &p->threads[k];
                const ThreadPlan *tp = &pp->threads[k];
                const char *label = k == 0 ? "Threads" : NULL;

                if (tp->spread) {
                        fprintf(f, "%*s%s %s: spread%s, one CPU each, in this order: ", PLAN_LABEL_WIDTH,
                                label ?: "", label ? ":" : " ", tr->name,
                                tp->spread_over_policy ? " over every process of the policy" : "");
                        print_cpu_order(f, tp->spread_order, tp->n_spread_order);
                        fputc('\n', f);
                        r = plan_field_spread_explanation(f, t, tp->spread_order, tp->n_spread_order);
                        if (r < 0)
                                return r;
                } else if (tp->has_cpus) {
                        _cleanup_free_ char *cpus = cpuset_to_string(&tp->cpus);

                        if (!cpus)
                                return -ENOMEM;
                        plan_field(f, label, "%s: %s", tr->name, cpus);
                } else
                        plan_field(f, label, "%s: the policy's CPUs", tr->name);
        }
        if (p->n_threads > 0 && !pp->pending_reason) {
                bool spread = false;

                /* Only a process's own spread slots are taken out of its other threads' set. */
                for (size_t k = 0; k < p->n_threads; k++)
                        spread = spread ||
                                (p->threads[k].cpus.kind == CPU_SELECTOR_SPREAD &&
                                 !p->threads[k].spread_over_policy);
                plan_field(
                        f, NULL, "(other threads): %s",
                        pp->n_process_order > 0 ? "their process's slot"
                                : spread        ? "the policy's CPUs not taken by spread threads"
                                                : "the policy's CPUs");
        }

        for (size_t k = 0; pp->warnings && pp->warnings[k]; k++)
                plan_field(f, "Warning", "%s", pp->warnings[k]);
        return 0;
}

static void print_device_notes(
        FILE *f, const PlanReport *rep, const char *label, char *const *l, bool warning) {
        bool first = true;

        STRV_FOREACH (s, l) {
                if (!plan_report_note_shown(rep, *s, warning))
                        continue;
                plan_field(f, first || warning ? label : NULL, "%s", *s);
                first = false;
        }
}

/* "device eth0, 0000:3b:00.0; action virtio*-input*" */
static void print_irq_match(FILE *f, const IrqRule *rule) {
        fprintf(f, "%*s: ", PLAN_LABEL_WIDTH, "Match");
        if (rule->device) {
                fputs("device ", f);
                STRV_FOREACH (d, rule->device)
                        fprintf(f, "%s%s", d == rule->device ? "" : ", ", *d);
        }
        if (rule->action) {
                fputs(rule->device ? "; action " : "action ", f);
                STRV_FOREACH (a, rule->action)
                        fprintf(f, "%s%s", a == rule->action ? "" : ", ", *a);
        }
        fputc('\n', f);
}

/* The human report of one irqs: rule. Returns 0 or -ENOMEM. */
static int print_irq_rule_plan(FILE *f, const PlanReport *rep, size_t i) {
        const IrqRulePlan *rp = &rep->devices->irq_rules[i];
        const IrqRule *rule = rp->rule;
        bool first = true;
        int r;

        fprintf(f, "\nirqs: %s (%s:%u)%s\n", rule->name, strna(rule->location.file), rule->location.line,
                rp->pending_reason ? " [pending]" : "");
        print_irq_match(f, rule);
        if (rp->pending_reason)
                plan_field_pending(f, rp->pending_reason, rp->pending_location);
        else {
                r = plan_field_cpus(f, rep->topology, "CPUs", &rp->cpus, rule->spread ? ", spread" : NULL);
                if (r < 0)
                        return r;
                r = plan_field_nodes(f, rep->topology, &rp->cpus);
                if (r < 0)
                        return r;
        }
        print_device_notes(f, rep, "Why", rp->explanation, false);
        if (rep->inventory->irqs_unknown)
                plan_field(f, "IRQs", PLAN_IRQS_UNKNOWN);

        /* The IRQs it takes, in ascending number, with what each would get. */
        for (size_t k = 0; k < rep->devices->n_irqs; k++) {
                const IrqAssignment *a = &rep->devices->irqs[k];
                const DeviceIrq *irq = device_inventory_find_irq(rep->inventory, a->irq);
                const char *name = irq && irq->actions && irq->actions[0] ? irq->actions : "(no name)";
                _cleanup_free_ char *cpus = NULL;

                if (a->rule != i)
                        continue;
                if (a->managed)
                        plan_field(
                                f, first ? "IRQs" : NULL, "%u %s: managed by the kernel, left alone", a->irq,
                                name);
                else if (rp->pending_reason)
                        plan_field(f, first ? "IRQs" : NULL, "%u %s: left alone (pending)", a->irq, name);
                else {
                        cpus = cpuset_to_string(&a->cpus);
                        if (!cpus)
                                return -ENOMEM;
                        plan_field(f, first ? "IRQs" : NULL, "%u %s: %s", a->irq, name, cpus);
                }
                first = false;
        }

        print_device_notes(f, rep, "Warning", rp->warnings, true);
        return 0;
}

/* Offline with no queues known: the XML's network devices that rule's glob matches. Returns 0
 * or -ENOMEM. */
static int print_offline_net_devices(FILE *f, const PlanReport *rep, const NetRule *rule) {
        _cleanup_strv_free_ char **matched = NULL;
        _cleanup_free_ char *list = NULL;
        int r;

        STRV_FOREACH (d, rep->inventory->offline_devices)
                if (fnmatch(rule->device, *d, 0) == 0) {
                        r = strv_extendf(&matched, "%s", *d);
                        if (r < 0)
                                return r;
                }
        list = strv_join(matched ?: rep->inventory->offline_devices, ", ");
        if (!list)
                return -ENOMEM;
        if (matched)
                plan_field(f, "Devices", "%s (in %s)", list, arg_topology);
        else
                plan_field(
                        f, "Devices", "none in %s (devices there: %s)", arg_topology, *list ? list : "none");
        return 0;
}

/* The human report of one net: rule. Returns 0 or -ENOMEM. */
static int print_net_rule_plan(FILE *f, const PlanReport *rep, size_t i) {
        const NetRulePlan *np = &rep->devices->net_rules[i];
        const NetRule *rule = np->rule;
        bool first = true;
        int r = 0;

        fprintf(f, "\nnet: %s (%s:%u)%s\n", rule->name, strna(rule->location.file), rule->location.line,
                np->pending_reason ? " [pending]" : "");
        plan_field(f, "Match", "device %s", rule->device);
        if (np->pending_reason)
                plan_field_pending(f, np->pending_reason, np->pending_location);
        else {
                _cleanup_cpuset_ CpuSet both = CPUSET_NULL;

                if (np->has_rps)
                        r = plan_field_cpus(f, rep->topology, "RPS", &np->rps, ", every rx queue");
                else
                        plan_field(f, "RPS", "not managed (the rule has no rps:)");
                if (r < 0)
                        return r;
                if (np->has_xps)
                        r = plan_field_cpus(
                                f, rep->topology, "XPS", &np->xps, ", divided among the tx queues");
                else
                        plan_field(f, "XPS", "not managed (the rule has no xps:)");
                if (r < 0)
                        return r;
                r = cpuset_copy(&both, &np->rps);
                if (r >= 0)
                        r = cpuset_or(&both, &np->xps);
                if (r >= 0)
                        r = plan_field_nodes(f, rep->topology, &both);
                if (r < 0)
                        return r;
        }
        print_device_notes(f, rep, "Why", np->explanation, false);
        if (rep->inventory->nets_unknown) {
                r = print_offline_net_devices(f, rep, rule);
                if (r < 0)
                        return r;
                plan_field(f, "Queues", PLAN_QUEUES_UNKNOWN);
        }

        /* The queues it sets: by device, rx before tx, in queue order. */
        for (size_t k = 0; k < rep->devices->n_queues; k++) {
                const NetQueueAssignment *a = &rep->devices->queues[k];
                _cleanup_free_ char *cpus = NULL;

                if (a->rule != i)
                        continue;
                cpus = cpuset_to_string(&a->cpus);
                if (!cpus)
                        return -ENOMEM;
                if (a->kind == NET_QUEUE_RPS && a->has_flow_cnt)
                        plan_field(
                                f, first ? "Queues" : NULL, "%s rx-%u: rps_cpus %s, rps_flow_cnt %" PRIu32,
                                a->device, a->queue, cpus, a->flow_cnt);
                else
                        plan_field(
                                f, first ? "Queues" : NULL, "%s %s-%u: %s_cpus %s", a->device,
                                a->kind == NET_QUEUE_RPS ? "rx" : "tx", a->queue,
                                net_queue_kind_to_string(a->kind), cpus);
                first = false;
        }

        print_device_notes(f, rep, "Warning", np->warnings, true);
        return 0;
}

/* "1 irqs rule: 1 resolved, 0 pending" and the like, for the summary line. */
static void print_rule_count(FILE *f, size_t n, const char *singular, const char *plural, size_t n_pending) {
        fprintf(f, "%zu %s: %zu resolved, %zu pending", n, n == 1 ? singular : plural, n - n_pending,
                n_pending);
}

/* Offline: where the devices and IRQs come from. Returns 0 or -ENOMEM. */
static int print_offline_devices(FILE *f, const DeviceInventory *inv) {
        _cleanup_free_ char *list = strv_join(inv->offline_devices, ", ");

        if (!list)
                return -ENOMEM;
        plan_field(f, "Devices", "%s (in %s)", *list ? list : "none", arg_topology);
        if (inv->irqs_unknown)
                plan_field(f, NULL, "IRQs %s", PLAN_IRQS_UNKNOWN);
        else
                plan_field(
                        f, NULL,
                        "%zu IRQ%s (in %s; device: matched by action name or PCI address, "
                        "kernel-managed IRQs not told apart)",
                        inv->n_irqs, inv->n_irqs == 1 ? "" : "s", arg_interrupts);
        if (inv->nets_unknown)
                plan_field(f, NULL, "queues %s", PLAN_QUEUES_UNKNOWN);
        else
                plan_field(
                        f, NULL, "%zu network interface%s with their queues (in %s)", inv->n_nets,
                        inv->n_nets == 1 ? "" : "s", arg_sysfs);
        return 0;
}

/* The human report. Returns 0 or -ENOMEM. */
static int print_plan(FILE *f, const PlanReport *rep) {
        const Config *c = rep->config;
        const Topology *t = rep->topology;
        const Plan *plan = rep->plan;
        const DevicePlan *dp = rep->devices;
        _cleanup_free_ char *summary = NULL, *online = NULL, *reserve = NULL;
        size_t n_pending = 0, n_irq_pending = 0, n_net_pending = 0;
        int r;

        r = topology_summary(t, &summary);
        if (r < 0)
                return r;
        online = cpuset_to_string(topology_online_cpus(t));
        if (!online)
                return -ENOMEM;

        plan_field(f, "Topology", "%s", arg_topology ?: "this machine");
        plan_field(f, NULL, "%s", summary);
        plan_field(f, "Online", "%s", online);
        if (c->has_reserve && c->reserve_selector.cpus.kind == CPU_SELECTOR_MAPPING) {
                _cleanup_free_ char *sel = NULL;

                reserve = cpuset_to_string(&plan->reserve);
                if (!reserve)
                        return -ENOMEM;
                r = reserve_selector_format(&c->reserve_selector, &sel);
                if (r < 0)
                        return r;
                plan_field(
                        f, "Reserve", "%s (%s at %s:%u)", cpuset_is_empty(&plan->reserve) ? "none" : reserve,
                        sel, strna(c->reserve_location.file), c->reserve_location.line);
                STRV_FOREACH (line, plan->reserve_explanation)
                        plan_field(f, line == plan->reserve_explanation ? "Why" : NULL, "%s", *line);
        } else if (c->has_reserve) {
                reserve = cpuset_to_string(&plan->reserve);
                if (!reserve)
                        return -ENOMEM;
                plan_field(
                        f, "Reserve", "%s (%s:%u)",
                        cpuset_is_empty(&plan->reserve) ? "none online" : reserve,
                        strna(c->reserve_location.file), c->reserve_location.line);
        } else
                plan_field(f, "Reserve", "none");
        if (c->n_irq_rules + c->n_net_rules > 0) {
                if (rep->inventory->offline) {
                        r = print_offline_devices(f, rep->inventory);
                        if (r < 0)
                                return r;
                } else if (rep->devices_unknown)
                        plan_field(f, "Devices", "%s", rep->devices_unknown);
                else
                        plan_field(
                                f, "Devices", "%zu IRQ%s, %zu network interface%s", rep->inventory->n_irqs,
                                rep->inventory->n_irqs == 1 ? "" : "s", rep->inventory->n_nets,
                                rep->inventory->n_nets == 1 ? "" : "s");
        }
        if (c->rfs_entries > 0)
                plan_field(
                        f, "RFS", "%" PRIu32 " flow entries (%s:%u)", c->rfs_entries,
                        strna(c->rfs_location.file), c->rfs_location.line);
        else if (c->n_net_rules > 0)
                plan_field(f, "RFS", "none (rfs: not set)");
        STRV_FOREACH (w, plan->warnings)
                plan_field(f, "Warning", "%s", *w);

        for (size_t i = 0; i < plan->n_policies; i++) {
                r = print_policy_plan(f, t, &plan->policies[i]);
                if (r < 0)
                        return r;
                if (plan->policies[i].pending_reason)
                        n_pending++;
        }
        for (size_t i = 0; i < dp->n_irq_rules; i++) {
                r = print_irq_rule_plan(f, rep, i);
                if (r < 0)
                        return r;
                if (dp->irq_rules[i].pending_reason)
                        n_irq_pending++;
        }
        for (size_t i = 0; i < dp->n_net_rules; i++) {
                r = print_net_rule_plan(f, rep, i);
                if (r < 0)
                        return r;
                if (dp->net_rules[i].pending_reason)
                        n_net_pending++;
        }

        /* Policies always; irqs: and net: rules when there are any. */
        fputc('\n', f);
        print_rule_count(f, plan->n_policies, "policy", "policies", n_pending);
        if (dp->n_irq_rules > 0) {
                fputs("; ", f);
                print_rule_count(f, dp->n_irq_rules, "irqs rule", "irqs rules", n_irq_pending);
        }
        if (dp->n_net_rules > 0) {
                fputs("; ", f);
                print_rule_count(f, dp->n_net_rules, "net rule", "net rules", n_net_pending);
        }
        fputs(".\n", f);
        return 0;
}

/* Runs print_plan() or plan_report_print_json() into memory, so stdout gets a whole report or
 * nothing. */
static int emit_plan(const PlanReport *rep) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = NULL;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        if (arg_json)
                r = plan_report_print_json(f, rep);
        else
                r = print_plan(f, rep);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        fputs(buf, stdout);
        return 0;
}

/*
 * The IRQs and network interfaces the irqs: and net: rules of c are planned against: this
 * machine's (/proc/interrupts, /sys/class/net), or with --topology the offline inventory of t's
 * network devices, --interrupts' IRQs and --sysfs' queues (device_inventory_load_offline()).
 * *ret_unknown says why the inventory is empty (newly allocated), NULL when it is this
 * machine's or offline.
 * Returns 0; -errno of reading --interrupts or --sysfs (said on stderr); -ENOMEM.
 */
static int load_inventory(const Config *c, const Topology *t, DeviceInventory **ret, char **ret_unknown) {
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        _cleanup_free_ char *error = NULL, *unknown = NULL;
        int r;

        if (arg_topology) {
                r = device_inventory_load_offline(
                        t, arg_topology, arg_interrupts, arg_sysfs, c, &inv, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        fprintf(stderr, "Failed to read %s\n", error ?: strerror(-r));
                        return r;
                }
                if (inv->irq_warning)
                        fprintf(stderr, "Warning: %s\n", inv->irq_warning);
        } else if (c->n_irq_rules + c->n_net_rules > 0) {
                r = device_inventory_load("/", c, &inv, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && asprintf(&unknown, "can't be read here: %s", error ?: strerror(-r)) < 0)
                        return -ENOMEM;
        }
        if (!inv) {
                inv = calloc(1, sizeof(DeviceInventory));
                if (!inv)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(inv);
        *ret_unknown = TAKE_PTR(unknown);
        return 0;
}

/*
 * The kubelet's CPU manager checkpoint c names, as the daemon reads it, when planning for this
 * machine: into *ret (NULL: none, no such file, or --topology, another machine's). One that
 * can't be read is said on stderr and left out. Returns 0 or -ENOMEM.
 */
static int load_kubelet(const Config *c, KubeletCpuState **ret) {
        const char *path = config_kubelet_cpu_manager_state(c);
        _cleanup_free_ char *error = NULL;
        int r;

        *ret = NULL;
        if (arg_topology || !path)
                return 0;
        r = kubelet_cpu_state_load(path, ret, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -ENOENT)
                fprintf(stderr, "Warning: %s; planned as if the kubelet's CPU manager held no CPU\n",
                        error ?: strerror(-r));
        return 0;
}

/* verb_plan() but for "Out of memory.": returns the exit code, or -ENOMEM. */
static int plan(char **paths, Diagnostics *diag) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(device_inventory_freep) DeviceInventory *inv = NULL;
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *kubelet = NULL;
        _cleanup_free_ char *unknown = NULL;
        PlanReport rep = {.diag = diag};
        int r;

        r = ctl_load_config(paths, &c, diag);
        if (r == -ENOMEM || ctl_print_diagnostics(diag) < 0)
                return -ENOMEM;
        if (r < 0) {
                if (diag->n_errors == 0)
                        fprintf(stderr, "Failed to load the configuration: %s\n", strerror(-r));
                fprintf(stderr, "Invalid configuration: %u error%s.\n", diag->n_errors,
                        diag->n_errors == 1 ? "" : "s");
                rep.error = "invalid configuration";
                return arg_json && emit_plan(&rep) < 0 ? -ENOMEM : EXIT_FAILURE_;
        }
        rep.config = c;

        r = ctl_load_topology(&t);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                rep.error = "failed to load the topology";
                return arg_json && emit_plan(&rep) < 0 ? -ENOMEM : EXIT_FAILURE_;
        }
        rep.topology = t;

        /* Pending policies and rules are a normal state (the daemon retries them when the machine
         * changes): they are shown, with their reasons, and are not a failure of plan. */
        r = load_kubelet(c, &kubelet);
        if (r >= 0)
                r = plan_new_with(c, t, &(PlanInputs){.kubelet = kubelet}, &plan);
        if (r >= 0) {
                r = load_inventory(c, t, &inv, &unknown);
                if (r < 0 && r != -ENOMEM) { /* --interrupts or --sysfs unreadable: said */
                        rep.error = "failed to read the --interrupts file or the --sysfs tree";
                        return arg_json && emit_plan(&rep) < 0 ? -ENOMEM : EXIT_FAILURE_;
                }
        }
        if (r >= 0)
                r = device_plan_new(c, plan, t, inv, &dp);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                fprintf(stderr, "Failed to plan: %s\n", strerror(-r));
                return EXIT_FAILURE_;
        }
        rep.plan = plan;
        rep.inventory = inv;
        rep.devices_unknown = unknown;
        rep.devices = dp;
        r = emit_plan(&rep);
        return r < 0 ? r : EXIT_OK;
}

int verb_plan(char **args) {
        return ctl_run_offline(plan, args);
}
