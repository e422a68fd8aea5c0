// flywheel-base for the HF suites: the base model `flywheel setup hf` and .ci/install-hf.sh build
// (trainers/hf/pretrain_base.py through stack/hf-base-model.ts), cached under the test tools' FLYWHEEL_HOME, so a
// test finds the copy CI built and builds it only where none is (a few minutes on 2 cores). Call requires('hf') first.
import { buildHfBaseModel, type BaseModelBuilt } from '../../stack/hf-base-model';
import { toolsHome } from '../setup/install-test-tools';
import { hfTestPythonPath } from './hf-python';

/** The base model's folder and provenance; throws with the script's own last line when it cannot be built. */
export function hfBaseModel(): BaseModelBuilt {
  const r = buildHfBaseModel(toolsHome(), { python: hfTestPythonPath() });
  if ('problem' in r) throw new Error(`flywheel-base: ${r.problem}`);
  return r;
}
