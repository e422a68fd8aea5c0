// `/compare?a=&b=`: two experiments (or two campaigns' production models) item by item on the public split, with
// the model's outputs side by side and a diff, filterable by category and by what changed.
import { BadRequestError, NotFoundError, type DashboardContext } from '../context';
import { html, page } from '../html';
import { compareResults, publicPredictions, resolveSubject } from '../../../services/queries/predictions';
import { comparisonSection, filterParams } from '../predictions-view';

export async function comparePage(ctx: DashboardContext, url: URL): Promise<string> {
  const a = url.searchParams.get('a') ?? '';
  const b = url.searchParams.get('b') ?? '';
  const form = html`<form method="get" action="/compare" class="filters">A <input name="a" size="40" value="${a}"> B <input name="b" size="40" value="${b}"> <button>Compare</button>
<span class="muted">an experiment id, or a campaign name (its production model)</span></form>`;
  if (!a || !b) return page('Compare', html`<h1>Compare two models on the public split</h1>${form}`);
  const filter = filterParams(url);
  const results = [];
  for (const name of [a, b]) {
    const subject = await resolveSubject(ctx.db, name);
    if (!subject) throw new NotFoundError(`no experiment, nor campaign with a production model, "${name}"`);
    const p = await publicPredictions(ctx.db, subject, { category: filter.category });
    if (!p) throw new BadRequestError(`"${name}" has no public eval result yet`);
    results.push(p);
  }
  const c = compareResults(results[0], results[1], { category: filter.category, change: filter.change });
  const body = html`<h1>Compare ${a} and ${b}</h1>${form}${comparisonSection(c, { a, b }, filter)}`;
  return page(`Compare ${a} and ${b}`, body);
}
