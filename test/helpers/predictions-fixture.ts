// Public predictions to show: a suite `rv@1` with four public items in two categories and one held-out and one test
// item, and the public results of LOOP/e3 and LOOP/e37 with their outputs (e3's held-out row too: ids and scores
// only). The experiments' rows are the caller's. Shared by the dashboard's and the CLI's predictions tests.

/** Text only sealed items hold: no page or command may show it, nor their ids. */
export const SEALED = ['rv-heldout-item', 'HELDOUT-PROMPT-7f3', 'HELDOUT-REF-7f3', 'rv-test-item', 'TEST-PROMPT-9c2', 'TEST-REF-9c2'];

/** A suite with four public items in two categories and one held-out and one test item; e3's and e37's results. */
export async function seedPredictions(q: (text: string, params?: unknown[]) => Promise<unknown>, loop: string): Promise<void> {
  await q(`INSERT INTO eval_suites (id, name, version, content_hash) VALUES ('rv@1', 'rv', 1, 'h')`);
  const items = [
    ['rv@1/add', 'public', 'math', 'What is 2+2? ', '4'],
    ['rv@1/mul', 'public', 'math', 'What is 3*3? ', '9'],
    ['rv@1/greet', 'public', 'text', 'Say hello to Ada: ', 'Hello, Ada!'],
    ['rv@1/fn', 'public', 'text', 'def add(a, b):', '    return a + b'],
    ['rv@1/rv-heldout-item', 'heldout', 'math', 'HELDOUT-PROMPT-7f3', 'HELDOUT-REF-7f3'],
    ['rv@1/rv-test-item', 'test', 'math', 'TEST-PROMPT-9c2', 'TEST-REF-9c2'],
  ];
  for (const [id, split, category, prompt, reference] of items)
    await q(
      `INSERT INTO eval_items (id, suite_id, split, grader, category, prompt, reference, content_hash, source_file) VALUES ($1, 'rv@1', $2, 'exact_match', $3, $4, $5, $1, 'f')`,
      [id, split, category, prompt, reference],
    );
  const result = async (e: number, split: string, perItem: object, details: object, metrics: object) => {
    const ckpt = `${loop}/e${e}/r1/step-1000`;
    await q(
      `INSERT INTO eval_results (id, checkpoint_id, experiment_id, suite_id, split, item_count, metrics, per_item, details) VALUES ($1, $2, $3, 'rv@1', $4, $5, $6, $7, $8)`,
      [
        `${ckpt}|rv@1|${split}`,
        ckpt,
        `${loop}/e${e}`,
        split,
        Object.keys(perItem).length,
        JSON.stringify(metrics),
        JSON.stringify(perItem),
        JSON.stringify(details),
      ],
    );
  };
  await result(
    3,
    'public',
    { 'rv@1/add': 1, 'rv@1/mul': 0, 'rv@1/greet': 0, 'rv@1/fn': 1 },
    { errors: {}, outputs: { 'rv@1/add': '4', 'rv@1/mul': '6', 'rv@1/greet': 'Hello, Bob!', 'rv@1/fn': '    return a + b' } },
    { pass_rate: 0.5, 'category.math': 0.5, 'category.text': 0.5000000000000001, grader_errors: 0 },
  );
  // The held-out row holds ids and scores only; it must not show up, nor its id.
  await result(3, 'heldout', { 'rv@1/rv-heldout-item': 1 }, {}, { pass_rate: 1 });
  await result(
    37,
    'public',
    { 'rv@1/add': 1, 'rv@1/mul': 1, 'rv@1/greet': 0, 'rv@1/fn': 0 },
    { errors: {}, outputs: { 'rv@1/add': '4', 'rv@1/mul': '9', 'rv@1/greet': 'Hi Ada', 'rv@1/fn': '    return a - b' } },
    { pass_rate: 0.5 },
  );
}
