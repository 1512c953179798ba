/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/state.c: the persisted-originals file format and its files. */
#include <check.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "tmpdir.h"
#include "state.h"

static char *make_tmpdir(void) {
        return make_tmpdir_named("test-state");
}

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* A process with a default and three threads: one with its own mask, one with a real-time
 * scheduling state, one with nothing recorded. */
static void build_sample(StateProcess *s) {
        StateThread *t;

        *s = (StateProcess){.pid = 4242, .starttime = 123456789012ULL};
        ck_assert_int_eq(cpuset_parse_list("0-1,5", &s->affinity, NULL), 0);
        s->has_affinity = true;
        s->sched = (ThreadSched){
                .policy = SCHED_BATCH, .nice = -5, .io_class = APPLY_IOPRIO_CLASS_BE, .io_level = 3};
        s->has_sched = true;
        ck_assert_int_eq(state_process_add_thread(s, 4243, &t), 0);
        ck_assert_int_eq(cpuset_parse_list("7", &t->affinity, NULL), 0);
        t->has_affinity = true;
        ck_assert_int_eq(state_process_add_thread(s, 4244, &t), 0);
        t->sched = (ThreadSched){
                .policy = SCHED_FIFO,
                .priority = 42,
                .reset_on_fork = true,
                .io_class = APPLY_IOPRIO_CLASS_IDLE};
        t->has_sched = true;
        ck_assert_int_eq(state_process_add_thread(s, 4245, &t), 0);
}

static void assert_sched_eq(const ThreadSched *a, const ThreadSched *b) {
        ck_assert_int_eq(a->policy, b->policy);
        ck_assert_uint_eq(a->priority, b->priority);
        ck_assert_int_eq(a->nice, b->nice);
        ck_assert_int_eq(a->reset_on_fork, b->reset_on_fork);
        ck_assert_int_eq(a->io_class, b->io_class);
        ck_assert_uint_eq(a->io_level, b->io_level);
}

static void assert_process_eq(const StateProcess *a, const StateProcess *b) {
        ck_assert_int_eq(a->pid, b->pid);
        ck_assert_uint_eq(a->starttime, b->starttime);
        ck_assert_int_eq(a->has_affinity, b->has_affinity);
        if (a->has_affinity)
                ck_assert(cpuset_equal(&a->affinity, &b->affinity));
        ck_assert_int_eq(a->has_sched, b->has_sched);
        if (a->has_sched)
                assert_sched_eq(&a->sched, &b->sched);
        ck_assert_uint_eq(a->n_threads, b->n_threads);
        for (size_t i = 0; i < a->n_threads; i++) {
                const StateThread *x = &a->threads[i], *y = state_process_find_thread(b, a->threads[i].tid);
                ck_assert_ptr_nonnull(y);
                ck_assert_int_eq(x->has_affinity, y->has_affinity);
                if (x->has_affinity)
                        ck_assert(cpuset_equal(&x->affinity, &y->affinity));
                ck_assert_int_eq(x->has_sched, y->has_sched);
                if (x->has_sched)
                        assert_sched_eq(&x->sched, &y->sched);
        }
}

START_TEST(test_format_parse_round_trip) {
        _cleanup_(state_process_done) StateProcess s = {}, back = {};
        _cleanup_free_ char *text = NULL, *err = NULL;

        build_sample(&s);
        ck_assert_int_eq(state_format(&s, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "default 0-1,5 "));
        ck_assert_ptr_nonnull(strstr(text, "\nthread 4245 - -\n"));
        ck_assert_int_eq(state_parse(text, &back, &err), 0);
        ck_assert_ptr_null(err);
        assert_process_eq(&s, &back);
}
END_TEST

/* The "refused" line: what was reported about a cgroup that allows none of the policy's CPUs. */
START_TEST(test_refusal_round_trip) {
        _cleanup_(state_process_done) StateProcess s = {}, back = {}, plain = {};
        _cleanup_free_ char *text = NULL, *err = NULL, *text2 = NULL;

        build_sample(&s);
        ck_assert_int_eq(cpuset_parse_list("8-15", &s.refusal_wanted, NULL), 0);
        ck_assert_int_eq(cpuset_parse_list("0-3", &s.refusal_allowed, NULL), 0);
        s.has_refusal = true;
        ck_assert_int_eq(state_format(&s, &text), 0);
        ck_assert_msg(strstr(text, "\nrefused 8-15 0-3\n") && text[strlen(text) - 1] == '\n', "%s", text);
        ck_assert_int_eq(state_parse(text, &back, &err), 0);
        assert_process_eq(&s, &back);
        ck_assert(back.has_refusal);
        ck_assert(cpuset_equal(&back.refusal_wanted, &s.refusal_wanted));
        ck_assert(cpuset_equal(&back.refusal_allowed, &s.refusal_allowed));

        /* Without one, no line and nothing parsed. */
        build_sample(&plain);
        ck_assert_int_eq(state_format(&plain, &text2), 0);
        ck_assert_ptr_null(strstr(text2, "refused"));
        state_process_done(&back);
        ck_assert_int_eq(state_parse(text2, &back, &err), 0);
        ck_assert(!back.has_refusal);

        /* A "refused" line that can't be read is ignored: the originals are kept. */
        {
                static const char *const bad[] = {
                        "refused 1", "refused 1 x", "refused - 0", "refused 1 0 2"};

                for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                        _cleanup_free_ char *t = NULL;

                        state_process_done(&back);
                        ck_assert_int_ge(
                                asprintf(&t, "affinityd-state 1\nprocess 1 2\ndefault 3 -\n%s\n", bad[i]),
                                0);
                        ck_assert_int_eq(state_parse(t, &back, &err), 0);
                        ck_assert(!back.has_refusal);
                        ck_assert(back.has_affinity);
                }
        }

        /* An empty set is not a refusal that can be written. */
        cpuset_clear(&s.refusal_allowed);
        free(text);
        text = NULL;
        ck_assert_int_eq(state_format(&s, &text), -EINVAL);
}
END_TEST

START_TEST(test_file_round_trip_and_remove) {
        _cleanup_free_ char *dir = make_tmpdir(), *err = NULL, *name = NULL;
        _cleanup_(state_process_done) StateProcess s = {}, back = {}, other = {};
        _cleanup_free_ StateId *ids = NULL;
        size_t n = 0;
        char path[512];

        build_sample(&s);
        /* The state dir itself does not exist yet: state_write creates it. */
        snprintf(path, sizeof path, "%s/run", dir);
        ck_assert_int_eq(state_write(path, &s), 0);
        ck_assert_int_eq(state_read(path, s.pid, s.starttime, &back, &err), 0);
        assert_process_eq(&s, &back);
        /* The same PID with another starttime is another process: no file. */
        ck_assert_int_eq(state_read(path, s.pid, s.starttime + 1, &other, &err), -ENOENT);

        /* Overwrite in place (the rename leaves no temporary behind). */
        s.threads[0].affinity.n_words = s.threads[0].affinity.n_words; /* unchanged */
        s.has_sched = false;
        ck_assert_int_eq(state_write(path, &s), 0);
        ck_assert_int_eq(state_list(path, &ids, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(ids[0].pid, 4242);
        ck_assert_uint_eq(ids[0].starttime, 123456789012ULL);

        ck_assert_int_eq(state_file_name(s.pid, s.starttime, &name), 0);
        ck_assert_str_eq(name, "4242-123456789012");

        ck_assert_int_eq(state_remove(path, s.pid, s.starttime), 0);
        ck_assert_int_eq(state_remove(path, s.pid, s.starttime), 0); /* already gone: fine */
        free(ids);
        ids = NULL;
        ck_assert_int_eq(state_list(path, &ids, &n), 0);
        ck_assert_uint_eq(n, 0);
        rm_rf(dir);
}
END_TEST

START_TEST(test_file_names) {
        StateId id = {};

        ck_assert_int_eq(state_parse_file_name("17-99", &id), 0);
        ck_assert_int_eq(id.pid, 17);
        ck_assert_uint_eq(id.starttime, 99);
        ck_assert_int_eq(state_parse_file_name(".17.tmp", &id), -EINVAL);
        ck_assert_int_eq(state_parse_file_name("17", &id), -EINVAL);
        ck_assert_int_eq(state_parse_file_name("17-", &id), -EINVAL);
        ck_assert_int_eq(state_parse_file_name("-17-5", &id), -EINVAL);
        ck_assert_int_eq(state_parse_file_name("0-5", &id), -EINVAL);
        ck_assert_int_eq(state_parse_file_name("17-5x", &id), -EINVAL);
}
END_TEST

static const struct {
        const char *text;
        const char *error; /* a substring of the message */
} corrupt[] = {
        {"", "truncated"},
        {"garbage\n", "line 1: not an affinityd state file"},
        {"affinityd-state 2\nprocess 1 2\ndefault - -\n", "line 1"},
        {"affinityd-state 1\n", "truncated"},
        {"affinityd-state 1\nprocess 1 2\n", "truncated"},
        {"affinityd-state 1\nprocess x 2\ndefault - -\n", "line 2: expected \"process PID STARTTIME\""},
        {"affinityd-state 1\nprocess 1 2\ndefault 0-1\n", "line 3: expected AFFINITY and SCHED"},
        {"affinityd-state 1\nprocess 1 2\ndefault 1-0 -\n", "line 3: invalid cpu-list"},
        {"affinityd-state 1\nprocess 1 2\ndefault 0 0 0 40 0 0 0\n", "line 3: invalid scheduling state"},
        {"affinityd-state 1\nprocess 1 2\ndefault 0 0 0 0 0 9 0\n", "line 3: invalid scheduling state"},
        {"affinityd-state 1\nprocess 1 2\ndefault - -\nthread 5 - -\nthread 5 - -\n",
         "line 5: duplicate thread 5"},
        {"affinityd-state 1\nprocess 1 2\nthread 5 - -\n", "line 3: \"thread\" before"},
        {"affinityd-state 1\nprocess 1 2\ndefault - -\nfoo\n", "line 4: unknown record"},
        {"affinityd-state 1\nprocess 1 2\ndefault - -\n\n", "line 4: empty line"},
        {"affinityd-state 1\nprocess 1 2\ndefault - -\nthread 5 0-1 1 2 3 4 5 6 7 8 9\n",
         "line 4: too many fields"},
};

START_TEST(test_corrupt_rejected) {
        _cleanup_(state_process_done) StateProcess s = {};
        _cleanup_free_ char *err = NULL;

        ck_assert_int_eq(state_parse(corrupt[_i].text, &s, &err), -EBADMSG);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(
                strstr(err, corrupt[_i].error), "case %d: got \"%s\", expected \"%s\"", _i, err,
                corrupt[_i].error);
        ck_assert_int_eq(s.pid, 0); /* ret untouched */
}
END_TEST

START_TEST(test_read_rejects_bad_files) {
        _cleanup_free_ char *dir = make_tmpdir(), *err = NULL;
        _cleanup_(state_process_done) StateProcess s = {};
        char path[512];

        snprintf(path, sizeof path, "%s/processes", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        /* A file whose content names another process than its name. */
        snprintf(path, sizeof path, "%s/processes/10-20", dir);
        write_text(path, "affinityd-state 1\nprocess 10 21\ndefault 0 -\n");
        ck_assert_int_eq(state_read(dir, 10, 20, &s, &err), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(err, "10-20:2: names process 10-21"));
        free(err);
        err = NULL;
        /* A corrupt one: the message names the file and the line. */
        snprintf(path, sizeof path, "%s/processes/11-20", dir);
        write_text(path, "affinityd-state 1\nprocess 11 20\ndefault zz -\n");
        ck_assert_int_eq(state_read(dir, 11, 20, &s, &err), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(err, "/processes/11-20:3: invalid cpu-list \"zz\""));
        rm_rf(dir);
}
END_TEST

START_TEST(test_format_refuses_invalid) {
        _cleanup_(state_process_done) StateProcess s = {.pid = 0};
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(state_format(&s, &text), -EINVAL);
        s.pid = 3;
        s.has_affinity = true; /* but empty */
        ck_assert_int_eq(state_format(&s, &text), -EINVAL);
}
END_TEST

/* ---- unit properties (STATE_DIR/units) ---- */

START_TEST(test_unit_escape) {
        static const struct {
                const char *unit, *file;
        } cases[] = {
                {"web.service", "web.service"},         {"getty@tty1.service", "getty@tty1.service"},
                {"a/b c.service", "a%2Fb%20c.service"}, {".hidden.service", "%2Ehidden.service"},
                {"x%y.scope", "x%25y.scope"},           {"..", "%2E."},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *file = NULL, *unit = NULL;
                ck_assert_int_eq(state_unit_escape(cases[i].unit, &file), 0);
                ck_assert_str_eq(file, cases[i].file);
                ck_assert_ptr_null(strchr(file, '/'));
                ck_assert_int_eq(state_unit_unescape(file, &unit), 0);
                ck_assert_str_eq(unit, cases[i].unit);
        }
        /* Not produced by the escaping: temporary files, bad or non-canonical escapes. */
        static const char *const bad[] = {
                ".web.service.tmp", "a%2fb", "a%2", "a%00b", "a%41b", "a b", "",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *unit = NULL;
                ck_assert_msg(state_unit_unescape(bad[i], &unit) == -EINVAL, "\"%s\" accepted", bad[i]);
                ck_assert_ptr_null(unit);
        }
        char *file = NULL;
        ck_assert_int_eq(state_unit_escape("", &file), -EINVAL);
        ck_assert_ptr_null(file);
}
END_TEST

START_TEST(test_unit_format_parse) {
        _cleanup_(state_unit_done) StateUnit s = {}, t = {}, e = {};
        _cleanup_free_ char *text = NULL, *text2 = NULL, *etext = NULL;

        s.unit = strdup("web.service");
        ck_assert_ptr_nonnull(s.unit);
        ck_assert_int_eq(cpuset_add_range(&s.allowed_cpus, 2, 5), 0);
        ck_assert_int_eq(cpuset_add(&s.allowed_cpus, 9), 0);
        ck_assert_int_eq(cpuset_add(&s.allowed_memory_nodes, 1), 0);
        ck_assert_int_eq(state_unit_format(&s, &text), 0);
        ck_assert_str_eq(
                text, "affinityd-unit 1\nunit web.service\nallowed-cpus 2-5,9\nallowed-memory-nodes 1\n");
        ck_assert_int_eq(state_unit_parse(text, &t, NULL), 0);
        ck_assert_str_eq(t.unit, "web.service");
        ck_assert(cpuset_equal(&t.allowed_cpus, &s.allowed_cpus));
        ck_assert(cpuset_equal(&t.allowed_memory_nodes, &s.allowed_memory_nodes));
        ck_assert_int_eq(state_unit_format(&t, &text2), 0);
        ck_assert_str_eq(text2, text);

        /* Empty properties (not set) are "-". */
        e.unit = strdup("x.scope");
        ck_assert_ptr_nonnull(e.unit);
        ck_assert_int_eq(state_unit_format(&e, &etext), 0);
        ck_assert_str_eq(etext, "affinityd-unit 1\nunit x.scope\nallowed-cpus -\nallowed-memory-nodes -\n");
        state_unit_done(&e);
        ck_assert_int_eq(state_unit_parse(etext, &e, NULL), 0);
        ck_assert(cpuset_is_empty(&e.allowed_cpus));
        ck_assert(cpuset_is_empty(&e.allowed_memory_nodes));
}
END_TEST

static const struct {
        const char *text, *error;
} unit_corrupt[] = {
        {"affinityd-state 1\nunit a.service\nallowed-cpus -\nallowed-memory-nodes -\n", "line 1:"},
        {"affinityd-unit 1\nunit a.service\nallowed-cpus zz\nallowed-memory-nodes -\n",
         "line 3: bad cpu-list"},
        {"affinityd-unit 1\nunit a.service\nallowed-cpus -\n", "line 4: missing line"},
        {"affinityd-unit 1\nallowed-cpus -\nunit a.service\nallowed-memory-nodes -\n",
         "line 2: expected \"unit"},
        {"affinityd-unit 1\nunit a.service\nallowed-cpus -\nallowed-memory-nodes -\nx 1\n",
         "line 5: unexpected"},
        {"affinityd-unit 1\nunit a.service\nallowed-cpus 1\nallowed-memory-nodes 0-\n",
         "line 4: bad cpu-list"},
};

START_TEST(test_unit_corrupt_rejected) {
        _cleanup_(state_unit_done) StateUnit s = {};
        _cleanup_free_ char *err = NULL;

        ck_assert_int_eq(state_unit_parse(unit_corrupt[_i].text, &s, &err), -EBADMSG);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(
                strncmp(err, unit_corrupt[_i].error, strlen(unit_corrupt[_i].error)) == 0,
                "error \"%s\", expected \"%s...\"", err, unit_corrupt[_i].error);
        ck_assert_ptr_null(s.unit);
}
END_TEST

START_TEST(test_unit_files) {
        _cleanup_free_ char *dir = make_tmpdir(), *err = NULL;
        _cleanup_(state_unit_done) StateUnit a = {}, b = {}, r = {};
        _cleanup_strv_free_ char **units = NULL;
        char path[512];
        struct stat st;

        /* Absent directory: empty list. */
        ck_assert_int_eq(state_unit_list(dir, &units), 0);
        ck_assert_ptr_null(units);

        a.unit = strdup("web.service");
        b.unit = strdup("a/b.scope");
        ck_assert(a.unit && b.unit);
        ck_assert_int_eq(cpuset_add(&a.allowed_cpus, 3), 0);
        ck_assert_int_eq(state_unit_write(dir, &a), 0);
        ck_assert_int_eq(state_unit_write(dir, &b), 0);
        snprintf(path, sizeof path, "%s/units/a%%2Fb.scope", dir);
        ck_assert_int_eq(stat(path, &st), 0);
        /* Leftovers that are not unit files are skipped. */
        snprintf(path, sizeof path, "%s/units/.web.service.tmp", dir);
        write_text(path, "junk");

        ck_assert_int_eq(state_unit_list(dir, &units), 0);
        ck_assert_int_eq(strv_length(units), 2);
        ck_assert_str_eq(units[0], "a/b.scope");
        ck_assert_str_eq(units[1], "web.service");

        ck_assert_int_eq(state_unit_read(dir, "web.service", &r, NULL), 0);
        ck_assert_str_eq(r.unit, "web.service");
        ck_assert(cpuset_equal(&r.allowed_cpus, &a.allowed_cpus));
        ck_assert(cpuset_is_empty(&r.allowed_memory_nodes));
        state_unit_done(&r);

        /* Overwritten in place. */
        ck_assert_int_eq(cpuset_add(&a.allowed_cpus, 4), 0);
        ck_assert_int_eq(state_unit_write(dir, &a), 0);
        ck_assert_int_eq(state_unit_read(dir, "web.service", &r, NULL), 0);
        ck_assert_int_eq(cpuset_count(&r.allowed_cpus), 2);
        state_unit_done(&r);

        /* A file naming another unit. */
        snprintf(path, sizeof path, "%s/units/other.service", dir);
        write_text(path, "affinityd-unit 1\nunit web.service\nallowed-cpus -\nallowed-memory-nodes -\n");
        ck_assert_int_eq(state_unit_read(dir, "other.service", &r, &err), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(err, "/units/other.service:2: names unit web.service"));
        ck_assert_ptr_null(r.unit);

        ck_assert_int_eq(state_unit_remove(dir, "web.service"), 0);
        ck_assert_int_eq(state_unit_remove(dir, "web.service"), 0); /* already gone */
        ck_assert_int_eq(state_unit_read(dir, "web.service", &r, NULL), -ENOENT);
        units = strv_free(units);
        ck_assert_int_eq(state_unit_list(dir, &units), 0);
        ck_assert_int_eq(strv_length(units), 2);
        ck_assert_str_eq(units[0], "a/b.scope");
        ck_assert_str_eq(units[1], "other.service");
        rm_rf(dir);
}
END_TEST

/* ---- device targets (STATE_DIR/targets) ---- */

static void target_set(
        StateTarget *t, const char *kind, const char *key, const char *identity, const char *original) {
        *t = (StateTarget){
                .kind = strdup(kind),
                .key = strdup(key),
                .identity = strdup(identity),
                .original = strdup(original)};
        ck_assert(t->kind && t->key && t->identity && t->original);
}

static void assert_target_eq(const StateTarget *a, const StateTarget *b) {
        ck_assert_str_eq(a->kind, b->kind);
        ck_assert_str_eq(a->key, b->key);
        ck_assert_str_eq(a->identity, b->identity);
        ck_assert_str_eq(a->original, b->original);
}

START_TEST(test_target_format_parse) {
        static const struct {
                const char *kind, *key, *identity, *original;
        } cases[] = {
                {"irq", "38", "virtio2-input.0", "0-1"},
                {"rps", "eth0/rx-0", "2", "00000000,00000003"},
                {"xps", "eth0/tx-1", "2", "00000000"},
                {"flow", "eth0/rx-0", "2", "0"},
                {"rfs", "rps_sock_flow_entries", "", "0"},
                {"irq", "24", "eth0-TxRx-0 extra name", " spaces kept "},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(state_target_done) StateTarget s = {}, t = {};
                _cleanup_free_ char *text = NULL, *text2 = NULL, *expected = NULL;

                target_set(&s, cases[i].kind, cases[i].key, cases[i].identity, cases[i].original);
                ck_assert_int_eq(state_target_format(&s, &text), 0);
                ck_assert_int_ge(
                        asprintf(
                                &expected, "affinityd-target 1\nkind %s\nkey %s\nidentity %s\noriginal %s\n",
                                cases[i].kind, cases[i].key, cases[i].identity, cases[i].original),
                        0);
                ck_assert_str_eq(text, expected);
                ck_assert_int_eq(state_target_parse(text, &t, NULL), 0);
                assert_target_eq(&t, &s);
                ck_assert_int_eq(state_target_format(&t, &text2), 0);
                ck_assert_str_eq(text2, text);
        }

        /* "identity" with nothing after it (no space) is the empty identity too; no final newline
         * is fine. */
        _cleanup_(state_target_done) StateTarget u = {};
        ck_assert_int_eq(
                state_target_parse("affinityd-target 1\nkind rfs\nkey k\nidentity\noriginal 4096", &u, NULL),
                0);
        ck_assert_str_eq(u.identity, "");
        ck_assert_str_eq(u.original, "4096");
}
END_TEST

START_TEST(test_target_format_refuses_invalid) {
        static const struct {
                const char *kind, *key, *identity, *original;
        } bad[] = {
                {NULL, "38", "", "1"},      {"", "38", "", "1"},      {"IRQ", "38", "", "1"},
                {"ir q", "38", "", "1"},    {"rps2", "38", "", "1"},  {"irq", NULL, "", "1"},
                {"irq", "", "", "1"},       {"irq", "3\n8", "", "1"}, {"irq", "38", NULL, "1"},
                {"irq", "38", "a\nb", "1"}, {"irq", "38", "", NULL},  {"irq", "38", "", ""},
                {"irq", "38", "", "1\n"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                StateTarget s = {
                        .kind = (char *)bad[i].kind,
                        .key = (char *)bad[i].key,
                        .identity = (char *)bad[i].identity,
                        .original = (char *)bad[i].original};
                char *text = NULL;
                ck_assert_msg(state_target_format(&s, &text) == -EINVAL, "case %zu accepted", i);
                ck_assert_ptr_null(text);
        }
}
END_TEST

static const struct {
        const char *text, *error;
} target_corrupt[] = {
        {"", "line 1: not an affinityd target file"},
        {"affinityd-unit 1\nkind irq\nkey 1\nidentity \noriginal 1\n",
         "line 1: not an affinityd target file"},
        {"affinityd-target 1\n", "line 2: truncated: the \"kind\" line is missing"},
        {"affinityd-target 1\nkind irq\nkey 38\n", "line 4: truncated: the \"identity\" line is missing"},
        {"affinityd-target 1\nkind irq\nkey 38\nidentity x\n", "line 5: truncated: the \"original\" line"},
        {"affinityd-target 1\nkind IRQ\nkey 38\nidentity x\noriginal 1\n", "line 2: invalid kind \"IRQ\""},
        {"affinityd-target 1\nkind \nkey 38\nidentity x\noriginal 1\n", "line 2: invalid kind \"\""},
        {"affinityd-target 1\nkey 38\nkind irq\nidentity x\noriginal 1\n",
         "line 2: expected \"kind VALUE\""},
        {"affinityd-target 1\nkind irq\nkey \nidentity x\noriginal 1\n", "line 3: empty key"},
        {"affinityd-target 1\nkind irq\nkeys 38\nidentity x\noriginal 1\n",
         "line 3: expected \"key VALUE\""},
        {"affinityd-target 1\nkind irq\nkey 38\nidentity x\noriginal \n", "line 5: empty original"},
        {"affinityd-target 1\nkind irq\nkey 38\n\nidentity x\noriginal 1\n", "line 4: expected \"identity"},
        {"affinityd-target 1\nkind irq\nkey 38\nidentity x\noriginal 1\nextra\n",
         "line 6: unexpected extra"},
        {"affinityd-target 1\nkind irq\nkey 38\nidentity x\noriginal 1\n\n", "line 6: unexpected extra"},
};

START_TEST(test_target_corrupt_rejected) {
        _cleanup_(state_target_done) StateTarget s = {};
        _cleanup_free_ char *err = NULL;

        ck_assert_int_eq(state_target_parse(target_corrupt[_i].text, &s, &err), -EBADMSG);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(
                strncmp(err, target_corrupt[_i].error, strlen(target_corrupt[_i].error)) == 0,
                "error \"%s\", expected \"%s...\"", err, target_corrupt[_i].error);
        ck_assert_ptr_null(s.kind);
        ck_assert_ptr_null(s.original);
        /* ret_error may be NULL. */
        ck_assert_int_eq(state_target_parse(target_corrupt[_i].text, &s, NULL), -EBADMSG);
}
END_TEST

START_TEST(test_target_files) {
        _cleanup_free_ char *dir = make_tmpdir(), *err = NULL;
        _cleanup_(state_target_done) StateTarget irq = {}, rps = {}, xps = {}, rfs = {}, r = {};
        StateTarget *list = NULL;
        size_t n = SIZE_MAX;
        char path[512];
        struct stat st;

        /* Absent directory: empty list. */
        ck_assert_int_eq(state_target_list(dir, &list, &n), 0);
        ck_assert_ptr_null(list);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(state_target_read(dir, "irq", "38", &r, NULL), -ENOENT);

        target_set(&irq, "irq", "38", "virtio2-input.0", "0-1");
        target_set(&rps, "rps", "eth0/rx-0", "2", "00000000,00000003");
        target_set(&xps, "xps", "eth0/tx-1", "2", "00000001");
        target_set(&rfs, "rfs", "rps_sock_flow_entries", "", "0");
        ck_assert_int_eq(state_target_write(dir, &xps), 0);
        ck_assert_int_eq(state_target_write(dir, &rps), 0);
        ck_assert_int_eq(state_target_write(dir, &irq), 0);
        ck_assert_int_eq(state_target_write(dir, &rfs), 0);

        /* KIND@ESCAPED: the "/" of the key escaped, no temporary file left behind. */
        snprintf(path, sizeof path, "%s/targets/rps@eth0%%2Frx-0", dir);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert(S_ISREG(st.st_mode));
        snprintf(path, sizeof path, "%s/targets/irq@38", dir);
        ck_assert_int_eq(stat(path, &st), 0);
        snprintf(path, sizeof path, "%s/targets/.rps@eth0%%2Frx-0.tmp", dir);
        ck_assert_int_eq(stat(path, &st), -1);

        ck_assert_int_eq(state_target_read(dir, "rps", "eth0/rx-0", &r, NULL), 0);
        assert_target_eq(&r, &rps);
        state_target_done(&r);
        ck_assert_int_eq(state_target_read(dir, "rfs", "rps_sock_flow_entries", &r, NULL), 0);
        assert_target_eq(&r, &rfs);
        ck_assert_str_eq(r.identity, "");
        state_target_done(&r);
        /* Same key, other kind: another record. */
        ck_assert_int_eq(state_target_read(dir, "flow", "eth0/rx-0", &r, NULL), -ENOENT);

        /* Overwritten in place. */
        free(irq.original);
        irq.original = strdup("1");
        ck_assert_ptr_nonnull(irq.original);
        ck_assert_int_eq(state_target_write(dir, &irq), 0);
        ck_assert_int_eq(state_target_read(dir, "irq", "38", &r, NULL), 0);
        ck_assert_str_eq(r.original, "1");
        state_target_done(&r);

        /* Leftovers, malformed files and files that are not targets are skipped by the list. */
        snprintf(path, sizeof path, "%s/targets/.irq@38.tmp", dir);
        write_text(path, "junk");
        snprintf(path, sizeof path, "%s/targets/irq@39", dir);
        write_text(path, "affinityd-target 1\nkind irq\nkey 39\n");
        snprintf(path, sizeof path, "%s/targets/README", dir);
        write_text(path, "not a target");
        snprintf(path, sizeof path, "%s/targets/Irq@40", dir);
        write_text(path, "affinityd-target 1\nkind irq\nkey 40\nidentity \noriginal 1\n");

        ck_assert_int_eq(state_target_list(dir, &list, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_ptr_nonnull(list);
        /* Sorted by kind, then key. */
        assert_target_eq(&list[0], &irq);
        assert_target_eq(&list[1], &rfs);
        assert_target_eq(&list[2], &rps);
        assert_target_eq(&list[3], &xps);
        for (size_t i = 0; i < n; i++)
                state_target_done(&list[i]);
        list = mfree(list);

        /* Malformed: "PATH:LINE: reason". */
        ck_assert_int_eq(state_target_read(dir, "irq", "39", &r, &err), -EBADMSG);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(
                strstr(err, "/targets/irq@39:4: truncated: the \"identity\" line is missing") != NULL,
                "error \"%s\"", err);
        ck_assert_ptr_null(r.kind);
        err = mfree(err);

        /* A file naming another kind, or another key. */
        snprintf(path, sizeof path, "%s/targets/flow@eth0%%2Frx-0", dir);
        write_text(path, "affinityd-target 1\nkind rps\nkey eth0/rx-0\nidentity 2\noriginal 0\n");
        ck_assert_int_eq(state_target_read(dir, "flow", "eth0/rx-0", &r, &err), -EBADMSG);
        ck_assert_msg(
                strstr(err, "/targets/flow@eth0%2Frx-0:2: names kind \"rps\"") != NULL, "error \"%s\"", err);
        ck_assert_ptr_null(r.kind);
        err = mfree(err);
        snprintf(path, sizeof path, "%s/targets/irq@41", dir);
        write_text(path, "affinityd-target 1\nkind irq\nkey 42\nidentity \noriginal 1\n");
        ck_assert_int_eq(state_target_read(dir, "irq", "41", &r, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "/targets/irq@41:3: names key \"42\"") != NULL, "error \"%s\"", err);
        err = mfree(err);
        /* Both are skipped by the list. */
        ck_assert_int_eq(state_target_list(dir, &list, &n), 0);
        ck_assert_uint_eq(n, 4);
        for (size_t i = 0; i < n; i++)
                state_target_done(&list[i]);
        list = mfree(list);

        /* Invalid kinds and keys never reach the file system. */
        ck_assert_int_eq(state_target_read(dir, "../x", "38", &r, NULL), -EINVAL);
        ck_assert_int_eq(state_target_read(dir, "irq", "", &r, NULL), -EINVAL);
        ck_assert_int_eq(state_target_remove(dir, "IRQ", "38"), -EINVAL);

        ck_assert_int_eq(state_target_remove(dir, "rps", "eth0/rx-0"), 0);
        ck_assert_int_eq(state_target_remove(dir, "rps", "eth0/rx-0"), 0); /* already gone */
        ck_assert_int_eq(state_target_read(dir, "rps", "eth0/rx-0", &r, NULL), -ENOENT);
        ck_assert_int_eq(state_target_list(dir, &list, &n), 0);
        ck_assert_uint_eq(n, 3);
        assert_target_eq(&list[0], &irq);
        assert_target_eq(&list[1], &rfs);
        assert_target_eq(&list[2], &xps);
        for (size_t i = 0; i < n; i++)
                state_target_done(&list[i]);
        free(list);
        rm_rf(dir);
}
END_TEST

static Suite *state_suite(void) {
        Suite *s = suite_create("state");
        TCase *tc = tcase_create("format");

        tcase_add_test(tc, test_format_parse_round_trip);
        tcase_add_test(tc, test_refusal_round_trip);
        tcase_add_test(tc, test_file_names);
        tcase_add_loop_test(tc, test_corrupt_rejected, 0, (int)ELEMENTSOF(corrupt));
        tcase_add_test(tc, test_format_refuses_invalid);
        suite_add_tcase(s, tc);
        tc = tcase_create("files");
        tcase_add_test(tc, test_file_round_trip_and_remove);
        tcase_add_test(tc, test_read_rejects_bad_files);
        suite_add_tcase(s, tc);
        tc = tcase_create("units");
        tcase_add_test(tc, test_unit_escape);
        tcase_add_test(tc, test_unit_format_parse);
        tcase_add_loop_test(tc, test_unit_corrupt_rejected, 0, (int)ELEMENTSOF(unit_corrupt));
        tcase_add_test(tc, test_unit_files);
        suite_add_tcase(s, tc);
        tc = tcase_create("targets");
        tcase_add_test(tc, test_target_format_parse);
        tcase_add_test(tc, test_target_format_refuses_invalid);
        tcase_add_loop_test(tc, test_target_corrupt_rejected, 0, (int)ELEMENTSOF(target_corrupt));
        tcase_add_test(tc, test_target_files);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(state_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
