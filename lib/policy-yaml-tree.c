/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The node tree of the YAML loader: libyaml's event parser read into nodes (scalars, lists,
 * mappings) that keep where each starts and ends, so that every diagnostic can name
 * file:line:column. Only the YAML subset policy-yaml.h describes is read: one document, no
 * anchors, aliases or tags.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "policy-yaml-internal.h"

#define NESTING_MAX 64U /* deepest YAML nesting accepted */

Node *node_free(Node *n) {
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n_children; i++)
                node_free(n->children[i]);
        free(n->children);
        free(n->value);
        free(n);
        return NULL;
}

/* An empty plain scalar, "~" or "null": YAML's "nothing". Quoted "" is an empty string. */
bool node_is_null(const Node *n) {
        if (n->kind != NODE_SCALAR || n->style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        return n->length == 0 || streq(n->value, "~") || streq(n->value, "null") ||
                streq(n->value, "Null") || streq(n->value, "NULL");
}

/* Writes s with control characters escaped (\n, \t, \xNN) into buf (NUL-terminated); the length. */
size_t yaml_escape_into(const char *s, char *buf, size_t size) {
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
const char *node_describe(const Node *n, char *buf, size_t size) {
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
                if (yaml_escape_into(n->value, e, sizeof e) > 40 || strlen(n->value) > 40)
                        snprintf(buf, size, "\"%.37s...\"", e);
                else
                        snprintf(buf, size, "\"%s\"", e);
                return buf;
        }
        }
        return "?";
}

/* The key node named name in mapping n (the first, if repeated), or NULL. */
const Node *mapping_key(const Node *n, const char *name) {
        for (size_t i = 0; i + 1 < n->n_children; i += 2)
                if (n->children[i]->kind == NODE_SCALAR && streq(n->children[i]->value, name))
                        return n->children[i];
        return NULL;
}

/* The value node of key name in mapping n (the first, if repeated), or NULL. */
const Node *mapping_value(const Node *n, const char *name) {
        for (size_t i = 0; i + 1 < n->n_children; i += 2)
                if (n->children[i]->kind == NODE_SCALAR && streq(n->children[i]->value, name))
                        return n->children[i + 1];
        return NULL;
}

/* ---- reading YAML ----------------------------------------------------------------------- */

typedef struct Reader {
        Diagnostics *diag;
        const char *file;
        yaml_parser_t parser;
        const char *text;
        size_t len;
} Reader;

/* An error at line:column (1-based) of the file being read. Returns 0 or -ENOMEM. */
_printf_(4, 5) static int reader_log(Reader *rd, unsigned line, unsigned column, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = diagnostics_addv(rd->diag, DIAGNOSTIC_ERROR, rd->file, line, column, format, ap);
        va_end(ap);
        return r;
}

#define reader_node_error(rd, n, ...) reader_log((rd), (n)->line, (n)->column, __VA_ARGS__)

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
        unsigned line, column;
        int r;

        switch (p->error) {
        case YAML_MEMORY_ERROR:
                return -ENOMEM;
        case YAML_READER_ERROR:
                offset_to_position(rd->text, rd->len, p->problem_offset, &line, &column);
                if (p->problem_value >= 0)
                        r = reader_log(
                                rd, line, column, "invalid input: %s (0x%X)", strna(p->problem),
                                (unsigned)p->problem_value);
                else
                        r = reader_log(rd, line, column, "invalid input: %s", strna(p->problem));
                break;
        default:
                line = (unsigned)p->problem_mark.line + 1;
                column = (unsigned)p->problem_mark.column + 1;
                if (p->problem_mark.index < rd->len && rd->text[p->problem_mark.index] == '\t')
                        /* libyaml's own words ("found character that cannot start any token")
                         * don't say that the character is a tab. */
                        r = reader_log(
                                rd, line, column,
                                "YAML syntax error: tabs are not allowed for indentation in YAML; use "
                                "spaces");
                else if (p->context)
                        r = reader_log(
                                rd, line, column, "YAML syntax error: %s (%s at line %u, column %u)",
                                strna(p->problem), p->context, (unsigned)p->context_mark.line + 1,
                                (unsigned)p->context_mark.column + 1);
                else
                        r = reader_log(rd, line, column, "YAML syntax error: %s", strna(p->problem));
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
                r = reader_node_error(
                        rd, n, "YAML aliases (*%s) are not supported: write the value out",
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
                r = reader_node_error(rd, n, "unexpected YAML event %d", (int)ev->type);
                return r < 0 ? r : -EBADMSG;
        }

        if (anchor) {
                r = reader_node_error(
                        rd, n, "YAML anchors (&%s) are not supported: write the value out", anchor);
                if (r < 0)
                        return r;
        }
        if (tag) {
                r = reader_node_error(rd, n, "YAML tags (%s) are not supported", tag);
                if (r < 0)
                        return r;
        }

        if (n->kind == NODE_SEQUENCE || n->kind == NODE_MAPPING) {
                if (depth >= NESTING_MAX) {
                        r = reader_node_error(rd, n, "nesting deeper than %u levels", NESTING_MAX);
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

int node_tree_read(
        Diagnostics *diag, const char *file, const char *text, size_t len, Node **ret_root,
        yaml_mark_t *ret_second) {
        Reader rd = {};
        int r;

        rd = (Reader){.diag = diag, .file = file, .text = text ?: "", .len = text ? len : 0};
        if (!yaml_parser_initialize(&rd.parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&rd.parser, (const unsigned char *)rd.text, rd.len);
        r = reader_run(&rd, ret_root, ret_second);
        yaml_parser_delete(&rd.parser);
        return r;
}
