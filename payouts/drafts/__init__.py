"""A payout's first stage: the maker's draft, its documents, its priced preview, its sending."""
