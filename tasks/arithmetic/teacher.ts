// The arithmetic task's teacher: it critiques a wrong sum the way a person checking it by hand would, column by
// column — which column's carry was dropped (or invented), which digit was wrong and what it should be — instead of
// a token diff. It also tells the outer loop a prompt's category and verifies an answer as the suite's graders do
// (the first number, exactly). Pure; services/example-tasks.ts names it, the spec picks it
// (`outerLoop.teacher.task: arithmetic`).
import { critique as tokenDiffCritique, type Failure, type TeacherCritique, type TrainingSignal } from '../../core/teacher/builtin-teacher';
import type { TaskTeacher } from '../../core/teacher/task-teacher';
import { firstNumber } from '../../core/graders/numeric-tolerance';
import { ANSWER_WIDTH, answerOf, carries, categoryOf, parsePrompt, type Problem } from './problems';

export const ARITHMETIC_TEACHER = 'builtin:arithmetic';
export const ARITHMETIC_TEACHER_PROMPT_VERSION = 'arithmetic-columns-v1';
export const ARITHMETIC_PREAMBLE = "Written by the arithmetic task's teacher (no model), checking the sum column by column.";

const COLUMNS = ['units', 'tens', 'hundreds'] as const;

interface Column {
  name: (typeof COLUMNS)[number];
  /** The operand digits added in the column (none in the hundreds column of a two-digit sum). */
  digits: [number, number];
  carryIn: number;
  total: number;
  digit: number;
}

/** The columns of `a + b` as written by hand, units first. */
export function columnsOf(p: Problem): Column[] {
  let carryIn = 0;
  return COLUMNS.map((name, k) => {
    const digits: [number, number] = [Math.floor(p.a / 10 ** k) % 10, Math.floor(p.b / 10 ** k) % 10];
    const total = digits[0] + digits[1] + carryIn;
    const column = { name, digits, carryIn, total, digit: total % 10 };
    carryIn = total >= 10 ? 1 : 0;
    return column;
  });
}

/** How a column adds up: "3+8=11", "5+2+1=8" (1 carried in), "1 carried" (the hundreds column). */
const sumText = (c: Column): string =>
  c.name === 'hundreds' ? `${c.carryIn} carried` : `${c.digits[0]}+${c.digits[1]}${c.carryIn ? '+1' : ''}=${c.total}`;

/** What went wrong in one column whose digit is `got` instead of the right one. */
function columnFinding(cols: Column[], k: number, got: number): string {
  const c = cols[k];
  const prev = cols[k - 1];
  const head = `the ${c.name} digit is ${got}, not ${c.digit}`;
  if (prev && c.carryIn === 1 && got === (c.digit + 9) % 10)
    return `${head}: the carry from the ${prev.name} column (${sumText(prev)}) was dropped`;
  if (prev && c.carryIn === 0 && got === (c.digit + 1) % 10)
    return `${head}: a carry was added, but the ${prev.name} column does not carry (${sumText(prev)})`;
  return `${head} (${sumText(c)}${c.total >= 10 ? `: write ${c.digit}, carry 1` : ''})`;
}

function categoryText(p: Problem, cols: Column[]): string {
  const n = carries(p.a, p.b);
  if (n === 0) return 'a sum with no carry';
  const carrying = cols.filter((c) => c.name !== 'hundreds' && c.total >= 10).map((c) => `the ${c.name} column (${sumText(c)})`);
  return `a sum that carries, from ${carrying.join(' and from ')}`;
}

/** The critique of an answer to `p`, and the share of the answer's digits that were wrong (in [0, 1]). */
export function critiqueSum(p: Problem, output: string): { text: string; wrong: number } {
  const cols = columnsOf(p);
  const want = answerOf(p);
  const intro = `${p.a}+${p.b} is ${want}, ${categoryText(p, cols)}.`;
  const got = firstNumber(output);
  if (got === undefined) return { text: `${intro} The output ${JSON.stringify(output)} holds no number.`, wrong: 1 };
  if (!Number.isInteger(got) || got < 0 || got >= 10 ** ANSWER_WIDTH)
    return { text: `${intro} The output's answer, ${got}, is not a sum of two two-digit numbers (0 to 198).`, wrong: 1 };
  const have = String(got).padStart(ANSWER_WIDTH, '0');
  if (got === p.a + p.b) {
    const written = output.trim().split(/\s/)[0];
    if (written === want) return { text: `${intro} The output's answer, ${want}, is already right.`, wrong: 0 };
    return {
      text: `${intro} The output's sum is right but written ${JSON.stringify(written)}; answers are written fixed-width, ${ANSWER_WIDTH} digits: ${want}.`,
      wrong: 0,
    };
  }
  const findings: string[] = [];
  for (let k = 0; k < ANSWER_WIDTH; k++) {
    const g = Number(have[ANSWER_WIDTH - 1 - k]);
    if (g !== cols[k].digit) findings.push(columnFinding(cols, k, g));
  }
  const sentence = findings.join('; ');
  return {
    text: `${intro} The output ${have} is wrong: ${sentence.charAt(0).toLowerCase() + sentence.slice(1)}.`,
    wrong: findings.length / ANSWER_WIDTH,
  };
}

/** `1 + share of wrong digits`, rounded to 3 decimals: a right but misformatted answer weighs 1, three wrong digits 2. */
const weightOf = (wrong: number): number => Math.round((1 + wrong) * 1000) / 1000;

export const arithmeticTeacher: TaskTeacher = {
  name: ARITHMETIC_TEACHER,
  promptVersion: ARITHMETIC_TEACHER_PROMPT_VERSION,
  critique(failure: Failure): TeacherCritique {
    const p = parsePrompt(failure.prompt);
    // A prompt that is not a sum: the generic teacher's token diff, which says how it was made.
    if (!p) return tokenDiffCritique(failure);
    const { prompt, output, reference } = failure;
    const { text, wrong } = critiqueSum(p, output);
    const weight = weightOf(wrong);
    const category = failure.category ?? categoryOf(p);
    const signals: TrainingSignal[] = [{ kind: 'sft', prompt, target: reference, weight, category }];
    if (output !== '' && output !== reference) signals.push({ kind: 'pair', prompt, chosen: reference, rejected: output, weight });
    return { text: `${ARITHMETIC_PREAMBLE} ${text} Weight ${weight}.`, signals };
  },
  categoryOf(prompt) {
    const p = parsePrompt(prompt);
    return p ? categoryOf(p) : undefined;
  },
  verify(prompt, output) {
    const p = parsePrompt(prompt);
    return p ? firstNumber(output) === p.a + p.b : undefined;
  },
};
