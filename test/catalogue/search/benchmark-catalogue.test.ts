/**
 * The search index on the benchmark's catalogue (bench/search/: 37 real servers' recorded tool
 * lists and 72 generated servers, about 5,000 tools): every tool is found first by its own
 * exposed name, and a few needs phrased in other words find their tool first. Figures (recall,
 * latency) are the benchmark's business, not this test's.
 */
import { describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../../bench/search/catalogue.js';
import { buildToolIndex } from '../../../src/catalogue/search/tool-index.js';

const catalogue = loadCatalogue();
const index = buildToolIndex(catalogue.snapshot);

describe('the index on the ~5,000-tool benchmark catalogue', () => {
  it('holds every tool of the catalogue', () => {
    expect(catalogue.snapshot.tools.length).toBeGreaterThanOrEqual(5_000);
    expect(index.size).toBe(catalogue.snapshot.tools.length);
  });

  it('ranks every tool first for its own exposed name', () => {
    const misses = catalogue.snapshot.tools.filter((tool) => index.search(tool.name, { limit: 1 })[0]?.name !== tool.name).map((t) => t.name);
    expect(misses).toEqual([]);
  }, 300_000);

  it.each([
    ['what is inside this local directory, with sizes', 'filesystem__list_directory_with_sizes'],
    ['delete an entity from the memory knowledge graph', 'memory__delete_entities'],
    ['hover the mouse over an element in the playwright browser', 'playwright__browser_hover'],
    ['put the kafka connector on hold', 'kafka__pause_connector'],
    ['cancel a scheduled datadog downtime', 'datadog__cancel_downtime'],
    ['unassign me from a shortcut story', 'shortcut__stories-unassign-current-user'],
  ])('ranks the right tool first for a paraphrase: %s', (query, expected) => {
    expect(index.search(query)[0]?.name).toBe(expected);
  });
});
