// The dashboard's two static files: ECharts (the charting library, served from node_modules, never a CDN) and the
// small script that draws every `.chart` on a page from the options the server built (charts.ts), redraws them
// from a JSON endpoint while runs are live, and applies the axis controls (log scale, step/tokens/time).
import fs from 'node:fs';

export interface Asset {
  body: string;
  type: string;
}

let echarts: string | undefined;

/** `/assets/echarts.min.js`, read once; undefined when the package is not installed. */
function echartsBundle(): string | undefined {
  if (echarts === undefined) {
    try {
      echarts = fs.readFileSync(require.resolve('echarts/dist/echarts.min.js'), 'utf8');
    } catch {
      return undefined;
    }
  }
  return echarts;
}

export function asset(name: string): Asset | undefined {
  if (name === 'echarts.min.js') {
    const body = echartsBundle();
    return body === undefined ? undefined : { body, type: 'text/javascript; charset=utf-8' };
  }
  if (name === 'charts.js') return { body: CHARTS_JS, type: 'text/javascript; charset=utf-8' };
  return undefined;
}

/**
 * A `.chart` element holds its option as JSON in a child script, or names a key of its section's JSON endpoint
 * (`[data-charts-src]`, which answers `{ live, charts: { key: option } }`). SVG rendering, so labels are DOM text.
 */
const CHARTS_JS = `(function () {
  if (!window.echarts) return;
  var made = new Map();
  function draw(el, option) {
    var c = made.get(el);
    if (!c) { c = echarts.init(el, null, { renderer: 'svg' }); made.set(el, c); }
    c.setOption(option, true);
    var n = 0;
    (option.series || []).forEach(function (s) { n += (s.data || []).length; });
    el.setAttribute('data-points', String(n));
    el.setAttribute('data-series', JSON.stringify((option.series || []).map(function (s) { return s.name; })));
    el.setAttribute('data-drawn', '1');
  }
  document.querySelectorAll('.chart > script[type="application/json"]').forEach(function (s) {
    draw(s.parentElement, JSON.parse(s.textContent));
  });
  document.querySelectorAll('[data-charts-src]').forEach(function (box) {
    var timer;
    function url() {
      var u = new URL(box.getAttribute('data-charts-src'), location.href);
      box.querySelectorAll('select[data-axis], input[data-axis]').forEach(function (i) {
        u.searchParams.set(i.name, i.type === 'checkbox' ? (i.checked ? '1' : '0') : i.value);
      });
      return u.toString();
    }
    function load() {
      return fetch(url(), { credentials: 'same-origin', cache: 'no-store' }).then(function (r) { return r.ok ? r.json() : null; }).then(function (j) {
        if (!j) return;
        Object.keys(j.charts).forEach(function (k) {
          var el = box.querySelector('[data-chart="' + k + '"]');
          if (el) draw(el, j.charts[k]);
        });
        box.setAttribute('data-live', j.live ? '1' : '0');
        if (!j.live && timer) { clearInterval(timer); timer = undefined; }
      }).catch(function () {});
    }
    box.querySelectorAll('select[data-axis], input[data-axis]').forEach(function (i) { i.addEventListener('change', load); });
    load().then(function () { if (box.getAttribute('data-live') === '1') timer = setInterval(load, 2000); });
  });
  window.addEventListener('resize', function () { made.forEach(function (c) { c.resize(); }); });
})();
`;
