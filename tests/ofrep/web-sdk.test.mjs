// SPDX-License-Identifier: AGPL-3.0-only
//
// splitkd through @openfeature/web-sdk + @openfeature/ofrep-web-provider:
// the static-context paradigm. The provider evaluates every flag with one
// POST /ofrep/v1/evaluate/flags, answers evaluations from its cache, and
// polls with If-None-Match; splitkd answers 304 until SIGHUP loads a catalog
// that changes the answer, and the provider then reports the new value.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ErrorCode, OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';

import {
  REQUEST_TIMEOUT_MS,
  dumpCatalog,
  eventually,
  request,
  ofrepMissing,
  scratchDir,
  splits,
  startSplitkd,
} from './harness.mjs';

const SEED = { target: 'h100', model: 'qwen3.8-27b', max_batch_size: 16 };
const FLAGS = ['num_splits', 'workspace_slots', 'workspace_bytes', 'policy', 'policy_source'];
const BULK = '/ofrep/v1/evaluate/flags';
const NOT_A_SPLIT = -1;
const MIN_304S = 3; // polls answered 304 before the catalog changes
// The longest poll interval this test accepts from /ofrep/v1/configuration:
// MIN_304S polls plus the change take about 5 intervals, and the whole file
// must stay well inside a minute.
const MAX_POLL_MS = 2_000;

// Counts splitkd_requests_total{route=..., status=...} in a /metrics text.
function metric(text, route, status) {
  const re = new RegExp(`^splitkd_requests_total\\{route="${route.replace(/[/{}]/g, '\\$&')}",status="${status}"\\} (\\d+)$`, 'm');
  const m = re.exec(text);
  return m ? Number(m[1]) : 0;
}

describe('web-sdk + ofrep-web-provider', () => {
  let sk;
  let scratch;
  let catalogFile;
  let catalog;
  let pollMs;
  let client;
  const changes = [];
  let missing;
  // every test after the first: skipped (not failed again) without the routes
  const skipped = (t) => (missing ? (t.skip('no OFREP routes'), true) : false);

  before(async () => {
    scratch = scratchDir();
    catalog = dumpCatalog();
    catalogFile = path.join(scratch.dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(catalog, null, 1));
    sk = await startSplitkd(['--catalog', catalogFile]);
    missing = await ofrepMissing(sk.url);
  });

  after(async () => {
    await OpenFeature.close();
    await sk?.stop();
    scratch?.remove();
  });

  test('splitkd serves the OFREP routes', () => {
    if (missing) assert.fail(missing);
  });

  test('GET /ofrep/v1/configuration: name, int and string flags, polling with a minimum interval', async (t) => {
    if (skipped(t)) return;
    const r = await request(`${sk.url}/ofrep/v1/configuration`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^application\/json/);
    assert.equal(r.json.name, 'splitkd');
    assert.deepEqual([...r.json.capabilities.flagEvaluation.supportedTypes].sort(), ['int', 'string']);
    const polling = r.json.capabilities.cacheInvalidation.polling;
    assert.equal(polling.enabled, true);
    assert.ok(Number.isInteger(polling.minPollingIntervalMs) && polling.minPollingIntervalMs > 0, JSON.stringify(polling));
    assert.ok(polling.minPollingIntervalMs <= MAX_POLL_MS, `minPollingIntervalMs ${polling.minPollingIntervalMs} is over this test's ${MAX_POLL_MS}`);
    pollMs = polling.minPollingIntervalMs; // a provider honours the server's minimum
    const etag = r.headers.get('etag');
    assert.ok(etag, 'a GET answer carries an ETag');
    const again = await request(`${sk.url}/ofrep/v1/configuration`, { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304);
  });

  test('every flag evaluated in one bulk request, answered from the cache', async (t) => {
    if (skipped(t)) return;
    assert.ok(pollMs, 'the configuration test ran first');
    const provider = new OFREPWebProvider({
      baseUrl: sk.url,
      pollInterval: pollMs,
      changeDetection: 'polling',
      cacheMode: 'disabled', // no localStorage in Node; nothing to persist
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    const singles = () => sk.access().filter((a) => a.path.startsWith(`${BULK}/`)).length;
    const singlesBefore = singles(); // the route check in before() made one
    await OpenFeature.setContext({ targetingKey: 'scheduler-1', ...SEED });
    await OpenFeature.setProviderAndWait(provider);
    client = OpenFeature.getClient();
    client.addHandler(ProviderEvents.ConfigurationChanged, (e) => changes.push(e));

    const want = await splits(sk.url, SEED);
    const n = client.getNumberDetails('num_splits', NOT_A_SPLIT);
    assert.equal(n.errorCode, undefined, `${n.errorCode}: ${n.errorMessage}`);
    assert.equal(n.value, 11);
    assert.equal(n.value, want.num_splits);
    assert.equal(n.reason, 'TARGETING_MATCH');
    assert.equal(n.variant, want.policy);
    assert.equal(n.flagMetadata.catalog, want.catalog);
    assert.equal(client.getNumberValue('workspace_slots', NOT_A_SPLIT), 4224);
    assert.equal(client.getStringValue('policy', 'none'), want.policy);
    assert.equal(client.getStringValue('policy_source', 'none'), want.source);
    // a per-flag failure inside a 200 bulk answer: the seed's model has no head_dim
    const bytes = client.getNumberDetails('workspace_bytes', NOT_A_SPLIT);
    assert.equal(bytes.value, NOT_A_SPLIT);
    assert.equal(bytes.errorCode, ErrorCode.INVALID_CONTEXT);
    assert.match(bytes.errorMessage, /head_dim/);
    // exactly splitkd's five flags, and nothing else
    assert.deepEqual(Object.keys(provider.flagCache).sort(), [...FLAGS].sort());
    assert.equal(client.getNumberDetails('num_split', NOT_A_SPLIT).errorCode, ErrorCode.FLAG_NOT_FOUND);
    // one bulk request, and not one single-flag request
    assert.equal(sk.count('POST', BULK, 200), 1, 'one bulk evaluation at initialisation');
    assert.equal(singles(), singlesBefore, 'no single-flag request: evaluations come from the cache');
  });

  test(`polls are answered 304 (at least ${MIN_304S}), counted in the access log and /metrics`, async (t) => {
    if (skipped(t)) return;
    assert.ok(client, 'the provider is up');
    // each poll comes pollMs after the last: allow ten times that, plus start-up slack
    await sk.waitFor(() => sk.count('POST', BULK, 304) >= MIN_304S, pollMs * (MIN_304S + 10) + 5_000, `${MIN_304S} polls answered 304`);
    assert.equal(sk.count('POST', BULK, 200), 1, 'no poll was answered in full: the ETag matched');
    const seen = sk.count('POST', BULK, 304);
    const m = await request(`${sk.url}/metrics`);
    assert.ok(metric(m.text, BULK, 304) >= seen, `/metrics counts the 304s (${seen} in the access log):\n${m.text.split('\n').filter((l) => l.includes('ofrep')).join('\n')}`);
    assert.equal(changes.length, 0, 'no ConfigurationChanged while nothing changed');
    assert.equal(client.getNumberValue('num_splits', NOT_A_SPLIT), 11);
  });

  test('SIGHUP with a changed sm_count: the next poll brings the new value', async (t) => {
    if (skipped(t)) return;
    assert.ok(client, 'the provider is up');
    const before = await splits(sk.url, SEED);
    const hopper = catalog.targets.find((t) => t.name === before.target);
    assert.ok(hopper, `target ${before.target} is in the dumped catalog`);
    hopper.sm_count = 100; // 132 -> 100 SMs: ceil(2 * 100 / 24) = 9 splits under auto
    writeFileSync(catalogFile, JSON.stringify(catalog, null, 1));
    const bulk200 = sk.count('POST', BULK, 200); // before the reload: polls until then are 304s
    const reloads = sk.lines.length;
    process.kill(sk.child.pid, 'SIGHUP');
    await sk.waitFor(
      (ls) => ls.slice(reloads).some((l) => /"event":"reload".*ok/.test(l)),
      10_000, // a reload reads and checks one small file; ten seconds is a wide margin
      'reload ok line',
    );
    const after = await splits(sk.url, SEED);
    assert.notEqual(after.catalog, before.catalog);
    assert.notEqual(after.num_splits, before.num_splits, 'the new sm_count changes the answer');

    await eventually(() => changes.some((e) => e.flagsChanged?.includes('num_splits')), pollMs * 10 + 5_000, 'ConfigurationChanged for num_splits');
    assert.equal(sk.count('POST', BULK, 200), bulk200 + 1, 'the poll after the reload was answered in full');
    const n = client.getNumberDetails('num_splits', NOT_A_SPLIT);
    assert.equal(n.value, after.num_splits);
    assert.equal(n.flagMetadata.catalog, after.catalog);
    assert.equal(client.getNumberValue('workspace_slots', NOT_A_SPLIT), after.workspace_slots);
  });
});
