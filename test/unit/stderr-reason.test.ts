// The line of a failed trainer's stderr that says why it failed (core/stderr-reason.ts).
import { stderrReason } from '../../core/stderr-reason';

test.each([
  [
    'a one-line failure',
    'charlm: loading\ncharlm: run.json: params.hiden is not a charlm knob (knobs: context)\n',
    'charlm: run.json: params.hiden is not a charlm knob (knobs: context)',
  ],
  [
    'a Python traceback: its last line',
    'Traceback (most recent call last):\n  File "/x/main.py", line 3, in <module>\n    main()\nValueError: cannot load the tokenizer: couldn\'t connect\n',
    "ValueError: cannot load the tokenizer: couldn't connect",
  ],
  [
    "a Node crash: the error, not the runtime's banner or its frames",
    '/x/train.js:12\n    throw new Error("boom");\n    ^\n\nError: boom\n    at Object.<anonymous> (/x/train.js:12:11)\n\nNode.js v20.20.2\n',
    'Error: boom',
  ],
  [
    'warnings after the error are noise',
    'RuntimeError: CUDA out of memory\n/x/y.py:4: UserWarning: something\n  warnings.warn(\n',
    'RuntimeError: CUDA out of memory',
  ],
])('%s', (_, tail, line) => expect(stderrReason(tail)).toBe(line));

test('nothing to say: undefined; a long line is cut', () => {
  expect(stderrReason(undefined)).toBeUndefined();
  expect(stderrReason('\n   at x\n')).toBeUndefined();
  expect(stderrReason('x'.repeat(400), 20)).toBe(`${'x'.repeat(19)}…`);
});
