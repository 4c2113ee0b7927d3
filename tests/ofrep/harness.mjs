// SPDX-License-Identifier: AGPL-3.0-only
//
// Starts splitkd for the OFREP tests and stops it again, whatever happens.
//
// The binary comes from SPLITKD_BIN (an absolute path, or relative to the
// repository root). splitkd listens on 127.0.0.1 port 0 and prints
// "listening on http://HOST:PORT" on stderr; its JSON log (--log-format json)
// gives one access line per request, which the tests read to count requests.
//
// Every process started here is killed on stop(), by an after() hook, and,
// as a last resort, by a process 'exit' handler (SIGKILL), so a failed or
// timed-out test leaves nothing running.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');

// Time bounds. The machine has 2 cores shared with other builds and tests,
// so every bound is many times what the step takes when idle (splitkd
// answers its first request ~2 ms after exec; a loopback request takes well
// under 1 ms): a slow machine must not fail a correct daemon.
export const START_TIMEOUT_MS = 10_000; // exec to "listening on"
export const STOP_TIMEOUT_MS = 15_000; // SIGTERM drain (default --drain-timeout is 10 s)
export const REQUEST_TIMEOUT_MS = 5_000; // one HTTP request, in the SDKs and in fetch()

const live = new Set();
process.on('exit', () => {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

export function splitkdBin() {
  const bin = process.env.SPLITKD_BIN;
  if (!bin) {
    throw new Error('SPLITKD_BIN is not set: run `make ofrep-test`, or SPLITKD_BIN=build/splitkd node --test tests/ofrep/');
  }
  return path.resolve(repoRoot, bin);
}

// A fresh directory for catalog files; removed by the returned function.
export function scratchDir() {
  const dir = mkdtempSync(path.join(tmpdir(), 'splitkd-ofrep-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// `splitkd --dump-catalog`: the embedded catalog as a file that loads.
export function dumpCatalog() {
  const r = spawnSync(splitkdBin(), ['--dump-catalog'], { encoding: 'utf8', timeout: START_TIMEOUT_MS });
  if (r.status !== 0) {
    throw new Error(`splitkd --dump-catalog failed (${r.status ?? r.signal}): ${r.stderr}`);
  }
  return JSON.parse(r.stdout);
}

// SPLITKD_TLS_DIR (a tests/tls/make-certs.sh directory): serve HTTPS with
// its server certificate; the caller trusts its CA (NODE_EXTRA_CA_CERTS).
const tlsDir = process.env.SPLITKD_TLS_DIR;
const tlsArgs = tlsDir ? ['--tls-cert', path.join(tlsDir, 'server.pem'), '--tls-key', path.join(tlsDir, 'server-key.pem')] : [];

// Starts splitkd; resolves to a handle once it is listening.
export async function startSplitkd(extraArgs = []) {
  const args = ['--listen', '127.0.0.1:0', '--log-format', 'json', '--threads', '2', ...tlsArgs, ...extraArgs];
  const child = spawn(splitkdBin(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  const lines = [];
  let partial = '';
  const waiters = new Set();
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    partial += chunk;
    let nl;
    while ((nl = partial.indexOf('\n')) >= 0) {
      lines.push(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
    for (const w of waiters) w();
  });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      live.delete(child);
      for (const w of waiters) w();
      resolve({ code, signal });
    });
  });
  child.on('error', () => {}); // reported through 'exit' / the start timeout

  const handle = {
    child,
    lines,
    exited,
    url: null,
    // Resolves when pred(lines) is truthy; rejects after ms with what was seen.
    waitFor(pred, ms, what) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const v = pred(lines);
          if (v) {
            cleanup();
            resolve(v);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            cleanup();
            reject(new Error(`splitkd exited (${child.exitCode ?? child.signalCode}) before ${what}; stderr:\n${lines.join('\n')}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no ${what} within ${ms} ms; splitkd stderr (last 20 lines):\n${lines.slice(-20).join('\n')}`));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    // The access lines of the JSON log, as objects.
    access() {
      const out = [];
      for (const l of lines) {
        if (!l.startsWith('{')) continue;
        try {
          const o = JSON.parse(l);
          if (o.event === 'access') out.push(o);
        } catch {
          /* a line that is not JSON is not an access line */
        }
      }
      return out;
    },
    count(method, pathname, status) {
      return handle.access().filter((a) => a.method === method && a.path.split('?')[0] === pathname && a.status === status).length;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
  };
  const m = await handle.waitFor(
    (ls) => ls.map((l) => /listening on (https?:\/\/\S+)/.exec(l)).find(Boolean),
    START_TIMEOUT_MS,
    '"listening on" line',
  );
  handle.url = m[1];
  if (tlsDir && !handle.url.startsWith('https://')) {
    throw new Error(`SPLITKD_TLS_DIR is set but splitkd listens on ${handle.url}`);
  }
  return handle;
}

// fetch with a bound; returns { status, headers, text, json }.
export async function request(url, init = {}) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function postJson(url, body, headers = {}) {
  return request(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

// GET /v1/splits for the same inputs: the decision the OFREP answers must
// equal, taken from splitkd itself rather than written into the test.
export async function splits(base, inputs) {
  const qs = new URLSearchParams(Object.entries(inputs).map(([k, v]) => [k, String(v)]));
  const r = await request(`${base}/v1/splits?${qs}`);
  if (r.status !== 200) {
    throw new Error(`GET /v1/splits?${qs} answered ${r.status}: ${r.text}`);
  }
  return r.json;
}

// Whether the binary serves OFREP at all: null when it does, else one clear
// sentence, so the suite fails on the cause instead of drowning it in SDK
// fallbacks (an SDK turns a missing route into its default value).
export async function ofrepMissing(base) {
  const r = await postJson(`${base}/ofrep/v1/evaluate/flags/num_splits`, { context: { target: 'h100', model: 'qwen3.8-27b' } });
  const ct = r.headers.get('content-type') || '';
  if (r.status === 404 && ct.startsWith('application/problem+json')) {
    return (
      `${splitkdBin()} does not serve OFREP: POST /ofrep/v1/evaluate/flags/num_splits answered ` +
      `404 ${r.json?.type ?? ''} (${r.json?.detail ?? r.text}). The routes of issue 12 ` +
      '(docs/ofrep-design.md) are not in this build.'
    );
  }
  return null;
}

// Node's own fetch with a bound, for the providers: ofrep-provider 0.1.3
// has no timeout of its own (a scheduler should pass the same).
export function boundedFetch(input, init = {}) {
  return fetch(input, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
}

// Polls pred() every `every` ms until truthy or `ms` pass.
export async function eventually(pred, ms, what, every = 50) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}
