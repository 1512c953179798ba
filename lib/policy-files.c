/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The files of a configuration (policy-yaml.h): affinityd.yaml and the drop-in policy.d
 * directories with their override and masking rules, --config-dir and the paths affinityctl
 * validate is given, each file read whole and handed to config_parse_string(); then the checks
 * across files (config_verify()): duplicate policy names, real-time classes without
 * allow-realtime:, avoid: names no policy has.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "policy-yaml-internal.h"

#define FILE_SIZE_MAX (16U * 1024U * 1024U) /* bytes */

const char *const policy_dirs_default[] = {
        AFFINITYD_VENDOR_POLICY_DIR,
        AFFINITYD_RUNTIME_DIR "/policy.d",
        AFFINITYD_CONF_DIR "/policy.d",
        NULL,
};

const char config_settings_default[] = AFFINITYD_CONF_DIR "/" SETTINGS_NAME;

static void note_io_error(int *io_error, int r) {
        if (*io_error == 0)
                *io_error = r;
}

/* Reads and parses one file. Read failures are diagnostics (and *io_error); returns 0 or -ENOMEM. */
static int load_file(
        Config *c, const char *path, bool is_settings, bool missing_ok, Diagnostics *diag, int *io_error) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        /* A regular file, read whole: -EISDIR, -EBADFD (not a regular file), -EFBIG (more than
         * FILE_SIZE_MAX bytes), -ESTALE (changed while being read). */
        r = read_full_file(path, FILE_SIZE_MAX, READ_FULL_REGULAR, &text, &size);
        if (r == -ENOENT && missing_ok)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note_io_error(io_error, r);
                if (r == -EBADFD)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: not a regular file");
                if (r == -EFBIG)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: larger than %u MiB",
                                FILE_SIZE_MAX / 1024 / 1024);
                if (r == -ESTALE)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0,
                                "cannot read: the file changed while being read (try again)");
                if (r == -EISDIR)
                        return diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: is a directory");
                return diagnostics_add(diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read: %s", strerror(-r));
        }

        r = config_parse_string(c, path, text, size, is_settings, diag);
        return r == -ENOMEM ? r : 0;
}

typedef struct DropIn {
        char *name;
        char *path;
        size_t priority; /* index of its directory: higher wins */
        bool masked;
} DropIn;

static void dropins_free(DropIn *d, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(d[i].name);
                free(d[i].path);
        }
        free(d);
}

static int dropin_compare(const void *a, const void *b) {
        const DropIn *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        if (c != 0)
                return c;
        return x->priority < y->priority ? -1 : x->priority > y->priority;
}

static bool is_dev_null(const struct stat *st) {
        return S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3);
}

/* A symlink to /dev/null (or the device node itself) masks the name. */
static bool dropin_is_mask(int dfd, const char *name) {
        char target[sizeof("/dev/null")];
        struct stat st;
        ssize_t n;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return false;
        if (!S_ISLNK(st.st_mode))
                return is_dev_null(&st);
        n = readlinkat(dfd, name, target, sizeof target);
        if (n == (ssize_t)strlen("/dev/null") && memcmp(target, "/dev/null", (size_t)n) == 0)
                return true;
        return fstatat(dfd, name, &st, 0) >= 0 && is_dev_null(&st);
}

static bool endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);

        return a >= b && streq(s + a - b, suffix);
}

/*
 * The *.yaml files of dirs after override and masking, sorted by name. Unreadable directories
 * are diagnostics (and *io_error). Returns 0 or -ENOMEM.
 */
static int dropins_collect(
        const char *const *dirs, Diagnostics *diag, int *io_error, DropIn **ret, size_t *ret_n) {
        DropIn *list = NULL;
        size_t n = 0, k = 0;
        int r = 0;

        for (size_t p = 0; dirs && dirs[p] && r >= 0; p++) {
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;

                d = opendir(dirs[p]);
                if (!d) {
                        if (errno == ENOENT)
                                continue;
                        note_io_error(io_error, -errno);
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, dirs[p], 0, 0, "cannot read directory: %s",
                                strerror(errno));
                        continue;
                }

                for (errno = 0; (de = readdir(d)); errno = 0) {
                        DropIn *a = NULL;

                        if (de->d_name[0] == '.' || !endswith(de->d_name, ".yaml"))
                                continue;
                        a = reallocarray(list, n + 1, sizeof(DropIn));
                        if (!a) {
                                r = -ENOMEM;
                                break;
                        }
                        list = a;
                        list[n] = (DropIn){
                                .name = strdup(de->d_name),
                                .priority = p,
                                .masked = dropin_is_mask(dirfd(d), de->d_name),
                        };
                        n++;
                        if (!list[n - 1].name ||
                            asprintf(&list[n - 1].path, "%s/%s", dirs[p], de->d_name) < 0) {
                                list[n - 1].path = NULL;
                                r = -ENOMEM;
                                break;
                        }
                }
                if (r >= 0 && errno != 0) {
                        note_io_error(io_error, -errno);
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, dirs[p], 0, 0, "cannot read directory: %s",
                                strerror(errno));
                }
        }
        if (r < 0) {
                dropins_free(list, n);
                return r;
        }

        if (n > 0)
                qsort(list, n, sizeof(DropIn), dropin_compare);

        /* Keep the last (highest priority) entry of each name, and drop masks. */
        for (size_t i = 0; i < n; i++) {
                if ((i + 1 < n && streq(list[i].name, list[i + 1].name)) || list[i].masked) {
                        free(list[i].name);
                        free(list[i].path);
                        continue;
                }
                list[k++] = list[i];
        }

        *ret = list;
        *ret_n = k;
        return 0;
}

static int load_dirs_into(
        Config *c, const char *settings_path, const char *const *policy_dirs, Diagnostics *diag,
        int *io_error) {
        DropIn *list = NULL;
        size_t n = 0;
        int r;

        if (settings_path) {
                r = load_file(c, settings_path, true, true, diag, io_error);
                if (r < 0)
                        return r;
        }

        r = dropins_collect(policy_dirs, diag, io_error, &list, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = load_file(c, list[i].path, false, false, diag, io_error);
        dropins_free(list, n);
        return r;
}

/* What one of the loaders reads into c (as arg says). Read failures are diagnostics (and
 * *io_error). Returns 0, or a negative errno that ends the load (-ENOMEM, or reported). */
typedef int (*LoadFunc)(Config *c, const void *arg, Diagnostics *diag, int *io_error);

/* The frame of the loaders: diag or a dummy, a new Config, fn, the checks across files, the
 * result. */
static int config_load_with(LoadFunc fn, const void *arg, Config **ret, Diagnostics *diag) {
        _cleanup_(diagnostics_done) Diagnostics dummy = {};
        _cleanup_(config_freep) Config *c = NULL;
        unsigned errors;
        int io_error = 0, r;

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        c = config_new();
        if (!c)
                return -ENOMEM;
        r = fn(c, arg, diag, &io_error);
        if (r < 0)
                return r;

        r = config_verify(c, diag);
        if (r == -ENOMEM)
                return r;
        if (io_error < 0)
                return io_error;
        if (diag->n_errors > errors)
                return -EINVAL;
        *ret = TAKE_PTR(c);
        return 0;
}

typedef struct DirsArgs {
        const char *settings_path;
        const char *const *policy_dirs;
} DirsArgs;

static int load_dirs(Config *c, const void *arg, Diagnostics *diag, int *io_error) {
        const DirsArgs *a = arg;

        return load_dirs_into(c, a->settings_path, a->policy_dirs, diag, io_error);
}

int config_load_dirs(
        const char *settings_path, const char *const *policy_dirs, Config **ret, Diagnostics *diag) {
        return config_load_with(
                load_dirs, &(DirsArgs){.settings_path = settings_path, .policy_dirs = policy_dirs}, ret,
                diag);
}

/* What a directory the user named holds. */
typedef enum DirKind {
        DIR_KIND_CONFIG,   /* affinityd.yaml or policy.d/ (whatever their type) */
        DIR_KIND_POLICIES, /* neither, but *.yaml files: a policy.d directory itself */
        DIR_KIND_NOTHING,  /* neither, and no *.yaml file */
} DirKind;

/* Looks into the directory path. Returns 0 and *ret, or the -errno of opendir/readdir. */
static int dir_classify(const char *path, DirKind *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        struct stat st;
        bool yaml = false;

        d = opendir(path);
        if (!d)
                return -errno;
        if (fstatat(dirfd(d), SETTINGS_NAME, &st, AT_SYMLINK_NOFOLLOW) >= 0 ||
            fstatat(dirfd(d), "policy.d", &st, AT_SYMLINK_NOFOLLOW) >= 0) {
                *ret = DIR_KIND_CONFIG;
                return 0;
        }
        for (errno = 0; (de = readdir(d)); errno = 0)
                if (de->d_name[0] != '.' && endswith(de->d_name, ".yaml")) {
                        yaml = true;
                        break;
                }
        if (!de && errno != 0)
                return -errno;
        *ret = yaml ? DIR_KIND_POLICIES : DIR_KIND_NOTHING;
        return 0;
}

/* Whether path names a *.yaml file by its name (trailing slashes ignored). */
static bool path_is_yaml_name(const char *path) {
        size_t n = strlen(path);

        while (n > 1 && path[n - 1] == '/')
                n--;
        return n >= strlen(".yaml") && memcmp(path + n - strlen(".yaml"), ".yaml", strlen(".yaml")) == 0;
}

/* Loads DIR/affinityd.yaml and DIR/policy.d/ *.yaml into c. Returns 0 or -ENOMEM. */
static int load_config_dir_into(Config *c, const char *dir, Diagnostics *diag, int *io_error) {
        _cleanup_free_ char *settings = NULL, *policy_dir = NULL;

        if (asprintf(&settings, "%s/" SETTINGS_NAME, dir) < 0) {
                settings = NULL;
                return -ENOMEM;
        }
        if (asprintf(&policy_dir, "%s/policy.d", dir) < 0) {
                policy_dir = NULL;
                return -ENOMEM;
        }
        return load_dirs_into(c, settings, (const char *const[]){policy_dir, NULL}, diag, io_error);
}

/*
 * Checks that config_dir is a configuration directory: an error when it is empty, missing,
 * not a directory, or looks like a policy.d directory; a warning when it holds neither
 * affinityd.yaml nor policy.d/. Returns 0 (go on), -EINVAL (reported: a usage mistake),
 * -ENOMEM, or the -errno of stat/opendir (reported).
 */
static int config_dir_check(const char *config_dir, Diagnostics *diag) {
        struct stat st;
        DirKind kind;
        int r;

        if (isempty(config_dir)) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, NULL, 0, 0,
                        "the configuration directory is an empty string (give a directory that holds "
                        "affinityd.yaml and policy.d/)");
                return r < 0 ? r : -EINVAL;
        }
        if (stat(config_dir, &st) < 0) {
                int error = -errno;

                if (error == -ENOENT)
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                                "configuration directory does not exist");
                else
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                                "cannot read configuration directory: %s", strerror(-error));
                return r < 0 ? r : error;
        }
        if (!S_ISDIR(st.st_mode)) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                        "not a directory (the configuration directory holds affinityd.yaml and policy.d/)");
                return r < 0 ? r : -ENOTDIR;
        }

        r = dir_classify(config_dir, &kind);
        if (r < 0) {
                int q = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, config_dir, 0, 0, "cannot read directory: %s", strerror(-r));
                return q < 0 ? q : r;
        }
        switch (kind) {
        case DIR_KIND_CONFIG:
                return 0;
        case DIR_KIND_POLICIES:
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, config_dir, 0, 0,
                        "looks like a policy.d directory (it holds *.yaml files, but no " SETTINGS_NAME
                        " and no policy.d/): pass its parent");
                return r < 0 ? r : -EINVAL;
        case DIR_KIND_NOTHING:
                r = diagnostics_add(
                        diag, DIAGNOSTIC_WARNING, config_dir, 0, 0,
                        "no " SETTINGS_NAME " and no policy.d/ in this directory: no policies");
                return r < 0 ? r : 0;
        }
        return 0;
}

/* --config-dir=DIR: DIR checked (config_dir_check()), then read. */
static int load_config_dir(Config *c, const void *arg, Diagnostics *diag, int *io_error) {
        int r;

        r = config_dir_check(arg, diag);
        if (r < 0)
                return r;
        return load_config_dir_into(c, arg, diag, io_error);
}

int config_load(const char *config_dir, Config **ret, Diagnostics *diag) {
        if (!config_dir)
                return config_load_dirs(config_settings_default, policy_dirs_default, ret, diag);
        return config_load_with(load_config_dir, config_dir, ret, diag);
}

/* One directory argument of config_load_paths(). Returns 0 or -ENOMEM. */
static int load_path_dir(Config *c, const char *path, Diagnostics *diag, int *io_error) {
        DirKind kind;
        int r;

        if (path_is_yaml_name(path)) {
                note_io_error(io_error, -EISDIR);
                return diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, path, 0, 0,
                        "cannot read: is a directory (expected a YAML file, a configuration directory or "
                        "a policy.d directory)");
        }

        r = dir_classify(path, &kind);
        if (r < 0) {
                note_io_error(io_error, r);
                return diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, path, 0, 0, "cannot read directory: %s", strerror(-r));
        }
        switch (kind) {
        case DIR_KIND_CONFIG:
                return load_config_dir_into(c, path, diag, io_error);
        case DIR_KIND_POLICIES:
                return load_dirs_into(c, NULL, (const char *const[]){path, NULL}, diag, io_error);
        case DIR_KIND_NOTHING:
                break;
        }
        return diagnostics_add(
                diag, DIAGNOSTIC_WARNING, path, 0, 0,
                "no " SETTINGS_NAME ", no policy.d/ and no *.yaml file in this directory: nothing to read");
}

/* The paths of config_load_paths(), a NULL-terminated strv, in order. */
static int load_paths(Config *c, const void *arg, Diagnostics *diag, int *io_error) {
        char *const *paths = arg;
        int r;

        STRV_FOREACH (path, paths) {
                struct stat st;

                if (stat(*path, &st) < 0) {
                        note_io_error(io_error, -errno);
                        r = diagnostics_add(
                                diag, DIAGNOSTIC_ERROR, *path, 0, 0, "cannot read: %s", strerror(errno));
                } else if (S_ISDIR(st.st_mode))
                        r = load_path_dir(c, *path, diag, io_error);
                else {
                        const char *base = strrchr(*path, '/');

                        base = base ? base + 1 : *path;
                        r = load_file(c, *path, streq(base, SETTINGS_NAME), false, diag, io_error);
                }
                if (r < 0)
                        return r;
        }

        return 0;
}

int config_load_paths(char *const *paths, Config **ret, Diagnostics *diag) {
        return config_load_with(load_paths, paths, ret, diag);
}

static int policy_compare_name(const void *a, const void *b) {
        return strcmp(((const Policy *)a)->name, ((const Policy *)b)->name);
}

static void noop_free(void *p) {
}

/* One scheduler: against the real-time opt-in. Returns 0 or -ENOMEM. */
static int verify_realtime_spec(const SchedulerSpec *s, Diagnostics *diag) {
        int r;

        if (s->has_policy && (s->policy == SCHED_FIFO || s->policy == SCHED_RR)) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, s->policy_location.file, s->policy_location.line,
                        s->policy_location.column,
                        "scheduler: policy %s needs allow-realtime: true in " SETTINGS_NAME
                        " (a runaway real-time thread can starve the machine)",
                        sched_policy_to_string(s->policy));
                if (r < 0)
                        return r;
        }
        if (s->has_io && s->io_class == POLICY_IOPRIO_CLASS_RT) {
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, s->io_location.file, s->io_location.line,
                        s->io_location.column,
                        "scheduler: io: class realtime needs allow-realtime: true in " SETTINGS_NAME
                        " (real-time I/O can starve every other reader and writer of the device)");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Real-time classes (CPU and I/O) are refused unless the settings opt in. Returns 0 or -ENOMEM. */
static int verify_realtime(const Config *c, Diagnostics *diag) {
        int r;

        if (c->allow_realtime)
                return 0;
        for (size_t i = 0; i < c->n_policies; i++) {
                const Policy *p = &c->policies[i];

                r = verify_realtime_spec(&p->scheduler, diag);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < p->n_threads; j++) {
                        r = verify_realtime_spec(&p->threads[j].scheduler, diag);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The names of one selector's avoid: are policies of c. Returns 0 or -ENOMEM. */
static int verify_avoid_selector(const Config *c, const CpuSelector *s, Diagnostics *diag) {
        int r;

        for (size_t i = 0; i < s->n_avoid; i++) {
                const Location *l = &s->avoid_locations[i];

                if (config_find_policy(c, s->avoid[i]))
                        continue;
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, l->file, l->line, l->column,
                        "avoid: no policy is named \"%s\" in the configuration (avoid: names process "
                        "policies, or is the word policies)",
                        s->avoid[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* avoid: of the irqs: and net: rules names policies that exist (in any file). Returns 0 or
 * -ENOMEM. */
static int verify_avoid(const Config *c, Diagnostics *diag) {
        int r;

        for (size_t i = 0; i < c->n_irq_rules; i++) {
                r = verify_avoid_selector(c, &c->irq_rules[i].cpus, diag);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < c->n_net_rules; i++) {
                r = verify_avoid_selector(c, &c->net_rules[i].rps, diag);
                if (r < 0)
                        return r;
                r = verify_avoid_selector(c, &c->net_rules[i].xps_cpus, diag);
                if (r < 0)
                        return r;
        }
        return 0;
}

int config_verify(const Config *c, Diagnostics *diag) {
        _cleanup_(diagnostics_done) Diagnostics dummy = {};
        void *root = NULL;
        unsigned errors;
        int r = 0;

        if (!diag)
                diag = &dummy;
        errors = diag->n_errors;

        for (size_t i = 0; i < c->n_policies && r >= 0; i++) {
                const Policy *p = &c->policies[i], *first = NULL;
                void *node = NULL;

                if (!p->name)
                        continue;
                node = tsearch(p, &root, policy_compare_name);
                if (!node) {
                        r = -ENOMEM;
                        break;
                }
                first = *(const Policy **)node;
                if (first == p)
                        continue;
                r = diagnostics_add(
                        diag, DIAGNOSTIC_ERROR, p->name_location.file, p->name_location.line,
                        p->name_location.column, "duplicate policy name \"%s\" (first defined at %s:%u:%u)",
                        p->name, strna(first->name_location.file), first->name_location.line,
                        first->name_location.column);
        }
        tdestroy(root, noop_free);
        if (r < 0)
                return r;

        r = verify_realtime(c, diag);
        if (r < 0)
                return r;
        r = verify_avoid(c, diag);
        if (r < 0)
                return r;
        return diag->n_errors > errors ? -EINVAL : 0;
}
