/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Joining the node's cgroup namespace from a container (cgroup-ns.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-ns.h"
#include "cgroup.h"
#include "log.h"
#include "macro.h"
#include "procfs.h"

/* True if the cgroup.procs file in dir lists pid. */
static bool procs_lists(const char *dir, pid_t pid) {
        _cleanup_free_ char *path = strprintf("%s/cgroup.procs", dir);
        _cleanup_fclose_ FILE *f = path ? fopen(path, "re") : NULL;
        int p;

        while (f && fscanf(f, "%d", &p) == 1)
                if (p == pid)
                        return true;
        return false;
}

/*
 * Whether /sys/fs/cgroup shows the tree the daemon's cgroup paths are in: the directory its own
 * path names there (on the hierarchy cpusets are read from) lists it. If not — a node's tree
 * seen from a namespace of the container's own, or a container's own tree after joining the
 * node's namespace — no path is looked up (cgroup_set_unresolvable()), and that is said.
 */
static void check_cgroup_tree(bool joined) {
        _cleanup_free_ char *text = NULL;
        _cleanup_strv_free_ char **dirs = NULL;
        int r;

        r = cgroup_read_membership(NULL, getpid(), &text);
        if (r >= 0)
                r = cgroup_cpuset_dirs(NULL, text, &dirs);
        if (r == -ENODATA)
                return; /* no cpuset hierarchy: nothing is read from the tree */
        if (r < 0)
                return (void)log_debug_errno(r, "Failed to find the daemon's own cgroup directory: %m");
        if (!dirs[0] || procs_lists(dirs[0], getpid()))
                return;
        cgroup_set_unresolvable(true);
        log_warning(
                "%s does not list the daemon, though its cgroup path names it: /sys/fs/cgroup is not the "
                "tree of the %s cgroup namespace (%s; docs/kubernetes.md). The cpusets of processes are "
                "not read: within: cpuset uses the policy's CPUs",
                dirs[0], joined ? "node's" : "daemon's",
                joined ? "in a container, mount the node's /sys/fs/cgroup"
                       : "the daemon could not join the node's");
}

int cgroup_ns_join_init(void) {
        _cleanup_close_ int fd = -EBADF;
        struct stat self, node;
        ProcfsStat st;

        /* kthreadd is PID 2 of the initial PID namespace, the only one kernel threads are in: a
         * kernel thread there means the node's processes are ours to see (hostPID). */
        if (procfs_read_stat(NULL, 2, 0, &st) < 0 || !(st.flags & PROCFS_PF_KTHREAD))
                return 0;
        if (stat("/proc/self/ns/cgroup", &self) < 0 || stat("/proc/2/ns/cgroup", &node) < 0)
                return 0; /* no cgroup namespaces here */
        if (self.st_dev == node.st_dev && self.st_ino == node.st_ino)
                return 0;

        fd = open("/proc/2/ns/cgroup", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWCGROUP) < 0) {
                int r = -errno;

                log_notice_errno(
                        r,
                        "Running in a cgroup namespace of its own, and could not join the node's: %m. "
                        "Cgroup paths are read relative to it: pod:, namespace: and container: work, "
                        "cgroup: globs see relative paths, and within: cpuset uses the policy's CPUs");
                check_cgroup_tree(false);
                return r;
        }
        log_info("Joined the node's cgroup namespace: cgroup paths are read as the node sees them");
        check_cgroup_tree(true);
        return 1;
}
