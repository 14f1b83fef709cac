"""Upstream end users (not staff) and their KYC/KYB verification results."""
