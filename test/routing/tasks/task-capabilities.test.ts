import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import {
  acceptsToolTasks,
  declaresTasksExtension,
  mergeTaskCapability,
  presentTaskSupport,
  taskSupportOf,
} from '../../../src/routing/tasks/task-capabilities.js';

const takesCalls = { tasks: { requests: { tools: { call: {} } } } };
const takesAndCancels = { tasks: { cancel: {}, list: {}, requests: { tools: { call: {} } } } };
const tool = (execution?: Record<string, unknown>): Tool =>
  ({ name: 't', inputSchema: { type: 'object' }, ...(execution === undefined ? {} : { execution }) }) as Tool;

describe('mergeTaskCapability', () => {
  it.each([
    ['no upstream declares tasks', [{}, { tools: {} }], undefined],
    ['an upstream lists and cancels but takes no tool tasks', [{ tasks: { list: {}, cancel: {} } }], undefined],
    ['one upstream takes tool tasks, none cancels', [{}, takesCalls], { list: {}, requests: { tools: { call: {} } } }],
    ['one takes tool tasks, another cancels', [takesCalls, takesAndCancels], { list: {}, cancel: {}, requests: { tools: { call: {} } } }],
  ])('%s', (_label, capabilities, expected) => {
    expect(mergeTaskCapability(capabilities.map((c) => ({ capabilities: c as never })))).toEqual(expected);
  });

  it('offers tasks/list whenever tasks are offered: the list is the gateway own, per caller', () => {
    expect(mergeTaskCapability([{ capabilities: takesCalls as never }])?.list).toEqual({});
  });
});

describe('acceptsToolTasks / taskSupportOf', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ tasks: {} }, false],
    [{ tasks: { requests: {} } }, false],
    [{ tasks: { requests: { sampling: { createMessage: {} } } } }, false],
    [takesCalls, true],
  ])('capabilities %j take tool tasks: %s', (capabilities, expected) => {
    expect(acceptsToolTasks(capabilities as never)).toBe(expected);
  });

  it.each([
    [undefined, 'forbidden'],
    [{}, 'forbidden'],
    [{ taskSupport: 'forbidden' }, 'forbidden'],
    [{ taskSupport: 'optional' }, 'optional'],
    [{ taskSupport: 'required' }, 'required'],
    [{ taskSupport: 'REQUIRED' }, 'forbidden'],
    [{ taskSupport: 1 }, 'forbidden'],
  ])('execution %j reads as %s', (execution, expected) => {
    expect(taskSupportOf(tool(execution))).toBe(expected);
  });
});

describe('presentTaskSupport', () => {
  it('keeps a 2025 tool of a server that takes tool tasks as it is (same object)', () => {
    const required = tool({ taskSupport: 'required' });
    expect(presentTaskSupport(required, true, '2025')).toBe(required);
  });

  it('shows a 2025 tool of a server that takes no tool tasks without task support', () => {
    expect(presentTaskSupport(tool({ taskSupport: 'required' }), false, '2025')).toEqual(tool());
    expect(presentTaskSupport(tool({ taskSupport: 'optional', other: 1 }), false, '2025')).toEqual(tool({ other: 1 }));
  });

  it('never shows execution.taskSupport to 2026 clients (not part of that revision)', () => {
    expect(presentTaskSupport(tool({ taskSupport: 'required' }), true, '2026')).toEqual(tool());
  });

  it('leaves a tool without execution untouched', () => {
    const plain = tool();
    expect(presentTaskSupport(plain, false, '2026')).toBe(plain);
  });
});

describe('the tasks extension in a 2026 request _meta', () => {
  const KEY = 'io.modelcontextprotocol/clientCapabilities';
  const EXT = 'io.modelcontextprotocol/tasks';

  it.each([
    [undefined, false],
    [{}, false],
    [{ [KEY]: {} }, false],
    [{ [KEY]: { extensions: { other: {} } } }, false],
    [{ [KEY]: { extensions: { [EXT]: {} } } }, true],
  ])('%j declares it: %s', (meta, expected) => {
    expect(declaresTasksExtension(meta as never)).toBe(expected);
  });
});
