// What `flywheel dataset add` says about a line the loop's contamination check would refuse: the same index and rule
// (contamination.ts), asked one line at a time as the file streams past, and the answer as `field: problem` naming
// the field that holds the overlap, the item it overlaps and the first n-gram they share (a canary by its id only).
import { CONTAMINATION_THRESHOLDS, type ContaminationIndex } from './contamination';
import { exampleContent, type ExampleLine } from './example-line';

const SPLIT_NAMES: Record<string, string> = { heldout: 'held-out' };

/** The fields a line's text is made of, as a refusal names them, in the order the text has them. */
function fieldsOf(e: ExampleLine): [field: string, text: string][] {
  if ('prompt' in e)
    return [
      ['prompt', e.prompt],
      ['completion', e.completion],
    ];
  return e.messages.map((m, i) => [`messages.${i}.content`, m.content]);
}

/**
 * The first contamination in one line, as `field: problem`, or undefined. The line is read as the loop reads an
 * example (prompt then completion; a chat line's every message), so whatever this passes, the loop's check passes on
 * the same items. A canary is named before an item, so a line holding a held-out item and its canary never has the
 * canary's text printed.
 */
export function lineContamination(index: ContaminationIndex, e: ExampleLine): string | undefined {
  if (index.empty) return undefined;
  const text = exampleContent(e);
  const whole = 'prompt' in e ? 'prompt+completion' : 'messages';
  const fields = fieldsOf(e);
  const [canary] = index.canariesIn(text);
  if (canary) {
    const field = fields.find(([, t]) => index.canariesIn(t).includes(canary))?.[0] ?? whole;
    return `${field}: carries canary ${canary}`;
  }
  const overlap = index.overlapOf(text);
  if (!overlap) return undefined;
  const item = overlap.evalIds[0];
  let [field, gram] = [whole, ''];
  for (const [name, t] of [...fields, [whole, text]]) {
    const g = index.firstSharedGram(t, item);
    if (g === undefined) continue;
    [field, gram] = [name, g];
    break;
  }
  const split = index.splitOfItem(item) ?? '';
  return `${field}: overlaps ${SPLIT_NAMES[split] ?? split} item ${item} (${CONTAMINATION_THRESHOLDS.n}-gram ${JSON.stringify(gram)})`;
}
