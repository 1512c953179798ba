/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The device rules of the YAML loader: irqs: (which IRQs, by device: or action:, go to which
 * CPUs) and net: (receive and transmit packet steering per network device), each a list of
 * rules walked by parse_rule_list() into the Config's irq_rules and net_rules.
 */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "policy-yaml-internal.h"

static int parse_irq_name(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        IrqRule *r = obj;

        return parse_rule_name(l, value, &r->name, &r->name_location);
}

/*
 * match: device: one or more network interface names or PCI addresses (check_device_name(),
 * PCI addresses stored canonically); not globs: each is looked up in sysfs by name.
 */
static int parse_irq_match_device(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        IrqRule *rule = obj;
        _cleanup_strv_free_ char **list = NULL;
        _cleanup_free_ const Node **nodes = NULL;
        bool ok = true;
        int r;

        r = parse_string_list(l, spec->name, value, NULL, &list, &nodes);
        if (r < 0 || !list)
                return r;

        for (size_t i = 0; list[i]; i++) {
                const char *name = NULL;
                char pci[32];

                if (has_glob_chars(list[i])) {
                        r = node_error(
                                l, nodes[i],
                                "device: \"%s\" is not a glob: name a network interface or a PCI address "
                                "(list several, or match IRQ names with action:)",
                                loader_esc(l, list[i]));
                        if (r < 0)
                                return r;
                        ok = false;
                        continue;
                }
                r = check_device_name(l, "device", nodes[i], list[i], pci, sizeof pci, &name);
                if (r < 0)
                        return r;
                if (r == 0) {
                        ok = false;
                        continue;
                }
                if (name != list[i]) {
                        r = free_and_strdup(&list[i], name);
                        if (r < 0)
                                return r;
                }
        }
        if (!ok)
                return 0;
        strv_free(rule->device);
        rule->device = TAKE_PTR(list);
        return 0;
}

/* match: action: fnmatch(3) globs on the action names of /proc/interrupts. */
static int parse_irq_match_action(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        IrqRule *rule = obj;
        char **list = NULL;
        int r;

        r = parse_string_list(l, spec->name, value, NULL, &list, NULL);
        if (r < 0 || !list)
                return r;
        strv_free(rule->action);
        rule->action = list;
        return 0;
}

/* Add an IRQ condition here: each key is a string or a list of strings, matched "any of". */
const KeySpec irq_match_keys[] = {
        {"device", parse_irq_match_device},
        {"action", parse_irq_match_action},
};

const size_t n_irq_match_keys = ELEMENTSOF(irq_match_keys);

static int parse_irq_match(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        int r;

        if (value->kind == NODE_ALIAS)
                return 0;
        if (value->kind != NODE_MAPPING)
                return loader_type_error(
                        l, value, "match",
                        "a mapping of IRQ conditions (device: an interface or PCI address, action: IRQ "
                        "name globs)");

        r = parse_mapping(l, value, "irq match", irq_match_keys, ELEMENTSOF(irq_match_keys), obj);
        if (r < 0)
                return r;
        if (value->n_children == 0) {
                char names[256];

                key_spec_names(irq_match_keys, ELEMENTSOF(irq_match_keys), names, sizeof names);
                return node_error(l, value, "match: needs at least one of %s", names);
        }
        return 0;
}

/* An irqs: rule's cpus: a cpu-list or a selector mapping; spread is its own key. */
static int parse_irq_cpus(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        IrqRule *rule = obj;

        if (value->kind == NODE_SCALAR && streq(value->value, "spread")) {
                rule->cpus.location = node_location(l, value);
                return node_error(
                        l, value,
                        "cpus: \"spread\" is not valid in an irqs: rule (give the CPUs here and write "
                        "spread: true next to cpus: to give each IRQ its own CPU)");
        }
        return parse_device_selector(l, "cpus", value, &rule->cpus);
}

/* Add an irqs: rule key here. */
const KeySpec irq_rule_keys[] = {
        {"name", parse_irq_name, .required = true},
        {"match", parse_irq_match, .required = true},
        {"cpus", parse_irq_cpus, .required = true},
        {"spread", parse_bool_key, offsetof(IrqRule, spread)},
        {"on-drift", parse_on_drift, offsetof(IrqRule, on_drift)},
};

const size_t n_irq_rule_keys = ELEMENTSOF(irq_rule_keys);

static void irq_rule_done_any(void *rule) {
        irq_rule_done(rule);
}

/* Names are unique among the irqs: rules of every file read so far. */
static int irq_rule_add(Loader *l, const Node *item, void *r, void *obj) {
        IrqRule *rule = r;
        const IrqRule *first = NULL;
        Config *c = obj;

        first = config_find_irq_rule(c, rule->name);
        if (first)
                return loader_log(
                        l, DIAGNOSTIC_ERROR, rule->name_location.line, rule->name_location.column,
                        "duplicate irq rule name \"%s\" (first defined at %s:%u:%u)",
                        loader_esc(l, rule->name), strna(first->name_location.file),
                        first->name_location.line, first->name_location.column);
        return config_add_irq_rule(c, rule);
}

static const RuleListSpec irq_rule_list = {
        .key = "irqs",
        .expected = "a list of IRQ rules (- name: …)",
        .entry_hint = "name:, match:, cpus:, …",
        .what = "irq rule",
        .keys = irq_rule_keys,
        .n_keys = ELEMENTSOF(irq_rule_keys),
        .size = sizeof(IrqRule),
        .location_offset = offsetof(IrqRule, location),
        .done = irq_rule_done_any,
        .add = irq_rule_add,
};

int parse_irqs(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return parse_rule_list(l, &irq_rule_list, value, obj);
}

/*
 * A net: rule's device: an fnmatch(3) glob on interface names. Checked like a name (no "/",
 * ":" or white space; a name without glob characters at most 15 bytes), since a pattern with
 * those can never match.
 */
static int parse_net_device(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        NetRule *rule = obj;
        const char *v = NULL;
        size_t bad;
        int r;

        r = node_string(l, value, "device", "an interface name or glob such as eth0 or \"eth*\"", &v);
        if (r <= 0)
                return r;
        if (isempty(v))
                return node_error(l, value, "device: must not be empty");
        bad = strcspn(v, "/: \t\n\r\f\v");
        if (v[bad] != '\0') {
                unsigned char c = (unsigned char)v[bad];

                if (c == ':')
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, node_scalar_column(value, bad),
                                "device: \"%s\" is not an interface name (they contain no \":\"; net: rules "
                                "select devices by interface name, not by PCI address)",
                                loader_esc(l, v));
                else if (c == '/')
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, node_scalar_column(value, bad),
                                "device: \"%s\" is not an interface name (they contain no \"/\")",
                                loader_esc(l, v));
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, node_scalar_column(value, bad),
                                "device: \"%s\" is not an interface name (they contain no white space)",
                                loader_esc(l, v));
                return r < 0 ? r : 0;
        }
        if (has_control_chars(v))
                return node_error(l, value, "device: \"%s\" contains control characters", loader_esc(l, v));
        if (!has_glob_chars(v) && strlen(v) > IFNAME_MAX)
                return node_error(
                        l, value,
                        "device: \"%s\" is %zu characters long, but network interface names have at most %u",
                        loader_esc(l, v), strlen(v), IFNAME_MAX);
        r = free_and_strdup(&rule->device, v);
        if (r < 0)
                return r;
        rule->device_location = node_location(l, value);
        return 0;
}

static int parse_net_name(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        NetRule *rule = obj;

        return parse_rule_name(l, value, &rule->name, NULL);
}

/* rps: a cpu-list or a selector mapping, every rx queue's rps_cpus. */
static int parse_net_rps(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        NetRule *rule = obj;

        if (value->kind == NODE_SCALAR && streq(value->value, "spread")) {
                rule->rps.location = node_location(l, value);
                return node_error(
                        l, value,
                        "rps: \"spread\" is not valid (every rx queue gets the whole rps: set; to divide "
                        "CPUs among the transmit queues write xps: spread)");
        }
        return parse_device_selector(l, "rps", value, &rule->rps);
}

/* xps: spread (the rps: CPUs divided among the tx queues), or a cpu-list or selector mapping. */
static int parse_net_xps(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        NetRule *rule = obj;
        int r;

        rule->xps_location = node_location(l, value);
        if (value->kind == NODE_SCALAR && streq(value->value, "spread")) {
                rule->xps = XPS_SPREAD;
                return 0;
        }
        r = parse_device_selector(l, "xps", value, &rule->xps_cpus);
        if (r < 0)
                return r;
        if (rule->xps_cpus.kind != CPU_SELECTOR_NONE)
                rule->xps = XPS_SELECTOR;
        return 0;
}

/* Add a net: rule key here. */
static const KeySpec net_rule_keys[] = {
        {"device", parse_net_device, .required = true},
        {"name", parse_net_name},
        {"rps", parse_net_rps},
        {"xps", parse_net_xps},
        {"on-drift", parse_on_drift, offsetof(NetRule, on_drift)},
};

static void net_rule_done_any(void *rule) {
        net_rule_done(rule);
}

static int net_rule_add(Loader *l, const Node *item, void *r, void *obj) {
        NetRule *rule = r;
        const NetRule *first = NULL;
        const Node *name = NULL;
        Config *c = obj;
        int q;

        if (!mapping_key(item, "rps") && !mapping_key(item, "xps")) {
                q = node_error(
                        l, item,
                        "net rule needs rps: (receive packet steering) or xps: (transmit packet "
                        "steering), or both");
                if (q < 0)
                        return q;
        }

        /* The name defaults to the device glob; unique among the net: rules of every file
         * read so far, reported where the name was written (or defaulted from). */
        name = mapping_value(item, "name");
        if (!name && rule->device) {
                q = free_and_strdup(&rule->name, rule->device);
                if (q < 0)
                        return q;
                name = mapping_value(item, "device");
        }
        first = config_find_net_rule(c, rule->name);
        if (first && name)
                return node_error(
                        l, name, "duplicate net rule name \"%s\" (first defined at %s:%u:%u%s)",
                        loader_esc(l, rule->name), strna(first->location.file), first->location.line,
                        first->location.column,
                        mapping_key(item, "name")
                                ? ""
                                : "; a net: rule without name: is named after its device: glob");
        return config_add_net_rule(c, rule);
}

static const RuleListSpec net_rule_list = {
        .key = "net",
        .expected = "a list of network device rules (- device: …)",
        .entry_hint = "device:, rps:, xps:, …",
        .what = "net rule",
        .keys = net_rule_keys,
        .n_keys = ELEMENTSOF(net_rule_keys),
        .size = sizeof(NetRule),
        .location_offset = offsetof(NetRule, location),
        .done = net_rule_done_any,
        .add = net_rule_add,
};

int parse_net(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return parse_rule_list(l, &net_rule_list, value, obj);
}
