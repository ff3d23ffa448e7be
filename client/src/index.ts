// The Card Wallet Worker's client library: docs/integrators.md shows it in use.
export {
  CardWalletClient,
  newIdempotencyKey,
  type CallOptions,
  type CardEventsOptions,
  type CardWalletClientOptions,
  type MoneyCallOptions,
  type RateLimitWait,
  type Recharge,
  type WaitForCardOptions,
} from './client.ts';
export {
  CardWalletError,
  isCardWalletError,
  isMoneyError,
  type ClientErrorCode,
  type ErrorCode,
  type IdempotencyKeyOf,
  type MoneyOperation,
  type OperationId,
} from './errors.ts';
export type { CardEvent, CardWalletEvent, ReaderEvent } from './events.ts';
export {
  API_VERSION,
  operations,
  type Answers,
  type Card,
  type CardId,
  type CustomerInfo,
  type DischargeResult,
  type PersonalizeResult,
  type RateLimitWindow,
  type RechargeResult,
  type SettledMovement,
  type SettleResult,
  type SimulatedCard,
  type SimulatorFaultRequest,
  type SimulatorPlaceRequest,
  type SimulatorRateLimits,
  type SimulatorRateLimitsRequest,
  type SimulatorStatus,
} from './api.ts';
