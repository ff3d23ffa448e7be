// A recharge tells the ledger what the card held: a card holding more than the shop put on it
// (forged, restored, loaded elsewhere) is flagged suspect at the ledger, and with the
// refuseCardsAboveAccount setting the recharge is refused before anything is reserved. Over
// real HTTP, simulated cards (their balances written without the ledger: forged) and a real
// ledger.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { apiCaller, shown, type HttpResponse } from '../support/http-client.ts';
import {
  shopCredits,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let ledger: TestLedger;
let flagging: TestService;
let refusing: TestService;
before(async () => {
  ledger = await startTestLedger();
  const start = (refuseCardsAboveAccount: boolean) =>
    startTestService(
      { cloudUrl: ledger.url, simulator: true, refuseCardsAboveAccount },
      { limits: ROOMY_LIMITS },
    );
  flagging = await start(false);
  refusing = await start(true);
});
after(async () => {
  await flagging?.close();
  await refusing?.close();
  await ledger?.close();
});

const call = (service: TestService, method: string, path: string, body?: unknown) =>
  apiCaller(() => service.url, TEST_API_KEY)(method, path, body);

let nextUid = 0x10;
/** A simulated card holding `credits` the ledger never saw. */
async function forgedCard(service: TestService, credits: number): Promise<string> {
  nextUid += 1;
  const placed = await call(service, 'POST', '/simulator/place', {
    uid: `04A0B${nextUid.toString(16).padStart(3, '0')}`,
    ...(credits > 0 ? { credits } : {}),
  });
  assert.equal(placed.status, 200, shown(placed));
  const { cardId } = placed.json as { cardId: string };
  await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card seen');
  return cardId;
}

async function cardAtLedger(cardId: string) {
  const res = await fetch(`${ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  assert.equal(res.status, 200);
  return (await res.json()) as {
    suspect: boolean;
    flags: { kind: string; requestedCredits: number; accountCredits: number }[];
  };
}

const cardCredits = async (service: TestService): Promise<number> =>
  ((await call(service, 'GET', '/readcard')).json as { credits: number }).credits;

const recharge = (service: TestService, credits: number): Promise<HttpResponse> =>
  call(service, 'POST', '/writecard', { credits });

describe('a card holding more than its account', () => {
  test('when a forged card is recharged, then the recharge goes through and the ledger flags the card', async () => {
    const cardId = await forgedCard(flagging, 50);
    const answer = await recharge(flagging, 5);
    assert.equal(answer.status, 200, shown(answer));
    assert.equal(await cardCredits(flagging), 55);
    const card = await cardAtLedger(cardId);
    assert.equal(card.suspect, true, JSON.stringify(card));
    assert.deepEqual(
      card.flags.map(({ kind, requestedCredits, accountCredits }) => ({
        kind,
        requestedCredits,
        accountCredits,
      })),
      [{ kind: 'card-above-account', requestedCredits: 50, accountCredits: 0 }],
    );
  });

  test('when refuseCardsAboveAccount is on, then a forged card is refused with 500 CardAccountExceeded, nothing reserved or written, and flagged', async () => {
    const cardId = await forgedCard(refusing, 50);
    const pool = await shopCredits(ledger.url);
    // What the tray's status feed hears: the card, flagged suspect.
    const answers: unknown[] = [];
    refusing.activity.on('card-answer', (answer) => answers.push(answer));
    const answer = await recharge(refusing, 5);
    assert.equal(answer.status, 500, shown(answer));
    assert.deepEqual(answer.json, { error: 'CardAccountExceeded' }, shown(answer));
    assert.equal(await cardCredits(refusing), 50, 'the card is not written');
    assert.equal(await shopCredits(ledger.url), pool, 'nothing reserved');
    assert.equal((await cardAtLedger(cardId)).suspect, true);
    assert.deepEqual(
      { ...(answers[0] as object), at: undefined },
      {
        at: undefined,
        cardId,
        credits: 50,
        suspect: true,
        suspectReason: 'CardAccountExceeded',
      },
    );
  });

  test('when a card the shop loaded is recharged again at once (the first post maybe pending), then it is neither flagged nor refused', async () => {
    const cardId = await forgedCard(refusing, 0);
    for (const credits of [10, 7, 3]) {
      const answer = await recharge(refusing, credits);
      assert.equal(answer.status, 200, shown(answer));
    }
    assert.equal(await cardCredits(refusing), 20);
    assert.equal((await cardAtLedger(cardId)).suspect, false);
  });
});
