/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests for lib/topology: every hwloc XML file of the corpus of real machines
 * ($AFFINITYD_CORPUS/topologies), synthetic topologies, hand-written XML with the odd cases
 * (no os_index, PUs without a core, offline and disallowed CPUs), and the live machine.
 *
 * The expected values for the corpus are not hard-coded: they are derived independently of
 * hwloc and of lib/topology, by reading the XML's <object> elements with the tiny scanner
 * below (types, os_index, cpuset attributes, nesting), and cross-checked with the counts the
 * corpus documents in topologies/INDEX.md.
 */

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "macro.h"
#include "topology.h"

/* ---- corpus discovery ---- */

static char *corpus_topologies = NULL;
static char **corpus_files = NULL; /* sorted base names of every *.xml */
static size_t n_corpus_files = 0;

static int strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fills corpus_files; exits loudly if the corpus is missing, it is part of the source tree. */
static void corpus_discover(void) {
        const char *corpus = getenv("AFFINITYD_CORPUS");
        DIR *d;
        struct dirent *de;

        if (!corpus || !*corpus) {
                fprintf(stderr, "AFFINITYD_CORPUS is not set (tests/meson.build sets it)\n");
                exit(EXIT_FAILURE);
        }
        if (asprintf(&corpus_topologies, "%s/topologies", corpus) < 0)
                abort();
        d = opendir(corpus_topologies);
        if (!d) {
                fprintf(stderr, "Cannot open the topology corpus %s: %m\n", corpus_topologies);
                exit(EXIT_FAILURE);
        }
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);

                if (l <= 4 || strcmp(de->d_name + l - 4, ".xml") != 0)
                        continue;
                corpus_files = realloc(corpus_files, (n_corpus_files + 1) * sizeof(char *));
                if (!corpus_files)
                        abort();
                corpus_files[n_corpus_files++] = strdup(de->d_name);
        }
        closedir(d);
        if (n_corpus_files == 0) {
                fprintf(stderr, "No *.xml topology in %s\n", corpus_topologies);
                exit(EXIT_FAILURE);
        }
        qsort(corpus_files, n_corpus_files, sizeof(char *), strcmp_ptr);
}

static char *read_file(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t size = 0;

        ck_assert_msg(f, "cannot open %s: %m", path);
        ck_assert_int_ge(getdelim(&buf, &size, '\0', f), 0);
        fclose(f);
        return buf;
}

/* ---- a tiny scanner for hwloc v2 XML: <object> elements only ---- */

typedef struct XmlObject {
        char type[32];
        long os_index; /* -1 when absent */
        CpuSet cpuset, complete;
        int parent;  /* index in objects, -1 for the root */
        int core;    /* nearest Core ancestor, -1 */
        int package; /* nearest Package ancestor, -1 */
} XmlObject;

typedef struct XmlTopology {
        XmlObject *objects;
        size_t n_objects;
        CpuSet root_cpuset, root_complete, root_allowed;
} XmlTopology;

/*
 * "0x0000ffff,0xffffffff": 32-bit words, most significant first, each with its own 0x; hwloc
 * leaves a zero word out ("0x00000011,,0x0" is three words).
 */
static void parse_hwloc_mask(const char *s, size_t len, CpuSet *ret) {
        size_t n_words = 1;
        const char *p = s;

        for (size_t i = 0; i < len; i++)
                if (s[i] == ',')
                        n_words++;
        cpuset_clear(ret);
        for (size_t w = 0; w < n_words; w++) {
                char *end = (char *)p;
                unsigned long v = 0;

                if (*p != ',' && p != s + len) {
                        ck_assert_msg(strncmp(p, "0xf...f", 7) != 0, "infinite mask");
                        ck_assert_msg(
                                strncmp(p, "0x", 2) == 0, "bad hwloc mask word in \"%.*s\"", (int)len, s);
                        v = strtoul(p + 2, &end, 16);
                        ck_assert_msg(end > p + 2, "bad mask \"%.*s\"", (int)len, s);
                }
                ck_assert_msg(*end == ',' || end == s + len, "bad mask \"%.*s\"", (int)len, s);
                for (unsigned b = 0; b < 32; b++)
                        if (v & (1UL << b))
                                ck_assert_int_eq(cpuset_add(ret, (unsigned)((n_words - 1 - w) * 32 + b)), 0);
                p = end + 1;
        }
}

/* Value of attribute name (with the leading blank, so " cpuset=" doesn't match "complete_cpuset="). */
static bool tag_attr(const char *tag, size_t tag_len, const char *name, const char **ret, size_t *ret_len) {
        size_t nl = strlen(name);

        for (const char *p = tag; p + nl < tag + tag_len; p++)
                if (strncmp(p, name, nl) == 0 && p[nl] == '"') {
                        const char *v = p + nl + 1, *e = memchr(v, '"', tag + tag_len - v);

                        ck_assert_ptr_nonnull(e);
                        *ret = v;
                        *ret_len = (size_t)(e - v);
                        return true;
                }
        return false;
}

static void xml_topology_load(const char *path, XmlTopology *ret) {
        _cleanup_free_ char *text = read_file(path);
        int stack[256];
        int depth = 0;
        const char *p = text;

        *ret = (XmlTopology){};
        ck_assert_msg(
                strstr(text, "<topology version=\"2.0\">"),
                "%s: the test's scanner reads hwloc v2 XML only; extend it for other versions", path);

        for (;;) {
                const char *open = strstr(p, "<object "), *close = strstr(p, "</object>");

                if (close && (!open || close < open)) {
                        ck_assert_int_gt(depth, 0);
                        depth--;
                        p = close + strlen("</object>");
                        continue;
                }
                if (!open)
                        break;

                const char *end = strchr(open, '>'), *v;
                size_t tag_len, vl;
                XmlObject *o;
                int parent = depth > 0 ? stack[depth - 1] : -1;

                ck_assert_ptr_nonnull(end);
                tag_len = (size_t)(end - open);
                ret->objects = realloc(ret->objects, (ret->n_objects + 1) * sizeof(XmlObject));
                ck_assert_ptr_nonnull(ret->objects);
                o = &ret->objects[ret->n_objects];
                *o = (XmlObject){.os_index = -1, .parent = parent, .core = -1, .package = -1};

                ck_assert(tag_attr(open, tag_len, " type=", &v, &vl));
                ck_assert_uint_lt(vl, sizeof(o->type));
                memcpy(o->type, v, vl);
                if (tag_attr(open, tag_len, " os_index=", &v, &vl))
                        o->os_index = strtol(v, NULL, 10);
                if (tag_attr(open, tag_len, " cpuset=", &v, &vl))
                        parse_hwloc_mask(v, vl, &o->cpuset);
                if (tag_attr(open, tag_len, " complete_cpuset=", &v, &vl))
                        parse_hwloc_mask(v, vl, &o->complete);
                else
                        ck_assert_int_eq(cpuset_copy(&o->complete, &o->cpuset), 0);
                if (parent >= 0) {
                        const XmlObject *po = &ret->objects[parent];

                        o->core = streq(po->type, "Core") ? parent : po->core;
                        o->package = streq(po->type, "Package") ? parent : po->package;
                } else {
                        ck_assert_str_eq(o->type, "Machine");
                        ck_assert(tag_attr(open, tag_len, " cpuset=", &v, &vl));
                        parse_hwloc_mask(v, vl, &ret->root_cpuset);
                        ck_assert(tag_attr(open, tag_len, " complete_cpuset=", &v, &vl));
                        parse_hwloc_mask(v, vl, &ret->root_complete);
                        ck_assert(tag_attr(open, tag_len, " allowed_cpuset=", &v, &vl));
                        parse_hwloc_mask(v, vl, &ret->root_allowed);
                }

                if (end[-1] != '/') {
                        ck_assert_int_lt(depth, (int)ELEMENTSOF(stack));
                        stack[depth++] = (int)ret->n_objects;
                }
                ret->n_objects++;
                p = end + 1;
        }
        ck_assert_int_eq(depth, 0);
        ck_assert_uint_gt(ret->n_objects, 0);
}

static void xml_topology_done(XmlTopology *x) {
        for (size_t i = 0; i < x->n_objects; i++) {
                cpuset_done(&x->objects[i].cpuset);
                cpuset_done(&x->objects[i].complete);
        }
        free(x->objects);
        cpuset_done(&x->root_cpuset);
        cpuset_done(&x->root_complete);
        cpuset_done(&x->root_allowed);
}

static unsigned xml_count(const XmlTopology *x, const char *type) {
        unsigned n = 0;
        for (size_t i = 0; i < x->n_objects; i++)
                n += streq(x->objects[i].type, type);
        return n;
}

/* ---- INDEX.md: | `file` | fmt | pkgs | NUMA | cores | PUs | SMT | L3 | devices | ---- */

typedef struct IndexRow {
        unsigned packages, nodes, nodes_without_cpus, cores, pus, smt_min, smt_max, l3;
        bool nodes_without_cpus_given;
        char devices[1024]; /* "eth0→N1, ib0→N1", "—" when none */
} IndexRow;

static bool index_lookup(const char *file, IndexRow *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        char *saveptr = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/INDEX.md", corpus_topologies), 0);
        text = read_file(path);
        for (char *line = strtok_r(text, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
                char *cells[10] = {}, *c, *save2 = NULL;
                size_t n = 0;
                char name[256];

                if (strncmp(line, "| `", 3) != 0)
                        continue;
                for (c = strtok_r(line, "|", &save2); c && n < ELEMENTSOF(cells);
                     c = strtok_r(NULL, "|", &save2))
                        cells[n++] = c;
                ck_assert_uint_ge(n, 8);
                if (sscanf(cells[0], " `%255[^`]`", name) != 1 || !streq(name, file))
                        continue;

                *ret = (IndexRow){};
                ck_assert_int_eq(sscanf(cells[2], "%u", &ret->packages), 1);
                ck_assert_int_eq(sscanf(cells[3], "%u", &ret->nodes), 1);
                if (strstr(cells[3], "with empty cpuset")) {
                        ck_assert_int_eq(
                                sscanf(strchr(cells[3], '(') + 1, "%u", &ret->nodes_without_cpus), 1);
                        ret->nodes_without_cpus_given = true;
                }
                ck_assert_int_eq(sscanf(cells[4], "%u", &ret->cores), 1);
                ck_assert_int_eq(sscanf(cells[5], "%u", &ret->pus), 1);
                if (sscanf(cells[6], "%u/%u", &ret->smt_min, &ret->smt_max) != 2) {
                        ck_assert_int_eq(sscanf(cells[6], "%u", &ret->smt_min), 1);
                        ret->smt_max = ret->smt_min;
                }
                ck_assert_int_eq(sscanf(cells[7], "%u", &ret->l3), 1);
                ck_assert_uint_ge(n, 9);
                ck_assert_uint_lt(strlen(cells[8]), sizeof(ret->devices));
                strcpy(ret->devices, cells[8]);
                return true;
        }
        return false;
}

/* ---- invariants that hold for every topology ---- */

/* The summary states the counts, with singular and plural words. */
static void check_summary_numbers(const Topology *t, const char *what) {
        _cleanup_free_ char *summary = NULL, *expect = NULL;
        unsigned p = topology_n_packages(t), n = topology_n_nodes(t), c = topology_n_cores(t),
                 cpus = topology_n_cpus(t), on = cpuset_count(topology_online_cpus(t));

        ck_assert_int_eq(topology_summary(t, &summary), 0);
        ck_assert_int_ge(
                asprintf(
                        &expect, "%u package%s, %u NUMA node%s, %u core%s, %u CPU%s (%u online)", p,
                        p == 1 ? "" : "s", n, n == 1 ? "" : "s", c, c == 1 ? "" : "s", cpus,
                        cpus == 1 ? "" : "s", on),
                0);
        ck_assert_msg(streq(summary, expect), "%s: summary \"%s\", expected \"%s\"", what, summary, expect);
}

static char *fmt(const CpuSet *s) {
        char *r = cpuset_to_string(s);
        ck_assert_ptr_nonnull(r);
        return r; /* leaked on purpose in messages of failing checks only */
}

static void check_invariants(const Topology *t, const char *what) {
        const CpuSet *all = topology_all_cpus(t), *online = topology_online_cpus(t),
                     *allowed = topology_allowed_cpus(t), *nodes = topology_nodes(t);
        _cleanup_cpuset_ CpuSet cores_union = CPUSET_NULL, nodes_union = CPUSET_NULL, sib = CPUSET_NULL,
                                sib2 = CPUSET_NULL, x = CPUSET_NULL, y = CPUSET_NULL, pk_union = CPUSET_NULL;
        /* Sets nest: allowed ⊆ online ⊆ all, and the count is of all. */
        ck_assert_msg(!cpuset_is_empty(online), "%s: no online CPU", what);
        ck_assert_msg(cpuset_is_subset(online, all), "%s: online ⊄ all", what);
        ck_assert_msg(cpuset_is_subset(allowed, online), "%s: allowed ⊄ online", what);
        ck_assert_uint_eq(topology_n_cpus(t), cpuset_count(all));
        ck_assert_uint_eq(cpuset_count(nodes), topology_n_nodes(t));
        ck_assert_uint_ge(topology_n_nodes(t), 1);
        ck_assert_uint_ge(topology_n_packages(t), 1);

        /* Cores: disjoint, every online CPU in exactly one, siblings symmetric. */
        for (unsigned c = 0; c < topology_n_cores(t); c++) {
                const CpuSet *core = topology_core_cpus(t, c);

                ck_assert_ptr_nonnull(core);
                ck_assert_msg(!cpuset_is_empty(core), "%s: core %u has no PU", what, c);
                ck_assert_msg(
                        !cpuset_intersects(&cores_union, core), "%s: core %u overlaps another", what, c);
                ck_assert_int_eq(cpuset_or(&cores_union, core), 0);
        }
        ck_assert_ptr_null(topology_core_cpus(t, topology_n_cores(t)));
        ck_assert_msg(
                cpuset_equal(&cores_union, online), "%s: cores cover %s, online is %s", what,
                fmt(&cores_union), fmt(online));

        CPUSET_FOREACH (cpu, all) {
                int core = topology_core_of_cpu(t, cpu);

                if (!cpuset_contains(online, cpu)) {
                        /* Offline: hwloc has no PU, so no core. */
                        ck_assert_int_eq(core, -ENOENT);
                        ck_assert_int_eq(topology_core_siblings(t, cpu, &sib), -ENOENT);
                        continue;
                }
                ck_assert_msg(core >= 0, "%s: online CPU %d has no core", what, cpu);
                ck_assert_int_eq(topology_core_siblings(t, cpu, &sib), 0);
                ck_assert(cpuset_contains(&sib, cpu));
                ck_assert(cpuset_equal(&sib, topology_core_cpus(t, core)));
                CPUSET_FOREACH (s, &sib) {
                        ck_assert_int_eq(topology_core_of_cpu(t, s), core);
                        ck_assert_int_eq(topology_core_siblings(t, s, &sib2), 0);
                        ck_assert_msg(
                                cpuset_equal(&sib, &sib2), "%s: siblings of %d and %d differ", what, cpu, s);
                }
        }
        ck_assert_int_eq(topology_core_of_cpu(t, CPUSET_MAX_CPUS + 7), -ENOENT);
        ck_assert_int_eq(topology_core_siblings(t, CPUSET_MAX_CPUS + 7, &sib), -ENOENT);
        ck_assert_int_eq(topology_node_of_cpu(t, CPUSET_MAX_CPUS + 7), -ENOENT);

        /*
         * Nodes: the CPU sets of two nodes are disjoint, or equal (memory-side nodes sharing a
         * locality); nodes_of_cpus is the inverse of cpus_of_nodes.
         */
        CPUSET_FOREACH (n, nodes) {
                _cleanup_cpuset_ CpuSet one = CPUSET_NULL, cpus_n = CPUSET_NULL, back = CPUSET_NULL,
                                        sharing = CPUSET_NULL;

                ck_assert_int_eq(cpuset_add(&one, n), 0);
                ck_assert_int_eq(topology_cpus_of_nodes(t, &one, &cpus_n), 0);
                ck_assert_msg(cpuset_is_subset(&cpus_n, all), "%s: node %d has CPUs outside all", what, n);

                CPUSET_FOREACH (m, nodes) {
                        _cleanup_cpuset_ CpuSet other = CPUSET_NULL, cpus_m = CPUSET_NULL;

                        ck_assert_int_eq(cpuset_add(&other, m), 0);
                        ck_assert_int_eq(topology_cpus_of_nodes(t, &other, &cpus_m), 0);
                        ck_assert_msg(
                                cpuset_equal(&cpus_n, &cpus_m) || !cpuset_intersects(&cpus_n, &cpus_m),
                                "%s: nodes %d (%s) and %d (%s) overlap partially", what, n, fmt(&cpus_n), m,
                                fmt(&cpus_m));
                        if (!cpuset_is_empty(&cpus_n) && cpuset_equal(&cpus_n, &cpus_m))
                                ck_assert_int_eq(cpuset_add(&sharing, m), 0);
                }

                ck_assert_int_eq(topology_nodes_of_cpus(t, &cpus_n, &back), 0);
                ck_assert_msg(
                        cpuset_equal(&back, &sharing),
                        "%s: nodes_of_cpus(cpus_of_nodes(%d)) = %s, expected %s", what, n, fmt(&back),
                        fmt(&sharing));
                ck_assert_int_eq(cpuset_or(&nodes_union, &cpus_n), 0);

                CPUSET_FOREACH (cpu, &cpus_n) {
                        int node = topology_node_of_cpu(t, cpu);
                        ck_assert_int_ge(node, 0);
                        ck_assert(cpuset_contains(&sharing, node));
                        ck_assert_int_eq(node, cpuset_next(&sharing, -1)); /* the lowest */
                }
        }
        CPUSET_FOREACH (cpu, all)
                ck_assert_int_eq(topology_node_of_cpu(t, cpu) >= 0, cpuset_contains(&nodes_union, cpu));

        /* cpus_of_nodes(nodes_of_cpus(S)) ⊇ S for what nodes cover; everything, then one CPU. */
        ck_assert_int_eq(topology_nodes_of_cpus(t, online, &x), 0);
        ck_assert_int_eq(topology_cpus_of_nodes(t, &x, &y), 0);
        cpuset_and(&y, online);
        ck_assert_int_eq(cpuset_copy(&x, online), 0);
        cpuset_and(&x, &nodes_union);
        ck_assert(cpuset_equal(&x, &y));
        CPUSET_FOREACH (cpu, online) {
                _cleanup_cpuset_ CpuSet one = CPUSET_NULL;

                ck_assert_int_eq(cpuset_add(&one, cpu), 0);
                ck_assert_int_eq(topology_nodes_of_cpus(t, &one, &x), 0);
                ck_assert_uint_eq(cpuset_count(&x) > 0, cpuset_contains(&nodes_union, cpu));
                if (!cpuset_is_empty(&x)) {
                        ck_assert_int_eq(cpuset_next(&x, -1), topology_node_of_cpu(t, cpu));
                        ck_assert_int_eq(topology_cpus_of_nodes(t, &x, &y), 0);
                        ck_assert(cpuset_contains(&y, cpu));
                }
        }

        /* A node that doesn't exist: -ENOENT, but the others are still filled in. */
        {
                _cleanup_cpuset_ CpuSet req = CPUSET_NULL, got = CPUSET_NULL, want = CPUSET_NULL;
                int first = cpuset_next(nodes, -1);

                ck_assert_int_eq(cpuset_add(&req, first), 0);
                ck_assert_int_eq(topology_cpus_of_nodes(t, &req, &want), 0);
                ck_assert_int_eq(cpuset_add(&req, (unsigned)cpuset_last(nodes) + 1), 0);
                ck_assert_int_eq(topology_cpus_of_nodes(t, &req, &got), -ENOENT);
                ck_assert(cpuset_equal(&got, &want));
                /* In place: ret may be the input set. */
                ck_assert_int_eq(topology_cpus_of_nodes(t, &req, &req), -ENOENT);
                ck_assert(cpuset_equal(&req, &want));
        }

        /* Packages: disjoint, covering the online CPUs; unknown ones are -ENOENT. */
        CPUSET_FOREACH (p, topology_packages(t)) {
                _cleanup_cpuset_ CpuSet one = CPUSET_NULL, cpus_p = CPUSET_NULL;

                ck_assert_int_eq(cpuset_add(&one, p), 0);
                ck_assert_int_eq(topology_cpus_of_packages(t, &one, &cpus_p), 0);
                ck_assert_msg(!cpuset_intersects(&pk_union, &cpus_p), "%s: package %d overlaps", what, p);
                ck_assert_int_eq(cpuset_or(&pk_union, &cpus_p), 0);
        }
        ck_assert_msg(cpuset_is_subset(online, &pk_union), "%s: packages don't cover online CPUs", what);
        check_summary_numbers(t, what);
        {
                _cleanup_cpuset_ CpuSet req = CPUSET_NULL, got = CPUSET_NULL;
                ck_assert_int_eq(cpuset_add(&req, (unsigned)cpuset_last(topology_packages(t)) + 1), 0);
                ck_assert_int_eq(topology_cpus_of_packages(t, &req, &got), -ENOENT);
                ck_assert(cpuset_is_empty(&got));
        }
}

/* Cache domains partition the online CPUs along cores; numbered by lowest CPU. */
static void check_cache_domains(const Topology *t, const char *what) {
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL;
        int last_first = -1;

        ck_assert_uint_ge(topology_n_cache_domains(t), 1);
        for (unsigned d = 0; d < topology_n_cache_domains(t); d++) {
                const CpuSet *c = topology_cache_domain_cpus(t, d);

                ck_assert_ptr_nonnull(c);
                ck_assert_ptr_nonnull(topology_cache_domain_name(t, d));
                ck_assert_msg(!cpuset_intersects(&seen, c), "%s: domain %u overlaps another", what, d);
                ck_assert_int_eq(cpuset_or(&seen, c), 0);
                ck_assert_msg(cpuset_next(c, -1) > last_first, "%s: domain %u out of order", what, d);
                last_first = cpuset_next(c, -1);
        }
        ck_assert_ptr_null(topology_cache_domain_cpus(t, topology_n_cache_domains(t)));
        ck_assert_ptr_null(topology_cache_domain_name(t, topology_n_cache_domains(t)));
        ck_assert_int_eq(topology_cache_domain_of_core(t, topology_n_cores(t)), -ENOENT);

        for (unsigned c = 0; c < topology_n_cores(t); c++) {
                int d = topology_cache_domain_of_core(t, c);

                ck_assert_int_ge(d, 0);
                ck_assert_msg(
                        cpuset_is_subset(
                                topology_core_cpus(t, c), topology_cache_domain_cpus(t, (unsigned)d)),
                        "%s: core %u (%s) is not within its domain %d", what, c,
                        fmt(topology_core_cpus(t, c)), d);
        }
        ck_assert(cpuset_is_subset(topology_online_cpus(t), &seen));
}

/* CPU kinds are disjoint and made of existing CPUs. */
static void check_cpu_kinds(const Topology *t, const char *what) {
        _cleanup_cpuset_ CpuSet seen = CPUSET_NULL, k = CPUSET_NULL;

        for (unsigned i = 0; i < topology_n_cpu_kinds(t); i++) {
                ck_assert_int_eq(topology_cpu_kind(t, i, &k, NULL), 0);
                ck_assert_msg(!cpuset_is_empty(&k), "%s: kind %u is empty", what, i);
                ck_assert(cpuset_is_subset(&k, topology_all_cpus(t)));
                ck_assert(!cpuset_intersects(&seen, &k));
                ck_assert_int_eq(cpuset_or(&seen, &k), 0);
        }
        ck_assert_int_eq(topology_cpu_kind(t, topology_n_cpu_kinds(t), &k, NULL), -ENOENT);
        if (topology_n_cpu_kinds(t) == 0)
                ck_assert(!topology_cpu_kinds_ranked(t));
}

/* "eth0→N1, ib0→N1" / "enp3s0→N0,4, enp4s0→N0,4": each device resolves to those nodes. */
static void check_index_devices(const Topology *t, const char *what, const char *devices) {
        const char *arrow = "→";
        const char *p = devices;
        unsigned n = 0;

        while ((p = strstr(p, arrow))) {
                _cleanup_cpuset_ CpuSet want_nodes = CPUSET_NULL, want_cpus = CPUSET_NULL,
                                        cpus = CPUSET_NULL, nodes = CPUSET_NULL;
                const char *start = p, *q = p + strlen(arrow);
                const char *source = NULL;
                char name[64], list[64];
                size_t l;

                while (start > devices && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
                        start--;
                ck_assert_uint_lt((size_t)(p - start), sizeof(name));
                memcpy(name, start, (size_t)(p - start));
                name[p - start] = '\0';
                ck_assert_int_eq(*q, 'N');
                q++;
                l = strspn(q, "0123456789,");
                ck_assert_uint_lt(l, sizeof(list));
                memcpy(list, q, l);
                list[l] = '\0';
                ck_assert_int_eq(
                        cpuset_parse_list(list, &want_nodes, NULL), 0); /* a trailing "," is ignored */
                ck_assert_int_eq(topology_cpus_of_nodes(t, &want_nodes, &want_cpus), 0);

                ck_assert_msg(
                        topology_device_locality(t, name, &cpus, &nodes, &source) == TOPOLOGY_LOCALITY_NODES,
                        "%s: device %s has no locality", what, name);
                ck_assert_str_eq(source, "hwloc");
                ck_assert_msg(
                        cpuset_equal(&nodes, &want_nodes), "%s: %s on nodes %s, INDEX.md says %s", what,
                        name, fmt(&nodes), list);
                ck_assert_msg(cpuset_equal(&cpus, &want_cpus), "%s: %s CPUs %s", what, name, fmt(&cpus));
                n++;
                p = q;
        }
        if (!strstr(devices, "—"))
                ck_assert_msg(n > 0, "%s: no device parsed from \"%s\"", what, devices);
}

/* ---- the corpus ---- */

START_TEST(test_corpus_file) {
        const char *file = corpus_files[_i];
        _cleanup_free_ char *path = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        XmlTopology x;
        IndexRow row;
        _cleanup_cpuset_ CpuSet expect_allowed = CPUSET_NULL, covered = CPUSET_NULL, nodes = CPUSET_NULL,
                                packages = CPUSET_NULL;
        unsigned n_cores = 0, smt_min = UINT_MAX, smt_max = 0, nodes_without_cpus = 0;

        ck_assert_int_ge(asprintf(&path, "%s/%s", corpus_topologies, file), 0);
        ck_assert_msg(topology_load_xml(path, &t) == 0, "%s: failed to load", file);
        check_invariants(t, file);

        /* Expectations read from the XML text itself. */
        xml_topology_load(path, &x);

        ck_assert_msg(
                topology_n_packages(t) == xml_count(&x, "Package"), "%s: %u packages, XML has %u", file,
                topology_n_packages(t), xml_count(&x, "Package"));
        ck_assert_msg(
                topology_n_nodes(t) == xml_count(&x, "NUMANode"), "%s: %u nodes, XML has %u", file,
                topology_n_nodes(t), xml_count(&x, "NUMANode"));
        for (size_t i = 0; i < x.n_objects; i++)
                if (streq(x.objects[i].type, "Core") ||
                    (streq(x.objects[i].type, "PU") && x.objects[i].core < 0))
                        n_cores++;
        ck_assert_msg(
                topology_n_cores(t) == n_cores, "%s: %u cores, XML has %u", file, topology_n_cores(t),
                n_cores);
        ck_assert_msg(cpuset_equal(topology_all_cpus(t), &x.root_complete), "%s: all CPUs", file);
        ck_assert_msg(cpuset_equal(topology_online_cpus(t), &x.root_cpuset), "%s: online CPUs", file);
        ck_assert_int_eq(cpuset_copy(&expect_allowed, &x.root_allowed), 0);
        cpuset_and(&expect_allowed, &x.root_cpuset);
        ck_assert_msg(cpuset_equal(topology_allowed_cpus(t), &expect_allowed), "%s: allowed CPUs", file);
        ck_assert_uint_eq(topology_n_cpus(t), cpuset_count(&x.root_complete));
        ck_assert_uint_eq(cpuset_count(topology_online_cpus(t)), xml_count(&x, "PU"));

        for (size_t i = 0; i < x.n_objects; i++) {
                const XmlObject *o = &x.objects[i];
                _cleanup_cpuset_ CpuSet one = CPUSET_NULL, got = CPUSET_NULL, want = CPUSET_NULL;

                if (streq(o->type, "NUMANode")) {
                        /* Every corpus node has an os_index; the fallback is tested by hand below. */
                        ck_assert_msg(o->os_index >= 0, "%s: NUMANode without os_index", file);
                        ck_assert_int_eq(cpuset_add(&nodes, o->os_index), 0);
                        ck_assert_int_eq(cpuset_add(&one, o->os_index), 0);
                        ck_assert_int_eq(topology_cpus_of_nodes(t, &one, &got), 0);
                        ck_assert_msg(
                                cpuset_equal(&got, &o->complete), "%s: node %ld has %s, XML says %s", file,
                                o->os_index, fmt(&got), fmt(&o->complete));
                        ck_assert_int_eq(cpuset_or(&covered, &o->complete), 0);
                        nodes_without_cpus += cpuset_is_empty(&o->complete);
                } else if (streq(o->type, "Package")) {
                        ck_assert_msg(o->os_index >= 0, "%s: Package without os_index", file);
                        ck_assert_int_eq(cpuset_add(&packages, o->os_index), 0);
                        ck_assert_int_eq(cpuset_add(&one, o->os_index), 0);
                        ck_assert_int_eq(topology_cpus_of_packages(t, &one, &got), 0);
                        ck_assert_msg(
                                cpuset_is_subset(&o->complete, &got), "%s: package %ld has %s, XML says %s",
                                file, o->os_index, fmt(&got), fmt(&o->complete));
                        /* Several packages may share a number; the union of those is returned. */
                        for (size_t j = 0; j < x.n_objects; j++)
                                if (streq(x.objects[j].type, "Package") &&
                                    x.objects[j].os_index == o->os_index)
                                        ck_assert_int_eq(cpuset_or(&want, &x.objects[j].complete), 0);
                        ck_assert(cpuset_equal(&got, &want));
                } else if (streq(o->type, "PU")) {
                        unsigned smt = 0;
                        int lowest_node = -ENOENT;

                        ck_assert_msg(o->os_index >= 0, "%s: PU without os_index", file);
                        /* Siblings: the PUs under the same Core element. */
                        for (size_t j = 0; j < x.n_objects; j++)
                                if (streq(x.objects[j].type, "PU") &&
                                    (o->core >= 0 ? x.objects[j].core == o->core : j == i))
                                        ck_assert_int_eq(cpuset_add(&want, x.objects[j].os_index), 0);
                        ck_assert_int_eq(topology_core_siblings(t, o->os_index, &got), 0);
                        ck_assert_msg(
                                cpuset_equal(&got, &want), "%s: siblings of CPU %ld are %s, XML says %s",
                                file, o->os_index, fmt(&got), fmt(&want));
                        smt = cpuset_count(&want);
                        smt_min = MIN(smt_min, smt);
                        smt_max = MAX(smt_max, smt);
                        /* Its node: the lowest numbered NUMANode whose cpuset holds it. */
                        for (size_t j = 0; j < x.n_objects; j++)
                                if (streq(x.objects[j].type, "NUMANode") &&
                                    cpuset_contains(&x.objects[j].complete, o->os_index) &&
                                    (lowest_node < 0 || x.objects[j].os_index < lowest_node))
                                        lowest_node = (int)x.objects[j].os_index;
                        ck_assert_msg(
                                topology_node_of_cpu(t, o->os_index) == lowest_node,
                                "%s: CPU %ld on node %d, XML says %d", file, o->os_index,
                                topology_node_of_cpu(t, o->os_index), lowest_node);
                        /* Its package: the enclosing Package element's. */
                        if (o->package >= 0) {
                                _cleanup_cpuset_ CpuSet pk = CPUSET_NULL, pcpus = CPUSET_NULL;
                                ck_assert_int_eq(cpuset_add(&pk, x.objects[o->package].os_index), 0);
                                ck_assert_int_eq(topology_cpus_of_packages(t, &pk, &pcpus), 0);
                                ck_assert(cpuset_contains(&pcpus, o->os_index));
                        }
                }
        }
        ck_assert_msg(cpuset_equal(topology_nodes(t), &nodes), "%s: node numbers", file);
        ck_assert_msg(cpuset_equal(topology_packages(t), &packages), "%s: package numbers", file);
        CPUSET_FOREACH (cpu, topology_all_cpus(t))
                ck_assert_msg(
                        (topology_node_of_cpu(t, cpu) >= 0) == cpuset_contains(&covered, cpu),
                        "%s: CPU %d NUMA coverage differs from the XML", file, cpu);

        /* The counts the corpus documents. */
        ck_assert_msg(index_lookup(file, &row), "%s is not described in topologies/INDEX.md", file);
        ck_assert_uint_eq(topology_n_packages(t), row.packages);
        ck_assert_uint_eq(topology_n_nodes(t), row.nodes);
        ck_assert_uint_eq(topology_n_cores(t), row.cores);
        ck_assert_uint_eq(cpuset_count(topology_online_cpus(t)), row.pus);
        ck_assert_uint_eq(smt_min, row.smt_min);
        ck_assert_uint_eq(smt_max, row.smt_max);
        if (row.nodes_without_cpus_given)
                ck_assert_uint_eq(nodes_without_cpus, row.nodes_without_cpus);

        /* Cache domains: the L3 caches when the XML has some (as many as INDEX.md says). */
        check_cache_domains(t, file);
        ck_assert_uint_eq(xml_count(&x, "L3Cache"), row.l3);
        if (row.l3 > 0) {
                ck_assert_uint_eq(topology_n_cache_domains(t), row.l3);
                for (unsigned d = 0; d < topology_n_cache_domains(t); d++) {
                        bool found = false;

                        ck_assert_msg(
                                strncmp(topology_cache_domain_name(t, d), "L3 #", 4) == 0,
                                "%s: domain %u is %s", file, d, topology_cache_domain_name(t, d));
                        /* The CPUs of one L3Cache element of the XML. */
                        for (size_t i = 0; i < x.n_objects && !found; i++)
                                found = streq(x.objects[i].type, "L3Cache") &&
                                        cpuset_equal(
                                                &x.objects[i].complete, topology_cache_domain_cpus(t, d));
                        ck_assert_msg(
                                found, "%s: domain %u (%s) is no L3 of the XML", file, d,
                                fmt(topology_cache_domain_cpus(t, d)));
                }
        } else
                for (unsigned d = 0; d < topology_n_cache_domains(t); d++)
                        ck_assert_msg(
                                strncmp(topology_cache_domain_name(t, d), "package ", 8) == 0,
                                "%s: without L3, domain %u is %s, not a package", file, d,
                                topology_cache_domain_name(t, d));

        /* CPU kinds: one per <cpukind> element, disjoint. */
        check_cpu_kinds(t, file);
        {
                _cleanup_free_ char *text = read_file(path);
                unsigned n = 0;

                for (const char *q = text; (q = strstr(q, "<cpukind ")); q++)
                        n++;
                ck_assert_uint_eq(topology_n_cpu_kinds(t), n);
        }

        /* Every network device INDEX.md lists lands on the NUMA node(s) it says. */
        check_index_devices(t, file, row.devices);

        xml_topology_done(&x);
}
END_TEST

/*
 * Hand-checked facts of a few corpus files, read off `lstopo-no-graphics -p -i FILE` and the
 * XML: the numbering quirks the code must keep as OS numbers.
 */
START_TEST(test_corpus_hand_checked) {
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL, *s = NULL;
        _cleanup_(topology_freep) Topology *lassen = NULL, *amd = NULL, *knl = NULL, *intel = NULL;
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL, got = CPUSET_NULL, expect = CPUSET_NULL;

        ck_assert_int_ge(asprintf(&p1, "%s/coral-lassen.xml", corpus_topologies), 0);
        ck_assert_int_ge(asprintf(&p2, "%s/16amd64-8n2c-cpusets.xml", corpus_topologies), 0);
        ck_assert_int_ge(asprintf(&p3, "%s/topo.knl05_v2_4.xml", corpus_topologies), 0);
        ck_assert_int_ge(asprintf(&p4, "%s/24em64t-2n6c2t-pci.xml", corpus_topologies), 0);
        ck_assert_int_eq(topology_load_xml(p1, &lassen), 0);
        ck_assert_int_eq(topology_load_xml(p2, &amd), 0);
        ck_assert_int_eq(topology_load_xml(p3, &knl), 0);
        ck_assert_int_eq(topology_load_xml(p4, &intel), 0);

        /* POWER9 Lassen: nodes and packages 0 and 8; CPUs 0-7 and 88-95 absent (offline). */
        ck_assert_int_eq(cpuset_parse_list("0,8", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_nodes(lassen), &expect));
        ck_assert(cpuset_equal(topology_packages(lassen), &expect));
        ck_assert_int_eq(cpuset_parse_list("8-87,96-175", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_online_cpus(lassen), &expect));
        ck_assert_uint_eq(topology_n_cpus(lassen), 176);
        ck_assert_int_eq(topology_core_siblings(lassen, 9, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("8-11", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_node_of_cpu(lassen, 100), 8);
        ck_assert_int_eq(topology_node_of_cpu(lassen, 3), 0); /* offline, but node 0's */
        ck_assert_int_eq(topology_summary(lassen, &s), 0);
        ck_assert_str_eq(s, "2 packages, 2 NUMA nodes, 40 cores, 176 CPUs (160 online)");
        s = mfree(s);

        /* 16amd64: CPUs 0-1 and 12-15 sit in packages 0, 6 and 7 that no NUMA node covers. */
        ck_assert_int_eq(topology_node_of_cpu(amd, 0), -ENOENT);
        ck_assert_int_eq(topology_node_of_cpu(amd, 12), -ENOENT);
        ck_assert_int_eq(topology_node_of_cpu(amd, 5), 2);
        ck_assert_int_eq(cpuset_parse_list("1-5", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_nodes(amd), &expect));
        ck_assert_int_eq(cpuset_parse_list("0-3,6-7", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_packages(amd), &expect));
        ck_assert_int_eq(cpuset_parse_list("4", &set, NULL), 0);
        ck_assert_int_eq(topology_cpus_of_nodes(amd, &set, &got), 0); /* memory only */
        ck_assert(cpuset_is_empty(&got));
        ck_assert_int_eq(cpuset_parse_list("6", &set, NULL), 0);
        ck_assert_int_eq(topology_cpus_of_packages(amd, &set, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("12-13", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(cpuset_parse_list("0-15", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_all_cpus(amd), &expect));

        /* Xeon Phi: MCDRAM node 4 shares node 0's CPUs; siblings are 64 apart. */
        ck_assert_int_eq(cpuset_parse_list("0", &set, NULL), 0);
        ck_assert_int_eq(topology_cpus_of_nodes(knl, &set, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("0-15,64-79,128-143,192-207", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_nodes_of_cpus(knl, &got, &set), 0);
        ck_assert_int_eq(cpuset_parse_list("0,4", &expect, NULL), 0);
        ck_assert(cpuset_equal(&set, &expect));
        ck_assert_int_eq(topology_node_of_cpu(knl, 200), 0);
        ck_assert_int_eq(topology_core_siblings(knl, 65, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("1,65,129,193", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));

        /* 2-socket Westmere: nodes interleave even and odd CPUs; siblings 12 apart. */
        ck_assert_int_eq(cpuset_parse_list("1", &set, NULL), 0);
        ck_assert_int_eq(topology_cpus_of_nodes(intel, &set, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("1,3,5,7,9,11,13,15,17,19,21,23", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_core_siblings(intel, 0, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("0,12", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_summary(intel, &s), 0);
        ck_assert_str_eq(s, "2 packages, 2 NUMA nodes, 12 cores, 24 CPUs (24 online)");
}
END_TEST

/*
 * Cache domains, CPU kinds and device locality of corpus files, read off
 * `lstopo-no-graphics -p -i FILE` and the XML by hand.
 */
START_TEST(test_corpus_domains_kinds_devices) {
        _cleanup_(topology_freep) Topology *epyc = NULL, *w = NULL, *amd = NULL, *rpl = NULL, *knl = NULL;
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL, *p5 = NULL;
        _cleanup_cpuset_ CpuSet got = CPUSET_NULL, nodes = CPUSET_NULL, expect = CPUSET_NULL;
        const char *type = NULL, *source = NULL;

        ck_assert_int_ge(asprintf(&p1, "%s/AMD-17h-Zen-2xEpyc-7451.xml", corpus_topologies), 0);
        ck_assert_int_ge(asprintf(&p2, "%s/32em64t-2n8c2t-pci-wholeio.xml", corpus_topologies), 0);
        ck_assert_int_ge(asprintf(&p3, "%s/16amd64-8n2c-cpusets.xml", corpus_topologies), 0);
        ck_assert_int_ge(asprintf(&p4, "%s/Intel-RaptorLake-Corei7-1370P.xml", corpus_topologies), 0);
        ck_assert_int_ge(asprintf(&p5, "%s/topo.knl05_v2_4.xml", corpus_topologies), 0);
        ck_assert_int_eq(topology_load_xml(p1, &epyc), 0);
        ck_assert_int_eq(topology_load_xml(p2, &w), 0);
        ck_assert_int_eq(topology_load_xml(p3, &amd), 0);
        ck_assert_int_eq(topology_load_xml(p4, &rpl), 0);
        ck_assert_int_eq(topology_load_xml(p5, &knl), 0);

        /* EPYC 7451: 16 L3 caches of 3 cores; node N holds L3 #2N (CPUs 6N..6N+2 and +48) and #2N+1. */
        ck_assert_uint_eq(topology_n_cache_domains(epyc), 16);
        ck_assert_str_eq(topology_cache_domain_name(epyc, 0), "L3 #0");
        ck_assert_int_eq(cpuset_parse_list("0-2,48-50", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_cache_domain_cpus(epyc, 0), &expect));
        ck_assert_str_eq(topology_cache_domain_name(epyc, 3), "L3 #3");
        ck_assert_int_eq(cpuset_parse_list("9-11,57-59", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_cache_domain_cpus(epyc, 3), &expect));
        ck_assert_int_eq(topology_cache_domain_of_core(epyc, (unsigned)topology_core_of_cpu(epyc, 61)), 4);
        ck_assert_int_eq(topology_cache_domain_of_core(epyc, (unsigned)topology_core_of_cpu(epyc, 47)), 15);

        /* 2-socket Sandy Bridge: one L3 per package; eth0 (PCI 81:00.0) and ib0 on node 1. */
        ck_assert_uint_eq(topology_n_cache_domains(w), 2);
        ck_assert_str_eq(topology_cache_domain_name(w, 1), "L3 #1");
        ck_assert_int_eq(cpuset_parse_list("8-15,24-31", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_cache_domain_cpus(w, 1), &expect));
        ck_assert_int_eq(
                topology_device_locality(w, "eth0", &got, &nodes, &source), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_str_eq(source, "hwloc");
        ck_assert_int_eq(cpuset_parse_list("1", &expect, NULL), 0);
        ck_assert(cpuset_equal(&nodes, &expect));
        /* By PCI address, long and short, either case: node 1 (PCI 81:00.1 is eth1). */
        ck_assert_int_eq(cpuset_parse_list("8-15,24-31", &expect, NULL), 0);
        ck_assert_int_eq(
                topology_device_locality(w, "0000:81:00.1", &got, NULL, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_device_locality(w, "81:00.0", &got, NULL, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(
                topology_device_locality(w, "0000:81:00.0", &got, NULL, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));
        /* The RDMA device hwloc lists beside ib0. */
        ck_assert_int_eq(topology_device_locality(w, "mlx5_0", &got, NULL, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));
        /* Not there; a disk is not a network device; an XML file has no sysfs fallback. */
        ck_assert_int_eq(topology_device_locality(w, "eth9", &got, &nodes, &source), -ENODEV);
        ck_assert_int_eq(topology_device_locality(w, "sda", &got, NULL, NULL), -ENODEV);
        ck_assert_int_eq(topology_device_locality(w, "0000:81:00.7", &got, NULL, NULL), -ENODEV);
        ck_assert_int_eq(topology_device_locality(w, "81:00", &got, NULL, NULL), -ENODEV);
        ck_assert_int_eq(topology_device_locality(w, "", &got, NULL, NULL), -EINVAL);
        ck_assert_int_eq(cpuset_parse_list("8-15,24-31", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect)); /* untouched by the failures */

        /* 16amd64: no L3 at all: each package is a domain (package 2 holds only CPU 5). */
        ck_assert_uint_eq(topology_n_cache_domains(amd), 6);
        ck_assert_str_eq(topology_cache_domain_name(amd, 0), "package 0");
        ck_assert_str_eq(topology_cache_domain_name(amd, 2), "package 2");
        ck_assert_int_eq(cpuset_parse_list("5", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_cache_domain_cpus(amd, 2), &expect));
        ck_assert_str_eq(topology_cache_domain_name(amd, 5), "package 7");

        /*
         * Raptor Lake i7-1370P: the XML ranks the kinds: IntelAtom (E-cores, CPUs 12-19) with
         * efficiency 0 and IntelCore (P-cores, CPUs 0-11, SMT2) with 1; one L3 for everything.
         */
        ck_assert_uint_eq(topology_n_cpu_kinds(rpl), 2);
        ck_assert(topology_cpu_kinds_ranked(rpl));
        ck_assert_int_eq(topology_cpu_kind(rpl, 0, &got, &type), 0);
        ck_assert_int_eq(cpuset_parse_list("12-19", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_str_eq(type, "IntelAtom");
        ck_assert_int_eq(topology_cpu_kind(rpl, 1, &got, &type), 0);
        ck_assert_int_eq(cpuset_parse_list("0-11", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_str_eq(type, "IntelCore");
        ck_assert_uint_eq(topology_n_cache_domains(rpl), 1);

        /* Xeon Phi: one kind of all 256 CPUs, no L3 (one package: one domain); NICs on nodes 0 and 4. */
        ck_assert_uint_eq(topology_n_cpu_kinds(knl), 1);
        ck_assert(topology_cpu_kinds_ranked(knl));
        ck_assert_uint_eq(topology_n_cache_domains(knl), 1);
        ck_assert_str_eq(topology_cache_domain_name(knl, 0), "package 0");
        ck_assert_int_eq(
                topology_device_locality(knl, "enp4s0", &got, &nodes, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert_int_eq(cpuset_parse_list("0-15,64-79,128-143,192-207", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(cpuset_parse_list("0,4", &expect, NULL), 0);
        ck_assert(cpuset_equal(&nodes, &expect));
}
END_TEST

/* Makes dir/rel (and its parents) a directory. */
static void mkdir_p(const char *dir, const char *rel) {
        _cleanup_free_ char *path = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, rel), 0);
        for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void write_at(const char *dir, const char *rel, const char *text) {
        _cleanup_free_ char *path = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, rel), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

static void symlink_at(const char *dir, const char *target, const char *rel) {
        _cleanup_free_ char *path = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, rel), 0);
        ck_assert_int_eq(symlink(target, path), 0);
}

/*
 * The sysfs fallback, on a fixture tree shaped like the kernel's: /sys/class/net/DEV/device
 * links into /sys/devices, PCI functions have numa_node and local_cpulist, a virtio device
 * has neither (its PCI parent does), a virtual interface has no device link.
 * The topology is the 2-socket file (node 0 = CPUs 0-7,16-23, node 1 = 8-15,24-31).
 */
START_TEST(test_device_sysfs) {
        char dir[] = "/tmp/test-topology-sysfs-XXXXXX";
        _cleanup_free_ char *xml = NULL, *cmd = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_cpuset_ CpuSet got = CPUSET_NULL, nodes = CPUSET_NULL, expect = CPUSET_NULL,
                                none = CPUSET_NULL;
        const char *source = NULL;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        mkdir_p(dir, "sys/devices/pci0000:00/0000:00:05.0/virtio3");
        write_at(dir, "sys/devices/pci0000:00/0000:00:05.0/numa_node", "1\n");
        write_at(dir, "sys/devices/pci0000:00/0000:00:05.0/local_cpulist", "8-15,24-31\n");
        mkdir_p(dir, "sys/devices/pci0000:00/0000:00:06.0");
        write_at(dir, "sys/devices/pci0000:00/0000:00:06.0/numa_node", "-1\n");
        write_at(dir, "sys/devices/pci0000:00/0000:00:06.0/local_cpulist", "0-31\n");
        mkdir_p(dir, "sys/devices/pci0000:00/0000:00:07.0");
        write_at(dir, "sys/devices/pci0000:00/0000:00:07.0/local_cpulist", "4-5\n");
        mkdir_p(dir, "sys/devices/pci0000:00/0000:00:08.0");
        write_at(dir, "sys/devices/pci0000:00/0000:00:08.0/numa_node", "7\n");
        write_at(dir, "sys/devices/pci0000:00/0000:00:08.0/local_cpulist", "12-13\n");
        mkdir_p(dir, "sys/devices/pci0000:5e/0000:5e:00.0");
        write_at(dir, "sys/devices/pci0000:5e/0000:5e:00.0/numa_node", "0\n");
        mkdir_p(dir, "sys/bus/pci/devices");
        symlink_at(dir, "../../../devices/pci0000:5e/0000:5e:00.0", "sys/bus/pci/devices/0000:5e:00.0");
        const char *links[][2] = {
                {"eth9", "../../../devices/pci0000:00/0000:00:05.0"},
                {"ens5", "../../../devices/pci0000:00/0000:00:05.0/virtio3"},
                {"ethm1", "../../../devices/pci0000:00/0000:00:06.0"},
                {"ethl", "../../../devices/pci0000:00/0000:00:07.0"},
                {"eth7n", "../../../devices/pci0000:00/0000:00:08.0"},
        };
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                _cleanup_free_ char *d = NULL, *l = NULL;

                ck_assert_int_ge(asprintf(&d, "sys/class/net/%s", links[i][0]), 0);
                ck_assert_int_ge(asprintf(&l, "sys/class/net/%s/device", links[i][0]), 0);
                mkdir_p(dir, d);
                symlink_at(dir, links[i][1], l);
        }
        mkdir_p(dir, "sys/class/net/veth0"); /* virtual: no device link */

        ck_assert_int_ge(asprintf(&xml, "%s/32em64t-2n8c2t-pci-wholeio.xml", corpus_topologies), 0);
        ck_assert_int_eq(topology_load_xml(xml, &t), 0);
        ck_assert_int_eq(topology_device_locality(t, "eth9", &got, &nodes, NULL), -ENODEV); /* no root yet */
        ck_assert_int_eq(topology_set_sysfs_root(t, dir), 0);

        /* numa_node 1, directly and from the virtio device's PCI parent. */
        ck_assert_int_eq(cpuset_parse_list("8-15,24-31", &expect, NULL), 0);
        ck_assert_int_eq(
                topology_device_locality(t, "eth9", &got, &nodes, &source), TOPOLOGY_LOCALITY_NODES);
        ck_assert_str_eq(source, "sysfs");
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(cpuset_parse_list("1", &expect, NULL), 0);
        ck_assert(cpuset_equal(&nodes, &expect));
        ck_assert_int_eq(topology_device_locality(t, "ens5", &got, &nodes, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&nodes, &expect));

        /* numa_node -1 listing every CPU, and a virtual device: every online CPU, no node. */
        ck_assert_int_eq(topology_device_locality(t, "ethm1", &got, &nodes, NULL), TOPOLOGY_LOCALITY_NONE);
        ck_assert(cpuset_equal(&got, topology_online_cpus(t)));
        ck_assert(cpuset_equal(&nodes, &none));
        ck_assert_int_eq(
                topology_device_locality(t, "veth0", &got, &nodes, &source), TOPOLOGY_LOCALITY_NONE);
        ck_assert(cpuset_equal(&got, topology_online_cpus(t)));
        ck_assert(cpuset_equal(&nodes, &none));
        ck_assert_str_eq(source, "sysfs");

        /* Only local_cpulist; a node this topology doesn't have (7): local_cpulist. */
        ck_assert_int_eq(topology_device_locality(t, "ethl", &got, &nodes, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert_int_eq(cpuset_parse_list("4-5", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(cpuset_parse_list("0", &expect, NULL), 0);
        ck_assert(cpuset_equal(&nodes, &expect));
        ck_assert_int_eq(topology_device_locality(t, "eth7n", &got, &nodes, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert_int_eq(cpuset_parse_list("12-13", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(cpuset_parse_list("1", &expect, NULL), 0);
        ck_assert(cpuset_equal(&nodes, &expect));

        /* A PCI address hwloc doesn't know, in every spelling. */
        ck_assert_int_eq(cpuset_parse_list("0-7,16-23", &expect, NULL), 0);
        ck_assert_int_eq(
                topology_device_locality(t, "0000:5e:00.0", &got, NULL, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_device_locality(t, "5e:00.0", &got, NULL, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(
                topology_device_locality(t, "0000:5E:00.0", &got, NULL, NULL), TOPOLOGY_LOCALITY_NODES);
        ck_assert(cpuset_equal(&got, &expect));

        /* hwloc wins over sysfs for what it knows (eth0 on node 1). */
        ck_assert_int_eq(topology_device_locality(t, "eth0", &got, NULL, &source), TOPOLOGY_LOCALITY_NODES);
        ck_assert_str_eq(source, "hwloc");
        ck_assert_int_eq(cpuset_parse_list("8-15,24-31", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));

        /* Missing devices, and names that would leave the tree. */
        ck_assert_int_eq(topology_device_locality(t, "nosuch0", &got, NULL, NULL), -ENODEV);
        ck_assert_int_eq(topology_device_locality(t, "0000:77:00.0", &got, NULL, NULL), -ENODEV);
        ck_assert_int_eq(topology_device_locality(t, "../../bus", &got, NULL, NULL), -ENODEV);
        ck_assert_int_eq(topology_device_locality(t, "..", &got, NULL, NULL), -ENODEV);

        ck_assert_int_eq(topology_set_sysfs_root(t, NULL), 0);
        ck_assert_int_eq(topology_device_locality(t, "eth9", &got, NULL, NULL), -ENODEV);

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", dir), 0);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- synthetic ---- */

START_TEST(test_synthetic) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_cpuset_ CpuSet set = CPUSET_NULL, got = CPUSET_NULL, expect = CPUSET_NULL;
        _cleanup_free_ char *s = NULL;

        /* 2 packages × 1 node × 4 cores × 2 PUs, numbered in order: core k = PUs 2k, 2k+1. */
        ck_assert_int_eq(topology_load_synthetic("pack:2 numa:1 core:4 pu:2", &t), 0);
        check_invariants(t, "pack:2 numa:1 core:4 pu:2");
        check_cache_domains(t, "pack:2 numa:1 core:4 pu:2");
        check_cpu_kinds(t, "pack:2 numa:1 core:4 pu:2");
        /* No L3 level: the packages are the cache domains. */
        ck_assert_uint_eq(topology_n_cache_domains(t), 2);
        ck_assert_str_eq(topology_cache_domain_name(t, 1), "package 1");
        ck_assert_uint_eq(topology_n_packages(t), 2);
        ck_assert_uint_eq(topology_n_nodes(t), 2);
        ck_assert_uint_eq(topology_n_cores(t), 8);
        ck_assert_uint_eq(topology_n_cpus(t), 16);
        ck_assert_uint_eq(cpuset_count(topology_online_cpus(t)), 16);
        ck_assert_uint_eq(cpuset_count(topology_allowed_cpus(t)), 16);
        for (unsigned cpu = 0; cpu < 16; cpu++) {
                ck_assert_int_eq(topology_core_siblings(t, cpu, &got), 0);
                cpuset_clear(&expect);
                ck_assert_int_eq(cpuset_add_range(&expect, cpu & ~1U, cpu | 1U), 0);
                ck_assert(cpuset_equal(&got, &expect));
                ck_assert_int_eq(topology_node_of_cpu(t, cpu), (int)(cpu / 8));
        }
        ck_assert_int_eq(cpuset_parse_list("1", &set, NULL), 0);
        ck_assert_int_eq(topology_cpus_of_nodes(t, &set, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("8-15", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_cpus_of_packages(t, &set, &got), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_summary(t, &s), 0);
        ck_assert_str_eq(s, "2 packages, 2 NUMA nodes, 8 cores, 16 CPUs (16 online)");
        s = mfree(s);
        t = topology_free(t);

        /* With an L3 level: two L3 caches per package, numbered as hwloc does (logically). */
        ck_assert_int_eq(topology_load_synthetic("pack:2 l3:2 core:2 pu:2", &t), 0);
        check_cache_domains(t, "pack:2 l3:2 core:2 pu:2");
        ck_assert_uint_eq(topology_n_cache_domains(t), 4);
        ck_assert_str_eq(topology_cache_domain_name(t, 2), "L3 #2");
        ck_assert_int_eq(cpuset_parse_list("8-11", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_cache_domain_cpus(t, 2), &expect));
        t = topology_free(t);

        /* Linux-style interleaved numbering: siblings of CPU k are k and k+8. */
        ck_assert_int_eq(
                topology_load_synthetic(
                        "pack:2 core:4 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)", &t),
                0);
        check_invariants(t, "interleaved");
        for (unsigned cpu = 0; cpu < 8; cpu++) {
                ck_assert_int_eq(topology_core_siblings(t, cpu, &got), 0);
                cpuset_clear(&expect);
                ck_assert_int_eq(cpuset_add(&expect, cpu), 0);
                ck_assert_int_eq(cpuset_add(&expect, cpu + 8), 0);
                ck_assert(cpuset_equal(&got, &expect));
                ck_assert_int_eq(topology_core_of_cpu(t, cpu), topology_core_of_cpu(t, cpu + 8));
        }
        /* No numa level: hwloc adds a single node 0 with every CPU. */
        ck_assert_int_eq(cpuset_parse_list("0", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_nodes(t), &expect));
        t = topology_free(t);

        /* No core level: every PU is a core of its own. */
        ck_assert_int_eq(topology_load_synthetic("pack:2 pu:3", &t), 0);
        check_invariants(t, "pack:2 pu:3");
        ck_assert_uint_eq(topology_n_cores(t), 6);
        ck_assert_int_eq(topology_core_siblings(t, 4, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("4", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        t = topology_free(t);

        /* Singular words. */
        ck_assert_int_eq(topology_load_synthetic("pack:1 core:1 pu:1", &t), 0);
        ck_assert_int_eq(topology_summary(t, &s), 0);
        ck_assert_str_eq(s, "1 package, 1 NUMA node, 1 core, 1 CPU (1 online)");
        t = topology_free(t);

        ck_assert_int_eq(topology_load_synthetic("garbage:what", &t), -EINVAL);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(topology_load_synthetic("", &t), -EINVAL);
        ck_assert_ptr_null(t);
}
END_TEST

/* ---- hand-written XML ---- */

static char *write_temp(const char *dir, const char *name, const char *text) {
        char *path = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

#define XML_HEAD \
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n" \
        "<topology version=\"2.0\">\n"

/*
 * CPUs 0-5 exist, 4-5 are offline (not in cpuset), 3 is disallowed. Package one has no
 * os_index (→ logical index 0) and one core of two PUs; package 5 has two PUs without a Core.
 * The only NUMA node has no os_index (→ 0) and covers the machine.
 */
static const char odd_xml[] = XML_HEAD
        "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000003f\""
        " allowed_cpuset=\"0x00000007\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\">\n"
        " <object type=\"NUMANode\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000003f\" nodeset=\"0x1\""
        " complete_nodeset=\"0x1\" local_memory=\"1048576\"/>\n"
        " <object type=\"Package\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\">\n"
        "  <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\">\n"
        "   <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\"/>\n"
        "   <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\"/>\n"
        "  </object>\n"
        " </object>\n"
        " <object type=\"Package\" os_index=\"5\" cpuset=\"0x0000000c\" complete_cpuset=\"0x0000000c\">\n"
        "  <object type=\"PU\" os_index=\"2\" cpuset=\"0x00000004\" complete_cpuset=\"0x00000004\"/>\n"
        "  <object type=\"PU\" os_index=\"3\" cpuset=\"0x00000008\" complete_cpuset=\"0x00000008\"/>\n"
        " </object>\n"
        "</object>\n"
        "</topology>\n";

/* No NUMANode at all: hwloc 2 refuses such XML. */
static const char no_numa_xml[] = XML_HEAD
        "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
        " allowed_cpuset=\"0x00000003\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\">\n"
        " <object type=\"Package\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\">\n"
        "   <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\"/>\n"
        "   <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\"/>\n"
        " </object>\n"
        "</object>\n"
        "</topology>\n";

START_TEST(test_xml_odd) {
        char dir[] = "/tmp/test-topology-XXXXXX";
        _cleanup_free_ char *odd = NULL, *no_numa = NULL, *junk = NULL, *foreign = NULL, *missing = NULL;
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_cpuset_ CpuSet got = CPUSET_NULL, expect = CPUSET_NULL;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        odd = write_temp(dir, "odd.xml", odd_xml);
        no_numa = write_temp(dir, "no-numa.xml", no_numa_xml);
        junk = write_temp(dir, "junk.xml", "this is not XML\n");
        foreign = write_temp(dir, "foreign.xml", "<?xml version=\"1.0\"?>\n<html><body/></html>\n");
        ck_assert_int_ge(asprintf(&missing, "%s/missing.xml", dir), 0);

        ck_assert_int_eq(topology_load_xml(odd, &t), 0);
        check_invariants(t, "odd.xml");
        ck_assert_int_eq(cpuset_parse_list("0-5", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_all_cpus(t), &expect));
        ck_assert_int_eq(cpuset_parse_list("0-3", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_online_cpus(t), &expect));
        ck_assert_int_eq(cpuset_parse_list("0-2", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_allowed_cpus(t), &expect));
        ck_assert_uint_eq(topology_n_cpus(t), 6);
        ck_assert_uint_eq(topology_n_cores(t), 3);
        ck_assert_uint_eq(topology_n_packages(t), 2);
        ck_assert_uint_eq(topology_n_nodes(t), 1);
        ck_assert_int_eq(cpuset_parse_list("0,5", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_packages(t), &expect));
        ck_assert_int_eq(cpuset_parse_list("0", &expect, NULL), 0);
        ck_assert(cpuset_equal(topology_nodes(t), &expect));
        ck_assert_int_eq(topology_core_siblings(t, 1, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("0-1", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_eq(topology_core_siblings(t, 3, &got), 0);
        ck_assert_int_eq(cpuset_parse_list("3", &expect, NULL), 0);
        ck_assert(cpuset_equal(&got, &expect));
        ck_assert_int_ne(topology_core_of_cpu(t, 2), topology_core_of_cpu(t, 3));
        ck_assert_int_eq(topology_core_siblings(t, 4, &got), -ENOENT); /* offline */
        ck_assert_int_eq(topology_node_of_cpu(t, 5), 0);
        t = topology_free(t);

        /* Refused, never replaced by the live machine. */
        ck_assert_int_eq(topology_load_xml(no_numa, &t), -EINVAL);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(topology_load_xml(junk, &t), -EINVAL);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(topology_load_xml(foreign, &t), -EINVAL);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(topology_load_xml(missing, &t), -ENOENT);
        ck_assert_ptr_null(t);

        unlink(odd);
        unlink(no_numa);
        unlink(junk);
        unlink(foreign);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ---- the live machine ---- */

static int read_cpulist(const char *path, CpuSet *ret) {
        _cleanup_free_ char *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;

        f = fopen(path, "re");
        if (!f)
                return -errno;
        if (getline(&line, &size, f) < 0)
                return -EIO;
        return cpuset_parse_list(line, ret, NULL);
}

START_TEST(test_live) {
        _cleanup_(topology_freep) Topology *t = NULL;
        _cleanup_cpuset_ CpuSet sys_online = CPUSET_NULL, sys_possible = CPUSET_NULL, affinity = CPUSET_NULL,
                                got = CPUSET_NULL, sys = CPUSET_NULL;
        cpu_set_t *mask = NULL;
        size_t size = CPU_ALLOC_SIZE(CPUSET_MAX_CPUS);
        long nproc_onln = sysconf(_SC_NPROCESSORS_ONLN);

        ck_assert_int_eq(topology_load_live(&t), 0);
        check_invariants(t, "live");
        check_cache_domains(t, "live");
        check_cpu_kinds(t, "live");

        /* /sys/devices/system/cpu/online, and nproc's two numbers. */
        ck_assert_int_eq(read_cpulist("/sys/devices/system/cpu/online", &sys_online), 0);
        ck_assert_msg(
                cpuset_equal(topology_online_cpus(t), &sys_online), "online %s, sysfs says %s",
                fmt(topology_online_cpus(t)), fmt(&sys_online));
        ck_assert_int_eq(read_cpulist("/sys/devices/system/cpu/possible", &sys_possible), 0);
        ck_assert(cpuset_is_subset(topology_all_cpus(t), &sys_possible));
        ck_assert_int_eq((long)cpuset_count(topology_online_cpus(t)), nproc_onln); /* nproc --all */

        mask = CPU_ALLOC(CPUSET_MAX_CPUS);
        ck_assert_ptr_nonnull(mask);
        ck_assert_int_eq(sched_getaffinity(0, size, mask), 0);
        ck_assert_int_eq(cpuset_from_cpu_set(mask, size, &affinity), 0);
        CPU_FREE(mask);
        /* nproc = our affinity: within what the cgroup allows. */
        ck_assert_msg(
                cpuset_is_subset(&affinity, topology_allowed_cpus(t)), "affinity %s ⊄ allowed %s",
                fmt(&affinity), fmt(topology_allowed_cpus(t)));

        /* Siblings and nodes as sysfs has them. */
        CPUSET_FOREACH (cpu, topology_online_cpus(t)) {
                _cleanup_free_ char *path = NULL;

                ck_assert_int_ge(
                        asprintf(&path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu),
                        0);
                ck_assert_int_eq(read_cpulist(path, &sys), 0);
                ck_assert_int_eq(topology_core_siblings(t, cpu, &got), 0);
                cpuset_and(&sys, topology_online_cpus(t));
                ck_assert_msg(
                        cpuset_equal(&got, &sys), "CPU %d siblings %s, sysfs %s", cpu, fmt(&got), fmt(&sys));
        }
        CPUSET_FOREACH (node, topology_nodes(t)) {
                _cleanup_free_ char *path = NULL;
                _cleanup_cpuset_ CpuSet one = CPUSET_NULL;
                int r;

                ck_assert_int_ge(asprintf(&path, "/sys/devices/system/node/node%d/cpulist", node), 0);
                r = read_cpulist(path, &sys);
                if (r == -ENOENT) {
                        /* Kernel without NUMA: hwloc made up node 0 with every CPU. */
                        ck_assert_int_eq(node, 0);
                        ck_assert_uint_eq(topology_n_nodes(t), 1);
                        continue;
                }
                ck_assert_int_eq(r, 0);
                ck_assert_int_eq(cpuset_add(&one, node), 0);
                ck_assert_int_eq(topology_cpus_of_nodes(t, &one, &got), 0);
                cpuset_and(&got, topology_online_cpus(t));
                cpuset_and(&sys, topology_online_cpus(t));
                ck_assert_msg(
                        cpuset_equal(&got, &sys), "node %d CPUs %s, sysfs %s", node, fmt(&got), fmt(&sys));
        }

        /* L3 caches as sysfs has them: cache/index3 (level 3, unified) of each online CPU. */
        CPUSET_FOREACH (cpu, topology_online_cpus(t)) {
                _cleanup_free_ char *level_path = NULL, *path = NULL, *level = NULL;
                _cleanup_cpuset_ CpuSet domain = CPUSET_NULL;
                int d;

                ck_assert_int_ge(
                        asprintf(&level_path, "/sys/devices/system/cpu/cpu%d/cache/index3/level", cpu), 0);
                if (access(level_path, F_OK) < 0)
                        continue; /* no L3 known: the fallback domains are checked with the corpus */
                level = read_file(level_path);
                if (atoi(level) != 3)
                        continue;
                ck_assert_int_ge(
                        asprintf(&path, "/sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list", cpu),
                        0);
                ck_assert_int_eq(read_cpulist(path, &sys), 0);
                d = topology_cache_domain_of_core(t, (unsigned)topology_core_of_cpu(t, cpu));
                ck_assert_int_ge(d, 0);
                ck_assert_int_eq(cpuset_copy(&domain, topology_cache_domain_cpus(t, (unsigned)d)), 0);
                cpuset_and(&domain, topology_online_cpus(t));
                cpuset_and(&sys, topology_online_cpus(t));
                ck_assert_msg(
                        cpuset_equal(&domain, &sys), "CPU %d: L3 domain %s, sysfs %s", cpu, fmt(&domain),
                        fmt(&sys));
        }

        /*
         * Every network interface of this machine resolves (hwloc or sysfs); one with a NUMA
         * node in sysfs lands on it; one without locality gets every online CPU.
         */
        {
                _cleanup_closedir_ DIR *d = opendir("/sys/class/net");
                struct dirent *de;

                ck_assert_ptr_nonnull(d);
                while ((de = readdir(d))) {
                        _cleanup_free_ char *numa_path = NULL, *numa = NULL;
                        _cleanup_cpuset_ CpuSet nodes = CPUSET_NULL;
                        int r;

                        if (de->d_name[0] == '.')
                                continue;
                        r = topology_device_locality(t, de->d_name, &got, &nodes, NULL);
                        ck_assert_msg(r >= 0, "interface %s: %d", de->d_name, r);
                        if (r == TOPOLOGY_LOCALITY_NONE) {
                                ck_assert(cpuset_equal(&got, topology_online_cpus(t)));
                                ck_assert(cpuset_is_empty(&nodes));
                                continue;
                        }
                        ck_assert(!cpuset_is_empty(&got));
                        ck_assert_int_ge(
                                asprintf(&numa_path, "/sys/class/net/%s/device/numa_node", de->d_name), 0);
                        if (access(numa_path, F_OK) == 0) {
                                numa = read_file(numa_path);
                                if (atoi(numa) >= 0)
                                        ck_assert_msg(
                                                cpuset_contains(&nodes, (unsigned)atoi(numa)),
                                                "interface %s: nodes %s, sysfs numa_node %s", de->d_name,
                                                fmt(&nodes), numa);
                        }
                }
        }
        ck_assert_int_eq(topology_device_locality(t, "nosuchdev", &got, NULL, NULL), -ENODEV);
}
END_TEST

static Suite *topology_suite(void) {
        Suite *s = suite_create("topology");
        TCase *tc;

        tc = tcase_create("corpus");
        tcase_add_loop_test(tc, test_corpus_file, 0, (int)n_corpus_files);
        tcase_add_test(tc, test_corpus_hand_checked);
        tcase_add_test(tc, test_corpus_domains_kinds_devices);
        tcase_add_test(tc, test_device_sysfs);
        suite_add_tcase(s, tc);

        tc = tcase_create("synthetic");
        tcase_add_test(tc, test_synthetic);
        tcase_add_test(tc, test_xml_odd);
        suite_add_tcase(s, tc);

        tc = tcase_create("live");
        tcase_add_test(tc, test_live);
        suite_add_tcase(s, tc);

        return s;
}

int main(void) {
        SRunner *sr;
        int failed;

        corpus_discover();
        sr = srunner_create(topology_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        for (size_t i = 0; i < n_corpus_files; i++)
                free(corpus_files[i]);
        free(corpus_files);
        free(corpus_topologies);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
