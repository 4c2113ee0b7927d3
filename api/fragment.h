/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * fragment — the one writer of a decision's answer object: the members a
 * field mask names (fields.h), in the answer's order, written in one go
 * from literal fragments. Every key, colon and comma is part of a literal
 * whose length the compiler knows; numbers go straight into the output; a
 * string is copied whole when it needs no escaping and passed through
 * jsonw_escape (the writer's own rules) when it does. A writer call per
 * key and per value was a tenth of a GET's instructions; the whole answer
 * has a copy of its own (fragment_write_all) with every mask test folded
 * away.
 *
 * Every way a decision is written goes through here: answer_write (GET,
 * the batch, `fields=`, explain after these members). tests/unit/
 * test_fragment.c holds it to a writer call per member (a reference kept
 * in the tests) byte for byte over a sweep of decisions and hostile echoed
 * input, and the golden answers hold the bytes. No allocation (the caller
 * provides fragment_bound bytes); thread-safe (no state).
 */
#ifndef SPLITKD_FRAGMENT_H
#define SPLITKD_FRAGMENT_H

#include <stddef.h>

#include "catalog.h"
#include "decide.h"

/* The most bytes fragment_write can write for d: a bound, not the length. */
size_t fragment_bound(const struct decision *d, const struct catalog *cat);

/* Writes d's answer object with the members in mask (FM_EXPLAIN is not
 * this writer's: answer_write adds it) into out, which holds
 * fragment_bound(d, cat) bytes. Returns the bytes written; no NUL. */
size_t fragment_write(char *out, const struct decision *d, const struct catalog *cat,
		      unsigned mask);
/* fragment_write with every member but explain: the same body, its mask a
 * constant, for the whole answer (GET, the batch). */
size_t fragment_write_all(char *out, const struct decision *d, const struct catalog *cat);

#endif /* SPLITKD_FRAGMENT_H */
