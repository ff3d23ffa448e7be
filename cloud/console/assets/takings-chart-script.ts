/**
 * The browser script of the takings chart page, kept as a module so the built package carries
 * it. It reads the figures the page holds as JSON and draws them with uPlot (served by the
 * ledger from its own copy, no CDN). No eval, no inline code: it runs under script-src 'self'.
 */
export const takingsChartScript = /* js */ `'use strict';
(function () {
  var holder = document.getElementById('takings-chart');
  var data = document.getElementById('takings-data');
  if (!holder || !data || typeof uPlot === 'undefined') return;
  // { per: 'day' | 'week', today, periods: [{ date, days, taken, paidOut, refunded, net }] }: a
  // week starts on its first day in the span; its bar stands in the middle of its days. today
  // is the shop's local date: the period holding it is still being sold into.
  var chart = JSON.parse(data.textContent || '{}');
  var weekly = chart.per === 'week';
  var days = chart.periods || [];
  var DAY = 86400;
  var xs = days.map(function (day) {
    return Date.parse(day.date + 'T00:00:00Z') / 1000 + ((day.days || 1) * DAY) / 2;
  });
  var taken = days.map(function (day) { return Number(day.taken); });
  var paid = days.map(function (day) { return Number(day.paidOut); });
  var refunded = days.map(function (day) { return Number(day.refunded); });
  var net = days.map(function (day) { return Number(day.net); });
  var euro = function (u, value) { return value == null ? '' : '€' + value.toFixed(2); };
  function size() {
    return { width: Math.max(280, holder.clientWidth), height: holder.clientWidth < 500 ? 260 : 340 };
  }
  var dayName = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' });
  // "8–14 Jun 2026"; a week cut by the span's edge says how many days its bar holds, and the
  // newest period says "so far" while the shop is still selling into it, so a short or half-sold
  // bar is not taken for a poor week.
  function periodName(period) {
    var first = new Date(period.date + 'T00:00:00Z');
    var count = period.days || 1;
    var last = new Date(first.getTime() + (count - 1) * DAY * 1000);
    var name = count > 1 ? dayName.formatRange(first, last) : dayName.format(first);
    if (last.toISOString().slice(0, 10) === chart.today) return name + ' (so far)';
    if (weekly && count < 7) return name + ' (' + count + (count === 1 ? ' day)' : ' days)');
    return name;
  }
  var tick = new Intl.DateTimeFormat('en-GB', weekly
    ? { timeZone: 'UTC', month: 'short', year: '2-digit' }
    : { timeZone: 'UTC', day: 'numeric', month: 'short' });
  var half = (weekly ? 7 : 1) * DAY / 2;
  var newest = days.length - 1;
  // With nothing pointed at, the legend gives the newest day's figures rather than empty ones,
  // which an owner would take for missing takings.
  function showNewest(u) {
    if (u.cursor.idx == null && newest >= 0) u.setLegend({ idx: newest }, false);
  }
  var opts = Object.assign(size(), {
    // Half a bar either side, so the first and last bars are whole, not cut at the edges.
    scales: { x: { time: true, range: function (u, min, max) { return [min - half, max + half]; } } },
    hooks: { ready: [showNewest], setCursor: [showNewest] },
    series: [
      { label: weekly ? 'Week' : 'Day', value: function (u, ts, si, i) {
        return i == null || !days[i] ? '' : periodName(days[i]);
      } },
      { label: 'Taken', stroke: '#0b5cad', fill: 'rgba(11,92,173,0.35)', width: 1,
        paths: uPlot.paths.bars({ size: [0.7, 40] }), value: euro },
      { label: 'Paid out', stroke: '#a4161a', width: 2, value: euro },
      { label: 'Refunded', stroke: '#7a4b00', width: 2, value: euro },
      { label: 'Net cash', stroke: '#1b5e20', width: 2, dash: [6, 4], value: euro },
    ],
    axes: [
      { values: function (u, splits) { return splits.map(function (ts) { return tick.format(new Date(ts * 1000)); }); } },
      { values: function (u, values) { return values.map(function (v) { return '€' + v; }); }, size: 70 },
    ],
  });
  var plot = new uPlot(opts, [xs, taken, paid, refunded, net], holder);
  window.addEventListener('resize', function () { plot.setSize(size()); });
})();
`;
