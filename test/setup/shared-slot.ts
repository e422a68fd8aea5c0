// Every test file holds a shared slot while it runs (test/setup/file-slots.ts), so a file that must run alone waits
// for it to end. jest.config.js's setupFilesAfterEnv.
import { releaseSharedSlot, SLOT_WAIT_MS, takeSharedSlot } from './file-slots';

beforeAll(takeSharedSlot, SLOT_WAIT_MS);
afterAll(releaseSharedSlot);
