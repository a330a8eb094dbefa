"""The platform every feature stands on: the API's plumbing (authentication, errors, pagination,
parsing, schema, throttling), the errors the services raise, the one job executor, publishing a
task by name, and the shared rate limits. It imports only `access` and `outbox` of this project, so
any app may use it without importing another feature."""
