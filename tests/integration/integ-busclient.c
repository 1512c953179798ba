/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A D-Bus client for the integration suite's access tests, run as another user (through
 * setpriv(1)), so that the test sees the exact error name and message a caller gets. Usage:
 *
 *   integ-busclient ADDRESS ACTION...
 *
 * Connects to the bus at ADDRESS and runs every ACTION (one argument each, words separated by
 * single spaces) against org.affinityd1, printing one line per action:
 *
 *   get PATH INTERFACE PROPERTY     -> "OK SIGNATURE VALUE" (s, u, t, b, as joined by ',')
 *   getall PATH INTERFACE           -> "OK N NAME,NAME,..."
 *   call PATH INTERFACE MEMBER [U]  -> "OK SIGNATURE N S0|S1": the reply's signature, the
 *                                      element count of its first argument if that is an array
 *                                      (else 0), and its leading string arguments (at most 2);
 *                                      U: one uint32 argument
 *   introspect PATH                 -> "OK NODE,NODE,..." (the child nodes)
 *   own NAME                        -> "OK RESULT" (RequestName's answer); releases it again
 *
 * or "ERR ERROR-NAME\tMESSAGE" when the call fails. Exits 0 once every action ran (whatever
 * their answers), 1 when it can't connect, 2 on bad usage.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-names.h"

static void print_error(const sd_bus_error *e, int r) {
        printf("ERR %s\t%s\n", e->name ? e->name : "(errno)", e->message ? e->message : strerror(-r));
}

static int split(char *s, char **words, int max) {
        int n = 0;

        for (char *save = NULL, *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                if (n == max)
                        return -1;
                words[n++] = t;
        }
        return n;
}

/* Prints the value at the reply's read position (a variant's content of type sig). */
static int print_value(sd_bus_message *m, const char *sig) {
        int r;

        switch (sig[0]) {
        case 's': {
                const char *s;
                r = sd_bus_message_read_basic(m, 's', &s);
                if (r >= 0)
                        printf("%s", s);
                return r;
        }
        case 'u': {
                uint32_t u;
                r = sd_bus_message_read_basic(m, 'u', &u);
                if (r >= 0)
                        printf("%" PRIu32, u);
                return r;
        }
        case 't': {
                uint64_t t;
                r = sd_bus_message_read_basic(m, 't', &t);
                if (r >= 0)
                        printf("%" PRIu64, t);
                return r;
        }
        case 'b': {
                int b;
                r = sd_bus_message_read_basic(m, 'b', &b);
                if (r >= 0)
                        printf("%s", b ? "true" : "false");
                return r;
        }
        case 'a':
                if (sig[1] == 's') {
                        char **l = NULL;
                        r = sd_bus_message_read_strv(m, &l);
                        if (r < 0)
                                return r;
                        for (size_t i = 0; l && l[i]; i++) {
                                printf("%s%s", i ? "," : "", l[i]);
                                free(l[i]);
                        }
                        free(l);
                        return 0;
                }
                /* fall through */
        default:
                printf("(%s)", sig);
                return sd_bus_message_skip(m, sig);
        }
}

static void do_get(sd_bus *b, char **w) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *contents = NULL;
        char type;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, w[0], "org.freedesktop.DBus.Properties", "Get", &e, &reply, "ss",
                w[1], w[2]);
        if (r < 0) {
                print_error(&e, r);
                sd_bus_error_free(&e);
                return;
        }
        r = sd_bus_message_peek_type(reply, &type, &contents);
        if (r > 0 && type == 'v' && sd_bus_message_enter_container(reply, 'v', contents) > 0) {
                printf("OK %s ", contents);
                r = print_value(reply, contents);
                printf("\n");
        } else
                printf("ERR bad-reply\tnot a variant\n");
        sd_bus_message_unref(reply);
}

static void do_getall(sd_bus *b, char **w) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        char names[16384] = "";
        size_t len = 0;
        unsigned n = 0;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, w[0], "org.freedesktop.DBus.Properties", "GetAll", &e, &reply, "s",
                w[1]);
        if (r < 0) {
                print_error(&e, r);
                sd_bus_error_free(&e);
                return;
        }
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *name;

                r = sd_bus_message_read_basic(reply, 's', &name);
                if (r < 0)
                        break;
                if (len < sizeof names)
                        len += snprintf(names + len, sizeof names - len, "%s%s", n ? "," : "", name);
                n++;
                r = sd_bus_message_skip(reply, "v");
                if (r < 0)
                        break;
                r = sd_bus_message_exit_container(reply);
        }
        if (r < 0)
                printf("ERR bad-reply\t%s\n", strerror(-r));
        else
                printf("OK %u %s\n", n, names);
        sd_bus_message_unref(reply);
}

static void do_call(sd_bus *b, char **w, int n_words) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *sig;
        unsigned count = 0, n_strings = 0;
        char strings[4096] = "";
        size_t len = 0;
        int r;

        if (n_words == 4)
                r = sd_bus_call_method(
                        b, AFFINITYD_BUS_NAME, w[0], w[1], w[2], &e, &reply, "u",
                        (uint32_t)strtoul(w[3], NULL, 10));
        else
                r = sd_bus_call_method(b, AFFINITYD_BUS_NAME, w[0], w[1], w[2], &e, &reply, NULL);
        if (r < 0) {
                print_error(&e, r);
                sd_bus_error_free(&e);
                return;
        }
        sig = sd_bus_message_get_signature(reply, true);
        if (sig[0] == 'a') {
                char type;
                const char *contents;

                r = sd_bus_message_peek_type(reply, &type, &contents);
                if (r > 0 && sd_bus_message_enter_container(reply, 'a', contents) > 0) {
                        while ((r = sd_bus_message_skip(reply, contents)) > 0)
                                count++;
                }
        } else
                for (const char *p = sig; *p == 's' && n_strings < 2; p++) {
                        const char *s;
                        if (sd_bus_message_read_basic(reply, 's', &s) < 0)
                                break;
                        len += snprintf(
                                strings + len, sizeof strings - len, "%s%s", n_strings ? "|" : "", s);
                        n_strings++;
                }
        printf("OK %s %u %s\n", sig[0] ? sig : "-", count, strings);
        sd_bus_message_unref(reply);
}

static void do_introspect(sd_bus *b, char **w) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *xml;
        unsigned n = 0;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, w[0], "org.freedesktop.DBus.Introspectable", "Introspect", &e, &reply,
                NULL);
        if (r < 0) {
                print_error(&e, r);
                sd_bus_error_free(&e);
                return;
        }
        if (sd_bus_message_read(reply, "s", &xml) < 0) {
                printf("ERR bad-reply\tno string\n");
                sd_bus_message_unref(reply);
                return;
        }
        printf("OK ");
        for (const char *p = xml; (p = strstr(p, "<node name=\"")); n++) {
                const char *q;
                p += strlen("<node name=\"");
                q = strchr(p, '"');
                if (!q)
                        break;
                printf("%s%.*s", n ? "," : "", (int)(q - p), p);
                p = q;
        }
        printf("\n");
        sd_bus_message_unref(reply);
}

static void do_own(sd_bus *b, char **w) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        uint32_t result = 0;
        int r;

        r = sd_bus_call_method(
                b, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                &e, &reply, "su", w[0], (uint32_t)0);
        if (r < 0) {
                print_error(&e, r);
                sd_bus_error_free(&e);
                return;
        }
        (void)sd_bus_message_read(reply, "u", &result);
        printf("OK %" PRIu32 "\n", result);
        sd_bus_message_unref(reply);
        (void)sd_bus_call_method(
                b, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReleaseName",
                NULL, NULL, "s", w[0]);
}

int main(int argc, char *argv[]) {
        sd_bus *b = NULL;
        int r;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc < 2) {
                fprintf(stderr, "usage: integ-busclient ADDRESS ACTION...\n");
                return 2;
        }
        if (sd_bus_new(&b) < 0 || sd_bus_set_address(b, argv[1]) < 0 || sd_bus_set_bus_client(b, 1) < 0 ||
            (r = sd_bus_start(b)) < 0) {
                fprintf(stderr, "integ-busclient: can't connect to %s\n", argv[1]);
                return 1;
        }

        for (int i = 2; i < argc; i++) {
                char *copy = strdup(argv[i]), *w[8];
                int n;

                if (!copy)
                        return 1;
                n = split(copy, w, 8);
                if (n == 4 && strcmp(w[0], "get") == 0)
                        do_get(b, w + 1);
                else if (n == 3 && strcmp(w[0], "getall") == 0)
                        do_getall(b, w + 1);
                else if ((n == 4 || n == 5) && strcmp(w[0], "call") == 0)
                        do_call(b, w + 1, n - 1);
                else if (n == 2 && strcmp(w[0], "introspect") == 0)
                        do_introspect(b, w + 1);
                else if (n == 2 && strcmp(w[0], "own") == 0)
                        do_own(b, w + 1);
                else {
                        fprintf(stderr, "integ-busclient: bad action \"%s\"\n", argv[i]);
                        free(copy);
                        return 2;
                }
                free(copy);
        }
        sd_bus_flush_close_unref(b);
        return 0;
}
