// SPDX-License-Identifier: AGPL-3.0-only
//
// splitkd through @openfeature/server-sdk + @openfeature/ofrep-provider: the
// dynamic-context paradigm, one POST /ofrep/v1/evaluate/flags/{key} per
// evaluation, as a scheduler written in JavaScript would use it. Values are
// checked against GET /v1/splits for the same inputs (same decision path);
// the seed's worked example (#928: h100, qwen3.8-27b, max_batch_size 16 ->
// 11 splits, 4224 slots) is checked by its numbers too.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ErrorCode, OpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';

import { boundedFetch, ofrepMissing, postJson, request, splits, startSplitkd } from './harness.mjs';

const SEED = { target: 'h100', model: 'qwen3.8-27b', max_batch_size: 16 };
const FLAGS = ['num_splits', 'workspace_slots', 'workspace_bytes', 'policy', 'policy_source'];
const NOT_A_SPLIT = -1; // a caller's default splitkd can never answer
// A flag's metadata carries GET /v1/splits's warnings, but the null
// workspace_bytes one only on the workspace_bytes flag (it says nothing of
// the others).
const flagWarnings = (flag, warnings) =>
  warnings.filter(w => flag === 'workspace_bytes' || !w.startsWith('workspace_bytes is null')).join('; ');

describe('server-sdk + ofrep-provider', () => {
  let sk;
  let client;
  let missing;
  // every test after the first: skipped (not failed again) without the routes
  const skipped = (t) => (missing ? (t.skip('no OFREP routes'), true) : false);

  before(async () => {
    sk = await startSplitkd();
    missing = await ofrepMissing(sk.url);
    await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: sk.url, fetchImplementation: boundedFetch }));
    client = OpenFeature.getClient('scheduler');
  });

  after(async () => {
    await OpenFeature.close();
    await sk?.stop();
  });

  test('splitkd serves the OFREP routes', () => {
    if (missing) assert.fail(missing);
  });

  test("the seed's example: num_splits 11, workspace_slots 4224, as GET /v1/splits says", async (t) => {
    if (skipped(t)) return;
    const want = await splits(sk.url, SEED);
    const n = await client.getNumberDetails('num_splits', NOT_A_SPLIT, SEED);
    const s = await client.getNumberDetails('workspace_slots', NOT_A_SPLIT, SEED);
    assert.equal(n.errorCode, undefined, `num_splits: ${n.errorCode}: ${n.errorMessage}`);
    assert.equal(n.value, 11);
    assert.equal(s.value, 4224);
    assert.equal(n.value, want.num_splits);
    assert.equal(s.value, want.workspace_slots);
    assert.equal(n.reason, 'TARGETING_MATCH');
    assert.equal(n.variant, want.policy);
    assert.equal(n.flagMetadata.source, want.source);
    assert.equal(n.flagMetadata.catalog, want.catalog);
    assert.equal(n.flagMetadata.target, want.target); // resolved: "hopper", not "h100"
    assert.equal(n.flagMetadata.model, want.model);
    assert.equal(n.flagMetadata.warnings, flagWarnings('num_splits', want.warnings));
    assert.equal(want.warnings.length, 1, 'the seed has one warning: head_dim is not known');
    assert.equal(n.flagMetadata.warnings, '');
    assert.equal(await client.getStringValue('policy', 'none', SEED), want.policy);
    assert.equal(await client.getStringValue('policy_source', 'none', SEED), 'declared');
  });

  test('numbers as decimal strings, targetingKey and foreign keys change nothing', async (t) => {
    if (skipped(t)) return;
    const plain = await client.getNumberValue('num_splits', NOT_A_SPLIT, SEED);
    const ctx = { ...SEED, max_batch_size: '16', targetingKey: 'node-17', region: 'eu-west', gpus: 8 };
    const d = await client.getNumberDetails('num_splits', NOT_A_SPLIT, ctx);
    assert.equal(d.errorCode, undefined, `${d.errorCode}: ${d.errorMessage}`);
    assert.equal(d.value, plain);
    assert.equal(d.flagMetadata.warnings, flagWarnings('num_splits', (await splits(sk.url, SEED)).warnings));
  });

  test('override "4" pins 4 splits, and says so', async (t) => {
    if (skipped(t)) return;
    const ctx = { ...SEED, override: '4' };
    const want = await splits(sk.url, ctx);
    const d = await client.getNumberDetails('num_splits', NOT_A_SPLIT, ctx);
    assert.equal(d.value, 4);
    assert.equal(d.value, want.num_splits);
    assert.equal(d.variant, want.policy);
    assert.equal(await client.getStringValue('policy_source', 'none', ctx), 'override');
    assert.equal(await client.getNumberValue('workspace_slots', NOT_A_SPLIT, ctx), want.workspace_slots);
  });

  test('workspace_bytes: exact when it fits a JSON-safe integer, an error (never rounded) when not', async (t) => {
    if (skipped(t)) return;
    const fits = { target: 'h100', model: 'llama-3.1-70b', max_batch_size: 16 };
    const want = await splits(sk.url, fits);
    assert.ok(Number.isSafeInteger(want.workspace_bytes), JSON.stringify(want));
    assert.equal(await client.getNumberValue('workspace_bytes', NOT_A_SPLIT, fits), want.workspace_bytes);

    // 335544320 slots of 8388610 floats: 11259001752780800 bytes, past 2^53 - 1.
    const huge = { target: 'h100', num_q_heads: 64, max_rows: 1048576, head_dim: 8388608 };
    const big = await request(`${sk.url}/v1/splits?${new URLSearchParams(Object.entries(huge).map(([k, v]) => [k, String(v)]))}`);
    const exact = BigInt(/"workspace_bytes":(\d+)/.exec(big.text)[1]);
    assert.ok(exact > BigInt(Number.MAX_SAFE_INTEGER), big.text);
    const d = await client.getNumberDetails('workspace_bytes', NOT_A_SPLIT, huge);
    assert.equal(d.value, NOT_A_SPLIT);
    assert.equal(d.errorCode, ErrorCode.GENERAL);
    assert.match(d.errorMessage, new RegExp(String(exact)), 'errorDetails gives the exact byte count');
    // the other flags of the same decision still answer
    assert.equal(await client.getNumberValue('num_splits', NOT_A_SPLIT, huge), (await splits(sk.url, huge)).num_splits);

    // no head_dim for the seed's model: INVALID_CONTEXT, naming head_dim
    const none = await client.getNumberDetails('workspace_bytes', NOT_A_SPLIT, SEED);
    assert.equal(none.value, NOT_A_SPLIT);
    assert.equal(none.errorCode, ErrorCode.INVALID_CONTEXT);
    assert.match(none.errorMessage, /head_dim/);
  });

  test("an unknown flag key: the caller's default and FLAG_NOT_FOUND, with a did-you-mean", async (t) => {
    if (skipped(t)) return;
    const d = await client.getNumberDetails('num_split', NOT_A_SPLIT, SEED);
    assert.equal(d.value, NOT_A_SPLIT);
    assert.equal(d.errorCode, ErrorCode.FLAG_NOT_FOUND);
    assert.equal(d.reason, 'ERROR');
    assert.match(d.errorMessage, /num_splits/);
  });

  test("an unknown target: the caller's default and INVALID_CONTEXT, with /v1/splits' did-you-mean", async (t) => {
    if (skipped(t)) return;
    const ctx = { ...SEED, target: 'hoper' };
    const problem = await request(`${sk.url}/v1/splits?target=hoper&model=qwen3.8-27b&max_batch_size=16`);
    assert.equal(problem.status, 404);
    const d = await client.getNumberDetails('num_splits', NOT_A_SPLIT, ctx);
    assert.equal(d.value, NOT_A_SPLIT);
    assert.equal(d.errorCode, ErrorCode.INVALID_CONTEXT);
    assert.equal(d.errorMessage, problem.json.detail);
    assert.match(d.errorMessage, /hopper/);
  });

  test('bad context values: INVALID_CONTEXT naming the field', async (t) => {
    if (skipped(t)) return;
    const cases = [
      [{ ...SEED, max_batch_size: 'sixteen' }, /max_batch_size/],
      [{ ...SEED, max_batch_size: 0 }, /max_batch_size/],
      [{ ...SEED, max_batch_size: 16.5 }, /max_batch_size/],
      [{ ...SEED, max_batch_size: '016' }, /max_batch_size/],
      [{ ...SEED, model: 7 }, /model/],
      [{ model: 'qwen3.8-27b', max_batch_size: 16 }, /target/],
      [{ ...SEED, maxBatchSize: 16 }, /max_batch_size/], // meant for splitkd: refused, not ignored
    ];
    for (const [ctx, re] of cases) {
      const d = await client.getNumberDetails('num_splits', NOT_A_SPLIT, ctx);
      assert.equal(d.value, NOT_A_SPLIT, JSON.stringify(ctx));
      assert.equal(d.errorCode, ErrorCode.INVALID_CONTEXT, `${JSON.stringify(ctx)}: ${d.errorMessage}`);
      assert.match(d.errorMessage, re, JSON.stringify(ctx));
    }
  });

  test('the wire: content type, shapes and statuses the SDKs rely on', async (t) => {
    if (skipped(t)) return;
    const base = `${sk.url}/ofrep/v1/evaluate/flags`;
    const ok = await postJson(`${base}/num_splits`, { context: SEED }, { 'Content-Type': 'application/json; charset=utf-8' });
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type'), /^application\/json/);
    assert.deepEqual(Object.keys(ok.json).sort(), ['key', 'metadata', 'reason', 'value', 'variant']);
    assert.equal(ok.json.key, 'num_splits');

    const parse = await postJson(`${base}/num_splits`, '{"context": {"target": "h100",');
    assert.equal(parse.status, 400);
    assert.match(parse.headers.get('content-type'), /^application\/json/);
    assert.equal(parse.json.key, 'num_splits');
    assert.equal(parse.json.errorCode, 'PARSE_ERROR');
    assert.equal(typeof parse.json.errorDetails, 'string');

    const notObject = await postJson(`${base}/num_splits`, { context: 'h100' });
    assert.equal(notObject.status, 400);
    assert.equal(notObject.json.errorCode, 'INVALID_CONTEXT');

    const missing = await postJson(`${base}/nope`, { context: SEED });
    assert.equal(missing.status, 404);
    assert.deepEqual([missing.json.key, missing.json.errorCode], ['nope', 'FLAG_NOT_FOUND']);

    const get = await request(`${base}/num_splits`);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');

    const bulk = await postJson(base, { context: SEED });
    assert.equal(bulk.status, 200);
    assert.deepEqual(bulk.json.flags.map((f) => f.key), FLAGS);
  });

  test("splitkd stopped: the caller's default, with an error code", async (t) => {
    if (skipped(t)) return;
    const before = await client.getNumberValue('num_splits', NOT_A_SPLIT, SEED);
    assert.equal(before, 11);
    const { code } = await sk.stop();
    assert.equal(code, 0, 'splitkd drains and exits 0 on SIGTERM');
    const d = await client.getNumberDetails('num_splits', NOT_A_SPLIT, SEED);
    assert.equal(d.value, NOT_A_SPLIT);
    assert.equal(d.reason, 'ERROR');
    assert.equal(d.errorCode, ErrorCode.GENERAL);
  });
});
