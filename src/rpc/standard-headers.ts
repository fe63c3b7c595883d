/**
 * MCP 2026-07-28 standard request headers (SEP-2243 "Standard Request Headers"; SEP-2663 for
 * `tasks/*`): the request field each method's `Mcp-Name` header mirrors. Read by the inbound
 * binding, which checks a client's header against its body, and by the Streamable HTTP upstream
 * wire, which writes the header for the requests it sends.
 */
const NAME_FIELD: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/** The params field `method`'s `Mcp-Name` header mirrors; undefined for a method that has none. */
export function mcpNameField(method: string): string | undefined {
  return Object.hasOwn(NAME_FIELD, method) ? NAME_FIELD[method] : undefined;
}
