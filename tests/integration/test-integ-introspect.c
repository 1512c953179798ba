/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The documented D-Bus API and the real one: docs/org.affinityd1.xml must be byte for byte what
 * `affinityd --bus-introspect=-` writes (the diff is printed when not; regenerate with
 * `ninja -C BUILDDIR update-introspection`), and each interface element of it must appear as it
 * is in what the running daemon answers to Introspect on /org/affinityd1 and on a policy object.
 * Then the per-policy objects: one node per policy under /org/affinityd1/policy (names escaped
 * with sd_bus_path_encode()), their properties against ListPolicies and /proc, and the set of
 * objects following a reload.
 *
 * `test-integ-introspect docs` runs only the comparison with the docs (no root, no bus needed).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

/* ---- helpers ---- */

static char *read_all_fd(int fd) {
        char *buf = NULL;
        size_t n = 0, size = 0;

        for (;;) {
                ssize_t k;

                if (size - n < 4096) {
                        size = size * 2 + 4096;
                        buf = realloc(buf, size + 1);
                        ck_assert_ptr_nonnull(buf);
                }
                k = read(fd, buf + n, size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                ck_assert_msg(k >= 0, "read: %s", strerror(errno));
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        buf[n] = '\0';
        return buf;
}

static char *read_file(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        ck_assert_msg(fd >= 0, "can't open %s: %s", path, strerror(errno));
        return read_all_fd(fd);
}

/* Runs AFFINITYD_BIN with one argument; its stdout in *ret_out. Returns the exit status. */
static int run_affinityd(const char *arg, char **ret_out) {
        const char *bin = getenv("AFFINITYD_BIN");
        int pipefd[2], status;
        pid_t pid;

        ck_assert_msg(bin, "AFFINITYD_BIN is not set");
        ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(pipefd[1], STDOUT_FILENO);
                execl(bin, bin, arg, (char *)NULL);
                _exit(127);
        }
        close(pipefd[1]);
        *ret_out = read_all_fd(pipefd[0]);
        close(pipefd[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *docs_path(void) {
        const char *root = getenv("AFFINITYD_SOURCE_ROOT");
        char *p = NULL;

        ck_assert_msg(root, "AFFINITYD_SOURCE_ROOT is not set");
        ck_assert_int_ge(asprintf(&p, "%s/docs/org.affinityd1.xml", root), 0);
        return p;
}

/* The <interface name="name"> ... </interface> element of xml, with its line's indentation. */
static char *interface_element(const char *xml, const char *name) {
        _cleanup_free_ char *open = NULL;
        const char *start, *end;

        ck_assert_int_ge(asprintf(&open, "<interface name=\"%s\">", name), 0);
        start = strstr(xml, open);
        ck_assert_msg(start, "no interface %s in:\n%s", name, xml);
        end = strstr(start, "</interface>");
        ck_assert_msg(end, "interface %s not closed", name);
        while (start > xml && start[-1] == ' ')
                start--;
        return strndup(start, (size_t)(end + strlen("</interface>") - start));
}

/* ---- the docs ---- */

START_TEST(test_docs_match) {
        _cleanup_free_ char *path = docs_path(), *docs = NULL, *out = NULL, *again = NULL, *written = NULL;
        char tmpl[] = "/tmp/test-integ-introspect-XXXXXX";
        _cleanup_free_ char *arg = NULL, *gen = NULL, *cmd = NULL;
        char *dir;
        int rc;

        docs = read_file(path);
        ck_assert_int_eq(run_affinityd("--bus-introspect=-", &out), 0);
        ck_assert_ptr_nonnull(strstr(out, "<interface name=\"org.affinityd1.Manager\">"));
        ck_assert_ptr_nonnull(strstr(out, "<interface name=\"org.affinityd1.Policy\">"));

        dir = mkdtemp(tmpl);
        ck_assert_ptr_nonnull(dir);
        ck_assert_int_ge(asprintf(&gen, "%s/generated.xml", dir), 0);

        /* To a file: the same bytes, nothing on stdout. */
        ck_assert_int_ge(asprintf(&arg, "--bus-introspect=%s", gen), 0);
        ck_assert_int_eq(run_affinityd(arg, &again), 0);
        ck_assert_str_eq(again, "");
        written = read_file(gen);
        ck_assert_msg(streq(written, out), "--bus-introspect=FILE and =- differ");

        if (!streq(docs, out)) {
                ck_assert_int_ge(asprintf(&cmd, "diff -u '%s' '%s' >&2", path, gen), 0);
                fprintf(stderr,
                        "%s is not what affinityd --bus-introspect=- writes; regenerate it with "
                        "`ninja -C BUILDDIR update-introspection`. The difference:\n",
                        path);
                rc = system(cmd);
                if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 1) /* diff exits 1 when the files differ */
                        fprintf(stderr, "(could not run diff -u)\n");
        }
        (void)unlink(gen);
        (void)rmdir(dir);
        ck_assert_msg(streq(docs, out), "%s differs from affinityd --bus-introspect=- (diff above)", path);

        /* Deterministic. */
        free(again);
        again = NULL;
        ck_assert_int_eq(run_affinityd("--bus-introspect=-", &again), 0);
        ck_assert_str_eq(again, out);
}
END_TEST

START_TEST(test_bad_path) {
        _cleanup_free_ char *out = NULL;

        ck_assert_int_eq(run_affinityd("--bus-introspect=/nonexistent-dir/x.xml", &out), 1);
        ck_assert_str_eq(out, "");
}
END_TEST

/* ---- the live daemon ---- */

static sd_bus *connect_bus(Harness *h) {
        sd_bus *b = NULL;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        ck_assert_int_ge(sd_bus_start(b), 0);
        return b;
}

static char *introspect(sd_bus *bus, const char *path) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *xml = NULL;
        char *copy;
        int r;

        r = sd_bus_call_method(
                bus, AFFINITYD_BUS_NAME, path, "org.freedesktop.DBus.Introspectable", "Introspect", &error,
                &reply, "");
        ck_assert_msg(r >= 0, "Introspect %s: %s", path, error.message);
        ck_assert_int_ge(sd_bus_message_read(reply, "s", &xml), 0);
        copy = strdup(xml);
        sd_bus_message_unref(reply);
        ck_assert_ptr_nonnull(copy);
        return copy;
}

static char *policy_path(const char *name) {
        char *p = NULL;

        ck_assert_int_ge(sd_bus_path_encode(AFFINITYD_POLICY_PATH_PREFIX, name, &p), 0);
        return p;
}

static char *get_string(sd_bus *bus, const char *path, const char *property) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        char *v = NULL;
        int r;

        r = sd_bus_get_property_string(
                bus, AFFINITYD_BUS_NAME, path, AFFINITYD_POLICY_INTERFACE, property, &error, &v);
        ck_assert_msg(r >= 0, "%s %s: %s", path, property, error.message);
        return v;
}

static uint32_t get_u32(sd_bus *bus, const char *path, const char *property) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        uint32_t v = 0;
        int r;

        r = sd_bus_get_property_trivial(
                bus, AFFINITYD_BUS_NAME, path, AFFINITYD_POLICY_INTERFACE, property, &error, 'u', &v);
        ck_assert_msg(r >= 0, "%s %s: %s", path, property, error.message);
        return v;
}

/* MatchedPIDs: whether pid is in it; also asserts the list ascends. */
static bool matched_pids_contain(sd_bus *bus, const char *path, pid_t pid) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        uint32_t v, last = 0;
        bool found = false;
        int r;

        r = sd_bus_get_property(
                bus, AFFINITYD_BUS_NAME, path, AFFINITYD_POLICY_INTERFACE, "MatchedPIDs", &error, &reply,
                "au");
        ck_assert_msg(r >= 0, "%s MatchedPIDs: %s", path, error.message);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "u"), 0);
        while ((r = sd_bus_message_read(reply, "u", &v)) > 0) {
                ck_assert_uint_gt(v, last);
                last = v;
                if (v == (uint32_t)pid)
                        found = true;
        }
        ck_assert_int_ge(r, 0);
        sd_bus_message_unref(reply);
        return found;
}

/* The D-Bus error name a property read of path gets, or NULL if it succeeds. */
static char *property_error(sd_bus *bus, const char *path, const char *property) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *v = NULL;
        int r;

        r = sd_bus_get_property_string(
                bus, AFFINITYD_BUS_NAME, path, AFFINITYD_POLICY_INTERFACE, property, &error, &v);
        return r >= 0 ? NULL : strdup(error.name);
}

static const PolicyEntry *find_policy(const PolicyEntry *e, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(e[i].name, name))
                        return &e[i];
        return NULL;
}

/* A node line <node name="leaf"/> in xml. */
static bool has_child_node(const char *xml, const char *leaf) {
        _cleanup_free_ char *needle = NULL;

        ck_assert_int_ge(asprintf(&needle, "<node name=\"%s\"/>", leaf), 0);
        return strstr(xml, needle);
}

START_TEST(test_live_matches_docs) {
        Harness *h = harness_new();
        _cleanup_free_ char *path = docs_path(), *docs = NULL, *manager_xml = NULL, *policy_xml = NULL;
        _cleanup_free_ char *doc_manager = NULL, *doc_policy = NULL, *live_policy_path = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;

        harness_write_policy(
                h, "10-db.yaml",
                "policies:\n"
                "  - name: db\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: \"1\"\n",
                harness_unique_name(h));
        harness_start_daemon(h);
        bus = connect_bus(h);

        docs = read_file(path);
        doc_manager = interface_element(docs, "org.affinityd1.Manager");
        doc_policy = interface_element(docs, "org.affinityd1.Policy");

        manager_xml = introspect(bus, "/org/affinityd1");
        ck_assert_msg(
                strstr(manager_xml, doc_manager), "the live org.affinityd1.Manager differs from %s:\n%s",
                path, manager_xml);
        ck_assert_msg(has_child_node(manager_xml, "policy"), "no policy child node:\n%s", manager_xml);

        live_policy_path = policy_path("db");
        policy_xml = introspect(bus, live_policy_path);
        ck_assert_msg(
                strstr(policy_xml, doc_policy), "the live org.affinityd1.Policy differs from %s:\n%s", path,
                policy_xml);
}
END_TEST

START_TEST(test_policy_objects) {
        Harness *h = harness_new();
        const char *db_comm = harness_unique_name(h);
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *db = policy_path("db"), *web = policy_path("web-1 front/end"),
                            *far = policy_path("far"), *tree = NULL, *v = NULL, *err = NULL,
                            *node_dir = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *db_file;
        PolicyEntry *pe = NULL;
        const PolicyEntry *e;
        size_t n;
        Child *c;

        db_file = harness_write_policy(
                h, "10-db.yaml",
                "# the db policy\n"
                "policies:\n"
                "  - name: db\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: \"1\"\n"
                "  - name: web-1 front/end\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { smt: one-per-core, cpus: 1 }\n",
                db_comm, harness_unique_name(h));
        harness_write_policy(
                h, "20-far.yaml",
                "policies:\n"
                "  - name: far\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { nodes: 63 }\n",
                harness_unique_name(h));
        harness_start_daemon(h);
        bus = connect_bus(h);

        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads", .name = db_comm, .args = ARGS("-n", "1"), .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        harness_wait_listed(h, c->pid, "db");

        /* One node per policy (and the marker policy of the harness), escaped. */
        tree = introspect(bus, AFFINITYD_POLICY_PATH_PREFIX);
        ck_assert_msg(has_child_node(tree, strrchr(db, '/') + 1), "%s", tree);
        ck_assert_msg(has_child_node(tree, strrchr(web, '/') + 1), "%s", tree);
        ck_assert_msg(has_child_node(tree, strrchr(far, '/') + 1), "%s", tree);
        ck_assert_msg(strchr(strrchr(web, '/') + 1, '_'), "%s: not escaped", web);

        /* db: a literal cpu-list. */
        free(v), v = get_string(bus, db, "Name");
        ck_assert_str_eq(v, "db");
        free(v), v = get_string(bus, db, "File");
        ck_assert_msg(
                strv_contains_suffix((char *[]){v, NULL}, "/10-db.yaml"), "File %s, written %s", v, db_file);
        ck_assert_uint_eq(get_u32(bus, db, "Line"), 3);
        free(v), v = get_string(bus, db, "Selector");
        ck_assert_str_eq(v, "1");
        free(v), v = get_string(bus, db, "CPUs");
        ck_assert_str_eq(v, "1");
        free(v), v = get_string(bus, db, "Nodes");
        ck_assert_msg(v[0] && !strchr(v, ',') && !strchr(v, '-'), "Nodes \"%s\"", v);
        /* the node that holds CPU 1 */
        ck_assert_int_ge(asprintf(&node_dir, "/sys/devices/system/cpu/cpu1/node%s", v), 0);
        ck_assert_msg(access(node_dir, F_OK) == 0, "CPU 1 is not on node %s", v);
        free(v), v = get_string(bus, db, "PendingReason");
        ck_assert_str_eq(v, "");
        ck_assert_msg(matched_pids_contain(bus, db, c->pid), "%d not in MatchedPIDs of db", (int)c->pid);
        ck_assert_msg(!matched_pids_contain(bus, web, c->pid), "%d in MatchedPIDs of web", (int)c->pid);

        /* web: a selector mapping, in documented key order, resolved as ListPolicies says. */
        n = harness_list_policies(h, &pe);
        free(v), v = get_string(bus, web, "Name");
        ck_assert_str_eq(v, "web-1 front/end");
        ck_assert_uint_eq(get_u32(bus, web, "Line"), 6);
        free(v), v = get_string(bus, web, "Selector");
        ck_assert_str_eq(v, "{ cpus: 1, smt: one-per-core }");
        e = find_policy(pe, n, "web-1 front/end");
        ck_assert_ptr_nonnull(e);
        free(v), v = get_string(bus, web, "CPUs");
        ck_assert_str_eq(v, e->cpus);
        ck_assert_msg(v[0] && !strchr(v, ',') && !strchr(v, '-'), "cpus: 1 gave \"%s\"", v);

        /* far: pending, its reason as ListPolicies gives it. */
        e = find_policy(pe, n, "far");
        ck_assert_ptr_nonnull(e);
        ck_assert_str_ne(e->pending_reason, "");
        free(v), v = get_string(bus, far, "PendingReason");
        ck_assert_str_eq(v, e->pending_reason);
        free(v), v = get_string(bus, far, "CPUs");
        ck_assert_str_eq(v, "");
        free(v), v = get_string(bus, far, "Nodes");
        ck_assert_str_eq(v, "");
        free(v), v = get_string(bus, far, "Selector");
        ck_assert_str_eq(v, "{ nodes: 63 }");
        policy_entries_free(pe, n);

        /* Paths that are no policy's object. */
        {
                const char *bad[] = {
                        AFFINITYD_POLICY_PATH_PREFIX "/nosuchpolicy",
                        AFFINITYD_POLICY_PATH_PREFIX
                        "/_64b", /* "db", but not as sd_bus_path_encode() writes it */
                        AFFINITYD_POLICY_PATH_PREFIX "/db/x",
                };
                for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                        free(err), err = property_error(bus, bad[i], "Name");
                        ck_assert_msg(err, "%s has a Name", bad[i]);
                        ck_assert_str_eq(err, "org.freedesktop.DBus.Error.UnknownObject");
                }
        }

        /* A reload that removes far: its object goes, the others stay. */
        harness_remove_policy(h, "20-far.yaml");
        ck_assert_msg(harness_reload(h, &error) >= 0, "Reload: %s", error.message);
        free(err), err = property_error(bus, far, "Name");
        ck_assert_msg(err, "%s still there after the reload", far);
        ck_assert_str_eq(err, "org.freedesktop.DBus.Error.UnknownObject");
        free(tree), tree = introspect(bus, AFFINITYD_POLICY_PATH_PREFIX);
        ck_assert_msg(!has_child_node(tree, "far"), "%s", tree);
        ck_assert_msg(has_child_node(tree, "db"), "%s", tree);
        ck_assert_msg(
                matched_pids_contain(bus, db, c->pid), "%d not in MatchedPIDs after reload", (int)c->pid);

        /* Once the process exits, it leaves MatchedPIDs. */
        child_kill(c);
        harness_barrier(h);
        ck_assert_msg(!matched_pids_contain(bus, db, c->pid), "exited %d still in MatchedPIDs", (int)c->pid);
}
END_TEST

int main(int argc, char *argv[]) {
        Suite *s = suite_create("integ-introspect");

        if (argc > 1 && streq(argv[1], "docs")) {
                /* The comparison alone: needs neither root nor a bus. */
                SRunner *sr;
                TCase *tc = tcase_create("docs");
                int failed;

                tcase_add_test(tc, test_docs_match);
                tcase_add_test(tc, test_bad_path);
                suite_add_tcase(s, tc);
                sr = srunner_create(s);
                srunner_run_all(sr, CK_NORMAL);
                failed = srunner_ntests_failed(sr);
                srunner_free(sr);
                return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        }

        harness_add_test(s, test_docs_match);
        harness_add_test(s, test_live_matches_docs);
        harness_add_test(s, test_policy_objects);
        return harness_main(s);
}
