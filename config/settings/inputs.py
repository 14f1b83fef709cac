"""Settings of what PAYOPS takes in: our own API's Idempotency-Key (users.mirror)."""

import environ

env = environ.Env()

# PAYOPS_SUBMISSION_CLAIM_SECONDS  how long a create sent with an Idempotency-Key (or a form's
#                                  submission id) holds its claim while the upstream works on it;
#                                  a request with the same key meanwhile is answered 409
#                                  idempotency_key_in_flight. The claim is released as soon as the
#                                  call ends; this only frees the claim of a process that died.
#                                  Longer than one upstream call with its retries and rate waits.
PAYOPS_SUBMISSION_CLAIM_SECONDS = env.int("PAYOPS_SUBMISSION_CLAIM_SECONDS", default=180)

# PAYOPS_RECIPIENT_APPROVER_ROLES  dual control on bank details: the roles (comma-separated role
#                                  keys) whose holders may approve a recipient or a change to one,
#                                  besides holding accounts.approve_recipients; never its creator
#                                  nor the change's author. The default when no policy registers
#                                  its own list (accounts.recipients.
#                                  register_recipient_approver_roles).
PAYOPS_RECIPIENT_APPROVER_ROLES = env.list(
    "PAYOPS_RECIPIENT_APPROVER_ROLES", default=["finance_approver", "compliance"]
)
