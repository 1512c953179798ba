/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * D-Bus API v1: every method, property and signal of org.affinityd1, on a
 * private bus against the real daemon and real processes, checked against what the machine
 * says (/sys, /proc) rather than against the daemon's own view:
 *  - introspection: the Manager's properties (types and const / emits-change annotations),
 *    methods (in and out signatures) and signals are exactly the contract's; the per-policy
 *    objects carry org.affinityd1.Policy;
 *  - every Manager property has the value the machine and the configuration give (Version of
 *    the build, State, Discovery, Topology and OnlineCPUs from /sys, ReservedCPUs from
 *    affinityd.yaml, PolicyFiles, LastReloadUSec); counters move as they should when a process
 *    is placed, on Rescan and on Reload;
 *  - ListPolicies / ListProcesses / ListIrqs / ListNetQueues content;
 *  - Explain of a matched process (why, which policies didn't and why not, each thread of
 *    /proc/PID/task with what was applied and what the kernel reports), of an unmatched one,
 *    and of a free PID (org.affinityd1.Error.NoSuchProcess);
 *  - Reload good and bad (org.affinityd1.Error.InvalidPolicy, LastReloadError, State
 *    "degraded" and back), Rescan (and NotSupported in --topology mode);
 *  - the signals ProcessPlaced (once per process), PlacementFailed (a process in a cpuset
 *    cgroup that excludes the policy's CPUs), Reloaded (true / false), DriftDetected, and
 *    PropertiesChanged for the emits-change properties;
 *  - the policy objects: enumeration (Introspect, busctl tree), escaped names, properties of
 *    a resolved and of a pending policy, the set following a reload.
 * Signals are subscribed to (sd_bus_match_signal) before whatever triggers them.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "macro.h"

#define PROPS_INTERFACE "org.freedesktop.DBus.Properties"
#define CPUSET_ROOT     "/sys/fs/cgroup/cpuset"

/* The cpuset cgroup of this run (PlacementFailed), named in main() before the tests fork. */
static char cgroup_name[64];

/* ---- small utilities ---- */

static uint64_t realtime_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static char *xstrdup(const char *s) {
        char *t = strdup(s ? s : "");
        ck_assert_ptr_nonnull(t);
        return t;
}

_printf_(1, 2) static char *xasprintf(const char *format, ...) {
        va_list ap;
        char *s = NULL;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        ck_assert_int_ge(r, 0);
        return s;
}

/* The first line of path without its newline, or NULL (errno set) if it can't be read. */
static char *read_line(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t size = 0;

        if (!f)
                return NULL;
        if (getline(&line, &size, f) < 0) {
                free(line);
                return xstrdup("");
        }
        line[strcspn(line, "\n")] = '\0';
        return line;
}

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = xasprintf("%s/affinityd.yaml", harness_config_dir(h));
        harness_write_text(path, text);
}

static bool strv_has(char *const *l, const char *s) {
        STRV_FOREACH (i, l)
                if (streq(*i, s))
                        return true;
        return false;
}

static size_t strv_len(char *const *l) {
        size_t n = 0;
        STRV_FOREACH (i, l)
                n++;
        return n;
}

static char *strv_text(char *const *l) {
        size_t len = 0;
        char *s;

        STRV_FOREACH (i, l)
                len += strlen(*i) + 3;
        s = calloc(1, len + 3);
        ck_assert_ptr_nonnull(s);
        strcat(s, "[");
        STRV_FOREACH (i, l) {
                if (i != l)
                        strcat(s, "; ");
                strcat(s, *i);
        }
        strcat(s, "]");
        return s;
}

/* ---- the bus ---- */

static sd_bus *connect_bus(Harness *h) {
        sd_bus *b = NULL;
        int r;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        r = sd_bus_start(b);
        ck_assert_msg(r >= 0, "can't connect to %s: %s", harness_bus_address(h), strerror(-r));
        return b;
}

/* Calls a Manager method with no arguments and no reply; returns r, the error into *error. */
static int call_void(sd_bus *b, const char *member, sd_bus_error *error) {
        return sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, member, error, NULL,
                NULL);
}

static void call_ok(Harness *h, sd_bus *b, const char *member) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = call_void(b, member, &error);

        (void)harness_ready_count(h); /* keep the notify socket drained */
        ck_assert_msg(r >= 0, "%s() failed: %s: %s", member, strna(error.name), strna(error.message));
}

/* One property as read by GetAll. */
typedef struct Prop {
        char *name;
        char *signature;
        char *str;    /* s */
        char **strv;  /* as */
        uint64_t num; /* u, t */
        uint32_t *au; /* au */
        size_t n_au;
} Prop;

typedef struct Props {
        Prop *p;
        size_t n;
} Props;

static void props_done(Props *ps) {
        for (size_t i = 0; i < ps->n; i++) {
                free(ps->p[i].name);
                free(ps->p[i].signature);
                free(ps->p[i].str);
                strv_free(ps->p[i].strv);
                free(ps->p[i].au);
        }
        free(ps->p);
        *ps = (Props){};
}

/* GetAll(interface) on path; returns 0 or the negative errno, the D-Bus error into *error. */
static int props_read_full(
        sd_bus *b, const char *path, const char *interface, Props *ret, sd_bus_error *error) {
        sd_bus_message *reply = NULL;
        Props ps = {};
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, path, PROPS_INTERFACE, "GetAll", error, &reply, "s", interface);
        if (r < 0)
                return r;
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "{sv}"), 0);
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *name, *contents;
                char type;
                Prop *p;

                ck_assert_int_gt(sd_bus_message_read(reply, "s", &name), 0);
                ck_assert_int_gt(sd_bus_message_peek_type(reply, &type, &contents), 0);
                ck_assert_int_eq(type, 'v');
                ck_assert_int_gt(sd_bus_message_enter_container(reply, 'v', contents), 0);
                p = realloc(ps.p, (ps.n + 1) * sizeof *ps.p);
                ck_assert_ptr_nonnull(p);
                ps.p = p;
                p = &ps.p[ps.n++];
                *p = (Prop){.name = xstrdup(name), .signature = xstrdup(contents)};
                if (streq(contents, "s")) {
                        const char *s;
                        ck_assert_int_gt(sd_bus_message_read_basic(reply, 's', &s), 0);
                        p->str = xstrdup(s);
                } else if (streq(contents, "as")) {
                        ck_assert_int_ge(sd_bus_message_read_strv(reply, &p->strv), 0);
                        if (!p->strv) {
                                p->strv = calloc(1, sizeof(char *));
                                ck_assert_ptr_nonnull(p->strv);
                        }
                } else if (streq(contents, "t")) {
                        ck_assert_int_gt(sd_bus_message_read_basic(reply, 't', &p->num), 0);
                } else if (streq(contents, "u")) {
                        uint32_t u;
                        ck_assert_int_gt(sd_bus_message_read_basic(reply, 'u', &u), 0);
                        p->num = u;
                } else if (streq(contents, "au")) {
                        uint32_t u;
                        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "u"), 0);
                        while ((r = sd_bus_message_read_basic(reply, 'u', &u)) > 0) {
                                uint32_t *a = realloc(p->au, (p->n_au + 1) * sizeof *a);
                                ck_assert_ptr_nonnull(a);
                                p->au = a;
                                p->au[p->n_au++] = u;
                        }
                        ck_assert_int_ge(r, 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
                } else
                        ck_assert_int_ge(sd_bus_message_skip(reply, contents), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        }
        ck_assert_msg(r >= 0, "bad GetAll reply: %s", strerror(-r));
        sd_bus_message_unref(reply);
        *ret = ps;
        return 0;
}

static void props_read(sd_bus *b, const char *path, const char *interface, Props *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = props_read_full(b, path, interface, ret, &error);

        ck_assert_msg(
                r >= 0, "GetAll(%s) on %s failed: %s: %s", interface, path, strna(error.name),
                strna(error.message));
}

static const Prop *props_get(const Props *ps, const char *name, const char *signature) {
        for (size_t i = 0; i < ps->n; i++)
                if (streq(ps->p[i].name, name)) {
                        ck_assert_msg(
                                streq(ps->p[i].signature, signature), "property %s has type %s, not %s",
                                name, ps->p[i].signature, signature);
                        return &ps->p[i];
                }
        ck_abort_msg("no property %s", name);
        return NULL;
}

static const char *props_str(const Props *ps, const char *name) {
        return props_get(ps, name, "s")->str;
}

static uint64_t props_t(const Props *ps, const char *name) {
        return props_get(ps, name, "t")->num;
}

static char **props_strv(const Props *ps, const char *name) {
        return props_get(ps, name, "as")->strv;
}

static void manager_props(sd_bus *b, Props *ret) {
        props_read(b, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, ret);
}

static uint64_t manager_t(sd_bus *b, const char *name) {
        Props ps = {};
        uint64_t v;

        manager_props(b, &ps);
        v = props_t(&ps, name);
        props_done(&ps);
        return v;
}

static char *policy_path(const char *name) {
        char *p = NULL;
        ck_assert_int_ge(sd_bus_path_encode(AFFINITYD_POLICY_PATH_PREFIX, name, &p), 0);
        return p;
}

/* Introspect(path): the XML. */
static char *introspect(sd_bus *b, const char *path) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *xml;
        char *s;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, path, "org.freedesktop.DBus.Introspectable", "Introspect", &error,
                &reply, NULL);
        ck_assert_msg(
                r >= 0, "Introspect(%s) failed: %s: %s", path, strna(error.name), strna(error.message));
        ck_assert_int_gt(sd_bus_message_read(reply, "s", &xml), 0);
        s = xstrdup(xml);
        sd_bus_message_unref(reply);
        return s;
}

/* The child nodes of the introspection XML (<node name="X"/>), as a NULL-terminated list. */
static char **xml_child_nodes(const char *xml) {
        char **l = calloc(1, sizeof(char *));
        size_t n = 0;

        ck_assert_ptr_nonnull(l);
        for (const char *p = xml; (p = strstr(p, "<node name=\""));) {
                const char *q;
                char **t;

                p += strlen("<node name=\"");
                q = strchr(p, '"');
                ck_assert_ptr_nonnull(q);
                t = realloc(l, (n + 2) * sizeof(char *));
                ck_assert_ptr_nonnull(t);
                l = t;
                l[n] = strndup(p, (size_t)(q - p));
                ck_assert_ptr_nonnull(l[n]);
                l[++n] = NULL;
                p = q;
        }
        return l;
}

/* The part of xml of interface iface (from its <interface ...> to </interface>), or NULL. */
static char *xml_interface(const char *xml, const char *iface) {
        _cleanup_free_ char *open = xasprintf("<interface name=\"%s\">", iface);
        const char *p = strstr(xml, open), *e;

        if (!p)
                return NULL;
        e = strstr(p, "</interface>");
        ck_assert_ptr_nonnull(e);
        return strndup(p, (size_t)(e - p));
}

/* The element <kind name="name" ...> ... </kind> (or self-closed) of xml, newly allocated, or NULL. */
static char *xml_member(const char *xml, const char *kind, const char *name) {
        _cleanup_free_ char *open = xasprintf("<%s name=\"%s\"", kind, name);
        _cleanup_free_ char *close_tag = xasprintf("</%s>", kind);
        const char *p = strstr(xml, open), *gt, *e;

        if (!p)
                return NULL;
        gt = strchr(p, '>');
        ck_assert_ptr_nonnull(gt);
        if (gt[-1] == '/')
                return strndup(p, (size_t)(gt + 1 - p));
        e = strstr(gt, close_tag);
        ck_assert_ptr_nonnull(e);
        return strndup(p, (size_t)(e - p));
}

/* The value of attribute attr within the tag starting at tag, into buf ("" if absent). */
static void xml_attr(const char *tag, const char *attr, char *buf, size_t size) {
        _cleanup_free_ char *needle = xasprintf(" %s=\"", attr);
        const char *end = strchr(tag, '>'), *p = strstr(tag, needle), *q;

        buf[0] = '\0';
        if (!p || (end && p > end))
                return;
        p += strlen(needle);
        q = strchr(p, '"');
        ck_assert_ptr_nonnull(q);
        snprintf(buf, size, "%.*s", (int)(q - p), p);
}

/* Concatenated types of the <arg> elements of member with direction dir ("in", "out"; NULL: any). */
static void xml_args(const char *member, const char *dir, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = '\0';
        for (const char *p = member; (p = strstr(p, "<arg "));) {
                char type[256], d[16];

                xml_attr(p, "type", type, sizeof type);
                xml_attr(p, "direction", d, sizeof d);
                if (!d[0])
                        snprintf(d, sizeof d, "%s", strstr(member, "<signal") == member ? "out" : "in");
                if (!dir || streq(d, dir))
                        n += (size_t)snprintf(buf + n, size - n, "%s", type);
                p += 5;
        }
}

/* "const", "false", "invalidates" or "" (emits change: no annotation) of a property element. */
static void xml_emits(const char *member, char *buf, size_t size) {
        const char *p = strstr(member, "name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\"");

        buf[0] = '\0';
        if (p)
                xml_attr(p - 1, "value", buf, size);
}

/* ---- signals ---- */

typedef struct Signals {
        sd_bus *bus;
        sd_bus_message **m;
        size_t n;
} Signals;

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Signals *s = userdata;
        sd_bus_message **l = realloc(s->m, (s->n + 1) * sizeof *l);

        ck_assert_ptr_nonnull(l);
        s->m = l;
        s->m[s->n++] = sd_bus_message_ref(m);
        return 0;
}

/* Listens, on a connection of its own, to every signal of the Manager and to its
 * PropertiesChanged; the matches are in place when this returns (AddMatch answered). The
 * per-event signals come only while some connection is subscribed (signals_subscribe()). */
static void signals_listen(Harness *h, Signals *s) {
        int r;

        *s = (Signals){.bus = connect_bus(h)};
        r = sd_bus_match_signal(
                s->bus, NULL, NULL, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, NULL, on_signal, s);
        ck_assert_msg(r >= 0, "sd_bus_match_signal: %s", strerror(-r));
        r = sd_bus_match_signal(
                s->bus, NULL, NULL, AFFINITYD_BUS_PATH, PROPS_INTERFACE, "PropertiesChanged", on_signal, s);
        ck_assert_msg(r >= 0, "sd_bus_match_signal: %s", strerror(-r));
}

/* signals_listen(), and Subscribe() on that connection: every signal comes. */
static void signals_subscribe(Harness *h, Signals *s) {
        signals_listen(h, s);
        call_ok(h, s->bus, "Subscribe");
}

static void signals_done(Signals *s) {
        for (size_t i = 0; i < s->n; i++)
                sd_bus_message_unref(s->m[i]);
        free(s->m);
        s->bus = sd_bus_flush_close_unref(s->bus);
        *s = (Signals){};
}

/* Reads whatever arrived, without waiting. */
static void signals_dispatch(Signals *s) {
        int r;

        while ((r = sd_bus_process(s->bus, NULL)) > 0)
                ;
        ck_assert_msg(r >= 0, "sd_bus_process: %s", strerror(-r));
}

typedef bool (*signal_pred_t)(sd_bus_message *m, const void *userdata);

/* A line naming every signal received so far (PropertiesChanged with its property names). */
static char *signals_summary(Signals *s) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        for (size_t i = 0; i < s->n; i++) {
                sd_bus_message *m = s->m[i];
                const char *name;

                if (!m) {
                        fputs(" (taken)", f);
                        continue;
                }
                fprintf(f, " %s", sd_bus_message_get_member(m));
                if (!streq(sd_bus_message_get_member(m), "PropertiesChanged"))
                        continue;
                ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
                ck_assert_int_gt(sd_bus_message_skip(m, "s"), 0);
                fputc('[', f);
                ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
                while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                        ck_assert_int_gt(sd_bus_message_read(m, "s", &name), 0);
                        fprintf(f, "%s ", name);
                        ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                }
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', "s"), 0);
                while (sd_bus_message_read_basic(m, 's', &name) > 0)
                        fprintf(f, "~%s ", name);
                fputc(']', f);
        }
        ck_assert_int_eq(fclose(f), 0);
        return text;
}

/* The first received signal member (not taken yet) for which pred holds; waits for it (fails
 * the test after the deadline, naming what). Takes it: the caller unrefs it. */
static sd_bus_message *signals_wait_impl(
        Harness *h, Signals *s, const char *member, signal_pred_t pred, const void *userdata,
        const char *what) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        for (;;) {
                signals_dispatch(s);
                for (size_t i = 0; i < s->n; i++) {
                        sd_bus_message *m = s->m[i];

                        if (!m || !streq(sd_bus_message_get_member(m), member))
                                continue;
                        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
                        if (pred && !pred(m, userdata))
                                continue;
                        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
                        s->m[i] = NULL;
                        return m;
                }
                if (harness_now_usec() >= deadline) {
                        _cleanup_free_ char *summary = signals_summary(s);
                        ck_abort_msg(
                                "no %s signal with %s within %llu s; received:%s", member, what,
                                HARNESS_TIMEOUT_USEC / USEC_PER_SEC, summary);
                }
                (void)harness_ready_count(h);
                (void)sd_bus_wait(s->bus, 50 * USEC_PER_MSEC);
        }
}
#define signals_wait(h, s, member, pred, userdata) \
        signals_wait_impl(h, s, member, pred, userdata, #pred "(" #userdata ")")

/* How many received (not taken) signals member satisfy pred. */
static unsigned signals_count(Signals *s, const char *member, signal_pred_t pred, const void *userdata) {
        unsigned n = 0;

        signals_dispatch(s);
        for (size_t i = 0; i < s->n; i++) {
                sd_bus_message *m = s->m[i];

                if (!m || !streq(sd_bus_message_get_member(m), member))
                        continue;
                ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
                if (!pred || pred(m, userdata))
                        n++;
        }
        return n;
}

static bool pid_is(sd_bus_message *m, const void *userdata) {
        uint32_t pid;

        ck_assert_msg(
                streq(sd_bus_message_get_signature(m, true), "usss"), "%s has signature %s, not usss",
                sd_bus_message_get_member(m), sd_bus_message_get_signature(m, true));
        ck_assert_int_gt(sd_bus_message_read_basic(m, 'u', &pid), 0);
        return pid == (uint32_t) * (const pid_t *)userdata;
}

static bool policy_is(sd_bus_message *m, const void *userdata) {
        const char *comm, *policy, *cpus;
        uint32_t pid;

        ck_assert_int_gt(sd_bus_message_read(m, "usss", &pid, &comm, &policy, &cpus), 0);
        return streq(policy, userdata);
}

static bool reloaded_is(sd_bus_message *m, const void *userdata) {
        int ok;
        const char *err;

        ck_assert_msg(
                streq(sd_bus_message_get_signature(m, true), "bs"), "Reloaded has signature %s, not bs",
                sd_bus_message_get_signature(m, true));
        ck_assert_int_gt(sd_bus_message_read(m, "bs", &ok, &err), 0);
        return !!ok == *(const bool *)userdata;
}

/* A PropertiesChanged of the Manager that changes (or invalidates) the property userdata. */
static bool changes_property(sd_bus_message *m, const void *userdata) {
        const char *iface, *name;
        bool found = false;
        int r;

        ck_assert_int_gt(sd_bus_message_read(m, "s", &iface), 0);
        if (!streq(iface, AFFINITYD_BUS_INTERFACE))
                return false;
        ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                ck_assert_int_gt(sd_bus_message_read(m, "s", &name), 0);
                found = found || streq(name, userdata);
                ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', "s"), 0);
        while ((r = sd_bus_message_read_basic(m, 's', &name)) > 0)
                found = found || streq(name, userdata);
        return found;
}

/* ---- /proc and /sys ---- */

/* Field `field` (1-based, as in proc(5)) of /proc/PID/task/TID/stat, or -1 if it's gone. */
static long long task_stat_field(pid_t pid, pid_t tid, int field) {
        _cleanup_free_ char *path = xasprintf("/proc/%d/task/%d/stat", (int)pid, (int)tid);
        _cleanup_free_ char *line = read_line(path);
        const char *p;

        if (!line)
                return -1;
        p = strrchr(line, ')');
        ck_assert_ptr_nonnull(p);
        p += 2; /* field 3 */
        for (int i = 3; i < field; i++) {
                p = strchr(p, ' ');
                ck_assert_ptr_nonnull(p);
                p++;
        }
        return strtoll(p, NULL, 10);
}

/* The value of "key : value" (sched) or "Key:\tvalue" (status) in a /proc file; -1 if absent. */
static long long proc_key(const char *path, const char *key) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[512];
        size_t k = strlen(key);

        if (!f)
                return -1;
        while (fgets(line, sizeof line, f)) {
                const char *p = line;
                if (strncmp(line, key, k) != 0 || !strchr(" \t:", line[k]))
                        continue;
                p = strchr(line, ':');
                if (p)
                        return strtoll(p + 1, NULL, 10);
        }
        return -1;
}

/* Field 2 (run_delay, ns) of /proc/PID/task/TID/schedstat, or -1. */
static long long task_run_delay(pid_t pid, pid_t tid) {
        _cleanup_free_ char *path = xasprintf("/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
        _cleanup_free_ char *line = read_line(path);
        unsigned long long a, b;

        if (!line || sscanf(line, "%llu %llu", &a, &b) != 2)
                return -1;
        return (long long)b;
}

static char *task_comm(pid_t pid, pid_t tid) {
        _cleanup_free_ char *path = xasprintf("/proc/%d/task/%d/comm", (int)pid, (int)tid);
        char *c = read_line(path);

        ck_assert_msg(c, "%s: %s", path, strerror(errno));
        return c;
}

/* Is cpu in the cpu-list? */
static bool cpu_in_list(unsigned cpu, const char *list) {
        for (const char *p = list; *p;) {
                char *end;
                unsigned long a = strtoul(p, &end, 10), b = a;

                if (end == p)
                        return false;
                if (*end == '-')
                        b = strtoul(end + 1, &end, 10);
                if (cpu >= a && cpu <= b)
                        return true;
                p = *end == ',' ? end + 1 : end;
        }
        return false;
}

/* The topology_summary() line, computed from /sys: packages (distinct physical_package_id),
 * NUMA nodes, cores (distinct package/core_id pairs), present CPUs, online CPUs. */
static char *sysfs_topology_summary(void) {
        _cleanup_free_ char *present = read_line("/sys/devices/system/cpu/present");
        _cleanup_free_ char *online = read_line("/sys/devices/system/cpu/online");
        long pkg_ids[1024], core_ids[1024][2];
        unsigned n_pkg = 0, n_core = 0, n_cpus = 0, n_online = 0, n_nodes = 0;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        ck_assert_ptr_nonnull(present);
        ck_assert_ptr_nonnull(online);
        for (unsigned cpu = 0; cpu < 1024; cpu++) {
                _cleanup_free_ char *pkg_path = NULL, *core_path = NULL, *pkg = NULL, *core = NULL;
                long pid, cid;
                bool seen = false;

                if (!cpu_in_list(cpu, present))
                        continue;
                n_cpus++;
                if (cpu_in_list(cpu, online))
                        n_online++;
                pkg_path = xasprintf("/sys/devices/system/cpu/cpu%u/topology/physical_package_id", cpu);
                core_path = xasprintf("/sys/devices/system/cpu/cpu%u/topology/core_id", cpu);
                pkg = read_line(pkg_path);
                core = read_line(core_path);
                if (!pkg || !core)
                        continue; /* offline: no topology directory */
                pid = strtol(pkg, NULL, 10);
                cid = strtol(core, NULL, 10);
                for (unsigned i = 0; i < n_pkg; i++)
                        seen = seen || pkg_ids[i] == pid;
                if (!seen)
                        pkg_ids[n_pkg++] = pid;
                seen = false;
                for (unsigned i = 0; i < n_core; i++)
                        seen = seen || (core_ids[i][0] == pid && core_ids[i][1] == cid);
                if (!seen) {
                        core_ids[n_core][0] = pid;
                        core_ids[n_core][1] = cid;
                        n_core++;
                }
        }
        d = opendir("/sys/devices/system/node");
        if (d)
                while ((de = readdir(d)))
                        if (strncmp(de->d_name, "node", 4) == 0 && de->d_name[4] >= '0' &&
                            de->d_name[4] <= '9')
                                n_nodes++;
        if (n_nodes == 0)
                n_nodes = 1;
        return xasprintf(
                "%u package%s, %u NUMA node%s, %u core%s, %u CPU%s (%u online)", n_pkg,
                n_pkg == 1 ? "" : "s", n_nodes, n_nodes == 1 ? "" : "s", n_core, n_core == 1 ? "" : "s",
                n_cpus, n_cpus == 1 ? "" : "s", n_online);
}

/* The NUMA node of cpu from /sys (cpuN/nodeM link), as text. */
static char *node_of_cpu(unsigned cpu) {
        _cleanup_free_ char *dir = xasprintf("/sys/devices/system/cpu/cpu%u", cpu);
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;

        ck_assert_msg(d, "%s: %s", dir, strerror(errno));
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "node", 4) == 0 && de->d_name[4] >= '0' && de->d_name[4] <= '9')
                        return xstrdup(de->d_name + 4);
        return xstrdup("0");
}

/* A PID no process has now (and that /proc doesn't show). */
static pid_t free_pid(void) {
        _cleanup_free_ char *max = read_line("/proc/sys/kernel/pid_max");
        long m = max ? strtol(max, NULL, 10) : 32768;

        for (pid_t p = (pid_t)m - 1; p > 1000; p--) {
                char path[64];
                snprintf(path, sizeof path, "/proc/%d", (int)p);
                if (kill(p, 0) < 0 && errno == ESRCH && access(path, F_OK) < 0)
                        return p;
        }
        ck_abort_msg("no free PID found");
        return 0;
}

/* ---- Explain ---- */

typedef struct ThreadRow {
        uint32_t tid;
        char *comm, *rule, *applied, *kernel;
        uint32_t last_cpu;
        uint64_t migrations, run_delay, involuntary;
} ThreadRow;

typedef struct Explanation {
        char *comm, *policy, *cpus;
        char **lines;
        char **unmatched_policy, **unmatched_why;
        size_t n_unmatched;
        ThreadRow *threads;
        size_t n_threads;
} Explanation;

static void explanation_done(Explanation *e) {
        free(e->comm);
        free(e->policy);
        free(e->cpus);
        strv_free(e->lines);
        for (size_t i = 0; i < e->n_unmatched; i++) {
                free(e->unmatched_policy[i]);
                free(e->unmatched_why[i]);
        }
        free(e->unmatched_policy);
        free(e->unmatched_why);
        for (size_t i = 0; i < e->n_threads; i++) {
                free(e->threads[i].comm);
                free(e->threads[i].rule);
                free(e->threads[i].applied);
                free(e->threads[i].kernel);
        }
        free(e->threads);
        *e = (Explanation){};
}

static int explain(sd_bus *b, pid_t pid, Explanation *ret, sd_bus_error *error) {
        sd_bus_message *reply = NULL;
        Explanation e = {};
        const char *comm, *policy, *cpus, *a, *w;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "Explain", error, &reply,
                "u", (uint32_t)pid);
        if (r < 0)
                return r;
        ck_assert_msg(
                streq(sd_bus_message_get_signature(reply, true), "sssasa(ss)a(ussssuttt)"),
                "Explain's reply has signature %s", sd_bus_message_get_signature(reply, true));
        ck_assert_int_gt(sd_bus_message_read(reply, "sss", &comm, &policy, &cpus), 0);
        e.comm = xstrdup(comm);
        e.policy = xstrdup(policy);
        e.cpus = xstrdup(cpus);
        ck_assert_int_ge(sd_bus_message_read_strv(reply, &e.lines), 0);
        if (!e.lines)
                e.lines = calloc(1, sizeof(char *));
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(ss)"), 0);
        while ((r = sd_bus_message_read(reply, "(ss)", &a, &w)) > 0) {
                e.unmatched_policy = realloc(e.unmatched_policy, (e.n_unmatched + 1) * sizeof(char *));
                e.unmatched_why = realloc(e.unmatched_why, (e.n_unmatched + 1) * sizeof(char *));
                ck_assert(e.unmatched_policy && e.unmatched_why);
                e.unmatched_policy[e.n_unmatched] = xstrdup(a);
                e.unmatched_why[e.n_unmatched++] = xstrdup(w);
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(ussssuttt)"), 0);
        for (;;) {
                ThreadRow t = {};
                const char *tc, *rule, *applied, *kernel;

                r = sd_bus_message_read(
                        reply, "(ussssuttt)", &t.tid, &tc, &rule, &applied, &kernel, &t.last_cpu,
                        &t.migrations, &t.run_delay, &t.involuntary);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        break;
                t.comm = xstrdup(tc);
                t.rule = xstrdup(rule);
                t.applied = xstrdup(applied);
                t.kernel = xstrdup(kernel);
                e.threads = realloc(e.threads, (e.n_threads + 1) * sizeof(ThreadRow));
                ck_assert_ptr_nonnull(e.threads);
                e.threads[e.n_threads++] = t;
        }
        sd_bus_message_unref(reply);
        *ret = e;
        return 0;
}

static bool lines_contain(char *const *lines, const char *needle) {
        STRV_FOREACH (l, lines)
                if (strstr(*l, needle))
                        return true;
        return false;
}

/*
 * The thread rows of e are exactly the threads of /proc/PID/task, each with its comm, the
 * kernel's cpu-list and last CPU of now, and per-placement deltas no bigger than the totals
 * since the thread started.
 */
static void assert_thread_rows(pid_t pid, const Explanation *e) {
        _cleanup_free_ TaskInfo *tasks = NULL;
        int n = harness_read_tasks(pid, &tasks);

        ck_assert_msg(n > 0, "can't read /proc/%d/task", (int)pid);
        ck_assert_msg(
                (size_t)n == e->n_threads, "Explain(%d) has %zu thread rows, /proc/%d/task %d", (int)pid,
                e->n_threads, (int)pid, n);
        for (int i = 0; i < n; i++) {
                const ThreadRow *t = NULL;
                _cleanup_free_ char *comm = task_comm(pid, tasks[i].tid), *sched = NULL, *status = NULL;
                long long last_cpu, total;

                for (size_t k = 0; k < e->n_threads; k++)
                        if (e->threads[k].tid == (uint32_t)tasks[i].tid)
                                t = &e->threads[k];
                ck_assert_msg(t, "thread %d of %d is not in Explain", (int)tasks[i].tid, (int)pid);
                ck_assert_str_eq(t->comm, comm);
                ck_assert_msg(
                        streq(t->kernel, tasks[i].cpus),
                        "thread %d: Explain says the kernel has %s, /proc says %s", (int)t->tid, t->kernel,
                        tasks[i].cpus);
                last_cpu = task_stat_field(pid, tasks[i].tid, 39);
                ck_assert_msg(
                        last_cpu == (long long)t->last_cpu,
                        "thread %d: last_cpu %u, /proc/.../stat field 39 says %lld", (int)t->tid,
                        t->last_cpu, last_cpu);

                sched = xasprintf("/proc/%d/task/%d/sched", (int)pid, (int)tasks[i].tid);
                total = proc_key(sched, "se.nr_migrations");
                if (total < 0)
                        ck_assert_msg(
                                t->migrations == UINT64_MAX,
                                "thread %d: migrations %" PRIu64 " without se.nr_migrations", (int)t->tid,
                                t->migrations);
                else
                        ck_assert_msg(
                                t->migrations <= (uint64_t)total,
                                "thread %d: %" PRIu64 " migrations since placement, %lld in all",
                                (int)t->tid, t->migrations, total);
                total = task_run_delay(pid, tasks[i].tid);
                ck_assert_int_ge(total, 0);
                ck_assert_msg(
                        t->run_delay <= (uint64_t)total,
                        "thread %d: run_delay %" PRIu64 " ns since placement, %lld in all", (int)t->tid,
                        t->run_delay, total);
                status = xasprintf("/proc/%d/task/%d/status", (int)pid, (int)tasks[i].tid);
                total = proc_key(status, "nonvoluntary_ctxt_switches");
                ck_assert_int_ge(total, 0);
                ck_assert_msg(
                        t->involuntary <= (uint64_t)total,
                        "thread %d: %" PRIu64 " involuntary switches since placement, %lld in all",
                        (int)t->tid, t->involuntary, total);
        }
}

static const ThreadRow *thread_row(const Explanation *e, pid_t tid) {
        for (size_t k = 0; k < e->n_threads; k++)
                if (e->threads[k].tid == (uint32_t)tid)
                        return &e->threads[k];
        ck_abort_msg("thread %d not in Explain", (int)tid);
        return NULL;
}

/* ---- the contract ---- */

typedef enum Emits {
        EMITS_CONST,  /* EmitsChangedSignal "const" */
        EMITS_CHANGE, /* no annotation: emits PropertiesChanged with the value */
        EMITS_NONE,   /* "false" */
        EMITS_NEVER,  /* "false" or "const": no signal either way */
} Emits;

typedef struct PropertyDef {
        const char *name, *signature;
        Emits emits;
} PropertyDef;

static const PropertyDef manager_property_defs[] = {
        {"Version", "s", EMITS_CONST},
        {"State", "s", EMITS_CHANGE},
        {"DegradedReasons", "as", EMITS_CHANGE},
        {"Discovery", "s", EMITS_CHANGE},
        {"Topology", "s", EMITS_CHANGE},
        {"OnlineCPUs", "s", EMITS_CHANGE},
        {"ReservedCPUs", "s", EMITS_CHANGE},
        {"KubeletExclusiveCPUs", "s", EMITS_CHANGE},
        {"PolicyFiles", "as", EMITS_CHANGE},
        {"LastReloadUSec", "t", EMITS_CHANGE},
        {"LastReloadError", "s", EMITS_CHANGE},
        {"Reloads", "t", EMITS_CHANGE},
        {"ManagedProcesses", "u", EMITS_NONE},
        {"EventsReceived", "t", EMITS_NONE},
        {"EventsLost", "t", EMITS_NONE},
        {"MatchesUndecided", "t", EMITS_NONE},
        {"Rescans", "t", EMITS_NONE},
        {"ProcessesMatched", "t", EMITS_NONE},
        {"ProcessesPlaced", "t", EMITS_NONE},
        {"ProcessesVanished", "t", EMITS_NONE},
        {"PlacementFailures", "t", EMITS_NONE},
        {"DriftDetected", "t", EMITS_NONE},
        {"DriftCorrections", "t", EMITS_NONE},
        {"Restores", "t", EMITS_NONE},
        {"IrqsPlaced", "t", EMITS_NONE},
        {"IrqRefusals", "t", EMITS_NONE},
        {"QueuesPlaced", "t", EMITS_NONE},
        {"QueueFailures", "t", EMITS_NONE},
        {"DeviceRestores", "t", EMITS_NONE},
        {"DeviceDriftDetected", "t", EMITS_NONE},
        {"DeviceDriftCorrections", "t", EMITS_NONE},
        {"DeviceEvents", "t", EMITS_NONE},
        {"PlacementLatencyP50USec", "t", EMITS_NONE},
        {"PlacementLatencyP99USec", "t", EMITS_NONE},
        {"PlacementLatencyMaxUSec", "t", EMITS_NONE},
        {"PlacementLatencyCount", "t", EMITS_NONE},
        {"PlacementLatencySumUSec", "t", EMITS_NONE},
        {"PlacementLatencyHistogram", "a(tt)", EMITS_NONE},
        {"ManagedProcessesByPolicy", "a(su)", EMITS_NONE},
        {"PolicyEffects", "a(sttttttb)", EMITS_NONE},
        {"IrqSkewEpisodes", "a(ssubt)", EMITS_NONE},
        {"CpuIntrusions", "a(usstt)", EMITS_NONE},
};

static const PropertyDef policy_property_defs[] = {
        {"Name", "s", EMITS_NEVER},         {"File", "s", EMITS_NEVER},
        {"Line", "u", EMITS_NEVER},         {"Selector", "s", EMITS_NEVER},
        {"CPUs", "s", EMITS_NONE},          {"Nodes", "s", EMITS_NONE},
        {"PendingReason", "s", EMITS_NONE}, {"MatchedPIDs", "au", EMITS_NONE},
        {"ExclusiveCPUs", "s", EMITS_NONE},
};

static const struct {
        const char *name, *in, *out;
} manager_method_defs[] = {
        {"ListPolicies", "", "a(ssuss)"},
        {"ListProcesses", "", "a(usss)"},
        {"ListIrqs", "", "a(ussssss)"},
        {"ListNetQueues", "", "a(ssssuss)"},
        {"Explain", "u", "sssasa(ss)a(ussssuttt)"},
        {"Reload", "", ""},
        {"Rescan", "", ""},
        {"Subscribe", "", ""},
        {"Unsubscribe", "", ""},
};

static const struct {
        const char *name, *signature;
} manager_signal_defs[] = {
        {"ProcessPlaced", "usss"},  {"PlacementFailed", "usss"}, {"Reloaded", "bs"},
        {"DriftDetected", "sssss"}, {"IrqSkew", "ssudss"},       {"CpuIntrusion", "usstts"},
};

static unsigned count_elements(const char *xml, const char *kind) {
        _cleanup_free_ char *open = xasprintf("<%s name=\"", kind);
        unsigned n = 0;

        for (const char *p = xml; (p = strstr(p, open)); p++)
                n++;
        return n;
}

static void assert_properties(
        const char *iface_xml, const char *iface, const PropertyDef *defs, size_t n_defs) {
        for (size_t i = 0; i < n_defs; i++) {
                _cleanup_free_ char *m = xml_member(iface_xml, "property", defs[i].name);
                char type[64], access_mode[16], emits[32];

                ck_assert_msg(m, "%s has no property %s", iface, defs[i].name);
                xml_attr(m, "type", type, sizeof type);
                xml_attr(m, "access", access_mode, sizeof access_mode);
                xml_emits(m, emits, sizeof emits);
                ck_assert_msg(
                        streq(type, defs[i].signature), "%s.%s has type %s, not %s", iface, defs[i].name,
                        type, defs[i].signature);
                ck_assert_msg(
                        streq(access_mode, "read"), "%s.%s is %s, not read-only", iface, defs[i].name,
                        access_mode);
                switch (defs[i].emits) {
                case EMITS_CONST:
                        ck_assert_msg(
                                streq(emits, "const"), "%s.%s: EmitsChangedSignal \"%s\", not const", iface,
                                defs[i].name, emits);
                        break;
                case EMITS_CHANGE:
                        ck_assert_msg(
                                streq(emits, "") || streq(emits, "true"),
                                "%s.%s: EmitsChangedSignal \"%s\", but it is emits-change", iface,
                                defs[i].name, emits);
                        break;
                case EMITS_NONE:
                        ck_assert_msg(
                                streq(emits, "false"), "%s.%s: EmitsChangedSignal \"%s\", not false", iface,
                                defs[i].name, emits);
                        break;
                case EMITS_NEVER:
                        ck_assert_msg(
                                streq(emits, "false") || streq(emits, "const"),
                                "%s.%s: EmitsChangedSignal \"%s\", but it emits no change signal", iface,
                                defs[i].name, emits);
                        break;
                }
        }
        ck_assert_msg(
                count_elements(iface_xml, "property") == n_defs, "%s has %u properties, the contract %zu",
                iface, count_elements(iface_xml, "property"), n_defs);
}

/* ---- tests ---- */

/* Introspection: exactly the contract's members, types and annotations. */
START_TEST(test_api_introspection) {
        Harness *h = harness_new();
        _cleanup_free_ char *xml = NULL, *iface = NULL, *pxml = NULL, *piface = NULL, *path = NULL;
        _cleanup_strv_free_ char **nodes = NULL;
        sd_bus *b;

        harness_write_policy(
                h, "10-db.yaml",
                "policies:\n"
                "  - name: db-primary.1\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                harness_unique_name(h));
        harness_start_daemon(h);
        b = connect_bus(h);

        xml = introspect(b, AFFINITYD_BUS_PATH);
        iface = xml_interface(xml, AFFINITYD_BUS_INTERFACE);
        ck_assert_msg(
                iface, "%s has no interface %s:\n%s", AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, xml);
        assert_properties(
                iface, AFFINITYD_BUS_INTERFACE, manager_property_defs, ELEMENTSOF(manager_property_defs));

        for (size_t i = 0; i < ELEMENTSOF(manager_method_defs); i++) {
                _cleanup_free_ char *m = xml_member(iface, "method", manager_method_defs[i].name);
                char in[256], out[256];

                ck_assert_msg(
                        m, "%s has no method %s", AFFINITYD_BUS_INTERFACE, manager_method_defs[i].name);
                xml_args(m, "in", in, sizeof in);
                xml_args(m, "out", out, sizeof out);
                ck_assert_msg(
                        streq(in, manager_method_defs[i].in) && streq(out, manager_method_defs[i].out),
                        "%s(%s) -> (%s), the contract says (%s) -> (%s)", manager_method_defs[i].name, in,
                        out, manager_method_defs[i].in, manager_method_defs[i].out);
        }
        ck_assert_uint_eq(count_elements(iface, "method"), ELEMENTSOF(manager_method_defs));

        for (size_t i = 0; i < ELEMENTSOF(manager_signal_defs); i++) {
                _cleanup_free_ char *m = xml_member(iface, "signal", manager_signal_defs[i].name);
                char sig[256];

                ck_assert_msg(
                        m, "%s has no signal %s", AFFINITYD_BUS_INTERFACE, manager_signal_defs[i].name);
                xml_args(m, NULL, sig, sizeof sig);
                ck_assert_msg(
                        streq(sig, manager_signal_defs[i].signature),
                        "signal %s(%s), the contract says (%s)", manager_signal_defs[i].name, sig,
                        manager_signal_defs[i].signature);
        }
        ck_assert_uint_eq(count_elements(iface, "signal"), ELEMENTSOF(manager_signal_defs));

        /* The policy objects hang below /org/affinityd1/policy. */
        nodes = xml_child_nodes(xml);
        ck_assert_msg(
                strv_has(nodes, "policy"), "%s has no child node \"policy\":\n%s", AFFINITYD_BUS_PATH, xml);

        path = policy_path("db-primary.1");
        pxml = introspect(b, path);
        piface = xml_interface(pxml, AFFINITYD_POLICY_INTERFACE);
        ck_assert_msg(piface, "%s has no interface %s:\n%s", path, AFFINITYD_POLICY_INTERFACE, pxml);
        assert_properties(
                piface, AFFINITYD_POLICY_INTERFACE, policy_property_defs, ELEMENTSOF(policy_property_defs));
        ck_assert_uint_eq(count_elements(piface, "method"), 0);
        ck_assert_uint_eq(count_elements(piface, "signal"), 0);

        sd_bus_flush_close_unref(b);
}
END_TEST

/* Every Manager property against the machine and the configuration; counters that move. */
START_TEST(test_api_properties) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *online = read_line("/sys/devices/system/cpu/online"),
                            *topo = sysfs_topology_summary();
        _cleanup_free_ char *settings = NULL, *marker = NULL, *web = NULL, *extra = NULL, *out = NULL,
                            *err = NULL;
        const char *bin = getenv("AFFINITYD_BIN");
        ManagerProps settled0 = {}, settled = {};
        Props p0 = {}, p = {};
        uint64_t t0, t1, last1;
        sd_bus *b;
        Child *c;
        int r;

        write_settings(h, "reserve: \"0\"\n");
        web = xstrdup(harness_write_policy(
                h, "10-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                name));
        harness_start_daemon(h);
        b = connect_bus(h);
        harness_wait_counters_settled(h, 0, NULL, &settled0);
        manager_props(b, &p0);

        /* Version: the build's, and what affinityd --version says. */
        ck_assert_str_eq(props_str(&p0, "Version"), PACKAGE_VERSION);
        r = harness_run(h, false, &out, &err, ARGS(bin, "--version"));
        ck_assert_msg(r == 0, "affinityd --version exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, PACKAGE_VERSION), "affinityd --version says \"%s\", the bus %s", out,
                props_str(&p0, "Version"));
        ck_assert_str_eq(props_str(&p0, "State"), "running");
        ck_assert_uint_eq(strv_len(props_strv(&p0, "DegradedReasons")), 0);
        ck_assert_str_eq(props_str(&p0, "Discovery"), "netlink");
        ck_assert_str_eq(props_str(&p0, "Topology"), topo);
        ck_assert_str_eq(props_str(&p0, "OnlineCPUs"), online);
        ck_assert_str_eq(props_str(&p0, "ReservedCPUs"), "0");
        settings = xasprintf("%s/affinityd.yaml", harness_config_dir(h));
        marker = xasprintf("%s/policy.d/00-integ-marker.yaml", harness_config_dir(h));
        {
                char **files = props_strv(&p0, "PolicyFiles");
                _cleanup_free_ char *text = strv_text(files);

                ck_assert_msg(
                        strv_len(files) == 3 && streq(files[0], settings) && streq(files[1], marker) &&
                                streq(files[2], web),
                        "PolicyFiles %s, expected [%s; %s; %s]", text, settings, marker, web);
        }
        ck_assert_uint_eq(props_t(&p0, "LastReloadUSec"), 0); /* no reload since start */
        ck_assert_str_eq(props_str(&p0, "LastReloadError"), "");
        ck_assert_uint_eq(props_t(&p0, "DriftDetected"), 0);
        ck_assert_uint_eq(props_t(&p0, "DriftCorrections"), 0);
        ck_assert_uint_eq(props_t(&p0, "Restores"), 0);
        ck_assert_uint_eq(props_t(&p0, "IrqsPlaced"), 0); /* no irqs: rules */
        ck_assert_uint_eq(props_t(&p0, "IrqRefusals"), 0);
        ck_assert_uint_eq(props_t(&p0, "QueuesPlaced"), 0); /* no net: rules */
        ck_assert_uint_eq(props_t(&p0, "QueueFailures"), 0);
        ck_assert_uint_eq(props_t(&p0, "PlacementFailures"), 0);
        ck_assert_uint_eq(props_get(&p0, "ManagedProcesses", "u")->num, settled0.managed_processes);

        /* Placing a process of 3 threads: one more matched, placed and managed process. */
        c = harness_spawn_threads(h, name, 2, "0");
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_wait_listed(h, c->pid, "web");
        harness_wait_counters_settled(h, settled0.processes_matched + 1, NULL, &settled);
        manager_props(b, &p);
        ck_assert_uint_eq(props_t(&p, "ProcessesMatched"), props_t(&p0, "ProcessesMatched") + 1);
        ck_assert_uint_eq(props_t(&p, "ProcessesPlaced"), props_t(&p0, "ProcessesPlaced") + 1);
        ck_assert_uint_eq(props_t(&p, "ProcessesVanished"), props_t(&p0, "ProcessesVanished"));
        ck_assert_uint_eq(props_t(&p, "PlacementFailures"), 0);
        ck_assert_uint_eq(
                props_get(&p, "ManagedProcesses", "u")->num,
                props_get(&p0, "ManagedProcesses", "u")->num + 1);
        ck_assert_uint_gt(props_t(&p, "EventsReceived"), props_t(&p0, "EventsReceived"));
        ck_assert_uint_ge(props_t(&p, "PlacementLatencyMaxUSec"), 1);
        ck_assert_uint_ge(props_t(&p, "PlacementLatencyMaxUSec"), props_t(&p, "PlacementLatencyP99USec"));
        ck_assert_uint_ge(props_t(&p, "PlacementLatencyP99USec"), props_t(&p, "PlacementLatencyP50USec"));
        ck_assert_uint_gt(props_t(&p, "PlacementLatencyCount"), props_t(&p0, "PlacementLatencyCount"));
        ck_assert_uint_ge(props_t(&p, "PlacementLatencySumUSec"), props_t(&p, "PlacementLatencyMaxUSec"));
        props_done(&p0);
        p0 = p;
        p = (Props){};

        /* Rescan: counted once, and it doesn't count the placed process again. */
        call_ok(h, b, "Rescan");
        manager_props(b, &p);
        /* (A lost-event condition elsewhere on the machine would add rescans of its own.) */
        if (props_t(&p, "EventsLost") == props_t(&p0, "EventsLost"))
                ck_assert_uint_eq(props_t(&p, "Rescans"), props_t(&p0, "Rescans") + 1);
        else
                ck_assert_uint_gt(props_t(&p, "Rescans"), props_t(&p0, "Rescans"));
        ck_assert_uint_eq(props_t(&p, "ProcessesMatched"), props_t(&p0, "ProcessesMatched"));
        ck_assert_uint_eq(
                props_get(&p, "ManagedProcesses", "u")->num, props_get(&p0, "ManagedProcesses", "u")->num);
        ck_assert_uint_eq(props_t(&p, "Reloads"), props_t(&p0, "Reloads"));
        ck_assert_uint_eq(props_t(&p, "LastReloadUSec"), 0);
        props_done(&p0);
        p0 = p;
        p = (Props){};

        /* Reload: counted, timed (CLOCK_REALTIME µs of the attempt), and a new file is listed. */
        extra = xstrdup(harness_write_policy(
                h, "20-extra.yaml",
                "policies:\n"
                "  - name: extra\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"0\"\n",
                harness_unique_name(h)));
        t0 = realtime_usec();
        call_ok(h, b, "Reload");
        t1 = realtime_usec();
        manager_props(b, &p);
        ck_assert_uint_eq(props_t(&p, "Reloads"), props_t(&p0, "Reloads") + 1);
        last1 = props_t(&p, "LastReloadUSec");
        ck_assert_msg(
                last1 >= t0 && last1 <= t1,
                "LastReloadUSec %" PRIu64 " is not within the Reload() call [%" PRIu64 ", %" PRIu64 "]",
                last1, t0, t1);
        ck_assert_str_eq(props_str(&p, "LastReloadError"), "");
        ck_assert_str_eq(props_str(&p, "State"), "running");
        {
                char **files = props_strv(&p, "PolicyFiles");
                _cleanup_free_ char *text = strv_text(files);
                ck_assert_msg(
                        strv_len(files) == 4 && streq(files[3], extra), "PolicyFiles after adding %s: %s",
                        extra, text);
        }
        /* The reload kept the process (same policy, same CPUs): not matched again. */
        ck_assert_uint_eq(
                props_get(&p, "ManagedProcesses", "u")->num, props_get(&p0, "ManagedProcesses", "u")->num);
        props_done(&p);

        t0 = realtime_usec();
        call_ok(h, b, "Reload");
        t1 = realtime_usec();
        manager_props(b, &p);
        ck_assert_uint_eq(props_t(&p, "Reloads"), props_t(&p0, "Reloads") + 2);
        ck_assert_uint_gt(props_t(&p, "LastReloadUSec"), last1);
        ck_assert(props_t(&p, "LastReloadUSec") >= t0 && props_t(&p, "LastReloadUSec") <= t1);
        props_done(&p);

        /* The process exits: no longer managed. */
        child_kill(c);
        {
                uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
                uint32_t want = (uint32_t)props_get(&p0, "ManagedProcesses", "u")->num - 1;

                for (;;) {
                        manager_props(b, &p);
                        if (props_get(&p, "ManagedProcesses", "u")->num == want)
                                break;
                        ck_assert_msg(
                                harness_now_usec() < deadline,
                                "ManagedProcesses stays %" PRIu64 " after the process exited, expected %u",
                                props_get(&p, "ManagedProcesses", "u")->num, want);
                        props_done(&p);
                        (void)harness_ready_count(h);
                        usleep(20 * 1000);
                }
                props_done(&p);
        }

        props_done(&p0);
        manager_props_done(&settled0);
        manager_props_done(&settled);
        sd_bus_flush_close_unref(b);
}
END_TEST

/*
 * ReservedCPUs of a reserve: selector: what the plan resolved on this machine, the lowest
 * online core whole (every SMT sibling of the first online CPU, as sysfs lists them).
 */
START_TEST(test_api_reserve_selector) {
        Harness *h = harness_new();
        _cleanup_free_ char *online = read_line("/sys/devices/system/cpu/online"), *path = NULL,
                            *siblings = NULL;
        Props p0 = {};
        sd_bus *b;

        path = xasprintf(
                "/sys/devices/system/cpu/cpu%lu/topology/thread_siblings_list", strtoul(online, NULL, 10));
        siblings = read_line(path);
        write_settings(h, "reserve: { cores: 1 }\n");
        harness_start_daemon(h);
        b = connect_bus(h);
        manager_props(b, &p0);
        ck_assert_str_eq(props_str(&p0, "ReservedCPUs"), siblings);
        props_done(&p0);
        sd_bus_flush_close_unref(b);
}
END_TEST

/* One numeric IRQ line of /proc/interrupts. */
static size_t proc_irq_numbers(unsigned **ret) {
        _cleanup_fclose_ FILE *f = fopen("/proc/interrupts", "re");
        unsigned *l = NULL;
        size_t n = 0;
        char line[4096];

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof line, f)) {
                char *end;
                const char *p = line + strspn(line, " ");
                unsigned long v = strtoul(p, &end, 10);

                if (end == p || *end != ':')
                        continue;
                l = realloc(l, (n + 1) * sizeof *l);
                ck_assert_ptr_nonnull(l);
                l[n++] = (unsigned)v;
        }
        *ret = l;
        return n;
}

/* "00000002" / "ff,ffffffff" → cpu-list of CPUs < 64. */
static void mask_to_list(const char *mask, char *buf, size_t size) {
        uint64_t bits = 0;
        size_t n = 0;

        for (const char *p = mask; *p; p++) {
                if (*p == ',')
                        continue;
                bits = bits << 4 | (uint64_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
        }
        buf[0] = '\0';
        for (unsigned c = 0; c < 64; c++) {
                unsigned e = c;

                if (!(bits >> c & 1))
                        continue;
                while (e + 1 < 64 && bits >> (e + 1) & 1)
                        e++;
                n += (size_t)(e == c ? snprintf(buf + n, size - n, "%s%u", n ? "," : "", c) : snprintf(buf + n, size - n, "%s%u-%u", n ? "," : "", c, e));
                c = e;
        }
}

/* ListPolicies, ListProcesses, ListIrqs, ListNetQueues. */
START_TEST(test_api_lists) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h), *other = harness_unique_name(h);
        _cleanup_free_ char *lists = NULL;
        PolicyEntry *pe = NULL;
        ProcessEntry *e = NULL;
        const ProcessEntry *f;
        sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n, n_irqs;
        Child *c, *x;
        sd_bus *b;
        int r;

        lists = xstrdup(harness_write_policy(
                h, "10-lists.yaml",
                "policies:\n"
                "  - name: resolved\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "  - name: pending\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: {near: afdnodev0}\n",
                a, harness_unique_name(h)));
        harness_start_daemon(h);
        b = connect_bus(h);

        /* ListPolicies: every policy in file order, the pending one with its reason. */
        n = harness_list_policies(h, &pe);
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(pe[0].name, "integ-marker");
        ck_assert_str_eq(pe[0].cpus, "0");
        ck_assert_str_eq(pe[1].name, "resolved");
        ck_assert_str_eq(pe[1].file, lists);
        ck_assert_uint_eq(pe[1].line, 2);
        ck_assert_str_eq(pe[1].cpus, "1");
        ck_assert_str_eq(pe[1].pending_reason, "");
        ck_assert_str_eq(pe[2].name, "pending");
        ck_assert_str_eq(pe[2].file, lists);
        ck_assert_uint_eq(pe[2].line, 5);
        ck_assert_str_eq(pe[2].cpus, "");
        ck_assert_msg(
                strstr(pe[2].pending_reason, "afdnodev0"),
                "the pending reason \"%s\" does not name the device", pe[2].pending_reason);
        policy_entries_free(pe, n);

        /* ListProcesses: the matched process with what was applied; not the unmatched one. */
        c = harness_spawn_threads(h, a, 1, "0");
        x = harness_spawn_threads(h, other, 1, "0");
        harness_wait_listed(h, c->pid, "resolved");
        harness_barrier(h);
        n = harness_list_processes(h, &e);
        f = process_entries_find(e, n, c->pid);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->comm, a);
        ck_assert_str_eq(f->policy, "resolved");
        ck_assert_str_eq(f->cpus, "1");
        ck_assert_msg(!process_entries_find(e, n, x->pid), "the unmatched %d is listed", (int)x->pid);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(
                        streq(e[i].policy, "resolved") || streq(e[i].policy, "integ-marker"),
                        "%d listed under policy \"%s\"", (int)e[i].pid, e[i].policy);
        process_entries_free(e, n);

        /* ListIrqs: the numeric IRQs of /proc/interrupts, in order; no rule covers any. */
        n_irqs = proc_irq_numbers(&irqs);
        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListIrqs", &error,
                &reply, NULL);
        ck_assert_msg(r >= 0, "ListIrqs failed: %s: %s", strna(error.name), strna(error.message));
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(ussssss)"), 0);
        n = 0;
        for (;;) {
                const char *name, *rule, *req, *eff, *state, *reason;
                uint32_t irq;

                r = sd_bus_message_read(reply, "(ussssss)", &irq, &name, &rule, &req, &eff, &state, &reason);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        break;
                ck_assert_msg(n < n_irqs, "ListIrqs has more IRQs than /proc/interrupts (%zu)", n_irqs);
                ck_assert_msg(
                        irqs[n] == irq, "ListIrqs entry %zu is IRQ %u, /proc/interrupts has %u", n, irq,
                        irqs[n]);
                ck_assert_msg(streq(rule, ""), "IRQ %u under rule \"%s\" with no irqs: rules", irq, rule);
                ck_assert_msg(
                        streq(state, "unmanaged") || streq(state, "managed"),
                        "IRQ %u in state \"%s\" with no irqs: rules", irq, state);
                n++;
        }
        ck_assert_uint_eq(n, n_irqs);
        reply = sd_bus_message_unref(reply);

        /* ListNetQueues: eth0's rx-0 rps row holds what rx-0/rps_cpus holds. */
        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListNetQueues", &error,
                &reply, NULL);
        ck_assert_msg(r >= 0, "ListNetQueues failed: %s: %s", strna(error.name), strna(error.message));
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(ssssuss)"), 0);
        {
                bool seen_eth0 = false;

                for (;;) {
                        const char *dev, *queue, *kind, *cpus, *rule, *state;
                        uint32_t flows;
                        char qpath[512], list[256];
                        _cleanup_free_ char *mask = NULL;

                        r = sd_bus_message_read(
                                reply, "(ssssuss)", &dev, &queue, &kind, &cpus, &flows, &rule, &state);
                        ck_assert_int_ge(r, 0);
                        if (r == 0)
                                break;
                        snprintf(
                                qpath, sizeof qpath, "/sys/class/net/%s/queues/%s/%s_cpus", dev, queue,
                                kind);
                        ck_assert_msg(
                                streq(kind, strncmp(queue, "rx-", 3) == 0 ? "rps" : "xps"),
                                "%s %s has kind %s", dev, queue, kind);
                        ck_assert_msg(
                                streq(rule, ""), "%s %s under rule \"%s\" with no net: rules", dev, queue,
                                rule);
                        if (!streq(dev, "eth0") || !streq(queue, "rx-0"))
                                continue;
                        seen_eth0 = true;
                        mask = read_line(qpath);
                        ck_assert_msg(mask, "%s: %s", qpath, strerror(errno));
                        mask_to_list(mask, list, sizeof list);
                        ck_assert_msg(
                                streq(cpus, list), "eth0 rx-0 rps: \"%s\", %s holds %s (\"%s\")", cpus,
                                qpath, mask, list);
                }
                ck_assert_msg(seen_eth0, "ListNetQueues has no eth0 rx-0 rps row");
        }
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(b);
}
END_TEST

/* Explain: a matched process, an unmatched one, a free PID. */
START_TEST(test_api_explain) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h), *first = harness_unique_name(h),
                   *other = harness_unique_name(h);
        const char *tname = harness_unique_name(h);
        _cleanup_free_ char *glob = xasprintf("%.6s*", name), *needle = NULL, *line = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Explanation e = {};
        pid_t renamed, spawned, nopid;
        PolicyEntry *pe = NULL;
        Child *c, *x;
        size_t n;
        sd_bus *b;
        int r;

        harness_write_policy(
                h, "10-first.yaml",
                "policies:\n"
                "  - name: first\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"0\"\n",
                first);
        harness_write_policy(
                h, "20-second.yaml",
                "policies:\n"
                "  - name: second\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "    threads:\n"
                "      - name: \"%s\"\n"
                "        cpus: \"0\"\n",
                glob, tname);
        harness_start_daemon(h);
        b = connect_bus(h);

        c = harness_spawn_threads(h, name, 2, "0");
        child_send(c, "rename %s", tname);
        line = child_expect_line(c);
        ck_assert_int_eq(sscanf(line, "renamed %d", &renamed), 1);
        harness_wait_process_cpus_by_name(h, c->pid, tname, "0", "1", 4);
        harness_wait_listed(h, c->pid, "second");
        /* Wake the leader (it reads the command on CPU 1 now) and start one more thread there. */
        child_send(c, "spawn 1");
        free(line);
        line = child_expect_line(c);
        ck_assert_int_eq(sscanf(line, "spawned %d", &spawned), 1);
        harness_wait_process_cpus_by_name(h, c->pid, tname, "0", "1", 5);

        r = explain(b, c->pid, &e, &error);
        ck_assert_msg(
                r >= 0, "Explain(%d) failed: %s: %s", (int)c->pid, strna(error.name), strna(error.message));
        ck_assert_str_eq(e.comm, name);
        ck_assert_str_eq(e.policy, "second");
        ck_assert_str_eq(e.cpus, "1");
        {
                _cleanup_free_ char *text = strv_text(e.lines);

                needle = xasprintf("comm \"%s\" matches \"%s\"", name, glob);
                ck_assert_msg(
                        lines_contain(e.lines, needle), "the explanation %s does not say %s", text, needle);
                ck_assert_msg(
                        lines_contain(e.lines, "20-second.yaml:2"),
                        "the explanation %s does not name 20-second.yaml:2", text);
        }
        /* Unmatched: the policies before the matching one, in order, each with why not. */
        ck_assert_uint_eq(e.n_unmatched, 2);
        ck_assert_str_eq(e.unmatched_policy[0], "integ-marker");
        ck_assert_str_eq(e.unmatched_policy[1], "first");
        free(needle);
        needle = xasprintf("comm \"%s\" does not match \"%s\"", name, first);
        ck_assert_msg(
                strstr(e.unmatched_why[1], needle), "why first did not match: \"%s\", expected %s",
                e.unmatched_why[1], needle);
        ck_assert_msg(
                strstr(e.unmatched_why[0], "does not match"), "why integ-marker did not match: \"%s\"",
                e.unmatched_why[0]);

        /* Threads: exactly /proc/PID/task, with what was applied and what the kernel says now. */
        assert_thread_rows(c->pid, &e);
        for (size_t i = 0; i < e.n_threads; i++) {
                const ThreadRow *t = &e.threads[i];
                bool is_renamed = t->tid == (uint32_t)renamed;

                ck_assert_msg(
                        streq(t->rule, is_renamed ? tname : ""), "thread %u (%s): rule \"%s\"", t->tid,
                        t->comm, t->rule);
                ck_assert_msg(
                        streq(t->applied, is_renamed ? "0" : "1"), "thread %u (%s): applied \"%s\"", t->tid,
                        t->comm, t->applied);
        }
        /* The leader and the new thread ran after the placement: on a CPU of their set. */
        ck_assert_msg(
                cpu_in_list(thread_row(&e, c->pid)->last_cpu, "1"), "the leader last ran on %u",
                thread_row(&e, c->pid)->last_cpu);
        ck_assert_msg(
                cpu_in_list(thread_row(&e, spawned)->last_cpu, "1"), "the new thread last ran on %u",
                thread_row(&e, spawned)->last_cpu);
        explanation_done(&e);

        /* A thread ID (as top -H or ps -L show it): its process is explained, and it says so. */
        r = explain(b, spawned, &e, &error);
        ck_assert_msg(
                r >= 0, "Explain(%d) failed: %s: %s", spawned, strna(error.name), strna(error.message));
        ck_assert_str_eq(e.comm, name);
        ck_assert_str_eq(e.policy, "second");
        {
                _cleanup_free_ char *text = strv_text(e.lines),
                                    *thread =
                                            xasprintf("%d is a thread of process %d", spawned, (int)c->pid);
                ck_assert_msg(
                        lines_contain(e.lines, thread), "the explanation %s does not say %s", text, thread);
        }
        assert_thread_rows(c->pid, &e);
        explanation_done(&e);

        /* An unmatched process: no policy, a "not managed" line, every policy with why not. */
        x = harness_spawn_threads(h, other, 1, NULL);
        harness_barrier(h);
        r = explain(b, x->pid, &e, &error);
        ck_assert_msg(
                r >= 0, "Explain(%d) failed: %s: %s", (int)x->pid, strna(error.name), strna(error.message));
        ck_assert_str_eq(e.comm, other);
        ck_assert_str_eq(e.policy, "");
        ck_assert_str_eq(e.cpus, "");
        {
                _cleanup_free_ char *text = strv_text(e.lines);
                ck_assert_msg(
                        lines_contain(e.lines, "not managed"),
                        "the explanation %s has no \"not managed\" line", text);
        }
        n = harness_list_policies(h, &pe);
        ck_assert_uint_eq(e.n_unmatched, n);
        for (size_t i = 0; i < n; i++) {
                ck_assert_str_eq(e.unmatched_policy[i], pe[i].name);
                ck_assert_msg(
                        strstr(e.unmatched_why[i], "does not match"), "why %s did not match: \"%s\"",
                        pe[i].name, e.unmatched_why[i]);
        }
        policy_entries_free(pe, n);
        assert_thread_rows(x->pid, &e);
        for (size_t i = 0; i < e.n_threads; i++) {
                ck_assert_str_eq(e.threads[i].rule, "");
                ck_assert_str_eq(e.threads[i].applied, "");
        }
        explanation_done(&e);

        /* A PID nobody has. */
        nopid = free_pid();
        r = explain(b, nopid, &e, &error);
        ck_assert_msg(r < 0, "Explain(%d) of a free PID succeeded", (int)nopid);
        ck_assert_str_eq(error.name, "org.affinityd1.Error.NoSuchProcess");
        free(needle);
        needle = xasprintf("No process %d", (int)nopid);
        ck_assert_msg(strstr(error.message, needle), "NoSuchProcess message \"%s\"", error.message);

        sd_bus_flush_close_unref(b);
}
END_TEST

/* Why Explain says the policy named name did not match, or NULL if it does not list it. */
static const char *unmatched_why(const Explanation *e, const char *name) {
        for (size_t i = 0; i < e->n_unmatched; i++)
                if (streq(e->unmatched_policy[i], name))
                        return e->unmatched_why[i];
        return NULL;
}

/*
 * Explain of a kernel thread (kthreadd, PID 2) and of the daemon itself, under glob policies
 * that match their comm: neither is placed by a glob, so Explain names no policy and says
 * why each glob policy was not considered, as matching does (match_process(), explicit only).
 */
START_TEST(test_api_explain_explicit_only) {
        Harness *h = harness_new();
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Explanation e = {};
        const char *why;
        sd_bus *b;
        char comm[64] = "";
        _cleanup_fclose_ FILE *f = fopen("/proc/2/comm", "re");

        ck_assert_msg(f && fgets(comm, sizeof(comm), f), "can't read /proc/2/comm");
        comm[strcspn(comm, "\n")] = '\0';
        ck_assert_str_eq(comm, "kthreadd");
        harness_write_policy(
                h, "50-globs.yaml",
                "policies:\n"
                "  - name: kthread-glob\n"
                "    match: {comm: \"kthread*\"}\n"
                "    cpus: \"0\"\n"
                "  - name: self-glob\n"
                "    match: {comm: \"affinity?\", cmdline: \"--config-dir=%s( |$)\"}\n"
                "    cpus: \"0\"\n",
                harness_config_dir(h));
        harness_start_daemon(h);
        b = connect_bus(h);

        ck_assert_msg(explain(b, 2, &e, &error) >= 0, "Explain(2): %s", error.message);
        ck_assert_str_eq(e.policy, "");
        why = unmatched_why(&e, "kthread-glob");
        ck_assert_msg(
                why && strstr(why, "not considered: a kernel thread"), "why kthread-glob: \"%s\"",
                strna(why));
        explanation_done(&e);

        ck_assert_msg(
                explain(b, harness_daemon_pid(h), &e, &error) >= 0, "Explain(daemon): %s", error.message);
        ck_assert_str_eq(e.policy, "");
        why = unmatched_why(&e, "self-glob");
        ck_assert_msg(
                why && strstr(why, "not considered: affinityd itself"), "why self-glob: \"%s\"", strna(why));
        explanation_done(&e);
        sd_bus_flush_close_unref(b);
}
END_TEST

/* The read(2)-like system calls thread tid has made ("syscr:" of /proc/PID/task/TID/io). */
static uint64_t task_syscr(pid_t pid, pid_t tid) {
        _cleanup_free_ char *path = xasprintf("/proc/%d/task/%d/io", (int)pid, (int)tid);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[128];

        ck_assert_msg(f, "%s: %m", path);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "syscr: ", 7) == 0)
                        return strtoull(line + 7, NULL, 10);
        ck_abort_msg("no syscr: in %s", path);
        return 0;
}

/* The daemon's worker thread (comm "affinityd-work"): its TID. */
static pid_t daemon_worker_tid(pid_t daemon) {
        _cleanup_free_ TaskInfo *tasks = NULL;
        int n = harness_read_tasks(daemon, &tasks);

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path =
                        xasprintf("/proc/%d/task/%d/comm", (int)daemon, (int)tasks[i].tid);
                _cleanup_free_ char *comm = read_line(path);

                if (comm && streq(comm, "affinityd-work"))
                        return tasks[i].tid;
        }
        ck_abort_msg("the daemon (%d) has no thread affinityd-work", (int)daemon);
        return -1;
}

/*
 * Explain of a process with many threads is answered in steps (placement runs between them:
 * daemon/manager-bus-explain.c), and the answer is still whole: one row per thread. The per-thread /proc
 * reads (comm, stat, sched, schedstat, status: five or more each) are done on the worker thread
 * (at nice 19), not the loop's: while 301 threads are explained the worker makes over 3 reads per
 * thread, and the loop fewer than the worker (its eventfd, other processes' events, and the
 * placement's baseline pass that may still be sampling the threads: two reads each). Counted by the kernel
 * ("syscr" of /proc/PID/task/TID/io); CPU time would not do: under valgrind the loop's own code runs 50
 * times slower, the kernel's not.
 */
START_TEST(test_api_explain_many_threads) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Explanation e = {};
        Child *c, *other;
        uint64_t loop_reads, worker_reads;
        pid_t daemon, worker;
        sd_bus *b;

        harness_write_policy(
                h, "20-many.yaml",
                "policies:\n"
                "  - name: many\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);
        b = connect_bus(h);
        c = harness_spawn_threads(h, name, 300, "0");
        harness_wait_process_cpus(h, c->pid, "1", 301);
        daemon = harness_daemon_pid(h);
        worker = daemon_worker_tid(daemon);
        ck_assert_int_eq(task_stat_field(daemon, worker, 19), 19); /* nice */
        loop_reads = task_syscr(daemon, daemon);
        worker_reads = task_syscr(daemon, worker);
        ck_assert_msg(explain(b, c->pid, &e, &error) >= 0, "Explain: %s", error.message);
        loop_reads = task_syscr(daemon, daemon) - loop_reads;
        worker_reads = task_syscr(daemon, worker) - worker_reads;
        ck_assert_msg(
                worker_reads > 3 * 301 && loop_reads < worker_reads,
                "Explain of 301 threads: %" PRIu64 " reads on the worker, %" PRIu64 " on the loop",
                worker_reads, loop_reads);
        ck_assert_str_eq(e.policy, "many");
        assert_thread_rows(c->pid, &e);
        ck_assert_uint_eq(e.n_threads, 301);
        explanation_done(&e);
        /* Placement goes on meanwhile: a process started while the next Explain is answered. */
        other = harness_spawn_threads(h, name, 2, "0");
        ck_assert_msg(explain(b, c->pid, &e, &error) >= 0, "Explain: %s", error.message);
        harness_wait_process_cpus(h, other->pid, "1", 3);
        explanation_done(&e);
        sd_bus_flush_close_unref(b);
}
END_TEST

/* ---- the bus during an event storm ---- */

/* Forks children that exit at once, as fast as it can, counting them in *count; never returns. */
static __attribute__((__noreturn__)) void storm_main(uint64_t *count) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) {
                pid_t pid = fork();

                if (pid == 0)
                        _exit(0);
                if (pid > 0) {
                        (void)waitpid(pid, NULL, 0);
                        __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
                }
        }
}

static int on_events_received(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        uint64_t *ret = userdata;

        ck_assert_msg(
                !sd_bus_message_is_method_error(reply, NULL), "Get(EventsReceived) failed: %s",
                sd_bus_message_get_error(reply)->message);
        ck_assert_int_ge(sd_bus_message_read(reply, "v", "t", ret), 0);
        return 0;
}

/*
 * The bus is served after the proc connector (daemon/manager-bus.h, AFFINITYD_BUS_EVENT_PRIORITY),
 * but not only once the events let up: while they keep coming, a timer above them processes one
 * bus message every 100 ms. With the daemon stopped, a storm of forks queues thousands of events
 * on its socket; a call sent then is answered before the daemon has received them all (without
 * the timer it would be answered only once none is left).
 */
START_TEST(test_api_served_during_storm) {
        Harness *h = harness_new();
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        uint64_t *forks, backlog, answered = UINT64_MAX;
        ManagerProps before, after;
        pid_t storm;
        sd_bus *b;

        forks = mmap(NULL, sizeof(*forks), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ck_assert(forks != MAP_FAILED);
        *forks = 0;
        harness_start_daemon(h);
        b = connect_bus(h);
        ck_assert_int_ge(sd_bus_get_unique_name(b, &(const char *){NULL}), 0); /* authenticated, named */
        harness_get_props(h, &before);
        harness_pause_daemon(h);
        storm = fork();
        ck_assert_int_ge(storm, 0);
        if (storm == 0)
                storm_main(forks);
        /* A fork and an exit event each: a backlog of 8,000 (under 8 MiB of socket buffer). */
        while (__atomic_load_n(forks, __ATOMIC_RELAXED) < 4000)
                usleep(1000);
        ck_assert_int_ge(
                sd_bus_call_method_async(
                        b, &slot, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, "org.freedesktop.DBus.Properties",
                        "Get", on_events_received, &answered, "ss", AFFINITYD_BUS_INTERFACE,
                        "EventsReceived"),
                0);
        ck_assert_int_ge(sd_bus_flush(b), 0);
        backlog = 2 * __atomic_load_n(forks, __ATOMIC_RELAXED);
        harness_resume_daemon(h);
        for (unsigned i = 0; i < 6000 && answered == UINT64_MAX; i++) {
                ck_assert_int_ge(sd_bus_process(b, NULL), 0);
                if (answered == UINT64_MAX)
                        ck_assert_int_ge(sd_bus_wait(b, 10 * 1000), 0);
        }
        ck_assert_msg(answered != UINT64_MAX, "Get was not answered in 60 s");
        kill(storm, SIGKILL);
        (void)waitpid(storm, NULL, 0);
        harness_get_props(h, &after);
        ck_assert_msg(
                after.events_lost == before.events_lost, "%" PRIu64 " events were lost",
                after.events_lost - before.events_lost);
        ck_assert_msg(
                answered - before.events_received < backlog,
                "answered after %" PRIu64 " events, a backlog of at least %" PRIu64 " was queued",
                answered - before.events_received, backlog);
        manager_props_done(&before);
        manager_props_done(&after);
        munmap(forks, sizeof(*forks));
        sd_bus_flush_close_unref(b);
}
END_TEST

START_TEST(test_api_reload_signals) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *bad_message = NULL;
        sd_bus_message *m;
        Signals s = {};
        Props p0 = {}, p = {};
        bool yes = true, no = false;
        const char *comm, *policy, *cpus, *err;
        uint32_t pid;
        int ok, r;
        Child *c;

        harness_write_policy(
                h, "10-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);
        signals_subscribe(h, &s);

        /* ProcessPlaced: once per process (3 threads), with what was applied. */
        c = harness_spawn_threads(h, name, 2, "0");
        m = signals_wait(h, &s, "ProcessPlaced", pid_is, &c->pid);
        ck_assert_int_gt(sd_bus_message_read(m, "usss", &pid, &comm, &policy, &cpus), 0);
        ck_assert_str_eq(comm, name);
        ck_assert_str_eq(policy, "web");
        ck_assert_str_eq(cpus, "1");
        sd_bus_message_unref(m);
        /* The signal follows the exec's placement pass; threads the process starts right after
         * it are placed as the kernel reports them (no further signal): wait for them. */
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_barrier(h); /* its ProcessPlaced comes after everything about c */
        sd_bus_message_unref(signals_wait(h, &s, "ProcessPlaced", policy_is, "integ-marker"));
        ck_assert_uint_eq(signals_count(&s, "ProcessPlaced", pid_is, &c->pid), 0);

        /* A good reload: Reloaded(true, ""). */
        manager_props(s.bus, &p0);
        call_ok(h, s.bus, "Reload");
        m = signals_wait(h, &s, "Reloaded", reloaded_is, &yes);
        ck_assert_int_gt(sd_bus_message_read(m, "bs", &ok, &err), 0);
        ck_assert_str_eq(err, "");
        sd_bus_message_unref(m);
        /* PropertiesChanged for Reloads, with LastReloadUSec (one signal or two). */
        m = signals_wait(h, &s, "PropertiesChanged", changes_property, "Reloads");
        if (!changes_property(m, "LastReloadUSec")) {
                sd_bus_message_unref(m);
                m = signals_wait(h, &s, "PropertiesChanged", changes_property, "LastReloadUSec");
        }
        sd_bus_message_unref(m);

        /* A bad one: InvalidPolicy with the place, Reloaded(false, same text), LastReloadError,
         * State degraded (with a reason) — and the old configuration still in force. */
        harness_write_policy(
                h, "30-broken.yaml",
                "policies:\n"
                "  - name: broken\n"
                "    match:\n"
                "      comm: x\n"
                "    cpus: \"0-\"\n");
        r = call_void(s.bus, "Reload", &error);
        ck_assert_msg(r < 0, "Reload of a broken configuration succeeded");
        ck_assert_str_eq(error.name, "org.affinityd1.Error.InvalidPolicy");
        ck_assert_msg(
                strstr(error.message, "30-broken.yaml:5:"), "InvalidPolicy message: %s", error.message);
        bad_message = xstrdup(error.message);
        m = signals_wait(h, &s, "Reloaded", reloaded_is, &no);
        ck_assert_int_gt(sd_bus_message_read(m, "bs", &ok, &err), 0);
        ck_assert_msg(
                streq(err, bad_message), "Reloaded(false, \"%s\"), the error said \"%s\"", err, bad_message);
        sd_bus_message_unref(m);
        sd_bus_message_unref(signals_wait(h, &s, "PropertiesChanged", changes_property, "LastReloadError"));
        sd_bus_message_unref(signals_wait(h, &s, "PropertiesChanged", changes_property, "State"));
        manager_props(s.bus, &p);
        ck_assert_str_eq(props_str(&p, "LastReloadError"), bad_message);
        ck_assert_str_eq(props_str(&p, "State"), "degraded");
        ck_assert_msg(
                strv_len(props_strv(&p, "DegradedReasons")) >= 1, "State degraded without DegradedReasons");
        ck_assert_uint_gt(props_t(&p, "LastReloadUSec"), props_t(&p0, "LastReloadUSec"));
        /* The old configuration: the same files, the process still placed under web. */
        {
                char **a = props_strv(&p0, "PolicyFiles"), **b = props_strv(&p, "PolicyFiles");
                _cleanup_free_ char *ta = strv_text(a), *tb = strv_text(b);
                ck_assert_msg(
                        strv_len(a) == strv_len(b), "PolicyFiles changed by a failed reload: %s -> %s", ta,
                        tb);
        }
        harness_wait_listed(h, c->pid, "web");
        harness_assert_process_cpus_now(c->pid, "1", 3);
        props_done(&p);

        /* Fixed: Reloaded(true, ""), running again, no reasons, no error. */
        harness_remove_policy(h, "30-broken.yaml");
        call_ok(h, s.bus, "Reload");
        m = signals_wait(h, &s, "Reloaded", reloaded_is, &yes);
        sd_bus_message_unref(m);
        manager_props(s.bus, &p);
        ck_assert_str_eq(props_str(&p, "State"), "running");
        ck_assert_uint_eq(strv_len(props_strv(&p, "DegradedReasons")), 0);
        ck_assert_str_eq(props_str(&p, "LastReloadError"), "");
        props_done(&p);
        props_done(&p0);
        signals_done(&s);
}
END_TEST

static char *make_cgroup(void) {
        char *dir = NULL;

        if (access(CPUSET_ROOT, F_OK) < 0)
                return NULL;
        dir = xasprintf("%s/%s", CPUSET_ROOT, cgroup_name);
        ck_assert_msg(mkdir(dir, 0755) >= 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
        return dir;
}

static void remove_cgroup(void) {
        char dir[PATH_MAX];

        snprintf(dir, sizeof dir, "%s/%s", CPUSET_ROOT, cgroup_name);
        for (int i = 0; i < 500 && rmdir(dir) < 0 && errno == EBUSY; i++)
                usleep(10 * 1000);
}

/* PlacementFailed: a process in a cpuset cgroup of CPU 0 under a policy of CPU 1. */
/*
 * The per-event signals go out only while a connection is subscribed (Subscribe()): matches
 * alone don't ask for them. A process placed with nobody subscribed sends no ProcessPlaced; one
 * placed while another connection is subscribed does (to every listener); after Unsubscribe(),
 * and after a subscriber's connection closes, none again. Reloaded, rare, always goes out: it
 * also tells that everything before it was sent.
 */
START_TEST(test_api_signals_need_subscriber) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        bool yes = true;
        Signals s = {};
        sd_bus *sub;
        Child *c;

        harness_write_policy(
                h, "10-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);
        signals_listen(h, &s);

        /* Nobody subscribed: placed, listed, and no ProcessPlaced before the Reloaded after it. */
        c = harness_spawn_threads(h, name, 0, "0");
        harness_wait_process_cpus(h, c->pid, "1", 1);
        harness_wait_listed(h, c->pid, "web");
        call_ok(h, s.bus, "Reload");
        sd_bus_message_unref(signals_wait(h, &s, "Reloaded", reloaded_is, &yes));
        ck_assert_uint_eq(signals_count(&s, "ProcessPlaced", pid_is, &c->pid), 0);

        /* Another connection subscribes: the listener gets them too. Subscribing twice is one
         * subscription. */
        sub = connect_bus(h);
        call_ok(h, sub, "Subscribe");
        call_ok(h, sub, "Subscribe");
        c = harness_spawn_threads(h, name, 0, "0");
        sd_bus_message_unref(signals_wait(h, &s, "ProcessPlaced", pid_is, &c->pid));

        /* Unsubscribed: none again. */
        call_ok(h, sub, "Unsubscribe");
        c = harness_spawn_threads(h, name, 0, "0");
        harness_wait_process_cpus(h, c->pid, "1", 1);
        harness_wait_listed(h, c->pid, "web");
        call_ok(h, s.bus, "Reload");
        sd_bus_message_unref(signals_wait(h, &s, "Reloaded", reloaded_is, &yes));
        ck_assert_uint_eq(signals_count(&s, "ProcessPlaced", pid_is, &c->pid), 0);

        /* Subscribed again, then the connection closes without a word: the daemon notices (the
         * bus tells it the name is gone). A placement that still sends a signal shows the daemon
         * has not seen it yet; one that sends none shows it has: at most 50 tries. */
        call_ok(h, sub, "Subscribe");
        c = harness_spawn_threads(h, name, 0, "0");
        sd_bus_message_unref(signals_wait(h, &s, "ProcessPlaced", pid_is, &c->pid));
        sub = sd_bus_flush_close_unref(sub);
        for (unsigned i = 0;; i++) {
                ck_assert_msg(i < 50, "ProcessPlaced still sent after the subscriber went away");
                c = harness_spawn_threads(h, name, 0, "0");
                harness_wait_process_cpus(h, c->pid, "1", 1);
                harness_wait_listed(h, c->pid, "web");
                call_ok(h, s.bus, "Reload");
                sd_bus_message_unref(signals_wait(h, &s, "Reloaded", reloaded_is, &yes));
                if (signals_count(&s, "ProcessPlaced", pid_is, &c->pid) == 0)
                        break;
        }

        signals_done(&s);
}
END_TEST

START_TEST(test_api_placement_failed) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *dir = make_cgroup(), *path = NULL, *pidtext = NULL;
        ManagerProps before = {}, after = {};
        const char *comm, *policy, *error;
        sd_bus_message *m;
        Signals s = {};
        uint32_t pid;
        Child *c;

        ck_assert_msg(dir, "no v1 cpuset hierarchy at %s", CPUSET_ROOT);
        path = xasprintf("%s/cpuset.cpus", dir);
        harness_write_text(path, "0");
        free(path);
        path = xasprintf("%s/cpuset.mems", dir);
        harness_write_text(path, "0");

        harness_start_daemon(h);
        c = harness_spawn_threads(h, name, 1, "0");
        free(path);
        path = xasprintf("%s/cgroup.procs", dir);
        pidtext = xasprintf("%d", (int)c->pid);
        harness_write_text(path, pidtext);
        harness_get_props(h, &before);
        signals_subscribe(h, &s);

        harness_write_policy(
                h, "10-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                name);
        call_ok(h, s.bus, "Reload");
        m = signals_wait(h, &s, "PlacementFailed", pid_is, &c->pid);
        ck_assert_int_gt(sd_bus_message_read(m, "usss", &pid, &comm, &policy, &error), 0);
        ck_assert_str_eq(comm, name);
        ck_assert_str_eq(policy, "web");
        ck_assert_msg(
                strstr(error, "cgroup"), "PlacementFailed error \"%s\" does not name the cgroup", error);
        sd_bus_message_unref(m);
        harness_assert_process_cpus_now(c->pid, "0", 2);
        harness_get_props(h, &after);
        ck_assert_uint_gt(after.placement_failures, before.placement_failures);
        manager_props_done(&before);
        manager_props_done(&after);
        signals_done(&s);

        child_kill(c);
        remove_cgroup();
}
END_TEST

static bool drift_of(sd_bus_message *m, const void *userdata) {
        const char *kind, *target, *policy, *found, *action;

        ck_assert_msg(
                streq(sd_bus_message_get_signature(m, true), "sssss"), "DriftDetected has signature %s",
                sd_bus_message_get_signature(m, true));
        ck_assert_int_gt(sd_bus_message_read(m, "sssss", &kind, &target, &policy, &found, &action), 0);
        return streq(target, userdata);
}

/* DriftDetected: someone else re-pins a managed thread. */
START_TEST(test_api_drift_signal) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ TaskInfo *tasks = NULL;
        _cleanup_free_ char *target = NULL;
        const char *kind, *tgt, *policy, *found, *action;
        sd_bus_message *m;
        cpu_set_t set;
        Signals s = {};
        pid_t tid;
        Child *c;
        int n;

        write_settings(h, "drift-interval: 100ms\n");
        harness_write_policy(
                h, "10-drift.yaml",
                "policies:\n"
                "  - name: drifty\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "    on-drift: report\n",
                name);
        harness_start_daemon(h);
        c = harness_spawn_threads(h, name, 2, "0-1");
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_wait_listed(h, c->pid, "drifty");
        n = harness_read_tasks(c->pid, &tasks);
        ck_assert_int_eq(n, 3);
        tid = tasks[0].tid == c->pid ? tasks[1].tid : tasks[0].tid;
        signals_subscribe(h, &s);

        CPU_ZERO(&set);
        CPU_SET(0, &set);
        ck_assert_msg(
                sched_setaffinity(tid, sizeof set, &set) == 0, "sched_setaffinity: %s", strerror(errno));
        target = xasprintf("%d/%d", (int)c->pid, (int)tid);
        m = signals_wait(h, &s, "DriftDetected", drift_of, target);
        ck_assert_int_gt(sd_bus_message_read(m, "sssss", &kind, &tgt, &policy, &found, &action), 0);
        ck_assert_str_eq(kind, "thread");
        ck_assert_str_eq(policy, "drifty");
        ck_assert_str_eq(found, "0");
        ck_assert_str_eq(action, "report");
        sd_bus_message_unref(m);
        ck_assert_uint_ge(manager_t(s.bus, "DriftDetected"), 1);
        signals_done(&s);
        child_kill(c);
}
END_TEST

/* The policy objects: enumeration, escaping, properties, and the set after a reload. */
START_TEST(test_api_policy_objects) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *db_path = policy_path("db-primary.1"), *ghost_path = policy_path("ghost");
        _cleanup_free_ char *marker_path = policy_path("integ-marker"), *new_path = policy_path("new one");
        _cleanup_free_ char *file = NULL, *xml = NULL, *node1 = node_of_cpu(1), *out = NULL, *err = NULL;
        _cleanup_free_ char *arg_address = NULL;
        _cleanup_strv_free_ char **nodes = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Props p = {};
        const Prop *pids;
        sd_bus *b;
        Child *c;
        int r;

        ck_assert_str_eq(db_path, AFFINITYD_POLICY_PATH_PREFIX "/db_2dprimary_2e1");
        file = xstrdup(harness_write_policy(
                h, "10-db.yaml",
                "policies:\n"
                "  - name: db-primary.1\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "  - name: ghost\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: {near: afdnodev0}\n",
                name, harness_unique_name(h)));
        harness_start_daemon(h);
        b = connect_bus(h);
        c = harness_spawn_threads(h, name, 1, "0");
        harness_wait_listed(h, c->pid, "db-primary.1");

        /* Enumeration: the child nodes of /org/affinityd1/policy are the escaped names. */
        xml = introspect(b, AFFINITYD_POLICY_PATH_PREFIX);
        nodes = xml_child_nodes(xml);
        {
                _cleanup_free_ char *text = strv_text(nodes);
                ck_assert_msg(
                        strv_len(nodes) == 3 && strv_has(nodes, "db_2dprimary_2e1") &&
                                strv_has(nodes, "ghost") && strv_has(nodes, "integ_2dmarker"),
                        "the nodes below %s are %s", AFFINITYD_POLICY_PATH_PREFIX, text);
        }
        /* busctl tree shows them too. */
        arg_address = xasprintf("--address=%s", harness_bus_address(h));
        r = harness_run(
                h, false, &out, &err, ARGS("busctl", arg_address, "--list", "tree", AFFINITYD_BUS_NAME));
        ck_assert_msg(r == 0, "busctl tree exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, db_path) && strstr(out, ghost_path),
                "busctl tree does not show the policies:\n%s", out);

        /* A resolved policy. */
        props_read(b, db_path, AFFINITYD_POLICY_INTERFACE, &p);
        ck_assert_str_eq(props_str(&p, "Name"), "db-primary.1");
        ck_assert_str_eq(props_str(&p, "File"), file);
        ck_assert_uint_eq(props_get(&p, "Line", "u")->num, 2);
        ck_assert_str_eq(props_str(&p, "Selector"), "1");
        ck_assert_str_eq(props_str(&p, "CPUs"), "1");
        ck_assert_str_eq(props_str(&p, "Nodes"), node1);
        ck_assert_str_eq(props_str(&p, "PendingReason"), "");
        pids = props_get(&p, "MatchedPIDs", "au");
        ck_assert_msg(
                pids->n_au == 1 && pids->au[0] == (uint32_t)c->pid,
                "MatchedPIDs of db-primary.1: %zu PIDs, expected [%d]", pids->n_au, (int)c->pid);
        props_done(&p);

        /* A pending one. */
        props_read(b, ghost_path, AFFINITYD_POLICY_INTERFACE, &p);
        ck_assert_str_eq(props_str(&p, "Name"), "ghost");
        ck_assert_str_eq(props_str(&p, "File"), file);
        ck_assert_uint_eq(props_get(&p, "Line", "u")->num, 5);
        ck_assert_str_eq(props_str(&p, "Selector"), "{ near: afdnodev0 }");
        ck_assert_str_eq(props_str(&p, "CPUs"), "");
        ck_assert_str_eq(props_str(&p, "Nodes"), "");
        ck_assert_msg(
                strstr(props_str(&p, "PendingReason"), "afdnodev0"), "ghost's PendingReason \"%s\"",
                props_str(&p, "PendingReason"));
        ck_assert_uint_eq(props_get(&p, "MatchedPIDs", "au")->n_au, 0);
        props_done(&p);

        /* No object for a name that isn't a policy. */
        r = props_read_full(b, new_path, AFFINITYD_POLICY_INTERFACE, &p, &error);
        ck_assert_msg(r < 0, "%s exists before its policy does", new_path);
        ck_assert_str_eq(error.name, "org.freedesktop.DBus.Error.UnknownObject");
        sd_bus_error_free(&error);

        /* The process exits: no longer among the matched PIDs. */
        child_kill(c);
        harness_barrier(h);
        props_read(b, db_path, AFFINITYD_POLICY_INTERFACE, &p);
        ck_assert_uint_eq(props_get(&p, "MatchedPIDs", "au")->n_au, 0);
        props_done(&p);

        /* A reload replaces the set of objects. */
        harness_write_policy(
                h, "10-db.yaml",
                "policies:\n"
                "  - name: new one\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: {nodes: \"%s\", reserved: allow}\n",
                name, node1);
        call_ok(h, b, "Reload");
        free(xml);
        xml = introspect(b, AFFINITYD_POLICY_PATH_PREFIX);
        strv_free(nodes);
        nodes = xml_child_nodes(xml);
        {
                _cleanup_free_ char *text = strv_text(nodes);
                ck_assert_msg(
                        strv_len(nodes) == 2 && strv_has(nodes, "new_20one") &&
                                strv_has(nodes, "integ_2dmarker"),
                        "the nodes below %s after the reload are %s", AFFINITYD_POLICY_PATH_PREFIX, text);
        }
        r = props_read_full(b, db_path, AFFINITYD_POLICY_INTERFACE, &p, &error);
        ck_assert_msg(r < 0, "%s still exists after a reload removed it", db_path);
        sd_bus_error_free(&error);
        props_read(b, new_path, AFFINITYD_POLICY_INTERFACE, &p);
        ck_assert_str_eq(props_str(&p, "Name"), "new one");
        ck_assert_msg(
                strstr(props_str(&p, "Selector"), "nodes") && props_str(&p, "Selector")[0] == '{',
                "Selector of a mapping: \"%s\"", props_str(&p, "Selector"));
        ck_assert_str_eq(props_str(&p, "PendingReason"), "");
        ck_assert_str_ne(props_str(&p, "CPUs"), "");
        props_done(&p);
        props_read(b, marker_path, AFFINITYD_POLICY_INTERFACE, &p);
        ck_assert_str_eq(props_str(&p, "Name"), "integ-marker");
        props_done(&p);

        sd_bus_flush_close_unref(b);
}
END_TEST

/* Rescan in --topology mode (planning against another machine): NotSupported. */
START_TEST(test_api_rescan_not_supported) {
        Harness *h = harness_new();
        const char *corpus = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *xml = NULL, *arg = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *b;
        int r;

        ck_assert_msg(corpus, "AFFINITYD_CORPUS is not set");
        xml = xasprintf("%s/topologies/16amd64-8n2c-cpusets.xml", corpus);
        arg = xasprintf("--topology=%s", xml);
        harness_start_daemon_with(h, &(DaemonOptions){.args = ARGS(arg)});
        b = connect_bus(h);
        r = call_void(b, "Rescan", &error);
        ck_assert_msg(r < 0, "Rescan in --topology mode succeeded");
        ck_assert_str_eq(error.name, "org.affinityd1.Error.NotSupported");
        sd_bus_flush_close_unref(b);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-api");
        int r;

        snprintf(cgroup_name, sizeof cgroup_name, "affinityd-integ-api-%d", (int)getpid());
        harness_add_test(s, test_api_introspection);
        harness_add_test(s, test_api_properties);
        harness_add_test(s, test_api_reserve_selector);
        harness_add_test(s, test_api_lists);
        harness_add_test(s, test_api_explain);
        harness_add_test(s, test_api_explain_many_threads);
        harness_add_test(s, test_api_explain_explicit_only);
        harness_add_test(s, test_api_served_during_storm);
        harness_add_test(s, test_api_reload_signals);
        harness_add_test(s, test_api_signals_need_subscriber);
        harness_add_test(s, test_api_placement_failed);
        harness_add_test(s, test_api_drift_signal);
        harness_add_test(s, test_api_policy_objects);
        harness_add_test(s, test_api_rescan_not_supported);
        r = harness_main(s);

        /* Whatever a failed test left: its processes died with it (PR_SET_PDEATHSIG). */
        remove_cgroup();
        return r;
}
