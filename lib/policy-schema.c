/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The schema engine of the YAML loader: the Loader and its messages, the walk of a mapping
 * against a KeySpec table (unknown keys with "did you mean", duplicates, required keys), lists
 * of rules and of strings, and the value types the sections share: cpu-lists, enumerated
 * words, booleans, integers, names, on-drift:. Each section (policy-selector.c,
 * policy-devices.c, policy-yaml.c) is a set of KeySpec tables over these.
 */

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy-yaml-internal.h"

#define TASK_COMM_MAX 15U           /* TASK_COMM_LEN - 1 */
#define UID_MAX_VALID 4294967294ULL /* (uid_t) -1 is "no uid" */

/* ---- the loader state and its messages ------------------------------------------------- */

void loader_done(Loader *l) {
        for (size_t i = 0; i < l->n_scratch; i++)
                free(l->scratch[i]);
        free(l->scratch);
        l->scratch = NULL;
        l->n_scratch = 0;
}

/*
 * s fit for a one-line message: control characters escaped, so a diagnostic is always one
 * line. Owned by l; s itself when it needs no escaping (or on OOM).
 */
const char *loader_esc(Loader *l, const char *s) {
        char **a = NULL, *e = NULL;
        size_t size;

        if (!has_control_chars(s))
                return s;
        size = 4 * strlen(s) + 6;
        e = malloc(size);
        a = reallocarray(l->scratch, l->n_scratch + 1, sizeof(char *));
        if (!e || !a) {
                free(e);
                if (a)
                        l->scratch = a;
                return s;
        }
        yaml_escape_into(s, e, size);
        l->scratch = a;
        l->scratch[l->n_scratch++] = e;
        return e;
}

int loader_log(Loader *l, DiagnosticLevel level, unsigned line, unsigned column, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = diagnostics_addv(l->diag, level, l->file, line, column, format, ap);
        va_end(ap);
        return r;
}

Location node_location(const Loader *l, const Node *n) {
        return (Location){.file = l->file, .line = n->line, .column = n->column};
}

/* "WHAT: expected EXPECTED, got …". Returns 0 or -ENOMEM. */
int loader_type_error(Loader *l, const Node *n, const char *what, const char *expected) {
        char buf[64];

        if (n->kind == NODE_ALIAS) /* already reported */
                return 0;
        return node_error(
                l, n, "%s: expected %s, got %s", what, expected, node_describe(n, buf, sizeof buf));
}

/*
 * The text of a scalar that must be a string. Returns 1 and *ret (pointing into n), 0 when
 * an error was reported, -ENOMEM.
 */
int node_string(Loader *l, const Node *n, const char *what, const char *expected, const char **ret) {
        int r;

        if (n->kind != NODE_SCALAR || node_is_null(n)) {
                r = loader_type_error(l, n, what, expected);
                return r < 0 ? r : 0;
        }
        if (memchr(n->value, '\0', n->length)) {
                r = node_error(l, n, "%s: contains a NUL character", what);
                return r < 0 ? r : 0;
        }
        *ret = n->value;
        return 1;
}

static size_t utf8_chars(const char *s, size_t n) {
        size_t c = 0;

        for (size_t i = 0; i < n; i++)
                if (((unsigned char)s[i] & 0xC0) != 0x80)
                        c++;
        return c;
}

/*
 * The column of byte offset inside scalar n, when the scalar is written on one line without
 * escapes (so its text maps 1:1 onto the file); else the column where the scalar starts.
 */
unsigned node_scalar_column(const Node *n, size_t offset) {
        unsigned quote;

        if (n->style == YAML_PLAIN_SCALAR_STYLE)
                quote = 0;
        else if (n->style == YAML_SINGLE_QUOTED_SCALAR_STYLE || n->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
                quote = 1;
        else
                return n->column;
        if (n->end_line != n->line || n->end_column < n->column)
                return n->column;
        if (n->end_column - n->column != utf8_chars(n->value, n->length) + 2 * quote)
                return n->column;
        return n->column + quote + (unsigned)utf8_chars(n->value, MIN(offset, n->length));
}

/* Optimal string alignment distance (Levenshtein plus transpositions), for "did you mean". */
static unsigned edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned d[33][33];

        if (la > 32 || lb > 32)
                return UINT32_MAX;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
                        unsigned v = MIN(d[i - 1][j] + 1, d[i][j - 1] + 1);

                        v = MIN(v, d[i - 1][j - 1] + cost);
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                                v = MIN(v, d[i - 2][j - 2] + 1);
                        d[i][j] = v;
                }
        return d[la][lb];
}

/* Whether candidate is a plausible correction of word; *best tracks the closest so far. */
static void suggest_consider(const char *word, const char *candidate, unsigned *best, const char **ret) {
        unsigned d = edit_distance(word, candidate);

        if (d == 0 || d > 2 || 3 * d > MAX(strlen(word), strlen(candidate)))
                return;
        if (d < *best) {
                *best = d;
                *ret = candidate;
        }
}

/* ---- schema tables ---------------------------------------------------------------------- */

/* "a, b, c": the key names of a table, for messages. */
void key_spec_names(const KeySpec *specs, size_t n_specs, char *buf, size_t size) {
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n_specs && used < size; i++) {
                int k = snprintf(buf + used, size - used, "%s%s", i > 0 ? ", " : "", specs[i].name);

                if (k < 0)
                        break;
                used += (size_t)k;
        }
}

bool key_spec_has(const KeySpec *specs, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++)
                if (streq(specs[i].name, key))
                        return true;
        return false;
}

static int unknown_key(Loader *l, const Node *key, const char *what, const KeySpec *specs, size_t n_specs) {
        const char *suggestion = NULL, *hint = NULL;
        unsigned best = UINT32_MAX;
        char expected[256];

        for (size_t i = 0; i < n_specs; i++)
                suggest_consider(key->value, specs[i].name, &best, &suggestion);
        if (suggestion)
                return node_error(
                        l, key, "unknown key \"%s\" in %s (did you mean \"%s\"?)", loader_esc(l, key->value),
                        what, suggestion);

        hint = l->misplaced_key_hint ? l->misplaced_key_hint(what, key->value) : NULL;
        if (hint)
                return node_error(
                        l, key, "unknown key \"%s\" in %s (%s)", loader_esc(l, key->value), what, hint);

        key_spec_names(specs, n_specs, expected, sizeof expected);
        return node_error(
                l, key, "unknown key \"%s\" in %s (expected one of: %s)", loader_esc(l, key->value), what,
                expected);
}

/*
 * Walks mapping n against specs: every key must be a string, known and unique; each known key
 * is handed to its parser; required keys must be present. Returns the number of known keys
 * found (>= 0) or -ENOMEM.
 */
int parse_mapping(
        Loader *l, const Node *n, const char *what, const KeySpec *specs, size_t n_specs, void *obj) {
        const Node *first_of[64];
        uint64_t seen = 0;
        int count = 0, r;
        char buf[64];

        assert(n->kind == NODE_MAPPING);
        assert(n_specs <= 64);

        for (size_t i = 0; i + 1 < n->n_children; i += 2) {
                const Node *key = n->children[i], *value = n->children[i + 1];
                const Node *first = NULL;
                size_t s;

                if (key->kind == NODE_ALIAS)
                        continue;
                if (key->kind != NODE_SCALAR || node_is_null(key) || memchr(key->value, '\0', key->length)) {
                        r = node_error(
                                l, key, "keys in %s must be plain words, got %s", what,
                                node_describe(key, buf, sizeof buf));
                        if (r < 0)
                                return r;
                        continue;
                }

                for (s = 0; s < n_specs; s++)
                        if (streq(specs[s].name, key->value))
                                break;
                if (s >= n_specs) {
                        r = unknown_key(l, key, what, specs, n_specs);
                        if (r < 0)
                                return r;
                        continue;
                }

                /* Only known keys can repeat: unknown ones are errors already. */
                first = seen & (UINT64_C(1) << s) ? first_of[s] : NULL;
                if (first) {
                        r = node_error(
                                l, key, "duplicate key \"%s\" in %s (first given at line %u, column %u)",
                                key->value, what, first->line, first->column);
                        if (r < 0)
                                return r;
                        continue;
                }
                first_of[s] = key;
                seen |= UINT64_C(1) << s;
                count++;
                r = specs[s].parse(l, &specs[s], key, value, obj);
                if (r < 0)
                        return r;
        }

        for (size_t s = 0; s < n_specs; s++)
                if (specs[s].required && !(seen & (UINT64_C(1) << s))) {
                        r = node_error(l, n, "%s is missing the required key \"%s\"", what, specs[s].name);
                        if (r < 0)
                                return r;
                }
        return count;
}

/*
 * A string or a list of strings (a list means "any of"). Each must be non-empty and pass
 * check. On success *ret is the strv and, if ret_nodes, *ret_nodes the node of each entry;
 * when an error was reported *ret is NULL. Returns 0 or -ENOMEM.
 */
int parse_string_list(
        Loader *l, const char *what, const Node *n, StringCheck check, char ***ret,
        const Node ***ret_nodes) {
        _cleanup_strv_free_ char **list = NULL;
        _cleanup_free_ const Node **nodes = NULL;
        Node *const *items = NULL;
        size_t n_items, j = 0;
        bool ok = true;
        int r;

        *ret = NULL;

        if (n->kind == NODE_SCALAR && !node_is_null(n)) {
                items = (Node *const *)&n;
                n_items = 1;
        } else if (n->kind == NODE_SEQUENCE) {
                if (n->n_children == 0)
                        return node_error(l, n, "%s: the list is empty (leave the key out instead)", what);
                items = n->children;
                n_items = n->n_children;
        } else
                return loader_type_error(l, n, what, "a string or a list of strings");

        list = calloc(n_items + 1, sizeof(char *));
        nodes = calloc(n_items, sizeof(Node *));
        if (!list || !nodes)
                return -ENOMEM;

        for (size_t i = 0; i < n_items; i++) {
                const char *s = NULL;

                r = node_string(l, items[i], what, "a string", &s);
                if (r < 0)
                        return r;
                if (r == 0) {
                        ok = false;
                        continue;
                }
                if (isempty(s)) {
                        r = node_error(l, items[i], "%s: empty pattern", what);
                        if (r < 0)
                                return r;
                        ok = false;
                        continue;
                }
                if (check) {
                        r = check(l, what, items[i], s);
                        if (r < 0)
                                return r;
                        if (r == 0) {
                                ok = false;
                                continue;
                        }
                }
                list[j] = strdup(s);
                if (!list[j])
                        return -ENOMEM;
                nodes[j++] = items[i];
        }

        if (!ok)
                return 0;
        *ret = TAKE_PTR(list);
        if (ret_nodes)
                *ret_nodes = TAKE_PTR(nodes);
        return 0;
}

/*
 * A cpu-list scalar (CPU, node or package numbers — unit names them in messages) into *ret.
 * Returns 1 on success, 0 when an error was reported, -ENOMEM.
 */
int parse_cpu_list_node(Loader *l, const Node *n, const char *what, const char *unit, CpuSet *ret) {
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL;
        const char *s = NULL, *reason = NULL;
        size_t offset = 0;
        int r;

        r = node_string(l, n, what, "a cpu-list such as \"0-3,8\"", &s);
        if (r <= 0)
                return r;

        r = cpuset_parse_list_full(s, &set, &offset, &reason);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                unsigned column = node_scalar_column(n, offset);
                unsigned char c = offset < strlen(s) ? (unsigned char)s[offset] : 0;

                if (reason)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column, "%s: invalid cpu-list \"%s\": %s",
                                what, loader_esc(l, s), reason);
                else if (r == -ERANGE)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column,
                                "%s: %s number too large in \"%s\" (the maximum is %u)", what, unit,
                                loader_esc(l, s), CPUSET_MAX_CPUS - 1);
                else if (c >= 0x20 && c < 0x7f)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column,
                                "%s: invalid cpu-list \"%s\": unexpected character '%c'", what,
                                loader_esc(l, s), c);
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column, "%s: invalid cpu-list \"%s\"", what,
                                loader_esc(l, s));
                return r < 0 ? r : 0;
        }
        if (cpuset_is_empty(&set)) {
                r = node_error(l, n, "%s: the cpu-list \"%s\" names no %s", what, loader_esc(l, s), unit);
                return r < 0 ? r : 0;
        }

        cpuset_done(ret);
        *ret = set;
        set = CPUSET_NULL;
        return 1;
}
/* ---- string checks ---------------------------------------------------------------------- */

/* comm and thread names: the kernel keeps 15 bytes, so a longer literal name never matches. */
int check_comm(Loader *l, const char *what, const Node *n, const char *value) {
        size_t len = strlen(value);
        int r;

        if (len <= TASK_COMM_MAX || has_glob_chars(value))
                return 1;
        r = node_warning(
                l, n,
                "%s: \"%s\" is %zu characters long, but the kernel keeps only the first %u characters "
                "of a task's name, so it can never match; write \"%.15s\" or a glob such as \"%.14s*\"",
                what, loader_esc(l, value), len, TASK_COMM_MAX, loader_esc(l, value), loader_esc(l, value));
        return r < 0 ? r : 1;
}

/* exe and cgroup patterns are matched against absolute paths. */
int check_absolute(Loader *l, const char *what, const Node *n, const char *value) {
        int r;

        if (value[0] == '/' || value[0] == '*' || value[0] == '?' || value[0] == '[')
                return 1;
        r = node_warning(
                l, n, "%s: \"%s\" is not an absolute path and can never match; write \"/…/%s\" or \"*/%s\"",
                what, loader_esc(l, value), loader_esc(l, value), loader_esc(l, value));
        return r < 0 ? r : 1;
}

/* A user name ([a-z_][a-z0-9_-]*$?) or a decimal uid; resolution is the plan's job. */
int check_user(Loader *l, const char *what, const Node *n, const char *value) {
        size_t len = strlen(value);
        int r;

        if (strspn(value, "0123456789") == len) {
                unsigned long long uid;

                errno = 0;
                uid = strtoull(value, NULL, 10);
                if (errno == 0 && uid <= UID_MAX_VALID)
                        return 1;
                r = node_error(l, n, "%s: uid %s is out of range (0-%llu)", what, value, UID_MAX_VALID);
                return r < 0 ? r : 0;
        }

        if (strchr("abcdefghijklmnopqrstuvwxyz_", value[0])) {
                size_t k = 1 + strspn(value + 1, "abcdefghijklmnopqrstuvwxyz0123456789_-");

                if (k == len || (k + 1 == len && value[k] == '$'))
                        return 1;
        }
        r = node_error(
                l, n,
                "%s: \"%s\" is neither a user name ([a-z_][a-z0-9_-]*, optionally ending in $) nor a "
                "decimal uid",
                what, loader_esc(l, value));
        return r < 0 ? r : 0;
}

/* ---- values shared by the sections ----------------------------------------------------- */

/*
 * The value of an enumerated key: its index in e->names into *ret. An unknown word is an error
 * that suggests the closest name, or the name a hint maps it to, or else lists the names.
 * Returns 1, 0 when an error was reported, -ENOMEM.
 */
int parse_enum_value(Loader *l, const Node *n, const char *what, const EnumSpec *e, size_t *ret) {
        const char *v = NULL, *suggestion = NULL;
        unsigned best = UINT32_MAX;
        char expected[128];
        int r;

        snprintf(expected, sizeof expected, "one of %s", e->one_of);
        r = node_string(l, n, what, expected, &v);
        if (r <= 0)
                return r;
        for (size_t i = 0; i < e->n_names; i++) {
                if (streq(v, e->names[i])) {
                        *ret = i;
                        return 1;
                }
                suggest_consider(v, e->names[i], &best, &suggestion);
        }
        for (size_t i = 0; !suggestion && i < e->n_hints; i++)
                if (strcasecmp(v, e->hints[i].word) == 0)
                        suggestion = e->hints[i].meant;
        if (suggestion)
                r = node_error(
                        l, n, "%s: invalid value \"%s\" (did you mean \"%s\"?)", what, loader_esc(l, v),
                        suggestion);
        else
                r = node_error(
                        l, n, "%s: invalid value \"%s\" (expected %s)", what, loader_esc(l, v), e->expected);
        return r < 0 ? r : 0;
}

/* true / false (and the YAML 1.1 capitalisations) into *ret. Returns 1, 0 when reported, -ENOMEM. */
int parse_bool_node(Loader *l, const Node *n, const char *what, bool *ret) {
        const char *v = NULL;
        int r;

        r = node_string(l, n, what, "true or false", &v);
        if (r <= 0)
                return r;
        if (streq(v, "true") || streq(v, "True") || streq(v, "TRUE"))
                *ret = true;
        else if (streq(v, "false") || streq(v, "False") || streq(v, "FALSE"))
                *ret = false;
        else {
                r = node_error(l, n, "%s: expected true or false, got \"%s\"", what, loader_esc(l, v));
                return r < 0 ? r : 0;
        }
        return 1;
}

int parse_enum_key(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, spec->name, spec->values, &i);
        if (r > 0)
                *(int *)((uint8_t *)obj + spec->offset) = (int)(spec->values->first + i);
        return r < 0 ? r : 0;
}

int parse_bool_key(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        bool b = false;
        int r;

        r = parse_bool_node(l, value, spec->name, &b);
        if (r > 0)
                *(bool *)((uint8_t *)obj + spec->offset) = b;
        return r < 0 ? r : 0;
}

/*
 * A decimal integer from min to max (a leading "-" allowed when min < 0) into *ret. Returns 1,
 * 0 when an error was reported, -ENOMEM.
 */
int parse_int_range(Loader *l, const Node *n, const char *what, long min, long max, long *ret) {
        const char *v = NULL;
        char expected[64];
        char *end = NULL;
        long x;
        int r;

        snprintf(expected, sizeof expected, "a number from %ld to %ld", min, max);
        r = node_string(l, n, what, expected, &v);
        if (r <= 0)
                return r;
        errno = 0;
        x = strtol(v, &end, 10);
        if (isempty(v) || *end != '\0' || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')))
                r = node_error(l, n, "%s: expected %s, got \"%s\"", what, expected, loader_esc(l, v));
        else if (errno != 0 || x < min || x > max)
                r = node_error(
                        l, n, "%s: %s is out of range (%ld to %ld)", what, loader_esc(l, v), min, max);
        else {
                *ret = x;
                return 1;
        }
        return r < 0 ? r : 0;
}

/*
 * The name: of a policy or an irqs:/net: rule: a non-empty string without control characters,
 * into *name, and its place into *ret_location (may be NULL). Returns 0 or -ENOMEM.
 */
int parse_rule_name(Loader *l, const Node *value, char **name, Location *ret_location) {
        const char *s = NULL;
        int r;

        r = node_string(l, value, "name", "a string", &s);
        if (r <= 0)
                return r;
        if (isempty(s))
                return node_error(l, value, "name: must not be empty");
        for (const char *c = s; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        return node_error(l, value, "name: must not contain control characters");
        r = free_and_strdup(name, s);
        if (r < 0)
                return r;
        if (ret_location)
                *ret_location = node_location(l, value);
        return 0;
}

static const char *const drift_mode_names[] = {
        [DRIFT_REPORT] = "report",
        [DRIFT_ENFORCE] = "enforce",
        [DRIFT_RESPECT] = "respect",
};

static const ValueHint drift_mode_hints[] = {
        {"ignore", "report"}, {"warn", "report"},    {"restore", "enforce"},
        {"reset", "enforce"}, {"accept", "respect"}, {"release", "respect"},
};

static const EnumSpec drift_mode_enum = {
        drift_mode_names,           ELEMENTSOF(drift_mode_names),
        "report, enforce, respect", "report, enforce or respect",
        drift_mode_hints,           ELEMENTSOF(drift_mode_hints),
};

/* on-drift: of a policy or an irqs:/net: rule; the DriftMode is at spec->offset. */
int parse_on_drift(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        DriftMode *d = (DriftMode *)((uint8_t *)obj + spec->offset);
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "on-drift", &drift_mode_enum, &i);
        if (r <= 0)
                return r;
        *d = (DriftMode)i;
        return 0;
}

/* ---- lists of rules ------------------------------------------------------------------- */

/*
 * A list key (policies:, threads:, irqs:, net:): 1 when value is a sequence to walk; 0 when there
 * is nothing to walk (null; an alias, reported where aliases are); else what loader_type_error() returns
 * after reporting "KEY: expected WHAT".
 */
static int list_value(Loader *l, const Node *value, const char *key, const char *what) {
        if (value->kind == NODE_ALIAS || node_is_null(value))
                return 0;
        if (value->kind != NODE_SEQUENCE)
                return loader_type_error(l, value, key, what);
        return 1;
}

/*
 * An entry of a list key: 1 for a mapping to parse; 0 to skip it (an alias, or anything else,
 * reported as "KEY: each entry must be a mapping (HINT), got …"); -ENOMEM.
 */
static int list_entry(Loader *l, const Node *item, const char *key, const char *hint) {
        char buf[64];
        int r;

        if (item->kind == NODE_ALIAS)
                return 0;
        if (item->kind != NODE_MAPPING) {
                r = node_error(
                        l, item, "%s: each entry must be a mapping (%s), got %s", key, hint,
                        node_describe(item, buf, sizeof buf));
                return r < 0 ? r : 0;
        }
        return 1;
}

int parse_rule_list(Loader *l, const RuleListSpec *spec, const Node *value, void *obj) {
        _cleanup_free_ void *rule = NULL;
        int r;

        r = list_value(l, value, spec->key, spec->expected);
        if (r <= 0)
                return r;

        /* One rule at a time, zeroed again by spec->done() after each entry. */
        rule = calloc(1, spec->size);
        if (!rule)
                return -ENOMEM;

        for (size_t i = 0; i < value->n_children; i++) {
                const Node *item = value->children[i];

                r = list_entry(l, item, spec->key, spec->entry_hint);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;

                *(Location *)((uint8_t *)rule + spec->location_offset) = node_location(l, item);
                r = parse_mapping(l, item, spec->what, spec->keys, spec->n_keys, rule);
                if (r >= 0)
                        r = spec->add(l, item, rule, obj);
                spec->done(rule);
                if (r < 0)
                        return r;
        }
        return 0;
}
