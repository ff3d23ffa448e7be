/**
 * The ledger's HTTP layer: unexpected failures never leak, and requests that are not the
 * contract's (framing, media types, encodings) get its error shape and change nothing.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import type { Database } from '../../cloud/db/database.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { call, LedgerClient } from './ledger-client.ts';
import { SUITE_KEYS, suiteSeed } from './ledger-suite.ts';

/** A database that fails every call with a message that must never reach a client. */
const brokenDatabase: Database = {
  kind: 'postgres',
  description: 'broken',
  query: () => Promise.reject(new Error('connect ECONNREFUSED secret-host:5432 password=hunter2')),
  exec: () => Promise.reject(new Error('broken')),
  transaction: () => Promise.reject(new Error('broken')),
  close: () => Promise.resolve(),
};

describe('ledger HTTP errors', () => {
  test('when the database fails unexpectedly, then the answer is a bare 500 InternalError and the error is logged', async () => {
    const logged: string[] = [];
    const server = await startLedgerServer({
      database: brokenDatabase,
      log: { error: (message) => logged.push(message) },
    });
    try {
      const answer = await call('GET', `${server.url}/v1/customer`, {
        apiKey: 'any-key-0123456789abc',
      });
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body, { error: 'InternalError' });
      assert.ok(logged.some((line) => line.includes('ECONNREFUSED')));

      const health = await call('GET', `${server.url}/health`);
      assert.equal(health.status, 503);
      assert.deepEqual(health.body, { error: 'DatabaseUnavailable' });
    } finally {
      await server.close();
    }
  });
});

describe('ledger HTTP framing', () => {
  let folder: string;
  let server: LedgerServer;
  let shop: LedgerClient;
  let anonymous: LedgerClient;
  const recharge = () => ({ id: randomUUID(), kind: 'recharge', cardId: '04A1B2C3', credits: 1 });

  before(async () => {
    folder = await freshPgliteFolder();
    server = await startLedgerServer({
      database: folder,
      seed: suiteSeed,
      log: { error: () => undefined },
    });
    anonymous = new LedgerClient(server.url);
    shop = anonymous.withKey(SUITE_KEYS.shopA);
  });

  after(async () => {
    await server?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  test('when a request without a key goes to an unknown /v1 path or sends a non-JSON body, then it is 401: the key is checked first', async () => {
    for (const answer of [
      await anonymous.get('/v1/nothing-here'),
      await anonymous.post('/v1/movements', undefined, {
        rawBody: 'id=1',
        headers: { 'content-type': 'text/plain' },
      }),
    ]) {
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.body, { error: 'Unauthorized: missing api key' });
    }
  });

  test('when an unknown path outside /v1 is called, then it is 404 NotFound without a key', async () => {
    const answer = await anonymous.get('/v2/customer');
    assert.equal(answer.status, 404);
    assert.deepEqual(answer.body, { error: 'NotFound' });
  });

  test('when a JSON body is compressed or not UTF-8, then it is 415 UnsupportedMediaType and nothing is stored', async () => {
    const movement = recharge();
    for (const headers of <Record<string, string>[]>[
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      { 'content-type': 'application/json; charset=iso-8859-1' },
    ]) {
      const answer = await shop.post('/v1/movements', undefined, {
        rawBody: JSON.stringify(movement),
        headers,
      });
      assert.equal(answer.status, 415, JSON.stringify(headers));
      assert.deepEqual(answer.body, { error: 'UnsupportedMediaType' });
    }
    assert.equal((await shop.movement(movement.id)).status, 404);
  });

  test('when a JSON body says charset=utf-8, then it is read', async () => {
    const answer = await shop.post('/v1/movements', undefined, {
      rawBody: JSON.stringify(recharge()),
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    assert.equal(answer.status, 201);
  });

  test('when a post sends Content-Type: application/json with an empty body, then it is answered as one without a body', async () => {
    const movement = recharge();
    assert.equal((await shop.create(movement)).status, 201);
    const answer = await shop.post(`/v1/movements/${movement.id}/post`, undefined, {
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.state, 'posted');
  });

  test('when a bodiless post says another content type (as axios does), then it is answered; with a body it is 415', async () => {
    const movement = recharge();
    assert.equal((await shop.create(movement)).status, 201);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const refused = await shop.post(`/v1/movements/${movement.id}/post`, undefined, {
      rawBody: 'a=1',
      headers: form,
    });
    assert.equal(refused.status, 415);
    assert.deepEqual(refused.body, { error: 'UnsupportedMediaType' });
    const bodiless = await shop.post(`/v1/movements/${movement.id}/post`, undefined, {
      headers: form,
    });
    assert.equal(bodiless.status, 200);
    assert.equal(bodiless.body.state, 'posted');
  });

  test('when a POST body has no content type, then it is 415 UnsupportedMediaType', async () => {
    const body = JSON.stringify(recharge());
    const answer = await rawHttp(
      server.port,
      `POST /v1/movements HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${SUITE_KEYS.shopA}\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    assert.match(answer, /^HTTP\/1\.1 415 /);
    assert.match(answer, /\{"error":"UnsupportedMediaType"\}$/);
  });

  test('when a movement body carries a __proto__ key, then it is 400 naming it and nothing is stored', async () => {
    const movement = recharge();
    const answer = await shop.post('/v1/movements', undefined, {
      rawBody: `{"__proto__":{"credits":5},${JSON.stringify(movement).slice(1)}`,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(answer.status, 400);
    assert.deepEqual(answer.body, { error: 'InvalidMovement', detail: '__proto__: unknown field' });
    assert.equal((await shop.movement(movement.id)).status, 404);
  });

  test('when the path cannot be decoded (a stray %), then it is 400 InvalidRequest', async () => {
    const answer = await rawHttp(
      server.port,
      `GET /v1/movements/%zz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${SUITE_KEYS.shopA}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /\{"error":"InvalidRequest"\}$/);
  });

  test('when the request is not HTTP at all, then it is 400 BadRequest in the error shape and the connection closes', async () => {
    const answer = await rawHttp(server.port, 'HELLO\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\{"error":"BadRequest"\}$/);
  });
});

/** Sends `text` on a new connection and resolves with everything the server wrote back. */
function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
