// SPDX-License-Identifier: AGPL-3.0-only
//
// Revisions (issue 20) for the conformance run: a SIGHUP that gives the
// daemon two held revisions, then the cases that pin them, diff them and
// send If-Match, through Prism and straight, and the requests the
// description forbids. conformance.js runs the cases with its own
// prismCase / directCase / refusedCase.
'use strict';

const fs = require('fs');
const raw = require('./rawhttp');

const JSON_CT = { 'Content-Type': 'application/json' };
const JSON_CT_RAW = [['Content-Type', 'application/json']];
const UNHELD = 'fnv1a64:0000000000000000';

function get(port, target) {
	const req = Buffer.from(`GET ${target} HTTP/1.1\r\nHost: splitkd\r\n\r\n`, 'latin1');
	return raw.once(port, req).then(a => JSON.parse(a.body.toString('utf8')));
}

// The catalog the daemon starts with is `text`; a reload swaps in a copy
// with a target added and a declaration flipped (no value the other cases
// check moves). Resolves with both revisions and the two catalogs.
async function setup(port, server, catalogPath, text) {
	const before = (await get(port, '/v1/revisions')).current;
	const next = JSON.parse(text);
	next.targets.push({ name: 'b300', aliases: [], sm_count: 160, attn_decode_splitk: 'auto' });
	for (const t of next.targets) {
		if (t.name === 'rtx4090') {
			t.attn_decode_splitk = 'auto';
		}
	}
	fs.writeFileSync(`${catalogPath}.tmp`, JSON.stringify(next));
	fs.renameSync(`${catalogPath}.tmp`, catalogPath);
	server.kill('SIGHUP');
	for (let i = 0; i < 250; i++) {
		const now = (await get(port, '/v1/revisions')).current;
		if (now !== before) {
			return { old: before, now, oldCatalog: JSON.parse(text), newCatalog: next };
		}
		await new Promise(resolve => setTimeout(resolve, 20));
	}
	throw new Error('the SIGHUP reload did not land within 5 s');
}

const field = (j, key, want) => (j && j[key] === want ? [] : [`${key} is ${JSON.stringify(j && j[key])}, expected ${JSON.stringify(want)}`]);

function unavailable(r) {
	return (a, j) => [...field(j, 'current', r.now),
		...(j && Array.isArray(j.held) && j.held[0] === r.now && j.held.includes(r.old) ? [] : [`held ${JSON.stringify(j && j.held)}`])];
}

// Through Prism: every new route, parameter and error it can carry.
function prismCases(r) {
	const splits = '/v1/splits?target=rtx4090&model=qwen3-8b&max_batch_size=16';
	const diff = `/v1/diff?from=${r.old}&to=${r.now}&max_batch_size=16`;
	return [
		{ path: '/v1/revisions', expect: 200, check: (a, j) => [...field(j, 'current', r.now),
			...(j && j.revisions.length === 2 && j.revisions[1].revision === r.old ? [] : ['not both revisions, newest first'])] },
		{ path: '/v1/diff', expect: 200, check: (a, j) => [...field(j, 'from', r.old), ...field(j, 'to', r.now)] },
		{ path: diff, expect: 200, check: (a, j) => (j && j.cells.length > 0 && j.targets.added[0] === 'b300' ? [] : ['no cells or no b300']) },
		{ path: `/v1/diff?from=${r.now}&to=${r.old}&num_seqs=4&max_rows=32&override=atuo`, expect: 200,
			check: (a, j) => (j && j.warnings.length === 1 && j.targets.removed[0] === 'b300' ? [] : ['no warning, or b300 not removed']) },
		{ path: `/v1/diff?from=${UNHELD}`, expect: 409, slug: 'revision-unavailable', check: unavailable(r) },
		{ path: `/v1/diff?to=${UNHELD}`, expect: 409, slug: 'revision-unavailable', check: unavailable(r) },
		{ path: '/v1/diff?revision=x', expect: 400, slug: 'unknown-parameter' },
		{ path: `${splits}&revision=${r.old}`, expect: 200, check: (a, j) => [...field(j, 'catalog', r.old), ...field(j, 'policy', 'legacy')] },
		{ path: `${splits}&revision=${r.now}`, expect: 200, check: (a, j) => [...field(j, 'catalog', r.now), ...field(j, 'policy', 'auto')] },
		{ path: `${splits}&revision=${UNHELD}`, expect: 409, slug: 'revision-unavailable', check: unavailable(r) },
		{ path: `/v1/matrix?max_batch_size=16&revision=${r.old}`, expect: 200, check: (a, j) => field(j, 'catalog', r.old) },
		{ path: `/v1/matrix?revision=${UNHELD}`, expect: 409, slug: 'revision-unavailable', check: unavailable(r) },
		{ name: 'POST pinned', method: 'POST', path: '/v1/splits', headers: JSON_CT,
			body: { target: 'rtx4090', model: 'qwen3-8b', revision: r.old }, expect: 200, check: (a, j) => field(j, 'catalog', r.old) },
		{ name: 'POST pinned, not held', method: 'POST', path: '/v1/splits', headers: JSON_CT,
			body: { target: 'rtx4090', model: 'qwen3-8b', revision: UNHELD }, expect: 409, slug: 'revision-unavailable', check: unavailable(r) },
		{ name: 'batch pinned', method: 'POST', path: '/v1/splits', headers: JSON_CT,
			body: { revision: r.old, queries: [{ target: 'rtx4090', model: 'qwen3-8b' }, { target: 'b300', model: 'qwen3-8b' }] },
			expect: 200, check: (a, j) => [...field(j, 'catalog', r.old), ...field(j, 'failures', 1)] },
		{ name: 'batch pinned, not held', method: 'POST', path: '/v1/splits', headers: JSON_CT,
			body: { revision: UNHELD, queries: [{ target: 'rtx4090', model: 'qwen3-8b' }] }, expect: 409, slug: 'revision-unavailable' },
		// the mismatch: splitkd answers every item in place, and the description now says so
		{ name: 'batch items: explain, and a query without model', method: 'POST', path: '/v1/splits', headers: JSON_CT,
			body: { queries: [{ target: 'h100', model: 'qwen3-8b', explain: true }, { target: 'h100' }] }, expect: 200,
			check: (a, j) => [...field(j, 'failures', 1), ...(j && j.results[0].explain && j.results[1].error ? [] : ['not answered in place'])] },
		{ name: 'batch items: not objects', method: 'POST', path: '/v1/splits', headers: JSON_CT,
			body: { queries: [1, 'h100', null, [], { target: 'h100', model: 'qwen3-8b' }] }, expect: 200,
			check: (a, j) => field(j, 'failures', 4) },
		{ name: 'candidate diff', method: 'POST', path: '/v1/catalog/diff?max_batch_size=16', headers: JSON_CT,
			body: r.oldCatalog, expect: 200, check: (a, j) => [...field(j, 'from', r.now), ...field(j, 'to', r.old)] },
		{ name: 'candidate diff from the old one, itself', method: 'POST', path: `/v1/catalog/diff?from=${r.old}`, headers: JSON_CT,
			body: r.oldCatalog, expect: 200, check: (a, j) => (j && j.cells.length === 0 && j.unchanged > 0 ? [] : ['cells for no change']) },
		{ name: 'candidate diff from a revision not held', method: 'POST', path: `/v1/catalog/diff?from=${UNHELD}`, headers: JSON_CT,
			body: r.oldCatalog, expect: 409, slug: 'revision-unavailable' },
		// the rule's constants of a release: listed under "constants", the cells they move under "cells"
		{ name: 'candidate diff at other constants', method: 'POST', path: '/v1/catalog/diff?max_batch_size=16', headers: JSON_CT,
			body: { ...r.oldCatalog, splitk_target_waves: 4, max_decode_splits: 32 }, expect: 200,
			check: (a, j) => (j && j.constants && j.constants.length === 2 && j.constants[1].field === 'max_decode_splits' &&
				j.constants[1].from === 16 && j.constants[1].to === 32 ? [] : [`constants: ${JSON.stringify(j && j.constants)}`]) },
		{ name: 'candidate with a constant past its bound', method: 'POST', path: '/v1/catalog/diff', headers: JSON_CT,
			body: { ...r.oldCatalog, max_decode_splits: 1025 }, expect: 400, slug: 'invalid-catalog',
			check: (a, j) => (j && /max_decode_splits.*1 to 1024/.test(j.detail) ? [] : [`detail: ${j && j.detail}`]) },
		{ name: 'candidate a load refuses', method: 'POST', path: '/v1/catalog/diff', headers: JSON_CT,
			body: { targets: [{ name: 'x', sm_count: 0 }], models: [] }, expect: 400, slug: 'invalid-catalog',
			check: (a, j) => (j && /sm_count/.test(j.detail) ? [] : [`detail does not name the field: ${j && j.detail}`]) },
		{ name: 'candidate: unknown parameter', method: 'POST', path: '/v1/catalog/diff?revision=x', headers: JSON_CT,
			body: r.oldCatalog, expect: 400, slug: 'unknown-parameter' },
		{ name: 'OFREP pinned', method: 'POST', path: '/ofrep/v1/evaluate/flags/policy', headers: JSON_CT,
			body: { context: { target: 'rtx4090', model: 'qwen3-8b', revision: r.old } }, expect: 200,
			check: (a, j) => [...field(j, 'value', 'legacy'), ...field(j && j.metadata, 'catalog', r.old)] },
		{ name: 'OFREP pinned, not held', method: 'POST', path: '/ofrep/v1/evaluate/flags/policy', headers: JSON_CT,
			body: { context: { target: 'rtx4090', model: 'qwen3-8b', revision: UNHELD } }, expect: 400,
			check: (a, j) => [...field(j, 'errorCode', 'GENERAL'), ...field(j && j.metadata, 'problem', '/problems/revision-unavailable')] },
		{ name: 'OFREP bulk pinned', method: 'POST', path: '/ofrep/v1/evaluate/flags', headers: JSON_CT,
			body: { context: { target: 'rtx4090', model: 'qwen3-8b', revision: r.old } }, expect: 200,
			check: (a, j) => field(j && j.metadata, 'catalog', r.old) },
	];
}

// Straight: what Prism cannot carry (a HEAD's empty problem, a 415, bodies
// Prism would re-serialise).
function directCases(r) {
	return [
		{ name: 'HEAD pinned, not held', method: 'HEAD', path: `/v1/splits?target=h100&model=qwen3-8b&revision=${UNHELD}`, expect: 409 },
		{ name: 'HEAD diff', method: 'HEAD', path: `/v1/diff?from=${r.old}`, expect: 200 },
		{ name: 'HEAD diff not held', method: 'HEAD', path: `/v1/diff?from=${UNHELD}`, expect: 409 },
		{ name: 'candidate that is not JSON', method: 'POST', path: '/v1/catalog/diff', headers: JSON_CT_RAW, body: '{"targets":',
			expect: 400, slug: 'invalid-catalog' },
		{ name: 'candidate without a JSON content type', method: 'POST', path: '/v1/catalog/diff',
			headers: [['Content-Type', 'text/plain']], body: '{}', expect: 415, slug: 'unsupported-media-type' },
		{ name: 'batch revision twice', method: 'POST', path: '/v1/splits', headers: JSON_CT_RAW,
			body: `{"revision":"${r.old}","revision":"${r.old}","queries":[{"target":"h100","model":"qwen3-8b"}]}`,
			expect: 400, slug: 'repeated-parameter' },
	];
}

// Forbidden by the description: splitkd's declared error, and Prism's 422.
function refusedCases(r) {
	return [
		{ name: 'batch revision a number', method: 'POST', path: '/v1/splits', headers: JSON_CT_RAW,
			body: JSON.stringify({ revision: 7, queries: [{ target: 'h100', model: 'qwen3-8b' }] }), expect: 400, slug: 'invalid-parameter' },
		{ name: 'single revision a number', method: 'POST', path: '/v1/splits', headers: JSON_CT_RAW,
			body: JSON.stringify({ target: 'h100', model: 'qwen3-8b', revision: 7 }), expect: 400, slug: 'invalid-parameter' },
		{ name: 'revision twice', path: `/v1/splits?target=h100&model=qwen3-8b&revision=${r.old}&revision=${r.old}`,
			expect: 400, slug: 'repeated-parameter' },
		{ name: 'revision of 257 bytes', path: `/v1/splits?target=h100&model=qwen3-8b&revision=${'r'.repeat(257)}`,
			expect: 400, slug: 'invalid-parameter' },
		{ name: 'diff from of 257 bytes', path: `/v1/diff?from=${'r'.repeat(257)}`, expect: 400, slug: 'invalid-parameter' },
		{ name: 'diff max_batch_size=0', path: `/v1/diff?from=${r.old}&max_batch_size=0`, expect: 400, slug: 'invalid-parameter' },
	];
}

module.exports = { setup, prismCases, directCases, refusedCases };
