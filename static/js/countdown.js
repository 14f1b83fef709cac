/* Live countdowns (templates/includes/countdown.html): every <time data-countdown datetime="…">
   shows the time left until its datetime, ticking once a second; loaded as a static file so the
   Content-Security-Policy needs no inline script. Elements swapped in by HTMX are picked up too.
   data-suffix="left" reads "4:59 left" while running. At zero it shows data-expired-text, adds
   .countdown-expired, greys the enclosing [data-countdown-scope] (.is-expired, e.g. a quote card,
   at once, before any re-fetch) and fires the bubbling DOM event `countdown:expired`. */
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
      // Rounded up, so it reads 0 (and fires) only once the moment has passed, never a second
      // early: a re-fetch on countdown:expired then finds the server agreeing it is over.
      var seconds = Math.max(0, Math.ceil((until - now) / 1000));
      var shown = text(seconds, el.dataset.expiredText || "expired");
      if (seconds > 0 && el.dataset.suffix) shown += " " + el.dataset.suffix;
      if (el.textContent !== shown) el.textContent = shown;
      if (seconds === 0 && !el.classList.contains("countdown-expired")) {
        el.classList.add("countdown-expired");
        var scope = el.closest("[data-countdown-scope]");
        if (scope) scope.classList.add("is-expired");
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
