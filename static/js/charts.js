/* The analytics page's charts (docs/analytics.md). Each <canvas data-chart="ID"> is drawn by
   Chart.js (static/vendor/chartjs, no eval, no inline style) from the JSON in
   <script type="application/json" id="ID"> (Django's json_script): {type, stacked, labels,
   series: [{label, data}], x_title?, y_title?, y_max?}. A button[data-chart-toggle] shows or hides the figure's table.
   Loaded as a static file under the strict Content-Security-Policy. */
(function () {
  "use strict";

  function number(value) {
    return value === null || value === undefined ? null : Number(value);
  }

  function axisTitle(text) {
    return text ? { display: true, text: text } : { display: false };
  }

  function draw(canvas) {
    var source = document.getElementById(canvas.getAttribute("data-chart"));
    if (!source || typeof window.Chart === "undefined") return;
    var spec = JSON.parse(source.textContent);
    var stacked = Boolean(spec.stacked);
    new window.Chart(canvas, {
      type: spec.type,
      data: {
        labels: spec.labels,
        datasets: spec.series.map(function (series) {
          return { label: series.label, data: series.data.map(number), spanGaps: true };
        })
      },
      options: {
        // Axis and tooltip numbers in the page's language (<html lang>: 1,234.5 or 1.234,5).
        locale: document.documentElement.lang || undefined,
        animation: false,
        responsive: true,
        // Each axis says what it counts (spec.x_title, spec.y_title: the unit or currency); a
        // share (spec.y_max 100) is drawn against the whole, so 0.4 % is a sliver, not a full bar.
        scales: {
          x: { stacked: stacked, title: axisTitle(spec.x_title) },
          y: {
            stacked: stacked,
            beginAtZero: true,
            max: spec.y_max === undefined ? undefined : spec.y_max,
            title: axisTitle(spec.y_title)
          }
        }
      }
    });
    canvas.setAttribute("data-chart-drawn", "true");
  }

  function toggle(button) {
    var table = document.getElementById(button.getAttribute("data-chart-toggle"));
    if (!table) return;
    table.hidden = !table.hidden;
    button.setAttribute("aria-expanded", table.hidden ? "false" : "true");
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("canvas[data-chart]").forEach(draw);
    document.querySelectorAll("button[data-chart-toggle]").forEach(function (button) {
      button.addEventListener("click", function () { toggle(button); });
    });
  });
})();
