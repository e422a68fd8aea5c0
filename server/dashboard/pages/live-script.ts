// The only script on the dashboard: while a page's curves are live, fetch the chart again every two seconds and
// swap it in place; stop when the server says the runs are over.
import { raw } from '../html';

export const liveScript = raw(`<script>
(function () {
  var box = document.getElementById('curves');
  if (!box || box.dataset.live !== '1') return;
  var timer = setInterval(function () {
    fetch(box.dataset.src, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
      if (r.headers.get('x-flywheel-live') === '0') clearInterval(timer);
      return r.ok ? r.text() : null;
    }).then(function (svg) { if (svg) box.innerHTML = svg; }).catch(function () {});
  }, 2000);
})();
</script>`);

/** The charting library and the script that draws the page's `.chart` elements (assets.ts). */
export const chartScripts = raw('<script src="/assets/echarts.min.js"></script><script src="/assets/charts.js"></script>');
