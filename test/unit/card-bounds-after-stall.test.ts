import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { ReaderManager } from '../../service/card/reader-manager.ts';
import { SimulatedNfc } from '../../service/card/simulator/simulated-pcsc.ts';
import { VirtualCard } from '../../service/card/simulator/virtual-card.ts';
import { planWrite } from '../../service/card/wallet-format.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import { silentLogger } from '../../service/logger.ts';
import { WiredPcscReader } from '../support/stalled-loop.ts';

// The card's bounds (each APDU's, and a waiter's turn in the operation queue) after the process
// itself stalled (a long GC, a busy 2-core till) while the card's answer was on its way: Node
// runs the overdue timers before it reads that answer. A bound must be judged on what the card
// did, not on the process's own stall; a card that says nothing must still time out.

/** The card bound of these tests; each stall lasts past it. */
const BOUND_MS = 200;
const PAST_BOUND_MS = BOUND_MS + 150;

const keys = new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A reader manager over the wired simulator, with a blank Classic card seen on its reader. */
async function cardOnWiredReader() {
  const device = new WiredPcscReader();
  const manager = new ReaderManager({
    keys,
    createNfc: () => new SimulatedNfc(device).asNfc(),
    operationTimeoutMs: BOUND_MS,
    queueLimit: 4,
    probeIntervalMs: 10,
    log: silentLogger,
  });
  cleanups.push(async () => {
    device.remove();
    await manager.stop(0);
    await device.wire.close();
  });
  manager.start();
  await until(() => manager.status.reader !== null);
  const card = new VirtualCard({ uid: Buffer.from('04C0FFEE', 'hex') });
  await device.insert(card);
  await until(() => manager.status.card !== null);
  return { device, manager, card };
}

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: { code?: string; message?: string }) => ({ error: error.code ?? error.message }),
  );

describe('card bounds after the process stalled', () => {
  test('when the process stalls while the card’s answer to a block write is on its way, then the write counts as committed, not unknown', async () => {
    const { device, manager } = await cardOnWiredReader();
    device.stallOn('write', PAST_BOUND_MS);
    const result = await manager.withCard((card) => card.write(planWrite({ kind: 'blank' }, 5)));
    assert.equal(device.wire.stalls, 1, 'the process stalled after the write was sent');
    assert.deepEqual(result, { outcome: 'committed' }, JSON.stringify(result));
  });

  test('when the process stalls between LOAD KEY and AUTHENTICATE (one nfc-pcsc call, two APDUs), then the card is read', async () => {
    const { device, manager } = await cardOnWiredReader();
    device.stallOn('loadKey', PAST_BOUND_MS);
    const read = await outcome(
      manager.withCard((card) => card.decide(planWrite({ kind: 'blank' }, 5))),
    );
    assert.equal(device.wire.stalls, 1, 'the process stalled after LOAD KEY was sent');
    assert.deepEqual(read, { value: { outcome: 'not-written' } }, JSON.stringify(read));
  });

  test('when an operation waits its turn while the process stalls with the running one’s answer on its way, then both run', async () => {
    const { device, manager } = await cardOnWiredReader();
    // The running operation has more APDUs to send after the stall before the waiter's turn.
    device.stallOn('loadKey', PAST_BOUND_MS);
    const first = outcome(manager.withCard((card) => card.write(planWrite({ kind: 'blank' }, 5))));
    const second = outcome(manager.withCard((card) => card.readWallet()));
    const answers = await Promise.all([first, second]);
    assert.equal(device.wire.stalls, 1);
    assert.deepEqual(
      answers.map((answer) => ('error' in answer ? answer.error : 'answered')),
      ['answered', 'answered'],
      JSON.stringify(answers),
    );
  });

  test('when the card stays silent and the process stalls past the bound, then the operation still fails with CardNotResponding, and so does the one waiting behind it', async () => {
    const { device, manager, card } = await cardOnWiredReader();
    const silent = card.failAt('write', 'stall');
    device.stallOn('write', PAST_BOUND_MS);
    const first = outcome(manager.withCard((c) => c.write(planWrite({ kind: 'blank' }, 5))));
    const second = outcome(manager.withCard((c) => c.readWallet()));
    const [written, waited] = await Promise.all([first, second]);
    assert.ok(silent.fired, 'the card went silent on the write');
    assert.equal(device.wire.stalls, 1);
    assert.equal(
      'value' in written &&
        (written.value as { outcome: string; error?: { code: string } }).error?.code,
      'CardNotResponding',
      JSON.stringify(written),
    );
    assert.deepEqual(waited, { error: 'CardNotResponding' });
  });
});
