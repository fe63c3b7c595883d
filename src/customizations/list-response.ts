/**
 * The 200 answer carrying a caller's list (`{ items }`, already filtered by its access rules):
 * what GET `<path>/customizations` and a successful toggle or authenticate answer. Never cached:
 * the list is the caller's own and changes with every decision.
 */
export function listResponse(json: string): Response {
  return new Response(json, { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
}
