// Payout page: re-fetch the live region when the server says this payout changed, and copy
// buttons. No inline script (the Content-Security-Policy forbids it); htmx does the swapping.
(function () {
  "use strict";

  function refresh(region) {
    if (window.htmx) {
      window.htmx.ajax("GET", region.dataset.liveUrl, { target: region, swap: "outerHTML" });
    }
  }

  function connect() {
    var region = document.querySelector("[data-payout-live]");
    if (!region) { return; }
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + "/ws/events/");
    socket.onmessage = function (message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      var current = document.querySelector("[data-payout-live]");
      if (current && event.kind === "payout.changed" && event.payload &&
          String(event.payload.payout_id) === current.dataset.payoutLive) {
        refresh(current);
      }
    };
    socket.onopen = function () { document.body.dataset.liveConnected = "yes"; };
    socket.onclose = function () {
      document.body.dataset.liveConnected = "no";
      window.setTimeout(connect, 3000);  // the server restarted or the network dropped
    };
  }

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

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", connect);
  } else {
    connect();
  }
})();
