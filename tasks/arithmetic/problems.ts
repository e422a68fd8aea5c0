// The arithmetic task's problems: two-digit additions, how they are written for the built-in byte-level model, and
// the category each belongs to. Pure.
//
// The answer is written fixed-width, zero-padded to three digits ("23+58=081"): every answer digit then sits at the
// same distance from "=" and from the operand digits it depends on, in every example, and the built-in model (an MLP
// over the last `context` bytes, one weight matrix per position) learns one layout instead of two. Measured on the
// built-in trainer (context 10, embed 16, hidden 128, 8000 steps, 3000 examples): held-out pass rate carry/no-carry
// 0.36/0.13 written plainly ("81"), 0.52/0.81 fixed-width. Written reversed (units first, the order carries flow)
// learns about as well (0.69/0.85) but is not what a person reads as a sum.

/** The smallest and largest operand. */
export const MIN_OPERAND = 10;
export const MAX_OPERAND = 99;
/** Digits of every answer: a two-digit sum has at most three. */
export const ANSWER_WIDTH = 3;

/** `no-carry`: no column carries (23+51); `carry`: at least one does (23+58, 75+41). */
export const CATEGORIES = ['no-carry', 'carry'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Problem {
  a: number;
  b: number;
}

/** How many columns carry when adding a and b by hand. */
export function carries(a: number, b: number): number {
  let n = 0;
  let carry = 0;
  for (; a > 0 || b > 0; a = Math.floor(a / 10), b = Math.floor(b / 10)) {
    carry = (a % 10) + (b % 10) + carry >= 10 ? 1 : 0;
    n += carry;
  }
  return n;
}

export const categoryOf = (p: Problem): Category => (carries(p.a, p.b) > 0 ? 'carry' : 'no-carry');

/** "23+58=": what the model is asked. */
export const promptOf = (p: Problem): string => `${p.a}+${p.b}=`;

/** "081": the answer, fixed-width. */
export const answerOf = (p: Problem): string => String(p.a + p.b).padStart(ANSWER_WIDTH, '0');

/** "081\n": the completion a training line teaches (the newline ends the answer). */
export const completionOf = (p: Problem): string => `${answerOf(p)}\n`;

/** The problem a prompt asks, or undefined when the prompt is not one of this task's. */
export function parsePrompt(prompt: string): Problem | undefined {
  const m = /^(\d+)\+(\d+)=$/.exec(prompt);
  return m ? { a: Number(m[1]), b: Number(m[2]) } : undefined;
}

export const keyOf = (p: Problem): string => `${p.a}+${p.b}`;

/** Every problem of the task, in a fixed order (8100 of them). */
export function allProblems(): Problem[] {
  const out: Problem[] = [];
  for (let a = MIN_OPERAND; a <= MAX_OPERAND; a++) for (let b = MIN_OPERAND; b <= MAX_OPERAND; b++) out.push({ a, b });
  return out;
}
