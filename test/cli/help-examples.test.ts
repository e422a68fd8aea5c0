// Every command and subcommand of `flywheel` has `--help` with at least one example invocation: the test walks
// the commander tree, so a new command without one fails here.
import type { Command } from 'commander';
import { buildProgram } from '../../cli/program';

function helpOf(c: Command): string {
  let text = '';
  c.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
  c.outputHelp();
  return text;
}

function walk(c: Command, path: string[] = []): Array<[string, string]> {
  return c.commands.flatMap((sub) => [
    [[...path, sub.name()].join(' '), helpOf(sub)] as [string, string],
    ...walk(sub, [...path, sub.name()]),
  ]);
}

test('every command has --help with an example that runs flywheel', () => {
  const commands = walk(buildProgram());
  expect(commands.map(([name]) => name)).toEqual(
    expect.arrayContaining(['up', 'serve', 'report', 'status', 'pause', 'schedule create', 'feedback import', 'lineage']),
  );
  const missing = commands.filter(([, help]) => !/Examples?:\n(.*\n)*?\s+\$ (npx )?(\S+=\S+ )*flywheel /.test(help)).map(([name]) => name);
  expect(missing).toEqual([]);
});

test('a command without an example is caught', () => {
  const program = buildProgram('report');
  program.command('bare').description('no example here');
  expect(
    walk(program)
      .filter(([, help]) => !/Examples?:/.test(help))
      .map(([n]) => n),
  ).toEqual(['bare']);
});
