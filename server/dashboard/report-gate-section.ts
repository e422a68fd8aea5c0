// The report's section on the promotion gate: every gate decision of a campaign with the rule that decided it, each
// check's verdict and figures, and the items a hacking-guard rejection names. Markdown text; PostgreSQL only.
import type { Db } from '../../db/client';
import { gateDecisionsOf } from '../../services/queries/decisions';
import { survivorsLine, survivorsOf } from '../../services/queries/survivors';
import { noiseLine } from '../../core/gate/noise-check';
import { ledgerLine } from '../../core/gate/heldout-budget';
import { decisionLines } from '../../core/gate/decision-lines';

/** `- verdict: …` and each check a bullet under it, instead of the record's one line of every check. */
function reasonLines(reason: string): string[] {
  const { verdict, checks } = decisionLines(reason);
  return [`- verdict: ${verdict}`, ...checks.map((c) => `  - ${c}`)];
}

/** Gate decisions (kinds promote, reject and hold; approvals and selections are other sections), oldest first. */
export async function gateDecisionsSection(db: Db, campaignId: string): Promise<string[]> {
  const gates = await gateDecisionsOf(db, campaignId);
  const out = [`## Promotion gate: ${campaignId}`, '', `- ${survivorsLine(await survivorsOf(db, campaignId))}`, ''];
  if (gates.length === 0) return [...out, 'No gate decisions yet.'];
  for (const d of gates) {
    out.push(
      `### ${d.id}: ${d.kind === 'promote' ? 'promoted' : d.kind === 'hold' ? 'HELD for approval' : 'REJECTED'} (rule: ${d.rule})`,
      '',
      `- candidate: ${d.checkpoint_id ?? '?'}`,
      ...reasonLines(d.reason),
    );
    const { noise, checks = {} } = d.figures;
    if (noise) out.push(`- noise: ${noiseLine(noise)}`);
    const spent = ledgerLine(d.figures);
    if (spent) out.push(`- ${spent}`);
    out.push('', '| check | verdict | figures |', '| --- | --- | --- |');
    for (const [rule, c] of Object.entries(checks).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const figures = Object.entries(c)
        .filter(([k]) => k !== 'passed' && k !== 'reason')
        .map(([k, v]) => `${k}=${typeof v === 'number' ? v : String(v)}`)
        .join(', ');
      out.push(`| ${rule} | ${c.passed ? 'pass' : '**fail**'} | ${figures.replace(/\|/g, '\\|')} |`);
    }
    out.push('');
  }
  return out;
}
