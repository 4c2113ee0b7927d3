/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * fnv — FNV-1a, 64-bit (Fowler, Noll, Vo): the one byte hash of splitkd.
 * A catalog's digest and the reload history's line check (api/catalog.c,
 * api/history.c), the reload's content keys (server/reload_read.c) and a
 * catalog's change stream boot (server/channel.c) are all made of it, so
 * all of them are this function: a value kept on disk (a revision's name,
 * a history line, a stream's ids across a restart) is the same after any
 * change to who computes it.
 *
 * A hash to tell contents apart, not a security check. Pure: no
 * allocation, no I/O, no state; thread-safe.
 */
#ifndef SPLITKD_FNV_H
#define SPLITKD_FNV_H

#include <stddef.h>
#include <stdint.h>

/* The offset basis: what fnv_add starts from for a hash of its own. */
#define FNV_OFFSET 0xcbf29ce484222325u

/* The hash `h` (FNV_OFFSET, or what an earlier fnv_add returned, so a
 * hash can be taken over pieces) with p[0..n) mixed in, byte by byte.
 * p may be NULL when n is 0. */
uint64_t fnv_add(uint64_t h, const void *p, size_t n);

/* FNV-1a 64 of p[0..n): fnv_add from FNV_OFFSET. */
uint64_t fnv_hash(const void *p, size_t n);

#endif /* SPLITKD_FNV_H */
