/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The one writer (fragment_write) against a writer call per member
 * (reference.h), byte for byte, whole and under field masks: every catalog pair
 * under several shapes and overrides, numbers alone up to the 128-bit
 * workspace, and echoed input that must be escaped (quotes, controls,
 * bytes that are not UTF-8, a 256-byte override). Also: it never writes
 * past fragment_bound, and a warning decide_run calls plain, or gives the
 * length of, is so.
 */
#include <stdio.h>
#include <stdlib.h>

#include "answer.h"
#include "fragment.h"
#include "jsonscan.h"
#include "warning.h"
#include "decide.h"
#include "helpers.h"
#include "reference.h"

TestSuite(fragment, .init = load_default_catalog, .fini = free_default_catalog);

/* The whole answer (its own folded copy), none, each end alone, every
 * other member, and a run across the fused-looking source and num_splits. */
static const unsigned masks[] = {
	FIELDS_ALL,
	0,
	FIELDS_BIT(FM_TARGET),
	FIELDS_BIT(FM_CATALOG),
	FIELDS_BIT(FM_WARNINGS),
	0x15555u & FIELDS_ALL,
	0x0aaaau & FIELDS_ALL,
	FIELDS_BIT(FM_SOURCE) | FIELDS_BIT(FM_NUM_SPLITS),
	FIELDS_BIT(FM_NUM_SPLITS) | FIELDS_BIT(FM_WORKSPACE_BYTES),
};

static void same_as_the_members(const struct query *q)
{
	struct decision d;
	struct problem p;
	struct jsonw w;
	size_t bound, n;
	char *out;

	if (decide_run(test_catalog, q, &d, &p) != 0) {
		return; /* a problem, not an answer: nothing to compare */
	}
	d.explain = false;
	/* what decide_run says of a warning, fragment_write trusts unscanned */
	for (size_t i = 0; i < d.num_warnings; i++) {
		size_t len = strlen(d.warnings[i]);

		cr_assert(d.warning_lens[i] == 0 || d.warning_lens[i] == len, "warning %zu: %zu, not %zu",
			  i, d.warning_lens[i], len);
		cr_assert(!d.warning_plain[i] || jsonscan_plain_run(d.warnings[i], len, true) == len,
			  "warning %zu called plain: %s", i, d.warnings[i]);
	}
	for (size_t k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		jsonw_init(&w, 0);
		reference_write(&w, &d, test_catalog, masks[k]);
		jsonw_terminate(&w);
		bound = fragment_bound(&d, test_catalog);
		out = malloc(bound + 64);
		cr_assert_not_null(out);
		memset(out, 0x5a, bound + 64);
		n = fragment_write(out, &d, test_catalog, masks[k]);
		cr_assert_leq(n, bound);
		for (size_t i = n; i < bound + 64; i++) {
			cr_assert_eq(out[i], 0x5a, "fragment_write wrote past its %zu bytes", n);
		}
		cr_assert_eq(n, w.len, "mask %x\n  answer: %.*s\n  decide: %s", masks[k], (int)n, out,
			     w.buf);
		cr_assert(memcmp(out, w.buf, n) == 0, "mask %x\n  answer: %.*s\n  decide: %s", masks[k],
			  (int)n, out, w.buf);
		free(out);
		jsonw_cleanup(&w);
	}
}

static struct slice sl(const char *s)
{
	return (struct slice){s, s != NULL ? strlen(s) : 0};
}

Test(fragment, every_catalog_pair_under_every_shape_and_override)
{
	static const char *const overrides[] = {NULL, "", "auto", "legacy", "4", "99", "atuo", " AUTO ",
						"0", "off"};
	static const uint32_t sizes[] = {1, 16, 64, 4096, 4294967295u};
	size_t checked = 0;

	for (size_t t = 0; t < test_catalog->num_targets; t++) {
		for (size_t m = 0; m < test_catalog->num_models; m++) {
			for (size_t o = 0; o < sizeof(overrides) / sizeof(overrides[0]); o++) {
				for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
					struct query q = {0};

					q.target = sl(test_catalog->targets[t].names.name);
					q.model = sl(test_catalog->models[m].names.name);
					q.override = sl(overrides[o]);
					q.max_batch_size = (struct query_u32){true, sizes[s]};
					q.num_seqs = (struct query_u32){s % 2 == 1, sizes[s] > 2 ? sizes[s] / 2 : 1};
					q.max_rows = (struct query_u32){s == 3, 8};
					same_as_the_members(&q);
					checked++;
				}
			}
		}
	}
	cr_assert_gt(checked, 100);
}

Test(fragment, numbers_alone_up_to_a_128_bit_workspace)
{
	static const uint32_t values[] = {1, 2, 9, 10, 99, 100, 132, 65535, 1000000000u, 4294967295u};

	for (size_t a = 0; a < 10; a++) {
		for (size_t b = 0; b < 10; b++) {
			struct query q = {0};

			q.sm_count = (struct query_u32){true, values[a]};
			q.num_q_heads = (struct query_u32){true, values[b]};
			q.head_dim = (struct query_u32){b % 3 != 0, values[(a + b) % 10]};
			q.max_batch_size = (struct query_u32){true, values[9 - a]};
			q.max_rows = (struct query_u32){a % 2 == 0, values[9 - b]};
			q.declared = sl(a % 3 == 0 ? "auto" : a % 3 == 1 ? "8" : "legacy");
			same_as_the_members(&q);
		}
	}
}

Test(fragment, echoed_input_is_escaped_as_the_writer_escapes_it)
{
	char long_one[257];
	const char *const hostile[] = {"a\"b", "back\\slash", "\x01\x1f\t\n\r", "\xff\xfe", "caf\xc3\xa9",
				       "\xe3\x80\x80" "auto" "\xe3\x80\x80", "\xc3", "\xed\xa0\x80", "a\x7f", long_one};

	memset(long_one, 'o', 256);
	long_one[255] = '\x80';
	long_one[256] = '\0';
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		struct query q = {0};

		q.target = sl("h100");
		q.model = sl("qwen3.8-27b");
		q.override = sl(hostile[i]);
		same_as_the_members(&q);
		q.override = sl(NULL);
		q.declared = sl(hostile[i]);
		same_as_the_members(&q);
	}
}

/* The head_dim warning, put together without snprintf, is snprintf's text
 * for every model and none, and is cut where snprintf cuts it. */
Test(fragment, the_head_dim_warning_is_the_snprintf_text)
{
	for (size_t m = 0; m <= test_catalog->num_models; m++) {
		struct decision d;

		memset(&d, 0, sizeof(d));
		d.model = m < test_catalog->num_models ? &test_catalog->models[m] : NULL;
		for (size_t cap = 1; cap <= 120; cap++) {
			char got[128], want[128];

			memset(got, 'x', sizeof(got));
			warning_no_bytes(got, cap, d.model ? d.model->names.name : NULL,
					 d.model ? d.model->names.name_len : 0);
			snprintf(want, cap, "workspace_bytes is null: head_dim is not known%s%s; pass head_dim",
				 d.model ? " for " : "", d.model ? d.model->names.name : "");
			cr_assert_str_eq(got, want, "cap %zu", cap);
		}
	}
}

/* fragment_write copies catalog names unscanned (catalog.h: catalog_load
 * takes only A-Z a-z 0-9 . _ -); a name it would have to escape is refused. */
Test(fragment, catalog_names_need_no_escaping)
{
	for (size_t i = 0; i < test_catalog->num_targets; i++) {
		const struct catalog_names *n = &test_catalog->targets[i].names;

		cr_assert_eq(jsonscan_plain_run(n->name, n->name_len, true), n->name_len, "%s", n->name);
	}
	for (size_t i = 0; i < test_catalog->num_models; i++) {
		const struct catalog_names *n = &test_catalog->models[i].names;

		cr_assert_eq(jsonscan_plain_run(n->name, n->name_len, true), n->name_len, "%s", n->name);
	}
	/* the same catalog loads with a plain name, and not with a quote in it */
	{
		static const char *const names[] = {"ab", "a\\\"b"};
		char err[256];

		for (size_t k = 0; k < 2; k++) {
			char json[256];
			struct catalog *cat;

			snprintf(json, sizeof(json),
				 "{\"targets\":[{\"name\":\"%s\",\"sm_count\":1,\"attn_decode_splitk\":\"auto\"}],"
				 "\"models\":[{\"name\":\"m\",\"num_q_heads\":1}]}",
				 names[k]);
			cat = catalog_load(json, strlen(json), err, sizeof(err));
			cr_assert_eq(cat != NULL, k == 0, "%s: %s", json, cat != NULL ? "taken" : err);
			catalog_free(cat);
		}
	}
}
