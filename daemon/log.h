/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging for affinityd: syslog levels (err, warning, notice, info, debug), written either to
 * the systemd journal through its native protocol (sd_journal_sendv(3)), with structured
 * fields POLICY=, PID=, COMM=, CPUS= where the caller gives them, or to stderr as
 * "affinityd: message"; messages about devices carry IRQ= (the IRQ number) and INTERFACE= (a
 * network interface name, as systemd-networkd logs it). The journal is used when asked for, or
 * automatically when stderr is already connected to the journal (the JOURNAL_STREAM environment
 * variable names the device:inode of fd 2, as systemd sets it for services).
 *
 * The log_*() macros evaluate their arguments only when the level is enabled, so debug
 * messages on hot paths cost one comparison when debug logging is off. The log_*_errno()
 * forms take an error (positive or negative errno, or 0), make "%m" print it, and return
 * -abs(error), so "return log_error_errno(r, "...: %m");" is the idiom.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <syslog.h>

#include "macro.h"

typedef enum LogTarget {
        LOG_TARGET_AUTO,    /* the journal if stderr is connected to it, else stderr */
        LOG_TARGET_CONSOLE, /* stderr */
        LOG_TARGET_JOURNAL, /* the journal's native protocol */
        _LOG_TARGET_MAX,
        _LOG_TARGET_INVALID = -EINVAL,
} LogTarget;

/*
 * Journal message IDs (MESSAGE_ID=, 128-bit, as `systemd-id128 new` makes them), one per kind of
 * event, so that `journalctl MESSAGE_ID=… POLICY=db` finds every placement of a policy. Stable:
 * scripts depend on them; documented in affinityd(8).
 */
#define AFFINITYD_MESSAGE_STARTED          "52147dbbc21d471cb0b1f8e143e1c430"
#define AFFINITYD_MESSAGE_STOPPED          "56f2f7494edd45eba7d4c9c6aa01107e"
#define AFFINITYD_MESSAGE_PROCESS_PLACED   "f3ef3557485149bfbdce989b86b57403"
#define AFFINITYD_MESSAGE_PLACEMENT_FAILED "c954a3e220b0424fac32c12acb6b5088"
#define AFFINITYD_MESSAGE_RELOADED         "0df1d9ba4bc04958ac5b2d1221319721"
#define AFFINITYD_MESSAGE_RELOAD_FAILED    "6e10ac077b6746df89e7bc3ba6c425e3"
#define AFFINITYD_MESSAGE_DRIFT            "d14e73f299254bea86d04596ad426f16"
#define AFFINITYD_MESSAGE_IRQ_SKEW         "9f091e2acc4946fea83ace7b4bd337a8"
#define AFFINITYD_MESSAGE_IRQ_PLACED       "e5965756ec054261b6591a6f0b2ea52d"
#define AFFINITYD_MESSAGE_IRQ_REFUSED      "f99a9022dda84eda876b21a04325ed0d"
#define AFFINITYD_MESSAGE_RESTORED         "07c5c4c6d3944f46a3197ab5dfe652b9"
#define AFFINITYD_MESSAGE_CPU_INTRUSION    "59f04376404e497eb7524a3ba56baac1"

/* Structured journal fields for one message; NULL strings and pid 0 are left out. */
typedef struct LogFields {
        const char *message_id; /* MESSAGE_ID= (one of AFFINITYD_MESSAGE_*) */
        const char *policy;     /* POLICY= */
        pid_t pid;              /* PID= (the process the message is about, not the daemon's) */
        const char *comm;       /* COMM= */
        const char *cpus;       /* CPUS= (a cpu-list of OS CPU numbers) */
        const char *cpu;        /* CPU= (one OS CPU number, decimal) */
        const char *irq;        /* IRQ= (the IRQ number, decimal) */
        const char *interface;  /* INTERFACE= (a network interface name) */
        const char *device;     /* DEVICE= (a network interface name or PCI address) */
} LogFields;

/* Messages with a level numerically above this (less severe) are dropped. Default LOG_INFO. */
void log_set_max_level(int level);
int log_get_max_level(void);
/* True if a message at level would be written (to skip preparing costly arguments). */
static inline bool log_level_enabled(int level) {
        return level <= log_get_max_level();
}

/*
 * Parses a level name: "emerg", "alert", "crit", "err" (or "error"), "warning" (or "warn"),
 * "notice", "info", "debug", or a number 0..7. Returns the syslog level or -EINVAL.
 */
int log_level_from_string(const char *s);

/* Parses "auto", "console" (or "stderr"), "journal". Returns a LogTarget or -EINVAL. */
LogTarget log_target_from_string(const char *s);

/*
 * Chooses where messages go. LOG_TARGET_AUTO checks JOURNAL_STREAM against fstat(2) of fd 2
 * now. Call again after changing the target; before the first call messages go to stderr.
 */
void log_set_target(LogTarget t);

/*
 * Writes one message (format is printf(3) with "%m" = strerror(abs(error)); errno is
 * preserved). fields may be NULL. Returns -abs(error) (0 when error is 0). Use the macros.
 */
_printf_(7, 8) int log_internal(
        int level, int error, const char *file, int line, const char *func, const LogFields *fields,
        const char *format, ...);

#define log_full_errno_fields(level, error, fields, ...) \
        ({ \
                int _level_ = (level), _e_ = (error); \
                log_level_enabled(_level_) \
                        ? log_internal(_level_, _e_, __FILE__, __LINE__, __func__, (fields), __VA_ARGS__) \
                        : -abs(_e_); \
        })

#define log_full_errno(level, error, ...) log_full_errno_fields(level, error, NULL, __VA_ARGS__)
#define log_full(level, ...)              ((void)log_full_errno(level, 0, __VA_ARGS__))

#define log_debug(...)   log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)    log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...)  log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...)   log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...)   log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_info_errno(error, ...)    log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_notice_errno(error, ...)  log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...)   log_full_errno(LOG_ERR, error, __VA_ARGS__)

/*
 * A message about one process/policy, with the journal fields POLICY=, PID=, COMM=, CPUS=
 * (any may be NULL/0). Returns -abs(error), like the _errno forms:
 *   log_struct(LOG_WARNING, r, "db", pid, comm, "2-3", "Failed to …: %m");
 */
#define log_struct(level, error, _policy, _pid, _comm, _cpus, ...) \
        log_full_errno_fields( \
                level, error, \
                (&(const LogFields){.policy = (_policy), .pid = (_pid), .comm = (_comm), .cpus = (_cpus)}), \
                __VA_ARGS__)

/* log_struct() with a MESSAGE_ID= (one of AFFINITYD_MESSAGE_*), for the events operators
 * search for: log_struct_id(LOG_INFO, 0, AFFINITYD_MESSAGE_RESTORED, "db", pid, comm, cpus, "…"). */
#define log_struct_id(level, error, _id, _policy, _pid, _comm, _cpus, ...) \
        log_full_errno_fields( \
                level, error, \
                (&(const LogFields){ \
                        .message_id = (_id), \
                        .policy = (_policy), \
                        .pid = (_pid), \
                        .comm = (_comm), \
                        .cpus = (_cpus)}), \
                __VA_ARGS__)

/* log_device() with a MESSAGE_ID= (one of AFFINITYD_MESSAGE_*). */
#define log_device_id(level, error, _id, _policy, _irq, _interface, _cpus, ...) \
        log_full_errno_fields( \
                level, error, \
                (&(const LogFields){ \
                        .message_id = (_id), \
                        .policy = (_policy), \
                        .irq = (_irq), \
                        .interface = (_interface), \
                        .cpus = (_cpus)}), \
                __VA_ARGS__)

/*
 * A message about a device target, with the journal fields POLICY= (the irqs:/net: rule), IRQ=
 * (decimal text), INTERFACE= and CPUS= (any may be NULL). Returns -abs(error):
 *   log_device(LOG_WARNING, r, "nic", "38", NULL, "1", "Kernel refused …: %m");
 */
#define log_device(level, error, _policy, _irq, _interface, _cpus, ...) \
        log_full_errno_fields( \
                level, error, \
                (&(const LogFields){ \
                        .policy = (_policy), .irq = (_irq), .interface = (_interface), .cpus = (_cpus)}), \
                __VA_ARGS__)

/*
 * A simple rate limit for messages that could repeat per event: at most burst messages per
 * interval_usec (CLOCK_MONOTONIC µs). Zero-initialise the state part.
 */
typedef struct RateLimit {
        uint64_t interval_usec;
        unsigned burst;
        uint64_t begin_usec; /* start of the current interval */
        unsigned num;        /* messages let through in it */
        unsigned suppressed; /* dropped since the last one let through */
} RateLimit;

/*
 * True if another message may go out now. When it returns true after dropping some,
 * *ret_suppressed (may be NULL) is how many were dropped, so the caller can say so; else 0.
 */
bool ratelimit_below(RateLimit *rl, unsigned *ret_suppressed);
