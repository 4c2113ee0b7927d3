/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * offline — what splitkd does with catalogs without serving them, one
 * call each: --check-catalog FILE, --diff OLD NEW and --dump-catalog
 * (--pretty). Each reads its files as every reload does (catsource_load),
 * writes its answer on stdout and its errors on stderr, and returns the
 * process's exit status.
 *
 * Never starts a thread, opens a socket or touches the state directory.
 * Frees what it loads before it returns; keeps nothing. Call from the
 * main thread only (stdout and stderr are written directly).
 */
#ifndef SPLITKD_OFFLINE_H
#define SPLITKD_OFFLINE_H

#include "cli.h"

/* --check-catalog FILE: "FILE: ok: N targets, M models, digest D" on
 * stdout and 0, or why on stderr and 1. */
int offline_check_catalog(const char *path);

/* --diff OLD NEW: the answer of POST /v1/catalog/diff on stdout (with
 * --max-batch-size, --num-seqs, --max-rows and --override); 0 when it
 * lists nothing, 1 when it lists anything (an entry added or removed, any
 * field of one changed, a decision), 2 when a file is invalid or the
 * answer cannot be written. */
int offline_diff(const struct server_config *cfg);

/* --dump-catalog: the catalog in use (cfg->catalog_path's, or the
 * embedded one) in its canonical writing on stdout, re-indented with
 * --pretty; 0, or 1 when it cannot be read (why on stderr) or written. */
int offline_dump_catalog(const struct server_config *cfg);

#endif /* SPLITKD_OFFLINE_H */
