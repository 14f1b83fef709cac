/* Deprecated: static/js/countdown.js (loaded by base.html) drives every [data-countdown]. Kept
   empty only while templates/payouts/ still references this file; delete both together. */
