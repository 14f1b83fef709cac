// The event log's live stream: joins the webhook event group over the websocket and puts each
// new (or changed) event's row at the top, fetched from the server so permissions and filters
// stay there. A small static file so the Content-Security-Policy needs no inline script.
(function () {
  "use strict";

  function results() { return document.getElementById("event-results"); }

  function setStatus(text, cls) {
    var badge = document.getElementById("live-status");
    if (badge) { badge.textContent = text; badge.className = "badge " + cls; }
  }

  function onFirstPage() {
    return !new URLSearchParams(window.location.search).get("page");
  }

  function showRow(pk) {
    var box = results();
    if (!box || !onFirstPage()) { return; }
    var query = new URLSearchParams(window.location.search);
    var url = box.getAttribute("data-row-url") + pk + "/row/" + (query.toString() ? "?" + query : "");
    fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true" } })
      .then(function (response) { return response.ok ? response.text() : ""; })
      .then(function (html) {
        if (!html.trim()) { return; }
        var rows = document.getElementById("event-rows");
        if (!rows) { return; }
        var holder = document.createElement("tbody");
        holder.innerHTML = html.trim();
        var row = holder.firstElementChild;
        var existing = document.getElementById(row.id);
        if (existing) {
          existing.replaceWith(row);
        } else {
          var empty = rows.querySelector("tr.empty");
          if (empty) { empty.remove(); }
          // Newest first by id, whichever row's fetch finished first.
          var pkNew = Number(row.getAttribute("data-pk"));
          var before = null;
          rows.querySelectorAll("tr[data-pk]").forEach(function (other) {
            if (!before && Number(other.getAttribute("data-pk")) < pkNew) { before = other; }
          });
          rows.insertBefore(row, before);
        }
      });
  }

  function connect(delay) {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + "/ws/webhooks/");
    socket.onopen = function () {
      socket.send(JSON.stringify({ action: "join", group: "events" }));
    };
    socket.onmessage = function (message) {
      var data = JSON.parse(message.data);
      if (data.joined === "events") { setStatus("live", "badge-ok"); delay = 1000; }
      if (data.error) { setStatus(data.error, "badge-error"); }
      if (data.type === "webhook.event") { showRow(data.pk); }
    };
    socket.onclose = function (event) {
      setStatus("offline", "badge-muted");
      if (event.code === 4401 || event.code === 4403) { return; }
      window.setTimeout(function () { connect(Math.min(delay * 2, 30000)); }, delay);
    };
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (results()) { connect(1000); }
  });
})();
