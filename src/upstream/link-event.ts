/** Link-level events (not tied to a call) that owners of a link subscribe to. */
export type LinkEvent =
  | { kind: 'listChanged'; list: 'tools' | 'prompts' | 'resources' }
  | { kind: 'resourceUpdated'; params: Record<string, unknown> }
  /** `notifications/tasks/status`: its `taskId` is the upstream's, so only the task table can route it. */
  | { kind: 'taskStatus'; params: Record<string, unknown> }
  | { kind: 'closed'; reason: string };
