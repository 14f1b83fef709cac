// The release step of a payout (templates/payouts/includes/release_step.html). "Use this code"
// fills the code field in one click; and the code field keeps its focus and the digits typed so
// far when the live region is re-rendered around it (a payout change re-fetches the region).
// No inline script: the Content-Security-Policy forbids it.
(function () {
  "use strict";

  var kept = null; // {id, value}: the release step's field being typed into

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-fill-code]");
    if (!button) { return; }
    var field = document.querySelector(button.dataset.fillTarget);
    if (!field) { return; }
    field.value = button.dataset.fillCode;
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.focus();
  });

  function remember(event) {
    var field = event.target;
    if (field && field.id && field.matches("input") && field.closest("#release-step")) {
      kept = { id: field.id, value: field.value };
    }
  }

  document.addEventListener("focusin", remember);
  document.addEventListener("input", remember);
  document.addEventListener("focusout", function (event) {
    // Focus moved on to something else: the person left the field; forget it. (A field removed
    // by a re-render loses focus to nothing: that is the case to restore.)
    if (event.relatedTarget) { kept = null; }
  });

  function restore() {
    if (!kept) { return; }
    var active = document.activeElement;
    if (active && active !== document.body) { return; }
    var field = document.getElementById(kept.id);
    if (!field || !field.closest("#release-step")) { return; }
    if (!field.value && kept.value) { field.value = kept.value; }
    field.focus();
  }

  document.addEventListener("payout:refreshed", restore);
  document.addEventListener("htmx:afterSettle", restore);
})();
