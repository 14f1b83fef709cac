/* Minimal live countdowns for <time data-countdown datetime="…"> (CSP-safe: a static file, no
   inline script). At zero it shows data-expired-text, adds .countdown-expired and fires the DOM
   event `countdown:expired` (bubbling) so HTMX can re-fetch the server's view of the expiry. */
(function () {
  "use strict";

  function text(seconds, expiredText) {
    if (seconds <= 0) return expiredText;
    var minutes = Math.floor(seconds / 60);
    var secs = seconds % 60;
    return minutes + ":" + String(secs).padStart(2, "0") + " left";
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var until = Date.parse(el.getAttribute("datetime"));
      if (isNaN(until)) return;
      var seconds = Math.max(0, Math.floor((until - now) / 1000));
      var shown = text(seconds, el.dataset.expiredText || "expired");
      if (el.textContent !== shown) el.textContent = shown;
      if (seconds === 0 && !el.classList.contains("countdown-expired")) {
        el.classList.add("countdown-expired");
        el.dispatchEvent(new CustomEvent("countdown:expired", { bubbles: true }));
      }
    });
  }

  function start() {
    tick();
    window.setInterval(tick, 1000);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
