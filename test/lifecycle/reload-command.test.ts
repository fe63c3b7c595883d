/**
 * What `portcullis reload` reports for each outcome the gateway answers, and its exit code: 0 only
 * when the new configuration is in force and every server it touched is up.
 */
import { describe, expect, it } from 'vitest';
import { describeReloadOutcome } from '../../src/lifecycle/reload-command.js';
import type { ReloadOutcome } from '../../src/lifecycle/reload.js';

const none: ReloadOutcome = { applied: true, problems: [], needsRestart: [], added: [], removed: [], restarted: [], refiltered: [], failed: [] };

describe('the reload report', () => {
  it('lists what was applied, exit 0', () => {
    expect(describeReloadOutcome({ ...none, added: ['b', 'c'], removed: ['d'], restarted: ['a'] })).toEqual({
      text: 'reload applied:\n  added: b, c\n  removed: d\n  restarted: a\n',
      code: 0,
    });
    expect(describeReloadOutcome(none)).toEqual({ text: 'reload applied: nothing that needs a server changed\n', code: 0 });
  });

  it('names the servers that did not come up, exit 1', () => {
    const report = describeReloadOutcome({ ...none, added: ['b'], failed: ['b'] });
    expect(report.code).toBe(1);
    expect(report.text).toContain('did not come up');
    expect(report.text).toContain(': b\n');
  });

  it('separates what was not accepted from what needs a restart, exit 1', () => {
    const restart = 'tracing: changed; this setting applies when the gateway starts';
    expect(describeReloadOutcome({ ...none, applied: false, problems: ['servers.a.mode: invalid option'] })).toEqual({
      text: 'reload refused: the gateway keeps its running configuration\n  not accepted:\n    - servers.a.mode: invalid option\n',
      code: 1,
    });
    expect(describeReloadOutcome({ ...none, applied: false, problems: [restart], needsRestart: [restart] })).toEqual({
      text: `reload refused: the gateway keeps its running configuration\n  these need a restart (stop the gateway and start it again):\n    - ${restart}\n`,
      code: 1,
    });
  });
});
