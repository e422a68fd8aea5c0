// A recipe patch is text a model (or a researcher) wrote: the experiment page's diff view, its hypothesis and the
// reason the checks gave, and the campaign page's recipe history, show it as text, never as markup, so a patch cannot
// script the dashboard a researcher reads.
import { recipeHistorySection, recipeSection } from '../../server/dashboard/recipe-sections';

const ATTACK = '<img src=x onerror="fetch(`/api`)"><script>alert(1)</script>';
const DIFF = `diff --git a/train.py b/train.py
--- a/train.py
+++ b/train.py
@@ -1,2 +1,2 @@
-lr = 0.01
+lr = 0.02  # ${ATTACK}
 steps = 100
`;
const C1 = 'a'.repeat(40);
const C2 = 'b'.repeat(40);

test('a diff, its hypothesis and its reason that carry markup are escaped on the experiment page', () => {
  const page = recipeSection('c', {
    commit: C2,
    patch: {
      id: 'c/inner/1/e3/patch',
      parent: C1,
      proposer: 'agent:m',
      summary: `train.py +1 -1 ${ATTACK}`,
      hypothesis: ATTACK,
      status: 'rejected',
      reason: ATTACK,
      diff: DIFF,
    },
  }).html;
  expect(page).not.toContain('<img');
  expect(page).not.toContain('<script');
  expect(page).toContain('<span class="add">+lr = 0.02  # &lt;img src=x onerror=&quot;fetch(`/api`)&quot;&gt;&lt;script&gt;');
  expect(page).toContain('<span class="del">-lr = 0.01</span>');
});

test('the recipe history escapes a kept patch summary and hypothesis', () => {
  const page = recipeHistorySection({
    imported: C1,
    metric: 'exact_match',
    kept: [
      {
        commit: C2,
        parent: C1,
        keptAt: '2026-12-06T13:40:00.000Z',
        score: 0.5,
        experimentId: 'c/inner/1/e3',
        patch: { id: 'p', proposer: `researcher:${ATTACK}`, summary: ATTACK, hypothesis: ATTACK },
      },
    ],
  }).html;
  expect(page).not.toContain('<img');
  expect(page).not.toContain('<script');
  expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
});
