/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.affinityd1.Policy: per-policy objects (fallback vtable + node enumerator). See policy-bus.h. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "bus-util.h"
#include "policy-bus.h"
#include "util.h"

int policy_bus_path(const char *name, char **ret) {
        return sd_bus_path_encode(AFFINITYD_POLICY_PATH_PREFIX, name, ret);
}

/*
 * The index in m->plan of the policy whose object is path: 1 and *ret_index, 0 when path is not
 * the object of a policy in force, or -ENOMEM.
 */
static int policy_bus_lookup(const Manager *m, const char *path, size_t *ret_index) {
        _cleanup_free_ char *name = NULL, *canonical = NULL;
        int r;

        r = sd_bus_path_decode(path, AFFINITYD_POLICY_PATH_PREFIX, &name);
        if (r <= 0)
                return r;
        /* Only the path policy_bus_path() makes: not "…/policy/a/b" for the policy "a/b" (that
         * is "…/policy/a_2fb"), nor "…/policy/_64b" for "db". */
        r = policy_bus_path(name, &canonical);
        if (r < 0)
                return r;
        if (!streq(canonical, path))
                return 0;
        for (size_t i = 0; m->plan && i < m->plan->n_policies; i++)
                if (streq_ptr(m->plan->policies[i].policy->name, name)) {
                        *ret_index = i;
                        return 1;
                }
        return 0;
}

/* The index in m->plan of the policy whose object path is, or UnknownObject (the find callback
 * has checked it in the same dispatch, so that is only a safety net). */
static int policy_bus_get(Manager *m, const char *path, size_t *ret_index, sd_bus_error *error) {
        int r;

        r = policy_bus_lookup(m, path, ret_index);
        if (r < 0)
                return r;
        if (r == 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "No policy object %s", path);
        return 0;
}

static int policy_bus_find(
        sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
        sd_bus_error *error) {
        Manager *m = userdata;
        size_t i;
        int r;

        r = policy_bus_lookup(m, path, &i);
        if (r <= 0)
                return r;
        *ret_found = m;
        return 1;
}

static int policy_bus_enumerate(
        sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes, sd_bus_error *error) {
        _cleanup_strv_free_ char **nodes = NULL;
        Manager *m = userdata;
        size_t n = m->plan ? m->plan->n_policies : 0;

        nodes = calloc(n + 1, sizeof(char *));
        if (!nodes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int r = policy_bus_path(m->plan->policies[i].policy->name, &nodes[i]);
                if (r < 0)
                        return r;
        }
        *ret_nodes = TAKE_PTR(nodes);
        return 0;
}

static int property_get_name(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        size_t i;
        int r;

        r = policy_bus_get(m, path, &i, error);
        if (r < 0)
                return r;
        return bus_append_string(reply, m->plan->policies[i].policy->name);
}

static int property_get_file(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        size_t i;
        int r;

        r = policy_bus_get(m, path, &i, error);
        if (r < 0)
                return r;
        return bus_append_string(reply, m->plan->policies[i].policy->location.file);
}

static int property_get_line(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        size_t i;
        int r;

        r = policy_bus_get(m, path, &i, error);
        if (r < 0)
                return r;
        return sd_bus_message_append(reply, "u", (uint32_t)m->plan->policies[i].policy->location.line);
}

static int property_get_selector(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        size_t i;
        int r;

        r = policy_bus_get(m, path, &i, error);
        if (r < 0)
                return r;
        r = cpu_selector_format(&m->plan->policies[i].policy->cpus, &text);
        if (r < 0)
                return r;
        return sd_bus_message_append(reply, "s", text);
}

/* CPUs, Nodes and ExclusiveCPUs: the resolved sets as cpu-lists (ExclusiveCPUs: those held with
 * exclusive: true, the policy's own and its thread rules'); "" when the policy is pending or has
 * no such set. */
static int property_get_cpus(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        const PolicyPlan *pp;
        const CpuSet *set;
        size_t i;
        int r;

        r = policy_bus_get(m, path, &i, error);
        if (r < 0)
                return r;
        pp = &m->plan->policies[i];
        if (streq(property, "ExclusiveCPUs"))
                set = &pp->exclusive_cpus;
        else if (pp->has_cpus)
                set = streq(property, "Nodes") ? &pp->nodes : &pp->cpus;
        else
                set = NULL;
        if (set && !pp->pending_reason && !cpuset_is_empty(set)) {
                r = cpuset_format_list(set, &text);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_append(reply, "s", strempty(text));
}

static int property_get_pending_reason(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        size_t i;
        int r;

        r = policy_bus_get(m, path, &i, error);
        if (r < 0)
                return r;
        return bus_append_string(reply, m->plan->policies[i].pending_reason);
}

/* The PIDs of the tracked processes under the policy, ascending. */
static int property_get_matched_pids(
        sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
        void *userdata, sd_bus_error *error) {
        _cleanup_free_ TrackedProcess **list = NULL;
        Manager *m = userdata;
        size_t i, n = 0;
        int r;

        r = policy_bus_get(m, path, &i, error);
        if (r < 0)
                return r;
        r = manager_list_processes(m, &list, &n);
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "u");
        if (r < 0)
                return r;
        for (size_t k = 0; k < n; k++) {
                if (list[k]->policy != i)
                        continue;
                r = sd_bus_message_append(reply, "u", (uint32_t)list[k]->pid);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/*
 * Name can't change for an object (the path is made from it): const. The others change only
 * when a reload replaces the plan (the set of objects with it) or, MatchedPIDs, with every
 * process event; no PropertiesChanged is sent for them, which sd-bus publishes as
 * EmitsChangedSignal="false".
 */
const sd_bus_vtable policy_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Name", "s", property_get_name, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("File", "s", property_get_file, 0, 0),
        SD_BUS_PROPERTY("Line", "u", property_get_line, 0, 0),
        SD_BUS_PROPERTY("Selector", "s", property_get_selector, 0, 0),
        SD_BUS_PROPERTY("CPUs", "s", property_get_cpus, 0, 0),
        SD_BUS_PROPERTY("Nodes", "s", property_get_cpus, 0, 0),
        SD_BUS_PROPERTY("ExclusiveCPUs", "s", property_get_cpus, 0, 0),
        SD_BUS_PROPERTY("PendingReason", "s", property_get_pending_reason, 0, 0),
        SD_BUS_PROPERTY("MatchedPIDs", "au", property_get_matched_pids, 0, 0),
        SD_BUS_VTABLE_END,
};

int policy_bus_register(sd_bus *bus, Manager *m) {
        int r;

        r = sd_bus_add_fallback_vtable(
                bus, NULL, AFFINITYD_POLICY_PATH_PREFIX, AFFINITYD_POLICY_INTERFACE, policy_vtable,
                policy_bus_find, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(bus, NULL, AFFINITYD_POLICY_PATH_PREFIX, policy_bus_enumerate, m);
}
