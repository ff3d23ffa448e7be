export const ledgerKeyHolds = {
  name: 'ledger_key_holds',
  sql: /* sql */ `
-- The caller's API key is still valid for this customer. A key's customer never changes, so the
-- ledger knows it from the key's first request; whether the key is revoked is read here, in the
-- call's own transaction, so a call needs no round trip of its own for the key. NULL: checked
-- by the caller already (the admin CLI, a first request).
CREATE FUNCTION ledger_key_holds(p_key_hash text, p_customer uuid)
RETURNS boolean LANGUAGE plpgsql STABLE AS $$
-- PL/pgSQL, not SQL: PostgreSQL plans a SQL function's statements anew on every call, and every
-- call of the ledger calls this (bench/ledger-throughput.ts).
BEGIN
  IF p_key_hash IS NULL THEN
    RETURN true;
  END IF;
  RETURN EXISTS (
    SELECT 1 FROM api_keys
    WHERE key_hash = p_key_hash AND customer_id = p_customer AND revoked_at IS NULL);
END
$$;
`,
};
