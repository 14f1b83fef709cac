"""Upstream field errors land on the right fields of a Django form (or as non-field errors)."""

from __future__ import annotations

import json

from django import forms

from gateway.errors import error_from_response


class PayoutForm(forms.Form):
    amount = forms.CharField()
    file = forms.CharField(required=False)


def _form() -> PayoutForm:
    form = PayoutForm(data={"amount": "1.00", "file": ""})
    assert form.is_valid()
    return form


def test_nested_and_indexed_names_reach_their_field_the_rest_is_non_field() -> None:
    body = {
        "code": "validation_error",
        "message": "invalid request",
        "errors": [
            {"field": "amount", "message": "must be positive"},
            {"field": "supporting_documents[0].file", "message": "must be a data: URI"},
            {"field": "x-validation-header", "message": "must be 6 digits"},
        ],
    }
    form = _form()
    error_from_response(400, json.dumps(body)).add_to_form(form)
    assert form.errors["amount"] == ["must be positive"]
    assert form.errors["file"] == ["must be a data: URI"]
    assert form.non_field_errors() == ["x-validation-header: must be 6 digits"]


def test_an_error_without_fields_becomes_the_forms_message() -> None:
    form = _form()
    error_from_response(
        400, json.dumps({"error": {"code": "QUOTE_INVALID_STATE", "message": "quote is expired"}})
    ).add_to_form(form)
    assert form.non_field_errors() == ["quote is expired"]
    assert not form.is_valid()
