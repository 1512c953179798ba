/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * YAML → policy model. libyaml's event parser builds a small tree of nodes that keeps every
 * node's position (so diagnostics can name file:line:column), then a table-driven schema walk
 * turns the tree into a Config. Each mapping of the schema is a KeySpec table; a later key
 * (memory:, scheduler:, irqs:, net: …) is one more table entry with its parser.
 */

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <search.h>
#include <stdarg.h>
#include <stdint.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <yaml.h>

#include "apply-sched.h"
#include "config.h"
#include "fileio.h"
#include "netdev.h"
#include "policy-yaml.h"

#define TASK_COMM_MAX 15U                   /* TASK_COMM_LEN - 1 */
#define NESTING_MAX   64U                   /* deepest YAML nesting accepted */
#define FILE_SIZE_MAX (16U * 1024U * 1024U) /* bytes */
#define UID_MAX_VALID 4294967294ULL         /* (uid_t) -1 is "no uid" */
#define SETTINGS_NAME "affinityd.yaml"

const char *const policy_dirs_default[] = {
        AFFINITYD_VENDOR_POLICY_DIR,
        AFFINITYD_RUNTIME_DIR "/policy.d",
        AFFINITYD_CONF_DIR "/policy.d",
        NULL,
};

const char config_settings_default[] = AFFINITYD_CONF_DIR "/" SETTINGS_NAME;

/* ---- diagnostics ---------------------------------------------------------------------- */

void diagnostics_done(Diagnostics *d) {
        if (!d)
                return;
        for (size_t i = 0; i < d->n_items; i++) {
                free(d->items[i].file);
                free(d->items[i].message);
        }
        free(d->items);
        *d = (Diagnostics){};
}

_printf_(6, 0) static int diagnostics_addv(
        Diagnostics *d, DiagnosticLevel level, const char *file, unsigned line, unsigned column,
        const char *format, va_list ap) {
        _cleanup_free_ char *message = NULL, *f = NULL;
        Diagnostic *items = NULL;

        if (vasprintf(&message, format, ap) < 0)
                return -ENOMEM;
        if (file) {
                f = strdup(file);
                if (!f)
                        return -ENOMEM;
        }
        items = reallocarray(d->items, d->n_items + 1, sizeof(Diagnostic));
        if (!items)
                return -ENOMEM;
        d->items = items;
        d->items[d->n_items++] = (Diagnostic){
                .level = level,
                .file = TAKE_PTR(f),
                .line = line,
                .column = column,
                .message = TAKE_PTR(message),
        };
        if (level == DIAGNOSTIC_ERROR)
                d->n_errors++;
        else
                d->n_warnings++;
        return 0;
}

int diagnostics_add(
        Diagnostics *d, DiagnosticLevel level, const char *file, unsigned line, unsigned column,
        const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = diagnostics_addv(d, level, file, line, column, format, ap);
        va_end(ap);
        return r;
}

int diagnostic_format(const Diagnostic *d, char **ret) {
        const char *level = d->level == DIAGNOSTIC_ERROR ? "error" : "warning";
        char *s = NULL;
        int r;

        if (d->file && d->line > 0 && d->column > 0)
                r = asprintf(&s, "%s:%u:%u: %s: %s", d->file, d->line, d->column, level, d->message);
        else if (d->file && d->line > 0)
                r = asprintf(&s, "%s:%u: %s: %s", d->file, d->line, level, d->message);
        else if (d->file)
                r = asprintf(&s, "%s: %s: %s", d->file, level, d->message);
        else
                r = asprintf(&s, "%s: %s", level, d->message);
        if (r < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int diagnostics_format(const Diagnostics *d, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = NULL;
        int r = 0;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; d && i < d->n_items; i++) {
                _cleanup_free_ char *line = NULL;

                r = diagnostic_format(&d->items[i], &line);
                if (r < 0)
                        break;
                fputs(line, f);
                fputc('\n', f);
        }
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- the node tree ---------------------------------------------------------------------- */

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

static Node *node_free(Node *n) {
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n_children; i++)
                node_free(n->children[i]);
        free(n->children);
        free(n->value);
        free(n);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Node *, node_free);

static bool isempty(const char *s) {
        return !s || !*s;
}

/* An empty plain scalar, "~" or "null": YAML's "nothing". Quoted "" is an empty string. */
static bool node_is_null(const Node *n) {
        if (n->kind != NODE_SCALAR || n->style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        return n->length == 0 || streq(n->value, "~") || streq(n->value, "null") ||
                streq(n->value, "Null") || streq(n->value, "NULL");
}

/* Writes s with control characters escaped (\n, \t, \xNN) into buf (NUL-terminated); the length. */
static size_t escape_into(const char *s, char *buf, size_t size) {
        size_t k = 0;

        for (; *s && k + 5 < size; s++) {
                unsigned char c = (unsigned char)*s;

                if (c == '\n')
                        k += (size_t)snprintf(buf + k, size - k, "\\n");
                else if (c == '\t')
                        k += (size_t)snprintf(buf + k, size - k, "\\t");
                else if (c < 0x20 || c == 0x7f)
                        k += (size_t)snprintf(buf + k, size - k, "\\x%02x", c);
                else
                        buf[k++] = (char)c;
        }
        buf[k] = '\0';
        return k;
}

/* "a list", "a mapping", "an empty value" or the scalar itself, quoted and shortened. */
static const char *node_describe(const Node *n, char *buf, size_t size) {
        switch (n->kind) {
        case NODE_SEQUENCE:
                return "a list";
        case NODE_MAPPING:
                return "a mapping";
        case NODE_ALIAS:
                return "an alias";
        case NODE_SCALAR: {
                char e[48];

                if (node_is_null(n))
                        return "an empty value";
                if (escape_into(n->value, e, sizeof e) > 40 || strlen(n->value) > 40)
                        snprintf(buf, size, "\"%.37s...\"", e);
                else
                        snprintf(buf, size, "\"%s\"", e);
                return buf;
        }
        }
        return "?";
}

/* ---- the loader state and its messages ------------------------------------------------- */

typedef struct Loader {
        Config *config;
        Diagnostics *diag;
        const char *file; /* owned by config->files */
        bool is_settings;
        char **scratch; /* strings made for messages, freed with the loader */
        size_t n_scratch;
} Loader;

static void loader_done(Loader *l) {
        for (size_t i = 0; i < l->n_scratch; i++)
                free(l->scratch[i]);
        free(l->scratch);
        l->scratch = NULL;
        l->n_scratch = 0;
}

static bool has_control_chars(const char *s) {
        for (; s && *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/*
 * s fit for a one-line message: control characters escaped, so a diagnostic is always one
 * line. Owned by l; s itself when it needs no escaping (or on OOM).
 */
static const char *esc(Loader *l, const char *s) {
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
        escape_into(s, e, size);
        l->scratch = a;
        l->scratch[l->n_scratch++] = e;
        return e;
}

_printf_(5, 6) static int loader_log(
        Loader *l, DiagnosticLevel level, unsigned line, unsigned column, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = diagnostics_addv(l->diag, level, l->file, line, column, format, ap);
        va_end(ap);
        return r;
}

#define node_error(l, n, ...)   loader_log((l), DIAGNOSTIC_ERROR, (n)->line, (n)->column, __VA_ARGS__)
#define node_warning(l, n, ...) loader_log((l), DIAGNOSTIC_WARNING, (n)->line, (n)->column, __VA_ARGS__)

static Location node_location(const Loader *l, const Node *n) {
        return (Location){.file = l->file, .line = n->line, .column = n->column};
}

/* "WHAT: expected EXPECTED, got …". Returns 0 or -ENOMEM. */
static int type_error(Loader *l, const Node *n, const char *what, const char *expected) {
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
static int node_string(Loader *l, const Node *n, const char *what, const char *expected, const char **ret) {
        int r;

        if (n->kind != NODE_SCALAR || node_is_null(n)) {
                r = type_error(l, n, what, expected);
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
static unsigned scalar_column(const Node *n, size_t offset) {
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
};

static const char *misplaced_key_hint(const char *what, const char *key);

/* "a, b, c": the key names of a table, for messages. */
static void spec_names(const KeySpec *specs, size_t n_specs, char *buf, size_t size) {
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n_specs && used < size; i++) {
                int k = snprintf(buf + used, size - used, "%s%s", i > 0 ? ", " : "", specs[i].name);

                if (k < 0)
                        break;
                used += (size_t)k;
        }
}

static int unknown_key(Loader *l, const Node *key, const char *what, const KeySpec *specs, size_t n_specs) {
        const char *suggestion = NULL, *hint = NULL;
        unsigned best = UINT32_MAX;
        char expected[256];

        for (size_t i = 0; i < n_specs; i++)
                suggest_consider(key->value, specs[i].name, &best, &suggestion);
        if (suggestion)
                return node_error(
                        l, key, "unknown key \"%s\" in %s (did you mean \"%s\"?)", esc(l, key->value), what,
                        suggestion);

        hint = misplaced_key_hint(what, key->value);
        if (hint)
                return node_error(l, key, "unknown key \"%s\" in %s (%s)", esc(l, key->value), what, hint);

        spec_names(specs, n_specs, expected, sizeof expected);
        return node_error(
                l, key, "unknown key \"%s\" in %s (expected one of: %s)", esc(l, key->value), what,
                expected);
}

/*
 * Walks mapping n against specs: every key must be a string, known and unique; each known key
 * is handed to its parser; required keys must be present. Returns the number of known keys
 * found (>= 0) or -ENOMEM.
 */
static int parse_mapping(
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
static int parse_string_list(
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
                return type_error(l, n, what, "a string or a list of strings");

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
static int parse_cpu_list_node(Loader *l, const Node *n, const char *what, const char *unit, CpuSet *ret) {
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
                unsigned column = scalar_column(n, offset);
                unsigned char c = offset < strlen(s) ? (unsigned char)s[offset] : 0;

                if (reason)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column, "%s: invalid cpu-list \"%s\": %s",
                                what, esc(l, s), reason);
                else if (r == -ERANGE)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column,
                                "%s: %s number too large in \"%s\" (the maximum is %u)", what, unit,
                                esc(l, s), CPUSET_MAX_CPUS - 1);
                else if (c >= 0x20 && c < 0x7f)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column,
                                "%s: invalid cpu-list \"%s\": unexpected character '%c'", what, esc(l, s),
                                c);
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, n->line, column, "%s: invalid cpu-list \"%s\"", what,
                                esc(l, s));
                return r < 0 ? r : 0;
        }
        if (cpuset_is_empty(&set)) {
                r = node_error(l, n, "%s: the cpu-list \"%s\" names no %s", what, esc(l, s), unit);
                return r < 0 ? r : 0;
        }

        cpuset_done(ret);
        *ret = set;
        set = CPUSET_NULL;
        return 1;
}

/* ---- string checks ---------------------------------------------------------------------- */

static bool has_glob_chars(const char *s) {
        return strpbrk(s, "*?[") != NULL;
}

/* comm and thread names: the kernel keeps 15 bytes, so a longer literal name never matches. */
static int check_comm(Loader *l, const char *what, const Node *n, const char *value) {
        size_t len = strlen(value);
        int r;

        if (len <= TASK_COMM_MAX || has_glob_chars(value))
                return 1;
        r = node_warning(
                l, n,
                "%s: \"%s\" is %zu characters long, but the kernel keeps only the first %u characters "
                "of a task's name, so it can never match; write \"%.15s\" or a glob such as \"%.14s*\"",
                what, esc(l, value), len, TASK_COMM_MAX, esc(l, value), esc(l, value));
        return r < 0 ? r : 1;
}

/* exe and cgroup patterns are matched against absolute paths. */
static int check_absolute(Loader *l, const char *what, const Node *n, const char *value) {
        int r;

        if (value[0] == '/' || value[0] == '*' || value[0] == '?' || value[0] == '[')
                return 1;
        r = node_warning(
                l, n, "%s: \"%s\" is not an absolute path and can never match; write \"/…/%s\" or \"*/%s\"",
                what, esc(l, value), esc(l, value), esc(l, value));
        return r < 0 ? r : 1;
}

/* A user name ([a-z_][a-z0-9_-]*$?) or a decimal uid; resolution is the plan's job. */
static int check_user(Loader *l, const char *what, const Node *n, const char *value) {
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
                what, esc(l, value));
        return r < 0 ? r : 0;
}

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
                                esc(l, list[i]), strna(why));
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
                        spec->name, esc(l, list[bad < n ? bad : 0]), strna(error));

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
};

static int parse_match(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;
        int r;

        if (value->kind != NODE_MAPPING)
                return type_error(
                        l, value, "match",
                        "a mapping of conditions (comm:, exe:, cmdline:, user:, cgroup:, unit:)");

        r = parse_mapping(l, value, "match", match_keys, ELEMENTSOF(match_keys), &p->match);
        if (r < 0)
                return r;
        if (value->n_children == 0) {
                char names[256];

                spec_names(match_keys, ELEMENTSOF(match_keys), names, sizeof names);
                return node_error(l, value, "match: needs at least one of %s", names);
        }
        return 0;
}

/* ---- cpus: ------------------------------------------------------------------------------ */

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
} EnumSpec;

/*
 * The value of an enumerated key: its index in e->names into *ret. An unknown word is an error
 * that suggests the closest name, or the name a hint maps it to, or else lists the names.
 * Returns 1, 0 when an error was reported, -ENOMEM.
 */
static int parse_enum_value(Loader *l, const Node *n, const char *what, const EnumSpec *e, size_t *ret) {
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
                        l, n, "%s: invalid value \"%s\" (did you mean \"%s\"?)", what, esc(l, v),
                        suggestion);
        else
                r = node_error(l, n, "%s: invalid value \"%s\" (expected %s)", what, esc(l, v), e->expected);
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

static int parse_selector_reserved(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "reserved", &reserved_enum, &i);
        if (r > 0)
                s->reserved = (ReservedMode)i;
        return r < 0 ? r : 0;
}

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

static int parse_selector_smt(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "smt", &smt_enum, &i);
        if (r > 0)
                s->smt = (SmtMode)i;
        return r < 0 ? r : 0;
}

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
};

static int parse_selector_kind(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "kind", &cpu_kind_enum, &i);
        if (r > 0)
                s->cpu_kind = (CpuKindSelector)(i + 1);
        return r < 0 ? r : 0;
}

static int parse_selector_exclusive(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = obj;
        const char *v = NULL;
        int r;

        r = node_string(l, value, "exclusive", "true or false", &v);
        if (r <= 0)
                return r;
        if (streq(v, "true") || streq(v, "True") || streq(v, "TRUE"))
                s->exclusive = true;
        else if (streq(v, "false") || streq(v, "False") || streq(v, "FALSE"))
                s->exclusive = false;
        else
                return node_error(l, value, "exclusive: expected true or false, got \"%s\"", esc(l, v));
        return 0;
}

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
                                esc(l, s), unit, CPUSET_MAX_CPUS);
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
                        l, n, "%s: expected %s, got \"%s\"%s", what, expected, esc(l, s), hint ? hint : "");
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

#define IFNAME_MAX 15U /* IFNAMSIZ - 1 */

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
static int check_device_name(
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
                                what, esc(l, v));
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
                                l, DIAGNOSTIC_ERROR, value->line, scalar_column(value, bad),
                                "%s: \"%s\" is not a network interface name (they contain no \"/\"; a PCI "
                                "address is written like \"0000:3b:00.0\")",
                                what, esc(l, v));
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, scalar_column(value, bad),
                                "%s: \"%s\" is not a network interface name (they contain no white space)",
                                what, esc(l, v));
                return r < 0 ? r : 0;
        }
        if (has_control_chars(v))
                r = node_error(l, value, "%s: \"%s\" contains control characters", what, esc(l, v));
        else if (streq(v, ".") || streq(v, ".."))
                r = node_error(l, value, "%s: \"%s\" is not a network interface name", what, v);
        else if (strlen(v) > IFNAME_MAX)
                r = node_error(
                        l, value,
                        "%s: \"%s\" is %zu characters long, but network interface names have at most %u",
                        what, esc(l, v), strlen(v), IFNAME_MAX);
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

/* The keys of a selector mapping. */
static const KeySpec selector_keys[] = {
        {"nodes", parse_selector_nodes},         {"packages", parse_selector_packages},
        {"near", parse_selector_near},           {"kind", parse_selector_kind},
        {"reserved", parse_selector_reserved},   {"cores", parse_selector_cores},
        {"cpus", parse_selector_cpus},           {"smt", parse_selector_smt},
        {"exclusive", parse_selector_exclusive},
};

/* The key node named name in mapping n (the first, if repeated), or NULL. */
static const Node *mapping_key(const Node *n, const char *name) {
        for (size_t i = 0; i + 1 < n->n_children; i += 2)
                if (n->children[i]->kind == NODE_SCALAR && streq(n->children[i]->value, name))
                        return n->children[i];
        return NULL;
}

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
        return type_error(
                l, value, what,
                "a cpu-list such as \"2-5\" or a selector mapping (nodes:, packages:, near:, cores:, …)");
}

/* cpus: a literal cpu-list scalar or a selector mapping; the CpuSelector is at spec->offset. */
static int parse_cpus(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
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
static int parse_thread_cpus(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        CpuSelector *s = (CpuSelector *)((uint8_t *)obj + spec->offset);

        if (value->kind == NODE_SCALAR && streq(value->value, "spread")) {
                s->location = node_location(l, value);
                s->kind = CPU_SELECTOR_SPREAD;
                return 0;
        }
        return parse_cpus(l, spec, key, value, obj);
}

/* ---- scheduler: and memory: ------------------------------------------------------------- */

/* true / false (and the YAML 1.1 capitalisations) into *ret. Returns 1, 0 when reported, -ENOMEM. */
static int parse_bool_node(Loader *l, const Node *n, const char *what, bool *ret) {
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
                r = node_error(l, n, "%s: expected true or false, got \"%s\"", what, esc(l, v));
                return r < 0 ? r : 0;
        }
        return 1;
}

/*
 * A decimal integer from min to max (a leading "-" allowed when min < 0) into *ret. Returns 1,
 * 0 when an error was reported, -ENOMEM.
 */
static int parse_int_range(Loader *l, const Node *n, const char *what, long min, long max, long *ret) {
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
                r = node_error(l, n, "%s: expected %s, got \"%s\"", what, expected, esc(l, v));
        else if (errno != 0 || x < min || x > max)
                r = node_error(l, n, "%s: %s is out of range (%ld to %ld)", what, esc(l, v), min, max);
        else {
                *ret = x;
                return 1;
        }
        return r < 0 ? r : 0;
}

static const char *const sched_policy_names[] = {"other", "batch", "idle", "fifo", "rr"};

/* What people write for the classes (chrt(1) and kernel names). */
static const ValueHint sched_policy_hints[] = {
        {"normal", "other"},       {"sched_other", "other"}, {"cfs", "other"},
        {"sched_normal", "other"}, {"sched_batch", "batch"}, {"sched_idle", "idle"},
        {"sched_fifo", "fifo"},    {"sched_rr", "rr"},       {"realtime", "fifo"},
        {"round-robin", "rr"},
};

static const EnumSpec sched_policy_enum = {
        sched_policy_names,
        ELEMENTSOF(sched_policy_names),
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
        p = apply_sched_policy_from_string(sched_policy_names[i]);
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

        r = parse_int_range(l, value, "scheduler: priority", 1, APPLY_SCHED_PRIORITY_MAX, &v);
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

static const char *const io_class_names[] = {"realtime", "best-effort", "idle"};

static const ValueHint io_class_hints[] = {
        {"rt", "realtime"},
        {"real-time", "realtime"},
        {"be", "best-effort"},
        {"besteffort", "best-effort"},
        {"best_effort", "best-effort"},
        {"normal", "best-effort"},
};

static const EnumSpec io_class_enum = {
        io_class_names,
        ELEMENTSOF(io_class_names),
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
        c = apply_ioprio_class_from_string(io_class_names[i]);
        if (c < 0)
                return node_error(
                        l, value, "scheduler: io: class: \"%s\" is not supported here", io_class_names[i]);
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
                return type_error(
                        l, value, "scheduler: io",
                        "a mapping { class: realtime|best-effort|idle, level: 0-7 }");
        s->io_level = UINT_MAX;
        r = parse_mapping(l, value, "scheduler: io", io_keys, ELEMENTSOF(io_keys), s);
        if (r < 0)
                return r;
        level = mapping_key(value, "level");
        if (s->has_io && s->io_class == APPLY_IOPRIO_CLASS_IDLE && level)
                return node_error(
                        l, level,
                        "scheduler: io: level does not apply to class idle (idle I/O has no levels)");
        if (s->io_level == UINT_MAX)
                s->io_level = s->has_io && s->io_class != APPLY_IOPRIO_CLASS_IDLE ? IO_LEVEL_DEFAULT : 0;
        return 0;
}

static const KeySpec scheduler_keys[] = {
        {"policy", parse_scheduler_policy}, {"priority", parse_scheduler_priority},
        {"nice", parse_scheduler_nice},     {"reset-on-fork", parse_scheduler_reset_on_fork},
        {"io", parse_scheduler_io},
};

/* The value node of key name in mapping n (the first, if repeated), or NULL. */
static const Node *mapping_value(const Node *n, const char *name) {
        for (size_t i = 0; i + 1 < n->n_children; i += 2)
                if (n->children[i]->kind == NODE_SCALAR && streq(n->children[i]->value, name))
                        return n->children[i + 1];
        return NULL;
}

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
                return type_error(
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
                return type_error(l, value, "memory: nodes", "local or a NUMA node list such as \"0-1\"");
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
                return type_error(l, value, "memory", "a mapping (nodes: local or a node list, migrate:)");
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

/*
 * A list key (policies:, threads:, irqs:, net:): 1 when value is a sequence to walk; 0 when there
 * is nothing to walk (null; an alias, reported where aliases are); else what type_error() returns
 * after reporting "KEY: expected WHAT".
 */
static int list_value(Loader *l, const Node *value, const char *key, const char *what) {
        if (value->kind == NODE_ALIAS || node_is_null(value))
                return 0;
        if (value->kind != NODE_SEQUENCE)
                return type_error(l, value, key, what);
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

/* Add a per-thread key here. */
static const KeySpec thread_keys[] = {
        {"name", parse_thread_name, .required = true},
        {"cpus", parse_thread_cpus, offsetof(ThreadRule, cpus)},
        {"scheduler", parse_scheduler, offsetof(ThreadRule, scheduler)},
        {"memory", thread_memory},
};

static int parse_threads(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;
        int r;

        r = list_value(l, value, "threads", "a list of thread rules (- name: …)");
        if (r <= 0)
                return r;

        for (size_t i = 0; i < value->n_children; i++) {
                const Node *item = value->children[i];
                _cleanup_(thread_rule_done) ThreadRule t = {};
                ThreadRule *a = NULL;

                r = list_entry(l, item, "threads", "name:, cpus:");
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;

                t.location = node_location(l, item);
                r = parse_mapping(l, item, "thread rule", thread_keys, ELEMENTSOF(thread_keys), &t);
                if (r < 0)
                        return r;

                a = reallocarray(p->threads, p->n_threads + 1, sizeof(ThreadRule));
                if (!a)
                        return -ENOMEM;
                p->threads = a;
                p->threads[p->n_threads++] = t;
                t = (ThreadRule){};
        }
        return 0;
}

/* ---- policies: -------------------------------------------------------------------------- */

/*
 * The name: of a policy or an irqs:/net: rule: a non-empty string without control characters,
 * into *name, and its place into *ret_location (may be NULL). Returns 0 or -ENOMEM.
 */
static int parse_rule_name(Loader *l, const Node *value, char **name, Location *ret_location) {
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

static int parse_policy_name(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Policy *p = obj;

        return parse_rule_name(l, value, &p->name, &p->name_location);
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
static int parse_on_drift(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        DriftMode *d = (DriftMode *)((uint8_t *)obj + spec->offset);
        size_t i = 0;
        int r;

        r = parse_enum_value(l, value, "on-drift", &drift_mode_enum, &i);
        if (r <= 0)
                return r;
        *d = (DriftMode)i;
        return 0;
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
                                esc(l, u));
                        if (r < 0)
                                return r;
                } else if (!strchr(u, '.')) {
                        r = node_error(
                                l, n,
                                "via: systemd needs full unit names with their type suffix, but unit: "
                                "\"%s\" has none; write \"%s.service\" (or .scope)",
                                esc(l, u), esc(l, u));
                        if (r < 0)
                                return r;
                }
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
};

static int parse_policies(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        int r;

        r = list_value(l, value, "policies", "a list of policies (- name: …)");
        if (r <= 0)
                return r;

        for (size_t i = 0; i < value->n_children; i++) {
                const Node *item = value->children[i];
                _cleanup_(policy_done) Policy p = {};

                r = list_entry(l, item, "policies", "name:, match:, cpus:, …");
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;

                p.location = node_location(l, item);
                r = parse_mapping(l, item, "policy", policy_keys, ELEMENTSOF(policy_keys), &p);
                if (r < 0)
                        return r;
                r = check_via(l, item, &p);
                if (r < 0)
                        return r;
                r = config_add_policy(c, &p);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- irqs: and net: --------------------------------------------------------------------- */

static int device_selector_exclusive(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        return node_error(
                l, key,
                "exclusive: applies to policies only (IRQs and network queues don't hold CPUs; a "
                "selector mapping of an irqs: or net: rule already leaves out the CPUs of exclusive "
                "policies)");
}

/* The keys of a selector mapping in an irqs: or net: rule: selector_keys, but exclusive: refused. */
static const KeySpec device_selector_keys[] = {
        {"nodes", parse_selector_nodes},
        {"packages", parse_selector_packages},
        {"near", parse_selector_near},
        {"kind", parse_selector_kind},
        {"reserved", parse_selector_reserved},
        {"cores", parse_selector_cores},
        {"cpus", parse_selector_cpus},
        {"smt", parse_selector_smt},
        {"exclusive", device_selector_exclusive},
};

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
                                esc(l, list[i]));
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
static const KeySpec irq_match_keys[] = {
        {"device", parse_irq_match_device},
        {"action", parse_irq_match_action},
};

static int parse_irq_match(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        int r;

        if (value->kind == NODE_ALIAS)
                return 0;
        if (value->kind != NODE_MAPPING)
                return type_error(
                        l, value, "match",
                        "a mapping of IRQ conditions (device: an interface or PCI address, action: IRQ "
                        "name globs)");

        r = parse_mapping(l, value, "irq match", irq_match_keys, ELEMENTSOF(irq_match_keys), obj);
        if (r < 0)
                return r;
        if (value->n_children == 0) {
                char names[256];

                spec_names(irq_match_keys, ELEMENTSOF(irq_match_keys), names, sizeof names);
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
        return parse_selector(
                l, "cpus", value, device_selector_keys, ELEMENTSOF(device_selector_keys), &rule->cpus);
}

static int parse_irq_spread(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        IrqRule *rule = obj;
        bool b = false;
        int r;

        r = parse_bool_node(l, value, "spread", &b);
        if (r <= 0)
                return r;
        rule->spread = b;
        return 0;
}

/* Add an irqs: rule key here. */
static const KeySpec irq_rule_keys[] = {
        {"name", parse_irq_name, .required = true},
        {"match", parse_irq_match, .required = true},
        {"cpus", parse_irq_cpus, .required = true},
        {"spread", parse_irq_spread},
        {"on-drift", parse_on_drift, offsetof(IrqRule, on_drift)},
};

static int parse_irqs(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        int r;

        r = list_value(l, value, "irqs", "a list of IRQ rules (- name: …)");
        if (r <= 0)
                return r;

        for (size_t i = 0; i < value->n_children; i++) {
                const Node *item = value->children[i];
                _cleanup_(irq_rule_done) IrqRule rule = {};
                const IrqRule *first = NULL;

                r = list_entry(l, item, "irqs", "name:, match:, cpus:, …");
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;

                rule.location = node_location(l, item);
                r = parse_mapping(l, item, "irq rule", irq_rule_keys, ELEMENTSOF(irq_rule_keys), &rule);
                if (r < 0)
                        return r;

                /* Names are unique among the irqs: rules of every file read so far. */
                first = config_find_irq_rule(c, rule.name);
                if (first) {
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, rule.name_location.line, rule.name_location.column,
                                "duplicate irq rule name \"%s\" (first defined at %s:%u:%u)",
                                esc(l, rule.name), strna(first->name_location.file),
                                first->name_location.line, first->name_location.column);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = config_add_irq_rule(c, &rule);
                if (r < 0)
                        return r;
        }
        return 0;
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
                                l, DIAGNOSTIC_ERROR, value->line, scalar_column(value, bad),
                                "device: \"%s\" is not an interface name (they contain no \":\"; net: rules "
                                "select devices by interface name, not by PCI address)",
                                esc(l, v));
                else if (c == '/')
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, scalar_column(value, bad),
                                "device: \"%s\" is not an interface name (they contain no \"/\")",
                                esc(l, v));
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, value->line, scalar_column(value, bad),
                                "device: \"%s\" is not an interface name (they contain no white space)",
                                esc(l, v));
                return r < 0 ? r : 0;
        }
        if (has_control_chars(v))
                return node_error(l, value, "device: \"%s\" contains control characters", esc(l, v));
        if (!has_glob_chars(v) && strlen(v) > IFNAME_MAX)
                return node_error(
                        l, value,
                        "device: \"%s\" is %zu characters long, but network interface names have at most %u",
                        esc(l, v), strlen(v), IFNAME_MAX);
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
        return parse_selector(
                l, "rps", value, device_selector_keys, ELEMENTSOF(device_selector_keys), &rule->rps);
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
        r = parse_selector(
                l, "xps", value, device_selector_keys, ELEMENTSOF(device_selector_keys), &rule->xps_cpus);
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

static int parse_net(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        int r;

        r = list_value(l, value, "net", "a list of network device rules (- device: …)");
        if (r <= 0)
                return r;

        for (size_t i = 0; i < value->n_children; i++) {
                const Node *item = value->children[i], *name = NULL;
                _cleanup_(net_rule_done) NetRule rule = {};
                const NetRule *first = NULL;

                r = list_entry(l, item, "net", "device:, rps:, xps:, …");
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;

                rule.location = node_location(l, item);
                r = parse_mapping(l, item, "net rule", net_rule_keys, ELEMENTSOF(net_rule_keys), &rule);
                if (r < 0)
                        return r;

                if (!mapping_key(item, "rps") && !mapping_key(item, "xps")) {
                        r = node_error(
                                l, item,
                                "net rule needs rps: (receive packet steering) or xps: (transmit packet "
                                "steering), or both");
                        if (r < 0)
                                return r;
                }

                /* The name defaults to the device glob; unique among the net: rules of every file
                 * read so far, reported where the name was written (or defaulted from). */
                name = mapping_value(item, "name");
                if (!name && rule.device) {
                        r = free_and_strdup(&rule.name, rule.device);
                        if (r < 0)
                                return r;
                        name = mapping_value(item, "device");
                }
                first = config_find_net_rule(c, rule.name);
                if (first && name) {
                        r = node_error(
                                l, name, "duplicate net rule name \"%s\" (first defined at %s:%u:%u%s)",
                                esc(l, rule.name), strna(first->location.file), first->location.line,
                                first->location.column,
                                mapping_key(item, "name")
                                        ? ""
                                        : "; a net: rule without name: is named after its device: glob");
                        if (r < 0)
                                return r;
                        continue;
                }
                r = config_add_net_rule(c, &rule);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- top level -------------------------------------------------------------------------- */

static int parse_reserve(Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        int r;

        if (c->has_reserve)
                return node_error(
                        l, key, "reserve: already set at %s:%u:%u", c->reserve_location.file,
                        c->reserve_location.line, c->reserve_location.column);
        r = parse_cpu_list_node(l, value, "reserve", "CPU", &c->reserve);
        if (r <= 0)
                return r;
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

static int parse_poll_interval(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        const char *v = NULL;
        uint64_t usec = 0;
        int r;

        r = node_string(l, value, "poll-interval", "a time span such as \"500ms\" or \"2s\"", &v);
        if (r <= 0)
                return r;
        if (parse_timespan_usec(v, &usec) < 0)
                return node_error(
                        l, value,
                        "poll-interval: invalid time span \"%s\" (expected e.g. \"500ms\", \"2s\", "
                        "\"1min\")",
                        esc(l, v));
        if (usec < POLL_INTERVAL_MIN_USEC || usec > POLL_INTERVAL_MAX_USEC)
                return node_error(l, value, "poll-interval: %s is out of range (10ms to 1h)", esc(l, v));
        c->poll_interval_usec = usec;
        return 0;
}

static int parse_drift_interval(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        const char *v = NULL;
        uint64_t usec = 0;
        int r;

        r = node_string(l, value, "drift-interval", "a time span such as \"500ms\" or \"30s\"", &v);
        if (r <= 0)
                return r;
        if (parse_timespan_usec(v, &usec) < 0)
                return node_error(
                        l, value,
                        "drift-interval: invalid time span \"%s\" (expected e.g. \"500ms\", \"30s\", "
                        "\"5min\")",
                        esc(l, v));
        if (usec < DRIFT_INTERVAL_MIN_USEC || usec > DRIFT_INTERVAL_MAX_USEC)
                return node_error(
                        l, value, "drift-interval: %s is out of range (10ms to 1440min)", esc(l, v));
        c->drift_interval_usec = usec;
        return 0;
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

static int parse_restore_on_exit(
        Loader *l, const KeySpec *spec, const Node *key, const Node *value, void *obj) {
        Config *c = obj;
        bool b = false;
        int r;

        r = parse_bool_node(l, value, "restore-on-exit", &b);
        if (r <= 0)
                return r;
        c->restore_on_exit = b;
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
        {"allow-realtime", parse_allow_realtime},
        {"restore-on-exit", parse_restore_on_exit},
        {"rfs", parse_rfs},
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
        {"allow-realtime", misplaced_setting},
        {"restore-on-exit", misplaced_setting},
        {"rfs", misplaced_setting},
};

static bool spec_has(const KeySpec *specs, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++)
                if (streq(specs[i].name, key))
                        return true;
        return false;
}

/* A key that is valid one level up or down: say where it goes. */
static const char *misplaced_key_hint(const char *what, const char *key) {
        if (streq(what, "policy") && spec_has(match_keys, ELEMENTSOF(match_keys), key))
                return "conditions go under match:";
        if (streq(what, "policy") && spec_has(selector_keys, ELEMENTSOF(selector_keys), key))
                return "selector keys go under cpus:";
        if (streq(what, "match") && spec_has(policy_keys, ELEMENTSOF(policy_keys), key))
                return "it belongs to the policy, one level up, not under match:";
        if (streq(what, "the top level") && spec_has(policy_keys, ELEMENTSOF(policy_keys), key))
                return "policies are entries of a policies: list";
        if (streq(what, "policy") && spec_has(scheduler_keys, ELEMENTSOF(scheduler_keys), key))
                return "scheduling keys go under scheduler:";
        if (streq(what, "thread rule") && spec_has(scheduler_keys, ELEMENTSOF(scheduler_keys), key))
                return "scheduling keys go under scheduler:";
        if (streq(what, "policy") && streq(key, "migrate"))
                return "migrate: goes under memory:";
        if (streq(what, "scheduler") && spec_has(io_keys, ELEMENTSOF(io_keys), key))
                return "I/O priority keys go under io:";
        if ((streq(what, "thread rule") || streq(what, "policy")) && streq(key, "spread"))
                return "write cpus: spread in a thread rule";
        if (streq(what, "cpus") && streq(key, "spread"))
                return "write cpus: spread in a thread rule, or spread: true next to cpus: in an irqs: "
                       "rule";
        if ((streq(what, "irq rule") || streq(what, "net rule")) && streq(key, "exclusive"))
                return "exclusive: applies to policies only";
        if (streq(what, "irq rule") && spec_has(irq_match_keys, ELEMENTSOF(irq_match_keys), key))
                return "conditions go under match:";
        if (streq(what, "irq rule") && spec_has(selector_keys, ELEMENTSOF(selector_keys), key))
                return "selector keys go under cpus:";
        if (streq(what, "irq match") && spec_has(irq_rule_keys, ELEMENTSOF(irq_rule_keys), key))
                return "it belongs to the irqs: rule, one level up, not under match:";
        if (streq(what, "irq match") && spec_has(match_keys, ELEMENTSOF(match_keys), key))
                return "IRQs are matched by device: (an interface or PCI address) and action: (IRQ "
                       "names), processes in policies:";
        if (streq(what, "net rule") && streq(key, "cpus"))
                return "a net: rule sets rps: (receive) and xps: (transmit) CPUs; interrupt CPUs go in "
                       "an irqs: rule";
        if (streq(what, "net rule") && spec_has(selector_keys, ELEMENTSOF(selector_keys), key))
                return "selector keys go under rps: or xps:";
        if (streq(what, "net rule") && streq(key, "match"))
                return "a net: rule selects devices by device: (a glob on interface names)";
        if (streq(what, "net rule") && streq(key, "spread"))
                return "write xps: spread";
        if ((streq(what, "rps") || streq(what, "xps")) && streq(key, "spread"))
                return "write xps: spread as the whole value of xps:";
        return NULL;
}

/* ---- reading YAML ----------------------------------------------------------------------- */

typedef struct Reader {
        Loader *loader;
        yaml_parser_t parser;
        const char *text;
        size_t len;
} Reader;

static void offset_to_position(
        const char *text, size_t len, size_t offset, unsigned *line, unsigned *column) {
        unsigned ln = 1, col = 1;

        for (size_t i = 0; i < MIN(offset, len); i++) {
                if (text[i] == '\n') {
                        ln++;
                        col = 1;
                } else if (((unsigned char)text[i] & 0xC0) != 0x80)
                        col++;
        }
        *line = ln;
        *column = col;
}

/* Reports libyaml's error. Returns -EBADMSG (reported: stop reading this file) or -ENOMEM. */
static int reader_error(Reader *rd) {
        const yaml_parser_t *p = &rd->parser;
        Loader *l = rd->loader;
        unsigned line, column;
        int r;

        switch (p->error) {
        case YAML_MEMORY_ERROR:
                return -ENOMEM;
        case YAML_READER_ERROR:
                offset_to_position(rd->text, rd->len, p->problem_offset, &line, &column);
                if (p->problem_value >= 0)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, line, column, "invalid input: %s (0x%X)",
                                strna(p->problem), (unsigned)p->problem_value);
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, line, column, "invalid input: %s", strna(p->problem));
                break;
        default:
                line = (unsigned)p->problem_mark.line + 1;
                column = (unsigned)p->problem_mark.column + 1;
                if (p->problem_mark.index < rd->len && rd->text[p->problem_mark.index] == '\t')
                        /* libyaml's own words ("found character that cannot start any token")
                         * don't say that the character is a tab. */
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, line, column,
                                "YAML syntax error: tabs are not allowed for indentation in YAML; use "
                                "spaces");
                else if (p->context)
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, line, column,
                                "YAML syntax error: %s (%s at line %u, column %u)", strna(p->problem),
                                p->context, (unsigned)p->context_mark.line + 1,
                                (unsigned)p->context_mark.column + 1);
                else
                        r = loader_log(
                                l, DIAGNOSTIC_ERROR, line, column, "YAML syntax error: %s",
                                strna(p->problem));
                break;
        }
        return r < 0 ? r : -EBADMSG;
}

static int reader_next(Reader *rd, yaml_event_t *ret) {
        if (!yaml_parser_parse(&rd->parser, ret))
                return reader_error(rd);
        return 0;
}

static int node_append(Node *parent, Node *child) {
        Node **a = reallocarray(parent->children, parent->n_children + 1, sizeof(Node *));

        if (!a)
                return -ENOMEM;
        parent->children = a;
        parent->children[parent->n_children++] = child;
        return 0;
}

/* Builds the node that starts with event ev (and its children). Returns 0, -EBADMSG, -ENOMEM. */
static int reader_build(Reader *rd, const yaml_event_t *ev, unsigned depth, Node **ret) {
        _cleanup_(node_freep) Node *n = NULL;
        const char *anchor = NULL, *tag = NULL;
        int r;

        n = calloc(1, sizeof(Node));
        if (!n)
                return -ENOMEM;
        n->line = (unsigned)ev->start_mark.line + 1;
        n->column = (unsigned)ev->start_mark.column + 1;
        n->end_line = (unsigned)ev->end_mark.line + 1;
        n->end_column = (unsigned)ev->end_mark.column + 1;

        switch (ev->type) {
        case YAML_ALIAS_EVENT:
                n->kind = NODE_ALIAS;
                r = node_error(
                        rd->loader, n, "YAML aliases (*%s) are not supported: write the value out",
                        (const char *)ev->data.alias.anchor);
                if (r < 0)
                        return r;
                break;
        case YAML_SCALAR_EVENT:
                n->kind = NODE_SCALAR;
                n->style = ev->data.scalar.style;
                n->length = ev->data.scalar.length;
                n->value = malloc(n->length + 1);
                if (!n->value)
                        return -ENOMEM;
                memcpy(n->value, ev->data.scalar.value, n->length);
                n->value[n->length] = '\0';
                anchor = (const char *)ev->data.scalar.anchor;
                tag = (const char *)ev->data.scalar.tag;
                break;
        case YAML_SEQUENCE_START_EVENT:
                n->kind = NODE_SEQUENCE;
                anchor = (const char *)ev->data.sequence_start.anchor;
                tag = (const char *)ev->data.sequence_start.tag;
                break;
        case YAML_MAPPING_START_EVENT:
                n->kind = NODE_MAPPING;
                anchor = (const char *)ev->data.mapping_start.anchor;
                tag = (const char *)ev->data.mapping_start.tag;
                break;
        default:
                /* libyaml only produces node events here */
                r = node_error(rd->loader, n, "unexpected YAML event %d", (int)ev->type);
                return r < 0 ? r : -EBADMSG;
        }

        if (anchor) {
                r = node_error(
                        rd->loader, n, "YAML anchors (&%s) are not supported: write the value out", anchor);
                if (r < 0)
                        return r;
        }
        if (tag) {
                r = node_error(rd->loader, n, "YAML tags (%s) are not supported", tag);
                if (r < 0)
                        return r;
        }

        if (n->kind == NODE_SEQUENCE || n->kind == NODE_MAPPING) {
                if (depth >= NESTING_MAX) {
                        r = node_error(rd->loader, n, "nesting deeper than %u levels", NESTING_MAX);
                        return r < 0 ? r : -EBADMSG;
                }
                for (;;) {
                        _cleanup_(yaml_event_delete) yaml_event_t child = {};
                        _cleanup_(node_freep) Node *c = NULL;

                        r = reader_next(rd, &child);
                        if (r < 0)
                                return r;
                        if (child.type == YAML_SEQUENCE_END_EVENT || child.type == YAML_MAPPING_END_EVENT)
                                break;
                        r = reader_build(rd, &child, depth + 1, &c);
                        if (r < 0)
                                return r;
                        r = node_append(n, c);
                        if (r < 0)
                                return r;
                        c = NULL;
                }
        }

        *ret = TAKE_PTR(n);
        return 0;
}

/*
 * Reads the stream: nothing, or exactly one document. Returns 0 with *ret_root (NULL for an
 * empty stream) and *ret_second (the start of a second document, line 0 if none); -EBADMSG
 * after reporting a syntax error; -ENOMEM.
 */
static int reader_run(Reader *rd, Node **ret_root, yaml_mark_t *ret_second) {
        _cleanup_(node_freep) Node *root = NULL;
        yaml_mark_t second = {};
        int r;

        for (unsigned documents = 0;;) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};

                r = reader_next(rd, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_STREAM_END_EVENT)
                        break;
                if (ev.type != YAML_DOCUMENT_START_EVENT)
                        continue; /* STREAM-START, DOCUMENT-END */
                if (++documents > 1) {
                        second = ev.start_mark;
                        second.line++; /* 1-based, and non-zero as a flag */
                        break;
                }

                _cleanup_(yaml_event_delete) yaml_event_t node = {};
                r = reader_next(rd, &node);
                if (r < 0)
                        return r;
                r = reader_build(rd, &node, 0, &root);
                if (r < 0)
                        return r;
        }

        *ret_root = TAKE_PTR(root);
        *ret_second = second;
        return 0;
}

static int load_root(Loader *l, const Node *root) {
        int r;

        if (!root || root->kind == NODE_ALIAS || node_is_null(root))
                return 0; /* an empty or comment-only file */
        if (root->kind != NODE_MAPPING)
                return type_error(
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
        Reader rd = {};
        _cleanup_(loader_done) Loader l = {};
        unsigned errors;
        int r;

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        l = (Loader){.config = c, .diag = diag, .is_settings = is_settings};
        l.file = config_add_file(c, file ?: "<string>");
        if (!l.file)
                return -ENOMEM;

        rd = (Reader){.loader = &l, .text = text ?: "", .len = text ? len : 0};
        if (!yaml_parser_initialize(&rd.parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&rd.parser, (const unsigned char *)rd.text, rd.len);
        r = reader_run(&rd, &root, &second);
        yaml_parser_delete(&rd.parser);
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

/* ---- files and directories -------------------------------------------------------------- */

static void note_io_error(int *io_error, int r) {
        if (*io_error == 0)
                *io_error = r;
}

/* Reads and parses one file. Read failures are diagnostics (and *io_error); returns 0 or -ENOMEM. */
static int load_file(
        Config *c, const char *path, bool is_settings, bool missing_ok, Diagnostics *diag, int *io_error) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        /* A regular file, read whole: -EISDIR, -EBADFD (not a regular file), -EFBIG (more than
         * FILE_SIZE_MAX bytes), -ESTALE (changed while being read). */
        r = read_full_file(path, FILE_SIZE_MAX, READ_FULL_REGULAR, &text, &size);
        if (r == -ENOENT && missing_ok)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note_io_error(io_error, r);
                if (r == -EBADFD)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: not a regular file");
                if (r == -EFBIG)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: larger than %u MiB",
                                FILE_SIZE_MAX / 1024 / 1024);
                if (r == -ESTALE)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0,
                                "cannot read: the file changed while being read (try again)");
                if (r == -EISDIR)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: is a directory");
                return diagnostics_add(diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: %s", strerror(-r));
        }

        r = config_parse_string(c, path, text, size, is_settings, diag);
        return r == -ENOMEM ? r : 0;
}

typedef struct DropIn {
        char *name;
        char *path;
        size_t priority; /* index of its directory: higher wins */
        bool masked;
} DropIn;

static void dropins_free(DropIn *d, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(d[i].name);
                free(d[i].path);
        }
        free(d);
}

static int dropin_compare(const void *a, const void *b) {
        const DropIn *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        if (c != 0)
                return c;
        return x->priority < y->priority ? -1 : x->priority > y->priority;
}

static bool is_dev_null(const struct stat *st) {
        return S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3);
}

/* A symlink to /dev/null (or the device node itself) masks the name. */
static bool dropin_is_mask(int dfd, const char *name) {
        char target[sizeof("/dev/null")];
        struct stat st;
        ssize_t n;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return false;
        if (!S_ISLNK(st.st_mode))
                return is_dev_null(&st);
        n = readlinkat(dfd, name, target, sizeof target);
        if (n == (ssize_t)strlen("/dev/null") && memcmp(target, "/dev/null", (size_t)n) == 0)
                return true;
        return fstatat(dfd, name, &st, 0) >= 0 && is_dev_null(&st);
}

static bool endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);

        return a >= b && streq(s + a - b, suffix);
}

/*
 * The *.yaml files of dirs after override and masking, sorted by name. Unreadable directories
 * are diagnostics (and *io_error). Returns 0 or -ENOMEM.
 */
static int dropins_collect(
        const char *const *dirs, Diagnostics *diag, int *io_error, DropIn **ret, size_t *ret_n) {
        DropIn *list = NULL;
        size_t n = 0, k = 0;
        int r = 0;

        for (size_t p = 0; dirs && dirs[p] && r >= 0; p++) {
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;

                d = opendir(dirs[p]);
                if (!d) {
                        if (errno == ENOENT)
                                continue;
                        note_io_error(io_error, -errno);
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, dirs[p], 0, 0, "cannot read directory: %s",
                                strerror(errno));
                        continue;
                }

                for (errno = 0; (de = readdir(d)); errno = 0) {
                        DropIn *a = NULL;

                        if (de->d_name[0] == '.' || !endswith(de->d_name, ".yaml"))
                                continue;
                        a = reallocarray(list, n + 1, sizeof(DropIn));
                        if (!a) {
                                r = -ENOMEM;
                                break;
                        }
                        list = a;
                        list[n] = (DropIn){
                                .name = strdup(de->d_name),
                                .priority = p,
                                .masked = dropin_is_mask(dirfd(d), de->d_name),
                        };
                        n++;
                        if (!list[n - 1].name ||
                            asprintf(&list[n - 1].path, "%s/%s", dirs[p], de->d_name) < 0) {
                                list[n - 1].path = NULL;
                                r = -ENOMEM;
                                break;
                        }
                }
                if (r >= 0 && errno != 0) {
                        note_io_error(io_error, -errno);
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, dirs[p], 0, 0, "cannot read directory: %s",
                                strerror(errno));
                }
        }
        if (r < 0) {
                dropins_free(list, n);
                return r;
        }

        if (n > 0)
                qsort(list, n, sizeof(DropIn), dropin_compare);

        /* Keep the last (highest priority) entry of each name, and drop masks. */
        for (size_t i = 0; i < n; i++) {
                if ((i + 1 < n && streq(list[i].name, list[i + 1].name)) || list[i].masked) {
                        free(list[i].name);
                        free(list[i].path);
                        continue;
                }
                list[k++] = list[i];
        }

        *ret = list;
        *ret_n = k;
        return 0;
}

static int load_dirs_into(
        Config *c, const char *settings_path, const char *const *policy_dirs, Diagnostics *diag,
        int *io_error) {
        DropIn *list = NULL;
        size_t n = 0;
        int r;

        if (settings_path) {
                r = load_file(c, settings_path, true, true, diag, io_error);
                if (r < 0)
                        return r;
        }

        r = dropins_collect(policy_dirs, diag, io_error, &list, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = load_file(c, list[i].path, false, false, diag, io_error);
        dropins_free(list, n);
        return r;
}

/* The common tail of the loaders: check across files, decide the result. */
static int config_finish(Config **c, unsigned errors_before, int io_error, Config **ret, Diagnostics *diag) {
        int r;

        r = config_verify(*c, diag);
        if (r == -ENOMEM)
                return r;
        if (io_error < 0)
                return io_error;
        if (diag->n_errors > errors_before)
                return -EINVAL;
        *ret = TAKE_PTR(*c);
        return 0;
}

int config_load_dirs(
        const char *settings_path, const char *const *policy_dirs, Config **ret, Diagnostics *diag) {
        _cleanup_(diagnostics_done) Diagnostics dummy = {};
        _cleanup_(config_freep) Config *c = NULL;
        unsigned errors;
        int io_error = 0, r;

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        c = config_new();
        if (!c)
                return -ENOMEM;
        r = load_dirs_into(c, settings_path, policy_dirs, diag, &io_error);
        if (r < 0)
                return r;
        return config_finish(&c, errors, io_error, ret, diag);
}

/* What a directory the user named holds. */
typedef enum DirKind {
        DIR_KIND_CONFIG,   /* affinityd.yaml or policy.d/ (whatever their type) */
        DIR_KIND_POLICIES, /* neither, but *.yaml files: a policy.d directory itself */
        DIR_KIND_NOTHING,  /* neither, and no *.yaml file */
} DirKind;

/* Looks into the directory path. Returns 0 and *ret, or the -errno of opendir/readdir. */
static int dir_classify(const char *path, DirKind *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        struct stat st;
        bool yaml = false;

        d = opendir(path);
        if (!d)
                return -errno;
        if (fstatat(dirfd(d), SETTINGS_NAME, &st, AT_SYMLINK_NOFOLLOW) >= 0 ||
            fstatat(dirfd(d), "policy.d", &st, AT_SYMLINK_NOFOLLOW) >= 0) {
                *ret = DIR_KIND_CONFIG;
                return 0;
        }
        for (errno = 0; (de = readdir(d)); errno = 0)
                if (de->d_name[0] != '.' && endswith(de->d_name, ".yaml")) {
                        yaml = true;
                        break;
                }
        if (!de && errno != 0)
                return -errno;
        *ret = yaml ? DIR_KIND_POLICIES : DIR_KIND_NOTHING;
        return 0;
}

/* Whether path names a *.yaml file by its name (trailing slashes ignored). */
static bool path_is_yaml_name(const char *path) {
        size_t n = strlen(path);

        while (n > 1 && path[n - 1] == '/')
                n--;
        return n >= strlen(".yaml") && memcmp(path + n - strlen(".yaml"), ".yaml", strlen(".yaml")) == 0;
}

/* Loads DIR/affinityd.yaml and DIR/policy.d/ *.yaml into c. Returns 0 or -ENOMEM. */
static int load_config_dir_into(Config *c, const char *dir, Diagnostics *diag, int *io_error) {
        _cleanup_free_ char *settings = NULL, *policy_dir = NULL;

        if (asprintf(&settings, "%s/" SETTINGS_NAME, dir) < 0) {
                settings = NULL;
                return -ENOMEM;
        }
        if (asprintf(&policy_dir, "%s/policy.d", dir) < 0) {
                policy_dir = NULL;
                return -ENOMEM;
        }
        return load_dirs_into(c, settings, (const char *const[]){policy_dir, NULL}, diag, io_error);
}

/*
 * Checks that config_dir is a configuration directory: an error when it is empty, missing,
 * not a directory, or looks like a policy.d directory; a warning when it holds neither
 * affinityd.yaml nor policy.d/. Returns 0 (go on), -EINVAL (reported: a usage mistake),
 * -ENOMEM, or the -errno of stat/opendir (reported).
 */
static int config_dir_check(const char *config_dir, Diagnostics *diag) {
        struct stat st;
        DirKind kind;
        int r;

        if (isempty(config_dir)) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, NULL, 0, 0,
                        "the configuration directory is an empty string (give a directory that holds "
                        "affinityd.yaml and policy.d/)");
                return r < 0 ? r : -EINVAL;
        }
        if (stat(config_dir, &st) < 0) {
                int error = -errno;

                if (error == -ENOENT)
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                                "configuration directory does not exist");
                else
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                                "cannot read configuration directory: %s", strerror(-error));
                return r < 0 ? r : error;
        }
        if (!S_ISDIR(st.st_mode)) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                        "not a directory (the configuration directory holds affinityd.yaml and policy.d/)");
                return r < 0 ? r : -ENOTDIR;
        }

        r = dir_classify(config_dir, &kind);
        if (r < 0) {
                int q = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, config_dir, 0, 0, "cannot read directory: %s", strerror(-r));
                return q < 0 ? q : r;
        }
        switch (kind) {
        case DIR_KIND_CONFIG:
                return 0;
        case DIR_KIND_POLICIES:
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                        "looks like a policy.d directory (it holds *.yaml files, but no " SETTINGS_NAME
                        " and no policy.d/): pass its parent");
                return r < 0 ? r : -EINVAL;
        case DIR_KIND_NOTHING:
                r = diagnostics_add(
                        diag, DIAGNOSTIC_WARNING, config_dir, 0, 0,
                        "no " SETTINGS_NAME " and no policy.d/ in this directory: no policies");
                return r < 0 ? r : 0;
        }
        return 0;
}

int config_load(const char *config_dir, Config **ret, Diagnostics *diag) {
        _cleanup_(diagnostics_done) Diagnostics dummy = {};
        _cleanup_(config_freep) Config *c = NULL;
        unsigned errors;
        int io_error = 0, r;

        if (!config_dir)
                return config_load_dirs(config_settings_default, policy_dirs_default, ret, diag);

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        r = config_dir_check(config_dir, diag);
        if (r < 0)
                return r;

        c = config_new();
        if (!c)
                return -ENOMEM;
        r = load_config_dir_into(c, config_dir, diag, &io_error);
        if (r < 0)
                return r;
        return config_finish(&c, errors, io_error, ret, diag);
}

/* One directory argument of config_load_paths(). Returns 0 or -ENOMEM. */
static int load_path_dir(Config *c, const char *path, Diagnostics *diag, int *io_error) {
        DirKind kind;
        int r;

        if (path_is_yaml_name(path)) {
                note_io_error(io_error, -EISDIR);
                return diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, path, 0, 0,
                        "cannot read: is a directory (expected a YAML file, a configuration directory or "
                        "a policy.d directory)");
        }

        r = dir_classify(path, &kind);
        if (r < 0) {
                note_io_error(io_error, r);
                return diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read directory: %s", strerror(-r));
        }
        switch (kind) {
        case DIR_KIND_CONFIG:
                return load_config_dir_into(c, path, diag, io_error);
        case DIR_KIND_POLICIES:
                return load_dirs_into(c, NULL, (const char *const[]){path, NULL}, diag, io_error);
        case DIR_KIND_NOTHING:
                break;
        }
        return diagnostics_add(
                diag, DIAGNOSTIC_WARNING, path, 0, 0,
                "no " SETTINGS_NAME ", no policy.d/ and no *.yaml file in this directory: nothing to read");
}

int config_load_paths(char *const *paths, Config **ret, Diagnostics *diag) {
        _cleanup_(diagnostics_done) Diagnostics dummy = {};
        _cleanup_(config_freep) Config *c = NULL;
        unsigned errors;
        int io_error = 0, r;

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        c = config_new();
        if (!c)
                return -ENOMEM;

        STRV_FOREACH (path, paths) {
                struct stat st;

                if (stat(*path, &st) < 0) {
                        note_io_error(&io_error, -errno);
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, *path, 0, 0, "cannot read: %s", strerror(errno));
                } else if (S_ISDIR(st.st_mode))
                        r = load_path_dir(c, *path, diag, &io_error);
                else {
                        const char *base = strrchr(*path, '/');

                        base = base ? base + 1 : *path;
                        r = load_file(c, *path, streq(base, SETTINGS_NAME), false, diag, &io_error);
                }
                if (r < 0)
                        return r;
        }

        return config_finish(&c, errors, io_error, ret, diag);
}

static int policy_compare_name(const void *a, const void *b) {
        return strcmp(((const Policy *)a)->name, ((const Policy *)b)->name);
}

static void noop_free(void *p) {
}

/* One scheduler: against the real-time opt-in. Returns 0 or -ENOMEM. */
static int verify_realtime_spec(const SchedulerSpec *s, Diagnostics *diag) {
        int r;

        if (s->has_policy && (s->policy == SCHED_FIFO || s->policy == SCHED_RR)) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, s->policy_location.file, s->policy_location.line,
                        s->policy_location.column,
                        "scheduler: policy %s needs allow-realtime: true in " SETTINGS_NAME
                        " (a runaway real-time thread can starve the machine)",
                        apply_sched_policy_to_string(s->policy));
                if (r < 0)
                        return r;
        }
        if (s->has_io && s->io_class == APPLY_IOPRIO_CLASS_RT) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, s->io_location.file, s->io_location.line,
                        s->io_location.column,
                        "scheduler: io: class realtime needs allow-realtime: true in " SETTINGS_NAME
                        " (real-time I/O can starve every other reader and writer of the device)");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Real-time classes (CPU and I/O) are refused unless the settings opt in. Returns 0 or -ENOMEM. */
static int verify_realtime(const Config *c, Diagnostics *diag) {
        int r;

        if (c->allow_realtime)
                return 0;
        for (size_t i = 0; i < c->n_policies; i++) {
                const Policy *p = &c->policies[i];

                r = verify_realtime_spec(&p->scheduler, diag);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < p->n_threads; j++) {
                        r = verify_realtime_spec(&p->threads[j].scheduler, diag);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int config_verify(const Config *c, Diagnostics *diag) {
        _cleanup_(diagnostics_done) Diagnostics dummy = {};
        void *root = NULL;
        unsigned errors;
        int r = 0;

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        for (size_t i = 0; i < c->n_policies && r >= 0; i++) {
                const Policy *p = &c->policies[i], *first = NULL;
                void *node = NULL;

                if (!p->name)
                        continue;
                node = tsearch(p, &root, policy_compare_name);
                if (!node) {
                        r = -ENOMEM;
                        break;
                }
                first = *(const Policy **)node;
                if (first == p)
                        continue;
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, p->name_location.file, p->name_location.line,
                        p->name_location.column, "duplicate policy name \"%s\" (first defined at %s:%u:%u)",
                        p->name, strna(first->name_location.file), first->name_location.line,
                        first->name_location.column);
        }
        tdestroy(root, noop_free);
        if (r < 0)
                return r;

        r = verify_realtime(c, diag);
        if (r < 0)
                return r;
        return diag->n_errors > errors ? -EINVAL : 0;
}
