// A recipe patch as the dashboard shows it: a unified diff, line by line, added lines green and removed lines red. The
// diff is text a model (or a researcher) wrote: every line goes through `html`'s escaping, never in as markup.
import { html, type Safe } from './html';

/** Lines drawn at most; a longer diff ends with a note (`flywheel recipe show CAMPAIGN@COMMIT --diff` prints it all). */
export const DIFF_LINES = 400;

const KIND: Array<[prefix: string, cls: string]> = [
  ['+++', 'file'],
  ['---', 'file'],
  ['diff ', 'file'],
  ['@@', 'hunk'],
  ['+', 'add'],
  ['-', 'del'],
];

const classOf = (line: string): string => KIND.find(([p]) => line.startsWith(p))?.[1] ?? 'ctx';

/** The diff as a <pre class="patch">, one span per line; `hint` says how to see a cut diff whole. */
export function diffView(diff: string, hint = ''): Safe {
  const lines = diff.replace(/\n$/, '').split('\n');
  const shown = lines.slice(0, DIFF_LINES);
  const more = lines.length - shown.length;
  return html`<pre class="patch">${shown.map((l) => html`<span class="${classOf(l)}">${l}</span>\n`)}${
    more > 0 ? html`<span class="muted">… ${more} more line${more === 1 ? '' : 's'}${hint ? `: ${hint}` : ''}</span>` : ''
  }</pre>`;
}
