"""The REST API's plumbing shared by every app's API: authentication, the error shape, pagination, parsing, the schema's common answers and throttling."""
