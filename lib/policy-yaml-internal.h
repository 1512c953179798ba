/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the files of the YAML loader (policy-yaml.h) share, and nothing outside them uses:
 *   policy-diag.c       the Diagnostics list (errors and warnings at file:line:column);
 *   policy-yaml-tree.c  the node tree libyaml's events are read into, keeping every position;
 *   policy-schema.c     the schema engine: the Loader, KeySpec tables walked by parse_mapping(),
 *                       lists of rules and of strings, the value types shared by the sections;
 *   policy-selector.c   cpus: values (cpu-lists and selector mappings) and device names;
 *   policy-devices.c    the irqs: and net: rules;
 *   policy-yaml.c       match:, scheduler:, memory:, threads:, policies: and the top level;
 *   policy-files.c      the files: the drop-in directories, reading, checks across files.
 * The node tree is also how lib/kubelet-cpu-manager.c reads the kubelet's JSON checkpoint (JSON
 * is YAML), so its errors have a line and column too.
 * Each function returns 0 (or the count or flag its comment names) or -ENOMEM unless it
 * says otherwise; "reported" means the problem went into the Loader's Diagnostics.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <yaml.h>

#include "policy-yaml.h"

#define SETTINGS_NAME "affinityd.yaml"
#define IFNAME_MAX    15U /* IFNAMSIZ - 1 */

static inline bool isempty(const char *s) {
        return !s || !*s;
}

static inline bool has_control_chars(const char *s) {
        for (; s && *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

static inline bool has_glob_chars(const char *s) {
        return strpbrk(s, "*?[") != NULL;
}

/* ---- diagnostics (policy-diag.c) ----------------------------------------------------------- */

/* diagnostics_add() with a va_list. Returns 0 or -ENOMEM. */
_printf_(6, 0) int diagnostics_addv(
        Diagnostics *d, DiagnosticLevel level, const char *file, unsigned line, unsigned column,
        const char *format, va_list ap);

/* ---- the node tree (policy-yaml-tree.c) ---------------------------------------------------- */

typedef enum NodeKind {
        NODE_SCALAR,
        NODE_SEQUENCE,
        NODE_MAPPING,
        NODE_ALIAS, /* rejected when read; skipped silently by the schema walk */
} NodeKind;

typedef struct Node Node;
struct Node {
        NodeKind kind;
        unsigned line, column;         /* 1-based, where the node starts */
        unsigned end_line, end_column; /* 1-based, just past its end */
        yaml_scalar_style_t style;     /* scalars */
        char *value;                   /* scalars: NUL-terminated copy */
        size_t length;                 /* scalars: bytes (may contain NUL) */
        Node **children;               /* sequences: items; mappings: key, value, key, value, … */
        size_t n_children;
};

/* Frees n and its children. Accepts NULL, returns NULL. */
Node *node_free(Node *n);
DEFINE_TRIVIAL_CLEANUP_FUNC(Node *, node_free);

/* An empty plain scalar, "~" or "null": YAML's "nothing". Quoted "" is an empty string. */
bool node_is_null(const Node *n);

/* Writes s with control characters escaped (\n, \t, \xNN) into buf (NUL-terminated, size
 * bytes, truncated to fit); returns the length written. */
size_t yaml_escape_into(const char *s, char *buf, size_t size);

/* "a list", "a mapping", "an empty value" or the scalar itself, quoted and shortened (into buf,
 * size bytes, which is returned then). */
const char *node_describe(const Node *n, char *buf, size_t size);

/* The key node named name in mapping n (the first, if repeated), or NULL. */
const Node *mapping_key(const Node *n, const char *name);

/* The value node of key name in mapping n (the first, if repeated), or NULL. */
const Node *mapping_value(const Node *n, const char *name);

/*
 * Reads text (len bytes, need not be NUL-terminated) as a YAML stream of nothing or exactly one
 * document into a node tree. Problems are reported in diag against file: libyaml's syntax
 * errors, aliases, anchors and tags (read on), nesting deeper than 64 levels (not).
 * Returns 0 with *ret_root (NULL for an empty stream) and *ret_second (the start of a second
 * document with a 1-based line, line 0 if none; reading stops there); -EBADMSG after reporting
 * an error that ends the reading (the tree is then dropped); -ENOMEM.
 */
int node_tree_read(
        Diagnostics *diag, const char *file, const char *text, size_t len, Node **ret_root,
        yaml_mark_t *ret_second);

/* ---- the loader and the schema engine (policy-schema.c) ------------------------------------ */

/* The state of one file being loaded. */
typedef struct Loader {
        Config *config;
        Diagnostics *diag;
        const char *file; /* owned by config->files */
        bool is_settings;
        /* A hint for a key unknown in the mapping what ("policy", "irq rule"…) that is valid
         * elsewhere ("conditions go under match:"), or NULL; may be NULL itself. */
        const char *(*misplaced_key_hint)(const char *what, const char *key);
        char **scratch; /* strings made for messages, freed with the loader */
        size_t n_scratch;
} Loader;

/* Frees the strings loader_esc() made. */
void loader_done(Loader *l);

/*
 * s fit for a one-line message: control characters escaped, so a diagnostic is always one
 * line. Owned by l; s itself when it needs no escaping (or on OOM).
 */
const char *loader_esc(Loader *l, const char *s);

/* A diagnostic at line:column (1-based) of l's file. Returns 0 or -ENOMEM. */
_printf_(5, 6) int loader_log(
        Loader *l, DiagnosticLevel level, unsigned line, unsigned column, const char *format, ...);

#define node_error(l, n, ...)   loader_log((l), DIAGNOSTIC_ERROR, (n)->line, (n)->column, __VA_ARGS__)
#define node_warning(l, n, ...) loader_log((l), DIAGNOSTIC_WARNING, (n)->line, (n)->column, __VA_ARGS__)

/* Where n starts, in l's file. */
Location node_location(const Loader *l, const Node *n);

/* Reports "WHAT: expected EXPECTED, got …" (nothing for an alias: reported when read).
 * Returns 0 or -ENOMEM. */
int loader_type_error(Loader *l, const Node *n, const char *what, const char *expected);

/*
 * The text of a scalar that must be a string. Returns 1 and *ret (pointing into n), 0 when
 * an error was reported, -ENOMEM.
 */
int node_string(Loader *l, const Node *n, const char *what, const char *expected, const char **ret);

/*
 * The column of byte offset inside scalar n, when the scalar is written on one line without
 * escapes (so its text maps 1:1 onto the file); else the column where the scalar starts.
 */
unsigned node_scalar_column(const Node *n, size_t offset);

/* A word that is not a value of an enumerated key but says clearly which one was meant. */
typedef struct ValueHint {
        const char *word;
        const char *meant;
} ValueHint;

/* The words of an enumerated key (names, indexed by its enum) and how messages list them. */
typedef struct EnumSpec {
        const char *const *names;
        size_t n_names;
        const char *one_of;   /* "avoid, allow, only": for type errors ("expected one of …") */
        const char *expected; /* "avoid, allow or only": for unknown values */
        const ValueHint *hints;
        size_t n_hints;
        unsigned first; /* the enum value of names[0] (the values follow in order) */
} EnumSpec;

typedef struct KeySpec KeySpec;

/* Parses value (of key) into obj. Reports problems in l->diag; returns 0 or -ENOMEM. */
typedef int (*KeyParser)(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);

/* Checks one string of a list. Returns 1 if usable (warnings allowed), 0 if an error was reported, -ENOMEM.
 */
typedef int (*StringCheck)(Loader *l, const char *what, const Node *n, const char *value);

struct KeySpec {
        const char *name;
        KeyParser parse;
        size_t offset;     /* of the target field in obj, for parsers shared by several keys */
        unsigned facts;    /* match keys: the ProcessFact bits the key needs */
        StringCheck check; /* match keys: check of each pattern, NULL for none */
        bool required;
        const EnumSpec *values; /* parse_enum_key(): the words of the key */
};

/* "a, b, c": the key names of a table, for messages, into buf (size bytes, truncated). */
void key_spec_names(const KeySpec *specs, size_t n_specs, char *buf, size_t size);

/* Whether the table specs (n entries) has a key named key. */
bool key_spec_has(const KeySpec *specs, size_t n, const char *key);

/*
 * Walks mapping n against specs: every key must be a string, known and unique; each known key
 * is handed to its parser; required keys must be present. Returns the number of known keys
 * found (>= 0) or -ENOMEM.
 */
int parse_mapping(
        Loader *l, const Node *n, const char *what, const KeySpec *specs, size_t n_specs, void *obj);

/*
 * A string or a list of strings (a list means "any of"). Each must be non-empty and pass
 * check. On success *ret is the strv and, if ret_nodes, *ret_nodes the node of each entry;
 * when an error was reported *ret is NULL. Returns 0 or -ENOMEM.
 */
int parse_string_list(
        Loader *l, const char *what, const Node *n, StringCheck check, char ***ret, const Node ***ret_nodes);

/*
 * A cpu-list scalar (CPU, node or package numbers — unit names them in messages) into *ret.
 * Returns 1 on success, 0 when an error was reported, -ENOMEM.
 */
int parse_cpu_list_node(Loader *l, const Node *n, const char *what, const char *unit, CpuSet *ret);

/* String checks of match: patterns (StringCheck): comm and thread names (longer than the
 * kernel keeps: a warning), absolute paths (exe:, cgroup:: a warning), user names or uids. */
int check_comm(Loader *l, const char *what, const Node *n, const char *value);
int check_absolute(Loader *l, const char *what, const Node *n, const char *value);
int check_user(Loader *l, const char *what, const Node *n, const char *value);

/*
 * The value of an enumerated key: its index in e->names into *ret. An unknown word is an error
 * that suggests the closest name, or the name a hint maps it to, or else lists the names.
 * Returns 1, 0 when an error was reported, -ENOMEM.
 */
int parse_enum_value(Loader *l, const Node *n, const char *what, const EnumSpec *e, size_t *ret);

/* An enumerated key (KeyParser): the word's index in spec->values->names plus
 * spec->values->first into the enum at spec->offset (an enum type of the size of an int). */
int parse_enum_key(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);

/* true / false (and the YAML 1.1 capitalisations) into *ret. Returns 1, 0 when reported, -ENOMEM. */
int parse_bool_node(Loader *l, const Node *n, const char *what, bool *ret);

/* A true / false key (KeyParser) into the bool at spec->offset. */
int parse_bool_key(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);

/*
 * A decimal integer from min to max (a leading "-" allowed when min < 0) into *ret. Returns 1,
 * 0 when an error was reported, -ENOMEM.
 */
int parse_int_range(Loader *l, const Node *n, const char *what, long min, long max, long *ret);

/*
 * The name: of a policy or an irqs:/net: rule: a non-empty string without control characters,
 * into *name, and its place into *ret_location (may be NULL). Returns 0 or -ENOMEM.
 */
int parse_rule_name(Loader *l, const Node *value, char **name, Location *ret_location);

/* on-drift: of a policy or an irqs:/net: rule (KeyParser); the DriftMode is at spec->offset. */
int parse_on_drift(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);

/*
 * A list key whose entries are mappings, each one rule (policies:, threads:, irqs:, net:): the
 * list as a whole may be empty or null; an entry that is no mapping is reported and skipped.
 */
typedef struct RuleListSpec {
        const char *key;        /* the list key, "irqs" */
        const char *expected;   /* what it holds, for "irqs: expected …" */
        const char *entry_hint; /* an entry's keys, for "irqs: each entry must be a mapping (…)" */
        const char *what;       /* an entry, for the messages of parse_mapping(): "irq rule" */
        const KeySpec *keys;    /* an entry's keys */
        size_t n_keys;
        size_t size;            /* bytes of the rule type (sizeof(IrqRule)) */
        size_t location_offset; /* of its Location of the entry */
        /* Releases what a rule owns and zeroes it (irq_rule_done()). */
        void (*done)(void *rule);
        /* After the entry item was parsed into rule: checks across its keys, then moves the rule
         * into obj (what the list key belongs to, zeroing rule), or reports why not. Returns 0 or
         * -ENOMEM. */
        int (*add)(Loader *l, const Node *item, void *rule, void *obj);
} RuleListSpec;

/* The entries of the list value into obj, as spec says. Returns 0 or -ENOMEM. */
int parse_rule_list(Loader *l, const RuleListSpec *spec, const Node *value, void *obj);

/* ---- cpus: (policy-selector.c) ------------------------------------------------------------- */

/* The keys of a selector mapping (cpus: { nodes: …, cores: … }), for hints. */
extern const KeySpec selector_keys[];
extern const size_t n_selector_keys;

/*
 * A device as rules name it: a network interface name (as the kernel allows them: 1 to 15
 * bytes, no "/", ":" or white space, not "." or "..") or a PCI address. what names the key in
 * messages. Only the syntax is checked: whether the device exists is the plan's business. On
 * success *ret is the form to store: v itself, or for a PCI address its canonical sysfs form,
 * written into buf (at least 13 bytes). Returns 1, 0 when an error was reported, -ENOMEM.
 */
int check_device_name(
        Loader *l, const char *what, const Node *value, const char *v, char *buf, size_t size,
        const char **ret);

/* cpus: of a policy (KeyParser): a literal cpu-list scalar or a selector mapping; the
 * CpuSelector is at spec->offset. */
int parse_cpus(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);

/* cpus: of a thread rule (KeyParser): as parse_cpus(), or "spread". */
int parse_thread_cpus(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);

/*
 * A cpu-list or a selector mapping of an irqs: or net: rule into *s: the keys of a policy's
 * selector mapping but exclusive: (reported). what names the key ("cpus", "rps", "xps"); the
 * word "spread" is the caller's to handle before. Returns 0 or -ENOMEM.
 */
int parse_device_selector(Loader *l, const char *what, const Node *value, CpuSelector *s);

/*
 * reserve: as a selector mapping (value is one) into *s: nodes:, packages:, near:, kind:,
 * cores: (required) and per: package|node; cpus:, smt:, reserved:, exclusive: and within: are
 * reported as not keys of the reserve, other keys as unknown. Returns 0 or -ENOMEM.
 */
int parse_reserve_selector(Loader *l, const Node *value, ReserveSelector *s);

/* ---- irqs: and net: (policy-devices.c) ----------------------------------------------------- */

/* irqs: and net: at the top level of a policy.d file (KeyParser; obj is the Config). */
int parse_irqs(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);
int parse_net(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj);

/* The keys of an irqs: rule and of its match:, for hints. */
extern const KeySpec irq_rule_keys[];
extern const size_t n_irq_rule_keys;
extern const KeySpec irq_match_keys[];
extern const size_t n_irq_match_keys;
