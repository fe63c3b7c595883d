/**
 * The benchmark catalogue's file shapes: what `record-real-tools.ts` writes for each real server
 * and what `generate-servers.ts` produces for each generated one, so both read the same way.
 */

/** A JSON Schema object as tools carry it in `inputSchema` (only the parts the index reads are typed). */
export interface ToolInputSchema {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

export interface RecordedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: ToolInputSchema;
}

export interface RecordedServer {
  /** The server's name in the gateway's config (the namespace of its tools). */
  server: string;
  /** Where the tools came from: an npm package and version, or `generated` with its seed. */
  source: { package: string; version: string } | { generated: string; seed: number };
  instructions?: string;
  tools: RecordedTool[];
}
