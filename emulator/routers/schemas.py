"""Request bodies of the domain endpoints, for the OpenAPI page only (bodies are checked by hand).

The services validate bodies themselves so that every bad field is answered in one resource-shaped
400 with the documents' field names; these models describe the same bodies to `/docs`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class UserCreateBody(BaseModel):
    type: Literal["individual", "business"]
    email: str
    phone_number: str | None = None
    first_name: str
    last_name: str
    country: str = Field(description="ISO 3166-1 alpha-2")


class UserUpdateBody(BaseModel):
    email: str | None = None
    phone_number: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    country: str | None = None


class VirtualAccountBody(BaseModel):
    user_id: str
    type: Literal["US_BANK"]
    bank: Literal["slovak_savings_bank"]
    mode: Literal["fiat", "crypto"] = "fiat"


class AddressBody(BaseModel):
    street_name: str | None = None
    city: str | None = None
    state: str | None = None
    postal_code: str | None = None
    country: str | None = None


class RecipientAccountBody(BaseModel):
    account_type: Literal["WIRE", "SWIFT", "ACH", "SPEI", "PSE", "WALLET"]
    account_number: str
    routing_number: str | None = Field(default=None, description="WIRE: 9 digits")
    swift_code: str | None = Field(default=None, description="SWIFT: 8 or 11 characters")
    bank_name: str | None = None


class RecipientBody(BaseModel):
    user_id: str
    first_name: str | None = None
    last_name: str | None = None
    company_name: str | None = None
    email: str | None = None
    address: AddressBody | None = None
    account: RecipientAccountBody


class OtpSendBody(BaseModel):
    email: str


class PaymentInstructionsBody(BaseModel):
    network: Literal["solana", "polygon", "tron"]
    currency: Literal["USDC", "USDT"]


class PreviewBody(BaseModel):
    amount: str = Field(pattern=r"^\d+(\.\d{1,2})?$")
    recipient_id: str
    create_quote: bool = False
    payment_instructions: PaymentInstructionsBody | None = Field(
        default=None,
        description="as on the payout: crypto accounts required (the fees then include the "
        "network fee and a reserved quote is funded in that stablecoin); fiat accounts absent",
    )


class PreviewAliasBody(PreviewBody):
    virtual_account_id: str


class SupportingDocumentBody(BaseModel):
    type: str
    file_name: str
    file: str = Field(description="base64 data: URI")


class ClientMarkupBody(BaseModel):
    fixed_fee: float = 0
    percentage_fee: float = Field(default=0, description="fraction: 0.01 is 1 %")
    fx_markup: float = Field(default=0, description="fraction of the rate")


class ExtraInfoBody(BaseModel):
    memo: str | None = Field(default=None, max_length=255)
    internal_notes: str | None = Field(default=None, max_length=1000)


class PayoutBody(BaseModel):
    recipient_id: str
    amount: str = Field(pattern=r"^\d+(\.\d{1,2})?$", description="> 0, at most 999999.99")
    quote_id: str | None = None
    payment_instructions: PaymentInstructionsBody | None = Field(
        default=None, description="crypto accounts: required; fiat accounts: absent"
    )
    supporting_documents: list[SupportingDocumentBody] | None = Field(
        default=None, description="crypto accounts: at least 1"
    )
    client_markup: ClientMarkupBody | None = Field(
        default=None, description="only without quote_id"
    )
    extra_info: ExtraInfoBody | None = None
    reference: str | None = None


class WebhookRegisterBody(BaseModel):
    webhook_url: str
    secret: str
    client_uuid: str


class DepositBody(BaseModel):
    virtual_account_id: str
    amount: str


class OutsidePayoutBody(BaseModel):
    virtual_account_id: str
    recipient_id: str
    amount: str
    reference: str | None = None


class PayoutStatusBody(BaseModel):
    status: str = Field(description="the upstream's word, as the transition table allows")


class BalanceAdjustBody(BaseModel):
    amount: str = Field(description="signed, in cents: -12.34 takes 12.34 off")


class StatusBody(BaseModel):
    status: str = Field(
        description="failed (from activating), frozen, deactivated, active (unfreeze)"
    )


class DecisionBody(BaseModel):
    accept: bool
    reasons: list[str] | None = None


class CryptoDepositBody(BaseModel):
    amount: str


class ControlEventBody(BaseModel):
    client_id: str
    event: str
    data: dict[str, Any] = Field(default_factory=dict)
    environment: Literal["production", "sandbox"] = "sandbox"


def body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` describing a JSON request body with `model`'s schema."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    definitions = schema.pop("$defs", {})
    if definitions:
        # Inline nested models: the OpenAPI page then needs no extra components.
        schema = _inline(schema, definitions)
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            return _inline(definitions[ref.rsplit("/", 1)[-1]], definitions)
        return {key: _inline(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    return node
