/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The YAML loader: the model a valid file produces, every class of error with its exact
 * file:line:column and message, drop-in override/mask/order in temporary directories, and
 * robustness against truncated and mutated input.
 */

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "apply-sched.h"
#include "policy-yaml.h"

static Config *config = NULL;
static Diagnostics diag = {};
static char tmpdir[] = "/tmp/test-policy-yaml-XXXXXX";
static bool have_tmpdir = false;

static void teardown(void) {
        config = config_free(config);
        diagnostics_done(&diag);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static void tmp_setup(void) {
        strcpy(tmpdir, "/tmp/test-policy-yaml-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        have_tmpdir = true;
}

static void tmp_teardown(void) {
        teardown();
        if (have_tmpdir)
                nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Parses text as one file named test.yaml, then the cross-file checks. */
static int parse_as(const char *text, bool settings) {
        int r, q;

        config = config_free(config);
        diagnostics_done(&diag);
        config = config_new();
        ck_assert_ptr_nonnull(config);
        r = config_parse_string(config, "test.yaml", text, strlen(text), settings, &diag);
        ck_assert_int_ne(r, -ENOMEM);
        q = config_verify(config, &diag);
        ck_assert_int_ne(q, -ENOMEM);
        return r < 0 ? r : q;
}

static int parse(const char *text) {
        return parse_as(text, false);
}

static void dump_diagnostics(const Diagnostics *d) {
        _cleanup_free_ char *s = NULL;

        if (diagnostics_format(d, &s) >= 0)
                fprintf(stderr, "%s", s);
}

/* Asserts a diagnostic of that level exists at file:line:column whose message contains substr. */
static void assert_diag_full(
        const Diagnostics *d, DiagnosticLevel level, const char *file, unsigned line, unsigned column,
        const char *substr) {
        for (size_t i = 0; i < d->n_items; i++) {
                const Diagnostic *x = &d->items[i];

                if (x->level == level && streq_ptr(x->file, file) && x->line == line &&
                    x->column == column && strstr(x->message, substr))
                        return;
        }
        dump_diagnostics(d);
        ck_abort_msg(
                "no %s at %s:%u:%u containing \"%s\"", level == DIAGNOSTIC_ERROR ? "error" : "warning", file,
                line, column, substr);
}

static void assert_error(unsigned line, unsigned column, const char *substr) {
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, "test.yaml", line, column, substr);
}

/* The text must fail with exactly one error, at line:column, containing substr. */
static void check_one_error(const char *text, unsigned line, unsigned column, const char *substr) {
        ck_assert_int_eq(parse(text), -EINVAL);
        if (diag.n_errors != 1)
                dump_diagnostics(&diag);
        ck_assert_uint_eq(diag.n_errors, 1);
        assert_error(line, column, substr);
}

static void check_one_settings_error(const char *text, unsigned line, unsigned column, const char *substr) {
        ck_assert_int_eq(parse_as(text, true), -EINVAL);
        if (diag.n_errors != 1)
                dump_diagnostics(&diag);
        ck_assert_uint_eq(diag.n_errors, 1);
        assert_error(line, column, substr);
}

static bool set_is(const CpuSet *s, const char *list) {
        _cleanup_free_ char *f = NULL;

        ck_assert_int_eq(cpuset_format_list(s, &f), 0);
        if (!streq(f, list))
                fprintf(stderr, "set is \"%s\", expected \"%s\"\n", f, list);
        return streq(f, list);
}

static bool strv_is(char **l, ...) {
        va_list ap;
        size_t i = 0;
        bool ok = true;

        va_start(ap, l);
        for (const char *s; (s = va_arg(ap, const char *)); i++)
                if (!l || !l[i] || !streq(l[i], s))
                        ok = false;
        va_end(ap);
        return ok && l && !l[i];
}

/* ---- a valid file ------------------------------------------------------------------------ */

static const char full_text[] =
        "# A rules file using every key of the schema.\n"                      /* 1 */
        "policies:\n"                                                          /* 2 */
        "  - name: web\n"                                                      /* 3 */
        "    match:\n"                                                         /* 4 */
        "      comm: [nginx, \"envoy*\"]\n"                                    /* 5 */
        "      exe: /usr/sbin/nginx\n"                                         /* 6 */
        "      cmdline: \"--role=(edge|gw)\"\n"                                /* 7 */
        "      user: [www-data, \"1000\", _svc$]\n"                            /* 8 */
        "      cgroup: \"/system.slice/*\"\n"                                  /* 9 */
        "      unit: nginx.service\n"                                          /* 10 */
        "    cpus: \"2-3,8\"\n"                                                /* 11 */
        "    threads:\n"                                                       /* 12 */
        "      - name: \"worker*\"\n"                                          /* 13 */
        "        cpus: 3\n"                                                    /* 14 */
        "      - name: logger\n"                                               /* 15 */
        "  - name: db\n"                                                       /* 16 */
        "    match: {user: postgres, cmdline: [\"^postgres\", \"-D /srv\"]}\n" /* 17 */
        "    cpus:\n"                                                          /* 18 */
        "      nodes: \"0-1\"\n"                                               /* 19 */
        "      packages: 0\n"                                                  /* 20 */
        "      reserved: only\n"                                               /* 21 */
        "  - name: bare\n"                                                     /* 22 */
        "    match:\n"                                                         /* 23 */
        "      comm: bare\n"                                                   /* 24 */
        "    cpus: {}\n"                                                       /* 25 */
        "    threads: []\n";                                                   /* 26 */

/* The index of the pattern of set re that matches text when it is pattern idx, -ENOENT when no
 * pattern matches; -1 when another one does. */
static int re_hit(const RegexSet *re, size_t idx, const char *text) {
        int r = regex_set_search(re, text, strlen(text));

        return r < 0 ? r : (size_t)r == idx ? 0 : -1;
}

START_TEST(test_full_model) {
        const Policy *web, *db, *bare;

        ck_assert_int_eq(parse(full_text), 0);
        if (diag.n_items > 0)
                dump_diagnostics(&diag);
        ck_assert_uint_eq(diag.n_items, 0);

        ck_assert_uint_eq(config->n_policies, 3);
        ck_assert(strv_is(config->files, "test.yaml", NULL));
        ck_assert(!config->has_reserve);

        web = &config->policies[0];
        ck_assert_str_eq(web->name, "web");
        ck_assert_ptr_eq(config_find_policy(config, "web"), web);
        ck_assert_str_eq(web->location.file, "test.yaml");
        ck_assert_uint_eq(web->location.line, 3);
        ck_assert_uint_eq(web->location.column, 5);
        ck_assert_uint_eq(web->name_location.line, 3);
        ck_assert_uint_eq(web->name_location.column, 11);
        ck_assert(strv_is(web->match.comm, "nginx", "envoy*", NULL));
        ck_assert(strv_is(web->match.exe, "/usr/sbin/nginx", NULL));
        ck_assert(strv_is(web->match.cmdline, "--role=(edge|gw)", NULL));
        ck_assert(strv_is(web->match.user, "www-data", "1000", "_svc$", NULL));
        ck_assert(strv_is(web->match.cgroup, "/system.slice/*", NULL));
        ck_assert(strv_is(web->match.unit, "nginx.service", NULL));
        ck_assert_uint_eq(web->match.n_cmdline, 1);
        ck_assert_int_ge(re_hit(web->match.cmdline_re, 0, "envoy --role=gw -c x"), 0);
        ck_assert_int_ge(re_hit(web->match.cmdline_re, 0, "envoy --role=edge"), 0);
        ck_assert_int_eq(re_hit(web->match.cmdline_re, 0, "envoy --role=core"), -ENOENT);
        ck_assert_uint_eq(
                web->match.facts, FACT_COMM | FACT_EXE | FACT_CMDLINE | FACT_UID | FACT_CGROUP | FACT_UNIT);
        ck_assert_int_eq(web->cpus.kind, CPU_SELECTOR_LITERAL);
        ck_assert(set_is(&web->cpus.literal, "2-3,8"));
        ck_assert_uint_eq(web->cpus.location.line, 11);
        ck_assert_uint_eq(web->cpus.location.column, 11);
        ck_assert_uint_eq(web->n_threads, 2);
        ck_assert_str_eq(web->threads[0].name, "worker*");
        ck_assert_uint_eq(web->threads[0].location.line, 13);
        ck_assert_uint_eq(web->threads[0].location.column, 9);
        ck_assert_int_eq(web->threads[0].cpus.kind, CPU_SELECTOR_LITERAL);
        ck_assert(set_is(&web->threads[0].cpus.literal, "3")); /* cpus: 3 is the cpu-list "3" */
        ck_assert_str_eq(web->threads[1].name, "logger");
        ck_assert_int_eq(web->threads[1].cpus.kind, CPU_SELECTOR_NONE);

        db = &config->policies[1];
        ck_assert_str_eq(db->name, "db");
        ck_assert(strv_is(db->match.user, "postgres", NULL));
        ck_assert_ptr_null(db->match.comm);
        ck_assert_uint_eq(db->match.n_cmdline, 2);
        ck_assert_int_ge(re_hit(db->match.cmdline_re, 0, "postgres -D /srv/db"), 0);
        ck_assert_int_eq(re_hit(db->match.cmdline_re, 0, "/usr/bin/postgres"), -ENOENT);
        ck_assert_int_ge(re_hit(db->match.cmdline_re, 1, "/usr/bin/postgres -D /srv/db"), 0);
        ck_assert_uint_eq(db->match.facts, FACT_UID | FACT_CMDLINE);
        ck_assert_int_eq(db->cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert(db->cpus.has_nodes);
        ck_assert(set_is(&db->cpus.nodes, "0-1"));
        ck_assert(db->cpus.has_packages);
        ck_assert(set_is(&db->cpus.packages, "0"));
        ck_assert_int_eq(db->cpus.reserved, RESERVED_ONLY);
        ck_assert_uint_eq(db->cpus.location.line, 19);
        ck_assert_uint_eq(db->cpus.location.column, 7);
        ck_assert_uint_eq(db->n_threads, 0);

        bare = &config->policies[2];
        ck_assert_str_eq(bare->name, "bare");
        ck_assert_uint_eq(bare->match.facts, FACT_COMM);
        ck_assert_int_eq(bare->cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert(!bare->cpus.has_nodes && !bare->cpus.has_packages);
        ck_assert_int_eq(bare->cpus.reserved, RESERVED_AVOID);
        ck_assert_uint_eq(bare->n_threads, 0);

        ck_assert_uint_eq(config->facts, web->match.facts | db->match.facts | bare->match.facts);
        ck_assert_ptr_null(config_find_policy(config, "nope"));
}
END_TEST

START_TEST(test_settings) {
        ck_assert_int_eq(parse_as("# housekeeping\nreserve: \"0-1,4\"\n", true), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert(config->has_reserve);
        ck_assert(set_is(&config->reserve, "0-1,4"));
        ck_assert_str_eq(config->reserve_location.file, "test.yaml");
        ck_assert_uint_eq(config->reserve_location.line, 2);
        ck_assert_uint_eq(config->reserve_location.column, 10);
        ck_assert_uint_eq(config->n_policies, 0);

        check_one_settings_error(
                "reserve: 0\npolicies: []\n", 2, 1,
                "policies: belongs in a policy.d/*.yaml file, not in affinityd.yaml");
        check_one_settings_error(
                "reserv: 0\n", 1, 1, "unknown key \"reserv\" in the top level (did you mean \"reserve\"?)");
        check_one_settings_error("reserve: \"0-2,y\"\n", 1, 15, "reserve: invalid cpu-list \"0-2,y\"");
        check_one_settings_error("reserve: [0, 1]\n", 1, 10, "reserve: expected a cpu-list");
        check_one_settings_error("- reserve: 0\n", 1, 1, "top level: expected a mapping of settings");
        check_one_error("reserve: 0\n", 1, 1, "reserve: belongs in affinityd.yaml, not in a policy.d file");
}
END_TEST

/* reserve: as a selector mapping: whole cores, resolved per machine by the plan. */
START_TEST(test_settings_reserve_selector) {
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(parse_as("reserve: { cores: 1, per: package }\n", true), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert(config->has_reserve);
        ck_assert(cpuset_is_empty(&config->reserve));
        ck_assert_int_eq(config->reserve_selector.cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert_uint_eq(config->reserve_selector.cpus.n_cores, 1);
        ck_assert_int_eq(config->reserve_selector.per, RESERVE_PER_PACKAGE);
        ck_assert_uint_eq(config->reserve_location.line, 1);
        ck_assert_uint_eq(config->reserve_location.column, 10);
        ck_assert_int_eq(reserve_selector_format(&config->reserve_selector, &text), 0);
        ck_assert_str_eq(text, "{ cores: 1, per: package }");
        teardown();
        text = mfree(text);

        ck_assert_int_eq(parse_as("reserve:\n  near: eth0\n  cores: 2\n", true), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_str_eq(config->reserve_selector.cpus.near, "eth0");
        ck_assert_uint_eq(config->reserve_selector.cpus.n_cores, 2);
        ck_assert_int_eq(config->reserve_selector.per, RESERVE_PER_NONE);
        ck_assert_int_eq(reserve_selector_format(&config->reserve_selector, &text), 0);
        ck_assert_str_eq(text, "{ near: eth0, cores: 2 }");
        teardown();

        ck_assert_int_eq(parse_as("reserve: { nodes: \"0-1\", cores: 1, per: node }\n", true), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert(set_is(&config->reserve_selector.cpus.nodes, "0-1"));
        ck_assert_int_eq(config->reserve_selector.per, RESERVE_PER_NODE);
        teardown();

        check_one_settings_error(
                "reserve: { per: package }\n", 1, 10, "reserve is missing the required key \"cores\"");
        check_one_settings_error(
                "reserve: { cores: 1, per: socket }\n", 1, 27, "per: invalid value \"socket\"");
        check_one_settings_error(
                "reserve: { cores: 1, pr: package }\n", 1, 22,
                "unknown key \"pr\" in reserve (did you mean \"per\"?)");
        check_one_settings_error(
                "reserve: { cores: 1, cpus: 2 }\n", 1, 22,
                "reserve: cpus: is not a key of the reserve (the reserve is whole cores: count them with "
                "cores: N)");
        check_one_settings_error(
                "reserve: { cores: 1, smt: one-per-core }\n", 1, 22,
                "reserve: smt: is not a key of the reserve");
        check_one_settings_error(
                "reserve: { cores: 1, exclusive: true }\n", 1, 22,
                "reserve: exclusive: is not a key of the reserve");
        check_one_settings_error(
                "reserve: { cores: 1, reserved: only }\n", 1, 22,
                "reserve: reserved: is not a key of the reserve");
        check_one_settings_error(
                "reserve: { cores: 1, within: cpuset }\n", 1, 22,
                "reserve: within: is not a key of the reserve");
        check_one_settings_error("reserve: { cores: 0 }\n", 1, 19, "cores: must be at least 1");
}
END_TEST

START_TEST(test_settings_poll_interval) {
        static const struct {
                const char *text;
                uint64_t usec;
        } ok[] = {
                {"poll-interval: 500ms\n", 500000},  {"poll-interval: \"2s\"\n", 2000000},
                {"poll-interval: 1min\n", 60000000}, {"poll-interval: 3\n", 3000000},
                {"poll-interval: 10000us\n", 10000},
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                ck_assert_int_eq(parse_as(ok[i].text, true), 0);
                ck_assert_uint_eq(diag.n_items, 0);
                ck_assert_uint_eq(config->poll_interval_usec, ok[i].usec);
                teardown();
        }
        ck_assert_int_eq(parse_as("reserve: 0\n", true), 0);
        ck_assert_uint_eq(config->poll_interval_usec, 0); /* not set: the daemon's default */
        teardown();

        check_one_settings_error(
                "poll-interval: fast\n", 1, 16, "poll-interval: invalid time span \"fast\"");
        check_one_settings_error("poll-interval: 2 s\n", 1, 16, "poll-interval: invalid time span \"2 s\"");
        check_one_settings_error("poll-interval: -1s\n", 1, 16, "poll-interval: invalid time span");
        check_one_settings_error(
                "poll-interval: 5ms\n", 1, 16, "poll-interval: 5ms is out of range (10ms to 1h)");
        check_one_settings_error("poll-interval: 2h\n", 1, 16, "poll-interval: invalid time span \"2h\"");
        check_one_settings_error("poll-interval: 61min\n", 1, 16, "out of range");
        check_one_settings_error(
                "poll-interval: 99999999999999999999s\n", 1, 16, "poll-interval: invalid time span");
        check_one_settings_error("poll-interval: [1s]\n", 1, 16, "poll-interval: expected a time span");
        check_one_error("poll-interval: 1s\n", 1, 1, "poll-interval: belongs in affinityd.yaml");
}
END_TEST

START_TEST(test_settings_drift_interval) {
        static const struct {
                const char *text;
                uint64_t usec;
        } ok[] = {
                {"drift-interval: 100ms\n", 100000},        {"drift-interval: \"30s\"\n", 30000000},
                {"drift-interval: 5min\n", 300000000},      {"drift-interval: 10000us\n", 10000},
                {"drift-interval: 1440min\n", 86400000000},
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                ck_assert_int_eq(parse_as(ok[i].text, true), 0);
                ck_assert_uint_eq(diag.n_items, 0);
                ck_assert_uint_eq(config->drift_interval_usec, ok[i].usec);
                ck_assert_uint_eq(config->poll_interval_usec, 0); /* a setting of its own */
                teardown();
        }
        ck_assert_int_eq(parse_as("poll-interval: 1s\n", true), 0);
        ck_assert_uint_eq(config->drift_interval_usec, 0); /* not set: no drift re-check */
        teardown();

        check_one_settings_error(
                "reserve: 0\ndrift-interval: often\n", 2, 17, "drift-interval: invalid time span \"often\"");
        check_one_settings_error("drift-interval: -5s\n", 1, 17, "drift-interval: invalid time span");
        check_one_settings_error(
                "drift-interval: 9ms\n", 1, 17, "drift-interval: 9ms is out of range (10ms to 1440min)");
        check_one_settings_error("drift-interval: 1441min\n", 1, 17, "out of range");
        check_one_settings_error(
                "drift-interval: {every: 1s}\n", 1, 17, "drift-interval: expected a time span");
        check_one_settings_error(
                "drift-intervall: 1s\n", 1, 1,
                "unknown key \"drift-intervall\" in the top level (did you mean "
                "\"drift-interval\"?)");
        check_one_error("drift-interval: 1s\n", 1, 1, "drift-interval: belongs in affinityd.yaml");
}
END_TEST

START_TEST(test_settings_effect_interval) {
        static const struct {
                const char *text;
                uint64_t usec; /* config_effect_interval_usec(): 0 = off */
        } ok[] = {
                {"effect-interval: 1s\n", 1000000},
                {"effect-interval: \"30s\"\n", 30000000},
                {"effect-interval: 60min\n", 3600000000},
                {"effect-interval: off\n", 0},
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                ck_assert_int_eq(parse_as(ok[i].text, true), 0);
                ck_assert_uint_eq(diag.n_items, 0);
                ck_assert_uint_eq(config_effect_interval_usec(config), ok[i].usec);
                ck_assert_uint_eq(config->drift_interval_usec, 0); /* a setting of its own */
                teardown();
        }
        ck_assert_int_eq(parse_as("drift-interval: 1s\n", true), 0);
        ck_assert_uint_eq(config_effect_interval_usec(config), EFFECT_INTERVAL_DEFAULT_USEC);
        teardown();
        ck_assert_uint_eq(config_effect_interval_usec(NULL), EFFECT_INTERVAL_DEFAULT_USEC);
        /* the documented default (docs/policy-format.md), set by bench-effect's 1 % budget */
        ck_assert_uint_eq(EFFECT_INTERVAL_DEFAULT_USEC, 15ULL * 1000 * 1000);

        check_one_settings_error(
                "effect-interval: 500ms\n", 1, 18, "effect-interval: 500ms is out of range (1s to 60min)");
        check_one_settings_error("effect-interval: 61min\n", 1, 18, "out of range");
        check_one_settings_error(
                "effect-interval: sometimes\n", 1, 18, "effect-interval: invalid time span \"sometimes\"");
        check_one_settings_error("effect-interval: \"Off\"\n", 1, 18, "invalid time span");
        check_one_settings_error("effect-interval: [1s]\n", 1, 18, "effect-interval: expected a time span");
        check_one_error("effect-interval: 10s\n", 1, 1, "effect-interval: belongs in affinityd.yaml");
}
END_TEST

START_TEST(test_policy_via) {
        /* Not given: process. */
        ck_assert_int_eq(parse("policies:\n  - name: a\n    match: {comm: a}\n    cpus: \"0\"\n"), 0);
        ck_assert_int_eq(config->policies[0].via, VIA_PROCESS);
        teardown();
        ck_assert_int_eq(parse("policies:\n  - name: a\n    match: {comm: a}\n    via: process\n"), 0);
        ck_assert_int_eq(config->policies[0].via, VIA_PROCESS);
        teardown();

        /* systemd with literal unit names, one or a list; the location of the value is kept. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match:\n      unit: [web.service, \"run-u7.scope\"]\n"
                      "    cpus: \"1\"\n    via: systemd\n"),
                0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_int_eq(config->policies[0].via, VIA_SYSTEMD);
        ck_assert_uint_eq(config->policies[0].via_location.line, 6);
        ck_assert_uint_eq(config->policies[0].via_location.column, 10);
        ck_assert(strv_is(config->policies[0].match.unit, "web.service", "run-u7.scope", NULL));
        teardown();

        /* A glob names no unit systemd could be asked about: the error is at that entry. */
        check_one_error(
                "policies:\n  - name: a\n    match:\n      unit: [web.service, \"worker@*.service\"]\n"
                "    via: systemd\n",
                4, 27, "via: systemd needs literal unit names, but unit: \"worker@*.service\" is a glob");
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: \"web?.service\"}\n    via: systemd\n", 3, 19,
                "is a glob");
        /* No type suffix. */
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: web}\n    via: systemd\n", 3, 19,
                "needs full unit names with their type suffix, but unit: \"web\" has none; write "
                "\"web.service\"");
        /* No unit: matcher at all: at the via: value. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: web}\n    via: systemd\n", 4, 10,
                "via: systemd needs match: unit:");
        /* Unknown values. */
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: a.service}\n    via: sytemd\n", 4, 10,
                "via: invalid value \"sytemd\" (did you mean \"systemd\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: a.service}\n    via: cgroup\n", 4, 10,
                "via: invalid value \"cgroup\" (did you mean \"systemd\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: a.service}\n    via: [systemd]\n", 4, 10,
                "via: expected one of process, systemd");
        /* A glob is fine with via: process. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: {unit: \"w*.service\"}\n    via: process\n"), 0);
        ck_assert_uint_eq(diag.n_errors, 0);
}
END_TEST

START_TEST(test_policy_on_drift) {
        static const struct {
                const char *word;
                DriftMode mode;
        } ok[] = {
                {"report", DRIFT_REPORT},
                {"enforce", DRIFT_ENFORCE},
                {"respect", DRIFT_RESPECT},
        };
        char text[256];

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                snprintf(
                        text, sizeof text,
                        "policies:\n  - name: a\n    match: {comm: a}\n    cpus: \"0\"\n    on-drift: %s\n",
                        ok[i].word);
                ck_assert_int_eq(parse(text), 0);
                ck_assert_uint_eq(diag.n_items, 0);
                ck_assert_uint_eq(config->n_policies, 1);
                ck_assert_int_eq(config->policies[0].on_drift, ok[i].mode);
                teardown();
        }
        /* Not given: report. A second policy gets its own mode. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: {comm: a}\n  - name: b\n    match: {comm: b}\n"
                      "    on-drift: enforce\n"),
                0);
        ck_assert_uint_eq(config->n_policies, 2);
        ck_assert_int_eq(config->policies[0].on_drift, DRIFT_REPORT);
        ck_assert_int_eq(config->policies[1].on_drift, DRIFT_ENFORCE);
        teardown();

        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    on-drift: enforced\n", 4, 15,
                "on-drift: invalid value \"enforced\" (did you mean \"enforce\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    on-drift: restore\n", 4, 15,
                "on-drift: invalid value \"restore\" (did you mean \"enforce\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    on-drift: zzzzzzzz\n", 4, 15,
                "on-drift: invalid value \"zzzzzzzz\" (expected report, enforce or respect)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    on-drift: [report]\n", 4, 15,
                "on-drift: expected one of report, enforce, respect");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    threads:\n      - name: w\n"
                "        on-drift: report\n",
                6, 9, "unknown key \"on-drift\" in thread rule");
        check_one_settings_error("on-drift: report\n", 1, 1, "unknown key \"on-drift\" in the top level");
}
END_TEST

START_TEST(test_policy_processes_spread) {
        /* processes: spread, and a thread rule's spread-over: */
        ck_assert_int_eq(
                parse("policies:\n  - name: web\n    match: {comm: nginx}\n    cpus: {smt: one-per-core}\n"
                      "    processes: spread\n    threads:\n      - name: \"w*\"\n        cpus: spread\n"
                      "        spread-over: policy\n      - name: l\n        cpus: spread\n"
                      "        spread-over: process\n      - name: m\n        cpus: spread\n"),
                0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert(config->policies[0].spread_processes);
        ck_assert_uint_eq(config->policies[0].processes_location.line, 5);
        ck_assert_uint_eq(config->policies[0].processes_location.column, 16);
        ck_assert(config->policies[0].threads[0].spread_over_policy);
        ck_assert(!config->policies[0].threads[1].spread_over_policy);
        ck_assert(!config->policies[0].threads[2].spread_over_policy);
        teardown();
        /* Not given: each process on its own. */
        ck_assert_int_eq(parse("policies:\n  - name: a\n    match: {comm: a}\n    cpus: \"0\"\n"), 0);
        ck_assert(!config->policies[0].spread_processes);
        teardown();

        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    processes: spreaded\n", 4, 16,
                "processes: invalid value \"spreaded\" (did you mean \"spread\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    processes: [spread]\n", 4, 16,
                "processes: expected one of spread");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    threads:\n      - name: w\n"
                "        cpus: spread\n        spread-over: all\n",
                7, 22, "spread-over: invalid value \"all\" (did you mean \"policy\"?)");
        /* spread-over: says how a spread rule spreads. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    threads:\n      - name: w\n"
                "        cpus: \"0\"\n        spread-over: policy\n",
                7, 22, "spread-over: applies to cpus: spread only (thread rule \"w\" has no cpus: spread)");
        /* One order for every process: not with within: cpuset, nor via: systemd. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    cpus: {within: cpuset}\n"
                "    processes: spread\n",
                5, 16, "processes: spread can't be used with cpus: within: cpuset");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: a}\n    threads:\n      - name: w\n"
                "        cpus: spread\n        spread-over: policy\n      - name: x\n"
                "        cpus: {within: cpuset}\n",
                7, 22, "spread-over: policy can't be used with cpus: within: cpuset");
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: a.service}\n    via: systemd\n"
                "    processes: spread\n",
                5, 16, "processes: spread can't be used with via: systemd");
}
END_TEST

START_TEST(test_empty_files) {
        static const char *const texts[] = {
                "",
                "\n\n",
                "# only a comment\n",
                "# comment\n  # indented comment\n",
                "---\n",
                "---\n...\n",
                "policies:\n",
                "policies: []\n",
                "policies: ~\n",
                "~\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                ck_assert_int_eq(parse(texts[i]), 0);
                ck_assert_uint_eq(diag.n_items, 0);
                ck_assert_uint_eq(config->n_policies, 0);
                ck_assert(strv_is(config->files, "test.yaml", NULL));

                ck_assert_int_eq(parse_as(texts[i][0] == 'p' ? "" : texts[i], true), 0);
                ck_assert_uint_eq(diag.n_items, 0);
                ck_assert(!config->has_reserve);
        }
}
END_TEST

/* ---- error classes ------------------------------------------------------------------------ */

START_TEST(test_unknown_keys) {
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpu: \"1\"\n", 4, 5,
                "unknown key \"cpu\" in policy (did you mean \"cpus\"?)");
        check_one_error(
                "policies:\n  - nmae: a\n    name: b\n    match: {comm: x}\n", 2, 5,
                "unknown key \"nmae\" in policy (did you mean \"name\"?)");
        check_one_error(
                "polices: []\n", 1, 1,
                "unknown key \"polices\" in the top level (did you mean \"policies\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x, usr: root}\n", 3, 22,
                "unknown key \"usr\" in match (did you mean \"user\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: {node: 0}\n", 4, 12,
                "unknown key \"node\" in cpus (did you mean \"nodes\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    threads:\n      - name: t\n        cpu: "
                "1\n",
                6, 9, "unknown key \"cpu\" in thread rule (did you mean \"cpus\"?)");
        /* No close key: the message lists what is allowed. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    frobnicate: 1\n", 4, 5,
                "unknown key \"frobnicate\" in policy (expected one of: name, match, cpus, threads, memory, "
                "scheduler, on-drift, via, processes)");
        /* Keys that belong one level up or down say where they go. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    exe: /bin/x\n", 4, 5,
                "unknown key \"exe\" in policy (conditions go under match:)");
        check_one_error(
                "policies:\n  - name: a\n    match:\n      comm: x\n      cpus: 1\n", 5, 7,
                "unknown key \"cpus\" in match (it belongs to the policy");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    reserved: allow\n", 4, 5,
                "selector keys go under cpus:");
        check_one_error("name: a\n", 1, 1, "policies are entries of a policies: list");
}
END_TEST

START_TEST(test_wrong_types) {
        check_one_error("policies: web\n", 1, 11, "policies: expected a list of policies");
        check_one_error(
                "policies:\n  name: web\n", 2, 3,
                "policies: expected a list of policies (- name: …), got a mapping");
        check_one_error(
                "policies:\n  - web\n", 2, 5,
                "policies: each entry must be a mapping (name:, match:, cpus:, …), got \"web\"");
        check_one_error(
                "- name: a\n", 1, 1, "top level: expected a mapping with a policies: list, got a list");
        check_one_error("just words\n", 1, 1, "top level: expected a mapping");
        check_one_error(
                "policies:\n  - name: [a]\n    match: {comm: x}\n", 2, 11,
                "name: expected a string, got a list");
        check_one_error(
                "policies:\n  - name:\n    match: {comm: x}\n", 2, 10,
                "name: expected a string, got an empty value");
        check_one_error(
                "policies:\n  - name: a\n    match: [x]\n", 3, 12,
                "match: expected a mapping of conditions");
        check_one_error(
                "policies:\n  - name: a\n    match: nginx\n", 3, 12,
                "match: expected a mapping of conditions (comm:, exe:, cmdline:, user:, cgroup:, unit:, "
                "pod:, "
                "namespace:, container:), got \"nginx\"");
        check_one_error("policies:\n  - name: a\n    match:\n", 3, 11, "match: expected a mapping");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: {x: y}}\n", 3, 19,
                "comm: expected a string or a list of strings, got a mapping");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: [x, [y]]}\n", 3, 23,
                "comm: expected a string, got a list");
        check_one_error(
                "policies:\n  - name: a\n    match: {exe: }\n", 3, 18,
                "exe: expected a string or a list of strings, got an empty value");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: [0, 1]\n", 4, 11,
                "cpus: expected a cpu-list or a selector mapping, got a list");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus:\n", 4, 10,
                "cpus: expected a cpu-list");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: {nodes: [0]}\n", 4, 19,
                "nodes: expected a cpu-list");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    threads: worker\n", 4, 14,
                "threads: expected a list of thread rules");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    threads: [worker]\n", 4, 15,
                "threads: each entry must be a mapping (name:, cpus:), got \"worker\"");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: {reserved: [only]}\n", 4, 22,
                "reserved: expected one of avoid, allow, only, got a list");
        check_one_error("{[a]: 1}\n", 1, 2, "keys in the top level must be plain words, got a list");
}
END_TEST

START_TEST(test_kube_matchers) {
        /* A string or a list of globs each, like unit:; the three need the Kubernetes facts. */
        ck_assert_int_eq(
                parse("policies:\n  - name: ingress-workers\n    match: { namespace: \"ingress-*\", "
                      "container: nginx }\n    cpus: \"2-3\"\n"),
                0);
        ck_assert_uint_eq(diag.n_errors + diag.n_warnings, 0);
        ck_assert(strv_is(config->policies[0].match.pod_namespace, "ingress-*", NULL));
        ck_assert(strv_is(config->policies[0].match.container, "nginx", NULL));
        ck_assert_ptr_null(config->policies[0].match.pod);
        ck_assert_uint_eq(config->policies[0].match.facts, FACT_NAMESPACE | FACT_CONTAINER | FACT_CGROUP);
        ck_assert_uint_eq(config->facts & FACT_KUBE, FACT_NAMESPACE | FACT_CONTAINER);
        teardown();
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match:\n      pod: [\"web-*\", \"api-[0-9]*\"]\n"
                      "      comm: nginx\n"),
                0);
        ck_assert(strv_is(config->policies[0].match.pod, "web-*", "api-[0-9]*", NULL));
        ck_assert_uint_eq(config->facts & FACT_KUBE, FACT_POD);
        teardown();

        /* Wrong types, empty lists and patterns, each at its place. */
        check_one_error(
                "policies:\n  - name: a\n    match: {pod: {x: y}}\n", 3, 18,
                "pod: expected a string or a list of strings, got a mapping");
        check_one_error(
                "policies:\n  - name: a\n    match:\n      namespace: [a, [b]]\n", 4, 22,
                "namespace: expected a string, got a list");
        check_one_error(
                "policies:\n  - name: a\n    match: {container: }\n", 3, 24,
                "container: expected a string or a list of strings, got an empty value");
        check_one_error(
                "policies:\n  - name: a\n    match: {container: []}\n", 3, 24,
                "container: the list is empty");
        check_one_error(
                "policies:\n  - name: a\n    match: {pod: [a, \"\"]}\n", 3, 22, "pod: empty pattern");
        /* Unknown keys are still refused, with the closest name. */
        check_one_error(
                "policies:\n  - name: a\n    match: {pods: web}\n", 3, 13,
                "unknown key \"pods\" in match (did you mean \"pod\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {namespaces: web}\n", 3, 13,
                "unknown key \"namespaces\" in match (did you mean \"namespace\"?)");
}
END_TEST

START_TEST(test_required_and_empty) {
        check_one_error("policies:\n  - name: a\n", 2, 5, "policy is missing the required key \"match\"");
        check_one_error(
                "policies:\n  - match: {comm: x}\n", 2, 5, "policy is missing the required key \"name\"");
        check_one_error(
                "policies:\n  - name: a\n    match: {}\n", 3, 12,
                "match: needs at least one of comm, exe, cmdline, user, cgroup, unit, pod, namespace, "
                "container");
        check_one_error(
                "policies:\n  - name: \"\"\n    match: {comm: x}\n", 2, 11, "name: must not be empty");
        check_one_error(
                "policies:\n  - name: \"a\\tb\"\n    match: {comm: x}\n", 2, 11,
                "name: must not contain control characters");
        check_one_error(
                "policies:\n  - name: \"a\\0b\"\n    match: {comm: x}\n", 2, 11,
                "name: contains a NUL character");
        check_one_error("policies:\n  - name: a\n    match: {comm: []}\n", 3, 19, "comm: the list is empty");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: [x, \"\"]}\n", 3, 23, "comm: empty pattern");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: \"\"\n", 4, 11,
                "cpus: the cpu-list \"\" names no CPU");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: \" , \"\n", 4, 11, "names no CPU");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    threads:\n      - cpus: 1\n", 5, 9,
                "thread rule is missing the required key \"name\"");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    threads:\n      - name: ''\n", 5, 15,
                "name: must not be empty");
}
END_TEST

START_TEST(test_duplicate_keys) {
        check_one_error(
                "policies:\n  - name: a\n    name: b\n    match: {comm: x}\n", 3, 5,
                "duplicate key \"name\" in policy (first given at line 2, column 5)");
        check_one_error(
                "policies:\n  - name: a\n    match:\n      comm: x\n      comm: y\n", 5, 7,
                "duplicate key \"comm\" in match (first given at line 4, column 7)");
        check_one_error(
                "policies: []\npolicies: []\n", 2, 1,
                "duplicate key \"policies\" in the top level (first given at line 1, column 1)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: {nodes: 0, nodes: 1}\n", 4, 22,
                "duplicate key \"nodes\" in cpus");
}
END_TEST

START_TEST(test_cpu_lists) {
        /* Plain scalar: the column of the offending character itself. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: 0-3,x\n", 4, 15,
                "cpus: invalid cpu-list \"0-3,x\": expected a CPU number");
        /* Quoted scalar: one more for the quote. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: \"0-3,x\"\n", 4, 16,
                "invalid cpu-list \"0-3,x\"");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: '5-2'\n", 4, 14,
                "range end is lower than its start");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: \"1,9000\"\n", 4, 14,
                "number too large");
        /* Escapes make the text differ from the file: fall back to the scalar's start. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: \"\\x30-3,x\"\n", 4, 11,
                "invalid cpu-list \"0-3,x\"");
        /* In a flow mapping and in selector keys. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: {nodes: \"0,z\", reserved: "
                "allow}\n",
                4, 22, "nodes: invalid cpu-list \"0,z\"");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus:\n      packages: 0-q\n", 5, 19,
                "packages: invalid cpu-list \"0-q\"");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    threads:\n      - name: t\n        cpus: "
                "1-x\n",
                6, 17, "cpus: invalid cpu-list \"1-x\"");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: {reserved: alow}\n", 4, 22,
                "reserved: invalid value \"alow\" (did you mean \"allow\"?)");
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: {reserved: sometimes}\n", 4, 22,
                "reserved: invalid value \"sometimes\" (expected avoid, allow or only)");

        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: {comm: x}\n    cpus: {reserved: allow}\n"), 0);
        ck_assert_int_eq(config->policies[0].cpus.reserved, RESERVED_ALLOW);
        ck_assert_int_eq(parse("policies:\n  - name: a\n    match: {comm: x}\n    cpus: 0-7:2\n"), 0);
        ck_assert(set_is(&config->policies[0].cpus.literal, "0,2,4,6"));
}
END_TEST

START_TEST(test_matchers) {
        char expected[300], buf[256];
        regex_t re;
        int e;

        /* The regerror() text of this libc, not a hard-coded copy. */
        e = regcomp(&re, "(", REG_EXTENDED | REG_NOSUB);
        ck_assert_int_ne(e, 0);
        regerror(e, &re, buf, sizeof buf);
        snprintf(expected, sizeof expected, "cmdline: invalid regular expression \"(\": %s", buf);
        check_one_error("policies:\n  - name: a\n    match:\n      cmdline: [ok, \"(\"]\n", 4, 21, expected);

        /* Every bad entry of a list is reported. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match:\n      cmdline: [\"a{2\", ok, \"[b\"]\n"),
                -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 2);
        assert_error(4, 17, "invalid regular expression \"a{2\"");
        assert_error(4, 28, "invalid regular expression \"[b\"");

        check_one_error(
                "policies:\n  - name: a\n    match: {user: Bob}\n", 3, 19,
                "user: \"Bob\" is neither a user name ([a-z_][a-z0-9_-]*, optionally ending in $) nor a "
                "decimal uid");
        check_one_error(
                "policies:\n  - name: a\n    match: {user: \"1a\"}\n", 3, 19, "is neither a user name");
        check_one_error(
                "policies:\n  - name: a\n    match: {user: \"a b\"}\n", 3, 19, "is neither a user name");
        check_one_error(
                "policies:\n  - name: a\n    match: {user: 4294967295}\n", 3, 19,
                "user: uid 4294967295 is out of range");
        check_one_error(
                "policies:\n  - name: a\n    match: {user: 99999999999999999999999}\n", 3, 19,
                "is out of range");
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: {user: [root, 0, 4294967294, _x, a-b_c9, "
                      "host$]}\n"),
                0);
        ck_assert(strv_is(
                config->policies[0].match.user, "root", "0", "4294967294", "_x", "a-b_c9", "host$", NULL));

        /* comm longer than 15 characters without a glob can never match: a warning only. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match:\n      comm: [abcdefghijklmnopq, "
                      "\"abcdefghijklmnop*\"]\n"),
                0);
        ck_assert_uint_eq(diag.n_errors, 0);
        ck_assert_uint_eq(diag.n_warnings, 1);
        assert_diag_full(
                &diag, DIAGNOSTIC_WARNING, "test.yaml", 4, 14,
                "comm: \"abcdefghijklmnopq\" is 17 characters long");
        assert_diag_full(&diag, DIAGNOSTIC_WARNING, "test.yaml", 4, 14, "write \"abcdefghijklmno\"");
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: {comm: abcdefghijklmno}\n"), 0); /* exactly 15 */
        ck_assert_uint_eq(diag.n_items, 0);
        /* The same for thread names. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: {comm: x}\n    threads:\n      - name: "
                      "tokio-runtime-worker\n"),
                0);
        ck_assert_uint_eq(diag.n_warnings, 1);
        assert_diag_full(
                &diag, DIAGNOSTIC_WARNING, "test.yaml", 5, 15,
                "name: \"tokio-runtime-worker\" is 20 characters long");

        /* exe and cgroup are absolute paths. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: {exe: nginx, cgroup: \"*/x.service\"}\n"), 0);
        ck_assert_uint_eq(diag.n_warnings, 1);
        assert_diag_full(
                &diag, DIAGNOSTIC_WARNING, "test.yaml", 3, 18, "exe: \"nginx\" is not an absolute path");
}
END_TEST

START_TEST(test_yaml_level_errors) {
        /* libyaml's problem mark, 1-based. */
        check_one_error(
                "policies:\n  - name: a\n    match: {comm: x}\n    cpus: `x\n", 4, 11,
                "YAML syntax error: found character that cannot start any token");
        /* A tab where indentation goes: said as such, at the tab. */
        check_one_error(
                "policies:\n\t- name: a\n", 2, 1,
                "YAML syntax error: tabs are not allowed for indentation in YAML; use spaces");
        check_one_error(
                "policies:\n  - name: a\n    match:\n    \tcomm: x\n", 4, 5,
                "tabs are not allowed for indentation in YAML; use spaces");
        /* A tab between a key and its value is not indentation, and is fine. */
        ck_assert_int_eq(parse("policies:\n  - name:\ta\n    match: {comm:\tx}\n"), 0);
        check_one_error("policies: [a, b\n", 2, 1, "YAML syntax error: did not find expected ',' or ']'");
        check_one_error("policies:\n  - name: a\n   match: x\n", 3, 4, "YAML syntax error");
        check_one_error("policies: \"abc\n", 2, 1, "YAML syntax error: found unexpected end of stream");

        check_one_error("policies:\n  - name: \xff\n", 2, 11, "invalid input: invalid leading UTF-8 octet");

        /* Anchors and aliases are rejected where they are written. */
        ck_assert_int_eq(
                parse("policies:\n  - name: a\n    match: &m {comm: x}\n  - name: b\n    match: *m\n"),
                -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 2);
        assert_error(3, 12, "YAML anchors (&m) are not supported");
        assert_error(5, 12, "YAML aliases (*m) are not supported");
        check_one_error(
                "policies: !!seq []\n", 1, 11, "YAML tags (tag:yaml.org,2002:seq) are not supported");

        /* One document per file. */
        check_one_error("policies: []\n---\npolicies: []\n", 2, 1, "a second YAML document");
        check_one_error("policies: []\n...\n---\nreserve: 1\n", 3, 1, "a second YAML document");
        /* libyaml itself refuses a bare document after "...". */
        check_one_error(
                "policies: []\n...\nreserve: 1\n", 3, 1,
                "YAML syntax error: did not find expected <document start>");

        /* Deep nesting is refused before it costs anything. */
        {
                char deep[300];

                memset(deep, '[', 200);
                strcpy(deep + 200, "\n");
                check_one_error(deep, 1, 65, "nesting deeper than 64 levels");
        }
}
END_TEST

START_TEST(test_one_line_messages) {
        /* Text from the file is escaped, so every diagnostic stays one line. */
        ck_assert_int_eq(
                parse("policies:\n"
                      "  - name: a\n"
                      "    \"ma\\ntch\": {comm: x}\n"
                      "    match: {comm: x}\n"
                      "    cpus: \"1\\n2\\tx\"\n"
                      "    threads: \"a\\x1bb\"\n"),
                -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 3);
        assert_error(3, 5, "unknown key \"ma\\ntch\" in policy");
        assert_error(5, 11, "cpus: invalid cpu-list \"1\\n2\\tx\"");
        assert_error(6, 14, "threads: expected a list of thread rules (- name: …), got \"a\\x1bb\"");
        for (size_t i = 0; i < diag.n_items; i++)
                ck_assert_ptr_null(strpbrk(diag.items[i].message, "\n\t\x1b"));
}
END_TEST

START_TEST(test_errors_collected) {
        /* All errors of a file, in order; the bad policy does not hide the others. */
        ck_assert_int_eq(
                parse("policies:\n"
                      "  - name: a\n"
                      "    match: {comm: x, bogus: 1}\n"
                      "    cpus: 1-x\n"
                      "  - name: b\n"
                      "    match: {user: Bad}\n"
                      "  - name: a\n"
                      "    match: {comm: y}\n"),
                -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 4);
        assert_error(3, 22, "unknown key \"bogus\" in match");
        assert_error(4, 13, "invalid cpu-list \"1-x\"");
        assert_error(6, 19, "\"Bad\" is neither a user name");
        assert_error(7, 11, "duplicate policy name \"a\" (first defined at test.yaml:2:11)");
        ck_assert_uint_lt(diag.items[0].line, diag.items[1].line);
}
END_TEST

START_TEST(test_diagnostics_format) {
        _cleanup_free_ char *text = NULL, *one = NULL;
        Diagnostics d = {};

        ck_assert_int_eq(parse("policies:\n  - name: a\n    match: {comm: x}\n    cpu: \"1\"\n"), -EINVAL);
        ck_assert_int_eq(diagnostics_format(&diag, &text), 0);
        ck_assert_str_eq(
                text, "test.yaml:4:5: error: unknown key \"cpu\" in policy (did you mean \"cpus\"?)\n");

        ck_assert_int_eq(diagnostics_add(&d, DIAGNOSTIC_WARNING, "f.yaml", 3, 0, "w %d", 1), 0);
        ck_assert_int_eq(diagnostics_add(&d, DIAGNOSTIC_ERROR, "f.yaml", 0, 0, "e"), 0);
        ck_assert_int_eq(diagnostics_add(&d, DIAGNOSTIC_ERROR, NULL, 0, 0, "bare"), 0);
        ck_assert_uint_eq(d.n_errors, 2);
        ck_assert_uint_eq(d.n_warnings, 1);
        ck_assert_int_eq(diagnostic_format(&d.items[0], &one), 0);
        ck_assert_str_eq(one, "f.yaml:3: warning: w 1");
        free(text);
        ck_assert_int_eq(diagnostics_format(&d, &text), 0);
        ck_assert_str_eq(text, "f.yaml:3: warning: w 1\nf.yaml: error: e\nerror: bare\n");
        diagnostics_done(&d);
        free(text);
        ck_assert_int_eq(diagnostics_format(&d, &text), 0);
        ck_assert_str_eq(text, "");
}
END_TEST

/* ---- selectors: near, cores, cpus, smt, kind, exclusive, spread ----------------------------- */

static const char selector_text[] =
        "policies:\n"                                                                 /* 1 */
        "  - name: gw\n"                                                              /* 2 */
        "    match: {comm: gw}\n"                                                     /* 3 */
        "    cpus:\n"                                                                 /* 4 */
        "      near: eth0\n"                                                          /* 5 */
        "      cores: 8\n"                                                            /* 6 */
        "      smt: one-per-core\n"                                                   /* 7 */
        "      exclusive: true\n"                                                     /* 8 */
        "      reserved: allow\n"                                                     /* 9 */
        "  - name: tokio\n"                                                           /* 10 */
        "    match: {comm: tokio}\n"                                                  /* 11 */
        "    cpus: {packages: \"0\", cpus: 4, kind: performance, exclusive: false}\n" /* 12 */
        "    threads:\n"                                                              /* 13 */
        "      - name: \"tokio-runtime-w*\"\n"                                        /* 14 */
        "        cpus: spread\n"                                                      /* 15 */
        "      - name: blocking\n"                                                    /* 16 */
        "        cpus: {nodes: 1, cpus: \"2\", smt: all}\n"                           /* 17 */
        "      - name: \"io*\"\n"                                                     /* 18 */
        "        cpus: '0-1'\n"                                                       /* 19 */
        "  - name: db\n"                                                              /* 20 */
        "    match: {comm: db}\n"                                                     /* 21 */
        "    cpus: {near: \"3B:00.1\", kind: efficiency}\n"                           /* 22 */
        "  - name: plain\n"                                                           /* 23 */
        "    match: {comm: plain}\n"                                                  /* 24 */
        "    cpus: {nodes: 0}\n";                                                     /* 25 */

START_TEST(test_selector_model) {
        const Policy *gw, *tokio, *db, *plain;

        ck_assert_int_eq(parse(selector_text), 0);
        if (diag.n_items > 0)
                dump_diagnostics(&diag);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_uint_eq(config->n_policies, 4);

        gw = config_find_policy(config, "gw");
        ck_assert_ptr_nonnull(gw);
        ck_assert_int_eq(gw->cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert_uint_eq(gw->cpus.location.line, 5);
        ck_assert_uint_eq(gw->cpus.location.column, 7);
        ck_assert_str_eq(gw->cpus.near, "eth0");
        ck_assert_uint_eq(gw->cpus.n_cores, 8);
        ck_assert_uint_eq(gw->cpus.n_cpus, 0);
        ck_assert_int_eq(gw->cpus.smt, SMT_ONE_PER_CORE);
        ck_assert(gw->cpus.exclusive);
        ck_assert_int_eq(gw->cpus.reserved, RESERVED_ALLOW);
        ck_assert_int_eq(gw->cpus.cpu_kind, CPU_KIND_ANY);
        ck_assert(!gw->cpus.has_nodes && !gw->cpus.has_packages);

        tokio = config_find_policy(config, "tokio");
        ck_assert_ptr_nonnull(tokio);
        ck_assert_int_eq(tokio->cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert(tokio->cpus.has_packages);
        ck_assert(set_is(&tokio->cpus.packages, "0"));
        ck_assert_uint_eq(tokio->cpus.n_cpus, 4);
        ck_assert_uint_eq(tokio->cpus.n_cores, 0);
        ck_assert_int_eq(tokio->cpus.cpu_kind, CPU_KIND_PERFORMANCE);
        ck_assert(!tokio->cpus.exclusive);
        ck_assert_ptr_null(tokio->cpus.near);
        ck_assert_uint_eq(tokio->n_threads, 3);
        ck_assert_str_eq(tokio->threads[0].name, "tokio-runtime-w*");
        ck_assert_int_eq(tokio->threads[0].cpus.kind, CPU_SELECTOR_SPREAD);
        ck_assert_uint_eq(tokio->threads[0].cpus.location.line, 15);
        ck_assert_uint_eq(tokio->threads[0].cpus.location.column, 15);
        ck_assert_int_eq(tokio->threads[1].cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert(set_is(&tokio->threads[1].cpus.nodes, "1"));
        ck_assert_uint_eq(tokio->threads[1].cpus.n_cpus, 2); /* a quoted count is a count too */
        ck_assert_int_eq(tokio->threads[1].cpus.smt, SMT_ALL);
        ck_assert_int_eq(tokio->threads[2].cpus.kind, CPU_SELECTOR_LITERAL);
        ck_assert(set_is(&tokio->threads[2].cpus.literal, "0-1"));

        db = config_find_policy(config, "db");
        ck_assert_ptr_nonnull(db);
        ck_assert_str_eq(db->cpus.near, "0000:3b:00.1"); /* canonical, as sysfs writes it */
        ck_assert_int_eq(db->cpus.cpu_kind, CPU_KIND_EFFICIENCY);

        /* Every new key has its default when not given. */
        plain = config_find_policy(config, "plain");
        ck_assert_ptr_nonnull(plain);
        ck_assert_ptr_null(plain->cpus.near);
        ck_assert_uint_eq(plain->cpus.n_cores, 0);
        ck_assert_uint_eq(plain->cpus.n_cpus, 0);
        ck_assert_int_eq(plain->cpus.smt, SMT_ALL);
        ck_assert_int_eq(plain->cpus.cpu_kind, CPU_KIND_ANY);
        ck_assert(!plain->cpus.exclusive);
        ck_assert_int_eq(plain->cpus.reserved, RESERVED_AVOID);
}
END_TEST

/* The policy prefix of the one-line selector cases: line 4 is "    cpus: {…}", its first key at
 * column 12. */
#define P "policies:\n  - name: a\n    match: {comm: x}\n"

START_TEST(test_selector_values) {
        static const struct {
                const char *near;
                const char *stored;
        } near_ok[] = {
                {"eth0", "eth0"},
                {"enp59s0f0np0", "enp59s0f0np0"},
                {"123456789012345", "123456789012345"}, /* 15: the longest name */
                {"0000:3b:00.0", "0000:3b:00.0"},
                {"0000:AF:1f.7", "0000:af:1f.7"},
                {"3b:00.0", "0000:3b:00.0"},
                {"10000:01:00.0", "10000:01:00.0"}, /* VMD domains are wider than 4 digits */
                {"mlx5_0", "mlx5_0"},
        };
        static const struct {
                const char *value;
                SmtMode smt;
        } smt_ok[] = {{"all", SMT_ALL}, {"one-per-core", SMT_ONE_PER_CORE}};
        static const char *const count_ok[] = {"1", "8", "\"16\"", "8192", "007"};
        static const unsigned count_value[] = {1, 8, 16, 8192, 7};

        for (size_t i = 0; i < ELEMENTSOF(near_ok); i++) {
                _cleanup_free_ char *text = NULL;

                ck_assert_int_ge(asprintf(&text, P "    cpus: {near: \"%s\"}\n", near_ok[i].near), 0);
                ck_assert_int_eq(parse(text), 0);
                ck_assert_uint_eq(diag.n_items, 0);
                ck_assert_str_eq(config->policies[0].cpus.near, near_ok[i].stored);
        }
        for (size_t i = 0; i < ELEMENTSOF(smt_ok); i++) {
                _cleanup_free_ char *text = NULL;

                ck_assert_int_ge(asprintf(&text, P "    cpus: {cores: 2, smt: %s}\n", smt_ok[i].value), 0);
                ck_assert_int_eq(parse(text), 0);
                ck_assert_int_eq(config->policies[0].cpus.smt, smt_ok[i].smt);
                ck_assert_uint_eq(config->policies[0].cpus.n_cores, 2);
        }
        for (size_t i = 0; i < ELEMENTSOF(count_ok); i++) {
                _cleanup_free_ char *a = NULL, *b = NULL;

                ck_assert_int_ge(asprintf(&a, P "    cpus: {cores: %s}\n", count_ok[i]), 0);
                ck_assert_int_eq(parse(a), 0);
                ck_assert_uint_eq(config->policies[0].cpus.n_cores, count_value[i]);
                ck_assert_int_ge(asprintf(&b, P "    cpus: {cpus: %s}\n", count_ok[i]), 0);
                ck_assert_int_eq(parse(b), 0);
                ck_assert_uint_eq(config->policies[0].cpus.n_cpus, count_value[i]);
                ck_assert_uint_eq(config->policies[0].cpus.n_cores, 0);
        }
        ck_assert_int_eq(parse(P "    cpus: {exclusive: false, cores: 1}\n"), 0);
        ck_assert(!config->policies[0].cpus.exclusive);
        ck_assert_int_eq(parse(P "    cpus: {exclusive: True}\n"), 0);
        ck_assert(config->policies[0].cpus.exclusive);
        /* Counts are counts of the selector: at the policy level cpus: 4 stays the cpu-list "4". */
        ck_assert_int_eq(parse(P "    cpus: 4\n"), 0);
        ck_assert_int_eq(config->policies[0].cpus.kind, CPU_SELECTOR_LITERAL);
        ck_assert(set_is(&config->policies[0].cpus.literal, "4"));
        ck_assert_uint_eq(config->policies[0].cpus.n_cpus, 0);
}
END_TEST

START_TEST(test_selector_errors) {
        /* cores: and cpus: counts. */
        check_one_error(P "    cpus: {cores: 0}\n", 4, 19, "cores: must be at least 1");
        check_one_error(P "    cpus: {cores: \"0\"}\n", 4, 19, "cores: must be at least 1");
        check_one_error(P "    cpus: {cores: -2}\n", 4, 19, "cores: must be at least 1");
        check_one_error(
                P "    cpus: {cores: eight}\n", 4, 19,
                "cores: expected a number of cores such as 8, got \"eight\"");
        check_one_error(P "    cpus: {cores: 2.5}\n", 4, 19, "cores: expected a number of cores such as 8");
        check_one_error(P "    cpus: {cores: 0x10}\n", 4, 19, "cores: expected a number of cores");
        check_one_error(
                P "    cpus: {cores: 8193}\n", 4, 19,
                "cores: 8193 is more cores than affinityd can handle (at most 8192)");
        check_one_error(
                P "    cpus: {cores: 99999999999999999999999}\n", 4, 19, "is more cores than affinityd");
        check_one_error(
                P "    cpus: {cores: [8]}\n", 4, 19,
                "cores: expected a number of cores such as 8, got a list");
        check_one_error(
                P "    cpus: {cores: }\n", 4, 19,
                "cores: expected a number of cores such as 8, got an empty value");
        check_one_error(P "    cpus: {cpus: 0}\n", 4, 18, "cpus: must be at least 1");
        check_one_error(
                P "    cpus: {cpus: \"0-3\"}\n", 4, 18,
                "cpus: expected a number of CPUs such as 8, got \"0-3\" (inside a selector mapping cpus: is "
                "a count");

        /* cores: and cpus: exclude each other: the later key is named, in either order and form. */
        check_one_error(
                P "    cpus: {cores: 2, cpus: 4}\n", 4, 22, "cores: and cpus: can't be used together");
        check_one_error(
                P "    cpus:\n      cpus: 4\n      nodes: 0\n      cores: 2\n", 7, 7,
                "can't be used together");
        /* Only one error when one of the two is already wrong. */
        check_one_error(P "    cpus: {cores: 0, cpus: 4}\n", 4, 19, "cores: must be at least 1");
        check_one_error(
                P "    threads:\n      - name: t\n        cpus: {cores: 1, cpus: 1}\n", 6, 26,
                "cores: and cpus: can't be used together");

        /* smt: and kind:, with suggestions. */
        check_one_error(
                P "    cpus: {smt: maybe}\n", 4, 17,
                "smt: invalid value \"maybe\" (expected one-per-core: never two SMT siblings of one core, "
                "or "
                "all: every SMT sibling may be used)");
        check_one_error(
                P "    cpus: {smt: one-per-cor}\n", 4, 17,
                "smt: invalid value \"one-per-cor\" (did you mean \"one-per-core\"?)");
        check_one_error(
                P "    cpus: {smt: off}\n", 4, 17,
                "smt: invalid value \"off\" (did you mean \"one-per-core\"?)");
        check_one_error(P "    cpus: {smt: yes}\n", 4, 17, "(did you mean \"all\"?)");
        check_one_error(
                P "    cpus: {smt: [all]}\n", 4, 17, "smt: expected one of one-per-core, all, got a list");
        check_one_error(
                P "    cpus: {kind: efficient}\n", 4, 18,
                "kind: invalid value \"efficient\" (did you mean \"efficiency\"?)");
        check_one_error(P "    cpus: {kind: P-core}\n", 4, 18, "(did you mean \"performance\"?)");
        check_one_error(
                P "    cpus: {kind: turbo}\n", 4, 18,
                "kind: invalid value \"turbo\" (expected performance (P-cores) or efficiency (E-cores))");

        /* exclusive: is a boolean, written true or false. */
        check_one_error(
                P "    cpus: {exclusive: yes}\n", 4, 23, "exclusive: expected true or false, got \"yes\"");
        check_one_error(
                P "    cpus: {exclusive: 1}\n", 4, 23, "exclusive: expected true or false, got \"1\"");
        check_one_error(
                P "    cpus: {exclusive: }\n", 4, 23,
                "exclusive: expected true or false, got an empty value");

        /* near: syntax only; the column points at the offending character where it can. */
        check_one_error(
                P "    cpus: {near: eth0/1}\n", 4, 22,
                "near: \"eth0/1\" is not a network interface name (they contain no \"/\"");
        check_one_error(
                P "    cpus: {near: \"eth 0\"}\n", 4, 22,
                "near: \"eth 0\" is not a network interface name (they contain no white space)");
        check_one_error(
                P "    cpus: {near: averyveryverylongname}\n", 4, 18,
                "near: \"averyveryverylongname\" is 21 characters long, but network interface names have at "
                "most 15");
        check_one_error(
                P "    cpus: {near: \"0000:3b:00\"}\n", 4, 18, "near: \"0000:3b:00\" is not a PCI address");
        check_one_error(
                P "    cpus: {near: \"0000:3b:20.0\"}\n", 4, 18, "is not a PCI address"); /* device > 1f */
        check_one_error(
                P "    cpus: {near: \"0000:3b:00.8\"}\n", 4, 18, "is not a PCI address"); /* function > 7 */
        check_one_error(P "    cpus: {near: \"0000:3g:00.0\"}\n", 4, 18, "is not a PCI address");
        check_one_error(P "    cpus: {near: \"\"}\n", 4, 18, "near: must not be empty");
        check_one_error(P "    cpus: {near: ..}\n", 4, 18, "near: \"..\" is not a network interface name");
        check_one_error(
                P "    cpus: {near: [eth0, eth1]}\n", 4, 18, "near: expected a network interface name");

        /* spread belongs to thread rules. */
        check_one_error(P "    cpus: spread\n", 4, 11, "cpus: \"spread\" is only valid in a thread rule");
        check_one_error(
                P "    threads:\n      - name: t\n        spread: true\n", 6, 9,
                "unknown key \"spread\" in thread rule (write cpus: spread in a thread rule)");
        check_one_error(
                P "    cpus: {spread: true}\n", 4, 12,
                "unknown key \"spread\" in cpus (write cpus: spread in a thread rule, or spread: true "
                "next to cpus: in an irqs: rule)");
        check_one_error(
                P "    threads:\n      - name: t\n        cpus: [spread]\n", 6, 15,
                "cpus: expected a cpu-list or a selector mapping, got a list");
        check_one_error(
                P "    threads:\n      - name: t\n        cpus: {cores: 0}\n", 6, 23,
                "cores: must be at least 1");

        /* Did you mean, for the new keys; and where they belong. */
        check_one_error(
                P "    cpus: {core: 8}\n", 4, 12, "unknown key \"core\" in cpus (did you mean \"cores\"?)");
        check_one_error(P "    cpus: {exclusiv: true}\n", 4, 12, "(did you mean \"exclusive\"?)");
        check_one_error(P "    cpus: {neer: eth0}\n", 4, 12, "(did you mean \"near\"?)");
        check_one_error(P "    cpus: {kinds: performance}\n", 4, 12, "(did you mean \"kind\"?)");
        check_one_error(P "    cpus: {smp: all}\n", 4, 12, "(did you mean \"smt\"?)");
        check_one_error(P "    cpus: {cpu: 2}\n", 4, 12, "(did you mean \"cpus\"?)");
        check_one_error(
                P "    cpus: {frobnicate: 1}\n", 4, 12,
                "unknown key \"frobnicate\" in cpus (expected one of: nodes, packages, near, kind, "
                "reserved, "
                "cores, cpus, smt, exclusive, within, avoid)");
        check_one_error(
                P "    cores: 8\n", 4, 5, "unknown key \"cores\" in policy (selector keys go under cpus:)");
        check_one_error(P "    near: eth0\n", 4, 5, "selector keys go under cpus:");
        check_one_error(P "    cpus: {cores: 1, cores: 2}\n", 4, 22, "duplicate key \"cores\" in cpus");

        /* Every error of a selector is reported, each at its place. */
        ck_assert_int_eq(parse(P "    cpus:\n      cores: 0\n      smt: maybe\n      near: a/b\n"), -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 3);
        assert_error(5, 14, "cores: must be at least 1");
        assert_error(6, 12, "smt: invalid value \"maybe\"");
        assert_error(7, 14, "near: \"a/b\" is not a network interface name");
}
END_TEST

#undef P

/* ---- files and drop-ins ------------------------------------------------------------------- */

static char *tmp_path(const char *rel) {
        char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/%s", tmpdir, rel), 0);
        return p;
}

static void write_file(const char *rel, const char *content) {
        _cleanup_free_ char *p = tmp_path(rel);
        FILE *f = fopen(p, "we");

        ck_assert_msg(f, "fopen %s: %m", p);
        fputs(content, f);
        ck_assert_int_eq(fclose(f), 0);
}

static void make_dir(const char *rel) {
        _cleanup_free_ char *p = tmp_path(rel);

        ck_assert_int_eq(mkdir(p, 0755), 0);
}

static void make_symlink(const char *target, const char *rel) {
        _cleanup_free_ char *p = tmp_path(rel);

        ck_assert_int_eq(symlink(target, p), 0);
}

static void write_policy(const char *rel, const char *name) {
        char text[256];

        snprintf(text, sizeof text, "policies:\n  - name: %s\n    match: {comm: %s}\n", name, name);
        write_file(rel, text);
}

static void assert_policy_names(const Config *c, ...) {
        va_list ap;
        size_t i = 0;

        va_start(ap, c);
        for (const char *s; (s = va_arg(ap, const char *)); i++) {
                ck_assert_uint_lt(i, c->n_policies);
                ck_assert_str_eq(c->policies[i].name, s);
        }
        va_end(ap);
        ck_assert_uint_eq(i, c->n_policies);
}

START_TEST(test_dropins) {
        _cleanup_free_ char *settings = tmp_path("affinityd.yaml"), *usr = tmp_path("usr"),
                            *run = tmp_path("run"), *etc = tmp_path("etc"), *missing = tmp_path("missing");
        const char *dirs[] = {usr, missing, run, etc, NULL};
        char expect[PATH_MAX];

        make_dir("usr");
        make_dir("run");
        make_dir("etc");
        write_file("affinityd.yaml", "reserve: 0\n");
        write_policy("usr/10-a.yaml", "vendor-a");
        write_policy("etc/10-a.yaml", "admin-a"); /* /etc overrides /usr/lib */
        write_policy("usr/20-b.yaml", "vendor-b");
        make_symlink("/dev/null", "etc/20-b.yaml"); /* masked */
        write_policy("run/05-c.yaml", "c");         /* /run sorts by name among the others */
        write_policy("usr/30-d.yaml", "vendor-d");
        write_policy("run/30-d.yaml", "run-d"); /* /run overrides /usr/lib */
        write_policy("etc/50-f.yaml", "f");
        make_symlink("/dev/null", "usr/60-g.yaml"); /* a lower mask does not hide a higher file */
        write_policy("etc/60-g.yaml", "g");
        make_symlink("/dev/null", "run/70-h.yaml"); /* a mask with nothing to mask */
        write_file("usr/.hidden.yaml", "{{{ not yaml");
        write_file("usr/notes.txt", "{{{ not yaml");
        write_file("usr/40-e.yaml~", "{{{ not yaml");
        write_file("usr/40-e.yml", "{{{ not yaml");

        ck_assert_int_eq(config_load_dirs(settings, dirs, &config, &diag), 0);
        if (diag.n_items > 0)
                dump_diagnostics(&diag);
        ck_assert_uint_eq(diag.n_items, 0);
        assert_policy_names(config, "c", "admin-a", "run-d", "f", "g", NULL);
        ck_assert(config->has_reserve);

        ck_assert_uint_eq(strv_length(config->files), 6);
        ck_assert_str_eq(config->files[0], settings);
        snprintf(expect, sizeof expect, "%s/05-c.yaml", run);
        ck_assert_str_eq(config->files[1], expect);
        snprintf(expect, sizeof expect, "%s/10-a.yaml", etc);
        ck_assert_str_eq(config->files[2], expect);
        snprintf(expect, sizeof expect, "%s/30-d.yaml", run);
        ck_assert_str_eq(config->files[3], expect);
        ck_assert_str_eq(config->policies[1].location.file, config->files[2]);

        /* Without settings, and with no directories at all. */
        config = config_free(config);
        ck_assert_int_eq(config_load_dirs(NULL, dirs, &config, &diag), 0);
        ck_assert(!config->has_reserve);
        ck_assert_uint_eq(strv_length(config->files), 5);
        config = config_free(config);
        ck_assert_int_eq(config_load_dirs(missing, (const char *const[]){NULL}, &config, &diag), 0);
        ck_assert_uint_eq(config->n_policies, 0);
        ck_assert_uint_eq(strv_length(config->files), 0);
}
END_TEST

START_TEST(test_dropin_errors) {
        _cleanup_free_ char *d = tmp_path("d"), *a = tmp_path("d/10-a.yaml"), *b = tmp_path("d/20-b.yaml"),
                            *notdir = tmp_path("d/10-a.yaml");
        const char *dirs[] = {d, NULL};
        Config *untouched = (Config *)0x1;
        char msg[PATH_MAX + 64];

        make_dir("d");
        write_file("d/10-a.yaml", "policies:\n  - name: same\n    match: {comm: x}\n    cpus: 1-x\n");
        write_file(
                "d/20-b.yaml",
                "policies:\n  - name: other\n    match: {comm: y}\n  - name: same\n    match: {comm: z}\n   "
                " bogus: 1\n");
        write_file("d/30-c.yaml", "policies:\n  - name: fine\n    match: {comm: f}\n");

        /* Every file's errors, and the duplicate naming both places; *ret untouched. */
        ck_assert_int_eq(config_load_dirs(NULL, dirs, &untouched, &diag), -EINVAL);
        ck_assert_ptr_eq(untouched, (Config *)0x1);
        ck_assert_uint_eq(diag.n_errors, 3);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, a, 4, 13, "invalid cpu-list \"1-x\"");
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, b, 6, 5, "unknown key \"bogus\" in policy");
        snprintf(msg, sizeof msg, "duplicate policy name \"same\" (first defined at %s:2:11)", a);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, b, 4, 11, msg);

        /* Only a duplicate: still both places. */
        diagnostics_done(&diag);
        write_file("d/10-a.yaml", "policies:\n  - name: same\n    match: {comm: x}\n");
        write_file("d/20-b.yaml", "policies:\n  - name: same\n    match: {comm: z}\n");
        ck_assert_int_eq(config_load_dirs(NULL, dirs, &untouched, &diag), -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 1);
        snprintf(msg, sizeof msg, "duplicate policy name \"same\" (first defined at %s:2:11)", a);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, b, 2, 11, msg);

        /* A policy directory that is not a directory: an I/O error, reported. */
        diagnostics_done(&diag);
        ck_assert_int_eq(
                config_load_dirs(NULL, (const char *const[]){notdir, NULL}, &untouched, &diag), -ENOTDIR);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, notdir, 0, 0, "cannot read directory");

        /* A dangling symlink in a policy directory is an error, not silently skipped. */
        diagnostics_done(&diag);
        unlink(b);
        make_symlink("/nonexistent/x.yaml", "d/20-b.yaml");
        ck_assert_int_eq(config_load_dirs(NULL, dirs, &untouched, &diag), -ENOENT);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, b, 0, 0, "cannot read: No such file or directory");
        ck_assert_ptr_eq(untouched, (Config *)0x1);
}
END_TEST

START_TEST(test_config_dir_and_paths) {
        _cleanup_free_ char *dir = tmp_path("conf"), *settings = tmp_path("conf/affinityd.yaml"),
                            *rules = tmp_path("conf/policy.d/demo.yaml"), *extra = tmp_path("extra.yaml"),
                            *nothere = tmp_path("nothere.yaml");

        make_dir("conf");
        make_dir("conf/policy.d");
        write_file("conf/affinityd.yaml", "reserve: \"0\"\n");
        write_policy("conf/policy.d/demo.yaml", "demo");
        write_policy("extra.yaml", "extra");

        /* --config-dir=DIR */
        ck_assert_int_eq(config_load(dir, &config, &diag), 0);
        assert_policy_names(config, "demo", NULL);
        ck_assert(config->has_reserve);
        ck_assert(strv_is(config->files, settings, rules, NULL));
        config = config_free(config);

        /* affinityctl validate PATH…: settings by name, rules otherwise, a directory as --config-dir. */
        ck_assert_int_eq(config_load_paths((char *[]){extra, settings, NULL}, &config, &diag), 0);
        assert_policy_names(config, "extra", NULL);
        ck_assert(config->has_reserve);
        ck_assert(strv_is(config->files, extra, settings, NULL));
        config = config_free(config);

        ck_assert_int_eq(config_load_paths((char *[]){dir, extra, NULL}, &config, &diag), 0);
        assert_policy_names(config, "demo", "extra", NULL);
        config = config_free(config);

        /* The same settings twice: reserve is set once. */
        ck_assert_int_eq(config_load_paths((char *[]){settings, settings, NULL}, &config, &diag), -EINVAL);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, settings, 1, 1, "reserve: already set at");

        diagnostics_done(&diag);
        ck_assert_int_eq(config_load_paths((char *[]){extra, nothere, NULL}, &config, &diag), -ENOENT);
        ck_assert_ptr_null(config);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, nothere, 0, 0, "cannot read: No such file or directory");

        /* A rules file read as rules even if it holds settings keys, and the reverse. */
        diagnostics_done(&diag);
        write_file("extra.yaml", "reserve: 1\n");
        ck_assert_int_eq(config_load_paths((char *[]){extra, NULL}, &config, &diag), -EINVAL);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, extra, 1, 1, "reserve: belongs in affinityd.yaml");
}
END_TEST

/* --config-dir=DIR: a DIR that can't be one is an error naming it, never silently "no policies". */
START_TEST(test_config_dir_mistakes) {
        _cleanup_free_ char *missing = tmp_path("missing"), *file = tmp_path("file"),
                            *conf = tmp_path("conf"), *pd = tmp_path("conf/policy.d"),
                            *empty = tmp_path("empty"), *settings_only = tmp_path("settings-only");
        Config *untouched = (Config *)0x1;

        make_dir("conf");
        make_dir("conf/policy.d");
        write_policy("conf/policy.d/10-a.yaml", "a");
        write_file("file", "reserve: 0\n");
        make_dir("empty");
        write_file("empty/notes.txt", "not a policy\n");
        make_dir("settings-only");
        write_file("settings-only/affinityd.yaml", "reserve: 0\n");

        ck_assert_int_eq(config_load("", &untouched, &diag), -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 1);
        assert_diag_full(
                &diag, DIAGNOSTIC_ERROR, NULL, 0, 0, "the configuration directory is an empty string");

        diagnostics_done(&diag);
        ck_assert_int_eq(config_load(missing, &untouched, &diag), -ENOENT);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, missing, 0, 0, "configuration directory does not exist");

        diagnostics_done(&diag);
        ck_assert_int_eq(config_load(file, &untouched, &diag), -ENOTDIR);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, file, 0, 0, "not a directory");

        /* A policy.d directory given for the config dir: a hint to pass its parent. */
        diagnostics_done(&diag);
        ck_assert_int_eq(config_load(pd, &untouched, &diag), -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 1);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, pd, 0, 0, "looks like a policy.d directory");
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, pd, 0, 0, "pass its parent");
        ck_assert_ptr_eq(untouched, (Config *)0x1);

        /* Neither affinityd.yaml nor policy.d/ nor *.yaml: runs with no policies, but says so. */
        diagnostics_done(&diag);
        ck_assert_int_eq(config_load(empty, &config, &diag), 0);
        ck_assert_uint_eq(config->n_policies, 0);
        ck_assert_uint_eq(diag.n_errors, 0);
        ck_assert_uint_eq(diag.n_warnings, 1);
        assert_diag_full(&diag, DIAGNOSTIC_WARNING, empty, 0, 0, "no affinityd.yaml and no policy.d/");
        config = config_free(config);

        /* Either one is enough, silently. */
        diagnostics_done(&diag);
        ck_assert_int_eq(config_load(conf, &config, &diag), 0);
        assert_policy_names(config, "a", NULL);
        config = config_free(config);
        ck_assert_int_eq(config_load(settings_only, &config, &diag), 0);
        ck_assert(config->has_reserve);
        ck_assert_uint_eq(config->n_policies, 0);
        ck_assert_uint_eq(diag.n_items, 0);
}
END_TEST

/* affinityctl validate DIR: a config dir, else a policy.d directory; never 0 files silently. */
START_TEST(test_paths_directories) {
        _cleanup_free_ char *pd = tmp_path("pd"), *broken = tmp_path("pd/20-broken.yaml"),
                            *good = tmp_path("pd/10-good.yaml"), *later = tmp_path("pd/30-later.yaml"),
                            *yamldir = tmp_path("foo.yaml"), *empty = tmp_path("empty"),
                            *conf = tmp_path("conf");
        Config *untouched = (Config *)0x1;

        make_dir("pd");
        write_policy("pd/30-later.yaml", "later");
        write_policy("pd/10-good.yaml", "good");
        write_file("pd/.hidden.yaml", "{{{ not yaml");
        write_file("pd/README", "{{{ not yaml");

        /* A policy.d directory: its *.yaml files in name order. */
        ck_assert_int_eq(config_load_paths((char *[]){pd, NULL}, &config, &diag), 0);
        assert_policy_names(config, "good", "later", NULL);
        ck_assert(strv_is(config->files, good, later, NULL));
        ck_assert_uint_eq(diag.n_items, 0);
        config = config_free(config);

        /* ... and a broken file in it is found. */
        write_file("pd/20-broken.yaml", "policies:\n  - name: broken\n    match: {comm: x}\n    cpus: 0-\n");
        ck_assert_int_eq(config_load_paths((char *[]){pd, NULL}, &untouched, &diag), -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 1);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, broken, 4, 13, "invalid cpu-list \"0-\"");
        ck_assert_ptr_eq(untouched, (Config *)0x1);

        /* A directory named like a YAML file is not read as anything. */
        diagnostics_done(&diag);
        make_dir("foo.yaml");
        write_policy("foo.yaml/10-x.yaml", "x");
        ck_assert_int_eq(config_load_paths((char *[]){yamldir, NULL}, &untouched, &diag), -EISDIR);
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, yamldir, 0, 0, "is a directory");

        /* An empty directory: valid, with a warning that there was nothing to read. */
        diagnostics_done(&diag);
        make_dir("empty");
        ck_assert_int_eq(config_load_paths((char *[]){empty, NULL}, &config, &diag), 0);
        ck_assert_uint_eq(config->n_policies, 0);
        ck_assert_uint_eq(diag.n_warnings, 1);
        assert_diag_full(&diag, DIAGNOSTIC_WARNING, empty, 0, 0, "nothing to read");
        config = config_free(config);

        /* A config dir with only policy.d/ (no affinityd.yaml) is still a config dir. */
        diagnostics_done(&diag);
        make_dir("conf");
        make_dir("conf/policy.d");
        write_policy("conf/policy.d/10-c.yaml", "c");
        write_policy("conf/stray.yaml", "stray"); /* not in policy.d/: not read */
        ck_assert_int_eq(config_load_paths((char *[]){conf, NULL}, &config, &diag), 0);
        assert_policy_names(config, "c", NULL);
        ck_assert_uint_eq(diag.n_items, 0);
}
END_TEST

/* Counts the lines of a file the way the loader numbers them. */
static unsigned file_lines(const char *path) {
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        unsigned n = 0;
        FILE *f = fopen(path, "re");

        ck_assert_msg(f, "fopen %s: %m", path);
        while (getline(&line, &size, f) > 0)
                n++;
        fclose(f);
        return n;
}

/* /proc files say st_size 0: they are read to EOF, not refused as "larger than 16 MiB". */
START_TEST(test_read_proc_file) {
        unsigned lines = file_lines("/proc/self/status");

        ck_assert_uint_gt(lines, 10);
        ck_assert_int_eq(
                config_load_paths((char *[]){(char *)"/proc/self/status", NULL}, &config, &diag), -EINVAL);
        for (size_t i = 0; i < diag.n_items; i++)
                ck_assert_msg(!strstr(diag.items[i].message, "cannot read"), "%s", diag.items[i].message);
        /* Its last line was read and parsed (as an unknown key: it is no policy file). */
        assert_diag_full(
                &diag, DIAGNOSTIC_ERROR, "/proc/self/status", lines, 1,
                "unknown key \"nonvoluntary_ctxt_switches\"");
        assert_diag_full(&diag, DIAGNOSTIC_ERROR, "/proc/self/status", 1, 1, "unknown key \"Name\"");
}
END_TEST

typedef struct Grower {
        const char *path;
        bool stop; /* atomic */
} Grower;

/* Appends comment lines to a file (truncating it now and then) until told to stop. */
static void *grower_run(void *userdata) {
        Grower *g = userdata;
        int fd = open(g->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        char line[64];

        if (fd < 0)
                return NULL;
        memset(line, 'x', sizeof line);
        line[0] = '#';
        line[sizeof line - 1] = '\n';
        for (unsigned n = 0; !__atomic_load_n(&g->stop, __ATOMIC_RELAXED); n++) {
                if (write(fd, line, sizeof line) != (ssize_t)sizeof line)
                        break;
                if (n % 4096 == 4095 && ftruncate(fd, 0) < 0)
                        break;
        }
        close(fd);
        return NULL;
}

/* A file written while it is read: "changed while being read", not a size error. */
START_TEST(test_read_changing_file) {
        _cleanup_free_ char *path = tmp_path("growing.yaml");
        Grower g = {.path = path};
        pthread_t thread;
        unsigned changed = 0;

        write_file("growing.yaml", "# grows\n");
        ck_assert_int_eq(pthread_create(&thread, NULL, grower_run, &g), 0);

        /* Bounded: the writer never stops on its own, so a load sees it at work soon. */
        for (unsigned i = 0; i < 100000 && changed == 0; i++) {
                int r;

                diagnostics_done(&diag);
                config = config_free(config);
                r = config_load_paths((char *[]){path, NULL}, &config, &diag);
                ck_assert_msg(r == 0 || r == -ESTALE, "load returned %d", r);
                for (size_t k = 0; k < diag.n_items; k++) {
                        ck_assert_msg(
                                strstr(diag.items[k].message,
                                       "cannot read: the file changed while being read"),
                                "unexpected diagnostic: %s", diag.items[k].message);
                        changed++;
                }
        }
        __atomic_store_n(&g.stop, true, __ATOMIC_RELAXED);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        ck_assert_uint_gt(changed, 0);
}
END_TEST

/* ---- irqs:, net: and rfs: ----------------------------------------------------------------- */

static const char devices_text[] = "# IRQ and network queue rules beside a policy.\n"          /* 1 */
                                   "irqs:\n"                                                   /* 2 */
                                   "  - name: nic\n"                                           /* 3 */
                                   "    match: { device: eth0, action: \"virtio*-input*\" }\n" /* 4 */
                                   "    cpus: { near: eth0, reserved: only }\n"                /* 5 */
                                   "    spread: true\n"                                        /* 6 */
                                   "    on-drift: enforce\n"                                   /* 7 */
                                   "  - name: storage\n"                                       /* 8 */
                                   "    match:\n"                                              /* 9 */
                                   "      device: [\"3b:00.0\", \"0000:5E:00.1\", eno1]\n"     /* 10 */
                                   "    cpus: \"2-3\"\n"                                       /* 11 */
                                   "    spread: false\n"                                       /* 12 */
                                   "  - name: timers\n"                                        /* 13 */
                                   "    match: { action: [rtc0, \"i8042*\"] }\n"               /* 14 */
                                   "    cpus: {}\n"                                            /* 15 */
                                   "    on-drift: respect\n"                                   /* 16 */
                                   "net:\n"                                                    /* 17 */
                                   "  - device: \"eth*\"\n"                                    /* 18 */
                                   "    name: nic-steering\n"                                  /* 19 */
                                   "    rps: { near: eth0 }\n"                                 /* 20 */
                                   "    xps: spread\n"                                         /* 21 */
                                   "    on-drift: report\n"                                    /* 22 */
                                   "  - device: vt0\n"                                         /* 23 */
                                   "    rps: \"0-1\"\n"                                        /* 24 */
                                   "  - device: \"veth*\"\n"                                   /* 25 */
                                   "    xps: { nodes: 1, cpus: 4 }\n"                          /* 26 */
                                   "    on-drift: enforce\n"                                   /* 27 */
                                   "policies:\n"                                               /* 28 */
                                   "  - name: svc\n"                                           /* 29 */
                                   "    match: { comm: svc }\n"                                /* 30 */
                                   "    cpus: { near: eth0 }\n";                               /* 31 */

static const char rfs_settings_text[] = "# RFS for every device an rps: rule covers\n" /* 1 */
                                        "reserve: \"0-3\"\n"                           /* 2 */
                                        "rfs: 32768\n";                                /* 3 */

static void assert_location(const Location *loc, unsigned line, unsigned column) {
        ck_assert_str_eq(loc->file, "test.yaml");
        ck_assert_uint_eq(loc->line, line);
        ck_assert_uint_eq(loc->column, column);
}

START_TEST(test_devices_model) {
        const IrqRule *nic, *storage, *timers;
        const NetRule *steer, *vt, *veth;

        ck_assert_int_eq(parse(devices_text), 0);
        if (diag.n_items > 0)
                dump_diagnostics(&diag);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_uint_eq(config->n_irq_rules, 3);
        ck_assert_uint_eq(config->n_net_rules, 3);
        ck_assert_uint_eq(config->n_policies, 1);
        ck_assert_uint_eq(config->rfs_entries, 0); /* not in a rules file */

        nic = &config->irq_rules[0];
        ck_assert_ptr_eq(config_find_irq_rule(config, "nic"), nic);
        ck_assert_str_eq(nic->name, "nic");
        assert_location(&nic->location, 3, 5);
        assert_location(&nic->name_location, 3, 11);
        ck_assert(strv_is(nic->device, "eth0", NULL));
        ck_assert(strv_is(nic->action, "virtio*-input*", NULL));
        ck_assert_int_eq(nic->cpus.kind, CPU_SELECTOR_MAPPING);
        assert_location(&nic->cpus.location, 5, 11);
        ck_assert_str_eq(nic->cpus.near, "eth0");
        ck_assert_int_eq(nic->cpus.reserved, RESERVED_ONLY);
        ck_assert(!nic->cpus.exclusive);
        ck_assert(!nic->cpus.has_nodes);
        ck_assert(nic->spread);
        ck_assert_int_eq(nic->on_drift, DRIFT_ENFORCE);

        storage = &config->irq_rules[1];
        ck_assert_ptr_eq(config_find_irq_rule(config, "storage"), storage);
        assert_location(&storage->location, 8, 5);
        /* PCI addresses in sysfs's form: domain added, lower case; interface names as written. */
        ck_assert(strv_is(storage->device, "0000:3b:00.0", "0000:5e:00.1", "eno1", NULL));
        ck_assert_ptr_null(storage->action);
        ck_assert_int_eq(storage->cpus.kind, CPU_SELECTOR_LITERAL);
        ck_assert(set_is(&storage->cpus.literal, "2-3"));
        ck_assert(!storage->spread);
        ck_assert_int_eq(storage->on_drift, DRIFT_REPORT); /* the default */

        timers = &config->irq_rules[2];
        ck_assert_ptr_null(timers->device);
        ck_assert(strv_is(timers->action, "rtc0", "i8042*", NULL));
        ck_assert_int_eq(timers->cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert_ptr_null(timers->cpus.near);
        ck_assert_int_eq(timers->cpus.reserved, RESERVED_AVOID);
        ck_assert(!timers->spread);
        ck_assert_int_eq(timers->on_drift, DRIFT_RESPECT);
        ck_assert_ptr_null(config_find_irq_rule(config, "svc"));

        steer = &config->net_rules[0];
        ck_assert_ptr_eq(config_find_net_rule(config, "nic-steering"), steer);
        ck_assert_str_eq(steer->device, "eth*");
        assert_location(&steer->location, 18, 5);
        assert_location(&steer->device_location, 18, 13);
        ck_assert_int_eq(steer->rps.kind, CPU_SELECTOR_MAPPING);
        ck_assert_str_eq(steer->rps.near, "eth0");
        assert_location(&steer->rps.location, 20, 10);
        ck_assert_int_eq(steer->xps, XPS_SPREAD);
        ck_assert_int_eq(steer->xps_cpus.kind, CPU_SELECTOR_NONE);
        assert_location(&steer->xps_location, 21, 10);
        ck_assert_int_eq(steer->on_drift, DRIFT_REPORT);

        /* Without name: the rule is named after its device glob. */
        vt = &config->net_rules[1];
        ck_assert_str_eq(vt->name, "vt0");
        ck_assert_ptr_eq(config_find_net_rule(config, "vt0"), vt);
        ck_assert_int_eq(vt->rps.kind, CPU_SELECTOR_LITERAL);
        ck_assert(set_is(&vt->rps.literal, "0-1"));
        ck_assert_int_eq(vt->xps, XPS_NONE);
        ck_assert_int_eq(vt->on_drift, DRIFT_REPORT);

        veth = &config->net_rules[2];
        ck_assert_str_eq(veth->name, "veth*");
        ck_assert_str_eq(veth->device, "veth*");
        ck_assert_int_eq(veth->rps.kind, CPU_SELECTOR_NONE);
        ck_assert_int_eq(veth->xps, XPS_SELECTOR);
        ck_assert_int_eq(veth->xps_cpus.kind, CPU_SELECTOR_MAPPING);
        ck_assert(veth->xps_cpus.has_nodes);
        ck_assert(set_is(&veth->xps_cpus.nodes, "1"));
        ck_assert_uint_eq(veth->xps_cpus.n_cpus, 4);
        assert_location(&veth->xps_location, 26, 10);
        ck_assert_int_eq(veth->on_drift, DRIFT_ENFORCE);
        ck_assert_ptr_null(config_find_net_rule(config, "nic"));

        /* Policies are untouched by the new lists. */
        ck_assert_str_eq(config->policies[0].name, "svc");
        ck_assert_str_eq(config->policies[0].cpus.near, "eth0");

        /* A file with only device rules, and empty lists. */
        ck_assert_int_eq(parse("net:\n  - device: lo\n    xps: \"0\"\n"), 0);
        ck_assert_uint_eq(config->n_net_rules, 1);
        ck_assert_uint_eq(config->n_irq_rules, 0);
        ck_assert_uint_eq(config->n_policies, 0);
        ck_assert_int_eq(parse("irqs: []\nnet:\npolicies: []\n"), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_uint_eq(config->n_irq_rules + config->n_net_rules + config->n_policies, 0);
}
END_TEST

START_TEST(test_settings_rfs) {
        ck_assert_int_eq(parse_as(rfs_settings_text, true), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_uint_eq(config->rfs_entries, 32768);
        assert_location(&config->rfs_location, 3, 6);
        ck_assert(set_is(&config->reserve, "0-3"));

        ck_assert_int_eq(parse_as("rfs: 536870912\n", true), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_uint_eq(config->rfs_entries, 536870912U);
        ck_assert_int_eq(parse_as("rfs: \"1\"\n", true), 0);
        ck_assert_uint_eq(config->rfs_entries, 1);
        ck_assert_int_eq(parse_as("reserve: 0\n", true), 0);
        ck_assert_uint_eq(config->rfs_entries, 0); /* not set */

        /* Not a power of two: loads, with a warning saying what the kernel makes of it. */
        ck_assert_int_eq(parse_as("rfs: 30000\n", true), 0);
        ck_assert_uint_eq(config->rfs_entries, 30000);
        ck_assert_uint_eq(diag.n_errors, 0);
        ck_assert_uint_eq(diag.n_warnings, 1);
        assert_diag_full(
                &diag, DIAGNOSTIC_WARNING, "test.yaml", 1, 6,
                "rfs: the kernel rounds 30000 up to a power of two: the flow table will have 32768 entries");

        check_one_settings_error("rfs: 0\n", 1, 6, "rfs: 0 is out of range (1 to 536870912)");
        check_one_settings_error(
                "rfs: 536870913\n", 1, 6, "rfs: 536870913 is out of range (1 to 536870912)");
        check_one_settings_error("rfs: -4096\n", 1, 6, "rfs: -4096 is out of range (1 to 536870912)");
        check_one_settings_error(
                "rfs: 32k\n", 1, 6, "rfs: expected a number from 1 to 536870912, got \"32k\"");
        check_one_settings_error(
                "rfs: [4096]\n", 1, 6, "rfs: expected a number from 1 to 536870912, got a list");
        check_one_settings_error(
                "reserve: 0\nrfs:\n", 2, 5,
                "rfs: expected a number from 1 to 536870912, got an empty value");
        check_one_settings_error(
                "rsf: 4096\n", 1, 1, "unknown key \"rsf\" in the top level (did you mean \"rfs\"?)");
        /* Each list and setting in its own file, and the message says which. */
        check_one_error(
                "# global\nrfs: 4096\n", 2, 1, "rfs: belongs in affinityd.yaml, not in a policy.d file");
        check_one_settings_error(
                "reserve: 0\nirqs: []\n", 2, 1,
                "irqs: belongs in a policy.d/*.yaml file, not in affinityd.yaml");
        check_one_settings_error(
                "net:\n  - device: eth0\n", 1, 1,
                "net: belongs in a policy.d/*.yaml file, not in affinityd.yaml");
}
END_TEST

START_TEST(test_settings_kubelet_cpu_manager_state) {
        /* Not given: the kubelet's default path. */
        ck_assert_int_eq(parse_as("reserve: 0\n", true), 0);
        ck_assert_ptr_null(config->kubelet_cpu_manager_state);
        ck_assert_str_eq(config_kubelet_cpu_manager_state(config), "/var/lib/kubelet/cpu_manager_state");
        ck_assert_str_eq(config_kubelet_cpu_manager_state(NULL), "/var/lib/kubelet/cpu_manager_state");

        ck_assert_int_eq(
                parse_as("reserve: 0\nkubelet-cpu-manager-state: /srv/kubelet/cpu_manager_state\n", true),
                0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_str_eq(config_kubelet_cpu_manager_state(config), "/srv/kubelet/cpu_manager_state");
        assert_location(&config->kubelet_cpu_manager_state_location, 2, 28);

        /* none: not read at all. */
        ck_assert_int_eq(parse_as("kubelet-cpu-manager-state: none\n", true), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_ptr_null(config_kubelet_cpu_manager_state(config));

        check_one_settings_error(
                "kubelet-cpu-manager-state: cpu_manager_state\n", 1, 28,
                "kubelet-cpu-manager-state: \"cpu_manager_state\" is not an absolute path (or none, not to "
                "read the kubelet's checkpoint)");
        check_one_settings_error(
                "kubelet-cpu-manager-state:\n", 1, 27,
                "kubelet-cpu-manager-state: expected an absolute path or none");
        check_one_settings_error(
                "kubelet-cpu-manager-state: [/a]\n", 1, 28,
                "kubelet-cpu-manager-state: expected an absolute path or none");
        check_one_error(
                "kubelet-cpu-manager-state: none\n", 1, 1,
                "kubelet-cpu-manager-state: belongs in affinityd.yaml, not in a policy.d file");
}
END_TEST

/* The start of an irqs: rule: line 4 is the line under test. */
#define IRQ "irqs:\n  - name: nic\n    match: {device: eth0}\n"

/* within: cpuset: parsed for policies and thread rules; refused with a count, exclusive:, via:
 * systemd and in device rules, at the key that makes it wrong. */
#define P "policies:\n  - name: a\n    match: {comm: x}\n"
START_TEST(test_within) {
        ck_assert_int_eq(
                parse(P "    cpus: {within: cpuset, nodes: 0}\n"
                        "    threads:\n      - name: w\n        cpus: {within: cpuset}\n"),
                0);
        ck_assert_int_eq(config->policies[0].cpus.within, WITHIN_CPUSET);
        ck_assert_int_eq(config->policies[0].threads[0].cpus.within, WITHIN_CPUSET);
        ck_assert_int_eq(parse(P "    cpus: {nodes: 0}\n"), 0);
        ck_assert_int_eq(config->policies[0].cpus.within, WITHIN_NONE);

        check_one_error(
                P "    cpus: {within: cgroup}\n", 4, 20,
                "within: invalid value \"cgroup\" (did you mean \"cpuset\"?)");
        check_one_error(
                P "    cpus: {within: cpuset, cores: 2}\n", 4, 28,
                "cores: can't be used with within: cpuset: the process's cgroup decides how many CPUs");
        check_one_error(
                P "    cpus: {cpus: 2, within: cpuset}\n", 4, 12, "cpus: can't be used with within: cpuset");
        check_one_error(
                P "    cpus: {within: cpuset, exclusive: true}\n", 4, 28,
                "exclusive: can't be used with within: cpuset");
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: a.service}\n    cpus: {within: cpuset}\n"
                "    via: systemd\n",
                5, 10, "via: systemd can't be used with cpus: within: cpuset");
        check_one_error(
                "policies:\n  - name: a\n    match: {unit: a.service}\n    cpus: \"0\"\n"
                "    threads:\n      - name: w\n        cpus: {within: cpuset}\n    via: systemd\n",
                8, 10,
                "via: systemd can't be used with cpus: within: cpuset (of the policy or a thread rule)");
        check_one_error(
                "irqs:\n  - name: nic\n    match: {device: eth0}\n    cpus: {within: cpuset}\n", 4, 12,
                "within: applies to policies only (an IRQ or a network queue is in no cgroup");
}
END_TEST
#undef P

/* avoid: in device rules' selectors: the word policies, a name, a list, or []; the names checked
 * across files by config_verify(), at each name; refused in a policy's selector. */
#define WEB "policies:\n  - name: web\n    match: {comm: nginx}\n    cpus: {near: eth0}\n"
START_TEST(test_avoid) {
        const char *rules =
                "irqs:\n  - name: nic\n    match: {device: eth0}\n    cpus: {near: eth0, avoid: [web]}\n";
        const CpuSelector *s;
        int r;

        ck_assert_int_eq(
                parse(WEB "irqs:\n  - name: nic\n    match: {device: eth0}\n"
                          "    cpus: {near: eth0, avoid: [web]}\n"),
                0);
        s = &config->irq_rules[0].cpus;
        ck_assert(s->has_avoid && !s->avoid_policies);
        ck_assert_uint_eq(s->n_avoid, 1);
        ck_assert_str_eq(s->avoid[0], "web");
        assert_location(&s->avoid_locations[0], 8, 32);

        ck_assert_int_eq(parse(IRQ "    cpus: {avoid: policies}\n"), 0);
        ck_assert(config->irq_rules[0].cpus.avoid_policies);
        ck_assert_int_eq(parse(IRQ "    cpus: {near: eth0, avoid: []}\n"), 0);
        s = &config->irq_rules[0].cpus;
        ck_assert(s->has_avoid && !s->avoid_policies);
        ck_assert_uint_eq(s->n_avoid, 0);
        ck_assert_int_eq(parse(WEB "net:\n  - device: eth0\n    rps: {near: eth0, avoid: web}\n"), 0);
        ck_assert_uint_eq(config->net_rules[0].rps.n_avoid, 1);
        ck_assert_int_eq(parse(IRQ "    cpus: {near: eth0}\n"), 0);
        ck_assert(!config->irq_rules[0].cpus.has_avoid);

        check_one_error(
                IRQ "    cpus: {avoid: [wbe]}\n", 4, 20,
                "avoid: no policy is named \"wbe\" in the configuration (avoid: names process policies, or "
                "is the word policies)");
        check_one_error(
                "net:\n  - device: eth0\n    rps: {avoid: []}\n    xps: {avoid: y}\n", 4, 18,
                "avoid: no policy is named \"y\"");
        check_one_error(
                "policies:\n  - name: web\n    match: {comm: nginx}\n    cpus: {avoid: [web]}\n", 4, 12,
                "avoid: applies to irqs: and net: rules only");

        /* The policy may be in a later file: checked once every file is read. */
        config = config_free(config);
        diagnostics_done(&diag);
        config = config_new();
        ck_assert_ptr_nonnull(config);
        ck_assert_int_eq(config_parse_string(config, "10-irqs.yaml", rules, strlen(rules), false, &diag), 0);
        ck_assert_int_eq(config_parse_string(config, "20-web.yaml", WEB, strlen(WEB), false, &diag), 0);
        r = config_verify(config, &diag);
        ck_assert_int_eq(r, 0);
}
END_TEST
#undef WEB

START_TEST(test_irq_errors) {
        /* exclusive: and spread are a policy's; everything else of a selector works. */
        check_one_error(
                IRQ "    cpus: {near: eth0, exclusive: true}\n", 4, 24,
                "exclusive: applies to policies only (IRQs and network queues don't hold CPUs");
        check_one_error(IRQ "    cpus: {exclusive: false}\n", 4, 12, "exclusive: applies to policies only");
        check_one_error(
                IRQ "    exclusive: true\n    cpus: \"1\"\n", 4, 5,
                "unknown key \"exclusive\" in irq rule (exclusive: applies to policies only)");
        check_one_error(
                IRQ "    cpus: spread\n", 4, 11,
                "cpus: \"spread\" is not valid in an irqs: rule (give the CPUs here and write spread: true "
                "next to cpus: to give each IRQ its own CPU)");
        check_one_error(
                IRQ "    cpus: {spread: true}\n", 4, 12,
                "unknown key \"spread\" in cpus (write cpus: spread in a thread rule, or spread: true next "
                "to cpus: in an irqs: rule)");
        check_one_error(
                IRQ "    cpus: [0, 1]\n", 4, 11,
                "cpus: expected a cpu-list or a selector mapping, got a list (write several CPUs as one "
                "cpu-list string, e.g. cpus: \"0,2-3\")");
        check_one_error(IRQ "    cpus: \"0-x\"\n", 4, 14, "cpus: invalid cpu-list \"0-x\"");
        check_one_error(IRQ "    cpus: {cores: 0}\n", 4, 19, "cores: must be at least 1");
        check_one_error(
                IRQ "    cpus: {cpus: 2, cores: 1}\n", 4, 21, "cores: and cpus: can't be used together");
        check_one_error(
                IRQ "    cpus: {nods: 1}\n", 4, 12,
                "unknown key \"nods\" in cpus (did you mean \"nodes\"?)");
        check_one_error(
                IRQ "    cpus: {near: \"eth/0\"}\n", 4, 22,
                "near: \"eth/0\" is not a network interface name");
        check_one_error(
                IRQ "    cpus:\n", 4, 10,
                "cpus: expected a cpu-list such as \"2-5\" or a selector mapping (nodes:, packages:, near:, "
                "cores:, …), got an empty value");

        /* The rule's own keys. */
        check_one_error(
                IRQ "    cpus: \"1\"\n    spread: maybe\n", 5, 13,
                "spread: expected true or false, got \"maybe\"");
        check_one_error(
                IRQ "    cpus: \"1\"\n    spred: true\n", 5, 5,
                "unknown key \"spred\" in irq rule (did you mean \"spread\"?)");
        check_one_error(
                IRQ "    cpus: \"1\"\n    on-drift: fix\n", 5, 15,
                "on-drift: invalid value \"fix\" (expected report, enforce or respect)");
        check_one_error(
                IRQ "    cpus: \"1\"\n    on-drift: restore\n", 5, 15,
                "on-drift: invalid value \"restore\" (did you mean \"enforce\"?)");
        check_one_error(
                IRQ "    device: eth1\n    cpus: \"1\"\n", 4, 5,
                "unknown key \"device\" in irq rule (conditions go under match:)");
        check_one_error(
                IRQ "    near: eth0\n    cpus: \"1\"\n", 4, 5,
                "unknown key \"near\" in irq rule (selector keys go under cpus:)");
        check_one_error(
                IRQ "    cpus: \"1\"\n    cpus: \"2\"\n", 5, 5,
                "duplicate key \"cpus\" in irq rule (first given at line 4, column 5)");

        /* Required keys, reported at the rule. */
        check_one_error(IRQ, 2, 5, "irq rule is missing the required key \"cpus\"");
        check_one_error(
                "irqs:\n  - name: nic\n    cpus: \"1\"\n", 2, 5,
                "irq rule is missing the required key \"match\"");
        check_one_error(
                "irqs:\n  - match: {action: x}\n    cpus: \"1\"\n", 2, 5,
                "irq rule is missing the required key \"name\"");
        check_one_error(
                "irqs:\n  - name: \"\"\n    match: {action: x}\n    cpus: \"1\"\n", 2, 11,
                "name: must not be empty");

        /* match: at least one of device:/action:, each a string or a list of strings. */
#define IRQ_MATCH(m) "irqs:\n  - name: nic\n    match: " m "\n    cpus: \"1\"\n"
        check_one_error(IRQ_MATCH("{}"), 3, 12, "match: needs at least one of device, action");
        check_one_error(
                IRQ_MATCH("eth0"), 3, 12,
                "match: expected a mapping of IRQ conditions (device: an interface or PCI address, action: "
                "IRQ name globs), got \"eth0\"");
        check_one_error(
                IRQ_MATCH("{devcie: eth0}"), 3, 13,
                "unknown key \"devcie\" in irq match (did you mean \"device\"?)");
        check_one_error(
                IRQ_MATCH("{comm: eth0}"), 3, 13,
                "unknown key \"comm\" in irq match (IRQs are matched by device: (an interface or PCI "
                "address) and action: (IRQ names), processes in policies:)");
        check_one_error(
                IRQ_MATCH("{action: x, spread: true}"), 3, 24,
                "unknown key \"spread\" in irq match (it belongs to the irqs: rule, one level up, not under "
                "match:)");
        check_one_error(IRQ_MATCH("{action: []}"), 3, 21, "action: the list is empty");
        check_one_error(IRQ_MATCH("{action: \"\"}"), 3, 21, "action: empty pattern");
        check_one_error(
                IRQ_MATCH("{action: {a: b}}"), 3, 21, "action: expected a string or a list of strings");
        check_one_error(
                IRQ_MATCH("{device: \"eth*\"}"), 3, 21,
                "device: \"eth*\" is not a glob: name a network interface or a PCI address");
        check_one_error(
                IRQ_MATCH("{device: [eth0, \"a/b\"]}"), 3, 30,
                "device: \"a/b\" is not a network interface name (they contain no \"/\"");
        check_one_error(
                IRQ_MATCH("{device: \"3b:00\"}"), 3, 21,
                "device: \"3b:00\" is not a PCI address (expected DOMAIN:BUS:DEVICE.FUNCTION in hex");
        check_one_error(
                IRQ_MATCH("{device: averyveryverylongname}"), 3, 21,
                "device: \"averyveryverylongname\" is 21 characters long, but network interface names have "
                "at most 15");
#undef IRQ_MATCH

        /* The list itself. */
        check_one_error(
                "irqs: {name: nic}\n", 1, 7,
                "irqs: expected a list of IRQ rules (- name: …), got a mapping");
        check_one_error(
                "irqs:\n  - nic\n", 2, 5,
                "irqs: each entry must be a mapping (name:, match:, cpus:, …), got \"nic\"");
        check_one_error(
                "irq:\n  - name: nic\n", 1, 1,
                "unknown key \"irq\" in the top level (did you mean \"irqs\"?)");
}
END_TEST

#undef IRQ

/* The start of a net: rule: line 3 is the line under test. */
#define NET "net:\n  - device: eth0\n"

START_TEST(test_net_errors) {
        check_one_error(
                NET "    rps: {near: eth0, exclusive: true}\n", 3, 23,
                "exclusive: applies to policies only");
        check_one_error(NET "    xps: {exclusive: false}\n", 3, 11, "exclusive: applies to policies only");
        check_one_error(
                NET "    rps: spread\n", 3, 10,
                "rps: \"spread\" is not valid (every rx queue gets the whole rps: set; to divide CPUs among "
                "the transmit queues write xps: spread)");
        check_one_error(
                NET "    xps: [0]\n", 3, 10,
                "xps: expected a cpu-list or a selector mapping, got a list (write several CPUs as one "
                "cpu-list string, e.g. xps: \"0,2-3\")");
        check_one_error(NET "    rps: \"0-x\"\n", 3, 13, "rps: invalid cpu-list \"0-x\"");
        check_one_error(
                NET "    xps:\n", 3, 9,
                "xps: expected a cpu-list such as \"2-5\" or a selector mapping (nodes:, packages:, near:, "
                "cores:, …), got an empty value");
        check_one_error(NET "    rps: {cores: 0}\n", 3, 18, "cores: must be at least 1");
        check_one_error(
                NET "    xps: {nodes: 0, spread: true}\n", 3, 21,
                "unknown key \"spread\" in xps (write xps: spread as the whole value of xps:)");
        check_one_error(
                NET "    rps: \"0\"\n    on-drift: sometimes\n", 4, 15,
                "on-drift: invalid value \"sometimes\" (expected report, enforce or respect)");
        check_one_error(
                NET "    rps: \"0\"\n    cpus: \"1\"\n", 4, 5,
                "unknown key \"cpus\" in net rule (a net: rule sets rps: (receive) and xps: (transmit) "
                "CPUs; interrupt CPUs go in an irqs: rule)");
        check_one_error(
                NET "    rps: \"0\"\n    near: eth0\n", 4, 5,
                "unknown key \"near\" in net rule (selector keys go under rps: or xps:)");
        check_one_error(
                NET "    rps: \"0\"\n    spread: true\n", 4, 5,
                "unknown key \"spread\" in net rule (write xps: spread)");
        check_one_error(
                NET "    rps: \"0\"\n    match: {comm: x}\n", 4, 5,
                "unknown key \"match\" in net rule (a net: rule selects devices by device: (a glob on "
                "interface names))");
        check_one_error(
                NET "    rps: \"0\"\n    xsp: spread\n", 4, 5,
                "unknown key \"xsp\" in net rule (did you mean \"xps\"?)");
        check_one_error(NET "    rps: \"0\"\n    name: \"\"\n", 4, 11, "name: must not be empty");

        /* A rule that steers nothing, and a rule for no device. */
        check_one_error(
                NET "    on-drift: enforce\n", 2, 5,
                "net rule needs rps: (receive packet steering) or xps: (transmit packet steering), or both");
        check_one_error(NET, 2, 5, "net rule needs rps:");
        check_one_error("net:\n  - rps: \"0\"\n", 2, 5, "net rule is missing the required key \"device\"");

        /* device: a glob on interface names, so what no name can contain is an error. */
        check_one_error(
                "net:\n  - device: \"0000:3b:00.0\"\n    rps: \"0\"\n", 2, 18,
                "device: \"0000:3b:00.0\" is not an interface name (they contain no \":\"; net: rules "
                "select "
                "devices by interface name, not by PCI address)");
        check_one_error(
                "net:\n  - device: \"eth 0\"\n    rps: \"0\"\n", 2, 17,
                "device: \"eth 0\" is not an interface name (they contain no white space)");
        check_one_error(
                "net:\n  - device: eth/0\n    rps: \"0\"\n", 2, 16,
                "device: \"eth/0\" is not an interface name (they contain no \"/\")");
        check_one_error("net:\n  - device: \"\"\n    rps: \"0\"\n", 2, 13, "device: must not be empty");
        check_one_error(
                "net:\n  - device: averyveryverylongname\n    rps: \"0\"\n", 2, 13,
                "device: \"averyveryverylongname\" is 21 characters long, but network interface names have "
                "at most 15");
        check_one_error(
                "net:\n  - device: [eth0, eth1]\n    rps: \"0\"\n", 2, 13,
                "device: expected an interface name or glob such as eth0 or \"eth*\", got a list");
        /* A long glob is fine: it is not a name. */
        ck_assert_int_eq(
                parse("net:\n  - device: \"[ev][nt][ph0-9]*[0-9][0-9][0-9]\"\n    rps: \"0\"\n"), 0);

        /* The list itself. */
        check_one_error(
                "net: eth0\n", 1, 6,
                "net: expected a list of network device rules (- device: …), got \"eth0\"");
        check_one_error(
                "net:\n  - [eth0]\n", 2, 5,
                "net: each entry must be a mapping (device:, rps:, xps:, …), got a list");
}
END_TEST

#undef NET

START_TEST(test_device_rule_names) {
        static const char dup_irqs[] = "irqs:\n"                        /* 1 */
                                       "  - name: nic\n"                /* 2 */
                                       "    match: {device: eth0}\n"    /* 3 */
                                       "    cpus: \"1\"\n"              /* 4 */
                                       "  - name: nic\n"                /* 5 */
                                       "    match: {device: eth1}\n"    /* 6 */
                                       "    cpus: \"2\"\n";             /* 7 */
        static const char dup_default[] = "net:\n"                      /* 1 */
                                          "  - device: eth0\n"          /* 2 */
                                          "    rps: \"0\"\n"            /* 3 */
                                          "  - device: eth0\n"          /* 4 */
                                          "    xps: \"1\"\n";           /* 5 */
        static const char dup_named[] = "net:\n"                        /* 1 */
                                        "  - device: \"eth*\"\n"        /* 2 */
                                        "    name: nic\n"               /* 3 */
                                        "    rps: \"0\"\n"              /* 4 */
                                        "  - device: \"ens*\"\n"        /* 5 */
                                        "    rps: \"1\"\n"              /* 6 */
                                        "    name: nic\n";              /* 7 */
        static const char named_as_device[] = "net:\n"                  /* 1 */
                                              "  - device: eth0\n"      /* 2 */
                                              "    rps: \"0\"\n"        /* 3 */
                                              "  - device: \"e*\"\n"    /* 4 */
                                              "    name: eth0\n"        /* 5 */
                                              "    rps: \"1\"\n";       /* 6 */
        static const char irq_and_net[] = "irqs:\n"                     /* 1 */
                                          "  - name: eth0\n"            /* 2 */
                                          "    match: {device: eth0}\n" /* 3 */
                                          "    cpus: \"1\"\n"           /* 4 */
                                          "net:\n"                      /* 5 */
                                          "  - device: eth0\n"          /* 6 */
                                          "    rps: \"1\"\n"            /* 7 */
                                          "policies:\n"                 /* 8 */
                                          "  - name: eth0\n"            /* 9 */
                                          "    match: {comm: x}\n";     /* 10 */
        Config *c = NULL;

        check_one_error(
                dup_irqs, 5, 11, "duplicate irq rule name \"nic\" (first defined at test.yaml:2:11)");
        ck_assert_uint_eq(config->n_irq_rules, 1);
        ck_assert(strv_is(config->irq_rules[0].device, "eth0", NULL)); /* the first one is kept */
        check_one_error(
                dup_default, 4, 13,
                "duplicate net rule name \"eth0\" (first defined at test.yaml:2:5; a net: rule without "
                "name: is "
                "named after its device: glob)");
        ck_assert_uint_eq(config->n_net_rules, 1);
        check_one_error(
                dup_named, 7, 11, "duplicate net rule name \"nic\" (first defined at test.yaml:2:5)");
        check_one_error(
                named_as_device, 5, 11, "duplicate net rule name \"eth0\" (first defined at test.yaml:2:5)");

        /* Policies, irqs: rules and net: rules are three name spaces. */
        ck_assert_int_eq(parse(irq_and_net), 0);
        ck_assert_uint_eq(diag.n_items, 0);

        /* Across files read into one configuration: reported in the later file. */
        teardown();
        c = config_new();
        ck_assert_ptr_nonnull(c);
        /* The first rule of dup_irqs alone: its first four lines. */
        ck_assert_int_eq(
                config_parse_string(
                        c, "10-a.yaml", dup_irqs,
                        strstr(dup_irqs, "  - name: nic\n    match: {device: eth1}") - dup_irqs, false,
                        &diag),
                0);
        ck_assert_int_eq(
                config_parse_string(c, "20-b.yaml", dup_irqs, strlen(dup_irqs), false, &diag), -EINVAL);
        ck_assert_uint_eq(diag.n_errors, 2);
        assert_diag_full(
                &diag, DIAGNOSTIC_ERROR, "20-b.yaml", 2, 11,
                "duplicate irq rule name \"nic\" (first defined at 10-a.yaml:2:11)");
        assert_diag_full(
                &diag, DIAGNOSTIC_ERROR, "20-b.yaml", 5, 11,
                "duplicate irq rule name \"nic\" (first defined at 10-a.yaml:2:11)");
        ck_assert_uint_eq(c->n_irq_rules, 1);
        ck_assert_str_eq(c->irq_rules[0].location.file, "10-a.yaml");
        config_free(c);
}
END_TEST

/* ---- robustness --------------------------------------------------------------------------- */

static unsigned count_lines(const char *s, size_t n) {
        unsigned lines = 1;

        for (size_t i = 0; i < n; i++)
                if (s[i] == '\n')
                        lines++;
        return lines;
}

/* Parses text[0..n) (as settings or rules) and checks the invariants every outcome must keep. */
static void parse_robust_as(const char *text, size_t n, bool settings) {
        Config *c = config_new();
        Diagnostics d = {};
        unsigned lines = count_lines(text, n);
        int r;

        ck_assert_ptr_nonnull(c);
        r = config_parse_string(c, "fuzz.yaml", text, n, settings, &d);
        ck_assert_int_ne(r, -ENOMEM);
        if (r >= 0)
                r = config_verify(c, &d);
        ck_assert(r == 0 || r == -EINVAL);
        ck_assert_int_eq(r == -EINVAL, d.n_errors > 0);
        for (size_t i = 0; i < d.n_items; i++) {
                ck_assert_str_eq(d.items[i].file, "fuzz.yaml");
                ck_assert_uint_ge(d.items[i].line, 1);
                ck_assert_uint_le(d.items[i].line, lines + 1);
                ck_assert_uint_ge(d.items[i].column, 1);
        }
        if (r == 0) {
                for (size_t i = 0; i < c->n_policies; i++) {
                        ck_assert_ptr_nonnull(c->policies[i].name);
                        ck_assert_uint_ne(c->policies[i].match.facts, 0);
                }
                for (size_t i = 0; i < c->n_irq_rules; i++) {
                        const IrqRule *x = &c->irq_rules[i];

                        ck_assert_ptr_nonnull(x->name);
                        ck_assert(x->device || x->action);
                        ck_assert(
                                x->cpus.kind == CPU_SELECTOR_LITERAL ||
                                x->cpus.kind == CPU_SELECTOR_MAPPING);
                        ck_assert(!x->cpus.exclusive);
                        ck_assert_ptr_eq(config_find_irq_rule(c, x->name), x);
                }
                for (size_t i = 0; i < c->n_net_rules; i++) {
                        const NetRule *x = &c->net_rules[i];

                        ck_assert_ptr_nonnull(x->name);
                        ck_assert_ptr_nonnull(x->device);
                        ck_assert(x->rps.kind != CPU_SELECTOR_NONE || x->xps != XPS_NONE);
                        ck_assert(
                                x->rps.kind != CPU_SELECTOR_SPREAD &&
                                x->xps_cpus.kind != CPU_SELECTOR_SPREAD);
                        ck_assert_int_eq(x->xps == XPS_SELECTOR, x->xps_cpus.kind != CPU_SELECTOR_NONE);
                        ck_assert(!x->rps.exclusive && !x->xps_cpus.exclusive);
                        ck_assert_ptr_eq(config_find_net_rule(c, x->name), x);
                }
                if (c->rfs_entries != 0)
                        ck_assert_uint_le(c->rfs_entries, 536870912U);
        }
        diagnostics_done(&d);
        config_free(c);
}

static void parse_robust(const char *text, size_t n) {
        parse_robust_as(text, n, false);
}

/* Every prefix of text, each in a heap copy of exactly n bytes, so ASan sees any read past the end. */
static void parse_prefixes(const char *text, bool settings) {
        size_t len = strlen(text);

        for (size_t n = 0; n <= len; n++) {
                char *copy = malloc(n ? n : 1);

                ck_assert_ptr_nonnull(copy);
                memcpy(copy, text, n);
                parse_robust_as(copy, n, settings);
                free(copy);
        }
}

/* text with each byte replaced by each of replacements in turn. */
static void parse_mutations(const char *text, bool settings) {
        static const char replacements[] = ":-[]{}&*!|>'\"\t\n #,?%@`\\\0\xff";
        size_t len = strlen(text);
        char *copy = malloc(len);

        ck_assert_ptr_nonnull(copy);
        for (size_t i = 0; i < len; i++)
                for (size_t k = 0; k < sizeof replacements - 1; k++) {
                        memcpy(copy, text, len);
                        copy[i] = replacements[k];
                        parse_robust_as(copy, len, settings);
                }
        free(copy);
}

START_TEST(test_truncated_prefixes) {
        size_t len = strlen(full_text);

        for (size_t n = 0; n <= len; n++) {
                /* A heap copy of exactly n bytes, so ASan sees any read past the end. */
                char *copy = malloc(n ? n : 1);

                ck_assert_ptr_nonnull(copy);
                memcpy(copy, full_text, n);
                parse_robust(copy, n);
                free(copy);
        }
        parse_prefixes(devices_text, false);
        parse_prefixes(rfs_settings_text, true);
}
END_TEST

START_TEST(test_mutations) {
        static const char replacements[] = ":-[]{}&*!|>'\"\t\n #,?%@`\\\0\xff";
        size_t len = strlen(full_text);
        char *copy = malloc(len);

        ck_assert_ptr_nonnull(copy);
        for (size_t i = 0; i < len; i++)
                for (size_t k = 0; k < sizeof replacements - 1; k++) {
                        memcpy(copy, full_text, len);
                        copy[i] = replacements[k];
                        parse_robust(copy, len);
                }
        free(copy);

        len = strlen(selector_text);
        copy = malloc(len);
        ck_assert_ptr_nonnull(copy);
        for (size_t i = 0; i < len; i++)
                for (size_t k = 0; k < sizeof replacements - 1; k++) {
                        memcpy(copy, selector_text, len);
                        copy[i] = replacements[k];
                        parse_robust(copy, len);
                }
        free(copy);

        parse_mutations(devices_text, false);
        parse_mutations(rfs_settings_text, true);
}
END_TEST

/* ---- scheduler: and memory: ------------------------------------------------------------- */

/* Parses settings as affinityd.yaml, then rules as test.yaml, into one Config, then verifies. */
static int parse_with_settings(const char *settings, const char *rules) {
        int r, q, v;

        config = config_free(config);
        diagnostics_done(&diag);
        config = config_new();
        ck_assert_ptr_nonnull(config);
        r = config_parse_string(config, "affinityd.yaml", settings, strlen(settings), true, &diag);
        ck_assert_int_ne(r, -ENOMEM);
        q = config_parse_string(config, "test.yaml", rules, strlen(rules), false, &diag);
        ck_assert_int_ne(q, -ENOMEM);
        v = config_verify(config, &diag);
        ck_assert_int_ne(v, -ENOMEM);
        return r < 0 ? r : q < 0 ? q : v;
}

/* A policy whose scheduler: mapping is given in flow style on line 4, starting at column 16. */
#define SCHED_POLICY(flow) \
        "policies:\n" \
        "  - name: p\n" \
        "    match: {comm: x}\n" \
        "    scheduler: " flow "\n"

/* Like check_one_error(), with allow-realtime: true in the settings. */
static void check_one_rt_error(const char *text, unsigned line, unsigned column, const char *substr) {
        ck_assert_int_eq(parse_with_settings("allow-realtime: true\n", text), -EINVAL);
        if (diag.n_errors != 1)
                dump_diagnostics(&diag);
        ck_assert_uint_eq(diag.n_errors, 1);
        assert_error(line, column, substr);
}

START_TEST(test_scheduler_model) {
        static const char text[] =
                "policies:\n"                                                                    /* 1 */
                "  - name: db\n"                                                                 /* 2 */
                "    match: {comm: postgres}\n"                                                  /* 3 */
                "    scheduler:\n"                                                               /* 4 */
                "      policy: batch\n"                                                          /* 5 */
                "      nice: -5\n"                                                               /* 6 */
                "      reset-on-fork: true\n"                                                    /* 7 */
                "      io: {class: best-effort, level: 2}\n"                                     /* 8 */
                "    threads:\n"                                                                 /* 9 */
                "      - name: \"bgwriter*\"\n"                                                  /* 10 */
                "        scheduler: {policy: idle, io: {class: idle}}\n"                         /* 11 */
                "      - name: walwriter\n"                                                      /* 12 */
                "        scheduler: {nice: 3, reset-on-fork: false, io: {class: best-effort}}\n" /* 13 */
                "      - name: other\n"                                                          /* 14 */
                "        scheduler:\n"                                                           /* 15 */
                "          policy: other\n";                                                     /* 16 */
        const Policy *p = NULL;
        const SchedulerSpec *s = NULL;

        ck_assert_int_eq(parse(text), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_uint_eq(config->n_policies, 1);
        p = &config->policies[0];

        s = &p->scheduler;
        ck_assert_uint_eq(s->location.line, 5);
        ck_assert_uint_eq(s->location.column, 7);
        ck_assert(s->has_policy);
        ck_assert_int_eq(s->policy, SCHED_BATCH);
        ck_assert_uint_eq(s->policy_location.line, 5);
        ck_assert_uint_eq(s->policy_location.column, 15);
        ck_assert(!s->has_priority);
        ck_assert(s->has_nice);
        ck_assert_int_eq(s->nice, -5);
        ck_assert(s->has_reset_on_fork);
        ck_assert(s->reset_on_fork);
        ck_assert(s->has_io);
        ck_assert_int_eq(s->io_class, APPLY_IOPRIO_CLASS_BE);
        ck_assert_uint_eq(s->io_level, 2);
        ck_assert_uint_eq(s->io_location.line, 8);
        ck_assert_uint_eq(s->io_location.column, 19);
        ck_assert(p->memory.kind == MEMORY_NONE);

        ck_assert_uint_eq(p->n_threads, 3);
        s = &p->threads[0].scheduler;
        ck_assert(s->has_policy);
        ck_assert_int_eq(s->policy, SCHED_IDLE);
        ck_assert_uint_eq(s->location.line, 11);
        ck_assert_uint_eq(s->location.column, 20);
        ck_assert(!s->has_nice && !s->has_priority && !s->has_reset_on_fork);
        ck_assert(s->has_io);
        ck_assert_int_eq(s->io_class, APPLY_IOPRIO_CLASS_IDLE);
        ck_assert_uint_eq(s->io_level, 0);

        s = &p->threads[1].scheduler;
        ck_assert(!s->has_policy);
        ck_assert(s->has_nice);
        ck_assert_int_eq(s->nice, 3);
        ck_assert(s->has_reset_on_fork);
        ck_assert(!s->reset_on_fork);
        ck_assert(s->has_io);
        ck_assert_int_eq(s->io_class, APPLY_IOPRIO_CLASS_BE);
        ck_assert_uint_eq(s->io_level, 4); /* the default level, as for nice 0 */

        s = &p->threads[2].scheduler;
        ck_assert(s->has_policy);
        ck_assert_int_eq(s->policy, SCHED_OTHER);
        ck_assert(!s->has_io && !s->has_nice);

        /* Bounds are accepted. */
        ck_assert_int_eq(parse(SCHED_POLICY("{nice: 19}")), 0);
        ck_assert_int_eq(config->policies[0].scheduler.nice, 19);
        ck_assert_int_eq(parse(SCHED_POLICY("{nice: -20, io: {class: best-effort, level: 7}}")), 0);
        ck_assert_int_eq(config->policies[0].scheduler.nice, -20);
        ck_assert_uint_eq(config->policies[0].scheduler.io_level, 7);
        ck_assert_int_eq(parse(SCHED_POLICY("{io: {class: best-effort, level: 0}}")), 0);
        ck_assert_uint_eq(config->policies[0].scheduler.io_level, 0);
}
END_TEST

START_TEST(test_scheduler_errors) {
        /* Values. Line 4 is "    scheduler: {…}": the mapping opens at column 16. */
        check_one_error(
                SCHED_POLICY("{policy: fast}"), 4, 25,
                "scheduler: policy: invalid value \"fast\" (expected other, batch, idle, fifo or rr)");
        check_one_error(
                SCHED_POLICY("{policy: sched_batch}"), 4, 25,
                "scheduler: policy: invalid value \"sched_batch\" (did you mean \"batch\"?)");
        check_one_error(
                SCHED_POLICY("{policy: bacth}"), 4, 25,
                "scheduler: policy: invalid value \"bacth\" (did you mean \"batch\"?)");
        check_one_error(SCHED_POLICY("{policy: [fifo]}"), 4, 25, "scheduler: policy: expected one of other");
        check_one_error(
                SCHED_POLICY("{nice: 20}"), 4, 23, "scheduler: nice: 20 is out of range (-20 to 19)");
        check_one_error(
                SCHED_POLICY("{nice: -21}"), 4, 23, "scheduler: nice: -21 is out of range (-20 to 19)");
        check_one_error(
                SCHED_POLICY("{nice: low}"), 4, 23,
                "scheduler: nice: expected a number from -20 to 19, got \"low\"");
        check_one_error(
                SCHED_POLICY("{nice: 5x}"), 4, 23,
                "scheduler: nice: expected a number from -20 to 19, got \"5x\"");
        check_one_error(
                SCHED_POLICY("{reset-on-fork: maybe}"), 4, 32,
                "scheduler: reset-on-fork: expected true or false, got \"maybe\"");
        check_one_error(
                SCHED_POLICY("\"fifo\""), 4, 16,
                "scheduler: expected a mapping (policy:, priority:, nice:, reset-on-fork:, io:), got "
                "\"fifo\"");

        /* priority: only with fifo/rr; fifo/rr only with it; nice not with them. */
        check_one_error(
                SCHED_POLICY("{policy: other, priority: 10}"), 4, 42,
                "scheduler: priority is only for the real-time policies fifo and rr (this one is not)");
        check_one_error(
                SCHED_POLICY("{priority: 10}"), 4, 27,
                "scheduler: priority is only for the real-time policies fifo and rr (no policy: given)");
        check_one_rt_error(
                SCHED_POLICY("{policy: fifo}"), 4, 25, "scheduler: priority: required for fifo/rr");
        check_one_rt_error(SCHED_POLICY("{policy: rr}"), 4, 25, "scheduler: priority: required for fifo/rr");
        check_one_rt_error(
                SCHED_POLICY("{policy: fifo, priority: 10, nice: -5}"), 4, 51,
                "scheduler: nice does not apply to fifo/rr");
        check_one_rt_error(
                SCHED_POLICY("{policy: fifo, priority: 0}"), 4, 41,
                "scheduler: priority: 0 is out of range (1 to 99)");
        check_one_rt_error(
                SCHED_POLICY("{policy: rr, priority: 100}"), 4, 39,
                "scheduler: priority: 100 is out of range (1 to 99)");

        /* io: */
        check_one_error(
                SCHED_POLICY("{io: {class: fast}}"), 4, 29,
                "scheduler: io: class: invalid value \"fast\" (expected realtime, best-effort or idle)");
        check_one_error(
                SCHED_POLICY("{io: {class: be}}"), 4, 29,
                "scheduler: io: class: invalid value \"be\" (did you mean \"best-effort\"?)");
        check_one_error(
                SCHED_POLICY("{io: {class: best-effort, level: 8}}"), 4, 49,
                "scheduler: io: level: 8 is out of range (0 to 7)");
        check_one_error(
                SCHED_POLICY("{io: {class: best-effort, level: -1}}"), 4, 49,
                "scheduler: io: level: -1 is out of range (0 to 7)");
        check_one_error(
                SCHED_POLICY("{io: {class: idle, level: 3}}"), 4, 35,
                "scheduler: io: level does not apply to class idle");
        check_one_error(
                SCHED_POLICY("{io: {level: 3}}"), 4, 21,
                "scheduler: io is missing the required key \"class\"");
        check_one_error(
                SCHED_POLICY("{io: idle}"), 4, 21,
                "scheduler: io: expected a mapping { class: realtime|best-effort|idle, level: 0-7 }, got "
                "\"idle\"");

        /* Unknown and misplaced keys. */
        check_one_error(
                SCHED_POLICY("{priorty: 5}"), 4, 17,
                "unknown key \"priorty\" in scheduler (did you mean \"priority\"?)");
        check_one_error(
                SCHED_POLICY("{level: 5}"), 4, 17,
                "unknown key \"level\" in scheduler (I/O priority keys go under io:)");
        check_one_error(
                SCHED_POLICY("{class: idle}"), 4, 17,
                "unknown key \"class\" in scheduler (I/O priority keys go under io:)");
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    nice: 5\n", 4, 5,
                "unknown key \"nice\" in policy (scheduling keys go under scheduler:)");
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    priority: 5\n", 4, 5,
                "unknown key \"priority\" in policy (scheduling keys go under scheduler:)");
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    threads:\n      - {name: t, nice: 5}\n",
                5, 19, "unknown key \"nice\" in thread rule (scheduling keys go under scheduler:)");
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x, scheduler: {nice: 1}}\n", 3, 22,
                "unknown key \"scheduler\" in match (it belongs to the policy, one level up, not under "
                "match:)");
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    shceduler: {nice: 1}\n", 4, 5,
                "unknown key \"shceduler\" in policy (did you mean \"scheduler\"?)");
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    scheduler: {nice: 1}\n    scheduler: "
                "{nice: 2}\n",
                5, 5, "duplicate key \"scheduler\" in policy (first given at line 4, column 5)");

        /* The same checks in a thread rule (line 5, "      - name: t" then scheduler at column 20). */
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    threads:\n      - name: t\n"
                "        scheduler: {policy: batch, priority: 3}\n",
                6, 46, "scheduler: priority is only for the real-time policies fifo and rr");
}
END_TEST

/* Real-time is refused without the opt-in, with file:line:column. */
START_TEST(test_realtime_opt_in) {
        static const char rules[] = "policies:\n"                                             /* 1 */
                                    "  - name: audio\n"                                       /* 2 */
                                    "    match: {comm: jackd}\n"                              /* 3 */
                                    "    scheduler:\n"                                        /* 4 */
                                    "      policy: rr\n"                                      /* 5 */
                                    "      priority: 20\n"                                    /* 6 */
                                    "    threads:\n"                                          /* 7 */
                                    "      - name: \"jack-rt*\"\n"                            /* 8 */
                                    "        scheduler: {policy: fifo, priority: 70}\n"       /* 9 */
                                    "      - name: \"jack-io*\"\n"                            /* 10 */
                                    "        scheduler: {io: {class: realtime, level: 1}}\n"; /* 11 */
        _cleanup_free_ char *settings = tmp_path("affinityd.yaml"), *dir = tmp_path("policy.d"),
                            *rt = tmp_path("policy.d/10-rt.yaml"), *text = NULL, *expect = NULL;
        const char *dirs[] = {dir, NULL};
        const Policy *p = NULL;

        make_dir("policy.d");
        write_file("policy.d/10-rt.yaml", rules);

        /* No settings file, a settings file without the key, and one that says false. */
        for (unsigned k = 0; k < 3; k++) {
                if (k == 1)
                        write_file("affinityd.yaml", "reserve: \"0\"\n");
                if (k == 2)
                        write_file("affinityd.yaml", "allow-realtime: false\n");
                config = config_free(config);
                diagnostics_done(&diag);
                ck_assert_int_eq(config_load_dirs(settings, dirs, &config, &diag), -EINVAL);
                ck_assert_ptr_null(config);
                ck_assert_uint_eq(diag.n_errors, 3);
                ck_assert_int_eq(diagnostics_format(&diag, &text), 0);
                free(expect);
                ck_assert_int_ge(
                        asprintf(
                                &expect,
                                "%1$s:5:15: error: scheduler: policy rr needs allow-realtime: true in "
                                "affinityd.yaml (a runaway real-time thread can starve the machine)\n"
                                "%1$s:9:29: error: scheduler: policy fifo needs allow-realtime: true in "
                                "affinityd.yaml (a runaway real-time thread can starve the machine)\n"
                                "%1$s:11:33: error: scheduler: io: class realtime needs allow-realtime: "
                                "true in "
                                "affinityd.yaml (real-time I/O can starve every other reader and writer of "
                                "the device)\n",
                                rt),
                        0);
                ck_assert_str_eq(text, expect);
                text = mfree(text);
        }

        /* With the opt-in, the same rules load. */
        write_file("affinityd.yaml", "# real-time threads are wanted here\nallow-realtime: true\n");
        config = config_free(config);
        diagnostics_done(&diag);
        ck_assert_int_eq(config_load_dirs(settings, dirs, &config, &diag), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert(config->allow_realtime);
        ck_assert_uint_eq(config->allow_realtime_location.line, 2);
        ck_assert_uint_eq(config->allow_realtime_location.column, 17);
        p = &config->policies[0];
        ck_assert_int_eq(p->scheduler.policy, SCHED_RR);
        ck_assert_uint_eq(p->scheduler.priority, 20);
        ck_assert_int_eq(p->threads[0].scheduler.policy, SCHED_FIFO);
        ck_assert_uint_eq(p->threads[0].scheduler.priority, 70);
        ck_assert_int_eq(p->threads[1].scheduler.io_class, APPLY_IOPRIO_CLASS_RT);
        ck_assert_uint_eq(p->threads[1].scheduler.io_level, 1);

        /* Non-real-time classes need no opt-in. */
        ck_assert_int_eq(parse(SCHED_POLICY("{policy: idle, io: {class: idle}}")), 0);

        /* The setting's own errors and place. */
        check_one_settings_error(
                "allow-realtime: maybe\n", 1, 17, "allow-realtime: expected true or false, got \"maybe\"");
        check_one_settings_error(
                "allow-realtim: true\n", 1, 1,
                "unknown key \"allow-realtim\" in the top level (did you mean \"allow-realtime\"?)");
        check_one_error(
                "allow-realtime: true\n", 1, 1,
                "allow-realtime: belongs in affinityd.yaml, not in a policy.d file");
}
END_TEST

START_TEST(test_memory) {
        static const char text[] = "policies:\n"                       /* 1 */
                                   "  - name: db\n"                    /* 2 */
                                   "    match: {comm: postgres}\n"     /* 3 */
                                   "    cpus: {near: eth0}\n"          /* 4 */
                                   "    memory:\n"                     /* 5 */
                                   "      nodes: local\n"              /* 6 */
                                   "      migrate: true\n"             /* 7 */
                                   "  - name: cache\n"                 /* 8 */
                                   "    match: {comm: memcached}\n"    /* 9 */
                                   "    memory: {nodes: \"0-1,3\"}\n"; /* 10 */
        const Policy *p = NULL;

        ck_assert_int_eq(parse(text), 0);
        ck_assert_uint_eq(diag.n_items, 0);
        ck_assert_uint_eq(config->n_policies, 2);
        p = &config->policies[0];
        ck_assert(p->memory.kind == MEMORY_LOCAL);
        ck_assert(p->memory.migrate);
        ck_assert_uint_eq(p->memory.location.line, 6);
        ck_assert_uint_eq(p->memory.location.column, 7);
        p = &config->policies[1];
        ck_assert(p->memory.kind == MEMORY_NODES);
        ck_assert(set_is(&p->memory.nodes, "0-1,3"));
        ck_assert(!p->memory.migrate); /* the default */
        ck_assert_uint_eq(p->memory.location.line, 10);
        ck_assert_uint_eq(p->memory.location.column, 13);

#define MEM_POLICY(flow) \
        "policies:\n" \
        "  - name: p\n" \
        "    match: {comm: x}\n" \
        "    memory: " flow "\n"
        /* Line 4 is "    memory: {…}": the mapping opens at column 13. */
        check_one_error(MEM_POLICY("{nodes: \"0-x\"}"), 4, 24, "memory: nodes: invalid cpu-list \"0-x\"");
        check_one_error(
                MEM_POLICY("{nodes: [0, 1]}"), 4, 21, "memory: nodes: expected local or a NUMA node list");
        check_one_error(MEM_POLICY("{nodes: lcoal}"), 4, 21, "memory: nodes: invalid cpu-list \"lcoal\"");
        check_one_error(
                MEM_POLICY("{migrate: true}"), 4, 13, "memory is missing the required key \"nodes\"");
        check_one_error(
                MEM_POLICY("{nodes: local, migrate: maybe}"), 4, 37,
                "memory: migrate: expected true or false, got \"maybe\"");
        check_one_error(
                MEM_POLICY("local"), 4, 13,
                "memory: expected a mapping (nodes: local or a node list, migrate:)");
        check_one_error(
                MEM_POLICY("{nodes: local, migarte: true}"), 4, 28,
                "unknown key \"migarte\" in memory (did you mean \"migrate\"?)");
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    migrate: true\n", 4, 5,
                "unknown key \"migrate\" in policy (migrate: goes under memory:)");

        /* Not in a thread rule, and why. */
        check_one_error(
                "policies:\n  - name: p\n    match: {comm: x}\n    threads:\n      - name: t\n"
                "        memory: {nodes: local}\n",
                6, 9, "memory: is per process: a thread's mempolicy can only be set by the thread itself");
}
END_TEST

static Suite *policy_yaml_suite(void) {
        Suite *s = suite_create("policy-yaml");
        TCase *tc;

        tc = tcase_create("model");
        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, test_full_model);
        tcase_add_test(tc, test_settings);
        tcase_add_test(tc, test_settings_reserve_selector);
        tcase_add_test(tc, test_settings_poll_interval);
        tcase_add_test(tc, test_settings_drift_interval);
        tcase_add_test(tc, test_settings_effect_interval);
        tcase_add_test(tc, test_policy_on_drift);
        tcase_add_test(tc, test_policy_processes_spread);
        tcase_add_test(tc, test_policy_via);
        tcase_add_test(tc, test_empty_files);
        suite_add_tcase(s, tc);

        tc = tcase_create("errors");
        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, test_unknown_keys);
        tcase_add_test(tc, test_wrong_types);
        tcase_add_test(tc, test_required_and_empty);
        tcase_add_test(tc, test_duplicate_keys);
        tcase_add_test(tc, test_cpu_lists);
        tcase_add_test(tc, test_matchers);
        tcase_add_test(tc, test_kube_matchers);
        tcase_add_test(tc, test_yaml_level_errors);
        tcase_add_test(tc, test_one_line_messages);
        tcase_add_test(tc, test_errors_collected);
        tcase_add_test(tc, test_diagnostics_format);
        suite_add_tcase(s, tc);

        tc = tcase_create("selectors");
        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, test_selector_model);
        tcase_add_test(tc, test_selector_values);
        tcase_add_test(tc, test_selector_errors);
        suite_add_tcase(s, tc);

        tc = tcase_create("scheduler-memory");
        tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
        tcase_add_test(tc, test_scheduler_model);
        tcase_add_test(tc, test_scheduler_errors);
        tcase_add_test(tc, test_realtime_opt_in);
        tcase_add_test(tc, test_memory);
        suite_add_tcase(s, tc);

        tc = tcase_create("devices");
        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, test_devices_model);
        tcase_add_test(tc, test_settings_rfs);
        tcase_add_test(tc, test_within);
        tcase_add_test(tc, test_settings_kubelet_cpu_manager_state);
        tcase_add_test(tc, test_irq_errors);
        tcase_add_test(tc, test_avoid);
        tcase_add_test(tc, test_net_errors);
        tcase_add_test(tc, test_device_rule_names);
        suite_add_tcase(s, tc);

        tc = tcase_create("files");
        tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
        tcase_add_test(tc, test_dropins);
        tcase_add_test(tc, test_dropin_errors);
        tcase_add_test(tc, test_config_dir_and_paths);
        tcase_add_test(tc, test_config_dir_mistakes);
        tcase_add_test(tc, test_paths_directories);
        tcase_add_test(tc, test_read_proc_file);
        tcase_add_test(tc, test_read_changing_file);
        suite_add_tcase(s, tc);

        tc = tcase_create("robustness");
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_truncated_prefixes);
        tcase_add_test(tc, test_mutations);
        suite_add_tcase(s, tc);

        return s;
}

int main(void) {
        SRunner *sr = srunner_create(policy_yaml_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
