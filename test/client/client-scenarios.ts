// What the client library must do, against the real service running the card simulator. The
// same scenarios run in Node (client.test.ts) and in Chromium (client-browser.test.ts), on the
// built package: this file is compiled for the browser too, so it uses no Node API and gets the
// client module passed in.
import type * as ClientModule from '../../client/src/index.ts';

export interface World {
  /** The client package as built (client/dist), loaded in this runtime. */
  client: typeof ClientModule;
  baseUrl: string;
  apiKey: string;
  /** A URL where nothing listens. */
  deadUrl: string;
  /** The ledger's movements with a POS reference (`GET /v1/movements?reference=`), newest first. */
  ledgerMovements: (reference: string) => Promise<LedgerRecord[]>;
}

/** What the scenarios read of a ledger movement. */
export interface LedgerRecord {
  id: string;
  state: string;
  reference: string | null;
  credits: number;
}

/**
 * The service's rate limits the scenarios expect (the others roomy): /info's window is short,
 * so a scenario hits it and sees the client wait out Retry-After.
 */
export const CLIENT_TEST_LIMITS = { info: { limit: 3, windowMs: 1_000 } };

type Client = InstanceType<typeof ClientModule.CardWalletClient>;
type Fetch = typeof fetch;

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function same(actual: unknown, expected: unknown, what: string): void {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  check(a === e, `${what}: expected ${e}, got ${a}`);
}

/** Runs `call` and returns what it threw (failing when it did not throw). */
async function thrown(call: () => Promise<unknown>, what: string): Promise<unknown> {
  try {
    const answer = await call();
    throw new Error(`${what}: expected an error, got ${JSON.stringify(answer)}`);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith(`${what}: expected an error`)) {
      throw error;
    }
    return error;
  }
}

/** A money answer's fields of the spec, without its receipt (movementId, occurredAt, reference). */
function specOf<T extends object>(answer: T): Omit<T, 'movementId' | 'occurredAt' | 'reference'> {
  const { movementId, occurredAt, reference, ...spec } = answer as T & Record<string, unknown>;
  void [movementId, occurredAt, reference];
  return spec;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fetch that records every call (URL, method, Idempotency-Key, status) and can be steered. */
function recordingFetch(
  steer?: (url: string, answer: () => Promise<Response>) => Promise<Response>,
) {
  const calls: { path: string; method: string; key: string | null; status: number | null }[] = [];
  const recorded: Fetch = async (input, init) => {
    const url = String(input);
    const call = {
      path: new URL(url).pathname,
      method: init?.method ?? 'GET',
      key: new Headers(init?.headers).get('Idempotency-Key'),
      status: null as number | null,
    };
    calls.push(call);
    const answer = async () => {
      const res = await globalThis.fetch(input, init);
      call.status = res.status;
      return res;
    };
    return steer ? steer(url, answer) : answer();
  };
  return { fetch: recorded, calls, to: (path: string) => calls.filter((c) => c.path === path) };
}

let uids = 0;
/** A UID no earlier scenario in this runtime used. */
function freshUid(): string {
  uids += 1;
  const stamp = (Date.now() % 0x10000).toString(16).padStart(4, '0');
  return `C1${stamp}${uids.toString(16).padStart(2, '0')}`.toUpperCase();
}

/** Places a new card and waits until the service reads it on the reader. */
async function placeCard(wallet: Client, credits?: number): Promise<string> {
  const placed = await wallet.simulator.place({
    uid: freshUid(),
    ...(credits === undefined ? {} : { credits }),
  });
  await cardOnReader(wallet, placed.cardId);
  return placed.cardId;
}

/** Waits (bounded) until the service reads this card on the reader, or no card at all (null). */
async function cardOnReader(wallet: Client, cardId: string | null): Promise<void> {
  let last = '';
  for (let tries = 0; tries < 200; tries += 1) {
    try {
      const card = await wallet.readCard();
      if (card.cardId === cardId) return;
      last = card.cardId;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (cardId === null && code === 'NoCard') return;
      last = String(code);
    }
    await sleep(50);
  }
  throw new Error(`the service never read ${cardId ?? 'an empty reader'} (last: ${last})`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const scenarios: Record<string, (world: World) => Promise<void>> = {
  async 'when a card is read, recharged in credits and in euros and paid out, then each answer is typed and the shop pool moves by what was charged'({
    client,
    baseUrl,
    apiKey,
  }) {
    const wallet = new client.CardWalletClient({ baseUrl, apiKey });
    same(await wallet.ping(), 'pong', 'ping');
    const cardId = await placeCard(wallet);
    check(wallet.simulated === true, 'the service says its cards are simulated');
    same(await wallet.readCard(), { cardId, credits: 0, rechargeAmount: null }, 'readCard');
    const pool = Number((await wallet.info()).credits);
    same(
      specOf(await wallet.rechargeCard({ credits: 10 })),
      { cardId, credits: 10, rechargeAmount: 5 },
      'credits',
    );
    same(
      specOf(await wallet.rechargeCard({ amount: 2.5 })),
      { cardId, credits: 15, rechargeAmount: 2.5 },
      'euros',
    );
    same(Number((await wallet.info()).credits), pool - 15, 'the pool after the recharges');
    same(
      specOf(await wallet.dischargeCard()),
      { cardId, dischargedCredits: 15, dischargedAmount: 7.5 },
      'dischargeCard',
    );
  },

  async "when a mistaken recharge is undone and the undo's answer is lost, then the client sends it again with its key, the card is undone once, and a second undo is a typed AlreadyUndone"({
    client,
    baseUrl,
    apiKey,
  }) {
    let drop = true;
    const recorder = recordingFetch(async (url, answer) => {
      const res = await answer();
      if (drop && url.endsWith('/cards/undo')) {
        // The service did the undo; its answer never arrives.
        drop = false;
        await res.text();
        throw new TypeError('network connection lost');
      }
      return res;
    });
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    const cardId = await placeCard(wallet);
    await wallet.rechargeCard({ credits: 4 });
    const mistaken = await wallet.rechargeCard({ amount: 20 });
    check(typeof mistaken.movementId === 'string', 'the recharge has its movementId');
    const undone = await wallet.undoRecharge(mistaken.movementId as string);
    same(
      specOf(undone),
      { cardId, credits: 4, refundedCredits: 40, refundedAmount: 20, refunds: mistaken.movementId },
      'undoRecharge',
    );
    const sent = recorder.to('/cards/undo');
    same(sent.length, 2, 'the undo sent twice');
    same(sent[0]?.key, sent[1]?.key, 'with one Idempotency-Key');
    same((await wallet.readCard()).credits, 4, 'the card undone once');
    const again = await thrown(() => wallet.undoRecharge(mistaken.movementId as string), 'again');
    check(client.isCardWalletError(again, 'undoRecharge'), `a typed error: ${String(again)}`);
    same([again.status, again.code], [500, 'AlreadyUndone'], 'the second undo');
    check(typeof again.idempotencyKey === 'string', 'the undo error carries its key');
  },

  async 'when money calls are made, then each carries its own Idempotency-Key, a UUID'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    await placeCard(wallet);
    await wallet.rechargeCard({ credits: 1 });
    await wallet.rechargeCard({ credits: 1 });
    await wallet.dischargeCard();
    const keys = [...recorder.to('/writecard'), ...recorder.to('/dischargecard')].map((c) => c.key);
    same(keys.length, 3, 'money calls');
    check(
      keys.every((key) => key !== null && UUID.test(key)),
      `UUID keys: ${keys.join(', ')}`,
    );
    same(new Set(keys).size, 3, 'distinct keys');
    check(
      recorder.calls
        .filter((c) => c.path !== '/writecard' && c.path !== '/dischargecard')
        .every((c) => c.key === null),
      'no key on other calls',
    );
  },

  async 'when the answer to a recharge is lost on the way, then the client sends it again with the same key and the card is credited once'({
    client,
    baseUrl,
    apiKey,
  }) {
    let drop = true;
    const recorder = recordingFetch(async (url, answer) => {
      const res = await answer();
      if (drop && url.endsWith('/writecard')) {
        // The service did the recharge; its answer never arrives.
        drop = false;
        await res.text();
        throw new TypeError('network connection lost');
      }
      return res;
    });
    const wallet = new client.CardWalletClient({
      baseUrl,
      apiKey,
      fetch: recorder.fetch,
      retryDelayMs: 20,
    });
    const cardId = await placeCard(wallet);
    const pool = Number((await wallet.info()).credits);
    same(
      specOf(await wallet.rechargeCard({ credits: 7 })),
      { cardId, credits: 7, rechargeAmount: 3.5 },
      'the answer',
    );
    const sent = recorder.to('/writecard');
    same(
      sent.map((c) => c.status),
      [200, 200],
      'two sends, both done by the service',
    );
    check(sent[0]?.key !== null && sent[0]?.key === sent[1]?.key, 'the same Idempotency-Key');
    same((await wallet.simulator.status()).card, { cardId, credits: 7 }, 'the card, credited once');
    same(Number((await wallet.info()).credits), pool - 7, 'the pool, charged once');
  },

  async 'when the card leaves during the write, then the client does not retry by itself, and the same key settles that movement once the card is back'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    const cardId = await placeCard(wallet);
    await wallet.rechargeCard({ credits: 10 });
    await wallet.simulator.fault('tear-after-commit');
    const before = recorder.to('/writecard').length;
    const error = await thrown(() => wallet.rechargeCard({ credits: 5 }), 'torn recharge');
    check(client.isCardWalletError(error, 'rechargeCard'), `a CardWalletError: ${String(error)}`);
    same([error.status, error.code], [500, 'CardRemovedDuringWrite'], 'the error');
    same(recorder.to('/writecard').length - before, 1, 'sent once');
    check(error.idempotencyKey && UUID.test(error.idempotencyKey), 'the key to retry with');

    await wallet.simulator.putBack(cardId);
    await cardOnReader(wallet, cardId);
    same(
      specOf(await wallet.rechargeCard({ credits: 5 }, { idempotencyKey: error.idempotencyKey })),
      { cardId, credits: 15, rechargeAmount: 2.5 },
      'the settled answer',
    );
    same((await wallet.simulator.status()).card, { cardId, credits: 15 }, 'credited once');
  },

  async 'when the card leaves during the write, then wallet.retry(error) settles that same movement: the card and the pool move once, whichever side of the commit it left'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    const cardId = await placeCard(wallet);
    for (const [fault, landed] of [
      ['tear-after-commit', 10],
      ['tear-before-commit', 0],
    ] as const) {
      const before = (await wallet.simulator.status()).card?.credits ?? 0;
      const pool = Number((await wallet.info()).credits);
      await wallet.simulator.fault(fault);
      const error = await thrown(
        () => wallet.rechargeCard({ credits: 10 }, { reference: `sale-${fault}` }),
        fault,
      );
      check(client.isCardWalletError(error, 'rechargeCard'), `a CardWalletError: ${String(error)}`);
      same(error.code, 'CardRemovedDuringWrite', `${fault}: the error`);
      same((await wallet.simulator.status()).card, null, `${fault}: the card left`);
      same(
        (await wallet.simulator.putBack(cardId)).credits,
        before + landed,
        `${fault}: the card as it left`,
      );
      await cardOnReader(wallet, cardId);
      const sent = recorder.to('/writecard').length;
      same(
        specOf(await wallet.retry(error)),
        { cardId, credits: before + 10, rechargeAmount: 5 },
        `${fault}: the retried answer`,
      );
      const retried = recorder.to('/writecard').slice(sent);
      same(
        retried.map((c) => c.key),
        [error.idempotencyKey],
        `${fault}: one send, same key`,
      );
      same((await wallet.simulator.status()).card?.credits, before + 10, `${fault}: credited once`);
      same(Number((await wallet.info()).credits), pool - 10, `${fault}: the pool, charged once`);
    }
  },

  async 'when a money call is given an undefined idempotencyKey, or retry the error of another call, then it is refused with a TypeError and nothing is sent'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    const lost: { idempotencyKey?: string } = {};
    const options = { idempotencyKey: lost.idempotencyKey } as { idempotencyKey: string };
    const recharge = await thrown(() => wallet.rechargeCard({ credits: 1 }, options), 'recharge');
    check(
      recharge instanceof TypeError && /wallet\.retry\(error\)/.test(recharge.message),
      `a TypeError naming retry: ${String(recharge)}`,
    );
    const discharge = await thrown(() => wallet.dischargeCard(options), 'discharge');
    check(discharge instanceof TypeError, `a TypeError: ${String(discharge)}`);
    const badReference = await thrown(
      () => wallet.rechargeCard({ credits: 1 }, { reference: ' sale 1' }),
      'reference',
    );
    check(badReference instanceof TypeError, `a TypeError: ${String(badReference)}`);
    await wallet.simulator.takeAway();
    await cardOnReader(wallet, null);
    const read = await thrown(() => wallet.readCard(), 'readCard');
    const retried = await thrown(
      () => wallet.retry(read as Parameters<typeof wallet.retry>[0]),
      'retry of a read',
    );
    check(retried instanceof TypeError, `a TypeError: ${String(retried)}`);
    same(recorder.to('/writecard').length + recorder.to('/dischargecard').length, 0, 'sent');
  },

  async 'when recharges carry a POS reference and one is torn and retried through retry(error), then each answer is a receipt, and the worker and the ledger find exactly one movement per reference'({
    client,
    baseUrl,
    apiKey,
    ledgerMovements,
  }) {
    const wallet = new client.CardWalletClient({ baseUrl, apiKey });
    const cardId = await placeCard(wallet);
    const sale = `sale ${freshUid()}`;
    const done = await wallet.rechargeCard({ credits: 10 }, { reference: sale });
    same(
      [done.cardId, done.credits, done.rechargeAmount, done.reference],
      [cardId, 10, 5, sale],
      'the answer',
    );
    check(typeof done.movementId === 'string' && UUID.test(done.movementId), 'a movement id');
    check(Date.parse(done.occurredAt ?? '') > 0, `occurredAt: ${done.occurredAt}`);

    const torn = `sale ${freshUid()}`;
    await wallet.simulator.fault('tear-after-commit');
    const pulled = await thrown(
      () => wallet.rechargeCard({ credits: 4 }, { reference: torn }),
      'torn',
    );
    check(client.isCardWalletError(pulled, 'rechargeCard'), String(pulled));
    same(pulled.code, 'CardRemovedDuringWrite', 'the card left mid-write');
    // The same key with another reference is another request.
    const reused = await thrown(
      () =>
        wallet.rechargeCard(
          { credits: 4 },
          { idempotencyKey: pulled.idempotencyKey, reference: 'another sale' },
        ),
      'the key with another reference',
    );
    check(client.isCardWalletError(reused, 'rechargeCard'), String(reused));
    same([reused.status, reused.code], [422, 'IdempotencyKeyReused'], 'another reference');
    await wallet.simulator.putBack(cardId);
    await cardOnReader(wallet, cardId);
    const retried = await wallet.retry(pulled);
    same([retried.credits, retried.reference], [14, torn], 'the retried answer');

    for (const [reference, answer] of [
      [sale, done],
      [torn, retried],
    ] as const) {
      const atWorker = await wallet.movements({ reference });
      same(
        atWorker.map((m) => [m.movementId, m.kind, m.cardId, m.reference, m.tillId !== null]),
        [[answer.movementId, 'recharge', cardId, reference, true]],
        `${reference}: one movement at the worker`,
      );
      const one = await wallet.movement(answer.movementId as string);
      same([one.movementId, one.reference], [answer.movementId, reference], 'by id');
      let atLedger: LedgerRecord[] = [];
      for (let tries = 0; tries < 200; tries += 1) {
        atLedger = await ledgerMovements(reference);
        if (atLedger[0]?.state === 'posted') break;
        await sleep(50);
      }
      same(
        atLedger.map((m) => [m.id, m.state, m.reference]),
        [[answer.movementId, 'posted', reference]],
        `${reference}: one movement at the ledger`,
      );
      const confirmed = await wallet.movement(answer.movementId as string);
      same([confirmed.state, confirmed.atLedger], ['posted', true], 'the worker says posted');
    }
    same((await wallet.simulator.status()).card?.credits, 14, 'the card, credited once each');
  },

  async 'when a second call with the same key comes while the first runs, then it waits for IdempotencyKeyInUse to pass and gets the same answer'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({
      baseUrl,
      apiKey,
      fetch: recorder.fetch,
      retries: 12,
      retryDelayMs: 50,
    });
    const cardId = await placeCard(wallet);
    await wallet.simulator.fault('slow', { delayMs: 150 });
    try {
      const idempotencyKey = client.newIdempotencyKey();
      const [first, second] = await Promise.all([
        wallet.rechargeCard({ credits: 3 }, { idempotencyKey }),
        sleep(50).then(() => wallet.rechargeCard({ credits: 3 }, { idempotencyKey })),
      ]);
      same(specOf(first), { cardId, credits: 3, rechargeAmount: 1.5 }, 'the first answer');
      same(second, first, 'the second answer');
      check(
        recorder.to('/writecard').some((c) => c.status === 409),
        `a 409 was waited out: ${JSON.stringify(recorder.to('/writecard'))}`,
      );
    } finally {
      await wallet.simulator.fault('none');
    }
    same((await wallet.simulator.status()).card, { cardId, credits: 3 }, 'credited once');
  },

  async 'when a call is refused for its body, then the error has the operation’s code, the status and a detail naming the rule'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    await placeCard(wallet, 0);
    const error = await thrown(
      () => wallet.rechargeCard({ amount: 0.30000000000000004 }),
      'a binary fraction',
    );
    check(client.isCardWalletError(error, 'rechargeCard'), String(error));
    same(
      [error.status, error.code, error.detail],
      [
        400,
        'Invalid credits or amount value',
        'amount: at most 2 decimals (got 0.30000000000000004)',
      ],
      'the error',
    );
    same(recorder.to('/writecard').length, 1, 'a refusal is not retried');
    check(!client.isCardWalletError(error, 'dischargeCard'), 'narrowed to its operation only');
  },

  async 'when the rate limit is hit, then the client waits out a short Retry-After, and throws TooManyRequests when it is longer than allowed'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const patient = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    for (let i = 0; i < 6; i += 1) await patient.info();
    check(
      recorder.to('/info').some((c) => c.status === 429),
      `the limit was hit: ${JSON.stringify(recorder.to('/info').map((c) => c.status))}`,
    );
    const hasty = new client.CardWalletClient({ baseUrl, apiKey, maxRetryAfterSeconds: 0 });
    let error: unknown;
    for (let i = 0; i < 10 && !error; i += 1)
      error = await hasty.info().then(
        () => undefined,
        (e: unknown) => e,
      );
    check(client.isCardWalletError(error, 'info'), `a CardWalletError: ${String(error)}`);
    same([error.status, error.code], [429, 'TooManyRequests'], 'the error');
    check((error.retryAfterSeconds ?? 0) >= 1, `Retry-After: ${error.retryAfterSeconds}`);
  },

  async 'when the simulator sets a small read limit, then the client reports each wait with its Retry-After before waiting it out, and a call that asks to fail fast throws TooManyRequests at once'({
    client,
    baseUrl,
    apiKey,
  }) {
    const waits: { operation: string; seconds: number; until: number }[] = [];
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({
      baseUrl,
      apiKey,
      fetch: recorder.fetch,
      onRateLimitWait: (wait) =>
        waits.push({ operation: wait.operation, seconds: wait.seconds, until: +wait.until }),
    });
    const cardId = await placeCard(wallet, 3);
    const set = await wallet.simulator.rateLimits({ readcard: { limit: 2, windowSeconds: 2 } });
    same(set.readcard, { limit: 2, windowSeconds: 2 }, 'the window set');
    try {
      const started = Date.now();
      const earlier = recorder.to('/readcard').length;
      for (let i = 0; i < 3; i += 1) same((await wallet.readCard()).cardId, cardId, `read ${i}`);
      same(
        recorder
          .to('/readcard')
          .slice(earlier)
          .map((c) => c.status),
        [200, 200, 429, 200],
        'the third read waited once',
      );
      same(
        waits.map((w) => [w.operation, w.seconds >= 1 && w.seconds <= 2]),
        [['readCard', true]],
        `the wait reported: ${JSON.stringify(waits)}`,
      );
      check((waits[0]?.until ?? 0) > started, 'until is ahead of the call');

      const hasty = await thrown(async () => {
        for (let i = 0; i < 3; i += 1) await wallet.readCard({ maxRetryAfterSeconds: 0 });
      }, 'fail fast');
      check(client.isCardWalletError(hasty, 'readCard'), String(hasty));
      same([hasty.status, hasty.code], [429, 'TooManyRequests'], 'fail fast');
      check((hasty.retryAfterSeconds ?? 0) >= 1, `Retry-After: ${hasty.retryAfterSeconds}`);
      same(waits.length, 1, 'no wait reported for a call that fails fast');
    } finally {
      const back = await wallet.simulator.rateLimits({ readcard: null });
      check(back.readcard.limit > 2, `set back: ${JSON.stringify(back.readcard)}`);
    }
  },

  async 'when a POS waits for a card, then waitForCard resolves once the card is placed, reading it once, on the stream it shares with cardEvents'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    await wallet.simulator.takeAway();
    await cardOnReader(wallet, null);
    const reads = recorder.to('/readcard').length;
    const stop = new AbortController();
    const seen: string[] = [];
    const listening = (async () => {
      for await (const event of wallet.cardEvents({ signal: stop.signal })) {
        if (event.type === 'card') seen.push(`${event.data.type} ${event.data.cardId}`);
      }
    })();
    const waiting = wallet.waitForCard({ timeout: 20_000 });
    // Both are listening before the card comes: the reader's state came on the one stream.
    for (let i = 0; i < 100 && recorder.to('/events').length === 0; i += 1) await sleep(10);
    await sleep(100);
    const placed = await wallet.simulator.place({ uid: freshUid(), credits: 12 });
    same(await waiting, { cardId: placed.cardId, credits: 12, rechargeAmount: null }, 'the card');
    same(recorder.to('/readcard').length - reads, 1, 'read once');
    for (let i = 0; i < 100 && seen.length === 0; i += 1) await sleep(10);
    same(seen, [`present ${placed.cardId}`], 'cardEvents saw the same tap');
    same(recorder.to('/events').length, 1, 'one stream for both');
    stop.abort();
    await listening;

    same(
      await wallet.waitForCard(),
      { cardId: placed.cardId, credits: 12, rechargeAmount: null },
      'a card already on the reader',
    );
  },

  async 'when waitForCard is cancelled or times out, then it rejects with the signal’s reason or a TimeoutError, and the stream is closed'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({ baseUrl, apiKey, fetch: recorder.fetch });
    await wallet.simulator.takeAway();
    await cardOnReader(wallet, null);
    const reads = recorder.to('/readcard').length;
    const stop = new AbortController();
    const cancelled = wallet.waitForCard({ signal: stop.signal });
    await sleep(50);
    stop.abort(new Error('the cashier cancelled'));
    const reason = await thrown(() => cancelled, 'cancelled');
    same((reason as Error).message, 'the cashier cancelled', 'the reason');
    const late = await thrown(() => wallet.waitForCard({ timeout: 100 }), 'timeout');
    same((late as Error).name, 'TimeoutError', `a TimeoutError: ${String(late)}`);
    same(recorder.to('/readcard').length - reads, 0, 'no read without a card');
    // The next wait opens a stream of its own: the earlier ones were closed.
    const before = recorder.to('/events').length;
    const placed = await wallet.simulator.place({ uid: freshUid() });
    same((await wallet.waitForCard({ timeout: 20_000 })).cardId, placed.cardId, 'the next');
    same(recorder.to('/events').length - before, 1, 'a new stream');
  },

  async 'when nothing listens, then the client tries again and then throws ServiceUnreachable; a recharge keeps one key through its attempts'({
    client,
    deadUrl,
    apiKey,
  }) {
    const recorder = recordingFetch();
    const wallet = new client.CardWalletClient({
      baseUrl: deadUrl,
      apiKey,
      fetch: recorder.fetch,
      retries: 2,
      retryDelayMs: 10,
    });
    const read = await thrown(() => wallet.readCard(), 'readCard');
    check(client.isCardWalletError(read, 'readCard'), String(read));
    same([read.status, read.code], [0, 'ServiceUnreachable'], 'readCard');
    same(recorder.to('/readcard').length, 3, 'three attempts');
    const recharge = await thrown(() => wallet.rechargeCard({ credits: 1 }), 'rechargeCard');
    check(client.isCardWalletError(recharge, 'rechargeCard'), String(recharge));
    same(recharge.code, 'ServiceUnreachable', 'rechargeCard');
    same(
      recorder.to('/writecard').map((c) => c.key),
      [recharge.idempotencyKey, recharge.idempotencyKey, recharge.idempotencyKey],
      'one key for every attempt, given with the error',
    );
  },

  async 'when placing a simulated card gets no answer, then it is not sent again (a second card would not be the one asked for)'({
    client,
    baseUrl,
    apiKey,
  }) {
    const recorder = recordingFetch(async (url, answer) => {
      const res = await answer();
      if (url.endsWith('/simulator/place')) throw new TypeError('network connection lost');
      return res;
    });
    const wallet = new client.CardWalletClient({
      baseUrl,
      apiKey,
      fetch: recorder.fetch,
      retryDelayMs: 10,
    });
    const before = (await wallet.simulator.status()).cards.length;
    const error = await thrown(() => wallet.simulator.place({ credits: 1 }), 'place');
    check(client.isCardWalletError(error, 'simulatorPlace'), String(error));
    same(error.code, 'ServiceUnreachable', 'the error');
    same(recorder.to('/simulator/place').length, 1, 'sent once');
    same((await wallet.simulator.status()).cards.length, before + 1, 'one card placed');
  },

  async 'when the simulator is driven, then each control answers as documented and a fault shows in the card calls'({
    client,
    baseUrl,
    apiKey,
  }) {
    const wallet = new client.CardWalletClient({ baseUrl, apiKey });
    const cardId = await placeCard(wallet, 20);
    same((await wallet.simulator.status()).card, { cardId, credits: 20 }, 'status');
    await wallet.simulator.fault('wrong-key');
    const refused = await thrown(() => wallet.readCard(), 'wrong key');
    check(client.isCardWalletError(refused, 'readCard'), String(refused));
    same([refused.status, refused.code], [400, 'AuthenticationFail'], 'the card does not open');
    same((await wallet.simulator.takeAway()).card, null, 'take-away');
    await cardOnReader(wallet, null);
    const unknown = await thrown(() => wallet.simulator.putBack('DEADBEEF'), 'put-back');
    check(client.isCardWalletError(unknown, 'simulatorPutBack'), String(unknown));
    same([unknown.status, unknown.code], [404, 'UnknownSimulatedCard'], 'an unknown card');
  },

  async 'when card events are read, then they come as an iterator, and after a drop the stream resumes with Last-Event-ID, missing and repeating nothing'({
    client,
    baseUrl,
    apiKey,
  }) {
    const lastIds: (string | null)[] = [];
    let cut: (() => void) | undefined;
    const fetchWithCut: Fetch = async (input, init) => {
      if (!String(input).endsWith('/events')) return globalThis.fetch(input, init);
      lastIds.push(new Headers(init?.headers).get('Last-Event-ID'));
      const res = await globalThis.fetch(input, init);
      let controller: TransformStreamDefaultController<Uint8Array> | undefined;
      const cutter = new TransformStream<Uint8Array, Uint8Array>({
        start: (c) => void (controller = c),
      });
      cut = () => controller?.error(new TypeError('connection lost'));
      return new Response(res.body?.pipeThrough(cutter), {
        status: res.status,
        headers: res.headers,
      });
    };
    const wallet = new client.CardWalletClient({
      baseUrl,
      apiKey,
      fetch: fetchWithCut,
      retryDelayMs: 20,
    });
    await wallet.simulator.takeAway();
    await cardOnReader(wallet, null);
    const stop = new AbortController();
    const reconnects: string[] = [];
    const stream = wallet.cardEvents({
      signal: stop.signal,
      onReconnect: (problem) => reconnects.push(problem.code),
    });
    const events = stream[Symbol.asyncIterator]();
    const next = async () => {
      const { value, done } = await events.next();
      check(!done && value, 'an event');
      return value;
    };
    const first = await next();
    same(
      [first.type, first.type === 'reader' && first.data.state],
      ['reader', 'ready'],
      'the state first',
    );

    const cardId = await placeCard(wallet);
    let present = await next();
    while (present.type !== 'card') present = await next();
    same(present.data.type === 'present' && present.data.cardId, cardId, 'the card came');

    cut?.();
    await wallet.simulator.takeAway();
    await cardOnReader(wallet, null);
    const removed = await next();
    same(
      [
        removed.type,
        removed.type === 'card' && removed.data.type,
        removed.type === 'card' && removed.data.cardId,
      ],
      ['card', 'removed', cardId],
      'the event missed during the drop, once',
    );
    check(Number(removed.id) > Number(present.id), `ids go on: ${present.id}, ${removed.id}`);
    same(lastIds, [null, present.id], 'the reconnection said what it had seen');
    same(reconnects, ['ServiceUnreachable'], 'the drop was reported once');

    stop.abort();
    same((await events.next()).done, true, 'the iterator ends when aborted');
  },

  async 'when nothing listens, then the event iterator keeps trying, says why each time, and ends when aborted'({
    client,
    deadUrl,
    apiKey,
  }) {
    const wallet = new client.CardWalletClient({ baseUrl: deadUrl, apiKey, retryDelayMs: 10 });
    const stop = new AbortController();
    const problems: unknown[] = [];
    const reading = (async () => {
      for await (const event of wallet.cardEvents({
        signal: stop.signal,
        onReconnect: (problem) => {
          problems.push([problem.status, problem.code]);
          if (problems.length === 3) stop.abort();
        },
      })) {
        throw new Error(`an event from nowhere: ${JSON.stringify(event)}`);
      }
    })();
    await reading;
    same(
      problems,
      [
        [0, 'ServiceUnreachable'],
        [0, 'ServiceUnreachable'],
        [0, 'ServiceUnreachable'],
      ],
      'each failed attempt',
    );
  },

  async 'when the key is wrong, then the event stream ends with a typed 401 instead of retrying'({
    client,
    baseUrl,
  }) {
    const wallet = new client.CardWalletClient({ baseUrl, apiKey: 'not-the-key-0123456789' });
    const error = await thrown(
      () => wallet.cardEvents()[Symbol.asyncIterator]().next(),
      'cardEvents',
    );
    check(client.isCardWalletError(error, 'cardEvents'), String(error));
    same([error.status, error.code], [401, 'Unauthorized: invalid api key'], 'the error');
  },
};
