import type { FloatSettings } from '../../common/ledger-contract.ts';
import type { LedgerCustomer } from '../../service/cloud/ledger-client.ts';

/** The till, its float ids' prefix and the start of the clock the float unit tests share. */
export const TILL = '00000000-0000-4000-8000-00000000a001';
export const PREFIX = 'a1b2c3d4e5f6';
export const START = Date.parse('2026-11-26T10:00:00.000Z');

/** A float of 200 credits, topped up below 50; offline: 40 a recharge, for an hour. */
export const SETTINGS: FloatSettings = {
  size: 200,
  lowWater: 50,
  offlineCap: 40,
  offlineLimitSeconds: 3600,
  cardTypes: ['classic', 'desfire'],
};

/** The shop with that float, as the ledger's customer answer gives it. */
export const SHOP = {
  customerId: 'shop-1',
  name: 'A',
  credits: 1000,
  creditCost: '0.50',
  float: SETTINGS,
} as unknown as LedgerCustomer;
