/**
 * Personalizing a DESFire card (docs/card-format.md section 9.7): its session does the writing
 * and announces each step before it; the personalizer journals each announced step first, so a
 * card pulled half way is finished by the next personalization (or by the next recharge, before
 * the ledger reserves anything), and a card that left after a step began is reported as such.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OpenedWith } from '../../service/card/card-session.ts';
import type { DesfirePersonalizationStep } from '../../service/card/desfire/desfire-wallet-session.ts';
import { errors, type AppError } from '../../service/errors.ts';
import type { CardOnReader } from '../../service/wallet/card-access.ts';
import type { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { CardPersonalizer } from '../../service/wallet/personalize-card.ts';
import { memoryLogger } from '../support/memory-logger.ts';
import { CARD, cardOnReader, engineWith, ledgerOf, simWithShops } from '../support/money-rig.ts';

const ALL_STEPS: DesfirePersonalizationStep[] = ['picc-key', 'application', 'keys'];

/**
 * A DESFire card on the reader holding `balance`: `openWallet` answers `opens`; `personalize`
 * announces each step still `left`, then writes it (recording what the journal said of the card
 * at that moment), and answers whether it wrote anything. `pull` makes it throw `error` once
 * `afterAnnounced` steps were announced this time (0: before the first), the step announced
 * last not written.
 */
function desfireCard(journal: MovementJournal, balance = 0) {
  const base = cardOnReader(balance);
  const rig = {
    opens: 'transport' as OpenedWith,
    left: [...ALL_STEPS],
    calls: [] as string[],
    pull: undefined as { afterAnnounced: number; error: Error } | undefined,
  };
  const card: CardOnReader = {
    ...base.card,
    openWallet: async () => {
      rig.calls.push('open');
      return rig.opens;
    },
    personalize: async (announce) => {
      rig.calls.push('personalize');
      let announced = 0;
      let wrote = false;
      const pullNow = () => {
        const { pull } = rig;
        if (pull?.afterAnnounced !== announced) return;
        rig.pull = undefined;
        throw pull.error;
      };
      pullNow();
      for (const step of [...rig.left]) {
        await announce(step);
        announced += 1;
        pullNow();
        rig.calls.push(`write ${step} (journaled: ${journal.personalizing.get(CARD)?.step})`);
        rig.left.shift();
        wrote = true;
      }
      rig.opens = 'card';
      return wrote;
    },
  };
  return Object.assign(rig, { card });
}

async function setUp(options: { perCardKeys?: boolean; autoPersonalize?: boolean } = {}) {
  const rig = engineWith(ledgerOf(simWithShops()));
  await rig.open();
  const log = memoryLogger();
  const personalizer = new CardPersonalizer({
    journal: rig.journal,
    movements: rig.engine,
    perCardKeys: options.perCardKeys ?? true,
    autoPersonalize: options.autoPersonalize ?? true,
    log,
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
  return { ...rig, personalizer, journaled, log };
}

describe('CardPersonalizer.personalize, a DESFire card', () => {
  test('when a DESFire card is still on its trial keys, then each step its session announces is journaled before it is written, then it is journaled personalized and the answer has its balance', async () => {
    const { personalizer, journal, journaled, log } = await setUp();
    const card = desfireCard(journal, 9);
    const answer = await personalizer.personalize(card.card);
    assert.deepEqual(answer, { cardId: CARD, credits: 9, alreadyPersonalized: false });
    assert.deepEqual(card.calls, [
      'personalize',
      'write picc-key (journaled: picc-key)',
      'write application (journaled: application)',
      'write keys (journaled: keys)',
    ]);
    assert.deepEqual(journaled(), [
      `personalizing picc-key ${CARD}`,
      `personalizing application ${CARD}`,
      `personalizing keys ${CARD}`,
      `personalized ${CARD}`,
    ]);
    assert.equal(journal.personalizing.size, 0, JSON.stringify([...journal.personalizing]));
    assert.deepEqual(
      log.lines.filter((line) => line.includes('personalized')),
      [`info card ${CARD}: DESFire wallet personalized`],
      log.lines.join('\n'),
    );
  });

  test('when the DESFire card has its own keys and nothing was left half made, then it is already personalized and nothing is journaled or logged', async () => {
    const { personalizer, journal, journaled, log } = await setUp();
    const card = desfireCard(journal, 4);
    card.left = [];
    const answer = await personalizer.personalize(card.card);
    assert.deepEqual(answer, { cardId: CARD, credits: 4, alreadyPersonalized: true });
    assert.deepEqual(journaled(), []);
    assert.deepEqual(log.lines, []);
  });

  test('when the card was pulled after a step was announced, then CardRemovedDuringPersonalization, the step stays journaled, and the next personalization finishes it', async () => {
    for (const error of [errors.noCard(), errors.cardNotResponding()]) {
      const { personalizer, journal, journaled } = await setUp();
      const card = desfireCard(journal, 3);
      card.pull = { afterAnnounced: 2, error };
      await assert.rejects(personalizer.personalize(card.card), (thrown: AppError) => {
        assert.equal(
          thrown.code,
          'CardRemovedDuringPersonalization',
          `${error.message}: ${thrown}`,
        );
        return true;
      });
      assert.equal(journal.personalizing.get(CARD)?.step, 'application');
      const answer = await personalizer.personalize(card.card);
      assert.deepEqual(answer, { cardId: CARD, credits: 3, alreadyPersonalized: false });
      assert.deepEqual(journaled(), [
        `personalizing picc-key ${CARD}`,
        `personalizing application ${CARD}`,
        `personalizing application ${CARD}`,
        `personalizing keys ${CARD}`,
        `personalized ${CARD}`,
      ]);
      assert.equal(journal.personalizing.size, 0);
    }
  });

  test('when the card left before its session announced any step, then its own error and nothing is journaled', async () => {
    for (const error of [errors.noCard(), errors.cardNotResponding()]) {
      const { personalizer, journal, journaled } = await setUp();
      const card = desfireCard(journal);
      card.pull = { afterAnnounced: 0, error };
      await assert.rejects(personalizer.personalize(card.card), (thrown: AppError) => {
        assert.equal(thrown.code, (error as AppError).code, String(thrown));
        return true;
      });
      assert.deepEqual(journaled(), []);
    }
  });

  test('when a step fails otherwise than by the card leaving, then that error, not CardRemovedDuringPersonalization', async () => {
    for (const error of [errors.authenticationFail(), errors.corruptCard(), new Error('reader')]) {
      const { personalizer, journal } = await setUp();
      const card = desfireCard(journal);
      card.pull = { afterAnnounced: 1, error };
      await assert.rejects(personalizer.personalize(card.card), (thrown: Error) => {
        assert.equal(thrown, error, `${error.message} became ${thrown}`);
        return true;
      });
      assert.equal(journal.personalizing.get(CARD)?.step, 'picc-key');
    }
  });

  test('when the journal says the card was left half made but its session finds nothing left to write (the last step landed unconfirmed), then it is journaled personalized, not already personalized', async () => {
    const { personalizer, journal, journaled, log } = await setUp();
    const card = desfireCard(journal, 6);
    card.pull = { afterAnnounced: 3, error: errors.cardNotResponding() };
    await assert.rejects(personalizer.personalize(card.card));
    // The keys landed though the card stopped answering.
    card.left = [];
    assert.equal(journal.personalizing.get(CARD)?.step, 'keys');
    const answer = await personalizer.personalize(card.card);
    assert.deepEqual(answer, { cardId: CARD, credits: 6, alreadyPersonalized: false });
    assert.deepEqual(journaled().slice(-1), [`personalized ${CARD}`]);
    assert.equal(journal.personalizing.size, 0);
    assert.ok(
      log.lines.includes(`info card ${CARD}: DESFire wallet personalized`),
      log.lines.join('\n'),
    );
  });
});

describe('CardPersonalizer.beforeRecharge, a DESFire card', () => {
  test('when cards have keys of their own and auto-personalization is on, then a DESFire card on its trial keys is personalized before the recharge; one with its own keys is only opened', async () => {
    const { personalizer, journal } = await setUp();
    const card = desfireCard(journal);
    await personalizer.beforeRecharge(card.card);
    assert.deepEqual(card.calls.slice(0, 2), ['open', 'personalize']);
    assert.equal(card.left.length, 0, 'every step written');
    card.calls.length = 0;
    await personalizer.beforeRecharge(card.card);
    assert.deepEqual(card.calls, ['open']);
  });

  test('when no card master key is configured, then a DESFire card without its wallet application gets it on its first recharge, whatever auto-personalization says', async () => {
    for (const autoPersonalize of [true, false]) {
      const { personalizer, journal } = await setUp({ perCardKeys: false, autoPersonalize });
      const card = desfireCard(journal);
      await personalizer.beforeRecharge(card.card);
      assert.deepEqual(card.calls.slice(0, 2), ['open', 'personalize'], `auto ${autoPersonalize}`);
    }
  });

  test('when cards have keys of their own but auto-personalization is off, then the DESFire card is neither opened nor personalized', async () => {
    const { personalizer, journal } = await setUp({ autoPersonalize: false });
    const card = desfireCard(journal);
    await personalizer.beforeRecharge(card.card);
    assert.deepEqual(card.calls, []);
  });

  test('when the journal says this worker left the DESFire card half made, then it is finished first though its keys open it', async () => {
    const { personalizer, journal } = await setUp();
    const card = desfireCard(journal);
    card.pull = { afterAnnounced: 2, error: errors.noCard() };
    await assert.rejects(personalizer.personalize(card.card));
    // Its trial keys open it: openWallet cannot tell it is half made.
    card.opens = 'card';
    card.calls.length = 0;
    await personalizer.beforeRecharge(card.card);
    assert.equal(card.calls[0], 'personalize', card.calls.join(', '));
    assert.deepEqual(card.left, []);
    assert.equal(journal.personalizing.size, 0);
  });
});
