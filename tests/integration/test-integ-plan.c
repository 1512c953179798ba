/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl plan and validate --topology, end to end and offline (no daemon): a
 * configuration directory with a reserve, a gateway on 8 cores near eth0, a spread thread
 * pool, exclusive services and a policy that can't be resolved, planned against the 2-socket
 * corpus machine whose NIC is on node 1 and against this machine. The --json document is
 * parsed (a small JSON reader below) and checked field by field; the human report and the
 * exit codes are checked as a user sees them.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "macro.h"

#define TOPOLOGY_2S "32em64t-2n8c2t-pci-wholeio.xml" /* eth0 on node 1: CPUs 8-15,24-31 */

/* ---- a small JSON reader, enough to check affinityctl's documents ---- */

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
        bool boolean;
        double number;
        char *string; /* JSON_STRING */
        char **keys;  /* JSON_OBJECT: parallel to items */
        Json **items; /* JSON_ARRAY, JSON_OBJECT */
        size_t n_items;
};

static Json *json_free(Json *j) {
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
DEFINE_TRIVIAL_CLEANUP_FUNC(Json *, json_free);

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

/* Parses text, which must be exactly one JSON document (whitespace around it allowed). */
static Json *json_parse_document(const char *text) {
        const char *s = text;
        Json *j = json_parse_value(&s, 0);

        ck_assert_msg(j, "not JSON:\n%s", text);
        skip_ws(&s);
        ck_assert_msg(*s == '\0', "more than one JSON document:\n%s", text);
        return j;
}

/* The member key of object j, asserted present. */
static const Json *jget(const Json *j, const char *key) {
        ck_assert_msg(j && j->type == JSON_OBJECT, "not an object (looking for \"%s\")", key);
        for (size_t i = 0; i < j->n_items; i++)
                if (streq(j->keys[i], key))
                        return j->items[i];
        ck_abort_msg("no member \"%s\"", key);
        return NULL;
}

static const char *jstr(const Json *j, const char *key) {
        const Json *v = jget(j, key);

        ck_assert_msg(v->type == JSON_STRING, "\"%s\" is not a string", key);
        return v->string;
}

static bool jnull(const Json *j, const char *key) {
        return jget(j, key)->type == JSON_NULL;
}

static unsigned jnum(const Json *j, const char *key) {
        const Json *v = jget(j, key);

        ck_assert_msg(v->type == JSON_NUMBER, "\"%s\" is not a number", key);
        return (unsigned)v->number;
}

static const Json *jarray(const Json *j, const char *key) {
        const Json *v = jget(j, key);

        ck_assert_msg(v->type == JSON_ARRAY, "\"%s\" is not an array", key);
        return v;
}

/* The policy named name in the document's "policies". */
static const Json *jpolicy(const Json *doc, const char *name) {
        const Json *policies = jarray(doc, "policies");

        for (size_t i = 0; i < policies->n_items; i++)
                if (streq(jstr(policies->items[i], "name"), name))
                        return policies->items[i];
        ck_abort_msg("no policy \"%s\" in the plan", name);
        return NULL;
}

/* ---- cpu-lists ---- */

/* Parses a cpu-list of plain numbers and ranges into a bit array of 256 CPUs; the count. */
static unsigned cpulist_bits(const char *list, bool bits[static 256]) {
        unsigned n = 0;
        const char *p = list;

        memset(bits, 0, 256 * sizeof(bool));
        while (*p) {
                char *end = NULL;
                unsigned long a = strtoul(p, &end, 10), b = a;

                ck_assert_msg(end != p, "bad cpu-list \"%s\"", list);
                p = end;
                if (*p == '-') {
                        b = strtoul(p + 1, &end, 10);
                        p = end;
                }
                ck_assert(a <= b && b < 256);
                for (unsigned long c = a; c <= b; c++, n++)
                        bits[c] = true;
                if (*p == ',')
                        p++;
        }
        return n;
}

/* ---- the configuration ---- */

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ck_assert_msg(f, "fopen %s: %s", path, strerror(errno));
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

static char *corpus_topology(const char *name) {
        const char *corpus = getenv("AFFINITYD_CORPUS");
        char *p = NULL;

        ck_assert_msg(corpus, "AFFINITYD_CORPUS is not set");
        ck_assert_int_ge(asprintf(&p, "%s/topologies/%s", corpus, name), 0);
        return p;
}

static char *topology_arg(const char *name) {
        _cleanup_free_ char *path = corpus_topology(name);
        char *arg = NULL;

        ck_assert_int_ge(asprintf(&arg, "--topology=%s", path), 0);
        return arg;
}

static char *config_dir_arg(Harness *h) {
        char *arg = NULL;

        ck_assert_int_ge(asprintf(&arg, "--config-dir=%s", harness_config_dir(h)), 0);
        return arg;
}

/* A policy no machine here can have: near a device that doesn't exist. */
static void write_ghost(Harness *h) {
        harness_write_policy(
                h, "40-ghost.yaml",
                "policies:\n"
                "  - name: ghost\n"
                "    match: {comm: gh}\n"
                "    cpus:\n"
                "      near: nosuchdev\n");
}

/* A configuration directory: reserve CPU 0; the scenarios; one policy no machine here can have. */
static void write_config(Harness *h, bool with_ghost) {
        _cleanup_free_ char *settings = NULL;

        harness_remove_policy(h, "00-integ-marker.yaml"); /* no daemon here: no barriers */
        ck_assert_int_ge(asprintf(&settings, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        write_text(settings, "reserve: \"0\"\n");
        harness_write_policy(
                h, "10-gateway.yaml",
                "policies:\n"
                "  - name: gateway\n"
                "    match: {comm: gw}\n"
                "    cpus: {near: eth0, cores: 8, smt: one-per-core, exclusive: true}\n");
        harness_write_policy(
                h, "20-workers.yaml",
                "policies:\n"
                "  - name: workers\n"
                "    match: {comm: wk}\n"
                "    cpus: {packages: \"0\", smt: one-per-core}\n"
                "    threads:\n"
                "      - name: \"pool*\"\n"
                "        cpus: spread\n"
                "      - name: logger\n"
                "        cpus: \"1\"\n");
        harness_write_policy(
                h, "30-latency.yaml",
                "policies:\n"
                "  - name: fast-a\n"
                "    match: {comm: fa}\n"
                "    cpus: {cores: 2, exclusive: true}\n"
                "  - name: fast-b\n"
                "    match: {comm: fb}\n"
                "    cpus: {cores: 1, exclusive: true}\n");
        if (with_ghost)
                write_ghost(h);
}

/* ---- tests ---- */

START_TEST(test_plan_json) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *topo = topology_arg(TOPOLOGY_2S), *cdir = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *t, *gw, *wk, *threads, *spread, *ghost, *fa, *fb;
        bool gw_bits[256], wk_bits[256], fa_bits[256], fb_bits[256];
        unsigned n;
        int r;

        write_config(h, true);
        cdir = config_dir_arg(h);
        r = harness_run_ctl(h, &out, &err, "plan", "--json", cdir, topo, NULL);
        ck_assert_msg(r == 0, "affinityctl plan --json exited %d (pending is not a failure): %s", r, err);
        doc = json_parse_document(out);

        /* The topology, as the corpus index describes the machine. */
        t = jget(doc, "topology");
        ck_assert_uint_eq(jnum(t, "packages"), 2);
        ck_assert_uint_eq(jnum(t, "nodes"), 2);
        ck_assert_uint_eq(jnum(t, "cores"), 16);
        ck_assert_uint_eq(jnum(t, "cpus"), 32);
        ck_assert_str_eq(jstr(t, "online"), "0-31");
        ck_assert_msg(strstr(jstr(t, "summary"), "16 cores"), "summary: %s", jstr(t, "summary"));
        ck_assert_str_eq(jstr(doc, "reserve"), "0");
        ck_assert_uint_eq(jarray(doc, "policies")->n_items, 5);

        /* gateway: 8 CPUs of node 1 (8-15,24-31), 8 distinct cores (a core is N and N+16). */
        gw = jpolicy(doc, "gateway");
        ck_assert(jnull(gw, "error"));
        ck_assert_msg(strstr(jstr(gw, "file"), "10-gateway.yaml"), "file: %s", jstr(gw, "file"));
        ck_assert_uint_eq(jnum(gw, "line"), 2);
        ck_assert_str_eq(jstr(gw, "nodes"), "1");
        ck_assert_uint_eq(cpulist_bits(jstr(gw, "cpus"), gw_bits), 8);
        for (unsigned c = 0; c < 32; c++) {
                if (!gw_bits[c])
                        continue;
                ck_assert_msg(
                        (c >= 8 && c <= 15) || (c >= 24 && c <= 31), "gateway CPU %u not on node 1", c);
                ck_assert_msg(
                        !gw_bits[(c + 16) % 32], "gateway has both SMT siblings %u and %u", c,
                        (c + 16) % 32);
        }
        ck_assert_uint_ge(jarray(gw, "explanation")->n_items, 1);

        /* workers: package 0 (node 0: 0-7,16-23), one PU per core, not the reserve; the pool
         * spreads over exactly those CPUs, each once; logger has its own cpu-list. */
        wk = jpolicy(doc, "workers");
        ck_assert(jnull(wk, "error"));
        n = cpulist_bits(jstr(wk, "cpus"), wk_bits);
        ck_assert_uint_ge(n, 7);
        ck_assert(!wk_bits[0]);
        for (unsigned c = 0; c < 32; c++)
                if (wk_bits[c]) {
                        ck_assert_msg(c <= 7 || (c >= 16 && c <= 23), "workers CPU %u not on package 0", c);
                        ck_assert_msg(!wk_bits[(c + 16) % 32], "workers has both siblings of CPU %u", c);
                }
        threads = jarray(wk, "threads");
        ck_assert_uint_eq(threads->n_items, 2);
        ck_assert_str_eq(jstr(threads->items[0], "name"), "pool*");
        ck_assert(jnull(threads->items[0], "cpus"));
        spread = jarray(threads->items[0], "spread");
        ck_assert_uint_eq(spread->n_items, n);
        for (size_t i = 0; i < spread->n_items; i++) {
                unsigned c = (unsigned)spread->items[i]->number;

                ck_assert_msg(c < 32 && wk_bits[c], "spread CPU %u is not the policy's (or twice)", c);
                wk_bits[c] = false;
        }
        ck_assert_str_eq(jstr(threads->items[1], "name"), "logger");
        ck_assert_str_eq(jstr(threads->items[1], "cpus"), "1");
        ck_assert(jnull(threads->items[1], "spread"));

        /* Exclusive services: whole cores, disjoint from each other and from the gateway. */
        fa = jpolicy(doc, "fast-a");
        fb = jpolicy(doc, "fast-b");
        ck_assert(jnull(fa, "error") && jnull(fb, "error"));
        ck_assert_uint_eq(cpulist_bits(jstr(fa, "cpus"), fa_bits), 4); /* 2 cores, SMT2 */
        ck_assert_uint_eq(cpulist_bits(jstr(fb, "cpus"), fb_bits), 2);
        for (unsigned c = 0; c < 32; c++) {
                ck_assert(!(fa_bits[c] && (fb_bits[c] || gw_bits[c] || c == 0)));
                ck_assert(!(fb_bits[c] && (gw_bits[c] || c == 0)));
                if (fa_bits[c])
                        ck_assert_msg(fa_bits[(c + 16) % 32], "fast-a has CPU %u without its sibling", c);
        }

        /* ghost: pending, with a reason naming the device, and nothing resolved. */
        ghost = jpolicy(doc, "ghost");
        ck_assert(!jnull(ghost, "error"));
        ck_assert_msg(strstr(jstr(ghost, "error"), "nosuchdev"), "reason: %s", jstr(ghost, "error"));
        ck_assert(jnull(ghost, "cpus"));
        ck_assert(jnull(ghost, "nodes"));
}
END_TEST

START_TEST(test_plan_human) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *topo = topology_arg(TOPOLOGY_2S), *cdir = NULL,
                            *at = NULL;
        int r;

        write_config(h, true);
        cdir = config_dir_arg(h);
        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, NULL);
        ck_assert_msg(r == 0, "affinityctl plan exited %d: %s", r, err);

        ck_assert_msg(strstr(out, "Topology: ") && strstr(out, TOPOLOGY_2S), "no topology line:\n%s", out);
        ck_assert_msg(strstr(out, "2 packages, 2 NUMA nodes, 16 cores, 32 CPUs"), "no summary:\n%s", out);
        ck_assert_msg(strstr(out, "Reserve: 0 ("), "no reserve:\n%s", out);
        ck_assert_msg(strstr(out, "\ngateway (") && strstr(out, "(8 CPUs on 8 cores)"), "gateway:\n%s", out);
        ck_assert_msg(strstr(out, "Nodes: 1\n"), "no nodes line:\n%s", out);
        ck_assert_msg(strstr(out, "Why: "), "no explanation:\n%s", out);
        ck_assert_msg(
                strstr(out, "Threads: pool*: spread, one CPU each, in this order: "), "no spread:\n%s", out);
        ck_assert_msg(strstr(out, "logger: 1\n"), "no logger rule:\n%s", out);
        ck_assert_msg(
                strstr(out, "\nghost (") && strstr(out, ") [pending]\n"), "ghost not pending:\n%s", out);
        ck_assert_msg(strstr(out, "Pending: ") && strstr(out, "nosuchdev"), "no pending reason:\n%s", out);
        /* The place of the cause: the cpus: value of 40-ghost.yaml (line 5, column 7). */
        ck_assert_int_ge(asprintf(&at, "At: %s/policy.d/40-ghost.yaml:5:7\n", harness_config_dir(h)), 0);
        ck_assert_msg(strstr(out, at), "no \"%s\" in:\n%s", at, out);
        ck_assert_msg(strstr(out, "5 policies: 4 resolved, 1 pending.\n"), "no summary line:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* This machine, the standard way of naming a config dir. */
        r = harness_run_ctl(h, &out, &err, "plan", cdir, NULL);
        ck_assert_msg(r == 0, "affinityctl plan (this machine) exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "Topology: this machine\n"), "stdout:\n%s", out);
        ck_assert_msg(strstr(out, "\nghost (") && strstr(out, "nosuchdev"), "stdout:\n%s", out);
}
END_TEST

START_TEST(test_plan_invalid) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *topo = topology_arg(TOPOLOGY_2S), *cdir = NULL,
                            *where = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const char *bad;
        int r;

        write_config(h, false);
        bad = harness_write_policy(
                h, "50-bad.yaml",
                "policies:\n"
                "  - name: bad\n"
                "    match: {comm: bad}\n"
                "    cpus:\n"
                "      cores: 0\n"
                "      smt: maybe\n");
        cdir = config_dir_arg(h);

        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, NULL);
        ck_assert_msg(r == 1, "plan of an invalid configuration exited %d (want 1)", r);
        ck_assert_int_ge(asprintf(&where, "%s:5:14: error: cores: must be at least 1", bad), 0);
        ck_assert_msg(strstr(err, where), "stderr does not say \"%s\":\n%s", where, err);
        where = mfree(where);
        ck_assert_int_ge(asprintf(&where, "%s:6:12: error: smt: invalid value \"maybe\"", bad), 0);
        ck_assert_msg(strstr(err, where), "stderr does not say \"%s\":\n%s", where, err);
        ck_assert_msg(strstr(err, "Invalid configuration: 2 errors."), "stderr:\n%s", err);
        ck_assert_msg(!strstr(out, "gateway"), "an invalid configuration was planned:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* --json: still exactly one document, saying why, with the diagnostics. */
        r = harness_run_ctl(h, &out, &err, "--json", "plan", cdir, topo, NULL);
        ck_assert_int_eq(r, 1);
        doc = json_parse_document(out);
        ck_assert_str_eq(jstr(doc, "error"), "invalid configuration");
        ck_assert_uint_eq(jarray(doc, "policies")->n_items, 0);
        ck_assert_uint_eq(jarray(doc, "diagnostics")->n_items, 2);
        ck_assert_str_eq(jstr(jarray(doc, "diagnostics")->items[0], "level"), "error");
        ck_assert_uint_eq(jnum(jarray(doc, "diagnostics")->items[0], "line"), 5);
        ck_assert_uint_eq(jnum(jarray(doc, "diagnostics")->items[0], "column"), 14);
        out = mfree(out);
        err = mfree(err);

        /* validate says the same, as errors. */
        r = harness_run_ctl(h, &out, &err, "validate", cdir, NULL);
        ck_assert_int_eq(r, 1);
        ck_assert_msg(strstr(err, "cores: must be at least 1"), "stderr:\n%s", err);
}
END_TEST

START_TEST(test_validate_topology) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *topo = topology_arg(TOPOLOGY_2S), *cdir = NULL,
                            *where = NULL, *small = topology_arg("24em64t-2n6c2t-pci.xml");
        _cleanup_(json_freep) Json *doc = NULL;
        int r;

        /* Everything resolves on the 2-socket machine with eth0 on node 1. */
        write_config(h, false);
        cdir = config_dir_arg(h);
        r = harness_run_ctl(h, &out, &err, "validate", cdir, topo, NULL);
        ck_assert_msg(r == 0, "validate --topology exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "4 policies: valid, every policy resolved on "), "stdout:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* On the one whose eth0 is on a node of 6 cores, the gateway can't have 8: an error at
         * its cpus: value. */
        r = harness_run_ctl(h, &out, &err, "validate", cdir, small, NULL);
        ck_assert_msg(r == 1, "validate --topology with an unresolvable policy exited %d (want 1)", r);
        ck_assert_int_ge(
                asprintf(
                        &where,
                        "%s/policy.d/10-gateway.yaml:4:11: error: policy \"gateway\" can't be resolved on ",
                        harness_config_dir(h)),
                0);
        ck_assert_msg(strstr(err, where), "stderr does not say \"%s\":\n%s", where, err);
        ck_assert_msg(strstr(err, "but 1 policy can't be resolved on"), "stderr:\n%s", err);
        ck_assert_msg(!strstr(out, "valid"), "stdout claims valid:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* --json: valid false, the error among the diagnostics. */
        r = harness_run_ctl(h, &out, &err, "--json", "validate", cdir, small, NULL);
        ck_assert_int_eq(r, 1);
        doc = json_parse_document(out);
        ck_assert(jget(doc, "valid")->type == JSON_BOOL && !jget(doc, "valid")->boolean);
        ck_assert(!jnull(jpolicy(doc, "gateway"), "pending_reason"));
        out = mfree(out);
        err = mfree(err);

        /* A device no machine has: an error on the corpus topology, only a warning on this
         * machine (where pending is a normal state, retried when devices appear). */
        write_ghost(h);
        r = harness_run_ctl(h, &out, &err, "validate", cdir, topo, NULL);
        ck_assert_int_eq(r, 1);
        ck_assert_msg(
                strstr(err, "40-ghost.yaml:5:7: error: policy \"ghost\" can't be resolved on ") &&
                        strstr(err, "nosuchdev"),
                "stderr:\n%s", err);
        out = mfree(out);
        err = mfree(err);

        /* Users are looked up on this machine, not in the topology: an unknown one is only a
         * warning, even with --topology. */
        harness_write_policy(
                h, "45-nouser.yaml",
                "policies:\n"
                "  - name: nouser\n"
                "    match: {user: nosuchuser-xyz}\n"
                "    cpus: \"1\"\n");
        r = harness_run_ctl(h, &out, &err, "validate", cdir, topo, NULL);
        ck_assert_int_eq(r, 1);
        ck_assert_msg(
                strstr(err,
                       "45-nouser.yaml:2:5: warning: policy \"nouser\" is pending on this machine (users "
                       "are looked up here"),
                "stderr:\n%s", err);
        ck_assert_msg(strstr(err, "but 1 policy can't be resolved on"), "stderr:\n%s", err);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "validate", cdir, NULL);
        ck_assert_msg(r == 0, "validate exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "6 policies: valid"), "stdout:\n%s", out);
        ck_assert_msg(
                strstr(err, "40-ghost.yaml:5:7: warning: policy \"ghost\" is pending on this machine"),
                "stderr:\n%s", err);
}
END_TEST

START_TEST(test_plan_usage) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *cdir = NULL, *file = NULL;
        int r;

        write_config(h, false);
        cdir = config_dir_arg(h);
        ck_assert_int_ge(asprintf(&file, "%s/policy.d/20-workers.yaml", harness_config_dir(h)), 0);

        r = harness_run_ctl(h, &out, &err, "plan", cdir, "--topology=/nonexistent/topology.xml", NULL);
        ck_assert_int_eq(r, 1);
        ck_assert_msg(
                strstr(err, "Failed to load the topology /nonexistent/topology.xml"), "stderr:\n%s", err);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "plan", cdir, "--topology=", NULL);
        ck_assert_int_eq(r, 2);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "plan", cdir, file, NULL);
        ck_assert_int_eq(r, 2);
        ck_assert_msg(strstr(err, "either --config-dir=DIR or PATHs"), "stderr:\n%s", err);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "status", "--topology=x.xml", NULL);
        ck_assert_int_eq(r, 2);
        out = mfree(out);
        err = mfree(err);

        /* PATHs work like validate's: one file planned alone. */
        r = harness_run_ctl(h, &out, &err, "plan", file, NULL);
        ck_assert_msg(r == 0, "plan FILE exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "\nworkers (") && !strstr(out, "\ngateway ("), "stdout:\n%s", out);
        ck_assert_msg(strstr(out, "1 policy: 1 resolved, 0 pending.\n"), "stdout:\n%s", out);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-plan");

        harness_add_test(s, test_plan_json);
        harness_add_test(s, test_plan_human);
        harness_add_test(s, test_plan_invalid);
        harness_add_test(s, test_validate_topology);
        harness_add_test(s, test_plan_usage);
        return harness_main(s);
}
