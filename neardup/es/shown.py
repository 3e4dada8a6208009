"""How the reading side searches and shows an index's documents: a text document by its ``title`` and ``text``, a
record by the fields of its index's configuration (:class:`~neardup.ingest.records.RecordConfig`), which have other
names and no text of their own to show.

>>> from neardup.ingest.records import RecordConfig
>>> config = RecordConfig.parse({"fields": {"complaint": {"mode": "text"}, "subject": {"mode": "text", "title": True},
...     "tags": {"mode": "set"}, "district": {"mode": "value"}}})
>>> shown = Shown.of(config)
>>> shown.searched
('complaint', 'district', 'subject^2', 'tags')
>>> row = {"subject": "噪音", "complaint": "夜间施工", "district": 5, "tags": ["环境", "夜间"]}
>>> shown.title(row), shown.text(row)
('噪音', 'complaint: 夜间施工\\ndistrict: 5\\ntags: 环境、夜间')
>>> Shown.of(None).text({"text": "正文"}), Shown.of(None).searched
('正文', ('title^2', 'text'))
>>> Shown.of(RecordConfig.parse({"fields": {"a": {"mode": "text"}, "notice": {"mode": "ignore"}}})).fields
('a',)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from neardup.incoming.documents import text_value
from neardup.ingest.records import RecordConfig

__all__ = ["Shown"]

#: how many characters of a record's text stand for it where a title would (a cluster's canonical in the list)
_LABEL_CHARS = 80


@dataclass(frozen=True)
class Shown:
    """What is searched (``searched``: fields with their boosts, a title weighing twice as in ranking), and what is
    shown: ``fields`` None for a text document (its ``title`` and ``text``), else a record's fields in name order
    (``title_field`` the one flagged as a title, if any)."""

    searched: tuple[str, ...]
    fields: tuple[str, ...] | None = None
    title_field: str | None = None

    @classmethod
    def of(cls, config: RecordConfig | None) -> Shown:
        """How documents of an index with ``config`` (None: text documents) are searched and shown."""
        if config is None:
            return cls(("title^2", "text"))
        # a field set to "ignore" is what every row holds alike (a notice): it would match and say nothing
        names = tuple(sorted(n for n, spec in config.fields.items() if spec.mode != "ignore"))
        title = next((n for n in names if config.fields[n].title), None)
        return cls(tuple(f"{n}^2" if config.fields[n].title else n for n in names), names, title)

    @property
    def source(self) -> list[str]:
        """The ``_source`` fields that :meth:`title` and :meth:`text` read."""
        return ["title", "text"] if self.fields is None else list(self.fields)

    @property
    def label_source(self) -> list[str]:
        """The ``_source`` fields that :meth:`label` reads: a text document's title alone (not its text, which may
        run to millions of characters); a record's fields, which are few and short."""
        return ["title"] if self.fields is None else list(self.fields)

    @property
    def highlighted(self) -> dict[str, bool]:
        """The fields a search highlights, each with whether whole (a text document's title, as the page shows it)
        or in fragments."""
        return {"text": False, "title": True} if self.fields is None else dict.fromkeys(self.fields, False)

    def title(self, source: Mapping[str, Any]) -> str | None:
        if self.fields is None:
            return text_value(source.get("title"))
        return None if self.title_field is None else _rendered(source.get(self.title_field))

    def text(self, source: Mapping[str, Any]) -> str | None:
        """A text document's text; a record's other fields, one ``name: value`` line each (None when it has none)."""
        if self.fields is None:
            return text_value(source.get("text"))
        lines = [
            f"{name}: {value}"
            for name in self.fields
            if name != self.title_field and (value := _rendered(source.get(name))) is not None
        ]
        return "\n".join(lines) if lines else None

    def label(self, source: Mapping[str, Any]) -> str | None:
        """What names a document in a list: its title; for a record without one, the start of its text."""
        title = self.title(source)
        if title is not None or self.fields is None:
            return title
        text = self.text(source)
        return None if text is None else text[:_LABEL_CHARS] + ("…" if len(text) > _LABEL_CHARS else "")


def _rendered(value: Any) -> str | None:
    """A record's value as shown: a string as it is, a number as written, a set's elements joined; None when empty.

    >>> _rendered(["环境", 3]), _rendered(2.5), _rendered(""), _rendered(None), _rendered({"a": 1})
    ('环境、3', '2.5', None, None, None)
    """
    if isinstance(value, list):
        parts = [p for p in (_rendered(v) for v in value) if p is not None]
        return "、".join(parts) if parts else None
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, str | int | float):
        return None
    text = str(value)
    return text or None
