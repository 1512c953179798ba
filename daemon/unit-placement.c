/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "log.h"
#include "macro.h"
#include "state.h"
#include "unit-placement.h"

#define SYSTEMD_DEST      "org.freedesktop.systemd1"
#define SYSTEMD_PATH      "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER   "org.freedesktop.systemd1.Manager"
#define UNIT_CALL_TIMEOUT (5ULL * 1000U * 1000U)

typedef struct UnitEntry {
        char *unit;
        unsigned generation; /* plan generation of the decision below */
        int effective;       /* 1: systemd enforces it; 0: the caller falls back */
        bool set;            /* AllowedCPUs= (and maybe AllowedMemoryNodes=) were set: reset later */
        bool has_original;   /* original_* hold what the unit had before the first set */
        bool saved;          /* original_* are in the state dir */
        CpuSet original_cpus;
        CpuSet original_mems;
} UnitEntry;

struct UnitPlacement {
        char *bus_address;
        char *state_dir; /* NULL: originals are not persisted */
        bool dry_run;
        sd_bus *bus;
        int bus_error; /* the last failure to connect, 0 if none (retried once per plan) */
        unsigned generation;
        UnitEntry *entries; /* a few units: a linear array */
        size_t n_entries;
        bool changed; /* SetUnitProperties succeeded since unit_placement_take_changed() */
};

int unit_placement_new(const char *bus_address, bool dry_run, UnitPlacement **ret) {
        _cleanup_free_ UnitPlacement *u = calloc(1, sizeof(UnitPlacement));

        if (!u)
                return -ENOMEM;
        if (bus_address) {
                u->bus_address = strdup(bus_address);
                if (!u->bus_address)
                        return -ENOMEM;
        }
        u->dry_run = dry_run;
        u->generation = 1;
        *ret = TAKE_PTR(u);
        return 0;
}

static void unit_entry_done(UnitEntry *e) {
        free(e->unit);
        cpuset_done(&e->original_cpus);
        cpuset_done(&e->original_mems);
}

UnitPlacement *unit_placement_free(UnitPlacement *u) {
        if (!u)
                return NULL;
        for (size_t i = 0; i < u->n_entries; i++)
                unit_entry_done(&u->entries[i]);
        free(u->entries);
        free(u->state_dir);
        sd_bus_flush_close_unref(u->bus);
        free(u->bus_address);
        free(u);
        return NULL;
}

static int unit_placement_connect(UnitPlacement *u) {
        sd_bus *bus = NULL;
        int r;

        if (u->bus)
                return 0;
        if (u->bus_error)
                return u->bus_error;
        if (u->bus_address) {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return r;
                r = sd_bus_set_address(bus, u->bus_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, true);
                if (r >= 0)
                        r = sd_bus_start(bus);
        } else
                r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_set_method_call_timeout(bus, UNIT_CALL_TIMEOUT);
        if (r < 0) {
                sd_bus_unref(bus);
                u->bus_error = r;
                return r;
        }
        u->bus = bus;
        return 0;
}

/* cpu_set_to_dbus(): byte i bit j is CPU (or node) 8*i + j; an empty set is zero bytes. */
static int append_mask(sd_bus_message *msg, const CpuSet *s) {
        _cleanup_free_ uint8_t *bytes = NULL;
        size_t n = 0;

        if (s)
                CPUSET_FOREACH (cpu, s) {
                        n = (size_t)cpu / 8 + 1;
                }
        if (n > 0) {
                bytes = calloc(n, 1);
                if (!bytes)
                        return -ENOMEM;
                CPUSET_FOREACH (cpu, s) {
                        bytes[cpu / 8] |= (uint8_t)(1U << (cpu % 8));
                }
        }
        return sd_bus_message_append_array(msg, 'y', bytes, n);
}

static int append_property(sd_bus_message *msg, const char *name, const CpuSet *s) {
        int r;

        r = sd_bus_message_open_container(msg, 'r', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append(msg, "s", name);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(msg, 'v', "ay");
        if (r < 0)
                return r;
        r = append_mask(msg, s);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(msg);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(msg);
}

/* SetUnitProperties(unit, runtime=true, [AllowedCPUs, AllowedMemoryNodes if with_mems]); NULL
 * sets are empty (a reset). */
static int set_unit_properties(
        UnitPlacement *u, const char *unit, const CpuSet *cpus, bool with_mems, const CpuSet *mems,
        sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(
                u->bus, &msg, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "SetUnitProperties");
        if (r < 0)
                return r;
        r = sd_bus_message_append(msg, "sb", unit, 1);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(msg, 'a', "(sv)");
        if (r < 0)
                return r;
        r = append_property(msg, "AllowedCPUs", cpus);
        if (r < 0)
                return r;
        if (with_mems) {
                r = append_property(msg, "AllowedMemoryNodes", mems);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(msg);
        if (r < 0)
                return r;
        r = sd_bus_call(u->bus, msg, 0, error, &reply);
        if (r >= 0)
                u->changed = true;
        return r;
}

/* The D-Bus interface of unit's type that carries EffectiveCPUs, or NULL for a type without a
 * cgroup. */
static const char *unit_cgroup_interface(const char *unit) {
        static const struct {
                const char *suffix, *interface;
        } types[] = {
                {".service", "org.freedesktop.systemd1.Service"},
                {".scope", "org.freedesktop.systemd1.Scope"},
                {".slice", "org.freedesktop.systemd1.Slice"},
                {".socket", "org.freedesktop.systemd1.Socket"},
                {".mount", "org.freedesktop.systemd1.Mount"},
                {".swap", "org.freedesktop.systemd1.Swap"},
        };
        const char *dot = strrchr(unit, '.');

        if (!dot)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(types); i++)
                if (streq(dot, types[i].suffix))
                        return types[i].interface;
        return NULL;
}

/* The object path of unit (GetUnit), newly allocated into *ret. */
static int get_unit_path(UnitPlacement *u, const char *unit, char **ret, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *path = NULL;
        int r;

        r = sd_bus_call_method(
                u->bus, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "GetUnit", error, &reply, "s", unit);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0)
                return r;
        *ret = strdup(path);
        return *ret ? 0 : -ENOMEM;
}

/* unit's property (an "ay" mask: EffectiveCPUs, AllowedCPUs, AllowedMemoryNodes; GetUnit, then
 * the property on its object) into *ret. */
static int get_unit_mask(
        UnitPlacement *u, const char *unit, const char *property, CpuSet *ret, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *prop = NULL;
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL;
        _cleanup_free_ char *path = NULL;
        const char *interface = unit_cgroup_interface(unit);
        const uint8_t *bytes = NULL;
        size_t n = 0;
        int r;

        if (!interface)
                return -EOPNOTSUPP;
        r = get_unit_path(u, unit, &path, error);
        if (r < 0)
                return r;
        r = sd_bus_get_property(u->bus, SYSTEMD_DEST, path, interface, property, error, &prop, "ay");
        if (r < 0)
                return r;
        r = sd_bus_message_read_array(prop, 'y', (const void **)&bytes, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                for (unsigned b = 0; b < 8; b++)
                        if (bytes[i] & (1U << b)) {
                                r = cpuset_add(&s, (unsigned)(i * 8 + b));
                                if (r < 0)
                                        return r;
                        }
        *ret = s;
        s = CPUSET_NULL;
        return 0;
}

/*
 * Before the first SetUnitProperties on e: reads the unit's AllowedCPUs and AllowedMemoryNodes
 * and persists them (state dir), so the reset — here or in a restarted daemon — gives them back.
 * Failures are logged: the reset then falls back to empty properties. Returns 0 or -ENOMEM.
 */
static int unit_placement_record(UnitPlacement *u, UnitEntry *e) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(state_unit_done) StateUnit s = {};
        int r;

        cpuset_clear(&e->original_cpus);
        cpuset_clear(&e->original_mems);
        e->has_original = false;
        r = get_unit_mask(u, e->unit, "AllowedCPUs", &e->original_cpus, &error);
        if (r >= 0)
                r = get_unit_mask(u, e->unit, "AllowedMemoryNodes", &e->original_mems, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning_errno(
                        r,
                        "Could not read AllowedCPUs= and AllowedMemoryNodes= of %s before setting them "
                        "(%s): "
                        "they will be reset to empty",
                        e->unit, error.message ?: strerror(-r));
                return 0;
        }
        e->has_original = true;
        if (!u->state_dir)
                return 0;
        s.unit = strdup(e->unit);
        if (!s.unit)
                return -ENOMEM;
        r = cpuset_copy(&s.allowed_cpus, &e->original_cpus);
        if (r >= 0)
                r = cpuset_copy(&s.allowed_memory_nodes, &e->original_mems);
        if (r >= 0)
                r = state_unit_write(u->state_dir, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning_errno(
                        r,
                        "Failed to persist the original AllowedCPUs= of %s under %s: %m (a restarted daemon "
                        "could not restore them)",
                        e->unit, u->state_dir);
                return 0;
        }
        e->saved = true;
        return 0;
}

static UnitEntry *unit_placement_find(UnitPlacement *u, const char *unit) {
        for (size_t i = 0; i < u->n_entries; i++)
                if (streq(u->entries[i].unit, unit))
                        return &u->entries[i];
        return NULL;
}

int unit_placement_place(
        UnitPlacement *u, const char *unit, const char *policy, const CpuSet *cpus, const CpuSet *mems) {
        _cleanup_cpuset_ CpuSet effective = CPUSET_NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *want = NULL, *got = NULL;
        UnitEntry *e;
        int r;

        e = unit_placement_find(u, unit);
        if (e && e->generation == u->generation)
                return e->effective;
        if (!e) {
                UnitEntry *a = reallocarray(u->entries, u->n_entries + 1, sizeof(UnitEntry));
                if (!a)
                        return -ENOMEM;
                u->entries = a;
                e = &u->entries[u->n_entries];
                *e = (UnitEntry){.unit = strdup(unit)};
                if (!e->unit)
                        return -ENOMEM;
                u->n_entries++;
        }
        e->generation = u->generation;
        e->effective = 0;
        if (u->dry_run) {
                log_info("Would set AllowedCPUs= of %s (policy %s) through systemd", unit, policy);
                return 0;
        }

        want = cpuset_to_string(cpus);
        if (!want)
                return -ENOMEM;
        r = unit_placement_connect(u);
        if (r < 0) {
                log_warning_errno(
                        r,
                        "Policy %s: cannot reach systemd on the system bus to place %s (via: systemd), "
                        "placing its processes one by one instead: %m",
                        policy, unit);
                return 0;
        }
        if (!e->set) {
                r = unit_placement_record(u, e);
                if (r == -ENOMEM)
                        return r;
        }
        r = set_unit_properties(u, unit, cpus, mems != NULL, mems, &error);
        if (r < 0 && !e->set && e->saved) {
                /* Nothing was set: nothing to restore. */
                (void)state_unit_remove(u->state_dir, unit);
                e->saved = false;
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning_errno(
                        r,
                        "Policy %s: systemd refused AllowedCPUs=%s for %s (%s), placing its processes one "
                        "by one instead",
                        policy, want, unit, error.message ?: strerror(-r));
                return 0;
        }
        e->set = true;

        r = get_unit_mask(u, unit, "EffectiveCPUs", &effective, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning_errno(
                        r,
                        "Policy %s: could not read EffectiveCPUs of %s after setting AllowedCPUs=%s (%s), "
                        "placing its processes one by one instead",
                        policy, unit, want, error.message ?: strerror(-r));
                return 0;
        }
        if (!cpuset_equal(&effective, cpus)) {
                got = cpuset_to_string(&effective);
                log_warning(
                        "Policy %s: AllowedCPUs=%s on %s is ineffective (systemd reports EffectiveCPUs=%s; "
                        "the cpuset controller is not systemd's on this cgroup hierarchy), placing its "
                        "processes one by one instead",
                        policy, want, unit, !got || !*got ? "(empty)" : got);
                return 0;
        }
        log_info("Policy %s: %s placed on CPUs %s by systemd (AllowedCPUs=)", policy, unit, want);
        e->effective = 1;
        return 1;
}

void unit_placement_new_plan(UnitPlacement *u) {
        u->generation++;
        u->bus_error = 0; /* try connecting again */
}

/* The EffectiveCPUs of the slice that unit is in (its "Slice" property). */
static int get_slice_effective(UnitPlacement *u, const char *unit, CpuSet *ret, sd_bus_error *error) {
        _cleanup_free_ char *slice = NULL, *path = NULL;
        const char *interface = unit_cgroup_interface(unit);
        int r;

        if (!interface)
                return -EOPNOTSUPP;
        r = get_unit_path(u, unit, &path, error);
        if (r < 0)
                return r;
        r = sd_bus_get_property_string(u->bus, SYSTEMD_DEST, path, interface, "Slice", error, &slice);
        if (r < 0)
                return r;
        if (!*slice)
                return -ENOENT; /* -.slice: no parent */
        return get_unit_mask(u, slice, "EffectiveCPUs", ret, error);
}

/*
 * After AllowedCPUs= of e's unit was reset to empty: is the reset effective? Empty means "what
 * the parent slice has"; systemd 252 does not write the cgroup's cpuset.cpus for an empty value
 * while the slice keeps the cpuset controller on (another unit in it has AllowedCPUs=), so
 * EffectiveCPUs stays what affinityd had set. Then AllowedCPUs= is set to the slice's
 * EffectiveCPUs (which systemd does write) and reset to empty again (so nothing of affinityd's
 * is left in the unit's properties); read back once more. Failures are logged.
 */
static void unit_reset_make_effective(UnitPlacement *u, UnitEntry *e) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_cpuset_ CpuSet effective = CPUSET_NULL, slice = CPUSET_NULL;
        _cleanup_free_ char *got = NULL, *want = NULL;
        int r;

        r = get_unit_mask(u, e->unit, "EffectiveCPUs", &effective, &error);
        if (r >= 0)
                r = get_slice_effective(u, e->unit, &slice, &error);
        if (r < 0) {
                log_debug_errno(
                        r, "Could not read back EffectiveCPUs of %s after the reset (%s), leaving it",
                        e->unit, error.message ?: strerror(-r));
                return;
        }
        /* Empty: no cpuset controller on it at all (the slice's is off too) — nothing to fix. */
        if (cpuset_is_empty(&effective) || cpuset_is_empty(&slice) || cpuset_equal(&effective, &slice))
                return;

        got = cpuset_to_string(&effective);
        want = cpuset_to_string(&slice);
        log_info(
                "AllowedCPUs= of %s was reset, but systemd left EffectiveCPUs=%s (its slice has %s): "
                "setting the slice's CPUs explicitly, then resetting again",
                e->unit, strna(got), strna(want));
        r = set_unit_properties(u, e->unit, &slice, false, NULL, &error);
        if (r >= 0)
                r = set_unit_properties(u, e->unit, NULL, false, NULL, &error);
        if (r >= 0) {
                cpuset_clear(&effective);
                r = get_unit_mask(u, e->unit, "EffectiveCPUs", &effective, &error);
        }
        if (r < 0)
                log_warning_errno(
                        r, "Failed to make the reset of AllowedCPUs= of %s effective: %s", e->unit,
                        error.message ?: strerror(-r));
        else if (!cpuset_equal(&effective, &slice)) {
                got = mfree(got);
                got = cpuset_to_string(&effective);
                log_warning(
                        "AllowedCPUs= of %s is reset, but systemd still reports EffectiveCPUs=%s, not its "
                        "slice's %s",
                        e->unit, strna(got), strna(want));
        }
}

static void unit_placement_reset(UnitPlacement *u, UnitEntry *e) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        bool to_empty = !e->has_original || cpuset_is_empty(&e->original_cpus);
        int r;

        if (!e->set)
                return;
        e->set = false;
        r = unit_placement_connect(u);
        if (r >= 0)
                r = set_unit_properties(
                        u, e->unit, e->has_original ? &e->original_cpus : NULL, true,
                        e->has_original ? &e->original_mems : NULL, &error);
        if (r < 0)
                log_warning_errno(
                        r, "Failed to reset AllowedCPUs= and AllowedMemoryNodes= of %s: %s", e->unit,
                        error.message ?: strerror(-r));
        else {
                _cleanup_free_ char *cpus = e->has_original ? cpuset_to_string(&e->original_cpus) : NULL;
                log_info(
                        "Reset AllowedCPUs= and AllowedMemoryNodes= of %s (AllowedCPUs=%s)", e->unit,
                        cpus && *cpus ? cpus : "(empty)");
                if (to_empty)
                        unit_reset_make_effective(u, e);
        }
        if (e->saved && u->state_dir) {
                r = state_unit_remove(u->state_dir, e->unit);
                if (r < 0)
                        log_warning_errno(r, "Failed to remove the state file of %s: %m", e->unit);
        }
        e->saved = false;
}

bool unit_placement_take_changed(UnitPlacement *u) {
        bool changed = u && u->changed;

        if (u)
                u->changed = false;
        return changed;
}

void unit_placement_flush(UnitPlacement *u) {
        size_t j = 0;

        for (size_t i = 0; i < u->n_entries; i++) {
                UnitEntry *e = &u->entries[i];

                if (e->generation != u->generation) {
                        unit_placement_reset(u, e);
                        unit_entry_done(e);
                        continue;
                }
                u->entries[j++] = *e;
        }
        u->n_entries = j;
}

void unit_placement_reset_all(UnitPlacement *u) {
        for (size_t i = 0; i < u->n_entries; i++) {
                unit_placement_reset(u, &u->entries[i]);
                unit_entry_done(&u->entries[i]);
        }
        u->entries = mfree(u->entries);
        u->n_entries = 0;
}

int unit_placement_set_state_dir(UnitPlacement *u, const char *state_dir) {
        char *copy = NULL;

        if (state_dir && !(copy = strdup(state_dir)))
                return -ENOMEM;
        free(u->state_dir);
        u->state_dir = copy;
        return 0;
}

int unit_placement_recover(UnitPlacement *u) {
        _cleanup_strv_free_ char **units = NULL;
        size_t n = 0;
        int r;

        if (u->dry_run || !u->state_dir)
                return 0;
        r = state_unit_list(u->state_dir, &units);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning_errno(r, "Failed to read the state directory %s/units: %m", u->state_dir);
                return 0;
        }
        STRV_FOREACH (unit, units) {
                _cleanup_(state_unit_done) StateUnit s = {};
                _cleanup_free_ char *error = NULL;
                UnitEntry *a;

                r = state_unit_read(u->state_dir, *unit, &s, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (error)
                                log_warning(
                                        "%s, ignoring and removing it: the original AllowedCPUs= of %s is "
                                        "lost",
                                        error, *unit);
                        else
                                log_warning_errno(r, "Failed to read the state file of %s: %m", *unit);
                        (void)state_unit_remove(u->state_dir, *unit);
                        continue;
                }
                if (unit_placement_find(u, *unit))
                        continue;
                a = reallocarray(u->entries, u->n_entries + 1, sizeof(UnitEntry));
                if (!a)
                        return -ENOMEM;
                u->entries = a;
                /* Generation 0: no plan placed it yet; unit_placement_flush() after the first pass
                 * gives it back unless that pass placed it again. */
                u->entries[u->n_entries++] = (UnitEntry){
                        .unit = TAKE_PTR(s.unit),
                        .generation = 0,
                        .set = true,
                        .has_original = true,
                        .saved = true,
                        .original_cpus = s.allowed_cpus,
                        .original_mems = s.allowed_memory_nodes,
                };
                s.allowed_cpus = CPUSET_NULL;
                s.allowed_memory_nodes = CPUSET_NULL;
                n++;
        }
        if (n > 0)
                log_info(
                        "Read the original properties of %zu units placed by a previous instance from "
                        "%s/units",
                        n, u->state_dir);
        return 0;
}
