#!/usr/bin/env node
// SPDX-License-Identifier: AGPL-3.0-only
//
// splitkd against its own OpenAPI description, judged by a third party.
//
// Starts build/splitkd on a free loopback port and Stoplight Prism in proxy
// mode with --errors in front of it, then sends every route and method
// through Prism: Prism validates each request and each answer against
// api/openapi.json, and any violation shows in its sl-violations header (or
// turns the answer into Prism's own error). Answers a proxy cannot carry as
// sent go straight to splitkd over a raw socket and are judged by ajv
// against the same description (validate.js):
//   - HEAD: Prism parses the empty content of a JSON HEAD answer as JSON
//     and fails on it, whatever the server sent;
//   - 405: Prism answers undescribed methods itself;
//   - 400 bad-request, 417, 501: Node's HTTP parser (Prism's) refuses or
//     normalises the framing first, and Prism re-mocks any upstream 501;
//   - 413 on GET: Prism refuses to forward a GET with a body;
//   - malformed JSON and duplicate members: Prism parses and re-serialises
//     the body; a bad %-escape: Prism re-encodes the query;
//   - an empty `spelling=`: Prism takes an empty value for an absent one;
//   - a path no route matches: Prism answers 404 itself;
//   - a problem+json where an OFREP route also answers application/json
//     (a query string, a key that does not %-decode): Prism matches media
//     types without their +json suffix, so it judges either by the first.
// The page's routes (/, /ui and its two files) take both ways: GET / is
// sent with the Accept of a browser, of curl and of a JSON client, and the
// index must list exactly the paths of the description.
// Requests the description forbids are sent twice: to splitkd, whose
// answer must be the declared error, and through Prism, which must refuse
// them (422) — the description and the server agree on what is wrong.
// The OFREP routes (issue 12) get the same treatment: every answer through
// Prism where a proxy carries it, 405/framing/parse errors straight, and
// requests their schemas forbid both ways; their own checks compare each
// failure's errorDetails with the problem GET /v1/splits answers.
// The change stream (GET /v1/events) never ends, so no proxy case waits for
// it: it is read straight, its header block and first event judged by ajv,
// and with --max-streams taken the next one is a described 503.
// Finally a SIGTERM: /readyz answers 503 on a kept-alive connection.
//
// usage: node tests/conformance/conformance.js [path/to/splitkd]
// Prints per-route counts and `N passed, M failed`; exit 0 only when every
// check passed and no answer had a violation.
'use strict';

const fs = require('fs');
const net = require('net');
const http = require('http');
const path = require('path');
const procs = require('./procs');
const raw = require('./rawhttp');
const { Description } = require('./validate');
const revisions = require('./revisions');

const ROOT = path.resolve(__dirname, '..', '..');
const SPEC = path.join(ROOT, 'api', 'openapi.json');
const BIN = path.resolve(process.argv[2] || path.join(ROOT, 'build', 'splitkd'));
const LOGS = path.join(ROOT, 'build', 'conformance');
const PRISM = require.resolve('@stoplight/prism-cli/dist/index.js');
// The whole run normally takes ~10 s on the 2-core machine; the bound is
// wide because CI shares those cores with other work.
const DEADLINE_MS = 300000;
// splitkd's limits for this run: --max-header above 8192 so a 414 (request
// target over 8192 bytes) can be reached at all, and a --max-body a valid
// batch can pass, to get a 413 through Prism.
const MAX_HEADER = 16384;
const MAX_BODY = 65536;

// SPLITKD_CONFORMANCE_EXTRA="--cors-allow-origin O --rate-limit N" (issue 41):
// the same run with those flags, every request sent with Origin: O, so
// every answer carries the CORS and RateLimit fields for Prism and ajv to
// judge against the description; then a daemon at --rate-limit 1 for 429s.
const EXTRA = (process.env.SPLITKD_CONFORMANCE_EXTRA || '').split(/\s+/).filter(Boolean);
const ORIGIN = EXTRA.includes('--cors-allow-origin') ? EXTRA[EXTRA.indexOf('--cors-allow-origin') + 1] : null;

const doc = JSON.parse(fs.readFileSync(SPEC, 'utf8'));
const desc = new Description(doc);

// ------------------------------------------------------------ bookkeeping
const counts = new Map(); // "/template" -> {prism, direct, refused, methods}
const failures = [];
let passed = 0;
let violations = 0;

function count(method, p, how) {
	const key = desc.route(p.split('?')[0]) || '(no route)';
	if (!counts.has(key)) {
		counts.set(key, { prism: 0, direct: 0, refused: 0, methods: new Set() });
	}
	counts.get(key)[how]++;
	counts.get(key).methods.add(method);
}

function record(name, problems, nViolations = 0) {
	violations += nViolations;
	if (problems.length === 0) {
		passed++;
	} else {
		failures.push(`${name}\n      ${problems.join('\n      ')}`);
	}
}

function jsonOf(body) {
	try {
		return JSON.parse(body.toString('utf8'));
	} catch (e) {
		return undefined;
	}
}

// Checks shared by both ways: status, problem slug, a case's own check.
function expectations(c, ans) {
	const out = [];
	if (ans.status !== c.expect) {
		out.push(`status ${ans.status}, expected ${c.expect}: ${JSON.stringify(ans.body.toString('utf8').slice(0, 200))}`);
		return out;
	}
	if (c.slug) {
		const j = jsonOf(ans.body);
		if (!j || j.type !== `/problems/${c.slug}`) {
			out.push(`problem type ${j && j.type}, expected /problems/${c.slug}`);
		}
	}
	if (c.check) {
		out.push(...c.check(ans, jsonOf(ans.body)));
	}
	return out;
}

// ------------------------------------------------------------ through Prism
let prismPort = 0;

function viaPrism(method, target, headers = {}, body = null, port = prismPort) {
	return new Promise((resolve, reject) => {
		const data = body === null ? null : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
		const h = { ...(ORIGIN ? { Origin: ORIGIN } : {}), ...headers };
		if (data !== null) {
			h['Content-Length'] = data.length;
		}
		const req = http.request({ host: '127.0.0.1', port, method, path: target, headers: h, agent: false },
			res => {
				const parts = [];
				res.on('data', d => parts.push(d));
				res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }));
				res.on('error', reject);
			});
		req.setTimeout(30000, () => req.destroy(new Error('no answer from Prism within 30 s')));
		req.on('error', reject);
		req.end(data === null ? undefined : data);
	});
}

// What Prism found wrong with an answer: its sl-violations, or its own error.
function prismFindings(ans) {
	const out = [];
	if (ans.headers['sl-violations']) {
		let v = ans.headers['sl-violations'];
		try {
			v = JSON.parse(v).map(x => `${x.severity} ${(x.location || []).join('.')}: ${x.message}`);
		} catch (e) {
			v = [v];
		}
		out.push(...[].concat(v).map(x => `sl-violations: ${x}`));
	}
	const j = jsonOf(ans.body);
	// Prism's own answers (a violation under --errors, or a failure to
	// read the upstream's) have a type that is not one of splitkd's
	if (j && typeof j.type === 'string' && !j.type.startsWith('/problems/') && ans.status >= 400) {
		out.push(`Prism answered itself: ${j.title} ${JSON.stringify(j.validation || j.detail || '').slice(0, 400)}`);
	}
	return out;
}

async function prismCase(c) {
	const method = c.method || 'GET';
	let ans;
	try {
		ans = await viaPrism(method, c.path, c.headers, c.body === undefined ? null : c.body);
	} catch (e) {
		record(`prism ${method} ${c.path.slice(0, 100)}`, [e.message]);
		return null;
	}
	const found = prismFindings(ans);
	if (!found.length) {
		noteCors(ans); // not Prism's own answer, which has its own CORS fields
	}
	record(`prism ${method} ${c.name || c.path.slice(0, 100)}`, [...found, ...(found.length ? [] : expectations(c, ans))],
		found.length);
	count(method, c.path, 'prism');
	return ans;
}

// ------------------------------------------------------------ straight to splitkd
let serverPort = 0;

function request(method, target, headers = [], body = null, { host = true } = {}) {
	const lines = [`${method} ${target} HTTP/1.1`];
	if (host) {
		lines.push('Host: splitkd');
	}
	if (ORIGIN && !headers.some(([k]) => /^origin$/i.test(k))) {
		lines.push(`Origin: ${ORIGIN}`);
	}
	for (const [k, v] of headers) {
		lines.push(`${k}: ${v}`);
	}
	let data = Buffer.alloc(0);
	if (body !== null) {
		data = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
	}
	if (body !== null && !headers.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k))) {
		lines.push(`Content-Length: ${data.length}`);
	}
	return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), data]);
}

async function directCase(c) {
	const method = c.method || 'GET';
	const bytes = c.bytes || request(method, c.path, c.headers || [], c.body === undefined ? null : c.body);
	const name = `direct ${method} ${c.name || c.path.slice(0, 100)}`;
	let ans;
	try {
		ans = await raw.once(serverPort, bytes, method === 'HEAD');
	} catch (e) {
		record(name, [e.message]);
		return null;
	}
	const judged = desc.check(method, c.path.split('?')[0], ans, c.opts || {});
	record(name, [...judged.map(x => `description: ${x}`), ...expectations(c, ans)], judged.length);
	count(method, c.path, 'direct');
	return ans;
}

// A request the description forbids: splitkd answers the declared error,
// and Prism, judging by the description alone, refuses it too.
async function refusedCase(c) {
	await directCase(c);
	const method = c.method || 'GET';
	const hdrs = Object.fromEntries(c.headers || []);
	let ans;
	try {
		ans = await viaPrism(method, c.path, hdrs, c.body === undefined ? null : c.body);
	} catch (e) {
		record(`refused ${method} ${c.name || c.path}`, [e.message]);
		return;
	}
	const j = jsonOf(ans.body);
	const ok = ans.status === 422 && j && Array.isArray(j.validation) && j.validation.length > 0;
	record(`refused ${method} ${c.name || c.path.slice(0, 100)}`,
		ok ? [] : [`Prism let it through: ${ans.status} ${ans.body.toString('utf8').slice(0, 200)}`]);
	count(method, c.path, 'refused');
}

// ------------------------------------------------------------ the requests
// One request per route that answers 200, for the per-route cases below.
const SAMPLE = {
	'/v1/splits': '/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16',
	'/v1/targets': '/v1/targets',
	'/v1/targets/{name}': '/v1/targets/h100',
	'/v1/models': '/v1/models',
	'/v1/models/{name}': '/v1/models/llama-3.1-70b',
	'/v1/catalog': '/v1/catalog',
	'/v1/catalogs': '/v1/catalogs',
	'/v1/policy': '/v1/policy?spelling=auto',
	'/v1/matrix': '/v1/matrix?max_batch_size=16',
	'/v1/revisions': '/v1/revisions',
	'/v1/diff': '/v1/diff?max_batch_size=16',
	'/healthz': '/healthz',
	'/readyz': '/readyz',
	'/version': '/version',
	'/v1/status': '/v1/status',
	'/v1/history': '/v1/history?limit=5',
	'/v1/engines': '/v1/engines',
	'/v1/compare': '/v1/compare?target=h100&model=llama-3.1-8b&seq_len=8192&page_size=16&max_batch_size=8&blocks_per_sm=2',
	'/v1/reserve': '/v1/reserve?target=h100&model=llama-3.1-8b&engine=vllm&max_batch_size=8&max_model_len=8192',
	'/openapi.json': '/openapi.json',
	'/problems/{type}': '/problems/unknown-target',
	'/ofrep/v1/configuration': '/ofrep/v1/configuration',
	'/metrics': '/metrics',
	'/': '/',
	'/ui': '/ui',
	'/ui/app.js': '/ui/app.js',
	'/ui/style.css': '/ui/style.css',
	'/v1/events': '/v1/events',
};
const API_ROUTES = Object.keys(SAMPLE).filter(r => r !== '/metrics');
// Routes whose 200 is a stream that stays open (streamCases reads them).
const STREAMS = ['/v1/events'];
// The POST-only routes (OFREP evaluation), each with a request that answers 200.
const OFREP = '/ofrep/v1/evaluate/flags';
const SEED_CONTEXT = { target: 'h100', model: 'qwen3.8-27b', max_batch_size: 16 };
const POST_SAMPLE = {
	'/ofrep/v1/evaluate/flags/{key}': `${OFREP}/num_splits`,
	'/ofrep/v1/evaluate/flags': OFREP,
	'/v1/catalog/diff': '/v1/catalog/diff',
};
const SLUGS = ['invalid-parameter', 'unknown-parameter', 'repeated-parameter', 'missing-parameter',
	'malformed-query', 'malformed-json', 'unknown-target', 'unknown-model', 'not-found',
	'method-not-allowed', 'unsupported-media-type', 'payload-too-large', 'uri-too-long',
	'header-too-large', 'bad-request', 'expectation-failed', 'not-implemented', 'overloaded', 'internal',
	'revision-unavailable', 'precondition-failed', 'invalid-catalog', 'unknown-catalog',
	'catalog-mismatch', 'unknown-engine', 'unsupported-shape'];
const SPLITS = '/v1/splits';
const JSON_CT = { 'Content-Type': 'application/json' };
const JSON_CT_RAW = [['Content-Type', 'application/json']];
const q = (target, model, extra = '') => `${SPLITS}?target=${target}&model=${model}${extra}`;

function field(j, key, want) {
	return j && j[key] === want ? [] : [`${key} is ${JSON.stringify(j && j[key])}, expected ${JSON.stringify(want)}`];
}

// The page's contract (api/ui.c): what a browser and an API client get.
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function header(a, name, want) {
	const got = a.headers[name.toLowerCase()];
	if (ORIGIN && name === 'Vary') {
		want = `${want}, Origin`; // --cors-allow-origin's, after the route's own
	}
	return got === want ? [] : [`${name}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`];
}

function isPage(a) {
	return [...header(a, 'Content-Type', 'text/html; charset=utf-8'), ...header(a, 'Content-Security-Policy', CSP),
		...header(a, 'X-Content-Type-Options', 'nosniff'),
		...(a.body.length === 0 || a.body.toString('utf8').startsWith('<!doctype html>') ? [] : ['not the page'])];
}

// The JSON index: every path of the description, nothing else.
function isIndex(a, j) {
	const out = [...header(a, 'Vary', 'Accept'), ...header(a, 'X-Content-Type-Options', 'nosniff'),
		...(a.headers['content-security-policy'] === undefined ? [] : ['the index carries the page\'s CSP'])];
	const listed = j && Array.isArray(j.routes) ? j.routes.map(r => r.path).sort().join(' ') : '(no routes)';
	const described = Object.keys(doc.paths).sort().join(' ');
	return listed === described ? out : [...out, `index lists ${listed}; the description has ${described}`];
}

function batchOf(n, item) {
	return { queries: Array.from({ length: n }, (_, i) => item(i)) };
}

function prismCases() {
	const cases = [];
	for (const r of Object.keys(SAMPLE)) {
		if (!STREAMS.includes(r)) {
			cases.push({ path: SAMPLE[r], expect: 200 });
		}
		// over 8192 bytes of request target, under --max-header
		cases.push({ name: `${r} 9000-byte target`, path: `${SAMPLE[r]}${SAMPLE[r].includes('?') ? '&' : '?'}pad=${'a'.repeat(9000)}`,
			expect: 414, slug: 'uri-too-long' });
		// request line and headers over --max-header (and under what the
		// server can hold, so it answers rather than libmicrohttpd)
		cases.push({ name: `${r} header block over --max-header`, path: SAMPLE[r],
			headers: { 'X-Pad': 'p'.repeat(MAX_HEADER + 200) }, expect: 431, slug: 'header-too-large' });
	}
	for (const r of API_ROUTES) {
		cases.push({ name: `${r} unknown parameter`, path: `${SAMPLE[r]}${SAMPLE[r].includes('?') ? '&' : '?'}bogus=1`,
			expect: 400, slug: 'unknown-parameter' });
	}
	cases.push(
		// GET /v1/splits
		{ path: q('h100', 'qwen3.8-27b', '&max_batch_size=16'), expect: 200,
			check: (a, j) => [...field(j, 'num_splits', 11), ...field(j, 'workspace_slots', 4224)] },
		{ path: q('gb10', 'qwen3.8-27b', '&max_batch_size=16'), expect: 200, check: (a, j) => field(j, 'policy', 'legacy') },
		// fields: only the members asked for, in the answer's order; a name
		// twice is a fault the description's pattern cannot spell
		{ name: 'fields twice the same', path: q('h100', 'qwen3-8b', '&fields=policy,policy'), expect: 400, slug: 'invalid-parameter' },
		{ path: q('h100', 'qwen3.8-27b', '&max_batch_size=16&fields=workspace_bytes,num_splits'), expect: 200,
			check: (a, j) => (j && Object.keys(j).join(',') === 'num_splits,workspace_bytes' && j.num_splits === 11
				&& j.workspace_bytes === null ? [] : [`fields answered ${a.body}`]) },
		{ path: q('h100', 'llama-3.1-70b', '&head_dim=128&explain=1&fields=policy%2Cexplain'), expect: 200,
			check: (a, j) => (j && Object.keys(j).join(',') === 'policy,explain' ? [] : [`fields answered ${a.body}`]) },
		{ path: q('h100', 'llama-3.1-70b', '&max_batch_size=16&head_dim=128&explain=1'), expect: 200,
			check: (a, j) => (j && j.explain ? [] : ['no explain object']) },
		{ path: q('h100', 'llama-3.1-70b', '&explain=TRUE'), expect: 200, check: (a, j) => (j && j.explain ? [] : ['no explain']) },
		{ path: q('h100', 'llama-3.1-70b', '&explain=tRuE'), expect: 200, check: (a, j) => (j && j.explain ? [] : ['no explain']) },
		{ path: q('h100', 'llama-3.1-70b', '&explain=False'), expect: 200, check: (a, j) => (j && !j.explain ? [] : ['explain']) },
		{ path: q('h100', 'llama-3.1-70b', '&explain=0'), expect: 200, check: (a, j) => (j && !j.explain ? [] : ['explain']) },
		{ path: q('h100', 'llama-3.1-70b', '&explain'), expect: 200, check: (a, j) => (j && j.explain ? [] : ['bare explain']) },
		{ path: q('h100', 'llama-3.1-70b', '&explain='), expect: 200, check: (a, j) => (j && j.explain ? [] : ['empty explain']) },
		{ path: `${SPLITS}?sm_count=4294967295&num_q_heads=3000000000&explain=1`, expect: 200,
			check: (a, j) => [...field(j, 'target', null), ...field(j, 'model', null)] },
		{ path: `${SPLITS}?sm_count=1&num_q_heads=1&head_dim=4294967295&max_batch_size=4294967295&max_rows=4294967295&explain=1`,
			expect: 200 },
		{ path: `${SPLITS}?sm_count=132&num_q_heads=24&max_batch_size=16&num_seqs=64&max_rows=8`, expect: 200 },
		{ path: q('h100', 'qwen3.8-27b', '&override=4'), expect: 200, check: (a, j) => field(j, 'source', 'override') },
		{ path: q('h100', 'qwen3.8-27b', '&override=99'), expect: 200, check: (a, j) => field(j, 'policy', '16') },
		{ path: q('h100', 'qwen3.8-27b', '&override=atuo'), expect: 200, check: (a, j) => field(j, 'source', 'declared') },
		{ path: q('h100', 'qwen3.8-27b', '&override=%20AUTO%20'), expect: 200 },
		{ path: q('h100', 'qwen3.8-27b', '&override='), expect: 200 },
		{ path: q('h100', 'qwen3.8-27b', '&declared=legacy'), expect: 200, check: (a, j) => field(j, 'declared', 'legacy') },
		// a declaration that does not parse: what the engine does, with a warning
		{ name: 'declared that does not parse', path: q('h100', 'qwen3.8-27b', '&declared=atuo'), expect: 200,
			check: (a, j) => [...field(j, 'declared', 'legacy'), ...field(j, 'policy', 'legacy'),
				...field(j, 'source', 'declared'),
				...(j && j.warnings && j.warnings.some(w => w.includes('atuo')) ? [] : ['no warning names "atuo"'])] },
		{ path: q('HOPPER', 'Qwen3.8-27B'), expect: 200, check: (a, j) => field(j, 'target', 'hopper') },
		{ path: `${SPLITS}?target=h100&sm_count=100&model=qwen3-8b&num_q_heads=8&head_dim=64`, expect: 200,
			check: (a, j) => field(j, 'sm_count', 100) },
		{ path: `${SPLITS}?target=${'t'.repeat(256)}&model=qwen3-8b`, expect: 404, slug: 'unknown-target' },
		{ path: q('hoper', 'qwen3-8b'), expect: 404, slug: 'unknown-target', check: (a, j) => field(j, 'suggestion', 'hopper') },
		{ path: q('h100', 'qwen9'), expect: 404, slug: 'unknown-model' },
		{ path: q('h100', 'qwen3.8-27b', '&catalog=defualt'), expect: 404, slug: 'unknown-catalog',
		  check: (a, j) => field(j, 'suggestion', 'default') },
		{ path: q('h100', 'qwen3.8-27b', '&catalog=default'), expect: 200, check: (a, j) => field(j, 'catalog_name', 'default') },
		{ path: '/v1/targets?catalog=nope', expect: 404, slug: 'unknown-catalog' },
		{ path: '/v1/status?catalog=default', expect: 200 },
		{ path: '/v1/diff?from=default&to=default', expect: 200 },
		{ path: `${SPLITS}?target=h100`, expect: 400, slug: 'missing-parameter' },
		{ path: `${SPLITS}?model=qwen3-8b`, expect: 400, slug: 'missing-parameter' },
		{ path: q('h100', 'qwen3-8b', '&modle=x'), expect: 400, slug: 'unknown-parameter' },
		{ path: q('h100', 'qwen3-8b', '&max_batch=16'), expect: 400, slug: 'unknown-parameter' },
		{ name: '33 parameters', path: `${SPLITS}?${Array.from({ length: 33 }, (_, i) => `p${i}=1`).join('&')}`,
			expect: 400, slug: 'malformed-query' },
		// catalog
		{ path: '/v1/targets/HOPPER', expect: 200, check: (a, j) => field(j, 'name', 'hopper') },
		{ path: '/v1/targets/sm121', expect: 200, check: (a, j) => field(j, 'name', 'gb10') },
		{ path: '/v1/targets/hoper', expect: 404, slug: 'unknown-target' },
		{ path: '/v1/targets/a%2Fb', expect: 404, slug: 'unknown-target' },
		{ path: '/v1/models/qwen3.8-27b', expect: 200 },
		{ path: '/v1/models/qwen9', expect: 404, slug: 'unknown-model' },
		// policy
		...['auto', 'LEGACY', '%208%20', '0', 'off', '99', '4294967296', 'atuo', '%2B4', '007']
			.map(s => ({ path: `/v1/policy?spelling=${s}`, expect: 200 })),
		{ path: '/v1/policy?spelling=auto&spelling=legacy', expect: 400, slug: 'repeated-parameter', prismRefuses: true },
		// the other engines (engine=), the listing and the comparison
		{ path: q('h100', 'llama-3.1-8b', '&engine=fa2&seq_len=8192&page_size=256&num_seqs=8'), expect: 200,
			check: (a, j) => [...field(j, 'engine', 'fa2'), ...field(j, 'num_splits', 4)] },
		{ path: q('h100', 'llama-3.1-8b', '&engine=fa3&seq_len=8192&page_size=256'), expect: 200,
			check: (a, j) => [...field(j, 'num_splits', 13), ...field(j, 'num_splits_bound', 15)] },
		{ path: q('h100', 'llama-3.1-8b', '&engine=flashinfer&seq_len=8192&blocks_per_sm=2&cuda_graph=1'), expect: 200 },
		{ path: q('h100', 'llama-3.1-8b', '&engine=vllm&seq_len=8192'), expect: 200 },
		{ path: q('h100', 'llama-3.1-8b', '&engine=seed&seq_len=8192'), expect: 200,
			check: (a, j) => field(j, 'num_splits', 9) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=vllm-v0&seq_len=8192&page_size=256'), expect: 422,
			slug: 'unsupported-shape' },
		{ path: q('h100', 'llama-3.1-8b', '&engine=fa&seq_len=8192'), expect: 404, slug: 'unknown-engine',
			prismRefuses: true },
		{ path: q('h100', 'llama-3.1-8b', '&engine=fa2'), expect: 400, slug: 'missing-parameter' },
		// a mixed batch (seq_lens, issue 49): every engine's answer and the seed's
		{ path: q('h100', 'llama-3.1-8b', '&engine=fa3&seq_lens=8192,512,512,512,100,100,100,100'), expect: 200,
			check: (a, j) => field(j, 'num_splits', 11) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=flashinfer&tensor_cores=1&fixed_split_size=2048&page_size=1&seq_lens=8192,100'),
			expect: 200, check: (a, j) => field(j, 'num_splits', 4) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=vllm&seq_lens=8192,100'), expect: 200 },
		// the engines of today (issue 50), each on the worked batch
		{ path: q('h100', 'llama-3.1-8b', '&engine=vllm&seq_lens=8192,512,512,512,100,100,100,100'), expect: 200,
			check: (a, j) => field(j, 'num_splits', 11) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=vllm&seq_len=8192&cudagraph_mode=none&batch_invariant=1&max_capture_size=256'),
			expect: 200, check: (a, j) => field(j, 'num_splits', 1) },
		{ path: q('a100', 'llama-3.1-8b', '&engine=vllm&seq_len=8192&max_model_len=32768'), expect: 200 },
		{ path: q('h100', 'llama-3.1-8b', '&engine=vllm-triton&seq_lens=8192,512,100'), expect: 200 },
		{ path: q('h100', 'llama-3.1-8b', '&engine=sglang&seq_lens=8192,512,512,512,100,100,100,100'), expect: 200,
			check: (a, j) => field(j, 'num_splits', 8) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=sglang&deterministic=true&max_kv_splits=16&seq_lens=8192,100'), expect: 200 },
		{ path: q('h100', 'llama-3.1-8b', '&engine=trtllm&seq_lens=8192,512,512,512,100,100,100,100'), expect: 200,
			check: (a, j) => field(j, 'num_splits', 16) },
		{ path: q('h100', 'deepseek-v3', '&engine=flashmla&head_dim_v=512&seq_lens=8192,8192,8192,8192,8192,8192,8192,8192'),
			expect: 200, check: (a, j) => field(j, 'num_splits', 9) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=atlas&seq_len=8192&compute_capability=90'), expect: 200,
			check: (a, j) => field(j, 'num_splits', 9) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=vllm&seq_len=8192&cudagraph_mode=ful'), expect: 400,
			slug: 'invalid-parameter', prismRefuses: true },
		{ path: q('b200', 'llama-3.1-8b', '&engine=vllm&seq_len=8192'), expect: 422, slug: 'unsupported-shape' },
		{ path: '/v1/splits?sm_count=132&num_q_heads=32&num_kv_heads=8&head_dim=128&engine=vllm&seq_len=8192', expect: 400,
			slug: 'missing-parameter' },
		{ path: q('h100', 'llama-3.1-8b', '&engine=trtllm&seq_lens=100'), expect: 422, slug: 'unsupported-shape' },
		// the reserve (issue 51): each engine's worst batch of a serve
		{ path: '/v1/reserve?target=h100&model=llama-3.1-8b&engine=vllm&max_batch_size=64&max_model_len=32768', expect: 200,
			check: (a, j) => field(j, 'workspace_bytes', 33816576) },
		{ path: '/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa2&max_batch_size=64&max_model_len=32768', expect: 200 },
		{ path: '/v1/reserve?target=h100&model=llama-3.1-8b&engine=flashinfer&blocks_per_sm=2&max_batch_size=16&max_model_len=8192',
			expect: 200 },
		{ path: '/v1/reserve?target=h100&model=deepseek-v3&engine=flashmla&max_batch_size=16&max_model_len=8192', expect: 200 },
		{ path: '/v1/reserve?target=h100&model=llama-3.1-8b&engine=atlas&max_batch_size=8', expect: 200,
			check: (a, j) => field(j, 'max_rows', 8) },
		{ path: q('h100', 'llama-3.1-8b', '&engine=sglang&reserve=1&max_batch_size=8'), expect: 200 },
		{ path: '/v1/compare?target=h100&model=llama-3.1-8b&seq_len=32768&max_batch_size=8&max_model_len=32768&blocks_per_sm=2',
			expect: 200 },
		{ path: '/v1/compare?target=h100&model=llama-3.1-8b&blocks_per_sm=2&seq_lens=8192,100&max_model_len=8192', expect: 200 },
		{ path: '/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa3&max_batch_size=4097&max_model_len=100', expect: 400,
			slug: 'invalid-parameter' },
		{ path: '/v1/reserve?target=h100&model=llama-3.1-8b&engine=fa3&max_model_len=100', expect: 400,
			slug: 'missing-parameter' },
		{ path: '/v1/compare?target=h100&model=llama-3.1-8b&seq_lens=100,200&max_model_len=150', expect: 400,
			slug: 'invalid-parameter' },
		{ path: '/v1/reserve?target=h100&model=llama-3.1-8b&engine=trtllm&max_batch_size=4096&max_model_len=2147483647',
			expect: 422, slug: 'unsupported-shape' },
		{ path: q('h100', 'llama-3.1-8b', '&engine=fa2&page_size=256&seq_lens=8192,100'), expect: 200 },
		{ path: q('h100', 'llama-3.1-8b', '&seq_lens=8192,100&fields=num_splits,num_splits_by_seq'), expect: 200 },
		{ path: q('gb10', 'llama-3.1-8b', '&seq_lens=8192,100'), expect: 200, check: (a, j) => field(j, 'num_seqs', 2) },
		{ path: q('h100', 'llama-3.1-8b', '&seq_lens=8192,,100'), expect: 400, slug: 'invalid-parameter',
			prismRefuses: true },
		{ path: q('h100', 'llama-3.1-8b', '&seq_lens=8192&num_seqs=2'), expect: 400, slug: 'invalid-parameter' },
		{ path: '/v1/compare?target=h100&model=llama-3.1-8b&blocks_per_sm=2&seq_lens=8192,512,512,512,100,100,100,100',
			expect: 200, check: (a, j) => (j && j.engines && j.engines[2].moved && j.engines[2].moved[0] === 0
				? [] : ['fa3 did not move']) },
		{ path: '/v1/compare?target=a100&model=llama-3.1-8b&seq_len=100&max_batch_size=4', expect: 200,
			check: (a, j) => (j && j.engines && j.engines[0].batch_invariant === false ? [] : ['legacy a100 holds still']) },
		{ path: '/v1/compare?target=h100&model=llama-3.1-8b&seq_len=8192&max_batch_size=5000', expect: 400,
			slug: 'invalid-parameter' },
		{ path: '/v1/compare?model=llama-3.1-8b&seq_len=8192', expect: 400, slug: 'missing-parameter' },
		// matrix
		{ path: '/v1/matrix', expect: 200, check: (a, j) => field(j, 'max_batch_size', 1) },
		{ path: '/v1/matrix?max_batch_size=16&num_seqs=4&max_rows=32&override=atuo', expect: 200,
			check: (a, j) => (j && j.warnings && j.warnings.length === 1 ? [] : ['no override warning']) },
		{ path: '/v1/matrix?max_batch_size=16&override=2', expect: 200 },
		{ path: '/v1/matrix?target=h100', expect: 400, slug: 'unknown-parameter' },
		// the page: / by Accept, /ui whatever the Accept
		{ name: '/ as curl (*/*)', path: '/', headers: { Accept: '*/*' }, expect: 200, check: isIndex },
		{ name: '/ with no Accept', path: '/', expect: 200, check: isIndex },
		{ name: '/ as a JSON client', path: '/', headers: { Accept: 'application/json' }, expect: 200, check: isIndex },
		{ name: '/ with text/html at a lower q', path: '/', headers: { Accept: 'text/html;q=0.5, application/json' },
			expect: 200, check: isIndex },
		{ name: '/ as a browser', path: '/', headers: { Accept: BROWSER_ACCEPT }, expect: 200,
			check: a => [...isPage(a), ...header(a, 'Vary', 'Accept')] },
		{ name: '/ preferring text/html by q', path: '/', headers: { Accept: 'application/json;q=0.8, text/html;q=0.9' },
			expect: 200, check: isPage },
		{ name: '/ui as a JSON client', path: '/ui', headers: { Accept: 'application/json' }, expect: 200,
			check: a => [...isPage(a), ...(a.headers.vary === (ORIGIN ? 'Origin' : undefined) ? []
				: ['/ui does not negotiate'])] },
		{ path: '/ui/app.js', headers: { Accept: '*/*' }, expect: 200,
			check: a => [...header(a, 'Content-Type', 'text/javascript; charset=utf-8'), ...header(a, 'X-Content-Type-Options', 'nosniff')] },
		{ path: '/ui/style.css', headers: { Accept: 'text/css,*/*;q=0.1' }, expect: 200,
			check: a => [...header(a, 'Content-Type', 'text/css; charset=utf-8'), ...header(a, 'X-Content-Type-Options', 'nosniff')] },
		// problem types
		...SLUGS.map(s => ({ path: `/problems/${s}`, expect: 200, check: (a, j) => field(j, 'type', `/problems/${s}`) })),
		{ path: '/problems/nope', expect: 404, slug: 'not-found' },
		{ path: '/problems/none', expect: 404, slug: 'not-found' },
		// POST /v1/splits
		{ method: 'POST', path: SPLITS, headers: JSON_CT, body: { target: 'h100', model: 'qwen3.8-27b', max_batch_size: 16 },
			expect: 200, check: (a, j) => field(j, 'num_splits', 11) },
		{ method: 'POST', path: SPLITS, headers: { 'Content-Type': 'application/json; charset=utf-8' },
			body: { sm_count: 132, num_q_heads: 24, head_dim: 128, explain: true, override: 'atuo', declared: 'auto' }, expect: 200 },
		{ method: 'POST', path: SPLITS, headers: JSON_CT, body: { target: 'h100', model: 'qwen3-8b', explain: false }, expect: 200 },
		{ method: 'POST', path: SPLITS, headers: JSON_CT, body: { target: 'hoper', model: 'qwen3-8b' }, expect: 404, slug: 'unknown-target' },
		{ method: 'POST', path: SPLITS, headers: JSON_CT, body: { target: 'h100', model: 'qwen9' }, expect: 404, slug: 'unknown-model' },
		{ name: 'declared that does not parse', method: 'POST', path: SPLITS, headers: JSON_CT,
			body: { target: 'h100', model: 'qwen3-8b', declared: 'atuo' }, expect: 200,
			check: (a, j) => [...field(j, 'declared', 'legacy'), ...field(j, 'source', 'declared')] },
		{ name: 'POST with a query string', method: 'POST', path: `${SPLITS}?target=h100`, headers: JSON_CT,
			body: { target: 'h100', model: 'qwen3-8b' }, expect: 400, slug: 'unknown-parameter' },
		{ name: 'batch, mixed results', method: 'POST', path: SPLITS, headers: JSON_CT,
			body: { queries: [{ target: 'h100', model: 'qwen3-8b' }, { target: 'hoper', model: 'qwen3-8b' },
				{ target: 'gb10', model: 'qwen9' }, { sm_count: 132, num_q_heads: 24, override: 'atuo', explain: true }] },
			expect: 200, check: (a, j) => [...field(j, 'count', 4), ...field(j, 'failures', 2),
				...(j && j.results && j.results[1].error && j.results[1].error.type === '/problems/unknown-target' ? [] : ['results[1] is not unknown-target'])] },
		// items are answered in place, whatever they are: the description takes any (issue 20)
		{ name: 'batch with invalid items', method: 'POST', path: SPLITS, headers: JSON_CT,
			body: { queries: [{ sm_count: 1, num_q_heads: 1 }, {}, 5, { sm_count: 0, num_q_heads: 1 }] }, expect: 200,
			check: (a, j) => [...field(j, 'count', 4), ...field(j, 'failures', 3)] },
		{ name: 'batch with fields', method: 'POST', path: SPLITS, headers: JSON_CT,
			body: { fields: 'num_splits,workspace_slots', queries: [{ target: 'h100', model: 'qwen3.8-27b', max_batch_size: 16 },
				{ target: 'hoper', model: 'qwen3-8b' }] },
			expect: 200, check: (a, j) => (j && j.results && Object.keys(j.results[0]).join(',') === 'num_splits,workspace_slots'
				&& j.results[0].workspace_slots === 4224 && j.results[1].error ? [] : [`batch with fields answered ${a.body}`]) },
		{ name: 'batch of 1024', method: 'POST', path: SPLITS, headers: JSON_CT,
			body: batchOf(1024, i => ({ sm_count: 1 + i, num_q_heads: 8 })), expect: 200,
			check: (a, j) => [...field(j, 'count', 1024), ...field(j, 'failures', 0)] },
		{ name: `batch over --max-body (${MAX_BODY})`, method: 'POST', path: SPLITS, headers: JSON_CT,
			body: batchOf(1024, i => ({ target: 'h100', model: 'qwen3.8-27b', max_batch_size: 1 + i, num_seqs: 1 })),
			expect: 413, slug: 'payload-too-large' },
	);
	return cases;
}

// Straight to splitkd, for every route: what no proxy passes on as sent.
// A POST-only route is sent its framing errors as POST, and GET and HEAD
// among the methods it refuses.
function directPerRoute() {
	const cases = [];
	const routes = [...Object.keys(SAMPLE).map(r => [r, SAMPLE[r], false]),
		...Object.keys(POST_SAMPLE).map(r => [r, POST_SAMPLE[r], true])];
	for (const [r, p, postOnly] of routes) {
		const allow = postOnly ? 'POST' : r === SPLITS ? 'GET, HEAD, POST' : 'GET, HEAD';
		const m = postOnly ? 'POST' : 'GET';
		const allowed = a => (a.headers.allow === allow ? [] : [`Allow: ${a.headers.allow}, expected ${allow}`]);
		cases.push(
			postOnly ? { name: r, method: 'GET', path: p, expect: 405, slug: 'method-not-allowed', check: allowed }
				: { name: r, method: 'HEAD', path: p, expect: 200 },
			{ name: r, method: postOnly ? 'HEAD' : 'DELETE', path: p, expect: 405, slug: postOnly ? undefined : 'method-not-allowed',
				check: allowed },
			{ name: r, method: 'DELETE', path: p, expect: 405, slug: 'method-not-allowed', check: allowed },
			{ name: `${r} (methods are case-sensitive)`, method: m.toLowerCase(), path: p, expect: 405, slug: 'method-not-allowed' },
			{ name: `${r} without Host`, method: m, path: p, bytes: request(m, p, [], null, { host: false }), expect: 400, slug: 'bad-request' },
			{ name: `${r} two Hosts`, method: m, path: p, bytes: request(m, p, [['Host', 'again']]), expect: 400, slug: 'bad-request' },
			{ name: `${r} two Content-Lengths`, method: m, path: p, bytes: request(m, p, [['Content-Length', '0'], ['Content-Length', '0']]),
				expect: 400, slug: 'bad-request' },
			{ name: `${r} Content-Length and chunked`, method: m, path: p,
				bytes: request(m, p, [['Content-Length', '5'], ['Transfer-Encoding', 'chunked']], '0\r\n\r\n'), expect: 400, slug: 'bad-request' },
			{ name: `${r} Expect: bogus`, method: m, path: p, bytes: request(m, p, [['Expect', 'bogus']]), expect: 417, slug: 'expectation-failed' },
			{ name: `${r} Transfer-Encoding: gzip`, method: m, path: p, bytes: request(m, p, [['Transfer-Encoding', 'gzip']]),
				expect: 501, slug: 'not-implemented' },
			{ name: `${r} body over --max-body`, method: m, path: p, bytes: request(m, p, [['Content-Length', String(MAX_BODY + 1)]]),
				expect: 413, slug: 'payload-too-large' },
		);
	}
	return cases;
}

// Straight to splitkd: single errors no proxy passes on as sent.
function directOther() {
	const post = (name, body, expect, slug, extra = {}) => ({ name, method: 'POST', path: SPLITS,
		bytes: request('POST', SPLITS, JSON_CT_RAW, body), expect, slug, ...extra });
	return [
		{ name: 'empty sm_count', path: q('h100', 'qwen3-8b', '&sm_count='), expect: 400, slug: 'invalid-parameter' },
		{ name: 'empty spelling', path: '/v1/policy?spelling=', expect: 200, check: (a, j) => field(j, 'parses', false) },
		{ name: 'bare spelling', path: '/v1/policy?spelling', expect: 200, check: (a, j) => field(j, 'spelling', '') },
		{ name: 'bad %-escape', path: `${SPLITS}?target=h%zz0&model=qwen3-8b`, expect: 400, slug: 'malformed-query' },
		{ name: 'name that does not %-decode', path: '/v1/targets/%zz', expect: 404, slug: 'not-found' },
		{ name: 'no route', path: '/nope', expect: 404, slug: 'not-found' },
		{ name: 'trailing slash', path: '/v1/targets/', expect: 404, slug: 'not-found' },
		{ name: 'HEAD 404', method: 'HEAD', path: '/v1/targets/hoper', expect: 404 },
		{ name: 'HEAD 400', method: 'HEAD', path: `${SPLITS}?target=h100`, expect: 400 },
		{ name: 'HEAD /metrics', method: 'HEAD', path: '/metrics', expect: 200 },
		{ name: 'HEAD / as a browser', method: 'HEAD', path: '/', headers: [['Accept', BROWSER_ACCEPT]], expect: 200,
			check: a => [...header(a, 'Content-Type', 'text/html; charset=utf-8'), ...header(a, 'Vary', 'Accept'),
				...header(a, 'Content-Security-Policy', CSP)] },
		{ name: 'HEAD / as curl', method: 'HEAD', path: '/', headers: [['Accept', '*/*']], expect: 200,
			check: a => [...header(a, 'Content-Type', 'application/json'), ...header(a, 'Vary', 'Accept')] },
		{ name: '/ui/ (the page\'s URLs are relative)', path: '/ui/', headers: [['Accept', BROWSER_ACCEPT]], expect: 404,
			slug: 'not-found' },
		{ name: '/ with a garbage Accept', path: '/', headers: [['Accept', ';;q=x,"text/html']], expect: 200, check: isIndex },
		{ name: '/metrics 9000-byte target', path: `/metrics?pad=${'a'.repeat(9000)}`, expect: 414, slug: 'uri-too-long' },
		post('malformed JSON', '{"target":', 400, 'malformed-json', {
			check: (a, j) => (j && /offset \d+/.test(j.detail) ? [] : [`detail does not say where: ${j && j.detail}`]) }),
		post('trailing data', '{"target":"h100","model":"qwen3-8b"} x', 400, 'malformed-json'),
		post('NUL byte', '{"target":"h\u0000"}', 400, 'malformed-json'),
		post('invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 400, 'malformed-json'),
		post('nesting over 32', `${'['.repeat(33)}${']'.repeat(33)}`, 400, 'malformed-json'),
		post('empty body', '', 400, 'malformed-json'),
		post('duplicate member', '{"target":"h100","target":"h100","model":"qwen3-8b"}', 400, 'repeated-parameter'),
		post('a JSON array', '[1]', 400, 'invalid-parameter'),
		{ name: 'chunked POST', method: 'POST', path: SPLITS,
			bytes: Buffer.from(`POST ${SPLITS} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
				'24\r\n{"target":"h100","model":"qwen3-8b"}\r\n0\r\n\r\n', 'latin1'), expect: 200 },
		{ name: 'chunked POST over --max-body', method: 'POST', path: SPLITS,
			bytes: Buffer.concat([Buffer.from(`POST ${SPLITS} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
				+ `${(MAX_BODY + 16).toString(16)}\r\n`, 'latin1'), Buffer.alloc(MAX_BODY + 16, 0x20), Buffer.from('\r\n0\r\n\r\n', 'latin1')]),
			expect: 413, slug: 'payload-too-large' },
	];
}

// Requests the description forbids: a declared error from splitkd, and a
// refusal from Prism.
function refused() {
	const get = (name, extra, slug) => ({ name, path: q('h100', 'qwen3-8b', extra), expect: 400, slug });
	const post = (name, body, expect, slug, ct = JSON_CT_RAW) => ({ name, method: 'POST', path: SPLITS,
		headers: ct, body: typeof body === 'string' ? body : JSON.stringify(body), expect, slug });
	return [
		...['0', '007', '%2B4', '-1', '4294967296', '99999999999', '1e3', '12a', '%201']
			.map(v => get(`sm_count=${v}`, `&sm_count=${v}`, 'invalid-parameter')),
		get('max_rows=0', '&max_rows=0', 'invalid-parameter'),
		get('explain=maybe', '&explain=maybe', 'invalid-parameter'),
		get('explain=yes', '&explain=yes', 'invalid-parameter'),
		get('fields=num_split', '&fields=num_split', 'invalid-parameter'),
		get('fields with an empty name', '&fields=num_splits,,policy', 'invalid-parameter'),
		get('fields twice', '&fields=policy&fields=num_splits', 'repeated-parameter'),
		get('override of 257 bytes', `&override=${'o'.repeat(257)}`, 'invalid-parameter'),
		get('declared of 257 bytes', `&declared=${'d'.repeat(257)}`, 'invalid-parameter'),
		{ name: 'target of 257 bytes', path: `${SPLITS}?target=${'t'.repeat(257)}&model=qwen3-8b`, expect: 400, slug: 'invalid-parameter' },
		get('target twice', '&target=h100', 'repeated-parameter'),
		get('max_batch_size twice', '&max_batch_size=1&max_batch_size=2', 'repeated-parameter'),
		{ name: 'no spelling', path: '/v1/policy', expect: 400, slug: 'missing-parameter' },
		{ name: 'spelling of 257 bytes', path: `/v1/policy?spelling=${'s'.repeat(257)}`, expect: 400, slug: 'invalid-parameter' },
		{ name: 'matrix max_batch_size=0', path: '/v1/matrix?max_batch_size=0', expect: 400, slug: 'invalid-parameter' },
		post('sm_count as a string', { target: 'h100', model: 'qwen3-8b', sm_count: '132' }, 400, 'invalid-parameter'),
		post('sm_count 0', { target: 'h100', model: 'qwen3-8b', sm_count: 0 }, 400, 'invalid-parameter'),
		post('sm_count 1.5', { target: 'h100', model: 'qwen3-8b', sm_count: 1.5 }, 400, 'invalid-parameter'),
		post('sm_count 2^32', { target: 'h100', model: 'qwen3-8b', sm_count: 4294967296 }, 400, 'invalid-parameter'),
		post('explain "yes"', { target: 'h100', model: 'qwen3-8b', explain: 'yes' }, 400, 'invalid-parameter'),
		post('target null', { target: null, model: 'qwen3-8b' }, 400, 'invalid-parameter'),
		post('override of 257 bytes', { target: 'h100', model: 'qwen3-8b', override: 'o'.repeat(257) }, 400, 'invalid-parameter'),
		post('unknown member', { target: 'h100', model: 'qwen3-8b', modle: 'x' }, 400, 'unknown-parameter'),
		post('no model', { target: 'h100' }, 400, 'missing-parameter'),
		post('no target', { model: 'qwen3-8b' }, 400, 'missing-parameter'),
		post('empty object', {}, 400, 'missing-parameter'),
		post('a JSON string', '"h100"', 400, 'invalid-parameter'),
		post('empty batch', { queries: [] }, 400, 'invalid-parameter'),
		post('batch fields not a member', { fields: 'num_split', queries: [{ target: 'h100', model: 'qwen3-8b' }] }, 400, 'invalid-parameter'),
		post('batch fields not a string', { fields: ['num_splits'], queries: [{ target: 'h100', model: 'qwen3-8b' }] }, 400, 'invalid-parameter'),
		post('fields in a one-decision body', { target: 'h100', model: 'qwen3-8b', fields: 'num_splits' }, 400, 'unknown-parameter'),
		post('queries not an array', { queries: 5 }, 400, 'invalid-parameter'),
		post('batch with a second member', { queries: [{ sm_count: 1, num_q_heads: 1 }], extra: 1 }, 400, 'unknown-parameter'),
		post('batch of 1025', batchOf(1025, () => ({ sm_count: 1, num_q_heads: 1 })), 413, 'payload-too-large'),
		post('text/plain', '{"target":"h100","model":"qwen3-8b"}', 415, 'unsupported-media-type', [['Content-Type', 'text/plain']]),
		post('text/json', '{"target":"h100","model":"qwen3-8b"}', 415, 'unsupported-media-type', [['Content-Type', 'text/json']]),
		post('application/jsonx', '{"target":"h100","model":"qwen3-8b"}', 415, 'unsupported-media-type', [['Content-Type', 'application/jsonx']]),
	];
}

// ------------------------------------------------------------ OFREP
// The OFREP routes: every answer of docs/ofrep-design.md once, each failure's
// errorDetails compared with what GET (or POST) /v1/splits answers for the
// same inputs, asked of splitkd itself rather than written here.

// GET /v1/splits for a context, straight to splitkd: [status, JSON, raw text].
async function splitsFor(ctx) {
	const qs = new URLSearchParams(Object.entries(ctx).map(([k, v]) => [k, String(v)])).toString();
	const a = await raw.once(serverPort, request('GET', `${SPLITS}?${qs}`));
	return [a.status, jsonOf(a.body), a.body.toString('utf8')];
}

// An OFREP failure: JSON, the code, errorDetails when given, a key or none.
function ofrepFailure(code, details, { key, more } = {}) {
	return (a, j) => {
		const out = [];
		if (!/^application\/json\b/.test(a.headers['content-type'] || '')) {
			out.push(`Content-Type ${a.headers['content-type']}, expected application/json`);
		}
		if (!j) {
			return [...out, 'not JSON'];
		}
		out.push(...field(j, 'errorCode', code));
		if (details !== undefined) {
			out.push(...field(j, 'errorDetails', details));
		}
		if (key !== undefined) {
			out.push(...field(j, 'key', key));
		}
		return [...out, ...(more ? more(j) : [])];
	};
}

// A bulk answer: the five flags in order, each checked by `each`.
function bulkOf(each) {
	const keys = ['num_splits', 'workspace_slots', 'workspace_bytes', 'policy', 'policy_source'];
	return (a, j) => {
		if (!j || !Array.isArray(j.flags)) {
			return ['no flags array'];
		}
		const got = j.flags.map(f => f.key).join();
		return [...(got === keys.join() ? [] : [`flags ${got}, expected ${keys.join()}`]),
			...(a.headers.etag ? [] : ['a bulk 200 without ETag']), ...j.flags.flatMap(f => each(f))];
	};
}

function ofrepPrismCases(want) {
	const one = key => `${OFREP}/${key}`;
	const post = (name, path, body, expect, check, headers = JSON_CT) => ({ name, method: 'POST', path, headers, body, expect, check });
	const seed = { context: SEED_CONTEXT };
	const hoper = { context: { ...SEED_CONTEXT, target: 'hoper' } };
	return [
		post('num_splits, the seed', one('num_splits'), seed, 200, (a, j) => [...field(j, 'value', 11),
			...field(j, 'reason', 'TARGETING_MATCH'), ...field(j, 'variant', want.seed.policy),
			// every warning of GET /v1/splits but the null workspace_bytes one,
			// which only the workspace_bytes flag carries
			...field(j.metadata, 'warnings',
				want.seed.warnings.filter(w => !w.startsWith('workspace_bytes is null')).join('; ')),
			...(a.headers.etag ? ['a single-flag answer carries an ETag'] : [])]),
		post('workspace_slots, decimal strings, targetingKey, foreign keys', one('workspace_slots'),
			{ context: { ...SEED_CONTEXT, max_batch_size: '16', targetingKey: 'node-17', region: 'eu-west', gpus: 8 } }, 200,
			(a, j) => field(j, 'value', 4224)),
		post('workspace_bytes with a head_dim', one('workspace_bytes'), { context: want.fitsContext }, 200,
			(a, j) => field(j, 'value', want.fits.workspace_bytes)),
		post('policy, override as an integer', one('policy'), { context: { ...SEED_CONTEXT, override: 4 } }, 200,
			(a, j) => [...field(j, 'value', '4'), ...field(j, 'variant', '4')]),
		post('policy_source, override as a string', one('policy_source'), { context: { ...SEED_CONTEXT, override: '4' } }, 200,
			(a, j) => field(j, 'value', 'override')),
		post('null members are absent', one('num_splits'), { context: { ...SEED_CONTEXT, head_dim: null, override: null } }, 200,
			(a, j) => field(j, 'value', 11)),
		post('a near-miss key: ignored, with a warning', one('num_splits'), { context: { ...SEED_CONTEXT, max_bach_size: 3 } }, 200,
			(a, j) => [...field(j, 'value', 11), ...(j && /"max_bach_size" is not an input/.test(j.metadata.warnings) ? [] : ['no warning'])]),
		post('charset in the content type', one('policy'), seed, 200, (a, j) => field(j, 'value', want.seed.policy),
			{ 'Content-Type': 'application/json; charset=utf-8' }),
		post('an unknown target: 400, with /v1/splits\' detail', one('num_splits'), hoper, 400,
			ofrepFailure('INVALID_CONTEXT', want.hoper.detail, { key: 'num_splits', more: j => [...field(j.metadata, 'suggestion', 'hopper'),
				...field(j.metadata, 'problem', want.hoper.type)] })),
		post('no target', one('num_splits'), { context: { model: 'qwen3.8-27b' } }, 400, ofrepFailure('INVALID_CONTEXT', want.noTarget.detail)),
		post('no body: an empty context', one('num_splits'), undefined, 400, ofrepFailure('INVALID_CONTEXT', want.empty.detail), {}),
		post('a misspelt input', one('num_splits'), { context: { ...SEED_CONTEXT, maxBatchSize: 16 } }, 400,
			ofrepFailure('INVALID_CONTEXT', 'unknown context key "maxBatchSize"; did you mean "max_batch_size"?')),
		post('explain', one('num_splits'), { context: { ...SEED_CONTEXT, explain: true } }, 400, ofrepFailure('INVALID_CONTEXT')),
		post('workspace_bytes without head_dim', one('workspace_bytes'), seed, 400,
			ofrepFailure('INVALID_CONTEXT', want.seed.warnings.find(w => w.startsWith('workspace_bytes is null')))),
		post('workspace_bytes over 2^53 - 1', one('workspace_bytes'), { context: want.hugeContext }, 400,
			ofrepFailure('GENERAL', undefined, { more: j => (j.errorDetails.includes(want.hugeBytes) ? [] : [`no ${want.hugeBytes} in the details`]) })),
		post('an unknown flag', one('num_split'), seed, 404, ofrepFailure('FLAG_NOT_FOUND', undefined,
			{ key: 'num_split', more: j => field(j.metadata, 'suggestion', 'num_splits') })),
		post('bulk, the seed', OFREP, seed, 200, bulkOf(f => (f.key === 'workspace_bytes' ? field(f, 'errorCode', 'INVALID_CONTEXT')
			: field(f, 'variant', want.seed.policy)))),
		post('bulk, an unknown target: every flag fails', OFREP, hoper, 200,
			bulkOf(f => [...field(f, 'errorCode', 'INVALID_CONTEXT'), ...field(f, 'errorDetails', want.hoper.detail)])),
		post('bulk, no body', OFREP, undefined, 200, bulkOf(f => field(f, 'errorDetails', want.empty.detail)), {}),
	];
}

function ofrepDirectCases(want) {
	const one = key => `${OFREP}/${key}`;
	const post = (name, path, body, expect, check, ct = JSON_CT_RAW) => ({ name, method: 'POST', path,
		bytes: request('POST', path, ct, body), expect, check });
	const malformed = '{"context": {"target": "h100",';
	return [
		post('PARSE_ERROR, with POST /v1/splits\' detail', one('num_splits'), malformed, 400,
			ofrepFailure('PARSE_ERROR', want.malformed.detail, { key: 'num_splits' })),
		post('bulk PARSE_ERROR: no key', OFREP, malformed, 400,
			ofrepFailure('PARSE_ERROR', want.malformed.detail, { more: j => ('key' in j ? ['a bulk 400 has a key'] : []) })),
		post('trailing data', one('policy'), '{"context": {}} x', 400, ofrepFailure('PARSE_ERROR')),
		post('context twice', one('policy'), '{"context": {}, "context": {}}', 400, ofrepFailure('INVALID_CONTEXT')),
		post('bulk, context twice', OFREP, '{"context": {}, "context": {}}', 400, ofrepFailure('INVALID_CONTEXT')),
		post('an input twice', one('policy'), '{"context": {"target": "h100", "target": "gb10", "model": "qwen3-8b"}}', 400,
			ofrepFailure('INVALID_CONTEXT', undefined, { more: j => field(j.metadata, 'problem', '/problems/repeated-parameter') })),
		post('a body without a content type', one('policy'), '{"context": {}}', 415, undefined, []),
		post('a percent-encoded key', one('num%5Fsplits'), JSON.stringify({ context: SEED_CONTEXT }), 200,
			(a, j) => [...field(j, 'key', 'num_splits'), ...field(j, 'value', 11)]),
		post('a key that does not percent-decode', one('%zz'), '{}', 404, undefined),
		post('an empty key', `${OFREP}/`, '{}', 404, undefined),
		post('a query string', `${one('policy')}?x=1`, '{}', 400, undefined),
		post('bulk, a query string', `${OFREP}?x=1`, '{}', 400, undefined),
	].map(c => ({ ...c, slug: { 415: 'unsupported-media-type', 404: 'not-found', 400: 'unknown-parameter' }[c.check ? 0 : c.expect] }));
}

// What an OFREP failure must say, asked of /v1/splits first.
async function ofrepExpectations() {
	const huge = { target: 'h100', num_q_heads: 64, max_rows: 1048576, head_dim: 8388608 };
	const fitsContext = { target: 'h100', model: 'llama-3.1-70b', max_batch_size: 16 };
	const [, seed] = await splitsFor(SEED_CONTEXT);
	const [, fits] = await splitsFor(fitsContext);
	const [, hoper] = await splitsFor({ ...SEED_CONTEXT, target: 'hoper' });
	const [, noTarget] = await splitsFor({ model: 'qwen3.8-27b' });
	const [, empty] = await splitsFor({});
	const [, , hugeText] = await splitsFor(huge);
	const malformed = jsonOf((await raw.once(serverPort, request('POST', SPLITS, JSON_CT_RAW, '{"context": {"target": "h100",'))).body);
	return { seed, fits, fitsContext, hoper, noTarget, empty, malformed, hugeContext: huge,
		hugeBytes: /"workspace_bytes":(\d+)/.exec(hugeText)[1] };
}

// Requests the OFREP schemas forbid: OFREP's 400 (or a 415) from splitkd,
// a 422 from Prism.
function ofrepRefused() {
	const one = `${OFREP}/num_splits`;
	const post = (name, path, body, code, ct = JSON_CT_RAW) => ({ name, method: 'POST', path, headers: ct,
		body: typeof body === 'string' ? body : JSON.stringify(body), expect: code ? 400 : 415,
		check: code ? ofrepFailure(code) : undefined, slug: code ? undefined : 'unsupported-media-type' });
	const bad = v => ({ context: { ...SEED_CONTEXT, ...v } });
	return [
		post('a body that is an array', one, '[1]', 'INVALID_CONTEXT'),
		post('a context that is a string', one, { context: 'h100' }, 'INVALID_CONTEXT'),
		post('bulk, a context that is a string', OFREP, { context: 'h100' }, 'INVALID_CONTEXT'),
		...[0, 16.5, '016', 'sixteen', '4294967296', true, -1].map(v => post(`max_batch_size ${JSON.stringify(v)}`, one, bad({ max_batch_size: v }), 'INVALID_CONTEXT')),
		post('model 7', one, bad({ model: 7 }), 'INVALID_CONTEXT'),
		post('override -1', one, bad({ override: -1 }), 'INVALID_CONTEXT'),
		post('override 1.5', one, bad({ override: 1.5 }), 'INVALID_CONTEXT'),
		post('text/plain', one, { context: SEED_CONTEXT }, null, [['Content-Type', 'text/plain']]),
		post('bulk, text/plain', OFREP, { context: SEED_CONTEXT }, null, [['Content-Type', 'text/plain']]),
	];
}

// The bulk answer's ETag: 304 through Prism and straight, with a weak tag
// in a list and with *, and a full answer for another tag.
async function ofrepConditional() {
	const body = JSON.stringify({ context: SEED_CONTEXT });
	const first = await raw.once(serverPort, request('POST', OFREP, JSON_CT_RAW, body));
	const etag = first.headers.etag;
	if (first.status !== 200 || !etag) {
		record('conditional OFREP bulk', [`POST answered ${first.status} with ETag ${etag}`]);
		return;
	}
	const length200 = first.body.length;
	const noBody = a => (a.body.length === 0 ? [] : [`304 with ${a.body.length} bytes of content`]);
	const same = (a) => (a.headers.etag === etag ? [] : [`ETag ${a.headers.etag}, expected ${etag}`]);
	const direct = (name, inm, expect, check) => directCase({ name: `bulk If-None-Match ${name}`, method: 'POST', path: OFREP,
		bytes: request('POST', OFREP, [...JSON_CT_RAW, ['If-None-Match', inm]], body), expect, opts: { length200 }, check });
	await direct('', etag, 304, a => [...noBody(a), ...same(a)]);
	await direct('weak, in a list', `"0000000000000000", W/${etag}`, 304, noBody);
	await direct('*', '*', 304, noBody);
	await direct('other', '"0000000000000000"', 200, same);
	await prismCase({ name: 'bulk If-None-Match', method: 'POST', path: OFREP, headers: { ...JSON_CT, 'If-None-Match': etag },
		body: { context: SEED_CONTEXT }, expect: 304, check: noBody });
	const single = await raw.once(serverPort, request('POST', `${OFREP}/num_splits`, [...JSON_CT_RAW, ['If-None-Match', '*']], body));
	record('a single-flag POST ignores If-None-Match', single.status === 200 && !single.headers.etag ? []
		: [`status ${single.status}, ETag ${single.headers.etag}`]);
}

async function ofrepCases() {
	const want = await ofrepExpectations();
	for (const c of ofrepPrismCases(want)) {
		await prismCase(c);
	}
	for (const c of ofrepDirectCases(want)) {
		await directCase(c);
	}
	for (const c of ofrepRefused()) {
		await refusedCase(c);
	}
	await ofrepConditional();
}

// 304 for every GET route, through Prism and straight, GET and HEAD.
// The conditional cases of route r, judged against the tag of one GET;
// returns that tag, or null when there was none to judge against.
async function conditionalRoute(r) {
	const p = SAMPLE[r];
	let first;
	try {
		first = await raw.once(serverPort, request('GET', p));
	} catch (e) {
		record(`conditional ${r}`, [e.message]);
		return null;
	}
	const etag = first.headers.etag;
	if (first.status !== 200 || !etag) {
		record(`conditional ${r}`, [`GET answered ${first.status} with ETag ${etag}`]);
		return null;
	}
	const length200 = first.body.length;
	const noBody = a => (a.body.length === 0 ? [] : [`304 with ${a.body.length} bytes of content`]);
	await directCase({ name: `${r} If-None-Match`, path: p, headers: [['If-None-Match', etag]], expect: 304,
		opts: { length200 }, check: noBody });
	await directCase({ name: `${r} If-None-Match`, method: 'HEAD', path: p, headers: [['If-None-Match', etag]],
		expect: 304, opts: { length200 } });
	await directCase({ name: `${r} If-None-Match weak, in a list`, path: p,
		headers: [['If-None-Match', `"0000000000000000", W/${etag}`]], expect: 304, opts: { length200 } });
	await directCase({ name: `${r} If-None-Match other`, path: p, headers: [['If-None-Match', '"0000000000000000"']],
		expect: 200 });
	await prismCase({ name: `${r} If-None-Match`, path: p, headers: { 'If-None-Match': etag }, expect: 304, check: noBody });
	await prismCase({ name: `${r} If-None-Match *`, path: p, headers: { 'If-None-Match': '*' }, expect: 304 });
	// If-Match (RFC 9110 13.1.1): the current tag or * passes, a stale or weak one is 412
	await prismCase({ name: `${r} If-Match current`, path: p, headers: { 'If-Match': etag }, expect: 200 });
	await prismCase({ name: `${r} If-Match *`, path: p, headers: { 'If-Match': '*' }, expect: 200 });
	await prismCase({ name: `${r} If-Match stale`, path: p, headers: { 'If-Match': '"0000000000000000"' }, expect: 412,
		slug: 'precondition-failed' });
	await directCase({ name: `${r} If-Match weak`, path: p, headers: [['If-Match', `W/${etag}`]], expect: 412,
		slug: 'precondition-failed' });
	await directCase({ name: `${r} If-Match in a list`, method: 'HEAD', path: p,
		headers: [['If-Match', `"0000000000000000", ${etag}`]], expect: 200 });
	await directCase({ name: `${r} If-Match stale`, method: 'HEAD', path: p, headers: [['If-Match', '"x"']], expect: 412 });
	return etag;
}

async function conditionalCases() {
	for (const r of API_ROUTES.filter(x => !STREAMS.includes(x))) {
		// /v1/status says when each source's file was last checked (the
		// catalog's every --catalog-check, TLS's every second): its answer,
		// and so its tag, rightly changes with time. The cases are judged
		// against one tag, so when the tag moved while they ran they are
		// run again, their verdicts taken back (three runs at most; a tag
		// that moves every time still fails)
		for (let run = 1; ; run++) {
			const mark = { failures: failures.length, passed, violations };
			const etag = await conditionalRoute(r);
			const now = etag ? (await raw.once(serverPort, request('GET', SAMPLE[r]))).headers.etag : etag;
			if (now === etag || run === 3) {
				break;
			}
			failures.length = mark.failures;
			passed = mark.passed;
			violations = mark.violations;
		}
	}
	await conditionalPage();
}

// Opens GET /v1/events on a raw socket and resolves, once the header block
// and the first whole event have arrived, with the socket and what came
// (the complete chunks, de-chunked).
function openStream() {
	return new Promise((resolve, reject) => {
		// over HTTPS (SPLITKD_TLS_DIR) a TLS connection trusting the test CA, as rawhttp.js's
		const tlsDir = process.env.SPLITKD_TLS_DIR;
		const send = () => sock.write(request('GET', '/v1/events', [['Accept', 'text/event-stream']]));
		const sock = tlsDir
			? require('tls').connect({ host: '127.0.0.1', port: serverPort, ca: fs.readFileSync(`${tlsDir}/ca.pem`) }, send)
			: net.connect({ host: '127.0.0.1', port: serverPort }, send);
		let buf = Buffer.alloc(0);
		const timer = setTimeout(() => { sock.destroy(); reject(new Error('no first event within 5 s')); }, 5000);
		sock.on('error', (e) => { clearTimeout(timer); reject(e); });
		sock.on('data', (d) => {
			buf = Buffer.concat([buf, d]);
			const text = buf.toString('latin1');
			const end = text.indexOf('\r\n\r\n');
			const hello = end < 0 ? -1 : text.indexOf('event: hello', end);
			if (hello < 0 || text.indexOf('\n\n', hello) < 0) {
				return; // a refusal has no event: the caller's timeout says so
			}
			clearTimeout(timer);
			const lines = text.slice(0, end).split('\r\n');
			const headers = {};
			for (const l of lines.slice(1)) {
				const i = l.indexOf(':');
				headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
			}
			const parts = [];
			for (let pos = end + 4; ;) {
				const eol = text.indexOf('\r\n', pos);
				const size = eol < 0 ? NaN : parseInt(text.slice(pos, eol), 16);
				if (!(size > 0) || eol + 2 + size > text.length) {
					break;
				}
				parts.push(text.slice(eol + 2, eol + 2 + size));
				pos = eol + 2 + size + 2;
			}
			resolve({ sock, status: Number(lines[0].split(' ')[1]), headers, body: Buffer.from(parts.join(''), 'latin1') });
		});
	});
}

async function streamCases() {
	const name = 'direct GET /v1/events (the stream)';
	const version = JSON.parse((await raw.once(serverPort, request('GET', '/version'))).body.toString('utf8'));
	let a;
	try {
		a = await openStream();
	} catch (e) {
		record(name, [e.message]);
		return;
	}
	const text = a.body.toString('utf8');
	const hello = /^retry: 1000\n\nid: ([1-9][0-9]*)@[0-9a-f]{8}\nevent: hello\ndata: (.*)\n\n/.exec(text);
	let data = null;
	try {
		data = hello ? JSON.parse(hello[2]) : null;
	} catch (e) {
		data = null;
	}
	const judged = desc.check('GET', '/v1/events', a);
	record(name, [...judged.map(x => `description: ${x}`),
		...(a.status === 200 ? [] : [`status ${a.status}`]),
		...(a.headers.etag === undefined ? [] : ['a stream carries an ETag']),
		...(hello ? [] : [`not retry then hello: ${JSON.stringify(text.slice(0, 120))}`]),
		...(data ? desc.schemaErrors('#/components/schemas/EventHello', data).map(x => `hello data: ${x}`) : []),
		...(data && data.seq === Number(hello[1]) && data.revision === version.catalog ? []
			: [`hello data ${hello && hello[2]}, /version's catalog ${version.catalog}`])], judged.length);
	count('GET', '/v1/events', 'direct');
	// --max-streams 2 for this run: the second fills it, the third is the 503
	let second = null;
	try {
		second = await openStream();
	} catch (e) {
		record('direct GET /v1/events (the second)', [e.message]);
	}
	await directCase({ name: '/v1/events past --max-streams', path: '/v1/events', expect: 503, slug: 'overloaded',
		check: x => (/^\d+$/.test(x.headers['retry-after'] || '') ? [] : [`Retry-After: ${x.headers['retry-after']}`]) });
	a.sock.destroy();
	if (second) {
		second.sock.destroy();
	}
}

// GET / as a browser: the page's own tag answers 304 (with Vary), and
// does not revalidate the index.
async function conditionalPage() {
	let page;
	try {
		page = await raw.once(serverPort, request('GET', '/', [['Accept', BROWSER_ACCEPT]]));
	} catch (e) {
		record('conditional / as a browser', [e.message]);
		return;
	}
	const etag = page.headers.etag;
	const browser = [['Accept', BROWSER_ACCEPT], ['If-None-Match', etag]];
	await directCase({ name: '/ as a browser, If-None-Match', path: '/', headers: browser, expect: 304,
		opts: { length200: page.body.length }, check: a => header(a, 'Vary', 'Accept') });
	await directCase({ name: '/ as a browser, If-None-Match', method: 'HEAD', path: '/', headers: browser, expect: 304,
		opts: { length200: page.body.length } });
	await directCase({ name: '/ as curl with the page\'s tag', path: '/', headers: [['Accept', '*/*'], ['If-None-Match', etag]],
		expect: 200, check: isIndex });
	await prismCase({ name: '/ as a browser, If-None-Match', path: '/', headers: { Accept: BROWSER_ACCEPT, 'If-None-Match': etag },
		expect: 304, check: a => header(a, 'Vary', 'Accept') });
}

// Prism must flag an answer that breaks the description, or every "0
// violations" above proves nothing: a stand-in upstream answers /healthz
// with a body the description forbids.
async function prismSelfTest() {
	const fake = http.createServer((req, res) => {
		res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache', ETag: '"0123456789abcdef"' });
		res.end('{"status":"fine","extra":1}');
	});
	await new Promise(resolve => fake.listen(0, '127.0.0.1', resolve));
	try {
		const { match } = await procs.start('prism (self-test)', process.execPath,
			[PRISM, 'proxy', SPEC, `http://127.0.0.1:${fake.address().port}`, '--errors', '-h', '127.0.0.1', '-p', '0'],
			{ logFile: path.join(LOGS, 'prism-selftest.log'), ready: /Prism is listening on http:\/\/127\.0\.0\.1:(\d+)/, timeoutMs: 90000 });
		const ans = await viaPrism('GET', '/healthz', {}, null, Number(match[1]));
		const found = prismFindings(ans);
		record('self-test: Prism flags a /healthz answer the description forbids',
			found.length > 0 ? [] : [`Prism passed it: ${ans.status} ${ans.body}`]);
	} finally {
		fake.close();
	}
}

// SIGTERM: an open keep-alive connection's next /readyz is 503, then exit 0.
async function drainCase(server) {
	const c = await raw.connect(serverPort);
	try {
		const ok = await c.exchange(request('GET', '/readyz'));
		record('drain: /readyz before SIGTERM', ok.status === 200 ? [] : [`status ${ok.status}`]);
		const draining = procs.waitOutput(server, /drain/, 5000);
		server.kill('SIGTERM');
		if (!(await draining)) {
			record('drain: splitkd logs the drain', ['no drain line within 5 s']);
			return;
		}
		// draining starts just after the log line: ask until it shows (each
		// answer before it is a plain 200, and keeps the connection busy)
		let ans = null;
		for (let i = 0; i < 50 && (ans === null || ans.status === 200); i++) {
			ans = await c.exchange(request('GET', '/readyz'));
			if (ans.status === 200) {
				await new Promise(resolve => setTimeout(resolve, 10));
			}
		}
		const judged = desc.check('GET', '/readyz', ans);
		record('drain: /readyz on a kept-alive connection', [...judged.map(x => `description: ${x}`),
			...(ans.status === 503 ? [] : [`status ${ans.status}, expected 503`]),
			...(/close/i.test(ans.headers.connection || '') ? [] : ['no Connection: close'])], judged.length);
		count('GET', '/readyz', 'direct');
	} catch (e) {
		record('drain: /readyz on a kept-alive connection', [e.message]);
	} finally {
		c.close();
	}
	const exit = await procs.waitExit(server, 15000);
	record('drain: splitkd exits 0 after SIGTERM', exit && exit[0] === 0 ? [] : [`exit ${JSON.stringify(exit)}`]);
}

// The ajv judge must find fault where there is fault, or every "0
// violations" from it proves nothing: answers that break the description.
function validatorSelfTest() {
	const a = (status, headers, body) => ({ status, headers, body: Buffer.from(body) });
	const json = { 'content-type': 'application/json', 'cache-control': 'no-cache', etag: '"0123456789abcdef"' };
	const problem = { 'content-type': 'application/problem+json', 'cache-control': 'no-cache' };
	const decision = { target: 'hopper', sm_count: 132, declared: 'auto', model: null, num_q_heads: 24,
		head_dim: null, max_batch_size: 1, num_seqs: 1, max_rows: 1, override: null, policy: 'auto',
		source: 'declared', num_splits: 11, workspace_slots: 264, workspace_bytes: null, warnings: [],
		catalog: 'fnv1a64:0123456789abcdef' };
	const { policy, ...noPolicy } = decision;
	const page = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', etag: '"0123456789abcdef"',
		'x-content-type-options': 'nosniff', 'content-security-policy': CSP };
	const index = { name: 'splitkd', version: '0', description: 'd', openapi: '/openapi.json', page: '/ui',
		routes: [{ path: '/', methods: ['GET', 'HEAD'] }] };
	const indexHeaders = { ...json, vary: 'Accept', 'x-content-type-options': 'nosniff' };
	const bad = [
		['a /healthz status the description does not allow', 'GET', '/healthz', a(200, json, '{"status":"fine"}')],
		// a GET answer may be cut down by fields, so a missing member is a
		// fault only where fields cannot apply (a one-decision POST)...
		['a decision without policy', 'POST', SPLITS, a(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' },
			JSON.stringify(noPolicy))],
		// ...and a cut-down GET answer is still held to each member's type
		['a fields answer with a string num_splits', 'GET', SPLITS, a(200, json, '{"num_splits":"11"}')],
		['a fields answer with no member', 'GET', SPLITS, a(200, json, '{}')],
		['a decision with an extra member', 'GET', SPLITS, a(200, json, JSON.stringify({ ...decision, extra: 1 }))],
		['a POST answer that is neither branch', 'POST', SPLITS, a(200, { ...json }, '{}')],
		['a 200 without ETag', 'GET', '/healthz', a(200, problem, '{"status":"ok"}')],
		['a 405 without Allow', 'DELETE', SPLITS, a(405, problem,
			'{"type":"/problems/method-not-allowed","title":"t","status":405,"detail":"d"}')],
		['a 404 typed as a 400', 'GET', '/v1/targets/x', a(404, problem,
			'{"type":"/problems/invalid-parameter","title":"t","status":404,"detail":"d"}')],
		['an undeclared status', 'GET', '/v1/targets', a(418, problem, '{}')],
		['a 304 with Content-Type', 'GET', '/healthz', a(304, json, '')],
		['a HEAD with content', 'HEAD', '/healthz', a(200, json, '{"status":"ok"}')],
		['/metrics as JSON', 'GET', '/metrics', a(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' }, '{}')],
		['/ui without its CSP', 'GET', '/ui', a(200, { ...page, 'content-security-policy': undefined }, '<!doctype html>')],
		['/ui with a weaker CSP', 'GET', '/ui', a(200, { ...page, 'content-security-policy': "script-src 'self' 'unsafe-inline'" },
			'<!doctype html>')],
		['/ui/app.js without nosniff', 'GET', '/ui/app.js', a(200, { ...page, 'content-type': 'text/javascript; charset=utf-8',
			'x-content-type-options': undefined }, 'x')],
		['/ui/app.js as text/plain', 'GET', '/ui/app.js', a(200, { ...page, 'content-type': 'text/plain' }, 'x')],
		['/ without Vary', 'GET', '/', a(200, { ...json, 'x-content-type-options': 'nosniff' }, JSON.stringify(index))],
		['an index with an extra member', 'GET', '/', a(200, indexHeaders, JSON.stringify({ ...index, extra: 1 }))],
		['an index without routes', 'GET', '/', a(200, indexHeaders, JSON.stringify({ ...index, routes: undefined }))],
	];
	for (const [name, method, p, ans] of bad) {
		const found = desc.check(method, p, ans);
		record(`self-test: ajv finds fault with ${name}`, found.length > 0 ? [] : ['no fault found']);
	}
	record('self-test: ajv passes a good decision',
		desc.check('GET', SPLITS, a(200, json, JSON.stringify(decision))).map(x => `description: ${x}`));
	record('self-test: ajv passes a good page and index',
		[...desc.check('GET', '/ui', a(200, page, '<!doctype html>')), ...desc.check('GET', '/', a(200, indexHeaders, JSON.stringify(index)))]
			.map(x => `description: ${x}`));
}

function coverage() {
	const described = Object.keys(doc.paths).sort();
	const sampled = [...Object.keys(SAMPLE), ...Object.keys(POST_SAMPLE)].sort();
	record('every described path has a sample request', described.join() === sampled.join() ? []
		: [`described ${described.join(' ')}; sampled ${sampled.join(' ')}`]);
}

function report() {
	const rows = [...counts.entries()].sort(([a], [b]) => a.localeCompare(b));
	const w = Math.max(...rows.map(([k]) => k.length), 10);
	console.log(`\n${'route'.padEnd(w)}  prism  direct  refused  methods`);
	const total = { prism: 0, direct: 0, refused: 0 };
	for (const [k, v] of rows) {
		console.log(`${k.padEnd(w)}  ${String(v.prism).padStart(5)}  ${String(v.direct).padStart(6)}  ` +
			`${String(v.refused).padStart(7)}  ${[...v.methods].sort().join(' ')}`);
		for (const x of Object.keys(total)) {
			total[x] += v[x];
		}
	}
	console.log(`${'total'.padEnd(w)}  ${String(total.prism).padStart(5)}  ${String(total.direct).padStart(6)}  ${String(total.refused).padStart(7)}`);
	console.log('(prism: through Prism --errors; direct: raw socket, judged by ajv against the description; ' +
		'refused: forbidden by the description, 400/413/415 from splitkd and 422 from Prism)');
	if (failures.length) {
		console.log(`\nFAILED (${failures.length}):`);
		for (const f of failures) {
			console.log(`  - ${f}`);
		}
	}
	console.log(`\nviolations: ${violations}`);
	console.log(`${passed} passed, ${failures.length} failed`);
}

async function main() {
	fs.mkdirSync(LOGS, { recursive: true });
	if (!fs.existsSync(BIN)) {
		throw new Error(`${BIN} does not exist: build it first (make all)`);
	}
	// a catalog file, so that a SIGHUP gives two revisions (revisions.js)
	const catalogPath = path.join(LOGS, 'catalog.json');
	const catalogText = require('child_process').execFileSync(BIN, ['--dump-catalog']).toString('utf8');
	fs.writeFileSync(catalogPath, catalogText);
	// SPLITKD_TLS_DIR: the same run over HTTPS (Prism's upstream and the raw
	// connections trust its CA: NODE_EXTRA_CA_CERTS, rawhttp.js)
	const tlsDir = process.env.SPLITKD_TLS_DIR;
	const tlsArgs = tlsDir ? ['--tls-cert', `${tlsDir}/server.pem`, '--tls-key', `${tlsDir}/server-key.pem`] : [];
	const { child: server, match } = await procs.start('splitkd', BIN,
		['--listen', '127.0.0.1:0', '--catalog', catalogPath, '--max-header', String(MAX_HEADER), '--max-body', String(MAX_BODY),
			'--threads', '2', '--drain-timeout', '5', '--access-log', 'off', '--max-streams', '2', ...tlsArgs,
			...EXTRA],
		{ logFile: path.join(LOGS, 'splitkd.log'),
			ready: tlsDir ? /listening on https:\/\/127\.0\.0\.1:(\d+)/ : /listening on http:\/\/127\.0\.0\.1:(\d+)/,
			timeoutMs: 10000 });
	serverPort = Number(match[1]);
	// Node's own header limit (16 KiB) would answer the 431 cases itself
	const env = { ...process.env, NODE_OPTIONS: '--max-http-header-size=65536' };
	const prism = procs.start('prism', process.execPath,
		[PRISM, 'proxy', SPEC, `${tlsDir ? 'https' : 'http'}://127.0.0.1:${serverPort}`, '--errors', '-h', '127.0.0.1', '-p', '0'],
		{ logFile: path.join(LOGS, 'prism.log'), ready: /Prism is listening on http:\/\/127\.0\.0\.1:(\d+)/, timeoutMs: 90000, env });
	prismPort = Number((await prism).match[1]);
	console.log(`splitkd on ${tlsDir ? 'https' : 'http'}://127.0.0.1:${serverPort}, Prism ${require('@stoplight/prism-cli/package.json').version} ` +
		`proxy on 127.0.0.1:${prismPort} (logs in ${path.relative(ROOT, LOGS)}/)`);

	const revs = await revisions.setup(serverPort, server, catalogPath, catalogText);
	coverage();
	validatorSelfTest();
	for (const c of prismCases()) {
		await (c.prismRefuses ? refusedCase(c) : prismCase(c));
	}
	await conditionalCases();
	for (const c of [...directPerRoute(), ...directOther()]) {
		await directCase(c);
	}
	for (const c of refused()) {
		await refusedCase(c);
	}
	await ofrepCases();
	for (const c of revisions.prismCases(revs)) {
		await prismCase(c);
	}
	for (const c of revisions.directCases(revs)) {
		await directCase(c);
	}
	for (const c of revisions.refusedCases(revs)) {
		await refusedCase(c);
	}
	await prismSelfTest();
	await streamCases();
	if (ORIGIN) {
		corsCases();
	}
	await drainCase(server);
	if (EXTRA.includes('--rate-limit')) {
		await rateLimitCases();
	}
}

// What --cors-allow-origin adds to every answer through Prism above: held to the
// values here (the description says they may be there, not what they say).
const corsSeen = { answers: 0, wrong: [] };
function corsCases() {
	console.log(`CORS fields checked on ${corsSeen.answers} answers through Prism: ${corsSeen.wrong.length} wrong`);
	record(`CORS fields on the ${corsSeen.answers} answers checked`, corsSeen.wrong.slice(0, 20));
}

function noteCors(ans) {
	// what libmicrohttpd answers itself (431, 414) comes before splitkd sees the request
	if (!ORIGIN || !ans || !ans.headers || ans.status === 431 || ans.status === 414) {
		return;
	}
	corsSeen.answers++;
	const want = { 'access-control-allow-origin': ORIGIN, 'access-control-allow-credentials': 'true',
		'access-control-expose-headers': 'ETag, Retry-After, RateLimit, RateLimit-Policy' };
	for (const [k, v] of Object.entries(want)) {
		if (ans.headers[k] !== v) {
			corsSeen.wrong.push(`${k}: ${JSON.stringify(ans.headers[k])} on a ${ans.status}`);
		}
	}
	if (!/(^|, )Origin$/.test(ans.headers.vary || '')) {
		corsSeen.wrong.push(`vary: ${JSON.stringify(ans.headers.vary)} on a ${ans.status}`);
	}
}

// A daemon at --rate-limit 1: the second request of a client is 429 with
// Retry-After, RateLimit and RateLimit-Policy, judged by the description;
// /healthz beside it is never limited.
async function rateLimitCases() {
	const { match } = await procs.start('splitkd (rate limit 1)', BIN,
		['--listen', '127.0.0.1:0', '--rate-limit', '1', '--access-log', 'off', '--threads', '1',
			...(ORIGIN ? ['--cors-allow-origin', ORIGIN] : [])],
		{ logFile: path.join(LOGS, 'splitkd-rate.log'), ready: /listening on http:\/\/127\.0\.0\.1:(\d+)/,
			timeoutMs: 10000 });
	const saved = serverPort;
	serverPort = Number(match[1]);
	const target = '/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16';
	const fields = a => ['retry-after', 'ratelimit', 'ratelimit-policy']
		.filter(k => !a.headers[k]).map(k => `no ${k}`);
	await directCase({ name: 'the first request of a client (--rate-limit 1)', path: target, expect: 200,
		check: a => header(a, 'RateLimit-Policy', '"client";q=1;w=1') });
	await directCase({ name: 'its second, over --rate-limit 1', path: target, expect: 429,
		slug: 'too-many-requests', check: fields });
	await directCase({ name: 'a POST over it, refused before its body', method: 'POST', path: '/v1/splits',
		headers: [['Content-Type', 'application/json']], body: { target: 'h100', model: 'qwen3.8-27b' },
		expect: 429, slug: 'too-many-requests', check: fields });
	await directCase({ name: '/healthz, never limited', path: '/healthz', expect: 200,
		check: a => (a.headers.ratelimit ? ['RateLimit on /healthz'] : []) });
	serverPort = saved;
}

const deadline = setTimeout(() => {
	failures.push(`the run passed its ${DEADLINE_MS / 1000} s bound`);
	finish(1);
}, DEADLINE_MS);

let finishing = false;
async function finish(code) {
	if (finishing) {
		return;
	}
	finishing = true;
	clearTimeout(deadline);
	await procs.stopAll();
	report();
	process.exit(code || (failures.length > 0 || violations > 0 ? 1 : 0));
}

for (const sig of ['SIGINT', 'SIGTERM']) {
	process.on(sig, () => {
		failures.push(`stopped by ${sig}`);
		finish(1);
	});
}

main().then(() => finish(0), e => {
	failures.push(`aborted: ${e.stack || e.message}`);
	finish(1);
});
