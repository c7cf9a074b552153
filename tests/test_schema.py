"""The document checks shared by the rules loader and the benchmark manifest (ncuwrap/core/schema.py)."""

from __future__ import annotations

import enum

import pytest

from ncuwrap.core.errors import RulesError
from ncuwrap.core.schema import document, unique


class Colour(str, enum.Enum):
    red = "red"
    blue = "blue"


DOC = {
    "version": 1,
    "items": [{"name": "a", "size": 3, "colour": "red"}, {"name": "b", "size": True, "colour": "green"}],
    "sizes": {"n": 16, "m": "big"},
    "note": None,
}


def node():
    return document(DOC, "demo.yaml", RulesError, hint="see reference.yaml")


def message(call) -> str:
    with pytest.raises(RulesError) as info:
        call()
    return str(info.value)


def test_typed_values_and_defaults():
    root = node().mapping({"version", "items"}, {"sizes", "note"})
    first = root["items"].items()[0]
    assert first.where == "items[0]"
    assert (first["name"].text(), first["size"].integer(minimum=1), first["colour"].choice(Colour)) == ("a", 3, Colour.red)
    assert root["note"].absent and root.get("note", "x").value == "x" and root["missing"].absent
    assert root["note"].items() == [] and root["note"].pairs() == [] and root["note"].choice(Colour, nullable=True) is None
    assert [k for k, _ in root["sizes"].pairs()] == ["n", "m"]
    assert document("one", "f").texts(single=True) == ("one",)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: node().mapping({"version", "items", "title"}), "demo.yaml: missing key title; see reference.yaml"),
        (lambda: node().mapping({"version"}), "demo.yaml: unknown key items, note, sizes (allowed: version); see reference.yaml"),
        (lambda: node()["version"].mapping(what="a mapping of rules"),
         "demo.yaml: version: expected a mapping of rules, got the number 1; see reference.yaml"),
        (lambda: node()["items"].items()[1]["size"].integer(), "demo.yaml: items[1].size: expected an integer, got true/false; see reference.yaml"),
        (lambda: node()["items"].items()[1]["colour"].choice(Colour), "demo.yaml: items[1].colour: 'green' is not one of red, blue"),
        (lambda: node()["items"].items()[1].at("item b")["colour"].choice(Colour, nullable=True),
         "demo.yaml: item b.colour: 'green' is not one of red, blue, null"),
        (lambda: node()["sizes"].pairs()[1][1].number(), "demo.yaml: sizes.m: expected a number, got the text 'big'; see reference.yaml"),
        (lambda: node()["note"].text(), "demo.yaml: note: expected non-empty text, got nothing (null); see reference.yaml"),
        (lambda: node()["sizes"].items(what="a list of sizes"), "demo.yaml: sizes: expected a list of sizes, got a mapping; see reference.yaml"),
        (lambda: node()["items"].texts(what="a list of names"), "demo.yaml: items: expected a list of names; see reference.yaml"),
        (lambda: document([], "empty.yaml", RulesError).items(nonempty=True), "empty.yaml: expected a list, got an empty list"),
        (lambda: unique([("a", node().at("first")), ("a", node().at("second"))], "name"), "demo.yaml: second: duplicate name a"),
    ],
)
def test_errors_are_one_line_naming_file_and_place(call, expected):
    assert message(call) == expected
