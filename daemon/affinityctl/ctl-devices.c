/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* affinityctl irqs and net: the daemon's IRQs (ListIrqs) and network queues (ListNetQueues). */

#include <inttypes.h>
#include <stdio.h>

#include "ctl-bus.h"
#include "ctl.h"
#include "macro.h"

/* How many entries a rule covers. */
typedef struct RuleCount {
        size_t n_ruled;
} RuleCount;

static const Column irq_columns[] = {
        {"IRQ", "irq"},
        {"NAME", "name"},
        {"RULE", "rule"},
        {"REQUESTED", "requested"},
        {"EFFECTIVE", "effective"},
        {"STATE", "state"},
        {"REASON", "reason", COLUMN_HIDE_EMPTY},
};

static int irq_read_row(sd_bus_message *reply, Table *t, void *userdata) {
        RuleCount *count = userdata;
        const char *name, *rule, *requested, *effective, *state, *reason;
        uint32_t irq;
        int r;

        r = sd_bus_message_read(
                reply, "(ussssss)", &irq, &name, &rule, &requested, &effective, &state, &reason);
        if (r < 0)
                return r;
        if (rule[0])
                count->n_ruled++;
        return table_add_row(
                t,
                (Cell[]){
                        CELL_UINT(irq), CELL_STR_DASH(name), CELL_STR_DASH(rule), CELL_STR_DASH(requested),
                        CELL_STR_DASH(effective), CELL_STR(state), CELL_STR(reason)});
}

static int irq_summary(char **ret, size_t n, const void *userdata) {
        const RuleCount *count = userdata;

        return asprintf(
                ret, "%zu IRQ%s listed, %zu covered by a rule.", n, n == 1 ? "" : "s", count->n_ruled);
}

int verb_irqs(char **args) {
        static const ListVerb v = {
                .method = "ListIrqs",
                .what = "list the daemon's IRQs",
                .contents = "(ussssss)",
                .list_name = "IRQ list",
                .json_key = "irqs",
                .columns = irq_columns,
                .n_columns = ELEMENTSOF(irq_columns),
                .read_row = irq_read_row,
                .summary = irq_summary,
        };
        RuleCount count = {};

        return ctl_run_list(&v, &count);
}

static const Column net_columns[] = {
        {"DEVICE", "device"},  {"QUEUE", "queue"}, {"KIND", "kind"},   {"CPUS", "cpus"},
        {"FLOWS", "flow_cnt"}, {"RULE", "rule"},   {"STATE", "state"},
};

static int net_read_row(sd_bus_message *reply, Table *t, void *userdata) {
        RuleCount *count = userdata;
        const char *device, *queue, *kind, *cpus, *rule, *state;
        uint32_t flow_cnt;
        int r;

        r = sd_bus_message_read(reply, "(ssssuss)", &device, &queue, &kind, &cpus, &flow_cnt, &rule, &state);
        if (r < 0)
                return r;
        if (rule[0])
                count->n_ruled++;
        /* Flow counts belong to rx queues (RFS); "-" on tx. */
        return table_add_row(
                t,
                (Cell[]){
                        CELL_STR(device), CELL_STR(queue), CELL_STR(kind), CELL_STR_DASH(cpus),
                        cell_with_text(CELL_UINT(flow_cnt), streq(kind, "rps") ? NULL : "-"),
                        CELL_STR_DASH(rule), CELL_STR(state)});
}

static int net_summary(char **ret, size_t n, const void *userdata) {
        const RuleCount *count = userdata;

        return asprintf(
                ret, "%zu queue setting%s listed, %zu covered by a rule.", n, n == 1 ? "" : "s",
                count->n_ruled);
}

int verb_net(char **args) {
        static const ListVerb v = {
                .method = "ListNetQueues",
                .what = "list the daemon's network queues",
                .contents = "(ssssuss)",
                .list_name = "queue list",
                .json_key = "queues",
                .columns = net_columns,
                .n_columns = ELEMENTSOF(net_columns),
                .read_row = net_read_row,
                .summary = net_summary,
        };
        RuleCount count = {};

        return ctl_run_list(&v, &count);
}
