// Payout page: the copy buttons of the deposit instructions. The page (one live region) re-reads
// through the shared live regions (static/js/live.js, data-live-on on #payout-live in
// templates/payouts/payout_detail.html). No inline script (the Content-Security-Policy forbids it).
(function () {
  "use strict";

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) { return; }
    var source = document.querySelector(button.dataset.copy);
    if (!source || !navigator.clipboard) { return; }
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = "Copied";
      window.setTimeout(function () { button.textContent = "Copy"; }, 1500);
    });
  });
})();
