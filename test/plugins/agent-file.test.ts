import { describe, expect, it } from 'vitest';
import { parseAgentFile } from '../../src/plugins/agent-file.js';

const file = (frontmatter: string, body = 'Body.') => `---\n${frontmatter}\n---\n${body}\n`;

describe('agent files: YAML frontmatter and a markdown body', () => {
  it('reads every field and keeps the body as the system prompt', () => {
    const result = parseAgentFile(
      file(
        'name: code-reviewer\ndescription: Reviews code\nmodel: opus\ntools: [a__b, "mcp__c__d"]\ndisable-model-invocation: true\ndisable-user-invocation: false',
        '# Reviewer\n\nYou review code.\n\n---\n\nA horizontal rule stays in the body.',
      ),
    );
    expect(result).toEqual({
      ok: true,
      agent: {
        name: 'code-reviewer',
        description: 'Reviews code',
        model: 'opus',
        tools: ['a__b', 'mcp__c__d'],
        disableModelInvocation: true,
        disableUserInvocation: false,
        body: '# Reviewer\n\nYou review code.\n\n---\n\nA horizontal rule stays in the body.',
      },
    });
  });

  it('accepts tools as one comma-separated string, trimmed, empties dropped, duplicates once', () => {
    expect(parseAgentFile(file('name: a\ntools: Read, Grep ,, Read,Glob'))).toMatchObject({ ok: true, agent: { tools: ['Read', 'Grep', 'Glob'] } });
  });

  it('leaves absent fields absent (no restriction, default model)', () => {
    const result = parseAgentFile(file('name: a'));
    expect(result).toEqual({ ok: true, agent: { name: 'a', body: 'Body.' } });
  });

  it('ignores keys that belong to other hosts', () => {
    expect(parseAgentFile(file('name: a\ncolor: blue\npermissionMode: ask')).ok).toBe(true);
  });

  it('reads CRLF files', () => {
    expect(parseAgentFile('---\r\nname: a\r\n---\r\nHello.\r\n')).toEqual({ ok: true, agent: { name: 'a', body: 'Hello.' } });
  });

  it("refuses YAML tags it does not know instead of reading them as strings", () => {
    const result = parseAgentFile(file('name: a\ndescription: !!js/function "function () { return 1 }"'));
    expect(result.ok).toBe(false);
  });

  it('refuses alias bombs instead of expanding them', () => {
    const bomb = ['name: a', 'x0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) bomb.push(`x${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(', ')}]`);
    const result = parseAgentFile(file(bomb.join('\n')));
    expect(result).toMatchObject({ ok: false, field: 'frontmatter' });
  });

  it.each([
    ['no frontmatter', 'Just text.\n', 'frontmatter'],
    ['an unclosed frontmatter', '---\nname: a\nbody\n', 'frontmatter'],
    ['invalid YAML', file('name: a\ntools: [a, b'), 'frontmatter'],
    ['a duplicate key', file('name: a\nname: b'), 'frontmatter'],
    ['a frontmatter that is a list', file('- a\n- b'), 'frontmatter'],
    ['a missing name', file('description: x'), 'frontmatter.name'],
    ['a name that is not kebab-case', file('name: Code_Reviewer'), 'frontmatter.name'],
    ['a name longer than 64', file(`name: ${'a'.repeat(65)}`), 'frontmatter.name'],
    ['a numeric name', file('name: 42'), 'frontmatter.name'],
    ['a description over 1024 characters', file(`name: a\ndescription: ${'x'.repeat(1025)}`), 'frontmatter.description'],
    ['a non-string description', file('name: a\ndescription: [x]'), 'frontmatter.description'],
    ['a non-string model', file('name: a\nmodel: 42'), 'frontmatter.model'],
    ['an empty model', file('name: a\nmodel: ""'), 'frontmatter.model'],
    ['numeric tools', file('name: a\ntools: 42'), 'frontmatter.tools'],
    ['tools with a non-string element', file('name: a\ntools: [a, 1]'), 'frontmatter.tools'],
    ['a string flag', file('name: a\ndisable-model-invocation: "yes"'), 'frontmatter.disable-model-invocation'],
    ['a numeric flag', file('name: a\ndisable-user-invocation: 1'), 'frontmatter.disable-user-invocation'],
  ])('refuses %s, naming the field', (_label, text, field) => {
    const result = parseAgentFile(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.field).toBe(field);
  });

  it('counts the description limit in characters, not UTF-16 units', () => {
    expect(parseAgentFile(file(`name: a\ndescription: ${'🚀'.repeat(1024)}`)).ok).toBe(true);
  });

  it('names the agent in a failure when its name was readable', () => {
    expect(parseAgentFile(file('name: good-name\ntools: 42'))).toMatchObject({ ok: false, name: 'good-name' });
  });
});
