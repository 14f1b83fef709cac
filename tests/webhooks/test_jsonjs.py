"""JSON.stringify(JSON.parse(raw)) reproduced exactly; expected strings are what node prints."""

from __future__ import annotations

import json

import pytest

from webhooks.jsonjs import js_number, js_reserialise, js_stringify

# Each pair: the JSON text received, and `JSON.stringify(JSON.parse(text))` as node 22 prints it.
JS_VECTORS = [
    ('{"a": 1.0}', '{"a":1}'),
    ('{"a": 100.50}', '{"a":100.5}'),
    ('{"a": -0.0}', '{"a":0}'),
    ('{"a": -0}', '{"a":0}'),
    ('{"a": 1e21}', '{"a":1e+21}'),
    ('{"a": 1e20}', '{"a":100000000000000000000}'),
    ('{"a": 0.00000015}', '{"a":1.5e-7}'),
    ('{"a": 0.000001}', '{"a":0.000001}'),
    ('{"a": 1.5E-7}', '{"a":1.5e-7}'),
    ('{"a": 12345678901234567890}', '{"a":12345678901234567000}'),
    ('{"a": 9007199254740993}', '{"a":9007199254740992}'),
    ('{"a": 0.1}', '{"a":0.1}'),
    ('{"a": 123.456e5}', '{"a":12345600}'),
    ('{"a": 5e-324}', '{"a":5e-324}'),
    ('{"a": 1.7976931348623157e308}', '{"a":1.7976931348623157e+308}'),
    ('{"a": 1e400}', '{"a":null}'),
    ('{"a": -1.25e30}', '{"a":-1.25e+30}'),
    ('{"name": "José Müller", "city": "São Paulo"}', '{"name":"José Müller","city":"São Paulo"}'),
    ('{"s": "\\u00e9\\u4e2d"}', '{"s":"é中"}'),
    ('{"s": "emoji \\ud83d\\ude00"}', '{"s":"emoji 😀"}'),
    ('{"s": "lone \\ud800"}', '{"s":"lone \\ud800"}'),
    ('{"s": "ctl \\u0001 \\u001f \\u007f"}', '{"s":"ctl \\u0001 \\u001f \x7f"}'),
    ('{"s": "\\b\\f\\n\\r\\t\\"\\\\\\/"}', '{"s":"\\b\\f\\n\\r\\t\\"\\\\/"}'),
    ('{"s": "\\u2028"}', '{"s":"\u2028"}'),
    ('{"z": 1, "a": 2, "m": {"y": 1, "b": 2}}', '{"z":1,"a":2,"m":{"y":1,"b":2}}'),
    ('{"b": 1, "2": 2, "1": 3, "01": 4, "a": 5}', '{"1":3,"2":2,"b":1,"01":4,"a":5}'),
    ('{"a": 1, "a": 2}', '{"a":2}'),
    (
        '{\n  "event": "x",\n  "data": [ 1 , true, false, null ]\n}',
        '{"event":"x","data":[1,true,false,null]}',
    ),
    ("[]", "[]"),
    ('"text"', '"text"'),
]


@pytest.mark.parametrize(("raw", "expected"), JS_VECTORS)
def test_reserialisation_matches_javascript(raw: str, expected: str) -> None:
    assert js_reserialise(raw.encode("utf-8")) == expected.encode("utf-8")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.5, "0.5"),
        (1e-7, "1e-7"),
        (123e-20, "1.23e-18"),
        (2.0**53, "9007199254740992"),
        (1e16, "10000000000000000"),
    ],
)
def test_number_formatting_follows_number_to_string(value: float, expected: str) -> None:
    assert js_number(value) == expected


def test_a_compact_python_dump_is_already_its_own_reserialisation() -> None:
    payload = {"event": "user.created", "data": {"event_id": "evt_1", "n": 3, "name": "Zoë"}}
    compact = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)

    assert js_stringify(payload) == compact


def test_non_json_is_refused_with_value_error() -> None:
    with pytest.raises(ValueError):
        js_reserialise(b"{not json")
    with pytest.raises(ValueError):
        js_reserialise(b"\xff\xfe")
