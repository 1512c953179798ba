/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Joining a thread in a test that then expects its TID to be gone.
 *
 * pthread_join(3) returns when the kernel clears the thread's TID word (CLONE_CHILD_CLEARTID),
 * which it does in exit_mm(), before exit_notify() releases the task. For that short window the
 * TID is still in the PID hash: sched_setaffinity(2), tgkill(2) and /proc/PID/task/TID all still
 * find it. A test that asserts "gone" right after the join fails now and then under load.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Joins thread, then waits until tid (a thread of this process) is no longer known to the
 * kernel, polling tgkill(getpid(), tid, 0) every 100 µs for at most 10 s. Returns 0, or the
 * pthread_join() error, or -ETIMEDOUT if the TID was still there after 10 s.
 */
static inline int thread_join_gone(pthread_t thread, pid_t tid) {
        int r = pthread_join(thread, NULL);

        if (r != 0)
                return r;
        for (unsigned i = 0; i < 100000; i++) {
                if (syscall(SYS_tgkill, getpid(), tid, 0) < 0 && errno == ESRCH)
                        return 0;
                nanosleep(&(struct timespec){.tv_nsec = 100 * 1000}, NULL);
        }
        return -ETIMEDOUT;
}
