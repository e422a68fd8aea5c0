// The logged read of the sealed splits (held-out, test) lives in services/suites/heldout-items.ts (`dataset add`
// reads them too); the eval activities import it from here.
export { readHeldoutItems, readSealedItems } from '../../services/suites/heldout-items';
