"""
The one way to talk to the upstream: environments, tokens, rate budget, errors, call log.

The one rule for calling the gateway: **call it through the typed client, outside any
`transaction.atomic()`, after committing what the call depends on.**

- Use the client, one line a call: `call_sync(upstream(env).quotations.get, quote_id)` from sync
  code (views, services, django-q2 tasks), `await upstream(env).quotations.get(quote_id)` from
  async code (`gateway/client.py`). Nothing else imports httpx or calls `gateway.transport`.
- Outside the caller's transaction: the gateway raises `CalledInTransaction` inside one. A
  mutation's idempotency key and each attempt's call-log row are committed before the request,
  so a task killed after the call re-sends the same key; record the answer in a transaction
  after the call (a service that must write first commits, then calls or queues the call).
- Say who waits: `upstream(env)` is a person waiting (staff priority, first in the limiter);
  `upstream(env, background=True)` is polling, refreshes and other tasks (they yield to staff
  and spend their own share of the weekly budget).
- Failures are one family, `gateway.errors.UpstreamError` (permanent or temporary); a service
  turns one into a refusal with `gateway.service_errors`.

One call, step by step (`gateway/transport.py`): freeze the environment into a `Target`; for each
attempt commit its call-log row, take a slot from the shared limiter (`gateway/limiter/`), read
the token, send on the kept-alive connection (`gateway/connections.py`), classify the answer
(`gateway.errors.error_from_response`) and close the row; then return the body, re-authenticate
once after a 401, or retry when `gateway/retry_policy.py` says it is safe. docs/gateway.md tells
the whole story.
"""
