// A suite item graded by exact match, numbered `${split}-${k}`, from a task's problem: the shape the tests that build
// their own small task (custom-task, hf-inner-loop, recipe-task) register.
export interface ExactProblem {
  prompt: string;
  answer: string;
  category: string;
}

/** The item; `maxBytes` is the answer's length unless given. */
export function exactItem(split: 'public' | 'heldout', k: number, p: ExactProblem, maxBytes = p.answer.length) {
  return {
    id: `${split}-${k}`,
    split,
    prompt: p.prompt,
    reference: p.answer,
    category: p.category,
    grader: { kind: 'exact_match' as const },
    maxBytes,
  };
}
