/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A small JSON reader for the integration tests, enough to check affinityctl's --json
 * documents field by field: objects, arrays, strings (escapes decoded; \uXXXX beyond ASCII
 * becomes '?', affinityctl escapes only control characters), numbers (as double), true, false,
 * null. A syntax error or a missing member fails the running test (check assertions), so these
 * are only for the process running a test.
 */

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

typedef enum JsonType {
        JSON_NULL,
        JSON_BOOL,
        JSON_NUMBER,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
} JsonType;

typedef struct Json Json;
struct Json {
        JsonType type;
        bool boolean;  /* JSON_BOOL */
        double number; /* JSON_NUMBER */
        char *string;  /* JSON_STRING */
        char **keys;   /* JSON_OBJECT: parallel to items */
        Json **items;  /* JSON_ARRAY, JSON_OBJECT, in document order */
        size_t n_items;
};

/* Frees j and everything below it. Accepts NULL, returns NULL. */
Json *json_free(Json *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(Json *, json_free);

/* Parses text, which must be exactly one JSON document (whitespace around it allowed); fails
 * the test, showing text, when it is not. Returns the tree (caller frees). */
Json *json_parse_document(const char *text);

/* The member key of object j; fails the test when j is not an object or has no such member. */
const Json *jget(const Json *j, const char *key);
/* The string member key (failing the test when it is no string). */
const char *jstr(const Json *j, const char *key);
/* Whether member key (which must exist) is null. */
bool jnull(const Json *j, const char *key);
/* The number member key as unsigned (failing the test when it is no number). */
unsigned jnum(const Json *j, const char *key);
/* The boolean member key (failing the test when it is no boolean). */
bool jbool(const Json *j, const char *key);
/* The array member key (failing the test when it is no array). */
const Json *jarray(const Json *j, const char *key);
/* The first object of array a whose string member key is value, or NULL. */
const Json *jfind(const Json *a, const char *key, const char *value);
