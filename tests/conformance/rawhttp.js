// SPDX-License-Identifier: AGPL-3.0-only
//
// A raw HTTP/1.1 client for the requests a proxy would not pass on as sent
// (framing errors, any method, HEAD): the caller writes the exact bytes,
// this reads one complete answer, or reports why it could not.
'use strict';

const net = require('net');
const tls = require('tls');

// SPLITKD_TLS_DIR (a tests/tls/make-certs.sh directory): splitkd serves
// HTTPS, and every raw connection is a TLS one trusting that CA.
const TLS_DIR = process.env.SPLITKD_TLS_DIR;

// Parses one answer from buf, or returns null when more bytes are needed.
// Interim 1xx answers are skipped. `head` means the request was HEAD: no
// content, whatever Content-Length says.
function parseResponse(buf, head) {
	let start = 0;
	for (;;) {
		const end = buf.indexOf('\r\n\r\n', start, 'latin1');
		if (end < 0) {
			return null;
		}
		const lines = buf.subarray(start, end).toString('latin1').split('\r\n');
		const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0]);
		if (!m) {
			throw new Error(`not an HTTP status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
		}
		const status = Number(m[1]);
		const headers = {};
		const raw = [];
		for (const line of lines.slice(1)) {
			const colon = line.indexOf(':');
			if (colon <= 0) {
				throw new Error(`malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
			}
			const name = line.slice(0, colon).trim().toLowerCase();
			const value = line.slice(colon + 1).trim();
			raw.push([name, value]);
			headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
		}
		const bodyStart = end + 4;
		if (status >= 100 && status < 200) {
			start = bodyStart;
			continue;
		}
		if (head || status === 204 || status === 304) {
			return { status, headers, raw, body: Buffer.alloc(0), rest: buf.subarray(bodyStart) };
		}
		if ('transfer-encoding' in headers) {
			return parseChunked(buf, bodyStart, status, headers, raw);
		}
		if (!('content-length' in headers)) {
			throw new Error(`status ${status} with neither Content-Length nor chunked`);
		}
		const len = Number(headers['content-length']);
		if (buf.length - bodyStart < len) {
			return null;
		}
		return { status, headers, raw, body: buf.subarray(bodyStart, bodyStart + len),
			rest: buf.subarray(bodyStart + len) };
	}
}

function parseChunked(buf, pos, status, headers, raw) {
	const parts = [];
	for (;;) {
		const eol = buf.indexOf('\r\n', pos, 'latin1');
		if (eol < 0) {
			return null;
		}
		const size = parseInt(buf.subarray(pos, eol).toString('latin1'), 16);
		if (Number.isNaN(size)) {
			throw new Error('bad chunk size');
		}
		if (size === 0) {
			const fin = buf.indexOf('\r\n\r\n', eol, 'latin1');
			if (fin < 0 && buf.subarray(eol, eol + 4).toString('latin1') !== '\r\n\r\n') {
				return null;
			}
			return { status, headers, raw, body: Buffer.concat(parts), rest: Buffer.alloc(0) };
		}
		if (buf.length < eol + 2 + size + 2) {
			return null;
		}
		parts.push(buf.subarray(eol + 2, eol + 2 + size));
		pos = eol + 2 + size + 2;
	}
}

// Opens a connection; `exchange(bytes, head)` sends and resolves with one
// parsed answer (or rejects: closed before a whole answer, or timeout).
function connect(port, timeoutMs = 10000) {
	return new Promise((resolve, reject) => {
		const sock = TLS_DIR
			? tls.connect({ host: '127.0.0.1', port, ca: require('fs').readFileSync(`${TLS_DIR}/ca.pem`) },
				() => resolve(wrap(sock, timeoutMs)))
			: net.connect({ host: '127.0.0.1', port }, () => resolve(wrap(sock, timeoutMs)));
		sock.once('error', reject);
	});
}

function wrap(sock, timeoutMs) {
	let buf = Buffer.alloc(0);
	let waiter = null;
	let closed = false;
	const poke = () => {
		if (!waiter) {
			return;
		}
		try {
			const r = parseResponse(buf, waiter.head);
			if (r) {
				buf = Buffer.from(r.rest);
				const w = waiter;
				waiter = null;
				clearTimeout(w.timer);
				w.resolve(r);
			} else if (closed) {
				const w = waiter;
				waiter = null;
				clearTimeout(w.timer);
				w.reject(new Error(`connection closed after ${buf.length} bytes, no whole answer`));
			}
		} catch (e) {
			const w = waiter;
			waiter = null;
			clearTimeout(w.timer);
			w.reject(e);
		}
	};
	sock.on('data', d => {
		buf = Buffer.concat([buf, d]);
		poke();
	});
	sock.on('close', () => {
		closed = true;
		poke();
	});
	sock.on('error', () => {});
	return {
		exchange(bytes, head = false) {
			return new Promise((resolve, reject) => {
				const timer = setTimeout(() => {
					waiter = null;
					reject(new Error(`no whole answer within ${timeoutMs} ms`));
				}, timeoutMs);
				waiter = { resolve, reject, head, timer };
				if (bytes !== null && !closed) {
					sock.write(bytes);
				}
				poke();
			});
		},
		get closed() {
			return closed;
		},
		close() {
			sock.destroy();
		},
	};
}

// One request on its own connection.
async function once(port, bytes, head = false) {
	const c = await connect(port);
	try {
		return await c.exchange(bytes, head);
	} finally {
		c.close();
	}
}

module.exports = { connect, once, parseResponse };
