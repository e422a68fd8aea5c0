// tasks/arithmetic/arithmetic-hf.yaml: the arithmetic campaign on the HF trainer parses, and its placeholder model
// folder is the one folder of the host its sandbox is given beyond its inputs.
import path from 'node:path';
import { loadSpecFile } from '../../cli/spec-file';

const SPEC = path.join(__dirname, '..', '..', 'tasks', 'arithmetic', 'arithmetic-hf.yaml');

test('arithmetic-hf.yaml is the arithmetic task on trainer.command hf, its baseline the untrained model', () => {
  const spec = loadSpecFile(SPEC);
  const arithmetic = loadSpecFile(path.join(path.dirname(SPEC), 'arithmetic.yaml'));
  expect(spec.task).toEqual(arithmetic.task);
  expect(spec.trainer.command).toBe('hf');
  expect(spec.trainer.fixed.steps).toBe(0);
  expect(spec.trainer.readOnlyPaths).toEqual([spec.trainer.fixed.model]);
  expect(Object.keys(spec.searchSpace).sort()).toEqual(['loraRank', 'lr', 'steps']);
});
