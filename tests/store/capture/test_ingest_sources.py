"""Lines cut from chunks (`store.capture.ingest.sources`): wherever the chunks end, even inside a
line or a multi-byte character, the lines, their numbers and their byte offsets are those of
splitting the whole input at once."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from store.capture.ingest.sources import Line, _Splitter


def _whole(data: bytes, start_line: int = 0, start_byte: int = 0) -> list[Line]:
    """The lines of `data` split in one go: the reference."""
    lines, number, offset = [], start_line, start_byte
    parts = data.split(b"\n")
    for part in parts[:-1]:
        number += 1
        offset += len(part) + 1
        lines.append(Line(number, part, offset))
    if parts[-1]:
        lines.append(Line(number + 1, parts[-1], offset + len(parts[-1]), terminated=False))
    return lines


@given(st.binary(max_size=300).map(lambda b: b.replace(b"x", b"\n")) | st.text(max_size=120).map(str.encode),
       st.lists(st.integers(min_value=0, max_value=300), max_size=8),
       st.integers(min_value=0, max_value=5), st.integers(min_value=0, max_value=100))
@settings(max_examples=300, deadline=None)
def test_lines_do_not_depend_on_where_chunks_end(data, cuts, start_line, start_byte):
    splitter, lines, at = _Splitter(start_line, start_byte), [], 0
    for cut in sorted(c for c in cuts if c <= len(data)) + [len(data)]:
        if cut > at:  # sources never feed an empty chunk
            lines += splitter.feed(data[at:cut])
            at = cut
    lines += splitter.finish()
    assert lines == _whole(data, start_line, start_byte)
    assert all(type(line) is Line for line in lines)


def test_a_line_longer_than_many_chunks():
    data = b"a" * 5000 + b"\n" + "é".encode() * 10 + b"\nlast"
    splitter, lines = _Splitter(0, 0), []
    for at in range(0, len(data), 7):
        lines += splitter.feed(data[at:at + 7])
    assert lines + splitter.finish() == _whole(data)
