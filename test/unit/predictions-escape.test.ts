// A model's output is untrusted text: the predictions view shows it, its diff against the reference and the grader's
// error as text, never as markup, so an output cannot script the dashboard a researcher reads.
import { predictionsSection } from '../../server/dashboard/predictions-view';

const ATTACK = '<img src=x onerror="fetch(`/api`)"><script>alert(1)</script>';

test('an output, its diff and its error that carry markup are escaped in the predictions view', () => {
  const page = predictionsSection(
    {
      experimentId: 'c/e1',
      checkpointId: 'c/e1/ckpt',
      suiteId: 's',
      metrics: { pass_rate: 0 },
      outputsStored: true,
      categories: ['code'],
      items: [
        {
          id: 's/p1',
          category: 'code',
          grader: 'exact_match',
          prompt: 'p',
          reference: 'ref',
          output: ATTACK,
          score: 0,
          verdict: 'fail',
          error: ATTACK,
        },
      ],
    },
    new URL('http://127.0.0.1/experiments/c%2Fe1'),
    {},
  ).html;
  expect(page).not.toContain('<img');
  expect(page).not.toContain('<script');
  expect(page).toContain('&lt;img src=x onerror=&quot;');
});
