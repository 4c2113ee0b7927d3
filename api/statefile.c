/* SPDX-License-Identifier: AGPL-3.0-only */
#include "statefile.h"

#include <stdio.h>
#include <string.h>

#define DIGEST_PREFIX "fnv1a64:"
#define NAME_PREFIX "fnv1a64-"
#define NAME_SUFFIX ".json"
#define HEX_DIGITS 16

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return false;
		}
	}
	return true;
}

int statefile_name(const char *digest, char *out, size_t cap)
{
	size_t p = sizeof(DIGEST_PREFIX) - 1;

	if (strlen(digest) != CATALOG_DIGEST_LEN || strncmp(digest, DIGEST_PREFIX, p) != 0 ||
	    !lower_hex(digest + p, HEX_DIGITS) || cap < STATEFILE_NAME_LEN + 1) {
		return -1;
	}
	snprintf(out, cap, NAME_PREFIX "%s" NAME_SUFFIX, digest + p);
	return 0;
}

bool statefile_digest_of(const char *name, char digest[CATALOG_DIGEST_LEN + 1])
{
	size_t p = sizeof(NAME_PREFIX) - 1;

	if (strlen(name) != STATEFILE_NAME_LEN || strncmp(name, NAME_PREFIX, p) != 0 ||
	    !lower_hex(name + p, HEX_DIGITS) || strcmp(name + p + HEX_DIGITS, NAME_SUFFIX) != 0) {
		return false;
	}
	snprintf(digest, CATALOG_DIGEST_LEN + 1, DIGEST_PREFIX "%.*s", HEX_DIGITS, name + p);
	return true;
}

struct catalog *statefile_read(const char *name, const char *data, size_t len, char *err,
			       size_t err_cap)
{
	char digest[CATALOG_DIGEST_LEN + 1], why[448];
	struct catalog *cat;

	if (!statefile_digest_of(name, digest)) {
		snprintf(err, err_cap, "not a revision file's name (fnv1a64-<16 hex digits>.json)");
		return NULL;
	}
	cat = catalog_load(data, len, why, sizeof(why));
	if (cat == NULL) {
		snprintf(err, err_cap, "not a valid catalog (torn or edited?): %s", why);
		return NULL;
	}
	if (strcmp(cat->digest, digest) != 0) {
		snprintf(err, err_cap, "holds revision %s, not the %s its name says (edited?)",
			 cat->digest, digest);
		catalog_free(cat);
		return NULL;
	}
	return cat;
}
