/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of matching: fixture /proc trees with several processes, policies and plans filled
 * in by hand (plan_new() is not used), every key matching and not matching, first match
 * wins, pending policies skipped, lazy loading of facts, and unreadable facts — including a
 * real -EACCES on /proc/PID/exe for an unprivileged reader.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "match-index.h"
#include "match.h"
#include "procfs.h"

#define STRV(...) ((char *[]){__VA_ARGS__, NULL})

static char *root;

static void mkdir_p(const char *path) {
        char buf[PATH_MAX];

        ck_assert_uint_lt(strlen(path), sizeof(buf));
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
                        *p = '/';
                }
        ck_assert(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

static void put(pid_t pid, const char *file, const char *data, size_t len) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/proc/%d", root, (int)pid);
        mkdir_p(path);
        snprintf(path, sizeof(path), "%s/proc/%d/%s", root, (int)pid, file);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
        close(fd);
}

static void remove_fact(pid_t pid, const char *file) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/proc/%d/%s", root, (int)pid, file);
        ck_assert_int_eq(unlink(path), 0);
}

/* A fake process: comm, euid, cgroup file, exe link target (NULL: none), raw cmdline. */
static void put_process(
        pid_t pid, const char *comm, uid_t euid, const char *cgroup, const char *exe, const char *cmdline,
        size_t cmdline_len) {
        char buf[512], path[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s\n", comm);
        put(pid, "comm", buf, strlen(buf));
        snprintf(
                buf, sizeof(buf),
                "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t%d\nUid:\t%u\t%u\t%u\t%u\n"
                "Gid:\t0\t0\t0\t0\nCpus_allowed_list:\t0-1\n",
                comm, (int)pid, 4242U, (unsigned)euid, (unsigned)euid, (unsigned)euid);
        put(pid, "status", buf, strlen(buf));
        put(pid, "cgroup", cgroup, strlen(cgroup));
        put(pid, "cmdline", cmdline, cmdline_len);
        if (exe) {
                snprintf(path, sizeof(path), "%s/proc/%d/exe", root, (int)pid);
                ck_assert_int_eq(symlink(exe, path), 0);
        }
}

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

/*
 * 100 nginx (uid 33, v2 cgroup nginx.service), 200 postgres (uid 105, hybrid cgroup, deleted exe),
 * 300 a 15-char comm cut from a longer name (uid 0, session scope), 400 a kernel thread (no
 * exe, empty cmdline, cgroup "/"). 500 does not exist.
 */
static void fixture_setup(void) {
        char tmpl[] = "/tmp/test-match-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        root = strdup(tmpl);
        ck_assert_ptr_nonnull(root);

        put_process(
                100, "nginx", 33, "0::/system.slice/nginx.service\n", "/usr/sbin/nginx",
                "nginx\0-g\0daemon off;\0--role=edge\0", 32);
        put_process(
                200, "postgres", 105,
                "12:name=systemd:/system.slice/postgresql@15-main.service\n4:memory:/x\n0::/\n",
                "/usr/lib/postgresql/15/bin/postgres (deleted)",
                "/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/postgresql/15/main\0", 66);
        put_process(
                300, "averyveryverylo", 0, "0::/user.slice/user-0.slice/session-3.scope\n",
                "/opt/bin/averyveryverylongname", "averyveryverylongname\0--x\0", 26);
        put_process(400, "kworker/0:1", 0, "0::/\n", NULL, "", 0);
}

static void fixture_teardown(void) {
        if (root)
                nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
        root = mfree(root);
}

/* Compiles cmdline patterns into m as the policy loader would (regex-set.h). */
static void compile_cmdline(Matcher *m) {
        m->n_cmdline = strv_length(m->cmdline);
        ck_assert_int_eq(regex_set_new(m->cmdline, &m->cmdline_re, NULL, NULL), 0);
}

static void free_cmdline(Matcher *m) {
        m->cmdline_re = regex_set_free(m->cmdline_re);
        m->n_cmdline = 0;
}

/* matcher_test on a fresh set of facts for pid; *ret_loaded gets what was read. */
static int test_one(Matcher *m, const uid_t *uids, size_t n_uids, pid_t pid, unsigned *ret_loaded) {
        ProcessFacts f;
        int r;

        if (m->cmdline && !m->cmdline_re)
                compile_cmdline(m);
        process_facts_init(&f, root, pid);
        r = matcher_test(m, uids, n_uids, &f);
        if (ret_loaded)
                *ret_loaded = f.loaded;
        process_facts_done(&f);
        return r;
}

#define EXPECT(m, pid, want) \
        ck_assert_msg( \
                test_one(&(m), NULL, 0, (pid), NULL) == (want), "%s on pid %d: expected %d", #m, (pid), \
                (want))

START_TEST(test_key_comm) {
        Matcher a = {.comm = STRV("nginx")}, b = {.comm = STRV("post*", "nginx")},
                c = {.comm = STRV("[nN]gin?")}, d = {.comm = STRV("ngin")}, e = {.comm = STRV("*nginx*x")};

        EXPECT(a, 100, 1);
        EXPECT(a, 200, 0);
        EXPECT(b, 100, 1);
        EXPECT(b, 200, 1);
        EXPECT(b, 300, 0);
        EXPECT(c, 100, 1);
        EXPECT(d, 100, 0); /* globs are anchored */
        EXPECT(e, 100, 0);

        /* The kernel keeps 15 characters: the full name can't match, the 15 can. */
        Matcher full = {.comm = STRV("averyveryverylongname")}, cut = {.comm = STRV("averyveryverylo")},
                star = {.comm = STRV("averyvery*")};
        EXPECT(full, 300, 0);
        EXPECT(cut, 300, 1);
        EXPECT(star, 300, 1);

        /* A comm with '/' and a glob with '*' across it (flags 0). */
        Matcher kw = {.comm = STRV("kworker*")};
        EXPECT(kw, 400, 1);
}
END_TEST

START_TEST(test_key_user) {
        Matcher m = {.user = STRV("www-data")};
        const uid_t www[] = {33}, two[] = {105, 33}, rootuid[] = {0};

        ck_assert_int_eq(test_one(&m, www, 1, 100, NULL), 1);
        ck_assert_int_eq(test_one(&m, www, 1, 200, NULL), 0);
        ck_assert_int_eq(test_one(&m, two, 2, 200, NULL), 1);
        ck_assert_int_eq(test_one(&m, two, 2, 300, NULL), 0);
        ck_assert_int_eq(test_one(&m, rootuid, 1, 300, NULL), 1);
        /* The effective uid, not the real one (4242 in every fixture). */
        const uid_t real[] = {4242};
        ck_assert_int_eq(test_one(&m, real, 1, 100, NULL), 0);
        /* A user key that resolved to nothing matches nothing. */
        ck_assert_int_eq(test_one(&m, NULL, 0, 100, NULL), 0);
}
END_TEST

START_TEST(test_key_cgroup_unit) {
        Matcher sys = {.cgroup = STRV("/system.slice/*")},
                exact = {.cgroup = STRV("/system.slice/nginx.service")},
                user = {.cgroup = STRV("/user.slice/*")}, slash = {.cgroup = STRV("/")};

        EXPECT(sys, 100, 1);
        EXPECT(sys, 200, 1); /* hybrid: from name=systemd, not the v2 "/" */
        EXPECT(sys, 300, 0);
        EXPECT(exact, 100, 1);
        EXPECT(exact, 200, 0);
        EXPECT(user, 300, 1); /* '*' crosses '/' */
        EXPECT(slash, 400, 1);
        EXPECT(slash, 200, 0);

        Matcher nginx = {.unit = STRV("nginx.service")}, pg = {.unit = STRV("postgresql@*.service")},
                scope = {.unit = STRV("session-*.scope", "nope.service")}, any = {.unit = STRV("*")},
                slice = {.unit = STRV("system.slice")};
        EXPECT(nginx, 100, 1);
        EXPECT(nginx, 200, 0);
        EXPECT(pg, 200, 1);
        EXPECT(pg, 100, 0);
        EXPECT(scope, 300, 1);
        EXPECT(any, 100, 1);
        EXPECT(any, 400, 0); /* cgroup "/" has no unit: matches nothing */
        EXPECT(slice, 100, 0);
}
END_TEST

START_TEST(test_key_exe) {
        Matcher a = {.exe = STRV("/usr/sbin/nginx")},
                b = {.exe = STRV("/usr/lib/postgresql/*/bin/postgres")}, del = {.exe = STRV("* (deleted)")},
                any = {.exe = STRV("*")}, c = {.exe = STRV("nginx")};

        EXPECT(a, 100, 1);
        EXPECT(a, 200, 0);
        EXPECT(b, 200, 1); /* " (deleted)" stripped */
        EXPECT(del, 200, 0);
        EXPECT(any, 300, 1);
        EXPECT(any, 400, 0); /* no exe (kernel thread): matches nothing, not even "*" */
        EXPECT(c, 100, 0);   /* the whole path, not the base name */
}
END_TEST

START_TEST(test_key_cmdline) {
        Matcher role = {.cmdline = STRV("--role=edge")}, joined = {.cmdline = STRV("-g daemon off; --role")},
                anch = {.cmdline = STRV("^/usr/lib/postgresql/[0-9]+/bin/postgres -D")},
                anyof = {.cmdline = STRV("nomatch", "main$")}, empty = {.cmdline = STRV("^$")},
                nul = {.cmdline = STRV("nginx.-g")};

        EXPECT(role, 100, 1);
        EXPECT(role, 200, 0);
        EXPECT(joined, 100, 1); /* argv joined by single spaces */
        EXPECT(anch, 200, 1);
        EXPECT(anch, 100, 0);
        EXPECT(anyof, 200, 1);
        EXPECT(anyof, 100, 0);
        EXPECT(empty, 400, 1);
        EXPECT(empty, 100, 0);
        EXPECT(nul, 100, 1); /* the separator is one character */

        free_cmdline(&role);
        free_cmdline(&joined);
        free_cmdline(&anch);
        free_cmdline(&anyof);
        free_cmdline(&empty);
        free_cmdline(&nul);
}
END_TEST

START_TEST(test_all_keys) {
        const uid_t www[] = {33};
        Matcher all = {
                .comm = STRV("nginx"),
                .user = STRV("www-data"),
                .cgroup = STRV("/system.slice/*"),
                .unit = STRV("nginx.service"),
                .exe = STRV("/usr/sbin/nginx"),
                .cmdline = STRV("--role=edge"),
        };
        unsigned loaded;

        ck_assert_int_eq(test_one(&all, www, 1, 100, &loaded), 1);
        ck_assert_uint_eq(loaded, FACT_COMM | FACT_UID | FACT_CGROUP | FACT_UNIT | FACT_EXE | FACT_CMDLINE);

        /* Any one key not matching makes the whole matcher fail. */
        Matcher m;
        m = all, m.comm = STRV("x");
        ck_assert_int_eq(test_one(&m, www, 1, 100, NULL), 0);
        m = all;
        ck_assert_int_eq(test_one(&m, (uid_t[]){1}, 1, 100, NULL), 0);
        m = all, m.cgroup = STRV("/user.slice/*");
        ck_assert_int_eq(test_one(&m, www, 1, 100, NULL), 0);
        m = all, m.unit = STRV("apache2.service");
        ck_assert_int_eq(test_one(&m, www, 1, 100, NULL), 0);
        m = all, m.exe = STRV("/usr/bin/*");
        ck_assert_int_eq(test_one(&m, www, 1, 100, NULL), 0);
        Matcher c = all;
        c.cmdline = STRV("--role=core");
        c.cmdline_re = NULL;
        ck_assert_int_eq(test_one(&c, www, 1, 100, NULL), 0);
        free_cmdline(&c);

        /* No key at all: every process. */
        Matcher none = {};
        ck_assert_int_eq(test_one(&none, NULL, 0, 400, &loaded), 1);
        ck_assert_uint_eq(loaded, 0);
        free_cmdline(&all);
}
END_TEST

START_TEST(test_lazy) {
        const uid_t www[] = {33}, rootuid[] = {0};
        unsigned loaded;

        /* comm fails: nothing else is read, whatever order the keys were written in. */
        Matcher a = {.exe = STRV("*"), .cmdline = STRV("."), .unit = STRV("*"), .comm = STRV("nginx")};
        ck_assert_int_eq(test_one(&a, NULL, 0, 200, &loaded), 0);
        ck_assert_uint_eq(loaded, FACT_COMM);

        /* No comm key: the uid is the first fact read. */
        Matcher b = {.user = STRV("root"), .exe = STRV("*")};
        ck_assert_int_eq(test_one(&b, rootuid, 1, 100, &loaded), 0);
        ck_assert_uint_eq(loaded, FACT_UID);

        /* cgroup before exe and cmdline. */
        Matcher c = {
                .comm = STRV("nginx"),
                .user = STRV("33"),
                .cgroup = STRV("/nope/*"),
                .exe = STRV("*"),
                .cmdline = STRV(".")};
        ck_assert_int_eq(test_one(&c, www, 1, 100, &loaded), 0);
        ck_assert_uint_eq(loaded, FACT_COMM | FACT_UID | FACT_CGROUP);

        /* unit needs the cgroup, and only that. */
        Matcher d = {.unit = STRV("x.service"), .exe = STRV("*")};
        ck_assert_int_eq(test_one(&d, NULL, 0, 100, &loaded), 0);
        ck_assert_uint_eq(loaded, FACT_CGROUP | FACT_UNIT);

        /* exe before cmdline. */
        Matcher e = {.comm = STRV("nginx"), .cmdline = STRV("."), .exe = STRV("/nope")};
        ck_assert_int_eq(test_one(&e, NULL, 0, 100, &loaded), 0);
        ck_assert_uint_eq(loaded, FACT_COMM | FACT_EXE);

        /* Facts once loaded are not read again: remove the files and match on. */
        ProcessFacts f;
        Matcher g = {.comm = STRV("nginx"), .exe = STRV("/usr/sbin/nginx")};
        process_facts_init(&f, root, 100);
        ck_assert_int_eq(matcher_test(&g, NULL, 0, &f), 1);
        remove_fact(100, "comm");
        remove_fact(100, "exe");
        ck_assert_int_eq(matcher_test(&g, NULL, 0, &f), 1);
        ck_assert_str_eq(f.comm, "nginx");
        ck_assert_str_eq(f.exe, "/usr/sbin/nginx");
        /* ... while a fact not yet loaded is read now, and the file is gone: -ESRCH. */
        ck_assert_int_eq(process_facts_load(&f, FACT_CMDLINE), 0);
        ck_assert_str_eq(f.cmdline, "nginx -g daemon off; --role=edge");
        remove_fact(100, "status");
        ck_assert_int_eq(process_facts_load(&f, FACT_UID), -ESRCH);
        ck_assert_uint_eq(f.loaded, FACT_COMM | FACT_EXE | FACT_CMDLINE);
        process_facts_done(&f);
        ck_assert_uint_eq(f.loaded, 0);
        ck_assert_ptr_null(f.exe);
        ck_assert_ptr_null(f.cmdline);

        free_cmdline(&a);
        free_cmdline(&c);
        free_cmdline(&e);
}
END_TEST

START_TEST(test_failed_facts) {
        ProcessFacts f;

        /* A kernel thread: no exe, no unit. The failures are remembered, other keys still work. */
        process_facts_init(&f, root, 400);
        ck_assert_int_eq(process_facts_load(&f, FACT_EXE | FACT_UNIT | FACT_COMM), 0);
        ck_assert_uint_eq(f.failed, FACT_EXE | FACT_UNIT);
        ck_assert_uint_eq(f.loaded, FACT_COMM | FACT_CGROUP);
        ck_assert_ptr_null(f.exe);
        ck_assert_ptr_null(f.unit);
        ck_assert_str_eq(f.cgroup, "/");

        Matcher exe = {.exe = STRV("*")}, comm = {.comm = STRV("kworker/*")};
        ck_assert_int_eq(matcher_test(&exe, NULL, 0, &f), 0);
        ck_assert_int_eq(matcher_test(&comm, NULL, 0, &f), 1);
        process_facts_done(&f);

        /* The process is gone: -ESRCH, nothing loaded or failed. */
        process_facts_init(&f, root, 500);
        ck_assert_int_eq(process_facts_load(&f, FACT_COMM | FACT_EXE), -ESRCH);
        ck_assert_uint_eq(f.loaded, 0);
        ck_assert_uint_eq(f.failed, 0);
        ck_assert_int_eq(matcher_test(&comm, NULL, 0, &f), -ESRCH);
        ck_assert_int_eq(matcher_test(&exe, NULL, 0, &f), -ESRCH);
        process_facts_done(&f);
}
END_TEST

/* matcher_explain on a fresh set of facts for pid; the lines and the "why not" text. */
static int explain_one(
        Matcher *m, const uid_t *uids, size_t n_uids, pid_t pid, char ***ret_lines, char **ret_failed) {
        ProcessFacts f;
        int r;

        if (m->cmdline && !m->cmdline_re)
                compile_cmdline(m);
        process_facts_init(&f, root, pid);
        r = matcher_explain(m, uids, n_uids, &f, ret_lines, ret_failed);
        process_facts_done(&f);
        return r;
}

START_TEST(test_explain) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *failed = NULL;
        const uid_t www[] = {33};
        Matcher all = {
                .comm = STRV("ngin?", "nginx*"),
                .user = STRV("www-data", "7"),
                .cgroup = STRV("/system.slice/*"),
                .unit = STRV("nginx.service"),
                .exe = STRV("/usr/sbin/nginx"),
                .cmdline = STRV("--role=core", "--role=edge"),
        };

        /* Every key matches: one line per key, in test order, naming the first pattern that hit. */
        ck_assert_int_eq(explain_one(&all, www, 1, 100, &lines, &failed), 1);
        ck_assert_uint_eq(strv_length(lines), 6);
        ck_assert_str_eq(lines[0], "comm \"nginx\" matches \"ngin?\"");
        ck_assert_str_eq(lines[1], "user 33 matches \"www-data\", \"7\"");
        ck_assert_str_eq(lines[2], "cgroup \"/system.slice/nginx.service\" matches \"/system.slice/*\"");
        ck_assert_str_eq(lines[3], "unit \"nginx.service\" matches \"nginx.service\"");
        ck_assert_str_eq(lines[4], "exe \"/usr/sbin/nginx\" matches \"/usr/sbin/nginx\"");
        ck_assert_str_eq(lines[5], "cmdline \"nginx -g daemon off; --role=edge\" matches /--role=edge/");
        ck_assert_str_eq(failed, "");
        /* agrees with matcher_test() */
        ck_assert_int_eq(test_one(&all, www, 1, 100, NULL), 1);
        lines = strv_free(lines);
        failed = mfree(failed);

        /* postgres: every key but cgroup fails, and unlike matcher_test() all are explained */
        ck_assert_int_eq(explain_one(&all, www, 1, 200, &lines, &failed), 0);
        ck_assert_uint_eq(strv_length(lines), 6);
        ck_assert_str_eq(lines[0], "comm \"postgres\" does not match \"ngin?\", \"nginx*\"");
        ck_assert_str_eq(lines[1], "user 105 does not match \"www-data\", \"7\"");
        ck_assert_str_eq(
                lines[2], "cgroup \"/system.slice/postgresql@15-main.service\" matches \"/system.slice/*\"");
        ck_assert_str_eq(lines[3], "unit \"postgresql@15-main.service\" does not match \"nginx.service\"");
        /* " (deleted)" stripped, as matching sees it */
        ck_assert_str_eq(
                lines[4], "exe \"/usr/lib/postgresql/15/bin/postgres\" does not match \"/usr/sbin/nginx\"");
        ck_assert_str_eq(
                lines[5],
                "cmdline \"/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main\" does not "
                "match /--role=core/, /--role=edge/");
        ck_assert_str_eq(
                failed,
                "comm \"postgres\" does not match \"ngin?\", \"nginx*\"; user 105 does not match "
                "\"www-data\", "
                "\"7\"; unit \"postgresql@15-main.service\" does not match \"nginx.service\"; exe "
                "\"/usr/lib/postgresql/15/bin/postgres\" does not match \"/usr/sbin/nginx\"; cmdline "
                "\"/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main\" does not match "
                "/--role=core/, /--role=edge/");
        ck_assert_int_eq(test_one(&all, www, 1, 200, NULL), 0);
        lines = strv_free(lines);
        failed = mfree(failed);
        free_cmdline(&all);
}
END_TEST

/* A megabyte command line is searched whole, but the explanation quotes its first 512 bytes. */
START_TEST(test_explain_long_cmdline) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *failed = NULL, *cmdline = malloc(1024 * 1024), *want = NULL;
        Matcher tail = {.cmdline = STRV("--tag=end$")};

        ck_assert_ptr_nonnull(cmdline);
        memset(cmdline, 'y', 1024 * 1024);
        memcpy(cmdline, "prog", 4);
        cmdline[4] = '\0';
        memcpy(cmdline + 1024 * 1024 - 10, "--tag=end", 10); /* ends with its NUL */
        put_process(600, "prog", 0, "0::/\n", "/bin/prog", cmdline, 1024 * 1024);
        ck_assert_int_eq(explain_one(&tail, NULL, 0, 600, &lines, &failed), 1);
        ck_assert_uint_eq(strv_length(lines), 1);
        ck_assert_int_ge(
                asprintf(
                        &want, "cmdline \"prog %.507s\"... (%d bytes) matches /--tag=end$/", cmdline + 5,
                        1024 * 1024 - 1),
                0);
        ck_assert_str_eq(lines[0], want);
        free_cmdline(&tail);
}
END_TEST

START_TEST(test_explain_unreadable_and_gone) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *failed = NULL;
        Matcher exe = {.comm = STRV("kworker/*"), .exe = STRV("*")}, none = {};

        /* a kernel thread has no exe: said so, and it does not match */
        ck_assert_int_eq(explain_one(&exe, NULL, 0, 400, &lines, &failed), 0);
        ck_assert_uint_eq(strv_length(lines), 2);
        ck_assert_str_eq(lines[0], "comm \"kworker/0:1\" matches \"kworker/*\"");
        ck_assert_str_eq(lines[1], "exe unknown (could not be read) does not match \"*\"");
        ck_assert_str_eq(failed, "exe unknown (could not be read) does not match \"*\"");
        lines = strv_free(lines);
        failed = mfree(failed);

        /* no key: matches everything, and says so; ret_failed may be NULL */
        ck_assert_int_eq(explain_one(&none, NULL, 0, 300, &lines, NULL), 1);
        ck_assert_uint_eq(strv_length(lines), 1);
        ck_assert_str_eq(lines[0], "no match keys: matches every process");
        lines = strv_free(lines);

        /* gone: -ESRCH, outputs untouched */
        ck_assert_int_eq(explain_one(&exe, NULL, 0, 500, &lines, &failed), -ESRCH);
        ck_assert_ptr_null(lines);
        ck_assert_ptr_null(failed);
}
END_TEST

/* A plan over hand-made policies. */
typedef struct TestPlan {
        Policy policies[8];
        PolicyPlan pps[8];
        Plan plan;
} TestPlan;

static void plan_add(TestPlan *t, const char *name, Matcher m, const char *pending) {
        size_t i = t->plan.n_policies;

        ck_assert_uint_lt(i, ELEMENTSOF(t->policies));
        t->policies[i] = (Policy){.name = (char *)name, .match = m};
        t->pps[i] = (PolicyPlan){.policy = &t->policies[i], .pending_reason = (char *)pending};
        t->plan.policies = t->pps;
        t->plan.n_policies = i + 1;
}

/*
 * match_process() for pid through the comm index of t's plan (as plan_new() makes it), checked
 * against the same without an index (every policy tested in order). *ret_loaded gets what the
 * indexed match read.
 */
static int match_pid(const TestPlan *t, pid_t pid, unsigned *ret_loaded) {
        _cleanup_(match_index_freep) MatchIndex *x = NULL;
        Plan indexed = t->plan;
        ProcessFacts f;
        int r, every;

        process_facts_init(&f, root, pid);
        every = match_process(&t->plan, &f, false);
        process_facts_done(&f);

        ck_assert_int_eq(match_index_new(t->plan.policies, t->plan.n_policies, &x), 0);
        indexed.match_index = x;
        process_facts_init(&f, root, pid);
        r = match_process(&indexed, &f, false);
        if (ret_loaded)
                *ret_loaded = f.loaded;
        process_facts_done(&f);
        ck_assert_msg(r == every, "pid %d: indexed match %d, every policy %d", (int)pid, r, every);
        return r;
}

START_TEST(test_first_match_wins) {
        TestPlan t = {};
        unsigned loaded;

        plan_add(&t, "web", (Matcher){.comm = STRV("nginx")}, NULL);
        plan_add(&t, "everything-in-system", (Matcher){.cgroup = STRV("/system.slice/*")}, NULL);
        plan_add(&t, "db", (Matcher){.comm = STRV("postgres")}, NULL);
        plan_add(&t, "catch-all", (Matcher){.comm = STRV("*")}, NULL);

        ck_assert_int_eq(match_pid(&t, 100, NULL), 0);
        ck_assert_int_eq(match_pid(&t, 200, NULL), 1); /* "db" comes later: the earlier rule wins */
        ck_assert_int_eq(match_pid(&t, 300, NULL), 3);
        ck_assert_int_eq(match_pid(&t, 500, NULL), -ESRCH);

        /* A pending policy is skipped. */
        t.pps[1].pending_reason = (char *)"NUMA node 7 does not exist";
        ck_assert_int_eq(match_pid(&t, 200, NULL), 2);
        t.pps[0].pending_reason = (char *)"pending";
        ck_assert_int_eq(match_pid(&t, 100, NULL), 3);
        t.pps[3].pending_reason = (char *)"pending";
        ck_assert_int_eq(match_pid(&t, 300, NULL), -ENOENT);
        ck_assert_int_eq(match_pid(&t, 100, NULL), -ENOENT);

        /* Facts are shared across the policies tested for one process: the exe of the first
         * policy is not read because its comm failed; the second reads only comm and cmdline. */
        TestPlan u = {};
        Matcher second = {.comm = STRV("postgres"), .cmdline = STRV(" -D ")};
        compile_cmdline(&second);
        plan_add(&u, "web", (Matcher){.comm = STRV("nginx"), .exe = STRV("*")}, NULL);
        plan_add(&u, "db", second, NULL);
        ck_assert_int_eq(match_pid(&u, 200, &loaded), 1);
        ck_assert_uint_eq(loaded, FACT_COMM | FACT_CMDLINE);
        ck_assert_int_eq(match_pid(&u, 400, &loaded), -ENOENT);
        ck_assert_uint_eq(loaded, FACT_COMM);
        /* A pending policy's facts are not read at all. */
        u.pps[0].pending_reason = (char *)"pending";
        u.policies[0].match.exe = NULL;
        u.policies[0].match.user = STRV("nobody");
        ck_assert_int_eq(match_pid(&u, 200, &loaded), 1);
        ck_assert_uint_eq(loaded, FACT_COMM | FACT_CMDLINE);
        free_cmdline(&second);

        TestPlan empty = {};
        ck_assert_int_eq(match_pid(&empty, 100, NULL), -ENOENT);
}
END_TEST

START_TEST(test_match_thread) {
        ThreadRule rules[] = {
                {.name = (char *)"tokio-runtime-w*"},
                {.name = (char *)"worker-[0-9]"},
                {.name = (char *)"*"},
        };
        Policy p = {.name = (char *)"svc", .threads = rules, .n_threads = 3};

        ck_assert_int_eq(match_thread(&p, "tokio-runtime-w"), 0);
        ck_assert_int_eq(match_thread(&p, "worker-3"), 1);
        ck_assert_int_eq(match_thread(&p, "worker-10"), 2);
        ck_assert_int_eq(match_thread(&p, "main"), 2);
        p.n_threads = 2;
        ck_assert_int_eq(match_thread(&p, "main"), -ENOENT);
        ck_assert_int_eq(match_thread(&p, "worker-7"), 1);
        p.n_threads = 0;
        ck_assert_int_eq(match_thread(&p, "worker-7"), -ENOENT);
}
END_TEST

/* --- the comm index (match-index.h) ------------------------------------------------------- */

/* A plan of n hand-made policies (zeroed), with names and comm: strings it owns. */
typedef struct BigPlan {
        Policy *policies;
        PolicyPlan *pps;
        char (*names)[24];
        Plan plan;
} BigPlan;

static void big_plan_init(BigPlan *b, size_t n) {
        *b = (BigPlan){
                .policies = calloc(n, sizeof(Policy)),
                .pps = calloc(n, sizeof(PolicyPlan)),
                .names = calloc(n, sizeof(b->names[0])),
        };
        ck_assert(b->policies && b->pps && b->names);
        for (size_t i = 0; i < n; i++) {
                b->policies[i].name = (char *)"p";
                b->pps[i].policy = &b->policies[i];
        }
        b->plan.policies = b->pps;
        b->plan.n_policies = n;
}

/* (Re)builds the plan's index from what its policies are now. */
static void big_plan_index(BigPlan *b) {
        b->plan.match_index = match_index_free(b->plan.match_index);
        ck_assert_int_eq(match_index_new(b->pps, b->plan.n_policies, &b->plan.match_index), 0);
}

static void big_plan_done(BigPlan *b) {
        for (size_t i = 0; i < b->plan.n_policies; i++)
                strv_free(b->policies[i].match.comm);
        b->plan.match_index = match_index_free(b->plan.match_index);
        free(b->policies);
        free(b->pps);
        free(b->names);
}

/* Sets policy i's comm: to a copy of the NULL-terminated list comm (NULL: no comm: key). */
static void big_plan_comm(BigPlan *b, size_t i, char *const *comm) {
        strv_free(b->policies[i].match.comm);
        b->policies[i].match.comm = NULL;
        STRV_FOREACH (g, comm)
                ck_assert_int_eq(strv_extendf(&b->policies[i].match.comm, "%s", *g), 0);
}

/*
 * match_process() on facts given in advance — comm (NULL: could not be read), euid, cgroup —
 * for a pid that does not exist under the fixture root (so any other fact is "gone"). The
 * plan's index is used if it has one.
 */
static int match_facts(
        const Plan *plan, const char *comm, uid_t euid, const char *cgroup, bool explicit_only) {
        ProcessFacts f;
        int r;

        process_facts_init(&f, root, 500);
        if (comm) {
                snprintf(f.comm, sizeof(f.comm), "%s", comm);
                f.loaded |= FACT_COMM;
        } else
                f.failed |= FACT_COMM;
        f.euid = euid;
        f.loaded |= FACT_UID;
        if (cgroup) {
                f.cgroup = strdup(cgroup);
                ck_assert_ptr_nonnull(f.cgroup);
                f.loaded |= FACT_CGROUP;
        }
        r = match_process(plan, &f, explicit_only);
        process_facts_done(&f);
        return r;
}

/* The number of candidates plan's index gives for comm. */
static size_t n_candidates(const Plan *plan, const char *comm) {
        MatchCandidates c;
        size_t n = 0;

        match_index_candidates(plan->match_index, comm, false, &c);
        while (match_candidates_next(&c) >= 0)
                n++;
        return n;
}

/* File order decides across the lists: an always-tried policy before a name, a prefix before a
 * name; pending policies are passed over; explicit-only sees names only. */
START_TEST(test_index_order) {
        static const uid_t www[] = {33}, zero[] = {0};
        BigPlan b;

        big_plan_init(&b, 5);
        /* 0: no comm: key, user 33 */
        b.policies[0].match.user = STRV("www-data");
        b.pps[0].uids = (uid_t *)www;
        b.pps[0].n_uids = 1;
        /* 1: a prefix, user 0 */
        big_plan_comm(&b, 1, STRV("ngi*"));
        b.policies[1].match.user = STRV("root");
        b.pps[1].uids = (uid_t *)zero;
        b.pps[1].n_uids = 1;
        /* 2: the name */
        big_plan_comm(&b, 2, STRV("nginx"));
        /* 3: a glob with no literal prefix, in a cgroup */
        big_plan_comm(&b, 3, STRV("[n]ginx", "bash"));
        b.policies[3].match.cgroup = STRV("/web/*");
        /* 4: no keys at all */
        big_plan_index(&b);

        ck_assert_int_eq(match_facts(&b.plan, "nginx", 33, "/", false), 0);
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 0, "/", false), 1);
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 7, "/", false), 2);
        ck_assert_int_eq(match_facts(&b.plan, "bash", 7, "/web/x", false), 3);
        ck_assert_int_eq(match_facts(&b.plan, "bash", 7, "/", false), 4);
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 7, "/", true), 2);
        ck_assert_int_eq(match_facts(&b.plan, "ngin", 0, "/", true), -ENOENT);
        ck_assert_int_eq(match_facts(&b.plan, "bash", 7, "/web/x", true), 3);

        /* The comm could not be read: every comm: key fails, the others are tried. */
        ck_assert_int_eq(match_facts(&b.plan, NULL, 33, "/", false), 0);
        ck_assert_int_eq(match_facts(&b.plan, NULL, 0, "/", false), 4);
        ck_assert_int_eq(match_facts(&b.plan, NULL, 0, "/", true), -ENOENT);

        /* Gone before its comm was read: a policy with no keys before any comm: key still
         * matches (as without the index); gone is reported where a fact is needed first. */
        ProcessFacts f;
        big_plan_comm(&b, 0, NULL);
        b.policies[0].match.user = NULL;
        big_plan_index(&b);
        process_facts_init(&f, root, 500);
        ck_assert_int_eq(match_process(&b.plan, &f, false), 0);
        process_facts_done(&f);
        big_plan_comm(&b, 0, STRV("nginx"));
        big_plan_index(&b);
        process_facts_init(&f, root, 500);
        ck_assert_int_eq(match_process(&b.plan, &f, false), -ESRCH);
        process_facts_done(&f);
        big_plan_comm(&b, 0, NULL);
        b.policies[0].match.user = STRV("www-data");

        /* Pending: left out of the index. */
        b.pps[2].pending_reason = (char *)"pending";
        big_plan_index(&b);
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 7, "/", false), 4);
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 7, "/", true), -ENOENT);
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 33, "/", false), 0);
        b.pps[0].pending_reason = (char *)"pending";
        big_plan_index(&b);
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 33, "/", false), 4);
        /* ... and a policy made pending after the index was built is passed over too. */
        b.pps[4].pending_reason = (char *)"pending";
        ck_assert_int_eq(match_facts(&b.plan, "nginx", 7, "/", false), -ENOENT);
        big_plan_done(&b);
}
END_TEST

/* 2,000 policies, the one that matches last: its name finds it among a handful of candidates. */
START_TEST(test_index_many) {
        enum { N = 2000 };
        BigPlan b;
        ProcessFacts f;
        Plan every;

        big_plan_init(&b, N);
        for (size_t i = 0; i < N - 1; i++) {
                snprintf(b.names[i], sizeof(b.names[i]), i % 500 == 7 ? "xyz%zu*" : "comm-%04zu", i);
                big_plan_comm(&b, i, STRV(b.names[i]));
        }
        /* One policy for every process with a command line that nothing has. */
        big_plan_comm(&b, 1000, STRV("*"));
        b.policies[1000].match.cmdline = STRV("^no-such-program ");
        compile_cmdline(&b.policies[1000].match);
        big_plan_comm(&b, 3, STRV("xy*"));
        big_plan_comm(&b, N - 1, STRV("nginx"));
        b.policies[N - 1].match.exe = STRV("/usr/sbin/nginx");
        big_plan_index(&b);
        every = b.plan;
        every.match_index = NULL;

        ck_assert_uint_eq(n_candidates(&b.plan, "nginx"), 2);
        ck_assert_uint_eq(n_candidates(&b.plan, "comm-0500"), 2);
        ck_assert_uint_eq(n_candidates(&b.plan, "xyz7"), 3);           /* xy*, xyz7*, 1000 */
        ck_assert_uint_eq(n_candidates(&b.plan, "xyz1507"), 3);        /* xy*, xyz1507*, 1000 */
        ck_assert_uint_eq(b.plan.match_index->n_exact, N - 4 - 1 - 1); /* not xyz*, 1000, 3 */
        ck_assert_uint_eq(b.plan.match_index->n_prefix, 5);
        ck_assert_uint_eq(b.plan.match_index->n_always, 1);

        process_facts_init(&f, root, 100);
        ck_assert_int_eq(match_process(&b.plan, &f, false), N - 1);
        ck_assert_uint_eq(f.loaded, FACT_COMM | FACT_CMDLINE | FACT_EXE);
        process_facts_done(&f);
        process_facts_init(&f, root, 100);
        ck_assert_int_eq(match_process(&every, &f, false), N - 1);
        process_facts_done(&f);

        ck_assert_int_eq(match_facts(&b.plan, "comm-0500", 0, NULL, false), 500);
        ck_assert_int_eq(match_facts(&b.plan, "comm-0500", 0, NULL, true), 500);
        ck_assert_int_eq(match_facts(&b.plan, "xyz7", 0, NULL, false), 3);
        ck_assert_int_eq(match_facts(&b.plan, "xyz7", 0, NULL, true), -ENOENT);
        big_plan_comm(&b, 3, STRV("comm-0003"));
        big_plan_index(&b);
        ck_assert_int_eq(match_facts(&b.plan, "xyz7", 0, NULL, false), 7);
        ck_assert_int_eq(match_facts(&b.plan, "comm-1999", 0, NULL, false), -ESRCH); /* 1000 reads cmdline */
        ck_assert_int_eq(match_facts(&every, "comm-1999", 0, NULL, false), -ESRCH);
        free_cmdline(&b.policies[1000].match);
        big_plan_done(&b);
}
END_TEST

/* A deterministic xorshift64 generator: the same cases on every run. */
static uint64_t rng_next(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static unsigned rng_below(uint64_t *s, unsigned n) {
        return (unsigned)(rng_next(s) % n);
}

/* A random string of len characters from a small alphabet (so names and prefixes collide). */
static void rng_word(uint64_t *s, char *buf, size_t len) {
        static const char alphabet[] = "ab/";

        for (size_t i = 0; i < len; i++)
                buf[i] = alphabet[rng_below(s, sizeof(alphabet) - 1)];
        buf[len] = '\0';
}

/* A random comm: entry: a name (sometimes longer than a comm), a prefixed glob, an escaped glob,
 * a glob with no literal prefix. */
static void rng_pattern(uint64_t *s, char *buf, size_t size) {
        char w[20];

        rng_word(s, w, rng_below(s, 5) == 0 ? 14 + rng_below(s, 4) : rng_below(s, 4));
        switch (rng_below(s, 8)) {
        case 0:
        case 1:
        case 2:
                snprintf(buf, size, "%s", w);
                break;
        case 3:
                snprintf(buf, size, "%s*", w);
                break;
        case 4:
                snprintf(buf, size, "%s?%s", w, rng_below(s, 2) ? "*" : "");
                break;
        case 5:
                snprintf(buf, size, "%s\\%s*", w, rng_below(s, 2) ? "*" : "a");
                break;
        case 6:
                snprintf(buf, size, "%s[ab]%s", w, rng_below(s, 2) ? "*" : "");
                break;
        default:
                snprintf(buf, size, "%s%s", rng_below(s, 2) ? "*" : "[/]", w);
                break;
        }
}

/* The indexed match against every policy tested in order, on random plans and processes. */
START_TEST(test_index_random) {
        static const uid_t one[] = {1};
        /* Static: a compound literal in the if-blocks below would end with its block. */
        static char *user_one[] = {(char *)"one", NULL}, *cgroup_a[] = {(char *)"/a/*", NULL};
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        unsigned hits = 0, matches = 0;

        for (unsigned round = 0; round < 300; round++) {
                size_t n = 1 + rng_below(&seed, 40);
                BigPlan b;
                Plan every;

                big_plan_init(&b, n);
                for (size_t i = 0; i < n; i++) {
                        unsigned k = rng_below(&seed, 10);

                        if (k > 0) { /* else no comm: key */
                                for (unsigned e = 0; e < 1U + (k > 7) + (k > 8); e++) {
                                        char pattern[32];

                                        rng_pattern(&seed, pattern, sizeof(pattern));
                                        ck_assert_int_eq(
                                                strv_extendf(&b.policies[i].match.comm, "%s", pattern), 0);
                                }
                        }
                        if (rng_below(&seed, 4) == 0) {
                                b.policies[i].match.user = user_one;
                                b.pps[i].uids = (uid_t *)one;
                                b.pps[i].n_uids = 1;
                        }
                        if (rng_below(&seed, 5) == 0)
                                b.policies[i].match.cgroup = cgroup_a;
                        if (rng_below(&seed, 8) == 0)
                                b.pps[i].pending_reason = (char *)"pending";
                }
                big_plan_index(&b);
                every = b.plan;
                every.match_index = NULL;

                for (unsigned t = 0; t < 60; t++) {
                        char comm[16];
                        uid_t euid = rng_below(&seed, 2);
                        const char *cgroup = rng_below(&seed, 2) ? "/a/x" : "/b/x";
                        bool explicit_only = rng_below(&seed, 4) == 0;
                        int want, got;

                        rng_word(&seed, comm, rng_below(&seed, 4) == 0 ? 15 : rng_below(&seed, 5));
                        want = match_facts(&every, comm, euid, cgroup, explicit_only);
                        got = match_facts(&b.plan, comm, euid, cgroup, explicit_only);
                        ck_assert_msg(
                                got == want,
                                "round %u: comm \"%s\" uid %u %s%s: indexed %d, every policy %d", round,
                                comm, (unsigned)euid, cgroup, explicit_only ? " explicit" : "", got, want);
                        matches += want >= 0;
                        hits += want > 0;
                }
                big_plan_done(&b);
        }
        /* The cases are not degenerate: many match, and not only the first policy. */
        ck_assert_uint_gt(matches, 3000);
        ck_assert_uint_gt(hits, 1000);
}
END_TEST

/* --- the real /proc ------------------------------------------------------------------------ */

static char **saved_argv;

START_TEST(test_real_self) {
        TestPlan t = {};
        const uid_t me[] = {geteuid()};
        char exe[PATH_MAX], glob[PATH_MAX + 2];
        ssize_t n;

        ck_assert_int_eq(prctl(PR_SET_NAME, "match-self-x"), 0);
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        ck_assert_int_gt(n, 0);
        exe[n] = '\0';
        snprintf(glob, sizeof(glob), "*%s", strrchr(exe, '/'));

        Matcher cmd = {.comm = STRV("match-self-?"), .cmdline = STRV("test-match")};
        compile_cmdline(&cmd);
        plan_add(&t, "other", (Matcher){.comm = STRV("match-self-x"), .exe = STRV("/nonexistent/*")}, NULL);
        plan_add(&t, "self-user", (Matcher){.comm = STRV("match-self-x"), .user = STRV("me")}, NULL);
        plan_add(&t, "self-exe", (Matcher){.comm = STRV("match-self-x"), .exe = STRV(glob)}, NULL);
        plan_add(&t, "self-cmdline", cmd, NULL);
        t.pps[1].uids = (uid_t *)me;
        t.pps[1].n_uids = 1;

        ProcessFacts f;
        process_facts_init(&f, NULL, getpid());
        ck_assert_int_eq(match_process(&t.plan, &f, false), 1);
        ck_assert_str_eq(f.comm, "match-self-x");
        ck_assert_str_eq(f.exe, exe);
        ck_assert_uint_eq(f.euid, geteuid());
        process_facts_done(&f);

        t.pps[1].pending_reason = (char *)"pending";
        process_facts_init(&f, "/", getpid());
        ck_assert_int_eq(match_process(&t.plan, &f, false), 2);
        process_facts_done(&f);

        t.pps[2].pending_reason = (char *)"pending";
        process_facts_init(&f, NULL, getpid());
        ck_assert_int_eq(match_process(&t.plan, &f, false), 3);
        ck_assert(strstr(f.cmdline, saved_argv[0]) == f.cmdline);
        process_facts_done(&f);

        /* Explicit only (a kernel thread, the daemon): self-cmdline's comm is a glob, so it is
         * not considered although every key matches; self-exe names the comm and is. */
        process_facts_init(&f, NULL, getpid());
        ck_assert_int_eq(match_process(&t.plan, &f, true), -ENOENT);
        process_facts_done(&f);
        t.pps[2].pending_reason = NULL;
        process_facts_init(&f, NULL, getpid());
        ck_assert_int_eq(match_process(&t.plan, &f, true), 2);
        process_facts_done(&f);
        free_cmdline(&cmd);
}
END_TEST

/* Which comm: entries name a process literally: no glob character, the same comm. */
START_TEST(test_names_comm) {
        Policy p = {
                .name = (char *)"k", .match.comm = STRV("kworker/*", "ksoftirqd/0", "rcu_[ps]*", "a\\b")};

        ck_assert(policy_names_comm(&p, "ksoftirqd/0"));
        ck_assert(!policy_names_comm(&p, "ksoftirqd/1"));
        ck_assert(!policy_names_comm(&p, "kworker/0:1")); /* matches the glob, not named */
        ck_assert(!policy_names_comm(&p, "kworker/*"));   /* the glob itself is no name */
        ck_assert(!policy_names_comm(&p, "rcu_preempt"));
        ck_assert(!policy_names_comm(&p, "a\\b"));
        ck_assert(!policy_names_comm(&p, "ab"));
        p.match.comm = NULL;
        ck_assert(!policy_names_comm(&p, "ksoftirqd/0"));
}
END_TEST

/* Failure bits reported by the unprivileged child. */
enum {
        EACCES_SETUID = 1 << 0,
        EACCES_READ_EXE = 1 << 1,
        EACCES_EXE_MATCHED = 1 << 2,
        EACCES_NOT_FAILED = 1 << 3,
        EACCES_COMM = 1 << 4,
        EACCES_POLICY = 1 << 5,
};

static int eacces_child(pid_t target) {
        int bad = 0;
        char *exe = NULL;
        ProcessFacts f;
        TestPlan t = {};

        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
            setresuid(65534, 65534, 65534) < 0)
                return EACCES_SETUID;

        /* Reading another user's exe without CAP_SYS_PTRACE: EACCES, not "gone". */
        if (procfs_read_exe(NULL, target, &exe) != -EACCES)
                bad |= EACCES_READ_EXE;
        free(exe);

        Matcher any_exe = {.comm = STRV("eacces-target"), .exe = STRV("*")};
        Matcher comm = {.comm = STRV("eacces-target")};
        process_facts_init(&f, NULL, target);
        if (matcher_test(&any_exe, NULL, 0, &f) != 0)
                bad |= EACCES_EXE_MATCHED;
        if (!(f.failed & FACT_EXE) || (f.loaded & FACT_EXE))
                bad |= EACCES_NOT_FAILED;
        if (matcher_test(&comm, NULL, 0, &f) != 1)
                bad |= EACCES_COMM;
        process_facts_done(&f);

        /* Through a plan: the policy needing exe is passed over, the next one wins. */
        plan_add(&t, "by-exe", any_exe, NULL);
        plan_add(&t, "by-comm", comm, NULL);
        process_facts_init(&f, NULL, target);
        if (match_process(&t.plan, &f, false) != 1)
                bad |= EACCES_POLICY;
        process_facts_done(&f);
        return bad;
}

START_TEST(test_real_eacces) {
        pid_t child, self = getpid();
        int status;

        /* This (root) process is the target; a child that dropped to nobody reads its facts. */
        ck_assert_int_eq(prctl(PR_SET_NAME, "eacces-target"), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0)
                _exit(eacces_child(self));
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert(WIFEXITED(status));
        ck_assert_msg(
                WEXITSTATUS(status) == 0, "unprivileged child reported failures 0x%x", WEXITSTATUS(status));
}
END_TEST

int main(int argc, char **argv) {
        Suite *s = suite_create("match");
        TCase *fx = tcase_create("fixture"), *idx = tcase_create("index"), *real = tcase_create("real");
        SRunner *sr;
        int failed;

        saved_argv = argv;

        tcase_add_checked_fixture(fx, fixture_setup, fixture_teardown);
        tcase_add_test(fx, test_key_comm);
        tcase_add_test(fx, test_key_user);
        tcase_add_test(fx, test_key_cgroup_unit);
        tcase_add_test(fx, test_key_exe);
        tcase_add_test(fx, test_key_cmdline);
        tcase_add_test(fx, test_all_keys);
        tcase_add_test(fx, test_lazy);
        tcase_add_test(fx, test_failed_facts);
        tcase_add_test(fx, test_first_match_wins);
        tcase_add_test(fx, test_match_thread);
        tcase_add_test(fx, test_names_comm);
        tcase_add_test(fx, test_explain);
        tcase_add_test(fx, test_explain_unreadable_and_gone);
        tcase_add_test(fx, test_explain_long_cmdline);
        suite_add_tcase(s, fx);

        tcase_add_checked_fixture(idx, fixture_setup, fixture_teardown);
        tcase_add_test(idx, test_index_order);
        tcase_add_test(idx, test_index_many);
        tcase_add_test(idx, test_index_random);
        suite_add_tcase(s, idx);

        tcase_add_test(real, test_real_self);
        tcase_add_test(real, test_real_eacces);
        suite_add_tcase(s, real);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
