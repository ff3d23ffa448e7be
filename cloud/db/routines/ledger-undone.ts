export const ledgerUndone = {
  name: 'ledger_undone',
  sql: /* sql */ `
-- Whether a posted refund or correction was undone by its compensation (posted, undoes: its card
-- never held it): it then took nothing back of its recharge, and another may.
CREATE FUNCTION ledger_undone(p_customer uuid, p_movement uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM movements u
                 WHERE u.customer_id = p_customer AND u.compensates = p_movement AND u.undoes
                   AND u.state = 'posted')
$$;
`,
};
