"""English datetime formats with the time zone (`T`), so the admin's times are never ambiguous."""

DATETIME_FORMAT = "N j, Y, P T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
