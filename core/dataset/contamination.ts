// The contamination check a dataset version must pass before any training run: no example may contain an eval item
// (exact), nearly copy one (a share of its character n-grams, see overlap.ts), or carry a suite's canary string.

import { OverlapIndex, type CandidateOverlap, type OverlapOptions } from './overlap';

/** The thresholds the check states in every refusal. 13-character n-grams, a 0.5 share: `findOverlaps`' defaults. */
export const CONTAMINATION_THRESHOLDS: Required<OverlapOptions> = { n: 13, threshold: 0.5 };

export interface ContaminationExample {
  /** Where the example came from (`corpus:file`, `critique:id`). */
  key: string;
  text: string;
}

export interface ContaminationEvalItem {
  id: string;
  split: string;
  /** The item's prompt followed by its reference. */
  text: string;
}

export interface ContaminationCanary {
  /** A name that does not reveal the canary (`suite@1#0`). */
  id: string;
  text: string;
}

export interface ContaminationFinding {
  exampleKey: string;
  /** `overlap`: the example copies eval items; `canary`: it carries a canary. */
  kind: 'overlap' | 'canary';
  /** The eval items overlapped, or the canaries found. */
  ids: string[];
  exact: boolean;
  share: number;
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * The eval items and canaries fingerprinted once: the loop's check asks it for a whole version
 * ({@link findContamination}), `dataset add` for each line as the file streams past.
 */
export class ContaminationIndex {
  private readonly overlaps: OverlapIndex;
  private readonly splitOf: Map<string, string>;

  constructor(
    items: readonly ContaminationEvalItem[],
    private readonly canaries: readonly ContaminationCanary[],
  ) {
    this.overlaps = new OverlapIndex(items, CONTAMINATION_THRESHOLDS);
    this.splitOf = new Map(items.map((i) => [i.id, i.split]));
  }

  /** True when nothing can be found: no item long enough to fingerprint, no canary. */
  get empty(): boolean {
    return this.overlaps.empty && this.canaries.length === 0;
  }

  /** The eval items `text` overlaps (ids as given), or undefined. */
  overlapOf(text: string): CandidateOverlap | undefined {
    return this.overlaps.overlapOf(text);
  }

  /** The split of an indexed item. */
  splitOfItem(id: string): string | undefined {
    return this.splitOf.get(id);
  }

  /** The first n-gram of `text` the item holds (see OverlapIndex.firstSharedGram). */
  firstSharedGram(text: string, itemId: string): string | undefined {
    return this.overlaps.firstSharedGram(text, itemId);
  }

  /** The ids of the canaries `text` carries, verbatim (the same empty list when none: this runs for every line). */
  canariesIn(text: string): readonly string[] {
    let ids: string[] | undefined;
    for (const c of this.canaries) if (text.includes(c.text)) (ids ??= []).push(c.id);
    return ids ?? NONE;
  }
}

export function findContamination(
  examples: readonly ContaminationExample[],
  items: readonly ContaminationEvalItem[],
  canaries: readonly ContaminationCanary[],
): ContaminationFinding[] {
  const index = new ContaminationIndex(items, canaries);
  const found: ContaminationFinding[] = [];
  for (const e of examples) {
    const o = index.overlapOf(e.text);
    if (o)
      found.push({
        exampleKey: e.key,
        kind: 'overlap',
        ids: o.evalIds.map((id) => `${id} (${index.splitOfItem(id)})`),
        exact: o.exact,
        share: Math.round(o.share * 1000) / 1000,
      });
  }
  for (const e of examples) {
    const hits = index.canariesIn(e.text);
    if (hits.length) found.push({ exampleKey: e.key, kind: 'canary', ids: [...hits], exact: true, share: 1 });
  }
  return found;
}

const MAX_LISTED = 10;

/** One line naming the version, the thresholds and the first findings (item ids and canary ids, never their text). */
export function describeContamination(versionId: string, findings: readonly ContaminationFinding[]): string {
  const { n, threshold } = CONTAMINATION_THRESHOLDS;
  const listed = findings
    .slice(0, MAX_LISTED)
    .map((f) =>
      f.kind === 'canary'
        ? `${f.exampleKey} carries canary ${f.ids.join(', ')}`
        : `${f.exampleKey} ${f.exact ? 'contains' : `shares ${f.share} of the ${n}-grams of`} ${f.ids.join(', ')}`,
    );
  const more = findings.length > MAX_LISTED ? `; and ${findings.length - MAX_LISTED} more` : '';
  return `dataset version "${versionId}" is contaminated (${n}-character n-grams, share >= ${threshold}, or a canary): ${findings.length} example(s): ${listed.join('; ')}${more}`;
}
