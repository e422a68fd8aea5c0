// The fixed reference of the per-category bound. Measured against the moving incumbent, losses compound: each
// promotion may give up a little of a category and pass (in one run no-carry went 0.997 → 0.983 → 0.943, every step
// inside a 0.05 bound). Measured against an anchor that does not move, the sum of the steps is what is bounded.

/** Where the anchor came from. */
export type AnchorSource = 'setting' | 'first-promotion' | 'incumbent';

export interface CategoryAnchor {
  checkpointId: string;
  source: AnchorSource;
  /** Set when the anchor wanted (a setting, the first promotion) had no held-out scores on this suite: why the incumbent stands in. */
  fallback?: string;
}

/**
 * The anchor a gate wants: `promotion.anchor` if set, else the campaign's first promoted checkpoint, else (before the
 * first promotion) the incumbent itself, which is then the same comparison as before anchors.
 */
export function wantedAnchor(setting: string | undefined, firstPromoted: string | undefined, incumbent: string): CategoryAnchor {
  if (setting) return { checkpointId: setting, source: 'setting' };
  if (firstPromoted) return { checkpointId: firstPromoted, source: 'first-promotion' };
  return { checkpointId: incumbent, source: 'incumbent' };
}
