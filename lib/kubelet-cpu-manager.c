/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kubelet's CPU manager checkpoint. See kubelet-cpu-manager.h. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "kubelet-cpu-manager.h"
#include "policy-yaml-internal.h"

/* What parsing one file needs: where errors go. */
typedef struct StateParser {
        const char *file;
        char *error; /* the first problem, "FILE:LINE:COLUMN: message" */
} StateParser;

/* Records a problem at n (the first one only). Returns -EBADMSG, or -ENOMEM. */
_printf_(3, 4) static int parser_error(StateParser *p, const Node *n, const char *format, ...) {
        _cleanup_free_ char *m = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&m, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (!p->error && asprintf(&p->error, "%s:%u:%u: %s", p->file, n->line, n->column, m) < 0) {
                p->error = NULL;
                return -ENOMEM;
        }
        return -EBADMSG;
}

/* "WHAT: expected EXPECTED, got …". Returns -EBADMSG or -ENOMEM. */
static int parser_type_error(StateParser *p, const Node *n, const char *what, const char *expected) {
        char buf[64];

        return parser_error(
                p, n, "%s: expected %s, got %s", what, expected, node_describe(n, buf, sizeof(buf)));
}

/* A scalar's text, for a value that must be a string (JSON's null is not). */
static int node_text(StateParser *p, const Node *n, const char *what, const char **ret) {
        if (n->kind != NODE_SCALAR || (n->style == YAML_PLAIN_SCALAR_STYLE && node_is_null(n)))
                return parser_type_error(p, n, what, "a string");
        *ret = n->value;
        return 0;
}

/* A cpu-list string into *ret. what names it in errors. */
static int node_cpu_list(StateParser *p, const Node *n, const char *what, CpuSet *ret) {
        const char *text = NULL, *reason = NULL;
        size_t offset = 0;
        int r, err;

        r = node_text(p, n, what, &text);
        if (r < 0)
                return r;
        err = cpuset_parse_list_full(text, ret, &offset, &reason);
        if (err < 0) {
                /* The column of the offending character: past the opening quote if quoted. */
                Node at = *n;
                char buf[64];

                at.column += (unsigned)offset + (n->style == YAML_PLAIN_SCALAR_STYLE ? 0U : 1U);
                (void)yaml_escape_into(text, buf, sizeof(buf));
                r = parser_error(p, &at, "%s: invalid cpu-list \"%s\": %s", what, buf, strna(reason));
                return r == -ENOMEM ? r : err == -ERANGE ? -ERANGE : -EBADMSG;
        }
        return 0;
}

static void assignment_done(KubeletCpuAssignment *a) {
        free(a->pod_uid);
        free(a->container);
        cpuset_done(&a->cpus);
}

/* Appends an entry (pod_uid may be NULL) holding the cpu-list at value. */
static int state_add_entry(
        StateParser *p, KubeletCpuState *s, const char *pod_uid, const char *container, const Node *value) {
        _cleanup_free_ char *what = NULL;
        KubeletCpuAssignment a = {}, *e;
        int r;

        if (asprintf(&what, "entries: %s%s%s", pod_uid ?: "", pod_uid ? ": " : "", container) < 0)
                return -ENOMEM;
        r = node_cpu_list(p, value, what, &a.cpus);
        if (r < 0)
                return r;
        a.pod_uid = pod_uid ? strdup(pod_uid) : NULL;
        a.container = strdup(container);
        e = reallocarray(s->entries, s->n_entries + 1, sizeof(*e));
        if ((pod_uid && !a.pod_uid) || !a.container || !e) {
                if (e)
                        s->entries = e;
                assignment_done(&a);
                return -ENOMEM;
        }
        s->entries = e;
        s->entries[s->n_entries++] = a;
        return cpuset_or(&s->exclusive, &a.cpus);
}

/* entries: POD-UID → {CONTAINER → cpu-list} (v2), or CONTAINER-ID → cpu-list (v1). */
static int parse_entries(StateParser *p, const Node *entries, KubeletCpuState *s) {
        int r;

        if (node_is_null(entries))
                return 0;
        if (entries->kind != NODE_MAPPING)
                return parser_type_error(p, entries, "entries", "a mapping of pod UIDs");

        for (size_t i = 0; i + 1 < entries->n_children; i += 2) {
                const Node *key = entries->children[i], *value = entries->children[i + 1];
                const char *uid = NULL;

                r = node_text(p, key, "entries: a key", &uid);
                if (r < 0)
                        return r;
                if (value->kind == NODE_SCALAR) { /* v1 */
                        r = state_add_entry(p, s, NULL, uid, value);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (value->kind != NODE_MAPPING) {
                        _cleanup_free_ char *what = NULL;

                        if (asprintf(&what, "entries: %s", uid) < 0)
                                return -ENOMEM;
                        return parser_type_error(
                                p, value, what, "a mapping of container names to cpu-lists");
                }
                for (size_t k = 0; k + 1 < value->n_children; k += 2) {
                        const char *container = NULL;

                        r = node_text(p, value->children[k], "entries: a container name", &container);
                        if (r < 0)
                                return r;
                        r = state_add_entry(p, s, uid, container, value->children[k + 1]);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int parse_root(StateParser *p, const Node *root, KubeletCpuState *s) {
        const Node *name, *def, *entries;
        const char *text = NULL;
        int r;

        if (root->kind != NODE_MAPPING)
                return parser_type_error(p, root, "the checkpoint", "a JSON object");

        name = mapping_value(root, "policyName");
        if (!name)
                return parser_error(p, root, "policyName: missing: not a CPU manager checkpoint");
        r = node_text(p, name, "policyName", &text);
        if (r < 0)
                return r;
        s->policy_name = strdup(text);
        if (!s->policy_name)
                return -ENOMEM;

        def = mapping_value(root, "defaultCpuSet");
        if (def) {
                r = node_cpu_list(p, def, "defaultCpuSet", &s->default_cpus);
                if (r < 0)
                        return r;
        }

        entries = mapping_value(root, "entries");
        return entries ? parse_entries(p, entries, s) : 0;
}

int kubelet_cpu_state_parse(
        const char *file, const char *text, size_t len, KubeletCpuState **ret, char **ret_error) {
        _cleanup_(diagnostics_done) Diagnostics diag = {};
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *s = NULL;
        _cleanup_(node_freep) Node *root = NULL;
        StateParser p = {.file = file ?: "<string>"};
        yaml_mark_t second = {};
        int r;

        r = node_tree_read(&diag, p.file, text, len, &root, &second);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && diag.n_errors == 0 && !root) {
                r = asprintf(&p.error, "%s: empty: not a CPU manager checkpoint", p.file) < 0 ? -ENOMEM
                                                                                              : -EBADMSG;
                goto fail;
        }
        if ((r < 0 || diag.n_errors > 0) && diag.n_items == 0) {
                r = asprintf(&p.error, "%s: not JSON", p.file) < 0 ? -ENOMEM : -EBADMSG;
                goto fail;
        }
        if (r < 0 || diag.n_errors > 0) {
                const Diagnostic *d = &diag.items[0];

                /* Aliases, anchors and tags are reported but read on: none of them is JSON. */
                r = asprintf(&p.error, "%s:%u:%u: %s", p.file, d->line, d->column, d->message) < 0
                        ? -ENOMEM
                        : -EBADMSG;
                goto fail;
        }
        if (second.line > 0) {
                r = asprintf(
                            &p.error, "%s:%u:%u: a second document", p.file, (unsigned)second.line,
                            (unsigned)second.column + 1) < 0
                        ? -ENOMEM
                        : -EBADMSG;
                goto fail;
        }

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        r = parse_root(&p, root, s);
        if (r < 0)
                goto fail;
        *ret = TAKE_PTR(s);
        return 0;

fail:
        if (ret_error && p.error)
                *ret_error = TAKE_PTR(p.error);
        free(p.error);
        return r;
}

int kubelet_cpu_state_load(const char *path, KubeletCpuState **ret, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        r = read_full_file(
                path, KUBELET_CPU_MANAGER_STATE_MAX, READ_FULL_REGULAR | READ_FULL_NO_NUL, &text, &len);
        if (r == -ENOENT)
                return r;
        if (r < 0) {
                if (ret_error) {
                        const char *why = r == -EFBIG ? "larger than 1 MiB: not a CPU manager checkpoint"
                                : r == -EBADFD        ? "not a regular file"
                                : r == -EBADMSG       ? "holds a NUL byte: not a CPU manager checkpoint"
                                                      : strerror(-r);

                        if (asprintf(ret_error, "%s: %s", path, why) < 0)
                                *ret_error = NULL;
                }
                return r;
        }
        return kubelet_cpu_state_parse(path, text, len, ret, ret_error);
}

KubeletCpuState *kubelet_cpu_state_free(KubeletCpuState *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_entries; i++)
                assignment_done(&s->entries[i]);
        free(s->entries);
        free(s->policy_name);
        cpuset_done(&s->default_cpus);
        cpuset_done(&s->exclusive);
        free(s);
        return NULL;
}

int kubelet_cpu_state_copy(const KubeletCpuState *s, KubeletCpuState **ret) {
        _cleanup_(kubelet_cpu_state_freep) KubeletCpuState *c = NULL;

        if (!s) {
                *ret = NULL;
                return 0;
        }
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if ((s->policy_name && !(c->policy_name = strdup(s->policy_name))) ||
            cpuset_copy(&c->default_cpus, &s->default_cpus) < 0 ||
            cpuset_copy(&c->exclusive, &s->exclusive) < 0)
                return -ENOMEM;
        if (s->n_entries > 0 && !(c->entries = calloc(s->n_entries, sizeof(*c->entries))))
                return -ENOMEM;
        for (size_t i = 0; i < s->n_entries; i++, c->n_entries++) {
                const KubeletCpuAssignment *a = &s->entries[i];
                KubeletCpuAssignment *b = &c->entries[i];

                if ((a->pod_uid && !(b->pod_uid = strdup(a->pod_uid))) ||
                    !(b->container = strdup(a->container)) || cpuset_copy(&b->cpus, &a->cpus) < 0) {
                        c->n_entries++; /* freed with the rest */
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(c);
        return 0;
}

const CpuSet *kubelet_cpu_state_exclusive(const KubeletCpuState *s) {
        static const CpuSet empty = CPUSET_NULL;

        return s ? &s->exclusive : &empty;
}

int kubelet_cpu_state_describe(const KubeletCpuState *s, const CpuSet *cpus, char **ret) {
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;
        bool first = true;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; s && i < s->n_entries; i++) {
                const KubeletCpuAssignment *a = &s->entries[i];
                _cleanup_free_ char *l = NULL;

                if (cpuset_copy(&x, &a->cpus) < 0)
                        goto oom;
                if (cpus)
                        cpuset_and(&x, cpus);
                if (cpuset_is_empty(&x))
                        continue;
                l = cpuset_to_string(&x);
                if (!l)
                        goto oom;
                if (a->pod_uid)
                        fprintf(f, "%s%s (pod %s container %s)", first ? "" : ", ", l, a->pod_uid,
                                a->container);
                else
                        fprintf(f, "%s%s (container %s)", first ? "" : ", ", l, a->container);
                first = false;
        }
        if (fclose(f) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;

oom:
        fclose(f);
        return -ENOMEM;
}

int kubelet_cpu_state_remove_from(const KubeletCpuState *s, CpuSet *cpus, char **ret_who) {
        _cleanup_cpuset_ CpuSet x = CPUSET_NULL;
        int r;

        if (!s || !cpuset_intersects(cpus, &s->exclusive))
                return 0;
        r = cpuset_copy(&x, cpus);
        if (r < 0)
                return r;
        cpuset_and(&x, &s->exclusive);
        r = kubelet_cpu_state_describe(s, &x, ret_who);
        if (r < 0)
                return r;
        cpuset_andnot(cpus, &s->exclusive);
        return 1;
}
