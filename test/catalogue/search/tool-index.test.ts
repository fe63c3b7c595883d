import { describe, expect, it } from 'vitest';
import { buildToolIndex, MAX_QUERY_LENGTH, SEARCH_LIMIT } from '../../../src/catalogue/search/tool-index.js';
import type { SearchableTool, ToolSnapshot } from '../../../src/catalogue/search/snapshot.js';

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

const TOOLS: SearchableTool[] = [
  { name: 'github__create_pull_request', server: 'github', description: 'Create a new pull request in a GitHub repository', inputSchema: schema({ head: { type: 'string', description: 'The name of the branch where your changes are implemented' }, base: { type: 'string', description: 'The branch you want the changes pulled into' } }) },
  { name: 'github__merge_pull_request', server: 'github', description: 'Merge a pull request', inputSchema: schema({ merge_method: { type: 'string', description: 'Merge method: merge, squash or rebase' } }) },
  { name: 'github__list_issues', server: 'github', description: 'List issues in a GitHub repository with filtering options' },
  { name: 'gitlab__create_merge_request', server: 'gitlab', description: 'Create a new merge request in a GitLab project' },
  { name: 'gitlab__list_issues', server: 'gitlab', description: 'List issues in a GitLab project' },
  { name: 'slack__slack_post_message', server: 'slack', description: 'Post a new message to a Slack channel' },
  { name: 'slack__slack_list_channels', server: 'slack', description: 'List public channels in the workspace with pagination' },
  { name: 'k8s__get_pod_logs', server: 'k8s', description: 'Read the logs of a container', inputSchema: schema({ previous: { type: 'boolean', description: 'Logs of the previous (crashed) instance' } }) },
  { name: 'k8s__scaleDeployment', server: 'k8s', title: 'Scale deployment', description: 'Set the replica count', inputSchema: schema({ spec: { type: 'object', properties: { replicas: { type: 'integer', description: 'Desired number of pods' } } } }) },
  { name: 'calendar__find_meeting_times', server: 'calendar', description: 'Suggest slots when all attendees are free' },
];

const SNAPSHOT: ToolSnapshot = {
  tools: TOOLS,
  servers: [
    { name: 'github', instructions: 'GitHub.com repositories of the company' },
    { name: 'gitlab' },
    { name: 'slack', instructions: 'Team chat' },
    { name: 'k8s', instructions: 'The production Kubernetes cluster' },
    { name: 'calendar' },
  ],
};

const names = (hits: ReadonlyArray<{ name: string }>) => hits.map((h) => h.name);

describe('buildToolIndex', () => {
  const index = buildToolIndex(SNAPSHOT);

  it('indexes every tool it is given, once', () => {
    expect(index.size).toBe(TOOLS.length);
    expect(buildToolIndex({ tools: [...TOOLS, TOOLS[0]!], servers: [] }).size).toBe(TOOLS.length);
  });

  it('ranks a tool first for its exposed name, its upstream name and its name in another style', () => {
    for (const query of ['github__create_pull_request', 'GITHUB__CREATE_PULL_REQUEST', 'create_pull_request', 'createPullRequest']) {
      expect(names(index.search(query))[0]).toBe('github__create_pull_request');
    }
    expect(names(index.search('scale_deployment'))[0]).toBe('k8s__scaleDeployment');
  });

  it('ranks a tool first for a paraphrase of what it does', () => {
    expect(names(index.search('open a PR from my feature branch'))[0]).toBe('github__create_pull_request');
    expect(names(index.search('why did my container crash? show me its output'))[0]).toBe('k8s__get_pod_logs');
    expect(names(index.search('send a message to the team channel'))[0]).toBe('slack__slack_post_message');
    expect(names(index.search('when is everyone free for a meeting'))[0]).toBe('calendar__find_meeting_times');
  });

  it('finds tools by their parameters, nested one level deep', () => {
    expect(names(index.search('squash'))[0]).toBe('github__merge_pull_request');
    expect(names(index.search('desired replicas'))[0]).toBe('k8s__scaleDeployment');
  });

  it('uses the server name and instructions to separate tools that do the same thing', () => {
    expect(names(index.search('list issues on gitlab'))[0]).toBe('gitlab__list_issues');
    expect(names(index.search('list issues of the company repositories'))[0]).toBe('github__list_issues');
    expect(names(index.search('kubernetes scale'))[0]).toBe('k8s__scaleDeployment');
  });

  it('matches identifier prefixes', () => {
    expect(names(index.search('deploym'))[0]).toBe('k8s__scaleDeployment');
    expect(names(index.search('attend'))[0]).toBe('calendar__find_meeting_times');
  });

  it('orders equal scores by exposed name, whatever the input order', () => {
    const twin = (name: string, server: string): SearchableTool => ({ name, server, description: 'Rotate the signing key' });
    const tools = [twin('zeta__rotate_key', 'zeta'), twin('alpha__rotate_key', 'alpha'), twin('mid__rotate_key', 'mid')];
    const expected = ['alpha__rotate_key', 'mid__rotate_key', 'zeta__rotate_key'];
    for (const order of [tools, [...tools].reverse()]) {
      const hits = buildToolIndex({ tools: order, servers: [] }).search('rotate key');
      expect(names(hits)).toEqual(expected);
      expect(new Set(hits.map((h) => h.score)).size).toBe(1);
    }
  });

  it('answers the same query the same way every time', () => {
    const first = index.search('list issues', { limit: 10 });
    for (let i = 0; i < 5; i += 1) expect(index.search('list issues', { limit: 10 })).toEqual(first);
  });

  it('filters by server, and a server it does not have yields nothing', () => {
    const hits = index.search('list issues', { server: 'gitlab', limit: 20 });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.server === 'gitlab')).toBe(true);
    expect(index.search('list issues', { server: 'nope' })).toEqual([]);
  });

  it('returns 5 hits by default and at most the limit asked for', () => {
    const many: SearchableTool[] = Array.from({ length: 30 }, (_, i) => ({ name: `s__report_${i}`, server: 's', description: 'Export a report' }));
    const big = buildToolIndex({ tools: many, servers: [] });
    expect(big.search('report')).toHaveLength(SEARCH_LIMIT.default);
    expect(big.search('report', { limit: 1 })).toHaveLength(1);
    expect(big.search('report', { limit: SEARCH_LIMIT.max })).toHaveLength(20);
  });

  it.each([0, -1, 21, 2.5, Number.NaN])('refuses limit %j with a RangeError', (limit) => {
    expect(() => index.search('issues', { limit })).toThrow(RangeError);
  });

  it('refuses an over-long query and answers an empty or all-stopword one with no hits', () => {
    expect(() => index.search('x'.repeat(MAX_QUERY_LENGTH + 1))).toThrow(RangeError);
    expect(index.search('')).toEqual([]);
    expect(index.search('can you please do it for me')).toEqual([]);
  });
});

describe('what the index can reveal', () => {
  const hidden: SearchableTool = { name: 'admin__drop_all_tables', server: 'admin', description: 'Drop every table in the production database' };

  it('never returns a tool it was not given, however it is asked for', () => {
    const visible = buildToolIndex(SNAPSHOT);
    const queries = ['admin__drop_all_tables', 'drop_all_tables', 'drop every table in the production database', 'admin', 'dropAllTables'];
    for (const query of queries) {
      expect(names(visible.search(query, { limit: 20 }))).not.toContain(hidden.name);
      expect(visible.search(query, { server: 'admin', limit: 20 })).toEqual([]);
    }
    // The same queries find it once it is part of the snapshot: the queries are not vacuous.
    const withHidden = buildToolIndex({ tools: [...TOOLS, hidden], servers: SNAPSHOT.servers });
    for (const query of queries) expect(names(withHidden.search(query))[0]).toBe(hidden.name);
  });

  it('indexes a hostile tool without crashing and only up to the field caps', () => {
    const hostile: SearchableTool[] = [
      { name: 'h__long', server: 'h', description: `${'padding '.repeat(200_000)}needle` },
      { name: 'h__schema_string', server: 'h', inputSchema: 'not a schema' },
      { name: 'h__schema_array', server: 'h', inputSchema: [1, 2, 3] },
      { name: 'h__schema_null_props', server: 'h', inputSchema: { type: 'object', properties: null } },
      { name: 'h__schema_deep', server: 'h', inputSchema: schema({ a: { type: 'object', properties: { b: { type: 'object', properties: { deepword: { type: 'string' } } } } } }) },
    ];
    const index = buildToolIndex({ tools: hostile, servers: [{ name: 'h', instructions: 'x'.repeat(1_000_000) }] });
    expect(index.size).toBe(hostile.length);
    expect(index.search('needle')).toEqual([]);
    expect(index.search('deepword')).toEqual([]);
    expect(names(index.search('schema string'))[0]).toBe('h__schema_string');
  });
});
