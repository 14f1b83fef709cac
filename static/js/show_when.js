/* Fields shown only when another field has a given value (docs/ui.md, "Fields for a choice").
   A form field marked `data-show-when="account_type=WIRE"` (or `kind=individual,company`) is shown
   only while the control named `account_type` in the same form holds one of those values; the
   others get the `hidden` attribute. Without JavaScript every field shows, each with its help
   text, and the server validates the same either way (it ignores the fields of other choices).
   Loaded as a static file (strict Content-Security-Policy); HTMX swaps are picked up too. */
(function () {
  "use strict";

  function currentValue(form, name) {
    var controls = form.querySelectorAll('[name="' + name + '"]');
    for (var i = 0; i < controls.length; i++) {
      var control = controls[i];
      if (control.type === "radio" || control.type === "checkbox") {
        if (control.checked) return control.value;
      } else {
        return control.value;
      }
    }
    return "";
  }

  function apply(root) {
    (root || document).querySelectorAll("[data-show-when]").forEach(function (el) {
      var form = el.closest("form");
      var rule = el.getAttribute("data-show-when").split("=");
      if (!form || rule.length !== 2) return;
      var shown = rule[1].split(",").indexOf(currentValue(form, rule[0])) !== -1;
      if (el.hidden === shown) el.hidden = !shown;
    });
  }

  document.addEventListener("change", function (event) {
    var form = event.target.closest && event.target.closest("form");
    if (form && form.querySelector("[data-show-when]")) apply(form);
  });
  document.addEventListener("DOMContentLoaded", function () { apply(document); });
  document.addEventListener("htmx:load", function (event) { apply(event.target); });
})();
