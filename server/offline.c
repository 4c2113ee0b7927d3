/* SPDX-License-Identifier: AGPL-3.0-only */
#include "offline.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "catsource.h"
#include "decide.h"
#include "diff.h"
#include "jsonw.h"

/* The canonical writing (no white space) re-indented for an editor: each
 * member and element on its own line, two spaces a level, ": " after a
 * key; an empty array or object stays "[]"/"{}". Only white space is added
 * outside strings, so the file loads to the same catalog and digest. */
static int write_pretty(const char *s, size_t len, FILE *out)
{
	unsigned depth = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (in_string) {
			fputc(c, out);
			if (c == '\\' && i + 1 < len) {
				fputc(s[++i], out);
			} else if (c == '"') {
				in_string = false;
			}
			continue;
		}
		if ((c == '{' || c == '[') && i + 1 < len && (s[i + 1] == '}' || s[i + 1] == ']')) {
			fputc(c, out);
			fputc(s[++i], out);
			continue;
		}
		switch (c) {
		case '"':
			in_string = true;
			fputc(c, out);
			break;
		case '{':
		case '[':
			depth++;
			fprintf(out, "%c\n%*s", c, (int)(2 * depth), "");
			break;
		case '}':
		case ']':
			depth--;
			fprintf(out, "\n%*s%c", (int)(2 * depth), "", c);
			break;
		case ',':
			fprintf(out, ",\n%*s", (int)(2 * depth), "");
			break;
		case ':':
			fputs(": ", out);
			break;
		default:
			fputc(c, out);
			break;
		}
	}
	return ferror(out) ? -1 : 0;
}

int offline_dump_catalog(const struct server_config *cfg)
{
	char err[640];
	struct catalog *cat = catsource_load(cfg->catalog_path, NULL, err, sizeof(err));
	struct jsonw w;
	int ret = 1;

	if (cat == NULL) {
		fprintf(stderr, "splitkd: %s\n", err);
		return ret;
	}
	jsonw_init(&w, 8192);
	catalog_write(&w, cat, false);
	if (!w.failed &&
	    (cfg->pretty ? write_pretty(w.buf, w.len, stdout) == 0
			 : fwrite(w.buf, 1, w.len, stdout) == w.len) &&
	    fputc('\n', stdout) != EOF) {
		ret = 0;
	}
	jsonw_cleanup(&w);
	catalog_free(cat);
	return ret;
}

int offline_check_catalog(const char *path)
{
	char err[640];
	struct catalog *cat = catsource_load(path, NULL, err, sizeof(err));

	if (cat == NULL) {
		fprintf(stderr, "splitkd: invalid catalog: %s\n", err);
		return 1;
	}
	printf("%s: ok: %zu targets, %zu models, digest %s\n", path, cat->num_targets,
	       cat->num_models, cat->digest);
	catalog_free(cat);
	return 0;
}

int offline_diff(const struct server_config *cfg)
{
	char err[640];
	struct catalog *old = NULL, *new = NULL;
	struct query q;
	struct decide_shape shape;
	struct slice override = {cfg->diff_override,
				 cfg->diff_override ? strlen(cfg->diff_override) : 0};
	struct jsonw w;
	int ret = 2;

	old = catsource_load(cfg->diff_old, NULL, err, sizeof(err));
	if (old == NULL) {
		fprintf(stderr, "splitkd: invalid catalog: %s\n", err);
		goto done;
	}
	new = catsource_load(cfg->diff_new, NULL, err, sizeof(err));
	if (new == NULL) {
		fprintf(stderr, "splitkd: invalid catalog: %s\n", err);
		goto done;
	}
	memset(&q, 0, sizeof(q));
	q.max_batch_size = (struct query_u32){cfg->diff_max_batch_size != 0, cfg->diff_max_batch_size};
	q.num_seqs = (struct query_u32){cfg->diff_num_seqs != 0, cfg->diff_num_seqs};
	q.max_rows = (struct query_u32){cfg->diff_max_rows != 0, cfg->diff_max_rows};
	shape = decide_shape_of(&q);
	jsonw_init(&w, 65536);
	diff_write(&w, old, new, shape, override);
	if (w.failed || fwrite(w.buf, 1, w.len, stdout) != w.len || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0) {
		fprintf(stderr, "splitkd: --diff: cannot write the answer\n");
	} else {
		ret = diff_any_change(old, new, shape, override) ? 1 : 0;
	}
	jsonw_cleanup(&w);
done:
	catalog_free(old);
	catalog_free(new);
	return ret;
}
