// The release step of a payout (templates/payouts/includes/release_step.html). "Use this code"
// fills the code field in one click. And while the person works in the step, a re-render of the
// live region around it (every payout change re-fetches the region, their own actions included)
// leaves the keyboard focus in the step, on the code field when there is one, with the digits
// typed so far. No inline script: the Content-Security-Policy forbids it.
(function () {
  "use strict";

  var STEP = "#release-step";
  var working = false; // the person's focus (or last action) is in the step
  var typed = "";      // digits typed into the code field since the last action

  function codeField() {
    return document.querySelector(STEP + " input[name=code]");
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-fill-code]");
    if (!button) { return; }
    var field = document.querySelector(button.dataset.fillTarget);
    if (!field) { return; }
    field.value = button.dataset.fillCode;
    typed = field.value;
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.focus();
  });

  document.addEventListener("focusin", function (event) {
    working = Boolean(event.target.closest && event.target.closest(STEP));
  });

  document.addEventListener("input", function (event) {
    if (event.target === codeField()) { typed = event.target.value; }
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt && event.detail.elt.closest && event.detail.elt.closest(STEP)) {
      working = true; // sending or entering a code: what comes back is where they go on
      typed = "";
    }
  });

  function restore() {
    var active = document.activeElement;
    if (!working || (active && active !== document.body)) { return; }
    var field = codeField();
    if (field) {
      if (!field.value && typed) { field.value = typed; }
      field.focus();
      return;
    }
    var button = document.querySelector(STEP + " button");
    if (button) { button.focus(); }
  }

  document.addEventListener("live:refreshed", restore);
  document.addEventListener("htmx:afterSettle", restore);
})();
