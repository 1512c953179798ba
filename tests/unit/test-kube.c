/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the Kubernetes facts (lib/kube.c) and the match: keys pod:, namespace: and
 * container: (lib/match.c): the cgroup path parser over every runtime's and driver's naming,
 * the kubelet's log records in a fixture root, their cache (refresh on a new container, at
 * most one listing per interval on an injected clock), and matching and explaining fixture
 * processes.
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube.h"
#include "macro.h"
#include "match.h"
#include "tmpdir.h"

#define STRV(...) ((char *[]){__VA_ARGS__, NULL})

/* Container IDs: 64 lowercase hex digits. */
#define CID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CID_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define CID_C "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
#define CID_D "d00dd00dd00dd00dd00dd00dd00dd00dd00dd00dd00dd00dd00dd00dd00dd00d"
/* Pod UIDs as the API writes them, and as the systemd driver escapes them in slice names. */
#define UID_A  "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
#define UID_A_ "6f1e2d3c_4b5a_4968_8776_a5b4c3d2e1f0"
#define UID_B  "0a1b2c3d-0000-4111-8222-333344445555"
#define UID_B_ "0a1b2c3d_0000_4111_8222_333344445555"
/* A static pod's UID: the kubelet's hash of its manifest. */
#define UID_S "8f3d0c5e4e3c1c9b0d4f7a0e2b1c6d5e"

#define BURSTABLE_A "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_A_ ".slice"

/* ---- the cgroup path parser -------------------------------------------------------------- */

static const struct {
        const char *path;
        int ret;
        const char *pod_uid;
        const char *container_id;
} parse_cases[] = {
        /* containerd, systemd driver: burstable, besteffort, guaranteed */
        {BURSTABLE_A "/cri-containerd-" CID_A ".scope", 1, UID_A, CID_A},
        {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_B_
         ".slice/cri-containerd-" CID_B ".scope",
         1, UID_B, CID_B},
        {"/kubepods.slice/kubepods-pod" UID_A_ ".slice/cri-containerd-" CID_A ".scope", 1, UID_A, CID_A},
        /* CRI-O, systemd driver; its conmon is not the container */
        {BURSTABLE_A "/crio-" CID_B ".scope", 1, UID_A, CID_B},
        {BURSTABLE_A "/crio-conmon-" CID_B ".scope", 1, UID_A, ""},
        /* cgroupfs driver: containerd's bare ID, CRI-O's prefixed one */
        {"/kubepods/burstable/pod" UID_A "/" CID_A, 1, UID_A, CID_A},
        {"/kubepods/besteffort/pod" UID_B "/" CID_B, 1, UID_B, CID_B},
        {"/kubepods/pod" UID_B "/" CID_B, 1, UID_B, CID_B},
        {"/kubepods/pod" UID_B "/crio-" CID_B, 1, UID_B, CID_B},
        /* docker (dockershim, cri-dockerd) */
        {BURSTABLE_A "/docker-" CID_C ".scope", 1, UID_A, CID_C},
        /* a static pod's hashed UID */
        {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_S
         ".slice/cri-containerd-" CID_A ".scope",
         1, UID_S, CID_A},
        /* relative to the reader's cgroup namespace: up to a common ancestor, then down */
        {"/../../kubepods-besteffort-pod" UID_B_ ".slice/cri-containerd-" CID_B ".scope", 1, UID_B, CID_B},
        {"/../../../kubepods.slice/kubepods-pod" UID_A_ ".slice/crio-" CID_A ".scope", 1, UID_A, CID_A},
        {"/../../pod" UID_B "/" CID_B, 1, UID_B, CID_B},
        {"/../../burstable/pod" UID_B "/" CID_B, 1, UID_B, CID_B},
        {"/../cri-containerd-" CID_C ".scope", 1, "", CID_C}, /* a sibling in the reader's own pod */
        {"/../" CID_C, 1, "", CID_C},
        {"kubepods-pod" UID_A_ ".slice/cri-containerd-" CID_A ".scope", 1, UID_A, CID_A},
        /* sub-cgroups below the container's */
        {BURSTABLE_A "/cri-containerd-" CID_A ".scope/init", 1, UID_A, CID_A},
        {"/kubepods/pod" UID_B "/" CID_B "/a/b", 1, UID_B, CID_B},
        {"/../../kubepods-pod" UID_A_ ".slice/cri-containerd-" CID_A ".scope/init.scope", 1, UID_A, CID_A},
        /* a pod's own cgroup, or something other than a container below it */
        {BURSTABLE_A, 1, UID_A, ""},
        {BURSTABLE_A "/", 1, UID_A, ""},
        {BURSTABLE_A "/system.slice", 1, UID_A, ""},
        /* near misses of the container component: the pod is still known */
        {BURSTABLE_A "/cri-containerd-"
                     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
                     ".scope",
         1, UID_A, ""},                                                 /* 63 hex digits */
        {BURSTABLE_A "/cri-containerd-" CID_A "0.scope", 1, UID_A, ""}, /* 65 */
        {BURSTABLE_A "/cri-containerd-"
                     "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
                     ".scope",
         1, UID_A, ""}, /* uppercase */
        {BURSTABLE_A "/cri-containerd-" CID_A ".scopex", 1, UID_A, ""},
        {BURSTABLE_A "/containerd-" CID_A ".scope", 1, UID_A, ""},
        {BURSTABLE_A "/crio-conmon-" CID_A "0.scope", 1, UID_A, ""},
        {"/kubepods/pod" UID_B "/" CID_B ".scope", 1, UID_B, ""}, /* a bare ID is never a scope */
        {"/kubepods/pod" UID_B "/x" CID_B, 1, UID_B, ""},
        /* near misses of the pod component */
        {"/kubepods.slice/kubepods-pod" UID_A ".slice/cri-containerd-" CID_A ".scope", 0, "", ""}, /* '-' */
        {"/kubepods/pod" UID_A_ "/" CID_A, 0, "", ""},                                             /* '_' */
        {"/kubepods/pod6F1E2D3C-4B5A-4968-8776-A5B4C3D2E1F0/" CID_A, 0, "", ""}, /* uppercase */
        {"/kubepods/pod6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f/" CID_A, 0, "", ""},  /* short */
        {"/kubepods/pod6f1e2d3c4-b5a-4968-8776-a5b4c3d2e1f0/" CID_A, 0, "", ""}, /* dash misplaced */
        {"/kubepods.slice/kubepods-guaranteed-pod" UID_A_ ".slice", 0, "", ""},
        {"/kubepods.slice/kubepods-pod" UID_A_ ".scope", 0, "", ""},
        /* not the kubelet's tree from its top: a delegated subtree, a container's own cgroups */
        {"/user.slice/user-1000.slice/user@1000.service/kubepods-pod" UID_A_ ".slice/cri-containerd-" CID_A
         ".scope",
         0, "", ""},
        {"/user.slice/user-1000.slice/user@1000.service/kubepods.slice/kubepods-pod" UID_A_
         ".slice/cri-containerd-" CID_A ".scope",
         0, "", ""},
        {"/../../../../user.slice/user-1000.slice/user@1000.service/kubepods-pod" UID_A_
         ".slice/cri-containerd-" CID_A ".scope",
         0, "", ""},
        {"/system.slice/kubepods.slice/kubepods-pod" UID_A_ ".slice/cri-containerd-" CID_A ".scope", 0, "",
         ""},
        {"/kubepods.slice/x.slice/kubepods-pod" UID_A_ ".slice/cri-containerd-" CID_A ".scope", 0, "", ""},
        {"/kubepods/" CID_A, 0, "", ""},
        {BURSTABLE_A "/cri-containerd-" CID_A ".scope/kubepods-pod" UID_B_ ".slice/cri-containerd-" CID_B
                     ".scope",
         1, UID_A, CID_A},
        {BURSTABLE_A "/kubepods-pod" UID_B_ ".slice/cri-containerd-" CID_B ".scope", 1, UID_A, ""},
        /* not Kubernetes */
        {"/", 0, "", ""},
        {"", 0, "", ""},
        {"/system.slice/nginx.service", 0, "", ""},
        {"/system.slice/docker-" CID_A ".scope", 0, "", ""},
        {"/system.slice/containerd.service/" CID_A, 0, "", ""},
        {"/user.slice/pod" UID_A "/" CID_A, 0, "", ""}, /* cgroupfs naming outside kubepods */
        {"/machine.slice/libpod-" CID_A ".scope", 0, "", ""},
};

START_TEST(test_parse_cgroup) {
        for (size_t i = 0; i < ELEMENTSOF(parse_cases); i++) {
                KubeCgroupIds ids;
                int r;

                memset(&ids, 'x', sizeof(ids));
                r = kube_parse_cgroup(parse_cases[i].path, &ids);
                ck_assert_msg(
                        r == parse_cases[i].ret && streq(ids.pod_uid, parse_cases[i].pod_uid) &&
                                streq(ids.container_id, parse_cases[i].container_id),
                        "case %zu \"%s\": got %d \"%s\" \"%s\", expected %d \"%s\" \"%s\"", i,
                        parse_cases[i].path, r, ids.pod_uid, ids.container_id, parse_cases[i].ret,
                        parse_cases[i].pod_uid, parse_cases[i].container_id);
        }
}
END_TEST

START_TEST(test_parse_cgroup_null) {
        KubeCgroupIds ids;

        memset(&ids, 'x', sizeof(ids));
        ck_assert_int_eq(kube_parse_cgroup(NULL, &ids), 0);
        ck_assert_str_eq(ids.pod_uid, "");
        ck_assert_str_eq(ids.container_id, "");
}
END_TEST

START_TEST(test_cpuset_path) {
        _cleanup_free_ char *p = NULL, *q = NULL;
        char *none = NULL;

        ck_assert_int_eq(
                kube_cpuset_cgroup_path(
                        "5:memory:/m\n3:cpu,cpuset:/kubepods/pod" UID_B "/" CID_B "\n1:x:/\n", &p),
                0);
        ck_assert_str_eq(p, "/kubepods/pod" UID_B "/" CID_B);
        ck_assert_int_eq(kube_cpuset_cgroup_path("2:cpuset:/last", &q), 0);
        ck_assert_str_eq(q, "/last");
        ck_assert_int_eq(kube_cpuset_cgroup_path("4:cpusetx:/a\n0::/b\n", &none), -ENODATA);
        ck_assert_int_eq(kube_cpuset_cgroup_path("", &none), -ENODATA);
        ck_assert_ptr_null(none);
}
END_TEST

/* ---- a fixture root ---------------------------------------------------------------------- */

static char *root;

/* ROOT/var/log/containers/NAME, a symlink to a file that is not there (nothing follows it). */
static void put_container_log(const char *name) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/var/log/containers/%s", root, name);
        ck_assert_int_eq(symlink("/var/log/pods/gone/0.log", path), 0);
}

static void put_pod_dir(const char *name) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/var/log/pods/%s", root, name);
        mkdir_p(path);
}

/* A fake process whose /proc/PID/cgroup is text. */
static void put_process(pid_t pid, const char *cgroup) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/proc/%d", root, (int)pid);
        mkdir_p(path);
        snprintf(path, sizeof(path), "%s/proc/%d/cgroup", root, (int)pid);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, cgroup, strlen(cgroup)), (ssize_t)strlen(cgroup));
        close(fd);
}

static void fixture_setup(void) {
        char path[PATH_MAX];

        root = make_tmpdir_named("test-kube");
        snprintf(path, sizeof(path), "%s/var/log/containers", root);
        mkdir_p(path);

        put_container_log("web-1_shop_nginx-" CID_A ".log");
        /* a container name with '-', a pod name with '-' and '.' */
        put_container_log("ingress-nginx-controller-7d9f.x_ingress-nginx_nginx-ingress-" CID_B ".log");
        /* not the kubelet's: skipped */
        put_container_log("README");
        put_container_log("a_b-" CID_C ".log");
        put_container_log("a_b_c_d-" CID_C ".log");
        put_container_log("_b_c-" CID_C ".log");
        put_container_log("a_b_-" CID_C ".log");
        put_container_log("a_b_c-" CID_C ".txt");
        put_container_log("a_b_c" CID_C ".log");
        put_container_log("a_b_c-C0FFEE00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00.log");

        put_pod_dir("shop_web-1_" UID_A);
        put_pod_dir("ingress-nginx_ingress-nginx-controller-7d9f.x_" UID_B);
        put_pod_dir("kube-system_kube-apiserver-node1_" UID_S);
        put_pod_dir("nonsense");
        put_pod_dir("a_b_c_" UID_A);
        put_pod_dir("a_b_" UID_A_);

        /* systemd driver, v2 */
        put_process(100, "0::" BURSTABLE_A "/cri-containerd-" CID_A ".scope\n");
        /* cgroupfs driver on a hybrid host: the name=systemd line */
        put_process(
                101,
                "12:name=systemd:/kubepods/besteffort/pod" UID_B "/" CID_B "\n4:memory:/kubepods\n0::/\n");
        /* the pod's sandbox (pause): a container no log symlink names */
        put_process(102, "0::" BURSTABLE_A "/cri-containerd-" CID_C ".scope\n");
        /* not in a pod */
        put_process(103, "0::/system.slice/sshd.service\n");
        /* v1 without systemd: only the cpuset line says where */
        put_process(104, "3:cpuset:/kubepods/besteffort/pod" UID_B "/" CID_B "\n2:memory:/\n");
        /* a static pod's container, no symlink: named by its pod directory */
        put_process(105, "0::/../../kubepods-burstable-pod" UID_S ".slice/cri-containerd-" CID_D ".scope\n");
}

static void fixture_teardown(void) {
        rm_rf(root);
        root = mfree(root);
}

/* The injected clock, µs. */
static uint64_t fake_now;

static uint64_t fake_clock(void *userdata) {
        ck_assert_ptr_eq(userdata, &fake_now);
        return fake_now;
}

static KubeRecords *records_new(uint64_t relist_usec) {
        KubeRecords *k = NULL;

        fake_now = 1000 * 1000;
        ck_assert_int_eq(kube_records_new(root, relist_usec, fake_clock, &fake_now, &k), 0);
        return k;
}

/* Looks up the IDs of a cgroup path; returns kube_records_lookup()'s result. */
static int lookup(KubeRecords *k, const char *path, KubeNames *ret) {
        KubeCgroupIds ids;

        ck_assert_int_eq(kube_parse_cgroup(path, &ids), 1);
        return kube_records_lookup(k, &ids, ret);
}

START_TEST(test_records) {
        KubeRecords *k = records_new(0);
        KubeNames n = {};

        ck_assert_uint_eq(kube_records_listings(k), 0); /* nothing read before a lookup */

        ck_assert_int_eq(lookup(k, BURSTABLE_A "/cri-containerd-" CID_A ".scope", &n), 1);
        ck_assert_str_eq(n.pod, "web-1");
        ck_assert_str_eq(n.pod_namespace, "shop");
        ck_assert_str_eq(n.container, "nginx");
        kube_names_done(&n);
        ck_assert_uint_eq(kube_records_listings(k), 1);

        /* By the container ID alone (a sibling in the reader's pod). */
        ck_assert_int_eq(lookup(k, "/../" CID_B, &n), 1);
        ck_assert_str_eq(n.pod, "ingress-nginx-controller-7d9f.x");
        ck_assert_str_eq(n.pod_namespace, "ingress-nginx");
        ck_assert_str_eq(n.container, "nginx-ingress");
        kube_names_done(&n);

        /* No symlink for the container: the pod's directory names the pod, not the container. */
        ck_assert_int_eq(lookup(k, BURSTABLE_A "/cri-containerd-" CID_C ".scope", &n), 1);
        ck_assert_str_eq(n.pod, "web-1");
        ck_assert_str_eq(n.pod_namespace, "shop");
        ck_assert_ptr_null(n.container);
        kube_names_done(&n);
        ck_assert_int_eq(lookup(k, BURSTABLE_A, &n), 1);
        ck_assert_str_eq(n.pod, "web-1");
        ck_assert_ptr_null(n.container);
        kube_names_done(&n);
        ck_assert_int_eq(lookup(k, "/kubepods.slice/kubepods-pod" UID_S ".slice", &n), 1);
        ck_assert_str_eq(n.pod, "kube-apiserver-node1");
        ck_assert_str_eq(n.pod_namespace, "kube-system");
        kube_names_done(&n);

        /* The names that are not the kubelet's gave nothing: CID_C is in several of them. */
        ck_assert_int_eq(lookup(k, "/../" CID_C, &n), 0);
        ck_assert_ptr_null(n.pod);
        ck_assert_int_eq(lookup(k, "/kubepods/pod" UID_A "/" CID_D, &n), 1); /* the directory */
        kube_names_done(&n);
        ck_assert_int_eq(lookup(k, "/kubepods/pod0a1b2c3d-0000-4111-8222-333344446666", &n), 0);
        ck_assert_ptr_null(n.pod);

        /* The misses came within the interval: still the one listing. */
        ck_assert_uint_eq(kube_records_listings(k), 1);
        kube_records_free(k);
}
END_TEST

START_TEST(test_records_missing_dirs) {
        KubeRecords *k = NULL;
        KubeNames n = {};
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/nothing-here", root);
        ck_assert_int_eq(kube_records_new(path, 0, NULL, NULL, &k), 0);
        ck_assert_int_eq(lookup(k, BURSTABLE_A "/cri-containerd-" CID_A ".scope", &n), 0);
        ck_assert_uint_eq(kube_records_listings(k), 1);
        ck_assert_ptr_null(kube_records_free(k));
        ck_assert_ptr_null(kube_records_free(NULL));
}
END_TEST

START_TEST(test_records_refresh) {
        KubeRecords *k = records_new(50 * 1000); /* 50 ms */
        const char *d = BURSTABLE_A "/cri-containerd-" CID_D ".scope";
        KubeNames n = {};

        ck_assert_int_eq(lookup(k, BURSTABLE_A "/cri-containerd-" CID_A ".scope", &n), 1);
        kube_names_done(&n);
        ck_assert_uint_eq(kube_records_listings(k), 1);

        /* A new container of pod A: its symlink appears. */
        put_container_log("web-1_shop_sidecar-" CID_D ".log");

        /* Within the interval it is not listed again: only the pod is known. */
        fake_now += 10 * 1000;
        for (unsigned i = 0; i < 1000; i++) {
                ck_assert_int_eq(lookup(k, d, &n), 1);
                ck_assert_ptr_null(n.container);
                kube_names_done(&n);
        }
        ck_assert_uint_eq(kube_records_listings(k), 1);

        /* Once the interval is over, the first miss lists again, and finds it. */
        fake_now += 40 * 1000;
        ck_assert_int_eq(lookup(k, d, &n), 1);
        ck_assert_str_eq(n.container, "sidecar");
        kube_names_done(&n);
        ck_assert_uint_eq(kube_records_listings(k), 2);

        /* Known IDs never list again, however late. */
        fake_now += 3600ULL * 1000 * 1000;
        for (unsigned i = 0; i < 100; i++) {
                ck_assert_int_eq(lookup(k, d, &n), 1);
                kube_names_done(&n);
                ck_assert_int_eq(lookup(k, "/../" CID_B, &n), 1);
                kube_names_done(&n);
        }
        ck_assert_uint_eq(kube_records_listings(k), 2);

        /* A flood of unknown IDs: one listing per interval, whatever their number. */
        for (unsigned round = 0; round < 5; round++) {
                for (unsigned i = 0; i < 200; i++) {
                        char path[128];

                        snprintf(path, sizeof(path), "/../%064x", i + round * 1000);
                        ck_assert_int_eq(lookup(k, path, &n), 0);
                }
                ck_assert_uint_eq(kube_records_listings(k), 3 + round);
                fake_now += 50 * 1000;
        }
        kube_records_free(k);
}
END_TEST

/* ---- matching ---------------------------------------------------------------------------- */

/* matcher_test() of m against fixture process pid with records k; the facts loaded go to
 * *ret_loaded (may be NULL). */
static int test_pid(const Matcher *m, KubeRecords *k, pid_t pid, unsigned *ret_loaded) {
        ProcessFacts f;
        int r;

        process_facts_init(&f, root, pid);
        f.kube = k;
        r = matcher_test(m, NULL, 0, &f);
        if (ret_loaded)
                *ret_loaded = f.loaded;
        process_facts_done(&f);
        return r;
}

/* A new record: the IDs from its name and its symlink's target, never followed. */
START_TEST(test_read_container_record) {
        char path[PATH_MAX];
        KubeCgroupIds ids;

        snprintf(path, sizeof(path), "%s/var/log/containers/db-0_shop_postgres-" CID_D ".log", root);
        ck_assert_int_eq(symlink("/var/log/pods/shop_db-0_" UID_A "/postgres/0.log", path), 0);
        ck_assert_int_eq(kube_read_container_record(root, "db-0_shop_postgres-" CID_D ".log", &ids), 1);
        ck_assert_str_eq(ids.pod_uid, UID_A);
        ck_assert_str_eq(ids.container_id, CID_D);

        /* A static pod's UID (32 hex digits). */
        snprintf(path, sizeof(path), "%s/var/log/containers/api_kube-system_api-" CID_C ".log", root);
        ck_assert_int_eq(symlink("/var/log/pods/kube-system_api_" UID_S "/api/3.log", path), 0);
        ck_assert_int_eq(kube_read_container_record(root, "api_kube-system_api-" CID_C ".log", &ids), 1);
        ck_assert_str_eq(ids.pod_uid, UID_S);

        /* Not the kubelet's: the name, or a target outside the pods' directories. */
        ck_assert_int_eq(kube_read_container_record(root, "README", &ids), 0);
        ck_assert_str_eq(ids.container_id, "");
        ck_assert_int_eq(kube_read_container_record(root, "web-1_shop_nginx-" CID_A ".log", &ids), 0);
        ck_assert_int_eq(kube_read_container_record(root, "gone_shop_x-" CID_B ".log", &ids), -ENOENT);
}
END_TEST

static bool has_path(char **paths, const char *path) {
        STRV_FOREACH (p, paths)
                if (streq(*p, path))
                        return true;
        return false;
}

/* Every cgroup path a container can have parses back to its IDs, and they are all different. */
START_TEST(test_container_cgroup_paths) {
        KubeCgroupIds ids = {.pod_uid = UID_A, .container_id = CID_A}, back, none = {};
        _cleanup_strv_free_ char **paths = NULL;
        size_t n = 0;

        ck_assert_int_eq(kube_container_cgroup_paths(&none, &paths), -EINVAL);
        ck_assert_int_eq(kube_container_cgroup_paths(&ids, &paths), 0);
        STRV_FOREACH (p, paths) {
                ck_assert_msg(kube_parse_cgroup(*p, &back) == 1, "%s does not parse", *p);
                ck_assert_msg(streq(back.pod_uid, UID_A) && streq(back.container_id, CID_A), "%s", *p);
                for (char **q = paths; q < p; q++)
                        ck_assert_str_ne(*p, *q);
                n++;
        }
        ck_assert_uint_eq(n, 21);
        ck_assert(has_path(paths, BURSTABLE_A "/cri-containerd-" CID_A ".scope"));
        ck_assert(has_path(paths, "/kubepods/besteffort/pod" UID_A "/" CID_A));
}
END_TEST

START_TEST(test_match_keys) {
        KubeRecords *k = records_new(0);
        Matcher ingress = {.pod_namespace = STRV("ingress-*"), .container = STRV("nginx-ingress")},
                shop = {.pod_namespace = STRV("shop")}, web = {.pod = STRV("web-*")},
                nginx = {.container = STRV("nginx")}, any_container = {.container = STRV("*")},
                both = {.pod = STRV("other", "web-1"), .container = STRV("nginx", "sidecar")},
                any_pod = {.pod = STRV("*")},
                apiserver = {.pod = STRV("kube-apiserver-*"), .pod_namespace = STRV("kube-system")};
        unsigned loaded = 0;

        ck_assert_int_eq(test_pid(&ingress, k, 101, &loaded), 1);
        ck_assert_uint_eq(loaded & (FACT_CGROUP | FACT_KUBE), FACT_CGROUP | FACT_KUBE);
        ck_assert_int_eq(test_pid(&ingress, k, 104, NULL), 1); /* through the v1 cpuset line */
        ck_assert_int_eq(test_pid(&ingress, k, 100, NULL), 0);
        ck_assert_int_eq(test_pid(&shop, k, 100, NULL), 1);
        ck_assert_int_eq(test_pid(&shop, k, 101, NULL), 0);
        ck_assert_int_eq(test_pid(&web, k, 100, NULL), 1);
        ck_assert_int_eq(test_pid(&web, k, 101, NULL), 0);
        ck_assert_int_eq(test_pid(&nginx, k, 100, NULL), 1);
        ck_assert_int_eq(test_pid(&nginx, k, 101, NULL), 0); /* a glob of the whole name */
        ck_assert_int_eq(test_pid(&both, k, 100, NULL), 1);
        ck_assert_int_eq(test_pid(&apiserver, k, 105, NULL), 1);

        /* The sandbox: its pod is known, its container is not (so not even "*" matches it). */
        ck_assert_int_eq(test_pid(&shop, k, 102, NULL), 1);
        ck_assert_int_eq(test_pid(&web, k, 102, NULL), 1);
        ck_assert_int_eq(test_pid(&any_container, k, 102, NULL), 0);
        ck_assert_int_eq(test_pid(&any_container, k, 100, NULL), 1);

        /* Not in a pod: nothing matches, not even "*", and the records are never listed. */
        {
                KubeRecords *fresh = records_new(0);

                ck_assert_int_eq(test_pid(&any_pod, fresh, 103, &loaded), 0);
                ck_assert_uint_eq(loaded & FACT_KUBE, 0);
                ck_assert_int_eq(test_pid(&any_container, fresh, 103, NULL), 0);
                ck_assert_uint_eq(kube_records_listings(fresh), 0);
                kube_records_free(fresh);
        }
        /* Without records, the keys match nothing. */
        ck_assert_int_eq(test_pid(&any_pod, NULL, 100, NULL), 0);
        /* A process that is gone. */
        ck_assert_int_eq(test_pid(&any_pod, k, 999, NULL), -ESRCH);
        kube_records_free(k);
}
END_TEST

START_TEST(test_match_order) {
        KubeRecords *k = records_new(0);
        /* comm, cgroup and unit come first: a failing one reads no Kubernetes fact. */
        Matcher m = {.comm = STRV("nope"), .pod = STRV("*")},
                cg = {.cgroup = STRV("/system.slice/*"), .pod = STRV("*")};
        unsigned loaded = 0;
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/proc/100/comm", root);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "nginx\n", 6), 6);
        close(fd);

        ck_assert_int_eq(test_pid(&m, k, 100, &loaded), 0);
        ck_assert_uint_eq(loaded & FACT_KUBE, 0);
        ck_assert_int_eq(test_pid(&cg, k, 100, &loaded), 0);
        ck_assert_uint_eq(loaded & FACT_KUBE, 0);
        ck_assert_uint_eq(kube_records_listings(k), 0);
        m.comm = STRV("nginx");
        ck_assert_int_eq(test_pid(&m, k, 100, &loaded), 1);
        ck_assert_uint_eq(loaded & FACT_KUBE, FACT_KUBE);
        kube_records_free(k);
}
END_TEST

/* The lines of matcher_explain() for m against pid, joined by '\n', and the failed text. */
static int explain(const Matcher *m, KubeRecords *k, pid_t pid, char **ret_text, char **ret_failed) {
        _cleanup_strv_free_ char **lines = NULL;
        ProcessFacts f;
        size_t size = 1;
        int r;

        process_facts_init(&f, root, pid);
        f.kube = k;
        r = matcher_explain(m, NULL, 0, &f, &lines, ret_failed);
        process_facts_done(&f);
        ck_assert_int_ge(r, 0);
        STRV_FOREACH (l, lines)
                size += strlen(*l) + 1;
        *ret_text = calloc(1, size);
        ck_assert_ptr_nonnull(*ret_text);
        STRV_FOREACH (l, lines) {
                strcat(*ret_text, *l);
                if (l[1])
                        strcat(*ret_text, "\n");
        }
        return r;
}

START_TEST(test_explain) {
        KubeRecords *k = records_new(0);
        Matcher m = {
                .pod = STRV("web-*"),
                .pod_namespace = STRV("ingress-*", "shop"),
                .container = STRV("nginx")};
        _cleanup_free_ char *text = NULL, *failed = NULL, *text2 = NULL, *failed2 = NULL, *text3 = NULL,
                            *failed3 = NULL;

        ck_assert_int_eq(explain(&m, k, 100, &text, &failed), 1);
        ck_assert_str_eq(
                text,
                "pod \"web-1\" matches \"web-*\"\nnamespace \"shop\" matches \"shop\"\n"
                "container \"nginx\" matches \"nginx\"");
        ck_assert_str_eq(failed, "");

        ck_assert_int_eq(explain(&m, k, 102, &text2, &failed2), 0);
        ck_assert_str_eq(
                text2,
                "pod \"web-1\" matches \"web-*\"\nnamespace \"shop\" matches \"shop\"\n"
                "container unknown (could not be read) does not match \"nginx\"");
        ck_assert_str_eq(failed2, "container unknown (could not be read) does not match \"nginx\"");

        ck_assert_int_eq(explain(&m, k, 101, &text3, &failed3), 0);
        ck_assert_str_eq(
                text3,
                "pod \"ingress-nginx-controller-7d9f.x\" does not match \"web-*\"\n"
                "namespace \"ingress-nginx\" matches \"ingress-*\"\n"
                "container \"nginx-ingress\" does not match \"nginx\"");
        kube_records_free(k);
}
END_TEST

int main(void) {
        Suite *s = suite_create("kube");
        TCase *parse = tcase_create("parse"), *fx = tcase_create("fixtures");
        SRunner *sr;
        int failed;

        tcase_add_test(parse, test_parse_cgroup);
        tcase_add_test(parse, test_parse_cgroup_null);
        tcase_add_test(parse, test_cpuset_path);
        suite_add_tcase(s, parse);

        tcase_add_checked_fixture(fx, fixture_setup, fixture_teardown);
        tcase_add_test(fx, test_records);
        tcase_add_test(fx, test_records_missing_dirs);
        tcase_add_test(fx, test_records_refresh);
        tcase_add_test(fx, test_read_container_record);
        tcase_add_test(parse, test_container_cgroup_paths);
        tcase_add_test(fx, test_match_keys);
        tcase_add_test(fx, test_match_order);
        tcase_add_test(fx, test_explain);
        suite_add_tcase(s, fx);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
