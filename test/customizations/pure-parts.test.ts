/**
 * The pure parts of the customisation list, table-driven: the state a connection maps to (and
 * that an error's message carries a code, never the failure's own text), upstream icons filtered
 * against a hostile server, and ids that are opaque, stable per minter and different per gateway.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError, UpstreamError } from '../../src/errors.js';
import { createIdMinter } from '../../src/customizations/ids.js';
import { notRunState, serverState } from '../../src/customizations/server-state.js';
import { upstreamIcons } from '../../src/customizations/upstream-icons.js';
import { MAX_ICONS } from '../../src/plugins/icons.js';

describe('server state', () => {
  it.each([
    ['idle', 'starting'],
    ['connecting', 'starting'],
    ['ready', 'ready'],
    ['closed', 'stopped'],
  ] as const)('publishes a %s connection as %s', (slot, kind) => {
    expect(serverState('files', slot, undefined)).toEqual({ kind });
  });

  it('names the server and a cause code in an error, never the failure text', () => {
    const spawnFailure = Object.assign(new Error('spawn /opt/secret-tool --token=hunter2 ENOENT'), { code: 'ENOENT' });
    const error = new UpstreamError('UPSTREAM_START_FAILED', 'files', 'could not start /opt/secret-tool --token=hunter2', spawnFailure);
    const state = serverState('files', 'error', error);
    expect(state).toEqual({ kind: 'error', error: { errorType: 'UPSTREAM_START_FAILED', message: 'server "files" is not reachable (ENOENT)' } });
    expect(JSON.stringify(state)).not.toContain('hunter2');
  });

  it('falls back to an unknown reason for an error without codes', () => {
    const state = serverState('docs', 'error', new Error('https://user:pw@example.com failed'));
    expect(state).toEqual({ kind: 'error', error: { errorType: 'UPSTREAM_UNAVAILABLE', message: 'server "docs" is not reachable (unknown error)' } });
    expect(serverState('docs', 'error', new GatewayError('UPSTREAM_TIMEOUT', 'x https://secret'))).toMatchObject({ error: { errorType: 'UPSTREAM_TIMEOUT' } });
  });

  it('shows a refused or unsupported server in error', () => {
    expect(notRunState('a.b', 'refused')).toMatchObject({ kind: 'error', error: { errorType: 'POLICY_REFUSED' } });
    expect(notRunState('a.b', 'unsupported')).toMatchObject({ kind: 'error', error: { errorType: 'UNSUPPORTED_TRANSPORT' } });
  });
});

describe('upstream icons', () => {
  it('keeps https and data:image icons, mapping mimeType to contentType', () => {
    expect(
      upstreamIcons({
        icons: [
          { src: 'https://cdn.example.com/a.png', mimeType: 'image/png', sizes: ['48x48', 'any'], theme: 'dark' },
          { src: 'data:image/svg+xml;base64,PHN2Zy8+' },
        ],
      }),
    ).toEqual([
      { src: 'https://cdn.example.com/a.png', contentType: 'image/png', sizes: ['48x48', 'any'], theme: 'dark' },
      { src: 'data:image/svg+xml;base64,PHN2Zy8+' },
    ]);
  });

  it.each([
    ['a javascript: link', { src: 'javascript:alert(1)' }],
    ['plain http', { src: 'http://cdn.example.com/a.png' }],
    ['credentials in the URL', { src: 'https://user:pw@cdn.example.com/a.png' }],
    ['a data: URI that is not an image', { src: 'data:text/html,<script>' }],
    ['a huge source', { src: `data:image/png;base64,${'A'.repeat(200_000)}` }],
    ['no source', { mimeType: 'image/png' }],
  ])('drops %s', (_what, icon) => {
    expect(upstreamIcons({ icons: [icon] })).toBeUndefined();
  });

  it('drops fields that are not what they claim and caps the count', () => {
    expect(upstreamIcons({ icons: [{ src: 'https://x.example/i.png', mimeType: 'text/html', sizes: ['huge'], theme: 'neon' }] })).toEqual([
      { src: 'https://x.example/i.png' },
    ]);
    const many = Array.from({ length: 100 }, (_, i) => ({ src: `https://x.example/${i}.png` }));
    expect(upstreamIcons({ icons: many })).toHaveLength(MAX_ICONS);
    expect(upstreamIcons({ icons: 'nope' })).toBeUndefined();
    expect(upstreamIcons(undefined)).toBeUndefined();
  });
});

describe('ids', () => {
  it('are stable for one minter, distinct per key, and differ between gateways', () => {
    const one = createIdMinter();
    const other = createIdMinter();
    const key = 'plugin:acme#mcp=files';
    expect(one.idFor(key)).toBe(one.idFor(key));
    expect(one.idFor(key)).not.toBe(one.idFor('plugin:acme#mcp=file'));
    expect(one.idFor(key)).not.toBe(other.idFor(key));
    expect(one.idFor(key)).not.toContain('acme');
  });
});
