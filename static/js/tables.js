/* Tables as cards on a phone: each body cell of a `table.table` gets its column's name as
   `data-label` (from the header row, colspans counted), which payops.css shows beside the value
   when the rows become cards. A cell that already has a `data-label` keeps it; a cell spanning
   several columns (an empty state) gets none. Rows added later (an HTMX swap, a live row) are
   labelled as they arrive. A `.table-scroll` whose table is wider than it (it scrolls sideways)
   joins the tab order, so the keyboard can scroll it too (WCAG 2.1.1); one that fits leaves it.
   Loaded by base.html; nothing inline, so the CSP holds. */
(function () {
  "use strict";

  function columnNames(table) {
    var head = table.tHead;
    if (!head || !head.rows.length) return null;
    var names = [];
    var cells = head.rows[head.rows.length - 1].cells;
    for (var i = 0; i < cells.length; i++) {
      var name = cells[i].textContent.replace(/\s+/g, " ").trim();
      for (var span = cells[i].colSpan || 1; span > 0; span--) names.push(name);
    }
    return names;
  }

  function label(table) {
    var names = columnNames(table);
    if (!names) return;
    for (var b = 0; b < table.tBodies.length; b++) {
      var rows = table.tBodies[b].rows;
      for (var r = 0; r < rows.length; r++) {
        var column = 0;
        var cells = rows[r].cells;
        for (var c = 0; c < cells.length; c++) {
          var cell = cells[c];
          var span = cell.colSpan || 1;
          if (span === 1 && names[column] && !cell.hasAttribute("data-label")) {
            cell.setAttribute("data-label", names[column]);
          }
          column += span;
        }
      }
    }
  }

  function reachable(scroller) {
    if (scroller.scrollWidth > scroller.clientWidth + 1) {
      if (!scroller.hasAttribute("tabindex")) scroller.setAttribute("tabindex", "0");
    } else if (scroller.getAttribute("tabindex") === "0") {
      scroller.removeAttribute("tabindex");
    }
  }

  function reachableAll() {
    var scrollers = document.querySelectorAll(".table-scroll");
    for (var i = 0; i < scrollers.length; i++) reachable(scrollers[i]);
  }

  function labelWithin(node) {
    if (node.nodeType !== 1) return;
    var table = node.closest("table.table");
    if (table) {
      label(table);
      return;
    }
    var tables = node.querySelectorAll("table.table");
    for (var i = 0; i < tables.length; i++) label(tables[i]);
  }

  labelWithin(document.body);
  reachableAll();
  window.addEventListener("resize", reachableAll);
  new MutationObserver(function (changes) {
    for (var i = 0; i < changes.length; i++) {
      var added = changes[i].addedNodes;
      for (var j = 0; j < added.length; j++) labelWithin(added[j]);
    }
    reachableAll();
  }).observe(document.body, { childList: true, subtree: true });
})();
