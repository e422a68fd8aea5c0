// The logged held-out read lives in services/suites/heldout-items.ts (`dataset add` reads held-out items too); the
// eval activities import it from here.
export { readHeldoutItems } from '../../services/suites/heldout-items';
