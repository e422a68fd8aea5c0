// The recipe on the dashboard (a campaign with trainer.recipe): on the experiment page the commit it ran, the patch
// that made it (a diff view), its parent and what the checks made of it; on the campaign page the kept commits, newest
// (the best) first, like `git log` with scores. Patch text is model- or researcher-written: escaped by `html`.
import type { ExperimentRecipe, KeptRecipeCommit } from '../../services/recipe-history';
import { fmtNum, fmtTime, href, html, message, raw, table, type Safe } from './html';
import { diffView } from './patch-view';

const short = (commit: string | null | undefined): Safe =>
  commit ? html`<code title="${commit}">${commit.slice(0, 12)}</code>` : raw('–');

/** The experiment page's recipe block; nothing for an experiment of a campaign without a recipe. */
export function recipeSection(campaignId: string, r: ExperimentRecipe | undefined): Safe {
  if (!r || (!r.commit && !r.patch)) return raw('');
  const p = r.patch;
  if (!p)
    return html`<h2 id="recipe-heading">Recipe</h2><p id="recipe">Commit ${short(r.commit)}: the campaign's recipe as it was, knobs only (no patch).</p>`;
  const commit = r.commit ?? p.parent;
  return html`<h2 id="recipe-heading">Recipe patch</h2>
<table id="recipe"><tbody>
<tr><th>commit</th><td>${short(r.commit)}</td></tr>
<tr><th>parent</th><td>${short(p.parent)}</td></tr>
<tr><th>patch</th><td><code>${p.id}</code> · ${p.summary || '–'} · by ${p.proposer}</td></tr>
<tr><th>checks</th><td>${p.status}${p.reason ? html` <span class="muted">(${p.reason})</span>` : ''}</td></tr>
<tr><th>hypothesis</th><td>${p.hypothesis || '–'}</td></tr>
</tbody></table>
${diffView(p.diff, `flywheel recipe show ${campaignId}@${commit} --diff`)}`;
}

/** The campaign page's history of kept commits; nothing when the campaign has no recipe. */
export function recipeHistorySection(history: { kept: KeptRecipeCommit[]; imported: string; metric: string } | undefined): Safe {
  if (!history) return raw('');
  const rows: Array<KeptRecipeCommit | { imported: string }> = [...history.kept, { imported: history.imported }];
  return html`<h2 id="recipe-history-heading">Recipe history</h2>
<p class="muted">Kept commits, newest (the best) first: each beat the best before it on public ${history.metric}. <code>flywheel recipe log</code> prints the same.</p>
${history.kept.length ? '' : message('No patch has been kept yet: the experiments run the imported commit.')}${table(
    rows,
    [
      { head: 'commit', cell: (k) => short('imported' in k ? k.imported : k.commit) },
      { head: 'parent', cell: (k) => ('imported' in k ? html`<span class="muted">imported</span>` : short(k.parent)) },
      { head: `public ${history.metric}`, cell: (k) => ('imported' in k ? '–' : fmtNum(k.score)), num: true },
      {
        head: 'patch',
        cell: (k) =>
          'imported' in k || !k.patch ? '–' : html`${k.patch.summary || k.patch.id} <span class="muted">by ${k.patch.proposer}</span>`,
      },
      { head: 'hypothesis', cell: (k) => ('imported' in k || !k.patch ? '–' : k.patch.hypothesis || '–') },
      {
        head: 'experiment',
        cell: (k) => ('imported' in k || !k.experimentId ? '–' : html`<a href="${href.experiment(k.experimentId)}">${k.experimentId}</a>`),
      },
      { head: 'kept', cell: (k) => ('imported' in k ? '–' : fmtTime(k.keptAt)) },
    ],
    'id="recipe-history"',
  )}`;
}
