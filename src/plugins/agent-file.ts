/**
 * One agent file: YAML frontmatter between `---` lines, then a markdown body that is the agent's
 * system prompt (the Claude Code / Open Plugins agent format). The frontmatter is read within size
 * and key bounds by `readFrontmatterYaml` (YAML 1.2 core schema: no custom tags, duplicate keys
 * refused in linear time, alias expansion capped against "billion laughs"); only the delimiter
 * lines are found by scanning.
 *
 * Fields: `name` (required, 1-64, kebab-case), `description` (at most 1024 characters), `model`,
 * `tools` (a list, or one comma-separated string), `disable-model-invocation`,
 * `disable-user-invocation` (booleans). Other keys belong to other hosts and are ignored; a known
 * key with a wrong value makes the file invalid, so it is skipped and reported, never half-read.
 */
import { readFrontmatterYaml } from './frontmatter-yaml.js';
import { isAgentName } from './naming.js';
import type { AgentDeclaration } from './types.js';
import { isRecord } from './json-value.js';

/** What one file declares: the declaration's fields before it is named into a plugin. */
export type AgentFields = Omit<AgentDeclaration, 'key' | 'name' | 'agentName' | 'uri'> & { readonly name: string };

export type AgentParse =
  | { readonly ok: true; readonly agent: AgentFields }
  | { readonly ok: false; readonly field?: string; readonly message: string; readonly name?: string };

export const MAX_DESCRIPTION_CHARS = 1024;
export const MAX_TOOLS = 256;
const MAX_SHORT_CHARS = 256;

/** Counts code points, as a reader counts characters (an emoji is one, not two). */
function charCount(value: string): number {
  return [...value].length;
}

/** Splits the text into frontmatter and body at the `---` delimiter lines. */
function splitFrontmatter(text: string): { yaml: string; body: string } | undefined {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines[0]?.trimEnd() !== '---') return undefined;
  const end = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
  if (end === -1) return undefined;
  return { yaml: lines.slice(1, end).join('\n'), body: lines.slice(end + 1).join('\n') };
}

function parseTools(raw: unknown): { tools?: string[]; message?: string } {
  const list = typeof raw === 'string' ? raw.split(',').map((t) => t.trim()).filter((t) => t.length > 0) : raw;
  if (!Array.isArray(list) || list.some((t) => typeof t !== 'string' || t.trim().length === 0 || t.length > MAX_SHORT_CHARS)) {
    return { message: 'must be a list of tool names or one comma-separated string' };
  }
  if (list.length > MAX_TOOLS) return { message: `lists more than ${MAX_TOOLS} tools` };
  return { tools: [...new Set((list as string[]).map((t) => t.trim()))] };
}

/** Parses one agent file's text. */
export function parseAgentFile(text: string): AgentParse {
  const parts = splitFrontmatter(text);
  if (parts === undefined) return { ok: false, field: 'frontmatter', message: 'missing: the file must start with a "---" line and close it with another' };
  const read = readFrontmatterYaml(parts.yaml);
  if (!read.ok) return { ok: false, field: 'frontmatter', message: read.message };
  const { data } = read;
  if (!isRecord(data)) return { ok: false, field: 'frontmatter', message: 'must be a mapping of fields' };
  const name = data.name;
  // A name that fails the rule may still identify the file in a report, if it is short enough to quote.
  const named = typeof name === 'string' && name.length <= 128 ? { name } : {};
  const bad = (field: string, message: string): AgentParse => ({ ok: false, field: `frontmatter.${field}`, message, ...named });
  if (name === undefined) return bad('name', 'is required');
  if (typeof name !== 'string' || !isAgentName(name)) return bad('name', 'must be 1-64 characters of kebab-case (a-z, 0-9, single hyphens)');
  const { description, model } = data;
  if (description !== undefined && (typeof description !== 'string' || charCount(description) > MAX_DESCRIPTION_CHARS)) {
    return bad('description', `must be a string of at most ${MAX_DESCRIPTION_CHARS} characters`);
  }
  if (model !== undefined && (typeof model !== 'string' || model.trim().length === 0 || model.length > MAX_SHORT_CHARS)) {
    return bad('model', 'must be a non-empty string (a model name)');
  }
  const tools = data.tools === undefined ? {} : parseTools(data.tools);
  if (tools.message !== undefined) return bad('tools', tools.message);
  const flags: { disableModelInvocation?: boolean; disableUserInvocation?: boolean } = {};
  for (const [key, field] of [
    ['disable-model-invocation', 'disableModelInvocation'],
    ['disable-user-invocation', 'disableUserInvocation'],
  ] as const) {
    const value = data[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') return bad(key, 'must be true or false');
    flags[field] = value;
  }
  return {
    ok: true,
    agent: {
      name,
      ...(description === undefined ? {} : { description }),
      ...(model === undefined ? {} : { model: model as string }),
      ...(tools.tools === undefined ? {} : { tools: tools.tools }),
      ...flags,
      body: parts.body.trim(),
    },
  };
}
