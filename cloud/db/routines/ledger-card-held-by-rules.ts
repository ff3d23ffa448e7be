export const ledgerCardHeldByRules = {
  name: 'ledger_card_held_by_rules',
  sql: /* sql */ `
-- Whether a card's own rules refuse a till's movement of it (docs/cloud-api.md, "Lost cards"):
-- the card is blocked (CardBlocked), or a card change waits for it (CardChangeWaiting: the
-- till applies it first; p_applying, the change this movement applies, does not count, nor
-- one a movement is applying already).
-- Answers the refusal, or NULL.
CREATE FUNCTION ledger_card_held_by_rules(p_customer uuid, p_card text, p_applying uuid)
RETURNS ledger_answer LANGUAGE plpgsql STABLE AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and every
-- create calls this (bench/ledger-throughput.ts).
BEGIN
  RETURN COALESCE(
    (SELECT ledger_refusal('CardBlocked',
       format('card %s is blocked since %s: %s', p_card,
              to_char(b.blocked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), b.reason))
     FROM card_blocks b
     WHERE b.customer_id = p_customer AND b.card_id = p_card AND b.lifted_at IS NULL),
    (SELECT ledger_refusal('CardChangeWaiting',
       format('card %s: %s waits for it (%s): apply it first', p_card,
              string_agg(format('%s %s', w.kind, w.id), ', ' ORDER BY w.created_at, w.id),
              string_agg(format('%s credits', w.credits), ', ' ORDER BY w.created_at, w.id)))
     FROM card_changes w
     WHERE w.customer_id = p_customer AND w.card_id = p_card AND w.state = 'waiting'
       AND w.id IS DISTINCT FROM p_applying
       AND NOT EXISTS (SELECT 1 FROM movements x WHERE x.customer_id = p_customer
                       AND x.applies = w.id AND x.state <> 'voided')
     HAVING count(*) > 0));
END
$$;
`,
};
