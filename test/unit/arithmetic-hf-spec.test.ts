// tasks/arithmetic/arithmetic-hf.yaml: the arithmetic campaign on the HF trainer parses, starts from flywheel-base (the
// base model `flywheel setup hf` pretrains, bound by the worker: no host folder of its own in readOnlyPaths), and
// searches full fine-tuning and LoRA in one categorical.
import path from 'node:path';
import { loadSpecFile } from '../../cli/spec-file';
import { HF_BASE_MODEL_ALIAS } from '../../core/trainer-program';

const SPEC = path.join(__dirname, '..', '..', 'tasks', 'arithmetic', 'arithmetic-hf.yaml');

test('arithmetic-hf.yaml is the arithmetic task on trainer.command hf from flywheel-base, its baseline the base model', () => {
  const spec = loadSpecFile(SPEC);
  const arithmetic = loadSpecFile(path.join(path.dirname(SPEC), 'arithmetic.yaml'));
  expect(spec.task).toEqual(arithmetic.task);
  expect(spec.trainer.command).toBe('hf');
  expect(spec.trainer.fixed.model).toBe(HF_BASE_MODEL_ALIAS);
  expect(spec.trainer.fixed.steps).toBe(0);
  expect(spec.trainer.readOnlyPaths).toEqual([]);
  expect(Object.keys(spec.searchSpace).sort()).toEqual(['loraRank', 'lr', 'steps']);
  const rank = spec.searchSpace.loraRank;
  expect(rank.type === 'categorical' && rank.choices).toEqual(expect.arrayContaining([0, expect.any(Number)]));
  expect(rank.type === 'categorical' && rank.choices.some((c) => typeof c === 'number' && c > 0)).toBe(true);
});
