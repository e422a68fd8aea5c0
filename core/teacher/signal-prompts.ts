// The prompts the signal builders put in front of a model: the revision prompt (the production model answers
// again, the critique before the original prompt, so a completion model continues the prompt itself) and the
// critique prompt of a critique example (the model learns to write the critique of an answer). Pure.

/** Bumped whenever either prompt changes (the revisions and examples they make change with it). */
export const SIGNAL_PROMPTS_VERSION = 'signal-prompts.v1';

/** What the production model is asked to revise an answer: the critique, then the original prompt, last. */
export function revisionPromptOf(prompt: string, output: string, critique: string): string {
  return `An earlier answer, ${JSON.stringify(output)}, to the prompt below was critiqued: ${critique}\nAnswer again.\n${prompt}`;
}

/** The prompt of a critique example: the prompt and the answer to critique; the completion is the critique. */
export function critiquePromptOf(prompt: string, output: string): string {
  return `Critique the answer to the prompt.\nPrompt: ${JSON.stringify(prompt)}\nAnswer: ${JSON.stringify(output)}\nCritique: `;
}
