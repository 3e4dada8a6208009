"""``bench.min_shared`` counts what the late rounds found against the generator's groups."""

from __future__ import annotations

import doctest

from bench import min_shared
from bench.corpus import Doc


def test_a_document_should_be_flagged_once_its_group_was_written_before_it_in_the_batch_too() -> None:
    docs = [Doc("a", "", "g"), Doc("b", "", "h"), Doc("c", "", "h"), Doc("d", "", "k"), Doc("e", "", "g")]
    items = [{"duplicate_of": None}, {"duplicate_of": "b"}, {"duplicate_of": None}, {"duplicate_of": "b"}]
    # b: first of its group (not to flag); c: after b, flagged as its; d: alone; e: after a, flagged as b's (wrong)
    assert min_shared.found_duplicates(docs, 1, items) == (2, 2, 1)


def test_a_wrong_original_is_flagged_but_not_right() -> None:
    docs = [Doc("a", "", "g"), Doc("b", "", "h"), Doc("c", "", "g")]
    assert min_shared.found_duplicates(docs, 2, [{"duplicate_of": "b"}]) == (1, 1, 0)
    assert min_shared.found_duplicates(docs, 2, [{"duplicate_of": "a"}]) == (1, 1, 1)


def test_a_document_written_before_an_earlier_one_of_its_group_is_not_one_that_should_be_flagged() -> None:
    # the other client thread wrote b first, so a was flagged as b's duplicate: counted as flagged, not as found
    docs = [Doc("x", "", "h"), Doc("a", "", "g"), Doc("b", "", "g")]
    assert min_shared.found_duplicates(docs, 1, [{"duplicate_of": "b"}, {"duplicate_of": None}]) == (1, 1, 0)


def test_the_doctests_of_min_shared() -> None:
    assert doctest.testmod(min_shared).failed == 0
