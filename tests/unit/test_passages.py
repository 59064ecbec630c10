"""A document hit's passage: the matched chunk, the text around it within its budget, cut at
sentence boundaries and marked where the section goes on; budgets spent in rank order."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st
from maxy.search.passages import LEAD_CHARS, MORE, PASSAGE_MAX, PASSAGE_MIN, assemble, body, budgets

WORDS = ("a", "aa", "aaa", "ab", "abcd", "words", "passage", "sentence", "boundary")
SENTENCE = st.builds(
    lambda words, end: "".join(f" {w}" for w in words) + end,
    st.lists(st.sampled_from(WORDS), min_size=2, max_size=14),
    st.sampled_from(".?!"),
)
SECTION = st.lists(st.lists(SENTENCE, min_size=1, max_size=12), min_size=1, max_size=7)


def _numbered(section: list[list[str]]) -> list[str]:
    """Chunks of sentences, each sentence starting with its own number (no text repeats)."""
    n = iter(range(10_000))
    return [" ".join(f"S{next(n)}{sentence}" for sentence in chunk) for chunk in section]


def _parts(text: str) -> tuple[str, str]:
    """A passage's opening (the section's first words, before `` […] ``) and the rest, unmarked."""
    opened, sep, rest = text.partition(f" {MORE} ")
    if not sep or opened == MORE:  # no opening (" […] " can only follow one: the end mark has no space after)
        opened, rest = "", text
    return opened, rest.removeprefix(f"{MORE} ").removesuffix(f" {MORE}")


@given(section=SECTION, data=st.data(), budget=st.integers(60, 2200))
def test_a_passage_holds_its_chunk_fits_its_budget_and_marks_what_it_leaves_out(
    section: list[list[str]], data: st.DataObject, budget: int
) -> None:
    chunks = _numbered(section)
    at = data.draw(st.integers(0, len(chunks) - 1))
    named = [(f"c{i}", text) for i, text in enumerate(chunks)]
    text, used, left = assemble(named, at, budget)
    opened, inner = _parts(text)
    whole = " ".join(chunks)
    room = budget - (len(opened) + len(MORE) + 2 if opened else 0)
    assert len(opened) + len(inner) <= budget
    assert inner in whole and f"c{at}" in used
    if opened:  # the section's first sentence (else first words), then the passage further in
        assert whole.startswith(opened) and len(opened) <= min(LEAD_CHARS, budget // 4)
        assert opened[-1] in ".?!" or whole[len(opened)] == " "
        assert whole.index(inner) > len(opened)
        assert used[0] == "c0"
    rest = used[1:] if opened and used[0] == "c0" and len(used) > 1 and used[1] != "c1" else used
    assert rest == [f"c{i}" for i in range(int(rest[0][1:]), int(rest[-1][1:]) + 1)]  # in order, no gaps
    if len(chunks[at]) <= room:
        assert chunks[at] in inner  # the matched chunk whole
    else:
        assert inner and chunks[at].startswith(inner)
        if re.search(r"[.?!](?= )", chunks[at][:room]):
            assert inner[-1] in ".?!"  # cut at the last sentence end inside the budget
        else:
            assert chunks[at][len(inner)] == " "  # a sentence longer than the budget: at a word
    anchor_end = len(" ".join(chunks[: at + 1]))
    if len(chunks[at]) <= budget and anchor_end <= budget:
        assert whole.startswith(inner) and not opened  # the section's start is within reach: read from it
    elif len(chunks[at]) <= room and len(whole) - (anchor_end - len(chunks[at])) <= room:
        assert whole.endswith(inner)  # its end is: read to it
    assert text.startswith(MORE) == (not whole.startswith(inner) and not opened)
    assert text.endswith(MORE) == (not whole.endswith(inner))
    assert left == len(whole) - len(inner) - len(opened)


def test_a_passage_inside_its_section_follows_the_sections_first_sentence() -> None:
    first = "Proxies are configured per client."
    chunks = [
        ("c0", f"{first} " + "Setup words go on here. " * 30),
        ("c1", "Set HTTP_PROXY to route requests. " * 8),
        ("c2", "Later words follow here. " * 30),
    ]
    text, used, _ = assemble(chunks, 1, 500)
    assert text.startswith(f"{first} {MORE} Set HTTP_PROXY") and text.endswith(MORE) and used[:2] == ["c0", "c1"]
    window = [("c5", "Set SSL_CERT_FILE for custom roots. " * 8), ("c6", "More on certificates here. " * 5)]
    text, used, _ = assemble(window, 0, 500, opening=("c0", f"{first} Everything else."))
    assert text.startswith(f"{first} {MORE} Set SSL_CERT_FILE") and used[:2] == ["c0", "c5"]
    text, used, _ = assemble(window, 0, 5000)  # a window further in, with no opening to show
    assert text.startswith(f"{MORE} Set SSL_CERT_FILE") is False and used == ["c5", "c6"]


@given(
    pairs=st.lists(st.tuples(st.integers(0, 5000), st.floats(0, 1)), min_size=1, max_size=12),
    mean=st.integers(300, 2500),
)
def test_budgets_give_every_hit_its_floor_and_share_the_rest_by_relevance(
    pairs: list[tuple[int, float]], mean: int
) -> None:
    needs, weights = [n for n, _ in pairs], [w for _, w in pairs]
    given_out = budgets(needs, weights, mean)
    caps = [min(n, PASSAGE_MAX) for n in needs]
    assert all(min(PASSAGE_MIN, cap) <= b <= cap for b, cap in zip(given_out, caps, strict=True))
    assert sum(given_out) <= max(mean * len(needs), sum(min(PASSAGE_MIN, cap) for cap in caps))
    if sum(caps) <= mean * len(needs) - len(needs):  # room for all: every hit gets what it needs
        assert given_out == caps
    for i, j in itertools.permutations(range(len(pairs)), 2):  # the likelier of two hits that need as much
        if needs[i] == needs[j] and weights[i] > weights[j]:
            assert given_out[i] >= given_out[j]


def test_the_likelier_hit_reads_on() -> None:
    assert budgets([3000, 3000, 3000], [0.9, 0.05, 0.05], 1000) == [PASSAGE_MAX, 500, 500]
    assert budgets([3000, 3000], [0.0, 0.0], 1000) == [1000, 1000]  # no relevance: equal shares
    assert budgets([300, 3000], [0.9, 0.1], 1000) == [300, 1700]  # what a short section leaves goes on


def test_the_heading_path_is_not_repeated_in_the_passage() -> None:
    props = {"documentTitle": "HTTPX", "sectionTitle": "Logging", "content": "HTTPX › Logging\n\nCall basicConfig."}
    assert body(props) == "Call basicConfig."
    same = {"documentTitle": "Claims", "sectionTitle": "Claims", "content": "Claims\n\nAll text."}
    assert body(same) == "All text."
    assert body({"documentTitle": "A", "content": "Another text."}) == "Another text."
