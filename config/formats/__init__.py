"""Project date formats (FORMAT_MODULE_PATH): every datetime Django formats names its zone."""
