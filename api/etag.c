/* SPDX-License-Identifier: AGPL-3.0-only */
#include "etag.h"

#include <stdint.h>
#include <string.h>

/* Eight bytes as a little-endian number on any host, so replicas on
 * different hardware agree on tags. On a little-endian host that is one
 * load: GCC left the shifts as a call per step (850 instructions of a
 * 400-byte answer's tag). */
static inline uint64_t load_le64(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
#else
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
#endif
}

/* One step of body_hash: eight bytes mixed in. */
static inline uint64_t step(uint64_t h, const unsigned char *p)
{
	h = (h ^ load_le64(p)) * 0xBF58476D1CE4E5B9u;
	return h ^ (h >> 31);
}

/* A 64-bit hash of the body, eight bytes a step (byte-at-a-time FNV-1a was
 * most of the request handler's time under load), finished with MurmurHash3's
 * fmix64 so every input bit reaches every output bit. Any change of a byte
 * changes the tag with overwhelming likelihood; an ETag needs no more. */
static uint64_t body_hash(const char *body, size_t len)
{
	const unsigned char *p = (const unsigned char *)body;
	uint64_t h = 0x9E3779B97F4A7C15u ^ len;
	unsigned char tail[8] = {0};
	size_t i = 0;

	/* four steps a turn: the same steps in the same order (the same
	 * tags), a third fewer instructions for the loop's own count */
	for (; i + 32 <= len; i += 32) {
		h = step(h, p + i);
		h = step(h, p + i + 8);
		h = step(h, p + i + 16);
		h = step(h, p + i + 24);
	}
	for (; i + 8 <= len; i += 8) {
		h = step(h, p + i);
	}
	memcpy(tail, p + i, len - i);
	h = (h ^ load_le64(tail)) * 0x94D049BB133111EBu;
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDu;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53u;
	h ^= h >> 33;
	return h;
}

/* "00" "01" ... "ff": a byte's two hex digits at pairs[2 * byte] */
#define PAIR_ROW(d)                                                                          \
	d "0" d "1" d "2" d "3" d "4" d "5" d "6" d "7" d "8" d "9" d "a" d "b" d "c" d "d" \
	d "e" d "f"
static const char pairs[] = PAIR_ROW("0") PAIR_ROW("1") PAIR_ROW("2") PAIR_ROW("3") PAIR_ROW("4")
	PAIR_ROW("5") PAIR_ROW("6") PAIR_ROW("7") PAIR_ROW("8") PAIR_ROW("9") PAIR_ROW("a")
	PAIR_ROW("b") PAIR_ROW("c") PAIR_ROW("d") PAIR_ROW("e") PAIR_ROW("f");

void etag_of(const char *body, size_t len, char out[ETAG_MAX])
{
	uint64_t h = body_hash(body, len);

	out[0] = '"';
	/* a byte's two digits a step, from the low byte up */
	for (int i = 7; i >= 0; i--) {
		memcpy(out + 1 + 2 * i, pairs + 2 * (h & 0xFF), 2);
		h >>= 8;
	}
	out[17] = '"';
	out[18] = '\0';
}

bool etag_none_match(const char *header, const char *etag)
{
	const char *p = header;
	size_t tag_len = strlen(etag);

	while (*p != '\0') {
		const char *start;

		while (*p == ' ' || *p == '\t' || *p == ',') {
			p++;
		}
		if (*p == '*') {
			return true;
		}
		if (p[0] == 'W' && p[1] == '/') {
			p += 2;
		}
		start = p;
		if (*p == '"') {
			p = strchr(p + 1, '"');
			if (p == NULL) {
				return false; /* malformed: no match, answer in full */
			}
			p++;
		} else {
			while (*p != '\0' && *p != ',') {
				p++;
			}
		}
		if ((size_t)(p - start) == tag_len && memcmp(start, etag, tag_len) == 0) {
			return true;
		}
		while (*p != '\0' && *p != ',') {
			p++;
		}
	}
	return false;
}

bool etag_match(const char *header, const char *etag)
{
	const char *p = header;
	size_t tag_len = strlen(etag);

	p += strspn(p, " \t");
	if (p[0] == '*') {
		p++;
		return p[strspn(p, " \t")] == '\0';
	}
	while (*p != '\0') {
		bool weak = false;
		const char *start, *end;

		p += strspn(p, " \t,");
		if (*p == '\0') {
			break;
		}
		if (p[0] == 'W' && p[1] == '/') {
			weak = true;
			p += 2;
		}
		end = *p == '"' ? strchr(p + 1, '"') : NULL;
		if (end == NULL) {
			return false; /* not an entity-tag: malformed, nothing passes */
		}
		start = p;
		p = end + 1;
		if (!weak && (size_t)(p - start) == tag_len && memcmp(start, etag, tag_len) == 0) {
			return true;
		}
		p += strspn(p, " \t");
		if (*p != ',' && *p != '\0') {
			return false;
		}
	}
	return false;
}
