export const ledgerReportFloatRun = {
  name: 'ledger_report_float_run',
  sql: /* sql */ `
-- Movements p_from to p_to (1-based) of a float report, every one new: a first report of an id
-- its float handed out, by its till, an operator (p_reporter NULL) or a finder (ledger_report_
-- float_movements sorts them out, and holds their floats' locks). Recorded together, a few
-- statements for the whole run rather than ten per movement (bench/float-reports.ts), and
-- answered each as ledger_report_float_movement would in its place, in the order given: a
-- float's balance runs through the run in that order (what one takes beyond the float, or
-- back from a closed float's write-off, depends on those before it), each movement's float
-- entries are those ledger_float_draw makes, card accounts grow once per card (in card order,
-- so two reports of one card take its row's lock in one order) and the day's takings once per
-- day (the statement trigger of ledger_count_posted_rows).
CREATE FUNCTION ledger_report_float_run(p_customer uuid, p_reporter uuid, p_items jsonb,
                                        p_from integer, p_to integer, p_revoked boolean)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_results jsonb;
BEGIN
  WITH item AS MATERIALIZED (
    SELECT e.ord, (e.item->>'id')::uuid AS id, e.item->>'cardId' AS card_id,
           (e.item->>'credits')::bigint AS credits,
           COALESCE((e.item->>'bonusCredits')::bigint, 0) AS bonus,
           CASE e.item->>'card' WHEN 'written' THEN 'posted' WHEN 'not-written' THEN 'voided'
                                ELSE 'pending' END AS state,
           COALESCE((e.item->>'found')::boolean, false) AS found,
           (e.item->>'occurredAt')::timestamptz AS occurred,
           (e.item->>'creditCost')::numeric AS cost,
           e.item->>'cardBefore' AS card_before, e.item->>'reference' AS reference
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(item, ord)
    WHERE e.ord BETWEEN p_from AND p_to
  ),
  counted AS MATERIALIZED (
    SELECT i.*, f.id AS float_id, f.till_id, f.state = 'closed' AS closed, f.credits AS held,
           f.written_off, ('x' || substr(replace(i.id::text, '-', ''), 27, 6))::bit(24)::integer
             AS seq,
           COALESCE(i.cost, c.credit_cost) AS cost_of,
           CASE WHEN i.state <> 'voided' THEN i.credits ELSE 0 END AS draw,
           -- What the float's earlier movements in this run took from it.
           COALESCE(sum(CASE WHEN i.state <> 'voided' THEN i.credits ELSE 0 END)
             OVER (PARTITION BY f.id ORDER BY i.ord
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::bigint AS before,
           EXISTS (SELECT 1 FROM card_blocks b WHERE b.customer_id = p_customer
                   AND b.card_id = i.card_id AND b.lifted_at IS NULL) AS blocked
    FROM item i
    JOIN floats f ON f.customer_id = p_customer
                 AND f.id_prefix = substr(replace(i.id::text, '-', ''), 1, 12)
    JOIN customers c ON c.id = p_customer
  ),
  split AS MATERIALIZED (
    -- As ledger_float_draw: an open float gives what it holds and the rest is drawn beyond it;
    -- a closed one (which holds nothing) takes back from its write-off, then draws beyond.
    -- base: the float's balance before the movement.
    SELECT k.*,
           CASE WHEN k.closed THEN least(k.draw, greatest(0, k.written_off - k.before))
                ELSE 0 END AS back,
           CASE WHEN k.closed THEN k.draw - least(k.draw, greatest(0, k.written_off - k.before))
                ELSE greatest(0, k.draw - greatest(0, k.held - k.before)) END AS over,
           CASE WHEN k.closed THEN k.held ELSE greatest(0, k.held - k.before) END AS base
    FROM counted k
  ),
  answered AS MATERIALIZED (
    SELECT s.*,
           (CASE WHEN p_revoked THEN '{key-revoked}' ELSE '{}' END)::text[]
           || (CASE WHEN s.blocked THEN '{card-blocked}' ELSE '{}' END)::text[]
           || (CASE WHEN s.cost IS NULL THEN '{cost-estimated}'
                    WHEN s.bonus > 0
                         AND s.bonus > ledger_bonus_for(p_customer, s.credits - s.bonus, s.cost)
                    THEN '{bonus-above-tiers}' ELSE '{}' END)::text[]
           || (CASE WHEN s.draw > 0 AND s.closed THEN '{float-closed}' ELSE '{}' END)::text[]
           || (CASE WHEN s.over > 0 THEN '{beyond-float}' ELSE '{}' END)::text[] AS flags,
           (s.credits - s.bonus) * s.cost_of AS paid
    FROM split s
  ),
  recorded AS (
    INSERT INTO movements (id, customer_id, kind, card_id, state, credits, credit_cost,
                           resolved_at, till_id, card_before, resolved_by_till, evidence,
                           occurred_at, float_id, float_seq, reported_as, reference,
                           bonus_credits, amount, paid_amount, report_flags)
    SELECT a.id, p_customer, 'recharge', a.card_id, a.state, a.credits, a.cost_of,
           CASE WHEN a.state <> 'pending' THEN now() END, a.till_id, a.card_before,
           CASE WHEN a.state <> 'pending' THEN p_reporter END,
           CASE WHEN a.found THEN format('found on card %s at till %s', a.card_id, p_reporter) END,
           CASE WHEN a.state = 'posted' THEN COALESCE(a.occurred, now()) END, a.float_id, a.seq,
           CASE WHEN a.found THEN 'found' WHEN p_reporter IS NULL THEN 'operator' ELSE 'till' END,
           a.reference, a.bonus, a.paid, a.paid, a.flags
    FROM answered a ORDER BY a.ord
  ),
  entries AS (
    INSERT INTO float_entries (customer_id, float_id, operation, delta, balance_after,
                               movement_id)
    SELECT p_customer, a.float_id, v.operation, v.delta, v.balance_after, a.id
    FROM answered a CROSS JOIN LATERAL (VALUES
      (1, 'write-back', a.back, a.base + a.back),
      (2, 'overdraw', a.over, a.base + a.back + a.over),
      (3, 'recharge', -a.draw, a.base + a.back + a.over - a.draw))
      AS v(step, operation, delta, balance_after)
    WHERE v.delta <> 0
    ORDER BY a.ord, v.step
  ),
  floats_changed AS (
    UPDATE floats f SET credits = f.credits + t.back + t.over - t.draw,
                        written_off = f.written_off - t.back, overdrawn = f.overdrawn + t.over
    FROM (SELECT a.float_id, sum(a.back) AS back, sum(a.over) AS over, sum(a.draw) AS draw
          FROM answered a GROUP BY a.float_id) t
    WHERE f.customer_id = p_customer AND f.id = t.float_id
  ),
  accounts AS (
    INSERT INTO card_accounts AS c (customer_id, card_id, credits, bonus_credits, paid_amount)
    SELECT p_customer, a.card_id, sum(a.credits), sum(a.bonus), sum(a.paid)
    FROM answered a WHERE a.state = 'posted' GROUP BY a.card_id ORDER BY a.card_id
    ON CONFLICT (customer_id, card_id) DO UPDATE SET
      credits = c.credits + EXCLUDED.credits,
      bonus_credits = c.bonus_credits + EXCLUDED.bonus_credits,
      paid_amount = c.paid_amount + EXCLUDED.paid_amount
  )
  SELECT COALESCE(jsonb_agg(jsonb_build_object('id', a.id, 'outcome', 'recorded',
                                               'state', a.state, 'flags', to_jsonb(a.flags))
                            ORDER BY a.ord), '[]')
  INTO v_results FROM answered a;
  RETURN v_results;
END
$$;
`,
};
