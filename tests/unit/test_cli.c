/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The command line without starting anything: defaults, --listen's forms,
 * each number flag at and past its bounds, and the usage errors.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api.h"
#include "cli.h"

/* Parses a NULL-terminated argument list (argv[0] added). */
static int parse(struct server_config *cfg, char *err, size_t cap, const char *const *args)
{
	char *argv[16] = {"splitkd"};
	int argc = 1;

	for (; args[argc - 1] != NULL; argc++) {
		argv[argc] = (char *)args[argc - 1];
	}
	return cli_parse(argc, argv, cfg, err, cap);
}

#define PARSE(cfg, err, ...) parse(cfg, err, sizeof(err), (const char *const[]){__VA_ARGS__, NULL})

Test(cli, defaults)
{
	struct server_config cfg;
	char err[256] = "";

	cr_assert_eq(parse(&cfg, err, sizeof(err), (const char *const[]){NULL}), 0, "%s", err);
	cr_assert_eq(cfg.action, CLI_SERVE);
	cr_assert_str_eq(cfg.host, "127.0.0.1");
	cr_assert_eq(cfg.port, 8080);
	cr_assert_eq(cfg.max_body, API_DEFAULT_MAX_BODY);
	cr_assert_geq(cfg.threads, 1);
	cr_assert_null(cfg.catalog_path);
	cr_assert(cfg.access_log);
	cr_assert_geq(cfg.body_budget, cfg.max_body);
}

Test(cli, listen_forms)
{
	const struct {
		const char *arg;
		int rc;
		const char *host;
		unsigned port;
	} cases[] = {
		{"0.0.0.0:80", 0, "0.0.0.0", 80},   {"[::1]:0", 0, "::1", 0},
		{"localhost:65535", 0, "localhost", 65535},
		{"host:65536", -1, NULL, 0},         {"host", -1, NULL, 0},
		{":80", -1, NULL, 0},                {"[::1]80", -1, NULL, 0},
		{"[::1:80", -1, NULL, 0},            {"h:-1", -1, NULL, 0},
		{"h:8o", -1, NULL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct server_config cfg;
		char err[256] = "";
		int rc = PARSE(&cfg, err, "--listen", cases[i].arg);

		cr_assert_eq(rc, cases[i].rc, "--listen %s: %d (%s)", cases[i].arg, rc, err);
		if (rc == 0) {
			cr_assert_str_eq(cfg.host, cases[i].host);
			cr_assert_eq(cfg.port, cases[i].port);
		} else {
			cr_assert_neq(err[0], '\0', "--listen %s: no message", cases[i].arg);
		}
	}
}

Test(cli, number_bounds)
{
	const struct {
		const char *flag, *value;
		int rc;
	} cases[] = {
		{"--threads", "1", 0},          {"--threads", "256", 0},   {"--threads", "0", -1},
		{"--threads", "257", -1},       {"--threads", "-1", -1},   {"--threads", "2x", -1},
		{"--max-body", "1023", -1},     {"--max-body", "1024", 0},
		{"--max-header", "2047", -1},   {"--max-header", "2048", 0},
		{"--max-client-connections", "0", 0},
		{"--idle-timeout", "3601", -1}, {"--body-min-rate", "0", 0},
		{"--threads", "99999999999999999999999", -1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct server_config cfg;
		char err[256] = "";
		int rc = PARSE(&cfg, err, cases[i].flag, cases[i].value);

		cr_assert_eq(rc, cases[i].rc, "%s %s: %d (%s)", cases[i].flag, cases[i].value, rc, err);
		if (rc != 0) {
			cr_assert_not_null(strstr(err, cases[i].flag), "%s: %s", cases[i].flag, err);
		}
	}
}

Test(cli, usage_errors_and_actions)
{
	struct server_config cfg;
	char err[256];

	cr_assert_eq(PARSE(&cfg, err, "--nope"), -1);
	cr_assert_not_null(strstr(err, "--nope"), "%s", err);
	cr_assert_null(strstr(err, "did you mean"), "%s", err);
	/* a near miss of a flag gets the house's did-you-mean */
	cr_assert_eq(PARSE(&cfg, err, "--listn", "127.0.0.1:1"), -1);
	cr_assert_str_eq(err, "unknown option \"--listn\": did you mean --listen? (see --help)");
	cr_assert_eq(PARSE(&cfg, err, "--max-bodi=5"), -1);
	cr_assert_not_null(strstr(err, "did you mean --max-body?"), "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--dump-catalog", "--pretty"), 0);
	cr_assert_eq(cfg.action, CLI_DUMP_CATALOG);
	cr_assert(cfg.pretty);
	cr_assert_eq(PARSE(&cfg, err, "--pretty"), -1);
	cr_assert_str_eq(err, "--pretty goes with --dump-catalog");
	cr_assert_eq(PARSE(&cfg, err, "--threads"), -1);
	cr_assert_not_null(strstr(err, "needs a value"), "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "stray"), -1);
	cr_assert_not_null(strstr(err, "stray"), "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--max-body", "4194304", "--body-budget", "1048576"), -1);
	cr_assert_not_null(strstr(err, "--body-budget"), "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--help"), 0);
	cr_assert_eq(cfg.action, CLI_HELP);
	cr_assert_eq(PARSE(&cfg, err, "--version"), 0);
	cr_assert_eq(cfg.action, CLI_VERSION);
	/* getopt's state is reset: a second parse sees its own arguments */
	cr_assert_eq(PARSE(&cfg, err, "--threads", "3"), 0);
	cr_assert_eq(cfg.threads, 3);
	cr_assert_eq(cfg.action, CLI_SERVE);
}

/* Every number flag the parser takes is in the --help text. */
Test(cli, usage_names_every_flag)
{
	const char *flags[] = {"--listen",      "--reuse-port",   "--catalog",    "--check-catalog",
			       "--dump-catalog", "--pretty", "--log-format",  "--access-log", "--threads",
			       "--max-connections", "--max-client-connections", "--idle-timeout",
			       "--drain-timeout", "--header-timeout", "--body-timeout",
			       "--body-min-rate", "--max-body", "--max-header", "--body-budget"};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		cr_assert_not_null(strstr(cli_usage(), flags[i]), "%s not in --help", flags[i]);
	}
}

Test(cli, revisions_and_diff)
{
	struct server_config cfg;
	char err[256] = "";

	cr_assert_eq(PARSE(&cfg, err, "--catalog", "c.json"), 0, "%s", err);
	cr_assert_eq(cfg.revisions, 8, "the documented default");
	cr_assert_eq(PARSE(&cfg, err, "--revisions", "1"), 0, "%s", err);
	cr_assert_eq(cfg.revisions, 1);
	cr_assert_eq(PARSE(&cfg, err, "--revisions", "64"), 0, "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--revisions", "0"), -1);
	cr_assert_eq(PARSE(&cfg, err, "--revisions", "65"), -1);
	cr_assert(strstr(err, "--revisions") != NULL, "%s", err);
	/* --diff OLD NEW, its inputs before or after the files */
	cr_assert_eq(PARSE(&cfg, err, "--diff", "a.json", "b.json", "--max-batch-size", "16"), 0, "%s", err);
	cr_assert_eq(cfg.action, CLI_DIFF);
	cr_assert_str_eq(cfg.diff_old, "a.json");
	cr_assert_str_eq(cfg.diff_new, "b.json");
	cr_assert_eq(cfg.diff_max_batch_size, 16);
	cr_assert_eq(PARSE(&cfg, err, "--num-seqs", "2", "--override", "auto", "--diff", "a.json", "b.json",
			   "--max-rows", "4294967295"), 0, "%s", err);
	cr_assert_eq(cfg.diff_num_seqs, 2);
	cr_assert_eq(cfg.diff_max_rows, 4294967295u);
	cr_assert_str_eq(cfg.diff_override, "auto");
	cr_assert_eq(PARSE(&cfg, err, "--diff", "a.json"), -1, "one file is not a diff");
	cr_assert(strstr(err, "two files") != NULL, "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--diff", "a.json", "b.json", "c.json"), -1);
	cr_assert_eq(PARSE(&cfg, err, "--diff", "a.json", "b.json", "--max-batch-size", "0"), -1);
	/* the matrix inputs mean nothing to a server */
	cr_assert_eq(PARSE(&cfg, err, "--max-batch-size", "16"), -1);
	cr_assert(strstr(err, "--diff") != NULL, "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--override", "4"), -1);
}

Test(cli, named_catalogs)
{
	struct server_config cfg;
	char err[640];

	cr_assert_eq(PARSE(&cfg, err, "--catalog", "a.json"), 0, "%s", err);
	cr_assert_eq(cfg.num_catalogs, 1);
	cr_assert_str_eq(cfg.catalogs[0].name, "default");
	cr_assert_str_eq(cfg.catalog_path, "a.json");
	cr_assert_eq(PARSE(&cfg, err, "--catalog", "legacy=old.json", "--catalog", "today=new.json",
			   "--default-catalog", "today"), 0, "%s", err);
	cr_assert_eq(cfg.num_catalogs, 2);
	cr_assert_str_eq(cfg.catalogs[0].name, "legacy");
	cr_assert_str_eq(cfg.catalogs[0].path, "old.json");
	cr_assert_str_eq(cfg.catalog_path, "new.json", "the default's file");
	/* what is before '=' is a name only when it is one: a path stays a path */
	cr_assert_eq(PARSE(&cfg, err, "--catalog", "./dir=x/c.json"), 0, "%s", err);
	cr_assert_str_eq(cfg.catalogs[0].name, "default");
	cr_assert_str_eq(cfg.catalogs[0].path, "./dir=x/c.json");
	cr_assert_eq(PARSE(&cfg, err, "--catalog", "a=x.json", "--catalog", "a=y.json"), -1);
	cr_assert(strstr(err, "two catalogs named \"a\"") != NULL, "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--catalog", "a=x.json", "--default-catalog", "b"), -1);
	cr_assert(strstr(err, "names no --catalog b=FILE") != NULL, "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--default-catalog", "Bad"), -1);
	cr_assert_eq(PARSE(&cfg, err, "--catalog", "a=", "--catalog", "b=y"), -1);
	cr_assert_eq(PARSE(&cfg, err, "--catalog", "a=x", "--catalog", "b=y", "--max-catalogs", "1"), -1);
	cr_assert(strstr(err, "--max-catalogs is 1") != NULL, "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--catalog-dir", "/etc/splitkd", "--catalog", "a=x"), -1);
	cr_assert_eq(PARSE(&cfg, err, "--catalog-dir", "/etc/splitkd"), 0, "%s", err);
	cr_assert_str_eq(cfg.catalog_dir, "/etc/splitkd");
}

Test(cli, cors_origins_and_the_rate_limit)
{
	struct server_config cfg;
	char err[256] = "";

	cr_assert_eq(PARSE(&cfg, err, "--threads", "1"), 0, "%s", err);
	cr_assert_eq(cfg.num_cors_origins, 0);
	cr_assert_eq(cfg.rate_limit, 0, "off by default");
	cr_assert_eq(cfg.rate_limit_clients, 0);
	cr_assert_eq(PARSE(&cfg, err, "--cors-allow-origin", "http://a:1", "--cors-allow-origin",
			   "https://b"), 0, "%s", err);
	cr_assert_eq(cfg.num_cors_origins, 2);
	cr_assert_str_eq(cfg.cors_origins[1], "https://b");
	cr_assert_eq(PARSE(&cfg, err, "--cors-allow-origin", "*"), -1);
	cr_assert_not_null(strstr(err, "no wildcard"), "%s", err);
	cr_assert_eq(PARSE(&cfg, err, "--rate-limit", "20"), 0, "%s", err);
	cr_assert_eq(cfg.rate_limit, 20);
	cr_assert_eq(cfg.rate_limit_clients, 4096, "the documented default");
	cr_assert_eq(PARSE(&cfg, err, "--rate-limit", "20", "--rate-limit-clients", "2"), 0, "%s", err);
	cr_assert_eq(cfg.rate_limit_clients, 2);
	cr_assert_eq(PARSE(&cfg, err, "--rate-limit", "1000001"), -1);
	cr_assert_eq(PARSE(&cfg, err, "--rate-limit-clients", "2"), -1);
	cr_assert_str_eq(err, "--rate-limit-clients goes with --rate-limit N");
	cr_assert_not_null(strstr(cli_usage(), "--cors-allow-origin"));
	cr_assert_not_null(strstr(cli_usage(), "--rate-limit-clients"));
}
