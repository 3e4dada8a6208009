"""The one validation of client documents (:mod:`neardup.incoming.documents`), as the CLI and the service use it."""

from __future__ import annotations

import io

import pytest

from neardup.cli.offline import InputDoc, read_jsonl
from neardup.errors import UsageError
from neardup.incoming.documents import MAX_ID_BYTES, DocumentError, DocumentFields, record_text, validate_document

TEXT = DocumentFields()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([1], "expected a JSON object"),
        ({"id": "a"}, "field 'text' is missing"),
        ({"id": "a", "text": 3}, "field 'text' must be a string"),
        ({"id": "a", "text": "x", "title": ["t"]}, "field 'title' must be a string"),
        ({"id": True, "text": "x"}, "field 'id' must be a string or an integer"),
        ({"id": "_x", "text": "x"}, "not start with '_'"),
        ({"id": "a" * (MAX_ID_BYTES + 1), "text": "x"}, f"1-{MAX_ID_BYTES} bytes"),
        ({"id": "a", "text": "x", "neardup": {}}, "field 'neardup' is reserved"),
        ({"id": "a", "text": "x", "neardup.is_duplicate": True}, "field 'neardup.is_duplicate' is reserved"),
        ({"text": "x"}, "field 'id' is missing"),
    ],
)
def test_a_bad_document_is_refused_with_the_field_named(doc: object, message: str) -> None:
    with pytest.raises(DocumentError, match=message.replace("(", r"\(")):
        validate_document(doc, TEXT, max_chars=100)


def test_text_length_limit_and_records_mode() -> None:
    with pytest.raises(DocumentError, match="has 11 characters; the limit is 10"):
        validate_document({"id": 1, "text": "x" * 11}, TEXT, max_chars=10)
    record = validate_document({"ref": 5, "body": 1, "tags": ["a"]}, DocumentFields(id="ref", text=None))
    assert (record.id, record.text, record.source) == ("5", None, {"body": 1, "tags": ["a"]})
    doc = validate_document({"id": 1, "text": "t", "title": "h", "lang": "zh"}, TEXT)
    assert doc.body() == {"lang": "zh", "text": "t", "title": "h"}


def test_a_record_is_held_to_the_limit_in_its_fields_together() -> None:
    """As a posted record's lookup counts it (:func:`record_text`): its strings, a list's included; not its id."""
    records = DocumentFields(text=None)
    at_limit = {"id": "i" * 20, "complaint": "环" * 6, "tags": ["ab", 7, "cd"], "n": 12345}
    assert validate_document(at_limit, records, max_chars=10).source["complaint"] == "环" * 6
    with pytest.raises(DocumentError, match="the record's fields have 11 characters together; the limit is 10"):
        validate_document(at_limit | {"category": "x"}, records, max_chars=10)
    assert record_text({k: v for k, v in at_limit.items() if k != "id"}) == "环" * 6 + "abcd"


def test_the_cli_reads_lines_through_the_same_validation() -> None:
    lines = '{"id": 1, "text": "a"}\n{"id": 2, "text": "b", "neardup.cluster": "x"}\n{"text": "c"}\n'
    items = list(read_jsonl(io.StringIO(lines), TEXT, skip_invalid=True))
    assert [i.id if isinstance(i, InputDoc) else i for i in items] == [
        "1",
        "line 2: field 'neardup.cluster' is reserved for neardup's own fields",
        "3",  # a missing id is the line number
    ]
    with pytest.raises(UsageError, match="line 2: duplicate id '1'"):
        list(read_jsonl(io.StringIO('{"id": 1, "text": "a"}\n{"id": "1", "text": "b"}\n'), TEXT, False))


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            '{"text": "a"}\n{"id": 1, "text": "b"}\n',
            "line 2: duplicate id '1' (also on line 1, which has no 'id' field, so its line number is its id)",
        ),
        (
            '{"id": "2", "text": "a"}\n{"text": "b"}\n',
            "line 2: duplicate id '2' (also on line 1): this line has no 'id' field, so its line number is its id",
        ),
        ('{"id": 1, "text": "a"}\n{"id": "1", "text": "b"}\n', "line 2: duplicate id '1' (also on line 1)"),
    ],
)
def test_an_id_taken_from_the_line_number_is_named_so_when_it_clashes(lines: str, message: str) -> None:
    """A line without an id keeps its line number as its id (what ``neardup index`` wrote keeps its ids); when that
    is another line's id too, the message says which line has it from its number."""
    with pytest.raises(UsageError) as refused:
        list(read_jsonl(io.StringIO(lines), TEXT, False))
    assert str(refused.value) == message + " (use --skip-invalid to skip such lines)"
    assert list(read_jsonl(io.StringIO(lines), TEXT, True))[1] == message
    plain = read_jsonl(io.StringIO('{"text": "a"}\n\n{"text": "b"}\n'), TEXT, False)
    assert [d.id for d in plain if isinstance(d, InputDoc)] == ["1", "3"]


def test_a_leading_byte_order_mark_is_dropped_from_bytes_and_from_text() -> None:
    """As a Windows editor saves UTF-8: ``cluster`` reads the file as bytes, ``index`` as text."""
    line = '{"id": "a", "text": "x"}\n{"id": "b", "text": "\ufeffy"}\n'
    for handle in (io.BytesIO(b"\xef\xbb\xbf" + line.encode("utf-8")), io.StringIO("\ufeff" + line)):
        docs = [d for d in read_jsonl(handle, TEXT, False) if isinstance(d, InputDoc)]
        assert [(d.id, d.doc.text) for d in docs] == [("a", "x"), ("b", "\ufeffy")]  # only the file's first
