/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kubernetes facts about a process (kube.h): the pod UID and container ID in its cgroup path,
 * and the names the kubelet's log records give them.
 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube.h"
#include "macro.h"
#include "util.h"

/* ---- cgroup paths ----------------------------------------------------------------------- */

/* Whether the n bytes at s are all lowercase hex digits. */
static bool is_lower_hex(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/*
 * Whether the n bytes at s are a pod UID with sep between its groups (a UUID, 8-4-4-4-12) or a
 * static pod's 32 hex digits; copies it into ret (KUBE_POD_UID_MAX + 1 bytes) with '-'.
 */
static bool parse_pod_uid(const char *s, size_t n, char sep, char *ret) {
        if (n == 32) {
                if (!is_lower_hex(s, n))
                        return false;
        } else if (n == 36) {
                for (size_t i = 0; i < n; i++) {
                        bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                        if (dash ? s[i] != sep : !is_lower_hex(s + i, 1))
                                return false;
                }
        } else
                return false;
        for (size_t i = 0; i < n; i++)
                ret[i] = s[i] == sep ? '-' : s[i];
        ret[n] = '\0';
        return true;
}

/* Whether component c (n bytes) is equal to the string s. */
static bool component_is(const char *c, size_t n, const char *s) {
        return strlen(s) == n && memcmp(c, s, n) == 0;
}

/* Whether component c (n bytes) starts with prefix; then *rest and *rest_n are what follows. */
static bool component_strip(const char *c, size_t n, const char *prefix, const char **rest, size_t *rest_n) {
        size_t k = strlen(prefix);

        if (n < k || memcmp(c, prefix, k) != 0)
                return false;
        *rest = c + k;
        *rest_n = n - k;
        return true;
}

/* Whether component c (*n bytes) ends with suffix; then *n is shortened to leave it out. */
static bool component_strip_suffix(const char *c, size_t *n, const char *suffix) {
        size_t k = strlen(suffix);

        if (*n <= k || memcmp(c + *n - k, suffix, k) != 0)
                return false;
        *n -= k;
        return true;
}

/* A pod component (kube.h): the systemd driver's slice or the cgroupfs driver's "pod<uid>". The
 * UID goes to uid. */
static bool parse_pod_component(const char *c, size_t n, char *uid) {
        static const char *const slices[] = {
                "kubepods-pod", "kubepods-burstable-pod", "kubepods-besteffort-pod"};
        const char *rest;
        size_t rest_n, stem = n;

        if (component_strip_suffix(c, &stem, ".slice"))
                for (size_t i = 0; i < ELEMENTSOF(slices); i++)
                        if (component_strip(c, stem, slices[i], &rest, &rest_n))
                                return parse_pod_uid(rest, rest_n, '_', uid);
        return component_strip(c, n, "pod", &rest, &rest_n) && parse_pod_uid(rest, rest_n, '-', uid);
}

typedef enum ContainerComponent {
        CONTAINER_NONE,     /* not a container's cgroup */
        CONTAINER_ID,       /* a container's: the ID was copied */
        CONTAINER_NOT_OURS, /* the runtime's own (CRI-O's conmon): no container */
} ContainerComponent;

/* A container component (kube.h); the ID goes to id (KUBE_CONTAINER_ID_LEN + 1 bytes). */
static ContainerComponent parse_container_component(const char *c, size_t n, char *id) {
        static const char *const prefixes[] = {"cri-containerd-", "crio-", "docker-"};
        bool scope = component_strip_suffix(c, &n, ".scope");
        const char *rest = c;
        size_t rest_n = n, i;

        if (component_strip(c, n, "crio-conmon-", &rest, &rest_n))
                return rest_n == KUBE_CONTAINER_ID_LEN && is_lower_hex(rest, rest_n) ? CONTAINER_NOT_OURS
                                                                                     : CONTAINER_NONE;
        for (i = 0; i < ELEMENTSOF(prefixes); i++)
                if (component_strip(c, n, prefixes[i], &rest, &rest_n))
                        break;
        if (i == ELEMENTSOF(prefixes) && scope)
                return CONTAINER_NONE; /* a bare ID is cgroupfs's: never a scope */
        if (rest_n != KUBE_CONTAINER_ID_LEN || !is_lower_hex(rest, rest_n))
                return CONTAINER_NONE;
        memcpy(id, rest, rest_n);
        id[rest_n] = '\0';
        return CONTAINER_ID;
}

/* The levels of the kubelet's cgroup tree, top down. */
typedef enum KubeLevel {
        LEVEL_NONE = -1,
        LEVEL_ROOT,      /* "kubepods.slice", "kubepods" */
        LEVEL_QOS,       /* "kubepods-burstable.slice", "burstable", and besteffort's */
        LEVEL_POD,       /* parse_pod_component() */
        LEVEL_CONTAINER, /* parse_container_component(), the runtime's own included */
} KubeLevel;

/* The level of component c (n bytes), its UID or ID copied into ids. */
static KubeLevel classify_component(const char *c, size_t n, KubeCgroupIds *ids) {
        static const char *const roots[] = {"kubepods.slice", "kubepods"};
        static const char *const qos[] = {
                "kubepods-burstable.slice", "kubepods-besteffort.slice", "burstable", "besteffort"};

        for (size_t i = 0; i < ELEMENTSOF(roots); i++)
                if (component_is(c, n, roots[i]))
                        return LEVEL_ROOT;
        for (size_t i = 0; i < ELEMENTSOF(qos); i++)
                if (component_is(c, n, qos[i]))
                        return LEVEL_QOS;
        if (parse_pod_component(c, n, ids->pod_uid))
                return LEVEL_POD;
        if (parse_container_component(c, n, ids->container_id) != CONTAINER_NONE)
                return LEVEL_CONTAINER;
        return LEVEL_NONE;
}

int kube_parse_cgroup(const char *path, KubeCgroupIds *ret) {
        KubeCgroupIds ids = {};
        KubeLevel prev = LEVEL_NONE;
        bool relative;
        const char *p = path;

        *ret = (KubeCgroupIds){};
        if (!p)
                return 0;
        /* A path relative to the reader's cgroup namespace: "/.." up to a common ancestor (or no
         * leading '/' at all), then down. */
        relative = p[0] != '/' || startswith(p, "/../") || streq(p, "/..");

        /*
         * The kubelet's tree must be the whole path: from its top-level cgroup (which only root
         * can create), or in a relative path from right after the ".."s (where the reader's
         * namespace, inside that tree, meets it), one level after another (the QoS level may be
         * left out). So a delegated subtree elsewhere (user@UID.service) can't pass for a pod,
         * and what a container creates below its own cgroup is never looked at.
         */
        for (bool leading = relative;;) {
                KubeCgroupIds this = {};
                KubeLevel level;
                const char *e;
                size_t n;
                bool ok;

                p += strspn(p, "/");
                if (!*p || prev == LEVEL_CONTAINER)
                        break;
                e = strchrnul(p, '/');
                n = (size_t)(e - p);
                if (leading && component_is(p, n, "..")) {
                        p = e;
                        continue;
                }
                leading = false;

                level = classify_component(p, n, &this);
                if (prev == LEVEL_NONE)
                        ok = relative ? level != LEVEL_NONE : level == LEVEL_ROOT;
                else
                        ok = level == prev + 1 || (prev == LEVEL_ROOT && level == LEVEL_POD);
                if (!ok)
                        break;
                if (level == LEVEL_POD)
                        memcpy(ids.pod_uid, this.pod_uid, sizeof(ids.pod_uid));
                else if (level == LEVEL_CONTAINER)
                        memcpy(ids.container_id, this.container_id, sizeof(ids.container_id));
                prev = level;
                p = e;
        }

        if (!ids.pod_uid[0] && !ids.container_id[0])
                return 0;
        *ret = ids;
        return 1;
}

int kube_cpuset_cgroup_path(const char *text, char **ret) {
        for (const char *line = text; line && *line;) {
                const char *nl = strchrnul(line, '\n'), *c1, *c2;

                /* "hierarchy-ID:controller-list:cgroup-path" (cgroups(7)) */
                c1 = memchr(line, ':', (size_t)(nl - line));
                c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;
                if (c2) {
                        for (const char *c = c1 + 1; c < c2;) {
                                const char *comma = memchr(c, ',', (size_t)(c2 - c)) ?: c2;

                                if (component_is(c, (size_t)(comma - c), "cpuset")) {
                                        char *s = strndup(c2 + 1, (size_t)(nl - c2 - 1));

                                        if (!s)
                                                return -ENOMEM;
                                        *ret = s;
                                        return 0;
                                }
                                c = comma + 1;
                        }
                }
                line = *nl ? nl + 1 : nl;
        }
        return -ENODATA;
}

/* ---- the kubelet's records -------------------------------------------------------------- */

/* One log symlink: the container's ID, and "pod\0namespace\0container\0". */
typedef struct KubeContainer {
        char id[KUBE_CONTAINER_ID_LEN + 1];
        char *names;
} KubeContainer;

/* One pod log directory: the pod's UID, and "pod\0namespace\0". */
typedef struct KubePod {
        char uid[KUBE_POD_UID_MAX + 1];
        char *names;
} KubePod;

struct KubeRecords {
        pthread_mutex_t lock;
        char *root;
        uint64_t relist_usec;
        KubeClock clock;
        void *userdata;
        bool listed; /* listed at least once, at listed_usec */
        uint64_t listed_usec;
        unsigned listings;
        KubeContainer *containers; /* by id */
        size_t n_containers;
        KubePod *pods; /* by uid */
        size_t n_pods;
};

void kube_names_done(KubeNames *n) {
        if (!n)
                return;
        free(n->pod);
        free(n->pod_namespace);
        free(n->container);
        *n = (KubeNames){};
}

static uint64_t default_clock(void *userdata) {
        return now_monotonic_usec();
}

int kube_records_new(
        const char *root, uint64_t relist_usec, KubeClock clock, void *userdata, KubeRecords **ret) {
        KubeRecords *k;

        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        k->root = strdup(root_prefix(root));
        if (!k->root) {
                free(k);
                return -ENOMEM;
        }
        pthread_mutex_init(&k->lock, NULL);
        k->relist_usec = relist_usec ?: KUBE_RELIST_USEC;
        k->clock = clock ?: default_clock;
        k->userdata = userdata;
        *ret = k;
        return 0;
}

static void containers_free(void *array, size_t n) {
        KubeContainer *c = array;

        for (size_t i = 0; i < n; i++)
                free(c[i].names);
        free(c);
}

static void pods_free(void *array, size_t n) {
        KubePod *p = array;

        for (size_t i = 0; i < n; i++)
                free(p[i].names);
        free(p);
}

KubeRecords *kube_records_free(KubeRecords *k) {
        if (!k)
                return NULL;
        containers_free(k->containers, k->n_containers);
        pods_free(k->pods, k->n_pods);
        pthread_mutex_destroy(&k->lock);
        free(k->root);
        free(k);
        return NULL;
}

/*
 * "a\0b\0c\0" from the n_parts strings starts[i] of lens[i] bytes, newly allocated, or NULL on
 * OOM.
 */
static char *join_names(const char *const *starts, const size_t *lens, size_t n_parts) {
        size_t size = 0;
        char *s, *p;

        for (size_t i = 0; i < n_parts; i++)
                size += lens[i] + 1;
        s = p = malloc(size);
        if (!s)
                return NULL;
        for (size_t i = 0; i < n_parts; i++) {
                memcpy(p, starts[i], lens[i]);
                p += lens[i];
                *p++ = '\0';
        }
        return s;
}

/*
 * A name of /var/log/containers, "<pod>_<namespace>_<container>-<id>.log" (neither the pod
 * nor the namespace can hold '_'; the container's name can hold '-', the ID is the last 64 hex
 * digits before ".log"), into *ret. Returns 1, 0 (not the kubelet's), -ENOMEM.
 */
static int parse_container_log(const char *name, void *entry) {
        KubeContainer *ret = entry;
        size_t len = strlen(name), head;
        const char *id, *u1, *u2;

        if (len < strlen(".log") + KUBE_CONTAINER_ID_LEN + 1 || !streq(name + len - strlen(".log"), ".log"))
                return 0;
        id = name + len - strlen(".log") - KUBE_CONTAINER_ID_LEN;
        if (!is_lower_hex(id, KUBE_CONTAINER_ID_LEN) || id[-1] != '-')
                return 0;
        head = (size_t)(id - 1 - name);
        u1 = memchr(name, '_', head);
        u2 = u1 ? memchr(u1 + 1, '_', head - (size_t)(u1 + 1 - name)) : NULL;
        if (!u2 || u1 == name || u2 == u1 + 1 || u2 + 1 == id - 1 ||
            memchr(u2 + 1, '_', (size_t)(id - 1 - (u2 + 1))))
                return 0;

        ret->names = join_names(
                (const char *const[]){name, u1 + 1, u2 + 1},
                (const size_t[]){(size_t)(u1 - name), (size_t)(u2 - u1 - 1), (size_t)(id - 1 - (u2 + 1))},
                3);
        if (!ret->names)
                return -ENOMEM;
        memcpy(ret->id, id, KUBE_CONTAINER_ID_LEN);
        ret->id[KUBE_CONTAINER_ID_LEN] = '\0';
        return 1;
}

/*
 * A name of /var/log/pods, "<namespace>_<pod>_<uid>", into *ret (names "pod\0namespace\0").
 * Returns 1, 0 (not the kubelet's), -ENOMEM.
 */
static int parse_pod_log_dir(const char *name, void *entry) {
        KubePod *ret = entry;
        const char *u1 = strchr(name, '_'), *u2 = u1 ? strchr(u1 + 1, '_') : NULL;

        if (!u2 || u1 == name || u2 == u1 + 1 || strchr(u2 + 1, '_') ||
            !parse_pod_uid(u2 + 1, strlen(u2 + 1), '-', ret->uid))
                return 0;
        ret->names = join_names(
                (const char *const[]){u1 + 1, name},
                (const size_t[]){(size_t)(u2 - u1 - 1), (size_t)(u1 - name)}, 2);
        return ret->names ? 1 : -ENOMEM;
}

static int compare_container(const void *a, const void *b) {
        return strcmp(((const KubeContainer *)a)->id, ((const KubeContainer *)b)->id);
}

static int compare_pod(const void *a, const void *b) {
        return strcmp(((const KubePod *)a)->uid, ((const KubePod *)b)->uid);
}

/*
 * The names in directory ROOT/dir that parse takes (it fills an entry of size bytes and
 * returns 1, or 0 to skip the name, or -ENOMEM) into a new array sorted by compare; on failure
 * array_free frees what was parsed. A missing or unreadable directory gives none. Returns 0 or
 * -ENOMEM.
 */
static int list_records(
        const char *root, const char *dir, size_t size, int (*parse)(const char *, void *),
        int (*compare)(const void *, const void *), void (*array_free)(void *, size_t), void **ret,
        size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *path = NULL;
        uint8_t *a = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;

        if (asprintf(&path, "%s%s", root, dir) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        d = opendir(path);
        while (d && (de = readdir(d))) {
                int r;

                if (n == cap) {
                        uint8_t *b = reallocarray(a, cap ? cap * 2 : 64, size);

                        if (!b) {
                                array_free(a, n);
                                return -ENOMEM;
                        }
                        a = b;
                        cap = cap ? cap * 2 : 64;
                }
                r = parse(de->d_name, a + n * size);
                if (r < 0) {
                        array_free(a, n);
                        return r;
                }
                n += r;
        }
        if (n > 0)
                qsort(a, n, size, compare);
        *ret = a;
        *ret_n = n;
        return 0;
}

/* Lists both directories again, at now (µs), replacing the tables. Returns 0 or -ENOMEM (the
 * old tables kept). Called with the lock held. */
static int records_list(KubeRecords *k, uint64_t now) {
        void *containers = NULL, *pods = NULL;
        size_t n_containers = 0, n_pods = 0;
        int r;

        r = list_records(
                k->root, "/var/log/containers", sizeof(KubeContainer), parse_container_log,
                compare_container, containers_free, &containers, &n_containers);
        if (r < 0)
                return r;
        r = list_records(
                k->root, "/var/log/pods", sizeof(KubePod), parse_pod_log_dir, compare_pod, pods_free, &pods,
                &n_pods);
        if (r < 0) {
                containers_free(containers, n_containers);
                return r;
        }
        containers_free(k->containers, k->n_containers);
        pods_free(k->pods, k->n_pods);
        k->containers = containers;
        k->n_containers = n_containers;
        k->pods = pods;
        k->n_pods = n_pods;
        k->listed = true;
        k->listed_usec = now;
        k->listings++;
        return 0;
}

/* Copies the n_parts names of "a\0b\0…" into the fields of ret (pod, namespace, container).
 * Returns 0 or -ENOMEM. */
static int names_copy(const char *names, size_t n_parts, KubeNames *ret) {
        char **fields[] = {&ret->pod, &ret->pod_namespace, &ret->container};

        for (size_t i = 0; i < n_parts; i++) {
                *fields[i] = strdup(names);
                if (!*fields[i]) {
                        kube_names_done(ret);
                        return -ENOMEM;
                }
                names += strlen(names) + 1;
        }
        return 0;
}

/* The names for ids in k's tables into *ret. Returns 1 found (ret->container set when the
 * container was), 0 not; *ret_miss says whether a listing might find more. -ENOMEM. */
static int records_find(KubeRecords *k, const KubeCgroupIds *ids, KubeNames *ret, bool *ret_miss) {
        const KubeContainer *c = NULL;
        const KubePod *p = NULL;

        if (ids->container_id[0]) {
                KubeContainer key = {};

                strcpy(key.id, ids->container_id);
                /* bsearch(3) takes no NULL array, even of 0 elements */
                if (k->n_containers > 0)
                        c =
                                bsearch(&key, k->containers, k->n_containers, sizeof(KubeContainer),
                                        compare_container);
                if (c) {
                        *ret_miss = false;
                        return names_copy(c->names, 3, ret) ?: 1;
                }
        }
        if (ids->pod_uid[0]) {
                KubePod key = {};

                strcpy(key.uid, ids->pod_uid);
                if (k->n_pods > 0)
                        p = bsearch(&key, k->pods, k->n_pods, sizeof(KubePod), compare_pod);
        }
        *ret_miss = true; /* the container (or, without one, the pod) is not known yet */
        if (!p)
                return 0;
        return names_copy(p->names, 2, ret) ?: 1;
}

int kube_records_lookup(KubeRecords *k, const KubeCgroupIds *ids, KubeNames *ret) {
        KubeNames names = {};
        bool miss = false;
        uint64_t now;
        int r;

        pthread_mutex_lock(&k->lock);
        now = k->clock(k->userdata);
        if (!k->listed) {
                r = records_list(k, now);
                if (r < 0)
                        goto finish;
        }
        r = records_find(k, ids, &names, &miss);
        if (r >= 0 && miss && now - k->listed_usec >= k->relist_usec) {
                kube_names_done(&names);
                r = records_list(k, now);
                if (r >= 0)
                        r = records_find(k, ids, &names, &miss);
        }
finish:
        pthread_mutex_unlock(&k->lock);
        if (r <= 0) {
                kube_names_done(&names);
                *ret = (KubeNames){};
                return r;
        }
        *ret = names;
        return 1;
}

int kube_records_relist(KubeRecords *k) {
        int r;

        pthread_mutex_lock(&k->lock);
        r = records_list(k, k->clock(k->userdata));
        pthread_mutex_unlock(&k->lock);
        return r;
}

unsigned kube_records_listings(KubeRecords *k) {
        unsigned n;

        pthread_mutex_lock(&k->lock);
        n = k->listings;
        pthread_mutex_unlock(&k->lock);
        return n;
}

/* ---- a new container record ---- */

int kube_read_container_record(const char *root, const char *name, KubeCgroupIds *ret) {
        _cleanup_free_ char *path = NULL, *dir = NULL;
        KubeContainer c = {};
        KubePod pod = {};
        char target[PATH_MAX];
        const char *pods, *end;
        ssize_t n;
        int r;

        *ret = (KubeCgroupIds){};
        r = parse_container_log(name, &c);
        if (r <= 0)
                return r;
        free(c.names);
        if (asprintf(&path, "%s/var/log/containers/%s", root && !streq(root, "/") ? root : "", name) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        /* ".../var/log/pods/<namespace>_<pod>_<uid>/<container>/<restarts>.log" */
        pods = strstr(target, "/pods/");
        if (!pods)
                return 0;
        pods += strlen("/pods/");
        end = strchrnul(pods, '/');
        dir = strndup(pods, (size_t)(end - pods));
        if (!dir)
                return -ENOMEM;
        r = parse_pod_log_dir(dir, &pod);
        if (r <= 0)
                return r;
        free(pod.names);
        memcpy(ret->pod_uid, pod.uid, sizeof(ret->pod_uid));
        memcpy(ret->container_id, c.id, sizeof(ret->container_id));
        return 1;
}

/* A name made of a prefix, a UID or ID, and a suffix. */
typedef struct Affix {
        const char *prefix, *suffix;
} Affix;

int kube_container_cgroup_paths(const KubeCgroupIds *ids, char ***ret) {
        /* The pod's cgroup under each driver and QoS class, around the UID (with '_' for '-' under
         * systemd); then the container's, around the ID. */
        static const Affix systemd_pods[] = {
                {"/kubepods.slice/kubepods-pod", ".slice"},
                {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod", ".slice"},
                {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod", ".slice"},
        };
        static const Affix cgroupfs_pods[] = {
                {"/kubepods/pod", ""}, {"/kubepods/burstable/pod", ""}, {"/kubepods/besteffort/pod", ""}};
        static const Affix systemd_containers[] = {
                {"cri-containerd-", ".scope"}, {"crio-", ".scope"}, {"docker-", ".scope"}};
        static const Affix cgroupfs_containers[] = {
                {"", ""}, {"crio-", ""}, {"docker-", ""}, {"cri-containerd-", ""}};
        static const struct {
                const Affix *pods, *containers;
                size_t n_pods, n_containers;
                char uid_sep;
        } drivers[] = {
                {systemd_pods, systemd_containers, ELEMENTSOF(systemd_pods), ELEMENTSOF(systemd_containers),
                 '_'},
                {cgroupfs_pods, cgroupfs_containers, ELEMENTSOF(cgroupfs_pods),
                 ELEMENTSOF(cgroupfs_containers), '-'},
        };
        _cleanup_strv_free_ char **paths = NULL;
        char uid[KUBE_POD_UID_MAX + 1];
        int r;

        if (!ids->pod_uid[0] || !ids->container_id[0])
                return -EINVAL;
        for (size_t d = 0; d < ELEMENTSOF(drivers); d++) {
                memcpy(uid, ids->pod_uid, sizeof(uid));
                for (char *c = uid; *c; c++)
                        if (*c == '-')
                                *c = drivers[d].uid_sep;
                for (size_t i = 0; i < drivers[d].n_pods; i++)
                        for (size_t k = 0; k < drivers[d].n_containers; k++) {
                                const Affix *pod = &drivers[d].pods[i], *c = &drivers[d].containers[k];

                                r = strv_extendf(
                                        &paths, "%s%s%s/%s%s%s", pod->prefix, uid, pod->suffix, c->prefix,
                                        ids->container_id, c->suffix);
                                if (r < 0)
                                        return r;
                        }
        }
        *ret = TAKE_PTR(paths);
        return 0;
}
