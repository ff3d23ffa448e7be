export const ledgerCompensateCardMovement = {
  name: 'ledger_compensate_card_movement',
  sql: /* sql */ `
-- POST /v1/movements of a refund, correction, replacement or block-clear with compensates
-- (docs/cloud-api.md, "Compensations of a card's own movements"): a till read the card and it
-- disagrees with the ledger's final word on p_compensates, a movement of the same kind, shop
-- and card. Its credits, bonus and euros are that movement's. No card write goes with it.
--   that movement voided, its card holds it: the compensation does what it would have done
--     (a refund or correction takes the credits off the account and returns them to the pool
--     when posted; a pickup takes its replacement, still waiting, onto the card's account; a
--     block-clear records the card emptied)
--   that movement posted, its card does not hold it (undoes): the compensation takes back what
--     it did (a refund or correction reserves the credits from the pool and puts them back on
--     the account when posted; a pickup takes them off the card's account and, posted, makes
--     them wait again as a new replacement; a block-clear records the card not emptied)
-- Exactly once per movement, as any compensation (MovementCompensated). One the ledger cannot
-- make (NoCredits, CardAccountExceeded, CardChangeTaken) is refused and flags the card
-- compensation-refused; either way the card no longer waits for a till (ledger_card_read_for).
-- Locks: the id's, the compensated movement, the customer, the card change, the card's account.
CREATE FUNCTION ledger_compensate_card_movement(
  p_customer uuid, p_id uuid, p_kind text, p_card text, p_credits bigint, p_till uuid,
  p_compensates uuid, p_key_hash text DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql AS $$
DECLARE
  c customers%ROWTYPE;
  m movements%ROWTYPE;
  o movements%ROWTYPE;
  a card_accounts%ROWTYPE;
  v_voided ledger_answer;
  v_other record;
  v_undo boolean;
  v_refused text;
  v_detail text;
  v_pool bigint;
BEGIN
  IF NOT ledger_key_holds(p_key_hash, p_customer) THEN
    RETURN ledger_refusal('InvalidApiKey');
  END IF;
  PERFORM pg_advisory_xact_lock(2, hashtext(p_id::text));
  SELECT * INTO o FROM movements WHERE customer_id = p_customer AND id = p_compensates
  FOR NO KEY UPDATE;
  SELECT * INTO c FROM customers WHERE id = p_customer FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN ledger_refusal('CustomerNotFound');
  END IF;
  SELECT * INTO m FROM movements WHERE id = p_id;
  IF FOUND THEN
    IF m.customer_id = p_customer AND m.kind = p_kind AND m.card_id = p_card
       AND m.till_id IS NOT DISTINCT FROM p_till AND m.compensates = p_compensates THEN
      RETURN ledger_answer_of(m, true, c.credits);
    END IF;
    RETURN ledger_refusal('MovementIdConflict');
  END IF;
  v_voided := ledger_tombstone_refusal(p_id, p_customer);
  IF v_voided.error IS NOT NULL THEN
    RETURN v_voided;
  END IF;
  IF o.id IS NULL OR o.card_id <> p_card OR o.state = 'pending' OR o.compensates IS NOT NULL THEN
    RETURN ledger_refusal('InvalidCompensation',
      format('compensates: %s is no resolved movement of this shop and card', p_compensates));
  END IF;
  IF o.kind <> p_kind THEN
    RETURN ledger_refusal('InvalidCompensation',
      format('compensates: %s is a %s: its compensation is a %s too', o.id, o.kind, o.kind));
  END IF;
  IF p_credits IS NOT NULL AND p_credits <> o.credits THEN
    RETURN ledger_refusal('InvalidCompensation',
      format('credits: %s moved %s credits, its compensation moves as many', o.id, o.credits));
  END IF;
  SELECT id INTO v_other FROM movements WHERE customer_id = p_customer AND compensates = o.id;
  IF FOUND THEN
    RETURN ledger_refusal('MovementCompensated',
      format('movement %s is compensated by %s already', o.id, v_other.id));
  END IF;
  v_undo := o.state = 'posted';

  IF p_kind IN ('refund', 'correction') AND v_undo AND c.credits < o.credits THEN
    v_refused := 'NoCredits';
  END IF;
  IF (p_kind IN ('refund', 'correction') AND NOT v_undo) OR (p_kind = 'replacement' AND v_undo)
  THEN
    SELECT * INTO a FROM card_accounts WHERE customer_id = p_customer AND card_id = p_card
    FOR NO KEY UPDATE;
    IF COALESCE(a.bonus_credits, 0) < o.bonus_credits
       OR COALESCE(a.credits - a.bonus_credits, 0) < o.credits - o.bonus_credits
       OR COALESCE(a.paid_amount, 0) < o.paid_amount THEN
      v_refused := 'CardAccountExceeded';
      v_detail := format('card %s''s account holds less than %s took', p_card, o.id);
    END IF;
  END IF;
  IF o.applies IS NOT NULL AND NOT v_undo THEN
    -- Done after all, it applies its card change: only while that still waits for the card.
    SELECT id, state INTO v_other FROM movements
    WHERE customer_id = p_customer AND applies = o.applies AND state <> 'voided';
    IF FOUND OR NOT EXISTS (SELECT 1 FROM card_changes WHERE customer_id = p_customer
                            AND id = o.applies AND state = 'waiting') THEN
      v_refused := 'CardChangeTaken';
      v_detail := format('card change %s no longer waits for card %s', o.applies, p_card);
    END IF;
  END IF;
  IF v_refused IS NOT NULL THEN
    PERFORM ledger_flag_card(p_customer, p_card, 'compensation-refused', p_id, o.credits,
      COALESCE((SELECT credits FROM card_accounts
                WHERE customer_id = p_customer AND card_id = p_card), 0));
    PERFORM ledger_card_read_for(p_customer, o.id);
    RETURN ledger_refusal(v_refused, v_detail);
  END IF;

  INSERT INTO movements (id, customer_id, kind, card_id, credits, credit_cost, till_id,
                         compensates, amount, bonus_credits, paid_amount, refunds, applies,
                         undoes)
  VALUES (p_id, p_customer, p_kind, p_card, o.credits, o.credit_cost, p_till, o.id, o.amount,
          o.bonus_credits, o.paid_amount, CASE WHEN NOT v_undo THEN o.refunds END,
          CASE WHEN NOT v_undo THEN o.applies END, v_undo)
  RETURNING * INTO m;
  IF p_till IS NOT NULL THEN
    INSERT INTO tills (customer_id, id) VALUES (p_customer, p_till) ON CONFLICT DO NOTHING;
  END IF;
  -- The card was read and the books are set right: it waits no more.
  PERFORM ledger_card_read_for(p_customer, o.id);
  IF p_kind IN ('refund', 'correction') AND v_undo THEN
    v_pool := ledger_change_balance(p_customer, -o.credits, 'reserve', p_id);
  ELSIF (p_kind IN ('refund', 'correction') AND NOT v_undo) OR (p_kind = 'replacement' AND v_undo)
  THEN
    PERFORM ledger_card_account_change(p_customer, p_card, -o.credits, -o.bonus_credits,
                                       -o.paid_amount);
  END IF;
  RETURN ledger_answer_of(m, false, COALESCE(v_pool, c.credits));
END
$$;
`,
};
