/* SPDX-License-Identifier: AGPL-3.0-only */
#include "cors.h"

#include <string.h>

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* The host and port after "://": a name or IPv4 address, or [IPv6]. */
static bool authority_ok(const char *h, const char **why)
{
	const char *p = h;

	for (const char *c = h; *c != '\0' && *c != '/'; c++) {
		if (*c >= 'A' && *c <= 'Z') {
			*why = "write the host as a browser sends it: lowercase";
			return false;
		}
	}
	if (*p == '[') {
		for (p++; *p != ']'; p++) {
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == ':' ||
			      *p == '.')) {
				*why = "an IPv6 host is [hex digits and colons], lowercase";
				return false;
			}
		}
		p++;
	} else {
		while (host_char(*p)) {
			p++;
		}
	}
	if (p == h || (p == h + 2 && *h == '[')) {
		*why = "no host after the scheme";
		return false;
	}
	if (*p == ':') {
		const char *digits = ++p;
		unsigned long port = 0;

		while (*p >= '0' && *p <= '9' && p - digits < 6) {
			port = port * 10 + (unsigned long)(*p++ - '0');
		}
		if (p == digits || port == 0 || port > 65535 || (*digits == '0')) {
			*why = "the port is 1 to 65535, without leading zeros";
			return false;
		}
	}
	if (*p != '\0') {
		*why = *p == '/' ? "an origin has no path, not even a trailing /"
				 : "a host is letters, digits, '-' and '.'";
		return false;
	}
	return true;
}

bool cors_origin_ok(const char *s, const char **why)
{
	if (strchr(s, '*') != NULL) {
		*why = "no wildcard: name each origin (answers allow credentials, which \"*\" may not)";
		return false;
	}
	if (strncmp(s, "http://", 7) == 0) {
		return authority_ok(s + 7, why);
	}
	if (strncmp(s, "https://", 8) == 0) {
		return authority_ok(s + 8, why);
	}
	*why = "an origin is http://HOST[:PORT] or https://HOST[:PORT]";
	return false;
}

const char *cors_match(const char *const *origins, size_t num, const char *origin)
{
	if (origin == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < num; i++) {
		if (strcmp(origins[i], origin) == 0) {
			return origins[i];
		}
	}
	return NULL;
}
