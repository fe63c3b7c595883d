/**
 * The two MCP protocol eras a client or an upstream speaks: `'2025'` for the session-based
 * revisions (2025-03-26 … 2025-11-25, `initialize` and `Mcp-Session-Id`), `'2026'` for the
 * stateless 2026-07-28 revision (`server/discover`, the per-request `_meta` envelope). One spelling
 * in code, logs, metric labels and docs; "legacy" names only the 2024-11-05 HTTP+SSE transport.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/client';

export type Era = '2025' | '2026';

/** The 2026 revision: the only one of its era the gateway serves and speaks upstream. */
export const PROTOCOL_2026 = '2026-07-28';

/** The 2025-era revisions, newest first (the SDK's list up to the 2026 revision). */
export const VERSIONS_2025: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version < PROTOCOL_2026);
