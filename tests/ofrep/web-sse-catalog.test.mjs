// SPDX-License-Identifier: AGPL-3.0-only
//
// splitkd through @openfeature/ofrep-web-provider with changeDetection
// 'sse', bound to a catalog that is not the default (issue 39): the bulk
// answer for a context naming catalog=today advertises that catalog's own
// stream, GET /v1/events?catalog=today, and a change of today.json alone
// reaches the SDK (ConfigurationChanged and the new value) within 3 s
// through that stream, polling at ten minutes.

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
  scratchDir,
  splits,
  startSplitkd,
} from './harness.mjs';

globalThis.EventSource = EventSource;

const SEED = { target: 'h100', model: 'qwen3.8-27b', max_batch_size: 16, catalog: 'today' };
const BULK = '/ofrep/v1/evaluate/flags';
const NOT_A_SPLIT = -1;
const TEN_MINUTES_MS = 600_000;
const PUSH_BOUND_MS = 3_000;

describe('ofrep-web-provider over sse, bound to a non-default catalog', () => {
  // the daemon of two catalogs, before (the default) and today, and what
  // the test writes to today's file
  const t = { changes: [] };

  before(async () => {
    t.scratch = scratchDir();
    t.catalog = dumpCatalog();
    const file = (name) => path.join(t.scratch.dir, `${name}.json`);
    t.todayFile = file('today');
    for (const name of ['before', 'today']) { writeFileSync(file(name), JSON.stringify(t.catalog, null, 1)); }
    t.sk = await startSplitkd(['--catalog', `before=${file('before')}`, '--catalog', `today=${t.todayFile}`]);
  });
  after(async () => { await OpenFeature.close(); await t.sk?.stop(); t.scratch?.remove(); });

  test('the bulk answer advertises the catalog\'s own stream', async () => {
    const r = await postJson(`${t.sk.url}${BULK}`, { context: SEED });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.eventStreams,
      [{ type: 'sse', endpoint: { requestUri: '/v1/events?catalog=today' }, inactivityDelaySec: 120 }]);
  });

  test(`a change of today.json: ConfigurationChanged and the new value within ${PUSH_BOUND_MS} ms`, async () => {
    const provider = new OFREPWebProvider({
      baseUrl: t.sk.url,
      pollInterval: TEN_MINUTES_MS,
      changeDetection: 'sse',
      cacheMode: 'disabled',
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    await OpenFeature.setContext({ targetingKey: 'scheduler-today', ...SEED });
    await OpenFeature.setProviderAndWait(provider);
    const client = OpenFeature.getClient();
    client.addHandler(ProviderEvents.ConfigurationChanged, (e) => t.changes.push(e));
    assert.equal(client.getNumberValue('num_splits', NOT_A_SPLIT), 11);
    await eventually(() => t.sk.access().filter((a) => a.method === 'GET' && a.status === 200 &&
      a.path === '/v1/events?catalog=today').length === 1, 5_000, 'GET /v1/events?catalog=today in the access log');
    const bulkBefore = t.sk.count('POST', BULK, 200);
    const was = await splits(t.sk.url, SEED);
    const hopper = t.catalog.targets.find((x) => x.name === was.target);
    hopper.sm_count = 100; // 132 -> 100 SMs: 9 splits under auto
    writeFileSync(t.todayFile, JSON.stringify(t.catalog, null, 1));
    const t0 = Date.now();
    process.kill(t.sk.child.pid, 'SIGHUP');
    await eventually(() => t.changes.some((e) => e.flagsChanged?.includes('num_splits')), PUSH_BOUND_MS,
      'ConfigurationChanged for num_splits', 20);
    const now = await splits(t.sk.url, SEED);
    assert.notEqual(now.num_splits, was.num_splits, 'today\'s new sm_count changes its answer');
    assert.equal(client.getNumberValue('num_splits', NOT_A_SPLIT), now.num_splits);
    const dflt = await splits(t.sk.url, { ...SEED, catalog: 'before' });
    assert.equal(dflt.num_splits, was.num_splits, 'the default catalog did not change');
    assert.equal(t.sk.count('POST', BULK, 200), bulkBefore + 1, 'one refetch, because of the stream');
    console.log(`# ConfigurationChanged ${Date.now() - t0} ms after SIGHUP`);
  });
});
