// The CLI's one integer-flag parser: a good value is the number, anything else one UsageError line (exit 2) naming
// the flag, the range and what was given; and every integer flag of every command goes through it.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, exitCodeFor } from '../../cli/errors';
import { integerOption } from '../../cli/integer-option';
import { buildProgram } from '../../cli/program';

test('parses integers within the range', () => {
  expect(integerOption('--limit', 0)('0')).toBe(0);
  expect(integerOption('--limit', 0)('42')).toBe(42);
  expect(integerOption('--seed')('-7')).toBe(-7);
  expect(integerOption('--port', 0, 65535)('65535')).toBe(65535);
});

test.each([
  [integerOption('--iterations', 1, 999_999), 'two', '--iterations must be an integer from 1 to 999999, got "two"'],
  [integerOption('--iterations', 1, 999_999), '0', '--iterations must be an integer from 1 to 999999, got "0"'],
  [integerOption('--limit', 1), '1.5', '--limit must be an integer >= 1, got "1.5"'],
  [integerOption('--limit', 1), '', '--limit must be an integer >= 1, got ""'],
  [integerOption('--limit', 1), '1e3', '--limit must be an integer >= 1, got "1e3"'],
  [integerOption('--limit', 1), ' 3', '--limit must be an integer >= 1, got " 3"'],
  [integerOption('--seed'), '99999999999999999999', '--seed must be an integer, got "99999999999999999999"'],
  [integerOption('--port', 0, 65535), '65536', '--port must be an integer from 0 to 65535, got "65536"'],
])('refuses a bad value with one line naming the flag (%#)', (parse, value, message) => {
  let err: unknown;
  try {
    parse(value);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(UsageError);
  expect((err as Error).message).toBe(message);
  expect(exitCodeFor(err)).toBe(2);
});

test('a bad integer flag stops the command before its action runs, exit 2', async () => {
  const program = buildProgram('budget');
  await expect(program.parseAsync(['budget', 'some-campaign', '--parallelism', 'two'], { from: 'user' })).rejects.toThrow(
    '--parallelism must be an integer >= 1, got "two"',
  );
});

test('no command parses an integer flag another way', () => {
  const dir = path.join(__dirname, '..', '..', 'cli');
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const offenders = files.filter((f) => {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    // An option's parser written inline (`(v) => Number(v)`, `parseInt`, `Number` passed as the parser).
    return (
      /\.(option|requiredOption)\([^;]*(\(\w+\)\s*=>\s*(Number|parseInt|parseFloat)\(|,\s*(Number|parseInt|parseFloat)\s*[,)])/s.test(
        text,
      ) || /\bparseInt\(/.test(text)
    );
  });
  expect(offenders).toEqual([]);
});
