/**
 * GET /readcard's use case: the card's wallet opened (with its own key or the transport key)
 * and read, a torn first write the journal saw read as the blank card it proves.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '../../service/errors.ts';
import type { CardOnReader } from '../../service/wallet/card-access.ts';
import { readCard } from '../../service/wallet/read-card.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  CARD,
  KEY,
  SHOP,
  cardOnReader,
  engineWith,
  fingerprint,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

describe('readCard', () => {
  test('when a card is on the reader, then its wallet is opened first, and its id and credits are the answer', async () => {
    const { engine, open } = engineWith(ledgerOf(simWithShops()));
    await open();
    const card = cardOnReader(42);
    const steps: string[] = [];
    const opened: CardOnReader = {
      ...card.card,
      openWallet: async () => {
        steps.push('open');
        return 'card';
      },
      readWallet: async (proof) => {
        steps.push('read');
        return card.card.readWallet(proof);
      },
    };
    const answer = await readCard({ withCard: (run) => run(opened) }, engine);
    assert.deepEqual(answer, { cardId: CARD, credits: 42, rechargeAmount: null });
    assert.deepEqual(steps, ['open', 'read']);
  });

  test('when the journal saw the first write to a blank card torn, then the card reads as 0 credits, not as corrupt', async () => {
    const sim = simWithShops();
    const { engine, open } = engineWith(ledgerOf(sim));
    await open();
    const card = cardOnReader('blank');
    // The write is torn: half of slot 0 written, and the reader says it failed.
    const write = card.card.write;
    card.card.write = async (intent) => {
      const result = await write(intent);
      card.slots[0] = Buffer.concat([card.slots[0].subarray(0, 8), Buffer.alloc(8, 0xa5)]);
      return result;
    };
    card.nextWrite = 'lost';
    await assert.rejects(
      rechargeCard(card.access, engine, {
        request: { credits: 5 },
        customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
        keyFingerprint: fingerprint(KEY),
      }),
      (error: AppError) => error.code === 'CardRemovedDuringWrite',
    );
    // Read before the movement is settled: a torn write not yet known to be torn is corrupt.
    await assert.rejects(
      readCard(card.access, engine),
      (error: AppError) => error.code === 'CorruptCard',
    );
    await engine.settle(card.card);
    assert.deepEqual(await readCard(card.access, engine), {
      cardId: CARD,
      credits: 0,
      rechargeAmount: null,
    });
    await engine.close();
  });
});
