/* Live regions: a part of a page that re-reads itself from the server when the server says that
   what it shows changed (console.broadcast -> websocket /ws/events/). Loaded by base.html on
   pages served with websockets; a static file, so the Content-Security-Policy needs no inline
   script. Mark an element (it needs an id):

     data-live-on="payout.changed"           the event kinds it listens to (space-separated)
     data-live-match="payout_id=12"          optional: payload fields that must equal (all of them)
     data-live-url="/payouts/12/live/"       optional: a fragment URL (fetched as an HTMX request);
                                             without it the page itself is fetched again

   On a matching event the element is replaced by the element with the same id in the answer, so
   permissions and rendering stay on the server. A region covers every fact the change can affect
   (a record's page is one region from its heading down): what lies outside is never re-read. Text typed and boxes ticked inside it are kept.
   One fetch per URL at a time; a change announced meanwhile triggers one more fetch after it.
   After a dropped connection every region is re-read once (what was missed is shown).
   An element inside a region marked `data-live-announce` (a payout's status heading) is read out
   by screen readers when a refresh changes its text: the page's one polite live region
   (`#live-announcer`, role="status", visually hidden, made here) says its new text. A swapped
   element itself cannot announce: a live region must already be in the page when it changes. */
(function () {
  "use strict";

  var script = document.currentScript;
  var socketPath = script && script.dataset.liveSocket;
  var fetching = {};  // url -> "busy" | "again"

  function regions() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-live-on][id]"));
  }

  function matches(region, event) {
    if (region.dataset.liveOn.split(/\s+/).indexOf(event.kind) < 0) { return false; }
    var wanted = (region.dataset.liveMatch || "").split(/\s+/).filter(Boolean);
    return wanted.every(function (pair) {
      var at = pair.indexOf("=");
      var value = event.payload ? event.payload[pair.slice(0, at)] : undefined;
      return value !== undefined && value !== null && String(value) === pair.slice(at + 1);
    });
  }

  function urlOf(region) {
    return region.dataset.liveUrl || window.location.pathname + window.location.search;
  }

  // What the person typed or ticked in the old element survives in the new one.
  function keepInput(old, fresh) {
    old.querySelectorAll("input[name], textarea[name], select[name]").forEach(function (field) {
      var selector = "[name='" + CSS.escape(field.name) + "']";
      if (field.type === "checkbox" || field.type === "radio") {
        if (field.checked === field.defaultChecked) { return; }
        selector += "[value='" + CSS.escape(field.value) + "']";
        var box = fresh.querySelector(selector);
        if (box) { box.checked = field.checked; }
        return;
      }
      var twin = fresh.querySelector(selector);
      if (!twin || field.type === "hidden" || field.type === "file") { return; }
      var changed = field.tagName === "SELECT"
        ? Array.prototype.some.call(field.options, function (o) { return o.selected !== o.defaultSelected; })
        : field.value !== field.defaultValue;
      if (changed) { twin.value = field.value; }
      if (document.activeElement === field) {
        window.setTimeout(function () { twin.focus(); }, 0);
      }
    });
  }

  var announcer = document.createElement("div");
  announcer.id = "live-announcer";
  announcer.className = "visually-hidden";
  announcer.setAttribute("role", "status");
  document.addEventListener("DOMContentLoaded", function () { document.body.appendChild(announcer); });

  function announced(region) {
    return Array.prototype.map.call(region.querySelectorAll("[data-live-announce]"), function (el) {
      return el.textContent.replace(/\s+/g, " ").trim();
    });
  }

  function announce(before, after) {
    var changed = after.filter(function (text, i) { return text && text !== before[i]; });
    if (changed.length) { announcer.textContent = changed.join(". "); }
  }

  function swap(html, ids) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    ids.forEach(function (id) {
      var current = document.getElementById(id);
      var fresh = doc.getElementById(id);
      if (!current || !fresh) { return; }
      fresh = document.importNode(fresh, true);
      keepInput(current, fresh);
      var before = announced(current);
      current.replaceWith(fresh);
      announce(before, announced(fresh));
      if (window.htmx) { window.htmx.process(fresh); }
      fresh.dispatchEvent(new CustomEvent("live:refreshed", { bubbles: true }));
    });
  }

  function refresh(url) {
    if (fetching[url]) { fetching[url] = "again"; return; }
    fetching[url] = "busy";
    var fragment = regions().some(function (r) { return r.dataset.liveUrl === url; });
    var headers = fragment ? { "HX-Request": "true" } : {};
    fetch(url, { headers: headers, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        // The ids are read when the answer is there: earlier swaps may have replaced regions.
        swap(html, regions().filter(function (r) { return urlOf(r) === url; })
          .map(function (r) { return r.id; }));
      })
      .catch(function () { /* the next change or reconnection tries again */ })
      .finally(function () {
        var again = fetching[url] === "again";
        delete fetching[url];
        if (again) { refresh(url); }
      });
  }

  function refreshWhere(test) {
    var urls = {};
    regions().forEach(function (region) { if (test(region)) { urls[urlOf(region)] = true; } });
    Object.keys(urls).forEach(refresh);
  }

  function connect(delay, dropped) {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + socketPath);
    socket.onopen = function () {
      document.body.dataset.liveConnected = "yes";
      delay = 1000;
      if (dropped) { refreshWhere(function () { return true; }); }
    };
    socket.onmessage = function (message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      if (event && event.kind) { refreshWhere(function (region) { return matches(region, event); }); }
    };
    socket.onclose = function (event) {
      document.body.dataset.liveConnected = "no";
      if (event.code === 4401 || event.code === 4403) { return; }  // signed out, or no role
      window.setTimeout(function () { connect(Math.min(delay * 2, 30000), true); }, delay);
    };
  }

  function start() {
    if (socketPath && regions().length) { connect(1000, false); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
