/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A MetricsSnapshot from the daemon (ctl-metrics.h): one GetAll of org.affinityd1.Manager, then
 * ListPolicies, ListIrqs and ListNetQueues, all of which an unprivileged caller may make (the
 * bus policy, systemd/org.affinityd1.conf).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-names.h"
#include "ctl-bus.h"
#include "ctl-metrics.h"
#include "macro.h"

/* Makes room for one more element of size in *array of *n; returns the new (zeroed) one or
 * NULL when out of memory. *n is counted up. */
static void *grow(void *array, size_t *n, size_t size) {
        void **a = array, *p;

        p = reallocarray(*a, *n + 1, size);
        if (!p)
                return NULL;
        *a = p;
        p = (char *)p + *n * size;
        memset(p, 0, size);
        (*n)++;
        return p;
}

static int dup_to(char **to, const char *s) {
        char *c = strdup(s);

        if (!c)
                return -ENOMEM;
        free(*to);
        *to = c;
        return 0;
}

static int read_integer(sd_bus_message *m, char type, uint64_t *ret) {
        union {
                uint8_t y;
                uint16_t q;
                uint32_t u;
                uint64_t t;
        } v = {};
        int r;

        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;
        *ret = type == 'y' ? v.y : type == 'q' ? v.q : type == 'u' ? v.u : v.t;
        return 0;
}

static int read_histogram(sd_bus_message *m, MetricsSnapshot *s) {
        uint64_t le, count;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(tt)");
        while (r > 0) {
                MetricsBucket *b;

                r = sd_bus_message_read(m, "(tt)", &le, &count);
                if (r <= 0)
                        break;
                b = grow(&s->buckets, &s->n_buckets, sizeof(MetricsBucket));
                if (!b)
                        return -ENOMEM;
                *b = (MetricsBucket){le, count};
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        s->has_histogram = true;
        return 0;
}

/* IrqSkewEpisodes -> a(ssubt): device, kind, cpu, active, episodes. */
static int read_irq_skew(sd_bus_message *m, MetricsSnapshot *s) {
        const char *device, *kind;
        uint32_t cpu;
        int active;
        uint64_t episodes;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ssubt)");
        while (r > 0) {
                MetricsIrqSkew *x;

                r = sd_bus_message_read(m, "(ssubt)", &device, &kind, &cpu, &active, &episodes);
                if (r <= 0)
                        break;
                x = grow(&s->irq_skew, &s->n_irq_skew, sizeof(MetricsIrqSkew));
                if (!x || dup_to(&x->device, device) < 0 || dup_to(&x->kind, kind) < 0)
                        return -ENOMEM;
                x->cpu = cpu;
                x->active = active;
                x->episodes = episodes;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

static int read_processes_by_policy(sd_bus_message *m, MetricsSnapshot *s) {
        const char *name;
        uint32_t n;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(su)");
        while (r > 0) {
                MetricsPolicy *p;

                r = sd_bus_message_read(m, "(su)", &name, &n);
                if (r <= 0)
                        break;
                p = grow(&s->policy_processes, &s->n_policy_processes, sizeof(MetricsPolicy));
                if (!p || dup_to(&p->name, name) < 0)
                        return -ENOMEM;
                p->value = n;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

/* CpuIntrusions -> a(usstt): cpu, policy, kind, µs, count. */
static int read_intrusions(sd_bus_message *m, MetricsSnapshot *s) {
        const char *policy, *kind;
        uint64_t usec, count;
        uint32_t cpu;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(usstt)");
        while (r > 0) {
                MetricsIntrusion *x;

                r = sd_bus_message_read(m, "(usstt)", &cpu, &policy, &kind, &usec, &count);
                if (r <= 0)
                        break;
                x = grow(&s->intrusions, &s->n_intrusions, sizeof(MetricsIntrusion));
                if (!x || dup_to(&x->policy, policy) < 0 || dup_to(&x->kind, kind) < 0)
                        return -ENOMEM;
                x->cpu = cpu;
                x->usec = usec;
                x->count = count;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

/* PolicyEffects: a(sttttttb). */
static int read_policy_effects(sd_bus_message *m, MetricsSnapshot *s) {
        const char *name;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(sttttttb)");
        while (r > 0) {
                MetricsEffect e = {};
                MetricsEffect *p;
                int has_migrations;

                r = sd_bus_message_read(
                        m, "(sttttttb)", &name, &e.cpu_usec, &e.foreign_cpu_usec, &e.run_delay_usec,
                        &e.timeslices, &e.migrations, &e.involuntary, &has_migrations);
                if (r <= 0)
                        break;
                p = grow(&s->effects, &s->n_effects, sizeof(MetricsEffect));
                if (!p)
                        return -ENOMEM;
                e.has_migrations = has_migrations;
                *p = e;
                if (dup_to(&p->name, name) < 0)
                        return -ENOMEM;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

/* The value of the property name, of signature contents, into s; others are skipped. */
static int read_value(sd_bus_message *m, const char *name, const char *contents, void *userdata) {
        static const struct {
                const char *property;
                size_t offset;
        } strings[] = {
                {"Version", offsetof(MetricsSnapshot, version)},
                {"State", offsetof(MetricsSnapshot, state)},
                {"Discovery", offsetof(MetricsSnapshot, discovery)},
                {"LastReloadError", offsetof(MetricsSnapshot, last_reload_error)},
        };
        MetricsSnapshot *s = userdata;
        int r;

        if (streq(contents, "s"))
                for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
                        const char *v;

                        if (!streq(name, strings[i].property))
                                continue;
                        r = sd_bus_message_read_basic(m, 's', &v);
                        if (r < 0)
                                return r;
                        return dup_to((char **)((char *)s + strings[i].offset), v);
                }
        if (strlen(contents) == 1 && strchr("yqut", contents[0])) {
                MetricsValue *v;
                uint64_t u;

                r = read_integer(m, contents[0], &u);
                if (r < 0)
                        return r;
                v = grow(&s->values, &s->n_values, sizeof(MetricsValue));
                if (!v || dup_to(&v->property, name) < 0)
                        return -ENOMEM;
                v->value = u;
                return 0;
        }
        if (streq(name, "PlacementLatencyHistogram") && streq(contents, "a(tt)"))
                return read_histogram(m, s);
        if (streq(name, "IrqSkewEpisodes") && streq(contents, "a(ssubt)"))
                return read_irq_skew(m, s);
        if (streq(name, "ManagedProcessesByPolicy") && streq(contents, "a(su)"))
                return read_processes_by_policy(m, s);
        if (streq(name, "CpuIntrusions") && streq(contents, "a(usstt)"))
                return read_intrusions(m, s);
        if (streq(name, "PolicyEffects") && streq(contents, "a(sttttttb)"))
                return read_policy_effects(m, s);
        return sd_bus_message_skip(m, contents);
}

/* Reads a Properties.GetAll reply, a{sv}, into s. */
static int read_properties(sd_bus_message *m, MetricsSnapshot *s) {
        return ctl_read_properties(m, read_value, s);
}

/* ListPolicies() -> a(ssuss): name, file, line, cpus, pending reason. */
static int read_policies(sd_bus_message *m, MetricsSnapshot *s) {
        const char *name, *file, *cpus, *reason;
        uint32_t line;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ssuss)");
        while (r > 0) {
                MetricsPolicy *p;

                r = sd_bus_message_read(m, "(ssuss)", &name, &file, &line, &cpus, &reason);
                if (r <= 0)
                        break;
                p = grow(&s->policy_pending, &s->n_policy_pending, sizeof(MetricsPolicy));
                if (!p || dup_to(&p->name, name) < 0)
                        return -ENOMEM;
                p->value = reason[0] != 0;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

static int add_device(
        MetricsDevice **list, size_t *n, const char *rule, const char *kind, const char *state) {
        MetricsDevice *d;

        if (!rule[0]) /* no rule places it */
                return 0;
        d = grow(list, n, sizeof(MetricsDevice));
        if (!d || dup_to(&d->rule, rule) < 0 || (kind && dup_to(&d->kind, kind) < 0) ||
            dup_to(&d->state, state) < 0)
                return -ENOMEM;
        return 0;
}

/* ListIrqs() -> a(ussssss): irq, name, rule, requested, effective, state, reason. */
static int read_irqs(sd_bus_message *m, MetricsSnapshot *s) {
        const char *name, *rule, *requested, *effective, *state, *reason;
        uint32_t irq;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ussssss)");
        while (r > 0) {
                r = sd_bus_message_read(
                        m, "(ussssss)", &irq, &name, &rule, &requested, &effective, &state, &reason);
                if (r > 0 && add_device(&s->irqs, &s->n_irqs, rule, NULL, state) < 0)
                        return -ENOMEM;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

/* ListNetQueues() -> a(ssssuss): device, queue, kind, cpus, flow count, rule, state. */
static int read_queues(sd_bus_message *m, MetricsSnapshot *s) {
        const char *device, *queue, *kind, *cpus, *rule, *state;
        uint32_t flow_cnt;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ssssuss)");
        while (r > 0) {
                r = sd_bus_message_read(
                        m, "(ssssuss)", &device, &queue, &kind, &cpus, &flow_cnt, &rule, &state);
                if (r > 0 && add_device(&s->queues, &s->n_queues, rule, kind, state) < 0)
                        return -ENOMEM;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

int metrics_snapshot_read(sd_bus *bus, MetricsSnapshot *ret, sd_bus_error *error) {
        static const struct {
                const char *interface, *member;
                int (*read)(sd_bus_message *m, MetricsSnapshot *s);
        } calls[] = {
                {"org.freedesktop.DBus.Properties", "GetAll", read_properties},
                {AFFINITYD_BUS_INTERFACE, "ListPolicies", read_policies},
                {AFFINITYD_BUS_INTERFACE, "ListIrqs", read_irqs},
                {AFFINITYD_BUS_INTERFACE, "ListNetQueues", read_queues},
        };
        _cleanup_(metrics_snapshot_done) MetricsSnapshot s = {.up = true};
        int r;

        for (size_t i = 0; i < ELEMENTSOF(calls); i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                bool get_all = i == 0;

                r = ctl_call(
                        bus, calls[i].interface, calls[i].member, METRICS_CALL_TIMEOUT_USEC, error, &reply,
                        get_all ? "s" : NULL, AFFINITYD_BUS_INTERFACE);
                if (r < 0)
                        return r;
                r = calls[i].read(reply, &s);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return -EBADMSG;
        }
        *ret = s;
        s = (MetricsSnapshot){};
        return 0;
}
