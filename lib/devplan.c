/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device placement planning: the pure plan that hands each IRQ and network queue of an
 * inventory (lib/devinventory.c reads it) the CPUs its irqs:/net: rule asks for.
 *
 * Selectors resolve through plan_resolve_selector() (never reimplemented here); a mapping then
 * loses the CPUs held by exclusive policies of the process plan, a literal list is taken as
 * written with warnings. IRQs and devices go to the first rule that matches (file order).
 * Spread order comes from plan_spread_order(); XPS divides its CPUs, ordered core by core,
 * among the tx queues of a device.
 */

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devplan.h"
#include "interrupts.h"
#include "netdev.h"
#include "util.h"

/* ---- small helpers ---- */

/* "0-3", or "none" for the empty set, for messages. NULL on OOM. */
static char *set_str(const CpuSet *s) {
        if (cpuset_is_empty(s))
                return strdup("none");
        return cpuset_to_string(s);
}

/* Ascending IRQ numbers as ranges: "37-39,41". NULL on OOM. */
static char *irqs_str(const unsigned *irqs, size_t n) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n;) {
                size_t j = i;

                while (j + 1 < n && irqs[j + 1] == irqs[j] + 1)
                        j++;
                if (j == i)
                        fprintf(f, "%s%u", i > 0 ? "," : "", irqs[i]);
                else
                        fprintf(f, "%s%u-%u", i > 0 ? "," : "", irqs[i], irqs[j]);
                i = j + 1;
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* At most this many names in an explanation line, so that the line (logged when it changes)
 * does not change with every device that comes and goes beyond them. */
#define EXPLAIN_MAX_NAMES 4

/* "vt0, vt1, vt2, vt3, …": the first max of n names, then "…" when there are more. NULL on
 * OOM. */
static char *names_str(const char *const *names, size_t n, size_t max) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < MIN(n, max); i++)
                fprintf(f, "%s%s", i > 0 ? ", " : "", names[i]);
        if (n > max)
                fputs(", …", f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* "8,24,9": numbers in the given order. NULL on OOM. */
static char *unsigned_list_str(const unsigned *v, size_t n) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%u", i > 0 ? "," : "", v[i]);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* ---- resolving selectors ---- */

static const char *const net_queue_kind_table[_NET_QUEUE_KIND_MAX] = {
        [NET_QUEUE_RPS] = "rps",
        [NET_QUEUE_XPS] = "xps",
};

const char *net_queue_kind_to_string(NetQueueKind k) {
        if ((unsigned)k >= _NET_QUEUE_KIND_MAX)
                return NULL;
        return net_queue_kind_table[k];
}

/* What a selector mapping says, for the explanation: "{ near: eth0, reserved: only }",
 * "{ near: eth0, avoid: [web] }". */
static char *mapping_describe(const CpuSelector *s) {
        _cleanup_free_ char *nodes = NULL, *packages = NULL;
        char *buf = NULL;
        size_t size = 0;
        bool first = true;
        FILE *f;

        if ((s->has_nodes && !(nodes = set_str(&s->nodes))) ||
            (s->has_packages && !(packages = set_str(&s->packages))))
                return NULL;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
#define ITEM(...) \
        do { \
                fputs(first ? " " : ", ", f); \
                fprintf(f, __VA_ARGS__); \
                first = false; \
        } while (0)
        fputc('{', f);
        if (nodes)
                ITEM("nodes: %s", nodes);
        if (packages)
                ITEM("packages: %s", packages);
        if (s->near)
                ITEM("near: %s", s->near);
        if (s->cpu_kind != CPU_KIND_ANY)
                ITEM("kind: %s", s->cpu_kind == CPU_KIND_PERFORMANCE ? "performance" : "efficiency");
        if (s->n_cores > 0)
                ITEM("cores: %u", s->n_cores);
        if (s->n_cpus > 0)
                ITEM("cpus: %u", s->n_cpus);
        if (s->smt == SMT_ONE_PER_CORE)
                ITEM("smt: one-per-core");
        if (s->reserved != RESERVED_AVOID)
                ITEM("reserved: %s", s->reserved == RESERVED_ONLY ? "only" : "allow");
        if (s->avoid_policies)
                ITEM("avoid: policies");
        else if (s->has_avoid) {
                ITEM("avoid: [");
                for (size_t i = 0; i < s->n_avoid; i++)
                        fprintf(f, "%s%s", i > 0 ? ", " : "", s->avoid[i]);
                fputc(']', f);
        }
#undef ITEM
        fputs(first ? "}" : " }", f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* Appends "\"NAME\"" to *holders, a list of quoted policy names joined by ", " (NULL: none yet).
 * Returns 0 or -ENOMEM. */
static int holders_add(char **holders, const char *name) {
        char *h = NULL;

        if (asprintf(&h, "%s%s\"%s\"", *holders ?: "", *holders ? ", " : "", name) < 0)
                return -ENOMEM;
        free(*holders);
        *holders = h;
        return 0;
}

/* Where explanation and warning lines of one selector go. */
typedef struct RuleNotes {
        char ***explanation;
        char ***warnings;
} RuleNotes;

/* Warnings for a literal cpu-list, as the policy side gives them: CPUs that don't exist, are
 * offline, disallowed, reserved, or held by an exclusive policy (any of p's). */
static int literal_warnings(
        const CpuSelector *s, const Plan *p, const Topology *t, const char *prefix, RuleNotes *notes) {
        return plan_literal_warnings(
                &s->literal, t, &p->reserve, p->policies, p->n_policies, p->kubelet, prefix,
                notes->warnings);
}

/* A mapping loses what the kubelet's CPU manager holds (p->kubelet): a Guaranteed pod's CPUs
 * get no interrupts and no softirq work from us. Returns 0, or 1 with a reason when nothing
 * is left, or -ENOMEM. */
static int remove_kubelet(
        const Plan *p, const char *prefix, CpuSet *cpus, RuleNotes *notes, char **ret_reason) {
        _cleanup_free_ char *who = NULL;
        int r;

        r = kubelet_cpu_state_remove_from(p->kubelet, cpus, &who);
        if (r <= 0)
                return r;
        r = strv_extendf(notes->explanation, "%sheld by the kubelet's CPU manager: %s", prefix, who);
        if (r < 0)
                return r;
        if (cpuset_is_empty(cpus)) {
                if (asprintf(
                            ret_reason, "%sno CPU left: held by the kubelet's CPU manager: %s", prefix,
                            who) < 0) {
                        *ret_reason = NULL;
                        return -ENOMEM;
                }
                return 1;
        }
        return 0;
}

/* A mapping loses what exclusive policies hold; one explanation line per holder. Returns 0,
 * or 1 with a reason when nothing is left, or -ENOMEM. */
static int remove_held(
        const Plan *p, const char *prefix, CpuSet *cpus, RuleNotes *notes, char **ret_reason) {
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL, removed = CPUSET_NULL;
        _cleanup_free_ char *holders = NULL;
        int r;

        for (size_t i = 0; i < p->n_policies; i++) {
                _cleanup_free_ char *l = NULL;
                const char *name = p->policies[i].policy->name;

                r = cpuset_copy(&x, cpus);
                if (r < 0)
                        return r;
                cpuset_and(&x, &p->policies[i].exclusive_cpus);
                if (cpuset_is_empty(&x))
                        continue;
                l = set_str(&x);
                if (!l)
                        return -ENOMEM;
                r = strv_extendf(
                        notes->explanation, "%sheld by exclusive policy \"%s\": %s", prefix, name, l);
                if (r < 0)
                        return r;
                r = cpuset_or(&removed, &x);
                if (r < 0)
                        return r;
                r = holders_add(&holders, name);
                if (r < 0)
                        return r;
                cpuset_andnot(cpus, &x);
        }

        if (cpuset_is_empty(cpus) && holders) {
                _cleanup_free_ char *l = set_str(&removed);
                char *reason = NULL;

                if (!l ||
                    asprintf(&reason, "%sno CPU left: %s held by exclusive policy %s", prefix, l, holders) <
                            0)
                        return -ENOMEM;
                *ret_reason = reason;
                return 1;
        }
        return 0;
}

/* *ret := the online PUs of the cores of pp's CPUs (its set and its thread rules' sets, SMT
 * siblings included); empty when pp is pending or sets no CPUs. */
static int policy_cores(const Topology *t, const PolicyPlan *pp, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, core = CPUSET_NULL, cores = CPUSET_NULL;
        int r;

        if (!pp->pending_reason) {
                r = cpuset_copy(&cpus, &pp->cpus);
                for (size_t k = 0; r >= 0 && k < pp->n_threads; k++)
                        r = cpuset_or(&cpus, &pp->threads[k].cpus);
                if (r < 0)
                        return r;
        }
        CPUSET_FOREACH (cpu, &cpus) {
                r = topology_core_siblings(t, (unsigned)cpu, &core);
                if (r == -ENOENT) { /* no core information: the PU alone */
                        cpuset_clear(&core);
                        r = cpuset_add(&core, (unsigned)cpu);
                }
                if (r >= 0)
                        r = cpuset_or(&cores, &core);
                if (r < 0)
                        return r;
        }
        cpuset_and(&cores, topology_online_cpus(t));
        cpuset_done(ret);
        *ret = cores;
        cores = CPUSET_NULL;
        return 0;
}

/* Whether avoid: of s names the policy name ("avoid: policies" names every one). */
static bool selector_avoids(const CpuSelector *s, const char *name) {
        if (s->avoid_policies)
                return true;
        for (size_t i = 0; i < s->n_avoid; i++)
                if (streq(s->avoid[i], name))
                        return true;
        return false;
}

/*
 * avoid: what a mapping is to leave out: the cores of the policies it names, as far as they are
 * in what it could choose (*s without its count, after the reserve), into *ret_avoid; one line
 * per policy that has some of them into *lines, and their names, quoted, into *ret_holders
 * (NULL when none). It prefers: when that would leave no CPU, *ret_avoid is empty, with a line
 * and a warning saying so. Returns 0 or -ENOMEM.
 */
static int avoid_cores(
        const CpuSelector *s, const Config *c, const Plan *p, const Topology *t, const char *prefix,
        CpuSet *ret_avoid, char **ret_holders, char ***lines, RuleNotes *notes) {
        _cleanup_cpuset_ CpuSet left = CPUSET_NULL, cores = CPUSET_NULL, x = CPUSET_NULL,
                                avoid = CPUSET_NULL;
        _cleanup_free_ char *holders = NULL;
        CpuSelector uncounted = *s; /* a shallow copy: never released */
        int r;

        uncounted.n_cores = uncounted.n_cpus = 0;
        uncounted.smt = SMT_ALL;
        r = plan_resolve_selector(&uncounted, t, plan_reserve_given(p), &left, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0; /* the selector itself can't be resolved: its resolution says why */

        for (size_t i = 0; i < p->n_policies; i++) {
                const PolicyPlan *pp = &p->policies[i];
                _cleanup_free_ char *l = NULL;

                if (!selector_avoids(s, pp->policy->name))
                        continue;
                if (pp->pending_reason) {
                        if (s->avoid_policies)
                                continue;
                        r = strv_extendf(
                                lines, "%savoid: policy \"%s\" is pending: it holds no CPU", prefix,
                                pp->policy->name);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = policy_cores(t, pp, &cores);
                if (r >= 0)
                        r = cpuset_copy(&x, &left);
                if (r < 0)
                        return r;
                cpuset_and(&x, &cores);
                if (cpuset_is_empty(&x))
                        continue;
                l = set_str(&x);
                if (!l)
                        return -ENOMEM;
                r = strv_extendf(
                        lines, "%savoid: policy \"%s\": %s removed (its CPUs and their SMT siblings)",
                        prefix, pp->policy->name, l);
                if (r < 0)
                        return r;
                r = holders_add(&holders, pp->policy->name);
                if (r < 0)
                        return r;
                r = cpuset_or(&avoid, &x);
                if (r < 0)
                        return r;
                cpuset_andnot(&left, &x);
        }

        if (holders && cpuset_is_empty(&left)) {
                _cleanup_free_ char *l = set_str(&avoid);

                if (!l)
                        return -ENOMEM;
                r = strv_extendf(lines, "%savoid: would leave no CPU: %s kept", prefix, l);
                if (r < 0)
                        return r;
                r = strv_extendf(
                        notes->warnings,
                        "%savoid: every CPU the selector has (%s) is on the cores of polic%s %s: they are "
                        "shared (select more CPUs to keep them apart)",
                        prefix, l, strchr(holders, ',') ? "ies" : "y", holders);
                if (r < 0)
                        return r;
                cpuset_clear(&avoid);
        }
        cpuset_done(ret_avoid);
        *ret_avoid = avoid;
        avoid = CPUSET_NULL;
        *ret_holders = TAKE_PTR(holders);
        return 0;
}

/*
 * A mapping whose CPUs share cores with a policy's, when it did not ask for it: no avoid: at
 * all, or one that does not name that policy ("avoid: []" means sharing is meant). Exclusive
 * policies' cores were left out already. One warning per policy, saying how to fix it.
 * Returns 0 or -ENOMEM.
 */
static int warn_sharing(
        const CpuSelector *s, const Plan *p, const Topology *t, const char *prefix, const CpuSet *cpus,
        RuleNotes *notes) {
        _cleanup_cpuset_ CpuSet cores = CPUSET_NULL;
        int r;

        if (s->has_avoid && s->n_avoid == 0 && !s->avoid_policies)
                return 0;
        for (size_t i = 0; i < p->n_policies; i++) {
                const PolicyPlan *pp = &p->policies[i];
                _cleanup_free_ char *l = NULL;

                if (selector_avoids(s, pp->policy->name))
                        continue;
                r = policy_cores(t, pp, &cores);
                if (r < 0)
                        return r;
                cpuset_and(&cores, cpus);
                if (cpuset_is_empty(&cores))
                        continue;
                l = set_str(&cores);
                if (!l)
                        return -ENOMEM;
                r = strv_extendf(
                        notes->warnings,
                        "%sCPUs %s share cores with policy \"%s\": add avoid: [%s] to the selector to "
                        "keep them apart, or avoid: [] if that is meant",
                        prefix, l, pp->policy->name, pp->policy->name);
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * Resolves s for a device rule into *ret (initialised, replaced): plan_resolve_selector() with
 * p's reserve (plan_reserve_given()), and without the cores avoid: names before the count
 * (avoid_cores(), plan_resolve_selector_avoiding()), then (a mapping) without the exclusive
 * holdings of p and the kubelet's CPUs. With warn, a mapping whose set shares cores with a
 * policy it did not name in avoid: gets a warning (warn_sharing()). Explanation and warning
 * lines are prefixed with prefix. Returns 0; 1 with a reason (prefixed) when the selector
 * can't be resolved here; -ENOMEM.
 */
static int resolve_device_selector(
        const CpuSelector *s, const Config *c, const Plan *p, const Topology *t, const char *prefix,
        bool warn, CpuSet *ret, RuleNotes *notes, char **ret_reason) {
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, x = CPUSET_NULL, avoid = CPUSET_NULL;
        _cleanup_free_ char *reason = NULL, *l = NULL, *holders = NULL;
        _cleanup_strv_free_ char **avoid_lines = NULL;
        bool kept = false;
        int r;

        if (s->kind == CPU_SELECTOR_MAPPING && s->has_avoid) {
                r = avoid_cores(s, c, p, t, prefix, &avoid, &holders, &avoid_lines, notes);
                if (r < 0)
                        return r;
        }
        r = plan_resolve_selector_avoiding(
                s, t, plan_reserve_given(p), cpuset_is_empty(&avoid) ? NULL : &avoid, &cpus, &kept, &reason);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                char *full = NULL;

                if (asprintf(&full, "%s%s", prefix, reason ?: "the selector can't be resolved here") < 0)
                        return -ENOMEM;
                *ret_reason = full;
                return 1;
        }

        l = set_str(&cpus);
        if (!l)
                return -ENOMEM;

        if (s->kind == CPU_SELECTOR_LITERAL) {
                _cleanup_free_ char *written = set_str(&s->literal);

                if (!written)
                        return -ENOMEM;
                if (cpuset_equal(&cpus, &s->literal))
                        r = strv_extendf(
                                notes->explanation, "%scpu-list %s taken as written", prefix, written);
                else
                        r = strv_extendf(
                                notes->explanation, "%scpu-list %s: its online CPUs: %s", prefix, written,
                                l);
                if (r < 0)
                        return r;
                r = literal_warnings(s, p, t, prefix, notes);
                if (r < 0)
                        return r;
        } else {
                _cleanup_free_ char *d = mapping_describe(s);

                if (!d)
                        return -ENOMEM;
                r = strv_extendf(notes->explanation, "%sselector %s: %s", prefix, d, l);
                if (r < 0)
                        return r;
                /* What avoid: removed (nothing when it was kept: said below). */
                STRV_FOREACH (line, kept ? NULL : avoid_lines) {
                        r = strv_extendf(notes->explanation, "%s", *line);
                        if (r < 0)
                                return r;
                }
                if (kept) {
                        _cleanup_free_ char *a = set_str(&avoid);

                        if (!a)
                                return -ENOMEM;
                        r = strv_extendf(
                                notes->explanation, "%savoid: the count can't be met without %s: kept",
                                prefix, a);
                        if (r >= 0)
                                r = strv_extendf(
                                        notes->warnings,
                                        "%savoid: the count can't be met without the cores of polic%s %s "
                                        "(%s): they are shared (ask for fewer cores to keep them apart)",
                                        prefix, strchr(holders, ',') ? "ies" : "y", holders, a);
                        if (r < 0)
                                return r;
                }

                if (s->near && topology_n_nodes(t) > 1) {
                        r = topology_device_locality(t, s->near, &x, NULL, NULL);
                        if (r == -ENOMEM)
                                return r;
                        if (r == TOPOLOGY_LOCALITY_NONE) {
                                r = strv_extendf(
                                        notes->warnings,
                                        "%snear: %s has no NUMA locality (a virtual device, or the firmware "
                                        "doesn't say); using every online CPU",
                                        prefix, s->near);
                                if (r < 0)
                                        return r;
                        }
                }

                r = remove_held(p, prefix, &cpus, notes, ret_reason);
                if (r != 0)
                        return r;
                r = remove_kubelet(p, prefix, &cpus, notes, ret_reason);
                if (r != 0)
                        return r;
                if (warn) {
                        r = warn_sharing(s, p, t, prefix, &cpus, notes);
                        if (r < 0)
                                return r;
                }
        }

        cpuset_done(ret);
        *ret = cpus;
        cpus = CPUSET_NULL;
        return 0;
}

/* ---- IRQs ---- */

/* Whether rule r selects IRQ irq: every given key matches. */
static bool irq_rule_matches(const IrqRule *rule, const DeviceIrq *irq, const DeviceInventory *inv) {
        if (rule->device) {
                bool found = false;

                STRV_FOREACH (d, rule->device) {
                        const DeviceIrqLookup *l = device_inventory_find_lookup(inv, *d);

                        if (l && l->n_irqs > 0 &&
                            bsearch(&irq->irq, l->irqs, l->n_irqs, sizeof(unsigned), compare_unsigned)) {
                                found = true;
                                break;
                        }
                }
                if (!found)
                        return false;
        }

        if (rule->action) {
                bool blank = strv_length(irq->names) == 0;

                STRV_FOREACH (glob, rule->action) {
                        if (blank) {
                                if (streq(*glob, "*"))
                                        return true;
                                continue;
                        }
                        STRV_FOREACH (name, irq->names)
                                if (fnmatch(*glob, *name, 0) == 0)
                                        return true;
                }
                return false;
        }
        return true;
}

/* What the device: lookups of a rule found, for its explanation. */
static int explain_devices(const IrqRule *rule, const DeviceInventory *inv, char ***explanation) {
        int r;

        STRV_FOREACH (d, rule->device) {
                const DeviceIrqLookup *l = device_inventory_find_lookup(inv, *d);
                _cleanup_free_ char *irqs = NULL;

                if (l && l->note && (l->error < 0 || inv->irqs_unknown)) {
                        /* Offline: what the saved files say instead of what this machine has. */
                        r = strv_extendf(explanation, "device %s: %s", *d, l->note);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!l || l->error == -ENODEV)
                        r = strv_extendf(explanation, "device %s: not present", *d);
                else if (l->error == -ENXIO)
                        r = strv_extendf(explanation, "device %s: no PCI function, no IRQs", *d);
                else if (l->error < 0)
                        r = strv_extendf(explanation, "device %s: %s", *d, strerror(-l->error));
                else if (l->n_irqs == 0)
                        r = strv_extendf(explanation, "device %s: no IRQs", *d);
                else {
                        irqs = irqs_str(l->irqs, l->n_irqs);
                        if (!irqs)
                                return -ENOMEM;
                        r = strv_extendf(
                                explanation, "device %s: IRQ%s %s", *d, l->n_irqs == 1 ? "" : "s", irqs);
                }
                if (r >= 0 && l && l->note)
                        r = strv_extendf(explanation, "device %s: %s", *d, l->note);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int irq_rule_plan_resolve(
        const IrqRule *rule, const Config *c, const Plan *p, const Topology *t, const DeviceInventory *inv,
        IrqRulePlan *rp) {
        RuleNotes notes = {&rp->explanation, &rp->warnings};
        _cleanup_free_ char *reason = NULL;
        int r;

        rp->rule = rule;
        r = resolve_device_selector(&rule->cpus, c, p, t, "", true, &rp->cpus, &notes, &reason);
        if (r < 0)
                return r;
        if (r > 0) {
                rp->pending_reason = TAKE_PTR(reason);
                rp->pending_location = &rule->cpus.location;
                cpuset_clear(&rp->cpus);
                rp->explanation = strv_free(rp->explanation);
        } else if (rule->spread) {
                _cleanup_free_ char *order = NULL;

                r = plan_spread_order(t, &rp->cpus, &rp->spread_order, &rp->n_spread_order);
                if (r < 0)
                        return r;
                order = unsigned_list_str(rp->spread_order, rp->n_spread_order);
                if (!order)
                        return -ENOMEM;
                r = strv_extendf(
                        &rp->explanation,
                        "spread: one CPU per queue vector, by queue number, in the order %s, round robin",
                        order);
                if (r < 0)
                        return r;
        }

        return explain_devices(rule, inv, &rp->explanation);
}

static const DeviceIrq **irqs_sorted(const DeviceInventory *inv) {
        const DeviceIrq **v = calloc(MAX(inv->n_irqs, 1U), sizeof(DeviceIrq *));

        if (!v)
                return NULL;
        for (size_t i = 0; i < inv->n_irqs; i++)
                v[i] = &inv->irqs[i];
        /* The inventory is ascending already; a hand-built one may not be. */
        for (size_t i = 1; i < inv->n_irqs; i++)
                for (size_t j = i; j > 0 && v[j - 1]->irq > v[j]->irq; j--) {
                        const DeviceIrq *tmp = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = tmp;
                }
        return v;
}

/*
 * The queue number in an IRQ's action name (lib/devplan.h): up to any '@', it ends in a decimal number and
 * has a separator (a character neither letter nor digit: '-', '.', '_') before that number
 * ("eth0-TxRx-7" 7, "virtio2-input.0" 0, "mlx5_comp12@pci:0000:3b:00.0" 12, "em4-rx-3" 3).
 * Returns true and *ret (saturated at UINT64_MAX), or false for any other vector: a blank name,
 * "virtio2-config", "mlx5_async@pci:...", and a bare interface name such as ixgbe's misc vector
 * "eth0" (or "p7p1": its digits are the interface's, not a queue's).
 */
bool device_irq_name_queue_number(const char *name, uint64_t *ret) {
        const char *end, *digits;
        bool separator = false;
        uint64_t v = 0;

        if (!name)
                return false;
        end = strchrnul(name, '@');
        for (digits = end; digits > name && isdigit((unsigned char)digits[-1]); digits--)
                ;
        if (digits == end)
                return false;
        for (const char *c = name; c < digits; c++)
                if (!isalnum((unsigned char)*c))
                        separator = true;
        if (!separator)
                return false;
        for (const char *d = digits; d < end; d++) {
                unsigned digit = (unsigned)(*d - '0');

                v = v > (UINT64_MAX - digit) / 10 ? UINT64_MAX : v * 10 + digit;
        }
        *ret = v;
        return true;
}

/* The queue number of irq's first action name (device_irq_name_queue_number()). */
static bool irq_queue_number(const DeviceIrq *irq, uint64_t *ret) {
        return device_irq_name_queue_number(irq->names ? irq->names[0] : NULL, ret);
}

/* A queue vector of a spread rule, for ordering. */
typedef struct QueueVector {
        uint64_t queue;
        IrqAssignment *assignment;
} QueueVector;

static int queue_vector_compare(const void *a, const void *b) {
        const QueueVector *x = a, *y = b;

        if (x->queue != y->queue)
                return x->queue < y->queue ? -1 : 1;
        return x->assignment->irq < y->assignment->irq ? -1 : x->assignment->irq > y->assignment->irq;
}

/*
 * Rule i has spread: true and is resolved (irq_of[j]: the IRQ of dp->irqs[j]). Its unmanaged
 * queue vectors, by queue number then IRQ number, take the CPUs of its spread order round robin;
 * its other unmanaged vectors get the whole set (one line of its explanation names them).
 */
static int plan_spread(const DeviceIrq *const *irq_of, DevicePlan *dp, size_t i) {
        IrqRulePlan *rp = &dp->irq_rules[i];
        _cleanup_free_ QueueVector *queues = NULL;
        _cleanup_free_ unsigned *others = NULL;
        _cleanup_free_ char *l = NULL;
        size_t n_queues = 0, n_others = 0;
        int r;

        queues = calloc(MAX(rp->n_matched, 1U), sizeof(QueueVector));
        others = calloc(MAX(rp->n_matched, 1U), sizeof(unsigned));
        if (!queues || !others)
                return -ENOMEM;

        for (size_t j = 0; j < dp->n_irqs; j++) {
                IrqAssignment *a = &dp->irqs[j];
                uint64_t q;

                if (a->rule != i || a->managed)
                        continue;
                if (rp->n_spread_order > 0 && /* never 0: a resolved set is not empty */
                    irq_queue_number(irq_of[j], &q))
                        queues[n_queues++] = (QueueVector){q, a};
                else {
                        r = cpuset_copy(&a->cpus, &rp->cpus);
                        if (r < 0)
                                return r;
                        others[n_others++] = a->irq;
                }
        }

        qsort(queues, n_queues, sizeof(QueueVector), queue_vector_compare);
        for (size_t k = 0; k < n_queues; k++) {
                r = cpuset_add(&queues[k].assignment->cpus, rp->spread_order[k % rp->n_spread_order]);
                if (r < 0)
                        return r;
        }

        if (n_others == 0)
                return 0;
        l = irqs_str(others, n_others);
        if (!l)
                return -ENOMEM;
        return strv_extendf(
                &rp->explanation,
                "spread: IRQ%s %s: not %s (no queue number ends the name), given the whole set",
                n_others == 1 ? "" : "s", l, n_others == 1 ? "a queue vector" : "queue vectors");
}

static int plan_irqs(
        const Config *c, const Plan *p, const Topology *t, const DeviceInventory *inv, DevicePlan *dp) {
        _cleanup_free_ const DeviceIrq **order = NULL, **irq_of = NULL;
        _cleanup_free_ unsigned *won = NULL;
        int r;

        if (c->n_irq_rules == 0)
                return 0;
        dp->irq_rules = calloc(c->n_irq_rules, sizeof(IrqRulePlan));
        if (dp->irq_rules)
                dp->n_irq_rules = c->n_irq_rules;
        order = irqs_sorted(inv);
        if (!dp->irq_rules || !order)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_irq_rules; i++) {
                r = irq_rule_plan_resolve(&c->irq_rules[i], c, p, t, inv, &dp->irq_rules[i]);
                if (r < 0)
                        return r;
        }

        if (inv->n_irqs > 0) {
                dp->irqs = calloc(inv->n_irqs, sizeof(IrqAssignment));
                irq_of = calloc(inv->n_irqs, sizeof(DeviceIrq *));
                if (!dp->irqs || !irq_of)
                        return -ENOMEM;
        }

        for (size_t k = 0; k < inv->n_irqs; k++) {
                const DeviceIrq *irq = order[k];

                for (size_t i = 0; i < c->n_irq_rules; i++) {
                        IrqRulePlan *rp = &dp->irq_rules[i];
                        IrqAssignment *a;

                        if (!irq_rule_matches(&c->irq_rules[i], irq, inv))
                                continue;
                        if (dp->n_irqs > 0 && dp->irqs[dp->n_irqs - 1].irq == irq->irq)
                                break; /* the same IRQ twice in a hand-made inventory */
                        rp->n_matched++;
                        irq_of[dp->n_irqs] = irq;
                        a = &dp->irqs[dp->n_irqs++];
                        *a = (IrqAssignment){.irq = irq->irq, .rule = i, .managed = irq->managed};
                        if (rp->pending_reason || irq->managed || c->irq_rules[i].spread)
                                break; /* spread: plan_spread() below, once all are won */
                        r = cpuset_copy(&a->cpus, &rp->cpus);
                        if (r < 0)
                                return r;
                        break;
                }
        }

        /* What each rule won, and rules that won nothing. */
        won = calloc(MAX(dp->n_irqs, 1U), sizeof(unsigned));
        if (!won)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_irq_rules; i++) {
                IrqRulePlan *rp = &dp->irq_rules[i];
                _cleanup_free_ char *l = NULL;
                size_t n = 0, n_managed = 0;

                if (rp->n_matched == 0) {
                        r = strv_extendf(&rp->warnings, "matches no IRQ");
                        if (r < 0)
                                return r;
                        continue;
                }
                for (size_t j = 0; j < dp->n_irqs; j++)
                        if (dp->irqs[j].rule == i) {
                                won[n++] = dp->irqs[j].irq;
                                n_managed += dp->irqs[j].managed;
                        }
                l = irqs_str(won, n);
                if (!l)
                        return -ENOMEM;
                if (n_managed > 0)
                        r = strv_extendf(
                                &rp->explanation, "matches IRQ%s %s (%zu managed by the kernel, left alone)",
                                n == 1 ? "" : "s", l, n_managed);
                else
                        r = strv_extendf(&rp->explanation, "matches IRQ%s %s", n == 1 ? "" : "s", l);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < c->n_irq_rules; i++) {
                if (!c->irq_rules[i].spread || dp->irq_rules[i].pending_reason)
                        continue;
                r = plan_spread(irq_of, dp, i);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- network queues ---- */

/*
 * The CPUs of set ordered for XPS: core by core (cores in the order of their lowest CPU in set),
 * the PUs of a core together, ascending. CPUs t has no core for stand alone. Newly allocated.
 */
static int xps_order(const Topology *t, const CpuSet *set, unsigned **ret, size_t *ret_n) {
        _cleanup_cpuset_ CpuSet done = CPUSET_NULL, core = CPUSET_NULL;
        _cleanup_free_ unsigned *out = NULL;
        size_t n = 0;
        int r;

        out = calloc(MAX(cpuset_count(set), 1U), sizeof(unsigned));
        if (!out)
                return -ENOMEM;
        CPUSET_FOREACH (cpu, set) {
                if (cpuset_contains(&done, cpu))
                        continue;
                r = topology_core_siblings(t, cpu, &core);
                if (r == -ENOENT)
                        cpuset_clear(&core);
                else if (r < 0)
                        return r;
                cpuset_and(&core, set);
                r = cpuset_add(&core, cpu);
                if (r < 0)
                        return r;
                CPUSET_FOREACH (sibling, &core)
                        if (!cpuset_contains(&done, sibling)) {
                                out[n++] = (unsigned)sibling;
                                r = cpuset_add(&done, sibling);
                                if (r < 0)
                                        return r;
                        }
        }
        *ret = TAKE_PTR(out);
        *ret_n = n;
        return 0;
}

static int net_rule_plan_resolve(
        const NetRule *rule, const Config *c, const Plan *p, const Topology *t, NetRulePlan *np) {
        RuleNotes notes = {&np->explanation, &np->warnings};
        _cleanup_free_ char *reason = NULL;
        int r = 0;

        np->rule = rule;
        if (rule->rps.kind != CPU_SELECTOR_NONE) {
                r = resolve_device_selector(&rule->rps, c, p, t, "rps: ", true, &np->rps, &notes, &reason);
                if (r < 0)
                        return r;
                if (r > 0)
                        np->pending_location = &rule->rps.location;
                else
                        np->has_rps = true;
        }

        if (r == 0 && rule->xps == XPS_SPREAD) {
                if (np->has_rps) {
                        r = cpuset_copy(&np->xps, &np->rps);
                        if (r < 0)
                                return r;
                        r = strv_extendf(&np->explanation, "xps: spread over the rps: CPUs");
                        if (r < 0)
                                return r;
                } else {
                        CpuSelector all = {.kind = CPU_SELECTOR_MAPPING, .location = rule->xps_location};

                        r = resolve_device_selector(
                                &all, c, p, t, "xps: ", false, &np->xps, &notes, &reason);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                np->pending_location = &rule->xps_location;
                }
                np->has_xps = r == 0;
        } else if (r == 0 && rule->xps == XPS_SELECTOR) {
                r = resolve_device_selector(
                        &rule->xps_cpus, c, p, t, "xps: ", false, &np->xps, &notes, &reason);
                if (r < 0)
                        return r;
                if (r > 0)
                        np->pending_location = rule->xps_cpus.location.line > 0 ? &rule->xps_cpus.location
                                                                                : &rule->xps_location;
                np->has_xps = r == 0;
        }

        if (reason) {
                np->pending_reason = TAKE_PTR(reason);
                np->has_rps = np->has_xps = false;
                cpuset_clear(&np->rps);
                cpuset_clear(&np->xps);
                np->explanation = strv_free(np->explanation);
        }
        return 0;
}

static int queues_append(DevicePlan *dp, size_t *allocated, NetQueueAssignment *a) {
        if (dp->n_queues >= *allocated) {
                size_t n = MAX(*allocated * 2, 16U);
                NetQueueAssignment *q = reallocarray(dp->queues, n, sizeof(NetQueueAssignment));

                if (!q)
                        return -ENOMEM;
                dp->queues = q;
                *allocated = n;
        }
        dp->queues[dp->n_queues++] = *a;
        *a = (NetQueueAssignment){};
        return 0;
}

static void net_queue_assignment_done(NetQueueAssignment *a) {
        free(a->device);
        cpuset_done(&a->cpus);
}

/* The assignments of device net under rule i. */
static int plan_device(
        const Config *c, const Topology *t, const DeviceNet *net, size_t i, DevicePlan *dp,
        size_t *allocated) {
        NetRulePlan *np = &dp->net_rules[i];
        const NetDeviceQueues *q = &net->queues;
        int r;

        if (np->has_rps) {
                if (!q->has_rps || q->n_rx == 0) {
                        r = strv_extendf(&np->warnings, "%s: no RPS support (rps_cpus missing)", net->name);
                        if (r < 0)
                                return r;
                } else
                        for (unsigned k = 0; k < q->n_rx; k++) {
                                _cleanup_(net_queue_assignment_done) NetQueueAssignment a = {
                                        .kind = NET_QUEUE_RPS,
                                        .queue = k,
                                        .rule = i,
                                        .has_flow_cnt = c->rfs_entries > 0,
                                        .flow_cnt = c->rfs_entries > 0
                                                ? MAX(c->rfs_entries / q->n_rx, NETDEV_FLOW_CNT_MIN)
                                                : 0,
                                };

                                a.device = strdup(net->name);
                                if (!a.device)
                                        return -ENOMEM;
                                r = cpuset_copy(&a.cpus, &np->rps);
                                if (r < 0)
                                        return r;
                                r = queues_append(dp, allocated, &a);
                                if (r < 0)
                                        return r;
                        }
        }

        if (np->has_xps) {
                _cleanup_free_ unsigned *order = NULL;
                size_t n_cpus = 0, n_q = q->n_tx;

                if (!q->has_xps || n_q == 0) {
                        if (n_q <= 1)
                                r = strv_extendf(
                                        &np->warnings,
                                        "%s: one tx queue: XPS has no use on a single-queue device",
                                        net->name);
                        else
                                r = strv_extendf(
                                        &np->warnings, "%s: no XPS support (xps_cpus missing)", net->name);
                        return r;
                }
                r = xps_order(t, &np->xps, &order, &n_cpus);
                if (r < 0)
                        return r;
                if (n_cpus == 0)
                        return 0; /* can't happen: a resolved set is never empty */

                for (size_t k = 0; k < n_q; k++) {
                        _cleanup_(net_queue_assignment_done) NetQueueAssignment a = {
                                .kind = NET_QUEUE_XPS,
                                .queue = (unsigned)k,
                                .rule = i,
                        };

                        a.device = strdup(net->name);
                        if (!a.device)
                                return -ENOMEM;
                        if (n_cpus >= n_q) {
                                for (size_t j = k * n_cpus / n_q; j < (k + 1) * n_cpus / n_q; j++) {
                                        r = cpuset_add(&a.cpus, order[j]);
                                        if (r < 0)
                                                return r;
                                }
                        } else {
                                r = cpuset_add(&a.cpus, order[k % n_cpus]);
                                if (r < 0)
                                        return r;
                        }
                        r = queues_append(dp, allocated, &a);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int queue_compare(const void *a, const void *b) {
        const NetQueueAssignment *x = a, *y = b;
        int d = strcmp(x->device, y->device);

        if (d != 0)
                return d;
        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        return x->queue < y->queue ? -1 : x->queue > y->queue;
}

static int net_compare(const void *a, const void *b) {
        const DeviceNet *const *x = a, *const *y = b;
        return strcmp((*x)->name, (*y)->name);
}

static int plan_nets(
        const Config *c, const Plan *p, const Topology *t, const DeviceInventory *inv, DevicePlan *dp) {
        _cleanup_free_ const DeviceNet **nets = NULL;
        size_t allocated = 0;
        int r;

        if (c->n_net_rules == 0)
                return 0;
        dp->net_rules = calloc(c->n_net_rules, sizeof(NetRulePlan));
        if (dp->net_rules)
                dp->n_net_rules = c->n_net_rules;
        nets = calloc(MAX(inv->n_nets, 1U), sizeof(DeviceNet *));
        if (!dp->net_rules || !nets)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_net_rules; i++) {
                r = net_rule_plan_resolve(&c->net_rules[i], c, p, t, &dp->net_rules[i]);
                if (r < 0)
                        return r;
        }

        for (size_t k = 0; k < inv->n_nets; k++)
                nets[k] = &inv->nets[k];
        qsort(nets, inv->n_nets, sizeof(DeviceNet *), net_compare);

        for (size_t i = 0; i < c->n_net_rules; i++) {
                NetRulePlan *np = &dp->net_rules[i];
                _cleanup_free_ const char **names = NULL;
                _cleanup_free_ char *list = NULL;
                size_t n = 0;

                names = calloc(MAX(inv->n_nets, 1U), sizeof(char *));
                if (!names)
                        return -ENOMEM;
                for (size_t k = 0; k < inv->n_nets; k++) {
                        size_t first = SIZE_MAX;

                        for (size_t j = 0; j <= i && first == SIZE_MAX; j++)
                                if (fnmatch(c->net_rules[j].device, nets[k]->name, 0) == 0)
                                        first = j;
                        if (first != i)
                                continue;
                        names[n++] = nets[k]->name;

                        if (np->pending_reason)
                                continue;
                        r = plan_device(c, t, nets[k], i, dp, &allocated);
                        if (r < 0)
                                return r;
                }

                if (n == 0)
                        r = strv_extendf(&np->warnings, "matches no device");
                else {
                        list = names_str(names, n, EXPLAIN_MAX_NAMES);
                        if (!list)
                                return -ENOMEM;
                        r = strv_extendf(
                                &np->explanation, "%zu device%s: %s%s", n, n == 1 ? "" : "s", list,
                                np->pending_reason ? " (left alone: pending)" : "");
                }
                if (r < 0)
                        return r;
        }

        if (dp->n_queues > 1)
                qsort(dp->queues, dp->n_queues, sizeof(NetQueueAssignment), queue_compare);
        return 0;
}

/* ---- the plan ---- */

int device_plan_new(
        const Config *c, const Plan *p, const Topology *t, const DeviceInventory *inv, DevicePlan **ret) {
        _cleanup_(device_plan_freep) DevicePlan *dp = NULL;
        int r;

        dp = calloc(1, sizeof(DevicePlan));
        if (!dp)
                return -ENOMEM;
        dp->config = c;
        dp->has_rfs = c->rfs_entries > 0;
        dp->rfs_entries = c->rfs_entries;

        r = plan_irqs(c, p, t, inv, dp);
        if (r < 0)
                return r;
        r = plan_nets(c, p, t, inv, dp);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(dp);
        return 0;
}

DevicePlan *device_plan_free(DevicePlan *dp) {
        if (!dp)
                return NULL;
        for (size_t i = 0; i < dp->n_irq_rules; i++) {
                IrqRulePlan *rp = &dp->irq_rules[i];

                free(rp->pending_reason);
                cpuset_done(&rp->cpus);
                free(rp->spread_order);
                strv_free(rp->explanation);
                strv_free(rp->warnings);
        }
        free(dp->irq_rules);
        for (size_t i = 0; i < dp->n_irqs; i++)
                cpuset_done(&dp->irqs[i].cpus);
        free(dp->irqs);
        for (size_t i = 0; i < dp->n_net_rules; i++) {
                NetRulePlan *np = &dp->net_rules[i];

                free(np->pending_reason);
                cpuset_done(&np->rps);
                cpuset_done(&np->xps);
                strv_free(np->explanation);
                strv_free(np->warnings);
        }
        free(dp->net_rules);
        for (size_t i = 0; i < dp->n_queues; i++)
                net_queue_assignment_done(&dp->queues[i]);
        free(dp->queues);
        free(dp);
        return NULL;
}

static int irq_assignment_compare(const void *a, const void *b) {
        const IrqAssignment *x = a, *y = b;
        return x->irq < y->irq ? -1 : x->irq > y->irq;
}

const IrqAssignment *device_plan_find_irq(const DevicePlan *dp, unsigned irq) {
        IrqAssignment key = {.irq = irq};

        if (!dp || dp->n_irqs == 0)
                return NULL;
        return bsearch(&key, dp->irqs, dp->n_irqs, sizeof(IrqAssignment), irq_assignment_compare);
}

const NetQueueAssignment *device_plan_find_queue(
        const DevicePlan *dp, const char *device, NetQueueKind kind, unsigned queue) {
        if (!dp || !device)
                return NULL;
        for (size_t i = 0; i < dp->n_queues; i++)
                if (dp->queues[i].kind == kind && dp->queues[i].queue == queue &&
                    streq(dp->queues[i].device, device))
                        return &dp->queues[i];
        return NULL;
}
