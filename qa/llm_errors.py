"""The judge's one LLM failure type, apart from the backends so that `qa.llm` and
`qa.local_model` both raise it without importing each other."""

from __future__ import annotations


class LLMError(Exception):
    """A failed call; `transient` ones are retried, the others fail the run at once."""

    def __init__(self, message: str, *, transient: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after
