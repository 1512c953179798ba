/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The originals journal: the persisted originals of every process (lib/state.h's StateProcess)
 * in one append-only file, STATE_DIR/originals, instead of a file per process. Placing a process
 * costs one write(2) on an open descriptor, not a create, a rename and later an unlink.
 *
 * File format (text, one record per line):
 *
 *   affinityd-originals 1
 *   save process PID STARTTIME;default AFFINITY SCHED;thread TID AFFINITY SCHED;...
 *   drop PID STARTTIME
 *
 * A "save" line holds the lines of a state file (lib/state.h, without its first line) joined
 * by ';': it replaces whatever an earlier line recorded for that PID and starttime. A "drop"
 * line forgets the process (it exited, or got its originals back). Replaying the file from the
 * top gives the originals of the processes that still need them.
 *
 * Crash safety: a "save" line is written, in one write(2), before the daemon first writes to
 * the process, so a daemon killed at any moment leaves the original of every process it has
 * changed. "drop" lines may be written later, in batches: a lost one only leaves a record of a
 * process that is gone (its starttime tells) or already has its originals back. A last line
 * without its newline (a write cut short) is ignored when reading; after a failed write the next
 * record starts on a new line, so one torn record never spoils the next. The file is compacted
 * (rewritten with only the live records, through a temporary file renamed over it) when it has
 * grown well beyond what it holds.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"

#define STATE_JOURNAL_NAME "originals"

typedef struct StateJournal StateJournal;

/*
 * Opens DIR/originals for appending, creating DIR (mode 0755) and the file (0644, with its
 * header line) when absent. An existing file is appended to as it is. Returns 0 with a new
 * journal in *ret, -ENOMEM, or -errno (mkdir(2), open(2), write(2)).
 */
int state_journal_open(const char *dir, StateJournal **ret);

/* Flushes pending drops (state_journal_flush(); a failure is ignored) and closes the journal.
 * NULL accepted; returns NULL. */
StateJournal *state_journal_free(StateJournal *j);

/*
 * Appends a "save" record of s, preceded by the pending "drop" records, in one write(2).
 * Returns 0; -EINVAL for what state_format() refuses; -ENOMEM; or -errno of write(2) (the
 * record is then not saved; pending drops stay pending).
 */
int state_journal_save(StateJournal *j, const StateProcess *s);

/* Queues a "drop" record of the process pid/starttime, written by the next
 * state_journal_save() or state_journal_flush(). Returns 0 or -ENOMEM. */
int state_journal_drop(StateJournal *j, pid_t pid, uint64_t starttime);

/* True if drop records are queued. */
bool state_journal_pending(const StateJournal *j);

/* Writes the queued drop records. Returns 0 or -errno of write(2) (they stay queued). */
int state_journal_flush(StateJournal *j);

/*
 * True if the file has grown to at least 1 MiB and to 4 times what n_live records would take
 * (n_live: the processes the caller still has saved; the size of a record is the average
 * "save" line written since the journal was opened or rewritten): time to
 * state_journal_rewrite().
 */
bool state_journal_wants_rewrite(const StateJournal *j, size_t n_live);

/*
 * Replaces the file by one holding exactly the n records of s (header and one "save" line
 * each), written to DIR/.originals.tmp and renamed over it, and appends to the new file from
 * then on. Queued drops are discarded (the new file holds only what s says). Returns 0, -EINVAL
 * (state_format()), -ENOMEM or -errno (open(2), write(2), rename(2)); on failure the old file
 * stays as it was, and in use.
 */
int state_journal_rewrite(StateJournal *j, const StateProcess *s, size_t n);

/* The file's size in bytes, as this journal has written it (for tests and the compaction). */
uint64_t state_journal_size(const StateJournal *j);

/*
 * Replays DIR/originals: the processes with a "save" and no later "drop", sorted by PID then
 * starttime, into a newly allocated array *ret (NULL when none) of *ret_n. A file that does not
 * exist is an empty list. A line that can't be parsed (a NUL byte in it too) is skipped, and a
 * "PATH:LINE: reason" message for it appended to *ret_warnings (a NULL-terminated, newly
 * allocated vector; NULL when none; pass NULL to not collect them); a last line without its
 * newline is skipped silently (cut short by a crash). Returns 0; -EBADMSG (with
 * "PATH:1: not an affinityd originals journal" in *ret_warnings) when the first line is not the
 * header; -ENOMEM; or other -errno (open(2), read(2)).
 */
int state_journal_read(const char *dir, StateProcess **ret, size_t *ret_n, char ***ret_warnings);

/* Frees the n processes of a state_journal_read() array and the array. */
void state_process_array_free(StateProcess *a, size_t n);
