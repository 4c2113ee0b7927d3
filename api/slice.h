/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * slice — a byte string by pointer and length, as the request layer passes
 * input around: query values, path names and JSON strings point into the
 * buffers they were decoded into, with no copy and no NUL.
 * A type only; the slice never owns what it points to.
 */
#ifndef SPLITKD_SLICE_H
#define SPLITKD_SLICE_H

#include <stddef.h>

/* `p == NULL` means absent; an empty but present value has a non-NULL p
 * and len 0. */
struct slice {
	const char *p;
	size_t len;
};

#endif /* SPLITKD_SLICE_H */
