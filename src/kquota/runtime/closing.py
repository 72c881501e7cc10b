"""One context-manager protocol for the classes that hold a connection and have ``close()``."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosesOnExit:
    """ClosesOnExit makes ``with obj:`` call ``obj.close()`` on the way out, error or not."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
