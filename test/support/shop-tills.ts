// Three tills of one shop on the card simulator, on one real ledger, over real HTTP: for what
// one till does to a card and the others must see (blocks, replacements, corrections).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CARD_LIST_FILE } from '../../service/cloud/card-list-watcher.ts';
import { waitUntil } from './card-rig.ts';
import { apiCaller, shown, type HttpResponse } from './http-client.ts';
import { startSimulatorShop } from './simulator-shop.ts';
import { TEST_API_KEY, type TestLedger } from './test-ledger.ts';
import type { TestService } from './test-service.ts';

export interface ShopTills {
  ledger: TestLedger;
  /** Polls the shop's card list every second. */
  tillA: TestService;
  /** Polls the shop's card list every second. */
  tillB: TestService;
  /** Polls once at start, then only every minute: it learns a block or a change from the ledger's refusal. */
  slowTill: TestService;
  close(): Promise<void>;
}

export async function startShopTills(): Promise<ShopTills> {
  const shop = await startSimulatorShop({
    tills: {
      tillA: { config: { cardListEveryMs: 1_000 } },
      tillB: { config: { cardListEveryMs: 1_000 } },
      slowTill: { config: { cardListEveryMs: 60_000 } },
    },
  });
  return { ledger: shop.ledger, ...shop.tills, close: shop.close };
}

/** A call to a till's API with the shop's key (a JSON body, extra headers on top). */
export const callTill = (
  till: TestService,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => apiCaller(() => till.url, TEST_API_KEY)(method, path, body, headers);

/** A call to the ledger's API with the shop's key. */
export async function callLedger(
  ledger: TestLedger,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpResponse> {
  const res = await fetch(`${ledger.url}${path}`, {
    method,
    headers: {
      'X-Api-Key': TEST_API_KEY,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: {}, text, json: text ? JSON.parse(text) : undefined };
}

/** Places a simulated card (holding `credits`) on the till's reader; its id once the till sees it. */
export async function placeCard(till: TestService, uid: string, credits = 0): Promise<string> {
  const placed = await callTill(till, 'POST', '/simulator/place', {
    uid,
    ...(credits > 0 ? { credits } : {}),
  });
  assert.equal(placed.status, 200, shown(placed));
  const { cardId } = placed.json as { cardId: string };
  await waitUntil(() => till.readers.status.card?.cardId === cardId, 5_000, 'card seen');
  return cardId;
}

/** What the simulated card on the till's reader holds (read by the simulator, not the API). */
export async function creditsOnCard(till: TestService): Promise<number | null> {
  const status = await callTill(till, 'GET', '/simulator');
  return (status.json as { card: { credits: number | null } }).card.credits;
}

/** Waits until the till's card list (kept in its data folder) names the change. */
export async function listKnows(till: TestService, changeId: string): Promise<void> {
  const file = join(till.dataDir, CARD_LIST_FILE);
  await waitUntil(
    () => existsSync(file) && readFileSync(file, 'utf8').includes(changeId),
    10_000,
    'the till lists the change',
  );
}
