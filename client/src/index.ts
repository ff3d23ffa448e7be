// The Card Wallet Worker's client library: docs/integrators.md shows it in use.
export {
  CardWalletClient,
  newIdempotencyKey,
  type CallOptions,
  type CardEventsOptions,
  type CardWalletClientOptions,
  type MoneyCallOptions,
  type Recharge,
} from './client.ts';
export {
  CardWalletError,
  isCardWalletError,
  type ClientErrorCode,
  type ErrorCode,
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
  type RechargeResult,
  type SettledMovement,
  type SettleResult,
  type SimulatedCard,
  type SimulatorFaultRequest,
  type SimulatorPlaceRequest,
  type SimulatorStatus,
} from './api.ts';
