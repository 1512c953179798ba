/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl plan and validate --topology (and --here), end to end and offline (no daemon): a
 * configuration directory with a reserve, a gateway on 8 cores near eth0, a spread thread
 * pool, exclusive services and a policy that can't be resolved, planned against the 2-socket
 * corpus machine whose NIC is on node 1 and against this machine. The --json document is
 * parsed (json-reader.h) and checked field by field; the human report and the
 * exit codes are checked as a user sees them. irqs: and net: rules are planned against this
 * machine's devices — eth0's IRQs (read from sysfs) and a veth pair the test creates (afd<pid>p/q,
 * deleted at the end of the run whatever happened; plan writes nothing) — and offline, against
 * an XML topology's network devices with the IRQs of a saved /proc/interrupts (a corpus pair).
 */

#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "json-reader.h"
#include "macro.h"
#include "util.h"

#define TOPOLOGY_2S "32em64t-2n8c2t-pci-wholeio.xml" /* eth0 on node 1: CPUs 8-15,24-31 */
/* A NIC's machine offline: the XML lists eth0, eth1, eth2, ib0, mlx4_0 (eth0 on node 0), the dump
 * has ixgbe queue vectors eth0-TxRx-0..31, eth0's misc vector "eth0" and eth1-TxRx-0..31. */
#define TOPOLOGY_NIC   "24em64t-2n6c2t-pci.xml"
#define INTERRUPTS_NIC "irqcli-interrupts-2col-ixgbe-32q.txt"

/* ---- the JSON document ---- */

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
        _cleanup_free_ char *out = NULL, *err = NULL, *topo = topology_arg(TOPOLOGY_2S), *cdir = NULL,
                            *first = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *t, *gw, *wk, *threads, *spread, *why, *ghost, *fa, *fb;
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
        /* Why that order: one PU of each of the n cores (one per core already), all in the L3
         * of node 0. */
        why = jarray(threads->items[0], "spread_explanation");
        ck_assert_uint_eq(why->n_items, 2);
        ck_assert_int_ge(
                asprintf(&first, "one PU of each of %u cores (no two of them SMT siblings): ", n), 0);
        ck_assert_msg(
                startswith(why->items[0]->string, first), "spread_explanation[0]: %s",
                why->items[0]->string);
        ck_assert_msg(
                startswith(why->items[1]->string, "cores: all ") &&
                        strstr(why->items[1]->string, " in L3 #0 (") &&
                        strstr(why->items[1]->string, ") on NUMA node 0"),
                "spread_explanation[1]: %s", why->items[1]->string);
        ck_assert_str_eq(jstr(threads->items[1], "name"), "logger");
        ck_assert_str_eq(jstr(threads->items[1], "cpus"), "1");
        ck_assert(jnull(threads->items[1], "spread"));
        ck_assert(jnull(threads->items[1], "spread_explanation"));
        ck_assert(jnull(wk, "processes_spread_explanation"));

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

/* processes: spread: the slots' order is explained too, on node 1 of the 2-socket machine. */
START_TEST(test_plan_processes_spread) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *topo = topology_arg(TOPOLOGY_2S), *cdir = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *why;
        int r;

        harness_remove_policy(h, "00-integ-marker.yaml");
        harness_write_policy(
                h, "10-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {comm: web}\n"
                "    cpus: {nodes: \"1\"}\n"
                "    processes: spread\n");
        cdir = config_dir_arg(h);
        r = harness_run_ctl(h, &out, &err, "--json", "plan", cdir, topo, NULL);
        ck_assert_msg(r == 0, "affinityctl --json plan exited %d: %s", r, err);
        doc = json_parse_document(out);
        why = jarray(jpolicy(doc, "web"), "processes_spread_explanation");
        ck_assert_uint_eq(why->n_items, 3);
        ck_assert_str_eq(
                why->items[0]->string,
                "one PU of each of 8 cores first, so that no two threads share a core while one is free: "
                "8-15");
        ck_assert_str_eq(why->items[1]->string, "cores: all 8 cores in L3 #1 (8-15,24-31) on NUMA node 1");
        ck_assert_str_eq(why->items[2]->string, "then their second SMT siblings: 24-31");
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, NULL);
        ck_assert_msg(r == 0, "affinityctl plan exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, "\n             cores: all 8 cores in L3 #1 (8-15,24-31) on NUMA node 1\n"),
                "the processes' spread order is not explained:\n%s", out);
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
        ck_assert_msg(
                strstr(out, "\n             one PU of each of ") &&
                        strstr(out, "\n             cores: all "),
                "the spread order is not explained:\n%s", out);
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

        /* --here: on this machine, where pending is a warning. */
        r = harness_run_ctl(h, &out, &err, "validate", "--here", cdir, NULL);
        ck_assert_msg(r == 0, "validate --here exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "6 policies: valid, resolved on this machine"), "stdout:\n%s", out);
        ck_assert_msg(
                strstr(err, "40-ghost.yaml:5:7: warning: policy \"ghost\" is pending on this machine"),
                "stderr:\n%s", err);
        out = mfree(out);
        err = mfree(err);

        /* Neither: no machine is looked at, nothing is pending. */
        r = harness_run_ctl(h, &out, &err, "validate", cdir, NULL);
        ck_assert_msg(r == 0, "validate exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "6 policies: valid\n"), "stdout:\n%s", out);
        ck_assert_msg(!strstr(err, "pending"), "validate resolved the policies:\n%s", err);
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

/* ---- irqs: and net: rules against this machine's devices ---- */

#define VETH_QUEUES 4
#define RFS_ENTRIES 4096
#define RFS_TEXT    "4096"

/* The veth pair the device test plans (never writes): named in main() (the runner's PID), so
 * main() can delete it after the run even when the test failed. Deleting one end deletes both. */
static char veth[16], veth_peer[16];

static void veth_delete(void) {
        char cmd[128];

        snprintf(cmd, sizeof cmd, "ip link del dev %s 2>/dev/null", veth);
        (void)!system(cmd);
}

/* eth0's IRQs as sysfs lists them: the msi_irqs/ of the PCI function above its device (a
 * virtio NIC sits below one), ascending. Returns the count (0: eth0 has none). */
static size_t eth0_irqs(unsigned *irqs, size_t max) {
        _cleanup_free_ char *dev = realpath("/sys/class/net/eth0/device", NULL);
        size_t n = 0;

        ck_assert_msg(dev, "/sys/class/net/eth0/device: %s", strerror(errno));
        for (char *slash; (slash = strrchr(dev, '/')) && slash != dev; *slash = '\0') {
                _cleanup_free_ char *msi = NULL;
                DIR *d;

                ck_assert_int_ge(asprintf(&msi, "%s/msi_irqs", dev), 0);
                d = opendir(msi);
                if (!d)
                        continue;
                for (struct dirent *e; (e = readdir(d));)
                        if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
                                ck_assert_uint_lt(n, max);
                                irqs[n++] = (unsigned)strtoul(e->d_name, NULL, 10);
                        }
                closedir(d);
                break;
        }
        for (size_t i = 1; i < n; i++) /* readdir order is no order */
                for (size_t j = i; j > 0 && irqs[j - 1] > irqs[j]; j--) {
                        unsigned x = irqs[j];

                        irqs[j] = irqs[j - 1];
                        irqs[j - 1] = x;
                }
        return n;
}

/* The kernel manages the IRQ's affinity: its smp_affinity is read-only (0444). */
static bool irq_managed(unsigned irq) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity", irq);
        return stat(path, &st) == 0 && (st.st_mode & 0222) == 0;
}

/* How many tx queues eth0 has, and whether tx-0 has a readable xps_cpus (single-queue: no). */
static unsigned eth0_tx_queues(bool *ret_xps) {
        _cleanup_fclose_ FILE *f = NULL;
        unsigned n = 0;
        char path[96];

        for (;; n++) {
                snprintf(path, sizeof path, "/sys/class/net/eth0/queues/tx-%u", n);
                if (access(path, F_OK) < 0)
                        break;
        }
        f = fopen("/sys/class/net/eth0/queues/tx-0/xps_cpus", "re");
        *ret_xps = f && fgetc(f) != EOF;
        return n;
}

/* affinityd.yaml with rfs:, an irqs: rule for eth0's IRQs, net: rules for the veth and eth0. */
static void write_device_config(Harness *h) {
        _cleanup_free_ char *settings = NULL;

        harness_remove_policy(h, "00-integ-marker.yaml");
        ck_assert_int_ge(asprintf(&settings, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        write_text(settings, "rfs: " RFS_TEXT "\n");
        harness_write_policy(
                h, "10-devices.yaml",
                "irqs:\n"
                "  - name: eth0-irqs\n"
                "    match: {device: eth0}\n"
                "    cpus: \"1\"\n"
                "net:\n"
                "  - device: %s\n"
                "    name: veth-steer\n"
                "    rps: \"0-1\"\n"
                "    xps: spread\n"
                "  - device: eth0\n"
                "    name: eth0-xps\n"
                "    xps: spread\n",
                veth);
}

/* Whether the JSON array a holds the string s. */
static bool jarray_has(const Json *a, const char *s) {
        for (size_t i = 0; i < a->n_items; i++)
                if (a->items[i]->type == JSON_STRING && streq(a->items[i]->string, s))
                        return true;
        return false;
}

/* Whether a warning of rule contains text. */
static bool has_warning(const Json *rule, const char *text) {
        const Json *w = jarray(rule, "warnings");

        for (size_t i = 0; i < w->n_items; i++)
                if (w->items[i]->type == JSON_STRING && strstr(w->items[i]->string, text))
                        return true;
        return false;
}

START_TEST(test_plan_devices) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *cdir = NULL, *want = NULL,
                            *topo = topology_arg(TOPOLOGY_2S);
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *devices, *rule, *irqs, *steer, *queues, *eth0;
        unsigned irq_list[64], n_tx;
        size_t n_irqs = eth0_irqs(irq_list, ELEMENTSOF(irq_list));
        bool xps_usable, covered[2] = {};
        char cmd[192];
        int r;

        ck_assert_msg(n_irqs > 0, "eth0 has no MSI/MSI-X IRQs in sysfs");
        n_tx = eth0_tx_queues(&xps_usable);
        veth_delete();
        snprintf(
                cmd, sizeof cmd,
                "ip link add %s numtxqueues %d numrxqueues %d type veth peer name %s numtxqueues %d "
                "numrxqueues %d",
                veth, VETH_QUEUES, VETH_QUEUES, veth_peer, VETH_QUEUES, VETH_QUEUES);
        ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
        write_device_config(h);
        cdir = config_dir_arg(h);

        /* --json on this machine: the devices are this machine's. */
        r = harness_run_ctl(h, &out, &err, "plan", "--json", cdir, NULL);
        ck_assert_msg(r == 0, "affinityctl plan --json exited %d: %s", r, err);
        doc = json_parse_document(out);
        ck_assert_uint_eq(jnum(doc, "rfs"), RFS_ENTRIES);
        devices = jget(doc, "devices");
        ck_assert(jbool(devices, "known"));
        ck_assert(jnull(devices, "reason"));
        ck_assert_uint_ge(jnum(devices, "irqs"), n_irqs);
        ck_assert(jarray_has(jarray(devices, "interfaces"), veth));
        ck_assert(jarray_has(jarray(devices, "interfaces"), "eth0"));

        /* The irqs: rule takes exactly eth0's IRQs, in ascending number: CPU 1 each, or left
         * alone (cpus null) when the kernel manages the IRQ. */
        ck_assert_uint_eq(jarray(doc, "irqs")->n_items, 1);
        rule = jfind(jarray(doc, "irqs"), "name", "eth0-irqs");
        ck_assert_ptr_nonnull(rule);
        ck_assert(jnull(rule, "error"));
        ck_assert_str_eq(jstr(rule, "cpus"), "1");
        ck_assert(jnull(rule, "spread"));
        ck_assert_uint_eq(jarray(rule, "device")->n_items, 1);
        ck_assert_str_eq(jarray(rule, "device")->items[0]->string, "eth0");
        irqs = jarray(rule, "irqs");
        ck_assert_uint_eq(irqs->n_items, n_irqs);
        for (size_t i = 0; i < n_irqs; i++) {
                const Json *a = irqs->items[i];
                bool managed = irq_managed(irq_list[i]);

                ck_assert_uint_eq(jnum(a, "irq"), irq_list[i]);
                ck_assert_int_eq(jbool(a, "managed"), managed);
                if (managed)
                        ck_assert(jnull(a, "cpus"));
                else
                        ck_assert_str_eq(jstr(a, "cpus"), "1");
        }

        /* The veth: every rx queue gets the rps: set and RFS_ENTRIES / rx queues flows; the two
         * CPUs are divided among the four tx queues, one each, both used. */
        steer = jfind(jarray(doc, "net"), "name", "veth-steer");
        ck_assert_ptr_nonnull(steer);
        ck_assert(jnull(steer, "error"));
        ck_assert_str_eq(jstr(steer, "device"), veth);
        ck_assert_str_eq(jstr(steer, "rps"), "0-1");
        ck_assert_str_eq(jstr(steer, "xps"), "0-1");
        queues = jarray(steer, "queues");
        ck_assert_uint_eq(queues->n_items, 2 * VETH_QUEUES);
        for (size_t i = 0; i < queues->n_items; i++) {
                const Json *q = queues->items[i];
                bool rx = i < VETH_QUEUES;
                char name[16];

                snprintf(name, sizeof name, "%s-%zu", rx ? "rx" : "tx", i % VETH_QUEUES);
                ck_assert_str_eq(jstr(q, "device"), veth);
                ck_assert_str_eq(jstr(q, "queue"), name);
                ck_assert_str_eq(jstr(q, "kind"), rx ? "rps" : "xps");
                if (rx) {
                        ck_assert_str_eq(jstr(q, "cpus"), "0-1");
                        ck_assert_uint_eq(jnum(q, "flow_cnt"), RFS_ENTRIES / VETH_QUEUES);
                } else {
                        const char *cpus = jstr(q, "cpus");

                        ck_assert_msg(streq(cpus, "0") || streq(cpus, "1"), "%s: xps %s", name, cpus);
                        covered[cpus[0] - '0'] = true;
                        ck_assert(jnull(q, "flow_cnt"));
                }
        }
        ck_assert(covered[0] && covered[1]);

        /* eth0 with one tx queue: no usable XPS, and the plan says so. */
        eth0 = jfind(jarray(doc, "net"), "name", "eth0-xps");
        ck_assert_ptr_nonnull(eth0);
        if (n_tx == 1 && !xps_usable) {
                ck_assert_uint_eq(jarray(eth0, "queues")->n_items, 0);
                ck_assert_msg(has_warning(eth0, "eth0: one tx queue"), "no single-queue warning:\n%s", out);
        } else
                ck_assert_uint_eq(jarray(eth0, "queues")->n_items, n_tx);
        out = mfree(out);
        err = mfree(err);

        /* The human report says the same. */
        r = harness_run_ctl(h, &out, &err, "plan", cdir, NULL);
        ck_assert_msg(r == 0, "affinityctl plan exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, "  Devices: ") && strstr(out, "      RFS: " RFS_TEXT " flow entries ("),
                "no devices or RFS line:\n%s", out);
        ck_assert_msg(
                strstr(out, "\nirqs: eth0-irqs (") && strstr(out, "    Match: device eth0\n"),
                "no irqs: rule:\n%s", out);
        for (size_t i = 0; i < n_irqs; i++) {
                ck_assert_int_ge(
                        asprintf(&want, "%s %u ", i == 0 ? "     IRQs:" : "          ", irq_list[i]), 0);
                ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
                want = mfree(want);
        }
        ck_assert_msg(
                strstr(out, "\nnet: veth-steer (") && strstr(out, "      RPS: 0-1 (2 CPUs on "),
                "no net: rule:\n%s", out);
        ck_assert_int_ge(
                asprintf(
                        &want, "   Queues: %s rx-0: rps_cpus 0-1, rps_flow_cnt %d\n", veth,
                        RFS_ENTRIES / VETH_QUEUES),
                0);
        ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
        want = mfree(want);
        ck_assert_int_ge(asprintf(&want, "           %s tx-%d: xps_cpus ", veth, VETH_QUEUES - 1), 0);
        ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
        if (n_tx == 1 && !xps_usable)
                ck_assert_msg(
                        strstr(out, "  Warning: eth0: one tx queue: XPS has no use"), "stdout:\n%s", out);
        ck_assert_msg(
                strstr(out,
                       "\n0 policies: 0 resolved, 0 pending; 1 irqs rule: 1 resolved, 0 pending; "
                       "2 net rules: 2 resolved, 0 pending.\n"),
                "no summary line:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* With --topology alone: the devices are the XML's, the IRQs and queues are not known,
         * and nothing claims a device absent that the XML lists. */
        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, NULL);
        ck_assert_msg(r == 0, "affinityctl plan --topology exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "  Devices: eth0, eth1, ib0, mlx5_0 (in "), "stdout:\n%s", out);
        ck_assert_msg(
                strstr(out,
                       "     IRQs: not known without --interrupts=FILE (a saved /proc/interrupts of "
                       "that machine)\n"),
                "stdout:\n%s", out);
        ck_assert_msg(strstr(out, "   Queues: not known without --sysfs=DIR"), "stdout:\n%s", out);
        ck_assert_msg(
                !strstr(out, "not present") && !strstr(out, "matches no") && !strstr(out, "rx-"),
                "device facts on an XML topology:\n%s", out);
        ck_assert_msg(
                strstr(out, "\nirqs: eth0-irqs (") && strstr(out, "     CPUs: 1 (1 CPU on 1 core)\n"),
                "stdout:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "plan", "--json", cdir, topo, NULL);
        ck_assert_msg(r == 0, "affinityctl plan --json --topology exited %d: %s", r, err);
        doc = json_free(doc);
        doc = json_parse_document(out);
        devices = jget(doc, "devices");
        ck_assert(!jbool(devices, "known"));
        ck_assert(jbool(devices, "offline"));
        ck_assert(jarray_has(jarray(devices, "topology_devices"), "eth0"));
        ck_assert_msg(
                strstr(jstr(devices, "reason"), "IRQs not known without --interrupts=FILE"), "%s",
                jstr(devices, "reason"));
        ck_assert(jnull(devices, "irqs"));
        ck_assert(jnull(devices, "interfaces"));
        rule = jfind(jarray(doc, "irqs"), "name", "eth0-irqs");
        ck_assert_ptr_nonnull(rule);
        ck_assert_str_eq(jstr(rule, "cpus"), "1");
        ck_assert_uint_eq(jarray(rule, "irqs")->n_items, 0);
        ck_assert_uint_eq(jarray(rule, "warnings")->n_items, 0);
        steer = jfind(jarray(doc, "net"), "name", "veth-steer");
        ck_assert_ptr_nonnull(steer);
        ck_assert_str_eq(jstr(steer, "rps"), "0-1");
        ck_assert_uint_eq(jarray(steer, "queues")->n_items, 0);
        out = mfree(out);
        err = mfree(err);

        /* validate counts every kind of rule. */
        r = harness_run_ctl(h, &out, &err, "validate", cdir, NULL);
        ck_assert_msg(r == 0, "validate exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, "2 files, 0 policies, 1 irqs rule, 2 net rules: valid"), "stdout:\n%s", out);

        veth_delete();
}
END_TEST

/* The IRQ number of the line of corpus dump path whose last word is name; -1 when none. Counts
 * the numeric lines into *n_lines (may be NULL). */
static int dump_irq_of(const char *path, const char *name, unsigned *n_lines) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[4096];
        int irq = -1;

        ck_assert_msg(f, "cannot open %s", path);
        if (n_lines)
                *n_lines = 0;
        while (fgets(line, sizeof line, f)) {
                char *p = line + strspn(line, " "), *last, *end;
                unsigned long n = strtoul(p, &end, 10);

                if (end == p || *end != ':')
                        continue;
                if (n_lines)
                        (*n_lines)++;
                end[strcspn(end, "\n")] = '\0';
                while (*end && end[strlen(end) - 1] == ' ')
                        end[strlen(end) - 1] = '\0';
                last = strrchr(end, ' ');
                if (last && streq(last + 1, name))
                        irq = (int)n;
        }
        return irq;
}

/* The object of array a whose "irq" is irq, or NULL. */
static const Json *jfind_irq(const Json *a, int irq) {
        for (size_t i = 0; i < a->n_items; i++)
                if ((int)jnum(a->items[i], "irq") == irq)
                        return a->items[i];
        return NULL;
}

/*
 * plan --topology --interrupts on a corpus pair: eth0's IRQs are found by name in the dump, each
 * queue vector eth0-TxRx-q gets the q-th CPU of the rule's spread order (round robin) and the
 * misc vector the whole set; a device the XML doesn't list is said with the devices it lists.
 */
START_TEST(test_plan_offline_interrupts) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL, *cdir = NULL, *topo = topology_arg(TOPOLOGY_NIC),
                            *dump = NULL, *irqs_arg = NULL, *want = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const char *corpus = getenv("AFFINITYD_CORPUS");
        const Json *rule, *spread, *irqs, *ghost, *a;
        _cleanup_free_ char *sysfs_arg = NULL, *rule_cpus = NULL;
        char sysfs[] = "/tmp/integ-plan-sysfs-XXXXXX", cmd[256];
        unsigned n_lines, n_spread;
        int r, irq;

        ck_assert_int_ge(asprintf(&dump, "%s/interrupts/%s", corpus, INTERRUPTS_NIC), 0);
        ck_assert_int_ge(asprintf(&irqs_arg, "--interrupts=%s", dump), 0);
        harness_remove_policy(h, "00-integ-marker.yaml");
        harness_write_policy(
                h, "10-nic.yaml",
                "irqs:\n"
                "  - name: eth0-queues\n"
                "    match: {device: eth0}\n"
                "    cpus: {near: eth0}\n"
                "    spread: true\n"
                "  - name: ghost\n"
                "    match: {device: eno1}\n"
                "    cpus: \"0\"\n"
                "net:\n"
                "  - name: steer\n"
                "    device: \"eth*\"\n"
                "    rps: {near: eth0}\n");
        cdir = config_dir_arg(h);

        r = harness_run_ctl(h, &out, &err, "plan", "--json", cdir, topo, irqs_arg, NULL);
        ck_assert_msg(r == 0, "plan --topology --interrupts exited %d: %s", r, err);
        doc = json_parse_document(out);
        ck_assert(dump_irq_of(dump, "eth0-TxRx-0", &n_lines) >= 0);
        ck_assert_uint_eq(jnum(jget(doc, "devices"), "irqs"), n_lines);
        ck_assert(jbool(jget(doc, "devices"), "offline"));

        rule = jfind(jarray(doc, "irqs"), "name", "eth0-queues");
        ck_assert_ptr_nonnull(rule);
        ck_assert_str_eq(jstr(rule, "nodes"), "0");
        spread = jarray(rule, "spread");
        irqs = jarray(rule, "irqs");
        n_spread = (unsigned)spread->n_items;
        ck_assert_uint_gt(n_spread, 0);
        for (unsigned q = 0; q < 32; q++) {
                char name[32], cpu[16];

                snprintf(name, sizeof name, "eth0-TxRx-%u", q);
                irq = dump_irq_of(dump, name, NULL);
                ck_assert_msg(irq >= 0, "%s not in %s", name, dump);
                a = jfind_irq(irqs, irq);
                ck_assert_msg(a, "IRQ %d (%s) not taken by eth0-queues", irq, name);
                snprintf(cpu, sizeof cpu, "%u", (unsigned)spread->items[q % n_spread]->number);
                ck_assert_str_eq(jstr(a, "name"), name);
                ck_assert_msg(
                        streq(jstr(a, "cpus"), cpu), "%s: CPUs %s, want %s", name, jstr(a, "cpus"), cpu);
        }
        irq = dump_irq_of(dump, "eth0", NULL);
        ck_assert(irq >= 0);
        ck_assert_str_eq(jstr(jfind_irq(irqs, irq), "cpus"), jstr(rule, "cpus"));
        rule_cpus = strdup(jstr(jfind(jarray(doc, "net"), "name", "steer"), "rps"));
        ck_assert_ptr_nonnull(rule_cpus);
        ck_assert_uint_eq(irqs->n_items, 33); /* none of eth1's */

        ghost = jfind(jarray(doc, "irqs"), "name", "ghost");
        ck_assert_ptr_nonnull(ghost);
        want = strprintf(
                "device eno1: not in %s (devices there: eth0, eth1, eth2, ib0, mlx4_0)",
                topo + strlen("--topology="));
        ck_assert_ptr_nonnull(want);
        ck_assert_msg(jarray_has(jarray(ghost, "explanation"), want), "no \"%s\" in:\n%s", want, out);
        want = mfree(want);
        out = mfree(out);
        err = mfree(err);

        /* The report as a user reads it: each IRQ with its CPU, the absent device, the queues. */
        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, irqs_arg, NULL);
        ck_assert_msg(r == 0, "plan --topology --interrupts exited %d: %s", r, err);
        irq = dump_irq_of(dump, "eth0-TxRx-1", NULL);
        ck_assert_int_ge(
                asprintf(
                        &want, "           %d eth0-TxRx-1: %u\n", irq,
                        (unsigned)spread->items[1 % n_spread]->number),
                0);
        ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
        ck_assert_msg(
                strstr(out, "device eno1: not in ") &&
                        strstr(out, " (devices there: eth0, eth1, eth2, ib0, mlx4_0)\n"),
                "stdout:\n%s", out);
        ck_assert_msg(strstr(out, "  Devices: eth0, eth1, eth2 (in "), "stdout:\n%s", out);
        ck_assert_msg(strstr(out, "   Queues: not known without --sysfs=DIR"), "stdout:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* With --sysfs, a copy of that machine's /sys/class/net/DEV/queues: the queues too. */
        ck_assert_ptr_nonnull(mkdtemp(sysfs));
        ck_assert_int_ge(asprintf(&sysfs_arg, "--sysfs=%s", sysfs), 0);
        snprintf(
                cmd, sizeof cmd,
                "for q in 0 1 2; do d=%s/sys/class/net/eth0/queues/rx-$q; mkdir -p $d && echo 0 > "
                "$d/rps_cpus; done",
                sysfs);
        ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, irqs_arg, sysfs_arg, NULL);
        ck_assert_msg(r == 0, "plan --topology --interrupts --sysfs exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, "           1 network interface with their queues (in "), "stdout:\n%s", out);
        ck_assert_msg(!strstr(out, "not known without --sysfs"), "stdout:\n%s", out);
        for (unsigned q = 0; q < 3; q++) {
                want = mfree(want);
                ck_assert_int_ge(asprintf(&want, "eth0 rx-%u: rps_cpus %s\n", q, rule_cpus), 0);
                ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
        }
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", sysfs);
        ck_assert_int_eq(system(cmd), 0);
        out = mfree(out);
        err = mfree(err);

        /* --interrupts and --sysfs need --topology, and something they can read. */
        r = harness_run_ctl(h, &out, &err, "plan", cdir, irqs_arg, NULL);
        ck_assert_msg(r == 2, "--interrupts without --topology exited %d", r);
        ck_assert_msg(strstr(err, "--interrupts= is only for plan with --topology="), "stderr:\n%s", err);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, "--interrupts=/nonexistent/interrupts", NULL);
        ck_assert_msg(r == 1, "an unreadable --interrupts exited %d", r);
        ck_assert_msg(strstr(err, "Failed to read /nonexistent/interrupts: "), "stderr:\n%s", err);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "plan", cdir, topo, "--sysfs=/nonexistent", NULL);
        ck_assert_msg(r == 1, "an unreadable --sysfs exited %d", r);
        ck_assert_msg(strstr(err, "Failed to read /nonexistent/sys/class/net: "), "stderr:\n%s", err);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-plan");
        int r;

        harness_add_test(s, test_plan_json);
        harness_add_test(s, test_plan_human);
        harness_add_test(s, test_plan_processes_spread);
        harness_add_test(s, test_plan_invalid);
        harness_add_test(s, test_validate_topology);
        harness_add_test(s, test_plan_usage);
        harness_add_test(s, test_plan_devices);
        harness_add_test(s, test_plan_offline_interrupts);

        snprintf(veth, sizeof veth, "afd%dp", (int)getpid() % 10000000);
        snprintf(veth_peer, sizeof veth_peer, "afd%dq", (int)getpid() % 10000000);
        r = harness_main(s);
        /* A failed test _exit()s without teardown: the veth pair goes here in any case. */
        veth_delete();
        if (if_nametoindex(veth) > 0 || if_nametoindex(veth_peer) > 0) {
                printf("FAIL: the veth pair %s/%s is still there at the end of the run\n", veth, veth_peer);
                r = EXIT_FAILURE;
        }
        return r;
}
