/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler.h"

#include <string.h>
#include <strings.h>

int handler_fail(struct handler_call *c)
{
	c->failed = true;
	return -1;
}

bool handler_is_json(const char *ct)
{
	static const char want[] = "application/json";
	size_t n = sizeof(want) - 1;

	if (ct == NULL) {
		return false;
	}
	ct += strspn(ct, " \t");
	if (strncasecmp(ct, want, n) != 0) {
		return false;
	}
	ct += n + strspn(ct + n, " \t");
	return *ct == '\0' || *ct == ';';
}

