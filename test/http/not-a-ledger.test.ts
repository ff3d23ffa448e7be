// A --cloud-url where something answers that is not the ledger (a captive portal, a web
// server, a proxy's error page): every call that needs the ledger answers LedgerUnavailable
// naming the URL and what it answered, never UnexpectedError, and no card is touched.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { apiCaller, shown } from '../support/http-client.ts';
import { TEST_API_KEY } from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let portal: Server;
let url: string;
let service: TestService;

before(async () => {
  // Answers everything 200 with a login page, as a captive portal does.
  portal = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<html><body>Please log in to the hotel Wi-Fi</body></html>');
  });
  await new Promise<void>((resolve) => portal.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(portal.address() as AddressInfo).port}`;
  service = await startTestService({ cloudUrl: url, simulator: true });
});
after(async () => {
  await service?.close();
  await new Promise((resolve) => portal.close(resolve));
});

const call = apiCaller(() => service.url, TEST_API_KEY);

describe('a cloud URL that is not a ledger', () => {
  test('when a card call needs the ledger, then 500 LedgerUnavailable naming the URL and its answer', async () => {
    const res = await call('GET', '/readcard');
    assert.equal(res.status, 500, shown(res));
    assert.deepEqual(res.json, {
      error: 'LedgerUnavailable',
      detail: `${url} is not a card wallet ledger: it answered GET /v1/customer with 200 text/html; check --cloud-url`,
    });
  });

  test('when a recharge is asked for, then LedgerUnavailable and the card is not written', async () => {
    const placed = await call('POST', '/simulator/place', { uid: 'C0FFEE01', credits: 5 });
    assert.equal(placed.status, 200, shown(placed));
    const res = await call('POST', '/writecard', { credits: 10 });
    assert.equal(res.status, 500, shown(res));
    assert.equal((res.json as { error: string }).error, 'LedgerUnavailable', shown(res));
    const status = await call('GET', '/simulator');
    assert.deepEqual((status.json as { card: unknown }).card, { cardId: 'C0FFEE01', credits: 5 });
  });

  test('when /info is asked for, then the spec’s 400 CustomerReadError', async () => {
    const res = await call('GET', '/info');
    assert.equal(res.status, 400, shown(res));
    assert.equal((res.json as { error: string }).error, 'CustomerReadError', shown(res));
  });
});
