// The DESFire wallet session and the till float (docs/card-format.md, section 9): a float
// recharge's v2 record shows on the card, a wallet made before v2 (24-byte records) carries no
// float recharge and is refused one, and what a read shows of the newest record.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import type { Reader } from 'nfc-pcsc';
import { boundedApdu } from '../../service/card/bounded-apdu.ts';
import {
  PICC_SETTINGS,
  planDesfireWrite,
  RECORD_FILE,
  VALUE_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { DesfireWalletSession } from '../../service/card/desfire/desfire-wallet-session.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import { SimulatedNfc, SimulatedPcscReader } from '../../service/card/simulator/simulated-pcsc.ts';
import { VirtualDesfireCard } from '../../service/card/simulator/virtual-desfire-card.ts';
import { planWrite } from '../../service/card/wallet-card.ts';
import { formatCardId } from '../../service/card/wallet-format.ts';
import { WalletKeys } from '../../service/card/wallet-keys.ts';
import { errors } from '../../service/errors.ts';
import type { AppError } from '../../service/errors.ts';

const AID = 0x435701;
const keys = new WalletKeys({ key: Buffer.alloc(6, 0xff), type: 0x60, sector: 1 });
const FLOAT_A = '22ea3bfc-5b3b-8000-8000-00000000002a';
const FLOAT_B = '22ea3bfc-5b3b-8000-8000-00000000002b';
const PAYOUT = '0f8fad5b-d9cb-469f-a165-70867728950e';

let uids = 0;
/** A card holding the wallet on the trial keys, with `credits`; its records `recordSize` long. */
function walletCard(credits: number, recordSize = 32): VirtualDesfireCard {
  uids += 1;
  const card = desfireWalletCard(
    Buffer.from(`04F10A7${uids.toString(16).padStart(7, '0')}`, 'hex'),
    AID,
    credits,
  );
  const file = card.application(AID)?.files.get(RECORD_FILE);
  assert.ok(file?.type === 'cyclic-record');
  file.recordSize = recordSize;
  return card;
}

/** What a test has of the card on the reader: sessions over it, and the commands they sent. */
type OnReader = {
  session: (walletKeys?: WalletKeys) => DesfireWalletSession;
  /** The instruction byte of each wrapped command sent (90 INS 00 00 ...). */
  sent: number[];
};

/**
 * Runs `act` with sessions over nfc-pcsc's Reader and the simulated reader, `card` in the field,
 * closing the reader after; its answer is act's.
 */
async function withReader<T>(card: VirtualDesfireCard, act: (rig: OnReader) => Promise<T>) {
  const device = new SimulatedPcscReader();
  const nfc = new SimulatedNfc(device).asNfc();
  const reader = await new Promise<Reader>((resolve) => nfc.once('reader', resolve));
  reader.on('error', () => {});
  reader.autoProcessing = false;
  const seen = once(reader, 'card');
  void device.insert(card);
  await seen;
  const sent: number[] = [];
  const session = (walletKeys = keys) =>
    new DesfireWalletSession(
      card.id,
      (apdu) => {
        sent.push(apdu[1] as number);
        return boundedApdu(
          () => {},
          1_000,
          () => reader.transmit(apdu, 256),
          () => -Infinity,
        );
      },
      walletKeys.desfireKeysFor(card.id),
    );
  try {
    return await act({ session, sent });
  } finally {
    nfc.close();
  }
}

const valueOf = (card: VirtualDesfireCard) => {
  const file = card.application(AID)?.files.get(VALUE_FILE);
  return file?.type === 'value' ? file.value : undefined;
};
const recordsOf = (card: VirtualDesfireCard) => {
  const file = card.application(AID)?.files.get(RECORD_FILE);
  return file?.type === 'cyclic-record' ? file.records.map((record) => record.length) : [];
};

describe('DesfireWalletSession and the float', () => {
  test('when a wallet without records is read, then it carries float recharges, shows none, and has no newest record', async () => {
    const card = walletCard(7);
    await withReader(card, async (rig) => {
      const wallet = await rig.session().readWallet();
      assert.deepEqual(wallet, {
        cardId: card.id,
        balance: 7,
        before: 'desfire:v1:7:0',
        hasWallet: true,
        counter: 0,
        carriesFloat: true,
        floatEvidence: [],
      });
    });
  });

  test('when float recharges and a payout are written, then the card shows both recharges, newest first, and the payout as its newest record', async () => {
    const card = walletCard(10);
    await withReader(card, async (rig) => {
      const session = rig.session();
      let wallet = await session.readWallet();
      for (const [balance, id, float] of [
        [30, FLOAT_A, true],
        [45, FLOAT_B, true],
        [40, PAYOUT, false],
      ] as const) {
        const intent = planDesfireWrite(wallet.before, balance, id, float);
        assert.deepEqual(await session.write(intent), { outcome: 'committed' });
        wallet = await session.readWallet();
      }
      assert.equal(valueOf(card), 40);
      assert.deepEqual(recordsOf(card), [32, 32, 32]);
      assert.equal(wallet.carriesFloat, true);
      assert.deepEqual(wallet.floatEvidence, [
        { movementId: FLOAT_B, credits: 15 },
        { movementId: FLOAT_A, credits: 20 },
      ]);
      assert.deepEqual(wallet.record, { counter: 3, movementId: PAYOUT, valueAfter: 40 });
      assert.equal(wallet.before, 'desfire:v1:40:3');
    });
  });

  test('when a wallet made before v2 (24-byte records) is read, then it carries no float recharge; a float recharge is refused untouched, any other write lands with a 24-byte record', async () => {
    const card = walletCard(10, 24);
    await withReader(card, async (rig) => {
      const session = rig.session();
      const wallet = await session.readWallet();
      assert.equal(wallet.carriesFloat, false);
      assert.deepEqual(wallet.floatEvidence, []);
      const refused = await session.write(planDesfireWrite(wallet.before, 30, FLOAT_A, true));
      assert.equal(refused.outcome, 'not-written');
      assert.equal(refused.outcome === 'not-written' && refused.error.code, 'CardOperationFailed');
      assert.equal(
        refused.outcome === 'not-written' && (refused.error.cause as Error).message,
        'v1 movement records carry no float recharge',
      );
      assert.deepEqual([valueOf(card), recordsOf(card)], [10, []]);
      const plain = planDesfireWrite(wallet.before, 30, PAYOUT);
      assert.deepEqual(await session.write(plain), { outcome: 'committed' });
      assert.deepEqual([valueOf(card), recordsOf(card)], [30, [24]]);
      const after = await session.readWallet();
      assert.deepEqual(after.record, { counter: 1, movementId: PAYOUT, valueAfter: 30 });
      assert.deepEqual(after.floatEvidence, []);
    });
  });

  test("when a wallet's record file holds records of another size, then reading it is CorruptCard", async () => {
    const card = walletCard(10, 16);
    await withReader(card, async (rig) => {
      await assert.rejects(
        rig.session().readWallet(),
        (error: AppError) => error.code === 'CorruptCard',
      );
    });
  });

  test('when a write does not fit the card (a Classic write, or a card without the wallet), then certainly not written, saying why', async () => {
    const card = walletCard(10);
    const bare = new VirtualDesfireCard({ uid: Buffer.from('04F10AFF000001', 'hex') });
    const classic = await withReader(card, (rig) =>
      rig.session().write(planWrite('classic:v1:blank', 5, PAYOUT)),
    );
    const none = await withReader(bare, (rig) =>
      rig.session().write(planDesfireWrite('desfire:v1:blank', 5, PAYOUT)),
    );
    for (const [result, why] of [
      [classic, 'a MIFARE Classic write for a DESFire card'],
      [none, 'the card holds no wallet application'],
    ] as const) {
      assert.equal(result.outcome, 'not-written', why);
      assert.equal(result.outcome === 'not-written' && (result.error.cause as Error).message, why);
    }
    assert.deepEqual([valueOf(card), recordsOf(card)], [10, []]);
  });
});

describe("DesfireWalletSession: a wallet application whose files are not the wallet's", () => {
  type Files = NonNullable<ReturnType<VirtualDesfireCard['application']>>['files'];
  const value = (files: Files) => {
    const file = files.get(VALUE_FILE);
    assert.ok(file?.type === 'value');
    return file;
  };
  const record = (files: Files) => {
    const file = files.get(RECORD_FILE);
    assert.ok(file?.type === 'cyclic-record');
    return file;
  };
  const deviations: [string, (files: Files) => void][] = [
    ['a value file sent plain', (files) => void (value(files).comm = 'plain')],
    ['a value file that may go below 0', (files) => void (value(files).lowerLimit = -1)],
    ['a value file with limited credit', (files) => void (value(files).limitedCredit = true)],
    ['a record file sent plain', (files) => void (record(files).comm = 'plain')],
    ['records of another size', (files) => void (record(files).recordSize = 16)],
    [
      'the value file where the records are',
      (files) => void files.set(RECORD_FILE, { ...value(files) }),
    ],
    [
      'the record file where the value is',
      (files) => void files.set(VALUE_FILE, { ...record(files) }),
    ],
  ];

  for (const [name, deviate] of deviations) {
    test(`when the card holds ${name}, then personalizing it is CorruptCard`, async () => {
      const card = walletCard(10);
      deviate(card.application(AID)!.files);
      await withReader(card, async (rig) => {
        await assert.rejects(
          rig.session().personalize(async () => {}),
          (error: AppError) => error.code === 'CorruptCard',
        );
      });
    });
  }

  test('when the wallet files are as made, then personalizing it on the trial keys writes nothing', async () => {
    const card = walletCard(10, 24);
    await withReader(card, async (rig) => {
      assert.equal(await rig.session().personalize(async () => {}), false);
    });
  });

  test('when its records are in a value file, then reading the wallet is CorruptCard', async () => {
    const card = walletCard(10);
    const files = card.application(AID)!.files;
    files.set(RECORD_FILE, { ...value(files) });
    await withReader(card, async (rig) => {
      await assert.rejects(
        rig.session().readWallet(),
        (error: AppError) => error.code === 'CorruptCard',
      );
    });
  });
});

describe('DesfireWalletSession: the edges of a write', () => {
  const CREDIT = 0x0c;
  const DEBIT = 0xdc;
  const perCard = new WalletKeys({
    key: Buffer.alloc(6, 0xff),
    type: 0x60,
    sector: 1,
    masterKey: Buffer.from('8E2A1F0C5B7D9364A0C3E5F71B2D4F60', 'hex'),
  });

  test('when a write moves no credits (the balance stays), then only its record is written: no Credit, no Debit', async () => {
    const card = walletCard(25);
    await withReader(card, async (rig) => {
      const session = rig.session();
      const wallet = await session.readWallet();
      rig.sent.length = 0;
      const same = planDesfireWrite(wallet.before, 25, PAYOUT);
      assert.deepEqual(await session.write(same), { outcome: 'committed' });
      assert.ok(!rig.sent.includes(CREDIT) && !rig.sent.includes(DEBIT), `sent ${rig.sent}`);
      assert.deepEqual([valueOf(card), recordsOf(card)], [25, [32]]);
    });
  });

  test('when a write is decided on a card not personalized yet, then its transport key reads the records, without openWallet', async () => {
    const card = walletCard(10);
    await withReader(card, async (rig) => {
      const writer = rig.session(perCard);
      assert.equal(await writer.openWallet(), 'transport');
      const intent = planDesfireWrite((await writer.readWallet()).before, 30, PAYOUT);
      assert.deepEqual(await writer.write(intent), { outcome: 'committed' });
      assert.deepEqual(await rig.session(perCard).decide(intent), { outcome: 'committed' });
    });
  });

  test('when the reader answers GET UID with a status word alone or less, then NoCard', async () => {
    for (const answer of [Buffer.from([0x90]), Buffer.alloc(0)]) {
      const session = new DesfireWalletSession(
        '04F10A70000001',
        async () => answer,
        keys.desfireKeysFor('04F10A70000001'),
      );
      await assert.rejects(
        session.checkUid(),
        (error: AppError) => error.code === 'NoCard',
        answer.toString('hex'),
      );
    }
  });

  test('when the keys are refused before the write changed anything, then certainly not written (AuthenticationFail), with no abort', async () => {
    const card = walletCard(10);
    await withReader(card, async (rig) => {
      // The card holds the trial keys; these per-card keys are not its own.
      const intent = planDesfireWrite('desfire:v1:10:0', 30, PAYOUT);
      const result = await rig.session(perCard).write(intent);
      assert.equal(result.outcome, 'not-written');
      assert.equal(result.outcome === 'not-written' && result.error.code, 'AuthenticationFail');
      assert.ok(!rig.sent.includes(0xa7), 'no AbortTransaction');
      assert.deepEqual([valueOf(card), recordsOf(card)], [10, []]);
    });
  });

  test('when a Classic write is decided on a DESFire card, then unknown, and nothing is sent', async () => {
    const card = walletCard(10);
    await withReader(card, async (rig) => {
      rig.sent.length = 0;
      const decision = await rig.session().decide(planWrite('classic:v1:blank', 5, PAYOUT));
      assert.deepEqual(decision, { outcome: 'unknown' });
      assert.deepEqual(rig.sent, []);
    });
  });

  test("when a personalized card's PICC settings are not the wallet's (a tear after its key changed), then personalizing sets them, once", async () => {
    const uid = Buffer.from('04F10AFF000002', 'hex');
    const own = perCard.desfireKeysFor(formatCardId(uid)).own;
    const card = desfireWalletCard(uid, AID, 10, own);
    card.setPiccKey({ ...own.picc, version: own.version }, 0x0f);
    await withReader(card, async (rig) => {
      assert.equal(await rig.session(perCard).personalize(async () => {}), true);
      assert.equal(card.piccSettings, PICC_SETTINGS);
      assert.equal(await rig.session(perCard).personalize(async () => {}), false);
    });
  });

  test('when the card leaves as the wallet is selected, then the read fails (NoCard): a card that did not answer is not one without the wallet', async () => {
    const cardId = '04F10AFF000003';
    const session = new DesfireWalletSession(
      cardId,
      async (apdu) => {
        if (apdu[1] === 0x5a) throw errors.noCard();
        return Buffer.from(`${cardId}9000`, 'hex');
      },
      keys.desfireKeysFor(cardId),
    );
    await assert.rejects(session.readWallet(), (error: AppError) => error.code === 'NoCard');
  });

  test("when the till key may no longer read the wallet's value file (its rights changed), then AuthenticationFail: only a missing file is a corrupt wallet", async () => {
    const card = walletCard(10);
    const file = card.application(AID)!.files.get(VALUE_FILE);
    assert.ok(file?.type === 'value');
    file.access = { read: 0x0f, write: 0x0f, readWrite: 0, change: 0 };
    await withReader(card, async (rig) => {
      await assert.rejects(
        rig.session().readWallet(),
        (error: AppError) => error.code === 'AuthenticationFail',
      );
    });
  });
});
