/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The kubelet's CPU manager (docs/kubernetes.md): with kubelet-cpu-manager-state: pointing at a
 * checkpoint that gives CPU 1 to a container, a selector mapping places a process on CPU 0 only
 * (and Explain says why), while a within: cpuset selector keeps CPU 1; the checkpoint rewritten
 * as the kubelet does (a temporary file renamed over it) to hold nothing re-places the process
 * on 0-1 without a reload; a malformed checkpoint is a warning naming file:line:column and
 * changes nothing; CPU 1 handed out again moves the process off it.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bus-names.h"
#include "harness.h"
#include "macro.h"

#define POD "0a1b2c3d-0000-4111-8222-333344445555"
#define HOLDS_1 \
        "{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"" POD "\":{\"c\":\"1\"}}," \
        "\"checksum\":1}"
#define HOLDS_NONE "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1\",\"checksum\":2}"

/* The KubeletExclusiveCPUs property is want. */
static void assert_kubelet_cpus(Harness *h, const char *want) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *v = NULL;
        int r;

        r = sd_bus_get_property_string(
                harness_bus(h), AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE,
                "KubeletExclusiveCPUs", &error, &v);
        ck_assert_msg(r >= 0, "KubeletExclusiveCPUs: %s", strna(error.message));
        ck_assert_str_eq(v, want);
}

/*
 * The policy "shared" (cpus: {}, for processes named shared) and, with own non-NULL, "own"
 * (cpus: { within: cpuset }); a checkpoint DIR/kubelet/cpu_manager_state in which the kubelet
 * holds CPU 1, named by affinityd.yaml; the daemon started. Returns the checkpoint's path and
 * affinityd.yaml's (owned by h).
 */
static const char *start(Harness *h, const char *shared, const char *own, const char **ret_settings) {
        _cleanup_free_ char *dir = harness_asprintf("%s/kubelet", harness_dir(h)),
                            *path = harness_asprintf("%s/cpu_manager_state", dir),
                            *settings = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));
        const char *state;

        ck_assert_int_eq(mkdir(dir, 0755), 0);
        state = harness_write_file_renamed(h, path, HOLDS_1);
        *ret_settings = harness_write_file_renamed(h, settings, "kubelet-cpu-manager-state: %s\n", state);
        harness_write_policy(
                h, "10-k.yaml",
                "policies:\n"
                "  - name: shared\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: {}\n"
                "  - name: own\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: { within: cpuset }\n",
                shared, own ?: "nothing-is-named-like-this");
        harness_start_daemon(h);
        return state;
}

START_TEST(test_kubelet_checkpoint) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h), *own = harness_unique_name(h), *settings = NULL;
        const char *state = start(h, a, own, &settings);
        _cleanup_free_ char *out = NULL, *pid = NULL, *bad = NULL, *cdir = NULL;
        Child *c, *o;

        harness_wait_log(h, "The kubelet's CPU manager holds 1 (pod " POD " container c) now (was: none)");
        assert_kubelet_cpus(h, "1");

        /* CPU 1 is the container's: the selector leaves it out, and Explain says so. */
        c = harness_spawn_threads(h, a, 2, "1");
        harness_wait_process_cpus(h, c->pid, "0", 3);
        pid = harness_asprintf("%d", (int)c->pid);
        ck_assert_int_eq(harness_run_ctl(h, &out, NULL, "explain", pid, NULL), 0);
        ck_assert_msg(
                strstr(out, "held by the kubelet's CPU manager: 1 (pod " POD " container c)"),
                "explain does not say who holds CPU 1:\n%s", out);
        /* affinityctl plan of this machine says the same, offline. */
        out = mfree(out);
        cdir = harness_asprintf("--config-dir=%s", harness_config_dir(h));
        ck_assert_int_eq(harness_run_ctl(h, &out, NULL, "plan", cdir, NULL), 0);
        ck_assert_msg(
                strstr(out, "held by the kubelet's CPU manager: 1 (pod " POD " container c)"),
                "affinityctl plan does not say who holds CPU 1:\n%s", out);
        /* within: cpuset is bounded by the process's own cgroup, not by the kubelet's checkpoint. */
        o = harness_spawn_threads(h, own, 2, "1");
        harness_wait_process_cpus(h, o->pid, "0-1", 3);

        /* The kubelet takes CPU 1 back: re-planned and re-placed, no reload. */
        harness_write_file_renamed(h, state, HOLDS_NONE);
        harness_wait_process_cpus(h, c->pid, "0-1", 3);
        harness_wait_log(
                h,
                "The kubelet's CPU manager holds none now (was: 1 (pod " POD " container c)); re-planning");
        harness_wait_log(h, "The kubelet's CPU manager changed: re-planned 3 policies, 0 pending");
        assert_kubelet_cpus(h, "");

        /* Malformed: a warning at its position; nothing changes. */
        harness_write_file_renamed(h, state, "{\"policyName\":\"static\",\"entries\":[\"1\"]}");
        bad = harness_asprintf(
                "%s:1:34: entries: expected a mapping of pod UIDs, got a list; keeping the CPUs the "
                "kubelet's CPU manager held before (none)",
                state);
        harness_wait_log(h, bad);
        harness_assert_process_cpus_now(c->pid, "0-1", 3);

        /* CPU 1 handed out again: the process is moved off it. */
        harness_write_file_renamed(h, state, HOLDS_1);
        harness_wait_process_cpus(h, c->pid, "0", 3);
        harness_assert_process_cpus_now(o->pid, "0-1", 3);
}
END_TEST

/*
 * At reload the setting is read again: kubelet-cpu-manager-state: none gives CPU 1 back to the
 * selector, and the checkpoint is no longer watched (the kubelet handing CPU 1 out again changes
 * nothing); the path again, and it is read and watched again.
 */
START_TEST(test_kubelet_reload) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h), *settings = NULL;
        const char *state = start(h, a, NULL, &settings);
        Child *c;

        c = harness_spawn_threads(h, a, 2, "1");
        harness_wait_process_cpus(h, c->pid, "0", 3);

        harness_write_file_renamed(h, settings, "kubelet-cpu-manager-state: none\n");
        harness_sighup_reload(h);
        harness_wait_process_cpus(h, c->pid, "0-1", 3);
        /* Not watched: the kubelet's write is not read; a later placement still has 0-1. */
        harness_write_file_renamed(
                h, state, "{\"policyName\":\"static\",\"entries\":{\"p\":{\"c\":\"0\"}}}");
        harness_barrier(h);
        harness_assert_process_cpus_now(c->pid, "0-1", 3);
        ck_assert(!harness_log_contains(h, "holds 0 (pod p container c)"));

        /* The path again: read at the reload, so CPU 0 is the kubelet's now. */
        harness_write_file_renamed(h, settings, "kubelet-cpu-manager-state: %s\n", state);
        harness_sighup_reload(h);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_wait_log(h, "The kubelet's CPU manager holds 0 (pod p container c) now (was: none)");
}
END_TEST

int main(void) {
        Suite *s = suite_create("integ-kubelet");

        harness_add_test(s, test_kubelet_checkpoint);
        harness_add_test(s, test_kubelet_reload);
        return harness_main(s);
}
