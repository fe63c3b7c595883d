/**
 * A server's icons from its own `serverInfo.icons` (MCP `Icon`: `src`, `mimeType`, `sizes`,
 * `theme`), as the list publishes them (`contentType` for `mimeType`). The upstream is not
 * trusted to pick what a host renders: only `https:` sources without credentials and `data:image/`
 * URIs pass, bounded in number and size, so a hostile server cannot make the list carry a
 * `javascript:` link, a credential-bearing URL or megabytes of text.
 */
import { MAX_ICON_BYTES, MAX_ICONS } from '../plugins/icons.js';
import type { Icon } from './types.js';

function safeSource(src: unknown): src is string {
  if (typeof src !== 'string' || src.length > MAX_ICON_BYTES * 2) return false;
  if (src.startsWith('data:image/')) return true;
  try {
    const url = new URL(src);
    return url.protocol === 'https:' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** The usable icons of a `serverInfo`, or undefined when it has none. */
export function upstreamIcons(serverInfo: Readonly<Record<string, unknown>> | undefined): Icon[] | undefined {
  const raw = serverInfo?.icons;
  if (!Array.isArray(raw)) return undefined;
  const icons: Icon[] = [];
  for (const entry of raw.slice(0, MAX_ICONS * 4)) {
    if (icons.length >= MAX_ICONS) break;
    if (typeof entry !== 'object' || entry === null) continue;
    const { src, mimeType, sizes, theme } = entry as Record<string, unknown>;
    if (!safeSource(src)) continue;
    const icon: { -readonly [K in keyof Icon]: Icon[K] } = { src };
    if (typeof mimeType === 'string' && /^image\/[A-Za-z0-9.+-]{1,64}$/.test(mimeType)) icon.contentType = mimeType;
    if (Array.isArray(sizes) && sizes.every((s) => typeof s === 'string' && /^(?:any|\d{1,5}x\d{1,5})$/.test(s))) icon.sizes = (sizes as string[]).slice(0, 16);
    if (theme === 'light' || theme === 'dark') icon.theme = theme;
    icons.push(icon);
  }
  return icons.length > 0 ? icons : undefined;
}
