/**
 * The console's one stylesheet, kept as a module so the built package carries it (like the
 * migrations' SQL). Served at /console/assets/console.css.
 */
export const consoleCss = /* css */ `
:root {
  --ink: #1c2430;
  --muted: #4d5866;
  --line: #d5dbe3;
  --paper: #ffffff;
  --ground: #f3f5f8;
  --brand: #0b5cad;
  --brand-ink: #ffffff;
  --good: #176b3a;
  --good-ground: #e3f4ea;
  --bad: #a4161a;
  --bad-ground: #fbe7e7;
  --warn: #7a4b00;
  --warn-ground: #fff3d6;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 16px;
  line-height: 1.45;
  color: var(--ink);
  background: var(--ground);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--brand); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible,
summary:focus-visible, textarea:focus-visible {
  outline: 3px solid #f5a623;
  outline-offset: 2px;
}
.skip { position: absolute; left: -999px; top: 0; background: var(--paper); padding: .5rem; }
.skip:focus { left: .5rem; z-index: 10; }

.top {
  display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem;
  background: var(--brand); color: var(--brand-ink); padding: .6rem 1rem;
}
.top a, .top .link { color: var(--brand-ink); }
.brand { font-weight: 700; text-decoration: none; font-size: 1.05rem; }
.brand span { font-weight: 400; opacity: .9; }
.shop-name { font-weight: 600; padding-left: .75rem; border-left: 1px solid rgba(255,255,255,.5); }
.who { margin-left: auto; display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; }
.inline { display: inline; margin: 0; }
button.link {
  background: none; border: 0; padding: 0; font: inherit; text-decoration: underline;
  cursor: pointer; color: var(--brand);
}

.shop-menu { background: var(--paper); border-bottom: 1px solid var(--line); }
/* The tabs wrap onto more rows on a narrow screen: none is hidden past the edge. */
.shop-menu ul { list-style: none; margin: 0; padding: 0 .5rem; display: flex; flex-wrap: wrap; gap: 0 .25rem; }
.shop-menu a {
  display: block; padding: .65rem .7rem; text-decoration: none; white-space: nowrap;
  color: var(--ink); border-bottom: 3px solid transparent;
}
.shop-menu a[aria-current="page"] { border-bottom-color: var(--brand); font-weight: 600; }

main { max-width: 72rem; margin: 0 auto; padding: 1rem 1rem 3rem; }
main.narrow { max-width: 28rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
.lead { color: var(--muted); margin-top: 0; }
.note { background: var(--warn-ground); color: var(--warn); padding: .5rem .75rem; border-radius: 6px; }

.flash { padding: .75rem 1rem; border-radius: 6px; font-weight: 500; }
.flash-done { background: var(--good-ground); color: var(--good); }
.flash-problem { background: var(--bad-ground); color: var(--bad); }

.card { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; }
.stack { display: flex; flex-direction: column; gap: .9rem; }
.row { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; }
label { display: flex; flex-direction: column; gap: .25rem; font-weight: 500; }
label.check { flex-direction: row; align-items: center; font-weight: 400; }
input, select, textarea {
  font: inherit; padding: .5rem .6rem; border: 1px solid #8a94a3; border-radius: 6px;
  background: var(--paper); color: var(--ink); min-height: 2.5rem;
}
button, .button {
  font: inherit; font-weight: 600; padding: .55rem 1rem; border-radius: 6px; min-height: 2.5rem;
  border: 1px solid var(--brand); background: var(--brand); color: var(--brand-ink);
  cursor: pointer; text-decoration: none; display: inline-block;
}
button.secondary { background: var(--paper); color: var(--brand); }
button.danger { background: var(--bad); border-color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }

.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: .75rem; margin: 1rem 0; }
.figures div { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; }
.figures dt { color: var(--muted); font-size: .9rem; }
.figures dd { margin: .2rem 0 0; font-size: 1.5rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.figures .net { border-color: var(--brand); border-width: 2px; }

.table-wrap { overflow-x: auto; background: var(--paper); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding: .6rem .75rem; }
th, td { padding: .5rem .75rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: #eef2f7; font-size: .9rem; white-space: nowrap; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.total th, tr.total td, tfoot th, tfoot td { font-weight: 700; border-top: 2px solid var(--ink); }
td.empty { color: var(--muted); }
/* Kept in sight at the left of a wide table's scroll region (a narrow screen). */
td.empty > span { position: sticky; left: .75rem; display: inline-block; max-width: calc(100vw - 3rem); }
code { font-size: .92em; overflow-wrap: anywhere; }

.badge { display: inline-block; padding: .1rem .5rem; border-radius: 6px; font-size: .85rem; font-weight: 600; }
.badge-good { background: var(--good-ground); color: var(--good); }
.badge-bad { background: var(--bad-ground); color: var(--bad); }
.badge-warn { background: var(--warn-ground); color: var(--warn); }

.day-picker { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; margin-bottom: 1rem; }
.secret { font-size: 1.1rem; background: var(--warn-ground); padding: .75rem; border-radius: 6px; display: block; }
.chart { margin: 1rem 0; background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: .75rem; }
.chart-area { min-height: 320px; }
.chart figcaption { color: var(--muted); font-size: .9rem; }
details { margin: 1rem 0; }
summary { cursor: pointer; font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; margin-bottom: 1rem; }
.filters label { font-size: .9rem; }
fieldset { margin: 0; min-width: 0; }
legend { font-weight: 600; padding: 0 .25rem; }
table.tiers th, table.tiers td { vertical-align: middle; }
code.card-id { white-space: nowrap; }
.hint { display: block; color: var(--muted); font-size: .9rem; }
pre.pem { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .85rem; }

@media (max-width: 40rem) {
  .top { padding: .5rem .75rem; }
  .shop-name { border-left: 0; padding-left: 0; flex-basis: 100%; order: 1; }
  .who { font-size: .95rem; }
  main { padding: .75rem .6rem 2rem; }
  h1 { font-size: 1.35rem; }
  .figures dd { font-size: 1.25rem; }
  .who { margin-left: 0; }
  th, td { padding: .45rem .5rem; }
}
`;
