/**
 * Reading a directory of agent files (`agents/*.md` of a plugin, or the gateway's own agents
 * directory): every `.md` file directly inside, in file-name order, each parsed on its own. A bad
 * file is reported (agent, file, field) and skipped, never fatal; the second file claiming a name
 * already taken is skipped too, so which one wins never depends on directory listing order.
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAgentFile } from './agent-file.js';
import { describeReadFailure, readBoundedText } from './bounded-read.js';
import { resolveWithin } from './containment.js';
import type { PluginDiagnostic } from './diagnostics.js';
import { gatewayAgentKey, pluginAgentKey, pluginAgentName } from './naming.js';
import type { AgentDeclaration } from './types.js';

export const MAX_AGENT_FILES = 128;
export const MAX_AGENT_FILE_BYTES = 256 * 1024;

export interface AgentsRead {
  readonly agents: AgentDeclaration[];
  readonly diagnostics: PluginDiagnostic[];
}

/**
 * Reads the agent files in `dir`. `base` is the realpath every file must stay inside (the plugin
 * root, or the directory itself at gateway level); `plugin` namespaces names and keys.
 */
export async function readAgentFiles(dir: string, base: string, plugin?: string): Promise<AgentsRead> {
  const out: AgentsRead = { agents: [], diagnostics: [] };
  const dirUri = pathToFileURL(`${dir}${path.sep}`).href;
  const where = plugin === undefined ? {} : { plugin };
  const present = await lstat(dir).then(
    () => true,
    () => false,
  );
  if (!present) return out;
  const resolved = await resolveWithin(base, dir);
  if (!resolved.ok || !resolved.exists) {
    out.diagnostics.push({ ...where, file: dirUri, message: 'the agents directory resolves outside the plugin root; agents ignored' });
    return out;
  }
  let names: string[];
  try {
    const entries = await readdir(resolved.path, { withFileTypes: true });
    names = entries
      .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith('.md') && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort();
  } catch {
    out.diagnostics.push({ ...where, file: dirUri, message: 'the agents directory cannot be listed; agents ignored' });
    return out;
  }
  if (names.length > MAX_AGENT_FILES) {
    out.diagnostics.push({ ...where, file: dirUri, message: `holds more than ${MAX_AGENT_FILES} agent files; the rest are ignored` });
    names = names.slice(0, MAX_AGENT_FILES);
  }
  const claimed = new Map<string, string>();
  for (const fileName of names) {
    const file = path.join(resolved.path, fileName);
    const uri = pathToFileURL(file).href;
    const fallbackName = fileName.slice(0, -'.md'.length);
    const skip = (agent: string, field: string | undefined, message: string) =>
      out.diagnostics.push({ ...where, file: uri, agent, ...(field === undefined ? {} : { field }), message: `${message}; agent skipped` });
    const contained = await resolveWithin(base, file);
    if (!contained.ok || !contained.exists) {
      skip(fallbackName, undefined, 'the file resolves outside the plugin root');
      continue;
    }
    const read = await readBoundedText(contained.path, MAX_AGENT_FILE_BYTES);
    if (!read.ok) {
      skip(fallbackName, undefined, `the file ${describeReadFailure(read.reason, MAX_AGENT_FILE_BYTES)}`);
      continue;
    }
    const parsed = parseAgentFile(read.text);
    if (!parsed.ok) {
      skip(parsed.name ?? fallbackName, parsed.field, parsed.message);
      continue;
    }
    const { agent } = parsed;
    const earlier = claimed.get(agent.name);
    if (earlier !== undefined) {
      skip(agent.name, 'frontmatter.name', `is already the name of the agent in ${earlier}`);
      continue;
    }
    claimed.set(agent.name, fileName);
    const { name, body, ...fields } = agent;
    out.agents.push({
      key: plugin === undefined ? gatewayAgentKey(name) : pluginAgentKey(plugin, name),
      name: plugin === undefined ? name : pluginAgentName(plugin, name),
      agentName: name,
      uri,
      ...fields,
      body,
    });
  }
  return out;
}

/** The gateway-level agents directory: names carry no plugin prefix. */
export async function readAgentsDir(dir: string): Promise<AgentsRead> {
  const absolute = path.resolve(dir);
  const base = await resolveWithin(path.parse(absolute).root, absolute);
  if (!base.ok || !base.exists) {
    return { agents: [], diagnostics: [{ file: pathToFileURL(`${absolute}${path.sep}`).href, message: 'the agents directory does not exist' }] };
  }
  return readAgentFiles(base.path, base.path);
}
