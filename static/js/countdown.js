/* Live countdowns (templates/includes/countdown.html): every <time data-countdown datetime="…">
   shows the time left until its datetime, ticking once a second; loaded as a static file so the
   Content-Security-Policy needs no inline script. Elements swapped in by HTMX are picked up too. */
(function () {
  "use strict";

  function text(seconds, expiredText) {
    if (seconds <= 0) return expiredText;
    var hours = Math.floor(seconds / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var secs = seconds % 60;
    var mm = hours ? String(minutes).padStart(2, "0") : String(minutes);
    return (hours ? hours + ":" : "") + mm + ":" + String(secs).padStart(2, "0");
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
