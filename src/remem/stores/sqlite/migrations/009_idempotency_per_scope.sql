-- Idempotency per scope (issue 13.6): a stored key is bound to its scope ("user:a/k1"), so the
-- same key in two scopes is two requests. Rewrites the keys stored before: receipts carry
-- their scope; an idempotency row's result (forgotten markers included) names its scope. Keys
-- already in their scope's namespace (scoped tokens) and keys derived from a source identity
-- ("src:[...]", which name the scope) stay as they are; a row whose new key is taken stays.
UPDATE receipts SET idem_key = scope || '/' || idem_key
 WHERE substr(idem_key, 1, length(scope) + 1) <> scope || '/'
   AND NOT EXISTS (SELECT 1 FROM receipts o WHERE o.memory_id = receipts.memory_id
                   AND o.idem_key = receipts.scope || '/' || receipts.idem_key);
UPDATE idempotency SET idem_key = json_extract(result, '$.scope') || '/' || idem_key
 WHERE json_extract(result, '$.scope') IS NOT NULL
   AND substr(idem_key, 1, 5) <> 'src:['
   AND substr(idem_key, 1, length(json_extract(result, '$.scope')) + 1)
       <> json_extract(result, '$.scope') || '/'
   AND NOT EXISTS (SELECT 1 FROM idempotency o WHERE o.memory_id = idempotency.memory_id
                   AND o.idem_key = json_extract(idempotency.result, '$.scope') || '/'
                                    || idempotency.idem_key);
