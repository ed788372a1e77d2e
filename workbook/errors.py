"""One exception type for user-facing input errors."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input: names where (file, line or cell), which field, and what is allowed.

    The CLI prints ``str(err)`` on one line and exits with status 2.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        self.expected = expected
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        text = where
        if self.field:
            text += f"{self.field}: "
        text += self.message
        if self.expected:
            text += f" (allowed: {self.expected})"
        return text
