/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * fragment — a decision's answer object written in one go from literal
 * fragments: the same bytes as answer_write (without "explain"), for the
 * GET and batch hot paths. Every key, colon and comma is part of a
 * literal whose length the compiler knows; numbers go straight into the
 * output; a string is copied whole when it needs no escaping and passed
 * through jsonw_escape (the writer's own rules) when it does. answer_write
 * made a writer call per key and per value, a tenth of a GET's
 * instructions.
 *
 * tests/unit/test_answer.c holds fragment_write to answer_write byte for
 * byte over a sweep of decisions and hostile echoed input. No allocation
 * (the caller provides fragment_bound bytes); thread-safe (no state).
 */
#ifndef SPLITKD_FRAGMENT_H
#define SPLITKD_FRAGMENT_H

#include <stddef.h>

#include "catalog.h"
#include "decide.h"

/* The most bytes fragment_write can write for d: a bound, not the length. */
size_t fragment_bound(const struct decision *d, const struct catalog *cat);

/* Writes d's answer object (d->explain is ignored: an answer with explain
 * goes through answer_write) into out, which holds fragment_bound(d, cat)
 * bytes. Returns the bytes written; no NUL. */
size_t fragment_write(char *out, const struct decision *d, const struct catalog *cat);

#endif /* SPLITKD_FRAGMENT_H */
