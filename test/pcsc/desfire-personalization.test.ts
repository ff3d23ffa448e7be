// Personalizing DESFire cards over real HTTP and the PC/SC rig, with a card master key: the
// factory PICC key replaced by the card's own AES key, the wallet application, its files and
// keys (docs/card-format.md section 9.7), each step journaled; a card pulled at any command is
// finished by the next personalization; a card holding a wallet keeps its credits. And a till
// without a master key, whose first recharge of a card makes its wallet application: a card
// pulled at any command of it is finished by the next recharge.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseMasterKey } from '../../service/card/card-keys.ts';
import { desfireCardKeys } from '../../service/card/desfire/desfire-keys.ts';
import { DEFAULT_DESFIRE_AID } from '../../service/card/desfire/desfire-wallet-format.ts';
import {
  startCardRig,
  waitUntil,
  walletBalance,
  type CardRig,
  type Till,
} from '../support/card-rig.ts';
import { apiCaller, shown } from '../support/http-client.ts';
import { shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import type { VirtualDesfireCard } from '../support/virtual-card.ts';

// A test master key (never a real one: this file is public).
const MASTER = '8E2A1F0C5B7D9364A0C3E5F71B2D4F60';

let rig: CardRig;
before(async () => (rig = await startCardRig({ cardMasterKey: MASTER, cardTimeoutMs: 1_500 })));
after(() => rig.close());

const call = apiCaller(() => rig.service.url, TEST_API_KEY);
const personalize = () => call('POST', '/cards/personalize');

/** Whether the card holds exactly its own keys: the PICC's and the wallet application's. */
function personalized(card: VirtualDesfireCard): boolean {
  const own = desfireCardKeys(parseMasterKey(MASTER), card.uid, DEFAULT_DESFIRE_AID);
  const app = card.application(DEFAULT_DESFIRE_AID);
  return (
    card.piccKey.type === 'aes' &&
    card.piccKey.key.equals(own.picc.key) &&
    card.piccSettings === 0x0b &&
    app !== undefined &&
    [own.application, own.till, own.machine].every(
      (key, keyNo) => app.keys[keyNo]?.key.equals(key.key) && app.keys[keyNo]?.version === 1,
    )
  );
}

/** The journal's personalization lines of a card. */
function journaled(cardId: string): string[] {
  const journal = readFileSync(join(rig.service.dataDir, 'movements.jsonl'), 'utf8');
  return journal
    .split('\n')
    .filter((line) => line.includes(cardId) && line.includes('personaliz'))
    .map((line) => {
      const entry = JSON.parse(line) as { type: string; step?: string };
      return entry.step ?? entry.type;
    });
}

async function withCard(card: VirtualDesfireCard, run: () => Promise<void>): Promise<void> {
  await rig.present(card);
  try {
    await run();
  } finally {
    await rig.takeAway();
  }
}

describe('DESFire: POST /cards/personalize', () => {
  test('when a factory-fresh card is personalized, then it gets its own keys and wallet, every step journaled first; again, nothing is written', async () => {
    const card = await rig.desfireCardHolding(null);
    await withCard(card, async () => {
      const res = await personalize();
      assert.deepEqual(
        res.json,
        { cardId: card.id, credits: 0, alreadyPersonalized: false },
        shown(res),
      );
      assert.ok(personalized(card));
      assert.deepEqual(journaled(card.id), ['picc-key', 'application', 'keys', 'personalized']);
      rig.reader.resetApduLog();
      const again = await personalize();
      assert.deepEqual(again.json, { cardId: card.id, credits: 0, alreadyPersonalized: true });
      const { changeKey, createApplication, createFile } = rig.reader.counts;
      assert.deepEqual(
        { changeKey, createApplication, createFile },
        {
          changeKey: 0,
          createApplication: 0,
          createFile: 0,
        },
      );
    });
  });

  test('when a card holding a wallet on the transport keys is personalized, then it keeps its credits', async () => {
    const card = await rig.desfireCardHolding(null);
    const { desfireWalletCard } = await import('../../service/card/simulator/card-simulator.ts');
    const loaded = desfireWalletCard(card.uid, DEFAULT_DESFIRE_AID, 25);
    await withCard(loaded, async () => {
      const res = await personalize();
      assert.deepEqual(res.json, { cardId: loaded.id, credits: 25, alreadyPersonalized: false });
      assert.ok(personalized(loaded));
      assert.equal(walletBalance(loaded), 25);
    });
  });

  test('when the PICC opens with neither its own key nor the factory key, then AuthenticationFail and nothing is written', async () => {
    const card = await rig.desfireCardHolding(null);
    card.setPiccKey({ type: 'aes', key: Buffer.alloc(16, 0x42), version: 7 });
    await withCard(card, async () => {
      const res = await personalize();
      assert.deepEqual(res.json, { error: 'AuthenticationFail' }, shown(res));
      assert.deepEqual(card.applicationIds, []);
    });
  });

  /**
   * Pulls the card at command `step` of a personalization and checks what is left. False when
   * the personalization ended before that command (and succeeded): every step was covered.
   */
  async function pulledAt(step: number, mode: 'pull-before' | 'pull-after'): Promise<boolean> {
    const card = await rig.desfireCardHolding(null);
    rig.reader.resetApduLog();
    await rig.present(card);
    const fault = card.failAt({ index: rig.reader.apdus.length + step }, mode);
    const first = await personalize();
    if (!fault.fired) {
      fault.cancel();
      await rig.takeAway();
      assert.equal(first.status, 200, shown(first));
      assert.ok(personalized(card));
      return false;
    }
    assert.match(
      String((first.json as { error: string }).error),
      /^(NoCard|CardRemovedDuringPersonalization)$/,
      shown(first),
    );
    await rig.reader.waitForRemoval();
    await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
    await withCard(card, async () => {
      const again = await personalize();
      assert.equal(again.status, 200, shown(again));
      assert.equal((again.json as { credits: number }).credits, 0);
      assert.ok(personalized(card), 'the second personalization finished it');
      const recharged = await call('POST', '/writecard', { credits: 3 });
      assert.equal(recharged.status, 200, shown(recharged));
      await rig.settled();
    });
    return true;
  }

  for (const mode of ['pull-before', 'pull-after'] as const) {
    test(`when the card is pulled at each command of a personalization (${mode}), then personalizing it again finishes it`, async (t) => {
      let pulled = true;
      let step = 0;
      for (; pulled; step += 1) {
        await t.test(`command ${step} (${mode})`, async () => {
          pulled = await pulledAt(step, mode);
        });
      }
      assert.ok(step > 15, `only ${step - 1} commands were pulled`);
    });
  }
});

describe('DESFire without a master key: the first recharge makes the wallet application', () => {
  let till: Till;
  before(async () => (till = await rig.secondTill({ cardTimeoutMs: 1_500 })));
  const recharge = () =>
    apiCaller(() => till.service.url, till.apiKey)('POST', '/writecard', { credits: 5 });
  const pool = () => shopCredits(rig.ledger.url);

  /**
   * Pulls a factory-fresh card at command `step` of its first recharge, then recharges it again
   * and checks the money. False when the first recharge ended before that command.
   */
  async function pulledAt(step: number, mode: 'pull-before' | 'pull-after'): Promise<boolean> {
    const card = await rig.desfireCardHolding(null);
    till.reader.resetApduLog();
    await till.present(card);
    const poolBefore = await pool();
    const fault = card.failAt({ index: till.reader.apdus.length + step }, mode);
    const first = await recharge();
    const settled = () =>
      waitUntil(() => till.service.unconfirmedMovements === 0, 20_000, 'movements settled');
    if (!fault.fired) {
      fault.cancel();
      try {
        assert.equal(first.status, 200, shown(first));
        assert.equal(walletBalance(card), 5);
        await settled();
      } finally {
        await till.takeAway();
      }
      return false;
    }
    await till.reader.waitForRemoval();
    await waitUntil(() => till.service.readers.status.card === null, 5_000, 'card gone');
    await till.present(card);
    try {
      const again = await recharge();
      assert.equal(again.status, 200, `${shown(first)}, then ${shown(again)}`);
      await settled();
      const held = walletBalance(card);
      assert.ok(held === 5 || held === 10, `the card holds ${held}`);
      if (first.status === 200) assert.equal(held, 10, 'a 200 means it landed');
      assert.equal(await pool(), poolBefore - held, 'card and pool moved by the same credits');
    } finally {
      await till.takeAway();
    }
    return true;
  }

  for (const mode of ['pull-before', 'pull-after'] as const) {
    test(`when a factory-fresh card is pulled at each command of its first recharge (${mode}), then the next recharge finishes its wallet and the money is exact`, async (t) => {
      let pulled = true;
      let step = 0;
      for (; pulled; step += 1) {
        await t.test(`command ${step} (${mode})`, async () => {
          pulled = await pulledAt(step, mode);
        });
      }
      assert.ok(step > 10, `only ${step - 1} commands were pulled`);
    });
  }
});
