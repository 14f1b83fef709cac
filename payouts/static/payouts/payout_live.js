// Payout page: re-fetch the live region when the server says this payout changed, and copy
// buttons. No inline script (the Content-Security-Policy forbids it); htmx does the swapping.
(function () {
  "use strict";

  // One fetch at a time; a change announced while one is in flight triggers one more after it,
  // so the last swap always shows the newest state (swaps never target a replaced element).
  var inFlight = false;
  var again = false;

  function refresh() {
    var region = document.querySelector("[data-payout-live]");
    if (!region) { return; }
    if (inFlight) { again = true; return; }
    inFlight = true;
    again = false;
    fetch(region.dataset.liveUrl, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        var current = document.querySelector("[data-payout-live]");
        if (html && current) {
          var holder = document.createElement("div");
          holder.innerHTML = html.trim();
          var fresh = holder.firstElementChild;
          if (fresh) {
            current.replaceWith(fresh);
            if (window.htmx) { window.htmx.process(fresh); }
            document.dispatchEvent(new CustomEvent("payout:refreshed"));
          }
        }
      })
      .finally(function () {
        inFlight = false;
        if (again) { refresh(); }
      });
  }

  function connect() {
    var region = document.querySelector("[data-payout-live]");
    // Served without Channels (a WSGI server): no websocket to listen on, the page still works.
    if (!region || region.dataset.liveSocket !== "yes") { return; }
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + "/ws/events/");
    socket.onmessage = function (message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      var current = document.querySelector("[data-payout-live]");
      if (current && event.kind === "payout.changed" && event.payload &&
          String(event.payload.payout_id) === current.dataset.payoutLive) {
        refresh();
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
