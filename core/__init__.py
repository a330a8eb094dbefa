"""The platform every feature stands on: the API's plumbing (authentication, errors, pagination,
parsing, schema, throttling), the errors the services raise, the one job executor, publishing a
task by name, the shared rate limits, and the tables kept by month (`core.partitions`: their
partitions ahead and their retention, for any model naming a `partition_key`). It imports only `access` and `outbox` of this project, so
any app may use it without importing another feature."""
