"""code/link.py: a learner's code in a link, and back, whatever the link holds."""

import base64
import zlib

from hypothesis import given
from hypothesis import strategies as st

from stockdemo.code.edits import EDITS, apply
from stockdemo.code.link import MAX_CODE_CHARS, MAX_LINK_CHARS, code_from_link, code_to_link
from stockdemo.sandbox import SEED_CODE


def test_the_seed_and_every_ready_made_edit_come_back_from_their_link_unchanged():
    for source in (SEED_CODE, *(apply(edit) for edit in EDITS.values())):
        link = code_to_link(source)
        assert link is not None and len(link) < 2_000
        assert link.replace("-", "").replace("_", "").isalnum()  # nothing to escape in a URL
        assert code_from_link(link) == (source, None)


def test_code_longer_than_the_limit_gets_no_link():
    assert code_to_link("x = 1\n" * (MAX_CODE_CHARS // 6 + 1)) is None


def test_a_zip_bomb_is_refused_before_it_is_inflated_whole():
    bomb = base64.urlsafe_b64encode(zlib.compress(b"#" * 8_000_000, 9)).decode().rstrip("=")
    assert len(bomb) <= MAX_LINK_CHARS
    source, message = code_from_link(bomb)
    assert source is None and "longer than" in message


def test_a_cut_or_tampered_link_says_so_and_gives_no_code():
    link = code_to_link(SEED_CODE)
    for bad in (link[: len(link) // 2], link[:-3] + "@@@", "%%%", "A" * 17):
        source, message = code_from_link(bad)
        assert source is None and "could not be read" in message


def test_bytes_that_are_not_utf8_are_refused():
    link = base64.urlsafe_b64encode(zlib.compress(b"\xff\xfe print()")).decode().rstrip("=")
    assert code_from_link(link)[0] is None


@given(st.one_of(st.none(), st.integers(), st.text(max_size=200), st.lists(st.text(max_size=5))))
def test_any_value_never_raises(raw):
    source, message = code_from_link(raw)
    assert source is None or isinstance(source, str)
    assert message is None or isinstance(message, str)


@given(st.text(max_size=400))
def test_any_text_goes_there_and_back(source):
    assert code_from_link(code_to_link(source)) == (source, None)
