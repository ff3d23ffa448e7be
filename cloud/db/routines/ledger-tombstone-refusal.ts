export const ledgerTombstoneRefusal = {
  name: 'ledger_tombstone_refusal',
  sql: /* sql */ `
-- A create's refusal of an id voided before it arrived (a void of an unknown id leaves a
-- tombstone, ledger_resolve_movement): MovementAlreadyVoided, every time it comes, for the
-- shop that voided it; MovementIdConflict for another shop, as its movement of that id would
-- be (ids are unique on one node). NULL (no error) when the id has no tombstone. Asked under
-- the id's lock, after the movement of that id was not found.
CREATE FUNCTION ledger_tombstone_refusal(p_id uuid, p_customer uuid)
RETURNS ledger_answer LANGUAGE plpgsql STABLE AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and every
-- create calls this (bench/ledger-throughput.ts).
BEGIN
  RETURN (SELECT ledger_refusal(CASE WHEN customer_id = p_customer THEN 'MovementAlreadyVoided'
                                     ELSE 'MovementIdConflict' END)
          FROM void_tombstones WHERE id = p_id);
END
$$;
`,
};
