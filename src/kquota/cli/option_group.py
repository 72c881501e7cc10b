"""One parameter for a group of click options.

Several commands share a set of flags (targeting, alterations, impact, the fleet's); each
command takes them as one dataclass rather than as loose keyword arguments.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


def option_group(
    param: str, group: type[Any], options: Sequence[Callable[[Any], Any]]
) -> Callable[[F], F]:
    """option_group adds ``options`` (click decorators, in help order) to a command, which
    receives their values as the one parameter ``param``: a ``group`` dataclass whose fields
    are named as the options' parameters (a field with no option here is None)."""
    names = tuple(f.name for f in dataclasses.fields(group))

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def collect(*args: Any, **kwargs: Any) -> Any:
            kwargs[param] = group(**{n: kwargs.pop(n, None) for n in names})
            return f(*args, **kwargs)

        wrapped: Any = collect
        for option in reversed(options):
            wrapped = option(wrapped)
        return cast(F, wrapped)

    return decorate
