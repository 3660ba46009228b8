"""What every kind's result is to the layers that hold results of any kind (the summary, its warnings, the
report's table): its kind, its test and op, and its JSON form. Each kind's result class (a files test's
FilesResult, a stream test's StreamResult, a plug-in's own) has these and whatever else its own folder reads."""

from __future__ import annotations

from typing import Any, Callable, Protocol


class KindResult(Protocol):
    @property
    def kind(self) -> str: ...          # the kind's name, as registry.spec takes it

    @property
    def name(self) -> str: ...          # the plan's test

    @property
    def op(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


# how a kind's hook says a warning or a note: (level, "test (op)", message, what to do)
AddNotice = Callable[[str, str, str, str], None]
