// The demo campaign file is valid and searches exactly the built-in task's space.
import { loadSpecFile } from '../../cli/spec-file';
import { DEMO_SPEC } from '../../cli/commands/demo';
import { BUILTIN_SEARCH_SPACE } from '../../tasks/builtin-code/search-space';

test('builtin-demo.yaml validates and its search space is the built-in one', () => {
  const spec = loadSpecFile(DEMO_SPEC);
  expect(spec.searchSpace).toEqual(BUILTIN_SEARCH_SPACE);
  expect(spec.trainer.command).toBe('builtin');
});
