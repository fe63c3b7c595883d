/**
 * The real MCP servers whose `tools/list` the search benchmark uses, as `record-real-tools.ts`
 * starts them: npm package and exact version, arguments and the dummy credentials each needs to
 * start (listing tools needs none of them to be valid; no call is ever made). `{workdir}` is a
 * scratch directory of the recorder's.
 *
 * Tried and left out (2026-12, Node 20): @bytebase/dbhub 1.4.0 (needs Node ≥ 22.5),
 * @stripe/mcp 0.3.3 and @supabase/mcp-server-supabase 0.13.0 (fetch from their APIs before
 * answering `tools/list`, which the offline preload refuses), @heroku/mcp-server 1.2.8 (exits
 * without its CLI), @atlassian-dc-mcp/confluence 0.34.0 (does not install).
 */
export interface RealServerSpec {
  server: string;
  package: string;
  version: string;
  /** The bin to run when the package has several. */
  bin?: string;
  args: string[];
  env: Record<string, string>;
}

const none = {};

export const REAL_SERVERS: readonly RealServerSpec[] = [
  { server: 'everything', package: '@modelcontextprotocol/server-everything', version: '2026.8.31', args: ['stdio'], env: none },
  { server: 'filesystem', package: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', args: ['{workdir}'], env: none },
  { server: 'memory', package: '@modelcontextprotocol/server-memory', version: '2026.8.31', args: [], env: { MEMORY_FILE_PATH: '{workdir}/memory.jsonl' } },
  { server: 'thinking', package: '@modelcontextprotocol/server-sequential-thinking', version: '2026.8.31', args: [], env: none },
  { server: 'github', package: '@modelcontextprotocol/server-github', version: '2025.4.8', args: [], env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_dummy' } },
  { server: 'slack', package: '@modelcontextprotocol/server-slack', version: '2025.4.25', args: [], env: { SLACK_BOT_TOKEN: 'xoxb-dummy', SLACK_TEAM_ID: 'T00000000' } },
  { server: 'gitlab', package: '@zereight/mcp-gitlab', version: '2.1.64', args: [], env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'glpat-dummy', GITLAB_API_URL: 'http://127.0.0.1:9/api/v4', USE_GITLAB_WIKI: 'true', USE_MILESTONE: 'true', USE_PIPELINE: 'true' } },
  { server: 'maps', package: '@modelcontextprotocol/server-google-maps', version: '0.6.2', args: [], env: { GOOGLE_MAPS_API_KEY: 'dummy' } },
  { server: 'brave', package: '@modelcontextprotocol/server-brave-search', version: '0.6.2', args: [], env: { BRAVE_API_KEY: 'dummy' } },
  { server: 'postgres', package: '@modelcontextprotocol/server-postgres', version: '0.6.2', args: ['postgresql://127.0.0.1:9/bench'], env: none },
  { server: 'playwright', package: '@playwright/mcp', version: '0.0.83', args: ['--headless'], env: none },
  { server: 'devtools', package: 'chrome-devtools-mcp', version: '1.11.0', args: [], env: { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' } },
  { server: 'context7', package: '@upstash/context7-mcp', version: '4.1.1', args: [], env: none },
  { server: 'git', package: '@cyanheads/git-mcp-server', version: '2.15.3', args: [], env: { MCP_TRANSPORT_TYPE: 'stdio', MCP_LOG_LEVEL: 'error' } },
  { server: 'mongodb', package: 'mongodb-mcp-server', version: '3.0.4', args: [], env: { MDB_MCP_TELEMETRY: 'disabled' } },
  { server: 'circleci', package: '@circleci/mcp-server-circleci', version: '0.20.0', args: [], env: { CIRCLECI_TOKEN: 'dummy' } },
  { server: 'eslint', package: '@eslint/mcp', version: '0.3.13', args: [], env: none },
  { server: 'tavily', package: 'tavily-mcp', version: '0.2.22', args: [], env: { TAVILY_API_KEY: 'tvly-dummy' } },
  { server: 'firecrawl', package: 'firecrawl-mcp', version: '3.26.0', args: [], env: { FIRECRAWL_API_KEY: 'fc-dummy' } },
  { server: 'datadog', package: '@winor30/mcp-server-datadog', version: '1.8.0', args: [], env: { DATADOG_API_KEY: 'dummy', DATADOG_APP_KEY: 'dummy' } },
  { server: 'jira', package: '@aashari/mcp-server-atlassian-jira', version: '3.3.0', args: [], env: { ATLASSIAN_SITE_NAME: 'bench', ATLASSIAN_USER_EMAIL: 'bench@example.com', ATLASSIAN_API_TOKEN: 'dummy' } },
  { server: 'asana', package: '@roychri/mcp-server-asana', version: '1.8.0', args: [], env: { ASANA_ACCESS_TOKEN: 'dummy' } },
  { server: 'airtable', package: 'airtable-mcp-server', version: '1.14.0', args: [], env: { AIRTABLE_API_KEY: 'patdummy' } },
  { server: 'm365', package: '@softeria/ms-365-mcp-server', version: '0.155.0', args: ['--org-mode'], env: none },
  { server: 'hubspot', package: '@hubspot/mcp-server', version: '0.4.0', args: [], env: { PRIVATE_APP_ACCESS_TOKEN: 'dummy' } },
  { server: 'shortcut', package: '@shortcut/mcp', version: '0.25.0', args: [], env: { SHORTCUT_API_TOKEN: 'dummy' } },
  { server: 'kubernetes', package: 'mcp-server-kubernetes', version: '4.1.7', args: [], env: none },
  { server: 'sentry', package: '@sentry/mcp-server', version: '0.39.0', args: ['--access-token=dummy'], env: none },
  { server: 'charts', package: '@antv/mcp-server-chart', version: '0.9.10', args: [], env: none },
  { server: 'mapbox', package: '@mapbox/mcp-server', version: '0.14.0', args: [], env: { MAPBOX_ACCESS_TOKEN: 'pk.dummy' } },
  { server: 'exa', package: 'exa-mcp-server', version: '3.4.1', args: [], env: { EXA_API_KEY: 'dummy' } },
  { server: 'argocd', package: 'argocd-mcp', version: '0.9.0', args: ['stdio'], env: { ARGOCD_BASE_URL: 'http://127.0.0.1:9', ARGOCD_API_TOKEN: 'dummy' } },
  { server: 'notion', package: '@notionhq/notion-mcp-server', version: '2.5.2', args: [], env: { NOTION_TOKEN: 'ntn_dummy' } },
  { server: 'postman', package: '@postman/postman-mcp-server', version: '2.13.0', args: ['--full'], env: { POSTMAN_API_KEY: 'PMAK-dummy' } },
  { server: 'pinecone', package: '@pinecone-database/mcp', version: '0.3.0', args: [], env: { PINECONE_API_KEY: 'dummy' } },
  { server: 'monday', package: '@mondaydotcomorg/monday-api-mcp', version: '3.3.0', args: ['-t', 'dummy'], env: none },
  { server: 'launchdarkly', package: '@launchdarkly/mcp-server', version: '0.6.2', args: ['start', '--api-key', 'api-dummy'], env: none },
];
