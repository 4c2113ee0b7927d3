// SPDX-License-Identifier: AGPL-3.0-only
//
// The processes a conformance run starts, and their stopping: every child
// is recorded as it is spawned and stopped by its own pid (SIGTERM, then
// SIGKILL), on success, failure, exception, signal, or the run's deadline.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');

const children = new Set();

// Spawns a child with stdout and stderr to `logFile`, and resolves once a
// line of its output matches `ready` (with the match), or rejects when it
// exits first or `timeoutMs` passes.
function start(name, cmd, args, { logFile, ready, timeoutMs, env }) {
	const log = fs.openSync(logFile, 'w');
	const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env || process.env });
	child.name = name;
	children.add(child);
	child.on('exit', () => children.delete(child));
	return new Promise((resolve, reject) => {
		let seen = '';
		let isReady = false;
		const timer = setTimeout(() => {
			reject(new Error(`${name} did not say it was ready within ${timeoutMs} ms (log: ${logFile})`));
		}, timeoutMs);
		const onData = d => {
			fs.writeSync(log, d);
			if (isReady) {
				return;
			}
			seen += d.toString('utf8');
			const m = ready.exec(seen.replace(/\x1b\[[0-9;]*m/g, ''));
			if (m) {
				clearTimeout(timer);
				isReady = true;
				seen = '';
				resolve({ child, match: m });
			}
		};
		child.stdout.on('data', onData);
		child.stderr.on('data', onData);
		child.on('exit', (code, sig) => {
			clearTimeout(timer);
			reject(new Error(`${name} exited (${code === null ? sig : code}) before it was ready ` +
				`(log: ${logFile})`));
		});
		child.on('error', e => {
			clearTimeout(timer);
			reject(new Error(`${name}: ${e.message}`));
		});
	});
}

// Resolves with the match once the child's output (from now on) matches
// re, or null after ms.
function waitOutput(child, re, ms) {
	return new Promise(resolve => {
		let seen = '';
		const done = m => {
			clearTimeout(timer);
			child.stdout.off('data', on);
			child.stderr.off('data', on);
			resolve(m);
		};
		const on = d => {
			seen += d.toString('utf8');
			const m = re.exec(seen);
			if (m) {
				done(m);
			}
		};
		const timer = setTimeout(() => done(null), ms);
		child.stdout.on('data', on);
		child.stderr.on('data', on);
	});
}

// Resolves with [code, signal] when the child exits, or null after ms.
function waitExit(child, ms) {
	if (child.exitCode !== null || child.signalCode !== null) {
		return Promise.resolve([child.exitCode, child.signalCode]);
	}
	return new Promise(resolve => {
		const timer = setTimeout(() => resolve(null), ms);
		child.once('exit', (code, sig) => {
			clearTimeout(timer);
			resolve([code, sig]);
		});
	});
}

async function stopAll() {
	for (const child of [...children]) {
		child.kill('SIGTERM');
		if ((await waitExit(child, 5000)) === null) {
			child.kill('SIGKILL');
			await waitExit(child, 2000);
		}
	}
}

// Last resort, synchronous: whatever is left when the process exits.
process.on('exit', () => {
	for (const child of children) {
		try {
			child.kill('SIGKILL');
		} catch (e) {
			// already gone
		}
	}
});

module.exports = { start, stopAll, waitExit, waitOutput, children };
