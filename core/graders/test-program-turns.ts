// Whose turn it is on the test-program wire. The tests' process and the output's process call each other
// synchronously, so at any moment exactly one of them may speak: the tests (nothing pending, or the output waits on
// them), or the output (the tests wait on it). The eval activity relays only a message whose side holds the turn, an
// answer only to the innermost pending call, and counts the calls; anything else from the output is a violation that
// makes the item an error. Pure: the relay does the I/O.

export type Side = 'tests' | 'output';

/** Calls nested deeper than this (each side calling the other back) end the item. */
export const MAX_NESTED_CALLS = 1000;
/** Calls in one item, both ways together. */
export const MAX_CALLS = 1_000_000;

export class TurnTracker {
  /** Pending calls, innermost last: who made each, and its id. */
  private readonly pending: { from: Side; id: number }[] = [];
  /** Calls relayed so far, both ways. */
  calls = 0;

  /** Whose turn it is. */
  get turn(): Side {
    const top = this.pending.at(-1);
    return !top || top.from === 'output' ? 'tests' : 'output';
  }

  /** Whether the tests wait on the output (a call of theirs is pending, innermost). */
  get testsWaiting(): boolean {
    return this.turn === 'output';
  }

  /** Whether no call is pending. */
  get idle(): boolean {
    return this.pending.length === 0;
  }

  /** A call or an answer from `from`: undefined when it may be relayed, else what is wrong with it. */
  accept(from: Side, message: unknown): string | undefined {
    if (from !== this.turn) return 'a message out of turn';
    if (message === null || typeof message !== 'object' || Array.isArray(message)) return 'a message that is not an object';
    const m = message as Record<string, unknown>;
    if (typeof m.op === 'string' && 're' in m === false) {
      if (!Number.isSafeInteger(m.id)) return 'a call without an id';
      if (from === 'output' && m.op !== 'call') return `a call of "${m.op.slice(0, 40)}": the output may only call the tests' callbacks`;
      if (this.pending.length >= MAX_NESTED_CALLS) return `calls nested deeper than ${MAX_NESTED_CALLS}`;
      if (++this.calls > MAX_CALLS) return `more than ${MAX_CALLS} calls in one item`;
      this.pending.push({ from, id: m.id as number });
      return undefined;
    }
    if ('re' in m && !('op' in m)) {
      const top = this.pending.at(-1);
      if (!top || top.from === from || m.re !== top.id) return 'an answer to no pending call';
      this.pending.pop();
      return undefined;
    }
    return 'a message that is neither a call nor an answer';
  }
}
