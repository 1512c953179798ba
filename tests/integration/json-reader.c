/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The integration tests' JSON reader (json-reader.h): a recursive descent over the text. */

#include <stdlib.h>
#include <string.h>

#include "json-reader.h"

Json *json_free(Json *j) {
        if (!j)
                return NULL;
        for (size_t i = 0; i < j->n_items; i++) {
                json_free(j->items[i]);
                if (j->keys)
                        free(j->keys[i]);
        }
        free(j->items);
        free(j->keys);
        free(j->string);
        free(j);
        return NULL;
}

static void skip_ws(const char **s) {
        *s += strspn(*s, " \t\r\n");
}

/* A string literal at *s (which points at the quote). NULL on a syntax error. */
static char *json_parse_string(const char **s) {
        size_t n = 0, size = strlen(*s) + 1;
        char *buf = malloc(size);
        const char *p = *s + 1;

        ck_assert_ptr_nonnull(buf);
        for (;; p++) {
                if (*p == '\0' || (unsigned char)*p < 0x20) {
                        free(buf);
                        return NULL;
                }
                if (*p == '"')
                        break;
                if (*p != '\\') {
                        buf[n++] = *p;
                        continue;
                }
                p++;
                switch (*p) {
                case '"':
                case '\\':
                case '/':
                        buf[n++] = *p;
                        break;
                case 'b':
                        buf[n++] = '\b';
                        break;
                case 'f':
                        buf[n++] = '\f';
                        break;
                case 'n':
                        buf[n++] = '\n';
                        break;
                case 'r':
                        buf[n++] = '\r';
                        break;
                case 't':
                        buf[n++] = '\t';
                        break;
                case 'u': {
                        unsigned v = 0;

                        for (int k = 1; k <= 4; k++) {
                                char c = p[k];

                                if (!strchr("0123456789abcdefABCDEF", c) || c == '\0') {
                                        free(buf);
                                        return NULL;
                                }
                                v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
                        }
                        p += 4;
                        buf[n++] = v < 0x80 ? (char)v : '?'; /* affinityctl escapes only controls */
                        break;
                }
                default:
                        free(buf);
                        return NULL;
                }
        }
        buf[n] = '\0';
        *s = p + 1;
        return buf;
}

static Json *json_parse_value(const char **s, unsigned depth);

static bool json_append(Json *j, char *key, Json *item) {
        Json **items = reallocarray(j->items, j->n_items + 1, sizeof(Json *));
        char **keys = NULL;

        ck_assert_ptr_nonnull(items);
        j->items = items;
        if (j->type == JSON_OBJECT) {
                keys = reallocarray(j->keys, j->n_items + 1, sizeof(char *));
                ck_assert_ptr_nonnull(keys);
                j->keys = keys;
                j->keys[j->n_items] = key;
        }
        j->items[j->n_items++] = item;
        return true;
}

/* An array or object after its opening bracket. */
static Json *json_parse_container(const char **s, JsonType type, unsigned depth) {
        _cleanup_(json_freep) Json *j = calloc(1, sizeof(Json));
        char close = type == JSON_ARRAY ? ']' : '}';

        ck_assert_ptr_nonnull(j);
        j->type = type;
        skip_ws(s);
        if (**s == close) {
                (*s)++;
                return TAKE_PTR(j);
        }
        for (;;) {
                char *key = NULL;
                Json *item;

                skip_ws(s);
                if (type == JSON_OBJECT) {
                        if (**s != '"')
                                return NULL;
                        key = json_parse_string(s);
                        if (!key)
                                return NULL;
                        skip_ws(s);
                        if (**s != ':') {
                                free(key);
                                return NULL;
                        }
                        (*s)++;
                }
                item = json_parse_value(s, depth + 1);
                if (!item) {
                        free(key);
                        return NULL;
                }
                json_append(j, key, item);
                skip_ws(s);
                if (**s == ',') {
                        (*s)++;
                        continue;
                }
                if (**s != close)
                        return NULL;
                (*s)++;
                return TAKE_PTR(j);
        }
}

static Json *json_parse_value(const char **s, unsigned depth) {
        Json *j = NULL;

        if (depth > 64)
                return NULL;
        skip_ws(s);
        switch (**s) {
        case '{':
                (*s)++;
                return json_parse_container(s, JSON_OBJECT, depth);
        case '[':
                (*s)++;
                return json_parse_container(s, JSON_ARRAY, depth);
        case '"': {
                char *str = json_parse_string(s);

                if (!str)
                        return NULL;
                j = calloc(1, sizeof(Json));
                ck_assert_ptr_nonnull(j);
                j->type = JSON_STRING;
                j->string = str;
                return j;
        }
        }
        j = calloc(1, sizeof(Json));
        ck_assert_ptr_nonnull(j);
        if (strncmp(*s, "null", 4) == 0) {
                j->type = JSON_NULL;
                *s += 4;
        } else if (strncmp(*s, "true", 4) == 0) {
                j->type = JSON_BOOL;
                j->boolean = true;
                *s += 4;
        } else if (strncmp(*s, "false", 5) == 0) {
                j->type = JSON_BOOL;
                *s += 5;
        } else {
                char *end = NULL;

                j->type = JSON_NUMBER;
                j->number = strtod(*s, &end);
                if (end == *s || !strchr("-0123456789", **s))
                        return json_free(j);
                *s = end;
        }
        return j;
}

Json *json_parse_document(const char *text) {
        const char *s = text;
        Json *j = json_parse_value(&s, 0);

        ck_assert_msg(j, "not JSON:\n%s", text);
        skip_ws(&s);
        ck_assert_msg(*s == '\0', "more than one JSON document:\n%s", text);
        return j;
}

const Json *jget(const Json *j, const char *key) {
        ck_assert_msg(j && j->type == JSON_OBJECT, "not an object (looking for \"%s\")", key);
        for (size_t i = 0; i < j->n_items; i++)
                if (streq(j->keys[i], key))
                        return j->items[i];
        ck_abort_msg("no member \"%s\"", key);
        return NULL;
}

const char *jstr(const Json *j, const char *key) {
        const Json *v = jget(j, key);

        ck_assert_msg(v->type == JSON_STRING, "\"%s\" is not a string", key);
        return v->string;
}

bool jnull(const Json *j, const char *key) {
        return jget(j, key)->type == JSON_NULL;
}

unsigned jnum(const Json *j, const char *key) {
        const Json *v = jget(j, key);

        ck_assert_msg(v->type == JSON_NUMBER, "\"%s\" is not a number", key);
        return (unsigned)v->number;
}

bool jbool(const Json *j, const char *key) {
        const Json *v = jget(j, key);

        ck_assert_msg(v->type == JSON_BOOL, "\"%s\" is not a boolean", key);
        return v->boolean;
}

const Json *jarray(const Json *j, const char *key) {
        const Json *v = jget(j, key);

        ck_assert_msg(v->type == JSON_ARRAY, "\"%s\" is not an array", key);
        return v;
}

const Json *jfind(const Json *a, const char *key, const char *value) {
        ck_assert_msg(a && a->type == JSON_ARRAY, "not an array (looking for %s \"%s\")", key, value);
        for (size_t i = 0; i < a->n_items; i++) {
                const Json *o = a->items[i];

                if (o->type != JSON_OBJECT)
                        continue;
                for (size_t k = 0; k < o->n_items; k++)
                        if (streq(o->keys[k], key) && o->items[k]->type == JSON_STRING &&
                            streq(o->items[k]->string, value))
                                return o;
        }
        return NULL;
}
