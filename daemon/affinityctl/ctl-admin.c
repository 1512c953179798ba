/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* affinityctl reload and rescan: the daemon's root-only Reload and Rescan methods. */

#include <string.h>

#include "bus-names.h"
#include "ctl-bus.h"
#include "ctl.h"
#include "macro.h"

/* With --json, {"KEY":true} or {"KEY":false,"error":NAME,"message":TEXT} on stdout. */
static void print_result_json(const char *key, int r, const sd_bus_error *error) {
        JsonWriter w = JSON_WRITER(stdout);

        if (!arg_json)
                return;
        json_begin_object(&w);
        json_field_bool(&w, key, r >= 0);
        if (r < 0) {
                json_field_string(&w, "error", sd_bus_error_is_set(error) ? error->name : NULL);
                json_field_string(&w, "message", sd_bus_error_is_set(error) ? error->message : strerror(-r));
        }
        json_end_object(&w);
        json_end_document(&w);
}

/* Calls Reload or Rescan (member) and says why it failed. Returns the exit code. */
static int call_root_method(
        const char *member, const char *key, const char *verb, const char *what,
        bool (*explain_error)(const sd_bus_error *error)) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r, ret;

        r = ctl_connect(&bus);
        if (r > 0)
                return r;

        r = ctl_call(bus, AFFINITYD_BUS_INTERFACE, member, RELOAD_TIMEOUT_USEC, &error, NULL, NULL);
        if (r >= 0)
                ret = EXIT_OK;
        else if (explain_error(&error))
                ret = EXIT_FAILURE_;
        else if (ctl_explain_needs_root(verb, &error))
                ret = EXIT_FAILURE_;
        else
                ret = ctl_call_failed(what, r, &error);
        print_result_json(key, r, &error);
        return ret;
}

/* InvalidPolicy: its message is the diagnostics, one "file:line:column: error: ..." per line. */
static bool explain_reload_error(const sd_bus_error *error) {
        const char *msg = error->message ?: "";
        size_t l = strlen(msg);

        if (!sd_bus_error_has_name(error, AFFINITYD_ERROR_INVALID_POLICY))
                return false;
        fprintf(stderr, "%s%s", msg, l > 0 && msg[l - 1] != '\n' ? "\n" : "");
        fprintf(stderr, "Reload failed: the configuration is invalid; affinityd keeps the previous one.\n");
        return true;
}

int verb_reload(char **args) {
        return call_root_method("Reload", "reloaded", "reload", "reload affinityd", explain_reload_error);
}

static bool explain_rescan_error(const sd_bus_error *error) {
        if (!sd_bus_error_has_name(error, AFFINITYD_ERROR_NOT_SUPPORTED))
                return false;
        fprintf(stderr, "Rescan is not supported by this daemon: %s\n", error->message ?: error->name);
        return true;
}

int verb_rescan(char **args) {
        return call_root_method("Rescan", "rescanned", "rescan", "rescan", explain_rescan_error);
}
