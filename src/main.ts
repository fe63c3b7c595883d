#!/usr/bin/env node
/** The `portcullis` executable: run the CLI, and never leave a child process behind on exit. */
import { main } from './cli.js';
import { killAllStdioChildren } from './upstream/stdio-transport.js';

process.on('exit', () => killAllStdioChildren());
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  () => process.exit(1),
);
