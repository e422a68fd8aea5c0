// What a feedback event's examples take from the task's own data, so they keep the task's shape: the category of the
// prompt (for per-category loss weights) and the completion's terminator. Pure and deterministic; the dataset builder
// (activities/outer/build-dataset-version.ts) reads it over the parent version's examples.
// - category: the event's own, else that of the example whose prompt is the same, else the one sharing the longest
//   prefix (at least MIN_SHARED_PREFIX characters) with it, else the task teacher's, else the dataset's most common;
// - terminator: when at least TERMINATOR_SHARE of the dataset's completions end with "\n", a correction or revision
//   without one gets it, as the trainer would otherwise learn two conventions.

/** Characters a prompt must share with an example's prompt, from its start, for that example to count as near. */
export const MIN_SHARED_PREFIX = 8;
/** The share of the dataset's completions that must end with the terminator for it to be the convention. */
export const TERMINATOR_SHARE = 0.9;

const TERMINATOR = '\n';

interface ShapeExample {
  prompt: string | null;
  completion: string | null;
  category: string;
}

const sharedPrefix = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
};

export class FeedbackShape {
  /** Prompts in code-unit order, each with its category (the first in category order when prompts repeat). */
  private readonly prompts: Array<{ prompt: string; category: string }>;
  /** The category most examples carry (ties: the first in code-unit order), undefined for an empty dataset. */
  readonly commonCategory: string | undefined;
  /** "\n" when the dataset's completions end with it, else undefined (no convention to follow). */
  readonly terminator: string | undefined;

  constructor(examples: readonly ShapeExample[]) {
    const byPrompt = new Map<string, string>();
    const counts = new Map<string, number>();
    let completions = 0;
    let terminated = 0;
    for (const e of examples) {
      counts.set(e.category, (counts.get(e.category) ?? 0) + 1);
      if (e.prompt) {
        const seen = byPrompt.get(e.prompt);
        if (seen === undefined || e.category < seen) byPrompt.set(e.prompt, e.category);
      }
      if (e.completion) {
        completions++;
        if (e.completion.endsWith(TERMINATOR)) terminated++;
      }
    }
    this.prompts = [...byPrompt].map(([prompt, category]) => ({ prompt, category })).sort((a, b) => (a.prompt < b.prompt ? -1 : 1));
    this.commonCategory = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0];
    this.terminator = completions > 0 && terminated >= TERMINATOR_SHARE * completions ? TERMINATOR : undefined;
  }

  /** The category of the example nearest `prompt`: the same prompt, else the longest shared prefix (ties: the earlier prompt). */
  nearestCategory(prompt: string): string | undefined {
    // In sorted order, the prompt sharing the longest prefix with `prompt` is one of its two neighbours.
    let lo = 0;
    let hi = this.prompts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.prompts[mid].prompt < prompt) lo = mid + 1;
      else hi = mid;
    }
    if (this.prompts[lo]?.prompt === prompt) return this.prompts[lo].category;
    const [before, after] = [this.prompts[lo - 1], this.prompts[lo]];
    const [b, a] = [before ? sharedPrefix(before.prompt, prompt) : -1, after ? sharedPrefix(after.prompt, prompt) : -1];
    const best = b >= a ? before : after;
    return Math.max(a, b) >= MIN_SHARED_PREFIX ? best?.category : undefined;
  }

  /** The event's category: its own, else the nearest example's, else the teacher's (`teacherCategory`), else the common one. */
  categoryOf(
    event: { prompt: string; category?: string | null },
    teacherCategory?: (prompt: string) => string | undefined,
  ): string | undefined {
    return event.category ?? this.nearestCategory(event.prompt) ?? teacherCategory?.(event.prompt) ?? this.commonCategory;
  }

  /** `completion` with the dataset's terminator when it lacks it (an empty completion stays empty). */
  normalise(completion: string): string {
    return this.terminator && completion !== '' && !completion.endsWith(this.terminator) ? completion + this.terminator : completion;
  }
}
