/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * cpus: values of the YAML loader: a literal cpu-list or a selector mapping (nodes:,
 * packages:, near:, kind:, reserved:, cores:, cpus:, smt:, exclusive:) into a CpuSelector, as
 * policies, thread rules and the irqs:/net: rules (policy-devices.c; they also take avoid:)
 * write them; and the names of network devices and PCI addresses those rules and near: take.
 * Syntax only: what a selector picks on a machine is the plan's business (plan.h).
 */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-yaml-internal.h"

/* parse_enum_key() writes these as ints. */
static_assert(sizeof(ReservedMode) == sizeof(int), "ReservedMode is an int");
static_assert(sizeof(SmtMode) == sizeof(int), "SmtMode is an int");
static_assert(sizeof(CpuKindSelector) == sizeof(int), "CpuKindSelector is an int");

static int parse_selector_nodes(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        int r;

        r = parse_cpu_list_node(l, value, "nodes", "NUMA node", &s->nodes);
        if (r > 0)
                s->has_nodes = true;
        return r < 0 ? r : 0;
}

static int parse_selector_packages(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        int r;

        r = parse_cpu_list_node(l, value, "packages", "package", &s->packages);
        if (r > 0)
                s->has_packages = true;
        return r < 0 ? r : 0;
}

static const char *const reserved_mode_names[] = {
        [RESERVED_AVOID] = "avoid",
        [RESERVED_ALLOW] = "allow",
        [RESERVED_ONLY] = "only",
};

static const EnumSpec reserved_enum = {
        reserved_mode_names,
        ELEMENTSOF(reserved_mode_names),
        "avoid, allow, only",
        "avoid, allow or only",
};

static const char *const smt_mode_names[] = {
        [SMT_ALL] = "all",
        [SMT_ONE_PER_CORE] = "one-per-core",
};

/* What people write for "SMT off" and "SMT on". */
static const ValueHint smt_hints[] = {
        {"off", "one-per-core"}, {"no", "one-per-core"}, {"false", "one-per-core"}, {"one", "one-per-core"},
        {"on", "all"},           {"yes", "all"},         {"true", "all"},           {"both", "all"},
};

static const EnumSpec smt_enum = {
        smt_mode_names,
        ELEMENTSOF(smt_mode_names),
        "one-per-core, all",
        "one-per-core: never two SMT siblings of one core, or all: every SMT sibling may be used",
        smt_hints,
        ELEMENTSOF(smt_hints),
};

static const char *const within_names[] = {
        [WITHIN_NONE] = NULL, /* the default; not a word of the file */
        [WITHIN_CPUSET] = "cpuset",
};

/* What people may write for the cgroup's CPUs. */
static const ValueHint within_hints[] = {
        {"cgroup", "cpuset"}, {"cpuset.cpus", "cpuset"}, {"cpuset.cpus.effective", "cpuset"},
        {"pod", "cpuset"},    {"container", "cpuset"},
};

static const EnumSpec within_enum = {
        within_names + 1, ELEMENTSOF(within_names) - 1,
        "cpuset",         "cpuset (the CPUs the process's cgroup allows)",
        within_hints,     ELEMENTSOF(within_hints),
        WITHIN_CPUSET,
};

static const char *const cpu_kind_names[] = {
        [CPU_KIND_ANY] = NULL, /* the default; not a word of the file */
        [CPU_KIND_PERFORMANCE] = "performance",
        [CPU_KIND_EFFICIENCY] = "efficiency",
};

/* Hybrid CPUs' other names for their two kinds of cores. */
static const ValueHint cpu_kind_hints[] = {
        {"p", "performance"}, {"p-core", "performance"}, {"pcore", "performance"}, {"big", "performance"},
        {"e", "efficiency"},  {"e-core", "efficiency"},  {"ecore", "efficiency"},  {"little", "efficiency"},
};

static const EnumSpec cpu_kind_enum = {
        cpu_kind_names + 1,
        ELEMENTSOF(cpu_kind_names) - 1,
        "performance, efficiency",
        "performance (P-cores) or efficiency (E-cores)",
        cpu_kind_hints,
        ELEMENTSOF(cpu_kind_hints),
        CPU_KIND_PERFORMANCE,
};

/*
 * A count of cores or CPUs (cores: N, cpus: N in a selector mapping): a decimal number from 1
 * to CPUSET_MAX_CPUS. unit names what is counted ("cores"); hint, if not NULL, is added to the
 * message when the value is not a number. Returns 1 and *ret, 0 when an error was reported,
 * -ENOMEM.
 */
static int parse_count(
        Loader *l, const Node *n, const char *what, const char *unit, const char *hint, unsigned *ret) {
        unsigned long long v;
        const char *s = NULL;
        char expected[64];
        size_t len;
        int r;

        snprintf(expected, sizeof expected, "a number of %s such as 8", unit);
        r = node_string(l, n, what, expected, &s);
        if (r <= 0)
                return r;

        len = strlen(s);
        if (len > 0 && strspn(s, "0123456789") == len) {
                errno = 0;
                v = strtoull(s, NULL, 10);
                if (errno != 0 || v > CPUSET_MAX_CPUS)
                        r = node_error(
                                l, n, "%s: %s is more %s than affinityd can handle (at most %u)", what,
                                loader_esc(l, s), unit, CPUSET_MAX_CPUS);
                else if (v == 0)
                        r = node_error(l, n, "%s: must be at least 1", what);
                else {
                        *ret = (unsigned)v;
                        return 1;
                }
        } else if (len > 1 && s[0] == '-' && strspn(s + 1, "0123456789") == len - 1)
                r = node_error(l, n, "%s: must be at least 1", what);
        else
                r = node_error(
                        l, n, "%s: expected %s, got \"%s\"%s", what, expected, loader_esc(l, s),
                        hint ? hint : "");
        return r < 0 ? r : 0;
}

static int parse_selector_cores(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        int r;

        r = parse_count(l, value, "cores", "cores", NULL, &s->n_cores);
        return r < 0 ? r : 0;
}

static int parse_selector_cpus(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        int r;

        r = parse_count(
                l, value, "cpus", "CPUs",
                " (inside a selector mapping cpus: is a count; to name the CPUs, write the cpu-list as "
                "the value of cpus: itself, e.g. cpus: \"0-3\")",
                &s->n_cpus);
        return r < 0 ? r : 0;
}

/* n hex digits at s, 1 ≤ n ≤ max, into *ret; the count of digits read, 0 if not that. */
static size_t parse_hex_field(const char *s, size_t max, unsigned *ret) {
        size_t n = strspn(s, "0123456789abcdefABCDEF");

        if (n == 0 || n > max)
                return 0;
        *ret = (unsigned)strtoul(s, NULL, 16);
        return n;
}

/*
 * A PCI address as sysfs writes it, "0000:3b:00.0" (DOMAIN:BUS:DEVICE.FUNCTION, hex), or
 * without the domain ("3b:00.0", domain 0), into the canonical form in ret (at least 13 bytes).
 * Returns true if s is one.
 */
static bool pci_address_normalize(const char *s, char *ret, size_t size) {
        unsigned domain = 0, bus, device, function;
        size_t k;

        if (strchr(s, ':') != strrchr(s, ':')) { /* two colons: a domain first */
                k = parse_hex_field(s, 8, &domain);
                if (k == 0 || s[k] != ':')
                        return false;
                s += k + 1;
        }
        k = parse_hex_field(s, 2, &bus);
        if (k == 0 || s[k] != ':')
                return false;
        s += k + 1;
        k = parse_hex_field(s, 2, &device);
        if (k == 0 || s[k] != '.' || device > 0x1f)
                return false;
        s += k + 1;
        if (!(s[0] >= '0' && s[0] <= '7') || s[1] != '\0')
                return false;
        function = (unsigned)(s[0] - '0');
        snprintf(ret, size, "%04x:%02x:%02x.%x", domain, bus, device, function);
        return true;
}

/*
 * A device as rules name it: a network interface name (as the kernel allows them: 1 to 15
 * bytes, no "/", ":" or white space, not "." or "..") or a PCI address. what names the key in
 * messages. Only the syntax is checked: whether the device exists is the plan's business. On
 * success *ret is the form to store: v itself, or for a PCI address its canonical sysfs form,
 * written into buf (at least 13 bytes). Returns 1, 0 when an error was reported, -ENOMEM.
 */
int check_device_name(
        Loader *l, const char *what, const Node *value, const char *v, char *buf, size_t size,
        const char **ret) {
        size_t bad;
        int r;

        if (strchr(v, ':')) {
                if (!pci_address_normalize(v, buf, size)) {
                        r = node_error(
                                l, value,
                                "%s: \"%s\" is not a PCI address (expected DOMAIN:BUS:DEVICE.FUNCTION in "
                                "hex, "
                                "e.g. \"0000:3b:00.0\"; network interface names contain no \":\")",
                                what, loader_esc(l, v));
                        return r < 0 ? r : 0;
                }
                *ret = buf;
                return 1;
        }

        if (isempty(v)) {
                r = node_error(l, value, "%s: must not be empty", what);
                return r < 0 ? r : 0;
        }
        bad = strcspn(v, "/ \t\n\r\f\v");
        if (v[bad] != '\0') {
                unsigned char c = (unsigned char)v[bad];

                if (c == '/')
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, node_scalar_column(value, bad),
                                "%s: \"%s\" is not a network interface name (they contain no \"/\"; a PCI "
                                "address is written like \"0000:3b:00.0\")",
                                what, loader_esc(l, v));
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, node_scalar_column(value, bad),
                                "%s: \"%s\" is not a network interface name (they contain no white space)",
                                what, loader_esc(l, v));
                return r < 0 ? r : 0;
        }
        if (has_control_chars(v))
                r = node_error(l, value, "%s: \"%s\" contains control characters", what, loader_esc(l, v));
        else if (streq(v, ".") || streq(v, ".."))
                r = node_error(l, value, "%s: \"%s\" is not a network interface name", what, v);
        else if (strlen(v) > IFNAME_MAX)
                r = node_error(
                        l, value,
                        "%s: \"%s\" is %zu characters long, but network interface names have at most %u",
                        what, loader_esc(l, v), strlen(v), IFNAME_MAX);
        else {
                *ret = v;
                return 1;
        }
        return r < 0 ? r : 0;
}

/* near: a network interface name or a PCI address (check_device_name()). */
static int parse_selector_near(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        const char *v = NULL, *name = NULL;
        char pci[32];
        int r;

        r = node_string(
                l, value, "near",
                "a network interface name such as eth0 or a PCI address such as 0000:3b:00.0", &v);
        if (r <= 0)
                return r;
        r = check_device_name(l, "near", value, v, pci, sizeof pci, &name);
        if (r <= 0)
                return r;
        return free_and_strdup(&s->near, name);
}

/* avoid: in a policy's or thread rule's selector. */
static int policy_selector_avoid(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return node_error(
                l, key,
                "avoid: applies to irqs: and net: rules only (it keeps IRQs and packet steering off "
                "the cores of the policies named; a policy keeps others off its own cores with "
                "exclusive: true)");
}

/* The keys of a selector mapping but exclusive:, in the order messages list them. */
/* clang-format off */
#define SELECTOR_KEYS_BUT_EXCLUSIVE                                                                \
        {"nodes", parse_selector_nodes},                                                           \
        {"packages", parse_selector_packages},                                                     \
        {"near", parse_selector_near},                                                             \
        {"kind", parse_enum_key, offsetof(CpuSelector, cpu_kind), .values = &cpu_kind_enum},       \
        {"reserved", parse_enum_key, offsetof(CpuSelector, reserved), .values = &reserved_enum},   \
        {"cores", parse_selector_cores},                                                           \
        {"cpus", parse_selector_cpus},                                                             \
        {"smt", parse_enum_key, offsetof(CpuSelector, smt), .values = &smt_enum}
/* clang-format on */

/* The keys of a selector mapping. */
const KeySpec selector_keys[] = {
        SELECTOR_KEYS_BUT_EXCLUSIVE,
        {"exclusive", parse_bool_key, offsetof(CpuSelector, exclusive)},
        {"within", parse_enum_key, offsetof(CpuSelector, within), .values = &within_enum},
        {"avoid", policy_selector_avoid},
};

const size_t n_selector_keys = ELEMENTSOF(selector_keys);

/* Combinations of selector keys that can't work, reported at the later key. Returns 0 or -ENOMEM. */
static int check_selector(Loader *l, const Node *mapping, const CpuSelector *s) {
        const Node *cores = NULL, *cpus = NULL;

        if (s->n_cores > 0 && s->n_cpus > 0) {
                cores = mapping_key(mapping, "cores");
                cpus = mapping_key(mapping, "cpus");
                assert(cores && cpus);
                return node_error(
                        l,
                        cores->line > cpus->line ||
                                        (cores->line == cpus->line && cores->column > cpus->column)
                                ? cores
                                : cpus,
                        "cores: and cpus: can't be used together: cores: N takes N whole cores, cpus: N "
                        "takes "
                        "N CPUs (one per core before any SMT sibling)");
        }
        if (s->within == WITHIN_CPUSET && (s->n_cores > 0 || s->n_cpus > 0))
                return node_error(
                        l, mapping_key(mapping, s->n_cores > 0 ? "cores" : "cpus"),
                        "%s: can't be used with within: cpuset: the process's cgroup decides how many CPUs "
                        "it has (drop the count, or drop within: and give the count)",
                        s->n_cores > 0 ? "cores" : "cpus");
        if (s->within == WITHIN_CPUSET && s->exclusive)
                return node_error(
                        l, mapping_key(mapping, "exclusive"),
                        "exclusive: can't be used with within: cpuset: its CPUs differ from process to "
                        "process, so there is no one set to withhold from later policies");
        return 0;
}

/*
 * A literal cpu-list scalar or a selector mapping (walked against keys: selector_keys, or
 * device_selector_keys for irqs:/net: rules) into *s. what names the key in messages ("cpus",
 * "rps", "xps"). The word "spread" is the caller's to handle before. Returns 0 or -ENOMEM.
 */
static int parse_selector(
        Loader *l, const char *what, const Node *value, const KeySpec *keys, size_t n_keys, CpuSelector *s) {
        int r;

        s->location = node_location(l, value);

        switch (value->kind) {
        case NODE_ALIAS:
                return 0;
        case NODE_SCALAR:
                if (node_is_null(value))
                        break;
                r = parse_cpu_list_node(l, value, what, "CPU", &s->literal);
                if (r > 0)
                        s->kind = CPU_SELECTOR_LITERAL;
                return r < 0 ? r : 0;
        case NODE_MAPPING:
                s->kind = CPU_SELECTOR_MAPPING;
                r = parse_mapping(l, value, what, keys, n_keys, s);
                if (r < 0)
                        return r;
                return check_selector(l, value, s);
        case NODE_SEQUENCE:
                return node_error(
                        l, value,
                        "%s: expected a cpu-list or a selector mapping, got a list (write several CPUs as "
                        "one "
                        "cpu-list string, e.g. %s: \"0,2-3\")",
                        what, what);
        }
        return loader_type_error(
                l, value, what,
                "a cpu-list such as \"2-5\" or a selector mapping (nodes:, packages:, near:, cores:, …)");
}

/* cpus: a literal cpu-list scalar or a selector mapping; the CpuSelector is at spec->offset. */
int parse_cpus(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = (CpuSelector *)((uint8_t *)obj + spec->offset);

        if (value->kind == NODE_SCALAR && streq(value->value, "spread")) {
                s->location = node_location(l, value);
                return node_error(
                        l, value,
                        "cpus: \"spread\" is only valid in a thread rule (threads: - name: … cpus: "
                        "spread gives each matching thread its own CPU of the policy's set)");
        }
        return parse_selector(l, "cpus", value, selector_keys, ELEMENTSOF(selector_keys), s);
}

/* A thread rule's cpus: also "spread", each matching thread its own CPU of the policy's set. */
int parse_thread_cpus(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = (CpuSelector *)((uint8_t *)obj + spec->offset);

        if (value->kind == NODE_SCALAR && streq(value->value, "spread")) {
                s->location = node_location(l, value);
                s->kind = CPU_SELECTOR_SPREAD;
                return 0;
        }
        return parse_cpus(l, spec, key, value, obj);
}

static int device_selector_exclusive(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return node_error(
                l, key,
                "exclusive: applies to policies only (IRQs and network queues don't hold CPUs; a "
                "selector mapping of an irqs: or net: rule already leaves out the CPUs of exclusive "
                "policies)");
}

static int device_selector_within(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return node_error(
                l, key,
                "within: applies to policies only (an IRQ or a network queue is in no cgroup; use "
                "near: or nodes: to keep it next to a pod's CPUs)");
}

/*
 * avoid: of a device rule's selector: the word policies (every process policy), a policy name,
 * a list of them, or [] (sharing cores with policies is meant). Whether the names exist is
 * config_verify()'s to say, when every file is read.
 */
static int parse_selector_avoid(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ const Node **nodes = NULL;
        Location *locations = NULL;
        size_t n;
        int r;

        if (value->kind == NODE_ALIAS)
                return 0;
        s->avoid_location = node_location(l, value);
        if (value->kind == NODE_SEQUENCE && value->n_children == 0) {
                s->has_avoid = true;
                return 0;
        }
        if (value->kind == NODE_SCALAR && streq(value->value, "policies")) {
                s->has_avoid = s->avoid_policies = true;
                return 0;
        }
        r = parse_string_list(l, "avoid", value, NULL, &names, &nodes);
        if (r < 0 || !names)
                return r;
        n = strv_length(names);
        locations = calloc(n, sizeof(Location));
        if (!locations)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                locations[i] = node_location(l, nodes[i]);
        strv_free(s->avoid);
        free(s->avoid_locations);
        s->avoid = TAKE_PTR(names);
        s->avoid_locations = locations;
        s->n_avoid = n;
        s->has_avoid = true;
        return 0;
}

/* The keys of a selector mapping in an irqs: or net: rule: selector_keys, but exclusive: and
 * within: refused, and avoid:. */
static const KeySpec device_selector_keys[] = {
        SELECTOR_KEYS_BUT_EXCLUSIVE,
        {"exclusive", device_selector_exclusive},
        {"within", device_selector_within},
        {"avoid", parse_selector_avoid},
};

int parse_device_selector(Loader *l, const char *what, const Node *value, CpuSelector *s) {
        return parse_selector(l, what, value, device_selector_keys, ELEMENTSOF(device_selector_keys), s);
}

/* ---- reserve: as a selector ---- */

static_assert(sizeof(ReservePer) == sizeof(int), "ReservePer is an int");
static_assert(offsetof(ReserveSelector, cpus) == 0, "the selector keys' parsers take a CpuSelector");

static const char *const reserve_per_names[] = {
        [RESERVE_PER_PACKAGE] = "package",
        [RESERVE_PER_NODE] = "node",
};

static const ValueHint reserve_per_hints[] = {
        {"socket", "package"}, {"packages", "package"}, {"numa", "node"},
        {"nodes", "node"},     {"numa-node", "node"},
};

static const EnumSpec reserve_per_enum = {
        reserve_per_names + 1, ELEMENTSOF(reserve_per_names) - 1,
        "package, node",       "package (cores: N in each package) or node (in each NUMA node)",
        reserve_per_hints,     ELEMENTSOF(reserve_per_hints),
        RESERVE_PER_PACKAGE,
};

/* A key a policy's selector has but the reserve's does not: say why. */
static int misplaced_in_reserve(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        static const struct {
                const char *key, *why;
        } why[] = {
                {"cpus", "the reserve is whole cores: count them with cores: N"},
                {"smt", "the reserve is whole cores, every SMT sibling of each"},
                {"reserved", "it says how a policy's selector treats the reserve"},
                {"exclusive", "every selector leaves the reserve out already, unless it says reserved:"},
                {"within", "the reserve is the same for every process"},
        };
        const char *w = "";

        for (size_t i = 0; i < ELEMENTSOF(why); i++)
                if (streq(spec->name, why[i].key))
                        w = why[i].why;
        return node_error(l, key, "reserve: %s: is not a key of the reserve (%s)", spec->name, w);
}

/* The keys of reserve: as a mapping: a selector's that pick where, cores:, per:. */
static const KeySpec reserve_selector_keys[] = {
        {"nodes", parse_selector_nodes},
        {"packages", parse_selector_packages},
        {"near", parse_selector_near},
        {"kind", parse_enum_key, offsetof(CpuSelector, cpu_kind), .values = &cpu_kind_enum},
        {"cores", parse_selector_cores, .required = true},
        {"per", parse_enum_key, offsetof(ReserveSelector, per), .values = &reserve_per_enum},
        {"cpus", misplaced_in_reserve},
        {"smt", misplaced_in_reserve},
        {"reserved", misplaced_in_reserve},
        {"exclusive", misplaced_in_reserve},
        {"within", misplaced_in_reserve},
};

int parse_reserve_selector(Loader *l, const Node *value, ReserveSelector *s) {
        assert(value->kind == NODE_MAPPING);

        s->cpus.location = node_location(l, value);
        s->cpus.kind = CPU_SELECTOR_MAPPING;
        return parse_mapping(
                l, value, "reserve", reserve_selector_keys, ELEMENTSOF(reserve_selector_keys), s);
}
