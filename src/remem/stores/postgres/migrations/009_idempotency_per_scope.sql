-- Idempotency per scope (issue 13.6): a stored key is bound to its scope ("user:a/k1"), so the
-- same key in two scopes is two requests. Rewrites the keys stored before: receipts carry
-- their scope; an idempotency row's result (forgotten markers included) names its scope. Keys
-- already in their scope's namespace (scoped tokens) and keys derived from a source identity
-- ("src:[...]", which name the scope) stay as they are; a row whose new key is taken stays.
UPDATE receipts r SET idem_key = r.scope || '/' || r.idem_key
 WHERE substr(r.idem_key, 1, length(r.scope) + 1) <> r.scope || '/'
   AND NOT EXISTS (SELECT 1 FROM receipts o WHERE o.memory_id = r.memory_id
                   AND o.idem_key = r.scope || '/' || r.idem_key);
UPDATE idempotency i SET idem_key = ((i.result::jsonb) ->> 'scope') || '/' || i.idem_key
 WHERE ((i.result::jsonb) ->> 'scope') IS NOT NULL
   AND substr(i.idem_key, 1, 5) <> 'src:['
   AND substr(i.idem_key, 1, length((i.result::jsonb) ->> 'scope') + 1)
       <> ((i.result::jsonb) ->> 'scope') || '/'
   AND NOT EXISTS (SELECT 1 FROM idempotency o WHERE o.memory_id = i.memory_id
                   AND o.idem_key = ((i.result::jsonb) ->> 'scope') || '/' || i.idem_key);
