// Type tests of the client's money calls (checked by `npm run typecheck`, with the settings most
// projects have: exactOptionalPropertyTypes off). Each `@ts-expect-error` is a call that must
// not compile: if it ever does, tsc fails on the unused directive.
import { expectTypeOf } from 'expect-type';
import {
  isCardWalletError,
  isMoneyError,
  type CardWalletClient,
  type DischargeResult,
  type RechargeResult,
  type UndoResult,
} from '../../client/src/index.ts';

declare const wallet: CardWalletClient;
declare const error: unknown;
declare const keptKey: string | undefined;

if (isCardWalletError(error, 'rechargeCard')) {
  // A recharge's error carries its key, typed as present: the safe retries compile.
  expectTypeOf(error.idempotencyKey).toEqualTypeOf<string>();
  expectTypeOf(wallet.retry(error)).resolves.toEqualTypeOf<RechargeResult>();
  void wallet.rechargeCard({ credits: 10 }, { idempotencyKey: error.idempotencyKey });
}

if (isCardWalletError(error, 'dischargeCard')) {
  expectTypeOf(error.idempotencyKey).toEqualTypeOf<string>();
  expectTypeOf(wallet.retry(error)).resolves.toEqualTypeOf<DischargeResult>();
}

if (isMoneyError(error)) {
  expectTypeOf(error.idempotencyKey).toEqualTypeOf<string>();
  expectTypeOf(wallet.retry(error)).resolves.toEqualTypeOf<
    RechargeResult | DischargeResult | UndoResult
  >();
}

if (isCardWalletError(error, 'undoRecharge')) {
  // An undo is a movement too: its error carries its key, and its codes are the undo's own.
  expectTypeOf(error.idempotencyKey).toEqualTypeOf<string>();
  expectTypeOf(wallet.retry(error)).resolves.toEqualTypeOf<UndoResult>();
  expectTypeOf<'UndoWindowPassed'>().toMatchTypeOf<typeof error.code>();
  void wallet.undoRecharge('6f1c0d2e-0000-4000-8000-000000000000', {
    idempotencyKey: error.idempotencyKey,
  });
  // @ts-expect-error an undo takes no POS reference (the recharge it names is its reference)
  void wallet.undoRecharge('6f1c0d2e-0000-4000-8000-000000000000', { reference: 'sale-1' });
}

if (isCardWalletError(error)) {
  // Not narrowed to an operation: the key may be absent.
  expectTypeOf(error.idempotencyKey).toEqualTypeOf<string | undefined>();
  // @ts-expect-error the unsafe retry: an absent key would make a second movement
  void wallet.rechargeCard({ credits: 10 }, { idempotencyKey: error.idempotencyKey });
  // @ts-expect-error the same for a payout
  void wallet.dischargeCard({ idempotencyKey: error.idempotencyKey });
  // @ts-expect-error retry takes only a recharge's or discharge's error, narrowed
  void wallet.retry(error);
}

if (isCardWalletError(error, 'readCard')) {
  expectTypeOf(error.idempotencyKey).toEqualTypeOf<undefined>();
  // @ts-expect-error a read moved nothing: there is no movement to retry
  void wallet.retry(error);
}

// @ts-expect-error a key kept by the POS that may be undefined
void wallet.rechargeCard({ amount: 5 }, { idempotencyKey: keptKey });
if (keptKey !== undefined) void wallet.rechargeCard({ amount: 5 }, { idempotencyKey: keptKey });
// A new movement is a call without a key.
void wallet.rechargeCard({ credits: 1 }, { reference: 'sale-1' });
void wallet.dischargeCard();
