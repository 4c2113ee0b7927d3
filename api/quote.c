/* SPDX-License-Identifier: AGPL-3.0-only */
#include "quote.h"

#include <string.h>

char *quote_excerpt(const char *s, size_t len, char *out, size_t cap)
{
	size_t n = len;

	if (len + 1 > cap) {
		n = cap > 4 ? cap - 4 : 0;
		/* step back to a scalar boundary: never cut inside a sequence */
		while (n > 0 && ((unsigned char)s[n] & 0xC0u) == 0x80u) {
			n--;
		}
		memcpy(out, s, n);
		memcpy(out + n, "...", cap - n > 3 ? 4 : 1);
		out[cap - 1] = '\0';
		return out;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}
