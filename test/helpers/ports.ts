// Free ports for the servers a test starts: the same helper the completion server uses for its children.
export { freePort } from '../../server/http/free-port';
