/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * YAML → policy model. libyaml's event parser builds a small tree of nodes that keeps every
 * node's position (policy-yaml-tree.c, so diagnostics can name file:line:column), then a
 * table-driven schema walk (policy-schema.c) turns the tree into a Config. Each mapping of the
 * schema is a KeySpec table; a later key (memory:, scheduler:, irqs:, net: …) is one more
 * table entry with its parser. This file holds the policies: (match:, scheduler:, memory:,
 * threads:) and the top level of both kinds of file; cpus: values are policy-selector.c's,
 * irqs: and net: policy-devices.c's, and reading the files policy-files.c's.
 */

#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "kubelet-cpu-manager.h"
#include "netdev.h"
#include "policy-yaml-internal.h"

/* ---- match: ----------------------------------------------------------------------------- */

static int parse_match_strings(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Matcher *m = obj;
        char ***field = (char ***)((uint8_t *)m + spec->offset);
        char **list = NULL;
        int r;

        r = parse_string_list(l, spec->name, value, spec->check, &list, NULL);
        if (r < 0 || !list)
                return r;
        strv_free(*field);
        *field = list;
        m->facts |= spec->facts;
        return 0;
}

static int parse_match_cmdline(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Matcher *m = obj;
        _cleanup_strv_free_ char **list = NULL;
        _cleanup_free_ const Node **nodes = NULL;
        _cleanup_free_ char *error = NULL;
        RegexSet *re = NULL;
        size_t n, bad = 0;
        int r;

        r = parse_string_list(l, spec->name, value, NULL, &list, &nodes);
        if (r < 0 || !list)
                return r;
        n = strv_length(list);

        /* Every entry that is no POSIX ERE is reported, each at its place. */
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *why = NULL;
                RegexSet *one = NULL;

                r = regex_set_new((char *[]){list[i], NULL}, &one, NULL, &why);
                regex_set_free(one);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = node_error(
                                l, nodes[i], "%s: invalid regular expression \"%s\": %s", spec->name,
                                loader_esc(l, list[i]), strna(why));
                        if (r < 0)
                                return r;
                        bad++;
                }
        }
        if (bad > 0)
                return 0;

        /* Then all of them as one set: what Hyperscan can't take together is refused too. */
        r = regex_set_new(list, &re, &bad, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return node_error(
                        l, bad < n ? nodes[bad] : value, "%s: invalid regular expression \"%s\": %s",
                        spec->name, loader_esc(l, list[bad < n ? bad : 0]), strna(error));

        strv_free(m->cmdline);
        regex_set_free(m->cmdline_re);
        m->cmdline = TAKE_PTR(list);
        m->cmdline_re = re;
        m->n_cmdline = n;
        m->facts |= spec->facts;
        return 0;
}

/* Add a matcher here: each key is a string or a list of strings, matched "any of". */
static const KeySpec match_keys[] = {
        {"comm", parse_match_strings, offsetof(Matcher, comm), FACT_COMM, check_comm},
        {"exe", parse_match_strings, offsetof(Matcher, exe), FACT_EXE, check_absolute},
        {"cmdline", parse_match_cmdline, offsetof(Matcher, cmdline), FACT_CMDLINE, NULL},
        {"user", parse_match_strings, offsetof(Matcher, user), FACT_UID, check_user},
        {"cgroup", parse_match_strings, offsetof(Matcher, cgroup), FACT_CGROUP, check_absolute},
        /* the unit is derived from the cgroup path */
        {"unit", parse_match_strings, offsetof(Matcher, unit), FACT_UNIT | FACT_CGROUP, NULL},
        /* Kubernetes: from the cgroup path and the kubelet's records (kube.h) */
        {"pod", parse_match_strings, offsetof(Matcher, pod), FACT_POD | FACT_CGROUP, NULL},
        {"namespace", parse_match_strings, offsetof(Matcher, pod_namespace), FACT_NAMESPACE | FACT_CGROUP,
         NULL},
        {"container", parse_match_strings, offsetof(Matcher, container), FACT_CONTAINER | FACT_CGROUP, NULL},
};

static int parse_match(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;
        int r;

        if (value->kind != NODE_MAPPING)
                return loader_type_error(
                        l, value, "match",
                        "a mapping of conditions (comm:, exe:, cmdline:, user:, cgroup:, unit:, pod:, "
                        "namespace:, container:)");

        r = parse_mapping(l, value, "match", match_keys, ELEMENTSOF(match_keys), &p->match);
        if (r < 0)
                return r;
        if (value->n_children == 0) {
                char names[256];

                key_spec_names(match_keys, ELEMENTSOF(match_keys), names, sizeof names);
                return node_error(l, value, "match: needs at least one of %s", names);
        }
        return 0;
}

/* ---- scheduler: and memory: ------------------------------------------------------------- */

/* What people write for the classes (chrt(1) and kernel names). */
static const ValueHint sched_policy_hints[] = {
        {"normal", "other"},       {"sched_other", "other"}, {"cfs", "other"},
        {"sched_normal", "other"}, {"sched_batch", "batch"}, {"sched_idle", "idle"},
        {"sched_fifo", "fifo"},    {"sched_rr", "rr"},       {"realtime", "fifo"},
        {"round-robin", "rr"},
};

static const EnumSpec sched_policy_enum = {
        sched_policy_names,
        SCHED_POLICY_NAMES_MAX,
        "other, batch, idle, fifo, rr",
        "other, batch, idle, fifo or rr",
        sched_policy_hints,
        ELEMENTSOF(sched_policy_hints),
};

static bool sched_policy_is_realtime(int policy) {
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

static int parse_scheduler_policy(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = obj;
        size_t i = 0;
        int r, p;

        r = parse_enum_value(l, value, "scheduler: policy", &sched_policy_enum, &i);
        if (r <= 0)
                return r;
        p = sched_policy_from_string(sched_policy_names[i]);
        if (p < 0)
                return node_error(
                        l, value, "scheduler: policy: \"%s\" is not supported here", sched_policy_names[i]);
        s->policy = p;
        s->has_policy = true;
        s->policy_location = node_location(l, value);
        return 0;
}

static int parse_scheduler_priority(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = obj;
        long v = 0;
        int r;

        r = parse_int_range(l, value, "scheduler: priority", 1, POLICY_SCHED_PRIORITY_MAX, &v);
        if (r <= 0)
                return r;
        s->priority = (unsigned)v;
        s->has_priority = true;
        return 0;
}

static int parse_scheduler_nice(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = obj;
        long v = 0;
        int r;

        r = parse_int_range(l, value, "scheduler: nice", -20, 19, &v);
        if (r <= 0)
                return r;
        s->nice = (int)v;
        s->has_nice = true;
        return 0;
}

static int parse_scheduler_reset_on_fork(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = obj;
        bool b = false;
        int r;

        r = parse_bool_node(l, value, "scheduler: reset-on-fork", &b);
        if (r <= 0)
                return r;
        s->reset_on_fork = b;
        s->has_reset_on_fork = true;
        return 0;
}

static const ValueHint io_class_hints[] = {
        {"rt", "realtime"},
        {"real-time", "realtime"},
        {"be", "best-effort"},
        {"besteffort", "best-effort"},
        {"best_effort", "best-effort"},
        {"normal", "best-effort"},
};

static const EnumSpec io_class_enum = {
        ioprio_class_names + POLICY_IOPRIO_CLASS_RT, /* "none" is not a word of the file */
        ELEMENTSOF(ioprio_class_names) - POLICY_IOPRIO_CLASS_RT,
        "realtime, best-effort, idle",
        "realtime, best-effort or idle",
        io_class_hints,
        ELEMENTSOF(io_class_hints),
};

static int parse_io_class(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = obj;
        size_t i = 0;
        int r, c;

        r = parse_enum_value(l, value, "scheduler: io: class", &io_class_enum, &i);
        if (r <= 0)
                return r;
        c = ioprio_class_from_string(ioprio_class_names[POLICY_IOPRIO_CLASS_RT + i]);
        if (c < 0)
                return node_error(
                        l, value, "scheduler: io: class: \"%s\" is not supported here",
                        ioprio_class_names[POLICY_IOPRIO_CLASS_RT + i]);
        s->io_class = c;
        s->has_io = true;
        s->io_location = node_location(l, value);
        return 0;
}

static int parse_io_level(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = obj;
        long v = 0;
        int r;

        r = parse_int_range(l, value, "scheduler: io: level", 0, 7, &v);
        if (r <= 0)
                return r;
        s->io_level = (unsigned)v;
        return 0;
}

static const KeySpec io_keys[] = {
        {"class", parse_io_class, .required = true},
        {"level", parse_io_level},
};

/* The default I/O level within a class: 4, the kernel's level for nice 0. */
#define IO_LEVEL_DEFAULT 4U

static int parse_scheduler_io(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = obj;
        const Node *level = NULL;
        int r;

        if (value->kind == NODE_ALIAS)
                return 0;
        if (value->kind != NODE_MAPPING)
                return loader_type_error(
                        l, value, "scheduler: io",
                        "a mapping { class: realtime|best-effort|idle, level: 0-7 }");
        s->io_level = UINT_MAX;
        r = parse_mapping(l, value, "scheduler: io", io_keys, ELEMENTSOF(io_keys), s);
        if (r < 0)
                return r;
        level = mapping_key(value, "level");
        if (s->has_io && s->io_class == POLICY_IOPRIO_CLASS_IDLE && level)
                return node_error(
                        l, level,
                        "scheduler: io: level does not apply to class idle (idle I/O has no levels)");
        if (s->io_level == UINT_MAX)
                s->io_level = s->has_io && s->io_class != POLICY_IOPRIO_CLASS_IDLE ? IO_LEVEL_DEFAULT : 0;
        return 0;
}

static const KeySpec scheduler_keys[] = {
        {"policy", parse_scheduler_policy}, {"priority", parse_scheduler_priority},
        {"nice", parse_scheduler_nice},     {"reset-on-fork", parse_scheduler_reset_on_fork},
        {"io", parse_scheduler_io},
};

/*
 * Combinations within one scheduler: mapping that can't work: priority without fifo/rr,
 * fifo/rr without priority, nice with fifo/rr. Returns 0 or -ENOMEM.
 */
static int check_scheduler(Loader *l, const Node *mapping, const SchedulerSpec *s) {
        const Node *n = NULL;
        int r;

        if (s->has_priority && !(s->has_policy && sched_policy_is_realtime(s->policy))) {
                n = mapping_value(mapping, "priority");
                r = node_error(
                        l, n,
                        "scheduler: priority is only for the real-time policies fifo and rr (%s); other "
                        "policies use nice:",
                        s->has_policy ? "this one is not" : "no policy: given");
                if (r < 0)
                        return r;
        }
        if (s->has_policy && sched_policy_is_realtime(s->policy) && !mapping_value(mapping, "priority")) {
                r = node_error(
                        l, mapping_value(mapping, "policy"),
                        "scheduler: priority: required for fifo/rr (1-99, higher runs first)");
                if (r < 0)
                        return r;
        }
        if (s->has_nice && s->has_policy && sched_policy_is_realtime(s->policy)) {
                r = node_error(
                        l, mapping_value(mapping, "nice"),
                        "scheduler: nice does not apply to fifo/rr (a real-time thread runs by priority:)");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* scheduler: a mapping; the SchedulerSpec is at spec->offset. */
static int parse_scheduler(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        SchedulerSpec *s = (SchedulerSpec *)((uint8_t *)obj + spec->offset);
        int r;

        if (value->kind == NODE_ALIAS)
                return 0;
        if (value->kind != NODE_MAPPING)
                return loader_type_error(
                        l, value, "scheduler", "a mapping (policy:, priority:, nice:, reset-on-fork:, io:)");
        s->location = node_location(l, value);
        r = parse_mapping(l, value, "scheduler", scheduler_keys, ELEMENTSOF(scheduler_keys), s);
        if (r < 0)
                return r;
        return check_scheduler(l, value, s);
}

static int parse_memory_nodes(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        MemorySpec *m = obj;
        int r;

        if (value->kind == NODE_SCALAR && streq(value->value, "local")) {
                m->kind = MEMORY_LOCAL;
                return 0;
        }
        if (value->kind == NODE_ALIAS)
                return 0;
        if (value->kind != NODE_SCALAR || node_is_null(value))
                return loader_type_error(
                        l, value, "memory: nodes", "local or a NUMA node list such as \"0-1\"");
        r = parse_cpu_list_node(l, value, "memory: nodes", "NUMA node", &m->nodes);
        if (r > 0)
                m->kind = MEMORY_NODES;
        return r < 0 ? r : 0;
}

static int parse_memory_migrate(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        MemorySpec *m = obj;
        bool b = false;
        int r;

        r = parse_bool_node(l, value, "memory: migrate", &b);
        if (r > 0)
                m->migrate = b;
        return r < 0 ? r : 0;
}

static const KeySpec memory_keys[] = {
        {"nodes", parse_memory_nodes, .required = true},
        {"migrate", parse_memory_migrate},
};

static int parse_memory(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;
        int r;

        if (value->kind == NODE_ALIAS)
                return 0;
        if (value->kind != NODE_MAPPING)
                return loader_type_error(
                        l, value, "memory", "a mapping (nodes: local or a node list, migrate:)");
        p->memory.location = node_location(l, value);
        r = parse_mapping(l, value, "memory", memory_keys, ELEMENTSOF(memory_keys), &p->memory);
        return r < 0 ? r : 0;
}

static int thread_memory(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return node_error(
                l, key,
                "memory: is per process: a thread's mempolicy can only be set by the thread itself (give "
                "memory: in the policy)");
}

/* ---- threads: --------------------------------------------------------------------------- */

static int parse_thread_name(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        ThreadRule *t = obj;
        const char *s = NULL;
        int r;

        r = node_string(l, value, "name", "a thread name glob", &s);
        if (r <= 0)
                return r;
        if (isempty(s))
                return node_error(l, value, "name: must not be empty");
        r = check_comm(l, "name", value, s);
        if (r <= 0)
                return r;
        return free_and_strdup(&t->name, s);
}

static const char *const spread_over_names[] = {"process", "policy"};

static const ValueHint spread_over_hints[] = {
        {"all", "policy"},
        {"every", "policy"},
        {"thread", "process"},
        {"threads", "process"},
};

static const EnumSpec spread_over_enum = {
        spread_over_names, ELEMENTSOF(spread_over_names), "process, policy", "process or policy",
        spread_over_hints, ELEMENTSOF(spread_over_hints),
};

static int parse_spread_over(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        ThreadRule *t = obj;
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "spread-over", &spread_over_enum, &i);
        if (r <= 0)
                return r;
        t->spread_over_policy = i == 1;
        t->spread_over_location = node_location(l, value);
        return 0;
}

/* Add a per-thread key here. */
static const KeySpec thread_keys[] = {
        {"name", parse_thread_name, .required = true},
        {"cpus", parse_thread_cpus, offsetof(ThreadRule, cpus)},
        {"spread-over", parse_spread_over},
        {"scheduler", parse_scheduler, offsetof(ThreadRule, scheduler)},
        {"memory", thread_memory},
};

static void thread_rule_done_any(void *rule) {
        thread_rule_done(rule);
}

static int thread_rule_add(Loader *l, const Node *item, void *rule, void *obj) {
        ThreadRule *a = NULL;
        Policy *p = obj;

        a = reallocarray(p->threads, p->n_threads + 1, sizeof(ThreadRule));
        if (!a)
                return -ENOMEM;
        p->threads = a;
        p->threads[p->n_threads++] = *(ThreadRule *)rule;
        *(ThreadRule *)rule = (ThreadRule){};
        return 0;
}

static const RuleListSpec thread_rule_list = {
        .key = "threads",
        .expected = "a list of thread rules (- name: …)",
        .entry_hint = "name:, cpus:",
        .what = "thread rule",
        .keys = thread_keys,
        .n_keys = ELEMENTSOF(thread_keys),
        .size = sizeof(ThreadRule),
        .location_offset = offsetof(ThreadRule, location),
        .done = thread_rule_done_any,
        .add = thread_rule_add,
};

static int parse_threads(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return parse_rule_list(l, &thread_rule_list, value, obj);
}

/* ---- policies: -------------------------------------------------------------------------- */

static int parse_policy_name(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;

        return parse_rule_name(l, value, &p->name, &p->name_location);
}

static const char *const via_names[] = {
        [VIA_PROCESS] = "process",
        [VIA_SYSTEMD] = "systemd",
};

static const ValueHint via_hints[] = {
        {"unit", "systemd"},
        {"cgroup", "systemd"},
        {"affinity", "process"},
        {"sched", "process"},
};

static const EnumSpec via_enum = {
        via_names, ELEMENTSOF(via_names), "process, systemd", "process or systemd",
        via_hints, ELEMENTSOF(via_hints),
};

static int parse_via(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "via", &via_enum, &i);
        if (r <= 0)
                return r;
        p->via = (PlacementVia)i;
        p->via_location = node_location(l, value);
        return 0;
}

/*
 * via: systemd sets properties on named units, so the policy must match by unit: and every
 * entry must be one literal unit name (a glob names no unit systemd could be asked about).
 * Reported at the offending unit: entry, or at the via: value. Returns 0 or -ENOMEM.
 */
static int check_via(Loader *l, const Node *policy, const Policy *p) {
        const Node *match = NULL, *unit = NULL, *via = NULL;
        int r;

        if (p->via != VIA_SYSTEMD)
                return 0;
        via = mapping_value(policy, "via");
        if (via) {
                bool within = p->cpus.within == WITHIN_CPUSET;

                for (size_t i = 0; i < p->n_threads && !within; i++)
                        within = p->threads[i].cpus.within == WITHIN_CPUSET;
                if (within)
                        return node_error(
                                l, via,
                                "via: systemd can't be used with cpus: within: cpuset (of the policy or "
                                "a thread rule): AllowedCPUs= would set the cgroup's CPUs that within: "
                                "takes its bound from; use via: process");
        }
        match = mapping_value(policy, "match");
        if (match && match->kind == NODE_MAPPING)
                unit = mapping_value(match, "unit");
        if (!p->match.unit || !unit) {
                if (!via)
                        return 0;
                return node_error(
                        l, via,
                        "via: systemd needs match: unit: with the unit names to configure (AllowedCPUs= "
                        "is a property of a systemd unit); add unit: NAME.service or use via: process");
        }
        for (size_t i = 0; p->match.unit[i]; i++) {
                const char *u = p->match.unit[i];
                const Node *n = unit;

                if (unit->kind == NODE_SEQUENCE) {
                        for (size_t k = 0; k < unit->n_children; k++)
                                if (unit->children[k]->kind == NODE_SCALAR && unit->children[k]->value &&
                                    streq(unit->children[k]->value, u)) {
                                        n = unit->children[k];
                                        break;
                                }
                }
                if (has_glob_chars(u)) {
                        r = node_error(
                                l, n,
                                "via: systemd needs literal unit names, but unit: \"%s\" is a glob (systemd "
                                "can only be asked about a unit by its exact name); list the units or use "
                                "via: process",
                                loader_esc(l, u));
                        if (r < 0)
                                return r;
                } else if (!strchr(u, '.')) {
                        r = node_error(
                                l, n,
                                "via: systemd needs full unit names with their type suffix, but unit: "
                                "\"%s\" has none; write \"%s.service\" (or .scope)",
                                loader_esc(l, u), loader_esc(l, u));
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static const char *const processes_names[] = {"spread"};

static const ValueHint processes_hints[] = {
        {"spreaded", "spread"},
        {"per-cpu", "spread"},
        {"per-core", "spread"},
        {"true", "spread"},
};

static const EnumSpec processes_enum = {
        processes_names, ELEMENTSOF(processes_names), "spread", "spread",
        processes_hints, ELEMENTSOF(processes_hints),
};

static int parse_processes(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "processes", &processes_enum, &i);
        if (r <= 0)
                return r;
        p->spread_processes = true;
        p->processes_location = node_location(l, value);
        return 0;
}

/*
 * Spreading over processes (processes: spread, a thread rule's spread-over: policy) shares one
 * order among every process of the policy, and places each process itself: it can't be used
 * with within: cpuset (each process has a set of its own) or via: systemd (the unit's cgroup,
 * not the daemon, places the processes). spread-over: says how a cpus: spread rule spreads, so
 * a rule without it is an error. Reported at the offending value. Returns 0 or -ENOMEM.
 */
static int check_spread(Loader *l, const Policy *p) {
        bool within = p->cpus.within == WITHIN_CPUSET;
        const Location *at = p->spread_processes ? &p->processes_location : NULL;
        const char *what = "processes: spread";
        int r;

        for (size_t i = 0; i < p->n_threads; i++) {
                const ThreadRule *t = &p->threads[i];

                within = within || t->cpus.within == WITHIN_CPUSET;
                if (t->spread_over_location.line == 0)
                        continue;
                if (t->cpus.kind != CPU_SELECTOR_SPREAD) {
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, t->spread_over_location.line,
                                t->spread_over_location.column,
                                "spread-over: applies to cpus: spread only (thread rule \"%s\" has no cpus: "
                                "spread)",
                                loader_esc(l, t->name));
                        if (r < 0)
                                return r;
                } else if (t->spread_over_policy && !at) {
                        at = &t->spread_over_location;
                        what = "spread-over: policy";
                }
        }
        if (!at)
                return 0;
        if (within) {
                r = loader_log(
                        l, DIAGNOSTIC_ERROR, at->line, at->column,
                        "%s can't be used with cpus: within: cpuset: every process of the policy shares "
                        "one spread order, and within: gives each process a set of its own",
                        what);
                if (r < 0)
                        return r;
        }
        if (p->via == VIA_SYSTEMD) {
                r = loader_log(
                        l, DIAGNOSTIC_ERROR, at->line, at->column,
                        "%s can't be used with via: systemd: the unit's cgroup, not affinityd, places its "
                        "processes then; use via: process",
                        what);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Add a policy key here. */
static const KeySpec policy_keys[] = {
        {"name", parse_policy_name, .required = true},
        {"match", parse_match, .required = true},
        {"cpus", parse_cpus, offsetof(Policy, cpus)},
        {"threads", parse_threads},
        {"memory", parse_memory},
        {"scheduler", parse_scheduler, offsetof(Policy, scheduler)},
        {"on-drift", parse_on_drift, offsetof(Policy, on_drift)},
        {"via", parse_via},
        {"processes", parse_processes},
};

static void policy_done_any(void *policy) {
        policy_done(policy);
}

static int policy_add(Loader *l, const Node *item, void *policy, void *obj) {
        int r;

        r = check_via(l, item, policy);
        if (r < 0)
                return r;
        r = check_spread(l, policy);
        if (r < 0)
                return r;
        return config_add_policy(obj, policy);
}

static const RuleListSpec policy_list = {
        .key = "policies",
        .expected = "a list of policies (- name: …)",
        .entry_hint = "name:, match:, cpus:, …",
        .what = "policy",
        .keys = policy_keys,
        .n_keys = ELEMENTSOF(policy_keys),
        .size = sizeof(Policy),
        .location_offset = offsetof(Policy, location),
        .done = policy_done_any,
        .add = policy_add,
};

static int parse_policies(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return parse_rule_list(l, &policy_list, value, obj);
}

/* ---- top level -------------------------------------------------------------------------- */

static int parse_reserve(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        int r;

        if (c->has_reserve)
                return node_error(
                        l, key, "reserve: already set at %s:%u:%u", c->reserve_location.file,
                        c->reserve_location.line, c->reserve_location.column);
        if (value->kind == NODE_MAPPING) {
                unsigned n_errors = l->diag->n_errors;

                r = parse_reserve_selector(l, value, &c->reserve_selector);
                if (r < 0)
                        return r;
                if (l->diag->n_errors > n_errors) {
                        cpu_selector_done(&c->reserve_selector.cpus);
                        c->reserve_selector.per = RESERVE_PER_NONE;
                        return 0;
                }
        } else {
                r = parse_cpu_list_node(l, value, "reserve", "CPU", &c->reserve);
                if (r <= 0)
                        return r;
        }
        c->has_reserve = true;
        c->reserve_location = node_location(l, value);
        return 0;
}

/*
 * A time span as systemd writes them: a decimal number and a unit, "500ms", "2s", "1min"
 * (us, ms, s, min; no unit means seconds). Into *ret_usec; returns 0 or -EINVAL.
 */
static int parse_timespan_usec(const char *s, uint64_t *ret_usec) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                {"us", 1}, {"ms", 1000}, {"s", 1000000}, {"sec", 1000000}, {"min", 60000000}, {"", 1000000},
        };
        unsigned long long v;
        char *end = NULL;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || end == s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(end, units[i].suffix)) {
                        if (v > UINT64_MAX / units[i].usec)
                                return -EINVAL;
                        *ret_usec = (uint64_t)v * units[i].usec;
                        return 0;
                }
        return -EINVAL;
}

/*
 * A time span setting (name:) into *ret, in µs, within [min, max]: expected describes it for a
 * value that is not a string, examples the forms offered for one that doesn't parse, range the
 * bounds for one outside them. Returns 0, or node_error()'s -EINVAL.
 */
static int parse_timespan_setting(
        Loader *l, const Node *value, const char *name, const char *expected, const char *examples,
        uint64_t min, uint64_t max, const char *range, uint64_t *ret) {
        const char *v = NULL;
        uint64_t usec = 0;
        int r;

        r = node_string(l, value, name, expected, &v);
        if (r <= 0)
                return r;
        if (parse_timespan_usec(v, &usec) < 0)
                return node_error(
                        l, value, "%s: invalid time span \"%s\" (expected e.g. %s)", name, loader_esc(l, v),
                        examples);
        if (usec < min || usec > max)
                return node_error(l, value, "%s: %s is out of range (%s)", name, loader_esc(l, v), range);
        *ret = usec;
        return 0;
}

static int parse_poll_interval(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;

        return parse_timespan_setting(
                l, value, "poll-interval", "a time span such as \"500ms\" or \"2s\"",
                "\"500ms\", \"2s\", \"1min\"", POLL_INTERVAL_MIN_USEC, POLL_INTERVAL_MAX_USEC, "10ms to 1h",
                &c->poll_interval_usec);
}

static int parse_drift_interval(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;

        return parse_timespan_setting(
                l, value, "drift-interval", "a time span such as \"500ms\" or \"30s\"",
                "\"500ms\", \"30s\", \"5min\"", DRIFT_INTERVAL_MIN_USEC, DRIFT_INTERVAL_MAX_USEC,
                "10ms to 1440min", &c->drift_interval_usec);
}

static int parse_effect_interval(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;

        if (value->kind == NODE_SCALAR && value->value && streq(value->value, "off")) {
                c->effect_interval_usec = EFFECT_INTERVAL_OFF;
                return 0;
        }
        return parse_timespan_setting(
                l, value, "effect-interval", "a time span such as \"10s\", or off", "\"10s\", \"1min\", off",
                EFFECT_INTERVAL_MIN_USEC, EFFECT_INTERVAL_MAX_USEC, "1s to 60min", &c->effect_interval_usec);
}

static int parse_allow_realtime(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        bool b = false;
        int r;

        r = parse_bool_node(l, value, "allow-realtime", &b);
        if (r <= 0)
                return r;
        c->allow_realtime = b;
        c->allow_realtime_location = node_location(l, value);
        return 0;
}

static int parse_rfs(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        unsigned long p = 1;
        long v = 0;
        int r;

        /* The kernel's limit of net.core.rps_sock_flow_entries, 2^29. */
        r = parse_int_range(l, value, "rfs", 1, (long)NETDEV_RFS_ENTRIES_MAX, &v);
        if (r <= 0)
                return r;
        c->rfs_entries = (uint32_t)v;
        c->rfs_location = node_location(l, value);
        while (p < (unsigned long)v)
                p <<= 1;
        if (p != (unsigned long)v) {
                r = node_warning(
                        l, value,
                        "rfs: the kernel rounds %ld up to a power of two: the flow table will have %lu "
                        "entries",
                        v, p);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* kubelet-cpu-manager-state: an absolute path, or none. */
static int parse_kubelet_cpu_manager_state(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        const char *v = NULL;
        int r;

        r = node_string(
                l, value, "kubelet-cpu-manager-state",
                "an absolute path or none (\"" KUBELET_CPU_MANAGER_STATE_DEFAULT "\")", &v);
        if (r <= 0)
                return r;
        if (!streq(v, "none") && v[0] != '/')
                return node_error(
                        l, value,
                        "kubelet-cpu-manager-state: \"%s\" is not an absolute path (or none, not to read "
                        "the "
                        "kubelet's checkpoint)",
                        loader_esc(l, v));
        if (has_control_chars(v))
                return node_error(l, value, "kubelet-cpu-manager-state: contains control characters");
        r = free_and_strdup(&c->kubelet_cpu_manager_state, streq(v, "none") ? "" : v);
        if (r < 0)
                return r;
        c->kubelet_cpu_manager_state_location = node_location(l, value);
        return 0;
}

static int misplaced_rule(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return node_error(
                l, key, "%s: belongs in a policy.d/*.yaml file, not in " SETTINGS_NAME, spec->name);
}

static int misplaced_setting(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return node_error(l, key, "%s: belongs in " SETTINGS_NAME ", not in a policy.d file", spec->name);
}

/* affinityd.yaml. Add a setting here (allow-realtime: …); rule keys get misplaced_rule. */
static const KeySpec settings_keys[] = {
        {"reserve", parse_reserve},
        {"poll-interval", parse_poll_interval},
        {"drift-interval", parse_drift_interval},
        {"effect-interval", parse_effect_interval},
        {"allow-realtime", parse_allow_realtime},
        {"restore-on-exit", parse_bool_key, offsetof(Config, restore_on_exit)},
        {"rfs", parse_rfs},
        {"kubelet-cpu-manager-state", parse_kubelet_cpu_manager_state},
        {"policies", misplaced_rule},
        {"irqs", misplaced_rule},
        {"net", misplaced_rule},
};

/* policy.d/ *.yaml. Add a rule kind here (policies:, irqs:, net: …); settings get misplaced_setting. */
static const KeySpec rules_keys[] = {
        {"policies", parse_policies},
        {"irqs", parse_irqs},
        {"net", parse_net},
        {"reserve", misplaced_setting},
        {"poll-interval", misplaced_setting},
        {"drift-interval", misplaced_setting},
        {"effect-interval", misplaced_setting},
        {"allow-realtime", misplaced_setting},
        {"restore-on-exit", misplaced_setting},
        {"rfs", misplaced_setting},
        {"kubelet-cpu-manager-state", misplaced_setting},
};

/* A key that is valid one level up or down: say where it goes. */
static const char *misplaced_key_hint(const char *what, const char *key) {
        if (streq(what, "policy") && key_spec_has(match_keys, ELEMENTSOF(match_keys), key))
                return "conditions go under match:";
        if (streq(what, "policy") && key_spec_has(selector_keys, n_selector_keys, key))
                return "selector keys go under cpus:";
        if (streq(what, "match") && key_spec_has(policy_keys, ELEMENTSOF(policy_keys), key))
                return "it belongs to the policy, one level up, not under match:";
        if (streq(what, "the top level") && key_spec_has(policy_keys, ELEMENTSOF(policy_keys), key))
                return "policies are entries of a policies: list";
        if (streq(what, "policy") && key_spec_has(scheduler_keys, ELEMENTSOF(scheduler_keys), key))
                return "scheduling keys go under scheduler:";
        if (streq(what, "thread rule") && key_spec_has(scheduler_keys, ELEMENTSOF(scheduler_keys), key))
                return "scheduling keys go under scheduler:";
        if (streq(what, "policy") && streq(key, "migrate"))
                return "migrate: goes under memory:";
        if (streq(what, "scheduler") && key_spec_has(io_keys, ELEMENTSOF(io_keys), key))
                return "I/O priority keys go under io:";
        if ((streq(what, "thread rule") || streq(what, "policy")) && streq(key, "spread"))
                return "write cpus: spread in a thread rule";
        if (streq(what, "cpus") && streq(key, "spread"))
                return "write cpus: spread in a thread rule, or spread: true next to cpus: in an irqs: "
                       "rule";
        if ((streq(what, "irq rule") || streq(what, "net rule")) && streq(key, "exclusive"))
                return "exclusive: applies to policies only";
        if (streq(what, "irq rule") && key_spec_has(irq_match_keys, n_irq_match_keys, key))
                return "conditions go under match:";
        if (streq(what, "irq rule") && key_spec_has(selector_keys, n_selector_keys, key))
                return "selector keys go under cpus:";
        if (streq(what, "irq match") && key_spec_has(irq_rule_keys, n_irq_rule_keys, key))
                return "it belongs to the irqs: rule, one level up, not under match:";
        if (streq(what, "irq match") && key_spec_has(match_keys, ELEMENTSOF(match_keys), key))
                return "IRQs are matched by device: (an interface or PCI address) and action: (IRQ "
                       "names), processes in policies:";
        if (streq(what, "net rule") && streq(key, "cpus"))
                return "a net: rule sets rps: (receive) and xps: (transmit) CPUs; interrupt CPUs go in "
                       "an irqs: rule";
        if (streq(what, "net rule") && key_spec_has(selector_keys, n_selector_keys, key))
                return "selector keys go under rps: or xps:";
        if (streq(what, "net rule") && streq(key, "match"))
                return "a net: rule selects devices by device: (a glob on interface names)";
        if (streq(what, "net rule") && streq(key, "spread"))
                return "write xps: spread";
        if ((streq(what, "rps") || streq(what, "xps")) && streq(key, "spread"))
                return "write xps: spread as the whole value of xps:";
        return NULL;
}

static int load_root(Loader *l, const Node *root) {
        int r;

        if (!root || root->kind == NODE_ALIAS || node_is_null(root))
                return 0; /* an empty or comment-only file */
        if (root->kind != NODE_MAPPING)
                return loader_type_error(
                        l, root, "top level",
                        l->is_settings ? "a mapping of settings (reserve: …)"
                                       : "a mapping with a policies: list");

        if (l->is_settings)
                r = parse_mapping(
                        l, root, "the top level", settings_keys, ELEMENTSOF(settings_keys), l->config);
        else
                r = parse_mapping(l, root, "the top level", rules_keys, ELEMENTSOF(rules_keys), l->config);
        return r < 0 ? r : 0;
}

int config_parse_string(
        Config *c, const char *file, const char *text, size_t len, bool is_settings, Diagnostics *diag) {
        _cleanup_(diagnostics_done) Diagnostics dummy = {};
        _cleanup_(node_freep) Node *root = NULL;
        yaml_mark_t second = {};
        _cleanup_(loader_done) Loader l = {};
        unsigned errors;
        int r;

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        l = (Loader){
                .config = c,
                .diag = diag,
                .is_settings = is_settings,
                .misplaced_key_hint = misplaced_key_hint,
        };
        l.file = config_add_file(c, file ?: "<string>");
        if (!l.file)
                return -ENOMEM;

        r = node_tree_read(diag, l.file, text, len, &root, &second);
        if (r == -ENOMEM)
                return r;

        if (r >= 0) {
                r = load_root(&l, root);
                if (r < 0)
                        return r;
                if (second.line > 0) {
                        r = loader_log(
                                &l, DIAGNOSTIC_ERROR, (unsigned)second.line, (unsigned)second.column + 1,
                                "a second YAML document: a file holds exactly one (remove the \"---\" or "
                                "split the file)");
                        if (r < 0)
                                return r;
                }
        }

        return diag->n_errors > errors ? -EINVAL : 0;
}
