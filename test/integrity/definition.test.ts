import { describe, expect, it } from 'vitest';
import { definitionHash, instructionsHash, pinnedDefinition } from '../../src/integrity/definition.js';

const tool = {
  name: 'add_note',
  title: 'Add note',
  description: 'Adds a note.',
  inputSchema: { type: 'object', properties: { body: { type: 'string' }, n: { type: 'number' } }, required: ['body'] },
  outputSchema: { type: 'object' },
  annotations: { readOnlyHint: false },
  _meta: { ui: { resourceUri: 'ui://notes/app' }, 'vendor/trace': 'abc' },
  icons: [{ src: 'https://example.com/i.png' }],
};

describe('tool pins', () => {
  it('pin the fields the model reads and the MCP Apps link, nothing else', () => {
    expect(pinnedDefinition(tool)).toEqual({
      name: 'add_note',
      title: 'Add note',
      description: 'Adds a note.',
      inputSchema: tool.inputSchema,
      outputSchema: { type: 'object' },
      annotations: { readOnlyHint: false },
      _meta: { ui: { resourceUri: 'ui://notes/app' } },
    });
  });

  it('hash canonical JSON: key order and number spelling do not change a pin', () => {
    const reordered = JSON.parse(
      '{"inputSchema":{"required":["body"],"properties":{"n":{"type":"number"},"body":{"type":"string"}},"type":"object"},"description":"Adds a note.","name":"add_note","annotations":{"readOnlyHint":false},"outputSchema":{"type":"object"},"title":"Add note","_meta":{"ui":{"resourceUri":"ui://notes/app"}}}',
    );
    expect(definitionHash(pinnedDefinition(reordered))).toBe(definitionHash(pinnedDefinition(tool)));
    expect(definitionHash(pinnedDefinition({ name: 'x', inputSchema: { maximum: 1.0 } }))).toBe(definitionHash(pinnedDefinition({ name: 'x', inputSchema: { maximum: 1 } })));
  });

  it.each([
    ['description', { description: 'Adds a note. <IMPORTANT>…</IMPORTANT>' }],
    ['title', { title: 'Add a note' }],
    ['inputSchema', { inputSchema: { type: 'object', properties: { body: { type: 'string', description: 'x' } } } }],
    ['outputSchema', { outputSchema: { type: 'object', properties: {} } }],
    ['annotations', { annotations: { readOnlyHint: true } }],
    ['_meta.ui', { _meta: { ui: { resourceUri: 'ui://notes/other' } } }],
    ['flat ui/resourceUri', { _meta: { ui: { resourceUri: 'ui://notes/app' }, 'ui/resourceUri': 'ui://x' } }],
  ])('change when %s changes', (_field, change) => {
    expect(definitionHash(pinnedDefinition({ ...tool, ...change }))).not.toBe(definitionHash(pinnedDefinition(tool)));
  });

  it('do not change when unpinned _meta or icons change', () => {
    const other = { ...tool, _meta: { ...tool._meta, 'vendor/trace': 'def' }, icons: [] };
    expect(definitionHash(pinnedDefinition(other))).toBe(definitionHash(pinnedDefinition(tool)));
  });

  it('are sha256 hex, and instructions pin apart from absence', () => {
    expect(definitionHash(pinnedDefinition(tool))).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(instructionsHash(undefined)).not.toBe(instructionsHash(''));
    expect(instructionsHash('Use notes.')).toBe(instructionsHash('Use notes.'));
  });
});
