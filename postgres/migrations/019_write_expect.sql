-- A write applied in one round trip (postgres/ahead.go) sends, after the
-- statement taking its tenant's lock, what it expects the tenant's rows to
-- hold (the log's size, the policy, the open pauses, the versions of its
-- key): each expectation is a call of custody_expect, which fails the
-- statement, and with it the transaction, with SQLSTATE CU001 when the
-- rows hold something else. The server then reads them and applies the
-- write as before. A function, because a plain CASE may be folded to its
-- error before the condition is looked at.
CREATE OR REPLACE FUNCTION custody_expect(ok boolean, what text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'custody: % changed since this server last wrote it; the write is applied again after reading it', what
      USING ERRCODE = 'CU001';
  END IF;
  RETURN true;
END
$$;
