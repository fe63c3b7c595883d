/**
 * `portcullis import FILE`: prints the converted gateway config on stdout (redirect it to a
 * file) and, on stderr, the variables to export and anything left out. Exit 0 when converted,
 * 1 when the file cannot be read or converted.
 */
import { readFile, stat } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import { importMcpJson } from './import-mcp-json.js';

/** Host config files are small; a larger one is not one. */
const MAX_FILE_BYTES = 1024 * 1024;

export async function runImport(path: string): Promise<number> {
  let text: string;
  try {
    if ((await stat(path)).size > MAX_FILE_BYTES) throw Object.assign(new Error('too large'), { code: 'EFBIG' });
    text = await readFile(path, 'utf8');
  } catch (error) {
    process.stderr.write(`portcullis import: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})\n`);
    return 1;
  }
  let result;
  try {
    result = importMcpJson(text);
  } catch (error) {
    const problems = error instanceof ConfigError ? error.problems : [(error as Error).message];
    for (const problem of problems) process.stderr.write(`portcullis import: ${problem}\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify(result.config, null, 2)}\n`);
  const count = Object.keys(result.config.servers).length;
  process.stderr.write(`portcullis import: ${count} server(s) converted\n`);
  if (result.exports.length > 0) {
    process.stderr.write('export these before running the gateway (secrets are read from them, not from the config):\n');
    for (const item of result.exports) {
      const value = item.value.startsWith('<') ? item.value : `"${item.value.replace(/["\\`]/g, '\\$&')}"`;
      process.stderr.write(`  export ${item.name}=${value}   # ${item.why}\n`);
    }
  }
  for (const note of result.notes) process.stderr.write(`note: ${note}\n`);
  return 0;
}
