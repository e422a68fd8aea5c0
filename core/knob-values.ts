// Knob values a person gives on the command line (`flywheel propose --params lr=0.003,steps=200`), read against the
// campaign's search space: each name must be a knob of the space (with core/knob-check.ts's "did you mean"), each
// value one its knob allows (core/sampler/space.ts checkParam). A categorical value is the choice it spells, so
// `hidden=32` is the number 32 when the choices are numbers and the text "32" when they are text.
import { nearestKnob } from './knob-check';
import { checkParam } from './sampler/space';
import type { ParamDef, Params, ParamValue, SearchSpace } from './spec';

/** The values, or the first problem as one line naming the knob (`lr: 5 is outside [0.0001, 0.01]`). */
export function parseKnobValues(text: string, space: SearchSpace): { params: Params } | { problem: string } {
  const params: Params = {};
  const knobs = Object.keys(space);
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    const name = (at < 0 ? pair : pair.slice(0, at)).trim();
    if (at < 0 || !name) return { problem: `"${pair.trim()}" is not knob=value` };
    if (Object.hasOwn(params, name)) return { problem: `${name}: given twice` };
    const def = space[name];
    if (!Object.hasOwn(space, name) || !def) {
      const near = nearestKnob(name, knobs);
      return {
        problem: `${name}: not a knob of the search space (${near ? `did you mean "${near}"? ` : ''}its knobs: ${knobs.join(', ')})`,
      };
    }
    const value = valueOf(def, pair.slice(at + 1).trim());
    const problem = checkParam(def, value);
    if (problem) return { problem: `${name}: ${problem}` };
    params[name] = value;
  }
  return { params };
}

/** Problems with stored knob values against a space (a queued patch's, rechecked when its batch takes it). */
export function knobValueProblems(space: SearchSpace, params: Params): string[] {
  return Object.entries(params).flatMap(([name, value]) => {
    const def = space[name];
    if (!Object.hasOwn(space, name) || !def) return [`${name}: not in the search space`];
    const problem = checkParam(def, value);
    return problem ? [`${name}: ${problem}`] : [];
  });
}

function valueOf(def: ParamDef, raw: string): ParamValue {
  if (def.type !== 'categorical') return raw === '' ? Number.NaN : Number(raw);
  const choice = def.choices.find((c) => String(c) === raw);
  if (choice !== undefined) return choice;
  // Not a choice: typed as it reads, so the refusal shows `3`, not `"3"`.
  if (raw === 'true' || raw === 'false') return raw === 'true';
  return raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
}
