// A decision's or an outer iteration's reason in a table cell: the short verdict (core/gate/decision-lines.ts), and
// its checks one a line in a collapsed <details>, instead of ~40 wrapped lines of one long reason.
import { decisionLines } from '../../core/gate/decision-lines';
import { html, type Safe } from './html';

export function reasonCell(reason: string | null | undefined): Safe {
  if (!reason) return html``;
  const { verdict, checks } = decisionLines(reason);
  if (!checks.length) return html`${verdict}`;
  return html`<details class="verdict"><summary>${verdict}</summary><ul class="checks-list">${checks.map((c) => html`<li>${c}</li>`)}</ul></details>`;
}
