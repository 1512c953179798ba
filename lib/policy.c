/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The policy model's lifecycle: construction, destruction and lookup, and the scheduler words.
 * Reading and validating files is the YAML loader's (policy-yaml.h), resolution against a
 * machine the plan's (plan.h).
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubelet-cpu-manager.h"
#include "policy.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

Config *config_new(void) {
        return calloc(1, sizeof(Config));
}

void cpu_selector_done(CpuSelector *s) {
        if (!s)
                return;
        cpuset_done(&s->literal);
        cpuset_done(&s->nodes);
        cpuset_done(&s->packages);
        free(s->near);
        strv_free(s->avoid);
        free(s->avoid_locations);
        *s = (CpuSelector){};
}

void matcher_done(Matcher *m) {
        if (!m)
                return;
        strv_free(m->comm);
        strv_free(m->exe);
        strv_free(m->cmdline);
        m->cmdline_re = regex_set_free(m->cmdline_re);
        strv_free(m->user);
        strv_free(m->cgroup);
        strv_free(m->unit);
        strv_free(m->pod);
        strv_free(m->pod_namespace);
        strv_free(m->container);
        *m = (Matcher){};
}

void thread_rule_done(ThreadRule *t) {
        if (!t)
                return;
        free(t->name);
        cpu_selector_done(&t->cpus);
        *t = (ThreadRule){};
}

void policy_done(Policy *p) {
        if (!p)
                return;
        free(p->name);
        matcher_done(&p->match);
        cpu_selector_done(&p->cpus);
        cpuset_done(&p->memory.nodes);
        for (size_t i = 0; i < p->n_threads; i++)
                thread_rule_done(&p->threads[i]);
        free(p->threads);
        *p = (Policy){};
}

void irq_rule_done(IrqRule *r) {
        if (!r)
                return;
        free(r->name);
        strv_free(r->device);
        strv_free(r->action);
        cpu_selector_done(&r->cpus);
        *r = (IrqRule){};
}

void net_rule_done(NetRule *r) {
        if (!r)
                return;
        free(r->name);
        free(r->device);
        cpu_selector_done(&r->rps);
        cpu_selector_done(&r->xps_cpus);
        *r = (NetRule){};
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_policies; i++)
                policy_done(&c->policies[i]);
        free(c->policies);
        for (size_t i = 0; i < c->n_irq_rules; i++)
                irq_rule_done(&c->irq_rules[i]);
        free(c->irq_rules);
        for (size_t i = 0; i < c->n_net_rules; i++)
                net_rule_done(&c->net_rules[i]);
        free(c->net_rules);
        cpuset_done(&c->reserve);
        cpu_selector_done(&c->reserve_selector.cpus);
        free(c->kubelet_cpu_manager_state);
        strv_free(c->files);
        free(c);
        return NULL;
}

const char *config_kubelet_cpu_manager_state(const Config *c) {
        if (!c || !c->kubelet_cpu_manager_state)
                return KUBELET_CPU_MANAGER_STATE_DEFAULT;
        return *c->kubelet_cpu_manager_state ? c->kubelet_cpu_manager_state : NULL;
}

uint64_t config_effect_interval_usec(const Config *c) {
        if (!c || c->effect_interval_usec == 0)
                return EFFECT_INTERVAL_DEFAULT_USEC;
        return c->effect_interval_usec == EFFECT_INTERVAL_OFF ? 0 : c->effect_interval_usec;
}

const Policy *config_find_policy(const Config *c, const char *name) {
        if (!c || !name)
                return NULL;
        for (size_t i = 0; i < c->n_policies; i++)
                if (streq_ptr(c->policies[i].name, name))
                        return &c->policies[i];
        return NULL;
}

const char *config_add_file(Config *c, const char *path) {
        size_t n = strv_length(c->files);
        char **l = NULL;
        char *copy = NULL;

        copy = strdup(path);
        if (!copy)
                return NULL;
        l = reallocarray(c->files, n + 2, sizeof(char *));
        if (!l) {
                free(copy);
                return NULL;
        }
        l[n] = copy;
        l[n + 1] = NULL;
        c->files = l;
        return copy;
}

int config_add_policy(Config *c, Policy *p) {
        Policy *l = NULL;

        l = reallocarray(c->policies, c->n_policies + 1, sizeof(Policy));
        if (!l)
                return -ENOMEM;
        c->policies = l;
        c->policies[c->n_policies++] = *p;
        c->facts |= p->match.facts;
        *p = (Policy){};
        return 0;
}

int config_add_irq_rule(Config *c, IrqRule *r) {
        IrqRule *l = reallocarray(c->irq_rules, c->n_irq_rules + 1, sizeof(IrqRule));
        if (!l)
                return -ENOMEM;
        c->irq_rules = l;
        c->irq_rules[c->n_irq_rules++] = *r;
        *r = (IrqRule){};
        return 0;
}

int config_add_net_rule(Config *c, NetRule *r) {
        NetRule *l = reallocarray(c->net_rules, c->n_net_rules + 1, sizeof(NetRule));
        if (!l)
                return -ENOMEM;
        c->net_rules = l;
        c->net_rules[c->n_net_rules++] = *r;
        *r = (NetRule){};
        return 0;
}

const IrqRule *config_find_irq_rule(const Config *c, const char *name) {
        if (!c || !name)
                return NULL;
        for (size_t i = 0; i < c->n_irq_rules; i++)
                if (streq_ptr(c->irq_rules[i].name, name))
                        return &c->irq_rules[i];
        return NULL;
}

const NetRule *config_find_net_rule(const Config *c, const char *name) {
        if (!c || !name)
                return NULL;
        for (size_t i = 0; i < c->n_net_rules; i++)
                if (streq_ptr(c->net_rules[i].name, name))
                        return &c->net_rules[i];
        return NULL;
}

/* Appends " " (after the opening brace) or ", " (after a value), and "key: ", to f. */
static void selector_key(FILE *f, bool *first, const char *key) {
        fprintf(f, "%s%s: ", *first ? " " : ", ", key);
        *first = false;
}

/* Appends v, double-quoted unless it is made of letters, digits, '.', '_' and '-' only (a plain
 * YAML scalar in flow style). Device names and cpu-lists hold no '"' or '\\'. */
static void selector_value(FILE *f, const char *v) {
        bool plain = v[0] &&
                v[strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")] == '\0';

        fprintf(f, plain ? "%s" : "\"%s\"", v);
}

static int selector_list(FILE *f, bool *first, const char *key, const CpuSet *set) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = cpuset_format_list(set, &text);
        if (r < 0)
                return r;
        selector_key(f, first, key);
        selector_value(f, text);
        return 0;
}

int cpu_selector_format(const CpuSelector *s, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        bool first = true;
        size_t size = 0;
        int r;

        switch (s->kind) {
        case CPU_SELECTOR_NONE:
                buf = strdup("");
                break;
        case CPU_SELECTOR_SPREAD:
                buf = strdup("spread");
                break;
        case CPU_SELECTOR_LITERAL:
                r = cpuset_format_list(&s->literal, &buf);
                if (r < 0)
                        return r;
                break;
        case CPU_SELECTOR_MAPPING:
                if ((unsigned)s->cpu_kind > CPU_KIND_EFFICIENCY || (unsigned)s->reserved > RESERVED_ONLY ||
                    (unsigned)s->smt > SMT_ONE_PER_CORE)
                        return -EINVAL;
                f = open_memstream(&buf, &size);
                if (!f)
                        return -ENOMEM;
                fputs("{", f);
                if (s->has_nodes) {
                        r = selector_list(f, &first, "nodes", &s->nodes);
                        if (r < 0)
                                return r;
                }
                if (s->has_packages) {
                        r = selector_list(f, &first, "packages", &s->packages);
                        if (r < 0)
                                return r;
                }
                if (s->near) {
                        selector_key(f, &first, "near");
                        selector_value(f, s->near);
                }
                if (s->cpu_kind != CPU_KIND_ANY) {
                        selector_key(f, &first, "kind");
                        fputs(s->cpu_kind == CPU_KIND_PERFORMANCE ? "performance" : "efficiency", f);
                }
                if (s->reserved != RESERVED_AVOID) {
                        selector_key(f, &first, "reserved");
                        fputs(s->reserved == RESERVED_ALLOW ? "allow" : "only", f);
                }
                if (s->n_cores > 0) {
                        selector_key(f, &first, "cores");
                        fprintf(f, "%u", s->n_cores);
                }
                if (s->n_cpus > 0) {
                        selector_key(f, &first, "cpus");
                        fprintf(f, "%u", s->n_cpus);
                }
                if (s->smt == SMT_ONE_PER_CORE) {
                        selector_key(f, &first, "smt");
                        fputs("one-per-core", f);
                }
                if (s->exclusive) {
                        selector_key(f, &first, "exclusive");
                        fputs("true", f);
                }
                fputs(first ? "}" : " }", f);
                /* fclose() writes buf and size; an error there is a failed allocation */
                r = fclose(TAKE_PTR(f));
                if (r != 0)
                        return -ENOMEM;
                break;
        default:
                return -EINVAL;
        }
        if (!buf)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int reserve_selector_format(const ReserveSelector *s, char **ret) {
        static const char *const per_names[] = {
                [RESERVE_PER_PACKAGE] = "package",
                [RESERVE_PER_NODE] = "node",
        };
        _cleanup_free_ char *sel = NULL;
        size_t n;
        char *joined = NULL;
        int r;

        if (s->cpus.kind != CPU_SELECTOR_MAPPING || (unsigned)s->per > RESERVE_PER_NODE)
                return -EINVAL;
        r = cpu_selector_format(&s->cpus, &sel);
        if (r < 0)
                return r;
        if (s->per == RESERVE_PER_NONE) {
                *ret = TAKE_PTR(sel);
                return 0;
        }
        /* "{ cores: 1 }" → "{ cores: 1, per: package }"; "{}" → "{ per: package }" */
        n = strlen(sel);
        if (n >= 2 && streq(sel + n - 2, " }"))
                sel[n - 2] = '\0';
        else
                sel[n - 1] = '\0';
        if (asprintf(&joined, "%s%sper: %s }", sel, streq(sel, "{") ? " " : ", ", per_names[s->per]) < 0)
                return -ENOMEM;
        *ret = joined;
        return 0;
}

const char *location_prefix(const Location *l, char *buf, size_t size) {
        if (!l || !l->file)
                snprintf(buf, size, "%s", "");
        else if (l->column > 0)
                snprintf(buf, size, "%s:%u:%u: ", l->file, l->line, l->column);
        else
                snprintf(buf, size, "%s:%u: ", l->file, l->line);
        return buf;
}

const char *const sched_policy_names[SCHED_POLICY_NAMES_MAX] = {"other", "batch", "idle", "fifo", "rr"};

/* The SCHED_* value of each of sched_policy_names. */
static const int sched_policy_values[SCHED_POLICY_NAMES_MAX] = {
        SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR,
};

int sched_policy_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < SCHED_POLICY_NAMES_MAX; i++)
                if (streq(s, sched_policy_names[i]))
                        return sched_policy_values[i];
        return -EINVAL;
}

const char *sched_policy_to_string(int policy) {
        for (size_t i = 0; i < SCHED_POLICY_NAMES_MAX; i++)
                if (policy == sched_policy_values[i])
                        return sched_policy_names[i];
        if (policy == SCHED_DEADLINE)
                return "deadline";
        return NULL;
}

const char *const ioprio_class_names[POLICY_IOPRIO_CLASS_IDLE + 1] = {
        [POLICY_IOPRIO_CLASS_NONE] = "none",
        [POLICY_IOPRIO_CLASS_RT] = "realtime",
        [POLICY_IOPRIO_CLASS_BE] = "best-effort",
        [POLICY_IOPRIO_CLASS_IDLE] = "idle",
};

int ioprio_class_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (int c = POLICY_IOPRIO_CLASS_RT; c <= POLICY_IOPRIO_CLASS_IDLE; c++)
                if (streq(s, ioprio_class_names[c]))
                        return c;
        return -EINVAL;
}

const char *ioprio_class_to_string(int io_class) {
        if (io_class < 0 || (size_t)io_class >= ELEMENTSOF(ioprio_class_names))
                return NULL;
        return ioprio_class_names[io_class];
}
