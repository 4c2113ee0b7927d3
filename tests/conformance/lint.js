#!/usr/bin/env node
// SPDX-License-Identifier: AGPL-3.0-only
//
// Redocly CLI's lint of api/openapi.json with its recommended rules (or a
// committed redocly.yaml, which Redocly reads from the repository root):
// passes only with 0 errors AND 0 warnings, where `redocly lint` itself
// fails on errors alone. Prints each problem, then the totals.
//
// usage: node tests/conformance/lint.js [api/openapi.json]
'use strict';

const { spawnSync } = require('child_process');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const doc = process.argv[2] || 'api/openapi.json';
const redocly = require.resolve('@redocly/cli/bin/cli.js');
const version = require('@redocly/cli/package.json').version;

const run = spawnSync(process.execPath, [redocly, 'lint', '--format=json', '--max-problems=1000', doc], {
	cwd: ROOT,
	encoding: 'utf8',
	env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
	timeout: 120000,
	maxBuffer: 64 << 20,
});
let report;
try {
	report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
} catch (e) {
	console.error(`redocly lint printed no JSON report (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
	process.exit(1);
}
for (const p of report.problems) {
	const where = (p.location || []).map(l => l.pointer).join(', ');
	console.log(`${p.severity} ${p.ruleId} at ${where}: ${p.message}`);
}
const { errors, warnings, ignored } = report.totals;
console.log(`redocly ${version} lint ${doc}: ${errors} errors, ${warnings} warnings` +
	(ignored ? `, ${ignored} ignored` : ''));
process.exit(errors === 0 && warnings === 0 ? 0 : 1);
