/**
 * Personalization (docs/card-security.md): a card on the transport key gets its own keys, its
 * slots first when it holds no wallet, each step journaled before it is done, so a card pulled
 * half way is finished later and one whose trailer tore is reported as such.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OpenedWith } from '../../service/card/card-session.ts';
import type { WriteResult } from '../../service/card/card-face.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { errors, type AppError } from '../../service/errors.ts';
import { silentLogger, type Logger } from '../../service/logger.ts';
import type { CardOnReader } from '../../service/wallet/card-access.ts';
import { CardPersonalizer, personalizeCard } from '../../service/wallet/personalize-card.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { memoryLogger } from '../support/memory-logger.ts';
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

type Outcome = 'committed' | 'not-written' | 'uncertain';

/**
 * A Classic card on the reader with the personalization steps: it opens with its own key once
 * its trailer was written (`ownKeys`), else with the transport key; `fail` makes the next
 * write of a slot or the trailer end otherwise; `openFails` makes opening it fail.
 */
function personalizableCard(balance: number | 'blank') {
  const base = cardOnReader(balance);
  const classic = base.card;
  const rig = Object.assign(base, {
    ownKeys: false,
    steps: [] as string[],
    fail: undefined as
      { what: 'slot' | 'trailer'; outcome: Exclude<Outcome, 'committed'> } | undefined,
    openFails: undefined as AppError | undefined,
    /** What openWallet says after the trailer was written (a trailer that did not take). */
    opensAfterTrailer: 'card' as OpenedWith,
  });
  const ended = (what: 'slot' | 'trailer'): WriteResult | undefined => {
    if (rig.fail?.what !== what) return undefined;
    const { outcome } = rig.fail;
    rig.fail = undefined;
    return { outcome, error: errors.noCard() };
  };
  const card: CardOnReader = {
    ...classic,
    openWallet: async () => {
      rig.steps.push('open');
      if (rig.openFails) throw rig.openFails;
      return rig.ownKeys ? 'card' : 'transport';
    },
    readSlots: async () => [Buffer.from(base.slots[0]), Buffer.from(base.slots[1])],
    writeSlotBlock: async (slot, block) => {
      rig.steps.push(`slot ${slot}`);
      const failed = ended('slot');
      if (failed) return failed;
      base.slots[slot] = Buffer.from(block);
      return { outcome: 'committed' };
    },
    writeTrailer: async () => {
      rig.steps.push('trailer');
      const failed = ended('trailer');
      if (failed) return failed;
      rig.ownKeys = rig.opensAfterTrailer === 'card';
      return { outcome: 'committed' };
    },
  };
  return Object.assign(rig, {
    card,
    access: { withCard: <T>(run: (c: CardOnReader) => Promise<T>) => run(card) },
  });
}

async function setUp(
  options: { perCardKeys?: boolean; autoPersonalize?: boolean; log?: Logger } = {},
) {
  const rig = engineWith(ledgerOf(simWithShops()));
  await rig.open();
  const personalizer = new CardPersonalizer({
    journal: rig.journal,
    movements: rig.engine,
    perCardKeys: options.perCardKeys ?? true,
    autoPersonalize: options.autoPersonalize ?? true,
    log: options.log ?? silentLogger,
  });
  /** The personalization lines of the journal, in order. */
  const journaled = () =>
    rig.store.text
      .split('\n')
      .filter((line) => line.includes('personaliz'))
      .map((line) => {
        const entry = JSON.parse(line) as { type: string; step?: string; cardId: string };
        return `${entry.type}${entry.step ? ` ${entry.step}` : ''} ${entry.cardId}`;
      });
  return { ...rig, personalizer, journaled };
}

const BLANK_SLOT = Buffer.alloc(16);

describe('CardPersonalizer.personalize', () => {
  test('when no card master key is configured, then CardMasterKeyNotSet and the card is not touched', async () => {
    const { personalizer } = await setUp({ perCardKeys: false });
    const card = personalizableCard('blank');
    await assert.rejects(personalizer.personalize(card.card), (error: AppError) => {
      assert.equal(error.code, 'CardMasterKeyNotSet');
      assert.equal(error.status, 409);
      return true;
    });
    assert.deepEqual(card.steps, []);
  });

  test('when a blank card is on the transport key, then its slots (blank, then 0 at generation 0), then its trailer are written, each step journaled first, and its own key must open it', async () => {
    const { personalizer, journal, journaled } = await setUp();
    const card = personalizableCard('blank');
    assert.deepEqual(await personalizer.personalize(card.card), {
      cardId: CARD,
      credits: 0,
      alreadyPersonalized: false,
    });
    assert.deepEqual(card.steps, ['open', 'slot 0', 'slot 1', 'trailer', 'open']);
    assert.deepEqual(card.slots, [BLANK_SLOT, encodeValueBlock(0, 0)]);
    assert.deepEqual(journaled(), [
      `personalizing slots ${CARD}`,
      `personalizing trailer ${CARD}`,
      `personalized ${CARD}`,
    ]);
    assert.equal(journal.personalizing.size, 0);
  });

  test('when a card on the transport key holds a wallet, then only its trailer is written and it keeps its balance', async () => {
    const { personalizer, journaled } = await setUp();
    const card = personalizableCard(25);
    assert.deepEqual(await personalizer.personalize(card.card), {
      cardId: CARD,
      credits: 25,
      alreadyPersonalized: false,
    });
    assert.deepEqual(card.steps, ['open', 'trailer', 'open']);
    assert.deepEqual(journaled(), [`personalizing trailer ${CARD}`, `personalized ${CARD}`]);
  });

  test('when the card opens with its own key and nothing was left half done, then it is already personalized and nothing is written', async () => {
    const { personalizer, journaled } = await setUp();
    const card = personalizableCard(12);
    card.ownKeys = true;
    assert.deepEqual(await personalizer.personalize(card.card), {
      cardId: CARD,
      credits: 12,
      alreadyPersonalized: true,
    });
    assert.deepEqual(card.steps, ['open']);
    assert.deepEqual(journaled(), []);
  });

  test('when the card left after its trailer write landed unconfirmed, then the next personalization finds its own key opens it and finishes it', async () => {
    const { personalizer, journal, journaled } = await setUp();
    const card = personalizableCard('blank');
    card.fail = { what: 'trailer', outcome: 'uncertain' };
    await assert.rejects(
      personalizer.personalize(card.card),
      (error: AppError) => error.code === 'CardRemovedDuringPersonalization',
    );
    assert.equal(journal.personalizing.get(CARD)?.step, 'trailer');
    card.ownKeys = true;
    assert.deepEqual(await personalizer.personalize(card.card), {
      cardId: CARD,
      credits: 0,
      alreadyPersonalized: false,
    });
    assert.equal(journal.personalizing.size, 0);
    assert.deepEqual(journaled().slice(-1), [`personalized ${CARD}`]);
  });

  test('when the trailer write tore and no key opens the card, then PersonalizationTorn; any other failure to open it is its own error', async () => {
    const { personalizer } = await setUp();
    const card = personalizableCard('blank');
    card.fail = { what: 'trailer', outcome: 'uncertain' };
    await assert.rejects(personalizer.personalize(card.card));
    card.openFails = errors.authenticationFail();
    await assert.rejects(personalizer.personalize(card.card), (error: AppError) => {
      assert.equal(error.code, 'PersonalizationTorn');
      return true;
    });
    card.openFails = errors.cardNotResponding();
    await assert.rejects(
      personalizer.personalize(card.card),
      (error: AppError) => error.code === 'CardNotResponding',
    );
    // Without a torn trailer in the journal, an authentication failure is only that.
    const fresh = personalizableCard('blank');
    fresh.openFails = errors.authenticationFail();
    const other = await setUp();
    await assert.rejects(
      other.personalizer.personalize(fresh.card),
      (error: AppError) => error.code === 'AuthenticationFail',
    );
  });

  test('when a slot write ends uncertain or certainly not, then CardRemovedDuringPersonalization or the card error, and the trailer is not written', async () => {
    for (const outcome of ['uncertain', 'not-written'] as const) {
      const { personalizer, journal } = await setUp();
      const card = personalizableCard('blank');
      card.fail = { what: 'slot', outcome };
      await assert.rejects(
        personalizer.personalize(card.card),
        (error: AppError) =>
          error.code === (outcome === 'uncertain' ? 'CardRemovedDuringPersonalization' : 'NoCard'),
      );
      assert.deepEqual(card.steps, ['open', 'slot 0']);
      assert.equal(journal.personalizing.get(CARD)?.step, 'slots');
    }
  });

  test('when the card left while its slots were written, then the next personalization rewrites them though the card reads as corrupt', async () => {
    const { personalizer } = await setUp();
    const card = personalizableCard('blank');
    card.fail = { what: 'slot', outcome: 'uncertain' };
    await assert.rejects(personalizer.personalize(card.card));
    card.slots[0] = Buffer.alloc(16, 0x5a); // torn: neither blank nor a value
    card.steps.length = 0;
    assert.equal((await personalizer.personalize(card.card)).credits, 0);
    assert.deepEqual(card.steps, ['open', 'slot 0', 'slot 1', 'trailer', 'open']);
  });

  test('when a corrupt card was never written by this worker, then CorruptCard and nothing is written', async () => {
    const { personalizer } = await setUp();
    const card = personalizableCard('blank');
    card.slots[0] = Buffer.alloc(16, 0x5a);
    await assert.rejects(
      personalizer.personalize(card.card),
      (error: AppError) => error.code === 'CorruptCard',
    );
    assert.deepEqual(card.steps, ['open']);
  });

  test('when the journal saw the first write to a blank card torn, then the corrupt card is personalized as blank', async () => {
    const { personalizer, engine } = await setUp();
    const card = personalizableCard('blank');
    card.nextWrite = 'lost';
    const write = card.card.write;
    card.card.write = async (intent) => {
      const result = await write(intent);
      card.slots[0] = Buffer.concat([card.slots[0].subarray(0, 8), Buffer.alloc(8, 0xa5)]);
      return result;
    };
    await assert.rejects(
      rechargeCard(card.access, engine, {
        request: { credits: 5 },
        customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
        keyFingerprint: fingerprint(KEY),
      }),
      (error: AppError) => error.code === 'CardRemovedDuringWrite',
    );
    card.steps.length = 0;
    const answer = await personalizeCard(card.access, engine, personalizer);
    assert.deepEqual(answer, { cardId: CARD, credits: 0, alreadyPersonalized: false });
    assert.deepEqual(card.steps, ['open', 'slot 0', 'slot 1', 'trailer', 'open']);
    await engine.close();
  });

  test("when the trailer was written but the card's own key does not open it, then CardWriteUnverified and it is not journaled as personalized", async () => {
    const { personalizer, journal } = await setUp();
    const card = personalizableCard('blank');
    card.opensAfterTrailer = 'transport';
    await assert.rejects(
      personalizer.personalize(card.card),
      (error: AppError) => error.code === 'CardWriteUnverified',
    );
    assert.equal(journal.personalizing.get(CARD)?.step, 'trailer');
  });

  test('when the trailer write certainly failed, then its error', async () => {
    const { personalizer } = await setUp();
    const card = personalizableCard(3);
    card.fail = { what: 'trailer', outcome: 'not-written' };
    await assert.rejects(
      personalizer.personalize(card.card),
      (error: AppError) => error.code === 'NoCard',
    );
  });

  test('when the reader cannot personalize (no slot or trailer access), then an error naming the card', async () => {
    const { personalizer } = await setUp();
    const { card } = cardOnReader('blank');
    await assert.rejects(personalizer.personalize(card as CardOnReader), {
      message: `card ${CARD} cannot be personalized by this reader`,
    });
  });
});

describe('CardPersonalizer.personalize, what a Classic card keeps and what is logged', () => {
  test('when the reader lacks any one of the personalization steps (open, read the slots, write a slot, write the trailer), then an error naming the card, before anything is opened or written', async () => {
    for (const missing of ['openWallet', 'readSlots', 'writeSlotBlock', 'writeTrailer'] as const) {
      const { personalizer, journaled } = await setUp();
      const card = personalizableCard('blank');
      delete card.card[missing];
      await assert.rejects(personalizer.personalize(card.card), (error: Error) => {
        assert.equal(
          error.message,
          `card ${CARD} cannot be personalized by this reader`,
          `without ${missing}`,
        );
        return true;
      });
      assert.deepEqual(card.steps, [], `without ${missing}`);
      assert.deepEqual(journaled(), [], `without ${missing}`);
    }
  });

  test('when the journal says a slot write of this card was left torn but the card now holds a wallet (written since), then its slots and balance are kept and only its trailer is written', async () => {
    const { personalizer, journal } = await setUp();
    const card = personalizableCard('blank');
    card.fail = { what: 'slot', outcome: 'uncertain' };
    await assert.rejects(personalizer.personalize(card.card));
    assert.equal(journal.personalizing.get(CARD)?.step, 'slots');
    card.slots[0] = encodeValueBlock(7, 1);
    card.steps.length = 0;
    const answer = await personalizer.personalize(card.card);
    assert.deepEqual(answer, { cardId: CARD, credits: 7, alreadyPersonalized: false });
    assert.deepEqual(card.steps, ['open', 'trailer', 'open']);
    assert.deepEqual(card.slots[0], encodeValueBlock(7, 1));
  });

  test("when a card is personalized, then the operator's log says so, naming the card", async () => {
    const log = memoryLogger();
    const { personalizer } = await setUp({ log });
    await personalizer.personalize(personalizableCard(2).card);
    assert.deepEqual(log.lines, [`info card ${CARD}: personalized with its own keys`]);
  });

  test("when the trailer write tore and no key opens the card, then the operator's log says so, naming the card", async () => {
    const log = memoryLogger();
    const { personalizer } = await setUp({ log });
    const card = personalizableCard('blank');
    card.fail = { what: 'trailer', outcome: 'uncertain' };
    await assert.rejects(personalizer.personalize(card.card));
    card.openFails = errors.authenticationFail();
    await assert.rejects(
      personalizer.personalize(card.card),
      (error: AppError) => error.code === 'PersonalizationTorn',
    );
    assert.deepEqual(log.lines, [
      `error card ${CARD}: its trailer write was torn and no key opens its wallet sector`,
    ]);
  });
});

describe('CardPersonalizer.beforeRecharge', () => {
  test('when cards have keys of their own and auto-personalization is on, then a card on the transport key is personalized; one with its own key is left as it is', async () => {
    const { personalizer } = await setUp();
    const card = personalizableCard(4);
    await personalizer.beforeRecharge(card.card);
    assert.deepEqual(card.steps, ['open', 'trailer', 'open']);
    card.steps.length = 0;
    await personalizer.beforeRecharge(card.card);
    assert.deepEqual(card.steps, ['open']);
  });

  test('when cards have no keys of their own, or auto-personalization is off, then the card is not even opened', async () => {
    for (const options of [{ perCardKeys: false }, { autoPersonalize: false }]) {
      const { personalizer } = await setUp(options);
      const card = personalizableCard(4);
      await personalizer.beforeRecharge(card.card);
      assert.deepEqual(card.steps, [], JSON.stringify(options));
    }
  });
});
