"""Spanish formats of the project (see config/formats): Django's, but thousands grouped with a
period (1.234,56), as Latin American finance writes them, instead of a no-break space."""
