import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PcscHost } from '../../main/pcsc-host-client.ts';
import { silentLogger } from '../../service/logger.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import { FakeApp, FakeUtilityProcessModule } from '../support/electron-mock.ts';
import { apiCaller } from '../support/http-client.ts';
import { TEST_API_KEY } from '../support/test-service.ts';

// The tray's way to the reader, for real: the service core in this process (as in Electron's
// main process) reaches pcscd only through the PC/SC host (main/pcsc-host.ts) in a utility
// process of its own (the electron mock's: a real child process), which loads the real
// binding. Every card path runs over its messages: GET UID, LOAD KEY, authenticate, read,
// write. The host killed under the service is replaced while HTTP keeps answering.

const hostEntry = fileURLToPath(new URL('../../main/pcsc-host.ts', import.meta.url));
const app = new FakeApp();
app.becomeReady();
const utilityProcess = new FakeUtilityProcessModule(app);
const host = new PcscHost({
  // The rig sets PCSCLITE_CSOCK_NAME before the service starts; the host inherits it.
  fork: () => utilityProcess.fork(hostEntry, [], { stdio: 'pipe', env: { ...process.env } }),
  log: silentLogger,
});

let rig: CardRig;
let call: ReturnType<typeof apiCaller>;
before(async () => {
  rig = await startCardRig({ cardTimeoutMs: 3_000 }, { createNfc: () => host.createNfc() });
  call = apiCaller(() => rig.service.url, TEST_API_KEY);
});
after(async () => {
  await rig?.close();
  host.stop();
});

describe('the card path through the PC/SC host process', () => {
  test('when a card is read and recharged, then every exchange goes through the host and the card holds the new balance', async () => {
    assert.equal(utilityProcess.forked.length, 1, 'the binding is loaded in the host only');
    const card = await rig.cardHolding(20);
    await rig.present(card);
    try {
      const read = await call('GET', '/readcard');
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.json, { cardId: card.id, credits: 20, rechargeAmount: null });
      const written = await call('POST', '/writecard', { credits: 10 });
      assert.equal(written.status, 200, written.text);
      assert.equal(walletBalance(card), 30);
    } finally {
      await rig.takeAway();
    }
    await rig.settled();
  });

  test('when the host process is killed, then the reader says the host stopped, HTTP keeps answering, and a new host serves the card', async () => {
    const first = utilityProcess.forked.at(-1);
    assert.ok(first?.pid, 'a host runs');
    process.kill(first.pid, 'SIGKILL');
    await waitUntil(
      () => rig.service.readers.status.problem?.code === 'host-not-answering',
      10_000,
      'the problem shown',
    );
    assert.match(rig.service.readers.status.problem?.message ?? '', /the PC\/SC host stopped/);
    assert.equal((await call('GET', '/ping')).text, '"pong"');
    await waitUntil(
      () => rig.service.readers.status.reader !== null && utilityProcess.forked.length === 2,
      15_000,
      'the reader back through a new host',
    );
    const card = await rig.cardHolding(5);
    await rig.present(card);
    try {
      const read = await call('GET', '/readcard');
      assert.equal(read.status, 200, read.text);
      assert.equal((read.json as { credits: number }).credits, 5);
    } finally {
      await rig.takeAway();
    }
  });

  test('when pcscd goes away and comes back, then the host says the service stopped, and the reader returns through the same host', async () => {
    const hosts = utilityProcess.forked.length;
    await rig.pcscd.kill();
    await waitUntil(
      () => rig.service.readers.status.problem?.code === 'service-stopped',
      15_000,
      'pcscd missing shown',
    );
    await rig.pcscd.start();
    await waitUntil(
      () => rig.service.readers.status.reader !== null,
      40_000,
      'the reader back after pcscd restarted',
    );
    assert.equal(utilityProcess.forked.length, hosts, 'no new host was needed');
  });
});
