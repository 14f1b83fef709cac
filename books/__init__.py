"""The books: PayOps's ledger of each virtual account, reconciliation, statements and reports."""
