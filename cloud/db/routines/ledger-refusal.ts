export const ledgerRefusal = {
  name: 'ledger_refusal',
  sql: /* sql */ `
CREATE FUNCTION ledger_refusal(p_error text, p_detail text DEFAULT NULL)
RETURNS ledger_answer LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  answer ledger_answer;
BEGIN
  answer.error := p_error;
  answer.detail := p_detail;
  RETURN answer;
END
$$;
`,
};
