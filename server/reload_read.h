/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * reload_read — the one bounded reader of the files splitkd follows and
 * keeps: a file read whole (a regular file only, at most the caller's
 * bound), and the files of one source read together, into their bytes and
 * one key that tells one content (or one failure) from another without
 * keeping the bytes.
 *
 * reload.c reads every source's files through reload_read_files (and
 * catsource.c a catalog file's the same way); state.c and journal.c read
 * the state directory's files through reload_read_bytes.
 *
 * Never parses what it reads, retries, or blocks on a FIFO put in a
 * file's place. Keeps nothing between calls, so it is thread-safe. Who
 * frees: reload_read_bytes' buffer is the caller's (free), and
 * reload_read_files' texts are freed by reload_read_texts_cleanup.
 */
#ifndef SPLITKD_RELOAD_READ_H
#define SPLITKD_RELOAD_READ_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define RELOAD_READ_MAX_FILES 4 /* read together: the TLS files are three */

/* What a read of the files found; `key` tells one content (or one
 * failure) from another without keeping the bytes. */
struct reload_read {
	enum api_disk_state state; /* SAME (valid), INVALID, MISSING or UNREADABLE */
	uint64_t key;
	char error[API_STATUS_TEXT];
};

/* One file to read: its path and the flag that named it, for the errors
 * ("--tls-key /etc/k.pem: ..."; NULL: the path alone). */
struct reload_read_file {
	const char *flag;
	const char *path; /* borrowed */
};

/* One file's bytes as a read found them (never empty). */
struct reload_read_text {
	const char *data;
	size_t len;
};

/* The files of one read: files[i] is the i-th file's bytes, in data[i]
 * (owned: reload_read_texts_cleanup frees them). */
struct reload_read_texts {
	char *data[RELOAD_READ_MAX_FILES];
	struct reload_read_text files[RELOAD_READ_MAX_FILES];
};

/*
 * Reads a whole file of at most `max` bytes into a new heap buffer (the
 * caller frees it): only a regular file (a FIFO or a directory put in its
 * place is refused, and never blocks the open), read to its end. NULL with
 * rd filled (MISSING, UNREADABLE, or INVALID when larger than max; the
 * reason, naming the path, in rd->error); on success only *len is set.
 */
char *reload_read_bytes(const char *path, size_t max, size_t *len, struct reload_read *rd);

/*
 * Reads every one of `files` (at most RELOAD_READ_MAX_FILES, each at most
 * `max` bytes) into t: 0 with rd->state SAME and rd->key the content's,
 * or -1 with the first failure in rd (an empty file is one: INVALID), its
 * reason naming the file's flag and path, and nothing left in t. The key
 * covers every file, each one's length in its seed, so bytes moved from
 * one file to the next are a change; a failure's key names the file. rd
 * and t are filled either way; reload_read_texts_cleanup t after.
 */
int reload_read_files(const struct reload_read_file *files, size_t num, size_t max,
		      struct reload_read_texts *t, struct reload_read *rd);

/*
 * What stat(2) says of every one of `files` (the file a symlink names):
 * its device, inode, size, modification and change times, hashed, or
 * each one's failure. Never 0. Equal stamps: none of the files was
 * replaced or written since (the watch's periodic check reads a source
 * again only when its stamp moved; a rotated certificate, a rename over
 * a catalog or a symlink swapped each move it). Opens nothing.
 */
uint64_t reload_read_stamp(const struct reload_read_file *files, size_t num);

/* Frees what reload_read_files read into t (safe after a failure, and
 * twice). */
void reload_read_texts_cleanup(struct reload_read_texts *t);

#endif /* SPLITKD_RELOAD_READ_H */
