/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * What cJSON alone costs for a batch body: parse it and print it back,
 * N times. bench/instructions.sh counts the instructions of roundtrip()
 * only (callgrind --toggle-collect), and quotes splitkd's instructions per
 * decision beside them: the whole request (reading, deciding, writing the
 * answer) against a tree built and printed by the library splitkd's
 * fallback path uses.
 *
 * usage: cjson_roundtrip BODY-FILE N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* not static, and never inlined: callgrind toggles collection on its name */
__attribute__((noinline)) size_t roundtrip(const char *text, size_t len);

__attribute__((noinline)) size_t roundtrip(const char *text, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	char *out = root != NULL ? cJSON_PrintUnformatted(root) : NULL;
	size_t printed = out != NULL ? strlen(out) : 0;

	cJSON_free(out);
	cJSON_Delete(root);
	return printed;
}

int main(int argc, char **argv)
{
	static char text[1 << 21];
	FILE *f;
	size_t len, total = 0;
	long n;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: cjson_roundtrip BODY-FILE N\n");
		return 2;
	}
	n = strtol(argv[2], &end, 10);
	f = fopen(argv[1], "rb");
	if (f == NULL || *end != '\0' || n < 1) {
		fprintf(stderr, "cjson_roundtrip: cannot read %s, or N is not a count\n", argv[1]);
		return 2;
	}
	len = fread(text, 1, sizeof(text), f);
	fclose(f);
	for (long i = 0; i < n; i++) {
		total += roundtrip(text, len);
	}
	printf("%zu bytes printed\n", total);
	return total > 0 ? 0 : 1;
}
