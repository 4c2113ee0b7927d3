// SPDX-License-Identifier: AGPL-3.0-only
//
// splitkd through @openfeature/ofrep-web-provider with changeDetection
// 'sse' (issue 21, OFREP ADR-0008): the bulk answer's eventStreams names
// GET /v1/events, the provider holds it open (Node has no EventSource: the
// `eventsource` package stands in, pinned in package-lock.json), polling is
// set to ten minutes, and a SIGHUP'd change reaches the SDK — a
// ConfigurationChanged event and the new value — within 3 s, through the
// stream's refetchEvaluation message alone.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { EventSource } from 'eventsource';
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';

import {
  REQUEST_TIMEOUT_MS,
  dumpCatalog,
  eventually,
  postJson,
  request,
  scratchDir,
  splits,
  startSplitkd,
} from './harness.mjs';

// the provider looks for the browser's global; this is the Node stand-in
globalThis.EventSource = EventSource;

const SEED = { target: 'h100', model: 'qwen3.8-27b', max_batch_size: 16 };
const BULK = '/ofrep/v1/evaluate/flags';
const NOT_A_SPLIT = -1;
const TEN_MINUTES_MS = 600_000;
// The bound, and the behaviour under test: the change within 3 s.
const PUSH_BOUND_MS = 3_000;

function gauge(text, name) {
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : -1;
}

describe('ofrep-web-provider with changeDetection sse', () => {
  let sk;
  let scratch;
  let catalogFile;
  let catalog;
  let client;
  const changes = [];

  before(async () => {
    scratch = scratchDir();
    catalog = dumpCatalog();
    catalogFile = path.join(scratch.dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(catalog, null, 1));
    sk = await startSplitkd(['--catalog', catalogFile]);
  });

  after(async () => {
    await OpenFeature.close();
    await sk?.stop();
    scratch?.remove();
  });

  test('the bulk answer advertises the stream (ADR-0008)', async () => {
    const r = await postJson(`${sk.url}${BULK}`, { context: SEED });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.eventStreams, [{ type: 'sse', endpoint: { requestUri: '/v1/events' }, inactivityDelaySec: 120 }]);
    // the hints a provider adds after a refetchEvaluation are taken
    const hinted = await postJson(`${sk.url}${BULK}?flagConfigEtag=fnv1a64%3Ax&flagConfigLastModified=1`, { context: SEED });
    assert.equal(hinted.status, 200, hinted.text);
    const bogus = await postJson(`${sk.url}${BULK}?flagConfigEtg=x`, { context: SEED });
    assert.equal(bogus.status, 400, 'another query parameter is still refused');
  });

  test('the provider opens the stream and does not poll', async () => {
    const provider = new OFREPWebProvider({
      baseUrl: sk.url,
      pollInterval: TEN_MINUTES_MS,
      changeDetection: 'sse',
      cacheMode: 'disabled', // no localStorage in Node; nothing to persist
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    await OpenFeature.setContext({ targetingKey: 'scheduler-1', ...SEED });
    await OpenFeature.setProviderAndWait(provider);
    client = OpenFeature.getClient();
    client.addHandler(ProviderEvents.ConfigurationChanged, (e) => changes.push(e));
    assert.equal(client.getNumberValue('num_splits', NOT_A_SPLIT), 11);
    await eventually(async () => gauge((await request(`${sk.url}/metrics`)).text, 'splitkd_streams') === 1, 5_000,
      'one open stream in /metrics');
    await eventually(() => sk.count('GET', '/v1/events', 200) === 1, 5_000, 'GET /v1/events in the access log');
    const bulk = sk.access().filter((a) => a.path.startsWith(BULK)).length;
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(sk.access().filter((a) => a.path.startsWith(BULK)).length, bulk, 'no poll while the stream is open');
  });

  test(`SIGHUP: ConfigurationChanged and the new value within ${PUSH_BOUND_MS} ms, polling at ten minutes`, async () => {
    assert.ok(client, 'the provider is up');
    const bulkBefore = sk.count('POST', BULK, 200);
    const before = await splits(sk.url, SEED);
    const hopper = catalog.targets.find((t) => t.name === before.target);
    assert.ok(hopper, `target ${before.target} is in the dumped catalog`);
    hopper.sm_count = 100; // 132 -> 100 SMs: ceil(2 * 100 / 24) = 9 splits under auto
    writeFileSync(catalogFile, JSON.stringify(catalog, null, 1));
    const t0 = Date.now();
    process.kill(sk.child.pid, 'SIGHUP');
    await eventually(() => changes.some((e) => e.flagsChanged?.includes('num_splits')), PUSH_BOUND_MS,
      'ConfigurationChanged for num_splits', 20);
    const took = Date.now() - t0;
    const after = await splits(sk.url, SEED);
    assert.notEqual(after.num_splits, before.num_splits, 'the new sm_count changes the answer');
    const n = client.getNumberDetails('num_splits', NOT_A_SPLIT);
    assert.equal(n.value, after.num_splits);
    assert.equal(n.flagMetadata.catalog, after.catalog);
    // one refetch, sent because of the stream, with its hints
    assert.equal(sk.count('POST', BULK, 200), bulkBefore + 1);
    const refetch = sk.access().filter((a) => a.method === 'POST' && a.path.startsWith(BULK)).pop();
    assert.match(refetch.path, new RegExp(`flagConfigEtag=${encodeURIComponent(after.catalog).replace(/[%]/g, '%')}`));
    console.log(`# ConfigurationChanged ${took} ms after SIGHUP`);
  });
});
