export const ledgerAnswer = {
  name: 'ledger_answer',
  kind: 'type',
  sql: /* sql */ `
-- What a contract call answers: a refusal (error, detail) or the movement, with the pool.
CREATE TYPE ledger_answer AS (
  error text,
  detail text,
  replayed boolean,
  customer_credits bigint,
  id uuid,
  customer_id uuid,
  kind text,
  card_id text,
  state text,
  credits integer,
  credit_cost numeric,
  amount numeric,
  requested_amount numeric,
  created_at timestamptz,
  resolved_at timestamptz,
  till_id uuid,
  card_before text,
  compensates uuid,
  resolved_by_till uuid,
  evidence text,
  awaits_card boolean,
  card_evidence text,
  occurred_at timestamptz,
  float_id uuid,
  reported_as text,
  report_flags text[],
  reference text
);
`,
} as const;
