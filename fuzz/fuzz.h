/* SPDX-License-Identifier: AGPL-3.0-only */
/* Shared by the libFuzzer harnesses: an invariant that aborts, so libFuzzer
 * saves the input that broke it. */
#ifndef SPLITKD_FUZZ_H
#define SPLITKD_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
			abort();                                                           \
		}                                                                          \
	} while (0)

#endif
