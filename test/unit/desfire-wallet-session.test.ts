// The DESFire wallet session over nfc-pcsc's Reader and the simulator's PC/SC stand-in, with
// the virtual DESFire card in the field: reading, writing and deciding a movement, and
// personalizing a card, with the card pulled at every command.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import type { Reader } from 'nfc-pcsc';
import { boundedApdu } from '../../service/card/bounded-apdu.ts';
import {
  planDesfireWrite,
  RECORD_FILE,
  VALUE_FILE,
  type DesfireWriteIntent,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import {
  DesfireWalletSession,
  type DesfirePersonalizationStep,
} from '../../service/card/desfire/desfire-wallet-session.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import { SimulatedNfc, SimulatedPcscReader } from '../../service/card/simulator/simulated-pcsc.ts';
import { VirtualDesfireCard } from '../../service/card/simulator/virtual-desfire-card.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import type { AppError } from '../../service/errors.ts';

const MASTER_KEY = Buffer.from('8E2A1F0C5B7D9364A0C3E5F71B2D4F60', 'hex');
const AID = 0x435701;
const perCard = new WalletKeys({
  key: Buffer.alloc(6, 0xff),
  type: 0x60,
  sector: 1,
  masterKey: MASTER_KEY,
});
const trial = new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 });

let uids = 0;
function newCard(credits?: number): VirtualDesfireCard {
  uids += 1;
  const uid = Buffer.from(`04DE5E55${uids.toString(16).padStart(6, '0')}`, 'hex');
  return credits === undefined
    ? new VirtualDesfireCard({ uid })
    : desfireWalletCard(uid, AID, credits);
}

/** nfc-pcsc's Reader over the simulated reader; `present` puts the card (back) in the field. */
async function simulatedReader(card: VirtualDesfireCard) {
  const device = new SimulatedPcscReader();
  const nfc = new SimulatedNfc(device).asNfc();
  const reader = await new Promise<Reader>((resolve) => nfc.once('reader', resolve));
  reader.on('error', () => {});
  reader.autoProcessing = false;
  const present = async () => {
    const seen = once(reader, 'card');
    void device.insert(card);
    await seen;
  };
  await present();
  /** A session on the card in the field, or (`cardId`) on the card a session expects there. */
  const session = (keys: WalletKeys, cardId = card.id) =>
    new DesfireWalletSession(
      cardId,
      (apdu) =>
        boundedApdu(
          () => {},
          1_000,
          () => reader.transmit(apdu, 256),
          () => -Infinity,
        ),
      keys.desfireKeysFor(cardId),
    );
  return { device, session, present, close: () => nfc.close() };
}

const value = (card: VirtualDesfireCard) => {
  const file = card.application(AID)?.files.get(VALUE_FILE);
  return file?.type === 'value' ? file.value : undefined;
};
const records = (card: VirtualDesfireCard) => {
  const file = card.application(AID)?.files.get(RECORD_FILE);
  return file?.type === 'cyclic-record' ? file.records.length : undefined;
};

const code = (error: unknown) => (error as AppError).code;
const nothing = async () => {};

describe('DesfireWalletSession: reading and writing', () => {
  test('when a card fresh from the factory is read, then it has no key of its own; opened as not set up yet, it holds 0', async () => {
    const card = newCard();
    const rig = await simulatedReader(card);
    try {
      await assert.rejects(
        rig.session(perCard).readWallet(),
        (e) => code(e) === 'AuthenticationFail',
      );
      const session = rig.session(perCard);
      assert.equal(await session.openWallet(), 'transport');
      assert.deepEqual(await session.readWallet(), {
        cardId: card.id,
        balance: 0,
        before: 'desfire:v1:blank',
        hasWallet: false,
        counter: 0,
      });
      const trialSession = rig.session(trial);
      assert.equal(await trialSession.openWallet(), 'transport', 'without its application');
      assert.equal((await trialSession.readWallet()).balance, 0);
    } finally {
      rig.close();
    }
  });

  test('when a card holding a wallet on the transport keys is read with per-card keys, then only after openWallet said transport', async () => {
    const card = newCard(33);
    const rig = await simulatedReader(card);
    try {
      await assert.rejects(
        rig.session(perCard).readWallet(),
        (e) => code(e) === 'AuthenticationFail',
      );
      const session = rig.session(perCard);
      assert.equal(await session.openWallet(), 'transport');
      assert.equal((await session.readWallet()).before, 'desfire:v1:33:0');
      assert.equal(await rig.session(trial).openWallet(), 'card');
    } finally {
      rig.close();
    }
  });

  test('when the till recharges and discharges a personalized card, then each write commits with its record and the value follows', async () => {
    const card = newCard();
    const rig = await simulatedReader(card);
    try {
      const session = rig.session(perCard);
      assert.equal(await session.personalize(nothing), true);
      assert.equal(await session.openWallet(), 'card');
      let wallet = await session.readWallet();
      assert.equal(wallet.before, 'desfire:v1:0:0');
      const recharge = planDesfireWrite(wallet.before, 150, '7c9e6679-7425-40de-944b-e07fc1f90ae7');
      assert.deepEqual(await session.write(recharge), { outcome: 'committed' });
      assert.equal(value(card), 150);
      wallet = await session.readWallet();
      assert.equal(wallet.counter, 1);
      assert.deepEqual(wallet.record, {
        counter: 1,
        movementId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
        valueAfter: 150,
      });
      const discharge = planDesfireWrite(wallet.before, 0, '0f8fad5b-d9cb-469f-a165-70867728950e');
      assert.deepEqual(await session.write(discharge), { outcome: 'committed' });
      assert.equal(value(card), 0);
      assert.equal(records(card), 2);
      assert.deepEqual(await session.decide(recharge), { outcome: 'committed' });
      assert.deepEqual(await session.decide(discharge), { outcome: 'committed' });
    } finally {
      rig.close();
    }
  });

  test('when the same write is sent again after it committed, then it is committed once: no second credit', async () => {
    const card = newCard(10);
    const rig = await simulatedReader(card);
    try {
      const session = rig.session(trial);
      const intent = planDesfireWrite((await session.readWallet()).before, 30, 'm-again');
      assert.deepEqual(await session.write(intent), { outcome: 'committed' });
      assert.deepEqual(await session.write(intent), { outcome: 'committed' });
      assert.equal(value(card), 30);
      assert.equal(records(card), 1);
    } finally {
      rig.close();
    }
  });

  test('when the card no longer holds what the plan was made from, then the write is not written', async () => {
    const card = newCard(10);
    const rig = await simulatedReader(card);
    try {
      const session = rig.session(trial);
      const intent = planDesfireWrite((await session.readWallet()).before, 30, 'm-stale');
      const stale: DesfireWriteIntent = { ...intent, previousBalance: 11 };
      const result = await session.write(stale);
      assert.equal(result.outcome, 'not-written');
      assert.equal(value(card), 10);
    } finally {
      rig.close();
    }
  });

  for (const [fault, landed] of [
    ['pull-before', false],
    ['pull-after', true],
  ] as const) {
    test(`when the card is pulled ${fault === 'pull-before' ? 'before' : 'after'} it commits, then the write is uncertain and the records decide it ${landed ? 'committed' : 'not written'}`, async () => {
      const card = newCard(10);
      const rig = await simulatedReader(card);
      try {
        const intent = planDesfireWrite(
          (await rig.session(trial).readWallet()).before,
          25,
          'm-torn',
        );
        const armed = card.failAt('commit', fault);
        const result = await rig.session(trial).write(intent);
        assert.ok(armed.fired);
        assert.equal(result.outcome, 'uncertain');
        assert.equal(code((result as { error: unknown }).error), 'NoCard');
        assert.equal(value(card), landed ? 25 : 10);
        await rig.present();
        assert.deepEqual(await rig.session(trial).decide(intent), {
          outcome: landed ? 'committed' : 'not-written',
        });
      } finally {
        rig.close();
      }
    });
  }

  for (const command of ['credit', 'writeRecord'] as const) {
    test(`when the card is pulled at the ${command}, then the write is certainly not written and the card is unchanged`, async () => {
      const card = newCard(10);
      const rig = await simulatedReader(card);
      try {
        const intent = planDesfireWrite(
          (await rig.session(trial).readWallet()).before,
          25,
          'm-early',
        );
        card.failAt(command, 'pull-after');
        const result = await rig.session(trial).write(intent);
        assert.equal(result.outcome, 'not-written');
        assert.equal(value(card), 10);
        await rig.present();
        assert.deepEqual(await rig.session(trial).decide(intent), { outcome: 'not-written' });
      } finally {
        rig.close();
      }
    });
  }

  // Someone between the till and the card (docs/card-security.md, DESFire): EV1 sends no CMAC
  // with a plain command, so whoever alters an answer can also send the card a commit.
  const COMMIT = Buffer.from('90C7000000', 'hex');
  for (const [command, interception] of [
    ['credit', 'tamper-cmac'],
    ['credit', 'drop-cmac'],
    ['credit', 'forge-error'],
    ['writeRecord', 'tamper-cmac'],
  ] as const) {
    test(`when the answer to the ${command} does not verify (${interception}) and a commit is injected afterwards, then the till aborted the transaction: nothing lands, and the write is uncertain until the records decide it not written`, async () => {
      const card = newCard(30);
      const rig = await simulatedReader(card);
      try {
        const intent = planDesfireWrite(
          (await rig.session(trial).readWallet()).before,
          35,
          'm-tampered',
        );
        const tampered = card.intercept(command, interception);
        const result = await rig.session(trial).write(intent);
        assert.ok(tampered.fired);
        assert.equal(result.outcome, 'uncertain');
        assert.equal(code((result as { error: unknown }).error), 'CardAnswerUnverified');
        const injected = card.intercept('selectApplication', { inject: COMMIT });
        assert.deepEqual(await rig.session(trial).decide(intent), { outcome: 'not-written' });
        assert.ok(injected.fired);
        assert.equal(value(card), 30, 'the injected commit found nothing to commit');
        assert.equal(records(card), 0);
      } finally {
        rig.close();
      }
    });
  }

  for (const interception of ['tamper-cmac', 'forge-error'] as const) {
    test(`when the answer to the commit does not verify (${interception}), then the write is uncertain (CardAnswerUnverified, not NoCard) and the records decide it committed`, async () => {
      const card = newCard(30);
      const rig = await simulatedReader(card);
      try {
        const intent = planDesfireWrite(
          (await rig.session(trial).readWallet()).before,
          35,
          'm-commit',
        );
        card.intercept('commit', interception);
        const result = await rig.session(trial).write(intent);
        assert.equal(result.outcome, 'uncertain');
        assert.equal(code((result as { error: unknown }).error), 'CardAnswerUnverified');
        assert.equal(value(card), 35);
        assert.deepEqual(await rig.session(trial).decide(intent), { outcome: 'committed' });
      } finally {
        rig.close();
      }
    });
  }

  for (const [command, decided] of [
    ['credit', 'not-written'],
    ['writeRecord', 'committed'],
  ] as const) {
    test(`when the answer to the ${command} is tampered with and the abort swallowed, then a commit injected before the next read lands, and the records decide the write ${decided}`, async () => {
      const card = newCard(30);
      const rig = await simulatedReader(card);
      try {
        const intent = planDesfireWrite(
          (await rig.session(trial).readWallet()).before,
          35,
          'm-swallowed',
        );
        card.intercept(command, 'tamper-cmac');
        const swallowed = card.intercept('abort', 'swallow');
        const result = await rig.session(trial).write(intent);
        assert.ok(swallowed.fired, 'the till sent AbortTransaction');
        assert.equal(result.outcome, 'uncertain');
        card.intercept('selectApplication', { inject: COMMIT });
        const wallet = await rig.session(trial).readWallet();
        assert.equal(wallet.balance, 35);
        assert.equal(wallet.counter, command === 'credit' ? 0 : 1);
        assert.deepEqual(await rig.session(trial).decide(intent), { outcome: decided });
      } finally {
        rig.close();
      }
    });
  }

  test('when the wallet files are gone, then reading it is CorruptCard; keys it does not know are AuthenticationFail', async () => {
    const card = newCard(10);
    const rig = await simulatedReader(card);
    try {
      card.dropFiles();
      await assert.rejects(rig.session(trial).readWallet(), (e) => code(e) === 'CorruptCard');
      const foreign = newCard(10);
      foreign.setApplicationKey(AID, 1, Buffer.alloc(16, 0x77), 3);
      const other = await simulatedReader(foreign);
      try {
        await assert.rejects(
          other.session(perCard).readWallet(),
          (e) => code(e) === 'AuthenticationFail',
        );
      } finally {
        other.close();
      }
    } finally {
      rig.close();
    }
  });

  test('when another card is on the reader, then the write is not written: NoCard', async () => {
    const card = newCard(10);
    const rig = await simulatedReader(card);
    try {
      const intent = planDesfireWrite(
        (await rig.session(trial).readWallet()).before,
        20,
        'm-other',
      );
      const result = await rig.session(trial, '04000000000001').write(intent);
      assert.equal(result.outcome, 'not-written');
      assert.equal(code((result as { error: unknown }).error), 'NoCard');
      assert.equal(value(card), 10);
    } finally {
      rig.close();
    }
  });
});

describe('DesfireWalletSession: personalization', () => {
  test('when a factory card is personalized, then its PICC key, settings, application, files and keys are its own, each step announced', async () => {
    const card = newCard();
    const rig = await simulatedReader(card);
    try {
      const steps: DesfirePersonalizationStep[] = [];
      const session = rig.session(perCard);
      assert.equal(await session.personalize(async (step) => void steps.push(step)), true);
      assert.deepEqual(steps, ['picc-key', 'application', 'keys']);
      const { own } = perCard.desfireKeysFor(card.id);
      assert.deepEqual(card.piccKey, { type: 'aes', key: own.picc.key, version: 1 });
      assert.equal(card.piccSettings, 0x0b);
      const app = card.application(AID)!;
      assert.deepEqual(
        app.keys.map((k) => [k.key, k.version]),
        [
          [own.application.key, 1],
          [own.till.key, 1],
          [own.machine.key, 1],
        ],
      );
      assert.equal(await rig.session(perCard).personalize(nothing), false, 'already personalized');
    } finally {
      rig.close();
    }
  });

  test('when a card holding a wallet on the transport keys is personalized, then it keeps its credits', async () => {
    const card = newCard(42);
    const rig = await simulatedReader(card);
    try {
      assert.equal(await rig.session(perCard).personalize(nothing), true);
      const session = rig.session(perCard);
      assert.equal(await session.openWallet(), 'card');
      assert.equal((await session.readWallet()).balance, 42);
    } finally {
      rig.close();
    }
  });

  test('when there is no master key, then personalizing only creates the wallet application, on the zero keys', async () => {
    const card = newCard();
    const rig = await simulatedReader(card);
    try {
      const steps: DesfirePersonalizationStep[] = [];
      assert.equal(await rig.session(trial).personalize(async (s) => void steps.push(s)), true);
      assert.deepEqual(steps, ['application']);
      assert.equal(card.piccKey.type, 'des', 'the factory PICC key stays');
      assert.equal(value(card), 0);
      assert.equal(await rig.session(trial).personalize(nothing), false);
    } finally {
      rig.close();
    }
  });

  for (const [kind, credits] of [
    ['a factory card', undefined],
    ['a card holding a wallet on the transport keys', 5],
  ] as const) {
    test(`when ${kind} is pulled at any command of its personalization, then personalizing it again finishes it`, async () => {
      const reference = newCard(credits);
      const count = await simulatedReader(reference);
      let commands = 0;
      reference.onApdu(() => {
        commands += 1;
      });
      try {
        await count.session(perCard).personalize(nothing);
      } finally {
        count.close();
      }
      assert.ok(commands > 15, `a personalization takes ${commands} commands`);
      for (let at = 0; at < commands; at += 1) {
        for (const action of ['pull-before', 'pull-after'] as const) {
          const card = newCard(credits);
          const rig = await simulatedReader(card);
          try {
            const fault = card.failAt({ index: at }, action);
            await assert.rejects(
              rig.session(perCard).personalize(nothing),
              (e) => code(e) === 'NoCard',
            );
            assert.ok(fault.fired, `APDU ${at} ${action}`);
            await rig.present();
            await rig.session(perCard).personalize(nothing);
            const session = rig.session(perCard);
            assert.equal(await session.openWallet(), 'card', `pulled ${action} APDU ${at}`);
            assert.equal((await session.readWallet()).balance, credits ?? 0);
            assert.equal(card.piccKey.type, 'aes');
          } finally {
            rig.close();
          }
        }
      }
    });
  }
});
