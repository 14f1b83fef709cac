"""Split settings: base, local (embedded default), test, production."""
