// The real node:fs plus a globSync that explains itself: only the suites' `tier-check` command
// uses it, and that command is not part of the gateway's conformance runs.
import fs from 'node:fs';

export * from 'node:fs';
export default fs;

export function globSync() {
  throw new Error('fs.globSync needs Node >= 22 (only the conformance tier-check command uses it)');
}
